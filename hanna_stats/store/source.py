"""Reading input files: bytes, checksum, UTF-8 text, CSV records with row numbers, JSON.

A gzip-compressed file (named ``*.gz``, or starting with gzip's magic bytes) is read as its
uncompressed content; its checksum is that of the file as given. A :class:`Source` holds the
file in memory; a :class:`FileSource` (large tidy files) only its name and checksum, hashed in
blocks, its content being read in streams (:meth:`FileSource.content`, :func:`iter_csv`).
"""

from __future__ import annotations

import codecs
import csv
import gzip
import hashlib
import io
import json
import re
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from hanna_stats.store.errors import DataNotFoundError, InputError
from hanna_stats.vocabulary import close_match

GZIP_SUFFIX = ".gz"
GZIP_MAGIC = b"\x1f\x8b"
#: Control characters (C0, DEL, C1), refused in names: a pattern for ``re`` and for polars.
CONTROL_CHARACTERS = r"[\x00-\x1f\x7f-\x9f]"
_CONTROL = re.compile(CONTROL_CHARACTERS)
_INTEGER = re.compile(r"[+-]?[0-9]+")
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


#: Bytes read at a time when hashing, uncompressing or scanning a file.
BLOCK = 1 << 20


@dataclass(frozen=True)
class _File:
    """What every input file has: its path, and errors that name it."""

    path: Path

    @property
    def name(self) -> str:
        """File name (no directory)."""
        return self.path.name

    @property
    def content_path(self) -> Path:
        """The path without its ``.gz`` suffix: what the content is (``scores.csv.gz`` ->
        ``scores.csv``), for choosing a reader and naming a study."""
        return content_path(self.path)

    def error(self, detail: str, **where: object) -> InputError:
        """Build an :class:`InputError` about this file (``where``: row, column, context)."""
        return InputError(detail, file=self.path, **where)


@dataclass(frozen=True)
class Source(_File):
    """One input file read into memory.

    Attributes
    ----------
    path : Path
        The file.
    data : bytes
        Its content (uncompressed, for a gzip-compressed file).
    sha256 : str
        Hex SHA-256 of the file as given (compressed or not).
    compressed : bool
        True when the file was gzip-compressed.
    """

    data: bytes
    sha256: str
    compressed: bool = field(default=False, kw_only=True)


@dataclass(frozen=True)
class FileSource(_File):
    """One input file left on disk, read in streams: memory does not grow with its size.

    Attributes
    ----------
    path : Path
        The file.
    sha256 : str
        Hex SHA-256 of the file as given (compressed or not), hashed in blocks.
    compressed : bool
        True when the file is gzip-compressed.
    """

    sha256: str
    compressed: bool = field(default=False, kw_only=True)

    @contextmanager
    def content(self) -> Iterator[Path]:
        """The uncompressed content as a file: the file itself, or for a gzip-compressed one
        a temporary copy uncompressed block by block (deleted on exit).

        Raises
        ------
        InputError
            If the gzip stream is not valid, or holds nothing.
        """
        if not self.compressed:
            yield self.path
            return
        with tempfile.TemporaryDirectory(prefix="hanna-stats-") as folder:
            copy = Path(folder) / self.content_path.name
            with gzip.open(self.path, "rb") as packed, copy.open("wb") as out:
                while True:
                    try:
                        block = packed.read(BLOCK)
                    except (OSError, EOFError, zlib.error) as exc:
                        raise self.error(f"not a valid gzip file ({exc})") from None
                    if not block:
                        break
                    out.write(block)
            if not copy.stat().st_size:
                raise self.error("the file is empty (0 bytes once uncompressed)")
            yield copy


def content_path(path: str | Path) -> Path:
    """``path`` without a ``.gz`` suffix (any case), else ``path``."""
    path = Path(path)
    return path.with_suffix("") if path.suffix.lower() == GZIP_SUFFIX else path


def read_source(path: str | Path) -> Source:
    """Read a file and hash it; a gzip-compressed one is uncompressed (see the module).

    Raises
    ------
    DataNotFoundError
        If the file does not exist.
    InputError
        If it is a folder or empty (0 bytes, or nothing once uncompressed), is named ``.gz``
        without being gzip-compressed, or is not a valid gzip stream.
    """
    path = _input_file(path)
    raw = path.read_bytes()
    sha256 = hashlib.sha256(raw).hexdigest()
    if not _compressed(path, raw[: len(GZIP_MAGIC)]):
        return Source(path, raw, sha256)
    try:
        data = gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"not a valid gzip file ({exc})", file=path) from None
    if not data:
        raise InputError("the file is empty (0 bytes once uncompressed)", file=path)
    return Source(path, data, sha256, compressed=True)


