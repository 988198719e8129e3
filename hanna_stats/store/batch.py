"""A validated batch of rows for the store, and the one transaction that writes it.

Parsers (:mod:`hanna_stats.store.hanna`, :mod:`hanna_stats.store.summeval`, ...) turn a file
into a :class:`Batch` of polars frames keyed by natural names; a tidy file is staged in the
store's connection instead (:class:`~hanna_stats.store.tidy.TidyFile`: SQL over the file, in
bounded memory). Either way the rows to write are relations ``_hs_*`` of the connection
(:meth:`Batch.stage`), and :func:`write_batch` upserts them: bulk ``INSERT ... SELECT``, in one
transaction that also records the file in ``ingests`` and recreates the ``scores_wide`` view.
Any error rolls everything back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

import duckdb
import polars as pl

from hanna_stats.store.db import refresh_scores_wide
from hanna_stats.store.errors import InputError
from hanna_stats.store.scales import COUNTS, apply_scales, check_policy, drop_scales
from hanna_stats.store.source import Source

SYSTEMS = {"name": pl.String, "is_human": pl.Boolean, "position": pl.Int64}
# domain, document: the input's domain and document, when the study gives them (WMT's
# documents/LP.docs), so that analyses can group inputs by them. subset: the sub-study the input
# belongs to when a store holds several (WMT: the language pair), null for none.
INPUTS = {
    "name": pl.String,
    "position": pl.Int64,
    "text": pl.String,
    "domain": pl.String,
    "document": pl.String,
    "subset": pl.String,
}
# row: 1-based data row where the item first appears (named in consistency errors).
ITEMS = {
    "name": pl.String,
    "input": pl.String,
    "system": pl.String,
    "text": pl.String,
    "reference": pl.String,
    "row": pl.Int64,
}
# Every reference of an item (table item_references), first (standard) one at position 1: an
# item listed here gets exactly these references where it has none stored or they change; its
# ITEMS row's reference must be the text at position 1. Items not listed keep their stored ones
# (their ITEMS reference, when given, is position 1).
REFERENCES = {"item": pl.String, "position": pl.Int64, "name": pl.String, "text": pl.String}
MEASURES = {
    "name": pl.String,
    "kind": pl.String,
    "family": pl.String,
    "reference_based": pl.Boolean,
    "symbol": pl.String,
    "abbreviation": pl.String,
    "criterion": pl.String,
    "variant": pl.String,
    "judge": pl.String,
    "scale": pl.String,
    "scale_min": pl.Float64,
    "scale_max": pl.Float64,
    "position": pl.Int64,
    "source_name": pl.String,
}
RATERS = {"name": pl.String, "kind": pl.String}
SCORES = {
    "item": pl.String,
    "measure": pl.String,
    "value": pl.Float64,
    "row": pl.Int64,  # 1-based data row in the file, when known (named in errors)
}
RATINGS = {
    "item": pl.String,
    "rater": pl.String,
    "measure": pl.String,
    "score": pl.Float64,
    "work_time_s": pl.Float64,
    "assignment": pl.String,
    "answer": pl.String,  # the raw answer text of an LLM judge's try, when given
    "row": pl.Int64,  # 1-based data row in the file, when known (named in errors)
}
# The values the study gives (WMT's .sys.score files), not means over items. domain: null for a
# system-level value (table given_system_scores_by_id), else the domain of a domain-level one
# (table given_domain_scores_by_id: WMT's .domain.score files). subset: the subset the value is
# given for (WMT: the language pair), null for none.
GIVEN_SCORES = {
    "system": pl.String,
    "measure": pl.String,
    "value": pl.Float64,
    "domain": pl.String,
    "subset": pl.String,
}
_MEASURE_ATTRIBUTES = [c for c in MEASURES if c != "name"]
WIDE_RESERVED = ("item", "input", "system", "is_human")  # the key columns of scores_wide


def frame(schema: dict[str, pl.DataType], data: dict | list | None = None) -> pl.DataFrame:
    """A polars frame with exactly ``schema``'s columns and types.

    Parameters
    ----------
    schema : dict
        Column name -> polars type (one of the module constants).
    data : dict or list, optional
        Columns by name (absent ones are null), or rows in schema order (rows shorter than the
        schema: the last columns are null); None: an empty frame.
    """
    if data is None:
        return pl.DataFrame(schema=schema)
    if isinstance(data, list):
        if data and len(data[0]) < len(schema):
            data = [[*row, *[None] * (len(schema) - len(row))] for row in data]
        return pl.DataFrame(data, schema=schema, orient="row")
    height = len(next(iter(data.values())))
    return pl.DataFrame({c: data.get(c, [None] * height) for c in schema}, schema=schema)


@dataclass(frozen=True)
class Batch:
    """Rows to upsert, as frames with the schemas above.

    Attributes
    ----------
    systems, inputs, items, measures, raters, scores, ratings : polars.DataFrame
        New or updated rows, keyed by names (see the module constants for the columns).
    replace_measures : bool
        True: the batch's catalogue attributes overwrite stored ones (HANNA files are
        authoritative). False: measures already stored keep their attributes (tidy files).
    relative_positions : bool
        True: positions count from 0 within the file and new systems, inputs and measures are
        placed after those stored. False: positions are absolute (HANNA).
    scale_policy : str
        What :func:`write_batch` does with a non-human value outside its measure's scale, unless
        the caller says otherwise (one of :data:`~hanna_stats.store.catalogue.SCALE_POLICIES`).
    given_scores : polars.DataFrame
        System-level values given by the study (table ``given_system_scores_by_id``; schema
        :data:`GIVEN_SCORES`), and domain-level ones where ``domain`` is set (table
        ``given_domain_scores_by_id``), for systems and measures of the batch; not checked against
        scales. Empty by default.
    notes : tuple of str
        What the parser left out or chose, for the ingest's summary (one sentence each).
    references : polars.DataFrame
        All the references of the batch's items that have several (schema
        :data:`REFERENCES`, positions 1, 2, ... per item, position 1 equal to the item's
        ``reference``). Empty by default: the items' ``reference`` is then their only known one.
    """

    systems: pl.DataFrame
    inputs: pl.DataFrame
    items: pl.DataFrame
    measures: pl.DataFrame
    raters: pl.DataFrame
    scores: pl.DataFrame
    ratings: pl.DataFrame
    replace_measures: bool = True
    relative_positions: bool = False
    scale_policy: str = "error"
    given_scores: pl.DataFrame = field(default_factory=lambda: frame(GIVEN_SCORES))
    notes: tuple[str, ...] = ()
    references: pl.DataFrame = field(default_factory=lambda: frame(REFERENCES))

    @property
    def n_values(self) -> int:
        """Number of scores plus ratings plus system-level values."""
        return self.scores.height + self.ratings.height + self.given_scores.height

    @contextmanager
    def stage(self, con: duckdb.DuckDBPyConnection, source: Source) -> Iterator[None]:
        """Register the frames as the relations :func:`write_batch` reads (:data:`STAGED`)
        while the context lasts."""
        _check_magnitudes(self, source)
        _check_keys(self, source)
        _check_reference_frame(self)
        frames = {relation: getattr(self, name) for relation, name in STAGED.items()}
        try:
            for name, df in frames.items():
                con.register(name, df)
            yield
        finally:
            for name in frames:
                con.unregister(name)


#: The relations :func:`write_batch` reads, and the :class:`Batch` frames registered as them:
#: scores and ratings as given (:func:`~hanna_stats.store.scales.apply_scales` makes
#: ``_hs_scores`` and ``_hs_ratings`` of them, after the scale policy).
STAGED = {
    "_hs_systems": "systems",
    "_hs_inputs": "inputs",
    "_hs_items": "items",
    "_hs_measures": "measures",
    "_hs_raters": "raters",
    "_hs_scores_given": "scores",
    "_hs_ratings_given": "ratings",
    "_hs_given_scores": "given_scores",
    "_hs_references": "references",
}


class Staged(Protocol):
    """What :func:`write_batch` writes: a :class:`Batch`, or a
    :class:`~hanna_stats.store.tidy.TidyFile`, which stages a tidy file with SQL. ``stage``
    makes the relations of :data:`STAGED` (the schemas of the module constants) while its
    context lasts; ``n_values`` and ``notes`` hold once it has run."""

    replace_measures: bool
    relative_positions: bool
    scale_policy: str
    n_values: int
    notes: tuple[str, ...]

    def stage(self, con: duckdb.DuckDBPyConnection, source: Source): ...


def reference_frame(references: Mapping[str, Sequence[tuple[str | None, str]]]) -> pl.DataFrame:
    """:data:`REFERENCES` rows of ``{item: [(name, text), ...]}`` (each item's references, the
    first one first); items with fewer than two references are left out (their ``reference`` in
    :data:`ITEMS` says all)."""
    rows = [
        [item, k, name, text]
        for item, refs in references.items()
        if len(refs) > 1
        for k, (name, text) in enumerate(refs, start=1)
    ]
    return frame(REFERENCES, rows) if rows else frame(REFERENCES)


def _check_reference_frame(batch: Batch) -> None:
    """A parser's own mistake, not the file's: references that contradict the items' first one."""
    refs = batch.references
    if not refs.height:
        return
    first = refs.filter(pl.col("position") == 1).join(
        batch.items.select("name", "reference"), left_on="item", right_on="name", how="left"
    )
    bad = first.filter(pl.col("reference").is_null() | (pl.col("reference") != pl.col("text")))
    keys = refs.select("item", "position")
    if bad.height or keys.is_duplicated().any() or first.height != refs["item"].n_unique():
        raise ValueError("batch references: position 1 of each item must be its items reference")


