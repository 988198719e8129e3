"""Rank aggregation: the Borda count with a stated tie rule.

Borda count (de Borda 1781; used by Colombo et al. 2022, "What are the best systems? New
perspectives on NLP benchmarking", as an approximation of the Kemeny consensus): each column of a
score table ranks the items; an item's Borda count is the sum of its 0-based ascending ranks
(the lowest score gets 0, the highest ``n - 1``), so with ``c`` columns it lies in
``[0, c (n - 1)]``.
"""

from __future__ import annotations

import numpy as np

from ._options import as_float_array, check_option
from .ranks import tie_ranks

__all__ = ["borda_count", "tie_ranks"]


def _column_ranks(scores, rule):
    """0-based ranks (n, c) of each column of ``scores`` (no NaN) with ``WORDS["ties"][rule]``."""
    n, c = scores.shape
    order = np.argsort(scores, axis=0, kind="stable")
    ordered = np.take_along_axis(scores, order, axis=0)
    position = np.arange(n)[:, None]
    new_run = np.ones((n, c), dtype=bool)
    new_run[1:] = ordered[1:] != ordered[:-1]
    # First and last sorted position of the run each sorted position belongs to.
    first = np.maximum.accumulate(np.where(new_run, position, 0), axis=0)
    end_run = np.ones((n, c), dtype=bool)
    end_run[:-1] = new_run[1:]
    last = np.minimum.accumulate(np.where(end_run, position, n - 1)[::-1], axis=0)[::-1]
    if rule == 0:
        rank = 0.5 * (first + last)
    else:
        rank = (first if rule == 1 else last).astype(np.float64)
    ranks = np.empty((n, c))
    np.put_along_axis(ranks, order, rank, axis=0)
    return ranks


def borda_count(scores, *, ties="average"):
    """Borda count of each row of ``scores`` (items x columns); higher scores rank higher.

    .. math:: \\mathrm{borda}_i = \\sum_c \\mathrm{rank}_c(s_{ic}),

    with 0-based ascending ranks within each column (:func:`tie_ranks`): a run of ``t`` tied
    scores occupying sorted positions ``k .. k + t - 1`` gets ``k + (t - 1) / 2``
    (``"average"``), ``k`` (``"min"``) or ``k + t - 1`` (``"max"``). The columns are summed in
    order.

    Parameters
    ----------
    scores : array_like of float, shape (n_items, n_columns)
        No NaN.
    ties : {"average", "min", "max"}

    Returns
    -------
    ndarray of float64, shape (n_items,)

    Raises
    ------
    ValueError
        If ``scores`` is not 2-D or holds NaN, or ``ties`` is unknown.

    References
    ----------
    de Borda, J.-C. (1781). Mémoire sur les élections au scrutin. Histoire de l'Académie
    Royale des Sciences. Colombo, P. et al. (2022). What are the best systems? New perspectives
    on NLP benchmarking. NeurIPS.

    Examples
    --------
    >>> borda_count([[0.9, 3.0], [0.5, 3.0], [0.1, 1.0]])
    array([3.5, 2.5, 0. ])
    >>> borda_count([[0.9, 3.0], [0.5, 3.0], [0.1, 1.0]], ties="min")
    array([3., 2., 0.])
    """
    rule = check_option("ties", ties)
    scores = as_float_array("scores", scores, 2)
    if np.isnan(scores).any():
        raise ValueError("scores must not contain NaN")
    total = np.zeros(scores.shape[0])
    for column in _column_ranks(scores, rule).T:
        total += column
    return total
