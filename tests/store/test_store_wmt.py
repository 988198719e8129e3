"""WMT test sets in MTME's folder layout (google-research/mt-metrics-eval), written into tmp_path.

The expected values come from the files themselves, parsed here in plain Python, and from
scipy.stats.kendalltau / pearsonr on vectors built from them.
"""

from __future__ import annotations

import csv
import io
import math
import re
import shutil

import duckdb
import numpy as np
import polars as pl
import pytest
from scipy import stats

from hanna_stats.analyses import correlate, given_left_out
from hanna_stats.analyses.accuracy import calibrated_accuracy, calibrated_comparison, spa
from hanna_stats.analyses.rankings import metric_clusters
from hanna_stats.cli import INGEST_FORMATS, main
from hanna_stats.store import InputError, ingest, load_study, open_store, open_study
from hanna_stats.store.db import read_sql
from hanna_stats.store.formats import FORMATS, detect_format
from hanna_stats.vocabulary import WORDS

LPS = ("en-de", "de-en")
N_SEGMENTS = 4
MT_SYSTEMS = ("sysA", "sysB", "sysC")
# The study's systems (standard reference refA): the MT systems and refB, a human reference
# scored as a system; refA is the items' reference, not a system.
SYSTEMS = (*MT_SYSTEMS, "refB")
# The systems in the score files: refA too (its values are left out of the study).
SCORED = (*SYSTEMS, "refA")
NO_TRANSLATION = "[No translation supplied]"  # MTME's marker of a missing output
TABLES = [
    "systems",
    "inputs",
    "items",
    "measures",
    "scores",
    "given_system_scores_by_id",
    "ingests",
    "study",
]
# measure -> (folder under the test set, file name with {lp}, systems) of each .sys.score file;
# wmt-z and chrF-refA have no .seg.score file.
SYS_FILES = {
    "mqm": ("human-scores", "{lp}.mqm.sys.score", SCORED),
    "wmt-z": ("human-scores", "{lp}.wmt-z.sys.score", SCORED),
    "BLEU-refA": ("metric-scores/{lp}", "BLEU-refA.sys.score", MT_SYSTEMS),
    "CometKiwi-src": ("metric-scores/{lp}", "CometKiwi-src.sys.score", SCORED),
    "chrF-refA": ("metric-scores/{lp}", "chrF-refA.sys.score", MT_SYSTEMS),
}


def _write(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def _score_lines(rng, systems, *, scale, none_at=None):
    """'SYS<TAB>SCORE' lines: one block per system, one score per segment; None at none_at."""
    lines = []
    for system in systems:
        for i in range(N_SEGMENTS):
            if (system, i) == none_at:
                lines.append(f"{system}\tNone")
            else:
                lines.append(f"{system}\t{scale * rng.random():.4f}")
    return lines


def sys_path(root, lp, measure):
    folder, name, _ = SYS_FILES[measure]
    return root / folder.format(lp=lp) / name.format(lp=lp)


def make_test_set(root, seed=0):
    """Two language pairs, 4 segments, 3 systems + the references refA and refB scored as
    systems, seg-level MQM with a None, three metrics (BLEU-refA without refA's lines,
    CometKiwi-src with them, BLEU-refB without refB's), system-level files (:data:`SYS_FILES`:
    random values, not the means of the segments; MQM's refB None; BLEU-refB.sys.score), the
    documents file (two domains of two documents each) and a domain-level MQM file (news)."""
    rng = np.random.default_rng(seed)
    for lp in LPS:
        src = [f"{lp} source {i} ü" for i in range(N_SEGMENTS)]
        ref = [f"{lp} reference {i}" for i in range(N_SEGMENTS)]
        _write(root / "sources" / f"{lp}.txt", src)
        ref_b = [f"{lp} other reference {i}" for i in range(N_SEGMENTS)]
        _write(root / "references" / f"{lp}.refA.txt", ref)
        _write(root / "references" / f"{lp}.refB.txt", ref_b)
        _write(root / "documents" / f"{lp}.docs", DOCS)
        for system in MT_SYSTEMS:
            outputs = [f"{lp} {system} output {i}" for i in range(N_SEGMENTS)]
            if system == "sysC":
                outputs[1] = NO_TRANSLATION
            _write(root / "system-outputs" / lp / f"{system}.txt", outputs)
        _write(root / "system-outputs" / lp / "refA.txt", ref)
        _write(root / "system-outputs" / lp / "refB.txt", ref_b)
        human = root / "human-scores"
        _write(
            human / f"{lp}.mqm.seg.score",
            _score_lines(rng, SCORED, scale=-25, none_at=("sysB", 2)),
        )
        _write(human / f"{lp}.mqm.domain.score", [f"news\t{s}\t-1.5" for s in SCORED])
        metrics = root / "metric-scores" / lp
        _write(metrics / "BLEU-refA.seg.score", _score_lines(rng, SYSTEMS, scale=100))
        _write(metrics / "CometKiwi-src.seg.score", _score_lines(rng, SCORED, scale=1))
        _write(
            metrics / "BLEU-refB.seg.score",
            _score_lines(rng, (*MT_SYSTEMS, "refA"), scale=100),
        )
        _write(metrics / "BLEU-refB.sys.score", [f"{s}\t50.0" for s in (*MT_SYSTEMS, "refA")])
        for measure, (_, _, systems) in SYS_FILES.items():
            _write(
                sys_path(root, lp, measure),
                [
                    f"{s}\tNone" if (measure, s) == ("mqm", "refB") else f"{s}\t{rng.normal():.4f}"
                    for s in systems
                ],
            )
    return root


DOCS = ["news\tdoc0", "news\tdoc0", "social doc1", "social doc1"]  # DOMAIN DOCUMENT


def read_scores(path) -> dict[tuple[int, str], float | None]:
    """(segment, system) -> score of an MTME .seg.score file, by plain Python."""
    out, count = {}, {}
    for line in path.read_text(encoding="utf-8").splitlines():
        system, text = line.split("\t")
        i = count.get(system, 0)
        count[system] = i + 1
        out[(i, system)] = None if text == "None" else float(text)
    return out


def lines_of(path) -> list[tuple[str, str]]:
    """The (system, score text) of each line of a score file."""
    return [tuple(line.split("\t")) for line in path.read_text(encoding="utf-8").splitlines()]


def read_sys_scores(path) -> dict[str, float | None]:
    """system -> score of an MTME .sys.score file, by plain Python."""
    return {system: None if text == "None" else float(text) for system, text in lines_of(path)}


def expected_given_system_scores(root, lp):
    """measure -> {system: value}, from the .sys.score files; the standard reference refA's
    values left out (it is no system)."""
    return {
        m: {s: v for s, v in read_sys_scores(sys_path(root, lp, m)).items() if s != "refA"}
        for m in SYS_FILES
    }


def expected_values(root, lp):
    """measure -> {(segment, system): value}, from the files; refA's values left out."""
    files = {
        "mqm": root / "human-scores" / f"{lp}.mqm.seg.score",
        "BLEU-refA": root / "metric-scores" / lp / "BLEU-refA.seg.score",
        "CometKiwi-src": root / "metric-scores" / lp / "CometKiwi-src.seg.score",
    }
    return {
        m: {k: v for k, v in read_scores(path).items() if k[1] != "refA"}
        for m, path in files.items()
    }


def counts(con) -> dict[str, int]:
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES}


@pytest.fixture
def test_set(tmp_path):
    return make_test_set(tmp_path / "wmt23")


