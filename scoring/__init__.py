"""Compute the paper's automatic metrics from texts and write them into the store.

``import scoring`` fills :data:`scoring.registry.REGISTRY` with every scorer: the string-based
metrics (:mod:`scoring.strings`) and the embedding- and model-based ones (:mod:`scoring.models`).
"""

import scoring.models  # noqa: F401  (registers the embedding- and model-based scorers)
from scoring import strings  # noqa: F401  (registers the string-based scorers)
from scoring.registry import REGISTRY, Scorer, ScoringConfig, Texts, list_metrics, register

__all__ = ["REGISTRY", "Scorer", "ScoringConfig", "Texts", "list_metrics", "register"]
