"""Fisher z confidence intervals of Pearson correlations."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._options import check_confidence


class FisherIntervalResult(NamedTuple):
    """Lower and upper bounds of :func:`fisher_interval`, arrays of the broadcast shape."""

    low: np.ndarray
    high: np.ndarray


def fisher_interval(r, n, *, confidence=0.95):
    """Two-sided confidence interval of Pearson's r by Fisher's z transformation.

    With ``z = artanh(r)`` approximately normal with standard error ``1 / sqrt(n - 3)``
    (Fisher 1921, "On the 'probable error' of a coefficient of correlation deduced from a small
    sample", Metron 1)::

        low, high = tanh(artanh(r) -/+ z_{(1 + c) / 2} / sqrt(n - 3))

    where ``z_q`` is the standard normal quantile and ``c = confidence``; the interval of
    ``scipy.stats.pearsonr(x, y).confidence_interval(confidence_level=c)``. ``r = +-1`` gives the
    point interval ``(r, r)``. NaN where ``r`` is NaN or ``n < 4`` (no standard error).

    Parameters
    ----------
    r : array_like of float
        Pearson correlations, in [-1, 1].
    n : array_like of int
        Number of pairs each correlation was computed on (broadcast against ``r``).
    confidence : float
        Confidence level in (0, 1).

    Returns
    -------
    FisherIntervalResult
        ``low`` and ``high``, float64 arrays of the broadcast shape of ``r`` and ``n``.

    Raises
    ------
    ValueError
        For a confidence outside (0, 1), or an ``r`` outside [-1, 1].

    Examples
    --------
    >>> low, high = fisher_interval(0.5, 28)
    >>> round(float(low), 4), round(float(high), 4)
    (0.156, 0.7358)
    """
    confidence = check_confidence(confidence)
    r = np.asarray(r, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if (np.abs(r) > 1).any():
        raise ValueError("r must lie in [-1, 1]")
    from scipy.special import ndtri  # imported on use: scipy.special costs 0.2 s at start-up

    quantile = ndtri(0.5 + confidence / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.arctanh(r)
        half = quantile / np.sqrt(np.where(n >= 4, n - 3, np.nan))
        low, high = np.tanh(z - half), np.tanh(z + half)
    return FisherIntervalResult(low, high)