def test_ingest_values_and_mapping(test_set):
    con = open_store()
    (summary,) = ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    assert (summary.format, summary.source, summary.skipped) == ("wmt", "wmt23 en-de", False)
    n_sys = 4 + 4 + 3 + 4 + 3  # lines of the .sys.score files, refA's left out
    n_domain = 4  # lines of mqm.domain.score, refA's left out
    assert summary.n_values == 4 * 4 + 4 * 4 + 4 * 4 + n_sys + n_domain
    assert summary.added == {
        "systems": 4,
        "inputs": 4,
        "items": 16,
        "measures": 5,
        "values": 48 + n_sys + n_domain,
    }
    assert con.execute("SELECT name FROM study").fetchall() == [("wmt23 en-de",)]

    humans = con.execute("SELECT name FROM systems WHERE is_human ORDER BY name").fetchall()
    assert humans == [("refB",)]
    src = (test_set / "sources" / "en-de.txt").read_text(encoding="utf-8").splitlines()
    inputs = con.execute(
        "SELECT name, position, text, domain, document FROM inputs ORDER BY position"
    ).fetchall()
    assert inputs == [(f"en-de:{i}", i, src[i], *DOCS[i].split()) for i in range(N_SEGMENTS)]
    ref = (test_set / "references" / "en-de.refA.txt").read_text(encoding="utf-8").splitlines()
    items = con.execute(
        """SELECT it.name, inp.name, sy.name, it.text, it.reference FROM items it
           JOIN inputs inp USING (input_id) JOIN systems sy USING (system_id) ORDER BY it.name"""
    ).fetchall()
    expected_items = []
    for system in SYSTEMS:
        out = (test_set / "system-outputs" / "en-de" / f"{system}.txt").read_text().splitlines()
        out = [None if line == NO_TRANSLATION else line for line in out]
        expected_items += [
            (f"en-de:{i}:{system}", f"en-de:{i}", system, out[i], ref[i]) for i in range(N_SEGMENTS)
        ]
    assert items == sorted(expected_items)
    assert sum(text is None for _, _, _, text, _ in items) == 1  # sysC's missing output

    catalogue = con.execute(
        "SELECT measure, kind, reference_based, scale, scale_min, scale_max, source_name "
        "FROM measure_catalogue ORDER BY position"
    ).fetchall()
    assert catalogue == [
        ("mqm", "human", None, "continuous", None, None, "human-scores/en-de.mqm.seg.score"),
        ("wmt-z", "human", None, "continuous", None, None, "human-scores/en-de.wmt-z.sys.score"),
        (
            "BLEU-refA",
            "metric",
            True,
            "continuous",
            None,
            None,
            "metric-scores/en-de/BLEU-refA.seg.score",
        ),
        (
            "CometKiwi-src",
            "metric",
            False,
            "continuous",
            None,
            None,
            "metric-scores/en-de/CometKiwi-src.seg.score",
        ),
        (
            "chrF-refA",
            "metric",
            True,
            "continuous",
            None,
            None,
            "metric-scores/en-de/chrF-refA.sys.score",
        ),
    ]

    stored = con.execute(
        "SELECT measure, item, value FROM item_scores ORDER BY measure, item"
    ).fetchall()
    expected = [
        (measure, f"en-de:{i}:{system}", value)
        for measure, values in expected_values(test_set, "en-de").items()
        for (i, system), value in values.items()
    ]
    assert stored == sorted(expected, key=lambda r: (r[0], r[1]))
    assert sum(v is None for _, _, v in stored) == 1  # MQM's None is stored as missing

    # system-level values as given, in the view's order (catalogue, then systems by name)
    given = con.execute("SELECT measure, system, value FROM given_system_scores").fetchall()
    files = expected_given_system_scores(test_set, "en-de")
    assert given == [
        (measure, system, files[measure][system])
        for measure in ("mqm", "wmt-z", "BLEU-refA", "CometKiwi-src", "chrF-refA")
        for system in sorted(files[measure])
    ]
    assert sum(v is None for _, _, v in given) == 1  # MQM's refB
    study = load_study(con)
    assert study.given_system_scores.select("measure", "system", "value").rows() == given
    # the measures with item-level values are the analyses' as before; wmt-z and chrF-refA not
    assert study.measures == ("mqm", "BLEU-refA", "CometKiwi-src")
    assert study.given_system_scores.filter(pl.col("system") == "refB")["is_human"].all()
    assert "refA" not in study.systems
    # the given values are not the means of the segments
    seg = expected_values(test_set, "en-de")
    assert not np.allclose(
        _system_means(seg["BLEU-refA"], MT_SYSTEMS), [files["BLEU-refA"][s] for s in MT_SYSTEMS]
    )


def _system_means(values, systems):
    means = []
    for system in systems:
        vals = [v for (_, s), v in values.items() if s == system and v is not None]
        means.append(sum(vals) / len(vals))
    return means


def test_correlate_matches_scipy(test_set):
    con = open_store()
    ingest(con, test_set, lp="de-en", ref="refA", format="wmt")
    study = load_study(con)
    values = expected_values(test_set, "de-en")
    human = values["mqm"]
    item_level, system_level, global_level = WORDS["level"]
    for metric in ("BLEU-refA", "CometKiwi-src"):
        m = values[metric]
        # system level: means over segments (MQM's None left out), refB (human) excluded
        expected_system = stats.kendalltau(
            _system_means(m, MT_SYSTEMS), _system_means(human, MT_SYSTEMS)
        ).statistic
        # global: every (segment, MT system) pair with both values
        keys = [(i, s) for i in range(N_SEGMENTS) for s in MT_SYSTEMS if human[(i, s)] is not None]
        expected_global = stats.kendalltau([m[k] for k in keys], [human[k] for k in keys]).statistic
        # item level: per segment across the MT systems, averaged over the segments
        per_segment = []
        for i in range(N_SEGMENTS):
            ss = [s for s in MT_SYSTEMS if human[(i, s)] is not None]
            per_segment.append(
                stats.kendalltau([m[(i, s)] for s in ss], [human[(i, s)] for s in ss]).statistic
            )
        expected_item = float(np.mean(per_segment))
        for level, expected in (
            (system_level, expected_system),
            (global_level, expected_global),
            (item_level, expected_item),
        ):
            df = correlate(study, level=level, method="kendall")
            row = df.filter((df["measure"] == metric) & (df["against"] == "mqm"))
            assert row.height == 1
            assert math.isclose(row["statistic"][0], expected, abs_tol=1e-12), (level, metric)


def _given_pairs(files, x, y, systems):
    """The given values of measures x and y for the systems where both are present."""
    both = [s for s in systems if files[x].get(s) is not None and files[y].get(s) is not None]
    return [files[x][s] for s in both], [files[y][s] for s in both]


