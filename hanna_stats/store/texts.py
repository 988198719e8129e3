"""Read the texts a store holds, for scoring them (``score --db STORE`` without ``--input``).

Each item's output text (``items.text``), its references (``item_references``, first one
first) and its input's text (``inputs.text``, the source that reference-free metrics compare
with), in the shape :mod:`hanna_stats.scoring.io` gives a file's texts.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import polars as pl

from hanna_stats.store.source import Source

_TEXTS = """
SELECT it.name AS item, inp.name AS input, sy.name AS system, inp.text AS prompt,
       it.text AS story,
       coalesce(
           (SELECT list(r.text ORDER BY r.position) FROM item_references r
            WHERE r.item_id = it.item_id AND r.text <> ''),
           CASE WHEN it.reference <> '' THEN [it.reference] END,
           []::VARCHAR[]) AS references,
       coalesce(
           (SELECT list(coalesce(r.name, 'reference ' || r.position) ORDER BY r.position)
            FROM item_references r WHERE r.item_id = it.item_id AND r.text <> ''),
           CASE WHEN it.reference <> '' THEN ['reference'] END,
           []::VARCHAR[]) AS reference_columns
FROM items it
JOIN inputs inp ON inp.input_id = it.input_id
JOIN systems sy ON sy.system_id = it.system_id
ORDER BY inp.position NULLS LAST, inp.name, sy.position NULLS LAST, sy.name, it.name
"""


def stored_texts(con: duckdb.DuckDBPyConnection, path: str | Path) -> tuple[Source, pl.DataFrame]:
    """The store's items with their texts, and a :class:`Source` standing for the store.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        A store opened for writing (:func:`~hanna_stats.store.db.open_store`).
    path : str or Path
        Its file, named in errors and (as ``<name> (stored texts)``) in ``ingests``.

    Returns
    -------
    (Source, polars.DataFrame)
        The source: the store's path, no bytes, the SHA-256 of the texts read. The frame: one row
        per item, ordered by input then system, columns ``item, input, system, prompt,
        reference, story`` (``prompt``: the input's text, null when unknown; ``reference``: the
        first reference), ``references`` (list of the item's non-empty references, first one
        first), ``reference_columns`` (their names in ``item_references``) and ``row`` (1-based
        rank in that order).
    """
    lists = {"references": pl.List(pl.String), "reference_columns": pl.List(pl.String)}
    schema = {c: pl.String for c in ("item", "input", "system", "prompt", "story")} | lists
    df = pl.DataFrame(con.execute(_TEXTS).fetchall(), schema=schema, orient="row")
    df = df.with_columns(
        pl.col("references").list.first().alias("reference"),
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).alias("row"),
    )
    digest = hashlib.sha256()
    for row in df.select("item", "prompt", "story", "references").iter_rows():
        digest.update(repr(row).encode("utf-8"))
    path = Path(path)
    source = Source(path.with_name(f"{path.name} (stored texts)"), b"", digest.hexdigest())
    columns = ("item", "input", "system", "prompt", "reference", "story")
    return source, df.select(*columns, "references", "reference_columns", "row")
