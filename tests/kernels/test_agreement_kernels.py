"""ICC and Krippendorff's alpha kernels against published values, pingouin and krippendorff.

Independent expected values: Shrout & Fleiss (1979), Table 4 (values computed by hand in the
paper from their Table 2 data); Krippendorff (2011), "Computing Krippendorff's
Alpha-Reliability", its worked examples; ``pingouin.intraclass_corr`` (ANOVA through
pandas/statsmodels-style code, not shared with ours) on pingouin's own wine dataset and on
Hypothesis-generated matrices; the PyPI ``krippendorff`` package (coincidence matrices built
explicitly) when installed.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from hanna_stats.kernels.agreement import (
    ICC_FORMS,
    PINGOUIN_LABELS,
    intraclass_corr,
    krippendorff_alpha,
)
from hanna_stats.kernels.agreement import _icc_sums_of_squares as icc_sums_of_squares

pg = pytest.importorskip("pingouin")
try:  # optional oracle, not a dependency
    import krippendorff as kd
except ImportError:  # pragma: no cover
    kd = None

NAN = math.nan

# Shrout & Fleiss (1979), Table 2: 6 targets x 4 judges.
SHROUT_FLEISS = [
    [9, 2, 5, 8],
    [6, 1, 3, 2],
    [8, 4, 6, 8],
    [7, 1, 2, 6],
    [10, 5, 6, 9],
    [6, 2, 4, 7],
]
# Their Table 4, in ICC_FORMS order: ICC(1,1), ICC(2,1), ICC(3,1), ICC(1,4), ICC(2,4), ICC(3,4).
SHROUT_FLEISS_ICC = [0.17, 0.29, 0.71, 0.44, 0.62, 0.91]

# Krippendorff (2011), reliability data with missing values: observers A-D x units 1-12.
K2011_C = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]
# Krippendorff (2011): binary data, 2 observers x 10 units (alpha 0.095) ...
K2011_A = [[0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]]
# ... and nominal data a..e coded 1..5, 2 observers x 12 units (alpha 0.692).
K2011_B = [[1, 1, 2, 2, 4, 3, 3, 3, 5, 4, 4, 1], [2, 1, 2, 2, 2, 3, 3, 3, 5, 4, 4, 4]]


@pytest.fixture(autouse=True)
def _unrounded_pingouin():
    """pingouin rounds its CI95 column to 2 decimals by default; compare unrounded."""
    old = dict(pg.options)
    pg.options["round"] = None
    pg.options["round.column.CI95"] = None
    yield
    pg.options.clear()
    pg.options.update(old)


def pingouin_icc(x: np.ndarray) -> pd.DataFrame:
    n, k = x.shape
    long = pd.DataFrame(
        {"t": np.repeat(np.arange(n), k), "r": np.tile(np.arange(k), n), "y": x.ravel()}
    )
    return pg.intraclass_corr(long, targets="t", raters="r", ratings="y").set_index("Type")


def assert_matches_pingouin(x, rtol=1e-10, atol=1e-10):
    ours = intraclass_corr(x)
    ref = pingouin_icc(np.asarray(x, dtype=float))
    for j, form in enumerate(ICC_FORMS):
        row = ref.loc[PINGOUIN_LABELS[form]]
        got = [ours.statistic[j], ours.f[j], ours.df1[j], ours.df2[j], ours.pvalue[j]]
        want = [row["ICC"], row["F"], row["df1"], row["df2"], row["pval"]]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=form)
        np.testing.assert_allclose(
            [ours.ci_low[j], ours.ci_high[j]], row["CI95"], rtol=rtol, atol=atol, err_msg=form
        )


def test_shrout_fleiss_published_values():
    res = intraclass_corr(SHROUT_FLEISS)
    np.testing.assert_allclose(res.statistic, SHROUT_FLEISS_ICC, atol=0.005)
    assert res.n_targets == 6 and res.n_raters == 4
    assert res.forms == ICC_FORMS


def test_pingouin_wine_dataset():
    data = pg.read_dataset("icc")
    wide = data.pivot_table(index="Wine", columns="Judge", values="Scores").to_numpy()
    assert wide.shape == (8, 4)
    assert_matches_pingouin(wide)
    # pingouin's documented example output, rounded to 3 decimals.
    res = intraclass_corr(wide)
    np.testing.assert_allclose(res.statistic, [0.728, 0.728, 0.729, 0.914, 0.914, 0.915], atol=5e-4)


def test_pingouin_cronbach_dataset():
    # Questionnaire items as "raters" of subjects: another pingouin dataset with a full design.
    data = pg.read_dataset("cronbach_alpha")
    wide = data.pivot_table(index="Subj", columns="Items", values="Scores").to_numpy()
    assert_matches_pingouin(wide)


def test_shrout_fleiss_against_pingouin():
    assert_matches_pingouin(np.array(SHROUT_FLEISS, dtype=float))


@settings(deadline=None, max_examples=40)
@given(
    shape=st.tuples(st.integers(3, 30), st.integers(2, 6)),  # pingouin needs >= 5 values
    data=st.data(),
)
def test_hypothesis_against_pingouin(shape, data):
    likert = data.draw(st.booleans())
    elements = (
        st.integers(1, 5).map(float)
        if likert
        else st.floats(-1e3, 1e3, allow_nan=False, allow_subnormal=False)
    )
    x = data.draw(hnp.arrays(np.float64, shape, elements=elements))
    ssr, _, sse = icc_sums_of_squares(x)
    # Degenerate data (no residual or no between-target variation) make the coefficients and
    # bounds 0/0 or x/0; pingouin and we then follow IEEE arithmetic, not worth comparing.
    scale = np.abs(x).max() ** 2 * x.size + 1.0
    assume(sse > 1e-9 * scale and ssr > 1e-9 * scale)
    res = intraclass_corr(x)
    # Near the pole of the k transform (ICC2 bound close to -1/(k-1)) the ICC2k bounds are
    # ill-conditioned: last-bit differences in the mean squares grow without bound.
    with np.errstate(all="ignore"):
        assume(np.all(np.abs(np.r_[res.statistic, res.ci_low, res.ci_high]) < 1e4))
    assert_matches_pingouin(x)
    assert np.all((res.pvalue >= 0) & (res.pvalue <= 1))
    # ICC1, ICC3 and their k forms are increasing functions of F, so their F-based intervals
    # contain them. Not so ICC2/ICC2k: the McGraw-Wong bounds need not bracket a negative
    # estimate, and the k transform l k / (1 + l (k - 1)) has a pole at l = -1 / (k - 1).
    monotone = [ICC_FORMS.index(f) for f in ("ICC1", "ICC3", "ICC1k", "ICC3k")]
    assert np.all(res.ci_low[monotone] <= res.statistic[monotone] + 1e-12)
    assert np.all(res.statistic[monotone] <= res.ci_high[monotone] + 1e-12)


@settings(deadline=None, max_examples=30)
@given(
    x=hnp.arrays(
        np.float64,
        st.tuples(st.integers(2, 20), st.integers(2, 5)),
        elements=st.integers(1, 5).map(float),
    ),
    shift=st.sampled_from([0.0, 1e6, -1e8]),
)
def test_mean_squares_shift_invariant(x, shift):
    # Centred sums: adding a large constant leaves the sums of squares (nearly) unchanged.
    a = np.array(icc_sums_of_squares(x))
    b = np.array(icc_sums_of_squares(x + shift))
    np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-6)


def test_confidence_level():
    x = np.array(SHROUT_FLEISS, dtype=float)
    wide, narrow = intraclass_corr(x, confidence=0.99), intraclass_corr(x, confidence=0.5)
    assert np.all(wide.ci_low < narrow.ci_low) and np.all(wide.ci_high > narrow.ci_high)
    np.testing.assert_array_equal(wide.statistic, narrow.statistic)


def test_nan_policy():
    x = np.array(SHROUT_FLEISS, dtype=float)
    y = np.vstack([x, [1.0, NAN, 2.0, 3.0]])
    with pytest.raises(ValueError, match="nan_policy"):
        intraclass_corr(y)
    np.testing.assert_array_equal(
        intraclass_corr(y, nan_policy="omit").statistic, intraclass_corr(x).statistic
    )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ratings": [1.0, 2.0, 3.0]}, "ratings must have 2 dimension"),
        ({"ratings": [[1.0, 2.0]]}, "ratings need at least 2"),
        ({"ratings": [[1.0, math.inf], [2.0, 3.0]]}, "ratings must not hold infinite"),
        ({"ratings": [["a", "b"], ["c", "d"]]}, "ratings must be an array"),
        ({"ratings": SHROUT_FLEISS, "confidence": 1.0}, "confidence"),
        ({"ratings": SHROUT_FLEISS, "nan_policy": "propagate"}, "nan_policy"),
    ],
)
def test_icc_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        intraclass_corr(**kwargs)


def test_icc_constant_residual():
    # Raters agree perfectly up to an offset: MSE = 0, consistency ICC = 1, F = inf, p = 0.
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with np.errstate(all="ignore"):
        res = intraclass_corr(x)
    assert res.statistic[ICC_FORMS.index("ICC3")] == 1.0
    assert res.pvalue[ICC_FORMS.index("ICC3")] == 0.0


def test_icc_scale_100k_ratings():
    x = np.random.default_rng(1).integers(1, 6, size=(33_334, 3)).astype(float)
    res = intraclass_corr(x)
    assert res.n_targets == 33_334
    assert np.all(np.isfinite(res.statistic))


# --- Krippendorff's alpha --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "expected"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_krippendorff_2011_example_c(level, expected):
    res = krippendorff_alpha(np.transpose(K2011_C), level_of_measurement=level)
    assert round(res.statistic, 3) == expected
    # 12 units, unit 12 has a single value: 11 pairable units holding 40 values.
    assert (res.n_units, res.n_pairable) == (11, 40)


def test_krippendorff_2011_example_c_disagreements():
    # Nominal: o_ck off-diagonal sum = 8 -> D_o = 8 / 40; n.. = 40 with n_c = 9, 13, 10, 5, 3
    # -> D_e = (40^2 - (81 + 169 + 100 + 25 + 9)) / (40 * 39) = 1216 / 1560.
    res = krippendorff_alpha(np.transpose(K2011_C), level_of_measurement="nominal")
    assert res.observed_disagreement == pytest.approx(8 / 40)
    assert res.expected_disagreement == pytest.approx(1216 / 1560)
    assert res.statistic == pytest.approx(1 - (8 / 40) / (1216 / 1560))


def test_krippendorff_2011_binary_and_nominal_two_observers():
    for data, expected in ((K2011_A, 0.095), (K2011_B, 0.692)):
        res = krippendorff_alpha(np.transpose(data), level_of_measurement="nominal")
        assert round(res.statistic, 3) == expected


def test_alpha_hand_worked_interval():
    # Two raters, three units: (1, 2), (3, 3), (5, 4). Pairable values 1 2 3 3 5 4, n = 6.
    # Observed: each unit's ordered pairs (2 of them, weight 1/(2-1)): (1-2)^2*2 + 0 + (5-4)^2*2
    # = 4 -> D_o = 4/6. Expected: sum_{c,k} n_c n_k (c-k)^2 = 2 n SS, SS = sum (v - 3)^2 = 10
    # -> 120 / (6*5) = 4. alpha = 1 - (4/6)/4 = 5/6.
    res = krippendorff_alpha([[1, 2], [3, 3], [5, 4]], level_of_measurement="interval")
    assert res.statistic == pytest.approx(5 / 6)
    # Nominal: 2 disagreeing units x 2 ordered pairs = 4 -> D_o = 4/6; values 1,2,3,3,4,5:
    # sum n_c^2 = 1+1+4+1+1 = 8 -> D_e = (36 - 8)/30; alpha = 1 - (4/6)/(28/30) = 2/7.
    res = krippendorff_alpha([[1, 2], [3, 3], [5, 4]], level_of_measurement="nominal")
    assert res.statistic == pytest.approx(2 / 7)


def test_alpha_perfect_and_degenerate():
    assert krippendorff_alpha([[1, 1], [2, 2], [3, 3]]).statistic == 1.0
    # No variation at all: D_e = 0, alpha undefined.
    assert math.isnan(krippendorff_alpha([[2, 2], [2, 2]]).statistic)
    # No unit with two values: nothing pairable.
    res = krippendorff_alpha([[1, NAN], [NAN, 2]])
    assert math.isnan(res.statistic) and res.n_pairable == 0


def test_alpha_errors():
    with pytest.raises(ValueError, match="level_of_measurement"):
        krippendorff_alpha(np.transpose(K2011_C), level_of_measurement="ratio")
    with pytest.raises(ValueError, match="ratings must have 2 dimension"):
        krippendorff_alpha([1, 2, 3])
    with pytest.raises(ValueError, match="ratings must not hold infinite"):
        krippendorff_alpha([[1, math.inf], [1, 2]])
    with pytest.raises(ValueError, match="layout must be one of 'items x raters', 'raters x"):
        krippendorff_alpha(np.transpose(K2011_C), layout="units x raters")


reliability = hnp.arrays(
    np.float64,
    st.tuples(st.integers(2, 5), st.integers(1, 25)),
    elements=st.one_of(st.integers(1, 5).map(float), st.just(NAN)),
)


@pytest.mark.skipif(kd is None, reason="the krippendorff package is not installed")
@settings(deadline=None, max_examples=40)
@given(x=reliability, level=st.sampled_from(["nominal", "ordinal", "interval"]))
def test_alpha_against_krippendorff_package(x, level):
    res = krippendorff_alpha(x.T, level_of_measurement=level)  # x: raters x units
    values = x[:, (~np.isnan(x)).sum(axis=0) >= 2]
    assume(np.unique(values[~np.isnan(values)]).size >= 2)
    want = kd.alpha(reliability_data=x, level_of_measurement=level)
    assert res.statistic == pytest.approx(want, rel=1e-10, abs=1e-10)


@settings(deadline=None, max_examples=40)
@given(x=reliability, seed=st.integers(0, 2**32 - 1))
def test_alpha_ignores_rater_identity(x, seed):
    # Alpha uses only which values share a unit: shuffling each unit's cells changes nothing.
    rng = np.random.default_rng(seed)
    y = x.copy()
    for u in range(y.shape[1]):
        y[:, u] = rng.permutation(y[:, u])
    for level in ("nominal", "ordinal", "interval"):
        a = krippendorff_alpha(x.T, level_of_measurement=level).statistic
        b = krippendorff_alpha(y.T, level_of_measurement=level).statistic
        assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-12)


@settings(deadline=None, max_examples=30)
@given(x=reliability)
def test_ordinal_alpha_invariant_under_monotone_recoding(x):
    # Ordinal alpha depends on the order of the values only.
    a = krippendorff_alpha(x.T, level_of_measurement="ordinal").statistic
    b = krippendorff_alpha(np.exp(x).T, level_of_measurement="ordinal").statistic
    assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b, rel=1e-12, abs=1e-12)


# --- shapes and interval methods ---------------------------------------------------------------


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_reads_items_x_raters_and_the_transpose_by_name(level):
    # Krippendorff's reliability data (observers x units) is the transpose of the default;
    # layout="raters x items" reads it as printed, with the same result, interval included.
    items = np.transpose(K2011_C)
    kwargs = {"level_of_measurement": level, "confidence": 0.9, "resamples": 30, "seed": 2}
    by_name = krippendorff_alpha(K2011_C, layout="raters x items", **kwargs)
    assert by_name == krippendorff_alpha(items, **kwargs)
    assert by_name == krippendorff_alpha(items, layout="items x raters", **kwargs)
    assert (by_name.n_units, by_name.interval_method) == (11, "percentile")
    assert krippendorff_alpha(items, level_of_measurement=level).interval_method is None


def test_icc_reads_the_transpose_by_name():
    x = np.array(SHROUT_FLEISS, dtype=float)
    res = intraclass_corr(x)
    by_name = intraclass_corr(x.T, layout="raters x items")
    np.testing.assert_array_equal(by_name.statistic, res.statistic)
    np.testing.assert_array_equal(by_name.ci_low, res.ci_low)
    assert (by_name.n_targets, by_name.n_raters) == (6, 4)
    assert res.interval_method == by_name.interval_method == "F"
    with pytest.raises(ValueError, match="layout must be one of"):
        intraclass_corr(x, layout="targets x raters")
