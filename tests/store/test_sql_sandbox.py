"""``sql`` reads and writes nothing outside the store unless ``--allow-files``."""

from __future__ import annotations

import hashlib

import pytest

from hanna_stats.cli import main
from hanna_stats.store import open_store


@pytest.fixture
def db(tmp_path):
    """A small store file (one table of the schema filled) and its digest."""
    path = tmp_path / "store.duckdb"
    con = open_store(path)
    con.execute("INSERT INTO systems (name, is_human, position) VALUES ('a', false, 0)")
    con.close()
    return path


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _sql(capsys, *args):
    code = main(["sql", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    "query",
    [
        "COPY (SELECT * FROM systems) TO '{out}'",
        "COPY systems TO '{out}' (FORMAT parquet)",
        "SELECT * FROM read_csv('{secret}')",
        "SELECT * FROM read_text('{secret}')",
        "ATTACH '{out}' AS other",
        "INSTALL json",
        "SET enable_external_access = true; COPY systems TO '{out}'",
    ],
)
@pytest.mark.parametrize("write", [False, True])
def test_files_are_out_of_reach(db, tmp_path, capsys, query, write):
    out, secret = tmp_path / "dump.csv", tmp_path / "secret.txt"
    secret.write_text("name\nsecret value\n", encoding="utf-8")
    before = _digest(db)
    args = ["--db", db, query.format(out=out, secret=secret)] + (["--write"] if write else [])
    code, stdout, err = _sql(capsys, *args)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert "secret value" not in stdout
    assert not out.exists()
    if not write:
        assert _digest(db) == before


def test_store_queries_and_writes_still_work(db, capsys):
    assert _sql(capsys, "--db", db, "--format", "csv", "SELECT name FROM systems")[1] == "name\na\n"
    code, _, _ = _sql(capsys, "--db", db, "--write", "CREATE TABLE notes AS SELECT 1 AS x")
    assert code == 0
    assert _sql(capsys, "--db", db, "--format", "csv", "SELECT x FROM notes")[1] == "x\n1\n"


def test_allow_files_opts_in(db, tmp_path, capsys):
    out = tmp_path / "dump.csv"
    code, _, err = _sql(capsys, "--db", db, "--allow-files", f"COPY systems TO '{out}'")
    assert code == 0, err
    assert out.read_text(encoding="utf-8").splitlines()[1].startswith("1,a")
