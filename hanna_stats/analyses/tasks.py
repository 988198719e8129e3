"""Tasks and task sets: the WMT metrics tasks' ranking of metrics across language pairs.

A :class:`Task` fixes the language pair(s) (subsets of a WMT study), the level, the statistic,
the gold criterion, whether human translations are ranked as systems, the averaging and the
permutation test; :func:`run_task` gives each metric its statistic, its rank (significance
cluster) and keeps its test's resampled draws. A :class:`TaskSet` is tasks with weights;
:func:`run_task_set` averages the ranks and the statistics (rescaled to [0, 1] by each task's
range) and tests the weighted average with the tasks' own draws
(:mod:`hanna_stats.kernels.task_average`). :func:`wmt_task_set` builds the sets the WMT metrics
tasks report (mt-metrics-eval's ``tasks.WMT23``, ``WMT24``, ``WMT24OnWMT23``, ``WMT25``), and
:func:`task_ranking` is the ranking table of one of them (the command ``tasks``).

Statistics (mt-metrics-eval's ``corr_fcn``): ``"pearson"`` (system level: the given system
values, as ``--system-scores given``; segment level: over all (segment, system) cells with
``avg_by="none"``, per segment with ``"item"``, per system with ``"sys"``), ``"acc_eq"``
(``KendallWithTiesOpt``: tie-calibrated pairwise accuracy averaged over segments, its test
swapping the two metrics' outcomes per pair of systems, ``perm_test="pairs"``) and ``"spa"``
(``pce``: soft pairwise accuracy, its signs those of mt-metrics-eval, ``seed=4``, float32
coins; its test swaps the z-scored segment scores and recomputes SPA) and ``"accuracy"``
(system level only: pairwise accuracy pooled over the task's pairs, Kocmi et al. 2021, on the
given system values, its test swapping the z-scored system values,
:func:`~hanna_stats.kernels.pooled_pairwise_accuracy`). A task's subsets are pooled only where
the task says so (``accuracy`` over several pairs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import numpy as np
import polars as pl

from hanna_stats.analyses._common import analysis, criterion_cube
from hanna_stats.kernels import (
    calibrated_swaps,
    level_correlation,
    permutation_swaps,
    pooled_pairwise_accuracy,
    soft_pairwise_accuracy,
    tie_calibration,
)
from hanna_stats.kernels.calibration import calibrated_null
from hanna_stats.kernels.permutation import permutation_null, standardize
from hanna_stats.kernels.task_average import (
    average_ranks,
    average_statistics,
    averaged_significance,
    task_weights,
)
from hanna_stats.study import Study
from hanna_stats.vocabulary import TaskSetName, check

TaskLevel = Literal["sys", "seg"]
TaskStatistic = Literal["pearson", "accuracy", "acc_eq", "spa"]
AvgBy = Literal["none", "item", "sys"]
PermTest = Literal["scores", "pairs"]

#: mt-metrics-eval's seed of the signs of ``pce.compute_pairwise_p_values``.
PCE_SEED = 4


@dataclass(frozen=True)
class Task:
    """One task: what mt-metrics-eval's ``tasks.Task`` fixes (its attribute in brackets).

    ``subsets`` [lang]: the language pair(s); ``level`` [level]: ``"sys"`` or ``"seg"``;
    ``statistic`` [corr_fcn]; ``gold``: the criterion per pair (None: the pair's only
    criterion); ``human`` [human]: human translations ranked as systems; ``avg_by``;
    ``perm_test``; ``permutations`` [k] (0: no test, ranks by statistic); ``sample_rate``
    (1.0 only: tie calibration on all pairs); ``alpha`` [pval].
    """

    subsets: tuple[str, ...]
    level: TaskLevel = "sys"
    statistic: TaskStatistic = "pearson"
    gold: tuple[str | None, ...] | None = None
    human: bool = False
    avg_by: AvgBy = "none"
    perm_test: PermTest = "scores"
    permutations: int = 0
    sample_rate: float = 1.0
    alpha: float = 0.05

    def __post_init__(self):
        for name, value in (
            ("level", self.level),
            ("statistic", self.statistic),
            ("avg_by", self.avg_by),
            ("perm_test", self.perm_test),
        ):
            choices = {
                "level": ("sys", "seg"),
                "statistic": ("pearson", "accuracy", "acc_eq", "spa"),
                "avg_by": ("none", "item", "sys"),
                "perm_test": ("scores", "pairs"),
            }[name]
            check(name, value, choices)
        if len(self.subsets) != 1 and self.statistic != "accuracy":
            raise ValueError(f"a {self.statistic} task has one subset; got {self.subsets}")
        if self.statistic == "accuracy" and self.level != "sys":
            raise ValueError("an accuracy task is at the system level")
        if self.sample_rate != 1.0:
            raise ValueError("sample_rate must be 1.0: tie calibration uses every pair")

    @property
    def name(self) -> str:
        """``lang level statistic``, e.g. ``en-de seg acc_eq``."""
        return f"{','.join(self.subsets)} {self.level} {self.statistic}"

    @property
    def range(self) -> tuple[float, float]:
        """The statistic's range: (0, 1) for the accuracies, (-1, 1) for Pearson."""
        return (-1.0, 1.0) if self.statistic == "pearson" else (0.0, 1.0)

    def attributes(self) -> dict[str, str]:
        """Attribute -> value as text, for :func:`~hanna_stats.kernels.task_weights`."""
        return {
            "lang": ",".join(self.subsets),
            "level": self.level,
            "corr_fcn": self.statistic,
            "avg_by": self.avg_by,
        }


