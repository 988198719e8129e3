"""nominal_agreement(): nominal coefficients of any categorical rater-level values in a store.

Independent expected values: the PyPI ``krippendorff`` package (alpha), the ``irrCAC`` package
(Gwet's AC1 and Fleiss' kappa with their t intervals; skipped when not installed), scikit-learn's
``cohen_kappa_score`` (Cohen's kappa of two raters) and scipy's normal and t quantiles for the
interval methods; the kernels for every column on the same matrices.
"""

from __future__ import annotations

import csv
import math
import warnings

import numpy as np
import pandas as pd
import polars as pl
import pytest
from scipy import stats

from hanna_stats.analyses import nominal_agreement
from hanna_stats.analyses.agreements import NOMINAL_AGREEMENT_SCHEMA
from hanna_stats.kernels import cohen_kappa, fleiss_kappa, gwet_ac, krippendorff_alpha
from hanna_stats.store import ingest, load_study, open_store

NAN = math.nan

# 0/1 flags of three raters (A, B, C) on 12 items; None: not rated. Item "k" has one rating
# (in n for AC1 and kappa, not pairable for alpha).
FLAGS = [
    [1, 1, 1],
    [1, 1, 0],
    [0, 0, 0],
    [1, 1, 1],
    [0, 1, 0],
    [1, 1, 1],
    [1, None, 1],
    [0, 0, 1],
    [1, 1, 1],
    [1, 0, None],
    [None, 1, None],
    [1, 1, 1],
]
# Grades on a declared 1-5 scale by two raters (X, Y), only 2-4 used; the last item has one.
GRADES = [[2, 2], [3, 3], [4, 3], [2, 3], [4, 4], [3, 3], [2, 2], [4, 4], [3, 2], [3, 3], [2, None]]


def _matrix(rows):
    """Items x raters float matrix with the rated cells packed to the left: the store keeps an
    item's ratings in columns by position (rater_column), not by rater."""
    width = len(rows[0])
    out = np.full((len(rows), width), NAN)
    for i, row in enumerate(rows):
        values = [v for v in row if v is not None]
        out[i, : len(values)] = values
    return out


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    path = tmp_path_factory.mktemp("nominal") / "ratings.csv"
    header = ["item", "input", "system", "measure", "value", "rater"]
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow([*header, "scale", "scale_min", "scale_max"])
        for name, rows, raters, scale in (
            ("Flag", FLAGS, "ABC", ("", "", "")),
            ("Grade", GRADES, "XY", ("likert", 1, 5)),
        ):
            for i, row in enumerate(rows):
                for rater, value in zip(raters, row, strict=True):
                    if value is not None:
                        item = f"i{i:02d}"
                        writer.writerow([item, f"p{i:02d}", "sys", name, value, rater, *scale])
    con = open_store()
    try:
        ingest(con, path, format="tidy")
        return load_study(con)
    finally:
        con.close()


def _row(frame, measure, coefficient):
    rows = frame.filter((pl.col("measure") == measure) & (pl.col("coefficient") == coefficient))
    assert rows.height == 1, (measure, coefficient)
    return rows.row(0, named=True)


def _closed_form(res):
    low, high = res.confidence_interval
    return {
        "statistic": res.statistic,
        "ci_low": low,
        "ci_high": high,
        "interval_method": res.interval_method,
        "standard_error": res.standard_error,
        "pvalue": res.pvalue,
        "observed_agreement": res.observed_agreement,
        "chance_agreement": res.chance_agreement,
        "n_items": res.n_items,
    }


