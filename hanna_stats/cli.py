"""Command line: ``python -m hanna_stats SUBCOMMAND ...`` (see ``--help``)."""

from __future__ import annotations

import argparse
import importlib
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


#: Arguments that choose the data and the output rather than the analysis.
_NOT_ANALYSIS_ARGS = {"run", "data", "db", "format"}
NO_RATINGS = (
    "note: the store holds no rater-level ratings; ingest hanna_metric_scores_llm.csv "
    "(judge slots) or the raw annotations file to compute agreement"
)


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
    p.add_argument(
        "--method", choices=["pearson", "spearman", "kendall", "acc_eq"], default="kendall"
    )
    p.add_argument(
        "--against", choices=["criteria", "metrics", "inter-criteria", "all"], default="criteria"
    )
    p.add_argument("--variant", choices=["a", "b", "c"], default="b", help="Kendall variant")
    p.add_argument("--nan-policy", choices=["omit", "propagate", "raise"], default="omit")
    _add_common(p)
    p.set_defaults(run=_analysis("correlations:correlate"))

    p = sub.add_parser(
        "borda",
        help="Borda count of the metrics over criteria x coefficients (Tab. 6)",
        description="Rank the metrics in each of the 18 (criterion x coefficient) columns of "
        "absolute correlations at one level and sum the 0-based ranks; exact ties share a rank "
        "by --ties. Also reports the mean |r| aggregation.",
    )
    p.add_argument("--level", choices=["story", "system"], default="story")
    p.add_argument("--ties", choices=["average", "min", "max"], default="average")
    _add_common(p)
    p.set_defaults(run=_analysis("rankings:borda"))

    p = sub.add_parser(
        "topk",
        help="correlations on the k best systems per criterion (Fig. 8)",
        description="For each criterion keep the k systems with the best mean rating and "
        "recompute each metric's correlation with it, for k in --ks.",
    )
    p.add_argument(
        "--ks", type=_ks, default="4-10", help="k values: '4-10' or '4,6,8' (default 4-10)"
    )
    _add_level_method(p, level="system", method="pearson", levels=("story", "system"))
    _add_common(p)
    p.set_defaults(run=_analysis("rankings:topk"))

    p = sub.add_parser(
        "williams",
        help="Williams tests between metrics' correlations with a criterion (Figs. 27-38)",
        description="Williams (1959) test of H1 |r_a| > |r_b| for every ordered pair of metrics, "
        "the two correlations sharing the criterion. n defaults to the number of systems at "
        "system level and, by the paper's convention, to the number of inputs at story level.",
    )
    p.add_argument("--criterion", required=True, help="name or abbreviation (e.g. EM)")
    _add_level_method(p, level="system", method="pearson")
    p.add_argument("--n", type=int, help="sample size used by the test (see above)")
    p.add_argument("--alternative", choices=["greater", "two-sided", "less"], default="greater")
    p.add_argument("--correction", choices=["bh", "by", "holm", "bonferroni"])
    _add_common(p)
    p.set_defaults(run=_analysis("significance:williams"))

    p = sub.add_parser(
        "bootstrap-pairs",
        help="paired bootstrap comparison of systems; weighted F1 per metric (Fig. 7)",
        description="For every pair of systems, resample the inputs (indices drawn once from "
        "--seed and shared by every measure), label the pair by which system wins at "
        "confidence 1 - alpha, and score each metric's labels against each criterion's by "
        "weighted F1.",
    )
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--labels",
        dest="run",
        action="store_const",
        const=_analysis("significance:bootstrap_pair_labels"),
        help="print the per-pair labels instead of the F1 table",
    )
    _add_common(p)
    p.set_defaults(run=_analysis("significance:bootstrap_pairs"))

    p = sub.add_parser(
        "ci",
        help="bootstrap confidence intervals of metric-criterion correlations",
        description="Bootstrap CIs (Deutsch et al. 2021) resampling inputs, systems or both; "
        "percentile or BCa.",
    )
    _add_level_method(p, level="story", method="kendall", levels=("story", "system"))
    p.add_argument("--resample", choices=["inputs", "systems", "both"], default="inputs")
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--ci-method", choices=["percentile", "bca"], default="percentile")
    p.add_argument("--seed", type=int, default=0)
    _add_common(p)
    p.set_defaults(run=_analysis("resampling:correlation_ci"))

    p = sub.add_parser(
        "permutation",
        help="permutation tests (PERM-BOTH) between metrics' correlations with a criterion",
        description="For every ordered pair of metrics, test the difference of their "
        "correlations with the criterion by swapping their standardised scores per item "
        "(PERM-BOTH, Deutsch et al. 2021).",
    )
    p.add_argument("--criterion", required=True, help="name or abbreviation (e.g. EM)")
    _add_level_method(p, level="system", method="kendall")
    p.add_argument("--permutations", type=int, default=1000)
    p.add_argument("--alternative", choices=["two-sided", "greater", "less"], default="two-sided")
    p.add_argument("--seed", type=int, default=0)
    _add_common(p)
    p.set_defaults(run=_analysis("resampling:permutation_test"))

    p = sub.add_parser(
        "agreement",
        help="inter-annotator agreement: six ICC forms and Krippendorff's alpha (Tab. 3)",
        description="ICC1, ICC2, ICC3 and their k-rater forms with F-based intervals, and "
        "Krippendorff's alpha (interval, ordinal), per criterion, from rater-level ratings.",
    )
    p.add_argument("--criteria", nargs="+", metavar="C", help="names or abbreviations")
    p.add_argument("--confidence", type=float, default=0.95)
    _add_no_human(p)
    p.set_defaults(run=_analysis("agreement:agreement", empty_note=NO_RATINGS))

    p = sub.add_parser(
        "system-means",
        help="mean rating of each system per criterion with t-intervals (Tab. 4)",
        description="Means and Student-t intervals over individual ratings when the store "
        "holds them (unit 'rating'), else over story averages (unit 'story').",
    )
    p.add_argument("--confidence", type=float, default=0.95)
    _add_no_human(p)
    p.set_defaults(run=_analysis("agreement:system_means"))

    p = sub.add_parser(
        "report",
        help="the whole study as one offline, interactive HTML report",
        description="Run the paper's analyses on the store and write one self-contained HTML "
        "file (charts with inline JavaScript; no network access when opened). The same store "
        "and options give a byte-identical file. Sections whose inputs the study lacks say so.",
    )
    p.add_argument("--out", type=Path, default=Path("report.html"), help="HTML file to write")
    p.add_argument(
        "--tables",
        type=Path,
        metavar="DIR",
        help="also write every table as CSV and Parquet into DIR",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of every resampling")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples B")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level")
    p.add_argument("--confidence", type=float, default=0.95, help="level of the intervals")
    p.add_argument("--ci-resample", choices=["inputs", "systems", "both"], default="inputs")
    p.add_argument("--williams-level", choices=["story", "system"], default="system")
    p.add_argument(
        "--williams-method", choices=["pearson", "spearman", "kendall"], default="pearson"
    )
    p.add_argument("--correction", choices=["bh", "by", "holm", "bonferroni"])
    p.add_argument(
        "--ties", choices=["average", "min", "max"], default="average", help="Borda tie rule"
    )
    _add_kinds(p)
    _add_source(p)
    p.set_defaults(run=_cmd_report)

    p = sub.add_parser(
        "score",
        help="compute the paper's metrics from texts into a store or a tidy file",
        description="Score stories with registered metrics (--list shows them). --input is a "
        "CSV/Parquet/JSONL file with columns input,system,prompt,reference,story[,item], or a "
        "HANNA story file as it is. Scores go into the --db store as measures (one "
        "transaction; already scored (item, metric) pairs are skipped unless --force) and/or "
        "to --out (CSV or Parquet by extension: item,input,system,metric,value).",
    )
    p.add_argument("--list", action="store_true", help="print the metric registry and exit")
    _add_format(p)
    p.add_argument(
        "--metrics",
        default="all-string",
        help="comma-separated metric or scorer names, 'all-string' (default) or 'all'",
    )
    p.add_argument("--input", type=Path, metavar="FILE", help="texts to score")
    p.add_argument("--db", type=Path, metavar="FILE", help="store file to write the scores into")
    p.add_argument("--out", type=Path, metavar="FILE", help="tidy table to write (.csv, .parquet)")
    p.add_argument(
        "--hanna-compat", action="store_true", help="reproduce the published HANNA values"
    )
    p.add_argument("--force", action="store_true", help="recompute scores already in the store")
    p.add_argument("--device", help="torch device for model-based metrics (cpu, cuda)")
    p.add_argument("--batch-size", type=int, default=32, help="batch size of model-based metrics")
    p.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="checkpoint override for a model-based metric (repeatable)",
    )
    p.set_defaults(run=_cmd_score)
    return parser


