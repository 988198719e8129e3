"""Correlations between measures (metrics, LLM judges) and human criteria, from the store.

The analysis layer of the paper's Sec. 5.1-5.2 (Figs. 3-6, 14-25; Tabs. 5, 8, 9): it reads the
(measure x input x system) cube from the store and hands it to the Numba engine
(:func:`hanna_stats.kernels.level_correlation`), returning tidy polars DataFrames.

Conventions (Chhun et al., 2022; see ``docs/conventions.md``):

* ``level="item"`` (HANNA's story level; ``"story"``, ``"summary"`` and ``"segment"`` name it
  too): for each input (prompt), correlate two measures across the systems, then
  average over inputs. Inputs whose correlation is undefined (a constant vector) are skipped under
  ``nan_policy="omit"`` and the mean divides by the number of inputs used, reported as ``n_groups``.
* ``level="system"``: correlate the per-system means over inputs, or, with
  ``system_scores="given"``, the system-level values the study gives (WMT's ``.sys.score``
  files: corpus BLEU, z-normalised DA, ...), which are in general not those means; a measure
  without given values is left out, as mt-metrics-eval leaves out metrics without system-level
  scores (``hanna_stats.analyses.given_left_out`` names them; the command line prints a note on
  stderr).
* ``level="global"``: pool every item (input x system) into one correlation.
* The human-written stories (system flagged ``is_human``) are excluded unless
  ``include_human=True``, as the paper removes them as outliers.
* Kendall's tau is tau-b unless ``variant`` says otherwise. Statistics are signed; the paper's
  tables show absolute values, which is the caller's choice to take.
* p-values (``pvalue_method``): at system and global level the statistic is one correlation of
  ``n`` pairs (system means, or pooled items), and its two-sided p-value is that of
  :func:`hanna_stats.kernels.correlation`, as ``scipy.stats.kendalltau`` / ``spearmanr`` /
  ``pearsonr``. An item-level statistic is a mean of per-input correlations and has none.
"""

from __future__ import annotations

import inspect

import numpy as np
import polars as pl

from hanna_stats.analyses._common import (
    Selection,
    analysis,
    check_system_scores,
    correlation_matrix,
    human_mask,
    measure_against,
)
from hanna_stats.kernels import (
    UndefinedCorrelationError,
    check_pvalue_method,
    correlation,
    level_correlation,
)
from hanna_stats.kernels.fisher import fisher_interval
from hanna_stats.kernels.grouped import at_level
from hanna_stats.study import Cube, Study
from hanna_stats.vocabulary import (
    WORDS,
    Against,
    Coefficient,
    GroupBy,
    Kind,
    LevelWord,
    NanPolicy,
    PvalueMethod,
    SystemScores,
    Variant,
    Weighting,
    check,
    check_kinds,
    check_level,
)

SCHEMA = {
    "measure": pl.String,
    "against": pl.String,
    "level": pl.String,
    "method": pl.String,
    "variant": pl.String,
    "statistic": pl.Float64,
    "n_groups": pl.Int64,
    "n_skipped": pl.Int64,
}


