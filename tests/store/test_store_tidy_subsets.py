"""Subsets in tidy files: an optional ``subset`` column (``inputs.subset``) puts each input in a
sub-study (a language pair, a dataset), as a WMT store's language pairs, and the analyses run per
subset with the results of a store holding that subset alone. An input is in one subset: a file
that gives one input two subsets, or an input of the store another subset, is refused.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_hardening import digest

from hanna_stats.analyses import analysis_calls, correlate
from hanna_stats.cli import main
from hanna_stats.store import InputError, ingest, load_study, open_store, tidy

#: subset -> (inputs, systems): the subsets differ in size and systems (a system of one subset
#: only, one missing from a subset).
SUBSETS = {
    "en-de": (("a1", "a2", "a3", "a4"), ("sysA", "sysB", "sysC", "sysD")),
    "zh-en": (("b1", "b2", "b3", "b4", "b5"), ("sysA", "sysB", "sysC", "sysE")),
    "he-en": (("c1", "c2", "c3"), ("sysA", "sysC", "sysD")),
}
LABELS = tuple(SUBSETS)
#: measure -> kind: one human measure, two metrics.
MEASURES = {"mqm": "human", "BLEU": "metric", "COMET": "metric"}
COLUMNS = ["item", "input", "system", "measure", "value", "kind", "subset"]
TABLES = ("systems", "inputs", "items", "measures", "scores", "ratings", "ingests")


def subset_rows(labels=LABELS, seed=0) -> list[tuple]:
    """The rows of the subsets ``labels``, subset after subset: each item's human ``mqm`` (kind
    human) and its ``BLEU`` and ``COMET`` (kind metric), with ties."""
    rng = np.random.default_rng(seed)
    rows = []
    for label in labels:
        inputs, systems = SUBSETS[label]
        for inp in inputs:
            for system in systems:
                for measure, kind in MEASURES.items():
                    value = float(rng.integers(1, 6)) if kind == "human" else rng.random()
                    value = round(value, 2)
                    rows.append((f"{inp}-{system}", inp, system, measure, value, kind, label))
    return rows


def write(path, rows, columns=COLUMNS):
    """``rows`` as a tidy CSV or Parquet file (by ``path``'s suffix); ``columns``: the first
    ones of :data:`COLUMNS`."""
    frame = pl.DataFrame(
        [r[: len(columns)] for r in rows], schema=columns, orient="row", strict=False
    )
    if path.suffix == ".csv":
        frame.write_csv(path)
    else:
        frame.write_parquet(path)
    return path


def counts(con) -> dict[str, int]:
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES}


def stored_subsets(con) -> list[tuple]:
    return con.execute("SELECT name, subset FROM inputs ORDER BY input_id").fetchall()


def study_of(path):
    con = open_store()
    ingest(con, path, format="tidy")
    study = load_study(con)
    con.close()
    return study


@pytest.fixture(scope="module", params=[".csv", ".parquet"])
def stores(request, tmp_path_factory):
    """The study of one file holding the three subsets, and the studies of three files holding
    one subset each (with its subset column), all of ``request.param``'s format."""
    folder = tmp_path_factory.mktemp("tidy-subsets")
    suffix = request.param
    together = study_of(write(folder / f"all{suffix}", subset_rows()))
    alone = {}
    for label in LABELS:
        rows = [r for r in subset_rows() if r[6] == label]
        alone[label] = study_of(write(folder / f"{label}{suffix}", rows))
    return together, alone


def _sorted(frame, keys=("measure", "against")):
    return pl.DataFrame(frame).sort(list(keys))


def test_subsets_are_stored(tmp_path):
    con = open_store()
    path = write(tmp_path / "all.csv", subset_rows())
    (summary,) = ingest(con, path, format="tidy")
    assert summary.added["inputs"] == 12
    expected = [(inp, label) for label in LABELS for inp in SUBSETS[label][0]]
    assert stored_subsets(con) == expected
    kinds = dict(con.execute("SELECT name, kind FROM measures").fetchall())
    assert kinds == MEASURES
    study = load_study(con)
    assert study.subsets == LABELS
    assert "  subsets: en-de, zh-en, he-en" in repr(study).splitlines()
    # Another file of the same inputs without the column, or with it empty: the subsets are kept.
    more = [(*r[:3], "chrF", r[4], "metric", None) for r in subset_rows() if r[3] == "BLEU"]
    ingest(con, write(tmp_path / "chrf.csv", more), format="tidy")
    ingest(con, write(tmp_path / "ter.parquet", more, COLUMNS[:6]), format="tidy")
    assert stored_subsets(con) == expected


def test_the_same_store_from_csv_and_parquet(stores, tmp_path):
    together, _ = stores
    study = study_of(write(tmp_path / "all.parquet", subset_rows()))
    assert study.subsets == together.subsets == LABELS
    assert study.inputs == together.inputs and study.systems == together.systems
    np.testing.assert_array_equal(study.values, together.values)


def test_subsets_from_one_file_each(stores, tmp_path):
    """A subset per file: the second one shares no input with the store (another study unless
    ``extend``); one by one they make the store of the one file."""
    together, _ = stores
    con = open_store()
    files = {}
    for label in LABELS:
        rows = [r for r in subset_rows() if r[6] == label]
        files[label] = write(tmp_path / f"{label}.csv", rows)
    ingest(con, files["en-de"], format="tidy", study="all")
    with pytest.raises(InputError, match=r"shares none of its 5 inputs .*--extend"):
        ingest(con, files["zh-en"], format="tidy")
    for label in LABELS[1:]:
        ingest(con, files[label], format="tidy", extend=True)
    study = load_study(con)
    assert study.subsets == LABELS
    for attribute in ("inputs", "systems", "measures", "kinds"):
        assert getattr(study, attribute) == getattr(together, attribute), attribute
    np.testing.assert_array_equal(study.values, together.values)


def test_each_subset_is_the_subset_alone(stores):
    together, alone = stores
    for label in LABELS:
        one, single = together.subset(subset=label), alone[label]
        assert one.subsets == single.subsets == (label,)
        for attribute in ("inputs", "systems", "measures", "kinds"):
            assert getattr(one, attribute) == getattr(single, attribute), attribute
        np.testing.assert_array_equal(one.values, single.values)
    assert together.subset(subset="he-en").systems == ("sysA", "sysC", "sysD")


@pytest.mark.parametrize(
    "options",
    [
        {"level": "item", "method": "pearson"},
        {"level": "item", "method": "kendall"},
        {"level": "item", "method": "kendall", "variant": "c", "group_by": "system"},
        {"level": "system", "method": "pearson"},
        {"level": "system", "method": "spearman", "against": "all"},
        {"level": "global", "method": "kendall"},
    ],
)
def test_correlate_per_subset_equals_the_subset_alone(stores, options):
    together, alone = stores
    with analysis_calls() as calls:
        stacked = correlate(together, **options)
    assert stacked.columns[0] == "subset" and [c.name for c in calls] == ["correlate"]
    assert stacked["subset"].unique(maintain_order=True).to_list() == list(LABELS)
    for label in LABELS:
        expected = correlate(alone[label], **options)
        assert expected.height
        mine = stacked.filter(pl.col("subset") == label).drop("subset")
        assert_frame_equal(_sorted(mine), _sorted(expected))
        one = correlate(together.subset(subset=label), **options)
        assert_frame_equal(_sorted(one), _sorted(expected))


def test_cli_each_subset(tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    path = write(tmp_path / "all.csv", subset_rows())
    assert main(["ingest", "--db", str(db), str(path)]) == 0
    capsys.readouterr()
    run = ["correlate", "--db", str(db), "--level", "system", "--format", "csv"]
    assert main(run) == 0
    out = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(out.out)))
    assert out.err == "" and next(iter(rows[0])) == "subset"
    assert list(dict.fromkeys(r["subset"] for r in rows)) == list(LABELS)
    assert {(r["measure"], r["against"]) for r in rows} == {("BLEU", "mqm"), ("COMET", "mqm")}
    assert main([*run, "--subset", "zh-en"]) == 0
    one = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert one == [
        {k: v for k, v in r.items() if k != "subset"} for r in rows if r["subset"] == "zh-en"
    ]
    # the table output names every subset too
    assert main(["correlate", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert all(label in out for label in LABELS)


def _refused(tmp_path, capsys, name, rows, words, columns=COLUMNS):
    """Ingest ``rows`` (file ``name``) with the CLI into a store holding the three subsets:
    refused with one line naming ``words``, the store unchanged."""
    db = tmp_path / "s.duckdb"
    if not db.exists():
        first = write(tmp_path / "all.csv", subset_rows())
        assert main(["ingest", "--db", str(db), str(first)]) == 0
    capsys.readouterr()
    before = digest(db)
    path = write(tmp_path / name, rows, columns)
    assert main(["ingest", "--db", str(db), str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and err.startswith("error: "), err
    missing = [w for w in words if w not in err]
    assert not missing, f"{missing} not in {err!r}"
    assert digest(db) == before
    return err.strip()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_an_input_with_two_subsets_is_refused(tmp_path, capsys, suffix):
    rows = [(*r[:6], f"new-{r[6]}") for r in subset_rows()]  # new inputs' names below
    rows = [(f"n{r[0]}", f"n{r[1]}", *r[2:]) for r in rows]
    # an item of input na2 whose COMET row gives another subset (row 18: na2-sysB's third row)
    moved = [(*r[:6], "new-zh-en") if i == 17 else r for i, r in enumerate(rows)]
    err = _refused(tmp_path, capsys, f"two{suffix}", moved, (f"two{suffix}", "row 18"))
    assert err == (
        f"error: two{suffix}, row 18, column 'subset': input 'na2' has subset 'new-zh-en' here "
        "but 'new-en-de' in row 13 (an input belongs to one subset)"
    )
    # another item of the input (the first rows of na1-sysD), after an item without a subset
    other = [
        (*r[:6], None if i in (0, 1, 2) else "x" if i in (9, 10) else r[6])
        for i, r in enumerate(rows)
    ]
    _refused(
        tmp_path,
        capsys,
        f"other{suffix}",
        other,
        ("row 10, column 'subset'", "input 'na1' has subset 'x' here but 'new-en-de' in row 4"),
    )


def test_rows_without_a_subset_and_white_space_do_not_clash(tmp_path):
    # The first item of a1 gives its subset in one row of three, padded with white space; an
    # item of a2 gives none: a1 and a2 are in en-de.
    rows = subset_rows(("en-de",))
    rows = [
        (*r[:6], " en-de\t" if i == 1 else r[6] if i > 2 and r[1] != "a2" else None)
        for i, r in enumerate(rows)
    ]
    for suffix in (".csv", ".parquet"):
        con = open_store()
        ingest(con, write(tmp_path / f"gaps{suffix}", rows), format="tidy")
        assert dict(stored_subsets(con)) == {"a1": "en-de", "a2": None, "a3": "en-de",
                                             "a4": "en-de"}  # fmt: skip
        assert counts(con)["scores"] == len(rows)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_an_item_in_two_groups_is_checked_as_before(tmp_path, monkeypatch, duplicate_check, suffix):
    """An item whose rows give its subset and leave it empty is grouped twice: its rows are
    still checked for duplicates and written once."""
    monkeypatch.setattr(tidy, "CSV_PART_ROWS", 5)
    rows = subset_rows(("en-de",))
    rows = [(*r[:6], None) if i % 3 == 1 else r for i, r in enumerate(rows)]
    con = open_store()
    (summary,) = ingest(con, write(tmp_path / f"ok{suffix}", rows), format="tidy")
    assert summary.added["items"] == 16 and summary.added["values"] == len(rows)
    assert {s for _, s in stored_subsets(con)} == {"en-de"}
    assert load_study(con).subsets == ("en-de",)
    # a repeated (item, measure) in a row without the subset
    repeated = [*rows, (*rows[0][:4], 0.5, "human", None)]
    with pytest.raises(InputError, match=r"duplicate row \(item='a1-sysA', measure='mqm', "
                       r"rater=None; also row 1\)") as err:  # fmt: skip
        ingest(open_store(), write(tmp_path / f"dup{suffix}", repeated), format="tidy")
    assert err.value.row == len(rows) + 1
    # an item with two inputs, one row giving the subset and the other not
    moved = [*rows, ("a1-sysA", "a2", "sysA", "chrF", 0.5, "metric", None)]
    with pytest.raises(InputError, match=r"duplicate item: item='a1-sysA' has input='a2'"):
        ingest(open_store(), write(tmp_path / f"moved{suffix}", moved), format="tidy")


def test_an_input_moved_to_another_subset_is_refused(tmp_path, capsys):
    # b2 (zh-en in the store) in en-de: the first row of b2 that gives a subset is named
    rows = [(*r[:3], "chrF", *r[4:]) for r in subset_rows(("zh-en",)) if r[3] == "BLEU"]
    rows = [
        (*r[:6], None if i == 4 else "en-de" if r[1] == "b2" else r[6]) for i, r in enumerate(rows)
    ]
    err = _refused(tmp_path, capsys, "moved.csv", rows, ())
    assert err == (
        "error: moved.csv, row 6, column 'subset': input 'b2' has subset 'en-de' here, but "
        "the store already holds it in subset 'zh-en' (an input belongs to one subset)"
    )
    # refused with --replace too, and through the API
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(tmp_path / "moved.csv"), "--replace"]) == 2
    con = open_store(db)
    before = counts(con), stored_subsets(con)
    with pytest.raises(InputError, match=r"row 6, column 'subset': input 'b2'") as caught:
        ingest(con, tmp_path / "moved.csv", format="tidy", extend=True, replace=True)
    assert caught.value.column == "subset" and caught.value.row == 6
    # the first row of b2 giving a subset, in an item whose first row gives none (row 13)
    rows = [(*r[:3], f"{r[3]} 2", *r[4:]) for r in subset_rows(("zh-en",))]
    rows = [
        (*r[:6], None if i == 12 else "en-de" if r[1] == "b2" else r[6]) for i, r in enumerate(rows)
    ]
    with pytest.raises(InputError, match=r"row 14, column 'subset': input 'b2' has subset 'en-d"):
        ingest(con, write(tmp_path / "moved.parquet", rows), format="tidy")
    assert (counts(con), stored_subsets(con)) == before
    con.close()


def test_a_stored_input_without_a_subset_may_get_one(tmp_path):
    con = open_store()
    rows = subset_rows(("en-de",))
    ingest(con, write(tmp_path / "plain.csv", rows, COLUMNS[:6]), format="tidy")
    assert {s for _, s in stored_subsets(con)} == {None}
    assert load_study(con).subsets == ()
    before = counts(con)
    (summary,) = ingest(con, write(tmp_path / "labelled.parquet", rows), format="tidy")
    assert summary.added["values"] == 0 and summary.replaced == 0
    assert {s for _, s in stored_subsets(con)} == {"en-de"}
    assert counts(con) == {**before, "ingests": before["ingests"] + 1}


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_control_character_in_a_subset_is_refused(tmp_path, capsys, suffix):
    rows = subset_rows()
    rows = [(*r[:6], "en\x1b-de") if i == 4 else r for i, r in enumerate(rows)]
    err = _refused(
        tmp_path,
        capsys,
        f"ctl{suffix}",
        rows,
        (f"ctl{suffix}", "row 5", "column 'subset'", "control character", "U+001B"),
    )
    assert "\x1b" not in err


def test_a_file_without_the_column_has_no_subsets(tmp_path):
    con = open_store()
    rows = subset_rows()
    ingest(con, write(tmp_path / "plain.parquet", rows, COLUMNS[:6]), format="tidy")
    assert {s for _, s in stored_subsets(con)} == {None}
    study = load_study(con)
    assert study.subsets == () and "subsets" not in repr(study)
    assert "subset" not in correlate(study).columns
