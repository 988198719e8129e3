"""What the subcommands do: the data source, the Dask scheduler, and one function per command.

Each ``run_*`` function takes the command and the parsed arguments and returns the exit status.
The libraries (DuckDB, polars, the kernels, the report, the scorers) are imported by the
function that needs them, so that parsing the command line imports none of them.

Data source of the analyses, ``sql`` and ``report``: ``--db FILE`` opens an existing store
read-only (``sql --write``: read-write); ``--data DIR`` builds one from the HANNA files in memory;
neither: ``$HANNA_DATA``, else the ``fetch-data`` cache, in memory.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hanna_stats.cli.tables import emit

if TYPE_CHECKING:
    import argparse

    import duckdb

    from hanna_stats.cli.commands import Command
    from hanna_stats.study import Study

BUILD_STORE = "build one with `python -m hanna_stats ingest --db FILE DIR`"


def keywords_of(args: argparse.Namespace) -> dict[str, Any]:
    """The parsed options that are keywords of the command's function, by keyword."""
    return {name: getattr(args, name) for name in args.keywords}


# --------------------------------------------------------------------------- the data source


def connect(args: argparse.Namespace, *, read_only: bool = True) -> duckdb.DuckDBPyConnection:
    """The store of ``--db`` (which must exist) or one built in memory from the HANNA data."""
    if args.db is not None:
        check_store_file(args.db)
        from hanna_stats.store import open_store

        return open_store(args.db, read_only=read_only)
    from hanna_stats.store import build_hanna_store, resolve_hanna_dir

    return build_hanna_store(resolve_hanna_dir(args.data))


def study_of(args: argparse.Namespace) -> Study:
    """The Study of ``--db`` (read-only) or of the HANNA data (see :func:`connect`), restricted
    to ``--subset``, then ``--systems`` / ``--exclude-systems``, then to ``--sample-inputs``
    (:func:`hanna_stats.analyses.sample_inputs`)."""
    options = {
        keyword: value
        for keyword, value in (("method", args.sample_method), ("seed", args.sample_seed))
        if value is not None
    }
    if args.sample_inputs is None and options:
        given = " and ".join(f"--sample-{keyword}" for keyword in options)
        raise ValueError(f"{given}: the draw of --sample-inputs N, which is not given")
    study = whole_study(args)
    if args.sample_inputs is None:
        return study
    from hanna_stats.analyses import sample_inputs

    return sample_inputs(study, args.sample_inputs, **options)


def whole_study(args: argparse.Namespace) -> Study:
    """The Study of ``--db`` or of the HANNA data, restricted to ``--subset``, then
    ``--systems`` / ``--exclude-systems``."""
    if args.db is not None:
        from hanna_stats.store import load_study

        con = connect(args)
        try:
            study = load_study(con)
        finally:
            con.close()
    else:
        from hanna_stats.store import open_study, resolve_hanna_dir

        study = open_study(resolve_hanna_dir(args.data))
    if args.systems is None and args.exclude_systems is None and args.subset is None:
        return study
    return study.subset(
        systems=args.systems, exclude_systems=args.exclude_systems, subset=args.subset
    )


def check_store_file(path: Path) -> None:
    """DataNotFoundError unless ``path`` is a file (``--db`` never creates a store)."""
    if not path.is_file():
        from hanna_stats.store import DataNotFoundError

        raise DataNotFoundError(f"--db {path}: no such store file ({BUILD_STORE})")


