"""The report's ranking of metrics by a WMT task set (``sections.task_set_ranking``): shown once,
after the Dataset section and before the language pairs' own sections, for a store of several
WMT language pairs (the three pairs ``test_tasks.make_three_pairs`` builds, whose WMT24 ranking
equals mt-metrics-eval's there); never for a study without WMT pairs (HANNA). Its table is
``task_ranking``'s frame, its settings line the call, and its chart reads back in Chromium."""

from __future__ import annotations

import pytest
from hanna_stats.reports import ReportSettings
from hanna_stats.reports.html import Chart, render_page
from hanna_stats.reports.report import TITLE, build_report
from hanna_stats.reports.sections import WHOLE_STORE, Context, section_builders, task_set_ranking
from polars.testing import assert_frame_equal
from test_report_browser import read_back
from test_tasks import LPS, make_three_pairs

from hanna_stats.analyses import task_ranking
from hanna_stats.store import ingest, load_study, open_store


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    """The three WMT24-named pairs of ``make_three_pairs`` in one store (MQM and ESA golds)."""
    root = make_three_pairs(tmp_path_factory.mktemp("task_report") / "wmt24")
    with open_store() as con:
        for lp in LPS:
            ingest(con, root, lp=lp, ref="refA", format="wmt")
        return load_study(con)


def _section(study, **settings):
    return task_set_ranking(Context.of(study, ReportSettings(**settings)))


def test_shown_once_before_the_pairs(pairs):
    """The section follows the Dataset section, once; its table is task_ranking's frame, its
    settings line task_ranking's call, with the gold said as it is for this analysis."""
    sections = build_report(pairs, ReportSettings(resamples=20))
    keys = [s.key for s in sections]
    assert keys[:3] == ["dataset", "task-ranking", f"subset-{LPS[0]}"]
    assert keys.count("task-ranking") == 1
    section = sections[1]
    assert not section.absent and not section.subset
    (table,) = section.tables
    assert table.name == "task_ranking"
    assert_frame_equal(table.frame, task_ranking(pairs), check_exact=True)
    assert table.frame["measure"].to_list() == ["BLEU-refA", "COMET-refA", "Kiwi-src", "chrF-refA"]
    assert section.analyses == {
        "task_ranking": {
            "task_set": "wmt24",
            "permutations": "0",
            "seed": "0",
            "criterion": "each pair's standard gold, else its only criterion",
        }
    }
    assert section.settings == {"tasks": 6, "language pairs": ", ".join(LPS)}
    assert "permutations is 0 (no test" in section.how_to_read
    (chart,) = [b for b in section.blocks if isinstance(b, Chart)]
    assert_frame_equal(
        chart.frame, table.frame.select("measure", "cluster", "average", "average_rank")
    )


def test_settings_reach_the_ranking(pairs):
    """task_set, task_permutations and task_gold are task_ranking's task_set, permutations and
    criterion; a task set that needs a gold the pairs do not name says so in one line."""
    tested = _section(pairs, task_permutations=50, seed=3)
    expected = task_ranking(pairs, permutations=50, seed=3)
    assert_frame_equal(tested.tables[0].frame, expected, check_exact=True)
    assert expected["pvalue_next"].drop_nulls().len() == 3
    assert "each task ran 50 permutations" in tested.how_to_read
    refused = _section(pairs, task_set="wmt23")  # en-es and ja-zh: MQM and ESA, no standard
    assert refused.absent == (
        "Not computed for this study: subset 'en-es': name the task's gold among ('esa', "
        "'mqm') (--task-gold names one)."
    )
    gold = _section(pairs, task_set="wmt23", task_gold="mqm")
    assert_frame_equal(gold.tables[0].frame, task_ranking(pairs, task_set="wmt23", criterion="mqm"))


def test_refused_settings():
    with pytest.raises(ValueError, match="task_set"):
        ReportSettings(task_set="wmt22")
    with pytest.raises(ValueError, match="task_permutations"):
        ReportSettings(task_permutations=-1)
    with pytest.raises(ValueError, match="task_gold"):
        ReportSettings(task_gold=3)


def test_not_for_a_study_without_wmt_pairs(metric_study):
    """HANNA (no subsets, not a WMT ingest) never gets the section: the builder says it does not
    apply, and a store of one subset is not given the sections of the whole store."""
    assert task_set_ranking(Context.of(metric_study, ReportSettings())) is None
    assert not set(WHOLE_STORE) & set(section_builders(ReportSettings()))


def test_chart_reads_back(pairs, tmp_path):
    """The bars (average per metric, coloured by cluster) show task_ranking's numbers in
    Chromium, with and without a test."""
    sections = [_section(pairs), _section(pairs, task_permutations=50)]
    sections[1].key = "task-ranking-tested"
    page = tmp_path / "tasks.html"
    page.write_text(render_page(TITLE, "", sections), encoding="utf-8")
    charts = [b for s in sections for b in s.blocks if isinstance(b, Chart)]
    problems, facts = read_back(page, charts, tmp_path / "profile")
    assert problems == []
    assert len(facts["svgs"]) == 2
