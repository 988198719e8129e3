"""Bounded-memory kernels (issue 22): the memory budget, and blocks that change no bit.

The blocked paths are compared with the unblocked ones by exact equality (``tobytes``): the
level correlations taken block by block of inputs against one block, the item-level Kendall
permutation null with its tau formed in the loop against the former lookup table, with int64
coefficients against int32, and with the slow loop; the calibrated permutation test (swaps drawn
block by block) and the bootstrap (resamples and inputs in blocks) under budgets that force
many blocks against the default. Peak memory: tracemalloc's peak of one call (numpy's and
Numba's arrays) under a small budget."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from hanna_stats.kernels import _options, bootstrap_ci, kendall_counts, tau_from_counts
from hanna_stats.kernels import bootstrap as bs
from hanna_stats.kernels import calibration as tc
from hanna_stats.kernels import levels as _grouped
from hanna_stats.kernels import permutation as pm
from hanna_stats.kernels.levels import (
    SIGN_VECTOR_MAX_N,
    UndefinedCorrelationError,
    _aggregate,
    aggregate_cells,
    group_blocks,
    group_correlations,
    grouped_cubes,
    level_correlation,
)
from hanna_stats.kernels.system_pairs import multiplicities

BUDGET = _options.MEMORY_BUDGET_ENV


def same(a, b):
    """Exact equality, NaN and signed zeros included."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def cube(seed, measures, groups, systems, decimals=1, nan=0.05):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(measures, groups, systems)), decimals)
    X[rng.random(X.shape) < nan] = np.nan
    X[0, 0] = 0.5  # a constant vector: undefined there
    return X


# ----------------------------------------------------------------------- the setting


def test_memory_budget_setting(monkeypatch):
    monkeypatch.delenv(BUDGET, raising=False)
    assert _options.memory_budget() == _options.MEMORY_BUDGET == 2**30
    monkeypatch.setenv(BUDGET, "512MiB")
    assert _options.memory_budget() == 2**29
    assert _options.memory_budget("2GB") == 2 * 10**9  # an explicit value wins
    monkeypatch.setattr(_options, "MEMORY_BUDGET", 123)
    assert _options.memory_budget() == 2**29  # the environment wins over the attribute
    monkeypatch.delenv(BUDGET)
    assert _options.memory_budget() == 123
    assert _options.parse_bytes(" 1.5 kib ") == 1536
    for bad in ("lots", "-1", "0", "1 PB", True):
        with pytest.raises(ValueError, match="memory budget"):
            _options.parse_bytes(bad)


def test_group_blocks_follow_the_budget(monkeypatch):
    X = cube(0, 3, 50, 6)
    monkeypatch.setenv(BUDGET, "1")
    blocks = list(group_blocks(X, X, True, 2))
    assert [(lo, hi) for lo, hi, _, _ in blocks] == [(g, g + 1) for g in range(50)]
    # Views of the cube's groups, copied by block_correlations (a chunk at a time).
    assert all(a is b and a.base is X for _, _, a, b in blocks)
    assert all(np.array_equal(a, X[:, lo:hi], equal_nan=True) for lo, hi, a, _ in blocks)
    monkeypatch.setenv(BUDGET, "1GiB")
    ((lo, hi, a, b),) = group_blocks(X, X, True, 2)
    assert (lo, hi) == (0, 50) and a is b and a.base is X and a.shape == X.shape


# ---------------------------------------------------------- level correlations in blocks


@pytest.mark.parametrize("method", ["kendall", "pearson", "spearman"])
@pytest.mark.parametrize("weighting", ["uniform", "count"])
@pytest.mark.parametrize("nan_policy", ["omit", "propagate"])
@pytest.mark.parametrize("symmetric", [True, False])
def test_level_correlation_in_blocks_is_bit_identical(
    monkeypatch, method, weighting, nan_policy, symmetric
):
    # Random data with NaN, ties and constant vectors; one input per block (budget of 1 byte)
    # and a few inputs per block against the whole R aggregated at once.
    X = cube(1, 5, 37, 9)
    B = None if symmetric else cube(2, 3, 37, 9, decimals=0)
    kwargs = dict(method=method, nan_policy=nan_policy)
    monkeypatch.delenv(BUDGET, raising=False)
    R = group_correlations(X, B, **kwargs)
    cubes = grouped_cubes({"A": X} if B is None else {"A": X, "B": B}, "item", nan_policy)
    whole = aggregate_cells(R, cubes, nan_policy == "omit", weighting)
    for budget in ("1", "20000", None):
        if budget is None:
            monkeypatch.delenv(BUDGET, raising=False)
        else:
            monkeypatch.setenv(BUDGET, budget)
        got = level_correlation(X, B, level="item", weighting=weighting, **kwargs)
        for x, y in zip(got, whole, strict=True):
            assert same(x, y)
        assert same(group_correlations(X, B, **kwargs), R)


