"""Build the report and write it (and its tables) atomically."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import polars as pl

from hanna_stats._progress import progress
from hanna_stats.store import Study
from reports.html import Section, render_page
from reports.sections import SECTIONS, Context, ReportSettings

TITLE = "hanna_stats report: how well do automatic metrics agree with human judgements?"


def build_report(study: Study, settings: ReportSettings) -> list[Section]:
    """Run every section's analyses on a loaded study.

    Parameters
    ----------
    study : Study
        A loaded study (HANNA or any study loaded through the tidy ingest).
    settings : ReportSettings
        Seeds, resamples and the other choices of the analyses.

    Returns
    -------
    list of Section
        In the paper's order; sections whose inputs the study lacks hold a note saying so.
    """
    ctx = Context.of(study, settings)
    return [build(ctx) for build in progress(SECTIONS, desc="report sections")]


def _intro(settings: ReportSettings) -> str:
    return (
        "Meta-evaluation of automatic metrics against human criteria, following Chhun et al. "
        "(COLING 2022, the HANNA benchmark). Every chart works offline; every table is also "
        "written as CSV and Parquet by --tables DIR. Automatic measures analysed: kinds "
        f"{', '.join(settings.kinds)}; seed {settings.seed}; B = {settings.resamples}."
    )


def _atomic_write(path: Path, write) -> None:
    """Call ``write(tmp)`` on a temporary path beside ``path``, then rename it to ``path``.

    The rename is atomic on one file system: readers see the old file or the complete new one,
    and a failure leaves ``path`` as it was (the temporary file is removed).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_tables(sections: Iterable[Section], directory: Path) -> list[Path]:
    """Write every table of ``sections`` as ``<name>.csv`` and ``<name>.parquet``.

    Returns
    -------
    list of Path
        The files written.
    """
    written = []
    for section in sections:
        for table in section.tables:
            frame: pl.DataFrame = table.frame
            for suffix, write in ((".csv", frame.write_csv), (".parquet", frame.write_parquet)):
                path = directory / f"{table.name}{suffix}"
                _atomic_write(path, write)
                written.append(path)
    return written


def write_report(
    study: Study,
    out: str | Path,
    settings: ReportSettings | None = None,
    *,
    tables: str | Path | None = None,
) -> Path:
    """Build the report and write one self-contained HTML file.

    The file is written to a temporary name beside ``out`` and renamed when complete, so a
    failure leaves no partial report. The same store and settings give a byte-identical file.

    Parameters
    ----------
    study : Study
        A loaded study.
    out : str or Path
        The HTML file.
    settings : ReportSettings, optional
        Default: ``ReportSettings()`` (seed 0, B = 1000, alpha 0.05, the paper's choices).
    tables : str or Path, optional
        Folder for the tables as CSV and Parquet.

    Returns
    -------
    Path
        ``out``.
    """
    settings = settings or ReportSettings()
    sections = build_report(study, settings)
    page = render_page(TITLE, _intro(settings), sections)
    out = Path(out)
    _atomic_write(out, lambda tmp: tmp.write_text(page, encoding="utf-8"))
    if tables is not None:
        write_tables(sections, Path(tables))
    return out
