"""The HTML report: content, offline page, determinism, atomic write, non-HANNA studies.

The browser test (rendering in headless Chromium) is in test_report_browser.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from test_paper_golden import CRIT, TAB5, _paper_round  # the paper's Tab. 5, transcribed there

from hanna_stats.cli import main
from hanna_stats.store import build_hanna_store, ingest_tidy, load_study, open_store
from reports import ReportSettings, write_report
from reports import sections as report_sections

SECTION_IDS = [
    "dataset",
    "criteria",
    "metrics-criteria",
    "metrics-metrics",
    "pairwise",
    "topk",
    "williams",
    "borda",
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
    assert "resamples B <code>1000</code>" in text
    assert "tie rule <code>average</code>" in text
    assert "correction <code>none</code>" in text
    # 11 charts: means, violins, inter-criteria, 2 metric-criteria, metric-metric, pairwise,
    # top-k, Williams, 2 Borda.
    assert len(re.findall(r'<div class="chart" id="chart-\d+">', text)) == 11
    assert len(re.findall(r'vegaEmbed\("#chart-\d+"', text)) == 11


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


def test_borda_table_reproduces_tab6_story_level(hanna_report):
    """Tab. 6, story level (the conventions doc: the same under every tie rule)."""
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


def test_failure_leaves_no_partial_file(hanna_dir, tmp_path, monkeypatch):
    out = tmp_path / "report.html"
    out.write_text("previous report", encoding="utf-8")

    def broken(study):
        raise RuntimeError("analysis failed")

    monkeypatch.setattr(report_sections, "SECTIONS", (*report_sections.SECTIONS[:3], broken))
    monkeypatch.setattr("reports.report.SECTIONS", report_sections.SECTIONS)
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
    ingest_tidy(con, _tidy_study(tmp_path / "study.csv", n_systems=3, raters=False))
    out = write_report(load_study(con), tmp_path / "study.html", ReportSettings(resamples=20))
    text = out.read_text(encoding="utf-8")
    assert text.count("Not computed for this study: it has no human criteria") == 6
    assert len(re.findall(r"<div class=\"chart\"", text)) == 1  # metric-metric only


def test_generic_study_with_few_systems(tmp_path):
    """Rated criterion, 3 systems: top-k and Williams need more systems and say so."""
    con = open_store(tmp_path / "study.duckdb")
    ingest_tidy(con, _tidy_study(tmp_path / "study.csv", n_systems=3, raters=True))
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


# --- Rendering in real headless Chromium --------------------------------------------------------
# Flags as in DEVELOPERS.md: no sandbox (root in CI), no GPU, and no background networking (the
# machine's closed network refuses those connections). The README's test command installs the
# Debian package chromium when it is missing; HANNA_STATS_CHROMIUM names another binary.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str:
    import shutil

    found = os.environ.get("HANNA_STATS_CHROMIUM") or next(
        filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None
    )
    if found is None:
        pytest.fail(
            "Chromium not found: install it (Debian: apt-get install -y chromium, as the README's "
            "test command does) or set HANNA_STATS_CHROMIUM=/path/to/chrome"
        )
    return found


def test_report_renders_in_headless_chromium(hanna_report, tmp_path):
    """Every chart renders to a non-empty SVG, with no JavaScript error and no network request;
    a drop-down change re-renders without error. The screenshot is kept in tmp_path."""
    from playwright.sync_api import sync_playwright

    html = hanna_report[0]
    n_charts = len(re.findall(r'<div class="chart" id="chart-\d+">', html.read_text("utf-8")))
    errors: list[str] = []
    outside: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch_persistent_context(
            tmp_path / "profile",  # a fresh --user-data-dir
            executable_path=_chromium(),
            headless=True,
            args=CHROMIUM_FLAGS[1:],
            viewport={"width": 1400, "height": 1000},
        )
        try:
            page = browser.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)

            def route(r):
                if r.request.url.startswith("file://"):
                    r.continue_()
                else:
                    outside.append(r.request.url)
                    r.abort()

            page.route("**/*", route)
            page.goto(html.as_uri())
            page.wait_for_function(
                f"document.querySelectorAll('.chart svg').length == {n_charts}", timeout=180_000
            )
            sizes = page.eval_on_selector_all(
                ".chart",
                "els => els.map(e => { const r = e.querySelector('svg').getBoundingClientRect();"
                " return [r.width, r.height]; })",
            )
            marks = page.eval_on_selector_all(
                ".chart svg path, .chart svg rect", "els => els.length"
            )
            # Switch the story-level heatmap to Kendall and the Williams matrix to Surprise.
            selects = page.locator("#metrics-criteria select")
            selects.first.select_option("kendall")
            page.locator("#williams select").first.select_option("Surprise")
            page.wait_for_timeout(1500)
            shot = tmp_path / "report.png"
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert errors == []
    assert outside == []
    assert len(sizes) == n_charts == 11
    assert all(w > 50 and h > 50 for w, h in sizes), sizes
    assert marks > 5000  # heatmap cells, violins, lines: the data were drawn
    assert shot.stat().st_size > 100_000


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
    monkeypatch.setattr("hanna_stats.cli._study", lambda args: pytest.fail("work started"))
    out = tmp_path / "r.html"
    try:
        code = main(["report", "--data", str(tmp_path), "--out", str(out), option, value])
    except SystemExit as stop:  # a bad option value: argparse's one-line usage error
        code = stop.code
    err = capsys.readouterr().err
    assert code == 2 and words in err and err.count("\n") == 1
    assert not out.exists()