@pytest.mark.parametrize("include_human", [False, True])
def test_correlate_given_system_scores_matches_scipy(test_set, include_human):
    con = open_store()
    ingest(con, test_set, lp="de-en", ref="refA", format="wmt")
    study = load_study(con)
    files = expected_given_system_scores(test_set, "de-en")
    systems = SYSTEMS if include_human else MT_SYSTEMS
    options = {"level": "system", "system_scores": "given", "include_human": include_human}
    pearson = correlate(study, method="pearson", pvalue_method="auto", confidence=0.9, **options)
    kendall = correlate(study, method="kendall", **options)
    metrics = ("BLEU-refA", "CometKiwi-src", "chrF-refA")  # chrF-refA: system level only
    criteria = ("mqm", "wmt-z")
    assert sorted(zip(pearson["measure"], pearson["against"], strict=True)) == sorted(
        (m, c) for m in metrics for c in criteria
    )
    for metric in metrics:
        for criterion in criteria:
            x, y = _given_pairs(files, metric, criterion, systems)
            # refB: in mqm None, absent from the BLEU-refA.sys and chrF-refA files
            assert len(x) == (
                4 if include_human and {metric, criterion} == {"CometKiwi-src", "wmt-z"} else 3
            )
            expected = stats.pearsonr(x, y)
            row = pearson.filter(
                (pearson["measure"] == metric) & (pearson["against"] == criterion)
            ).row(0, named=True)
            assert math.isclose(row["statistic"], expected.statistic, abs_tol=1e-12)
            assert math.isclose(row["pvalue"], expected.pvalue, abs_tol=1e-12)
            assert row["n"] == len(x)
            if len(x) > 3:  # the Fisher interval needs n > 3 (ours is NaN, scipy's [-1, 1])
                low, high = expected.confidence_interval(0.9)
                assert math.isclose(row["ci_low"], low, abs_tol=1e-12)
                assert math.isclose(row["ci_high"], high, abs_tol=1e-12)
            row = kendall.filter((kendall["measure"] == metric) & (kendall["against"] == criterion))
            assert math.isclose(
                row["statistic"][0], stats.kendalltau(x, y).statistic, abs_tol=1e-12
            )
    # metrics against metrics too
    metrics_only = correlate(study, method="pearson", against="metrics", **options)
    row = metrics_only.filter(
        (metrics_only["measure"] == "BLEU-refA") & (metrics_only["against"] == "chrF-refA")
    )
    expected = stats.pearsonr(*_given_pairs(files, "BLEU-refA", "chrF-refA", systems))
    assert math.isclose(row["statistic"][0], expected.statistic, abs_tol=1e-12)
    # the default (means over segments) is another number, and knows no system-only measure
    default = correlate(study, level="system", method="pearson", include_human=include_human)
    assert set(default["measure"]) == {"BLEU-refA", "CometKiwi-src"}
    assert set(default["against"]) == {"mqm"}
    key = (pl.col("measure") == "BLEU-refA") & (pl.col("against") == "mqm")
    assert not math.isclose(
        default.filter(key)["statistic"][0], pearson.filter(key)["statistic"][0]
    )


def test_given_system_scores_leave_out_measures_without_them(test_set, capsys):
    """As MTME at system level, a measure without a .sys.score file is left out (not the whole
    correlation refused); the command line names it in one note on stderr."""
    files = expected_given_system_scores(test_set, "de-en")
    sys_path(test_set, "de-en", "CometKiwi-src").unlink()
    con = open_store()
    ingest(con, test_set, lp="de-en", ref="refA", format="wmt")
    study = load_study(con)
    df = correlate(study, level="system", system_scores="given", method="pearson")
    assert set(df["measure"]) == {"BLEU-refA", "chrF-refA"}
    assert set(df["against"]) == {"mqm", "wmt-z"}
    assert given_left_out(study, ("metric",), False) == ["CometKiwi-src"]
    row = df.filter((pl.col("measure") == "BLEU-refA") & (pl.col("against") == "mqm"))
    expected = stats.pearsonr(*_given_pairs(files, "BLEU-refA", "mqm", MT_SYSTEMS)).statistic
    assert math.isclose(row["statistic"][0], expected, abs_tol=1e-12)
    with pytest.raises(ValueError, match=r"^system_scores='given' is for level='system'.*'item'"):
        correlate(study, level="segment", system_scores="given")
    with pytest.raises(ValueError, match=r"^system_scores must be one of 'mean', 'given'; got 'x'"):
        correlate(study, level="system", system_scores="x")
    db = test_set.parent / "de-en.duckdb"
    assert main(["ingest", "--db", str(db), str(test_set), "--lp", "de-en", "--ref", "refA"]) == 0
    capsys.readouterr()
    given = ["--db", str(db), "--level", "system", "--system-scores", "given", "--format", "csv"]
    assert main(["correlate", *given]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "note: --system-scores given: left out 1 measure(s) without given system-level values "
        "(WMT: no .sys.score file): 'CometKiwi-src'"
    ]
    assert "CometKiwi-src" not in captured.out and "BLEU-refA,mqm,system" in captured.out
    # refB's only MQM value is None (refA's is left out): none for the systems kept
    path = sys_path(test_set, "en-de", "mqm")
    path.write_text("".join(f"{s}\t{v}\n" for s, v in lines_of(path) if s in ("refA", "refB")))
    con = open_store()
    ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    study = load_study(con)
    df = correlate(study, level="system", system_scores="given")
    assert set(df["against"]) == {"wmt-z"}
    assert given_left_out(study, ("metric",), False) == ["mqm"]
    assert given_left_out(study, ("metric",), True) == ["mqm"]  # refB's None is no value
    # with no metric's .sys.score file (the real WMT22 copy), one line says so
    for metric in ("BLEU-refA", "chrF-refA"):
        sys_path(test_set, "en-de", metric).unlink()
    (test_set / "metric-scores" / "en-de" / "CometKiwi-src.sys.score").unlink()
    con = open_store()
    ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    with pytest.raises(
        ValueError,
        match=r"^system_scores='given': no measure of kinds metric has a given system-level "
        r"value for a system other than the human-written ones \(WMT: no \.sys\.score file",
    ):
        correlate(load_study(con), level="system", system_scores="given")


def _tie_calibrated(h, m):
    """acc_eq and its epsilon of metric m against h (lists, None missing) by brute force: the
    candidates 0 and every |m_i - m_j|; the smallest epsilon among the maxima."""
    both = [(x, y) for x, y in zip(h, m, strict=True) if x is not None and y is not None]
    pairs = [(both[i], both[j]) for i in range(len(both)) for j in range(i + 1, len(both))]
    best = (-1.0, 0.0)
    for eps in sorted({0.0, *(abs(a[1] - b[1]) for a, b in pairs)}):
        good = 0
        for (h1, m1), (h2, m2) in pairs:
            dh, dm = h1 - h2, m1 - m2
            tie = abs(dm) <= eps
            good += (dh == 0 and tie) or (dh != 0 and not tie and np.sign(dh) == np.sign(dm))
        if good / len(pairs) > best[0] + 1e-12:
            best = (good / len(pairs), eps)
    return best


