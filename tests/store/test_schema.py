"""The store's schema version (table ``store_schema``) and the migration of older stores.

``data/store_v0.duckdb.gz`` is a store of schema 0, written by the release before stores
recorded their schema (commit 3896d2d, hanna_stats 0.1.0), gzipped (DuckDB files are mostly
empty blocks), made from ``data/store_v0.csv`` by::

    cd <checkout of 3896d2d> && python -m hanna_stats ingest --db store_v0.duckdb \\
        tests/store/data/store_v0.csv --human-system human
    gzip -9 store_v0.duckdb

``data/store_v1.duckdb.gz`` is a store of schema 1 (commit b1aff80), holding both pairs of
``test_store_wmt.make_test_set`` (given system- and domain-level values in the tables of schema
1, ``system_level_scores`` and ``domain_level_scores``), made by::

    python -c "from pathlib import Path; from test_store_wmt import make_test_set; \
        make_test_set(Path('/tmp/wmt23'))"  # in tests/store
    cd <checkout of b1aff80> && for lp in en-de de-en; do python -m hanna_stats ingest \
        --db store_v1.duckdb /tmp/wmt23 --lp $lp --ref refA --extend; done
    gzip -9 store_v1.duckdb
"""

from __future__ import annotations

import gzip
from pathlib import Path

import duckdb
import numpy as np
import pytest
from polars.testing import assert_frame_equal
from test_store_wmt import make_test_set

from hanna_stats.cli import main
from hanna_stats.store import db, ingest, load_study, open_store

DATA = Path(__file__).parent / "data"
CSV = DATA / "store_v0.csv"


def _copy(tmp_path: Path, version: int) -> Path:
    """A copy of the fixture of schema ``version``."""
    path = tmp_path / f"v{version}.duckdb"
    path.write_bytes(gzip.decompress((DATA / f"store_v{version}.duckdb.gz").read_bytes()))
    return path


@pytest.fixture
def old_store(tmp_path) -> Path:
    """A copy of the schema-0 fixture."""
    return _copy(tmp_path, 0)


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


def _assert_same_study(a, b) -> None:
    """Two Studies hold the same values, names and tables."""
    np.testing.assert_array_equal(a.values, b.values)
    assert (a.measures, a.kinds, a.inputs, a.systems, a.name, a.item_word, a.subsets) == (
        b.measures, b.kinds, b.inputs, b.systems, b.name, b.item_word, b.subsets
    )  # fmt: skip
    assert a.is_human.tolist() == b.is_human.tolist()
    for frame in ("given_system_scores", "catalogue", "ratings", "scale_checks", "counts"):
        assert_frame_equal(getattr(a, frame), getattr(b, frame))


def test_a_new_store_has_schema_2(tmp_path, capsys):
    path = tmp_path / "new.duckdb"
    _ingest(path)
    lines = _sql(capsys, path, "SELECT schema_version, written_by FROM store_schema")
    assert lines[0].split() == ["schema_version", "written_by"]
    assert lines[2].split() == ["2", "0.1.0"] and lines[3] == "1 row"
    assert db.SCHEMA_VERSION == 2 == len(db.MIGRATIONS)
    assert db.schema_version(open_store()) == (2, "0.1.0")


