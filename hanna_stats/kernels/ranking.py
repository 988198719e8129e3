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

from .ranks import TIE_RULES, tie_ranks

__all__ = ["TIE_RULES", "borda_count", "tie_ranks"]


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
