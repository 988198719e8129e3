"""The subcommands: every analysis' built from its function's signature, the others by hand.

An analysis subcommand runs a public function of :mod:`hanna_stats.analyses` (a name of its
``__all__``) on the study of ``--data`` / ``--db``. Its options are the function's keyword
parameters, read when the subcommand is used (:func:`signature_arguments`): each becomes
``--name-with-dashes``, its choices are the values of its ``Literal`` annotation (a
``tuple[Literal[...], ...]`` is a comma-separated list of them), its default is the
signature's (a parameter without one is required; a flag defaulting to True is given as
``--no-...``), and its help is the one text :data:`~hanna_stats.cli.options.OPTIONS` has for
that name. Written by hand, in :data:`ANALYSES`, are only a command's name where it differs
from the function's name with dashes, its one-line help and description, and the rare
override of an option's text. A public analysis without an entry there is a command all the
same: its name is the function's with dashes, its help the first paragraph of its docstring.
:data:`NOT_COMMANDS` lists the public names of the analyses that are not commands, and why.

The ``report`` command's settings are built the same way from the fields of
:class:`~hanna_stats.reports.ReportSettings`, and ``user-study``'s from
:func:`~hanna_stats.analyses.user_study_agreement`; the other commands (``fetch-data``,
``ingest``, ``sql``, ``score``) are written by hand.
"""

from __future__ import annotations

import argparse
import ast
import collections.abc
import functools
import importlib.util
import inspect
import re
import sys
import types
import typing
from collections.abc import Callable, Iterable, Iterator
from dataclasses import MISSING, dataclass, field, fields
from importlib import import_module
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from hanna_stats import vocabulary
from hanna_stats.cli.options import (
    CLI_ARGUMENTS,
    INGEST_FORMATS,
    OPTIONS,
    OUTPUT_FORMAT,
    PYTHON_ONLY,
    Argument,
    Option,
    argument,
    comma_list,
    data_argument,
    measures_or_criteria,
    parse_count,
    parse_draws_or_zero,
    parse_scale,
    source_arguments,
    words_of,
)
from hanna_stats.vocabulary import NONE_MEANS, WORDS


@dataclass(frozen=True)
class Command:
    """One subcommand: its help, its arguments, and what it runs.

    ``run`` names the function of :mod:`hanna_stats.cli.run` that runs it (imported when it
    runs, :meth:`execute`). Its arguments are ``options`` (written by hand) and those
    ``generated`` returns when the subcommand is used (an analysis' keywords); ``function``
    names the analysis of an analysis command. ``source`` adds ``--data`` / ``--db``
    (exclusive) and the study's filters, ``output`` adds ``--format``.
    """

    name: str
    help: str
    description: str
    run: str
    options: tuple[Argument, ...] = ()
    generated: Callable[[], Iterable[Argument]] | None = None
    function: str | None = None
    source: bool = True
    output: bool = True
    empty_note: str | None = None

    def invoke(self, args: argparse.Namespace) -> int:
        """Run the command on the parsed ``args``; the exit status."""
        from hanna_stats.cli import run

        return getattr(run, self.run)(self, args)

    def arguments(self) -> tuple[Argument, ...]:
        """Every argument of the command but the data source and ``--format``."""
        return (*self.options, *(self.generated() if self.generated is not None else ()))

    def populate(self, parser: argparse.ArgumentParser) -> None:
        """Add the command's arguments to its parser; the parsed namespace gets ``command``
        (this command) and ``keywords`` (the names of the arguments that are keywords of its
        function, :func:`hanna_stats.cli.run.keywords_of`)."""
        arguments = self.arguments()
        for option in arguments:
            option.add_to(parser)
        if self.source:
            group = parser.add_mutually_exclusive_group()
            data, db, *filters = source_arguments()
            data.add_to(group)
            db.add_to(group)
            for option in filters:
                option.add_to(parser)
        if self.output:
            OUTPUT_FORMAT.add_to(parser)
        keywords = tuple(a.dest for a in arguments if a.keyword)
        parser.set_defaults(command=self, keywords=keywords)


# --------------------------------------------------------------------------- from signatures