def _check_items(con: duckdb.DuckDBPyConnection, source: Source) -> None:
    """Refuse items that contradict the store: same name, other input or system, or the reverse."""
    moved = con.execute(
        """
        SELECT b.name, b.row, b.input, b.system, inp.name, sy.name
        FROM _hs_items b
        JOIN items it ON it.name = b.name
        JOIN inputs inp ON inp.input_id = it.input_id
        JOIN systems sy ON sy.system_id = it.system_id
        WHERE inp.name <> b.input OR sy.name <> b.system
        ORDER BY b.row LIMIT 1
        """
    ).fetchall()
    if moved:
        name, row, inp, system, stored_inp, stored_system = moved[0]
        raise source.error(
            f"item {name!r} has input {inp!r}, system {system!r}, but the store already holds "
            f"it with input {stored_inp!r}, system {stored_system!r}",
            row=row,
        )
    renamed = con.execute(
        """
        SELECT b.name, b.row, b.input, b.system, it.name
        FROM _hs_items b
        JOIN inputs inp ON inp.name = b.input
        JOIN systems sy ON sy.name = b.system
        JOIN items it ON it.input_id = inp.input_id AND it.system_id = sy.system_id
        WHERE it.name <> b.name
        ORDER BY b.row LIMIT 1
        """
    ).fetchall()
    if renamed:
        name, row, inp, system, stored = renamed[0]
        raise source.error(
            f"duplicate item: input {inp!r}, system {system!r} is item {stored!r} in the store, "
            f"this file calls it {name!r}",
            row=row,
        )


