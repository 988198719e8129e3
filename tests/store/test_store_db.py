"""Opening stores: schema from sql/, read-only access."""

from __future__ import annotations

import duckdb
import pytest

from hanna_stats.store import DataNotFoundError, open_store
from hanna_stats.store.db import read_sql, sql_path

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
    "system_level_scores",
    "item_references",
    "domain_level_scores",
    "store_schema",
}
VIEWS = {
    "measure_catalogue",
    "rating_records",
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
