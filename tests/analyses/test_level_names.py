"""Level names: the item level is ``item`` in every output; ``story``, ``summary`` and ``segment``
name it too wherever a level is given; the store records the study's own word for its items,
which the report uses in its headings."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hanna_stats.reports import ReportSettings
from scipy import stats

from hanna_stats.analyses import (
    borda,
    correlate,
    correlation_ci,
    judge_criteria,
    judge_williams,
    permutation_test,
    rater_panel,
    topk,
    williams,
    williams_all,
)
from hanna_stats.cli import main
from hanna_stats.store import ingest, load_study, open_store

SYNONYMS = ("story", "summary", "segment")
INPUTS, SYSTEMS, RATERS = 8, 6, 3


def tidy_rows(seed: int = 0) -> pl.DataFrame:
    """A small study: 8 inputs x 6 systems; criteria Quality and Fluency rated by 3 raters
    (1..5), three metrics, and an LLM judge rating Quality under two prompts."""
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(INPUTS):
        for s in range(SYSTEMS):
            item = f"d{g}/s{s}"
            base = {"item": item, "input": f"d{g}", "system": f"s{s}"}
            quality = rng.integers(1, 6)
            for criterion in ("Quality", "Fluency"):
                for r in range(RATERS):
                    value = int(np.clip(quality + rng.integers(-1, 2), 1, 5))
                    rows.append(
                        {
                            **base,
                            "measure": criterion,
                            "value": str(value),
                            "rater": f"r{r}",
                            "kind": "human",
                        }
                    )
            for m in range(3):
                rows.append(
                    {
                        **base,
                        "measure": f"m{m}",
                        "value": str(quality + rng.normal()),
                        "kind": "metric",
                    }
                )
            for prompt in ("1", "2"):
                rows.append(
                    {
                        **base,
                        "measure": f"J Quality (prompt {prompt})",
                        "value": str(int(np.clip(quality + rng.integers(-1, 2), 1, 5))),
                        "kind": "llm-judge",
                        "criterion": "Quality",
                        "judge": "J",
                        "prompt_variant": prompt,
                        "scale": "likert",
                        "scale_min": "1",
                        "scale_max": "5",
                    }
                )
    return pl.DataFrame(rows)


@pytest.fixture(scope="module")
def tidy_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("levels") / "small.csv"
    tidy_rows().write_csv(path)
    return path


@pytest.fixture(scope="module")
def store_file(tidy_file) -> Path:
    path = tidy_file.with_suffix(".duckdb")
    con = open_store(path)
    ingest(con, tidy_file, item_word="summary", format="tidy")
    con.close()
    return path


def fresh(store_file: Path):
    """A newly loaded Study (no memoised results shared between calls)."""
    con = open_store(store_file, read_only=True)
    try:
        return load_study(con)
    finally:
        con.close()


CALLS = {
    "correlate": lambda s, lv: correlate(s, level=lv),
    "correlate metrics": lambda s, lv: correlate(s, level=lv, against="metrics", method="pearson"),
    "borda": lambda s, lv: borda(s, level=lv),
    "topk": lambda s, lv: topk(s, ks=[4, 5], level=lv, method="pearson"),
    "correlation_ci": lambda s, lv: correlation_ci(s, level=lv, resamples=50, seed=3),
    "permutation_test": lambda s, lv: permutation_test(
        s, criterion="Quality", level=lv, permutations=50, seed=3, alternative="two-sided"
    ),
    "williams": lambda s, lv: williams(s, criterion="Quality", level=lv, method="pearson"),
    "williams_all": lambda s, lv: williams_all(s, levels=(lv, "system")),
    "judge_criteria": lambda s, lv: judge_criteria(s, level=lv),
    "rater_panel": lambda s, lv: rater_panel(s, level=lv),
    "judge_williams": lambda s, lv: judge_williams(s, level=lv, correction="bh"),
}


@pytest.mark.parametrize("name", CALLS)
def test_synonyms_give_the_item_level_frame(store_file, name):
    call = CALLS[name]
    expected = call(fresh(store_file), "item")
    assert "item" in expected["level"].to_list()
    assert set(expected["level"]) <= {"item", "system"}
    for word in SYNONYMS:
        got = call(fresh(store_file), word)
        assert got.equals(expected), (name, word)


def test_item_level_is_the_mean_of_per_input_correlations(store_file):
    """Independent check of what the item level computes: scipy's tau-b across the systems of
    each input, averaged over the inputs."""
    rows = tidy_rows()
    values = (
        rows.filter(pl.col("measure").is_in(["m0", "Quality"]))
        .with_columns(pl.col("value").cast(pl.Float64))
        .group_by("input", "system", "measure")
        .agg(pl.col("value").mean())
        .pivot(on="measure", index=["input", "system"], values="value")
        .sort("input", "system")
    )
    taus = [
        stats.kendalltau(g["m0"], g["Quality"]).statistic
        for _, g in values.group_by("input", maintain_order=True)
    ]
    frame = correlate(fresh(store_file), level="segment", method="kendall")
    got = frame.filter((pl.col("measure") == "m0") & (pl.col("against") == "Quality"))
    assert got["level"].to_list() == ["item"]
    assert got["statistic"][0] == pytest.approx(np.nanmean(taus), abs=1e-12)


def test_bad_level_lists_the_accepted_words(store_file):
    study = fresh(store_file)
    words = "'item', 'system', 'global', 'story', 'summary', 'segment'"
    with pytest.raises(ValueError, match=f"level must be one of {words}; got 'paragraph'"):
        correlate(study, level="paragraph")
    item_system = "'item', 'system', 'story', 'summary', 'segment'"
    with pytest.raises(ValueError, match=f"one of {item_system}; got 'g"):
        borda(study, level="global")
    with pytest.raises(ValueError, match="level must be one of"):
        judge_criteria(study, level="Story")  # words are case-sensitive, as every option
    assert ReportSettings(williams_level="segment").williams_level == "item"
    with pytest.raises(ValueError, match=f"{item_system}; got 'global'"):
        ReportSettings(williams_level="global")


def test_cli_level_words(store_file, capsys):
    outputs = {}
    for word in ("item", *SYNONYMS):
        assert main(["correlate", "--db", str(store_file), "--level", word, "--format", "csv"]) == 0
        outputs[word] = capsys.readouterr().out
    assert len(set(outputs.values())) == 1
    assert pl.read_csv(outputs["item"].encode())["level"].unique().to_list() == ["item"]
    with pytest.raises(SystemExit) as exit_info:
        main(["borda", "--db", str(store_file), "--level", "global"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "'global'" in err and all(w in err for w in ("item", "system", *SYNONYMS))


# ----------------------------------------------------------------------------- the store


def study_row(con) -> tuple:
    return con.execute("SELECT name, item_word FROM study").fetchone()


def test_item_word_recorded_by_ingests(hanna_dir, tidy_file):
    con = open_store()
    ingest(con, hanna_dir / "hanna_metric_scores.csv", format="hanna-metric-scores")
    assert study_row(con) == ("HANNA", "story")
    assert load_study(con).item_word == "story"
    con = open_store()
    ingest(con, tidy_file, format="tidy")
    assert study_row(con) == ("small", "item")
    assert load_study(con).item_word == "item"
    con = open_store()
    ingest(con, tidy_file, study="SumEvalish", item_word=" summary ", format="tidy")
    assert study_row(con) == ("SumEvalish", "summary")
    con = open_store()
    with pytest.raises(ValueError, match="item_word must be a non-empty word; got ' '"):
        ingest(con, tidy_file, item_word=" ", format="tidy")
    assert con.execute("SELECT count(*) FROM study").fetchone() == (0,)


def test_cli_ingest_item_word(tidy_file, tmp_path):
    db = tmp_path / "s.duckdb"
    assert main(["ingest", str(tidy_file), "--db", str(db), "--item-word", "segment"]) == 0
    con = open_store(db, read_only=True)
    assert study_row(con) == ("small", "segment")
    assert load_study(con).item_word == "segment"
    con.close()


@pytest.mark.parametrize(("name", "word"), [("HANNA", "story"), ("small", "item")])
def test_store_without_item_word_is_migrated(tidy_file, tmp_path, name, word):
    """A store of schema 0 without study.item_word: read-only it is refused; a writable open
    migrates it: HANNA's items are stories, others' items."""
    path = tmp_path / "old.duckdb"
    con = open_store(path)
    ingest(con, tidy_file, study=name, format="tidy")
    con.execute("ALTER TABLE study DROP COLUMN item_word")
    con.execute("DROP TABLE store_schema")
    con.close()
    with pytest.raises(ValueError, match="store schema 0"):
        open_store(path, read_only=True)
    con = open_store(path)
    assert study_row(con) == (name, word)
    assert load_study(con).item_word == word
    more = tidy_file.with_name("more.csv")  # another file of the same study: a new metric
    tidy_rows().filter(pl.col("measure") == "m0").with_columns(measure=pl.lit("m9")).write_csv(more)
    assert ingest(con, more, item_word="summary", format="tidy")[0].added["measures"] == 1
    assert study_row(con) == (name, word)  # the study's word stands
    assert load_study(con).item_word == word
    con.close()


# ----------------------------------------------------------------------------- the report


def test_report_names_the_item_level_by_the_study_word(tidy_file, tmp_path):
    db, out, tables = tmp_path / "s.duckdb", tmp_path / "r.html", tmp_path / "tables"
    assert main(["ingest", str(tidy_file), "--db", str(db), "--item-word", "summary"]) == 0
    args = ["report", "--db", str(db), "--out", str(out), "--tables", str(tables)]
    assert main([*args, "--resamples", "20", "--williams-level", "segment"]) == 0
    text = out.read_text(encoding="utf-8")
    assert "Summary-level |correlation| with human criteria" in text
    assert "Distributions of summary-level ratings per system" in text
    assert "metrics that rank summaries alike" in text
    assert "Top 15 metrics by Borda count, summary level" in text
    assert "levels <code>summary</code>" in text  # the Williams settings
    assert not re.search(r"[Ss]tory[- ]level", text)
    for table in ("correlations", "borda", "williams", "judge_criteria"):
        levels = set(pl.read_csv(tables / f"{table}.csv")["level"])
        assert "summary" in levels and "item" not in levels, table
