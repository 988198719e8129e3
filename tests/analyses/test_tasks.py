"""Tasks and task sets (hanna_stats.analyses.tasks) against mt-metrics-eval's tasks.py, on
three-pair test sets in MTME's layout built here (:func:`make_three_pairs`): WMT24-named (en-de
with two references) and WMT23-named (he-en with two references).

The expected values were produced by mt-metrics-eval (google-research/mt-metrics-eval at
68a481a, exported outside the project with ``git archive``, run with ``PYTHONPATH`` in its own
venv, never installed) on the same files::

    python -c "import sys; sys.path.insert(0, 'tests/analyses'); import test_tasks; \\
        test_tasks.make_three_pairs(__import__('pathlib').Path('/tmp/ts/wmt23'), \\
        lps=test_tasks.LPS23, two_refs='he-en')"         # (noise=test_tasks.CLOSE for k>0)
    cd /tmp/mtme && PYTHONPATH=. /tmp/mtme-venv/bin/python mtme_run.py /tmp/ts wmt23 wmt23 K

(``mtme_run.py`` stubs ``apache_beam``, calls ``np.random.seed(0)``, builds
``EvalSet(test_set, lp, True, path=..., info=MetaInfo('refA', {'sys': 'mqm', 'seg': 'mqm'},
set(), {'BLEU', 'COMET', 'Kiwi', 'chrF'}))`` per pair (also set as ``meta_info.DATA[test_set]
[lp]``), runs ``tasks.WMT23(k=K)`` (or ``WMT24``), at K > 0 with every task's ``block_size = K``,
and prints every task's ``corr_ranks``, ``AverageCorrs`` / ``AverageRanks`` with the returned
weights, and at K > 0 ``AverageCorrMatrix``.) ``MTME_TASK_SETS`` was printed from MTME's own
``tasks.WMT23``/``WMT24``/``WMT24OnWMT23``/``WMT25`` (``k=0``, its ``meta_info``): each task's
``test_set, lang, level, corr_fcn, human, avg_by, perm_test, gold, corr_fcn_args`` and weight.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from hanna_stats.analyses.tasks import (
    Task,
    run_task_set,
    task_ranking,
    wmt_task_set,
)
from hanna_stats.kernels.task_average import averaged_significance, task_weights
from hanna_stats.store import ingest, load_study, open_store

LPS = ("en-de", "en-es", "ja-zh")
N_SEG = 40
SYSTEMS = ("sysA", "sysB", "sysC", "sysD", "sysE")
METRICS = ("BLEU-refA", "COMET-refA", "Kiwi-src", "chrF-refA")


def _write(path: Path, lines) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def make_three_pairs(
    root: Path,
    seed: int = 7,
    lps: tuple[str, ...] = LPS,
    two_refs: str = "en-de",
    noise: tuple[float, ...] = (0.4, 0.8, 1.2, 2.0),
) -> Path:
    """Three pairs, 40 segments, 5 MT systems and the reference refA; ``two_refs`` has a second
    reference refB (a human system), the third pair three segments without MQM. Golds: MQM
    (segment and system level) and ESA (segment level); four metrics whose segment scores
    follow the gold with noise of standard deviations ``noise``, and system-level files of
    their means. No ties and 40
    segments: MTME orders systems by a Python set, and its SPA p-values then differ with the
    order (and PYTHONHASHSEED) wherever a permuted difference equals the observed one."""
    rng = np.random.default_rng(seed)
    for lp in lps:
        systems = (*SYSTEMS, "refB") if lp == two_refs else SYSTEMS
        scored = (*systems, "refA")
        _write(root / "sources" / f"{lp}.txt", [f"{lp} src {i}" for i in range(N_SEG)])
        _write(root / "documents" / f"{lp}.docs", [f"news doc{i // 4}" for i in range(N_SEG)])
        refs = ("refA", "refB") if lp == two_refs else ("refA",)
        for ref in refs:
            _write(
                root / "references" / f"{lp}.{ref}.txt", [f"{lp} {ref} {i}" for i in range(N_SEG)]
            )
        for system in scored:
            _write(
                root / "system-outputs" / lp / f"{system}.txt",
                [f"{lp} {system} out {i}" for i in range(N_SEG)],
            )
        quality = rng.normal(size=len(scored))[:, None] + rng.normal(size=(len(scored), N_SEG))
        mqm = np.round(-5 * np.exp(-quality), 4)  # no ties: MTME's SPA orders systems by a set
        missing = {3, 8, 21} if lp == lps[2] else set()
        human = root / "human-scores"
        _write(
            human / f"{lp}.mqm.seg.score",
            [
                f"{s}\t{'None' if i in missing else mqm[k, i]}"
                for k, s in enumerate(scored)
                for i in range(N_SEG)
            ],
        )
        esa = np.round(50 + 20 * quality + 5 * rng.normal(size=quality.shape))
        _write(
            human / f"{lp}.esa.seg.score",
            [f"{s}\t{esa[k, i]}" for k, s in enumerate(scored) for i in range(N_SEG)],
        )
        keep = [i for i in range(N_SEG) if i not in missing]
        _write(
            human / f"{lp}.mqm.sys.score",
            [f"{s}\t{mqm[k, keep].mean():.6f}" for k, s in enumerate(scored)],
        )
        for sd, metric in zip(noise, METRICS, strict=True):
            scores = np.round(quality + sd * rng.normal(size=quality.shape), 4)
            rows = [(k, s) for k, s in enumerate(scored) if not (s == "refA" and "-refA" in metric)]
            folder = root / "metric-scores" / lp
            _write(
                folder / f"{metric}.seg.score",
                [f"{s}\t{scores[k, i]}" for k, s in rows for i in range(N_SEG)],
            )
            _write(
                folder / f"{metric}.sys.score", [f"{s}\t{scores[k].mean():.6f}" for k, s in rows]
            )
    return root


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = make_three_pairs(tmp_path_factory.mktemp("tasks") / "wmt24")
    con = open_store(str(root.parent / "store.duckdb"))
    for lp in LPS:
        ingest(con, root, lp=lp, ref="refA")
    return load_study(con)


# mt-metrics-eval's tasks.WMT24(k=0) on make_three_pairs (see the module docstring): per task
# (lang, level, corr_fcn) the metrics' (statistic, rank), in MTME's order.
# Metric names as the store has them (MTME: BLEU, COMET, Kiwi[noref], chrF). PYTHONHASHSEED=1
# and 2 gave the same output.
MTME_TASKS = {
    "en-de sys spa": {"BLEU-refA": (0.9706666666666667, 1), "Kiwi-src": (0.9108, 2),
                      "COMET-refA": (0.9047333333333334, 3), "chrF-refA": (0.8236666666666667, 4)},
    "en-de seg acc_eq": {"BLEU-refA": (0.8983333333333334, 1),
                         "COMET-refA": (0.7816666666666671, 2),
                         "Kiwi-src": (0.6983333333333336, 3), "chrF-refA": (0.6633333333333334, 4)},
    "en-es sys spa": {"BLEU-refA": (0.9919, 1), "COMET-refA": (0.9896, 2), "Kiwi-src": (0.9687, 3),
                      "chrF-refA": (0.9183, 4)},
    "en-es seg acc_eq": {"BLEU-refA": (0.9274999999999997, 1), "COMET-refA": (0.86, 2),
                         "Kiwi-src": (0.755, 3), "chrF-refA": (0.7249999999999998, 4)},
    "ja-zh sys spa": {"COMET-refA": (0.9745, 1), "BLEU-refA": (0.9668, 2), "Kiwi-src": (0.9156, 3),
                      "chrF-refA": (0.911, 4)},
    "ja-zh seg acc_eq": {"BLEU-refA": (0.9162162162162162, 1),
                         "COMET-refA": (0.8702702702702702, 2),
                         "Kiwi-src": (0.7945945945945947, 3), "chrF-refA": (0.6405405405405407, 4)},
}  # fmt: skip
MTME_AVERAGE = {"BLEU-refA": 0.945236036036036, "COMET-refA": 0.8967950450450449,
                "Kiwi-src": 0.8405046546546546, "chrF-refA": 0.7803067567567566}  # fmt: skip
MTME_AVERAGE_RANK = {"BLEU-refA": 1.1666666666666667, "COMET-refA": 2.0,
                     "Kiwi-src": 2.833333333333333, "chrF-refA": 4.0}  # fmt: skip


def test_wmt24_equals_mtme(study):
    """Every task's statistic (to 1e-9) and rank, the averaged statistics and ranks, as MTME."""
    res = run_task_set(study, wmt_task_set("wmt24"))
    assert [r.task.name for r in res.results] == list(MTME_TASKS)
    for r in res.results:
        expected = MTME_TASKS[r.task.name]
        got = {m: (s, k) for m, s, k in zip(r.measures, r.statistic, r.rank, strict=True)}
        assert set(got) == set(expected)
        for m, (value, rank) in expected.items():
            assert got[m][0] == pytest.approx(value, abs=1e-9) and got[m][1] == rank, (r.task, m)
    assert res.measures == tuple(sorted(MTME_AVERAGE))
    for m, a, k in zip(res.measures, res.average, res.average_rank, strict=True):
        assert a == pytest.approx(MTME_AVERAGE[m], abs=1e-9)
        assert k == pytest.approx(MTME_AVERAGE_RANK[m], abs=1e-9)
    order = sorted(MTME_AVERAGE, key=lambda m: -MTME_AVERAGE[m])
    assert [res.cluster[res.measures.index(m)] for m in order] == [1, 2, 3, 4]


