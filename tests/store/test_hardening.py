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
import gzip
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl
import pytest

from hanna_stats.cli import main
from hanna_stats.store.user_study import EXPLANATION, FLAG_COLUMNS, STORY_ID

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
#: One row whose value is text.
TEXT_VALUE = pl.DataFrame(
    {"item": ["a"], "input": ["p1"], "system": ["A"], "measure": ["BLEU"], "value": ["x"]}
)
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
        parquet(TEXT_VALUE),
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
        ("williams", "--db", "{db}", "--criterion", "Fluency", "--level", "system"),
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
        "williams-n-small",
        "williams",
        "--criterion",
        "RE",
        "--n",
        "2",
        words=("--n", "'2'", "at least 4"),
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
    analysis("judge-williams-n", "judge-williams", "--n", "2", words=("--n", "'2'", "at least 4")),
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

# --------------------------------------------------------------------------- hostile inputs


def gz(content: str | bytes) -> bytes:
    """``content`` gzip-compressed (mtime 0: the same bytes every run)."""
    return gzip.compress(content.encode() if isinstance(content, str) else content, mtime=0)


def parquet_gz(df: pl.DataFrame):
    def write(path: Path) -> None:
        buffer = io.BytesIO()
        df.write_parquet(buffer)
        path.write_bytes(gz(buffer.getvalue()))

    return write


def summeval_case(id: str, content, words: tuple[str, ...], **kw) -> Case:
    """A SummEval file into the empty store (the file is refused before the study matters)."""
    return tidy_case(id, content, words, name=kw.pop("name", SUMMEVAL), store="empty", **kw)


def with_metric(value_json: str) -> str:
    """A SummEval line whose ``metric_scores_1`` holds ``{"bleu": <value_json>}`` verbatim."""
    line = summeval_line()
    return line[:-2] + f', "metric_scores_1": {{"bleu": {value_json}}}}}\n'


HOSTILE_SUMMEVAL = [
    summeval_case(
        "summeval-metric-400-digits",
        with_metric("1" + "0" * 400),
        ("row 1", "401 digits", "out of range"),
    ),
    summeval_case(
        "summeval-metric-5000-digits",
        with_metric("9" * 5000),
        ("row 1", "5000 digits", "out of range"),
    ),
    summeval_case(
        "summeval-nested-100000-deep",
        summeval_line()[:-2] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
        ("row 1", "invalid JSON", "nested deeper"),
    ),
    summeval_case(
        "summeval-lone-surrogate",
        summeval_line() + summeval_line(model_id="M1").replace("A summary.", "A \\ud800 summary."),
        ("row 2", "lone surrogate", "\\ud800"),
    ),
    summeval_case(
        "summeval-duplicate-model-id",
        summeval_line().replace('"model_id": "M0"', '"model_id": "M0", "model_id": "M1"'),
        ("row 1", "column 'model_id'", "given twice"),
    ),
    summeval_case(
        "summeval-duplicate-key-in-rating",
        summeval_line().replace('"fluency": 5', '"fluency": 5, "fluency": 1', 1),
        ("row 1", "'fluency'", "given twice"),
    ),
    summeval_case(
        "summeval-truncated-last-line",
        summeval_line() + summeval_line(model_id="M1")[:60],
        ("row 2", "invalid JSON"),
    ),
    summeval_case(
        "summeval-nul-line", summeval_line().encode() + b"\x00\n", ("row 2", "invalid JSON")
    ),
    summeval_case(
        "summeval-control-character-in-model-id",
        summeval_line(model_id="M\x1b[31m0"),
        ("row 1", "column 'model_id'", "control character", "U+001B"),
    ),
    summeval_case("summeval-utf16", summeval_line().encode("utf-16"), ("row 1", "not valid UTF-8")),
    summeval_case("summeval-array-line", "[1, 2]\n", ("row 1", "expected a JSON object")),
    summeval_case(
        "summeval-rating-text",
        summeval_line(expert_annotations=[{**RATING, "fluency": "5"}]),
        ("row 1", "'expert_annotations[0].fluency'", 'got "5"'),
    ),
    summeval_case(
        "summeval-rating-bool",
        summeval_line(expert_annotations=[{**RATING, "coherence": True}]),
        ("row 1", "'expert_annotations[0].coherence'", "got true"),
    ),
    summeval_case(
        "summeval-rating-half",
        summeval_line(turker_annotations=[{**RATING, "relevance": 2.5}]),
        ("row 1", "'turker_annotations[0].relevance'", "whole number", "2.5"),
    ),
    summeval_case(
        "summeval-metric-nan-text",
        summeval_line(metric_scores_1={"bleu": "NaN"}),
        ("row 1", "'metric_scores_1.bleu'", "finite number", '"NaN"'),
    ),
    summeval_case(
        "summeval-metric-infinity",
        with_metric("Infinity"),
        ("row 1", "'metric_scores_1.bleu'", "finite number", "Infinity"),
    ),
    summeval_case(
        "summeval-metric-1e400",
        with_metric("1e400"),
        ("row 1", "'metric_scores_1.bleu'", "finite number"),
    ),
    summeval_case(
        "summeval-metric-two-number-list",
        summeval_line(metric_scores_1={"supert": [0.1, 0.2]}),
        ("row 1", "'metric_scores_1.supert'", "one-number list"),
    ),
    summeval_case(
        "summeval-empty-id", summeval_line(id=" "), ("row 1", "column 'id'", "empty value")
    ),
    summeval_case(
        "summeval-model-id-number",
        summeval_line(model_id=7),
        ("row 1", "column 'model_id'", "expected a string", "7"),
    ),
    summeval_case(
        "summeval-same-summary-twice",
        summeval_line() + summeval_line(expert_annotations=[RATING]),
        ("row 2", "duplicate summary", "also row 1"),
    ),
    summeval_case(
        "summeval-text-differs",
        summeval_line(text="An article.") + summeval_line(model_id="M1", text="Another one."),
        ("row 2", "column 'text'", "another text than on row 1"),
    ),
    summeval_case("summeval-empty", b"", ("empty", "0 bytes")),
    summeval_case("summeval-blank-lines", "\n \n\n", ("no data lines",)),
    summeval_case(
        "summeval-gz-bad-json",
        gz(summeval_line() + '{"id": 1,\n'),
        ("row 2", "invalid JSON"),
        name=SUMMEVAL + ".gz",
    ),
    summeval_case(
        "summeval-gz-truncated",
        gz(summeval_line() * 20)[:40],
        ("not a valid gzip file",),
        name=SUMMEVAL + ".gz",
    ),
    summeval_case(
        "summeval-gz-not-compressed",
        summeval_line(),
        ("named .gz", "not gzip-compressed"),
        name=SUMMEVAL + ".gz",
    ),
    summeval_case(
        "summeval-gz-empty-content",
        gz(b""),
        ("empty", "once uncompressed"),
        name=SUMMEVAL + ".gz",
    ),
]

