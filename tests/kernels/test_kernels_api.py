"""The public face of the kernels: plain Python functions, string options checked by one helper
(a ValueError naming the argument and its allowed values), one randomness convention.

Several tests here failed on the former API, where exported Numba functions took integer codes
and silently accepted wrong types.
"""

from __future__ import annotations

import inspect
import subprocess
import sys

import numpy as np
import pytest
import scipy.stats as ss
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import hanna_stats.kernels as kernels
from hanna_stats.kernels import (
    BootstrapIndices,
    adjust_pvalues,
    aggregate_groups,
    bootstrap_ci,
    borda_count,
    group_correlations,
    kendall_counts,
    level_correlation,
    paired_bootstrap,
    permutation_test_pairs,
    rankdata,
    tau_from_counts,
    tie_ranks,
)
from hanna_stats.kernels._options import check_count, check_seed
from hanna_stats.vocabulary import WORDS

TIE_RULES, METHODS = WORDS["ties"], WORDS["method"]

rng = np.random.default_rng(0)
CUBE = rng.normal(size=(3, 6, 5)).round(1)


def test_public_kernels_are_plain_python_functions():
    for name in kernels.__all__:
        value = getattr(kernels, name)
        if callable(value) and not isinstance(value, type):
            assert inspect.isfunction(value), name


def test_option_tuples():
    assert TIE_RULES == ("average", "min", "max")
    assert METHODS == ("pearson", "spearman", "kendall")
    assert WORDS["level"] == ("item", "system", "global")
    assert WORDS["correction"] == ("bh", "by", "holm", "bonferroni")


def test_kernels_export_no_copy_of_the_words():
    tuples = [n for n in kernels.__all__ if isinstance(getattr(kernels, n), tuple)]
    assert tuples == []


def test_no_scipy_stats_on_import():
    code = "import sys, hanna_stats.kernels; assert 'scipy.stats' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------------------- ranks, Borda


@settings(deadline=None, max_examples=100)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 10), st.integers(1, 4)),
        elements=st.integers(0, 3).map(float),
    ),
    st.sampled_from(TIE_RULES),
)
def test_borda_count_string_rule_matches_scipy(table, rule):
    # Former bug: borda_count(scores, "average") applied the max rule.
    expected = sum(ss.rankdata(table[:, j], method=rule) - 1 for j in range(table.shape[1]))
    np.testing.assert_array_equal(borda_count(table, ties=rule), expected)


def test_borda_count_average_hand_worked():
    scores = [[3.0, 1.0], [3.0, 2.0], [1.0, 2.0]]
    # Column 0 ranks (average): 1.5, 1.5, 0; column 1: 0, 1.5, 1.5.
    np.testing.assert_array_equal(borda_count(scores, ties="average"), [1.5, 3.0, 1.5])
    np.testing.assert_array_equal(borda_count(scores), [1.5, 3.0, 1.5])
    np.testing.assert_array_equal(borda_count(scores, ties="max"), [2.0, 4.0, 2.0])


def test_tie_ranks_min_rule():
    # Former bug: tie_ranks(x, "min") returned max ranks.
    np.testing.assert_array_equal(tie_ranks([0.3, 0.1, 0.3, 0.2], ties="min"), [2, 0, 2, 1])
    np.testing.assert_array_equal(tie_ranks([0.3, 0.1, 0.3, 0.2], ties="max"), [3, 0, 3, 1])


@settings(deadline=None, max_examples=100)
@given(
    arrays(np.float64, st.integers(1, 40), elements=st.integers(-3, 3).map(float)),
    st.sampled_from(TIE_RULES),
)
def test_tie_ranks_match_scipy(x, rule):
    np.testing.assert_array_equal(tie_ranks(x, ties=rule), ss.rankdata(x, method=rule) - 1)
    np.testing.assert_array_equal(rankdata(list(x)), ss.rankdata(x))


@pytest.mark.parametrize(
    "call",
    [
        lambda: borda_count([[1.0]], ties="avg"),
        lambda: borda_count([[1.0]], ties=0),
        lambda: tie_ranks([1.0], ties="avg"),
        lambda: tie_ranks([1.0], ties=1),
    ],
)
def test_bad_tie_rule(call):
    with pytest.raises(ValueError, match=r"ties must be one of 'average', 'min', 'max'; got"):
        call()


