"""Batched correlations of every measure pair within every group, and their level aggregates.

Data are cubes of shape (measures, groups, systems), float64, NaN = missing. For each group
``g``, measure ``i`` of ``A`` and measure ``j`` of ``B`` are correlated across the systems. Each
(measure, group) vector is prepared once (unit vector, ranks or Kendall pair signs), so a cell
costs one dot product.
"""

from __future__ import annotations

import math
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np
from numba import get_num_threads, njit, parallel_chunksize, prange, types
from numba.extending import intrinsic

from ._options import (
    KENDALL,
    SPEARMAN,
    check_option,
    check_options,
    memory_budget,
    threads_for,
    validated,
)
from .correlation import coefficient, coefficient_omit, unit_vector
from .kendall import (
    PAIR_KEY_MAX_N,
    PAIR_KEY_MAX_RANKS,
    KendallCounts,
    counts_from_sign_sums,
    counts_of_keys,
    sorted_counts,
    tau_by_code,
    with_group,
)
from .ranks import average_ranks

#: Kendall uses per-vector pair signs (two bits per pair of systems) on groups of up to
#: SIGN_VECTOR_MAX_N systems; on groups of more than SORTED_MIN_N it sorts each vector once and
#: sweeps each pair with a Fenwick tree (:func:`_prepare_sorted`), or sorts each pair's keys
#: against a criterion on a few levels (:func:`_fill_pair_keys`). The groups are prepared
#: and correlated in blocks whose prepared vectors and correlations fit the memory budget
#: (:func:`~hanna_stats.kernels._options.memory_budget`), so the signs hold at any size.
SIGN_VECTOR_MAX_N = 256
#: Kendall on groups of more than SORTED_MIN_N systems takes :func:`_fill_sorted`; between
#: SIGN_VECTOR_MAX_N and it, each pair is counted by :func:`kendall_counts` (Knight's merge sort
#: of both vectors). The sweep is already 4-5x quicker at 500 values (40 measures: 7 against
#: 33 ms), but compiling it costs about 6 s on a first run; below 1,000 values (HANNA's 960
#: pooled items) the merge sort's milliseconds are the better trade.
SORTED_MIN_N = 1000

# State of a (measure, group) vector.
_OK = 0
_UNDEFINED = 1  # constant, shorter than 2, or (Pearson) infinite: no correlation with anything
_HAS_NAN = 2


class LevelCorrelationResult(NamedTuple):
    """Result of :func:`level_correlation`; arrays of shape (measures of A, measures of B)."""

    statistic: np.ndarray
    n_groups: np.ndarray
    n_skipped: np.ndarray


class UndefinedCorrelationError(ValueError):
    """A group's correlation is undefined under ``nan_policy="raise"``.

    Attributes ``i``, ``j`` and ``group`` index the measure of A, the measure of B and the group.
    """

    def __init__(self, message, i, j, group):
        super().__init__(message)
        self.i = i
        self.j = j
        self.group = group

    def __reduce__(self):  # picklable across processes, attributes included
        return type(self), (str(self), self.i, self.j, self.group)


