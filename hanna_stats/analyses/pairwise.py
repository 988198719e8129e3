"""Statistics over pairs of systems or observations, as the WMT metrics tasks use them, as
tidy polars DataFrames.

- :func:`pooled_accuracy`: pairwise accuracy of the system rankings, the pairs of systems of
  every subset (WMT: language pair) pooled, with significance clusters from its permutation
  test (:func:`hanna_stats.kernels.pooled_pairwise_accuracy`; WMT21-23);
- :func:`pdp_correlation`: Pearson correlation of the pairwise differences within each segment
  (:func:`hanna_stats.kernels.pdp_pearson`);
- :func:`kendall_like`: WMT's Kendall-like tau of relative rankings with a threshold
  (:func:`hanna_stats.kernels.kendall_like_tau`).

Conventions as :mod:`hanna_stats.analyses.correlations`: the human-written systems are left out
unless ``include_human``; the automatic measures of ``kinds`` against every criterion (or
``criterion``).
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl

from hanna_stats.analyses._common import (
    analysis,
    check_system_scores,
    criteria_cube,
    cube_criterion,
    human_mask,
)
from hanna_stats.kernels import (
    kendall_like_tau,
    pdp_pearson,
    pooled_pairwise_accuracy,
    significance_clusters,
)
from hanna_stats.progress import StudyNote
from hanna_stats.study import Cube, Study
from hanna_stats.vocabulary import (
    GroupBy,
    Kind,
    LevelWord,
    SystemScores,
    check_bool,
    check_kinds,
    check_level,
)

#: Columns of :func:`pooled_accuracy`.
POOLED_ACCURACY_SCHEMA = {
    "measure": pl.String,
    "against": pl.String,
    "statistic": pl.Float64,
    "rank": pl.Int64,
    "n_pairs": pl.Int64,
    "n_subsets": pl.Int64,
    "permutations": pl.Int64,
    "seed": pl.Int64,
}


def _criteria(study: Study, cube: Cube, criterion: str | None) -> list[str]:
    """The names of ``cube``'s human criteria, or of ``criterion`` alone."""
    names = [m for m, human in zip(cube.measures, human_mask(cube), strict=True) if human]
    return names if criterion is None else [cube_criterion(study, cube, criterion)]


