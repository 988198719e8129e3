"""Cohen's kappa, Fleiss' kappa and Gwet's AC1/AC2 (``kernels.nominal_agreement``) against
independent values.

Independent expected values:

- irrCAC (K. Gwet's R package; formulas of Gwet 2014), its example data ``cac.raw4raters``
  (Gwet 2014, Handbook of Inter-Rater Reliability, 4th ed., p. 120; irrCAC
  ``inst/extdata/cac.raw4raters.csv``). The printed values are those of the irrCAC usage
  notebook of the Python port of irrCAC (github.com/afergadis/irrCAC,
  ``docs/source/usage/usage_raw_data.ipynb``, 5 decimals as R prints ``coeff.val`` and
  ``coeff.se``) and the port's unit tests (``test/unit/irrCAC/raw/test_gwet.py``,
  ``test_fleiss.py``, 3 decimals);
- irrCAC's overview vignette (CRAN), ``kappa2.table(cont3x3abstractors)``: Cohen's kappa
  0.7964094, standard error 0.05891072;
- ``statsmodels.stats.inter_rater`` (``cohens_kappa``: kappa, std_kappa, the CI, std_kappa0,
  the two-sided p-value; ``fleiss_kappa``) on Hypothesis-generated ratings;
- scikit-learn's ``cohen_kappa_score`` (point value, weighted, string labels);
- a loop-by-loop transcription of irrCAC's ``fleiss.kappa.raw`` / ``gwet.ac1.raw`` (below) on
  data with missing ratings and weights, and a delete-one-item jackknife of the coefficient
  (the linearisation standard error and the jackknife's agree to first order);
- the ``irrCAC`` package itself (PyPI, the Python port of Gwet's R package; skipped when it is
  not installed) on Hypothesis-generated ratings with missing values, unweighted and weighted;
- hand-worked small cases (the arithmetic is in the comments).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from hanna_stats.kernels import (
    cohen_kappa,
    encode_labels,
    fleiss_kappa,
    gwet_ac,
    krippendorff_alpha,
)
from hanna_stats.vocabulary import WORDS

WEIGHTS = WORDS["weights"]

NAN = math.nan

# irrCAC cac.raw4raters = Gwet (2014), p. 120: 12 units (rows) x 4 raters (columns).
CAC_RAW4RATERS = [
    [1, 1, NAN, 1],
    [2, 2, 3, 2],
    [3, 3, 3, 3],
    [3, 3, 3, 3],
    [2, 2, 2, 2],
    [1, 2, 3, 4],
    [4, 4, 4, 4],
    [1, 1, 2, 1],
    [2, 2, 2, 2],
    [NAN, 5, 5, 5],
    [NAN, NAN, 1, 1],
    [NAN, NAN, 3, NAN],
]

# Printed by irrCAC (usage notebook of the Python port): coefficient, SE, CI, p, pa, pe.
PRINTED_5_DECIMALS = {
    ("gwet", None): (0.77544, 0.14295, (0.46081, 1.0), 0.0002087209840633264, 0.81818, 0.19032),
    ("fleiss", None): (0.76117, 0.15302, (0.42438, 1.0), 0.00041917303853056254, 0.81818, 0.23872),
    ("gwet", "quadratic"): (
        0.914,
        0.10396,
        (0.68518, 1.0),
        2.6344384658205655e-06,
        0.97538,
        0.7137,
    ),
}
# The port's unit tests (3 decimals): coefficient, SE, CI low, pa, pe.
PRINTED_3_DECIMALS = {
    ("gwet", "linear"): (0.859, 0.117, 0.600, 0.939, 0.571),
    ("fleiss", "linear"): (0.818, 0.149, 0.491, 0.939, 0.667),
    ("fleiss", "quadratic"): (0.865, 0.146, 0.544, 0.975, 0.818),
}
COEFFICIENTS = {"gwet": gwet_ac, "fleiss": fleiss_kappa}


def _numbers(res):
    """Statistic, standard error, CI bounds and p-value of a result, as a flat tuple."""
    return (res.statistic, res.standard_error, *res.confidence_interval, res.pvalue)


@pytest.mark.parametrize("key", sorted(PRINTED_5_DECIMALS, key=str))
def test_irrcac_cac_raw4raters_five_decimals(key):
    name, weights = key
    stat, se, ci, pvalue, pa, pe = PRINTED_5_DECIMALS[key]
    res = COEFFICIENTS[name](CAC_RAW4RATERS, weights=weights)
    assert round(res.statistic, 5) == stat
    assert round(res.standard_error, 5) == se
    assert tuple(round(v, 5) for v in res.confidence_interval) == ci
    assert res.pvalue == pytest.approx(pvalue, rel=1e-6)
    assert (round(res.observed_agreement, 5), round(res.chance_agreement, 5)) == (pa, pe)
    assert res.n_items == 12 and res.categories == (1.0, 2.0, 3.0, 4.0, 5.0)


@pytest.mark.parametrize("key", sorted(PRINTED_3_DECIMALS))
def test_irrcac_cac_raw4raters_weighted(key):
    name, weights = key
    stat, se, low, pa, pe = PRINTED_3_DECIMALS[key]
    res = COEFFICIENTS[name](CAC_RAW4RATERS, weights=weights)
    got = (res.statistic, res.standard_error, res.confidence_interval[0])
    assert tuple(round(v, 3) for v in got) == (stat, se, low)
    assert (round(res.observed_agreement, 3), round(res.chance_agreement, 3)) == (pa, pe)
    assert res.confidence_interval[1] == 1.0


def test_cac_raw4raters_as_strings_and_none():
    # The same data as text labels with None for missing: the same coefficients.
    names = {1: "a", 2: "b", 3: "c", 4: "d", 5: "e"}
    text = [[None if math.isnan(v) else names[v] for v in row] for row in CAC_RAW4RATERS]
    for f in (fleiss_kappa, gwet_ac):
        for weights in (None, *WEIGHTS):
            got, want = f(text, weights=weights), f(CAC_RAW4RATERS, weights=weights)
            assert got.categories == ("a", "b", "c", "d", "e")
            np.testing.assert_allclose(_numbers(got), _numbers(want), rtol=1e-12)


def test_krippendorff_alpha_on_encoded_labels():
    # irrCAC prints Krippendorff's alpha 0.74342 on cac.raw4raters; Krippendorff (2011) 0.743.
    text = [[None if math.isnan(v) else f"c{int(v)}" for v in row] for row in CAC_RAW4RATERS]
    codes = encode_labels(text).as_float()  # items x raters, as krippendorff_alpha reads them
    res = krippendorff_alpha(codes, level_of_measurement="nominal")
    assert round(res.statistic, 5) == 0.74342


# ----------------------------------------------------------------------------- Cohen


def _columns(table):
    """Two label columns whose contingency table is ``table`` (categories 0..q-1)."""
    table = np.asarray(table)
    q = table.shape[0]
    a = np.repeat(np.arange(q), table.sum(axis=1))
    b = np.concatenate([np.repeat(np.arange(q), table[i]) for i in range(q)])
    return a, b


def test_cohen_irrcac_cont3x3abstractors():
    # irrCAC overview vignette: kappa2.table(cont3x3abstractors) -> 0.7964094, SE 0.05891072.
    res = cohen_kappa(*_columns([[13, 0, 0], [0, 20, 7], [0, 4, 56]]))
    assert res.statistic == pytest.approx(0.7964094, abs=5e-8)
    assert res.standard_error == pytest.approx(0.05891072, abs=5e-9)
    assert res.n_items == 100


def test_cohen_2x2_by_hand():
    # Table [[20, 5], [10, 15]], n = 50: p_a = 0.7, rows (0.5, 0.5), columns (0.6, 0.4),
    # p_e = 0.5, kappa = 0.4. Var: cell terms p_kl (w_kl - (col_k + row_l)(1 - kappa))^2 =
    # 0.4*0.34^2 + 0.1*0.66^2 + 0.2*0.54^2 + 0.3*0.46^2 = 0.2116, minus (0.4 - 0.5*0.6)^2 = 0.01,
    # over n (1 - p_e)^2 = 12.5: 0.016128. Var_0 = (p_e + p_e^2 - sum_k row_k col_k (row_k +
    # col_k)) / 12.5 = (0.75 - 0.33 - 0.18) / 12.5 = 0.0192.
    res = cohen_kappa(*_columns([[20, 5], [10, 15]]))
    assert res.statistic == pytest.approx(0.4, rel=1e-12)
    assert (res.observed_agreement, res.chance_agreement) == pytest.approx((0.7, 0.5))
    assert res.standard_error == pytest.approx(math.sqrt(0.016128), rel=1e-12)
    assert res.null_standard_error == pytest.approx(math.sqrt(0.0192), rel=1e-12)
    z = 0.4 / math.sqrt(0.0192)
    assert res.pvalue == pytest.approx(2 * stats.norm.sf(z), rel=1e-12)
    half = stats.norm.ppf(0.975) * math.sqrt(0.016128)
    assert res.confidence_interval == pytest.approx((0.4 - half, 0.4 + half), rel=1e-12)
    wide = cohen_kappa(*_columns([[20, 5], [10, 15]]), confidence=0.99)
    assert wide.confidence_interval[0] < res.confidence_interval[0]


def _complete_pairs():
    return st.integers(2, 5).flatmap(
        lambda q: st.tuples(
            st.just(q),
            st.lists(
                st.tuples(st.integers(0, q - 1), st.integers(0, q - 1)), min_size=2, max_size=60
            ),
        )
    )


@settings(deadline=None, max_examples=150)
@given(case=_complete_pairs(), weights=st.sampled_from([None, *WEIGHTS]))
@example(case=(4, [(0, 3), (3, 2), (3, 2), (3, 2)]), weights="quadratic")  # variance 0: 8e-15
def test_cohen_against_statsmodels(case, weights):
    q, pairs = case
    a, b = (np.array(c) for c in zip(*pairs, strict=True))
    table = np.zeros((q, q))
    np.add.at(table, (a, b), 1)
    rows, cols = table.sum(axis=1) / a.size, table.sum(axis=0) / a.size
    assume(rows @ cols < 1 - 1e-9)  # kappa is 0/0 when both raters use one category only
    with np.errstate(all="ignore"):
        want = cohens_kappa(table, wt=weights)
    assume(want.var_kappa0 > 1e-12)
    res = cohen_kappa(a, b, weights=weights)
    assert res.statistic == pytest.approx(want.kappa, rel=1e-9, abs=1e-12)
    # Variances, not SEs: a variance that is 0 up to rounding has a root of 1e-7 or more.
    # statsmodels leaves up to about 1e-14 of rounding in a variance that is 0 (quadratic
    # weights, 4 pairs: 7.7e-15 where ours clamps a rounding below 0 to 0).
    assert res.standard_error**2 == pytest.approx(max(want.var_kappa, 0), rel=1e-9, abs=1e-13)
    assert res.null_standard_error == pytest.approx(want.std_kappa0, rel=1e-9)
    assert res.pvalue == pytest.approx(want.pvalue_two_sided, rel=1e-7, abs=1e-300)
    low, high = np.clip([want.kappa_low, want.kappa_upp], -1, 1)
    if not math.isnan(want.kappa_low):
        # kappa -+ 1.96 SE: the ends differ by 1.96 times the standard errors' difference
        # (the root of statsmodels' rounding, 9e-8 in the example) and their own rounding.
        spread = 2 * abs(math.sqrt(max(want.var_kappa, 0)) - res.standard_error)
        assert res.confidence_interval == pytest.approx((low, high), abs=1e-7 + spread)


@settings(deadline=None, max_examples=60)
@given(case=_complete_pairs(), weights=st.sampled_from(["linear", "quadratic"]))
def test_cohen_string_labels_against_sklearn(case, weights):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    q, pairs = case
    names = [f"level{k}" for k in range(q)]  # sorts in level order
    a = [names[x] for x, _ in pairs]
    b = [names[y] for _, y in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined kappa (one common label): NaN
        want = sklearn_metrics.cohen_kappa_score(a, b, labels=names, weights=weights)
    assume(np.isfinite(want))
    got = cohen_kappa(a, b, weights=weights, categories=names).statistic
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_cohen_categories_fix_the_order_of_text_labels():
    # Positions follow `categories`, not the alphabet: low < mid < high.
    a = ["low", "mid", "high", "high", "low"]
    b = ["mid", "mid", "high", "low", "low"]
    ordered = cohen_kappa(a, b, weights="linear", categories=["low", "mid", "high"])
    codes = {"low": 0, "mid": 1, "high": 2}
    numeric = cohen_kappa([codes[v] for v in a], [codes[v] for v in b], weights="linear")
    assert ordered.statistic == pytest.approx(numeric.statistic, rel=1e-12)
    alphabetical = cohen_kappa(a, b, weights="linear")
    assert alphabetical.categories == ("high", "low", "mid")
    assert alphabetical.statistic != pytest.approx(numeric.statistic)


def test_cohen_missing_ratings_drop_the_item():
    a = [1, 2, None, 3, 1, 2, NAN, 3]
    b = [1, 2, 2, 3, None, 1, 1, 3]
    res = cohen_kappa(a, b)
    complete = cohen_kappa([1, 2, 3, 2, 3], [1, 2, 3, 1, 3])
    assert res.n_items == 5
    assert _numbers(res) == pytest.approx(_numbers(complete), rel=1e-12)


# ----------------------------------------------------------------------------- many raters


def _irrcac_loops(rows, categories, weights, coefficient):
    """irrCAC's fleiss.kappa.raw / gwet.ac1.raw (N = Inf), transcribed loop by loop.

    Returns (coefficient, standard error, pa, pe).
    """
    q = len(categories)
    x = [float(c) for c in categories]
    span = max(x) - min(x)
    w = [[1.0 if k == m else 0.0 for m in range(q)] for k in range(q)]
    if weights is not None:
        for k in range(q):
            for m in range(q):
                d = abs(x[k] - x[m]) / span
                w[k][m] = 1 - d if weights == "linear" else 1 - d * d
    items = [[v for v in row if not (isinstance(v, float) and math.isnan(v))] for row in rows]
    items = [row for row in items if row]
    n = len(items)
    counts = [[sum(1 for v in row if v == c) for c in categories] for row in items]
    r = [sum(c) for c in counts]
    n2 = sum(1 for ri in r if ri >= 2)
    pa_i = []
    for i in range(n):
        s = 0.0
        for k in range(q):
            weighted = sum(w[k][m] * counts[i][m] for m in range(q))
            s += counts[i][k] * (weighted - 1)
        pa_i.append(s / (r[i] * (r[i] - 1)) if r[i] >= 2 else 0.0)
    pa = sum(pa_i) / n2
    pi = [sum(counts[i][k] / r[i] for i in range(n)) / n for k in range(q)]
    if coefficient == "fleiss":
        pe = sum(w[k][m] * pi[k] * pi[m] for k in range(q) for m in range(q))
        pibar = [sum((w[k][m] + w[m][k]) * pi[m] for m in range(q)) / 2 for k in range(q)]
        pe_i = [sum(counts[i][k] * pibar[k] for k in range(q)) / r[i] for i in range(n)]
    else:
        factor = sum(map(sum, w)) / (q * (q - 1))
        pe = factor * sum(p * (1 - p) for p in pi)
        pe_i = [factor * sum(counts[i][k] * (1 - pi[k]) for k in range(q)) / r[i] for i in range(n)]
    coef = (pa - pe) / (1 - pe)
    total = 0.0
    for i in range(n):
        c_i = (n / n2) * (pa_i[i] - (pe if r[i] >= 2 else 0.0)) / (1 - pe)
        c_i -= 2 * (1 - coef) * (pe_i[i] - pe) / (1 - pe)
        total += (c_i - coef) ** 2
    return coef, math.sqrt(total / (n * (n - 1))), pa, pe


ratings_with_missing = st.tuples(st.integers(2, 20), st.integers(2, 5), st.integers(2, 5)).flatmap(
    lambda s: st.lists(
        st.lists(
            st.one_of(st.integers(1, s[2]).map(float), st.just(NAN)), min_size=s[1], max_size=s[1]
        ),
        min_size=s[0],
        max_size=s[0],
    )
)


@settings(deadline=None, max_examples=120)
@given(
    rows=ratings_with_missing,
    coefficient=st.sampled_from(["fleiss", "gwet"]),
    weights=st.sampled_from([None, *WEIGHTS]),
)
def test_many_raters_against_irrcac_loops(rows, coefficient, weights):
    values = sorted({v for row in rows for v in row if not math.isnan(v)})
    rated = [sum(not math.isnan(v) for v in row) for row in rows]
    assume(len(values) >= 2 and max(rated) >= 2 and sum(r > 0 for r in rated) >= 2)
    want = _irrcac_loops(rows, values, weights, coefficient)
    assume(abs(1 - want[3]) > 1e-9)
    res = COEFFICIENTS[coefficient](rows, weights=weights)
    got = (res.statistic, res.standard_error, res.observed_agreement, res.chance_agreement)
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    n = sum(r > 0 for r in rated)
    assert res.n_items == n
    half = stats.t.ppf(0.975, n - 1) * want[1]
    low, high = want[0] - half, min(want[0] + half, 1.0)  # irrCAC cuts at 1 from above
    assert res.confidence_interval == pytest.approx((low, high), abs=1e-9)
    if want[1] > 1e-9:  # else SE is 0 up to rounding and t is +-inf or 0/0
        p = 2 * stats.t.sf(abs(want[0]) / want[1], n - 1)
        assert res.pvalue == pytest.approx(p, rel=1e-7, abs=1e-300)


@settings(deadline=None, max_examples=120)
@given(
    shape=st.tuples(st.integers(1, 25), st.integers(2, 6)),
    q=st.integers(1, 5),
    seed=st.integers(0, 2**32 - 1),
)
def test_fleiss_against_statsmodels(shape, q, seed):
    x = np.random.default_rng(seed).integers(0, q, size=shape)
    with np.errstate(all="ignore"):
        want = sm_fleiss_kappa(aggregate_raters(x)[0], method="fleiss")
    got = fleiss_kappa(x).statistic
    if math.isnan(want):  # one category only: p_e = 1
        assert math.isnan(got)
    else:
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


# ----------------------------------------------------------------------------- irrCAC package


@pytest.fixture(scope="module")
def irrcac_cac():
    """irrCAC's ``CAC`` class (the PyPI package ``irrCAC``); the tests using it skip without it.

    irrCAC 0.4.4 declares pandas < 3 and scipy == 1.12 but runs under pandas 3 and scipy 1.17,
    with the one difference handled in :func:`_irrcac_package`; install it with
    ``pip install --no-deps irrCAC==0.4.4``.
    """
    pytest.importorskip("irrCAC")
    from irrCAC.raw import CAC

    return CAC


def _irrcac_package(cac, rows, categories, weights, coefficient):
    """irrCAC's ``CAC(...).gwet()`` or ``.fleiss()`` on ``rows``, unrounded.

    Returns (coefficient, SE, (low, high), p-value, pa, pe, n).

    Two arguments are set on purpose. ``digits``: irrCAC rounds its outputs to 5 decimals by
    default. ``categories``: without them irrCAC 0.4.4 takes ``sorted(ratings.stack().unique())``,
    and under pandas 3 ``DataFrame.stack`` keeps missing values, so NaN becomes one more category
    (with a count of 0, as NaN != NaN): Fleiss' kappa is unchanged, but AC1 is computed with
    q + 1 categories and the weighted coefficients are all NaN (the weights of a NaN category
    are NaN). With pandas 2 it gives the sorted distinct labels, as passed here.
    """
    frame = pd.DataFrame(np.asarray(rows, dtype=np.float64))
    labels = [float(c) for c in categories]  # numpy ints would be taken as non-numeric labels
    result = cac(frame, weights=weights or "identity", categories=labels, digits=30)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        est = getattr(result, coefficient)()["est"]
    values = (est["coefficient_value"], est["se"], *est["confidence_interval"], est["p_value"])
    return (*(float(v) for v in values), float(est["pa"]), float(est["pe"]), result.n)


categorical_with_missing = st.tuples(
    st.integers(5, 40), st.integers(3, 6), st.integers(2, 5)
).flatmap(
    lambda s: st.tuples(
        st.just(s[2]),
        st.lists(
            st.lists(
                st.one_of(st.integers(1, s[2]).map(float), st.just(NAN)),
                min_size=s[1],
                max_size=s[1],
            ),
            min_size=s[0],
            max_size=s[0],
        ),
    )
)


@settings(deadline=None, max_examples=200)
@given(
    case=categorical_with_missing,
    coefficient=st.sampled_from(["gwet", "fleiss"]),
    weights=st.sampled_from([None, *WEIGHTS]),
    declared=st.booleans(),
)
def test_many_raters_against_irrcac_package(irrcac_cac, case, coefficient, weights, declared):
    # Gwet's AC1 (weights=None) and AC2, and Fleiss' kappa, with missing ratings: items rated by
    # one rater count in n and in pi_k but not in p_a, in both (irrCAC's ri_vec >= 2 masks).
    # `declared`: all q possible labels are given to both (AC depends on q, unused labels
    # included); else ours finds the labels and irrCAC is given the labels used.
    q, rows = case
    x = np.array(rows)
    rated = (~np.isnan(x)).sum(axis=1)
    used = sorted(set(x[~np.isnan(x)].tolist()))
    # Two items and an item with two ratings: else ours raises (p_a or the variance undefined)
    # and irrCAC divides by zero. Two labels used: with one, Fleiss' p_e is 1 (NaN in both), and
    # with q = 1 irrCAC's AC1 variance divides by q (q - 1) = 0 (NaN) where ours takes p_e = 0.
    assume((rated >= 2).any() and (rated > 0).sum() >= 2 and len(used) >= 2)
    categories = [float(k) for k in range(1, q + 1)] if declared else used
    coef, se, low, high, pvalue, pa, pe, n = _irrcac_package(
        irrcac_cac, x, categories, weights, coefficient
    )
    res = COEFFICIENTS[coefficient](x, weights=weights, categories=categories if declared else None)
    got = (res.statistic, res.observed_agreement, res.chance_agreement)
    np.testing.assert_allclose(got, (coef, pa, pe), rtol=1e-12, atol=1e-13)
    assert res.n_items == n
    assert res.categories == tuple(categories)
    # Variances, not SEs: a variance that is 0 up to rounding has a root of ~1e-8; irrCAC also
    # replaces an SE of exactly 0 by 1e-15.
    assert res.standard_error**2 == pytest.approx(se**2, rel=1e-12, abs=1e-15)
    # Both cut the interval at 1 from above only: Fleiss' kappa can fall below -1 with missing
    # ratings (see test_fleiss_kappa_below_minus_one).
    np.testing.assert_allclose(res.confidence_interval, (low, high), rtol=1e-12, atol=1e-12)
    if se > 1e-9:  # else t is +-inf or 0/0 (irrCAC: t = coef / 1e-15)
        # irrCAC's 2 (1 - F(|t|)) is exact to ~1e-16 absolute only, not relative.
        assert res.pvalue == pytest.approx(pvalue, rel=1e-12, abs=1e-14)


def test_fleiss_kappa_below_minus_one(irrcac_cac):
    # With missing ratings p_a and pi_k come from different items (those with two ratings, all
    # rated items), so Fleiss' kappa is not bounded by -1: items (1, 2), (1, -), (1, -) give
    # p_a = 0, pi = (5/6, 1/6), p_e = 26/36, kappa = -(13/18) / (5/18) = -2.6, in irrCAC too.
    rows = [[1, 2], [1, NAN], [1, NAN]]
    coef, se, low, high, *_ = _irrcac_package(irrcac_cac, rows, [1, 2], None, "fleiss")
    res = fleiss_kappa(rows)
    assert res.statistic == pytest.approx(-2.6, rel=1e-12)
    assert (res.statistic, res.standard_error) == pytest.approx((coef, se), rel=1e-12)
    assert low < high < -1.0  # the interval lies below -1, in irrCAC and ours
    assert res.confidence_interval == pytest.approx((low, high), rel=1e-12)
    assert res.confidence_interval[0] < res.statistic < res.confidence_interval[1]


def test_gwet_unused_category_counts_in_q():
    # AC1 depends on q: with a sixth possible category (never used) p_e shrinks.
    rows = [[v if not math.isnan(v) else NAN for v in row] for row in CAC_RAW4RATERS]
    six = gwet_ac(rows, categories=[1, 2, 3, 4, 5, 6])
    want = _irrcac_loops(rows, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], None, "gwet")
    assert (six.statistic, six.standard_error) == pytest.approx(want[:2], rel=1e-12)
    assert six.chance_agreement < gwet_ac(rows).chance_agreement
    assert six.categories == (1, 2, 3, 4, 5, 6)
    # Fleiss' kappa does not depend on unused categories.
    assert fleiss_kappa(rows, categories=range(1, 7)).statistic == pytest.approx(0.7611692754)


def test_small_case_by_hand():
    # Items (a, a), (a, a), (a, b): p_a = (1 + 1 + 0) / 3 = 2/3, pi = (5/6, 1/6).
    # Fleiss: p_e = 25/36 + 1/36 = 13/18, kappa = (12/18 - 13/18) / (5/18) = -1/5.
    #   kappa_i = (p_a|i - p_e) / (1 - p_e) = 1, 1, -13/5; p_e|i = sum_k r_ik pi_k / r_i = 5/6,
    #   5/6, 1/2; kappa*_i = kappa_i - 2 (6/5) (p_e|i - 13/18) (18/5) = 1/25, 1/25, -17/25;
    #   Var = (2 (6/25)^2 + (12/25)^2) / (3 * 2) = 36/625, SE = 6/25.
    # Gwet: p_e = 1/(2-1) * 2 (5/6)(1/6) = 5/18, AC1 = (12/18 - 5/18) / (13/18) = 7/13.
    #   AC_i = 1, 1, -5/13; p_e|i = sum_k r_ik (1 - pi_k) / r_i = 1/6, 1/6, 1/2;
    #   AC*_i = AC_i - 2 (6/13) (p_e|i - 5/18) (18/13) = 193/169, 193/169, -113/169;
    #   Var = (2 (102/169)^2 + (204/169)^2) / 6 = (102/169)^2, SE = 102/169.
    rows = [["a", "a"], ["a", "a"], ["a", "b"]]
    f, g = fleiss_kappa(rows), gwet_ac(rows)
    assert (f.statistic, f.standard_error) == pytest.approx((-1 / 5, 6 / 25), rel=1e-12)
    assert (f.observed_agreement, f.chance_agreement) == pytest.approx((2 / 3, 13 / 18))
    assert (g.statistic, g.standard_error) == pytest.approx((7 / 13, 102 / 169), rel=1e-12)
    assert g.chance_agreement == pytest.approx(5 / 18, rel=1e-12)
    t = stats.t.ppf(0.975, 2)
    # Cut at 1 from above only (as irrCAC): kappa and AC fall below -1 with missing ratings.
    assert f.confidence_interval == pytest.approx((-1 / 5 - t * 6 / 25, -1 / 5 + t * 6 / 25))
    assert g.confidence_interval == pytest.approx((7 / 13 - t * 102 / 169, 1.0))
    assert g.pvalue == pytest.approx(2 * stats.t.sf((7 / 13) / (102 / 169), 2), rel=1e-12)


def test_jackknife_agrees_with_linearisation():
    # The linearisation variance is the first-order jackknife variance: on 200 items they agree
    # within a few per cent (measured: 0.5-1.5 %).
    rng = np.random.default_rng(20240601)
    n = 200
    truth = rng.integers(0, 4, n)
    x = np.where(rng.random((n, 4)) < 0.7, truth[:, None], rng.integers(0, 4, (n, 4)))
    x = x.astype(float)
    x[rng.random((n, 4)) < 0.15] = np.nan
    for f in (fleiss_kappa, gwet_ac):
        for weights in (None, "quadratic"):
            leave_one_out = np.array(
                [f(np.delete(x, i, axis=0), weights=weights).statistic for i in range(n)]
            )
            spread = ((leave_one_out - leave_one_out.mean()) ** 2).sum()
            jackknife = math.sqrt((n - 1) / n * spread)
            assert f(x, weights=weights).standard_error == pytest.approx(jackknife, rel=0.04)


@pytest.mark.parametrize("weights", [None, *WEIGHTS])
def test_perfect_agreement_is_one(weights):
    rows = [["x", "x", "x"], ["y", "y", None], ["z", "z", "z"], ["x", "x", "x"]]
    for f in (fleiss_kappa, gwet_ac):
        res = f(rows, weights=weights, categories=["x", "y", "z"])
        assert res.statistic == pytest.approx(1.0, rel=1e-12)
        assert res.standard_error == pytest.approx(0.0, abs=1e-12)
        assert res.confidence_interval == pytest.approx((1.0, 1.0))
    res = cohen_kappa(["x", "y", "z", "x"], ["x", "y", "z", "x"], weights=weights)
    assert (res.statistic, res.standard_error) == pytest.approx((1.0, 0.0))
    assert res.pvalue == pytest.approx(2 * stats.norm.sf(1 / res.null_standard_error))
    assert res.confidence_interval == (1.0, 1.0)


def test_items_without_ratings_are_dropped():
    rows = [*CAC_RAW4RATERS, [NAN, NAN, NAN, NAN]]
    for f in (fleiss_kappa, gwet_ac):
        assert _numbers(f(rows)) == _numbers(f(CAC_RAW4RATERS))
        assert f(rows).n_items == 12


def test_one_category_only():
    rows = [[1, 1], [1, 1], [1, NAN]]
    assert math.isnan(fleiss_kappa(rows).statistic)  # p_e = 1: 0/0
    assert math.isnan(cohen_kappa([1, 1], [1, 1]).statistic)
    assert gwet_ac(rows).statistic == 1.0  # p_e = 0 for q = 1 (irrCAC: 1e-15)


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: gwet_ac([[1, 2]], weights="squared"),
            "weights must be one of 'linear', 'quadratic'; got 'squared'",
        ),
        (lambda: cohen_kappa([1], [1], weights=1), "weights must be one of"),
        (
            lambda: fleiss_kappa([[1, 2]], confidence=95),
            r"confidence must be a number in \(0, 1\); got 95",
        ),
        (lambda: gwet_ac([1, 2, 3]), r"ratings must have shape \(items, raters\); got shape"),
        (lambda: gwet_ac([[1], [2]]), "ratings must have at least 2 columns"),
        (
            lambda: gwet_ac([[1, None], [None, 2]]),
            "ratings must hold at least one item with two or more ratings",
        ),
        (lambda: fleiss_kappa([[1, "a"], [2, "b"]], weights="linear"), "cannot be sorted"),
        (
            lambda: fleiss_kappa([[1, 2], [3, 2]], categories=[1, 2]),
            "ratings holds labels not in categories: 3",
        ),
        (lambda: fleiss_kappa([[1, 2]], categories=[1, 1]), "categories must be"),
        (lambda: fleiss_kappa([[1, 2]], categories="ab"), "categories must be"),
        (lambda: fleiss_kappa([[1.0, math.inf]]), "ratings must not hold infinite values"),
        (lambda: fleiss_kappa([[[1], [2]], [[3], [4]]]), "ratings must have shape"),
        (lambda: fleiss_kappa([[1, 2], [3]]), "ratings must be a rectangular array"),
        (lambda: fleiss_kappa([[[1], 2], [3, 4]]), "ratings"),
        (lambda: cohen_kappa([1, 2, 3], [1, 2]), "b must have the length of a; got 2 and 3"),
        (lambda: cohen_kappa([[1, 2]], [1, 2]), r"a must have shape \(items,\)"),
        (lambda: cohen_kappa([1, None], [None, 2]), "a and b must share at least one item"),
        (lambda: cohen_kappa("ab", "ab"), "a must be an array of labels"),
    ],
)
def test_errors_name_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_mixed_labels_with_categories():
    # Labels that cannot be sorted together are fine once categories give their order.
    rows = [[1, "a"], [1, 1], ["a", "a"]]
    res = fleiss_kappa(rows, categories=[1, "a"])
    assert res.categories == (1, "a")
    assert res.statistic == pytest.approx(fleiss_kappa([[0, 1], [0, 0], [1, 1]]).statistic)


# ----------------------------------------------------------------------------- shapes


@pytest.mark.parametrize("f", [fleiss_kappa, gwet_ac])
def test_raters_x_items_only_by_name(f):
    # Items x raters is the default; the transpose is read when layout says so, labels of any
    # kind, with the same numbers.
    rows = np.array(CAC_RAW4RATERS)
    names = {1: "a", 2: "b", 3: "c", 4: "d", 5: "e"}
    text = np.array([[None if math.isnan(v) else names[v] for v in r] for r in CAC_RAW4RATERS])
    for data in (rows, text):
        want = f(data)
        got = f(data.T, layout="raters x items")
        assert _numbers(got) == pytest.approx(_numbers(want), rel=1e-15)
        assert (got.n_items, got.categories) == (want.n_items, want.categories)
        assert f(data, layout="items x raters") == want
    with pytest.raises(ValueError, match="layout must be one of 'items x raters', 'raters x"):
        f(rows, layout="raters")
    with pytest.raises(ValueError, match=r"ratings must have shape \(raters, items\)"):
        f([1, 2, 3], layout="raters x items")


def test_encode_labels_returns_items_x_raters_whatever_the_layout():
    rows = [["yes", "no"], ["no", None], ["yes", "yes"]]
    enc = encode_labels(rows)
    by_name = encode_labels(np.array(rows).T, layout="raters x items")
    assert by_name.codes.tolist() == enc.codes.tolist() == [[1, 0], [0, -1], [1, 1]]
    assert by_name.categories == enc.categories


# ----------------------------------------------------------------------------- intervals


def test_interval_methods_are_stated_and_default_as_before():
    a, b = _columns([[20, 5], [10, 15]])
    assert cohen_kappa(a, b).interval_method == "z"
    assert cohen_kappa(a, b, interval_method="z") == cohen_kappa(a, b)
    for f in (fleiss_kappa, gwet_ac):
        res = f(CAC_RAW4RATERS)
        assert res.interval_method == "t"
        assert f(CAC_RAW4RATERS, interval_method="t") == res
    with pytest.raises(ValueError, match="interval_method must be one of 't', 'z'; got 'normal'"):
        cohen_kappa(a, b, interval_method="normal")
    with pytest.raises(ValueError, match="interval_method must be one of"):
        gwet_ac(CAC_RAW4RATERS, interval_method=None)


def test_cohen_z_interval_is_statsmodels_and_t_interval_by_hand():
    # z (default): statsmodels' interval and p-value. t: kappa -+ t_{0.975, n-1} SE and the
    # two-sided Student-t p-value of kappa / SE_0 on n - 1 = 49 dof, from scipy.stats.t.
    table = np.array([[20, 5], [10, 15]])
    a, b = _columns(table)
    want = cohens_kappa(table)
    z = cohen_kappa(a, b)
    assert z.confidence_interval == pytest.approx((want.kappa_low, want.kappa_upp), rel=1e-12)
    assert z.pvalue == pytest.approx(want.pvalue_two_sided, rel=1e-12)
    t = cohen_kappa(a, b, interval_method="t")
    assert t.interval_method == "t"
    assert t[:2] == z[:2] and t[4:9] == z[4:9]  # kappa, SEs, p_a, p_e, n, categories
    half = stats.t.ppf(0.975, 49) * z.standard_error
    assert t.confidence_interval == pytest.approx((0.4 - half, 0.4 + half), rel=1e-12)
    assert t.pvalue == pytest.approx(2 * stats.t.sf(0.4 / z.null_standard_error, 49), rel=1e-12)
    assert t.pvalue > z.pvalue


@pytest.mark.parametrize("f", [fleiss_kappa, gwet_ac])
@pytest.mark.parametrize("confidence", [0.9, 0.95])
def test_fleiss_gwet_z_interval_by_hand(f, confidence):
    # t (default): coef -+ t_{n-1} SE, n = 12 items (irrCAC); z: coef -+ z SE and the normal
    # p-value of coef / SE, from scipy.stats.norm; both cut at 1 from above.
    t = f(CAC_RAW4RATERS, confidence=confidence)
    z = f(CAC_RAW4RATERS, confidence=confidence, interval_method="z")
    assert z.interval_method == "z" and t.interval_method == "t"
    assert (z.statistic, z.standard_error) == (t.statistic, t.standard_error)
    assert z[4:8] == t[4:8]
    q = (1 + confidence) / 2
    for res, quantile in ((t, stats.t.ppf(q, 11)), (z, stats.norm.ppf(q))):
        half = quantile * res.standard_error
        want = (res.statistic - half, min(res.statistic + half, 1.0))
        assert res.confidence_interval == pytest.approx(want, rel=1e-12)
    ratio = t.statistic / t.standard_error
    assert t.pvalue == pytest.approx(2 * stats.t.sf(ratio, 11), rel=1e-9)
    assert z.pvalue == pytest.approx(2 * stats.norm.sf(ratio), rel=1e-9)
    assert z.confidence_interval[0] > t.confidence_interval[0]
