"""The paper's studies on a loaded :class:`~hanna_stats.store.Study`, as tidy polars DataFrames.

Every function takes the Study first (``open_study(...)`` or ``load_study(con)``) and keyword
options; correlation matrices and paired bootstraps are computed once per setting and memoised
on the Study, so calling several analyses costs little more than the first.

- :mod:`~hanna_stats.analyses.correlations`: :func:`correlate`, metric-criterion, metric-metric
  and criterion-criterion correlations at item, system or global level (Figs. 1-6, 10-25;
  Tabs. 5, 8, 9); the LLM judges' :func:`judge_criteria`, the criterion-matched view with the
  human rater row (TACL 2024); :func:`rater_panel`, one human rater against the panel;
- :mod:`~hanna_stats.analyses.agreements` (rater-level values: people's ratings, LLM judges'
  tries): :func:`agreement`, ICC and Krippendorff's alpha (Tab. 3; a judge's
  self-consistency); :func:`nominal_agreement`, Gwet's AC1, Fleiss' and Cohen's kappa and
  nominal alpha of any labels; :func:`user_study_agreement`, the same on the flags of the TACL
  user study;
- :mod:`~hanna_stats.analyses.significance`: :func:`williams` tests (Figs. 27-38) with
  multiple-testing correction, :func:`judge_williams`, each LLM judge against the best metric;
  :func:`bootstrap_pairs` comparison of systems (Figs. 7, 26);
- :mod:`~hanna_stats.analyses.resampling`: :func:`correlation_ci` (bootstrap confidence
  intervals) and :func:`permutation_test` (PERM-BOTH);
- :mod:`~hanna_stats.analyses.accuracy` (the MT metrics tasks' statistics):
  :func:`calibrated_accuracy` (tie-calibrated acc_eq / tau_eq), :func:`calibrated_chance` (the
  same beside its chance baseline), :func:`calibrated_comparison`
  (pairwise permutation tests of calibrated measures), :func:`spa` (soft pairwise accuracy);
- :mod:`~hanna_stats.analyses.rankings`: :func:`borda` count (Tab. 6), :func:`topk` systems
  (Fig. 8), :func:`metric_clusters` (significance clusters of a leaderboard);
- :mod:`~hanna_stats.analyses.overview`: what the study holds; :func:`system_means` with
  t-intervals (Tab. 4); :func:`judge_scale`, the values found outside the judges' scale;
  :func:`given_left_out`, the measures that ``system_scores="given"`` leaves out;
- :mod:`~hanna_stats.analyses.sampling`: :func:`sample_inputs`, the study of some of its inputs
  drawn at random (mt-metrics-eval's ``sample_size``), which every analysis takes.

Each analysis checks its options once, at its entry (a ValueError naming the option and its
allowed values); what it hands on (the :class:`Selection`, the cubes, the kernels' private
code) is not checked again.

A study of several subsets (WMT: the language pairs of a store) is analysed per subset by
every analysis, the results stacked under a first column ``subset``; ``subsets="pooled"`` pools
them (:func:`~hanna_stats.analyses._common.analysis`). Every analysis returns a plain
:class:`polars.DataFrame`; :func:`analysis_calls` records the analyses a block of code called,
each with every setting it ran with (:class:`AnalysisCall`).

Every analysis takes its option words and their defaults from :mod:`hanna_stats.vocabulary`
(``WORDS``, ``DEFAULTS``): ``level="item"``, ``method="kendall"``, ``alternative="greater"``,
``correction=None``, ``kinds=("metric",)``, ... wherever an analysis has the option.
"""

from importlib import import_module

#: Public analysis -> its module (no module bears an analysis' name, which would shadow it).
#: Imported on first use, so that ``from hanna_stats.analyses import correlate`` does not pay
#: for the ratings, resampling or significance modules.
_HOME = {
    "agreement": "agreements",
    "system_means": "overview",
    "correlate": "correlations",
    "criterion_values": "overview",
    "measure_values": "overview",
    "data_sources": "overview",
    "measure_families": "overview",
    "study_counts": "overview",
    "borda": "rankings",
    "autorank": "rankings",
    "topk": "rankings",
    "correlation_ci": "resampling",
    "permutation_test": "resampling",
    "bootstrap_pair_labels": "significance",
    "bootstrap_pairs": "significance",
    "williams": "significance",
    "williams_all": "significance",
    "user_study_agreement": "agreements",
    "nominal_agreement": "agreements",
    "judge_criteria": "correlations",
    "rater_panel": "correlations",
    "judge_scale": "overview",
    "judge_williams": "significance",
    "calibrated_accuracy": "accuracy",
    "calibrated_chance": "accuracy",
    "calibrated_comparison": "accuracy",
    "spa": "accuracy",
    "pooled_accuracy": "pairwise",
    "pdp_correlation": "pairwise",
    "kendall_like": "pairwise",
    "task_ranking": "tasks",
    "metric_clusters": "rankings",
    "given_left_out": "_common",
    "sample_inputs": "sampling",
    "power": "design",
    "AnalysisCall": "_common",
    "analysis_calls": "_common",
    "Selection": "_common",
}
__all__ = sorted(_HOME)


def module_of(name: str) -> str:
    """The dotted name of the module that defines the public name ``name``, without importing
    it (``KeyError`` for a name that is not public).

    Examples
    --------
    >>> module_of("spa")
    'hanna_stats.analyses.accuracy'
    """
    return f"hanna_stats.analyses.{_HOME[name]}"


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
