"""``correlation(..., pvalue_method=...)`` against scipy.stats (1.17).

Oracles: ``kendalltau(method=...)`` (auto, exact, asymptotic), ``spearmanr`` and ``pearsonr``
(their only, default p-values), and for Spearman's exact p-value
``permutation_test(..., permutation_type="pairings", n_resamples=np.inf)``, which enumerates all
``n!`` pairings (feasible here up to n = 10). Hand-checked values use the Mahonian numbers (the
counts of permutations by inversions) and brute-force enumeration.
"""

from __future__ import annotations

import itertools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from hanna_stats.kernels import correlation
from hanna_stats.kernels.correlation import (
    KENDALL_EXACT_AUTO_MAX_N,
    SPEARMAN_EXACT_MAX_N,
    _inversion_cdf,
    _spearman_null_counts,
)
from hanna_stats.vocabulary import WORDS

ALTERNATIVES, PVALUE_METHODS = WORDS["alternative"], WORDS["pvalue_method"]


def close(ours, theirs):
    """Equal to 1e-12 (relative or absolute), NaN matching NaN."""
    if math.isnan(theirs):
        return math.isnan(ours)
    return math.isclose(ours, theirs, rel_tol=1e-12, abs_tol=1e-12)


def assert_pvalue_close(res, expected):
    """:func:`close`, except near ``|r| = 1``: there the p-value of Pearson's r and of
    Spearman's t is ill-conditioned, and a 1e-16 difference in the statistic (ours and scipy's
    are computed differently: for ``x = y = [0, 1, 2]`` our rho is 1 - 2 ulp, scipy's 1, giving
    p = 1.3e-8 against 0) moves p by up to ~1e-8 for small n; only absolute agreement then."""
    if abs(res.statistic) > 1 - 1e-9:
        assert math.isclose(res.pvalue, float(expected.pvalue), abs_tol=1e-6)
    else:
        assert close(res.pvalue, float(expected.pvalue))


def untied(draw, n):
    floats = st.floats(-1e3, 1e3, allow_nan=False, allow_subnormal=False)
    values = draw(st.lists(floats, min_size=n, max_size=n, unique=True))
    return np.array(values) + 0.0  # -0.0 -> 0.0: unique floats may hold both, a tie


def tied(draw, n):
    high = draw(st.integers(1, 6))
    return np.array(draw(st.lists(st.integers(0, high), min_size=n, max_size=n)), dtype=float)


@st.composite
def samples(draw, min_n=3, max_n=60, ties=None):
    """Paired samples of n in [min_n, max_n]; each vector untied (distinct floats) or tied
    (integers from a small range), at random unless ``ties`` says."""
    n = draw(st.integers(min_n, max_n))
    pair = []
    for _ in range(2):
        with_ties = draw(st.booleans()) if ties is None else ties
        pair.append(tied(draw, n) if with_ties else untied(draw, n))
    return pair


def has_ties(v):
    return np.unique(v).size < v.size


def scipy_quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant-input warnings
        return function(*args, **kwargs)


def scipy_exact_spearman(x, y, alternative):
    """scipy's exact permutation test of Spearman's rho over all n! pairings.

    The statistic is rho of untied ranks, ``sum cx cy / sqrt(sum cx^2 sum cy^2)`` with centred
    ranks ``cx``, ``cy`` (what spearmanr's np.corrcoef of the ranks computes); permuting ``x``
    permutes its ranks. Half-integer centred ranks keep the sums exact, so pairings with equal
    rho give bitwise equal values: scipy's test compares them with a tolerance of 100 ulp of
    the observed value, none at rho = 0, where ``pearsonr`` of the ranks returns +-4e-18 noise
    and miscounts the one-sided p-value.
    """
    cy = scipy.stats.rankdata(y) - (len(y) + 1) / 2

    def rho(ranks, axis):
        cx = ranks - (len(y) + 1) / 2
        return (cx @ cy) / np.sqrt((cx * cx).sum(axis=axis) * (cy @ cy))

    res = scipy.stats.permutation_test(
        (scipy.stats.rankdata(x),),
        rho,
        permutation_type="pairings",
        n_resamples=np.inf,
        vectorized=True,
        alternative=alternative,
    )
    assert close(float(res.statistic), float(scipy.stats.spearmanr(x, y).statistic))
    return float(res.pvalue)


