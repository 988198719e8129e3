"""Pooled pairwise accuracy, PDP Pearson, WMT's Kendall-like tau and item subsampling on the
real WMT22 zh-en pair (../shared/data/wmt22), against mt-metrics-eval
(google-research/mt-metrics-eval, commit 68a481a).

The expected values were printed by mt-metrics-eval's own code, run outside this project (its
snapshot exported to /tmp/mtme and run from there in a separate virtual environment with numpy
2.4.6 and scipy 1.17.1, ``apache_beam`` stubbed: it is only used for parallel runs), on the same
files:

* pooled accuracy: the two-pair test set of ``mtme_pairs.build`` (zh-en linked from the real
  data, with system-level files of the six metrics' segment means, and the made-up pair
  en-zz), ``zh = data.EvalSet("wmt22", "zh-en", read_stored_metric_scores=True, path=ROOT)``,
  ``zz = data.EvalSet("wmt22", "en-zz", True, path=ROOT, info=meta_info.MetaInfo("refA",
  {"sys": "mqm", "seg": "mqm"}, set(), set(zh.primary_metrics)))``, then
  ``data.CompareMetricsWithGlobalAccuracy([zh, zz], [{"refA"}] * 2, [set()] * 2, False, False,
  "mqm", False, k=10000, psd=stats.PermutationSigDiffParams(block_size=10000))`` after
  ``numpy.random.seed(0)`` (and with ``[zh]`` and ``[zz]`` alone, k=0);
* segment level: ``data.GetCorrelations(zh, "seg", {"refA"}, set(), False, False, GOLD,
  False)`` (GOLD ``"mqm"``: the 14 MT systems MQM rates; ``"wmt"``, raw DA: its 12 MT
  systems), then ``Correlation.Pearson(average_by, pdp=True)`` with ``average_by`` "item" and
  "sys", and ``Correlation.KendallLike(average_by, thresh)``;
* ``stats.Sample(1875, 100, "uniform", seed=s).sample`` and ``stats.Sample(1875, size,
  "stratify", DOC_SIZES, seed=11).sample`` for sizes where no two documents tie for the last
  extra items (there mt-metrics-eval breaks the tie with numpy's global state, not its seed).

The throwaway script (``/tmp/h5/run_mtme.py``) is not part of this project.
"""

from __future__ import annotations

import numpy as np
import pytest
from mtme_pairs import METRICS, build

from hanna_stats.analyses import kendall_like, pdp_correlation, pooled_accuracy
from hanna_stats.kernels import pooled_pairwise_accuracy, sample_items

#: MTME's ``Pearson(pdp=True)`` with MQM: average_by "item", "sys".
MTME_PDP = {
    "BLEU-refA": (0.11375292630464834, 0.1618731478872973),
    "chrF-refA": (0.15754933577078492, 0.1353705094303617),
    "COMET-22-refA": (0.3898972911147375, 0.5710712313910662),
    "COMETKiwi-src": (0.3356502394647222, 0.49716721008053255),
    "BLEURT-20-refA": (0.3057891563679226, 0.41056771669424164),
    "metricx_xxl_MQM_2020-refA": (0.37047848909470316, 0.5697064119217847),
}
#: MTME's ``KendallLike`` with MQM: ("item", thresh 1), ("item", thresh 0), ("sys", thresh 5).
MTME_KL_MQM = {
    "BLEU-refA": (0.11943004903380865, -0.3567062271062271, 0.2078310659708589),
    "chrF-refA": (0.18711172626903144, -0.3189157509157509, 0.2042899279822639),
    "COMET-22-refA": (0.34818295941030675, -0.22929230769230768, 0.635555407935979),
    "COMETKiwi-src": (0.28290468986384265, -0.26475018315018317, 0.5429870474954854),
    "BLEURT-20-refA": (0.31429920279825324, -0.24855091575091576, 0.5340558981731707),
    "metricx_xxl_MQM_2020-refA": (0.3318526625250802, -0.23906813186813186, 0.6347758899790471),
}
#: MTME's ``KendallLike`` with raw DA (``wmt``), thresh 25: average_by "item", "none"; 34,817
#: pairs counted by item for every metric.
MTME_KL_DA = {
    "BLEU-refA": (-0.056552833385989605, 0.03921690616388556),
    "chrF-refA": (-0.04006663411551828, 0.042345407119053526),
    "COMET-22-refA": (-0.011919464629347733, 0.004086496845758347),
    "COMETKiwi-src": (-0.021684809144957923, 0.004242466794829121),
    "BLEURT-20-refA": (-0.059712209552804665, 0.019182304458233556),
    "metricx_xxl_MQM_2020-refA": (-0.019329637820604876, -0.00408042009449585),
}


