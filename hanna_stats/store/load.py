"""Loading a :class:`~hanna_stats.study.Study`: everything one store holds, once, for every
analysis.

:func:`load_study` reads a store in a handful of queries (the measure x input x system cube of
every measure and system, the system-level values the study gives, the catalogue, the
rater-level ratings of the human criteria, the systems, the subsets of the inputs, e.g. WMT's
language pairs, and the overview tables);
:func:`open_study` does it from a store file, a HANNA folder or a file to ingest in one call. The
Study type itself lives in :mod:`hanna_stats.study` (no DuckDB), so the analyses, which take a
Study and never touch SQL, import neither DuckDB nor the ingesters.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import polars as pl

from hanna_stats.store.db import open_store
from hanna_stats.store.errors import DataNotFoundError, InputError
from hanna_stats.store.fetch import METRIC_SCORES_FILE
from hanna_stats.store.formats import build_hanna_store, detect_format, ingest
from hanna_stats.study import Study, Subsets

# Every item-level value (view item_scores) in one pass over the view. Rows with m, g and
# s >= 0 are values; the others name one code of one axis (codes are 0-based ranks in catalogue
# and store order: position, then name). Systems and inputs without any value are left out.
_CUBE = """
WITH sel AS MATERIALIZED (
    SELECT measure_id, input_id, system_id, coalesce(value, 'NaN'::DOUBLE) AS value
    FROM item_scores
),
ms AS (
    SELECT measure_id, name, row_number() OVER (ORDER BY position NULLS LAST, name) - 1 AS m
    FROM measures WHERE measure_id IN (SELECT measure_id FROM sel)
),
gs AS (
    SELECT input_id, name, row_number() OVER (ORDER BY position NULLS LAST, name) - 1 AS g
    FROM inputs WHERE input_id IN (SELECT input_id FROM sel)
),
ss AS (
    SELECT system_id, name, is_human,
           row_number() OVER (ORDER BY position NULLS LAST, name) - 1 AS s
    FROM systems WHERE system_id IN (SELECT system_id FROM sel)
)
SELECT m::BIGINT AS m, g::BIGINT AS g, s::BIGINT AS s, value, NULL AS name, NULL AS is_human
FROM sel JOIN ms USING (measure_id) JOIN gs USING (input_id) JOIN ss USING (system_id)
UNION ALL SELECT m, -1, -1, NULL, name, NULL FROM ms
UNION ALL SELECT -1, g, -1, NULL, name, NULL FROM gs
UNION ALL SELECT -1, -1, s, NULL, name, is_human FROM ss
"""

# The system-level values the study gives (view given_system_scores), in catalogue order, then
# store order, then subset.
_GIVEN = """
SELECT measure, kind, measure_position, system, is_human, system_position, value, subset
FROM given_system_scores
ORDER BY measure_position NULLS LAST, measure, system_position NULLS LAST, system,
         subset NULLS FIRST
"""

_MEASURES = """
SELECT name AS measure, kind, coalesce(family, '') AS family, reference_based, symbol,
       abbreviation, criterion, variant, judge, scale, scale_min, scale_max, position
FROM measures ORDER BY position NULLS LAST, name
"""

# Rater-level values of every measure (human ratings, LLM-judge tries), one row per value with a
# score. For each item and measure, the ratings of identified raters (kind 'person') when it has
# any, else those of judge slots (the rule of view item_scores: no rating counted twice).
# rater_column: the rating's 0-based position among the item's ratings (slots by slot number,
# persons by rater_id).
_RATINGS = r"""
WITH r AS (
    SELECT ra.item_id, ra.measure_id, ra.rater_id, rt.name AS rater, rt.kind AS rater_kind,
           ra.score,
           bool_or(rt.kind = 'person') OVER (PARTITION BY ra.item_id, ra.measure_id) AS has_person
    FROM ratings ra
    JOIN raters rt USING (rater_id)
    WHERE ra.score IS NOT NULL
),
chosen AS (
    SELECT *, row_number() OVER (
           PARTITION BY item_id, measure_id
           ORDER BY CASE WHEN rater_kind = 'slot'
                         THEN try_cast(regexp_extract(rater, '(\d+)$', 1) AS BIGINT) END
                    NULLS LAST, rater_id
       ) - 1 AS rater_column
    FROM r WHERE rater_kind = 'person' OR NOT has_person
)
SELECT m.name AS measure, m.kind, c.item_id, inp.name AS input, sy.name AS system,
       sy.is_human, c.rater, c.rater_kind, c.score, c.rater_column