def test_given_system_scores_in_the_meta_evaluation_statistics(test_set, capsys):
    """calibrate, calibrated-permutation and clusters take the given system-level values; spa
    refuses them (its p-values permute the segments); --criterion picks one criterion."""
    con = open_store()
    ingest(con, test_set, lp="de-en", ref="refA", format="wmt")
    study = load_study(con)
    files = expected_given_system_scores(test_set, "de-en")
    metrics = ("BLEU-refA", "CometKiwi-src", "chrF-refA")
    given = {"level": "system", "system_scores": "given"}
    calibrated = calibrated_accuracy(study, **given)
    assert len(calibrated) == 6
    for metric in metrics:
        for criterion in ("mqm", "wmt-z"):
            h = [files[criterion].get(s) for s in MT_SYSTEMS]
            m = [files[metric].get(s) for s in MT_SYSTEMS]
            acc, eps = _tie_calibrated(h, m)
            row = calibrated.filter(
                (pl.col("measure") == metric) & (pl.col("against") == criterion)
            ).row(0, named=True)
            assert math.isclose(row["statistic"], acc, abs_tol=1e-12), (metric, criterion)
            assert math.isclose(row["epsilon"], eps, abs_tol=1e-9), (metric, criterion)
    one = calibrated_accuracy(study, criterion="wmt-z", **given)
    assert one.equals(calibrated.filter(pl.col("against") == "wmt-z"))
    with pytest.raises(ValueError, match=r"^system_scores='given' is for level='system'"):
        calibrated_accuracy(study, level="item", system_scores="given")
    # the mean over segments is another number
    mean = calibrated_accuracy(study, level="system")
    assert set(mean["measure"]) == {"BLEU-refA", "CometKiwi-src"}

    comparison = calibrated_comparison(study, criterion="wmt-z", permutations=50, **given)
    for row in comparison.iter_rows(named=True):
        expected = calibrated.filter(
            (pl.col("measure") == row["measure_a"]) & (pl.col("against") == "wmt-z")
        )
        assert math.isclose(row["stat_a"], expected["statistic"][0], abs_tol=1e-12)

    clusters = metric_clusters(study, criterion="wmt-z", method="pearson", permutations=50, **given)
    expected = {
        m: stats.pearsonr(*_given_pairs(files, m, "wmt-z", MT_SYSTEMS)).statistic for m in metrics
    }
    assert clusters["measure"].to_list() == sorted(metrics, key=lambda m: -expected[m])
    for row in clusters.iter_rows(named=True):
        assert math.isclose(row["statistic"], expected[row["measure"]], abs_tol=1e-12)
    acc = metric_clusters(study, criterion="mqm", method="acc_eq", permutations=50, **given)
    for row in acc.iter_rows(named=True):
        expected = calibrated.filter(
            (pl.col("measure") == row["measure"]) & (pl.col("against") == "mqm")
        )
        assert math.isclose(row["statistic"], expected["statistic"][0], abs_tol=1e-12)

    with pytest.raises(ValueError, match=r"^system_scores='given': soft pairwise accuracy"):
        spa(study, system_scores="given")

    # the command line: the options, and one note naming what was left out
    db = test_set.parent / "de-en.duckdb"
    sys_path(test_set, "de-en", "CometKiwi-src").unlink()
    assert main(["ingest", "--db", str(db), str(test_set), "--lp", "de-en", "--ref", "refA"]) == 0
    capsys.readouterr()
    common = ["--db", str(db), "--level", "system", "--system-scores", "given", "--format", "csv"]
    note = (
        "note: --system-scores given: left out 1 measure(s) without given system-level values "
        "(WMT: no .sys.score file): 'CometKiwi-src'"
    )
    for command in (
        ["calibrate", "--criterion", "mqm"],
        ["calibrated-permutation", "--criterion", "mqm", "--permutations", "20"],
        ["clusters", "--criterion", "mqm", "--permutations", "20", "--method", "acc_eq"],
    ):
        assert main([*command, *common]) == 0, command
        captured = capsys.readouterr()
        assert captured.err.splitlines() == [note], command
        rows = list(csv.DictReader(io.StringIO(captured.out)))
        assert rows and "CometKiwi-src" not in captured.out, command
    assert main(["spa", "--db", str(db), "--system-scores", "given"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("error: system_scores='given': soft pairwise")


def _exact_spa(h, m, systems, n):
    """SPA of metric m against h ({(segment, system): value}) with every sign flip of the
    segments kept in both (exact p-values: the Monte Carlo ones converge to them)."""
    import itertools

    pairs = [(a, b) for i, a in enumerate(systems) for b in systems[i + 1 :]]
    errors = []
    for a, b in pairs:
        keep = [
            k
            for k in range(n)
            if None not in (h.get((k, a)), h.get((k, b)), m.get((k, a)), m.get((k, b)))
        ]
        pvalues = []
        for scores in (h, m):
            d = np.array([scores[(k, a)] - scores[(k, b)] for k in keep])
            flips = np.array(list(itertools.product((1, -1), repeat=len(keep))))
            pvalues.append(np.mean((flips * d).mean(axis=1) >= d.mean() - 1e-12))
        errors.append(abs(pvalues[0] - pvalues[1]))
    return 1 - np.mean(errors)


def test_spa_one_criterion_matches_exact_permutations(test_set, capsys):
    con = open_store()
    ingest(con, test_set, lp="de-en", ref="refA", format="wmt")
    study = load_study(con)
    values = expected_values(test_set, "de-en")
    full = spa(study, permutations=20000)
    one = spa(study, criterion="mqm", permutations=20000)
    assert one.equals(full.filter(pl.col("against") == "mqm"))
    for row in one.iter_rows(named=True):
        expected = _exact_spa(values["mqm"], values[row["measure"]], MT_SYSTEMS, N_SEGMENTS)
        assert math.isclose(row["statistic"], expected, abs_tol=0.02), row
    with pytest.raises(ValueError, match=r"^criterion must be one of"):
        spa(study, criterion="nope")
    db = test_set.parent / "de-en.duckdb"
    assert main(["ingest", "--db", str(db), str(test_set), "--lp", "de-en", "--ref", "refA"]) == 0
    capsys.readouterr()
    assert main(["spa", "--db", str(db), "--criterion", "mqm", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["against"] for r in rows} == {"mqm"} and len(rows) == 2


def test_gzip_compressed_files_are_read_as_their_content(test_set):
    """A test set whose files are gzip-compressed (``*.seg.score.gz``, ``LP.txt.gz``, ...) gives
    the same store as the plain one; a file given both ways is refused."""
    import gzip

    plain = open_store()
    ingest(plain, test_set, lp="de-en", ref="refA", format="wmt")
    compressed = [
        p
        for p in test_set.rglob("*")
        if p.is_file() and ("de-en" in p.name or p.parent.name == "de-en")
    ]
    for path in compressed:
        path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes()))
        path.unlink()
    con = open_store()
    (summary,) = ingest(con, test_set, lp="de-en", ref="refA", format="wmt")
    assert summary.n_values > 0
    for q in (
        "SELECT * EXCLUDE (source_name) FROM measure_catalogue ORDER BY ALL",
        "SELECT * FROM scores_wide ORDER BY ALL",
        "SELECT measure, system, value FROM given_system_scores ORDER BY ALL",
    ):
        assert con.execute(q).fetchall() == plain.execute(q).fetchall()
    assert con.execute("SELECT text, domain FROM inputs ORDER BY position").fetchall() == (
        plain.execute("SELECT text, domain FROM inputs ORDER BY position").fetchall()
    )
    mqm = test_set / "human-scores" / "de-en.mqm.seg.score"
    mqm.write_bytes(gzip.decompress(mqm.with_name(mqm.name + ".gz").read_bytes()))
    with pytest.raises(InputError, match=r"^human-scores: both 'de-en\.mqm\.seg\.score' and "):
        ingest(open_store(), test_set, lp="de-en", ref="refA", format="wmt")


def test_store_without_system_level_table(test_set, tmp_path):
    """A store of schema 0 without given_system_scores_by_id: a writable open creates the table; the
    study has no given values and refuses system_scores='given'."""
    db = tmp_path / "old.duckdb"
    con = open_store(db)
    ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    con.execute("DROP VIEW given_system_scores")
    con.execute("DROP TABLE given_system_scores_by_id")
    con.execute("DROP TABLE store_schema")
    con.close()
    con = open_store(db)
    assert con.execute("SELECT count(*) FROM given_system_scores_by_id").fetchall() == [(0,)]
    study = load_study(con)
    con.close()
    assert study.given_system_scores.is_empty() and study.measures == (
        "mqm",
        "BLEU-refA",
        "CometKiwi-src",
    )
    with pytest.raises(ValueError, match="no given system-level values"):
        correlate(study, level="system", system_scores="given")


def test_rerun_is_idempotent(test_set):
    con = open_store()
    ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    before = counts(con)
    (again,) = ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    assert again.skipped and counts(con) == before
    # another pair of the test set is a new subset of the study (tests/store/test_store_subsets),
    # its system-level values kept apart from en-de's; ingested again, it is skipped
    (other,) = ingest(con, test_set, lp="de-en", ref="refA", format="wmt")
    assert other.added["inputs"] == 4 and other.replaced == 0
    assert con.execute("SELECT name FROM study").fetchall() == [("wmt23",)]
    both = counts(con)
    assert both["given_system_scores_by_id"] == 2 * before["given_system_scores_by_id"]
    for lp in ("de-en", "en-de"):
        assert ingest(con, test_set, lp=lp, ref="refA", format="wmt")[0].skipped
    assert counts(con) == both
    # a changed file is a new ingest: refused without --replace, nothing written
    path = test_set / "metric-scores" / "en-de" / "BLEU-refA.seg.score"
    path.write_text(path.read_text().replace("sysA\t", "sysA\t1", 1))
    before = counts(con)
    with pytest.raises(InputError, match="would replace 1 value"):
        ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    assert counts(con) == before


def test_system_level_rerun_and_replace(test_set):
    con = open_store()
    ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    before = counts(con)
    # the same values in a changed file (a reordered line) add nothing
    path = sys_path(test_set, "en-de", "BLEU-refA")
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[::-1]) + "\n")
    (again,) = ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    assert not again.skipped and again.replaced == 0 and again.added["values"] == 0
    assert counts(con) == {**before, "ingests": before["ingests"] + 1}
    # a changed system-level value is refused, then replaced with --replace
    path.write_text("".join(f"{s}\t{9.5 if s == 'sysB' else v}\n" for s, v in lines_of(path)))
    new = read_sys_scores(path)["sysB"]
    assert new == 9.5
    before = counts(con)
    with pytest.raises(
        InputError,
        match=r"would replace 1 value\(s\) .*\(first: system-level value of system 'sysB', "
        r"measure 'BLEU-refA': ",
    ):
        ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    assert counts(con) == before
    assert (
        ingest(con, test_set, lp="en-de", ref="refA", replace=True, format="wmt")[0].replaced == 1
    )
    stored = con.execute(
        "SELECT value FROM given_system_scores WHERE measure = 'BLEU-refA' AND system = 'sysB'"
    ).fetchall()
    assert stored == [(new,)]
    assert counts(con)["given_system_scores_by_id"] == before["given_system_scores_by_id"]


