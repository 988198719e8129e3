"""Tests of the resampling kernels and analyses: bootstrap CIs, PERM-BOTH, pairwise accuracy.

Expected values come from independent sources: scipy.stats.bootstrap (same draws), plain
Python loops over scipy correlations with the same indices/swaps, and hand-counted pairs.
"""

from __future__ import annotations

import math
import warnings

import numba
import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hanna_stats.kernels import pairwise_accuracy
from hanna_stats.kernels.bootstrap import (
    BootstrapIndices,
    bootstrap_ci,
    bootstrap_distribution,
    bootstrap_indices,
)
from hanna_stats.kernels.permutation import (
    permutation_null,
    permutation_pvalues,
    permutation_swaps,
    permutation_test_pairs,
)

SCIPY = {
    "pearson": scipy.stats.pearsonr,
    "spearman": scipy.stats.spearmanr,
    "kendall": scipy.stats.kendalltau,
}


def corr(x, y, method):
    """scipy's coefficient, NaN when undefined (constant input)."""
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(SCIPY[method](x, y).statistic)


def level_stat(a, b, level, method):
    """Level correlation of two (G, S) matrices by loops (the paper's way)."""
    if level == "system":  # correctly rounded means: exact ties between systems stay ties
        means = [[math.fsum(x[:, s]) / x.shape[0] for s in range(x.shape[1])] for x in (a, b)]
        return corr(np.array(means[0]), np.array(means[1]), method)
    values = [corr(a[g], b[g], method) for g in range(a.shape[0])]
    values = [v for v in values if not np.isnan(v)]
    return float(np.mean(values)) if values else np.nan


def cube(seed, measures=2, groups=12, systems=6, decimals=None):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(1, groups, systems))
    X = base + rng.normal(size=(measures, groups, systems))
    return np.round(X, decimals) if decimals is not None else X


# ---------------------------------------------------------------------------------- bootstrap


@pytest.mark.parametrize("ci_method, scipy_method", [("percentile", "percentile"), ("bca", "BCa")])
def test_bootstrap_matches_scipy_on_a_mean(ci_method, scipy_method):
    # Item level with input resampling bootstraps the mean of the per-input correlations: with
    # the same seed scipy.stats.bootstrap draws the same indices, so the intervals must agree.
    X = cube(1, groups=40, systems=7)
    ours = bootstrap_ci(X[:1], X[1:], method="pearson", ci_method=ci_method, resamples=400, seed=5)
    R = np.array([corr(X[0, g], X[1, g], "pearson") for g in range(40)])
    ref = scipy.stats.bootstrap(
        (R,), np.mean, method=scipy_method, n_resamples=400, rng=np.random.default_rng(5)
    )
    assert ours.ci_low[0, 0] == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert ours.ci_high[0, 0] == pytest.approx(ref.confidence_interval.high, abs=1e-12)
    assert ours.statistic[0, 0] == pytest.approx(R.mean(), abs=1e-12)


@pytest.mark.parametrize("level", ["item", "system"])
@pytest.mark.parametrize("resample", ["systems", "both"])
@pytest.mark.parametrize("ci_method, scipy_method", [("percentile", "percentile"), ("bca", "BCa")])
def test_bootstrap_over_systems_matches_scipy(level, resample, ci_method, scipy_method):
    # scipy.stats.bootstrap over the index samples (the inputs' 0..G-1 and the systems'
    # 0..S-1, unpaired): it draws rng.integers(0, G, (B, G)) then rng.integers(0, S, (B, S)),
    # the draws of bootstrap_indices, and its BCa jackknifes each sample in turn (leave one
    # input out, leave one system out) and sums the two axes' terms in the acceleration. The
    # statistic is the scipy loop over the drawn rows and columns (level_stat).
    X = cube(11, groups=10, systems=7)
    ours = bootstrap_ci(
        X[:1], X[1:], level=level, method="pearson", resample=resample,
        ci_method=ci_method, resamples=300, seed=4,
    )  # fmt: skip
    inputs, systems = np.arange(10), np.arange(7)

    def statistic(*drawn):
        g = drawn[0] if resample == "both" else inputs
        s = drawn[-1]
        return level_stat(X[0][g][:, s], X[1][g][:, s], level, "pearson")

    data = (inputs, systems) if resample == "both" else (systems,)
    ref = scipy.stats.bootstrap(
        data, statistic, method=scipy_method, n_resamples=300, vectorized=False,
        rng=np.random.default_rng(4),
    )  # fmt: skip
    assert ours.n_valid[0, 0] == 300
    np.testing.assert_allclose(ours.samples[:, 0, 0], ref.bootstrap_distribution, atol=1e-12)
    assert ours.ci_low[0, 0] == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert ours.ci_high[0, 0] == pytest.approx(ref.confidence_interval.high, abs=1e-12)


