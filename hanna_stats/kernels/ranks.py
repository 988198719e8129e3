"""Sorting with inversion count, sort order and average ranks."""

from __future__ import annotations

import numpy as np
from numba import njit

#: merge_sort first sorts runs of this many elements by insertion, in place.
INSERTION_RUN = 16


@njit(cache=True)
def merge_sort(keys, payload):
    """Sort ``keys`` ascending in place (stable), permuting ``payload`` alike.

    Runs of ``INSERTION_RUN`` elements are sorted by insertion, then merged bottom-up with a
    branch-free merge step: O(n log n) time, and two scratch arrays of ``n`` elements unless
    ``n <= INSERTION_RUN``. Returns the number of inversions, the pairs ``i < j`` with
    ``keys[i] > keys[j]`` (strictly: equal keys are not inversions), counted as in Knight (1966).

    Parameters
    ----------
    keys : ndarray, shape (n,)
        Values without NaN.
    payload : ndarray, shape (n,)

    Returns
    -------
    int
    """
    n = keys.size
    inversions = 0
    for lo in range(0, n, INSERTION_RUN):
        for k in range(lo + 1, min(lo + INSERTION_RUN, n)):
            key = keys[k]
            value = payload[k]
            m = k
            while m > lo and keys[m - 1] > key:  # each shift passes one larger key
                keys[m] = keys[m - 1]
                payload[m] = payload[m - 1]
                m -= 1
            keys[m] = key
            payload[m] = value
            inversions += k - m
    if n <= INSERTION_RUN:
        return inversions
    src_k, src_p = keys, payload
    dst_k, dst_p = np.empty_like(keys), np.empty_like(payload)
    width = INSERTION_RUN
    while width < n:
        for lo in range(0, n, 2 * width):
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            k = lo
            while i < mid and j < hi:
                right = np.int64(src_k[j] < src_k[i])
                take = i + right * (j - i)
                dst_k[k] = src_k[take]
                dst_p[k] = src_p[take]
                inversions += right * (mid - i)  # src_k[j] is below every left value not yet taken
                j += right
                i += 1 - right
                k += 1
            for t in range(mid - i):  # one side is used up: copy the rest of the other
                dst_k[k + t] = src_k[i + t]
                dst_p[k + t] = src_p[i + t]
            for t in range(hi - j):
                dst_k[k + t] = src_k[j + t]
                dst_p[k + t] = src_p[j + t]
        src_k, dst_k = dst_k, src_k
        src_p, dst_p = dst_p, src_p
        width *= 2
    if src_k is not keys:
        for k in range(n):
            keys[k] = src_k[k]
            payload[k] = src_p[k]
    return inversions


@njit(cache=True)
def sort_order(x):
    """Sorted copy of ``x`` and the stable permutation that sorts it (``x[order] == sorted``)."""
    values = x.copy()
    order = np.arange(x.size)
    merge_sort(values, order)
    return values, order


@njit(cache=True)
def rankdata(x):
    """Average ranks of a 1-D float64 array, as ``scipy.stats.rankdata(x, method="average")``.

    The values are sorted once (:func:`merge_sort`, O(n log n)); a run of ``t`` equal values
    occupying sorted positions ``k+1 .. k+t`` gets the rank ``k + (t + 1) / 2`` for every member,
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
    ranks = tie_ranks(x, 0)
    ranks += 1.0
    return ranks


#: Tie rules of :func:`tie_ranks`: a run of equal values occupying 0-based sorted positions
#: ``k .. k + t - 1`` gets their mean (``average``), ``k`` (``min``) or ``k + t - 1`` (``max``).
TIE_RULES = ("average", "min", "max")


@njit(cache=True)
def tie_ranks(x, rule):
    """0-based ascending ranks of a 1-D float64 array with tie rule ``TIE_RULES[rule]``.

    Parameters
    ----------
    x : ndarray of float64, shape (n,)
        Values without NaN.
    rule : int
        Index into :data:`TIE_RULES` (0: average, 1: min, 2: max).

    Returns
    -------
    ndarray of float64, shape (n,)
    """
    values, order = sort_order(x)
    n = x.size
    ranks = np.empty(n)
    start = 0
    while start < n:
        stop = start + 1
        while stop < n and values[stop] == values[start]:
            stop += 1
        if rule == 0:
            rank = 0.5 * (start + stop - 1)
        elif rule == 1:
            rank = float(start)
        else:
            rank = float(stop - 1)
        for k in range(start, stop):
            ranks[order[k]] = rank
        start = stop
    return ranks
