"""Validation of HANNA metric-score files (synthetic, made here) and atomicity of ingests."""

from __future__ import annotations

import csv
import json

import pytest

from hanna_stats.store import InputError, ingest, open_store
from hanna_stats.store import batch as batch_module

CRITERIA = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]
ABBR = ["RE", "CH", "EM", "SU", "EG", "CX"]
MODELS = ["Human", "GPT", "CTRL"]
N = 4
TABLES = ["systems", "inputs", "items", "measures", "raters", "scores", "ratings", "ingests"]


def counts(con) -> dict[str, int]:
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES}


def likert(i: int, j: int, p: int) -> float:
    return 1 + ((i + j + p) % 9) / 2


def metric_table(models=MODELS, metrics=("BLEU Ξ§", "SUPERT-PS ¤ε")):
    header = ["Model", *CRITERIA, *metrics]
    rows = [
        [m, *(json.dumps([likert(i, j, p) for p in range(N)]) for j in range(len(header) - 1))]
        for i, m in enumerate(models)
    ]
    return header, rows


def llm_table():
    """A small file of the LLM format: slot ratings whose mean is the criterion column."""
    header, rows = metric_table()
    slots = {i: {c: [[1 + (i + k + p) % 5 for p in range(N)] for k in range(3)] for c in ABBR}
             for i in range(len(MODELS))}  # fmt: skip
    header = header + [f"Human {k} {a}" for k in (1, 2, 3) for a in ABBR]
    header += [f"Human Avg {k} {a}" for k in (1, 2, 3) for a in ABBR]
    header += [f"Beluga-13B {a} 1" for a in [*ABBR, "AVG"]]
    for i, row in enumerate(rows):
        for c, a in enumerate(ABBR):
            row[1 + c] = json.dumps([sum(s[p] for s in slots[i][a]) / 3 for p in range(N)])
        row += [json.dumps(slots[i][a][k]) for k in range(3) for a in ABBR]
        row += [json.dumps([3.0] * N) for _ in range(18)]
        row += [json.dumps([-1.0, 0.5, 2.75, 5.0]) for _ in range(7)]
    return header, rows


def write(path, header, rows):
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([header, *rows])
    return path


@pytest.fixture
def metric_file(tmp_path):
    return write(tmp_path / "hanna_metric_scores.csv", *metric_table())


def expect_error(path, match, format="hanna-metric-scores"):
    con = open_store()
    with pytest.raises(InputError, match=match) as err:
        ingest(con, path, format=format)
    assert counts(con) == dict.fromkeys(TABLES, 0)
    return err.value


def test_synthetic_file_ingests(metric_file):
    con = open_store()
    (summary,) = ingest(con, metric_file, format="hanna-metric-scores")
    assert summary.n_values == 3 * N * 8
    assert counts(con)["items"] == 12
    names = con.execute("SELECT name FROM items ORDER BY item_id").fetchall()
    assert [n[0] for n in names] == [str(i) for i in range(12)]


def test_wrong_list_length(tmp_path):
    header, rows = metric_table()
    rows[1][7] = json.dumps([1.0] * (N - 1))
    err = expect_error(write(tmp_path / "hanna_metric_scores.csv", header, rows), "got 3")
    assert str(err) == (
        "hanna_metric_scores.csv, row 2 (Model=GPT), column 'BLEU Ξ§': "
        "expected a JSON list of 4 numbers, got 3"
    )
    assert (err.row, err.column) == (2, "BLEU Ξ§")


@pytest.mark.parametrize(
    ("cell", "match"),
    [
        ("[1, 2,", "invalid JSON"),
        ("", "empty cell"),
        ('[1, "x", 3, 4]', "element 1 is 'x'"),
        ("[1, true, 3, 4]", "element 1 is True"),
        ("[1, [2], 3, 4]", r"element 1 is \[2\]"),
        ('{"a": 1}', "got dict"),
        ("[1, Infinity, 3, 4]", "finite"),
    ],
)
def test_bad_cells(tmp_path, cell, match):
    header, rows = metric_table()
    rows[2][8] = cell
    err = expect_error(write(tmp_path / "m.csv", header, rows), match)
    assert (err.file, err.row, err.column) == ("m.csv", 3, "SUPERT-PS ¤ε")
    assert "row 3 (Model=CTRL), column 'SUPERT-PS ¤ε'" in str(err)


def test_null_and_nan_are_missing(tmp_path):
    header, rows = metric_table()
    rows[2][8] = "[1, null, NaN, 4]"
    con = open_store()
    ingest(con, write(tmp_path / "m.csv", header, rows), format="hanna-metric-scores")
    values = con.execute(
        "SELECT value FROM item_scores WHERE system = 'CTRL' AND measure = 'SUPERT-PS' "
        "ORDER BY input_position"
    ).fetchall()
    assert values == [(1.0,), (None,), (None,), (4.0,)]


def test_lists_not_aligned(tmp_path):
    header, rows = metric_table()
    rows[2][1:] = [json.dumps([2.0] * (N + 1)) for _ in rows[2][1:]]
    err = expect_error(write(tmp_path / "m.csv", header, rows), "not aligned")
    assert err.row == 3 and err.column is None
    assert "every list in this row has 5 numbers, row 1 has 4" in str(err)


def test_missing_column(tmp_path):
    header, rows = metric_table()
    drop = header.index("Coherence")
    err = expect_error(
        write(
            tmp_path / "m.csv",
            header[:drop] + header[drop + 1 :],
            [r[:drop] + r[drop + 1 :] for r in rows],
        ),
        "missing column",
    )
    assert err.column == "Coherence" and err.row is None