@settings(deadline=None, max_examples=200)
@given(
    samples(),
    st.sampled_from(PVALUE_METHODS),
    st.sampled_from(ALTERNATIVES),
    st.sampled_from("bc"),
)
def test_kendall_matches_scipy_kendalltau(xy, pvalue_method, alternative, variant):
    x, y = xy
    options = {"alternative": alternative, "variant": variant}
    try:
        expected = scipy_quiet(scipy.stats.kendalltau, x, y, method=pvalue_method, **options)
    except ValueError as error:  # scipy: "Ties found, exact method cannot be used."
        assert pvalue_method == "exact" and "Ties found" in str(error)
        with pytest.raises(ValueError, match=r"^pvalue_method='exact' needs samples without ties"):
            correlation(x, y, method="kendall", pvalue_method=pvalue_method, **options)
        return
    res = correlation(x, y, method="kendall", pvalue_method=pvalue_method, **options)
    assert close(res.statistic, float(expected.statistic))
    assert close(res.pvalue, float(expected.pvalue))
    # tau-a: same C - D, same p-value
    options["variant"] = "a"
    tau_a = correlation(x, y, method="kendall", pvalue_method=pvalue_method, **options)
    assert close(tau_a.pvalue, res.pvalue)


@settings(deadline=None, max_examples=200)
@given(samples(), st.sampled_from(("auto", "asymptotic")), st.sampled_from(ALTERNATIVES))
def test_spearman_auto_and_asymptotic_match_scipy_spearmanr(xy, pvalue_method, alternative):
    x, y = xy
    expected = scipy_quiet(scipy.stats.spearmanr, x, y, alternative=alternative)
    res = correlation(x, y, method="spearman", pvalue_method=pvalue_method, alternative=alternative)
    assert close(res.statistic, float(expected.statistic))
    assert_pvalue_close(res, expected)


@settings(deadline=None, max_examples=200)
@given(
    st.one_of(samples(min_n=2, max_n=8, ties=False), samples(min_n=2, max_n=8)),
    st.sampled_from(ALTERNATIVES),
)
def test_spearman_exact_matches_scipy_permutation_test(xy, alternative):
    x, y = xy
    options = {"method": "spearman", "pvalue_method": "exact", "alternative": alternative}
    if has_ties(x) or has_ties(y):
        constant = np.unique(x).size == 1 or np.unique(y).size == 1
        if constant:  # NaN statistic: NaN p-value, no error (as kendalltau's exact)
            assert np.isnan(correlation(x, y, **options).pvalue)
        else:
            with pytest.raises(ValueError, match=r"^pvalue_method='exact' needs samples without"):
                correlation(x, y, **options)
        return
    res = correlation(x, y, **options)
    assert close(res.statistic, float(scipy.stats.spearmanr(x, y).statistic))
    assert close(res.pvalue, scipy_exact_spearman(x, y, alternative))


@pytest.mark.parametrize(
    "n",
    [9, pytest.param(10, marks=pytest.mark.slow)],  # 10! pairings: about 15 s
)
def test_spearman_exact_matches_scipy_at_hanna_size(n):
    rng = np.random.default_rng(n)
    x = rng.permutation(n).astype(float)
    y = x + rng.normal(0, n / 3, n)  # moderately correlated: a small, non-trivial p-value
    res = correlation(x, y, method="spearman", pvalue_method="exact")
    assert close(res.pvalue, scipy_exact_spearman(x, y, "two-sided"))
    asymptotic = correlation(x, y, method="spearman", pvalue_method="asymptotic")
    assert res.pvalue != asymptotic.pvalue


