"""Measure scales at ingest: check every value against its measure's scale, apply the policy.

A measure may declare a scale (catalogue columns ``scale``, ``scale_min``, ``scale_max``):

- ``likert``: whole numbers from ``scale_min`` to ``scale_max`` (both required), e.g. 1-5;
- ``integer``: whole numbers, within the bounds that are given;
- ``continuous``: any number within the bounds that are given.

Rater-level values (one person's rating, one try of an LLM judge) must be whole numbers on a
Likert or integer scale; item-level values are means of such ratings, so only their bounds are
checked. A measure with both bounds and no declared scale is Likert.

What happens to a value outside its scale: a human measure's file is refused, naming the row
(people rate on the scale they are shown; a value outside it is a data error). Any other measure
follows the ingest's scale policy (:data:`~hanna_stats.store.catalogue.SCALE_POLICIES`):
``error`` refuses the file, ``missing`` stores NULL, ``clip`` moves the value to the nearest
bound and, at rater level on a whole-number scale, rounds it to the nearest whole number,
``keep`` stores it unchanged. An LLM judge's answer that held no number (a rating row with an
``answer`` and no value) is stored as missing with its text, whatever the policy. Each ingest
records, per measure with a scale, how many values it found below, above, not whole and
unparsed, and the policy applied (table ``scale_checks``), so the counts survive ``missing`` and
``clip``.
"""

from __future__ import annotations

import duckdb
import polars as pl

from hanna_stats.store.catalogue import (
    HUMAN,
    INTEGER,
    LIKERT,
    LIKERT_MAX,
    LIKERT_MIN,
    SCALE_POLICIES,
)
from hanna_stats.store.source import Source

#: Columns of table ``scale_checks`` after its keys (one row per ingest and measure).
COUNTS = ("n_values", "n_below", "n_above", "n_not_whole", "n_unparsed")
_WHOLE = (LIKERT, INTEGER)


def check_policy(policy: str) -> str:
    """``policy`` if it is a scale policy, else ValueError naming the choices."""
    if policy not in SCALE_POLICIES:
        raise ValueError(f"scale_policy must be one of {', '.join(SCALE_POLICIES)}; got {policy!r}")
    return policy


def check_likert(source: Source, value: object, shown: str, **where: object) -> float:
    """``value`` as a float if it is a Likert rating, a whole number from ``LIKERT_MIN`` to
    ``LIKERT_MAX`` (an int or a float, not a bool); else an :class:`InputError` of ``source``
    at ``where`` (row, column, context), ``shown`` being the value as the file writes it."""
    if (
        type(value) not in (int, float)
        or not LIKERT_MIN <= value <= LIKERT_MAX
        or value != int(value)
    ):
        raise source.error(
            f"expected a Likert rating, a whole number from {LIKERT_MIN:g} to {LIKERT_MAX:g}, "
            f"got {shown}",
            **where,
        )
    return float(value)


#: The relations :func:`apply_scales` reads (the batch's values as given) and writes (the values
#: after the policy, which the write reads), and its table of scales.
GIVEN = {"_hs_scores": "_hs_scores_given", "_hs_ratings": "_hs_ratings_given"}
SCALES_TABLE = "_hs_scales"