def test_duplicate_model(tmp_path):
    header, rows = metric_table(models=["Human", "GPT", "GPT"])
    err = expect_error(write(tmp_path / "m.csv", header, rows), "duplicate Model 'GPT'")
    assert (err.row, err.column) == (3, "Model")
    assert "also row 2" in str(err)


def test_likert_out_of_range(tmp_path):
    header, rows = metric_table()
    rows[1][3] = json.dumps([3.0, 5.5, 2.0, 1.0])
    err = expect_error(write(tmp_path / "m.csv", header, rows), "Likert")
    assert (err.row, err.column) == (2, "Empathy")
    assert "got 5.5 at list position 1" in str(err)


def test_empty_files(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    assert "0 bytes" in str(expect_error(empty, "empty"))
    header_only = tmp_path / "header.csv"
    header_only.write_text(",".join(metric_table()[0]) + "\n", encoding="utf-8")
    expect_error(header_only, "no data rows")


def test_bad_utf8(tmp_path):
    header, rows = metric_table()
    path = write(tmp_path / "m.csv", header, rows)
    data = path.read_bytes().replace(b"CTRL", b"CT\xffRL")
    path.write_bytes(data)
    err = expect_error(path, "not valid UTF-8")
    assert err.row == 3


def test_unknown_and_llm_columns(tmp_path):
    header, rows = metric_table(metrics=("BLEU Ξ§", "Mystery"))
    err = expect_error(write(tmp_path / "m.csv", header, rows), "unexpected column")
    assert err.column == "Mystery"
    header, rows = llm_table()
    err = expect_error(write(tmp_path / "llm.csv", header, rows), "format hanna-llm")
    assert err.column == "Human 1 RE"


def test_ragged_row(tmp_path):
    header, rows = metric_table()
    rows[1] = rows[1][:-1]
    err = expect_error(write(tmp_path / "m.csv", header, rows), "expected 9 fields, got 8")
    assert err.row == 2


def test_llm_synthetic(tmp_path):
    con = open_store()
    (summary,) = ingest(con, write(tmp_path / "llm.csv", *llm_table()), format="hanna-llm")
    assert summary.n_values == 3 * N * (8 + 7) + 3 * N * 3 * 6
    values = con.execute(
        "SELECT value FROM item_scores WHERE measure = 'Beluga-13B Average (prompt 1)' "
        "AND system = 'GPT' ORDER BY input_position"
    ).fetchall()
    assert [v[0] for v in values] == [-1.0, 0.5, 2.75, 5.0]  # stored as published


def test_llm_slots_must_average_to_criterion(tmp_path):
    header, rows = llm_table()
    rows[1][header.index("Human 2 EM")] = json.dumps([5, 5, 5, 5])
    err = expect_error(write(tmp_path / "llm.csv", header, rows), "judge-slot", "hanna-llm")
    assert (err.row, err.column) == (2, "Empathy")


def test_llm_missing_slot_column(tmp_path):
    header, rows = llm_table()
    drop = header.index("Human 2 SU")
    path = write(
        tmp_path / "llm.csv",
        header[:drop] + header[drop + 1 :],
        [r[:drop] + r[drop + 1 :] for r in rows],
    )
    err = expect_error(path, "missing judge-slot column", "hanna-llm")
    assert err.column == "Human 2 SU"


def test_failing_ingest_leaves_store_unchanged(tmp_path, metric_file):
    con = open_store()
    ingest(con, metric_file, format="hanna-metric-scores")
    before = counts(con)
    header, rows = metric_table(models=["Human", "GPT", "CTRL", "XLNet"])
    rows[3][5] = json.dumps([9.0] * N)  # Surprise out of range
    with pytest.raises(InputError):
        ingest(con, write(tmp_path / "bad.csv", header, rows), format="hanna-metric-scores")
    assert counts(con) == before


def test_error_after_writes_rolls_back(tmp_path, metric_file, monkeypatch):
    """A failure at the very end of the transaction undoes every upsert."""
    con = open_store()
    ingest(con, metric_file, format="hanna-metric-scores")
    before = counts(con)
    view_before = con.execute('SELECT count("BLEU") FROM scores_wide').fetchall()

    def broken(con):
        raise RuntimeError("disk full")

    monkeypatch.setattr(batch_module, "refresh_scores_wide", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        # (this synthetic LLM file's criteria differ from the metric file's: replace=True)
        ingest(con, write(tmp_path / "llm.csv", *llm_table()), replace=True, format="hanna-llm")
    assert counts(con) == before
    assert con.execute('SELECT count("BLEU") FROM scores_wide').fetchall() == view_before
    monkeypatch.undo()
    ingest(
        con, tmp_path / "llm.csv", replace=True, format="hanna-llm"
    )  # the connection is usable again
    assert counts(con)["ratings"] == 3 * N * 3 * 6


def test_conflicting_items_are_refused(tmp_path, metric_file):
    """The same model in another row would move Story IDs to other systems."""
    con = open_store()
    ingest(con, metric_file, format="hanna-metric-scores")
    before = counts(con)
    header, rows = metric_table(models=["Human", "CTRL", "GPT"])
    with pytest.raises(InputError, match="already holds it") as err:
        ingest(con, write(tmp_path / "swapped.csv", header, rows), format="hanna-metric-scores")
    assert err.value.row == 2
    assert counts(con) == before