#: Marks a parameter without a default (a required option).
REQUIRED = inspect.Parameter.empty
#: The names an annotation may use besides the vocabulary's words and its module's names.
TYPING_NAMES = {
    "Any": Any,
    "Literal": Literal,
    "Optional": typing.Optional,
    "Union": typing.Union,
    "Iterable": collections.abc.Iterable,
    "Sequence": collections.abc.Sequence,
}


def evaluate(annotation: Any, namespace: dict[str, Any]) -> Any:
    """The type an annotation names (annotations are strings: ``from __future__ import
    annotations``), resolved against the vocabulary's words and ``namespace``."""
    if not isinstance(annotation, str):
        return annotation
    return eval(annotation, {**TYPING_NAMES, **vars(vocabulary), **namespace})


def optional(hint: Any) -> Any:
    """``X`` of ``X | None``; any other type as it is."""
    if get_origin(hint) in (typing.Union, types.UnionType):
        kept = [a for a in get_args(hint) if a is not type(None)]
        if len(kept) == 1:
            return kept[0]
    return hint


def parameter_argument(
    command: str,
    name: str,
    annotation: Any,
    default: Any,
    namespace: dict[str, Any],
    doc: str,
    overrides: dict[str, Option],
) -> Argument | None:
    """The argument of one parameter (None: :data:`~hanna_stats.cli.options.PYTHON_ONLY`).

    Its text is ``overrides[name]``, else ``OPTIONS[name]``, else the parameter's entry in the
    function's docstring (``doc``); its choices and form come from the annotation, its default
    from ``default`` (:data:`REQUIRED`: a required option).
    """
    if name in PYTHON_ONLY:
        return None
    if name in CLI_ARGUMENTS:
        return CLI_ARGUMENTS[name]
    option = overrides.get(name) or OPTIONS.get(name) or Option(docstring_help(doc, name))
    flag, hint = "--" + name.replace("_", "-"), None
    common: dict[str, Any] = {"dest": name, "metavar": option.metavar}
    common |= {"required": True} if default is REQUIRED else {"default": default}
    if default is None:
        common["none"] = option.none or NONE_MEANS.get(name)
    if option.type is not None:
        return argument(flag, type=option.type, help=option.text(), **common)
    try:
        hint = optional(evaluate(annotation, namespace))
    except NameError:
        pass
    origin, args = get_origin(hint), get_args(hint)
    if hint is bool:
        if default is True:
            flag, text = option.negative or (f"--no-{flag[2:]}", f"not: {option.help}")
            return argument(flag, dest=name, action="store_false", help=text)
        return argument(flag, dest=name, action="store_true", help=option.help)
    if origin is Literal:
        return argument(flag, choices=args, help=option.text(args), **common)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        words = get_args(args[0]) if get_origin(args[0]) is Literal else None
        common["metavar"] = option.metavar or "NAME[,NAME...]"
        read = words_of(words) if words else comma_list
        return argument(flag, type=read, help=option.text(words), **common)
    if origin is list and args == (str,):
        common["metavar"] = option.metavar or "NAME"
        return argument(flag, nargs="+", help=option.text(), **common)
    if hint in (int, float, str):
        return argument(flag, type=hint, help=option.text(), **common)
    raise TypeError(
        f"{command}: parameter {name} ({annotation}) has no command-line form: give "
        f"OPTIONS[{name!r}] a type in hanna_stats/cli/options.py, or list it in PYTHON_ONLY"
    )


def docstring_help(doc: str, name: str) -> str:
    """The description of parameter ``name`` in a numpydoc docstring (``Parameters`` or
    ``Attributes``): the help of a parameter whose name has no entry in ``OPTIONS``."""
    lines = doc.splitlines()
    for at, line in enumerate(lines):
        if line[:1].isspace():
            continue
        if name in (n.strip() for n in line.partition(" :")[0].split(",")):
            body = []
            for more in lines[at + 1 :]:
                if not more[:1].isspace():
                    break
                body.append(more.strip())
            if body:
                return plain(" ".join(body))
    return f"the {name} (see the function's docstring)"


def plain(text: str) -> str:
    """Docstring text as ``--help`` shows it: Sphinx roles and literals as plain words."""
    return re.sub(r":[a-z:]+:`~?([^`]+)`", r"\1", text).replace("``", "")