def _add_source(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data",
        type=Path,
        metavar="DIR",
        help="HANNA data folder (default: $HANNA_DATA, else the fetch-data cache)",
    )
    p.add_argument("--db", type=Path, metavar="FILE", help="a store file (see `ingest`)")


def _add_level_method(
    p: argparse.ArgumentParser,
    *,
    level: str,
    method: str,
    levels: tuple[str, ...] = ("story", "system", "global"),
) -> None:
    p.add_argument("--level", choices=levels, default=level)
    p.add_argument("--method", choices=["pearson", "spearman", "kendall"], default=method)


def _add_common(p: argparse.ArgumentParser) -> None:
    """Options of every analysis: human stories, measure kinds, data source, output format."""
    p.add_argument(
        "--include-human", action="store_true", help="keep the human-written stories as a system"
    )
    _add_kinds(p)
    _add_source(p)
    _add_format(p)


def _add_kinds(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kinds",
        type=_comma_list,
        default=("metric",),
        help="automatic measure kinds, comma-separated: metric (default, the paper), llm-judge",
    )


def _add_no_human(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-human",
        dest="include_human",
        action="store_false",
        help="leave out the human-written stories",
    )
    _add_source(p)
    _add_format(p)


def _comma_list(text: str) -> tuple[str, ...]:
    return tuple(k.strip() for k in text.split(",") if k.strip())