def _check_measures(con: duckdb.DuckDBPyConnection, source: Source) -> None:
    """Refuse a measure whose kind differs from the stored one."""
    clash = con.execute(
        """
        SELECT b.name, b.kind, m.kind FROM _hs_measures b JOIN measures m ON m.name = b.name
        WHERE b.kind <> m.kind ORDER BY b.name LIMIT 1
        """
    ).fetchall()
    if clash:
        name, kind, stored = clash[0]
        raise source.error(
            f"measure {name!r} is of kind {stored!r} in the store but {kind!r} in this file; "
            f"give it kind {stored!r} (tidy files: a `kind` column; rater rows make a measure "
            "'human') or ingest it under another name",
            column="kind",
        )


#: Largest magnitude a value may have: beyond it, sums of squares (Pearson, Williams, ICC) and
#: means over items overflow double precision and the statistics come out infinite or undefined.
MAX_MAGNITUDE = 1e100


def magnitude_error(
    source: Source, value: float, measure: str, item: str, row: int | None, column: str
) -> InputError:
    """The refusal of ``value`` (of ``measure``, ``item``, data row ``row``), beyond
    :data:`MAX_MAGNITUDE`."""
    return source.error(
        f"value {value!r} of measure {measure!r} (item {item!r}) "
        f"exceeds {MAX_MAGNITUDE:g} in magnitude: statistics on it would overflow; "
        "rescale the measure",
        row=row,
        column=column,
    )


#: The key of each frame of values of a :class:`Batch`, as in the store's tables.
BATCH_KEYS = {
    "scores": ("item", "measure"),
    "ratings": ("item", "rater", "measure"),
    "given_scores": ("system", "measure", "domain", "subset"),
}


def _check_keys(batch: Batch, source: Source) -> None:
    """Refuse two values of one key (:data:`BATCH_KEYS`) in a frame, as a tidy file's duplicate
    rows are refused: ``scores`` and ``ratings`` have no primary key, so both would be stored."""
    for name, keys in BATCH_KEYS.items():
        rows = getattr(batch, name)
        if not rows.select(keys).is_duplicated().any():
            continue
        rows = rows.with_row_index("_hs_index")
        again = rows.filter(~pl.struct(keys).is_first_distinct()).row(0, named=True)
        first = rows.filter(pl.all_horizontal(pl.col(k).eq_missing(again[k]) for k in keys)).row(
            0, named=True
        )
        shown = ", ".join(f"{k}={again[k]!r}" for k in keys)
        also = f"; also row {first['row']}" if first.get("row") is not None else ""
        raise source.error(f"duplicate {name} row ({shown}{also})", row=again.get("row"))


def _check_magnitudes(batch: Batch, source: Source) -> None:
    """Refuse a finite value beyond :data:`MAX_MAGNITUDE`, naming its row and measure."""
    for rows, column in ((batch.scores, "value"), (batch.ratings, "score")):
        huge = rows.filter(pl.col(column).abs() > MAX_MAGNITUDE)
        if huge.height:
            row = huge.row(0, named=True)
            raise magnitude_error(
                source, row[column], row["measure"], row["item"], row["row"], column
            )
    huge = batch.given_scores.filter(pl.col("value").abs() > MAX_MAGNITUDE)
    if huge.height:
        row = huge.row(0, named=True)
        raise source.error(
            f"system-level value {row['value']!r} of measure {row['measure']!r} (system "
            f"{row['system']!r}) exceeds {MAX_MAGNITUDE:g} in magnitude; rescale the measure"
        )


