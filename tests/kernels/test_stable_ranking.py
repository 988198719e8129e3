"""System-pair power and the stable ranking probability (hanna_stats.kernels.stable_ranking).

Expected values: statsmodels' ``TTestPower`` (closed form), scipy.stats.ttest_rel on the same
simulated studies, the package's ``pairwise_pvalues`` and ``paired_bootstrap`` called one study
at a time, the exact size of a Monte Carlo permutation test, and an exhaustive enumeration of
the disjoint splits of a 7-input pilot. Monte Carlo tolerances are 3 standard errors (stated).
"""

from __future__ import annotations

import itertools
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.power import TTestPower

from hanna_stats.kernels import paired_bootstrap, pairwise_pvalues
from hanna_stats.kernels.power import draw_study, paired_t_power, pilot_ratings, study_generator
from hanna_stats.kernels.stable_ranking import (
    draw_signs,
    sign_test_pvalues,
    stable_ranking_probability,
    system_pair_power,
)


def normal_pilot(inputs=4000, seed=1):
    """Two systems whose item differences are normal (sd 1): the pilot as the population."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=inputs)
    return np.stack([a, a - rng.normal(size=inputs)], axis=1)


def pilot_sd(H):
    """sd (ddof 0) of the pilot's differences: that of a simulated input's difference."""
    return float((H[:, 0] - H[:, 1]).std())


@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_paired_t_power_matches_statsmodels(alternative):
    H = normal_pilot()
    studies, n, delta = 2000, 30, 0.5
    res = system_pair_power(
        H, pair=(0, 1), inputs=n, delta=delta, test="t", studies=studies, alternative=alternative
    )
    expected = TTestPower().power(
        effect_size=delta / pilot_sd(H),
        nobs=n,
        alpha=0.05,
        alternative="larger" if alternative == "greater" else alternative,
    )
    # The package's closed form (hanna_stats.kernels.power) is statsmodels' number.
    assert paired_t_power(delta / pilot_sd(H), n, alternative=alternative) == pytest.approx(
        expected
    )
    se = math.sqrt(expected * (1 - expected) / studies)  # about 0.0097
    assert abs(res.power - expected) <= 3 * se, (res, expected)
    assert res.standard_error == pytest.approx(math.sqrt(res.power * (1 - res.power) / studies))
    assert res.rejections == round(res.power * studies) and res.studies == studies


def test_t_rejections_are_scipy_ttest_rel_on_the_same_studies():
    H = normal_pilot(500)
    res = system_pair_power(
        H, pair=(1, 0), inputs=12, delta=-0.3, test="t", studies=300, alternative="less", seed=5
    )
    # The pair (1, 0): a = system 1, b = system 0 shifted to a mean difference of -0.3.
    shifted = H[:, [1, 0]].copy()
    shifted[:, 1] += np.mean(H[:, 1] - H[:, 0]) + 0.3
    pilot = pilot_ratings(shifted)
    count = 0
    for i in range(300):
        rng = study_generator(5, i)
        x = draw_study(pilot, rng.integers(0, 500, size=12), None, rng)
        count += stats.ttest_rel(x[:, 0], x[:, 1], alternative="less").pvalue <= 0.05
    assert res.rejections == count


def test_bootstrap_power_is_the_loop_of_paired_bootstrap_calls():
    H = normal_pilot(300)
    kwargs = dict(pair=(0, 1), inputs=20, delta=0.1, test="bootstrap", studies=150, resamples=200)
    shifted = H.copy()
    shifted[:, 1] += np.mean(H[:, 0] - H[:, 1]) - 0.1
    pilot = pilot_ratings(shifted)
    labels = []
    for i in range(150):
        rng = study_generator(0, i)
        x = draw_study(pilot, rng.integers(0, 300, size=20), None, rng)
        labels.append(paired_bootstrap(x[None], resamples=200, seed=rng).labels[0, 0])
    labels = np.array(labels)
    for alternative, wanted in (("two-sided", labels != 0), ("greater", labels == 1)):
        res = system_pair_power(H, alternative=alternative, **kwargs)
        assert res.rejections == wanted.sum()
    assert system_pair_power(H, alternative="less", **kwargs).rejections == (labels == 2).sum()
    assert (labels == 1).sum() > (labels == 2).sum() > 0  # the case has every label


def test_permutation_test_size_and_power():
    H = normal_pilot()
    studies = 2000
    null = system_pair_power(H, pair=(0, 1), inputs=30, delta=0.0, test="permutation",
                             studies=studies, permutations=999, seed=3)  # fmt: skip
    # A Monte Carlo sign-flip test without the identity: P(2 min(p) <= 0.05) = 2 * 26 / 1000
    # when T and its 999 flips are exchangeable (continuous differences).
    size = 2 * 26 / 1000
    assert abs(null.power - size) <= 3 * math.sqrt(size * (1 - size) / studies)  # 3 x 0.005
    alt = system_pair_power(H, pair=(0, 1), inputs=30, delta=0.5, test="permutation",
                            studies=studies, seed=3)  # fmt: skip
    expected = TTestPower().power(effect_size=0.5 / pilot_sd(H), nobs=30, alpha=0.05)
    # The permutation test's power is the t-test's up to O(1/n): 4 SE of the estimate (0.0097).
    assert abs(alt.power - expected) <= 4 * math.sqrt(expected * (1 - expected) / studies)


def test_sign_test_pvalues_are_pairwise_pvalues_of_x_and_minus_x():
    rng = np.random.default_rng(2)
    x = rng.integers(1, 6, size=(40, 5)).astype(float)  # ties: the tolerance matters
    signs = draw_signs(40, 500, rng)
    greater, less = sign_test_pvalues(x, signs)
    both = pairwise_pvalues(np.stack([x, -x]), signs=signs)
    a, b = np.triu_indices(5, 1)
    np.testing.assert_array_equal(greater, both[0][a, b])
    np.testing.assert_array_equal(less, both[1][a, b])
    # By hand: #{T* >= T} / K over the signs.
    d = x[:, 0] - x[:, 1]
    assert greater[0] == np.mean(signs @ d >= d.sum() - 1e-9)
    assert less[0] == np.mean(signs @ d <= d.sum() + 1e-9)


def test_rating_draws_and_their_power_against_the_closed_form():
    """Ratings per item: a rating drawn with replacement from each item's available ones. The
    simulated difference's variance is var_g(d_g) + mean_g(var_r(a) + var_r(b)) / R' (ddof 0),
    so the t power is TTestPower's with that sd."""
    rng = np.random.default_rng(4)
    G, R = 3000, 30
    item = rng.normal(size=(G, 2)) + np.array([0.0, -0.3])
    ratings = item[..., None] + rng.normal(scale=1.5, size=(G, 2, R))
    ratings[:, :, R - 5 :][rng.random((G, 2, 5)) < 0.5] = np.nan  # some items lack ratings
    pilot = pilot_ratings(ratings)
    within = np.nanvar(ratings, axis=2).sum(axis=1)
    for r, studies in ((1, 2000), (4, 2000)):
        sd = math.sqrt((pilot.scores[:, 0] - pilot.scores[:, 1]).var() + within.mean() / r)
        expected = TTestPower().power(effect_size=0.6 / sd, nobs=40, alpha=0.05)
        # The pilot's own difference is about 0.3: delta = 0.6 shifts b by about -0.3.
        res = system_pair_power(ratings, pair=(0, 1), inputs=40, ratings=r, delta=0.6,
                                test="t", studies=studies, seed=r)  # fmt: skip
        assert abs(res.power - expected) <= 3 * math.sqrt(expected * (1 - expected) / studies)


