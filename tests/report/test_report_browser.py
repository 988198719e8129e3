"""The report as a reader sees it, in real headless Chromium (Debian's ``chromium``, driven by
Playwright; flags in DEVELOPERS.md).

Every chart is read back from the rendered page (the Vega view's scenegraph: facet cells and
headers, axis labels, marks with their data and tooltips, colour scales) and checked against the
tidy frame the report built it from, in every drop-down state (tests/vega_readback.py): for the
HANNA report, the real WMT22 zh-en report, the README's notebook examples, and the reports of
small tidy, SummEval-shaped and WMT-shaped studies. The page itself: no JavaScript error or Vega
warning, no request outside the file, tables inside their boxes, no chart and no page wider than
the window (1,400 px), the contents listing only the sections the study feeds; no chart or table
averages criteria that do not share one declared scale.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import altair as alt
import numpy as np
import polars as pl
import pytest
from hanna_stats.reports import ReportSettings, charts
from hanna_stats.reports.html import Chart, Section, Table, chart_spec, render_page
from hanna_stats.reports.report import TITLE, _intro, build_report
from test_store_summeval import records, write_jsonl
from test_store_wmt import make_test_set
from vega_readback import (
    check_averages,
    check_view,
    drop_down_states,
    opened,
    read_view,
    set_state,
)

from hanna_stats.analyses import borda, correlate, system_means
from hanna_stats.store import ingest, load_study, open_store

#: Geometry of the page a reader gets (and the one the README's screenshots use).
WIDTH = 1400
#: A table row taller than this is a cell that should have been folded.
MAX_ROW_HEIGHT = 120

PAGE_FACTS = """() => {
  const width = document.documentElement.clientWidth;
  const wraps = [...document.querySelectorAll('.table-wrap')].map(w => {
    const r = w.getBoundingClientRect();
    const rows = [...w.querySelectorAll('tr')].map(tr => tr.getBoundingClientRect().height);
    return {id: w.querySelector('table').id, right: r.right, left: r.left,
            tallest: Math.max(0, ...rows)};
  });
  const nav = [...document.querySelectorAll('nav a')].map(a => a.getAttribute('href').slice(1));
  const computed = [...document.querySelectorAll('section')]
    .filter(s => !s.querySelector('.absent')).map(s => s.id);
  const svgs = [...document.querySelectorAll('.chart')].map(e => {
    const r = e.querySelector('svg').getBoundingClientRect(); return [r.width, r.height]; });
  const page = document.documentElement;
  const sideways = [...document.querySelectorAll('.chart')]
    .filter(e => e.scrollWidth > e.clientWidth
                 || e.getBoundingClientRect().right > page.clientWidth)
    .map(e => [e.id, Math.round(e.getBoundingClientRect().right)]);
  return {width, wraps, nav, computed, svgs, scroll: [page.scrollWidth, page.clientWidth],
          sideways};
}"""


def _spec(chart: alt.TopLevelMixin) -> dict:
    return json.loads(chart_spec(chart))


def read_back(page_path: Path, blocks: list[Chart], profile: Path) -> tuple[list[str], dict]:
    """Open a page whose charts are ``blocks`` (in order) and check every chart in every
    drop-down state; the problems found and the page's layout facts."""
    problems: list[str] = []
    with opened(page_path, profile, width=WIDTH) as page:
        for n, block in enumerate(blocks, 1):
            spec = _spec(block.chart)
            for state in drop_down_states(spec):
                if state:
                    set_state(page, f"chart-{n}", state)
                view = read_view(page, f"chart-{n}", spec)
                problems += check_view(view, spec, block.frame, state)
        facts = page.evaluate(PAGE_FACTS)
        problems += [f"JavaScript error: {e}" for e in page.errors]
        problems += [f"Vega warning: {w}" for w in page.warnings]
        problems += [f"request outside the file: {u}" for u in page.outside]
    for wrap in facts["wraps"]:
        if wrap["right"] > facts["width"] + 0.5:
            problems.append(f"table {wrap['id']} runs off the page ({wrap['right']:.0f} px)")
        if wrap["tallest"] > MAX_ROW_HEIGHT:
            problems.append(f"table {wrap['id']} has a row {wrap['tallest']:.0f} px tall")
    if facts["nav"] != facts["computed"]:
        problems.append(f"contents {facts['nav']} != computed sections {facts['computed']}")
    problems += [
        f"chart {k + 1} is {w}x{h} px"
        for k, (w, h) in enumerate(facts["svgs"])
        if w < 150 or h < 80
    ]
    return problems + scrolls_sideways(facts), facts


