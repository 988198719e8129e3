"""Average ranks of a vector (ties get the mean of the ranks they span)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def rankdata(x):
    """Average ranks of a 1-D float64 array, as ``scipy.stats.rankdata(x, method="average")``.

    The values are sorted once (stable merge sort, O(n log n)); a run of ``t`` equal values that
    occupies sorted positions ``k+1 .. k+t`` gets the rank ``k + (t + 1) / 2`` for every member,
    so the ranks always sum to ``n (n + 1) / 2`` (Kendall 1945, "The treatment of ties in ranking
    problems", Biometrika 33(3)).

    Parameters
    ----------
    x : ndarray of float64, shape (n,)
        Values to rank. Must not contain NaN (callers drop or propagate NaN first).

    Returns
    -------
    ndarray of float64, shape (n,)
        Rank of each value, 1-based.

    Examples
    --------
    >>> import numpy as np
    >>> rankdata(np.array([10.0, 30.0, 20.0, 20.0]))
    array([1. , 4. , 2.5, 2.5])
    """
    n = x.size
    order = np.argsort(x, kind="mergesort")
    ranks = np.empty(n)
    start = 0
    while start < n:
        stop = start + 1
        while stop < n and x[order[stop]] == x[order[start]]:
            stop += 1
        rank = 0.5 * (start + stop + 1)  # mean of start+1 .. stop
        for k in range(start, stop):
            ranks[order[k]] = rank
        start = stop
    return ranks