@contextlib.contextmanager
def scheduler(args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """``{"executor": ...}`` on the Dask cluster of ``--scheduler`` (a scheduler's address, or
    ``local[:N]``: a cluster of N worker processes here, closed at the end), else ``{}``."""
    address = getattr(args, "scheduler", None)
    if address is None:
        yield {}
        return
    from hanna_stats.kernels.distributed import connect as connect_cluster

    local, _, workers = address.partition(":") if address.startswith("local") else ("", "", "")
    if local and (local != "local" or (workers and not workers.isdigit()) or workers == "0"):
        raise ValueError(f"--scheduler {address}: expected tcp://HOST:PORT, local or local:N")
    try:
        if local:
            options = {"threads_per_worker": 1, "dashboard_address": ":0"}
            executor = connect_cluster(None, n_workers=int(workers) if workers else None, **options)
        else:
            executor = connect_cluster(address, timeout="10s")
    except ImportError as error:
        raise ValueError(f"--scheduler needs Dask: {error}") from None
    except (OSError, TimeoutError) as error:
        raise ValueError(f"--scheduler {address}: cannot reach the scheduler ({error})") from None
    try:
        yield {"executor": executor}
    finally:
        cluster = executor.client.cluster if local else None
        executor.client.close()
        if cluster is not None:
            cluster.close()


@contextlib.contextmanager
def notes() -> Iterator[None]:
    """Print each :class:`~hanna_stats.progress.StudyNote` the block gives as one ``note:`` line
    on stderr; other warnings go on as they are."""
    from hanna_stats.progress import study_notes

    with study_notes() as found:
        yield
    for note in found:
        print(f"note: {note}", file=sys.stderr)


# --------------------------------------------------------------------------- the commands


def run_analysis(command: Command, args: argparse.Namespace) -> int:
    """Run the command's analysis on the study with the command's options as keywords, and
    print its table."""
    function = getattr(import_module("hanna_stats.analyses"), command.function)
    study, keywords = study_of(args), keywords_of(args)
    from hanna_stats.progress import compile_notice

    compile_notice()
    with scheduler(args) as executor, notes():
        df = function(study, **keywords, **executor)
    if df.is_empty() and command.empty_note:
        print(command.empty_note, file=sys.stderr)
    if keywords.get("system_scores") == "given":
        note_left_out(study, keywords)
    emit(df, args.format)
    return 0


def note_left_out(study: Study, keywords: dict[str, Any]) -> None:
    """With ``--system-scores given``: one line on stderr naming the measures left out for
    want of given system-level values (as mt-metrics-eval leaves them out); for a store
    analysed per subset, one per subset."""
    from hanna_stats.analyses import given_left_out
    from hanna_stats.store.source import shorten

    each = keywords["subsets"] == "each" and len(study.subsets) > 1
    for label in study.subsets if each else (None,):
        part = study if label is None else study.subset(subset=label)
        kinds = keywords.get("kinds", ("metric",))
        left_out = given_left_out(part, kinds, keywords["include_human"])
        if keywords.get("against") == "inter-criteria":  # no automatic measure asked for
            left_out = [m for m in left_out if m in part.criteria]
        if left_out:
            names = ", ".join(shorten(repr(m)) for m in left_out[:5])
            more = f", ... ({len(left_out) - 5} more)" if len(left_out) > 5 else ""
            where = f" in subset {label!r}" if label is not None else ""
            print(
                f"note: --system-scores given: left out {len(left_out)} measure(s) without given "
                f"system-level values{where} (WMT: no .sys.score file): {names}{more}",
                file=sys.stderr,
            )


def run_fetch(command: Command, args: argparse.Namespace) -> int:
    """``fetch-data``."""
    from hanna_stats.store import fetch_hanna

    print(fetch_hanna(**keywords_of(args)))
    return 0


def run_ingest(command: Command, args: argparse.Namespace) -> int:
    """``ingest``: every PATH's format and options checked before the store file is made."""
    import hanna_stats.store as store
    from hanna_stats.store.formats import FORMATS, detect_format

    flags = {  # the formats' own options: keyword of `ingest` -> (flag, value given or None)
        "human_system": ("--human-system", args.human_system),
        "human_measures": ("--human", args.human or None),
        "scales": ("--scale", scales_of(args.scale) or None),
        "study": ("--study", args.study),
        "item_word": ("--item-word", None if args.item_word == "item" else args.item_word),
        "lp": ("--lp", args.lp),
        "ref": ("--ref", args.ref),
        "include_outliers": ("--include-outliers", args.include_outliers or None),
    }
    given = {keyword: value for keyword, (_, value) in flags.items() if value is not None}
    formats = []
    for path in args.paths:  # before the store file is created
        if not path.exists():
            raise store.DataNotFoundError(f"{path}: no such file or folder")
        fmt = detect_format(path) if args.format == "auto" else args.format
        if fmt == "hanna-dir":
            store.check_hanna_dir(path)  # a WMT download root or another folder: one line
        refused: dict[str, list[str]] = {}  # the flags this format does not take, by takers
        for keyword in given:
            if keyword not in FORMATS[fmt].options:
                takers = " and ".join(f.reads for f in FORMATS.values() if keyword in f.options)
                refused.setdefault(takers, []).append(flags[keyword][0])
        if refused:
            what = "; ".join(f"{' and '.join(f)}: for {who} only" for who, f in refused.items())
            raise ValueError(f"{what}; {path} is read as {fmt}")
        formats.append(fmt)
    if args.db.is_dir():
        raise ValueError(f"--db {args.db}: is a folder; name a store file (created if missing)")
    policy = {"extend": args.extend, "replace": args.replace, "scale_policy": args.scale_policy}
    new_store = not args.db.exists()
    con = store.open_store(args.db)
    try:
        for path, fmt in zip(args.paths, formats, strict=True):
            for summary in store.ingest(con, path, format=fmt, **policy, **given):
                print(summary)
    except BaseException:
        # a refused ingest leaves no store file behind that was not there before it
        empty = new_store and not store.has_ingests(con)
        con.close()
        if empty:
            for leftover in (args.db, args.db.with_name(args.db.name + ".wal")):
                leftover.unlink(missing_ok=True)
        raise
    con.close()
    return 0


def scales_of(declared: list[tuple[str, tuple[float, float]]]) -> dict[str, tuple[float, float]]:
    """The ``--scale`` options by measure; a measure given two is refused."""
    scales: dict[str, tuple[float, float]] = {}
    for name, bounds in declared:
        if name in scales:
            raise ValueError(f"--scale: measure {name!r} given a scale twice")
        scales[name] = bounds
    return scales


def run_sql(command: Command, args: argparse.Namespace) -> int:
    """``sql``."""
    from hanna_stats.store import run_query

    con = connect(args, read_only=not args.write)
    try:
        emit(run_query(con, args.query, allow_files=args.allow_files), args.format)
    finally:
        con.close()
    return 0


def run_report(command: Command, args: argparse.Namespace) -> int:
    """``report``: the settings checked (:class:`~hanna_stats.reports.ReportSettings`) before
    the study is read."""
    from hanna_stats.progress import compile_notice
    from hanna_stats.reports import ReportSettings, write_report

    settings = ReportSettings(**keywords_of(args))
    compile_notice()
    with notes():
        path = write_report(study_of(args), args.out, settings, tables=args.tables)
    print(path)
    return 0


def run_user_study(command: Command, args: argparse.Namespace) -> int:
    """``user-study``."""
    from hanna_stats.analyses import user_study_agreement
    from hanna_stats.store import read_user_study, resolve_hanna_dir
    from hanna_stats.store.user_study import USER_STUDY_FILE

    path = args.file or resolve_hanna_dir(args.data) / USER_STUDY_FILE
    emit(user_study_agreement(read_user_study(path), **keywords_of(args)), args.format)
    return 0


def run_score(command: Command, args: argparse.Namespace) -> int:
    """``score``: ``--list``, or texts scored into ``--db`` and/or ``--out``."""
    import hanna_stats.scoring
    from hanna_stats.scoring.io import read_texts
    from hanna_stats.scoring.registry import ScoringConfig
    from hanna_stats.scoring.run import resolve_metrics, score_input, score_into_store, score_store

    if args.list:
        table = hanna_stats.scoring.list_metrics().select(
            "metric", "family", "reference", "symbol", "available", "scorer", "multi_reference"
        )
        emit(table, args.format)
        return 0
    check_score_args(args)
    config = ScoringConfig(
        hanna_compat=args.hanna_compat,
        device=args.device,
        batch_size=args.batch_size,
        models=dict(name_path(m) for m in args.model),
        split_sentences=args.split_sentences,
        lowercase=args.lowercase,
    )
    metrics = resolve_metrics(args.metrics)
    if args.input is None:
        from hanna_stats.store import DataNotFoundError, open_store

        if not args.db.is_file():
            raise DataNotFoundError(f"no score store at {args.db} (score reads it)")
        con = open_store(args.db)
        try:
            tidy = score_store(con, args.db, metrics, config, force=args.force)
        finally:
            con.close()
        print(f"{args.db}: {tidy.height} scores of its texts written")
    elif args.db is not None:
        data = read_texts(args.input)
        from hanna_stats.store import open_store

        con = open_store(args.db)
        try:
            tidy = score_into_store(
                con, data, metrics, config, force=args.force, extend=args.extend
            )
        finally:
            con.close()
        print(f"{args.input}: {tidy.height} scores written to {args.db}")
    else:
        tidy = score_input(read_texts(args.input), metrics, config)
    if args.out is not None:
        if args.out.suffix.lower() in (".parquet", ".pq"):
            tidy.write_parquet(args.out)
        else:
            tidy.write_csv(args.out)
        print(f"{args.out}: {tidy.height} scores")
    return 0


def check_score_args(args: argparse.Namespace) -> None:
    """ValueError for a ``score`` without a destination or with options that do not fit,
    before any text is read."""
    if args.input is None and args.db is None:
        raise ValueError(
            "score needs --input FILE and --db FILE and/or --out FILE, or --db STORE alone to "
            "score the texts it holds (or --list)"
        )
    if args.input is not None and args.db is None and args.out is None:
        raise ValueError(
            f"score --input {args.input}: name where the scores go, --db FILE and/or --out FILE"
        )
    if args.input is None and args.extend:
        raise ValueError("--extend applies to --input: the texts of a store are its own study")
    if args.out is not None and args.out.suffix.lower() not in (".csv", ".parquet", ".pq"):
        raise ValueError(f"--out {args.out}: expected a .csv or .parquet file name")


def name_path(text: str) -> tuple[str, str]:
    """'NAME=PATH' -> (NAME, PATH)."""
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise ValueError(f"--model expects NAME=PATH, got {text!r}")
    return name, path
