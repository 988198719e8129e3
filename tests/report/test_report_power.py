"""The report's section "Is this study big enough?" (``sections.study_design``): on HANNA its
table is ``power``'s frames (metrics, systems, ranking) with the report's power settings, its
sentences say the numbers of those frames as the page shows them, its two charts read back in
Chromium as the frames that made them; a study that cannot feed it gets one line."""

from __future__ import annotations

import re

import polars as pl
import pytest
from hanna_stats.reports import ReportSettings, sections
from hanna_stats.reports.html import Chart, Note, render_page
from hanna_stats.reports.report import TITLE, _built
from hanna_stats.reports.sections import Context, study_design
from polars.testing import assert_frame_equal
from test_report_browser import read_back, tidy_study

from hanna_stats.analyses import power

SETTINGS = ReportSettings(power_studies=120, power_permutations=100, power_resamples=100, seed=5)


@pytest.fixture(scope="module")
def section(hanna_study):
    """The section of HANNA, built as the report builds it (settings line included)."""
    (built,) = _built((study_design,), Context.of(hanna_study, SETTINGS))
    return built


@pytest.fixture(scope="module")
def frames(hanna_study):
    """``power``'s frames of HANNA's first criterion, called as a user would."""
    options = dict(criterion="Relevance", target_power=None, studies=120, seed=5)
    options |= dict(permutations=100, resamples=100)
    return {q: power(hanna_study, question=q, **options) for q in ("metrics", "systems", "ranking")}


def test_table_is_the_power_frames(section, frames):
    assert not section.absent and section.key == "design"
    (table,) = section.tables
    expected = pl.concat(list(frames.values()), how="diagonal_relaxed").with_columns(
        pl.col("level").str.replace("item", "story", literal=True)
    )
    assert_frame_equal(table.frame, expected, check_exact=True)
    assert set(table.frame["studies"]) == {120}
    calls = section.analyses["power"]
    assert calls["question"] == "metrics / systems / ranking"
    assert (calls["studies"], calls["permutations"], calls["resamples"]) == ("120", "100", "100")
    assert calls["seed"] == "5" and calls["target_power"] == "none, the curves only"


def _rounded(value: float, digits: int = 2) -> str:
    return f"{value:.{digits}f}"


def test_sentences_say_the_frames_numbers(section, frames, tmp_path):
    """Each sentence, read from the rendered page, quotes the frame: the power at 96 stories
    (HANNA's size), the smallest size of the curve reaching 0.8 (or the largest, when none
    does), and the ranking's three agreements at 48 stories (half of 96), in percent."""
    page = render_page(TITLE, "", [section])
    notes = re.findall(r'<p class="note">(.*?)</p>', page, re.S)
    pair = re.compile(
        r"With (\d+) stories \(this study\), the (.+?) tells (metric|system) (.+?) from (.+?) "
        r"with power ([\d.]+) \(SE ([\d.]+)\); (.*)"
    )
    seen = set()
    for note in notes:
        found = pair.match(note.replace("&#x27;", "'"))
        if not found:
            continue
        n, _, what, a, b, p, se, rest = found.groups()
        question = {"metric": "metrics", "system": "systems"}[what]
        seen.add(question)
        curve = frames[question].sort("inputs")
        assert (a, b) == (curve["a"][0], curve["b"][0])
        at = curve.filter(pl.col("inputs") == 96).row(0, named=True)
        assert int(n) == 96
        assert (p, se) == (_rounded(at["estimate"]), _rounded(at["standard_error"]))
        reaching = curve.filter(pl.col("estimate") >= 0.8)
        if reaching.height and reaching["inputs"][0] == 96:
            assert rest == "this study is big enough for power 0.80 on this pair."
            continue
        if reaching.height:
            row = reaching.row(0, named=True)
            assert rest.startswith(f"{row['inputs']:,} stories")
        else:
            row = curve.row(-1, named=True)
            assert rest.startswith(f"no size tried reaches 0.80: {row['inputs']:,} stories")
        assert f"{_rounded(row['estimate'])} (SE {_rounded(row['standard_error'])})" in rest
    assert seen == {"metrics", "systems"}
    (ranking,) = [n for n in notes if n.startswith("Two studies of")]
    half = frames["ranking"].filter(pl.col("inputs") == 48)
    assert half.height == 3 and ranking.startswith("Two studies of 48 stories each")
    said = [int(v) for v in re.findall(r"(\d+)%", ranking)]
    want = []
    for quantity in ("top_agreement", "mean_agreement", "srp"):
        row = half.filter(pl.col("quantity") == quantity).row(0, named=True)
        want += [round(100 * row["estimate"]), round(100 * row["standard_error"])]
    assert said == want


