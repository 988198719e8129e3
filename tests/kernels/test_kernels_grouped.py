"""The batched engine against the HANNA paper's own procedure: a scipy call per group and pair.

Oracle (independent of the kernels): for each group, drop the systems where either vector is NaN,
call scipy.stats (pearsonr, spearmanr, kendalltau b/c; brute-force pair counts for tau-a), skip
the groups whose correlation is undefined and average the rest.
"""

from __future__ import annotations

import csv
import json
import pickle
import sys
import warnings
from unittest import mock

import numba
import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from hanna_stats.kernels import (
    UndefinedCorrelationError,
    aggregate_groups,
    group_correlations,
    kendall_counts,
    level_correlation,
)
from hanna_stats.kernels import levels as _grouped
from hanna_stats.kernels.kendall import PAIR_KEY_MAX_RANKS, sorted_counts
from hanna_stats.kernels.levels import SIGN_VECTOR_MAX_N, SORTED_MIN_N, _prepare_sorted

METHODS = ("pearson", "spearman", "kendall")


def scipy_statistic(x, y, method, variant):
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if len(x) < 2 or len(set(x)) == 1 or len(set(y)) == 1:
        return np.nan  # undefined: scipy warns and returns NaN (or raises for n < 2)
    if method == "pearson":
        # Exact power-of-two scaling keeps scipy's mean precise on denormal data (HANNA CIDEr).
        x, y = (np.ldexp(v, -np.frexp(np.abs(v).max())[1]) for v in (x, y))
        return scipy.stats.pearsonr(x, y).statistic
    if method == "spearman":
        return scipy.stats.spearmanr(x, y).statistic
    if variant == "a":
        sx = np.sign(x[None, :] - x[:, None])
        sy = np.sign(y[None, :] - y[:, None])
        return np.triu(sx * sy, 1).sum() / (len(x) * (len(x) - 1) / 2)
    return scipy.stats.kendalltau(x, y, variant=variant).statistic


def scipy_level(A, B, level, method, variant):
    """The paper's loop: (statistic, n_groups) per pair of measures, skipping undefined groups."""
    if level == "system":
        # np.mean of each system's list of scores, as the paper's notebooks (the summation order
        # decides exact ties between system means).
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            A, B = (
                np.array([[[np.nanmean(list(x[:, s])) for s in range(x.shape[1])]] for x in X])
                for X in (A, B)
            )
    elif level == "global":
        A, B = A.reshape(len(A), 1, -1), B.reshape(len(B), 1, -1)
    stat = np.full((len(A), len(B)), np.nan)
    n_groups = np.zeros((len(A), len(B)), dtype=int)
    for i in range(len(A)):
        for j in range(len(B)):
            values = [scipy_statistic(A[i, g], B[j, g], method, variant) for g in range(A.shape[1])]
            valid = [v for v in values if not np.isnan(v)]
            n_groups[i, j] = len(valid)
            if valid:
                stat[i, j] = np.mean(valid)
    return stat, n_groups


@st.composite
def cubes(draw, max_groups=6, max_systems=12):
    """Small random cubes with ties, constant groups and missing values."""
    measures = draw(st.integers(1, 4))
    groups = draw(st.integers(1, max_groups))
    systems = draw(st.integers(2, max_systems))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    high = draw(st.sampled_from([2, 4, 1000]))
    X = rng.integers(0, high, (measures, groups, systems)).astype(float)
    X *= draw(st.sampled_from([1.0, 1e-300, 5e-324, 1e300]))
    constant = rng.random((measures, groups)) < draw(st.sampled_from([0.0, 0.2]))
    X[constant] = X[constant][:, :1]
    X[rng.random(X.shape) < draw(st.sampled_from([0.0, 0.05, 0.3]))] = np.nan
    return X