LIKERT_HEADER = "item,input,system,measure,value,rater,scale_min"


def bad_value(id: str, value: str, words: tuple[str, ...]) -> Case:
    """The base study plus a BLEU row (row 101) whose value is ``value``."""
    row = ("p9-A", "p9", "A", "BLEU", value, None)
    return tidy_case(id, with_row(row), ("row 101", "column 'value'", *words))


HOSTILE_TIDY = [
    tidy_case(
        "human-rating-off-inferred-scale",
        with_row(("p9-A", "p9", "A", "Fluency", 7, "r1")),
        ("row 101", "column 'value'", "value 7", "'Fluency'", "from 1 to 5"),
    ),
    tidy_case(
        "human-rating-off-declared-scale",
        with_row(("p9-A", "p9", "A", "Fluency", 7, "r1")),
        ("row 101", "column 'value'", "value 7", "'Fluency'", "from 1 to 5"),
        store="none",
        more=("--scale", "Fluency=1..5"),
    ),
    Case(
        "scale-option-form",
        ingest("bad.csv", more=("--scale", "Fluency=1-5")),
        ("--scale", "NAME=LO..HI", "'Fluency=1-5'"),
        files={"bad.csv": BASE},
    ),
    Case(
        "scale-option-reversed",
        ingest("bad.csv", more=("--scale", "Fluency=5..1")),
        ("--scale", "LO < HI", "5.0..1.0"),
        files={"bad.csv": BASE},
    ),
    Case(
        "scale-option-infinite",
        ingest("bad.csv", more=("--scale", "Fluency=1..inf")),
        ("--scale", "finite"),
        files={"bad.csv": BASE},
    ),
    tidy_case(
        "scale-option-absent-measure",
        BASE,
        ("column 'measure'", "'Nope'", "--scale", "not in the file"),
        store="none",
        more=("--scale", "Nope=1..5"),
    ),
    tidy_case(
        "scale-option-conflicts-with-file",
        tidy_csv([("p1-A", "p1", "A", "Fl", 3, "r1", 0)], LIKERT_HEADER),
        ("row 1", "column 'scale_min'", "'Fl'", "--scale"),
        store="none",
        more=("--scale", "Fl=1..5"),
    ),
    Case(
        "scale-option-twice",
        ingest("bad.csv", more=("--scale", "Fluency=1..5", "--scale", "Fluency=1..7")),
        ("--scale", "'Fluency'", "twice"),
        files={"bad.csv": BASE},
        store="none",
    ),
    tidy_case(
        "control-character-in-system",
        with_row(("p9-A", "p9", "A\x1b[31m", "BLEU", 1, None)),
        ("row 101", "column 'system'", "control character", "U+001B"),
    ),
    tidy_case(
        "nul-in-measure",
        with_row(("p9-A", "p9", "A", "BL\x00EU", 1, None)),
        ("row 101", "column 'measure'", "U+0000"),
    ),
    tidy_case(
        "newline-in-quoted-item",
        BASE + '"p9\nA",p9,A,BLEU,1,\n',
        ("row 101", "column 'item'", "U+000A"),
    ),
    bad_value("value-400-digits", "1" + "0" * 400, ("finite number", "...")),
    bad_value("value-2mb-text", "x" * 2_000_000, ("expected a number", "...")),
    bad_value("value-hex", "0x10", ("'0x10'",)),
    bad_value("value-decimal-comma", '"0,5"', ("'0,5'",)),
    tidy_case(
        "semicolon-separated",
        BASE.replace(",", ";"),
        ("column 'item'", "one column", "comma-separated", "';'"),
    ),
    tidy_case(
        "second-byte-order-mark",
        "\ufeff\ufeff" + BASE,
        ("column 'item'", "second byte-order mark"),
    ),
    tidy_case("utf16", BASE.encode("utf-16"), ("not valid UTF-8", "0xff")),
    tidy_case(
        "latin1-row",
        (BASE + "p9-é,p9,A,BLEU,1,\n").encode("latin-1"),
        ("row 101", "not valid UTF-8", "0xe9"),
    ),
    tidy_case(
        "gz-bad-row",
        gz(BASE + "p9-A,p9,A,BLEU,high,\n"),
        ("row 101", "column 'value'", "'high'"),
        name="bad.csv.gz",
    ),
    tidy_case(
        "gz-bad-utf8",
        gz(BASE.encode() + b"p9-A,p9,A,BLEU,0.\xff,\n"),
        ("row 101", "not valid UTF-8", "uncompressed"),
        name="bad.csv.gz",
    ),
    tidy_case("gz-truncated", gz(BASE)[:50], ("not a valid gzip file",), name="bad.csv.gz"),
    tidy_case(
        "gz-parquet-text-value",
        parquet_gz(TEXT_VALUE),
        ("row 1", "column 'value'", "'x'"),
        name="bad.parquet.gz",
    ),
    tidy_case(
        "kind-capitalised",
        tidy_csv([("p1-A", "p1", "A", "X", 1, "Metric")], "item,input,system,measure,value,kind"),
        ("row 1", "column 'kind'", "'Metric'", "'metric'"),
    ),
    tidy_case(
        "judge-value-nan-without-answer",
        tidy_csv(
            [("p1-A", "p1", "A", "J", "nan", "1", "J1")],
            "item,input,system,measure,value,rater,judge",
        ),
        ("row 1", "column 'value'", "or its answer"),
    ),
    tidy_case(
        "judge-two-criteria-one-measure",
        tidy_csv(
            [
                ("p1-A", "p1", "A", "J", 3, "1", "J1", "Fluency"),
                ("p1-B", "p1", "B", "J", 2, "1", "J1", "Coherence"),
            ],
            "item,input,system,measure,value,rater,judge,criterion",
        ),
        ("row 2", "column 'criterion'", "'Coherence'"),
    ),
    tidy_case(
        "judge-try-twice",
        tidy_csv(
            [("p1-A", "p1", "A", "J", 3, "1", "J1"), ("p1-A", "p1", "A", "J", 4, "1", "J1")],
            "item,input,system,measure,value,rater,judge",
        ),
        ("row 2", "duplicate row", "also row 1"),
    ),
    tidy_case(
        "judge-off-scale-answer",
        tidy_csv(
            [("p1-A", "p1", "A", "J", 11, "1", "J1", 1, 10, "I'd say 11")],
            "item,input,system,measure,value,rater,judge,scale_min,scale_max,answer",
        ),
        ("row 1", "column 'value'", "11", "'J'", "--scale-policy"),
    ),
]


