"""Significance clusters of a leaderboard (the WMT metrics tasks' ranks)."""

from __future__ import annotations

import numbers

import numpy as np

from ._options import as_float_array


def significance_clusters(statistic, pvalues, *, alpha=0.05):
    """Ranks of significance clusters, as the WMT metrics shared tasks assign them.

    The measures are sorted by decreasing ``statistic`` (stable: ties keep their order). Going
    down the sorted list, measure ``k`` starts a new cluster (rank + 1) when any measure of the
    current cluster, from its first member to ``k - 1``, is significantly better than ``k``:
    ``pvalues[a, k] <= alpha``; otherwise it joins the current cluster. So a measure's rank is
    1 + the number of cluster boundaries above it: no member of a cluster is significantly
    worse than another member, and each cluster's first member is significantly worse than
    some member of the cluster above. mt-metrics-eval's ``data.AssignRanks`` (Freitag et al.,
    "Results of the WMT22 Metrics Shared Task", 2022), with ``<= alpha`` as there.

    Parameters
    ----------
    statistic : array_like, shape (M,)
        Each measure's statistic (higher is better); NaN sorts last.
    pvalues : array_like, shape (M, M)
        ``pvalues[a, b]``: p-value of H1 "``a`` is better than ``b``" (e.g. a one-sided
        permutation test); only pairs with ``a`` above ``b`` in the sorted order are read.
    alpha : float
        Significance level.

    Returns
    -------
    ndarray of int64, shape (M,)
        Each measure's rank (1 = top cluster), in the input order.

    Examples
    --------
    MTME's data_test.py (``AssignRanks``), measures already sorted:

    >>> P = np.array([[0, 1, 0, 1], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]])
    >>> significance_clusters([4, 3, 2, 1], P, alpha=0.5).tolist()
    [1, 1, 2, 2]
    """
    statistic = as_float_array("statistic", statistic, 1)
    pvalues = as_float_array("pvalues", pvalues, 2)
    n = statistic.size
    if pvalues.shape != (n, n):
        raise ValueError(f"pvalues must have shape ({n}, {n}); got {pvalues.shape}")
    if not isinstance(alpha, numbers.Real) or isinstance(alpha, bool) or not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be a number in [0, 1]; got {alpha!r}")
    order = np.argsort(np.where(np.isnan(statistic), np.inf, -statistic), kind="stable")
    ranks = np.empty(n, dtype=np.int64)
    rank, start = 1, 0
    for k in range(n):
        if (pvalues[order[start:k], order[k]] <= alpha).any():
            rank += 1
            start = k
        ranks[order[k]] = rank
    return ranks
