"""Parse and validate a generic tidy score file (CSV or Parquet) into a batch.

Columns: ``item``, ``input``, ``system``, ``measure``, ``value``; optional ones below; other
columns are ignored. One row per value. Rows with a ``rater`` are rater-level values (table
``ratings``): a person's rating of a human criterion, or one try of an LLM judge (a judge's
repeated tries are its raters: rater ``1``, ``2``, ...); rows without one are item-level scores
(table ``scores``). An item's value of a measure with raters is the mean of its raters.

Optional columns describing the measure (the same on every row of a measure; empty = not
given):

- ``kind``: ``human``, ``metric`` or ``llm-judge``. Where not given: ``human`` if the ingest
  names the measure human (``human_measures``, CLI ``--human``), else ``llm-judge`` if the
  measure names a ``judge``, else ``human`` if it has rater rows, else ``metric``; item-level
  human scores (averaged expert ratings) thus need ``kind`` = ``human`` or ``--human``. Metrics
  take no rater.
- ``criterion``: the human criterion an LLM-judge measure rates (the name of a human measure).
- ``judge``: the LLM judge (e.g. ``Beluga-13B``); ``prompt_variant``: its prompt (e.g. ``1``).
- ``scale`` (``likert``, ``integer`` or ``continuous``), ``scale_min``, ``scale_max``: the
  measure's scale (see :mod:`hanna_stats.store.scales`; bounds without a scale: Likert). The
  ingest may declare a Likert scale for a measure instead (``scales``, CLI ``--scale
  NAME=LO..HI``), as if these columns said so.

A human measure that declares no scale gets one inferred from its values, so that a later file's
rating outside it is refused and the ingest summary shows it: Likert when its rater-level values
(with none, its item-level values) are whole numbers, from 1 (or the smallest value, if below 1)
to the largest value (at least one above the lower bound); else continuous from the smallest to
the largest value. A measure already in the store keeps its stored scale.

Per-try judge answers: one row per item, judge measure and try, ``rater`` = the try, ``value``
= the rating read from the answer (empty when the answer held none), ``answer`` = the raw answer
text (optional; rater rows only). A human rating needs a value; a judge's try needs a value or an
answer. Measures already in the store keep their catalogue attributes, and must keep their kind.
This loads other meta-evaluation studies (SummEval, WMT, ...). Tidy files carry no texts (no
output, input or reference text: a ``reference`` column is ignored like any other), so they
write no ``item_references``; texts come from the study's own ingest or ``score --input``. A CSV
file may be gzip-compressed (``scores.csv.gz``), as may a Parquet file; names (every text column but
``answer``) may not hold control characters.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence

import polars as pl

from hanna_stats.store import batch as b
from hanna_stats.store.catalogue import CONTINUOUS, HUMAN, LIKERT, LLM_JUDGE, METRIC, SCALES
from hanna_stats.store.source import (
    CONTROL_CHARACTERS,
    Source,
    check_name,
    csv_records,
    require_columns,
    shorten,
)

KEYS = ["item", "input", "system", "measure"]
RATER, VALUE, KIND, ANSWER = "rater", "value", "kind", "answer"
KINDS = (HUMAN, METRIC, LLM_JUDGE)
#: Optional text columns describing a measure -> catalogue column.
DESCRIBING = {
    KIND: "kind",
    "criterion": "criterion",
    "judge": "judge",
    "prompt_variant": "variant",
    "scale": "scale",
}
BOUNDS = ("scale_min", "scale_max")
PARQUET_SUFFIXES = (".parquet", ".pq")


def _read(source: Source) -> pl.DataFrame:
    """Read the file with every column as text (CSV) or as stored (Parquet)."""
    try:
        if source.content_path.suffix.lower() in PARQUET_SUFFIXES:
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
    """A column as stripped text; empty text is null; nulls refused when ``required``; a name
    (any column but ``answer``) holding a control character refused."""
    text = pl.col(name).cast(pl.String).str.strip_chars()
    try:
        series = df.select(pl.when(text == "").then(None).otherwise(text).alias(name)).to_series()
    except pl.exceptions.PolarsError:
        raise source.error(f"expected text, got {df[name].dtype}", column=name) from None
    if required and series.null_count():
        row = int(series.is_null().arg_true()[0]) + 1
        raise source.error("missing value", row=row, column=name)
    if name != ANSWER:
        control = series.str.contains(CONTROL_CHARACTERS).fill_null(False)
        if control.any():
            row = int(control.arg_true()[0])
            check_name(source, series[row], row=row + 1, column=name)
    return series


def _numbers(source: Source, df: pl.DataFrame, column: str = VALUE) -> pl.Series:
    """A numeric column as float64, NaN as null; text that is not a number is refused."""
    raw = df[column]
    if raw.dtype == pl.String:
        cleaned = raw.str.strip_chars()
        values = cleaned.cast(pl.Float64, strict=False)
        bad = values.is_null() & cleaned.is_not_null() & (cleaned != "")
        if bad.any():
            row = int(bad.arg_true()[0])
            shown = shorten(repr(raw[row]))
            raise source.error(f"expected a number, got {shown}", row=row + 1, column=column)
    elif raw.dtype.is_numeric() or raw.dtype == pl.Null:
        values = raw.cast(pl.Float64)
    else:
        raise source.error(f"expected numbers, got {raw.dtype}", column=column)
    if values.is_infinite().any():
        row = int(values.is_infinite().arg_true()[0])
        raise source.error(
            f"expected a finite number, got {shorten(repr(raw[row]))}", row=row + 1, column=column
        )
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


def _per_measure(source: Source, df: pl.DataFrame, column: str) -> dict[str, object]:
    """Each measure's value of a describing ``column`` (measures without one left out);
    refused where a measure has two values."""
    declared = df.filter(pl.col(column).is_not_null())
    clash = _first_row(declared, pl.col(column).n_unique().over("measure") > 1)
    if clash is not None:
        first = _first_row(declared, pl.col("measure") == clash["measure"])
        other = _first_row(
            declared, (pl.col("measure") == clash["measure"]) & (pl.col(column) != first[column])
        )
        raise source.error(
            f"measure {clash['measure']!r} has {column} {other[column]!r} here but "
            f"{first[column]!r} in row {first['row']}",
            row=other["row"],
            column=column,
        )
    return dict(declared.select("measure", column).unique("measure").iter_rows())


def _check_choices(source: Source, df: pl.DataFrame, column: str, choices: tuple) -> None:
    unknown = _first_row(df, pl.col(column).is_not_null() & ~pl.col(column).is_in(choices))
    if unknown is not None:
        allowed = ", ".join(map(repr, choices))
        raise source.error(
            f"unknown {column} {shorten(repr(unknown[column]))}; expected one of {allowed}",
            row=unknown["row"],
            column=column,
        )


def _check_human(source: Source, df: pl.DataFrame, human_measures: tuple[str, ...]) -> None:
    """Refuse a measure named human that the file lacks or gives another kind."""
    names = set(df["measure"].unique().to_list())
    for m in human_measures:
        if m not in names:
            raise source.error(
                f"measure {m!r}, named human (--human), is not in the file", column="measure"
            )
    other = _first_row(df, pl.col("measure").is_in(human_measures) & (pl.col(KIND) != HUMAN))
    if other is not None:
        raise source.error(
            f"measure {other['measure']!r} is named human (--human) but has kind "
            f"{other[KIND]!r} here",
            row=other["row"],
            column=KIND,
        )


def parse_scale(text: str) -> tuple[str, tuple[float, float]]:
    """``"NAME=LO..HI"`` (CLI ``ingest --scale``) -> ``(NAME, (LO, HI))``, checked as
    :func:`check_scale` does; ValueError saying the expected form otherwise.

    Examples
    --------
    >>> parse_scale("Fluency=1..5")
    ('Fluency', (1.0, 5.0))
    """
    name, _, bounds = text.rpartition("=")
    lo, dots, hi = bounds.partition("..")
    try:
        pair = (float(lo), float(hi)) if dots else None
    except ValueError:
        pair = None
    if not name.strip() or pair is None:
        raise ValueError(f"expected NAME=LO..HI (e.g. Fluency=1..5); got {text!r}")
    return check_scale(name.strip(), pair)


def check_scale(name: str, bounds: tuple[float, float]) -> tuple[str, tuple[float, float]]:
    """A declared Likert scale ``(name, (lo, hi))`` if ``lo`` < ``hi`` are finite numbers;
    else ValueError."""
    lo, hi = bounds
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(
            f"the scale of {name!r} must be LO..HI with finite numbers LO < HI; got {lo!r}..{hi!r}"
        )
    return name, (float(lo), float(hi))


def _declare(
    source: Source, df: pl.DataFrame, given: dict[str, dict], scales: dict[str, tuple]
) -> None:
    """Put the declared Likert scales (``--scale``) into ``given``: refused for a measure the
    file lacks or whose ``scale``, ``scale_min`` or ``scale_max`` column says otherwise."""
    names = set(df["measure"].unique().to_list())
    for m, (lo, hi) in scales.items():
        if m not in names:
            raise source.error(
                f"measure {m!r}, given a scale (--scale), is not in the file", column="measure"
            )
        for column, value in (("scale", LIKERT), (BOUNDS[0], lo), (BOUNDS[1], hi)):
            stated = given[column].get(m)
            if stated is not None and stated != value:
                row = _first_row(df, (pl.col("measure") == m) & pl.col(column).is_not_null())
                raise source.error(
                    f"measure {m!r} is declared Likert {lo:g}..{hi:g} (--scale) but has "
                    f"{column} {stated!r} here",
                    row=row["row"],
                    column=column,
                )
            given[column][m] = value


def _infer_scales(df: pl.DataFrame, measures: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """``measures`` with a scale for each human measure that declares none, from its values
    (see the module), and the names of those measures."""
    undeclared = measures.filter(
        (pl.col("kind") == HUMAN)
        & pl.col("scale").is_null()
        & pl.col(BOUNDS[0]).is_null()
        & pl.col(BOUNDS[1]).is_null()
    )["name"]
    value, rated = pl.col(VALUE), pl.col(RATER).is_not_null()
    whole = value == value.round(0)
    inferred = (
        df.filter(pl.col("measure").is_in(undeclared.to_list()) & value.is_not_null())
        .group_by("measure", maintain_order=True)
        .agg(
            low=value.min(),
            high=value.max(),
            likert=pl.when(rated.any()).then((whole | ~rated).all()).otherwise(whole.all()),
        )
        .with_columns(
            scale=pl.when("likert").then(pl.lit(LIKERT)).otherwise(pl.lit(CONTINUOUS)),
            lo=pl.when("likert").then(pl.min_horizontal(1.0, pl.col("low").floor())),
        )
        .with_columns(
            lo=pl.col("lo").fill_null(pl.col("low")),
            hi=pl.when("likert")
            .then(pl.max_horizontal(pl.col("high").ceil(), pl.col("lo") + 1))
            .otherwise(pl.col("high")),
        )
        .select(pl.col("measure").alias("name"), "scale", "lo", "hi")
    )
    if inferred.is_empty():
        return measures, []
    filled = measures.join(inferred, on="name", how="left", maintain_order="left").select(
        *(pl.col(c) for c in measures.columns if c not in ("scale", *BOUNDS)),
        pl.coalesce("scale", "scale_right").alias("scale"),
        pl.coalesce(BOUNDS[0], "lo").alias(BOUNDS[0]),
        pl.coalesce(BOUNDS[1], "hi").alias(BOUNDS[1]),
    )
    return filled.select(measures.columns), inferred["name"].to_list()


def _describe(
    source: Source,
    df: pl.DataFrame,
    human_measures: tuple[str, ...],
    scales: dict[str, tuple[float, float]],
) -> tuple[pl.DataFrame, list[str]]:
    """The catalogue rows of the file's measures (name, kind, criterion, judge, variant, scale,
    bounds), checked, and the names of the measures whose scale was inferred; kinds and the
    scales of human measures inferred where not given (see the module)."""
    _check_choices(source, df, KIND, KINDS)
    _check_choices(source, df, "scale", SCALES)
    _check_human(source, df, human_measures)
    given = {c: _per_measure(source, df, c) for c in (*DESCRIBING, *BOUNDS)}
    _declare(source, df, given, scales)
    human = set(df.filter(pl.col(RATER).is_not_null())["measure"].unique().to_list())
    names = df["measure"].unique(maintain_order=True).to_list()

    def kind(m: str) -> str:
        if m in given[KIND]:
            return given[KIND][m]
        if m in human_measures:
            return HUMAN
        return LLM_JUDGE if m in given["judge"] else HUMAN if m in human else METRIC

    rows = {
        "name": names,
        **{target: [given[c].get(m) for m in names] for c, target in DESCRIBING.items()},
        **{c: [given[c].get(m) for m in names] for c in BOUNDS},
        "kind": [kind(m) for m in names],
    }
    measures = pl.DataFrame(rows).with_columns(
        scale=pl.when(
            pl.col("scale").is_null()
            & pl.col(BOUNDS[0]).is_not_null()
            & pl.col(BOUNDS[1]).is_not_null()
        )
        .then(pl.lit(LIKERT))
        .otherwise(pl.col("scale"))
    )
    first_row = dict(df.group_by("measure").agg(pl.col("row").min()).iter_rows())
    for m, scale, lo, hi in measures.select("name", "scale", *BOUNDS).iter_rows():
        if scale == LIKERT and (lo is None or hi is None):
            raise source.error(
                f"measure {m!r}: a Likert scale needs scale_min and scale_max",
                row=first_row[m],
                column="scale",
            )
        if lo is not None and hi is not None and lo >= hi:
            raise source.error(
                f"measure {m!r}: scale_min {lo:g} is not below scale_max {hi:g}",
                row=first_row[m],
                column="scale_max",
            )
    rated = df.filter(pl.col(RATER).is_not_null())
    kinds = dict(measures.select("name", "kind").iter_rows())
    metric = _first_row(rated, pl.col("measure").replace_strict(kinds) == METRIC)
    if metric is not None:
        raise source.error(
            f"a rater-level value of measure {metric['measure']!r}, of kind 'metric': rows with "
            "a rater are ratings of a human criterion or tries of an LLM judge (kind 'human' or "
            "'llm-judge')",
            row=metric["row"],
            column=KIND,
        )
    return _infer_scales(df, measures)


def _scale_note(measures: pl.DataFrame, inferred: list[str]) -> tuple[str, ...]:
    """The ingest summary's note on the scales inferred for the measures ``inferred``."""
    if not inferred:
        return ()
    rows = measures.filter(pl.col("name").is_in(inferred)).select("name", "scale", *BOUNDS)
    scales = ", ".join(f"{m} {scale} {lo:g}..{hi:g}" for m, scale, lo, hi in rows.iter_rows())
    return (
        f"scales inferred from the values (none declared; a measure already in the store keeps "
        f"its own; declare one with --scale NAME=LO..HI): {scales}",
    )


