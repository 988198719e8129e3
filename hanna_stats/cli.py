"""Command line: ``python -m hanna_stats SUBCOMMAND ...`` (see ``--help``).

The subcommands are a table (:data:`COMMANDS`): each entry names what it runs and its options.
An analysis subcommand names its function in :mod:`hanna_stats.analyses` and maps each of its
options onto one keyword of that function; choices and defaults come from
:mod:`hanna_stats.vocabulary` (:data:`~hanna_stats.vocabulary.WORDS`,
:data:`~hanna_stats.vocabulary.DEFAULTS`), never from a copy here, so that a word has the same
values and default on the command line and in Python. Every option's help ends with its default,
generated from the table (:func:`shown`).

Output: every command that prints a table takes ``--format table|csv|json``. ``table`` fits the
terminal's width (:func:`shutil.get_terminal_size`: ``$COLUMNS``, else the terminal, else 80):
the columns constant over the table go to one line above it, long cells end in an ellipsis,
columns that do not fit go to further blocks (each repeating the key columns), numbers take
their column's format, and a line counts the rows (:mod:`hanna_stats.tables`); on a terminal a
long table shows its first and last rows (``--format csv`` or ``json`` print every row and
column at full precision).

Start-up: this module imports only the standard library. A subcommand's parser is built when
that subcommand is used, and DuckDB, polars, the Numba kernels, the report and the scorers are
imported by the command that needs them, so ``--help`` is instant and ``correlate --db FILE``
pays only for what it runs.

Data source of the analyses, ``sql`` and ``report``: ``--db FILE`` opens an existing store
read-only (``sql --write``: read-write); ``--data DIR`` builds one from the HANNA files in memory;
neither: ``$HANNA_DATA``, else the ``fetch-data`` cache, in memory. Only ``ingest`` and
``score`` create a store file.

Errors policy: an error the user can fix (bad option or input file, missing data or store, SQL
error, file-system error: ``ValueError`` and its subclasses ``InputError``/``ChecksumError``,
``OSError`` and its subclass ``DataNotFoundError``, ``duckdb.Error``, polars errors) is printed
as one line on stderr, ``error: <message>``, with exit status 2. Anything else is a bug and shows
its traceback. ``--debug`` (before the subcommand) re-raises every error. A closed output pipe
(``... | head``) ends the command quietly with exit status 0, whatever the format.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hanna_stats.vocabulary import DEFAULTS, WORDS

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from hanna_stats.store import Study

FORMATS = WORDS["format"]
#: Formats of ``ingest --format``: the dataset formats (:data:`hanna_stats.store.formats.FORMATS`).
INGEST_FORMATS = WORDS["data_format"]
NO_RATINGS = (
    "note: the store holds no rater-level ratings, which agreement needs: ingest a tidy file "
    "with a rater column (HANNA: hanna_metric_scores_llm.csv's judge slots or the raw "
    "annotations file; SummEval: its annotation file)"
)
BUILD_STORE = "build one with `python -m hanna_stats ingest --db FILE DIR`"

#: The choice lists of the options, by name: the words of :mod:`hanna_stats.vocabulary`.
CHOICES: dict[str, tuple[str, ...]] = WORDS


def choices(name: str) -> tuple[str, ...]:
    """The choice list called ``name`` in :data:`CHOICES`."""
    return CHOICES[name]


def shown(value: Any) -> str:
    """How a default reads in ``--help`` and in the table of defaults (``docs/command-line.md``):
    a word as it is typed, a tuple of words comma-separated (as ``--kinds`` takes them), ``None``
    as ``none``, a flag's ``False``/``True`` as ``off``/``on``."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value) or "none"
    return str(value)


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Opt:
    """One option of a subcommand.

    ``flags`` and ``settings`` go to :meth:`argparse.ArgumentParser.add_argument`; ``choices``
    names a list of :data:`CHOICES` (or is the list, for the CLI's own choices); ``keyword``
    says whether the value is an argument of the command's function, under the name ``dest``.
    The help ends with ``(default: X)``, X the default as :func:`shown` writes it (a flag:
    ``off``), or ``default_text`` when given: what a ``None`` default means.
    """

    flags: tuple[str, ...]
    dest: str
    settings: dict[str, Any]
    choices: str | tuple[str, ...] | None = None
    keyword: bool = True
    default_text: str | None = None

    def help(self) -> str:
        """The help text with the default appended (nothing for a required argument)."""
        text = self.settings.get("help", "")
        action = self.settings.get("action")
        if self.settings.get("required") or (
            not self.flags[0].startswith("-") and self.settings.get("nargs") not in ("?", "*")
        ):
            return text
        if action in ("store_true", "store_false", "store_const"):
            default = "off"  # the flag not given
        elif self.default_text is not None:
            default = self.default_text
        else:
            default = shown(self.settings.get("default"))
        return f"{text} (default: {default})" if text else f"(default: {default})"

    def add_to(self, parser: argparse.ArgumentParser | Any) -> None:
        settings = dict(self.settings)
        if isinstance(self.choices, str):
            settings["choices"] = choices(self.choices)
        elif self.choices is not None:
            settings["choices"] = self.choices
        if self.flags[0].startswith("-"):
            settings["dest"] = self.dest
        settings["help"] = self.help().replace("%", "%%")  # argparse formats help with %
        parser.add_argument(*self.flags, **settings)


def opt(
    *flags: str,
    choices: str | tuple[str, ...] | None = None,
    keyword: bool = True,
    default_text: str | None = None,
    **settings: Any,
) -> Opt:
    """An :class:`Opt`; ``dest`` as argparse derives it (``--nan-policy`` -> ``nan_policy``);
    ``default_text``: how the help states a ``None`` default (e.g. ``all``)."""
    long = [f for f in flags if f.startswith("--")] or flags
    dest = settings.pop("dest", None) or long[0].lstrip("-").replace("-", "_")
    return Opt(flags, dest, settings, choices, keyword, default_text)


@dataclass(frozen=True)
class Command:
    """One subcommand: its help, its options, and what it runs.

    ``run(command, args)`` runs it; an analysis names ``function`` (``module:function`` in
    :mod:`hanna_stats.analyses`) and is run by :func:`_run_analysis`. ``source`` adds ``--data``
    / ``--db`` (exclusive), ``output`` adds ``--format``.
    """

    name: str
    help: str
    description: str
    options: tuple[Opt, ...]
    run: Callable[[Command, argparse.Namespace], int]
    function: str | None = None
    source: bool = True
    output: bool = True
    empty_note: str | None = None

    def keywords(self, args: argparse.Namespace) -> dict[str, Any]:
        """The options that are arguments of the function, by keyword."""
        return {o.dest: getattr(args, o.dest) for o in (*self.options, *self.shared()) if o.keyword}

    def shared(self) -> tuple[Opt, ...]:
        """The options every analysis of a study has beside its own: ``--pool-subsets``."""
        return (POOL_SUBSETS,) if self.source and self.function is not None else ()

    def populate(self, parser: argparse.ArgumentParser) -> None:
        for option in (*self.options, *self.shared()):
            option.add_to(parser)
        if self.source:
            group = parser.add_mutually_exclusive_group()
            data, db, *subset = _source_options()
            data.add_to(group)
            db.add_to(group)
            for option in subset:
                option.add_to(parser)
        if self.output:
            OUTPUT_FORMAT.add_to(parser)
        parser.set_defaults(command=self)


