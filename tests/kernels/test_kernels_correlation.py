"""Ranks, Kendall counts and 1-D correlations against independent oracles.

Oracles: scipy.stats (rankdata, pearsonr, spearmanr, kendalltau with variant b/c and its default
p-value, method="auto", as ours) and brute-force pair counting written here (tau-a, the five pair
classes). The other p-value methods: tests/kernels/test_pvalue_methods.py.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from hanna_stats.kernels import (
    correlation,
    kendall_counts,
    rankdata,
    tau_from_counts,
)
from hanna_stats.kernels.kendall import QUADRATIC_MAX_N

METHODS = ("pearson", "spearman", "kendall")
# Integer magnitudes whose products stay exact; 5e-324 (2^-1074) times an integer is an exact
# denormal, so a ladder of them mimics HANNA's CIDEr column (values down to 3e-321).
SCALES = (1.0, 1e-300, 1e300, 5e-324)


def normalised(v):
    """``v`` times the power of two that brings ``max |v|`` into [0.5, 1) (an exact scaling)."""
    return np.ldexp(v, -np.frexp(np.abs(v).max())[1])


def scipy_correlation(x, y, method, variant="b", alternative="two-sided"):
    """scipy's statistic and p-value on NaN-free data."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant-input warnings
        if method == "pearson":
            # scipy's mean of denormals is rounded on the denormal grid (error ~1e-3 relative);
            # Pearson's r is scale invariant and scaling by a power of two is exact, so scipy
            # gets the same problem, well conditioned, on normalised data.
            res = scipy.stats.pearsonr(normalised(x), normalised(y), alternative=alternative)
        elif method == "spearman":
            res = scipy.stats.spearmanr(x, y, alternative=alternative)
        else:
            # method="auto" (exact without ties for n <= 33, else asymptotic), as our default
            res = scipy.stats.kendalltau(x, y, variant=variant, alternative=alternative)
    return float(res.statistic), float(res.pvalue)


def brute_counts(x, y):
    """(concordant, discordant, tied in x only, in y only, in both) by looking at every pair."""
    counts = [0, 0, 0, 0, 0]
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = np.sign(x[j] - x[i]), np.sign(y[j] - y[i])
        if dx == 0 and dy == 0:
            counts[4] += 1
        elif dx == 0:
            counts[2] += 1
        elif dy == 0:
            counts[3] += 1
        else:
            counts[0 if dx == dy else 1] += 1
    return tuple(counts)


def assert_pvalue_close(ours, expected, statistic):
    if np.isnan(expected):
        assert np.isnan(ours)
    elif abs(statistic) > 1 - 1e-9:
        # Near |r| = 1 the p-value's condition number is huge (a 1e-16 change in r moves p by
        # ~1e-8 for n = 3), so only absolute agreement is meaningful.
        assert ours == pytest.approx(expected, abs=1e-6)
    else:
        assert ours == pytest.approx(expected, rel=1e-9, abs=1e-300)


@st.composite
def paired(draw, max_size=30):
    """Two paired vectors of equal length: ties from small integer sets, or spread values, at
    tiny, huge or denormal magnitude (one scale per vector)."""
    n = draw(st.integers(2, max_size))
    vectors = []
    for _ in range(2):
        high = draw(st.sampled_from([1, 3, 6, 1000]))
        values = draw(st.lists(st.integers(-high, high), min_size=n, max_size=n))
        scale = draw(st.sampled_from(SCALES))
        if scale == 5e-324:
            values = [v + high for v in values]  # keep denormals non-negative, still distinct
        vectors.append(np.array(values, dtype=float) * scale)
    return vectors


def test_rankdata_matches_scipy_average_ranks():
    rng = np.random.default_rng(0)
    for n in (0, 1, 2, 7, 100, 1000):
        for high in (2, 10, 10**6):
            x = rng.integers(0, high, n).astype(float)
            np.testing.assert_array_equal(rankdata(x), scipy.stats.rankdata(x, method="average"))


@pytest.mark.parametrize("n", [2, 5, QUADRATIC_MAX_N, QUADRATIC_MAX_N + 1, 200])
def test_kendall_counts_classify_every_pair(n):
    rng = np.random.default_rng(n)
    for high in (2, 5, 10**6):
        x = rng.integers(0, high, n).astype(float)
        y = rng.integers(0, high, n).astype(float)
        c = kendall_counts(x, y)
        assert (c.concordant, c.discordant, c.x_ties, c.y_ties, c.xy_ties) == brute_counts(x, y)
        assert (c.n, c.x_distinct, c.y_distinct) == (n, len(set(x)), len(set(y)))


@settings(deadline=None, max_examples=150)
@given(paired(max_size=90))
def test_tau_variants_match_scipy_and_brute_force(xy):
    x, y = xy
    counts = kendall_counts(x, y)
    for variant in "bc":
        expected = scipy_correlation(x, y, "kendall", variant)[0]
        got = tau_from_counts(counts, variant=variant)
        assert got == pytest.approx(expected, abs=1e-12, nan_ok=True)
    c, d, *_ = brute_counts(x, y)
    n0 = len(x) * (len(x) - 1) / 2
    constant = len(set(x)) == 1 or len(set(y)) == 1
    expected_a = np.nan if constant else (c - d) / n0
    assert tau_from_counts(counts, variant="a") == pytest.approx(expected_a, abs=1e-12, nan_ok=True)


