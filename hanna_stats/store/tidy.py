"""Validate a generic tidy score file (CSV or Parquet) and stage it for the write, in bounded
memory.

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

Optional column describing the input (empty = not given):

- ``subset``: the sub-study the input belongs to (e.g. a language pair or a dataset name; column
  ``inputs.subset``, as a WMT store's language pairs), so that the analyses run on each subset
  (the default, ``subsets="each"``), on one (``Study.subset(subset=...)``, CLI
  ``--subset LABEL``) or on the subsets pooled (``subsets="pooled"``, CLI ``--pool-subsets``).
  An input is in one subset: the rows of an input that give one give the same. An input
  already in the store keeps its subset: a file that gives it another is refused (one may give
  a subset to a stored input that has none).

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

How it is read (:meth:`TidyFile.stage`): DuckDB reads the file in the store's connection
(``read_parquet``; a CSV file is first parsed by Python's ``csv`` module, as every CSV file of the
store is, into temporary Parquet parts) and each check is a query that returns the first
offending row, row numbers in the file's order. Names are checked and stripped once per distinct
value, the rows are grouped by item (with input, system and subset) and by measure (with rater
and describing columns), and scores and ratings are views of the file that the write reads
again: memory grows with the items and measures of the file, not with its rows (see
``benchmarks/ingest.py``).
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from operator import itemgetter
from pathlib import Path

import duckdb
import polars as pl

from hanna_stats.store import batch as b
from hanna_stats.store.catalogue import CONTINUOUS, HUMAN, LIKERT, LLM_JUDGE, METRIC, SCALES
from hanna_stats.store.source import (
    CONTROL_CHARACTERS,
    FileSource,
    check_name,
    iter_csv,
    require_columns,
    shorten,
)

KEYS = ["item", "input", "system", "measure"]
RATER, VALUE, KIND, ANSWER, SUBSET = "rater", "value", "kind", "answer", "subset"
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
#: Columns read as text (names; ``answer`` is no name) and as numbers, in the order checked.
TEXT = [*KEYS, SUBSET, RATER, ANSWER, *DESCRIBING]
NUMBERS = [VALUE, *BOUNDS]
#: Data rows of a CSV file per temporary Parquet part (see :meth:`TidyFile.stage`).
CSV_PART_ROWS = 100_000
#: Unicode's White_Space characters, stripped around every text cell (as by polars and Rust's
#: ``str::trim``), as a character class of RE2, DuckDB's regular expressions.
WHITESPACE = (
    r"[\t-\r \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]"
)
#: Most measures a file without raters may have for its duplicate rows to be found with the
#: items, from a mask of bits per item.
MASK_BITS = 64
#: Largest key space (items x (measure, rater) pairs, times DuckDB's threads) checked for
#: duplicate rows with one bit per key; a larger one is checked by grouping the rows.
DUPLICATE_BITS = 2**28
_NUMERIC = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
            "UINTEGER", "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", '"NULL"'}  # fmt: skip
_SQL_TYPES = {pl.String: "VARCHAR", pl.Int64: "BIGINT", pl.Float64: "DOUBLE", pl.Boolean: "BOOLEAN"}
# The connection's objects a staged tidy file uses (views, then tables), dropped afterwards.
_VIEWS = ("_hs_t_rows", "_hs_scores_given", "_hs_ratings_given")
_TABLES = ("_hs_t_triples", "_hs_t_items", "_hs_t_groups", "_hs_t_odd", "_hs_t_groups_n",
           "_hs_t_pairs", "_hs_t_item_index", "_hs_t_combo_index", "_hs_t_suspects",
           "_hs_systems", "_hs_inputs", "_hs_items", "_hs_measures", "_hs_raters",
           "_hs_given_scores", "_hs_references")  # fmt: skip


def _literal(text: str) -> str:
    """``text`` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _text(column: str) -> str:
    """SQL: a cell as text, surrounding white space stripped, empty text NULL (run on distinct
    cells: a regular expression costs a few hundred nanoseconds a cell)."""
    text = f"CAST({column} AS VARCHAR)"
    return (
        f"CASE WHEN regexp_matches({text}, '^{WHITESPACE}|{WHITESPACE}$') "
        f"THEN nullif(regexp_replace({text}, '^{WHITESPACE}+|{WHITESPACE}+$', '', 'g'), '') "
        f"ELSE nullif({text}, '') END"
    )


def _number(column: str, dtype: str) -> tuple[str, str]:
    """SQL: a cell of a column of DuckDB type ``dtype`` as a DOUBLE (NULL where empty or not a
    number; NaN kept), and whether the cell is text that is not a number (as polars reads
    numbers: ``1_000`` is none)."""
    if dtype != "VARCHAR":
        numeric = dtype in _NUMERIC or dtype.startswith("DECIMAL")
        return (f"CAST({column} AS DOUBLE)" if numeric else "NULL::DOUBLE"), "false"
    cleaned = _text(column)  # only where the cell as it is does not parse
    parsed = (
        f"CASE WHEN contains({column}, '_') THEN NULL "
        f"ELSE coalesce(TRY_CAST({column} AS DOUBLE), TRY_CAST({cleaned} AS DOUBLE)) END"
    )
    return parsed, f"CASE WHEN {parsed} IS NULL THEN {cleaned} IS NOT NULL ELSE false END"