def _break(root, relative, old, new):
    path = root / relative
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ("human-scores/en-de.mqm.seg.score", "sysC\t", "sysC\tabc\nsysC\t"),
            r"^en-de\.mqm\.seg\.score, row 9, column 'score': expected a finite number or None, "
            r"got 'abc'$",
        ),
        (
            ("human-scores/en-de.mqm.seg.score", "sysC\t", "sysC\tinf\nsysC\t"),
            r"^en-de\.mqm\.seg\.score, row 9, column 'score': expected a finite number",
        ),
        (
            ("metric-scores/en-de/BLEU-refA.seg.score", "sysB\t", "sysB\t1.0\nsysB\t"),
            r"^BLEU-refA\.seg\.score, row 9: system 'sysB' has more than 4 scores "
            r"\(one per line of en-de\.txt\)$",
        ),
        (
            ("metric-scores/en-de/BLEU-refA.seg.score", "sysC\t", "sysX\t"),
            r"^BLEU-refA\.seg\.score, row 9, column 'system': system 'sysX' has no output file "
            r"system-outputs/en-de/sysX\.txt$",
        ),
        (
            ("metric-scores/en-de/CometKiwi-src.seg.score", "\nsysA\t", "\nsysA\t1\t"),
            r"^CometKiwi-src\.seg\.score, row 2: expected 'SYSTEM SCORE', got 3 fields$",
        ),
        (
            ("human-scores/en-de.mqm.sys.score", "sysB\t", "sysB\tabc\nsysB\t"),
            r"^en-de\.mqm\.sys\.score, row 2, column 'score': expected a finite number or None, "
            r"got 'abc'$",
        ),
        (
            ("metric-scores/en-de/BLEU-refA.sys.score", "sysC\t", "sysX\t"),
            r"^BLEU-refA\.sys\.score, row 3, column 'system': system 'sysX' has no output file "
            r"system-outputs/en-de/sysX\.txt$",
        ),
        (
            ("metric-scores/en-de/chrF-refA.sys.score", "sysC\t", "sysB\t"),
            r"^chrF-refA\.sys\.score, row 3: system 'sysB' has more than one score$",
        ),
        (
            ("system-outputs/en-de/sysB.txt", "output 3\n", "output 3\nextra\n"),
            r"^sysB\.txt: has 5 lines, expected 4 \(one per line of en-de\.txt\)$",
        ),
    ],
)
def test_bad_file_names_file_and_line(test_set, edit, message):
    _break(test_set, *edit)
    con = open_store()
    empty = counts(con)
    with pytest.raises(InputError, match=message):
        ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    assert counts(con) == empty


def test_too_few_scores_names_the_system(test_set):
    path = test_set / "human-scores" / "en-de.mqm.seg.score"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:4] + lines[5:]) + "\n")  # drop sysB's first score
    with pytest.raises(InputError, match=r"row 7: system 'sysB' has 3 scores, expected 4"):
        ingest(open_store(), test_set, lp="en-de", ref="refA", format="wmt")


def test_language_pair_and_reference_choice(test_set):
    con = open_store()
    with pytest.raises(InputError, match=r"^wmt23: 2 language pairs \(de-en, en-de\): choose one"):
        ingest(con, test_set, format="wmt")
    with pytest.raises(InputError, match=r"^wmt23: no language pair 'fr-de'; found: de-en, en-de"):
        ingest(con, test_set, lp="fr-de", format="wmt")
    with pytest.raises(InputError, match=r"2 references \(refA, refB\): choose one with --ref"):
        ingest(con, test_set, lp="en-de", format="wmt")
    with pytest.raises(InputError, match=r"no reference 'refC'; found: refA, refB"):
        ingest(con, test_set, lp="en-de", ref="refC", format="wmt")
    assert counts(con)["ingests"] == 0
    # refB standard: refA is a human system, the -refB metric kept and the -refA ones left out
    (summary,) = ingest(con, test_set, lp="en-de", ref="refB", format="wmt")
    refs = con.execute("SELECT DISTINCT reference FROM items ORDER BY 1").fetchall()
    assert refs == [(f"en-de other reference {i}",) for i in range(N_SEGMENTS)]
    systems = con.execute("SELECT name, is_human FROM systems ORDER BY name").fetchall()
    assert systems == [("refA", True), ("sysA", False), ("sysB", False), ("sysC", False)]
    measures = [r[0] for r in con.execute("SELECT name FROM measures ORDER BY position").fetchall()]
    assert measures == ["mqm", "wmt-z", "BLEU-refB", "CometKiwi-src"]
    assert "left out 2 metric(s) computed against another reference than refB" in str(summary)
    assert "--lp en-de --ref refA into another store" in str(summary)


