"""Reading input files: bytes, checksum, UTF-8 text and CSV records with row numbers."""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
from dataclasses import dataclass
from pathlib import Path

from hanna_stats.store.errors import DataNotFoundError, InputError


@dataclass(frozen=True)
class Source:
    """One input file read into memory.

    Attributes
    ----------
    path : Path
        The file.
    data : bytes
        Its content.
    sha256 : str
        Hex SHA-256 of ``data``.
    """

    path: Path
    data: bytes
    sha256: str

    @property
    def name(self) -> str:
        """File name (no directory)."""
        return self.path.name

    def error(self, detail: str, **where: object) -> InputError:
        """Build an :class:`InputError` about this file (``where``: row, column, context)."""
        return InputError(detail, file=self.path, **where)


def read_source(path: str | Path) -> Source:
    """Read a file and hash it.

    Raises
    ------
    DataNotFoundError
        If the file does not exist.
    InputError
        If it is a folder or empty (0 bytes).
    """
    path = Path(path)
    if path.is_dir():
        raise InputError("is a folder; this format reads one file", file=path)
    if not path.is_file():
        raise DataNotFoundError(f"input file not found: {path}")
    data = path.read_bytes()
    source = Source(path, data, hashlib.sha256(data).hexdigest())
    if not data:
        raise source.error("the file is empty (0 bytes)")
    return source


def _record_of_offset(text_before: str) -> int:
    """0-based CSV record (header = 0) that starts or continues at the end of ``text_before``."""
    n_records = sum(1 for _ in csv.reader(io.StringIO(text_before)))
    ends_record = text_before == "" or text_before.endswith(("\n", "\r"))
    return n_records if ends_record else n_records - 1


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
    data = source.data[bom:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start].decode("utf-8")
        row = _record_of_offset(before) if rows == "records" else before.count("\n") + 1
        raise source.error(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {bom + exc.start})"
            + ("" if row > 0 else " in the header"),
            **({"row": row} if row > 0 else {}),
        ) from None


def csv_records(source: Source) -> tuple[list[str], list[list[str]]]:
    """Parse a UTF-8 CSV file into its header and data rows.

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
    text = decode_text(source)
    try:
        records = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise source.error(f"malformed CSV: {exc}") from None
    records = [r for r in records if r]  # blank lines
    if not records:
        raise source.error("the file has no header and no data rows")
    header = [h.strip() for h in records[0]]
    seen: set[str] = set()
    for name in header:
        if not name:
            raise source.error("empty column name in the header")
        if name in seen:
            raise source.error("duplicate column in the header", column=name)
        seen.add(name)
    rows = records[1:]
    if not rows:
        raise source.error("no data rows (only a header)")
    for i, row in enumerate(rows, start=1):
        if len(row) != len(header):
            raise source.error(f"expected {len(header)} fields, got {len(row)}", row=i)
    return header, rows


def require_columns(source: Source, header: list[str], required: list[str]) -> None:
    """Raise :class:`InputError` naming the first of ``required`` missing from ``header``."""
    for name in required:
        if name not in header:
            raise source.error("missing column", column=name)
