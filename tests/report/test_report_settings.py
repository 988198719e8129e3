"""The report's settings lines are made from the analyses that ran (issue 29): each section is
built under :func:`~hanna_stats.analyses.analysis_calls`, and its line names every analysis it
ran with each option as run, an option that varied listing its values. ``ReportSettings.analyses``
adds a section per analysis named, so an analysis added to ``hanna_stats.analyses`` shows in the
report, with its settings, without report code.
"""

from __future__ import annotations

import polars as pl
import pytest
from hanna_stats.reports import ReportSettings
from hanna_stats.reports.html import Table, render_page
from hanna_stats.reports.report import TITLE, _built, build_report
from hanna_stats.reports.sections import (
    Context,
    dataset,
    human_criteria,
    metrics_vs_criteria,
    section_builders,
    top_k,
)

import hanna_stats.analyses as an
from hanna_stats.analyses._common import analysis
from hanna_stats.store import ingest, load_study, open_store
from hanna_stats.study import Study

SETTINGS = ReportSettings(resamples=20, seed=7, confidence=0.9)


def test_settings_lines_are_the_options_as_run(hanna_study):
    """Every option of each analysis, as run: an option that varied lists its values; the item
    level by the study's word; no ``subsets`` for a study of one subset, no executor."""
    (section,) = _built((metrics_vs_criteria,), Context.of(hanna_study, SETTINGS))
    assert list(section.analyses) == ["correlate", "correlation_ci"]
    corr, ci = section.analyses["correlate"], section.analyses["correlation_ci"]
    assert corr["level"] == ci["level"] == "story / system"
    assert corr["method"] == ci["method"] == "pearson / spearman / kendall"
    assert (corr["variant"], corr["include_human"], corr["kinds"]) == ("tau-b", "off", "metric")
    assert (corr["pvalue_method"], corr["nan_policy"]) == ("none, no p-values", "omit")
    assert (ci["resamples"], ci["seed"], ci["confidence"]) == ("20", "7", "0.9")
    assert (ci["resample"], ci["ci_method"]) == ("inputs", "percentile")
    assert "subsets" not in corr and "executor" not in ci
    assert section.settings == {"human-written systems": "excluded (Human)"}
    (topk,) = _built((top_k,), Context.of(hanna_study, SETTINGS))
    assert topk.analyses["topk"]["ks"] == "4-10"  # a range as --ks takes it
    page = render_page(TITLE, "", [section])
    assert "<b>correlation_ci</b>: level <code>story / system</code>" in page
    assert "resamples <code>20</code>" in page and "Settings: human-written systems" in page


def test_several_subsets_name_the_subsets_option(tmp_path):
    """A store of two subsets: the Dataset section pools them (``subsets pooled``); the
    sections of one subset analyse it alone, and say nothing of subsets."""
    rows = [
        {
            "item": f"{label}{i}-s{s}",
            "input": f"{label}{i}",
            "system": f"s{s}",
            "measure": measure,
            "value": float((i * 7 + s * 3 + len(measure)) % 5),
            "kind": kind,
            "subset": label,
        }
        for label in ("en-de", "zh-en")
        for i in range(4)
        for s in range(4)
        for measure, kind in (("mqm", "human"), ("BLEU", "metric"))
    ]
    path = tmp_path / "subsets.csv"
    pl.DataFrame(rows).write_csv(path)
    con = open_store()
    ingest(con, path, format="tidy")
    study = load_study(con)
    con.close()
    sections = build_report(study, SETTINGS)
    data = next(s for s in sections if s.key == "dataset")
    assert data.analyses["study_counts"] == {"subsets": "pooled"}
    criteria = next(s for s in sections if s.key == "criteria-en-de")
    assert criteria.analyses["system_means"]["confidence"] == "0.9"
    assert all("subsets" not in options for options in criteria.analyses.values())


def test_an_analysis_added_to_the_package_shows_in_the_report(hanna_study, monkeypatch):
    """An analysis in ``hanna_stats.analyses`` (here one defined in this test) is named in
    ``ReportSettings.analyses``: its section comes last, its table as it returns it, its title
    its docstring's summary, its settings line its options as run, the report's seed and
    confidence among them (its parameters of those names)."""

    @analysis
    def spread(
        study: Study, *, seed: int = 0, confidence: float = 0.95, measure_kind: str = "human"
    ) -> pl.DataFrame:
        """Bootstrap spread of the ``measure_kind`` measures' item means.

        More text, not in the title.
        """
        return pl.DataFrame({"inputs": [len(study.inputs)], "seed": [seed], "level": [confidence]})

    monkeypatch.setattr(an, "spread", spread, raising=False)
    monkeypatch.setattr(an, "__all__", [*an.__all__, "spread"])
    settings = ReportSettings(resamples=20, seed=7, confidence=0.9, analyses=("spread",))
    sections = _built(section_builders(settings), Context.of(hanna_study, settings))
    assert [s.key for s in sections[-2:]] == ["llm-judges", "analysis-spread"]
    last = sections[-1]
    assert last.title == "Bootstrap spread of the measure_kind measures' item means"
    (table,) = last.tables
    assert isinstance(table, Table) and table.name == "analysis_spread"
    assert table.frame.to_dicts() == [{"inputs": 96, "seed": 7, "level": 0.9}]
    assert last.analyses == {"spread": {"seed": "7", "confidence": "0.9", "measure_kind": "human"}}


def test_a_real_analysis_in_the_report(hanna_study):
    """``spa`` on HANNA: the report's seed and kinds reach it; the rest are its defaults."""
    settings = ReportSettings(resamples=20, seed=3, analyses=("spa",))
    ctx = Context.of(hanna_study, settings)
    (section,) = _built(section_builders(settings)[-1:], ctx)
    assert section.key == "analysis-spa" and section.title.startswith("Soft pairwise accuracy")
    options = section.analyses["spa"]
    assert (options["seed"], options["kinds"], options["permutations"]) == ("3", "metric", "1000")
    expected = an.spa(hanna_study, seed=3)
    (table,) = section.tables
    assert table.frame.equals(expected)


def test_dataset_analyses_without_options_are_named(hanna_study):
    (data,) = _built((dataset,), Context.of(hanna_study, SETTINGS))
    assert data.analyses == {"measure_families": {}, "study_counts": {}, "data_sources": {}}
    (criteria,) = _built((human_criteria,), Context.of(hanna_study, SETTINGS))
    assert "Student-t" in criteria.how_to_read
    assert criteria.analyses["system_means"]["include_human"] == "on"


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (("sap",), r"^analyses: unknown analysis 'sap' \(did you mean 'spa'\?\)$"),
        (("williams",), r"^analyses: williams needs criterion \(no default\)"),
        (("Selection",), r"^analyses: Selection is not an analysis of a study"),
        ("spa", r"^analyses must be a tuple of analysis names; got 'spa'$"),
    ],
)
def test_unknown_analyses_are_refused_before_any_work(names, message):
    with pytest.raises(ValueError, match=message):
        ReportSettings(analyses=names)
    assert ReportSettings(analyses=["spa", "borda", "spa"]).analyses == ("spa", "borda")
