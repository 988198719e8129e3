"""Statistical kernels on numpy arrays, for HANNA and any other meta-evaluation study.

Pure functions: no I/O, no data frames. Each public function validates its arguments (options
are strings, checked by one shared helper that names the argument and its allowed values) and
then runs numpy code or private Numba code (``@njit(cache=True)``, compiled on first call and
cached on disk) where loops are hot. Stochastic kernels take ``seed`` (an int in [0, 2**63), a
:class:`numpy.random.Generator` or None) or precomputed draws (``indices=``, ``swaps=``); the
draws are made once, in Python, so results do not depend on the number of threads.

- correlations: :func:`correlation`, :func:`level_correlation` (item / system / global level),
  :func:`group_correlations`, :func:`aggregate_groups`, Kendall counts, ranks;
- agreement: :func:`intraclass_corr` (six ICC forms), :func:`krippendorff_alpha`; on
  categorical labels :func:`cohen_kappa`, :func:`fleiss_kappa`, :func:`gwet_ac` (AC1/AC2);
- significance: :func:`williams_test`, :func:`adjust_pvalues` (BH, BY, Holm, Bonferroni),
  :func:`paired_bootstrap` with :func:`weighted_f1`;
- resampling: :func:`bootstrap_ci` (inputs, systems or both; percentile or BCa),
  :func:`permutation_test_pairs` (PERM-BOTH, PERM-SYS, PERM-INPUT),
  :func:`pairwise_accuracy` (acc_eq);
- rankings: :func:`borda_count` with a stated tie rule, :func:`tie_ranks`; :func:`autorank`
  (WMT25's aggregation of metrics);
- MT meta-evaluation: :func:`tie_calibration` (acc_eq / tau_eq with a calibrated tie
  threshold), its chance baseline :func:`chance_accuracy`, and
  :func:`calibrated_permutation_test`, :func:`soft_pairwise_accuracy` with
  :func:`pairwise_pvalues`, :func:`significance_clusters`, :func:`fisher_interval`;
  :func:`pooled_pairwise_accuracy` (system pairs pooled over language pairs, with its
  permutation test), :func:`pdp_pearson` (Pearson of within-segment differences),
  :func:`kendall_like_tau` (WMT's DARR Kendall-like tau), :func:`sample_items` (item
  subsampling, uniform or stratified);
- power: :func:`fisher_power`, :func:`paired_t_power`, :func:`williams_power` (closed forms);
  :func:`metric_pair_power`, :func:`correlation_power` (simulated studies drawn from a pilot),
  :func:`metric_pair_effect` (the effect a metric pair's simulation injects).

The resampling tests (permutation tests of pairs, the calibrated permutation test, the
bootstraps, soft pairwise accuracy) take ``executor=``: a Dask ``distributed.Client``, any
:class:`concurrent.futures.Executor` or a :class:`ClusterExecutor`, to run their blocks on a
cluster with the same results bit for bit (:mod:`hanna_stats.kernels.distributed`).

The options' allowed words and their defaults are :mod:`hanna_stats.vocabulary`'s ``WORDS`` and
``DEFAULTS``.
"""

from ._options import check_confidence, check_count, check_seed
from .accuracy import pairwise_accuracy
from .agreement import AlphaResult, ICCResult, intraclass_corr, krippendorff_alpha
from .autorank import autorank
from .bootstrap import BootstrapIndices, BootstrapResult, bootstrap_ci, bootstrap_indices
from .borda import borda_count
from .calibration import (
    TIE_RTOL,
    CalibratedPermutationResult,
    TieCalibrationResult,
    calibrated_permutation_test,
    calibrated_swaps,
    tie_calibration,
)
from .chance import ChanceAccuracyResult, chance_accuracy
from .clusters import significance_clusters
from .correlation import CorrelationResult, check_pvalue_method, correlation
from .distributed import ClusterExecutor
from .fisher import FisherIntervalResult, fisher_interval
from .kendall import KendallCounts, kendall_counts, tau_from_counts
from .levels import (
    LevelCorrelationResult,
    UndefinedCorrelationError,
    aggregate_groups,
    group_correlations,
    level_correlation,
)
from .multitest import adjust_pvalues
from .nominal_agreement import (
    AgreementCoefficientResult,
    CohenKappaResult,
    LabelCodes,
    cohen_kappa,
    encode_labels,
    fleiss_kappa,
    gwet_ac,
)
from .pair_statistics import (
    KendallLikeResult,
    PdpPearsonResult,
    kendall_like_tau,
    pdp_pearson,
)
from .permutation import PermutationTestResult, permutation_swaps, permutation_test_pairs
from .pooled_accuracy import PooledAccuracyResult, pooled_pairwise_accuracy
from .power import (
    PairEffect,
    PowerResult,
    correlation_power,
    fisher_power,
    metric_pair_effect,
    metric_pair_power,
    paired_t_power,
    williams_power,
)
from .ranks import rankdata, tie_ranks
from .sampling import sample_items
from .soft_accuracy import (
    SoftPairwiseAccuracyResult,
    pairwise_pvalues,
    sign_flips,
    soft_pairwise_accuracy,
)
from .stable_ranking import (
    StableRankingResult,
    stable_ranking_probability,
    system_pair_power,
)
from .system_pairs import PairedBootstrapResult, paired_bootstrap, weighted_f1
from .williams import WilliamsResult, williams_test

__all__ = [
    "TIE_RTOL",
    "AgreementCoefficientResult",
    "AlphaResult",
    "BootstrapIndices",
    "BootstrapResult",
    "CalibratedPermutationResult",
    "ChanceAccuracyResult",
    "ClusterExecutor",
    "CohenKappaResult",
    "CorrelationResult",
    "FisherIntervalResult",
    "ICCResult",
    "KendallCounts",
    "KendallLikeResult",
    "LabelCodes",
    "LevelCorrelationResult",
    "PairEffect",
    "PairedBootstrapResult",
    "PdpPearsonResult",
    "PermutationTestResult",
    "PooledAccuracyResult",
    "PowerResult",
    "SoftPairwiseAccuracyResult",
    "StableRankingResult",
    "TieCalibrationResult",
    "UndefinedCorrelationError",
    "WilliamsResult",
    "adjust_pvalues",
    "aggregate_groups",
    "autorank",
    "bootstrap_ci",
    "bootstrap_indices",
    "borda_count",
    "calibrated_permutation_test",
    "calibrated_swaps",
    "chance_accuracy",
    "check_confidence",
    "check_count",
    "check_pvalue_method",
    "check_seed",
    "cohen_kappa",
    "correlation",
    "correlation_power",
    "encode_labels",
    "fisher_interval",
    "fisher_power",
    "fleiss_kappa",
    "group_correlations",
    "gwet_ac",
    "intraclass_corr",
    "kendall_counts",
    "kendall_like_tau",
    "krippendorff_alpha",
    "level_correlation",
    "metric_pair_effect",
    "metric_pair_power",
    "paired_bootstrap",
    "paired_t_power",
    "pairwise_accuracy",
    "pairwise_pvalues",
    "pdp_pearson",
    "permutation_swaps",
    "permutation_test_pairs",
    "pooled_pairwise_accuracy",
    "rankdata",
    "sample_items",
    "sign_flips",
    "significance_clusters",
    "soft_pairwise_accuracy",
    "stable_ranking_probability",
    "system_pair_power",
    "tau_from_counts",
    "tie_calibration",
    "tie_ranks",
    "weighted_f1",
    "williams_power",
    "williams_test",
]
