"""The chance baseline of tie-calibrated pairwise accuracy: the ``acc_eq`` (or ``tau_eq``) that a
metric with no information about the human scores gets on the same data (mt-metrics-eval's
issue #14).

A metric without information is one whose scores are exchangeable given the human scores: within
each group (an input at item level; the one group of the system or global level), its values on
the observations that have both a human and a metric value are a uniformly random permutation of
the metric's own values there, independently across groups. The metric's values, hence its pair
differences and its ties at any epsilon, and the humans' scores and ties stay as they are; only
which pair of observations each pair of metric values lands on is random.

At a fixed epsilon the expected statistic has a closed form (:func:`chance_accuracy`); tie
calibration then picks, for each permuted metric, the epsilon that maximises its statistic, so
the calibrated baseline is the expectation of a maximum, above the closed form at any fixed
epsilon (Jensen), and is simulated: permutations drawn from a seed, each permuted metric
calibrated afresh, as :func:`~hanna_stats.kernels.tie_calibration` calibrates.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ._options import check_count, check_option, check_seed, memory_budget
from .calibration import ATOL, TIE_RTOL, TIE_STATISTICS, tie_calibration
from .levels import grouped_cubes

#: Most uniforms (draws x observations) drawn at once; draws are made in blocks of rows of one
#: Generator stream (the same numbers whatever the block size).
MAX_UNIFORMS_BLOCK = 2**24


class ChanceAccuracyResult(NamedTuple):
    """Result of :func:`chance_accuracy`: arrays of shape (measures of H, measures of M).

    ``statistic`` and ``epsilon``: the metric's own statistic and threshold, as
    :func:`~hanna_stats.kernels.tie_calibration` gives them; ``chance``: the baseline (the
    simulated mean of the calibrated statistic of uninformative metrics; with a fixed
    ``epsilon``, the exact expectation); ``chance_se``: its Monte Carlo standard error (0 where
    exact); ``expected``: the exact expected statistic of an uninformative metric at
    ``epsilon``, the metric's own threshold (calibrated or given), not re-calibrated;
    ``bound``: the largest exact expectation over all thresholds, a lower bound of the
    calibrated baseline's expectation (``expected`` with a fixed epsilon); ``draws``:
    the number of simulated metrics (0 where exact).
    """

    statistic: np.ndarray
    epsilon: np.ndarray
    chance: np.ndarray
    chance_se: np.ndarray
    expected: np.ndarray
    bound: np.ndarray
    draws: int


@njit(cache=True)
def _layout(h, m):
    """The complete observations of each group of one (human, metric) pair of (G, S) matrices
    and their pairs of metric values.

    Returns ``(hv, mv, start, pair_a, pair_b, pair_g, diff, ties_h, n_pairs)``: the human and
    metric values of the complete observations, group after group (group ``g`` at
    ``start[g]:start[g + 1]``); for each pair ``a < b`` of a group's metric values (global
    indices), its group and ``|m_b - m_a|``; per group the human ties and the pairs among its
    complete observations."""
    groups, n = h.shape
    start = np.zeros(groups + 1, dtype=np.int64)
    for g in range(groups):
        count = 0
        for s in range(n):
            if not (np.isnan(h[g, s]) or np.isnan(m[g, s])):
                count += 1
        start[g + 1] = start[g] + count
    hv = np.empty(start[groups])
    mv = np.empty(start[groups])
    n_pairs = np.zeros(groups, dtype=np.int64)
    ties_h = np.zeros(groups, dtype=np.int64)
    total = 0
    for g in range(groups):
        k = start[g]
        for s in range(n):
            if not (np.isnan(h[g, s]) or np.isnan(m[g, s])):
                hv[k] = h[g, s]
                mv[k] = m[g, s]
                k += 1
        c = start[g + 1] - start[g]
        n_pairs[g] = c * (c - 1) // 2
        total += n_pairs[g]
    pair_a = np.empty(total, dtype=np.int64)
    pair_b = np.empty(total, dtype=np.int64)
    pair_g = np.empty(total, dtype=np.int64)
    diff = np.empty(total)
    p = 0
    for g in range(groups):
        for a in range(start[g], start[g + 1]):
            for b in range(a + 1, start[g + 1]):
                pair_a[p] = a
                pair_b[p] = b
                pair_g[p] = g
                diff[p] = abs(mv[b] - mv[a])
                ties_h[g] += hv[a] == hv[b]
                p += 1
    return hv, mv, start, pair_a, pair_b, pair_g, diff, ties_h, n_pairs


@njit(cache=True)
def _sweep(diff, start_value, step, tol):
    """``(best, epsilon)``: the largest value of a curve over the candidate thresholds 0 and
    each ``diff`` (ascending), the smallest threshold among equal maxima
    (within ``ATOL``), as :func:`~hanna_stats.kernels.tie_calibration`'s sweep: the curve is
    ``start_value`` plus, for each pair with ``diff <= candidate + tol``, its ``step[p]``."""
    k = diff.size
    running = start_value
    best = -np.inf
    epsilon = 0.0
    tied = 0
    for t in range(-1, k):
        candidate = 0.0 if t < 0 else diff[t]
        moved = t < 0
        while tied < k and diff[tied] <= candidate + tol:
            running += step[tied]
            tied += 1
            moved = True
        if moved and running > best + ATOL:
            best = running
            epsilon = candidate
    return best, epsilon


@njit(cache=True)
def _exact(diff, pair_g, ties_h, n_pairs, weight, epsilon, tol):
    """The exact expected acc_eq of the permuted metric at ``epsilon``, and the largest over
    all thresholds: ``(expected, bound)``.

    In group ``g`` (``P`` pairs, ``T_h`` tied by the humans, ``T_m`` tied by the metric at
    ``epsilon``) a pair of observations receives a uniformly random pair of metric values: tied
    with probability ``T_m / P``, else ordered either way with probability 1/2. It is correct
    when the metric ties a human tie, or orders a human-ordered pair as the humans do::

        E[acc_g] = (T_h T_m / P + (P - T_h) (P - T_m) / (2 P)) / P

    linear in ``T_m``: each metric tie adds ``(3 T_h - P) / (2 P^2)``. ``weight[g]`` is
    ``1 / (P G')`` over the ``G'`` groups with pairs; the pairs are in ascending ``diff``."""
    groups = n_pairs.size
    tied = np.zeros(groups, dtype=np.int64)
    for p in range(diff.size):
        tied[pair_g[p]] += diff[p] <= epsilon + tol
    expected = 0.0
    start_value = 0.0
    for g in range(groups):
        P = n_pairs[g]
        if P:
            T, t = ties_h[g], tied[g]
            expected += weight[g] * (T * t / P + (P - T) * (P - t) / (2.0 * P))
            start_value += weight[g] * (P - T) / 2.0
    step = np.empty(diff.size)
    for p in range(diff.size):
        g = pair_g[p]
        step[p] = weight[g] * (3.0 * ties_h[g] - n_pairs[g]) / (2.0 * n_pairs[g])
    return expected, _sweep(diff, start_value, step, tol)[0]


@njit(cache=True, parallel=True)
def _simulate(hv, mv, start, pair_a, pair_b, pair_g, diff, weight, tol, uniforms, out):
    """``out[k]``: the calibrated acc_eq of the metric permuted by the uniforms ``uniforms[k]``
    (one per complete observation; group ``g``'s values shuffled by Fisher-Yates with
    ``uniforms[k, start[g] + 1 : start[g + 1]]``): value ``a`` lands on observation
    ``position[a]``, and a pair of values ``(a, b)`` is correct when the humans order
    ``(position[a], position[b])`` as the metric orders ``(a, b)`` (strictly, or tied)."""
    draws = uniforms.shape[0]
    groups = start.size - 1
    for k in prange(draws):
        position = np.arange(hv.size)
        for g in range(groups):
            lo = start[g]
            for i in range(start[g + 1] - 1, lo, -1):  # Fisher-Yates on position[lo:hi]
                j = lo + np.int64(uniforms[k, i] * (i - lo + 1))
                position[i], position[j] = position[j], position[i]
        step = np.empty(diff.size)
        start_value = 0.0
        for p in range(diff.size):
            a, b = pair_a[p], pair_b[p]
            hs = np.sign(hv[position[b]] - hv[position[a]])
            strict = 1.0 if hs == np.sign(mv[b] - mv[a]) else 0.0
            tie = 1.0 if hs == 0.0 else 0.0
            w = weight[pair_g[p]]
            start_value += w * strict
            step[p] = w * (tie - strict)
        out[k] = _sweep(diff, start_value, step, tol)[0]


def _block_rows(observations, draws):
    """Draws per block of uniforms: within :data:`MAX_UNIFORMS_BLOCK` and an eighth of the
    memory budget, at least one."""
    cap = min(MAX_UNIFORMS_BLOCK, memory_budget() // 64)
    return max(1, min(draws, cap // max(observations, 1)))


def _cell(h, m, epsilon, tol, draws, rng):
    """``(chance, chance_se, expected, bound)`` (acc_eq) of one pair of level matrices (G, S);
    ``epsilon`` the metric's threshold, ``draws`` 0 for a fixed (given) epsilon."""
    hv, mv, start, pair_a, pair_b, pair_g, diff, ties_h, n_pairs = _layout(h, m)
    used = max(np.count_nonzero(n_pairs), 1)
    with np.errstate(divide="ignore"):
        weight = np.where(n_pairs > 0, 1.0 / (n_pairs * used), 0.0)
    order = np.argsort(diff, kind="stable")  # the pairs in ascending differences: read in turn
    pair_a, pair_b, pair_g, diff = pair_a[order], pair_b[order], pair_g[order], diff[order]
    expected, bound = _exact(diff, pair_g, ties_h, n_pairs, weight, epsilon, tol)
    if not draws:
        return expected, 0.0, expected, expected
    values = np.empty(draws)
    rows = _block_rows(hv.size, draws)
    for lo in range(0, draws, rows):
        hi = min(draws, lo + rows)
        uniforms = rng.random((hi - lo, hv.size))
        _simulate(hv, mv, start, pair_a, pair_b, pair_g, diff, weight, tol, uniforms, values[lo:hi])
    se = values.std(ddof=1) / np.sqrt(draws) if draws > 1 else np.nan
    return values.mean(), se, expected, bound


def chance_accuracy(
    H,
    M,
    *,
    level="item",
    statistic="acc_eq",
    epsilon=None,
    draws=1000,
    seed=0,
    nan_policy="omit",
    group_by="input",
):
    """The chance baseline of tie-calibrated pairwise accuracy (or tau_eq): the statistic of a
    metric with no information about the human scores, on the same groups and ties.

    The uninformative metric: within each group, the metric's values on the complete
    observations (human and metric values present) permuted uniformly at random, groups
    independently. In group ``g`` with ``P`` pairs of complete observations, ``T_h`` of them
    tied by the humans and ``T_m`` pairs of metric values within ``epsilon + tol`` (the
    metric's ties, ``tol`` as :func:`~hanna_stats.kernels.tie_calibration`), a pair of
    observations receives a uniformly random pair of the metric's values, tied with
    probability ``T_m / P`` and otherwise ordered either way with probability 1/2, so that at a
    fixed epsilon, exactly::

        E[acc_eq] = mean_g (T_h T_m / P + (P - T_h) (P - T_m) / (2 P)) / P,
        E[tau_eq] = 2 E[acc_eq] - 1

    (``expected``; a metric that ties every pair gets the humans' tie rate ``T_h / P``, one
    that ties none ``(1 - T_h / P) / 2``, on average over the groups). Tie calibration
    (Deutsch, Foster and Freitag 2023, "Ties Matter", EMNLP, Sec. 6) chooses the epsilon that
    maximises each permuted metric's statistic, and the expectation of that maximum, the
    calibrated baseline, is at least the largest ``E`` over all thresholds (``bound``, exact).
    It is simulated: ``draws`` permutations drawn from ``seed`` (uniforms of one Generator
    stream, a Fisher-Yates shuffle per group; the same values whatever the threads), each
    permuted metric calibrated as :func:`~hanna_stats.kernels.tie_calibration` calibrates (the
    same candidates, rounding tolerance and smallest epsilon among equal maxima), ``chance``
    their mean and ``chance_se`` its standard error (sample standard deviation over
    ``sqrt(draws)``). With a fixed ``epsilon`` nothing is calibrated: ``chance`` is the exact
    ``expected`` and ``chance_se`` 0. Groups (and cells) are those of ``tie_calibration``;
    a cell it leaves undefined (``nan_policy="propagate"`` and a missing value) is NaN here.

    Parameters
    ----------
    H : array_like, shape (Mh, G, S)
        Human scores.
    M : array_like, shape (Mm, G, S)
        Metric scores.
    level, statistic, epsilon, nan_policy, group_by
        As :func:`~hanna_stats.kernels.tie_calibration`.
    draws : int
        Simulated metrics per (human measure, metric) pair; unused with a fixed ``epsilon``.
    seed : int, Generator or None
        Draws the permutations (one stream, cell after cell).

    Returns
    -------
    ChanceAccuracyResult
        ``statistic``, ``epsilon``, ``chance``, ``chance_se``, ``expected``, ``bound`` (Mh, Mm)
        and ``draws``.

    Examples
    --------
    Humans tie one pair of three (``T_h = 1``, ``P = 3``); the metric never ties (epsilon 0):
    ``E = (2 * 3 / 6) / 3 = 1 / 3``, at any epsilon (``3 T_h = P``). Calibrated, two of the
    six permutations reach 1 and the others 1/3: 5/9 on average.

    >>> H, M = [[[1.0, 1.0, 2.0]]], [[[0.0, 1.0, 3.0]]]
    >>> res = chance_accuracy(H, M, epsilon=0.0)
    >>> float(res.chance[0, 0]), float(res.chance_se[0, 0])
    (0.3333333333333333, 0.0)
    >>> res = chance_accuracy(H, M, draws=2000, seed=1)
    >>> round(float(res.chance[0, 0]), 2), float(res.bound[0, 0]) <= float(res.chance[0, 0])
    (0.56, True)
    """
    check_option("statistic", statistic, TIE_STATISTICS)
    calibrate = epsilon is None
    draws = check_count("draws", draws) if calibrate else 0
    rng = check_seed(seed) if calibrate else None
    observed = tie_calibration(
        H,
        M,
        level=level,
        statistic=statistic,
        epsilon=epsilon,
        nan_policy=nan_policy,
        group_by=group_by,
    )
    Hc, Mc = grouped_cubes({"H": H, "M": M}, level, nan_policy, group_by)
    tols = TIE_RTOL * np.where(np.isfinite(Mc), np.abs(Mc), 0.0).max(axis=(1, 2), initial=0.0)
    out = np.full((4, Hc.shape[0], Mc.shape[0]), np.nan)
    for i, j in np.ndindex(out.shape[1:]):
        if not np.isnan(observed.statistic[i, j]):
            eps = float(observed.epsilon[i, j])
            out[:, i, j] = _cell(Hc[i], Mc[j], eps, tols[j], draws, rng)
    if statistic == "tau_eq":  # 2 acc_eq - 1, its standard error doubled
        out = 2.0 * out - np.array([1.0, 0.0, 1.0, 1.0])[:, None, None]
    return ChanceAccuracyResult(observed.statistic, observed.epsilon, *out, draws)