@pytest.mark.parametrize("level", ["item", "system"])
@pytest.mark.parametrize("resample", ["inputs", "systems", "both"])
@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_bootstrap_distribution_matches_loop(level, resample, method):
    # Oracle: for each resample, index the matrices (inputs = columns, systems = rows in
    # nlpstats' terms; BOOT-BOTH takes their intersection) and recompute with scipy.
    X = cube(2, measures=3, groups=8, systems=5, decimals=1)  # ties, some constant groups
    idx = bootstrap_indices(8, 5, resample=resample, resamples=25, seed=3)
    got = bootstrap_distribution(X[:2], X[2:], level=level, method=method, indices=idx)
    for k in range(25):
        g = idx.inputs[k] if idx.inputs is not None else np.arange(8)
        s = idx.systems[k] if idx.systems is not None else np.arange(5)
        for i in range(2):
            a = X[i][g][:, s]
            b = X[2][g][:, s]
            expected = level_stat(a, b, level, method)
            np.testing.assert_allclose(got[k, i, 0], expected, atol=1e-12, equal_nan=True)


def test_bootstrap_counts_undefined_resamples():
    # Two systems: a system resample draws the same system twice with probability 1/2, and
    # then every correlation is undefined. Those resamples are counted out, not hidden.
    X = cube(3, groups=5, systems=2)
    res = bootstrap_ci(X[:1], X[1:], level="item", resample="systems", resamples=200, seed=0)
    idx = bootstrap_indices(5, 2, resample="systems", resamples=200, seed=0)
    distinct = (idx.systems[:, 0] != idx.systems[:, 1]).sum()
    assert res.n_valid[0, 0] == distinct
    assert np.isnan(res.samples[:, 0, 0]).sum() == 200 - distinct


def test_bootstrap_symmetric_matrix_and_validation():
    X = cube(4, measures=3)
    full = bootstrap_ci(X, resamples=50, method="spearman")
    part = bootstrap_ci(X[:1], X, resamples=50, method="spearman")
    np.testing.assert_array_equal(full.ci_low[:1], part.ci_low)
    np.testing.assert_array_equal(full.statistic, full.statistic.T)
    with pytest.raises(ValueError, match="resample"):
        bootstrap_ci(X, resample="rows")
    with pytest.raises(ValueError, match="ci_method"):
        bootstrap_ci(X, ci_method="basic")
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_ci(X, confidence=95)
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci(X, level="global")
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_ci(X, resamples=0)
    with pytest.raises(ValueError, match="indices"):
        bootstrap_distribution(X, indices=BootstrapIndices(None, None))


@settings(deadline=None, max_examples=25)
@given(
    seed=st.integers(0, 2**32 - 1),
    ci_method=st.sampled_from(["percentile", "bca"]),
    method=st.sampled_from(["pearson", "spearman", "kendall"]),
    groups=st.integers(8, 30),
)
def test_bootstrap_interval_contains_estimate(seed, ci_method, method, groups):
    # Continuous data, inputs resampled at item level (a mean of per-input correlations):
    # the point estimate lies inside its interval, and the bounds are ordered.
    X = cube(seed, groups=groups, systems=6)
    res = bootstrap_ci(X[:1], X[1:], method=method, ci_method=ci_method, resamples=300, seed=seed)
    assert res.ci_low[0, 0] <= res.statistic[0, 0] <= res.ci_high[0, 0]
    assert res.n_valid[0, 0] == 300


@settings(deadline=None, max_examples=8)
@given(
    seed=st.integers(0, 2**32 - 1),
    level=st.sampled_from(["item", "system"]),
    resample=st.sampled_from(["inputs", "systems", "both"]),
    ci_method=st.sampled_from(["percentile", "bca"]),
)
def test_bootstrap_ordered_and_deterministic(seed, level, resample, ci_method):
    X = cube(seed, measures=3, groups=6, systems=5, decimals=1)
    kwargs = dict(level=level, resample=resample, ci_method=ci_method, resamples=60, seed=seed)
    first = bootstrap_ci(X, **kwargs)
    ok = ~np.isnan(first.ci_low)
    assert (first.ci_low[ok] <= first.ci_high[ok]).all()
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        single = bootstrap_ci(X, **kwargs)
    finally:
        numba.set_num_threads(before)
    for x, y in zip(first, single, strict=True):
        np.testing.assert_array_equal(x, y)


# -------------------------------------------------------------------------------- permutation


