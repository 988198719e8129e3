"""Chance-corrected agreement of any categorical (nominal) ratings in a store.

:func:`nominal_agreement` reads the rater-level values of a loaded Study (:attr:`Study.ratings`:
people's ratings, an LLM judge's tries) of any measure, lays each measure's labels out as an
items x raters matrix, as :func:`~hanna_stats.analyses.agreement` does (an item's ratings in its
rater columns: judge slots by slot number, identified raters by ``rater_id``), and gives the
nominal coefficients of the kernels on it: Gwet's AC1, Fleiss' kappa, Krippendorff's alpha
(nominal) and, for two raters, Cohen's kappa. It is the TACL user study's table
(:func:`~hanna_stats.analyses.user_study_agreement`) for any store: 0/1 flags, Likert labels
taken as categories, a judge's labels.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import polars as pl

from hanna_stats.analyses._common import analysis
from hanna_stats.analyses.ratings import chosen_measures, described, rater_source, ratings_of
from hanna_stats.kernels import (
    check_confidence,
    check_count,
    check_seed,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac,
    krippendorff_alpha,
)
from hanna_stats.study import Study
from hanna_stats.vocabulary import RatedKind, check

#: The coefficients, in the order of each measure's rows (``cohen_kappa`` for two raters only).
NOMINAL_COEFFICIENTS: tuple[str, ...] = (
    "gwet_ac1",
    "fleiss_kappa",
    "krippendorff_alpha",
    "cohen_kappa",
)
NOMINAL_AGREEMENT_SCHEMA = {
    "measure": pl.String,
    "kind": pl.String,
    "criterion": pl.String,
    "coefficient": pl.String,
    "statistic": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "interval_method": pl.String,
    "confidence_level": pl.Float64,
    "standard_error": pl.Float64,
    "pvalue": pl.Float64,
    "observed_agreement": pl.Float64,
    "chance_agreement": pl.Float64,
    "n_items": pl.Int64,
    "n_raters": pl.Int64,
    "n_categories": pl.Int64,
    "categories": pl.String,
    "category_source": pl.String,
    "resamples": pl.Int64,
    "seed": pl.Int64,
    "rater_source": pl.String,
}
#: Scales of whole numbers (:mod:`hanna_stats.store.scales`): their labels are the categories.
_WHOLE_SCALES = ("likert", "integer")
#: Most categories a scale may give (wider whole-number scales fall back to the labels seen).
_MAX_SCALE_CATEGORIES = 1000


def _items_by_raters(frame: pl.DataFrame) -> np.ndarray:
    """One measure's ratings as a float (items x raters) matrix, NaN where an item has fewer
    ratings than the widest item (the layout of :func:`~hanna_stats.analyses.agreement`)."""
    item = frame["item_id"].to_numpy()
    column = frame["rater_column"].to_numpy().astype(np.intp)
    starts = np.flatnonzero(np.r_[True, item[1:] != item[:-1]])
    counts = np.diff(np.r_[starts, item.size])
    wide = np.full((starts.size, int(column.max()) + 1), np.nan)
    wide[np.repeat(np.arange(starts.size), counts), column] = frame["score"].to_numpy()
    return wide


def _categories(study: Study, measure: str, wide: np.ndarray, source: str) -> tuple[tuple, str]:
    """The categories of ``measure``'s labels and where they come from (``scale`` or
    ``observed``): with ``source="scale"``, the whole numbers from ``scale_min`` to
    ``scale_max`` of a Likert or integer scale (bounds without a scale: Likert) when every label
    is one of them; else the distinct labels, sorted."""
    observed = np.unique(wide[~np.isnan(wide)])
    if source == "scale":
        row = study.catalogue.filter(pl.col("measure") == measure).row(0, named=True)
        low, high, scale = row["scale_min"], row["scale_max"], row["scale"]
        whole = scale in _WHOLE_SCALES or (scale is None and low is not None)
        if (
            whole
            and low is not None
            and high is not None
            and float(low).is_integer()
            and float(high).is_integer()
            and 0 < high - low + 1 <= _MAX_SCALE_CATEGORIES
        ):
            labels = np.arange(float(low), float(high) + 1.0)
            if np.isin(observed, labels).all():
                return tuple(labels.tolist()), "scale"
    return tuple(observed.tolist()), "observed"


def _shown(categories: tuple) -> str:
    return ", ".join(f"{c:g}" for c in categories)


def _measure_rows(
    wide: np.ndarray,
    categories: tuple,
    confidence: float,
    interval_method: str | None,
    resamples: int,
    seed: int,
) -> list[dict]:
    """One row per coefficient of one measure's (items x raters) labels."""
    n_raters = wide.shape[1]
    rated = (~np.isnan(wide)).sum(axis=1)
    common = {"n_raters": n_raters, "confidence_level": confidence}
    if not (rated >= 2).any():  # no item with two ratings: nothing to agree on
        return [
            common | {"coefficient": name, "n_items": int((rated > 0).sum())}
            for name in NOMINAL_COEFFICIENTS[:3]
        ]
    rows = []
    for name, kernel in (("gwet_ac1", gwet_ac), ("fleiss_kappa", fleiss_kappa)):
        method = interval_method or "t"
        res = kernel(wide, categories=categories, confidence=confidence, interval_method=method)
        rows.append(common | _closed_form(name, res))
    alpha = krippendorff_alpha(
        wide,
        level_of_measurement="nominal",
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )
    low, high = alpha.confidence_interval
    defined = alpha.n_units > 0
    rows.append(
        common
        | {
            "coefficient": "krippendorff_alpha",
            "statistic": alpha.statistic,
            "ci_low": low,
            "ci_high": high,
            "interval_method": alpha.interval_method,
            "observed_agreement": 1.0 - alpha.observed_disagreement if defined else math.nan,
            "chance_agreement": 1.0 - alpha.expected_disagreement if defined else math.nan,
            "n_items": alpha.n_units,
            "resamples": resamples,
            "seed": seed,
        }
    )
    if n_raters == 2:
        both = ~np.isnan(wide).any(axis=1)
        if both.any():
            res = cohen_kappa(
                wide[:, 0],
                wide[:, 1],
                categories=categories,
                confidence=confidence,
                interval_method=interval_method or "z",
            )
            rows.append(common | _closed_form("cohen_kappa", res))
    return rows


