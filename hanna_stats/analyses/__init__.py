"""The paper's studies on a loaded :class:`~hanna_stats.store.Study`, as tidy polars DataFrames.

Every function takes the Study first (``open_study(...)`` or ``load_study(con)``) and keyword
options; correlation matrices and paired bootstraps are computed once per setting and memoised
on the Study, so calling several analyses costs little more than the first.

- :mod:`~hanna_stats.analyses.correlations`: :func:`correlate`, metric-criterion, metric-metric
  and criterion-criterion correlations at item, system or global level (Figs. 1-6, 10-25;
  Tabs. 5, 8, 9);
- :mod:`~hanna_stats.analyses.ratings` (rater-level values: people's ratings, LLM judges'
  tries): :func:`agreement`, ICC and Krippendorff's alpha (Tab. 3; a judge's self-consistency);
  :func:`system_means` with t-intervals (Tab. 4);
- :mod:`~hanna_stats.analyses.significance`: :func:`williams` tests (Figs. 27-38) with
  multiple-testing correction, :func:`bootstrap_pairs` comparison of systems (Figs. 7, 26);
- :mod:`~hanna_stats.analyses.resampling`: :func:`correlation_ci` (bootstrap confidence
  intervals) and :func:`permutation_test` (PERM-BOTH);
- :mod:`~hanna_stats.analyses.rankings`: :func:`borda` count (Tab. 6), :func:`topk` systems
  (Fig. 8);
- :mod:`~hanna_stats.analyses.judges` (LLM judges, TACL 2024): :func:`judge_criteria`, the
  criterion-matched view with the human rater row; :func:`rater_panel`, one rater against the
  panel; :func:`judge_williams`, each judge against the best metric; :func:`judge_scale`, the
  values found outside the judges' scale;
- :mod:`~hanna_stats.analyses.user_study`: :func:`user_study_agreement`, nominal agreement of the
  TACL user study (Gwet's AC1, Fleiss' kappa, Krippendorff's alpha);
- :mod:`~hanna_stats.analyses.meta_eval` (the MT metrics tasks' statistics):
  :func:`calibrated_accuracy` (tie-calibrated acc_eq / tau_eq), :func:`calibrated_comparison`
  (pairwise permutation tests of calibrated measures), :func:`spa` (soft pairwise accuracy),
  :func:`metric_clusters` (significance clusters of a leaderboard);
- :mod:`~hanna_stats.analyses.overview`: what the study holds; :func:`given_left_out`, the
  measures that ``system_scores="given"`` leaves out.

A study of several subsets (WMT: the language pairs of a store) is analysed per subset by
every analysis, the results stacked under a first column ``subset``; ``subsets="pooled"`` pools
them (:func:`~hanna_stats.analyses._common.analysis`).

Every analysis takes its option words and their defaults from :mod:`hanna_stats.vocabulary`
(``WORDS``, ``DEFAULTS``): ``level="item"``, ``method="kendall"``, ``alternative="greater"``,
``correction=None``, ``kinds=("metric",)``, ... wherever an analysis has the option.
"""

from importlib import import_module

#: Public analysis -> its module (no module bears an analysis' name, which would shadow it).
#: Imported on first use, so that ``from hanna_stats.analyses import correlate`` does not pay
#: for the ratings, resampling or significance modules.
_HOME = {
    "agreement": "ratings",
    "system_means": "ratings",
    "correlate": "correlations",
    "criterion_values": "overview",
    "measure_values": "overview",
    "data_sources": "overview",
    "measure_families": "overview",
    "study_counts": "overview",
    "borda": "rankings",
    "topk": "rankings",
    "correlation_ci": "resampling",
    "permutation_test": "resampling",
    "bootstrap_pair_labels": "significance",
    "bootstrap_pairs": "significance",
    "williams": "significance",
    "williams_all": "significance",
    "user_study_agreement": "user_study",
    "nominal_agreement": "nominal",
    "judge_criteria": "judges",
    "rater_panel": "judges",
    "judge_scale": "judges",
    "judge_williams": "judges",
    "calibrated_accuracy": "meta_eval",
    "calibrated_comparison": "meta_eval",
    "spa": "meta_eval",
    "metric_clusters": "meta_eval",
    "given_left_out": "_common",
    "Result": "_common",
    "Selection": "_common",
}
__all__ = sorted(_HOME)


def _modules() -> set[str]:
    """The public modules of the analyses."""
    return {m for m in _HOME.values() if not m.startswith("_")}


def __getattr__(name: str):
    if name in _HOME:
        return getattr(import_module(f"hanna_stats.analyses.{_HOME[name]}"), name)
    if name in _modules():
        return import_module(f"hanna_stats.analyses.{name}")
    raise AttributeError(f"module 'hanna_stats.analyses' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The analyses and their public modules (``dir()``, tab completion), without importing
    them: each is imported when first read."""
    return sorted({*__all__, *_modules()})
