"""What a study holds: counts, the measure catalogue by family, where the data came from, and
the item-level ratings of the human criteria."""

from __future__ import annotations

import numpy as np
import polars as pl

from hanna_stats.analyses._common import analysis
from hanna_stats.study import Study


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
    are left out. A measure with raters has the mean of its raters (view ``story_scores``).
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
    stored average (view ``story_scores``).

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
