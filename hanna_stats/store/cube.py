"""A dense (measures x inputs x systems) cube of item-level values, and the HANNA store builder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np

from hanna_stats.store.db import open_store
from hanna_stats.store.errors import DataNotFoundError
from hanna_stats.store.fetch import ANNOTATIONS_FILE, LLM_FILE, METRIC_SCORES_FILE
from hanna_stats.store.ingest import (
    IngestSummary,
    ingest_hanna_annotations,
    ingest_hanna_llm,
    ingest_hanna_metric_scores,
)
from hanna_stats.store.wmt import not_a_test_set


@dataclass(frozen=True)
class Cube:
    """Item-level values as a dense array.

    Attributes
    ----------
    values : numpy.ndarray
        Shape (M measures, G inputs, S systems), float64; NaN where no value is stored.
    measures : list of str
        Measure names, in the order of axis 0.
    kinds : list of str
        Kind of each measure (``human``, ``metric``, ``llm-judge``).
    inputs : list of str
        Input names (HANNA: prompt indices ``"0"`` .. ``"95"``), axis 1.
    systems : list of str
        System names, axis 2.
    """

    values: np.ndarray
    measures: list[str]
    kinds: list[str]
    inputs: list[str]
    systems: list[str]

    def measures_at(self, idx) -> Cube:
        """The cube of the measures at positions ``idx`` (in that order), inputs and systems
        unchanged."""
        return Cube(
            values=self.values[list(idx)],
            measures=[self.measures[i] for i in idx],
            kinds=[self.kinds[i] for i in idx],
            inputs=self.inputs,
            systems=self.systems,
        )


def check_hanna_dir(data_dir: str | Path) -> None:
    """Refuse a folder without ``hanna_metric_scores.csv`` with one line that says what was
    expected: for WMT data that is not one test set (MTME's download root, a folder lacking
    ``human-scores/``), why (:func:`~hanna_stats.store.wmt.not_a_test_set`).

    Raises
    ------
    InputError
        For WMT data that is not a test set.
    DataNotFoundError
        For another folder without ``hanna_metric_scores.csv``.
    """
    data_dir = Path(data_dir)
    if (data_dir / METRIC_SCORES_FILE).is_file():
        return
    wmt = not_a_test_set(data_dir)
    if wmt is not None:
        raise wmt
    raise DataNotFoundError(
        f"{METRIC_SCORES_FILE} not found in {data_dir}: expected a HANNA data folder (with "
        f"{METRIC_SCORES_FILE}) or a WMT test set in mt-metrics-eval's layout (a folder with "
        "human-scores/ and metric-scores/, e.g. wmt23/)"
    )


def ingest_hanna_dir(
    con: duckdb.DuckDBPyConnection,
    data_dir: str | Path,
    *,
    extend: bool = False,
    replace: bool = False,
    scale_policy: str | None = None,
) -> list[IngestSummary]:
    """Ingest the HANNA files found in ``data_dir`` into an open store.

    ``hanna_metric_scores.csv`` is required; ``hanna_metric_scores_llm.csv`` and
    ``hanna_stories_annotations.csv`` are ingested when present. Files already ingested are
    skipped. ``extend``, ``replace`` and ``scale_policy`` as in the ingest functions.

    Returns
    -------
    list of IngestSummary
        One per file, in ingest order.

    Raises
    ------
    DataNotFoundError
        If ``hanna_metric_scores.csv`` is not in ``data_dir`` (see :func:`check_hanna_dir`).
    InputError
        If a file is malformed, or belongs to another study or would replace values without
        ``extend`` / ``replace``; for WMT data that is not one test set.
    """
    data_dir = Path(data_dir)
    check_hanna_dir(data_dir)
    files = (
        (METRIC_SCORES_FILE, ingest_hanna_metric_scores),
        (LLM_FILE, ingest_hanna_llm),
        (ANNOTATIONS_FILE, ingest_hanna_annotations),
    )
    return [
        ingest(con, data_dir / name, extend=extend, replace=replace, scale_policy=scale_policy)
        for name, ingest in files
        if (data_dir / name).is_file()
    ]


def build_hanna_store(
    data_dir: str | Path, db_path: str | Path | None = None
) -> duckdb.DuckDBPyConnection:
    """Open (or create) a store and ingest the HANNA files found in ``data_dir``
    (:func:`ingest_hanna_dir`); calling it again on the same store is cheap.

    Parameters
    ----------
    data_dir : str or Path
        Folder with the HANNA files (see :func:`hanna_stats.store.fetch.resolve_hanna_dir`).
    db_path : str or Path, optional
        DuckDB file; None builds an in-memory store.

    Returns
    -------
    duckdb.DuckDBPyConnection
        The writable store.

    Raises
    ------
    DataNotFoundError
        If ``hanna_metric_scores.csv`` is not in ``data_dir``.
    InputError
        If a file is malformed.
    """
    if not (Path(data_dir) / METRIC_SCORES_FILE).is_file():
        raise DataNotFoundError(f"{METRIC_SCORES_FILE} not found in {data_dir}")
    con = open_store(db_path)
    try:
        ingest_hanna_dir(con, data_dir)
    except BaseException:
        con.close()
        raise
    return con
