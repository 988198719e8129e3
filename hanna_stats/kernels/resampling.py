"""Resampling statistics on measure cubes: bootstrap CIs, PERM-BOTH tests, pairwise accuracy.

Cubes have shape (measures, inputs G, systems S), float64, NaN = missing, as in
:mod:`hanna_stats.kernels.grouped`. Every random draw (bootstrap indices, permutation swaps) is
made once, in Python, by a :class:`numpy.random.Generator` seeded by the caller, and is shared by
all measures and pairs; compiled loops assign each output cell to one thread and sum in a fixed
order, so results do not depend on the number of threads.

- :func:`bootstrap_ci`: percentile and BCa confidence intervals of item- or system-level
  correlations, resampling inputs, systems or both (Deutsch, Dror and Roth 2021).
- :func:`permutation_test_pairs`: the PERM-BOTH paired permutation test of the difference
  between two measures' correlations with one criterion, for all pairs at once.
- :func:`pairwise_accuracy`: ``acc_eq`` of Deutsch, Foster and Freitag (2023), from Kendall's
  sufficient statistics.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange
from scipy.special import ndtr, ndtri

from ._options import KENDALL, METHODS, SPEARMAN, VARIANTS, code, validated
from .correlation import statistic_omit, unit_vector
from .grouped import (
    LevelCorrelationResult,
    UndefinedCorrelationError,
    aggregate_groups,
    at_level,
    group_correlations,
    level_correlation,
)
from .kendall import counts_from_sign_sums, kendall_counts, tau, tie_stats
from .ranks import rankdata, sort_order

RESAMPLE = ("inputs", "systems", "both")
CI_METHODS = ("percentile", "bca")
ALTERNATIVES = ("two-sided", "less", "greater")
BOOTSTRAP_LEVELS = ("item", "system")
#: Relative tolerance of the permutation p-value's comparisons (as scipy.stats.permutation_test):
#: a permuted statistic within ``RTOL |observed|`` of the observed one counts as reaching it.
RTOL = 100 * np.finfo(np.float64).eps


def _check(name, value, choices):
    if value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")


def _check_count(name, value):
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")


# --------------------------------------------------------------------------------------------
# Bootstrap


class BootstrapIndices(NamedTuple):
    """Bootstrap draws: ``inputs`` (B, G) and/or ``systems`` (B, S) int64 indices, or None."""

    inputs: np.ndarray | None
    systems: np.ndarray | None


class BootstrapResult(NamedTuple):
    """Result of :func:`bootstrap_ci`; arrays of shape (Ma, Mb) unless stated.

    ``statistic``: the level correlation of the data (:func:`level_correlation`, NaN omitted);
    ``ci_low``/``ci_high``: the interval bounds; ``n_valid`` (int64): the resamples whose
    statistic was defined (the interval uses those only); ``samples`` (B, Ma, Mb): the bootstrap
    distribution, NaN where undefined.
    """

    statistic: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    n_valid: np.ndarray
    samples: np.ndarray


def bootstrap_indices(n_inputs, n_systems, *, resample="inputs", resamples=1000, seed=0):
    """Draw bootstrap indices once, for all measures.

    With ``rng = numpy.random.default_rng(seed)``: inputs first,
    ``rng.integers(0, n_inputs, (resamples, n_inputs))`` (the draw of
    ``scipy.stats.bootstrap``), then systems, ``rng.integers(0, n_systems, (resamples,
    n_systems))``; each only when ``resample`` asks for it.

    Parameters
    ----------
    n_inputs, n_systems : int
    resample : {"inputs", "systems", "both"}
    resamples : int
    seed : int, numpy.random.Generator or None

    Returns
    -------
    BootstrapIndices
    """
    _check("resample", resample, RESAMPLE)
    _check_count("resamples", resamples)
    rng = np.random.default_rng(seed)
    inputs = systems = None
    if resample in ("inputs", "both"):
        inputs = rng.integers(0, n_inputs, (resamples, n_inputs))
    if resample in ("systems", "both"):
        systems = rng.integers(0, n_systems, (resamples, n_systems))
    return BootstrapIndices(inputs, systems)


def multiplicities(indices, n):
    """Counts (K, n) float64 of each of ``n`` items in each row of ``indices`` (K, n')."""
    indices = np.asarray(indices, dtype=np.int64)
    rows = indices.shape[0]
    flat = (indices + n * np.arange(rows)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * n).reshape(rows, n).astype(np.float64)


@njit(cache=True, parallel=True)
def weighted_group_mean(R, weights):
    """Weighted means over groups of per-group correlations, skipping undefined groups.

    ``out[k, i, j] = sum_g w[k, g] R[g, i, j] / sum_g w[k, g]`` over the groups where
    ``R[g, i, j]`` is not NaN (summed in group order); NaN when no such group has weight. With
    ``w`` the multiplicities of a bootstrap resample of the inputs this is the mean of the
    defined correlations over the resampled inputs, duplicates included.

    Parameters
    ----------
    R : ndarray of float64, shape (G, Ma, Mb)
    weights : ndarray of float64, shape (K, G)

    Returns
    -------
    ndarray of float64, shape (K, Ma, Mb)
    """
    groups, measures_a, measures_b = R.shape
    rows = weights.shape[0]
    out = np.empty((rows, measures_a, measures_b))
    for t in prange(rows * measures_a):
        k, i = divmod(np.int64(t), measures_a)
        for j in range(measures_b):
            total = 0.0
            weight = 0.0
            for g in range(groups):
                w = weights[k, g]
                r = R[g, i, j]
                if w != 0.0 and not np.isnan(r):
                    total += w * r
                    weight += w
            out[k, i, j] = total / weight if weight > 0.0 else np.nan
    return out


@njit(cache=True, parallel=True)
def weighted_system_means(X, weights):
    """Per-system weighted means over inputs, ignoring NaN values.

    ``out[m, k, s] = sum_g w[k, g] X[m, g, s] / sum_g w[k, g]`` over the non-NaN ``X[m, g, s]``
    (NaN when none has weight). An integer weight ``w`` adds its value ``w`` times to a
    compensated (cascaded TwoSum) sum, so the sum is correct to about twice double precision
    whatever the input order: means that are mathematically equal (exact ties between systems,
    frequent with rounded ratings) stay equal, and rank correlations do not depend on the
    order in which a resample lists its inputs.

    Parameters
    ----------
    X : ndarray of float64, shape (M, G, S)
    weights : ndarray of float64, shape (K, G)

    Returns
    -------
    ndarray of float64, shape (M, K, S)
    """
    measures, groups, systems = X.shape
    rows = weights.shape[0]
    out = np.empty((measures, rows, systems))
    for t in prange(measures * rows):
        m, k = divmod(np.int64(t), rows)
        for s in range(systems):
            high = 0.0
            low = 0.0
            weight = 0.0
            for g in range(groups):
                w = weights[k, g]
                x = X[m, g, s]
                if w == 0.0 or np.isnan(x):
                    continue
                whole = w == np.floor(w) and w <= 64.0
                value = x if whole else w * x
                for _ in range(int(w) if whole else 1):
                    total = high + value  # TwoSum (Knuth): high + value = total + error
                    back = total - high
                    low += (high - (total - back)) + (value - back)
                    high = total
                weight += w
            out[m, k, s] = (high + low) / weight if weight > 0.0 else np.nan
    return out


@njit(cache=True)
def _prepare_column(x, method_code, unit, signs):
    """Per-vector preparation of :func:`_item_resampled`: state (0 ok, 1 undefined, 2 NaN)
    and Kendall tie statistics; fills ``unit`` (Pearson/Spearman) or ``signs`` (Kendall)."""
    n = x.size
    ties = (0, 0, 0.0, 0.0)
    if np.isnan(x).any():
        return 2, ties
    if method_code != KENDALL:
        ok = unit_vector(rankdata(x) if method_code == SPEARMAN else x, unit)
        return (0 if ok else 1), ties
    if n < 2 or (x == x[0]).all():
        return 1, ties
    p = 0
    for i in range(n):
        for j in range(i + 1, n):
            signs[p] = np.int8(x[j] > x[i]) - np.int8(x[j] < x[i])
            p += 1
    return 0, tie_stats(sort_order(x)[0])


@njit(cache=True)
def _from_prepared(unit_a, signs_a, ties_a, unit_b, signs_b, ties_b, n, kendall, variant_code):
    """Correlation of two vectors prepared by :func:`_prepare_column` (both defined)."""
    if kendall:
        s = 0
        q = 0
        for p in range(signs_a.size):
            v = np.int64(signs_a[p]) * np.int64(signs_b[p])
            s += v
            q += v * v
        return tau(counts_from_sign_sums(n, s, q, ties_a, ties_b), variant_code)
    dot = 0.0
    for t in range(n):
        dot += unit_a[t] * unit_b[t]
    return min(1.0, max(-1.0, dot))


@njit(cache=True)
def _ties(row):
    return (np.int64(row[0]), np.int64(row[1]), row[2], row[3])


@njit(cache=True)
def _store_ties(row, ties):
    row[0] = ties[0]
    row[1] = ties[1]
    row[2] = ties[2]
    row[3] = ties[3]


@njit(cache=True, parallel=True)
def _item_resampled(A, B, weights, systems, method_code, variant_code):
    # One resample per thread (fixed summation order): for each input with weight, prepare
    # every measure's vector on the drawn systems once, then one dot product (Pearson,
    # Spearman) or one pass over the pair signs (Kendall) per cell.
    measures_a, groups, _ = A.shape
    measures_b = B.shape[0]
    rows, n = systems.shape
    pairs = n * (n - 1) // 2
    kendall = method_code == KENDALL
    width = 0 if kendall else n
    out = np.empty((rows, measures_a, measures_b))
    for k in prange(rows):
        idx = systems[k]
        total = np.zeros((measures_a, measures_b))
        weight = np.zeros((measures_a, measures_b))
        units_a = np.zeros((measures_a, width))
        units_b = np.zeros((measures_b, width))
        signs_a = np.zeros((measures_a, pairs if kendall else 0), dtype=np.int8)
        signs_b = np.zeros((measures_b, pairs if kendall else 0), dtype=np.int8)
        ties_a = np.zeros((measures_a, 4))
        ties_b = np.zeros((measures_b, 4))
        state_a = np.zeros(measures_a, dtype=np.int8)
        state_b = np.zeros(measures_b, dtype=np.int8)
        xs_a = np.empty((measures_a, n))
        xs_b = np.empty((measures_b, n))
        for g in range(groups):
            w = weights[k, g]
            if w == 0.0:
                continue
            for side in range(2):
                X = A if side == 0 else B
                xs = xs_a if side == 0 else xs_b
                units = units_a if side == 0 else units_b
                signs = signs_a if side == 0 else signs_b
                ties = ties_a if side == 0 else ties_b
                state = state_a if side == 0 else state_b
                for m in range(X.shape[0]):
                    for t in range(n):
                        xs[m, t] = X[m, g, idx[t]]
                    st, tt = _prepare_column(xs[m], method_code, units[m], signs[m])
                    state[m] = st
                    _store_ties(ties[m], tt)
            for i in range(measures_a):
                for j in range(measures_b):
                    a = state_a[i]
                    b = state_b[j]
                    r = np.nan
                    if a == 0 and b == 0:
                        r = _from_prepared(
                            units_a[i],
                            signs_a[i],
                            _ties(ties_a[i]),
                            units_b[j],
                            signs_b[j],
                            _ties(ties_b[j]),
                            n,
                            kendall,
                            variant_code,
                        )
                    elif a != 1 and b != 1:
                        r = statistic_omit(xs_a[i], xs_b[j], method_code, variant_code)
                    if not np.isnan(r):
                        total[i, j] += w * r
                        weight[i, j] += w
        for i in range(measures_a):
            for j in range(measures_b):
                out[k, i, j] = total[i, j] / weight[i, j] if weight[i, j] > 0.0 else np.nan
    return out


def resampled_statistic(A, B, *, level, method, variant, weights=None, systems=None):
    """The level correlation of ``A`` and ``B`` under K reweightings of inputs and systems.

    Row ``k`` weights input ``g`` by ``weights[k, g]`` (a bootstrap multiplicity, or a
    leave-one-out 0/1 mask) and keeps the systems ``systems[k]`` (indices, repeats allowed: a
    system drawn twice enters every correlation as two observations, as nlpstats resamples the
    rows of its matrices). Missing values are omitted and undefined groups skipped, as
    :func:`level_correlation` with ``nan_policy="omit"``.

    - ``level="item"``: per-input correlations across the kept systems, then their weighted
      mean (:func:`weighted_group_mean`); without ``systems`` the per-input correlations are
      computed once for all rows.
    - ``level="system"``: per-system weighted means over inputs (:func:`weighted_system_means`),
      then one correlation across the kept systems per row, all rows in one
      :func:`group_correlations` call (the rows play the groups).

    Parameters
    ----------
    A : ndarray of float64, shape (Ma, G, S), C-contiguous
    B : ndarray of float64, shape (Mb, G, S), C-contiguous
        ``B is A`` computes the symmetric matrix once per pair.
    level : {"item", "system"}
    method : {"pearson", "spearman", "kendall"}
    variant : {"a", "b", "c"}
    weights : ndarray of float64, shape (K, G), optional
        Default: every input weighs 1.
    systems : ndarray of int64, shape (K, S'), optional
        Default: all systems, in order.

    Returns
    -------
    ndarray of float64, shape (K, Ma, Mb)
    """
    symmetric = A is B
    groups = A.shape[1]
    rows = len(weights) if weights is not None else len(systems)
    if level == "system":
        cubes = []
        for X in (A,) if symmetric else (A, B):
            if weights is None:
                means = np.broadcast_to(at_level(X, "system", True), (X.shape[0], rows, X.shape[2]))
            else:
                means = weighted_system_means(X, weights)
            if systems is not None:
                means = np.take_along_axis(means, systems[None], axis=2)
            cubes.append(np.ascontiguousarray(means))
        return group_correlations(cubes[0], cubes[-1], method, variant, True)
    if systems is None:
        R = group_correlations(A, B, method, variant, True)
        return weighted_group_mean(R, weights)
    if weights is None:
        weights = np.ones((rows, groups))
    return _item_resampled(A, B, weights, systems, code(method, METHODS), code(variant, VARIANTS))


def _leave_one_out(n):
    """Rows of the jackknife: the 0/1 weights (n, n) and the kept indices (n, n - 1)."""
    keep = ~np.eye(n, dtype=bool)
    return keep.astype(np.float64), np.nonzero(keep)[1].reshape(n, n - 1)


def jackknife(A, B, *, level, method, variant, resample):
    """Leave-one-out statistics for the BCa acceleration: a list with one (n, Ma, Mb) array per
    resampled axis (inputs, then systems, as ``resample`` says)."""
    out = []
    if resample in ("inputs", "both"):
        w, _ = _leave_one_out(A.shape[1])
        out.append(
            resampled_statistic(A, B, level=level, method=method, variant=variant, weights=w)
        )
    if resample in ("systems", "both"):
        _, kept = _leave_one_out(A.shape[2])
        out.append(
            resampled_statistic(A, B, level=level, method=method, variant=variant, systems=kept)
        )
    return out


def _quantiles(samples, probabilities):
    """Linear-interpolation quantiles (numpy's default) of the non-NaN samples along axis 0,
    at per-cell ``probabilities`` (same shape as a cell array); NaN where a cell has no sample
    or its probability is NaN."""
    ordered = np.sort(samples, axis=0)  # NaN last
    n = (~np.isnan(samples)).sum(axis=0)
    p = np.asarray(probabilities, dtype=np.float64)
    ok = (n > 0) & ~np.isnan(p)
    h = np.where(ok, (n - 1) * np.where(ok, p, 0.0), 0.0)
    lo = np.floor(h).astype(np.int64)
    hi = np.minimum(lo + 1, np.maximum(n - 1, 0))
    t = h - lo
    a = np.take_along_axis(ordered, lo[None], axis=0)[0]
    b = np.take_along_axis(ordered, hi[None], axis=0)[0]
    diff = b - a
    value = np.where(t >= 0.5, b - diff * (1 - t), a + diff * t)  # numpy's _lerp
    return np.where(ok, value, np.nan)


def bca_levels(samples, theta, jackknife_values, confidence):
    """Probability levels ``(alpha_1, alpha_2, a)`` of the BCa interval (Efron 1987).

    With ``p`` the share of the defined bootstrap values below ``theta`` (ties count one half,
    as ``scipy.stats.bootstrap``), ``z0 = Phi^-1(p)`` and the acceleration from the jackknife
    values ``theta_(i)`` of each resampled axis ``j`` (mean ``theta_(.)``, ``n_j`` values,
    ``U = (n_j - 1)(theta_(.) - theta_(i))``)::

        a = sum_j sum_i U^3 / n_j^3 / (6 (sum_j sum_i U^2 / n_j^2)^(3/2))
        alpha_1,2 = Phi(z0 + (z0 + z) / (1 - a (z0 + z))),  z = Phi^-1((1 -+ confidence) / 2)

    which is scipy's multi-sample formula; for one axis it is Efron and Tibshirani (1993),
    eq. 14.15. Efron, "Better bootstrap confidence intervals", JASA 82(397), 1987.
    """
    valid = ~np.isnan(samples)
    n_valid = valid.sum(axis=0)
    below = (samples < theta).sum(axis=0) + (samples <= theta).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        z0 = ndtri(below / (2.0 * n_valid))
        nums = 0.0
        dens = 0.0
        for values in jackknife_values:
            n = values.shape[0]
            u = (n - 1) * (values.mean(axis=0) - values)
            nums = nums + (u**3).sum(axis=0) / n**3
            dens = dens + (u**2).sum(axis=0) / n**2
        a = nums / 6.0 / dens**1.5
        z = ndtri((1.0 - confidence) / 2.0)
        levels = []
        for zz in (z, -z):
            num = z0 + zz
            levels.append(ndtr(z0 + num / (1.0 - a * num)))
    return levels[0], levels[1], a


def bootstrap_distribution(A, B=None, *, level="item", method="kendall", variant="b", indices):
    """Bootstrap distribution (B, Ma, Mb) of the level correlation under the given draws.

    See :func:`resampled_statistic`; ``indices`` is a :class:`BootstrapIndices` (e.g. from
    :func:`bootstrap_indices`).
    """
    arrays = {"A": A} if B is None else {"A": A, "B": B}
    _check("level", level, BOOTSTRAP_LEVELS)
    cubes = validated(arrays, 3, 2, method=method, variant=variant)
    a, b = cubes[0], cubes[-1]
    weights = None
    if indices.inputs is not None:
        weights = multiplicities(indices.inputs, a.shape[1])
    systems = None if indices.systems is None else np.asarray(indices.systems, dtype=np.int64)
    if weights is None and systems is None:
        raise ValueError("indices must hold input or system indices")
    return resampled_statistic(
        a, b, level=level, method=method, variant=variant, weights=weights, systems=systems
    )


def bootstrap_ci(
    A,
    B=None,
    *,
    level="item",
    method="kendall",
    variant="b",
    resample="inputs",
    resamples=1000,
    confidence=0.95,
    ci_method="percentile",
    seed=0,
    indices=None,
):
    """Bootstrap confidence intervals of item- or system-level correlations.

    The statistic is :func:`level_correlation` (``nan_policy="omit"``) of every pair of a
    measure of ``A`` and a measure of ``B``. Resampling, as BOOT-INPUTS, BOOT-SYSTEMS and
    BOOT-BOTH of Deutsch, Dror and Roth (2021): draw the inputs (columns of their system x input
    matrices), the systems (rows), or both (the intersection of the drawn rows and columns)
    with replacement, and recompute the statistic. The same draws serve every pair.

    - Item level, inputs: the per-input correlations are computed once; a resample's statistic
      is their mean weighted by the inputs' multiplicities (undefined inputs skipped).
    - Systems drawn: correlations are recomputed on the drawn systems; a system drawn twice is
      two observations (tied in every measure). Resamples with too few distinct systems can
      leave every input undefined: the statistic is then NaN for that resample.
    - System level: per-system means over the drawn inputs (all inputs when only systems are
      drawn), correlated across the drawn systems.

    Intervals at ``confidence`` over the ``n_valid`` defined resamples (the others are counted,
    not used): ``"percentile"``, the ``(1 -+ confidence)/2`` quantiles (linear interpolation);
    ``"bca"``, quantiles at the BCa levels of :func:`bca_levels` (Efron 1987), the
    acceleration from the jackknife (leave one input out, leave one system out, or both axes
    summed as scipy does for several samples). For a 1-D mean both equal
    ``scipy.stats.bootstrap(..., method="percentile"/"BCa")`` with the same ``seed``.

    Parameters
    ----------
    A : array_like, shape (Ma, G, S)
    B : array_like, shape (Mb, G, S), optional
        Defaults to ``A`` (all pairs of A).
    level : {"item", "system"}
    method : {"pearson", "spearman", "kendall"}
    variant : {"a", "b", "c"}
        Kendall variant.
    resample : {"inputs", "systems", "both"}
    resamples : int
        Number of bootstrap resamples B.
    confidence : float
        In (0, 1).
    ci_method : {"percentile", "bca"}
    seed : int, numpy.random.Generator or None
        Seeds :func:`bootstrap_indices` (ignored when ``indices`` is given).
    indices : BootstrapIndices, optional
        Precomputed draws (their number of rows overrides ``resamples``).

    Returns
    -------
    BootstrapResult

    References
    ----------
    D. Deutsch, R. Dror and D. Roth, "A Statistical Analysis of Summarization Evaluation
    Metrics Using Resampling Methods", TACL 9, 2021. B. Efron, "Better Bootstrap Confidence
    Intervals", JASA 82(397), 1987.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(1, 30, 5))
    >>> A = np.concatenate([x, x + rng.normal(size=x.shape)])
    >>> res = bootstrap_ci(A[:1], A[1:], method="pearson", resamples=200)
    >>> bool(res.ci_low[0, 0] <= res.statistic[0, 0] <= res.ci_high[0, 0]), int(res.n_valid[0, 0])
    (True, 200)
    """
    arrays = {"A": A} if B is None else {"A": A, "B": B}
    _check("level", level, BOOTSTRAP_LEVELS)
    _check("resample", resample, RESAMPLE)
    _check("ci_method", ci_method, CI_METHODS)
    if not (isinstance(confidence, float | int) and 0 < confidence < 1):
        raise ValueError(f"confidence must be a number in (0, 1); got {confidence!r}")
    cubes = validated(arrays, 3, 2, method=method, variant=variant)
    a = cubes[0]
    b = a if B is None else cubes[1]
    if indices is None:
        indices = bootstrap_indices(
            a.shape[1], a.shape[2], resample=resample, resamples=resamples, seed=seed
        )
    samples = bootstrap_distribution(
        a, b, level=level, method=method, variant=variant, indices=indices
    )
    theta = level_correlation(
        a, None if b is a else b, level=level, method=method, variant=variant
    ).statistic
    n_valid = (~np.isnan(samples)).sum(axis=0)
    alpha = (1.0 - confidence) / 2.0
    if ci_method == "percentile":
        low = np.full(theta.shape, alpha)
        high = np.full(theta.shape, 1.0 - alpha)
    else:
        jack = jackknife(a, b, level=level, method=method, variant=variant, resample=resample)
        low, high, _ = bca_levels(samples, theta, jack, confidence)
    return BootstrapResult(
        theta, _quantiles(samples, low), _quantiles(samples, high), n_valid, samples
    )


# --------------------------------------------------------------------------------------------
# Permutation test


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
    """
    _check_count("permutations", permutations)
    rng = np.random.default_rng(seed)
    return rng.integers(0, 2, (permutations, n_inputs, n_systems), dtype=np.uint8)


def standardize(X):
    """z-scores of each measure over all its cells: ``(x - mean) / std`` (ddof 0), as
    ``scipy.stats.zscore`` of the flattened matrix; a constant measure becomes all zeros."""
    flat = X.reshape(X.shape[0], -1)
    mean = flat.mean(axis=1)
    std = flat.std(axis=1)
    std[std == 0] = 1.0
    return ((X - mean[:, None, None]) / std[:, None, None]).reshape(X.shape)


@njit(cache=True, parallel=True)
def swapped_system_sums(Z, W):
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


@njit(cache=True)
def _prepare_rows(C, method_code):
    """:func:`_prepare_column` of every row of ``C`` (G, n): (units, signs, ties, state)."""
    groups, n = C.shape
    kendall = method_code == KENDALL
    units = np.zeros((groups, 0 if kendall else n))
    signs = np.zeros((groups, n * (n - 1) // 2 if kendall else 0), dtype=np.int8)
    ties = np.zeros((groups, 4))
    state = np.zeros(groups, dtype=np.int8)
    for g in range(groups):
        st, tt = _prepare_column(C[g], method_code, units[g], signs[g])
        state[g] = st
        _store_ties(ties[g], tt)
    return units, signs, ties, state


@njit(cache=True)
def _with_criterion(x, c, prepared, g, method_code, variant_code, unit, signs):
    """Correlation of ``x`` with row ``g`` of the criterion prepared by :func:`_prepare_rows`;
    ``unit``/``signs`` are scratch buffers for ``x``."""
    c_units, c_signs, c_ties, c_state = prepared
    if c_state[g] == 1:
        return np.nan
    st, tx = _prepare_column(x, method_code, unit, signs)
    if st == 1:
        return np.nan
    if st == 2 or c_state[g] == 2:
        return statistic_omit(x, c, method_code, variant_code)
    return _from_prepared(
        unit,
        signs,
        tx,
        c_units[g],
        c_signs[g],
        _ties(c_ties[g]),
        x.size,
        method_code == KENDALL,
        variant_code,
    )


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
    method_code = code(method, METHODS)
    variant_code = code(variant, VARIANTS)
    pairs = np.ascontiguousarray(pairs, dtype=np.int64).reshape(-1, 2)
    if level == "system":
        means = np.ascontiguousarray(Z.mean(axis=1))
        T = swapped_system_sums(Z, swaps)
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
    _check("alternative", alternative, ALTERNATIVES)
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
    alternative : {"two-sided", "less", "greater"}
    seed : int, numpy.random.Generator or None
        Seeds :func:`permutation_swaps` (ignored when ``swaps`` is given).
    swaps : ndarray of uint8, shape (P, G, S), optional
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
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> c = rng.normal(size=(20, 6))
    >>> X = np.stack([c + 0.1 * rng.normal(size=c.shape), rng.normal(size=c.shape)])
    >>> res = permutation_test_pairs(X, c, level="item", permutations=200, alternative="greater")
    >>> float(res.pvalue[0, 1]), float(res.pvalue[1, 0]), int(res.n_valid[0, 1])
    (0.0, 1.0, 200)
    """
    _check("level", level, ("item", "system", "global"))
    _check("alternative", alternative, ALTERNATIVES)
    X = validated({"X": X}, 3, 0, method=method, variant=variant)[0]
    C = validated({"criterion": criterion}, 2, 0)[0]
    if C.shape != X.shape[1:]:
        raise ValueError(f"criterion must have shape {X.shape[1:]}; got {C.shape}")
    if np.isnan(X).any():
        raise ValueError("X must not contain NaN: PERM-BOTH swaps the two measures' scores")
    if swaps is None:
        swaps = permutation_swaps(X.shape[1], X.shape[2], permutations=permutations, seed=seed)
    swaps = np.ascontiguousarray(swaps, dtype=np.uint8)
    if swaps.ndim != 3 or swaps.shape[1:] != X.shape[1:]:
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


# --------------------------------------------------------------------------------------------
# Pairwise accuracy with ties


@njit(cache=True)
def accuracy_from_counts(counts):
    """``acc_eq = (C + T_xy) / (C + D + T_x + T_y + T_xy)`` from :class:`KendallCounts`.

    The share of pairs on which the two vectors agree: both order the pair the same way
    (concordant, C) or both tie it (T_xy); D are discordant pairs, T_x/T_y pairs tied in one
    vector only. NaN for fewer than 2 observations. Deutsch, Foster and Freitag (2023), "Ties
    Matter: Meta-Evaluating Modern Metrics with Pairwise Accuracy and Tie Calibration", EMNLP,
    Sec. 5 (mt-metrics-eval's ``acc23``), without tie calibration (epsilon = 0).
    """
    n0 = counts.n * (counts.n - 1) // 2
    if n0 == 0:
        return np.nan
    return (counts.concordant + counts.xy_ties) / n0


@njit(cache=True, parallel=True)
def group_accuracies(A, B, omit):
    """``acc_eq`` (G, Ma, Mb) of every pair of measures within every group (pairwise deletion
    of NaN observations when ``omit``, else NaN for a group with a NaN)."""
    measures_a, groups, _ = A.shape
    measures_b = B.shape[0]
    R = np.empty((groups, measures_a, measures_b))
    for t in prange(groups * measures_a):
        g, i = divmod(np.int64(t), measures_a)
        x = A[i, g]
        for j in range(measures_b):
            y = B[j, g]
            keep = ~(np.isnan(x) | np.isnan(y))
            if keep.all():
                R[g, i, j] = accuracy_from_counts(kendall_counts(x, y))
            elif omit:
                R[g, i, j] = accuracy_from_counts(kendall_counts(x[keep], y[keep]))
            else:
                R[g, i, j] = np.nan
    return R


def pairwise_accuracy(A, B=None, *, level="item", nan_policy="omit"):
    """Pairwise accuracy with ties, ``acc_eq``, at the item, system or global level.

    Per group, over the ``n (n - 1) / 2`` pairs of systems (items at global level), with
    Kendall's pair classes (:func:`kendall_counts`)::

        acc_eq = (C + T_xy) / (C + D + T_x + T_y + T_xy)

    (Deutsch, Foster and Freitag 2023, "Ties Matter", EMNLP; ``acc23`` in mt-metrics-eval):
    a pair counts as correct when both vectors order it the same way or both tie it. Unlike
    tau, it is defined for constant vectors (1 when both are constant). Levels and
    ``nan_policy`` as :func:`level_correlation`: item level averages the per-group accuracies
    over the groups where it is defined (at least 2 observations).

    Parameters
    ----------
    A : array_like, shape (Ma, G, S)
    B : array_like, shape (Mb, G, S), optional
        Defaults to ``A``.
    level : {"item", "system", "global"}
    nan_policy : {"omit", "propagate", "raise"}

    Returns
    -------
    LevelCorrelationResult
        ``statistic``, ``n_groups``, ``n_skipped`` (Ma, Mb), as :func:`level_correlation`.

    Examples
    --------
    >>> import numpy as np
    >>> h = np.array([[[1.0, 2.0, 2.0, 3.0]]])  # pairs: 5 ordered, 1 tied
    >>> m = np.array([[[1.0, 3.0, 3.0, 2.0]]])  # C = 3, D = 2 (pairs with 4th), T_xy = 1
    >>> float(pairwise_accuracy(h, m).statistic[0, 0])
    0.6666666666666666
    """
    arrays = {"A": A} if B is None else {"A": A, "B": B}
    options = {"level": level, "nan_policy": nan_policy}
    omit = nan_policy == "omit"
    cubes = [at_level(X, level, omit) for X in validated(arrays, 3, 2, **options)]
    R = group_accuracies(cubes[0], cubes[-1], omit)
    if nan_policy == "raise" and np.isnan(R).any():
        i, j, g = (int(k) for k in np.argwhere(np.isnan(R.transpose(1, 2, 0)))[0])
        raise UndefinedCorrelationError(
            f"pairwise accuracy of A[{i}] and B[{j}] is undefined in group {g} at level "
            f"{level!r}: missing values or fewer than 2 observations (nan_policy='raise')",
            i,
            j,
            g,
        )
    return LevelCorrelationResult(*aggregate_groups(R, omit))


__all__ = [
    "BootstrapIndices",
    "BootstrapResult",
    "PermutationTestResult",
    "accuracy_from_counts",
    "bca_levels",
    "bootstrap_ci",
    "bootstrap_distribution",
    "bootstrap_indices",
    "group_accuracies",
    "jackknife",
    "multiplicities",
    "pairwise_accuracy",
    "permutation_null",
    "permutation_pvalues",
    "permutation_swaps",
    "permutation_test_pairs",
    "resampled_statistic",
    "standardize",
    "swapped_system_sums",
    "weighted_group_mean",
    "weighted_system_means",
]