def test_draw_study_takes_only_available_ratings():
    ratings = np.array([[[1.0, np.nan, 5.0], [np.nan, np.nan, np.nan]]])
    pilot = pilot_ratings(ratings)
    x = draw_study(pilot, np.zeros(4000, dtype=np.int64), 1, np.random.default_rng(0))
    assert set(np.unique(x[:, 0])) == {1.0, 5.0} and np.isnan(x[:, 1]).all()
    assert abs((x[:, 0] == 5.0).mean() - 0.5) <= 3 * math.sqrt(0.25 / 4000)


def test_executor_gives_the_same_result_bit_for_bit():
    rng = np.random.default_rng(0)
    H = rng.normal(size=(60, 4)) + np.arange(4) * 0.2
    srp = stable_ranking_probability(H, inputs=20, studies=40, permutations=200, seed=9)
    power = system_pair_power(H, pair=(0, 3), inputs=15, test="permutation", studies=40)
    with ThreadPoolExecutor(2) as pool:
        srp_pool = stable_ranking_probability(
            H, inputs=20, studies=40, permutations=200, seed=9, executor=pool
        )
        power_pool = system_pair_power(
            H, pair=(0, 3), inputs=15, test="permutation", studies=40, executor=pool
        )
    assert power_pool == power
    for got, want in zip(srp_pool, srp, strict=True):
        np.testing.assert_array_equal(got, want)
    seen = []
    progress = stable_ranking_probability(
        H, inputs=20, studies=40, permutations=200, seed=9,
        progress=lambda blocks, **_: seen.append(1) or blocks,
    )  # fmt: skip
    assert seen and all(np.array_equal(g, w) for g, w in zip(progress, srp, strict=True))