def _seed(text: str) -> int:
    """A seed option, checked by the kernels' rule when the command line is read (before any
    work; a seed of 2**80 used to fail after the whole bootstrap)."""
    from hanna_stats.kernels import check_seed

    try:
        value = int(text)
        check_seed(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an integer in [0, 2**63); got {text!r}"
        ) from None
    return value


def _count(text: str) -> int:
    """A number of resamples or permutations, checked by the kernels' bounds when read."""
    from hanna_stats.kernels import check_count

    try:
        return check_count("count", int(text))
    except ValueError as err:
        message = str(err).removeprefix("count ") if text.strip().lstrip("-").isdigit() else ""
        raise argparse.ArgumentTypeError(message or f"must be an integer; got {text!r}") from None


def _sample_size(text: str) -> int:
    """A Williams test's sample size n, checked when read: an integer from 4 (the test has
    n - 3 degrees of freedom) to 2**63 - 1 (a larger one used to fail deep in polars)."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not 4 <= value < 2**63:
        raise argparse.ArgumentTypeError(
            "must be an integer of at least 4 (the Williams test has n - 3 degrees of freedom) "
            f"and below 2**63; got {text!r}"
        )
    return value


def _scale(text: str) -> tuple[str, tuple[float, float]]:
    """An ``ingest --scale NAME=LO..HI``, checked by the store's rule when read."""
    from hanna_stats.store.tidy import parse_scale

    try:
        return parse_scale(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _scales(declared: list[tuple[str, tuple[float, float]]]) -> dict[str, tuple[float, float]]:
    """The ``--scale`` options by measure; a measure given two is refused."""
    scales: dict[str, tuple[float, float]] = {}
    for name, bounds in declared:
        if name in scales:
            raise ValueError(f"--scale: measure {name!r} given a scale twice")
        scales[name] = bounds
    return scales


def _comma_list(text: str) -> tuple[str, ...]:
    return tuple(k.strip() for k in text.split(",") if k.strip())


def _ks(text: str) -> list[int]:
    """'4-10' -> [4, ..., 10]; '4,6,8' -> [4, 6, 8]; each k within the kernels' count bounds
    (a range up to 10**20 used to overflow)."""
    from hanna_stats.kernels import check_count

    lo, dash, hi = text.partition("-")
    try:
        ks = [int(lo), int(hi)] if dash else [int(k) for k in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected 'LO-HI' or comma-separated integers; got {text!r}"
        ) from None
    try:
        ks = [check_count("k", k) for k in ks]
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{err} (in {text!r})") from None
    return list(range(ks[0], ks[1] + 1)) if dash else ks


#: Help of ``--level`` by choice list.
LEVEL_HELP = {
    "level_word": "level of the statistic: item (across the systems within each input, then "
    "averaged over the inputs), system (across the systems' mean scores) or global (all items "
    "pooled); item may be called story, summary or segment, and is output as item",
    "item_system_word": "level of the statistic: item (across the systems within each input, "
    "then averaged over the inputs) or system (across the systems' mean scores); item may be "
    "called story, summary or segment, and is output as item",
}
METHOD_HELP = "correlation coefficient: pearson, spearman or kendall (Kendall's tau)"


def _level(choices: str = "level_word") -> Opt:
    return opt("--level", choices=choices, default=DEFAULTS["level"], help=LEVEL_HELP[choices])


def _method(choices: str = "method", help: str = METHOD_HELP) -> Opt:
    return opt("--method", choices=choices, default=DEFAULTS["method"], help=help)


INCLUDE_HUMAN = opt(
    "--include-human",
    action="store_true",
    help="keep the human-written stories (HANNA's Human, a WMT reference scored as a system) as "
    "a system",
)
NO_HUMAN = opt(
    "--no-human",
    dest="include_human",
    action="store_false",
    help="leave out the human-written stories, which the raters rated like the systems' ones",
)
KINDS = opt(
    "--kinds",
    type=_comma_list,
    default=DEFAULTS["kinds"],
    metavar="KIND[,KIND...]",
    help="kinds of automatic measures, comma-separated: metric (the paper's metrics), llm-judge "
    "(the LLM judges' ratings)",
)
CRITERION = opt(
    "--criterion", required=True, help="the human criterion, by name or abbreviation (e.g. EM)"
)
MEASURES = opt(
    "--measures",
    nargs="+",
    metavar="M",
    default_text="every measure of --kinds",
    help="measure names, or criteria's abbreviations",
)
RATED_KINDS = opt(
    "--kinds",
    type=_comma_list,
    default=DEFAULTS["rated_kinds"],
    metavar="KIND[,KIND...]",
    help="kinds of the measures with raters, comma-separated: human (the people's ratings), "
    "llm-judge (a judge's tries as raters), metric",
)
ONE_CRITERION = opt(
    "--criterion",
    default=None,
    default_text="every criterion",
    help="only this criterion, by name or abbreviation",
)
SYSTEM_SCORES = opt(
    "--system-scores",
    choices="system_scores",
    default=DEFAULTS["system_scores"],
    help="system level: a system's value is the mean of its items (mean) or the one the study "
    "gives (given: WMT's .sys.score files; measures without one are left out, named on stderr)",
)
SEED = opt(
    "--seed",
    type=_seed,
    default=DEFAULTS["seed"],
    help="seed of the random draws, an integer in [0, 2**63): the same seed, the same result",
)
RESAMPLES = opt("--resamples", type=_count, default=1000, help="number of bootstrap resamples B")
PERMUTATIONS = opt(
    "--permutations",
    type=_count,
    default=1000,
    help="number of permutations K (a p-value is a count of permuted statistics out of K)",
)
SCHEDULER = opt(
    "--scheduler",
    metavar="ADDRESS",
    keyword=False,
    default_text="none: in this process",
    help="run the resampling on a Dask cluster, the same numbers bit for bit: a scheduler's "
    "address (tcp://host:8786), or local[:N] for a cluster of N worker processes on this machine "
    "(default N: the cores); needs the cluster extra (pip install 'hanna_stats[cluster]')",
)
CONFIDENCE = opt(
    "--confidence",
    type=float,
    default=DEFAULTS["confidence_level"],
    help="confidence level of the intervals, in (0, 1)",
)
ALPHA = opt("--alpha", type=float, default=0.05, help="significance level, in (0, 0.5)")
VARIANT = opt(
    "--variant",
    choices="variant",
    default=DEFAULTS["variant"],
    help="Kendall's tau variant, as scipy's kendalltau: a (no tie correction), b (corrected for "
    "ties, the paper's) or c (Stuart's); pearson and spearman ignore it",
)
NAN_POLICY = opt(
    "--nan-policy",
    choices="nan_policy",
    default=DEFAULTS["nan_policy"],
    help="missing values: omit (drop the pairs with one), propagate (a NaN correlation) or "
    "raise (an error)",
)
ALTERNATIVE = opt(
    "--alternative",
    choices="alternative",
    default=DEFAULTS["alternative"],
    help="alternative hypothesis of each ordered pair (a, b) of measures: greater (a agrees "
    "better with the criterion), less (b does) or two-sided (they differ)",
)
CORRECTION = opt(
    "--correction",
    choices="correction",
    default=DEFAULTS["correction"],
    default_text="none, the p-values as the tests give them",
    help="multiple-testing correction of the p-values: bh (Benjamini-Hochberg), by "
    "(Benjamini-Yekutieli), holm or bonferroni",
)
GROUP_BY = opt(
    "--group-by",
    choices="group_by",
    default=DEFAULTS["group_by"],
    help="item level: the groups correlated one by one, then averaged: each input, across the "
    "systems (input), or each system, across the inputs (system)",
)
STATISTIC = opt(
    "--statistic",
    choices="tie_statistic",
    default="acc_eq",
    help="acc_eq (the share of pairs of outputs the metric orders as the people do, ties "
    "included) or tau_eq (2 acc_eq - 1)",
)


def _sample_size_opt(default_text: str) -> Opt:
    return opt(
        "--n",
        type=_sample_size,
        default_text=default_text,
        help="sample size n of the Williams test (n - 3 degrees of freedom)",
    )


#: Options of the LLM-judge analyses (judges, rater-panel).
JUDGE_OPTIONS = (
    _level(),
    _method(),
    VARIANT,
    opt(
        "--reference",
        choices="reference",
        default="panel",
        help="the human rater's panel: the mean of all raters (panel, the TACL study) or of the "
        "other raters (others)",
    ),
    INCLUDE_HUMAN,
)
#: What ``--n`` of the Williams tests defaults to.
WILLIAMS_N = (
    "the number of systems at system level, of inputs at item level (the paper's convention), "
    "of items at global level"
)
DATA_DEFAULT = "$HANNA_DATA, else the fetch-data cache"
#: Every analysis command's --pool-subsets (added by :meth:`Command.populate`).
POOL_SUBSETS = opt(
    "--pool-subsets",
    dest="subsets",
    action="store_const",
    const="pooled",
    default=DEFAULTS["subsets"],
    help="a store of several subsets (WMT: language pairs) is analysed per subset, the tables "
    "stacked under a first column subset, as the WMT metrics tasks report every pair; this "
    "flag pools the subsets' items into one analysis instead (--subset LABEL: one subset)",
)
OUTPUT_FORMAT = opt(
    "--format",
    choices="format",
    default=DEFAULTS["format"],
    keyword=False,
    help="output: table (as wide as the terminal; on a terminal, a long table shows its first "
    "and last rows), csv or json (every row, full precision)",
)


def _source_options() -> tuple[Opt, ...]:
    """``--data`` and ``--db`` (exclusive), ``--systems``, ``--exclude-systems``, ``--subset``."""
    return (
        opt(
            "--data",
            type=Path,
            metavar="DIR",
            keyword=False,
            default_text=DATA_DEFAULT,
            help="HANNA data folder, built into an in-memory store",
        ),
        opt(
            "--db",
            type=Path,
            metavar="FILE",
            keyword=False,
            default_text="none: --data is read",
            help="an existing store file (see `ingest`), opened read-only",
        ),
        opt(
            "--systems",
            type=_names,
            metavar="NAME[,NAME...]",
            keyword=False,
            default_text="all",
            help="analyse only these systems",
        ),
        opt(
            "--exclude-systems",
            type=_names,
            metavar="NAME[,NAME...]",
            keyword=False,
            default_text="none",
            help="leave these systems out, e.g. a reference or an outlier",
        ),
        opt(
            "--subset",
            metavar="LABEL",
            keyword=False,
            default_text="all",
            help="analyse only this subset of the store (WMT: a language pair, e.g. en-de)",
        ),
    )


def _analysis(
    name: str, function: str, help: str, description: str, *options: Opt, **more: Any
) -> Command:
    return Command(name, help, description, options, _run_analysis, function=function, **more)


def _commands() -> tuple[Command, ...]:
    """Every subcommand, in the order of ``--help``."""
    return (
        *_data_commands(),
        *_correlation_commands(),
        *_resampling_commands(),
        *_cluster_and_rater_commands(),
        *_page_commands(),
        *_scoring_commands(),
    )


def _data_commands() -> tuple[Command, ...]:
    """Fetching, ingesting and querying the store."""
    return (
        Command(
            "fetch-data",
            "download the public HANNA files (pinned commits, SHA-256 checked) into the cache",
            "Download the HANNA files from the public repository at pinned commits, verify "
            "their SHA-256 and store them in the cache (HANNA_STATS_CACHE, default "
            "~/.cache/hanna_stats). Offline, pass a local copy with --local DIR.",
            (
                opt(
                    "--dest",
                    type=Path,
                    metavar="DIR",
                    default_text="the cache",
                    help="target folder",
                ),
                opt(
                    "--local",
                    type=Path,
                    metavar="DIR",
                    default_text="none: download",
                    help="verify and copy a local copy of the files instead of downloading them",
                ),
                opt(
                    "--with-annotations",
                    dest="include_annotations",
                    action="store_true",
                    help="also fetch the raw rater-level annotations (no pinned checksum: "
                    "unverified)",
                ),
            ),
            _cmd_fetch,
            source=False,
            output=False,
        ),
        Command(
            "ingest",
            "load HANNA files, SummEval, a WMT test set or a tidy CSV/Parquet into a store",
            "Ingest files into a DuckDB store (one transaction per file; re-running does not "
            "duplicate). PATH is a HANNA data folder, a WMT test set in MTME's layout (a folder "
            "with human-scores/ and metric-scores/; one language pair: --lp, --ref) or a file; "
            "the format of a file is taken "
            "from its HANNA name, else a .jsonl file is SummEval's annotations "
            "(model_annotations.aligned[.paired].jsonl), else it is read as tidy (item,input,"
            "system,measure,value[,rater]).",
            (
                opt(
                    "paths",
                    nargs="+",
                    type=Path,
                    metavar="PATH",
                    keyword=False,
                    help="a HANNA data folder, a WMT test set folder or a file (see above)",
                ),
                opt("--db", type=Path, required=True, help="store file (created if missing)"),
                opt(
                    "--format",
                    choices=("auto", *INGEST_FORMATS),
                    default="auto",
                    keyword=False,
                    help="the dataset format of every PATH: auto (from its name and content, "
                    "see above) or one of the formats named",
                ),
                opt(
                    "--human-system",
                    default_text="none",
                    help="tidy files: the system holding human references",
                ),
                opt(
                    "--human",
                    type=_comma_list,
                    default=(),
                    metavar="MEASURE[,MEASURE...]",
                    help="tidy files: measures of kind human (the criteria), comma-separated, "
                    "as a `kind` column would mark them",
                ),
                opt(
                    "--scale",
                    type=_scale,
                    action="append",
                    default=[],
                    keyword=False,
                    metavar="NAME=LO..HI",
                    help="tidy files: measure NAME's Likert scale, whole numbers LO to HI "
                    "(repeatable), as scale_min/scale_max columns would declare it; a rating off "
                    "it is refused with its row. A human measure without one gets one inferred "
                    "from its values, printed in the summary",
                ),
                opt("--study", default_text="the file's stem", help="tidy files: the study's name"),
                opt(
                    "--item-word",
                    default="item",
                    metavar="WORD",
                    help="tidy files: the study's word for its items, e.g. summary or segment "
                    "(the report's 'summary level')",
                ),
                opt(
                    "--lp",
                    default_text="the test set's only one",
                    help="WMT test sets: the language pair (needed if several)",
                ),
                opt(
                    "--ref",
                    default_text="the test set's only one",
                    help="WMT test sets: the standard reference (needed if several)",
                ),
                opt(
                    "--extend",
                    action="store_true",
                    help="add a file of another study (none of its inputs in the store)",
                ),
                opt(
                    "--replace",
                    action="store_true",
                    help="let the file change values already in the store",
                ),
                opt(
                    "--scale-policy",
                    choices="scale_policy",
                    default_text="keep for HANNA's LLM file, as its authors used it; else error",
                    help="what a judge's or metric's value outside its measure's scale does: "
                    "error, missing, clip or keep (always counted); human ratings off their "
                    "scale are always refused",
                ),
            ),
            _cmd_ingest,
            source=False,
            output=False,
        ),
        Command(
            "sql",
            "run ad-hoc SQL against the store",
            "Run SQL against the store (read-only unless --write). Views: story_scores, "
            "system_scores, given_system_scores, scores_wide, rating_records, "
            "measure_catalogue. The query reads and "
            "writes nothing outside the store (no COPY TO, read_csv, ATTACH or extension "
            "install) unless --allow-files.",
            (
                opt("query", help="one SQL statement, e.g. SELECT * FROM system_scores"),
                opt("--write", action="store_true", help="open the store file read-write"),
                opt(
                    "--allow-files",
                    action="store_true",
                    help="let the query read and write files (COPY, read_csv, ATTACH)",
                ),
            ),
            _cmd_sql,
        ),
    )


def _correlation_commands() -> tuple[Command, ...]:
    """Correlations, rankings and the Williams test."""
    return (
        _analysis(
            "correlate",
            "correlations:correlate",
            "correlations of metrics with human criteria (or each other)",
            "Correlate measures at item (per-input, then averaged), system or global level. "
            "Human-written stories are excluded unless --include-human. Column n: the pairs a "
            "system- or global-level correlation is computed on (systems, items); n_groups: "
            "the groups an item-level mean averages (n_skipped: those undefined).",
            _level(),
            _method(
                "coefficient",
                METHOD_HELP + ", or acc_eq (pairwise accuracy with ties, Deutsch et al. 2023)",
            ),
            opt(
                "--against",
                choices="against",
                default="criteria",
                help="what is correlated with what: criteria (each automatic measure with each "
                "human criterion), metrics (automatic measures with each other), "
                "inter-criteria (the criteria with each other) or all (every pair of measures)",
            ),
            VARIANT,
            NAN_POLICY,
            INCLUDE_HUMAN,
            KINDS,
            opt(
                "--pvalue-method",
                choices="pvalue_method",
                default_text="none, no p-values",
                help="add each correlation's two-sided p-value (system and global level, on "
                "its n pairs), as scipy.stats' kendalltau/spearmanr/pearsonr: auto (scipy's "
                "default), exact or asymptotic",
            ),
            GROUP_BY,
            opt(
                "--weighting",
                choices="weighting",
                default=DEFAULTS["weighting"],
                help="item level: the mean over the groups weighs each alike (uniform) or by "
                "its number of observations (count)",
            ),
            opt(
                "--confidence",
                type=float,
                default_text="none, no intervals",
                help="Pearson at system/global level: add Fisher z intervals at this level "
                "(columns ci_low, ci_high)",
            ),
            SYSTEM_SCORES,
        ),
        _analysis(
            "borda",
            "rankings:borda",
            "Borda count of the metrics over criteria x coefficients (Tab. 6)",
            "Rank the metrics in each of the 18 (criterion x coefficient) columns of absolute "
            "correlations at one level and sum the 0-based ranks; exact ties share a rank by "
            "--ties. Also reports the mean |r| aggregation.",
            _level("item_system_word"),
            opt(
                "--ties",
                choices="ties",
                default=DEFAULTS["ties"],
                help="rank of equal |correlations| in a column: the mean of their 0-based "
                "positions (average), the first (min) or the last (max)",
            ),
            INCLUDE_HUMAN,
            KINDS,
            SYSTEM_SCORES,
        ),
        _analysis(
            "topk",
            "rankings:topk",
            "correlations on the k best systems per criterion (Fig. 8)",
            "For each criterion keep the k systems with the best mean rating and recompute "
            "each metric's correlation with it, for k in --ks.",
            opt("--ks", type=_ks, default="4-10", help="k values: a range 4-10 or a list 4,6,8"),
            _level("item_system_word"),
            _method(),
            INCLUDE_HUMAN,
            KINDS,
            SYSTEM_SCORES,
        ),
        _analysis(
            "williams",
            "significance:williams",
            "Williams tests between metrics' correlations with a criterion (Figs. 27-38)",
            "Williams (1959) test of H1 |r_a| > |r_b| for every ordered pair of metrics, the two "
            "correlations sharing the criterion. n defaults to the number of systems at system "
            "level, by the paper's convention to the number of inputs at item level, and to the "
            "number of items at global level. --correction adjusts the p-values within each "
            "--family: the criterion's ordered "
            "pairs (criterion), one ordered pair across the study's criteria (pair: Chhun et "
            "al. 2024's family of one judge against another), or every test of every criterion "
            "at this level and method (all).",
            CRITERION,
            _level(),
            _method(),
            _sample_size_opt(WILLIAMS_N),
            ALTERNATIVE,
            CORRECTION,
            opt(
                "--family",
                choices="family",
                default=DEFAULTS["family"],
                help="the tests --correction adjusts together: criterion, pair or all (see above)",
            ),
            INCLUDE_HUMAN,
            KINDS,
            SYSTEM_SCORES,
        ),
        _analysis(
            "bootstrap-pairs",
            "significance:bootstrap_pairs",
            "paired bootstrap comparison of systems; weighted F1 per metric (Fig. 7)",
            "For every pair of systems, resample the inputs (indices drawn once from --seed and "
            "shared by every measure), label the pair by which system wins at confidence "
            "1 - alpha, and score each metric's labels against each criterion's by weighted F1.",
            RESAMPLES,
            ALPHA,
            SEED,
            SCHEDULER,
            opt(
                "--labels",
                dest="function",
                action="store_const",
                const="significance:bootstrap_pair_labels",
                keyword=False,
                help="print the per-pair labels instead of the F1 table",
            ),
            INCLUDE_HUMAN,
            KINDS,
        ),
    )


def _resampling_commands() -> tuple[Command, ...]:
    """Intervals, permutation tests and tie calibration."""
    return (
        _analysis(
            "ci",
            "resampling:correlation_ci",
            "bootstrap confidence intervals of metric-criterion correlations",
            "Bootstrap CIs (Deutsch et al. 2021) resampling inputs, systems or both; percentile "
            "or BCa.",
            _level("item_system_word"),
            _method(),
            opt(
                "--resample",
                choices="resample",
                default=DEFAULTS["resample"],
                help="what a resample draws with replacement: the inputs (BOOT-INPUTS), the "
                "systems (BOOT-SYSTEMS) or both (BOOT-BOTH; Deutsch et al. 2021)",
            ),
            RESAMPLES,
            CONFIDENCE,
            opt(
                "--ci-method",
                choices="ci_method",
                default=DEFAULTS["ci_method"],
                help="interval: percentile (quantiles of the resampled correlations) or bca "
                "(bias-corrected and accelerated, Efron 1987; adds a jackknife)",
            ),
            SEED,
            SCHEDULER,
            INCLUDE_HUMAN,
            KINDS,
        ),
        _analysis(
            "permutation",
            "resampling:permutation_test",
            "permutation tests (PERM-BOTH/SYS/INPUT) of metrics' correlations with a criterion",
            "For every ordered pair of metrics, test the difference of their correlations with "
            "the criterion by swapping their standardised scores per item, per system or per "
            "input (--unit both/systems/inputs: PERM-BOTH, PERM-SYS, PERM-INPUT, Deutsch et al. "
            "2021); --stop-alpha stops a pair once its decision at that level is settled.",
            CRITERION,
            _level(),
            _method(),
            PERMUTATIONS,
            ALTERNATIVE,
            opt(
                "--unit",
                choices="resample",
                default="both",
                help="what one coin swaps between the two metrics' standardised scores: each "
                "item (both: PERM-BOTH), each system's items (systems: PERM-SYS) or each input's "
                "items (inputs: PERM-INPUT)",
            ),
            opt(
                "--stop-alpha",
                type=float,
                default=None,
                default_text="none, every permutation",
                help="stop a pair once its decision at this level is settled (Clopper-Pearson "
                "rule)",
            ),
            SEED,
            SCHEDULER,
            INCLUDE_HUMAN,
            KINDS,
        ),
        _analysis(
            "calibrate",
            "meta_eval:calibrated_accuracy",
            "tie-calibrated pairwise accuracy (acc_eq, tau_eq) of metrics with the criteria",
            "Pairwise accuracy with ties where a metric ties two outputs whose scores differ by "
            "at most epsilon, epsilon chosen per metric and criterion to maximise the "
            "statistic, one epsilon for all groups (Deutsch, Foster and Freitag 2023).",
            _level(),
            STATISTIC,
            GROUP_BY,
            ONE_CRITERION,
            SYSTEM_SCORES,
            INCLUDE_HUMAN,
            KINDS,
        ),
        _analysis(
            "calibrated-permutation",
            "meta_eval:calibrated_comparison",
            "pairwise permutation tests between tie-calibrated metrics for a criterion",
            "Each metric calibrated once; each permutation swaps two metrics' outcomes on each "
            "pair of observations (mt-metrics-eval's PairwisePermutationSigDiff). p-value of "
            "H1: measure_a agrees better than measure_b.",
            CRITERION,
            _level(),
            STATISTIC,
            PERMUTATIONS,
            SEED,
            SCHEDULER,
            GROUP_BY,
            opt(
                "--swap",
                choices="swap",
                default="pairs",
                help="swap the metrics' outcomes per pair (pairs) or their z-scored scores per "
                "cell, re-calibrating both every permutation (scores; slow: MTME's "
                "PermutationSigDiff)",
            ),
            SYSTEM_SCORES,
            INCLUDE_HUMAN,
            KINDS,
        ),
        _analysis(
            "spa",
            "meta_eval:spa",
            "soft pairwise accuracy of metrics with the criteria (Thompson et al. 2024)",
            "1 - mean over system pairs of |p_human - p_metric|, the one-sided paired "
            "permutation p-values (sign flips over the inputs) of 'system i beats system j'. "
            "Systems without scores of the criterion are left out, and an input drops out of a "
            "pair's comparison when the criterion or the metric misses a score (as "
            "mt-metrics-eval); the columns n_systems_dropped and n_missing count them. The "
            "permutations need the items' scores: --system-scores given is refused.",
            ONE_CRITERION,
            PERMUTATIONS,
            SEED,
            SCHEDULER,
            SYSTEM_SCORES,
            INCLUDE_HUMAN,
            KINDS,
        ),
    )


def _cluster_and_rater_commands() -> tuple[Command, ...]:
    """Significance clusters; agreement of raters and judges; system means."""
    return (
        _analysis(
            "clusters",
            "meta_eval:metric_clusters",
            "leaderboard of the metrics for a criterion in significance clusters (WMT ranks)",
            "Sort the metrics by their statistic; a metric starts a new cluster when one of the "
            "current cluster beats it with one-sided permutation p <= --alpha (PERM-BOTH for "
            "the correlations, the calibrated pairwise test for acc_eq). Column pvalue_next: "
            "the one-sided p-value that the row's metric beats the metric on the next row "
            "(null on the last row). The cut is decided by every member of the cluster, not by "
            "the row above alone: a new cluster can start below a row with pvalue_next above "
            "--alpha when an earlier member of the cluster beats the new metric with p <= "
            "--alpha.",
            CRITERION,
            _level(),
            _method(
                "coefficient",
                "statistic the metrics are ranked by: a correlation (pearson, spearman or "
                "kendall; PERM-BOTH tests) or acc_eq (tie-calibrated pairwise accuracy; pairwise "
                "permutation tests)",
            ),
            PERMUTATIONS,
            SEED,
            SCHEDULER,
            ALPHA,
            SYSTEM_SCORES,
            INCLUDE_HUMAN,
            KINDS,
        ),
        _analysis(
            "agreement",
            "ratings:agreement",
            "inter-rater agreement: six ICC forms and Krippendorff's alpha (Tab. 3)",
            "ICC1, ICC2, ICC3 and their k-rater forms with F-based intervals, and "
            "Krippendorff's alpha (interval, ordinal), per measure, from rater-level values: "
            "the human criteria by default; with --kinds llm-judge, each judge's "
            "self-consistency across its tries.",
            MEASURES,
            RATED_KINDS,
            CONFIDENCE,
            NO_HUMAN,
            empty_note=NO_RATINGS,
        ),
        _analysis(
            "nominal-agreement",
            "nominal:nominal_agreement",
            "chance-corrected agreement of categorical ratings: AC1, Fleiss' and Cohen's kappa, "
            "alpha",
            "Gwet's AC1, Fleiss' kappa, Krippendorff's alpha (nominal) and, for two raters, "
            "Cohen's kappa, per measure, of any rater-level values taken as categories (0/1 "
            "flags, Likert points, an LLM judge's labels across its tries): the human criteria "
            "by default. AC1 and Fleiss' kappa have Student-t intervals (irrCAC's), Cohen's "
            "kappa a normal one (statsmodels'), unless --interval-method sets one for all "
            "three; alpha has a percentile bootstrap interval over items (--resamples draws "
            "from --seed).",
            MEASURES,
            RATED_KINDS,
            CONFIDENCE,
            opt(
                "--interval-method",
                choices="interval_method",
                default=None,
                default_text="t for AC1 and Fleiss' kappa, z for Cohen's kappa",
                help="distribution of the closed-form intervals and p-values: t (Student, n - 1 "
                "degrees of freedom) or z (normal)",
            ),
            opt(
                "--categories",
                choices="categories",
                default="scale",
                help="the categories: the whole numbers of the measure's Likert or integer scale, "
                "used or not (AC1 depends on their number), or only the labels observed",
            ),
            RESAMPLES,
            SEED,
            NO_HUMAN,
            empty_note=NO_RATINGS,
        ),
        _analysis(
            "judges",
            "judges:judge_criteria",
            "LLM judges against the criteria they rate, beside one human rater (TACL 2024)",
            "The criterion-matched view (Chhun et al. 2024): each LLM judge's rating of a "
            "criterion, per prompt variant, correlated with that human criterion; the human "
            "rater row (each rater against the panel, averaged over raters) and each column's "
            "mean |r|.",
            *JUDGE_OPTIONS,
        ),
        _analysis(
            "judge-scale",
            "judges:judge_scale",
            "how many LLM-judge values the ingests found outside their scale, per judge and prompt",
            "Counts of each judge's values below and above its scale, not whole, unparsed and "
            "missing, per prompt variant, with the scale policy applied at ingest (HANNA's LLM "
            "file codes an unparsable answer as -1 inside 3-try means; its policy is keep, as "
            "the TACL study used the values).",
        ),
        _analysis(
            "judge-williams",
            "judges:judge_williams",
            "Williams tests of each LLM judge against the best metric of its criterion",
            "For each criterion, the metric with the largest |correlation| at --level; every "
            "judge measure of that criterion (each prompt) is tested against it in both "
            "directions (one-sided Williams tests), --correction adjusting one judge and "
            "prompt against one metric across the criteria (Chhun et al. 2024's family).",
            _level(),
            _method(),
            _sample_size_opt(WILLIAMS_N),
            CORRECTION,
            INCLUDE_HUMAN,
        ),
        _analysis(
            "rater-panel",
            "judges:rater_panel",
            "each human rater against the panel, per criterion",
            "Correlation of each rater's ratings with the mean of all raters (panel) or of the "
            "other raters (others), at item, system or global level, and the mean over raters.",
            *JUDGE_OPTIONS,
        ),
        _analysis(
            "system-means",
            "ratings:system_means",
            "mean rating of each system per measure with t-intervals (Tab. 4)",
            "Means and Student-t intervals over a measure's individual ratings (or an LLM "
            "judge's tries) when the store holds them (unit 'rating'), else over item values "
            "(unit 'item'); the human criteria by default, LLM judges with --kinds llm-judge.",
            MEASURES,
            RATED_KINDS,
            CONFIDENCE,
            NO_HUMAN,
        ),
    )


def _page_commands() -> tuple[Command, ...]:
    """The user study and the report."""
    return (
        Command(
            "user-study",
            "agreement of the raters of the TACL 2024 user study on LLM judges' explanations",
            "Gwet's AC1, Fleiss' kappa and Krippendorff's alpha (nominal) of the 3 raters' 0/1 "
            "flags, per issue, with Student-t intervals for AC1 and kappa (irrCAC's) and a "
            "percentile bootstrap interval over items for alpha (--resamples draws from "
            "--seed). FILE defaults to user_study.csv in the HANNA data folder (--data DIR, "
            "else $HANNA_DATA, else the fetch-data cache).",
            (
                opt(
                    "file",
                    nargs="?",
                    type=Path,
                    metavar="FILE",
                    keyword=False,
                    default_text="user_study.csv in the data folder",
                    help="the user-study CSV",
                ),
                opt(
                    "--data",
                    type=Path,
                    metavar="DIR",
                    keyword=False,
                    default_text=DATA_DEFAULT,
                    help="HANNA data folder",
                ),
                CONFIDENCE,
                RESAMPLES,
                SEED,
            ),
            _cmd_user_study,
            source=False,
        ),
        Command(
            "report",
            "the whole study as one offline, interactive HTML report",
            "Run the paper's analyses on the store and write one self-contained HTML file "
            "(charts with inline JavaScript; no network access when opened). The same store and "
            "options give a byte-identical file. Sections whose inputs the study lacks say so.",
            (
                opt(
                    "--out",
                    type=Path,
                    default=Path("report.html"),
                    keyword=False,
                    help="HTML file to write",
                ),
                opt(
                    "--tables",
                    type=Path,
                    metavar="DIR",
                    keyword=False,
                    default_text="none",
                    help="also write every table as CSV and Parquet into DIR",
                ),
                opt(
                    "--seed",
                    type=_seed,
                    default=DEFAULTS["seed"],
                    help="seed of every resampling (bootstrap intervals, paired bootstrap)",
                ),
                RESAMPLES,
                opt(
                    "--alpha",
                    type=float,
                    default=0.05,
                    help="significance level of the paired bootstrap labels and the Williams "
                    "matrices",
                ),
                CONFIDENCE,
                opt(
                    "--ci-resample",
                    choices="resample",
                    default=DEFAULTS["resample"],
                    help="what the correlation intervals resample: inputs, systems or both",
                ),
                opt(
                    "--williams-level",
                    choices="item_system_word",
                    default="system",
                    help="level of the Williams matrices (the report's own setting: the paper's "
                    "figures are at system level)",
                ),
                opt(
                    "--williams-method",
                    choices="method",
                    default="pearson",
                    help="coefficient of the Williams matrices (the report's own setting: the "
                    "paper's figures use pearson)",
                ),
                opt(
                    "--correction",
                    choices="correction",
                    default=DEFAULTS["correction"],
                    default_text="none, the tests' own p-values",
                    help="multiple-testing correction of the Williams p-values: bh, by, holm or "
                    "bonferroni",
                ),
                opt(
                    "--ties",
                    choices="ties",
                    default=DEFAULTS["ties"],
                    help="tie rule of the Borda count: average, min or max",
                ),
                KINDS,
            ),
            _cmd_report,
            output=False,
        ),
    )


def _scoring_commands() -> tuple[Command, ...]:
    """Scoring texts into a store."""
    return (
        Command(
            "score",
            "compute the paper's metrics from texts into a store or a tidy file",
            "Score stories with registered metrics (--list shows them). --input is a "
            "CSV/Parquet/JSONL file with columns input,system,prompt,reference,story[,item] "
            "(further references in reference_2, reference_3, ...), or "
            "a HANNA story file as it is; without --input, the texts the --db store holds are "
            "scored (each item's output against all its references, its input's text as the "
            "source). Scores go into the --db store as measures (one "
            "transaction; already scored (item, metric) pairs are skipped unless --force) and/or "
            "to --out (CSV or Parquet by extension: item,input,system,metric,value).",
            (
                opt(
                    "--list",
                    action="store_true",
                    help="print the metric registry as a table (see --format) and exit",
                ),
                opt(
                    "--metrics",
                    default="all-string",
                    help="comma-separated metric or scorer names, 'all-string' (the string-based "
                    "metrics) or 'all'",
                ),
                opt(
                    "--input",
                    type=Path,
                    metavar="FILE",
                    default_text="the texts the --db store holds",
                    help="texts to score",
                ),
                opt(
                    "--db",
                    type=Path,
                    metavar="FILE",
                    default_text="none",
                    help="store file to write the scores into (created if missing when --input)",
                ),
                opt(
                    "--out",
                    type=Path,
                    metavar="FILE",
                    default_text="none",
                    help="tidy table to write (.csv, .parquet)",
                ),
                opt(
                    "--hanna-compat",
                    action="store_true",
                    help="reproduce the published HANNA values",
                ),
                opt(
                    "--split-sentences",
                    action="store_true",
                    help="ROUGE: one sentence per line first (spaCy sentencizer; ROUGE-L, -W)",
                ),
                opt(
                    "--lowercase",
                    action="store_true",
                    help="Novelty-n and Repetition-n on lowercased tokens (SummEval's current)",
                ),
                opt("--force", action="store_true", help="recompute scores already in the store"),
                opt(
                    "--extend",
                    action="store_true",
                    help="score texts of another study than the store's into it",
                ),
                opt(
                    "--device",
                    default_text="cuda when available, else cpu",
                    help="torch device for model-based metrics (cpu, cuda, cuda:1, ...)",
                ),
                opt(
                    "--batch-size",
                    type=_count,
                    default=32,
                    help="batch size of model-based metrics",
                ),
                opt(
                    "--model",
                    action="append",
                    default=[],
                    metavar="NAME=PATH",
                    help="checkpoint override for a model-based metric (repeatable)",
                ),
            ),
            _cmd_score,
            source=False,
        ),
    )


# --------------------------------------------------------------------------- the parser


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose options are added when it is first used (parsing, help), and
    whose usage errors are one line."""

    def __init__(self, *args: Any, command: Command | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pending = command

    def _populate(self) -> None:
        if self._pending is not None:
            command, self._pending = self._pending, None
            command.populate(self)

    def parse_known_args(self, args=None, namespace=None):
        self._populate()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self._populate()
        return super().format_usage()

    def format_help(self) -> str:
        self._populate()
        return super().format_help()

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m hanna_stats",
        description="Meta-evaluation of NLG metrics against human judgements (HANNA and beyond).",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback of an error (give it first) (default: off)",
    )
    sub = parser.add_subparsers(
        title="subcommands",
        required=True,
        metavar="SUBCOMMAND",
        help="what to do; SUBCOMMAND --help shows its options and their defaults",
    )
    for command in _commands():
        sub.add_parser(
            command.name,
            command=command,
            help=command.help,
            description=command.description,
        )
    return parser


# --------------------------------------------------------------------------- running


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the process exit status (2 for an error)."""
    try:
        return _main(argv)
    except BrokenPipeError:
        # The reader went away (`... | head`), which is how a pipe ends: stop quietly with
        # status 0, whatever the format. As the Python docs advise, point stdout at devnull so
        # that the flush at exit (of what is still buffered) does not fail again.
        quiet_stdout()
        return 0


def quiet_stdout() -> None:
    """Point stdout's file descriptor at devnull (after a :class:`BrokenPipeError`)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor
        pass


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    try:
        code = args.command.run(args.command, args)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        raise
    except _user_errors() as err:
        if args.debug:
            raise
        print(f"error: {_one_line(err)}", file=sys.stderr)
        return 2


def _user_errors() -> tuple[type[BaseException], ...]:
    """The errors printed as one line (see the module's docstring): the library modules that
    raise them are already imported when they do."""
    errors: list[type[BaseException]] = [ValueError, OSError]
    if "duckdb" in sys.modules:
        errors.append(sys.modules["duckdb"].Error)
    if "polars" in sys.modules:
        errors.append(sys.modules["polars"].exceptions.PolarsError)
    return tuple(errors)


def _one_line(err: BaseException) -> str:
    """The message of ``err`` on one line: its first paragraph, whitespace collapsed (DuckDB
    appends the query with a caret after a blank line)."""
    text = str(err).strip() or type(err).__name__
    return " ".join(text.split("\n\n", 1)[0].split())


def _connect(args: argparse.Namespace, *, read_only: bool = True) -> duckdb.DuckDBPyConnection:
    """The store of ``--db`` (which must exist) or one built in memory from the HANNA data."""
    if args.db is not None:
        _check_store_file(args.db)
        from hanna_stats.store import open_store

        return open_store(args.db, read_only=read_only)
    from hanna_stats.store import build_hanna_store, resolve_hanna_dir

    return build_hanna_store(resolve_hanna_dir(args.data))


def _names(text: str) -> list[str]:
    """A comma-separated list of names (blanks around them dropped)."""
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected NAME[,NAME...], got {text!r}")
    return names


def _study(args: argparse.Namespace) -> Study:
    """The Study of ``--db`` (read-only) or of the HANNA data (see :func:`_connect`), restricted
    to ``--subset``, then ``--systems`` / ``--exclude-systems``."""
    if args.db is not None:
        from hanna_stats.store import load_study

        con = _connect(args)
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


def _check_store_file(path: Path) -> None:
    if not path.is_file():
        from hanna_stats.store import DataNotFoundError

        raise DataNotFoundError(f"--db {path}: no such store file ({BUILD_STORE})")


def _emit(df: pl.DataFrame, fmt: str) -> None:
    """Print ``df`` as ``fmt``: csv, json (one array of row objects) or a table that fits the
    terminal (:func:`hanna_stats.tables.table_lines`; on a terminal, a long table shows its
    first and last rows)."""
    if fmt == "csv":
        _write(df.write_csv())
    elif fmt == "json":
        _write(df.write_json() + "\n")
    else:
        from hanna_stats.tables import table_lines

        edge = TABLE_EDGE_ROWS if sys.stdout.isatty() else None
        width = shutil.get_terminal_size().columns
        ellipsis = "…" if _encodes(sys.stdout, "…") else "..."
        lines = table_lines(df, width, edge=edge, ellipsis=ellipsis)
        for start in range(0, len(lines), 1000):
            _write("".join(line + "\n" for line in lines[start : start + 1000]))


def _write(text: str, chunk: int = 1 << 16) -> None:
    """Write ``text`` to stdout in chunks, so that a reader that went away is noticed early
    (:class:`BrokenPipeError`, which :func:`main` turns into a quiet exit)."""
    for start in range(0, len(text), chunk):
        sys.stdout.write(text[start : start + chunk])


def _encodes(stream: Any, text: str) -> bool:
    try:
        text.encode(getattr(stream, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


#: Rows a long table shows at each end when stdout is a terminal.
TABLE_EDGE_ROWS = 10


@contextlib.contextmanager
def _scheduler(args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """``{"executor": ...}`` on the Dask cluster of ``--scheduler`` (a scheduler's address, or
    ``local[:N]``: a cluster of N worker processes here, closed at the end), else ``{}``."""
    address = getattr(args, "scheduler", None)
    if address is None:
        yield {}
        return
    from hanna_stats.kernels.distributed import connect

    local, _, workers = address.partition(":") if address.startswith("local") else ("", "", "")
    if local and (local != "local" or (workers and not workers.isdigit()) or workers == "0"):
        raise ValueError(f"--scheduler {address}: expected tcp://HOST:PORT, local or local:N")
    try:
        if local:
            options = {"threads_per_worker": 1, "dashboard_address": ":0"}
            executor = connect(None, n_workers=int(workers) if workers else None, **options)
        else:
            executor = connect(address, timeout="10s")
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


def _run_analysis(command: Command, args: argparse.Namespace) -> int:
    """Run ``command.function`` (or the one an option chose) on the study with the command's
    options as keywords, and print its table."""
    module, name = (getattr(args, "function", None) or command.function).split(":")
    function = getattr(importlib.import_module(f"hanna_stats.analyses.{module}"), name)
    study, keywords = _study(args), command.keywords(args)
    from hanna_stats.progress import compile_notice

    compile_notice()
    with _scheduler(args) as executor, _notes():
        df = function(study, **keywords, **executor)
    if df.is_empty() and command.empty_note:
        print(command.empty_note, file=sys.stderr)
    if keywords.get("system_scores") == "given":
        _note_left_out(study, keywords)
    _emit(df, args.format)
    return 0


@contextlib.contextmanager
def _notes() -> Iterator[None]:
    """Print each :class:`~hanna_stats.progress.StudyNote` the block gives as one ``note:`` line
    on stderr; other warnings go on as they are."""
    from hanna_stats.progress import study_notes

    with study_notes() as notes:
        yield
    for note in notes:
        print(f"note: {note}", file=sys.stderr)


def _note_left_out(study: Study, keywords: dict[str, Any]) -> None:
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


def _cmd_fetch(command: Command, args: argparse.Namespace) -> int:
    from hanna_stats.store import fetch_hanna

    print(fetch_hanna(**command.keywords(args)))
    return 0


def _cmd_ingest(command: Command, args: argparse.Namespace) -> int:
    import hanna_stats.store as store
    from hanna_stats.store.formats import FORMATS, detect_format

    flags = {  # the formats' own options: keyword of `ingest` -> (flag, value given or None)
        "human_system": ("--human-system", args.human_system),
        "human_measures": ("--human", args.human or None),
        "scales": ("--scale", _scales(args.scale) or None),
        "study": ("--study", args.study),
        "item_word": ("--item-word", None if args.item_word == "item" else args.item_word),
        "lp": ("--lp", args.lp),
        "ref": ("--ref", args.ref),
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


def _cmd_sql(command: Command, args: argparse.Namespace) -> int:
    from hanna_stats.store import run_query

    con = _connect(args, read_only=not args.write)
    try:
        _emit(run_query(con, args.query, allow_files=args.allow_files), args.format)
    finally:
        con.close()
    return 0


def _cmd_report(command: Command, args: argparse.Namespace) -> int:
    from hanna_stats.progress import compile_notice
    from hanna_stats.reports import ReportSettings, write_report

    settings = ReportSettings(**command.keywords(args))
    compile_notice()
    with _notes():
        path = write_report(_study(args), args.out, settings, tables=args.tables)
    print(path)
    return 0


def _cmd_user_study(command: Command, args: argparse.Namespace) -> int:
    from hanna_stats.analyses import user_study_agreement
    from hanna_stats.store import read_user_study, resolve_hanna_dir
    from hanna_stats.store.user_study import USER_STUDY_FILE

    path = args.file or resolve_hanna_dir(args.data) / USER_STUDY_FILE
    _emit(user_study_agreement(read_user_study(path), **command.keywords(args)), args.format)
    return 0


def _cmd_score(command: Command, args: argparse.Namespace) -> int:
    import hanna_stats.scoring
    from hanna_stats.scoring.io import read_texts
    from hanna_stats.scoring.registry import ScoringConfig
    from hanna_stats.scoring.run import resolve_metrics, score_input, score_into_store, score_store

    if args.list:
        table = hanna_stats.scoring.list_metrics().select(
            "metric", "family", "reference", "symbol", "available", "scorer", "multi_reference"
        )
        _emit(table, args.format)
        return 0
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
    models = dict(_name_path(m) for m in args.model)
    config = ScoringConfig(
        hanna_compat=args.hanna_compat,
        device=args.device,
        batch_size=args.batch_size,
        models=models,
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


def _name_path(text: str) -> tuple[str, str]:
    """'NAME=PATH' -> (NAME, PATH)."""
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise ValueError(f"--model expects NAME=PATH, got {text!r}")
    return name, path