def signature_arguments(
    command: str, function_name: str, overrides: dict[str, Option]
) -> Iterator[Argument]:
    """The arguments of the parameters of ``hanna_stats.analyses.<function_name>``: every
    named one after the first (the data); ``*args`` and ``**kwargs`` give none."""
    function = getattr(import_module("hanna_stats.analyses"), function_name)
    namespace = getattr(inspect.unwrap(function), "__globals__", {})
    doc = inspect.getdoc(function) or ""
    for parameter in list(inspect.signature(function).parameters.values())[1:]:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        made = parameter_argument(
            command,
            parameter.name,
            parameter.annotation,
            parameter.default,
            namespace,
            doc,
            overrides,
        )
        if made is not None:
            yield made


def settings_arguments() -> Iterator[Argument]:
    """The arguments of the fields of :class:`~hanna_stats.reports.ReportSettings`."""
    from hanna_stats.reports import ReportSettings

    namespace = vars(sys.modules[ReportSettings.__module__])
    doc = inspect.getdoc(ReportSettings) or ""
    for setting in fields(ReportSettings):
        default = setting.default
        if default is MISSING:
            factory = setting.default_factory
            default = REQUIRED if factory is MISSING else factory()
        made = parameter_argument("report", setting.name, setting.type, default, namespace, doc, {})
        if made is not None:
            yield made


def docstring_summary(function_name: str) -> str:
    """The first paragraph of the docstring of analysis ``function_name``, read from the source
    of its module (:func:`~hanna_stats.analyses.module_of`) without importing it: the text of the
    function alone is parsed, so the top-level ``--help`` imports no library and parses no whole
    module; else (a function without a source file of the analyses) from the function."""
    import hanna_stats.analyses as package

    try:
        spec = importlib.util.find_spec(package.module_of(function_name))
    except (KeyError, ValueError, ImportError):  # not public, or a module without a spec
        spec = None
    source = Path(spec.origin).read_text(encoding="utf-8") if spec and spec.origin else ""
    start = source.find(f"\ndef {function_name}(")
    if start >= 0:
        ends = (source.find(f"\n{word}", start + 1) for word in ("@", "def ", "class "))
        end = min((e for e in ends if e >= 0), default=len(source))
        node = ast.parse(source[start:end]).body[0]
        return first_paragraph(ast.get_docstring(node) or "")
    return first_paragraph(inspect.getdoc(getattr(package, function_name)) or "")


def first_paragraph(doc: str) -> str:
    """The first paragraph of a docstring on one line."""
    return plain(" ".join(doc.strip().split("\n\n", 1)[0].split())) or "(no docstring)"


# --------------------------------------------------------------------------- the analyses


@dataclass(frozen=True)
class Entry:
    """The hand-written part of an analysis command: its one-line ``help``, its
    ``description``, its ``name`` where it is not the function's name with dashes, options
    whose text differs from :data:`~hanna_stats.cli.options.OPTIONS` (``overrides``), and what
    an empty table means (``empty_note``, printed on stderr)."""

    help: str
    description: str
    name: str | None = None
    overrides: dict[str, Option] = field(default_factory=dict)
    empty_note: str | None = None


NO_RATINGS = (
    "note: the store holds no rater-level ratings, which agreement needs: ingest a tidy file "
    "with a rater column (HANNA: hanna_metric_scores_llm.csv's judge slots or the raw "
    "annotations file; SummEval: its annotation file)"
)

#: The public names of :mod:`hanna_stats.analyses` that are not commands, and why (a name
#: starting with a capital letter is a class, never a command).
NOT_COMMANDS: dict[str, str] = {
    "given_left_out": "a helper of system_scores='given': analyses print what it names as a note",
    "williams_all": "williams over every level and method at once, for the report's matrices: "
    "the command line runs williams per criterion, level and method",
    "user_study_agreement": "takes the user-study file, not a study: the user-study command",
    "analysis_calls": "records the analyses a block of Python code calls",
    "sample_inputs": "returns a Study, not a table: every analysis command's --sample-inputs",
    "criterion_values": "the report's rating distributions: sql reads the item values",
    "measure_values": "the report's value distributions: sql reads the item values",
    "data_sources": "the report's provenance table: sql reads the ingests table",
    "measure_families": "the report's measure catalogue: sql reads measure_catalogue",
    "study_counts": "the report's counts of the study: sql counts them",
}