class TaskResult(NamedTuple):
    """:func:`run_task`'s result: the measures compared, their statistics and ranks (clusters),
    and the test's draws (K, M, M) of ``a``'s resampled statistic minus ``b``'s (None without
    a test)."""

    task: Task
    measures: tuple[str, ...]
    statistic: np.ndarray
    rank: np.ndarray
    draws: np.ndarray | None


@dataclass(frozen=True)
class TaskSet:
    """Tasks and their weights (summing to 1)."""

    tasks: tuple[Task, ...]
    weights: tuple[float, ...] = field(default=())

    def __post_init__(self):
        if not self.weights:
            object.__setattr__(self, "weights", (1.0 / len(self.tasks),) * len(self.tasks))
        if len(self.weights) != len(self.tasks):
            raise ValueError("a TaskSet needs one weight per task")

    def weighted_by(self, attributes: list[str]) -> TaskSet:
        """The same tasks weighted evenly over the values of ``attributes`` in turn
        (:func:`~hanna_stats.kernels.task_weights`)."""
        values = [t.attributes() for t in self.tasks]
        return TaskSet(self.tasks, tuple(task_weights(values, attributes).tolist()))


#: mt-metrics-eval's ``meta_info``: the standard gold of the pairs its task sets name, and the
#: pairs with several references (their human translations ranked as systems).
STANDARD_GOLD = {
    "wmt23": {"en-de": "mqm", "he-en": "mqm", "zh-en": "mqm"},
    "wmt24": {"en-de": "mqm", "en-es": "mqm", "ja-zh": "mqm"},
    "wmt25": {"ja-zh_CN": "mqm", "en-ko_KR": "mqm"},
}
WMT25_PAIRS = (
    "cs-de_DE", "cs-uk_UA", "en-ar_EG", "en-bho_IN", "en-cs_CZ", "en-et_EE", "en-is_IS",
    "en-it_IT", "en-ja_JP", "en-ko_KR", "en-mas_KE", "en-ru_RU", "en-sr_Cyrl_RS", "en-uk_UA",
    "en-zh_CN", "ja-zh_CN",
)  # fmt: skip
_SETS = {  # name -> (test set of the gold, default pairs, pairs with several references)
    "wmt23": ("wmt23", ("en-de", "he-en", "zh-en"), {"en-he", "he-en"}),
    "wmt24-on-wmt23": ("wmt23", ("en-de", "he-en", "zh-en"), {"en-he", "he-en"}),
    "wmt24": ("wmt24", ("en-de", "en-es", "ja-zh"), {"en-de"}),
    "wmt25": ("wmt25", WMT25_PAIRS, set()),
}