def read_file_source(path: str | Path) -> FileSource:
    """Hash a file in blocks without reading it into memory; refused as by
    :func:`read_source`, except that a gzip stream is checked when its content is read
    (:meth:`FileSource.content`).

    Raises
    ------
    DataNotFoundError
        If the file does not exist.
    InputError
        If it is a folder or empty (0 bytes), or is named ``.gz`` without being
        gzip-compressed.
    """
    path = _input_file(path)
    digest = hashlib.sha256()
    with path.open("rb") as f:
        head = f.read(len(GZIP_MAGIC))
        digest.update(head)
        for block in iter(lambda: f.read(BLOCK), b""):
            digest.update(block)
    compressed = _compressed(path, head)
    return FileSource(path, digest.hexdigest(), compressed=compressed)


def _input_file(path: str | Path) -> Path:
    """``path``, refused when it is a folder or does not exist."""
    path = Path(path)
    if path.is_dir():
        raise InputError("is a folder; this format reads one file", file=path)
    if not path.is_file():
        raise DataNotFoundError(f"input file not found: {path}")
    return path


def _compressed(path: Path, head: bytes) -> bool:
    """Whether a file starting with ``head`` is gzip-compressed; refused when empty, or named
    ``.gz`` without gzip's magic bytes."""
    if not head:
        raise InputError("the file is empty (0 bytes)", file=path)
    if head.startswith(GZIP_MAGIC):
        return True
    if path.suffix.lower() == GZIP_SUFFIX:
        raise InputError(
            "named .gz but not gzip-compressed (it does not start with gzip's magic bytes "
            "1f 8b); rename it or compress it",
            file=path,
        )
    return False


