"""Significance of metric comparisons: Williams tests and paired bootstrap system comparison.

- :func:`williams`, :func:`williams_all`: Williams tests between every ordered pair of
  automatic measures for a criterion, with multiple-testing correction;
- :func:`judge_williams`: each LLM judge against the best automatic metric of the criterion it
  rates, in both directions (Chhun, Suchanek & Clavel, TACL 2024);
- :func:`bootstrap_pairs`, :func:`bootstrap_pair_labels`: pairwise system comparison by paired
  bootstrap, scored against the criteria's labels.

The analysis layer of the paper's Sec. 5.3 (Fig. 7 / Fig. 26: pairwise system comparison by
paired bootstrap) and Appendix I (Figs. 27-38: Williams tests between metrics). It takes the
correlation matrices and the (measure x input x system) cube of a loaded Study and hands them to
the kernels
(:func:`hanna_stats.kernels.williams.williams_test`,
:func:`hanna_stats.kernels.system_pairs.paired_bootstrap`,
:func:`hanna_stats.kernels.multitest.adjust_pvalues`), returning tidy polars DataFrames.

Conventions (Chhun et al., 2022; see ``docs/conventions.md``, sections 7-9):

* The human-written stories are excluded unless ``include_human=True`` (10 systems remain).
* Williams test: the correlations are those of :func:`hanna_stats.analyses.correlations.correlate`
  (item level: per-prompt correlations across systems, averaged over the valid prompts). Each
  metric's sign is aligned with the criterion (``r23 = sign(r_a) sign(r_b) r_ab``); the authors'
  loop lost the sign of a negatively correlated metric after its first use, which is not
  reproduced. ``n`` is explicit: the number of systems at system level; at item level the
  paper's convention n = number of prompts (96), which is not the sample size of an averaged
  correlation (the p-values are heuristic there).
* Paired bootstrap: B resamples of the prompt indices, drawn once from
  ``numpy.random.default_rng(seed)`` and shared by every measure; a system wins a resample when
  its mean is strictly greater; label 1 / 2 when system 1 / 2 wins in at least (1 - alpha) of the
  resamples, else 0; weighted F1 between each criterion's and each metric's labels over the
  45 system pairs. The authors ignored their seed, so Fig. 7 is reproducible only within
  seed-to-seed variation.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import polars as pl

from hanna_stats.analyses._common import (
    Selection,
    analysis,
    check_system_scores,
    correlation_matrix,
    criteria_cube,
    cube_criterion,
    human_mask,
    seed_key,
)
from hanna_stats.analyses.correlations import judge_correlations
from hanna_stats.kernels import (
    adjust_pvalues,
    level_correlation,
    paired_bootstrap,
    weighted_f1,
    williams_test,
)
from hanna_stats.progress import progress
from hanna_stats.study import Study
from hanna_stats.vocabulary import (
    WORDS,
    Alternative,
    Correction,
    Family,
    Kind,
    Level,
    LevelWord,
    Method,
    SystemScores,
    check,
    check_bool,
    check_kinds,
    check_level,
)

WILLIAMS_SCHEMA = {
    "criterion": pl.String,
    "level": pl.String,
    "method": pl.String,
    "measure_a": pl.String,
    "measure_b": pl.String,
    "r_a": pl.Float64,
    "r_b": pl.Float64,
    "r_ab": pl.Float64,
    "n": pl.Int64,
    "statistic": pl.Float64,
    "pvalue": pl.Float64,
}


@analysis
def williams(
    study: Study,
    *,
    criterion: str,
    level: LevelWord = "item",
    method: Method = "kendall",
    n: int | None = None,
    alternative: Alternative = "greater",
    correction: Correction | None = None,
    family: Family = "criterion",
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
    system_scores: SystemScores = "mean",
) -> pl.DataFrame:
    """Williams tests between every ordered pair of metrics for one human criterion.

    An LLM judge's measure that rates a criterion (catalogue ``criterion``) is compared on that
    criterion only: ``williams(criterion="EM", kinds=("metric", "llm-judge"))`` sets each judge's
    Empathy rating against the metrics and the other judges' Empathy ratings.

    Row (a, b) tests H1: ``|r_a| > |r_b|``, metric a correlates more strongly with the criterion
    than metric b (Williams' T2, Steiger 1980 eq. 7; see
    :func:`hanna_stats.kernels.williams.williams_test` for the formula). Both orders of each
    pair are reported; the (b, a) row has the opposite statistic, and with
    ``alternative="greater"`` the two one-sided p-values sum to 1. The paper's Figs. 27-38 show
    these p-values (item and system level, Pearson: ``level="system", method="pearson"`` for
    its system-level figures) with green cells where ``r_a > r_b``.

    Parameters
    ----------
    study : Study
        A loaded study.
    criterion : str
        A human criterion: its name (``"Empathy"``) or the paper's abbreviation (``"EM"``).
    level : {"item", "system", "global"}
        Correlation level, as :func:`hanna_stats.analyses.correlations.correlate` (``"story"``,
        ``"summary"`` or ``"segment"`` give ``"item"``; default item, as every analysis).
    method : {"pearson", "spearman", "kendall"}
        Correlation coefficient (default Kendall tau-b, as every analysis; the paper's figures
        use Pearson). The test is derived for Pearson correlations; with the others it is a
        heuristic.
    n : int, optional
        Sample size of the test (n - 3 degrees of freedom), greater than 3. Default: the number
        of systems at system level (10), of inputs at item level (96, the paper's convention,
        not a true sample size for an averaged correlation: simulated under the null, the test
        then rejected 0 of 400 studies at alpha 0.05 in every data shape, docs/error-rates.md;
        use ``permutation_test`` for a test of the right size), of items at global level.
    alternative : {"greater", "two-sided", "less"}
        ``"greater"``: the paper's one-sided test.
    correction : {None, "bh", "by", "holm", "bonferroni"}
        If given, adds ``pvalue_adjusted``: the p-values adjusted with
        :func:`hanna_stats.kernels.multitest.adjust_pvalues` within each ``family`` (NaN
        p-values excluded).
    family : {"criterion", "pair", "all"}
        ``"criterion"``: all ordered pairs of this call. ``"pair"`` and ``"all"`` span the
        study's criteria (as :func:`williams_all` defines them, at this level and method): the
        tests of every criterion are run and adjusted, and the rows of ``criterion`` returned.
    include_human : bool
        Keep the human-written stories as a system (default False, as the paper).
    kinds : tuple of str
        Kinds of automatic measures to compare (default the paper's metrics).
    system_scores : {"mean", "given"}
        At system level, a system's value is the mean of its items (default) or the one the
        study gives (WMT's ``.sys.score`` files; measures without one are left out, as
        :func:`hanna_stats.analyses.correlations.correlate` does); ``n`` is then the number of
        systems with given values.

    Returns
    -------
    polars.DataFrame
        One row per ordered pair of distinct metrics, with columns ``criterion, level, method,
        measure_a, measure_b, r_a, r_b, r_ab, n, statistic, pvalue`` (+ ``pvalue_adjusted``):
        ``r_a``, ``r_b`` are the signed correlations with the criterion, ``r_ab`` between the
        two metrics, ``statistic`` Williams' t.

    Examples
    --------
    >>> study = open_study("path/to/hanna")                    # doctest: +SKIP
    >>> williams(study, criterion="EM", level="system", method="pearson").filter(  # doctest: +SKIP
    ...     (pl.col("measure_a") == "BERTScore F1") & (pl.col("measure_b") == "BLEU"))
    """
    (level,), kinds, n = _check_williams(
        (level,), (method,), alternative, correction, family, include_human, kinds, system_scores, n
    )
    cube = criteria_cube(study, kinds, include_human, system_scores)
    name = cube_criterion(study, cube, criterion)  # given mode: also a system-level-only one
    criteria = [m for m, k in zip(cube.measures, cube.kinds, strict=True) if k == "human"]
    across = correction is not None and family != "criterion"
    frame = williams_frame(
        study,
        criteria=criteria if across else [name],
        levels=(level,),
        methods=(method,),
        n=n,
        alternative=alternative,
        correction=correction,
        family=family,
        include_human=include_human,
        kinds=kinds,
        system_scores=system_scores,
    )
    return frame.filter(pl.col("criterion") == name) if across else frame


@analysis
def williams_all(
    study: Study,
    *,
    levels: tuple[LevelWord, ...] = WORDS["item_system"],
    methods: tuple[Method, ...] = WORDS["method"],
    alternative: Alternative = "greater",
    correction: Correction | None = None,
    family: Family = "criterion",
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
) -> pl.DataFrame:
    """Williams tests for every criterion, level and method at once (6 x 2 x 3 by default).

    One correlation matrix per (level, method) serves all criteria; ``n`` takes the default of
    :func:`williams` for each level. A ``correction`` adjusts the p-values of each ``family``:

    - ``"criterion"``: the ordered pairs of one (criterion, level, method), as :func:`williams`;
    - ``"pair"``: one ordered pair at one (level, method), across the criteria. A pair is named
      by its measures, a judge's measures by judge and prompt variant (Beluga-13B's prompt-1
      ratings of the six criteria are one competitor), so this is the family of Chhun et al.
      (2024): one judge against one other, Benjamini-Hochberg across the criteria;
    - ``"all"``: every test of the call.

    Same columns as :func:`williams`.
    """
    levels, kinds, _ = _check_williams(
        levels, methods, alternative, correction, family, include_human, kinds, "mean", None
    )
    return williams_frame(
        study,
        criteria=list(study.criteria),
        levels=levels,
        methods=methods,
        alternative=alternative,
        correction=correction,
        family=family,
        include_human=include_human,
        kinds=kinds,
    )


def williams_frame(
    study: Study,
    *,
    criteria: list[str],
    levels: tuple[Level, ...],
    methods: tuple[Method, ...],
    n: int | None = None,
    alternative: Alternative = "greater",
    correction: Correction | None = None,
    family: Family = "criterion",
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
    system_scores: SystemScores = "mean",
) -> pl.DataFrame:
    """Williams tests of the automatic measures of ``kinds`` against ``criteria``.

    The engine of :func:`williams` and :func:`williams_all`, on their checked options
    (canonical ``levels``, ``kinds`` a tuple): one memoised correlation matrix per (level,
    method) serves every criterion.
    """
    cube = criteria_cube(study, kinds, include_human, system_scores)
    metric_idx = np.flatnonzero(~human_mask(cube))
    absent = [c for c in criteria if c not in cube.measures]
    if absent:
        raise ValueError(
            f"criteria {absent} have no values here (system_scores={system_scores!r}: "
            "a criterion without given system-level values is left out)"
        )
    criterion_idx = np.array([cube.measures.index(c) for c in criteria], dtype=np.int64)
    names = np.asarray(cube.measures, dtype=object)
    metrics = len(metric_idx)
    a_idx, b_idx = np.nonzero(~np.eye(metrics, dtype=bool))  # ordered pairs a != b
    # The pairs' names once; each (criterion, level, method) block reuses them without copying.
    # A judge's measure rating criterion X enters the tests of X only; a pair is named across
    # criteria by its measures, a judge's measures by judge and prompt (the "pair" family).
    rates, identity = _judged(study, names[metric_idx].tolist())
    columns = {
        "measure_a": names[metric_idx[a_idx]].tolist(),
        "measure_b": names[metric_idx[b_idx]].tolist(),
    }
    if correction is not None and family == "pair":
        columns |= {"pair_a": [identity[i] for i in a_idx], "pair_b": [identity[i] for i in b_idx]}
    pairs = pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.String))
    matched = []
    for name in criteria:
        fits = np.array([r is None or r == name for r in rates])
        matched.append(None if fits.all() else pl.Series(fits[a_idx] & fits[b_idx]))
    frames = []
    for level in levels:
        n_level = williams_n(level, *cube.values.shape[1:], n)
        for method in methods:
            selection = Selection(
                kinds=kinds,
                include_human=include_human,
                level=level,
                method=method,
                system_scores=system_scores,
            )
            R = correlation_matrix(study, selection)[1].statistic
            r = R[np.ix_(criterion_idx, metric_idx)]
            RM = R[np.ix_(metric_idx, metric_idx)]
            res = williams_test(r, RM, n_level, alternative=alternative)
            for c, name in enumerate(criteria):
                columns = {
                    "r_a": r[c, a_idx],
                    "r_b": r[c, b_idx],
                    "r_ab": RM[a_idx, b_idx],
                    "statistic": res.statistic[c, a_idx, b_idx],
                    "pvalue": res.pvalue[c, a_idx, b_idx],
                }
                block = pairs.with_columns(
                    pl.lit(name).alias("criterion"),
                    pl.lit(level).alias("level"),
                    pl.lit(method).alias("method"),
                    pl.lit(n_level, dtype=pl.Int64).alias("n"),
                    **{k: pl.Series(v, dtype=pl.Float64) for k, v in columns.items()},
                )
                if matched[c] is not None:
                    block = block.filter(matched[c])
                frames.append(block)
    if not frames:
        return pl.DataFrame(schema=WILLIAMS_SCHEMA)
    frame = pl.concat(frames, rechunk=False)
    if correction is not None:
        if family == "pair":
            keys = pl.struct("level", "method", "pair_a", "pair_b").rank("dense")
            groups = frame.select(keys).to_series().to_numpy()
        else:  # each block is one (criterion, level, method); "all" is one family
            blocks = np.arange(len(frames)) if family == "criterion" else np.zeros(len(frames))
            groups = np.repeat(blocks, [f.height for f in frames])
        frame = frame.with_columns(
            pl.Series(
                "pvalue_adjusted", adjusted_within(frame["pvalue"].to_numpy(), groups, correction)
            )
        )
    order = [*WILLIAMS_SCHEMA, *(["pvalue_adjusted"] if correction is not None else [])]
    return frame.select(order)


def _check_williams(
    levels: tuple[object, ...],
    methods: tuple[object, ...],
    alternative: object,
    correction: object,
    family: object,
    include_human: object,
    kinds: object,
    system_scores: object,
    n: object,
) -> tuple[tuple[Level, ...], tuple[Kind, ...], int | None]:
    """The options of a Williams analysis checked once, before any work: the canonical
    ``levels``, ``kinds`` as a tuple and the checked ``n``; ValueError naming the first bad one."""
    levels = tuple(check_level(level) for level in levels)
    for method in methods:
        check("method", method)
    check("alternative", alternative)
    if correction is not None:
        check("correction", correction)
    check("family", family)
    check_bool("include_human", include_human)
    kinds = check_kinds(kinds)
    for level in levels:
        check_system_scores(system_scores, level)
    return levels, kinds, _checked_n(n)  # type: ignore[return-value]


def _checked_n(n: int | None) -> int | None:
    """An explicit sample size, checked: an integer of at least 4 (or None)."""
    if n is None:
        return None
    try:
        n = operator.index(n)
    except TypeError:
        raise ValueError(f"n must be an integer; got {n!r}") from None
    if n <= 3:
        raise ValueError(
            f"n={n}: the Williams test needs n of at least 4 (it has n - 3 degrees of "
            "freedom); pass a larger n or leave it out for the default"
        )
    return n


def williams_n(level: Level, inputs: int, systems: int, n: int | None) -> int:
    """The sample size of a Williams test at ``level``: ``n`` when given (checked at the
    analysis' entry by :func:`_checked_n`), else the number of systems (system level), inputs
    (item level, the paper's convention) or items (global).

    Raises
    ------
    ValueError
        If that number is below 4 (the test has n - 3 degrees of freedom), saying what to do.
    """
    if n is not None:
        return n
    size = {"item": inputs, "system": systems, "global": inputs * systems}[level]
    if size <= 3:
        unit = {"item": "inputs", "system": "systems", "global": "items"}[level]
        raise ValueError(
            f"{size} {unit}: the Williams test at {level} level needs at least 4 (it has n - 3 "
            f"degrees of freedom); use another level or a study with more {unit}"
        )
    return size


def adjusted_within(pvalues: np.ndarray, groups: np.ndarray, correction: Correction) -> np.ndarray:
    """``pvalues`` adjusted by ``correction`` within each family (equal ``groups`` values)."""
    adjusted = np.empty_like(pvalues)
    order = np.argsort(groups, kind="stable")
    bounds = np.flatnonzero(np.diff(groups[order])) + 1
    for rows in np.split(order, bounds):
        adjusted[rows] = adjust_pvalues(pvalues[rows], method=correction)
    return adjusted


#: Columns of :func:`judge_williams`.
JUDGE_WILLIAMS_SCHEMA = {
    "criterion": pl.String,
    "level": pl.String,
    "method": pl.String,
    "judge": pl.String,
    "prompt": pl.String,
    "measure": pl.String,
    "metric": pl.String,
    "r_judge": pl.Float64,
    "r_metric": pl.Float64,
    "r_ab": pl.Float64,
    "n": pl.Int64,
    "statistic": pl.Float64,
    "pvalue_judge": pl.Float64,
    "pvalue_judge_adjusted": pl.Float64,
    "pvalue_metric": pl.Float64,
    "pvalue_metric_adjusted": pl.Float64,
}


@analysis
def judge_williams(
    study: Study,
    *,
    level: LevelWord = "item",
    method: Method = "kendall",
    n: int | None = None,
    correction: Correction | None = None,
    include_human: bool = False,
) -> pl.DataFrame:
    """Williams tests of each LLM judge against the best automatic metric of each criterion.

    For each human criterion, the best metric is the measure of kind ``metric`` with the
    largest |correlation| with the criterion at ``level``
    (:func:`~hanna_stats.analyses.correlations.correlate` with ``kinds=("metric",)``; ties go to
    the first in catalogue order). Every LLM-judge measure that rates the criterion (each judge,
    each prompt variant) is tested against it in both directions, one-sided: H1 |r_judge| >
    |r_metric| (``pvalue_judge``) and H1 |r_metric| > |r_judge| (``pvalue_metric``).

    The rows are those of :func:`~hanna_stats.analyses.significance.williams_frame` (every
    criterion, ``levels=(level,)``, ``methods=(method,)``, ``alternative="greater"``,
    ``family="pair"``, ``kinds=("metric", "llm-judge")``) for the ordered pairs (judge measure,
    best metric) and (best metric, judge measure), with the same statistics and (adjusted)
    p-values, computed without the tens of thousands of other ordered pairs. The family of a
    ``correction`` is therefore the "pair" family: one judge under one prompt against one
    metric, in one direction, across the criteria (the judge's rating of each criterion
    against that metric, whether or not the metric is the best one for that criterion), as
    Chhun et al. (2024) corrected one judge against another.

    Parameters
    ----------
    study : Study
        A study with human criteria, metrics and LLM-judge measures of the criteria.
    level : {"item", "system", "global"}
        ``"story"``, ``"summary"`` or ``"segment"`` give ``"item"``.
    method : {"pearson", "spearman", "kendall"}
        Kendall is tau-b.
    n : int, optional
        Sample size of the tests; default as ``williams_frame``: systems at system level, inputs
        at item level, items (inputs x systems) at global level.
    correction : {None, "bh", "by", "holm", "bonferroni"}
        Adds ``pvalue_judge_adjusted`` and ``pvalue_metric_adjusted`` (NaN columns when None,
        the default; Chhun et al. (2024) use ``"bh"``).
    include_human : bool
        Keep the human-written system (the studies leave it out).

    Returns
    -------
    polars.DataFrame
        ``criterion, level, method, judge, prompt, measure`` (the judge's measure), ``metric``
        (the best metric), ``r_judge, r_metric`` (signed correlations with the criterion),
        ``r_ab`` (between the two), ``n``, ``statistic`` (Williams' t of judge against metric;
        the reverse test has -t), ``pvalue_judge, pvalue_judge_adjusted, pvalue_metric,
        pvalue_metric_adjusted``; by criterion (catalogue order), then judge measure (catalogue
        order). Empty when no metric correlates with a criterion.

    Raises
    ------
    ValueError
        For a bad option, a study without LLM-judge measures of its criteria, or n below 4.
    """
    level, n = _judge_williams_iv(level, method, n, correction, include_human)
    criteria = list(study.criteria)
    judges = study.catalogue.filter(
        (pl.col("kind") == "llm-judge") & pl.col("criterion").is_in(criteria)
    ).select("measure", "criterion", "judge", "variant")
    if judges.is_empty():
        raise ValueError(
            "the store holds no LLM-judge measures of its human criteria: ingest them (HANNA's "
            "hanna_metric_scores_llm.csv)"
        )
    cube = criteria_cube(study, ("metric", "llm-judge"), include_human)
    n_level = williams_n(level, *cube.values.shape[1:], n)
    metric_r, best = _best_metrics(study, level, method, include_human)
    if not best:
        return pl.DataFrame(schema=JUDGE_WILLIAMS_SCHEMA)
    # Each judge measure against its criterion: the correlations judge_criteria uses.
    matched = judge_correlations(study, level, method, "b", include_human)
    names = judges["measure"].to_list()
    r_judge = np.array([matched.get(m, np.nan) for m in names])
    # The judges against the best metrics (the cells of the full matrix williams_frame reads).
    position = {m: i for i, m in enumerate(cube.measures)}
    metrics = list(dict.fromkeys(best[c][0] for c in criteria if c in best))
    r_ab = level_correlation(
        cube.values[[position[m] for m in metrics]],
        cube.values[[position[m] for m in names]],
        level=level,
        method=method,
    ).statistic  # (metrics, judge measures)
    frames = [
        _judge_against_metric(
            judges,
            criteria,
            metric,
            r_metric=[metric_r.get((metric, c), np.nan) for c in criteria],
            r_judge=r_judge,
            r_ab=r_ab[k],
            n=n_level,
            level=level,
            method=method,
            correction=correction,
        ).filter(pl.Series([best.get(c, ("",))[0] == metric for c in judges["criterion"]]))
        for k, metric in enumerate(metrics)
    ]
    order = {c: i for i, c in enumerate(criteria)}
    return (
        pl.concat(frames)
        .sort(pl.col("criterion").replace_strict(order, return_dtype=pl.Int64), "_order")
        .select(list(JUDGE_WILLIAMS_SCHEMA))
    )


def _judge_williams_iv(
    level: object, method: object, n: object, correction: object, include_human: object
) -> tuple[Level, int | None]:
    """:func:`judge_williams`' options checked once: the canonical ``level`` and the checked
    ``n``; ValueError naming the first bad option."""
    level = check_level(level)
    check("method", method)
    if correction is not None:
        check("correction", correction)
    check_bool("include_human", include_human)
    return level, _checked_n(n)  # type: ignore[return-value]


def _best_metrics(
    study: Study, level: Level, method: Method, include_human: bool
) -> tuple[dict[tuple[str, str], float], dict[str, tuple[str, float]]]:
    """Every metric's correlation with every criterion at ``level`` (the memoised matrix of
    ``correlate``), and each criterion's best metric with its |r|: the largest |r|, ties to
    the first in catalogue order."""
    selection = Selection(
        kinds=("metric",), include_human=include_human, level=level, method=method
    )
    cube, res = correlation_matrix(study, selection)
    human = human_mask(cube)
    metric_r: dict[tuple[str, str], float] = {}
    best: dict[str, tuple[str, float]] = {}
    for i in np.flatnonzero(~human):
        for j in np.flatnonzero(human):
            measure, against, value = cube.measures[i], cube.measures[j], res.statistic[i, j]
            metric_r[measure, against] = value
            if np.isfinite(value) and (against not in best or abs(value) > best[against][1]):
                best[against] = (measure, abs(value))
    return metric_r, best


def _judge_against_metric(
    judges: pl.DataFrame,
    criteria: list[str],
    metric: str,
    *,
    r_metric: list[float],
    r_judge: np.ndarray,
    r_ab: np.ndarray,
    n: int,
    level: Level,
    method: Method,
    correction: Correction | None,
) -> pl.DataFrame:
    """Williams tests of every judge measure (rows of ``judges``: ``measure, criterion, judge,
    variant``) against ``metric``, both ways, on the criterion each rates: ``r_metric`` the
    metric's correlation with each of ``criteria``, ``r_judge`` each judge measure's with its
    criterion, ``r_ab`` the judge measures' with the metric. A ``correction`` adjusts within
    each judge under one prompt (the "pair" family); column ``_order`` keeps the judges'
    order."""
    names, rated, judge_names, prompts = (judges[c].to_list() for c in judges.columns)
    identity = [
        f"{j or m} (prompt {v})" for m, j, v in zip(names, judge_names, prompts, strict=True)
    ]
    families = pl.Series(identity).rank("dense").to_numpy()
    row_of = np.array([criteria.index(c) for c in rated])
    judged = np.arange(len(names))
    # Measures: the metric (0), then every judge measure; r has one row per criterion.
    r = np.full((len(criteria), 1 + len(names)), np.nan)
    r[:, 0] = r_metric
    r[row_of, 1 + judged] = r_judge
    R = np.full((1 + len(names),) * 2, np.nan)
    np.fill_diagonal(R, 1.0)
    R[0, 1:] = R[1:, 0] = r_ab
    res = williams_test(r, R, n, alternative="greater")
    p_judge = res.pvalue[row_of, 1 + judged, 0]
    p_metric = res.pvalue[row_of, 0, 1 + judged]
    adjusted = {
        column: adjusted_within(p, families, correction)
        if correction is not None
        else np.full(len(names), np.nan)
        for column, p in (("pvalue_judge_adjusted", p_judge), ("pvalue_metric_adjusted", p_metric))
    }
    return pl.DataFrame(
        {
            "criterion": rated,
            "level": level,
            "method": method,
            "judge": judge_names,
            "prompt": prompts,
            "measure": names,
            "metric": metric,
            "r_judge": r_judge,
            "r_metric": r[row_of, 0],
            "r_ab": r_ab,
            "n": n,
            "statistic": res.statistic[row_of, 1 + judged, 0],
            "pvalue_judge": p_judge,
            "pvalue_judge_adjusted": adjusted["pvalue_judge_adjusted"],
            "pvalue_metric": p_metric,
            "pvalue_metric_adjusted": adjusted["pvalue_metric_adjusted"],
            "_order": np.arange(len(names)),
        },
        schema={**JUDGE_WILLIAMS_SCHEMA, "_order": pl.Int64},
    )


BOOTSTRAP_SCHEMA = {
    "measure": pl.String,
    "criterion": pl.String,
    "f1": pl.Float64,
    "resamples": pl.Int64,
    "alpha": pl.Float64,
    "seed": pl.Int64,
}

LABELS_SCHEMA = {
    "measure": pl.String,
    "kind": pl.String,
    "system_1": pl.String,
    "system_2": pl.String,
    "wins_1": pl.Int64,
    "wins_2": pl.Int64,
    "label": pl.Int8,
    "resamples": pl.Int64,
    "alpha": pl.Float64,
    "seed": pl.Int64,
}


@analysis
def bootstrap_pairs(
    study: Study,
    *,
    resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
    executor: Any = None,
) -> pl.DataFrame:
    """Pairwise system comparison by paired bootstrap: weighted F1 of metric vs criterion labels.

    For every pair of systems (s1, s2) and every measure (criteria and metrics), ``resamples``
    bootstrap resamples of the inputs label the pair 1 (s1 better in at least ``1 - alpha`` of
    them), 2 (s2 better) or 0 (Koehn, 2004; see
    :func:`hanna_stats.kernels.system_pairs.paired_bootstrap`). Each metric's labels are scored
    against each criterion's labels with the support-weighted F1 (scikit-learn's
    ``average="weighted"``), the paper's Fig. 7 / Fig. 26.

    Parameters
    ----------
    study : Study
        A loaded study.
    resamples : int
        Number of bootstrap resamples B (the paper: 1000).
    alpha : float
        One minus the confidence required for a win (the paper: 0.05).
    seed : int
        Seed of ``numpy.random.default_rng``; the (B, G) resample indices are drawn once and
        shared by every measure, so results depend only on the seed.
    include_human : bool
        Keep the human-written stories as a system (default False, as the paper).
    kinds : tuple of str
        Kinds of automatic measures to score (default the paper's metrics).
    executor : distributed.Client, concurrent.futures.Executor or ClusterExecutor, optional
        Count the wins in blocks of resamples on this executor, e.g. a Dask cluster
        (:mod:`hanna_stats.kernels.distributed`), with the same counts; None (the default): in
        this process.

    Returns
    -------
    polars.DataFrame
        One row per (metric, criterion) with columns ``measure, criterion, f1, resamples, alpha,
        seed``; ``f1`` in [0, 1] (the paper prints percentages).
    """
    kinds = _bootstrap_iv(include_human, kinds)
    cube, result = _bootstrap(study, resamples, alpha, seed, include_human, kinds, executor)
    human = human_mask(cube)
    f1 = weighted_f1(result.labels[human], result.labels[~human])  # (criteria, metrics)
    names = np.asarray(cube.measures, dtype=object)
    criteria, metrics = names[human], names[~human]
    return pl.DataFrame(
        {
            "measure": np.repeat(metrics, len(criteria)).tolist(),
            "criterion": np.tile(criteria, len(metrics)).tolist(),
            "f1": f1.T.ravel(),
            "resamples": resamples,
            "alpha": alpha,
            "seed": seed,
        },
        schema=BOOTSTRAP_SCHEMA,
    )


@analysis
def bootstrap_pair_labels(
    study: Study,
    *,
    resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = 0,
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
    executor: Any = None,
) -> pl.DataFrame:
    """The per-pair labels behind :func:`bootstrap_pairs` (same arguments, same resamples).

    Returns
    -------
    polars.DataFrame
        One row per (measure, system pair), criteria first, with columns ``measure, kind,
        system_1, system_2, wins_1, wins_2, label, resamples, alpha, seed``: ``wins_1`` /
        ``wins_2`` count the resamples where system 1 / 2 has the strictly greater mean;
        ``label`` is 1, 2 or 0.
    """
    kinds = _bootstrap_iv(include_human, kinds)
    cube, result = _bootstrap(study, resamples, alpha, seed, include_human, kinds, executor)
    measures, pairs = result.labels.shape
    systems = np.asarray(cube.systems, dtype=object)
    return pl.DataFrame(
        {
            "measure": np.repeat(np.asarray(cube.measures, dtype=object), pairs).tolist(),
            "kind": np.repeat(np.asarray(cube.kinds, dtype=object), pairs).tolist(),
            "system_1": np.tile(systems[result.pairs[:, 0]], measures).tolist(),
            "system_2": np.tile(systems[result.pairs[:, 1]], measures).tolist(),
            "wins_1": result.wins[..., 0].ravel(),
            "wins_2": result.wins[..., 1].ravel(),
            "label": result.labels.ravel(),
            "resamples": resamples,
            "alpha": alpha,
            "seed": seed,
        },
        schema=LABELS_SCHEMA,
    )


def _bootstrap_iv(include_human: object, kinds: object) -> tuple[Kind, ...]:
    """The measures' options of :func:`bootstrap_pairs` and :func:`bootstrap_pair_labels`
    checked once: ``kinds`` as a tuple (``resamples``, ``alpha`` and ``seed`` are the kernel's,
    :func:`~hanna_stats.kernels.paired_bootstrap`, which checks them at its entry)."""
    check_bool("include_human", include_human)
    return check_kinds(kinds)


def _bootstrap(study, resamples, alpha, seed, include_human, kinds, executor=None):
    """The paired bootstrap of every measure of the criteria cube, memoised per setting when
    ``seed`` is an integer (None or a Generator draws afresh on every call); ``executor`` does
    not change the result, so it is not part of the key."""
    selection = Selection(kinds=kinds, include_human=include_human)
    cube = criteria_cube(study, kinds, include_human)

    def compute():
        return paired_bootstrap(
            cube.values,
            resamples=resamples,
            seed=seed,
            alpha=alpha,
            progress=progress,
            executor=executor,
        )

    seed_as_key = seed_key(seed)
    if seed_as_key is None:
        return cube, compute()
    key = selection.key("paired_bootstrap", resamples, alpha, seed_as_key)
    return cube, study.memo(key, compute)


def _judged(study: Study, measures: list[str]) -> tuple[list[str | None], list[str]]:
    """For each measure: the criterion an LLM judge's measure rates (None for the others), and
    its name across criteria (a judge's: ``"<judge> (prompt <variant>)"``)."""
    catalogue = study.catalogue.filter(pl.col("measure").is_in(measures))
    info = {
        m: (c, j, v)
        for m, kind, c, j, v in catalogue.select(
            "measure", "kind", "criterion", "judge", "variant"
        ).iter_rows()
        if kind == "llm-judge" and c in study.criteria
    }
    rates = [info[m][0] if m in info else None for m in measures]
    identity = [f"{info[m][1] or m} (prompt {info[m][2]})" if m in info else m for m in measures]
    return rates, identity
