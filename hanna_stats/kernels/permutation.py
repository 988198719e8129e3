"""PERM-BOTH permutation tests of the difference between two measures' correlations.

Cubes have shape (measures, inputs G, systems S), float64, as in
:mod:`hanna_stats.kernels.grouped`. The swaps are drawn once, in Python, by a
:class:`numpy.random.Generator` seeded by the caller (or passed in), and are shared by all
pairs; compiled loops assign each pair to one thread and sum in a fixed order, so results do
not depend on the number of threads.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ._options import (
    ALTERNATIVES,
    KENDALL,
    LEVELS,
    check_count,
    check_option,
    check_seed,
    validated,
)
from ._prepared import _prepare_rows, _with_criterion
from .grouped import at_level, level_correlation

#: Relative tolerance of the permutation p-value's comparisons (as scipy.stats.permutation_test):
#: a permuted statistic within ``RTOL |observed|`` of the observed one counts as reaching it.
RTOL = 100 * np.finfo(np.float64).eps


class PermutationTestResult(NamedTuple):
    """Result of :func:`permutation_test_pairs`.

    ``statistic`` (M,): each measure's level correlation with the criterion; ``delta`` (M, M):
    ``statistic[a] - statistic[b]``; ``pvalue`` (M, M): p-value for the pair (a, b) under
    ``alternative`` (``"greater"``: the correlation of ``a`` exceeds that of ``b``);
    ``n_valid`` (M, M) int64: permutations whose statistic was defined (the p-value's
    denominator). The diagonal is NaN / 0.
    """

    statistic: np.ndarray
    delta: np.ndarray
    pvalue: np.ndarray
    n_valid: np.ndarray


def permutation_swaps(n_inputs, n_systems, *, permutations=1000, seed=0):
    """Swap indicators (P, G, S) uint8 of PERM-BOTH, drawn once for all pairs.

    ``numpy.random.default_rng(seed).integers(0, 2, (permutations, n_inputs, n_systems),
    dtype=numpy.uint8)``: 1 swaps the two measures' scores of that (input, system) cell.
    ``permutations`` is an int in [1, 1,000,000]; ``seed`` an int in [0, 2**63), a
    Generator (advanced by the draw) or None.

    Examples
    --------
    >>> permutation_swaps(2, 3, permutations=4, seed=0).shape
    (4, 2, 3)
    """
    permutations = check_count("permutations", permutations)
    return check_seed(seed).integers(0, 2, (permutations, n_inputs, n_systems), dtype=np.uint8)


def standardize(X):
    """z-scores of each measure over all its cells: ``(x - mean) / std`` (ddof 0), as
    ``scipy.stats.zscore`` of the flattened matrix; a constant measure becomes all zeros."""
    flat = X.reshape(X.shape[0], -1)
    mean = flat.mean(axis=1)
    std = flat.std(axis=1)
    std[std == 0] = 1.0
    return ((X - mean[:, None, None]) / std[:, None, None]).reshape(X.shape)


@njit(cache=True, parallel=True)
def _swapped_system_sums(Z, W):
    """``T[p, m, s] = sum_g W[p, g, s] Z[m, g, s]`` / G, the swapped part of each system mean.

    Parameters
    ----------
    Z : ndarray of float64, shape (M, G, S)
    W : ndarray of uint8, shape (P, G, S)

    Returns
    -------
    ndarray of float64, shape (P, M, S)
    """
    measures, groups, systems = Z.shape
    perms = W.shape[0]
    Zt = np.ascontiguousarray(Z.transpose(1, 2, 0))  # (G, S, M): one cell's measures together
    T = np.zeros((perms, measures, systems))
    for p in prange(perms):
        acc = np.zeros((systems, measures))
        for g in range(groups):
            for s in range(systems):
                if W[p, g, s]:
                    for m in range(measures):
                        acc[s, m] += Zt[g, s, m]
        for s in range(systems):
            for m in range(measures):
                T[p, m, s] = acc[s, m] / groups
    return T


@njit(cache=True, parallel=True)
def _system_null(means, T, criterion, pairs, method_code, variant_code):
    # Column 0: the observed delta; column 1 + p: permutation p. A permuted system mean of a is
    # mean_a + T_b - T_a (cells where W = 1 hold b's score), that of b is mean_b + T_a - T_b.
    K = pairs.shape[0]
    perms, _, n = T.shape
    c = criterion.reshape(1, n)
    prepared = _prepare_rows(c, method_code)
    kendall = method_code == KENDALL
    out = np.empty((K, perms + 1))
    for k in prange(K):
        a = pairs[k, 0]
        b = pairs[k, 1]
        xa = np.empty(n)
        xb = np.empty(n)
        unit = np.empty(0 if kendall else n)
        signs = np.empty(n * (n - 1) // 2 if kendall else 0, dtype=np.int8)
        for p in range(perms + 1):
            for s in range(n):
                d = T[p - 1, b, s] - T[p - 1, a, s] if p > 0 else 0.0
                xa[s] = means[a, s] + d
                xb[s] = means[b, s] - d
            ra = _with_criterion(xa, c[0], prepared, 0, method_code, variant_code, unit, signs)
            rb = _with_criterion(xb, c[0], prepared, 0, method_code, variant_code, unit, signs)
            out[k, p] = ra - rb
    return out


@njit(cache=True, parallel=True)
def _item_null(Z, C, W, pairs, method_code, variant_code):
    # As _system_null, per input: the mean over defined inputs of each swapped measure's
    # correlation with the criterion; NaN when either mean has no defined input.
    K = pairs.shape[0]
    perms, groups, n = W.shape
    prepared = _prepare_rows(C, method_code)
    kendall = method_code == KENDALL
    out = np.empty((K, perms + 1))
    for k in prange(K):
        a = pairs[k, 0]
        b = pairs[k, 1]
        xa = np.empty(n)
        xb = np.empty(n)
        unit = np.empty(0 if kendall else n)
        signs = np.empty(n * (n - 1) // 2 if kendall else 0, dtype=np.int8)
        for p in range(perms + 1):
            sum_a = 0.0
            sum_b = 0.0
            n_a = 0
            n_b = 0
            for g in range(groups):
                for s in range(n):
                    swap = p > 0 and W[p - 1, g, s] != 0
                    xa[s] = Z[b, g, s] if swap else Z[a, g, s]
                    xb[s] = Z[a, g, s] if swap else Z[b, g, s]
                ra = _with_criterion(xa, C[g], prepared, g, method_code, variant_code, unit, signs)
                rb = _with_criterion(xb, C[g], prepared, g, method_code, variant_code, unit, signs)
                if not np.isnan(ra):
                    sum_a += ra
                    n_a += 1
                if not np.isnan(rb):
                    sum_b += rb
                    n_b += 1
            out[k, p] = sum_a / n_a - sum_b / n_b if n_a > 0 and n_b > 0 else np.nan
    return out


def permutation_null(X, criterion, pairs, swaps, *, level="system", method="kendall", variant="b"):
    """Observed and permuted differences of correlation for measure pairs (PERM-BOTH).

    Parameters
    ----------
    X : ndarray of float64, shape (M, G, S), without NaN
    criterion : ndarray of float64, shape (G, S)
    pairs : ndarray of int64, shape (K, 2)
        Pairs (a, b) of measures of X.
    swaps : ndarray of uint8, shape (P, G, S)
        :func:`permutation_swaps`.
    level, method, variant
        As :func:`permutation_test_pairs`.

    Returns
    -------
    ndarray of float64, shape (K, P + 1)
        Column 0: ``r_a - r_b`` on the standardized data; column ``1 + p``: the same after the
        swaps of permutation ``p``; NaN where undefined.
    """
    Z = standardize(X)
    method_code = check_option("method", method)
    variant_code = check_option("variant", variant)
    pairs = np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2)
    if level == "system":
        means = np.ascontiguousarray(Z.mean(axis=1))
        T = _swapped_system_sums(Z, swaps)
        c = np.ascontiguousarray(at_level(criterion[None], "system", True)[0, 0])
        return _system_null(means, T, c, pairs, method_code, variant_code)
    if level == "global":
        Z = Z.reshape(Z.shape[0], 1, -1)
        criterion = criterion.reshape(1, -1)
        swaps = swaps.reshape(swaps.shape[0], 1, -1)
    return _item_null(Z, np.ascontiguousarray(criterion), swaps, pairs, method_code, variant_code)


def permutation_pvalues(null, alternative="two-sided"):
    """p-values and defined-permutation counts from :func:`permutation_null`'s output.

    ``p = #{p : d_p >= d} / n_valid`` (``"greater"``), ``#{d_p <= d}`` (``"less"``) or
    ``#{|d_p| >= |d|}`` (``"two-sided"``), over the ``n_valid`` permutations whose ``d_p`` is
    defined, with the comparisons relaxed by ``RTOL |d|``, as scipy.stats.permutation_test.
    As in Deutsch et al. (2021) and mt-metrics-eval, the identity permutation is not added:
    ``p`` can be 0; ``(count + 1) / (n_valid + 1)`` is the conservative alternative.
    Returns ``(pvalue, n_valid)``, each shape (K,); NaN where ``d`` or every ``d_p`` is NaN.
    """
    check_option("alternative", alternative, ALTERNATIVES)
    observed = null[:, :1]
    perms = null[:, 1:]
    gamma = RTOL * np.abs(observed)
    n_valid = (~np.isnan(perms)).sum(axis=1)
    if alternative == "greater":
        hits = perms >= observed - gamma
    elif alternative == "less":
        hits = perms <= observed + gamma
    else:
        hits = np.abs(perms) >= np.abs(observed) - gamma
    with np.errstate(invalid="ignore", divide="ignore"):
        p = hits.sum(axis=1) / n_valid
    p[np.isnan(observed[:, 0]) | (n_valid == 0)] = np.nan
    return p, n_valid


def permutation_test_pairs(
    X,
    criterion,
    *,
    level="system",
    method="kendall",
    variant="b",
    permutations=1000,
    alternative="two-sided",
    seed=0,
    swaps=None,
    progress=None,
):
    """PERM-BOTH permutation tests of ``r(a, criterion) - r(b, criterion)`` for all pairs.

    The paired permutation test of Deutsch, Dror and Roth (2021), as implemented by
    mt-metrics-eval's ``PermutationSigDiff``: each measure is standardized (z-scores over all
    its cells, so that swapped scores share a scale); then, in each permutation, every
    (input, system) cell independently swaps the two measures' standardized scores with
    probability 1/2, and the difference of their level correlations with the criterion is
    recomputed. At system level the swapped cells enter the per-system means (over inputs),
    computed for all pairs at once from ``T[p, m, s] = sum_g W[p, g, s] z[m, g, s] / G``
    (a permuted mean of ``a`` is ``mean_a + T_b - T_a``); at item and global level the swapped
    vectors are correlated per input. One draw of swaps (:func:`permutation_swaps`) serves every
    pair. p-values as :func:`permutation_pvalues`.

    ``statistic`` and ``delta`` are computed on the original data (they equal
    :func:`level_correlation`'s); the test's observed difference is that of the standardized
    data (the identity permutation), which agrees up to rounding. The criterion is not
    standardized (no correlation depends on it).

    Parameters
    ----------
    X : array_like, shape (M, G, S)
        Measures (metrics), complete (a swap needs both scores).
    criterion : array_like, shape (G, S)
        The criterion; NaN allowed (omitted pairwise, and in system means).
    level : {"item", "system", "global"}
    method : {"pearson", "spearman", "kendall"}
    variant : {"a", "b", "c"}
    permutations : int
        Number of permutations P, in [1, 1,000,000] (ignored when ``swaps`` is given).
    alternative : {"two-sided", "less", "greater"}
    seed : int, numpy.random.Generator or None
        Seeds :func:`permutation_swaps`: an int in [0, 2**63), a Generator or None (ignored
        when ``swaps`` is given).
    swaps : array_like of 0/1, shape (P, G, S), optional
        Precomputed swap indicators (1 swaps the cell), e.g. from :func:`permutation_swaps`.
    progress : callable, optional
        ``progress(iterable, desc=..., total=...)`` wrapping the chunks of permutations (about
        20) that are computed one after the other, e.g. :func:`hanna_stats._progress.progress`
        for a bar on a terminal. The chunks change neither the work nor the result.

    Returns
    -------
    PermutationTestResult

    References
    ----------
    D. Deutsch, R. Dror and D. Roth, "A Statistical Analysis of Summarization Evaluation
    Metrics Using Resampling Methods", TACL 9, 2021 (PERM-BOTH); google-research/mt-metrics-eval
    ``stats.PermutationSigDiff``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> c = rng.normal(size=(20, 6))
    >>> X = np.stack([c + 0.1 * rng.normal(size=c.shape), rng.normal(size=c.shape)])
    >>> res = permutation_test_pairs(X, c, level="item", permutations=200, alternative="greater")
    >>> float(res.pvalue[0, 1]), float(res.pvalue[1, 0]), int(res.n_valid[0, 1])
    (0.0, 1.0, 200)
    """
    check_option("level", level, LEVELS)
    check_option("alternative", alternative, ALTERNATIVES)
    X = validated({"X": X}, 3, 0, method=method, variant=variant)[0]
    C = validated({"criterion": criterion}, 2, 0)[0]
    if C.shape != X.shape[1:]:
        raise ValueError(f"criterion must have shape {X.shape[1:]}; got {C.shape}")
    if np.isnan(X).any():
        raise ValueError("X must not contain NaN: PERM-BOTH swaps the two measures' scores")
    if swaps is None:
        swaps = permutation_swaps(X.shape[1], X.shape[2], permutations=permutations, seed=seed)
    swaps = np.ascontiguousarray(swaps, dtype=np.uint8)
    if swaps.ndim != 3 or swaps.shape[1:] != X.shape[1:] or swaps.shape[0] == 0:
        raise ValueError(
            f"swaps must have shape (P, {X.shape[1]}, {X.shape[2]}); got {swaps.shape}"
        )
    M = X.shape[0]
    iu = np.triu_indices(M, 1)
    pairs = np.stack(iu, axis=1)
    step = max(1, -(-swaps.shape[0] // 20))
    starts = range(0, swaps.shape[0], step)
    if progress is not None:
        starts = progress(starts, desc="permutations", total=len(starts))
    parts = [
        permutation_null(
            X, C, pairs, swaps[k : k + step], level=level, method=method, variant=variant
        )
        for k in starts
    ]
    # Column 0 (the observed difference) is the same in every part.
    null = np.concatenate([parts[0][:, :1], *(part[:, 1:] for part in parts)], axis=1)
    r = level_correlation(X, C[None], level=level, method=method, variant=variant).statistic[:, 0]
    delta = r[:, None] - r[None, :]
    pvalue = np.full((M, M), np.nan)
    n_valid = np.zeros((M, M), dtype=np.int64)
    p, n = permutation_pvalues(null, alternative)
    pvalue[iu] = p
    n_valid[iu] = n
    n_valid[iu[1], iu[0]] = n
    pvalue[iu[1], iu[0]] = permutation_pvalues(-null, alternative)[0]  # (b, a): -delta
    return PermutationTestResult(r, delta, pvalue, n_valid)
