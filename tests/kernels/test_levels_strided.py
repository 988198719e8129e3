"""Pearson and Spearman grouped by system (B a transposed view): the fused tiles of
``levels._fill_strided`` give bit for bit what the C-contiguous path gives on a copy."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from hanna_stats.kernels import level_correlation


def _cubes(systems, seed):
    """H (2, 40, systems) and M (5, 40, systems) with NaN, an infinite value, a constant
    column and integer ties, in the layout of a (measures, inputs, systems) store."""
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(2, 40, systems))
    H[1] = np.rint(3 * H[1])  # ties
    M = 1e3 + rng.normal(size=(5, 40, systems))  # an offset: centring matters
    M[1, 3, 0] = np.nan
    H[0, 7, min(2, systems - 1)] = np.nan
    M[2, :, -1] = 4.0  # constant in one system
    M[3, 5, 1 % systems] = np.inf
    M[4] = np.rint(M[4] * 2)
    return H, M


@pytest.mark.parametrize("systems", [1, 3, 8, 11, 20])
@pytest.mark.parametrize("method", ["pearson", "spearman"])
@pytest.mark.parametrize("nan_policy", ["omit", "propagate"])
def test_by_system_matches_contiguous_path(systems, method, nan_policy):
    H, M = _cubes(systems, systems)
    res = level_correlation(H, M, method=method, group_by="system", nan_policy=nan_policy)
    copy = level_correlation(
        np.ascontiguousarray(H.transpose(0, 2, 1)),
        np.ascontiguousarray(M.transpose(0, 2, 1)),
        method=method,
        nan_policy=nan_policy,
    )
    for got, want in zip(res, copy, strict=True):
        np.testing.assert_array_equal(got, want)


def test_by_system_does_not_depend_on_thread_count():
    rng = np.random.default_rng(1)
    H = rng.normal(size=(1, 2000, 20))  # enough work for the threads (threads_for)
    M = H + rng.normal(size=(10, 2000, 20))
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = level_correlation(H, M, method="pearson", group_by="system").statistic
    finally:
        numba.set_num_threads(previous)
    many = level_correlation(H, M, method="pearson", group_by="system").statistic
    np.testing.assert_array_equal(one, many)
