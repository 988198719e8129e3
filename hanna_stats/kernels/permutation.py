"""Permutation tests of the difference between two measures' correlations (PERM-BOTH,
PERM-SYS, PERM-INPUT).

Cubes have shape (measures, inputs G, systems S), float64, as in
:mod:`hanna_stats.kernels.levels`. The swaps are drawn once, in Python, by a
:class:`numpy.random.Generator` seeded by the caller (or passed in), and are shared by all
pairs; compiled loops give each output value to one thread and sum in a fixed order, so
results do not depend on the number of threads.

Item-level Kendall tau-a/tau-b (the paper's story level) has a fast path,
:func:`_kendall_item_null`: for one input and one pair of measures, the permuted measure's
``C - D`` and tied-pair count are quadratic polynomials in the swap bits, so a permutation's
counts for all pairs are a few integer vector adds; see :func:`permutation_null`.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import NamedTuple

import numpy as np
from numba import get_num_threads, njit, prange

from hanna_stats.vocabulary import WORDS

from ._options import (
    KENDALL,
    TAU_B,
    check_count,
    check_option,
    check_seed,
    memory_budget,
    validated,
)
from ._prepared import prepare_rows, with_criterion
from .distributed import cluster_executor, split
from .levels import at_level, level_correlation

#: Relative tolerance of the permutation p-value's comparisons (as scipy.stats.permutation_test):
#: a permuted statistic within ``RTOL |observed|`` of the observed one counts as reaching it.
RTOL = 100 * np.finfo(np.float64).eps


class PermutationTestResult(NamedTuple):
    """Result of :func:`permutation_test_pairs`.

    ``statistic`` (M,): each measure's level correlation with the criterion; ``delta`` (M, M):
    ``statistic[a] - statistic[b]``; ``pvalue`` (M, M): p-value for the pair (a, b) under
    ``alternative`` (``"greater"``: the correlation of ``a`` exceeds that of ``b``);
    ``n_valid`` (M, M) int64: permutations whose statistic was defined (the p-value's
    denominator); ``n_drawn`` (M, M) int64: permutations drawn for the pair (all of them, or
    fewer when early stopping settled it); ``n_missing`` (M, M) int64: the (input, system)
    cells with a criterion value that the pair's test left out because ``a`` or ``b`` has no
    score there; ``n_inputs_dropped`` / ``n_systems_dropped`` (M, M) int64: the inputs and
    systems with a criterion value left with no cell for the pair. The diagonal is NaN / 0.
    """

    statistic: np.ndarray
    delta: np.ndarray
    pvalue: np.ndarray
    n_valid: np.ndarray
    n_drawn: np.ndarray
    n_missing: np.ndarray
    n_inputs_dropped: np.ndarray
    n_systems_dropped: np.ndarray


def permutation_swaps(n_inputs, n_systems, *, permutations=1000, seed=0, unit="both"):
    """Swap indicators (P, G, S) uint8, drawn once for all pairs; 1 swaps the two measures'
    scores of that (input, system) cell.

    The resampling units of Deutsch, Dror and Roth (2021), each cell swapped with probability
    1/2:

    - ``"both"`` (PERM-BOTH): one coin per cell, ``numpy.random.default_rng(seed).integers(0,
      2, (permutations, n_inputs, n_systems), dtype=numpy.uint8)``;
    - ``"systems"`` (PERM-SYS): one coin per system, applied to all its inputs (coins drawn as
      ``integers(0, 2, (permutations, 1, n_systems))``);
    - ``"inputs"`` (PERM-INPUT): one coin per input, applied to all systems (``(permutations,
      n_inputs, 1)``).

    ``permutations`` is an int in [1, 1,000,000]; ``seed`` an int in [0, 2**63), a
    Generator (advanced by the draw) or None.

    Examples
    --------
    >>> permutation_swaps(2, 3, permutations=4, seed=0).shape
    (4, 2, 3)
    >>> w = permutation_swaps(2, 3, permutations=4, seed=0, unit="systems")
    >>> bool((w == w[:, :1]).all())  # every input of a system shares its coin
    True
    """
    permutations = check_count("permutations", permutations)
    unit = WORDS["resample"][check_option("unit", unit, WORDS["resample"])]
    shape = {
        "both": (permutations, n_inputs, n_systems),
        "systems": (permutations, 1, n_systems),
        "inputs": (permutations, n_inputs, 1),
    }[unit]
    coins = check_seed(seed).integers(0, 2, shape, dtype=np.uint8)
    return np.ascontiguousarray(np.broadcast_to(coins, (permutations, n_inputs, n_systems)))


def standardize(X):
    """z-scores of each measure over all its cells: ``(x - mean) / std`` (ddof 0), as
    ``scipy.stats.zscore`` of the flattened matrix (``nan_policy="omit"``: missing cells stay
    NaN and are left out of the mean and std); a constant measure becomes all zeros."""
    flat = X.reshape(X.shape[0], -1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a measure with no score: NaN
        mean = np.nanmean(flat, axis=1)
        std = np.nanstd(flat, axis=1)
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
    prepared = prepare_rows(c, method_code)
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
            ra = with_criterion(xa, c[0], prepared, 0, method_code, variant_code, unit, signs)
            rb = with_criterion(xb, c[0], prepared, 0, method_code, variant_code, unit, signs)
            out[k, p] = ra - rb
    return out


@njit(cache=True, parallel=True)
def _item_null(Z, C, W, pairs, method_code, variant_code):
    # As _system_null, per input: the mean over defined inputs of each swapped measure's
    # correlation with the criterion; NaN when either mean has no defined input.
    K = pairs.shape[0]
    perms, groups, n = W.shape
    prepared = prepare_rows(C, method_code)
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
                ra = with_criterion(xa, C[g], prepared, g, method_code, variant_code, unit, signs)
                rb = with_criterion(xb, C[g], prepared, g, method_code, variant_code, unit, signs)
                if not np.isnan(ra):
                    sum_a += ra
                    n_a += 1
                if not np.isnan(rb):
                    sum_b += rb
                    n_b += 1
            out[k, p] = sum_a / n_a - sum_b / n_b if n_a > 0 and n_b > 0 else np.nan
    return out


def _pearson_global_terms(Z, criterion, pairs):
    """The cell terms of :func:`_pearson_global_null`: ``(cells, terms, base)``.

    ``cells`` (N,) int64: the flat (input, system) cells where the criterion is present (the
    pair's measures are present there too, :func:`_missing_jobs`); with ``c`` the criterion
    there, centred, ``d = z_b - z_a`` and ``e = z_b^2 - z_a^2`` per cell, ``terms`` (N, K, 3)
    holds ``d``, ``e`` and ``d c`` per cell and pair, and ``base`` (K, 7) the unswapped sums
    ``sum z_a``, ``sum z_a^2``, ``sum z_a c``, the same of ``z_b``, and ``sum c^2``."""
    flat = Z.reshape(Z.shape[0], -1)
    c = criterion.reshape(-1)
    cells = np.flatnonzero(~np.isnan(c))
    c = c[cells] - c[cells].mean()
    za, zb = flat[pairs[:, 0]][:, cells], flat[pairs[:, 1]][:, cells]  # (K, N)
    d = zb - za
    terms = np.stack([d, zb * zb - za * za, d * c], axis=-1)  # (K, N, 3)
    terms = np.ascontiguousarray(terms.transpose(1, 0, 2))
    sums = [za.sum(1), (za * za).sum(1), za @ c, zb.sum(1), (zb * zb).sum(1), zb @ c]
    base = np.stack([*sums, np.full(len(pairs), c @ c)], axis=1)
    return cells, terms, base


@njit(cache=True, parallel=True)
def _pearson_global_null(cells, terms, base, W, columns):
    """:func:`permutation_null` of global-level Pearson from sums: a swap exchanges the two
    measures' scores on a cell, so the swapped ``x_a = z_a + w d`` has ``sum x_a = sum z_a +
    sum w d``, ``sum x_a^2 = sum z_a^2 + sum w e`` and ``sum x_a c = sum z_a c + sum w d c``
    (``x_b`` subtracts the same), and ``r = sum x c / sqrt((sum x^2 - (sum x)^2 / N) sum c^2)``
    with ``c`` centred: three sums over the swapped cells a pair and permutation, instead of
    both correlations over every cell. ``W`` (P, cells) uint8 swap bits; ``columns`` the pairs
    of :func:`_pearson_global_terms`' arrays to test. Column 0 (no swap) comes from the same
    formula."""
    n_cells = terms.shape[0]
    K = columns.size
    perms = W.shape[0]
    out = np.empty((K, perms + 1))
    for p in prange(perms + 1):
        acc = np.zeros((K, 3))
        if p > 0:
            for i in range(n_cells):
                w = np.float64(W[p - 1, cells[i]])
                for k in range(K):
                    for t in range(3):
                        acc[k, t] += w * terms[i, columns[k], t]
        for k in range(K):
            r = np.empty(2)
            for side in range(2):
                sign = 1.0 - 2.0 * side  # x_a adds the swapped sums, x_b subtracts them
                c = columns[k]
                total = base[c, 3 * side] + sign * acc[k, 0]
                squares = base[c, 3 * side + 1] + sign * acc[k, 1]
                product = base[c, 3 * side + 2] + sign * acc[k, 2]
                spread = (squares - total * total / n_cells) * base[c, 6]
                r[side] = min(1.0, max(-1.0, product / math.sqrt(spread))) if spread > 0 else np.nan
            out[k, p] = r[0] - r[1]
    return out


@njit(cache=True, inline="always")
def _packed(x_s, x_t, c, base):
    # One system pair's packed term: base if x ties it, else sign(x_t - x_s) times the
    # criterion's sign c (signs from comparisons, as prepare_column).
    sign = np.int64(x_t > x_s) - np.int64(x_t < x_s)
    return base if sign == 0 else sign * c


@njit(cache=True, parallel=True)
def _kendall_coefficients(Z, C, pairs, base, coef):
    """Fill ``coef`` (G, F, K), ``F = 1 + S + S (S - 1) / 2``: per input ``g`` and pair ``k =
    (a, b)``, the coefficients of the polynomial in the swap bits ``w`` (S,) of input ``g``

        Y(w) = sum_{s<t, criterion defined} f_st(w_s, w_t),
        f_st(u, v) = sign(x_t - x_s) sign(c_t - c_s) + base [x_t == x_s],

    where ``x_s`` is ``Z[b, g, s]`` if ``u`` else ``Z[a, g, s]`` (``x_t`` likewise with
    ``v``): ``Y`` packs a's permuted ``C - D`` and tied-pair count. With ``f(u, v) = f00 +
    (f10 - f00) u + (f01 - f00) v + (f11 - f10 - f01 + f00) u v``: feature 0 is the constant,
    ``1 + s`` the coefficient of ``w_s``, ``1 + S + q`` that of ``w_s w_t`` for the ``q``-th
    pair ``s < t`` in row-major order. ``coef`` is int32 or int64 (:func:`_packing`)."""
    K = pairs.shape[0]
    G, S = C.shape
    for g in prange(G):  # one input's slab coef[g] per thread, written row by row
        const = np.zeros(K, dtype=np.int64)
        lin = np.zeros((S, K), dtype=np.int64)
        q = 1 + S
        for s in range(S):
            for t in range(s + 1, S):
                if np.isnan(C[g, s]) or np.isnan(C[g, t]):
                    for k in range(K):
                        coef[g, q, k] = 0
                else:
                    c = np.int64(C[g, t] > C[g, s]) - np.int64(C[g, t] < C[g, s])
                    for k in range(K):
                        a = pairs[k, 0]
                        b = pairs[k, 1]
                        # (w_s, w_t) = (0, 0), (1, 0), (0, 1), (1, 1)
                        f00 = _packed(Z[a, g, s], Z[a, g, t], c, base)
                        f10 = _packed(Z[b, g, s], Z[a, g, t], c, base)
                        f01 = _packed(Z[a, g, s], Z[b, g, t], c, base)
                        f11 = _packed(Z[b, g, s], Z[b, g, t], c, base)
                        const[k] += f00
                        lin[s, k] += f10 - f00
                        lin[t, k] += f01 - f00
                        coef[g, q, k] = f11 - f10 - f01 + f00
                q += 1
        for k in range(K):
            coef[g, 0, k] = const[k]
        for s in range(S):
            for k in range(K):
                coef[g, 1 + s, k] = lin[s, k]


@njit(cache=True, inline="always")
def _packed_tau(y, n_pairs, shift, n0, root_n2, root, tau_b):
    """The tau of one packed value ``y = (C - D) + 2**shift * ties`` of an input whose
    criterion has ``n0`` valid pairs (``root_n2 = sqrt(n0 - n2)``), formed as :func:`tau_by_code`
    forms it (``root[v] = sqrt(v)``, correctly rounded as ``math.sqrt``): the same IEEE
    operations in the same order, so the same bits; NaN when ``x`` ties every pair."""
    v = np.int64(y) + n_pairs  # (C - D) + n_pairs in the low bits, ties above
    ties = v >> shift
    if ties >= n0:
        return np.nan
    s = (v & ((np.int64(1) << shift) - 1)) - n_pairs
    value = s / root[n0 - ties] / root_n2 if tau_b else s / n0
    return min(1.0, max(-1.0, value))


@njit(cache=True, parallel=True)
def _kendall_null_sums(coef, n0, root_n2, root, shift, tau_b, W, iu, ju, block, sums, counts):
    """Per row ``r`` of the output (``r < P1``: measure a under swaps ``W[:, r]``; ``r >= P1``:
    measure b, i.e. a's polynomial at the complementary swaps) and pair ``k``: the sum over the
    inputs, in order, of the defined taus (:func:`_packed_tau`) of the packed counts ``Y =
    sum_f coef[g, f, k] x_f`` over the features ``x = [1, w_s, w_s w_t]`` that are 1; inputs
    with ``n0[g] == 0`` (criterion undefined) are skipped.

    The rows are taken ``block`` at a time (one thread each), each input's coefficients once
    for all rows of the block (they stay in cache); every ``sums[r, k]`` still adds its inputs
    in input order, so neither ``block`` nor the thread count changes a bit."""
    G, _, K = coef.shape
    P1, S = W.shape[1], W.shape[2]
    n_pairs = iu.size
    rows = 2 * P1
    for chunk in prange(-(-rows // block)):
        y = np.empty(K, dtype=coef.dtype)
        on = np.empty(S, dtype=np.int64)  # the systems whose bit is 1
        for g in range(G):
            if n0[g] == 0:
                continue
            for r in range(chunk * block, min(rows, (chunk + 1) * block)):
                flip = r >= P1
                p = np.int64(r) - P1 if flip else np.int64(r)
                # Explicit loops, no array views: their reference counts would contend
                # across threads.
                # Integer sums: their order does not matter.
                for k in range(K):
                    y[k] = coef[g, 0, k]
                n_on = 0
                for s in range(S):
                    if (W[g, p, s] != 0) != flip:
                        on[n_on] = s
                        n_on += 1
                        for k in range(K):
                            y[k] += coef[g, 1 + s, k]
                for i in range(n_on):  # the features w_s w_t that are 1, without a branch
                    s = on[i]
                    row = 1 + S + s * (2 * S - s - 1) // 2 - s - 1  # + t: pair (s, t)
                    for j in range(i + 1, n_on):
                        f = row + on[j]
                        for k in range(K):
                            y[k] += coef[g, f, k]
                for k in range(K):
                    value = _packed_tau(y[k], n_pairs, shift, n0[g], root_n2[g], root, tau_b)
                    if not np.isnan(value):
                        sums[r, k] += value
                        counts[r, k] += 1


#: Rows (permutations x the two measures) of :func:`_kendall_null_sums` that share one pass over
#: an input's coefficients.
NULL_ROW_BLOCK = 16


def _packing(S):
    """``(shift, dtype)`` of the packed counts of ``S`` systems: ``Y = (C - D) + 2**shift *
    ties`` with ``2**shift > 2 n_pairs`` (so ``C - D + n_pairs`` fits the low bits), in int32
    while every partial sum of coefficients is below ``9 n_pairs 2**shift < 2**31`` (up to 128
    systems), int64 beyond."""
    n_pairs = S * (S - 1) // 2
    shift = (2 * n_pairs).bit_length()
    return shift, np.int32 if 9 * n_pairs * 2**shift < 2**31 else np.int64


class _KendallItem(NamedTuple):
    """Pairs prepared for :func:`_kendall_item_null`: ``coef`` (G, F, K) int32 or int64 from
    :func:`_kendall_coefficients`, with ``Y = (C - D) + 2**shift * ties``; per input, ``n0``
    (G,) the criterion's valid pairs (0: the criterion is constant or too short there) and
    ``root_n2`` (G,) ``sqrt(n0 - n2)`` (``n2`` its tied pairs); ``root`` (n_pairs + 1,)
    ``sqrt(v)``; ``tau_b`` the variant; ``iu``/``ju`` the system pairs. Memory: the
    coefficients, and O(G + S^2) beside them."""

    coef: np.ndarray
    n0: np.ndarray
    root_n2: np.ndarray
    root: np.ndarray
    shift: int
    tau_b: bool
    iu: np.ndarray
    ju: np.ndarray


def _kendall_item_prepare(Z, C, pairs, variant_code):
    """:class:`_KendallItem` of ``pairs`` of the standardized cube ``Z`` and criterion ``C``."""
    G, S = C.shape
    iu, ju = np.triu_indices(S, 1)
    n_pairs = iu.size
    shift, dtype = _packing(S)
    coef = np.empty((G, 1 + S + n_pairs, pairs.shape[0]), dtype=dtype)
    _kendall_coefficients(Z, C, pairs, 2**shift, coef)
    # tau_by_code's operands: tau-b = (C - D) / sqrt(n0 - ties) / sqrt(n0 - n2),
    # tau-a = (C - D) / n0.
    n0 = np.zeros(G, dtype=np.int64)
    root_n2 = np.ones(G)
    for g in range(G):
        c = C[g][~np.isnan(C[g])]
        pairs_g = c.size * (c.size - 1) // 2
        n2 = int(sum(t * (t - 1) // 2 for t in np.unique(c, return_counts=True)[1]))
        if pairs_g > 0 and n2 < pairs_g:  # else the criterion is undefined for every measure
            n0[g] = pairs_g
            root_n2[g] = math.sqrt(pairs_g - n2)
    root = np.array([math.sqrt(v) for v in range(n_pairs + 1)])
    return _KendallItem(coef, n0, root_n2, root, shift, variant_code == TAU_B, iu, ju)


def _kendall_item_null(prepared, swaps, columns):
    """:func:`_item_null` for Kendall tau-a and tau-b, bit for bit, from integer polynomials.

    For input ``g`` and pair (a, b), the permuted a's ``C - D`` and its tied pairs are sums over
    the system pairs ``s < t`` of terms that depend on the two swap bits ``(w_s, w_t)`` only,
    so both are quadratic polynomials in the bits (:func:`_kendall_coefficients`), packed into
    one integer ``Y = (C - D) + base * ties`` (``base = 2**shift > 2 n_pairs``, see
    :func:`_packing`). A permutation's ``Y`` for all pairs is then the sum of the coefficient
    rows of its features ``[1, w_s, w_s w_t]`` that are 1 (contiguous int32 vector adds over
    the pairs); b's values are the same polynomial at ``1 - w`` (b's permuted scores are a's
    with the complementary swaps). The tau of each ``Y`` is decoded and formed as
    :func:`tau_by_code` forms it (:func:`_packed_tau`: the same floating-point operations on the
    same operands), so the values equal the slow path's to the last bit, with O(G + S^2) memory
    beside the coefficients. Cost: about ``G (2 P) (1 + S / 2 + n_pairs / 4) K`` integer adds
    instead of ``G (2 P) K`` full tau computations: per input, permutation and pair, O(S^2).
    ``columns`` selects pairs of ``prepared``.
    """
    coef, n0, root_n2, root, shift, tau_b, iu, ju = prepared
    if columns.size < coef.shape[2]:
        coef = np.ascontiguousarray(coef[:, :, columns])
    K = coef.shape[2]
    W = np.concatenate([np.zeros((1, *swaps.shape[1:]), np.uint8), swaps])  # identity first
    W = np.ascontiguousarray(W.transpose(1, 0, 2))  # (G, P + 1, S)
    P1 = W.shape[1]
    sums = np.zeros((2 * P1, K))
    counts = np.zeros((2 * P1, K), dtype=np.int64)
    block = max(1, min(NULL_ROW_BLOCK, -(-2 * P1 // get_num_threads())))
    _kendall_null_sums(coef, n0, root_n2, root, shift, tau_b, W, iu, ju, block, sums, counts)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = sums[:P1] / counts[:P1] - sums[P1:] / counts[P1:]
    out[(counts[:P1] == 0) | (counts[P1:] == 0)] = np.nan
    return np.ascontiguousarray(out.T)


def permutation_null(X, criterion, pairs, swaps, *, level="system", method="kendall", variant="b"):
    """Observed and permuted differences of correlation for measure pairs.

    Parameters
    ----------
    X : ndarray of float64, shape (M, G, S)
        NaN only where the criterion is NaN too, the same cells in every measure of a pair
        (:func:`_missing_jobs` arranges that).
    criterion : ndarray of float64, shape (G, S)
    pairs : ndarray of int64, shape (K, 2)
        Pairs (a, b) of measures of X.
    swaps : ndarray of uint8, shape (P, G, S)
        :func:`permutation_swaps` (any unit).
    level, method, variant
        As :func:`permutation_test_pairs`.

    Returns
    -------
    ndarray of float64, shape (K, P + 1)
        Column 0: ``r_a - r_b`` on the standardized data; column ``1 + p``: the same after the
        swaps of permutation ``p``; NaN where undefined.

    Notes
    -----
    Item level with Kendall tau-a or tau-b takes :func:`_kendall_item_null` (integer
    polynomials in the swap bits, the same values bit for bit), global-level Pearson
    :func:`_pearson_global_null` (three sums over the swapped cells); other item and global
    cases recompute every per-input correlation of both swapped vectors.
    """
    pairs = np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2)
    parts = [
        _null_function(X, criterion, pairs[block], level, method, variant)(
            np.arange(block.size), swaps
        )
        for block in _pair_blocks(X.shape, pairs.shape[0], level, method, variant)
    ]
    return np.concatenate(parts) if parts else np.empty((0, swaps.shape[0] + 1))


#: Largest coefficient array (bytes) the item-level Kendall fast path prepares at once
#: (``4 G (1 + S + S (S - 1) / 2)`` bytes a pair in int32, twice that in int64 beyond 128
#: systems): more pairs are taken in blocks, one after the other. None (the default): a
#: quarter of :func:`~hanna_stats.kernels._options.memory_budget` (256 MiB of the default
#: 1 GiB; HANNA's 2,556 pairs: one block of 55 MB), leaving room for a block's copy under early
#: stopping and for the swaps. Where one pair's coefficients take more than half the memory
#: budget (thousands of inputs of hundreds of systems), the pairs take the slow path.
FAST_BLOCK_BYTES = None


def _block_bytes():
    """Bytes of one block of the fast path's coefficients (see ``FAST_BLOCK_BYTES``)."""
    return FAST_BLOCK_BYTES if FAST_BLOCK_BYTES is not None else memory_budget() // 4


def _pair_bytes(shape):
    """Bytes of one pair's coefficients on the fast path (:func:`_packing`)."""
    _, G, S = shape
    return np.dtype(_packing(S)[1]).itemsize * G * (1 + S * (S + 1) // 2)


def _fast_path(shape, level, method, variant):
    """Whether :func:`_null_function` takes the item-level Kendall fast path: tau-a or tau-b,
    with one pair's coefficients within half the memory budget."""
    return (
        level == "item"
        and method == "kendall"
        and variant != "c"
        and _pair_bytes(shape) <= memory_budget() // 2
    )


def _pair_blocks(shape, K, level, method, variant):
    """Index blocks of the K pairs: one block, or for the item-level Kendall fast path and
    the global Pearson sums (:func:`_pearson_global_terms`, 24 bytes a cell and pair) blocks
    whose prepared arrays take at most ``FAST_BLOCK_BYTES`` (one pair at least)."""
    size = max(K, 1)
    if _fast_path(shape, level, method, variant):
        size = max(1, _block_bytes() // _pair_bytes(shape))
    elif level == "global" and method == "pearson":
        size = max(1, _block_bytes() // (24 * shape[1] * shape[2]))
    return [np.arange(i, min(i + size, K)) for i in range(0, K, size)]


def _null_function(X, criterion, pairs, level, method, variant):
    """``null(columns, swaps)``: :func:`permutation_null` of ``pairs[columns]``, with the work
    that does not depend on the swaps (standardizing, the fast path's coefficients) done once."""
    Z = standardize(X)
    method_code = check_option("method", method)
    variant_code = check_option("variant", variant)
    present = ~np.isnan(Z)
    scale = None
    if present.all():
        pass
    elif level == "system":
        # A pair's cells left out (NaN, the criterion NaN there too): each system mean is over
        # its n_s kept cells, T's sums rescaled from G to n_s (NaN where a system keeps none).
        count = present.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = (Z.shape[1] / count)[None]
        Z = np.where(present, Z, 0.0)
    else:
        Z = np.where(present, Z, 0.0)  # the criterion is NaN there: omitted pairwise
    if level == "system":
        if scale is None:
            means = np.ascontiguousarray(Z.mean(axis=1))
        else:
            with np.errstate(invalid="ignore", divide="ignore"):
                means = np.ascontiguousarray(Z.sum(axis=1) * scale[0] / Z.shape[1])
        c = np.ascontiguousarray(at_level(criterion[None], "system", True)[0, 0])

        def null(columns, swaps):
            T = _swapped_system_sums(Z, swaps)
            if scale is not None:
                with np.errstate(invalid="ignore"):
                    T = T * scale
            return _system_null(means, T, c, pairs[columns], method_code, variant_code)

    elif _fast_path(X.shape, level, method, variant):
        prepared = _kendall_item_prepare(Z, criterion, pairs, variant_code)

        def null(columns, swaps):
            return _kendall_item_null(prepared, swaps, columns)

    elif level == "global" and method == "pearson":
        cells, terms, base = _pearson_global_terms(Z, criterion, pairs)

        def null(columns, swaps):
            W = swaps.reshape(swaps.shape[0], -1)
            return _pearson_global_null(cells, terms, base, W, columns)

    else:
        if level == "global":
            Z = Z.reshape(Z.shape[0], 1, -1)
            criterion = criterion.reshape(1, -1)
        C = np.ascontiguousarray(criterion)

        def null(columns, swaps):
            swaps = swaps.reshape(swaps.shape[0], *C.shape)
            return _item_null(Z, C, swaps, pairs[columns], method_code, variant_code)

    return null


def _hits(null, alternative):
    """Per row of :func:`permutation_null`'s output: the permutations reaching the observed
    difference (with the ``RTOL`` tolerance) and those defined."""
    observed = null[:, :1]
    perms = null[:, 1:]
    gamma = RTOL * np.abs(observed)
    if alternative == "greater":
        hits = perms >= observed - gamma
    elif alternative == "less":
        hits = perms <= observed + gamma
    else:
        hits = np.abs(perms) >= np.abs(observed) - gamma
    return hits.sum(axis=1), (~np.isnan(perms)).sum(axis=1)


def _ratio(hits, n_valid, observed):
    with np.errstate(invalid="ignore", divide="ignore"):
        p = hits / n_valid
    p[np.isnan(observed) | (n_valid == 0)] = np.nan
    return p


def permutation_pvalues(null, alternative="two-sided"):
    """p-values and defined-permutation counts from :func:`permutation_null`'s output.

    ``p = #{p : d_p >= d} / n_valid`` (``"greater"``), ``#{d_p <= d}`` (``"less"``) or
    ``#{|d_p| >= |d|}`` (``"two-sided"``), over the ``n_valid`` permutations whose ``d_p`` is
    defined, with the comparisons relaxed by ``RTOL |d|``, as scipy.stats.permutation_test.
    As in Deutsch et al. (2021) and mt-metrics-eval, the identity permutation is not added:
    ``p`` can be 0; ``(count + 1) / (n_valid + 1)`` is the conservative alternative.
    Returns ``(pvalue, n_valid)``, each shape (K,); NaN where ``d`` or every ``d_p`` is NaN.

    The tolerance matters: a permuted difference mathematically equal to the observed one can
    come out a few ulps below it (another order of the same additions, or, at system level, a
    permuted mean formed as ``mean_a + T_b - T_a``). mt-metrics-eval's ``PermutationSigDiff``
    compares exactly (``c2 - c1 >= delta``) and then misses such permutations, a bug there; we
    count them. Differences that truly differ by less than ``RTOL |d|`` (about 2e-14
    relative) count too, a negligible bias toward larger p-values.
    """
    check_option("alternative", alternative)
    hits, n_valid = _hits(null, alternative)
    return _ratio(hits, n_valid, null[:, 0]), n_valid


#: Early stopping (``stop_alpha``): the two-sided Clopper-Pearson interval of each running
#: p-value is formed at confidence ``1 - STOP_RISK`` at every look.
STOP_RISK = 1e-3


def _settled(hits, n_valid, alpha):
    """Whether the Clopper-Pearson interval (Clopper and Pearson 1934) at confidence
    ``1 - STOP_RISK`` of ``hits`` successes in ``n_valid`` trials lies wholly below or above
    ``alpha``."""
    from scipy.special import betaincinv

    h = hits.astype(np.float64)
    n = n_valid.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(h > 0, betaincinv(np.maximum(h, 1), n - h + 1, STOP_RISK / 2), 0.0)
        high = np.where(h < n, betaincinv(h + 1, np.maximum(n - h, 1), 1 - STOP_RISK / 2), 1.0)
    return (n > 0) & ((high < alpha) | (low > alpha))


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
    unit="both",
    stop_alpha=None,
    progress=None,
    executor=None,
):
    """Permutation tests of ``r(a, criterion) - r(b, criterion)`` for all pairs of measures.

    The paired permutation test of Deutsch, Dror and Roth (2021), as implemented by
    mt-metrics-eval's ``PermutationSigDiff`` (PERM-BOTH) and nlpstats' ``permutation_test``
    (PERM-BOTH, PERM-SYS, PERM-INPUT): each measure is standardized (z-scores over all its
    cells, so that swapped scores share a scale); then, in each permutation, the two measures'
    standardized scores are swapped in the cells chosen by ``unit`` (:func:`permutation_swaps`:
    every cell, every system or every input independently with probability 1/2), and the
    difference of their level correlations with the criterion is recomputed. At system level
    the swapped cells enter the per-system means (over inputs), computed for all pairs at once
    from ``T[p, m, s] = sum_g W[p, g, s] z[m, g, s] / G`` (a permuted mean of ``a`` is
    ``mean_a + T_b - T_a``); at item and global level the swapped vectors are correlated per
    input (item-level Kendall tau-a/b by integer polynomials in the swap bits, see
    :func:`permutation_null`). One
    draw of swaps serves every pair. p-values as :func:`permutation_pvalues`.

    ``statistic`` and ``delta`` are computed on the original data (they equal
    :func:`level_correlation`'s); the test's observed difference is that of the standardized
    data (the identity permutation), which agrees up to rounding. The criterion is not
    standardized (no correlation depends on it).

    **Early stopping** (``stop_alpha``): the permutations are taken in about 20 consecutive
    chunks (``ceil(P / 20)`` each). After each chunk, a pair stops drawing once, for both of its
    directions ((a, b) and (b, a)), the Clopper-Pearson interval (Clopper and Pearson 1934) at
    confidence ``1 - STOP_RISK`` (0.999) of the running p-value lies wholly below or wholly above
    ``stop_alpha``: the decision at that level is settled. The pair's p-value is then its
    running estimate ``hits / n_valid`` over the ``n_drawn`` permutations it used; its decision
    at ``stop_alpha`` differs from that of the p-value with unlimited permutations with
    probability at most about ``20 * STOP_RISK / 2 = 0.01`` (union bound over the looks; the
    same spirit as Besag and Clifford's (1991) sequential p-values, which stop after a fixed
    number of exceedances). The swaps are the same as without stopping (drawn once from
    ``seed``), and the looks fall at fixed places, so results are deterministic for a seed.
    mt-metrics-eval stops on fixed thresholds of the running p-value (below 0.02 or above 0.5
    after each block of 1000) without an error bound.

    **Missing values**: a swap needs both scores, so a cell (input, system) drops out of the
    comparison of ``a`` and ``b`` when either misses its score there: for that pair both
    measures and the criterion lose the cell (it leaves the z-scores, the system means and the
    correlations alike, and is never swapped), as mt-metrics-eval's ``PermutationSigDiff``
    drops the cells whose gold score is None from both metrics before z-scoring (its metric
    scores cannot be None). A cell where only the criterion is missing stays in the z-scores,
    as without missing values. The test's observed difference is then that of the common
    cells, while ``statistic`` and ``delta`` keep each measure's correlation over all its own
    cells. The result counts, per pair, the cells with a criterion value left out
    (``n_missing``) and the inputs and systems that lose all their cells
    (``n_inputs_dropped``, ``n_systems_dropped``); with no missing value they are 0 and the
    result is that of the complete computation, bit for bit.

    Parameters
    ----------
    X : array_like, shape (M, G, S)
        Measures (metrics); NaN where a measure has no score (see **Missing values**).
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
    unit : {"both", "systems", "inputs"}
        Resampling unit of the swaps drawn from ``seed`` (PERM-BOTH, PERM-SYS, PERM-INPUT);
        ignored when ``swaps`` is given.
    stop_alpha : float in (0, 1), optional
        Stop each pair early once its decision at this level is settled (above); None (the
        default) uses all permutations.
    progress : callable, optional
        ``progress(iterable, desc=..., total=...)`` wrapping the chunks of permutations (about
        20, times the blocks of pairs of the item-level Kendall path, see ``FAST_BLOCK_BYTES``)
        that are computed one after the other, e.g. :func:`hanna_stats.progress.progress`
        for a bar on a terminal. The chunks change neither the work nor the result. With
        ``executor``, it wraps the blocks of pairs as they finish.
    executor : distributed.Client, concurrent.futures.Executor or ClusterExecutor, optional
        Run the pairs in blocks on this executor, e.g. a Dask cluster (see
        :mod:`hanna_stats.kernels.distributed`): the swaps are drawn here, once, and each
        block's pairs are tested on them as in-process, so the result is the same bit for bit.
        None (the default): in this process.

    Returns
    -------
    PermutationTestResult

    References
    ----------
    D. Deutsch, R. Dror and D. Roth, "A Statistical Analysis of Summarization Evaluation
    Metrics Using Resampling Methods", TACL 9, 2021 (PERM-BOTH, PERM-SYS, PERM-INPUT);
    google-research/mt-metrics-eval ``stats.PermutationSigDiff``. C. J. Clopper and E. S.
    Pearson, "The use of confidence or fiducial limits illustrated in the case of the
    binomial", Biometrika 26, 1934. J. Besag and P. Clifford, "Sequential Monte Carlo
    p-values", Biometrika 78, 1991.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> c = rng.normal(size=(20, 6))
    >>> X = np.stack([c + 0.1 * rng.normal(size=c.shape), rng.normal(size=c.shape)])
    >>> res = permutation_test_pairs(X, c, level="item", permutations=200, alternative="greater")
    >>> float(res.pvalue[0, 1]), float(res.pvalue[1, 0]), int(res.n_valid[0, 1])
    (0.0, 1.0, 200)
    >>> res = permutation_test_pairs(X, c, level="item", permutations=200, stop_alpha=0.05)
    >>> int(res.n_drawn[0, 1])  # no exceedance: 0.999 upper bound 1 - 0.0005 ** (1 / n) < 0.05
    150
    """
    arguments = (level, method, variant, permutations, alternative, seed, swaps, unit)
    X, C, swaps = _pairs_arguments(X, criterion, *arguments, stop_alpha)
    M = X.shape[0]
    iu = np.triu_indices(M, 1)
    pairs = np.stack(iu, axis=1)
    K = pairs.shape[0]
    jobs, missing = _missing_jobs(X, C, pairs)
    options = (level, method, variant, alternative, stop_alpha)
    cluster = cluster_executor(executor)
    if cluster is None:
        observed, hits, valid, drawn = _pair_counts(jobs, K, swaps, *options, progress=progress)
    else:
        observed, hits, valid, drawn = _cluster_counts(cluster, jobs, K, swaps, options, progress)
    r = level_correlation(X, C[None], level=level, method=method, variant=variant).statistic[:, 0]
    delta = r[:, None] - r[None, :]
    pvalue = np.full((M, M), np.nan)
    pvalue[iu] = _ratio(hits[0], valid, observed)
    pvalue[iu[1], iu[0]] = _ratio(hits[1], valid, observed)
    counts = []
    for values in (valid, drawn, *missing):
        out = np.zeros((M, M), dtype=np.int64)
        out[iu] = values
        out[iu[1], iu[0]] = values
        counts.append(out)
    return PermutationTestResult(r, delta, pvalue, *counts)


def _pairs_arguments(
    X, criterion, level, method, variant, permutations, alternative, seed, swaps, unit, stop_alpha
):
    """The checked arguments of :func:`permutation_test_pairs`: ``X`` and the criterion as
    float arrays, and the swaps (drawn from ``seed`` unless given) as a uint8 array."""
    check_option("level", level)
    check_option("alternative", alternative)
    X = validated({"X": X}, 3, 0, method=method, variant=variant)[0]
    C = validated({"criterion": criterion}, 2, 0)[0]
    if C.shape != X.shape[1:]:
        raise ValueError(f"criterion must have shape {X.shape[1:]}; got {C.shape}")
    if stop_alpha is not None and (
        isinstance(stop_alpha, bool)
        or not isinstance(stop_alpha, numbers.Real)
        or not 0 < stop_alpha < 1
    ):
        raise ValueError(f"stop_alpha must be None or a number in (0, 1); got {stop_alpha!r}")
    if swaps is None:
        swaps = permutation_swaps(
            X.shape[1], X.shape[2], permutations=permutations, seed=seed, unit=unit
        )
    else:
        check_option("unit", unit, WORDS["resample"])
    swaps = np.ascontiguousarray(swaps, dtype=np.uint8)
    if swaps.ndim != 3 or swaps.shape[1:] != X.shape[1:] or swaps.shape[0] == 0:
        raise ValueError(
            f"swaps must have shape (P, {X.shape[1]}, {X.shape[2]}); got {swaps.shape}"
        )
    return X, C, swaps


def _pair_counts(jobs, K, swaps, level, method, variant, alternative, stop_alpha, progress=None):
    """The tests' counts over the pairs of ``jobs`` (:func:`_missing_jobs`), whose ``index``
    arrays number them in ``range(K)``: ``(observed, hits, valid, drawn)``, the observed
    difference (K,), the permutations reaching it in each direction (2, K), those defined (K,)
    and those drawn (K,). Each pair's counts depend on its own data and ``swaps`` alone, not on
    the other pairs of its job or block (what lets :func:`_cluster_counts` split them)."""
    step = max(1, -(-swaps.shape[0] // 20))
    steps = [
        (job, block, k)
        for job, (Xj, _, pairs_j, _) in enumerate(jobs)
        for block in _pair_blocks(Xj.shape, pairs_j.shape[0], level, method, variant)
        for k in range(0, swaps.shape[0], step)
    ]
    if progress is not None:
        steps = progress(steps, desc="permutations", total=len(steps))
    observed = np.full(K, np.nan)
    hits = np.zeros((2, K), dtype=np.int64)  # (a, b) and (b, a)
    valid = np.zeros(K, dtype=np.int64)
    drawn = np.zeros(K, dtype=np.int64)
    for job, block, k in steps:
        Xj, Cj, pairs_j, index = jobs[job]
        if k == 0:  # a new block of pairs
            null_of = _null_function(Xj, Cj, pairs_j[block], level, method, variant)
            columns = np.arange(block.size)
        if columns.size == 0:
            continue  # every pair of the block settled (the progress bar runs to its end)
        active = index[block[columns]]
        null = null_of(columns, swaps[k : k + step])
        observed[active] = null[:, 0]  # the same in every chunk
        for direction, sign in enumerate((1.0, -1.0)):  # (b, a): -delta
            h, n = _hits(sign * null, alternative)
            hits[direction, active] += h
        valid[active] += n
        drawn[active] += null.shape[1] - 1
        if stop_alpha is not None:
            done = _settled(hits[0, active], valid[active], stop_alpha) & _settled(
                hits[1, active], valid[active], stop_alpha
            )
            columns = columns[~done]
    return observed, hits, valid, drawn


def _cluster_counts(cluster, jobs, K, swaps, options, progress):
    """:func:`_pair_counts` on a :class:`~hanna_stats.kernels.distributed.ClusterExecutor`:
    the pairs, job after job, cut into blocks of about equal numbers of pairs, each block a
    task (:func:`_pair_counts_block`) on the jobs and swaps shared once; the same counts."""
    flat = [(job, p) for job, (_, _, pairs_j, _) in enumerate(jobs) for p in range(len(pairs_j))]
    specs = []
    for lo, hi in split(len(flat), cluster.blocks):
        spec = {}
        for job, p in flat[lo:hi]:
            spec.setdefault(job, []).append(p)
        specs.append([(job, np.array(ps, dtype=np.int64)) for job, ps in spec.items()])
    shared = ([(Xj, Cj, pairs_j) for Xj, Cj, pairs_j, _ in jobs], swaps, options)
    parts = cluster.map(
        _pair_counts_block, shared, specs, progress=progress, desc="permutation blocks"
    )
    observed = np.full(K, np.nan)
    hits = np.zeros((2, K), dtype=np.int64)
    valid = np.zeros(K, dtype=np.int64)
    drawn = np.zeros(K, dtype=np.int64)
    for spec, (o, h, v, d) in zip(specs, parts, strict=True):
        active = np.concatenate([jobs[job][3][positions] for job, positions in spec])
        observed[active], hits[:, active], valid[active], drawn[active] = o, h, v, d
    return observed, hits, valid, drawn


def _pair_counts_block(jobs, swaps, options, spec):
    """One task of :func:`_cluster_counts`: :func:`_pair_counts` of the pairs ``spec`` names
    (``(job, positions)`` in ``jobs``' pairs), each job cut down to the measures of its pairs
    (a measure's z-scores and swapped sums do not depend on the others), in ``spec``'s order."""
    work = []
    start = 0
    for job, positions in spec:
        Xj, Cj, pairs_j = jobs[job]
        used, local = np.unique(pairs_j[positions], return_inverse=True)
        n = positions.size
        work.append((Xj[used], Cj, local.reshape(n, 2), np.arange(start, start + n)))
        start += n
    return _pair_counts(work, start, swaps, *options)


def _missing_jobs(X, C, pairs):
    """The pairs' work under the missing-value rule (mt-metrics-eval's, see
    :func:`permutation_test_pairs`), and what it left out.

    Returns ``(jobs, (n_missing, n_inputs_dropped, n_systems_dropped))``: ``jobs`` is a list
    of ``(X_j, C_j, pairs_j, index)``, the cube, criterion and pairs (of ``X_j``'s measures)
    of a piece of work and the pairs' positions in ``pairs``; the counts are per pair (K,).
    The pairs of complete measures form one job on those measures (all of ``X`` when none
    misses a value: the computation without missing values). Each pair with a missing value
    is a job of its own: ``X[[a, b]]`` and the criterion with NaN in every cell where ``a``
    or ``b`` has none, so that the cell drops out of both measures, their z-scores and the
    criterion alike."""
    K = pairs.shape[0]
    gone = np.isnan(X)
    incomplete = gone.any(axis=(1, 2))
    counts = np.zeros((3, K), dtype=np.int64)
    if not incomplete.any():
        return [(X, C, pairs, np.arange(K))], counts
    complete = np.flatnonzero(~incomplete)
    position = np.full(X.shape[0], -1, dtype=np.int64)
    position[complete] = np.arange(complete.size)
    whole = ~incomplete[pairs].any(axis=1)
    jobs = (
        [] if not whole.any() else [(X[complete], C, position[pairs[whole]], np.flatnonzero(whole))]
    )
    rated = ~np.isnan(C)
    for k in np.flatnonzero(~whole):
        a, b = pairs[k]
        drop = gone[a] | gone[b]
        lost = drop & rated
        kept = rated & ~drop
        counts[:, k] = (
            lost.sum(),
            (rated.any(axis=1) & ~kept.any(axis=1)).sum(),
            (rated.any(axis=0) & ~kept.any(axis=0)).sum(),
        )
        Xk = X[[a, b]]
        Xk[:, drop] = np.nan
        jobs.append((Xk, np.where(drop, np.nan, C), np.array([[0, 1]]), np.array([k])))
    return jobs, counts