def user_study(*rows: str) -> str:
    """A user-study file: its header, then ``rows``."""
    return "\n".join([",".join([STORY_ID, EXPLANATION, *FLAG_COLUMNS.values()]), *rows]) + "\n"


def flags(story_id: str = "8", values: str = "0,0,0,0,0,0") -> str:
    return f'{story_id},"A weak story.",{values}'


def user_study_case(id: str, content, words: tuple[str, ...], name: str = "user_study.csv"):
    return Case(id, ("user-study", f"{{tmp}}/{name}"), (name, *words), "none", {name: content})


HOSTILE_USER_STUDY = [
    user_study_case(
        "user-study-20-digit-story-id",
        user_study(*[flags("12345678901234567890")] * 3),
        ("row 1", "column 'Input.story_id'", "2**63 - 1", "'12345678901234567890'"),
    ),
    user_study_case(
        "user-study-arabic-digits",
        user_study(*[flags("١٢")] * 3),
        ("row 1", "column 'Input.story_id'", "integer"),
    ),
    user_study_case(
        "user-study-flag-2",
        user_study(flags(), flags(values="0,0,2,0,0,0"), flags()),
        ("row 2", "column 'Answer.a-3-superfluous.1'", "0 or 1", "'2'"),
    ),
    user_study_case(
        "user-study-short-triple",
        user_study(flags(), flags()),
        ("row 2", "not a multiple of 3"),
    ),
    user_study_case(
        "user-study-ids-differ-in-triple",
        user_study(flags(), flags("9"), flags()),
        ("row 2", "column 'Input.story_id'", "differs"),
    ),
    user_study_case("user-study-empty", b"", ("empty", "0 bytes")),
    user_study_case(
        "user-study-missing-column",
        "Input.story_id,Input.explanation\n8,x\n",
        ("column 'Answer.a-1-guidelines.1'", "missing column"),
    ),
    user_study_case(
        "user-study-gz-truncated",
        gz(user_study(*[flags()] * 3))[:30],
        ("not a valid gzip file",),
        name="user_study.csv.gz",
    ),
]