def test_standard_reference_is_not_a_system(test_set):
    """MTME's GetCorrelations: systems = all outputs - main refs; human outputs (refB) only with
    include_human; the standard reference refA's scores are left out, and the summary says so."""
    con = open_store()
    (summary,) = ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    # refA's lines: 4 in mqm.seg, 4 in CometKiwi-src.seg, 1 in each of mqm, wmt-z and
    # CometKiwi-src .sys, 1 in mqm.domain (BLEU-refA has none, BLEU-refB is not read)
    assert summary.notes[0] == (
        "the standard reference refA is the items' reference, not a system: left out its "
        "output file and its 12 score(s)"
    )
    assert "\n  note: the standard reference refA is the items' reference" in str(summary)
    assert con.execute(
        "SELECT count(*) FROM items i JOIN systems s USING (system_id) WHERE s.name = 'refA'"
    ).fetchall() == [(0,)]
    study = load_study(con)
    assert study.systems == tuple(sorted(SYSTEMS))  # ordered by name
    assert dict(zip(study.systems, study.is_human.tolist(), strict=True)) == {
        "refB": True,
        "sysA": False,
        "sysB": False,
        "sysC": False,
    }
    values = expected_values(test_set, "en-de")
    for include_human, systems in ((False, MT_SYSTEMS), (True, SYSTEMS)):
        df = correlate(study, level="system", method="pearson", include_human=include_human)
        row = df.filter((pl.col("measure") == "CometKiwi-src") & (pl.col("against") == "mqm"))
        expected = stats.pearsonr(
            _system_means(values["CometKiwi-src"], systems), _system_means(values["mqm"], systems)
        )
        assert math.isclose(row["statistic"][0], expected.statistic, abs_tol=1e-12)


def test_metrics_of_other_references_are_left_out(test_set):
    """MTME's ParseMetricName: REF 'src' none, 'all' every reference, else '.'-separated; a
    metric is kept only if its references are among the main ones ({refA})."""
    folder = test_set / "metric-scores" / "en-de"
    for name in ("COMET-refA.refB", "MBR-all"):
        _write(
            folder / f"{name}.seg.score", _score_lines(np.random.default_rng(1), SYSTEMS, scale=1)
        )
    (folder / "BLEU-refB.seg.score").write_text("not read\n")  # left out unread: no error
    con = open_store()
    (summary,) = ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    measures = [r[0] for r in con.execute("SELECT name FROM measures ORDER BY position").fetchall()]
    assert measures == ["mqm", "wmt-z", "BLEU-refA", "CometKiwi-src", "chrF-refA"]
    assert summary.notes[1] == (
        "left out 3 metric(s) computed against another reference than refA (BLEU-refB, "
        "COMET-refA.refB, MBR-all): to study a metric of reference refB, ingest wmt23 with "
        "--lp en-de --ref refB into another store"
    )
    # 'all' with one reference only is that reference
    for path in (test_set / "references").glob("*.refB.txt"):
        path.unlink()
    (test_set / "system-outputs" / "en-de" / "refB.txt").unlink()
    for path in [*(test_set / "human-scores").glob("en-de.*"), *folder.glob("*")]:
        lines = path.read_text().splitlines()  # drop refB's score lines
        path.write_text("".join(f"{line}\n" for line in lines if line.split()[-2] != "refB"))
    con = open_store()
    ingest(con, test_set, lp="en-de", format="wmt")  # one reference: no --ref needed
    measures = [r[0] for r in con.execute("SELECT name FROM measures ORDER BY position").fetchall()]
    assert "MBR-all" in measures and "COMET-refA.refB" not in measures


def test_documents_give_domain_and_document(test_set):
    con = open_store()
    ingest(con, test_set, lp="de-en", ref="refA", format="wmt")
    rows = con.execute("SELECT domain, document FROM inputs ORDER BY position").fetchall()
    assert rows == [("news", "doc0"), ("news", "doc0"), ("social", "doc1"), ("social", "doc1")]
    # the documents file is optional
    (test_set / "documents" / "en-de.docs").unlink()
    con = open_store()
    ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    assert con.execute("SELECT count(*) FROM inputs WHERE domain IS NULL").fetchall() == [(4,)]
    path = test_set / "documents" / "de-en.docs"
    path.write_text("news doc0\nnews\nsocial doc1\nsocial doc1\n")
    with pytest.raises(
        InputError, match=r"^de-en\.docs, row 2: expected 'DOMAIN DOCUMENT', got 1 field\(s\)$"
    ):
        ingest(open_store(), test_set, lp="de-en", ref="refA", format="wmt")
    path.write_text("news doc0\n")
    with pytest.raises(InputError, match=r"^de-en\.docs: has 1 lines, expected 4"):
        ingest(open_store(), test_set, lp="de-en", ref="refA", format="wmt")


def test_old_store_gains_domain_and_document(tmp_path):
    """A store of schema 0 without inputs.domain, inputs.document and inputs.subset gains them
    when it is opened for writing, its rows kept."""
    old_schema = "\n".join(
        line
        for line in read_sql("schema.sql").splitlines()
        if not re.match(r"\s*(domain|document|subset)\s+VARCHAR,?$", line)
    ).replace("text     VARCHAR,\n", "text     VARCHAR\n")
    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))
    con.execute(old_schema)
    con.execute("DROP TABLE store_schema")
    con.execute("INSERT INTO inputs (name, position, text) VALUES ('en-de:0', 0, 'source')")
    assert "domain" not in {r[0] for r in con.execute("DESCRIBE inputs").fetchall()}
    con.close()
    con = open_store(db)
    rows = con.execute("SELECT name, text, domain, document, subset FROM inputs").fetchall()
    assert rows == [("en-de:0", "source", None, None, None)]
    con.close()


def test_reingest_with_another_reference(test_set):
    con = open_store()
    ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    before = counts(con)
    with pytest.raises(
        InputError,
        match=r"^wmt23: would replace 12 reference text\(s\) and 0 output text\(s\) already in "
        r"the store \(first: item 'en-de:0:sysA', reference 'en-de reference 0' -> 'en-de other "
        r"reference 0'\); pass --replace",
    ):
        ingest(con, test_set, lp="en-de", ref="refB", format="wmt")
    assert counts(con) == before
    (summary,) = ingest(con, test_set, lp="en-de", ref="refB", replace=True, format="wmt")
    assert summary.replaced_texts == {"reference texts": 12, "output texts": 0}
    assert "replaced: 0 values, 12 reference texts" in str(summary)
    # a changed output text is counted too
    path = test_set / "system-outputs" / "en-de" / "sysA.txt"
    path.write_text(path.read_text().replace("output 0", "output zero"))
    with pytest.raises(InputError, match=r"would replace 0 reference text\(s\) and 1 output"):
        ingest(con, test_set, lp="en-de", ref="refB", format="wmt")
    (summary,) = ingest(con, test_set, lp="en-de", ref="refB", replace=True, format="wmt")
    assert summary.replaced_texts == {"reference texts": 0, "output texts": 1}


