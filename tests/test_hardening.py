"""Bad input and faults, as a table: each case is a command, the exit code it must give, the words
its one-line message must contain (file, row, column or argument), and the promise that every
table of the store is unchanged and no file is left behind.

The cases run the command line in-process (``hanna_stats.cli.main``); the faults (a killed ingest,
two writers, a reader during a write, a full disk, a read-only folder) run ``python -m
hanna_stats`` in a subprocess and are skipped, with the reason, where the machine does not allow
them (a tmpfs mount needs privileges; a read-only folder does not stop root).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl
import pytest

from hanna_stats.cli import main

SUBPROCESS_ENV = {**os.environ, "CI": "1"}
INPUTS = ("p1", "p2", "p3", "p4", "p5")
SYSTEMS = ("A", "B", "C", "D", "E")


# --------------------------------------------------------------------------- files of the cases


def tidy_csv(rows: list[tuple], header: str = "item,input,system,measure,value,rater") -> str:
    """A tidy CSV: ``header`` then ``rows`` joined by commas (None -> empty cell)."""
    lines = [header] + [",".join("" if v is None else str(v) for v in row) for row in rows]
    return "\n".join(lines) + "\n"


def study_rows(inputs=INPUTS, systems=SYSTEMS, *, shift: float = 0.0) -> list[tuple]:
    """A small tidy study: BLEU and ROUGE per item, Fluency rated 1..5 by raters r1 and r2."""
    rows = []
    for i, inp in enumerate(inputs):
        for j, system in enumerate(systems):
            item = f"{inp}-{system}"
            rows.append(
                (item, inp, system, "BLEU", round((i * 7 + j * 3) % 11 / 10 + shift, 2), None)
            )
            rows.append((item, inp, system, "ROUGE", round((i * 5 + j * 4) % 13 / 10, 2), None))
            rows.append((item, inp, system, "Fluency", 1 + (i + 2 * j) % 5, "r1"))
            rows.append((item, inp, system, "Fluency", 1 + (2 * i + j) % 5, "r2"))
    return rows


BASE = tidy_csv(study_rows())
GOOD_ROW = ("p1-A", "p1", "A", "BLEU", 0.0, None)


def with_row(row: tuple, header: str = "item,input,system,measure,value,rater") -> str:
    """The base study's rows plus ``row`` at the end (a defect in the last row)."""
    return tidy_csv([*study_rows(), row], header)


def parquet(df: pl.DataFrame):
    def write(path: Path) -> None:
        df.write_parquet(path)

    return write


def hanna_variant(name: str, edit):
    """A copy of HANNA file ``name`` (read from the data folder at test time, never committed)
    with ``edit(text) -> text`` applied."""

    def write(path: Path, hanna_dir: Path) -> None:
        path.write_text(edit((hanna_dir / name).read_text(encoding="utf-8")), encoding="utf-8")

    write.needs_hanna = True
    return write


def replace_cell(row: int, column: int, value: str):
    """Edit: data row ``row`` (1-based), column ``column`` (0-based) set to ``value``
    (HANNA's metric file has no quoted commas in the rows edited here)."""

    def edit(text: str) -> str:
        lines = text.split("\n")
        cells = lines[row].split(",")
        cells[column] = value
        lines[row] = ",".join(cells)
        return "\n".join(lines)

    return edit


def rename_header(old: str, new: str):
    def edit(text: str) -> str:
        head, rest = text.split("\n", 1)
        return head.replace(old, new, 1) + "\n" + rest

    return edit


ANNOTATION_HEADER = (
    "Story ID,Prompt,Human,Story,Model,Relevance,Coherence,Empathy,Surprise,Engagement,"
    "Complexity,Worker ID,Assignment ID,Work time in seconds,Name"
)


def annotations(*rows: str) -> str:
    return "\n".join([ANNOTATION_HEADER, *rows]) + "\n"


ANN_ROW = "0,A prompt,A human story,A story,GPT-2,{r},3,3,3,3,3,{w},a1,60,x"
SUMMEVAL = "model_annotations.aligned.jsonl"
RATING = {"coherence": 3, "consistency": 4, "fluency": 5, "relevance": 2}


def summeval_line(drop: tuple[str, ...] = (), **fields) -> str:
    """One line of SummEval's annotation file, ``fields`` changed and ``drop`` left out."""
    record = {
        "id": "dm-test-1",
        "model_id": "M0",
        "decoded": "A summary.",
        "expert_annotations": [RATING] * 3,
        "turker_annotations": [RATING] * 5,
        "references": ["A reference."] * 11,
        **fields,
    }
    return json.dumps({k: v for k, v in record.items() if k not in drop}) + "\n"


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Case:
    """One bad input. ``args``: the command line, with ``{db}`` (a copy of the ``store``
    fixture), ``{tmp}`` (the case's folder) and ``{hanna}`` (the HANNA data folder); ``files``:
    written into ``{tmp}`` first (text, bytes, or a function of the path [and the HANNA
    folder])."""

    id: str
    args: tuple[str, ...]
    words: tuple[str, ...]
    store: str = "tidy"
    files: dict = field(default_factory=dict)
    code: int = 2


def ingest(*files: str, more: tuple[str, ...] = ()) -> tuple[str, ...]:
    return ("ingest", "--db", "{db}", *(f"{{tmp}}/{f}" for f in files), *more)


