"""Measure scales at ingest: check every value against its measure's scale, apply the policy.

A measure may declare a scale (catalogue columns ``scale``, ``scale_min``, ``scale_max``):

- ``likert``: whole numbers from ``scale_min`` to ``scale_max`` (both required), e.g. 1-5;
- ``integer``: whole numbers, within the bounds that are given;
- ``continuous``: any number within the bounds that are given.

Rater-level values (one person's rating, one try of an LLM judge) must be whole numbers on a
Likert or integer scale; item-level values are means of such ratings, so only their bounds are
checked. A measure with both bounds and no declared scale is Likert (stores written before the
``scale`` column existed).

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


def _scales(con: duckdb.DuckDBPyConnection, batch_wins: bool) -> pl.DataFrame:
    """The scale of every measure the batch may write (``measure, kind, scale, lo, hi``): its
    own declaration and the stored one, the batch's first when it replaces the catalogue."""
    first, second = ("b", "m") if batch_wins else ("m", "b")
    pick = {c: f"coalesce({first}.{c}, {second}.{c})" for c in ("scale", "scale_min", "scale_max")}
    return con.sql(
        f"""
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
        ORDER BY measure
        """
    ).pl()


def _flag(values: pl.DataFrame, scales: pl.DataFrame, value: str, rater_level: bool):
    """``values`` joined to their scales with boolean columns below, above, not_whole, unparsed."""
    whole = pl.col("scale").is_in(_WHOLE) if rater_level else pl.lit(False)
    answer = pl.col("answer").is_not_null() if "answer" in values.columns else pl.lit(False)
    return (
        values.with_row_index("_i")
        .join(scales, on="measure", how="left")
        .with_columns(
            below=(pl.col(value) < pl.col("lo")).fill_null(False),
            above=(pl.col(value) > pl.col("hi")).fill_null(False),
            not_whole=(whole & (pl.col(value) != pl.col(value).round(0))).fill_null(False),
            unparsed=pl.col(value).is_null() & answer,
        )
        .with_columns(off=pl.col("below") | pl.col("above") | pl.col("not_whole"))
    )


def _refuse(source: Source, flagged: pl.DataFrame, value: str, policy: str | None) -> None:
    """Raise for the first value off its scale (by row, item, measure, rater)."""
    order = [c for c in ("row", "item", "measure", "rater") if c in flagged.columns]
    hit = flagged.filter("off").sort(order, nulls_last=True).row(0, named=True)
    lo, hi, scale = hit["lo"], hit["hi"], hit["scale"]
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
    source: Source, frame: pl.DataFrame, scales: pl.DataFrame, value: str, policy: str, rater: bool
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``frame`` after the policy, and its counts per measure with a scale or an unparsed
    answer (``measure`` + :data:`COUNTS`)."""
    flagged = _flag(frame, scales, value, rater)
    human = pl.col("kind") == HUMAN
    if flagged.filter(human & pl.col("off")).height:
        _refuse(source, flagged.filter(human), value, None)
    if policy == "error" and flagged.filter(pl.col("off")).height:
        _refuse(source, flagged, value, policy)
    if policy == "missing":
        new = pl.when(pl.col("off")).then(None).otherwise(pl.col(value))
    elif policy == "clip":
        clipped = pl.col(value).clip(pl.col("lo"), pl.col("hi"))
        whole = pl.col("scale").is_in(_WHOLE) if rater else pl.lit(False)
        new = pl.when(pl.col("off") & whole).then(clipped.round(0)).otherwise(clipped)
        new = pl.when(pl.col("off")).then(new).otherwise(pl.col(value))
    else:
        new = pl.col(value)
    applied = flagged.with_columns(new.alias(value)).select(frame.columns)
    counts = (
        flagged.group_by("measure")
        .agg(
            pl.len().alias("n_values"),
            pl.col("below").sum().alias("n_below"),
            pl.col("above").sum().alias("n_above"),
            pl.col("not_whole").sum().alias("n_not_whole"),
            pl.col("unparsed").sum().alias("n_unparsed"),
            pl.col("scale").is_not_null().any().alias("_scaled"),
        )
        .filter(pl.col("_scaled") | (pl.col("n_unparsed") > 0))
        .drop("_scaled")
    )
    return applied, counts


def apply_scales(
    con: duckdb.DuckDBPyConnection,
    source: Source,
    scores: pl.DataFrame,
    ratings: pl.DataFrame,
    *,
    policy: str,
    batch_wins: bool,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Check a batch's values against their measures' scales and apply ``policy``.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        The store, inside the write's transaction, with the batch registered (``_hs_*``).
    source : Source
        The file (named in errors).
    scores, ratings : polars.DataFrame
        The batch's item-level and rater-level values.
    policy : str
        One of :data:`~hanna_stats.store.catalogue.SCALE_POLICIES`, for non-human measures.
    batch_wins : bool
        The batch's scale declarations override the stored ones (HANNA files).

    Returns
    -------
    scores, ratings, counts : polars.DataFrame
        The values after the policy, and per measure with a scale or an unparsed answer:
        ``measure, policy`` and :data:`COUNTS`, summed over both tables, by measure name.

    Raises
    ------
    InputError
        For a human value off its scale (always) or any value off its scale under ``error``.
    """
    scales = _scales(con, batch_wins)
    if scales.is_empty() and ratings.filter(pl.col("answer").is_not_null()).is_empty():
        return scores, ratings, pl.DataFrame()
    scores, from_scores = _apply(source, scores, scales, "value", policy, rater=False)
    ratings, from_ratings = _apply(source, ratings, scales, "score", policy, rater=True)
    kinds = scales.select("measure", "kind")
    counts = (
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
    return scores, ratings, counts