def test_ranking_inputs_checked():
    with pytest.raises(ValueError, match="scores"):
        borda_count([1.0, 2.0])
    with pytest.raises(ValueError, match="NaN"):
        borda_count([[1.0], [np.nan]])
    with pytest.raises(ValueError, match="x"):
        tie_ranks([[1.0]])
    with pytest.raises(ValueError, match="x"):
        tie_ranks(["a", "b"])


# ----------------------------------------------------------------------------- correlations


def test_group_correlations_rejects_unknown_method():
    # Former bug: group_correlations(A, B, "tau", ...) computed Pearson.
    with pytest.raises(ValueError, match=r"method must be one of 'pearson', 'spearman', 'kendall'"):
        group_correlations(CUBE, CUBE, method="tau")


@pytest.mark.parametrize(
    "call",
    [
        lambda: group_correlations(CUBE, variant="d"),
        lambda: level_correlation(CUBE, variant="B"),
        lambda: tau_from_counts(kendall_counts([1.0, 2.0], [2.0, 1.0]), variant="x"),
        lambda: kernels.correlation([1, 2, 3], [1, 3, 2], method="kendall", variant=2),
    ],
)
def test_bad_variant_is_a_value_error(call):
    # Former bug: a bad variant surfaced as SystemError from compiled code.
    with pytest.raises(ValueError, match=r"variant must be one of 'a', 'b', 'c'"):
        call()


def test_python_lists_are_converted():
    # Former bug: a Python list was a Numba typing error.
    A = CUBE.tolist()
    for method in METHODS:
        np.testing.assert_array_equal(
            group_correlations(A, method=method), group_correlations(CUBE, method=method)
        )
    counts = kendall_counts([1, 2, 3], [1, 3, 2])
    assert (counts.concordant, counts.discordant) == (2, 1)
    assert tau_from_counts(counts, variant="a") == pytest.approx(1 / 3)


def test_bad_arrays_name_the_argument():
    with pytest.raises(ValueError, match="A must have 3 dimension"):
        group_correlations(CUBE[0])
    with pytest.raises(ValueError, match="B must match A"):
        group_correlations(CUBE, CUBE[:, :2])
    with pytest.raises(ValueError, match="A must be an array of real numbers"):
        group_correlations("abc")
    with pytest.raises(ValueError, match="NaN"):
        kendall_counts([1.0, np.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="counts must be a KendallCounts"):
        tau_from_counts((1, 2, 3))


def test_group_correlations_nan_policies():
    A = CUBE.copy()
    A[0, 1, 2] = np.nan
    omit = group_correlations(A, method="pearson")
    propagate = group_correlations(A, method="pearson", nan_policy="propagate")
    assert np.isnan(propagate[1, 0, 1]) and not np.isnan(omit[1, 0, 1])
    with pytest.raises(kernels.UndefinedCorrelationError) as error:
        group_correlations(A, method="pearson", nan_policy="raise")
    assert (error.value.i, error.value.j, error.value.group) == (0, 0, 1)


@settings(deadline=None, max_examples=50)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 6), st.integers(1, 3), st.integers(1, 3)),
        elements=st.one_of(st.floats(-1, 1), st.just(np.nan)),
    )
)
def test_aggregate_groups_equals_a_loop_in_group_order(R):
    mean, n_groups, n_skipped = aggregate_groups(R)
    for i in range(R.shape[1]):
        for j in range(R.shape[2]):
            total, count = 0.0, 0
            for g in range(R.shape[0]):
                if not np.isnan(R[g, i, j]):
                    total += R[g, i, j]
                    count += 1
            assert n_groups[i, j] == count and n_skipped[i, j] == R.shape[0] - count
            expected = total / count if count else np.nan
            np.testing.assert_array_equal(mean[i, j], expected)  # bitwise, NaN == NaN


def test_adjust_pvalues_bad_method():
    with pytest.raises(ValueError, match=r"method must be one of 'bh', 'by', 'holm'"):
        adjust_pvalues([0.1], method="fdr_bh")


# ----------------------------------------------------------------------------- randomness


@pytest.mark.parametrize("seed", [True, -1, 2**63, 1.5, "0", np.random.SeedSequence(0)])
def test_bad_seeds(seed):
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*63\)"):
        check_seed(seed)
    with pytest.raises(ValueError, match="seed"):
        paired_bootstrap(CUBE, resamples=10, seed=seed)


