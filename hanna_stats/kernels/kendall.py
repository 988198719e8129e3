"""Kendall's sufficient statistics (pair counts and tie structure) and the tau variants."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ._options import TAU_A, TAU_B, TAU_C, check_option, validated
from .ranks import merge_sort, sort_order

#: Vectors up to this length are counted by the direct O(n^2) loop over pairs, longer ones by
#: Knight's O(n log n) merge sort (measured crossover: 16 values without ties, 40 with many).
QUADRATIC_MAX_N = 24


class KendallCounts(NamedTuple):
    """Sufficient statistics of Kendall's tau for two vectors of length ``n``.

    Every pair ``i < j`` falls in exactly one of the five pair classes, so
    ``concordant + discordant + x_ties + y_ties + xy_ties == n (n - 1) / 2``. The tie-structure
    fields sum over the groups of equal values (of size ``t``) of one vector; they enter the
    variance of ``S = concordant - discordant`` (Kendall 1970, *Rank Correlation Methods*, 4th
    ed., eq. 4.3).
    """

    n: int
    concordant: int
    discordant: int
    x_ties: int  # pairs tied in x only
    y_ties: int  # pairs tied in y only
    xy_ties: int  # pairs tied in both
    x_distinct: int
    y_distinct: int
    x_tie_v1: float  # sum t (t - 1) (2 t + 5) over the tie groups of x
    x_tie_v2: float  # sum t (t - 1) (t - 2) over the tie groups of x
    y_tie_v1: float
    y_tie_v2: float


@njit(cache=True, inline="always")
def with_group(ties, t):
    """:func:`tie_stats`' ``(distinct, tied_pairs, v1, v2)`` with one more group of ``t``
    equal values (``t`` int64)."""
    distinct, pairs, v1, v2 = ties
    return (
        distinct + 1,
        pairs + t * (t - 1) // 2,
        v1 + t * (t - 1.0) * (2 * t + 5),
        v2 + t * (t - 1.0) * (t - 2),
    )


@njit(cache=True)
def tie_stats(x):
    """Tie structure of a sorted 1-D array, in one pass over its runs of equal values.

    Returns ``(distinct, tied_pairs, v1, v2)``: the number of distinct values, the number of
    tied pairs ``sum t (t - 1) / 2``, ``v1 = sum t (t - 1) (2 t + 5)`` and
    ``v2 = sum t (t - 1) (t - 2)``, the sums running over the runs of ``t`` equal values. (One
    signature: a flag for unsorted input would compile a second version, seconds on a user's
    first run; callers sort with :func:`~hanna_stats.kernels.ranks.sort_order`.)
    """
    n = x.size
    ties = (np.int64(0), np.int64(0), 0.0, 0.0)
    i = 0
    while i < n:
        t = np.int64(1)
        while i + t < n and x[i + t] == x[i]:
            t += 1
        ties = with_group(ties, t)
        i += t
    return ties


@njit(cache=True)
def counts_from_sign_sums(n, s, q, x_ties, y_ties):
    """:class:`KendallCounts` from ``s = C - D``, ``q = C + D`` and each vector's tie stats.

    Over the pairs ``i < j``, with ``sx = sign(x[j] - x[i])`` and ``sy = sign(y[j] - y[i])``:
    ``s = sum sx sy`` and ``q = sum (sx sy)^2``; the tied pairs of each vector come from
    ``x_ties``/``y_ties``, and the five pair classes follow.
    """
    n0 = n * (n - 1) // 2
    x_distinct, x_pairs, x_v1, x_v2 = x_ties
    y_distinct, y_pairs, y_v1, y_v2 = y_ties
    return KendallCounts(
        n,
        (q + s) // 2,
        (q - s) // 2,
        n0 - y_pairs - q,
        n0 - x_pairs - q,
        x_pairs + y_pairs - n0 + q,
        x_distinct,
        y_distinct,
        x_v1,
        x_v2,
        y_v1,
        y_v2,
    )


@njit(cache=True)
def _counts_quadratic(x, y):
    n = x.size
    s = q = np.int64(0)  # not a literal: one compiled signature of the callee
    for i in range(n):
        for j in range(i + 1, n):
            p = (np.int64(x[j] > x[i]) - np.int64(x[j] < x[i])) * (
                np.int64(y[j] > y[i]) - np.int64(y[j] < y[i])
            )
            s += p
            q += p * p
    return counts_from_sign_sums(n, s, q, tie_stats(sort_order(x)[0]), tie_stats(sort_order(y)[0]))


@njit(cache=True)
def _counts_mergesort(x, y):
    # Knight (1966): order the pairs by (x, y); the discordant pairs are then the strict
    # inversions of y, counted while merge-sorting y. Work memory: copies of x and y, and the
    # two scratch arrays of merge_sort (4 n float64, twice the input).
    n = x.size
    xs = x.copy()
    ys = y.copy()
    merge_sort(xs, ys)
    x_ties = tie_stats(xs)
    # Within each run of equal x, order y ascending and count the pairs tied in both.
    xy_pairs = 0
    start = 0
    while start < n:
        stop = start + 1
        while stop < n and xs[stop] == xs[start]:
            stop += 1
        if stop - start > 1:
            merge_sort(ys[start:stop], xs[start:stop])  # xs is constant there
            xy_pairs += tie_stats(ys[start:stop])[1]
        start = stop
    discordant = merge_sort(ys, xs)
    return _counts_from_discordant(n, discordant, xy_pairs, x_ties, tie_stats(ys))


@njit(cache=True)
def _counts_from_discordant(n, discordant, xy_pairs, x_ties, y_ties):
    """:class:`KendallCounts` from the discordant pairs, the pairs tied in both and each
    vector's tie statistics: ``C + D = n (n - 1) / 2 - (tied in x) - (tied in y) + (tied in
    both)``."""
    untied = n * (n - 1) // 2 - x_ties[1] - y_ties[1] + xy_pairs  # C + D
    return counts_from_sign_sums(n, untied - 2 * discordant, untied, x_ties, y_ties)


@njit(cache=True)
def sorted_counts(order_x, rank_y, distinct_y):
    """:class:`KendallCounts` of two vectors prepared once each, over the positions where
    neither is missing: ``order_x`` sorts the present values of ``x`` (any order within ties;
    ``~index``, negative, where a run of equal values starts), ``rank_y`` holds the dense ranks
    of ``y`` (``distinct_y`` values; -1 where missing).

    Two passes (:func:`_runs_of_ranks`, :func:`_discordant_of_runs`): the ranks of ``y`` in
    ascending ``x``, each run of equal ``x`` as its distinct ``y`` ranks in ascending order with
    their counts, then a sweep that adds each such group's pairs with the larger ``y`` of the
    earlier groups (the discordant pairs), counted by a Fenwick tree over the ranks of ``y``
    (Fenwick 1994, Software: Practice and Experience 24(3); O(n log distinct_y)). Within a run
    the groups come in ascending ``y``, so pairs tied in ``x`` are never counted; a group of
    equal ``y`` is one tree update, however many values it holds. Exact integers in int64. The
    sort is shared by every pair a vector is in, so a matrix of ``m`` vectors costs ``m`` sorts
    and ``m^2`` sweeps, where :func:`kendall_counts` sorts both vectors of each pair
    (Christensen 2005, "Fast algorithms for the calculation of Kendall's tau", Computational
    Statistics 20, on the Fenwick tree).
    """
    return counts_of_groups(_runs_of_ranks(order_x, rank_y, distinct_y), distinct_y)


@njit(cache=True)
def counts_of_groups(runs, distinct_y):
    """:class:`KendallCounts` from the groups of :func:`_runs_of_ranks` (``runs``), swept by
    :func:`_discordant_of_runs`."""
    ys, counts, groups, n, x_ties, xy_pairs = runs
    discordant, y_ties = _discordant_of_runs(ys, counts, groups, distinct_y)
    return _counts_from_discordant(n, discordant, xy_pairs, x_ties, y_ties)


@njit(cache=True)
def _runs_of_ranks(order_x, rank_y, distinct_y):
    """The first pass of :func:`sorted_counts`: ``(ys, counts, groups, n, x_ties, xy_pairs)``,
    the groups of equal ``y`` rank of each run of equal ``x`` (``ys[:groups]`` in ascending
    ``x``, then ascending ``y`` within a run; ``counts`` their sizes), the number of values
    kept, the tie statistics of ``x`` (:func:`tie_stats`) and the pairs tied in both.

    A gather of the ``y`` ranks in ``x`` order (independent reads: kept apart from the sweep's
    dependent updates, they overlap). A run of two is ordered by one comparison; a longer one is
    counted by rank (``in_run``), its distinct ranks sorted (by a pass over every rank when
    they are many). A run of one value with the ``y`` rank of the group before joins that
    group: the sweep counts a group's values against the earlier groups' larger ranks, the
    same for either, and meets fewer groups in a row on the same tree cells (a quarter fewer
    on WMT-like data, where it waits on its own updates).
    """
    size = order_x.size
    ys = np.empty(size, dtype=np.int32)
    counts = np.empty(size, dtype=np.int32)
    in_run = np.zeros(distinct_y, dtype=np.int32)
    w = 0  # groups written
    n = 0  # values kept
    start = 0  # the first group of the current run (one per value until the run ends)
    x_ties = (np.int64(0), np.int64(0), 0.0, 0.0)  # of the runs of two values or more
    singles = 0  # runs of one value
    xy_pairs = np.int64(0)
    for k in range(size + 1):
        if k == size or order_x[k] < 0:  # the run so far is complete
            length = w - start
            if length == 1:
                singles += 1
                w = _add_group(ys, counts, start, ys[start], 1)  # may join the group before
            elif length == 2:
                x_ties = with_group(x_ties, np.int64(2))
                a, b = ys[start], ys[start + 1]
                if a == b:
                    counts[start] = 2
                    xy_pairs += 1
                    w -= 1
                elif a > b:
                    ys[start], ys[start + 1] = b, a
            elif length > 2:
                x_ties = with_group(x_ties, np.int64(length))
                u = start  # the run's distinct ranks go to ys[start:u]
                for i in range(start, w):
                    r = ys[i]
                    c = in_run[r]
                    if c == 0:
                        ys[u] = r
                        u += 1
                    xy_pairs += c
                    in_run[r] = c + 1
                if 8 * (u - start) >= distinct_y:  # many: in rank order by one pass
                    u = start
                    for r in range(distinct_y):
                        if in_run[r]:
                            ys[u] = r
                            u += 1
                else:
                    ys[start:u].sort()
                for i in range(start, u):
                    counts[i] = in_run[ys[i]]
                    in_run[ys[i]] = 0
                w = u
            start = w
            if k == size:
                break
        index = order_x[k]
        if index < 0:  # a new run of x
            index = ~index
        r = rank_y[index]
        if r >= 0:
            ys[w] = r
            counts[w] = 1
            w += 1
            n += 1
    x_ties = (x_ties[0] + singles, x_ties[1], x_ties[2], x_ties[3])
    return ys, counts, w, np.int64(n), x_ties, xy_pairs


#: :func:`counts_of_keys`' keys: the ``y`` rank in bits 24-31, the index in bits 0-23.
PAIR_KEY_MAX_RANKS = 256
PAIR_KEY_MAX_N = 2**24


@njit(cache=True, nogil=True)
def counts_of_keys(x, keys, exact, distinct_y):
    """:class:`KendallCounts` of one pair from its sorted keys
    (:func:`~hanna_stats.kernels.levels._pair_keys`): ``x``'s float32 order in the high half,
    then ``y``'s rank (bits 24-31, ``distinct_y`` ranks) and the index (bits 0-23), present
    positions only.

    Sorted, the keys hold each run of one float32 in ascending ``y``: where the values are
    ``exact`` (float32 themselves) that is a run of equal ``x`` with its values in ascending
    ``y``. Otherwise the runs of one float32 of two values or more are first put in float64
    order (:func:`_order_float32_runs`, in place). Then one sequential pass (no gather): the
    runs of equal ``x`` (their tie statistics) and of equal ``y`` within them (the pairs tied
    in both), and each run of equal ``y`` (within a run of ``x`` and across runs) swept as one
    group (:func:`_sweep_add`): its discordant pairs are its values times the earlier values
    with a larger ``y``; within a run of equal ``x``, ``y`` ascends, so pairs tied in ``x`` are
    never counted. The state is kept in plain local variables (tuples of state passed through
    helpers made the loop several times slower).
    """
    if not exact:
        _order_float32_runs(x, keys)
    high = np.uint64(32)
    table, cumulative, levels = _sweep_table(distinct_y)
    last = np.int64(0)  # the rank of the pending group (the last value's)
    pending = np.int64(0)  # its values, not yet swept
    seen = np.int64(0)  # values swept
    discordant = np.int64(0)
    run = np.int64(0)  # the length of the current run of equal x
    same_xy = np.int64(0)  # the values before in it with the same y
    singles = np.int64(0)  # runs of one x
    xy_pairs = np.int64(0)
    x_ties = (np.int64(0), np.int64(0), 0.0, 0.0)  # of the runs of two or more
    previous = np.uint64(_NO_KEY)  # the high half before (none yet)
    for k in range(keys.size):
        top = keys[k] >> high
        y = np.int64((keys[k] >> np.uint64(24)) & np.uint64(0xFF))
        if top != previous:
            if run == 1:
                singles += 1
            elif run > 1:
                x_ties = with_group(x_ties, run)
            run = np.int64(0)
            same_xy = np.int64(0)
        elif y == last:
            same_xy += 1
        else:
            same_xy = np.int64(0)
        run += 1
        xy_pairs += same_xy
        previous = top
        if y == last:
            pending += 1
        else:
            discordant += _sweep_add(table, cumulative, levels, last, pending, seen)
            seen += pending
            last = y
            pending = np.int64(1)
    discordant += _sweep_add(table, cumulative, levels, last, pending, seen)
    if run == 1:
        singles += 1
    elif run > 1:
        x_ties = with_group(x_ties, run)
    x_ties = (x_ties[0] + singles, x_ties[1], x_ties[2], x_ties[3])
    y_ties = _sweep_ties(table, cumulative, distinct_y)
    return _counts_from_discordant(np.int64(keys.size), discordant, xy_pairs, x_ties, y_ties)


#: Above the high half of every key of :func:`counts_of_keys`.
_NO_KEY = 2**32
#: A high half that no kept key has (a float32's order is below it).
_SPLIT_MARK = 2**32 - 1


#: Longest run of one float32 that :func:`_order_float32_runs` orders by insertion (no memory
#: allocated: continuous scores at 400,000 values hold thousands of such runs, nearly all of two).
_INSERTION_MAX = 32


@njit(cache=True, nogil=True)
def _order_float32_runs(x, keys):
    """Put each run of sorted keys with one float32 (two values or more) in float64 order
    (stable: ``y`` stays ascending within equal values), in place, and mark its runs of equal
    ``x`` for :func:`counts_of_keys`: the first keeps the float32's order as high half, the
    next ones alternate :data:`_SPLIT_MARK` and it (consecutive runs differ, and the first and
    last differ from the keys around)."""
    high = np.uint64(32)
    low = np.uint64(0xFFFFFFFF)
    index = np.uint64(0xFFFFFF)
    k = 0
    while k + 1 < keys.size:
        if (keys[k] ^ keys[k + 1]) >> high:  # the usual case: the next key has another float32
            k += 1
            continue
        top = keys[k] >> high
        stop = k + 2
        while stop < keys.size and keys[stop] >> high == top:
            stop += 1
        if stop - k > _INSERTION_MAX:
            values = np.empty(stop - k)
            for q in range(k, stop):
                values[q - k] = x[np.int64(keys[q] & index)]
            keys[k:stop] = keys[k:stop][np.argsort(values, kind="mergesort")]
        else:
            for q in range(k + 1, stop):
                key = keys[q]
                v = x[np.int64(key & index)]
                p = q
                while p > k and x[np.int64(keys[p - 1] & index)] > v:
                    keys[p] = keys[p - 1]
                    p -= 1
                keys[p] = key
        mark = top
        for q in range(k + 1, stop):
            if x[np.int64(keys[q] & index)] != x[np.int64(keys[q - 1] & index)]:
                mark = np.uint64(_SPLIT_MARK) if mark == top else top
            keys[q] = (mark << high) | (keys[q] & low)
        k = stop


#: :func:`_sweep_table` keeps a cumulative count per rank of ``y`` up to this many ranks (a
#: group adds its count to every rank from its own on: a few vector additions, no dependent
#: walk), a Fenwick tree beyond: per group, 3.2 against 6.8 ns at 26 ranks, 6.2 against 9.5 ns
#: at 100, 12.9 against 10.8 ns at 128.
CUMULATIVE_MAX_RANKS = 96


@njit(cache=True, nogil=True)
def _sweep_table(distinct_y):
    """The empty table of a sweep over ``distinct_y`` ranks: ``(table, cumulative, levels)``,
    the count of values with a rank of at most ``r`` for every ``r`` (``cumulative``, up to
    :data:`CUMULATIVE_MAX_RANKS` ranks; padded to a multiple of 8: whole vectors, no remainder
    loop) or a Fenwick tree of ``levels`` levels (Fenwick 1994) and a spare last cell."""
    if distinct_y <= CUMULATIVE_MAX_RANKS:
        return np.zeros((np.int64(distinct_y) + 7) // 8 * 8, dtype=np.int64), True, 0
    levels = 1
    while (1 << levels) <= distinct_y:
        levels += 1
    return np.zeros((1 << levels) + 2, dtype=np.int64), False, levels


@njit(cache=True, nogil=True, inline="always")
def _sweep_add(table, cumulative, levels, y, c, seen):
    """Add a group of ``c`` values of rank ``y`` to a sweep's ``table`` (:func:`_sweep_table`)
    after ``seen`` values; returns its discordant pairs, ``c`` times the values before with a
    larger rank. The Fenwick tree is walked a fixed number of levels (no unpredictable loop
    exits): a query past the root adds ``tree[0] = 0``, an update past the top writes to the
    spare last cell."""
    if cumulative:
        below = table[y]
        for r in range(table.size):
            table[r] += c if r >= y else 0
        return c * (seen - below)
    top = table.size - 1
    below = np.int64(0)  # values swept with a rank <= y
    p = y + 1
    for _ in range(levels):
        below += table[p]
        p -= p & -p
    p = y + 1
    for _ in range(levels):
        table[min(p, top)] += c
        p += p & -p
    return c * (seen - below)


@njit(cache=True, nogil=True)
def _sweep_ties(table, cumulative, distinct_y):
    """The tie statistics (:func:`tie_stats`) of the ranks swept into ``table``, from the final
    count of each rank (the Fenwick tree inverted: the inverse of its linear-time build)."""
    y_ties = (np.int64(0), np.int64(0), 0.0, 0.0)
    if cumulative:
        for r in range(distinct_y):
            t = table[r] - (table[r - 1] if r else 0)
            if t:
                y_ties = with_group(y_ties, t)
        return y_ties
    size = table.size - 2
    for i in range(size, 0, -1):
        j = i + (i & -i)
        if j <= size:
            table[j] -= table[i]
    for r in range(distinct_y):
        if table[r + 1]:
            y_ties = with_group(y_ties, table[r + 1])
    return y_ties


@njit(cache=True, nogil=True, inline="always")
def _add_group(ys, counts, w, y, c):
    """Append the group ``(y, c)`` to the ``w`` groups of ``ys``/``counts``, or add ``c`` to the
    last group when it has the rank ``y``; returns the number of groups."""
    if w and ys[w - 1] == y:
        counts[w - 1] += c
        return w
    ys[w] = y
    counts[w] = c
    return w + 1


@njit(cache=True)
def _discordant_of_runs(ys, counts, groups, distinct_y):
    """The sweep of :func:`sorted_counts` over :func:`_runs_of_ranks`' groups
    (:func:`_sweep_add` each): the discordant pairs and the tie statistics of ``y``."""
    table, cumulative, levels = _sweep_table(distinct_y)
    seen = np.int64(0)  # values swept
    discordant = np.int64(0)
    for e in range(groups):
        c = np.int64(counts[e])
        discordant += _sweep_add(table, cumulative, levels, np.int64(ys[e]), c, seen)
        seen += c
    return discordant, _sweep_ties(table, cumulative, distinct_y)


def kendall_counts(x, y):
    """Kendall's sufficient statistics of two paired 1-D float64 arrays (no NaN).

    Short vectors (``n <= QUADRATIC_MAX_N``) are counted pair by pair in O(n^2); longer ones
    with Knight's O(n log n) algorithm (Knight 1966, "A computer method for calculating Kendall's
    tau with ungrouped data", JASA 61(314)): sort the pairs by ``(x, y)``, then the discordant
    pairs are the strict inversions counted by a merge sort of ``y``. The long path works on
    copies of ``x`` and ``y`` plus two scratch arrays: about twice the memory of the input.

    Parameters
    ----------
    x, y : array_like of float, shape (n,)
        Paired observations without NaN.

    Returns
    -------
    KendallCounts
        Concordant, discordant and tied pair counts, distinct values and tie sums.

    Raises
    ------
    ValueError
        If ``x`` and ``y`` are not 1-D arrays of the same length without NaN.

    Examples
    --------
    >>> c = kendall_counts([1.0, 2.0, 3.0], [1.0, 3.0, 2.0])
    >>> (c.concordant, c.discordant, c.x_ties, c.y_ties, c.xy_ties)
    (2, 1, 0, 0, 0)
    """
    x, y = validated({"x": x, "y": y}, 1, 1)
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("x and y must not contain NaN (drop the incomplete pairs first)")
    return pair_counts(x, y)


@njit(cache=True)
def pair_counts(x, y):
    """:func:`kendall_counts` of NaN-free float64 vectors of equal length."""
    if x.size <= QUADRATIC_MAX_N:
        return _counts_quadratic(x, y)
    return _counts_mergesort(x, y)


def tau_from_counts(counts, *, variant="b"):
    """Kendall's tau from :class:`KendallCounts`, for every variant.

    With ``n0 = n (n - 1) / 2``, ``n1``/``n2`` the pairs tied in x/y (including joint ties),
    ``S = concordant - discordant`` and ``m = min(distinct x, distinct y)``:

    - ``"a"``: ``tau_a = S / n0`` (Kendall 1938, Biometrika 30);
    - ``"b"``: ``tau_b = S / sqrt((n0 - n1) (n0 - n2))`` (Kendall 1945, Biometrika 33(3));
    - ``"c"``: ``tau_c = 2 S / (n^2 (m - 1) / m)`` (Stuart 1953, Biometrika 40),

    exactly as ``scipy.stats.kendalltau`` for ``variant="b"`` and ``"c"``. The statistic is NaN
    when a vector is constant (all pairs tied) or ``n < 2``, and is clipped to ``[-1, 1]``.

    Parameters
    ----------
    counts : KendallCounts
    variant : {"a", "b", "c"}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``counts`` is not a :class:`KendallCounts` or ``variant`` is unknown.

    Examples
    --------
    >>> counts = kendall_counts([1.0, 2.0, 2.0, 3.0], [1.0, 3.0, 2.0, 2.0])
    >>> round(tau_from_counts(counts, variant="a"), 4), round(tau_from_counts(counts), 4)
    (0.3333, 0.4)
    """
    code = check_option("variant", variant)
    if not isinstance(counts, KendallCounts):
        raise ValueError(f"counts must be a KendallCounts; got {type(counts).__name__}")
    return float(tau_by_code(counts, code))


@njit(cache=True)
def tau_by_code(counts, variant_code):
    """:func:`tau_from_counts` with the variant as its code ``TAU_A``, ``TAU_B`` or ``TAU_C``."""
    n = counts.n
    n0 = n * (n - 1) // 2
    n1 = counts.x_ties + counts.xy_ties
    n2 = counts.y_ties + counts.xy_ties
    if n0 == 0 or n1 == n0 or n2 == n0:
        return np.nan
    s = counts.concordant - counts.discordant
    if variant_code == TAU_A:
        value = s / n0
    elif variant_code == TAU_B:
        value = s / math.sqrt(n0 - n1) / math.sqrt(n0 - n2)
    elif variant_code == TAU_C:
        m = min(counts.x_distinct, counts.y_distinct)
        value = 2.0 * s / (float(n) * n * (m - 1) / m)
    else:
        return np.nan
    return min(1.0, max(-1.0, value))
