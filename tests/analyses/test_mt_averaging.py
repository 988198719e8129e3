"""Item-level grouping (by input / by system), count weighting and Fisher z intervals.

Expected values: MTME's stats_test.py (google-research/mt-metrics-eval, hand-made cases),
scipy per group in plain Python loops, and Fisher's formula written out.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hanna_stats.kernels import fisher_interval, level_correlation, pairwise_accuracy

# MTME's stats_test.py, CorrelationTest: Correlation(2, gold, metric) packs 2 systems x 3
# items system by system; as our cube (measure, item, system):
GOLD = np.array([1, 2, 3, 4, 5, 6], float).reshape(2, 3).T[None]
METRIC = np.array([2, 1, 4, 3, 3, 7], float).reshape(2, 3).T[None]


@pytest.mark.parametrize(
    ("method", "by_none", "by_sys", "by_item"),
    [("pearson", 0.776, 0.760, 1.0), ("kendall", 0.552, 0.575, 1.0)],
)
def test_mtme_average_by(method, by_none, by_sys, by_item):
    # MTME's stats_test.py testPearson / testKendall (3 decimals).
    def stat(level, group_by="input"):
        res = level_correlation(GOLD, METRIC, level=level, method=method, group_by=group_by)
        return float(res.statistic[0, 0])

    assert stat("global") == pytest.approx(by_none, abs=5e-4)
    assert stat("item", "system") == pytest.approx(by_sys, abs=5e-4)
    assert stat("item", "input") == pytest.approx(by_item, abs=5e-4)


def test_mtme_micro_averaging():
    # MTME's stats_test.py testMicroAveraging: average_by='sys', macro=False weights each
    # system's correlation by its number of non-missing items.
    g = np.array([1, np.nan, 3, 4, 5, 6]).reshape(2, 3).T[None]
    m = np.array([2, 1, 8, 3, 5, 6], float).reshape(2, 3).T[None]
    p1 = scipy.stats.pearsonr([1, 3], [2, 8])[0]
    p2 = scipy.stats.pearsonr([4, 5, 6], [3, 5, 6])[0]
    res = level_correlation(
        g, m, level="item", method="pearson", group_by="system", weighting="count"
    )
    assert res.statistic[0, 0] == pytest.approx((2 * p1 + 3 * p2) / 5, rel=1e-12)
    uniform = level_correlation(g, m, level="item", method="pearson", group_by="system")
    assert uniform.statistic[0, 0] == pytest.approx((p1 + p2) / 2, rel=1e-12)


def _reference(A, B, method, group_by, weighting):
    """Plain loops: per group, scipy on the pairs present in both, then the (weighted) mean."""
    f = {"pearson": scipy.stats.pearsonr, "kendall": scipy.stats.kendalltau}[method]
    if group_by == "system":
        A, B = A.transpose(0, 2, 1), B.transpose(0, 2, 1)
    out = np.full((A.shape[0], B.shape[0]), np.nan)
    for i in range(A.shape[0]):
        for j in range(B.shape[0]):
            total = weight = 0.0
            for g in range(A.shape[1]):
                x, y = A[i, g], B[j, g]
                keep = ~(np.isnan(x) | np.isnan(y))
                x, y = x[keep], y[keep]
                if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
                    continue
                w = x.size if weighting == "count" else 1
                total += w * f(x, y)[0]
                weight += w
            if weight:
                out[i, j] = total / weight
    return out


cubes = arrays(
    np.float64,
    (2, 4, 5),
    elements=st.one_of(st.integers(0, 4).map(float), st.just(np.nan)),
)


@settings(max_examples=60, deadline=None)
@given(
    A=cubes,
    B=cubes,
    method=st.sampled_from(["pearson", "kendall"]),
    group_by=st.sampled_from(["input", "system"]),
    weighting=st.sampled_from(["uniform", "count"]),
)
def test_grouping_and_weighting_match_plain_loops(A, B, method, group_by, weighting):
    res = level_correlation(
        A, B, level="item", method=method, group_by=group_by, weighting=weighting
    )
    expected = _reference(A, B, method, group_by, weighting)
    np.testing.assert_allclose(res.statistic, expected, rtol=1e-9, atol=1e-12)


def test_pairwise_accuracy_by_system():
    # Per system (columns of GOLD/METRIC): acc_eq over the 3 pairs of items, by hand.
    # System 0: gold 1,2,3 vs metric 2,1,4 -> (1,2) discordant, (1,3), (2,3) concordant: 2/3.
    # System 1: gold 4,5,6 vs metric 3,3,7 -> (4,5) tied in metric only, others concordant: 2/3.
    res = pairwise_accuracy(GOLD, METRIC, group_by="system")
    assert res.statistic[0, 0] == pytest.approx(2 / 3)


def test_group_by_needs_item_level():
    with pytest.raises(ValueError, match="group_by='system' needs level='item'"):
        level_correlation(GOLD, METRIC, level="system", group_by="system")
    with pytest.raises(ValueError, match="weighting must be one of"):
        level_correlation(GOLD, METRIC, weighting="items")


@settings(max_examples=50, deadline=None)
@given(
    r=st.floats(-0.999, 0.999),
    n=st.integers(4, 500),
    confidence=st.floats(0.5, 0.999),
)
def test_fisher_interval_formula(r, n, confidence):
    z = scipy.stats.norm.ppf((1 + confidence) / 2)
    low, high = fisher_interval(r, n, confidence=confidence)
    assert low == pytest.approx(math.tanh(math.atanh(r) - z / math.sqrt(n - 3)), abs=1e-12)
    assert high == pytest.approx(math.tanh(math.atanh(r) + z / math.sqrt(n - 3)), abs=1e-12)


def test_fisher_interval_matches_scipy():
    rng = np.random.default_rng(1)
    for n in (4, 10, 96):
        x = rng.normal(size=n)
        y = x + rng.normal(size=n)
        res = scipy.stats.pearsonr(x, y)
        for c in (0.9, 0.95):
            ci = res.confidence_interval(confidence_level=c, method=None)
            low, high = fisher_interval(res.statistic, n, confidence=c)
            assert (low, high) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_fisher_interval_edges():
    low, high = fisher_interval([1.0, np.nan, 0.2], [10, 10, 3])
    assert low[0] == high[0] == 1.0
    assert np.isnan(low[1:]).all() and np.isnan(high[1:]).all()
    with pytest.raises(ValueError, match="confidence must be a number in"):
        fisher_interval(0.5, 10, confidence=95)
