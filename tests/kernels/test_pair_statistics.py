"""Kernels of issue 30's missing statistics: pooled pairwise accuracy, PDP Pearson, WMT's
Kendall-like tau and item subsampling; brute-force definitions and Hypothesis properties. Their
equality with mt-metrics-eval on real data: tests/analyses/test_pair_statistics_wmt22.py."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hanna_stats.kernels import (
    kendall_like_tau,
    pdp_pearson,
    pooled_pairwise_accuracy,
    sample_items,
)

#: Scores on a small grid, so that ties occur.
scores = arrays(
    np.float64,
    st.tuples(st.integers(2, 6), st.integers(2, 7)),
    elements=st.integers(-4, 4).map(float),
)


def _brute_kendall_like(h, x, threshold):
    c = d = 0
    for row_h, row_x in zip(h, x, strict=True):
        for i, j in itertools.combinations(range(len(row_h)), 2):
            diff = row_h[i] - row_h[j]
            if abs(diff) >= threshold:
                if (diff > 0 and row_x[i] > row_x[j]) or (diff < 0 and row_x[i] < row_x[j]):
                    c += 1
                else:
                    d += 1
    return c, d


@settings(max_examples=60, deadline=None)
@given(scores, scores, st.sampled_from([0.0, 1.0, 2.5]))
def test_kendall_like_counts_every_pair(h, x, threshold):
    x = np.resize(x, h.shape)
    res = kendall_like_tau(h, x[None], threshold=threshold)
    c, d = _brute_kendall_like(h, x, threshold)
    assert (res.concordant[0], res.discordant[0]) == (c, d)
    if c + d:
        assert -1.0 <= res.statistic[0] <= 1.0
        assert res.statistic[0] == pytest.approx((c - d) / (c + d), abs=1e-15)
    else:
        assert np.isnan(res.statistic[0])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_kendall_like_without_ties_is_antisymmetric_and_invariant(seed):
    rng = np.random.default_rng(seed)
    h, x = rng.normal(size=(2, 5, 6))  # no ties
    tau = kendall_like_tau(h, x[None], threshold=0.3).statistic[0]
    assert kendall_like_tau(h, -x[None], threshold=0.3).statistic[0] == pytest.approx(-tau)
    assert kendall_like_tau(h, np.exp(x)[None], threshold=0.3).statistic[0] == tau
    # threshold 0 and no ties: Kendall's tau-a = tau-b of each group's pairs, pooled
    total = kendall_like_tau(h[:1], x[:1][None], threshold=0.0).statistic[0]
    assert total == pytest.approx(scipy.stats.kendalltau(h[0], x[0]).statistic)


def test_kendall_like_ties_of_the_measure_are_discordant():
    h = np.array([[0.0, 30.0, 60.0]])
    res = kendall_like_tau(h, np.zeros((1, 1, 3)))
    assert (res.concordant[0], res.discordant[0], res.statistic[0]) == (0, 3, -1.0)
    # threshold 0 counts the criterion's ties too, as discordant
    res = kendall_like_tau(np.zeros((1, 2)), np.array([[[1.0, 2.0]]]), threshold=0.0)
    assert (res.concordant[0], res.discordant[0]) == (0, 1)


def test_kendall_like_missing_values_drop_pairs():
    h = np.array([[0.0, 30.0, np.nan, 90.0]])
    x = np.array([[[0.0, 1.0, 5.0, np.nan]]])
    res = kendall_like_tau(h, x)
    assert (res.concordant[0], res.discordant[0]) == (1, 0)


@settings(max_examples=60, deadline=None)
@given(scores, st.integers(0, 2**32 - 1))
def test_pdp_pearson_is_pearson_of_all_ordered_differences(h, seed):
    x = np.random.default_rng(seed).normal(size=h.shape)
    dh = (h[:, None, :] - h[:, :, None]).ravel()  # mt-metrics-eval's enumeration
    dx = (x[:, None, :] - x[:, :, None]).ravel()
    res = pdp_pearson(h, x[None])
    if (dh == 0).all():
        assert np.isnan(res.statistic[0])
    else:
        assert res.statistic[0] == pytest.approx(scipy.stats.pearsonr(dh, dx)[0], abs=1e-12)
    assert res.n_pairs[0] == h.shape[0] * h.shape[1] * (h.shape[1] - 1) // 2


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_pdp_pearson_invariant_to_shifts_per_group_and_antisymmetric(seed):
    rng = np.random.default_rng(seed)
    h, x = rng.normal(size=(2, 4, 5))
    r = pdp_pearson(h, x[None]).statistic[0]
    shifted = 3.0 * x + rng.normal(size=(4, 1))  # a positive scale, a shift per segment
    assert pdp_pearson(h, shifted[None]).statistic[0] == pytest.approx(r, abs=1e-12)
    assert pdp_pearson(h, -x[None]).statistic[0] == pytest.approx(-r, abs=1e-12)
    assert -1.0 <= r <= 1.0
    by_system = pdp_pearson(h, x[None], group_by="system").statistic[0]
    assert by_system == pytest.approx(pdp_pearson(h.T, x.T[None]).statistic[0], abs=1e-12)


def _brute_pooled(gold, x, labels):
    agree = pairs = 0
    for i, j in itertools.combinations(range(len(gold)), 2):
        if labels[i] != labels[j] or np.isnan([gold[i], gold[j], x[i], x[j]]).any():
            continue
        pairs += 1
        agree += np.sign(gold[i] - gold[j]) == np.sign(x[i] - x[j])
    return agree, pairs


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_pooled_accuracy_counts_pairs_within_subsets(seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, 12)
    gold = rng.integers(0, 4, 12).astype(float)  # ties
    X = rng.integers(0, 4, (3, 12)).astype(float)
    gold[rng.random(12) < 0.1] = np.nan
    X[rng.random((3, 12)) < 0.1] = np.nan
    res = pooled_pairwise_accuracy(gold, X, labels, permutations=50, seed=seed)
    for m in range(3):
        agree, pairs = _brute_pooled(gold, X[m], labels)
        assert res.n_pairs[m] == pairs
        if pairs:
            assert res.statistic[m] == agree / pairs
    # invariant to a measure's strictly increasing transform, the test too
    again = pooled_pairwise_accuracy(gold, np.exp(X), labels, permutations=50, seed=seed)
    np.testing.assert_array_equal(again.statistic, res.statistic)


def test_pooled_accuracy_permutation_test():
    rng = np.random.default_rng(3)
    labels = np.repeat([0, 1, 2], 8)
    gold = rng.normal(size=24)
    good, bad = gold + 0.1 * rng.normal(size=24), rng.normal(size=24)
    res = pooled_pairwise_accuracy(gold, [good, bad], labels, permutations=500, seed=1)
    assert res.pvalue[0, 1] < 0.01 < 0.99 < res.pvalue[1, 0]
    assert np.isnan(res.pvalue[0, 0])
    assert res.null.shape == (500, 2, 2)
    # the draws are those of the p-value: swapped differences reaching the observed one
    n = res.n_pairs[0]
    observed = round(res.delta[0, 1] * n)
    hits = np.round((res.null[:, 0, 1] - res.null[:, 1, 0]) * n) >= observed
    assert res.pvalue[0, 1] == hits.mean()
    same = pooled_pairwise_accuracy(gold, [good, bad], labels, permutations=500, seed=1)
    np.testing.assert_array_equal(same.pvalue, res.pvalue)
    with pytest.raises(ValueError, match="subsets must be integer"):
        pooled_pairwise_accuracy(gold, [good], labels.astype(float))


def test_sample_items_uniform_and_stratified():
    np.testing.assert_array_equal(
        sample_items(50, 10, seed=4), np.random.default_rng(4).choice(50, 10, replace=False)
    )
    assert sorted(sample_items(7, 0, seed=1)) == list(range(7))
    strata = np.array([5, 10, 15, 20])
    picked = sample_items(50, 10, strata=strata, seed=2)
    counts = np.histogram(picked, bins=np.r_[0, np.cumsum(strata)])[0]
    assert counts.tolist() == [1, 2, 3, 4]  # proportional: 10 * [0.1, 0.2, 0.3, 0.4]
    assert len(set(picked.tolist())) == 10
    # a tie for the last item (strata of equal size): decided by the seed, deterministically
    tied = [tuple(sample_items(9, 2, strata=[3, 3, 3], seed=s)) for s in (5, 5)]
    assert tied[0] == tied[1]
    with pytest.raises(ValueError, match="strata must sum"):
        sample_items(10, 3, strata=[4, 5])
