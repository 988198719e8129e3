"""The command line's face: every option has help and a shown default, and an analysis command's
options are its function's keywords, with the function's defaults and the choices of its
annotations (read here from the function, never from a copy)."""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import re
import subprocess
import sys
import types
import typing
from pathlib import Path

import pytest

from hanna_stats import analyses, vocabulary
from hanna_stats.cli import build_parser
from hanna_stats.cli.commands import ANALYSES, NOT_COMMANDS, commands
from hanna_stats.cli.options import CLI_ARGUMENTS, OPTIONS, PYTHON_ONLY, shown
from hanna_stats.vocabulary import DEFAULTS, WORDS

REPO = Path(__file__).resolve().parents[2]
DEFAULTS_PAGE = REPO / "docs" / "command-line.md"
COMMANDS = {command.name: command for command in commands()}
ANALYSIS_COMMANDS = {name: c for name, c in COMMANDS.items() if c.function is not None}


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for sub in action.choices.values():
        sub.format_help()  # builds its options
    return dict(action.choices)


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]


def test_every_subcommand_is_a_command():
    assert set(_subparsers()) == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_option_has_help_and_a_shown_default(name):
    parser = _subparsers()[name]
    actions = _options(parser)
    assert actions
    for action in actions:
        label = action.option_strings[0] if action.option_strings else action.dest
        assert action.help and len(action.help) > 15, (name, label)
        assert ":func:" not in action.help and "``" not in action.help, (name, label)
        if action.required:
            continue
        assert action.help.count("(default: ") == 1, (name, label, action.help)
        assert action.help.endswith(")"), (name, label)
        if isinstance(action, argparse._StoreTrueAction | argparse._StoreConstAction):
            assert action.help.endswith("(default: off)"), (name, label)
        elif action.default is not None and not isinstance(action.default, list):
            assert action.help.endswith(f"(default: {shown(action.default)})"), (name, label)
    text = parser.format_help()  # argparse's % formatting accepts every help text
    assert "(default: " in text


def test_top_level_options_have_help():
    parser = build_parser()
    for action in _options(parser):
        assert action.help, action.dest


def test_shown_defaults():
    assert shown(None) == "none"
    assert shown(False) == "off" and shown(True) == "on"
    assert shown(("metric", "llm-judge")) == "metric,llm-judge"
    assert shown(()) == "none" and shown(range(4, 11)) == "4-10"
    assert shown(0.95) == "0.95" and shown("item") == "item"


def test_choices_come_from_the_vocabulary():
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


# --------------------------------------------------------------------------- one copy


def _function(command):
    return getattr(analyses, command.function)


def _hint(function, annotation):
    """The type a parameter's annotation names, read from the function's own module."""
    namespace = {**vars(typing), **vars(vocabulary), **inspect.unwrap(function).__globals__}
    hint = eval(annotation, namespace) if isinstance(annotation, str) else annotation
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        kept = [a for a in typing.get_args(hint) if a is not type(None)]
        hint = kept[0] if len(kept) == 1 else hint
    return hint


@pytest.mark.parametrize("name", sorted(ANALYSIS_COMMANDS))
def test_options_are_the_keywords_with_the_functions_defaults_and_choices(name):
    command = ANALYSIS_COMMANDS[name]
    function = _function(command)
    actions = {a.dest: a for a in _options(_subparsers()[name])}
    overrides = ANALYSES[command.function].overrides if command.function in ANALYSES else {}
    parameters = list(inspect.signature(function).parameters.values())[1:]
    assert parameters, name
    for parameter in parameters:
        if parameter.name in PYTHON_ONLY:
            assert parameter.name not in actions
            continue
        if parameter.name in CLI_ARGUMENTS:
            assert CLI_ARGUMENTS[parameter.name].dest in actions, (name, parameter.name)
            continue
        assert parameter.name in OPTIONS or parameter.name in overrides, (name, parameter.name)
        action = actions[parameter.name]
        if parameter.default is parameter.empty:
            assert action.required, (name, parameter.name)
            continue
        default = action.default
        if isinstance(action, argparse._StoreFalseAction):
            default = True  # --no-human: kept unless given
        assert default == parameter.default, (name, parameter.name)
        hint = _hint(function, parameter.annotation)
        if typing.get_origin(hint) is typing.Literal:
            assert tuple(action.choices) == typing.get_args(hint), (name, parameter.name)
        elif typing.get_origin(hint) is tuple and typing.get_origin(typing.get_args(hint)[0]):
            allowed = typing.get_args(typing.get_args(hint)[0])
            assert action.type(",".join(allowed)) == allowed, (name, parameter.name)
            with pytest.raises(argparse.ArgumentTypeError, match="invalid choice: 'nope'"):
                action.type(f"{allowed[0]},nope")