def tidy_case(id: str, content, words: tuple[str, ...], name: str = "bad.csv", **kw) -> Case:
    return Case(
        id, ingest(name, more=kw.pop("more", ())), (name, *words), files={name: content}, **kw
    )


TIDY = [
    tidy_case(
        "missing-value-column",
        "item,input,system,measure,score\na,p1,A,BLEU,1\n",
        ("column 'value'",),
    ),
    tidy_case(
        "missing-measure-column", "item,input,system,value\na,p1,A,1\n", ("column 'measure'",)
    ),
    tidy_case("header-only", "item,input,system,measure,value\n", ("no data rows",)),
    tidy_case("empty-file", b"", ("empty", "0 bytes")),
    tidy_case("blank-lines-only", "\n\n\n", ("no header",)),
    tidy_case(
        "bad-utf8",
        BASE.encode() + b"p9-A,p9,A,BLEU,0.\xff,\n",
        ("not valid UTF-8", "row 101"),
    ),
    tidy_case("short-last-row", BASE + "p9-A,p9,A,BLEU\n", ("row 101", "expected 6 fields, got 4")),
    tidy_case("long-row", BASE + "p9-A,p9,A,BLEU,1,,extra\n", ("row 101", "got 7")),
    tidy_case(
        "duplicate-column", "item,input,system,measure,value,value\n", ("duplicate column", "value")
    ),
    tidy_case("empty-column-name", "item,input,system,measure,value,\n", ("empty column name",)),
    tidy_case("unterminated-quote", BASE + 'p9-A,p9,A,"BLEU,1,\n', ("row 101",)),
    tidy_case(
        "value-text",
        with_row(("p9-A", "p9", "A", "BLEU", "high", None)),
        ("row 101", "column 'value'", "'high'"),
    ),
    tidy_case(
        "value-inf", with_row(("p9-A", "p9", "A", "BLEU", "inf", None)), ("row 101", "finite")
    ),
    tidy_case(
        "value-minus-inf",
        with_row(("p9-A", "p9", "A", "BLEU", "-inf", None)),
        ("row 101", "finite"),
    ),
    tidy_case(
        "missing-item",
        with_row((None, "p9", "A", "BLEU", 1, None)),
        ("row 101", "column 'item'", "missing"),
    ),
    tidy_case(
        "missing-input",
        with_row(("p9-A", None, "A", "BLEU", 1, None)),
        ("row 101", "column 'input'"),
    ),
    tidy_case(
        "missing-system",
        with_row(("p9-A", "p9", " ", "BLEU", 1, None)),
        ("row 101", "column 'system'"),
    ),
    tidy_case(
        "missing-measure",
        with_row(("p9-A", "p9", "A", None, 1, None)),
        ("row 101", "column 'measure'"),
    ),
    tidy_case(
        "duplicate-row",
        with_row(("p1-A", "p1", "A", "BLEU", 0.5, None)),
        ("row 101", "duplicate row", "also row 1"),
    ),
    tidy_case(
        "duplicate-rating",
        with_row(("p1-A", "p1", "A", "Fluency", 2, "r1")),
        ("row 101", "duplicate row"),
    ),
    tidy_case(
        "item-two-systems",
        with_row(("p1-A", "p1", "B", "METEOR", 0.5, None)),
        ("row 101", "duplicate item"),
    ),
    tidy_case(
        "input-system-two-items",
        with_row(("p1-A2", "p1", "A", "BLEU", 0.5, None)),
        ("row 101", "duplicate item"),
    ),
    tidy_case(
        "reserved-measure",
        with_row(("p1-A", "p1", "A", "system", 0.5, None)),
        ("row 101", "reserved"),
    ),
    tidy_case(
        "rating-without-value",
        with_row(("p1-A", "p1", "A", "Fluency", None, "r3")),
        ("row 101", "needs a value"),
    ),
    tidy_case(
        "unknown-kind",
        tidy_csv(
            [(*row, "human" if row[5] else "") for row in study_rows()]
            + [("p1-A", "p1", "A", "Judge", 3, None, "judge")],
            "item,input,system,measure,value,rater,kind",
        ),
        ("row 101", "column 'kind'", "'judge'", "llm-judge"),
    ),
    tidy_case(
        "two-kinds",
        tidy_csv(
            [("p1-A", "p1", "A", "X", 1, "metric"), ("p1-B", "p1", "B", "X", 2, "human")],
            "item,input,system,measure,value,kind",
        ),
        ("row 2", "column 'kind'", "'X'", "row 1"),
    ),
    tidy_case(
        "rater-on-metric",
        tidy_csv(
            [("p1-A", "p1", "A", "X", 1, "r1", "metric")],
            "item,input,system,measure,value,rater,kind",
        ),
        ("row 1", "column 'kind'", "human"),
    ),
    tidy_case(
        "judge-off-scale",
        tidy_csv(
            [
                ("p1-A", "p1", "A", "J", 3, "1", "J1", "likert", 1, 5),
                ("p1-A", "p1", "A", "J", 9, "2", "J1", "likert", 1, 5),
            ],
            "item,input,system,measure,value,rater,judge,scale,scale_min,scale_max",
        ),
        ("row 2", "column 'value'", "9", "'J'", "--scale-policy"),
    ),
    tidy_case(
        "human-off-scale-any-policy",
        tidy_csv(
            [("p1-A", "p1", "A", "Fl", 3, "r1", "likert", 1, 5)] * 1
            + [("p1-B", "p1", "B", "Fl", 0, "r1", "likert", 1, 5)],
            "item,input,system,measure,value,rater,scale,scale_min,scale_max",
        ),
        ("row 2", "'Fl'", "Likert", "from 1 to 5"),
        more=("--scale-policy", "keep"),
    ),
    tidy_case(
        "likert-without-bounds",
        tidy_csv(
            [("p1-A", "p1", "A", "J", 3, "1", "likert")],
            "item,input,system,measure,value,rater,scale",
        ),
        ("row 1", "column 'scale'", "scale_min and scale_max"),
    ),
    tidy_case(
        "unknown-scale",
        tidy_csv([("p1-A", "p1", "A", "J", 3, "ordinal")], "item,input,system,measure,value,scale"),
        ("row 1", "column 'scale'", "'ordinal'", "likert"),
    ),
    tidy_case(
        "bounds-reversed",
        tidy_csv(
            [("p1-A", "p1", "A", "J", 3, 5, 1)],
            "item,input,system,measure,value,scale_min,scale_max",
        ),
        ("row 1", "column 'scale_max'", "not below"),
    ),
    tidy_case(
        "bound-not-a-number",
        tidy_csv([("p1-A", "p1", "A", "J", 3, "low")], "item,input,system,measure,value,scale_min"),
        ("row 1", "column 'scale_min'", "'low'"),
    ),
    tidy_case(
        "two-criteria",
        tidy_csv(
            [("p1-A", "p1", "A", "J", 3, "Fluency"), ("p1-B", "p1", "B", "J", 2, "Coherence")],
            "item,input,system,measure,value,criterion",
        ),
        ("row 2", "column 'criterion'", "'Coherence'", "row 1"),
    ),
    tidy_case(
        "answer-without-rater",
        tidy_csv(
            [("p1-A", "p1", "A", "J", 3, "", "4")], "item,input,system,measure,value,rater,answer"
        ),
        ("row 1", "column 'rater'", "answer"),
    ),
    tidy_case(
        "try-without-value-or-answer",
        tidy_csv(
            [("p1-A", "p1", "A", "J", "", "1", "J1", "")],
            "item,input,system,measure,value,rater,judge,answer",
        ),
        ("row 1", "column 'value'", "or its answer"),
    ),
    tidy_case(
        "kind-differs-from-store",
        tidy_csv(
            [("p1-A", "p1", "A", "BLEU", 0.0, "human")], "item,input,system,measure,value,kind"
        ),
        ("BLEU", "'metric'", "'human'", "column 'kind'"),
    ),
    tidy_case(
        "human-measure-absent",
        with_row(("p9-A", "p9", "A", "BLEU", 1, None)),
        ("column 'measure'", "'Nope'", "not in the file"),
        more=("--human", "Fluency,Nope"),
    ),
    tidy_case(
        "human-measure-of-kind-metric",
        tidy_csv([("p1-A", "p1", "A", "X", 1, "metric")], "item,input,system,measure,value,kind"),
        ("row 1", "column 'kind'", "'X'", "'metric'"),
        more=("--human", "X"),
    ),
    tidy_case(
        "summeval-bad-json",
        summeval_line() + '{"id": "dm-test-2", \n',
        ("row 2", "invalid JSON"),
        name=SUMMEVAL,
    ),
    tidy_case(
        "summeval-missing-experts",
        summeval_line() + summeval_line(("expert_annotations",), model_id="M1"),
        ("row 2", "column 'expert_annotations'", "missing"),
        name=SUMMEVAL,
    ),
    tidy_case(
        "summeval-rating-6",
        summeval_line(expert_annotations=[RATING, {**RATING, "fluency": 6}]),
        ("row 1", "'expert_annotations[1].fluency'", "from 1 to 5", "got 6"),
        name=SUMMEVAL,
    ),
    tidy_case(
        "human-system-absent",
        with_row(("p9-A", "p9", "A", "BLEU", 1, None)),
        ("human system", "'Human'"),
        more=("--human-system", "Human"),
    ),
    tidy_case(
        "changed-value",
        with_row(("p9-A", "p9", "A", "BLEU", 1, None)).replace(
            "p1-A,p1,A,BLEU,0.0", "p1-A,p1,A,BLEU,0.7"
        ),
        ("--replace", "p1-A", "BLEU"),
    ),
    tidy_case(
        "changed-rating",
        BASE.replace("p1-A,p1,A,Fluency,1,r1", "p1-A,p1,A,Fluency,2,r1"),
        ("--replace", "rater 'r1'"),
    ),
    tidy_case(
        "another-study",
        tidy_csv(study_rows(("q1", "q2"), ("A", "B"))),
        ("another study", "--extend", "'base'"),
    ),
    tidy_case(
        "item-moved",
        with_row(("p1-A", "p2", "A", "METEOR", 0.5, None)).replace(
            "p1-A,p1,A,METEOR", "p1-A,p2,A,METEOR"
        ),
        ("duplicate item",),
    ),
    tidy_case(
        "item-contradicts-store",
        tidy_csv([("p1-A", "p1", "B", "BLEU", 0.0, None)]),
        ("item 'p1-A'", "already holds"),
    ),
    tidy_case(
        "parquet-text-value",
        parquet(
            pl.DataFrame(
                {
                    "item": ["a"],
                    "input": ["p1"],
                    "system": ["A"],
                    "measure": ["BLEU"],
                    "value": ["x"],
                }
            )
        ),
        ("row 1", "column 'value'", "'x'"),
        name="bad.parquet",
    ),
    tidy_case(
        "parquet-bool-value",
        parquet(
            pl.DataFrame(
                {
                    "item": ["a"],
                    "input": ["p1"],
                    "system": ["A"],
                    "measure": ["BLEU"],
                    "value": [True],
                }
            )
        ),
        ("column 'value'", "Boolean"),
        name="bad.parquet",
    ),
    tidy_case(
        "parquet-missing-column",
        parquet(pl.DataFrame({"item": ["a"], "input": ["p1"], "system": ["A"], "value": [1.0]})),
        ("column 'measure'",),
        name="bad.parquet",
    ),
    tidy_case("parquet-corrupt", b"PAR1 this is not parquet", ("cannot read",), name="bad.parquet"),
    tidy_case(
        "parquet-null-key",
        parquet(
            pl.DataFrame(
                {
                    "item": ["a", None],
                    "input": ["p1", "p1"],
                    "system": ["A", "B"],
                    "measure": ["BLEU"] * 2,
                    "value": [1.0, 2.0],
                }
            )
        ),
        ("row 2", "column 'item'"),
        name="bad.parquet",
    ),
    tidy_case(
        "parquet-inf",
        parquet(
            pl.DataFrame(
                {
                    "item": ["a"],
                    "input": ["p1"],
                    "system": ["A"],
                    "measure": ["BLEU"],
                    "value": [float("inf")],
                }
            )
        ),
        ("row 1", "finite"),
        name="bad.parquet",
    ),
    tidy_case(
        "likert-half-on-hanna-criterion",
        tidy_csv([("0", "0", "Human", "Relevance", 3.5, "r1")]),
        ("row 1", "3.5", "Relevance", "Likert", "1 to 5"),
        store="hanna",
    ),
    tidy_case(
        "likert-out-of-scale",
        tidy_csv([("0", "0", "Human", "Coherence", 6, "r1")]),
        ("row 1", "6", "Coherence", "whole numbers from 1 to 5"),
        store="hanna",
    ),
    tidy_case(
        "hanna-criterion-as-metric",
        tidy_csv(
            [("0", "0", "Human", "Empathy", 3, None)], "item,input,system,measure,value,rater"
        ),
        ("'Empathy'", "'human'", "'metric'", "kind"),
        store="hanna",
    ),
]

