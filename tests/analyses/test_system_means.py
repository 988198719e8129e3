"""Tab. 4 of the paper: system means per criterion with 95% confidence intervals.

Expected values are the printed table (the paper's Tab. 4):
77 means and 77 half-widths, 2 decimals. The half-widths reproduce from the judge-slot ratings
of hanna_metric_scores_llm.csv with a Student-t interval over individual ratings (n = 288 per
criterion; the Average column pools the 6 x 288 = 1,728 ratings).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

from hanna_stats.analyses.overview import SYSTEM_MEANS_SCHEMA, system_means
from hanna_stats.store import build_hanna_store, ingest, load_study, open_store

COLUMNS = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity", "Average"]
# (mean, half-width) per column, as printed (bold/asterisk marks dropped).
TAB4 = {
    "Human": "4.17 .14 4.43 .10 3.22 .14 3.15 .15 3.88 .12 3.73 .13 3.76 .06",
    "BertGeneration": "2.46 .16 3.14 .16 2.28 .13 2.09 .13 2.67 .12 2.41 .11 2.51 .06",
    "CTRL": "2.54 .16 2.93 .16 2.26 .13 1.93 .12 2.53 .12 2.23 .10 2.40 .06",
    "GPT": "2.40 .16 3.22 .15 2.37 .12 2.13 .13 2.76 .13 2.49 .12 2.56 .06",
    "GPT-2": "2.81 .16 3.29 .14 2.47 .12 2.21 .13 2.86 .12 2.68 .10 2.72 .06",
    "GPT-2 (tag)": "2.67 .16 3.31 .15 2.47 .12 2.22 .13 2.92 .12 2.80 .11 2.73 .06",
    "RoBERTa": "2.54 .16 3.22 .16 2.27 .12 2.12 .13 2.74 .12 2.41 .11 2.55 .06",
    "XLNet": "2.39 .17 2.88 .16 2.10 .12 1.95 .12 2.46 .13 2.36 .11 2.36 .06",
    "Fusion": "2.09 .16 2.86 .16 1.99 .12 1.72 .12 2.27 .14 1.92 .11 2.14 .06",
    "HINT": "2.29 .16 2.38 .16 1.74 .13 1.56 .11 1.75 .12 1.45 .10 1.86 .06",
    "TD-VAE": "2.51 .16 2.99 .15 2.07 .11 2.10 .12 2.59 .12 2.49 .11 2.46 .06",
}


def printed() -> dict[tuple[str, str], tuple[float, float]]:
    out = {}
    for system, text in TAB4.items():
        numbers = [float(v) for v in text.split()]
        for j, column in enumerate(COLUMNS):
            out[system, column] = (numbers[2 * j], numbers[2 * j + 1])
    return out


def two_decimals(x: float) -> float:
    """Round as printf's %.2f: the exact binary value, ties to even.

    RoBERTa's Surprise mean is exactly 612 / 288 = 2.125 and is printed 2.12 (half-up would
    give 2.13).
    """
    return float(f"{x:.2f}")


def mismatches(frame: pl.DataFrame, column: str, which: int) -> list:
    """[((system, criterion), (ours rounded, printed))] where ``column`` differs from Tab. 4.

    ``which``: 0 compares with the printed mean, 1 with the printed half-width.
    """
    got = {(s, c): v for s, c, v in frame.select("system", "criterion", column).rows()}
    rounded = {key: two_decimals(value) for key, value in got.items()}
    return [
        (key, (rounded[key], pair[which]))
        for key, pair in printed().items()
        if rounded[key] != pair[which]
    ]


@pytest.fixture(scope="module")
def hanna(hanna_dir):
    """The full store (judge-slot ratings) and its system means."""
    con = build_hanna_store(hanna_dir)
    yield con, system_means(load_study(con))
    con.close()


@pytest.fixture(scope="module")
def by_rating(hanna):
    return hanna[1]


@pytest.fixture(scope="module")
def by_story(hanna_dir):
    con = open_store()
    ingest(con, hanna_dir / "hanna_metric_scores.csv", format="hanna-metric-scores")
    yield system_means(load_study(con))
    con.close()


def test_shape_and_order(by_rating):
    assert by_rating.schema == pl.Schema(SYSTEM_MEANS_SCHEMA)
    assert by_rating.height == 77
    # Store order (the rows of the metric files), which swaps GPT-2 and GPT-2 (tag) vs Tab. 4.
    order = list(TAB4)
    order[4], order[5] = order[5], order[4]
    assert by_rating["system"].unique(maintain_order=True).to_list() == order
    assert by_rating["criterion"][:7].to_list() == COLUMNS
    assert set(by_rating["unit"]) == {"rating"}
    n = dict(zip(by_rating["criterion"], by_rating["n"], strict=False))
    assert n["Relevance"] == 288 and n["Average"] == 1728


@pytest.mark.parametrize("source", ["by_rating", "by_story"])
def test_tab4_means(source, request):
    # Means do not depend on the unit: the story value is the mean of its 3 ratings.
    frame = request.getfixturevalue(source)
    assert frame.height == 77
    assert not mismatches(frame, "mean", 0)


def test_tab4_half_widths_from_ratings(by_rating):
    assert not mismatches(by_rating, "half_width", 1)


def test_story_unit_half_widths_differ(by_story):
    # Over the 96 story averages the intervals differ from the printed ones (e.g. Human CH
    # 0.11 vs 0.10): the paper used individual ratings.
    assert set(by_story["unit"]) == {"item"}
    n = dict(zip(by_story["criterion"], by_story["n"], strict=False))
    assert n["Relevance"] == 96 and n["Average"] == 576
    wrong = dict(mismatches(by_story, "half_width", 1))
    assert wrong["Human", "Coherence"] == (0.11, 0.10)
    assert len(wrong) > 20


def test_interval_is_student_t(hanna):
    con, by_rating = hanna
    x = con.execute(
        "SELECT score FROM rating_records WHERE system = 'HINT' AND measure = 'Empathy'"
    ).fetchnumpy()["score"]
    low, high = stats.t.interval(0.95, x.size - 1, loc=x.mean(), scale=stats.sem(x))
    row = by_rating.filter((pl.col("system") == "HINT") & (pl.col("criterion") == "Empathy"))
    np.testing.assert_allclose([row["ci_low"][0], row["ci_high"][0]], [low, high], rtol=1e-12)
    narrow = system_means(load_study(con), confidence=0.5, include_human=False)
    assert "Human" not in set(narrow["system"])
    assert (
        narrow["half_width"] < by_rating.filter(pl.col("system") != "Human")["half_width"]
    ).all()
    with pytest.raises(ValueError, match="confidence"):
        system_means(load_study(con), confidence=0.0)


def test_average_only_over_one_declared_scale(by_rating, wmt22_study):
    """HANNA's six criteria are all 1-5 Likert: the Average says so. WMT22's MQM (-25..0), raw
    DA (0-100) and z-scores declare no common scale: no Average (its mean of MQM, DA and
    z-scores meant nothing)."""
    pooled = by_rating.filter(pl.col("criterion") == "Average")
    assert set(pooled["measure"]) == {"Average (1-5 Likert)"}
    wmt = system_means(wmt22_study)
    assert "Average" not in set(wmt["criterion"]) | set(wmt["measure"])
    assert set(wmt["measure"]) == set(wmt22_study.criteria)