HOSTILE_HANNA = [
    Case(
        "annotations-story-id-24-digits",
        ingest("hanna_annotations_raw.csv", more=("--format", "hanna-annotations")),
        ("hanna_annotations_raw.csv", "row 1", "column 'Story ID'", "non-negative integer"),
        files={
            "hanna_annotations_raw.csv": annotations(
                ANN_ROW.format(r="3", w="w1").replace("0,", "1" * 24 + ",", 1)
            )
        },
        store="empty",
    ),
    Case(
        "annotations-story-id-superscript",
        ingest("hanna_annotations_raw.csv", more=("--format", "hanna-annotations")),
        ("hanna_annotations_raw.csv", "row 1", "column 'Story ID'", "'²'"),
        files={
            "hanna_annotations_raw.csv": annotations(
                ANN_ROW.format(r="3", w="w1").replace("0,", "²,", 1)
            )
        },
        store="empty",
    ),
    Case(
        "annotations-rating-400-digits",
        ingest("hanna_annotations_raw.csv", more=("--format", "hanna-annotations")),
        ("hanna_annotations_raw.csv", "row 1", "column 'Relevance'", "finite", "..."),
        files={"hanna_annotations_raw.csv": annotations(ANN_ROW.format(r="1" * 400, w="w1"))},
        store="empty",
    ),
    Case(
        "hanna-metric-cell-400-digits",
        ingest("hanna_metric_scores.csv"),
        ("hanna_metric_scores.csv", "row 1", "column 'Relevance'", "out of range"),
        files={
            "hanna_metric_scores.csv": hanna_variant(
                "hanna_metric_scores.csv", lambda t: t.replace('"[', '"[' + "9" * 400 + ", ", 1)
            )
        },
        store="empty",
    ),
    Case(
        "hanna-metric-cell-nested-5000-deep",
        ingest("hanna_metric_scores.csv"),
        # Python 3.11 stops at its recursion limit ("nested deeper than ..."), 3.13 parses on to
        # the unbalanced bracket: one line naming the cell either way.
        ("hanna_metric_scores.csv", "row 1", "column 'Relevance'", "invalid JSON"),
        files={
            "hanna_metric_scores.csv": hanna_variant(
                "hanna_metric_scores.csv",
                lambda t: t.replace('"[', '"' + "[" * 5000 + "]" * 4999, 1),
            )
        },
        store="empty",
    ),
]


def wmt_test_set(edit=None, n: int = 3, systems=("sysA", "sysB", "sysC")) -> dict[str, str]:
    """A small WMT test set in MTME's layout (one pair, en-de; reference refA; MQM and BLEU), its
    files by path under ``ts/``; ``edit(files)`` changes them in place."""
    files = {
        "ts/sources/en-de.txt": "".join(f"source {i}\n" for i in range(n)),
        "ts/references/en-de.refA.txt": "".join(f"reference {i}\n" for i in range(n)),
        "ts/human-scores/en-de.mqm.seg.score": "".join(
            f"{s}\t{-(i + j)}\n" for j, s in enumerate(systems) for i in range(n)
        ),
        "ts/metric-scores/en-de/BLEU-refA.seg.score": "".join(
            f"{s}\t{10 * i + j}\n" for j, s in enumerate(systems) for i in range(n)
        ),
    }
    for s in systems:
        files[f"ts/system-outputs/en-de/{s}.txt"] = "".join(f"{s} out {i}\n" for i in range(n))
    if edit is not None:
        edit(files)
    return files


MQM = "ts/human-scores/en-de.mqm.seg.score"
BLEU = "ts/metric-scores/en-de/BLEU-refA.seg.score"


def edit_file(path: str, change):
    def edit(files: dict) -> None:
        files[path] = change(files[path])

    return edit


def wmt_case(id: str, edit, words: tuple[str, ...], *more: str, store: str = "none") -> Case:
    return Case(id, ("ingest", "--db", "{db}", "{tmp}/ts", *more), words, store, wmt_test_set(edit))


