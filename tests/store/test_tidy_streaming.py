"""Tidy files staged in SQL (issue 22): the paths of the checks that only large or unusual files
take, against the refusals and rows of a small file; the store's memory limit; stores without
and with the old primary keys of scores and ratings."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from hanna_stats.store import InputError, ingest, open_store, tidy

ROWS = [
    ("a", "p1", "A", "BLEU", 0.1, None),
    ("a", "p1", "A", "Fluency", 3, "r1"),
    ("b", "p1", "B", "BLEU", 0.2, None),
    ("a", "p1", "A", "Fluency", 4, "r2"),
    ("b", "p1", "B", "Fluency", 2, "r1"),
]
COLUMNS = ["item", "input", "system", "measure", "value", "rater"]


def write(path, rows, columns=COLUMNS):
    frame = pl.DataFrame(rows, schema=columns, orient="row", strict=False)
    if path.suffix == ".csv":
        frame.write_csv(path)
    else:
        frame.write_parquet(path)
    return path


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_duplicate_rows_are_found_however_checked(tmp_path, monkeypatch, duplicate_check, suffix):
    monkeypatch.setattr(tidy, "CSV_PART_ROWS", 2)  # a CSV file in several parts
    # Without a rater column in the CSV file, with one (all empty) in the Parquet file.
    metrics = [r for r in ROWS if r[5] is None] + [("b", "p1", "B", "BLEU", 0.3, None)]
    columns = COLUMNS[:5] if suffix == ".csv" else COLUMNS
    path = write(tmp_path / f"m{suffix}", [r[: len(columns)] for r in metrics], columns)
    with pytest.raises(InputError, match=r"duplicate row \(item='b', measure='BLEU', rater=None; "
                       r"also row 2\)") as err:  # fmt: skip
        ingest(open_store(), path, format="tidy")
    assert err.value.row == 3
    # Rater rows; a name that differs only by surrounding white space is the same name.
    rated = write(tmp_path / f"r{suffix}", [*ROWS, (" a ", "p1", "A", "Fluency", 5, "r2")])
    with pytest.raises(InputError, match=r"rater='r2'; also row 4\)") as err:
        ingest(open_store(), rated, format="tidy")
    assert err.value.row == 6
    con = open_store()
    (summary,) = ingest(con, write(tmp_path / f"ok{suffix}", ROWS), format="tidy")
    assert summary.n_values == 5 and summary.added["values"] == 5
    counts = con.execute("SELECT (SELECT count(*) FROM scores), (SELECT count(*) FROM ratings)")
    assert counts.fetchall() == [(2, 3)]


def test_a_file_store_keeps_its_memory_limit(tmp_path):
    con = open_store(tmp_path / "s.duckdb")
    limit = con.execute("SELECT current_setting('memory_limit')").fetchall()
    ingest(con, write(tmp_path / "a.parquet", ROWS), format="tidy")
    with pytest.raises(InputError):
        ingest(con, write(tmp_path / "b.parquet", [*ROWS, ROWS[0]]), format="tidy")
    assert con.execute("SELECT current_setting('memory_limit')").fetchall() == limit
    names = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert not {n for n in names if n.startswith("_hs_")}


def test_values_are_updated_once_without_a_primary_key(tmp_path):
    con = open_store(tmp_path / "s.duckdb")
    ingest(con, write(tmp_path / "a.parquet", ROWS), format="tidy", scales={"Fluency": (1, 7)})
    changed = [(*r[:4], r[4] + 1, r[5]) if r[3] == "Fluency" else r for r in ROWS]
    (summary,) = ingest(con, write(tmp_path / "b.parquet", changed), format="tidy", replace=True)
    assert summary.replaced == 3 and summary.added["values"] == 0
    assert con.execute("SELECT count(*), sum(score) FROM ratings").fetchall() == [(3, 12.0)]
    assert con.execute("SELECT count(*) FROM scores").fetchall() == [(2,)]


def test_a_store_with_the_old_primary_keys_loses_them_when_migrated(tmp_path):
    """A store older than 0.1.0 kept scores under a primary key: its migration rebuilds the
    table without it, and values are then updated once, as in any store."""
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE scores (item_id INTEGER NOT NULL, measure_id INTEGER NOT NULL, "
        "value DOUBLE, PRIMARY KEY (item_id, measure_id))"
    )
    con.close()
    con = open_store(path)
    keys = "SELECT count(*) FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'"
    assert con.execute(f"{keys} AND table_name IN ('scores', 'ratings')").fetchall() == [(0,)]
    ingest(con, write(tmp_path / "a.parquet", ROWS), format="tidy")
    more = [("c", "p1", "C", "BLEU", 0.5, None), ("a", "p1", "A", "BLEU", 0.1, None)]
    (summary,) = ingest(con, write(tmp_path / "b.parquet", more), format="tidy")
    assert summary.added["values"] == 1
    assert con.execute("SELECT count(*) FROM scores").fetchall() == [(3,)]