@analysis
def correlate(
    study: Study,
    *,
    level: LevelWord = "item",
    method: Coefficient = "kendall",
    against: Against = "criteria",
    variant: Variant = "b",
    nan_policy: NanPolicy = "omit",
    include_human: bool = False,
    kinds: tuple[Kind, ...] = ("metric",),
    pvalue_method: PvalueMethod | None = None,
    group_by: GroupBy = "input",
    weighting: Weighting = "uniform",
    confidence: float | None = None,
    system_scores: SystemScores = "mean",
) -> pl.DataFrame:
    """Correlate measures with human criteria or with each other, at one aggregation level.

    Parameters
    ----------
    study : Study
        A loaded study (:func:`hanna_stats.open_study`, :func:`hanna_stats.store.load_study`).
    level : {"item", "system", "global"}
        Aggregation level (see the module docstring); ``"story"``, ``"summary"`` or
        ``"segment"`` give ``"item"``.
    method : {"pearson", "spearman", "kendall", "acc_eq"}
        Correlation coefficient. Spearman uses average ranks for ties. ``"acc_eq"`` is the
        pairwise accuracy with ties of Deutsch, Foster and Freitag (2023): the share of pairs
        (of systems, or of items at global level) that both measures order the same way or
        both tie, from the same pair counts as Kendall's tau
        (:func:`hanna_stats.kernels.pairwise_accuracy`).
    against : {"criteria", "metrics", "inter-criteria", "all"}
        ``"criteria"``: every automatic measure (kind metric or llm-judge) against every human
        criterion (Figs. 3-4, 14-19); ``"metrics"``: every automatic measure against every
        automatic measure (Figs. 5-6, 20-25); ``"inter-criteria"``: the human criteria against
        each other (Figs. 1-2, 10-13); ``"all"``: every measure against every measure.
    variant : {"a", "b", "c"}
        Kendall variant (ignored for the other methods): tau-b by default, as the paper.
    nan_policy : {"omit", "propagate", "raise"}
        What undefined correlations do: ``"omit"`` drops missing observations pairwise and skips
        inputs whose correlation is undefined (the paper's convention); ``"propagate"`` makes
        the result NaN; ``"raise"`` raises ``ValueError`` naming the measures and the input.
    include_human : bool
        Keep the human-written stories as a system (default False, as the paper).
    kinds : tuple of str
        Kinds of automatic measures included: ``"metric"`` (default: the paper's 72 metrics)
        and/or ``"llm-judge"``.
    pvalue_method : {None, "auto", "exact", "asymptotic"}
        None (default): no p-values. Otherwise, at system or global level, add the two-sided
        p-value of each correlation and its sample size: the ``pvalue_method`` of
        :func:`hanna_stats.kernels.correlation`, equal to ``scipy.stats.kendalltau(x, y,
        method=pvalue_method)`` (any ``variant``: the p-value depends on the pair counts only),
        ``scipy.stats.spearmanr`` (``"auto"``, ``"asymptotic"``; ``"exact"``: the permutation
        distribution, untied samples of at most 14 pairs) or ``scipy.stats.pearsonr``
        (``"auto"``, ``"exact"``; there is no asymptotic one) on the same vectors: the
        per-system means (missing items skipped under ``nan_policy="omit"``) or the pooled
        items, pairs with a missing value dropped under ``"omit"``. ``"auto"`` is scipy's
        default: for Kendall, exact wherever neither vector has ties and ``n <= 33``.
    group_by : {"input", "system"}
        The groups of the item level (mt-metrics-eval's ``average_by``): ``"input"`` (default,
        "by item") correlates across the systems within each input, ``"system"`` ("by
        system") across the inputs within each system; then the groups are averaged.
    weighting : {"uniform", "count"}
        Item level: average the groups alike (default) or weight each group's correlation by
        its number of observations present in both measures (mt-metrics-eval's
        ``macro=False``).
    confidence : float, optional
        Pearson at system or global level: add the Fisher z interval of each correlation at
        this level (:func:`hanna_stats.kernels.fisher_interval`, n the pairs present, as
        ``scipy.stats.pearsonr(...).confidence_interval``), columns ``ci_low, ci_high``.
    system_scores : {"mean", "given"}
        System level: a system's value is the mean of its items (default) or the value the
        study gives (``Study.system_values``, e.g. WMT's ``.sys.score`` files, as
        mt-metrics-eval's system-level correlations), for the criteria and the automatic
        measures alike; p-values and intervals are then those of the given values. ``"given"``
        needs ``level="system"``; a measure without any given value (WMT: no ``.sys.score``
        file) is left out of the result, as mt-metrics-eval leaves it out at system level
        (:func:`hanna_stats.analyses.given_left_out` names those left out).

    Returns
    -------
    polars.DataFrame
        One row per (measure, against) pair with columns ``measure, against, level, method,
        variant, statistic, n, n_groups, n_skipped``: ``n`` is the number of pairs the
        correlation is computed on, those with both values present (systems at system level,
        items at global level; null at item level, whose statistic is a mean of one
        correlation per group), ``n_groups`` the number of groups whose correlation entered the
        mean (1 at system and global level when defined) and ``n_skipped`` those skipped as
        undefined. With ``pvalue_method``, ``pvalue`` follows ``statistic`` (computed on the
        ``n`` pairs; NaN where the statistic is: a constant vector, fewer than 2 pairs). With
        ``confidence``, ``ci_low`` and ``ci_high`` are appended.

    Raises
    ------
    ValueError
        For a bad option; with ``nan_policy="raise"``, for an undefined correlation; with
        ``pvalue_method``, at item level or for ``method="acc_eq"`` (no p-value), for
        ``"asymptotic"`` with Pearson, and, as scipy, for ``"exact"`` on a pair with tied values
        (Kendall, Spearman) or more than 14 pairs (Spearman), naming the pair; with
        ``system_scores="given"``, at another level than system, or when no automatic measure
        has a given value.

    Examples
    --------
    >>> from hanna_stats import open_study                         # doctest: +SKIP
    >>> study = open_study("path/to/hanna")                 # doctest: +SKIP
    >>> correlate(study, level="system", method="pearson")         # doctest: +SKIP
    >>> correlate(study, level="system", pvalue_method="auto")     # doctest: +SKIP
    """
    level = check_level(level)
    check("method", method, WORDS["coefficient"])
    check("against", against)
    check("variant", variant)
    check("nan_policy", nan_policy)
    kinds = check_kinds(kinds)
    check_system_scores(system_scores, level)
    if pvalue_method is not None:
        _check_pvalues_defined(level, method, pvalue_method)
    if confidence is not None and (method != "pearson" or level == "item"):
        raise ValueError(
            "confidence: Fisher z intervals are for Pearson correlations at system or global "
            f"level; got method={method!r}, level={level!r} (see `ci` for bootstrap intervals)"
        )
    if level != "item" and (group_by, weighting) != ("input", "uniform"):
        raise ValueError(
            f"group_by and weighting apply to the item level; got level={level!r} (system and "
            "global level correlate one group)"
        )
    return correlate_checked(
        study,
        **{name: value for name, value in locals().items() if name in _CORRELATE_OPTIONS},
    )


