"""Kendall's pair-key pass (a criterion on a few levels against a long vector) against Knight's
merge sort: every field of the counts, on the paths the pass takes by its data.

Oracle: :func:`~hanna_stats.kernels.kendall_counts` (Knight's O(n log n) merge sort, itself
checked against scipy.stats.kendalltau in test_kernels_grouped.py) on the positions both
vectors keep.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hanna_stats.kernels import kendall_counts
from hanna_stats.kernels.kendall import CUMULATIVE_MAX_RANKS, PAIR_KEY_MAX_RANKS, counts_of_keys
from hanna_stats.kernels.levels import _pair_keys

KINDS = ("continuous", "integers", "short ulps", "ulps", "signed zeros")


def vector(rng, kind, n):
    """``x`` of one kind: continuous (many values sharing a float32 with another at this
    size), integer scores (exact float32, long runs), runs of neighbouring float64 within a
    float32 (a few each: ordered by insertion; many: by a sort), signed zeros."""
    if kind == "continuous":
        return rng.normal(0.0, 3.0, n) + 1e-7 * rng.integers(0, 3, n)
    if kind == "integers":
        return rng.integers(0, 40, n).astype(float)
    if kind == "short ulps":
        return 1.0 + rng.integers(0, n // 2 + 1, n) * 2.0**-20 + rng.integers(0, 3, n) * 2.0**-52
    if kind == "ulps":  # runs of one float32 longer than the insertion limit
        return 1.0 + rng.integers(0, 3, n) * 2.0**-20 + rng.integers(0, 50, n) * 2.0**-52
    return rng.choice([-0.0, 0.0, 1.0, -1.0], n)


@settings(deadline=None, max_examples=80)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from(KINDS),
    st.sampled_from([2, 26, CUMULATIVE_MAX_RANKS, CUMULATIVE_MAX_RANKS + 1, PAIR_KEY_MAX_RANKS]),
    st.sampled_from([0.0, 0.05]),
)
def test_counts_of_keys_match_merge_sort(seed, kind, ranks, missing):
    # The ranks of y in a cumulative table (up to CUMULATIVE_MAX_RANKS) or a Fenwick tree;
    # missing values on both sides (x: NaN; y: rank -1) left out of the keys.
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 3000))
    x = vector(rng, kind, n)
    y = rng.integers(0, ranks, n).astype(float)
    x[rng.random(n) < missing] = np.nan
    y[rng.random(n) < missing] = np.nan
    present = ~np.isnan(y)
    levels, rank_y = np.unique(y[present], return_inverse=True)
    ranks_y = np.full(n, -1, dtype=np.int32)
    ranks_y[present] = rank_y
    keys = np.empty(n, dtype=np.uint64)
    kept, exact, has_missing = _pair_keys(x, ranks_y, keys)
    keys.sort()
    keep = present & ~np.isnan(x)
    assert kept == keep.sum() and has_missing == np.isnan(x).any()
    assert exact == bool((np.float32(x[keep]).astype(float) == x[keep]).all())
    if kept < 2:
        return
    got = counts_of_keys(x, keys[:kept], exact, np.int64(len(levels)))
    assert got == kendall_counts(x[keep], y[keep])
