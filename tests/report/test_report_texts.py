"""The report's texts come from the study it reports (issue 28): the paper's symbols, its
family drop-down and its Williams convention only where the study has them; the values the
ingests read against those the store holds and analyses; one section set per subset of a store
of several (language pairs), each with the numbers of a store holding that subset alone.

HANNA from ``../shared/data/hanna``; the real WMT22 zh-en pair from ``../shared/data/wmt22``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hanna_stats.reports import ReportSettings
from hanna_stats.reports.html import Chart, Note, render_page
from hanna_stats.reports.report import TITLE, _built, _intro, build_report
from hanna_stats.reports.sections import Context, dataset, metric_metric, top_k, williams
from polars.testing import assert_frame_equal
from test_store_wmt import LPS, make_test_set

from hanna_stats.store import ingest, load_study, open_store

SETTINGS = ReportSettings(resamples=20)
PAPER_SYMBOLS = "Ξ¤§εΔ"


#: The store's tables of values: item-level scores, ratings, system- and domain-level values.
VALUE_TABLES = ("scores", "ratings", "given_system_scores_by_id", "given_domain_scores_by_id")


def _ingested(source, **options):
    """A new store with ``source`` ingested: the ingest summaries, the rows of each of
    :data:`VALUE_TABLES`, the study."""
    con = open_store()
    summaries = ingest(con, source, **options)
    counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in VALUE_TABLES}
    study = load_study(con)
    con.close()
    return summaries, counts, study


@pytest.fixture(scope="module")
def wmt22(wmt22_dir):
    return _ingested(wmt22_dir, lp="zh-en", ref="refA", format="wmt")


@pytest.fixture(scope="module")
def hanna(hanna_dir):
    return _ingested(hanna_dir)  # one summary per file


def _sections(study, *builders):
    return _built(builders, Context.of(study, SETTINGS))


def _texts(section) -> str:
    """Every text of a section a reader sees: guide, settings, its analyses' settings, notes."""
    notes = [b.text for b in section.blocks if isinstance(b, Note)]
    options = [f"{o} {v}" for shown in section.analyses.values() for o, v in shown.items()]
    settings = [*map(str, section.settings.values()), *section.analyses, *options]
    return " ".join([section.how_to_read, *settings, *notes])


def _values_note(section) -> str:
    return next(b.text for b in section.blocks if isinstance(b, Note) and "ingests" in b.text)


# --- Texts of HANNA only -----------------------------------------------------------------------


def test_wmt22_dataset_has_no_paper_symbols(wmt22):
    """WMT22's measure families have no symbol: the Dataset guide explains none."""
    study = wmt22[2]
    assert set("".join(study.families["symbol"])) == set()
    (data,) = _sections(study, dataset)
    assert not set(_texts(data)) & set(PAPER_SYMBOLS)
    assert "symbol" not in _texts(data)


def test_wmt22_metrics_vs_metrics_has_no_family_wording(wmt22):
    """WMT22's metrics have no family: no family drop-down, and no word of one."""
    (metrics,) = _sections(wmt22[2], metric_metric)
    chart = next(b for b in metrics.blocks if isinstance(b, Chart))
    assert "families" not in chart.frame.columns
    assert "family" not in metrics.how_to_read


def test_wmt22_williams_n_is_its_systems(wmt22):
    """The Williams settings state WMT22's own n, with no paper's convention."""
    study = wmt22[2]
    (tests,) = _sections(study, williams)
    assert "convention" not in _texts(tests) and "paper" not in _texts(tests)
    n_systems = int((~study.is_human).sum())
    assert tests.settings["n"] == f"{n_systems} systems compared"


