"""Generic tidy score files (CSV and Parquet), e.g. for SummEval or WMT."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from hanna_stats.store import InputError, ingest, load_study, open_store

TABLES = ["systems", "inputs", "items", "measures", "raters", "scores", "ratings", "ingests"]


def counts(con) -> dict[str, int]:
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES}


def tidy_frame() -> pl.DataFrame:
    """2 documents x 3 systems; a metric (ROUGE-1) and a rated criterion (Fluency, 2 raters)."""
    rows = []
    for d in range(2):
        for s, system in enumerate(["reference", "bart", "pegasus"]):
            item = f"doc{d}-{system}"
            rows.append((item, f"doc{d}", system, "ROUGE-1", 0.1 * (d + s), None))
            for r, rater in enumerate(["ann1", "ann2"]):
                rows.append((item, f"doc{d}", system, "Fluency", float(1 + (d + s + r) % 5), rater))
    return pl.DataFrame(
        rows, schema=["item", "input", "system", "measure", "value", "rater"], orient="row"
    )


def write_csv(path, df: pl.DataFrame):
    df.write_csv(path)
    return path


@pytest.fixture(params=["csv", "parquet"])
def tidy_file(request, tmp_path):
    path = tmp_path / f"summeval.{request.param}"
    df = tidy_frame()
    if request.param == "csv":
        df.write_csv(path)
    else:
        df.write_parquet(path)
    return path


def test_ingest_tidy(tidy_file):
    con = open_store()
    (summary,) = ingest(con, tidy_file, human_system="reference", format="tidy")
    assert summary.n_values == 18 and summary.format == "tidy"
    c = counts(con)
    assert (c["systems"], c["inputs"], c["items"], c["measures"]) == (3, 2, 6, 2)
    assert (c["scores"], c["ratings"], c["raters"]) == (6, 12, 2)
    kinds = dict(con.execute("SELECT name, kind FROM measures").fetchall())
    assert kinds == {"ROUGE-1": "metric", "Fluency": "human"}
    humans = con.execute("SELECT name FROM systems WHERE is_human").fetchall()
    assert humans == [("reference",)]
    cube = load_study(con).cube()
    assert cube.measures == ["ROUGE-1", "Fluency"]
    assert cube.systems == ["bart", "pegasus"] and cube.inputs == ["doc0", "doc1"]
    # Fluency of doc1-bart: raters give 1 + (1 + 1 + r) % 5 = 3, 4.
    assert cube.values[1, 1, 0] == 3.5
    assert np.allclose(cube.values[0, :, 0], [0.1, 0.2])
    assert ingest(con, tidy_file, format="tidy")[0].skipped
    assert con.execute(
        "SELECT \"Fluency\" FROM scores_wide WHERE item = 'doc1-bart'"
    ).fetchall() == [(3.5,)]


def test_tidy_without_rater_column_and_existing_measure(tmp_path):
    con = open_store()
    first = tidy_frame().filter(pl.col("rater").is_null()).drop("rater")
    ingest(con, write_csv(tmp_path / "a.csv", first), format="tidy")
    # A second study re-uses the measure name: its kind and position are kept; new systems and
    # inputs are placed after those stored.
    second = first.with_columns(pl.col("item") + "-x", pl.col("input") + "-x", pl.col("value") * 2)
    before = counts(con)
    with pytest.raises(InputError, match=r"b\.csv: shares none of its 2 inputs .*'a'.*--extend"):
        ingest(con, write_csv(tmp_path / "b.csv", second), format="tidy")
    assert counts(con) == before
    (summary,) = ingest(con, tmp_path / "b.csv", extend=True, format="tidy")
    assert summary.added == {"systems": 0, "inputs": 2, "items": 6, "measures": 0, "values": 6}
    assert counts(con)["measures"] == 1 and counts(con)["items"] == 12
    positions = con.execute("SELECT name, position FROM inputs ORDER BY position").fetchall()
    assert positions == [("doc0", 0), ("doc1", 1), ("doc0-x", 2), ("doc1-x", 3)]


def test_reingest_changed_values_upserts(tmp_path):
    con = open_store()
    df = tidy_frame()
    # Declared 1..7: the ratings + 1 (up to 6) stay on it (inferred from a.csv, it would be 1..5).
    ingest(con, write_csv(tmp_path / "a.csv", df), scales={"Fluency": (1, 7)}, format="tidy")
    before = counts(con)
    changed = write_csv(tmp_path / "b.csv", df.with_columns(pl.col("value") + 1))
    with pytest.raises(InputError, match=r"would replace 18 value\(s\) .*--replace"):
        ingest(con, changed, format="tidy")
    assert counts(con) == before
    (summary,) = ingest(con, changed, replace=True, format="tidy")
    assert summary.replaced == 18 and summary.added["values"] == 0
    # The same values in another file (another SHA-256) replace nothing and need no option.
    same = write_csv(tmp_path / "c.csv", df.with_columns(pl.col("value") + 1.0).reverse())
    assert ingest(con, same, format="tidy")[0].replaced == 0
    assert counts(con)["scores"] == 6 and counts(con)["ratings"] == 12
    assert con.execute("SELECT min(score) FROM ratings").fetchall() == [(2.0,)]


def test_scale_of_a_human_measure_is_inferred_stored_and_noted(tmp_path):
    con = open_store()
    (summary,) = ingest(con, write_csv(tmp_path / "a.csv", tidy_frame()), format="tidy")
    assert "scales inferred" in str(summary) and "Fluency likert 1..5" in str(summary)
    scales = con.execute("SELECT name, scale, scale_min, scale_max FROM measures ORDER BY name")
    assert scales.fetchall() == [("Fluency", "likert", 1.0, 5.0), ("ROUGE-1", None, None, None)]
    # Item-level human values that are not whole numbers: continuous, smallest to largest.
    means = tidy_frame().filter(pl.col("rater").is_null()).drop("rater")
    means = means.with_columns(pl.lit("Mean").alias("measure"), pl.col("value") + 0.25)
    (summary,) = ingest(
        open_store(), write_csv(tmp_path / "m.csv", means), human_measures=["Mean"], format="tidy"
    )
    assert "Mean continuous 0.25..0.55" in str(summary)
    # A declared scale is no inference; a rating off it is refused with its row.
    (declared,) = ingest(
        open_store(), tmp_path / "a.csv", scales={"Fluency": (0, 10)}, format="tidy"
    )
    assert "inferred" not in str(declared)
    with pytest.raises(
        InputError, match=r"row 2, column 'value': value 1 .*'Fluency'.*from 2 to 4"
    ):
        ingest(open_store(), tmp_path / "a.csv", scales={"Fluency": (2, 4)}, format="tidy")


def test_measure_names_are_quoted_in_scores_wide(tmp_path):
    df = tidy_frame().with_columns(pl.col("measure").replace("ROUGE-1", 'it\'s "odd"'))
    con = open_store()
    ingest(con, write_csv(tmp_path / "a.csv", df), format="tidy")
    query = 'SELECT "it\'s ""odd""" FROM scores_wide WHERE item = \'doc0-bart\''
    assert con.execute(query).fetchall() == [(0.1,)]


