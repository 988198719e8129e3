"""Read and validate the user study of LLM judges' explanations (HANNA's TACL 2024 follow-up).

``user_study.csv`` has one row per (explanation, rater): ``Input.story_id``,
``Input.explanation`` (an LLM's rating of a story and its explanation) and six 0/1 flags, one
per issue a rater could find in the explanation (``Answer.a-1-guidelines.1`` ...
``Answer.a-6-incoherence.1``). Rows come in consecutive triples: rows 3i+1, 3i+2, 3i+3 (1-based
data rows) are the 3 raters of item i and share its story id and explanation; raters are not
identified, so ``rater`` is only the position within the triple.

These flags judge explanations, not stories: they are not a score of an item of the study, so
this file is read into a polars frame for :func:`hanna_stats.analyses.user_study_agreement`
and never ingested into the DuckDB store.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from hanna_stats.store.source import csv_records, integer_cell, read_source, require_columns
from hanna_stats.vocabulary import USER_STUDY_ISSUES

USER_STUDY_FILE = "user_study.csv"
STORY_ID, EXPLANATION = "Input.story_id", "Input.explanation"
#: The issues, in the order of the file's columns.
ISSUES = USER_STUDY_ISSUES
#: Flag column of each issue.
FLAG_COLUMNS = {issue: f"Answer.a-{j}-{issue}.1" for j, issue in enumerate(ISSUES, start=1)}
RATERS_PER_ITEM = 3
USER_STUDY_SCHEMA = {
    "item": pl.Int64,
    "story_id": pl.Int64,
    "rater": pl.Int64,
    "issue": pl.String,
    "flag": pl.Int64,
}


def read_user_study(path: str | Path) -> pl.DataFrame:
    """Read ``user_study.csv`` into a tidy long frame of flags, checking the whole file.

    Parameters
    ----------
    path : str or Path
        The user-study file (other columns than those named above are ignored).

    Returns
    -------
    polars.DataFrame
        One row per (item, issue, rater), sorted by ``item``, ``issue`` (in the file's column
        order: guidelines, syntax, superfluous, incorrectness, unsubstantiated, incoherence)
        and ``rater``; columns ``item`` (0-based index of the triple), ``story_id``,
        ``rater`` (0, 1, 2: position within the triple), ``issue`` (short name) and ``flag``
        (0 or 1). HANNA's file gives 100 items x 6 issues x 3 raters = 1,800 rows.

    Raises
    ------
    DataNotFoundError
        If the file does not exist.
    InputError
        Naming the file, and the row and column where there is one: bad UTF-8, gzip or CSV, a
        missing column, a story id that is not an integer from -2**63 to 2**63 - 1, a flag
        other than 0 or 1 (the value is shown), a row whose story id or explanation differs
        from the first row of its triple, or a number of data rows that is not a multiple of 3.
    """
    source = read_source(path)
    header, rows = csv_records(source)
    flag_columns = list(FLAG_COLUMNS.values())
    require_columns(source, header, [STORY_ID, EXPLANATION, *flag_columns])
    at_id, at_text = header.index(STORY_ID), header.index(EXPLANATION)
    at_flags = [header.index(c) for c in flag_columns]
    story_ids = np.empty(len(rows), dtype=np.int64)
    flags = np.empty((len(rows), len(ISSUES)), dtype=np.int64)
    for i, row in enumerate(rows):
        number = i + 1  # 1-based data row, as InputError counts
        story_ids[i] = integer_cell(source, row[at_id], row=number, column=STORY_ID)
        for j, (column, at) in enumerate(zip(flag_columns, at_flags, strict=True)):
            value = row[at].strip()
            if value not in ("0", "1"):
                raise source.error(f"expected 0 or 1, got {value!r}", row=number, column=column)
            flags[i, j] = int(value)
        first = i - i % RATERS_PER_ITEM
        if first != i:
            triple = f"rows {first + 1}-{first + RATERS_PER_ITEM} (item {i // RATERS_PER_ITEM})"
            if story_ids[i] != story_ids[first]:
                raise source.error(
                    f"story id {story_ids[i]} differs from {story_ids[first]} in row {first + 1}:"
                    f" {triple} must be the {RATERS_PER_ITEM} raters of one explanation",
                    row=number,
                    column=STORY_ID,
                )
            if row[at_text] != rows[first][at_text]:
                raise source.error(
                    f"explanation differs from that of row {first + 1}: {triple} must be the "
                    f"{RATERS_PER_ITEM} raters of one explanation",
                    row=number,
                    column=EXPLANATION,
                )
    if len(rows) % RATERS_PER_ITEM:
        first = len(rows) - len(rows) % RATERS_PER_ITEM + 1
        raise source.error(
            f"{len(rows)} data rows, not a multiple of {RATERS_PER_ITEM}: the last triple "
            f"(from row {first}) lacks {RATERS_PER_ITEM - len(rows) % RATERS_PER_ITEM} rater(s)",
            row=len(rows),
        )
    n_items, k, q = len(rows) // RATERS_PER_ITEM, RATERS_PER_ITEM, len(ISSUES)
    # (item, rater, issue) -> (item, issue, rater), raveled in that order.
    cube = flags.reshape(n_items, k, q).transpose(0, 2, 1)
    return pl.DataFrame(
        {
            "item": np.repeat(np.arange(n_items), q * k),
            "story_id": np.repeat(story_ids[::k], q * k),
            "rater": np.tile(np.arange(k), n_items * q),
            "issue": np.tile(np.repeat(np.array(ISSUES), k), n_items),
            "flag": cube.ravel(),
        },
        schema=USER_STUDY_SCHEMA,
    )
