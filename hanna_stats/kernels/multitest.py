"""Multiple-testing adjustment of p-values: Benjamini-Hochberg, Benjamini-Yekutieli, Holm,
Bonferroni. NaN-aware: a NaN p-value stays NaN and is not counted in the family."""

from __future__ import annotations

import numpy as np

from hanna_stats.vocabulary import WORDS

from ._options import as_float_array, check_option


def _adjust_sorted(p, method):
    """Adjusted values of the ascending p-values ``p`` (no NaN), in the same order."""
    m = p.size
    if m == 0:
        return np.empty(0)
    if method == "bonferroni":
        return np.minimum(1.0, p * m)
    if method == "holm":  # step-down: running maximum of p_(i) (m - i + 1)
        return np.minimum(1.0, np.maximum.accumulate(p * (m - np.arange(m))))
    # Step-up: running minimum from the largest of p_(i) m c(m) / i.
    c = 1.0
    if method == "by":
        c = 0.0
        for i in range(1, m + 1):  # in this order, as the harmonic number is usually summed
            c += 1.0 / i
    scaled = p / ((np.arange(m) + 1) / m / c)
    return np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])


def adjust_pvalues(pvalues, *, method="bh"):
    """Adjust a family of p-values for multiple testing.

    With the m non-NaN p-values sorted ascending, :math:`p_{(1)} \\le \\dots \\le p_{(m)}`:

    - ``"bonferroni"``: :math:`\\min(1, m p_{(i)})` (controls the family-wise error rate).
    - ``"holm"`` (Holm, 1979; step-down, FWER):
      :math:`\\min(1, \\max_{j \\le i} (m - j + 1) p_{(j)})`.
    - ``"bh"`` (Benjamini and Hochberg, 1995; step-up, false discovery rate under independence
      or positive dependence): :math:`\\min(1, \\min_{j \\ge i} m p_{(j)} / j)`.
    - ``"by"`` (Benjamini and Yekutieli, 2001; FDR under any dependence): as ``"bh"`` times
      :math:`c(m) = \\sum_{k=1}^m 1/k`.

    The values equal ``statsmodels.stats.multitest.multipletests(p, method=...)[1]`` with
    ``"bonferroni"``, ``"holm"``, ``"fdr_bh"``, ``"fdr_by"`` (and
    ``scipy.stats.false_discovery_control`` for ``"bh"``/``"by"``) on the non-NaN values. Tied
    p-values get equal adjusted values. Rejecting where the adjusted value is at most ``alpha``
    is the corresponding procedure at level ``alpha``.

    Parameters
    ----------
    pvalues : array_like of float, shape (m,)
        The family; values in [0, 1] or NaN. NaN values stay NaN and do not count in m.
    method : {"bh", "by", "holm", "bonferroni"}

    Returns
    -------
    ndarray of float64, shape (m,)
        Adjusted p-values, never below the raw ones, in the input order.

    Raises
    ------
    ValueError
        If ``pvalues`` is not one-dimensional or has a value outside [0, 1], or ``method`` is
        unknown.

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian
    Journal of Statistics, 6(2), 65-70.
    Benjamini, Y. and Hochberg, Y. (1995). Controlling the false discovery rate. JRSS B, 57(1).
    Benjamini, Y. and Yekutieli, D. (2001). The control of the false discovery rate in multiple
    testing under dependency. Annals of Statistics, 29(4), 1165-1188.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, np.nan, 0.03], method="bh").round(2).tolist()
    [0.03, 0.04, nan, 0.04]
    >>> adjust_pvalues([0.01, 0.04, 0.03], method="holm").round(2).tolist()
    [0.03, 0.06, 0.06]
    """
    check_option("method", method, WORDS["correction"])
    p = as_float_array("pvalues", pvalues, 1)
    if ((p < 0) | (p > 1)).any():
        raise ValueError("pvalues must lie in [0, 1] (or be NaN)")
    valid = np.flatnonzero(~np.isnan(p))
    order = valid[np.argsort(p[valid], kind="mergesort")]
    out = np.full(p.size, np.nan)
    out[order] = _adjust_sorted(p[order], method)
    return out