def bad(path, match, **kwargs):
    con = open_store()
    with pytest.raises(InputError, match=match) as err:
        ingest(con, path, **kwargs, format="tidy")
    assert counts(con) == dict.fromkeys(TABLES, 0)
    return err.value


def test_missing_column(tmp_path):
    err = bad(write_csv(tmp_path / "a.csv", tidy_frame().drop("value")), "missing column")
    assert err.column == "value"


def test_non_numeric_value(tmp_path):
    df = tidy_frame().with_columns(pl.col("value").cast(pl.String))
    df[4, "value"] = "high"
    err = bad(write_csv(tmp_path / "a.csv", df), "expected a number, got 'high'")
    assert (err.file, err.row, err.column) == ("a.csv", 5, "value")
    assert str(err) == "a.csv, row 5, column 'value': expected a number, got 'high'"


def test_missing_key(tmp_path):
    df = tidy_frame().with_columns(pl.col("system").cast(pl.String))
    df[7, "system"] = None
    err = bad(write_csv(tmp_path / "a.csv", df), "missing value")
    assert (err.row, err.column) == (8, "system")


def test_duplicate_row(tmp_path):
    df = pl.concat([tidy_frame(), tidy_frame().slice(3, 1)])
    err = bad(write_csv(tmp_path / "a.csv", df), "duplicate row")
    assert err.row == 19 and "also row 4" in str(err)


def test_item_with_two_systems(tmp_path):
    df = tidy_frame()
    df[1, "system"] = "bart"
    err = bad(write_csv(tmp_path / "a.csv", df), "duplicate item: item='doc0-reference'")
    assert err.row == 2


