"""Williams test for dependent correlations sharing one variable, over all pairs of measures.

Given the correlations ``r`` of M measures with one criterion and the M x M correlations ``R``
between the measures, every ordered pair (a, b) is tested for H1: ``|r_a| > |r_b|``: "does
measure a correlate more strongly with the criterion than measure b?". The two correlations are
dependent (the same criterion, the same items), so the independent-samples Fisher z test does not
apply; Williams' T2 (Williams, 1959; recommended by Steiger, 1980, and used for NLG metrics since
Graham and Baldwin, 2014) does.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._options import as_float_array, check_option


class WilliamsResult(NamedTuple):
    """Result of :func:`williams_test`; arrays of shape ``(*r.shape, M)``.

    ``statistic[..., a, b]`` and ``pvalue[..., a, b]`` test measure ``a`` against measure ``b``;
    ``df`` is the Student t degrees of freedom ``n - 3`` of each cell.
    """

    statistic: np.ndarray
    pvalue: np.ndarray
    df: np.ndarray


def _williams_t(r12, r13, r23, n):
    """Williams' T2 of arrays of triples; NaN where undefined (see :func:`williams_test`)."""
    k = 1.0 - r12 * r12 - r13 * r13 - r23 * r23 + 2.0 * r12 * r13 * r23
    mean = 0.5 * (r12 + r13)
    rest = 1.0 - r23
    denominator = 2.0 * k * (n - 1.0) / (n - 3.0) + mean * mean * (rest * rest * rest)
    # Undefined for |r23| = 1 (0/0: rounding would make it 0 or a spurious value) and where the
    # denominator is not positive (also NaN).
    ok = (denominator > 0.0) & (np.abs(r23) < 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (r12 - r13) * np.sqrt((n - 1.0) * (1.0 + r23) / np.where(ok, denominator, 1.0))
    return np.where(ok, t, np.nan)


def _williams_matrix(r, R, n, alternative):
    """Statistics and p-values (C, M, M) of every ordered pair, for each row of ``r``."""
    from scipy.special import stdtr

    criteria, measures = r.shape
    a, b = np.triu_indices(measures, 1)
    sign = np.where(r >= 0.0, 1.0, -1.0)
    # Flip the sign of a measure negatively correlated with the criterion: its correlation with
    # the criterion becomes |r| and its correlation with the other measure changes sign
    # accordingly (never a bare abs() of R).
    r23 = sign[:, a] * sign[:, b] * R[a, b]
    value = _williams_t(np.abs(r[:, a]), np.abs(r[:, b]), r23, n[a, b])
    # The smaller tail once per unordered pair: (a, b) and (b, a) stay exactly complementary,
    # and tiny p-values keep their precision.
    small = stdtr(n[a, b] - 3.0, -np.abs(value))
    large = 1.0 - small
    if alternative == "two-sided":
        p_ab = p_ba = np.minimum(1.0, 2.0 * small)
    else:
        first = (value > 0) == (alternative == "greater")  # greater with t > 0, or less
        p_ab = np.where(first, small, large)
        p_ba = np.where(first, large, small)
    undefined = np.isnan(value)
    t = np.full((criteria, measures, measures), np.nan)
    p = np.full((criteria, measures, measures), np.nan)
    t[:, a, b] = value
    t[:, b, a] = -value
    p[:, a, b] = np.where(undefined, np.nan, p_ab)
    p[:, b, a] = np.where(undefined, np.nan, p_ba)
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
        happen with averaged correlations, or ``|r23| = 1``); the p-value is NaN wherever the
        statistic is, for every ``alternative``. p-values use Student's t distribution function
        (``scipy.special.stdtr``), the smaller tail computed once per pair.

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
    check_option("alternative", alternative)
    r = as_float_array("r", r, (1, 2))
    r2 = r.reshape(-1, r.shape[-1])
    measures = r2.shape[1]
    R = as_float_array("R", R, 2)
    if R.shape != (measures, measures):
        raise ValueError(f"R must have shape ({measures}, {measures}); got {R.shape}")
    try:
        n = np.broadcast_to(np.asarray(n, dtype=np.float64), R.shape)
    except (TypeError, ValueError):
        raise ValueError(f"n must be a number or broadcast to {R.shape}") from None
    if not (n[np.isfinite(n)] > 3).all() or np.isinf(n).any():
        raise ValueError("n must be greater than 3 (the test has n - 3 degrees of freedom)")
    t, p = _williams_matrix(r2, R, n, alternative)
    shape = (*r.shape, measures)
    df = np.broadcast_to(n - 3.0, shape).copy()
    return WilliamsResult(t.reshape(shape), p.reshape(shape), df)
