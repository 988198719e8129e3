"""Resampling studies on the store: bootstrap CIs of correlations and PERM-BOTH tests.

Thin layer over the resampling kernels (:func:`hanna_stats.kernels.bootstrap_ci`,
:func:`hanna_stats.kernels.permutation_test_pairs`): it takes the (measure x input x system) cube
of a loaded Study (the human-written stories dropped unless ``include_human``), hands it to the
kernels and returns tidy polars DataFrames. Conventions as
:mod:`hanna_stats.analyses.correlations`: ``level="item"`` (or ``"story"``, ``"summary"``,
``"segment"``) correlates across systems within each input and averages over the inputs whose
correlation is defined; ``level="system"`` correlates the per-system means over inputs.
Statistics are signed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from hanna_stats.analyses._common import (
    Selection,
    analysis,
    correlation_matrix,
    criterion_cube,
    human_mask,
    measure_against,
    ordered_pairs_frame,
)
from hanna_stats.kernels import bootstrap_ci, permutation_test_pairs
from hanna_stats.progress import progress
from hanna_stats.study import Study
from hanna_stats.vocabulary import (
    WORDS,
    Alternative,
    CIMethod,
    ItemSystemWord,
    Kind,
    LevelWord,
    Method,
    Resample,
    Variant,
    check,
    check_bool,
    check_kinds,
    check_level,
    did_you_mean,
)


@analysis
def correlation_ci(
    study: Study,
    *,
    level: ItemSystemWord = "item",
    method: Method = "kendall",
    resample: Resample = "inputs",
    resamples: int = 1000,
    confidence: float = 0.95,
    ci_method: CIMethod = "percentile",
    seed: int | None = 0,
    against: str | list[str] = "criteria",
    include_human: bool = False,
    variant: Variant = "b",
    kinds: tuple[Kind, ...] = ("metric",),
    executor: Any = None,
) -> pl.DataFrame:
    """Bootstrap confidence intervals of every measure's correlation with the criteria.

    Resampling as Deutsch, Dror and Roth (2021): ``"inputs"`` (BOOT-INPUTS) draws the inputs
    (prompts) with replacement, ``"systems"`` (BOOT-SYSTEMS) the systems, ``"both"``
    (BOOT-BOTH) both; one draw from ``seed`` serves every measure (see
    :func:`hanna_stats.kernels.resampling.bootstrap_ci` for the statistic under resampling,
    duplicated systems, and the percentile and BCa intervals). At system level with
    ``resample="inputs"`` the per-system means are recomputed over the drawn inputs.
    Resamples whose statistic is undefined (e.g. too few distinct systems drawn) are counted
    out: ``n_valid`` says how many of ``resamples`` entered the interval.

    Parameters
    ----------
    study : Study
        A loaded study.
    level : {"item", "system"}
        ``"story"``, ``"summary"`` or ``"segment"`` give ``"item"``.
    method : {"pearson", "spearman", "kendall"}
    resample : {"inputs", "systems", "both"}
    resamples : int
    confidence : float
        In (0, 1).
    ci_method : {"percentile", "bca"}
    seed : int or None
    against : "criteria", str or list of str
        ``"criteria"``: every human criterion; otherwise the named measure(s).
    include_human : bool
        Keep the human-written stories as a system (default False, as the paper).
    variant : {"a", "b", "c"}
        Kendall variant (tau-b as the paper).
    kinds : tuple of str
        Kinds of the measures whose correlations are bootstrapped (the 72 metrics by default;
        add ``"llm-judge"`` for the LLM judges).
    executor : distributed.Client, concurrent.futures.Executor or ClusterExecutor, optional
        Run the resampling in blocks on this executor, e.g. a Dask cluster
        (:mod:`hanna_stats.kernels.distributed`), with the same result bit for bit; None (the
        default): in this process.

    Returns
    -------
    polars.DataFrame
        One row per (measure, against) with columns ``measure, against, level, method,
        resample, statistic, ci_low, ci_high, confidence, ci_method, resamples, n_valid,
        seed``.

    Examples
    --------
    >>> correlation_ci(study, level="system", method="pearson", ci_method="bca")  # doctest: +SKIP
    """
    level = check_level(level, WORDS["item_system"])
    check("method", method)
    check("resample", resample)
    check("ci_method", ci_method)
    check_bool("include_human", include_human)
    kinds = check_kinds(kinds)
    targets = [against] if isinstance(against, str) and against != "criteria" else against
    statistic = None
    if targets == "criteria":
        selection = Selection(
            kinds=kinds, include_human=include_human, level=level, method=method, variant=variant
        )
        cube, point = correlation_matrix(study, selection)
        human = human_mask(cube)
        rows, cols = np.flatnonzero(~human), np.flatnonzero(human)
        statistic = point.statistic[np.ix_(rows, cols)]
    else:
        missing = [t for t in targets if t not in study.measures]
        if missing:
            raise ValueError(
                f"against names unknown measures {missing}"
                f"{did_you_mean(missing[0], study.measures)}; the study's measures are listed by "
                "`SELECT measure FROM measure_catalogue`"
            )
        others = [
            m
            for m, k in zip(study.measures, study.kinds, strict=True)
            if k in kinds and m not in targets
        ]
        cube = study.cube(measures=[*others, *targets], include_human=include_human)
        rows = np.arange(len(others))
        cols = np.arange(len(others), len(others) + len(targets))
    res = bootstrap_ci(
        cube.values[rows],
        cube.values[cols],
        level=level,
        method=method,
        variant=variant,
        resample=resample,
        resamples=resamples,
        confidence=confidence,
        ci_method=ci_method,
        seed=seed,
        statistic=statistic,
        progress=progress,
        executor=executor,
    )
    n = len(rows) * len(cols)
    return pl.DataFrame(
        {
            **measure_against(cube, rows, cols),
            "level": [level] * n,
            "method": [method] * n,
            "resample": [resample] * n,
            "statistic": res.statistic.ravel(),
            "ci_low": res.ci_low.ravel(),
            "ci_high": res.ci_high.ravel(),
            "confidence": [float(confidence)] * n,
            "ci_method": [ci_method] * n,
            "resamples": [int(resamples)] * n,
            "n_valid": res.n_valid.ravel(),
            "seed": [seed] * n,
        },
        schema={
            "measure": pl.String,
            "against": pl.String,
            "level": pl.String,
            "method": pl.String,
            "resample": pl.String,
            "statistic": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "confidence": pl.Float64,
            "ci_method": pl.String,
            "resamples": pl.Int64,
            "n_valid": pl.Int64,
            "seed": pl.Int64,
        },
    )


#: Columns of :func:`permutation_test`.
PERMUTATION_SCHEMA = {
    "criterion": pl.String,
    "level": pl.String,
    "method": pl.String,
    "unit": pl.String,
    "measure_a": pl.String,
    "measure_b": pl.String,
    "r_a": pl.Float64,
    "r_b": pl.Float64,
    "delta": pl.Float64,
    "pvalue": pl.Float64,
    "permutations": pl.Int64,
    "seed": pl.Int64,
    "n_drawn": pl.Int64,
    "n_valid": pl.Int64,
    "n_missing": pl.Int64,
    "n_inputs_dropped": pl.Int64,
    "n_systems_dropped": pl.Int64,
}


@analysis
def permutation_test(
    study: Study,
    *,
    criterion: str,
    level: LevelWord = "item",
    method: Method = "kendall",
    permutations: int = 1000,
    seed: int | None = 0,
    alternative: Alternative = "greater",
    include_human: bool = False,
    variant: Variant = "b",
    kinds: tuple[Kind, ...] = ("metric",),
    unit: Resample = "both",
    stop_alpha: float | None = None,
    executor: Any = None,
) -> pl.DataFrame:
    """Permutation tests of the difference between two measures' correlations with a criterion.

    For every ordered pair (a, b) of measures: ``delta = r_a - r_b`` and its permutation
    p-value (Deutsch, Dror and Roth 2021; mt-metrics-eval's ``PermutationSigDiff``): both
    measures are z-scored over their cells, the two scores are swapped with probability 1/2 per
    cell (``unit="both"``, PERM-BOTH), per system across all its inputs (``"systems"``,
    PERM-SYS) or per input across all systems (``"inputs"``, PERM-INPUT), the correlations are
    recomputed at ``level``; ``"greater"`` (default, as every comparison of two measures) tests
    ``r_a > r_b``, ``"two-sided"`` compares ``|delta|``. One draw of swaps from ``seed`` serves
    all pairs. With ``stop_alpha`` a pair stops drawing once its decision at that level is
    settled (Clopper-Pearson rule; the ``n_drawn`` column says how many permutations it used).
    See :func:`hanna_stats.kernels.permutation.permutation_test_pairs`.

    Parameters
    ----------
    study : Study
    criterion : str
        The human criterion, by name or abbreviation (``"Empathy"`` or ``"EM"``).
    level : {"item", "system", "global"}
        ``"story"``, ``"summary"`` or ``"segment"`` give ``"item"`` (the default, as every
        analysis). ``"system"`` is fast for all pairs; ``"item"`` with Kendall tau-a/b takes the
        kernel's polynomial fast path (seconds for all HANNA pairs); with Pearson, Spearman or
        tau-c it recomputes every per-input correlation of both measures (minutes for all HANNA
        pairs).
    method : {"pearson", "spearman", "kendall"}
    permutations : int
    seed : int or None
    alternative : {"greater", "two-sided", "less"}
    include_human : bool
    variant : {"a", "b", "c"}
    kinds : tuple of str
        Kinds of the measures compared (the metrics by default).
    unit : {"both", "systems", "inputs"}
        Resampling unit of the swaps (PERM-BOTH, PERM-SYS, PERM-INPUT).
    stop_alpha : float in (0, 1), optional
        Early stopping at this significance level (None: all permutations).
    executor : distributed.Client, concurrent.futures.Executor or ClusterExecutor, optional
        Run the resampling in blocks on this executor, e.g. a Dask cluster
        (:mod:`hanna_stats.kernels.distributed`), with the same result bit for bit; None (the
        default): in this process.

    Returns
    -------
    polars.DataFrame
        One row per ordered pair with columns ``criterion, level, method, unit, measure_a,
        measure_b, r_a, r_b, delta, pvalue, permutations, seed, n_drawn, n_valid, n_missing,
        n_inputs_dropped, n_systems_dropped`` (``n_drawn``: the permutations drawn for the pair,
        fewer than ``permutations`` when early stopping settled it; ``n_valid``: those whose
        statistic was defined, the p-value's denominator; ``n_missing``: cells with a criterion
        value left out because a or b has none there, as mt-metrics-eval drops an item from
        both sides of a comparison; ``n_inputs_dropped``, ``n_systems_dropped``: inputs and
        systems left with no cell).
    """
    level = check_level(level)
    check("method", method)
    check("alternative", alternative)
    check("unit", unit, WORDS["resample"])
    check_bool("include_human", include_human)
    kinds = check_kinds(kinds)
    criterion, names, cube = criterion_cube(study, criterion, kinds, include_human)
    res = permutation_test_pairs(
        cube.values[:-1],
        cube.values[-1],
        level=level,
        method=method,
        variant=variant,
        permutations=permutations,
        alternative=alternative,
        seed=seed,
        unit=unit,
        stop_alpha=stop_alpha,
        progress=progress,
        executor=executor,
    )
    return ordered_pairs_frame(
        names,
        PERMUTATION_SCHEMA,
        constants={
            "criterion": criterion,
            "level": level,
            "method": method,
            "unit": unit,
            "permutations": int(permutations),
            "seed": seed,
        },
        per_measure={"r": res.statistic},
        per_pair={
            "delta": res.delta,
            "pvalue": res.pvalue,
            "n_drawn": res.n_drawn,
            "n_valid": res.n_valid,
            "n_missing": res.n_missing,
            "n_inputs_dropped": res.n_inputs_dropped,
            "n_systems_dropped": res.n_systems_dropped,
        },
    )