#: :func:`correlate`'s options and their defaults, which :func:`correlate_checked` takes.
_CORRELATE_OPTIONS = {
    name: p.default
    for name, p in inspect.signature(correlate.__wrapped__).parameters.items()
    if p.kind is p.KEYWORD_ONLY
}


def correlate_checked(study: Study, **options) -> pl.DataFrame:
    """:func:`correlate` on checked options (``level`` canonical, ``kinds`` a tuple; those not
    given take :func:`correlate`'s defaults): the analyses that correlate on the way (Borda
    counts, the judges' best metrics) call it after checking their own options once."""
    unknown = set(options) - set(_CORRELATE_OPTIONS)
    if unknown:
        raise TypeError(f"correlate_checked got unknown options {sorted(unknown)}")
    o = _CORRELATE_OPTIONS | options
    level, method, against, variant, nan_policy = (
        o[k] for k in ("level", "method", "against", "variant", "nan_policy")
    )
    group_by, pvalue_method, confidence = o["group_by"], o["pvalue_method"], o["confidence"]
    selection = Selection(
        kinds=o["kinds"],
        include_human=o["include_human"],
        level=level,
        method=method,
        variant=variant,
        # "raise" reads the propagated matrix and names the first undefined pair asked for.
        nan_policy="propagate" if nan_policy == "raise" else nan_policy,
        group_by=group_by,
        weighting=o["weighting"],
        system_scores=o["system_scores"],
    )
    # The metrics alone need no human criteria; the criteria alone need no automatic measure's
    # given system-level values (item means: the matrix shared with the other analyses).
    cube, res = correlation_matrix(
        study,
        selection,
        criteria=against != "metrics",
        automatic=against != "inter-criteria" or selection.system_scores == "mean",
    )
    human = human_mask(cube)
    rows, cols = {
        "criteria": (~human, human),
        "metrics": (~human, ~human),
        "inter-criteria": (human, human),
        "all": (np.ones_like(human), np.ones_like(human)),
    }[against]
    row_idx, col_idx = np.flatnonzero(rows), np.flatnonzero(cols)
    omit = nan_policy == "omit"
    block = [r[np.ix_(row_idx, col_idx)] for r in res]
    if nan_policy == "raise" and np.isnan(block[0]).any():
        i, j = np.argwhere(np.isnan(block[0]))[0]
        _raise_undefined(cube, row_idx[i], col_idx[j], level, method, variant, group_by)
    frame = correlation_frame(
        cube, row_idx, col_idx, block, level=level, method=method, variant=variant
    )
    # n: the pairs of one system- or global-level correlation; none for an item-level mean
    # over groups (n_groups and n_skipped count those)
    if level == "item":
        values, n = None, None
    else:
        values, n = _level_vectors(cube, row_idx, col_idx, level, omit)
    after = list(SCHEMA).index("statistic") + 1
    sizes = [None] * frame.height if n is None else n.ravel()
    frame = frame.insert_column(after, pl.Series("n", sizes, dtype=pl.Int64))
    if pvalue_method is not None:
        pvalue = _pvalues(
            cube, values, n, row_idx, col_idx, level, method, variant, nan_policy, pvalue_method
        )
        frame = frame.insert_column(after, pl.Series("pvalue", pvalue.ravel(), dtype=pl.Float64))
    if confidence is not None:
        low, high = fisher_interval(block[0], n, confidence=confidence)
        frame = frame.with_columns(ci_low=low.ravel(), ci_high=high.ravel())
    return frame


