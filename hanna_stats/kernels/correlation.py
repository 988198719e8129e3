"""Correlation of two paired vectors: Pearson, Spearman, Kendall tau-a/b/c, scipy-compatible."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ._options import KENDALL, SPEARMAN, check_option, validated
from .kendall import _kendall_counts, _tau
from .ranks import _rankdata


class CorrelationResult(NamedTuple):
    """Result of :func:`correlation`."""

    statistic: float
    pvalue: float


@njit(cache=True)
def _unit_vector(x, out):
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
def _statistic(x, y, method_code, variant_code):
    """Correlation coefficient of paired NaN-free vectors; NaN when undefined.

    ``method_code``: ``PEARSON``, ``SPEARMAN`` (Pearson on average ranks) or ``KENDALL``
    (tau of the Kendall counts, ``variant_code`` ``TAU_A/B/C``).
    """
    if method_code == KENDALL:
        return _tau(_kendall_counts(x, y), variant_code)
    if method_code == SPEARMAN:
        x = _rankdata(x)
        y = _rankdata(y)
    u = np.empty(x.size)
    v = np.empty(y.size)
    if _unit_vector(x, u) and _unit_vector(y, v):
        return _clipped_dot(u, v)
    return np.nan


@njit(cache=True)
def _statistic_omit(x, y, method_code, variant_code):
    """:func:`_statistic` of the pairs where neither ``x`` nor ``y`` is NaN (pairwise deletion)."""
    keep = ~(np.isnan(x) | np.isnan(y))
    return _statistic(x[keep], y[keep], method_code, variant_code)


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


def _kendall_pvalue(counts, alternative):
    from scipy import special

    n = counts.n
    if n < 3:
        return np.nan
    m = n * (n - 1.0)
    var = (
        (m * (2 * n + 5) - counts.x_tie_v1 - counts.y_tie_v1) / 18
        + 2.0 * (counts.x_ties + counts.xy_ties) * (counts.y_ties + counts.xy_ties) / m
        + counts.x_tie_v2 * counts.y_tie_v2 / (9 * m * (n - 2))
    )
    z = (counts.concordant - counts.discordant) / math.sqrt(var)
    return _pvalue(z, special.ndtr, lambda z: special.ndtr(-z), alternative)


def correlation(
    x, y, *, method="pearson", variant="b", nan_policy="propagate", alternative="two-sided"
):
    """Correlation coefficient of two paired samples, with its p-value.

    - ``"pearson"``: ``r = sum (x - mx)(y - my) / sqrt(sum (x - mx)^2 sum (y - my)^2)``
      (Pearson 1896), computed on power-of-two-scaled, centred unit vectors (see
      :func:`_unit_vector`). p-value as ``scipy.stats.pearsonr``: under independent normal samples
      ``(r + 1) / 2`` follows Beta(n/2 - 1, n/2 - 1); for ``n == 2`` the p-value is 1.
    - ``"spearman"``: Pearson's r of the average ranks (Spearman 1904). p-value as
      ``scipy.stats.spearmanr``: ``t = r sqrt((n - 2) / ((1 + r)(1 - r)))`` against Student's t
      with ``n - 2`` degrees of freedom.
    - ``"kendall"``: tau-a, tau-b (default) or tau-c from :func:`kendall_counts` (Kendall 1945;
      Stuart 1953). p-value as ``scipy.stats.kendalltau(method="asymptotic")``:
      ``z = (C - D) / sqrt(var)`` against the standard normal, with the tie-corrected variance
      ``var = (v0 - vx - vy) / 18 + 2 n1 n2 / (n (n - 1)) + tx ty / (9 n (n - 1)(n - 2))``,
      ``v0 = n (n - 1)(2n + 5)``, ``vx = sum t (t - 1)(2t + 5)``, ``tx = sum t (t - 1)(t - 2)``
      over the tie groups of x (Kendall 1970, *Rank Correlation Methods*, eq. 4.3). The p-value
      depends only on ``C - D``, so it is the same for all three variants (as in scipy).

    The statistic is clipped to ``[-1, 1]``; it and the p-value are NaN when a sample is constant
    or fewer than 2 pairs remain (Kendall's p-value needs 3).

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

    Returns
    -------
    CorrelationResult
        ``statistic`` and ``pvalue`` (floats).

    Raises
    ------
    ValueError
        For an invalid argument, or NaN with ``nan_policy="raise"``.

    Examples
    --------
    >>> res = correlation([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], method="kendall")
    >>> round(res.statistic, 4), round(res.pvalue, 4)
    (0.6, 0.1416)
    """
    method_code = check_option("method", method)
    variant_code = check_option("variant", variant)
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
        counts = _kendall_counts(x, y)
        stat = _tau(counts, variant_code)
        pvalue = np.nan if np.isnan(stat) else _kendall_pvalue(counts, alternative)
    else:
        stat = _statistic(x, y, method_code, variant_code)
        pvalue = (_pearson_pvalue if method == "pearson" else _spearman_pvalue)(
            stat, x.size, alternative
        )
    return CorrelationResult(float(stat), float(pvalue))
