"""The command line's face: every option has help and a shown default, choices and defaults come
from hanna_stats.vocabulary, and the table of defaults (docs/command-line.md) says what the
command line and the analyses do."""

from __future__ import annotations

import argparse
import inspect
import re
from pathlib import Path

import pytest

from hanna_stats import analyses, cli
from hanna_stats.vocabulary import DEFAULTS, WORDS

DEFAULTS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "command-line.md"
COMMANDS = {command.name: command for command in cli._commands()}
#: The rater analyses (agreement, system_means, ...: their ``kinds`` are rated kinds, annotated
#: ``RatedKind``): they keep the human-written stories, which the raters rated like the systems'
#: ones (the table of defaults' include_human row says so).
RATER_FUNCTIONS = {
    name
    for name in analyses.__all__
    if inspect.isfunction(getattr(analyses, name))
    and "RatedKind" in str(inspect.signature(getattr(analyses, name)).parameters.get("kinds", ""))
}
RATER_COMMANDS = {
    c.name for c in COMMANDS.values() if c.function and c.function.split(":")[1] in RATER_FUNCTIONS
}
#: Descriptions of the data (no analysis option): every story, the human-written ones too.
OVERVIEW_FUNCTIONS = {"criterion_values", "measure_values"}
#: An option whose None default means "not asked for": correlate adds Fisher intervals only
#: with --confidence (the table of defaults' confidence_level row says so).
OPTIONAL = {("correlate", "confidence")}


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = cli._parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for sub in action.choices.values():
        sub.format_help()  # builds its options
    return dict(action.choices)


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]


def test_every_subcommand_is_in_the_table():
    assert set(_subparsers()) == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_has_help_and_a_shown_default(name):
    parser = _subparsers()[name]
    actions = _options(parser)
    assert actions
    for action in actions:
        label = action.option_strings[0] if action.option_strings else action.dest
        assert action.help and len(action.help) > 15, (name, label)
        if action.required:
            continue
        assert action.help.count("(default: ") == 1, (name, label, action.help)
        assert action.help.endswith(")"), (name, label)
        if isinstance(action, argparse._StoreTrueAction | argparse._StoreConstAction):
            assert action.help.endswith("(default: off)"), (name, label)
        elif action.default is not None and not isinstance(action.default, list):
            assert action.help.endswith(f"(default: {cli.shown(action.default)})"), (name, label)
    text = parser.format_help()  # argparse's % formatting accepts every help text
    assert "(default: " in text


def test_top_level_options_have_help():
    parser = cli._parser()
    for action in _options(parser):
        assert action.help, action.dest


def test_shown_defaults():
    assert cli.shown(None) == "none"
    assert cli.shown(False) == "off" and cli.shown(True) == "on"
    assert cli.shown(("metric", "llm-judge")) == "metric,llm-judge"
    assert cli.shown(()) == "none"
    assert cli.shown(0.95) == "0.95" and cli.shown("item") == "item"


def test_choices_come_from_the_vocabulary():
    assert cli.CHOICES is WORDS
    seen = set()
    for name, parser in _subparsers().items():
        for action in _options(parser):
            if action.choices is None or action.dest == "command":
                continue
            word = next((w for w, values in WORDS.items() if tuple(action.choices) == values), None)
            if name == "ingest" and action.dest == "format":  # auto, then the dataset formats
                assert tuple(action.choices) == ("auto", *WORDS["data_format"])
                continue
            assert word is not None, (name, action.dest, action.choices)
            seen.add(word)
    assert {"level_word", "method", "coefficient", "alternative", "correction", "format"} <= seen


def _word(command: str, dest: str) -> str | None:
    """The vocabulary word whose default option ``dest`` of ``command`` takes."""
    if dest == "kinds":
        return "rated_kinds" if command in RATER_COMMANDS else "kinds"
    if dest == "confidence":
        return "confidence_level"
    return dest if dest in DEFAULTS else None


def _expected(word: str, where: str) -> object:
    """The default of ``word`` for a command or function named ``where``."""
    if word == "include_human" and where in RATER_COMMANDS | RATER_FUNCTIONS | OVERVIEW_FUNCTIONS:
        return True
    return DEFAULTS[word]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_option_defaults_are_the_vocabulary_defaults(name):
    checked = 0
    for action in _options(_subparsers()[name]):
        word = _word(name, action.dest)
        if word is None or (name, action.dest) in OPTIONAL:
            continue
        if word == "format" and tuple(action.choices or ()) != WORDS["format"]:
            continue  # ingest --format: the format of the files read
        default = action.default
        if isinstance(action, argparse._StoreFalseAction):
            default = True  # --no-human: the stories are kept unless given
        assert default == _expected(word, name), (name, action.dest)
        checked += 1
    assert checked or name in {"fetch-data", "ingest"}


def _public_functions():
    for name in analyses.__all__:
        function = getattr(analyses, name)
        if inspect.isfunction(function) and inspect.signature(function).parameters:
            yield name, function


@pytest.mark.parametrize("name", [n for n, _ in _public_functions()])
def test_analysis_defaults_are_the_vocabulary_defaults(name):
    function = getattr(analyses, name)
    for keyword, parameter in inspect.signature(function).parameters.items():
        if parameter.default is inspect.Parameter.empty:
            continue
        word = _word("agreement" if name in RATER_FUNCTIONS else name, keyword)
        if word is None or (name == "correlate" and keyword == "confidence"):
            continue
        default = parameter.default
        expected = _expected(word, name)
        if isinstance(expected, tuple):
            default = tuple(default)
        assert default == expected, (name, keyword, default, expected)


def _readme_table() -> dict[str, list[str]]:
    """The table of defaults (docs/command-line.md): word -> its cells."""
    text = DEFAULTS_PAGE.read_text(encoding="utf-8")
    section = text.split("### Defaults", 1)[1]
    rows = {}
    for line in section.splitlines():
        if not line.startswith("| `"):
            if rows and not line.startswith("|"):
                break
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        word = re.fullmatch(r"`([a-z_]+)`", cells[0]).group(1)
        rows[word] = cells
    return rows


def test_readme_table_of_defaults():
    rows = _readme_table()
    assert set(rows) == set(DEFAULTS)
    for word, cells in rows.items():
        assert len(cells) == 5, word
        shown = re.match(r"`([^`]*)`", cells[3]).group(1)
        assert shown == cli.shown(DEFAULTS[word]), word
        assert len(cells[4].split()) >= 8, f"{word}: say why"
        if word != "format":
            python = re.findall(r"`([a-z_]+)=`", cells[2])
            assert python, word
    # the options the table names are the command line's
    flags = {f for p in _subparsers().values() for a in _options(p) for f in a.option_strings}
    for word, cells in rows.items():
        for flag in re.findall(r"`(--[a-z-]+)`", cells[1]):
            assert flag in flags, (word, flag)


def test_readme_shows_the_help_defaults():
    # What --help says is what the table says: one rendering (cli.shown) for both.
    rows = _readme_table()
    help_text = _subparsers()["correlate"].format_help()
    for word in ("level", "method", "variant", "nan_policy", "kinds"):
        shown = re.match(r"`([^`]*)`", rows[word][3]).group(1)
        assert f"(default: {shown})" in " ".join(help_text.split())
