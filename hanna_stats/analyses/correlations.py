"""Correlations between measures (metrics, LLM judges) and human criteria, from the store.

The analysis layer of the paper's Sec. 5.1-5.2 (Figs. 3-6, 14-25; Tabs. 5, 8, 9): it reads the
(measure x input x system) cube from the store and hands it to the Numba engine
(:func:`hanna_stats.kernels.level_correlation`), returning tidy polars DataFrames.

- :func:`correlate`: every measure against the criteria, the metrics or each other;
- :func:`judge_criteria`: the LLM judges' criterion-matched view (Chhun, Suchanek & Clavel, TACL
  2024): each judge's rating of a criterion under each prompt variant correlated with the human
  criterion of the same name, with the human rater row beside it and each column's mean |r|;
- :func:`rater_panel`: how well one human rater agrees with the panel: each rater's ratings of a
  criterion correlated with the mean of all raters (``reference="panel"``, the TACL study's
  "Human" row, where the mean includes the rater) or of the other raters (``"others"``,
  leave-one-out), per rater and averaged over raters.

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

import numpy as np
import polars as pl

from hanna_stats.analyses._common import (
    Selection,
    analysis,
    check_system_scores,
    correlation_matrix,
    criteria_cube,
    human_mask,
    measure_against,
)
from hanna_stats.kernels import (
    UndefinedCorrelationError,
    check_confidence,
    check_pvalue_method,
    correlation,
    level_correlation,
)
from hanna_stats.kernels.fisher import fisher_interval
from hanna_stats.kernels.levels import at_level
from hanna_stats.study import Cube, Study
from hanna_stats.vocabulary import (
    WORDS,
    Against,
    Coefficient,
    GroupBy,
    Kind,
    Level,
    LevelWord,
    Method,
    NanPolicy,
    PvalueMethod,
    Reference,
    SystemScores,
    Variant,
    Weighting,
    check,
    check_bool,
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
        study gives (``Study.given_system_scores``, e.g. WMT's ``.sys.score`` files, as
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
    level, kinds = _correlate_iv(
        level=level,
        method=method,
        against=against,
        variant=variant,
        nan_policy=nan_policy,
        include_human=include_human,
        kinds=kinds,
        pvalue_method=pvalue_method,
        group_by=group_by,
        weighting=weighting,
        confidence=confidence,
        system_scores=system_scores,
    )
    selection = Selection(
        kinds=kinds,
        include_human=include_human,
        level=level,
        method=method,
        variant=variant,
        # "raise" reads the propagated matrix and names the first undefined pair asked for.
        nan_policy="propagate" if nan_policy == "raise" else nan_policy,
        group_by=group_by,
        weighting=weighting,
        system_scores=system_scores,
    )
    return _correlation_table(
        study,
        selection,
        against=against,
        nan_policy=nan_policy,
        pvalue_method=pvalue_method,
        confidence=confidence,
    )


def _correlate_iv(
    *,
    level: object,
    method: object,
    against: object,
    variant: object,
    nan_policy: object,
    include_human: object,
    kinds: object,
    pvalue_method: object,
    group_by: object,
    weighting: object,
    confidence: object,
    system_scores: object,
) -> tuple[Level, tuple[Kind, ...]]:
    """:func:`correlate`'s options checked once, before any work: the canonical ``level`` and
    ``kinds`` as a tuple; ValueError naming the first bad option."""
    level = check_level(level)
    check("method", method, WORDS["coefficient"])
    for name, value in (
        ("against", against),
        ("variant", variant),
        ("nan_policy", nan_policy),
        ("group_by", group_by),
        ("weighting", weighting),
    ):
        check(name, value)
    check_bool("include_human", include_human)
    kinds = check_kinds(kinds)
    check_system_scores(system_scores, level)
    if pvalue_method is not None:
        _check_pvalues_defined(level, method, pvalue_method)
    if confidence is not None:
        check_confidence(confidence)
        if method != "pearson" or level == "item":
            raise ValueError(
                "confidence: Fisher z intervals are for Pearson correlations at system or global "
                f"level; got method={method!r}, level={level!r} (see `ci` for bootstrap "
                "intervals)"
            )
    if level != "item" and (group_by, weighting) != ("input", "uniform"):
        raise ValueError(
            f"group_by and weighting apply to the item level; got level={level!r} (system and "
            "global level correlate one group)"
        )
    return level, kinds  # type: ignore[return-value]


def _correlation_table(
    study: Study,
    selection: Selection,
    *,
    against: Against,
    nan_policy: NanPolicy,
    pvalue_method: PvalueMethod | None,
    confidence: float | None,
) -> pl.DataFrame:
    """:func:`correlate`'s table of ``selection`` (checked options; ``nan_policy`` as the user
    gave it, ``selection.nan_policy`` the one the matrix is computed with)."""
    level, method, variant = selection.level, selection.method, selection.variant
    group_by = selection.group_by
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
    ``pvalue_method`` (the word itself by :func:`~hanna_stats.kernels.check_pvalue_method`,
    last)."""
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