HANNA_FILES = [
    Case(
        "hanna-metric-text-value",
        ingest("hanna_metric_scores.csv"),
        ("hanna_metric_scores.csv", "row 3"),
        files={
            "hanna_metric_scores.csv": hanna_variant(
                "hanna_metric_scores.csv", replace_cell(3, 20, "oops")
            )
        },
        store="empty",
    ),
    Case(
        "hanna-metric-likert-6",
        ingest("hanna_metric_scores.csv"),
        ("hanna_metric_scores.csv", "row 5", "Likert", "got 6"),
        files={
            "hanna_metric_scores.csv": hanna_variant(
                "hanna_metric_scores.csv", replace_cell(5, 2, "6")
            )
        },
        store="empty",
    ),
    Case(
        "hanna-metric-missing-model",
        ingest("hanna_metric_scores.csv"),
        ("hanna_metric_scores.csv", "Model"),
        files={
            "hanna_metric_scores.csv": hanna_variant(
                "hanna_metric_scores.csv", rename_header("Model", "System")
            )
        },
        store="empty",
    ),
    Case(
        "hanna-metric-into-tidy-store",
        ingest("hanna_metric_scores.csv"),
        ("hanna_metric_scores.csv", "another study", "--extend"),
        files={"hanna_metric_scores.csv": hanna_variant("hanna_metric_scores.csv", lambda t: t)},
    ),
    Case(
        "annotations-half-rating",
        ingest("hanna_annotations_raw.csv", more=("--format", "hanna-annotations")),
        ("hanna_annotations_raw.csv", "row 1", "column 'Relevance'", "whole number", "3.5"),
        files={"hanna_annotations_raw.csv": annotations(ANN_ROW.format(r="3.5", w="w1"))},
        store="empty",
    ),
    Case(
        "annotations-zero-rating",
        ingest("hanna_annotations_raw.csv", more=("--format", "hanna-annotations")),
        ("hanna_annotations_raw.csv", "row 1", "column 'Relevance'", "got 0"),
        files={"hanna_annotations_raw.csv": annotations(ANN_ROW.format(r="0", w="w1"))},
        store="empty",
    ),
    Case(
        "annotations-duplicate-rating",
        ingest("hanna_annotations_raw.csv", more=("--format", "hanna-annotations")),
        ("hanna_annotations_raw.csv", "row 2", "duplicate rating", "'w1'"),
        files={
            "hanna_annotations_raw.csv": annotations(
                ANN_ROW.format(r="3", w="w1"), ANN_ROW.format(r="4", w="w1")
            )
        },
        store="empty",
    ),
    Case(
        "annotations-missing-column",
        ingest("hanna_annotations_raw.csv", more=("--format", "hanna-annotations")),
        ("hanna_annotations_raw.csv", "missing column"),
        files={"hanna_annotations_raw.csv": "Story ID,Prompt,Relevance\n0,x,3\n"},
        store="empty",
    ),
    Case("ingest-missing-file", ingest("nowhere.csv"), ("nowhere.csv", "no such file")),
    Case("ingest-empty-folder", ingest("folder"), ("folder",), files={"folder/": None}),
    Case(
        "ingest-db-is-folder",
        ("ingest", "--db", "{tmp}", "{tmp}/x.csv"),
        ("--db", "is a folder"),
        files={"x.csv": BASE},
        store="none",
    ),
]