@pytest.mark.parametrize("n", [QUADRATIC_MAX_N, QUADRATIC_MAX_N + 1, 1000, 5000])
@pytest.mark.parametrize("high", [3, 50, 10**9])
def test_long_kendall_matches_scipy(n, high):
    # Both paths of kendall_counts (O(n^2) up to QUADRATIC_MAX_N, merge sort beyond), with
    # heavy, moderate and no ties.
    rng = np.random.default_rng(n + high)
    x = rng.integers(0, high, n).astype(float)
    y = x + rng.integers(0, high, n)
    for variant in "bc":
        res = correlation(x, y, method="kendall", variant=variant)
        expected = scipy_correlation(x, y, "kendall", variant)
        assert res.statistic == pytest.approx(expected[0], abs=1e-12)
        assert res.pvalue == pytest.approx(expected[1], rel=1e-9, abs=1e-300)


@settings(deadline=None, max_examples=200)
@given(paired(), st.sampled_from(METHODS), st.sampled_from(["two-sided", "less", "greater"]))
def test_correlation_matches_scipy(xy, method, alternative):
    x, y = xy
    res = correlation(x, y, method=method, alternative=alternative)
    expected = scipy_correlation(x, y, method, alternative=alternative)
    assert res.statistic == pytest.approx(expected[0], abs=1e-12, nan_ok=True)
    assert_pvalue_close(res.pvalue, expected[1], res.statistic)
    assert np.isnan(res.statistic) or -1 <= res.statistic <= 1


@settings(deadline=None, max_examples=100)
@given(paired(), st.sampled_from(METHODS), st.sampled_from("abc"))
def test_correlation_is_symmetric(xy, method, variant):
    x, y = xy
    forward = correlation(x, y, method=method, variant=variant)
    backward = correlation(y, x, method=method, variant=variant)
    assert forward.statistic == pytest.approx(backward.statistic, abs=1e-15, nan_ok=True)
    assert forward.pvalue == pytest.approx(backward.pvalue, rel=1e-12, nan_ok=True)


@settings(deadline=None, max_examples=100)
@given(
    st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=2, max_size=40),
    st.sampled_from(["spearman", "kendall"]),
)
def test_rank_methods_invariant_under_increasing_maps(pairs, method):
    # Integer data: exp and x**3 + 7 are strictly increasing on them and keep every tie, so the
    # ranks (hence the statistic) are identical.
    x, y = (np.array(v, dtype=float) for v in zip(*pairs, strict=True))
    base = correlation(x, y, method=method)
    for f in (np.exp, lambda v: v**3 + 7):
        moved = correlation(f(x), f(y), method=method)
        assert moved.statistic == pytest.approx(base.statistic, abs=1e-15, nan_ok=True)


@pytest.mark.parametrize("method", METHODS)
def test_constant_input_gives_nan(method):
    res = correlation([2.0, 2.0, 2.0, 2.0], [1.0, 2.0, 3.0, 4.0], method=method)
    assert np.isnan(res.statistic) and np.isnan(res.pvalue)


@pytest.mark.parametrize("method", METHODS)
def test_denormal_vector_is_not_spuriously_perfect(method):
    # HANNA's CIDEr trap: tiny values that a naive sum(x*y)/sqrt(...) turns into +-1. Scaling by
    # 2^1074 is exact and maps them to the integers, whose correlation is known.
    ints = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])
    other = np.array([2.0, 7.0, 1.0, 8.0, 2.0, 8.0, 1.0, 8.0])
    tiny = correlation(ints * 5e-324, other, method=method)
    assert tiny.statistic == pytest.approx(
        correlation(ints, other, method=method).statistic, abs=1e-15
    )
    assert abs(tiny.statistic) < 0.5


@settings(deadline=None, max_examples=100)
@given(paired(), st.sampled_from(METHODS), st.data())
def test_nan_policies(xy, method, data):
    x, y = xy
    holes = data.draw(st.lists(st.integers(0, len(x) - 1), min_size=1, max_size=len(x)))
    x = x.copy()
    x[holes[0]] = np.nan
    y[holes[1:]] = np.nan
    keep = ~(np.isnan(x) | np.isnan(y))
    omitted = correlation(x, y, method=method, nan_policy="omit")
    if keep.sum() >= 2:
        assert omitted.statistic == pytest.approx(
            scipy_correlation(x[keep], y[keep], method)[0], abs=1e-12, nan_ok=True
        )
    else:
        assert np.isnan(omitted.statistic)
    propagated = correlation(x, y, method=method, nan_policy="propagate")
    assert np.isnan(propagated.statistic) and np.isnan(propagated.pvalue)
    with pytest.raises(ValueError, match="x contains NaN"):
        correlation(x, y, method=method, nan_policy="raise")


def test_invalid_arguments_name_the_argument():
    with pytest.raises(ValueError, match="method"):
        correlation([1, 2, 3], [1, 2, 3], method="tau")
    with pytest.raises(ValueError, match="variant"):
        correlation([1, 2, 3], [1, 2, 3], method="kendall", variant="d")
    with pytest.raises(ValueError, match="nan_policy"):
        correlation([1, 2, 3], [1, 2, 3], nan_policy="drop")
    with pytest.raises(ValueError, match="alternative"):
        correlation([1, 2, 3], [1, 2, 3], alternative="both")
    with pytest.raises(ValueError, match="y must match x"):
        correlation([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="x must have 1 dimension"):
        correlation([[1, 2, 3]], [1, 2, 3])
    with pytest.raises(ValueError, match="y must be an array of real numbers"):
        correlation([1, 2], ["a", "b"])


def test_doctest_values():
    # Reference numbers of the docstring examples, from scipy.
    x, y = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]
    for pvalue_method in ("auto", "asymptotic"):
        res = correlation(x, y, method="kendall", pvalue_method=pvalue_method)
        expected = scipy.stats.kendalltau(x, y, method=pvalue_method)
        assert (res.statistic, res.pvalue) == pytest.approx((expected.statistic, expected.pvalue))