#: The row label of the human raters in :func:`judge_criteria`.
HUMAN_RATER = "Human rater"
#: The criterion label of each column's mean |r| in :func:`judge_criteria`.
MEAN_ABS = "mean |r|"

JUDGE_CRITERIA_SCHEMA = {
    "rater": pl.String,
    "prompt": pl.String,
    "criterion": pl.String,
    "level": pl.String,
    "method": pl.String,
    "statistic": pl.Float64,
}


def _rater_cube(study: Study, include_human: bool) -> tuple[tuple[str, ...], np.ndarray]:
    """The criteria and their ratings as (R raters, C criteria, G inputs, S systems), NaN where
    a rater did not rate; rater ``r`` is the ``r``-th rating of each item (``rater_column``)."""
    ratings = study.ratings.filter(pl.col("kind") == "human").rename({"measure": "criterion"})
    criteria = tuple(c for c in study.criteria if c in set(ratings["criterion"].to_list()))
    if not criteria:
        raise ValueError(
            "the store holds no rater-level ratings of human criteria: ingest them (HANNA's "
            "LLM-judge file or raw annotations; a tidy file with a `rater` column)"
        )
    keep = np.ones(len(study.systems), bool) if include_human else ~study.is_human
    systems = [s for s, k in zip(study.systems, keep, strict=True) if k]
    index = {
        "criterion": {c: i for i, c in enumerate(criteria)},
        "input": {g: i for i, g in enumerate(study.inputs)},
        "system": {s: i for i, s in enumerate(systems)},
    }
    ratings = ratings.filter(pl.col("system").is_in(systems) & pl.col("criterion").is_in(criteria))
    codes = [ratings[c].replace_strict(index[c], return_dtype=pl.Int64).to_numpy() for c in index]
    raters = ratings["rater_column"].to_numpy().astype(np.intp)
    cube = np.full((raters.max() + 1, len(criteria), len(study.inputs), len(systems)), np.nan)
    cube[(raters, *codes)] = ratings["score"].to_numpy()
    return criteria, cube


def _rater_iv(
    level: object, method: object, variant: object, reference: object, include_human: object
) -> Level:
    """The options of :func:`rater_panel` and :func:`judge_criteria` checked once: the
    canonical ``level``; ValueError naming the first bad option."""
    level = check_level(level)
    check("method", method)
    check("variant", variant)
    check("reference", reference)
    check_bool("include_human", include_human)
    return level  # type: ignore[return-value]


def _rater_statistics(
    study: Study,
    level: Level,
    method: Method,
    variant: Variant,
    reference: Reference,
    include_human: bool,
) -> tuple[tuple[str, ...], np.ndarray]:
    """(criteria, (R, C) correlations of each rater with the reference panel)."""
    key = ("rater_panel", level, method, variant, reference, include_human)

    def compute():
        criteria, cube = _rater_cube(study, include_human)
        counts = np.sum(~np.isnan(cube), axis=0)
        totals = np.nansum(cube, axis=0)
        out = np.full(cube.shape[:2], np.nan)
        for r, own in enumerate(cube):
            with np.errstate(invalid="ignore", divide="ignore"):
                if reference == "panel":
                    panel = np.where(counts > 0, totals / counts, np.nan)
                else:
                    rated = ~np.isnan(own)
                    rest = counts - rated
                    panel = np.where(rest > 0, (totals - np.nan_to_num(own)) / rest, np.nan)
            result = level_correlation(own, panel, level=level, method=method, variant=variant)
            out[r] = np.diagonal(result.statistic)  # criterion c against the panel's c
        return criteria, out

    return study.memo(key, compute)