#: The analysis commands, in the order of ``--help``: function name -> its hand-written part.
ANALYSES: dict[str, Entry] = {
    "correlate": Entry(
        "correlations of metrics with human criteria (or each other)",
        "Correlate measures at item (per-input, then averaged), system or global level. "
        "Human-written stories are excluded unless --include-human. Column n: the pairs a "
        "system- or global-level correlation is computed on (systems, items); n_groups: "
        "the groups an item-level mean averages (n_skipped: those undefined).",
        overrides={
            "confidence": Option(
                "Pearson at system/global level: add Fisher z intervals at this level "
                "(columns ci_low, ci_high)",
            )
        },
    ),
    "borda": Entry(
        "Borda count of the metrics over criteria x coefficients (Tab. 6)",
        "Rank the metrics in each of the 18 (criterion x coefficient) columns of absolute "
        "correlations at one level and sum the 0-based ranks; exact ties share a rank by "
        "--ties. Also reports the mean |r| aggregation.",
    ),
    "topk": Entry(
        "correlations on the k best systems per criterion (Fig. 8)",
        "For each criterion keep the k systems with the best mean rating and recompute "
        "each metric's correlation with it, for k in --ks.",
    ),
    "williams": Entry(
        "Williams tests between metrics' correlations with a criterion (Figs. 27-38)",
        "Williams (1959) test of H1 |r_a| > |r_b| for every ordered pair of metrics, the two "
        "correlations sharing the criterion. n defaults to the number of systems at system "
        "level, by the paper's convention to the number of inputs at item level, and to the "
        "number of items at global level. --correction adjusts the p-values within each "
        "--family: the criterion's ordered pairs (criterion), one ordered pair across the "
        "study's criteria (pair: Chhun et al. 2024's family of one judge against another), or "
        "every test of every criterion at this level and method (all).",
    ),
    "bootstrap_pairs": Entry(
        "paired bootstrap comparison of systems; weighted F1 per metric (Fig. 7)",
        "For every pair of systems, resample the inputs (indices drawn once from --seed and "
        "shared by every measure), label the pair by which system wins at confidence "
        "1 - alpha, and score each metric's labels against each criterion's by weighted F1 "
        "(bootstrap-pair-labels prints the labels).",
    ),
    "bootstrap_pair_labels": Entry(
        "the per-pair labels of the paired bootstrap behind bootstrap-pairs",
        "For every pair of systems and every measure, the resamples each system wins and the "
        "label (1, 2, or 0 for no winner at confidence 1 - alpha), from the same resamples as "
        "bootstrap-pairs with the same options.",
    ),
    "correlation_ci": Entry(
        "bootstrap confidence intervals of metric-criterion correlations",
        "Bootstrap CIs (Deutsch et al. 2021) resampling inputs, systems or both; percentile "
        "or BCa.",
        name="ci",
        overrides={
            "against": Option(
                "what each measure is correlated with: criteria (every human criterion) or "
                "measure names, comma-separated",
                type=measures_or_criteria,
                metavar="criteria|NAME[,NAME...]",
            )
        },
    ),
    "permutation_test": Entry(
        "permutation tests (PERM-BOTH/SYS/INPUT) of metrics' correlations with a criterion",
        "For every ordered pair of metrics, test the difference of their correlations with "
        "the criterion by swapping their standardised scores per item, per system or per "
        "input (--unit both/systems/inputs: PERM-BOTH, PERM-SYS, PERM-INPUT, Deutsch et al. "
        "2021); --stop-alpha stops a pair once its decision at that level is settled.",
        name="permutation",
    ),
    "calibrated_accuracy": Entry(
        "tie-calibrated pairwise accuracy (acc_eq, tau_eq) of metrics with the criteria",
        "Pairwise accuracy with ties where a metric ties two outputs whose scores differ by "
        "at most epsilon, epsilon chosen per metric and criterion to maximise the "
        "statistic, one epsilon for all groups (Deutsch, Foster and Freitag 2023).",
        name="calibrate",
    ),
    "calibrated_chance": Entry(
        "tie-calibrated acc_eq (tau_eq) of metrics beside its chance baseline",
        "The statistic a metric with no information about the criterion gets on the same "
        "data: the metric's scores permuted within each group (its ties and the criterion's "
        "kept), tie-calibrated afresh, over --draws permutations (mean and standard error), "
        "with the exact expectation at the metric's epsilon and the exact bound over all "
        "epsilons (mt-metrics-eval issue #14).",
        name="chance",
    ),
    "calibrated_comparison": Entry(
        "pairwise permutation tests between tie-calibrated metrics for a criterion",
        "Each metric calibrated once; each permutation swaps two metrics' outcomes on each "
        "pair of observations (mt-metrics-eval's PairwisePermutationSigDiff). p-value of "
        "H1: measure_a agrees better than measure_b.",
        name="calibrated-permutation",
    ),
    "task_ranking": Entry(
        "the WMT metrics tasks' ranking: a task set's weighted average over pairs and levels",
        "Run a WMT task set (--task-set: mt-metrics-eval's tasks.WMT23, WMT24, WMT24OnWMT23, "
        "WMT25) on the store's language pairs and rank the metrics of every task by the "
        "weighted average of their statistics rescaled to [0, 1]: average, average_rank, the "
        "significance cluster of the average from the tasks' own permutation draws, and each "
        "task's statistic and rank. The task set pools pairs only where a task says so, so "
        "there is no --pool-subsets.",
        name="tasks",
        overrides={
            "permutations": Option(
                "permutations K of every task's test; 0 (mt-metrics-eval's default k=0): no "
                "test, the clusters are the order of the average (the SPA tasks' tests are "
                "slow: minutes per pair for 100 permutations of 30 metrics)",
                type=parse_draws_or_zero,
            ),
            "criterion": Option(
                "the gold of every pair, by name",
                none="mt-metrics-eval's standard gold of each pair, else its only criterion",
            ),
        },
    ),
    "spa": Entry(
        "soft pairwise accuracy of metrics with the criteria (Thompson et al. 2024)",
        "1 - mean over system pairs of |p_human - p_metric|, the one-sided paired "
        "permutation p-values (sign flips over the inputs) of 'system i beats system j'. "
        "Systems without scores of the criterion are left out, and an input drops out of a "
        "pair's comparison when the criterion or the metric misses a score (as "
        "mt-metrics-eval); the columns n_systems_dropped and n_missing count them. The "
        "permutations need the items' scores: --system-scores given is refused.",
    ),
    "metric_clusters": Entry(
        "leaderboard of the metrics for a criterion in significance clusters (WMT ranks)",
        "Sort the metrics by their statistic (--method: a correlation, with PERM-BOTH tests, "
        "or acc_eq, with the calibrated pairwise tests); a metric starts a new cluster when one "
        "of the current cluster beats it with one-sided permutation p <= --alpha. Column "
        "pvalue_next: the one-sided p-value that the row's metric beats the metric on the next "
        "row (null on the last row). The cut is decided by every member of the cluster, not by "
        "the row above alone: a new cluster can start below a row with pvalue_next above "
        "--alpha when an earlier member of the cluster beats the new metric with p <= "
        "--alpha.",
        name="clusters",
    ),
    "agreement": Entry(
        "inter-rater agreement: six ICC forms and Krippendorff's alpha (Tab. 3)",
        "ICC1, ICC2, ICC3 and their k-rater forms with F-based intervals, and "
        "Krippendorff's alpha (interval, ordinal), per measure, from rater-level values: "
        "the human criteria by default; with --kinds llm-judge, each judge's "
        "self-consistency across its tries.",
        empty_note=NO_RATINGS,
    ),
    "nominal_agreement": Entry(
        "chance-corrected agreement of categorical ratings: AC1, Fleiss' and Cohen's kappa, alpha",
        "Gwet's AC1, Fleiss' kappa, Krippendorff's alpha (nominal) and, for two raters, "
        "Cohen's kappa, per measure, of any rater-level values taken as categories (0/1 "
        "flags, Likert points, an LLM judge's labels across its tries): the human criteria "
        "by default. AC1 and Fleiss' kappa have Student-t intervals (irrCAC's), Cohen's "
        "kappa a normal one (statsmodels'), unless --interval-method sets one for all "
        "three; alpha has a percentile bootstrap interval over items (--resamples draws "
        "from --seed).",
        empty_note=NO_RATINGS,
    ),
    "judge_criteria": Entry(
        "LLM judges against the criteria they rate, beside one human rater (TACL 2024)",
        "The criterion-matched view (Chhun et al. 2024): each LLM judge's rating of a "
        "criterion, per prompt variant, correlated with that human criterion; the human "
        "rater row (each rater against the panel, averaged over raters) and each column's "
        "mean |r|.",
        name="judges",
    ),
    "judge_scale": Entry(
        "how many LLM-judge values the ingests found outside their scale, per judge and prompt",
        "Counts of each judge's values below and above its scale, not whole, unparsed and "
        "missing, per prompt variant, with the scale policy applied at ingest (HANNA's LLM "
        "file codes an unparsable answer as -1 inside 3-try means; its policy is keep, as "
        "the TACL study used the values).",
    ),
    "judge_williams": Entry(
        "Williams tests of each LLM judge against the best metric of its criterion",
        "For each criterion, the metric with the largest |correlation| at --level; every "
        "judge measure of that criterion (each prompt) is tested against it in both "
        "directions (one-sided Williams tests), --correction adjusting one judge and "
        "prompt against one metric across the criteria (Chhun et al. 2024's family).",
    ),
    "rater_panel": Entry(
        "each human rater against the panel, per criterion",
        "Correlation of each rater's ratings with the mean of all raters (panel) or of the "
        "other raters (others), at item, system or global level, and the mean over raters.",
    ),
    "power": Entry(
        "is this study big enough? power, needed inputs and detectable effect, from it as a pilot",
        "Simulate studies of other sizes by resampling this one (its inputs with replacement, "
        "its systems, its raters' ratings) and run the package's own test on each: the power "
        "at a grid of inputs, the smallest design reaching --target-power and the smallest "
        "detectable effect, each with its Monte Carlo standard error. With no options: can "
        "the study tell its best metric from the runner-up on its first criterion (PERM-BOTH, "
        "item-level Pearson), and how many inputs would it take? --question systems: its two "
        "best systems; --question ranking: the stable ranking probability of all its systems.",
        overrides={
            "criterion": Option(
                "the human criterion, by name or abbreviation (e.g. EM)",
                none="the study's first criterion",
            )
        },
    ),
    "system_means": Entry(
        "mean rating of each system per measure with t-intervals (Tab. 4)",
        "Means and Student-t intervals over a measure's individual ratings (or an LLM "
        "judge's tries) when the store holds them (unit 'rating'), else over item values "
        "(unit 'item'); the human criteria by default, LLM judges with --kinds llm-judge.",
    ),
}