def test_every_public_analysis_is_a_command_or_says_why_not():
    named = {c.function for c in ANALYSIS_COMMANDS.values()}
    for name in analyses.__all__:
        if name[0].isupper():  # a class
            continue
        assert (name in named) != (name in NOT_COMMANDS), name
        if name in named:  # an analysis of a study, the data first
            first = next(iter(inspect.signature(getattr(analyses, name)).parameters.values()))
            assert first.annotation in ("Study", "Study | None"), name
    assert set(ANALYSES) <= named and set(NOT_COMMANDS) <= set(analyses.__all__)
    assert all(len(reason.split()) >= 6 for reason in NOT_COMMANDS.values())


def test_a_command_without_an_entry_takes_its_help_from_the_docstring_unimported():
    code = (
        "import sys\n"
        "from hanna_stats.cli.commands import docstring_summary\n"
        "print(docstring_summary('spa'))\n"
        "print(sorted({'numpy', 'polars', 'hanna_stats.analyses.accuracy'} & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    summary, imported = out.stdout.splitlines()
    assert summary.startswith("Soft pairwise accuracy of every automatic measure with every ")
    assert "``" not in summary and imported == "[]"


def test_every_option_text_is_used():
    used = {a.dest for c in COMMANDS.values() for a in c.arguments()}
    assert set(OPTIONS) <= used, set(OPTIONS) - used


# --------------------------------------------------------------------------- the page


def _hooks():
    pytest.importorskip("mkdocs", reason="docs/hooks.py needs the docs extra")
    spec = importlib.util.spec_from_file_location("hooks", REPO / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    return hooks


def test_the_page_shows_every_option_of_the_analyses_with_its_default():
    hooks = _hooks()
    assert hooks.OPTIONS_MARKER in DEFAULTS_PAGE.read_text(encoding="utf-8")
    rows = [line.split(" | ") for line in hooks.options_table().splitlines()]
    for command in [*ANALYSIS_COMMANDS.values(), COMMANDS["report"], COMMANDS["user-study"]]:
        for argument in command.arguments():
            if argument.keyword:
                shown = argument.default_text()
                assert any(
                    row[0] == f"| `{argument.flags[0]}`"
                    and row[1] == ("required" if shown is None else f"`{shown}`")
                    and row[2].startswith(f"`{argument.dest}")
                    and f"`{command.name}`" in row[3]
                    for row in rows
                ), (command.name, argument.flags[0])


def _why_table() -> dict[str, str]:
    """The reasons of the defaults (docs/command-line.md): word -> why."""
    section = DEFAULTS_PAGE.read_text(encoding="utf-8").split("### Why these defaults", 1)[1]
    rows = {}
    for line in section.splitlines():
        if line.startswith("| `"):
            word, why = (c.strip() for c in line.strip().strip("|").split("|", 1))
            rows[re.fullmatch(r"`([a-z_]+)`", word).group(1)] = why
        elif rows and not line.startswith("|"):
            break
    return rows


def test_the_page_says_why_of_every_default():
    rows = _why_table()
    assert set(rows) == set(DEFAULTS)
    for word, why in rows.items():
        assert len(why.split()) >= 8, f"{word}: say why"
