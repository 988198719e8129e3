"""Correlation of two paired vectors: Pearson, Spearman, Kendall tau-a/b/c, scipy-compatible."""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ._options import KENDALL, SPEARMAN, check_option, validated
from .kendall import pair_counts, tau_by_code
from .ranks import average_ranks

#: ``pvalue_method="auto"`` takes Kendall's exact p-value for untied samples of up to this many
#: pairs (or with at most one discordant or one concordant pair), as scipy.stats.kendalltau.
KENDALL_EXACT_AUTO_MAX_N = 33
#: Largest sample for Spearman's exact p-value (its null distribution costs about
#: ``n 2^(n-1) n^3 / 3`` additions: 0.5 s for n = 14, computed once per n).
SPEARMAN_EXACT_MAX_N = 14


class CorrelationResult(NamedTuple):
    """Result of :func:`correlation`."""

    statistic: float
    pvalue: float


@njit(cache=True)
def unit_vector(x, out):
    """Write ``(x - mean) / ||x - mean||`` into ``out``; return False if that is undefined.

    Undefined: fewer than 2 values, a constant vector (``(x == x[0]).all()``, as scipy checks) or
    an infinite value. For robustness with denormal or huge values (HANNA's CIDEr holds values
    down to 3e-321) the vector is first scaled by the power of two ``2^-e`` with
    ``max |x| = f 2^e``, ``0.5 <= f < 1`` (exact), then centred and normalised: the mean carries
    full precision and the sum of squares can neither underflow nor overflow. This plays the role
    of scipy.stats.pearsonr's scaling by ``max |x - mean|``, and makes the result exactly
    invariant under scaling by powers of two.

    Parameters
    ----------
    x : ndarray of float64, shape (n,)
        Values without NaN.
    out : ndarray of float64, shape (n,)
        Receives the unit vector (unspecified when False is returned).

    Returns
    -------
    bool
    """
    n = x.size
    if n < 2:
        return False
    constant = True
    largest = 0.0
    for v in x:
        constant = constant and v == x[0]
        largest = max(largest, abs(v))
    if constant or not math.isfinite(largest):
        return False
    # 2^-e as two factors: 2^1074 itself (denormal input) is not a float64.
    exponent = math.frexp(largest)[1]
    half = math.ldexp(1.0, -(exponent // 2))
    rest = math.ldexp(1.0, exponent // 2 - exponent)
    mean = 0.0
    for k in range(n):
        out[k] = x[k] * half * rest
        mean += out[k]
    mean /= n
    squares = 0.0
    for k in range(n):
        out[k] -= mean
        squares += out[k] * out[k]
    norm = math.sqrt(squares)
    for k in range(n):
        out[k] /= norm
    return True


@njit(cache=True)
def _clipped_dot(u, v):
    """``sum u v`` clipped to ``[-1, 1]`` (the Pearson correlation of two unit vectors)."""
    total = 0.0
    for k in range(u.size):
        total += u[k] * v[k]
    return min(1.0, max(-1.0, total))


@njit(cache=True)
def coefficient(x, y, method_code, variant_code):
    """Correlation coefficient of paired NaN-free vectors; NaN when undefined.

    ``method_code``: ``PEARSON``, ``SPEARMAN`` (Pearson on average ranks) or ``KENDALL``
    (tau of the Kendall counts, ``variant_code`` ``TAU_A/B/C``).
    """
    if method_code == KENDALL:
        return tau_by_code(pair_counts(x, y), variant_code)
    if method_code == SPEARMAN:
        x = average_ranks(x)
        y = average_ranks(y)
    u = np.empty(x.size)
    v = np.empty(y.size)
    if unit_vector(x, u) and unit_vector(y, v):
        return _clipped_dot(u, v)
    return np.nan


@njit(cache=True)
def coefficient_omit(x, y, method_code, variant_code):
    """:func:`coefficient` of the pairs where neither ``x`` nor ``y`` is NaN (pairwise deletion)."""
    keep = ~(np.isnan(x) | np.isnan(y))
    return coefficient(x[keep], y[keep], method_code, variant_code)


def _pvalue(stat, cdf, sf, alternative):
    # As scipy.stats._stats_py._get_pvalue for a null distribution symmetric about 0.
    if alternative == "less":
        return cdf(stat)
    if alternative == "greater":
        return sf(stat)
    return 2 * sf(abs(stat))


def _pearson_pvalue(r, n, alternative):
    from scipy import special

    if n == 2:
        return np.nan if np.isnan(r) else 1.0
    a = n / 2 - 1  # (r + 1) / 2 ~ Beta(a, a)
    return _pvalue(
        r,
        lambda r: special.betainc(a, a, (r + 1) / 2),
        lambda r: special.betaincc(a, a, (r + 1) / 2),
        alternative,
    )


def _spearman_pvalue(r, n, alternative):
    from scipy import special

    dof = n - 2
    with np.errstate(divide="ignore", invalid="ignore"):
        t = r * np.sqrt(max(dof / np.float64((r + 1) * (1 - r)), 0.0))
    return _pvalue(
        t, lambda t: special.stdtr(dof, t), lambda t: special.stdtr(dof, -t), alternative
    )


def _kendall_asymptotic_pvalue(counts, alternative):
    n = counts.n
    if n < 3:
        return np.nan  # the variance divides by n - 2 (scipy raises ZeroDivisionError)
    from scipy import special

    m = n * (n - 1.0)
    var = (
        (m * (2 * n + 5) - counts.x_tie_v1 - counts.y_tie_v1) / 18
        + 2.0 * (counts.x_ties + counts.xy_ties) * (counts.y_ties + counts.xy_ties) / m
        + counts.x_tie_v2 * counts.y_tie_v2 / (9 * m * (n - 2))
    )
    z = (counts.concordant - counts.discordant) / math.sqrt(var)
    return _pvalue(z, special.ndtr, lambda z: special.ndtr(-z), alternative)


def _inversion_cdf(n, kmax):
    """``P(Q <= k)`` for ``k = 0 .. kmax``, ``Q`` the number of inversions of a uniformly random
    permutation of ``n`` items (Kendall's discordant pairs under independence, without ties).

    ``Q = U_2 + ... + U_n`` with independent ``U_j`` uniform on ``{0, ..., j - 1}`` (the
    inversion table), so the probability generating function is
    ``prod_j (1 + z + ... + z^(j - 1)) / j`` (Knuth, *TAOCP* vol. 3, sec. 5.1.1). Each factor is
    one moving-window sum: a cumulative sum minus itself shifted by ``j``, divided by ``j``; only
    the first ``kmax + 1`` terms are kept. Probabilities rather than counts, so no ``n!``
    overflows (as scipy's branch for ``n >= 171``); about 1e-15 relative error.
    """
    pmf = np.zeros(kmax + 1)
    pmf[0] = 1.0
    for j in range(2, n + 1):
        pmf = np.cumsum(pmf) / j
        if j <= kmax:
            pmf[j:] -= pmf[: kmax + 1 - j]
    return np.cumsum(pmf)


def _kendall_exact_pvalue(n, concordant, alternative):
    """Exact p-value of ``C = concordant`` for two untied samples of ``n`` pairs.

    Under independence ``D = n (n - 1) / 2 - C`` is distributed as :func:`_inversion_cdf`,
    symmetric about ``n (n - 1) / 4``. With ``low = min(C, D)`` (the nearer tail),
    ``tail = P(Q <= low)`` and ``mass = P(Q = low)``: two-sided ``min(2 tail, 1)``; one-sided
    ``tail`` when the alternative points at the observed side, else ``1 - tail + mass``
    (scipy.stats._mstats_basic._kendall_p_exact). ``low <= 1`` uses ``P(Q = 0) = 1 / n!`` and
    ``P(Q = 1) = (n - 1) / n!`` (0 beyond ``n = 1000``), so large samples need no recurrence.
    """
    total = n * (n - 1) // 2
    low = min(concordant, total - concordant)
    if low <= 1:
        factorial = math.factorial(n) if n <= 1000 else math.inf
        mass = (n - 1) ** low / factorial
        tail = (1 + low * (n - 1)) / factorial
    else:
        cdf = _inversion_cdf(n, low)
        tail = cdf[low]
        mass = cdf[low] - cdf[low - 1]
    if alternative == "two-sided":
        pvalue = 2 * tail
    elif (concordant >= total - concordant) == (alternative == "greater"):
        pvalue = tail
    else:
        pvalue = 1 - tail + mass
    return min(max(pvalue, 0.0), 1.0)


def _kendall_pvalue(counts, alternative, pvalue_method):
    """scipy.stats.kendalltau's p-value for ``method=pvalue_method``; see :func:`correlation`."""
    untied = counts.x_distinct == counts.n and counts.y_distinct == counts.n
    if pvalue_method == "exact" and not untied:
        _raise_ties("kendall", counts.x_distinct < counts.n)
    if pvalue_method == "auto":
        small = counts.n <= KENDALL_EXACT_AUTO_MAX_N
        pvalue_method = (
            "exact"
            if untied and (small or min(counts.concordant, counts.discordant) <= 1)
            else "asymptotic"
        )
    if pvalue_method == "exact":
        return _kendall_exact_pvalue(counts.n, counts.concordant, alternative)
    return _kendall_asymptotic_pvalue(counts, alternative)


@functools.cache
def _spearman_null_counts(n):
    """``counts[t]``: the number of permutations ``p`` of ``0 .. n - 1`` with
    ``sum_i i p(i) = t`` (``t = 0 .. (n - 1) n (2n - 1) / 6``), as a read-only int64 array.

    Without ties, ``sum d^2 = n (n - 1)(2n - 1) / 3 - 2 t`` with ``t = sum_i r_i s_i`` over the
    0-based ranks, so this is the exact permutation distribution of Spearman's rho (Kendall,
    Kendall and Babington Smith 1939). Dynamic programme over the sets of values already given
    to positions ``0 .. k - 1``: position ``k`` takes an unused value ``v`` and adds ``k v``
    (``2^n`` sets, each an array over ``t``); exact in int64 (``n! < 2^63`` for ``n <= 20``).
    """
    size = (n - 1) * n * (2 * n - 1) // 6 + 1
    sets = np.arange(1 << n, dtype=np.int64)
    popcount = np.zeros(sets.size, dtype=np.int64)
    for bit in range(n):
        popcount += (sets >> bit) & 1
    position = np.empty(sets.size, dtype=np.int64)  # row of a set in its layer
    layer = np.zeros(1, dtype=np.int64)  # the sets of k values (bit v set: v used)
    counts = np.zeros((1, size), dtype=np.int64)
    counts[0, 0] = 1
    for k in range(n):
        following = np.flatnonzero(popcount == k + 1)
        position[following] = np.arange(following.size)
        grown = np.zeros((following.size, size), dtype=np.int64)
        for v in range(n):
            free = (layer >> v) & 1 == 0
            rows = position[layer[free] | (1 << v)]  # distinct rows for one v
            grown[rows, k * v :] += counts[free, : size - k * v]
        layer, counts = following, grown
    counts = counts[0]
    counts.flags.writeable = False
    return counts


def _spearman_exact_pvalue(x, y, alternative):
    """Exact permutation p-value of Spearman's rho for untied ``x``, ``y`` (``n <= 14``): the
    fraction of the ``n!`` pairings whose rho is at least (``"greater"``) or at most
    (``"less"``) the observed one; two-sided ``min(2 min(less, greater), 1)``, as
    ``scipy.stats.permutation_test(..., permutation_type="pairings", n_resamples=np.inf)``."""
    n = x.size
    t = int(np.argsort(np.argsort(x)) @ np.argsort(np.argsort(y)))
    counts = _spearman_null_counts(n)
    factorial = math.factorial(n)
    less = int(counts[: t + 1].sum()) / factorial
    greater = int(counts[t:].sum()) / factorial
    if alternative == "less":
        return less
    if alternative == "greater":
        return greater
    return min(2 * min(less, greater), 1.0)


def _raise_ties(method, x_tied):
    raise ValueError(
        f"pvalue_method='exact' needs samples without ties for method={method!r}; "
        f"{'x' if x_tied else 'y'} has tied values; use 'auto' or 'asymptotic'"
    )


def check_pvalue_method(method, pvalue_method):
    """Raise ValueError unless ``pvalue_method`` is a p-value method that ``method`` has."""
    check_option("pvalue_method", pvalue_method)
    if method == "pearson" and pvalue_method == "asymptotic":
        raise ValueError(
            "pvalue_method='asymptotic' is not available for method='pearson' (its p-value, as "
            "scipy.stats.pearsonr's, is the exact beta distribution); use 'auto' or 'exact'"
        )


def _spearman_pvalue_of(x, y, r, alternative, pvalue_method):
    """Spearman's p-value of the (defined) statistic ``r``; see :func:`correlation`."""
    if pvalue_method != "exact":
        return _spearman_pvalue(r, x.size, alternative)
    x_tied = np.unique(x).size < x.size
    if x_tied or np.unique(y).size < y.size:
        _raise_ties("spearman", x_tied)
    if x.size > SPEARMAN_EXACT_MAX_N:
        raise ValueError(
            f"pvalue_method='exact' needs n <= {SPEARMAN_EXACT_MAX_N} pairs for "
            f"method='spearman'; got {x.size}; use 'auto' or 'asymptotic'"
        )
    return _spearman_exact_pvalue(x, y, alternative)


def correlation(
    x,
    y,
    *,
    method="pearson",
    variant="b",
    nan_policy="propagate",
    alternative="two-sided",
    pvalue_method="auto",
):
    """Correlation coefficient of two paired samples, with its p-value.

    - ``"pearson"``: ``r = sum (x - mx)(y - my) / sqrt(sum (x - mx)^2 sum (y - my)^2)``
      (Pearson 1896), computed on power-of-two-scaled, centred unit vectors (see
      :func:`unit_vector`).
    - ``"spearman"``: Pearson's r of the average ranks (Spearman 1904).
    - ``"kendall"``: tau-a, tau-b (default) or tau-c from :func:`kendall_counts` (Kendall 1945;
      Stuart 1953).

    The statistic is clipped to ``[-1, 1]``; it and the p-value are NaN when a sample is constant
    or fewer than 2 pairs remain.

    **p-values** (``pvalue_method``, the ``method`` of ``scipy.stats.kendalltau``; scipy 1.17):

    - Kendall, ``"asymptotic"``: ``z = (C - D) / sqrt(var)`` against the standard normal, with
      the tie-corrected variance ``var = (v0 - vx - vy) / 18 + 2 n1 n2 / (n (n - 1))
      + tx ty / (9 n (n - 1)(n - 2))``, ``v0 = n (n - 1)(2n + 5)``, ``vx = sum t (t - 1)(2t + 5)``,
      ``tx = sum t (t - 1)(t - 2)`` over the tie groups of x, ``n1`` (``n2``) the pairs tied in
      x (y) (Kendall 1970, *Rank Correlation Methods*, 4th ed., eq. 4.3); NaN for ``n < 3``.
      ``"exact"``: the exact null distribution of the number of discordant pairs, that of the
      inversions of a random permutation (Kendall 1970; :func:`_inversion_cdf`); two-sided
      ``min(2 P(Q <= min(C, D)), 1)``. Only without ties: tied x or y raises ValueError, as in
      scipy (``n == 2`` gives 1 two-sided). ``"auto"`` (scipy's default): ``"exact"`` when
      neither sample has ties and ``n <= 33`` or ``min(C, D) <= 1``, else ``"asymptotic"``.
      The p-value depends only on ``C`` and ``D``, the same for all three variants.
    - Spearman, ``"auto"`` = ``"asymptotic"`` (``scipy.stats.spearmanr``, which has no other
      method): ``t = r sqrt((n - 2) / ((1 + r)(1 - r)))`` against Student's t with ``n - 2``
      degrees of freedom. ``"exact"``: the exact permutation distribution of
      ``sum d^2`` over all ``n!`` pairings (Kendall, Kendall and Babington Smith 1939), equal to
      ``scipy.stats.permutation_test`` of rho with ``permutation_type="pairings"`` and
      ``n_resamples=np.inf``; only without ties and for ``n <= 14`` (ValueError otherwise).
    - Pearson, ``"auto"`` = ``"exact"`` (``scipy.stats.pearsonr``'s default, which scipy calls
      the exact distribution of r): under independent normal samples ``(r + 1) / 2`` follows
      Beta(n/2 - 1, n/2 - 1) (Student 1908); for ``n == 2`` the p-value is 1. scipy has no
      asymptotic p-value for r, so ``"asymptotic"`` raises ValueError.

    Parameters
    ----------
    x, y : array_like, shape (n,)
        Paired observations.
    method : {"pearson", "spearman", "kendall"}
    variant : {"a", "b", "c"}
        Kendall variant; ignored by the other methods.
    nan_policy : {"propagate", "omit", "raise"}
        ``"propagate"``: NaN in either sample gives NaN; ``"omit"``: drop the pairs where either
        value is NaN; ``"raise"``: raise ValueError on NaN.
    alternative : {"two-sided", "less", "greater"}
        Alternative hypothesis: the correlation is non-zero, negative or positive.
    pvalue_method : {"auto", "exact", "asymptotic"}
        How the p-value is computed, as above.

    Returns
    -------
    CorrelationResult
        ``statistic`` and ``pvalue`` (floats).

    Raises
    ------
    ValueError
        For an invalid argument, NaN with ``nan_policy="raise"``, or ``pvalue_method="exact"``
        on tied samples (Kendall, Spearman) or more than 14 pairs (Spearman). A NaN statistic
        (constant sample) gives a NaN p-value, never this error.

    References
    ----------
    M. G. Kendall, *Rank Correlation Methods*, 4th ed., Griffin, 1970. M. G. Kendall,
    S. F. H. Kendall and B. Babington Smith, "The distribution of Spearman's coefficient of rank
    correlation in a universe in which all rankings occur an equal number of times",
    *Biometrika* 30, 1939. Student, "Probable error of a correlation coefficient", *Biometrika*
    6, 1908.

    Examples
    --------
    >>> res = correlation([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], method="kendall")
    >>> round(res.statistic, 4), round(res.pvalue, 4)  # exact: 2 (1 + 4 + 9) / 5!
    (0.6, 0.2333)
    >>> res = correlation(
    ...     [1, 2, 3, 4, 5], [2, 1, 4, 3, 5], method="kendall", pvalue_method="asymptotic"
    ... )
    >>> round(res.pvalue, 4)
    0.1416
    >>> x, y = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]
    >>> res = correlation(x, y, method="spearman", pvalue_method="exact")  # 2 x 8 / 5!
    >>> round(res.statistic, 4), round(res.pvalue, 4)
    (0.8, 0.1333)
    """
    method_code = check_option("method", method)
    variant_code = check_option("variant", variant)
    check_pvalue_method(method, pvalue_method)
    x, y = validated({"x": x, "y": y}, 1, 1, nan_policy=nan_policy, alternative=alternative)
    missing = np.isnan(x) | np.isnan(y)
    if missing.any():
        if nan_policy == "raise":
            name = "x" if np.isnan(x).any() else "y"
            raise ValueError(f"{name} contains NaN and nan_policy='raise'")
        if nan_policy == "propagate":
            return CorrelationResult(np.nan, np.nan)
        x, y = x[~missing], y[~missing]
    if method == "kendall":
        counts = pair_counts(x, y)
        stat = tau_by_code(counts, variant_code)
        if np.isnan(stat):
            return CorrelationResult(float(stat), np.nan)
        pvalue = _kendall_pvalue(counts, alternative, pvalue_method)
    else:
        stat = coefficient(x, y, method_code, variant_code)
        if np.isnan(stat):
            return CorrelationResult(float(stat), np.nan)
        if method == "pearson":
            pvalue = _pearson_pvalue(stat, x.size, alternative)
        else:
            pvalue = _spearman_pvalue_of(x, y, stat, alternative, pvalue_method)
    return CorrelationResult(float(stat), float(pvalue))
