"""Tables for people: the terminal's text tables, and the one rule by which they and the
report's tables write numbers.

Numbers (:func:`number_formatter`): each column has one format, chosen by what it holds, never
by its values:

- p-values (a float column named ``pvalue...`` or ``p_value...``: ``pvalue``,
  ``pvalue_adjusted``, ``pvalue_next``, ...) as other floats, but in scientific notation with 4
  significant digits below 0.001 (``1.714e-05``);
- every other float (correlations, accuracies, t statistics, epsilons, means, interval ends,
  deltas) in fixed-point notation, never scientific, to 4 significant digits, with 4 decimals
  at least below 10 in magnitude, at most :data:`MAX_DECIMALS`, and the whole part whole
  (``0.3971``, ``1.0000``, ``-3.1868``, ``0.0500``, ``0.01273``, ``91.88``, ``1,282,500``,
  ``0.0000``);
- integers (counts) with thousands separators (``1,282,500``), except seeds and ids (``seed``,
  ``..._id``), which are names rather than amounts.

Text tables (:func:`table_lines`): a table of more than one row shows the columns that hold one
value throughout (``level``, ``method``, ``permutations``, ``seed``) on one header line above
it, ``level: system · method: pearson``, and leaves out the columns that are null throughout
(Pearson rows' Kendall ``variant``). A table wider than the terminal goes on in further blocks,
and every block repeats the table's key columns, the ones that tell its rows apart: the
analyses put them first, so they are the columns before the first float column, up to the last
non-numeric one among them (``measure``, ``against``; ``criterion``, ``k``, ``measure``; an
integer there, like ``k`` or ``rater``, names a row, while the counts after a float column, like
``n`` or ``n_groups``, are values).
"""

from __future__ import annotations

import math
import textwrap
import unicodedata
from collections.abc import Callable
from typing import Any

import polars as pl

#: The widest a table cell is printed (a longer one ends in an ellipsis); headers are whole.
CELL_WIDTH = 40
#: The narrowest a text column is squeezed to: to fit a table in one block, or its key columns
#: beside the other columns of a block.
SQUEEZED_WIDTH = 16
COLUMN_GAP = "  "
#: The most decimals a fixed-point number is written with (4 significant digits down to 1e-5).
MAX_DECIMALS = 8
#: Below this, a non-zero p-value is written in scientific notation.
SMALL_PVALUE = 1e-3
#: Integer columns that name rather than count (written without thousands separators).
_NAMES = ("seed",)


def number_formatter(name: str, dtype: pl.DataType) -> Callable[[Any], str] | None:
    """How the column ``name`` of type ``dtype`` writes a (non-null) value, or None when it
    holds no numbers (see the module's rule).

    Examples
    --------
    >>> r = number_formatter("statistic", pl.Float64)
    >>> [r(v) for v in (1.0, -0.03127, 0.3971, 91.88, 1282500.0, 0.0, 4.15306)]
    ['1.0000', '-0.03127', '0.3971', '91.88', '1,282,500', '0.0000', '4.1531']
    >>> p = number_formatter("pvalue_adjusted", pl.Float64)
    >>> [p(v) for v in (0.365, 1.714e-05, 0.0, 1.0)]
    ['0.3650', '1.714e-05', '0.0000', '1.0000']
    >>> number_formatter("n", pl.Int64)(1282500), number_formatter("seed", pl.Int64)(12345)
    ('1,282,500', '12345')
    """
    if dtype.is_float():
        return _pvalue_text if name.startswith(("pvalue", "p_value")) else _fixed_text
    if dtype.is_integer():
        return str if name in _NAMES or name.endswith("_id") else "{:,}".format
    return None


