"""Parse and validate a generic tidy score file (CSV or Parquet) into a batch.

Columns: ``item``, ``input``, ``system``, ``measure``, ``value`` and optionally ``rater`` and
``kind``; other columns are ignored. One row per value. Rows with a rater are human ratings
(table ``ratings``); rows without one are item-level scores (table ``scores``). A measure's kind
is its ``kind`` cell (``human``, ``metric`` or ``llm-judge``; the same on all its rows) or, where
the column is absent or empty, ``human`` if it has rater rows and ``metric`` otherwise; item-level
human scores (averaged expert ratings) thus need ``kind`` = ``human``. Measures already in the
store keep their catalogue attributes, and must keep their kind. This loads other
meta-evaluation studies (SummEval, WMT, ...).
"""

from __future__ import annotations

import io

import polars as pl

from hanna_stats.store import batch as b
from hanna_stats.store.catalogue import HUMAN, LLM_JUDGE, METRIC
from hanna_stats.store.source import Source, csv_records, require_columns

KEYS = ["item", "input", "system", "measure"]
RATER, VALUE, KIND = "rater", "value", "kind"
KINDS = (HUMAN, METRIC, LLM_JUDGE)
PARQUET_SUFFIXES = (".parquet", ".pq")


def _read(source: Source) -> pl.DataFrame:
    """Read the file with every column as text (CSV) or as stored (Parquet)."""
    try:
        if source.path.suffix.lower() in PARQUET_SUFFIXES:
            return pl.read_parquet(io.BytesIO(source.data))
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise source.error(f"cannot read the file: {exc}") from None
    # The csv module, not polars: a short or long row, or a duplicate or empty column name, is
    # refused with its row or column (polars pads a short last row with nulls, silently).
    header, rows = csv_records(source)
    return pl.DataFrame(rows, schema=dict.fromkeys(header, pl.String), orient="row")


def _first_row(df: pl.DataFrame, mask: pl.Expr) -> dict | None:
    """The first row (as a dict, with its ``row`` number) where ``mask`` holds."""
    hit = df.filter(mask).head(1)
    return hit.row(0, named=True) if hit.height else None


def _text_column(source: Source, df: pl.DataFrame, name: str, *, required: bool) -> pl.Series:
    """A column as stripped text; empty text is null; nulls refused when ``required``."""
    text = pl.col(name).cast(pl.String).str.strip_chars()
    try:
        series = df.select(pl.when(text == "").then(None).otherwise(text).alias(name)).to_series()
    except pl.exceptions.PolarsError:
        raise source.error(f"expected text, got {df[name].dtype}", column=name) from None
    if required and series.null_count():
        row = int(series.is_null().arg_true()[0]) + 1
        raise source.error("missing value", row=row, column=name)
    return series


def _values(source: Source, df: pl.DataFrame) -> pl.Series:
    """The value column as float64, NaN as null; text that is not a number is refused."""
    raw = df[VALUE]
    if raw.dtype == pl.String:
        cleaned = raw.str.strip_chars()
        values = cleaned.cast(pl.Float64, strict=False)
        bad = values.is_null() & cleaned.is_not_null() & (cleaned != "")
        if bad.any():
            row = int(bad.arg_true()[0])
            raise source.error(f"expected a number, got {raw[row]!r}", row=row + 1, column=VALUE)
    elif raw.dtype.is_numeric():
        values = raw.cast(pl.Float64)
    else:
        raise source.error(f"expected numbers, got {raw.dtype}", column=VALUE)
    if values.is_infinite().any():
        row = int(values.is_infinite().arg_true()[0])
        raise source.error(f"expected a finite number, got {raw[row]!r}", row=row + 1, column=VALUE)
    return values.fill_nan(None)


def _check_unique(source: Source, df: pl.DataFrame, by: list[str], what: str) -> None:
    """Refuse a second row with the same ``by`` values."""
    dup = _first_row(df, ~pl.struct(by).is_first_distinct())
    if dup is not None:
        first = _first_row(df, pl.all_horizontal(pl.col(c).eq_missing(dup[c]) for c in by))
        key = ", ".join(f"{c}={dup[c]!r}" for c in by)
        raise source.error(f"duplicate {what} ({key}; also row {first['row']})", row=dup["row"])


def _check_functional(source: Source, df: pl.DataFrame, key: list[str], value: list[str]) -> None:
    """Refuse a ``key`` that maps to more than one ``value`` combination."""
    pairs = df.unique(subset=key + value, keep="first", maintain_order=True)
    clash = _first_row(pairs, ~pl.struct(key).is_first_distinct())
    if clash is not None:
        first = _first_row(pairs, pl.all_horizontal(pl.col(c).eq_missing(clash[c]) for c in key))
        shown = ", ".join(f"{c}={clash[c]!r}" for c in key)
        theirs = ", ".join(f"{c}={first[c]!r}" for c in value)
        ours = ", ".join(f"{c}={clash[c]!r}" for c in value)
        raise source.error(
            f"duplicate item: {shown} has {ours} here but {theirs} in row {first['row']}",
            row=clash["row"],
        )