def analysis_names() -> list[str]:
    """The analyses that are commands: those of :data:`ANALYSES` in order, then every other
    public function of :mod:`hanna_stats.analyses` not in :data:`NOT_COMMANDS`."""
    import hanna_stats.analyses

    public = [
        name
        for name in hanna_stats.analyses.__all__
        if name[:1].islower() and name not in NOT_COMMANDS
    ]
    return [*(n for n in ANALYSES if n in public), *sorted(set(public) - set(ANALYSES))]


def analysis_command(function: str) -> Command:
    """The command of analysis ``function`` (:data:`ANALYSES`' entry, if any)."""
    entry = ANALYSES.get(function)
    if entry is None:
        summary = docstring_summary(function)
        entry = Entry(summary, summary)
    name = entry.name or function.replace("_", "-")
    return Command(
        name,
        entry.help,
        entry.description,
        "run_analysis",
        generated=functools.partial(signature_arguments, name, function, entry.overrides),
        function=function,
        empty_note=entry.empty_note,
    )


# --------------------------------------------------------------------------- the others


def commands() -> tuple[Command, ...]:
    """Every subcommand, in the order of ``--help``."""
    return (
        *data_commands(),
        *(analysis_command(name) for name in analysis_names()),
        *page_commands(),
        score_command(),
    )


