"""Agreement of raters: of people's ratings and of an LLM judge's tries, on any scale.

- :func:`agreement`: six ICC forms and Krippendorff's alpha per measure (the paper's Sec. 4.1,
  Tab. 3; an LLM judge's self-consistency across its tries);
- :func:`nominal_agreement`: chance-corrected agreement of labels taken as categories (Gwet's
  AC1, Fleiss' kappa, Krippendorff's alpha, Cohen's kappa) per measure;
- :func:`user_study_agreement`: the same coefficients on the flags of the TACL 2024 user study on
  LLM judges' explanations (:func:`~hanna_stats.store.read_user_study`).

The first two read the rater-level values of a loaded Study (:attr:`Study.ratings`). Any measure
kind with raters can be analysed: the human criteria (the default), and an LLM judge whose
repeated tries are its raters, so judges and people appear side by side in one table.

Which ratings are used: for each item and criterion, the ratings of identified raters (kind
``'person'``, HANNA: MTurk Worker IDs from the raw annotation file) when it has any, otherwise
those of judge slots (kind ``'slot'``, HANNA: ``Human 1..3 XX`` of
``hanna_metric_scores_llm.csv``). This is the rule of view ``item_scores``, so no rating is
counted twice and the means agree with the story-level values.

Each measure's (or issue's) ratings are laid out as one items x raters matrix: an item's ratings
in its rater columns, judge slots by slot number, identified raters by ``rater_id`` (positions,
not identities).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from hanna_stats.analyses._common import analysis
from hanna_stats.kernels import (
    check_confidence,
    check_count,
    check_seed,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac,
    intraclass_corr,
    krippendorff_alpha,
)
from hanna_stats.kernels.agreement import ICC_FORMS
from hanna_stats.study import Study
from hanna_stats.vocabulary import USER_STUDY_ISSUES as ISSUES
from hanna_stats.vocabulary import (
    WORDS,
    CategorySource,
    IntervalMethod,
    RatedKind,
    check,
    check_bool,
    check_kinds,
    did_you_mean,
)

AGREEMENT_SCHEMA = {
    "measure": pl.String,
    "kind": pl.String,
    "criterion": pl.String,
    "statistic_name": pl.String,
    "statistic": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "f": pl.Float64,
    "df1": pl.Int64,
    "df2": pl.Int64,
    "pvalue": pl.Float64,
    "n_targets": pl.Int64,
    "n_raters": pl.Int64,
    "n_dropped": pl.Int64,
    "rater_source": pl.String,
}

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

#: The coefficients, in the order of the output rows of each issue.
USER_STUDY_COEFFICIENTS: tuple[str, ...] = ("gwet_ac1", "fleiss_kappa", "krippendorff_alpha")
USER_STUDY_SCHEMA = {
    "issue": pl.String,
    "coefficient": pl.String,
    "statistic": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "standard_error": pl.Float64,
    "observed_agreement": pl.Float64,
    "percent_flagged": pl.Float64,
    "n_items": pl.Int64,
}
_REQUIRED = ("item", "rater", "issue", "flag")
_FLAG_LABELS = (0, 1)
_ALPHA_LEVELS = ("interval", "ordinal")
#: Scales of whole numbers (:mod:`hanna_stats.store.scales`): their labels are the categories.
_WHOLE_SCALES = ("likert", "integer")
#: Most categories a scale may give (wider whole-number scales fall back to the labels seen).
_MAX_SCALE_CATEGORIES = 1000


def chosen_measures(
    study: Study, measures: list[str] | None, kinds: tuple[RatedKind, ...]
) -> list[str]:
    """Measures by name, or human criteria by abbreviation (default: every measure of
    ``kinds``, checked by the caller, in catalogue order)."""
    if measures is None:
        return [m for m, k in zip(study.measures, study.kinds, strict=True) if k in kinds]
    if isinstance(measures, str):
        raise ValueError(f"measures must be a list of names, not a string: {measures!r}")
    human = study.catalogue.filter(pl.col("kind") == "human")
    lookup = dict(zip(study.measures, study.measures, strict=True)) | {
        a: m for m, a in human.select("measure", "abbreviation").iter_rows() if a
    }
    unknown = [m for m in measures if m not in lookup]
    if unknown:
        criteria = ", ".join(
            f"{m} ({a})" if a else m for m, a in human.select("measure", "abbreviation").iter_rows()
        )
        raise ValueError(
            f"measures holds unknown measures {unknown}{did_you_mean(unknown[0], lookup)}; give "
            "measure names or the "
            f"abbreviations of the human criteria ({criteria or 'none'})"
        )
    chosen = [lookup[m] for m in measures]
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"measures lists a measure twice: {list(measures)}")
    return chosen


def ratings_of(study: Study, measures: list[str], include_human: bool) -> pl.DataFrame:
    """The rater-level values of ``measures`` (:attr:`Study.ratings`), without the
    human-written system's unless ``include_human``."""
    ratings = study.ratings.filter(pl.col("measure").is_in(measures))
    return ratings if include_human else ratings.filter(~pl.col("is_human"))