SQL = [
    Case("sql-syntax", ("sql", "--db", "{db}", "SELEC 1"), ("syntax error",)),
    Case("sql-unknown-table", ("sql", "--db", "{db}", "SELECT * FROM nothing"), ("nothing",)),
    Case(
        "sql-copy-to",
        ("sql", "--db", "{db}", "COPY (SELECT 1) TO '{tmp}/dump.csv'"),
        ("disabled", "--allow-files"),
    ),
    Case(
        "sql-read-csv",
        ("sql", "--db", "{db}", "SELECT * FROM read_csv('/etc/passwd')"),
        ("disabled", "--allow-files"),
    ),
    Case(
        "sql-attach",
        ("sql", "--db", "{db}", "ATTACH '{tmp}/other.duckdb' AS o"),
        ("--allow-files",),
    ),
    Case("sql-install", ("sql", "--db", "{db}", "INSTALL spatial"), ("--allow-files",)),
    Case(
        "sql-set-config", ("sql", "--db", "{db}", "SET enable_external_access = true"), ("locked",)
    ),
    Case(
        "sql-insert-read-only",
        ("sql", "--db", "{db}", "INSERT INTO study (name) VALUES ('x')"),
        ("read-only",),
    ),
    Case("sql-drop-read-only", ("sql", "--db", "{db}", "DROP TABLE scores"), ("read-only",)),
    Case(
        "sql-write-bad-insert",
        (
            "sql",
            "--write",
            "--db",
            "{db}",
            "INSERT INTO measures (name, kind) VALUES ('x', 'oracle')",
        ),
        ("constraint",),
    ),
    Case(
        "sql-write-copy",
        ("sql", "--write", "--db", "{db}", "COPY scores TO '{tmp}/dump.csv'"),
        ("--allow-files",),
    ),
]

