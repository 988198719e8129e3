"""Permutation tests of correlation differences: resampling units (PERM-BOTH, PERM-SYS,
PERM-INPUT), the fast item-level Kendall path, the tolerant comparison and early stopping.

Expected values come from plain-Python/numpy references written here over the same swaps
(scipy's coefficients, per-input loops), exact enumerations of all 2^k swaps and scipy's
Clopper-Pearson interval (``binomtest(...).proportion_ci(method="exact")``). The fast
item-level Kendall path is also compared bit for bit with the slow compiled loop
(``_item_null``): a consistency check of two paths of the package, beside the scipy checks.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from hanna_stats.kernels._options import KENDALL
from hanna_stats.kernels.permutation import (
    STOP_RISK,
    _item_null,
    _settled,
    permutation_null,
    permutation_pvalues,
    permutation_swaps,
    permutation_test_pairs,
    standardize,
)
from hanna_stats.vocabulary import WORDS

SCIPY = {
    "pearson": scipy.stats.pearsonr,
    "spearman": scipy.stats.spearmanr,
    "kendall": scipy.stats.kendalltau,
}


def corr(x, y, method):
    """scipy's coefficient on the pairs without NaN; NaN when undefined."""
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(SCIPY[method](x, y).statistic)


def level_stat(x, c, level, method):
    if level == "global":
        return corr(x.ravel(), c.ravel(), method)
    if level == "system":
        means = [[math.fsum(m[:, s]) / m.shape[0] for s in range(m.shape[1])] for m in (x, c)]
        return corr(np.array(means[0]), np.array(means[1]), method)
    values = [corr(x[g], c[g], method) for g in range(x.shape[0])]
    values = [v for v in values if not np.isnan(v)]
    return float(np.mean(values)) if values else np.nan


def reference_deltas(X, C, a, b, swaps, level, method):
    """Observed and permuted ``r_a - r_b`` by the textbook recipe: z-score each measure over
    its cells, swap the chosen cells, correlate (nlpstats' permutation_test, one pair)."""
    Z = [scipy.stats.zscore(x.ravel()).reshape(x.shape) for x in X]
    out = []
    for W in [np.zeros_like(swaps[0]), *swaps]:
        za = np.where(W == 1, Z[b], Z[a])
        zb = np.where(W == 1, Z[a], Z[b])
        out.append(level_stat(za, C, level, method) - level_stat(zb, C, level, method))
    return np.array(out)


def reference_pvalue(deltas, alternative):
    d, null = deltas[0], deltas[1:]
    null = null[~np.isnan(null)]
    tol = 1e-12
    hits = {
        "two-sided": np.abs(null) >= abs(d) - tol,
        "greater": null >= d - tol,
        "less": null <= d + tol,
    }[alternative]
    return hits.mean()


def cube(seed, measures=3, groups=6, systems=5, decimals=None):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(1, groups, systems))
    X = base + rng.normal(size=(measures, groups, systems))
    return np.round(X, decimals) if decimals is not None else X


# ------------------------------------------------------------------------- resampling units


def test_swap_units_structure():
    P, G, S = 200, 4, 5
    both = permutation_swaps(G, S, permutations=P, seed=3)
    np.testing.assert_array_equal(
        both, np.random.default_rng(3).integers(0, 2, (P, G, S), dtype=np.uint8)
    )
    systems = permutation_swaps(G, S, permutations=P, seed=3, unit="systems")
    inputs = permutation_swaps(G, S, permutations=P, seed=3, unit="inputs")
    assert systems.shape == inputs.shape == (P, G, S)
    assert systems.dtype == inputs.dtype == np.uint8 and systems.flags.c_contiguous
    # PERM-SYS: one coin per (permutation, system), the same for every input.
    assert (systems == systems[:, :1, :]).all()
    np.testing.assert_array_equal(
        systems[:, 0], np.random.default_rng(3).integers(0, 2, (P, 1, S), dtype=np.uint8)[:, 0]
    )
    # PERM-INPUT: one coin per (permutation, input), the same for every system.
    assert (inputs == inputs[:, :, :1]).all()
    # Fair coins: each unit's share of swaps is near 1/2 (binomial, 1000 coins, 5 sigma).
    for coins in (both.ravel(), systems[:, 0].ravel(), inputs[:, :, 0].ravel()):
        assert abs(coins.mean() - 0.5) < 5 * 0.5 / math.sqrt(coins.size)
    with pytest.raises(ValueError, match="unit must be one of"):
        permutation_swaps(G, S, unit="rows")
    with pytest.raises(ValueError, match="unit must be one of"):
        permutation_test_pairs(cube(0), cube(1, measures=1)[0], unit="cells")