def _missing_nan(parsed: str) -> str:
    """SQL: ``parsed`` with NaN as NULL (missing)."""
    return f"CASE WHEN isnan({parsed}) THEN NULL ELSE {parsed} END"


def _relation(schema: dict[str, pl.DataType], given: Mapping[str, str]) -> str:
    """SQL select list: the columns of ``schema`` (a :mod:`~hanna_stats.store.batch` constant)
    from the expressions ``given``, NULL for the others."""
    return ", ".join(
        f'CAST({given.get(c, "NULL")} AS {_SQL_TYPES[dtype]}) AS "{c}"'
        for c, dtype in schema.items()
    )


def _first_row(df: pl.DataFrame, mask: pl.Expr) -> dict | None:
    """The first row (as a dict, with its ``row`` number) where ``mask`` holds."""
    hit = df.filter(mask).head(1)
    return hit.row(0, named=True) if hit.height else None


def _per_measure(source: FileSource, df: pl.DataFrame, column: str) -> dict[str, object]:
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


def _check_choices(source: FileSource, df: pl.DataFrame, column: str, choices: tuple) -> None:
    unknown = _first_row(df, pl.col(column).is_not_null() & ~pl.col(column).is_in(choices))
    if unknown is not None:
        allowed = ", ".join(map(repr, choices))
        raise source.error(
            f"unknown {column} {shorten(repr(unknown[column]))}; expected one of {allowed}",
            row=unknown["row"],
            column=column,
        )


def _check_human(source: FileSource, df: pl.DataFrame, human_measures: tuple[str, ...]) -> None:
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
    source: FileSource, df: pl.DataFrame, given: dict[str, dict], scales: dict[str, tuple]
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


def _undeclared(measures: pl.DataFrame) -> list[str]:
    """The human measures of ``measures`` that declare no scale."""
    return measures.filter(
        (pl.col("kind") == HUMAN)
        & pl.col("scale").is_null()
        & pl.col(BOUNDS[0]).is_null()
        & pl.col(BOUNDS[1]).is_null()
    )["name"].to_list()


