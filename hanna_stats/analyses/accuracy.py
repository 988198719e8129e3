"""Pairwise accuracy of the measures (the MT metrics tasks' statistics), as tidy polars
DataFrames.

- :func:`calibrated_accuracy`: tie-calibrated pairwise accuracy (acc_eq) or tau_eq of every
  automatic measure with every criterion (:func:`hanna_stats.kernels.tie_calibration`);
- :func:`calibrated_chance`: the same beside its chance baseline, the statistic of a metric with
  no information about the criterion (:func:`~hanna_stats.kernels.chance_accuracy`);
- :func:`calibrated_comparison`: pairwise permutation tests between tie-calibrated measures
  (:func:`~hanna_stats.kernels.calibrated_permutation_test`);
- :func:`spa`: soft pairwise accuracy (:func:`~hanna_stats.kernels.soft_pairwise_accuracy`).

Conventions as :mod:`hanna_stats.analyses.correlations`: the human-written stories are left
out unless ``include_human``; ``level="item"`` averages over the inputs (``group_by="input"``)
or over the systems (``group_by="system"``).

``system_scores="given"`` (system level) takes the study's given system-level values (WMT's
``.sys.score`` files) instead of the means over items, as ``correlate`` does; a measure without
given values is left out (:func:`hanna_stats.analyses.given_left_out` names them; the
command line prints them in a note on stderr). Soft pairwise accuracy permutes the items' scores
and has no given-value form.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from hanna_stats.analyses._common import (
    analysis,
    check_system_scores,
    criteria_cube,
    criterion_cube,
    cube_criterion,
    human_mask,
    measure_against,
    ordered_pairs_frame,
)
from hanna_stats.kernels import (
    calibrated_permutation_test,
    chance_accuracy,
    soft_pairwise_accuracy,
    tie_calibration,
)
from hanna_stats.progress import progress
from hanna_stats.study import Cube, Study
from hanna_stats.vocabulary import (
    GroupBy,
    Kind,
    LevelWord,
    SwapUnit,
    SystemScores,
    TieStatistic,
    check,
    check_bool,
    check_kinds,
    check_level,
)


def _split(cube: Cube) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the human criteria and of the automatic measures of ``cube``."""
    human = human_mask(cube)
    return np.flatnonzero(human), np.flatnonzero(~human)


def _select_criterion(
    study: Study, cube: Cube, criteria: np.ndarray, criterion: str | None
) -> np.ndarray:
    """``criteria`` (indices of the cube's human criteria), or only that of ``criterion`` (name
    or abbreviation), ValueError when the cube lacks it."""
    if criterion is None:
        return criteria
    name = cube_criterion(study, cube, criterion)
    kept = [i for i in criteria if cube.measures[i] == name]
    if not kept:
        raise ValueError(f"criterion {name!r} has no values in the systems analysed")
    return np.asarray(kept, dtype=np.intp)


#: Columns of :func:`calibrated_accuracy`.
CALIBRATED_ACCURACY_SCHEMA = {
    "measure": pl.String,
    "against": pl.String,
    "level": pl.String,
    "method": pl.String,
    "group_by": pl.String,
    "statistic": pl.Float64,
    "epsilon": pl.Float64,
    "n_groups": pl.Int64,
    "n_skipped": pl.Int64,
}

#: Columns of :func:`spa`.
SPA_SCHEMA = {
    "measure": pl.String,
    "against": pl.String,
    "method": pl.String,
    "statistic": pl.Float64,
    "n_systems": pl.Int64,
    "n_systems_dropped": pl.Int64,
    "n_pairs": pl.Int64,
    "n_missing": pl.Int64,
    "permutations": pl.Int64,
    "seed": pl.Int64,
}


def _pairs_frame(
    cube: Cube, rows: np.ndarray, cols: np.ndarray, schema: dict, columns: dict
) -> pl.DataFrame:
    """One row per (automatic measure ``rows[a]``, criterion ``cols[c]``), as ``schema``:
    ``measure, against`` and the scalars or (len(cols), len(rows)) arrays of ``columns``,
    transposed."""
    frame = measure_against(cube, rows, cols)
    for name, values in columns.items():
        frame[name] = np.broadcast_to(values, (len(cols), len(rows))).T.ravel().tolist()
    return pl.DataFrame({key: frame[key] for key in schema}, schema=schema)


