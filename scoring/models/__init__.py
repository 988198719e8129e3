"""Embedding-based (epsilon) and model-based (Delta) scorers on transformers + torch.

Importing this package registers every model scorer in
:data:`hanna_stats.scoring.registry.REGISTRY`; the
scorer modules import torch and transformers only inside their compute functions.
"""

from hanna_stats.scoring.models import (  # noqa: F401
    bartscore,
    baryscore,
    bertscore,
    blanc,
    depthscore,
    infolm,
    moverscore,
    rouge_we,
    s3,
    summaqa,
    supert,
)