@settings(deadline=None, max_examples=120)
@given(
    cubes(),
    st.sampled_from(["item", "system", "global"]),
    st.sampled_from(METHODS),
    st.sampled_from("abc"),
    st.booleans(),
)
def test_level_correlation_matches_scipy_loop(A, level, method, variant, symmetric):
    B = None if symmetric else A[::-1] + 1.0
    res = level_correlation(A, B, level=level, method=method, variant=variant)
    expected, n_groups = scipy_level(A, A if symmetric else B, level, method, variant)
    np.testing.assert_allclose(res.statistic, expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(res.n_groups, n_groups)
    groups = 1 if level != "item" else A.shape[1]
    np.testing.assert_array_equal(res.n_skipped, groups - n_groups)


@pytest.mark.parametrize("level", ["item", "global"])
@pytest.mark.parametrize(
    "systems", [SIGN_VECTOR_MAX_N, SIGN_VECTOR_MAX_N + 1, 400, SORTED_MIN_N + 1]
)
def test_kendall_on_long_groups_matches_scipy(level, systems):
    # Beyond SIGN_VECTOR_MAX_N systems Kendall counts each pair in O(n log n): by merge sort,
    # and beyond SORTED_MIN_N by the sweep of vectors sorted once.
    rng = np.random.default_rng(systems)
    A = rng.integers(0, 6, (3, 2, systems)).astype(float)
    A[1, 1] = 3.0
    A[2, 0, ::7] = np.nan
    for variant in "bc":
        res = level_correlation(A, level=level, method="kendall", variant=variant)
        expected, n_groups = scipy_level(A, A, level, "kendall", variant)
        np.testing.assert_allclose(res.statistic, expected, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(res.n_groups, n_groups)


@st.composite
def long_vectors(draw):
    """Vectors beyond SORTED_MIN_N values for the sorted sweep's sort: ties, -0.0 beside
    0.0, infinities, values one float64 ulp apart (one float32), huge and tiny magnitudes,
    missing values."""
    n = draw(st.integers(SORTED_MIN_N + 1, SORTED_MIN_N + 400))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(
        st.sampled_from(["ties", "ulps", "short ulps", "mixed", "signed zeros", "extremes"])
    )
    X = rng.normal(size=(3, 2, n))
    if kind == "ties":
        X = np.rint(X * draw(st.sampled_from([0.5, 3.0, 50.0])))
    elif kind == "ulps":  # few float32 values, each a run of neighbouring float64
        X = 1.0 + rng.integers(0, 4, X.shape) * 2.0**-20 + rng.integers(0, 8, X.shape) * 2.0**-52
    elif kind == "short ulps":  # many float32 values, a few neighbouring float64 each
        X = 1.0 + rng.integers(0, 200, X.shape) * 2.0**-20 + rng.integers(0, 3, X.shape) * 2.0**-52
    elif kind == "mixed":
        X[:, :, ::3] = np.rint(X[:, :, ::3])
        X[0, 0, :5] = [np.inf, -np.inf, np.inf, 0.0, -0.0]
    elif kind == "signed zeros":
        X = rng.choice([-0.0, 0.0, 1.0, -1.0, 5e-324, -5e-324], X.shape)
    else:
        X = X * rng.choice([1e300, 1e-300, 1.0], X.shape) + rng.choice([0.0, 1e39], X.shape)
    X[rng.random(X.shape) < draw(st.sampled_from([0.0, 0.1]))] = np.nan  # pairwise deletion
    return X


@settings(deadline=None, max_examples=40)
@given(long_vectors(), st.sampled_from("bc"))
def test_kendall_sorted_sweep_matches_scipy(X, variant):
    # Beyond SORTED_MIN_N systems each vector is sorted once (float32 keys, then float64
    # order within a float32; missing values last) and each pair swept with a Fenwick tree.
    B = X[::-1].copy()
    B[0] = np.rint(B[0] * 2)
    R = group_correlations(X, B, method="kendall", variant=variant)
    for g in range(X.shape[1]):
        for i in range(len(X)):
            for j in range(len(B)):
                expected = scipy_statistic(X[i, g], B[j, g], "kendall", variant)
                np.testing.assert_allclose(R[g, i, j], expected, rtol=0, atol=1e-12)


@settings(deadline=None, max_examples=40)
@given(long_vectors())
def test_kendall_sorted_sweep_counts_match_merge_sort(X):
    # Every field of the sweep's counts (pairs tied in x, in y and in both, the tie sums)
    # equals Knight's merge sort on the positions both vectors keep: runs of one, two and
    # more values, their y ranks ordered by comparison or by a pass over every rank.
    order, rank, counts = _prepare_sorted(X)
    for g in range(X.shape[1]):
        for i in range(len(X)):
            for j in range(len(X)):
                keep = ~(np.isnan(X[i, g]) | np.isnan(X[j, g]))
                if counts[g, i, 0] < 1 or counts[g, j, 0] < 1 or keep.sum() < 2:
                    continue
                got = sorted_counts(
                    order[g, i, : int(counts[g, i, 1])], rank[g, j], int(counts[g, j, 0])
                )
                assert got == kendall_counts(X[i, g][keep], X[j, g][keep])


@settings(deadline=None, max_examples=40)
@given(long_vectors(), st.sampled_from("bc"), st.sampled_from([2, 5, 26, PAIR_KEY_MAX_RANKS]))
def test_kendall_pair_keys_match_scipy(B, variant, levels):
    # A on a few levels (at most PAIR_KEY_MAX_RANKS per vector): each pair sorts its own keys
    # (B's float32 order, A's rank, the index; B's runs of one float32 put in float64 order),
    # with missing values on both sides (pairwise deletion) and a constant vector of A.
    rng = np.random.default_rng(levels)
    A = rng.integers(0, levels, (2, *B.shape[1:])).astype(float) - levels / 2
    A[rng.random(A.shape) < 0.05] = np.nan
    A[1, 0] = 3.0
    with mock.patch.object(_grouped, "_fill_pair_keys", wraps=_grouped._fill_pair_keys) as spy:
        R = group_correlations(A, B, method="kendall", variant=variant)
    assert spy.called
    for g in range(A.shape[1]):
        for i in range(len(A)):
            for j in range(len(B)):
                expected = scipy_statistic(A[i, g], B[j, g], "kendall", variant)
                np.testing.assert_allclose(R[g, i, j], expected, rtol=0, atol=1e-12)


def test_kendall_pair_keys_with_no_pair_to_count():
    # Every vector of A constant (or, under propagate, with missing values): NaN everywhere.
    n = SORTED_MIN_N + 10
    B = np.random.default_rng(8).normal(size=(2, 1, n))
    R = group_correlations(np.full((2, 1, n), 3.0), B, method="kendall")
    assert np.isnan(R).all()
    A = np.ones((1, 1, n))
    A[0, 0, ::2] = 0.0
    A[0, 0, 5] = np.nan
    assert np.isnan(group_correlations(A, B, method="kendall", nan_policy="propagate")).all()
    assert not np.isnan(group_correlations(A, B, method="kendall")).any()


def test_kendall_more_levels_than_pair_keys_hold():
    # One vector of A with PAIR_KEY_MAX_RANKS + 1 distinct values: a sort per vector and a sweep
    # per pair, the same values.
    n = SORTED_MIN_N + 50
    rng = np.random.default_rng(7)
    A = rng.integers(0, 5, (2, 1, n)).astype(float)
    A[1, 0, : PAIR_KEY_MAX_RANKS + 1] = np.arange(PAIR_KEY_MAX_RANKS + 1)
    B = rng.normal(size=(3, 1, n))
    with mock.patch.object(_grouped, "_fill_pair_keys", wraps=_grouped._fill_pair_keys) as spy:
        R = group_correlations(A, B, method="kendall")
    assert not spy.called
    for i in range(2):
        for j in range(3):
            assert R[0, i, j] == pytest.approx(
                scipy.stats.kendalltau(A[i, 0], B[j, 0])[0], abs=1e-12
            )


def test_kendall_sorted_sweep_undefined_vectors():
    # Long vectors that are constant, all missing or of one present value: NaN, and a cube of
    # nothing but those (no vector to sort) too.
    n = SORTED_MIN_N + 10
    X = np.full((3, 1, n), 2.0)
    X[1] = np.nan
    X[2, 0, 1:] = np.nan
    R = group_correlations(X, method="kendall")
    assert np.isnan(R).all()
    Y = np.vstack([X, np.arange(float(n))[None, None]])
    R = group_correlations(Y, method="kendall")
    assert np.isnan(R[0, :3]).all() and R[0, 3, 3] == 1.0
    assert np.isnan(group_correlations(np.full((2, 1, n), 2.0), method="kendall")).all()


def test_propagate_and_raise():
    A = np.arange(24, dtype=float).reshape(2, 3, 4) % 5
    A[0, 1, 2] = np.nan  # measure 0 has a missing value in group 1
    A[1, 2] = 7.0  # measure 1 is constant in group 2
    omit = level_correlation(A, method="pearson")
    propagate = level_correlation(A, method="pearson", nan_policy="propagate")
    # Every cell meets a NaN observation or a constant group: all NaN, counts as defined groups.
    assert np.isnan(propagate.statistic).all()
    np.testing.assert_array_equal(propagate.n_groups, [[2, 1], [1, 2]])
    np.testing.assert_array_equal(propagate.n_skipped, [[1, 2], [2, 1]])
    # Under omit, group 1 of measure 0 is correlated on its 3 remaining systems.
    np.testing.assert_array_equal(omit.n_groups, [[3, 2], [2, 2]])
    with pytest.raises(UndefinedCorrelationError, match="A\\[0\\] has missing values") as info:
        level_correlation(A, method="pearson", nan_policy="raise")
    assert isinstance(info.value, ValueError)
    assert (info.value.i, info.value.j, info.value.group) == (0, 0, 1)
    copy = pickle.loads(pickle.dumps(info.value))
    assert (str(copy), copy.i, copy.j, copy.group) == (str(info.value), 0, 0, 1)
    with pytest.raises(UndefinedCorrelationError, match="B\\[0\\] is constant") as info:
        level_correlation(A[:1, [0, 2]], A[1:, [0, 2]], nan_policy="raise")
    assert (info.value.i, info.value.j, info.value.group) == (0, 0, 1)


def test_all_undefined_cell_is_nan_with_no_groups():
    A = np.ones((2, 3, 5))
    A[1] = np.arange(5.0)
    res = level_correlation(A, method="spearman")
    assert np.isnan(res.statistic[0]).all() and np.isnan(res.statistic[:, 0]).all()
    np.testing.assert_array_equal(res.n_groups, [[0, 0], [0, 3]])
    assert res.statistic[1, 1] == 1.0


def test_system_level_propagates_missing_items_unless_omit():
    A = np.random.default_rng(1).random((2, 4, 5))
    A[0, 2, 3] = np.nan  # one missing item: system 3's mean over items
    omit = level_correlation(A, level="system", method="pearson")
    means = np.nanmean(A, axis=1)
    assert omit.statistic[0, 1] == pytest.approx(scipy.stats.pearsonr(*means).statistic, abs=1e-12)
    assert np.isnan(level_correlation(A, level="system", nan_policy="propagate").statistic[0, 1])


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 Numba threads")
def test_results_do_not_depend_on_thread_count():
    rng = np.random.default_rng(7)
    A = rng.integers(0, 5, (6, 40, 10)).astype(float)
    A[rng.random(A.shape) < 0.05] = np.nan
    results = {}
    for threads in (1, 2):
        numba.set_num_threads(threads)
        try:
            results[threads] = [group_correlations(A, method=m, variant="b") for m in METHODS]
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    for one, two in zip(results[1], results[2], strict=True):
        np.testing.assert_array_equal(one, two)


def test_aggregate_groups():
    R = np.array([[[0.5, np.nan]], [[0.25, np.nan]], [[np.nan, np.nan]]])
    mean, n_groups, n_skipped = aggregate_groups(R)
    np.testing.assert_array_equal(mean, [[0.375, np.nan]])
    np.testing.assert_array_equal(n_groups, [[2, 0]])
    np.testing.assert_array_equal(n_skipped, [[1, 3]])
    assert np.isnan(aggregate_groups(R, nan_policy="propagate")[0]).all()


def test_invalid_arguments_name_the_argument():
    A = np.zeros((2, 3, 4))
    for kwargs, name in [
        ({"level": "story"}, "level"),
        ({"method": "tau"}, "method"),
        ({"variant": "d"}, "variant"),
        ({"nan_policy": "drop"}, "nan_policy"),
    ]:
        with pytest.raises(ValueError, match=name):
            level_correlation(A, **kwargs)
    with pytest.raises(ValueError, match="B must match A"):
        level_correlation(A, np.zeros((2, 3, 5)))
    with pytest.raises(ValueError, match="A must have 3 dimension"):
        level_correlation(A[0])


@pytest.fixture(scope="module")
def hanna_cube(hanna_dir):
    csv.field_size_limit(sys.maxsize)
    with open(hanna_dir / "hanna_metric_scores.csv", newline="", encoding="utf-8") as f:
        header, *rows = list(csv.reader(f))
    values = [[json.loads(cell) for cell in row[1:]] for row in rows if row[0] != "Human"]
    return header[1:], np.ascontiguousarray(np.array(values).transpose(1, 2, 0))


def test_hanna_story_level_valid_prompts(hanna_cube):
    # Valid prompt counts documented in docs/conventions.md, section 4 (checked against the
    # authors' published correlation files).
    names, X = hanna_cube
    documented = {"ROUGE-3": 88, "ROUGE-4": 43, "CIDEr": 66, "SummaQA": 92, "Novelty-2": 93}
    documented |= {"Novelty-3": 60, "BLANC-Tune-SS": 91, "BLANC-Help-SS": 93}
    res = level_correlation(X[:6], X, method="kendall")
    for k, name in enumerate(names):
        expected = next((n for key, n in documented.items() if name.startswith(key + " ")), 96)
        assert (res.n_groups[:, k] == expected).all(), name


@pytest.mark.parametrize("method", METHODS)
def test_hanna_against_scipy_loop(hanna_cube, method):
    # Two criteria against measures with constant prompts, denormals (CIDEr) and plain ones; the
    # scipy loop over all 78 x 78 pairs would take minutes.
    # Complexity has two exact ties between its system means (tau-b 76.41 with BaryScore-SD-10
    # in the paper's Tab. 9).
    names, X = hanna_cube
    picked = ["Relevance", "BLEU", "ROUGE-4 F-Score", "CIDEr", "BERTScore F1", "Novelty-3"]
    picked += ["BaryScore-SD-10 "]
    columns = [next(k for k, name in enumerate(names) if name.startswith(p)) for p in picked]
    A, B = X[[names.index("Relevance"), names.index("Complexity")]], X[columns]
    for level in ("item", "system"):
        res = level_correlation(A, B, level=level, method=method)
        expected, n_groups = scipy_level(A, B, level, method, "b")
        np.testing.assert_allclose(res.statistic, expected, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(res.n_groups, n_groups)