def scrolls_sideways(facts: dict) -> list[str]:
    """Charts, and the page, wider than the window (WIDTH px)."""
    found = [f"{div} ends at {right} px" for div, right in facts["sideways"]]
    if facts["scroll"][0] > facts["scroll"][1]:
        found.append(f"the page scrolls sideways ({facts['scroll'][0]} px)")
    return found


def declared_scales(study) -> dict[str, tuple]:
    """``{criterion: (scale, low, high)}`` of the study's human criteria (the catalogue's)."""
    return {
        m: (s, lo, hi)
        for m, s, lo, hi in study.catalogue.filter(pl.col("kind") == "human")
        .select("measure", "scale", "scale_min", "scale_max")
        .iter_rows()
    }


def averages_across_scales(study, sections: list[Section]) -> list[str]:
    """Every chart or table of ``sections`` holding an average over criteria of different
    scales."""
    scales = declared_scales(study)
    return [
        f"{getattr(b, 'name', 'chart')}: {problem}"
        for s in sections
        for b in s.blocks
        if isinstance(b, Chart | Table)
        for problem in check_averages(b.frame, scales)
    ]


def report_page(study, settings: ReportSettings, path: Path) -> tuple[list[Section], list[Chart]]:
    """The report of ``study`` written to ``path`` as ``write_report`` renders it, its sections
    and its charts in page order."""
    sections = build_report(study, settings)
    path.write_text(render_page(TITLE, _intro(study, settings), sections), encoding="utf-8")
    blocks = [b for s in sections if not s.absent for b in s.blocks if isinstance(b, Chart)]
    return sections, blocks


def test_hanna_report_reads_back(hanna_study, tmp_path):
    """Every chart of the HANNA report, in every drop-down state, shows its frame."""
    page = tmp_path / "hanna.html"
    sections, blocks = report_page(hanna_study, ReportSettings(resamples=100), page)
    problems, facts = read_back(page, blocks, tmp_path / "profile")
    assert problems + averages_across_scales(hanna_study, sections) == []
    assert len(blocks) == 16  # 14, and the study design's 2 (test_report_power.py)
    assert facts["nav"] == [s.key for s in sections]  # HANNA feeds every section


def test_notebook_examples_read_back(hanna_study, tmp_path):
    """The README's notebook examples, as a notebook would draw them."""
    examples = [
        Chart.of(
            charts.metric_heatmap,
            correlate(hanna_study, level="system"),
            x="against",
            y="measure",
            color="statistic",
        ),
        Chart.of(charts.dot_interval, system_means(hanna_study)),
        Chart.of(charts.bar_scores, borda(hanna_study).head(15), x="borda", y="measure"),
    ]
    heatmap = examples[0].frame
    assert heatmap["statistic"].min() < -0.7  # negative correlations exist, and must show
    page = tmp_path / "notebook.html"
    page.write_text(
        render_page("notebook", "", [Section("notebook", "Notebook", "", blocks=examples)]),
        encoding="utf-8",
    )
    problems, _ = read_back(page, examples, tmp_path / "profile")
    assert problems == []
    scale = _spec(examples[0].chart)["layer"][0]["encoding"]["color"]["scale"]
    assert scale["domain"] == [-1, 1] and scale["domainMid"] == 0


# --- Other studies ------------------------------------------------------------------------------


def tidy_study(tmp_path: Path, *, n_systems: int = 3, n_inputs: int = 8):
    """A tidy study: ``n_systems`` systems, 2 criteria rated by 2 raters, 3 metrics."""
    rng = np.random.default_rng(3)
    rows = []
    for g in range(n_inputs):
        for s in range(n_systems):
            base = {"item": f"i{g}-{s}", "input": f"in{g}", "system": f"sys{s}"}
            quality = rng.integers(1, 6)
            for metric in ("overlap", "embedding", "length"):
                value = float(quality + rng.normal()) * (100 if metric == "length" else 1)
                rows.append({**base, "measure": metric, "value": value, "rater": None})
            for criterion in ("Fluency", "Adequacy"):
                for r in range(2):
                    score = float(np.clip(quality + rng.integers(-1, 2), 1, 5))
                    rows.append({**base, "measure": criterion, "value": score, "rater": f"r{r}"})
    path = tmp_path / "tidy.csv"
    pl.DataFrame(rows).write_csv(path)
    con = open_store()
    ingest(con, path, study="Tidy", item_word="response", format="tidy")
    return load_study(con)