FROM chosen c
JOIN measures m USING (measure_id)
JOIN items it USING (item_id)
JOIN inputs inp USING (input_id)
JOIN systems sy USING (system_id)
ORDER BY m.position NULLS LAST, m.name, c.item_id, c.rater_column
"""

# What the ingests found outside the measures' scales, per measure (table scale_checks).
_SCALE_CHECKS = """
SELECT m.name AS measure, m.kind, m.judge, m.variant, m.criterion, m.scale, m.scale_min,
       m.scale_max, string_agg(DISTINCT c.policy, ', ' ORDER BY c.policy) AS policy,
       sum(c.n_values)::BIGINT AS n_values, sum(c.n_below)::BIGINT AS n_below,
       sum(c.n_above)::BIGINT AS n_above, sum(c.n_not_whole)::BIGINT AS n_not_whole,
       sum(c.n_unparsed)::BIGINT AS n_unparsed
FROM scale_checks c JOIN measures m USING (measure_id)
GROUP BY ALL
ORDER BY any_value(m.position) NULLS LAST, measure
"""

_COUNTS = """
SELECT what, n FROM (
    SELECT 0 AS k, 'systems' AS what, count(*) AS n FROM systems
    UNION ALL SELECT 1, 'human-written systems', count(*) FILTER (WHERE is_human) FROM systems
    UNION ALL SELECT 2, 'inputs', count(*) FROM inputs
    UNION ALL SELECT 3, 'items', count(*) FROM items
    UNION ALL SELECT 4, 'raters', count(*) FROM raters
    UNION ALL SELECT 5, 'rater-level ratings', count(*) FROM ratings
    UNION ALL SELECT 6, 'measures: ' || kind, count(*) FROM measures GROUP BY kind
    UNION ALL SELECT 7, 'item-level scores', count(*) FROM scores
    UNION ALL SELECT 8, 'system-level scores given', count(*) FROM given_system_scores_by_id
    UNION ALL SELECT 9, 'domain-level scores given', count(*) FROM given_domain_scores_by_id
)
ORDER BY k, what
"""
_FAMILIES = """
SELECT kind,
       coalesce(family, '') AS family,
       CASE WHEN reference_based IS NULL THEN ''
            WHEN reference_based THEN 'reference-based' ELSE 'reference-free' END AS reference,
       coalesce(symbol, '') AS symbol,
       count(*) AS n_measures,
       string_agg(name, ', ' ORDER BY position, name) AS measures
FROM measures
GROUP BY ALL
ORDER BY min(position), kind, family, reference, symbol
"""

_SOURCES = r"""
SELECT regexp_extract(source, '[^/\\]*$') AS file, format, sha256, n_values
FROM ingests ORDER BY file, format, sha256, n_values
"""


def load_study(con: duckdb.DuckDBPyConnection) -> Study:
    """Load everything the analyses need from a store, once.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        An open store (read-only is fine).

    Returns
    -------
    Study

    Raises
    ------
    ValueError
        If the store holds no item-level value.
    """
    rows = con.execute(_CUBE).fetchnumpy()
    m, g, s = (np.asarray(rows[c], dtype=np.intp) for c in ("m", "g", "s"))
    data = (m >= 0) & (g >= 0) & (s >= 0)
    if not data.any():
        raise ValueError("the store holds no values: ingest data first (see `ingest`)")
    names = np.ma.getdata(rows["name"])

    def axis(codes: np.ndarray) -> np.ndarray:
        """The naming rows of one axis, in code order."""
        rows_of = np.flatnonzero((codes >= 0) & ~data)
        return rows_of[np.argsort(codes[rows_of])]

    measures = tuple(str(x) for x in names[axis(m)])
    catalogue = con.sql(_MEASURES).pl().filter(pl.col("measure").is_in(measures))
    values = np.full((m.max() + 1, g.max() + 1, s.max() + 1), np.nan)
    values[m[data], g[data], s[data]] = np.ma.getdata(rows["value"])[data].astype(np.float64)
    systems = axis(s)
    inputs = tuple(str(x) for x in names[axis(g)])
    return Study(
        values=values,
        measures=measures,
        kinds=tuple(catalogue["kind"]),
        inputs=inputs,
        systems=tuple(str(x) for x in names[systems]),
        is_human=np.array([bool(h) for h in np.ma.getdata(rows["is_human"])[systems]]),
        given_system_scores=con.sql(_GIVEN).pl(),
        catalogue=catalogue,
        ratings=con.sql(_RATINGS).pl(),
        scale_checks=con.sql(_SCALE_CHECKS).pl(),
        counts=con.sql(_COUNTS).pl(),
        families=con.sql(_FAMILIES).pl(),
        sources=con.sql(_SOURCES).pl(),
        subset_index=_subsets(con, inputs, (m[data], g[data], s[data]), values.shape),
        documents=_documents(con, inputs),
        **_study_row(con),
    )


def _subsets(
    con: duckdb.DuckDBPyConnection,
    inputs: tuple[str, ...],
    codes: tuple[np.ndarray, np.ndarray, np.ndarray],
    shape: tuple[int, int, int],
) -> Subsets | None:
    """The subsets of the inputs (column ``inputs.subset``), in the order of their first input,
    and the measures and systems with a stored value (a missing one included) in each, from the
    ``(m, g, s)`` codes of the cube's values; None when no input has a subset."""
    labelled = dict(
        con.execute("SELECT name, subset FROM inputs WHERE subset IS NOT NULL").fetchall()
    )
    if not labelled:
        return None
    labels = tuple(dict.fromkeys(labelled[name] for name in inputs if name in labelled))
    code = {label: k for k, label in enumerate(labels)}
    of_input = np.array([code.get(labelled.get(name), -1) for name in inputs], dtype=np.intp)
    m, g, s = codes
    k = of_input[g]
    kept = k >= 0
    measures = np.zeros((len(labels), shape[0]), dtype=bool)
    systems = np.zeros((len(labels), shape[2]), dtype=bool)
    measures[k[kept], m[kept]] = True
    systems[k[kept], s[kept]] = True
    return Subsets(labels, of_input, measures, systems)