def _ks(text: str) -> list[int]:
    """'4-10' -> [4, ..., 10]; '4,6,8' -> [4, 6, 8]."""
    if "-" in text:
        lo, hi = text.split("-", 1)
        return list(range(int(lo), int(hi) + 1))
    return [int(k) for k in text.split(",")]


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


def _cmd_report(args: argparse.Namespace) -> int:
    from reports import ReportSettings, write_report

    settings = ReportSettings(
        seed=args.seed,
        resamples=args.resamples,
        alpha=args.alpha,
        confidence=args.confidence,
        ci_resample=args.ci_resample,
        williams_level=args.williams_level,
        williams_method=args.williams_method,
        correction=args.correction,
        ties=args.ties,
        kinds=args.kinds,
    )
    out = write_report(_open(args), args.out, settings, tables=args.tables)
    print(out)
    return 0


def _cmd_score(args: argparse.Namespace) -> int:
    import scoring
    from scoring.io import read_texts
    from scoring.registry import ScoringConfig
    from scoring.run import resolve_metrics, score_input, score_into_store

    if args.list:
        table = scoring.list_metrics().select(
            "metric", "family", "reference", "symbol", "available", "scorer"
        )
        _emit(table, args.format)
        return 0
    if args.input is None or (args.db is None and args.out is None):
        raise ValueError("score needs --input FILE and --db FILE and/or --out FILE (or --list)")
    models = dict(_name_path(m) for m in args.model)
    config = ScoringConfig(
        hanna_compat=args.hanna_compat,
        device=args.device,
        batch_size=args.batch_size,
        models=models,
    )
    metrics = resolve_metrics(args.metrics)
    data = read_texts(args.input)
    if args.db is not None:
        con = open_store(args.db)
        try:
            tidy = score_into_store(con, data, metrics, config, force=args.force)
        finally:
            con.close()
        print(f"{args.input}: {tidy.height} scores written to {args.db}")
    else:
        tidy = score_input(data, metrics, config)
    if args.out is not None:
        if args.out.suffix.lower() in (".parquet", ".pq"):
            tidy.write_parquet(args.out)
        else:
            tidy.write_csv(args.out)
        print(f"{args.out}: {tidy.height} scores")
    return 0


def _name_path(text: str) -> tuple[str, str]:
    """'NAME=PATH' -> (NAME, PATH)."""
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise ValueError(f"--model expects NAME=PATH, got {text!r}")
    return name, path


def _analysis(target: str, *, empty_note: str | None = None) -> Callable[..., int]:
    """A subcommand running ``hanna_stats.analyses.<module>:<function>`` on the store.

    The subcommand's own options map one to one onto the function's keyword arguments (their
    ``dest`` is the keyword); the analysis module is imported only when the command runs.
    """

    def run(args: argparse.Namespace) -> int:
        module, function = target.split(":")
        analysis = getattr(importlib.import_module(f"hanna_stats.analyses.{module}"), function)
        kwargs = {k: v for k, v in vars(args).items() if k not in _NOT_ANALYSIS_ARGS}
        df = analysis(_open(args), **kwargs)
        if df.is_empty() and empty_note:
            print(empty_note, file=sys.stderr)
        _emit(df, args.format)
        return 0

    return run
