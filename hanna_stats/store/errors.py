"""Exceptions raised by the score store."""

from __future__ import annotations

from pathlib import Path


class InputError(ValueError):
    """An input file is malformed; nothing was written to the store.

    The message names the file, the row and the column, for example
    ``hanna_metric_scores.csv, row 4 (Model=GPT), column 'BLEU Ξ§': expected a JSON list of
    96 numbers, got 95``.

    Parameters
    ----------
    detail : str
        What is wrong.
    file : str or Path
        The input file; only its name is shown.
    row : int, optional
        1-based data row: the first row after the header is row 1 (for Parquet files, the
        first record). None when the problem concerns the whole file or a whole column.
    column : str, optional
        Column header, or None.
    context : str, optional
        Short description of the row shown after its number, e.g. ``Model=GPT``.

    Attributes
    ----------
    file : str
        File name.
    row : int or None
        1-based data row (header excluded).
    column : str or None
        Column header.
    detail : str
        The message without its location.
    """

    def __init__(
        self,
        detail: str,
        *,
        file: str | Path,
        row: int | None = None,
        column: str | None = None,
        context: str | None = None,
    ) -> None:
        self.file = Path(file).name
        self.row = row
        self.column = column
        self.detail = detail
        where = [self.file]
        if row is not None:
            where.append(f"row {row}" + (f" ({context})" if context else ""))
        if column is not None:
            where.append(f"column {column!r}")
        super().__init__(f"{', '.join(where)}: {detail}")


class DataNotFoundError(FileNotFoundError):
    """Data (a HANNA file, a store) is missing or cannot be downloaded.

    The message says how to provide it.
    """


class ChecksumError(ValueError):
    """A downloaded or copied file does not have its pinned SHA-256 checksum.

    The bad file is not kept.
    """
