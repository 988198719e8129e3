"""Rank aggregation: ranks with a stated tie rule and the Borda count.

Borda count (de Borda 1781; used by Colombo et al. 2022, "What are the best systems? New
perspectives on NLP benchmarking", as an approximation of the Kemeny consensus): each column of a
score table ranks the items; an item's Borda count is the sum of its 0-based ascending ranks
(the lowest score gets 0, the highest ``n - 1``), so with ``c`` columns it lies in
``[0, c (n - 1)]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .ranks import sort_order

#: Tie rules: a run of equal values occupying 0-based sorted positions ``k .. k + t - 1`` gets
#: their mean (``average``), ``k`` (``min``) or ``k + t - 1`` (``max``) for every member.
TIE_RULES = ("average", "min", "max")


@njit(cache=True)
def tie_ranks(x, rule):
    """0-based ascending ranks of a 1-D float64 array with tie rule ``TIE_RULES[rule]``.

    Parameters
    ----------
    x : ndarray of float64, shape (n,)
        Values without NaN.
    rule : int
        Index into :data:`TIE_RULES`.

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


@njit(cache=True)
def borda_count(scores, rule):
    """Borda count of each row of ``scores`` (items x columns), higher scores rank higher.

    ``borda[i] = sum_c rank_c(scores[i, c])`` with 0-based ascending ranks under tie rule
    ``TIE_RULES[rule]``.

    Parameters
    ----------
    scores : ndarray of float64, shape (n_items, n_columns)
        No NaN.
    rule : int
        Index into :data:`TIE_RULES`.

    Returns
    -------
    ndarray of float64, shape (n_items,)
    """
    n, c = scores.shape
    total = np.zeros(n)
    for j in range(c):
        total += tie_ranks(np.ascontiguousarray(scores[:, j]), rule)
    return total