def shorten(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters (an ellipsis ends a cut text), for messages."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def control_character(name: str, what: str = "name") -> str | None:
    """Why ``name`` is refused, when it holds a control character (see
    :data:`CONTROL_CHARACTERS`: a name is shown in tables, reports and terminals); else None."""
    hit = _CONTROL.search(name)
    if hit is None:
        return None
    return (
        f"control character U+{ord(hit.group()):04X} in the {what} {shorten(repr(name))}: "
        "names may not hold control characters"
    )


def check_name(source: Source, name: str, **where: object) -> str:
    """``name`` unless it holds a control character (:func:`control_character`); else an
    :class:`InputError` at ``where``."""
    detail = control_character(name)
    if detail is not None:
        raise source.error(detail, **where)
    return name


def integer_cell(
    source: Source, text: str, *, row: int, column: str, minimum: int = INT64_MIN
) -> int:
    """A cell holding an integer from ``minimum`` (``INT64_MIN`` or 0) to ``INT64_MAX`` (the
    store's and numpy's 64-bit integers), ASCII digits; else an :class:`InputError`."""
    text = text.strip()
    value = int(text) if _INTEGER.fullmatch(text) and len(text) <= 20 else None
    if value is None or not minimum <= value <= INT64_MAX:
        what = "a non-negative integer up to" if minimum == 0 else "an integer from -2**63 to"
        raise source.error(
            f"expected {what} 2**63 - 1, got {shorten(repr(text))}", row=row, column=column
        )
    return value


#: Opens a file's (uncompressed) content for reading, from its start, each time it is called.
Opener = Callable[[], BinaryIO]


def _skip_bom(raw: BinaryIO) -> int:
    """Position ``raw`` after a leading UTF-8 byte-order mark; the mark's length (0 or 3)."""
    head = raw.read(len(codecs.BOM_UTF8))
    bom = len(head) if head == codecs.BOM_UTF8 else 0
    raw.seek(bom)
    return bom


class _Prefix(io.RawIOBase):
    """The next ``size`` bytes of ``raw``, as a stream."""

    def __init__(self, raw: BinaryIO, size: int) -> None:
        self._raw, self._left = raw, size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        block = self._raw.read(min(len(buffer), self._left))
        buffer[: len(block)] = block
        self._left -= len(block)
        return len(block)


def _csv_reader(raw: BinaryIO, limit: int, size: int | None = None):
    """``csv.reader`` over the UTF-8 text of ``raw`` (its next ``size`` bytes, or all), line
    ends kept as they are; the csv module's field limit (131,072 characters by default: a long
    LLM answer exceeds it) raised to ``limit``, the content's length, which no field exceeds."""
    if csv.field_size_limit() < limit:
        csv.field_size_limit(limit)
    stream = raw if size is None else io.BufferedReader(_Prefix(raw, size))
    return csv.reader(io.TextIOWrapper(stream, encoding="utf-8", newline=""))


def _utf8_failure(source: _File, opener: Opener, rows: str) -> InputError | None:
    """The error naming the first invalid UTF-8 byte of the content (after a leading byte-order
    mark) and its row (see :func:`decode_text`), found in a scan of bounded memory; None when
    the content is valid UTF-8."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    with opener() as raw:
        bom = fed = _skip_bom(raw)
        while True:
            block = raw.read(BLOCK)
            buffered = len(decoder.getstate()[0])
            try:
                decoder.decode(block, final=not block)
            except UnicodeDecodeError as exc:
                offset = fed - buffered + exc.start
                break
            if not block:
                return None
            fed += len(block)
        raw.seek(offset)
        byte = raw.read(1)[0]
        raw.seek(max(bom, offset - 1))
        ends_line = offset == bom or raw.read(1) in (b"\n", b"\r")
        raw.seek(bom)
        if rows == "records":  # 0-based CSV record (header = 0) starting or going on there
            records = sum(1 for _ in _csv_reader(raw, offset, offset - bom))
            row = records if ends_line else records - 1
        else:
            prefix = _Prefix(raw, offset - bom)
            row = 1 + sum(block.count(b"\n") for block in iter(lambda: prefix.read(BLOCK), b""))
    return source.error(
        f"not valid UTF-8 (byte 0x{byte:02x} at offset {offset}"
        + (" of the uncompressed content)" if source.compressed else ")")
        + ("" if row > 0 else " in the header"),
        **({"row": row} if row > 0 else {}),
    )


def decode_text(source: Source, *, rows: str = "records") -> str:
    """Decode a file as UTF-8 (a leading byte-order mark is dropped).

    Parameters
    ----------
    source : Source
        The file.
    rows : {"records", "lines"}
        What an error counts as rows: CSV data records (row 1 is the first after the header; a
        bad byte in the header says so) or lines of the file (row 1 is the first line).

    Raises
    ------
    InputError
        ``not valid UTF-8 (byte 0x.. at offset N)``, naming the row of the first invalid byte.
    """
    if rows not in ("records", "lines"):
        raise ValueError(f"rows must be 'records' or 'lines'; got {rows!r}")
    bom = len(codecs.BOM_UTF8) if source.data.startswith(codecs.BOM_UTF8) else 0
    try:
        return source.data[bom:].decode("utf-8")
    except UnicodeDecodeError:
        raise _utf8_failure(source, lambda: io.BytesIO(source.data), rows) from None


def iter_csv(source: _File, opener: Opener, size: int) -> Iterator[list[str]]:
    """The records of a UTF-8 CSV file, read as a stream: first the header (column names,
    surrounding spaces removed), then the data rows (blank lines left out; the i-th is data row
    i).

    Parameters
    ----------
    source : Source or FileSource
        The file (named in errors).
    opener : callable
        Opens its content (uncompressed) from the start; called again to locate an error.
    size : int
        The content's length in bytes.

    Raises
    ------
    InputError
        The first of, in this order whatever their place in the file: bad UTF-8 (naming the
        row of the first invalid byte), a malformed CSV, no header, an empty or duplicate column
        name, no data rows, a row whose number of fields differs from the header's (the first).
        Rows are yielded until such an error is found; it is raised once the rest of the file
        has been read for an error that comes before it.
    """
    header: list[str] | None = None
    header_error = length_error = None
    n_rows = 0
    try:
        with opener() as raw:
            _skip_bom(raw)
            for record in _csv_reader(raw, size):
                if not record:  # a blank line
                    continue
                if header is None:
                    header = [h.strip() for h in record]
                    header_error = _header_error(source, header)
                    if header_error is None:
                        yield header
                    continue
                n_rows += 1
                if length_error is None and len(record) != len(header):
                    length_error = source.error(
                        f"expected {len(header)} fields, got {len(record)}", row=n_rows
                    )
                if header_error is None and length_error is None:
                    yield record
    except UnicodeDecodeError:
        raise _utf8_failure(source, opener, "records") from None
    except csv.Error as exc:
        raise (
            _utf8_failure(source, opener, "records") or source.error(f"malformed CSV: {exc}")
        ) from None
    if header is None:
        raise source.error("the file has no header and no data rows")
    if header_error is not None:
        raise header_error
    if not n_rows:
        raise source.error("no data rows (only a header)")
    if length_error is not None:
        raise length_error


def _header_error(source: _File, header: list[str]) -> InputError | None:
    """The error of an empty or duplicate column name in ``header``, if any."""
    seen: set[str] = set()
    for name in header:
        if not name:
            return source.error("empty column name in the header")
        if name in seen:
            return source.error("duplicate column in the header", column=name)
        seen.add(name)
    return None


def csv_records(source: Source) -> tuple[list[str], list[list[str]]]:
    """Parse a UTF-8 CSV file held in memory into its header and data rows (see
    :func:`iter_csv`).

    Returns
    -------
    header : list of str
        Column names (surrounding spaces removed).
    rows : list of list of str
        Data rows; ``rows[i]`` is data row ``i + 1``.

    Raises
    ------
    InputError
        On bad UTF-8, a malformed CSV, duplicate or empty column names, no data rows, or a row
        whose number of fields differs from the header's.
    """
    records = iter_csv(source, lambda: io.BytesIO(source.data), len(source.data))
    header = next(records)
    return header, list(records)


def require_columns(source: Source, header: list[str], required: list[str]) -> None:
    """Raise :class:`InputError` naming the first of ``required`` missing from ``header``, and
    what the header looks like when that explains it: one column holding another delimiter,
    or a second byte-order mark."""
    for name in required:
        if name not in header:
            raise source.error("missing column" + _header_hint(header, name), column=name)


def _header_hint(header: list[str], name: str) -> str:
    """Why ``name`` is not in ``header``, when the header says: a second byte-order mark, one
    column holding another delimiter; else the file's columns and a close match of ``name``."""
    first = header[0] if header else ""
    if first.startswith(codecs.BOM_UTF8.decode()):
        return " (the header starts with a second byte-order mark, U+FEFF)"
    delimiters = [d for d in (";", "\t", "|") if d in first]
    if len(header) == 1 and delimiters:
        return (
            f" (the header is one column, {shorten(repr(first))}: the file must be "
            f"comma-separated, not {delimiters[0]!r}-separated)"
        )
    shown = ", ".join(shorten(c) for c in header[:12])
    more = f", ... ({len(header) - 12} more)" if len(header) > 12 else ""
    close = close_match(name, header)
    renamed = f"; is {close!r} meant to be {name!r}?" if close is not None else ""
    return f" (the file's columns: {shown}{more}{renamed})"


class JSONError(ValueError):
    """A JSON text :func:`load_json` refuses; the message says why, without a location.

    Attributes
    ----------
    key : str or None
        The key given twice in one object, when that is the reason.
    """

    def __init__(self, detail: str, key: str | None = None) -> None:
        super().__init__(detail)
        self.key = key


# Integers beyond a float's range (about 1.8e308, 309 digits) are refused: every number read is
# used as a float. The digits are counted before int() converts them (Python refuses more than
# 4,300 digits with its own message).
_FLOAT_DIGITS = len(str(int(sys.float_info.max)))
# An escaped UTF-16 surrogate: json decodes a lone one into a str no UTF-8 encoder takes.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    obj: dict[str, object] = {}
    for key, value in pairs:
        if key in obj:
            raise JSONError(f"key {shorten(repr(key))} given twice in one object", key=key)
        obj[key] = value
    return obj


def _float_range_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    value = int(text) if digits <= _FLOAT_DIGITS else None
    if value is None or abs(value) > sys.float_info.max:
        raise JSONError(
            f"number {shorten(text, 20)} ({digits} digits) is out of range: numbers are read "
            "as floats (at most about 1.8e308)"
        )
    return value


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)
# Integers are checked (parse_int, a Python call per integer) only in a text holding a run of
# digits as long as the largest float's: the common cell of small numbers takes the C path.
_LONG_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_int=_float_range_int)
_LONG_DIGITS = re.compile(rf"[0-9]{{{_FLOAT_DIGITS},}}")


