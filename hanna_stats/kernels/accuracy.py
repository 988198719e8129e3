"""Pairwise accuracy with ties, ``acc_eq`` (Deutsch, Foster and Freitag 2023), from Kendall's
sufficient statistics, at the item, system or global level."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .kendall import pair_counts
from .levels import (
    LevelCorrelationResult,
    UndefinedCorrelationError,
    aggregate_cells,
    grouped_cubes,
)


@njit(cache=True)
def _accuracy_from_counts(counts):
    """``acc_eq = (C + T_xy) / (C + D + T_x + T_y + T_xy)`` from :class:`KendallCounts`.

    The share of pairs on which the two vectors agree: both order the pair the same way
    (concordant, C) or both tie it (T_xy); D are discordant pairs, T_x/T_y pairs tied in one
    vector only. NaN for fewer than 2 observations. Deutsch, Foster and Freitag (2023), "Ties
    Matter: Meta-Evaluating Modern Metrics with Pairwise Accuracy and Tie Calibration", EMNLP,
    Sec. 5 (mt-metrics-eval's ``acc23``), without tie calibration (epsilon = 0).
    """
    n0 = counts.n * (counts.n - 1) // 2
    if n0 == 0:
        return np.nan
    return (counts.concordant + counts.xy_ties) / n0


@njit(cache=True, parallel=True)
def _group_accuracies(A, B, omit):
    """``acc_eq`` (G, Ma, Mb) of every pair of measures within every group (pairwise deletion
    of NaN observations when ``omit``, else NaN for a group with a NaN)."""
    measures_a, groups, _ = A.shape
    measures_b = B.shape[0]
    R = np.empty((groups, measures_a, measures_b))
    for t in prange(groups * measures_a):
        g, i = divmod(np.int64(t), measures_a)
        x = A[i, g]
        for j in range(measures_b):
            y = B[j, g]
            keep = ~(np.isnan(x) | np.isnan(y))
            if keep.all():
                R[g, i, j] = _accuracy_from_counts(pair_counts(x, y))
            elif omit:
                R[g, i, j] = _accuracy_from_counts(pair_counts(x[keep], y[keep]))
            else:
                R[g, i, j] = np.nan
    return R


def pairwise_accuracy(
    A, B=None, *, level="item", nan_policy="omit", group_by="input", weighting="uniform"
):
    """Pairwise accuracy with ties, ``acc_eq``, at the item, system or global level.

    Per group, over the ``n (n - 1) / 2`` pairs of systems (items at global level), with
    Kendall's pair classes (:func:`kendall_counts`)::

        acc_eq = (C + T_xy) / (C + D + T_x + T_y + T_xy)

    (Deutsch, Foster and Freitag 2023, "Ties Matter", EMNLP; ``acc23`` in mt-metrics-eval):
    a pair counts as correct when both vectors order it the same way or both tie it. Unlike
    tau, it is defined for constant vectors (1 when both are constant). Levels and
    ``nan_policy``, ``group_by`` and ``weighting`` as :func:`level_correlation`: item level
    averages the per-group accuracies over the groups where it is defined (at least 2
    observations).

    Parameters
    ----------
    A : array_like, shape (Ma, G, S)
    B : array_like, shape (Mb, G, S), optional
        Defaults to ``A``.
    level : {"item", "system", "global"}
    nan_policy : {"omit", "propagate", "raise"}
    group_by : {"input", "system"}
    weighting : {"uniform", "count"}

    Returns
    -------
    LevelCorrelationResult
        ``statistic``, ``n_groups``, ``n_skipped`` (Ma, Mb), as :func:`level_correlation`.

    Examples
    --------
    >>> h = np.array([[[1.0, 2.0, 2.0, 3.0]]])  # pairs: 5 ordered, 1 tied
    >>> m = np.array([[[1.0, 3.0, 3.0, 2.0]]])  # C = 3, D = 2 (pairs with 4th), T_xy = 1
    >>> float(pairwise_accuracy(h, m).statistic[0, 0])
    0.6666666666666666
    """
    arrays = {"A": A} if B is None else {"A": A, "B": B}
    omit = nan_policy == "omit"
    cubes = grouped_cubes(arrays, level, nan_policy, group_by, weighting=weighting)
    R = _group_accuracies(cubes[0], cubes[-1], omit)
    if nan_policy == "raise" and np.isnan(R).any():
        i, j, g = (int(k) for k in np.argwhere(np.isnan(R.transpose(1, 2, 0)))[0])
        raise UndefinedCorrelationError(
            f"pairwise accuracy of A[{i}] and B[{j}] is undefined in group {g} at level "
            f"{level!r}: missing values or fewer than 2 observations (nan_policy='raise')",
            i,
            j,
            g,
        )
    return LevelCorrelationResult(*aggregate_cells(R, cubes, omit, weighting))