def summeval_study(tmp_path: Path):
    """SummEval's shape: 8 documents x 6 systems, expert and turker ratings, scored metrics."""
    docs = tuple(f"dm-test-{k:040x}" for k in range(8))
    models = tuple(f"M{k}" for k in range(6))
    path = write_jsonl(
        tmp_path / "model_annotations.aligned.scored.jsonl",
        records(scored=True, docs=docs, models=models),
    )
    con = open_store()
    ingest(con, path, format="summeval")
    return load_study(con)


def wmt_study(tmp_path: Path):
    """WMT's shape (MTME's folder layout): one language pair, MQM and two metrics."""
    root = make_test_set(tmp_path / "wmt")
    con = open_store()
    ingest(con, root, lp="en-de", ref="refA", format="wmt")
    return load_study(con)


STUDIES = {"tidy": tidy_study, "summeval": summeval_study, "wmt": wmt_study}


def test_real_wmt22_report_reads_back(wmt22_study, tmp_path):
    """The real WMT22 zh-en pair: criteria rating different subsets of 20 systems (MQM 16, DA
    13) and on other scales than Likert; every chart reads back (its violins used to slide under
    other headers where a system had no rating)."""
    page = tmp_path / "wmt22.html"
    sections, blocks = report_page(wmt22_study, ReportSettings(resamples=50), page)
    problems, _ = read_back(page, blocks, tmp_path / "profile")
    assert problems + averages_across_scales(wmt22_study, sections) == []
    assert "llm-judges" not in [s.key for s in sections]


@pytest.mark.parametrize("shape", sorted(STUDIES))
def test_other_studies_read_back_and_speak_of_themselves(shape, tmp_path):
    """A study other than HANNA: its charts read back; its guides count its own criteria and
    systems and use its item word; no figure numbers of the paper; no LLM-judge section without
    judges; sections it cannot feed collapse to one line and leave the contents."""
    study = STUDIES[shape](tmp_path)
    page = tmp_path / f"{shape}.html"
    sections, blocks = report_page(study, ReportSettings(resamples=50), page)
    problems, facts = read_back(page, blocks, tmp_path / "profile")
    assert problems + averages_across_scales(study, sections) == []
    text = page.read_text(encoding="utf-8")
    keys = [s.key for s in sections]
    assert "llm-judges" not in keys
    assert not re.search(r"\((Figs?|Tabs?)\. \d", text)
    assert "the figure and table numbers in titles are that paper's" not in text
    for section in sections:
        if section.absent:
            assert section.key not in facts["nav"]
            body = re.search(f'<section id="{section.key}">(.*?)</section>', text, re.S).group(1)
            assert "How to read" not in body and body.count("<p") == 1
    n_systems = int((~study.is_human).sum())
    if n_systems < 5:
        assert next(s for s in sections if s.key == "topk").absent
        assert "k <code>4.." not in text
    borda_section = next(s for s in sections if s.key == "borda")
    if not borda_section.absent:
        assert (
            f"over the {len(study.criteria)} criteria x 3 coefficients" in borda_section.how_to_read
        )
    metrics = next(s for s in sections if s.key == "metrics-criteria")
    if not metrics.absent:
        assert study.item_word.capitalize() in metrics.how_to_read
    if not metrics.absent and n_systems < 8:
        notes = [b.text for b in metrics.blocks if type(b).__name__ == "Note"]
        assert any(f"rests on {n_systems} systems" in note for note in notes)


# --- The check itself can fail ------------------------------------------------------------------


