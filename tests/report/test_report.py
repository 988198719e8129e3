"""The HTML report: content, offline page, determinism, atomic write, non-HANNA studies.

What a reader sees in the browser (every chart read back from Chromium) is checked in
test_report_browser.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import polars as pl
import pytest
from hanna_stats.reports import ReportSettings, write_report
from hanna_stats.reports import sections as report_sections
from scipy import stats
from test_paper_golden import CRIT, TAB5, _paper_round  # the paper's Tab. 5, transcribed there

from hanna_stats.analyses.correlations import judge_criteria
from hanna_stats.analyses.overview import judge_scale
from hanna_stats.analyses.significance import judge_williams, williams_frame
from hanna_stats.cli import main
from hanna_stats.kernels.agreement import PINGOUIN_LABELS
from hanna_stats.store import build_hanna_store, ingest, load_study, open_store

SECTION_IDS = [
    "dataset",
    "criteria",
    "metrics-criteria",
    "metrics-metrics",
    "pairwise",
    "topk",
    "williams",
    "borda",
    "ties",
    "design",
    "llm-judges",
]


@pytest.fixture(scope="module")
def hanna_report(hanna_dir, tmp_path_factory) -> tuple[Path, Path]:
    """The report of the HANNA data and its tables, written through the CLI."""
    out = tmp_path_factory.mktemp("report")
    html, tables = out / "hanna.html", out / "tables"
    args = ["report", "--data", str(hanna_dir), "--out", str(html), "--tables", str(tables)]
    assert main(args) == 0
    return html, tables


def test_page_has_every_section_with_how_to_read_and_settings(hanna_report):
    text = hanna_report[0].read_text(encoding="utf-8")
    for key in SECTION_IDS:
        section = re.search(f'<section id="{key}">(.*?)</section>', text, re.S)
        assert section, key
        assert "How to read:" in section.group(1)
    # Settings lines name the seed, B, the tie rule and the Williams settings actually used.
    assert "seed <code>0</code>" in text
    assert "resamples <code>1000</code>" in text
    assert "ties <code>average</code>" in text
    assert "correction <code>none, the p-values as the tests give them</code>" in text
    # 16 charts: means, distributions, inter-criteria, 2 metric-criteria, metric-metric, pairwise,
    # top-k, Williams, 2 Borda, 2 tie calibration, 2 study design, LLM judges.
    assert len(re.findall(r'<div class="chart" id="chart-\d+"', text)) == 16
    assert len(re.findall(r'vegaEmbed\("#chart-\d+"', text)) == 16


def test_page_loads_nothing_from_the_network(hanna_report):
    text = hanna_report[0].read_text(encoding="utf-8")
    # No external script, stylesheet, font, image or import.
    assert not re.search(r"<script[^>]*\bsrc\s*=", text, re.I)
    assert not re.search(r"<link[^>]*\bhref\s*=", text, re.I)
    assert not re.search(r"<img[^>]*\bsrc\s*=\s*[\"']?(https?:)?//", text, re.I)
    assert not re.search(r"url\(\s*[\"']?(https?:)?//", text, re.I)
    assert not re.search(r"@import", text, re.I)
    # The specifications carry no $schema URL and Vega-Embed's menu (editor links) is off.
    assert "vega.github.io/schema/vega-lite" not in text
    assert '"actions": false' in text


def test_second_run_is_byte_identical(hanna_dir, hanna_report, tmp_path):
    """A fresh process (another hash seed) and a store file instead of --data: same bytes."""
    db = tmp_path / "hanna.duckdb"
    build_hanna_store(hanna_dir, db_path=db).close()
    again = tmp_path / "again.html"
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    cmd = [sys.executable, "-m", "hanna_stats", "report", "--db", str(db), "--out", str(again)]
    subprocess.run(cmd, check=True, env=env, capture_output=True)
    assert again.read_bytes() == hanna_report[0].read_bytes()


def test_tables_are_written_as_csv_and_parquet(hanna_report):
    tables = hanna_report[1]
    names = {p.stem for p in tables.iterdir()}
    assert {"system_means", "agreement", "top_metrics", "borda", "williams", "pairwise_f1"} <= names
    for name in names:
        csv = pl.read_csv(tables / f"{name}.csv")
        parquet = pl.read_parquet(tables / f"{name}.parquet")
        assert csv.shape == parquet.shape
        assert csv.columns == parquet.columns
    assert not list(tables.glob(".*.tmp"))


def test_top_metrics_table_reproduces_tab5(hanna_report):
    top = pl.read_csv(hanna_report[1] / "top_metrics.csv")
    for (level, abbr), expected in TAB5.items():
        rows = top.filter((pl.col("level") == level) & (pl.col("criterion") == CRIT[abbr]))
        assert rows["measure"].to_list() == [m for m, _ in expected]
        got = [_paper_round(100 * v) for v in rows["abs_statistic"]]
        assert got == [v for _, v in expected]


def _calibrated_acc_eq(h, m):
    """Brute force: acc_eq of metric scores ``m`` against human scores ``h`` (one group) at every
    candidate epsilon (0 and each |difference| of the metric), the largest value."""
    i, j = np.triu_indices(len(h), 1)
    dh, dm = h[i] - h[j], m[i] - m[j]
    best = 0.0
    for eps in {0.0, *np.abs(dm).tolist()}:
        tie_m = np.abs(dm) <= eps
        agree = np.where(dh == 0, tie_m, ~tie_m & (np.sign(dh) == np.sign(dm)))
        best = max(best, agree.mean())
    return best


@pytest.mark.parametrize(("measure", "criterion"), [("BLEU", "Coherence"), ("chrF", "Empathy")])
def test_tie_calibration_table_by_brute_force(hanna_report, hanna_study, measure, criterion):
    table = pl.read_csv(hanna_report[1] / "tie_calibration.csv")
    rows = table.filter((pl.col("measure") == measure) & (pl.col("against") == criterion))
    assert sorted(rows["level"]) == ["story", "system"]
    position = {m: k for k, m in enumerate(hanna_study.measures)}
    keep = ~np.asarray(hanna_study.is_human)
    h = hanna_study.values[position[criterion]][:, keep]  # inputs x systems
    m = hanna_study.values[position[measure]][:, keep]
    system = rows.filter(pl.col("level") == "system")["statistic"][0]
    assert system == pytest.approx(_calibrated_acc_eq(h.mean(axis=0), m.mean(axis=0)), abs=1e-12)
    # Item level: one epsilon shared by all inputs, the mean over inputs of each input's acc_eq.
    story = rows.filter(pl.col("level") == "story")
    eps = story["epsilon"][0]
    i, j = np.triu_indices(h.shape[1], 1)
    dh, dm = h[:, i] - h[:, j], m[:, i] - m[:, j]
    tie_m = np.abs(dm) <= eps
    agree = np.where(dh == 0, tie_m, ~tie_m & (np.sign(dh) == np.sign(dm)))
    assert story["statistic"][0] == pytest.approx(agree.mean(axis=1).mean(), abs=1e-12)
    for other in {0.0, *np.abs(dm).ravel().tolist()}:  # no candidate epsilon does better
        tie = np.abs(dm) <= other
        better = np.where(dh == 0, tie, ~tie & (np.sign(dh) == np.sign(dm))).mean(axis=1).mean()
        assert better <= story["statistic"][0] + 1e-12


def test_borda_table_reproduces_tab6_story_level(hanna_report):
    """Tab. 6, story level (docs/conventions.md: the same under every tie rule)."""
    borda = pl.read_csv(hanna_report[1] / "borda.csv").filter(pl.col("level") == "story")
    top5 = borda.sort("borda_rank").head(5)
    assert top5["measure"].to_list() == [
        "chrF",
        "S3-Pyramid",
        "ROUGE-1 Recall",
        "S3-Responsiveness",
        "BERTScore Recall",
    ]
    assert top5["borda"].to_list() == [1237, 1198, 1186, 1177, 1158]


def _judges_section(text: str) -> str:
    return re.search(r'<section id="llm-judges">(.*?)</section>', text, re.S).group(1)


def test_llm_judges_section_matches_judge_criteria(hanna_report, hanna_study):
    """The LLM-judge view (HANNA's LLM file is in the data folder) holds judge_criteria's values
    at each level, the human rater row first, and the scale and self-consistency notes."""
    section = _judges_section(hanna_report[0].read_text(encoding="utf-8"))
    assert 'id="table-judge_criteria"' in section and 'id="table-judge_williams"' in section
    assert "(policy keep)" in section
    assert "Self-consistency needs per-try ratings" in section
    assert len(re.findall(r'<div class="chart"', section)) == 1
    wide = pl.read_parquet(hanna_report[1] / "judge_criteria.parquet")
    assert wide["level"].unique(maintain_order=True).to_list() == ["system", "global", "story"]
    for level in ("system", "global", "story"):
        expected = judge_criteria(hanna_study, level=level, method="kendall")
        got = (
            wide.filter(pl.col("level") == level)
            .unpivot(index=["level", "rater", "prompt"], variable_name="criterion")
            .join(expected, on=["rater", "prompt", "criterion"], nulls_equal=True)
        )
        assert got.height == expected.height == 21 * 7  # human rater + 5 judges x 4 prompts
        assert got["value"].to_list() == got["statistic"].to_list()
        assert wide.filter(pl.col("level") == level)["rater"][0] == "Human rater"
    scale = pl.read_parquet(hanna_report[1] / "judge_scale.parquet")
    assert scale.equals(judge_scale(hanna_study))


def _kendall_b(x, y) -> float:
    return stats.kendalltau(x, y, variant="b").statistic


def _williams_p(r_a: float, r_b: float, r_ab: float, n: int) -> float:
    """One-sided p of H1 |r_a| > |r_b| (Williams' T2, Steiger 1980 eq. 7), written afresh."""
    r12, r13 = abs(r_a), abs(r_b)
    r23 = np.sign(r_a) * np.sign(r_b) * r_ab
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    mean = (r12 + r13) / 2
    t = (r12 - r13) * np.sqrt(
        (n - 1) * (1 + r23) / (2 * (n - 1) / (n - 3) * det + mean**2 * (1 - r23) ** 3)
    )
    return float(stats.t.sf(t, n - 3))


@pytest.mark.parametrize("level", ["system", "global"])
def test_llm_judges_williams_rows_recomputed(hanna_report, hanna_study, level):
    """A Williams row recomputed from the data with scipy: Kendall taus of the system means
    (system level) or of every item (global level), Williams' T2 with Student's t, and the BH
    adjustment over the judge x prompt's family (its six criteria against the same metric)."""
    tests = pl.read_parquet(hanna_report[1] / "judge_williams.parquet")
    assert tests.filter(pl.col("level") == level).height == 6 * 20  # criteria x judge-prompts
    study = hanna_study
    keep = ~study.is_human
    position = {m: i for i, m in enumerate(study.measures)}

    def values(measure):
        cube = study.values[position[measure]][:, keep]  # (inputs, systems)
        return np.nanmean(cube, axis=0) if level == "system" else cube.ravel()

    # The best metric: the largest |tau| among the metrics, per criterion.
    metrics = study.catalogue.filter(pl.col("kind") == "metric")["measure"].to_list()
    rows = tests.filter(pl.col("level") == level)
    for criterion, best in rows.select("criterion", "best_metric").unique().iter_rows():
        if level == "system":
            taus = {m: abs(_kendall_b(values(m), values(criterion))) for m in metrics}
            assert taus[best] == pytest.approx(max(taus.values()), abs=1e-12)
    row = rows.sort("pvalue_judge_better", "criterion", "judge", "prompt").row(0, named=True)
    judges = study.catalogue.filter(
        (pl.col("judge") == row["judge"]) & (pl.col("variant") == row["prompt"])
    )
    metric, n = row["best_metric"], row["n"]
    assert n == (10 if level == "system" else 960)
    family = {}
    for criterion, measure in judges.select("criterion", "measure").iter_rows():
        if criterion not in study.criteria:
            continue  # the judge's Average
        r_j = _kendall_b(values(measure), values(criterion))
        r_m = _kendall_b(values(metric), values(criterion))
        r_jm = _kendall_b(values(measure), values(metric))
        family[criterion] = (
            r_j,
            r_m,
            _williams_p(r_j, r_m, r_jm, n),
            _williams_p(r_m, r_j, r_jm, n),
        )
    criteria = list(family)
    r_j, r_m, p_judge, p_metric = family[row["criterion"]]
    assert row["tau_judge"] == pytest.approx(r_j, abs=1e-12)
    assert row["tau_metric"] == pytest.approx(r_m, abs=1e-12)
    assert row["pvalue_judge_better"] == pytest.approx(p_judge, rel=1e-9)
    assert row["pvalue_metric_better"] == pytest.approx(p_metric, rel=1e-9)
    at = criteria.index(row["criterion"])
    for column, k in (("pvalue_judge_better_adjusted", 2), ("pvalue_metric_better_adjusted", 3)):
        adjusted = stats.false_discovery_control([family[c][k] for c in criteria], method="bh")
        assert row[column] == pytest.approx(adjusted[at], rel=1e-9)


def test_judge_williams_selects_rows_of_williams_frame(hanna_study):
    """judge_williams gives williams_frame's rows (family pair, BH) for (judge, best metric)
    and (best metric, judge), without computing the other ordered pairs."""
    ours = judge_williams(hanna_study, level="system", correction="bh")
    full = williams_frame(
        hanna_study,
        criteria=list(hanna_study.criteria),
        levels=("system",),
        methods=("kendall",),
        correction="bh",
        family="pair",
        kinds=("metric", "llm-judge"),
    )
    keys = ["criterion", "measure", "metric"]
    forward = full.rename({"measure_a": "measure", "measure_b": "metric"})
    reverse = full.rename({"measure_b": "measure", "measure_a": "metric"})
    both = ours.join(forward, on=keys, suffix="_f").join(reverse, on=keys, suffix="_r")
    assert both.height == ours.height == 120
    for mine, theirs in [
        ("statistic", "statistic_f"),
        ("pvalue_judge", "pvalue"),
        ("pvalue_judge_adjusted", "pvalue_adjusted"),
        ("pvalue_metric", "pvalue_r"),
        ("pvalue_metric_adjusted", "pvalue_adjusted_r"),
    ]:
        # The judge's correlation comes from the judge x criterion block, williams_frame's
        # from the whole matrix: equal up to the order of floating-point sums.
        np.testing.assert_allclose(both[mine], both[theirs], rtol=1e-12, atol=1e-15, err_msg=mine)


def test_llm_judges_absent_without_judges(metric_study):
    """A study without LLM-judge measures (HANNA's metric file alone) has no LLM-judge section
    (nor a line about one)."""
    ctx = report_sections.Context.of(metric_study, ReportSettings(resamples=10))
    assert report_sections.llm_judges(ctx) is None


def test_self_consistency_of_judge_tries(tmp_path, hanna_study):
    """With per-try ratings the section tabulates the judge's agreement across tries (one-way
    ICC against pingouin); without them (HANNA) it says what is needed."""
    pingouin = pytest.importorskip("pingouin")
    rng = np.random.default_rng(11)
    truth = rng.integers(1, 6, 24)
    scores = np.clip(truth[:, None] + rng.integers(-1, 2, (24, 3)), 1, 5)
    rows = [
        {
            "item": f"i{i}",
            "input": f"in{i % 6}",
            "system": f"s{i // 6}",
            "measure": "J Q",
            "value": float(scores[i, t]),
            "rater": str(t + 1),
            "kind": "llm-judge",
        }
        for i in range(24)
        for t in range(3)
    ]
    path = tmp_path / "tries.csv"
    pl.DataFrame(rows).write_csv(path)
    con = open_store()
    ingest(con, path, format="tidy")
    settings = ReportSettings()
    blocks = report_sections._self_consistency(
        SimpleNamespace(study=load_study(con), settings=settings)
    )
    table = next(b for b in blocks if getattr(b, "name", "") == "judge_self_consistency").frame
    long = pl.DataFrame(
        {
            "item": np.repeat(np.arange(24), 3),
            "try": np.tile(np.arange(3), 24),
            "score": scores.ravel().astype(float),
        }
    ).to_pandas()
    icc = pingouin.intraclass_corr(long, targets="item", raters="try", ratings="score")
    want = dict(zip(icc["Type"], icc["ICC"], strict=True))
    got = dict(table.select("statistic_name", "statistic").iter_rows())
    for ours in ("ICC1", "ICC1k"):  # pingouin's labels: ICC(1,1), ICC(1,k)
        assert got[ours] == pytest.approx(want[PINGOUIN_LABELS[ours]], abs=1e-12)
    (note,) = report_sections._self_consistency(
        SimpleNamespace(study=hanna_study, settings=settings)
    )
    assert note.text.startswith("Self-consistency needs per-try ratings")


def test_failure_leaves_no_partial_file(hanna_dir, tmp_path, monkeypatch):
    out = tmp_path / "report.html"
    out.write_text("previous report", encoding="utf-8")

    def broken(study):
        raise RuntimeError("analysis failed")

    monkeypatch.setattr(report_sections, "SECTIONS", (*report_sections.SECTIONS[:3], broken))
    with pytest.raises(RuntimeError, match="analysis failed"):
        write_report(load_study(build_hanna_store(hanna_dir)), out, ReportSettings(resamples=10))
    assert out.read_text(encoding="utf-8") == "previous report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def _tidy_study(path: Path, *, n_systems: int, raters: bool) -> Path:
    """A small study in tidy form: one metric, one criterion (rated or stored), 6 inputs."""
    rows = []
    for g in range(6):
        for s in range(n_systems):
            item = f"i{g}-{s}"
            base = {"item": item, "input": f"in{g}", "system": f"sys{s}"}
            rows.append({**base, "measure": "overlap", "value": (g * 7 + s * 3) % 5 + 0.5})
            if raters:
                for r in range(2):
                    score = float((g + s + r) % 5 + 1)
                    rows.append({**base, "measure": "quality", "value": score, "rater": f"r{r}"})
            else:
                rows.append({**base, "measure": "quality", "value": float((g + s) % 5 + 1)})
    frame = pl.DataFrame(rows)
    if not raters:
        frame = frame.with_columns(pl.lit(None, pl.String).alias("rater"))
    frame.write_csv(path)
    return path


def test_generic_study_without_criteria_says_what_is_missing(tmp_path):
    """Without rater columns both measures are metrics: human sections explain their absence."""
    con = open_store(tmp_path / "study.duckdb")
    ingest(con, _tidy_study(tmp_path / "study.csv", n_systems=3, raters=False), format="tidy")
    out = write_report(load_study(con), tmp_path / "study.html", ReportSettings(resamples=20))
    text = out.read_text(encoding="utf-8")
    # 8 sections collapse to their line, "Is this study big enough?" among them (no LLM-judge
    # section: the study has no judges).
    assert text.count("Not computed for this study: it has no human criteria") == 8
    assert 'id="llm-judges"' not in text
    assert len(re.findall(r"<div class=\"chart\"", text)) == 1  # metric-metric only


def test_generic_study_with_few_systems(tmp_path):
    """Rated criterion, 3 systems: top-k and Williams need more systems and say so."""
    con = open_store(tmp_path / "study.duckdb")
    ingest(con, _tidy_study(tmp_path / "study.csv", n_systems=3, raters=True), format="tidy")
    out = write_report(load_study(con), tmp_path / "study.html", ReportSettings(resamples=20))
    text = out.read_text(encoding="utf-8")
    topk = re.search(r'<section id="topk">(.*?)</section>', text, re.S).group(1)
    assert "3 rated systems (at least 5 needed)" in topk
    williams = re.search(r'<section id="williams">(.*?)</section>', text, re.S).group(1)
    assert "3 rated systems (at least 4 needed)" in williams
    criteria = re.search(r'<section id="criteria">(.*?)</section>', text, re.S).group(1)
    assert 'id="table-agreement"' in criteria  # two raters: agreement computed
    assert 'id="table-system_means"' in criteria


def test_cli_without_data_says_how_to_get_it(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("HANNA_DATA", raising=False)
    monkeypatch.setenv("HANNA_STATS_CACHE", str(tmp_path / "empty-cache"))
    out = tmp_path / "r.html"
    assert main(["report", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--data" in err and "fetch-data" in err
    assert not out.exists()


def test_tables_are_replaced_as_a_set(metric_study, tmp_path, monkeypatch):
    """A failure while writing the tables leaves the previous page and the previous set of
    tables (it used to leave the new page beside a partial set); a killed run's temporary files
    are removed by the next run."""
    out, tables = tmp_path / "report.html", tmp_path / "tables"
    settings = ReportSettings(resamples=20)
    write_report(metric_study, out, settings, tables=tables)
    page, files = out.read_bytes(), sorted(p.name for p in tables.iterdir())
    (tables / "stale.csv").write_text("from an older version\n", encoding="utf-8")
    dead = 2**22 + 12345  # above Linux's default pid_max: no such process
    for leftover in (f".report.html.{dead}.tmp", f".tables.{dead}.tmp", f".tables.old.{dead}.tmp"):
        (tmp_path / leftover).mkdir() if "tables" in leftover else (tmp_path / leftover).touch()

    calls = []
    original = pl.DataFrame.write_parquet

    def full_disk(frame, path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return original(frame, path, *args, **kwargs)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", full_disk)
    with pytest.raises(OSError, match="No space left"):
        write_report(metric_study, out, ReportSettings(resamples=20, seed=1), tables=tables)
    assert out.read_bytes() == page
    assert sorted(p.name for p in tables.iterdir()) == sorted([*files, "stale.csv"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "tables"]

    monkeypatch.undo()
    write_report(metric_study, out, settings, tables=tables)  # the whole set, nothing stale
    assert sorted(p.name for p in tables.iterdir()) == files


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("--seed", "1208925819614629174706176", "--seed: must be an integer in [0, 2**63)"),
        ("--seed", "-1", "--seed: must be an integer in [0, 2**63)"),
        ("--resamples", "0", "--resamples: must be an integer in [1, 1,000,000]"),
        ("--resamples", "10000001", "--resamples: must be an integer in [1, 1,000,000]"),
        ("--alpha", "0.5", "alpha must lie in (0, 0.5)"),
        ("--confidence", "95", "confidence"),
    ],
)
def test_settings_are_checked_before_any_work(
    metric_study, tmp_path, capsys, monkeypatch, option, value, words
):
    """Regression: a seed of 2**80 ran the whole bootstrap, then failed in polars."""
    monkeypatch.setattr("hanna_stats.cli.run.study_of", lambda args: pytest.fail("work started"))
    out = tmp_path / "r.html"
    try:
        code = main(["report", "--data", str(tmp_path), "--out", str(out), option, value])
    except SystemExit as stop:  # a bad option value: argparse's one-line usage error
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2 and words in err and err.count("\n") == 1
    assert not out.exists()
