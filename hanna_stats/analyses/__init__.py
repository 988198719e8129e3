"""The paper's studies on a loaded :class:`~hanna_stats.store.Study`, as tidy polars DataFrames.

Every function takes the Study first (``open_study(...)`` or ``load_study(con)``) and keyword
options; correlation matrices and paired bootstraps are computed once per setting and memoised
on the Study, so calling several analyses costs little more than the first.

- :mod:`~hanna_stats.analyses.correlations`: :func:`correlate`, metric-criterion, metric-metric
  and criterion-criterion correlations at story, system or global level (Figs. 1-6, 10-25;
  Tabs. 5, 8, 9);
- :mod:`~hanna_stats.analyses.agreement`: :func:`agreement`, ICC and Krippendorff's alpha
  (Tab. 3); :func:`system_means` with t-intervals (Tab. 4);
- :mod:`~hanna_stats.analyses.significance`: :func:`williams` tests (Figs. 27-38) with
  multiple-testing correction, :func:`bootstrap_pairs` comparison of systems (Figs. 7, 26);
- :mod:`~hanna_stats.analyses.resampling`: :func:`correlation_ci` (bootstrap confidence
  intervals) and :func:`permutation_test` (PERM-BOTH);
- :mod:`~hanna_stats.analyses.rankings`: :func:`borda` count (Tab. 6), :func:`topk` systems
  (Fig. 8);
- :mod:`~hanna_stats.analyses.overview`: what the study holds.
"""

from hanna_stats.analyses.agreement import agreement, system_means
from hanna_stats.analyses.correlations import correlate
from hanna_stats.analyses.overview import (
    criterion_values,
    data_sources,
    measure_families,
    study_counts,
)
from hanna_stats.analyses.rankings import borda, topk
from hanna_stats.analyses.resampling import correlation_ci, permutation_test
from hanna_stats.analyses.significance import (
    bootstrap_pair_labels,
    bootstrap_pairs,
    williams,
    williams_all,
)

__all__ = [
    "agreement",
    "bootstrap_pair_labels",
    "bootstrap_pairs",
    "borda",
    "correlate",
    "correlation_ci",
    "criterion_values",
    "data_sources",
    "measure_families",
    "permutation_test",
    "study_counts",
    "system_means",
    "topk",
    "williams",
    "williams_all",
]