@analysis
def calibrated_accuracy(
    study: Study,
    *,
    level: LevelWord = "item",
    statistic: TieStatistic = "acc_eq",
    group_by: GroupBy = "input",
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
    criterion: str | None = None,
    system_scores: SystemScores = "mean",
    epsilon: float | dict[str, float] | None = None,
) -> pl.DataFrame:
    """Tie-calibrated pairwise accuracy (or tau_eq) of every automatic measure with every
    criterion (or with ``criterion``).

    Each (measure, criterion) pair gets its own tie threshold ``epsilon`` on the measure's
    scores, the one maximising the statistic (Deutsch, Foster and Freitag 2023; see
    :func:`hanna_stats.kernels.tie_calibration`); at item level one epsilon serves all groups.
    Missing values are left out pairwise.

    Parameters
    ----------
    study : Study
    level : {"item", "system", "global"}
        ``"story"``, ``"summary"`` or ``"segment"`` give ``"item"``.
    statistic : {"acc_eq", "tau_eq"}
    group_by : {"input", "system"}
        Item level: the groups (inputs, or systems).
    include_human : bool
    kinds : tuple of str
    criterion : str, optional
        One criterion (name or abbreviation); default all.
    system_scores : {"mean", "given"}
        System level: a system's value is the mean of its items (default) or the study's given
        value (see the module; measures without one are left out).
    epsilon : float or dict of str to float, optional
        Fixed tie thresholds instead of calibrated ones (e.g. thresholds calibrated on a
        development set): one for every measure, or one per measure name (every measure
        compared). Default None: each calibrated.

    Returns
    -------
    polars.DataFrame
        One row per (measure, criterion): ``measure, against, level, method, group_by,
        statistic, epsilon, n_groups, n_skipped`` (``method`` is the statistic's name).
    """
    level, cube, criteria, measures, fixed = _calibration_cubes(
        study, level, system_scores, include_human, kinds, criterion, epsilon
    )
    res = tie_calibration(
        cube.values[criteria],
        cube.values[measures],
        level=level,
        statistic=statistic,
        group_by=group_by,
        epsilon=fixed,
    )
    return _pairs_frame(
        cube,
        measures,
        criteria,
        CALIBRATED_ACCURACY_SCHEMA,
        {
            **_calibration_columns(level, statistic, group_by, res),
            "n_groups": res.n_groups,
            "n_skipped": res.n_skipped,
        },
    )


def _calibration_cubes(
    study: Study,
    level: str,
    system_scores: str,
    include_human: bool,
    kinds: tuple[str, ...],
    criterion: str | None,
    epsilon: float | dict[str, float] | None,
) -> tuple[str, Cube, np.ndarray, np.ndarray, np.ndarray | None]:
    """The options of :func:`calibrated_accuracy` and :func:`calibrated_chance` checked: the
    level, the cube, the indices of its criteria compared and of its measures, and the kernel's
    fixed thresholds (None: calibrated)."""
    level = check_level(level)
    check_system_scores(system_scores, level)
    check_bool("include_human", include_human)
    cube = criteria_cube(study, check_kinds(kinds), include_human, system_scores)
    criteria, measures = _split(cube)
    criteria = _select_criterion(study, cube, criteria, criterion)
    fixed = _fixed_epsilons(epsilon, [cube.measures[m] for m in measures], len(criteria))
    return level, cube, criteria, measures, fixed


def _calibration_columns(level: str, statistic: str, group_by: str, res: Any) -> dict:
    """The columns :func:`calibrated_accuracy` and :func:`calibrated_chance` share."""
    return {
        "level": level,
        "method": statistic,
        "group_by": group_by if level == "item" else None,
        "statistic": res.statistic,
        "epsilon": res.epsilon,
    }


#: Columns of :func:`calibrated_chance`.
CALIBRATED_CHANCE_SCHEMA = {
    **{k: v for k, v in CALIBRATED_ACCURACY_SCHEMA.items() if k not in ("n_groups", "n_skipped")},
    "chance": pl.Float64,
    "chance_se": pl.Float64,
    "chance_at_epsilon": pl.Float64,
    "chance_bound": pl.Float64,
    "draws": pl.Int64,
    "seed": pl.Int64,
}