def data_commands() -> tuple[Command, ...]:
    """Fetching, ingesting and querying the store."""
    return (
        Command(
            "fetch-data",
            "download the public HANNA files (pinned commits, SHA-256 checked) into the cache",
            "Download the HANNA files from the public repository at pinned commits, verify "
            "their SHA-256 and store them in the cache (HANNA_STATS_CACHE, default "
            "~/.cache/hanna_stats). Offline, pass a local copy with --local DIR.",
            "run_fetch",
            (
                argument(
                    "--dest", type=Path, metavar="DIR", none="the cache", help="target folder"
                ),
                argument(
                    "--local",
                    type=Path,
                    metavar="DIR",
                    none="none: download",
                    help="verify and copy a local copy of the files instead of downloading them",
                ),
                argument(
                    "--with-annotations",
                    dest="include_annotations",
                    action="store_true",
                    help="also fetch the raw rater-level annotations (no pinned checksum: "
                    "unverified)",
                ),
            ),
            source=False,
            output=False,
        ),
        ingest_command(),
        Command(
            "sql",
            "run ad-hoc SQL against the store",
            "Run SQL against the store (read-only unless --write). Views: item_scores, "
            "system_scores, given_system_scores, given_domain_scores, scores_wide, "
            "rating_records, measure_catalogue (story_scores: HANNA's name for item_scores). "
            "The query reads and writes nothing outside the store (no COPY "
            "TO, read_csv, ATTACH or extension install) unless --allow-files.",
            "run_sql",
            (
                argument("query", help="one SQL statement, e.g. SELECT * FROM system_scores"),
                argument("--write", action="store_true", help="open the store file read-write"),
                argument(
                    "--allow-files",
                    action="store_true",
                    help="let the query read and write files (COPY, read_csv, ATTACH)",
                ),
            ),
        ),
    )