def test_hanna_texts_keep_the_papers_words(hanna):
    study = hanna[2]
    data, metrics, tests = _sections(study, dataset, metric_metric, williams)
    for symbol, meaning in zip(
        "Ξ¤§εΔ", ("reference-based", "reference-free", "string", "embedding", "model"), strict=True
    ):
        assert f"{symbol} {meaning}" in data.how_to_read
    chart = next(b for b in metrics.blocks if isinstance(b, Chart))
    assert {"string", "embedding", "model"} <= set(chart.frame["families"])
    assert "a family" in metrics.how_to_read
    item = ReportSettings(resamples=20, williams_level="story")
    (item_tests,) = _built((williams,), Context.of(study, item))
    assert item_tests.settings["n"] == "96 inputs (story level, the paper's convention)"
    assert item_tests.analyses["williams_all"]["levels"] == "story"  # the study's word
    assert tests.analyses["williams_all"]["levels"] == "system"
    assert tests.settings["n"] == "10 systems compared"  # 11 systems, Human left out


def test_wmt22_item_level_williams_n_is_its_inputs(wmt22):
    study = wmt22[2]
    ctx = Context.of(study, ReportSettings(resamples=20, williams_level="segment"))
    (section,) = _built((williams,), ctx)
    assert section.settings["n"] == (
        "1,875 inputs, those the segment-level correlations average over"
    )
    assert "convention" not in _texts(section)


def _williams_denominator(r12, r13, r23, n):
    """Williams' variance term (Steiger 1980, eq. 11) by hand."""
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    return 2 * det * (n - 1) / (n - 3) + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3


def test_white_williams_cells_are_explained(wmt22):
    """WMT22's criteria rate different systems (MQM 16, DA 13), so some triples of pairwise
    correlations are no correlation matrix: the note counts those white cells per criterion and
    says why; each is a case the note names, recomputed by hand."""
    (section,) = _sections(wmt22[2], williams)
    frame = next(b for b in section.blocks if getattr(b, "name", "") == "williams").frame
    white = frame.filter(pl.col("pvalue").is_nan())
    assert white.height > 0
    r = white.select("r_a", "r_b", "r_ab", "n").to_numpy().T
    missing = np.isnan(r[:3]).any(axis=0)
    perfect = np.abs(r[2]) >= 1
    invalid = _williams_denominator(*r) <= 0
    assert (missing | perfect | invalid).all()
    note = next(b.text for b in section.blocks if isinstance(b, Note) and "White" in b.text)
    for criterion, n in white.group_by("criterion").len().iter_rows():
        assert f"{criterion} {n:,} of 930 ordered pairs" in note
    assert "not positive" in note and "|r_ab| = 1" in note and "diagonal" in note


# --- What the ingests read and what the store holds ---------------------------------------------


def test_wmt22_values_read_and_held(wmt22):
    """WMT22's ingest reads 1,282,839 values: the report says 1,282,500 are item-level scores
    and 83 + 256 system- and domain-level scores given, kept aside."""
    summaries, counts, study = wmt22
    (read,) = [s.n_values for s in summaries]
    assert read == 1_282_839 == summaries[0].added["values"]
    given = counts["given_system_scores_by_id"] + counts["given_domain_scores_by_id"]
    assert counts["scores"] + given == read
    (data,) = _sections(study, dataset)
    note = _values_note(data)
    assert (
        f"read {read:,} values" in note
        and f"holds {read:,}: {counts['scores']:,} item-level scores, 0 rater-level ratings, "
        f"{counts['given_system_scores_by_id']:,} system-level and "
        f"{counts['given_domain_scores_by_id']:,} domain-level scores given"
        in note
    )
    assert "1,282,500 item-level" in note and "kept aside" in note
    shown = dict(data.blocks[0].frame.iter_rows())
    assert shown["item-level scores"] == 1_282_500
    assert (shown["system-level scores given"], shown["domain-level scores given"]) == (83, 256)