@intrinsic
def _popcount(typingctx, x):
    """The number of 1 bits of a uint64 (LLVM's ctpop: one instruction)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


def _states(X):
    """``state`` (G, M) int8 of each (measure, group) vector of a cube (M, G, S): ``_HAS_NAN``,
    ``_UNDEFINED`` when it is constant or shorter than 2, else ``_OK`` (in numpy: several times
    quicker than a compiled loop over the cube)."""
    missing = np.isnan(X).any(axis=2)
    constant = (X == X[:, :, :1]).all(axis=2) | (X.shape[2] < 2)
    state = np.where(missing, _HAS_NAN, np.where(constant, _UNDEFINED, _OK)).astype(np.int8)
    return np.ascontiguousarray(state.T)


@njit(cache=True, parallel=True)
def _prepare(X, method_code, state, signs):
    """Per (group, measure) vectors shared by all pairs; see :func:`group_correlations`.

    Returns ``(units, signs, ties)`` for the vectors ``_OK`` in ``state`` (:func:`_states`),
    which turns ``_UNDEFINED`` where a unit vector is not defined (an infinite value): for
    Pearson/Spearman ``units`` (G, M, S) holds the unit vectors (of the ranks for Spearman);
    for Kendall with ``signs``, ``signs`` (G, M, 2 W) holds the
    signs ``sign(x[j] - x[i])`` of the ``P = S (S - 1) / 2`` pairs ``i < j`` as two bit planes
    of ``W = ceil(P / 64)`` words each (words ``[0, W)``: the sign is nonzero; ``[W, 2 W)``: it
    is positive; pair ``p`` at bit ``p % 64`` of word ``p // 64``) and ``ties`` (G, M, 4) the
    tie statistics. Unused arrays are empty. Each vector is prepared alone (one thread each):
    the threads change nothing.
    """
    measures, groups, n = X.shape
    kendall = method_code == KENDALL
    pairs = n * (n - 1) // 2 if kendall and signs else 0
    words = (pairs + 63) // 64
    units = np.zeros((groups, measures, 0 if kendall else n))
    sign_vectors = np.zeros((groups, measures, 2 * words), dtype=np.uint64)
    ties = np.zeros((groups, measures, 4 if pairs else 0))
    for t in prange(groups * measures):
        g, m = divmod(np.int64(t), measures)
        if state[g, m] == _OK:
            if not kendall:
                x = X[m, g]
                if not unit_vector(average_ranks(x) if method_code == SPEARMAN else x, units[g, m]):
                    state[g, m] = _UNDEFINED
            elif pairs:  # X[m, g, k] indexed directly: views in the loop would contend
                # Kendall's tie statistics from the equal pairs met while forming the signs
                # (no sort): each value's equal partners (count) and whether it is the first
                # of its tie group.
                count = np.zeros(n, dtype=np.int64)
                head = np.ones(n, dtype=np.bool_)
                p = 0
                for i in range(n):
                    for j in range(i + 1, n):
                        if X[m, g, j] != X[m, g, i]:  # no NaN here: the sign is not 0
                            bit = np.uint64(1) << np.uint64(p & 63)
                            sign_vectors[g, m, p >> 6] |= bit
                            if X[m, g, j] > X[m, g, i]:
                                sign_vectors[g, m, words + (p >> 6)] |= bit
                        else:
                            count[i] += 1
                            count[j] += 1
                            head[j] = False
                        p += 1
                # tie_stats' sums over the tie groups (of t values): its terms are integers
                # (below 2**53 in float64), so their sum is exact in any order.
                stats = (np.int64(0), np.int64(0), 0.0, 0.0)
                for k in range(n):
                    if head[k]:
                        stats = with_group(stats, count[k] + 1)
                ties[g, m, 0] = stats[0]
                ties[g, m, 1] = stats[1]
                ties[g, m, 2] = stats[2]
                ties[g, m, 3] = stats[3]
    return units, sign_vectors, ties


def _prepare_sorted(X, workspace=None):
    """Per (group, measure) vectors of Kendall's sweep (:func:`~hanna_stats.kernels.kendall.
    sorted_counts`), for groups of more than :data:`SORTED_MIN_N` systems: ``(order, rank,
    counts)``, the sort order (missing values last; ``~index``, negative, where a run of equal
    values starts), the dense rank of each value (-1 where missing; (G, M, S) int32 each) and
    the numbers of distinct and of present values (G, M, 2), for every vector; in the memory
    of ``workspace`` (:func:`_workspace_array`) when given.

    Each vector is sorted by numpy as 64-bit keys, its float32 value's order in the high half
    and its index in the low half (numpy sorts plain keys about 3x quicker than it argsorts
    float64, and several times quicker than a compiled sort), then values that share a float32
    are put in float64 order (:func:`_finish_sort`). The vectors are shared among as many
    threads as Numba uses (numpy and these kernels release the GIL); a vector's result does not
    depend on the others, so the threads change nothing."""
    measures, groups, n = X.shape
    if n >= 2**31:
        raise ValueError(f"Kendall vectors longer than 2**31 - 1 values are not supported; got {n}")
    order, rank = (
        _workspace_array(workspace, name, (groups, measures, n), np.int32)
        for name in ("order", "rank")
    )
    counts = _workspace_array(workspace, "counts", (groups, measures, 2), np.float64)
    todo = np.indices((groups, measures)).reshape(2, -1).T  # every (g, m)

    def sort(rows):  # a few calls per chunk of vectors: the threads seldom wait for the GIL
        for chunk in np.array_split(rows, max(1, -(-len(rows) * n // SORT_CHUNK_VALUES))):
            keys = np.empty((len(chunk), n), dtype=np.uint64)
            exact = _rows_keys(X, chunk, keys)
            keys.sort(axis=1)
            _rows_finish(X, chunk, keys, exact, order, rank, counts)

    _in_threads(sort, todo)
    return order, rank, counts


def _in_threads(work, todo):
    """``work`` on pieces of the rows of ``todo``, on as many threads as Numba uses, a few
    pieces per thread (balanced as they end); ``work`` releases the GIL for its heavy parts
    (numpy's sort, ``nogil`` kernels) and its pieces do not depend on one another."""
    if not len(todo):
        return
    threads = max(1, min(get_num_threads(), len(todo)))
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(work, np.array_split(todo, min(len(todo), 4 * threads))))


#: Values whose sort keys :func:`_prepare_sorted` makes and sorts at once, per thread (16 MiB).
SORT_CHUNK_VALUES = 2**21


def _workspace_array(workspace, name, shape, dtype):
    """An uninitialised C-contiguous array of ``shape``: new when ``workspace`` is None, else
    the start of ``workspace[name]``, a flat array kept (and grown) there, so that chunk after
    chunk writes to memory already in use (fresh pages cost a fault each)."""
    size = math.prod(shape)
    if workspace is None:
        return np.empty(shape, dtype=dtype)
    flat = workspace.get(name)
    if flat is None or flat.size < size:
        flat = workspace[name] = np.empty(size, dtype=dtype)
    return flat[:size].reshape(shape)


@njit(cache=True, nogil=True)
def _rows_keys(X, rows, keys):
    """:func:`_sort_keys` of the vectors ``X[m, g]`` of ``rows`` ((g, m) each) into the rows of
    ``keys``; returns their ``exact`` flags."""
    exact = np.empty(len(rows), dtype=np.bool_)
    for r in range(len(rows)):
        exact[r] = _sort_keys(X[rows[r, 1], rows[r, 0]], keys[r])
    return exact


@njit(cache=True, nogil=True)
def _rows_finish(X, rows, keys, exact, order, rank, counts):
    """:func:`_finish_sort` of the vectors of ``rows`` from their sorted ``keys``."""
    for r in range(len(rows)):
        g, m = rows[r, 0], rows[r, 1]
        distinct, valid = _finish_sort(X[m, g], keys[r], exact[r], order[g, m], rank[g, m])
        counts[g, m, 0] = distinct
        counts[g, m, 1] = valid


#: :func:`_sort_keys`' high half for a missing value: after every float32 (+inf included).
_MISSING_KEY = 0xFFFFFFFF


@njit(cache=True, nogil=True)
def _sort_keys(x, keys):
    """``keys[k]``: ``x[k]`` as float32 (rounding keeps the order; -0 as +0; NaN last) in bits
    that sort as unsigned integers in the same order, shifted to the high half; ``k`` in the
    low half. Returns whether every value is a float32 exactly (integer scores, say): then
    equal keys are equal values."""
    exact = True
    x32 = x.astype(np.float32)
    bits = x32.view(np.uint32)
    for k in range(x.size):
        v = x32[k]
        exact &= (v != v) | (np.float64(v) == x[k])
        high = np.uint64(_MISSING_KEY) if v != v else _float32_order(v, bits[k])
        keys[k] = (high << np.uint64(32)) | np.uint64(k)
    return exact


@njit(cache=True, nogil=True, inline="always")
def _float32_order(v, bits):
    """The float32 ``v`` (not NaN; -0 as +0), of bits ``bits`` (uint32, read from an array: a
    scalar's ``view`` goes through memory and stops the compiler vectorising the loop), as a
    uint64 below 2**32 that orders as ``v`` does."""
    b = np.uint64(0) if v == 0 else np.uint64(bits)
    if b >> np.uint64(31):
        return ~b & np.uint64(0xFFFFFFFF)
    return b | np.uint64(0x80000000)


@njit(cache=True, nogil=True)
def _pair_keys(x, rank_y, keys):
    """Sort keys of one pair for :func:`~hanna_stats.kernels.kendall.counts_of_keys`, written to
    ``keys`` (of ``x.size``) for the positions where ``x`` is present and ``rank_y`` is not -1:
    ``x``'s float32 order (:func:`_float32_order`) in the high half, ``rank_y`` (below
    :data:`~hanna_stats.kernels.kendall.PAIR_KEY_MAX_RANKS`) in bits 24-31 and the index
    (below :data:`~hanna_stats.kernels.kendall.PAIR_KEY_MAX_N`) in bits 0-23; the other
    positions get :data:`_DROPPED_KEY`, which sorts after every kept key. Returns ``(count,
    exact, missing)``: the number of keys kept (sorted, they are ``keys[:count]``), ``exact``
    when every kept value is a float32 exactly, ``missing`` when ``x`` has a missing value.
    No branch on the data: one pass that the compiler vectorises."""
    count = 0
    exact = True
    missing = False
    x32 = x.astype(np.float32)
    bits = x32.view(np.uint32)
    for k in range(x.size):
        v = x32[k]
        nan = v != v
        keep = (not nan) & (rank_y[k] >= 0)
        missing |= nan
        exact &= (not keep) | (np.float64(v) == x[k])
        key = (_float32_order(v, bits[k]) << np.uint64(32)) | (
            np.uint64(rank_y[k] & 0xFF) << np.uint64(24)
        )
        keys[k] = (key | np.uint64(k)) if keep else np.uint64(_DROPPED_KEY)
        count += keep
    return count, exact, missing


#: :func:`_pair_keys`' key of a position left out: above every kept key (whose high half is
#: a float32's order, below 2**32 - 1).
_DROPPED_KEY = 2**64 - 1


@njit(cache=True, nogil=True)
def _rows_pair_keys(B, rank_a, cells, keys):
    """:func:`_pair_keys` of the cells ``(g, i, j)`` of ``cells`` (vector ``j`` of B against
    the ranks of vector ``i`` of A, in group ``g``) into the rows of ``keys``; returns their
    ``(count, exact, missing)`` as arrays."""
    rows = len(cells)
    count = np.empty(rows, dtype=np.int64)
    exact = np.empty(rows, dtype=np.bool_)
    missing = np.empty(rows, dtype=np.bool_)
    for r in range(rows):
        g, i, j = cells[r, 0], cells[r, 1], cells[r, 2]
        count[r], exact[r], missing[r] = _pair_keys(B[j, g], rank_a[g, i], keys[r])
    return count, exact, missing


@njit(cache=True, nogil=True)
def _rows_tau_of_pair_keys(B, cells, keys, count, exact, use, distinct_a, variant_code, R):
    """``R[g, i, j]``: Kendall's tau of each cell ``(g, i, j)`` of ``cells`` where ``use``,
    from its row of ``keys`` (:func:`_rows_pair_keys`, sorted: ``count`` kept and ``exact``
    per row; :func:`~hanna_stats.kernels.kendall.counts_of_keys`), A's vector having
    ``distinct_a[g, i]`` distinct values."""
    for r in range(len(cells)):
        if use[r]:
            g, i, j = cells[r, 0], cells[r, 1], cells[r, 2]
            pair = keys[r, : count[r]]
            counts = counts_of_keys(B[j, g], pair, exact[r], np.int64(distinct_a[g, i]))
            R[g, i, j] = tau_by_code(counts, variant_code)


@njit(cache=True, nogil=True)
def _finish_sort(x, keys, exact, order, rank):
    """From :func:`_sort_keys`' keys, sorted, and whether they are ``exact``: ``order`` sorting
    ``x`` in float64, ``~index`` where a run of equal values starts, and ``rank`` (the dense
    rank of each value; -1 where missing). Returns the numbers of distinct and of present
    values. One pass: different float32 values come from different float64 values, so only a
    run of keys with one float32 (its values in index order) is put in float64 order and split
    into its distinct values (:func:`_split_float32_run`), and none when the keys are exact."""
    n = x.size
    low = np.uint64(0xFFFFFFFF)
    high = np.uint64(32)
    valid = n
    while valid > 0 and keys[valid - 1] >> high == np.uint64(_MISSING_KEY):
        valid -= 1
        order[valid] = np.int32(keys[valid] & low)
        rank[order[valid]] = -1
    distinct = 0
    start = 0  # where the current float32 value starts
    current = np.uint64(0)
    for k in range(valid):
        key = keys[k]
        index = np.int32(key & low)
        new = k == 0 or key >> high != current
        if new and not exact:
            if k - start > 1:
                distinct = _split_float32_run(x, order, rank, start, k, distinct)
            start = k
        distinct += new
        order[k] = index ^ -np.int32(new)  # ~index where a new value starts
        rank[index] = distinct - 1
        current = key >> high
    if not exact and valid - start > 1:
        distinct = _split_float32_run(x, order, rank, start, valid, distinct)
    return distinct, valid


#: Longest run of one float32 that :func:`_split_float32_run` orders by insertion.
_INSERTION_MAX = 32


@njit(cache=True, nogil=True)
def _split_float32_run(x, order, rank, start, stop, distinct):
    """Put ``order[start:stop]``, values of one float32 in index order counted as one value
    (``~index`` at ``start``, ``distinct`` counting it), in float64 order (stable: index order
    within equal values) and mark and rank its distinct values; returns ``distinct`` after
    them."""
    order[start] = ~order[start]
    if stop - start <= _INSERTION_MAX:
        for k in range(start + 1, stop):
            index = order[k]
            q = k
            while q > start and x[order[q - 1]] > x[index]:
                order[q] = order[q - 1]
                q -= 1
            order[q] = index
    else:
        segment = order[start:stop].copy()
        values = np.empty(stop - start)
        for q in range(stop - start):
            values[q] = x[segment[q]]
        order[start:stop] = segment[np.argsort(values, kind="mergesort")]
    distinct -= 1
    previous = order[start]
    for k in range(start, stop):
        index = order[k]
        if k == start or x[index] != x[previous]:
            distinct += 1
            order[k] = ~index
        rank[index] = distinct - 1
        previous = index
    return distinct


@njit(cache=True)
def _tau_sorted(prepared_a, prepared_b, g, i, j, variant_code):
    """Kendall's tau of vector ``i`` of A and ``j`` of B in group ``g`` from their
    :func:`_prepare_sorted` arrays, over the positions where neither is missing: the vector
    with more distinct values is swept, the other indexes the Fenwick tree (a smaller tree)."""
    _, counts_a, order_a, rank_a = prepared_a
    _, counts_b, order_b, rank_b = prepared_b
    d_a, valid_a = np.int64(counts_a[g, i, 0]), np.int64(counts_a[g, i, 1])
    d_b, valid_b = np.int64(counts_b[g, j, 0]), np.int64(counts_b[g, j, 1])
    if d_a >= d_b:
        counts = sorted_counts(order_a[g, i, :valid_a], rank_b[g, j], d_b)
    else:  # x and y swapped: the same C and D; the fields of x and y go back in place
        c = sorted_counts(order_b[g, j, :valid_b], rank_a[g, i], d_a)
        counts = KendallCounts(
            c.n,
            c.concordant,
            c.discordant,
            c.y_ties,
            c.x_ties,
            c.xy_ties,
            c.y_distinct,
            c.x_distinct,
            c.y_tie_v1,
            c.y_tie_v2,
            c.x_tie_v1,
            c.x_tie_v2,
        )
    return tau_by_code(counts, variant_code)


@njit(cache=True, inline="always")
def _tau_from_signs(signs_a, signs_b, ties_a, ties_b, g, i, j, n, variant_code):
    # Indexes the prepared arrays directly: array views in the parallel loop would contend on
    # their reference counts.
    # Over the pairs, q = sum (s_a s_b)^2 counts the pairs both sign vectors leave untied (C +
    # D), of which C agree in sign: s = sum s_a s_b = C - D = 2 C - q (exact integers).
    agree = np.int64(0)  # not a literal: one compiled signature of the callee
    q = np.int64(0)
    words = signs_a.shape[2] // 2
    for w in range(words):
        both = signs_a[g, i, w] & signs_b[g, j, w]
        q += np.int64(_popcount(both))
        same = ~(signs_a[g, i, words + w] ^ signs_b[g, j, words + w])
        agree += np.int64(_popcount(both & same))
    s = 2 * agree - q
    ta = (np.int64(ties_a[g, i, 0]), np.int64(ties_a[g, i, 1]), ties_a[g, i, 2], ties_a[g, i, 3])
    tb = (np.int64(ties_b[g, j, 0]), np.int64(ties_b[g, j, 1]), ties_b[g, j, 2], ties_b[g, j, 3])
    return tau_by_code(counts_from_sign_sums(n, s, q, ta, tb), variant_code)


@njit(cache=True)
def _cells(measures_a, measures_b, symmetric):
    """The (i, j) cells of a block's correlation matrix, as two index arrays: every pair, or
    ``i <= j`` when ``symmetric``."""
    cells = measures_a * (measures_a + 1) // 2 if symmetric else measures_a * measures_b
    ii = np.empty(cells, dtype=np.int64)
    jj = np.empty(cells, dtype=np.int64)
    c = 0
    for i in range(measures_a):
        for j in range(i if symmetric else 0, measures_b):
            ii[c] = i
            jj[c] = j
            c += 1
    return ii, jj


@njit(cache=True, parallel=True)
def _fill(A, B, prepared_a, prepared_b, symmetric, method_code, variant_code, omit, R):
    # R (G, Ma, Mb): the groups of A and B, filled in place (a block of a larger output).
    units_a, signs_a, ties_a, state_a = prepared_a
    units_b, signs_b, ties_b, state_b = prepared_b
    groups, n = A.shape[1:]
    ii, jj = _cells(A.shape[0], B.shape[0], symmetric)
    cells = ii.size
    for t in prange(groups * cells):
        g, c = divmod(np.int64(t), cells)
        i = ii[c]
        j = jj[c]
        a = state_a[g, i]
        b = state_b[g, j]
        r = np.nan
        if a == _OK and b == _OK:
            if method_code != KENDALL:
                total = 0.0  # clipped_dot of the unit vectors, without array views
                for k in range(n):
                    total += units_a[g, i, k] * units_b[g, j, k]
                r = min(1.0, max(-1.0, total))
            elif signs_a.shape[2]:
                r = _tau_from_signs(signs_a, signs_b, ties_a, ties_b, g, i, j, n, variant_code)
            else:
                r = coefficient(A[i, g], B[j, g], method_code, variant_code)
        elif omit and a != _UNDEFINED and b != _UNDEFINED:
            r = coefficient_omit(A[i, g], B[j, g], method_code, variant_code)
        R[g, i, j] = r
        if symmetric:
            R[g, j, i] = r


#: :func:`_fill_strided` prepares B's vectors STRIDED_TILE at a time, their values interleaved
#: (position-major): each sum of :func:`~hanna_stats.kernels.correlation.unit_vector` and each
#: dot product runs in the same order as there, the tile's STRIDED_TILE sums side by side (one
#: SIMD lane each) rather than one long chain of dependent additions after another.
STRIDED_TILE = 8


@njit(cache=True, parallel=True)
def _fill_strided(A, B, units_t, state_a, method_code, variant_code, omit, R):
    """:func:`_fill` of Pearson or Spearman for a B of any strides (the transposed view of
    ``group_by="system"``), B's vectors prepared as they are used: B is neither copied whole nor
    its unit vectors stored (each is used by the few vectors of A alone). ``units_t`` (Ma, S,
    G padded to whole tiles): A's unit vectors, position-major.

    A tile of :data:`STRIDED_TILE` vectors (groups) of a measure of B is copied into a buffer
    (S, tile); each vector's state is read as :func:`_states` and :func:`_prepare` give it (NaN;
    constant or shorter than 2; for Pearson an infinite value), its pairwise-deleted cells
    computed from its values (:func:`~hanna_stats.kernels.correlation.coefficient_omit`), then
    it is made its unit vector in place (of its average ranks for Spearman) by the steps of
    :func:`~hanna_stats.kernels.correlation.unit_vector` and dotted with A's unit vectors, every
    sum in the order of :func:`_fill`: each cell bit for bit as there, by one thread alone."""
    measures, groups, n = B.shape
    T = STRIDED_TILE
    tiles = (groups + T - 1) // T
    for t in prange(measures * tiles):
        j, tile = divmod(np.int64(t), tiles)
        lo = tile * T
        width = min(groups, lo + T) - lo
        # Padding columns repeat the last group: computed alike, never read back.
        x = np.empty((n, T))
        low = np.full(T, np.inf)
        high = np.full(T, -np.inf)
        probe = np.zeros(T)  # v - v: NaN once a value is NaN or infinite
        for k in range(n):
            for g in range(T):
                v = B[j, min(lo + g, groups - 1), k]
                x[k, g] = v
                low[g] = min(low[g], v)
                high[g] = max(high[g], v)
                probe[g] += v - v
        largest = np.maximum(-low, high)
        state = np.full(T, _UNDEFINED, dtype=np.int8)
        for g in range(width):
            if np.isnan(probe[g]) and np.isnan(x[:, g]).any():
                state[g] = _HAS_NAN
            elif n >= 2 and low[g] != high[g]:  # (v == v[0]).all() where no value is NaN
                state[g] = _OK
                if method_code == SPEARMAN:
                    x[:, g] = average_ranks(x[:, g].copy())
                    largest[g] = x[:, g].max()
                elif np.isnan(probe[g]):  # an infinite value
                    state[g] = _UNDEFINED
            for i in range(A.shape[0]):
                a = state_a[lo + g, i]
                R[lo + g, i, j] = np.nan
                b = state[g]
                if (a != _OK or b != _OK) and omit and a != _UNDEFINED and b != _UNDEFINED:
                    R[lo + g, i, j] = coefficient_omit(
                        A[i, lo + g], B[j, lo + g].copy(), method_code, variant_code
                    )
        _unit_columns(x, largest)
        for i in range(A.shape[0]):
            total = np.zeros(T)
            for k in range(n):
                for g in range(T):
                    total[g] += units_t[i, k, lo + g] * x[k, g]
            for g in range(width):
                if state[g] == _OK and state_a[lo + g, i] == _OK:
                    R[lo + g, i, j] = min(1.0, max(-1.0, total[g]))


@njit(cache=True, inline="always")
def _unit_columns(x, largest):
    # unit_vector of each column of x (n, T) in place, its steps and sums in the same order;
    # largest: each column's largest |value| (a column that is constant or not finite gives
    # values that are not read).
    n, T = x.shape
    half = np.empty(T)
    rest = np.empty(T)
    for g in range(T):
        exponent = math.frexp(largest[g])[1]
        half[g] = math.ldexp(1.0, -(exponent // 2))
        rest[g] = math.ldexp(1.0, exponent // 2 - exponent)
    mean = np.zeros(T)
    for k in range(n):
        for g in range(T):
            x[k, g] = x[k, g] * half[g] * rest[g]
            mean[g] += x[k, g]
    mean /= n
    squares = np.zeros(T)
    for k in range(n):
        for g in range(T):
            x[k, g] -= mean[g]
            squares[g] += x[k, g] * x[k, g]
    norm = np.sqrt(squares)
    for k in range(n):
        for g in range(T):
            x[k, g] /= norm[g]


@njit(cache=True, parallel=True)
def _fill_sorted(prepared_a, prepared_b, symmetric, variant_code, omit, R):
    """:func:`_fill` of Kendall's tau on :func:`_prepared_sorted` vectors (longer than
    :data:`SORTED_MIN_N`): a pair is swept where both vectors are complete, or with
    ``omit`` on the positions both have (compiled apart from :func:`_fill`: short groups, the
    usual case, do not compile the sweep)."""
    state_a, state_b = prepared_a[0], prepared_b[0]
    groups = state_a.shape[0]
    ii, jj = _cells(state_a.shape[1], state_b.shape[1], symmetric)
    cells = ii.size
    for t in prange(groups * cells):
        g, c = divmod(np.int64(t), cells)
        i = ii[c]
        j = jj[c]
        a = state_a[g, i]
        b = state_b[g, j]
        r = np.nan
        if (a == _OK and b == _OK) or (omit and a != _UNDEFINED and b != _UNDEFINED):
            r = _tau_sorted(prepared_a, prepared_b, g, i, j, variant_code)
        R[g, i, j] = r
        if symmetric:
            R[g, j, i] = r


def _group_bytes(A, B, symmetric, method_code, cell_bytes):
    """Working bytes of one group of :func:`group_blocks`: its measures' copies (8 S) and
    prepared vectors (pair signs, unit vectors, sort orders and ranks), and ``cell_bytes`` per
    (i, j) cell."""
    n = A.shape[2]
    measures = A.shape[0] + (0 if symmetric else B.shape[0])
    if method_code != KENDALL:
        prepared = 8 * n
    elif n <= SIGN_VECTOR_MAX_N:
        prepared = 16 * ((n * (n - 1) // 2 + 63) // 64) + 32
    elif n <= SORTED_MIN_N:
        prepared = 0
    else:
        prepared = 8 * n + 16  # sort order and ranks (int32), distinct and present counts
    return measures * (8 * n + prepared + 1) + cell_bytes * A.shape[0] * B.shape[0]


def group_blocks(A, B, symmetric, method_code, cell_bytes=8):
    """``(lo, hi, A_block, B_block)`` for consecutive blocks of the groups (axis 1), each
    holding as many groups as fit half the memory budget (at least one; see
    :func:`_group_bytes`); the blocks are views (``B_block is A_block`` when ``symmetric``),
    made C-contiguous by :func:`block_correlations`."""
    groups = A.shape[1]
    per_group = _group_bytes(A, B, symmetric, method_code, cell_bytes)
    size = max(1, memory_budget() // 2 // per_group)
    for lo in range(0, groups, size):
        hi = min(groups, lo + size)
        a = A[:, lo:hi]
        yield lo, hi, a, a if symmetric else B[:, lo:hi]


def _prepared(X, method_code):
    """The per-vector arrays of :func:`_fill`: ``(units, signs, ties, state)``
    (:func:`_prepare`; no Kendall signs beyond :data:`SIGN_VECTOR_MAX_N` systems)."""
    state = _states(X)
    signs = method_code != KENDALL or X.shape[2] <= SIGN_VECTOR_MAX_N
    return (*_prepare(X, method_code, state, signs), state)


def _prepared_sorted(X, workspace=None):
    """The per-vector arrays of :func:`_fill_sorted`: ``(state, counts, order, rank)``
    (:func:`_prepare_sorted`, in ``workspace`` when given), the state read from the sort's
    counts (as :func:`_states` would give it: missing values, else fewer than 2 distinct
    values)."""
    order, rank, counts = _prepare_sorted(X, workspace)
    distinct, present = counts[..., 0], counts[..., 1]
    state = np.where(
        present < X.shape[2], _HAS_NAN, np.where(distinct < 2, _UNDEFINED, _OK)
    ).astype(np.int8)
    return state, counts, order, rank


#: Bytes of B's measures (their copies and prepared vectors) that :func:`block_correlations`
#: prepares at once beside A's: a chunk stays in cache between its preparation and its
#: correlations (global-level Pearson at 20,000 x 20 x 50: 85 against 175 ms, B whole).
CHUNK_BYTES = 2**24
#: Kendall's sweep takes chunks of B's measures of about SWEEP_CHUNK_BYTES, and of at least
#: SWEEP_CHUNK_PER_THREAD measures per thread: a pair's sweep reads its vectors' orders at
#: random, so a chunk bounds memory rather than fits a cache, and each chunk is a round of the
#: sorts' thread pool, balanced only when each thread has several sorts (at 2,000 x 20 x 50,
#: 50 measures at once took 41 ms, chunks of 16 took 46 ms).
SWEEP_CHUNK_BYTES = 2**26
SWEEP_CHUNK_PER_THREAD = 8


def block_correlations(A, B, symmetric, method_code, variant_code, omit, R):
    """Fill ``R`` (G, Ma, Mb) with :func:`group_correlations` of the cubes ``A`` and ``B``
    (the blocks of :func:`group_blocks`, any memory layout); on one thread when that is
    little work (:func:`~hanna_stats.kernels._options.threads_for`).

    A is prepared whole; B (unless the matrix is symmetric) in chunks of measures of about
    :data:`CHUNK_BYTES` (:data:`SWEEP_CHUNK_BYTES` for Kendall's sweep), each made
    C-contiguous (a transposed view, as ``group_by="system"`` gives, is copied a chunk at a
    time), prepared and correlated with A. A cell depends on its two vectors alone: the chunks
    change no value."""
    groups, n = A.shape[1:]
    sweep = method_code == KENDALL and n > SORTED_MIN_N

    def prepare(X, workspace=None):
        return _prepared_sorted(X, workspace) if sweep else _prepared(X, method_code)

    def fill(a, b, prepared_a, prepared_b, out):
        if sweep:  # a pair's sweep takes milliseconds, some many more: handed out one by one
            with parallel_chunksize(1):
                _fill_sorted(prepared_a, prepared_b, symmetric, variant_code, omit, out)
        else:
            _fill(a, b, prepared_a, prepared_b, symmetric, method_code, variant_code, omit, out)

    with threads_for(R.size * n):
        a = _contiguous(A)
        prepared_a = prepare(a)
        if symmetric:
            fill(a, a, prepared_a, prepared_a, R)
            return
        if method_code != KENDALL and not B.flags.c_contiguous:
            units_a, _, _, state_a = prepared_a
            tiles = -(-groups // STRIDED_TILE)
            units_t = np.zeros((len(a), n, tiles * STRIDED_TILE))
            units_t[:, :, :groups] = units_a.transpose(1, 2, 0)
            _fill_strided(a, B, units_t, state_a, method_code, variant_code, omit, R)
            return
        # A's vectors on a few levels: each pair sorts its own keys; B is not prepared.
        pair_keys = (
            sweep and n < PAIR_KEY_MAX_N and prepared_a[1][..., 0].max() <= PAIR_KEY_MAX_RANKS
        )
        least = get_num_threads() * (SWEEP_CHUNK_PER_THREAD if sweep else 1)
        chunk_bytes = SWEEP_CHUNK_BYTES if sweep else CHUNK_BYTES
        size = min(len(B), max(least, chunk_bytes // max(1, 16 * groups * n)))
        buffer = None if B.flags.c_contiguous else np.empty((size, groups, n))
        out = R if size == len(B) else np.empty((groups, A.shape[0], size))
        workspace = {}  # the chunks' sort orders and ranks, in the same memory
        for lo in range(0, len(B), size):
            hi = min(len(B), lo + size)
            b = _contiguous(B[lo:hi], None if buffer is None else buffer[: hi - lo])
            chunk = out if hi - lo == size else np.empty((groups, A.shape[0], hi - lo))
            if pair_keys:
                _fill_pair_keys(prepared_a, b, omit, variant_code, chunk)
            else:
                fill(a, b, prepared_a, prepare(b, workspace), chunk)
            if chunk is not R:
                R[:, :, lo:hi] = chunk


def _fill_pair_keys(prepared_a, B, omit, variant_code, R):
    """:func:`_fill_sorted` where every vector of A has at most
    :data:`~hanna_stats.kernels.kendall.PAIR_KEY_MAX_RANKS` distinct values (a criterion on a
    rating scale, MQM scores): each pair sorts its own keys (:func:`_pair_keys`: the vector of
    B's float32 order, then the rank in A's vector, then the index), read in one sequential
    pass (:func:`~hanna_stats.kernels.kendall.counts_of_keys`). B's vectors need no sort order
    or ranks of their own, and the sweep no gather of ranks in another vector's order.

    The pairs go in batches of about :data:`SORT_CHUNK_VALUES` keys: one compiled call writes
    a batch's keys (a row per pair), numpy sorts the rows in one call, one compiled call reads
    them (no Python per pair: at 2,000 values a pair, that was a third of the time). The
    batches are shared among as many threads as Numba uses (numpy's sort and these kernels
    release the GIL); a pair's value does not depend on the others."""
    state_a, counts_a, _, rank_a = prepared_a
    R[:] = np.nan
    usable = (state_a == _OK) | (omit & (state_a != _UNDEFINED))
    todo = np.argwhere(np.broadcast_to(usable[:, :, None], R.shape))  # (g, i, j) to count
    distinct_a = np.ascontiguousarray(counts_a[..., 0])
    n = B.shape[2]

    def count(cells):
        rows = max(1, SORT_CHUNK_VALUES // n)
        keys = np.empty((min(rows, len(cells)), n), dtype=np.uint64)
        for lo in range(0, len(cells), rows):
            batch = cells[lo : lo + rows]
            block = keys[: len(batch)]
            kept, exact, missing = _rows_pair_keys(B, rank_a, batch, block)
            block.sort(axis=1)
            use = ~missing | omit  # B's vector with missing values: NaN unless omit
            _rows_tau_of_pair_keys(B, batch, block, kept, exact, use, distinct_a, variant_code, R)

    _in_threads(count, todo)


def _contiguous(X, out=None):
    """``X`` (a cube) when C-contiguous, else a copy (into ``out`` when given) by
    :func:`_copy_cube`."""
    if X.flags.c_contiguous:
        return X
    out = np.empty(X.shape) if out is None else out
    _copy_cube(X, out)
    return out


@njit(cache=True, parallel=True)
def _copy_cube(X, out):
    """``out[:] = X`` for a cube ``X`` of any strides (the transposed view of
    ``group_by="system"``, say), in tiles of 64 along the last axis: a tile's reads share few
    cache lines whatever the strides, and the tiles run on all threads (numpy's copy of a
    transposed view runs on one: 47 against 24 ms for 20,000 x 20 x 50 here)."""
    measures, rows, columns = X.shape
    tiles = (columns + 63) // 64
    for t in prange(measures * tiles):
        m, tile = divmod(np.int64(t), tiles)
        for i in range(rows):
            for j in range(tile * 64, min(columns, tile * 64 + 64)):
                out[m, i, j] = X[m, i, j]


def _group_correlations(A, B, symmetric, method_code, variant_code, omit):
    """:func:`group_correlations` of validated cubes, with integer option codes: the groups in
    blocks (:func:`group_blocks`), each prepared and correlated into its slice of ``R``
    (every cell depends on its group alone: the blocks change no value).

    Plain Python around the two compiled passes: a compiled wrapper would cost seconds of
    compiling on a user's first run and save nothing."""
    R = np.empty((A.shape[1], A.shape[0], B.shape[0]))
    with threads_for(R.size * A.shape[2]):
        for lo, hi, a, b in group_blocks(A, B, symmetric, method_code):
            block_correlations(a, b, symmetric, method_code, variant_code, omit, R[lo:hi])
    return R


def correlations_of_cubes(A, B, method, variant, omit):
    """:func:`group_correlations` of validated C-contiguous float64 cubes (``B is A`` for the
    symmetric matrix), options already checked."""
    return _group_correlations(
        A, B, A is B, check_option("method", method), check_option("variant", variant), omit
    )


def group_correlations(A, B=None, *, method="kendall", variant="b", nan_policy="omit"):
    """Correlation of every measure pair within every group.

    ``R[g, i, j]`` is the correlation across systems of ``A[i, g, :]`` and ``B[j, g, :]``,
    computed from per-vector preparations shared by all pairs:

    - Pearson: the centred unit vectors ``u`` (power-of-two scaled, see
      :func:`~hanna_stats.kernels.correlation`); ``r = u_a . u_b``.
    - Spearman: the same on average ranks (:func:`~hanna_stats.kernels.rankdata`).
    - Kendall, groups of up to ``SIGN_VECTOR_MAX_N`` systems: the pair signs
      ``s[p] = sign(x[j] - x[i])`` over the ``n (n - 1) / 2`` pairs ``i < j``;
      ``C - D = sum s_a s_b`` and ``C + D = sum (s_a s_b)^2`` give the
      :class:`~hanna_stats.kernels.KendallCounts` together with each vector's tie statistics,
      and :func:`~hanna_stats.kernels.tau_from_counts` gives the variant. Groups of up to
      ``SORTED_MIN_N``: :func:`~hanna_stats.kernels.kendall_counts` per pair. Longer groups:
      each vector sorted once, each pair swept with a Fenwick tree over the ranks of the
      vector with fewer distinct values (O(n log n) a pair, missing values left out pairwise);
      where every vector of A has at most 256 distinct values (a criterion on a rating scale),
      each pair sorts its own keys instead (B's order, then A's rank), read in one pass.

    A vector that is constant (or, for Pearson, has an infinite value) makes its cells NaN. A
    vector with NaN makes its cells NaN, unless ``nan_policy="omit"``: then the pair is
    correlated on the systems where both vectors have values (pairwise deletion), NaN if that is
    undefined. Each cell is computed by one thread alone, so results do not depend on the thread
    count.

    Parameters
    ----------
    A : array_like of float, shape (Ma, G, S)
    B : array_like of float, shape (Mb, G, S), optional
        Defaults to ``A``: only the cells ``i <= j`` are computed and mirrored.
    method : {"pearson", "spearman", "kendall"}
    variant : {"a", "b", "c"}
        Kendall variant.
    nan_policy : {"omit", "propagate", "raise"}
        ``"omit"``: pairwise deletion of NaN observations; ``"propagate"``: NaN; ``"raise"``:
        :class:`UndefinedCorrelationError` for the first undefined cell (i, j, group).

    Returns
    -------
    ndarray of float64, shape (G, Ma, Mb)

    Raises
    ------
    ValueError
        For an invalid argument.
    UndefinedCorrelationError
        With ``nan_policy="raise"``, for an undefined cell.

    Examples
    --------
    >>> A = [[[1.0, 2.0, 3.0], [3.0, 1.0, 2.0]]]
    >>> B = [[[1.0, 3.0, 2.0], [3.0, 2.0, 1.0]]]
    >>> group_correlations(A, B, method="kendall")[:, 0, 0].round(4).tolist()
    [0.3333, 0.3333]
    >>> group_correlations(A, B, method="spearman")[:, 0, 0].round(4).tolist()
    [0.5, 0.5]
    """
    arrays = {"A": A} if B is None else {"A": A, "B": B}
    options = {"method": method, "variant": variant, "nan_policy": nan_policy}
    method_code, variant_code, _ = check_options(**options)
    cubes = validated(arrays, 3, 2)
    symmetric = cubes[0] is cubes[-1]
    R = _group_correlations(
        cubes[0], cubes[-1], symmetric, method_code, variant_code, nan_policy == "omit"
    )
    if nan_policy == "raise" and np.isnan(R).any():
        raise _undefined_error(R, cubes, None)
    return R


def aggregate_groups(R, *, nan_policy="omit"):
    """Mean over groups of per-group correlations, skipping undefined (NaN) groups.

    .. math:: \\bar r_{ij} = \\frac{1}{|V_{ij}|} \\sum_{g \\in V_{ij}} R_{gij},
        \\quad V_{ij} = \\{g : R_{gij} \\text{ not NaN}\\},

    summed in group order. The mean is NaN when no group is valid, and also when any group is
    NaN unless ``nan_policy="omit"`` (``"propagate"`` and ``"raise"`` both give NaN here).

    Parameters
    ----------
    R : array_like of float, shape (G, Ma, Mb)
    nan_policy : {"omit", "propagate", "raise"}

    Returns
    -------
    tuple of ndarray
        ``(statistic, n_groups, n_skipped)``, each (Ma, Mb): the mean (float64), the number of
        valid groups and of NaN groups (int64).

    Examples
    --------
    >>> mean, n_groups, n_skipped = aggregate_groups([[[0.5]], [[float("nan")]], [[0.1]]])
    >>> mean.round(3).tolist(), n_groups.tolist(), n_skipped.tolist()
    ([[0.3]], [[2]], [[1]])
    """
    check_option("nan_policy", nan_policy)
    (R,) = validated({"R": R}, 3, 0)
    return _aggregate(R, nan_policy == "omit")


class _Aggregate:
    """The mean over groups of :func:`_aggregate`, accumulated block by block of groups:
    :meth:`add` the blocks in group order, then :meth:`result`. Each cell's sums add its groups
    one after the other, in group order, whatever the blocks: the result is that of one block.
    With ``first_nan``, it also keeps each cell's first undefined group (-1: none)."""

    def __init__(self, shape, weighted, first_nan=False):
        self.total = np.zeros(shape)
        self.weight_sum = np.zeros(shape) if weighted else None
        self.n_groups = np.zeros(shape, dtype=np.int64)
        self.groups = 0
        self.first_nan = np.full(shape, -1, dtype=np.int64) if first_nan else None

    def add(self, R, weights=None):
        """Add the groups of ``R`` (g, Ma, Mb), weighted by ``weights`` (g, Ma, Mb) if the
        aggregate is."""
        valid = ~np.isnan(R)
        total = self.total
        for g in range(R.shape[0]):  # group order, as a plain loop would sum
            if weights is None:
                total += np.where(valid[g], R[g], 0.0)
            else:
                total += np.where(valid[g], R[g] * weights[g], 0.0)
                self.weight_sum += np.where(valid[g], weights[g], 0.0)
        self.n_groups += valid.sum(axis=0, dtype=np.int64)
        if self.first_nan is not None and R.shape[0]:
            undefined = ~valid
            new = (self.first_nan < 0) & undefined.any(axis=0)
            self.first_nan[new] = self.groups + undefined.argmax(axis=0)[new]
        self.groups += R.shape[0]

    def result(self, omit):
        """``(mean, n_groups, n_skipped)`` over the groups added."""
        n_groups = self.n_groups
        n_skipped = self.groups - n_groups
        keep = (n_groups > 0) & (omit | (n_skipped == 0))
        denominator = n_groups if self.weight_sum is None else self.weight_sum
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(keep, self.total / np.maximum(denominator, 1), np.nan)
        return mean, n_groups, n_skipped


def _aggregate(R, omit, weights=None):
    """(mean, n_groups, n_skipped) over the valid groups of ``R`` (G, Ma, Mb); ``weights``
    (G, Ma, Mb), when given, weight each group's value in the mean."""
    aggregate = _Aggregate(R.shape[1:], weights is not None)
    aggregate.add(R, weights)
    return aggregate.result(omit)


def observation_counts(A, B):
    """``W[g, i, j]``: the observations of group ``g`` present (not NaN) in both ``A[i, g]`` and
    ``B[j, g]``, for cubes (Ma, G, S) and (Mb, G, S); float64 (G, Ma, Mb)."""
    present_a = (~np.isnan(A)).astype(np.float64).transpose(1, 0, 2)
    present_b = (~np.isnan(B)).astype(np.float64).transpose(1, 2, 0)
    return present_a @ present_b


def grouped_cubes(
    arrays, level, nan_policy, group_by="input", weighting="uniform", contiguous=True
):
    """Validated cubes as ``level`` correlates them (:func:`at_level`, ``contiguous`` as
    there), ``group_by`` and ``weighting`` (of :func:`aggregate_cells`) checked.

    ``arrays`` maps argument names to array_like cubes (M, G, S) that must agree on (G, S).
    """
    check_options(level=level, nan_policy=nan_policy, group_by=group_by, weighting=weighting)
    if group_by != "input" and level != "item":
        raise ValueError(
            f"group_by={group_by!r} needs level='item'; level {level!r} correlates one group"
        )
    omit = nan_policy == "omit"
    return [at_level(X, level, omit, group_by, contiguous) for X in validated(arrays, 3, 2)]


def aggregate_cells(R, cubes, omit, weighting="uniform"):
    """:func:`_aggregate` of per-group values ``R`` of ``cubes`` (A, B) with ``weighting``:
    ``"uniform"`` (each valid group alike) or ``"count"`` (each group weighted by the
    observations present in both vectors, :func:`observation_counts`); ``weighting`` as
    checked by :func:`grouped_cubes`."""
    weights = observation_counts(cubes[0], cubes[-1]) if weighting == "count" else None
    return _aggregate(R, omit, weights)


def at_level(X, level, omit, group_by="input", contiguous=True):
    """The cube a level correlates: ``item`` as is (with ``group_by="system"`` transposed to
    (M, S, G): one group per system, correlated across the inputs; a C-contiguous copy, or
    the transposed view when not ``contiguous``), ``system`` the per-system means over the
    groups (shape (M, 1, S); missing items skipped when ``omit``), ``global`` all items pooled
    (shape (M, 1, G * S))."""
    measures, groups, systems = X.shape
    if level == "item" and group_by == "system":
        by_system = X.transpose(0, 2, 1)
        return np.ascontiguousarray(by_system) if contiguous else by_system
    if level == "system":
        # Each system's scores contiguous, so that numpy sums them pairwise exactly as np.mean
        # of that system's list: summation order decides exact ties between system means (two
        # in HANNA's Complexity, which tau-b counts).
        by_system = np.ascontiguousarray(X.transpose(0, 2, 1))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # systems with no value at all
            means = np.nanmean(by_system, axis=2) if omit else by_system.mean(axis=2)
        return np.ascontiguousarray(means[:, None, :])
    if level == "global":
        return X.reshape(measures, 1, groups * systems)
    return X


def _undefined_error(R, cubes, level, cell=None):
    # The first undefined cell of R in the order (i, j, group), or the given (i, j, group).
    where = "" if level is None else f" at level {level!r}"
    names = ("A", "B") if len(cubes) == 2 else ("A", "A")
    if cell is None:
        cell = np.argwhere(np.isnan(R.transpose(1, 2, 0)))[0]
    i, j, g = (int(k) for k in cell)
    reasons = []
    for name, k, x in ((names[0], i, cubes[0][i, g]), (names[1], j, cubes[-1][j, g])):
        if np.isnan(x).any():
            reasons.append(f"{name}[{k}] has missing values")
        elif x.size < 2 or (x == x[0]).all():
            reasons.append(f"{name}[{k}] is constant")
        elif np.isinf(x).any():
            reasons.append(f"{name}[{k}] has infinite values")
    return UndefinedCorrelationError(
        f"correlation of {names[0]}[{i}] and {names[1]}[{j}] is undefined in group {g}{where}: "
        f"{' and '.join(reasons)} (nan_policy='raise')",
        i,
        j,
        g,
    )


def level_correlation(
    A,
    B=None,
    *,
    level="item",
    method="kendall",
    variant="b",
    nan_policy="omit",
    group_by="input",
    weighting="uniform",
):
    """Correlation matrix of measures at the item, system or global level.

    Levels, for cubes of shape (measures, groups G, systems S), e.g. HANNA's 96 prompts x 10
    systems:

    - ``"item"`` (HANNA's story level): correlate within each group across the S systems, then
      average the per-group correlations over the groups.
    - ``"system"``: correlate the S per-system means over the groups (a single group). Each mean
      is ``np.nanmean`` of the system's scores (missing items ignored) under
      ``nan_policy="omit"``, ``np.mean`` (NaN propagates) otherwise, summed in the same order
      as ``np.mean`` of the system's list of scores, so exact ties between means are kept.
    - ``"global"``: pool all G x S items into one group (reshape to (measures, 1, G S)).

    Per group the coefficient is as in :func:`correlation` (Pearson; Spearman; Kendall tau-a/b/c),
    computed by :func:`group_correlations`. A group's correlation is undefined when a vector is
    constant or fewer than 2 observations remain. ``nan_policy``:

    - ``"omit"`` (default, as the HANNA paper): observations with NaN are dropped pairwise inside
      each correlation; undefined groups are skipped and the mean divides by the number of valid
      groups.
    - ``"propagate"``: a NaN observation (also in a system mean) or an undefined group makes the
      cell NaN.
    - ``"raise"``: the first undefined group, in the order (i, j, group), raises
      :class:`UndefinedCorrelationError` (a ValueError) with attributes ``i``, ``j``, ``group``;
      as under ``"propagate"``, a group with a NaN observation counts as undefined.

    A cell with no valid group is NaN with ``n_groups == 0``.

    Item-level grouping (mt-metrics-eval's ``average_by``): ``group_by="input"`` (default,
    "by item") correlates across the systems within each input; ``"system"`` ("by system")
    across the inputs within each system, then averages over the systems. ``weighting="count"``
    weights each group's correlation by its number of observations present in both vectors
    (mt-metrics-eval's ``macro=False``); ``"uniform"`` (default) averages the groups alike.

    Parameters
    ----------
    A : array_like, shape (Ma, G, S)
    B : array_like, shape (Mb, G, S), optional
        Defaults to ``A`` (the symmetric matrix of all pairs of A, computed once per pair).
    level : {"item", "system", "global"}
    method : {"pearson", "spearman", "kendall"}
    variant : {"a", "b", "c"}
        Kendall variant (HANNA uses tau-b).
    nan_policy : {"omit", "propagate", "raise"}
    group_by : {"input", "system"}
        The groups of ``level="item"``: the inputs (axis 1) or the systems (axis 2).
    weighting : {"uniform", "count"}
        The mean over groups: plain, or weighted by each group's number of observations.

    Returns
    -------
    LevelCorrelationResult
        ``statistic`` (Ma, Mb) float64, the mean correlation; ``n_groups`` (Ma, Mb) int64, the
        groups whose correlation entered it; ``n_skipped`` (Ma, Mb) int64, the undefined groups
        (``n_groups + n_skipped`` is the number of groups at that level).

    Raises
    ------
    ValueError
        For an invalid argument.
    UndefinedCorrelationError
        With ``nan_policy="raise"``, for an undefined group.

    Examples
    --------
    >>> A = np.array([[[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]], [[3.0, 1.0, 2.0], [1.0, 2.0, 3.0]]])
    >>> res = level_correlation(A, method="kendall")
    >>> res.statistic.round(4).tolist(), res.n_groups.tolist()
    ([[1.0, -0.3333], [-0.3333, 1.0]], [[1, 1], [1, 2]])
    """
    arrays = {"A": A} if B is None else {"A": A, "B": B}
    method_code, variant_code = check_options(method=method, variant=variant)
    omit = nan_policy == "omit"
    # group_by="system": the transposed views, copied a chunk at a time (block_correlations)
    cubes = grouped_cubes(arrays, level, nan_policy, group_by, weighting, contiguous=False)
    A, B = cubes[0], cubes[-1]
    weighted = weighting == "count"
    # Block by block of groups (inputs): the per-group correlations R of a block, aggregated
    # in group order (bit for bit the mean of the whole R), never all of R at once.
    aggregate = _Aggregate((A.shape[0], B.shape[0]), weighted, nan_policy == "raise")
    cell_bytes = 9 + (16 if weighted else 0)  # R and its validity; the weights and a product
    buffer = None
    for lo, hi, a, b in group_blocks(A, B, A is B, method_code, cell_bytes):
        if buffer is None:
            buffer = np.empty((hi - lo, A.shape[0], B.shape[0]))
        R = buffer[: hi - lo]
        block_correlations(a, b, A is B, method_code, variant_code, omit, R)
        aggregate.add(R, observation_counts(a, b) if weighted else None)
    if nan_policy == "raise" and (aggregate.first_nan >= 0).any():
        i, j = np.argwhere(aggregate.first_nan >= 0)[0]
        raise _undefined_error(None, cubes, level, (i, j, aggregate.first_nan[i, j]))
    return LevelCorrelationResult(*aggregate.result(omit))
