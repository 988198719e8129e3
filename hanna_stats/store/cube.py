"""The bridge from the store to the analyses: a dense (measures x inputs x systems) cube."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np

from hanna_stats.store.db import open_store
from hanna_stats.store.errors import DataNotFoundError
from hanna_stats.store.fetch import ANNOTATIONS_FILE, LLM_FILE, METRIC_SCORES_FILE
from hanna_stats.store.ingest import (
    ingest_hanna_annotations,
    ingest_hanna_llm,
    ingest_hanna_metric_scores,
)

# One query. Rows with m, g and s >= 0 are values; the others name one code of one axis
# (codes are 0-based ranks in cube order: position, then name).
_CUBE_QUERY = """
WITH sel AS MATERIALIZED (
    SELECT measure_id, input_id, system_id, coalesce(value, 'NaN'::DOUBLE) AS value
    FROM story_scores WHERE {where}
),
ms AS (
    SELECT measure_id, name, kind, row_number() OVER (ORDER BY {measure_order}) - 1 AS m
    FROM measures WHERE measure_id IN (SELECT measure_id FROM sel)
),
gs AS (
    SELECT input_id, name, row_number() OVER (ORDER BY position NULLS LAST, name) - 1 AS g
    FROM inputs WHERE input_id IN (SELECT input_id FROM sel)
),
ss AS (
    SELECT system_id, name, row_number() OVER (ORDER BY position NULLS LAST, name) - 1 AS s
    FROM systems WHERE system_id IN (SELECT system_id FROM sel)
)
SELECT m::BIGINT AS m, g::BIGINT AS g, s::BIGINT AS s, value, NULL AS name, NULL AS kind
FROM sel JOIN ms USING (measure_id) JOIN gs USING (input_id) JOIN ss USING (system_id)
UNION ALL SELECT m, -1, -1, NULL, name, kind FROM ms
UNION ALL SELECT -1, g, -1, NULL, name, NULL FROM gs
UNION ALL SELECT -1, -1, s, NULL, name, NULL FROM ss
"""


@dataclass(frozen=True)
class Cube:
    """Item-level values as a dense array.

    Attributes
    ----------
    values : numpy.ndarray
        Shape (M measures, G inputs, S systems), float64; NaN where no value is stored.
    measures : list of str
        Measure names, in the order of axis 0.
    kinds : list of str
        Kind of each measure (``human``, ``metric``, ``llm-judge``).
    inputs : list of str
        Input names (HANNA: prompt indices ``"0"`` .. ``"95"``), axis 1.
    systems : list of str
        System names, axis 2.
    """

    values: np.ndarray
    measures: list[str]
    kinds: list[str]
    inputs: list[str]
    systems: list[str]


def _axis(codes: np.ndarray, labels: np.ndarray, rows: np.ndarray) -> list[str]:
    """Labels of one axis, in code order, from its naming rows."""
    order = np.argsort(codes[rows])
    return [str(x) for x in labels[rows][order]]


def load_cube(
    con: duckdb.DuckDBPyConnection,
    *,
    measures: list[str] | None = None,
    kinds: tuple[str, ...] = ("human", "metric"),
    include_human: bool = False,
) -> Cube:
    """Load item-level values (view ``story_scores``) as a dense cube, in one query.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        Store (read-only is fine).
    measures : list of str, optional
        Measures to load, in this order, whatever their kind (``kinds`` is then not used).
        Default: every measure of the given kinds, in catalogue order (``measures.position``:
        for HANNA the human criteria first, then the metrics in file order).
    kinds : tuple of str
        Measure kinds to load when ``measures`` is None.
    include_human : bool
        Keep systems flagged ``is_human`` (HANNA: the ``Human`` row). The paper's analyses drop
        it.

    Returns
    -------
    Cube
        Inputs and systems that have at least one selected value, ordered by position then
        name. Human criteria are averages over raters (see ``story_scores``).

    Raises
    ------
    ValueError
        If a requested measure is not in the store or listed twice, or nothing matches.
    """
    params: dict[str, object] = {}
    where = [] if include_human else ["NOT is_human"]
    if measures is not None:
        measures = list(measures)
        if len(set(measures)) != len(measures):
            raise ValueError(f"measures listed twice: {measures}")
        known = {r[0] for r in con.execute("SELECT name FROM measures").fetchall()}
        unknown = [m for m in measures if m not in known]
        if unknown:
            raise ValueError(f"unknown measures: {unknown}")
        where.append("list_contains($measures, measure)")
        order = "list_position($measures, name)"
        params["measures"] = measures
    else:
        where.append("list_contains($kinds, kind)")
        order = "position NULLS LAST, name"
        params["kinds"] = list(kinds)
    query = _CUBE_QUERY.format(measure_order=order, where=" AND ".join(where))
    rows = con.execute(query, params).fetchnumpy()
    m, g, s = (np.asarray(rows[c], dtype=np.intp) for c in ("m", "g", "s"))
    data = (m >= 0) & (g >= 0) & (s >= 0)
    if not data.any():
        raise ValueError("no values match: is the store empty, or are the filters too narrow?")
    names = np.ma.getdata(rows["name"])
    kinds_of = np.ma.getdata(rows["kind"])
    values = np.full((m.max() + 1, g.max() + 1, s.max() + 1), np.nan)
    values[m[data], g[data], s[data]] = np.ma.getdata(rows["value"])[data]
    measure_rows = (m >= 0) & ~data
    return Cube(
        values=values,
        measures=_axis(m, names, measure_rows),
        kinds=_axis(m, kinds_of, measure_rows),
        inputs=_axis(g, names, (g >= 0) & ~data),
        systems=_axis(s, names, (s >= 0) & ~data),
    )


def build_hanna_store(
    data_dir: str | Path, db_path: str | Path | None = None
) -> duckdb.DuckDBPyConnection:
    """Open (or create) a store and ingest the HANNA files found in ``data_dir``.

    ``hanna_metric_scores.csv`` is required; ``hanna_metric_scores_llm.csv`` and
    ``hanna_stories_annotations.csv`` are ingested when present. Files already ingested are
    skipped, so calling this again on the same store is cheap.

    Parameters
    ----------
    data_dir : str or Path
        Folder with the HANNA files (see :func:`hanna_stats.store.fetch.resolve_hanna_dir`).
    db_path : str or Path, optional
        DuckDB file; None builds an in-memory store.

    Returns
    -------
    duckdb.DuckDBPyConnection
        The writable store.

    Raises
    ------
    DataNotFoundError
        If ``hanna_metric_scores.csv`` is not in ``data_dir``.
    InputError
        If a file is malformed.
    """
    data_dir = Path(data_dir)
    if not (data_dir / METRIC_SCORES_FILE).is_file():
        raise DataNotFoundError(f"{METRIC_SCORES_FILE} not found in {data_dir}")
    con = open_store(db_path)
    try:
        ingest_hanna_metric_scores(con, data_dir / METRIC_SCORES_FILE)
        optional = ((LLM_FILE, ingest_hanna_llm), (ANNOTATIONS_FILE, ingest_hanna_annotations))
        for name, ingest in optional:
            if (data_dir / name).is_file():
                ingest(con, data_dir / name)
    except BaseException:
        con.close()
        raise
    return con