@analysis
def rater_panel(
    study: Study,
    *,
    level: LevelWord = "item",
    method: Method = "kendall",
    variant: Variant = "b",
    reference: Reference = "panel",
    include_human: bool = False,
) -> pl.DataFrame:
    """Each human rater's agreement with the panel, per criterion, and its mean over raters.

    For rater ``k`` (the ``k``-th rating of each item) and criterion ``c``, the correlation at
    ``level`` between ``k``'s ratings and the panel's: the mean of all ratings of the item
    (``reference="panel"``, which includes ``k``'s own: the reference row of Chhun et al. 2024)
    or of the others (``"others"``, leave-one-out: ``(sum - x_k) / (n - 1)``). Items ``k`` did
    not rate are left out pairwise. ``rater = "mean"`` rows average the raters' correlations.

    Parameters
    ----------
    study : Study
        A study with rater-level ratings of its criteria.
    level : {"item", "system", "global"}
        ``"story"``, ``"summary"`` or ``"segment"`` give ``"item"``.
        Per input then averaged; over the per-system means; all items pooled.
    method : {"pearson", "spearman", "kendall"}
    variant : {"a", "b", "c"}
        Kendall's variant.
    reference : {"panel", "others"}
    include_human : bool
        Keep the human-written system (HANNA: ``Human``; the TACL study leaves it out).

    Returns
    -------
    polars.DataFrame
        ``rater`` ("1", "2", ... or "mean"), ``criterion``, ``level``, ``method``,
        ``reference``, ``statistic``; by criterion (catalogue order), then rater.

    Raises
    ------
    ValueError
        For a bad option, or a study without rater-level ratings.

    References
    ----------
    C. Chhun, F. M. Suchanek, C. Clavel. Do Language Models Enjoy Their Own Stories? Prompting
    Large Language Models for Automatic Story Evaluation. TACL 12, 2024 (Sec. 4, Fig. 2).
    """
    level = _rater_iv(level, method, variant, reference, include_human)
    return _rater_panel(study, level, method, variant, reference, include_human)


def _rater_panel(
    study: Study,
    level: Level,
    method: Method,
    variant: Variant,
    reference: Reference,
    include_human: bool,
) -> pl.DataFrame:
    """:func:`rater_panel` on checked options."""
    criteria, stats = _rater_statistics(study, level, method, variant, reference, include_human)
    raters = [str(r + 1) for r in range(stats.shape[0])]
    with np.errstate(invalid="ignore"):
        mean = np.nanmean(stats, axis=0)
    rows = [
        (rater, criterion, value)
        for c, criterion in enumerate(criteria)
        for rater, value in [*zip(raters, stats[:, c], strict=True), ("mean", mean[c])]
    ]
    return pl.DataFrame(
        {
            "rater": [r[0] for r in rows],
            "criterion": [r[1] for r in rows],
            "level": level,
            "method": method,
            "reference": reference,
            "statistic": [float(r[2]) for r in rows],
        },
    ).with_columns(pl.col("statistic").cast(pl.Float64))