def ingest_command() -> Command:
    """``ingest``: files into a store."""
    return Command(
        "ingest",
        "load HANNA files, SummEval, a WMT test set or a tidy CSV/Parquet into a store",
        "Ingest files into a DuckDB store (one transaction per file; re-running does not "
        "duplicate). PATH is a HANNA data folder, a WMT test set in MTME's layout (a folder "
        "with human-scores/ and metric-scores/; one language pair: --lp, --ref) or a file; the "
        "format of a file is taken from its HANNA name, else a .jsonl file is SummEval's "
        "annotations (model_annotations.aligned[.paired].jsonl), else it is read as tidy "
        "(item,input,system,measure,value[,rater]).",
        "run_ingest",
        (
            argument(
                "paths",
                nargs="+",
                type=Path,
                metavar="PATH",
                keyword=False,
                help="a HANNA data folder, a WMT test set folder or a file (see above)",
            ),
            argument("--db", type=Path, required=True, help="store file (created if missing)"),
            argument(
                "--format",
                choices=("auto", *INGEST_FORMATS),
                default="auto",
                keyword=False,
                help="the dataset format of every PATH: auto (from its name and content, see "
                "above) or one of the formats named",
            ),
            argument(
                "--human-system",
                none="none",
                help="tidy files: the system holding human references",
            ),
            argument(
                "--human",
                type=comma_list,
                default=(),
                metavar="MEASURE[,MEASURE...]",
                help="tidy files: measures of kind human (the criteria), comma-separated, as a "
                "`kind` column would mark them",
            ),
            argument(
                "--scale",
                type=parse_scale,
                action="append",
                default=[],
                keyword=False,
                metavar="NAME=LO..HI",
                help="tidy files: measure NAME's Likert scale, whole numbers LO to HI "
                "(repeatable), as scale_min/scale_max columns would declare it; a rating off it "
                "is refused with its row. A human measure without one gets one inferred from its "
                "values, printed in the summary",
            ),
            argument("--study", none="the file's stem", help="tidy files: the study's name"),
            argument(
                "--item-word",
                default="item",
                metavar="WORD",
                help="tidy files: the study's word for its items, e.g. summary or segment (the "
                "report's 'summary level')",
            ),
            argument(
                "--lp",
                none="the test set's only one",
                help="WMT test sets: the language pair (needed if several)",
            ),
            argument(
                "--ref",
                none="the test set's only one",
                help="WMT test sets: the standard reference (needed if several)",
            ),
            argument(
                "--include-outliers",
                action="store_true",
                help="WMT test sets: keep mt-metrics-eval's outlier systems of the pair (left out "
                "by default, as its tasks and correlations leave them out)",
            ),
            argument(
                "--extend",
                action="store_true",
                help="add a file of another study (none of its inputs in the store)",
            ),
            argument(
                "--replace",
                action="store_true",
                help="let the file change values already in the store",
            ),
            argument(
                "--scale-policy",
                choices=WORDS["scale_policy"],
                none="keep for HANNA's LLM file, as its authors used it; else error",
                help="what a judge's or metric's value outside its measure's scale does: error, "
                "missing, clip or keep (always counted); human ratings off their scale are "
                "always refused",
            ),
        ),
        source=False,
        output=False,
    )