def described(study: Study, frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the ``kind`` and ``criterion`` of its ``measure`` (a human criterion is
    its own criterion; an LLM judge's, the one it rates)."""
    catalogue = study.catalogue.select(
        "measure",
        "kind",
        pl.when(pl.col("kind") == "human")
        .then(pl.col("measure"))
        .otherwise(pl.col("criterion"))
        .alias("criterion"),
    )
    return frame.drop("kind", "criterion", strict=False).join(
        catalogue, on="measure", how="left", maintain_order="left"
    )


def _rater_source(kinds: pl.Series) -> str:
    """``person`` or ``slot`` when every rating has that rater kind, else ``mixed``."""
    distinct = kinds.unique().to_list()
    return distinct[0] if len(distinct) == 1 else "mixed"


def _ratings_matrix(item: np.ndarray, rater: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Ratings as a float (items x raters) matrix, NaN where an item lacks a rater: ``value[i]``
    in row ``item[i]``, column ``rater[i]`` (0-based codes)."""
    wide = np.full((int(item.max()) + 1, int(rater.max()) + 1), np.nan)
    wide[item, rater] = value
    return wide


def _measure_matrix(frame: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """One measure's ratings (rows of :attr:`Study.ratings`, sorted by item) as an (items x
    raters) matrix (:func:`_ratings_matrix`: items in order, raters by ``rater_column``), and
    the number of ratings of each item."""
    item = frame["item_id"].to_numpy()
    starts = np.flatnonzero(np.r_[True, item[1:] != item[:-1]])
    counts = np.diff(np.r_[starts, item.size])
    rows = np.repeat(np.arange(starts.size), counts)
    column = frame["rater_column"].to_numpy().astype(np.intp)
    return _ratings_matrix(rows, column, frame["score"].to_numpy()), counts


def _measure_agreement(frame: pl.DataFrame, confidence: float) -> list[dict]:
    """ICC rows (balanced items) and alpha rows (all items) for one measure."""
    wide, counts = _measure_matrix(frame)
    source = _rater_source(frame["rater_kind"])
    # k: the most common number of ratings per item (ties: the larger).
    values, freq = np.unique(counts, return_counts=True)
    k = int(values[freq == freq.max()].max())
    complete = counts == k
    base = {"rater_source": source, "n_dropped": int((~complete).sum())}
    rows = []
    if complete.sum() >= 2 and k >= 2:
        res = intraclass_corr(wide[complete, :k], confidence=confidence)
        for j, name in enumerate(res.forms):
            rows.append(
                base
                | {
                    "statistic_name": name,
                    "statistic": res.statistic[j],
                    "ci_low": res.ci_low[j],
                    "ci_high": res.ci_high[j],
                    "f": res.f[j],
                    "df1": int(res.df1[j]),
                    "df2": int(res.df2[j]),
                    "pvalue": res.pvalue[j],
                    "n_targets": res.n_targets,
                    "n_raters": res.n_raters,
                }
            )
    else:
        rows += [
            base | {"statistic_name": name, "n_targets": int(complete.sum()), "n_raters": k}
            for name in ICC_FORMS
        ]
    for level in _ALPHA_LEVELS:
        res = krippendorff_alpha(wide, level_of_measurement=level)
        rows.append(
            base
            | {
                "statistic_name": f"alpha_{level}",
                "statistic": res.statistic,
                "n_targets": res.n_units,
                "n_raters": int(counts.max()),
                "n_dropped": int((counts < 2).sum()),
            }
        )
    return rows


@analysis
def agreement(
    study: Study,
    *,
    measures: list[str] | None = None,
    kinds: tuple[RatedKind, ...] = ("human",),
    confidence: float = 0.95,
    include_human: bool = True,
) -> pl.DataFrame:
    """Inter-rater agreement per measure: six ICC forms and Krippendorff's alpha.

    By default the human criteria, rated by people. With ``kinds=("llm-judge",)`` (or judge
    measures by name) it is an LLM judge's self-consistency: its repeated tries of an item are
    its raters (a tidy file with a ``rater`` column per try; HANNA's public file has none).

    The paper (Sec. 4.1, Tab. 3) reports ICC2k, the two-way random-effects, absolute-agreement
    ICC of the mean of k raters ("average random raters", Hallgren 2012): every HANNA story
    was rated by 3 MTurk workers drawn from a pool, and the story's score is the mean of the
    three, so the reliability of that mean, with rater bias counted as error, is what matters.

    Design. For each item, its k ratings are laid out in k columns ("raters"): judge slots by
    slot number (``HANNA judge slot 1`` -> column 1, ...); identified raters (kind ``'person'``)
    in ascending ``rater_id``, i.e. in the order in which the store first saw each worker (the
    worker's first row in the ingested annotation file), not the order of the item's own rows,
    which the store does not keep. Columns are therefore positions, not identities: HANNA's
    3 ratings per story come from many different workers. ICC1 and ICC1k, and Krippendorff's
    alpha, do not depend on this layout (they only use which ratings share an item); ICC2/3
    and their k forms do, through the between-column mean square.

    k is the most common number of ratings per item (ties: the larger). ICC needs a complete
    matrix: items with another number of ratings are dropped and counted in ``n_dropped``.
    Alpha keeps every item; items with a single rating are not pairable and are counted in
    its ``n_dropped``.

    Parameters
    ----------
    study : Study
        A loaded study.
    measures : list of str, optional
        Measures by name (``"Relevance"``, ``"Beluga-13B Empathy (prompt 1)"``) or human
        criteria by abbreviation (``"RE"``); default: every measure of ``kinds`` (those without
        rater-level values give no rows).
    kinds : tuple of str
        Kinds of the default measures: ``"human"`` (default), ``"llm-judge"``, ``"metric"``.
    confidence : float
        Level of the ICC confidence intervals (F-based, as ``pingouin.intraclass_corr``).
    include_human : bool
        Keep the human-written stories (system flagged ``is_human``); the paper's agreement
        covers all 1,056 stories.

    Returns
    -------
    polars.DataFrame
        One row per measure and statistic (``ICC1``, ``ICC2``, ``ICC3``, ``ICC1k``,
        ``ICC2k``, ``ICC3k``, ``alpha_interval``, ``alpha_ordinal``), columns ``measure, kind,
        criterion`` (a human criterion's own name; the criterion a judge rates), ``statistic_name,
        statistic, ci_low, ci_high, f, df1, df2, pvalue, n_targets, n_raters,
        n_dropped, rater_source``. For ICC: F test of ICC = 0 with its dof and p-value,
        ``n_targets`` complete items, ``n_raters`` = k. For alpha: no interval or test
        (null), ``n_targets`` pairable items, ``n_raters`` the largest number of ratings of an
        item. ``rater_source`` is ``'person'`` or ``'slot'`` (``'mixed'`` if the criterion's
        items differ). An empty frame with these columns when the store holds no rater-level
        ratings (e.g. only ``hanna_metric_scores.csv``).

    Raises
    ------
    ValueError
        Unknown ``measures`` or ``kinds``, ``confidence`` outside (0, 1).

    Notes
    -----
    On the public HANNA data (judge slots of ``hanna_metric_scores_llm.csv``, all 1,056
    stories) ICC2k is RE 0.325 [0.25, 0.39], CH -0.179 [-0.31, -0.06], EM 0.282 [0.20, 0.35],
    SU 0.139 [0.05, 0.23], EG 0.397 [0.33, 0.46], CX 0.536 [0.49, 0.58], not the paper's
    Tab. 3 (RE 0.48 [0.18, 0.65], CH 0.29 [0.10, 0.48], EM 0.34 [0.25, 0.41],
    SU 0.28 [0.16, 0.37], EG 0.46 [0.34, 0.55], CX 0.56 [0.48, 0.63]); without the Human
    stories it is lower still (RE 0.073, CH -0.724). The layout-free ICC1k is almost the same
    (RE 0.32, CH -0.18), so no ordering of the slots can reach the paper's values, and the
    paper's wide intervals (RE, CH) imply a large between-rater mean square, i.e. columns that
    were real workers: Tab. 3 was most likely computed on the raw annotation file with Worker
    IDs as raters (the paper notes that 3 workers did 78% of the ratings), which is not public.

    References
    ----------
    Shrout & Fleiss (1979); McGraw & Wong (1996); Krippendorff (2011); Hallgren, K. A. (2012),
    Computing inter-rater reliability for observational data, Tutorials in Quantitative
    Methods for Psychology 8(1), 23-34.
    """
    confidence = check_confidence(confidence)
    kinds = check_kinds(kinds, WORDS["rated_kinds"])
    check_bool("include_human", include_human)
    chosen = chosen_measures(study, measures, kinds)
    ratings = ratings_of(study, chosen, include_human)
    rows = []
    for measure in chosen:
        frame = ratings.filter(pl.col("measure") == measure)
        if frame.height:
            rows += [r | {"measure": measure} for r in _measure_agreement(frame, confidence)]
    out = pl.DataFrame(rows, schema={c: AGREEMENT_SCHEMA[c] for c in AGREEMENT_SCHEMA})
    return described(study, out).select(list(AGREEMENT_SCHEMA))


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


def _coefficient_rows(
    wide: np.ndarray,
    categories: tuple,
    confidence: float,
    interval_method: str | None,
    resamples: int,
    seed: int,
) -> list[dict]:
    """One row per coefficient (:data:`NOMINAL_COEFFICIENTS`, Cohen's kappa for two rater
    columns only) of one measure's or issue's (items x raters) labels; null coefficients when no
    item has two ratings."""
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
    interval_method: IntervalMethod | None = None,
    categories: CategorySource = "scale",
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
    :func:`agreement` for the layout of the rater columns, positions and
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
        :func:`agreement` does.

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
    Everitt (1969): see :mod:`hanna_stats.kernels.nominal_agreement` and
    :mod:`hanna_stats.kernels.agreement`.
    """
    confidence = check_confidence(confidence)
    if interval_method is not None:
        check("interval_method", interval_method)
    check("categories", categories)
    resamples = check_count("resamples", resamples)
    check_seed(seed)
    kinds = check_kinds(kinds, WORDS["rated_kinds"])
    check_bool("include_human", include_human)
    chosen = chosen_measures(study, measures, kinds)
    ratings = ratings_of(study, chosen, include_human)
    rows = []
    for measure in chosen:
        frame = ratings.filter(pl.col("measure") == measure)
        if not frame.height:
            continue
        wide, _ = _measure_matrix(frame)
        cats, source = _categories(study, measure, wide, categories)
        fixed = {
            "measure": measure,
            "n_categories": len(cats),
            "categories": _shown(cats),
            "category_source": source,
            "rater_source": _rater_source(frame["rater_kind"]),
        }
        for row in _coefficient_rows(wide, cats, confidence, interval_method, resamples, seed):
            rows.append(row | fixed)
    out = pl.DataFrame(rows, schema=NOMINAL_AGREEMENT_SCHEMA)
    return described(study, out).select(list(NOMINAL_AGREEMENT_SCHEMA))


def _checked_annotations(annotations: pl.DataFrame) -> pl.DataFrame:
    """The columns item, rater, issue, flag; ValueError naming what is wrong."""
    if not isinstance(annotations, pl.DataFrame):
        raise ValueError(
            f"annotations must be a polars DataFrame (read_user_study); got "
            f"{type(annotations).__name__}"
        )
    missing = [c for c in _REQUIRED if c not in annotations.columns]
    if missing:
        raise ValueError(
            f"annotations lacks the columns {missing}; expected {list(_REQUIRED)} "
            "(the frame of read_user_study)"
        )
    frame = annotations.select(_REQUIRED)
    for column in _REQUIRED:
        if frame[column].null_count():
            raise ValueError(f"annotations column {column!r} holds nulls")
    bad = frame.filter(~pl.col("flag").is_in(list(_FLAG_LABELS)))
    if bad.height:
        raise ValueError(f"annotations column 'flag' must hold 0 or 1; got {bad['flag'][0]!r}")
    if frame.select("item", "rater", "issue").is_duplicated().any():
        raise ValueError("annotations holds two flags for the same (item, rater, issue)")
    return frame


def _issues(frame: pl.DataFrame) -> list[str]:
    """The issues present: the file's order first, then others in order of appearance."""
    present = frame["issue"].unique(maintain_order=True).to_list()
    return [i for i in ISSUES if i in present] + [i for i in present if i not in ISSUES]


@analysis
def user_study_agreement(
    annotations: pl.DataFrame,
    *,
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
) -> pl.DataFrame:
    """Chance-corrected agreement of the user-study raters on each issue: AC1, kappa, alpha.

    For each issue, the 0/1 flags form an items x raters table (HANNA: 100 explanations x 3
    raters, the raters being positions within a triple of rows, not persons) on which three
    nominal coefficients are computed, all with the two categories {0, 1} (AC1 depends on the
    number of categories, and a flag has two even when raters used one):

    - ``gwet_ac1``: Gwet's AC1 (Gwet 2008; 2014), irrCAC's ``gwet.ac1.raw`` with its defaults;
    - ``fleiss_kappa``: Fleiss' (1971) kappa (``statsmodels``' ``fleiss_kappa`` of the
      items x categories counts);
    - ``krippendorff_alpha``: Krippendorff's (2011) alpha, nominal.

    AC1 and kappa come with Gwet's linearisation standard error (irrCAC, infinite population)
    and the interval ``coef -+ t_{(1+c)/2, n-1} SE``, n the items, cut to [-1, 1]
    (:func:`~hanna_stats.kernels.gwet_ac`, :func:`~hanna_stats.kernels.fleiss_kappa`). Alpha
    has a percentile bootstrap interval over items (``resamples`` draws of the items with
    replacement from ``numpy.random.default_rng(seed)``, the same draws for issues with as many
    items; see :func:`~hanna_stats.kernels.krippendorff_alpha`) and no standard error (null
    ``standard_error``). The bootstrap is not Krippendorff's own (Hayes & Krippendorff 2007):
    it resamples whole items; resamples where alpha is undefined (every drawn flag equal) are
    left out of the interval.

    Parameters
    ----------
    annotations : polars.DataFrame
        The frame of :func:`~hanna_stats.store.read_user_study`: columns ``item``, ``rater``,
        ``issue`` and ``flag`` (0/1) at least, one row per (item, rater, issue). An item may
        lack a rater (missing ratings are allowed by all three coefficients).
    confidence : float
        Level of the AC1, kappa and alpha intervals.
    resamples : int
        Bootstrap resamples of alpha's interval, in [1, 1,000,000].
    seed : int, numpy.random.Generator or None
        Seed of alpha's bootstrap draws, an int in [0, 2**63) (default 0: the table is
        reproducible; each issue draws from the same seed). A Generator is advanced by each
        issue's draw instead, so the issues then get different draws.

    Returns
    -------
    polars.DataFrame
        One row per (issue, coefficient), issues in the order of the file's columns
        (guidelines, syntax, superfluous, incorrectness, unsubstantiated, incoherence; other
        issue names after them, in order of appearance), coefficients in the order above.
        Columns ``issue, coefficient, statistic, ci_low, ci_high, standard_error,
        observed_agreement, percent_flagged, n_items``: ``observed_agreement`` is ``p_a``
        (for alpha ``1 - D_o``, the same with 3 ratings per item); ``percent_flagged`` is the
        percentage of the issue's judgements that are 1; ``n_items`` the items with at least
        one flag of the issue. An issue rated by one rater only has null coefficients.

    Raises
    ------
    ValueError
        ``annotations`` not a DataFrame, lacking a column, with nulls, a flag other than 0/1
        or two flags of one (item, rater, issue); ``confidence`` outside (0, 1); bad
        ``resamples`` or ``seed``.

    Notes
    -----
    An issue whose flags are all identical (HANNA: nobody flagged ``incorrectness``) has no
    chance-corrected agreement: kappa and alpha are NaN (chance agreement ``p_e = 1``,
    expected disagreement 0), and so are their intervals. AC1 stays defined there, as in the
    kernel and irrCAC: with two categories its chance agreement ``p_e = sum_k pi_k (1 - pi_k)``
    is 0 when one category has all the ratings, so AC1 = ``p_a`` = 1 with standard error 0 and
    interval (1, 1).

    On HANNA's ``user_study.csv`` this reproduces what the TACL authors' notebook prints
    (irrCAC defaults; they skip ``incorrectness``): AC1 guidelines 0.90 (0.85, 0.96), syntax
    0.97 (0.93, 1.00), superfluous 0.66 (0.55, 0.78), unsubstantiated 0.60 (0.47, 0.74),
    incoherence 0.81 (0.73, 0.89); unrounded 0.9023 (0.8469, 0.9577), 0.9655 (0.9346,
    0.9965), 0.6627 (0.5482, 0.7772), 0.6019 (0.4685, 0.7353), 0.8111 (0.7331, 0.8892), with
    ``p_a`` 0.9133, 0.9667, 0.7533, 0.7400, 0.8400. Kappa and alpha are far lower on the same
    flags (guidelines 0.23, 0.23; syntax -0.02, -0.01; incoherence -0.05, -0.04): with flags
    this skewed (94% of guidelines flags are 1, 2% of syntax flags) their chance agreement is
    close to ``p_a`` (the "kappa paradox" that AC1 was designed to avoid, Gwet 2008).

    References
    ----------
    Gwet, K. L. (2008). Computing inter-rater reliability and its variance in the presence of
    high agreement. British Journal of Mathematical and Statistical Psychology, 61(1), 29-48.
    Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed. Advanced Analytics.
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. Psychological
    Bulletin, 76(5), 378-382.
    Krippendorff, K. (2011). Computing Krippendorff's Alpha-Reliability. University of
    Pennsylvania, Annenberg School for Communication.
    Hayes, A. F., & Krippendorff, K. (2007). Answering the call for a standard reliability
    measure for coding data. Communication Methods and Measures, 1(1), 77-89.
    """
    confidence = check_confidence(confidence)
    resamples = check_count("resamples", resamples)
    check_seed(seed)
    frame = _checked_annotations(annotations)
    rows = []
    for issue in _issues(frame):
        part = frame.filter(pl.col("issue") == issue)
        item, rater = (
            part[c].rank("dense").cast(pl.Int64).to_numpy() - 1 for c in ("item", "rater")
        )
        wide = _ratings_matrix(item, rater, part["flag"].to_numpy())
        flagged = {
            "issue": issue,
            "percent_flagged": 100.0 * float(np.nanmean(wide)),
            "n_items": int((~np.isnan(wide)).any(axis=1).sum()),
        }
        rows += [
            row | flagged
            for row in _coefficient_rows(wide, _FLAG_LABELS, confidence, None, resamples, seed)
            if row["coefficient"] in USER_STUDY_COEFFICIENTS
        ]
    return pl.DataFrame(rows, schema=USER_STUDY_SCHEMA)