def _closed_form(name: str, res) -> dict:
    """The columns of a coefficient with a standard error (Gwet, Fleiss, Cohen)."""
    low, high = res.confidence_interval
    return {
        "coefficient": name,
        "statistic": res.statistic,
        "ci_low": low,
        "ci_high": high,
        "interval_method": res.interval_method,
        "standard_error": res.standard_error,
        "pvalue": res.pvalue,
        "observed_agreement": res.observed_agreement,
        "chance_agreement": res.chance_agreement,
        "n_items": res.n_items,
    }


@analysis
def nominal_agreement(
    study: Study,
    *,
    measures: list[str] | None = None,
    kinds: tuple[RatedKind, ...] = ("human",),
    confidence: float = 0.95,
    interval_method: Literal["t", "z"] | None = None,
    categories: Literal["scale", "observed"] = "scale",
    resamples: int = 1000,
    seed: int = 0,
    include_human: bool = True,
) -> pl.DataFrame:
    """Chance-corrected agreement of categorical ratings per measure: Gwet's AC1, Fleiss'
    kappa, Krippendorff's alpha (nominal) and, for two raters, Cohen's kappa.

    Any measure with rater-level values can be read as nominal labels: 0/1 flags, a Likert
    scale's points taken as unordered categories, an LLM judge's labels across its tries (its
    self-consistency). For each measure, its ratings form an items x raters matrix (items with
    fewer ratings than the widest have missing cells, which all four coefficients allow; see
    :func:`~hanna_stats.analyses.agreement` for the layout of the rater columns, positions and
    not identities when the raters are judge slots or many workers), on which:

    - ``gwet_ac1``: Gwet's AC1 (Gwet 2008; 2014), irrCAC's ``gwet.ac1.raw``
      (:func:`~hanna_stats.kernels.gwet_ac`);
    - ``fleiss_kappa``: Fleiss' (1971) kappa with missing ratings, as irrCAC's
      ``fleiss.kappa.raw`` (:func:`~hanna_stats.kernels.fleiss_kappa`);
    - ``krippendorff_alpha``: Krippendorff's (2011) alpha, nominal, with a percentile bootstrap
      interval over items (``resamples`` draws from ``seed``;
      :func:`~hanna_stats.kernels.krippendorff_alpha`); no standard error or p-value;
    - ``cohen_kappa``: Cohen's (1960) kappa of the two rater columns, on the items rated by
      both (:func:`~hanna_stats.kernels.cohen_kappa`); a row only for measures with exactly
      two ratings per item at most.

    AC1 and kappa carry Gwet's linearisation standard error (irrCAC, infinite population) and
    the interval ``coef -+ t_{(1+c)/2, n-1} SE`` (Student t, n - 1 degrees of freedom, n the
    items); Cohen's kappa the standard error of Fleiss, Cohen & Everitt (1969) and the normal
    interval ``kappa -+ z SE`` (statsmodels). Every row says which (``interval_method``:
    ``t``, ``z``, or ``percentile`` for alpha's bootstrap); ``interval_method`` chooses one
    distribution for the three closed-form coefficients, interval and p-value alike.

    Categories. AC1 depends on the number of categories q, unused ones included (irrCAC's
    ``categ.labels``): with ``categories="scale"`` (default) a measure on a Likert or integer
    scale (catalogue ``scale``, ``scale_min``, ``scale_max``) has the scale's whole numbers
    as its categories, used or not, when all its labels are among them; otherwise (and with
    ``categories="observed"``) the distinct labels seen. Kappa and alpha do not depend on
    unused categories.

    Parameters
    ----------
    study : Study
        A loaded study.
    measures : list of str, optional
        Measures by name, or human criteria by abbreviation; default: every measure of
        ``kinds`` (those without rater-level values give no rows).
    kinds : tuple of str
        Kinds of the default measures: ``"human"`` (default), ``"llm-judge"``, ``"metric"``.
    confidence : float
        Level of every interval, in (0, 1).
    interval_method : {None, "t", "z"}
        None (default): each coefficient's reference convention (AC1 and Fleiss' kappa ``t``,
        irrCAC; Cohen's kappa ``z``, statsmodels); ``"t"`` or ``"z"``: that distribution for
        all three.
    categories : {"scale", "observed"}
        Where the categories come from (see above).
    resamples : int
        Bootstrap resamples of alpha's interval, in [1, 1,000,000].
    seed : int
        Seed of alpha's bootstrap draws, an int in [0, 2**63) (the same draws for measures with
        as many items).
    include_human : bool
        Keep the human-written stories (system flagged ``is_human``), as
        :func:`~hanna_stats.analyses.agreement` does.

    Returns
    -------
    polars.DataFrame
        One row per (measure, coefficient), measures in the order chosen, coefficients in the
        order above. Columns ``measure, kind, criterion`` (a human criterion's own name; the
        criterion a judge rates), ``coefficient, statistic, ci_low, ci_high, interval_method,
        confidence_level, standard_error, pvalue`` (two-sided, H0: coefficient = 0; null for
        alpha), ``observed_agreement, chance_agreement`` (``p_a``, ``p_e``; for alpha
        ``1 - D_o``, ``1 - D_e``), ``n_items`` (AC1, kappa: the items with a rating; alpha:
        those with two or more; Cohen: those rated by both), ``n_raters`` (rater columns),
        ``n_categories``, ``categories`` (the categories, comma-separated), ``category_source``
        (``scale`` or ``observed``: where they came from), ``resamples``, ``seed`` (alpha only)
        and ``rater_source`` (``person``, ``slot`` or ``mixed``). A
        measure without any item rated twice has null coefficients. An empty frame with these
        columns when the store holds no rater-level values.

    Raises
    ------
    ValueError
        Unknown ``measures``, ``kinds``, ``interval_method`` or ``categories``;
        ``confidence`` outside (0, 1); bad ``resamples`` or ``seed``.

    Notes
    -----
    A measure whose labels are all equal has no chance-corrected kappa or alpha (``p_e = 1``,
    ``D_e = 0``: NaN), while AC1 is 1 (its chance agreement is 0 then), as in irrCAC. With
    skewed labels kappa and alpha fall far below AC1 for the same observed agreement (the
    "kappa paradox", Gwet 2008).

    References
    ----------
    Gwet (2008, 2014); Fleiss (1971); Krippendorff (2011); Cohen (1960); Fleiss, Cohen &
    Everitt (1969): see :mod:`hanna_stats.kernels.nominal` and
    :mod:`hanna_stats.kernels.agreement`.
    """
    confidence = check_confidence(confidence)
    if interval_method is not None:
        check("interval_method", interval_method)
    check("categories", categories)
    resamples = check_count("resamples", resamples)
    check_seed(seed)
    chosen = chosen_measures(study, measures, kinds)
    ratings = ratings_of(study, chosen, include_human)
    rows = []
    for measure in chosen:
        frame = ratings.filter(pl.col("measure") == measure)
        if not frame.height:
            continue
        wide = _items_by_raters(frame)
        cats, source = _categories(study, measure, wide, categories)
        fixed = {
            "measure": measure,
            "n_categories": len(cats),
            "categories": _shown(cats),
            "category_source": source,
            "rater_source": rater_source(frame["rater_kind"]),
        }
        for row in _measure_rows(wide, cats, confidence, interval_method, resamples, seed):
            rows.append(row | fixed)
    out = pl.DataFrame(rows, schema=NOMINAL_AGREEMENT_SCHEMA)
    return described(study, out).select(list(NOMINAL_AGREEMENT_SCHEMA))
