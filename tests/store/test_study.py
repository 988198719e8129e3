"""The Study: loaded once, shared by every analysis, deterministic, and the only door to SQL."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hanna_stats.reports import ReportSettings, build_report, write_report
from hanna_stats.reports.html import chart_spec
from hanna_stats.reports.sections import williams as williams_section

from hanna_stats import open_study
from hanna_stats.analyses import _common, borda, correlate, correlation_ci, williams_all
from hanna_stats.store import DataNotFoundError, build_hanna_store, ingest, load_study, open_store

REPO = Path(__file__).resolve().parents[2]


def test_study_holds_the_store(hanna_study):
    study = hanna_study
    assert study.values.shape == (218, 96, 11)
    assert study.criteria[:2] == ("Relevance", "Coherence") and len(study.criteria) == 6
    assert study.systems[study.is_human.argmax()] == "Human" and study.is_human.sum() == 1
    assert study.catalogue["measure"].to_list() == list(study.measures)
    assert study.ratings.height == 6 * 1056 * 3  # judge slots, Human stories included
    paper = study.cube(kinds=("human", "metric"))
    assert paper.values.shape == (78, 96, 10) and "Human" not in paper.systems
    assert study.cube(kinds=("human", "metric")) is paper  # memoised
    picked = study.cube(measures=["BLEU", "Relevance"], include_human=True)
    assert picked.measures == ["BLEU", "Relevance"] and picked.values.shape == (2, 96, 11)
    with pytest.raises(ValueError, match="unknown measures"):
        study.cube(measures=["No such metric"])
    with pytest.raises(ValueError, match="twice"):
        study.cube(measures=["BLEU", "BLEU"])
    assert study.criterion("EM") == "Empathy"
    with pytest.raises(ValueError, match=r"criterion must be one of .*Empathy \(EM\)"):
        study.criterion("Fluency")


def test_item_values_equal_the_story_scores_view(hanna_dir):
    """The cube is exactly the store's view, value for value (an independent query)."""
    con = build_hanna_store(hanna_dir)
    study = load_study(con)
    rows = con.sql(
        "SELECT measure, input, system, value FROM item_scores WHERE value IS NOT NULL"
    ).fetchall()
    con.close()
    m = {n: k for k, n in enumerate(study.measures)}
    g = {n: k for k, n in enumerate(study.inputs)}
    s = {n: k for k, n in enumerate(study.systems)}
    idx = np.array([(m[a], g[b], s[c]) for a, b, c, _ in rows])
    assert np.array_equal(study.values[tuple(idx.T)], np.array([r[3] for r in rows]))
    assert (~np.isnan(study.values)).sum() == len(rows)


def test_each_correlation_matrix_is_computed_once(metric_study, monkeypatch):
    """Correlations, Williams, Borda and the CIs' point estimates share one matrix per setting."""
    study = load_study_copy(metric_study)
    calls = []
    original = _common.level_correlation

    def counting(*args, **kwargs):
        calls.append((kwargs["level"], kwargs["method"]))
        return original(*args, **kwargs)

    monkeypatch.setattr(_common, "level_correlation", counting)
    for against in ("criteria", "metrics", "inter-criteria"):
        correlate(study, level="system", method="pearson", against=against)
    williams_all(study, levels=("system",), methods=("pearson",))
    borda(study, level="system")  # pearson, spearman, kendall
    correlation_ci(study, level="system", method="pearson", resamples=10)
    # One matrix with criteria (criteria/inter-criteria/Williams/Borda/CI), one of the metrics
    # alone, and Borda's two other coefficients.
    assert sorted(calls) == sorted(
        [("system", "pearson")] * 2 + [("system", "spearman"), ("system", "kendall")]
    )


def load_study_copy(study):
    """A fresh Study with the same content and an empty memo."""
    return type(study)(**{k: v for k, v in vars(study).items() if k != "_memo"})


def test_open_study_from_folder_file_and_tidy(hanna_dir, tmp_path):
    from_dir = open_study(hanna_dir)
    db = tmp_path / "hanna.duckdb"
    build_hanna_store(hanna_dir, db_path=db).close()
    from_db = open_study(db)
    assert np.array_equal(from_dir.values, from_db.values, equal_nan=True)
    tidy = tmp_path / "tidy.csv"
    pl.DataFrame(
        {
            "item": [f"{g}-{s}" for g in range(4) for s in range(3)],
            "input": [str(g) for g in range(4) for s in range(3)],
            "system": [f"s{s}" for g in range(4) for s in range(3)],
            "measure": ["m"] * 12,
            "value": [float((g * 3 + s) % 5) for g in range(4) for s in range(3)],
        }
    ).write_csv(tidy)
    small = open_study(tidy)
    assert small.values.shape == (1, 4, 3) and small.kinds == ("metric",)
    for missing in (tmp_path / "typo.duckdb", tmp_path / "nowhere"):
        with pytest.raises(DataNotFoundError, match=re.escape(str(missing))):
            open_study(missing)
    assert not (tmp_path / "typo.duckdb").exists()
    with pytest.raises(DataNotFoundError, match=r"hanna_metric_scores\.csv"):
        open_study(tmp_path)


