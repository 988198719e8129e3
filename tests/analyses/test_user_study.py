"""The TACL 2024 user study on LLM judges' explanations: reading, validation, agreement, CLI.

The real file is read from the ``hanna_dir`` fixture; malformed files are small synthetic ones
built here.
"""

from __future__ import annotations

import csv
import math

import numpy as np
import polars as pl
import pytest

from hanna_stats.analyses import user_study_agreement
from hanna_stats.cli import main
from hanna_stats.store import InputError, read_user_study
from hanna_stats.store.user_study import EXPLANATION, FLAG_COLUMNS, ISSUES, STORY_ID

# What the authors' notebook prints (irrCAC defaults): issue: (AC1, ci_low, ci_high).
PRINTED = {
    "guidelines": (0.90, 0.85, 0.96),
    "syntax": (0.97, 0.93, 1.00),
    "superfluous": (0.66, 0.55, 0.78),
    "unsubstantiated": (0.60, 0.47, 0.74),
    "incoherence": (0.81, 0.73, 0.89),
}


def _irrcac_ac1(annotations, issue):
    """The irrCAC package's unrounded AC1 of an issue's 100 x 3 flags (``digits=30``; the
    categories 0 and 1 given, as tests/kernels/test_nominal_agreement.py explains):
    (coefficient, ci_low, ci_high, pa)."""
    pytest.importorskip("irrCAC")
    import warnings

    import pandas as pd
    from irrCAC.raw import CAC

    flags = annotations.filter(pl.col("issue") == issue).sort("item", "rater")["flag"]
    frame = pd.DataFrame(flags.to_numpy().reshape(100, 3).astype(np.float64))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        est = CAC(frame, categories=[0.0, 1.0], digits=30).gwet()["est"]
    return (est["coefficient_value"], *est["confidence_interval"], est["pa"])


@pytest.fixture(scope="module")
def annotations(hanna_dir):
    return read_user_study(hanna_dir / "user_study.csv")


@pytest.fixture(scope="module")
def agreement(annotations):
    return user_study_agreement(annotations)


def _row(table, issue, coefficient):
    return table.filter((pl.col("issue") == issue) & (pl.col("coefficient") == coefficient)).row(
        0, named=True
    )


def test_read_user_study_shape(annotations):
    assert annotations.columns == ["item", "story_id", "rater", "issue", "flag"]
    assert annotations.height == 100 * 6 * 3
    assert annotations.schema["flag"] == pl.Int64
    assert annotations["item"].n_unique() == 100
    assert sorted(annotations["rater"].unique()) == [0, 1, 2]
    assert annotations["issue"].unique(maintain_order=True).to_list() == list(ISSUES)
    first = annotations.head(3)
    assert first["item"].to_list() == [0, 0, 0] and first["rater"].to_list() == [0, 1, 2]
    assert first["issue"].to_list() == ["guidelines"] * 3
    key = annotations.select("item", "issue", "rater").with_columns(
        pl.col("issue").replace_strict({name: j for j, name in enumerate(ISSUES)})
    )
    assert key.equals(key.sort("item", "issue", "rater"))
    ones = annotations.group_by("issue").agg(pl.col("flag").sum()).rows()
    assert dict(ones)["incorrectness"] == 0 and dict(ones)["guidelines"] == 282


def test_ac1_reproduces_the_authors(annotations, agreement):
    for issue, printed in PRINTED.items():
        row = _row(agreement, issue, "gwet_ac1")
        got = (row["statistic"], row["ci_low"], row["ci_high"])
        assert tuple(round(v, 2) for v in got) == printed, issue
        *coef, p_a = _irrcac_ac1(annotations, issue)
        assert got == pytest.approx(tuple(coef), rel=1e-9), issue
        assert row["observed_agreement"] == pytest.approx(p_a, rel=1e-12), issue
        assert row["n_items"] == 100


def test_table_layout(agreement):
    assert agreement.columns == [
        "issue",
        "coefficient",
        "statistic",
        "ci_low",
        "ci_high",
        "standard_error",
        "observed_agreement",
        "percent_flagged",
        "n_items",
    ]
    coefficients = ["gwet_ac1", "fleiss_kappa", "krippendorff_alpha"]
    assert agreement.select("issue", "coefficient").rows() == [
        (i, c) for i in ISSUES for c in coefficients
    ]
    alpha = agreement.filter(pl.col("coefficient") == "krippendorff_alpha")
    assert alpha.select("ci_low", "ci_high", "standard_error").null_count().row(0) == (0, 0, 6)
    assert _row(agreement, "guidelines", "gwet_ac1")["percent_flagged"] == pytest.approx(94.0)
    # No flag for incorrectness: kappa and alpha are NaN, AC1 is defined (p_e = 0) and 1.
    assert math.isnan(_row(agreement, "incorrectness", "fleiss_kappa")["statistic"])
    assert math.isnan(_row(agreement, "incorrectness", "krippendorff_alpha")["statistic"])
    ac1 = _row(agreement, "incorrectness", "gwet_ac1")
    assert (ac1["statistic"], ac1["standard_error"], ac1["percent_flagged"]) == (1.0, 0.0, 0.0)


def test_fleiss_kappa_matches_statsmodels(annotations, agreement):
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    for issue in ISSUES:
        table = (
            annotations.filter(pl.col("issue") == issue)
            .sort("item", "rater")["flag"]
            .to_numpy()
            .reshape(100, 3)
        )
        ours = _row(agreement, issue, "fleiss_kappa")["statistic"]
        if issue == "incorrectness":
            assert math.isnan(ours)
            continue
        counts, _ = inter_rater.aggregate_raters(table)
        assert ours == pytest.approx(inter_rater.fleiss_kappa(counts), abs=1e-12), issue