def _rows(frame, against="mqm"):
    rows = frame.filter(frame["against"] == against)
    return {r["measure"]: r for r in rows.iter_rows(named=True)}


def test_pdp_pearson_matches_mtme(wmt22_study):
    for column, group_by in enumerate(("input", "system")):
        rows = _rows(pdp_correlation(wmt22_study, group_by=group_by, criterion="mqm"))
        for name in METRICS:
            assert rows[name]["statistic"] == pytest.approx(MTME_PDP[name][column], abs=1e-9)
    assert rows["BLEU-refA"]["n_pairs"] == 14 * 1875 * 1874 // 2  # every pair of segments


def test_kendall_like_matches_mtme(wmt22_study):
    settings = (
        {"threshold": 1.0},
        {"threshold": 0.0},
        {"threshold": 5.0, "group_by": "system"},
    )
    for column, options in enumerate(settings):
        rows = _rows(kendall_like(wmt22_study, criterion="mqm", **options))
        for name in METRICS:
            assert rows[name]["statistic"] == pytest.approx(MTME_KL_MQM[name][column], abs=1e-9)
    for column, level in enumerate(("item", "global")):
        rows = _rows(kendall_like(wmt22_study, criterion="wmt", level=level), "wmt")
        for name in METRICS:
            assert rows[name]["statistic"] == pytest.approx(MTME_KL_DA[name][column], abs=1e-9)
            if level == "item":
                assert rows[name]["n_pairs"] == 34817


def _doc_sizes(wmt22_dir):
    """Segments per document of zh-en, in order (MTME's ``evs.docs``)."""
    docs = [line.split()[1] for line in (wmt22_dir / "documents" / "zh-en.docs").open()]
    starts = [i for i in range(len(docs)) if i == 0 or docs[i] != docs[i - 1]]
    return np.diff([*starts, len(docs)])


def _fingerprint(indices):
    """(length, sum, sum of position x index, first 8): MTME's sample, in its order."""
    v = [int(i) for i in indices]
    return len(v), sum(v), sum(k * i for k, i in enumerate(v)), v[:8]


#: MTME's ``stats.Sample`` fingerprints: uniform (seed 1, 7; 100 of 1,875 segments) and
#: stratified over zh-en's 256 documents (seed 11; 150 and 153 segments).
MTME_UNIFORM = {
    1: (100, 94854, 5017834, [1324, 1147, 223, 242, 732, 368, 488, 112]),
    7: (100, 97570, 4937503, [1216, 21, 1773, 171, 951, 179, 683, 1128]),
}
MTME_STRATIFIED = {
    150: (150, 140899, 13992072, [6, 30, 50, 53, 65, 82, 68, 108]),
    153: (153, 142698, 14521193, [6, 30, 50, 53, 65, 68, 72, 81]),
}


def test_sample_matches_mtme(wmt22_dir):
    for seed, expected in MTME_UNIFORM.items():
        assert _fingerprint(sample_items(1875, 100, seed=seed)) == expected
    strata = _doc_sizes(wmt22_dir)
    assert len(strata) == 256
    for size, expected in MTME_STRATIFIED.items():
        assert _fingerprint(sample_items(1875, size, strata=strata, seed=11)) == expected


#: MTME's ``CompareMetricsWithGlobalAccuracy`` of each pair alone (k=0).
MTME_ACC_ZH = {
    "COMET-22-refA": 0.8681318681318682,
    "BLEURT-20-refA": 0.8461538461538461,
    "metricx_xxl_MQM_2020-refA": 0.8461538461538461,
    "COMETKiwi-src": 0.8241758241758241,
    "chrF-refA": 0.6483516483516484,
    "BLEU-refA": 0.6373626373626373,
}
MTME_ACC_ZZ = {
    "BLEU-refA": 0.8666666666666667,
    "COMETKiwi-src": 0.8666666666666667,
    "chrF-refA": 0.8,
    "COMET-22-refA": 0.6666666666666666,
    "BLEURT-20-refA": 0.6,
    "metricx_xxl_MQM_2020-refA": 0.4666666666666667,
}


