"""Command line: ``python -m hanna_stats SUBCOMMAND ...`` (see ``--help``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import duckdb
import polars as pl

from hanna_stats.store import (
    DataNotFoundError,
    InputError,
    build_hanna_store,
    fetch_hanna,
    ingest_hanna_annotations,
    ingest_hanna_llm,
    ingest_hanna_metric_scores,
    ingest_tidy,
    open_store,
    resolve_hanna_dir,
)

FORMATS = ("table", "csv", "json")
INGESTERS: dict[str, Callable[..., object]] = {
    "hanna-metric-scores": ingest_hanna_metric_scores,
    "hanna-llm": ingest_hanna_llm,
    "hanna-annotations": ingest_hanna_annotations,
    "tidy": ingest_tidy,
}
_HANNA_FILE_FORMATS = {
    "hanna_metric_scores.csv": "hanna-metric-scores",
    "hanna_metric_scores_llm.csv": "hanna-llm",
    "hanna_stories_annotations.csv": "hanna-annotations",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (DataNotFoundError, InputError, duckdb.Error, ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m hanna_stats",
        description="Meta-evaluation of NLG metrics against human judgements (HANNA and beyond).",
    )
    sub = parser.add_subparsers(title="subcommands", required=True, metavar="SUBCOMMAND")

    p = sub.add_parser(
        "fetch-data",
        help="download the public HANNA files (pinned commits, SHA-256 checked) into the cache",
        description="Download the HANNA files from the public repository at pinned commits, "
        "verify their SHA-256 and store them in the cache (HANNA_STATS_CACHE, default "
        "~/.cache/hanna_stats). Offline, pass a local copy with --local DIR.",
    )
    p.add_argument("--dest", type=Path, help="target folder (default: the cache)")
    p.add_argument("--local", type=Path, metavar="DIR", help="verify and copy a local copy")
    p.add_argument(
        "--with-annotations",
        action="store_true",
        help="also fetch the raw rater-level annotations (no pinned checksum: unverified)",
    )
    p.set_defaults(run=_cmd_fetch)

    p = sub.add_parser(
        "ingest",
        help="load HANNA files or a tidy CSV/Parquet into a store file",
        description="Ingest files into a DuckDB store (one transaction per file; re-running "
        "does not duplicate). PATH is a HANNA data folder or a file; the format of a file is "
        "taken from its HANNA name, else it is read as tidy (item,input,system,measure,value"
        "[,rater]).",
    )
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    p.add_argument("--db", type=Path, required=True, help="store file (created if missing)")
    p.add_argument("--format", choices=["auto", *INGESTERS], default="auto")
    p.add_argument("--human-system", help="tidy files: the system holding human references")
    p.set_defaults(run=_cmd_ingest)

    p = sub.add_parser(
        "sql",
        help="run ad-hoc SQL against the store",
        description="Run SQL against the store (read-only unless --write). Views: story_scores, "
        "system_scores, scores_wide, rating_records, measure_catalogue.",
    )
    p.add_argument("query")
    _add_source(p)
    p.add_argument("--write", action="store_true", help="open the store read-write")
    _add_format(p)
    p.set_defaults(run=_cmd_sql)

    p = sub.add_parser(
        "correlate",
        help="correlations of metrics with human criteria (or each other)",
        description="Correlate measures at story (per-input, then averaged), system or global "
        "level. Human-written stories are excluded unless --include-human.",
    )
    p.add_argument("--level", choices=["story", "system", "global"], default="story")
    p.add_argument("--method", choices=["pearson", "spearman", "kendall"], default="kendall")
    p.add_argument(
        "--against", choices=["criteria", "metrics", "inter-criteria", "all"], default="criteria"
    )
    p.add_argument("--variant", choices=["a", "b", "c"], default="b", help="Kendall variant")
    p.add_argument("--nan-policy", choices=["omit", "propagate", "raise"], default="omit")
    p.add_argument("--include-human", action="store_true")
    _add_kinds(p)
    _add_source(p)
    _add_format(p)
    p.set_defaults(run=_cmd_correlate)

    p = sub.add_parser(
        "borda",
        help="Borda count of the metrics over criteria x coefficients (Tab. 6)",
        description="Rank the metrics in each of the 18 (criterion x coefficient) columns of "
        "absolute correlations at one level and sum the 0-based ranks; exact ties share a rank "
        "by --ties. Also reports the mean |r| aggregation.",
    )
    p.add_argument("--level", choices=["story", "system"], default="story")
    p.add_argument("--ties", choices=["average", "min", "max"], default="average")
    p.add_argument("--include-human", action="store_true")
    _add_kinds(p)
    _add_source(p)
    _add_format(p)
    p.set_defaults(run=_cmd_borda)

    p = sub.add_parser(
        "topk",
        help="correlations on the k best systems per criterion (Fig. 8)",
        description="For each criterion keep the k systems with the best mean rating and "
        "recompute each metric's correlation with it, for k in --ks.",
    )
    p.add_argument("--ks", default="4-10", help="k values: '4-10' or '4,6,8' (default 4-10)")
    p.add_argument("--level", choices=["story", "system"], default="system")
    p.add_argument("--method", choices=["pearson", "spearman", "kendall"], default="pearson")
    p.add_argument("--include-human", action="store_true")
    _add_kinds(p)
    _add_source(p)
    _add_format(p)
    p.set_defaults(run=_cmd_topk)
    return parser


def _add_source(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data",
        type=Path,
        metavar="DIR",
        help="HANNA data folder (default: $HANNA_DATA, else the fetch-data cache)",
    )
    p.add_argument("--db", type=Path, metavar="FILE", help="a store file (see `ingest`)")


def _add_kinds(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kinds",
        default="metric,llm-judge",
        help="automatic measure kinds: metric, llm-judge or both (default); the paper: metric",
    )


def _kinds(args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(k.strip() for k in args.kinds.split(",") if k.strip())


def _add_format(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=FORMATS, default="table")


def _open(args: argparse.Namespace, *, read_only: bool = True) -> duckdb.DuckDBPyConnection:
    """An existing --db store, else a store built from the HANNA data (in memory without --db)."""
    if args.db is not None and args.data is None and args.db.exists():
        return open_store(args.db, read_only=read_only)
    return build_hanna_store(resolve_hanna_dir(args.data), db_path=args.db)


def _emit(df: pl.DataFrame, fmt: str) -> None:
    if fmt == "csv":
        sys.stdout.write(df.write_csv())
    elif fmt == "json":
        sys.stdout.write(df.write_json() + "\n")
    else:
        with pl.Config(tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=60, tbl_width_chars=200):
            print(df)


def _cmd_fetch(args: argparse.Namespace) -> int:
    path = fetch_hanna(args.dest, local=args.local, include_annotations=args.with_annotations)
    print(path)
    return 0


def _cmd_ingest(args: argparse.Namespace) -> int:
    con = open_store(args.db)
    for path in args.paths:
        if path.is_dir():
            con.close()
            con = build_hanna_store(path, db_path=args.db)
            print(f"{path}: HANNA folder ingested")
            continue
        fmt = args.format
        if fmt == "auto":
            fmt = _HANNA_FILE_FORMATS.get(path.name, "tidy")
        kwargs = {"human_system": args.human_system} if fmt == "tidy" else {}
        summary = INGESTERS[fmt](con, path, **kwargs)
        print(f"{path}: {fmt}: {summary}")
    con.close()
    return 0


def _cmd_sql(args: argparse.Namespace) -> int:
    con = _open(args, read_only=not args.write)
    _emit(con.sql(args.query).pl(), args.format)
    return 0


def _cmd_correlate(args: argparse.Namespace) -> int:
    from hanna_stats.analyses.correlations import correlate

    df = correlate(
        _open(args),
        level=args.level,
        method=args.method,
        against=args.against,
        variant=args.variant,
        nan_policy=args.nan_policy,
        include_human=args.include_human,
        kinds=_kinds(args),
    )
    _emit(df, args.format)
    return 0


def _cmd_borda(args: argparse.Namespace) -> int:
    from hanna_stats.analyses.rankings import borda

    df = borda(
        _open(args),
        level=args.level,
        ties=args.ties,
        include_human=args.include_human,
        kinds=_kinds(args),
    )
    _emit(df, args.format)
    return 0


def _parse_ks(text: str) -> list[int]:
    if "-" in text:
        lo, hi = text.split("-", 1)
        return list(range(int(lo), int(hi) + 1))
    return [int(k) for k in text.split(",")]


def _cmd_topk(args: argparse.Namespace) -> int:
    from hanna_stats.analyses.rankings import topk

    df = topk(
        _open(args),
        ks=_parse_ks(args.ks),
        level=args.level,
        method=args.method,
        include_human=args.include_human,
        kinds=_kinds(args),
    )
    _emit(df, args.format)
    return 0