def test_charts_read_back(section, tmp_path):
    """The power curves (metric pair, system pair) and the ranking's agreement curves show
    their frames in Chromium; the power frame's rows are the table's curve rows."""
    charts = [b for b in section.blocks if isinstance(b, Chart)]
    assert len(charts) == 2
    power_frame = section.tables[0].frame.filter(pl.col("question") != "ranking")
    assert charts[0].frame["estimate"].to_list() == power_frame["estimate"].to_list()
    assert charts[1].frame.height == 9  # 3 sizes x 3 agreements
    page = tmp_path / "design.html"
    page.write_text(render_page(TITLE, "", [section]), encoding="utf-8")
    problems, facts = read_back(page, charts, tmp_path / "profile")
    assert problems == []
    assert len(facts["svgs"]) == 2


def test_a_study_that_cannot_feed_it(tmp_path):
    """6 inputs (fewer than 8): the section collapses to one line. 8 inputs of 3 metrics
    and 3 systems: computed."""
    (tmp_path / "small").mkdir()
    (tmp_path / "fed").mkdir()
    small = tidy_study(tmp_path / "small", n_inputs=6)
    (tiny,) = _built((study_design,), Context.of(small, SETTINGS))
    assert tiny.absent == "Not computed for this study: it has 6 inputs (at least 8 needed)."
    fed = tidy_study(tmp_path / "fed", n_inputs=8)
    (section,) = _built((study_design,), Context.of(fed, ReportSettings(power_studies=20)))
    assert not section.absent
    one_metric = Context.of(fed, ReportSettings(power_studies=20, kinds=("llm-judge",)))
    (no_metrics,) = _built((study_design,), one_metric)
    notes = [b.text for b in no_metrics.blocks if isinstance(b, Note)]
    assert any(n.startswith("No metric curve: it needs two automatic measures") for n in notes)
    assert set(no_metrics.tables[0].frame["question"]) == {"systems", "ranking"}


def test_refused_settings():
    for name in ("power_studies", "power_permutations", "power_resamples"):
        with pytest.raises(ValueError, match=name):
            ReportSettings(**{name: 0})


def test_curves_stop_at_the_cap_and_the_ranking_keeps_its_grid(hanna_study, monkeypatch):
    """A study whose default grid goes past ``DESIGN_MAX_INPUTS`` (WMT22: 4 x 1,875 segments)
    gets the pairs' curves up to it, and the ranking its own grid (of half the inputs)."""
    monkeypatch.setattr(sections, "DESIGN_MAX_INPUTS", 200)  # HANNA's 4 x 96 = 384 is past it
    settings = ReportSettings(power_studies=20, power_permutations=50, power_resamples=50)
    (built,) = _built((study_design,), Context.of(hanna_study, settings))
    frame = built.tables[0].frame
    sizes = {
        q: sorted(set(frame.filter(pl.col("question") == q)["inputs"]))
        for q in ("metrics", "systems", "ranking")
    }
    grid = [24, 48, 96, 192]
    assert sizes == {"metrics": grid, "systems": grid, "ranking": [12, 24, 48]}
