"""What a study holds: counts, the measure catalogue by family, where the data came from, the
item-level values of measures and criteria, each system's mean rating (the paper's Sec. 4.3,
Tab. 4) and what the ingests found outside the LLM judges' scale."""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy import special

from hanna_stats.analyses._common import analysis
from hanna_stats.analyses.agreements import chosen_measures, described, ratings_of
from hanna_stats.kernels import check_confidence
from hanna_stats.study import Study
from hanna_stats.vocabulary import WORDS, RatedKind, check_bool, check_kinds

SYSTEM_MEANS_SCHEMA = {
    "system": pl.String,
    "measure": pl.String,
    "kind": pl.String,
    "criterion": pl.String,
    "mean": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "half_width": pl.Float64,
    "n": pl.Int64,
    "unit": pl.String,
}
AVERAGE = "Average"


@analysis
def study_counts(study: Study) -> pl.DataFrame:
    """Counts of systems, inputs, items, raters, ratings, measures by kind and item-level
    scores, and of the system- and domain-level scores the study gives (WMT's ``.sys.score`` and
    ``.domain.score`` lines, kept aside from the items): what the store holds, whatever subset of
    it ``study`` is.

    Returns
    -------
    polars.DataFrame
        Columns ``what, n``, in a fixed order.
    """
    return study.counts


@analysis
def measure_families(study: Study) -> pl.DataFrame:
    """The measure catalogue grouped by kind, family and reference use, with the paper's symbol.

    Returns
    -------
    polars.DataFrame
        Columns ``kind, family, reference, symbol, n_measures, measures`` (names, in catalogue
        order, joined by ``", "``); empty strings where an attribute does not apply (human
        criteria, LLM judges, measures of a generic tidy ingest).
    """
    return study.families


@analysis
def data_sources(study: Study) -> pl.DataFrame:
    """The ingested files (provenance table ``ingests``), without the ingest time.

    Returns
    -------
    polars.DataFrame
        Columns ``file`` (base name), ``format``, ``sha256``, ``n_values``.
    """
    return study.sources


@analysis
def measure_values(
    study: Study, measures: list[str], *, include_human: bool = True
) -> pl.DataFrame:
    """Item-level values of some measures, long: columns ``system, measure, input, value``.

    Systems, then measures in the given order, then inputs in store order; items without a value
    are left out. A measure with raters has the mean of its raters (view ``item_scores``).
    """
    position = {m: i for i, m in enumerate(study.measures)}
    chosen = np.array([position[m] for m in measures], dtype=np.intp)
    systems = np.flatnonzero(
        np.ones(len(study.systems), bool) if include_human else ~study.is_human
    )
    # (systems, measures, inputs) in that nesting order.
    block = study.values[np.ix_(chosen, np.arange(len(study.inputs)), systems)].transpose(2, 0, 1)
    s, c, g = np.nonzero(~np.isnan(block))
    return pl.DataFrame(
        {
            "system": np.asarray(study.systems, dtype=object)[systems[s]].tolist(),
            "measure": np.asarray(study.measures, dtype=object)[chosen[c]].tolist(),
            "input": np.asarray(study.inputs, dtype=object)[g].tolist(),
            "value": block[s, c, g],
        },
        schema={
            "system": pl.String,
            "measure": pl.String,
            "input": pl.String,
            "value": pl.Float64,
        },
    )


@analysis
def criterion_values(study: Study, *, include_human: bool = True) -> pl.DataFrame:
    """Item-level values of every human criterion (the rating distributions of Fig. 9).

    An item's value is the mean of its raters' ratings when the store has them, else the
    stored average (view ``item_scores``).

    Returns
    -------
    polars.DataFrame
        Columns ``system, criterion, input, value, scale_min, scale_max`` (the bounds of the
        criterion's declared scale, null where it declares none), systems, criteria and inputs
        in store order; items without a value are left out.
    """
    values = measure_values(study, list(study.criteria), include_human=include_human)
    bounds = study.catalogue.select(pl.col("measure").alias("criterion"), "scale_min", "scale_max")
    return values.rename({"measure": "criterion"}).join(
        bounds, on="criterion", how="left", maintain_order="left"
    )


def _t_intervals(frame: pl.DataFrame, confidence: float) -> pl.DataFrame:
    """Add ci_low, ci_high, half_width (Student t, n - 1 dof) to mean, std, n columns."""
    n = frame["n"].to_numpy().astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        q = special.stdtrit(n - 1, 0.5 + confidence / 2)
        half = q * frame["std"].to_numpy() / np.sqrt(n)
    half = np.where(n >= 2, half, np.nan)
    mean = frame["mean"].to_numpy()
    return frame.with_columns(
        ci_low=pl.Series(mean - half), ci_high=pl.Series(mean + half), half_width=pl.Series(half)
    )


#: How a declared scale is named (catalogue column ``scale``).
_SCALE_WORDS = {"likert": "Likert", "integer": "integer", "continuous": "continuous"}


def shared_scale(study: Study, measures: list[str]) -> str | None:
    """The one declared scale that every measure of ``measures`` has, in words (``"1-5
    Likert"``), or None: when one of them declares no bounds (catalogue ``scale_min``,
    ``scale_max``), their scales differ, or ``measures`` is empty. A mean over such measures
    would average numbers of different units (WMT: MQM, raw DA and z-scores)."""
    declared = (
        study.catalogue.filter(pl.col("measure").is_in(measures))
        .select(pl.col("scale").fill_null("likert"), "scale_min", "scale_max")
        .unique()
    )
    if declared.height != 1 or declared.null_count().sum_horizontal().item():
        return None
    scale, low, high = declared.row(0)
    return f"{low:g}-{high:g} {_SCALE_WORDS.get(scale, scale)}"


