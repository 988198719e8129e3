"""The raw HANNA annotation file, on synthetic files of the documented shape made here."""

from __future__ import annotations

import csv
import json

import pytest

from hanna_stats.store import InputError, ingest, open_store

CRITERIA = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]
ABBR = ["RE", "CH", "EM", "SU", "EG", "CX"]
COLUMNS = [
    "Story ID",
    "Prompt",
    "Human",
    "Story",
    "Model",
    *CRITERIA,
    "Worker ID",
    "Assignment ID",
    "Work time in seconds",
    "Name",
]
MODELS = ["Human", "GPT", "CTRL"]
N_PROMPTS = 3
WORKERS = ["W1", "W2", "W3", "W4"]
TABLES = ["systems", "inputs", "items", "measures", "raters", "scores", "ratings", "ingests"]


def counts(con) -> dict[str, int]:
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES}


def rating(sid: int, w: int, c: int) -> int:
    return 1 + (sid * 7 + w * 3 + c) % 5


def annotation_rows() -> list[dict[str, str]]:
    """One row per (story, worker), 3 workers per story; Story ID = 3 * block + prompt."""
    rows = []
    for block, model in enumerate(MODELS):
        for p in range(N_PROMPTS):
            sid = N_PROMPTS * block + p
            for w in range(3):
                row = {
                    "Story ID": str(sid),
                    "Prompt": f"Write about topic {p}.",
                    "Human": f"The reference story for topic {p}.",
                    "Story": f'Story {sid} by {model}, with a comma, and "quotes".',
                    "Model": model,
                    "Worker ID": WORKERS[(sid + w) % 4],
                    "Assignment ID": f"A{sid}-{w}",
                    "Work time in seconds": str(30 + sid + w),
                    "Name": "unused",
                }
                row.update({c: str(rating(sid, w, k)) for k, c in enumerate(CRITERIA)})
                rows.append(row)
    return rows


def write(path, rows, columns=COLUMNS):
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def metric_file(path):
    """A metric-score file for the same 3 models x 3 prompts (averages of the ratings above)."""
    header = ["Model", *CRITERIA, "BLEU Ξ§"]
    rows = []
    for block, model in enumerate(MODELS):
        sids = [N_PROMPTS * block + p for p in range(N_PROMPTS)]
        cells = [json.dumps([sum(rating(s, w, k) for w in range(3)) / 3 for s in sids])
                 for k in range(6)]  # fmt: skip
        rows.append([model, *cells, json.dumps([0.1 * s for s in sids])])
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([header, *rows])
    return path


@pytest.fixture
def good(tmp_path):
    return write(tmp_path / "hanna_stories_annotations.csv", annotation_rows())


def test_ingest_annotations(good):
    con = open_store()
    (summary,) = ingest(con, good, format="hanna-annotations")
    assert summary.n_values == 9 * 3 * 6
    c = counts(con)
    assert (c["systems"], c["inputs"], c["items"], c["measures"]) == (3, 3, 9, 6)
    assert (c["raters"], c["ratings"], c["scores"]) == (4, 162, 0)
    item = con.execute(
        "SELECT it.text, it.reference, inp.text, inp.name, sy.name, sy.is_human, sy.position "
        "FROM items it JOIN inputs inp USING (input_id) JOIN systems sy USING (system_id) "
        "WHERE it.name = '5'"
    ).fetchall()
    assert item == [
        (
            'Story 5 by GPT, with a comma, and "quotes".',
            "The reference story for topic 2.",
            "Write about topic 2.",
            "2",
            "GPT",
            False,
            1,
        )
    ]
    record = con.execute(
        "SELECT score, work_time_s, assignment, rater_kind FROM rating_records "
        "WHERE item = '5' AND rater = 'W2' AND measure = 'Surprise'"
    ).fetchall()
    assert record == [(float(rating(5, 0, 3)), 35.0, "A5-0", "person")]  # W2 is w = 0
    mean = con.execute(
        "SELECT value, n_ratings FROM item_scores WHERE item = '5' AND measure = 'Surprise'"
    ).fetchall()
    assert mean == [(sum(rating(5, w, 3) for w in range(3)) / 3, 3)]
    assert ingest(con, good, format="hanna-annotations")[0].skipped


def test_annotations_join_metric_items(tmp_path, good):
    con = open_store()
    ingest(con, metric_file(tmp_path / "hanna_metric_scores.csv"), format="hanna-metric-scores")
    before = counts(con)
    ingest(con, good, format="hanna-annotations")
    after = counts(con)
    assert (after["items"], after["systems"], after["inputs"]) == (9, 3, 3)
    assert after["measures"] == before["measures"] == 7
    rows = con.execute(
        "SELECT s.value, r.value FROM scores s JOIN item_scores r "
        "ON r.item_id = s.item_id AND r.measure_id = s.measure_id WHERE r.kind = 'human'"
    ).fetchall()
    assert len(rows) == 54
    assert all(a == pytest.approx(b, abs=1e-15) for a, b in rows)