def test_cli_refuses_what_is_not_a_test_set(test_set, tmp_path, capsys):
    db = tmp_path / "store.duckdb"

    def refused(*args):
        assert main(["ingest", "--db", str(db), *map(str, args)]) == 2
        assert not db.exists() and not db.with_name(db.name + ".wal").exists()
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1
        return err[0]

    root = tmp_path / "mt-metrics-eval-v2"
    root.mkdir()
    test_set.rename(root / "wmt23")
    (root / "wmt22").mkdir()  # not a test set
    message = (
        f"error: mt-metrics-eval-v2: a folder of 1 WMT test set(s) (wmt23), not one test set: "
        f"point ingest at one of them, e.g. {root / 'wmt23'}"
    )
    assert refused(root, "--lp", "en-de") == message
    assert refused(root, "--format", "wmt") == message
    with pytest.raises(InputError, match=r"^mt-metrics-eval-v2: a folder of 1 WMT test set"):
        ingest(open_store(), root, lp="en-de", format="wmt")
    partial = root / "wmt23"
    _remove(partial / "human-scores")
    assert refused(partial, "--lp", "en-de").startswith(
        "error: wmt23: not a WMT test set: no folder human-scores/ (an MTME test set"
    )
    assert refused(tmp_path / "mt-metrics-eval-v2" / "wmt22") == (
        f"error: hanna_metric_scores.csv not found in {root / 'wmt22'}: expected a HANNA data "
        "folder (with hanna_metric_scores.csv) or a WMT test set in mt-metrics-eval's layout (a "
        "folder with human-scores/ and metric-scores/, e.g. wmt23/)"
    )
    tidy = tmp_path / "scores.csv"
    _write(tidy, ["item,input,system,measure,value", "a,p,A,BLEU,1.0"])
    assert refused(tidy, "--lp", "en-de", "--ref", "refA") == (
        f"error: --lp and --ref: for WMT test sets only; {tidy} is read as tidy"
    )
    # a refused ingest into an existing store leaves it there, unchanged
    assert main(["ingest", "--db", str(db), str(tidy)]) == 0
    assert main(["ingest", "--db", str(db), str(root), "--lp", "en-de"]) == 2
    assert db.exists()


