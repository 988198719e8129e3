"""Chance-corrected agreement on categorical labels: Cohen's kappa, Fleiss' kappa, Gwet's AC1/AC2.

Pure numpy (these are not hot loops: one pass over an items x categories count table).

Input shape. Every function here reads raw labels, one row per item and one column per rater:
``fleiss_kappa``, ``gwet_ac`` and ``encode_labels`` take an ``(n_items, n_raters)`` array (the
shape of every agreement kernel, :func:`~hanna_stats.kernels.intraclass_corr` and
:func:`~hanna_stats.kernels.krippendorff_alpha` included), or its transpose when
``layout="raters x items"`` says so; ``cohen_kappa(a, b)`` takes its two columns. Labels are
any hashable, mutually sortable values (ints, floats, strings, bools); a missing rating is
``None`` or NaN (so a float array uses NaN). Categories are the sorted distinct labels, or
``categories=`` (all the labels raters could choose, used or not, in the order that the weights
should follow). :func:`encode_labels` returns the integer codes, items x
raters, for instance for :func:`~hanna_stats.kernels.krippendorff_alpha` (which reads floats).

Weights. ``weights=None`` gives the unweighted coefficients (identity agreement weights).
``"linear"`` and ``"quadratic"`` give the agreement weights of Gwet (2014) and of the R package
irrCAC (``linear.weights``, ``quadratic.weights``): with ``x_k`` the value of category k (the
label itself when all labels are numbers, else its 0-based position among the categories),

    linear     w_kl = 1 - |x_k - x_l| / (x_max - x_min),
    quadratic  w_kl = 1 - (x_k - x_l)^2 / (x_max - x_min)^2.

Cohen's weighted kappa is invariant to that scale, so it matches Cohen (1968) and
``statsmodels.stats.inter_rater.cohens_kappa(..., wt="linear" | "quadratic")``.

Inference (each result says which interval it gives, ``interval_method``: ``"z"`` or ``"t"``; the
defaults are those of the reference implementations, and ``interval_method=`` selects the
other distribution, for the interval and the p-value alike):

- :func:`cohen_kappa`: the large-sample standard error of Fleiss, Cohen & Everitt (1969), as
  ``statsmodels`` (and irrCAC's ``kappa2.table``); normal interval ``kappa +- z SE``; p-value of
  ``z = kappa / SE_0``, ``SE_0`` the standard error under H0: kappa = 0 (two-sided, normal),
  exactly as statsmodels (``interval_method="z"``; ``"t"``: ``kappa +- t_{n-1} SE`` and the
  Student-t p-value of the same ratio on n - 1 degrees of freedom, n the items rated by both).
- :func:`fleiss_kappa`, :func:`gwet_ac`: the linearisation variance of Gwet (2008; 2014),
  as irrCAC's ``fleiss.kappa.raw`` and ``gwet.ac1.raw`` with an infinite population (no
  finite-population correction); interval ``coef +- t_{n-1} SE`` (Student t, n - 1 degrees of
  freedom, n the items with at least one rating); p-value of ``t = coef / SE`` on n - 1 degrees
  of freedom, two-sided (``interval_method="t"``; ``"z"``: ``coef +- z SE`` and the normal
  p-value of the same ratio). This variance is valid away from H0 (unlike the null variance of
  Fleiss, Nee & Landis 1979, meant for testing and complete data only) and handles missing
  ratings.

Intervals are cut at 1 from above (no coefficient exceeds 1), as irrCAC does. Cohen's kappa
also lies at or above -1, so its interval is cut there too, which is the only departure from
statsmodels' Cohen interval. Fleiss' kappa and Gwet's AC are not bounded below by -1 when
ratings are missing (observed agreement comes from the items with two ratings or more, the
category shares from every rated item: items (1, 2), (1, -), (1, -) give Fleiss' kappa -2.6),
so their intervals are not cut below.

References
----------
.. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales. Educational and
   Psychological Measurement, 20(1), 37-46.
.. [2] Cohen, J. (1968). Weighted kappa: nominal scale agreement with provision for scaled
   disagreement or partial credit. Psychological Bulletin, 70(4), 213-220.
.. [3] Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample standard errors of kappa
   and weighted kappa. Psychological Bulletin, 72(5), 323-327.
.. [4] Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. Psychological
   Bulletin, 76(5), 378-382.
.. [5] Gwet, K. L. (2008). Computing inter-rater reliability and its variance in the presence of
   high agreement. British Journal of Mathematical and Statistical Psychology, 61(1), 29-48.
.. [6] Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed. Advanced Analytics.
   Chapters 2-5; the R package irrCAC (Gwet) implements its formulas.
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np

from hanna_stats.vocabulary import check

from ._options import WEIGHTS, check_confidence, check_option
from .agreement import items_by_raters

__all__ = [
    "WEIGHTS",
    "AgreementCoefficientResult",
    "CohenKappaResult",
    "LabelCodes",
    "cohen_kappa",
    "encode_labels",
    "fleiss_kappa",
    "gwet_ac",
]


class LabelCodes(NamedTuple):
    """Result of :func:`encode_labels`.

    Attributes
    ----------
    codes : ndarray of int64, shape (n_items, n_raters)
        The position of each label in ``categories``; -1 where the rating is missing. Items x
        raters whatever the ``layout`` of the labels.
    categories : tuple
        The categories, in code order.
    values : ndarray of float64, shape (len(categories),)
        The value of each category for the weights: the label when every category is a
        number, else its position.
    """

    codes: np.ndarray
    categories: tuple
    values: np.ndarray

    def as_float(self):
        """``codes`` as float64 with NaN where missing (the input of ``krippendorff_alpha``)."""
        return np.where(self.codes >= 0, self.codes, np.nan)


class CohenKappaResult(NamedTuple):
    """Result of :func:`cohen_kappa`.

    Attributes
    ----------
    statistic : float
        Cohen's kappa (weighted when ``weights`` was given); NaN when ``p_e = 1``.
    standard_error : float
        Fleiss, Cohen & Everitt (1969) large-sample standard error (statsmodels ``std_kappa``).
    confidence_interval : tuple of float
        ``(low, high)``: ``kappa -+ z_{(1+level)/2} SE`` (``t_{(1+level)/2, n-1}`` with
        ``interval_method="t"``), cut to [-1, 1].
    pvalue : float
        Two-sided normal (Student-t, n - 1 dof, with ``interval_method="t"``) p-value of
        ``kappa / null_standard_error`` (H0: kappa = 0).
    null_standard_error : float
        Standard error under H0 (statsmodels ``std_kappa0``).
    observed_agreement, chance_agreement : float
        ``p_a`` and ``p_e`` (weighted when ``weights`` was given).
    n_items : int
        Items rated by both raters (the others are dropped).
    categories : tuple
    interval_method : str
        ``"z"`` (default) or ``"t"``: the distribution of the interval and the p-value.
    """

    statistic: float
    standard_error: float
    confidence_interval: tuple[float, float]
    pvalue: float
    null_standard_error: float
    observed_agreement: float
    chance_agreement: float
    n_items: int
    categories: tuple
    interval_method: str


class AgreementCoefficientResult(NamedTuple):
    """Result of :func:`fleiss_kappa` and :func:`gwet_ac`.

    Attributes
    ----------
    statistic : float
        The coefficient ``(p_a - p_e) / (1 - p_e)``; NaN when ``p_e = 1``.
    standard_error : float
        Gwet's linearisation standard error (irrCAC ``coeff.se`` with ``N = Inf``); NaN for a
        single item.
    confidence_interval : tuple of float
        ``(low, high)``: ``statistic -+ t_{n-1} SE`` (``z SE`` with ``interval_method="z"``),
        cut at 1 from above.
    pvalue : float
        Two-sided Student-t p-value (n - 1 dof; normal with ``interval_method="z"``) of
        ``statistic / standard_error``.
    observed_agreement, chance_agreement : float
        ``p_a`` and ``p_e``.
    n_items : int
        Items with at least one rating (items without any are dropped).
    categories : tuple
    interval_method : str
        ``"t"`` (default) or ``"z"``: the distribution of the interval and the p-value.
    """

    statistic: float
    standard_error: float
    confidence_interval: tuple[float, float]
    pvalue: float
    observed_agreement: float
    chance_agreement: float
    n_items: int
    categories: tuple
    interval_method: str


# ----------------------------------------------------------------------------- labels


def _is_missing(value):
    return value is None or (isinstance(value, numbers.Number) and value != value)


def _check_categories(categories):
    """``categories`` as a tuple of distinct, hashable, non-missing labels."""
    if isinstance(categories, str | bytes) or not hasattr(categories, "__iter__"):
        raise ValueError(f"categories must be a sequence of distinct labels; got {categories!r}")
    cats = tuple(np.asarray(categories, dtype=object).ravel().tolist())
    try:
        distinct = len(set(cats)) == len(cats)
    except TypeError:
        distinct = False
    if not cats or not distinct or any(_is_missing(c) for c in cats):
        raise ValueError(
            f"categories must be a non-empty sequence of distinct, non-missing labels; "
            f"got {categories!r}"
        )
    return cats


def _sorted_labels(name, labels):
    try:
        return tuple(sorted(labels))
    except TypeError:
        kinds = ", ".join(sorted({type(v).__name__ for v in labels}))
        raise ValueError(
            f"{name} holds labels that cannot be sorted together ({kinds}); pass categories= "
            "to give their order"
        ) from None


def _encode(name, array, categories):
    """Codes (-1 = missing) and categories of a label array of any shape."""
    flat = array.ravel()
    if categories is None and array.dtype.kind in "biuf":
        missing = np.isnan(flat) if array.dtype.kind == "f" else np.zeros(flat.size, bool)
        if array.dtype.kind == "f" and np.isinf(flat).any():
            raise ValueError(f"{name} must not hold infinite values")
        labels, inverse = np.unique(flat[~missing], return_inverse=True)
        codes = np.full(flat.size, -1, dtype=np.int64)
        codes[~missing] = inverse
        cats = tuple(labels.tolist())
    else:
        items = flat.tolist()
        present = [v for v in items if not _is_missing(v)]
        try:
            distinct = set(present)
        except TypeError as error:
            raise ValueError(f"{name} must hold hashable labels ({error})") from None
        cats = _sorted_labels(name, distinct) if categories is None else categories
        index = {c: i for i, c in enumerate(cats)}
        unknown = distinct.difference(index)
        if unknown:
            shown = ", ".join(repr(v) for v in list(unknown)[:5])
            raise ValueError(f"{name} holds labels not in categories: {shown}")
        if any(isinstance(v, float) and math.isinf(v) for v in distinct):
            raise ValueError(f"{name} must not hold infinite values")
        codes = np.fromiter(
            (-1 if _is_missing(v) else index[v] for v in items), dtype=np.int64, count=len(items)
        )
    if all(isinstance(c, numbers.Real) for c in cats):
        values = np.array(cats, dtype=np.float64)
    else:
        values = np.arange(len(cats), dtype=np.float64)
    return LabelCodes(codes.reshape(array.shape), cats, values)


def _label_array(name, value, ndim, layout="items x raters"):
    """``value`` as a numpy array of labels with ``ndim`` dimensions (as given: 2-D arrays are
    laid out as ``layout`` says, which only the message of a wrong shape uses)."""
    if isinstance(value, str | bytes):
        raise ValueError(f"{name} must be an array of labels; got {value!r}")
    try:
        array = np.asarray(value)
        if array.dtype.kind in "US" and not isinstance(value, np.ndarray):
            array = np.asarray(value, dtype=object)  # numpy turns [1, "a"] into ["1", "a"]
    except ValueError as error:
        raise ValueError(f"{name} must be a rectangular array of labels ({error})") from None
    if array.dtype.kind not in "biufUSO":
        raise ValueError(f"{name} must hold labels (numbers, strings, ...); got {array.dtype}")
    if array.ndim != ndim:
        what = f"({layout.replace(' x ', ', ')})" if ndim == 2 else "(items,)"
        raise ValueError(f"{name} must have shape {what}; got shape {array.shape}")
    return array


def encode_labels(ratings, *, categories=None, layout="items x raters"):
    """Integer codes of a 2-D array of labels (items x raters), -1 for missing ratings.

    Parameters
    ----------
    ratings : array_like, shape (n_items, n_raters)
        Hashable labels; ``None`` or NaN = missing.
    categories : sequence, optional
        All possible labels, in order; default the sorted distinct labels.
    layout : {"items x raters", "raters x items"}
        ``"raters x items"``: ``ratings`` is given transposed, one row per rater.

    Returns
    -------
    LabelCodes
        Codes items x raters, whatever the ``layout`` of ``ratings``.

    Raises
    ------
    ValueError
        Naming the argument: not 2-D, unhashable or unsortable labels, labels not in
        ``categories``, infinite values, unknown ``layout``.

    Examples
    --------
    >>> from hanna_stats.kernels import krippendorff_alpha
    >>> enc = encode_labels([["yes", "no"], ["no", None], ["yes", "yes"]])
    >>> enc.codes.tolist(), enc.categories
    ([[1, 0], [0, -1], [1, 1]], ('no', 'yes'))
    >>> round(krippendorff_alpha(enc.as_float(), level_of_measurement="nominal").statistic, 3)
    0.0
    >>> same = encode_labels([["yes", "no", "yes"], ["no", None, "yes"]], layout="raters x items")
    >>> bool((same.codes == enc.codes).all())
    True
    """
    check("layout", layout)
    array = items_by_raters(_label_array("ratings", ratings, 2, layout), layout)
    cats = None if categories is None else _check_categories(categories)
    return _encode("ratings", array, cats)


def _weight_matrix(weights, values):
    """Agreement weights (identity, linear or quadratic) over category values."""
    q = values.size
    if weights is None:
        return np.eye(q)
    span = values.max() - values.min()
    if span == 0:
        return np.ones((q, q))
    distance = np.abs(values[:, None] - values[None, :]) / span
    return 1.0 - (distance if weights == "linear" else distance**2)


def _check_arguments(weights, confidence, interval_method):
    if weights is not None:
        check_option("weights", weights)
    check("interval_method", interval_method)
    return check_confidence(confidence)


def _half_width_and_pvalue(interval_method, level, se, ratio, df):
    """Half-width ``q SE`` of the level-``level`` interval and two-sided p-value of ``ratio``:
    ``q`` the standard normal quantile (``"z"``) or Student's t on ``df`` degrees of freedom
    (``"t"``) at ``(1 + level) / 2``."""
    from scipy.special import ndtr, ndtri, stdtr, stdtrit

    if interval_method == "z":
        return float(ndtri(0.5 + level / 2)) * se, float(2.0 * ndtr(-abs(ratio)))
    return float(stdtrit(df, 0.5 + level / 2)) * se, float(2.0 * stdtr(df, -abs(ratio)))


# ----------------------------------------------------------------------------- Cohen


def cohen_kappa(a, b, *, weights=None, categories=None, confidence=0.95, interval_method="z"):
    """Cohen's kappa (or weighted kappa) of two raters, with standard error, CI and z test.

    With ``p_kl`` the proportion of items that rater ``a`` put in category k and rater ``b`` in
    l, margins ``p_k.`` and ``p_.l`` and agreement weights ``w`` (identity when unweighted):

        p_a = sum_kl w_kl p_kl,   p_e = sum_kl w_kl p_k. p_.l,   kappa = (p_a - p_e) / (1 - p_e).

    Standard error (Fleiss, Cohen & Everitt 1969), with ``wbar_k. = sum_l w_kl p_.l`` and
    ``wbar_.l = sum_k w_kl p_k.``:

        Var = [sum_kl p_kl (w_kl - (wbar_k. + wbar_.l)(1 - kappa))^2
               - (kappa - p_e (1 - kappa))^2] / (n (1 - p_e)^2),
        Var_0 = [sum_kl p_k. p_.l (w_kl - (wbar_k. + wbar_.l))^2 - p_e^2] / (n (1 - p_e)^2),

    ``Var_0`` under H0: kappa = 0. These are the variances of
    ``statsmodels.stats.inter_rater.cohens_kappa`` (``var_kappa``, ``var_kappa0``) and of
    irrCAC's ``kappa2.table``.

    Parameters
    ----------
    a, b : array_like, shape (n_items,)
        The two raters' labels, item by item (the two columns of a ratings matrix); ``None``
        or NaN = missing. Items missing either rating are dropped.
    weights : {None, "linear", "quadratic"}
        None: Cohen's (1960) kappa; else Cohen's (1968) weighted kappa with the agreement
        weights of the module docstring.
    categories : sequence, optional
        All possible labels, in order (fixes the order of non-numeric labels for the weights).
    confidence : float
        Confidence level of the interval.
    interval_method : {"z", "t"}
        ``"z"`` (default, statsmodels and irrCAC's ``kappa2.table``): ``kappa +- z SE`` and a
        normal p-value; ``"t"``: ``kappa +- t_{n-1} SE`` and a Student-t p-value on n - 1
        degrees of freedom (n the items rated by both).

    Returns
    -------
    CohenKappaResult

    Raises
    ------
    ValueError
        Naming the argument: ``a`` or ``b`` not 1-D, lengths differ, no item rated by both,
        bad labels or ``categories``, unknown ``weights`` or ``interval_method``,
        ``confidence`` outside (0, 1).

    Notes
    -----
    ``kappa`` is NaN when ``p_e = 1`` (both raters used one and the same category). The
    standard error is 0 (and ``Var`` clipped at 0) under perfect agreement.

    References
    ----------
    Cohen (1960, 1968); Fleiss, Cohen & Everitt (1969); see the module docstring.

    Examples
    --------
    >>> a = ["x", "x", "x", "y", "y", "y"]
    >>> b = ["x", "x", "y", "y", "y", "y"]
    >>> res = cohen_kappa(a, b)
    >>> round(res.statistic, 4), round(res.standard_error, 4)
    (0.6667, 0.2869)
    """
    level = _check_arguments(weights, confidence, interval_method)
    cats = None if categories is None else _check_categories(categories)
    x, y = _label_array("a", a, 1), _label_array("b", b, 1)
    if x.size != y.size:
        raise ValueError(f"b must have the length of a; got {y.size} and {x.size}")
    if x.dtype.kind in "biuf" and y.dtype.kind in "biuf":
        pairs = np.column_stack([x.astype(np.float64), y.astype(np.float64)])
    else:
        pairs = np.empty((x.size, 2), dtype=object)
        pairs[:, 0], pairs[:, 1] = x.tolist(), y.tolist()
    enc = _encode("a and b", pairs, cats)
    codes = enc.codes[(enc.codes >= 0).all(axis=1)]
    n, q = codes.shape[0], len(enc.categories)
    if n == 0:
        raise ValueError("a and b must share at least one item rated by both; got none")
    table = np.bincount(codes[:, 0] * q + codes[:, 1], minlength=q * q).reshape(q, q)
    w = _weight_matrix(weights, enc.values)
    p = table / n
    row, col = p.sum(axis=1), p.sum(axis=0)
    pa = np.float64((w * p).sum())
    pe = np.float64(row @ w @ col)
    wbar = (w @ col)[:, None] + (w.T @ row)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = (pa - pe) / (1.0 - pe)
        scale = n * (1.0 - pe) ** 2
        var = (p * (w - wbar * (1.0 - kappa)) ** 2).sum() - (kappa - pe * (1.0 - kappa)) ** 2
        var0 = (np.outer(row, col) * (w - wbar) ** 2).sum() - pe**2
        se = float(np.sqrt(np.maximum(var / scale, 0.0)))
        se0 = float(np.sqrt(np.maximum(var0 / scale, 0.0)))
        z = kappa / np.float64(se0)
    half, pvalue = _half_width_and_pvalue(interval_method, level, se, z, max(n - 1, 1))
    interval = _interval(kappa, half, lowest=-1.0)
    rest = (se0, float(pa), float(pe), n, enc.categories, interval_method)
    return CohenKappaResult(float(kappa), se, interval, pvalue, *rest)


def _interval(statistic, half_width, lowest=-np.inf):
    """``statistic -+ half_width``, cut to [``lowest``, 1]."""
    low, high = np.clip([statistic - half_width, statistic + half_width], lowest, 1.0)
    return float(low), float(high)


# ----------------------------------------------------------------------------- many raters


def _counts(name, ratings, categories, layout):
    """Items x categories counts (items with no rating dropped) and the encoded labels."""
    check("layout", layout)
    array = items_by_raters(_label_array(name, ratings, 2, layout), layout)
    if array.shape[1] < 2:
        raise ValueError(f"{name} must have at least 2 columns (raters); got shape {array.shape}")
    cats = None if categories is None else _check_categories(categories)
    enc = _encode(name, array, cats)
    n, q = array.shape[0], len(enc.categories)
    rated = enc.codes >= 0
    rows = np.broadcast_to(np.arange(n)[:, None], array.shape)[rated]
    counts = np.bincount(rows * q + enc.codes[rated], minlength=n * q).reshape(n, q)
    counts = counts[counts.sum(axis=1) > 0].astype(np.float64)
    if not (counts.sum(axis=1) >= 2).any():
        raise ValueError(f"{name} must hold at least one item with two or more ratings; got none")
    return counts, enc


def _gwet_inference(counts, w, chance, level, interval_method):
    """Coefficient, Gwet's linearisation SE, t (or z) interval and p-value (irrCAC's formulas).

    ``chance(pi) -> (p_e, pe_item)``: the chance agreement of the coefficient and its item
    terms ``p_e|i`` (Gwet 2014), which enter the linearised item values ``kappa*_i``.
    """
    n = counts.shape[0]
    r = counts.sum(axis=1)
    two = r >= 2
    n2 = int(two.sum())
    pa_item = np.where(two, (counts * (counts @ w.T - 1.0)).sum(axis=1), 0.0)
    pa_item /= np.where(two, r * (r - 1.0), 1.0)
    pa = np.float64(pa_item.sum() / n2)
    pi = (counts / r[:, None]).mean(axis=0)
    pe, pe_item = chance(pi)
    pe = np.float64(pe)
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = (pa - pe) / (1.0 - pe)
        item = (n / n2) * (pa_item - pe * two) / (1.0 - pe)
        item -= 2.0 * (1.0 - stat) * (pe_item - pe) / (1.0 - pe)
        se = float(np.sqrt(((item - stat) ** 2).sum() / (n * (n - 1)))) if n > 1 else math.nan
        t = stat / np.float64(se)
    half, pvalue = _half_width_and_pvalue(interval_method, level, se, t, max(n - 1, 1))
    return float(stat), se, _interval(stat, half), pvalue, float(pa), float(pe)


def fleiss_kappa(
    ratings,
    *,
    weights=None,
    categories=None,
    confidence=0.95,
    interval_method="t",
    layout="items x raters",
):
    """Fleiss' kappa for many raters, with missing ratings, and Gwet's standard error.

    With ``r_ik`` the raters who put item i in category k, ``r_i = sum_k r_ik``,
    ``r*_ik = sum_l w_kl r_il``, n the items with ``r_i >= 1`` and n2 those with ``r_i >= 2``
    (Gwet 2014; irrCAC ``fleiss.kappa.raw``):

        p_a = (1/n2) sum_{i: r_i >= 2} sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1)),
        pi_k = (1/n) sum_i r_ik / r_i,   p_e = sum_kl w_kl pi_k pi_l,
        kappa = (p_a - p_e) / (1 - p_e).

    With every item rated by the same number of raters and no weights this is Fleiss' (1971)
    kappa (``statsmodels.stats.inter_rater.fleiss_kappa(table, method="fleiss")``).

    Variance (Gwet 2008, 2014, linearisation; no finite-population correction):

        Var = 1 / (n (n - 1)) sum_i (kappa*_i - kappa)^2,
        kappa*_i = kappa_i - 2 (1 - kappa) (p_e|i - p_e) / (1 - p_e),
        kappa_i = (n / n2) (p_a|i - p_e [r_i >= 2]) / (1 - p_e),
        p_e|i = sum_k r_ik pibar_k / r_i,   pibar_k = sum_l (w_kl + w_lk) pi_l / 2,

    ``p_a|i`` the item's term of ``p_a`` (0 when ``r_i < 2``). The interval is
    ``kappa -+ t_{n-1} SE`` cut at 1 from above; the p-value is that of ``t = kappa / SE`` on n - 1
    degrees of freedom (two-sided), as irrCAC (``interval_method="z"``: ``kappa -+ z SE`` and the
    normal p-value). The null variance of Fleiss, Nee & Landis (1979)
    is not used: it holds only under H0 and for complete data.

    Parameters
    ----------
    ratings : array_like, shape (n_items, n_raters)
        Labels; ``None`` or NaN = missing. Items without any rating are dropped; items with one
        rating count in ``pi_k`` and n (as irrCAC) but not in ``p_a``.
    weights : {None, "linear", "quadratic"}
        Agreement weights (module docstring); None = Fleiss' unweighted kappa.
    categories : sequence, optional
        All possible labels, in order.
    confidence : float
    interval_method : {"t", "z"}
        ``"t"`` (default, irrCAC): Student t on n - 1 degrees of freedom for the interval and
        the p-value; ``"z"``: the standard normal.
    layout : {"items x raters", "raters x items"}
        ``"raters x items"``: ``ratings`` is given transposed, one row per rater.

    Returns
    -------
    AgreementCoefficientResult

    Raises
    ------
    ValueError
        Naming the argument: not 2-D, fewer than 2 columns (raters), no item with two ratings,
        bad labels or ``categories``, unknown ``weights``, ``interval_method`` or ``layout``,
        ``confidence`` outside (0, 1).

    References
    ----------
    Fleiss (1971); Gwet (2008, 2014); see the module docstring.

    Examples
    --------
    Gwet (2014, p. 120), irrCAC's ``cac.raw4raters`` (12 items, 4 raters, NaN = missing):

    >>> nan = float("nan")
    >>> data = [[1, 1, nan, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2],
    ...         [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [nan, 5, 5, 5],
    ...         [nan, nan, 1, 1], [nan, nan, 3, nan]]
    >>> res = fleiss_kappa(data)
    >>> round(res.statistic, 5), round(res.standard_error, 5), res.interval_method
    (0.76117, 0.15302, 't')
    """
    level = _check_arguments(weights, confidence, interval_method)
    counts, enc = _counts("ratings", ratings, categories, layout)
    w = _weight_matrix(weights, enc.values)
    r = counts.sum(axis=1)

    def chance(pi):
        pibar = (w + w.T) @ pi / 2.0
        return float(pi @ w @ pi), counts @ pibar / r

    *out, pa, pe = _gwet_inference(counts, w, chance, level, interval_method)
    n = counts.shape[0]
    return AgreementCoefficientResult(*out, pa, pe, n, enc.categories, interval_method)


def gwet_ac(
    ratings,
    *,
    weights=None,
    categories=None,
    confidence=0.95,
    interval_method="t",
    layout="items x raters",
):
    """Gwet's AC1 (unweighted) or AC2 (weighted) for many raters with missing ratings.

    Same ``p_a``, ``pi_k``, n, n2 as :func:`fleiss_kappa`; the chance agreement is (Gwet 2008;
    2014, ch. 2-3; irrCAC ``gwet.ac1.raw``), with q categories and ``T_w = sum_kl w_kl``:

        p_e = T_w / (q (q - 1)) sum_k pi_k (1 - pi_k),   AC = (p_a - p_e) / (1 - p_e)

    (``T_w = q`` unweighted: AC1). Variance as for :func:`fleiss_kappa` with
    ``p_e|i = T_w / (q (q - 1)) sum_k r_ik (1 - pi_k) / r_i``; infinite population (irrCAC's
    ``N = Inf``); interval ``AC -+ t_{n-1} SE`` cut at 1 from above, two-sided t p-value of
    ``AC / SE`` on n - 1 degrees of freedom (``interval_method="z"``: ``AC -+ z SE`` and the
    normal p-value).

    AC depends on q: pass ``categories`` when some possible labels were never used (irrCAC's
    ``categ.labels``). With a single category ``p_e`` is taken as 0 (irrCAC: 1e-15).

    Parameters
    ----------
    ratings : array_like, shape (n_items, n_raters)
        Labels; ``None`` or NaN = missing.
    weights : {None, "linear", "quadratic"}
        None gives AC1; ``"linear"`` or ``"quadratic"`` gives AC2 with those weights.
    categories : sequence, optional
        All possible labels, in order.
    confidence : float
    interval_method : {"t", "z"}
        ``"t"`` (default, irrCAC) or ``"z"``, as :func:`fleiss_kappa`.
    layout : {"items x raters", "raters x items"}
        ``"raters x items"``: ``ratings`` is given transposed, one row per rater.

    Returns
    -------
    AgreementCoefficientResult

    Raises
    ------
    ValueError
        As :func:`fleiss_kappa`.

    References
    ----------
    Gwet (2008, 2014); see the module docstring.

    Examples
    --------
    irrCAC's ``cac.raw4raters`` (Gwet 2014, p. 120); irrCAC prints AC1 = 0.77544, SE 0.14295,
    95% CI (0.46081, 1):

    >>> nan = float("nan")
    >>> data = [[1, 1, nan, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2],
    ...         [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [nan, 5, 5, 5],
    ...         [nan, nan, 1, 1], [nan, nan, 3, nan]]
    >>> res = gwet_ac(data)
    >>> round(res.statistic, 5), round(res.standard_error, 5)
    (0.77544, 0.14295)
    >>> [round(v, 5) for v in res.confidence_interval]
    [0.46081, 1.0]
    """
    level = _check_arguments(weights, confidence, interval_method)
    counts, enc = _counts("ratings", ratings, categories, layout)
    w = _weight_matrix(weights, enc.values)
    q = len(enc.categories)
    factor = w.sum() / (q * (q - 1)) if q > 1 else 0.0
    r = counts.sum(axis=1)

    def chance(pi):
        return float(factor * (pi * (1.0 - pi)).sum()), factor * (counts @ (1.0 - pi)) / r

    *out, pa, pe = _gwet_inference(counts, w, chance, level, interval_method)
    n = counts.shape[0]
    return AgreementCoefficientResult(*out, pa, pe, n, enc.categories, interval_method)
