"""Scoring the texts a store holds (``score --db STORE``) and the store's several references per
item (table ``item_references``), on SummEval-shaped records with 11 references per summary."""

from __future__ import annotations

import json
import random

import duckdb
import numpy as np
import pytest
from hanna_stats.scoring.registry import ScoringConfig, Texts
from hanna_stats.scoring.run import score, score_into_store, score_store
from test_store_summeval import records, write_jsonl

from hanna_stats.cli import main
from hanna_stats.store import InputError, ingest, open_store

WORDS = "the a cat dog sat ran on mat park home fast slow red blue big small and of".split()
METRICS = ["ROUGE-1 F-Score", "ROUGE-2 Recall", "ROUGE-L F-Score", "BLEU", "chrF"]


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12)))


def summeval_records(seed: int = 0, **kwargs) -> list[dict]:
    """:func:`records` with varied summaries and references (11 per document, shared by its
    summaries, as in SummEval), so that every reference changes some score."""
    rng = random.Random(seed)
    refs: dict[str, list[str]] = {}
    out = records(seed=seed, **kwargs)
    for record in out:
        record["decoded"] = _sentence(rng)
        record["references"] = refs.setdefault(record["id"], [_sentence(rng) for _ in range(11)])
    return out


def stored_scores(con, measures) -> dict[tuple[str, str], float]:
    rows = con.execute(
        "SELECT it.name, m.name, s.value FROM scores s JOIN items it USING (item_id) "
        "JOIN measures m USING (measure_id) WHERE list_contains(?, m.name)",
        [list(measures)],
    ).fetchall()
    return {(item, measure): value for item, measure, value in rows}


def references(con) -> dict[str, list[tuple[int, str | None, str]]]:
    rows = con.execute(
        "SELECT it.name, r.position, r.name, r.text FROM item_references r "
        "JOIN items it USING (item_id) ORDER BY it.name, r.position"
    ).fetchall()
    out: dict[str, list] = {}
    for item, *ref in rows:
        out.setdefault(item, []).append(tuple(ref))
    return out


@pytest.fixture
def summeval(tmp_path):
    lines = summeval_records()
    path = write_jsonl(tmp_path / "model_annotations.aligned.paired.jsonl", lines)
    return path, lines


def test_summeval_ingest_keeps_every_reference_in_order(tmp_path, summeval):
    path, lines = summeval
    con = open_store(tmp_path / "s.duckdb")
    ingest(con, path, format="summeval")
    refs = references(con)
    first = dict(con.execute("SELECT name, reference FROM items").fetchall())
    assert len(refs) == len(lines)
    for record in lines:
        item = f"{record['id']}/{record['model_id']}"
        assert [t for _, _, t in refs[item]] == record["references"]
        assert [p for p, _, _ in refs[item]] == list(range(1, 12))
        assert [n for _, n, _ in refs[item]] == [f"references[{k}]" for k in range(11)]
        assert first[item] == record["references"][0]


def test_score_store_equals_scoring_the_texts_directly(tmp_path, summeval):
    """The independent path: the records' own texts scored through the scoring API (our ROUGE,
    equal to ROUGE-1.5.5) and sacrebleu's sentence BLEU and chrF with the 11 references."""
    import sacrebleu

    path, lines = summeval
    con = open_store(tmp_path / "s.duckdb")
    ingest(con, path, format="summeval")
    written = score_store(con, tmp_path / "s.duckdb", METRICS, ScoringConfig())
    assert written.height == len(lines) * len(METRICS)
    got = stored_scores(con, METRICS)
    items = [f"{r['id']}/{r['model_id']}" for r in lines]
    texts = Texts.of(
        [r["text"] for r in lines], [r["references"] for r in lines], [r["decoded"] for r in lines]
    )
    expected = score(texts, METRICS, ScoringConfig())
    only_first = score(
        Texts.of([r["text"] for r in lines], [r["references"][0] for r in lines], texts.candidates),
        METRICS,
        ScoringConfig(),
    )
    for m in METRICS:
        np.testing.assert_allclose([got[i, m] for i in items], expected[m], rtol=0, atol=1e-12)
        assert not np.allclose(expected[m], only_first[m])  # all 11 references were used
    bleu = [sacrebleu.sentence_bleu(r["decoded"], r["references"]).score for r in lines]
    chrf = [
        sacrebleu.sentence_chrf(r["decoded"], r["references"], char_order=6, word_order=0).score
        for r in lines
    ]
    np.testing.assert_allclose([got[i, "BLEU"] for i in items], bleu, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose([got[i, "chrF"] for i in items], chrf, rtol=1e-9, atol=1e-9)

    # Re-runs write nothing new; --force rewrites the same values.
    n_scores = con.execute("SELECT count(*) FROM scores").fetchall()[0][0]
    assert score_store(con, tmp_path / "s.duckdb", METRICS, ScoringConfig()).height == 0
    again = score_store(con, tmp_path / "s.duckdb", METRICS, ScoringConfig(), force=True)
    assert again.height == len(lines) * len(METRICS)
    assert con.execute("SELECT count(*) FROM scores").fetchall()[0][0] == n_scores
    assert stored_scores(con, METRICS) == got
    catalogue = con.execute(
        "SELECT kind, family, reference_based FROM measures WHERE name = 'BLEU'"
    ).fetchall()
    assert catalogue == [("metric", "string", True)]


def test_cli_round_trip(tmp_path, summeval, capsys):
    path, lines = summeval
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(path)]) == 0
    assert main(["score", "--db", str(db), "--metrics", "ROUGE-1 F-Score,BLEU"]) == 0
    assert f"{len(lines) * 2} scores of its texts written" in capsys.readouterr().out
    assert main(["score", "--db", str(db), "--metrics", "ROUGE-1 F-Score,BLEU"]) == 0
    assert "0 scores of its texts written" in capsys.readouterr().out
    out = tmp_path / "again.csv"
    assert main(["score", "--db", str(db), "--metrics", "BLEU", "--out", str(out)]) == 0
    con = duckdb.connect(str(db), read_only=True)
    got = stored_scores(con, ["ROUGE-1 F-Score", "BLEU"])
    con.close()
    texts = Texts.of(
        [r["text"] for r in lines], [r["references"] for r in lines], [r["decoded"] for r in lines]
    )
    expected = score(texts, ["ROUGE-1 F-Score", "BLEU"], ScoringConfig())
    items = [f"{r['id']}/{r['model_id']}" for r in lines]
    for m in ("ROUGE-1 F-Score", "BLEU"):
        np.testing.assert_allclose([got[i, m] for i in items], expected[m], rtol=0, atol=1e-12)