def test_worker_ratings_take_precedence_over_judge_slots(tmp_path, good):
    """Slots and workers describe the same ratings: item_scores must not count both."""
    header = ["Model", *CRITERIA, "BLEU Ξ§", *(f"Human {k} {a}" for k in (1, 2, 3) for a in ABBR)]
    rows = [
        [m, *[json.dumps([2.0] * 3)] * 6, json.dumps([0.5] * 3), *[json.dumps([2] * 3)] * 18]
        for m in MODELS
    ]
    path = tmp_path / "llm.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([header, *rows])
    con = open_store()
    ingest(con, path, format="hanna-llm")
    slot_view = con.execute(
        "SELECT value, n_ratings FROM item_scores WHERE item = '5' AND measure = 'Surprise'"
    ).fetchall()
    assert slot_view == [(2.0, 3)]
    ingest(con, good, format="hanna-annotations")
    assert counts(con)["ratings"] == 162 + 162
    worker_view = con.execute(
        "SELECT value, n_ratings FROM item_scores WHERE item = '5' AND measure = 'Surprise'"
    ).fetchall()
    assert worker_view == [(sum(rating(5, w, 3) for w in range(3)) / 3, 3)]


def test_file_with_bad_rows(tmp_path):
    rows = annotation_rows()
    rows[4]["Relevance"] = "7"
    rows[10]["Work time in seconds"] = "soon"
    with pytest.raises(InputError) as err:
        ingest(open_store(), write(tmp_path / "a.csv", rows), format="hanna-annotations")
    assert str(err.value) == (
        "a.csv, row 5, column 'Relevance': expected a Likert rating, a whole number from 1 to 5, "
        "got 7"
    )


def test_likert_ratings_are_whole_numbers(tmp_path):
    """Regression: a rating of 3.5 on the 1-5 Likert scale was accepted."""
    rows = annotation_rows()
    rows[6]["Empathy"] = "3.5"
    err = bad(tmp_path, rows, "whole number from 1 to 5, got 3.5")
    assert (err.row, err.column) == (7, "Empathy")


def bad(tmp_path, rows, match, columns=COLUMNS):
    con = open_store()
    with pytest.raises(InputError, match=match) as err:
        ingest(con, write(tmp_path / "a.csv", rows, columns), format="hanna-annotations")
    assert counts(con) == dict.fromkeys(TABLES, 0)
    return err.value


def test_non_numeric_values(tmp_path):
    rows = annotation_rows()
    rows[2]["Work time in seconds"] = "soon"
    assert bad(tmp_path, rows, "expected a number, got 'soon'").row == 3
    rows = annotation_rows()
    rows[3]["Story ID"] = "x1"
    assert bad(tmp_path, rows, "non-negative integer").column == "Story ID"


def test_missing_column(tmp_path):
    columns = [c for c in COLUMNS if c != "Worker ID"]
    assert bad(tmp_path, annotation_rows(), "missing column", columns).column == "Worker ID"


def test_duplicate_story_worker(tmp_path):
    rows = annotation_rows()
    rows[1]["Worker ID"] = rows[0]["Worker ID"]
    err = bad(tmp_path, rows, "duplicate rating of Story ID 0")
    assert (err.row, err.column) == (2, "Worker ID")


def test_story_with_two_models(tmp_path):
    rows = annotation_rows()
    rows[2]["Model"] = "CTRL"
    err = bad(tmp_path, rows, "Story ID 0 has another Model than in row 1")
    assert err.row == 3


def test_prompt_index_must_map_to_one_prompt(tmp_path):
    rows = annotation_rows()
    for row in rows:
        if row["Story ID"] == "4":  # 4 mod 3 = 1, but the text of prompt 2
            row["Prompt"] = "Write about topic 2."
    err = bad(tmp_path, rows, "same prompt index 1")
    assert err.column == "Story ID"


def test_duplicate_input_system(tmp_path):
    rows = annotation_rows()
    extra = [dict(r) for r in rows if r["Story ID"] == "4"]  # GPT, prompt 1
    for r in extra:
        r["Story ID"] = "10"  # 10 mod 3 = 1: GPT on prompt 1 again
    err = bad(tmp_path, rows + extra, "duplicate item: Story IDs 4 and 10")
    assert err.row == 28


def test_block_must_identify_model(tmp_path):
    rows = annotation_rows()
    for r in rows:
        if r["Story ID"] == "5":
            r["Model"] = "XLNet"  # block 1 is GPT
    bad(tmp_path, rows, "same block of 3")


def test_conflict_with_stored_items(tmp_path, good):
    con = open_store()
    ingest(con, metric_file(tmp_path / "hanna_metric_scores.csv"), format="hanna-metric-scores")
    before = counts(con)
    rows = annotation_rows()
    for r in rows:
        r["Model"] = {"GPT": "CTRL", "CTRL": "GPT"}.get(r["Model"], r["Model"])
    with pytest.raises(InputError, match="already holds it"):
        ingest(con, write(tmp_path / "swapped.csv", rows), format="hanna-annotations")
    assert counts(con) == before