def _infer_scales(values: pl.DataFrame, measures: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """``measures`` with a scale for each human measure that declares none
    (:func:`_undeclared`), from its values (see the module; ``values``: per measure of those
    and rater-level or not (``rated``), the smallest and largest value and whether all are
    whole numbers), and the names of those measures."""
    whole, rated = pl.col("whole"), pl.col("rated")
    inferred = (
        values.filter(pl.col("measure").is_in(_undeclared(measures)))
        .group_by("measure", maintain_order=True)
        .agg(
            pl.col("low").min(),
            pl.col("high").max(),
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
    source: FileSource,
    df: pl.DataFrame,
    human_measures: tuple[str, ...],
    scales: dict[str, tuple[float, float]],
) -> pl.DataFrame:
    """The catalogue rows of the file's measures (name, kind, criterion, judge, variant, scale,
    bounds), checked; kinds inferred where not given (see the module), scales not yet (see
    :func:`_infer_scales`). ``df``: the groups of rows alike in measure, rater and describing
    columns, in the order of their first rows."""
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
    measures = pl.DataFrame(
        rows, schema_overrides={c: pl.Float64 for c in BOUNDS} | {"scale": pl.String}
    ).with_columns(
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
    return measures


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


class TidyFile:
    """A tidy file to write (see :func:`parse_tidy`): :meth:`stage` reads and validates it in
    the store's connection and stages its rows for :func:`~hanna_stats.store.batch.write_batch`.

    Attributes
    ----------
    source : FileSource
        The file.
    n_values : int
        Rows written (scores plus ratings), once staged.
    notes : tuple of str
        The human measures whose scale was inferred from their values, and the scales, once
        staged.
    """

    replace_measures = False
    relative_positions = True
    scale_policy = "error"

    def __init__(
        self,
        source: FileSource,
        human_system: str | None,
        human_measures: tuple[str, ...],
        scales: dict[str, tuple[float, float]],
    ) -> None:
        self.source = source
        self.human_system = human_system
        self.human_measures = human_measures
        self.scales = scales
        self.n_values = 0
        self.notes: tuple[str, ...] = ()

    @contextmanager
    def stage(self, con: duckdb.DuckDBPyConnection, source: FileSource) -> Iterator[None]:
        """Read and validate the file and stage its rows as the relations of
        :data:`~hanna_stats.store.batch.STAGED`, while the context lasts.

        DuckDB reads the file (``read_parquet``; a CSV file is parsed by Python's ``csv``
        module into temporary Parquet parts of :data:`CSV_PART_ROWS` rows) and each check is a
        query that returns its first offending row: memory does not grow with the number of
        rows. Scores and ratings are views of the file, read again by the write.

        Raises
        ------
        InputError
            See :func:`parse_tidy`.
        """
        with (
            self.source.content() as path,
            tempfile.TemporaryDirectory(prefix="hanna-stats-") as parts,
            ExitStack() as scope,
        ):
            try:
                types = self._open(con, path, Path(parts))
                self._validate(con, types, scope)
                yield
            finally:
                for name in _VIEWS:
                    con.execute(f"DROP VIEW IF EXISTS temp.{name}")
                for name in _TABLES:
                    con.execute(f"DROP TABLE IF EXISTS temp.{name}")

    def _scan(self, con: duckdb.DuckDBPyConnection, query: str, params: list | dict | None = None):
        """Run a query that reads the file; DuckDB's failure to read it is the file's error."""
        try:
            return con.execute(query, params).fetchall()
        except (duckdb.IOException, duckdb.InvalidInputException) as exc:
            raise self.source.error(f"cannot read the file: {exc}") from None

    def _open(self, con: duckdb.DuckDBPyConnection, path: Path, parts: Path) -> dict[str, str]:
        """View ``_hs_t_rows`` of the file's rows: ``row`` (1-based) and the columns of
        :data:`TEXT` and :data:`NUMBERS` as stored (NULL where absent); the DuckDB types of
        those present."""
        self._path = path
        self._types: dict[str, str] = {}
        if self.source.content_path.suffix.lower() in PARQUET_SUFFIXES:
            scan = f"read_parquet({_literal(str(path))}, file_row_number = true)"
            header = [r[0] for r in self._scan(con, f"DESCRIBE SELECT * FROM {scan}")]
            row = "file_row_number + 1"
        else:
            header = self._csv_parts(path, parts)
            scan = f"read_parquet({_literal(str(parts / '*.parquet'))})"
            row = '"row"'
        require_columns(self.source, header, [*KEYS, VALUE])
        cells = {c: "NULL::DOUBLE" if c in NUMBERS else "NULL::VARCHAR" for c in (*TEXT, *NUMBERS)}
        cells |= {c: f'"{c}"' for c in cells if c in header}  # as stored
        columns = [f"{cell} AS {c}" for c, cell in cells.items()]
        con.execute(
            f'CREATE OR REPLACE TEMP VIEW _hs_t_rows AS SELECT {row} AS "row", '
            f"{', '.join(columns)} FROM {scan}"
        )
        types = {
            name: dtype
            for name, dtype, *_ in con.execute("DESCRIBE _hs_t_rows").fetchall()
            if name in header
        }
        if not self._scan(con, "SELECT count(*) FROM _hs_t_rows")[0][0]:
            raise self.source.error("no data rows (only a header)")
        self._types = types
        return types

    def _csv_parts(self, path: Path, parts: Path) -> list[str]:
        """Parse a CSV file (:func:`~hanna_stats.store.source.iter_csv`) into Parquet parts of
        its columns of :data:`TEXT` and :data:`NUMBERS`, as text, with the data row number
        ``row``; its header."""
        records = iter_csv(self.source, lambda: path.open("rb"), path.stat().st_size)
        header = next(records)
        kept = [c for c in (*TEXT, *NUMBERS) if c in header]
        if not all(c in header for c in (*KEYS, VALUE)):  # refused once the file is read
            kept = []
        pick = itemgetter(*(header.index(c) for c in kept)) if len(kept) > 1 else None
        chunk: list[tuple] = []
        written = 0

        def flush() -> None:
            nonlocal written
            columns = dict(zip(kept, zip(*chunk, strict=True), strict=True))
            frame = pl.DataFrame({c: pl.Series(c, v, pl.String) for c, v in columns.items()})
            frame = frame.with_columns(
                pl.int_range(written + 1, written + len(chunk) + 1, dtype=pl.Int64).alias("row")
            )
            frame.write_parquet(parts / f"{written:012d}.parquet", compression="snappy")
            written += len(chunk)
            chunk.clear()

        for record in records:
            if pick is not None:
                chunk.append(pick(record))
                if len(chunk) == CSV_PART_ROWS:
                    flush()
        if chunk:
            flush()
        return header

    def _check_text(
        self, con: duckdb.DuckDBPyConnection, types: dict, name: str, relation: str
    ) -> None:
        """A text column: its type; a missing key (first row); a control character in a name."""
        if name not in types:
            return
        dtype = types[name]
        if dtype.endswith("]") or dtype.startswith(("MAP", "UNION")):
            raise self.source.error(f"expected text, got {self._polars_type(name, dtype)}",
                                    column=name)  # fmt: skip
        if name in KEYS:
            query = f'SELECT min("row") FROM {relation} WHERE {name} IS NULL'
            ((row,),) = con.execute(query).fetchall()
            if row is not None:
                raise self.source.error("missing value", row=row, column=name)
        if name != ANSWER:
            ((text, row),) = con.execute(
                f'SELECT arg_min({name}, "row"), min("row") FROM {relation} '
                f"WHERE regexp_matches({name}, {_literal(CONTROL_CHARACTERS)})"
            ).fetchall()
            if row is not None:
                check_name(self.source, text, row=row, column=name)

    def _polars_type(self, name: str, dtype: str) -> str:
        """The type of column ``name`` as polars names it (as the refusals always have), else
        as DuckDB does."""
        try:
            return str(pl.scan_parquet(self._path).collect_schema()[name])
        except Exception:  # only the wording of a refusal depends on it
            return dtype

    def _check_number(self, con: duckdb.DuckDBPyConnection, types: dict, name: str) -> None:
        """A number column: text that is not a number, another type, an infinite value (each
        the first row)."""
        if name not in types:
            return
        dtype = types[name]
        if dtype != "VARCHAR" and dtype not in _NUMERIC and not dtype.startswith("DECIMAL"):
            raise self.source.error(f"expected numbers, got {self._polars_type(name, dtype)}",
                                    column=name)  # fmt: skip
        if name == VALUE:
            bad, infinite = (
                f"SELECT arg_min({c}_value, {c}_row), min({c}_row) FROM _hs_t_groups_n"
                for c in ("bad", "inf")
            )
        else:
            bad, infinite = (
                f'SELECT arg_min({name}_raw, "row"), min("row") FROM _hs_t_groups_n WHERE {flag}'
                for flag in (f"{name}_bad", f"isinf({name})")
            )
        ((raw, row),) = con.execute(bad).fetchall()
        if row is not None:
            raise self.source.error(
                f"expected a number, got {shorten(repr(raw))}", row=row, column=name
            )
        ((raw, row),) = con.execute(infinite).fetchall()
        if row is not None:
            raise self.source.error(
                f"expected a finite number, got {shorten(repr(raw))}", row=row, column=name
            )

    def _validate(
        self, con: duckdb.DuckDBPyConnection, types: dict[str, str], scope: ExitStack
    ) -> None:
        """Every check of :func:`parse_tidy` (and the write's of magnitudes), in their order,
        then the staged relations; DuckDB's memory limited from the first query on (``scope``
        restores it, see :func:`~hanna_stats.store.batch.write_memory`)."""
        source = self.source
        self._groups(con, types)
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _hs_t_combo_index AS SELECT measure_raw, rater_raw, "
            "measure, rater, dense_rank() OVER (ORDER BY measure, rater NULLS FIRST) - 1 AS c "
            "FROM (SELECT DISTINCT measure_raw, rater_raw, measure, rater FROM _hs_t_groups_n)"
        )
        combos = con.execute("SELECT measure_raw, c FROM _hs_t_combo_index").fetchall()
        # Without raters and with few measures, each item's measures are a mask of bits: the
        # duplicate rows are then counted with the items (see _check_unique).
        masked = RATER not in types and types[KEYS[3]] == "VARCHAR" and len(combos) <= MASK_BITS
        mask = "bit_or(1::UBIGINT << list_extract($c, list_position($raw, measure)))"
        # With a subset column, an item's rows are grouped by their subset too (one group where
        # they agree, as they should: see _check_subsets).
        subset = f", {SUBSET}" if SUBSET in types else ""
        self._scan(
            con,
            f"CREATE OR REPLACE TEMP TABLE _hs_t_triples AS SELECT item, input, system{subset}, "
            f'min("row") AS "row", count(*) AS n, {mask if masked else "NULL"} AS mask '
            "FROM _hs_t_rows GROUP BY ALL",
            {"raw": [r for r, _ in combos], "c": [c for _, c in combos]} if masked else None,
        )
        ((n_triples,),) = con.execute("SELECT count(*) FROM _hs_t_triples").fetchall()
        scope.enter_context(b.write_memory(con, n_triples))
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _hs_t_items AS SELECT "
            + ", ".join(f"{_text(c)} AS {c}" for c in KEYS[:3])
            + f", {_text(SUBSET) if subset else 'NULL::VARCHAR'} AS {SUBSET}"
            + ', "row", item AS raw, n, mask FROM _hs_t_triples'
        )
        con.execute("DROP TABLE temp._hs_t_triples")
        for name in (*KEYS[:3], SUBSET):
            self._check_text(con, types, name, "_hs_t_items")
        for name in (KEYS[3], RATER, ANSWER, *DESCRIBING):
            self._check_text(con, types, name, "_hs_t_groups_n")
        for name in NUMBERS:
            self._check_number(con, types, name)
        ((stray,),) = con.execute(
            'SELECT min("row") FROM _hs_t_groups_n WHERE answered AND rater IS NULL'
        ).fetchall()
        if stray is not None:
            raise source.error(
                "an answer belongs to a rater-level row (one try of a judge): give its rater",
                row=stray,
                column=RATER,
            )
        reserved = con.execute(
            'SELECT measure, "row" FROM _hs_t_groups_n WHERE list_contains(?, measure) '
            'ORDER BY "row" LIMIT 1',
            [list(b.WIDE_RESERVED)],
        ).fetchall()
        if reserved:
            raise source.error(
                f"measure name {reserved[0][0]!r} is reserved (a key column of scores_wide)",
                row=reserved[0][1],
                column="measure",
            )
        if subset:
            self._check_subsets(con)
            self._check_stored_subsets(con)
        ((triples, n_items),) = con.execute(
            "SELECT count(*), count(DISTINCT item) FROM _hs_t_items"
        ).fetchall()
        # Each item in one triple (the usual file): its raw cell numbers it, and the triples
        # are the (item, input, system) combinations; else both are found by the text.
        self._check_unique(con, triples == n_items, masked)
        if triples == n_items:
            con.execute("ALTER TABLE temp._hs_t_items RENAME TO _hs_t_pairs")
        else:
            con.execute(
                "CREATE OR REPLACE TEMP TABLE _hs_t_pairs AS SELECT item, input, system, "
                f'max({SUBSET}) AS {SUBSET}, min("row") AS "row" FROM _hs_t_items GROUP BY ALL'
            )
            con.execute("DROP TABLE temp._hs_t_items")
            self._check_functional(con, ["item"], ["input", "system"])
        self._check_functional(con, ["input", "system"], ["item"])
        if (
            self.human_system is not None
            and not con.execute(
                "SELECT count(*) FROM _hs_t_pairs WHERE system = ?", [self.human_system]
            ).fetchall()[0][0]
        ):
            raise source.error(f"human system {self.human_system!r} not found", column="system")
        groups = con.sql(
            "SELECT measure, rater, kind, criterion, judge, prompt_variant, scale, scale_min, "
            'scale_max, answered, "row", null_row FROM _hs_t_groups_n ORDER BY "row"'
        ).pl()
        measures = _describe(source, groups, self.human_measures, self.scales)
        measures, inferred = _infer_scales(self._values(con, _undeclared(measures)), measures)
        kinds = dict(measures.select("name", "kind").iter_rows())
        rated = groups.filter(pl.col(RATER).is_not_null())
        missing = (
            rated.filter(
                pl.col("null_row").is_not_null()
                & (~pl.col("answered") | (pl.col("measure").replace_strict(kinds) == HUMAN))
            )
            .sort("null_row")
            .head(1)
        )
        if missing.height:
            measure, row = missing.row(0)[0], missing["null_row"][0]
            need = "a rating needs a value" + (
                "" if kinds[measure] == HUMAN else " (a judge's try: or its answer)"
            )
            raise source.error(need, row=row, column=VALUE)
        huge = con.execute(
            "SELECT huge_value, measure, huge_row, rater IS NOT NULL FROM _hs_t_groups_n "
            "WHERE huge_row IS NOT NULL ORDER BY rater IS NOT NULL, huge_row LIMIT 1"
        ).fetchall()
        if huge:
            value, measure, row, rating = huge[0]
            ((item,),) = con.execute(
                "SELECT x.item FROM _hs_t_rows r JOIN _hs_t_item_index x ON x.raw = r.item "
                'WHERE r."row" = ?',
                [row],
            ).fetchall()
            raise b.magnitude_error(source, value, measure, item, row, "score" if rating else VALUE)
        self._stage(con, types, measures, rated)
        con.execute("DROP TABLE temp._hs_t_pairs")
        self.notes = _scale_note(measures, inferred)

    def _groups(self, con: duckdb.DuckDBPyConnection, types: dict[str, str]) -> None:
        """Table ``_hs_t_groups_n``: the rows grouped alike in measure, rater and describing
        columns (as stored) and in having an answer, with names as text (NULL where the column
        is absent), bounds as numbers, the group's first row, and the first row of a value that
        is not a number, is infinite, is missing or is beyond
        :data:`~hanna_stats.store.batch.MAX_MAGNITUDE` (and the value), found among the rows
        whose value is none of the finite numbers within it (a second, filtered scan, only where
        the first found such rows)."""
        parsed, bad = _number(VALUE, types[VALUE])
        value = _missing_nan(parsed)
        keys = [c for c in (KEYS[3], RATER, *DESCRIBING, *BOUNDS) if c in types]
        answered = f"{_text(ANSWER)} IS NOT NULL" if ANSWER in types else "false"
        odd = f"NOT coalesce({parsed} BETWEEN -{b.MAX_MAGNITUDE:g} AND {b.MAX_MAGNITUDE:g}, false)"
        grouped = f"SELECT {', '.join(keys)}, {answered} AS answered, "
        self._scan(
            con,
            f'CREATE OR REPLACE TEMP TABLE _hs_t_groups AS {grouped} min("row") AS "row", '
            f"count_if({odd}) AS odd FROM _hs_t_rows GROUP BY ALL",
        )
        huge = f"abs({value}) > {b.MAX_MAGNITUDE:g}"
        details = {
            "bad_row": f'min("row") FILTER (WHERE {bad})',
            "bad_value": f'arg_min(value, "row") FILTER (WHERE {bad})',
            "inf_row": f'min("row") FILTER (WHERE isinf({parsed}))',
            "inf_value": f'arg_min(value, "row") FILTER (WHERE isinf({parsed}))',
            "null_row": f'min("row") FILTER (WHERE {value} IS NULL)',
            "huge_row": f'min("row") FILTER (WHERE {huge})',
            "huge_value": f'arg_min({value}, "row") FILTER (WHERE {huge})',
        }
        if con.execute("SELECT sum(odd) FROM _hs_t_groups").fetchall()[0][0]:
            self._scan(
                con,
                f"CREATE OR REPLACE TEMP TABLE _hs_t_odd AS {grouped} "
                + ", ".join(f"{sql} AS {name}" for name, sql in details.items())
                + f" FROM _hs_t_rows WHERE {odd} GROUP BY ALL",
            )
            same = " AND ".join(f"o.{c} IS NOT DISTINCT FROM g.{c}" for c in [*keys, "answered"])
            found = ", ".join(f"o.{name}" for name in details)
            joined = f"_hs_t_groups g LEFT JOIN _hs_t_odd o ON {same}"
        else:
            found = ", ".join(f"NULL AS {name}" for name in details)
            joined = "_hs_t_groups g"
        stored = {
            c: f"g.{c}" if c in keys else "NULL" for c in (KEYS[3], RATER, *DESCRIBING, *BOUNDS)
        }
        named = [f"{_text(stored[c])} AS {c}" for c in (KEYS[3], RATER, *DESCRIBING)]
        for c in BOUNDS:
            parsed, bad = _number(stored[c], types.get(c, '"NULL"'))
            named.append(f"{_missing_nan(parsed)} AS {c}, {bad} AS {c}_bad, {stored[c]} AS {c}_raw")
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE _hs_t_groups_n AS SELECT {', '.join(named)}, "
            f'g.answered, g."row", {found}, g.measure AS measure_raw, '
            f"{stored[RATER]} AS rater_raw FROM {joined}"
        )

    def _values(self, con: duckdb.DuckDBPyConnection, measures: list[str]) -> pl.DataFrame:
        """Per measure of ``measures`` and rater-level or not (``rated``): the smallest and
        largest value and whether all are whole numbers (the values of the measures whose scale
        is inferred; a scan of the file, only when there are such measures)."""
        if not measures:
            return pl.DataFrame(
                schema={
                    "measure": pl.String,
                    "rated": pl.Boolean,
                    "low": pl.Float64,
                    "high": pl.Float64,
                    "whole": pl.Boolean,
                }
            )
        value = _missing_nan(_number(VALUE, self._types[VALUE])[0])
        return con.sql(
            f"""
            SELECT y.measure, y.rater IS NOT NULL AS rated, min(v) AS low, max(v) AS high,
                   bool_and(v = round(v)) AS whole
            FROM (SELECT measure, rater, {value} AS v FROM _hs_t_rows) r
            JOIN _hs_t_combo_index y ON y.measure_raw = r.measure
                 AND y.rater_raw IS NOT DISTINCT FROM r.rater
            WHERE list_contains($measures, y.measure) AND v IS NOT NULL GROUP BY ALL
            """,
            params={"measures": measures},
        ).pl()

    def _check_unique(
        self, con: duckdb.DuckDBPyConnection, one_per_item: bool, masked: bool
    ) -> None:
        """Refuse a second row with the same item, measure and rater, naming the first such row
        of the file and the row it repeats.

        Each row's key is numbered: item (``i``, of ``n_items``) by (measure, rater) pair
        (``c``, of ``n_pairs``). An item holds a repeated key where it has more rows than keys:
        ``masked``, its keys are the bits of ``_hs_t_items.mask``; else, where the key space is
        small enough (:data:`DUPLICATE_BITS`), one bit per key tells whether any key repeats,
        and the items that hold a repeat are found the same way, per item. The rows of those
        items (or, for a larger key space, all rows) are then grouped by key. ``one_per_item``:
        each item is in one row of ``_hs_t_items`` (numbered as they come, else by their
        text)."""
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _hs_t_item_index AS "
            + (
                "SELECT raw, item, row_number() OVER () - 1 AS i FROM _hs_t_items"
                if one_per_item
                else "SELECT raw, item, dense_rank() OVER (ORDER BY item) - 1 AS i "
                "FROM (SELECT DISTINCT raw, item FROM _hs_t_items)"
            )
        )
        ((n_items, n_pairs, threads),) = con.execute(
            "SELECT (SELECT max(i) + 1 FROM _hs_t_item_index), "
            "(SELECT max(c) + 1 FROM _hs_t_combo_index), current_setting('threads')"
        ).fetchall()
        keyed = (
            'SELECT x.i, y.c, r."row" FROM _hs_t_rows r '
            "JOIN _hs_t_item_index x ON x.raw = r.item "
            "JOIN _hs_t_combo_index y ON y.measure_raw = r.measure "
            "AND y.rater_raw IS NOT DISTINCT FROM r.rater"
        )
        if masked:
            repeats = (
                "SELECT item FROM _hs_t_items WHERE n > bit_count(mask)"
                if one_per_item
                else "SELECT item FROM _hs_t_items GROUP BY item "
                "HAVING sum(n) > bit_count(bit_or(mask))"
            )
            con.execute(
                "CREATE OR REPLACE TEMP TABLE _hs_t_suspects AS SELECT DISTINCT x.i "
                f"FROM _hs_t_item_index x JOIN ({repeats}) USING (item)"
            )
            if not con.execute("SELECT count(*) FROM _hs_t_suspects").fetchall()[0][0]:
                return
            keyed += " WHERE x.i IN (SELECT i FROM _hs_t_suspects)"
        elif n_items * n_pairs * int(threads) <= DUPLICATE_BITS:
            ((rows, keys),) = self._scan(
                con,
                f"SELECT count(*), bit_count(bitstring_agg(i * {n_pairs} + c, 0, "
                f"{n_items * n_pairs - 1})) FROM ({keyed})",
            )
            if rows == keys:
                return
            con.execute(
                f"CREATE OR REPLACE TEMP TABLE _hs_t_suspects AS SELECT i FROM ({keyed}) "
                f"GROUP BY i HAVING count(*) > bit_count(bitstring_agg(c, 0, {n_pairs - 1}))"
            )
            keyed += " WHERE x.i IN (SELECT i FROM _hs_t_suspects)"
        hit = self._scan(
            con,
            f"""
            WITH keyed AS MATERIALIZED ({keyed}),
            repeated AS (
                SELECT i, c, min("row") AS first FROM keyed GROUP BY i, c HAVING count(*) > 1
            )
            SELECT k."row", r.first, k.i, k.c FROM keyed k JOIN repeated r USING (i, c)
            WHERE k."row" > r.first ORDER BY k."row" LIMIT 1
            """,
        )
        if not hit:
            return
        row, first, i, c = hit[0]
        ((item, measure, rater),) = con.execute(
            "SELECT (SELECT any_value(item) FROM _hs_t_item_index WHERE i = $i), "
            "(SELECT any_value(measure) FROM _hs_t_combo_index WHERE c = $c), "
            "(SELECT any_value(rater) FROM _hs_t_combo_index WHERE c = $c)",
            {"i": i, "c": c},
        ).fetchall()
        raise self.source.error(
            f"duplicate row (item={item!r}, measure={measure!r}, rater={rater!r}; also row "
            f"{first})",
            row=row,
        )

    def _check_subsets(self, con: duckdb.DuckDBPyConnection) -> None:
        """Refuse an input whose rows give two subsets: the first row whose subset differs from
        the one its input's first row with a subset gives (rows without one give none)."""
        clash = con.execute(
            f"""
            WITH given AS (
                SELECT input, {SUBSET}, "row" FROM _hs_t_items WHERE {SUBSET} IS NOT NULL
            ), firsts AS (
                SELECT input, arg_min({SUBSET}, "row") AS first, min("row") AS first_row
                FROM given GROUP BY input
            )
            SELECT g.input, g.{SUBSET}, g."row", f.first, f.first_row
            FROM given g JOIN firsts f USING (input)
            WHERE g.{SUBSET} <> f.first ORDER BY g."row" LIMIT 1
            """
        ).fetchall()
        if clash:
            name, other, row, first, first_row = clash[0]
            raise self.source.error(
                f"input {name!r} has subset {other!r} here but {first!r} in row {first_row} "
                "(an input belongs to one subset)",
                row=row,
                column=SUBSET,
            )

    def _check_stored_subsets(self, con: duckdb.DuckDBPyConnection) -> None:
        """Refuse an input that the store holds in another subset (the write would keep the
        file's, see :func:`~hanna_stats.store.batch.write_batch`), naming the input's first row
        with a subset (after :meth:`_check_subsets`: the file gives it one). A stored input
        without a subset may get one."""
        clash = con.execute(
            f"""
            SELECT p.input, any_value(p.{SUBSET}), min(p."row") AS first, any_value(i.subset)
            FROM _hs_t_items p JOIN inputs i ON i.name = p.input
            WHERE p.{SUBSET} IS NOT NULL AND i.subset IS NOT NULL AND p.{SUBSET} <> i.subset
            GROUP BY p.input ORDER BY first LIMIT 1
            """
        ).fetchall()
        if clash:
            name, subset, row, stored = clash[0]
            raise self.source.error(
                f"input {name!r} has subset {subset!r} here, but the store already holds it in "
                f"subset {stored!r} (an input belongs to one subset)",
                row=row,
                column=SUBSET,
            )

    def _check_functional(
        self, con: duckdb.DuckDBPyConnection, key: list[str], value: list[str]
    ) -> None:
        """Refuse a ``key`` that maps to more than one ``value`` combination: the first
        (input, system, item) combination, by its first row, whose key an earlier one has."""
        ((pairs, keys),) = con.execute(
            f"SELECT count(*), count(DISTINCT ({', '.join(key)})) FROM _hs_t_pairs"
        ).fetchall()
        if pairs == keys:
            return
        firsts = ", ".join(f"first_value({c}) OVER w AS first_{c}" for c in value)
        ((*clash, row, first_row),) = con.execute(
            f"""
            SELECT {", ".join(key + value)}, "row", first_row FROM (
                SELECT *, {firsts}, first_value("row") OVER w AS first_row,
                       row_number() OVER w AS k
                FROM _hs_t_pairs WINDOW w AS (PARTITION BY {", ".join(key)} ORDER BY "row")
            ) WHERE k = 2 ORDER BY "row" LIMIT 1
            """
        ).fetchall()
        theirs = con.execute(
            f'SELECT {", ".join(value)} FROM _hs_t_pairs WHERE "row" = ?', [first_row]
        ).fetchall()[0]
        named = dict(zip(key + value, clash, strict=True))
        shown = ", ".join(f"{c}={named[c]!r}" for c in key)
        ours = ", ".join(f"{c}={named[c]!r}" for c in value)
        theirs = ", ".join(f"{c}={v!r}" for c, v in zip(value, theirs, strict=True))
        raise self.source.error(
            f"duplicate item: {shown} has {ours} here but {theirs} in row {first_row}", row=row
        )

    def _stage(
        self,
        con: duckdb.DuckDBPyConnection,
        types: dict[str, str],
        measures: pl.DataFrame,
        rated: pl.DataFrame,
    ) -> None:
        """The relations of :data:`~hanna_stats.store.batch.STAGED`: systems, inputs and items
        from ``_hs_t_pairs`` (positions in order of first appearance), measures and raters from
        ``measures`` and the groups ``rated``, scores and ratings views of the file."""
        first = 'row_number() OVER (ORDER BY min("row")) - 1'
        human = "NULL" if self.human_system is None else _literal(self.human_system)
        for table, schema, given, group in (
            ("_hs_systems", b.SYSTEMS,
             {"name": "system", "is_human": f"coalesce(system = {human}, false)",
              "position": first}, "system"),
            ("_hs_inputs", b.INPUTS,
             {"name": "input", "position": first, SUBSET: f"max({SUBSET})"}, "input"),
            ("_hs_items", b.ITEMS,
             {"name": "item", "input": "any_value(input)", "system": "any_value(system)",
              "row": 'min("row")'}, "item"),
        ):  # fmt: skip
            con.execute(
                f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT {_relation(schema, given)} "
                f'FROM _hs_t_pairs GROUP BY {group} ORDER BY min("row")'  # ids as they come
            )
        raters = rated.group_by(RATER).agg(pl.col("row").min()).sort("row")[RATER].to_list()
        frames = {
            "_hs_measures": b.frame(
                b.MEASURES,
                measures.with_row_index("position").cast({"position": pl.Int64}).to_dict(),
            ),
            "_hs_raters": b.frame(b.RATERS, {"name": raters, "kind": ["person"] * len(raters)}),
            "_hs_given_scores": b.frame(b.GIVEN_SCORES),
            "_hs_references": b.frame(b.REFERENCES),
        }
        for table, df in frames.items():
            con.register("_hs_t_frame", df)
            try:
                con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT * FROM _hs_t_frame")
            finally:
                con.unregister("_hs_t_frame")
        value = _missing_nan(_number(VALUE, types[VALUE])[0])
        named = (
            "FROM _hs_t_rows r JOIN _hs_t_item_index x ON x.raw = r.item "
            "JOIN _hs_t_combo_index y ON y.measure_raw = r.measure "
            "AND y.rater_raw IS NOT DISTINCT FROM r.rater"
        )
        ((unrated, rated),) = con.execute(
            "SELECT bool_or(rater IS NULL), bool_or(rater IS NOT NULL) FROM _hs_t_groups_n"
        ).fetchall()
        # Scores and ratings: the file's rows without and with a rater (none: no scan).
        for view, schema, given, where in (
            ("_hs_scores_given", b.SCORES, {"value": value},
             "y.rater IS NULL" if unrated else "false"),
            ("_hs_ratings_given", b.RATINGS, {"score": value, "answer": _text(ANSWER)},
             "y.rater IS NOT NULL" if rated else "false"),
        ):  # fmt: skip
            given = {"item": "x.item", "measure": "y.measure", "rater": "y.rater",
                     "row": 'r."row"', **given}  # fmt: skip
            con.execute(
                f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT {_relation(schema, given)} "
                f"{named} WHERE {where}"
            )
        ((self.n_values,),) = con.execute("SELECT count(*) FROM _hs_t_rows").fetchall()