def _check_judges(con: duckdb.DuckDBPyConnection, source: Source) -> None:
    """Refuse two LLM-judge measures of one judge, prompt variant and criterion (a second run
    under the same key): the judge analyses key a judge's rating of a criterion by them. Run
    after the batch's measures are in the catalogue, so a clash with a stored measure counts."""
    clash = con.execute(
        """
        SELECT judge, variant, criterion, list(name ORDER BY name)
        FROM measures
        WHERE kind = 'llm-judge' AND judge IS NOT NULL AND criterion IS NOT NULL
        GROUP BY judge, variant, criterion HAVING count(*) > 1
        ORDER BY judge, variant NULLS FIRST, criterion LIMIT 1
        """
    ).fetchall()
    if clash:
        judge, variant, criterion, names = clash[0]
        raise source.error(
            f"LLM-judge measures {', '.join(map(repr, names))} both rate {criterion!r} by judge "
            f"{judge!r} with prompt variant {variant!r}: give each run its own prompt_variant "
            "(e.g. '1 run 2') so that the judge analyses can tell them apart",
            column="prompt_variant",
        )


def _offset(con: duckdb.DuckDBPyConnection, table: str, relative: bool) -> int:
    if not relative:
        return 0
    # table is one of our own table names, never user input.
    return con.execute(f"SELECT coalesce(max(position) + 1, 0) FROM {table}").fetchall()[0][0]


def _upsert(con: duckdb.DuckDBPyConnection, batch: Staged) -> None:
    rel = batch.relative_positions
    con.execute(
        """
        INSERT INTO systems (name, is_human, position)
        SELECT name, is_human, position + $off FROM _hs_systems
        ON CONFLICT (name) DO UPDATE SET is_human = systems.is_human OR excluded.is_human
        """,
        {"off": _offset(con, "systems", rel)},
    )
    con.execute(
        """
        INSERT INTO inputs (name, position, text, domain, document, subset)
        SELECT name, position + $off, text, domain, document, subset FROM _hs_inputs
        ON CONFLICT (name) DO UPDATE SET
            text = coalesce(excluded.text, inputs.text),
            domain = coalesce(excluded.domain, inputs.domain),
            document = coalesce(excluded.document, inputs.document),
            subset = coalesce(excluded.subset, inputs.subset)
        """,
        {"off": _offset(con, "inputs", rel)},
    )
    con.execute(
        """
        INSERT INTO items (name, input_id, system_id, text, reference)
        SELECT b.name, inp.input_id, sy.system_id, b.text, b.reference
        FROM _hs_items b
        JOIN inputs inp ON inp.name = b.input
        JOIN systems sy ON sy.name = b.system
        ON CONFLICT (name) DO UPDATE SET
            text = coalesce(excluded.text, items.text),
            reference = coalesce(excluded.reference, items.reference)
        """
    )
    _upsert_references(con)
    columns = ", ".join(MEASURES)
    if batch.replace_measures:
        updates = ", ".join(f"{c} = excluded.{c}" for c in _MEASURE_ATTRIBUTES)
        conflict = f"DO UPDATE SET {updates}"
    else:
        conflict = "DO NOTHING"
    select = ", ".join("position + $off" if c == "position" else c for c in MEASURES)
    con.execute(
        f"INSERT INTO measures ({columns}) SELECT {select} FROM _hs_measures "
        f"ON CONFLICT (name) {conflict}",
        {"off": _offset(con, "measures", rel)},
    )
    con.execute(
        "INSERT INTO raters (name, kind) SELECT name, kind FROM _hs_raters "
        "ON CONFLICT (name) DO NOTHING"
    )
    _upsert_values(con)
    con.execute(
        """
        INSERT INTO given_system_scores_by_id (measure_id, system_id, value, subset)
        SELECT m.measure_id, sy.system_id, b.value, coalesce(b.subset, '')
        FROM _hs_given_scores b
        JOIN measures m ON m.name = b.measure
        JOIN systems sy ON sy.name = b.system
        WHERE b.domain IS NULL
        ON CONFLICT (measure_id, system_id, subset) DO UPDATE SET value = excluded.value
        """
    )
    con.execute(
        """
        INSERT INTO given_domain_scores_by_id (measure_id, system_id, domain, value, subset)
        SELECT m.measure_id, sy.system_id, b.domain, b.value, coalesce(b.subset, '')
        FROM _hs_given_scores b
        JOIN measures m ON m.name = b.measure
        JOIN systems sy ON sy.name = b.system
        WHERE b.domain IS NOT NULL
        ON CONFLICT (measure_id, system_id, domain, subset) DO UPDATE SET value = excluded.value
        """
    )


