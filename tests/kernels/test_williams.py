"""Williams test: kernel against independently worked values, properties, and the HANNA analysis."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hanna_stats.analyses.significance import williams, williams_all
from hanna_stats.kernels.multitest import adjust_pvalues
from hanna_stats.kernels.williams import williams_test


def _pair(r12, r13, r23, n, alternative="greater"):
    res = williams_test([r12, r13], [[1.0, r23], [r23, 1.0]], n, alternative=alternative)
    return res.statistic[0, 1], res.pvalue[0, 1]


def test_steiger_case_a_by_hand():
    # Steiger (1980)'s example, psych::r.test(103, .4, .5, .1) ("Steiger case A"): n = 103,
    # r12 = .5, r13 = .4, r23 = .1. Worked by hand from eq. 7:
    # |R| = 1 - .25 - .16 - .01 + 2(.5)(.4)(.1) = .62; rbar = .45; (1 - r23)^3 = .729;
    # denominator = 2(.62)(102/100) + .2025(.729) = 1.2648 + .1476225 = 1.4124225;
    # t = .1 sqrt(102 (1.1) / 1.4124225) = .1 sqrt(79.4380...) = 0.89128...
    t, p = _pair(0.5, 0.4, 0.1, 103)
    assert t == pytest.approx(0.1 * np.sqrt(112.2 / 1.4124225), rel=1e-12)
    assert t == pytest.approx(0.89128, abs=1e-5)
    assert p == pytest.approx(scipy.stats.t.sf(t, 100), rel=1e-12)


def test_psych_r_test_outputs():
    # Inputs and outputs of R's psych::r.test as recorded in nlpstats' test suite
    # (danieldeutsch/nlpstats, tests/correlations/williams_test.py): random (9, 5) matrices from
    # np.random.seed(12); r.test was given |r12|, |r13|, |r23|.
    n, m = 9, 5
    rs = np.random.RandomState(12)
    X, Y, Z = rs.random_sample((n, m)), rs.random_sample((n, m)), rs.random_sample((n, m))
    pearson = lambda a, b: abs(scipy.stats.pearsonr(a.ravel(), b.ravel())[0])  # noqa: E731
    args = (pearson(X, Z), pearson(Y, Z), pearson(X, Y), n * m)  # global level: n = 45
    assert _pair(*args)[1] == pytest.approx(0.2716978, abs=5e-7)
    assert _pair(*args, alternative="two-sided")[1] == pytest.approx(0.5433956, abs=5e-7)

    X, Y, Z = rs.random_sample((n, m)), rs.random_sample((n, m)), rs.random_sample((n, m))
    spearman = lambda a, b: scipy.stats.spearmanr(a.mean(1), b.mean(1))[0]  # noqa: E731
    args = (spearman(Y, Z), spearman(X, Z), spearman(X, Y), n)  # system level: n = 9
    assert _pair(*args)[1] == pytest.approx(0.4658712, abs=5e-7)
    assert _pair(*args, alternative="two-sided")[1] == pytest.approx(0.9317423, abs=5e-7)


def test_less_is_the_lower_tail_of_psych_r_test():
    # r.test's one-sided p of the first case above is 0.2716978 for H1 |r12| > |r13|, with
    # t > 0; H1 |r12| < |r13| is the other tail of the same continuous t: 1 - 0.2716978; the
    # pair given the other way round tests the same hypothesis as "greater" did.
    n, m = 9, 5
    rs = np.random.RandomState(12)
    X, Y, Z = rs.random_sample((n, m)), rs.random_sample((n, m)), rs.random_sample((n, m))
    pearson = lambda a, b: abs(scipy.stats.pearsonr(a.ravel(), b.ravel())[0])  # noqa: E731
    r12, r13, r23 = pearson(X, Z), pearson(Y, Z), pearson(X, Y)
    assert _pair(r12, r13, r23, n * m, "less")[1] == pytest.approx(1 - 0.2716978, abs=5e-7)
    assert _pair(r13, r12, r23, n * m, "less")[1] == pytest.approx(0.2716978, abs=5e-7)


@settings(deadline=None, max_examples=60)
@given(
    st.floats(-0.99, 0.99),
    st.floats(-0.99, 0.99),
    st.floats(-0.99, 0.99),
    st.sampled_from([4, 10, 100]),
)
def test_less_greater_and_two_sided_against_student_t(ra, rb, rab, n):
    # Williams' t is continuous: p_less = P(T <= t) = scipy.stats.t.cdf(t, n - 3),
    # p_greater = P(T >= t), p_less + p_greater = 1 and two-sided = 2 min(p_less, p_greater).
    # A "less" branch that computes "greater" (or a tail swapped in one cell) breaks each.
    res = {
        alt: williams_test([ra, rb], [[1.0, rab], [rab, 1.0]], n, alternative=alt)
        for alt in ("less", "greater", "two-sided")
    }
    t = res["greater"].statistic[0, 1]
    if np.isnan(t):
        return
    less, greater, two = (res[alt].pvalue for alt in ("less", "greater", "two-sided"))
    for a, b, sign in ((0, 1, 1.0), (1, 0, -1.0)):
        lower, upper = scipy.stats.t.cdf(sign * t, n - 3), scipy.stats.t.sf(sign * t, n - 3)
        assert less[a, b] == pytest.approx(lower, rel=1e-9, abs=1e-15)
        assert greater[a, b] == pytest.approx(upper, rel=1e-9, abs=1e-15)
        assert less[a, b] + greater[a, b] == pytest.approx(1.0, abs=1e-12)
        assert two[a, b] == pytest.approx(min(1.0, 2 * min(less[a, b], greater[a, b])), rel=1e-12)


def test_signs_are_aligned_with_the_criterion():
    # Negating metric a (r_a -> -r_a, R[a, b] -> -R[a, b]) is the same test.
    base = williams_test([0.8, 0.6], [[1.0, 0.5], [0.5, 1.0]], 20)
    flipped = williams_test([-0.8, 0.6], [[1.0, -0.5], [-0.5, 1.0]], 20)
    np.testing.assert_array_equal(base.statistic, flipped.statistic)
    # Not a bare abs() of R: a negatively correlated metric whose correlation with the other
    # metric is positive is a different (here, much less dependent) case.
    other = williams_test([-0.8, 0.6], [[1.0, 0.5], [0.5, 1.0]], 20)
    assert other.statistic[0, 1] != pytest.approx(base.statistic[0, 1])


def test_diagonal_nan_and_shapes():
    res = williams_test(np.array([[0.5, 0.4, 0.3], [0.1, 0.2, 0.3]]), np.eye(3), 10)
    assert res.statistic.shape == (2, 3, 3)
    assert np.isnan(res.statistic[:, [0, 1, 2], [0, 1, 2]]).all()
    assert (res.df == 7).all()


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"alternative": "bigger"}, "alternative"),
        ({"n": 3}, "n"),
        ({"R": np.eye(3)}, "R"),
        ({"r": np.zeros((2, 2, 2))}, "r"),
    ],
)
def test_bad_arguments(kwargs, name):
    args = {"r": [0.5, 0.4], "R": np.eye(2), "n": 10} | kwargs
    with pytest.raises(ValueError, match=name):
        williams_test(args.pop("r"), args.pop("R"), **args)


@st.composite
def _correlations(draw):
    """Correlations of a criterion with M measures and among them, from real data."""
    measures = draw(st.integers(2, 5))
    items = draw(st.integers(measures + 3, 30))
    data = draw(arrays(np.float64, (items, measures + 1), elements=st.floats(-10, 10, width=32)))
    if (np.ptp(data, axis=0) < 1e-3).any():
        data = data + np.random.default_rng(0).normal(size=data.shape)
    C = np.corrcoef(data, rowvar=False)
    return C[0, 1:], np.ascontiguousarray(C[1:, 1:]), items


@settings(deadline=None, max_examples=60)
@given(_correlations(), st.integers(0, 4))
def test_properties(corr, flip):
    r, R, n = corr
    one = williams_test(r, R, n)
    two = williams_test(r, R, n, alternative="two-sided")
    off = ~np.eye(r.size, dtype=bool)
    t, p1, p2 = one.statistic[off], one.pvalue[off], two.pvalue[off]
    ok = ~np.isnan(t)
    assert ((p1[ok] >= 0) & (p1[ok] <= 1) & (p2[ok] >= 0) & (p2[ok] <= 1)).all()
    np.testing.assert_allclose(one.statistic, -one.statistic.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(two.pvalue, two.pvalue.T, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose((one.pvalue + one.pvalue.T)[off][ok], 1.0, rtol=1e-12)
    assert np.isnan(p1[~ok]).all() and np.isnan(p2[~ok]).all()
    # Reversing the sign of one measure changes nothing.
    k = flip % r.size
    sign = np.ones(r.size)
    sign[k] = -1.0
    flipped = williams_test(r * sign, R * np.outer(sign, sign), n)
    np.testing.assert_allclose(flipped.statistic, one.statistic, rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def con(hanna_study):
    return hanna_study


def test_hanna_example_against_scipy_and_eq7(con):
    # System level, Pearson, Empathy: BERTScore F1 against BLEU (docs/conventions.md, section 7).
    # Reference: scipy.stats.pearsonr on the 10 systems' means, Steiger's eq. 7 written out
    # here, and scipy.stats.t's tails with n - 3 = 7 degrees of freedom.
    df = williams(con, criterion="EM", level="system", method="pearson", correction="holm")
    assert df.height == 72 * 71
    row = df.filter((pl.col("measure_a") == "BERTScore F1") & (pl.col("measure_b") == "BLEU"))
    assert row["criterion"][0] == "Empathy"
    assert row["n"][0] == 10
    cube = con.cube(measures=["Empathy", "BERTScore F1", "BLEU"])
    human, a, b = np.nanmean(cube.values, axis=1)
    r12, r13 = scipy.stats.pearsonr(a, human)[0], scipy.stats.pearsonr(b, human)[0]
    r23 = scipy.stats.pearsonr(a, b)[0]
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    t = (r12 - r13) * np.sqrt(9 * (1 + r23) / (2 * det * 9 / 7 + rbar**2 * (1 - r23) ** 3))
    assert (row["r_a"][0], row["r_b"][0]) == pytest.approx((r12, r13), abs=1e-12)
    assert row["statistic"][0] == pytest.approx(t, rel=1e-9)
    assert row["pvalue"][0] == pytest.approx(scipy.stats.t.sf(t, 7), rel=1e-9)
    back = df.filter((pl.col("measure_a") == "BLEU") & (pl.col("measure_b") == "BERTScore F1"))
    assert back["statistic"][0] == pytest.approx(-t, rel=1e-9)
    assert back["pvalue"][0] == pytest.approx(scipy.stats.t.sf(-t, 7), rel=1e-9)
    np.testing.assert_array_equal(
        df["pvalue_adjusted"].to_numpy(),
        adjust_pvalues(df["pvalue"].to_numpy(), method="holm"),
    )


def test_williams_all_matches_single_calls(con):
    every = williams_all(con)
    assert every.height == 6 * 2 * 3 * 72 * 71
    ns = every.group_by("level").agg(pl.col("n").unique()).sort("level")
    assert ns["n"].to_list() == [[96], [10]]  # item: inputs (the paper's convention); system
    single = williams(con, criterion="Surprise", level="story", method="kendall")
    part = every.filter(
        (pl.col("criterion") == "Surprise")
        & (pl.col("level") == "item")
        & (pl.col("method") == "kendall")
    )
    assert part.equals(single)
    custom = williams(con, criterion="CX", level="story", method="pearson", n=50)
    assert (custom["n"] == 50).all()


def test_williams_all_families_are_bh_by_statsmodels(con):
    # family="criterion": Benjamini-Hochberg within each (criterion, level, method) block of
    # ordered pairs; family="all": over every test of the call (statsmodels' fdr_bh, NaN
    # p-values left out of the family).
    from statsmodels.stats.multitest import multipletests

    def bh(p):
        out = np.full(p.shape, np.nan)
        ok = ~np.isnan(p)
        out[ok] = multipletests(p[ok], method="fdr_bh")[1]
        return out

    kwargs = {"levels": ("system",), "methods": ("pearson",), "correction": "bh"}
    blocks = williams_all(con, **kwargs)
    assert blocks["criterion"].n_unique() == 6
    for (criterion,), part in blocks.group_by("criterion"):
        expected = bh(part["pvalue"].to_numpy())
        np.testing.assert_allclose(part["pvalue_adjusted"], expected, rtol=1e-12, err_msg=criterion)
    every = williams_all(con, family="all", **kwargs)
    np.testing.assert_allclose(every["pvalue_adjusted"], bh(every["pvalue"].to_numpy()), rtol=1e-12)


def test_williams_bad_arguments(con):
    with pytest.raises(ValueError, match="criterion"):
        williams(con, criterion="Fluency")
    with pytest.raises(ValueError, match="level"):
        williams(con, criterion="EM", level="corpus")
    with pytest.raises(ValueError, match="correction"):
        williams(con, criterion="EM", correction="fdr")
    with pytest.raises(ValueError, match="n must"):
        williams(con, criterion="EM", n=2.5)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_pvalue_is_nan_wherever_the_statistic_is(alternative):
    # Regression: with alternative="two-sided" the p-value was 1.0 where t was NaN.
    r = [0.5, np.nan, 0.3, 0.5]
    R = [[1, 0.2, 0.4, 0.4], [0.2, 1, 0.1, 0.1], [0.4, 0.1, 1, 1.0], [0.4, 0.1, 1.0, 1]]
    res = williams_test(r, R, 20, alternative=alternative)
    np.testing.assert_array_equal(np.isnan(res.pvalue), np.isnan(res.statistic))
    assert np.isnan(res.pvalue[0, 1]) and np.isnan(res.pvalue[1, 0])  # NaN input
    assert np.isnan(res.pvalue[2, 3]) and np.isnan(res.pvalue[3, 2])  # denominator < 0
    assert not np.isnan(res.pvalue[0, 2])


@settings(deadline=None, max_examples=100)
@given(
    st.floats(-0.99, 0.99),
    st.floats(-0.99, 0.99),
    st.floats(-0.99, 0.99),
    st.sampled_from([4, 10, 100, 10**6]),
)
def test_one_sided_pvalues_complementary_and_tiny_ones_precise(ra, rb, rab, n):
    res = williams_test([ra, rb], [[1.0, rab], [rab, 1.0]], n)
    t, p = res.statistic[0, 1], res.pvalue
    if np.isnan(t):
        assert np.isnan(p[0, 1]) and np.isnan(p[1, 0])
        return
    assert p[0, 1] + p[1, 0] == 1.0
    small = scipy.stats.t.sf(abs(t), n - 3)
    assert min(p[0, 1], p[1, 0]) == pytest.approx(small, rel=1e-12, abs=0)


@pytest.mark.parametrize("r23", [1.0, -1.0])
def test_perfectly_correlated_measures_are_undefined(r23):
    """|r23| = 1 is 0/0 in eq. 7; rounding used to give t = 0 (or a spurious value) there."""
    for r12, r13 in ((0.6, 0.6), (0.7, 0.6), (0.3, 0.8)):
        t, p = _pair(r12, r13, r23, 10)
        assert np.isnan(t) and np.isnan(p)
