"""SummEval's annotation files (JSON lines) and tidy files that mark their human measures.

The SummEval files here are small files of the documented shape (Fabbri et al. 2021; repository
Yale-LILY/SummEval: ``id``, ``model_id``, ``decoded``, 3 ``expert_annotations`` and 5
``turker_annotations`` of four criteria, 11 ``references``, ``text`` in the paired form,
``metric_scores_<k>`` in a scored file), written into tmp_path; expected values are computed
from the same records in plain Python and with scipy.
"""

from __future__ import annotations

import csv
import io
import json
import random
import statistics
from pathlib import Path

import duckdb
import pytest
import scipy.stats

from hanna_stats.cli import main
from hanna_stats.store import InputError, ingest, open_store, open_study

CRITERIA = ("coherence", "consistency", "fluency", "relevance")
DOCS = [f"dm-test-{k:040x}" for k in (0x8764FB, 0x1A2B3C, 0xC0FFEE)]
MODELS = ["M11", "M2", "M0"]  # file order; the store orders them M0, M2, M11
TABLES = ("systems", "inputs", "items", "measures", "raters", "scores", "ratings", "ingests")


def records(
    *,
    seed: int = 0,
    paired: bool = True,
    scored: bool = False,
    docs: tuple[str, ...] = tuple(DOCS),
    models: tuple[str, ...] = tuple(MODELS),
) -> list[dict]:
    """``docs`` x ``models`` (default 3 x 3), in SummEval's shape, with seeded ratings."""
    rng = random.Random(seed)
    out = []
    for d, doc in enumerate(docs):
        for model in models:
            record = {
                "id": doc,
                "model_id": model,
                "decoded": f"summary of document {d} by {model}",
                "expert_annotations": [{c: rng.randint(1, 5) for c in CRITERIA} for _ in range(3)],
                "turker_annotations": [{c: rng.randint(1, 5) for c in CRITERIA} for _ in range(5)],
                "references": [f"reference {k} of document {d}" for k in range(11)],
                "filepath": f"cnndm/dailymail/stories/{doc[8:]}.story",
            }
            if paired:
                record["text"] = f"The article of document {d}."
            if scored:
                record["metric_scores_11"] = {
                    "rouge": {"rouge_1_f_score": rng.random(), "rouge_2_f_score": rng.random()},
                    "supert": [rng.random()],
                    "bleu": rng.uniform(0, 40),
                }
            out.append(record)
    return out


def write_jsonl(path: Path, lines: list) -> Path:
    """One JSON value per line (a str is written as it is: a deliberately broken line)."""
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def counts(con) -> dict[str, int]:
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES}


def digest(path: Path) -> dict[str, list]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {t: sorted(map(repr, con.execute(f"SELECT * FROM {t}").fetchall())) for t in TABLES}
    finally:
        con.close()


