"""Behaviours that were silent or wrong (issue 28): each test states what a user sees, with the
expected values from the data files themselves or from a hand count, never from the package."""

from __future__ import annotations

import csv
import importlib.util
import io
from pathlib import Path

import pytest
from scipy import stats
from test_store_subsets import LPS, PAIRS, make_pairs

from hanna_stats import progress
from hanna_stats.analyses import analysis_calls, correlate
from hanna_stats.cli import main
from hanna_stats.store import load_study, open_store


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture(scope="module")
def wmt22_db(wmt22_dir, tmp_path_factory):
    """The README's WMT22 store: zh-en, standard reference refA."""
    path = tmp_path_factory.mktemp("wmt22") / "wmt22.duckdb"
    args = ["ingest", "--db", str(path), str(wmt22_dir), "--lp", "zh-en", "--ref", "refA"]
    assert main(args) == 0
    return path


@pytest.fixture(scope="module")
def hanna_db(hanna_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("hanna") / "hanna.duckdb"
    assert main(["ingest", "--db", str(path), str(hanna_dir)]) == 0
    return path


def test_score_without_a_destination_is_refused_before_scoring(tmp_path, monkeypatch, capsys):
    import hanna_stats.scoring.run

    def never(*args, **kwargs):
        raise AssertionError("scored although the scores have nowhere to go")

    monkeypatch.setattr(hanna_stats.scoring.run, "score_input", never)
    texts = tmp_path / "texts.csv"
    texts.write_text("input,system,prompt,reference,story\n0,S,a cat,the cat,the cat sat\n")
    assert main(["score", "--metrics", "BLEU", "--input", str(texts)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--db FILE and/or --out FILE" in err


def test_topk_says_which_ks_a_criterion_has_no_rows_for(wmt22_db, capsys):
    # WMT22 zh-en: MQM rates 14 MT systems (mt-metrics-eval's 14 systems with MQM scores); the
    # DA criteria (wmt, wmt-appraise, their z-scores) rate 12.
    topk = ["topk", "--db", str(wmt22_db), "--level", "system", "--format", "csv"]
    assert main([*topk, "--ks", "14-16"]) == 0
    out, err = capsys.readouterr()
    assert {(r["criterion"], r["k"]) for r in _rows(out)} == {("mqm", "14")}
    assert err.splitlines() == [
        "note: topk: criterion mqm rates 14 systems: no rows for k = 15, 16",
        "note: topk: criteria wmt, wmt-appraise, wmt-appraise-z, wmt-z rate 12 systems: no rows "
        "for k = 14, 15, 16",
    ]
    assert main([*topk, "--ks", "15-16"]) == 2
    err = capsys.readouterr().err
    assert "each k must lie between 3 and 14, the most systems a criterion rates (mqm 14, " in err


def _sys_scores(path) -> dict[str, float]:
    """A .sys.score file's values by system, None left out, by plain Python."""
    pairs = (line.split("\t") for line in path.read_text(encoding="utf-8").splitlines())
    return {system: float(value) for system, value in pairs if value != "None"}


def test_inter_criteria_with_given_scores_needs_no_metric_scores(wmt22_dir, wmt22_db, capsys):
    # The copy of WMT22 has no metric .sys.score file; the criteria have theirs.
    args = ["correlate", "--db", str(wmt22_db), "--level", "system", "--against"]
    given = ["--system-scores", "given", "--format", "csv"]
    assert main([*args, "inter-criteria", *given]) == 0
    out, err = capsys.readouterr()
    rows = {(r["measure"], r["against"]): r for r in _rows(out)}
    criteria = ("mqm", "wmt", "wmt-appraise", "wmt-appraise-z", "wmt-z")
    assert set(rows) == {(a, b) for a in criteria for b in criteria} and err == ""
    human = wmt22_dir / "human-scores"
    mqm, z = (
        _sys_scores(human / "zh-en.mqm.sys.score"),
        _sys_scores(human / "zh-en.wmt-z.sys.score"),
    )
    shared = sorted(set(mqm) & set(z) - {"refA", "refB"})  # the references are not MT systems
    expected = stats.kendalltau([mqm[s] for s in shared], [z[s] for s in shared]).statistic
    row = rows["mqm", "wmt-z"]
    assert float(row["statistic"]) == pytest.approx(expected, abs=1e-12)
    assert int(row["n"]) == len(shared)
    # metrics are still refused at given system level: they have no given value
    assert main([*args, "criteria", *given]) == 2
    assert "no measure of kinds metric has a given system-level value" in capsys.readouterr().err


@pytest.fixture(scope="module")
def pairs_db(tmp_path_factory):
    root = make_pairs(tmp_path_factory.mktemp("pairs") / "wmt23")
    path = root.parent / "pairs.duckdb"
    for lp in LPS:
        assert (
            main(["ingest", "--db", str(path), str(root), "--lp", lp, "--ref", PAIRS[lp][1]]) == 0
        )
    return path


def test_several_subsets_are_analysed_each_on_its_own_by_default(pairs_db, capsys):
    con = open_store(pairs_db, read_only=True)
    study = load_study(con)
    con.close()
    with analysis_calls() as calls:
        stacked = correlate(study, level="system", method="pearson")
    assert stacked.columns[0] == "subset" and calls[0].settings["subsets"] == "each"
    assert len(calls) == 1  # one call, though it ran once per subset
    assert list(dict.fromkeys(stacked["subset"])) == list(LPS)
    for lp in LPS:
        mine = stacked.filter(stacked["subset"] == lp).drop("subset")
        alone = correlate(study.subset(subset=lp), level="system", method="pearson")
        assert mine.equals(alone)
        # each pair's systems only: n is the pair's MT systems (the references left out)
        assert set(mine["n"].to_list()) <= set(range(len(PAIRS[lp][2]) + 1))
    pooled = correlate(study, level="system", method="pearson", subsets="pooled")
    assert "subset" not in pooled.columns
    run = ["correlate", "--db", str(pairs_db), "--level", "system", "--format", "csv"]
    capsys.readouterr()
    assert main(run) == 0
    out, err = capsys.readouterr()
    assert err == "" and [r["subset"] for r in _rows(out)] == stacked["subset"].to_list()
    assert main([*run, "--pool-subsets"]) == 0
    assert "subset" not in _rows(capsys.readouterr().out)[0]
    with pytest.raises(SystemExit):  # one way to do each thing: --per-subset is gone
        main([*run, "--per-subset"])


def test_clusters_help_explains_pvalue_next(capsys):
    with pytest.raises(SystemExit):
        main(["clusters", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "pvalue_next: the one-sided p-value that the row's metric beats the metric on the " in text
    )
    assert "an earlier member of the cluster beats the new metric" in text


def test_correlate_says_how_many_pairs_each_coefficient_has(hanna_db, capsys):
    # HANNA: 10 systems besides Human, 96 prompts, every story rated and scored.
    run = ["correlate", "--db", str(hanna_db), "--method", "pearson", "--format", "csv"]
    for level, n in (("system", "10"), ("global", "960"), ("story", "")):
        assert main([*run, "--level", level]) == 0
        assert {r["n"] for r in _rows(capsys.readouterr().out)} == {n}


def test_the_first_compile_says_so_on_a_terminal(hanna_db, tmp_path, monkeypatch, capsys):
    import numba.core.config

    monkeypatch.setattr("hanna_stats.analyses.rankings.borda", lambda study, **kw: _one_row())
    argv = ["borda", "--db", str(hanna_db), "--format", "csv"]
    notice = "note: compiling the statistics kernels once (about 20 s); later runs start at once\n"
    empty = tmp_path / "numba-cache"
    empty.mkdir()
    monkeypatch.setattr(numba.core.config, "CACHE_DIR", str(empty))
    monkeypatch.setattr(progress, "progress_enabled", lambda: True)
    assert main(argv) == 0 and capsys.readouterr().err == notice
    assert not progress.kernels_cached()
    monkeypatch.setattr(progress, "progress_enabled", lambda: False)  # piped, or CI
    assert main(argv) == 0 and capsys.readouterr().err == ""
    # compiled once: Numba's index file for the kernels is where Numba looks
    monkeypatch.setattr(progress, "progress_enabled", lambda: True)
    from numba.core.caching import UserProvidedCacheLocator

    kernels = str(Path(importlib.util.find_spec("hanna_stats.kernels").origin))
    folder = UserProvidedCacheLocator.get_suitable_cache_subpath(kernels)
    (empty / folder).mkdir(parents=True, exist_ok=True)
    (empty / folder / "correlation.coefficient-92.py311.nbi").write_bytes(b"")
    assert progress.kernels_cached()
    assert main(argv) == 0 and capsys.readouterr().err == ""


def _one_row():
    import polars as pl

    return pl.DataFrame({"x": [1]})


def test_a_hanna_folder_says_which_files_no_ingest_reads(hanna_dir, tmp_path, capsys):
    assert main(["ingest", "--db", str(tmp_path / "h.duckdb"), str(hanna_dir)]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if "note:" in line]
    assert len(notes) == 1
    assert "hanna_llm_stories.csv" in notes[0] and "score --input hanna_llm_stories.csv" in notes[0]
    assert "user_study.csv" in notes[0] and "`user-study` command" in notes[0]


def test_reingest_with_the_same_human_option_says_nothing_wrong(tmp_path, capsys):
    path = tmp_path / "study.csv"
    lines = ["item,input,system,measure,value"] + [
        f"{i}-{s},{i},{s},{m},{(i + k + j) % 5 + 1}"
        for i in range(3)
        for k, s in enumerate("ABC")
        for j, m in enumerate(("Fluency", "BLEU"))
    ]
    path.write_text("\n".join(lines) + "\n")
    db = str(tmp_path / "s.duckdb")
    assert main(["ingest", "--db", db, str(path), "--human", "Fluency"]) == 0
    capsys.readouterr()
    assert main(["ingest", "--db", db, str(path), "--human", "Fluency"]) == 0
    out = capsys.readouterr().out
    assert "already ingested" in out and "not applied" not in out
    assert main(["ingest", "--db", db, str(path), "--human", "Fluency,BLEU"]) == 0
    assert "not applied: human_measures (--human)" in capsys.readouterr().out


def test_a_missing_column_names_the_file_columns_and_a_close_one(tmp_path, capsys):
    path = tmp_path / "study.csv"
    path.write_text("item,input,sytem,measure,value\n1,a,S,BLEU,0.5\n")
    assert main(["ingest", "--db", str(tmp_path / "s.duckdb"), str(path)]) == 2
    err = capsys.readouterr().err
    assert "column 'system': missing column" in err
    assert "the file's columns: item, input, sytem, measure, value" in err
    assert "'sytem' meant to be 'system'" in err


def test_a_measure_name_in_the_wrong_case_gets_a_suggestion(wmt22_db, hanna_db, capsys):
    williams = ["williams", "--db", str(wmt22_db), "--criterion", "MQM", "--format", "csv"]
    assert main(williams) == 2
    assert "got 'MQM' (did you mean 'mqm'?)" in capsys.readouterr().err
    means = ["system-means", "--db", str(hanna_db), "--measures", "relevance"]
    assert main(means) == 2
    assert "(did you mean 'Relevance'?)" in capsys.readouterr().err
    con = open_store(hanna_db, read_only=True)
    study = load_study(con)
    con.close()
    with pytest.raises(ValueError, match=r"unknown measures: \['BLUE'\] \(did you mean 'BLEU'\?\)"):
        study.cube(measures=["BLUE"])