LPS23 = ("en-de", "he-en", "zh-en")


def _store(root: Path, lps: tuple[str, ...], **kw) -> Path:
    """make_three_pairs(root, lps=lps, **kw) ingested pair by pair: the store's path."""
    make_three_pairs(root, lps=lps, **kw)
    path = root.parent / "store.duckdb"
    con = open_store(str(path))
    for lp in lps:
        ingest(con, root, lp=lp, ref="refA")
    con.close()
    return path


@pytest.fixture(scope="module")
def store23(tmp_path_factory):
    """The WMT23-named three pairs (he-en with two references), ingested."""
    return _store(tmp_path_factory.mktemp("tasks23") / "wmt23", LPS23, two_refs="he-en")


# mt-metrics-eval's tasks.WMT23(k=0) on make_three_pairs(lps=LPS23, two_refs="he-en"): per task,
# (statistic, rank) of (BLEU-refA, COMET-refA, Kiwi-src, chrF-refA). The pooled accuracy counts
# 10 + 15 + 10 pairs of systems (he-en's human refB is a system: the task's human is True).
MTME_WMT23 = {
    "en-de,he-en,zh-en sys accuracy": ((0.9714285714285714, 2), (1.0, 1),
                                       (0.9428571428571428, 3), (0.9428571428571428, 4)),
    "en-de sys pearson": ((0.9672946601105442, 1), (0.8848460431696249, 4),
                          (0.9255278957187143, 3), (0.9663408038416377, 2)),
    "en-de seg pearson": ((0.8044716523937663, 1), (0.6373336151073359, 2),
                          (0.5004562083140085, 3), (0.43374412533106044, 4)),
    "en-de seg acc_eq": ((0.8874999999999998, 1), (0.7975, 2), (0.7449999999999999, 3),
                         (0.6449999999999999, 4)),
    "he-en sys pearson": ((0.9025664104999586, 2), (0.9390360199400978, 1),
                          (0.8806550536407143, 3), (0.832669667570112, 4)),
    "he-en seg pearson": ((0.5932853387975244, 1), (0.5392073509405766, 2),
                          (0.46034375581754383, 3), (0.34833110216510166, 4)),
    "he-en seg acc_eq": ((0.9183333333333333, 1), (0.8366666666666669, 2),
                         (0.7900000000000003, 3), (0.6850000000000003, 4)),
    "zh-en sys pearson": ((0.9498621212566072, 2), (0.9542273998621589, 1),
                          (0.8967082731585455, 4), (0.9156634243985668, 3)),
    "zh-en seg pearson": ((0.7245777981183096, 1), (0.6705890181421051, 2),
                          (0.5770301152498536, 3), (0.34173463845196683, 4)),
    "zh-en seg acc_eq": ((0.9162162162162162, 1), (0.8702702702702702, 2),
                         (0.7945945945945947, 3), (0.6405405405405407, 4)),
}  # fmt: skip
MTME_WMT23_AVERAGE = (0.925613687868635, 0.9014213883764906, 0.8565438895096428,
                      0.8098628208325995)  # fmt: skip
