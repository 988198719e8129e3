"""Tie calibration of pairwise accuracy and tau_eq (Deutsch, Foster and Freitag 2023), and the
pairwise permutation test of two calibrated metrics.

A metric rarely gives two outputs exactly the same score, while people often do: pairwise
accuracy with ties (``acc_eq``) then penalises a metric for never predicting a tie. Tie
calibration lets the metric predict a tie when its two scores differ by at most ``epsilon``
(up to the rounding tolerance :data:`TIE_RTOL`), and chooses the ``epsilon`` that maximises the
statistic against the human scores.

Shapes: both functions take cubes (measures, inputs G, systems S), human scores ``H`` (Mh, G, S)
and metric scores ``M`` (Mm, G, S), as the other MT kernels (``level_correlation``,
``soft_pairwise_accuracy``), and both report ``statistic`` and ``epsilon`` of shape (Mh, Mm).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from hanna_stats.vocabulary import WORDS, check

from ._options import as_float_array, check_count, check_option, check_seed, memory_budget
from .distributed import cluster_executor, split
from .levels import at_level, grouped_cubes
from .permutation import permutation_swaps, standardize

#: The statistics of tie calibration: ``acc_eq = (C + T_hm) / N`` and
#: ``tau_eq = (C + T_hm - D - T_h - T_m) / N = 2 acc_eq - 1``.
TIE_STATISTICS = WORDS["tie_statistic"]
#: What a permutation of :func:`calibrated_permutation_test` swaps between two metrics: their
#: outcomes on each pair of observations, or their z-scored scores on each (input, system) cell.
SWAP_UNITS = WORDS["swap"]
#: Largest number of swap indicators (permutations x groups x pairs) :func:`calibrated_swaps`
#: returns at once (256 MiB as uint8), as the executor path of
#: :func:`calibrated_permutation_test` draws them; in process, the test draws its swaps block by
#: block within the memory budget, with no such bound.
MAX_SWAPS = 2**28
#: Most metric pairs of the pair-swap test computed at once (columns of its weight matrix); on
#: an executor, each task takes whole blocks, so that its matrix products are the in-process ones.
PAIR_BLOCK = 256
#: Working bytes of the pair-swap test per pair of observations: of a metric pair while its
#: weights are formed (:func:`_pair_weights`: the two metrics' outcomes, their validity and
#: difference, the float64 weights and their absolute values), and of a permutation (its uint8
#: swap and float64 sign).
WEIGHT_CELL_BYTES = 24
SIGN_CELL_BYTES = 9
#: Values of the calibration curve within this absolute distance count as equal maxima (the
#: smallest epsilon among them is chosen): sums of ``1 / n_pairs`` terms differ in the last bits
#: by the order of addition.
ATOL = 1e-12
#: Relative tolerance of the metric's ties: with ``scale`` the largest ``|m|`` of a metric (at the
#: level compared), the metric ties a pair when ``|m_i - m_j| <= epsilon + TIE_RTOL * scale``.
#: Differences equal but for rounding (``0.3 - 0.1`` and ``0.4 - 0.2``, or any two after scaling
#: the metric by 0.7) then tie together, so that the ties, the statistic and ``epsilon / scale``
#: do not depend on the metric's unit. Far above the rounding of a difference of means of a few
#: thousand scores (about ``1e-13 scale`` at worst) and below any meaningful difference.
TIE_RTOL = 1e-11


class TieCalibrationResult(NamedTuple):
    """Result of :func:`tie_calibration`; arrays of shape (measures of H, measures of M), as
    ``statistic`` and ``epsilon`` of :func:`calibrated_permutation_test`.

    ``statistic``: the (mean over groups of the) statistic at ``epsilon``; ``epsilon``: the
    metric's tie threshold (chosen or given); ``n_groups`` / ``n_skipped`` (int64): groups that
    entered the mean / that had fewer than 2 observations (or, unless ``nan_policy="omit"``, a
    missing value).
    """

    statistic: np.ndarray
    epsilon: np.ndarray
    n_groups: np.ndarray
    n_skipped: np.ndarray


class CalibratedPermutationResult(NamedTuple):
    """Result of :func:`calibrated_permutation_test` of human measures H (Mh, G, S) and metrics
    M (Mm, G, S).

    ``statistic`` (Mh, Mm): each metric's calibrated statistic against each human measure, and
    ``epsilon`` (Mh, Mm) its tie threshold, as :func:`tie_calibration` of ``H`` and ``M`` gives
    them; ``delta`` (Mh, Mm, Mm): ``statistic[h, a] - statistic[h, b]``; ``pvalue``
    (Mh, Mm, Mm): p-value of H1 "``a`` agrees better than ``b`` with human measure ``h``"
    (diagonals NaN). :meth:`for_human` takes one human measure's slice.
    """

    statistic: np.ndarray
    epsilon: np.ndarray
    delta: np.ndarray
    pvalue: np.ndarray

    def for_human(self, index=0):
        """The result against human measure ``index`` alone: ``statistic`` and ``epsilon``
        (Mm,), ``delta`` and ``pvalue`` (Mm, Mm)."""
        return CalibratedPermutationResult(*(field[index] for field in self))


@njit(cache=True)
def _metric_pairs(M):
    """``|m_i - m_j|`` over the pairs ``i < j`` of each group of a (G, S) matrix, group after
    group (NaN where a value is missing), the order that sorts them (NaN last), stably
    (:func:`_stable_order`), and the sorted differences ``diff[order]``."""
    groups, n = M.shape
    diff = np.empty(groups * (n * (n - 1) // 2))
    k = 0
    for g in range(groups):
        for i in range(n):
            for j in range(i + 1, n):
                diff[k] = abs(M[g, j] - M[g, i])
                k += 1
    order = _stable_order(diff)
    return diff, order, diff[order]


#: Bits of a digit of :func:`_stable_order`'s radix sort (2,048 counters: in L1 cache).
RADIX_BITS = 11


@njit(cache=True)
def _stable_order(values):
    """``numpy.argsort(values, kind="stable")`` of float64 values that are ``>= 0`` or NaN (NaN
    last), in O(n): an LSD radix sort of their bit patterns (a non-negative float64 orders as
    its bits read as uint64; every NaN maps to the largest key), ``RADIX_BITS`` bits a pass,
    skipping the digits all keys share. Stable, so the permutation is the mergesort's, equal
    values in index order: the tie calibration's sweep adds its terms in the same order. The
    mergesort's O(n log n) made the calibration grow faster than its pairs (about 3x slower
    at 20,000 inputs x 20 systems)."""
    n = values.size
    bits = values.view(np.uint64)
    keys = np.empty(n, dtype=np.uint64)
    for k in range(n):
        keys[k] = np.uint64(0xFFFFFFFFFFFFFFFF) if np.isnan(values[k]) else bits[k]
    order = np.arange(n)
    keys_out = np.empty_like(keys)
    order_out = np.empty_like(order)
    size = 1 << RADIX_BITS
    mask = np.uint64(size - 1)
    for shift in range(0, 64, RADIX_BITS):
        s = np.uint64(shift)
        count = np.zeros(size, dtype=np.int64)
        for k in range(n):
            count[np.int64((keys[k] >> s) & mask)] += 1
        if count.max() == n:
            continue  # one digit for all: the pass would not move anything
        total = 0
        for d in range(size):
            c = count[d]
            count[d] = total
            total += c
        for k in range(n):
            d = np.int64((keys[k] >> s) & mask)
            p = count[d]
            keys_out[p] = keys[k]
            order_out[p] = order[k]
            count[d] = p + 1
        keys, keys_out = keys_out, keys
        order, order_out = order_out, order
    return order


def _tolerances(M):
    """``TIE_RTOL * scale`` (Mm,) of each metric of a cube (Mm, G, S): ``scale`` is its largest
    finite ``|m|`` (0 for a metric without a finite value); see :data:`TIE_RTOL`."""
    finite = np.isfinite(M)
    return TIE_RTOL * np.where(finite, np.abs(M), 0.0).max(axis=(1, 2), initial=0.0)


@njit(cache=True)
def _cell(H, M, diff, order, ascending, epsilon, tol, omit):
    """Calibrated ``acc_eq`` of one (human, metric) pair of (G, S) matrices: ``(accuracy,
    epsilon, n_groups, n_skipped)``; ``epsilon < 0`` asks for the optimum. ``diff``,
    ``order`` and ``ascending`` are the metric's :func:`_metric_pairs`, ``tol`` its
    :func:`_tolerances`: the metric ties a pair when ``diff <= epsilon + tol``.

    Per pair, ``strict`` is 1 when it is correct with ``epsilon`` below its difference (both
    vectors order it the same way, or both tie it) and ``tie`` when correct with the metric
    tie forced (the human vector ties it); -1 marks a pair with a missing value.
    """
    groups, n = H.shape
    per_group = n * (n - 1) // 2
    # strict and tie of a pair side by side (one cache line for the sweep's random access).
    outcome = np.empty((diff.size, 2), dtype=np.int8)
    strict = outcome[:, 0]
    tie = outcome[:, 1]
    counts = np.zeros(groups, dtype=np.int64)  # N_g, the pairs of group g
    weight = np.zeros(groups)  # 1 / N_g, 0 for a group without pairs
    k = 0
    n_groups = 0
    for g in range(groups):
        count = 0
        missing = False
        for i in range(n):
            for j in range(i + 1, n):
                if np.isnan(H[g, i]) or np.isnan(H[g, j]) or np.isnan(diff[k]):
                    missing = True
                    strict[k] = -1
                else:
                    hs = np.int8(H[g, j] > H[g, i]) - np.int8(H[g, j] < H[g, i])
                    ms = np.int8(M[g, j] > M[g, i]) - np.int8(M[g, j] < M[g, i])
                    strict[k] = hs == ms
                    tie[k] = hs == 0
                    count += 1
                k += 1
        if missing and not omit:
            count = 0  # a group with a missing value is skipped; the cell is then undefined
        counts[g] = count
        if count:
            weight[g] = 1.0 / count
            n_groups += 1
    if n_groups == 0 or (not omit and n_groups < groups):
        return np.nan, np.nan, n_groups, groups - n_groups
    if epsilon < 0:  # candidates 0 and each diff; ties: the sorted pairs up to candidate + tol
        running = 0.0
        for p in range(k):
            if strict[p] >= 0:
                running += weight[p // per_group] * strict[p]
        best = -1.0
        epsilon = 0.0
        tied = 0  # the pairs order[:tied] are tied (NaN differences sort last, never tied)
        for t in range(-1, k):  # ascending[t] is diff[order[t]], read in order
            candidate = 0.0 if t < 0 else ascending[t]
            moved = t < 0
            while tied < k and ascending[tied] <= candidate + tol:
                p = order[tied]
                if strict[p] >= 0:
                    running += weight[p // per_group] * (tie[p] - strict[p])
                tied += 1
                moved = True
            if moved and running > best + ATOL:
                best = running
                epsilon = candidate
    total = 0.0  # the statistic at epsilon: per group, correct pairs / pairs
    for g in range(groups):
        correct = 0
        for p in range(g * per_group, (g + 1) * per_group):
            if strict[p] >= 0:
                correct += tie[p] if diff[p] <= epsilon + tol else strict[p]
        if counts[g]:
            total += correct / counts[g]
    return total / n_groups, epsilon, n_groups, groups - n_groups


@njit(cache=True, parallel=True)
def _calibrate(Hs, Ms, epsilons, tols, omit):
    measures_h = Hs.shape[0]
    measures_m = Ms.shape[0]
    stat = np.empty((measures_h, measures_m))
    eps = np.empty((measures_h, measures_m))
    n_groups = np.empty((measures_h, measures_m), dtype=np.int64)
    n_skipped = np.empty((measures_h, measures_m), dtype=np.int64)
    for j in prange(measures_m):  # each metric's differences sorted once for all humans
        diff, order, ascending = _metric_pairs(Ms[j])
        for i in range(measures_h):
            e = epsilons[i, j]
            a, e, g, s = _cell(Hs[i], Ms[j], diff, order, ascending, e, tols[j], omit)
            stat[i, j] = a
            eps[i, j] = e
            n_groups[i, j] = g
            n_skipped[i, j] = s
    return stat, eps, n_groups, n_skipped


def _epsilons(epsilon, shape):
    """``epsilon`` broadcast to ``shape`` (-1 = optimise); ValueError for a negative or NaN."""
    if epsilon is None:
        return np.full(shape, -1.0)
    array = np.asarray(epsilon, dtype=np.float64)
    if np.isnan(array).any() or (array < 0).any():
        raise ValueError(f"epsilon must be None or non-negative numbers; got {epsilon!r}")
    try:
        return np.ascontiguousarray(np.broadcast_to(array, shape))
    except ValueError:
        raise ValueError(
            f"epsilon must broadcast to shape {shape}; got shape {array.shape}"
        ) from None


def tie_calibration(
    H,
    M,
    *,
    level="item",
    statistic="acc_eq",
    epsilon=None,
    nan_policy="omit",
    group_by="input",
):
    """Pairwise accuracy (or tau_eq) with tie calibration of the metric scores.

    For human scores ``h`` and metric scores ``m`` of one group, a pair ``(i, j)`` is correct
    when ``h`` and the metric agree on it: both order it the same way, or both tie it, where the
    metric ties it when::

        |m_i - m_j| <= epsilon + tol,       tol = TIE_RTOL * max |m|

    (``TIE_RTOL`` = 1e-11, the maximum over the metric's finite scores at ``level``): differences
    equal but for rounding tie together, so that multiplying the metric by ``c > 0`` leaves the
    ties and the statistic as they are and multiplies ``epsilon`` by ``c`` (to rounding). The
    human scores tie when exactly equal. With ``N`` pairs, ``C`` concordant, ``D`` discordant,
    ``T_h`` / ``T_m`` / ``T_hm`` tied in ``h`` only, in the metric only, in both::

        acc_eq = (C + T_hm) / N,        tau_eq = (C + T_hm - D - T_h - T_m) / N = 2 acc_eq - 1

    At item level the statistic is averaged over the groups with at least one pair (the inputs,
    or the systems with ``group_by="system"``). Tie calibration (Deutsch, Foster and Freitag
    2023, "Ties Matter: Meta-Evaluating Modern Metrics with Pairwise Accuracy and Tie
    Calibration", EMNLP, Sec. 6; mt-metrics-eval's ``KendallWithTiesOpt`` with
    ``sample_rate=1``) chooses ``epsilon`` among 0 and the ``|m_i - m_j|`` over all pairs of all
    groups to maximise the mean: one epsilon shared by all groups. The search sorts the pair
    differences once (a stable radix sort) and sweeps them: at candidate ``e`` the pairs with
    difference up to ``e + tol`` are tied, each changing the mean by ``(tie - strict) /
    (N_g G)``: O(P) time and about 40 bytes a pair for P pairs. Among equal maxima the
    smallest epsilon is chosen; the statistic is then recomputed at that epsilon (where the
    same pairs tie). ``tau_eq`` has the same optimum as
    ``acc_eq``. mt-metrics-eval ties by exact float equality (``tol = 0``): its optimum can
    fall between two differences that differ only by rounding (an epsilon of about ``1e-14``
    for BLEU at 0 to 100); the two agree wherever the metric's distinct differences lie more
    than ``tol`` apart.

    Parameters
    ----------
    H : array_like, shape (Mh, G, S)
        Human scores (ties are kept as they are).
    M : array_like, shape (Mm, G, S)
        Metric scores (ties introduced within ``epsilon + tol``).
    level : {"item", "system", "global"}
        As :func:`level_correlation`.
    statistic : {"acc_eq", "tau_eq"}
    epsilon : None or array_like of float
        None (default): calibrate each (human, metric) pair. Otherwise fixed thresholds >= 0,
        broadcast to (Mh, Mm) (the metric still ties within ``epsilon + tol``).
    nan_policy : {"omit", "propagate", "raise"}
        ``"omit"``: pairs with a missing value are left out, groups with no pair skipped;
        ``"propagate"``: a missing value (or a group with fewer than 2 observations) makes the
        cell NaN; ``"raise"``: ValueError instead.
    group_by : {"input", "system"}
        Item-level groups, as :func:`level_correlation`.

    Returns
    -------
    TieCalibrationResult
        ``statistic``, ``epsilon``, ``n_groups``, ``n_skipped``, each (Mh, Mm).

    Examples
    --------
    MTME's tau_optimization_test (human 1, 1, 1, 4; metric 0, 2, 6, 8): epsilon 4 ties the
    metric's three lowest-differing pairs the humans tie.

    >>> res = tie_calibration([[[1, 1, 1, 4]]], [[[0, 2, 6, 8]]])
    >>> float(res.statistic[0, 0]), float(res.epsilon[0, 0])
    (0.6666666666666666, 4.0)
    """
    check_option("statistic", statistic, TIE_STATISTICS)
    Hc, Mc = grouped_cubes({"H": H, "M": M}, level, nan_policy, group_by)
    stat, eps, n_groups, n_skipped = _calibrated(Hc, Mc, epsilon, nan_policy, level, statistic)
    if statistic == "tau_eq":
        stat = 2.0 * stat - 1.0
    return TieCalibrationResult(stat, eps, n_groups, n_skipped)


def _calibrated(Hc, Mc, epsilon, nan_policy, level, statistic):
    """:func:`_calibrate` of the level cubes (measure, group, observations): ``acc_eq``,
    ``epsilon``, ``n_groups``, ``n_skipped``; ValueError for an undefined cell under
    ``nan_policy="raise"``."""
    epsilons = _epsilons(epsilon, (Hc.shape[0], Mc.shape[0]))
    stat, eps, n_groups, n_skipped = _calibrate(
        Hc, Mc, epsilons, _tolerances(Mc), nan_policy == "omit"
    )
    if nan_policy == "raise" and np.isnan(stat).any():
        i, j = (int(k) for k in np.argwhere(np.isnan(stat))[0])
        raise ValueError(
            f"tie-calibrated {statistic} of H[{i}] and M[{j}] is undefined at level {level!r}: "
            "missing values or fewer than 2 observations in a group (nan_policy='raise')"
        )
    return stat, eps, n_groups, n_skipped


@njit(cache=True, parallel=True)
def _pair_outcomes(H, M, limits):
    """Per human measure, metric and pair ``i < j`` of each group (row-major, as
    :func:`calibrated_swaps`): 1 when the metric is correct on it (see :func:`tie_calibration`;
    it ties the pair when ``|m_j - m_i| <= limits[h, m]``, its epsilon plus its tolerance), 0
    when not, -1 when a value is missing; int8 (Mh, Mm, G, P) of cubes H (Mh, G, S) and
    M (Mm, G, S)."""
    measures_h, groups, n = H.shape
    measures_m = M.shape[0]
    out = np.empty((measures_h, measures_m, groups, n * (n - 1) // 2), dtype=np.int8)
    for g in prange(groups):
        for h in range(measures_h):
            for m in range(measures_m):
                limit = limits[h, m]
                p = 0
                for i in range(n):
                    for j in range(i + 1, n):
                        human = H[h, g, j] - H[h, g, i]
                        metric = M[m, g, j] - M[m, g, i]
                        if np.isnan(human) or np.isnan(metric):
                            out[h, m, g, p] = -1
                        elif abs(metric) <= limit:
                            out[h, m, g, p] = human == 0
                        else:
                            out[h, m, g, p] = np.sign(metric) == np.sign(human)
                        p += 1
    return out


def calibrated_swaps(n_groups, n_pairs, *, permutations=1000, seed=0):
    """Swap indicators (K, G, P) uint8 of :func:`calibrated_permutation_test`: one fair coin per
    permutation, group and pair of observations.

    Order of the pairs: within each group, the pairs ``i < j`` of its observations in row-major
    order (``numpy.triu_indices(n, 1)``: (0, 1), (0, 2), ..., (1, 2), ...). The observations
    of a group are the systems (item level; the inputs with ``group_by="system"``) or the
    systems' means (system level); at global level the one group holds the G S cells, input
    after input (cell ``(g, s)`` is observation ``g S + s``) with
    ``cell_order="input-major"``, the default, and system after system (``s G + g``,
    mt-metrics-eval's packing) with ``cell_order="system-major"``.

    At most :data:`MAX_SWAPS` indicators; :func:`calibrated_permutation_test` draws the same
    ones block by block (:func:`_swap_blocks`), without that bound.
    """
    permutations = check_count("permutations", permutations)
    size = permutations * n_groups * n_pairs
    if size > MAX_SWAPS:
        raise ValueError(
            f"calibrated permutation test: {permutations} permutations x {n_groups} groups x "
            f"{n_pairs} pairs is {size:,} swap indicators, more than {MAX_SWAPS:,}; use fewer "
            "permutations or item/system level, or run the test in process"
        )
    ((_, _, swaps),) = _swap_blocks((permutations, n_groups, n_pairs), check_seed(seed))
    return swaps


def _swap_blocks(shape, swaps, rows=None):
    """Consecutive blocks ``(lo, hi, swaps[lo:hi])`` of ``rows`` permutations (default: all) of
    swap indicators of ``shape`` (K, G', P): slices of ``swaps``, or, given a Generator, drawn
    from it block after block. numpy draws these coins a byte each, four from a 32-bit word, and
    starts each call on a fresh word: with ``rows`` a multiple of :func:`_word_rows`, every
    block but the last takes whole words, and the blocks are the coins of one draw of the whole
    (:func:`calibrated_swaps`)."""
    permutations = shape[0]
    rows = max(1, permutations if rows is None else rows)
    draw = isinstance(swaps, np.random.Generator)
    for lo in range(0, permutations, rows):
        hi = min(permutations, lo + rows)
        if draw:
            yield lo, hi, swaps.integers(0, 2, size=(hi - lo, *shape[1:]), dtype=np.uint8)
        else:
            yield lo, hi, swaps[lo:hi]


def calibrated_permutation_test(
    H,
    M,
    *,
    level="item",
    statistic="acc_eq",
    epsilon=None,
    permutations=1000,
    seed=0,
    swaps=None,
    nan_policy="omit",
    group_by="input",
    swap="pairs",
    cell_order="input-major",
    progress=None,
    executor=None,
):
    """Pairwise permutation test between tie-calibrated metrics, every ordered pair at once.

    Each metric is calibrated once against each human measure of ``H``
    (:func:`tie_calibration`, its own ``epsilon``). For a pair of metrics ``(a, b)`` and each
    pair of observations in a group, let ``c_a``, ``c_b`` be 1 when that metric is correct on
    it (at its epsilon). A permutation swaps ``c_a`` and ``c_b`` on each pair with probability
    1/2 and recomputes both statistics; with group weights ``w_g = 1 / (N_g G)``, the permuted
    difference is ``d* = sum_g w_g sum_p (1 - 2 s_p) (c_a - c_b)``. The p-value of H1 "``a``
    agrees better" is ``#{d* >= d} / K`` over ``K`` permutations, ``d = stat_a - stat_b`` (no
    identity permutation added), comparisons relaxed by ``1e-10 sum |w (c_a - c_b)|`` against
    rounding. This is mt-metrics-eval's ``PairwisePermutationSigDiff`` (Deutsch, Foster and
    Freitag 2023, Sec. 7): swapping pair outcomes rather than scores compares metrics with
    different epsilons without re-calibrating in every permutation. Pairs where the human
    measure, ``a`` or ``b`` is missing are left out of the test (``nan_policy="omit"``): its
    ``d`` is then taken on the pairs both metrics have, and may differ from ``delta``, each
    metric's statistic on its own pairs. The same swaps serve every human measure and every
    pair of metrics; they are drawn, expanded to signs and multiplied block by block of
    permutations and metric pairs that fit the memory budget
    (:func:`~hanna_stats.kernels._options.memory_budget`): the coins of one call of
    :func:`calibrated_swaps`, and the same p-values (a block's matrix product may round a
    permuted sum differently in the last bit, far inside the allowance above).

    Which swap is which pair: see :func:`calibrated_swaps` (row-major pairs of each group's
    observations). At global level the observations are the G S cells in ``cell_order``:
    ``"input-major"`` (default; cell ``(g, s)`` is observation ``g S + s``) or
    ``"system-major"`` (``s G + g``, the order of mt-metrics-eval, whose vectors hold each
    system's segments one after another), so that swaps given in mt-metrics-eval's order of
    pairs mean the same pairs here. Only the p-values depend on it, and only at global level
    with ``swap="pairs"`` (elsewhere a group holds one axis, and ``swap="scores"`` swaps
    cells by their (input, system) index); the default keeps the p-values of a seed as they
    were.

    ``swap="scores"`` is mt-metrics-eval's ``PermutationSigDiff`` with ``KendallWithTiesOpt``
    instead: each metric is z-scored over its cells (missing values ignored), a permutation
    swaps the two metrics' z-scores on each (input, system) cell with probability 1/2
    (:func:`~hanna_stats.kernels.permutation_swaps`), and both permuted metrics are
    re-calibrated (their epsilons chosen afresh) at ``level``. The observed difference the null
    is compared with is that of the two z-scored metrics, calibrated alike (mt-metrics-eval's
    ``delta``), so that both see the same values and ties; ``delta`` reports the difference of
    the metrics' own statistics. It costs two calibrations per permutation, human measure and
    pair of metrics (about 0.1 ms each for 96 inputs x 10 systems).

    Error rates (``docs/error-rates.md``, simulated under the null by ``docs/error_rates.py``):
    at item level ``swap="pairs"`` is liberal, rejecting two metrics of equal quality at
    alpha 0.05 in 15-24% of HANNA-, SummEval- and WMT-shaped studies (its swaps treat the pairs
    of a group as independent, though each observation is in S - 1 of them); ``swap="scores"``
    keeps the level. ``"pairs"`` stays the default because it is the WMT metrics tasks' test.

    Parameters
    ----------
    H : array_like, shape (Mh, G, S)
        Human scores, a cube as :func:`tie_calibration`'s (one (G, S) matrix ``h`` is
        ``h[None]``).
    M : array_like, shape (Mm, G, S)
        Metric scores.
    level, statistic, epsilon, nan_policy, group_by
        As :func:`tie_calibration` (``epsilon`` broadcast to (Mh, Mm)).
    permutations : int
    seed : int, Generator or None
        Draws the swaps (:func:`calibrated_swaps`, or :func:`permutation_swaps` for
        ``swap="scores"``) unless ``swaps`` is given.
    swaps : array_like of {0, 1}, optional
        Precomputed swap indicators: shape (K, G', P) for ``swap="pairs"``, the groups ``G'``
        and pairs ``P = S' (S' - 1) / 2`` of ``level`` (and ``group_by``), in the order of
        :func:`calibrated_swaps` (and ``cell_order``); (K, G, S), the cells of ``M``, for
        ``swap="scores"``.
    swap : {"pairs", "scores"}
        What a permutation swaps (see above).
    cell_order : {"input-major", "system-major"}
        Order of the cells at global level, which numbers the pairs of ``swaps`` (see above).
    progress : callable, optional
        ``progress(iterable, desc=..., total=...)`` wrapping the steps computed one after the
        other (the permutations of ``swap="scores"``, blocks of permutations and metric pairs
        otherwise), e.g.
        :func:`hanna_stats.progress.progress`; with ``executor``, the blocks as they finish.
    executor : distributed.Client, concurrent.futures.Executor or ClusterExecutor, optional
        Run the test in blocks on this executor, e.g. a Dask cluster (see
        :mod:`hanna_stats.kernels.distributed`): per human measure, the blocks of
        :data:`PAIR_BLOCK` metric pairs (``swap="pairs"``) or ranges of permutations
        (``swap="scores"``), on the swaps drawn here once; the same p-values bit for bit.
        None (the default): in this process.

    Returns
    -------
    CalibratedPermutationResult
        ``statistic``, ``epsilon`` (Mh, Mm), the same shape as :func:`tie_calibration`'s;
        ``delta``, ``pvalue`` (Mh, Mm, Mm).

    Examples
    --------
    >>> H = [[[1.0, 2.0, 3.0, 4.0]]]
    >>> M = [[[1.0, 2.0, 3.0, 4.0]], [[4.0, 3.0, 2.0, 1.0]]]
    >>> res = calibrated_permutation_test(H, M, permutations=200, seed=1)
    >>> res.statistic.tolist(), float(res.pvalue[0, 0, 1]), float(res.pvalue[0, 1, 0])
    ([[1.0, 0.0]], 0.015, 1.0)
    >>> res.for_human(0).epsilon.tolist()
    [0.0, 0.0]
    """
    check_option("statistic", statistic, TIE_STATISTICS)
    check_option("swap", swap, SWAP_UNITS)
    check("cell_order", cell_order)
    if swap == "scores" and epsilon is not None:
        raise ValueError("swap='scores' re-calibrates every permutation: epsilon must be None")
    if np.ndim(H) == 2:
        raise ValueError(
            f"H must have 3 dimensions (human measures, inputs, systems), as tie_calibration's; "
            f"got shape {np.shape(H)}: pass h[None] for one (inputs, systems) matrix"
        )
    Hc, Mc = grouped_cubes({"H": H, "M": M}, level, nan_policy, group_by)
    stat, eps = _calibrated(Hc, Mc, epsilon, nan_policy, level, statistic)[:2]
    if swap == "scores":
        options = (level, nan_policy, group_by, permutations, seed, swaps, executor, progress)
        return _finish(stat, eps, _score_swap_pvalues(Hc, M, *options), statistic)
    n_groups, n_obs = Hc.shape[1], Hc.shape[2]
    n_pairs = n_obs * (n_obs - 1) // 2
    if swaps is not None:
        swaps = np.asarray(swaps)
        if swaps.shape[1:] != (n_groups, n_pairs) or swaps.ndim != 3:
            raise ValueError(f"swaps must have shape (K, {n_groups}, {n_pairs}); got {swaps.shape}")
        shape = swaps.shape
    elif executor is not None:
        swaps = calibrated_swaps(n_groups, n_pairs, permutations=permutations, seed=seed)
        shape = swaps.shape
    else:  # drawn block by block (_pair_pvalues)
        shape = (check_count("permutations", permutations), n_groups, n_pairs)
        swaps = check_seed(seed)
    if level == "global" and cell_order == "system-major":
        cells = np.shape(M)[1:]
        Hc, Mc = (_system_major(X, *cells) for X in (Hc, Mc))
    if executor is not None:
        pvalue = _cluster_pairs(cluster_executor(executor), (Hc, Mc, eps, swaps), progress)
        return _finish(stat, eps, pvalue, statistic)
    return _finish(stat, eps, _pair_pvalues(Hc, Mc, eps, shape, swaps, progress), statistic)


def _score_swap_pvalues(
    Hc, M, level, nan_policy, group_by, permutations, seed, swaps, executor, progress
):
    """p-values of ``swap="scores"``: the metrics' z-scored scores swapped per cell, both
    re-calibrated every permutation (:func:`calibrated_permutation_test`)."""
    M = np.asarray(M, dtype=np.float64)  # validated by grouped_cubes: (Mm, G, S)
    groups, systems = M.shape[1:]
    if swaps is None:
        swaps = permutation_swaps(groups, systems, permutations=permutations, seed=seed)
    swaps = np.asarray(swaps)
    if swaps.ndim != 3 or swaps.shape[1:] != (groups, systems):
        raise ValueError(f"swaps must have shape (K, {groups}, {systems}); got {swaps.shape}")
    if executor is not None:
        shared = (Hc, M, level, nan_policy, group_by, swaps)
        return _cluster_recalibrated(cluster_executor(executor), shared, progress)
    return np.stack(
        [
            _recalibrated_pvalues(Hc[[i]], M, level, nan_policy, group_by, swaps, progress)
            for i in range(Hc.shape[0])
        ]
    )


def _system_major(cube, groups, systems):
    """A global-level cube (M, 1, G S) of cells input after input, with its cells system after
    system (cell ``(g, s)`` at ``s G + g``)."""
    measures = cube.shape[0]
    by_system = cube.reshape(measures, groups, systems).transpose(0, 2, 1)
    return np.ascontiguousarray(by_system).reshape(measures, 1, groups * systems)


def _steps(steps, progress, desc):
    """``steps`` as a list, behind ``progress`` when given and there are several."""
    steps = list(steps)
    if progress is None or len(steps) < 2:
        return steps
    return progress(steps, desc=desc, total=len(steps))


def _pair_blocks(cells):
    """``(pairs, permutations)`` a block of the pair-swap test takes for ``cells`` pairs of
    observations (G' P): half the memory budget for the work, half of it for the weights of a
    block of metric pairs (at most :data:`PAIR_BLOCK`; :data:`WEIGHT_CELL_BYTES` a cell), half
    for a block of permutations (a multiple of :func:`_word_rows`): their signs
    (:data:`SIGN_CELL_BYTES` a cell) and permuted sums and comparisons (24 bytes a metric
    pair). At least one of each."""
    quarter = memory_budget() // 4
    pairs = max(1, min(PAIR_BLOCK, quarter // (WEIGHT_CELL_BYTES * max(cells, 1))))
    rows = quarter // (SIGN_CELL_BYTES * cells + 3 * 8 * pairs)
    unit = _word_rows(cells)
    return pairs, max(unit, rows // unit * unit)


def _word_rows(cells):
    """Fewest permutations of ``cells`` coins each that fill whole 32-bit words of numpy's
    draws (:func:`_swap_blocks`): ``4 / gcd(cells, 4)``."""
    return 4 // math.gcd(cells, 4)


def _pair_weights(outcome, a, b):
    """The weights ``D`` (pairs, G' P) of the pair-swap test of the metric pairs ``(a, b)``,
    from one human measure's outcomes (Mm, G', P) (:func:`_pair_outcomes`): ``w_g (c_a - c_b)``
    on the pairs of observations both metrics have, ``w_g = 1 / (N_g G)`` over the groups
    with such pairs, 0 elsewhere; with the observed differences ``D.sum(axis=1)`` and their
    allowances for rounding, ``1e-10 |D|.sum(axis=1)``."""
    ca, cb = outcome[a], outcome[b]
    valid = (ca >= 0) & (cb >= 0)
    n_g = valid.sum(axis=2, keepdims=True)
    used = (n_g > 0).sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(valid, 1.0 / (n_g * used), 0.0)
    D = np.multiply(w, np.where(valid, ca - cb, 0), out=w).reshape(a.size, -1)
    return D, D.sum(axis=1), 1e-10 * np.abs(D).sum(axis=1)


@njit(cache=True, parallel=True)
def _signs(swaps, out):
    """``out[:] = 1 - 2 swaps`` (float64 +-1) of swap indicators (K, C) of any numeric dtype, in
    one pass (numpy's two passes took most of the time of a block of permutations)."""
    rows, cells = out.shape
    for k in prange(rows):
        for c in range(cells):
            out[k, c] = 1.0 - 2.0 * swaps[k, c]


def _pair_pvalues(Hc, Mc, eps, shape, swaps, progress=None, part=(0, 1)):
    """p-values (Mh, Mm, Mm) of the pair-swap test of the human measures' level cubes ``Hc``
    (Mh, G', S') and the metrics' ``Mc`` (Mm, G', S') at their epsilons ``eps`` (Mh, Mm), for
    swap indicators of ``shape`` (K, G', P): the array ``swaps``, or drawn from the Generator
    ``swaps`` (:func:`_swap_blocks`). ``part=(j, n)``: only the pairs of the ``j``-th of every
    ``n`` blocks of :data:`PAIR_BLOCK` pairs (the others NaN), a task of
    :func:`_cluster_pairs`.

    Block by block of permutations (the swaps drawn once, as their +-1 signs) and of metric
    pairs (:func:`_pair_blocks`), the permuted differences ``signs @ D.T``; a pair's p-value
    counts its permutations over the blocks. The weights of all the blocks of pairs are kept
    across the blocks of permutations where they fit a quarter of the memory budget, and
    formed again for each otherwise. One block of permutations (the whole test within the
    budget) makes the matrix products those of the whole."""
    outcome = _pair_outcomes(Hc, Mc, np.nan_to_num(eps) + _tolerances(Mc))
    measures_h, measures = outcome.shape[:2]
    permutations = shape[0]
    cells = math.prod(shape[1:])
    a_idx, b_idx = np.triu_indices(measures, 1)
    pair_rows, perm_rows = _pair_blocks(cells)
    starts = range(0, a_idx.size, PAIR_BLOCK)[part[0] :: part[1]]
    jobs = [
        (h, slice(sub, min(sub + pair_rows, start + PAIR_BLOCK, a_idx.size)))
        for h in range(measures_h)
        for start in starts
        for sub in range(start, min(start + PAIR_BLOCK, a_idx.size), pair_rows)
    ]
    blocks = _swap_blocks(shape, swaps, perm_rows)
    several = permutations > perm_rows
    weights = 8 * cells * sum(pairs.stop - pairs.start for _, pairs in jobs)
    keep = several and weights + WEIGHT_CELL_BYTES * cells * pair_rows <= memory_budget() // 4
    kept = {}
    signs = np.empty((min(perm_rows, permutations), cells))
    counts = np.full((measures_h, measures, measures), np.nan)
    for h, pairs in jobs:
        counts[h, a_idx[pairs], b_idx[pairs]] = counts[h, b_idx[pairs], a_idx[pairs]] = 0
    steps = range(-(-permutations // perm_rows) * len(jobs))  # permutation blocks x jobs
    desc = "permutation and metric pair blocks" if several else "metric pairs"
    for step in _steps(steps, progress, desc):
        job = step % len(jobs)
        if job == 0:  # the next block of permutations, as its +-1 signs
            lo, hi, block = next(blocks)
            rows = signs[: hi - lo]
            _signs(block.reshape(hi - lo, cells), rows)
        h, pairs = jobs[job]
        a, b = a_idx[pairs], b_idx[pairs]
        D, observed, gamma = kept.get(job) or _pair_weights(outcome[h], a, b)
        if keep:
            kept[job] = D, observed, gamma
        null = rows @ D.T  # (permutations, pairs)
        counts[h, a, b] += (null >= observed - gamma).sum(axis=0)
        counts[h, b, a] += (null <= observed + gamma).sum(axis=0)
    for _ in blocks:  # no pairs: the rest of the draws, so that a Generator advances as ever
        pass
    return counts / permutations


def _finish(stat, eps, pvalue, statistic):
    """The :class:`CalibratedPermutationResult` of ``stat``, ``eps`` (Mh, Mm) and ``pvalue``
    (Mh, Mm, Mm) (NaN p-values for undefined metrics)."""
    for h, undefined in enumerate(np.isnan(stat)):
        pvalue[h, undefined, :] = np.nan
        pvalue[h, :, undefined] = np.nan
    if statistic == "tau_eq":
        stat = 2.0 * stat - 1.0
    delta = stat[:, :, None] - stat[:, None, :]
    return CalibratedPermutationResult(stat, eps, delta, pvalue)


def _recalibrated_pvalues(Hc, M, level, nan_policy, group_by, swaps, progress=None):
    """p-values (Mm, Mm) of ``swap="scores"``: z-scored cells of ``M`` (Mm, G, S) swapped as
    ``swaps`` (K, G, S) say, both hybrids re-calibrated against ``Hc`` (1, G', S'), one human
    measure's level cube; the observed difference is that of the z-scored metrics, calibrated
    alike."""
    Z = standardize(M)
    omit = nan_policy == "omit"

    def calibrated(X):  # the optimal acc_eq (Mx,) of the cells X (Mx, G, S) at level
        cubes = np.ascontiguousarray(at_level(X, level, omit, group_by))
        epsilons = np.full((1, cubes.shape[0]), -1.0)
        return _calibrate(Hc, cubes, epsilons, _tolerances(cubes), omit)[0][0]

    a, b = np.triu_indices(M.shape[0], 1)
    Za, Zb = Z[a], Z[b]
    null = np.empty((swaps.shape[0], a.size))
    for k in _steps(range(swaps.shape[0]), progress, "permutations"):
        s = swaps[k].astype(bool)
        permuted = calibrated(np.concatenate([np.where(s, Zb, Za), np.where(s, Za, Zb)]))
        null[k] = permuted[: a.size] - permuted[a.size :]  # a's hybrid minus b's
    z_stat = calibrated(Z)  # the observed statistics on the values the null swaps
    observed = z_stat[a] - z_stat[b]
    gamma = 1e-10 * (np.abs(observed) + 1.0)
    pvalue = np.full((M.shape[0], M.shape[0]), np.nan)
    pvalue[a, b] = (null >= observed - gamma).mean(axis=0)
    pvalue[b, a] = (null <= observed + gamma).mean(axis=0)
    return pvalue


def _cluster_pairs(cluster, shared, progress):
    """The pair-swap test's p-values (Mh, Mm, Mm) on a
    :class:`~hanna_stats.kernels.distributed.ClusterExecutor`: per human measure, ``n`` tasks,
    task ``j`` computing the ``j``-th of every ``n`` blocks of :data:`PAIR_BLOCK` metric pairs
    (:func:`_pair_pvalues` with ``part=(j, n)``): the in-process blocks, the same values.
    ``shared``: ``(Hc, Mc, eps, swaps)``, sent to the workers once."""
    Hc, Mc = shared[0], shared[1]
    n_blocks = -(-(Mc.shape[0] * (Mc.shape[0] - 1) // 2) // PAIR_BLOCK)
    per_human = max(1, min(n_blocks, cluster.blocks // Hc.shape[0]))
    tasks = [(i, j, per_human) for i in range(Hc.shape[0]) for j in range(per_human)]
    parts = cluster.map(
        _pair_pvalues_block, shared, tasks, progress=progress, desc="metric pair blocks"
    )
    pvalue = np.full((Hc.shape[0], Mc.shape[0], Mc.shape[0]), np.nan)
    for (i, _, _), part in zip(tasks, parts, strict=True):
        done = ~np.isnan(part)
        pvalue[i][done] = part[done]
    return pvalue


def _pair_pvalues_block(Hc, Mc, eps, swaps, task):
    """One task of :func:`_cluster_pairs`: ``task = (human, j, n)``."""
    i, j, n = task
    return _pair_pvalues(Hc[[i]], Mc, eps[[i]], swaps.shape, swaps, part=(j, n))[0]


def _cluster_recalibrated(cluster, shared, progress):
    """The score-swap test's p-values (Mh, Mm, Mm) on a
    :class:`~hanna_stats.kernels.distributed.ClusterExecutor`: per human measure, ranges of
    the permutations, each a task (:func:`_recalibrated_pvalues` on its swaps; a permutation's
    statistics do not depend on the others). A task's p-values are its counts over its
    permutations, exact integers once multiplied back; their sum over ``K`` is the in-process
    mean. ``shared``: ``(Hc, M, level, nan_policy, group_by, swaps)``."""
    Hc, M, swaps = shared[0], shared[1], shared[5]
    K = swaps.shape[0]
    ranges = split(K, max(1, cluster.blocks // Hc.shape[0]))
    tasks = [(i, lo, hi) for i in range(Hc.shape[0]) for lo, hi in ranges]
    parts = cluster.map(
        _recalibrated_block, shared, tasks, progress=progress, desc="permutation blocks"
    )
    counts = np.zeros((Hc.shape[0], M.shape[0], M.shape[0]))
    for (i, lo, hi), part in zip(tasks, parts, strict=True):
        counts[i] += np.rint(part * (hi - lo))  # NaN (the diagonal) stays NaN
    return counts / K


def _recalibrated_block(Hc, M, level, nan_policy, group_by, swaps, task):
    """One task of :func:`_cluster_recalibrated`: ``task = (human, lo, hi)``."""
    i, lo, hi = task
    return _recalibrated_pvalues(Hc[[i]], M, level, nan_policy, group_by, swaps[lo:hi])


def calibrated_null(H, M, epsilon, swaps):
    """Resampled differences of item-level acc_eq of the pair-swap test, per draw and pair.

    For one human measure ``H`` (G, S) and metrics ``M`` (Mm, G, S) at fixed epsilons (Mm,),
    draw ``k`` swaps the two metrics' outcomes (correct or not) on the pairs of systems of each
    input where ``swaps[k, g, p]`` is 1 (:func:`calibrated_swaps`), and the result is the
    swapped ``acc_eq`` of ``a`` minus that of ``b``: ``sum_g,p w_g (1 - 2 s_kgp) (c_a - c_b)``
    with ``w_g = 1 / (N_g G)`` as :func:`calibrated_permutation_test` (``swap="pairs"``), whose
    p-values count these draws. mt-metrics-eval keeps them as ``PairwisePermutationSigDiff``'s
    list of resampled correlation pairs, for ``TaskSetResults.AverageCorrMatrix``.

    Returns
    -------
    ndarray of float64, shape (K, Mm, Mm)
        Antisymmetric in the last two axes; zero on the diagonal.

    Examples
    --------
    >>> H = np.array([[1.0, 2.0, 3.0]]); M = np.array([[[1.0, 2.0, 3.0]], [[3.0, 2.0, 1.0]]])
    >>> s = np.array([[[0, 0, 0]], [[1, 1, 1]]], dtype=np.uint8)
    >>> calibrated_null(H, M, [0.0, 0.0], s)[:, 0, 1].tolist()
    [1.0, -1.0]
    """
    H = as_float_array("H", H, 2)
    M = as_float_array("M", M, 3)
    eps = np.asarray(epsilon, dtype=np.float64).reshape(1, M.shape[0])
    outcome = _pair_outcomes(H[None], M, np.nan_to_num(eps) + _tolerances(M))[0]
    a, b = np.triu_indices(M.shape[0], 1)
    D = _pair_weights(outcome, a, b)[0]
    swaps = np.asarray(swaps)
    if swaps.shape[1:] != outcome.shape[1:]:
        raise ValueError(f"swaps must have shape (K, {outcome.shape[1]}, {outcome.shape[2]})")
    signs = np.empty((swaps.shape[0], D.shape[1]))
    _signs(swaps.reshape(swaps.shape[0], -1), signs)
    null = np.zeros((swaps.shape[0], M.shape[0], M.shape[0]))
    null[:, a, b] = signs @ D.T
    null[:, b, a] = -null[:, a, b]
    return null
