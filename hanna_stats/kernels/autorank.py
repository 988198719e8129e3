"""AutoRank: WMT25's aggregation of several metrics' system scores into one rank-like score.

The WMT25 general MT task's preliminary ranking (Kocmi et al. 2025, *Preliminary Ranking of
WMT25 General Machine Translation Systems*, Sec. "From system-level scores to AutoRank";
wmt-conference/wmt25-general-mt, ``preliminary_ranking/``) scales each metric's system scores by
their median and inter-percentile range, averages the scaled scores with equal weights and maps
the average linearly onto 1 (best) .. N (worst).
"""

from __future__ import annotations

import numpy as np

from ._options import as_float_array

__all__ = ["AUTORANK_EPSILON", "AUTORANK_PERCENTILES", "autorank"]

#: The percentiles whose difference scales a metric (the 25th and the 100th, the maximum).
AUTORANK_PERCENTILES = (25.0, 100.0)
#: The smallest scale: a metric whose systems all score alike is not divided by 0.
AUTORANK_EPSILON = 1e-9


def autorank(means):
    """AutoRank of each system (row) of ``means`` (systems x metrics), 1 the best and N the worst.

    For metric ``m`` with system scores :math:`x^{(m)}_s` (higher is better):

    .. math::

        z^{(m)}_s = \\frac{x^{(m)}_s - \\operatorname{median}_s x^{(m)}_s}
                         {\\max(\\varepsilon, Q^{(m)}_{100} - Q^{(m)}_{25})},
        \\qquad \\bar z_s = \\frac{1}{|M|} \\sum_m z^{(m)}_s,

        \\mathrm{AutoRank}_s = 1 + (N - 1)\\,\\frac{\\max_t \\bar z_t - \\bar z_s}
                                             {\\max_t \\bar z_t - \\min_t \\bar z_t},

    :math:`Q_p` the p-th percentile with linear interpolation (``numpy.percentile``'s default),
    :math:`\\varepsilon` = :data:`AUTORANK_EPSILON`. The scaling is monotone per metric and the
    final map affine, so a single metric's AutoRank orders the systems as its scores do, and a
    metric rescaled by ``a x + b`` (``a > 0``) gives the same AutoRank. When every system has
    the same average, every AutoRank is 1.

    Parameters
    ----------
    means : array_like of float, shape (n_systems, n_metrics)
        Each metric's system-level score (WMT25: the mean of its paragraph scores); no NaN.

    Returns
    -------
    ndarray of float64, shape (n_systems,)

    Raises
    ------
    ValueError
        If ``means`` is not 2-D, has no system or no metric, or holds NaN or infinity.

    References
    ----------
    Kocmi, T. et al. (2025). Preliminary Ranking of WMT25 General Machine Translation Systems.
    arXiv:2508.14909; the task's repository wmt-conference/wmt25-general-mt.

    Examples
    --------
    >>> autorank([[0.9, 80.0], [0.5, 70.0], [0.1, 75.0]])
    array([1., 3., 3.])
    >>> autorank([[2.0], [1.0], [0.0]])
    array([1., 2., 3.])
    """
    means = as_float_array("means", means, 2)
    if 0 in means.shape:
        raise ValueError(f"means must have at least one system and one metric; got {means.shape}")
    if not np.isfinite(means).all():
        raise ValueError("means must be finite (no NaN or infinity)")
    low, high = np.percentile(means, AUTORANK_PERCENTILES, axis=0)
    scale = np.maximum(AUTORANK_EPSILON, high - low)
    average = ((means - np.median(means, axis=0)) / scale).mean(axis=1)
    best, worst = average.max(), average.min()
    if best == worst:
        return np.ones(means.shape[0])
    return 1.0 + (means.shape[0] - 1) * (best - average) / (best - worst)