HOSTILE_WMT = [
    wmt_case(
        "wmt-score-inf",
        edit_file(MQM, lambda t: t.replace("\t-1\n", "\tinf\n", 1)),
        ("en-de.mqm.seg.score", "row 2", "column 'score'", "'inf'"),
    ),
    wmt_case(
        "wmt-score-nan",
        edit_file(MQM, lambda t: t.replace("\t-1\n", "\tnan\n", 1)),
        ("en-de.mqm.seg.score", "row 2", "'nan'"),
    ),
    wmt_case(
        "wmt-score-text",
        edit_file(BLEU, lambda t: t.replace("\t10\n", "\tten\n", 1)),
        ("BLEU-refA.seg.score", "row 2", "'ten'"),
        store="empty",
    ),
    wmt_case(
        "wmt-score-nul",
        edit_file(MQM, lambda t: t.replace("\t-1\n", "\t-1\x00\n", 1)),
        ("en-de.mqm.seg.score", "row 2", "\\x00"),
    ),
    wmt_case(
        "wmt-scores-truncated",
        edit_file(BLEU, lambda t: t.rsplit("\n", 2)[0] + "\n"),
        ("BLEU-refA.seg.score", "'sysC'", "2 scores, expected 3"),
    ),
    wmt_case(
        "wmt-unknown-system",
        edit_file(BLEU, lambda t: t + "sysZ\t1\n"),
        ("BLEU-refA.seg.score", "row 10", "'sysZ'", "no output file"),
    ),
    wmt_case(
        "wmt-system-scored-twice",
        edit_file(BLEU, lambda t: t + "sysA\t5\n"),
        ("BLEU-refA.seg.score", "row 10", "'sysA'", "more than 3"),
    ),
    wmt_case(
        "wmt-latin1-line",
        edit_file(MQM, lambda t: t.encode() + b"sysA\t\xe9\n"),
        ("en-de.mqm.seg.score", "row 10", "not valid UTF-8"),
    ),
    wmt_case(
        "wmt-empty-score-file",
        edit_file(MQM, lambda t: b""),
        ("en-de.mqm.seg.score", "empty", "0 bytes"),
    ),
    wmt_case(
        "wmt-reference-longer-than-source",
        edit_file("ts/sources/en-de.txt", lambda t: "only one\n"),
        ("en-de.refA.txt", "3 lines, expected 1"),
    ),
    wmt_case(
        "wmt-no-sources",
        lambda files: files.pop("ts/sources/en-de.txt"),
        ("ts", "sources/"),
    ),
    wmt_case("wmt-unknown-pair", None, ("ts", "'xx-yy'", "found: en-de"), "--lp", "xx-yy"),
    wmt_case("wmt-into-a-tidy-store", None, ("holds", "pairs of one test set"), store="tidy"),
]

SYS_MQM = "ts/human-scores/en-de.mqm.sys.score"


def add_file(path: str, content):
    def edit(files: dict) -> None:
        files[path] = content

    return edit


def move_file(path: str, new: str, change=lambda content: content):
    def edit(files: dict) -> None:
        files[new] = change(files.pop(path))

    return edit


def download_root() -> dict:
    """MTME's download root: a folder holding the test set wmt22/."""
    return {k.replace("ts/", "ts/wmt22/", 1): v for k, v in wmt_test_set().items()}