def test_readback_catches_charts_that_lie(hanna_study, tmp_path):
    """Charts built the way the report used to build them are caught: violins faceted with
    parallel sort arrays (cells under other headers), signed values on a [0, 1] colour domain, a
    p-value scale drawn light for small p, a tooltip reading a field the page does not hold,
    system means of MQM and z-scores on one shared x scale, a distribution left blank where a
    system has no rating, a chart wider than the page, an average over criteria of different
    scales."""
    values = pl.DataFrame(
        {
            "system": ["A"] * 6 + ["B"] * 6,
            "criterion": (["X"] * 3 + ["Y"] * 3) * 2,
            "value": [1.0, 2, 3, 4, 4, 5, 2, 2, 3, 5, 5, 4],
        }
    )
    # The old construction: densities inside the cells, headers ordered by parallel arrays.
    old = (
        alt.Chart(values, name="v_view")
        .transform_density("value", as_=["value", "density"], groupby=["criterion", "system"])
        .mark_area(orient="horizontal")
        .encode(y="value:Q", x=alt.X("density:Q", stack="center"), color="system:N")
        .facet(
            row=alt.Row("criterion:N", sort=["X", "Y"]),
            column=alt.Column("system:N", sort=["A", "B"]),
        )
        .properties(name="v")
    )
    lying = json.loads(chart_spec(old))
    lying["usermeta"] = {
        "hanna_stats": {
            "keys": ["system", "criterion"],
            "facet": {"row": "criterion", "column": "system"},
            "marks": ["v_view_marks"],
        }
    }

    corr = correlate(hanna_study, level="system", method="pearson")
    signed = charts.metric_heatmap(corr, x="against", y="measure", color="statistic", name="s")
    clipped = json.loads(chart_spec(signed))
    clipped["layer"][0]["encoding"]["color"]["scale"] = {"scheme": "viridis", "domain": [0, 1]}
    pvalues = corr.select("measure", "against", pl.col("statistic").abs().alias("pvalue"))
    heat = charts.metric_heatmap(pvalues, x="against", y="measure", color="pvalue", name="p")
    light = json.loads(chart_spec(heat))
    light["layer"][0]["encoding"]["color"]["scale"]["reverse"] = True
    undefined = json.loads(chart_spec(heat))
    undefined["layer"][0]["encoding"]["tooltip"].append({"field": "method", "type": "nominal"})

    # System means as the report drew them: every panel on one x scale, MQM beside z-scores.
    means = pl.DataFrame(
        {
            "system": ["A", "B"] * 2,
            "measure": ["mqm", "mqm", "wmt-z", "wmt-z"],
            "mean": [-7.0, -2.0, -0.2, 0.2],
            "ci_low": [-7.5, -2.5, -0.25, 0.15],
            "ci_high": [-6.5, -1.5, -0.15, 0.25],
            "n": [10] * 4,
        }
    )
    shared = json.loads(chart_spec(charts.dot_interval(means, name="m")))
    shared["resolve"]["scale"]["x"] = "shared"
    # Distributions that leave a system's row blank where it does not rate a criterion.
    gaps = values.filter((pl.col("system") == "A") | (pl.col("criterion") == "X"))
    blank = json.loads(chart_spec(charts.distributions(gaps, name="g")))
    blank["spec"]["layer"] = [
        layer for layer in blank["spec"]["layer"] if layer.get("name") != "g_absent"
    ]
    wide = json.loads(chart_spec(charts.distributions(values, name="w")))
    wide["spec"]["width"] = 2 * WIDTH

    specs = [
        (lying, values),
        (clipped, corr),
        (light, pvalues),
        (undefined, pvalues),
        (shared, means),
        (blank, gaps),
        (wide, values),
        (json.loads(chart_spec(charts.distributions(gaps, name="h"))), gaps),
    ]
    blocks = [Chart(_Raw(spec), frame) for spec, frame in specs]
    page = tmp_path / "lying.html"
    page.write_text(render_page("lying", "", [Section("x", "X", "", blocks=blocks)]), "utf-8")
    found = []
    with opened(page, tmp_path / "profile", width=WIDTH) as browser:
        for n, (spec, frame) in enumerate(specs, 1):
            found.append(check_view(read_view(browser, f"chart-{n}", spec), spec, frame, {}))
        facts = browser.evaluate(PAGE_FACTS)
    assert any("under column header" in p for p in found[0]), found[0]
    assert any("colour domain [0, 1] misses values" in p for p in found[1]), found[1]
    assert any("is not drawn darker" in p for p in found[2]), found[2]
    assert any("tooltip method is undefined" in p for p in found[3]), found[3]
    assert any("share one x scale" in p for p in found[4]), found[4]
    assert found[5] == ["g: ('B', 'Y') neither drawn nor 'not rated'"], found[5]
    assert found[7] == [], found[7]  # the same, saying "not rated"
    assert found[6] == [] and scrolls_sideways(facts)[0].startswith("chart-7 ends at")
    average = pl.concat(
        [means, means.filter(pl.col("system") == "A").with_columns(measure=pl.lit("Average"))]
    )
    scales = {"mqm": ("continuous", None, None), "wmt-z": ("continuous", None, None)}
    assert check_averages(average, scales) and not check_averages(means, scales)
    assert not check_averages(average, dict.fromkeys(scales, ("likert", 1.0, 5.0)))


class _Raw:
    """A Vega-Lite specification as a chart object for :func:`render_page`."""

    def __init__(self, spec: dict):
        self.spec = spec

    def to_dict(self) -> dict:
        return dict(self.spec)
