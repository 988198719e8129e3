"""SPA and tie calibration on real data, WMT22 zh-en (../shared/data/wmt22), against
mt-metrics-eval (google-research/mt-metrics-eval, commit 68a481a).

The expected values were obtained by running MTME's own code outside this project on the same
files: ``data.EvalSet("wmt22", "zh-en", read_stored_metric_scores=True)``,
``data.GetCorrelations(evs, "seg", {"refA"}, set(), include_human=False,
include_outliers=False, gold_name="mqm", primary_metrics=False)`` (its 14 MT systems with MQM
scores), then

* SPA: ``pce.compute_pairwise_p_values`` of the gold and of the metric (reshaped as
  ``stats.PairwiseConfidenceError`` does), averaged over 50 draws of 2,000 permutations (seeds
  4 to 53: 100,000 permutations), and ``pce.compute_one_minus_pce``. MTME's default (1,000
  permutations, seed 4) gives 0.6457, 0.65913, 0.87716, 0.82908;
* tie calibration: ``stats.KendallWithTiesOpt(variant="acc23", average_by="item",
  sample_rate=1.0)``, WMT's segment-level task.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from hanna_stats.analyses import calibrated_accuracy, spa
from hanna_stats.kernels import soft_pairwise_accuracy

METRICS = ("BLEU-refA", "chrF-refA", "COMET-22-refA", "COMETKiwi-src")
#: MTME's SPA with 100,000 permutations (Monte Carlo sd about 0.0001).
MTME_SPA = (0.64618, 0.65941, 0.87614, 0.82809)
#: MTME's KendallWithTiesOpt by item: (acc_eq, epsilon).
MTME_ACC_EQ = (
    (0.4223120879120952, 91.88330211312257),
    (0.4244688644688678, 23.797625314049327),
    (0.5407824175824214, 0.14665389599254075),
    (0.516395604395607, 0.17677302491426272),
)


def _rows(frame):
    rows = frame.filter((pl.col("against") == "mqm") & pl.col("measure").is_in(METRICS))
    return {row["measure"]: row for row in rows.iter_rows(named=True)}


def test_spa_matches_mtme(wmt22_study):
    # The analysis: the 4 systems without MQM scores are left out. Over 20 seeds the sd of
    # SPA is at most 0.0008 with 1,000 permutations and 0.0003 with 10,000: tolerances of
    # about 5 sd.
    rows = _rows(spa(wmt22_study, permutations=1000, seed=0))
    for name, expected in zip(METRICS, MTME_SPA, strict=True):
        row = rows[name]
        assert (row["n_systems"], row["n_systems_dropped"]) == (14, 4)
        assert (row["n_pairs"], row["n_missing"]) == (91, 0)
        assert row["statistic"] == pytest.approx(expected, abs=0.004)
    cube = wmt22_study.cube(measures=["mqm", *METRICS])
    res = soft_pairwise_accuracy(cube.values[:1], cube.values[1:], permutations=10_000, seed=1)
    np.testing.assert_allclose(res.statistic[0], MTME_SPA, atol=0.0015, rtol=0)


def test_tie_calibrated_accuracy_matches_mtme(wmt22_study):
    rows = _rows(calibrated_accuracy(wmt22_study, level="item"))
    for name, (acc_eq, epsilon) in zip(METRICS, MTME_ACC_EQ, strict=True):
        row = rows[name]
        assert row["statistic"] == pytest.approx(acc_eq, abs=1e-12)
        assert row["epsilon"] == pytest.approx(epsilon, rel=1e-12)
        assert (row["n_groups"], row["n_skipped"]) == (1875, 0)