def _fixed_text(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0.0000"
    exponent = math.floor(math.log10(abs(value)))
    decimals = min(MAX_DECIMALS, max(3 - exponent, 4 if exponent < 1 else 0))
    text = f"{value:,.{decimals}f}"
    fourth = len(text) - max(decimals - 4, 0)  # the zeros after the fourth decimal go
    return text[:fourth] + text[fourth:].rstrip("0")


def _pvalue_text(value: float) -> str:
    if 0 < abs(value) < SMALL_PVALUE:
        return f"{value:.3e}"
    return _fixed_text(value)


def table_lines(
    df: pl.DataFrame, width: int, *, edge: int | None = None, ellipsis: str = "…"
) -> list[str]:
    """``df`` as lines of text no wider than ``width``: a line of its constant columns, a
    header, a rule and one line per row, numbers right-aligned (:func:`number_formatter`), long
    cells cut with ``ellipsis``, then a line counting the rows.

    A table of more than one row moves the columns that hold one value throughout to the first
    line, ``name: value`` joined by `` · `` (`` | `` when ``ellipsis`` is not ``…``: a stream
    that cannot write it), when one other column stays, and drops those that are null
    throughout. Headers are never cut (columns named alike, ``pvalue_judge`` and
    ``pvalue_judge_adjusted``, stay apart), unless one is wider than ``width`` itself; text
    columns are squeezed (to no less than :data:`SQUEEZED_WIDTH`) when that fits the table in
    one block. Otherwise the columns that do not fit go to further blocks, each repeating the
    key columns (see the module's docstring), squeezed as little as the fewest blocks allow.
    With ``edge``, a table of more than ``2 edge + 1`` rows shows its first and last ``edge``
    rows and says how to get all.
    """
    width = max(width, 20)
    n_rows = df.height
    separator = " · " if ellipsis == "…" else " | "
    constant, lines = _constant_columns(df, width, separator, ellipsis)
    df = df.drop(constant)
    cut = edge is not None and n_rows > 2 * edge + 1
    shown = df.head(edge).vstack(df.tail(edge)) if cut else df
    headers = list(df.columns)
    numeric = [dtype.is_numeric() for dtype in df.dtypes]
    cells = [_column_text(shown.get_column(name)) for name in headers]
    widths = []
    for name, column in zip(headers, cells, strict=True):
        longest = max((_text_width(c) for c in column), default=0)
        widths.append(max(_text_width(name), min(longest, CELL_WIDTH)))
    everything = list(range(len(widths)))
    squeezed = _squeeze(widths, everything, width, headers, numeric)
    if _span(squeezed, everything) <= width:  # the text columns squeezed into one block
        widths = squeezed
    widths = [min(w, width) for w in widths]
    keys = _keys(df, headers, widths, width) if _span(widths, everything) > width else []
    blocks = _blocks(widths, keys, width)
    for number, block in enumerate(blocks):
        if number:
            lines.append("")

        def line(texts: list[str], block: list[int] = block) -> str:
            parts = []
            for j, text in zip(block, texts, strict=True):
                text = _cut(text, widths[j], ellipsis)
                pad = " " * (widths[j] - _text_width(text))
                parts.append(pad + text if numeric[j] else text + pad)
            return COLUMN_GAP.join(parts).rstrip()

        lines.append(line([headers[j] for j in block]))
        lines.append(COLUMN_GAP.join("-" * widths[j] for j in block))
        for row in range(shown.height):
            if cut and row == edge:
                lines.append(line([ellipsis] * len(block)))
            lines.append(line([cells[j][row] for j in block]))
    count = f"{n_rows:,} row{'' if n_rows == 1 else 's'}"
    if len(blocks) > 1:
        count += f", {len(headers)} columns in {len(blocks)} blocks"
    if cut:
        count += f"; the first and last {edge} shown (every row: --format csv or json)"
    lines.extend(textwrap.wrap(count, width) or [count])
    return lines


def constant_columns(df: pl.DataFrame) -> list[str]:
    """The columns of ``df`` that hold one value throughout (null throughout included), when
    ``df`` has more than one row and at least one other column; else none. A table shows
    them once, above it (:func:`constant_items`), not on every row."""
    if df.height < 2:
        return []
    constant = [
        name
        for name, column in df.to_dict().items()
        if column.dtype != pl.Object and column.n_unique() == 1
    ]
    return [] if len(constant) == df.width else constant


def constant_items(df: pl.DataFrame, constant: list[str]) -> list[str]:
    """``name: value`` of each of the ``constant`` columns of ``df`` that is not null, the
    value written as in the table (:func:`number_formatter`)."""
    return [
        f"{name}: {_column_text(df.get_column(name).head(1))[0]}"
        for name in constant
        if df.get_column(name).null_count() == 0
    ]


def _constant_columns(
    df: pl.DataFrame, width: int, separator: str, ellipsis: str
) -> tuple[list[str], list[str]]:
    """:func:`constant_columns` of ``df``, and the lines, no wider than ``width``, of their
    :func:`constant_items` joined by ``separator``."""
    constant = constant_columns(df)
    items = [_cut(item, width, ellipsis) for item in constant_items(df, constant)]
    lines: list[str] = []
    for item in items:
        if lines and _text_width(lines[-1] + separator + item) <= width:
            lines[-1] += separator + item
        else:
            lines.append(item)
    return constant, lines


def _keys(df: pl.DataFrame, headers: list[str], widths: list[int], width: int) -> list[int]:
    """The key columns of a table too wide for one block (positions in ``headers``).

    Their text columns are squeezed in ``widths`` as little as the fewest blocks allow; while
    the keys, squeezed to the full, leave no room for the widest other column, the last key is
    left to the values.
    """
    dtypes = df.dtypes
    numeric = [t.is_numeric() for t in dtypes]
    first_float = next((k for k, t in enumerate(dtypes) if t.is_float()), len(dtypes))
    named = [k for k in range(first_float) if not numeric[k]]
    keys = list(range(named[-1] + 1)) if named else []
    while keys:
        widest_other = max((w for k, w in enumerate(widths) if k not in keys), default=width)
        tightest = _squeeze(widths, keys, 0, headers, numeric)
        room = width - widest_other - len(COLUMN_GAP)
        if _span(tightest, keys) <= room:
            fewest = len(_blocks(tightest, keys, width))
            for keys_room in range(min(room, _span(widths, keys)), -1, -1):
                squeezed = _squeeze(widths, keys, keys_room, headers, numeric)
                if len(_blocks(squeezed, keys, width)) == fewest:
                    widths[:] = squeezed
                    return keys
        keys.pop()
    return keys


def _blocks(widths: list[int], keys: list[int], width: int) -> list[list[int]]:
    """The columns in blocks no wider than ``width``: each the ``keys`` and as many of the other
    columns, in order, as fit beside them."""
    blocks: list[list[int]] = []
    for k in range(len(widths)):
        if k in keys:
            continue
        if blocks and _span(widths, [*blocks[-1], k]) <= width:
            blocks[-1].append(k)
        else:
            blocks.append([*keys, k])
    return blocks or [list(keys)]


def _squeeze(
    widths: list[int], columns: list[int], room: int, headers: list[str], numeric: list[bool]
) -> list[int]:
    """``widths`` with the text columns among ``columns`` squeezed, the widest first and no
    narrower than their header and :data:`SQUEEZED_WIDTH`, until ``columns`` fit in ``room``
    or can be squeezed no more."""
    squeezed = list(widths)
    for k in sorted(columns, key=lambda k: -widths[k]):
        excess = _span(squeezed, columns) - room
        if excess <= 0:
            break
        if not numeric[k]:
            floor = max(_text_width(headers[k]), SQUEEZED_WIDTH)
            squeezed[k] = min(widths[k], max(floor, widths[k] - excess))
    return squeezed


def _span(widths: list[int], columns: list[int]) -> int:
    """Terminal columns taken by ``columns`` side by side."""
    return sum(widths[k] for k in columns) + len(COLUMN_GAP) * max(len(columns) - 1, 0)


def _column_text(column: pl.Series) -> list[str]:
    """The cells of ``column`` as display text."""
    number = number_formatter(column.name, column.dtype)
    text = []
    for v in column.to_list():
        if v is None:
            text.append("null")
        elif number is not None:
            text.append(number(v))
        elif isinstance(v, bool):
            text.append("true" if v else "false")
        else:
            text.append(str(v).translate(_CONTROL))
    return text


#: Line breaks and tabs in a cell, shown escaped (a row stays one line).
_CONTROL = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"}


def _text_width(text: str) -> int:
    """Terminal columns ``text`` takes (East Asian wide characters two, combining marks none)."""
    if text.isascii():
        return len(text)
    return sum(_char_width(c) for c in text)


def _char_width(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def _cut(text: str, width: int, ellipsis: str) -> str:
    """``text`` cut to ``width`` terminal columns, ending in ``ellipsis`` when cut."""
    if _text_width(text) <= width:
        return text
    room = width - _text_width(ellipsis)
    if room <= 0:
        return ellipsis[:width]
    kept, used = [], 0
    for char in text:
        used += _char_width(char)
        if used > room:
            break
        kept.append(char)
    return "".join(kept) + ellipsis