SOURCE = [
    Case(
        "db-missing",
        ("correlate", "--db", "{tmp}/typo.duckdb"),
        ("--db", "typo.duckdb", "no such store file"),
        store="none",
    ),
    Case(
        "db-not-duckdb",
        ("correlate", "--db", "{tmp}/text.duckdb"),
        ("text.duckdb",),
        files={"text.duckdb": "hello\n"},
        store="none",
    ),
    Case(
        "db-and-data",
        ("correlate", "--db", "{db}", "--data", "{hanna}"),
        ("--db", "--data", "not allowed"),
    ),
    Case("data-missing", ("correlate", "--data", "{tmp}/nowhere"), ("nowhere",), store="none"),
    Case(
        "data-empty-folder",
        ("correlate", "--data", "{tmp}/folder"),
        ("folder", "hanna_metric_scores.csv"),
        files={"folder/": None},
        store="none",
    ),
    Case("unknown-command", ("correlat",), ("invalid choice", "'correlat'"), store="none"),
    Case("bad-format", ("correlate", "--db", "{db}", "--format", "xml"), ("--format", "'xml'")),
    Case(
        "no-human-criteria",
        ("correlate", "--db", "{db}"),
        ("no human criteria", "kind 'human'", "--human", "--against metrics"),
        store="metrics-only",
    ),
    Case(
        "williams-two-systems",
        ("williams", "--db", "{db}", "--criterion", "Fluency"),
        ("2 systems", "at least 4"),
        store="two-systems",
    ),
]


def analysis(id: str, *args: str, words: tuple[str, ...], store: str = "hanna") -> Case:
    return Case(id, (args[0], "--db", "{db}", *args[1:]), words, store=store)