def _check_strings(value: object) -> None:
    """Refuse a string (or key) of ``value`` holding a lone UTF-16 surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise JSONError(
                    f"lone surrogate \\u{ord(item[exc.start]):04x} in a string: an escaped "
                    "UTF-16 half that is no Unicode character"
                ) from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def load_json(text: str) -> object:
    """Parse one JSON text, refusing what would be read wrong or fail later.

    Refused, each with a one-line :class:`JSONError`: invalid JSON, a key given twice in one
    object (``json`` keeps the last silently), an integer beyond a float's range, nesting deeper
    than Python's recursion limit, and a lone UTF-16 surrogate escape (``"\\ud800"``).
    ``NaN``, ``Infinity`` and ``-Infinity`` are read as floats, as by :func:`json.loads`.

    Parameters
    ----------
    text : str
        The JSON text (one line of a JSON-lines file, one cell).

    Returns
    -------
    object
        The parsed value.

    Raises
    ------
    JSONError
        Saying why, without the file or row (the caller adds them).
    """
    try:
        decoder = _LONG_DECODER if _LONG_DIGITS.search(text) else _DECODER
        value = decoder.decode(text)
    except json.JSONDecodeError as exc:
        raise JSONError(f"invalid JSON ({exc.msg} at character {exc.pos})") from None
    except RecursionError:
        raise JSONError(
            f"invalid JSON: nested deeper than about {sys.getrecursionlimit()} arrays or objects"
        ) from None
    if _SURROGATE_ESCAPE.search(text):
        _check_strings(value)
    return value