def wmt_task_set(
    name: TaskSetName,
    subsets: tuple[str, ...] | None = None,
    *,
    permutations: int = 0,
    gold: str | None = None,
) -> TaskSet:
    """The task set ``name`` as mt-metrics-eval defines it (``tasks.WMT23(lps, k=permutations,
    gold=gold)`` and the others), on ``subsets`` (default its pairs), sorted.

    - ``"wmt23"``: pairwise accuracy pooled over all pairs (weight: the number of pairs), then
      per pair system-level Pearson, segment-level Pearson and segment-level acc_eq by item
      with pair swaps (weight 1 each); weights normalised;
    - ``"wmt24"``, ``"wmt24-on-wmt23"``, ``"wmt25"``: per pair system-level SPA and
      segment-level acc_eq by item; equal weights.

    Human translations are ranked as systems in the pairs with several references (WMT23:
    en-he, he-en; WMT24: en-de). ``gold`` None: each pair's standard gold
    (:data:`STANDARD_GOLD`, else ESA's ``esa-human1`` for WMT25 and the pair's only criterion).
    """
    check("task_set", name)
    test_set, default, several = _SETS[name]
    lps = sorted(subsets or default)

    def gold_of(lp):
        return gold or STANDARD_GOLD[test_set].get(lp, "esa-human1" if name == "wmt25" else None)

    def add(lps_, level, statistic, **kw):
        human = bool(several & set(lps_))
        golds = tuple(gold_of(lp) for lp in lps_)
        tasks.append(
            Task(tuple(lps_), level, statistic, golds, human, **kw, permutations=permutations)
        )

    tasks: list[Task] = []
    acc = {"avg_by": "item", "perm_test": "pairs"}
    if name == "wmt23":
        add(lps, "sys", "accuracy")
        for lp in lps:
            add([lp], "sys", "pearson")
            add([lp], "seg", "pearson")
            add([lp], "seg", "acc_eq", **acc)
        weights = np.array([len(lps)] + [1] * (len(tasks) - 1), dtype=float)
    else:
        for lp in lps:
            add([lp], "sys", "spa")
            add([lp], "seg", "acc_eq", **acc)
        weights = np.ones(len(tasks))
    return TaskSet(tuple(tasks), tuple((weights / weights.sum()).tolist()))


def _gold_cube(study: Study, lp: str, gold: str | None, human: bool, given: bool):
    """The pair ``lp``'s metrics' names, their values (M, G, S) and the gold's (G, S), without
    the systems the gold has no value for (mt-metrics-eval leaves them out) and the metrics
    without any value there. ``gold`` None: the pair's only criterion."""
    part = study.subset(subset=lp) if study.subsets else study
    if gold is None:
        criteria = part.criteria
        if len(criteria) != 1:
            raise ValueError(f"subset {lp!r}: name the task's gold among {criteria}")
        gold = criteria[0]
    system_scores = "given" if given else "mean"
    gold, names, cube = criterion_cube(part, gold, ("metric",), human, system_scores)
    values = cube.values
    rated = ~np.isnan(values[-1]).all(axis=0)
    values = values[:, :, rated]
    present = [i for i in range(len(names)) if not np.isnan(values[i]).all()]
    return [names[i] for i in present], values[present], values[-1]


def _accuracy(study: Study, task: Task, seed):
    """Pairwise accuracy pooled over the task's pairs (given system values): the metrics of
    every pair, their statistics (M,) and draws (K, M, M) of the permutation test of
    :func:`~hanna_stats.kernels.pooled_pairwise_accuracy` (at ``permutations=0`` one draw is
    made and dropped: the statistic does not depend on it)."""
    golds = task.gold or (None,) * len(task.subsets)
    parts = [
        _gold_cube(study, lp, g, task.human, given=True)
        for lp, g in zip(task.subsets, golds, strict=True)
    ]
    names = sorted(set.intersection(*(set(n) for n, _, _ in parts)))
    X = np.concatenate([v[[n.index(m) for m in names], 0] for n, v, _ in parts], axis=1)
    gold = np.concatenate([c[0] for _, _, c in parts])
    labels = np.concatenate([np.full(c.shape[1], k) for k, (_, _, c) in enumerate(parts)])
    res = pooled_pairwise_accuracy(
        gold, X, labels, permutations=max(task.permutations, 1), seed=seed
    )
    if not task.permutations:
        return names, res.statistic, None
    draws = np.nan_to_num(res.null - res.null.transpose(0, 2, 1), nan=0.0)  # the diagonal
    return names, res.statistic, draws


def _pearson(X, C, task: Task, seed):
    """Pearson statistics (M,) and draws (K, M, M) of a task."""
    level = {"sys": "system", "none": "global", "item": "item", "sys_avg": "item"}
    if task.level == "sys":
        lvl, group_by = "global", "input"  # given values: one row of systems
    else:
        lvl = level[task.avg_by] if task.avg_by != "sys" else "item"
        group_by = "system" if task.avg_by == "sys" else "input"
    res = level_correlation(X, C[None], level=lvl, method="pearson", group_by=group_by)
    stat = res.statistic[:, 0]
    if not task.permutations:
        return stat, None
    if task.avg_by == "sys":
        raise ValueError("a Pearson test averaged by system is not supported")
    M = X.shape[0]
    a, b = np.triu_indices(M, 1)
    swaps = permutation_swaps(*C.shape, permutations=task.permutations, seed=seed)
    null = permutation_null(X, C, np.stack([a, b], 1), swaps, level=lvl, method="pearson")
    draws = np.zeros((task.permutations, M, M))
    draws[:, a, b] = null[:, 1:].T
    draws[:, b, a] = -draws[:, a, b]
    return stat, draws


