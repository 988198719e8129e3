"""The store split by job: the Study without DuckDB, one table of formats, one ingest."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from hanna_stats.cli import INGEST_FORMATS, main
from hanna_stats.store import IngestSummary, ingest, open_store
from hanna_stats.store.formats import COMMON_OPTIONS, FORMATS, detect_format
from hanna_stats.vocabulary import WORDS

REPO = Path(__file__).resolve().parents[2]


def loaded_after(statement: str) -> set[str]:
    """The heavy modules a fresh interpreter has loaded after ``statement``."""
    code = f"{statement}; import sys; print(sorted(m for m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    return {m for m in eval(out) if m == "duckdb" or m.startswith("hanna_stats.store.")}


@pytest.mark.parametrize(
    "statement",
    [
        "import hanna_stats.analyses.correlations",
        "from hanna_stats.analyses import correlate",
        "import hanna_stats.study",
        "import hanna_stats.store",
        "from hanna_stats.store import Study, Cube, AUTOMATIC_KINDS",
    ],
)
def test_the_study_and_the_analyses_load_no_duckdb_nor_ingester(statement):
    assert loaded_after(statement) == set()


def test_correlations_subprocess_has_no_duckdb():
    code = "import hanna_stats.analyses.correlations, sys; print('duckdb' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_the_store_still_exports_what_users_use():
    import hanna_stats.store as store
    from hanna_stats.study import Cube, Study

    assert store.Study is Study and store.Cube is Cube
    assert store.AUTOMATIC_KINDS == WORDS["kinds"]
    for name in store.__all__:
        assert getattr(store, name) is not None
    assert "ingest" in dir(store)
    with pytest.raises(AttributeError, match="ingest_tidy"):
        store.ingest_tidy  # noqa: B018 (the wrappers are gone)


def test_one_table_of_formats():
    assert tuple(FORMATS) == WORDS["data_format"] == tuple(INGEST_FORMATS)
    assert FORMATS["tidy"].options == (
        "human_system",
        "human_measures",
        "scales",
        "study",
        "item_word",
    )
    assert FORMATS["wmt"].options == ("lp", "ref", "include_outliers")
    assert [f.study for f in FORMATS.values()] == [
        "HANNA", "HANNA", "HANNA", "from the file", "SummEval", "from the file",
        "from the file", "HANNA"
    ]  # fmt: skip
    assert [f.item_word for f in FORMATS.values()] == [
        "story", "story", "story", "from the file", "summary", "segment", "paragraph", "story"
    ]  # fmt: skip
    assert all(f.detected and f.doc and f.reads for f in FORMATS.values())


def test_an_option_the_format_does_not_take_is_refused(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("item,input,system,measure,value\na,p,A,BLEU,1.0\n")
    con = open_store()
    with pytest.raises(ValueError, match=r"^lp: not an option of format 'tidy' \(tidy files\)"):
        ingest(con, path, lp="en-de")
    with pytest.raises(ValueError, match=r"^human_system: not an option of format 'summeval'"):
        ingest(con, path, format="summeval", human_system="Human")
    with pytest.raises(ValueError, match=r"^format must be one of 'hanna-metric-scores', "):
        ingest(con, path, format="csv")
    assert con.execute("SELECT count(*) FROM ingests").fetchall() == [(0,)]
    (summary,) = ingest(con, path, extend=False, replace=False, scale_policy=None)
    assert isinstance(summary, IngestSummary) and summary.format == "tidy"
    assert set(COMMON_OPTIONS) == {"extend", "replace", "scale_policy"}


def test_a_hanna_folder_is_one_ingest(hanna_dir):
    con = open_store()
    assert detect_format(hanna_dir) == "hanna-dir"
    summaries = ingest(con, hanna_dir)
    present = [f for f in FORMATS if f.startswith("hanna-") and f != "hanna-dir"]
    assert [s.format for s in summaries][:2] == present[:2]
    assert all(not s.skipped for s in summaries)
    assert all(s.skipped for s in ingest(con, hanna_dir, format="hanna-dir"))
    con.close()


def test_the_cli_refuses_a_tidy_option_for_another_format(hanna_dir, tmp_path, capsys):
    db = tmp_path / "h.duckdb"
    code = main(["ingest", "--db", str(db), str(hanna_dir), "--human-system", "Human"])
    err = capsys.readouterr().err
    assert code == 2 and not db.exists()
    assert err.strip() == (
        f"error: --human-system: for tidy files only; {hanna_dir} is read as hanna-dir"
    )
    code = main(["ingest", "--db", str(db), str(hanna_dir), "--study", "S", "--lp", "en-de"])
    err = capsys.readouterr().err
    assert err.strip() == (
        "error: --study: for tidy files only; --lp: for WMT test sets only; "
        f"{hanna_dir} is read as hanna-dir"
    )


def test_study_repr_is_short(hanna_study):
    text = repr(hanna_study)
    assert len(text) < 500 and str(hanna_study) == text
    assert text.splitlines()[0] == (
        "Study 'HANNA': 11 systems (1 human-written), 96 inputs, 1,056 items (stories)"
    )
    assert "6 human criteria, 72 metric, 140 llm-judge" in text
    assert "19,008 rater-level ratings by 3 raters" in text
    subset = hanna_study.subset(exclude_systems=["Human", "GPT-2"])
    assert repr(subset).splitlines()[-1] == "  left out: Human, GPT-2"


def test_reports_cache_folder_is_the_downloaders(monkeypatch, tmp_path):
    """reports/html.py keeps its JavaScript bundle in the cache folder that
    hanna_stats.store.fetch.cache_root names, without importing the downloader."""
    import altair as alt
    import vl_convert
    from hanna_stats.reports import html

    from hanna_stats.store.fetch import cache_root

    monkeypatch.setenv("HANNA_STATS_CACHE", str(tmp_path))
    major, minor = alt.SCHEMA_VERSION.lstrip("v").split(".")[:2]
    bundle = cache_root() / "js" / f"vega-bundle-{vl_convert.__version__}-vl{major}.{minor}.js"
    bundle.parent.mkdir(parents=True)
    bundle.write_text("/* cached */", encoding="utf-8")
    assert html._javascript() == "/* cached */"
    source = (REPO / "reports" / "html.py").read_text(encoding="utf-8")
    assert not re.search(r"^\s*(from|import) hanna_stats\.store", source, flags=re.M)
