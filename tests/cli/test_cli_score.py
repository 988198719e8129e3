"""The score subcommand: registry listing, tidy output, store writes that join HANNA's items."""

from __future__ import annotations

import json

import duckdb
import numpy as np
import polars as pl
import pytest

from hanna_stats.cli import main
from hanna_stats.store import build_hanna_store, open_store


def test_list_csv(capsys):
    assert main(["score", "--list", "--format", "csv"]) == 0
    table = pl.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert table.columns[:5] == ["metric", "family", "reference", "symbol", "available"]
    row = table.filter(pl.col("metric") == "ROUGE-W-1.2 F-Score").row(0, named=True)
    assert (row["family"], row["reference"], row["symbol"]) == ("string", "based", "Ξ§")
    assert table.filter(pl.col("metric") == "Novelty-1")["symbol"].item() == "¤§"


@pytest.fixture
def texts_file(tmp_path):
    path = tmp_path / "texts.csv"
    pl.DataFrame(
        {
            "input": ["0", "1"],
            "system": ["S", "S"],
            "prompt": ["a cat", "a dog"],
            "reference": ["the cat sat", "the dog ran"],
            "story": ["the cat sat down", ""],
        }
    ).write_csv(path)
    return path


def test_out_tidy_and_store_rerun(tmp_path, texts_file, capsys):
    out = tmp_path / "scores.parquet"
    assert (
        main(
            ["score", "--metrics", "rouge,Coverage", "--input", str(texts_file), "--out", str(out)]
        )
        == 0
    )
    tidy = pl.read_parquet(out)
    assert tidy.columns == ["item", "input", "system", "metric", "value"]
    assert tidy.height == 2 * 25
    db = tmp_path / "store.duckdb"
    args = ["score", "--metrics", "BLEU,Text length", "--input", str(texts_file), "--db", str(db)]
    assert main(args) == 0
    assert main(args) == 0  # already scored: nothing recomputed
    assert "0 scores written" in capsys.readouterr().out
    con = open_store(db, read_only=True)
    rows = con.sql("SELECT name, kind, family, reference_based, symbol FROM measures ORDER BY name")
    assert rows.fetchall() == [
        ("BLEU", "metric", "string", True, "Ξ§"),
        ("Text length", "metric", "string", False, "¤§"),
    ]
    assert con.sql("SELECT count(*) FROM scores").fetchall()[0][0] == 4


def test_bad_input_is_a_clear_error(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("input,system,prompt,story\n0,S,p,s\n")
    assert main(["score", "--input", str(path), "--out", str(tmp_path / "o.csv")]) == 2
    assert "column 'reference': missing column" in capsys.readouterr().err
    assert (
        main(
            [
                "score",
                "--metrics",
                "NoSuchMetric",
                "--input",
                str(path),
                "--out",
                str(tmp_path / "o.csv"),
            ]
        )
        == 2
    )
    assert "unknown metric 'NoSuchMetric'" in capsys.readouterr().err


def test_hanna_stories_join_published_scores(tmp_path, hanna_dir):
    # Eight Human stories in the raw annotation file's shape (Story ID = prompt index for the
    # Human block), scored into a store built from the HANNA files: they land on the published
    # items, and with --hanna-compat the recomputed Density equals the published one.
    stories = pl.read_csv(hanna_dir / "hanna_llm_stories.csv").head(96)
    rows = pl.DataFrame(
        {
            "Story ID": [str(i) for i in range(96)],
            "Prompt": stories["Prompt"],
            "Human": stories["Human"],
            "Story": stories["Human"],
            "Model": ["Human"] * 96,
        }
    )
    path = tmp_path / "hanna_stories_annotations.csv"
    rows.write_csv(path)
    db = tmp_path / "hanna.duckdb"
    build_hanna_store(hanna_dir, db).close()
    base = ["score", "--metrics", "Density", "--input", str(path), "--db", str(db)]
    assert main([*base, "--hanna-compat"]) == 0
    con = duckdb.connect(str(db), read_only=True)
    # Already published for these items: nothing written without --force.
    assert con.sql("SELECT count(*) FROM ingests WHERE format LIKE 'scoring%'").fetchall() == [(0,)]
    con.close()
    assert main([*base, "--hanna-compat", "--force"]) == 0
    con = open_store(db, read_only=True)
    got = con.sql(
        "SELECT value FROM item_scores WHERE measure = 'Density' AND system = 'Human' "
        "ORDER BY CAST(input AS INT)"
    ).fetchnumpy()["value"]
    published = json.loads(pl.read_csv(hanna_dir / "hanna_metric_scores.csv")["Density ¤§"][0])
    np.testing.assert_array_equal(got, published)
    n_items = con.sql("SELECT count(*) FROM items").fetchall()[0][0]
    assert n_items == 1056  # no new items: the scores joined the published ones
