"""The store's schema version (table ``store_schema``) and the migration of older stores.

``data/store_v0.duckdb.gz`` is a store of schema 0, written by the release before stores
recorded their schema (commit 3896d2d, hanna_stats 0.1.0), gzipped (DuckDB files are mostly
empty blocks), made from ``data/store_v0.csv`` by::

    cd <checkout of 3896d2d> && python -m hanna_stats ingest --db store_v0.duckdb \\
        tests/store/data/store_v0.csv --human-system human
    gzip -9 store_v0.duckdb
"""

from __future__ import annotations

import gzip
from pathlib import Path

import duckdb
import numpy as np
import pytest
from polars.testing import assert_frame_equal

from hanna_stats.cli import main
from hanna_stats.store import db, load_study, open_store

DATA = Path(__file__).parent / "data"
CSV = DATA / "store_v0.csv"


@pytest.fixture
def old_store(tmp_path) -> Path:
    """A copy of the schema-0 fixture."""
    path = tmp_path / "old.duckdb"
    path.write_bytes(gzip.decompress((DATA / "store_v0.duckdb.gz").read_bytes()))
    return path


def _ingest(path: Path) -> None:
    assert main(["ingest", "--db", str(path), str(CSV), "--human-system", "human"]) == 0


def _sql(capsys, path: Path, query: str, *options: str) -> list[str]:
    """The lines ``sql`` prints."""
    capsys.readouterr()
    assert main(["sql", "--db", str(path), *options, query]) == 0
    return capsys.readouterr().out.split("\n")


def _tables(path: Path) -> dict[str, list]:
    """Every table of a store file, with its columns and rows."""
    con = duckdb.connect(str(path), read_only=True)
    names = con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()
    tables = {
        t: (con.execute(f"DESCRIBE {t}").fetchall(), con.sql(f"FROM {t} ORDER BY ALL").fetchall())
        for (t,) in names
    }
    con.close()
    return tables


def test_a_new_store_has_schema_1(tmp_path, capsys):
    path = tmp_path / "new.duckdb"
    _ingest(path)
    lines = _sql(capsys, path, "SELECT schema_version, written_by FROM store_schema")
    assert lines[0].split() == ["schema_version", "written_by"]
    assert lines[2].split() == ["1", "0.1.0"] and lines[3] == "1 row"
    assert db.SCHEMA_VERSION == 1 == len(db.MIGRATIONS)
    assert db.schema_version(open_store()) == (1, "0.1.0")


def test_an_old_store_is_refused_read_only_and_migrates_on_a_writable_open(
    old_store, tmp_path, capsys
):
    before = old_store.read_bytes()
    assert main(["correlate", "--db", str(old_store)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        f"error: {old_store}: store schema 0 (written before stores recorded their schema), older "
        "than schema 1: migrate the file once by opening it for writing, e.g. `python -m "
        f'hanna_stats sql --write --db {old_store} "SELECT schema_version FROM store_schema"` '
        "(or any ingest into it)"
    )
    assert old_store.read_bytes() == before  # a read-only open writes nothing
    lines = _sql(capsys, old_store, "SELECT schema_version FROM store_schema", "--write")
    assert lines[2].split() == ["1"]
    # The migrated store loads as a store of schema 1 ingested from the same file.
    new = tmp_path / "new.duckdb"
    _ingest(new)
    migrated, fresh = (open_store(p, read_only=True) for p in (old_store, new))
    a, b = load_study(migrated), load_study(fresh)
    np.testing.assert_array_equal(a.values, b.values)
    assert (a.measures, a.kinds, a.inputs, a.systems, a.name, a.item_word) == (
        b.measures, b.kinds, b.inputs, b.systems, b.name, b.item_word
    )  # fmt: skip
    assert a.is_human.tolist() == b.is_human.tolist() == [False, False, True]
    assert a.subsets == b.subsets == ("en-de", "en-fr")
    for frame in ("system_values", "catalogue", "ratings", "scale_checks", "counts", "sources"):
        assert_frame_equal(getattr(a, frame), getattr(b, frame))
    assert a.values.shape == (2, 4, 3) and a.ratings.height == 24
    assert set(_tables(old_store)) == set(_tables(new))


def test_the_migration_is_one_transaction(old_store, monkeypatch):
    """A failure in the last statement of the migration leaves the file as it was."""
    before = _tables(old_store)
    read_sql = db.read_sql

    def failing(name: str) -> str:
        return "SELECT error('injected')" if name == "views.sql" else read_sql(name)

    monkeypatch.setattr(db, "read_sql", failing)
    with pytest.raises(duckdb.Error, match="injected"):
        open_store(old_store)
    assert _tables(old_store) == before and "store_schema" not in before
    monkeypatch.undo()
    con = open_store(old_store)
    assert db.schema_version(con) == (1, "0.1.0")
    assert con.execute("SELECT DISTINCT subset FROM system_level_scores").fetchall() == []
    assert con.execute("SELECT name, item_word FROM study").fetchall() == [("store_v0", "item")]
    con.close()


def test_a_newer_store_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / "newer.duckdb"
    _ingest(path)
    con = duckdb.connect(str(path))
    con.execute("UPDATE store_schema SET schema_version = 2, written_by = '9.0'")
    con.close()
    message = (
        f"{path}: store schema 2 (written by hanna_stats 9.0) is newer than schema 1, the one "
        "hanna_stats 0.1.0 reads: upgrade hanna_stats to open it"
    )
    for read_only in (True, False):
        with pytest.raises(ValueError) as err:
            open_store(path, read_only=read_only)
        assert str(err.value) == message
    capsys.readouterr()
    assert main(["sql", "--write", "--db", str(path), "SELECT 1"]) == 2
    assert capsys.readouterr().err.splitlines() == [f"error: {message}"]
