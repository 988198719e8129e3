"""What a store holds: counts, the measure catalogue by family, and where the data came from."""

from __future__ import annotations

import duckdb
import polars as pl

_COUNTS = """
SELECT 'systems' AS what, count(*) AS n FROM systems
UNION ALL SELECT 'human-written systems', count(*) FILTER (WHERE is_human) FROM systems
UNION ALL SELECT 'inputs', count(*) FROM inputs
UNION ALL SELECT 'items', count(*) FROM items
UNION ALL SELECT 'raters', count(*) FROM raters
UNION ALL SELECT 'rater-level ratings', count(*) FROM ratings
UNION ALL SELECT 'measures: ' || kind, count(*) FROM measures GROUP BY kind
UNION ALL SELECT 'item-level scores', count(*) FROM scores
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
ORDER BY min(position), kind, family, reference
"""

_SOURCES = """
SELECT regexp_extract(source, '[^/\\\\]*$') AS file, format, sha256, n_values
FROM ingests ORDER BY file, format
"""


def study_counts(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Counts of systems, inputs, items, raters, ratings, measures by kind and scores.

    Returns
    -------
    polars.DataFrame
        Columns ``what, n``.
    """
    return con.sql(_COUNTS).pl()


def measure_families(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The measure catalogue grouped by kind, family and reference use, with the paper's symbol.

    Returns
    -------
    polars.DataFrame
        Columns ``kind, family, reference, symbol, n_measures, measures`` (names, in catalogue
        order, joined by ``", "``); empty strings where an attribute does not apply (human
        criteria, LLM judges, measures of a generic tidy ingest).
    """
    return con.sql(_FAMILIES).pl()


def data_sources(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """The ingested files (provenance table ``ingests``), without the ingest time.

    Returns
    -------
    polars.DataFrame
        Columns ``file`` (base name), ``format``, ``sha256``, ``n_values``.
    """
    return con.sql(_SOURCES).pl()


def criterion_values(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Item-level values of every human criterion (the rating distributions of Fig. 9).

    An item's value is the mean of its raters' ratings when the store has them, else the
    stored average (view ``story_scores``).

    Returns
    -------
    polars.DataFrame
        Columns ``system, criterion, input, value``, systems and criteria in catalogue order;
        items without a value are left out.
    """
    return con.sql(
        """
        SELECT system, measure AS criterion, input, value FROM story_scores
        WHERE kind = 'human' AND value IS NOT NULL
        ORDER BY system_position, system, measure_position, measure, input_position, input
        """
    ).pl()
