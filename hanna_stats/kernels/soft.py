"""Soft pairwise accuracy (Thompson et al. 2024): agreement of a metric's and the humans'
p-values for "system i beats system j", from paired permutation tests over the inputs."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._options import as_float_array, check_count, check_seed, validated
from .distributed import cluster_executor, split


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
    NaN for a pair that shares no input (see :func:`pairwise_pvalues`)."""
    d = x[:, i] - x[:, j]  # (G, pairs)
    shared = ~np.isnan(d)
    if shared.all():  # as mt-metrics-eval: the permuted sums of each system, then differences
        partial = signs @ x
        null = partial[:, i] - partial[:, j]
    else:  # pair by pair, the inputs a pair misses left out
        d = np.where(shared, d, 0.0)
        null = signs @ d
    gamma = 1e-10 * np.abs(d).sum(axis=0)  # rounding of sums in another order
    p = (null >= d.sum(axis=0) - gamma).mean(axis=0)
    p[~shared.any(axis=0)] = np.nan
    return p


def pairwise_pvalues(X, *, permutations=1000, seed=0, signs=None):
    """One-sided paired permutation p-values of "system i is better than system j", per measure.

    For a measure's scores ``x[g, s]`` of system ``s`` on input ``g`` and a pair of systems
    ``i < j`` with differences ``d_g = x[g, i] - x[g, j]``, the test statistic is
    ``T = sum_g d_g`` and a permutation flips the sign of each input's difference (swaps the
    two systems' scores on that input): ``T* = sum_g e_g d_g`` with ``e_g`` = +-1. The p-value is
    ``#{T* >= T} / K`` over ``K`` permutations (no identity added), the same signs serving all
    pairs and measures. This is the test of Thompson et al. (2024), "Improving Statistical
    Significance in Human Evaluation of Automatic Metrics via Soft Pairwise Accuracy", WMT
    (mt-metrics-eval's ``pce.compute_pairwise_p_values``, which draws its signs from seed 4 in
    float32). Inputs where either system's value is missing are left out of that pair's sums
    (their difference counts as 0); a pair that shares no input gets NaN. For a measure without
    missing values, ``T*`` comes from the permuted sums of each system, then their
    differences, as in mt-metrics-eval.

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
    for m, x in enumerate(X):  # one measure at a time: the (K, pairs) arrays stay small
        P[m, i, j] = _pvalues(x, signs, i, j)
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
    human = {}  # (human, mask) -> its p-values: humans are shared by metrics with one mask
    for b, m in enumerate(Mc):
        metric = {}  # mask -> this metric's p-values
        for a, h in enumerate(Hc):
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