def perm_both_loop(X, C, swaps, level, method):
    """Brute-force PERM-BOTH deltas (K, P + 1) for all pairs a < b, in pair order."""
    Z = [scipy.stats.zscore(x.ravel()).reshape(x.shape) for x in X]
    out = []
    for a in range(len(X)):
        for b in range(a + 1, len(X)):
            row = []
            for W in [np.zeros_like(swaps[0]), *swaps]:
                za = np.where(W == 1, Z[b], Z[a])
                zb = np.where(W == 1, Z[a], Z[b])
                if level == "global":
                    row.append(
                        corr(za.ravel(), C.ravel(), method) - corr(zb.ravel(), C.ravel(), method)
                    )
                else:
                    row.append(level_stat(za, C, level, method) - level_stat(zb, C, level, method))
            out.append(row)
    return np.array(out)


@pytest.mark.parametrize("level", ["system", "item", "global"])
@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_permutation_null_matches_loop(level, method):
    X = cube(7, measures=3, groups=6, systems=5)
    C = cube(8, measures=1, groups=6, systems=5)[0]
    swaps = permutation_swaps(6, 5, permutations=30, seed=1)
    pairs = np.array([(0, 1), (0, 2), (1, 2)])
    got = permutation_null(X, C, pairs, swaps, level=level, method=method)
    expected = perm_both_loop(X, C, swaps, level, method)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    for alternative in ("two-sided", "greater", "less"):
        p, n = permutation_pvalues(got, alternative)
        d, null = expected[:, :1], expected[:, 1:]
        hits = {
            "two-sided": np.abs(null) >= np.abs(d) - 1e-13,
            "greater": null >= d - 1e-13,
            "less": null <= d + 1e-13,
        }[alternative]
        np.testing.assert_array_equal(p, hits.mean(axis=1))
        assert (n == 30).all()


def test_permutation_test_pairs_matrix():
    X = cube(9, measures=3, groups=10, systems=6)
    C = X[0] + 0.1 * np.random.default_rng(0).normal(size=X[0].shape)
    res = permutation_test_pairs(X, C, permutations=200, alternative="greater", seed=4)
    swaps = permutation_swaps(10, 6, permutations=200, seed=4)
    null = permutation_null(X, C, np.array([(0, 1)]), swaps)
    assert res.pvalue[0, 1] == permutation_pvalues(null, "greater")[0][0]
    assert res.pvalue[1, 0] == permutation_pvalues(null, "less")[0][0]
    assert res.delta[0, 1] == pytest.approx(res.statistic[0] - res.statistic[1])
    two = permutation_test_pairs(X, C, permutations=200, seed=4)
    np.testing.assert_array_equal(two.pvalue, two.pvalue.T)
    # Missing values drop out pairwise (tests/kernels/test_resampling_permutation.py); counted.
    gappy = permutation_test_pairs(np.where(X > 2, np.nan, X), C, permutations=20)
    assert gappy.n_missing[0, 1] == np.isnan(np.where(X > 2, np.nan, X)[:2]).any(axis=0).sum()
    with pytest.raises(ValueError, match="criterion"):
        permutation_test_pairs(X, C[:, :3])
    with pytest.raises(ValueError, match="alternative"):
        permutation_test_pairs(X, C, alternative="bigger")
    with pytest.raises(ValueError, match="permutations"):
        permutation_test_pairs(X, C, permutations=0)


@settings(deadline=None, max_examples=20)
@given(
    seed=st.integers(0, 2**32 - 1),
    level=st.sampled_from(["item", "system"]),
    method=st.sampled_from(["pearson", "kendall"]),
    alternative=st.sampled_from(["two-sided", "greater", "less"]),
)
def test_permutation_pvalues_in_unit_interval_and_deterministic(seed, level, method, alternative):
    X = cube(seed, measures=3, groups=5, systems=4, decimals=1)
    C = cube(seed + 1, measures=1, groups=5, systems=4, decimals=1)[0]
    kwargs = dict(level=level, method=method, alternative=alternative, permutations=40, seed=seed)
    res = permutation_test_pairs(X, C, **kwargs)
    p = res.pvalue[~np.isnan(res.pvalue)]
    assert ((p >= 0) & (p <= 1)).all()
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        single = permutation_test_pairs(X, C, **kwargs)
    finally:
        numba.set_num_threads(before)
    for x, y in zip(res, single, strict=True):
        np.testing.assert_array_equal(x, y)


# --------------------------------------------------------------------------- pairwise accuracy


