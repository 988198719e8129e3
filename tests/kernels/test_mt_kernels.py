"""Tie calibration, the calibrated pairwise permutation test, soft pairwise accuracy and
significance clusters (kernels).

Expected values: MTME's tau_optimization_test.py, stats_test.py and data_test.py
(google-research/mt-metrics-eval, hand-made cases), scipy.stats.permutation_test, and plain
Python references written here (exact fractions over every candidate epsilon).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hanna_stats.kernels import (
    TIE_RTOL,
    calibrated_permutation_test,
    pairwise_accuracy,
    pairwise_pvalues,
    significance_clusters,
    soft_pairwise_accuracy,
    tie_calibration,
)

NAN = np.nan


class _NanEq:
    """Equal to NaN only (``pytest.approx`` refuses NaN against a number)."""

    def __eq__(self, other):
        return bool(np.isnan(other))


NAN_EQ = _NanEq()


def cube(rows):
    return np.asarray(rows, dtype=float)[None]


# ----------------------------------------------------------------------------- tie calibration


def test_mtme_zero_threshold_is_best():
    # MTME's tau_optimization_test.py test_zero_threshold_is_best.
    human, metric = cube([[1, 2, 3, 4]]), cube([[0, 2, 6, 8]])
    res = tie_calibration(human, metric)
    assert (res.statistic[0, 0], res.epsilon[0, 0]) == (1.0, 0.0)
    curve = [tie_calibration(human, metric, epsilon=e).statistic[0, 0] for e in (0, 2, 4, 6, 8)]
    assert curve == pytest.approx([6 / 6, 4 / 6, 3 / 6, 1 / 6, 0 / 6])


def test_mtme_nonzero_threshold_is_best():
    # MTME's tau_optimization_test.py test_nonzero_threshold_is_best.
    human, metric = cube([[1, 1, 1, 4]]), cube([[0, 2, 6, 8]])
    res = tie_calibration(human, metric)
    assert res.statistic[0, 0] == pytest.approx(4 / 6)
    assert res.epsilon[0, 0] == 4.0
    curve = [tie_calibration(human, metric, epsilon=e).statistic[0, 0] for e in (0, 2, 4, 6, 8)]
    assert curve == pytest.approx([3 / 6, 3 / 6, 4 / 6, 4 / 6, 3 / 6])


def test_mtme_regression_example():
    # MTME's tau_optimization_test.py test_regression_example: rows are the groups, None is
    # missing (the all-missing row is skipped).
    metric = cube([[0, 5, 2, 3, 2], [NAN, 2, 1, 5, 3], [9, 1, 5, 3, 8], [9, 3, 4, 4, 1], [NAN] * 5])
    human = cube([[1, 5, 2, 1, 1], [4, 2, 2, 1, 4], [5, 9, 2, 8, 7], [7, 6, NAN, 3, 2], [NAN] * 5])
    expected = [
        0.4666666666666667, 0.4916666666666668, 0.38333333333333347, 0.29166666666666674,
        0.2666666666666667, 0.2, 0.15833333333333335, 0.15833333333333335, 0.1166666666666667,
    ]  # fmt: skip
    curve = [tie_calibration(human, metric, epsilon=e).statistic[0, 0] for e in range(9)]
    assert curve == pytest.approx(expected, abs=1e-12)
    res = tie_calibration(human, metric)
    assert res.epsilon[0, 0] == 1.0
    assert res.statistic[0, 0] == pytest.approx(0.4916666666666668, abs=1e-12)
    assert (res.n_groups[0, 0], res.n_skipped[0, 0]) == (4, 1)


def test_mtme_kendall_variants_and_ties_opt():
    # MTME's stats_test.py testKendallVariants and testKendallWithTiesOpt (one vector).
    gold, metric = cube([[1, 2, 2, 3, 4]]), cube([[2, 1, 1.5, 5, 3]])
    assert tie_calibration(gold, metric, epsilon=0).statistic[0, 0] == pytest.approx(0.6)
    assert tie_calibration(gold, metric, epsilon=2).statistic[0, 0] == pytest.approx(0.4)
    tau = tie_calibration(gold, metric, epsilon=0, statistic="tau_eq").statistic[0, 0]
    assert tau == pytest.approx(0.2)
    assert tie_calibration(gold, metric).statistic[0, 0] == pytest.approx(0.7)


def test_mtme_positive_epsilon():
    # MTME's stats_test.py testKendallVariantsWithPositiveEpsilon: tau_23 with epsilon 0, 0.1
    # (no new ties: 7/21) and 1 ((7 + 3 - 1 - 10) / 21).
    gold, metric = cube([[1, 1, 1, 2, 2, 3, 4]]), cube([[1, 1, 2, 2, 4, 3, 3]])
    for eps, expected in ((0.0, 7 / 21), (0.1, 7 / 21), (1.0, -1 / 21)):
        res = tie_calibration(gold, metric, epsilon=eps, statistic="tau_eq")
        assert res.statistic[0, 0] == pytest.approx(expected)


def test_mtme_shared_epsilon_over_groups():
    # MTME's stats_test.py testKendallWithTiesOpt: by 'sys' and by 'item' one epsilon serves
    # every group, and the statistic is the mean of the groups' acc_eq at that epsilon.
    gold = np.array([1, 2, 2, 3, 3, 4], float).reshape(2, 3)  # (systems, items)
    metric = np.array([2, 1, 1.5, 5, 3, 2], float).reshape(2, 3)
    for group_by in ("input", "system"):
        H, M = gold.T[None], metric.T[None]  # our cube: (measure, input, system)
        res = tie_calibration(H, M, group_by=group_by)
        eps = res.epsilon[0, 0]
        rows = (gold.T, metric.T) if group_by == "input" else (gold, metric)
        per_group = [
            tie_calibration(h[None, None], m[None, None], level="global", epsilon=eps)
            for h, m in zip(*rows, strict=True)
        ]
        expected = np.mean([r.statistic[0, 0] for r in per_group])
        assert res.statistic[0, 0] == pytest.approx(expected)


def _brute_force(H, M):
    """Exact (Fraction) calibrated acc_eq of one (G, S) pair: every candidate epsilon."""
    groups = []
    for h, m in zip(H, M, strict=True):
        keep = ~(np.isnan(h) | np.isnan(m))
        h, m = h[keep], m[keep]
        pairs = list(itertools.combinations(range(h.size), 2))
        if pairs:
            groups.append((h, m, pairs))
    if not groups:
        return None, None
    candidates = sorted({0.0} | {abs(m[i] - m[j]) for h, m, p in groups for i, j in p})

    def acc(eps):
        total = Fraction(0)
        for h, m, pairs in groups:
            correct = 0
            for i, j in pairs:
                hs = np.sign(h[j] - h[i])
                ms = 0 if abs(m[j] - m[i]) <= eps else np.sign(m[j] - m[i])
                correct += hs == ms
            total += Fraction(correct, len(pairs))
        return total / len(groups)

    values = [acc(e) for e in candidates]
    best = max(values)
    return float(best), candidates[values.index(best)]


small = arrays(np.float64, (3, 4), elements=st.one_of(st.integers(0, 4).map(float), st.just(NAN)))


@settings(max_examples=80, deadline=None)
@given(H=small, M=arrays(np.float64, (3, 4), elements=st.sampled_from([0, 0.5, 1, 2.5, 3, NAN])))
def test_calibration_matches_brute_force(H, M):
    res = tie_calibration(H[None], M[None])
    best, eps = _brute_force(H, M)
    if best is None:
        assert np.isnan(res.statistic[0, 0])
    else:
        assert res.statistic[0, 0] == pytest.approx(best, abs=1e-12)
        assert res.epsilon[0, 0] == eps
        tau = tie_calibration(H[None], M[None], statistic="tau_eq").statistic[0, 0]
        assert tau == pytest.approx(2 * best - 1, abs=1e-12)


def _metric_ties(M, epsilon, level):
    """The pairs (group, i < j) the metric ties at ``epsilon`` by the documented rule
    ``|m_i - m_j| <= epsilon + TIE_RTOL * max |m|`` on the level cube of M (G, S)."""
    X = {"item": M, "system": M.mean(axis=0, keepdims=True), "global": M.reshape(1, -1)}[level]
    i, j = np.triu_indices(X.shape[1], 1)
    d = np.abs(X[:, j] - X[:, i])
    return d <= epsilon + TIE_RTOL * np.nanmax(np.abs(X))


@settings(max_examples=60, deadline=None)
@given(
    H=arrays(np.float64, (3, 5), elements=st.one_of(st.integers(0, 3).map(float), st.just(NAN))),
    tenths=arrays(np.int64, (3, 5), elements=st.integers(-30, 30)),
    level=st.sampled_from(["item", "system", "global"]),
)
def test_calibration_is_scale_invariant(H, tenths, level):
    # Scores in steps of 0.1, as metric files have them: their differences are equal but for
    # rounding (0.3 - 0.1 != 0.4 - 0.2 in floats), and scaling moves the rounding.
    M = tenths / 10
    base = tie_calibration(H[None], M[None], level=level)
    ties = _metric_ties(M, base.epsilon[0, 0], level)
    for c in (0.1, 1 / 3, 0.7, 1e6):
        res = tie_calibration(H[None], c * M[None], level=level)
        if np.isnan(base.statistic[0, 0]):
            assert np.isnan(res.statistic[0, 0])
            continue
        assert res.statistic[0, 0] == base.statistic[0, 0]
        assert res.epsilon[0, 0] == pytest.approx(c * base.epsilon[0, 0], rel=1e-9, abs=1e-300)
        np.testing.assert_array_equal(_metric_ties(c * M, res.epsilon[0, 0], level), ties)
        fixed = tie_calibration(H[None], c * M[None], level=level, epsilon=res.epsilon)
        assert fixed.statistic[0, 0] == base.statistic[0, 0]


def test_differences_equal_but_for_rounding_tie_together():
    # The humans tie pair (0, 1) and order (2, 3); the metric's differences are both 0.2 but
    # for rounding: 0.3 - 0.1 = 0.19999999999999998 and 0.9 - 0.7 = 0.20000000000000007. Exact
    # float ties (mt-metrics-eval's rule) tie (0, 1) alone at epsilon 0.19999999999999998 and
    # score 6/6; tying at 0.2 ties both (5/6, as at epsilon 0, which is then chosen). Both are
    # tied together here, whatever the metric's unit.
    H = cube([[1, 1, 2, 3]])
    M = cube([[0.1, 0.3, 0.7, 0.9]])
    for c in (1.0, 0.1, 1 / 3, 0.7, 1e6):
        res = tie_calibration(H, c * M)
        assert (res.statistic[0, 0], res.epsilon[0, 0]) == (pytest.approx(5 / 6), 0.0)
        at = tie_calibration(H, c * M, epsilon=c * 0.2)
        assert at.statistic[0, 0] == pytest.approx(5 / 6)


def test_epsilon_zero_is_pairwise_accuracy_and_batches():
    rng = np.random.default_rng(3)
    H = rng.integers(1, 5, size=(2, 6, 5)).astype(float)
    M = rng.normal(size=(3, 6, 5)).round(1)
    for level in ("item", "system", "global"):
        res = tie_calibration(H, M, level=level, epsilon=0)
        ref = pairwise_accuracy(H, M, level=level)
        np.testing.assert_allclose(res.statistic, ref.statistic, rtol=1e-12)
    res = tie_calibration(H, M)
    for i in range(2):
        for j in range(3):
            one = tie_calibration(H[[i]], M[[j]])
            assert one.statistic[0, 0] == res.statistic[i, j]
            assert one.epsilon[0, 0] == res.epsilon[i, j]


def test_calibration_nan_policy_and_arguments():
    H, M = cube([[1, 2, 3], [1, NAN, 2]]), cube([[1, 2, 3], [3, 2, 1]])
    assert np.isnan(tie_calibration(H, M, nan_policy="propagate").statistic[0, 0])
    with pytest.raises(ValueError, match="undefined"):
        tie_calibration(H, M, nan_policy="raise")
    with pytest.raises(ValueError, match="epsilon must be None or non-negative"):
        tie_calibration(H, M, epsilon=-1)
    with pytest.raises(ValueError, match="statistic must be one of"):
        tie_calibration(H, M, statistic="acc23")


def test_calibration_propagate_counts_groups_as_pairwise_accuracy():
    # Under nan_policy="propagate" a group with a missing value is skipped and the cell is NaN;
    # the counts are those of pairwise_accuracy wherever the missing value lies.
    rng = np.random.default_rng(4)
    base_h = rng.integers(1, 4, size=(1, 4, 5)).astype(float)
    base_m = rng.normal(size=(1, 4, 5)).round(1)
    for group in range(4):
        for which in ("H", "M"):
            H, M = base_h.copy(), base_m.copy()
            (H if which == "H" else M)[0, group, 2] = NAN
            res = tie_calibration(H, M, nan_policy="propagate")
            ref = pairwise_accuracy(H, M, nan_policy="propagate")
            assert np.isnan(res.statistic[0, 0]) and np.isnan(ref.statistic[0, 0])
            assert (res.n_groups[0, 0], res.n_skipped[0, 0]) == (3, 1)
            assert res.n_groups[0, 0] == ref.n_groups[0, 0]
            assert res.n_skipped[0, 0] == ref.n_skipped[0, 0]
            fixed = tie_calibration(H, M, nan_policy="propagate", epsilon=0.5)
            assert (fixed.n_groups[0, 0], fixed.n_skipped[0, 0]) == (3, 1)


# ------------------------------------------------------------- calibrated permutation test

# MTME's stats_test.py PairwisePermutationSigDiffTest: 4 systems x 2 items, averaged by item.
PP_GOLD = np.array([1, 3, 3, 3, 1, 2, 1, 2], float).reshape(4, 2).T
PP_M1 = np.array([2, 4, 6, 6, 2, 6, 3, 7], float).reshape(4, 2).T
PP_M2 = np.array([1, 5, 4, 4, 4, 3, 2, 1], float).reshape(4, 2).T


def test_calibrated_permutation_exact_enumeration():
    M = np.stack([PP_M1, PP_M2])
    all_swaps = np.array(list(itertools.product((0, 1), repeat=12)), dtype=np.uint8)
    res = calibrated_permutation_test(PP_GOLD[None], M, swaps=all_swaps.reshape(-1, 2, 6))
    assert res.statistic.shape == res.epsilon.shape == (1, 2)
    assert res.delta.shape == res.pvalue.shape == (1, 2, 2)
    res = res.for_human(0)
    tau1 = tie_calibration(PP_GOLD[None], PP_M1[None]).statistic[0, 0]
    tau2 = tie_calibration(PP_GOLD[None], PP_M2[None]).statistic[0, 0]
    assert res.delta[1, 0] == pytest.approx(tau2 - tau1)  # MTME's delta = tau2 - tau1
    # Plain reference: per pair of systems, each metric correct at its brute-force epsilon.
    eps = [_brute_force(PP_GOLD, m)[1] for m in (PP_M1, PP_M2)]
    assert res.epsilon.tolist() == eps
    correct = []
    for m, e in zip((PP_M1, PP_M2), eps, strict=True):
        rows = []
        for g in range(2):
            for i, j in itertools.combinations(range(4), 2):
                hs = np.sign(PP_GOLD[g, j] - PP_GOLD[g, i])
                ms = 0 if abs(m[g, j] - m[g, i]) <= e else np.sign(m[g, j] - m[g, i])
                rows.append(int(hs == ms))
        correct.append(rows)
    c1, c2 = (np.array(c) for c in correct)
    observed = c2.mean() - c1.mean()  # both groups have 6 pairs: the mean of the means
    hits = 0
    for s in all_swaps:
        h1 = np.where(s == 1, c2, c1).mean()
        h2 = np.where(s == 1, c1, c2).mean()
        hits += h2 - h1 >= observed - 1e-12
    assert res.pvalue[1, 0] == pytest.approx(hits / len(all_swaps))
    assert observed == pytest.approx(res.delta[1, 0])


def test_calibrated_permutation_with_missing_values():
    # Pairs with a missing value (in h or either metric) are left out of both metrics' group
    # means; plain reference over all 2^(2 x 3) swap patterns at fixed epsilons.
    h = np.array([[1, 2, 3], [3, NAN, 1]])
    m1 = np.array([[1, 3, 2], [2, 2, 1]])
    m2 = np.array([[3, 2, 1], [1, 2, NAN]])
    patterns = np.array(list(itertools.product((0, 1), repeat=6)), np.uint8).reshape(-1, 2, 3)
    res = calibrated_permutation_test(
        h[None], np.stack([m1, m2]), epsilon=0.5, swaps=patterns
    ).for_human(0)
    pairs = [(g, i, j) for g in range(2) for i, j in itertools.combinations(range(3), 2)]
    valid = [not np.isnan([h[g, i], h[g, j], m1[g, i], m1[g, j], m2[g, i], m2[g, j]]).any()
             for g, i, j in pairs]  # fmt: skip

    def correct(m, g, i, j):
        hs = np.sign(h[g, j] - h[g, i])
        return hs == (0 if abs(m[g, j] - m[g, i]) <= 0.5 else np.sign(m[g, j] - m[g, i]))

    def stat(outcomes):  # mean over groups of the mean over the group's valid pairs
        means = []
        for g in range(2):
            rows = zip(pairs, outcomes, valid, strict=True)
            kept = [o for (gg, _, _), o, v in rows if gg == g and v]
            if kept:
                means.append(np.mean(kept))
        return np.mean(means)

    c1 = [correct(m1, *p) for p in pairs]
    c2 = [correct(m2, *p) for p in pairs]
    observed = stat(c1) - stat(c2)
    hits = 0
    for s in patterns.reshape(len(patterns), -1):
        a = [y if k else x for x, y, k in zip(c1, c2, s, strict=True)]
        b = [x if k else y for x, y, k in zip(c1, c2, s, strict=True)]
        hits += stat(a) - stat(b) >= observed - 1e-12
    assert res.pvalue[0, 1] == pytest.approx(hits / len(patterns))


def test_calibrated_permutation_seeded_and_checked():
    M = np.stack([PP_M1, PP_M2])
    a = calibrated_permutation_test(PP_GOLD[None], M, permutations=500, seed=7)
    b = calibrated_permutation_test(PP_GOLD[None], M, permutations=500, seed=7)
    np.testing.assert_array_equal(a.pvalue, b.pvalue)
    assert np.isnan(np.diag(a.pvalue[0])).all()
    with pytest.raises(ValueError, match=r"swaps must have shape \(K, 2, 6\)"):
        calibrated_permutation_test(PP_GOLD[None], M, swaps=np.zeros((3, 2, 5), np.uint8))


def test_recalibrated_permutation_exact_enumeration():
    # MTME's stats_test.py PermutationSigDiffTest (testTauOptimization): 4 systems x 2 items,
    # averaged by item; the delta is tau2 - tau1 of the calibrated metrics. The p-value is
    # checked against a plain reference over all 2^8 swap patterns of the cells: z-score each
    # metric, swap cells, calibrate both hybrids by brute force (exact fractions).
    gold = np.array([1, 2, 3, 4, 5, 5, 7, 8], float).reshape(4, 2).T
    m1 = np.array([1, 2, 3, 3, 7, 3, 5, 5], float).reshape(4, 2).T
    m2 = np.array([2, 1, 2, 6, 8, 8, 7, 6], float).reshape(4, 2).T
    patterns = np.array(list(itertools.product((0, 1), repeat=8)), np.uint8).reshape(-1, 2, 4)
    res = calibrated_permutation_test(
        gold[None], np.stack([m1, m2]), swap="scores", swaps=patterns
    ).for_human(0)
    tau1, tau2 = (_brute_force(gold, m)[0] for m in (m1, m2))
    assert res.delta[1, 0] == pytest.approx(tau2 - tau1)
    z1, z2 = ((m - m.mean()) / m.std() for m in (m1, m2))
    hits = np.zeros(2)
    for s in patterns.astype(bool):
        c1 = _brute_force(gold, np.where(s, z2, z1))[0]  # metric 1's hybrid
        c2 = _brute_force(gold, np.where(s, z1, z2))[0]
        hits += (c2 - c1 >= tau2 - tau1 - 1e-12, c1 - c2 >= tau1 - tau2 - 1e-12)
    assert res.pvalue[1, 0] == pytest.approx(hits[0] / len(patterns))
    assert res.pvalue[0, 1] == pytest.approx(hits[1] / len(patterns))
    assert 0 < res.pvalue[0, 1] < 1
    with pytest.raises(ValueError, match="epsilon must be None"):
        calibrated_permutation_test(gold[None], np.stack([m1, m2]), swap="scores", epsilon=1.0)


def test_recalibrated_observed_difference_uses_the_values_of_the_null():
    # The null swaps z-scored metrics; the observed difference is theirs too. Under exact float
    # ties these scores in tenths tie other pairs once z-scored (metric 0: raw 4/9, z 1/2), and
    # an observed difference from the raw scores missed the identity permutation's.
    rng = np.random.default_rng(0)
    h = rng.integers(1, 4, size=(1, 3, 4)).astype(float)[0]
    M = rng.integers(0, 20, size=(2, 3, 4)) / 10
    identity = np.zeros((1, 3, 4), np.uint8)
    res = calibrated_permutation_test(h[None], M, swap="scores", swaps=identity)
    assert res.pvalue[0, 0, 1] == res.pvalue[0, 1, 0] == 1.0


def test_calibrated_permutation_takes_cubes_as_tie_calibration():
    # H is a cube of human measures (Mh, G, S), as tie_calibration's: statistic and epsilon
    # (Mh, Mm) are tie_calibration's; each human measure's p-values are those of a test of it
    # alone with the same seed (one draw of swaps serves all).
    rng = np.random.default_rng(3)
    H = rng.integers(1, 4, size=(2, 3, 4)).astype(float)
    M = rng.integers(0, 6, size=(3, 3, 4)) / 2
    for swap, permutations in (("pairs", 300), ("scores", 20)):
        res = calibrated_permutation_test(H, M, permutations=permutations, seed=5, swap=swap)
        cal = tie_calibration(H, M)
        np.testing.assert_array_equal(res.statistic, cal.statistic)
        np.testing.assert_array_equal(res.epsilon, cal.epsilon)
        assert res.delta.shape == res.pvalue.shape == (2, 3, 3)
        for i in range(2):
            one = calibrated_permutation_test(
                H[[i]], M, permutations=permutations, seed=5, swap=swap
            ).for_human(0)
            mine = res.for_human(i)
            for got, want in zip(mine, one, strict=True):
                np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(mine.delta, one.statistic[:, None] - one.statistic)
    with pytest.raises(ValueError, match=r"H must have 3 dimensions .* pass h\[None\]"):
        calibrated_permutation_test(H[0], M)
    with pytest.raises(ValueError, match="cell_order must be one of 'input-major', 'system-m"):
        calibrated_permutation_test(H, M, cell_order="row-major")


def _global_pair_pvalue(h, m1, m2, e1, e2, swaps):
    """Plain reference at global level: the cells of (G, S) matrices packed system after system
    (mt-metrics-eval's vectors), pairs i < j of that vector in row-major order, one swap
    indicator per pair; p-value of "m1 agrees better"."""
    hv, v1, v2 = (x.T.ravel() for x in (h, m1, m2))  # system-major: cell (g, s) at s G + g
    pairs = list(itertools.combinations(range(hv.size), 2))

    def correct(v, e):
        out = []
        for i, j in pairs:
            ms = 0 if abs(v[j] - v[i]) <= e else np.sign(v[j] - v[i])
            out.append(float(np.sign(hv[j] - hv[i]) == ms))
        return np.array(out)

    c1, c2 = correct(v1, e1), correct(v2, e2)
    observed = c1.mean() - c2.mean()
    hits = [np.where(s, c2, c1).mean() - np.where(s, c1, c2).mean() >= observed - 1e-12
            for s in swaps]  # fmt: skip
    return np.mean(hits)


def test_calibrated_permutation_global_cell_order():
    # At global level the pairs of swaps number the G S cells input after input (default) or
    # system after system (cell_order="system-major", mt-metrics-eval's packing): swaps given
    # in one order, reordered to the other's pairs, give the same p-values.
    rng = np.random.default_rng(11)
    G, S = 2, 3
    h = rng.integers(1, 4, size=(G, S)).astype(float)
    M = rng.integers(0, 5, size=(2, G, S)).astype(float)
    n = G * S
    pairs = list(itertools.combinations(range(n), 2))
    swaps = rng.integers(0, 2, size=(64, 1, len(pairs)), dtype=np.uint8)
    kwargs = {"level": "global", "swaps": swaps}
    system = calibrated_permutation_test(h[None], M, cell_order="system-major", **kwargs)
    # The same coins on the same pairs of cells, numbered input after input.
    position = {pair: k for k, pair in enumerate(pairs)}
    cell = [(o % G, o // G) for o in range(n)]  # system-major observation -> (g, s)
    moved = np.empty_like(swaps)
    for k, (i, j) in enumerate(pairs):
        a, b = sorted(g * S + s for g, s in (cell[i], cell[j]))
        moved[:, 0, position[(a, b)]] = swaps[:, 0, k]
    inputs = calibrated_permutation_test(h[None], M, level="global", swaps=moved)
    np.testing.assert_array_equal(system.pvalue, inputs.pvalue)
    np.testing.assert_array_equal(system.statistic, inputs.statistic)
    np.testing.assert_array_equal(system.epsilon, inputs.epsilon)
    default = calibrated_permutation_test(h[None], M, **kwargs)
    same = calibrated_permutation_test(h[None], M, cell_order="input-major", **kwargs)
    for got, want in zip(default, same, strict=True):
        np.testing.assert_array_equal(got, want)
    e1, e2 = system.epsilon[0]
    want = _global_pair_pvalue(h, M[0], M[1], e1, e2, swaps[:, 0])
    assert system.pvalue[0, 0, 1] == pytest.approx(want)
    want = _global_pair_pvalue(h, M[1], M[0], e2, e1, swaps[:, 0])
    assert system.pvalue[0, 1, 0] == pytest.approx(want)
    assert system.pvalue[0, 1, 0] != default.pvalue[0, 1, 0]  # the order matters here


# ---------------------------------------------------------------- soft pairwise accuracy


def test_mtme_pairwise_confidence_error():
    # MTME's stats_test.py testPairwiseConfidenceError: Correlation(2, gold, metric), 2 systems
    # x 3 segments. Exactly: the human differences d = (-1, -1, -1) give T = -3, reached by
    # every sign pattern (p_h = 1); the metric's d = (1, -1, -1) give T = -1, missed only by
    # the pattern (-, +, +) with T* = -3 (p_m = 7/8); SPA = 1 - 1/8. MTME's 0.872 (3 places)
    # is the same with 1000 random draws.
    gold = np.array([1, 2, 3, 2, 3, 4], float).reshape(2, 3).T[None]
    metric = np.array([2, 2, 4, 1, 3, 5], float).reshape(2, 3).T[None]
    signs = np.array(list(itertools.product((1, -1), repeat=3)), float)
    exact = soft_pairwise_accuracy(gold, metric, signs=signs)
    assert exact.pvalues_h[0, 0, 0, 1] == 1.0
    assert exact.pvalues_m[0, 0, 0, 1] == 7 / 8
    assert exact.statistic[0, 0] == pytest.approx(0.875)
    # With k = 1,000 random sign patterns p_h stays 1 and SPA is the estimate of p_m = 7/8:
    # sd = sqrt(p (1 - p) / k) = 0.0105; 4 sd of the exact value (MTME's 0.872 lies within).
    drawn = soft_pairwise_accuracy(gold, metric, permutations=1000, seed=0)
    sd = math.sqrt(7 / 8 * (1 / 8) / 1000)
    assert drawn.statistic[0, 0] == pytest.approx(7 / 8, abs=4 * sd)


def test_pairwise_pvalues_match_scipy_exact():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(2, 8, 4)).round(1)
    signs = np.array(list(itertools.product((1, -1), repeat=8)), float)
    P = pairwise_pvalues(X, signs=signs)
    for m in range(2):
        for i, j in itertools.combinations(range(4), 2):
            ref = scipy.stats.permutation_test(
                (X[m, :, i], X[m, :, j]),
                lambda x, y: np.sum(x - y),
                permutation_type="samples",
                alternative="greater",
                n_resamples=np.inf,
            )
            assert P[m, i, j] == pytest.approx(ref.pvalue, abs=1e-12)
    assert np.isnan(P[:, np.tril_indices(4)[0], np.tril_indices(4)[1]]).all()


@settings(max_examples=40, deadline=None)
@given(
    X=arrays(np.float64, (2, 6, 3), elements=st.one_of(st.integers(0, 3).map(float), st.just(NAN))),
    seed=st.integers(0, 2**32),
)
def test_pairwise_pvalues_match_plain_loops(X, seed):
    signs = 1 - 2 * np.random.default_rng(seed).integers(0, 2, size=(50, 6))
    P = pairwise_pvalues(X, signs=signs)
    for m in range(2):
        for i, j in itertools.combinations(range(3), 2):
            kept = [g for g in range(6) if not np.isnan(X[m, g, i] - X[m, g, j])]
            d = [X[m, g, i] - X[m, g, j] for g in kept]
            hits = sum(
                sum(signs[k, g] * x for g, x in zip(kept, d, strict=True)) >= sum(d) - 1e-9
                for k in range(50)
            )
            assert P[m, i, j] == (pytest.approx(hits / 50) if kept else NAN_EQ)
    spa_xy = soft_pairwise_accuracy(X[:1], X[1:], signs=signs)
    spa_yx = soft_pairwise_accuracy(X[1:], X[:1], signs=signs)
    np.testing.assert_array_equal(spa_xy.statistic, spa_yx.statistic)
    np.testing.assert_array_equal(spa_xy.pvalues_h, spa_yx.pvalues_m)


def _exact_spa(H, M):
    """SPA of one (G, S) human and metric matrix by plain loops over the exact null: per pair
    of systems, the inputs where all four scores are present, every sign pattern of them."""
    errors = []
    for i, j in itertools.combinations(range(H.shape[1]), 2):
        rows = [
            g for g in range(H.shape[0]) if not np.isnan([H[g, i], H[g, j], M[g, i], M[g, j]]).any()
        ]
        if not rows:
            continue
        p = []
        for X in (H, M):
            d = [X[g, i] - X[g, j] for g in rows]
            flips = list(itertools.product((1, -1), repeat=len(rows)))
            hits = sum(np.dot(e, d) >= sum(d) - 1e-9 for e in flips)
            p.append(Fraction(int(hits), len(flips)))
        errors.append(abs(p[0] - p[1]))
    if not errors:
        return None, 0
    return 1 - float(sum(errors) / len(errors)), len(errors)


# Human scores with a missing score (input 1 of system 1) and an unrated system (2); the metric
# misses input 3 of system 0. Worked by hand over every sign pattern of the kept inputs:
#   pair (0, 1), inputs 0, 2 (input 1: no human score of 1; input 3: no metric score of 0):
#     human d = (1, 2), T = 3: only (+, +) reaches it, p_h = 1/4;
#     metric d = (1, -1), T = 0: all but (-, +) reach it, p_m = 3/4;
#   pair (0, 3), inputs 0, 1, 2: human d = (1, 4, 1), p_h = 1/8; metric d = (2, 9, 2), 1/8;
#   pair (1, 3), inputs 0, 2, 3: human d = (0, -1, 1), T = 0: the patterns with
#     e_3 - e_2 >= 0, 6 of 8, p_h = 6/8; metric d = (1, 3, -1), T = 3: (+, +, +), (+, +, -)
#     and (-, +, -) reach it, p_m = 3/8;
#   system 2 has no human score: left out, with its pairs.
#   SPA = 1 - (1/2 + 0 + 3/8) / 3 = 17/24. The cells left out of the compared systems: (1, 1)
#   and (3, 0).
MISSING_H = np.array(
    [[3, 2, NAN, 2], [5, NAN, NAN, 1], [4, 2, NAN, 3], [NAN, 1, NAN, 0]], float
)  # (inputs, systems)
MISSING_M = np.array([[4, 3, 0, 2], [9, 1, 5, 0], [1, 2, 7, -1], [NAN, 6, 2, 7]], float)


def test_spa_missing_values_worked_by_hand():
    signs = np.array(list(itertools.product((1, -1), repeat=4)), float)  # exact null
    res = soft_pairwise_accuracy(MISSING_H[None], MISSING_M[None], signs=signs)
    assert res.statistic[0, 0] == pytest.approx(17 / 24, abs=1e-12)
    assert _exact_spa(MISSING_H, MISSING_M) == (pytest.approx(17 / 24, abs=1e-12), 3)
    assert (res.n_systems[0, 0], res.n_pairs[0, 0], res.n_missing[0, 0]) == (3, 3, 2)
    p_h, p_m = res.pvalues_h[0, 0], res.pvalues_m[0, 0]
    assert (p_h[0, 1], p_h[0, 3], p_h[1, 3]) == (1 / 4, 1 / 8, 6 / 8)
    assert (p_m[0, 1], p_m[0, 3], p_m[1, 3]) == (3 / 4, 1 / 8, 3 / 8)
    assert np.isnan(p_h[:, 2]).all() and np.isnan(p_m[2]).all()


@settings(max_examples=40, deadline=None)
@given(
    H=arrays(np.float64, (4, 4), elements=st.one_of(st.integers(0, 3).map(float), st.just(NAN))),
    M=arrays(np.float64, (4, 4), elements=st.one_of(st.integers(0, 5).map(float), st.just(NAN))),
)
def test_spa_matches_exact_loops(H, M):
    signs = np.array(list(itertools.product((1, -1), repeat=4)), float)  # exact null
    res = soft_pairwise_accuracy(H[None], M[None], signs=signs)
    expected, n_pairs = _exact_spa(H, M)
    assert res.n_pairs[0, 0] == n_pairs
    if n_pairs:
        assert res.statistic[0, 0] == pytest.approx(expected, abs=1e-12)
    else:
        assert np.isnan(res.statistic[0, 0])


def test_spa_drops_unrated_systems_and_refuses_one_system():
    rng = np.random.default_rng(8)
    H = rng.normal(size=(1, 30, 6))
    M = H + rng.normal(scale=0.5, size=H.shape)
    unrated = H.copy()
    unrated[0, :, [1, 4]] = NAN  # two systems the humans did not rate, anywhere
    res = soft_pairwise_accuracy(unrated, M, permutations=200, seed=3)
    kept = soft_pairwise_accuracy(
        H[..., [0, 2, 3, 5]], M[..., [0, 2, 3, 5]], permutations=200, seed=3
    )
    assert res.statistic[0, 0] == kept.statistic[0, 0]
    assert (res.n_systems[0, 0], res.n_pairs[0, 0], res.n_missing[0, 0]) == (4, 6, 0)
    # The unrated systems' p-values (1 for every pair, whichever way round) no longer make the
    # result depend on the order of the systems.
    order = [4, 2, 0, 5, 1, 3]
    shuffled = soft_pairwise_accuracy(unrated[..., order], M[..., order], permutations=200, seed=3)
    assert shuffled.statistic[0, 0] == pytest.approx(res.statistic[0, 0], abs=1e-12)
    with pytest.raises(ValueError, match="at least 2 systems"):
        soft_pairwise_accuracy(H[..., :1], M[..., :1])


def test_spa_identical_measures_and_reversal():
    rng = np.random.default_rng(2)
    H = rng.normal(size=(1, 20, 5))
    res = soft_pairwise_accuracy(H, np.concatenate([H, -H]), permutations=300, seed=1)
    assert res.statistic[0, 0] == 1.0
    assert res.statistic[0, 1] < 0.5


# ------------------------------------------------------------------- significance clusters


@pytest.mark.parametrize(
    ("matrix", "alpha", "expected"),
    [
        ([0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0], 0.5, [1, 1, 1, 1]),
        ([0, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0], 1.0, [1, 2, 3, 4]),
        ([0, 1, 0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0], 0.5, [1, 1, 2, 2]),
        ([0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0], 0.5, [1, 2, 2, 3]),
    ],
)
def test_mtme_assign_ranks(matrix, alpha, expected):
    # MTME's data_test.py testAssignRanks (measures sorted by decreasing statistic).
    P = np.array(matrix, float).reshape(4, 4)
    assert significance_clusters([4, 3, 2, 1], P, alpha=alpha).tolist() == expected


def test_clusters_sort_by_statistic():
    P = np.array([0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0], float).reshape(4, 4)
    order = np.array([2, 0, 3, 1])  # measure k of the input is sorted position order[k]
    stat = np.array([4.0, 3.0, 2.0, 1.0])[order]
    Q = P[np.ix_(order, order)]
    ranks = significance_clusters(stat, Q, alpha=0.5)
    assert ranks.tolist() == np.array([1, 2, 2, 3])[order].tolist()
    nan_last = significance_clusters([np.nan, 1.0], np.ones((2, 2)), alpha=0.05)
    assert nan_last.tolist() == [1, 1]
    with pytest.raises(ValueError, match="pvalues must have shape"):
        significance_clusters([1.0, 2.0], np.ones((3, 3)))