def test_srp_of_separated_systems_is_one():
    rng = np.random.default_rng(0)
    H = rng.normal(scale=0.1, size=(40, 3)) + np.array([3.0, 0.0, 1.5])
    res = stable_ranking_probability(H, inputs=20, studies=30, permutations=200)
    assert (res.statistic, res.stable, res.top_agreement, res.mean_agreement) == (1.0, 30, 1.0, 1.0)
    assert res.pairs.tolist() == [[0, 1], [0, 2], [1, 2]]
    np.testing.assert_array_equal(res.pair_significant, 1.0)


def test_identical_systems_agree_as_the_test_size_says():
    """Two systems whose differences are symmetric about 0: each study's outcome is a > b or
    b > a with probability 26/1000 each (999 flips, no identity), else not significant; the two
    studies are independent, so they agree with probability (1 - q)^2 + 2 (q / 2)^2, q = 52/1000,
    and have the same top system with probability 1/2."""
    rng = np.random.default_rng(6)
    d = rng.normal(size=10000)
    base = rng.normal(size=20000)
    H = np.stack([base, base - np.concatenate([d, -d])], axis=1)
    studies = 3000
    res = stable_ranking_probability(H, inputs=25, studies=studies, permutations=999, seed=2)
    q = 52 / 1000
    expected = (1 - q) ** 2 + 2 * (q / 2) ** 2
    se = math.sqrt(expected * (1 - expected) / studies)  # about 0.0056
    assert abs(res.statistic - expected) <= 3 * se
    assert res.pair_agreement[0] == res.statistic and res.stable == round(res.statistic * studies)
    assert abs(res.pair_significant[0] - q) <= 3 * math.sqrt(q * (1 - q) / (2 * studies))
    assert abs(res.top_agreement - 0.5) <= 3 * math.sqrt(0.25 / studies)  # 3 x 0.0091


#: A 7-input, 3-system pilot with integer scores (ties on purpose).
TINY = np.array(
    [[3, 1, 2], [4, 1, 4], [2, 2, 1], [5, 0, 3], [1, 3, 1], [3, 2, 2], [4, 4, 3]], dtype=float
)


def hand_outcome(x):
    """Per system pair: with 3 inputs, the two-sided sign-flip test at alpha = 0.4 is
    significant exactly when the three differences have one strict sign (T is reached by the
    identity flip alone, p = 1/8, 2p = 0.25; any other case has p >= 2/8, 2p >= 0.5)."""
    out = []
    for a, b in itertools.combinations(range(3), 2):
        d = x[:, a] - x[:, b]
        out.append(1 if (d > 0).all() else 2 if (d < 0).all() else 0)
    return out