def _acc_eq(X, C, task: Task, seed):
    """acc_eq statistics (M,) and draws (K, M, M) by item, pair swaps."""
    if task.avg_by != "item" or task.perm_test != "pairs":
        raise ValueError("an acc_eq task averages by item and swaps pairs")
    res = tie_calibration(C[None], X, level="item", statistic="acc_eq", group_by="input")
    stat, eps = res.statistic[0], res.epsilon[0]
    if not task.permutations:
        return stat, None
    S = C.shape[1]
    swaps = calibrated_swaps(
        C.shape[0], S * (S - 1) // 2, permutations=task.permutations, seed=seed
    )
    return stat, calibrated_null(C, X, eps, swaps)


def pce_signs(n_inputs: int, permutations: int = 1000) -> np.ndarray:
    """mt-metrics-eval's signs of ``pce.compute_pairwise_p_values``: ``default_rng(4)``,
    float32 uniforms rounded to 0/1, times 2 minus 1 (K, G)."""
    coins = np.random.default_rng(PCE_SEED).random((permutations, n_inputs), dtype=np.float32)
    return 2.0 * np.rint(coins).astype(np.float64) - 1.0


def _spa(X, C, task: Task, seed):
    """SPA statistics (M,) and draws (K, M, M): PERM-BOTH swaps of z-scored cells."""
    rated = ~np.isnan(C).all(axis=1)  # segments with a gold value (mt-metrics-eval's filter)
    X, C = X[:, rated], C[rated]
    signs = pce_signs(C.shape[0])
    stat = soft_pairwise_accuracy(C[None], X, signs=signs).statistic[0]
    if not task.permutations:
        return stat, None
    M = X.shape[0]
    Z = standardize(X)
    swaps = permutation_swaps(*C.shape, permutations=task.permutations, seed=seed).astype(bool)
    draws = np.zeros((task.permutations, M, M))
    for a, b in zip(*np.triu_indices(M, 1), strict=True):
        hybrid_a = np.where(swaps, Z[b], Z[a])
        hybrid_b = np.where(swaps, Z[a], Z[b])
        spa = soft_pairwise_accuracy(C[None], np.concatenate([hybrid_a, hybrid_b]), signs=signs)
        diff = spa.statistic[0, : task.permutations] - spa.statistic[0, task.permutations :]
        draws[:, a, b], draws[:, b, a] = diff, -diff
    return stat, draws


def run_task(study: Study, task: Task, *, seed: int | None = 0) -> TaskResult:
    """Each metric's statistic, rank (cluster at ``task.alpha``; without a test, the order of
    the statistic) and draws, for one task (see the module)."""
    if task.statistic == "accuracy":
        names, stat, draws = _accuracy(study, task, seed)
    else:
        given = task.level == "sys" and task.statistic == "pearson"
        gold = task.gold[0] if task.gold else None
        names, X, C = _gold_cube(study, task.subsets[0], gold, task.human, given)
        compute = {"pearson": _pearson, "acc_eq": _acc_eq, "spa": _spa}[task.statistic]
        stat, draws = compute(X, C, task, seed)
    order = sorted(range(len(names)), key=lambda i: (-stat[i], names[i]))
    if draws is None:
        rank = np.empty(len(names), dtype=np.int64)
        rank[order] = np.arange(1, len(names) + 1)
    else:
        _avg, _, rank = averaged_significance(
            stat[None], [task.range], [1.0], [draws], alpha=task.alpha
        )
    return TaskResult(task, tuple(names), stat, rank, draws)


class TaskSetResult(NamedTuple):
    """:func:`run_task_set`'s result: per task its :class:`TaskResult`; the measures of every
    task, their average rank, average rescaled statistic, p-values of the average (None
    without tests) and clusters."""

    results: tuple[TaskResult, ...]
    weights: tuple[float, ...]
    measures: tuple[str, ...]
    average_rank: np.ndarray
    average: np.ndarray
    pvalue: np.ndarray | None
    cluster: np.ndarray