def parse_tidy(
    source: FileSource,
    *,
    human_system: str | None = None,
    human_measures: Sequence[str] = (),
    scales: Mapping[str, tuple[float, float]] | None = None,
) -> TidyFile:
    """A tidy score file to write: validated and staged when written (:meth:`TidyFile.stage`,
    called by :func:`~hanna_stats.store.batch.write_batch`).

    Parameters
    ----------
    source : FileSource
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
    TidyFile
        Staged, positions of new systems, inputs and measures follow their first appearance in
        the file, after those already stored; ``notes`` names the human measures whose scale
        was inferred from their values (none declared) and the scales.

    Raises
    ------
    ValueError
        If ``human_measures`` is a string, or a scale of ``scales`` is not finite ``LO < HI``.

    The staging raises :class:`~hanna_stats.store.errors.InputError` for: a missing column, no
    data rows, a missing key, a non-numeric value or bound, an unknown kind or scale, a measure
    with two kinds (or two of any describing value), a rater row of a metric, a human rating
    without a value, a judge's try with neither value nor answer, an answer without a rater, a
    Likert scale without bounds, a duplicate row (item, measure[, rater]), an item with two
    (input, system), an (input, system) with two items, an input with two subsets (or another
    than the store holds it in), a measure named like a key column of
    ``scores_wide``, ``human_system`` absent, a measure of ``human_measures`` absent or of
    another kind in the ``kind`` column, a measure of ``scales`` absent or declared otherwise in
    the file, or a name holding a control character; each naming the file, the row (the first
    offending one) and the column.
    """
    if isinstance(human_measures, str):
        raise ValueError(f"human_measures must be a sequence of names; got {human_measures!r}")
    declared = dict(check_scale(m, bounds) for m, bounds in (scales or {}).items())
    return TidyFile(source, human_system, tuple(human_measures), declared)