# Item-level and rater-level values: (table, relation, key columns, value columns, the joins
# that give the keys). scores and ratings have no primary key (an index of every value would
# hold them in memory): their keys are kept unique by the checks of the ingest (a file's
# duplicates are refused) and by these writes, which update stored values and insert the others.
_VALUES = (
    (
        "scores",
        "_hs_scores",
        ("item_id", "measure_id"),
        ("value",),
        "JOIN items it ON it.name = b.item JOIN measures m ON m.name = b.measure",
    ),
    (
        "ratings",
        "_hs_ratings",
        ("item_id", "rater_id", "measure_id"),
        ("score", "work_time_s", "assignment", "answer"),
        "JOIN items it ON it.name = b.item JOIN raters r ON r.name = b.rater "
        "JOIN measures m ON m.name = b.measure",
    ),
)
_KEY_SOURCES = {"item_id": "it.item_id", "measure_id": "m.measure_id", "rater_id": "r.rater_id"}


def _upsert_values(con: duckdb.DuckDBPyConnection) -> None:
    """Upsert the batch's scores and ratings (after its items, measures and raters): stored
    values the batch gives otherwise are updated, the others inserted; into a table that holds
    nothing yet, all are inserted at once."""
    for table, relation, keys, values, joins in _VALUES:
        given = ", ".join([*(f"{_KEY_SOURCES[k]} AS {k}" for k in keys), *values])
        rows = f"SELECT {given} FROM {relation} b {joins}"
        if con.execute(f"SELECT EXISTS (SELECT 1 FROM {table})").fetchall()[0][0]:
            same = " AND ".join(f"{table}.{k} = b.{k}" for k in keys)
            changed = " OR ".join(f"{table}.{v} IS DISTINCT FROM b.{v}" for v in values)
            updates = ", ".join(f"{v} = b.{v}" for v in values)
            con.execute(
                f"UPDATE {table} SET {updates} FROM ({rows}) b WHERE {same} AND ({changed})"
            )
            rows += (
                f" WHERE NOT EXISTS (SELECT 1 FROM {table} s WHERE "
                + " AND ".join(f"s.{k} = {_KEY_SOURCES[k]}" for k in keys)
                + ")"
            )
        con.execute(f"INSERT INTO {table} ({', '.join((*keys, *values))}) {rows}")


def _upsert_references(con: duckdb.DuckDBPyConnection) -> None:
    """Write the batch's references (``_hs_references``; after the items): an item whose listed
    references change one stored gets exactly the batch's (its stored ones beyond them go),
    otherwise listed positions are written and stored ones beyond them kept; an item the batch
    gives a reference but no list has its position 1 set to its (upserted) ``reference``."""
    con.execute(
        """
        DELETE FROM item_references AS r USING (
            SELECT it.item_id, max(b.position) AS n
            FROM _hs_references b
            JOIN items it ON it.name = b.item
            LEFT JOIN item_references s ON s.item_id = it.item_id AND s.position = b.position
            GROUP BY it.item_id
            HAVING bool_or(s.text <> b.text)
        ) AS c
        WHERE r.item_id = c.item_id AND r.position > c.n
        """
    )
    con.execute(
        """
        INSERT INTO item_references (item_id, position, name, text)
        SELECT it.item_id, b.position, b.name, b.text
        FROM _hs_references b JOIN items it ON it.name = b.item
        ON CONFLICT (item_id, position) DO UPDATE SET
            text = excluded.text,
            name = coalesce(excluded.name, item_references.name)
        """
    )
    con.execute(
        """
        INSERT INTO item_references (item_id, position, name, text)
        SELECT it.item_id, 1, NULL, it.reference
        FROM _hs_items b JOIN items it ON it.name = b.name
        WHERE it.reference IS NOT NULL AND b.name NOT IN (SELECT item FROM _hs_references)
        ON CONFLICT (item_id, position) DO UPDATE SET text = excluded.text
        """
    )


#: What an ingest adds, per table: names (or keys) in the batch that the store does not hold.
_ADDED = {
    "systems": "SELECT count(*) FROM _hs_systems b WHERE b.name NOT IN (SELECT name FROM systems)",
    "inputs": "SELECT count(*) FROM _hs_inputs b WHERE b.name NOT IN (SELECT name FROM inputs)",
    "items": "SELECT count(*) FROM _hs_items b WHERE b.name NOT IN (SELECT name FROM items)",
    "measures": "SELECT count(*) FROM _hs_measures b "
    "WHERE b.name NOT IN (SELECT name FROM measures)",
}
# The batch's values that the store holds already (``values`` added: the others, of
# ``n_values``); joins to the stored values, which a new store has none of.
_STORED_VALUES = """
        SELECT (SELECT count(*) FROM _hs_scores b
                JOIN items it ON it.name = b.item JOIN measures m ON m.name = b.measure
                JOIN scores s ON s.item_id = it.item_id AND s.measure_id = m.measure_id)
             + (SELECT count(*) FROM _hs_ratings b
                JOIN items it ON it.name = b.item JOIN measures m ON m.name = b.measure
                JOIN raters rt ON rt.name = b.rater
                JOIN ratings r ON r.item_id = it.item_id AND r.measure_id = m.measure_id
                                  AND r.rater_id = rt.rater_id)
             + (SELECT count(*) FROM _hs_given_scores b WHERE b.domain IS NULL AND EXISTS (
                    SELECT 1 FROM given_system_scores_by_id g JOIN systems sy USING (system_id)
                    JOIN measures m USING (measure_id)
                    WHERE sy.name = b.system AND m.name = b.measure
                    AND g.subset = coalesce(b.subset, '')))
             + (SELECT count(*) FROM _hs_given_scores b WHERE b.domain IS NOT NULL
                AND EXISTS (
                    SELECT 1 FROM given_domain_scores_by_id d JOIN systems sy USING (system_id)
                    JOIN measures m USING (measure_id)
                    WHERE sy.name = b.system AND m.name = b.measure AND d.domain = b.domain
                    AND d.subset = coalesce(b.subset, '')))
"""

