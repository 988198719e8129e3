"""The weighted average of tasks (the WMT metrics tasks' final ranking since WMT23): weights by
attribute, averaged ranks, averaged statistics rescaled by each task's range, and the
significance of the weighted average from the tasks' own resampling draws."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._options import as_float_array
from .clusters import significance_clusters


def task_weights(values, attributes):
    """Weights of tasks: ``1`` spread evenly over the values of the first attribute, then
    within each value evenly over the values of the next, and so on; evenly over the tasks
    left when no attribute is left.

    For tasks ``t`` with attribute values ``values[t][a]``, the weight of ``t`` is
    ``prod_k 1 / n_k(t)``, ``n_k(t)`` the number of distinct values of attribute ``k`` among
    the tasks that share ``t``'s values of the attributes before ``k``, times ``1 / n(t)``
    for the ``n(t)`` tasks that share all of them. mt-metrics-eval's
    ``TaskSetResults.AssignWeights`` (Freitag et al., "Results of WMT23 Metrics Shared Task",
    2023).

    Parameters
    ----------
    values : sequence of mapping of str to str
        Each task's attribute values.
    attributes : sequence of str
        The attributes, in the order the weight is spread over them.

    Returns
    -------
    ndarray of float64, shape (T,)
        The weights, summing to 1.

    Examples
    --------
    >>> tasks = [{"level": "sys", "lp": "en-de"}, {"level": "sys", "lp": "zh-en"},
    ...          {"level": "seg", "lp": "en-de"}]
    >>> task_weights(tasks, ["level"]).tolist()
    [0.25, 0.25, 0.5]
    >>> task_weights(tasks, []).round(4).tolist()
    [0.3333, 0.3333, 0.3333]
    """
    values = list(values)
    if not values:
        raise ValueError("task_weights needs at least one task")
    for name in attributes:
        if any(name not in v for v in values):
            raise ValueError(f"attribute {name!r} is missing from some task")
    weights = np.empty(len(values))
    _spread(values, list(range(len(values))), list(attributes), 1.0, weights)
    return weights


def _spread(values, tasks, attributes, total, out):
    """``out[tasks]``: ``total`` spread over the values of ``attributes[0]``, recursively."""
    if not attributes:
        out[tasks] = total / len(tasks)
        return
    groups: dict[str, list[int]] = {}
    for t in tasks:
        groups.setdefault(values[t][attributes[0]], []).append(t)
    for members in groups.values():
        _spread(values, members, attributes[1:], total / len(groups), out)


def _task_matrix(name, matrix, weights):
    """``matrix`` (T, M) float64 and ``weights`` (T,) checked."""
    matrix = as_float_array(name, matrix, 2)
    weights = as_float_array("weights", weights, 1)
    if weights.size != matrix.shape[0]:
        raise ValueError(f"weights has {weights.size} values for {matrix.shape[0]} tasks")
    return matrix, weights


def average_ranks(ranks, weights):
    """Weighted average rank of each measure over the tasks, ``sum_t w_t rank_t(m)``; NaN for a
    measure missing from a task (mt-metrics-eval's ``TaskSetResults.AverageRanks`` keeps only
    the measures of every task).

    Examples
    --------
    >>> average_ranks([[1, 2], [2, 1]], [0.75, 0.25]).tolist()
    [1.25, 1.75]
    """
    ranks, weights = _task_matrix("ranks", ranks, weights)
    return weights @ ranks


def average_statistics(statistics, ranges, weights):
    """Weighted average of each measure's statistics over the tasks, each rescaled to [0, 1]
    by its task's range: ``sum_t w_t (s_t(m) - b_t) / (e_t - b_t)``, ``(b_t, e_t)`` = (-1, 1)
    for a correlation and (0, 1) for an accuracy; NaN for a measure missing from a task
    (mt-metrics-eval's ``TaskSetResults.AverageCorrs``).

    Examples
    --------
    >>> average_statistics([[0.5, -0.5], [0.75, 0.25]], [(-1, 1), (0, 1)], [0.5, 0.5]).tolist()
    [0.75, 0.25]
    """
    statistics, weights = _task_matrix("statistics", statistics, weights)
    b, e = _ranges(ranges, statistics.shape[0])
    return weights @ ((statistics - b[:, None]) / (e - b)[:, None])


def _ranges(ranges, n_tasks):
    """Lower and upper ends (T,) of the tasks' ranges (T, 2)."""
    ranges = as_float_array("ranges", ranges, 2)
    if ranges.shape != (n_tasks, 2) or not (ranges[:, 1] > ranges[:, 0]).all():
        raise ValueError(f"ranges must be {n_tasks} pairs (low, high) with low < high")
    return ranges[:, 0], ranges[:, 1]


def averaged_significance(statistics, ranges, weights, draws: Sequence, *, alpha=0.05):
    """Significance of the differences of the weighted average statistic, from each task's own
    resampling draws, and the clusters of the average.

    For measures ``a`` above ``b`` (by average), the observed difference is ``A(a) - A(b)``
    (:func:`average_statistics`) and the null draws are ``sum_t w_t d_t,k(a, b) / (e_t - b_t)``,
    where ``d_t,k(a, b)`` is task ``t``'s ``k``-th resampled statistic of ``a`` minus that of
    ``b`` (the swapped measures' values of its permutation test); a task with fewer draws than
    the most has its draws repeated in order to fill up. The p-value of "``a`` is better than
    ``b``" is the share of null draws at least the observed difference; the clusters are
    :func:`~hanna_stats.kernels.significance_clusters` of the average at ``alpha``.
    mt-metrics-eval's ``TaskSetResults.AverageCorrMatrix`` (the WMT23 and later rankings).

    Parameters
    ----------
    statistics : array_like, shape (T, M)
        Each task's statistic of each measure (no NaN: measures of every task only).
    ranges : array_like, shape (T, 2)
        Each task's range (low, high).
    weights : array_like, shape (T,)
    draws : sequence of array_like, shape (K_t, M, M)
        Per task, ``draws[t][k, a, b] = d_t,k(a, b)`` (antisymmetric in ``a, b``).
    alpha : float
        Significance level of the clusters.

    Returns
    -------
    average : ndarray (M,)
    pvalue : ndarray (M, M)
        ``pvalue[a, b]`` for ``a`` above ``b`` in the sorted order, NaN elsewhere.
    cluster : ndarray of int64 (M,)

    Examples
    --------
    >>> d = np.zeros((4, 2, 2)); d[:, 0, 1] = [0.1, -0.1, 0.3, -0.3]; d[:, 1, 0] = -d[:, 0, 1]
    >>> avg, p, cluster = averaged_significance([[0.9, 0.7]], [(0, 1)], [1.0], [d])
    >>> float(p[0, 1]), cluster.tolist()
    (0.25, [1, 1])
    """
    statistics, weights = _task_matrix("statistics", statistics, weights)
    T, M = statistics.shape
    if len(draws) != T:
        raise ValueError(f"draws has {len(draws)} tasks, statistics {T}")
    b, e = _ranges(ranges, T)
    draws = [as_float_array("draws", d, 3) for d in draws]
    if any(d.shape[1:] != (M, M) or d.shape[0] == 0 for d in draws):
        raise ValueError(f"each task's draws must have shape (K, {M}, {M}) with K >= 1")
    average = average_statistics(statistics, ranges, weights)
    if np.isnan(average).any():
        raise ValueError("statistics must have a value for every measure in every task")
    K = max(d.shape[0] for d in draws)
    null = np.zeros((K, M, M))
    for w, low, high, d in zip(weights, b, e, draws, strict=True):
        null += w * np.resize(d, (K, M, M)) / (high - low)
    order = np.argsort(-average, kind="stable")
    pvalue = np.full((M, M), np.nan)
    for i, a in enumerate(order):
        for c in order[i + 1 :]:
            pvalue[a, c] = np.mean(null[:, a, c] >= average[a] - average[c])
    return (
        average,
        pvalue,
        significance_clusters(average, np.nan_to_num(pvalue, nan=1.0), alpha=alpha),
    )