MTME_WMT23_AVERAGE_RANK = (1.4166666666666665, 1.75, 3.0833333333333335, 3.7500000000000004)


def test_wmt23_equals_mtme(store23):
    """WMT23 (its first task the accuracy pooled over the three pairs): every task's
    statistic (to 1e-9) and rank, the averages and the final order, as MTME."""
    study = load_study(open_store(str(store23), read_only=True))
    res = run_task_set(study, wmt_task_set("wmt23"))
    assert [r.task.name for r in res.results] == list(MTME_WMT23)
    assert res.measures == METRICS
    for r in res.results:
        assert r.measures == METRICS
        stat, rank = np.array(MTME_WMT23[r.task.name]).T
        np.testing.assert_allclose(r.statistic, stat, rtol=0, atol=1e-9)
        assert r.rank.tolist() == rank.astype(int).tolist(), r.task.name
    np.testing.assert_allclose(res.average, MTME_WMT23_AVERAGE, rtol=0, atol=1e-9)
    np.testing.assert_allclose(res.average_rank, MTME_WMT23_AVERAGE_RANK, rtol=0, atol=1e-9)
    assert res.cluster.tolist() == [1, 2, 3, 4]


def test_tasks_command(store23, capsys):
    """``tasks`` runs WMT23 on the store in one command: the ranking table as MTME's averages,
    as CSV and as a LaTeX tabular."""
    from hanna_stats.cli import main

    args = ["tasks", "--db", str(store23), "--task-set", "wmt23"]
    assert main([*args, "--format", "csv"]) == 0
    table = pl.read_csv(io.StringIO(capsys.readouterr().out))
    assert table["measure"].to_list() == list(METRICS)  # the order of MTME's average
    np.testing.assert_allclose(table["average"], MTME_WMT23_AVERAGE, atol=1e-9)
    assert table["cluster"].to_list() == [1, 2, 3, 4]
    assert table["zh-en sys pearson rank"].to_list() == [2, 1, 4, 3]
    assert table.width == 5 + 2 * len(MTME_WMT23)
    assert main([*args, "--format", "latex"]) == 0
    latex = capsys.readouterr().out.splitlines()
    assert latex[0] == r"\begin{tabular}{l" + "r" * (table.width - 1) + "}"
    assert latex[1] == r"\toprule" and latex[-2:] == [r"\bottomrule", r"\end{tabular}"]
    assert latex[2].startswith(r"measure & cluster & average & average\_rank & pvalue\_next")
    assert latex[4].startswith(r"BLEU-refA & 1 & 0.9256 & 1.4167 & -- & 0.9714 & 2 &")
    assert main([*args, "--permutations", "50", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["pvalue_next"] is None for r in rows] == [False, False, False, True]
    assert main([*args, "--permutations", "0", "--format", "json"]) == 0
    assert all(r["pvalue_next"] is None for r in json.loads(capsys.readouterr().out))


def test_ranking_takes_the_whole_study(store23):
    """task_ranking has no ``subsets`` keyword (the task set splits and pools the pairs) and
    its call is recorded once."""
    import inspect

    from hanna_stats.analyses import analysis_calls

    assert "subsets" not in inspect.signature(task_ranking).parameters
    study = load_study(open_store(str(store23), read_only=True))
    with analysis_calls() as calls:
        table = task_ranking(study, task_set="wmt23")
    assert "subset" not in table.columns and table.height == 4
    assert calls[0].settings == {
        "task_set": "wmt23",
        "permutations": 0,
        "seed": 0,
        "criterion": None,
    }


CLOSE = (1.0, 1.1, 1.2, 1.4)  # the metrics' noise: close enough for p-values in (0, 1)
# mt-metrics-eval's AverageCorrMatrix at k=1000 on make_three_pairs(noise=CLOSE) (WMT23: lps=LPS23,
# two_refs="he-en"), every task's block_size set to 1000 (no early stopping, so that each task
# has 1,000 draws as here), np.random.seed(0): p-values of BLEU > COMET, BLEU > Kiwi,
# BLEU > chrF, COMET > Kiwi, COMET > chrF, Kiwi > chrF, and the clusters of (BLEU-refA,
# COMET-refA, Kiwi-src, chrF-refA) (the order of the average in both sets).
MTME_K1000 = {
    "wmt23": ((0.192, 0.007, 0.0, 0.186, 0.037, 0.03), (1, 1, 2, 3)),
    "wmt24": ((0.047, 0.0, 0.0, 0.022, 0.001, 0.116), (1, 2, 3, 3)),
}


@pytest.mark.parametrize("name", sorted(MTME_K1000))
def test_pvalues_within_monte_carlo_error(name, tmp_path):
    """At k=1000 on both sides (independent draws), the p-values of the averaged test are
    within 4.5 sd of MTME's, sd = sqrt(2 p (1 - p) / 1000) of the difference of two estimates
    of the same p (p their mean: 0.0094 at p = 0.045, 0.017 at p = 0.19), and the clusters
    are MTME's. Measured: WMT23 |diff| <= 0.022 (at most 1.33 sd), WMT24 <= 0.009 (1.16 sd)."""
    lps, kw = (LPS23, {"two_refs": "he-en"}) if name == "wmt23" else (LPS, {})
    store = _store(tmp_path / name, lps, noise=CLOSE, **kw)
    study = load_study(open_store(str(store), read_only=True))
    res = run_task_set(study, wmt_task_set(name, permutations=1000), seed=0)
    assert res.measures == METRICS
    expected, clusters = MTME_K1000[name]
    got = res.pvalue[np.triu_indices(4, 1)]
    p = (got + np.array(expected)) / 2
    sd = np.sqrt(2 * p * (1 - p) / 1000)
    assert np.all(np.abs(got - expected) <= 4.5 * sd + 1e-12), (got, expected)
    assert res.cluster.tolist() == list(clusters)


def test_wmt24_draws_give_clusters(study):
    """With permutations, each task keeps (K, M, M) antisymmetric draws and the averaged test
    runs on them."""
    res = run_task_set(study, wmt_task_set("wmt24", permutations=50), seed=1)
    for r in res.results:
        assert r.draws.shape == (50, 4, 4)
        assert np.allclose(r.draws, -r.draws.transpose(0, 2, 1))
    assert res.pvalue is not None and res.cluster.min() == 1


def test_weights_as_mtme():
    """AssignWeights: evenly over the first attribute's values, then the next."""
    values = [{"lang": lp, "level": lv} for lp in ("a", "b") for lv in ("sys", "seg", "seg")]
    w = task_weights(values, ["lang", "level"])
    assert w.tolist() == pytest.approx([0.25, 0.125, 0.125, 0.25, 0.125, 0.125])
    assert w.sum() == pytest.approx(1.0)


# mt-metrics-eval's task sets as it defines them (tasks.WMT23(k=0), WMT24, WMT24OnWMT23, WMT25,
# with its own meta_info): per task "test_set lang level corr_fcn human avg_by perm_test gold
# sample_rate weight", as printed (the module docstring).
MTME_TASK_SETS = {
    "wmt23": [
        "wmt23 en-de,he-en,zh-en sys accuracy True none scores mqm,mqm,mqm - 0.250000",
        "wmt23 en-de sys pearson False none scores mqm - 0.083333",
        "wmt23 en-de seg pearson False none scores mqm - 0.083333",
        "wmt23 en-de seg KendallWithTiesOpt False item pairs mqm 1.0 0.083333",
        "wmt23 he-en sys pearson True none scores mqm - 0.083333",
        "wmt23 he-en seg pearson True none scores mqm - 0.083333",
        "wmt23 he-en seg KendallWithTiesOpt True item pairs mqm 1.0 0.083333",
        "wmt23 zh-en sys pearson False none scores mqm - 0.083333",
        "wmt23 zh-en seg pearson False none scores mqm - 0.083333",
        "wmt23 zh-en seg KendallWithTiesOpt False item pairs mqm 1.0 0.083333",
    ],
    "wmt24": [
        "wmt24 en-de sys pce True none scores mqm - 0.166667",
        "wmt24 en-de seg KendallWithTiesOpt True item pairs mqm 1.0 0.166667",
        "wmt24 en-es sys pce False none scores mqm - 0.166667",
        "wmt24 en-es seg KendallWithTiesOpt False item pairs mqm 1.0 0.166667",
        "wmt24 ja-zh sys pce False none scores mqm - 0.166667",
        "wmt24 ja-zh seg KendallWithTiesOpt False item pairs mqm 1.0 0.166667",
    ],
    "wmt24-on-wmt23": [
        "wmt23 en-de sys pce False none scores mqm - 0.166667",
        "wmt23 en-de seg KendallWithTiesOpt False item pairs mqm 1.0 0.166667",
        "wmt23 he-en sys pce True none scores mqm - 0.166667",
        "wmt23 he-en seg KendallWithTiesOpt True item pairs mqm 1.0 0.166667",
        "wmt23 zh-en sys pce False none scores mqm - 0.166667",
        "wmt23 zh-en seg KendallWithTiesOpt False item pairs mqm 1.0 0.166667",
    ],
    "wmt25": [
        "wmt25 cs-de_DE sys pce False none scores esa-human1 - 0.031250",
        "wmt25 cs-de_DE seg KendallWithTiesOpt False item pairs esa-human1 1.0 0.031250",
        "wmt25 cs-uk_UA sys pce False none scores esa-human1 - 0.031250",
        "wmt25 cs-uk_UA seg KendallWithTiesOpt False item pairs esa-human1 1.0 0.031250",
        "wmt25 en-ar_EG sys pce False none scores esa-human1 - 0.031250",
        "wmt25 en-ar_EG seg KendallWithTiesOpt False item pairs esa-human1 1.0 0.031250",
        "wmt25 en-bho_IN sys pce False none scores esa-human1 - 0.031250",
        "wmt25 en-bho_IN seg KendallWithTiesOpt False item pairs esa-human1 1.0 0.031250",
        "wmt25 en-cs_CZ sys pce False none scores esa-human1 - 0.031250",
        "wmt25 en-cs_CZ seg KendallWithTiesOpt False item pairs esa-human1 1.0 0.031250",
        "wmt25 en-et_EE sys pce False none scores esa-human1 - 0.031250",
        "wmt25 en-et_EE seg KendallWithTiesOpt False item pairs esa-human1 1.0 0.031250",
        "wmt25 en-is_IS sys pce False none scores esa-human1 - 0.031250",
        "wmt25 en-is_IS seg KendallWithTiesOpt False item pairs esa-human1 1.0 0.031250",
        "wmt25 en-it_IT sys pce False none scores esa-human1 - 0.031250",
        "wmt25 en-it_IT seg KendallWithTiesOpt False item pairs esa-human1 1.0 0.031250",
        "wmt25 en-ja_JP sys pce False none scores esa-human1 - 0.031250",
        "wmt25 en-ja_JP seg KendallWithTiesOpt False item pairs esa-human1 1.0 0.031250",
        "wmt25 en-ko_KR sys pce False none scores mqm - 0.031250",
        "wmt25 en-ko_KR seg KendallWithTiesOpt False item pairs mqm 1.0 0.031250",
        "wmt25 en-mas_KE sys pce False none scores esa-human1 - 0.031250",
        "wmt25 en-mas_KE seg KendallWithTiesOpt False item pairs esa-human1 1.0 0.031250",
        "wmt25 en-ru_RU sys pce False none scores esa-human1 - 0.031250",
        "wmt25 en-ru_RU seg KendallWithTiesOpt False item pairs esa-human1 1.0 0.031250",
        "wmt25 en-sr_Cyrl_RS sys pce False none scores esa-human1 - 0.031250",
        "wmt25 en-sr_Cyrl_RS seg KendallWithTiesOpt False item pairs esa-human1 1.0 0.031250",
        "wmt25 en-uk_UA sys pce False none scores esa-human1 - 0.031250",
        "wmt25 en-uk_UA seg KendallWithTiesOpt False item pairs esa-human1 1.0 0.031250",
        "wmt25 en-zh_CN sys pce False none scores esa-human1 - 0.031250",
        "wmt25 en-zh_CN seg KendallWithTiesOpt False item pairs esa-human1 1.0 0.031250",
        "wmt25 ja-zh_CN sys pce False none scores mqm - 0.031250",
        "wmt25 ja-zh_CN seg KendallWithTiesOpt False item pairs mqm 1.0 0.031250",
    ],
}
FCN = {"accuracy": "accuracy", "pearson": "pearson", "acc_eq": "KendallWithTiesOpt", "spa": "pce"}
TEST_SET = {"wmt23": "wmt23", "wmt24": "wmt24", "wmt24-on-wmt23": "wmt23", "wmt25": "wmt25"}


@pytest.mark.parametrize("name", sorted(MTME_TASK_SETS))
def test_task_set_attributes_as_mtme(name):
    """Every task's attributes and weight, in order, as mt-metrics-eval's definitions."""
    ours = wmt_task_set(name)
    got = [
        f"{TEST_SET[name]} {','.join(t.subsets)} {t.level} {FCN[t.statistic]} {t.human} "
        f"{t.avg_by} {t.perm_test} {','.join(t.gold)} "
        f"{t.sample_rate if t.statistic == 'acc_eq' else '-'} {w:.6f}"
        for t, w in zip(ours.tasks, ours.weights, strict=True)
    ]
    assert got == MTME_TASK_SETS[name]


def test_weights_by_attribute():
    """weighted_by: evenly over the pairs, then over the levels within a pair."""
    weighted = wmt_task_set("wmt23").weighted_by(["lang", "level"])
    assert weighted.weights[0] == pytest.approx(1 / 4)  # the pooled pair list is a "lang"
    assert weighted.weights[1:4] == pytest.approx((1 / 8, 1 / 16, 1 / 16))
    assert sum(weighted.weights) == pytest.approx(1.0)


def test_task_options_refused(study):
    with pytest.raises(ValueError, match="system level"):
        Task(LPS, "seg", "accuracy")
    with pytest.raises(ValueError, match="one subset"):
        Task(LPS, "sys", "spa")
    with pytest.raises(ValueError, match="permutations"):
        task_ranking(study, permutations=-1)


def test_averaged_significance_reads_draws():
    """One task: the averaged test is the task's own test (p = share of draws >= delta)."""
    rng = np.random.default_rng(1)
    d = rng.normal(scale=0.1, size=(500, 3, 3))
    d = d - d.transpose(0, 2, 1)
    stat = np.array([0.8, 0.5, 0.45])
    _avg, p, _cluster = averaged_significance(stat[None], [(0, 1)], [1.0], [d])
    assert p[0, 1] == np.mean(d[:, 0, 1] >= 0.3)
    assert p[1, 2] == np.mean(d[:, 1, 2] >= 0.05)