def cli(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_mapping_and_values(tmp_path):
    lines = records(scored=True)
    path = write_jsonl(tmp_path / "model_annotations.aligned.paired.scored.jsonl", lines)
    con = open_store()
    (summary,) = ingest(con, path, format="summeval")
    assert summary.format == "summeval" and not summary.skipped
    n = len(lines)
    assert summary.n_values == n * (3 + 5) * 4 + n * 4
    assert counts(con) == {
        "systems": 3,
        "inputs": 3,
        "items": 9,
        "measures": 8 + 4,
        "raters": 8,
        "scores": n * 4,
        "ratings": n * 8 * 4,
        "ingests": 1,
    }
    systems = con.execute("SELECT name, is_human FROM systems ORDER BY position").fetchall()
    assert systems == [("M0", False), ("M2", False), ("M11", False)]
    assert con.execute("SELECT name FROM study").fetchall() == [("SummEval",)]
    catalogue = con.execute(
        "SELECT name, kind, scale, scale_min, scale_max FROM measures ORDER BY position"
    ).fetchall()
    names = [c.capitalize() for c in CRITERIA]
    likert = ("human", "likert", 1.0, 5.0)
    assert catalogue[:8] == [(m, *likert) for m in names + [f"{c} (turker)" for c in names]]
    assert [row[:2] for row in catalogue[8:]] == [
        ("rouge_1_f_score (metric_scores_11)", "metric"),
        ("rouge_2_f_score (metric_scores_11)", "metric"),
        ("supert (metric_scores_11)", "metric"),
        ("bleu (metric_scores_11)", "metric"),
    ]
    for record in lines:
        item = f"{record['id']}/{record['model_id']}"
        text, reference, article, system = con.execute(
            "SELECT it.text, it.reference, inp.text, sy.name FROM items it "
            "JOIN inputs inp USING (input_id) JOIN systems sy USING (system_id) WHERE it.name = ?",
            [item],
        ).fetchall()[0]
        assert (text, reference, article, system) == (
            record["decoded"],
            record["references"][0],
            record["text"],
            record["model_id"],
        )
        stored = dict(
            con.execute("SELECT measure, value FROM item_scores WHERE item = ?", [item]).fetchall()
        )
        for criterion, name in zip(CRITERIA, names, strict=True):
            experts = statistics.fmean(a[criterion] for a in record["expert_annotations"])
            turkers = statistics.fmean(a[criterion] for a in record["turker_annotations"])
            assert stored[name] == pytest.approx(experts, abs=1e-12)
            assert stored[f"{name} (turker)"] == pytest.approx(turkers, abs=1e-12)
        metrics = record["metric_scores_11"]
        assert stored["rouge_2_f_score (metric_scores_11)"] == metrics["rouge"]["rouge_2_f_score"]
        assert stored["supert (metric_scores_11)"] == metrics["supert"][0]
        # Expert k's rating is kept as rater 'SummEval expert k' (a slot, not an identity).
        slots = con.execute(
            "SELECT rater, score, rater_kind FROM rating_records "
            "WHERE item = ? AND measure = 'Fluency' ORDER BY rater",
            [item],
        ).fetchall()
        assert slots == [
            (f"SummEval expert {k}", a["fluency"], "slot")
            for k, a in enumerate(record["expert_annotations"], start=1)
        ]


def test_unpaired_file_any_number_of_ratings(tmp_path):
    lines = records(paired=False)
    for record in lines:
        record["expert_annotations"] = record["expert_annotations"][:2]
        del record["turker_annotations"], record["references"]
    lines[0]["expert_annotations"] = lines[0]["expert_annotations"][:1]
    con = open_store()
    ingest(con, write_jsonl(tmp_path / "model_annotations.aligned.jsonl", lines), format="summeval")
    c = counts(con)
    assert (c["measures"], c["raters"], c["ratings"]) == (4, 2, (1 + 2 * 8) * 4)
    assert con.execute("SELECT count(*) FROM inputs WHERE text IS NULL").fetchall() == [(3,)]
    assert con.execute("SELECT count(*) FROM items WHERE reference IS NULL").fetchall() == [(9,)]
    first = f"{DOCS[0]}/{MODELS[0]}"
    assert con.execute(
        "SELECT value, n_ratings FROM item_scores WHERE item = ? AND measure = 'Relevance'",
        [first],
    ).fetchall() == [(float(lines[0]["expert_annotations"][0]["relevance"]), 1)]


def test_open_study_reads_the_file(tmp_path):
    lines = records()
    study = open_study(write_jsonl(tmp_path / "model_annotations.aligned.paired.jsonl", lines))
    assert study.criteria[:4] == ("Coherence", "Consistency", "Fluency", "Relevance")
    assert study.item_word == "summary"
    cube = study.cube(kinds=("human",))
    assert cube.inputs == DOCS and cube.systems == ["M0", "M2", "M11"]
    at = cube.measures.index("Consistency (turker)")
    for record in lines:
        expected = statistics.fmean(a["consistency"] for a in record["turker_annotations"])
        i, j = DOCS.index(record["id"]), cube.systems.index(record["model_id"])
        assert cube.values[at, i, j] == pytest.approx(expected, abs=1e-12)


def test_reingest_does_not_duplicate(tmp_path):
    path = write_jsonl(tmp_path / "model_annotations.aligned.jsonl", records())
    db = tmp_path / "s.duckdb"
    con = open_store(db)
    ingest(con, path, format="summeval")
    before = counts(con)
    assert ingest(con, path, format="summeval")[0].skipped
    # The same lines in another file (new bytes): upserted onto the same rows, nothing replaced.
    again = write_jsonl(tmp_path / "copy.jsonl", [*records(), ""])
    (summary,) = ingest(con, again, format="summeval")
    assert not summary.skipped and summary.replaced == 0 and summary.added["values"] == 0
    after = counts(con)
    assert after == {**before, "ingests": 2}


def test_edited_summary_text_needs_replace_and_is_counted(tmp_path):
    """An edited `decoded` text used to replace the stored summary silently ("replaced: 0
    values"): it is refused unless --replace, which counts the texts it replaced."""
    path = write_jsonl(tmp_path / "model_annotations.aligned.jsonl", records())
    con = open_store()
    ingest(con, path, format="summeval")
    edited = records()
    edited[4]["decoded"] = "an edited summary"
    again = write_jsonl(tmp_path / "edited.jsonl", edited)
    with pytest.raises(InputError, match=r"would replace 0 reference text\(s\) and 1 output text"):
        ingest(con, again, format="summeval")
    assert "an edited summary" not in str(con.execute("SELECT text FROM items").fetchall())
    (summary,) = ingest(con, again, replace=True, format="summeval")
    assert summary.replaced_texts == {"reference texts": 0, "output texts": 1}
    assert "1 output texts" in str(summary)
    assert ("an edited summary",) in con.execute("SELECT text FROM items").fetchall()


def test_cli_detects_the_format_and_correlate_runs(tmp_path, capsys):
    lines = records(scored=True)
    path = write_jsonl(tmp_path / "model_annotations.aligned.jsonl", lines)
    db = tmp_path / "summeval.duckdb"
    code, out, err = cli(["ingest", "--db", db, path], capsys)
    assert code == 0, err
    assert "summeval" in out and "9 items" in out
    code, out, err = cli(
        ["correlate", "--db", db, "--level", "system", "--method", "kendall", "--format", "csv"],
        capsys,
    )
    assert code == 0, err
    rows = {(r["measure"], r["against"]): r for r in csv.DictReader(io.StringIO(out))}

    def system_means(value) -> list[float]:
        return [statistics.fmean(value(r) for r in lines if r["model_id"] == m) for m in MODELS]

    bleu = system_means(lambda r: r["metric_scores_11"]["bleu"])
    for criterion in CRITERIA:
        human = system_means(
            lambda r, c=criterion: statistics.fmean(a[c] for a in r["expert_annotations"])
        )
        expected = scipy.stats.kendalltau(bleu, human).statistic
        got = float(rows["bleu (metric_scores_11)", criterion.capitalize()]["statistic"])
        assert got == pytest.approx(expected, abs=1e-12)


def test_format_option(tmp_path, capsys):
    path = write_jsonl(tmp_path / "renamed.txt", records())
    code, out, err = cli(
        ["ingest", "--db", tmp_path / "s.duckdb", "--format", "summeval", path], capsys
    )
    assert code == 0, err
    assert out.startswith("renamed.txt: summeval, ")
    # without --format, the suffix .jsonl in any case is SummEval's
    upper = write_jsonl(tmp_path / "model_annotations.aligned.JSONL", records())
    code, out, err = cli(["ingest", "--db", tmp_path / "u.duckdb", upper], capsys)
    assert code == 0, err
    assert out.startswith("model_annotations.aligned.JSONL: summeval, ")
    assert open_study(upper).item_word == "summary"


def test_utf8_byte_order_mark_and_bad_byte(tmp_path):
    path = write_jsonl(tmp_path / "a.jsonl", records())
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())  # a BOM is dropped
    assert ingest(open_store(), path, format="summeval")[0].n_values > 0
    data = path.read_bytes()
    lines = data.split(b"\n")
    lines[3] = lines[3].replace(b"summary of", b"summary \xff of", 1)
    path.write_bytes(b"\n".join(lines))
    offset = len(b"\n".join(lines[:3])) + 1 + lines[3].index(b"\xff")
    con = open_store()
    with pytest.raises(InputError) as info:
        ingest(con, path, format="summeval")
    assert str(info.value) == f"a.jsonl, row 4: not valid UTF-8 (byte 0xff at offset {offset})"
    assert counts(con) == dict.fromkeys(TABLES, 0)


