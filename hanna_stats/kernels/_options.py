"""Arguments of the public kernel functions: integer codes of the options, the shared checks.

Every public kernel validates its arguments here (in the style of scipy's ``_*_iv`` helpers)
and then calls private compiled code. Options are strings, their words those of
:mod:`hanna_stats.vocabulary` (``WORDS``); their integer codes (positions in those tuples) exist
only inside compiled loops, where comparing strings costs tens of nanoseconds and contends on
reference counts across threads.
"""

from __future__ import annotations

import numbers
import os
import re
from contextlib import contextmanager

import numba
import numpy as np

from hanna_stats.vocabulary import WORDS, code

#: ``check_option(name, value, choices=None)``: the position of ``value`` in ``choices``
#: (default ``WORDS[name]``) after the one check of words, :func:`hanna_stats.vocabulary.check`
#: (``check_option("ties", "min") == 1``): the code compiled loops take.
check_option = code

#: Aliases (not copies) of the vocabulary's tuples that kernel modules still import by name.
LEVELS_OF_MEASUREMENT = WORDS["level_of_measurement"]
WEIGHTS = WORDS["weights"]

PEARSON, SPEARMAN, KENDALL = (code("method", m) for m in ("pearson", "spearman", "kendall"))
TAU_A, TAU_B, TAU_C = (code("variant", v) for v in ("a", "b", "c"))

#: Largest number of resamples or permutations a kernel accepts.
MAX_DRAWS = 1_000_000
#: Seeds are integers in [0, SEED_BOUND) (or a Generator, or None).
SEED_BOUND = 2**63


def check_options(**options):
    """:func:`check_option` of each ``name=value`` pair (names are keys of
    :data:`hanna_stats.vocabulary.WORDS`); returns the codes in the order given.

    Examples
    --------
    >>> check_options(method="kendall", variant="c")
    [2, 2]
    >>> check_options(ties="avg")
    Traceback (most recent call last):
    ...
    ValueError: ties must be one of 'average', 'min', 'max'; got 'avg'
    """
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
        Argument name (a key of ``vocabulary.WORDS``) to value; each must be one of its choices.

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


#: Default working-memory budget of the blocked kernels, in bytes (1 GiB): the pairwise kernels
#: (item-level Kendall permutations, all-pairs level correlations, tie calibration) take their
#: pairs or groups in blocks whose work arrays fit it. Override for a process with the
#: environment variable ``HANNA_STATS_MEMORY_BUDGET`` (bytes, or a number with a unit: "512MiB",
#: "2GiB", "1.5GB"), or set this attribute (read at each call). Blocks change neither the
#: work's order nor the results, only the peak memory; a single item of work larger than the
#: budget (one group's prepared vectors, one pair's coefficients) is still taken whole.
MEMORY_BUDGET = 2**30
#: The environment variable that overrides :data:`MEMORY_BUDGET`.
MEMORY_BUDGET_ENV = "HANNA_STATS_MEMORY_BUDGET"
_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12,
          "ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40}  # fmt: skip


def parse_bytes(value):
    """Bytes of a memory size: an int, or a string such as ``"2GiB"``, ``"512 MiB"``, ``"1.5GB"``
    or ``"1000000"``; ValueError unless it is a positive size.

    Examples
    --------
    >>> parse_bytes("2GiB"), parse_bytes("1.5 GB"), parse_bytes(4096)
    (2147483648, 1500000000, 4096)
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        size = int(value)
    else:
        match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmMgGtT]i?)?[bB]?\s*", str(value))
        if match is None:
            raise ValueError(f"memory budget must be a size in bytes such as '2GiB'; got {value!r}")
        size = int(float(match.group(1)) * _UNITS[(match.group(2) or "").lower()])
    if size < 1:
        raise ValueError(f"memory budget must be positive; got {value!r}")
    return size


def memory_budget(budget=None):
    """The working-memory budget in bytes: ``budget`` when given (as :func:`parse_bytes`), else
    the environment variable ``HANNA_STATS_MEMORY_BUDGET`` when set, else
    :data:`MEMORY_BUDGET`."""
    if budget is not None:
        return parse_bytes(budget)
    env = os.environ.get(MEMORY_BUDGET_ENV, "").strip()
    return parse_bytes(env) if env else parse_bytes(MEMORY_BUDGET)


#: Work (element operations) below which a parallel kernel runs on the calling thread alone:
#: waking Numba's threads costs tens of microseconds, and on a busy machine, where a thread
#: waits for a core, tens of milliseconds, far more than such work takes.
SERIAL_WORK = 200_000


@contextmanager
def threads_for(work):
    """Run the parallel kernels called inside on one thread when ``work`` (their element
    operations, roughly) is below :data:`SERIAL_WORK`, else on Numba's threads as set. The
    kernels' results do not depend on their thread count."""
    if work >= SERIAL_WORK:
        yield
        return
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(previous)
