"""What the command line prints: tables that fit the terminal, every format through a closed
pipe, progress bars on a terminal only."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import shlex
import subprocess
import sys

import polars as pl
import pytest

from hanna_stats import tables
from hanna_stats.cli import build_parser, main
from hanna_stats.cli.commands import commands
from hanna_stats.cli.tables import emit

#: No CI variable (progress bars are on when stderr is a terminal), a known width.
ENV = {k: v for k, v in os.environ.items() if k != "CI"}


@pytest.fixture(scope="module")
def db(hanna_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "hanna.duckdb"
    assert main(["ingest", "--db", str(path), str(hanna_dir)]) == 0
    return path


def _command(*args) -> str:
    return " ".join(shlex.quote(str(a)) for a in (sys.executable, "-m", "hanna_stats", *args))


# --------------------------------------------------------------------------- tables


def test_judge_williams_table_fits_100_columns(hanna_dir):
    result = subprocess.run(
        _command("judge-williams", "--data", hanna_dir, "--level", "global"),
        shell=True,
        capture_output=True,
        text=True,
        env={**ENV, "COLUMNS": "100", "CI": "1"},
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    headers = {word.rstrip(":") for line in lines for word in line.split()}
    # headers alike stay whole and apart (above the table when constant)
    for name in ("pvalue_judge", "pvalue_metric"):
        assert name in headers and f"{name}_adjusted" in headers
    assert lines[-1].startswith("120 rows")


def test_table_cuts_long_cells_and_counts_rows():
    df = pl.DataFrame(
        {
            "measure": ["a" * 60, "b", "c"],
            "pvalue_judge": [0.5, 1e-7, None],
            "pvalue_judge_adjusted": [0.123456789, float("nan"), 2.0],
            "n": [960, 5, 1_234_567],
        }
    )
    lines = tables.table_lines(df, 64)  # the measures squeezed, one block
    assert all(len(line) <= 64 for line in lines)
    assert lines[0].split() == ["measure", "pvalue_judge", "pvalue_judge_adjusted", "n"]
    assert set(lines[1]) <= {"-", " "}
    cut = lines[2].split()[0]  # squeezed as much as needed, not to SQUEEZED_WIDTH
    assert cut == "a" * (len(cut) - 1) + "…" and tables.SQUEEZED_WIDTH <= len(cut) < 40
    assert lines[2].split()[1:] == ["0.5000", "0.1235", "960"]
    assert lines[3].split()[1:] == ["1.000e-07", "NaN", "5"]
    assert lines[4].split()[1:] == ["null", "2.0000", "1,234,567"]
    assert lines[-1] == "3 rows"


def test_wide_table_moves_columns_to_blocks_repeating_the_first():
    columns = {f"column_{k:02d}": [k, k + 1] for k in range(12)}
    df = pl.DataFrame({"measure": ["BLEU", "chrF"], **columns})
    lines = tables.table_lines(df, 50)
    assert max(len(line) for line in lines) <= 50
    blocks = "\n".join(lines[:-1]).split("\n\n")
    assert len(blocks) > 1
    assert all(block.split()[0] == "measure" for block in blocks)
    shown = [word for block in blocks for word in block.splitlines()[0].split()]
    assert [w for w in shown if w != "measure"] == [f"column_{k:02d}" for k in range(12)]
    assert lines[-1] == f"2 rows, 13 columns in {len(blocks)} blocks"


def test_long_table_on_a_terminal_shows_its_ends():
    df = pl.DataFrame({"k": list(range(5184))})
    lines = tables.table_lines(df, 80, edge=10)
    assert [line.strip() for line in lines[2:12]] == [str(k) for k in range(10)]
    assert lines[12].strip() == "…"
    assert [line.strip() for line in lines[13:23]] == [f"{k:,}" for k in range(5174, 5184)]
    assert lines[-1].startswith("5,184 rows; the first and last 10 shown")
    assert "--format csv" in lines[-1]
    assert len(tables.table_lines(df.head(21), 80, edge=10)) == 2 + 21 + 1  # short: every row


def test_table_of_wide_characters_fits(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "30")
    emit(pl.DataFrame({"text": ["汉字" * 20, "ok"], "x": [1.5, 2.0]}), "table")
    out = capsys.readouterr().out.splitlines()
    assert all(tables._text_width(line) <= 30 for line in out)
    assert out[2].endswith("1.5000") and "…" in out[2]


# --------------------------------------------------------------------------- formats


def test_every_table_command_takes_every_format():
    for command in commands():
        parser = argparse_subparser(command.name)
        formats = [a for a in parser._actions if a.dest == "format"]
        if command.output:
            assert tuple(formats[0].choices) == ("table", "csv", "json", "latex"), command.name
        elif command.name != "ingest":  # ingest --format: the files' format
            assert not formats, command.name


def argparse_subparser(name):
    parser = build_parser()
    action = next(a for a in parser._actions if hasattr(a, "choices") and name in (a.choices or {}))
    sub = action.choices[name]
    sub.format_help()
    return sub


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_user_study_and_score_list_formats(fmt, hanna_dir, capsys):
    assert main(["user-study", "--data", str(hanna_dir), "--resamples", "20", "--format", fmt]) == 0
    out = capsys.readouterr().out
    if fmt == "csv":
        assert pl.read_csv(io.StringIO(out)).height > 0
    elif fmt == "json":
        assert len(json.loads(out)) > 0
    else:
        assert re.match(r"\d+ rows", out.splitlines()[-1])
    assert main(["score", "--list", "--format", fmt]) == 0
    assert capsys.readouterr().out


# --------------------------------------------------------------------------- closed pipes


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_correlate_into_head_exits_0(fmt, db):
    command = _command("correlate", "--db", db, "--level", "story", "--format", fmt)
    result = subprocess.run(
        f"set -o pipefail; {command} | head -n 1 >/dev/null",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        env={**ENV, "CI": "1"},
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and result.stderr == ""


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_big_output_into_head_exits_0(fmt, db):
    # 230,208 rows: the reader is gone long before the writer is done; PIPESTATUS says how
    # the writer ended.
    command = _command(
        "sql", "--db", db, "--format", fmt, "SELECT item, measure, value FROM item_scores"
    )
    result = subprocess.run(
        f'{command} | head -c 100 >/dev/null; echo "${{PIPESTATUS[0]}}"',
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        env={**ENV, "CI": "1"},
        timeout=600,
    )
    assert result.stdout == "0\n" and result.stderr == ""


# --------------------------------------------------------------------------- progress bars


def _run_on_a_terminal(args: list[str]) -> tuple[int, str]:
    """Run the command with stderr on a pseudo-terminal (stdout discarded): exit status, what
    the terminal got."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "hanna_stats", *map(str, args)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=terminal,
        env=ENV,
    )
    os.close(terminal)
    received = b""
    while True:
        try:
            chunk = os.read(controller, 1 << 16)
        except OSError:  # the process closed the terminal
            break
        if not chunk:
            break
        received += chunk
    os.close(controller)
    return process.wait(timeout=600), received.decode("utf-8", "replace")


CI_BCA = ["ci", "--ci-method", "bca", "--resample", "both", "--resamples", "200"]


def test_bca_bootstrap_shows_a_bar_on_a_terminal(db):
    code, terminal = _run_on_a_terminal([*CI_BCA, "--db", db])
    assert code == 0
    assert "bootstrap resamples" in terminal and "%|" in terminal


def test_no_bar_when_piped(db):
    result = subprocess.run(
        _command(*CI_BCA, "--db", db, "--format", "csv") + " 2>&1 | cat",
        shell=True,
        capture_output=True,
        text=True,
        env=ENV,
        timeout=600,
    )
    assert result.returncode == 0
    assert "bootstrap resamples" not in result.stdout and "%|" not in result.stdout
    assert result.stdout.startswith("measure,against,level,method,resample,statistic")