HOSTILE_WMT_MORE = [
    wmt_case(
        "wmt-system-file-control-character",
        add_file("ts/system-outputs/en-de/sys\x01D.txt", "a\nb\nc\n"),
        ("en-de", "control character U+0001", "'sys\\x01D.txt'"),
    ),
    wmt_case(
        "wmt-score-line-system-control-character",
        edit_file(BLEU, lambda t: t + "sys\x1bZ\t1\n"),
        ("BLEU-refA.seg.score", "row 10", "'sys\\x1bZ'", "no output file", "SYSTEM.txt"),
    ),
    wmt_case(
        "wmt-score-400-digits",
        edit_file(MQM, lambda t: t.replace("\t-1\n", "\t" + "1" * 400 + "\n", 1)),
        ("en-de.mqm.seg.score", "row 2", "column 'score'", "finite", "..."),
    ),
    wmt_case(
        "wmt-score-beyond-1e100",
        edit_file(MQM, lambda t: t.replace("\t-1\n", "\t-" + "9" * 300 + "\n", 1)),
        ("en-de.mqm.seg.score", "row 2", "column 'score'", "1e+100", "rescale"),
    ),
    wmt_case(
        "wmt-score-minus-infinity",
        edit_file(BLEU, lambda t: t.replace("\t10\n", "\t-Infinity\n", 1)),
        ("BLEU-refA.seg.score", "row 2", "'-Infinity'"),
    ),
    wmt_case(
        "wmt-sys-score-nan",
        add_file(SYS_MQM, "sysA\t1.5\nsysB\tNaN\nsysC\t2\n"),
        ("en-de.mqm.sys.score", "row 2", "column 'score'", "'NaN'"),
    ),
    wmt_case(
        "wmt-sys-score-system-twice",
        add_file(SYS_MQM, "sysA\t1.5\nsysB\t1\nsysA\t2\n"),
        ("en-de.mqm.sys.score", "row 3", "'sysA'", "more than one score"),
    ),
    wmt_case(
        "wmt-score-line-three-fields",
        edit_file(BLEU, lambda t: t.replace("\t10\n", "\t10\textra\n", 1)),
        ("BLEU-refA.seg.score", "row 2", "'SYSTEM SCORE'", "3 fields"),
    ),
    wmt_case(
        "wmt-score-line-one-field",
        edit_file(MQM, lambda t: "sysA\n" + t),
        ("en-de.mqm.seg.score", "row 1", "1 fields"),
    ),
    wmt_case(
        "wmt-output-too-few-lines",
        edit_file("ts/system-outputs/en-de/sysB.txt", lambda t: "only\ntwo\n"),
        ("sysB.txt", "2 lines, expected 3"),
    ),
    wmt_case(
        "wmt-metric-named-without-reference",
        move_file(BLEU, "ts/metric-scores/en-de/BLEU.seg.score"),
        ("BLEU.seg.score", "METRIC-REF", "BLEU-refA"),
    ),
    wmt_case(
        "wmt-gzip-and-plain-copies",
        lambda files: files.__setitem__(MQM + ".gz", gz(files[MQM])),
        ("human-scores", "both", "'en-de.mqm.seg.score.gz'", "keep one"),
    ),
    wmt_case(
        "wmt-gzip-member-not-compressed",
        move_file(MQM, MQM + ".gz"),
        ("en-de.mqm.seg.score.gz", "not gzip-compressed"),
    ),
    wmt_case(
        "wmt-gzip-member-empty",
        move_file(MQM, MQM + ".gz", lambda t: gz(b"")),
        ("en-de.mqm.seg.score.gz", "0 bytes once uncompressed"),
    ),
    wmt_case(
        "wmt-gzip-member-bad-score",
        move_file(BLEU, BLEU + ".gz", lambda t: gz(t.replace("\t10\n", "\tx\n", 1))),
        ("BLEU-refA.seg.score.gz", "row 2", "'x'"),
    ),
    wmt_case(
        "wmt-empty-sys-score-file",
        add_file(SYS_MQM, b""),
        ("en-de.mqm.sys.score", "empty", "0 bytes"),
    ),
    Case(
        "wmt-download-root",
        ("ingest", "--db", "{db}", "{tmp}/ts"),
        ("ts", "1 WMT test set(s) (wmt22)", "point ingest at one of them"),
        "none",
        download_root(),
    ),
    wmt_case(
        "wmt-no-human-scores-folder",
        lambda files: files.pop(MQM),
        ("ts", "not a WMT test set", "human-scores/"),
    ),
    wmt_case(
        "wmt-lp-long-and-unknown",
        None,
        ("ts", "no language pair", "...", "found: en-de"),
        "--lp",
        "x" * 500,
    ),
    wmt_case(
        "wmt-ref-unknown", None, ("ts", "no reference 'refZ'", "found: refA"), "--ref", "refZ"
    ),
    wmt_case(
        "wmt-documents-one-field",
        add_file("ts/documents/en-de.docs", "news d0\nnews\nnews d1\n"),
        ("en-de.docs", "row 2", "'DOMAIN DOCUMENT'", "1 field"),
    ),
    analysis(
        "spa-system-scores-given",
        "spa",
        "--system-scores",
        "given",
        words=("system_scores='given'", "soft pairwise accuracy", "'mean'"),
        store="tidy",
    ),
    analysis(
        "calibrate-system-scores-given-item-level",
        "calibrate",
        "--system-scores",
        "given",
        "--level",
        "item",
        words=("system_scores='given'", "level='system'", "'item'"),
        store="tidy",
    ),
    analysis(
        "clusters-system-scores-given-none-given",
        "clusters",
        "--criterion",
        "Fluency",
        "--level",
        "system",
        "--system-scores",
        "given",
        words=("no given system-level values", ".sys.score"),
        store="tidy",
    ),
    analysis(
        "spa-criterion-unknown",
        "spa",
        "--criterion",
        "Nope",
        words=("criterion must be one of", "Fluency", "'Nope'"),
        store="tidy",
    ),
]

