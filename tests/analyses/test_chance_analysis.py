"""The chance baseline of tie-calibrated acc_eq (calibrated_chance) on real data, WMT22 zh-en
(MQM, segment level by item) and HANNA (story level), against an independent simulation of
10,000 uninformative metrics: each the metric's scores permuted within each input over the
cells both rate (numpy's permutations, not the kernel's), tie-calibrated by
:func:`hanna_stats.kernels.tie_calibration`, as the WMT task calibrates a metric."""

from __future__ import annotations

import numpy as np
import pytest

from hanna_stats.analyses import calibrated_accuracy, calibrated_chance
from hanna_stats.kernels import chance_accuracy, tie_calibration

DRAWS = 10_000


def _permuted(h, m, draws, rng):
    """``draws`` copies of the metric matrix ``m`` (G, S), each input's values on the cells
    that both ``h`` and ``m`` have permuted uniformly (other cells as they are)."""
    complete = ~(np.isnan(h) | np.isnan(m))
    keys = np.where(complete, rng.random((draws, *m.shape)), 2.0)
    source = np.argsort(keys, axis=-1)  # complete cells first, in random order
    target = np.argsort(~complete, axis=-1, kind="stable")  # complete cells first, in order
    out = np.broadcast_to(m, (draws, *m.shape)).copy()
    rows = np.arange(m.shape[0])[:, None]
    for d in range(draws):
        out[d][rows, target] = np.where(
            complete[rows, target], m[rows, source[d]], out[d][rows, target]
        )
    return out


def _simulated(h, m, draws, seed, epsilon=None):
    """Mean and standard error of the tie-calibrated acc_eq of ``draws`` permuted metrics."""
    rng = np.random.default_rng(seed)
    values = []
    for lo in range(0, draws, 500):
        stack = _permuted(h, m, min(500, draws - lo), rng)
        values.append(tie_calibration(h[None], stack, epsilon=epsilon).statistic[0])
    values = np.concatenate(values)
    return values.mean(), values.std(ddof=1) / np.sqrt(draws)


def _matrix(study, name):
    """A measure's (inputs, systems) matrix, the human-written outputs left out."""
    keep = ~np.asarray(study.is_human)
    return study.values[list(study.measures).index(name)][:, keep]


def _check(study, criterion, measure, draws):
    """The kernel's chance for one (criterion, measure) against the independent simulation
    (4.5 standard errors of the difference of the two estimates), its exact value at the
    measure's epsilon against the simulation at that fixed epsilon (draws / 5), and its exact
    bound below the simulated baseline. Returns the kernel's result."""
    h, m = _matrix(study, criterion), _matrix(study, measure)
    res = chance_accuracy(h[None], m[None], draws=draws, seed=1)
    mean, se = _simulated(h, m, draws, seed=2)
    assert abs(res.chance[0, 0] - mean) <= 4.5 * np.hypot(res.chance_se[0, 0], se) + 1e-12
    assert res.bound[0, 0] <= mean + 4.5 * se + 1e-12
    fixed, fixed_se = _simulated(h, m, draws // 5, seed=3, epsilon=res.epsilon[0, 0])
    assert abs(res.expected[0, 0] - fixed) <= 4.5 * fixed_se + 1e-12
    return res


@pytest.mark.slow
@pytest.mark.parametrize("measure", ["COMET-22-refA", "metricx_xxl_MQM_2020-refA"])
def test_wmt22_chance_against_simulation(wmt22_study, measure):
    """About 2 minutes per measure on 2 cores, most of it the independent simulation."""
    res = _check(wmt22_study, "mqm", measure, DRAWS)
    assert res.statistic[0, 0] > res.chance[0, 0] + 0.05  # well above chance


@pytest.mark.parametrize("measure", ["BLEU", "chrF", "BERTScore F1"])
def test_hanna_chance_against_simulation(metric_study, measure):
    _check(metric_study, "Coherence", measure, DRAWS)


def test_analysis_is_the_kernel(metric_study):
    """calibrated_chance: calibrated_accuracy's statistic and epsilon, the kernel's chance
    (draws from one stream, measure after measure), per level."""
    for level in ("item", "system"):
        frame = calibrated_chance(metric_study, level=level, draws=20, seed=5)
        plain = calibrated_accuracy(metric_study, level=level)
        keys = ["measure", "against", "statistic", "epsilon"]
        assert frame.select(keys).equals(plain.select(keys))
        row = frame.row(0, named=True)
        h, m = _matrix(metric_study, row["against"]), _matrix(metric_study, row["measure"])
        res = chance_accuracy(h[None], m[None], level=level, draws=20, seed=5)
        assert row["chance"] == res.chance[0, 0] and row["chance_se"] == res.chance_se[0, 0]
        assert row["chance_at_epsilon"] == res.expected[0, 0]
        assert (frame["draws"] == 20).all() and (frame["seed"] == 5).all()
        assert (frame["chance_bound"] <= frame["chance"] + 4.5 * frame["chance_se"] + 1e-12).all()


def test_fixed_epsilon_is_exact(metric_study):
    frame = calibrated_chance(metric_study, epsilon=0.0, criterion="Empathy", level="system")
    assert frame["draws"].unique().to_list() == [0]
    assert frame["seed"].null_count() == frame.height
    assert (frame["chance_se"] == 0).all()
    assert (frame["chance"] == frame["chance_at_epsilon"]).all()
