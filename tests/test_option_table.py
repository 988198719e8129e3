"""docs/options.md is complete: every option value has a row naming a test that exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from hanna_stats.vocabulary import WORDS

REPO = Path(__file__).resolve().parent.parent
TABLE = REPO / "docs" / "options.md"
ROW = re.compile(r"^\| *([\w ]+?) *\| *([^|]+?) *\| *(tests/[^|:]+)::(\w+) *\| *([^|]+?) *\|$")
#: Words made of other words: a value is covered by a row of any of its parts.
PARTS = {
    "item_system": ("level",),
    "level_word": ("level", "item_synonym"),
    "item_system_word": ("level", "item_synonym"),
    "coefficient": ("method", "tie_statistic"),
}
#: Options that take another word's values under their own name.
EXTRA = {"unit": WORDS["resample"]}
#: Words that choose data rather than a statistic: the second table of docs/options.md.
DATA_WORDS = {
    "kinds",
    "rated_kinds",
    "against",
    "subsets",
    "sample_method",
    "scale_policy",
    "format",
    "data_format",
}


def _rows():
    text = TABLE.read_text()
    return [m.groups() for line in text.splitlines() if (m := ROW.match(line.strip()))]


def _data_rows():
    """The second table's rows: (words, what they choose, the tests covering them)."""
    text = TABLE.read_text().split("## Words that choose data", 1)[1]
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in text.splitlines()]
    return [row for row in rows if row and row[0] not in ("word", "---")]


def _data_words():
    return {word.strip() for row in _data_rows() for word in row[0].split(",")}


def test_every_option_value_has_a_row():
    covered = {(option, value) for option, value, *_ in _rows()}
    options = {**{k: v for k, v in WORDS.items() if k not in DATA_WORDS}, **EXTRA}
    missing = [
        f"{option}={value}"
        for option, values in options.items()
        for value in values
        if not any((part, value) in covered for part in PARTS.get(option, (option,)))
    ]
    assert not missing, f"docs/options.md has no row for {', '.join(missing)}"


def test_every_word_is_a_statistic_or_a_listed_data_word():
    assert _data_words() == DATA_WORDS
    assert DATA_WORDS <= set(WORDS)
    assert all((REPO / row[2]).exists() for row in _data_rows())


def test_rows_name_values_of_their_option():
    options = {**WORDS, **EXTRA}
    wrong = [(o, v) for o, v, *_ in _rows() if o not in options or v not in options[o]]
    assert not wrong, f"rows for options or values that do not exist: {wrong}"


def _test_names(path):
    tree = ast.parse((REPO / path).read_text())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


@pytest.mark.parametrize("path", sorted({row[2] for row in _rows()}))
def test_every_named_test_exists(path):
    names = _test_names(path)
    absent = sorted({row[3] for row in _rows() if row[2] == path} - names)
    assert not absent, f"{path} has no test {', '.join(absent)}"
    assert all(name.startswith("test_") for name in names & {r[3] for r in _rows()})
