"""Printing a table: ``--format table|csv|json`` of every command that prints one.

``table`` is :func:`hanna_stats.tables.table_lines` at the terminal's width
(:func:`shutil.get_terminal_size`: ``$COLUMNS``, else the terminal, else 80); on a terminal a
long table shows its first and last :data:`TABLE_EDGE_ROWS` rows. ``csv`` and ``json`` print
every row and column at full precision. The text goes out in chunks, so that a reader that went
away (``... | head``) is noticed early: a :class:`BrokenPipeError`, which
:func:`hanna_stats.cli.main` turns into a quiet exit.
"""

from __future__ import annotations

import shutil
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

#: Rows a long table shows at each end when stdout is a terminal.
TABLE_EDGE_ROWS = 10


def emit(df: pl.DataFrame, fmt: str) -> None:
    """Print ``df`` as ``fmt``: csv, json (one array of row objects) or a table that fits the
    terminal."""
    if fmt == "csv":
        write(df.write_csv())
    elif fmt == "json":
        write(df.write_json() + "\n")
    else:
        from hanna_stats.tables import table_lines

        edge = TABLE_EDGE_ROWS if sys.stdout.isatty() else None
        width = shutil.get_terminal_size().columns
        ellipsis = "…" if encodes(sys.stdout, "…") else "..."
        lines = table_lines(df, width, edge=edge, ellipsis=ellipsis)
        for start in range(0, len(lines), 1000):
            write("".join(line + "\n" for line in lines[start : start + 1000]))


def write(text: str, chunk: int = 1 << 16) -> None:
    """Write ``text`` to stdout in chunks of ``chunk`` characters."""
    for start in range(0, len(text), chunk):
        sys.stdout.write(text[start : start + chunk])


def encodes(stream: Any, text: str) -> bool:
    """Whether ``stream``'s encoding can write ``text`` (a terminal in ASCII cannot write
    ``…``)."""
    try:
        text.encode(getattr(stream, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True