def page_commands() -> tuple[Command, ...]:
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
            "run_user_study",
            (
                argument(
                    "file",
                    nargs="?",
                    type=Path,
                    metavar="FILE",
                    keyword=False,
                    none="user_study.csv in the data folder",
                    help="the user-study CSV",
                ),
                data_argument("HANNA data folder"),
            ),
            generated=functools.partial(
                signature_arguments, "user-study", "user_study_agreement", {}
            ),
            source=False,
        ),
        Command(
            "report",
            "the whole study as one offline, interactive HTML report",
            "Run the paper's analyses on the store and write one self-contained HTML file "
            "(charts with inline JavaScript; no network access when opened). The same store and "
            "options give a byte-identical file. Sections whose inputs the study lacks say so.",
            "run_report",
            (
                argument(
                    "--out",
                    type=Path,
                    default=Path("report.html"),
                    keyword=False,
                    help="HTML file to write",
                ),
                argument(
                    "--tables",
                    type=Path,
                    metavar="DIR",
                    keyword=False,
                    none="none",
                    help="also write every table as CSV and Parquet into DIR",
                ),
            ),
            generated=settings_arguments,
            output=False,
        ),
    )


def score_command() -> Command:
    """``score``: texts scored into a store or a tidy file."""
    return Command(
        "score",
        "compute the paper's metrics from texts into a store or a tidy file",
        "Score stories with registered metrics (--list shows them). --input is a "
        "CSV/Parquet/JSONL file with columns input,system,prompt,reference,story[,item] "
        "(further references in reference_2, reference_3, ...), or a HANNA story file as it "
        "is; without --input, the texts the --db store holds are scored (each item's output "
        "against all its references, its input's text as the source). Scores go into the --db "
        "store as measures (one transaction; already scored (item, metric) pairs are skipped "
        "unless --force) and/or to --out (CSV or Parquet by extension: "
        "item,input,system,metric,value).",
        "run_score",
        (
            argument(
                "--list",
                action="store_true",
                help="print the metric registry as a table (see --format) and exit",
            ),
            argument(
                "--metrics",
                default="all-string",
                help="comma-separated metric or scorer names, 'all-string' (the string-based "
                "metrics) or 'all'",
            ),
            argument(
                "--input",
                type=Path,
                metavar="FILE",
                none="the texts the --db store holds",
                help="texts to score",
            ),
            argument(
                "--db",
                type=Path,
                metavar="FILE",
                none="none",
                help="store file to write the scores into (created if missing when --input)",
            ),
            argument(
                "--out",
                type=Path,
                metavar="FILE",
                none="none",
                help="tidy table to write (.csv, .parquet)",
            ),
            argument(
                "--hanna-compat", action="store_true", help="reproduce the published HANNA values"
            ),
            argument(
                "--split-sentences",
                action="store_true",
                help="ROUGE: one sentence per line first (spaCy sentencizer; ROUGE-L, -W)",
            ),
            argument(
                "--lowercase",
                action="store_true",
                help="Novelty-n and Repetition-n on lowercased tokens (SummEval's current)",
            ),
            argument("--force", action="store_true", help="recompute scores already in the store"),
            argument(
                "--extend",
                action="store_true",
                help="score texts of another study than the store's into it",
            ),
            argument(
                "--device",
                none="cuda when available, else cpu",
                help="torch device for model-based metrics (cpu, cuda, cuda:1, ...)",
            ),
            argument(
                "--batch-size",
                type=parse_count,
                default=32,
                help="batch size of model-based metrics",
            ),
            argument(
                "--model",
                action="append",
                default=[],
                metavar="NAME=PATH",
                help="checkpoint override for a model-based metric (repeatable)",
            ),
        ),
        source=False,
    )