@analysis
def calibrated_chance(
    study: Study,
    *,
    level: LevelWord = "item",
    statistic: TieStatistic = "acc_eq",
    group_by: GroupBy = "input",
    draws: int = 1000,
    seed: int | None = 0,
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
    criterion: str | None = None,
    system_scores: SystemScores = "mean",
    epsilon: float | dict[str, float] | None = None,
) -> pl.DataFrame:
    """Tie-calibrated pairwise accuracy (or tau_eq) of every automatic measure with every
    criterion, beside its chance baseline: the statistic of a measure with no information about
    the criterion, on the same groups and the criterion's own ties.

    The uninformative measure is the measure's own scores permuted at random within each group
    (an input at item level) over the outputs both rate, so that its ties and the criterion's
    stay as they are (:func:`hanna_stats.kernels.chance_accuracy`). ``chance`` is the mean
    statistic of ``draws`` such measures, each tie-calibrated afresh as the measure was, and
    ``chance_se`` its Monte Carlo standard error: the value ``statistic`` is to be read against
    (tie calibration alone lifts an uninformative measure above its expectation at any one
    epsilon). ``chance_at_epsilon`` is the exact expectation of an uninformative measure at the
    measure's own epsilon, not re-calibrated, and ``chance_bound`` the largest exact expectation
    over all epsilons, a lower bound of the calibrated baseline. With fixed thresholds
    (``epsilon``) nothing is calibrated: ``chance`` is exact, ``chance_se`` 0 and ``draws`` 0.

    Parameters
    ----------
    study : Study
    level, statistic, group_by, include_human, kinds, criterion, system_scores, epsilon
        As :func:`calibrated_accuracy`.
    draws : int
        Uninformative measures simulated per (measure, criterion).
    seed : int or None
        Seed of the permutations (one stream, measure after measure).

    Returns
    -------
    polars.DataFrame
        One row per (measure, criterion): ``measure, against, level, method, group_by,
        statistic, epsilon, chance, chance_se, chance_at_epsilon, chance_bound, draws, seed``.
    """
    level, cube, criteria, measures, fixed = _calibration_cubes(
        study, level, system_scores, include_human, kinds, criterion, epsilon
    )
    res = chance_accuracy(
        cube.values[criteria],
        cube.values[measures],
        level=level,
        statistic=statistic,
        group_by=group_by,
        epsilon=fixed,
        draws=draws,
        seed=seed,
    )
    return _pairs_frame(
        cube,
        measures,
        criteria,
        CALIBRATED_CHANCE_SCHEMA,
        {
            **_calibration_columns(level, statistic, group_by, res),
            "chance": res.chance,
            "chance_se": res.chance_se,
            "chance_at_epsilon": res.expected,
            "chance_bound": res.bound,
            "draws": res.draws,
            "seed": seed if res.draws else None,
        },
    )


def _fixed_epsilons(
    epsilon: float | dict[str, float] | None, names: list[str], n_criteria: int
) -> np.ndarray | None:
    """:func:`~hanna_stats.kernels.tie_calibration`'s ``epsilon`` (criteria x measures) of
    :func:`calibrated_accuracy`'s: None, one number, or one per measure name."""
    if epsilon is None or not isinstance(epsilon, dict):
        return epsilon
    unknown, missing = sorted(set(epsilon) - set(names)), [m for m in names if m not in epsilon]
    if unknown or missing:
        raise ValueError(
            "epsilon by measure must name every measure compared and no other: "
            + "; ".join(
                f"{what} {', '.join(map(repr, which[:5]))}{' ...' if len(which) > 5 else ''}"
                for what, which in (("unknown", unknown), ("missing", missing))
                if which
            )
        )
    return np.broadcast_to(
        np.array([epsilon[m] for m in names], dtype=object), (n_criteria, len(names))
    )


#: Columns of :func:`calibrated_comparison`.
CALIBRATED_COMPARISON_SCHEMA = {
    "criterion": pl.String,
    "level": pl.String,
    "method": pl.String,
    "measure_a": pl.String,
    "measure_b": pl.String,
    "stat_a": pl.Float64,
    "stat_b": pl.Float64,
    "epsilon_a": pl.Float64,
    "epsilon_b": pl.Float64,
    "delta": pl.Float64,
    "pvalue": pl.Float64,
    "permutations": pl.Int64,
    "seed": pl.Int64,
}


@analysis
def calibrated_comparison(
    study: Study,
    *,
    criterion: str,
    level: LevelWord = "item",
    statistic: TieStatistic = "acc_eq",
    permutations: int = 1000,
    seed: int | None = 0,
    group_by: GroupBy = "input",
    swap: SwapUnit = "pairs",
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
    system_scores: SystemScores = "mean",
    executor: Any = None,
) -> pl.DataFrame:
    """Pairwise permutation tests between tie-calibrated measures, for one criterion.

    Each measure is calibrated once against the criterion; a permutation swaps the two
    measures' outcomes (correct or not, at their own epsilons) on each pair of observations
    with probability 1/2 (mt-metrics-eval's ``PairwisePermutationSigDiff``; see
    :func:`hanna_stats.kernels.calibrated_permutation_test`). One draw of swaps from ``seed``
    serves all pairs of measures. ``swap="scores"`` swaps the measures' z-scored scores per
    (input, system) cell instead and re-calibrates both in every permutation (MTME's
    ``PermutationSigDiff`` with ``KendallWithTiesOpt``): two calibrations per permutation and
    pair of measures (on HANNA, minutes for all 72 metrics; use ``kinds``/few permutations).
    ``system_scores="given"`` (system level): the given system-level values (see the module).
    ``executor`` (a Dask ``distributed.Client``, a ``concurrent.futures.Executor`` or a
    :class:`~hanna_stats.kernels.ClusterExecutor`) runs the permutation test in blocks on a
    cluster, with the same result bit for bit (:mod:`hanna_stats.kernels.distributed`); None:
    in this process.

    Returns
    -------
    polars.DataFrame
        One row per ordered pair: ``criterion, level, method, measure_a, measure_b, stat_a,
        stat_b, epsilon_a, epsilon_b, delta, pvalue, permutations, seed``; ``pvalue`` is that of
        H1 "``measure_a`` agrees better with the criterion than ``measure_b``".
    """
    level = check_level(level)
    check_system_scores(system_scores, level)
    check_bool("include_human", include_human)
    kinds = check_kinds(kinds)
    criterion, names, cube = criterion_cube(study, criterion, kinds, include_human, system_scores)
    res = calibrated_permutation_test(
        cube.values[-1:],
        cube.values[:-1],
        level=level,
        statistic=statistic,
        permutations=permutations,
        seed=seed,
        group_by=group_by,
        swap=swap,
        progress=progress,
        executor=executor,
    ).for_human(0)
    return ordered_pairs_frame(
        names,
        CALIBRATED_COMPARISON_SCHEMA,
        constants={
            "criterion": criterion,
            "level": level,
            "method": statistic,
            "permutations": int(permutations),
            "seed": seed,
        },
        per_measure={"stat": res.statistic, "epsilon": res.epsilon},
        per_pair={"delta": res.delta, "pvalue": res.pvalue},
    )


