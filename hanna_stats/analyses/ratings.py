"""Inter-annotator agreement (the paper's Sec. 4.1, Tab. 3) and system means (Sec. 4.3, Tab. 4).

Both read the rater-level values of a loaded Study (:attr:`Study.ratings`), or, for the system
means of a measure without them, its item-level values (:attr:`Study.values`). Any measure kind
with raters can be analysed: the human criteria (the default), and an LLM judge whose repeated
tries are its raters (agreement across tries is the judge's self-consistency), so judges and
people appear side by side in one table.

Which ratings are used: for each item and criterion, the ratings of identified raters (kind
``'person'``, HANNA: MTurk Worker IDs from the raw annotation file) when it has any, otherwise
those of judge slots (kind ``'slot'``, HANNA: ``Human 1..3 XX`` of
``hanna_metric_scores_llm.csv``). This is the rule of view ``story_scores``, so no rating is
counted twice and the means agree with the story-level values.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy import special

from hanna_stats.analyses._common import analysis
from hanna_stats.analyses.overview import measure_values
from hanna_stats.kernels.agreement import (
    ICC_FORMS,
    check_confidence,
    intraclass_corr,
    krippendorff_alpha,
)
from hanna_stats.study import Study
from hanna_stats.vocabulary import WORDS, RatedKind, check_kinds, did_you_mean

AGREEMENT_SCHEMA = {
    "measure": pl.String,
    "kind": pl.String,
    "criterion": pl.String,
    "statistic_name": pl.String,
    "statistic": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "f": pl.Float64,
    "df1": pl.Int64,
    "df2": pl.Int64,
    "pvalue": pl.Float64,
    "n_targets": pl.Int64,
    "n_raters": pl.Int64,
    "n_dropped": pl.Int64,
    "rater_source": pl.String,
}
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
_ALPHA_LEVELS = ("interval", "ordinal")


def chosen_measures(
    study: Study, measures: list[str] | None, kinds: tuple[RatedKind, ...]
) -> list[str]:
    """Measures by name, or human criteria by abbreviation (default: every measure of
    ``kinds``, in catalogue order)."""
    kinds = check_kinds(kinds, WORDS["rated_kinds"])
    if measures is None:
        return [m for m, k in zip(study.measures, study.kinds, strict=True) if k in kinds]
    if isinstance(measures, str):
        raise ValueError(f"measures must be a list of names, not a string: {measures!r}")
    human = study.catalogue.filter(pl.col("kind") == "human")
    lookup = dict(zip(study.measures, study.measures, strict=True)) | {
        a: m for m, a in human.select("measure", "abbreviation").iter_rows() if a
    }
    unknown = [m for m in measures if m not in lookup]
    if unknown:
        criteria = ", ".join(
            f"{m} ({a})" if a else m for m, a in human.select("measure", "abbreviation").iter_rows()
        )
        raise ValueError(
            f"measures holds unknown measures {unknown}{did_you_mean(unknown[0], lookup)}; give "
            "measure names or the "
            f"abbreviations of the human criteria ({criteria or 'none'})"
        )
    chosen = [lookup[m] for m in measures]
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"measures lists a measure twice: {list(measures)}")
    return chosen


def ratings_of(study: Study, measures: list[str], include_human: bool) -> pl.DataFrame:
    ratings = study.ratings.filter(pl.col("measure").is_in(measures))
    return ratings if include_human else ratings.filter(~pl.col("is_human"))


def described(study: Study, frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the ``kind`` and ``criterion`` of its ``measure`` (a human criterion is
    its own criterion; an LLM judge's, the one it rates)."""
    catalogue = study.catalogue.select(
        "measure",
        "kind",
        pl.when(pl.col("kind") == "human")
        .then(pl.col("measure"))
        .otherwise(pl.col("criterion"))
        .alias("criterion"),
    )
    return frame.drop("kind", "criterion", strict=False).join(
        catalogue, on="measure", how="left", maintain_order="left"
    )