def _same(row, want):
    for key, value in want.items():
        if isinstance(value, float):
            assert row[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
        else:
            assert row[key] == value, key


def test_schema_and_rows(study):
    out = nominal_agreement(study, resamples=200, seed=3)
    assert out.schema == pl.Schema(NOMINAL_AGREEMENT_SCHEMA)
    assert out.select("measure", "coefficient").rows() == [
        ("Flag", "gwet_ac1"),
        ("Flag", "fleiss_kappa"),
        ("Flag", "krippendorff_alpha"),
        ("Grade", "gwet_ac1"),
        ("Grade", "fleiss_kappa"),
        ("Grade", "krippendorff_alpha"),
        ("Grade", "cohen_kappa"),  # two raters only
    ]
    assert set(out["kind"]) == {"human"} and out["criterion"].to_list() == out["measure"].to_list()
    assert set(out["rater_source"]) == {"person"}
    assert set(out["confidence_level"]) == {0.95}
    alpha = pl.col("coefficient") == "krippendorff_alpha"
    assert out.filter(alpha).select("resamples", "seed").unique().rows() == [(200, 3)]
    assert out.filter(~alpha)["resamples"].null_count() == 5
    flag = out.filter(pl.col("measure") == "Flag")
    assert set(flag["n_raters"]) == {3}
    assert (flag["categories"].unique().to_list(), flag["category_source"][0]) == (
        ["0, 1"],
        "scale",
    )
    grade = out.filter(pl.col("measure") == "Grade")
    assert set(grade["n_categories"]) == {5} and grade["categories"][0] == "1, 2, 3, 4, 5"
    assert grade["interval_method"].to_list() == ["t", "t", "percentile", "z"]


def test_flags_against_the_kernels_and_oracles(study):
    kd = pytest.importorskip("krippendorff")
    out = nominal_agreement(study, confidence=0.9, resamples=300, seed=5)
    x = _matrix(FLAGS)
    for name, kernel in (("gwet_ac1", gwet_ac), ("fleiss_kappa", fleiss_kappa)):
        res = kernel(x, categories=(0.0, 1.0), confidence=0.9)
        _same(_row(out, "Flag", name), _closed_form(res))
        assert _row(out, "Flag", name)["n_items"] == 12
    alpha = krippendorff_alpha(
        x, level_of_measurement="nominal", confidence=0.9, resamples=300, seed=5
    )
    row = _row(out, "Flag", "krippendorff_alpha")
    assert row["statistic"] == pytest.approx(
        kd.alpha(reliability_data=x.T, level_of_measurement="nominal"), rel=1e-12
    )
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(alpha.confidence_interval, rel=1e-12)
    assert row["n_items"] == 11  # item "k" has a single rating
    assert row["observed_agreement"] == pytest.approx(1 - alpha.observed_disagreement)
    assert row["standard_error"] is None and row["pvalue"] is None


def test_flags_against_irrcac(study):
    pytest.importorskip("irrCAC")
    from irrCAC.raw import CAC

    out = nominal_agreement(study, measures=["Flag"], resamples=10)
    frame = pd.DataFrame(_matrix(FLAGS))
    result = CAC(frame, categories=[0.0, 1.0], digits=30)
    for name, method in (("gwet_ac1", "gwet"), ("fleiss_kappa", "fleiss")):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            est = getattr(result, method)()["est"]
        row = _row(out, "Flag", name)
        assert row["statistic"] == pytest.approx(float(est["coefficient_value"]), rel=1e-10)
        assert row["standard_error"] == pytest.approx(float(est["se"]), rel=1e-10)
        low, high = (float(v) for v in est["confidence_interval"])
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), rel=1e-10)
        assert row["pvalue"] == pytest.approx(float(est["p_value"]), rel=1e-8)


def test_two_raters_cohen_and_the_scale_categories(study):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    out = nominal_agreement(study, measures=["Grade"], resamples=50)
    pairs = np.array([g for g in GRADES if None not in g], dtype=float)
    cohen = _row(out, "Grade", "cohen_kappa")
    assert cohen["statistic"] == pytest.approx(
        sklearn_metrics.cohen_kappa_score(pairs[:, 0], pairs[:, 1]), rel=1e-12
    )
    res = cohen_kappa(_matrix(GRADES)[:, 0], _matrix(GRADES)[:, 1], categories=range(1, 6))
    _same(cohen, _closed_form(res))
    assert cohen["n_items"] == 10 and cohen["interval_method"] == "z"
    # AC1 counts the scale's unused categories (1 and 5); kappa, alpha and Cohen do not.
    observed = nominal_agreement(study, measures=["Grade"], categories="observed", resamples=50)
    assert set(observed["n_categories"]) == {3} and observed["categories"][0] == "2, 3, 4"
    assert set(observed["category_source"]) == {"observed"}
    x = _matrix(GRADES)
    ac1 = _row(out, "Grade", "gwet_ac1")["statistic"]
    assert ac1 == pytest.approx(gwet_ac(x, categories=[1, 2, 3, 4, 5]).statistic, rel=1e-12)
    assert _row(observed, "Grade", "gwet_ac1")["statistic"] == pytest.approx(
        gwet_ac(x).statistic, rel=1e-12
    )
    assert _row(observed, "Grade", "gwet_ac1")["statistic"] != pytest.approx(ac1)
    for name in ("fleiss_kappa", "krippendorff_alpha", "cohen_kappa"):
        assert _row(observed, "Grade", name)["statistic"] == pytest.approx(
            _row(out, "Grade", name)["statistic"], rel=1e-12
        )


