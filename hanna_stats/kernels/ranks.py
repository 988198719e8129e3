"""Sorting with inversion count, sort order, and ranks with a tie rule."""

from __future__ import annotations

import numpy as np
from numba import njit

from ._options import as_float_array, check_option

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
    """Sorted copy of ``x`` and the stable permutation that sorts it (``x[order] == sorted``).

    The permutation is float64 (positions, exact below 2**53): :func:`merge_sort` is then
    compiled for one payload type, the one Kendall's counting uses, not twice."""
    values = x.copy()
    order = np.arange(x.size, dtype=np.float64)
    merge_sort(values, order)
    return values, order


@njit(cache=True)
def _tie_ranks(x, rule):
    """0-based ranks of ``x`` (1-D float64, no NaN) with tie rule ``WORDS["ties"][rule]``."""
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
            ranks[np.int64(order[k])] = rank
        start = stop
    return ranks


@njit(cache=True)
def average_ranks(x):
    """1-based average ranks of ``x`` (1-D float64, no NaN); see :func:`rankdata`."""
    ranks = _tie_ranks(x, 0)
    ranks += 1.0
    return ranks


def _ranking_input(x):
    x = as_float_array("x", x, 1)
    if np.isnan(x).any():
        raise ValueError("x must not contain NaN (drop or propagate missing values first)")
    return x


def tie_ranks(x, *, ties="average"):
    """0-based ascending ranks of a 1-D array with a stated tie rule.

    The values are sorted once (a stable merge sort, O(n log n)); a run of ``t`` equal values
    occupying 0-based sorted positions ``k .. k + t - 1`` gets the rank ``k + (t - 1) / 2``
    (``"average"``), ``k`` (``"min"``) or ``k + t - 1`` (``"max"``) for every member: the ranks
    of ``scipy.stats.rankdata(x, method=ties)`` minus one.

    Parameters
    ----------
    x : array_like of float, shape (n,)
        Values without NaN.
    ties : {"average", "min", "max"}

    Returns
    -------
    ndarray of float64, shape (n,)

    Raises
    ------
    ValueError
        If ``x`` is not one-dimensional or holds NaN, or ``ties`` is unknown.

    Examples
    --------
    >>> tie_ranks([0.3, 0.1, 0.3, 0.2], ties="min")
    array([2., 0., 2., 1.])
    >>> tie_ranks([0.3, 0.1, 0.3, 0.2])
    array([2.5, 0. , 2.5, 1. ])
    """
    rule = check_option("ties", ties)
    return _tie_ranks(_ranking_input(x), rule)


def rankdata(x):
    """Average ranks of a 1-D array, as ``scipy.stats.rankdata(x, method="average")``.

    A run of ``t`` equal values occupying sorted positions ``k+1 .. k+t`` gets the rank
    ``k + (t + 1) / 2`` for every member, so the ranks always sum to ``n (n + 1) / 2``
    (Kendall 1945, "The treatment of ties in ranking problems", Biometrika 33(3)); see
    :func:`tie_ranks`.

    Parameters
    ----------
    x : array_like of float, shape (n,)
        Values to rank, without NaN.

    Returns
    -------
    ndarray of float64, shape (n,)
        Rank of each value, 1-based.

    Raises
    ------
    ValueError
        If ``x`` is not one-dimensional or holds NaN.

    Examples
    --------
    >>> rankdata([10.0, 30.0, 20.0, 20.0])
    array([1. , 4. , 2.5, 2.5])
    """
    return average_ranks(_ranking_input(x))