def test_confidence_narrows_the_interval(annotations, agreement):
    narrow = user_study_agreement(annotations, confidence=0.80)
    wide, slim = _row(agreement, "superfluous", "gwet_ac1"), _row(narrow, "superfluous", "gwet_ac1")
    assert slim["statistic"] == wide["statistic"]
    assert wide["ci_low"] < slim["ci_low"] < slim["ci_high"] < wide["ci_high"]
    with pytest.raises(ValueError, match="confidence"):
        user_study_agreement(annotations, confidence=95)


def test_agreement_rejects_bad_frames(annotations):
    with pytest.raises(ValueError, match="lacks the columns"):
        user_study_agreement(annotations.drop("rater"))
    with pytest.raises(ValueError, match="0 or 1"):
        user_study_agreement(annotations.with_columns(flag=pl.col("flag") * 2))
    with pytest.raises(ValueError, match="same"):
        user_study_agreement(pl.concat([annotations, annotations.head(1)]))


# ----------------------------------------------------------------------------- malformed files

HEADER = [STORY_ID, EXPLANATION, *FLAG_COLUMNS.values()]


def _records(n_items=4):
    """Rows of a valid file: triples of one story id and one multi-line explanation."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n_items):
        text = f" {i % 5 + 1} — an explanation, with a comma\nand a second line ({i})."
        for _ in range(3):
            rows.append([str(10 + i % 2), text, *(str(v) for v in rng.integers(0, 2, 6))])
    return rows


def _write(path, rows, header=HEADER):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_synthetic_file_round_trips(tmp_path):
    rows = _records()
    frame = read_user_study(_write(tmp_path / "user_study.csv", rows))
    assert frame.height == 4 * 6 * 3
    flags = np.array([[int(v) for v in r[2:]] for r in rows])  # (12 rows, 6 issues)
    got = frame.sort("item", "rater", "issue")  # issue names sort alphabetically here
    order = np.argsort(ISSUES)
    assert got["flag"].to_numpy().tolist() == flags[:, order].ravel().tolist()
    assert frame.filter(pl.col("item") == 1)["story_id"].unique().to_list() == [11]


def _error(tmp_path, rows, header=HEADER):
    with pytest.raises(InputError) as info:
        read_user_study(_write(tmp_path / "user_study.csv", rows, header))
    assert "user_study.csv" in str(info.value)
    return info.value


def test_flag_two_names_row_column_and_value(tmp_path):
    rows = _records()
    rows[4][2 + 2] = "2"  # data row 5, superfluous
    err = _error(tmp_path, rows)
    assert (err.row, err.column) == (5, FLAG_COLUMNS["superfluous"])
    assert "'2'" in str(err) and "row 5" in str(err) and "Answer.a-3-superfluous.1" in str(err)


def test_broken_triple_names_the_row(tmp_path):
    rows = _records()
    rows[7][0] = "99"  # data row 8, second rater of item 2 (rows 7-9)
    err = _error(tmp_path, rows)
    assert (err.row, err.column) == (8, STORY_ID)
    assert "row 7" in err.detail
    rows = _records()
    rows[5][1] = rows[5][1] + " (edited)"  # data row 6: third rater of item 1
    err = _error(tmp_path, rows)
    assert (err.row, err.column) == (6, EXPLANATION)


def test_missing_column_is_named(tmp_path):
    header = [c for c in HEADER if c != FLAG_COLUMNS["incoherence"]]
    rows = [r[:-1] for r in _records()]
    err = _error(tmp_path, rows, header)
    assert err.column == FLAG_COLUMNS["incoherence"] and "missing column" in str(err)


def test_rows_not_a_multiple_of_three(tmp_path):
    rows = _records(100)[:-1]  # 299 rows
    err = _error(tmp_path, rows)
    assert err.row == 299 and "299" in err.detail and "multiple of 3" in err.detail


def test_story_id_must_be_an_integer(tmp_path):
    rows = _records()
    rows[0][0] = "8.5"
    err = _error(tmp_path, rows)
    assert (err.row, err.column) == (1, STORY_ID)


# ----------------------------------------------------------------------------- CLI


def test_cli_prints_the_table(hanna_dir, annotations, capsys):
    # guidelines' AC1 as the irrCAC package computes it: the terminal table rounds to 4
    # significant digits, --format csv prints every digit.
    ac1 = _irrcac_ac1(annotations, "guidelines")[0]
    assert main(["user-study", "--data", str(hanna_dir)]) == 0
    out = capsys.readouterr().out
    assert "gwet_ac1" in out and "unsubstantiated" in out and f"{ac1:.4g}" in out
    assert main(["user-study", "--data", str(hanna_dir), "--format", "csv"]) == 0
    table = pl.read_csv(capsys.readouterr().out.encode())
    assert _row(table, "guidelines", "gwet_ac1")["statistic"] == pytest.approx(ac1, rel=1e-12)


def test_cli_csv_of_a_file(hanna_dir, capsys):
    path = hanna_dir / "user_study.csv"
    assert main(["user-study", str(path), "--confidence", "0.9", "--format", "csv"]) == 0
    table = pl.read_csv(capsys.readouterr().out.encode())
    assert table.height == 18
    expected = user_study_agreement(read_user_study(path), confidence=0.9)
    assert table["ci_low"].to_list()[0] == pytest.approx(expected["ci_low"][0])


def test_cli_bad_file_is_one_line(tmp_path, capsys):
    rows = _records()
    rows[0][2] = "yes"
    path = _write(tmp_path / "bad.csv", rows)
    assert main(["user-study", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.csv, row 1" in err and "'yes'" in err