def hand_top(x):
    m = x.mean(axis=0)
    return tuple(m == m.max())


def test_srp_on_a_tiny_pilot_matches_the_enumeration_of_its_disjoint_splits():
    splits = []
    for first in itertools.combinations(range(7), 3):
        rest = [g for g in range(7) if g not in first]
        splits.extend((first, second) for second in itertools.combinations(rest, 3))
    assert len(splits) == 140  # every ordered pair of disjoint triples, equally likely
    outcomes = [(hand_outcome(TINY[list(f)]), hand_outcome(TINY[list(s)])) for f, s in splits]
    srp = np.mean([o1 == o2 for o1, o2 in outcomes])
    pair = np.mean([[u == v for u, v in zip(o1, o2, strict=True)] for o1, o2 in outcomes], axis=0)
    top = np.mean([hand_top(TINY[list(f)]) == hand_top(TINY[list(s)]) for f, s in splits])
    studies = 3000
    # 10,000 flips: the Monte Carlo p-values sit 11 sd or more from the 0.2 threshold.
    res = stable_ranking_probability(TINY, inputs=3, studies=studies, alpha=0.4,
                                     permutations=10000, seed=1)  # fmt: skip
    assert 0.2 < srp < 0.9 and 0.2 < top < 0.9  # the case is not degenerate
    for got, want in [
        (res.statistic, srp),
        (res.top_agreement, top),
        *zip(res.pair_agreement, pair, strict=True),
    ]:
        assert abs(got - want) <= 3 * math.sqrt(want * (1 - want) / studies) + 1e-12, (got, want)


def test_arguments_are_checked():
    H = np.zeros((10, 3))
    with pytest.raises(ValueError, match="at most half the pilot's 10 inputs"):
        stable_ranking_probability(H, inputs=6)
    with pytest.raises(ValueError, match="pair must be two different systems"):
        system_pair_power(H, pair=(1, 1), inputs=5)
    with pytest.raises(ValueError, match="test must be one of"):
        system_pair_power(H, pair=(0, 1), inputs=5, test="wilcoxon")
    with pytest.raises(ValueError, match="alpha must lie in"):
        system_pair_power(H, pair=(0, 1), inputs=5, alpha=0.6)
    with pytest.raises(ValueError, match="no score of system 2"):
        stable_ranking_probability(np.where(np.arange(3) == 2, np.nan, H), inputs=2)
    with pytest.raises(ValueError, match="ratings must be an integer"):
        stable_ranking_probability(H, inputs=2, ratings=0)


def test_srp_on_wmt22_zh_en_mqm_halved_and_quartered(wmt22_study):
    """WMT22 zh-en MQM (14 systems, 1,875 segments, NaN-free): SRP, per-pair and top agreement
    with studies of half and a quarter of the segments (the figures printed go to the report)."""
    cube = wmt22_study.cube(measures=["mqm"])
    H = cube.values[0]
    H = H[:, ~np.isnan(H).all(axis=0)]
    H = H[~np.isnan(H).any(axis=1)]
    assert H.shape == (1875, 14)
    results = {}
    for name, inputs in (("half", H.shape[0] // 2), ("quarter", H.shape[0] // 4)):
        res = stable_ranking_probability(H, inputs=inputs, studies=120, seed=0)
        results[name] = res
        print(name, inputs, res.statistic, res.standard_error, res.mean_agreement,
              res.mean_standard_error, res.top_agreement, res.top_standard_error)  # fmt: skip
        for value in (res.statistic, res.mean_agreement, res.top_agreement):
            assert 0.0 <= value <= 1.0
    half, quarter = results["half"], results["quarter"]
    assert half.statistic >= quarter.statistic - 3 * math.hypot(
        half.standard_error, quarter.standard_error
    )
    # More segments, more pairs of systems decided the same way by both studies.
    assert half.mean_agreement - quarter.mean_agreement > 3 * math.hypot(
        half.mean_standard_error, quarter.mean_standard_error
    )