def rater_source(kinds: pl.Series) -> str:
    distinct = kinds.unique().to_list()
    return distinct[0] if len(distinct) == 1 else "mixed"


def _measure_agreement(frame: pl.DataFrame, confidence: float) -> list[dict]:
    """ICC rows (balanced items) and alpha rows (all items) for one measure."""
    item = frame["item_id"].to_numpy()
    column = frame["rater_column"].to_numpy().astype(np.intp)
    score = frame["score"].to_numpy()
    starts = np.flatnonzero(np.r_[True, item[1:] != item[:-1]])
    counts = np.diff(np.r_[starts, item.size])
    source = rater_source(frame["rater_kind"])
    # k: the most common number of ratings per item (ties: the larger).
    values, freq = np.unique(counts, return_counts=True)
    k = int(values[freq == freq.max()].max())
    unit = np.repeat(np.arange(starts.size), counts)
    wide = np.full((starts.size, int(counts.max())), np.nan)
    wide[unit, column] = score
    complete = counts == k
    base = {"rater_source": source, "n_dropped": int((~complete).sum())}
    rows = []
    if complete.sum() >= 2 and k >= 2:
        res = intraclass_corr(wide[complete, :k], confidence=confidence)
        for j, name in enumerate(res.forms):
            rows.append(
                base
                | {
                    "statistic_name": name,
                    "statistic": res.statistic[j],
                    "ci_low": res.ci_low[j],
                    "ci_high": res.ci_high[j],
                    "f": res.f[j],
                    "df1": int(res.df1[j]),
                    "df2": int(res.df2[j]),
                    "pvalue": res.pvalue[j],
                    "n_targets": res.n_targets,
                    "n_raters": res.n_raters,
                }
            )
    else:
        rows += [
            base | {"statistic_name": name, "n_targets": int(complete.sum()), "n_raters": k}
            for name in ICC_FORMS
        ]
    for level in _ALPHA_LEVELS:
        res = krippendorff_alpha(wide, level_of_measurement=level)
        rows.append(
            base
            | {
                "statistic_name": f"alpha_{level}",
                "statistic": res.statistic,
                "n_targets": res.n_units,
                "n_raters": int(counts.max()),
                "n_dropped": int((counts < 2).sum()),
            }
        )
    return rows


