"""Printing a table: ``--format table|csv|json|latex`` of every command that prints one.

``table`` is :func:`hanna_stats.tables.table_lines` at the terminal's width
(:func:`shutil.get_terminal_size`: ``$COLUMNS``, else the terminal, else 80); on a terminal a
long table shows its first and last :data:`TABLE_EDGE_ROWS` rows. ``csv`` and ``json`` print
every row and column at full precision. ``latex`` is a booktabs ``tabular`` of every row and
column (:func:`latex_table`), its numbers written as the text tables write them. The text
goes out in chunks, so that a reader that went away (``... | head``) is noticed early: a
:class:`BrokenPipeError`, which :func:`hanna_stats.cli.main` turns into a quiet exit.
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
    elif fmt == "latex":
        write(latex_table(df))
    else:
        from hanna_stats.tables import table_lines

        edge = TABLE_EDGE_ROWS if sys.stdout.isatty() else None
        width = shutil.get_terminal_size().columns
        ellipsis = "…" if encodes(sys.stdout, "…") else "..."
        lines = table_lines(df, width, edge=edge, ellipsis=ellipsis)
        for start in range(0, len(lines), 1000):
            write("".join(line + "\n" for line in lines[start : start + 1000]))


#: LaTeX's special characters in text, escaped.
LATEX_ESCAPES = {
    ord("\\"): r"\textbackslash{}",
    **{ord(c): "\\" + c for c in "&%$#_{}"},
    ord("~"): r"\textasciitilde{}",
    ord("^"): r"\textasciicircum{}",
}


def latex_table(df: pl.DataFrame) -> str:
    """``df`` as a LaTeX ``tabular`` with booktabs rules (``\\usepackage{booktabs}``): a
    header row of the column names, one row per row, numeric columns right-aligned and written
    by :func:`hanna_stats.tables.number_formatter`, a null as ``--``, text escaped.

    Examples
    --------
    >>> import polars as pl
    >>> print(latex_table(pl.DataFrame({"measure": ["BLEU_A"], "average": [0.81234]})), end="")
    \\begin{tabular}{lr}
    \\toprule
    measure & average \\\\
    \\midrule
    BLEU\\_A & 0.8123 \\\\
    \\bottomrule
    \\end{tabular}
    """
    from hanna_stats.tables import number_formatter

    formats = [number_formatter(c.name, c.dtype) for c in df.iter_columns()]
    align = "".join("l" if f is None else "r" for f in formats)

    def cell(value: Any, number: Any) -> str:
        if value is None:
            return "--"
        return number(value) if number is not None else str(value).translate(LATEX_ESCAPES)

    lines = [f"\\begin{{tabular}}{{{align}}}", "\\toprule"]
    lines.append(" & ".join(c.translate(LATEX_ESCAPES) for c in df.columns) + r" \\")
    lines.append("\\midrule")
    for row in df.iter_rows():
        lines.append(" & ".join(cell(v, f) for v, f in zip(row, formats, strict=True)) + r" \\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "".join(line + "\n" for line in lines)


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