def test_pairwise_accuracy_hand_worked():
    # h = (1, 2, 2, 3), m = (1, 3, 3, 2). Pairs: (0,1) C, (0,2) C, (0,3) C, (1,2) tied in both,
    # (1,3) D, (2,3) D: acc_eq = (3 + 1) / 6.
    h = np.array([[[1.0, 2.0, 2.0, 3.0]]])
    m = np.array([[[1.0, 3.0, 3.0, 2.0]]])
    assert pairwise_accuracy(h, m).statistic[0, 0] == pytest.approx(4 / 6)
    # m2 ties (0,1) where h does not (a tie in m only: wrong), and orders (1,2) that h ties
    # (wrong): pairs (0,2) C, (0,3) C, (1,3) C, (2,3) C -> 4 / 6.
    m2 = np.array([[[1.0, 1.0, 2.0, 3.0]]])
    assert pairwise_accuracy(h, m2).statistic[0, 0] == pytest.approx(4 / 6)
    # Both constant: every pair tied in both, accuracy 1 (tau would be undefined).
    c = np.ones((1, 1, 4))
    assert pairwise_accuracy(c, c).statistic[0, 0] == 1.0
    # Reversed strict order: 0.
    assert pairwise_accuracy(h, -h).statistic[0, 0] == pytest.approx(1 / 6)  # only the tie


def test_pairwise_accuracy_levels_and_nan():
    # Two groups of 3 systems: group 0 agrees on all 3 pairs (1.0), group 1 on 1 of 3.
    A = np.array([[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]])
    B = np.array([[[1.0, 2.0, 3.0], [3.0, 1.0, 2.0]]])
    item = pairwise_accuracy(A, B, level="item")
    assert item.statistic[0, 0] == pytest.approx((1.0 + 1 / 3) / 2)
    assert item.n_groups[0, 0] == 2
    # System means: A (1, 2, 3), B (2, 1.5, 2.5): pairs (0,1) D, (0,2) C, (1,2) C -> 2/3.
    assert pairwise_accuracy(A, B, level="system").statistic[0, 0] == pytest.approx(2 / 3)
    # Global: the 6 items pooled: hand count 11 of 15 agreeing pairs.
    x, y = A.ravel(), B.ravel()
    agree = sum(
        np.sign(x[i] - x[j]) == np.sign(y[i] - y[j]) for i in range(6) for j in range(i + 1, 6)
    )
    assert pairwise_accuracy(A, B, level="global").statistic[0, 0] == pytest.approx(agree / 15)
    # NaN: pairwise deletion leaves 2 observations in group 1 (one pair, discordant: 3 > 1
    # in B but 1 < 2 in A).
    Bn = B.copy()
    Bn[0, 1, 2] = np.nan
    assert pairwise_accuracy(A, Bn).statistic[0, 0] == pytest.approx((1.0 + 0.0) / 2)
    assert np.isnan(pairwise_accuracy(A, Bn, nan_policy="propagate").statistic[0, 0])
    with pytest.raises(ValueError, match="undefined"):
        pairwise_accuracy(A, Bn, nan_policy="raise")
    with pytest.raises(ValueError, match="level"):
        pairwise_accuracy(A, B, level="story")


@settings(deadline=None, max_examples=30)
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=12),
)
def test_pairwise_accuracy_matches_pair_loop(pairs):
    x = np.array([p[0] for p in pairs], dtype=float)
    y = np.array([p[1] for p in pairs], dtype=float)
    n = len(x)
    agree = sum(
        np.sign(x[i] - x[j]) == np.sign(y[i] - y[j]) for i in range(n) for j in range(i + 1, n)
    )
    got = pairwise_accuracy(x[None, None], y[None, None]).statistic[0, 0]
    assert got == pytest.approx(agree / (n * (n - 1) / 2))


gappy_cubes = arrays(
    np.float64, (1, 4, 5), elements=st.one_of(st.integers(0, 3).map(float), st.just(np.nan))
)


@settings(deadline=None, max_examples=60)
@given(
    A=gappy_cubes,
    B=gappy_cubes,
    group_by=st.sampled_from(["input", "system"]),
    weighting=st.sampled_from(["uniform", "count"]),
)
def test_pairwise_accuracy_grouping_and_weighting_match_pair_loop(A, B, group_by, weighting):
    # Per group (an input's systems, or a system's inputs) the complete pairs of observations,
    # acc_eq by counting the pairs both order alike or both tie; the mean over the groups with
    # at least 2 observations, each weighing 1 or its number of observations.
    got = pairwise_accuracy(A, B, group_by=group_by, weighting=weighting).statistic[0, 0]
    X, Y = (A[0], B[0]) if group_by == "input" else (A[0].T, B[0].T)
    total = weight = 0.0
    for x, y in zip(X, Y, strict=True):
        keep = ~(np.isnan(x) | np.isnan(y))
        x, y = x[keep], y[keep]
        n = x.size
        if n < 2:
            continue
        agree = sum(
            np.sign(x[i] - x[j]) == np.sign(y[i] - y[j]) for i in range(n) for j in range(i + 1, n)
        )
        w = n if weighting == "count" else 1
        total += w * agree / (n * (n - 1) / 2)
        weight += w
    expected = total / weight if weight else np.nan
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-12, nan_ok=True)
