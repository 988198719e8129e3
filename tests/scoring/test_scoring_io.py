"""Reading texts to score: generic files, HANNA shapes, clear errors naming the row."""

from __future__ import annotations

import polars as pl
import pytest
from hanna_stats.scoring.io import read_texts, to_texts

from hanna_stats.store import InputError

ROWS = {
    "input": ["p0", "p1"],
    "system": ["A", "A"],
    "prompt": ["A prompt.", "Another prompt."],
    "reference": ["The reference.", "Another reference."],
    "story": ["A story.", None],
}


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_generic_formats(tmp_path, suffix):
    path = tmp_path / f"texts{suffix}"
    df = pl.DataFrame(ROWS)
    {".csv": df.write_csv, ".parquet": df.write_parquet, ".jsonl": df.write_ndjson}[suffix](path)
    data = read_texts(path)
    assert data.frame["item"].to_list() == ["A/p0", "A/p1"]
    texts = to_texts(data, need_reference=True)
    assert texts.candidates == ("A story.", "")  # a missing story is scored as empty text


def test_annotation_shape_names_items_as_the_store(tmp_path):
    # Two prompts, systems Human (block 0) and GPT (block 1), two raters per story: items are
    # Story IDs, inputs Story ID mod 2, one row per story.
    rows = []
    for sid, model in enumerate(["Human", "Human", "GPT", "GPT"]):
        for worker in ("w1", "w2"):
            rows.append(
                {
                    "Story ID": str(sid),
                    "Prompt": f"prompt {sid % 2}",
                    "Human": "ref",
                    "Story": f"story {sid}",
                    "Model": model,
                    "Worker ID": worker,
                }
            )
    path = tmp_path / "hanna_stories_annotations.csv"
    pl.DataFrame(rows).write_csv(path)
    frame = read_texts(path).frame
    assert frame.select("item", "input", "system").rows() == [
        ("0", "0", "Human"),
        ("1", "1", "Human"),
        ("2", "0", "GPT"),
        ("3", "1", "GPT"),
    ]
    assert frame["row"].to_list() == [1, 3, 5, 7]


def test_llm_story_shape(tmp_path):
    path = tmp_path / "llm.csv"
    pl.DataFrame(
        {
            "": ["0", "1", "2"],
            "Prompt": ["p", "q", "p"],
            "Human": ["h", "i", "h"],
            "Story": ["s", "t", "u"],
            "Model": ["M1", "M1", "M2"],
        }
    ).write_csv(path)
    frame = read_texts(path).frame
    assert frame.select("item", "input").rows() == [("M1/0", "0"), ("M1/1", "1"), ("M2/0", "0")]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda df: df.drop("prompt"), "column 'prompt': missing column"),
        (
            lambda df: df.with_columns(prompt=pl.Series([None, "x"], dtype=pl.String)),
            "row 1, column 'prompt': a story without its prompt",
        ),
        (
            lambda df: df.with_columns(input=pl.Series(["p0", "p0"])),
            "row 2: duplicate item: A/p0 (also row 1)",
        ),
    ],
)
def test_bad_input_names_row_and_column(tmp_path, change, message):
    path = tmp_path / "bad.csv"
    change(pl.DataFrame(ROWS)).write_csv(path)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_texts(path)


def test_non_utf8_and_missing_reference(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes(b"input,system,prompt,reference,story\np0,A,ok,ok,ok\np1,A,caf\xe9,r,s\n")
    with pytest.raises(InputError, match="row 2: not valid UTF-8"):
        read_texts(path)
    path = tmp_path / "noref.csv"
    pl.DataFrame(ROWS).with_columns(reference=pl.Series(["r", None], dtype=pl.String)).write_csv(
        path
    )
    data = read_texts(path)
    assert to_texts(data, need_reference=False).references == ("r", "")
    with pytest.raises(InputError, match="row 2, column 'reference'"):
        to_texts(data, need_reference=True)