@pytest.mark.parametrize(
    "method, systems",
    [("pearson", 9), ("spearman", 9), ("kendall", 9), ("kendall", 300), ("kendall", 1100)],
)
@pytest.mark.parametrize("group_by", ["input", "system"])
def test_measures_of_b_in_chunks_are_bit_identical(monkeypatch, method, systems, group_by):
    # B's measures prepared a chunk at a time (one measure per chunk here), group_by="system"
    # copying each chunk of the transposed view, against B prepared whole: the Pearson dot
    # products, the Kendall pair signs, merge sorts and sorted sweeps.
    X = cube(4, 2, 6, systems)
    B = cube(5, 7, 6, systems, decimals=0)
    whole = level_correlation(X, B, method=method, group_by=group_by)
    matrix = group_correlations(X, B, method=method)
    monkeypatch.setattr(_grouped, "CHUNK_BYTES", 1)
    monkeypatch.setattr(_grouped, "SWEEP_CHUNK_BYTES", 1)
    monkeypatch.setattr(_grouped, "SWEEP_CHUNK_PER_THREAD", 1)
    monkeypatch.setattr(_grouped, "get_num_threads", lambda: 1)
    got = level_correlation(X, B, method=method, group_by=group_by)
    for x, y in zip(got, whole, strict=True):
        assert same(x, y)
    assert same(group_correlations(X, B, method=method), matrix)


def test_aggregate_blocks_sum_in_group_order():
    # The mean of the blocked aggregate is the plain loop's over the groups in order.
    rng = np.random.default_rng(3)
    R = rng.normal(size=(200, 2, 3)) * 1e3
    R[rng.random(R.shape) < 0.2] = np.nan
    mean, n_groups, n_skipped = _aggregate(R, True)
    for i in range(2):
        for j in range(3):
            total = 0.0
            for g in range(200):
                if not np.isnan(R[g, i, j]):
                    total += R[g, i, j]
            assert mean[i, j] == total / n_groups[i, j]
            assert n_groups[i, j] + n_skipped[i, j] == 200


def test_raise_names_the_first_undefined_group_whatever_the_blocks(monkeypatch):
    X = cube(4, 4, 30, 5, nan=0.0)
    X[2, 25, 1] = np.nan  # undefined cells (., 2, 25) and (2, ., 25)
    X[1, 17, :] = 1.0  # constant: (., 1, 17) and (1, ., 17); X[0, 0] constant: (0, ., 0)
    errors = []
    for budget in ("1", "1GiB"):
        monkeypatch.setenv(BUDGET, budget)
        with pytest.raises(UndefinedCorrelationError) as error:
            level_correlation(X, nan_policy="raise")
        errors.append((str(error.value), error.value.i, error.value.j, error.value.group))
        Y = X.copy()
        Y[0, 0] = np.arange(5.0)  # now the first is (0, 1) in group 17
        with pytest.raises(UndefinedCorrelationError) as error:
            level_correlation(Y, nan_policy="raise")
        assert (error.value.i, error.value.j, error.value.group) == (0, 1, 17)
    assert errors[0] == errors[1]
    assert errors[0][1:] == (0, 0, 0)


