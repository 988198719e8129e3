"""LLM judges beside the human raters (Chhun, Suchanek & Clavel, TACL 2024).

- :func:`rater_panel`: how well one human rater agrees with the panel: each rater's ratings of a
  criterion correlated with the mean of all raters (``reference="panel"``, the TACL study's
  "Human" row, where the mean includes the rater) or of the other raters (``"others"``,
  leave-one-out), per rater and averaged over raters.
- :func:`judge_criteria`: the criterion-matched view: each judge's rating of a criterion under
  each prompt variant correlated with the human criterion of the same name, with the human rater
  row beside it and each column's mean |r|.
- :func:`judge_williams`: Williams tests of each judge against the best automatic metric of the
  criterion it rates, in both directions.
- :func:`judge_scale`: what the ingests found outside the judges' scale, per judge and prompt.

The correlations work at item (per input, then averaged; HANNA's story level), system and global
(all items pooled) level, on a loaded :class:`~hanna_stats.store.Study`. A judge's
self-consistency across tries and its mean rating of each system are
:func:`~hanna_stats.analyses.ratings.agreement` and
:func:`~hanna_stats.analyses.ratings.system_means` with ``kinds=("llm-judge",)``.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from hanna_stats.analyses._common import analysis, criteria_cube
from hanna_stats.analyses.correlations import correlate_checked
from hanna_stats.analyses.significance import adjusted_within, williams_n
from hanna_stats.kernels import level_correlation, williams_test
from hanna_stats.study import Study
from hanna_stats.vocabulary import (
    Correction,
    Level,
    LevelWord,
    Method,
    Reference,
    Variant,
    check,
    check_level,
)

#: The row label of the human raters in :func:`judge_criteria`.
HUMAN_RATER = "Human rater"
#: The criterion label of each column's mean |r| in :func:`judge_criteria`.
MEAN_ABS = "mean |r|"

_SCHEMA = {
    "rater": pl.String,
    "prompt": pl.String,
    "criterion": pl.String,
    "level": pl.String,
    "method": pl.String,
    "statistic": pl.Float64,
}


def _rater_cube(study: Study, include_human: bool) -> tuple[tuple[str, ...], np.ndarray]:
    """The criteria and their ratings as (R raters, C criteria, G inputs, S systems), NaN where
    a rater did not rate; rater ``r`` is the ``r``-th rating of each item (``rater_column``)."""
    ratings = study.ratings.filter(pl.col("kind") == "human").rename({"measure": "criterion"})
    criteria = tuple(c for c in study.criteria if c in set(ratings["criterion"].to_list()))
    if not criteria:
        raise ValueError(
            "the store holds no rater-level ratings of human criteria: ingest them (HANNA's "
            "LLM-judge file or raw annotations; a tidy file with a `rater` column)"
        )
    keep = np.ones(len(study.systems), bool) if include_human else ~study.is_human
    systems = [s for s, k in zip(study.systems, keep, strict=True) if k]
    index = {
        "criterion": {c: i for i, c in enumerate(criteria)},
        "input": {g: i for i, g in enumerate(study.inputs)},
        "system": {s: i for i, s in enumerate(systems)},
    }
    ratings = ratings.filter(pl.col("system").is_in(systems) & pl.col("criterion").is_in(criteria))
    codes = [ratings[c].replace_strict(index[c], return_dtype=pl.Int64).to_numpy() for c in index]
    raters = ratings["rater_column"].to_numpy().astype(np.intp)
    cube = np.full((raters.max() + 1, len(criteria), len(study.inputs), len(systems)), np.nan)
    cube[(raters, *codes)] = ratings["score"].to_numpy()
    return criteria, cube


def _check(level: object, method: object, variant: object, reference: object) -> Level:
    """The canonical ``level``, after checking the four options once."""
    check("method", method)
    check("variant", variant)
    check("reference", reference)
    return check_level(level)  # type: ignore[return-value]


def _rater_statistics(
    study: Study,
    level: Level,
    method: Method,
    variant: Variant,
    reference: Reference,
    include_human: bool,
) -> tuple[tuple[str, ...], np.ndarray]:
    """(criteria, (R, C) correlations of each rater with the reference panel)."""
    key = ("rater_panel", level, method, variant, reference, include_human)

    def compute():
        criteria, cube = _rater_cube(study, include_human)
        counts = np.sum(~np.isnan(cube), axis=0)
        totals = np.nansum(cube, axis=0)
        out = np.full(cube.shape[:2], np.nan)
        for r, own in enumerate(cube):
            with np.errstate(invalid="ignore", divide="ignore"):
                if reference == "panel":
                    panel = np.where(counts > 0, totals / counts, np.nan)
                else:
                    rated = ~np.isnan(own)
                    rest = counts - rated
                    panel = np.where(rest > 0, (totals - np.nan_to_num(own)) / rest, np.nan)
            result = level_correlation(own, panel, level=level, method=method, variant=variant)
            out[r] = np.diagonal(result.statistic)  # criterion c against the panel's c
        return criteria, out

    return study.memo(key, compute)


@analysis
def rater_panel(
    study: Study,
    *,
    level: LevelWord = "item",
    method: Method = "kendall",
    variant: Variant = "b",
    reference: Reference = "panel",
    include_human: bool = False,
) -> pl.DataFrame:
    """Each human rater's agreement with the panel, per criterion, and its mean over raters.

    For rater ``k`` (the ``k``-th rating of each item) and criterion ``c``, the correlation at
    ``level`` between ``k``'s ratings and the panel's: the mean of all ratings of the item
    (``reference="panel"``, which includes ``k``'s own: the reference row of Chhun et al. 2024)
    or of the others (``"others"``, leave-one-out: ``(sum - x_k) / (n - 1)``). Items ``k`` did
    not rate are left out pairwise. ``rater = "mean"`` rows average the raters' correlations.

    Parameters
    ----------
    study : Study
        A study with rater-level ratings of its criteria.
    level : {"item", "system", "global"}
        ``"story"``, ``"summary"`` or ``"segment"`` give ``"item"``.
        Per input then averaged; over the per-system means; all items pooled.
    method : {"pearson", "spearman", "kendall"}
    variant : {"a", "b", "c"}
        Kendall's variant.
    reference : {"panel", "others"}
    include_human : bool
        Keep the human-written system (HANNA: ``Human``; the TACL study leaves it out).

    Returns
    -------
    polars.DataFrame
        ``rater`` ("1", "2", ... or "mean"), ``criterion``, ``level``, ``method``,
        ``reference``, ``statistic``; by criterion (catalogue order), then rater.

    Raises
    ------
    ValueError
        For a bad option, or a study without rater-level ratings.

    References
    ----------
    C. Chhun, F. M. Suchanek, C. Clavel. Do Language Models Enjoy Their Own Stories? Prompting
    Large Language Models for Automatic Story Evaluation. TACL 12, 2024 (Sec. 4, Fig. 2).
    """
    level = _check(level, method, variant, reference)
    return _rater_panel(study, level, method, variant, reference, include_human)


def _rater_panel(
    study: Study,
    level: Level,
    method: Method,
    variant: Variant,
    reference: Reference,
    include_human: bool,
) -> pl.DataFrame:
    """:func:`rater_panel` on checked options."""
    criteria, stats = _rater_statistics(study, level, method, variant, reference, include_human)
    raters = [str(r + 1) for r in range(stats.shape[0])]
    with np.errstate(invalid="ignore"):
        mean = np.nanmean(stats, axis=0)
    rows = [
        (rater, criterion, value)
        for c, criterion in enumerate(criteria)
        for rater, value in [*zip(raters, stats[:, c], strict=True), ("mean", mean[c])]
    ]
    return pl.DataFrame(
        {
            "rater": [r[0] for r in rows],
            "criterion": [r[1] for r in rows],
            "level": level,
            "method": method,
            "reference": reference,
            "statistic": [float(r[2]) for r in rows],
        },
    ).with_columns(pl.col("statistic").cast(pl.Float64))


@analysis
def judge_criteria(
    study: Study,
    *,
    level: LevelWord = "item",
    method: Method = "kendall",
    variant: Variant = "b",
    reference: Reference = "panel",
    include_human: bool = False,
) -> pl.DataFrame:
    """The criterion-matched view of the LLM judges (Chhun et al. 2024, Figs. 2-3).

    For every LLM-judge measure that rates a human criterion (catalogue ``criterion``), the
    correlation at ``level`` of the judge's values with that criterion's values (the mean of its
    raters); beside them, when the study has rater-level ratings, the human rater row
    (:func:`rater_panel`, averaged over raters) and,
    for each judge x prompt column and the human rater row, ``criterion = "mean |r|"``: the mean
    of the column's absolute correlations over the criteria (the TACL study's "Avg" row). Missing
    values are left out pairwise (``nan_policy="omit"``).

    Parameters
    ----------
    study : Study
    level : {"item", "system", "global"}
        ``"story"``, ``"summary"`` or ``"segment"`` give ``"item"``.
    method : {"pearson", "spearman", "kendall"}
    variant : {"a", "b", "c"}
    reference : {"panel", "others"}
        Panel of the human rater row (see :func:`rater_panel`).
    include_human : bool
        Keep the human-written system (the TACL study leaves it out).

    Returns
    -------
    polars.DataFrame
        ``rater`` (the judge, or ``"Human rater"``), ``prompt`` (the judge's prompt variant;
        null for the human row), ``criterion``, ``level``, ``method``, ``statistic``; the human
        rater first, then the judges in catalogue order, prompts in order, criteria in catalogue
        order with the mean |r| last.

    Raises
    ------
    ValueError
        For a bad option, or a study without LLM-judge measures of its criteria.
    """
    level = _check(level, method, variant, reference)
    judges = study.catalogue.filter(
        (pl.col("kind") == "llm-judge") & pl.col("criterion").is_in(list(study.criteria))
    )
    if judges.is_empty():
        raise ValueError(
            "the store holds no LLM-judge measures of its human criteria: ingest them (HANNA's "
            "hanna_metric_scores_llm.csv)"
        )
    matched = _matched(study, level, method, variant, include_human)
    criteria = list(study.criteria)
    rows: list[tuple] = []
    if study.ratings.filter(pl.col("kind") == "human").height:
        panel = _rater_panel(study, level, method, variant, reference, include_human)
        means = panel.filter(pl.col("rater") == "mean").select("criterion", "statistic")
        human_values = dict(means.iter_rows())
        column = [(HUMAN_RATER, None, c, human_values.get(c, np.nan)) for c in criteria]
        rows += [*column, (HUMAN_RATER, None, MEAN_ABS, _mean_abs(column))]
    grouped = judges.group_by(["judge", "variant"], maintain_order=True).agg("measure", "criterion")
    for judge, prompt, measures, rated in grouped.iter_rows():
        by_criterion = dict(zip(rated, measures, strict=True))
        column = [
            (
                judge,
                prompt,
                c,
                matched.get(by_criterion.get(c), np.nan),
            )
            for c in criteria
        ]
        rows += [*column, (judge, prompt, MEAN_ABS, _mean_abs(column))]
    return pl.DataFrame(
        {
            "rater": [r[0] for r in rows],
            "prompt": [r[1] for r in rows],
            "criterion": [r[2] for r in rows],
            "level": level,
            "method": method,
            "statistic": [float(r[3]) for r in rows],
        },
        schema=_SCHEMA,
    )


def _matched(
    study: Study, level: Level, method: Method, variant: Variant, include_human: bool
) -> dict[str, float]:
    """Each LLM-judge measure's correlation at ``level`` with the criterion it rates, memoised
    (the judge x criterion block only, not the whole matrix of judges and criteria)."""
    variant = variant if method == "kendall" else "b"  # the others have no variant
    key = ("judge_matched", level, method, variant, include_human)

    def compute() -> dict[str, float]:
        cube = criteria_cube(study, ("llm-judge",), include_human)
        position = {m: i for i, m in enumerate(cube.measures)}
        rated = study.catalogue.filter(
            (pl.col("kind") == "llm-judge") & pl.col("measure").is_in(list(position))
        ).select("measure", "criterion")
        judges, criteria = (rated[c].to_list() for c in ("measure", "criterion"))
        columns = list(dict.fromkeys(c for c in criteria if c in position))
        if not columns:
            return {}
        result = level_correlation(
            cube.values[[position[m] for m in judges]],
            cube.values[[position[c] for c in columns]],
            level=level,
            method=method,
            variant=variant,
        )
        column = {c: k for k, c in enumerate(columns)}
        return {
            m: float(result.statistic[j, column[c]]) if c in column else np.nan
            for j, (m, c) in enumerate(zip(judges, criteria, strict=True))
        }

    return study.memo(key, compute)


def _mean_abs(column: list[tuple]) -> float:
    values = np.abs([r[3] for r in column], dtype=np.float64)
    return float(np.nanmean(values)) if np.isfinite(values).any() else np.nan


@analysis
def judge_scale(study: Study) -> pl.DataFrame:
    """What the ingests found outside the judges' scale, per judge and prompt variant.

    Every ingest checks each value of a measure that declares a scale and applies the scale
    policy to the values outside it, counting them (:mod:`hanna_stats.store.scales`; table
    ``scale_checks``); this sums the counts of each judge's measures of the human criteria (not
    its ``Average`` measures). The TACL study asked the judges for Likert ratings from 1 to 5;
    HANNA's ``hanna_metric_scores_llm.csv`` holds, per story, the mean over three tries in which
    an answer that could not be parsed counted as -1 (inferred from the values: -1 when all three
    failed, -1/3 = (-1 - 1 + 1) / 3, ...). Its policy is ``keep``: the values stay as
    published, as the authors' correlations used them.

    Returns
    -------
    polars.DataFrame
        One row per judge and prompt variant with checked measures: ``judge, prompt, policy,
        n_values`` (values checked, missing ones included), ``below, above`` (outside the
        bounds), ``not_whole`` (rater-level values that are not whole numbers on a Likert or
        integer scale), ``unparsed`` (tries whose answer held no number), ``missing`` (item-level
        values now missing in the study); in catalogue order.
    """
    checks = study.scale_checks.filter(
        (pl.col("kind") == "llm-judge") & pl.col("criterion").is_in(list(study.criteria))
    )
    position = {m: i for i, m in enumerate(study.measures)}
    missing = pl.Series(
        "missing",
        [int(np.isnan(study.values[position[m]]).sum()) for m in checks["measure"]],
        dtype=pl.Int64,
    )
    counts = {
        "n_values": "n_values",
        "below": "n_below",
        "above": "n_above",
        "not_whole": "n_not_whole",
        "unparsed": "n_unparsed",
    }
    return (
        checks.with_columns(missing)
        .group_by(pl.col("judge"), pl.col("variant").alias("prompt"), maintain_order=True)
        .agg(
            pl.col("policy").unique(maintain_order=True).sort().str.join(", "),
            *(pl.col(c).sum().alias(name) for name, c in counts.items()),
            pl.col("missing").sum(),
        )
        .cast({c: pl.Int64 for c in (*counts, "missing")})
    )


#: Columns of :func:`judge_williams`.
_JUDGE_WILLIAMS_SCHEMA = {
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
    level = check_level(level)
    check("method", method)
    if correction is not None:
        check("correction", correction)
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
    # The best metric of each criterion, and every metric's correlation with every criterion.
    metric_r: dict[tuple[str, str], float] = {}
    best: dict[str, tuple[str, float]] = {}
    options = {"level": level, "method": method, "include_human": include_human}
    for measure, against, value in (
        correlate_checked(study, **options, kinds=("metric",))
        .select("measure", "against", "statistic")
        .iter_rows()
    ):
        metric_r[measure, against] = value
        if np.isfinite(value) and (against not in best or abs(value) > best[against][1]):
            best[against] = (measure, abs(value))
    if not best:
        return pl.DataFrame(schema=_JUDGE_WILLIAMS_SCHEMA)
    # Each judge measure against its criterion: the correlations judge_criteria uses.
    matched = _matched(study, level, method, "b", include_human)
    names, rated, judge_names, prompts = (judges[c].to_list() for c in judges.columns)
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
    row_of = np.array([criteria.index(c) for c in rated])
    judged = np.arange(len(names))
    identity = [
        f"{j or m} (prompt {v})" for m, j, v in zip(names, judge_names, prompts, strict=True)
    ]
    families = pl.Series(identity).rank("dense").to_numpy()
    frames = []
    for k, metric in enumerate(metrics):
        # Measures: the metric (0), then every judge measure; r has one row per criterion.
        r = np.full((len(criteria), 1 + len(names)), np.nan)
        r[:, 0] = [metric_r.get((metric, c), np.nan) for c in criteria]
        r[row_of, 1 + judged] = r_judge
        R = np.full((1 + len(names),) * 2, np.nan)
        np.fill_diagonal(R, 1.0)
        R[0, 1:] = R[1:, 0] = r_ab[k]
        res = williams_test(r, R, n_level, alternative="greater")
        p_judge = res.pvalue[row_of, 1 + judged, 0]
        p_metric = res.pvalue[row_of, 0, 1 + judged]
        adjusted = {
            column: adjusted_within(p, families, correction)
            if correction is not None
            else np.full(len(names), np.nan)
            for column, p in (
                ("pvalue_judge_adjusted", p_judge),
                ("pvalue_metric_adjusted", p_metric),
            )
        }
        keep = np.array([best.get(c, ("",))[0] == metric for c in rated])
        frames.append(
            pl.DataFrame(
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
                    "r_ab": r_ab[k],
                    "n": n_level,
                    "statistic": res.statistic[row_of, 1 + judged, 0],
                    "pvalue_judge": p_judge,
                    "pvalue_judge_adjusted": adjusted["pvalue_judge_adjusted"],
                    "pvalue_metric": p_metric,
                    "pvalue_metric_adjusted": adjusted["pvalue_metric_adjusted"],
                    "_order": np.arange(len(names)),
                },
                schema={**_JUDGE_WILLIAMS_SCHEMA, "_order": pl.Int64},
            ).filter(pl.Series(keep))
        )
    order = {c: i for i, c in enumerate(criteria)}
    return (
        pl.concat(frames)
        .sort(pl.col("criterion").replace_strict(order, return_dtype=pl.Int64), "_order")
        .drop("_order")
    )
