"""Compute the paper's automatic metrics from texts and write them into the store.

``import hanna_stats.scoring`` fills :data:`hanna_stats.scoring.registry.REGISTRY` with every
scorer: the string-based
metrics (:mod:`hanna_stats.scoring.strings`) and the embedding- and model-based ones
(:mod:`hanna_stats.scoring.models`).
"""

import hanna_stats.scoring.models  # noqa: F401  (registers the embedding- and model-based scorers)
from hanna_stats.scoring import strings  # noqa: F401  (registers the string-based scorers)
from hanna_stats.scoring.registry import (
    REGISTRY,
    Scorer,
    ScoringConfig,
    Texts,
    list_metrics,
    register,
)

__all__ = ["REGISTRY", "Scorer", "ScoringConfig", "Texts", "list_metrics", "register"]
