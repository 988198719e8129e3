"""Write computed metric scores into the store, with their catalogue attributes.

Scores of :mod:`scoring` become a :class:`~hanna_stats.store.batch.Batch` (systems, inputs,
items with their texts, measures of kind ``metric``, scores) written by
:func:`~hanna_stats.store.batch.write_batch` in one transaction. Measures already in the store
(e.g. from the HANNA metric files) keep their catalogue rows, so recomputed HANNA metrics land
on the same measures and items and can be analysed next to the published ones.
"""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb
import polars as pl

from hanna_stats.store import batch as b
from hanna_stats.store.catalogue import HUMAN_SYSTEM, METRIC
from hanna_stats.store.source import Source

#: Columns of the ``items`` frame :func:`write_scores` expects.
ITEM_COLUMNS = ("item", "input", "system", "prompt", "reference", "story", "row")


def scored_pairs(con: duckdb.DuckDBPyConnection, measures: list[str]) -> pl.DataFrame:
    """(item, measure) pairs of ``measures`` that already hold a non-null value in the store."""
    rows = con.execute(
        """
        SELECT it.name AS item, m.name AS measure
        FROM scores s JOIN items it USING (item_id) JOIN measures m USING (measure_id)
        WHERE s.value IS NOT NULL AND list_contains($measures, m.name)
        """,
        {"measures": measures},
    ).fetchall()
    return pl.DataFrame(rows, schema={"item": pl.String, "measure": pl.String}, orient="row")


def _references(items: pl.DataFrame) -> pl.DataFrame:
    """All the references of ``items`` with several (optional columns ``references`` and
    ``reference_columns`` of :class:`hanna_stats.scoring.io.ScoringInput`), for
    ``item_references``."""
    if "references" not in items.columns:
        return b.frame(b.REFERENCES)
    names = (
        items["reference_columns"].to_list()
        if "reference_columns" in items.columns
        else [[None] * len(r) for r in items["references"].to_list()]
    )
    return b.reference_frame(
        {
            item: list(zip(cols, refs, strict=True))
            for item, refs, cols in zip(
                items["item"], items["references"].to_list(), names, strict=True
            )
        }
    )


def write_scores(
    con: duckdb.DuckDBPyConnection,
    source: Source,
    items: pl.DataFrame,
    scores: pl.DataFrame,
    catalogue: pl.DataFrame,
    *,
    extend: bool = False,
    replace: bool = False,
) -> int:
    """Write scores and their items and measures in one transaction.

    ``extend`` and ``replace`` as in :func:`~hanna_stats.store.batch.write_batch`: texts of
    another study (none of their inputs in the store) need ``extend``, changing scores already
    stored needs ``replace``.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        Writable store.
    source : Source
        The file the texts came from (recorded in ``ingests`` with format ``scoring <UTC time>``).
    items : polars.DataFrame
        Columns :data:`ITEM_COLUMNS`: item, input and system names, the texts (prompt to
        ``inputs.text``, story to ``items.text``, reference to ``items.reference``; a stored text
        is only replaced by a non-null one) and the source row, named in consistency errors;
        optionally ``references`` (each item's list of references, first one first, written
        to ``item_references``) and ``reference_columns`` (their names).
        System ``Human`` is flagged ``is_human``.
    scores : polars.DataFrame
        Columns ``item, measure, value`` (NaN is stored as NULL).
    catalogue : polars.DataFrame
        One row per measure: ``name, family, reference_based, symbol``; new measures get kind
        ``metric`` and are placed after the stored ones.

    Returns
    -------
    int
        Number of scores written.

    Raises
    ------
    InputError
        If an item contradicts the store (same name with another input or system, or the same
        input and system under another name); nothing is written then.
    """
    systems = items["system"].unique(maintain_order=True)
    inputs = items.unique("input", keep="first", maintain_order=True)
    batch = b.Batch(
        systems=b.frame(
            b.SYSTEMS,
            {
                "name": systems.to_list(),
                "is_human": (systems == HUMAN_SYSTEM).to_list(),
                "position": list(range(systems.len())),
            },
        ),
        inputs=b.frame(
            b.INPUTS,
            {
                "name": inputs["input"].to_list(),
                "position": list(range(inputs.height)),
                "text": inputs["prompt"].to_list(),
            },
        ),
        items=b.frame(
            b.ITEMS,
            {
                "name": items["item"].to_list(),
                "input": items["input"].to_list(),
                "system": items["system"].to_list(),
                "text": items["story"].to_list(),
                "reference": items["reference"].to_list(),
                "row": items["row"].to_list(),
            },
        ),
        measures=b.frame(
            b.MEASURES,
            {
                "name": catalogue["name"].to_list(),
                "kind": [METRIC] * catalogue.height,
                "family": catalogue["family"].to_list(),
                "reference_based": catalogue["reference_based"].to_list(),
                "symbol": catalogue["symbol"].to_list(),
                "position": list(range(catalogue.height)),
                "source_name": catalogue["name"].to_list(),
            },
        ),
        raters=b.frame(b.RATERS),
        scores=b.frame(b.SCORES, scores.select("item", "measure", "value").to_dict()).with_columns(
            pl.col("value").fill_nan(None)
        ),
        ratings=b.frame(b.RATINGS),
        replace_measures=False,
        relative_positions=True,
        references=_references(items),
    )
    fmt = f"scoring {datetime.now(UTC).isoformat()}"
    held = con.execute("SELECT name FROM study").fetchall()
    b.write_batch(
        con,
        batch,
        source,
        fmt,
        study=held[0][0] if held else source.path.stem,
        extend=extend,
        replace=replace,
    )
    return batch.scores.height
