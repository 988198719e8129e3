"""Tables people read at an 80-column terminal or in a pipe: key columns in every block, the
constant columns on one line above the table, and one number format per column, the same in
the terminal and in the report."""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest

from hanna_stats.cli import main

WIDTH = 80
#: Three metrics with long names (they take most of the width) and one rated criterion.
METRICS = [f"{name}-overlap-metric-with-a-long-name-refA" for name in ("alpha", "beta", "gamma")]
CRITERION = "quality"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """A tidy study: 6 systems x 8 inputs, 3 metrics, one criterion rated by two raters."""
    rng = np.random.default_rng(0)
    rows = []
    for g in range(8):
        for s in range(6):
            base = {"item": f"i{g}-{s}", "input": f"in{g}", "system": f"system-{s}"}
            quality = rng.normal(3 + 0.3 * s, 1)
            for r in range(2):
                rating = float(np.clip(np.round(quality + rng.normal(0, 0.5)), 1, 5))
                rows.append({**base, "measure": CRITERION, "value": rating, "rater": f"r{r}"})
            for k, metric in enumerate(METRICS):
                value = float(np.round(quality * (k + 1) + rng.normal(0, 1 + k), 2))
                rows.append({**base, "measure": metric, "value": value, "rater": None})
    folder = tmp_path_factory.mktemp("tables")
    pl.DataFrame(rows).write_csv(folder / "study.csv")
    path = folder / "study.duckdb"
    assert main(["ingest", "--db", str(path), str(folder / "study.csv"), "--format", "tidy"]) == 0
    return path


def printed(capsys, monkeypatch, *args: str) -> list[str]:
    """The lines a command prints into a pipe at an 80-column terminal width."""
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    capsys.readouterr()
    assert main(list(args)) == 0
    return capsys.readouterr().out.splitlines()


def table(capsys, monkeypatch, *args: str) -> list[str]:
    """The lines of the table a command prints into a pipe at 80 columns, each fitting."""
    lines = printed(capsys, monkeypatch, *args)
    assert max(len(line) for line in lines) <= WIDTH
    return lines


def parsed(lines: list[str]) -> tuple[dict[str, str], list[tuple[list[str], list[dict]]]]:
    """The ``name: value`` pairs above the table, and each block's column names and rows (cells
    by column name, the columns' spans read from the block's rule of dashes)."""
    above: dict[str, str] = {}
    first = next(k for k, line in enumerate(lines) if set(line) <= {"-", " "} and line) - 1
    for line in lines[:first]:
        for item in line.split(" · "):
            name, _, value = item.partition(": ")
            above[name] = value
    blocks = []
    for text in "\n".join(lines[first:-1]).split("\n\n"):
        header, rule, *rows = text.splitlines()
        spans = [m.span() for m in re.finditer(r"-+", rule)]
        names = [header[a:b].strip() for a, b in spans]
        cut = [[row[a:b].strip() for a, b in spans] for row in rows]
        blocks.append((names, [dict(zip(names, cells, strict=True)) for cells in cut]))
    return above, blocks


def assert_keys_in_every_block(blocks, keys: list[str]) -> None:
    """Every block starts with ``keys``, which tell its rows apart, row for row the same."""
    assert [names[: len(keys)] for names, _ in blocks] == [keys] * len(blocks)
    first = [tuple(row[k] for k in keys) for row in blocks[0][1]]
    assert len(set(first)) == len(first), first
    for _, rows in blocks:
        assert [tuple(row[k] for k in keys) for row in rows] == first


PERMUTATIONS = ("--criterion", CRITERION, "--permutations", "50")
METRICS_PEARSON = ("--against", "metrics", "--level", "system", "--method", "pearson")
#: Per command: its arguments, its key columns, what the line above the table says (among
#: others) and value columns its blocks hold.
WRAPPED = {
    "correlate": (
        ("--against", "metrics", "--level", "system"),
        ["measure", "against"],
        {"level": "system", "method": "kendall", "variant": "b"},
        {"statistic"},
    ),
    "calibrated-permutation": (
        PERMUTATIONS,
        ["measure_a", "measure_b"],
        {"criterion": CRITERION, "method": "acc_eq", "permutations": "50", "seed": "0"},
        {"stat_a", "stat_b", "epsilon_a", "epsilon_b", "delta", "pvalue"},
    ),
    "permutation": (
        PERMUTATIONS,
        ["measure_a", "measure_b"],
        {"criterion": CRITERION, "unit": "both", "permutations": "50", "seed": "0"},
        {"r_a", "r_b", "delta", "pvalue"},
    ),
    "clusters": (
        PERMUTATIONS,
        ["measure"],
        {"criterion": CRITERION, "alpha": "0.0500", "permutations": "50", "seed": "0"},
        {"statistic", "rank", "pvalue_next"},
    ),
}