def _create_scales(con: duckdb.DuckDBPyConnection, batch_wins: bool) -> None:
    """Table :data:`SCALES_TABLE`: the scale of every measure the batch may write (``measure,
    kind, scale, lo, hi``): its own declaration and the stored one, the batch's first when it
    replaces the catalogue; kept as it is before the write changes the catalogue."""
    first, second = ("b", "m") if batch_wins else ("m", "b")
    pick = {c: f"coalesce({first}.{c}, {second}.{c})" for c in ("scale", "scale_min", "scale_max")}
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE {SCALES_TABLE} AS
        WITH declared AS (
            SELECT b.name, coalesce(m.kind, b.kind) AS kind, {pick["scale"]} AS scale,
                   {pick["scale_min"]} AS lo, {pick["scale_max"]} AS hi
            FROM _hs_measures b LEFT JOIN measures m ON m.name = b.name
            UNION ALL
            SELECT name, kind, scale, scale_min, scale_max FROM measures
            WHERE name NOT IN (SELECT name FROM _hs_measures)
        )
        SELECT name AS measure, kind,
               coalesce(scale, CASE WHEN lo IS NOT NULL AND hi IS NOT NULL THEN 'likert' END)
                   AS scale, lo, hi
        FROM declared
        WHERE scale IS NOT NULL OR lo IS NOT NULL OR hi IS NOT NULL
        """
    )


def _flagged(given: str, value: str, rater_level: bool) -> str:
    """SQL: the rows of relation ``given`` with their measure's scale (``_kind, _scale, _lo,
    _hi``) and the flags ``_below, _above, _not_whole, _unparsed`` and ``_off`` (any of the
    first three)."""
    whole = "s.scale IN ('likert', 'integer')" if rater_level else "false"
    unparsed = f"(b.{value} IS NULL AND b.answer IS NOT NULL)" if rater_level else "false"
    return f"""
        SELECT *, _below OR _above OR _not_whole AS _off FROM (
            SELECT b.*, s.kind AS _kind, s.scale AS _scale, s.lo AS _lo, s.hi AS _hi,
                   coalesce(b.{value} < s.lo, false) AS _below,
                   coalesce(b.{value} > s.hi, false) AS _above,
                   coalesce({whole} AND b.{value} <> round(b.{value}), false) AS _not_whole,
                   {unparsed} AS _unparsed
            FROM {given} b LEFT JOIN {SCALES_TABLE} s ON s.measure = b.measure
        )
    """


def _refuse(
    con: duckdb.DuckDBPyConnection,
    source: Source,
    flagged: str,
    value: str,
    policy: str | None,
    rater_level: bool,
) -> None:
    """Raise for the first value off its scale in ``flagged`` (by row, item, measure, rater)."""
    order = "row, item, measure" + (", rater" if rater_level else "")
    hit = (
        con.sql(f"SELECT * FROM ({flagged}) WHERE _off ORDER BY {order} NULLS LAST LIMIT 1")
        .pl()
        .row(0, named=True)
    )
    lo, hi, scale = hit["_lo"], hit["_hi"], hit["_scale"]
    bounds = " ".join(
        part
        for part in (
            f"from {lo:g}" if lo is not None else "",
            f"to {hi:g}" if hi is not None else "",
        )
        if part
    )
    if scale == LIKERT:
        what = f"is rated on a Likert scale, whole numbers {bounds}"
    elif scale == INTEGER:
        what = f"takes whole numbers {bounds}".rstrip()
    else:
        what = f"takes values {bounds}"
    by = f" by rater {hit['rater']!r}" if hit.get("rater") is not None else ""
    fix = (
        ""
        if policy is None
        else "; pass --scale-policy missing, clip or keep to ingest such values (they are counted)"
    )
    where = {"row": hit["row"], "column": "value"} if hit.get("row") is not None else {}
    raise source.error(
        f"value {hit[value]:g} of item {hit['item']!r}{by}: measure {hit['measure']!r} {what}{fix}",
        **where,
    )


def _apply(
    con: duckdb.DuckDBPyConnection,
    source: Source,
    table: str,
    value: str,
    policy: str,
    rater_level: bool,
) -> pl.DataFrame:
    """Check the values of ``GIVEN[table]`` against their scales, refusing as the policy says,
    and create view ``table``: the values after the policy. Returns the counts per measure with
    a scale or an unparsed answer (``measure`` + :data:`COUNTS`)."""
    given = GIVEN[table]
    flagged = _flagged(given, value, rater_level)
    counts = con.sql(
        f"""
        SELECT measure, count(*) AS n_values, count_if(_below) AS n_below,
               count_if(_above) AS n_above, count_if(_not_whole) AS n_not_whole,
               count_if(_unparsed) AS n_unparsed, bool_or(_scale IS NOT NULL) AS _scaled,
               count_if(_off AND _kind = '{HUMAN}') AS _human_off, count_if(_off) AS _off
        FROM ({flagged}) GROUP BY measure
        """
    ).pl()
    if counts["_human_off"].sum():
        _refuse(con, source, f"SELECT * FROM ({flagged}) WHERE _kind = '{HUMAN}'", value, None,
                rater_level)  # fmt: skip
    if policy == "error" and counts["_off"].sum():
        _refuse(con, source, flagged, value, policy, rater_level)
    columns = con.execute(f"SELECT * FROM {given} LIMIT 0").description
    if policy in ("missing", "clip") and counts["_off"].sum():
        if policy == "missing":
            new = "NULL"
        else:  # greatest and least pass over a NULL bound: no bound on that side
            clipped = f"least(greatest({value}, _lo), _hi)"
            rounded = f"round_even({clipped}, 0)" if rater_level else clipped
            new = f"CASE WHEN _scale IN ('likert', 'integer') THEN {rounded} ELSE {clipped} END"
        select = ", ".join(
            f"CASE WHEN _off THEN {new} ELSE {value} END AS {value}" if name == value else name
            for name, *_ in columns
        )
        con.execute(f"CREATE OR REPLACE TEMP VIEW {table} AS SELECT {select} FROM ({flagged})")
    else:
        con.execute(f"CREATE OR REPLACE TEMP VIEW {table} AS SELECT * FROM {given}")
    return counts.filter(pl.col("_scaled") | (pl.col("n_unparsed") > 0)).select("measure", *COUNTS)


def apply_scales(
    con: duckdb.DuckDBPyConnection,
    source: Source,
    *,
    policy: str,
    batch_wins: bool,
) -> pl.DataFrame:
    """Check a batch's values against their measures' scales and apply ``policy``.

    Reads the batch's values as given, relations ``_hs_scores_given`` (item-level) and
    ``_hs_ratings_given`` (rater-level), and creates the views ``_hs_scores`` and
    ``_hs_ratings``, the values after the policy, which the write reads (:data:`GIVEN`); and
    table :data:`SCALES_TABLE`. The caller drops the three.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        The store, inside the write's transaction, with the batch staged (``_hs_*``).
    source : Source
        The file (named in errors).
    policy : str
        One of :data:`~hanna_stats.store.catalogue.SCALE_POLICIES`, for non-human measures.
    batch_wins : bool
        The batch's scale declarations override the stored ones (HANNA files).

    Returns
    -------
    polars.DataFrame
        Per measure with a scale or an unparsed answer: ``measure, policy`` and
        :data:`COUNTS`, summed over both tables, by measure name (no columns when no measure
        has a scale and no answer is unparsed).

    Raises
    ------
    InputError
        For a human value off its scale (always) or any value off its scale under ``error``.
    """
    _create_scales(con, batch_wins)
    ((scaled, answered),) = con.execute(
        f"SELECT (SELECT count(*) FROM {SCALES_TABLE}), "
        "EXISTS (SELECT 1 FROM _hs_ratings_given WHERE answer IS NOT NULL)"
    ).fetchall()
    if not scaled and not answered:
        for table, given in GIVEN.items():
            con.execute(f"CREATE OR REPLACE TEMP VIEW {table} AS SELECT * FROM {given}")
        return pl.DataFrame()
    from_scores = _apply(con, source, "_hs_scores", "value", policy, rater_level=False)
    from_ratings = _apply(con, source, "_hs_ratings", "score", policy, rater_level=True)
    kinds = con.sql(f"SELECT measure, kind FROM {SCALES_TABLE}").pl()
    return (
        pl.concat([from_scores, from_ratings])
        .group_by("measure")
        .agg(pl.col(c).sum() for c in COUNTS)
        .join(kinds, on="measure", how="left")
        .with_columns(
            policy=pl.when(pl.col("kind") == HUMAN).then(pl.lit("error")).otherwise(pl.lit(policy))
        )
        .select("measure", "policy", *COUNTS)
        .sort("measure")
    )


def drop_scales(con: duckdb.DuckDBPyConnection) -> None:
    """Drop what :func:`apply_scales` created, if it exists."""
    for table in GIVEN:
        con.execute(f"DROP VIEW IF EXISTS {table}")
    con.execute(f"DROP TABLE IF EXISTS {SCALES_TABLE}")