HOSTILE_OPTIONS = [
    analysis(
        "judge-williams-n-1e23",
        "judge-williams",
        "--n",
        "1e23",
        words=("--n", "'1e23'", "below 2**63"),
    ),
    analysis(
        "judge-williams-n-24-digits",
        "judge-williams",
        "--n",
        str(10**23),
        words=("--n", str(10**23), "below 2**63"),
    ),
    analysis(
        "williams-n-2-to-the-63",
        "williams",
        "--criterion",
        "RE",
        "--n",
        str(2**63),
        words=("--n", "below 2**63"),
    ),
    analysis("topk-ks-range-huge", "topk", "--ks", "3-" + "9" * 20, words=("--ks", "1,000,000")),
    Case(
        "score-batch-size-zero",
        (
            "score",
            "--input",
            "{tmp}/t.csv",
            "--metrics",
            "BLEU",
            "--out",
            "{tmp}/o.csv",
            "--batch-size",
            "0",
        ),
        ("--batch-size", "[1, 1,000,000]", "0"),
        files={"t.csv": "input,system,prompt,reference,story\np,A,x,y,z\n"},
        store="none",
    ),
    Case(
        "db-is-a-csv-file",
        ("correlate", "--db", "{tmp}/results.csv"),
        ("results.csv", "not a hanna_stats store", "DuckDB database"),
        files={"results.csv": "a,b\n1,2\n"},
        store="none",
    ),
    Case(
        "ingest-db-is-a-csv-file",
        ("ingest", "--db", "{tmp}/results.csv", "{tmp}/x.csv"),
        ("results.csv", "not a hanna_stats store", "DuckDB database"),
        files={"results.csv": "a,b\n1,2\n", "x.csv": BASE},
        store="none",
    ),
    Case(
        "db-is-an-empty-file",
        ("sql", "--db", "{tmp}/empty.duckdb", "SELECT 1"),
        ("empty.duckdb", "not a hanna_stats store", "empty file"),
        files={"empty.duckdb": b""},
        store="none",
    ),
    Case(
        "ingest-refused-into-a-new-store",
        ("ingest", "--db", "{tmp}/new.duckdb", "{tmp}/bad.csv"),
        ("bad.csv", "row 101", "'high'"),
        files={"bad.csv": BASE + "p9-A,p9,A,BLEU,high,\n"},
        store="none",
    ),
]

HOSTILE = [
    *HOSTILE_SUMMEVAL,
    *HOSTILE_TIDY,
    *HOSTILE_USER_STUDY,
    *HOSTILE_HANNA,
    *HOSTILE_WMT,
    *HOSTILE_WMT_MORE,
    *HOSTILE_OPTIONS,
]


CASES = TIDY + HANNA_FILES + SQL + SOURCE + ANALYSES + SCORE + HOSTILE


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
    ``hanna`` (the HANNA files), ``metrics-only`` (no human measure), ``two-systems``, ``gappy``
    (the base study without BLEU of item p2-B), ``empty`` (a store with the schema and nothing
    else)."""
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
    gappy = [r for r in study_rows() if not (r[0] == "p2-B" and r[3] == "BLEU")]
    (root / "gappy.csv").write_text(tidy_csv(gappy))
    built["gappy"] = root / "gappy.duckdb"
    _ingest_ok(built["gappy"], root / "gappy.csv")
    built["empty"] = root / "empty.duckdb"
    from hanna_stats.store import open_store

    open_store(built["empty"]).close()
    return built


def _write_files(case: Case, tmp: Path, hanna_dir: Path) -> None:
    for name, content in case.files.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
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


@dataclass(frozen=True)
class Accepted:
    """A hostile-looking input that is valid: the command exits 0 with nothing on stderr, its
    output holds ``words``, and ``check(con, tmp)`` holds on the store it wrote (``{db}``)."""

    id: str
    args: tuple[str, ...]
    words: tuple[str, ...]
    files: dict
    check: Callable[[duckdb.DuckDBPyConnection, Path], bool] | None = None


def _sha256_recorded(name: str):
    """The store records ``name``'s SHA-256 as the file was given (compressed)."""

    def check(con: duckdb.DuckDBPyConnection, tmp: Path) -> bool:
        sha = hashlib.sha256((tmp / name).read_bytes()).hexdigest()
        return con.execute("SELECT source, sha256 FROM ingests").fetchall() == [(name, sha)]

    return check


def _measure_scale(name: str, scale: tuple):
    def check(con: duckdb.DuckDBPyConnection, tmp: Path) -> bool:
        query = "SELECT scale, scale_min, scale_max FROM measures WHERE name = ?"
        return con.execute(query, [name]).fetchall() == [scale]

    return check


