"""Per-vector preparation shared by the resampling kernels (bootstrap and permutation).

A vector is prepared once (its state, its centred unit vector for Pearson and Spearman, or its
pair signs and tie statistics for Kendall); the correlation of two prepared vectors is then one
dot product or one pass over the pair signs. Private compiled helpers.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._options import KENDALL, SPEARMAN
from .correlation import coefficient_omit, unit_vector
from .kendall import counts_from_sign_sums, tau_by_code, tie_stats
from .ranks import average_ranks, sort_order


@njit(cache=True)
def prepare_column(x, method_code, unit, signs):
    """Per-vector preparation: state (0 ok, 1 undefined, 2 NaN) and Kendall tie statistics;
    fills ``unit`` (Pearson/Spearman) or ``signs`` (Kendall)."""
    n = x.size
    ties = (0, 0, 0.0, 0.0)
    if np.isnan(x).any():
        return 2, ties
    if method_code != KENDALL:
        ok = unit_vector(average_ranks(x) if method_code == SPEARMAN else x, unit)
        return (0 if ok else 1), ties
    if n < 2 or (x == x[0]).all():
        return 1, ties
    p = 0
    for i in range(n):
        for j in range(i + 1, n):
            signs[p] = np.int8(x[j] > x[i]) - np.int8(x[j] < x[i])
            p += 1
    return 0, tie_stats(sort_order(x)[0])


@njit(cache=True)
def from_prepared(unit_a, signs_a, ties_a, unit_b, signs_b, ties_b, n, kendall, variant_code):
    """Correlation of two vectors prepared by :func:`prepare_column` (both defined)."""
    if kendall:
        s = np.int64(0)  # not a literal: one compiled signature of the callee
        q = np.int64(0)
        for p in range(signs_a.size):
            v = np.int64(signs_a[p]) * np.int64(signs_b[p])
            s += v
            q += v * v
        return tau_by_code(counts_from_sign_sums(n, s, q, ties_a, ties_b), variant_code)
    dot = 0.0
    for t in range(n):
        dot += unit_a[t] * unit_b[t]
    return min(1.0, max(-1.0, dot))


@njit(cache=True)
def ties_of_row(row):
    return (np.int64(row[0]), np.int64(row[1]), row[2], row[3])


@njit(cache=True)
def store_ties(row, ties):
    row[0] = ties[0]
    row[1] = ties[1]
    row[2] = ties[2]
    row[3] = ties[3]


@njit(cache=True)
def prepare_rows(C, method_code):
    """:func:`prepare_column` of every row of ``C`` (G, n): (units, signs, ties, state)."""
    groups, n = C.shape
    kendall = method_code == KENDALL
    units = np.zeros((groups, 0 if kendall else n))
    signs = np.zeros((groups, n * (n - 1) // 2 if kendall else 0), dtype=np.int8)
    ties = np.zeros((groups, 4))
    state = np.zeros(groups, dtype=np.int8)
    for g in range(groups):
        st, tt = prepare_column(C[g], method_code, units[g], signs[g])
        state[g] = st
        store_ties(ties[g], tt)
    return units, signs, ties, state


@njit(cache=True)
def with_criterion(x, c, prepared, g, method_code, variant_code, unit, signs):
    """Correlation of ``x`` with row ``g`` of the criterion prepared by :func:`prepare_rows`;
    ``unit``/``signs`` are scratch buffers for ``x``."""
    c_units, c_signs, c_ties, c_state = prepared
    if c_state[g] == 1:
        return np.nan
    st, tx = prepare_column(x, method_code, unit, signs)
    if st == 1:
        return np.nan
    if st == 2 or c_state[g] == 2:
        return coefficient_omit(x, c, method_code, variant_code)
    return from_prepared(
        unit,
        signs,
        tx,
        c_units[g],
        c_signs[g],
        ties_of_row(c_ties[g]),
        x.size,
        method_code == KENDALL,
        variant_code,
    )
