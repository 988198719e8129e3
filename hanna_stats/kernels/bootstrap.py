"""Bootstrap confidence intervals of item- or system-level correlations.

Cubes have shape (measures, inputs G, systems S), float64, NaN = missing, as in
:mod:`hanna_stats.kernels.levels`. The bootstrap draws are made once, in Python, by a
:class:`numpy.random.Generator` seeded by the caller (or passed in), and are shared by all
measures and pairs; compiled loops assign each output cell to one thread and sum in a fixed
order, so results do not depend on the number of threads.

:func:`bootstrap_ci`: percentile and BCa confidence intervals, resampling inputs, systems or
both (Deutsch, Dror and Roth 2021).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from hanna_stats.vocabulary import WORDS

from ._options import (
    KENDALL,
    as_float_array,
    check_confidence,
    check_count,
    check_indices,
    check_option,
    check_seed,
    memory_budget,
    validated,
)
from ._prepared import from_prepared, prepare_column, store_ties, ties_of_row
from .correlation import coefficient_omit
from .distributed import cluster_executor, split
from .levels import (
    at_level,
    block_correlations,
    correlations_of_cubes,
    group_blocks,
    level_correlation,
)
from .system_pairs import multiplicities


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
        In [1, 1,000,000].
    seed : int, numpy.random.Generator or None
        An int in [0, 2**63), a Generator (advanced by the draws) or None.

    Returns
    -------
    BootstrapIndices

    Examples
    --------
    >>> draws = bootstrap_indices(4, 3, resample="both", resamples=2, seed=0)
    >>> draws.inputs.shape, draws.systems.shape
    ((2, 4), (2, 3))
    """
    check_option("resample", resample)
    resamples = check_count("resamples", resamples)
    rng = check_seed(seed)
    inputs = systems = None
    if resample in ("inputs", "both"):
        inputs = rng.integers(0, n_inputs, (resamples, n_inputs))
    if resample in ("systems", "both"):
        systems = rng.integers(0, n_systems, (resamples, n_systems))
    return BootstrapIndices(inputs, systems)


@njit(cache=True, parallel=True)
def _weighted_group_sums(R, weights, total, weight):
    """Add a block of groups' weighted per-group correlations to running sums, skipping
    undefined groups.

    ``total[k, i, j] += w[k, g] R[g, i, j]`` and ``weight[k, i, j] += w[k, g]`` over the groups
    ``g`` of the block where ``w[k, g] != 0`` and ``R[g, i, j]`` is not NaN, in group order: the
    blocks of groups, added one after the other, sum as one pass over all groups. With ``w`` the
    multiplicities of a bootstrap resample of the inputs, ``total / weight`` is the mean of the
    defined correlations over the resampled inputs, duplicates included.

    Parameters
    ----------
    R : ndarray of float64, shape (G, Ma, Mb)
    weights : ndarray of float64, shape (K, G)
    total, weight : ndarray of float64, shape (K, Ma, Mb)
        Updated in place.
    """
    groups, measures_a, measures_b = R.shape
    rows = weights.shape[0]
    for t in prange(rows * measures_a):
        k, i = divmod(np.int64(t), measures_a)
        for j in range(measures_b):
            running_total = total[k, i, j]
            running_weight = weight[k, i, j]
            for g in range(groups):
                w = weights[k, g]
                r = R[g, i, j]
                if w != 0.0 and not np.isnan(r):
                    running_total += w * r
                    running_weight += w
            total[k, i, j] = running_total
            weight[k, i, j] = running_weight


@njit(cache=True, parallel=True)
def _weighted_system_means(X, weights):
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
                    st, tt = prepare_column(xs[m], method_code, units[m], signs[m])
                    state[m] = st
                    store_ties(ties[m], tt)
            for i in range(measures_a):
                for j in range(measures_b):
                    a = state_a[i]
                    b = state_b[j]
                    r = np.nan
                    if a == 0 and b == 0:
                        r = from_prepared(
                            units_a[i],
                            signs_a[i],
                            ties_of_row(ties_a[i]),
                            units_b[j],
                            signs_b[j],
                            ties_of_row(ties_b[j]),
                            n,
                            kendall,
                            variant_code,
                        )
                    elif a != 1 and b != 1:
                        r = coefficient_omit(xs_a[i], xs_b[j], method_code, variant_code)
                    if not np.isnan(r):
                        total[i, j] += w * r
                        weight[i, j] += w
        for i in range(measures_a):
            for j in range(measures_b):
                out[k, i, j] = total[i, j] / weight[i, j] if weight[i, j] > 0.0 else np.nan
    return out


