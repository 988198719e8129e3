"""Correlations between measures (metrics, LLM judges) and human criteria, from the store.

The analysis layer of the paper's Sec. 5.1-5.2 (Figs. 3-6, 14-25; Tabs. 5, 8, 9): it reads the
(measure x input x system) cube from the store and hands it to the Numba engine
(:func:`hanna_stats.kernels.level_correlation`), returning tidy polars DataFrames.

Conventions (Chhun et al., 2022; see ``docs`` in the README):

* ``level="story"``: for each input (prompt), correlate two measures across the systems, then
  average over inputs. Inputs whose correlation is undefined (a constant vector) are skipped under
  ``nan_policy="omit"`` and the mean divides by the number of inputs used, reported as ``n_groups``.
* ``level="system"``: correlate the per-system means over inputs.
* ``level="global"``: pool every item (input x system) into one correlation.
* The human-written stories (system flagged ``is_human``) are excluded unless
  ``include_human=True``, as the paper removes them as outliers.
* Kendall's tau is tau-b unless ``variant`` says otherwise. Statistics are signed; the paper's
  tables show absolute values, which is the caller's choice to take.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import polars as pl

from hanna_stats.analyses._common import (
    COEFFICIENTS,
    DEFAULT_KINDS,
    KERNEL_LEVEL,
    LEVELS,
    NAN_POLICIES,
    VARIANTS,
    check_choice,
    correlation_matrix,
    human_mask,
)
from hanna_stats.kernels import UndefinedCorrelationError, level_correlation
from hanna_stats.store import Cube, Study

Level = Literal["story", "system", "global"]
Method = Literal["pearson", "spearman", "kendall", "acc_eq"]
Against = Literal["criteria", "metrics", "inter-criteria", "all"]

AGAINST: tuple[str, ...] = ("criteria", "metrics", "inter-criteria", "all")

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


def correlate(
    study: Study,
    *,
    level: Level = "story",
    method: Method = "kendall",
    against: Against = "criteria",
    variant: Literal["a", "b", "c"] = "b",
    nan_policy: Literal["omit", "propagate", "raise"] = "omit",
    include_human: bool = False,
    kinds: tuple[str, ...] = DEFAULT_KINDS,
) -> pl.DataFrame:
    """Correlate measures with human criteria or with each other, at one aggregation level.

    Parameters
    ----------
    study : Study
        A loaded study (:func:`hanna_stats.open_study`, :func:`hanna_stats.store.load_study`).
    level : {"story", "system", "global"}
        Aggregation level (see the module docstring).
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

    Returns
    -------
    polars.DataFrame
        One row per (measure, against) pair with columns ``measure, against, level, method,
        variant, statistic, n_groups, n_skipped``: ``n_groups`` is the number of inputs whose
        correlation entered the mean (1 at system and global level when defined) and
        ``n_skipped`` those skipped as undefined.

    Examples
    --------
    >>> from hanna_stats import open_study                         # doctest: +SKIP
    >>> study = open_study("../shared/data/hanna")                 # doctest: +SKIP
    >>> correlate(study, level="system", method="pearson")         # doctest: +SKIP
    """
    check_choice("level", level, LEVELS)
    check_choice("method", method, COEFFICIENTS)
    check_choice("against", against, AGAINST)
    check_choice("variant", variant, VARIANTS)
    check_choice("nan_policy", nan_policy, NAN_POLICIES)
    cube, res = correlation_matrix(
        study,
        level=level,
        method=method,
        variant=variant,
        # "raise" reads the propagated matrix and names the first undefined pair asked for.
        nan_policy="propagate" if nan_policy == "raise" else nan_policy,
        include_human=include_human,
        kinds=kinds,
        criteria=against != "metrics",  # the metrics alone need no human criteria
    )
    human = human_mask(cube)
    rows, cols = {
        "criteria": (~human, human),
        "metrics": (~human, ~human),
        "inter-criteria": (human, human),
        "all": (np.ones_like(human), np.ones_like(human)),
    }[against]
    row_idx, col_idx = np.flatnonzero(rows), np.flatnonzero(cols)
    block = [r[np.ix_(row_idx, col_idx)] for r in res]
    if nan_policy == "raise" and np.isnan(block[0]).any():
        i, j = np.argwhere(np.isnan(block[0]))[0]
        _raise_undefined(cube, row_idx[i], col_idx[j], level, method, variant)
    return correlation_frame(
        cube, row_idx, col_idx, block, level=level, method=method, variant=variant
    )


def _raise_undefined(cube: Cube, i: int, j: int, level: str, method: str, variant: str) -> None:
    """Raise ValueError naming the measures (and input) of an undefined correlation."""
    where = ""
    if method != "acc_eq":
        try:
            level_correlation(
                cube.values[[i]],
                cube.values[[j]],
                level=KERNEL_LEVEL[level],
                method=method,
                variant=variant,
                nan_policy="raise",
            )
        except UndefinedCorrelationError as err:
            where = f" on input {cube.inputs[err.group]!r}" if level == "story" else ""
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
    names = np.asarray(cube.measures, dtype=object)
    n_r, n_c = len(row_idx), len(col_idx)
    return pl.DataFrame(
        {
            "measure": np.repeat(names[row_idx], n_c).tolist(),
            "against": np.tile(names[col_idx], n_r).tolist(),
            "level": [level] * (n_r * n_c),
            "method": [method] * (n_r * n_c),
            "variant": [variant if method == "kendall" else None] * (n_r * n_c),
            "statistic": np.asarray(statistic).ravel(),
            "n_groups": np.asarray(n_groups).ravel(),
            "n_skipped": np.asarray(n_skipped).ravel(),
        },
        schema=SCHEMA,
    )