def _system_values(cube: Cube) -> np.ndarray:
    """(M, S): each measure's mean over the inputs where it has a value (the given values of
    a given cube, which has one input)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a system without a value: NaN
        return np.nanmean(cube.values, axis=1)


@analysis
def pooled_accuracy(
    study: Study,
    *,
    permutations: int = 1000,
    seed: int | None = 0,
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
    criterion: str | None = None,
    system_scores: SystemScores = "mean",
) -> pl.DataFrame:
    """Pairwise accuracy of the system rankings, the pairs of systems of every subset (WMT:
    language pair) pooled, with significance clusters.

    Within each subset of the study, every pair of systems the criterion rates counts once:
    correct when the measure's difference has the sign of the criterion's (a pair tied in both
    is correct), and the accuracy is the share of correct pairs over all subsets' pairs
    (Kocmi et al. 2021; mt-metrics-eval's ``CompareMetricsWithGlobalAccuracy``, WMT 2021-2023's
    system-level statistic). A system's value is the mean of its items
    (``system_scores="mean"``) or the study's given value (``"given"``: WMT's ``.sys.score``
    files). Only the measures with values in every subset are compared (mt-metrics-eval: the
    metrics of every language pair); a note names the others. The ranks are the significance
    clusters (:func:`~hanna_stats.kernels.significance_clusters`, alpha 0.05) of the paired
    permutation tests of :func:`~hanna_stats.kernels.pooled_pairwise_accuracy` (one draw of
    swaps from ``seed`` for all pairs of measures).

    The subsets pooled are those of the study it is given: ``subsets="pooled"``
    (``--pool-subsets``) pools every language pair of a store, as WMT does; by default
    (``"each"``) each pair is analysed alone, one table per pair under a column ``subset``
    (the pairwise accuracy of that pair's systems). Pairs of systems never span two subsets.

    Returns
    -------
    polars.DataFrame
        One row per (measure, criterion), by criterion then decreasing statistic:
        ``measure, against, statistic, rank, n_pairs, n_subsets, permutations, seed``.
    """
    check_system_scores(system_scores, "system")
    check_bool("include_human", include_human)
    kinds = check_kinds(kinds)
    parts = [study.subset(subset=label) for label in study.subsets] if study.subsets else [study]
    cubes = [criteria_cube(part, kinds, include_human, system_scores) for part in parts]
    names = [m for m, k in zip(cubes[0].measures, cubes[0].kinds, strict=True) if k != "human"]
    shared = [m for m in names if all(m in cube.measures for cube in cubes)]
    automatic = {m for c in cubes for m, k in zip(c.measures, c.kinds, strict=True) if k != "human"}
    left = sorted(automatic - set(shared))
    if left:
        warnings.warn(
            StudyNote(
                f"pooled_accuracy: left out {len(left)} measure(s) without values in every "
                f"subset: {', '.join(left[:8])}{' ...' if len(left) > 8 else ''}"
            ),
            stacklevel=2,
        )
    frames = []
    for against in _criteria(study, cubes[0], criterion):
        gold, X, labels = [], [], []
        for k, cube in enumerate(cubes):
            values = _system_values(cube)
            gold.append(
                values[cube.measures.index(against)]
                if against in cube.measures
                else np.full(len(cube.systems), np.nan)
            )
            X.append(values[[cube.measures.index(m) for m in shared]])
            labels.append(np.full(len(cube.systems), k))
        res = pooled_pairwise_accuracy(
            np.concatenate(gold),
            np.concatenate(X, axis=1),
            np.concatenate(labels),
            permutations=permutations,
            seed=seed,
        )
        frames.append(
            pl.DataFrame(
                {
                    "measure": shared,
                    "against": [against] * len(shared),
                    "statistic": res.statistic,
                    "rank": significance_clusters(res.statistic, res.pvalue),
                    "n_pairs": res.n_pairs,
                    "n_subsets": [len(cubes)] * len(shared),
                    "permutations": [int(permutations)] * len(shared),
                    "seed": [seed] * len(shared),
                },
                schema=POOLED_ACCURACY_SCHEMA,
            ).sort(["statistic", "measure"], descending=[True, False], nulls_last=True)
        )
    return pl.concat(frames) if frames else pl.DataFrame(schema=POOLED_ACCURACY_SCHEMA)


#: Columns of :func:`pdp_correlation` and :func:`kendall_like`.
PAIR_STATISTIC_SCHEMA = {
    "measure": pl.String,
    "against": pl.String,
    "level": pl.String,
    "group_by": pl.String,
    "method": pl.String,
    "statistic": pl.Float64,
    "n_pairs": pl.Int64,
}


def _pair_statistic(study, kernel, method, level, group_by, include_human, kinds, criterion):
    """One row per (measure, criterion) of ``kernel(criterion values, measures, level=...,
    group_by=...)``, its ``statistic`` and pairs counted (``n_pairs``, or ``concordant +
    discordant``); ``level``, ``include_human`` and ``kinds`` checked here, ``group_by`` by the
    kernel."""
    level = check_level(level)
    check_bool("include_human", include_human)
    cube = criteria_cube(study, check_kinds(kinds), include_human)
    human = human_mask(cube)
    measures = np.flatnonzero(~human)
    rows = []
    for against in _criteria(study, cube, criterion):
        res = kernel(
            cube.values[cube.measures.index(against)],
            cube.values[measures],
            level=level,
            group_by=group_by,
        )
        pairs = res.n_pairs if method == "pdp" else res.concordant + res.discordant
        for k, m in enumerate(measures):
            rows.append(
                (
                    cube.measures[m],
                    against,
                    level,
                    group_by if level == "item" else None,
                    method,
                    float(res.statistic[k]),
                    int(pairs[k]),
                )
            )
    return pl.DataFrame(rows, schema=PAIR_STATISTIC_SCHEMA, orient="row")


@analysis
def pdp_correlation(
    study: Study,
    *,
    level: LevelWord = "item",
    group_by: GroupBy = "input",
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
    criterion: str | None = None,
) -> pl.DataFrame:
    """Pearson correlation of the pairwise differences within each segment (PDP), of every
    automatic measure with every criterion.

    The differences between every two systems' scores of the same input (``group_by="input"``;
    of the same system on two inputs with ``"system"``; every two cells at ``level="global"``),
    pooled over the inputs, correlated (DiIanni and Deutsch, EMNLP 2025; mt-metrics-eval's
    ``Pearson(pdp=True)``; see :func:`hanna_stats.kernels.pdp_pearson`). A per-input shift of a
    measure does not change it. Missing values drop the pairs they are in.

    Returns
    -------
    polars.DataFrame
        One row per (measure, criterion): ``measure, against, level, group_by, method,
        statistic, n_pairs``.
    """
    return _pair_statistic(
        study, pdp_pearson, "pdp", level, group_by, include_human, kinds, criterion
    )


@analysis
def kendall_like(
    study: Study,
    *,
    threshold: float = 25.0,
    level: LevelWord = "item",
    group_by: GroupBy = "input",
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
    criterion: str | None = None,
) -> pl.DataFrame:
    """WMT's Kendall-like tau (DA relative ranking, WMT 2017-2020) of every automatic measure
    with every criterion.

    Over the pairs of systems of each input whose criterion scores differ by at least
    ``threshold`` (25 points of raw DA), pooled over the inputs: ``(Concordant - Discordant) /
    (Concordant + Discordant)``, a pair the measure ties counting as discordant
    (mt-metrics-eval's ``KendallLike``; see :func:`hanna_stats.kernels.kendall_like_tau`).
    ``threshold`` is on the criterion's scale.

    Returns
    -------
    polars.DataFrame
        One row per (measure, criterion): ``measure, against, level, group_by, method,
        statistic, n_pairs`` (the pairs counted, concordant or discordant).
    """
    if not isinstance(threshold, int | float) or isinstance(threshold, bool) or threshold < 0:
        raise ValueError(f"threshold must be a non-negative number; got {threshold!r}")

    def kernel(h, x, **options):
        return kendall_like_tau(h, x, threshold=float(threshold), **options)

    return _pair_statistic(
        study, kernel, "kendall_like", level, group_by, include_human, kinds, criterion
    )
