"""Ingest of the real HANNA files (read from the shared data folder, never copied here)."""

from __future__ import annotations

import csv
import json
import time

import numpy as np
import pytest

from hanna_stats.store import InputError, build_hanna_store, ingest, load_study, open_store

METRIC_FILE = "hanna_metric_scores.csv"
LLM_FILE = "hanna_metric_scores_llm.csv"
CRITERIA = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]
TABLES = ["systems", "inputs", "items", "measures", "raters", "scores", "ratings", "ingests"]


def counts(con) -> dict[str, int]:
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES}


def read_wide(path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


@pytest.fixture(scope="module")
def metric_store(hanna_dir):
    con = open_store()
    (summary,) = ingest(con, hanna_dir / METRIC_FILE, format="hanna-metric-scores")
    assert summary.n_values == 82_368 and not summary.skipped
    yield con
    con.close()


@pytest.fixture(scope="module")
def llm_store(hanna_dir):
    con = open_store()
    ingest(con, hanna_dir / METRIC_FILE, format="hanna-metric-scores")
    ingest(con, hanna_dir / LLM_FILE, format="hanna-llm")
    yield con
    con.close()


@pytest.fixture(scope="module")
def metric_json(hanna_dir) -> dict[str, np.ndarray]:
    """Column header -> (11 systems, 96 prompts) array parsed straight from the CSV."""
    header, rows = read_wide(hanna_dir / METRIC_FILE)
    return {h: np.array([json.loads(r[j]) for r in rows]) for j, h in enumerate(header) if j}


def test_metric_counts(metric_store):
    assert counts(metric_store) == {
        "systems": 11,
        "inputs": 96,
        "items": 1056,
        "measures": 78,
        "raters": 0,
        "scores": 82_368,
        "ratings": 0,
        "ingests": 1,
    }
    humans = metric_store.execute("SELECT name FROM systems WHERE is_human").fetchall()
    assert humans == [("Human",)]


def test_metric_story_ids(metric_store):
    # Story ID = 96 * row_index + prompt_index; GPT is row 3.
    row = metric_store.execute(
        "SELECT inp.name, sy.name FROM items it JOIN inputs inp USING (input_id) "
        "JOIN systems sy USING (system_id) WHERE it.name = '293'"
    ).fetchall()
    assert row == [("5", "GPT")]


def test_catalogue_attributes(metric_store):
    cat = {
        r[0]: r[1:]
        for r in metric_store.execute(
            "SELECT measure, kind, family, reference_based, symbol, abbreviation, criterion, "
            "scale_min, scale_max, position, source_name FROM measure_catalogue"
        ).fetchall()
    }
    assert cat["BLEU"] == ("metric", "string", True, "Ξ§", None, None, None, None, 6, "BLEU Ξ§")
    assert cat["SUPERT-PS"][:4] == ("metric", "embedding", False, "¤ε")
    assert cat["BARTScore-SP"][:4] == ("metric", "model", False, "¤Δ")
    assert cat["ROUGE-S* Recall"][:3] == ("metric", "string", True)
    assert cat["BERTScore F1"][:2] == ("metric", "embedding")
    assert cat["Relevance"][:8] == ("human", None, None, None, "RE", "Relevance", 1.0, 5.0)
    assert cat["Complexity"][4] == "CX"
    positions = [v[8] for v in cat.values()]
    assert sorted(positions) == list(range(78))


def test_story_scores_equal_json_exactly(metric_store, metric_json):
    rows = metric_store.execute(
        "SELECT measure, system_position, input_position, value FROM item_scores"
    ).fetchall()
    assert len(rows) == 82_368
    source = {
        r[0]: r[1]
        for r in metric_store.execute("SELECT name, source_name FROM measures").fetchall()
    }
    for measure, s, g, value in rows:
        expected = metric_json[source[measure]][s, g]
        assert value == expected or (np.isnan(expected) and value is None)


def test_denormals_survive(metric_store, metric_json):
    stored = metric_store.execute(
        "SELECT min(value) FROM item_scores WHERE measure = 'CIDEr' AND value > 0"
    ).fetchall()[0][0]
    expected = metric_json["CIDEr Ξ§"]
    assert stored == expected[expected > 0].min() < 1e-300


def test_system_scores_equal_numpy_means(metric_store, metric_json):
    rows = metric_store.execute(
        "SELECT system_position, measure, value, n_items FROM system_scores "
        "WHERE measure IN ('BLEU', 'Empathy', 'BARTScore-SP')"
    ).fetchall()
    assert len(rows) == 33
    header = {"BLEU": "BLEU Ξ§", "Empathy": "Empathy", "BARTScore-SP": "BARTScore-SP ¤Δ"}
    for s, measure, value, n in rows:
        assert n == 96
        assert value == pytest.approx(metric_json[header[measure]][s].mean(), rel=1e-13)


def test_metric_ingest_is_idempotent(hanna_dir):
    con = open_store()
    (first,) = ingest(con, hanna_dir / METRIC_FILE, format="hanna-metric-scores")
    before = counts(con)
    (again,) = ingest(con, hanna_dir / METRIC_FILE, format="hanna-metric-scores")
    assert again.skipped and again.n_values == 0 and again.sha256 == first.sha256
    assert counts(con) == before
    # Even without the skip (a new ingest record), upserts add no rows.
    con.execute("DELETE FROM ingests")
    assert not ingest(con, hanna_dir / METRIC_FILE, format="hanna-metric-scores")[0].skipped
    assert counts(con) == before


def test_metric_ingest_is_fast(hanna_dir):
    con = open_store()
    start = time.perf_counter()
    ingest(con, hanna_dir / METRIC_FILE, format="hanna-metric-scores")
    assert time.perf_counter() - start < 2.0


def test_real_file_with_short_list_names_row_and_column(hanna_dir, tmp_path):
    header, rows = read_wide(hanna_dir / METRIC_FILE)
    j = header.index("BLEU Ξ§")
    rows[3][j] = json.dumps(json.loads(rows[3][j])[:95])
    path = tmp_path / METRIC_FILE
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([header, *rows])
    con = open_store()
    with pytest.raises(InputError) as err:
        ingest(con, path, format="hanna-metric-scores")
    assert str(err.value) == (
        "hanna_metric_scores.csv, row 4 (Model=GPT), column 'BLEU Ξ§': "
        "expected a JSON list of 96 numbers, got 95"
    )
    assert (err.value.file, err.value.row, err.value.column) == (METRIC_FILE, 4, "BLEU Ξ§")
    assert counts(con)["scores"] == 0


def test_llm_counts_and_catalogue(llm_store):
    c = counts(llm_store)
    assert (c["systems"], c["inputs"], c["items"]) == (11, 96, 1056)
    assert c["measures"] == 78 + 140
    assert c["scores"] == 1056 * 218
    assert c["ratings"] == 19_008
    kinds = dict(llm_store.execute("SELECT kind, count(*) FROM measures GROUP BY kind").fetchall())
    assert kinds == {"human": 6, "metric": 72, "llm-judge": 140}
    judge = llm_store.execute(
        "SELECT kind, criterion, variant, abbreviation, source_name FROM measures "
        "WHERE name = 'Beluga-13B Relevance (prompt 1)'"
    ).fetchall()
    assert judge == [("llm-judge", "Relevance", "1", "RE", "Beluga-13B RE 1")]
    average = llm_store.execute(
        "SELECT criterion, variant FROM measures WHERE name = 'ChatGPT Average (prompt 4)'"
    ).fetchall()
    assert average == [("Average", "4")]
    raters = llm_store.execute("SELECT name, kind FROM raters ORDER BY name").fetchall()
    assert raters == [(f"HANNA judge slot {k}", "slot") for k in (1, 2, 3)]


def test_llm_slot_ratings_average_to_criteria(llm_store, metric_json):
    rows = llm_store.execute(
        "SELECT measure, system_position, input_position, value, n_ratings FROM item_scores "
        "WHERE kind = 'human'"
    ).fetchall()
    assert len(rows) == 1056 * 6
    for measure, s, g, value, n in rows:
        assert n == 3
        assert value == metric_json[measure][s, g]  # exactly


def test_llm_judge_values(llm_store, hanna_dir):
    header, rows = read_wide(hanna_dir / LLM_FILE)
    expected = np.array([json.loads(r[header.index("Mistral-7B SU 1")]) for r in rows])
    cube = load_study(llm_store).cube(
        measures=["Mistral-7B Surprise (prompt 1)"], include_human=True
    )
    assert np.array_equal(cube.values[0], expected.T)
    assert cube.kinds == ["llm-judge"]


def test_llm_ingest_before_metric_file(hanna_dir):
    con = open_store()
    ingest(con, hanna_dir / LLM_FILE, format="hanna-llm")
    before = counts(con)
    (summary,) = ingest(con, hanna_dir / METRIC_FILE, format="hanna-metric-scores")
    assert summary.n_values == 82_368
    after = counts(con)
    assert after["ingests"] == before["ingests"] + 1
    assert {k: v for k, v in after.items() if k != "ingests"} == {
        k: v for k, v in before.items() if k != "ingests"
    }


def test_cube_shape_order_and_values(llm_store, metric_json):
    cube = load_study(llm_store).cube()
    assert cube.values.shape == (78, 96, 10)
    assert cube.values.dtype == np.float64
    assert cube.measures[:6] == CRITERIA and cube.measures[6] == "BLEU"
    assert cube.kinds == ["human"] * 6 + ["metric"] * 72
    assert cube.inputs == [str(p) for p in range(96)]
    assert cube.systems[0] == "BertGeneration" and "Human" not in cube.systems
    assert np.array_equal(cube.values[6], metric_json["BLEU Ξ§"][1:].T)
    assert np.array_equal(cube.values[2], metric_json["Empathy"][1:].T)


def test_cube_options(llm_store):
    with_human = load_study(llm_store).cube(include_human=True)
    assert with_human.systems[0] == "Human" and with_human.values.shape == (78, 96, 11)
    judges = load_study(llm_store).cube(kinds=("llm-judge",))
    assert judges.values.shape == (140, 96, 10)
    assert judges.measures[0] == "Beluga-13B Relevance (prompt 1)"
    picked = load_study(llm_store).cube(measures=["BLEU", "Relevance"])
    assert picked.measures == ["BLEU", "Relevance"] and picked.kinds == ["metric", "human"]
    with pytest.raises(ValueError, match="twice"):
        load_study(llm_store).cube(measures=["BLEU", "BLEU"])
    with pytest.raises(ValueError, match="unknown measures"):
        load_study(llm_store).cube(measures=["No such metric"])
    with pytest.raises(ValueError, match="no values"):
        load_study(open_store()).cube()


def test_scores_wide(llm_store, metric_json):
    rows = llm_store.execute(
        'SELECT item, input, system, is_human, "BLEU", "ROUGE-S* Recall", "Relevance" '
        "FROM scores_wide WHERE system = 'GPT' ORDER BY input::INTEGER"
    ).fetchall()
    assert len(rows) == 96
    assert rows[5][:4] == ("293", "5", "GPT", False)
    assert [r[4] for r in rows] == list(metric_json["BLEU Ξ§"][3])
    assert [r[5] for r in rows] == list(metric_json["ROUGE-S* Recall Ξ§"][3])
    columns = [r[0] for r in llm_store.execute("DESCRIBE scores_wide").fetchall()]
    assert columns[:4] == ["item", "input", "system", "is_human"]
    assert len(columns) == 4 + 218


def test_build_hanna_store_file(hanna_dir, tmp_path):
    db = tmp_path / "hanna.duckdb"
    con = build_hanna_store(hanna_dir, db)
    before = counts(con)
    con.close()
    con = build_hanna_store(hanna_dir, db)  # files already ingested: skipped
    assert counts(con) == before
    con.close()
    ro = open_store(db, read_only=True)
    assert load_study(ro).cube().values.shape == (78, 96, 10)
    assert ro.execute('SELECT count("BLEU") FROM scores_wide').fetchall() == [(1056,)]