def _kinds(source: Source, df: pl.DataFrame, rated: pl.DataFrame) -> dict[str, str]:
    """Each measure's kind: declared in the ``kind`` column, else inferred from the rows with a
    rater (``rated``; see the module)."""
    declared = df.filter(pl.col(KIND).is_not_null())
    unknown = _first_row(declared, ~pl.col(KIND).is_in(KINDS))
    if unknown is not None:
        allowed = ", ".join(map(repr, KINDS))
        raise source.error(
            f"unknown kind {unknown[KIND]!r}; expected one of {allowed}",
            row=unknown["row"],
            column=KIND,
        )
    clash = _first_row(declared, pl.col(KIND).n_unique().over("measure") > 1)
    if clash is not None:
        first = _first_row(declared, pl.col("measure") == clash["measure"])
        other = _first_row(
            declared, (pl.col("measure") == clash["measure"]) & (pl.col(KIND) != first[KIND])
        )
        raise source.error(
            f"measure {clash['measure']!r} has kind {other[KIND]!r} here but {first[KIND]!r} "
            f"in row {first['row']}",
            row=other["row"],
            column=KIND,
        )
    rated_metric = _first_row(declared, pl.col(RATER).is_not_null() & (pl.col(KIND) != HUMAN))
    if rated_metric is not None:
        raise source.error(
            f"a rater-level value of measure {rated_metric['measure']!r}, of kind "
            f"{rated_metric[KIND]!r}: rows with a rater are human ratings (kind 'human')",
            row=rated_metric["row"],
            column=KIND,
        )
    human = set(rated["measure"].unique().to_list())
    kinds = dict(declared.select("measure", KIND).unique("measure").iter_rows())
    return {
        m: kinds.get(m, HUMAN if m in human else METRIC)
        for m in df["measure"].unique(maintain_order=True)
    }


def _ordered(series: pl.Series) -> list[str]:
    """Distinct values in order of first appearance."""
    return series.unique(maintain_order=True).to_list()


def parse_tidy(source: Source, *, human_system: str | None = None) -> b.Batch:
    """Validate a tidy score file and build its batch.

    Parameters
    ----------
    source : Source
        CSV (UTF-8, header row) or Parquet (by suffix ``.parquet`` / ``.pq``).
    human_system : str, optional
        Name of the system holding human-written outputs (flagged ``is_human``); it must occur
        in the file.

    Returns
    -------
    Batch
        Positions of new systems, inputs and measures follow their first appearance in the file,
        after those already stored.

    Raises
    ------
    InputError
        Missing column, no data rows, a missing key, a non-numeric value, an unknown kind or a
        measure with two kinds, a kind other than human on a rater row, a rating without a
        value, a duplicate row (item, measure[, rater]), an item with two (input, system), an
        (input, system) with two items, a measure named like a key column of ``scores_wide``, or
        ``human_system`` absent.
    """
    df = _read(source)
    require_columns(source, df.columns, [*KEYS, VALUE])
    if df.height == 0:
        raise source.error("no data rows (only a header)")
    has_rater = RATER in df.columns
    columns = {name: _text_column(source, df, name, required=True) for name in KEYS}
    columns[RATER] = (
        _text_column(source, df, RATER, required=False)
        if has_rater
        else pl.Series(RATER, [None] * df.height, pl.String)
    )
    columns[KIND] = (
        _text_column(source, df, KIND, required=False)
        if KIND in df.columns
        else pl.Series(KIND, [None] * df.height, pl.String)
    )
    columns[VALUE] = _values(source, df)
    df = pl.DataFrame(columns).with_row_index("row", offset=1)

    rated = df.filter(pl.col(RATER).is_not_null())
    missing = _first_row(rated, pl.col(VALUE).is_null())
    if missing is not None:
        raise source.error("a rating needs a value", row=missing["row"], column=VALUE)
    reserved = _first_row(df, pl.col("measure").is_in(b.WIDE_RESERVED))
    if reserved is not None:
        raise source.error(
            f"measure name {reserved['measure']!r} is reserved (a key column of scores_wide)",
            row=reserved["row"],
            column="measure",
        )
    _check_unique(source, df, ["item", "measure", RATER], "row")
    _check_functional(source, df, ["item"], ["input", "system"])
    _check_functional(source, df, ["input", "system"], ["item"])
    systems = _ordered(df["system"])
    if human_system is not None and human_system not in systems:
        raise source.error(f"human system {human_system!r} not found", column="system")

    inputs = _ordered(df["input"])
    kinds = _kinds(source, df, rated)
    items = (
        df.group_by("item", maintain_order=True)
        .agg(pl.col("input").first(), pl.col("system").first(), pl.col("row").first())
        .rename({"item": "name"})
    )
    scores = df.filter(pl.col(RATER).is_null())
    return b.Batch(
        systems=b.frame(
            b.SYSTEMS,
            {
                "name": systems,
                "is_human": [s == human_system for s in systems],
                "position": list(range(len(systems))),
            },
        ),
        inputs=b.frame(b.INPUTS, {"name": inputs, "position": list(range(len(inputs)))}),
        items=b.frame(b.ITEMS, items.to_dict()),
        measures=b.frame(
            b.MEASURES,
            {
                "name": list(kinds),
                "kind": list(kinds.values()),
                "position": list(range(len(kinds))),
            },
        ),
        raters=b.frame(
            b.RATERS,
            {"name": _ordered(rated[RATER]), "kind": ["person"] * rated[RATER].n_unique()},
        ),
        scores=b.frame(b.SCORES, scores.select("item", "measure", VALUE).to_dict()),
        ratings=b.frame(
            b.RATINGS,
            rated.select("item", RATER, "measure", pl.col(VALUE).alias("score"), "row").to_dict(),
        ),
        replace_measures=False,
        relative_positions=True,
    )