ANALYSES = [
    analysis(
        "correlate-level", "correlate", "--level", "galaxy", words=("--level", "'galaxy'", "story")
    ),
    analysis(
        "correlate-method", "correlate", "--method", "tau", words=("--method", "'tau'", "kendall")
    ),
    analysis(
        "correlate-kinds", "correlate", "--kinds", "metric,oracle", words=("oracle", "llm-judge")
    ),
    analysis("correlate-variant", "correlate", "--variant", "z", words=("--variant", "'z'")),
    analysis(
        "correlate-nan-policy",
        "correlate",
        "--nan-policy",
        "maybe",
        words=("--nan-policy", "'maybe'"),
    ),
    analysis(
        "correlate-against", "correlate", "--against", "nobody", words=("--against", "'nobody'")
    ),
    analysis("williams-no-criterion", "williams", words=("--criterion", "required")),
    analysis(
        "williams-unknown-criterion", "williams", "--criterion", "XX", words=("'XX'", "Relevance")
    ),
    analysis(
        "williams-n-small", "williams", "--criterion", "RE", "--n", "2", words=("n=2", "at least 4")
    ),
    analysis(
        "williams-n-text", "williams", "--criterion", "RE", "--n", "ten", words=("--n", "'ten'")
    ),
    analysis(
        "williams-alternative",
        "williams",
        "--criterion",
        "RE",
        "--alternative",
        "up",
        words=("--alternative", "'up'"),
    ),
    analysis(
        "williams-correction",
        "williams",
        "--criterion",
        "RE",
        "--correction",
        "magic",
        words=("--correction", "'magic'"),
    ),
    analysis(
        "bootstrap-resamples-zero",
        "bootstrap-pairs",
        "--resamples",
        "0",
        words=("--resamples", "0"),
    ),
    analysis(
        "bootstrap-resamples-huge",
        "bootstrap-pairs",
        "--resamples",
        "10000000",
        words=("--resamples", "1,000,000"),
    ),
    analysis(
        "bootstrap-resamples-text",
        "bootstrap-pairs",
        "--resamples",
        "many",
        words=("--resamples", "'many'"),
    ),
    analysis(
        "bootstrap-alpha",
        "bootstrap-pairs",
        "--alpha",
        "1.5",
        "--resamples",
        "10",
        words=("alpha", "1.5"),
    ),
    analysis(
        "bootstrap-seed-negative", "bootstrap-pairs", "--seed", "-1", words=("--seed", "2**63")
    ),
    analysis(
        "bootstrap-seed-huge", "bootstrap-pairs", "--seed", str(2**80), words=("--seed", "2**63")
    ),
    analysis(
        "ci-confidence-high",
        "ci",
        "--confidence",
        "1.5",
        "--resamples",
        "10",
        words=("confidence", "1.5"),
    ),
    analysis(
        "ci-confidence-zero",
        "ci",
        "--confidence",
        "0",
        "--resamples",
        "10",
        words=("confidence", "0"),
    ),
    analysis("ci-resample", "ci", "--resample", "galaxies", words=("--resample", "'galaxies'")),
    analysis("ci-method", "ci", "--ci-method", "magic", words=("--ci-method", "'magic'")),
    analysis("ci-level-global", "ci", "--level", "global", words=("--level", "'global'")),
    analysis(
        "permutation-negative",
        "permutation",
        "--criterion",
        "RE",
        "--permutations",
        "-5",
        words=("--permutations", "-5"),
    ),
    analysis("permutation-criterion", "permutation", "--criterion", "Beauty", words=("'Beauty'",)),
    analysis("topk-ks-text", "topk", "--ks", "a-b", words=("--ks", "'a-b'")),
    analysis("topk-ks-small", "topk", "--ks", "1", words=("ks=[1]", "between 3 and 10")),
    analysis("topk-ks-large", "topk", "--ks", "50", words=("ks=[50]", "between 3 and 10")),
    analysis("agreement-measure", "agreement", "--measures", "XX", words=("'XX'", "Relevance")),
    analysis("agreement-kinds", "agreement", "--kinds", "judge", words=("kinds", "'judge'")),
    analysis("judge-williams-n", "judge-williams", "--n", "2", words=("n=2", "at least 4")),
    analysis(
        "correlate-pvalue-story",
        "correlate",
        "--pvalue-method",
        "auto",
        words=("item-level", "level='system'"),
    ),
    analysis("agreement-confidence", "agreement", "--confidence", "2", words=("confidence", "2")),
    analysis(
        "system-means-confidence", "system-means", "--confidence", "-1", words=("confidence", "-1")
    ),
    analysis(
        "report-alpha", "report", "--alpha", "2", "--out", "{tmp}/r.html", words=("alpha", "2")
    ),
    analysis(
        "report-resamples",
        "report",
        "--resamples",
        "0",
        "--out",
        "{tmp}/r.html",
        words=("--resamples", "0"),
    ),
    analysis("report-out-is-folder", "report", "--out", "{tmp}", words=("--out", "folder")),
    Case(
        "report-tables-is-file",
        ("report", "--db", "{db}", "--tables", "{tmp}/x.csv", "--out", "{tmp}/r.html"),
        ("--tables", "x.csv"),
        store="hanna",
        files={"x.csv": "a\n"},
    ),
    analysis(
        "report-williams-level",
        "report",
        "--williams-level",
        "global",
        words=("--williams-level", "'global'"),
    ),
    analysis("judges-reference", "judges", "--reference", "self", words=("--reference", "'self'")),
    analysis("judges-method", "judges", "--method", "acc_eq", words=("--method", "'acc_eq'")),
    analysis(
        "judges-without-judges",
        "judges",
        words=("no LLM-judge measures", "hanna_metric_scores_llm.csv"),
        store="tidy",
    ),
    analysis(
        "rater-panel-without-ratings",
        "rater-panel",
        words=("no rater-level ratings", "`rater` column"),
        store="metrics-only",
    ),
    analysis("report-ties", "report", "--ties", "dense", words=("--ties", "'dense'")),
]