@settings(deadline=None, max_examples=200)
@given(samples(min_n=3, max_n=60), st.sampled_from(PVALUE_METHODS), st.sampled_from(ALTERNATIVES))
def test_pearson_matches_scipy_pearsonr(xy, pvalue_method, alternative):
    x, y = xy
    options = {"method": "pearson", "pvalue_method": pvalue_method, "alternative": alternative}
    if pvalue_method == "asymptotic":  # scipy has none for Pearson's r
        with pytest.raises(ValueError, match=r"^pvalue_method='asymptotic' is not available"):
            correlation(x, y, **options)
        return
    expected = scipy_quiet(scipy.stats.pearsonr, x, y, alternative=alternative)
    res = correlation(x, y, **options)
    assert close(res.statistic, float(expected.statistic))
    assert_pvalue_close(res, expected)


def test_kendall_exact_and_asymptotic_differ_at_hanna_size():
    # n = 10 systems without ties, 5 discordant pairs of 45. Exact two-sided p-value:
    # 2 P(D <= 5) = 2 (1 + 9 + 44 + 155 + 440 + 1068) / 10! (Mahonian numbers).
    x = np.arange(10.0)
    y = np.array([1.0, 0.0, 3.0, 2.0, 5.0, 4.0, 7.0, 6.0, 9.0, 8.0])  # 5 adjacent swaps
    exact = correlation(x, y, method="kendall", pvalue_method="exact")
    assert exact.statistic == pytest.approx(35 / 45)
    assert exact.pvalue == float(Fraction(2 * 1717, math.factorial(10)))
    assert correlation(x, y, method="kendall").pvalue == exact.pvalue  # auto: n <= 33, untied
    asymptotic = correlation(x, y, method="kendall", pvalue_method="asymptotic")
    z = 35 / math.sqrt(10 * 9 * 25 / 18)
    assert asymptotic.pvalue == pytest.approx(math.erfc(z / math.sqrt(2)), rel=1e-12)
    assert asymptotic.pvalue > 1.8 * exact.pvalue  # 0.00175 against 0.00095
    for method in ("exact", "asymptotic"):
        expected = scipy.stats.kendalltau(x, y, method=method).pvalue
        assert close(correlation(x, y, method="kendall", pvalue_method=method).pvalue, expected)


@pytest.mark.parametrize("n", [34, 100, 171, 250])
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_kendall_auto_rule_and_large_exact(n, alternative):
    # Beyond 33 pairs, auto is exact only with at most one discordant (or concordant) pair;
    # scipy's exact recurrence changes form at n = 171.
    rng = np.random.default_rng(n)
    x = rng.permutation(n).astype(float)
    cases = {
        "one swap": np.r_[x[1], x[0], x[2:]],
        "reversed minus one swap": -np.r_[x[1], x[0], x[2:]],
        "noisy": x + rng.normal(0, n / 4, n),
    }
    for y in cases.values():
        for method in PVALUE_METHODS:
            ours = correlation(
                x, y, method="kendall", pvalue_method=method, alternative=alternative
            )
            theirs = scipy.stats.kendalltau(x, y, method=method, alternative=alternative)
            assert close(ours.pvalue, float(theirs.pvalue)), method
    noisy = correlation(x, cases["noisy"], method="kendall", alternative=alternative)
    asymptotic = correlation(
        x, cases["noisy"], method="kendall", pvalue_method="asymptotic", alternative=alternative
    )
    assert noisy.pvalue == asymptotic.pvalue  # auto beyond KENDALL_EXACT_AUTO_MAX_N
    assert n > KENDALL_EXACT_AUTO_MAX_N


def test_kendall_two_pairs_as_scipy():
    # auto/exact: the two orderings are equally likely; asymptotic: the variance divides by
    # n - 2 (scipy raises ZeroDivisionError), NaN here.
    for alternative, expected in (("two-sided", 1.0), ("greater", 0.5), ("less", 1.0)):
        res = correlation([1, 2], [3, 4], method="kendall", alternative=alternative)
        assert res.pvalue == expected
        assert res.pvalue == scipy.stats.kendalltau([1, 2], [3, 4], alternative=alternative).pvalue
    assert np.isnan(
        correlation([1, 2], [3, 4], method="kendall", pvalue_method="asymptotic").pvalue
    )