def _level_vectors(
    cube: Cube, row_idx: np.ndarray, col_idx: np.ndarray, level: str, omit: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The (M, n) vectors a system- or global-level correlation takes (per-system means, NaN
    skipped when ``omit``, or the pooled items), and the (rows x cols) numbers of pairs with
    both values present."""
    values = at_level(cube.values, level, omit)[:, 0, :]
    present = (~np.isnan(values)).astype(np.float64)  # counts exact to 2**53, by BLAS
    return values, (present[row_idx] @ present[col_idx].T).astype(np.int64)


def _check_pvalues_defined(level: str, method: str, pvalue_method: str) -> None:
    """Raise ValueError unless correlations of ``level`` and ``method`` have the p-value
    ``pvalue_method``."""
    check("pvalue_method", pvalue_method)
    if level == "item":
        raise ValueError(
            "pvalue_method: an item-level correlation is a mean of per-input correlations and "
            "has no p-value of its own; use level='system' or 'global' (one correlation of the "
            "system means or of the pooled items), or the bootstrap intervals (`ci`, "
            "correlation_ci) or permutation tests (`permutation`, permutation_test) at item "
            "level"
        )
    if method == "acc_eq":
        raise ValueError(
            "pvalue_method: pairwise accuracy (method='acc_eq') has no p-value here; use "
            "method='pearson', 'spearman' or 'kendall' for p-values"
        )
    check_pvalue_method(method, pvalue_method)


def _pvalues(
    cube: Cube,
    values: np.ndarray,
    n: np.ndarray,
    row_idx: np.ndarray,
    col_idx: np.ndarray,
    level: str,
    method: str,
    variant: str,
    nan_policy: str,
    pvalue_method: str,
) -> np.ndarray:
    """Two-sided p-values of the (rows x cols) correlations at system or global level, by
    :func:`hanna_stats.kernels.correlation` on the vectors the level correlates and their
    numbers of pairs (:func:`_level_vectors`).

    Each pair is one kernel call (the statistic is recomputed: about 0.2 s for 1,272 pairs of
    960 items). A square block (the same measures on both sides) computes each unordered pair
    once: the p-value is symmetric in x and y.
    """
    omit = nan_policy == "omit"
    options = {
        "method": method,
        "variant": variant,
        "nan_policy": "omit" if omit else "propagate",  # "raise" has checked the statistics
        "pvalue_method": pvalue_method,
    }
    square = np.array_equal(row_idx, col_idx)
    pvalue = np.empty(n.shape)
    for r, i in enumerate(row_idx):
        for c, j in enumerate(col_idx):
            if square and c < r:
                pvalue[r, c] = pvalue[c, r]
                continue
            try:
                pvalue[r, c] = correlation(values[i], values[j], **options).pvalue
            except ValueError as err:
                raise ValueError(
                    f"p-value of the {method} correlation of {cube.measures[i]!r} (x) with "
                    f"{cube.measures[j]!r} (y) at {level} level, n={n[r, c]}: {err}"
                ) from None
    return pvalue


def _raise_undefined(
    cube: Cube, i: int, j: int, level: str, method: str, variant: str, group_by: str = "input"
) -> None:
    """Raise ValueError naming the measures (and input or system) of an undefined correlation."""
    where = ""
    if method != "acc_eq":
        try:
            level_correlation(
                cube.values[[i]],
                cube.values[[j]],
                level=level,
                method=method,
                variant=variant,
                nan_policy="raise",
                group_by=group_by,
            )
        except UndefinedCorrelationError as err:
            names = cube.inputs if group_by == "input" else cube.systems
            where = f" on {group_by} {names[err.group]!r}" if level == "item" else ""
    raise ValueError(
        f"{method} correlation of {cube.measures[i]!r} with {cube.measures[j]!r} is undefined"
        f"{where} (constant or missing values) and nan_policy='raise'; use nan_policy='omit' to "
        "skip such groups or 'propagate' to report NaN"
    )


def correlation_frame(
    cube: Cube,
    row_idx: np.ndarray,
    col_idx: np.ndarray,
    result,
    *,
    level: str,
    method: str,
    variant: str = "b",
) -> pl.DataFrame:
    """The tidy frame of :func:`correlate` from a result's (rows x cols) block.

    ``result`` holds ``statistic, n_groups, n_skipped`` arrays of shape
    ``(len(row_idx), len(col_idx))``, correlating measures ``row_idx`` with ``col_idx`` of
    ``cube``.
    """
    statistic, n_groups, n_skipped = result
    n_r, n_c = len(row_idx), len(col_idx)
    return pl.DataFrame(
        {
            **measure_against(cube, row_idx, col_idx),
            "level": [level] * (n_r * n_c),
            "method": [method] * (n_r * n_c),
            "variant": [variant if method == "kendall" else None] * (n_r * n_c),
            "statistic": np.asarray(statistic).ravel(),
            "n_groups": np.asarray(n_groups).ravel(),
            "n_skipped": np.asarray(n_skipped).ravel(),
        },
        schema=SCHEMA,
    )
