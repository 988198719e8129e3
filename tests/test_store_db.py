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
}
VIEWS = {"measure_catalogue", "rating_records", "story_scores", "system_scores"}


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
