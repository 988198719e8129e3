"""Numba kernels on numpy arrays: ranks, Kendall counts, correlations, batched group correlations.

Pure functions: no I/O, no data frames. Functions are compiled lazily on first call and cached
on disk (``cache=True``).
"""

from .correlation import CorrelationResult, correlation
from .grouped import (
    LevelCorrelationResult,
    UndefinedCorrelationError,
    aggregate_groups,
    group_correlations,
    level_correlation,
)
from .kendall import KendallCounts, kendall_counts, tau_from_counts
from .ranks import rankdata

__all__ = [
    "CorrelationResult",
    "KendallCounts",
    "LevelCorrelationResult",
    "UndefinedCorrelationError",
    "aggregate_groups",
    "correlation",
    "group_correlations",
    "kendall_counts",
    "level_correlation",
    "rankdata",
    "tau_from_counts",
]
