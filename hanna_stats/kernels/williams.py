"""Williams test for dependent correlations sharing one variable, over all pairs of measures.

Given the correlations ``r`` of M measures with one criterion and the M x M correlations ``R``
between the measures, every ordered pair (a, b) is tested for H1: ``|r_a| > |r_b|``: "does
measure a correlate more strongly with the criterion than measure b?". The two correlations are
dependent (the same criterion, the same items), so the independent-samples Fisher z test does not
apply; Williams' T2 (Williams, 1959; recommended by Steiger, 1980, and used for NLG metrics since
Graham and Baldwin, 2014) does.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit, prange

ALTERNATIVES = ("two-sided", "less", "greater")


class WilliamsResult(NamedTuple):
    """Result of :func:`williams_test`; arrays of shape ``(*r.shape, M)``.

    ``statistic[..., a, b]`` and ``pvalue[..., a, b]`` test measure ``a`` against measure ``b``;
    ``df`` is the Student t degrees of freedom ``n - 3`` of each cell.
    """

    statistic: np.ndarray
    pvalue: np.ndarray
    df: np.ndarray


@njit(cache=True)
def williams_t(r12, r13, r23, n):
    """Williams' T2 for one triple; NaN where undefined (see :func:`williams_test`)."""
    k = 1.0 - r12 * r12 - r13 * r13 - r23 * r23 + 2.0 * r12 * r13 * r23
    mean = 0.5 * (r12 + r13)
    denominator = 2.0 * k * (n - 1.0) / (n - 3.0) + mean * mean * (1.0 - r23) ** 3
    if not denominator > 0.0:  # also NaN; 0 only for identical measures or |r23| = 1
        return np.nan
    return (r12 - r13) * np.sqrt((n - 1.0) * (1.0 + r23) / denominator)


_FPMIN = 1e-300
_EPS = 1e-16


@njit(cache=True)
def _beta_fraction(a, b, x):
    """Continued fraction of the incomplete beta function (modified Lentz; Press et al.,
    Numerical Recipes, 3rd ed., sec. 6.4), converging for x < (a + 1) / (a + b + 2)."""
    qab = a + b
    c = 1.0
    d = 1.0 - qab * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _FPMIN else _FPMIN)
    h = d
    for m in range(1, 10_000):
        m2 = 2.0 * m
        for aa in (
            m * (b - m) * x / ((a - 1.0 + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (a + 1.0 + m2)),
        ):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > _FPMIN else _FPMIN)
            c = 1.0 + aa / c
            c = c if abs(c) > _FPMIN else _FPMIN
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            break
    return h


@njit(cache=True)
def student_t_sf(t, df):
    """Survival function P(T > t) of Student's t with ``df`` degrees of freedom.

    ``P(T > |t|) = I_x(df / 2, 1 / 2) / 2`` with ``x = df / (df + t^2)``, the regularised
    incomplete beta function evaluated by its continued fraction on the side where it converges
    (with ``1 - x = t^2 / (df + t^2)`` computed directly), so small tail probabilities keep their
    relative precision (about 1e-13 against scipy.stats.t.sf).
    """
    if np.isnan(t) or np.isnan(df) or df <= 0.0:
        return np.nan
    if np.isinf(t):
        return 0.0 if t > 0 else 1.0
    a = 0.5 * df
    b = 0.5
    x = df / (df + t * t)
    y = t * t / (df + t * t)
    if y == 0.0:
        return 0.5
    front = np.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * np.log(x) + b * np.log(y)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        tail = 0.5 * front * _beta_fraction(a, b, x) / a
    else:
        tail = 0.5 * (1.0 - front * _beta_fraction(b, a, y) / b)
    return tail if t > 0 else 1.0 - tail


@njit(cache=True, parallel=True)
def _williams_matrix(r, R, n, alternative_code):
    criteria, measures = r.shape
    t = np.full((criteria, measures, measures), np.nan)
    p = np.full((criteria, measures, measures), np.nan)
    for c in prange(criteria):
        for a in range(measures):
            sign_a = 1.0 if r[c, a] >= 0.0 else -1.0
            for b in range(a + 1, measures):
                sign_b = 1.0 if r[c, b] >= 0.0 else -1.0
                # Flip the sign of a measure negatively correlated with the criterion: its
                # correlation with the criterion becomes |r| and its correlation with the other
                # measure changes sign accordingly (never a bare abs() of R).
                r23 = sign_a * sign_b * R[a, b]
                value = williams_t(abs(r[c, a]), abs(r[c, b]), r23, n[a, b])
                t[c, a, b] = value
                t[c, b, a] = -value
                # The smaller tail once per unordered pair: (a, b) and (b, a) stay exactly
                # complementary, and tiny p-values keep their precision.
                small = student_t_sf(abs(value), n[a, b] - 3.0)
                large = 1.0 - small
                if alternative_code == 0:  # two-sided
                    p[c, a, b] = p[c, b, a] = min(1.0, 2.0 * small)
                elif (value > 0) == (alternative_code == 2):  # greater with t > 0, or less
                    p[c, a, b], p[c, b, a] = small, large
                else:
                    p[c, a, b], p[c, b, a] = large, small
    return t, p