@analysis
def spa(
    study: Study,
    *,
    permutations: int = 1000,
    seed: int | None = 0,
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
    criterion: str | None = None,
    system_scores: SystemScores = "mean",
    executor: Any = None,
) -> pl.DataFrame:
    """Soft pairwise accuracy of every automatic measure with every criterion (or with
    ``criterion``, a name or abbreviation).

    For each pair of systems, the one-sided paired permutation p-value of "system i beats
    system j" over the inputs, from the criterion's and from the measure's scores (the same
    sign flips, drawn once from ``seed``); ``SPA = 1 - mean |p_h - p_m|`` over the pairs
    (Thompson et al. 2024; :func:`hanna_stats.kernels.soft_pairwise_accuracy`). A system
    level statistic: the human-written stories count as a system only with ``include_human``.

    Missing values as mt-metrics-eval: a system without any score of the criterion (one the
    humans did not rate) is left out, and an input drops out of the comparison of two systems,
    on both sides, when the criterion or the measure misses either system's score on it.

    ``system_scores`` is ``"mean"`` only: the p-values permute the items' scores (as
    mt-metrics-eval's ``PairwiseConfidenceError``, which reads segment scores), which given
    system-level values do not have; ``"given"`` is refused (ValueError).

    ``executor`` (a Dask ``distributed.Client``, a ``concurrent.futures.Executor`` or a
    :class:`~hanna_stats.kernels.ClusterExecutor`) runs the measures in blocks on a
    cluster, with the same result bit for bit (:mod:`hanna_stats.kernels.distributed`); None:
    in this process.

    Returns
    -------
    polars.DataFrame
        One row per (measure, criterion): ``measure, against, method, statistic, n_systems,
        n_systems_dropped, n_pairs, n_missing, permutations, seed``: the systems compared and
        those left out, the pairs of systems averaged, and the (input, system) cells of the
        compared systems left out for a missing score.

    Raises
    ------
    ValueError
        When the study has fewer than 2 systems, or for ``system_scores="given"``.
    """
    check("system_scores", system_scores)
    if system_scores == "given":
        raise ValueError(
            "system_scores='given': soft pairwise accuracy permutes the items' scores of each "
            "system (as mt-metrics-eval), which given system-level values do not have; use "
            "system_scores='mean'"
        )
    check_bool("include_human", include_human)
    cube = criteria_cube(study, check_kinds(kinds), include_human)
    if len(cube.systems) < 2:
        raise ValueError(
            f"spa compares systems; the study has {len(cube.systems)} "
            f"({', '.join(cube.systems) or 'none'}): it needs at least 2"
            + ("" if include_human else " (include_human=True adds the human-written outputs)")
        )
    criteria, measures = _split(cube)
    criteria = _select_criterion(study, cube, criteria, criterion)
    res = soft_pairwise_accuracy(
        cube.values[criteria],
        cube.values[measures],
        permutations=permutations,
        seed=seed,
        executor=executor,
    )
    return _pairs_frame(
        cube,
        measures,
        criteria,
        SPA_SCHEMA,
        {
            "method": "spa",
            "statistic": res.statistic,
            "n_systems": res.n_systems,
            "n_systems_dropped": len(cube.systems) - res.n_systems,
            "n_pairs": res.n_pairs,
            "n_missing": res.n_missing,
            "permutations": int(permutations),
            "seed": seed,
        },
    )