def test_input_system_with_two_items(tmp_path):
    df = tidy_frame()
    df[2, "item"] = "doc0-reference-again"
    err = bad(write_csv(tmp_path / "a.csv", df), "input='doc0', system='reference' has item")
    assert err.row == 3


def test_rating_without_value(tmp_path):
    df = tidy_frame()
    df[1, "value"] = None
    assert bad(write_csv(tmp_path / "a.csv", df), "a rating needs a value").row == 2


def test_empty_header_only_bad_utf8(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    bad(empty, "0 bytes")
    header = tmp_path / "header.csv"
    header.write_text("item,input,system,measure,value\n")
    bad(header, "no data rows")
    broken = write_csv(tmp_path / "broken.csv", tidy_frame())
    broken.write_bytes(broken.read_bytes().replace(b"pegasus", b"peg\xe9sus", 2))
    assert bad(broken, "not valid UTF-8").row == 7


def test_human_system_must_exist(tmp_path):
    err = bad(write_csv(tmp_path / "a.csv", tidy_frame()), "human system", human_system="Human")
    assert err.column == "system"


def test_reserved_measure_name(tmp_path):
    df = tidy_frame().with_columns(pl.col("measure").replace("ROUGE-1", "system"))
    assert bad(write_csv(tmp_path / "a.csv", df), "reserved").row == 1


def test_parquet_errors(tmp_path):
    path = tmp_path / "a.parquet"
    tidy_frame().with_columns(pl.col("value").cast(pl.String)).with_columns(
        pl.when(pl.int_range(pl.len()) == 2)
        .then(pl.lit("n/a"))
        .otherwise(pl.col("value"))
        .alias("value")
    ).write_parquet(path)
    assert bad(path, "expected a number, got 'n/a'").row == 3
    tidy_frame().with_columns(pl.col("value") > 1).write_parquet(path)
    bad(path, "expected numbers, got Boolean")
    path.write_bytes(b"not parquet")
    bad(path, "cannot read the file")


def test_conflict_with_stored_items(tmp_path):
    con = open_store()
    ingest(con, write_csv(tmp_path / "a.csv", tidy_frame()), format="tidy")
    before = counts(con)
    moved = tidy_frame().with_columns(pl.col("input").replace({"doc0": "doc1", "doc1": "doc0"}))
    with pytest.raises(InputError, match="already holds it"):
        ingest(con, write_csv(tmp_path / "b.csv", moved), format="tidy")
    renamed = tidy_frame().with_columns(pl.col("item") + "-renamed")
    with pytest.raises(InputError, match="duplicate item: input 'doc0', system 'reference'"):
        ingest(con, write_csv(tmp_path / "c.csv", renamed), format="tidy")
    assert counts(con) == before


@pytest.mark.parametrize(
    ("text", "match", "row", "column"),
    [
        # Regression: a short last row became a new item with a NULL score.
        ("item,input,system,measure,value,rater\na,d,s,m,0.5,\nb,d,t,m\n", "got 4", 2, None),
        ("item,input,system,measure,value\na,d,s,m,0.5\nb,d,t,m,0.7,9\n", "got 6", 2, None),
        # Regression: `value` twice was accepted without saying which column was used.
        (
            "item,input,system,measure,value,value\na,d,s,m,0.5,0.6\n",
            "duplicate column",
            None,
            "value",
        ),
        ("item,input,system,measure,value,\na,d,s,m,0.5,x\n", "empty column name", None, None),
    ],
)
def test_malformed_csv_rows_and_headers(tmp_path, text, match, row, column):
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    err = bad(path, match)
    assert "bad.csv" in str(err) and (err.row, err.column) == (row, column)


@pytest.mark.parametrize("value", ["1e308", "-1.5e101", "1" + "0" * 120])
def test_values_that_would_overflow_the_statistics_are_refused(tmp_path, value):
    """A finite value near 1e308 made system means infinite and the system-level correlation
    undefined: values beyond 1e100 in magnitude are refused with their row; nothing is written."""
    path = tmp_path / "huge.csv"
    path.write_text(f"item,input,system,measure,value\ni1,in1,s1,m,2\ni2,in1,s2,m,{value}\n")
    con = open_store()
    with pytest.raises(InputError, match=r"row 2, column 'value'.*exceeds 1e\+100"):
        ingest(con, path, format="tidy")
    assert con.execute("SELECT count(*) FROM scores").fetchall() == [(0,)]