def test_good_seeds():
    assert check_seed(2**63 - 1).integers(10) == np.random.default_rng(2**63 - 1).integers(10)
    assert check_seed(np.int64(3)).integers(10) == np.random.default_rng(3).integers(10)
    generator = np.random.default_rng(1)
    assert check_seed(generator) is generator
    assert isinstance(check_seed(None), np.random.Generator)


@pytest.mark.parametrize("count", [0, -5, True, 2.0, 10**7])
def test_bad_counts(count):
    with pytest.raises(ValueError, match=r"resamples must be an integer in \[1, 1,000,000\]"):
        check_count("resamples", count)
    with pytest.raises(ValueError, match="resamples"):
        paired_bootstrap(CUBE, resamples=count)
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_ci(CUBE, resamples=count)
    with pytest.raises(ValueError, match="permutations"):
        permutation_test_pairs(CUBE, CUBE[0], permutations=count)


@pytest.mark.parametrize("seed", [0, 7])
def test_paired_bootstrap_default_draw(seed):
    G = CUBE.shape[1]
    indices = np.random.default_rng(seed).integers(0, G, size=(50, G))
    drawn = paired_bootstrap(CUBE, resamples=50, seed=seed)
    given_indices = paired_bootstrap(CUBE, indices)
    np.testing.assert_array_equal(drawn.wins, given_indices.wins)
    assert drawn.threshold == given_indices.threshold == 48


def test_paired_bootstrap_generator_seed():
    a = paired_bootstrap(CUBE, resamples=20, seed=np.random.default_rng(3))
    b = paired_bootstrap(CUBE, resamples=20, seed=3)
    np.testing.assert_array_equal(a.wins, b.wins)


def test_paired_bootstrap_bad_indices():
    with pytest.raises(ValueError, match="indices"):
        paired_bootstrap(CUBE, [[0, 1, 99]])
    with pytest.raises(ValueError, match="indices"):
        paired_bootstrap(CUBE, np.zeros((3, 6)))


def test_bootstrap_ci_precomputed_statistic():
    theta = level_correlation(CUBE, method="pearson").statistic
    base = bootstrap_ci(CUBE, method="pearson", resamples=50, seed=1)
    np.testing.assert_array_equal(base.statistic, theta)
    given_theta = bootstrap_ci(
        CUBE, method="pearson", resamples=50, seed=1, statistic=theta, ci_method="bca"
    )
    bca = bootstrap_ci(CUBE, method="pearson", resamples=50, seed=1, ci_method="bca")
    np.testing.assert_array_equal(given_theta.ci_low, bca.ci_low)
    shifted = bootstrap_ci(CUBE, method="pearson", resamples=50, seed=1, statistic=theta + 1)
    np.testing.assert_array_equal(shifted.statistic, theta + 1)
    np.testing.assert_array_equal(shifted.ci_low, base.ci_low)  # percentile: theta unused
    with pytest.raises(ValueError, match=r"statistic must have shape \(3, 3\)"):
        bootstrap_ci(CUBE, resamples=10, statistic=theta[:2])


def test_bootstrap_ci_indices_checked():
    inputs = np.random.default_rng(0).integers(0, 6, size=(10, 6))
    res = bootstrap_ci(CUBE, indices=BootstrapIndices(inputs, None))
    assert res.samples.shape == (10, 3, 3)
    with pytest.raises(ValueError, match=r"indices\.inputs"):
        bootstrap_ci(CUBE, indices=BootstrapIndices(inputs + 1, None))
    with pytest.raises(ValueError, match="indices must hold"):
        bootstrap_ci(CUBE, indices=BootstrapIndices(None, None))
    with pytest.raises(ValueError, match="ci_method must be one of 'percentile', 'bca'"):
        bootstrap_ci(CUBE, ci_method="BCa")


def test_permutation_swaps_given():
    swaps = np.random.default_rng(0).integers(0, 2, (30, 6, 5), dtype=np.uint8)
    a = permutation_test_pairs(CUBE, CUBE[0], swaps=swaps)
    b = permutation_test_pairs(CUBE, CUBE[0], permutations=30, seed=0)
    np.testing.assert_array_equal(a.pvalue, b.pvalue)
    with pytest.raises(ValueError, match="swaps must have shape"):
        permutation_test_pairs(CUBE, CUBE[0], swaps=swaps[:, :2])
    with pytest.raises(ValueError, match="level must be one of 'item', 'system', 'global'"):
        permutation_test_pairs(CUBE, CUBE[0], level="story")
