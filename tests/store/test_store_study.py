"""A store holds one study: another study, or a changed value, needs --extend / --replace."""

from __future__ import annotations

import hashlib
import io

import numpy as np
import polars as pl
import pytest

from hanna_stats.cli import main
from hanna_stats.store import open_store

TABLES = ("systems", "inputs", "items", "raters", "measures", "scores", "ratings", "study")


def digest(db) -> dict[str, str]:
    """SHA-256 of every table's rows, in a total order."""
    con = open_store(db, read_only=True)
    try:
        return {
            t: hashlib.sha256(
                repr(con.sql(f"SELECT * FROM {t} ORDER BY ALL").fetchall()).encode()
            ).hexdigest()
            for t in TABLES
        }
    finally:
        con.close()


@pytest.fixture(scope="module")
def hanna_db(hanna_dir, tmp_path_factory):
    path = tmp_path_factory.mktemp("hanna") / "hanna.duckdb"
    assert main(["ingest", "--db", str(path), str(hanna_dir)]) == 0
    return path


def summeval_like(path, *, inputs=("d0", "d1"), value=0.5):
    rows = [
        {"item": f"{g}-{s}", "input": g, "system": s, "measure": "BLEU", "value": value}
        for g in inputs
        for s in ("m0", "m1", "m2")
    ]
    pl.DataFrame(rows).write_csv(path)
    return path


def test_hanna_folder_ingest_reports_what_it_added(hanna_dir, tmp_path, capsys):
    db = tmp_path / "h.duckdb"
    assert main(["ingest", "--db", str(db), str(hanna_dir)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("hanna_metric_scores.csv: hanna-metric-scores, 82,368 values")
    assert "11 systems, 96 inputs, 1,056 items, 78 measures, 82,368 values" in out[0]
    assert "0 systems, 0 inputs, 0 items, 140 measures" in out[1]  # the LLM judges
    assert out[0].endswith("replaced: 0 values")
    # The judges' out-of-scale values are kept (HANNA's policy) and counted.
    assert "replaced: 0 values; off scale: " in out[1] and out[1].endswith("(policy keep)")
    con = open_store(db, read_only=True)
    assert con.sql("SELECT name FROM study").fetchall() == [("HANNA",)]
    con.close()
    assert main(["ingest", "--db", str(db), str(hanna_dir)]) == 0  # again: nothing written
    assert "already ingested" in capsys.readouterr().out


def test_another_study_needs_extend(hanna_db, tmp_path, capsys):
    """Regression: a tidy study merged silently into the HANNA store (its BLEU into HANNA's)."""
    db = tmp_path / "h.duckdb"
    db.write_bytes(hanna_db.read_bytes())
    before = digest(db)
    other = summeval_like(tmp_path / "summeval.csv")
    assert main(["ingest", "--db", str(db), str(other)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "summeval.csv" in err and "'HANNA'" in err and "--extend" in err
    assert digest(db) == before
    assert main(["ingest", "--db", str(db), str(other), "--extend"]) == 0
    assert "2 inputs, 6 items, 0 measures, 6 values" in capsys.readouterr().out


def test_changed_values_need_replace(hanna_db, tmp_path, capsys):
    db = tmp_path / "h.duckdb"
    db.write_bytes(hanna_db.read_bytes())
    con = open_store(db, read_only=True)
    item, value = con.sql(
        "SELECT item, value FROM item_scores WHERE measure = 'BLEU' ORDER BY item LIMIT 1"
    ).fetchall()[0]
    row = con.sql(f"SELECT input, system FROM item_scores WHERE item = '{item}' LIMIT 1")
    ((inp, system),) = row.fetchall()
    con.close()
    changed = tmp_path / "fix.csv"
    pl.DataFrame(
        {"item": [item], "input": [inp], "system": [system], "measure": ["BLEU"], "value": [2.0]}
    ).write_csv(changed)
    before = digest(db)
    assert main(["ingest", "--db", str(db), str(changed)]) == 2
    err = capsys.readouterr().err
    assert "fix.csv" in err and f"item {item!r}" in err and "'BLEU'" in err and "--replace" in err
    assert digest(db) == before
    assert main(["ingest", "--db", str(db), str(changed), "--replace"]) == 0
    assert "replaced: 1 values" in capsys.readouterr().out
    con = open_store(db, read_only=True)
    got = con.sql(f"SELECT value FROM item_scores WHERE measure = 'BLEU' AND item = '{item}'")
    assert got.fetchall() == [(2.0,)] and value != 2.0
    con.close()


def test_subset_of_systems_in_python_and_on_the_command_line(hanna_study, hanna_dir, capsys):
    """`--systems` / `--exclude-systems` (Study.subset): every analysis sees only the systems
    kept; system-level Pearson equals scipy's on the remaining systems' means."""
    import scipy.stats

    from hanna_stats.analyses import correlate

    kept = hanna_study.subset(exclude_systems=["GPT-2", "Fusion"])
    assert "GPT-2" not in kept.systems and kept.left_out == ("GPT-2", "Fusion")
    assert len(kept.systems) == len(hanna_study.systems) - 2
    position = {m: k for k, m in enumerate(hanna_study.measures)}
    keep = np.isin(hanna_study.systems, kept.systems) & ~hanna_study.is_human
    means = {
        m: np.nanmean(hanna_study.values[position[m]][:, keep], axis=0)
        for m in ("BLEU", "Relevance")
    }
    want = scipy.stats.pearsonr(means["BLEU"], means["Relevance"]).statistic
    got = correlate(kept, level="system", method="pearson")
    row = got.filter((pl.col("measure") == "BLEU") & (pl.col("against") == "Relevance"))
    assert row["statistic"][0] == pytest.approx(want, abs=1e-12)
    args = ["correlate", "--data", str(hanna_dir), "--level", "system", "--method", "pearson"]
    assert main([*args, "--exclude-systems", "GPT-2, Fusion", "--format", "csv"]) == 0
    cli = pl.read_csv(io.StringIO(capsys.readouterr().out))
    line = cli.filter((pl.col("measure") == "BLEU") & (pl.col("against") == "Relevance"))
    assert line["statistic"][0] == pytest.approx(want, abs=1e-12)
    only = hanna_study.subset(systems=["CTRL", "GPT", "HINT", "Human"])
    assert only.systems == ("Human", "CTRL", "GPT", "HINT")  # store order
    with pytest.raises(ValueError, match=r"unknown systems \['Nope'\]"):
        hanna_study.subset(systems=["Nope"])
    with pytest.raises(ValueError, match="leave no system"):
        hanna_study.subset(systems=["CTRL"], exclude_systems=["CTRL"])
