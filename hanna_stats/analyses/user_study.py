"""Agreement of the raters of the TACL 2024 user study on LLM judges' explanations.

The study (the follow-up of HANNA, TACL 2024) had 3 raters flag six issues in each of 100
explanations that LLMs gave of their ratings; :func:`~hanna_stats.store.read_user_study` reads
it as a tidy frame of 0/1 flags, and :func:`user_study_agreement` measures, per issue, how far
the raters agree beyond chance.
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
    fleiss_kappa,
    gwet_ac,
    krippendorff_alpha,
)
from hanna_stats.vocabulary import USER_STUDY_ISSUES as ISSUES

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


def _checked(annotations: pl.DataFrame) -> pl.DataFrame:
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


def _items_by_raters(part: pl.DataFrame) -> np.ndarray:
    """Flags as a float (items x raters) matrix, NaN where an item lacks a rater."""
    item = part["item"].rank("dense").cast(pl.Int64).to_numpy() - 1
    rater = part["rater"].rank("dense").cast(pl.Int64).to_numpy() - 1
    wide = np.full((int(item.max()) + 1, int(rater.max()) + 1), np.nan)
    wide[item, rater] = part["flag"].to_numpy()
    return wide


def _issue_rows(wide: np.ndarray, confidence: float, resamples: int, seed: int) -> list[dict]:
    """One row per coefficient for one issue's (items x raters) flags."""
    common = {
        "percent_flagged": 100.0 * float(np.nanmean(wide)),
        "n_items": int((~np.isnan(wide)).any(axis=1).sum()),
    }
    rows = []
    if wide.shape[1] < 2:  # one rater: nothing to agree on
        return [common | {"coefficient": name} for name in USER_STUDY_COEFFICIENTS]
    for name, kernel in (("gwet_ac1", gwet_ac), ("fleiss_kappa", fleiss_kappa)):
        res = kernel(wide, categories=_FLAG_LABELS, confidence=confidence)
        low, high = res.confidence_interval
        rows.append(
            common
            | {
                "coefficient": name,
                "statistic": res.statistic,
                "ci_low": low,
                "ci_high": high,
                "standard_error": res.standard_error,
                "observed_agreement": res.observed_agreement,
            }
        )
    alpha = krippendorff_alpha(
        wide,
        level_of_measurement="nominal",
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )
    observed = 1.0 - alpha.observed_disagreement if alpha.n_units else math.nan
    low, high = alpha.confidence_interval
    rows.append(
        common
        | {
            "coefficient": "krippendorff_alpha",
            "statistic": alpha.statistic,
            "ci_low": low,
            "ci_high": high,
            "observed_agreement": observed,
        }
    )
    return rows


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
    frame = _checked(annotations)
    rows = []
    for issue in _issues(frame):
        wide = _items_by_raters(frame.filter(pl.col("issue") == issue))
        rows += [row | {"issue": issue} for row in _issue_rows(wide, confidence, resamples, seed)]
    return pl.DataFrame(rows, schema=USER_STUDY_SCHEMA)