def test_counts_have_a_fixed_row_order_whatever_the_threads(hanna_dir):
    """Regression: the 'What the store holds' rows changed order in about 1 build in 20 (a
    GROUP BY inside a UNION ALL without ORDER BY; DuckDB's parallel aggregation decided). The
    old query gave the second order in 4 of 100 runs here, so 200 runs catch it."""
    from hanna_stats.store import load as load_module

    con = build_hanna_store(hanna_dir)
    seen = set()
    for threads in (1, 2, 4, 8):
        con.execute(f"SET threads = {threads}")
        for _ in range(50):
            seen.add(tuple(r[0] for r in con.sql(load_module._COUNTS).fetchall()))
    assert seen == {tuple(load_study(con).counts["what"])}
    con.close()
    assert seen == {
        (
            "systems",
            "human-written systems",
            "inputs",
            "items",
            "raters",
            "rater-level ratings",
            "measures: human",
            "measures: llm-judge",
            "measures: metric",
            "item-level scores",
            "system-level scores given",
            "domain-level scores given",
        )
    }


def test_report_bytes_do_not_depend_on_duckdb_threads(hanna_dir, tmp_path):
    con = build_hanna_store(hanna_dir)
    pages = []
    for threads in (1, 2, 4):
        con.execute(f"SET threads = {threads}")
        out = write_report(
            load_study(con), tmp_path / f"r{threads}.html", ReportSettings(resamples=50)
        )
        pages.append(out.read_bytes())
    con.close()
    assert pages[0] == pages[1] == pages[2]


def test_williams_significance_follows_the_correction(metric_study):
    """Regression: with --correction holm the report flagged and coloured raw p-values."""
    from hanna_stats.reports.sections import Context

    ctx = Context.of(metric_study, ReportSettings(correction="holm", williams_method="pearson"))
    section = williams_section(ctx)
    table = next(b for b in section.blocks if getattr(b, "name", "") == "williams").frame
    assert table["significant"].to_list() == (table["pvalue_adjusted"] <= 0.05).to_list()
    assert table["significant"].sum() < (table["pvalue"] <= 0.05).sum()
    chart = next(b for b in section.blocks if hasattr(b, "chart")).chart
    assert "pvalue_adjusted" in chart_spec(chart)


def test_sections_only_read_the_study(metric_study):
    """The report needs no connection: sections take the loaded study."""
    sections = build_report(metric_study, ReportSettings(resamples=20))
    assert [s.key for s in sections][:2] == ["dataset", "criteria"]


def test_no_sql_outside_the_store():
    """SQL lives in sql/ and hanna_stats/store; the layers above read the Study."""
    pattern = re.compile(r"\.(sql|execute|fetchall|fetchnumpy)\(")
    offenders = [
        f"{path.relative_to(REPO)}:{n}"
        for folder in ("hanna_stats/analyses", "reports", "hanna_stats/kernels")
        for path in sorted((REPO / folder).rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ] + [
        f"{path.relative_to(REPO)}:{n}"
        for path in sorted((REPO / "hanna_stats/cli").glob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert offenders == []


def test_metric_only_study_has_no_ratings(hanna_dir):
    con = open_store()
    ingest(con, hanna_dir / "hanna_metric_scores.csv", format="hanna-metric-scores")
    study = load_study(con)
    con.close()
    assert study.ratings.height == 0
    assert study.values.shape == (78, 96, 11)


def test_charts_draw_analysis_frames_in_a_notebook(metric_study):
    """The report's chart builders take the analyses' frames as they are, names optional."""
    from hanna_stats.reports import charts

    from hanna_stats.analyses import borda, system_means

    frame = correlate(metric_study, level="system", method="kendall")
    heatmap = chart_spec(charts.metric_heatmap(frame, x="against", y="measure", color="statistic"))
    assert "BERTScore F1" in heatmap and "Empathy" in heatmap
    assert "Relevance" in chart_spec(charts.dot_interval(system_means(metric_study)))
    bars = chart_spec(charts.bar_scores(borda(metric_study).head(5), x="borda", y="measure"))
    assert "chrF" in bars
