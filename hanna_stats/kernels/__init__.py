"""Numba kernels on numpy arrays, for HANNA and any other meta-evaluation study.

Pure functions: no I/O, no data frames. Functions are compiled lazily on first call and cached
on disk (``cache=True``). Resampling kernels take indices drawn once by the caller from a seeded
:class:`numpy.random.Generator`, so results do not depend on the number of threads.

- correlations: :func:`correlation`, :func:`level_correlation` (item / system / global level),
  :func:`group_correlations`, Kendall counts, ranks;
- agreement: :func:`intraclass_corr` (six ICC forms), :func:`krippendorff_alpha`;
- significance: :func:`williams_test`, :func:`adjust_pvalues` (BH, BY, Holm, Bonferroni),
  :func:`paired_bootstrap` with :func:`weighted_f1`;
- resampling: :func:`bootstrap_ci` (inputs, systems or both; percentile or BCa),
  :func:`permutation_test_pairs` (PERM-BOTH), :func:`pairwise_accuracy` (acc_eq);
- rankings: :func:`borda_count` with a stated tie rule.
"""

from .agreement import AlphaResult, ICCResult, intraclass_corr, krippendorff_alpha
from .correlation import CorrelationResult, correlation
from .grouped import (
    LevelCorrelationResult,
    UndefinedCorrelationError,
    aggregate_groups,
    group_correlations,
    level_correlation,
)
from .kendall import KendallCounts, kendall_counts, tau_from_counts
from .multitest import adjust_pvalues
from .pairs import PairedBootstrapResult, paired_bootstrap, weighted_f1
from .ranking import TIE_RULES, borda_count
from .ranks import rankdata, tie_ranks
from .resampling import (
    BootstrapResult,
    PermutationTestResult,
    bootstrap_ci,
    pairwise_accuracy,
    permutation_test_pairs,
)
from .williams import WilliamsResult, williams_test

__all__ = [
    "TIE_RULES",
    "AlphaResult",
    "BootstrapResult",
    "CorrelationResult",
    "ICCResult",
    "KendallCounts",
    "LevelCorrelationResult",
    "PairedBootstrapResult",
    "PermutationTestResult",
    "UndefinedCorrelationError",
    "WilliamsResult",
    "adjust_pvalues",
    "aggregate_groups",
    "bootstrap_ci",
    "borda_count",
    "correlation",
    "group_correlations",
    "intraclass_corr",
    "kendall_counts",
    "krippendorff_alpha",
    "level_correlation",
    "paired_bootstrap",
    "pairwise_accuracy",
    "permutation_test_pairs",
    "rankdata",
    "tau_from_counts",
    "tie_ranks",
    "weighted_f1",
    "williams_test",
]