SCORE = [
    Case(
        "score-missing-input",
        ("score", "--input", "{tmp}/none.csv", "--out", "{tmp}/o.csv"),
        ("none.csv", "not found"),
        store="none",
    ),
    Case(
        "score-unknown-metric",
        ("score", "--input", "{tmp}/t.csv", "--metrics", "NOPE", "--out", "{tmp}/o.csv"),
        ("NOPE",),
        files={"t.csv": "input,system,prompt,reference,story\np,A,x,y,z\n"},
        store="none",
    ),
    Case(
        "score-missing-column",
        ("score", "--input", "{tmp}/t.csv", "--metrics", "BLEU", "--out", "{tmp}/o.csv"),
        ("t.csv", "story"),
        files={"t.csv": "input,system,prompt,reference\np,A,x,y\n"},
        store="none",
    ),
    Case("score-no-input", ("score", "--out", "{tmp}/o.csv"), ("--input",), store="none"),
    Case(
        "score-bad-out-suffix",
        ("score", "--input", "{tmp}/t.csv", "--metrics", "BLEU", "--out", "{tmp}/o.txt"),
        ("o.txt",),
        files={"t.csv": "input,system,prompt,reference,story\np,A,x,y,z\n"},
        store="none",
    ),
]

CASES = TIDY + HANNA_FILES + SQL + SOURCE + ANALYSES + SCORE


# --------------------------------------------------------------------------- stores and digests


def digest(path: Path) -> dict[str, str]:
    """SHA-256 of every table's rows (sorted), by table name."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        tables = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_type = 'BASE TABLE' ORDER BY table_name"
            ).fetchall()
        ]
        return {
            t: hashlib.sha256(
                repr(sorted(map(repr, con.execute(f'SELECT * FROM "{t}"').fetchall()))).encode()
            ).hexdigest()
            for t in tables
        }
    finally:
        con.close()


def _ingest_ok(db: Path, path: Path, *more: str) -> None:
    assert main(["ingest", "--db", str(db), str(path), *more]) == 0


@pytest.fixture(scope="module")
def stores(tmp_path_factory, hanna_dir) -> dict[str, Path]:
    """The stores a case can name, built once: ``tidy`` (the base study, named 'base'),
    ``hanna`` (the HANNA files), ``metrics-only`` (no human measure), ``two-systems``, ``empty``
    (a store with the schema and nothing else)."""
    root = tmp_path_factory.mktemp("stores")
    built = {}
    (root / "base.csv").write_text(BASE)
    built["tidy"] = root / "tidy.duckdb"
    _ingest_ok(built["tidy"], root / "base.csv")
    built["hanna"] = root / "hanna.duckdb"
    _ingest_ok(built["hanna"], hanna_dir)
    (root / "metrics.csv").write_text(tidy_csv([r for r in study_rows() if r[5] is None]))
    built["metrics-only"] = root / "metrics.duckdb"
    _ingest_ok(built["metrics-only"], root / "metrics.csv")
    (root / "pair.csv").write_text(tidy_csv(study_rows(systems=("A", "B"))))
    built["two-systems"] = root / "pair.duckdb"
    _ingest_ok(built["two-systems"], root / "pair.csv")
    built["empty"] = root / "empty.duckdb"
    from hanna_stats.store import open_store

    open_store(built["empty"]).close()
    return built


def _write_files(case: Case, tmp: Path, hanna_dir: Path) -> None:
    for name, content in case.files.items():
        path = tmp / name
        if name.endswith("/"):
            path.mkdir()
        elif isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        elif getattr(content, "needs_hanna", False):
            content(path, hanna_dir)
        else:
            content(path)


def _listing(folder: Path) -> list[str]:
    """Every path under ``folder`` but DuckDB's write-ahead log."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.suffix != ".wal")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, stores, hanna_dir, tmp_path, capsys):
    db = tmp_path / "store.duckdb"
    if case.store in stores:
        shutil.copyfile(stores[case.store], db)
    _write_files(case, tmp_path, hanna_dir)
    before_files = _listing(tmp_path)
    before = digest(db) if db.exists() else None
    args = [a.format(db=db, tmp=tmp_path, hanna=hanna_dir) for a in case.args]
    try:
        code = main(args)
    except SystemExit as exit_:  # argparse
        code = exit_.code
    out, err = capsys.readouterr()
    assert code == case.code, err
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith(("error: ", "python -m hanna_stats")), err
    missing = [w for w in case.words if w.lower() not in err.lower()]
    assert not missing, f"{missing} not in {err!r}"
    assert _listing(tmp_path) == before_files, "a file was left behind"
    if before is not None:
        assert digest(db) == before


def test_the_table_has_enough_cases():
    assert len(CASES) >= 80
    assert len({c.id for c in CASES}) == len(CASES)


# --------------------------------------------------------------------------- faults


