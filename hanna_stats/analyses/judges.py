"""LLM judges beside the human raters (Chhun, Suchanek & Clavel, TACL 2024).

- :func:`rater_panel`: how well one human rater agrees with the panel: each rater's ratings of a
  criterion correlated with the mean of all raters (``reference="panel"``, the TACL study's
  "Human" row, where the mean includes the rater) or of the other raters (``"others"``,
  leave-one-out), per rater and averaged over raters.
- :func:`judge_criteria`: the criterion-matched view: each judge's rating of a criterion under
  each prompt variant correlated with the human criterion of the same name, with the human rater
  row beside it and each column's mean |r|.

Both work at story (per input, then averaged), system and global (all items pooled) level, on a
loaded :class:`~hanna_stats.store.Study`.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from hanna_stats.analyses._common import (
    KERNEL_LEVEL,
    LEVELS,
    METHODS,
    VARIANTS,
    check_choice,
    correlation_matrix,
)
from hanna_stats.kernels import level_correlation
from hanna_stats.store import Study

#: Panels a rater is compared with: the mean of all raters, or of the other raters.
REFERENCES = ("panel", "others")
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
    ratings = study.ratings
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


def _check(level: str, method: str, variant: str) -> None:
    check_choice("level", level, LEVELS)
    check_choice("method", method, METHODS)
    check_choice("variant", variant, VARIANTS)


def _rater_statistics(
    study: Study, level: str, method: str, variant: str, reference: str, include_human: bool
) -> tuple[tuple[str, ...], np.ndarray]:
    """(criteria, (R, C) correlations of each rater with the reference panel)."""
    check_choice("reference", reference, REFERENCES)
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
            result = level_correlation(
                own, panel, level=KERNEL_LEVEL[level], method=method, variant=variant
            )
            out[r] = np.diagonal(result.statistic)  # criterion c against the panel's c
        return criteria, out

    return study.memo(key, compute)


def rater_panel(
    study: Study,
    *,
    level: str = "system",
    method: str = "kendall",
    variant: str = "b",
    reference: str = "panel",
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
    level : {"story", "system", "global"}
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
    _check(level, method, variant)
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


def judge_criteria(
    study: Study,
    *,
    level: str = "system",
    method: str = "kendall",
    variant: str = "b",
    reference: str = "panel",
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
    level : {"story", "system", "global"}
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
    _check(level, method, variant)
    judges = study.catalogue.filter(
        (pl.col("kind") == "llm-judge") & pl.col("criterion").is_in(list(study.criteria))
    )
    if judges.is_empty():
        raise ValueError(
            "the store holds no LLM-judge measures of its human criteria: ingest them (HANNA's "
            "hanna_metric_scores_llm.csv)"
        )
    cube, matrix = correlation_matrix(
        study,
        level=level,
        method=method,
        variant=variant,
        include_human=include_human,
        kinds=("llm-judge",),
    )
    position = {m: i for i, m in enumerate(cube.measures)}
    criteria = list(study.criteria)
    rows: list[tuple] = []
    if study.ratings.height:
        options = {"level": level, "method": method, "variant": variant}
        panel = rater_panel(study, **options, reference=reference, include_human=include_human)
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
                matrix.statistic[position[by_criterion[c]], position[c]]
                if c in by_criterion
                else np.nan,
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


def _mean_abs(column: list[tuple]) -> float:
    values = np.abs([r[3] for r in column], dtype=np.float64)
    return float(np.nanmean(values)) if np.isfinite(values).any() else np.nan


def judge_scale(study: Study, *, low: float = 1.0, high: float = 5.0) -> pl.DataFrame:
    """How many of each judge's values leave the rating scale ``[low, high]``.

    The TACL study asked the judges for Likert ratings from 1 to 5; HANNA's
    ``hanna_metric_scores_llm.csv`` holds, per story, the mean over three tries in which an
    answer that could not be parsed counted as -1 (inferred from the values: -1 when all three
    failed, -1/3 = (-1 - 1 + 1) / 3, ...). The store keeps the values as published (the policy
    ``keep``, which the authors' correlations used); this table says how many there are.

    Returns
    -------
    polars.DataFrame
        One row per judge and prompt variant: ``judge, prompt, n_values, below, above, missing``
        (values under ``low``, over ``high``, NaN), over every item and rated criterion (not the
        judges' ``Average`` measures), human-written system included; in catalogue order.
    """
    judges = study.catalogue.filter(
        (pl.col("kind") == "llm-judge") & pl.col("criterion").is_in(list(study.criteria))
    )
    position = {m: i for i, m in enumerate(study.measures)}
    rows = []
    grouped = judges.group_by(["judge", "variant"], maintain_order=True).agg("measure")
    for judge, prompt, measures in grouped.iter_rows():
        values = study.values[[position[m] for m in measures]]
        present = values[~np.isnan(values)]
        rows.append(
            (
                judge,
                prompt,
                int(values.size),
                int((present < low).sum()),
                int((present > high).sum()),
                int(np.isnan(values).sum()),
            )
        )
    names = ("judge", "prompt", "n_values", "below", "above", "missing")
    return pl.DataFrame(
        rows, schema=dict(zip(names, [pl.String] * 2 + [pl.Int64] * 4, strict=True)), orient="row"
    )