def _bad(lines: list, index: int, edit) -> list:
    lines = [dict(r) for r in lines]
    if callable(edit):
        edit(lines[index])
    else:
        lines[index] = edit
    return lines


def _set_rating(panel: str, k: int, criterion: str, value):
    def edit(record):
        record[panel] = [dict(a) for a in record[panel]]
        record[panel][k][criterion] = value

    return edit


BAD = [
    ("bad-json", 4, '{"id": "dm-test-x", "model_id": ', ("row 5", "invalid JSON")),
    (
        "missing-experts",
        2,
        lambda r: r.pop("expert_annotations"),
        ("row 3", "column 'expert_annotations'", "missing field"),
    ),
    (
        "score-6",
        7,
        _set_rating("expert_annotations", 1, "coherence", 6),
        ("row 8", "'expert_annotations[1].coherence'", "from 1 to 5", "got 6"),
    ),
    (
        "turker-score-0",
        0,
        _set_rating("turker_annotations", 4, "fluency", 0),
        ("row 1", "'turker_annotations[4].fluency'", "got 0"),
    ),
    (
        "score-text",
        3,
        _set_rating("expert_annotations", 0, "relevance", "4"),
        ("row 4", "'expert_annotations[0].relevance'", 'got "4"'),
    ),
    (
        "score-bool",
        3,
        _set_rating("expert_annotations", 0, "relevance", True),
        ("row 4", "'expert_annotations[0].relevance'", "got true"),
    ),
    (
        "score-half",
        3,
        _set_rating("expert_annotations", 2, "consistency", 2.5),
        ("row 4", "'expert_annotations[2].consistency'", "whole number"),
    ),
    (
        "criterion-missing",
        1,
        lambda r: r["expert_annotations"][0].pop("fluency"),
        ("row 2", "'expert_annotations[0].fluency'", "missing"),
    ),
    (
        "no-experts",
        1,
        lambda r: r.update(expert_annotations=[]),
        ("row 2", "'expert_annotations'", "non-empty list"),
    ),
    ("not-an-object", 6, "[1, 2]", ("row 7", "JSON object")),
    ("id-number", 6, lambda r: r.update(id=17), ("row 7", "column 'id'", "string")),
    (
        "duplicate-line",
        8,
        lambda r: r.update(id=DOCS[0], model_id=MODELS[0], text="The article of document 0."),
        ("row 9", "duplicate summary", "also row 1"),
    ),
    (
        "text-differs",
        1,
        lambda r: r.update(text="Another article."),
        ("row 2", "column 'text'", "another text than on row 1"),
    ),
    (
        "metric-text",
        5,
        lambda r: r.update(metric_scores_11={"bleu": "high"}),
        ("row 6", "'metric_scores_11.bleu'", "number"),
    ),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_input_is_one_line_and_writes_nothing(case, tmp_path, capsys):
    _, index, edit, words = case
    db = tmp_path / "s.duckdb"
    good = write_jsonl(tmp_path / "model_annotations.aligned.jsonl", records(seed=1))
    assert cli(["ingest", "--db", db, good], capsys)[0] == 0
    before = digest(db)
    name = "model_annotations.aligned.paired.jsonl"
    bad = write_jsonl(tmp_path / name, _bad(records(), index, edit))
    code, out, err = cli(["ingest", "--db", db, "--replace", bad], capsys)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith(f"error: {name}, "), err
    missing = [w for w in words if w not in err]
    assert not missing, f"{missing} not in {err!r}"
    assert digest(db) == before


def test_error_attributes(tmp_path):
    path = write_jsonl(
        tmp_path / "a.jsonl", _bad(records(), 7, _set_rating("expert_annotations", 1, "fluency", 9))
    )
    con = open_store()
    with pytest.raises(InputError) as info:
        ingest(con, path, format="summeval")
    assert (info.value.file, info.value.row, info.value.column) == (
        "a.jsonl",
        8,
        "expert_annotations[1].fluency",
    )
    assert counts(con) == dict.fromkeys(TABLES, 0)


# --------------------------------------------------------------------------- tidy --human


def tidy_summeval(path: Path, lines: list[dict], *, kind: str | None = None) -> Path:
    """SummEval as a tidy CSV: the expert mean of Coherence per item (no rater) and BLEU."""
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["item", "input", "system", "measure", "value", "kind"])
        for r in lines:
            item = f"{r['id']}/{r['model_id']}"
            coherence = statistics.fmean(a["coherence"] for a in r["expert_annotations"])
            writer.writerow([item, r["id"], r["model_id"], "Coherence", coherence, kind or ""])
            bleu = r["metric_scores_11"]["bleu"]
            writer.writerow([item, r["id"], r["model_id"], "BLEU", bleu, ""])
    return path