def _documents(con: duckdb.DuckDBPyConnection, inputs: tuple[str, ...]) -> tuple[str, ...]:
    """Each input's document (column ``inputs.document``), ``""`` for an input without one;
    empty when no input has one."""
    query = "SELECT name, document FROM inputs WHERE document IS NOT NULL ORDER BY name"
    documents = dict(con.execute(query).fetchall())
    return tuple(documents.get(name, "") for name in inputs) if documents else ()


def _study_row(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The study's name and word for its items (``"item"`` when the store holds no study)."""
    rows = con.execute("SELECT name, item_word FROM study ORDER BY ALL LIMIT 1").fetchall()
    name, word = rows[0] if rows else ("", "item")
    return {"name": name, "item_word": word}


def open_study(source: str | Path, *, human_system: str | None = None) -> Study:
    """Open a study in one call: a store file, a HANNA data folder or a file to ingest.

    Parameters
    ----------
    source : str or Path
        A DuckDB store file (``.duckdb``/``.db``, any case; opened read-only; it must exist), a
        folder holding ``hanna_metric_scores.csv`` (built into an in-memory store), or a file
        ingested into an in-memory store in the format
        :func:`~hanna_stats.store.formats.detect_format` gives it: a HANNA file by its name,
        SummEval's annotations (``.jsonl``; see :mod:`hanna_stats.store.summeval`), else a tidy
        CSV or Parquet file (columns ``item,input,system,measure,value[,rater]``). A WMT test
        set is refused: ingest one language pair into a store, then open the store.
    human_system : str, optional
        Tidy files: the system holding human-written references.

    Returns
    -------
    Study

    Raises
    ------
    DataNotFoundError
        If ``source`` does not exist or a folder lacks the HANNA files.
    InputError
        If a file is malformed, or ``source`` is a WMT test set.

    Examples
    --------
    >>> from hanna_stats import open_study                              # doctest: +SKIP
    >>> from hanna_stats.analyses.correlations import correlate         # doctest: +SKIP
    >>> study = open_study("path/to/hanna")                      # doctest: +SKIP
    >>> correlate(study, level="system", method="kendall")              # doctest: +SKIP
    """
    path = Path(source)
    fmt = detect_format(path)
    if fmt == "wmt":
        raise InputError(
            "is a WMT test set: ingest one language pair into a store first "
            "(`ingest --db FILE PATH --lp LP`), then open the store",
            file=path,
        )
    if fmt == "hanna-dir":
        if not (path / METRIC_SCORES_FILE).is_file():
            raise DataNotFoundError(f"{path}: no {METRIC_SCORES_FILE} in this folder")
        con = build_hanna_store(path)
    elif not path.is_file():
        raise DataNotFoundError(f"{path}: no such file or folder")
    elif path.suffix.lower() in (".duckdb", ".db"):
        con = open_store(path, read_only=True)
    else:
        con = open_store()
        options = {"human_system": human_system} if fmt == "tidy" else {}
        try:
            ingest(con, path, format=fmt, **options)
        except BaseException:
            con.close()
            raise
    try:
        return load_study(con)
    finally:
        con.close()