def _ordered(series: pl.Series) -> list[str]:
    """Distinct values in order of first appearance."""
    return series.unique(maintain_order=True).to_list()


def parse_tidy(
    source: Source,
    *,
    human_system: str | None = None,
    human_measures: Sequence[str] = (),
    scales: Mapping[str, tuple[float, float]] | None = None,
) -> b.Batch:
    """Validate a tidy score file and build its batch.

    Parameters
    ----------
    source : Source
        CSV (UTF-8, header row) or Parquet (by suffix ``.parquet`` / ``.pq``).
    human_system : str, optional
        Name of the system holding human-written outputs (flagged ``is_human``); it must occur
        in the file.
    human_measures : sequence of str
        Measures of kind ``human`` (CLI ``--human``), as if their rows had ``kind`` = ``human``;
        each must occur in the file, and no row may give it another kind.
    scales : mapping of str to (float, float), optional
        Declared Likert scales (CLI ``--scale NAME=LO..HI``), measure -> (LO, HI), as if its
        rows had ``scale_min`` = LO and ``scale_max`` = HI; each must occur in the file, and no
        row may declare another scale.

    Returns
    -------
    Batch
        Positions of new systems, inputs and measures follow their first appearance in the file,
        after those already stored; ``notes`` names the human measures whose scale was inferred
        from their values (none declared) and the scales.

    Raises
    ------
    InputError
        Missing column, no data rows, a missing key, a non-numeric value or bound, an unknown
        kind or scale, a measure with two kinds (or two of any describing value), a rater row of
        a metric, a human rating without a value, a judge's try with neither value nor answer,
        an answer without a rater, a Likert scale without bounds, a duplicate row (item,
        measure[, rater]), an item with two (input, system), an (input, system) with two items,
        a measure named like a key column of ``scores_wide``, ``human_system`` absent, a
        measure of ``human_measures`` absent or of another kind in the ``kind`` column, a
        measure of ``scales`` absent or declared otherwise in the file, or a name holding a
        control character.
    ValueError
        If a scale of ``scales`` is not finite ``LO < HI``.
    """
    if isinstance(human_measures, str):
        raise ValueError(f"human_measures must be a sequence of names; got {human_measures!r}")
    declared = dict(check_scale(m, bounds) for m, bounds in (scales or {}).items())
    df = _read(source)
    require_columns(source, df.columns, [*KEYS, VALUE])
    if df.height == 0:
        raise source.error("no data rows (only a header)")
    columns = {name: _text_column(source, df, name, required=True) for name in KEYS}
    for name in (RATER, ANSWER, *DESCRIBING):
        columns[name] = (
            _text_column(source, df, name, required=False)
            if name in df.columns
            else pl.Series(name, [None] * df.height, pl.String)
        )
    for name in (VALUE, *BOUNDS):
        columns[name] = (
            _numbers(source, df, name)
            if name in df.columns
            else pl.Series(name, [None] * df.height, pl.Float64)
        )
    df = pl.DataFrame(columns).with_row_index("row", offset=1)

    stray = _first_row(df, pl.col(ANSWER).is_not_null() & pl.col(RATER).is_null())
    if stray is not None:
        raise source.error(
            "an answer belongs to a rater-level row (one try of a judge): give its rater",
            row=stray["row"],
            column=RATER,
        )
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
    measures, inferred = _describe(source, df, tuple(human_measures), declared)
    kinds = dict(measures.select("name", "kind").iter_rows())
    rated = df.filter(pl.col(RATER).is_not_null())
    missing = _first_row(
        rated,
        pl.col(VALUE).is_null()
        & (pl.col(ANSWER).is_null() | (pl.col("measure").replace_strict(kinds) == HUMAN)),
    )
    if missing is not None:
        need = "a rating needs a value" + (
            "" if kinds[missing["measure"]] == HUMAN else " (a judge's try: or its answer)"
        )
        raise source.error(need, row=missing["row"], column=VALUE)
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
            b.MEASURES, measures.with_row_index("position").cast({"position": pl.Int64}).to_dict()
        ),
        raters=b.frame(
            b.RATERS,
            {"name": _ordered(rated[RATER]), "kind": ["person"] * rated[RATER].n_unique()},
        ),
        scores=b.frame(b.SCORES, scores.select("item", "measure", VALUE, "row").to_dict()),
        ratings=b.frame(
            b.RATINGS,
            rated.select(
                "item", RATER, "measure", pl.col(VALUE).alias("score"), ANSWER, "row"
            ).to_dict(),
        ),
        replace_measures=False,
        relative_positions=True,
        notes=_scale_note(measures, inferred),
    )