@pytest.mark.parametrize("unit", ["both", "systems", "inputs"])
@pytest.mark.parametrize(
    "level, method",
    [
        ("item", "kendall"),
        ("item", "pearson"),
        ("system", "kendall"),
        ("global", "spearman"),
        ("global", "pearson"),
    ],
)
def test_unit_pvalues_match_reference_loop(unit, level, method):
    X = cube(11, groups=5, systems=4, decimals=1)
    C = cube(12, measures=1, groups=5, systems=4, decimals=0)[0]
    swaps = permutation_swaps(5, 4, permutations=60, seed=2, unit=unit)
    for alternative in ("two-sided", "greater", "less"):
        res = permutation_test_pairs(
            X, C, level=level, method=method, permutations=60, seed=2, unit=unit,
            alternative=alternative,
        )  # fmt: skip
        for a, b in itertools.permutations(range(3), 2):
            deltas = reference_deltas(X, C, a, b, swaps, level, method)
            assert res.pvalue[a, b] == reference_pvalue(deltas, alternative)
            assert res.n_drawn[a, b] == 60


@pytest.mark.parametrize(
    "unit, size", [("both", lambda G, S: G * S), ("systems", lambda G, S: S),
                   ("inputs", lambda G, S: G)],
)  # fmt: skip
@pytest.mark.parametrize("level, method", [("item", "kendall"), ("system", "pearson")])
def test_exact_enumeration_of_all_swaps(unit, size, level, method):
    # Tiny cubes: every one of the 2^k patterns of the unit's coins, passed as swaps, gives the
    # exact permutation p-value, enumerated here independently.
    G, S = 2, 3
    X = cube(21, measures=2, groups=G, systems=S)
    C = cube(22, measures=1, groups=G, systems=S)[0]
    k = size(G, S)
    patterns = np.array(list(itertools.product((0, 1), repeat=k)), dtype=np.uint8)
    shape = {"both": (G, S), "systems": (1, S), "inputs": (G, 1)}[unit]
    swaps = np.ascontiguousarray(
        np.broadcast_to(patterns.reshape(-1, *shape), (2**k, G, S)), dtype=np.uint8
    )
    res = permutation_test_pairs(X, C, level=level, method=method, swaps=swaps)
    Z = [scipy.stats.zscore(x.ravel()).reshape(x.shape) for x in X]
    d = level_stat(Z[0], C, level, method) - level_stat(Z[1], C, level, method)
    count = 0
    for bits in itertools.product((0, 1), repeat=k):
        W = np.broadcast_to(np.array(bits).reshape(shape), (G, S))
        za, zb = np.where(W == 1, Z[1], Z[0]), np.where(W == 1, Z[0], Z[1])
        dp = level_stat(za, C, level, method) - level_stat(zb, C, level, method)
        count += abs(dp) >= abs(d) - 1e-12
    assert res.pvalue[0, 1] == count / 2**k
    # The all-swapped pattern mirrors the identity, so the two-sided p-value is at least 2/2^k.
    assert res.pvalue[0, 1] >= 2 / 2**k


# ----------------------------------------------------------------- fast item-level Kendall


def slow_item_null(X, C, pairs, swaps, variant):
    return _item_null(standardize(X), C, swaps, pairs, KENDALL, WORDS["variant"].index(variant))


