"""Options of the public kernel functions: allowed values, integer codes, the argument check."""

from __future__ import annotations

import numpy as np
from numba import njit

METHODS = ("pearson", "spearman", "kendall")
VARIANTS = ("a", "b", "c")
# Integer codes (positions in METHODS / VARIANTS) used inside compiled loops, where comparing
# strings costs tens of nanoseconds and contends on reference counts across threads.
PEARSON, SPEARMAN, KENDALL = 0, 1, 2
TAU_A, TAU_B, TAU_C = 0, 1, 2

CHOICES = {
    "method": METHODS,
    "variant": VARIANTS,
    "nan_policy": ("omit", "propagate", "raise"),
    "alternative": ("two-sided", "less", "greater"),
    "level": ("item", "system", "global"),
}


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
    for name, value in options.items():
        if value not in CHOICES[name]:
            allowed = ", ".join(repr(c) for c in CHOICES[name])
            raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    out = []
    for name, value in arrays.items():
        try:
            array = np.ascontiguousarray(value, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{name} must be an array of real numbers ({error})") from None
        if array.ndim != ndim:
            raise ValueError(f"{name} must have {ndim} dimension(s); got shape {array.shape}")
        if out and array.shape[ndim - match_last :] != out[0].shape[ndim - match_last :]:
            first = next(iter(arrays))
            raise ValueError(
                f"{name} must match {first} in its last {match_last} dimension(s); "
                f"got shapes {array.shape} and {out[0].shape}"
            )
        out.append(array)
    return out


@njit(cache=True)
def code(value, choices):
    """Position of the string ``value`` in the tuple ``choices``; -1 when absent."""
    for k in range(len(choices)):
        if choices[k] == value:
            return k
    return -1
