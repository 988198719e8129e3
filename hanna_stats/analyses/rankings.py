"""Rankings of the measures: the Borda count (Tab. 6), correlations on the top-k systems
(Fig. 8) and leaderboards in significance clusters.

- :func:`borda`: Borda count of the metrics over the (criterion x coefficient) columns
  (Chhun et al. 2022, Sec. 5.3);
- :func:`autorank`: the systems ranked by WMT25's AutoRank, an aggregation of several metrics'
  system means (the WMT25 general MT task's preliminary ranking);
- :func:`topk`: every metric's correlation with each criterion on its k best systems (Sec. 5.4);
- :func:`metric_clusters`: the measures for one criterion, best first, in significance clusters
  (the WMT metrics tasks' leaderboards, mt-metrics-eval's ``AssignRanks``).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np
import polars as pl

from hanna_stats.analyses._common import (
    Selection,
    analysis,
    check_system_scores,
    correlation_matrix,
    criteria_cube,
    criterion_cube,
    human_mask,
)
from hanna_stats.analyses.correlations import correlation_frame
from hanna_stats.kernels import (
    aggregate_groups,
    borda_count,
    calibrated_permutation_test,
    group_correlations,
    permutation_test_pairs,
    significance_clusters,
)
from hanna_stats.kernels import (
    autorank as autorank_of,
)
from hanna_stats.kernels.levels import at_level
from hanna_stats.progress import StudyNote, progress
from hanna_stats.study import Study
from hanna_stats.vocabulary import (
    WORDS,
    Coefficient,
    ItemSystemWord,
    Kind,
    LevelWord,
    Method,
    SystemScores,
    Ties,
    Variant,
    check,
    check_bool,
    check_kinds,
    check_level,
)

#: |r| values equal to this many decimals share a rank in the Borda count.
TIE_DECIMALS = 12

#: The metrics of WMT25's AutoRank per language pair (its preliminary ranking, Sec. "Automatic
#: Ranking" and its tables): all five where the pair has human references; without CometKiwi-XL
#: where it has none (MetricX and XCOMET then run reference-free); chrF++ alone for the two
#: lowest-resource pairs.
_WMT25_FIVE = (
    "CometKiwi-XL",
    "GEMBA-ESA-CMDA",
    "GEMBA-ESA-GPT4.1",
    "MetricX-24-Hybrid-XL",
    "XCOMET-XL",
)
WMT25_AUTORANK_METRICS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        "cs-de_DE cs-uk_UA en-ar_EG en-cs_CZ en-et_EE en-is_IS en-ja_JP en-ko_KR en-ru_RU "
        "en-sr_Cyrl_RS en-uk_UA en-zh_CN ja-zh_CN".split(),
        _WMT25_FIVE,
    ),
    **dict.fromkeys(
        "en-bn_BD en-de_DE en-el_GR en-fa_IR en-hi_IN en-id_ID en-it_IT en-kn_IN en-lt_LT "
        "en-mr_IN en-ro_RO en-sr_Latn_RS en-sv_SE en-th_TH en-tr_TR en-vi_VN".split(),
        _WMT25_FIVE[1:],
    ),
    "en-bho_IN": ("chrF++",),
    "en-mas_KE": ("chrF++",),
}


@analysis
def borda(
    study: Study,
    *,
    level: ItemSystemWord = "item",
    ties: Ties = "average",
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
    system_scores: SystemScores = "mean",
) -> pl.DataFrame:
    """Borda count of the metrics over the (criterion x coefficient) columns of one level (Tab. 6).

    For each of the 18 columns (6 criteria x Pearson, Spearman, Kendall) the metrics are ranked by
    their absolute correlation, the lowest getting 0; a metric's Borda count is the sum of its
    ranks (at most ``18 (n - 1)``). Exact ties in ``|r|`` share a rank by the rule ``ties``:
    ``average`` (the mean of the positions they occupy), ``min`` or ``max``; values equal to
    :data:`TIE_DECIMALS` decimals are ties (correlations equal in exact arithmetic can differ in
    their last bits).

    The paper's story-level column (chrF 1237, S3-Pyramid 1198, ROUGE-1 Recall 1186,
    S3-Responsiveness 1177, BERTScore Recall 1158) is the same under every rule. Its system-level
    column is not reproducible by any stated rule: 10 systems give few distinct Kendall values, so
    many metrics tie exactly, and the published counts follow the arbitrary order in which an
    unstable quicksort broke those ties.

    Alternatives the paper compares with (Colombo et al. 2022): ``mean_rank`` is the mean-rank
    aggregation, the mean over the columns of the same 0-based ranks (``borda / n_columns``:
    with complete columns it orders the metrics exactly as the Borda count), and ``mean_abs``
    aggregates the scores themselves (the mean of ``|r|`` over the columns), which can order
    them differently.

    Parameters
    ----------
    study : Study
        A loaded study.
    level : {"item", "system"}
        Correlation level of the columns (``"story"``, ``"summary"`` or ``"segment"`` give
        ``"item"``).
    ties : {"average", "min", "max"}
        Tie rule.
    include_human : bool
        Keep the human-written stories as a system (default False, as the paper).
    kinds : tuple of str
        Kinds of automatic measures ranked (the paper: ``("metric",)``, its 72 metrics).
    system_scores : {"mean", "given"}
        System level: the columns correlate the means over items (default) or the study's given
        system-level values (WMT's ``.sys.score`` files; measures without them left out), as
        :func:`hanna_stats.analyses.correlations.correlate`.

    Returns
    -------
    polars.DataFrame
        Columns ``level, measure, borda, borda_rank, mean_rank, mean_abs, mean_abs_rank``, best
        first (``*_rank`` are 1-based positions, ties sharing the best one).

    Raises
    ------
    ValueError
        If a correlation is undefined (NaN): a Borda count needs every column complete.
    """
    level = check_level(level, WORDS["item_system"])
    check("ties", ties)
    check_bool("include_human", include_human)
    kinds = check_kinds(kinds)
    check_system_scores(system_scores, level)
    # One column per (coefficient, criterion): |r| of every automatic measure, from the
    # memoised matrices that correlate reads.
    blocks = []
    for method in WORDS["method"]:
        selection = Selection(
            kinds=kinds,
            include_human=include_human,
            level=level,
            method=method,
            system_scores=system_scores,
        )
        cube, res = correlation_matrix(study, selection)
        human = human_mask(cube)
        blocks.append(np.abs(res.statistic[np.ix_(~human, human)]))
    # Column-major, as a table of columns: the means over the columns add them in order.
    scores = np.asfortranarray(np.hstack(blocks))
    measures = np.asarray(cube.measures, dtype=object)[~human]
    if np.isnan(scores).any():
        bad = measures[int(np.flatnonzero(np.isnan(scores).any(axis=1))[0])]
        raise ValueError(f"correlation of {bad!r} is undefined at {level} level: no Borda count")
    # Correlations equal in exact arithmetic tie: at 10 systems Spearman's rho is a multiple of
    # 1/165 and tau-b takes few values, but they come out of floating point up to a few ulps
    # apart (0.6000000000000001 for 0.6). Ranked on |r| rounded to 12 decimals.
    counts = borda_count(np.round(scores, TIE_DECIMALS), ties=ties)
    return (
        pl.DataFrame(
            {
                "level": level,
                "measure": measures.tolist(),
                "borda": counts,
                "mean_rank": counts / scores.shape[1],
                "mean_abs": scores.mean(axis=1),
            }
        )
        .with_columns(
            pl.col("borda").rank("min", descending=True).cast(pl.Int64).alias("borda_rank"),
            pl.col("mean_abs").rank("min", descending=True).cast(pl.Int64).alias("mean_abs_rank"),
        )
        .select("level", "measure", "borda", "borda_rank", "mean_rank", "mean_abs", "mean_abs_rank")
        .sort(["borda_rank", "measure"])
    )


@analysis
def autorank(
    study: Study,
    *,
    task_metrics: bool = False,
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
) -> pl.DataFrame:
    """The systems ranked by AutoRank, WMT25's aggregation of several metrics (1 best, N worst).

    Each metric's system score is the mean of its item scores (missing ones left out); each
    metric's scores are centred on their median and divided by the range from their 25th
    percentile to their maximum, averaged over the metrics with equal weights and mapped
    linearly onto 1 .. N (:func:`~hanna_stats.kernels.autorank`), as the WMT25 general MT
    task's preliminary ranking computes it (Kocmi et al. 2025). Beside :func:`borda`, which
    aggregates metrics' correlations with the criteria, AutoRank aggregates the metrics' own
    scores of the systems: every metric must be higher-is-better (as WMT25 releases them,
    MetricX negated).

    With ``task_metrics`` the metrics of a language pair are those the task used
    (:data:`WMT25_AUTORANK_METRICS`: the five of the release where the pair has references,
    without CometKiwi-XL where it has none, chrF++ alone for en-bho_IN and en-mas_KE), chosen by
    the subset's label; on a store of ``ingest ../shared/data/wmt25`` this gives every AutoRank
    of the task's 31 tables to the printed decimal. Otherwise every measure of ``kinds`` with
    values in the subset enters.

    Parameters
    ----------
    study : Study
        A loaded study (WMT25: analysed per language pair, the default).
    task_metrics : bool
        Use the WMT25 task's metrics of the pair (the study's one subset) instead of every
        measure of ``kinds``.
    include_human : bool
        Keep the human-written systems.
    kinds : tuple of str
        Kinds of the measures that enter (without ``task_metrics``).

    Returns
    -------
    polars.DataFrame
        Columns ``system, autorank, rank, metrics``: ``rank`` the 1-based position (ties share
        the best), ``metrics`` the metrics used, comma-separated; best first.

    Raises
    ------
    ValueError
        With ``task_metrics``, for a study that is not one WMT25 language pair or lacks one of
        its metrics; a system without any score of a metric (naming both); no measure.
    """
    check_bool("task_metrics", task_metrics)
    check_bool("include_human", include_human)
    kinds = check_kinds(kinds)
    if task_metrics:
        pair = study.subsets[0] if len(study.subsets) == 1 else None
        if pair not in WMT25_AUTORANK_METRICS:
            raise ValueError(
                f"task_metrics: the study must be one language pair of WMT25 (one of "
                f"{', '.join(sorted(WMT25_AUTORANK_METRICS))}); got subsets "
                f"{', '.join(study.subsets) or 'none'}"
            )
        cube = study.cube(measures=WMT25_AUTORANK_METRICS[pair], include_human=include_human)
    else:
        cube = study.cube(kinds=kinds, include_human=include_human)
    scored = ~np.isnan(cube.values).all(axis=1)  # (M, S): a system with a score of the metric
    if not scored.all():
        m, s = np.argwhere(~scored)[0]
        raise ValueError(
            f"system {cube.systems[s]!r} has no score of {cube.measures[m]!r}: AutoRank needs "
            "every metric's mean of every system (exclude the system or choose the metrics)"
        )
    means = np.nanmean(cube.values, axis=1).T  # (S, M)
    ranks = autorank_of(means)
    return (
        pl.DataFrame(
            {
                "system": cube.systems,
                "autorank": ranks,
                "metrics": ", ".join(cube.measures),
            }
        )
        .with_columns(pl.col("autorank").rank("min").cast(pl.Int64).alias("rank"))
        .select("system", "autorank", "rank", "metrics")
        .sort(["autorank", "system"])
    )


@analysis
def topk(
    study: Study,
    *,
    ks: Iterable[int] = range(4, 11),
    level: ItemSystemWord = "item",
    method: Method = "kendall",
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
    system_scores: SystemScores = "mean",
) -> pl.DataFrame:
    """Correlations of every metric with each criterion on the k best systems by that criterion.

    Fig. 8 of the paper (``level="system", method="pearson"``, k = 4..10; the defaults are
    every analysis' item level and Kendall): for each criterion the systems are
    ordered by their mean rating of that criterion (over all inputs), the ``k`` best are kept, and
    each metric's correlation with the criterion is recomputed on them.

    Parameters
    ----------
    study : Study
        A loaded study.
    ks : iterable of int
        Numbers of systems kept: from 3, the smallest at most the most systems one criterion
        rates. A criterion that rates fewer systems (WMT's MQM and DA rate different subsets)
        has rows only for the k up to its own count (a
        :class:`~hanna_stats.progress.StudyNote` names the ks left out); its ranking uses only
        the systems it rates.
    level : {"item", "system"}
        As in :func:`hanna_stats.analyses.correlations.correlate` (``"story"``, ``"summary"``
        or ``"segment"`` give ``"item"``).
    method : {"pearson", "spearman", "kendall"}
    include_human : bool
        Keep the human-written stories as a system.
    kinds : tuple of str
        Kinds of automatic measures correlated.
    system_scores : {"mean", "given"}
        System level: systems ranked and correlated by the means over items (default) or by the
        study's given system-level values (measures without them left out).

    Returns
    -------
    polars.DataFrame
        Columns ``criterion, k, systems`` (the kept systems, best first, joined by ``"; "``)
        followed by those of :func:`correlate` (``measure, against, level, method, variant,
        statistic, n_groups, n_skipped``).
    """
    level = check_level(level, WORDS["item_system"])
    check("method", method)
    check_bool("include_human", include_human)
    kinds = check_kinds(kinds)
    check_system_scores(system_scores, level)
    cube = criteria_cube(study, kinds, include_human, system_scores)
    human = human_mask(cube)
    metrics, criteria = np.flatnonzero(~human), np.flatnonzero(human)
    # A system not rated on a criterion (WMT: MQM and DA rate different systems; a newly scored
    # one) cannot rank on it: a criterion's top k exist only up to its rated count.
    n_rated = [int((~np.isnan(cube.values[c]).all(axis=0)).sum()) for c in criteria]
    ks = sorted(set(ks))
    if not ks or ks[0] < 3 or ks[0] > max(n_rated):
        counts = ", ".join(
            f"{cube.measures[c]} {n}" for c, n in zip(criteria, n_rated, strict=True)
        )
        raise ValueError(
            f"ks={ks}: each k must lie between 3 and {max(n_rated)}, the most systems a "
            f"criterion rates ({counts})"
        )
    _note_ks_left_out(ks, [cube.measures[c] for c in criteria], n_rated)
    # Every (criterion, k) at once: one cube whose groups are (criterion, k, input), the systems
    # outside that criterion's k best masked as missing and dropped pairwise by the kernel, so
    # 6 criteria x 7 values of k cost one call instead of 42.
    X = at_level(cube.values, level, True)  # system level: (M, 1, S) means
    keep = np.zeros((len(criteria), len(ks), X.shape[2]), dtype=bool)
    orders = []
    for ci, c in enumerate(criteria):
        on_c = ~np.isnan(cube.values[c]).all(axis=0)
        means = np.full(len(cube.systems), -np.inf)
        means[on_c] = np.nanmean(cube.values[c][:, on_c], axis=0)
        orders.append(np.argsort(-means, kind="stable"))
        for ki, k in enumerate(ks):
            keep[ci, ki, orders[-1][:k]] = k <= n_rated[ci]
    shape = (len(criteria) * len(ks) * X.shape[1], X.shape[2])
    mask = keep[:, :, None, :]  # (C, K, 1, S) against (C or M, K, G, S)
    A = np.where(mask[None], X[metrics][:, None, None], np.nan).reshape(len(metrics), *shape)
    B = np.where(mask, X[criteria][:, None], np.nan).reshape(1, *shape)
    R = group_correlations(A, B, method=method, nan_policy="omit")
    R = R.reshape(len(criteria), len(ks), X.shape[1], len(metrics), 1)
    frames = []
    for ci, c in enumerate(criteria):
        for ki, k in enumerate(ks):
            if k > n_rated[ci]:
                continue
            res = aggregate_groups(R[ci, ki])
            frame = correlation_frame(cube, metrics, np.array([c]), res, level=level, method=method)
            systems = "; ".join(cube.systems[s] for s in orders[ci][:k])
            frames.append(
                frame.select(
                    pl.lit(cube.measures[c]).alias("criterion"),
                    pl.lit(k, dtype=pl.Int64).alias("k"),
                    pl.lit(systems).alias("systems"),
                    pl.all(),
                )
            )
    return pl.concat(frames)


def _note_ks_left_out(ks: list[int], criteria: list[str], n_rated: list[int]) -> None:
    """One :class:`~hanna_stats.progress.StudyNote` per number of rated systems below the
    largest k: the criteria that rate so few systems and the ks they have no rows for."""
    by_count: dict[int, list[str]] = {}
    for name, n in zip(criteria, n_rated, strict=True):
        if ks[-1] > n:
            by_count.setdefault(n, []).append(name)
    for n, names in sorted(by_count.items(), reverse=True):
        gone = ", ".join(str(k) for k in ks if k > n)
        which = f"criteria {', '.join(names)} rate" if names[1:] else f"criterion {names[0]} rates"
        warnings.warn(StudyNote(f"topk: {which} {n} systems: no rows for k = {gone}"), stacklevel=4)


#: Columns of :func:`metric_clusters` (``epsilon`` for ``method="acc_eq"`` only).
METRIC_CLUSTERS_SCHEMA = {
    "criterion": pl.String,
    "level": pl.String,
    "method": pl.String,
    "measure": pl.String,
    "statistic": pl.Float64,
    "rank": pl.Int64,
    "pvalue_next": pl.Float64,
    "epsilon": pl.Float64,
    "permutations": pl.Int64,
    "seed": pl.Int64,
    "alpha": pl.Float64,
}


@analysis
def metric_clusters(
    study: Study,
    *,
    criterion: str,
    level: LevelWord = "item",
    method: Coefficient = "kendall",
    permutations: int = 1000,
    seed: int | None = 0,
    alpha: float = 0.05,
    include_human: bool = False,
    variant: Variant = "b",
    kinds: tuple[Kind, ...] = ("metric",),
    system_scores: SystemScores = "mean",
    executor: Any = None,
) -> pl.DataFrame:
    """Leaderboard of the measures for one criterion, in significance clusters (WMT style).

    The measures are sorted by their statistic with the criterion; each pair's one-sided
    p-value of "a is better than b" comes from the PERM-BOTH permutation test of the
    correlations (:func:`hanna_stats.kernels.permutation_test_pairs`, ``alternative=
    "greater"``) or, for ``method="acc_eq"``, from the pairwise permutation test of the
    tie-calibrated accuracies (:func:`hanna_stats.kernels.calibrated_permutation_test`). Going
    down the list, a measure starts a new cluster when a measure of the current cluster beats
    it with ``p <= alpha`` (:func:`hanna_stats.kernels.significance_clusters`, mt-metrics-eval's
    ``AssignRanks``). ``system_scores="given"`` (system level) ranks by the given system-level
    values (see the module), permuting them per system.
    ``executor`` (a Dask ``distributed.Client``, a ``concurrent.futures.Executor`` or a
    :class:`~hanna_stats.kernels.ClusterExecutor`) runs the pairwise tests in blocks on a
    cluster, with the same result bit for bit (:mod:`hanna_stats.kernels.distributed`); None:
    in this process.

    Returns
    -------
    polars.DataFrame
        One row per measure, best first: ``criterion, level, method, measure, statistic,
        rank, pvalue_next`` (the cluster's rank, 1 = top; the one-sided p-value that the
        measure beats the next one down, where a new cluster starts when a measure of the
        cluster beats it with ``p <= alpha``; null on the last row), ``epsilon`` for ``acc_eq``,
        and the settings ``permutations, seed, alpha``. A measure whose statistic is undefined
        (NaN) has a null rank and comes last.
    """
    level = check_level(level)
    check("method", method, WORDS["coefficient"])
    check_system_scores(system_scores, level)
    check_bool("include_human", include_human)
    kinds = check_kinds(kinds)
    criterion, names, cube = criterion_cube(study, criterion, kinds, include_human, system_scores)
    # Systems the criterion never rates are left out before the scores are z-scored, as
    # mt-metrics-eval keeps only the systems with gold scores (WMT22 zh-en: MQM rates 16 of 20).
    values = cube.values[:, :, ~np.isnan(cube.values[-1]).all(axis=0)]
    columns = {}
    if method == "acc_eq":
        res = calibrated_permutation_test(
            values[-1:],
            values[:-1],
            level=level,
            permutations=permutations,
            seed=seed,
            progress=progress,
            executor=executor,
        ).for_human(0)
        columns["epsilon"] = res.epsilon
    else:
        res = permutation_test_pairs(
            values[:-1],
            values[-1],
            level=level,
            method=method,
            variant=variant,
            permutations=permutations,
            alternative="greater",
            seed=seed,
            progress=progress,
            executor=executor,
        )
    ranks = significance_clusters(res.statistic, res.pvalue, alpha=alpha)
    undefined = np.isnan(res.statistic)
    n = len(names)
    columns |= {
        "criterion": [criterion] * n,
        "level": [level] * n,
        "method": [method] * n,
        "measure": names,
        "statistic": res.statistic,
        "rank": [None if u else int(r) for r, u in zip(ranks, undefined, strict=True)],
    }
    columns |= {"permutations": [permutations] * n, "seed": [seed] * n, "alpha": [alpha] * n}
    schema = {key: dtype for key, dtype in METRIC_CLUSTERS_SCHEMA.items() if key in columns}
    frame = pl.DataFrame({key: columns[key] for key in schema}, schema=schema).with_row_index()
    frame = frame.sort(
        ["rank", "statistic"], descending=[False, True], nulls_last=True, maintain_order=True
    )
    # Each row's p-value that it beats the row below it (where the clusters are cut), best
    # first; null on the last row.
    order = frame["index"].to_list()
    below = [float(res.pvalue[a, b]) for a, b in itertools.pairwise(order)]
    pvalue_next = pl.Series("pvalue_next", [*below, None], dtype=pl.Float64)
    return frame.drop("index").insert_column(list(schema).index("rank") + 1, pvalue_next)