def test_an_old_store_is_refused_read_only_and_migrates_on_a_writable_open(
    old_store, tmp_path, capsys
):
    before = old_store.read_bytes()
    assert main(["correlate", "--db", str(old_store)]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line == (
        f"error: {old_store}: store schema 0 (written before stores recorded their schema), older "
        "than schema 2: migrate the file once by opening it for writing, e.g. `python -m "
        f'hanna_stats sql --write --db {old_store} "SELECT schema_version FROM store_schema"` '
        "(or any ingest into it)"
    )
    assert old_store.read_bytes() == before  # a read-only open writes nothing
    lines = _sql(capsys, old_store, "SELECT schema_version FROM store_schema", "--write")
    assert lines[2].split() == ["2"]
    # The migrated store loads as a store of schema 2 ingested from the same file.
    new = tmp_path / "new.duckdb"
    _ingest(new)
    migrated, fresh = (open_store(p, read_only=True) for p in (old_store, new))
    a, b = load_study(migrated), load_study(fresh)
    _assert_same_study(a, b)
    assert_frame_equal(a.sources, b.sources)
    assert a.is_human.tolist() == [False, False, True] and a.subsets == ("en-de", "en-fr")
    assert a.values.shape == (2, 4, 3) and a.ratings.height == 24
    assert set(_tables(old_store)) == set(_tables(new))


def test_a_store_of_schema_1_migrates_its_given_values(tmp_path, capsys):
    """Schema 1 named the tables of given values system_level_scores and domain_level_scores and
    had no view item_scores: read-only, the store is refused in one line; a writable open renames
    the tables, keeps their values and writes the views, and the store then reads as a new
    ingest of the same files."""
    old = _copy(tmp_path, 1)
    before = old.read_bytes()
    with pytest.raises(ValueError) as err:
        open_store(old, read_only=True)
    assert str(err.value) == (
        f"{old}: store schema 1 (written by hanna_stats 0.1.0), older than schema 2: migrate the "
        f"file once by opening it for writing, e.g. `python -m hanna_stats sql --write --db {old} "
        '"SELECT schema_version FROM store_schema"` (or any ingest into it)'
    )
    assert old.read_bytes() == before
    lines = _sql(capsys, old, "SELECT schema_version FROM store_schema", "--write")
    assert lines[2].split() == ["2"]
    root = make_test_set(tmp_path / "wmt23")
    new = tmp_path / "new.duckdb"
    con = open_store(new)
    for lp in ("en-de", "de-en"):
        ingest(con, root, lp=lp, ref="refA", format="wmt", extend=True)
    con.close()
    migrated, fresh = (open_store(p, read_only=True) for p in (old, new))
    _assert_same_study(load_study(migrated), load_study(fresh))
    tables = {
        name: (
            migrated.sql(f"FROM {name} ORDER BY ALL").fetchall(),
            fresh.sql(f"FROM {name} ORDER BY ALL").fetchall(),
        )
        for name in (
            "given_system_scores_by_id",
            "given_domain_scores_by_id",
            "given_system_scores",
            "given_domain_scores",
            "story_scores",
        )
    }
    assert all(a == b for a, b in tables.values())
    assert len(tables["given_system_scores_by_id"][0]) == 36
    assert len(tables["given_domain_scores_by_id"][0]) == 8
    assert tables["story_scores"][0] == migrated.sql("FROM item_scores ORDER BY ALL").fetchall()
    # scores_wide is written anew, over item_scores.
    ((wide,),) = migrated.execute(
        "SELECT sql FROM duckdb_views() WHERE view_name = 'scores_wide'"
    ).fetchall()
    assert "item_scores" in wide and "story_scores" not in wide
    assert (
        migrated.sql("FROM scores_wide ORDER BY ALL").fetchall()
        == fresh.sql("FROM scores_wide ORDER BY ALL").fetchall()
    )
    assert set(_tables(old)) == set(_tables(new))


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
    assert db.schema_version(con) == (2, "0.1.0")
    assert con.execute("SELECT DISTINCT subset FROM given_system_scores_by_id").fetchall() == []
    assert con.execute("SELECT name, item_word FROM study").fetchall() == [("store_v0", "item")]
    con.close()


def test_a_newer_store_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / "newer.duckdb"
    _ingest(path)
    con = duckdb.connect(str(path))
    con.execute("UPDATE store_schema SET schema_version = 3, written_by = '9.0'")
    con.close()
    message = (
        f"{path}: store schema 3 (written by hanna_stats 9.0) is newer than schema 2, the one "
        "hanna_stats 0.1.0 reads: upgrade hanna_stats to open it"
    )
    for read_only in (True, False):
        with pytest.raises(ValueError) as err:
            open_store(path, read_only=read_only)
        assert str(err.value) == message
    capsys.readouterr()
    assert main(["sql", "--write", "--db", str(path), "SELECT 1"]) == 2
    assert capsys.readouterr().err.splitlines() == [f"error: {message}"]