@settings(deadline=None, max_examples=40)
@given(
    seed=st.integers(0, 2**32 - 1),
    groups=st.integers(1, 6),
    systems=st.integers(2, 8),
    decimals=st.sampled_from([0, 1, None]),
    variant=st.sampled_from(["a", "b"]),
    unit=st.sampled_from(["both", "systems", "inputs"]),
    nan_cells=st.integers(0, 3),
)
def test_fast_kendall_item_equals_slow_loop(
    seed, groups, systems, decimals, variant, unit, nan_cells
):
    # Ties within and across measures (rounded scores), a constant input, NaN in the criterion:
    # the polynomial path must give the slow loop's values to the last bit.
    X = cube(seed, measures=4, groups=groups, systems=systems, decimals=decimals)
    C = np.round(cube(seed + 1, measures=1, groups=groups, systems=systems)[0], 0)
    rng = np.random.default_rng(seed)
    X[rng.integers(0, 4), 0] = 0.5  # a measure constant on input 0
    C[rng.integers(0, groups, nan_cells), rng.integers(0, systems, nan_cells)] = np.nan
    swaps = permutation_swaps(groups, systems, permutations=25, seed=seed, unit=unit)
    pairs = np.array([(0, 1), (0, 3), (2, 1), (3, 2)])
    fast = permutation_null(X, C, pairs, swaps, level="item", method="kendall", variant=variant)
    np.testing.assert_array_equal(fast, slow_item_null(X, C, pairs, swaps, variant))
    if variant != "b":
        return
    # The outside reference, scipy.stats.kendalltau per input, for measures that vary (scipy's
    # zscore of a constant measure is NaN).
    for row, (a, b) in zip(fast, pairs, strict=True):
        if np.ptp(X[a]) > 0 and np.ptp(X[b]) > 0:
            expected = reference_deltas(X, C, a, b, swaps, "item", "kendall")
            np.testing.assert_allclose(row, expected, atol=1e-12, equal_nan=True)


def test_fast_kendall_item_against_scipy():
    # The fast path against scipy.stats.kendalltau per input (tau-b, ties in both), all pairs.
    X = cube(31, measures=3, groups=7, systems=6, decimals=0)
    C = np.round(cube(32, measures=1, groups=7, systems=6)[0], 0)
    swaps = permutation_swaps(7, 6, permutations=40, seed=5)
    pairs = np.array([(0, 1), (0, 2), (1, 2)])
    got = permutation_null(X, C, pairs, swaps, level="item", method="kendall")
    for row, (a, b) in zip(got, pairs, strict=True):
        np.testing.assert_allclose(
            row, reference_deltas(X, C, a, b, swaps, "item", "kendall"), atol=1e-12
        )


# ------------------------------------------------------------- the tolerant comparison


def test_tolerance_counts_mathematically_equal_differences():
    # The same three terms added in two orders: mathematically equal, 1 ulp apart. An exact
    # comparison (mt-metrics-eval's ``c2 - c1 >= delta``) misses the permutation; ours counts.
    observed = (0.1 + 0.2) + 0.3
    permuted = 0.1 + (0.2 + 0.3)
    assert permuted < observed  # the floating-point sums differ
    null = np.array([[observed, permuted]])
    assert not (null[:, 1:] >= null[:, :1]).any()  # the exact count: 0 of 1
    assert permutation_pvalues(null, "greater")[0][0] == 1.0
    assert permutation_pvalues(-null, "less")[0][0] == 1.0
    assert permutation_pvalues(null, "two-sided")[0][0] == 1.0


