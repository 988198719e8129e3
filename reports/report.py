"""Build the report and write it (and its tables) atomically."""

from __future__ import annotations

import glob
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

import polars as pl

from hanna_stats.progress import progress
from hanna_stats.study import Study
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
        In the paper's order; a section whose inputs the study lacks says why in one line
        (``Section.absent``), one that does not apply to it (no LLM judges) is left out.
    """
    ctx = Context.of(study, settings)
    built = [build(ctx) for build in progress(SECTIONS, desc="report sections")]
    return [section for section in built if section is not None]


def _intro(study: Study, settings: ReportSettings) -> str:
    numbers = (
        "; the figure and table numbers in titles are that paper's"
        if Context.of(study, settings).is_hanna
        else ""
    )
    return (
        f"Meta-evaluation of automatic metrics against human criteria in the study "
        f"{study.name or '(unnamed)'}, following Chhun et al. (COLING 2022, the HANNA "
        f"benchmark){numbers}. Every chart works offline; every table is also "
        "written as CSV and Parquet by --tables DIR. Automatic measures analysed: kinds "
        f"{', '.join(settings.kinds)}; seed {settings.seed}; B = {settings.resamples}."
        + (f" Systems left out: {', '.join(study.left_out)}." if study.left_out else "")
    )


def _temporary(path: Path) -> Path:
    """The temporary name of ``path`` for this process (``.<name>.<pid>.tmp`` beside it)."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def _remove_leftovers(path: Path) -> None:
    """Remove the temporary files or folders of ``path`` left by killed runs (their process is
    gone; a live process's are left alone)."""
    for leftover in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        pid = leftover.name[: -len(".tmp")].rsplit(".", 1)[1]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        if leftover.is_dir():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _atomic_write(path: Path, write) -> None:
    """Call ``write(tmp)`` on a temporary path beside ``path``, then rename it to ``path``.

    The rename is atomic on one file system: readers see the old file or the complete new one,
    and a failure leaves ``path`` as it was (the temporary file is removed).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(path)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_tables(sections: Iterable[Section], directory: Path) -> list[Path]:
    """Write every table of ``sections`` as ``<name>.csv`` and ``<name>.parquet`` into a new
    folder ``directory`` (which must not exist).

    Returns
    -------
    list of Path
        The files written.
    """
    directory.mkdir(parents=True)
    written = []
    for section in sections:
        for table in section.tables:
            frame: pl.DataFrame = table.frame
            for suffix, write in ((".csv", frame.write_csv), (".parquet", frame.write_parquet)):
                path = directory / f"{table.name}{suffix}"
                write(path)
                written.append(path)
    return written


def _replace_folder(staged: Path, target: Path) -> None:
    """Put the complete folder ``staged`` in the place of ``target``: two renames, the previous
    set kept aside until the new one is in place."""
    previous = target.with_name(f".{target.name}.old.{os.getpid()}.tmp")
    if target.exists():
        os.replace(target, previous)
    os.replace(staged, target)
    shutil.rmtree(previous, ignore_errors=True)


def _check_targets(out: Path, tables: Path | None) -> None:
    """Refuse, before any work, targets that would overwrite the wrong thing: ``out`` a folder,
    ``tables`` an existing file (missing parent folders are created)."""
    if out.is_dir():
        raise ValueError(f"--out {out}: is a folder; name the HTML file to write")
    if tables is not None and tables.exists() and not tables.is_dir():
        raise ValueError(f"--tables {tables}: is a file; name a folder for the tables")


def write_report(
    study: Study,
    out: str | Path,
    settings: ReportSettings | None = None,
    *,
    tables: str | Path | None = None,
) -> Path:
    """Build the report and write one self-contained HTML file.

    The file is written to a temporary name beside ``out`` and renamed when complete, and the
    tables are written to a temporary folder beside ``tables`` that replaces the previous one
    only once the page is in place, so a failure leaves the previous report and the previous
    set of tables. Temporary files of earlier killed runs are removed. The same store and
    settings give a byte-identical file.

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

    Raises
    ------
    ValueError
        Before any work, if ``out`` is a folder or ``tables`` is a file.
    """
    settings = settings or ReportSettings()
    out = Path(out)
    _check_targets(out, None if tables is None else Path(tables))
    sections = build_report(study, settings)
    page = render_page(TITLE, _intro(study, settings), sections)
    targets = [out] if tables is None else [out, Path(tables)]
    for target in targets:
        _remove_leftovers(target)
    staged = None
    try:
        if tables is not None:
            staged = _temporary(Path(tables))
            write_tables(sections, staged)
        _atomic_write(out, lambda tmp: tmp.write_text(page, encoding="utf-8"))
        if staged is not None:
            _replace_folder(staged, Path(tables))
    except BaseException:
        if staged is not None:
            shutil.rmtree(staged, ignore_errors=True)
        raise
    return out
