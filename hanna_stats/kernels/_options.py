"""Arguments of the public kernel functions: allowed values, integer codes, the shared checks.

Every public kernel validates its arguments here (in the style of scipy's ``_*_iv`` helpers)
and then calls private compiled code. Options are strings; their integer codes (positions in
the tuples below) exist only inside compiled loops, where comparing strings costs tens of
nanoseconds and contends on reference counts across threads.
"""

from __future__ import annotations

import numbers

import numpy as np

METHODS = ("pearson", "spearman", "kendall")
VARIANTS = ("a", "b", "c")
NAN_POLICIES = ("omit", "propagate", "raise")
ALTERNATIVES = ("two-sided", "less", "greater")
LEVELS = ("item", "system", "global")
#: Tie rules of :func:`~hanna_stats.kernels.tie_ranks`: a run of equal values occupying 0-based
#: sorted positions ``k .. k + t - 1`` gets their mean (``average``), ``k`` (``min``) or
#: ``k + t - 1`` (``max``).
TIE_RULES = ("average", "min", "max")
CORRECTIONS = ("bh", "by", "holm", "bonferroni")
RESAMPLE = ("inputs", "systems", "both")
CI_METHODS = ("percentile", "bca")
BOOTSTRAP_LEVELS = ("item", "system")
LEVELS_OF_MEASUREMENT = ("nominal", "ordinal", "interval")
#: p-value of :func:`~hanna_stats.kernels.correlation` (scipy.stats.kendalltau's ``method``).
PVALUE_METHODS = ("auto", "exact", "asymptotic")
#: Agreement weights of the nominal coefficients (None = unweighted); see ``kernels.nominal``.
WEIGHTS = ("linear", "quadratic")
#: Item-level groups of :func:`~hanna_stats.kernels.level_correlation`: correlate across the
#: systems within each input (the default) or across the inputs within each system.
GROUP_BY = ("input", "system")
#: Mean over groups: each defined group alike, or weighted by its number of observations.
WEIGHTINGS = ("uniform", "count")

PEARSON, SPEARMAN, KENDALL = 0, 1, 2
TAU_A, TAU_B, TAU_C = 0, 1, 2

#: Largest number of resamples or permutations a kernel accepts.
MAX_DRAWS = 1_000_000
#: Seeds are integers in [0, SEED_BOUND) (or a Generator, or None).
SEED_BOUND = 2**63

CHOICES = {
    "method": METHODS,
    "variant": VARIANTS,
    "nan_policy": NAN_POLICIES,
    "alternative": ALTERNATIVES,
    "level": LEVELS,
    "ties": TIE_RULES,
    "resample": RESAMPLE,
    "ci_method": CI_METHODS,
    "level_of_measurement": LEVELS_OF_MEASUREMENT,
    "pvalue_method": PVALUE_METHODS,
    "weights": WEIGHTS,
    "group_by": GROUP_BY,
    "weighting": WEIGHTINGS,
}


def check_option(name, value, choices=None):
    """Return the position of ``value`` in ``choices`` (default ``CHOICES[name]``).

    Raises
    ------
    ValueError
        ``"<name> must be one of 'a', 'b'; got <value>"`` unless ``value`` is one of the
        (string) choices.

    Examples
    --------
    >>> check_option("ties", "min")
    1
    >>> check_option("ties", "avg")
    Traceback (most recent call last):
    ...
    ValueError: ties must be one of 'average', 'min', 'max'; got 'avg'
    """
    choices = CHOICES[name] if choices is None else choices
    if isinstance(value, str) and value in choices:
        return choices.index(value)
    allowed = ", ".join(repr(c) for c in choices)
    raise ValueError(f"{name} must be one of {allowed}; got {value!r}")


def check_options(**options):
    """:func:`check_option` of each ``name=value`` pair (names are keys of ``CHOICES``);
    returns the codes in the order given."""
    return [check_option(name, value) for name, value in options.items()]