@pytest.fixture(scope="module")
def two_pairs(wmt22_dir, tmp_path_factory):
    """The two-pair test set of :func:`mtme_pairs.build`, ingested into one store."""
    from hanna_stats.store import ingest, load_study, open_store

    folder = build(wmt22_dir, tmp_path_factory.mktemp("two_pairs"))
    con = open_store()
    try:
        for lp in ("zh-en", "en-zz"):
            ingest(con, folder, lp=lp, ref="refA", format="wmt")
        return load_study(con)
    finally:
        con.close()


def test_pooled_accuracy_per_pair_matches_mtme(two_pairs):
    frame = pooled_accuracy(two_pairs, criterion="mqm", system_scores="given", permutations=10)
    for label, expected, pairs in (("zh-en", MTME_ACC_ZH, 91), ("en-zz", MTME_ACC_ZZ, 15)):
        rows = _rows(frame.filter(frame["subset"] == label))
        assert {name: rows[name]["statistic"] for name in METRICS} == pytest.approx(
            expected, abs=1e-12
        )
        assert {rows[name]["n_pairs"] for name in METRICS} == {pairs}
    # the means of the segments give zh-en's numbers too (its MQM .sys.score is their mean)
    mean = pooled_accuracy(two_pairs.subset(subset="zh-en"), criterion="mqm", permutations=10)
    assert {r["measure"]: r["statistic"] for r in mean.iter_rows(named=True)} == pytest.approx(
        MTME_ACC_ZH, abs=1e-12
    )


#: MTME's pooled accuracy over both pairs (106 pairs of systems), by decreasing accuracy, its
#: ranks, and its p-values of "row better than column" (k = 10,000, Monte Carlo estimates).
MTME_POOLED = {
    "COMET-22-refA": 0.839622641509434,
    "COMETKiwi-src": 0.8301886792452831,
    "BLEURT-20-refA": 0.8113207547169812,
    "metricx_xxl_MQM_2020-refA": 0.7924528301886793,
    "BLEU-refA": 0.6698113207547169,
    "chrF-refA": 0.6698113207547169,
}
MTME_POOLED_RANKS = (1, 1, 1, 1, 2, 2)
MTME_POOLED_P = (
    (0.4774, 0.3124, 0.3588, 0.0755, 0.1116),
    (0.4547, 0.4103, 0.0420, 0.0718),
    (0.4527, 0.1212, 0.1510),
    (0.1432, 0.1638),
    (0.5431,),
)


def test_pooled_accuracy_matches_mtme(two_pairs):
    frame = pooled_accuracy(
        two_pairs, criterion="mqm", system_scores="given", permutations=10_000, subsets="pooled"
    )
    assert frame["measure"].to_list() == list(MTME_POOLED)
    assert frame["statistic"].to_list() == pytest.approx(list(MTME_POOLED.values()), abs=1e-12)
    assert tuple(frame["rank"]) == MTME_POOLED_RANKS
    assert set(frame["n_pairs"]) == {106} and set(frame["n_subsets"]) == {2}
    # the p-values: the kernel on the same system values (each pair's given .sys.score values)
    gold, X, labels = [], [], []
    for k, lp in enumerate(("zh-en", "en-zz")):
        cube = two_pairs.subset(subset=lp).given_cube(kinds=("human", "metric"))
        gold.append(cube.values[cube.measures.index("mqm"), 0])
        X.append(cube.values[[cube.measures.index(m) for m in MTME_POOLED], 0])
        labels.append(np.full(len(cube.systems), k))
    res = pooled_pairwise_accuracy(
        np.concatenate(gold),
        np.concatenate(X, axis=1),
        np.concatenate(labels),
        permutations=10_000,
        seed=0,
    )
    # Both are estimates from 10,000 permutations: the sd of their difference is at most
    # sqrt(2 * 0.25 / 10,000) = 0.0071; 4 sd.
    for i, row in enumerate(MTME_POOLED_P):
        for j, p in enumerate(row, start=i + 1):
            assert res.pvalue[i, j] == pytest.approx(p, abs=0.028), (i, j)