# Stored values the batch would change: (item, system, measure, rater, stored, new), where a
# system-level value has no item and an item's value no system; first by item (system-level
# values last), system, measure and rater.
_CHANGED = """
SELECT it.name AS item, NULL AS system, m.name AS measure, NULL AS rater, s.value AS stored,
       b.value AS new
FROM _hs_scores b
JOIN items it ON it.name = b.item
JOIN measures m ON m.name = b.measure
JOIN scores s ON s.item_id = it.item_id AND s.measure_id = m.measure_id
WHERE s.value IS DISTINCT FROM b.value
UNION ALL
SELECT it.name, NULL, m.name, rt.name, r.score, b.score
FROM _hs_ratings b
JOIN items it ON it.name = b.item
JOIN measures m ON m.name = b.measure
JOIN raters rt ON rt.name = b.rater
JOIN ratings r ON r.item_id = it.item_id AND r.measure_id = m.measure_id
                  AND r.rater_id = rt.rater_id
WHERE r.score IS DISTINCT FROM b.score
UNION ALL
SELECT NULL, sy.name, m.name, NULL, g.value, b.value
FROM _hs_given_scores b
JOIN systems sy ON sy.name = b.system
JOIN measures m ON m.name = b.measure
JOIN given_system_scores_by_id g ON g.system_id = sy.system_id AND g.measure_id = m.measure_id
                              AND g.subset = coalesce(b.subset, '')
WHERE b.domain IS NULL AND g.value IS DISTINCT FROM b.value
UNION ALL
SELECT NULL, sy.name, m.name || ' (domain ' || b.domain || ')', NULL, d.value, b.value
FROM _hs_given_scores b
JOIN systems sy ON sy.name = b.system
JOIN measures m ON m.name = b.measure
JOIN given_domain_scores_by_id d ON d.system_id = sy.system_id AND d.measure_id = m.measure_id
                              AND d.domain = b.domain AND d.subset = coalesce(b.subset, '')
WHERE d.value IS DISTINCT FROM b.value
ORDER BY item NULLS LAST, system, measure, rater NULLS FIRST
"""


# Stored references the batch would change (both known, different), per item and position:
# the batch's lists (_hs_references), else its items' reference as position 1.
_REFERENCES_CHANGED = """
WITH given AS (
    SELECT item, position, text FROM _hs_references
    UNION ALL
    SELECT name, 1, reference FROM _hs_items
    WHERE reference IS NOT NULL AND name NOT IN (SELECT item FROM _hs_references)
)
SELECT g.item, g.position, r.text AS stored, g.text AS new
FROM given g
JOIN items it ON it.name = g.item
JOIN item_references r ON r.item_id = it.item_id AND r.position = g.position
WHERE r.text <> g.text
UNION ALL
SELECT b.name, 1, it.reference, b.reference       -- a store opened without its migration
FROM _hs_items b JOIN items it ON it.name = b.name
WHERE b.reference <> it.reference
"""

# Stored item texts the batch would change (both known, different): the items whose references
# and whose output texts change, and the first such item (by name).
_TEXTS_CHANGED = f"""
WITH refs AS (SELECT DISTINCT item FROM ({_REFERENCES_CHANGED})),
outs AS (
    SELECT b.name AS item FROM _hs_items b JOIN items it ON it.name = b.name
    WHERE b.text <> it.text
)
SELECT (SELECT count(*) FROM refs), (SELECT count(*) FROM outs),
       (SELECT min(item) FROM (SELECT item FROM refs UNION ALL SELECT item FROM outs))
"""


@dataclass(frozen=True)
class WriteReport:
    """What :func:`write_batch` did: ``added`` counts per ``systems, inputs, items, measures,
    values`` (new to the store), ``replaced`` the stored values it changed, ``scales`` the
    scale checks per measure with a scale (``measure, policy, n_values, n_below, n_above,
    n_not_whole, n_unparsed``; see :mod:`hanna_stats.store.scales`), ``replaced_texts`` the
    stored item texts it changed (``reference texts``, ``output texts``)."""

    added: dict[str, int]
    replaced: int
    scales: pl.DataFrame
    replaced_texts: dict[str, int] = field(default_factory=dict)