@pytest.mark.parametrize("method", ["t", "z"])
def test_interval_method_for_every_closed_form_coefficient(study, method):
    out = nominal_agreement(study, interval_method=method, confidence=0.9, resamples=20)
    closed = out.filter(pl.col("coefficient") != "krippendorff_alpha")
    assert set(closed["interval_method"]) == {method}
    default = nominal_agreement(study, confidence=0.9, resamples=20)
    assert out["statistic"].to_list() == pytest.approx(default["statistic"].to_list())
    for row in closed.iter_rows(named=True):
        n = row["n_items"]
        q = stats.norm.ppf(0.95) if method == "z" else stats.t.ppf(0.95, n - 1)
        half = q * row["standard_error"]
        low, high = row["statistic"] - half, min(row["statistic"] + half, 1.0)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), rel=1e-10), row
    for name in ("gwet_ac1", "fleiss_kappa"):  # the kernels' own statistic / SE test
        row = _row(out, "Flag", name)
        ratio = abs(row["statistic"] / row["standard_error"])
        tail = stats.norm.sf(ratio) if method == "z" else stats.t.sf(ratio, row["n_items"] - 1)
        assert row["pvalue"] == pytest.approx(2 * tail, rel=1e-9)


def test_seed_moves_only_the_alpha_bounds(study):
    one = nominal_agreement(study, resamples=100, seed=1)
    two = nominal_agreement(study, resamples=100, seed=2)
    assert one.equals(nominal_agreement(study, resamples=100, seed=1))
    alpha = pl.col("coefficient") == "krippendorff_alpha"
    assert one.filter(~alpha).equals(two.filter(~alpha))
    assert not one.filter(alpha)["ci_low"].equals(two.filter(alpha)["ci_low"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"interval_method": "normal"}, "interval_method must be one of 't', 'z'"),
        ({"categories": "all"}, "categories must be one of 'scale', 'observed'"),
        ({"confidence": 95}, "confidence"),
        ({"resamples": 0}, "resamples"),
        ({"seed": -1}, "seed"),
        ({"kinds": ("judge",)}, "kinds"),
        ({"measures": ["Nope"]}, "unknown measures"),
    ],
)
def test_bad_arguments(study, kwargs, message):
    with pytest.raises(ValueError, match=message):
        nominal_agreement(study, **kwargs)


def test_hanna_judge_slots(hanna_study):
    # HANNA's public ratings: 3 judge slots x 1,056 stories per criterion, Likert 1-5.
    out = nominal_agreement(hanna_study, resamples=50)
    assert out.schema == pl.Schema(NOMINAL_AGREEMENT_SCHEMA)
    assert out.height == 6 * 3  # six criteria; three raters: no Cohen's kappa
    assert out["measure"].unique(maintain_order=True).to_list() == list(hanna_study.criteria)
    assert set(out["rater_source"]) == {"slot"} and set(out["n_raters"]) == {3}
    assert set(out["n_categories"]) == {5} and set(out["category_source"]) == {"scale"}
    assert set(out["n_items"]) == {1056}
    assert out["statistic"].is_between(-1, 1).all()
    assert (out["ci_low"] <= out["statistic"]).all() and (out["statistic"] <= out["ci_high"]).all()
    one = nominal_agreement(hanna_study, measures=["RE"], resamples=50)
    assert one.equals(out.filter(pl.col("measure") == "Relevance"))
    # The public file has no LLM-judge tries: no rows, the same columns.
    judges = nominal_agreement(hanna_study, kinds=("llm-judge",))
    assert judges.is_empty() and judges.schema == out.schema
