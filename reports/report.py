"""Build the report and write it (and its tables) atomically."""

from __future__ import annotations

import glob
import os
import re
import shutil
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import polars as pl
from hanna_stats.reports.html import Note, Section, Table, render_page
from hanna_stats.reports.sections import (
    WHOLE_STORE,
    Context,
    ReportSettings,
    section_builders,
    shown_calls,
)

from hanna_stats.analyses import analysis_calls
from hanna_stats.progress import progress, study_notes
from hanna_stats.study import Study

TITLE = "hanna_stats report: how well do automatic metrics agree with human judgements?"


def build_report(study: Study, settings: ReportSettings) -> list[Section]:
    """Run every section's analyses on a loaded study.

    A store of several subsets (WMT: language pairs) gets the Dataset section once, then the
    sections of the whole store (:data:`~hanna_stats.reports.sections.WHOLE_STORE`: the
    ranking of metrics by task set, when the subsets are WMT language pairs), then one
    set of the other sections per subset, each analysing that subset alone
    (``study.subset(subset=LABEL)``, the numbers of a store holding only it: mt-metrics-eval
    never pools pairs), after a heading section naming the subset. Their titles name the
    subset; their keys, table names and charts' ``data-name`` end with it.

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
    whole = Context.of(study, settings)
    builders = section_builders(settings)
    if len(study.subsets) < 2:
        return _built(builders, whole)
    # The Dataset section (what the store holds), then those of the whole store (the ranking
    # of metrics by task set across the language pairs).
    sections = _built((builders[0], *WHOLE_STORE), whole)
    for label, slug in _slugs(study.subsets).items():
        ctx = Context.of(study.subset(subset=label), settings)
        sections.append(_subset_heading(ctx, slug))
        sections += [_of_subset(s, label, slug) for s in _built(builders[1:], ctx)]
    return sections


def _built(builders, ctx: Context) -> list[Section]:
    """The sections ``builders`` build of ``ctx``, those that apply to its study, with the
    settings of the analyses each ran (:func:`~hanna_stats.analyses.analysis_calls`); each
    :class:`~hanna_stats.progress.StudyNote` an analysis gives ends its section as a note."""
    built = []
    for build in progress(builders, desc="report sections"):
        with study_notes() as notes, analysis_calls() as calls:
            section = build(ctx)
        if section is not None:
            section.analyses = shown_calls(ctx, calls)
            section.blocks += [Note(f"Note: {note}.") for note in notes]
            built.append(section)
    return built


def _subset_heading(ctx: Context, slug: str) -> Section:
    """The heading of a subset's section set: what the subset holds, and that it is analysed
    alone."""
    study = ctx.study
    label = study.subsets[0]
    return Section(
        f"subset-{slug}",
        f"Subset {label}",
        f"The sections below analyse the subset {label} alone ({len(study.inputs):,} inputs, "
        f"{ctx.n_systems:,} systems compared, {len(ctx.criteria):,} human "
        f"{'criterion' if len(ctx.criteria) == 1 else 'criteria'}, "
        f"{len(ctx.metrics):,} automatic measures), with the numbers of a store holding only "
        "it: subsets are not pooled, as the WMT metrics tasks (mt-metrics-eval) report each "
        "language pair on its own. report --subset LABEL gives one subset's page.",
        subset=slug,
    )


def _slugs(labels: tuple[str, ...]) -> dict[str, str]:
    """Each subset label as it ends keys, table names and chart names: letters, digits, ``-``
    and ``_`` (others become ``_``), numbered when two labels would end alike."""
    slugs = [re.sub(r"[^A-Za-z0-9_-]+", "_", label) for label in labels]
    if len(set(slugs)) < len(slugs):
        slugs = [f"{slug}_{k}" for k, slug in enumerate(slugs, 1)]
    return dict(zip(labels, slugs, strict=True))


def _of_subset(section: Section, label: str, slug: str) -> Section:
    """``section`` of the subset ``label``'s set: its title names the subset; its key, its
    tables' names and its charts' ``data-name`` end with ``slug``."""
    return replace(
        section,
        key=f"{section.key}-{slug}",
        title=f"{section.title} ({label})",
        blocks=[
            replace(block, name=f"{block.name}_{slug}") if isinstance(block, Table) else block
            for block in section.blocks
        ],
        subset=slug,
    )


def _intro(study: Study, settings: ReportSettings) -> str:
    numbers = (
        "; the figure and table numbers in titles are that paper's"
        if Context.of(study, settings).is_hanna
        else ""
    )
    subsets = (
        f" The store holds {len(study.subsets)} subsets ({', '.join(study.subsets)}): each is "
        "analysed alone, in its own set of sections."
        if len(study.subsets) > 1
        else ""
    )
    return (
        f"Meta-evaluation of automatic metrics against human criteria in the study "
        f"{study.name or '(unnamed)'}, following Chhun et al. (COLING 2022, the HANNA "
        f"benchmark){numbers}. Every chart works offline; every table is also "
        "written as CSV and Parquet by --tables DIR. Automatic measures analysed: kinds "
        f"{', '.join(settings.kinds)}; seed {settings.seed}; B = {settings.resamples}."
        + (f" Systems left out: {', '.join(study.left_out)}." if study.left_out else "")
        + subsets
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
