"""Paired bootstrap comparison of systems (Koehn, 2004) for many measures at once, and the
weighted F1 agreement of the resulting pair labels.

One matrix of resampled input indices, drawn once from a seeded
:class:`numpy.random.Generator` (or passed in by the caller), is shared by every measure, so the
measures are compared on the same resamples and the counts do not depend on the thread count.
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np
from numba import njit

from ._options import as_float_array, check_count, check_indices, check_seed
from .distributed import cluster_executor, split


class PairedBootstrapResult(NamedTuple):
    """Result of :func:`paired_bootstrap`.

    ``pairs`` (P, 2): the system pairs (s1, s2), s1 < s2, in lexicographic order; ``wins``
    (M, P, 2) int64: resamples in which s1 (``[..., 0]``) or s2 (``[..., 1]``) has the strictly
    greater mean; ``labels`` (M, P) int8: 1 if s1 wins in at least ``threshold`` resamples, 2 if
    s2 does, else 0; ``threshold``: ``ceil((1 - alpha) B)``.
    """

    pairs: np.ndarray
    wins: np.ndarray
    labels: np.ndarray
    threshold: int


def system_pairs(systems):
    """The (P, 2) int64 array of pairs (s1, s2), ``0 <= s1 < s2 < systems``, lexicographic."""
    s1, s2 = np.triu_indices(systems, k=1)
    return np.ascontiguousarray(np.stack([s1, s2], axis=1), dtype=np.int64)


def multiplicities(indices, n):
    """Counts (K, n) float64 of each of ``n`` items in each row of ``indices`` (K, n')."""
    indices = np.asarray(indices, dtype=np.int64)
    rows = indices.shape[0]
    flat = (indices + n * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64)


@njit(cache=True)
def _resample_sums(XT, counts):
    # Serial: about 10 ms for HANNA's 1,000 resamples of 78 x 10 columns, and a parallel loop
    # would cost a second more to compile on a user's first run.
    resamples, inputs = counts.shape
    columns = XT.shape[1]
    sums = np.zeros((resamples, columns))
    for b in range(resamples):
        for g in range(inputs):
            weight = counts[b, g]
            if weight > 0.0:
                for k in range(columns):
                    sums[b, k] += weight * XT[g, k]
    return sums


#: Relative tolerance under which two resampled sums tie. Rounding makes a sum of G terms of
#: one sign err by at most about G eps relative (2e-14 for HANNA's 96 inputs, 1e-12 for 4,500);
#: exactly different means of ratings differ by far more.
TIE_RTOL = 1e-12


@njit(cache=True)
def _count_wins(sums, measures, systems, pairs):
    """Resamples won by each system of each pair, per measure: (M, P, 2) int64.

    Serial: it runs in milliseconds, and a parallel loop would cost seconds more to compile on
    a user's first run."""
    resamples = sums.shape[0]
    n_pairs = pairs.shape[0]
    wins = np.zeros((measures, n_pairs, 2), dtype=np.int64)
    for m in range(measures):
        # This measure's sums as (systems, resamples): each pair is a branch-free pass over two
        # contiguous rows.
        local = np.ascontiguousarray(sums[:, m * systems : (m + 1) * systems].T)
        for p in range(n_pairs):
            first = local[pairs[p, 0]]
            second = local[pairs[p, 1]]
            w1 = 0
            w2 = 0
            for b in range(resamples):
                d = first[b] - second[b]
                tie = TIE_RTOL * max(abs(first[b]), abs(second[b]))
                w1 += d > tie
                w2 += -d > tie
            wins[m, p, 0] = w1
            wins[m, p, 1] = w2
    return wins


def bootstrap_wins(X, indices, pairs, progress=None):
    """Win counts of every system pair on every resample, for every measure.

    For measure m and resample b the score of system s is
    ``sum_g counts[b, g] X[m, g, s]`` (``counts`` from :func:`multiplicities`), accumulated
    over g ascending for every (measure, system) column alike, each sum by one thread in a fixed
    order, whatever the thread count. Comparing sums is comparing means (each has G draws).
    Sums within ``TIE_RTOL`` (relative) of each other are a tie and count for neither system:
    means that are equal in exact arithmetic (HANNA's criteria are means of 3 ratings, k/3, so
    two systems often have the same resampled mean) otherwise differ by rounding in the last
    bits, depending on the order of the terms. A NaN among the drawn scores makes the sum NaN,
    and the resample counts for neither system.

    Parameters
    ----------
    X : ndarray of float64, shape (M, G, S)
    indices : ndarray of int64, shape (B, D)
        Resampled input indices in [0, G) (usually D = G draws per resample).
    pairs : ndarray of int64, shape (P, 2)
    progress : callable, optional
        ``progress(iterable, desc=..., total=...)`` wrapping blocks of resamples counted one
        after the other (e.g. :func:`hanna_stats.progress.progress`); the counts add up to
        those of one block.

    Returns
    -------
    ndarray of int64, shape (M, P, 2)
    """
    measures, inputs, systems = X.shape
    # (G, M S): one resample's sums of all measures and systems are one vectorised row update.
    XT = np.ascontiguousarray(X.transpose(1, 0, 2).reshape(inputs, measures * systems))
    rows = len(indices)
    step = max(rows if progress is None else -(-rows // 20), 1)
    blocks = [(lo, min(lo + step, rows)) for lo in range(0, rows, step)]
    if len(blocks) > 1:
        blocks = progress(blocks, desc="bootstrap resamples", total=len(blocks))
    wins = np.zeros((measures, len(pairs), 2), dtype=np.int64)
    for lo, hi in blocks:
        sums = _resample_sums(XT, multiplicities(indices[lo:hi], inputs))
        wins += _count_wins(sums, measures, systems, pairs)
    return wins


def _wins_block(X, indices, pairs, rows):
    """:func:`bootstrap_wins` of the resamples ``lo:hi`` (a task of :func:`paired_bootstrap`
    on an executor)."""
    lo, hi = rows
    return bootstrap_wins(X, indices[lo:hi], pairs)


def win_threshold(resamples, alpha):
    """Smallest number of won resamples that makes a win: ``ceil((1 - alpha) B)``.

    Rounded to 9 decimals first so that ``(1 - 0.05) * 1000`` counts as 950, not 950.0000001.
    """
    return math.ceil(round((1.0 - alpha) * resamples, 9))


def pair_labels(wins, threshold):
    """Labels (..., P) int8 from win counts (..., P, 2): 1 if s1 wins at least ``threshold``
    resamples, 2 if s2 does, else 0."""
    wins = np.asarray(wins)
    labels = np.zeros(wins.shape[:-1], dtype=np.int8)
    labels[wins[..., 0] >= threshold] = 1
    labels[wins[..., 1] >= threshold] = 2
    return labels


def paired_bootstrap(
    X, indices=None, *, resamples=1000, seed=0, alpha=0.05, progress=None, executor=None
):
    """Paired bootstrap comparison of every pair of systems, for every measure.

    For each measure and each pair of systems (s1, s2), each of the B resamples of the inputs
    (row b of ``indices``) gives a mean score per system over the resampled inputs; s1 wins the
    resample if its mean is strictly greater, s2 if its mean is strictly greater (an exact tie
    counts for neither). The label is 1 if s1 wins in at least ``(1 - alpha)`` of the resamples
    (at least :func:`win_threshold` of them), 2 if s2 does, else 0 (Koehn, 2004; the HANNA
    paper's Sec. 5.3 with B = 1000 and alpha = 0.05).

    Parameters
    ----------
    X : array_like of float, shape (M, G, S)
        Scores of M measures on G inputs for S systems.
    indices : array_like of int, shape (B, D), optional
        Resampled input indices in [0, G), shared by all measures (usually D = G). Default:
        ``numpy.random.default_rng(seed).integers(0, G, size=(resamples, G))``.
    resamples : int
        Number of resamples B, in [1, 1,000,000] (ignored when ``indices`` is given).
    seed : int, numpy.random.Generator or None
        Seed of the draw: an int in [0, 2**63), a Generator (advanced by the draw) or None
        (ignored when ``indices`` is given).
    alpha : float
        In (0, 0.5): the confidence ``1 - alpha`` must exceed 1/2, or both systems of a pair
        could win "with confidence".
    progress : callable, optional
        Wraps blocks of resamples (see :func:`bootstrap_wins`); with ``executor``, the blocks
        as they finish.
    executor : distributed.Client, concurrent.futures.Executor or ClusterExecutor, optional
        Count the wins in blocks of resamples on this executor, e.g. a Dask cluster (see
        :mod:`hanna_stats.kernels.distributed`), from the draws made here once; the counts of
        the blocks add up to the same integers. None (the default): in this process.

    Returns
    -------
    PairedBootstrapResult

    Raises
    ------
    ValueError
        Naming the argument with a wrong shape or value.

    Notes
    -----
    Results do not depend on the thread count: each resample's sums are computed by one thread
    in a fixed order.

    References
    ----------
    Koehn, P. (2004). Statistical significance tests for machine translation evaluation. EMNLP.

    Examples
    --------
    >>> X = np.array([[[1.0, 2.0, 1.0], [2.0, 3.0, 2.0], [3.0, 1.0, 3.0]]])
    >>> res = paired_bootstrap(X, resamples=100, seed=0)
    >>> res.pairs.tolist(), res.wins[0, 1].tolist(), res.threshold
    ([[0, 1], [0, 2], [1, 2]], [0, 0], 95)
    >>> idx = np.random.default_rng(0).integers(0, 3, size=(100, 3))
    >>> bool((paired_bootstrap(X, idx).wins == res.wins).all())
    True
    """
    X = as_float_array("X", X, 3)
    if indices is None:
        resamples = check_count("resamples", resamples)
        inputs = X.shape[1]
        indices = check_seed(seed).integers(0, inputs, size=(resamples, inputs))
    indices = check_indices("indices", indices, X.shape[1])
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0.0 < alpha < 0.5:
        # With 1 - alpha > 1/2 the threshold exceeds B / 2, so at most one system reaches it.
        raise ValueError(f"alpha must lie in (0, 0.5) so that a winner is unique; got {alpha!r}")
    pairs = system_pairs(X.shape[2])
    if executor is None:
        wins = bootstrap_wins(X, indices, pairs, progress=progress)
    else:
        cluster = cluster_executor(executor)
        blocks = split(len(indices), cluster.blocks)
        parts = cluster.map(
            _wins_block, (X, indices, pairs), blocks, progress=progress, desc="bootstrap blocks"
        )
        wins = np.sum(parts, axis=0, dtype=np.int64)
    threshold = win_threshold(indices.shape[0], alpha)
    return PairedBootstrapResult(pairs, wins, pair_labels(wins, threshold), threshold)


def _weighted_f1(y_true, y_pred, labels):
    """(R, C) weighted F1 of each row of ``y_true`` against each row of ``y_pred``."""
    n = y_true.shape[1]
    eye = np.eye(labels, dtype=np.int64)
    true_count = eye[y_true].sum(axis=1)  # (R, L)
    pred_count = eye[y_pred].sum(axis=1)  # (C, L)
    # hits[i, j, l]: items labelled l in both row i of y_true and row j of y_pred.
    hits = np.einsum("ikl,jkl->ijl", eye[y_true], eye[y_pred])
    denominator = true_count[:, None, :] + pred_count[None, :, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(true_count[:, None, :] > 0, 2.0 * hits / denominator, 0.0)
    total = np.zeros(hits.shape[:2])
    for label in range(labels):  # in label order, as the sum is defined
        total += f1[:, :, label] * true_count[:, None, label]
    return total / n


def weighted_f1(y_true, y_pred):
    """Support-weighted F1 score of label vectors, for every pair of rows.

    For each label l present in ``y_true`` or ``y_pred``, with ``tp_l`` the items labelled l in
    both, ``t_l`` in ``y_true`` and ``p_l`` in ``y_pred``: ``F1_l = 2 tp_l / (t_l + p_l)``
    (the harmonic mean of precision and recall; 0 when tp_l = 0), and

    .. math:: F1_w = \\sum_l \\frac{t_l}{n} F1_l,

    the semantics of scikit-learn's ``f1_score(y_true, y_pred, average="weighted")`` (labels
    absent from ``y_true`` weigh 0; zero division gives 0).

    Parameters
    ----------
    y_true : array_like of int, shape (n,) or (R, n)
    y_pred : array_like of int, shape (n,) or (C, n)
        Non-negative integer labels.

    Returns
    -------
    float or ndarray of float64, shape (R, C)
        A float when both inputs are 1-D; else ``[i, j]`` scores row i of ``y_true`` against row
        j of ``y_pred`` (a 1-D input counts as one row).

    Examples
    --------
    >>> weighted_f1([0, 1, 2, 2], [0, 2, 2, 2])
    0.65
    """
    arrays = []
    for name, value in (("y_true", y_true), ("y_pred", y_pred)):
        array = np.asarray(value)
        if array.ndim not in (1, 2) or array.shape[-1] == 0:
            raise ValueError(f"{name} must be a non-empty 1-D or 2-D label array")
        if not np.issubdtype(array.dtype, np.integer) or array.min() < 0:
            raise ValueError(f"{name} must hold non-negative integer labels")
        arrays.append(np.ascontiguousarray(array.reshape(-1, array.shape[-1]), dtype=np.int64))
    if arrays[0].shape[1] != arrays[1].shape[1]:
        raise ValueError("y_true and y_pred must have the same number of items")
    labels = int(max(arrays[0].max(), arrays[1].max())) + 1
    out = _weighted_f1(arrays[0], arrays[1], labels)
    if np.ndim(y_true) == 1 and np.ndim(y_pred) == 1:
        return float(out[0, 0])
    return out
