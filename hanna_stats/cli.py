"""Command line: ``python -m hanna_stats SUBCOMMAND ...`` (see ``--help``).

The subcommands are a table (:data:`COMMANDS`): each entry names what it runs and its options.
An analysis subcommand names its function in :mod:`hanna_stats.analyses` and maps each of its
options onto one keyword of that function; choices come from the constants the analyses and the
kernels define (:data:`CHOICES`), never from a copy here.

Start-up: this module imports only the standard library. A subcommand's parser is built when
that subcommand is used (its choices import the analysis constants), and DuckDB, polars, the
Numba kernels, the report and the scorers are imported by the command that needs them, so
``--help`` is instant and ``correlate --db FILE`` pays only for what it runs.

Data source of the analyses, ``sql`` and ``report``: ``--db FILE`` opens an existing store
read-only (``sql --write``: read-write); ``--data DIR`` builds one from the HANNA files in memory;
neither: ``$HANNA_DATA``, else the ``fetch-data`` cache, in memory. Only ``ingest`` and
``score`` create a store file.

Errors policy: an error the user can fix (bad option or input file, missing data or store, SQL
error, file-system error: ``ValueError`` and its subclasses ``InputError``/``ChecksumError``,
``OSError`` and its subclass ``DataNotFoundError``, ``duckdb.Error``, polars errors) is printed
as one line on stderr, ``error: <message>``, with exit status 2. Anything else is a bug and shows
its traceback. ``--debug`` (before the subcommand) re-raises every error. A closed output pipe
(``... | head``) ends the command quietly.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from hanna_stats.store import Study

FORMATS = ("table", "csv", "json")
#: Formats of ``ingest --format`` (:data:`hanna_stats.store.ingest.FILE_INGESTERS` and ``wmt``).
INGEST_FORMATS = (
    "hanna-metric-scores",
    "hanna-llm",
    "hanna-annotations",
    "tidy",
    "summeval",
    "wmt",
)
NO_RATINGS = (
    "note: the store holds no rater-level ratings, which agreement needs: ingest a tidy file "
    "with a rater column (HANNA: hanna_metric_scores_llm.csv's judge slots or the raw "
    "annotations file; SummEval: its annotation file)"
)
BUILD_STORE = "build one with `python -m hanna_stats ingest --db FILE DIR`"

#: Choice lists by name: (module, constant). The module is imported when a parser using the
#: list is built.
CHOICES: dict[str, tuple[str, str]] = {
    "level": ("hanna_stats.analyses._common", "LEVEL_WORDS"),
    "item-system": ("hanna_stats.analyses._common", "ITEM_SYSTEM_WORDS"),
    "method": ("hanna_stats.analyses._common", "METHODS"),
    "coefficient": ("hanna_stats.analyses._common", "COEFFICIENTS"),
    "variant": ("hanna_stats.analyses._common", "VARIANTS"),
    "nan_policy": ("hanna_stats.analyses._common", "NAN_POLICIES"),
    "against": ("hanna_stats.analyses.correlations", "AGAINST"),
    "kinds": ("hanna_stats.store", "AUTOMATIC_KINDS"),
    "ties": ("hanna_stats.kernels", "TIE_RULES"),
    "correction": ("hanna_stats.kernels", "CORRECTIONS"),
    "alternative": ("hanna_stats.kernels", "ALTERNATIVES"),
    "resample": ("hanna_stats.kernels", "RESAMPLE"),
    "ci_method": ("hanna_stats.kernels", "CI_METHODS"),
    "reference": ("hanna_stats.analyses.judges", "REFERENCES"),
    "pvalue_method": ("hanna_stats.kernels", "PVALUE_METHODS"),
    "family": ("hanna_stats.analyses.significance", "FAMILIES"),
    "scale_policy": ("hanna_stats.store.catalogue", "SCALE_POLICIES"),
    "group_by": ("hanna_stats.kernels", "GROUP_BY"),
    "weighting": ("hanna_stats.kernels", "WEIGHTINGS"),
    "tie_statistic": ("hanna_stats.kernels", "TIE_STATISTICS"),
    "swap": ("hanna_stats.kernels", "SWAP_UNITS"),
    "cluster_method": ("hanna_stats.analyses.meta_eval", "CLUSTER_METHODS"),
    "system_scores": ("hanna_stats.analyses._common", "SYSTEM_SCORES"),
}


def choices(name: str) -> tuple[str, ...]:
    """The choice list called ``name`` in :data:`CHOICES`, imported now."""
    module, constant = CHOICES[name]
    return tuple(getattr(importlib.import_module(module), constant))


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Opt:
    """One option of a subcommand.

    ``flags`` and ``settings`` go to :meth:`argparse.ArgumentParser.add_argument`; ``choices``
    names a list of :data:`CHOICES` (or is the list, for the CLI's own choices); ``keyword``
    says whether the value is an argument of the command's function, under the name ``dest``.
    """

    flags: tuple[str, ...]
    dest: str
    settings: dict[str, Any]
    choices: str | tuple[str, ...] | None = None
    keyword: bool = True

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        settings = dict(self.settings)
        if isinstance(self.choices, str):
            settings["choices"] = choices(self.choices)
        elif self.choices is not None:
            settings["choices"] = self.choices
        if self.flags[0].startswith("-"):
            settings["dest"] = self.dest
        parser.add_argument(*self.flags, **settings)


def opt(
    *flags: str,
    choices: str | tuple[str, ...] | None = None,
    keyword: bool = True,
    **settings: Any,
) -> Opt:
    """An :class:`Opt`; ``dest`` as argparse derives it (``--nan-policy`` -> ``nan_policy``)."""
    long = [f for f in flags if f.startswith("--")] or flags
    dest = settings.pop("dest", None) or long[0].lstrip("-").replace("-", "_")
    return Opt(flags, dest, settings, choices, keyword)


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
        return {o.dest: getattr(args, o.dest) for o in self.options if o.keyword}

    def populate(self, parser: argparse.ArgumentParser) -> None:
        for option in self.options:
            option.add_to(parser)
        if self.source:
            group = parser.add_mutually_exclusive_group()
            group.add_argument(
                "--data",
                type=Path,
                metavar="DIR",
                help="HANNA data folder, built into an in-memory store "
                "(default: $HANNA_DATA, else the fetch-data cache)",
            )
            group.add_argument(
                "--db", type=Path, metavar="FILE", help="an existing store file (see `ingest`)"
            )
            parser.add_argument(
                "--systems",
                type=_names,
                metavar="NAME[,NAME...]",
                help="analyse only these systems (default: all)",
            )
            parser.add_argument(
                "--exclude-systems",
                type=_names,
                metavar="NAME[,NAME...]",
                help="leave these systems out (default: none), e.g. a reference or an outlier",
            )
        if self.output:
            parser.add_argument("--format", choices=FORMATS, default="table")
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


LEVEL_HELP = "the item level may be called story, summary or segment (outputs say item)"


def _level(default: str, choices: str = "level") -> Opt:
    return opt("--level", choices=choices, default=default, help=LEVEL_HELP)


def _method(default: str) -> Opt:
    return opt("--method", choices="method", default=default)


INCLUDE_HUMAN = opt(
    "--include-human", action="store_true", help="keep the human-written stories as a system"
)
NO_HUMAN = opt(
    "--no-human",
    dest="include_human",
    action="store_false",
    help="leave out the human-written stories",
)
KINDS = opt(
    "--kinds",
    type=_comma_list,
    default=("metric",),
    help="automatic measure kinds, comma-separated: metric (default, the paper), llm-judge",
)
CRITERION = opt("--criterion", required=True, help="name or abbreviation (e.g. EM)")
MEASURES = opt(
    "--measures", nargs="+", metavar="M", help="measure names, or criteria's abbreviations"
)
RATED_KINDS = opt(
    "--kinds",
    type=_comma_list,
    default=("human",),
    help="kinds of the measures with raters, comma-separated: human (default), llm-judge (its "
    "tries as raters), metric",
)
ONE_CRITERION = opt(
    "--criterion", default=None, help="only this criterion, by name or abbreviation (default: all)"
)
SYSTEM_SCORES = opt(
    "--system-scores",
    choices="system_scores",
    default="mean",
    help="system level: a system's value is the mean of its items (default) or the one the study "
    "gives (given: WMT's .sys.score files; measures without one are left out, named on stderr)",
)
SEED = opt("--seed", type=_seed, default=0, help="seed of the resampling")
RESAMPLES = opt("--resamples", type=_count, default=1000, help="bootstrap resamples B")
CONFIDENCE = opt("--confidence", type=float, default=0.95, help="level of the intervals")


#: Options of the LLM-judge analyses (judges, rater-panel).
JUDGE_OPTIONS = (
    _level("system"),
    _method("kendall"),
    opt("--variant", choices="variant", default="b", help="Kendall variant"),
    opt(
        "--reference",
        choices="reference",
        default="panel",
        help="the human rater's panel: the mean of all raters (the TACL study) or of the others",
    ),
    INCLUDE_HUMAN,
)


def _analysis(
    name: str, function: str, help: str, description: str, *options: Opt, **more: Any
) -> Command:
    return Command(name, help, description, options, _run_analysis, function=function, **more)


def _commands() -> tuple[Command, ...]:
    return (
        Command(
            "fetch-data",
            "download the public HANNA files (pinned commits, SHA-256 checked) into the cache",
            "Download the HANNA files from the public repository at pinned commits, verify "
            "their SHA-256 and store them in the cache (HANNA_STATS_CACHE, default "
            "~/.cache/hanna_stats). Offline, pass a local copy with --local DIR.",
            (
                opt("--dest", type=Path, help="target folder (default: the cache)"),
                opt("--local", type=Path, metavar="DIR", help="verify and copy a local copy"),
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
                opt("paths", nargs="+", type=Path, metavar="PATH", keyword=False),
                opt("--db", type=Path, required=True, help="store file (created if missing)"),
                opt("--format", choices=("auto", *INGEST_FORMATS), default="auto", keyword=False),
                opt("--human-system", help="tidy files: the system holding human references"),
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
                opt("--study", help="tidy files: the study's name (default: the file's stem)"),
                opt(
                    "--item-word",
                    default="item",
                    metavar="WORD",
                    help="tidy files: the study's word for its items, e.g. summary or segment "
                    "(the report's 'summary level'; default item)",
                ),
                opt("--lp", help="WMT test sets: the language pair (needed if several)"),
                opt("--ref", help="WMT test sets: the standard reference (needed if several)"),
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
                    help="what a judge's or metric's value outside its measure's scale does: "
                    "error, missing, clip or keep (always counted; default: keep for HANNA's "
                    "LLM file, as its authors used it, else error); human ratings off their "
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
                opt("query"),
                opt("--write", action="store_true", help="open the store file read-write"),
                opt(
                    "--allow-files",
                    action="store_true",
                    help="let the query read and write files (COPY, read_csv, ATTACH)",
                ),
            ),
            _cmd_sql,
        ),
        _analysis(
            "correlate",
            "correlations:correlate",
            "correlations of metrics with human criteria (or each other)",
            "Correlate measures at item (per-input, then averaged), system or global level. "
            "Human-written stories are excluded unless --include-human.",
            _level("item"),
            opt("--method", choices="coefficient", default="kendall"),
            opt("--against", choices="against", default="criteria"),
            opt("--variant", choices="variant", default="b", help="Kendall variant"),
            opt("--nan-policy", choices="nan_policy", default="omit"),
            INCLUDE_HUMAN,
            KINDS,
            opt(
                "--pvalue-method",
                choices="pvalue_method",
                help="add each correlation's two-sided p-value and sample size n (system and "
                "global level), as scipy.stats' kendalltau/spearmanr/pearsonr: auto (scipy's "
                "default), exact or asymptotic (default: no p-values)",
            ),
            opt(
                "--group-by",
                choices="group_by",
                default="input",
                help="item level: correlate across the systems within each input (default) or "
                "across the inputs within each system, then average",
            ),
            opt(
                "--weighting",
                choices="weighting",
                default="uniform",
                help="item level: average the groups alike (default) or weight each by its "
                "number of observations (count)",
            ),
            opt(
                "--confidence",
                type=float,
                help="Pearson at system/global level: add Fisher z intervals at this level "
                "(columns n, ci_low, ci_high)",
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
            _level("item", "item-system"),
            opt("--ties", choices="ties", default="average"),
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
            opt(
                "--ks", type=_ks, default="4-10", help="k values: '4-10' or '4,6,8' (default 4-10)"
            ),
            _level("system", "item-system"),
            _method("pearson"),
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
            "level and, by the paper's convention, to the number of inputs at item level. "
            "--correction adjusts the p-values within each --family: the criterion's ordered "
            "pairs (criterion), one ordered pair across the study's criteria (pair: Chhun et "
            "al. 2024's family of one judge against another), or every test of every criterion "
            "at this level and method (all).",
            CRITERION,
            _level("system"),
            _method("pearson"),
            opt("--n", type=_sample_size, help="sample size used by the test (see above)"),
            opt("--alternative", choices="alternative", default="greater"),
            opt("--correction", choices="correction", help="multiple-testing correction"),
            opt(
                "--family",
                choices="family",
                default="criterion",
                help="the family of --correction (see above)",
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
            opt("--alpha", type=float, default=0.05, help="significance level"),
            SEED,
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
        _analysis(
            "ci",
            "resampling:correlation_ci",
            "bootstrap confidence intervals of metric-criterion correlations",
            "Bootstrap CIs (Deutsch et al. 2021) resampling inputs, systems or both; percentile "
            "or BCa.",
            _level("item", "item-system"),
            _method("kendall"),
            opt("--resample", choices="resample", default="inputs"),
            RESAMPLES,
            CONFIDENCE,
            opt("--ci-method", choices="ci_method", default="percentile"),
            SEED,
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
            _level("system"),
            _method("kendall"),
            opt("--permutations", type=_count, default=1000),
            opt("--alternative", choices="alternative", default="two-sided"),
            opt("--unit", choices="resample", default="both", help="what one coin swaps"),
            opt(
                "--stop-alpha",
                type=float,
                default=None,
                help="early stopping at this level (Clopper-Pearson rule; default: none)",
            ),
            SEED,
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
            _level("item"),
            opt("--statistic", choices="tie_statistic", default="acc_eq"),
            opt("--group-by", choices="group_by", default="input", help="item-level groups"),
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
            _level("item"),
            opt("--statistic", choices="tie_statistic", default="acc_eq"),
            opt("--permutations", type=_count, default=1000),
            SEED,
            opt("--group-by", choices="group_by", default="input", help="item-level groups"),
            opt(
                "--swap",
                choices="swap",
                default="pairs",
                help="swap the metrics' outcomes per pair (default) or their z-scored scores per "
                "cell, re-calibrating both every permutation (slow: MTME's PermutationSigDiff)",
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
            opt("--permutations", type=_count, default=1000),
            SEED,
            SYSTEM_SCORES,
            INCLUDE_HUMAN,
            KINDS,
        ),
        _analysis(
            "clusters",
            "meta_eval:metric_clusters",
            "leaderboard of the metrics for a criterion in significance clusters (WMT ranks)",
            "Sort the metrics by their statistic; a metric starts a new cluster when one of the "
            "current cluster beats it with one-sided permutation p <= --alpha (PERM-BOTH for "
            "the correlations, the calibrated pairwise test for acc_eq).",
            CRITERION,
            _level("system"),
            opt("--method", choices="cluster_method", default="kendall"),
            opt("--permutations", type=_count, default=1000),
            SEED,
            opt("--alpha", type=float, default=0.05, help="significance level"),
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
            "directions (one-sided Williams tests), with the correction adjusting one judge "
            "and prompt against one metric across the criteria (Chhun et al. 2024's family).",
            _level("system"),
            _method("kendall"),
            opt(
                "--n",
                type=_sample_size,
                help="sample size used by the test (default: as williams)",
            ),
            opt("--correction", choices="correction", default="bh", help="default bh"),
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
                    help="the user-study CSV (default: user_study.csv in the data folder)",
                ),
                opt("--data", type=Path, metavar="DIR", keyword=False, help="HANNA data folder"),
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
                    help="also write every table as CSV and Parquet into DIR",
                ),
                opt("--seed", type=_seed, default=0, help="seed of every resampling"),
                RESAMPLES,
                opt("--alpha", type=float, default=0.05, help="significance level"),
                CONFIDENCE,
                opt("--ci-resample", choices="resample", default="inputs"),
                opt("--williams-level", choices="item-system", default="system"),
                opt("--williams-method", choices="method", default="pearson"),
                opt("--correction", choices="correction", help="multiple-testing correction"),
                opt("--ties", choices="ties", default="average", help="Borda tie rule"),
                KINDS,
            ),
            _cmd_report,
            output=False,
        ),
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
                opt("--list", action="store_true", help="print the metric registry and exit"),
                opt(
                    "--metrics",
                    default="all-string",
                    help="comma-separated metric or scorer names, 'all-string' (default) or 'all'",
                ),
                opt(
                    "--input",
                    type=Path,
                    metavar="FILE",
                    help="texts to score (default: the texts the --db store holds)",
                ),
                opt(
                    "--db",
                    type=Path,
                    metavar="FILE",
                    help="store file to write the scores into (created if missing when --input)",
                ),
                opt(
                    "--out", type=Path, metavar="FILE", help="tidy table to write (.csv, .parquet)"
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
                opt("--device", help="torch device for model-based metrics (cpu, cuda)"),
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
        "--debug", action="store_true", help="show the traceback of an error (give it first)"
    )
    sub = parser.add_subparsers(title="subcommands", required=True, metavar="SUBCOMMAND")
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
        # The reader went away (`... | head`). As the Python docs advise: point stdout at
        # devnull so that the flush at exit does not fail again, and stop quietly.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):  # stdout without a file descriptor
            pass
        return 1


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
    to ``--systems`` / ``--exclude-systems``."""
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
    if args.systems is None and args.exclude_systems is None:
        return study
    return study.subset(systems=args.systems, exclude_systems=args.exclude_systems)


def _check_store_file(path: Path) -> None:
    if not path.is_file():
        from hanna_stats.store import DataNotFoundError

        raise DataNotFoundError(f"--db {path}: no such store file ({BUILD_STORE})")


def _emit(df: pl.DataFrame, fmt: str) -> None:
    if fmt == "csv":
        sys.stdout.write(df.write_csv())
    elif fmt == "json":
        sys.stdout.write(df.write_json() + "\n")
    else:
        import polars as pl

        with pl.Config(tbl_rows=-1, tbl_cols=-1, fmt_str_lengths=60, tbl_width_chars=200):
            print(df)


def _run_analysis(command: Command, args: argparse.Namespace) -> int:
    """Run ``command.function`` (or the one an option chose) on the study with the command's
    options as keywords, and print its table."""
    module, name = (getattr(args, "function", None) or command.function).split(":")
    function = getattr(importlib.import_module(f"hanna_stats.analyses.{module}"), name)
    study, keywords = _study(args), command.keywords(args)
    df = function(study, **keywords)
    if df.is_empty() and command.empty_note:
        print(command.empty_note, file=sys.stderr)
    if keywords.get("system_scores") == "given":
        _note_left_out(study, keywords)
    _emit(df, args.format)
    return 0


def _note_left_out(study: Study, keywords: dict[str, Any]) -> None:
    """With ``--system-scores given``: one line on stderr naming the measures left out for
    want of given system-level values (as mt-metrics-eval leaves them out)."""
    from hanna_stats.analyses._common import given_left_out
    from hanna_stats.store.source import shorten

    left_out = given_left_out(study, keywords.get("kinds", ("metric",)), keywords["include_human"])
    if left_out:
        names = ", ".join(shorten(repr(m)) for m in left_out[:5])
        more = f", ... ({len(left_out) - 5} more)" if len(left_out) > 5 else ""
        print(
            f"note: --system-scores given: left out {len(left_out)} measure(s) without given "
            f"system-level values (WMT: no .sys.score file): {names}{more}",
            file=sys.stderr,
        )


def _cmd_fetch(command: Command, args: argparse.Namespace) -> int:
    from hanna_stats.store import fetch_hanna

    print(fetch_hanna(**command.keywords(args)))
    return 0


def _cmd_ingest(command: Command, args: argparse.Namespace) -> int:
    import hanna_stats.store as store
    from hanna_stats.store.ingest import FILE_INGESTERS, FORMAT_HANNA_DIR, FORMAT_WMT, detect_format

    formats = []
    for path in args.paths:  # before the store file is created
        if not path.exists():
            raise store.DataNotFoundError(f"{path}: no such file or folder")
        fmt = detect_format(path) if args.format == "auto" else args.format
        if fmt == FORMAT_HANNA_DIR:
            store.check_hanna_dir(path)  # a WMT download root or another folder: one line
        wmt_only = [o for o, v in (("--lp", args.lp), ("--ref", args.ref)) if v is not None]
        if fmt != FORMAT_WMT and wmt_only:
            raise ValueError(
                f"{' and '.join(wmt_only)}: for WMT test sets only; {path} is read as {fmt}"
            )
        formats.append(fmt)
    if args.db.is_dir():
        raise ValueError(f"--db {args.db}: is a folder; name a store file (created if missing)")
    policy = {"extend": args.extend, "replace": args.replace, "scale_policy": args.scale_policy}
    new_store = not args.db.exists()
    con = store.open_store(args.db)
    try:
        for path, fmt in zip(args.paths, formats, strict=True):
            if fmt == FORMAT_WMT:
                summaries = [store.ingest_wmt(con, path, lp=args.lp, ref=args.ref, **policy)]
            elif fmt == FORMAT_HANNA_DIR:
                summaries = store.ingest_hanna_dir(con, path, **policy)
            else:
                tidy = {
                    "human_system": args.human_system,
                    "human_measures": args.human,
                    "scales": _scales(args.scale),
                    "study": args.study,
                    "item_word": args.item_word,
                }
                kwargs = {**policy, **(tidy if fmt == "tidy" else {})}
                summaries = [FILE_INGESTERS[fmt](con, path, **kwargs)]
            for summary in summaries:
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
    from reports import ReportSettings, write_report

    settings = ReportSettings(**command.keywords(args))
    print(write_report(_study(args), args.out, settings, tables=args.tables))
    return 0


def _cmd_user_study(command: Command, args: argparse.Namespace) -> int:
    from hanna_stats.analyses import user_study_agreement
    from hanna_stats.store import read_user_study, resolve_hanna_dir
    from hanna_stats.store.user_study import USER_STUDY_FILE

    path = args.file or resolve_hanna_dir(args.data) / USER_STUDY_FILE
    _emit(user_study_agreement(read_user_study(path), **command.keywords(args)), args.format)
    return 0


def _cmd_score(command: Command, args: argparse.Namespace) -> int:
    import scoring
    from scoring.io import read_texts
    from scoring.registry import ScoringConfig
    from scoring.run import resolve_metrics, score_input, score_into_store, score_store

    if args.list:
        table = scoring.list_metrics().select(
            "metric", "family", "reference", "symbol", "available", "scorer", "multi_reference"
        )
        _emit(table, args.format)
        return 0
    if args.input is None and args.db is None:
        raise ValueError(
            "score needs --input FILE and --db FILE and/or --out FILE, or --db STORE alone to "
            "score the texts it holds (or --list)"
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
