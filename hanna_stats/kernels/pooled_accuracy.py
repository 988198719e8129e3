"""Pairwise accuracy of system rankings pooled over several sets of systems (WMT: language
pairs), Kocmi et al. (2021), with its paired permutation test, as mt-metrics-eval's
``data.CompareMetricsWithGlobalAccuracy``."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ._options import as_float_array, check_count, check_seed


class PooledAccuracyResult(NamedTuple):
    """Result of :func:`pooled_pairwise_accuracy`.

    ``statistic`` (M,): each measure's pooled accuracy; ``n_pairs`` (M,) int64: the pairs of
    systems it counts; ``delta`` (M, M): ``statistic[a] - statistic[b]``; ``pvalue`` (M, M):
    the permutation p-value of H1 "``a`` agrees better with the gold than ``b``" (the diagonal
    NaN); ``null`` (P, M, M): the accuracy of ``a`` after the swaps of draw ``p`` in the test of
    ``a`` against ``b`` (``null[p, b, a]`` is ``b``'s in the same draw), over the pairs both
    measures count: the resampling draws a weighted average over tasks is tested with.
    """

    statistic: np.ndarray
    n_pairs: np.ndarray
    delta: np.ndarray
    pvalue: np.ndarray
    null: np.ndarray


@njit(cache=True)
def _agreements(x, first, second, gold_sign, keep):
    """The number of kept pairs (``first[k]``, ``second[k]``) whose sign of ``x`` difference
    equals the gold's, and the number of kept pairs."""
    agree = 0
    count = 0
    for k in range(first.size):
        i, j = first[k], second[k]
        if keep[i] and keep[j]:
            count += 1
            if np.sign(x[i] - x[j]) == gold_sign[k]:
                agree += 1
    return agree, count


@njit(cache=True)
def _zscores(x, keep):
    """``x`` z-scored (ddof 0) over the kept cells (a constant ``x``: centred only)."""
    n = 0
    total = 0.0
    for i in range(x.size):
        if keep[i]:
            n += 1
            total += x[i]
    mean = total / n
    square = 0.0
    for i in range(x.size):
        if keep[i]:
            square += (x[i] - mean) ** 2
    sd = np.sqrt(square / n)
    if sd == 0.0:
        sd = 1.0
    return (x - mean) / sd


@njit(cache=True, parallel=True)
def _pair_tests(X, first, second, gold_sign, gold_ok, W, null, hits):
    """Fill ``null`` (P, M, M) and ``hits`` (M, M) for every pair of measures: per pair, the
    cells where the gold and both measures have a value, both measures z-scored over them,
    swapped where ``W`` (P, S) is 1, and the swapped measures' agreements counted."""
    measures, cells = X.shape
    perms = W.shape[0]
    for t in prange(measures * measures):
        a, b = divmod(np.int64(t), measures)
        if a >= b:
            continue
        keep = gold_ok & ~np.isnan(X[a]) & ~np.isnan(X[b])
        za = _zscores(X[a], keep)
        zb = _zscores(X[b], keep)
        agree_a, count = _agreements(za, first, second, gold_sign, keep)
        agree_b, _ = _agreements(zb, first, second, gold_sign, keep)
        observed = agree_a - agree_b
        sa = np.empty(cells)
        sb = np.empty(cells)
        for p in range(perms):
            for c in range(cells):
                if W[p, c]:
                    sa[c], sb[c] = zb[c], za[c]
                else:
                    sa[c], sb[c] = za[c], zb[c]
            pa, _ = _agreements(sa, first, second, gold_sign, keep)
            pb, _ = _agreements(sb, first, second, gold_sign, keep)
            null[p, a, b] = pa / count if count else np.nan
            null[p, b, a] = pb / count if count else np.nan
            if pa - pb >= observed:
                hits[a, b] += 1
            if pb - pa >= -observed:
                hits[b, a] += 1


def pooled_pairwise_accuracy(gold, X, subsets, *, permutations=1000, seed=0):
    """Pairwise accuracy of system-level scores, pooled over the pairs of systems of every
    subset (WMT: language pair), with a paired permutation test for every pair of measures.

    Within each subset, every pair of systems with a gold value for both counts (a measure
    counts the pairs where it has both values too); a pair is correct when the measure's
    difference has the sign of the gold's, ``sign(m_i - m_j) == sign(g_i - g_j)``, so a pair
    tied in both counts as correct and a pair tied in one only as wrong::

        accuracy = sum_k correct_k / sum_k pairs_k

    over the subsets ``k`` (Kocmi et al. 2021; mt-metrics-eval's ``stats.Agreement`` summed by
    ``data.CompareMetricsWithGlobalAccuracy``). Pairs never span two subsets.

    The test is mt-metrics-eval's ``PermutationSigDiff`` with that accuracy as the statistic
    (``average_by="none"``): both measures are z-scored (ddof 0) over all their cells of every
    subset together, and each permutation swaps the two measures' z-scores of each cell
    (system of a subset) with probability 1/2 (``W``, drawn once from ``seed`` as
    ``integers(0, 2, (permutations, S))`` and shared by all pairs of measures); the p-value of
    "``a`` better than ``b``" is the share of permutations whose swapped difference of correct
    pairs reaches the observed one (in counts of pairs, so without rounding: mt-metrics-eval
    compares the accuracies as floats, and loses some swaps that tie the observed difference
    exactly to rounding, which lowers its p-values, by up to 0.02 on WMT22 zh-en). All permutations
    are used (mt-metrics-eval's early stopping only ends its loop at its default of 1,000
    draws). A cell where either measure has no value drops out of that pair's test (z-scores,
    pairs and swaps), as a missing gold value drops out of mt-metrics-eval's (its metric
    scores cannot be missing: it pads a missing system with 0).

    Parameters
    ----------
    gold : array_like, shape (S,)
        The gold system-level values of every (subset, system) cell; NaN where missing.
    X : array_like, shape (M, S)
        The measures' system-level values of the same cells; NaN where missing.
    subsets : array_like of int, shape (S,)
        The subset of each cell (any integer labels).
    permutations : int
        In [1, 1,000,000].
    seed : int, numpy.random.Generator or None

    Returns
    -------
    PooledAccuracyResult

    References
    ----------
    T. Kocmi, C. Federmann, R. Grundkiewicz, M. Junczys-Dowmunt, H. Matsushita and A. Menezes,
    "To Ship or Not to Ship: An Extensive Evaluation of Automatic Metrics for Machine
    Translation", WMT 2021; google-research/mt-metrics-eval ``data.CompareMetricsWithGlobal
    Accuracy``, ``stats.PermutationSigDiff``.

    Examples
    --------
    >>> gold = np.array([1.0, 2.0, 3.0, 1.0, 2.0])  # two subsets: 3 pairs + 1 pair
    >>> X = np.array([[1.0, 2.0, 3.0, 2.0, 1.0], [3.0, 2.0, 1.0, 1.0, 2.0]])
    >>> res = pooled_pairwise_accuracy(gold, X, [0, 0, 0, 1, 1], permutations=100)
    >>> res.statistic.tolist(), res.n_pairs.tolist()
    ([0.75, 0.25], [4, 4])
    """
    permutations = check_count("permutations", permutations)
    gold = as_float_array("gold", gold, 1)
    X = as_float_array("X", X, 2)
    labels = np.asarray(subsets)
    if labels.shape != gold.shape or X.shape[1] != gold.size:
        raise ValueError(
            f"gold (S,), X (M, S) and subsets (S,) must agree on S; got shapes {gold.shape}, "
            f"{X.shape} and {labels.shape}"
        )
    if not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"subsets must be integer labels; got dtype {labels.dtype}")
    rng = check_seed(seed)
    gold_ok = ~np.isnan(gold)
    first, second = np.nonzero(
        np.triu(labels[:, None] == labels[None, :], 1) & gold_ok[:, None] & gold_ok[None, :]
    )
    gold_sign = np.sign(gold[first] - gold[second])
    statistic = np.full(len(X), np.nan)
    n_pairs = np.zeros(len(X), dtype=np.int64)
    for m, x in enumerate(X):
        agree, n_pairs[m] = _agreements(x, first, second, gold_sign, gold_ok & ~np.isnan(x))
        if n_pairs[m]:
            statistic[m] = agree / n_pairs[m]
    W = rng.integers(0, 2, (permutations, gold.size), dtype=np.uint8)
    null = np.full((permutations, len(X), len(X)), np.nan)
    hits = np.zeros((len(X), len(X)), dtype=np.int64)
    _pair_tests(X, first, second, gold_sign, gold_ok, W, null, hits)
    pvalue = hits / permutations
    np.fill_diagonal(pvalue, np.nan)
    return PooledAccuracyResult(
        statistic, n_pairs, statistic[:, None] - statistic[None, :], pvalue, null
    )