def as_float_array(name, value, ndim):
    """``value`` as a C-contiguous float64 array with ``ndim`` dimensions (an int, or a tuple
    of allowed ones); ValueError naming ``name`` otherwise."""
    if isinstance(value, str | bytes):
        raise ValueError(f"{name} must be an array of real numbers; got {value!r}")
    try:
        array = np.ascontiguousarray(value, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{name} must be an array of real numbers ({error})") from None
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if array.ndim not in allowed:
        dims = " or ".join(str(d) for d in allowed)
        raise ValueError(f"{name} must have {dims} dimension(s); got shape {array.shape}")
    return array


def validated(arrays, ndim, match_last, **options):
    """Check the options and return the arrays as C-contiguous float64 arrays.

    Parameters
    ----------
    arrays : dict of str to array_like
        Argument name to value; every value must convert to a float64 array with ``ndim``
        dimensions, and all must agree on their last ``match_last`` dimensions.
    ndim, match_last : int
    **options
        Argument name (a key of ``CHOICES``) to value; each must be one of its choices.

    Returns
    -------
    list of ndarray

    Raises
    ------
    ValueError
        Naming the first argument that fails.
    """
    check_options(**options)
    out = []
    for name, value in arrays.items():
        array = as_float_array(name, value, ndim)
        if out and array.shape[ndim - match_last :] != out[0].shape[ndim - match_last :]:
            first = next(iter(arrays))
            raise ValueError(
                f"{name} must match {first} in its last {match_last} dimension(s); "
                f"got shapes {array.shape} and {out[0].shape}"
            )
        out.append(array)
    return out


def check_count(name, value, maximum=MAX_DRAWS):
    """Return ``value`` as an int; ValueError unless it is an integer in [1, ``maximum``]."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or not 1 <= value <= maximum
    ):
        raise ValueError(f"{name} must be an integer in [1, {maximum:,}]; got {value!r}")
    return int(value)


def check_seed(seed):
    """The :class:`numpy.random.Generator` of ``seed``: an int in [0, 2**63), a Generator
    (used as is: drawing advances it) or None (fresh OS entropy).

    Examples
    --------
    >>> int(check_seed(0).integers(0, 10))
    8
    >>> check_seed(-1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be an integer in [0, 2**63), a numpy.random.Generator or None; got -1
    """
    if seed is None or isinstance(seed, np.random.Generator):
        return np.random.default_rng(seed)
    if not isinstance(seed, bool) and isinstance(seed, numbers.Integral) and 0 <= seed < SEED_BOUND:
        return np.random.default_rng(int(seed))
    raise ValueError(
        f"seed must be an integer in [0, 2**63), a numpy.random.Generator or None; got {seed!r}"
    )


def check_confidence(confidence):
    """Return ``confidence`` as a float; ValueError unless it is a number in (0, 1).

    Examples
    --------
    >>> check_confidence(0.95)
    0.95
    >>> check_confidence(95)
    Traceback (most recent call last):
    ...
    ValueError: confidence must be a number in (0, 1); got 95
    """
    if not (
        isinstance(confidence, numbers.Real)
        and not isinstance(confidence, bool)
        and 0.0 < confidence < 1.0
    ):
        raise ValueError(f"confidence must be a number in (0, 1); got {confidence!r}")
    return float(confidence)


def check_indices(name, value, bound, columns=None):
    """``value`` as a C-contiguous 2-D int64 array of indices in [0, ``bound``), with
    ``columns`` columns when given (else at least one)."""
    array = np.asarray(value)
    if array.ndim != 2 or not np.issubdtype(array.dtype, np.integer) or array.shape[1] == 0:
        raise ValueError(
            f"{name} must be a 2-D integer array (resamples, draws); got shape "
            f"{array.shape} and dtype {array.dtype}"
        )
    if columns is not None and array.shape[1] != columns:
        raise ValueError(f"{name} must have {columns} columns; got shape {array.shape}")
    if array.size and (array.min() < 0 or array.max() >= bound):
        raise ValueError(f"{name} must lie in [0, {bound})")
    return np.ascontiguousarray(array, dtype=np.int64)