@pytest.mark.parametrize("n", range(1, 9))
def test_exact_null_distributions_by_brute_force(n):
    inversions = np.zeros(n * (n - 1) // 2 + 1, dtype=np.int64)
    products = np.zeros(len(_spearman_null_counts(n)), dtype=np.int64)
    for p in itertools.permutations(range(n)):
        inversions[sum(p[i] > p[j] for i, j in itertools.combinations(range(n), 2))] += 1
        products[sum(i * v for i, v in enumerate(p))] += 1
    expected_cdf = np.cumsum(inversions) / math.factorial(n)
    np.testing.assert_allclose(_inversion_cdf(n, inversions.size - 1), expected_cdf, rtol=1e-14)
    np.testing.assert_array_equal(_spearman_null_counts(n), products)


@pytest.mark.parametrize("n", range(2, SPEARMAN_EXACT_MAX_N + 1))
def test_spearman_null_distribution_moments(n):
    # Under independence E rho = 0 and var rho = 1 / (n - 1) (Kendall 1970), exactly.
    counts = _spearman_null_counts(n)
    assert int(counts.sum()) == math.factorial(n)
    support = np.flatnonzero(counts)  # t from sum i (n - 1 - i) (reversed) to sum i^2
    trimmed = counts[support[0] : support[-1] + 1]
    np.testing.assert_array_equal(trimmed, trimmed[::-1])  # symmetric about its mean
    t = np.arange(counts.size)
    rho = [1 - Fraction(6 * (n * (n - 1) * (2 * n - 1) // 3 - 2 * int(k)), n**3 - n) for k in t]
    mean = sum(int(c) * r for c, r in zip(counts, rho, strict=True)) / math.factorial(n)
    var = sum(int(c) * r * r for c, r in zip(counts, rho, strict=True)) / math.factorial(n)
    assert (mean, var) == (0, Fraction(1, n - 1))


def test_errors_are_one_line_naming_the_argument():
    tied_x, y = [1.0, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, 4.0]
    cases = [
        ({"method": "kendall", "pvalue_method": "exact"}, tied_x, y, "x has tied values"),
        ({"method": "kendall", "pvalue_method": "exact"}, y, tied_x, "y has tied values"),
        ({"method": "spearman", "pvalue_method": "exact"}, tied_x, y, "x has tied values"),
        ({"method": "pearson", "pvalue_method": "asymptotic"}, y, y, "use 'auto' or 'exact'"),
        ({"method": "kendall", "pvalue_method": "perm"}, y, y, "'auto', 'exact', 'asymptotic'"),
        (
            {"method": "spearman", "pvalue_method": "exact"},
            np.arange(SPEARMAN_EXACT_MAX_N + 1.0),
            np.arange(SPEARMAN_EXACT_MAX_N + 1.0)[::-1],
            f"n <= {SPEARMAN_EXACT_MAX_N}",
        ),
    ]
    for options, a, b, part in cases:
        with pytest.raises(ValueError) as info:
            correlation(a, b, **options)
        message = str(info.value)
        assert message.startswith("pvalue_method") and "\n" not in message
        assert part in message


def test_exact_on_constant_input_is_nan_not_an_error():
    # As scipy: the undefined statistic comes first.
    for method in ("kendall", "spearman"):
        res = correlation([2.0, 2.0, 2.0], [1.0, 2.0, 3.0], method=method, pvalue_method="exact")
        assert np.isnan(res.statistic) and np.isnan(res.pvalue)
    expected = scipy_quiet(scipy.stats.kendalltau, [2, 2, 2], [1, 2, 3], method="exact")
    assert np.isnan(expected.pvalue)


def test_exact_after_omitting_nan():
    x = [1.0, 2.0, np.nan, 4.0, 5.0, 3.0]
    y = [2.0, 1.0, 7.0, 3.0, 5.0, np.nan]
    for method in ("kendall", "spearman"):
        res = correlation(x, y, method=method, pvalue_method="exact", nan_policy="omit")
        kept = correlation([1, 2, 4, 5], [2, 1, 3, 5], method=method, pvalue_method="exact")
        assert res == kept