@pytest.mark.parametrize("command", WRAPPED)
def test_tables_at_80_columns_keep_their_keys(command, db, capsys, monkeypatch):
    """Every block starts with the key columns; the constant columns are above the table, not
    in it."""
    args, keys, constant, values = WRAPPED[command]
    lines = table(capsys, monkeypatch, command, "--db", str(db), *args)
    above, blocks = parsed(lines)
    assert_keys_in_every_block(blocks, keys)
    assert {name: above.get(name) for name in constant} == constant
    body = {name for names, _ in blocks for name in names}
    assert values <= body and not body & set(constant)


def test_pearson_drops_the_null_variant(db, capsys, monkeypatch):
    lines = table(capsys, monkeypatch, "correlate", "--db", str(db), *METRICS_PEARSON)
    above, blocks = parsed(lines)
    assert above.get("method") == "pearson" and "variant" not in above
    assert all("variant" not in names for names, _ in blocks)
    assert not any("null" in line for line in lines)


def test_csv_keeps_every_column(db, capsys, monkeypatch):
    lines = printed(
        capsys, monkeypatch, "correlate", "--db", str(db), *METRICS_PEARSON, "--format", "csv"
    )
    header = lines[0].split(",")
    assert header[:5] == ["measure", "against", "level", "method", "variant"]
    assert lines[1].split(",")[2:5] == ["system", "pearson", ""]


# --------------------------------------------------------------------------- text tables


def test_wrapped_table_repeats_every_key_column():
    """Keys: the columns before the first float column, up to the last text one (``k`` is one,
    ``n`` after the floats is not); constant ``criterion`` goes above the table."""
    from hanna_stats.tables import table_lines

    frame = pl.DataFrame(
        {
            "criterion": ["Coherence"] * 4,
            "k": [4, 4, 5, 5],
            "measure": ["BERTScore", "BLEU", "BERTScore", "BLEU"],
            **{f"value_{j:02d}": [0.25 * j, -0.5, 0.125, 1.0] for j in range(8)},
            "n": [96, 96, 1200, 1200],
        }
    )
    lines = table_lines(frame, 50)
    assert lines[0] == "criterion: Coherence"
    blocks = parsed(lines)[1]
    assert len(blocks) > 2
    assert_keys_in_every_block(blocks, ["k", "measure"])
    names, rows = blocks[-1]
    assert names[-1] == "n" and [row["n"] for row in rows] == ["96", "96", "1,200", "1,200"]
    first = blocks[0][1][0]
    assert first["value_00"] == "0.0000" and first["value_01"] == "0.2500"
    assert lines[-1] == f"4 rows, 11 columns in {len(blocks)} blocks"


def test_one_row_keeps_its_constant_columns():
    from hanna_stats.tables import table_lines

    frame = pl.DataFrame({"measure": ["BLEU"], "level": ["system"], "statistic": [0.5]})
    assert table_lines(frame, 80)[0].split() == ["measure", "level", "statistic"]


# --------------------------------------------------------------------------- number formats


def test_each_column_has_the_format_of_what_it_holds():
    """Correlations, t and epsilons in fixed point whatever the column's smallest value (the
    issue's ``1.000e+00``, ``-3.712e-01``, ``9.188e+01``, ``0.000e+00``); p-values scientific
    below 0.001; counts with separators."""
    from hanna_stats.tables import table_lines

    frame = pl.DataFrame(
        {
            "measure": ["a", "b", "c"],
            "statistic": [1.0, 0.00001234, -0.3712],
            "epsilon": [91.88, 0.0, 0.01273],
            "pvalue": [0.365, 1.714e-05, 0.0],
            "n_values": [1_282_500, 5, 960],
        }
    )
    rows = [line.split() for line in table_lines(frame, 80)[2:5]]
    assert rows == [
        ["a", "1.0000", "91.88", "0.3650", "1,282,500"],
        ["b", "0.00001234", "0.0000", "1.714e-05", "5"],
        ["c", "-0.3712", "0.01273", "0.0000", "960"],
    ]


def test_report_tables_use_the_same_formats():
    from hanna_stats.reports.html import Table, _table_html

    frame = pl.DataFrame(
        {
            "measure": ["a", "b"],
            "ci_low": [0.3971, 0.0001],
            "ci_high": [0.4273, 1.0],
            "pvalue_adjusted": [1e-7, 0.5],
            "n": [1_282_500, 7],
            "seed": [12345, 67890],
            "level": ["system", "system"],
        }
    )
    page = _table_html(Table("t", frame, "caption"))
    cells = re.findall(r"<td>([^<]*)</td>", page)
    assert cells == [
        "0.3971", "0.4273", "1.000e-07", "1,282,500", "12345",
        "0.0001", "1.0000", "0.5000", "7", "67890",
    ]  # fmt: skip
    # the constant column is said once, in the caption, as on the terminal
    assert ">level<" not in page and "level: system</span></caption>" in page
