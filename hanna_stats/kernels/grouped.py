"""Batched correlations of every measure pair within every group, and their level aggregates.

Data are cubes of shape (measures, groups, systems), float64, NaN = missing. For each group
``g``, measure ``i`` of ``A`` and measure ``j`` of ``B`` are correlated across the systems. Each
(measure, group) vector is prepared once (unit vector, ranks or Kendall pair signs), so a cell
costs one dot product.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ._validation import validated
from .correlation import clipped_dot, statistic, statistic_omit, unit_vector
from .kendall import counts_from_sign_sums, tau_from_counts, tie_stats
from .ranks import rankdata

#: Kendall on groups of up to this many systems uses per-vector pair signs (memory
#: ``measures x groups x n (n - 1) / 2`` bytes); longer groups count each pair of vectors with
#: :func:`kendall_counts` (O(n log n) beyond ``QUADRATIC_MAX_N``).
SIGN_VECTOR_MAX_N = 128

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


@njit(cache=True, parallel=True)
def _unit_vectors(X, ranks):
    measures, groups, n = X.shape
    vectors = np.zeros((groups, measures, n))
    state = np.empty((groups, measures), dtype=np.int8)
    for t in prange(measures * groups):
        m, g = divmod(np.int64(t), groups)
        x = X[m, g]
        if np.isnan(x).any():
            state[g, m] = _HAS_NAN
        elif unit_vector(rankdata(x) if ranks else x, vectors[g, m]):
            state[g, m] = _OK
        else:
            state[g, m] = _UNDEFINED
    return vectors, state


@njit(cache=True, parallel=True)
def _sign_vectors(X, signs):
    # Pair signs sign(x[j] - x[i]), i < j, and tie_stats per vector; without `signs` only state.
    measures, groups, n = X.shape
    pairs = n * (n - 1) // 2 if signs else 0
    vectors = np.zeros((groups, measures, pairs), dtype=np.int8)
    ties = np.zeros((groups, measures, 4))
    state = np.empty((groups, measures), dtype=np.int8)
    for t in prange(measures * groups):
        m, g = divmod(np.int64(t), groups)
        x = X[m, g]
        if np.isnan(x).any():
            state[g, m] = _HAS_NAN
            continue
        if n < 2 or (x == x[0]).all():
            state[g, m] = _UNDEFINED
            continue
        state[g, m] = _OK
        if signs:
            p = 0
            for i in range(n):
                for j in range(i + 1, n):
                    vectors[g, m, p] = np.int8(x[j] > x[i]) - np.int8(x[j] < x[i])
                    p += 1
            distinct, tied_pairs, v1, v2 = tie_stats(np.sort(x))
            ties[g, m, 0] = distinct
            ties[g, m, 1] = tied_pairs
            ties[g, m, 2] = v1
            ties[g, m, 3] = v2
    return vectors, ties, state


@njit(cache=True)
def _tau_from_signs(sa, sb, n, ta, tb, variant):
    s = 0
    q = 0
    for k in range(sa.size):
        p = np.int64(sa[k]) * sb[k]
        s += p
        q += p * p
    x_ties = (np.int64(ta[0]), np.int64(ta[1]), ta[2], ta[3])
    y_ties = (np.int64(tb[0]), np.int64(tb[1]), tb[2], tb[3])
    return tau_from_counts(counts_from_sign_sums(n, s, q, x_ties, y_ties), variant)


@njit(cache=True, parallel=True)
def _fill(A, B, VA, VB, TA, TB, state_a, state_b, symmetric, precomputed, method, variant, omit):
    measures_a, groups, n = A.shape
    measures_b = B.shape[0]
    cells = measures_a * (measures_a + 1) // 2 if symmetric else measures_a * measures_b
    ii = np.empty(cells, dtype=np.int64)
    jj = np.empty(cells, dtype=np.int64)
    c = 0
    for i in range(measures_a):
        for j in range(i if symmetric else 0, measures_b):
            ii[c] = i
            jj[c] = j
            c += 1
    R = np.empty((groups, measures_a, measures_b))
    for t in prange(groups * cells):
        g, c = divmod(np.int64(t), cells)
        i = ii[c]
        j = jj[c]
        a = state_a[g, i]
        b = state_b[g, j]
        r = np.nan
        if a == _OK and b == _OK:
            if method != "kendall":
                r = clipped_dot(VA[g, i], VB[g, j])
            elif precomputed:
                r = _tau_from_signs(VA[g, i], VB[g, j], n, TA[g, i], TB[g, j], variant)
            else:
                r = statistic(A[i, g], B[j, g], method, variant)
        elif omit and a != _UNDEFINED and b != _UNDEFINED:
            r = statistic_omit(A[i, g], B[j, g], method, variant)
        R[g, i, j] = r
        if symmetric:
            R[g, j, i] = r
    return R


@njit(cache=True)
def _correlate(A, B, symmetric, method, variant, omit):
    if method == "kendall":
        signs = A.shape[2] <= SIGN_VECTOR_MAX_N
        VA, TA, state_a = _sign_vectors(A, signs)
        VB, TB, state_b = (VA, TA, state_a) if symmetric else _sign_vectors(B, signs)
        return _fill(
            A, B, VA, VB, TA, TB, state_a, state_b, symmetric, signs, method, variant, omit
        )
    VA, state_a = _unit_vectors(A, method == "spearman")
    VB, state_b = (VA, state_a) if symmetric else _unit_vectors(B, method == "spearman")
    no_ties = np.zeros((0, 0, 4))
    return _fill(
        A, B, VA, VB, no_ties, no_ties, state_a, state_b, symmetric, True, method, variant, omit
    )


@njit(cache=True)
def group_correlations(A, B, method, variant, omit):
    """Correlation of every measure pair within every group.

    ``R[g, i, j]`` is the correlation across systems of ``A[i, g, :]`` and ``B[j, g, :]``,
    computed from per-vector preparations shared by all pairs:

    - Pearson: the centred unit vectors ``u`` of :func:`unit_vector`; ``r = u_a . u_b``.
    - Spearman: the same on average ranks (:func:`rankdata`).
    - Kendall, groups of up to ``SIGN_VECTOR_MAX_N`` systems: the pair signs
      ``s[p] = sign(x[j] - x[i])`` over the ``n (n - 1) / 2`` pairs ``i < j``;
      ``C - D = sum s_a s_b`` and ``C + D = sum (s_a s_b)^2`` give the
      :class:`KendallCounts` together with each vector's :func:`tie_stats`, and
      :func:`tau_from_counts` gives the variant. Longer groups: :func:`kendall_counts` per pair.

    A vector that is constant (or, for Pearson, has an infinite value) makes its cells NaN. A
    vector with NaN makes its cells NaN, unless ``omit``: then the pair is correlated on the
    systems where both vectors have values (pairwise deletion), NaN if that is undefined. Each
    cell is computed by one thread alone, so results do not depend on the thread count.

    Parameters
    ----------
    A : ndarray of float64, shape (Ma, G, S), C-contiguous
    B : ndarray of float64, shape (Mb, G, S), C-contiguous, or None for ``B = A`` (only the
        cells ``i <= j`` are computed and mirrored)
    method : {"pearson", "spearman", "kendall"}
    variant : {"a", "b", "c"}
        Kendall variant.
    omit : bool
        Pairwise deletion of NaN observations.

    Returns
    -------
    ndarray of float64, shape (G, Ma, Mb)
    """
    if B is None:
        return _correlate(A, A, True, method, variant, omit)
    return _correlate(A, B, False, method, variant, omit)


@njit(cache=True)
def aggregate_groups(R, omit):
    """Mean over groups of per-group correlations ``R`` (G, Ma, Mb), skipping NaN groups.

    Returns ``(statistic, n_groups, n_skipped)``: the mean of the non-NaN ``R[:, i, j]`` (summed
    in group order), the number of those groups and the number of NaN groups. The mean is NaN
    when no group is valid, and also when any group is NaN unless ``omit``.
    """
    groups, measures_a, measures_b = R.shape
    total = np.zeros((measures_a, measures_b))
    n_groups = np.zeros((measures_a, measures_b), dtype=np.int64)
    for g in range(groups):
        for i in range(measures_a):
            for j in range(measures_b):
                if not np.isnan(R[g, i, j]):
                    total[i, j] += R[g, i, j]
                    n_groups[i, j] += 1
    n_skipped = groups - n_groups
    mean = np.full((measures_a, measures_b), np.nan)
    for i in range(measures_a):
        for j in range(measures_b):
            if n_groups[i, j] > 0 and (omit or n_skipped[i, j] == 0):
                mean[i, j] = total[i, j] / n_groups[i, j]
    return mean, n_groups, n_skipped


def _at_level(X, level, omit):
    measures, groups, systems = X.shape
    if level == "system":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # systems with no value at all
            means = np.nanmean(X, axis=1) if omit else X.mean(axis=1)
        return np.ascontiguousarray(means[:, None, :])
    if level == "global":
        return X.reshape(measures, 1, groups * systems)
    return X


def _undefined_error(R, cubes, level):
    names = ("A", "B") if len(cubes) == 2 else ("A", "A")
    i, j, g = (int(k) for k in np.argwhere(np.isnan(R.transpose(1, 2, 0)))[0])
    reasons = []
    for name, k, x in ((names[0], i, cubes[0][i, g]), (names[1], j, cubes[-1][j, g])):
        if np.isnan(x).any():
            reasons.append(f"{name}[{k}] has missing values")
        elif x.size < 2 or (x == x[0]).all():
            reasons.append(f"{name}[{k}] is constant")
        elif np.isinf(x).any():
            reasons.append(f"{name}[{k}] has infinite values")
    return UndefinedCorrelationError(
        f"correlation of {names[0]}[{i}] and {names[1]}[{j}] is undefined in group {g} at level "
        f"{level!r}: {' and '.join(reasons)} (nan_policy='raise')",
        i,
        j,
        g,
    )


def level_correlation(A, B=None, *, level="item", method="kendall", variant="b", nan_policy="omit"):
    """Correlation matrix of measures at the item, system or global level.

    Levels, for cubes of shape (measures, groups G, systems S), e.g. HANNA's 96 prompts x 10
    systems:

    - ``"item"`` (HANNA's story level): correlate within each group across the S systems, then
      average the per-group correlations over the groups.
    - ``"system"``: correlate the S per-system means over the groups (``np.nanmean``: missing
      items are ignored in a mean under ``nan_policy="omit"``; a single group).
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
    >>> import numpy as np
    >>> A = np.array([[[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]], [[3.0, 1.0, 2.0], [1.0, 2.0, 3.0]]])
    >>> res = level_correlation(A, method="kendall")
    >>> res.statistic.round(4).tolist(), res.n_groups.tolist()
    ([[1.0, -0.3333], [-0.3333, 1.0]], [[1, 1], [1, 2]])
    """
    arrays = {"A": A} if B is None else {"A": A, "B": B}
    options = {"level": level, "method": method, "variant": variant, "nan_policy": nan_policy}
    omit = nan_policy == "omit"
    cubes = [_at_level(X, level, omit) for X in validated(arrays, 3, 2, **options)]
    R = group_correlations(cubes[0], cubes[1] if len(cubes) == 2 else None, method, variant, omit)
    if nan_policy == "raise" and np.isnan(R).any():
        raise _undefined_error(R, cubes, level)
    return LevelCorrelationResult(*aggregate_groups(R, omit))
