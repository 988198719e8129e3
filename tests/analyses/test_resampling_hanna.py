"""The resampling analyses on the HANNA store: shapes, agreement with correlate, validation."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import scipy.stats
from test_resampling import perm_both_loop

from hanna_stats.analyses.correlations import correlate
from hanna_stats.analyses.resampling import correlation_ci, permutation_test


@pytest.fixture(scope="module")
def con(hanna_study):
    return hanna_study


def test_correlation_ci_on_hanna(con):
    df = correlation_ci(con, resamples=200, method="pearson")
    assert df.shape == (432, 13)
    assert df.columns == [
        "measure", "against", "level", "method", "resample", "statistic", "ci_low",
        "ci_high", "confidence", "ci_method", "resamples", "n_valid", "seed",
    ]  # fmt: skip
    ref = correlate(con, level="story", method="pearson", kinds=("metric",))
    joined = df.join(ref, on=["measure", "against"], suffix="_ref")
    np.testing.assert_array_equal(joined["statistic"], joined["statistic_ref"])
    assert (df["n_valid"] == 200).all()
    assert (df["ci_low"] <= df["statistic"]).all() and (df["statistic"] <= df["ci_high"]).all()
    again = correlation_ci(con, resamples=200, method="pearson")
    assert df.equals(again)


def test_correlation_ci_system_level_named_target(con):
    df = correlation_ci(
        con, level="system", resample="both", ci_method="bca", resamples=100, against="Empathy"
    )
    assert df.shape == (72, 13) and set(df["against"]) == {"Empathy"}
    ok = df.filter(pl.col("ci_low").is_not_nan())
    assert (ok["ci_low"] <= ok["ci_high"]).all()
    with pytest.raises(ValueError, match="level"):
        correlation_ci(con, level="global")
    with pytest.raises(ValueError, match="against"):
        correlation_ci(con, against="Nope")
    with pytest.raises(ValueError, match="seed"):
        correlation_ci(con, seed=1.5)


def test_permutation_test_on_hanna(con):
    df = permutation_test(
        con,
        criterion="Empathy",
        level="system",
        method="pearson",
        permutations=200,
        alternative="two-sided",
    )
    assert df.shape == (72 * 71, 17)
    assert (df["unit"] == "both").all() and (df["n_drawn"] == 200).all()
    # HANNA has no missing score: nothing drops out of any pair.
    assert (df["n_missing"] == 0).all() and (df["n_systems_dropped"] == 0).all()
    row = df.filter((pl.col("measure_a") == "BERTScore F1") & (pl.col("measure_b") == "BLEU"))
    # scipy.stats.pearsonr of each metric's and Empathy's 10 system means.
    human, a, b = np.nanmean(con.cube(measures=["Empathy", "BERTScore F1", "BLEU"]).values, 1)
    assert row["r_a"][0] == pytest.approx(scipy.stats.pearsonr(a, human)[0], abs=1e-12)
    assert row["r_b"][0] == pytest.approx(scipy.stats.pearsonr(b, human)[0], abs=1e-12)
    assert 0 <= row["pvalue"][0] <= 1 and row["n_valid"][0] == 200
    with pytest.raises(ValueError, match="criterion"):
        permutation_test(con, criterion="Nope")


def test_story_level_kendall_units_and_early_stopping_on_hanna(con):
    # All 2,556 metric pairs at story level (the polynomial fast path): bit for bit the slow
    # per-input loop of the kernel on a few pairs and the same swaps (a consistency check of
    # the two paths), and on one pair scipy.stats.kendalltau per story (perm_both_loop).
    from hanna_stats.kernels._options import KENDALL, TAU_B
    from hanna_stats.kernels.permutation import (
        _item_null,
        permutation_null,
        permutation_swaps,
        standardize,
    )

    df = permutation_test(
        con, criterion="Coherence", level="story", permutations=100, seed=3,
        alternative="two-sided",
    )  # fmt: skip
    assert df.shape == (72 * 71, 17) and (df["n_drawn"] == 100).all()
    ref = correlate(con, level="story", method="kendall", kinds=("metric",))
    joined = df.join(
        ref.filter(pl.col("against") == "Coherence"), left_on="measure_a", right_on="measure"
    )
    np.testing.assert_allclose(joined["r_a"], joined["statistic"], atol=1e-12)
    cube = con.cube(kinds=("metric",), include_human=False)
    crit = con.cube(measures=[con.criterion("Coherence")], include_human=False).values[0]
    swaps = permutation_swaps(*crit.shape, permutations=30, seed=1, unit="systems")
    pairs = np.array([(0, 1), (5, 40), (70, 71)])
    fast = permutation_null(cube.values, crit, pairs, swaps, level="item")
    slow = _item_null(standardize(cube.values), crit, swaps, pairs, KENDALL, TAU_B)
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_allclose(
        fast[0, :11], perm_both_loop(cube.values[:2], crit, swaps[:10], "item", "kendall")[0],
        atol=1e-12,
    )  # fmt: skip
    stop = permutation_test(
        con, criterion="Coherence", level="story", permutations=400, unit="inputs",
        stop_alpha=0.05, alternative="two-sided",
    )  # fmt: skip
    assert (stop["unit"] == "inputs").all()
    assert stop["n_drawn"].min() < 400 and stop["n_drawn"].max() <= 400
    with pytest.raises(ValueError, match="unit"):
        permutation_test(con, criterion="Coherence", unit="cells")