def run_task_set(study: Study, tasks: TaskSet, *, seed: int | None = 0) -> TaskSetResult:
    """Run every task and average them (mt-metrics-eval's ``TaskSet.Run`` and
    ``TaskSetResults.AverageRanks``, ``AverageCorrs``, ``AverageCorrMatrix``): only the
    metrics of every task enter the average."""
    results = tuple(run_task(study, t, seed=seed) for t in tasks.tasks)
    common = sorted(set.intersection(*(set(r.measures) for r in results)))
    idx = [[r.measures.index(m) for m in common] for r in results]
    stats = np.array([r.statistic[i] for r, i in zip(results, idx, strict=True)])
    ranks = np.array([r.rank[i] for r, i in zip(results, idx, strict=True)], dtype=float)
    ranges = [t.range for t in tasks.tasks]
    weights = np.asarray(tasks.weights)
    mean_rank = average_ranks(ranks, weights)
    if all(r.draws is not None for r in results):
        draws = [
            r.draws[np.ix_(range(r.draws.shape[0]), i, i)]
            for r, i in zip(results, idx, strict=True)
        ]
        average, pvalue, cluster = averaged_significance(
            stats, ranges, weights, draws, alpha=tasks.tasks[0].alpha
        )
    else:
        average, pvalue = average_statistics(stats, ranges, weights), None
        order = np.argsort(-average, kind="stable")
        cluster = np.empty(len(common), dtype=np.int64)
        cluster[order] = np.arange(1, len(common) + 1)
    return TaskSetResult(results, tasks.weights, tuple(common), mean_rank, average, pvalue, cluster)


#: The first columns of :func:`task_ranking`; then two per task, ``<task> statistic`` and ``<task>
#: rank``, named by :attr:`Task.name`.
TASKS_SCHEMA = {
    "measure": pl.String,
    "cluster": pl.Int64,
    "average": pl.Float64,
    "average_rank": pl.Float64,
    "pvalue_next": pl.Float64,
}


@analysis(whole_study=True)
def task_ranking(
    study: Study,
    *,
    task_set: TaskSetName = "wmt24",
    permutations: int = 0,
    seed: int | None = 0,
    criterion: str | None = None,
) -> pl.DataFrame:
    """The ranking of metrics by a WMT task set: one row per metric, its significance cluster
    of the weighted average over the tasks, and each task's statistic and rank.

    Runs :func:`wmt_task_set` (``task_set``: mt-metrics-eval's ``tasks.WMT23``, ``WMT24``,
    ``WMT24OnWMT23`` or ``WMT25``, on the study's language pairs) with :func:`run_task_set`:
    ``average`` is the weighted average of the statistics rescaled to [0, 1] by each task's
    range, ``average_rank`` the weighted average of the tasks' ranks, ``cluster`` the
    significance cluster of the average (alpha 0.05, its test the tasks' own ``permutations``
    draws from ``seed``; ``permutations=0``, the default as mt-metrics-eval's ``k=0``: no
    test, the order of the average; a system-level SPA task's test is slow: 170 s for 100
    permutations of WMT22 zh-en's 31 metrics on 2 busy cores), ``pvalue_next`` the
    p-value of "this metric's average is above the next one's" (null without permutations and
    on the last row). The gold of every pair is ``criterion``, else mt-metrics-eval's standard
    gold of the pair (:data:`STANDARD_GOLD`), else the pair's only criterion. Only the metrics
    of every task are ranked. The task set takes the
    study's subsets itself (a task pools pairs only where it says so: WMT23's pairwise
    accuracy), so the command has no ``--pool-subsets``. Ordered by ``average`` descending.
    """
    check("task_set", task_set)
    if isinstance(permutations, bool) or not isinstance(permutations, int) or permutations < 0:
        raise ValueError(f"permutations must be an integer >= 0; got {permutations!r}")
    if not study.subsets:
        raise ValueError("tasks: the study has no language pairs (subsets); ingest a WMT test set")
    sets = wmt_task_set(task_set, study.subsets, permutations=permutations, gold=criterion)
    res = run_task_set(study, sets, seed=seed)
    order = np.argsort(-res.average, kind="stable")
    pnext = np.full(len(order), np.nan)
    if res.pvalue is not None:
        pnext[order[:-1]] = res.pvalue[order[:-1], order[1:]]
    columns = {
        "measure": list(res.measures),
        "cluster": res.cluster.tolist(),
        "average": res.average.tolist(),
        "average_rank": res.average_rank.tolist(),
        "pvalue_next": pnext.tolist(),
    }
    schema = dict(TASKS_SCHEMA)
    for r in res.results:
        index = [r.measures.index(m) for m in res.measures]
        columns[f"{r.task.name} statistic"] = r.statistic[index].tolist()
        columns[f"{r.task.name} rank"] = r.rank[index].tolist()
        schema |= {f"{r.task.name} statistic": pl.Float64, f"{r.task.name} rank": pl.Int64}
    frame = pl.DataFrame(columns, schema=schema).fill_nan(None)
    return frame.sort(["average", "measure"], descending=[True, False])