def test_tidy_human_option(tmp_path, capsys):
    lines = records(scored=True)
    path = tidy_summeval(tmp_path / "summeval_tidy.csv", lines)
    db = tmp_path / "t.duckdb"
    code, out, err = cli(["ingest", "--db", db, path, "--human", "Coherence"], capsys)
    assert code == 0, err
    con = duckdb.connect(str(db), read_only=True)
    kinds = dict(con.execute("SELECT name, kind FROM measures").fetchall())
    con.close()
    assert kinds == {"Coherence": "human", "BLEU": "metric"}
    code, out, err = cli(["correlate", "--db", db, "--level", "system", "--format", "csv"], capsys)
    assert code == 0, err
    (row,) = list(csv.DictReader(io.StringIO(out)))
    assert (row["measure"], row["against"]) == ("BLEU", "Coherence")


def test_tidy_human_python(tmp_path):
    path = tidy_summeval(tmp_path / "t.csv", records(scored=True))
    con = open_store()
    ingest(con, path, human_measures=["Coherence"], format="tidy")
    assert con.execute("SELECT kind FROM measures WHERE name = 'Coherence'").fetchall() == [
        ("human",)
    ]
    with pytest.raises(ValueError, match="human_measures must be a sequence"):
        ingest(
            con,
            tidy_summeval(tmp_path / "u.csv", records(seed=3, scored=True)),
            human_measures="BLEU",
            format="tidy",
        )