def test_hanna_values_read_and_held(hanna):
    """HANNA's LLM file repeats the values of the metric file: the report says how many of the
    values read the store held already, and what it holds equals the values the ingests
    added."""
    summaries, counts, study = hanna
    read = sum(s.n_values for s in summaries)
    added = sum(s.added["values"] for s in summaries)
    assert added == counts["scores"] + counts["ratings"] < read
    (data,) = _sections(study, dataset)
    note = _values_note(data)
    assert f"read {read:,} values" in note and f"holds {added:,}:" in note
    assert f"{read - added:,} of the values read were in the store already" in note
    assert "kept aside" not in note


# --- One section set per subset -----------------------------------------------------------------


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    """One store holding the two pairs of ``test_store_wmt.make_test_set``, and one per pair."""
    root = make_test_set(tmp_path_factory.mktemp("pairs") / "wmt")

    def store(lps):
        con = open_store()
        for lp in lps:
            ingest(con, root, lp=lp, ref="refA", format="wmt")
        study = load_study(con)
        con.close()
        return study

    return store(LPS), {lp: store([lp]) for lp in LPS}


def test_one_section_set_per_subset(pairs, tmp_path: Path):
    together, alone = pairs
    sections = build_report(together, SETTINGS)
    keys = [s.key for s in sections]
    singles = {lp: build_report(study, SETTINGS) for lp, study in alone.items()}
    one = [s.key for s in singles[LPS[0]]]
    assert keys == ["dataset", "task-ranking"] + [
        key for lp in LPS for key in [f"subset-{lp}", *(f"{k}-{lp}" for k in one[1:])]
    ]  # the ranking by task set, of the whole store (tests/report/test_report_task_ranking.py)
    for lp, single in singles.items():
        ours = {t.name: t.frame for s in sections if s.subset == lp for t in s.tables}
        theirs = {f"{t.name}_{lp}": t.frame for s in single[1:] for t in s.tables}
        assert ours.keys() == theirs.keys()
        assert f"correlations_{lp}" in ours  # system- and segment-level correlations
        for name, frame in theirs.items():
            assert_frame_equal(ours[name], frame, check_exact=True)
    page = render_page(TITLE, _intro(together, SETTINGS), sections)
    nav = re.search(r"<nav>(.*?)</nav>", page).group(1)
    assert all(f'href="#subset-{lp}">Subset {lp}</a>' in nav for lp in LPS)
    names = re.findall(r'data-name="([^"]*)"', page)
    ids = re.findall(r'<table id="([^"]*)"', page)
    assert len(names) == len(set(names)) and len(ids) == len(set(ids)) and names
    assert all(name.endswith(tuple(f"-{lp}" for lp in LPS)) for name in names[1:])
    assert names[0] == "task_ranking"


def test_one_subset_keeps_the_page_shape(pairs):
    """A store of one pair, and ``--subset`` of a store of several, give the page of today:
    the sections of :data:`~hanna_stats.reports.sections.SECTIONS`, unnumbered."""
    together, alone = pairs
    single = [s.key for s in build_report(alone[LPS[1]], SETTINGS)]
    picked = build_report(together.subset(subset=LPS[1]), SETTINGS)
    assert [s.key for s in picked] == single and "subset" not in " ".join(single)
    assert not any(s.subset for s in picked)


# --- Notes of the analyses --------------------------------------------------------------------


def test_analysis_notes_end_their_section(wmt22):
    """A note an analysis gives (topk: ks above the systems a criterion rates) is shown in the
    section whose analysis gave it, not only printed on a terminal."""
    study = wmt22[2]
    ctx = Context.of(study, SETTINGS)
    mqm = list(study.measures).index("mqm")
    rated = ~np.isnan(study.values[mqm][:, ~study.is_human]).all(axis=0)
    (section,) = _built((top_k,), ctx)
    ks = ", ".join(str(k) for k in range(int(rated.sum()) + 1, ctx.n_rated_systems + 1))
    assert ks, "WMT22's mqm rates fewer systems than the criteria together"
    notes = [b.text for b in section.blocks if isinstance(b, Note)]
    assert any("mqm" in note and f"k = {ks}" in note for note in notes), notes
