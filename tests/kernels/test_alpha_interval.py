"""Bootstrap interval of Krippendorff's alpha over units (``krippendorff_alpha(confidence=...)``).

Independent expected values: the PyPI ``krippendorff`` package (coincidence matrices built
explicitly) for the point value and, in a plain Python loop over the same resample indices, for
every resample's alpha; the percentile bounds of that loop are ``numpy.quantile`` of its defined
values. A hand-worked case checks the bounds without any package. The indices of a ``seed`` are
drawn here as the docstring says (``numpy.random.default_rng(seed).integers(0, N, (B, N))``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from hanna_stats.kernels import AlphaResult, bootstrap_indices, krippendorff_alpha
from hanna_stats.kernels import agreement as agreement_module

kd = pytest.importorskip("krippendorff")

NAN = math.nan
LEVELS = ("nominal", "ordinal", "interval")
RESAMPLES = 20

# Krippendorff (2011), reliability data with missing values: observers A-D x units 1-12, as
# printed (the krippendorff package's layout); the kernel reads its transpose, units x observers.
K2011_C = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]
)


def likert(values):
    return st.one_of(values, st.just(NAN))


# Small raters x units matrices (the krippendorff package's layout; the kernel reads their
# transposes): Likert values 1-5, or quarter steps in [-10, 10] (many distinct
# values: many nominal categories, ordinal ranks with few ties), with missing values.
reliability = st.one_of(
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(2, 4), st.integers(1, 12)),
        elements=likert(st.integers(1, 5).map(float)),
    ),
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(2, 4), st.integers(1, 12)),
        elements=likert(st.integers(-40, 40).map(lambda v: v / 4)),
    ),
)


def pairable_distinct(x):
    """Distinct values among the units with at least two values."""
    kept = x[:, (~np.isnan(x)).sum(axis=0) >= 2]
    return np.unique(kept[~np.isnan(kept)]).size


def reference_alpha(x, level):
    """The krippendorff package's alpha; NaN where it is undefined (fewer than two distinct
    pairable values: D_e = 0)."""
    if pairable_distinct(x) < 2:
        return NAN
    return float(kd.alpha(reliability_data=x, level_of_measurement=level))


def loop_bootstrap(x, level, indices, confidence):
    """Plain percentile bootstrap over units: alpha of ``x[:, row]`` for each row of indices."""
    samples = np.array([reference_alpha(x[:, row], level) for row in indices])
    valid = samples[~np.isnan(samples)]
    tail = (1 - confidence) / 2
    if valid.size == 0:
        return (NAN, NAN), 0
    low, high = np.quantile(valid, [tail, 1 - tail])
    return (float(low), float(high)), int(valid.size)


def assert_same(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- point value


@settings(deadline=None, max_examples=30)
@given(x=reliability, level=st.sampled_from(LEVELS), seed=st.integers(0, 2**32))
def test_point_value_unchanged_and_equal_to_krippendorff(x, level, seed):
    plain = krippendorff_alpha(x.T, level_of_measurement=level)
    with_ci = krippendorff_alpha(
        x.T, level_of_measurement=level, confidence=0.9, resamples=RESAMPLES, seed=seed
    )
    assert with_ci[:5] == pytest.approx(plain[:5], nan_ok=True)
    assert plain.confidence_interval == pytest.approx((NAN, NAN), nan_ok=True)
    assert plain.n_valid == 0
    assume(pairable_distinct(x) >= 2)
    want = kd.alpha(reliability_data=x, level_of_measurement=level)
    assert with_ci.statistic == pytest.approx(want, rel=1e-10, abs=1e-10)


def test_result_keeps_its_fields_in_order():
    assert AlphaResult._fields == (
        "statistic",
        "observed_disagreement",
        "expected_disagreement",
        "n_pairable",
        "n_units",
        "confidence_interval",
        "n_valid",
        "interval_method",
    )
    old = AlphaResult(NAN, NAN, NAN, 0, 0)  # positional construction of the five old fields
    assert old.n_valid == 0 and all(math.isnan(v) for v in old.confidence_interval)
    assert old.interval_method is None


def test_constant_non_integer_data_is_undefined():
    # Every value equal (0.1 sums with rounding): D_e = 0 exactly, alpha undefined, and every
    # resample too.
    x = np.full((2, 3), 0.1)
    for level in LEVELS:
        res = krippendorff_alpha(x.T, level_of_measurement=level, confidence=0.9, resamples=5)
        assert math.isnan(res.statistic), level
        assert res.n_valid == 0 and all(math.isnan(v) for v in res.confidence_interval)


# ----------------------------------------------------------------------------- the interval


@pytest.mark.parametrize("level", LEVELS)
@settings(deadline=None, max_examples=25)
@given(x=reliability, seed=st.integers(0, 2**32), confidence=st.sampled_from([0.5, 0.9, 0.95]))
def test_interval_equals_a_loop_bootstrap(level, x, seed, confidence):
    n_units = x.shape[1]
    indices = np.random.default_rng(seed).integers(0, n_units, (RESAMPLES, n_units))
    res = krippendorff_alpha(
        x.T, level_of_measurement=level, confidence=confidence, indices=indices
    )
    want, n_valid = loop_bootstrap(x, level, indices, confidence)
    assert res.n_valid == n_valid
    if n_valid:
        assert_same(res.confidence_interval, want)
    else:
        assert all(math.isnan(v) for v in res.confidence_interval)


@pytest.mark.parametrize("level", LEVELS)
def test_interval_on_krippendorff_2011(level):
    indices = np.random.default_rng(7).integers(0, 12, (40, 12))
    res = krippendorff_alpha(K2011_C.T, level_of_measurement=level, confidence=0.9, indices=indices)
    want, n_valid = loop_bootstrap(K2011_C, level, indices, 0.9)
    assert res.n_valid == n_valid == 40
    assert_same(res.confidence_interval, want)


def test_hand_worked_interval():
    # Units (1, 2), (3, 3), (5, 4), nominal. Resample [0, 1, 2] is the data: alpha = 2/7.
    # [1, 1, 1]: three units (3, 3), every value equal, D_e = 0: undefined, counted out.
    # [0, 0, 2]: (1, 2), (1, 2), (5, 4): each unit adds 2 ordered disagreeing pairs, so
    # D_o = 6/6; n_c = 2, 2, 1, 1 -> D_e = (36 - 10) / 30 -> alpha = 1 - 30/26 = -2/13.
    # Defined values -2/13 < 2/7; linear quantiles at 0.25 and 0.75 (confidence 0.5):
    # -2/13 + q (2/7 + 2/13) = -14/91 + q 40/91 -> -4/91 and 16/91.
    x = [[1, 2], [3, 3], [5, 4]]  # units x raters
    indices = [[0, 1, 2], [1, 1, 1], [0, 0, 2]]
    res = krippendorff_alpha(x, level_of_measurement="nominal", confidence=0.5, indices=indices)
    assert res.statistic == pytest.approx(2 / 7)
    assert res.n_valid == 2
    assert res.confidence_interval == pytest.approx((-4 / 91, 16 / 91), rel=1e-14)


def test_seed_reproducible_and_equal_to_its_indices():
    kwargs = {"level_of_measurement": "interval", "confidence": 0.95, "resamples": 50}
    first = krippendorff_alpha(K2011_C.T, seed=3, **kwargs)
    assert krippendorff_alpha(K2011_C.T, seed=3, **kwargs) == first
    assert krippendorff_alpha(K2011_C.T, seed=4, **kwargs) != first
    drawn = np.random.default_rng(3).integers(0, 12, (50, 12))
    level = kwargs["level_of_measurement"]
    by_indices = krippendorff_alpha(
        K2011_C.T, level_of_measurement=level, confidence=0.95, indices=drawn
    )
    assert by_indices == first
    helper = bootstrap_indices(12, 1, resamples=50, seed=3).inputs
    assert (
        krippendorff_alpha(K2011_C.T, level_of_measurement=level, confidence=0.95, indices=helper)
        == first
    )
    # A Generator is advanced by the draw: two calls on one Generator draw different indices.
    rng = np.random.default_rng(3)
    assert krippendorff_alpha(K2011_C.T, seed=rng, **kwargs) == first
    assert krippendorff_alpha(K2011_C.T, seed=rng, **kwargs) != first


def test_indices_any_integer_type_and_override_resamples():
    drawn = np.random.default_rng(0).integers(0, 12, (30, 12))
    want = krippendorff_alpha(K2011_C.T, confidence=0.9, indices=drawn)
    for same in (drawn.astype(np.int32), drawn.astype(np.uint16), drawn.tolist()):
        assert krippendorff_alpha(K2011_C.T, confidence=0.9, indices=same) == want
    # resamples is ignored when indices are given.
    assert krippendorff_alpha(K2011_C.T, confidence=0.9, indices=drawn, resamples=7) == want
    assert want.n_valid == 30


@pytest.mark.parametrize("level", LEVELS)
def test_blocks_of_resamples_do_not_change_the_result(level, monkeypatch):
    # The resamples are weighted in blocks; a block of one resample gives identical values.
    kwargs = {"level_of_measurement": level, "confidence": 0.8, "resamples": 25, "seed": 1}
    want = krippendorff_alpha(K2011_C.T, **kwargs)
    monkeypatch.setattr(agreement_module, "_BLOCK", 1)
    assert krippendorff_alpha(K2011_C.T, **kwargs) == want


def test_units_without_pairs_are_drawn_but_add_nothing():
    # Unit 3 has one value: a resample drawing it thrice holds two pairable units.
    x = [[1, 1], [2, 3], [2, 2], [4, NAN]]  # units x raters
    indices = [[0, 1, 2, 3], [3, 3, 3, 0], [3, 3, 3, 3]]
    res = krippendorff_alpha(x, level_of_measurement="interval", confidence=0.5, indices=indices)
    # [3, 3, 3, 0]: only unit (1, 1) pairable: D_e = 0. [3, 3, 3, 3]: nothing pairable.
    assert res.n_valid == 1
    assert res.confidence_interval == pytest.approx((res.statistic, res.statistic))


# ----------------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"confidence": 95}, "confidence"),
        ({"confidence": 0.0}, "confidence"),
        ({"confidence": True}, "confidence"),
        ({"confidence": "0.95"}, "confidence"),
        ({"confidence": 0.95, "resamples": 0}, "resamples"),
        ({"confidence": 0.95, "resamples": 2.5}, "resamples"),
        ({"confidence": 0.95, "seed": -1}, "seed"),
        ({"confidence": 0.95, "seed": "0"}, "seed"),
        ({"confidence": 0.95, "indices": [[0, 1, 2]]}, "indices"),  # 3 columns, not 12
        ({"confidence": 0.95, "indices": [[0] * 11 + [12]]}, "indices"),  # out of range
        ({"confidence": 0.95, "indices": [[-1] * 12]}, "indices"),
        ({"confidence": 0.95, "indices": np.zeros((2, 12))}, "indices"),  # floats
        ({"confidence": 0.95, "indices": list(range(12))}, "indices"),  # 1-D
        ({"confidence": 0.95, "indices": np.zeros((0, 12), dtype=int)}, "indices"),  # no row
        ({"indices": [list(range(12))]}, "indices"),  # no confidence
        ({"confidence": 0.95, "level_of_measurement": "ratio"}, "level_of_measurement"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        krippendorff_alpha(K2011_C.T, **kwargs)


def test_bad_arguments_without_pairable_units():
    nothing = [[1, NAN], [NAN, 2]]
    assert krippendorff_alpha(nothing, confidence=0.9).n_valid == 0
    with pytest.raises(ValueError, match="resamples"):
        krippendorff_alpha(nothing, confidence=0.9, resamples=0)
    with pytest.raises(ValueError, match="seed"):
        krippendorff_alpha(nothing, confidence=0.9, seed=-1)


# ----------------------------------------------------------------------------- user study


@pytest.fixture(scope="module")
def user_study(hanna_dir):
    from hanna_stats.store import read_user_study

    return read_user_study(Path(hanna_dir) / "user_study.csv")


def _wide(annotations, issue):
    return (
        annotations.filter(pl.col("issue") == issue)
        .sort("item", "rater")["flag"]
        .to_numpy()
        .reshape(100, 3)
        .astype(float)
    )


def test_user_study_alpha_interval(user_study):
    from hanna_stats.analyses import user_study_agreement

    table = user_study_agreement(user_study, confidence=0.9, resamples=200, seed=5)
    alpha = table.filter(pl.col("coefficient") == "krippendorff_alpha")
    indices = np.random.default_rng(5).integers(0, 100, (200, 100))
    for row in alpha.iter_rows(named=True):
        wide = _wide(user_study, row["issue"])
        if row["issue"] == "incorrectness":  # nobody flagged it: alpha and bounds undefined
            assert math.isnan(row["statistic"]) and math.isnan(row["ci_low"])
            assert math.isnan(row["ci_high"])
            continue
        assert row["statistic"] == pytest.approx(
            kd.alpha(reliability_data=wide.T, level_of_measurement="nominal"), abs=1e-12
        )
        want, _ = loop_bootstrap(wide.T, "nominal", indices, 0.9)
        assert_same((row["ci_low"], row["ci_high"]), want)
        assert row["standard_error"] is None
    # The default seed makes the table reproducible; another seed moves alpha's bounds only.
    again = user_study_agreement(user_study, confidence=0.9, resamples=200, seed=5)
    assert again.equals(table)
    other = user_study_agreement(user_study, confidence=0.9, resamples=200, seed=6)
    assert other.drop("ci_low", "ci_high").equals(table.drop("ci_low", "ci_high"))
    with pytest.raises(ValueError, match="resamples"):
        user_study_agreement(user_study, resamples=0)
    with pytest.raises(ValueError, match="seed"):
        user_study_agreement(user_study, seed=-1)


def test_cli_user_study_seed(hanna_dir, capsys):
    from hanna_stats.cli import main

    path = str(Path(hanna_dir) / "user_study.csv")
    args = ["user-study", path, "--format", "csv", "--resamples", "50"]
    assert main([*args, "--seed", "1"]) == 0
    one = pl.read_csv(capsys.readouterr().out.encode())
    assert main([*args, "--seed", "2"]) == 0
    two = pl.read_csv(capsys.readouterr().out.encode())
    alpha = pl.col("coefficient") == "krippendorff_alpha"
    assert one.filter(~alpha).equals(two.filter(~alpha))
    assert not one.filter(alpha)["ci_low"].equals(two.filter(alpha)["ci_low"])
    with pytest.raises(SystemExit) as exit_info:  # checked when the command line is read
        main([*args, "--seed", "-1"])
    assert exit_info.value.code == 2 and "--seed" in capsys.readouterr().err