def williams_test(r, R, n, *, alternative="greater"):
    """Williams test of H1: ``|r_a| > |r_b|`` for every ordered pair of measures (a, b).

    For a criterion (variable 1) and two measures a (variable 2) and b (variable 3) observed on
    the same ``n`` items, with ``r12 = |r_a|``, ``r13 = |r_b|`` and
    ``r23 = sign(r_a) sign(r_b) R[a, b]`` (each measure's sign flipped so that it correlates
    positively with the criterion), Williams' T2 (Steiger, 1980, eq. 7) is

    .. math::

        t = (r_{12} - r_{13}) \\sqrt{\\frac{(n - 1)(1 + r_{23})}
            {2 \\frac{n - 1}{n - 3} |R| + \\bar r^2 (1 - r_{23})^3}},

    with :math:`|R| = 1 - r_{12}^2 - r_{13}^2 - r_{23}^2 + 2 r_{12} r_{13} r_{23}` (the
    determinant of the 3 x 3 correlation matrix) and :math:`\\bar r = (r_{12} + r_{13}) / 2`;
    under H0 (:math:`\\rho_{12} = \\rho_{13}`) t follows Student's t with ``n - 3`` degrees of
    freedom. ``t[a, b] = -t[b, a]``. The test assumes Pearson correlations of jointly normal
    variables; with Spearman or Kendall correlations, or with correlations averaged over groups,
    it is a heuristic (as used in the NLG literature).

    Parameters
    ----------
    r : array_like of float, shape (M,) or (C, M)
        Correlation of each measure with the criterion (one row per criterion).
    R : array_like of float, shape (M, M)
        Correlations between the measures (symmetric; the diagonal is not used).
    n : int or array_like of float, broadcastable to (M, M)
        Number of items the correlations were computed on, per pair if an array; every value
        must be greater than 3. It is always explicit: for system-level correlations it is the
        number of systems; for correlations averaged over groups (HANNA's story level, averaged
        over 96 prompts) the paper's convention n = number of groups is a convention, not the
        sample size of the averaged correlation.
    alternative : {"greater", "two-sided", "less"}
        ``"greater"`` (the paper's one-sided test): H1 ``|r_a| > |r_b|``, ``p = P(T >= t)``;
        ``"less"``: H1 ``|r_a| < |r_b|``; ``"two-sided"``: ``p = 2 P(T >= |t|)``, equal for
        (a, b) and (b, a).

    Returns
    -------
    WilliamsResult
        ``statistic``, ``pvalue`` and ``df``, each of shape ``r.shape + (M,)``: cell
        ``[..., a, b]`` tests a against b. NaN on the diagonal (a == b), where an input is NaN,
        and where the denominator is not positive (an inconsistent correlation matrix, as can
        happen with averaged correlations, or ``|r23| = 1``).

    Raises
    ------
    ValueError
        Naming the argument with a wrong shape, a value of n not above 3, or an unknown
        ``alternative``.

    References
    ----------
    Williams, E. J. (1959). Regression Analysis. Wiley, New York.
    Steiger, J. H. (1980). Tests for comparing elements of a correlation matrix. Psychological
    Bulletin, 87(2), 245-251.
    Graham, Y. and Baldwin, T. (2014). Testing for significance of increased correlation with
    human judgment. EMNLP, 172-176.

    Examples
    --------
    HANNA, system level, Pearson, Empathy: BERTScore F1 (r = 0.8867) against BLEU (r = 0.7730),
    whose correlation with each other is 0.9387 (10 systems):

    >>> res = williams_test([0.8867, 0.7730], [[1.0, 0.9387], [0.9387, 1.0]], 10)
    >>> res.statistic[0, 1].round(2), res.pvalue[0, 1].round(3), res.pvalue[1, 0].round(3)
    (np.float64(2.0), np.float64(0.043), np.float64(0.957))
    """
    if alternative not in ALTERNATIVES:
        allowed = ", ".join(repr(a) for a in ALTERNATIVES)
        raise ValueError(f"alternative must be one of {allowed}; got {alternative!r}")
    r = np.asarray(r, dtype=np.float64)
    if r.ndim not in (1, 2):
        raise ValueError(f"r must have 1 or 2 dimensions; got shape {r.shape}")
    r2 = np.ascontiguousarray(r.reshape(-1, r.shape[-1]))
    measures = r2.shape[1]
    R = np.ascontiguousarray(R, dtype=np.float64)
    if R.shape != (measures, measures):
        raise ValueError(f"R must have shape ({measures}, {measures}); got {R.shape}")
    try:
        n = np.ascontiguousarray(np.broadcast_to(np.asarray(n, dtype=np.float64), R.shape))
    except ValueError:
        raise ValueError(f"n must be a number or broadcast to {R.shape}") from None
    if not (n[np.isfinite(n)] > 3).all() or np.isinf(n).any():
        raise ValueError("n must be greater than 3 (the test has n - 3 degrees of freedom)")
    t, p = _williams_matrix(r2, R, n, ALTERNATIVES.index(alternative))
    shape = (*r.shape, measures)
    df = np.broadcast_to(n - 3.0, shape).copy()
    return WilliamsResult(t.reshape(shape), p.reshape(shape), df)
