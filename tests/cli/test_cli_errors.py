"""The command line's data source and errors: a missing --db file, --db with --data, one-line
errors without traceback, --debug, and a reader that closes the pipe early."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys

import pytest

from hanna_stats.cli import main

SUBPROCESS_ENV = {**os.environ, "CI": "1"}  # no progress bars on stderr


@pytest.fixture(scope="module")
def db(hanna_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "hanna.duckdb"
    assert main(["ingest", "--db", str(path), str(hanna_dir)]) == 0
    return path


def _run(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _module(*args, **kwargs):
    return subprocess.run(
        [sys.executable, "-m", "hanna_stats", *map(str, args)],
        capture_output=True,
        text=True,
        env=SUBPROCESS_ENV,
        **kwargs,
    )


@pytest.mark.parametrize(
    "command", [["sql", "SELECT 1"], ["correlate"], ["sql", "--write", "SELECT 1"]]
)
def test_missing_db_file_with_hanna_data_set(command, tmp_path, hanna_dir, monkeypatch, capsys):
    # Regression: with HANNA_DATA set, a mistyped --db used to build a 15 MB HANNA store there.
    monkeypatch.setenv("HANNA_DATA", str(hanna_dir))
    typo = tmp_path / "typo.duckdb"
    code, out, err = _run([command[0], "--db", str(typo), *command[1:]], capsys)
    assert code == 2 and out == ""
    assert err == (
        f"error: --db {typo}: no such store file "
        "(build one with `python -m hanna_stats ingest --db FILE DIR`)\n"
    )
    assert not typo.exists()
    assert list(tmp_path.iterdir()) == []


def test_missing_db_file_without_hanna_data(tmp_path, monkeypatch, capsys):
    # Regression: without HANNA_DATA, the error used to say that the HANNA data were missing.
    monkeypatch.delenv("HANNA_DATA", raising=False)
    monkeypatch.setenv("HANNA_STATS_CACHE", str(tmp_path / "cache"))
    typo = tmp_path / "typo.duckdb"
    code, _, err = _run(["sql", "--db", str(typo), "SELECT 1"], capsys)
    assert code == 2
    assert "no such store file" in err and str(typo) in err and "HANNA data" not in err
    assert not typo.exists()


def test_db_and_data_together_name_both(db, hanna_dir, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["correlate", "--db", str(db), "--data", str(hanna_dir)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert "--db" in err and "--data" in err and "not allowed" in err


def test_bad_option_value_is_one_line(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["correlate", "--level", "galaxy"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--level" in err and "galaxy" in err


def test_analysis_value_error_is_one_line_without_traceback(db):
    result = _module("williams", "--criterion", "XX", "--db", db)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error: criterion must be one of Relevance (RE)")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_spa_of_one_system_is_one_line_without_warnings(tmp_path):
    # It printed numpy RuntimeWarnings (a mean over no pair of systems) and a NaN table.
    rows = ["item,input,system,measure,value"]
    rows += [f"{g},{g},A,{m},{v}" for g in range(5) for m, v in (("H", g % 3), ("BLEU", g / 10))]
    tidy = tmp_path / "one.csv"
    tidy.write_text("\n".join(rows) + "\n")
    store = tmp_path / "one.duckdb"
    assert main(["ingest", "--db", str(store), "--human", "H", str(tidy)]) == 0
    result = _module("spa", "--db", store)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("error: spa compares systems; the study has 1 (A)")
    assert result.stderr.count("\n") == 1 and "Warning" not in result.stderr


def test_sql_error_is_one_line(db, capsys):
    code, _, err = _run(["sql", "--db", str(db), "SELECT * FROM no_such_table"], capsys)
    assert code == 2
    assert err.startswith("error: Catalog Error") and "no_such_table" in err
    assert err.count("\n") == 1


def test_debug_shows_the_traceback(db):
    result = _module("--debug", "williams", "--criterion", "XX", "--db", db)
    assert result.returncode != 0
    assert "Traceback (most recent call last)" in result.stderr
    assert "ValueError: criterion must be one of" in result.stderr


def test_debug_in_process_reraises(db, capsys):
    with pytest.raises(ValueError, match="criterion must be one of"):
        main(["--debug", "williams", "--criterion", "XX", "--db", str(db)])


def _pipe_to_head(args):
    command = " ".join(shlex.quote(str(a)) for a in (sys.executable, "-m", "hanna_stats", *args))
    return subprocess.run(
        ["sh", "-c", f"{command} | head -1"],
        capture_output=True,
        text=True,
        env=SUBPROCESS_ENV,
        timeout=300,
    )


def test_closed_pipe_is_quiet(db):
    # Several MB of CSV: the reader is gone long before the writer is done.
    result = _pipe_to_head(
        ["correlate", "--db", db, "--level", "system", "--against", "all", "--format", "csv"]
    )
    assert result.stdout == "measure,against,level,method,variant,statistic,n,n_groups,n_skipped\n"
    assert result.stderr == ""
    result = _pipe_to_head(
        ["sql", "--db", db, "--format", "csv", "SELECT item, measure, value FROM item_scores"]
    )
    assert result.stdout == "item,measure,value\n" and result.stderr == ""
    # The table format: this one used to end with "error: [Errno 32] Broken pipe".
    result = _pipe_to_head(["sql", "--db", db, "SELECT item, measure, value FROM item_scores"])
    assert result.stdout.split() == ["item", "measure", "value"] and result.stderr == ""


def test_closed_pipe_table_format_is_quiet(db):
    # The reader closes its end after one line, while the writer is still printing.
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "hanna_stats",
            "sql",
            "--db",
            str(db),
            "SELECT item, measure, value FROM item_scores",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=SUBPROCESS_ENV,
    )
    process.stdout.readline()
    process.stdout.close()
    _, err = process.communicate(timeout=300)
    assert err == b""


def test_ingest_of_a_missing_file_creates_no_store(tmp_path, capsys):
    store = tmp_path / "new.duckdb"
    code, _, err = _run(["ingest", "--db", str(store), str(tmp_path / "nope.csv")], capsys)
    assert code == 2 and err == f"error: {tmp_path / 'nope.csv'}: no such file or folder\n"
    assert not store.exists()