@analysis
def judge_criteria(
    study: Study,
    *,
    level: LevelWord = "item",
    method: Method = "kendall",
    variant: Variant = "b",
    reference: Reference = "panel",
    include_human: bool = False,
) -> pl.DataFrame:
    """The criterion-matched view of the LLM judges (Chhun et al. 2024, Figs. 2-3).

    For every LLM-judge measure that rates a human criterion (catalogue ``criterion``), the
    correlation at ``level`` of the judge's values with that criterion's values (the mean of its
    raters); beside them, when the study has rater-level ratings, the human rater row
    (:func:`rater_panel`, averaged over raters) and,
    for each judge x prompt column and the human rater row, ``criterion = "mean |r|"``: the mean
    of the column's absolute correlations over the criteria (the TACL study's "Avg" row). Missing
    values are left out pairwise (``nan_policy="omit"``).

    Parameters
    ----------
    study : Study
    level : {"item", "system", "global"}
        ``"story"``, ``"summary"`` or ``"segment"`` give ``"item"``.
    method : {"pearson", "spearman", "kendall"}
    variant : {"a", "b", "c"}
    reference : {"panel", "others"}
        Panel of the human rater row (see :func:`rater_panel`).
    include_human : bool
        Keep the human-written system (the TACL study leaves it out).

    Returns
    -------
    polars.DataFrame
        ``rater`` (the judge, or ``"Human rater"``), ``prompt`` (the judge's prompt variant;
        null for the human row), ``criterion``, ``level``, ``method``, ``statistic``; the human
        rater first, then the judges in catalogue order, prompts in order, criteria in catalogue
        order with the mean |r| last.

    Raises
    ------
    ValueError
        For a bad option, or a study without LLM-judge measures of its criteria.
    """
    level = _rater_iv(level, method, variant, reference, include_human)
    judges = study.catalogue.filter(
        (pl.col("kind") == "llm-judge") & pl.col("criterion").is_in(list(study.criteria))
    )
    if judges.is_empty():
        raise ValueError(
            "the store holds no LLM-judge measures of its human criteria: ingest them (HANNA's "
            "hanna_metric_scores_llm.csv)"
        )
    matched = judge_correlations(study, level, method, variant, include_human)
    criteria = list(study.criteria)
    rows: list[tuple] = []
    if study.ratings.filter(pl.col("kind") == "human").height:
        panel = _rater_panel(study, level, method, variant, reference, include_human)
        means = panel.filter(pl.col("rater") == "mean").select("criterion", "statistic")
        human_values = dict(means.iter_rows())
        column = [(HUMAN_RATER, None, c, human_values.get(c, np.nan)) for c in criteria]
        rows += [*column, (HUMAN_RATER, None, MEAN_ABS, _mean_abs(column))]
    grouped = judges.group_by(["judge", "variant"], maintain_order=True).agg("measure", "criterion")
    for judge, prompt, measures, rated in grouped.iter_rows():
        by_criterion = dict(zip(rated, measures, strict=True))
        column = [
            (
                judge,
                prompt,
                c,
                matched.get(by_criterion.get(c), np.nan),
            )
            for c in criteria
        ]
        rows += [*column, (judge, prompt, MEAN_ABS, _mean_abs(column))]
    return pl.DataFrame(
        {
            "rater": [r[0] for r in rows],
            "prompt": [r[1] for r in rows],
            "criterion": [r[2] for r in rows],
            "level": level,
            "method": method,
            "statistic": [float(r[3]) for r in rows],
        },
        schema=JUDGE_CRITERIA_SCHEMA,
    )


def judge_correlations(
    study: Study, level: Level, method: Method, variant: Variant, include_human: bool
) -> dict[str, float]:
    """Each LLM-judge measure's correlation at ``level`` with the criterion it rates, memoised
    (the judge x criterion block only, not the whole matrix of judges and criteria)."""
    variant = variant if method == "kendall" else "b"  # the others have no variant
    key = ("judge_matched", level, method, variant, include_human)

    def compute() -> dict[str, float]:
        cube = criteria_cube(study, ("llm-judge",), include_human)
        position = {m: i for i, m in enumerate(cube.measures)}
        rated = study.catalogue.filter(
            (pl.col("kind") == "llm-judge") & pl.col("measure").is_in(list(position))
        ).select("measure", "criterion")
        judges, criteria = (rated[c].to_list() for c in ("measure", "criterion"))
        columns = list(dict.fromkeys(c for c in criteria if c in position))
        if not columns:
            return {}
        result = level_correlation(
            cube.values[[position[m] for m in judges]],
            cube.values[[position[c] for c in columns]],
            level=level,
            method=method,
            variant=variant,
        )
        column = {c: k for k, c in enumerate(columns)}
        return {
            m: float(result.statistic[j, column[c]]) if c in column else np.nan
            for j, (m, c) in enumerate(zip(judges, criteria, strict=True))
        }

    return study.memo(key, compute)


def _mean_abs(column: list[tuple]) -> float:
    values = np.abs([r[3] for r in column], dtype=np.float64)
    return float(np.nanmean(values)) if np.isfinite(values).any() else np.nan