def _module(*args, **kwargs):
    return subprocess.Popen(
        [sys.executable, "-m", "hanna_stats", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=SUBPROCESS_ENV,
        **kwargs,
    )


@pytest.fixture
def big_tidy(tmp_path) -> Path:
    """A tidy file large enough that its ingest takes about a second (1.2 million rows)."""
    n_items, n_measures = 40_000, 30
    items = [f"it{i}" for i in range(n_items)]
    df = pl.DataFrame(
        {
            "item": pl.Series(items).repeat_by(n_measures).explode(),
            "measure": [f"m{j}" for j in range(n_measures)] * n_items,
        }
    ).with_columns(
        input=pl.col("item").str.slice(2).cast(pl.Int64).floordiv(10).cast(pl.String),
        system=pl.col("item").str.slice(2).cast(pl.Int64).mod(10).cast(pl.String),
        value=pl.int_range(pl.len()).cast(pl.Float64) / 7,
    )
    path = tmp_path / "big.parquet"
    df.write_parquet(path)
    return path


@pytest.mark.parametrize("delay", [0.5, 1.0, 1.5, 2.5])
def test_killed_ingest_leaves_the_old_content_or_the_new(delay, stores, big_tidy, tmp_path):
    db = tmp_path / "store.duckdb"
    shutil.copyfile(stores["tidy"], db)
    old = digest(db)
    proc = _module("ingest", "--extend", "--db", db, big_tidy)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    after = digest(db)
    # Completed or not, the ingest is atomic; the re-run then gives the full store once.
    _ingest_ok(db, big_tidy, "--extend")
    full = digest(db)
    assert after in (old, full)
    _ingest_ok(db, big_tidy, "--extend")
    assert {k: v for k, v in digest(db).items() if k != "ingests"} == {
        k: v for k, v in full.items() if k != "ingests"
    }


def _hold(db: Path):
    """A second process holding the store open read-write until it is killed."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('ready', flush=True);"
            " time.sleep(60)",
            str(db),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "ready"
    return holder


@pytest.mark.parametrize(
    "command",
    [
        ("ingest", "--db", "{db}", "{tmp}/more.csv"),
        ("sql", "--db", "{db}", "SELECT count(*) FROM scores"),
        ("correlate", "--db", "{db}"),
    ],
    ids=["second-writer", "reader-during-write", "analysis-during-write"],
)
def test_locked_store_fails_at_once(command, stores, tmp_path):
    db = tmp_path / "store.duckdb"
    shutil.copyfile(stores["tidy"], db)
    (tmp_path / "more.csv").write_text(tidy_csv(study_rows(("p6",))))
    old = digest(db)
    holder = _hold(db)
    try:
        start = time.monotonic()
        proc = _module(*(a.format(db=db, tmp=tmp_path) for a in command))
        out, err = proc.communicate(timeout=60)
        elapsed = time.monotonic() - start
    finally:
        holder.kill()
        holder.wait()
    assert proc.returncode == 2 and out == ""
    assert len(err.splitlines()) == 1 and "lock" in err.lower(), err
    assert elapsed < 30
    assert digest(db) == old


@contextlib.contextmanager
def _tmpfs(folder: Path, options: str):
    """A tmpfs mounted at ``folder`` with ``options`` for the block; the test is skipped where
    mounting is not allowed."""
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 16 MiB tmpfs at ``tmp_path / 'small'`` (skipped where mounting is not allowed)."""
    mount = tmp_path / "small"
    mount.mkdir()
    with _tmpfs(mount, "size=16m"):
        yield mount


def test_full_disk_during_ingest_changes_nothing(stores, big_tidy, small_tmpfs):
    db = small_tmpfs / "store.duckdb"
    shutil.copyfile(stores["tidy"], db)
    old = digest(db)
    proc = _module("ingest", "--extend", "--db", db, big_tidy)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 2, err
    assert len(err.splitlines()) == 1 and "space" in err.lower(), err
    assert digest(db) == old


def test_full_disk_during_report_tables_keeps_the_old_set(stores, small_tmpfs, tmp_path):
    tables = small_tmpfs / "tables"
    out = tmp_path / "r.html"
    db = stores["tidy"]
    first = _module("report", "--db", db, "--out", out, "--tables", tables, "--resamples", "20")
    assert first.wait(timeout=300) == 0
    before = {p.name: p.read_bytes() for p in tables.iterdir()}
    filler = small_tmpfs / "filler"
    with open(filler, "wb") as f:  # fill the disk but a few kB
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    second = _module("report", "--db", db, "--out", out, "--tables", tables, "--resamples", "20")
    _, err = second.communicate(timeout=300)
    assert second.returncode == 2, err
    assert len(err.splitlines()) == 1 and "space" in err.lower(), err
    assert {p.name: p.read_bytes() for p in tables.iterdir()} == before
    assert sorted(p.name for p in small_tmpfs.iterdir()) == ["filler", "tables"]


@pytest.fixture
def read_only_folder(tmp_path):
    """A folder no one may write to: mode 555 for a normal user; for root (whom the mode does
    not stop), a read-only tmpfs, skipped where mounting is not allowed."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    with _tmpfs(folder, "ro,size=1m"):
        yield folder


def test_read_only_folder(stores, read_only_folder, tmp_path):
    (tmp_path / "base.csv").write_text(BASE)
    proc = _module("ingest", "--db", read_only_folder / "store.duckdb", tmp_path / "base.csv")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and len(err.splitlines()) == 1, err
    assert "store.duckdb" in err, err
    report = _module("report", "--db", stores["tidy"], "--out", read_only_folder / "r.html")
    _, err = report.communicate(timeout=300)
    assert report.returncode == 2 and len(err.splitlines()) == 1, err
    assert "r.html" in err, err
    assert list(read_only_folder.iterdir()) == []