@analysis
def system_means(
    study: Study,
    *,
    measures: list[str] | None = None,
    kinds: tuple[RatedKind, ...] = ("human",),
    confidence: float = 0.95,
    include_human: bool = True,
) -> pl.DataFrame:
    """Mean rating of each system per measure, with a Student-t confidence interval.

    By default the human criteria (the paper's Tab. 4); with ``kinds=("llm-judge",)`` an LLM
    judge's mean rating of each system (over its tries when the store has them, else over its
    item-level values).

    The paper's Tab. 4. For a measure with rater-level values in the store (``unit =
    'rating'``), the interval is ``mean +- t_{(1+c)/2, n-1} s / sqrt(n)`` over the system's
    individual ratings (HANNA: 96 stories x 3 ratings, n = 288); without them
    (``unit = 'item'``, e.g. a store of ``hanna_metric_scores.csv`` only) over the item-level
    values (HANNA: the 96 stories' averages). The ``Average`` row, when the chosen human
    criteria share one declared scale (:func:`shared_scale`), pools every observation of them
    of the system (HANNA: n = 6 x 288 = 1,728 ratings) into one mean and one t-interval; its
    mean is the mean of the criterion means whenever all criteria have the same n. Its measure
    names the scale (``Average (1-5 Likert)``), its criterion is ``Average``. Criteria on
    different or undeclared scales (WMT: MQM, raw DA, z-scores) get no ``Average``.

    On the public data, the judge-slot ratings reproduce all 77 printed means and all 77
    printed half-widths of Tab. 4 to 2 decimals, ``Average`` included (a normal-quantile
    interval misses 3 of them, a per-rating or per-story average of the six criteria misses
    the ``Average`` column). These intervals treat the ratings as independent, although the 3
    ratings of a story, and the 6 criteria of one rating, are correlated: they are narrower
    than a story-level interval would be, ``Average`` most of all.

    Parameters
    ----------
    study : Study
        A loaded study.
    measures : list of str, optional
        Measures by name or human criteria by abbreviation; default: every measure of ``kinds``.
    kinds : tuple of str
        Kinds of the default measures: ``"human"`` (default), ``"llm-judge"``, ``"metric"``.
    confidence : float
        Confidence level.
    include_human : bool
        Keep the human-written stories' row (the paper's Tab. 4 shows it).

    Returns
    -------
    polars.DataFrame
        Columns ``system, measure, kind, criterion`` (as in :func:`agreement`; ``Average`` for
        the pooled row, when there is one), ``mean, ci_low, ci_high, half_width, n, unit``,
        systems in store order (position), measures in catalogue order then ``Average``.
        Ratings are selected as in :func:`agreement` (identified raters before judge slots, per
        item).

    Raises
    ------
    ValueError
        ``confidence`` outside (0, 1), unknown ``measures`` or ``kinds``, or no measure chosen
        (e.g. no human criteria in the store).
    """
    confidence = check_confidence(confidence)
    kinds = check_kinds(kinds, WORDS["rated_kinds"])
    check_bool("include_human", include_human)
    chosen = chosen_measures(study, measures, kinds)
    if not chosen:
        raise ValueError(
            f"the store holds no measures of kinds {list(kinds)}: for human criteria, ingest "
            "human judgements (in a tidy file, kind 'human' in a `kind` column, or rater-level "
            "rows with a `rater` column)"
        )
    ratings = ratings_of(study, chosen, include_human)
    rated = set(ratings["measure"].unique().to_list())
    values = pl.concat(
        [
            ratings.select("system", "measure", value="score").with_columns(unit=pl.lit("rating")),
            measure_values(
                study, [m for m in chosen if m not in rated], include_human=include_human
            )
            .select("system", "measure", "value")
            .with_columns(unit=pl.lit("item")),
        ]
    )
    summary = [
        pl.col("value").mean().alias("mean"),
        pl.col("value").std().alias("std"),
        pl.len().cast(pl.Int64).alias("n"),
        pl.col("unit").unique().sort().str.join("+"),
    ]
    per_measure = values.group_by("system", "measure").agg(summary)
    human = [m for m in chosen if m in study.criteria]
    scale = shared_scale(study, human)
    average_name = f"{AVERAGE} ({scale})"
    average = (
        values.filter(pl.col("measure").is_in(human) & (scale is not None))
        .group_by("system")
        .agg(summary)
        .with_columns(measure=pl.lit(average_name))
    )
    order = {s: j for j, s in enumerate(study.systems)}
    rank = {c: j for j, c in enumerate([*chosen, average_name])}
    out = (
        pl.concat([per_measure, average.select(per_measure.columns)])
        .with_columns(
            _s=pl.col("system").replace_strict(order, return_dtype=pl.Int64),
            _c=pl.col("measure").replace_strict(rank, return_dtype=pl.Int64),
        )
        .sort("_s", "_c")
    )
    pooled = pl.col("measure") == average_name
    out = described(study, _t_intervals(out, confidence)).with_columns(
        kind=pl.when(pooled).then(pl.lit("human")).otherwise("kind"),
        criterion=pl.when(pooled).then(pl.lit(AVERAGE)).otherwise("criterion"),
    )
    return out.select([pl.col(c).cast(t) for c, t in SYSTEM_MEANS_SCHEMA.items()])


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