def test_tolerance_counts_the_mirror_permutation_at_system_level():
    # Swapping every cell exchanges the two measures: the permuted difference is exactly
    # -delta in mathematics, so the two-sided p-value of that one permutation is 1. At system
    # level the kernel forms the permuted means as mean_a + T_b - T_a, a few ulps off mean_b:
    # an exact comparison misses the count for some data; the tolerant one never does.
    exact_misses = 0
    for seed in range(30):
        X = cube(seed, measures=2, groups=7, systems=6)
        C = cube(seed + 100, measures=1, groups=7, systems=6)[0]
        mirror = np.ones((1, 7, 6), dtype=np.uint8)
        null = permutation_null(X, C, np.array([(0, 1)]), mirror, method="pearson")
        assert null[0, 1] == pytest.approx(-null[0, 0], abs=1e-14)
        assert permutation_pvalues(null, "two-sided")[0][0] == 1.0
        exact_misses += not abs(null[0, 1]) >= abs(null[0, 0])
    assert exact_misses > 0


# -------------------------------------------------------------------------- early stopping


def test_settled_is_the_clopper_pearson_rule():
    for n in (10, 50, 200):
        for h in range(0, n + 1, max(1, n // 25)):
            ci = scipy.stats.binomtest(h, n).proportion_ci(1 - STOP_RISK, method="exact")
            for alpha in (0.01, 0.05, 0.2):
                expected = ci.high < alpha or ci.low > alpha
                got = _settled(np.array([h]), np.array([n]), alpha)[0]
                assert got == expected, (h, n, alpha)
    assert not _settled(np.array([0]), np.array([0]), 0.05)[0]


@pytest.mark.parametrize("level, method", [("item", "kendall"), ("system", "pearson")])
def test_early_stopping_uses_a_prefix_of_the_same_swaps(level, method):
    rng = np.random.default_rng(4)
    c = rng.normal(size=(30, 6))
    # Measure 0 tracks the criterion, 1 and 2 are noise, 3 a noisier copy of 0.
    X = np.stack([c + 0.3 * rng.normal(size=c.shape), rng.normal(size=c.shape),
                  rng.normal(size=c.shape), c + 1.5 * rng.normal(size=c.shape)])  # fmt: skip
    kwargs = dict(level=level, method=method, permutations=400, seed=9)
    full = permutation_test_pairs(X, c, **kwargs)
    stop = permutation_test_pairs(X, c, stop_alpha=0.05, **kwargs)
    again = permutation_test_pairs(X, c, stop_alpha=0.05, **kwargs)
    for x, y in zip(stop, again, strict=True):
        np.testing.assert_array_equal(x, y)
    off = ~np.eye(4, dtype=bool)
    assert (full.n_drawn[off] == 400).all()
    assert (stop.n_drawn[off] % 20 == 0).all() and (stop.n_drawn[off] <= 400).all()
    assert stop.n_drawn[0, 1] < 400  # a clear difference stops early
    np.testing.assert_array_equal(stop.n_drawn, stop.n_drawn.T)
    swaps = permutation_swaps(30, 6, permutations=400, seed=9)
    for a, b in zip(*np.nonzero(off), strict=True):
        n = stop.n_drawn[a, b]
        prefix = permutation_test_pairs(X, c, level=level, method=method, swaps=swaps[:n])
        assert stop.pvalue[a, b] == prefix.pvalue[a, b]
        assert stop.n_valid[a, b] == prefix.n_valid[a, b]
        if n < 400:  # stopped: the decision at 0.05 agrees with all 400 permutations here
            assert (stop.pvalue[a, b] <= 0.05) == (full.pvalue[a, b] <= 0.05)
    with pytest.raises(ValueError, match="stop_alpha"):
        permutation_test_pairs(X, c, stop_alpha=1.5)
    with pytest.raises(ValueError, match="stop_alpha"):
        permutation_test_pairs(X, c, stop_alpha=True)


def test_fast_path_pair_blocks_give_the_same_result(monkeypatch):
    # A small memory budget splits the pairs into blocks (one pair each here): same output,
    # with and without early stopping, and the progress wrapper sees blocks x chunks steps.
    from hanna_stats.kernels import permutation

    X = cube(41, measures=4, groups=8, systems=5, decimals=1)
    C = np.round(cube(42, measures=1, groups=8, systems=5)[0], 0)
    kwargs = dict(level="item", permutations=100, seed=3)
    whole = permutation_test_pairs(X, C, **kwargs)
    stop = permutation_test_pairs(X, C, stop_alpha=0.2, **kwargs)
    monkeypatch.setattr(permutation, "FAST_BLOCK_BYTES", 1)
    seen = []

    def progress(steps, desc, total):
        seen.append(total)
        return steps

    blocked = permutation_test_pairs(X, C, progress=progress, **kwargs)
    assert seen == [6 * 20]
    for x, y in zip(whole, blocked, strict=True):
        np.testing.assert_array_equal(x, y)
    for x, y in zip(stop, permutation_test_pairs(X, C, stop_alpha=0.2, **kwargs), strict=True):
        np.testing.assert_array_equal(x, y)
    swaps = permutation_swaps(8, 5, permutations=10, seed=0)
    pairs = np.array([(0, 1), (3, 2), (1, 2)])
    np.testing.assert_array_equal(
        permutation_null(X, C, pairs, swaps, level="item"),
        slow_item_null(X, C, pairs, swaps, "b"),
    )


@pytest.mark.parametrize("level", ["item", "system", "global"])
def test_one_measure_has_no_pair_to_test(level):
    # One measure: no pair, a NaN diagonal and no permutation counted (it used to divide the
    # pairs into blocks of size 0 and fail).
    X = np.random.default_rng(0).normal(size=(1, 5, 4))
    C = np.random.default_rng(1).normal(size=(5, 4))
    res = permutation_test_pairs(X, C, level=level, permutations=10)
    assert res.statistic.shape == (1,) and not np.isnan(res.statistic[0])
    assert np.isnan(res.pvalue).all() and res.pvalue.shape == (1, 1)
    assert res.n_valid.tolist() == [[0]]


# ------------------------------------------------------------------------- missing values


def reference_missing_deltas(X, C, a, b, swaps, level, method):
    """:func:`reference_deltas` under the missing-value rule, written out: the cells where
    ``a`` or ``b`` misses a score leave both measures (z-scored over the cells kept, scipy's
    ``zscore``) and the criterion; means and correlations then omit them."""
    keep = ~(np.isnan(X[a]) | np.isnan(X[b]))
    Z = []
    for m in (a, b):
        z = np.full(X[m].shape, np.nan)
        z[keep] = scipy.stats.zscore(X[m][keep])
        Z.append(z)
    C = np.where(keep, C, np.nan)

    def stat(x):
        if level != "system":
            return level_stat(x, C, level, method)
        means = [
            [math.fsum(v for v in m[:, s] if not np.isnan(v)) / (~np.isnan(m[:, s])).sum()
             if (~np.isnan(m[:, s])).any() else np.nan for s in range(m.shape[1])]
            for m in (x, C)
        ]  # fmt: skip
        return corr(np.array(means[0]), np.array(means[1]), method)

    out = []
    for W in [np.zeros_like(swaps[0]), *swaps]:
        za, zb = np.where(W == 1, Z[1], Z[0]), np.where(W == 1, Z[0], Z[1])
        out.append(stat(za) - stat(zb))
    return np.array(out)


def gappy_cube(seed, groups=5, systems=4):
    """Three measures: 0 complete, 1 missing a whole system and a cell, 2 missing two cells;
    the criterion misses a cell too."""
    X = cube(seed, groups=groups, systems=systems, decimals=1)
    C = cube(seed + 1, measures=1, groups=groups, systems=systems, decimals=0)[0]
    X[1][:, 3] = np.nan
    X[1][0, 0] = np.nan
    X[2][[0, 4], [0, 2]] = np.nan
    C[2, 1] = np.nan
    return X, C


def test_missing_values_hand_worked_counts():
    # Pair (0, 1): measure 1 misses system 3 (5 cells) and cell (0, 0); the criterion misses
    # (2, 1) itself, so 6 cells with a criterion value drop; system 3 loses every cell.
    # Pair (0, 2): cells (0, 0) and (4, 2). Pair (1, 2): the union, (0, 0) counted once: 7.
    X, C = gappy_cube(31)
    res = permutation_test_pairs(X, C, level="item", permutations=30, seed=1)
    np.testing.assert_array_equal(res.n_missing, [[0, 6, 2], [6, 0, 7], [2, 7, 0]])
    np.testing.assert_array_equal(res.n_systems_dropped, [[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    np.testing.assert_array_equal(res.n_inputs_dropped, np.zeros((3, 3)))
    assert (res.n_valid[~np.eye(3, dtype=bool)] == 30).all()
    # Each measure's statistic is over all its own cells (the criterion's pairwise omission).
    for m in range(3):
        assert res.statistic[m] == pytest.approx(level_stat(X[m], C, "item", "kendall"))
    # A small case worked through every one of the 2^4 PERM-SYS swaps: the p-value of the
    # pair (0, 1) equals the count of swaps reaching the observed difference, computed on the
    # 3 systems left.
    swaps = permutation_swaps(5, 4, permutations=16, seed=0, unit="systems")
    bits = np.array(list(itertools.product((0, 1), repeat=4)), dtype=np.uint8)
    swaps = np.ascontiguousarray(np.broadcast_to(bits[:, None, :], (16, 5, 4)))
    res = permutation_test_pairs(X, C, level="system", method="pearson", swaps=swaps)
    deltas = reference_missing_deltas(X, C, 0, 1, swaps, "system", "pearson")
    assert res.pvalue[0, 1] == reference_pvalue(deltas, "two-sided")
    # system 3 has no cell left: its coin changes nothing, so the 16 swaps come in 8 equal pairs
    np.testing.assert_allclose(deltas[1:][bits[:, 3] == 0], deltas[1:][bits[:, 3] == 1])


@pytest.mark.parametrize("unit", ["both", "systems"])
@pytest.mark.parametrize(
    "level, method",
    [
        ("item", "kendall"),
        ("item", "pearson"),
        ("system", "kendall"),
        ("global", "spearman"),
        ("global", "pearson"),
    ],
)
def test_missing_values_match_brute_force(unit, level, method):
    X, C = gappy_cube(41)
    swaps = permutation_swaps(5, 4, permutations=40, seed=3, unit=unit)
    res = permutation_test_pairs(X, C, level=level, method=method, swaps=swaps, unit=unit)
    for a, b in itertools.permutations(range(3), 2):
        deltas = reference_missing_deltas(X, C, a, b, swaps, level, method)
        d = deltas if a < b else -deltas
        assert res.pvalue[a, b] == reference_pvalue(d, "two-sided"), (a, b)
        assert res.n_valid[a, b] == (~np.isnan(deltas[1:])).sum()


def test_missing_values_leave_complete_pairs_unchanged():
    # The pairs of complete measures are computed as if the incomplete ones were absent, and
    # a cube without missing values reports zero counts.
    X, C = gappy_cube(51)
    extra = cube(52, measures=1, groups=5, systems=4, decimals=1)
    full = np.concatenate([X, extra])  # measures 0 and 3 complete
    for level in ("item", "system"):
        res = permutation_test_pairs(full, C, level=level, permutations=50, seed=7)
        alone = permutation_test_pairs(full[[0, 3]], C, level=level, permutations=50, seed=7)
        assert res.pvalue[0, 3] == alone.pvalue[0, 1]
        assert res.pvalue[3, 0] == alone.pvalue[1, 0]
        for count in (alone.n_missing, alone.n_inputs_dropped, alone.n_systems_dropped):
            assert not count.any()
    # A pair that keeps no cell has no test.
    X[1][:] = np.nan
    X[1][0, 0] = 1.0
    X[2][0, 0] = np.nan
    res = permutation_test_pairs(X, C, permutations=20)
    assert np.isnan(res.pvalue[1, 2]) and res.n_valid[1, 2] == 0
    assert res.n_systems_dropped[1, 2] == 4 and res.n_inputs_dropped[1, 2] == 5