def _check_study(con: duckdb.DuckDBPyConnection, source: Source, study: str, extend: bool) -> None:
    """Refuse a batch of another study: none of its inputs is in a store that has inputs."""
    ((stored, shared, new),) = con.execute(
        "SELECT (SELECT count(*) FROM inputs), "
        "(SELECT count(*) FROM _hs_inputs b WHERE b.name IN (SELECT name FROM inputs)), "
        "(SELECT count(*) FROM _hs_inputs)"
    ).fetchall()
    if extend or not stored or not new or shared:
        return
    held = con.execute("SELECT name FROM study").fetchall()
    name = held[0][0] if held else "unnamed"
    raise source.error(
        f"shares none of its {new} inputs with the study this store holds ({name!r}, "
        f"{stored} inputs): it looks like another study ({study!r}); ingest it into another "
        "store, or pass --extend to add it to this one"
    )


def _holds_values(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the store holds any value (a new store's first write compares with none)."""
    return con.execute(
        "SELECT EXISTS (FROM scores) OR EXISTS (FROM ratings) "
        "OR EXISTS (FROM given_system_scores_by_id) OR EXISTS (FROM given_domain_scores_by_id)"
    ).fetchall()[0][0]


def _check_replacements(con: duckdb.DuckDBPyConnection, source: Source, replace: bool) -> int:
    """The number of stored values the batch changes; refused unless ``replace``."""
    if not _holds_values(con):
        return 0
    changed = con.execute(f"SELECT count(*) FROM ({_CHANGED})").fetchall()[0][0]
    if changed and not replace:
        item, system, measure, rater, stored, new = con.execute(f"{_CHANGED} LIMIT 1").fetchall()[0]
        at = f"item {item!r}" if item is not None else f"system-level value of system {system!r}"
        by = f", rater {rater!r}" if rater is not None else ""
        raise source.error(
            f"would replace {changed:,} value(s) already in the store (first: {at}, "
            f"measure {measure!r}{by}: {stored!r} -> {new!r}); pass --replace to replace them"
        )
    return changed


def _check_texts(con: duckdb.DuckDBPyConnection, source: Source, replace: bool) -> dict[str, int]:
    """The stored reference and output texts the batch changes; refused unless ``replace``."""
    ((references, outputs, first),) = con.execute(_TEXTS_CHANGED).fetchall()
    if (references or outputs) and not replace:
        ref = con.execute(
            f"SELECT position, stored, new FROM ({_REFERENCES_CHANGED}) WHERE item = ? "
            "ORDER BY position LIMIT 1",
            [first],
        ).fetchall()
        if ref:
            position, old, new = ref[0]
            what = "reference" if position == 1 else f"reference {position}"
        else:
            ((old, new),) = con.execute(
                "SELECT it.text, b.text FROM _hs_items b JOIN items it ON it.name = b.name "
                "WHERE b.name = ?",
                [first],
            ).fetchall()
            what = "text"
        raise source.error(
            f"would replace {references:,} reference text(s) and {outputs:,} output text(s) "
            f"already in the store (first: item {first!r}, {what} {old!r} -> {new!r}); pass "
            "--replace to replace them"
        )
    return {"reference texts": references, "output texts": outputs}


def write_batch(
    con: duckdb.DuckDBPyConnection,
    batch: Staged,
    source: Source,
    fmt: str,
    *,
    study: str,
    item_word: str = "item",
    extend: bool = False,
    replace: bool = False,
    scale_policy: str | None = None,
    rename_study: bool = False,
) -> WriteReport:
    """Write ``batch`` and record ``source`` in ``ingests``, all in one transaction.

    A store holds one study (table ``study``, named by its first ingest): a batch none of whose
    inputs the store holds is another study and is refused unless ``extend``; a batch that
    would change values already stored is refused unless ``replace``. Values equal to the
    stored ones are not replacements, so re-ingesting the same data is harmless.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        Writable store, not inside a transaction. While a file-backed store is written, DuckDB's
        memory limit is lowered to what the write needs (:func:`write_memory`), so that the
        pages it has written leave memory and a large file is written in bounded memory.
    batch : Batch or TidyFile
        Validated rows (a tidy file validates itself when staged, see :class:`Staged`).
    source : Source or FileSource
        The file they come from.
    fmt : str
        Format name recorded in ``ingests``.
    study : str
        The study's name, recorded when the store has none yet.
    item_word : str
        The study's word for its items (``"story"``, ``"summary"``, ...), recorded with the name.
    rename_study : bool
        Record ``study`` as the name of a store that has one (a WMT store gaining a second
        language pair is named after its test set).
    extend, replace : bool
        Allow another study into the store; allow changing stored values.
    scale_policy : {"error", "missing", "clip", "keep"}, optional
        What a non-human value outside its measure's scale does (default: the batch's own,
        ``batch.scale_policy``); see :mod:`hanna_stats.store.scales`. The counts are recorded in
        ``scale_checks``.

    Returns
    -------
    WriteReport

    Raises
    ------
    InputError
        If the batch's items contradict items already stored, a measure's kind differs from the
        stored one, two LLM-judge measures share judge, prompt variant and criterion, a value
        exceeds :data:`MAX_MAGNITUDE` in magnitude, a value leaves its measure's scale (human
        measures; others under the policy ``error``), the batch belongs to another study, or it
        would replace values or item texts (an output or reference text that both know and that
        differs), as above; the store is then unchanged, as after any other error.
    """
    with batch.stage(con, source):
        policy = check_policy(scale_policy or batch.scale_policy)
        try:
            with write_memory(con):
                con.execute("BEGIN TRANSACTION")
                try:
                    _check_items(con, source)
                    _check_measures(con, source)
                    scales = apply_scales(
                        con, source, policy=policy, batch_wins=batch.replace_measures
                    )
                    _check_study(con, source, study, extend)
                    replaced = _check_replacements(con, source, replace)
                    replaced_texts = _check_texts(con, source, replace)
                    added = {what: con.execute(q).fetchall()[0][0] for what, q in _ADDED.items()}
                    held = _holds_values(con)
                    stored = con.execute(_STORED_VALUES).fetchall()[0][0] if held else 0
                    added["values"] = batch.n_values - stored
                    _upsert(con, batch)
                    _check_judges(con, source)
                    con.execute(
                        "INSERT INTO ingests (source, sha256, format, n_values) "
                        "VALUES (?, ?, ?, ?)",
                        [source.name, source.sha256, fmt, batch.n_values],
                    )
                    if scales.height:
                        _record_scales(con, scales, source.sha256, fmt)
                    if rename_study:
                        con.execute("UPDATE study SET name = ?", [study])
                    con.execute(
                        "INSERT INTO study (name, item_word) SELECT ?, ? "
                        "WHERE NOT EXISTS (SELECT 1 FROM study)",
                        [study, item_word],
                    )
                    refresh_scores_wide(con)
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
                con.execute("COMMIT")
        finally:
            drop_scales(con)
    return WriteReport(added, replaced, scales, replaced_texts)


#: DuckDB's memory limit while a file-backed store is written: this much, plus
#: :data:`WRITE_MEMORY_PER_ITEM` per item of the store and the batch (the indexes of ``items``,
#: which stay in memory: about 140 bytes an item), unless the limit is lower already.
WRITE_MEMORY = 384 * 2**20
WRITE_MEMORY_PER_ITEM = 160
_UNITS = {"bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


@contextmanager
def write_memory(con: duckdb.DuckDBPyConnection, new_items: int | None = None) -> Iterator[None]:
    """Lower DuckDB's memory limit for the write (see :data:`WRITE_MEMORY`), restoring it after;
    ``new_items``: the batch's items (default: the rows of ``_hs_items``).

    DuckDB keeps the pages it writes in memory up to its limit (by default 80% of the
    machine's), so the memory of a write grew with the file; under a lower limit written pages
    are let go, and joins and aggregates spill to disk. Left alone: in-memory stores (nothing to
    let go to) and a connection whose configuration is locked.
    """
    ((path, limit, n_items),) = con.execute(
        """
        SELECT (SELECT path FROM duckdb_databases() WHERE database_name = current_database()),
               current_setting('memory_limit'),
               (SELECT count(*) FROM items)
        """
    ).fetchall()
    if new_items is None:
        new_items = con.execute("SELECT count(*) FROM _hs_items").fetchall()[0][0]
    n_items += new_items
    size = re.fullmatch(r"([0-9.]+) ?([A-Za-z]+)", str(limit))
    current = float(size[1]) * _UNITS[size[2]] if size and size[2] in _UNITS else None
    cap = WRITE_MEMORY + WRITE_MEMORY_PER_ITEM * n_items
    if not path or current is None or current <= cap:
        yield
        return
    try:
        con.execute(f"SET memory_limit = '{cap}B'")
    except duckdb.Error:  # a locked configuration
        yield
        return
    try:
        yield
    finally:
        con.execute("RESET memory_limit")
        if con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] != limit:
            con.execute(f"SET memory_limit = '{limit}'")


def _record_scales(
    con: duckdb.DuckDBPyConnection, scales: pl.DataFrame, sha256: str, fmt: str
) -> None:
    """Upsert one ingest's scale counts into ``scale_checks`` (a few rows per measure)."""
    columns = ", ".join(COUNTS)
    updates = ", ".join(f"{c} = excluded.{c}" for c in ("policy", *COUNTS))
    con.executemany(
        f"INSERT INTO scale_checks (sha256, format, measure_id, policy, {columns}) "
        f"SELECT ?, ?, measure_id, ?, {', '.join('?' * len(COUNTS))} FROM measures WHERE name = ? "
        f"ON CONFLICT (sha256, format, measure_id) DO UPDATE SET {updates}",
        [
            [sha256, fmt, row["policy"], *(row[c] for c in COUNTS), row["measure"]]
            for row in scales.iter_rows(named=True)
        ],
    )
