"""Two statistics of the WMT metrics tasks over the pairs of observations in each group:
WMT's Kendall-like tau of DA relative ranks (:func:`kendall_like_tau`) and the Pearson correlation
of the pairwise differences within each group (:func:`pdp_pearson`), as mt-metrics-eval's
``stats.KendallLike`` and ``Correlation.Pearson(pdp=True)``.

Both take a criterion (G, S) and measures (M, G, S) and group them as
:func:`~hanna_stats.kernels.level_correlation` does (:func:`~hanna_stats.kernels.levels.at_level`):
``level="item"`` compares the systems within each input (``group_by="input"``, mt-metrics-eval's
``average_by="item"``) or the inputs within each system (``"system"``, its ``"sys"``),
``"global"`` all cells in one group (its ``"none"``), ``"system"`` the systems' means. Unlike
the item-level correlations, the groups are not averaged: their pairs are pooled.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ._options import as_float_array, check_options
from .levels import at_level


class KendallLikeResult(NamedTuple):
    """Result of :func:`kendall_like_tau`; arrays of shape (M,): ``statistic``, and the pairs
    counted ``concordant`` and ``discordant`` (int64)."""

    statistic: np.ndarray
    concordant: np.ndarray
    discordant: np.ndarray


class PdpPearsonResult(NamedTuple):
    """Result of :func:`pdp_pearson`; arrays of shape (M,): ``statistic`` and ``n_pairs``
    (int64), the pairs of observations whose differences it correlates."""

    statistic: np.ndarray
    n_pairs: np.ndarray


def _groups(criterion, X, level, group_by):
    """Checked options; the criterion (G', S') and measures (M, G', S') at ``level``."""
    check_options(level=level, group_by=group_by)
    if group_by != "input" and level != "item":
        raise ValueError(
            f"group_by={group_by!r} needs level='item'; level {level!r} compares one group"
        )
    criterion = as_float_array("criterion", criterion, 2)
    X = as_float_array("X", X, 3)
    if X.shape[1:] != criterion.shape:
        raise ValueError(
            f"X (M, G, S) must match criterion (G, S); got shapes {X.shape} and {criterion.shape}"
        )
    grouped = at_level(np.concatenate([criterion[None], X]), level, True, group_by)
    return grouped[0], grouped[1:]


@njit(cache=True, parallel=True)
def _kendall_like_counts(H, X, threshold):
    """Concordant and discordant pairs (M,) of each measure of ``X`` (M, G, S) with ``H``
    (G, S), pooled over the groups."""
    measures, groups, cells = X.shape
    concordant = np.zeros(measures, dtype=np.int64)
    discordant = np.zeros(measures, dtype=np.int64)
    for m in prange(measures):
        c = 0
        d = 0
        for g in range(groups):
            h, x = H[g], X[m, g]
            for i in range(cells):
                if np.isnan(h[i]) or np.isnan(x[i]):
                    continue
                for j in range(i + 1, cells):
                    if np.isnan(h[j]) or np.isnan(x[j]):
                        continue
                    diff = h[i] - h[j]
                    if abs(diff) >= threshold:
                        if (diff > 0 and x[i] > x[j]) or (diff < 0 and x[i] < x[j]):
                            c += 1
                        else:
                            d += 1
        concordant[m] = c
        discordant[m] = d
    return concordant, discordant


def kendall_like_tau(criterion, X, *, threshold=25.0, level="item", group_by="input"):
    """WMT's Kendall-like tau (the DARR variant) of each measure with the criterion.

    Over the pairs of observations of each group with a criterion difference of at least
    ``threshold``, pooled over the groups::

        tau = (Concordant - Discordant) / (Concordant + Discordant)

    A pair is concordant when the measure orders it as the criterion does (strictly), and
    discordant otherwise: a pair the measure ties is discordant. The criterion's pairs closer
    than ``threshold`` do not count (DA relative-ranking pairs, WMT 2017-2020: 25 points on
    the 0-100 scale); at ``threshold=0`` its ties count, as discordant (mt-metrics-eval's
    "deliberate inconsistency" emulating WMT). NaN when no pair counts (mt-metrics-eval: 0).
    Pooling over groups is mt-metrics-eval's ``Correlation.KendallLike`` average over items
    weighted by their pairs (``macro=False``). Missing values drop the pairs they are in.

    Parameters
    ----------
    criterion : array_like, shape (G, S)
    X : array_like, shape (M, G, S)
    threshold : float
        Non-negative.
    level : {"item", "system", "global"}
    group_by : {"input", "system"}
        Item level: the groups (inputs, comparing systems; or systems, comparing inputs).

    Returns
    -------
    KendallLikeResult

    References
    ----------
    O. Bojar, Y. Graham and A. Kamran, "Results of the WMT17 Metrics Shared Task", WMT 2017
    (Kendall's tau-like formulation, Sec. 3.2); N. Mathur et al., "Results of the WMT20 Metrics
    Shared Task", WMT 2020; google-research/mt-metrics-eval ``stats.KendallLike``.

    Examples
    --------
    >>> h = np.array([[0.0, 30.0, 70.0]])  # pairs 30, 70, 40 points apart: all count
    >>> x = np.array([[[0.1, 0.3, 0.2]]])  # C = 2, D = 1
    >>> round(float(kendall_like_tau(h, x).statistic[0]), 6)
    0.333333
    """
    if not isinstance(threshold, int | float) or not threshold >= 0:
        raise ValueError(f"threshold must be a non-negative number; got {threshold!r}")
    H, X = _groups(criterion, X, level, group_by)
    concordant, discordant = _kendall_like_counts(H, X, float(threshold))
    total = concordant + discordant
    with np.errstate(invalid="ignore", divide="ignore"):
        statistic = np.where(total > 0, (concordant - discordant) / total, np.nan)
    return KendallLikeResult(statistic, concordant, discordant)


@njit(cache=True, parallel=True)
def _difference_sums(H, X):
    """Per measure (M,): ``sum dh dm``, ``sum dh^2``, ``sum dm^2`` and the count over the pairs
    ``i < j`` of each group with all four values."""
    measures, groups, cells = X.shape
    sums = np.zeros((measures, 3))
    counts = np.zeros(measures, dtype=np.int64)
    for m in prange(measures):
        hx = 0.0
        hh = 0.0
        xx = 0.0
        n = 0
        for g in range(groups):
            h, x = H[g], X[m, g]
            for i in range(cells):
                if np.isnan(h[i]) or np.isnan(x[i]):
                    continue
                for j in range(i + 1, cells):
                    if np.isnan(h[j]) or np.isnan(x[j]):
                        continue
                    dh = h[i] - h[j]
                    dx = x[i] - x[j]
                    hx += dh * dx
                    hh += dh * dh
                    xx += dx * dx
                    n += 1
        sums[m, 0], sums[m, 1], sums[m, 2] = hx, hh, xx
        counts[m] = n
    return sums, counts


def pdp_pearson(criterion, X, *, level="item", group_by="input"):
    """Pearson correlation of the pairwise differences within each group (PDP), of each
    measure with the criterion.

    The differences ``h_i - h_j`` and ``x_i - x_j`` of every pair of observations in each group
    (at item level by input: every pair of systems translating the same segment), pooled over
    the groups, correlated by Pearson's r. mt-metrics-eval lists every ordered pair, both
    ``(i, j)`` and ``(j, i)`` and ``(i, i)``, so both lists have mean exactly 0 and its
    ``scipy.stats.pearsonr`` of them equals, up to rounding::

        r = sum dh dx / sqrt(sum dh^2 sum dx^2)

    over the unordered pairs ``i < j`` computed here. A pair counts when both observations
    have both values. NaN when either sum of squares is 0 (all differences 0: a constant
    measure in every group) or no pair counts (mt-metrics-eval: 0).

    Parameters
    ----------
    criterion : array_like, shape (G, S)
    X : array_like, shape (M, G, S)
    level : {"item", "system", "global"}
    group_by : {"input", "system"}
        Item level: the groups.

    Returns
    -------
    PdpPearsonResult

    References
    ----------
    S. DiIanni and D. Deutsch, "Pairwise difference Pearson" (meta-evaluating segment-level
    metrics on the differences between translations of the same segment), EMNLP 2025;
    google-research/mt-metrics-eval ``stats.AverageCorrelation`` with ``pdp=True``.

    Examples
    --------
    >>> h = np.array([[1.0, 2.0, 4.0], [0.0, 1.0, 1.0]])
    >>> x = 2 * h[None] + np.array([0.0, 5.0])[None, :, None]  # a shift per segment
    >>> float(pdp_pearson(h, x).statistic[0])  # differences cancel the shifts
    1.0
    """
    H, X = _groups(criterion, X, level, group_by)
    sums, counts = _difference_sums(H, X)
    with np.errstate(invalid="ignore", divide="ignore"):
        statistic = sums[:, 0] / np.sqrt(sums[:, 1] * sums[:, 2])
    statistic[(sums[:, 1] == 0) | (sums[:, 2] == 0)] = np.nan
    return PdpPearsonResult(np.clip(statistic, -1.0, 1.0), counts)