ANSWER_HEADER = "item,input,system,measure,value,rater,judge,answer"
ACCEPTED = [
    Accepted(
        "summeval-jsonl-gz",
        ingest(SUMMEVAL + ".gz"),
        (SUMMEVAL + ".gz: summeval", "32 values"),
        {SUMMEVAL + ".gz": gz(summeval_line())},
        _sha256_recorded(SUMMEVAL + ".gz"),
    ),
    Accepted(
        "summeval-metric-scores-id-skipped",
        ingest(SUMMEVAL),
        ("33 values",),
        {SUMMEVAL: summeval_line(metric_scores_1={"id": 7, "bleu": 0.5})},
        lambda con, tmp: (
            con.execute("SELECT name FROM measures WHERE kind = 'metric'").fetchall()
            == [("bleu (metric_scores_1)",)]
        ),
    ),
    Accepted(
        "summeval-byte-order-mark-and-crlf",
        ingest(SUMMEVAL),
        ("64 values",),
        {
            SUMMEVAL: ("\ufeff" + summeval_line() + summeval_line(model_id="M1")).replace(
                "\n", "\r\n"
            )
        },
    ),
    Accepted(
        "tidy-csv-gz",
        ingest("base.csv.gz"),
        ("base.csv.gz: tidy", "100 values"),
        {"base.csv.gz": gz(BASE)},
        lambda con, tmp: (
            _sha256_recorded("base.csv.gz")(con, tmp)
            and con.execute("SELECT name FROM study").fetchall() == [("base",)]
        ),
    ),
    Accepted(
        "tidy-parquet-gz",
        ingest("scores.parquet.gz"),
        ("scores.parquet.gz: tidy", "1 values"),
        {
            "scores.parquet.gz": parquet_gz(
                pl.DataFrame(
                    {
                        "item": ["a"],
                        "input": ["p"],
                        "system": ["A"],
                        "measure": ["M"],
                        "value": [1.5],
                    }
                )
            )
        },
    ),
    Accepted(
        "tidy-2mb-judge-answer",
        ingest("answers.csv"),
        ("answers.csv: tidy", "1 values"),
        {
            "answers.csv": tidy_csv(
                [("p1-A", "p1", "A", "J", 3, "1", "J1", "x" * 2_000_000)], ANSWER_HEADER
            )
        },
        lambda con, tmp: (
            con.execute("SELECT length(answer) FROM ratings").fetchall() == [(2_000_000,)]
        ),
    ),
    Accepted(
        "tidy-scale-inferred-and-printed",
        ingest("base.csv"),
        ("scales inferred", "Fluency likert 1..5", "--scale NAME=LO..HI"),
        {"base.csv": BASE},
        _measure_scale("Fluency", ("likert", 1.0, 5.0)),
    ),
    Accepted(
        "tidy-scale-declared",
        ingest("base.csv", more=("--scale", "Fluency=0..10")),
        ("base.csv: tidy",),
        {"base.csv": BASE},
        _measure_scale("Fluency", ("likert", 0.0, 10.0)),
    ),
    Accepted(
        "tidy-crlf-and-byte-order-mark",
        ingest("base.csv"),
        ("100 values",),
        {"base.csv": "\ufeff" + BASE.replace("\n", "\r\n")},
    ),
    Accepted(
        "wmt-byte-order-mark-and-crlf",
        ("ingest", "--db", "{db}", "{tmp}/ts"),
        ("ts en-de: wmt", "18 values"),
        wmt_test_set(edit_file(MQM, lambda t: "\ufeff" + t.replace("\n", "\r\n"))),
    ),
    Accepted(
        "wmt-gzip-members",
        ("ingest", "--db", "{db}", "{tmp}/ts"),
        ("ts en-de: wmt", "18 values"),
        wmt_test_set(
            lambda files: [
                files.__setitem__(k + ".gz", gz(files.pop(k)))
                for k in (MQM, BLEU, "ts/sources/en-de.txt", "ts/system-outputs/en-de/sysA.txt")
            ]
        ),
    ),
    Accepted(
        "user-study-csv-gz",
        ("user-study", "{tmp}/user_study.csv.gz"),
        ("guidelines", "incoherence"),
        {"user_study.csv.gz": gz(user_study(*[flags()] * 3))},
    ),
]


@pytest.mark.parametrize("case", ACCEPTED, ids=[c.id for c in ACCEPTED])
def test_accepted_input(case: Accepted, hanna_dir, tmp_path, capsys):
    db = tmp_path / "store.duckdb"
    _write_files(case, tmp_path, hanna_dir)
    code = main([a.format(db=db, tmp=tmp_path) for a in case.args])
    out, err = capsys.readouterr()
    assert code == 0 and err == "", err
    missing = [w for w in case.words if w not in out]
    assert not missing, f"{missing} not in {out!r}"
    if case.check is not None:
        con = duckdb.connect(str(db), read_only=True)
        try:
            assert case.check(con, tmp_path)
        finally:
            con.close()


@pytest.mark.parametrize("command", [("permutation", "--unit", "systems"), ("clusters",)])
def test_missing_values_in_permutation_tests_drop_out_pairwise(command, stores, capsys):
    """A store where BLEU lacks one item (p2-B): permutation tests and clusters used to stop on
    the kernel's NaN error; the item now drops out of the comparisons that involve BLEU (as
    mt-metrics-eval drops an item missing on either side), and the permutation table counts it."""
    args = [*command, "--db", str(stores["gappy"]), "--criterion", "Fluency"]
    assert main([*args, "--permutations", "20", "--format", "csv"]) == 0
    out = pl.read_csv(io.StringIO(capsys.readouterr().out))
    assert out.height > 0
    if command[0] == "permutation":
        bleu = (pl.col("measure_a") == "BLEU") | (pl.col("measure_b") == "BLEU")
        assert set(out.filter(bleu)["n_missing"]) == {1}
        assert out["pvalue"].is_not_nan().all()


def test_the_table_has_enough_cases():
    assert len(CASES) >= 200 and len(ACCEPTED) >= 10
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
