"""Opening stores: schema from sql/, read-only access; the keys of a batch's values."""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb
import pytest

from hanna_stats.store import DataNotFoundError, InputError, open_store
from hanna_stats.store import batch as b
from hanna_stats.store.db import read_sql, sql_path
from hanna_stats.store.source import Source

TABLES = {
    "systems",
    "inputs",
    "items",
    "raters",
    "measures",
    "scores",
    "ratings",
    "study",
    "ingests",
    "scale_checks",
    "given_system_scores_by_id",
    "item_references",
    "given_domain_scores_by_id",
    "store_schema",
}
VIEWS = {
    "measure_catalogue",
    "rating_records",
    "item_scores",
    "story_scores",
    "system_scores",
    "given_system_scores",
    "given_domain_scores",
}


def objects(con) -> dict[str, set[str]]:
    rows = con.execute("SELECT table_name, table_type FROM information_schema.tables").fetchall()
    return {
        "tables": {n for n, t in rows if t == "BASE TABLE"},
        "views": {n for n, t in rows if t == "VIEW"},
    }


def test_schema_comes_from_sql_files():
    assert sql_path("schema.sql").parent.name == "sql"
    assert "{measure_list}" in read_sql("scores_wide.sql")
    assert objects(open_store()) == {"tables": TABLES, "views": VIEWS}
    with pytest.raises(FileNotFoundError):
        sql_path("nope.sql")


def test_file_store_reopen_and_read_only(tmp_path):
    db = tmp_path / "store.duckdb"
    con = open_store(db)
    con.execute("INSERT INTO systems (name, is_human) VALUES ('Human', TRUE)")
    con.close()
    con = open_store(db)  # schema statements are idempotent
    assert con.execute("SELECT count(*) FROM systems").fetchall() == [(1,)]
    con.close()
    ro = open_store(str(db), read_only=True)
    assert objects(ro) == {"tables": TABLES, "views": VIEWS}
    with pytest.raises(duckdb.Error):
        ro.execute("INSERT INTO systems (name) VALUES ('x')")
    ro.close()


def test_read_only_errors(tmp_path):
    with pytest.raises(DataNotFoundError, match="no score store at"):
        open_store(tmp_path / "missing.duckdb", read_only=True)
    assert not (tmp_path / "missing.duckdb").exists()
    with pytest.raises(ValueError, match="in-memory"):
        open_store(read_only=True)


def test_older_store_gains_the_new_columns(tmp_path):
    """A store written before measures.judge/scale, ratings.answer and nullable scores existed
    is migrated by its next writable open, and then takes a judge's unparsed try."""
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE measures (measure_id INTEGER PRIMARY KEY, name VARCHAR NOT NULL UNIQUE, "
        "kind VARCHAR NOT NULL, family VARCHAR, reference_based BOOLEAN, symbol VARCHAR, "
        "abbreviation VARCHAR, criterion VARCHAR, variant VARCHAR, scale_min DOUBLE, "
        "scale_max DOUBLE, position INTEGER, source_name VARCHAR)"
    )
    con.execute(
        "CREATE TABLE ratings (item_id INTEGER NOT NULL, rater_id INTEGER NOT NULL, "
        "measure_id INTEGER NOT NULL, score DOUBLE NOT NULL, work_time_s DOUBLE, "
        "assignment VARCHAR, PRIMARY KEY (item_id, rater_id, measure_id))"
    )
    con.close()
    con = open_store(path)
    columns = {
        (t, c)
        for t, c in con.sql(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_name IN ('measures', 'ratings') ORDER BY ALL"
        ).fetchall()
    }
    assert {("measures", "judge"), ("measures", "scale"), ("ratings", "answer")} <= columns
    con.execute("INSERT INTO ratings (item_id, rater_id, measure_id, score) VALUES (1, 1, 1, NULL)")
    con.close()


def _batch(scores=None, ratings=None, given=None) -> b.Batch:
    """One item (input i, system A), measure M, rater r, with the values given."""
    return b.Batch(
        systems=b.frame(b.SYSTEMS, {"name": ["A"], "is_human": [False], "position": [0]}),
        inputs=b.frame(b.INPUTS, {"name": ["i"], "position": [0]}),
        items=b.frame(b.ITEMS, {"name": ["x"], "input": ["i"], "system": ["A"]}),
        measures=b.frame(b.MEASURES, {"name": ["M"], "kind": ["metric"], "position": [0]}),
        raters=b.frame(b.RATERS, {"name": ["r"], "kind": ["person"]}),
        scores=b.frame(b.SCORES, scores),
        ratings=b.frame(b.RATINGS, ratings),
        given_scores=b.frame(b.GIVEN_SCORES, given),
    )


@pytest.mark.parametrize(
    ("batch", "message"),
    [
        (
            _batch(scores=[["x", "M", 1.0, 3], ["x", "M", 2.0, 5]]),
            "f.csv, row 5: duplicate scores row (item='x', measure='M'; also row 3)",
        ),
        (
            _batch(ratings=[["x", "r", "M", 1.0], ["x", "s", "M", 1.0], ["x", "r", "M", 2.0]]),
            "f.csv: duplicate ratings row (item='x', rater='r', measure='M')",
        ),
        (
            _batch(given=[["A", "M", 1.0], ["A", "M", 1.0, "news"], ["A", "M", 2.0]]),
            "f.csv: duplicate given_scores row (system='A', measure='M', domain=None, subset=None)",
        ),
    ],
)
def test_a_batch_with_two_values_of_one_key_is_refused(batch, message):
    """A batch's frames of values are keyed as the store's tables (scores and ratings have no
    primary key, so both values would be stored): a repeated key is refused, as a tidy file's
    duplicate row is, and nothing is written."""
    con = open_store()
    source = Source(Path("f.csv"), b"", hashlib.sha256(b"").hexdigest())
    with pytest.raises(InputError) as err:
        b.write_batch(con, batch, source, "tidy", study="S")
    assert str(err.value) == message
    assert con.execute("SELECT count(*) FROM items").fetchall() == [(0,)]
    b.write_batch(con, _batch(scores=[["x", "M", 1.0]]), source, "tidy", study="S")
    assert con.execute("SELECT value FROM item_scores").fetchall() == [(1.0,)]