class _Weights:
    """Weights (K, G) float64 of :func:`resampled_statistic` made a block of rows at a time
    (``weights[lo:hi]``): the multiplicities of bootstrap draws ``indices`` (K, G') of the
    ``groups`` inputs, or, without ``indices``, the jackknife's (K = G): row ``k`` weighs
    input ``k`` 0 and the others 1."""

    def __init__(self, groups, indices=None):
        self.groups = groups
        self.indices = indices

    def __len__(self):
        return self.groups if self.indices is None else len(self.indices)

    def __getitem__(self, rows):
        if self.indices is not None:
            return multiplicities(self.indices[rows], self.groups)
        lo, hi, _ = rows.indices(self.groups)
        weights = np.ones((hi - lo, self.groups))
        weights[np.arange(hi - lo), np.arange(lo, hi)] = 0.0
        return weights


def _resample_rows(A, B, systems):
    """Rows (resamples) of a block of :func:`resampled_statistic`: as many as fit a quarter of
    the memory budget (at least one), each taking its weights and the transients of making them
    (4 x 8 G bytes), its systems' means (3 x 8 S' a measure) and its statistics (3 x 8 a
    cell)."""
    measures_a, groups, n_systems = A.shape
    drawn = n_systems if systems is None else systems.shape[1]
    per_row = 8 * (4 * groups + 3 * (measures_a + B.shape[0]) * drawn + 3 * measures_a * B.shape[0])
    return max(1, memory_budget() // 4 // per_row)


def resampled_statistic(A, B, *, level, method, variant, weights=None, systems=None):
    """The level correlation of ``A`` and ``B`` under K reweightings of inputs and systems.

    Row ``k`` weights input ``g`` by ``weights[k, g]`` (a bootstrap multiplicity, or a
    leave-one-out 0/1 mask) and keeps the systems ``systems[k]`` (indices, repeats allowed: a
    system drawn twice enters every correlation as two observations, as nlpstats resamples the
    rows of its matrices). Missing values are omitted and undefined groups skipped, as
    :func:`level_correlation` with ``nan_policy="omit"``.

    - ``level="item"``: per-input correlations across the kept systems, then their weighted
      mean (:func:`_weighted_group_sums`); without ``systems`` the per-input correlations are
      computed once for all rows, block by block of inputs (``group_blocks`` of
      :mod:`~hanna_stats.kernels.levels`), each block's weighted sums added to the rows'.
    - ``level="system"``: per-system weighted means over inputs (:func:`_weighted_system_means`),
      then one correlation across the kept systems per row, all rows of a block in one
      group correlation call (the rows play the groups).

    The rows go in blocks that fit the memory budget (:func:`_resample_rows`), their weights
    made block by block; a row's value does not depend on the blocks.

    Parameters
    ----------
    A : ndarray of float64, shape (Ma, G, S), C-contiguous
    B : ndarray of float64, shape (Mb, G, S), C-contiguous
        ``B is A`` computes the symmetric matrix once per pair.
    level : {"item", "system"}
    method : {"pearson", "spearman", "kendall"}
    variant : {"a", "b", "c"}
    weights : ndarray of float64, shape (K, G), or _Weights, optional
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
    step = _resample_rows(A, B, systems)
    blocks = [(lo, min(lo + step, rows)) for lo in range(0, rows, step)]
    method_code = check_option("method", method)
    variant_code = check_option("variant", variant)
    out = np.zeros((rows, A.shape[0], B.shape[0]))
    if level == "item" and systems is None:  # out: the weighted sums, then their means
        weight = np.zeros_like(out)
        for lo, hi, a, b in group_blocks(A, B, symmetric, method_code):
            R = np.empty((hi - lo, A.shape[0], B.shape[0]))
            block_correlations(a, b, symmetric, method_code, variant_code, True, R)
            for first, last in blocks:
                w = np.ascontiguousarray(weights[first:last][:, lo:hi])
                _weighted_group_sums(R, w, out[first:last], weight[first:last])
        with np.errstate(invalid="ignore", divide="ignore"):
            np.divide(out, weight, out=out)
        out[~(weight > 0.0)] = np.nan
        return out
    for lo, hi in blocks:
        w = None if weights is None else weights[lo:hi]
        kept = None if systems is None else systems[lo:hi]
        if level == "system":
            cubes = []
            for X in (A,) if symmetric else (A, B):
                if w is None:
                    means = at_level(X, "system", True)
                    means = np.broadcast_to(means, (X.shape[0], hi - lo, X.shape[2]))
                else:
                    means = _weighted_system_means(X, w)
                if kept is not None:
                    means = np.take_along_axis(means, kept[None], axis=2)
                cubes.append(np.ascontiguousarray(means))
            out[lo:hi] = correlations_of_cubes(cubes[0], cubes[-1], method, variant, True)
        else:
            w = np.ones((hi - lo, groups)) if w is None else w
            out[lo:hi] = _item_resampled(A, B, w, kept, method_code, variant_code)
    return out


def jackknife(A, B, *, level, method, variant, resample):
    """Leave-one-out statistics for the BCa acceleration: a list with one (n, Ma, Mb) array per
    resampled axis (inputs, then systems, as ``resample`` says)."""
    out = []
    if resample in ("inputs", "both"):
        w = _Weights(A.shape[1])
        out.append(
            resampled_statistic(A, B, level=level, method=method, variant=variant, weights=w)
        )
    if resample in ("systems", "both"):
        n = A.shape[2]
        kept = np.nonzero(~np.eye(n, dtype=bool))[1].reshape(n, n - 1)
        out.append(
            resampled_statistic(A, B, level=level, method=method, variant=variant, systems=kept)
        )
    return out


def cell_quantiles(samples, probabilities):
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
    from scipy.special import ndtr, ndtri

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


def _check_draws(indices, n_inputs, n_systems):
    """The (inputs, systems) index arrays of ``indices`` (a :class:`BootstrapIndices`), checked."""
    if not (isinstance(indices, tuple) and len(indices) == 2):
        raise ValueError("indices must be a BootstrapIndices (inputs, systems)")
    inputs, systems = indices
    if inputs is None and systems is None:
        raise ValueError("indices must hold input or system indices")
    if inputs is not None:
        inputs = check_indices("indices.inputs", inputs, n_inputs)
    if systems is not None:
        systems = check_indices("indices.systems", systems, n_systems)
    if inputs is not None and systems is not None and len(inputs) != len(systems):
        raise ValueError(
            "indices.inputs and indices.systems must have the same number of resamples; got "
            f"{len(inputs)} and {len(systems)}"
        )
    return inputs, systems


def bootstrap_distribution(
    A, B=None, *, level="item", method="kendall", variant="b", indices, progress=None
):
    """Bootstrap distribution (B, Ma, Mb) of the level correlation under the given draws.

    See :func:`resampled_statistic`; ``indices`` is a :class:`BootstrapIndices` (e.g. from
    :func:`bootstrap_indices`). ``progress``: an optional ``progress(iterable, desc=...,
    total=...)`` wrapping blocks of resamples computed one after the other (e.g.
    :func:`hanna_stats.progress.progress`); each resample is computed alone, so the blocks
    give the same values as one call. The item level with only inputs drawn is one block (its
    per-input correlations are computed once; the resamples only reweight them). Within a
    block, the resamples (and at item level the inputs' correlations) go in smaller blocks that
    fit the memory budget (:func:`resampled_statistic`), with the same values.
    """
    arrays = {"A": A} if B is None else {"A": A, "B": B}
    check_option("level", level, WORDS["item_system"])
    cubes = validated(arrays, 3, 2, method=method, variant=variant)
    a, b = cubes[0], cubes[-1]
    inputs, systems = _check_draws(indices, *a.shape[1:])
    rows = len(inputs) if inputs is not None else len(systems)
    step = rows if progress is None or (level == "item" and systems is None) else -(-rows // 20)
    blocks = [(lo, min(lo + step, rows)) for lo in range(0, rows, step)]
    if len(blocks) > 1:
        blocks = progress(blocks, desc="bootstrap resamples", total=len(blocks))
    parts = []
    for lo, hi in blocks:
        weights = None if inputs is None else _Weights(a.shape[1], inputs[lo:hi])
        drawn = None if systems is None else systems[lo:hi]
        parts.append(
            resampled_statistic(
                a, b, level=level, method=method, variant=variant, weights=weights, systems=drawn
            )
        )
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


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
    statistic=None,
    progress=None,
    executor=None,
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
    ``scipy.stats.bootstrap(..., method="percentile"/"BCa")`` with the same ``seed``. The
    resamples, the jackknife's rows and the inputs' correlations go in blocks that fit the
    memory budget (:func:`~hanna_stats.kernels._options.memory_budget`; see
    :func:`resampled_statistic`), with the same values bit for bit.

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
        Number of bootstrap resamples B, in [1, 1,000,000].
    confidence : float
        In (0, 1).
    ci_method : {"percentile", "bca"}
    seed : int, numpy.random.Generator or None
        Seeds :func:`bootstrap_indices`: an int in [0, 2**63), a Generator or None (ignored when
        ``indices`` is given).
    indices : BootstrapIndices, optional
        Precomputed draws (their number of rows overrides ``resamples``).
    statistic : array_like of float, shape (Ma, Mb), optional
        The point estimate, the level correlation of the data with ``nan_policy="omit"``
        (e.g. cached by the caller); computed when not given. It is the ``statistic`` of the
        result and the BCa centre.
    progress : callable, optional
        Wraps the blocks of resamples (see :func:`bootstrap_distribution`); with
        ``executor``, the blocks as they finish.
    executor : distributed.Client, concurrent.futures.Executor or ClusterExecutor, optional
        Compute the bootstrap distribution in blocks of resamples on this executor, e.g. a Dask
        cluster (see :mod:`hanna_stats.kernels.distributed`), from the draws made here once;
        each resample is computed alone, so the result is the same bit for bit. None (the
        default): in this process.

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
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(1, 30, 5))
    >>> A = np.concatenate([x, x + rng.normal(size=x.shape)])
    >>> res = bootstrap_ci(A[:1], A[1:], method="pearson", resamples=200)
    >>> bool(res.ci_low[0, 0] <= res.statistic[0, 0] <= res.ci_high[0, 0]), int(res.n_valid[0, 0])
    (True, 200)
    """
    arrays = {"A": A} if B is None else {"A": A, "B": B}
    check_option("level", level, WORDS["item_system"])
    check_option("resample", resample)
    check_option("ci_method", ci_method)
    confidence = check_confidence(confidence)
    cubes = validated(arrays, 3, 2, method=method, variant=variant)
    a = cubes[0]
    b = a if B is None else cubes[1]
    if statistic is not None:
        statistic = as_float_array("statistic", statistic, 2)
        if statistic.shape != (a.shape[0], b.shape[0]):
            raise ValueError(
                f"statistic must have shape ({a.shape[0]}, {b.shape[0]}); got {statistic.shape}"
            )
    if indices is None:
        indices = bootstrap_indices(
            a.shape[1], a.shape[2], resample=resample, resamples=resamples, seed=seed
        )
    if executor is None:
        samples = bootstrap_distribution(
            a, b, level=level, method=method, variant=variant, indices=indices, progress=progress
        )
    else:
        draws = _check_draws(indices, *a.shape[1:])
        shared = (a, None if b is a else b, (level, method, variant), draws)
        samples = _cluster_distribution(cluster_executor(executor), shared, progress)
    if statistic is None:
        statistic = level_correlation(
            a, None if b is a else b, level=level, method=method, variant=variant
        ).statistic
    theta = statistic
    n_valid = (~np.isnan(samples)).sum(axis=0)
    alpha = (1.0 - confidence) / 2.0
    if ci_method == "percentile":
        low = np.full(theta.shape, alpha)
        high = np.full(theta.shape, 1.0 - alpha)
    else:
        jack = jackknife(a, b, level=level, method=method, variant=variant, resample=resample)
        low, high, _ = bca_levels(samples, theta, jack, confidence)
    return BootstrapResult(
        theta, cell_quantiles(samples, low), cell_quantiles(samples, high), n_valid, samples
    )


def _cluster_distribution(cluster, shared, progress):
    """:func:`bootstrap_distribution` on a
    :class:`~hanna_stats.kernels.distributed.ClusterExecutor`: ranges of the resamples, each a
    task (:func:`_distribution_block`), concatenated in order. ``shared``: ``(a, b or None
    when b is a, (level, method, variant), (inputs, systems))``, sent to the workers once."""
    inputs, systems = shared[3]
    rows = len(inputs) if inputs is not None else len(systems)
    parts = cluster.map(
        _distribution_block,
        shared,
        split(rows, cluster.blocks),
        progress=progress,
        desc="bootstrap blocks",
    )
    return np.concatenate(parts)


def _distribution_block(a, b, options, draws, rows):
    """One task of :func:`_cluster_distribution`: the resamples ``lo:hi`` of ``rows``, as
    :func:`bootstrap_ci` calls :func:`bootstrap_distribution` (``b`` None: ``a`` twice)."""
    lo, hi = rows
    level, method, variant = options
    inputs, systems = (None if d is None else d[lo:hi] for d in draws)
    return bootstrap_distribution(
        a,
        a if b is None else b,
        level=level,
        method=method,
        variant=variant,
        indices=BootstrapIndices(inputs, systems),
    )