@pytest.mark.parametrize("systems", [2, 11, 12, 17, 64, 130])
def test_kendall_sign_bits_give_exact_counts(systems):
    # Pair signs packed two bits a pair, across word boundaries (66, 136, 2016, 8385 pairs):
    # tau equals that of kendall_counts to the last bit, for every variant.
    assert systems <= SIGN_VECTOR_MAX_N
    X = cube(5, 3, 4, systems, decimals=0, nan=0.0)
    X[0, 0] = np.arange(systems, dtype=float)
    X[1, 1, : systems // 2] = 0.0  # a long tie
    X[2, 2] = np.inf  # infinite values: equal, tied
    X[2, 2, 0] = -np.inf
    for variant in ("a", "b", "c"):
        R = group_correlations(X, method="kendall", variant=variant)
        for g in range(4):
            for i in range(3):
                for j in range(3):
                    x, y = X[min(i, j), g], X[max(i, j), g]  # the symmetric R is mirrored
                    if (x == x[0]).all() or (y == y[0]).all():
                        assert np.isnan(R[g, i, j])
                        continue
                    want = tau_from_counts(kendall_counts(x, y), variant=variant)
                    assert R[g, i, j] == want, (variant, g, i, j)


# ------------------------------------------------------ item-level Kendall permutations


def _table_tau(n0, n2, ties, s, tau_b):
    # The former lookup table's entry, formed as it was: numpy float64 operations.
    s = np.array([s], dtype=np.float64)
    value = s / math.sqrt(n0 - ties) / math.sqrt(n0 - n2) if tau_b else s / n0
    return float(np.clip(value, -1.0, 1.0)[0])


@pytest.mark.parametrize("systems", [3, 5, 9, 40])
def test_packed_tau_equals_the_former_table(systems):
    # Every (n0, n2, ties, C - D) of 3 and 5 systems, 20,000 drawn ones of 9 and 40.
    n_pairs = systems * (systems - 1) // 2
    shift, _ = pm._packing(systems)
    root = np.array([math.sqrt(v) for v in range(n_pairs + 1)])
    if systems <= 5:
        cases = [
            (n0, n2, ties, s)
            for n0 in range(1, n_pairs + 1)
            for n2 in range(n0)
            for ties in range(n_pairs + 1)
            for s in range(-n_pairs, n_pairs + 1)
        ]
    else:
        rng = np.random.default_rng(systems)
        n0 = rng.integers(1, n_pairs + 1, 20000)
        cases = zip(
            n0,
            rng.integers(0, n0),
            rng.integers(0, n_pairs + 1, 20000),
            rng.integers(-n_pairs, n_pairs + 1, 20000),
            strict=True,
        )
    for n0, n2, ties, s in cases:
        n0, n2, ties, s = int(n0), int(n2), int(ties), int(s)
        for tau_b in (True, False):
            got = pm._packed_tau(
                s + (ties << shift), n_pairs, shift, n0, math.sqrt(n0 - n2), root, tau_b
            )
            if ties >= n0:
                assert np.isnan(got)
            else:
                want = _table_tau(n0, n2, ties, s, tau_b)
                assert got == want and math.copysign(1, got) == math.copysign(1, want)


def _null(X, C, pairs, swaps, variant_code):
    Z = np.where(np.isnan(X), 0.0, pm.standardize(X))
    prepared = pm._kendall_item_prepare(Z, C, pairs, variant_code)
    return pm._kendall_item_null(prepared, swaps, np.arange(len(pairs))), Z


@pytest.mark.parametrize("variant_code", [0, 1])
def test_kendall_item_null_int64_and_slow_path_agree(monkeypatch, variant_code):
    rng = np.random.default_rng(6)
    G, S = 9, 7
    X = np.round(rng.normal(size=(4, G, S)), 0)
    C = np.round(rng.normal(size=(G, S)))
    C[2, 3] = np.nan
    C[4] = 2.0  # constant criterion: input left out
    pairs = np.array([(0, 1), (2, 3), (1, 3)])
    swaps = pm.permutation_swaps(G, S, permutations=40, seed=2)
    fast32, Z = _null(X, C, pairs, swaps, variant_code)
    assert pm._kendall_item_prepare(Z, C, pairs, variant_code).coef.dtype == np.int32
    slow = pm._item_null(Z, C, swaps, pairs, 2, variant_code)
    assert same(fast32, slow)
    shift, _ = pm._packing(S)
    monkeypatch.setattr(pm, "_packing", lambda systems: (shift, np.int64))
    fast64, _ = _null(X, C, pairs, swaps, variant_code)
    assert pm._kendall_item_prepare(Z, C, pairs, variant_code).coef.dtype == np.int64
    assert same(fast64, slow)


def test_kendall_item_null_beyond_the_int32_bound():
    # 130 systems: int64 coefficients (2**15 * 8385 * 9 > 2**31), the same values as the slow
    # loop.
    rng = np.random.default_rng(7)
    G, S = 2, 130
    assert pm._packing(S)[1] == np.int64 and pm._packing(128)[1] == np.int32
    X = np.round(rng.normal(size=(2, G, S)), 1)
    C = np.round(rng.normal(size=(G, S)))
    pairs = np.array([(0, 1)])
    swaps = pm.permutation_swaps(G, S, permutations=6, seed=3)
    fast, Z = _null(X, C, pairs, swaps, 1)
    assert same(fast, pm._item_null(Z, C, swaps, pairs, 2, 1))


def test_pair_blocks_follow_the_memory_budget(monkeypatch):
    shape = (12, 30, 8)  # 66 pairs, 4 * 30 * (1 + 8 + 28) = 4,440 bytes a pair
    pair_bytes = pm._pair_bytes(shape)
    assert pair_bytes == 4 * 30 * 37
    monkeypatch.setenv(BUDGET, str(4 * 5 * pair_bytes))  # a quarter: 5 pairs a block
    blocks = pm._pair_blocks(shape, 66, "item", "kendall", "b")
    assert [b.size for b in blocks] == [5] * 13 + [1]
    assert np.array_equal(np.concatenate(blocks), np.arange(66))
    monkeypatch.setenv(BUDGET, str(2 * pair_bytes - 1))  # not one pair: the slow path
    assert not pm._fast_path(shape, "item", "kendall", "b")
    assert len(pm._pair_blocks(shape, 66, "item", "kendall", "b")) == 1


def test_permutation_test_the_same_under_any_budget(monkeypatch):
    # Fast path in blocks of one pair, in one block, and the slow path (budget below one pair).
    rng = np.random.default_rng(8)
    c = np.round(rng.normal(size=(12, 6)))
    X = np.round(c + rng.normal(size=(4, 12, 6)), 1)
    X[3, 2, 1] = np.nan  # a pair job of its own
    results = []
    for budget in ("1GiB", str(4 * pm._pair_bytes(X.shape)), "64"):
        monkeypatch.setenv(BUDGET, budget)
        results.append(pm.permutation_test_pairs(X, c, level="item", permutations=60, seed=4))
    assert not pm._fast_path(X.shape, "item", "kendall", "b")  # at 64 bytes
    for other in results[1:]:
        for x, y in zip(results[0], other, strict=True):
            assert same(x, y)


# ---------------------------------------------------------------------- tie calibration


@pytest.mark.parametrize("n", [0, 1, 7, 5000])
def test_stable_order_is_numpys_stable_argsort(n):
    # Differences as tie calibration forms them (>= 0 or NaN): ties, zeros, infinities,
    # subnormals, NaN of several payloads; the permutation of the stable (merge) sort.
    from hanna_stats.kernels.calibration import _metric_pairs, _stable_order

    rng = np.random.default_rng(n)
    x = np.abs(np.round(rng.normal(size=n), 2))
    special = [np.nan, np.inf, 0.0, 5e-324, 1e308, -np.nan, np.float64(np.nan) * 0]
    where = rng.integers(0, max(n, 1), min(n, 40))
    x[where] = rng.choice(special, where.size)
    assert np.array_equal(_stable_order(x), np.argsort(x, kind="stable"))
    M = np.round(rng.normal(size=(max(n // 10, 1), 6)), 1)
    M[0, 2] = np.nan
    diff, order, ascending = _metric_pairs(M)
    assert np.array_equal(order, np.argsort(diff, kind="stable"))
    assert same(ascending, diff[order])


# ------------------------------------------------------- the calibrated permutation test


@pytest.mark.parametrize("groups, pairs", [(7, 3), (5, 2), (4, 5), (1, 1)])
def test_swap_blocks_are_one_draw(groups, pairs):
    # numpy draws the uint8 coins four to a 32-bit word and starts each call on a fresh word:
    # blocks of a multiple of _word_rows permutations (4, 2, 1, 4 here) are the coins of one
    # draw, and leave a Generator where one draw leaves it.
    unit = tc._word_rows(groups * pairs)
    assert unit == 4 // math.gcd(groups * pairs, 4)
    whole_rng = np.random.default_rng(3)
    whole = tc.calibrated_swaps(groups, pairs, permutations=37, seed=whole_rng)
    for rows in (unit, 3 * unit, 36, 37):
        rng = np.random.default_rng(3)
        blocks = list(tc._swap_blocks((37, groups, pairs), rng, rows))
        assert [hi - lo for lo, hi, _ in blocks][:-1] == [rows] * (len(blocks) - 1)
        assert same(np.concatenate([block for _, _, block in blocks]), whole)
        assert rng.bit_generator.state == whole_rng.bit_generator.state


def test_calibrated_blocks_follow_the_memory_budget(monkeypatch):
    cells = 9 * 15  # item level, 9 inputs x 6 systems: odd, blocks of 4 permutations
    monkeypatch.setenv(BUDGET, "1")
    assert tc._pair_blocks(cells) == (1, 4)
    monkeypatch.setenv(BUDGET, str(4 * 30000))  # a quarter: 9 pairs, 20 permutations
    assert tc._pair_blocks(cells) == (30000 // (24 * cells), 20)
    monkeypatch.delenv(BUDGET)
    assert tc._pair_blocks(cells) == (tc.PAIR_BLOCK, 2**28 // (9 * cells + 24 * 256) // 4 * 4)


@pytest.mark.parametrize("level", ["item", "system", "global"])
def test_calibrated_permutation_test_the_same_under_any_budget(monkeypatch, level):
    # Blocks of one metric pair and 4 permutations (a budget of 1 byte), of a few pairs and
    # permutations, and the whole; 2 human measures, missing values, an odd number of cells;
    # the swaps drawn from a seed, from a Generator (left as one draw leaves it), given, and
    # with progress over the blocks.
    X = cube(10, 5, 9, 6)
    H = cube(11, 2, 9, 6, decimals=0, nan=0.02)
    swaps = np.random.default_rng(12).integers(0, 2, (30, *_level_pairs(level)), dtype=np.uint8)
    results, states, steps = [], [], []
    for budget in ("1", str(4 * 30000), None):
        if budget is None:
            monkeypatch.delenv(BUDGET, raising=False)
        else:
            monkeypatch.setenv(BUDGET, budget)
        rng = np.random.default_rng(13)
        seen = []

        def progress(iterable, desc, total, seen=seen):
            seen.append(total)
            return iterable

        kwargs = dict(level=level, permutations=101)
        results.append(
            (
                tc.calibrated_permutation_test(H, X, seed=4, **kwargs),
                tc.calibrated_permutation_test(H, X, seed=rng, statistic="tau_eq", **kwargs),
                tc.calibrated_permutation_test(H, X, swaps=swaps, progress=progress, level=level),
                tc.calibrated_permutation_test(H, X, nan_policy="propagate", **kwargs),
            )
        )
        states.append(rng.bit_generator.state)
        steps.append(seen)
    assert steps[0][0] >= steps[1][0] > steps[2][0] == 2  # blocks of pairs x permutations
    assert states[0] == states[1] == states[2]
    for other in results[1:]:
        for got, want in zip(other, results[0], strict=True):
            for x, y in zip(got, want, strict=True):
                assert same(x, y)


def _level_pairs(level):
    """(groups, pairs) of 9 inputs x 6 systems at ``level``."""
    return {"item": (9, 15), "system": (1, 15), "global": (1, 54 * 53 // 2)}[level]


def test_calibrated_permutation_test_peak_within_the_budget(monkeypatch):
    # 2,000 inputs x 10 systems, 2 metrics, 400 permutations: 36 million swaps, whose float64
    # signs alone took 288 MB. Under an 8 MiB budget, the call's arrays (numpy's and Numba's,
    # both traced by tracemalloc) peak below it; its tie calibration takes most of that.
    rng = np.random.default_rng(14)
    G, S, K = 2000, 10, 400
    H = np.round(rng.normal(size=(1, G, S)) * 2)
    X = np.round(H + rng.normal(size=(2, G, S)), 1)
    budget = 8 * 2**20
    assert K * G * 45 * 8 > 30 * budget
    monkeypatch.setenv(BUDGET, str(budget))
    tc.calibrated_permutation_test(H[:, :3], X[:, :3], permutations=4)  # compiled
    tracemalloc.start()
    try:
        res = tc.calibrated_permutation_test(H, X, permutations=K, seed=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert budget / 4 < peak < budget
    assert 0 <= res.pvalue[0, 0, 1] <= 1 and 0 <= res.pvalue[0, 1, 0] <= 1


# ------------------------------------------------------------------------ the bootstrap


def test_resample_blocks_follow_the_memory_budget(monkeypatch):
    A, B = cube(15, 4, 40, 7), cube(16, 2, 40, 7)
    per_row = 8 * (4 * 40 + 3 * 6 * 7 + 3 * 8)
    monkeypatch.setenv(BUDGET, str(4 * 5 * per_row))  # a quarter: 5 resamples a block
    assert bs._resample_rows(A, B, None) == 5
    monkeypatch.setenv(BUDGET, "1")
    assert bs._resample_rows(A, B, np.zeros((3, 5), np.int64)) == 1
    weights = bs._Weights(40)  # the jackknife's rows, made on demand
    assert same(weights[3:7], (~np.eye(40, dtype=bool)).astype(float)[3:7])
    draws = np.random.default_rng(0).integers(0, 40, (9, 40))
    assert same(bs._Weights(40, draws)[2:5], multiplicities(draws[2:5], 40))
    assert len(weights) == 40 and len(bs._Weights(40, draws)) == 9


@pytest.mark.parametrize(
    "level, resample, symmetric",
    [
        ("item", "inputs", False),
        ("item", "inputs", True),
        ("item", "both", False),
        ("item", "systems", True),
        ("system", "inputs", False),
        ("system", "both", True),
    ],
)
def test_bootstrap_the_same_under_any_budget(monkeypatch, level, resample, symmetric):
    # Blocks of one resample and one input's correlations (a budget of 1 byte), of a few, and
    # the whole: the same samples, intervals and BCa jackknife, from a seed and from a
    # Generator (left as the whole draw leaves it), with progress over blocks of resamples.
    A = cube(17, 4, 40, 7)
    B = None if symmetric else cube(18, 2, 40, 7, decimals=0)
    results, states = [], []
    for budget in ("1", "40000", None):
        if budget is None:
            monkeypatch.delenv(BUDGET, raising=False)
        else:
            monkeypatch.setenv(BUDGET, budget)
        rng = np.random.default_rng(19)
        kwargs = dict(level=level, resample=resample, resamples=57)
        results.append(
            (
                bootstrap_ci(A, B, ci_method="bca", seed=rng, **kwargs),
                bootstrap_ci(A, B, method="pearson", seed=3, progress=lambda x, **_: x, **kwargs),
            )
        )
        states.append(rng.bit_generator.state)
    assert states[0] == states[1] == states[2]
    for other in results[1:]:
        for got, want in zip(other, results[0], strict=True):
            for x, y in zip(got, want, strict=True):
                assert same(x, y)


def test_bootstrap_peak_within_the_budget(monkeypatch):
    # All pairs of 30 measures on 6,000 inputs x 8 systems, 40 input resamples: the per-input
    # correlations take 43 MB at once, above a 32 MiB budget; in blocks of inputs, and the
    # multiplicities in blocks of resamples, the call's arrays (traced by tracemalloc) peak below.
    rng = np.random.default_rng(20)
    G, M = 6000, 30
    A = np.round(rng.normal(size=(M, G, 8)), 1)
    budget = 32 * 2**20
    assert G * M * M * 8 > budget
    monkeypatch.setenv(BUDGET, str(budget))
    bootstrap_ci(A[:, :3], resamples=3)  # compiled
    tracemalloc.start()
    try:
        res = bootstrap_ci(A, resamples=40, seed=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert budget / 4 < peak < budget
    assert (res.n_valid == 40).all()