def _remove(folder):
    for path in sorted(folder.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    folder.rmdir()


def test_missing_folder(test_set):
    _remove(test_set / "system-outputs" / "en-de")
    with pytest.raises(
        InputError, match=r"^wmt23: no system output files system-outputs/en-de/SYS\.txt$"
    ):
        ingest(open_store(), test_set, lp="en-de", ref="refA", format="wmt")
    _remove(test_set / "metric-scores")
    with pytest.raises(InputError, match=r"^wmt23: no folder metric-scores/"):
        ingest(open_store(), test_set, lp="en-de", ref="refA", format="wmt")


def test_cli(test_set, tmp_path, capsys):
    db = tmp_path / "wmt.duckdb"
    assert main(["ingest", "--db", str(db), str(test_set), "--lp", "en-de", "--ref", "refA"]) == 0
    assert "wmt23 en-de: wmt, 70 values" in capsys.readouterr().out
    assert main(["correlate", "--db", str(db), "--level", "system", "--format", "csv"]) == 0
    assert "BLEU-refA,mqm,system" in capsys.readouterr().out
    given = ["correlate", "--db", str(db), "--level", "system", "--system-scores", "given"]
    assert main([*given, "--method", "pearson", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    files = expected_given_system_scores(test_set, "en-de")
    row = next(r for r in rows if (r["measure"], r["against"]) == ("chrF-refA", "wmt-z"))
    expected = stats.pearsonr(*_given_pairs(files, "chrF-refA", "wmt-z", MT_SYSTEMS)).statistic
    assert math.isclose(float(row["statistic"]), expected, rel_tol=1e-9)
    assert main([*given[:4], "segment", *given[5:]]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "error: system_scores='given' is for level='system' (the study's system-level "
        "values); got level='item'"
    ]

    _break(test_set, "human-scores/de-en.mqm.seg.score", "sysA\t", "sysA\tx")
    db2 = tmp_path / "bad.duckdb"
    assert main(["ingest", "--db", str(db2), str(test_set), "--lp", "de-en", "--ref", "refA"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: de-en.mqm.seg.score, row 1, column 'score'")
    assert not db2.exists()  # a refused ingest leaves no new store file behind


def test_store_of_another_study_is_refused(test_set, tmp_path):
    tidy = tmp_path / "other.csv"
    _write(tidy, ["item,input,system,measure,value", "a,p,A,BLEU,1.0", "b,p,B,BLEU,2.0"])
    con = open_store()
    ingest(con, tidy, study="Other", format="tidy")
    before = counts(con)
    message = (
        r"^wmt23: this store holds Other; a store holds the language pairs of one test set: "
        r"ingest en-de into its own store$"
    )
    with pytest.raises(InputError, match=message):
        ingest(con, test_set, lp="en-de", ref="refA", extend=True, replace=True, format="wmt")
    assert counts(con) == before


def test_utf8_byte_order_mark_and_bad_byte(test_set):
    source = test_set / "sources" / "en-de.txt"
    source.write_bytes(b"\xef\xbb\xbf" + source.read_bytes())  # a BOM is dropped
    con = open_store()
    ingest(con, test_set, lp="en-de", ref="refA", format="wmt")
    assert con.execute("SELECT text FROM inputs WHERE name = 'en-de:0'").fetchall() == [
        ("en-de source 0 ü",)
    ]
    path = test_set / "metric-scores" / "de-en" / "BLEU-refA.seg.score"
    lines = path.read_bytes().split(b"\n")
    offset = len(b"\n".join(lines[:2])) + 1 + len(b"sysA\t")
    lines[2] = lines[2].replace(b"sysA\t", b"sysA\t\xff", 1)
    path.write_bytes(b"\n".join(lines))
    message = rf"^BLEU-refA\.seg\.score, row 3: not valid UTF-8 \(byte 0xff at offset {offset}\)$"
    with pytest.raises(InputError, match=message):
        ingest(open_store(), test_set, lp="de-en", ref="refA", format="wmt")


def test_format_detection_and_open_study(test_set):
    assert detect_format(test_set) == "wmt"
    assert tuple(INGEST_FORMATS) == tuple(FORMATS)
    with pytest.raises(InputError, match=r"^wmt23: is a WMT test set: ingest one language pair"):
        open_study(test_set)


# The real WMT22 zh-en test set (../shared/data/wmt22), standard reference refA.
WMT22_OUTPUTS = 20  # files in system-outputs/zh-en/, refA and refB among them


def test_wmt22_systems_and_metrics_follow_mtme(wmt22_dir, wmt22_study):
    outputs = sorted(p.stem for p in (wmt22_dir / "system-outputs" / "zh-en").glob("*.txt"))
    assert len(outputs) == WMT22_OUTPUTS
    assert sorted(wmt22_study.systems) == [s for s in outputs if s != "refA"]
    human = [s for s, h in zip(wmt22_study.systems, wmt22_study.is_human, strict=True) if h]
    assert human == ["refB"]
    files = sorted(
        p.name[: -len(".seg.score")]
        for p in (wmt22_dir / "metric-scores" / "zh-en").glob("*.seg.score")
    )
    assert len(files) == 52
    kept = [m for m in files if not m.endswith("-refB")]
    assert len(kept) == 31
    metrics = [
        m for m, k in zip(wmt22_study.measures, wmt22_study.kinds, strict=True) if k == "metric"
    ]
    assert sorted(metrics) == kept


# MTME's own values, computed outside the project: mt-metrics-eval's data.py, stats.py and
# meta_info.py (google-research/mt-metrics-eval at 68a481aea1a787392d55af8f76ac8ef40c5f4664),
# exported to /tmp and imported in a throwaway script: EvalSet("wmt22", "zh-en",
# read_stored_metric_scores=True, path=<the folder above wmt22/>); this copy has no metric
# .sys.score files, so each metric's system scores were added with AddMetric(level="sys") as
# the mean of its segment scores (what our system_scores="mean" takes); then
# GetCorrelations(evs, "sys", {"refA"}, set(), include_human, include_outliers=False,
# gold_name="std" (mqm), primary_metrics=False)["COMETKiwi-src"].Pearson()[0]:
# 15 systems with include_human (refB in, refA out), 14 without.
MTME_COMETKIWI_SYS_PEARSON = {True: 0.7948964556858492, False: 0.8662114569017295}


@pytest.mark.parametrize("include_human", [True, False])
def test_wmt22_system_pearson_equals_mtme(wmt22_study, include_human):
    df = correlate(wmt22_study, level="system", method="pearson", include_human=include_human)
    row = df.filter((pl.col("measure") == "COMETKiwi-src") & (pl.col("against") == "mqm"))
    assert row.height == 1
    expected = MTME_COMETKIWI_SYS_PEARSON[include_human]
    assert math.isclose(row["statistic"][0], expected, abs_tol=1e-12)


def test_wmt22_documents_and_notes(wmt22_dir):
    con = open_store()
    (summary,) = ingest(con, wmt22_dir, lp="zh-en", ref="refA", format="wmt")
    # refA's lines: 1,875 in each of the 5 human .seg files, the 10 -src metrics and
    # SEScore-refA (the other -refA metrics have none), 1 in 3 of the 5 human .sys files, and
    # 8 in the .domain files (4 domains in 2 of the 4 files)
    assert summary.notes == (
        "the standard reference refA is the items' reference, not a system: left out its "
        "output file and its 30,011 score(s)",
        "left out 21 metric(s) computed against another reference than refA (BERTScore-refB, "
        "BLEU-refB, BLEURT-20-refB, ...): to study a metric of reference refB, ingest wmt22 with "
        "--lp zh-en --ref refB into another store",
    )
    lines = (wmt22_dir / "documents" / "zh-en.docs").read_text(encoding="utf-8").splitlines()
    rows = con.execute("SELECT domain, document FROM inputs ORDER BY position").fetchall()
    assert rows == [tuple(line.split()) for line in lines]
    assert {d for d, _ in rows} == {"conversation", "ecommerce", "news", "social"}


def test_williams_on_given_system_scores(test_set):
    """`williams --system-scores given`: the correlations are those of `correlate` in given mode
    (measures with given values only), n the systems with given values, and the p-value Williams'
    T2 recomputed with scipy's t distribution (tests/report/test_report.py)."""
    from test_report import _williams_p

    from hanna_stats.analyses import williams

    con = open_store()
    ingest(con, test_set, lp="de-en", ref="refA", format="wmt")
    study = load_study(con)
    options = {"level": "system", "system_scores": "given", "include_human": True}
    tests = williams(study, criterion="wmt-z", method="pearson", **options)
    corr = correlate(study, method="pearson", **options)
    between = correlate(study, method="pearson", against="metrics", **options)

    def r(frame, a, b):
        row = frame.filter((pl.col("measure") == a) & (pl.col("against") == b))
        return row["statistic"][0]

    row = tests.filter(
        (pl.col("measure_a") == "CometKiwi-src") & (pl.col("measure_b") == "chrF-refA")
    ).row(0, named=True)
    assert row["n"] == len(SYSTEMS)  # the MT systems and refB (refA is the standard reference)
    assert row["r_a"] == pytest.approx(r(corr, "CometKiwi-src", "wmt-z"), abs=1e-12)
    assert row["r_b"] == pytest.approx(r(corr, "chrF-refA", "wmt-z"), abs=1e-12)
    assert row["r_ab"] == pytest.approx(r(between, "CometKiwi-src", "chrF-refA"), abs=1e-12)
    want = _williams_p(row["r_a"], row["r_b"], row["r_ab"], row["n"])
    assert row["pvalue"] == pytest.approx(want, rel=1e-9)
    with pytest.raises(ValueError, match="system_scores='given' is for level='system'"):
        williams(study, criterion="wmt-z", level="item", system_scores="given")


def test_borda_on_given_system_scores(test_set):
    """`borda --system-scores given`: the Borda count of the given-mode correlations (the
    measures with given values; ranks summed over criteria x coefficients), by scipy's ranks."""
    from scipy.stats import rankdata

    from hanna_stats.analyses import borda

    con = open_store()
    ingest(con, test_set, lp="de-en", ref="refA", format="wmt")
    study = load_study(con)
    options = {"level": "system", "system_scores": "given", "include_human": True}
    got = borda(study, **options)
    columns = [
        correlate(study, method=m, **options).with_columns(pl.col("statistic").abs())
        for m in ("pearson", "spearman", "kendall")
    ]
    metrics = sorted(got["measure"])
    want = {m: 0.0 for m in metrics}
    for frame in columns:
        for criterion in frame["against"].unique():
            col = frame.filter(pl.col("against") == criterion)
            values = [col.filter(pl.col("measure") == m)["statistic"][0] for m in metrics]
            for m, rank in zip(metrics, rankdata(np.round(values, 12)) - 1, strict=True):
                want[m] += rank
    assert dict(zip(got["measure"], got["borda"], strict=True)) == pytest.approx(want)


def test_topk_on_given_system_scores(test_set):
    """`topk --system-scores given`: systems ranked by the criterion's given values and the
    correlation recomputed on the given values of the k best (scipy)."""
    from hanna_stats.analyses import topk

    con = open_store()
    ingest(con, test_set, lp="de-en", ref="refA", format="wmt")
    study = load_study(con)
    files = expected_given_system_scores(test_set, "de-en")
    frame = topk(
        study, ks=[3], level="system", method="pearson", system_scores="given", include_human=True
    )
    row = frame.filter((pl.col("criterion") == "wmt-z") & (pl.col("measure") == "CometKiwi-src"))
    ranked = sorted(SYSTEMS, key=lambda s: -files["wmt-z"][s])[:3]
    assert row["systems"][0] == "; ".join(ranked)
    want = stats.pearsonr(
        [files["CometKiwi-src"][s] for s in ranked], [files["wmt-z"][s] for s in ranked]
    ).statistic
    assert row["statistic"][0] == pytest.approx(want, abs=1e-12)


def test_wmt22_domain_level_scores_stored_as_given(wmt22_dir, tmp_path):
    """The `.domain.score` files (`DOMAIN SYSTEM SCORE`) are stored as given (view
    `given_domain_scores`), the standard reference's lines left out; a domain that
    `documents/LP.docs` does not name is refused with its line."""
    con = open_store()
    ingest(con, wmt22_dir, lp="zh-en", ref="refA", format="wmt")
    stored = {
        (measure, domain, system): value
        for measure, domain, system, value in con.execute(
            "SELECT measure, domain, system, value FROM given_domain_scores ORDER BY ALL"
        ).fetchall()
    }
    expected = {}
    for path in sorted((wmt22_dir / "human-scores").glob("zh-en.*.domain.score")):
        measure = path.name[len("zh-en.") : -len(".domain.score")]
        for line in path.read_text(encoding="utf-8").splitlines():
            domain, system, score = line.split()
            if system != "refA":
                expected[measure, domain, system] = None if score == "None" else float(score)
    # 4 domains x (MQM and appraise: 19 systems; DA and DA-z: the 13 they rate)
    assert stored == expected and len(stored) == 4 * (19 + 19 + 13 + 13)
    # A domain the documents file does not name: refused, nothing written.
    copy = tmp_path / "wmt22"
    shutil.copytree(wmt22_dir, copy)
    path = copy / "human-scores" / "zh-en.mqm.domain.score"
    path.write_text(path.read_text(encoding="utf-8").replace("news\t", "sports\t", 1))
    fresh = open_store()
    with pytest.raises(InputError, match=r"zh-en\.mqm\.domain\.score, row \d+, column 'domain'"):
        ingest(fresh, copy, lp="zh-en", ref="refA", format="wmt")
    assert fresh.execute("SELECT count(*) FROM given_domain_scores_by_id").fetchall() == [(0,)]
