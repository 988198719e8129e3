"""Command line: ``python -m hanna_stats SUBCOMMAND ...`` (see ``--help``).

The subcommands are :func:`hanna_stats.cli.commands.commands`: each analysis of
:mod:`hanna_stats.analyses` is one, its options built from its function's signature (choices
from the ``Literal`` annotations, defaults from the signature, help from the one table of
option texts, :data:`hanna_stats.cli.options.OPTIONS`), so that an option has the same values
and default on the command line and in Python. Every option's help ends with its default.
:mod:`~hanna_stats.cli.run` holds what each command does, :mod:`~hanna_stats.cli.tables` how it
prints a table.

Output: every command that prints a table takes ``--format table|csv|json``. ``table`` fits the
terminal's width (``$COLUMNS``, else the terminal, else 80): the columns constant over the table
go to one line above it, long cells end in an ellipsis, columns that do not fit go to further
blocks (each repeating the key columns), numbers take their column's format, and a line counts
the rows (:mod:`hanna_stats.tables`); on a terminal a long table shows its first and last rows
(``--format csv`` or ``json`` print every row and column at full precision).

Start-up: parsing imports only the standard library and :mod:`hanna_stats.vocabulary`. A
subcommand's parser is built when that subcommand is used (an analysis command's imports its
analysis then), and DuckDB, polars, the Numba kernels, the report and the scorers are imported
by the command that needs them, so ``--help`` is instant and ``correlate --db FILE`` pays only
for what it runs.

Data source of the analyses, ``sql`` and ``report``: ``--db FILE`` opens an existing store
read-only (``sql --write``: read-write); ``--data DIR`` builds one from the HANNA files in memory;
neither: ``$HANNA_DATA``, else the ``fetch-data`` cache, in memory. Only ``ingest`` and
``score`` create a store file.

Errors policy: an error the user can fix (bad option or input file, missing data or store, SQL
error, file-system error: ``ValueError`` and its subclasses ``InputError``/``ChecksumError``,
``OSError`` and its subclass ``DataNotFoundError``, ``duckdb.Error``, polars errors) is printed
as one line on stderr, ``error: <message>``, with exit status 2. Anything else is a bug and shows
its traceback. ``--debug`` (before the subcommand) re-raises every error. A closed output pipe
(``... | head``) ends the command quietly with exit status 0, whatever the format.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from hanna_stats.cli.commands import Command, commands
from hanna_stats.cli.options import INGEST_FORMATS

__all__ = ["INGEST_FORMATS", "build_parser", "main", "quiet_stdout"]


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose arguments are added when it is first used (parsing, help), and
    whose usage errors are one line."""

    def __init__(self, *args: Any, command: Command | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pending = command

    def _populate(self) -> None:
        if self._pending is not None:
            command, self._pending = self._pending, None
            command.populate(self)

    def parse_known_args(self, args=None, namespace=None):
        self._populate()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self._populate()
        return super().format_usage()

    def format_help(self) -> str:
        self._populate()
        return super().format_help()

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``python -m hanna_stats``: one subparser per command, each filled in when
    it is used."""
    parser = Parser(
        prog="python -m hanna_stats",
        description="Meta-evaluation of NLG metrics against human judgements (HANNA and beyond).",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback of an error (give it first) (default: off)",
    )
    sub = parser.add_subparsers(
        title="subcommands",
        required=True,
        metavar="SUBCOMMAND",
        help="what to do; SUBCOMMAND --help shows its options and their defaults",
    )
    for command in commands():
        sub.add_parser(
            command.name, command=command, help=command.help, description=command.description
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status (2 for an error)."""
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader went away (`... | head`), which is how a pipe ends: stop quietly with
        # status 0, whatever the format. As the Python docs advise, point stdout at devnull so
        # that the flush at exit (of what is still buffered) does not fail again.
        quiet_stdout()
        return 0


def quiet_stdout() -> None:
    """Point stdout's file descriptor at devnull (after a :class:`BrokenPipeError`)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor
        pass


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = args.command.invoke(args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        raise
    except _user_errors() as err:
        if args.debug:
            raise
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return 2


def _user_errors() -> tuple[type[BaseException], ...]:
    """The errors printed as one line (see the module's docstring): the library modules that
    raise them are already imported when they do."""
    errors: list[type[BaseException]] = [ValueError, OSError]
    if "duckdb" in sys.modules:
        errors.append(sys.modules["duckdb"].Error)
    if "polars" in sys.modules:
        errors.append(sys.modules["polars"].exceptions.PolarsError)
    return tuple(errors)


def _one_line(err: BaseException) -> str:
    """The message of ``err`` on one line: its first paragraph, whitespace collapsed (DuckDB
    appends the query with a caret after a blank line)."""
    text = str(err).strip() or type(err).__name__
    return " ".join(text.split("\n\n", 1)[0].split())
