"""Soft pairwise accuracy (Thompson et al. 2024): agreement of a metric's and the humans'
p-values for "system i beats system j", from paired permutation tests over the inputs."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ._options import as_float_array, check_count, check_seed, memory_budget, validated
from .distributed import cluster_executor, split

#: A permuted difference counts as reaching the observed one when it falls short by at most
#: this much relative to ``sum_g |x[g, i]| + |x[g, j]|`` over the pair's inputs: a bound far
#: above the rounding of the two sums in another order (a few ``G eps`` relative), far below any
#: real difference of scores.
_ROUNDING = 1e-10


class SoftPairwiseAccuracyResult(NamedTuple):
    """Result of :func:`soft_pairwise_accuracy`; arrays of shape (Mh, Mm) unless stated.

    ``statistic``: SPA of each (human, metric) pair, NaN where no pair of systems is left;
    ``n_systems`` / ``n_pairs`` (int64): the systems compared and the pairs of them averaged;
    ``n_missing`` (int64): (input, system) cells of the compared systems left out because the
    human or the metric score is missing there; ``pvalues_h`` and ``pvalues_m`` (Mh, Mm, S, S):
    the pairwise p-values (:func:`pairwise_pvalues`) of the human and the metric scores on the
    inputs both have, NaN for pairs left out.
    """

    statistic: np.ndarray
    n_systems: np.ndarray
    n_pairs: np.ndarray
    n_missing: np.ndarray
    pvalues_h: np.ndarray
    pvalues_m: np.ndarray


def sign_flips(n_inputs, *, permutations=1000, seed=0):
    """Signs (K, G) float64 in {-1, +1} of the paired permutation test: one fair coin per
    permutation and input, shared by all measures and system pairs."""
    permutations = check_count("permutations", permutations)
    rng = check_seed(seed)
    return 1.0 - 2.0 * rng.integers(0, 2, size=(permutations, n_inputs))


def _signs(n_inputs, permutations, seed, signs):
    """``signs`` checked against ``n_inputs``, or drawn (:func:`sign_flips`) when None."""
    if signs is None:
        return sign_flips(n_inputs, permutations=permutations, seed=seed)
    signs = as_float_array("signs", signs, 2)
    if signs.shape[1] != n_inputs or not np.isin(signs, (-1.0, 1.0)).all():
        raise ValueError(f"signs must be -1 or +1, of shape (K, {n_inputs})")
    return signs


def _pvalues(x, signs, i, j):
    """p-values (pairs,) of the system pairs ``(i[k], j[k])`` of one measure's (G, S) scores;
    the inputs a pair misses are left out of its sums (their difference counts as 0), NaN for a
    pair that shares no input (see :func:`pairwise_pvalues`)."""
    present = ~np.isnan(x)
    shared = present[:, i] & present[:, j]  # (G, pairs)
    if shared.all():
        return _complete_pvalues(x[None], signs, i, j)[0]
    d = np.where(shared, x[:, i] - x[:, j], 0.0)
    size = np.where(shared, np.abs(x[:, i]) + np.abs(x[:, j]), 0.0).sum(axis=0)
    p = (signs @ d >= d.sum(axis=0) - _ROUNDING * size).mean(axis=0)
    p[~shared.any(axis=0)] = np.nan
    return p


def _complete_pvalues(X, signs, i, j):
    """p-values (M, pairs) of the system pairs ``(i[k], j[k])`` of measures (M, G, S) without
    missing values, as mt-metrics-eval: the permuted sums of each system (one product of the
    signs with the systems of a block of measures), then their differences per pair. The
    blocks of measures fit half the memory budget (their stacked scores and permuted sums); a
    measure's p-values do not depend on its block."""
    n_measures, n_inputs, n_systems = X.shape
    K = signs.shape[0]
    per_measure = 8 * (n_inputs * n_systems + 2 * K * n_systems + i.size)
    size = max(1, memory_budget() // 2 // per_measure)
    P = np.empty((n_measures, i.size))
    for lo in range(0, n_measures, size):
        block = X[lo : lo + size]
        stacked = block.transpose(1, 0, 2).reshape(n_inputs, -1)  # (G, measures x systems)
        permuted = np.ascontiguousarray((signs @ stacked).T).reshape(len(block), n_systems, K)
        sums = block.sum(axis=1)
        scale = np.abs(block).sum(axis=1)
        threshold = sums[:, i] - sums[:, j] - _ROUNDING * (scale[:, i] + scale[:, j])
        P[lo : lo + size] = _reaching(permuted, threshold, i, j) / K
    return P


@njit(cache=True)
def _reaching(permuted, threshold, i, j):
    """Counts (M, pairs) of the permutations ``k`` with ``permuted[m, i, k] - permuted[m, j, k]
    >= threshold[m, pair]``. One thread: it runs right after the BLAS product, whose threads
    still spin on the cores for a while, and a parallel loop would wait on them (on 2 cores,
    16 ms instead of 1 for WMT's 50 metrics x 190 pairs x 1,000 permutations)."""
    n_measures, _, K = permuted.shape
    n_pairs = i.size
    counts = np.zeros((n_measures, n_pairs))
    for t in range(n_measures * n_pairs):
        m, p = divmod(np.int64(t), n_pairs)
        a = i[p]
        b = j[p]
        bound = threshold[m, p]
        count = 0
        for k in range(K):
            count += permuted[m, a, k] - permuted[m, b, k] >= bound
        counts[m, p] = count
    return counts


def pairwise_pvalues(X, *, permutations=1000, seed=0, signs=None):
    """One-sided paired permutation p-values of "system i is better than system j", per measure.

    For a measure's scores ``x[g, s]`` of system ``s`` on input ``g`` and a pair of systems ``i
    < j`` with differences ``d_g = x[g, i] - x[g, j]``, the test statistic is ``T = sum_g d_g``
    and a permutation flips the sign of each input's difference (swaps the two systems' scores
    on that input): ``T* = sum_g e_g d_g`` with ``e_g`` = +-1. The p-value is ``#{T* >= T} / K``
    over ``K`` permutations (no identity added), the same signs serving all pairs and measures;
    ``T*`` reaches ``T`` within ``1e-10 sum_g (|x[g, i]| + |x[g, j]|)``, far above the rounding
    of the sums in another order. This is the test of Thompson et al. (2024), "Improving
    Statistical Significance in Human Evaluation of Automatic Metrics via Soft Pairwise
    Accuracy", WMT (mt-metrics-eval's ``pce.compute_pairwise_p_values``, which draws its signs
    from seed 4 in float32). Inputs where either system's value is missing are left out of that
    pair's sums (their difference counts as 0); a pair that shares no input gets NaN. For a
    measure without missing values, ``T*`` comes from the permuted sums of each system, then
    their differences, as in mt-metrics-eval, for blocks of measures that fit the memory budget
    (:func:`~hanna_stats.kernels._options.memory_budget`).

    Parameters
    ----------
    X : array_like, shape (M, G, S)
        Scores of ``M`` measures on ``G`` inputs and ``S`` systems.
    permutations : int
    seed : int, Generator or None
        Draws the signs (:func:`sign_flips`) unless ``signs`` is given.
    signs : array_like, shape (K, G), optional
        Precomputed signs (+-1) per permutation and input.

    Returns
    -------
    ndarray, shape (M, S, S)
        ``P[m, i, j]`` for ``i < j``; NaN on and below the diagonal.

    Examples
    --------
    Two systems on 3 inputs, system 0 better on each by 1; the 8 sign patterns enumerate the
    exact null: only the identity reaches ``T = 3``.

    >>> signs = [[a, b, c] for a in (1, -1) for b in (1, -1) for c in (1, -1)]
    >>> float(pairwise_pvalues([[[2, 1], [3, 2], [4, 3]]], signs=signs)[0, 0, 1])
    0.125
    """
    (X,) = validated({"X": X}, 3, 0)
    signs = _signs(X.shape[1], permutations, seed, signs)
    i, j = np.triu_indices(X.shape[2], 1)
    P = np.full((X.shape[0], X.shape[2], X.shape[2]), np.nan)
    complete = ~np.isnan(X).any(axis=(1, 2))
    P[np.flatnonzero(complete)[:, None], i, j] = _complete_pvalues(X[complete], signs, i, j)
    for m in np.flatnonzero(~complete):  # one measure at a time: the (K, pairs) arrays stay small
        P[m, i, j] = _pvalues(X[m], signs, i, j)
    return P


def soft_pairwise_accuracy(H, M, *, permutations=1000, seed=0, signs=None, executor=None):
    """Soft pairwise accuracy (SPA) of metrics against human scores, for every pair at once.

    With the one-sided p-values ``p_h(i, j)`` and ``p_m(i, j)`` of "system i beats system j"
    from the human and the metric scores (:func:`pairwise_pvalues`, the same permutations for
    both)::

        SPA = 1 - mean_{i < j} |p_h(i, j) - p_m(i, j)|

    Thompson, Mathur, Deutsch and Lo (2024), "Improving Statistical Significance in Human
    Evaluation of Automatic Metrics via Soft Pairwise Accuracy", WMT (mt-metrics-eval's
    ``PairwiseConfidenceError``, 1 minus the pairwise confidence error).

    Missing values, as mt-metrics-eval: an input drops out of the comparison of systems ``i``
    and ``j`` (on both sides, the human and the metric p-value) when any of ``h[g, i]``,
    ``h[g, j]``, ``m[g, i]``, ``m[g, j]`` is missing; a system without any input where both are
    present (a system the humans did not rate) is left out, and so is a pair of systems that
    shares no such input. mt-metrics-eval (``data.GetCorrelations``) drops the systems without
    human scores and (``stats.PairwiseConfidenceError`` with ``filter_nones``) the segments
    whose human score is None from both vectors, which is this rule when every rated system
    misses the same segments.

    Parameters
    ----------
    H : array_like, shape (Mh, G, S)
        Human scores (NaN = missing).
    M : array_like, shape (Mm, G, S)
        Metric scores (NaN = missing).
    permutations, seed, signs
        As :func:`pairwise_pvalues`.
    executor : distributed.Client, concurrent.futures.Executor or ClusterExecutor, optional
        Compute blocks of the metrics on this executor, e.g. a Dask cluster (see
        :mod:`hanna_stats.kernels.distributed`), with the signs drawn here once; a metric's
        results do not depend on the others, so they are the same bit for bit. None (the
        default): in this process.

    Returns
    -------
    SoftPairwiseAccuracyResult

    Raises
    ------
    ValueError
        For fewer than 2 systems, or bad arguments.

    Examples
    --------
    >>> H = [[[1.0, 2.0, 3.0], [1.0, 3.0, 2.0]]]
    >>> res = soft_pairwise_accuracy(H, H, permutations=100, seed=0)
    >>> float(res.statistic[0, 0]), int(res.n_pairs[0, 0])
    (1.0, 3)
    """
    Hc, Mc = validated({"H": H, "M": M}, 3, 2)
    n_inputs, n_systems = Hc.shape[1:]
    if n_systems < 2:
        raise ValueError(
            f"H and M must have at least 2 systems (last axis) to compare; got {n_systems}"
        )
    signs = _signs(n_inputs, permutations, seed, signs)
    if executor is not None:
        cluster = cluster_executor(executor)
        parts = cluster.map(
            _spa_block, (Hc, Mc, signs), split(Mc.shape[0], cluster.blocks), desc="metric blocks"
        )
        fields = zip(*parts, strict=True)  # each (Mh, Mm, ...): the metrics on axis 1
        return SoftPairwiseAccuracyResult(*(np.concatenate(f, axis=1) for f in fields))
    shape = (Hc.shape[0], Mc.shape[0])
    statistic = np.full(shape, np.nan)
    counts = np.zeros((3, *shape), dtype=np.int64)  # n_systems, n_pairs, n_missing
    P_h = np.full((*shape, n_systems, n_systems), np.nan)
    P_m = np.full_like(P_h, np.nan)
    # Measures without missing values: every pair of systems, their p-values in blocks (one
    # product of the signs per block of measures).
    i, j = np.triu_indices(n_systems, 1)
    rows, cols = (np.flatnonzero(~np.isnan(X).any(axis=(1, 2))) for X in (Hc, Mc))
    p_h = _complete_pvalues(Hc[rows], signs, i, j)[:, None]  # (rows, 1, pairs)
    p_m = _complete_pvalues(Mc[cols], signs, i, j)[None]  # (1, cols, pairs)
    cells = np.ix_(rows, cols)
    statistic[cells] = 1.0 - np.abs(p_h - p_m).mean(axis=2)
    counts[0][cells], counts[1][cells] = n_systems, i.size
    cells_pairs = (rows[:, None, None], cols[None, :, None], i, j)
    P_h[cells_pairs], P_m[cells_pairs] = p_h, p_m
    # The others: the inputs each pair of (human, metric) has, as the docstring says.
    human = {}  # (human, mask) -> its p-values: humans are shared by metrics with one mask
    for b, m in enumerate(Mc):
        metric = {}  # mask -> this metric's p-values
        for a, h in enumerate(Hc):
            if a in rows and b in cols:
                continue
            valid = ~(np.isnan(h) | np.isnan(m))
            systems = np.flatnonzero(valid.any(axis=0))
            i, j = systems[np.array(np.triu_indices(systems.size, 1))]
            key = valid.tobytes()
            if (a, key) not in human:
                human[a, key] = _pvalues(np.where(valid, h, np.nan), signs, i, j)
            if key not in metric:
                metric[key] = _pvalues(np.where(valid, m, np.nan), signs, i, j)
            p_h, p_m = human[a, key], metric[key]
            kept = ~np.isnan(p_h)  # the same pairs as p_m: one mask
            compared = np.union1d(i[kept], j[kept])
            counts[:, a, b] = compared.size, kept.sum(), (~valid[:, compared]).sum()
            if kept.any():
                statistic[a, b] = 1.0 - np.abs(p_h[kept] - p_m[kept]).mean()
            P_h[a, b, i, j], P_m[a, b, i, j] = p_h, p_m
    return SoftPairwiseAccuracyResult(statistic, *counts, P_h, P_m)


def _spa_block(Hc, Mc, signs, rows):
    """:func:`soft_pairwise_accuracy` of the metrics ``lo:hi`` (a task on an executor)."""
    lo, hi = rows
    return soft_pairwise_accuracy(Hc, Mc[lo:hi], signs=signs)
