"""The command line: subcommands, output formats, read-only SQL and clear errors."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import polars as pl
import pytest

from hanna_stats.cli import build_parser, main

SUBCOMMANDS = [
    "fetch-data",
    "ingest",
    "sql",
    "correlate",
    "borda",
    "topk",
    "williams",
    "bootstrap-pairs",
    "bootstrap-pair-labels",
    "ci",
    "permutation",
    "agreement",
    "system-means",
    "report",
    "score",
]


def test_module_help_lists_every_subcommand():
    out = subprocess.run(
        [sys.executable, "-m", "hanna_stats", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for name in SUBCOMMANDS:
        assert name in out


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_each_subcommand_has_help(name, capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([name, "--help"])
    assert exit_.value.code == 0
    assert "usage:" in capsys.readouterr().out


def _run(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def db(hanna_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "hanna.duckdb"
    assert main(["ingest", "--db", str(path), str(hanna_dir)]) == 0
    return path


def test_correlate_csv_and_json(db, capsys):
    args = ["correlate", "--db", str(db), "--level", "system", "--method", "pearson"]
    code, out, _ = _run([*args, "--format", "csv"], capsys)
    assert code == 0
    df = pl.read_csv(io.StringIO(out))
    assert df.columns[:6] == ["measure", "against", "level", "method", "variant", "statistic"]
    assert {"n_groups", "n_skipped"} <= set(df.columns) and df.height == 72 * 6
    code, out, _ = _run(["borda", "--db", str(db), "--format", "json"], capsys)
    rows = json.loads(out)
    assert code == 0 and rows[0]["measure"] == "chrF" and rows[0]["borda"] == 1237


def test_sql_is_read_only_by_default(db, capsys):
    code, out, _ = _run(
        ["sql", "--db", str(db), "--format", "csv", "SELECT count(*) AS n FROM measures"], capsys
    )
    assert code == 0 and out.splitlines() == ["n", str(6 + 72 + 140)]
    code, _, err = _run(["sql", "--db", str(db), "DELETE FROM scores"], capsys)
    assert code == 2 and "read-only" in err.lower()


def test_help_imports_no_library():
    # Subcommand parsers are built when used: the top-level help loads neither DuckDB, polars
    # nor Numba.
    code = (
        "import sys\n"
        "from hanna_stats.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted({'numba', 'duckdb', 'polars', 'numpy'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines()[-1] == "[]"


def test_sql_write_opens_the_file_read_write(tmp_path, capsys):
    path = tmp_path / "tiny.duckdb"
    tidy = tmp_path / "tidy.csv"
    tidy.write_text("item,input,system,measure,value\ni1,p1,s1,BLEU,0.3\ni2,p1,s2,BLEU,0.5\n")
    assert main(["ingest", "--db", str(path), str(tidy)]) == 0
    capsys.readouterr()
    code, _, _ = _run(["sql", "--db", str(path), "--write", "DELETE FROM scores"], capsys)
    assert code == 0
    code, out, _ = _run(
        ["sql", "--db", str(path), "--format", "csv", "SELECT count(*) AS n FROM scores"], capsys
    )
    assert code == 0 and out.splitlines() == ["n", "0"]


def test_missing_data_says_how_to_get_it(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("HANNA_DATA", raising=False)
    monkeypatch.setenv("HANNA_STATS_CACHE", str(tmp_path))
    code, _, err = _run(["correlate"], capsys)
    assert code == 2
    assert "--data DIR" in err and "HANNA_DATA" in err and "fetch-data --local" in err


def test_bad_tidy_file_names_row_and_column(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("item,input,system,measure,value\ni1,p1,s1,BLEU,0.3\ni2,p1,s2,BLEU,high\n")
    code, _, err = _run(["ingest", "--db", str(tmp_path / "x.duckdb"), str(bad)], capsys)
    assert code == 2
    assert "bad.csv" in err and "row 2" in err and "value" in err
