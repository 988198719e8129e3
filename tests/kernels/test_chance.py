"""The chance baseline of tie-calibrated acc_eq (hanna_stats.kernels.chance_accuracy) against an
exact enumeration: every permutation of the metric's values within each group, each scored by
:func:`tie_calibration` (at a fixed epsilon: the closed form must equal the mean exactly; with
calibration: the Monte Carlo mean must lie within its standard error of the mean)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hanna_stats.kernels import chance_accuracy, tie_calibration


def _enumerated(H, M, epsilon=None, statistic="acc_eq"):
    """Every (per group) permutation of the metric's values over the complete cells, scored by
    tie_calibration: the mean and the population sd of the statistic."""
    H, M = np.asarray(H, float), np.asarray(M, float)
    per_group = []
    for g in range(H.shape[0]):
        cells = [s for s in range(H.shape[1]) if not np.isnan(H[g, s] + M[g, s])]
        per_group.append([(cells, p) for p in itertools.permutations(cells)])
    values = []
    for combo in itertools.product(*per_group):
        permuted = M.copy()
        for g, (cells, p) in enumerate(combo):
            permuted[g, cells] = M[g, list(p)]
        res = tie_calibration(H[None], permuted[None], epsilon=epsilon, statistic=statistic)
        values.append(res.statistic[0, 0])
    return np.mean(values), np.std(values)


def _case(seed):
    """A small case: 1-2 groups of 3-5 observations, human ties, metric ties, a missing cell."""
    rng = np.random.default_rng(seed)
    groups, n = (2, 4) if seed % 2 else (1, 5)
    H = rng.integers(0, 3, size=(groups, n)).astype(float)
    M = rng.integers(0, 5, size=(groups, n)) + rng.choice([0.0, 0.5], size=(groups, n))
    if seed % 3 == 0:
        H[0, 0] = np.nan
    return H, M


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("statistic", ["acc_eq", "tau_eq"])
def test_fixed_epsilon_equals_enumeration(seed, statistic):
    H, M = _case(seed)
    for epsilon in (0.0, 0.5, 1.0, 2.5, 10.0):
        exact = _enumerated(H, M, epsilon, statistic)[0]
        res = chance_accuracy(H[None], M[None], epsilon=epsilon, statistic=statistic)
        assert res.chance[0, 0] == pytest.approx(exact, abs=1e-12)
        assert res.expected[0, 0] == res.bound[0, 0] == res.chance[0, 0]
        assert res.chance_se[0, 0] == 0.0 and res.draws == 0


@pytest.mark.parametrize("seed", range(4))
def test_calibrated_within_monte_carlo_error_of_enumeration(seed):
    """20,000 draws: the standard error is sd / sqrt(20,000); 4.5 of them, and the reported
    standard error within 10% of the enumeration's."""
    H, M = _case(seed)
    exact, sd = _enumerated(H, M)
    res = chance_accuracy(H[None], M[None], draws=20_000, seed=seed)
    se = sd / np.sqrt(20_000)
    assert abs(res.chance[0, 0] - exact) <= 4.5 * se + 1e-12
    assert res.chance_se[0, 0] == pytest.approx(se, rel=0.1, abs=1e-12)
    assert res.bound[0, 0] <= exact + 1e-12  # max_e E[acc(e)] <= E[max_e acc(e)]
    own = tie_calibration(H[None], M[None])
    expected = _enumerated(H, M, float(own.epsilon[0, 0]))[0]
    assert res.expected[0, 0] == pytest.approx(expected, abs=1e-12)
    assert res.statistic[0, 0] == own.statistic[0, 0]


def test_constant_metric_gets_the_human_tie_rate():
    """A metric that ties everything is the same under every permutation: the humans' tie rate,
    averaged over the groups, with no Monte Carlo error."""
    H = np.array([[[1.0, 1.0, 2.0, 3.0], [1.0, 1.0, 1.0, 2.0]]])
    M = np.zeros_like(H)
    res = chance_accuracy(H, M, draws=50)
    assert res.chance[0, 0] == pytest.approx((1 / 6 + 3 / 6) / 2, abs=1e-15)
    assert res.chance_se[0, 0] == pytest.approx(0.0, abs=1e-15)


def test_seeded_and_independent_of_blocks(monkeypatch):
    """The same seed, the same values, whether the uniforms are drawn at once or in blocks of
    one draw (the memory budget)."""
    rng = np.random.default_rng(7)
    H = rng.integers(0, 4, size=(2, 6, 5)).astype(float)
    M = rng.normal(size=(3, 6, 5))
    first = chance_accuracy(H, M, draws=300, seed=11)
    monkeypatch.setenv("HANNA_STATS_MEMORY_BUDGET", "64")
    again = chance_accuracy(H, M, draws=300, seed=11)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    other = chance_accuracy(H, M, draws=300, seed=12)
    assert not np.array_equal(first.chance, other.chance)


def test_undefined_cells_and_bad_options():
    H = np.array([[[1.0, 2.0, np.nan]]])
    M = np.array([[[0.5, 0.2, 0.1]]])
    res = chance_accuracy(H, M, nan_policy="propagate", draws=10)
    assert np.isnan(res.chance[0, 0]) and np.isnan(res.statistic[0, 0])
    with pytest.raises(ValueError, match="draws"):
        chance_accuracy(H, M, draws=0)
    with pytest.raises(ValueError, match="statistic"):
        chance_accuracy(H, M, statistic="acc")