def test_cli_store_errors(tmp_path, summeval, capsys):
    db = tmp_path / "missing.duckdb"
    assert main(["score", "--db", str(db)]) == 2
    assert "no score store" in capsys.readouterr().err
    assert not db.exists()
    assert main(["score", "--db", str(tmp_path / "s.duckdb"), "--extend"]) == 2
    assert "--extend applies to --input" in capsys.readouterr().err


def test_single_reference_and_source_needs_name_the_item(tmp_path):
    lines = summeval_records(paired=False)
    db = tmp_path / "s.duckdb"
    con = open_store(db)
    ingest(con, write_jsonl(tmp_path / "plain.jsonl", lines), format="summeval")
    first = f"{lines[0]['id']}/M0"  # the store's order: inputs, then systems in natural order
    with pytest.raises(InputError, match=rf"row 1 \(item={first}\), column 'references\[1\]'"):
        score_store(con, db, ["BaryScore-W"], ScoringConfig())
    with pytest.raises(InputError, match=r"column 'prompt': no source text"):
        score_store(con, db, ["Coverage"], ScoringConfig())
    assert con.execute("SELECT count(*) FROM scores").fetchall()[0][0] == 0


def test_changed_references_need_replace(tmp_path, summeval):
    path, lines = summeval
    con = open_store(tmp_path / "s.duckdb")
    ingest(con, path, format="summeval")
    changed = json.loads(json.dumps(lines))
    for record in changed:
        if record["id"] == lines[0]["id"]:
            record["references"] = [*record["references"][:3], "another third", "a fifth"]
    again = write_jsonl(tmp_path / "changed.jsonl", changed)
    item = f"{lines[0]['id']}/{lines[0]['model_id']}"
    with pytest.raises(InputError, match=r"would replace 3 reference text\(s\).*reference 4"):
        ingest(con, again, format="summeval")
    assert len(references(con)[item]) == 11
    (summary,) = ingest(con, again, replace=True, format="summeval")
    assert summary.replaced_texts["reference texts"] == 3
    refs = references(con)
    assert [t for _, _, t in refs[item]] == changed[0]["references"]  # the list, not 11 any more
    other = f"{lines[-1]['id']}/{lines[-1]['model_id']}"
    assert [t for _, _, t in refs[other]] == lines[-1]["references"]


def test_a_scoring_file_with_several_references_writes_them_all(tmp_path):
    from hanna_stats.scoring.io import read_texts

    path = tmp_path / "texts.jsonl"
    rows = [
        {"input": "d", "system": "S", "prompt": "p", "story": "a cat sat"}
        | {"reference": "the cat sat", "reference_2": "", "reference_3": "a dog ran"},
        {"input": "e", "system": "S", "prompt": "q", "story": "x", "reference": "only one"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    con = open_store(tmp_path / "s.duckdb")
    score_into_store(con, read_texts(path), ["BLEU"], ScoringConfig())
    assert references(con) == {
        "S/d": [(1, "reference", "the cat sat"), (2, "reference_3", "a dog ran")],
        "S/e": [(1, None, "only one")],
    }
    # The store's texts score as the file's did.
    assert score_store(con, tmp_path / "s.duckdb", ["BLEU"], ScoringConfig()).height == 0
    again = score_store(con, tmp_path / "s.duckdb", ["BLEU"], ScoringConfig(), force=True)
    assert again.height == 2


def test_old_store_gains_the_table_on_a_writable_open(tmp_path, summeval):
    path, lines = summeval
    db = tmp_path / "s.duckdb"
    con = open_store(db)
    ingest(con, path, format="summeval")
    con.execute("DROP TABLE item_references")  # a store of schema 0 without the table
    con.execute("DROP TABLE store_schema")
    con.close()
    con = open_store(db)
    refs = references(con)
    assert len(refs) == len(lines)
    assert all(
        r == [(1, None, rec["references"][0])]
        for r, rec in zip((refs[f"{x['id']}/{x['model_id']}"] for x in lines), lines, strict=True)
    )
    con.close()
    con = open_store(db)  # idempotent
    assert con.execute("SELECT count(*) FROM item_references").fetchall()[0][0] == len(lines)