@pytest.mark.parametrize(
    "human, kind, words",
    [
        ("Coherence,Nope", None, ("t.csv", "column 'measure'", "'Nope'", "not in the file")),
        ("Coherence", "metric", ("t.csv", "row 1", "column 'kind'", "'Coherence'", "'metric'")),
    ],
)
def test_tidy_human_errors(human, kind, words, tmp_path, capsys):
    path = tidy_summeval(tmp_path / "t.csv", records(scored=True), kind=kind)
    db = tmp_path / "t.duckdb"
    code, out, err = cli(["ingest", "--db", db, path, "--human", human], capsys)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    missing = [w for w in words if w not in err]
    assert not missing, f"{missing} not in {err!r}"
    assert not db.exists()  # a refused ingest leaves no new store file behind


def test_no_criteria_error_says_how_to_mark_them(tmp_path, capsys):
    path = tidy_summeval(tmp_path / "t.csv", records(scored=True))
    db = tmp_path / "t.duckdb"
    assert cli(["ingest", "--db", db, path], capsys)[0] == 0  # Coherence taken as a metric
    code, _, err = cli(["correlate", "--db", db, "--level", "system"], capsys)
    assert code == 2
    assert "`kind` column" in err and "--human" in err and "new store" in err
    # the file is in the store: ingesting it again with --human is skipped and says so
    code, out, err = cli(["ingest", "--db", db, path, "--human", "Coherence"], capsys)
    assert code == 0, err
    assert out.strip() == (
        "t.csv: already ingested (tidy), nothing written; not applied: human_measures (--human) "
        "(ingest the file into a new store to apply them)"
    )
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT kind FROM measures WHERE name = 'Coherence'").fetchall() == [
        ("metric",)
    ]
    con.close()
