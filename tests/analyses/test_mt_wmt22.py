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
  sample_rate=1.0)``, WMT's segment-level task;
* segment-level correlations: ``Correlation.Pearson``/``Spearman``/``Kendall`` with
  ``average_by`` "none", "sys" and "item" (macro averages, NaN correlations left out);
* system-level correlations: ``stats.Correlation(14, gold, metric)`` of the system means of the
  MQM and metric segment scores (this copy has no metric ``.sys.score`` files), ``Pearson()``
  and ``Kendall()``;
* significance clusters: ``data.CompareMetrics(corrs, scipy.stats.pearsonr, "none", k, psd,
  0.05)`` at segment level (WMT22's "no grouping"), ``numpy.random.seed(0)``, with its
  defaults (k=1000; at 1000 its early stopping only ends the loop);
* missing metric scores: ``stats.PermutationSigDiff`` of COMET-22 and metricx-xxl-MQM with the
  gold score set to None in the cells the test below leaves out of metricx (MTME's metric
  scores cannot be None; a None gold score drops the cell from both metrics, the rule our
  kernel applies to a missing metric score), k=10,000, ``numpy.random.seed(1)``.

The scripts that ran MTME (``/tmp/mtme_t20/run.py``, ``run_missing.py``) were throwaway and are
not part of this project.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from hanna_stats.analyses import calibrated_accuracy, correlate, spa
from hanna_stats.kernels import (
    permutation_test_pairs,
    significance_clusters,
    soft_pairwise_accuracy,
)

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


#: Six metrics for the correlations and the clusters (MTME's names).
METRICS6 = (*METRICS, "BLEURT-20-refA", "metricx_xxl_MQM_2020-refA")
#: MTME's segment-level correlations with MQM, rows Pearson, Spearman, Kendall (tau-b), columns
#: ``average_by`` "none", "sys", "item".
MTME_SEG = {
    "BLEU-refA": (
        (0.17473803946288333, 0.1640433984898491, 0.1586927458005026),
        (0.1973379271948332, 0.18469673863543415, 0.14834888713877015),
        (0.1449581573307275, 0.13542513317510432, 0.12146399814037058),
    ),
    "chrF-refA": (
        (0.1541212924099975, 0.1375920294756812, 0.22197515730357573),
        (0.20025730685242132, 0.18237451150276726, 0.1923789339121316),
        (0.14700617505174435, 0.13367904874163836, 0.15641168345748618),
    ),
    "COMET-22-refA": (
        (0.5845663036591344, 0.5643939253598368, 0.39687698124819687),
        (0.563501408918581, 0.5504954661579752, 0.32769222209612947),
        (0.4279076114021267, 0.4176878911821735, 0.2629415448996129),
    ),
    "COMETKiwi-src": (
        (0.509085816925214, 0.48823366800630374, 0.32516839801403913),
        (0.484765225626296, 0.47242005929557696, 0.26636978385471033),
        (0.3637137173452886, 0.35431315219876097, 0.21371976291757086),
    ),
    "BLEURT-20-refA": (
        (0.430018695295887, 0.40820369231179665, 0.36377771853751906),
        (0.48411160242119045, 0.4657740831274272, 0.3084753486924525),
        (0.3612370888093931, 0.3470043037671335, 0.24958367301453294),
    ),
    "metricx_xxl_MQM_2020-refA": (
        (0.5812317740919599, 0.5656417172978851, 0.38090743203385985),
        (0.5580891171421204, 0.5472217231270456, 0.30996421410646013),
        (0.4269685592407511, 0.41866112241089853, 0.24950618061699661),
    ),
}
#: MTME's system-level (Pearson, Kendall tau-b) over the 14 MT systems with MQM scores.
MTME_SYS = {
    "BLEU-refA": (0.6577202167478109, 0.27472527472527475),
    "chrF-refA": (0.8120788534619312, 0.2967032967032967),
    "COMET-22-refA": (0.9417784124084088, 0.7362637362637363),
    "COMETKiwi-src": (0.8662114569017293, 0.6483516483516484),
    "BLEURT-20-refA": (0.9376118610019363, 0.6923076923076924),
    "metricx_xxl_MQM_2020-refA": (0.9200277384742741, 0.6923076923076924),
}


def _statistics(study, **options):
    frame = correlate(study, **options)
    rows = frame.filter((pl.col("against") == "mqm") & pl.col("measure").is_in(METRICS6))
    return dict(zip(rows["measure"], rows["statistic"], strict=True))


def test_correlations_grouped_every_way_match_mtme(wmt22_study):
    # MTME's average_by "none" is our global level, "sys" the item level grouped by system,
    # "item" the item level grouped by input; both average the defined groups alike.
    settings = (
        {"level": "global"},
        {"level": "item", "group_by": "system"},
        {"level": "item", "group_by": "input"},
    )
    for row, method in enumerate(("pearson", "spearman", "kendall")):
        for column, options in enumerate(settings):
            ours = _statistics(wmt22_study, method=method, **options)
            for name in METRICS6:
                expected = MTME_SEG[name][row][column]
                assert ours[name] == pytest.approx(expected, abs=1e-9), (name, method, options)
    for column, method in enumerate(("pearson", "kendall")):
        ours = _statistics(wmt22_study, level="system", method=method)
        for name in METRICS6:
            assert ours[name] == pytest.approx(MTME_SYS[name][column], abs=1e-9), (name, method)


def _rated_cube(study, names):
    """MQM and the metrics ``names`` over the 14 MT systems MQM rates (MTME's selection)."""
    cube = study.cube(measures=["mqm", *names])
    rated = ~np.isnan(cube.values[0]).all(axis=0)
    systems = [s for s, r in zip(cube.systems, rated, strict=True) if r]
    return cube.values[0][:, rated], cube.values[1:][:, :, rated], systems


#: MTME's CompareMetrics, seg level, no grouping, Pearson: metrics by decreasing correlation,
#: their cluster ranks, and the p-values of "row beats column" above the diagonal that are
#: not 0 (MTME's default run, k=1000: the other 14 p-values are 0).
MTME_ORDER = (
    "COMET-22-refA",
    "metricx_xxl_MQM_2020-refA",
    "COMETKiwi-src",
    "BLEURT-20-refA",
    "BLEU-refA",
    "chrF-refA",
)
MTME_RANKS = (1, 1, 2, 3, 4, 5)
MTME_NONZERO_P = {("COMET-22-refA", "metricx_xxl_MQM_2020-refA"): 0.174}


def test_significance_clusters_match_mtme(wmt22_study):
    # PERM-BOTH at global level = MTME's PermutationSigDiff with average_by "none" (z-scores
    # over the rated cells, one coin per cell, Pearson over all cells). Both ours and MTME's
    # p-values are Monte Carlo estimates from k = 1,000 permutations (MTME's default, as the
    # module docstring says): the sd of their difference is sqrt(p (1 - p) (1/k + 1/k)), 0.017
    # at p = 0.174; the tolerance is 4 sd. Where MTME found 0 of 1,000, p is taken at 3/1,000
    # (the rule-of-three 95% bound of a zero count).
    C, X, _ = _rated_cube(wmt22_study, METRICS6)
    res = permutation_test_pairs(
        X, C, level="global", method="pearson", permutations=1000, alternative="greater", seed=0
    )
    index = {name: METRICS6.index(name) for name in METRICS6}
    order = sorted(METRICS6, key=lambda name: -res.statistic[index[name]])
    assert tuple(order) == MTME_ORDER
    for name in METRICS6:
        assert res.statistic[index[name]] == pytest.approx(MTME_SEG[name][0][0], abs=1e-9)
    ranks = significance_clusters(res.statistic, res.pvalue, alpha=0.05)
    assert tuple(int(ranks[index[name]]) for name in MTME_ORDER) == MTME_RANKS
    for i, better in enumerate(MTME_ORDER):
        for worse in MTME_ORDER[i + 1 :]:
            expected = MTME_NONZERO_P.get((better, worse), 0.0)
            p = max(expected, 3 / 1000)
            sd = math.sqrt(p * (1 - p) * (1 / 1000 + 1 / 1000))
            assert res.pvalue[index[better], index[worse]] == pytest.approx(expected, abs=4 * sd)


#: MTME's PermutationSigDiff of COMET-22 (a) and metricx (b) with metricx's cells missing as in
#: the test below: cells dropped, Pearson of each over the cells kept, delta and p-value of
#: "a beats b" (10,000 permutations).
MTME_MISSING = {
    "n_dropped": 4587,
    "pearson_a": 0.5837315842957667,
    "pearson_b": 0.5811194632255843,
    "delta": 0.0026121210701824937,
    "pvalue": 0.2639,
}


def test_missing_metric_scores_match_mtme(wmt22_study):
    names = ("COMET-22-refA", "metricx_xxl_MQM_2020-refA")
    C, X, rated = _rated_cube(wmt22_study, names)
    assert len(rated) == 14
    segment = np.arange(X.shape[1])[:, None]
    lengths = np.array([len(s) for s in rated])[None, :]
    gone = ((segment + lengths) % 9 == 0) | (np.array(rated) == "Online-W")[None, :]
    X = X.copy()
    X[1][gone] = np.nan
    res = permutation_test_pairs(
        X, C, level="global", method="pearson", permutations=2000, alternative="greater", seed=0
    )
    assert res.n_missing[0, 1] == MTME_MISSING["n_dropped"] == gone.sum()
    assert res.n_systems_dropped[0, 1] == 1 and res.n_inputs_dropped[0, 1] == 0
    keep = ~gone
    pa = np.corrcoef(X[0][keep], C[keep])[0, 1]
    pb = np.corrcoef(X[1][keep], C[keep])[0, 1]
    expected = (MTME_MISSING["pearson_a"], MTME_MISSING["pearson_b"])
    assert (pa, pb) == pytest.approx(expected, abs=1e-9)
    assert pa - pb == pytest.approx(MTME_MISSING["delta"], abs=1e-9)
    assert res.statistic[1] == pytest.approx(pb, abs=1e-12)
    # 2,000 permutations against MTME's 10,000, both Monte Carlo estimates: the sd of their
    # difference is sqrt(p (1 - p) (1/2000 + 1/10000)), 0.0108 at p = 0.264; tolerance 4 sd.
    p = MTME_MISSING["pvalue"]
    sd = math.sqrt(p * (1 - p) * (1 / 2000 + 1 / 10_000))
    assert res.pvalue[0, 1] == pytest.approx(p, abs=4 * sd)
