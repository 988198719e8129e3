"""Soft pairwise accuracy (Thompson et al. 2024): agreement of a metric's and the humans'
p-values for "system i beats system j", from paired permutation tests over the inputs."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._options import as_float_array, check_count, check_seed, validated


class SoftPairwiseAccuracyResult(NamedTuple):
    """Result of :func:`soft_pairwise_accuracy`.

    ``statistic`` (Mh, Mm): SPA of each (human, metric) pair; ``pvalues_h`` (Mh, S, S) and
    ``pvalues_m`` (Mm, S, S): the pairwise p-values (:func:`pairwise_pvalues`).
    """

    statistic: np.ndarray
    pvalues_h: np.ndarray
    pvalues_m: np.ndarray


def sign_flips(n_inputs, *, permutations=1000, seed=0):
    """Signs (K, G) float64 in {-1, +1} of the paired permutation test: one fair coin per
    permutation and input, shared by all measures and system pairs."""
    permutations = check_count("permutations", permutations)
    rng = check_seed(seed)
    return 1.0 - 2.0 * rng.integers(0, 2, size=(permutations, n_inputs))


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
    (their difference counts as 0). For a measure without missing values, ``T*`` comes from the
    permuted sums of each system, then their differences, as in mt-metrics-eval.

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
    n_inputs, n_systems = X.shape[1], X.shape[2]
    if signs is None:
        signs = sign_flips(n_inputs, permutations=permutations, seed=seed)
    else:
        signs = as_float_array("signs", signs, 2)
        if signs.shape[1] != n_inputs or not np.isin(signs, (-1.0, 1.0)).all():
            raise ValueError(f"signs must be -1 or +1, of shape (K, {n_inputs})")
    i, j = np.triu_indices(n_systems, 1)
    P = np.full((X.shape[0], n_systems, n_systems), np.nan)
    for m, x in enumerate(X):  # one measure at a time: the (K, pairs) arrays stay small
        d = np.nan_to_num(x[:, i] - x[:, j])  # (G, pairs)
        if np.isnan(x).any():
            null = signs @ d  # pair by pair, the inputs a pair misses left out
        else:  # as mt-metrics-eval: the permuted sums of each system, then their differences
            partial = signs @ x
            null = partial[:, i] - partial[:, j]
        gamma = 1e-10 * np.abs(d).sum(axis=0)  # rounding of sums in another order
        P[m, i, j] = (null >= d.sum(axis=0) - gamma).mean(axis=0)
    return P


def soft_pairwise_accuracy(H, M, *, permutations=1000, seed=0, signs=None):
    """Soft pairwise accuracy (SPA) of metrics against human scores, for every pair at once.

    With the one-sided p-values ``p_h(i, j)`` and ``p_m(i, j)`` of "system i beats system j"
    from the human and the metric scores (:func:`pairwise_pvalues`, the same permutations for
    both)::

        SPA = 1 - mean_{i < j} |p_h(i, j) - p_m(i, j)|

    Thompson, Mathur, Deutsch and Lo (2024), "Improving Statistical Significance in Human
    Evaluation of Automatic Metrics via Soft Pairwise Accuracy", WMT (mt-metrics-eval's
    ``PairwiseConfidenceError``, 1 minus the pairwise confidence error).

    Parameters
    ----------
    H : array_like, shape (Mh, G, S)
        Human scores.
    M : array_like, shape (Mm, G, S)
        Metric scores.
    permutations, seed, signs
        As :func:`pairwise_pvalues`.

    Returns
    -------
    SoftPairwiseAccuracyResult

    Examples
    --------
    >>> H = [[[1.0, 2.0, 3.0], [1.0, 3.0, 2.0]]]
    >>> res = soft_pairwise_accuracy(H, H, permutations=100, seed=0)
    >>> float(res.statistic[0, 0])
    1.0
    """
    Hc, Mc = validated({"H": H, "M": M}, 3, 2)
    if signs is None:
        signs = sign_flips(Hc.shape[1], permutations=permutations, seed=seed)
    P_h = pairwise_pvalues(Hc, signs=signs)
    P_m = pairwise_pvalues(Mc, signs=signs)
    i, j = np.triu_indices(Hc.shape[2], 1)
    error = np.abs(P_h[:, None, i, j] - P_m[None, :, i, j]).mean(axis=2)
    return SoftPairwiseAccuracyResult(1.0 - error, P_h, P_m)