@analysis
def agreement(
    study: Study,
    *,
    measures: list[str] | None = None,
    kinds: tuple[RatedKind, ...] = ("human",),
    confidence: float = 0.95,
    include_human: bool = True,
) -> pl.DataFrame:
    """Inter-rater agreement per measure: six ICC forms and Krippendorff's alpha.

    By default the human criteria, rated by people. With ``kinds=("llm-judge",)`` (or judge
    measures by name) it is an LLM judge's self-consistency: its repeated tries of an item are
    its raters (a tidy file with a ``rater`` column per try; HANNA's public file has none).

    The paper (Sec. 4.1, Tab. 3) reports ICC2k, the two-way random-effects, absolute-agreement
    ICC of the mean of k raters ("average random raters", Hallgren 2012): every HANNA story
    was rated by 3 MTurk workers drawn from a pool, and the story's score is the mean of the
    three, so the reliability of that mean, with rater bias counted as error, is what matters.

    Design. For each item, its k ratings are laid out in k columns ("raters"): judge slots by
    slot number (``HANNA judge slot 1`` -> column 1, ...); identified raters (kind ``'person'``)
    in ascending ``rater_id``, i.e. in the order in which the store first saw each worker (the
    worker's first row in the ingested annotation file), not the order of the item's own rows,
    which the store does not keep. Columns are therefore positions, not identities: HANNA's
    3 ratings per story come from many different workers. ICC1 and ICC1k, and Krippendorff's
    alpha, do not depend on this layout (they only use which ratings share an item); ICC2/3
    and their k forms do, through the between-column mean square.

    k is the most common number of ratings per item (ties: the larger). ICC needs a complete
    matrix: items with another number of ratings are dropped and counted in ``n_dropped``.
    Alpha keeps every item; items with a single rating are not pairable and are counted in
    its ``n_dropped``.

    Parameters
    ----------
    study : Study
        A loaded study.
    measures : list of str, optional
        Measures by name (``"Relevance"``, ``"Beluga-13B Empathy (prompt 1)"``) or human
        criteria by abbreviation (``"RE"``); default: every measure of ``kinds`` (those without
        rater-level values give no rows).
    kinds : tuple of str
        Kinds of the default measures: ``"human"`` (default), ``"llm-judge"``, ``"metric"``.
    confidence : float
        Level of the ICC confidence intervals (F-based, as ``pingouin.intraclass_corr``).
    include_human : bool
        Keep the human-written stories (system flagged ``is_human``); the paper's agreement
        covers all 1,056 stories.

    Returns
    -------
    polars.DataFrame
        One row per measure and statistic (``ICC1``, ``ICC2``, ``ICC3``, ``ICC1k``,
        ``ICC2k``, ``ICC3k``, ``alpha_interval``, ``alpha_ordinal``), columns ``measure, kind,
        criterion`` (a human criterion's own name; the criterion a judge rates), ``statistic_name,
        statistic, ci_low, ci_high, f, df1, df2, pvalue, n_targets, n_raters,
        n_dropped, rater_source``. For ICC: F test of ICC = 0 with its dof and p-value,
        ``n_targets`` complete items, ``n_raters`` = k. For alpha: no interval or test
        (null), ``n_targets`` pairable items, ``n_raters`` the largest number of ratings of an
        item. ``rater_source`` is ``'person'`` or ``'slot'`` (``'mixed'`` if the criterion's
        items differ). An empty frame with these columns when the store holds no rater-level
        ratings (e.g. only ``hanna_metric_scores.csv``).

    Raises
    ------
    ValueError
        Unknown ``measures`` or ``kinds``, ``confidence`` outside (0, 1).

    Notes
    -----
    On the public HANNA data (judge slots of ``hanna_metric_scores_llm.csv``, all 1,056
    stories) ICC2k is RE 0.325 [0.25, 0.39], CH -0.179 [-0.31, -0.06], EM 0.282 [0.20, 0.35],
    SU 0.139 [0.05, 0.23], EG 0.397 [0.33, 0.46], CX 0.536 [0.49, 0.58], not the paper's
    Tab. 3 (RE 0.48 [0.18, 0.65], CH 0.29 [0.10, 0.48], EM 0.34 [0.25, 0.41],
    SU 0.28 [0.16, 0.37], EG 0.46 [0.34, 0.55], CX 0.56 [0.48, 0.63]); without the Human
    stories it is lower still (RE 0.073, CH -0.724). The layout-free ICC1k is almost the same
    (RE 0.32, CH -0.18), so no ordering of the slots can reach the paper's values, and the
    paper's wide intervals (RE, CH) imply a large between-rater mean square, i.e. columns that
    were real workers: Tab. 3 was most likely computed on the raw annotation file with Worker
    IDs as raters (the paper notes that 3 workers did 78% of the ratings), which is not public.

    References
    ----------
    Shrout & Fleiss (1979); McGraw & Wong (1996); Krippendorff (2011); Hallgren, K. A. (2012),
    Computing inter-rater reliability for observational data, Tutorials in Quantitative
    Methods for Psychology 8(1), 23-34.
    """
    confidence = check_confidence(confidence)
    chosen = chosen_measures(study, measures, kinds)
    ratings = ratings_of(study, chosen, include_human)
    rows = []
    for measure in chosen:
        frame = ratings.filter(pl.col("measure") == measure)
        if frame.height:
            rows += [r | {"measure": measure} for r in _measure_agreement(frame, confidence)]
    out = pl.DataFrame(rows, schema={c: AGREEMENT_SCHEMA[c] for c in AGREEMENT_SCHEMA})
    return described(study, out).select(list(AGREEMENT_SCHEMA))


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
