"""The options of the command line: one text per parameter name, and the CLI's own options.

:data:`OPTIONS` holds, for each parameter name of the analyses (and of
:class:`~hanna_stats.reports.ReportSettings`), what ``--help`` says of it and, where the
annotation does not say it, how its value is read (``seed``: the kernels' seed check,
``resamples``: their count bounds, ``ks``: a range or a list, ...). Choices and defaults are not
here: :mod:`hanna_stats.cli.commands` reads them from each function's signature. Where one name
has choices that differ between functions (``level`` with or without ``global``, the automatic
``kinds`` or the rated ones), the help names only the choices the function allows
(:meth:`Option.text`).

Every option's help ends with its default as :func:`~hanna_stats.vocabulary.shown` writes it, or
with what a ``None`` default means (:attr:`Option.none`, else the vocabulary's
:data:`~hanna_stats.vocabulary.NONE_MEANS`). This module imports only the standard library and
:mod:`hanna_stats.vocabulary`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hanna_stats.vocabulary import WORDS, shown

#: Formats of ``ingest --format``: the dataset formats (:data:`hanna_stats.store.formats.FORMATS`).
INGEST_FORMATS = WORDS["data_format"]


# --------------------------------------------------------------------------- reading values


def parse_seed(text: str) -> int:
    """A seed, checked by the kernels' rule when the command line is read (before any work)."""
    from hanna_stats.kernels import check_seed

    try:
        value = int(text)
        check_seed(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an integer in [0, 2**63); got {text!r}"
        ) from None
    return value


def parse_count(text: str) -> int:
    """A number of resamples or permutations, checked by the kernels' bounds when read."""
    from hanna_stats.kernels import check_count

    try:
        return check_count("count", int(text))
    except ValueError as err:
        message = str(err).removeprefix("count ") if text.strip().lstrip("-").isdigit() else ""
        raise argparse.ArgumentTypeError(message or f"must be an integer; got {text!r}") from None


def parse_draws_or_zero(text: str) -> int:
    """A number of permutations as :func:`parse_count` reads it, or 0 (no test)."""
    return 0 if text.strip() == "0" else parse_count(text)


def parse_sample_size(text: str) -> int:
    """A Williams test's sample size n, checked when read: an integer from 4 (the test has
    n - 3 degrees of freedom) to 2**63 - 1."""
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


def parse_inputs_count(text: str) -> int:
    """A number of inputs to draw (``--sample-inputs``): a positive integer."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer; got {text!r}")
    return value


def parse_ks(text: str) -> list[int]:
    """'4-10' -> [4, ..., 10]; '4,6,8' -> [4, 6, 8]; each k within the kernels' count bounds."""
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


def parse_counts(text: str) -> tuple[int, ...]:
    """'24,48,96' -> (24, 48, 96): comma-separated positive integers (a grid of designs)."""
    try:
        values = tuple(int(v) for v in text.split(","))
    except ValueError:
        values = ()
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated positive integers; got {text!r}"
        )
    return values


def parse_scale(text: str) -> tuple[str, tuple[float, float]]:
    """An ``ingest --scale NAME=LO..HI``, checked by the store's rule when read."""
    from hanna_stats.store.tidy import parse_scale as store_parse_scale

    try:
        return store_parse_scale(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def comma_list(text: str) -> tuple[str, ...]:
    """'a, b,,c' -> ('a', 'b', 'c'): a comma-separated list, blanks dropped."""
    return tuple(k.strip() for k in text.split(",") if k.strip())


def parse_names(text: str) -> list[str]:
    """A comma-separated list of names (blanks around them dropped), none of them empty."""
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected NAME[,NAME...], got {text!r}")
    return names


def words_of(choices: Sequence[str]) -> Callable[[str], tuple[str, ...]]:
    """The reader of a comma-separated list of ``choices`` (an option annotated
    ``tuple[Literal[...], ...]``), refusing a word as argparse refuses a bad choice."""

    def parse(text: str) -> tuple[str, ...]:
        words = comma_list(text)
        for word in words:
            if word not in choices:
                allowed = ", ".join(repr(c) for c in choices)
                raise argparse.ArgumentTypeError(
                    f"invalid choice: {word!r} (choose from {allowed})"
                )
        if not words:
            raise argparse.ArgumentTypeError(f"expected one or more of {', '.join(choices)}")
        return words

    return parse


def measures_or_criteria(text: str) -> str | list[str]:
    """``ci --against``: ``criteria`` or comma-separated measure names."""
    return text if text == "criteria" else parse_names(text)


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Option:
    """What the command line says of one parameter name, and how it reads a value.

    ``help`` says what the option is. For a parameter whose choices differ between functions,
    ``values`` describes each choice; the help then lists those the function allows, in its
    order, and ends with ``note`` (:meth:`text`). ``type`` reads the value (default: from the
    annotation), ``metavar`` names it in the usage, ``none`` says what a ``None`` default means.
    ``negative`` is the flag and help of a flag defaulting to True (default ``--no-NAME``).
    """

    help: str
    values: dict[str, str] = field(default_factory=dict)
    note: str = ""
    type: Callable[[str], Any] | None = None
    metavar: str | None = None
    none: str | None = None
    negative: tuple[str, str] | None = None

    def text(self, choices: Sequence[str] | None = None) -> str:
        """The help, listing the ``choices`` that :attr:`values` describes."""
        if not self.values or not choices:
            return self.help
        listed = [
            f"{c} ({self.values[c]})" if self.values[c] else c for c in choices if c in self.values
        ]
        if not listed:
            return self.help
        either = f"{', '.join(listed[:-1])} or {listed[-1]}" if len(listed) > 1 else listed[0]
        text = f"{self.help}: {either}"
        return f"{text}; {self.note}" if self.note else text


#: The text of every parameter name of the analyses and of the report's settings.
OPTIONS: dict[str, Option] = {
    "level": Option(
        "level of the statistic",
        values={
            "item": "across the systems within each input, then averaged over the inputs",
            "system": "across the systems' mean scores",
            "global": "all items pooled",
        },
        note="item may be called story, summary or segment, and is output as item",
    ),
    "method": Option(
        "correlation coefficient",
        values={
            "pearson": "",
            "spearman": "",
            "kendall": "Kendall's tau",
            "acc_eq": "pairwise accuracy with ties, Deutsch et al. 2023",
        },
    ),
    "variant": Option(
        "Kendall's tau variant, as scipy's kendalltau: a (no tie correction), b (corrected for "
        "ties, the paper's) or c (Stuart's); pearson and spearman ignore it"
    ),
    "nan_policy": Option(
        "missing values: omit (drop the pairs with one), propagate (a NaN correlation) or "
        "raise (an error)"
    ),
    "task_set": Option(
        "the WMT metrics task's task set, as mt-metrics-eval defines it: wmt23 (pooled pairwise "
        "accuracy, then per pair system and segment Pearson and segment acc_eq), wmt24, "
        "wmt24-on-wmt23 and wmt25 (per pair system SPA and segment acc_eq)"
    ),
    "against": Option(
        "what is correlated with what: criteria (each automatic measure with each human "
        "criterion), metrics (automatic measures with each other), inter-criteria (the criteria "
        "with each other) or all (every pair of measures)"
    ),
    "include_human": Option(
        "keep the human-written stories (HANNA's Human, a WMT reference scored as a system) as "
        "a system",
        negative=(
            "--no-human",
            "leave out the human-written stories, which the raters rated like the systems' ones",
        ),
    ),
    "kinds": Option(
        "kinds of measures, comma-separated",
        values={
            "human": "the people's ratings",
            "metric": "the automatic metrics",
            "llm-judge": "the LLM judges' ratings, each judge's tries as its raters where "
            "raters are analysed",
        },
        metavar="KIND[,KIND...]",
    ),
    "pvalue_method": Option(
        "add each correlation's two-sided p-value (system and global level, on its n pairs), as "
        "scipy.stats' kendalltau/spearmanr/pearsonr: auto (scipy's default), exact or asymptotic",
    ),
    "group_by": Option(
        "item level: the groups correlated one by one, then averaged: each input, across the "
        "systems (input), or each system, across the inputs (system)"
    ),
    "weighting": Option(
        "item level: the mean over the groups weighs each alike (uniform) or by its number of "
        "observations (count)"
    ),
    "confidence": Option("confidence level of the intervals, in (0, 1)"),
    "system_scores": Option(
        "system level: a system's value is the mean of its items (mean) or the one the study "
        "gives (given: WMT's .sys.score files; measures without one are left out, named on stderr)"
    ),
    "ties": Option(
        "rank of equal |correlations| in a column (the Borda count): the mean of their 0-based "
        "positions (average), the first (min) or the last (max)"
    ),
    "task_metrics": Option(
        "use the metrics the WMT25 general task's AutoRank uses for the language pair (five, "
        "four without CometKiwi-XL where the pair has no reference, chrF++ for en-bho_IN and "
        "en-mas_KE) instead of every metric of --kinds"
    ),
    "ks": Option("k values: a range 4-10 or a list 4,6,8", type=parse_ks),
    "criterion": Option("the human criterion, by name or abbreviation (e.g. EM)"),
    "n": Option(
        "sample size n of the Williams test (n - 3 degrees of freedom)",
        type=parse_sample_size,
    ),
    "alternative": Option(
        "alternative hypothesis of each ordered pair (a, b) of measures: greater (a agrees "
        "better with the criterion), less (b does) or two-sided (they differ)"
    ),
    "correction": Option(
        "multiple-testing correction of the p-values: bh (Benjamini-Hochberg), by "
        "(Benjamini-Yekutieli), holm or bonferroni",
    ),
    "family": Option(
        "the tests --correction adjusts together: the criterion's ordered pairs (criterion), one "
        "ordered pair across the study's criteria (pair) or every test at this level and method "
        "(all)"
    ),
    "resamples": Option("number of bootstrap resamples B", type=parse_count),
    "permutations": Option(
        "number of permutations K (a p-value is a count of permuted statistics out of K)",
        type=parse_count,
    ),
    "draws": Option(
        "number of uninformative metrics simulated for the chance baseline (each its scores "
        "permuted within each group and tie-calibrated afresh)",
        type=parse_count,
    ),
    "alpha": Option("significance level, in (0, 0.5)"),
    "threshold": Option(
        "smallest difference of the criterion's scores for a pair to count (Kendall-like tau: "
        "25 points of raw DA, WMT 2017-2020), on the criterion's scale"
    ),
    "seed": Option(
        "seed of the random draws, an integer in [0, 2**63): the same seed, the same result",
        type=parse_seed,
    ),
    "resample": Option(
        "what a resample draws with replacement: the inputs (BOOT-INPUTS), the systems "
        "(BOOT-SYSTEMS) or both (BOOT-BOTH; Deutsch et al. 2021)"
    ),
    "ci_method": Option(
        "interval: percentile (quantiles of the resampled correlations) or bca (bias-corrected "
        "and accelerated, Efron 1987; adds a jackknife)"
    ),
    "unit": Option(
        "what one coin swaps between the two metrics' standardised scores: each item (both: "
        "PERM-BOTH), each system's items (systems: PERM-SYS) or each input's items (inputs: "
        "PERM-INPUT)"
    ),
    "stop_alpha": Option(
        "stop a pair once its decision at this level is settled (Clopper-Pearson rule)",
    ),
    "statistic": Option(
        "acc_eq (the share of pairs of outputs the metric orders as the people do, ties "
        "included) or tau_eq (2 acc_eq - 1)"
    ),
    "swap": Option(
        "swap the metrics' outcomes per pair (pairs) or their z-scored scores per cell, "
        "re-calibrating both every permutation (scores; slow: MTME's PermutationSigDiff)"
    ),
    "measures": Option(
        "measure names, or criteria's abbreviations",
        metavar="M",
    ),
    "interval_method": Option(
        "distribution of the closed-form intervals and p-values: t (Student, n - 1 degrees of "
        "freedom) or z (normal)",
    ),
    "categories": Option(
        "the categories: the whole numbers of the measure's Likert or integer scale, used or not "
        "(AC1 depends on their number), or only the labels observed"
    ),
    "reference": Option(
        "the human rater's panel: the mean of all raters (panel, the TACL study) or of the other "
        "raters (others)"
    ),
    "question": Option(
        "what the simulated studies are asked: two metrics against the criterion (metrics), two "
        "systems on it (systems) or the ranking of all its systems (ranking: stable ranking "
        "probability)"
    ),
    "pair": Option(
        "the two metrics (metrics) or systems (systems) compared, comma-separated, the first "
        "expected better",
        none="the two best correlated metrics, or the two best systems by mean",
    ),
    "test": Option(
        "the test run on each simulated study: williams, perm-both or calibrated (metrics); "
        "bootstrap, permutation or t (systems)",
        none="williams (metrics), bootstrap (systems), permutation (ranking)",
    ),
    "effect": Option(
        "the effect injected: the drop of the second metric's pooled Pearson correlation "
        "(metrics) or the mean difference on the rating scale (systems)",
        none="the study's own observed difference",
    ),
    "inputs": Option(
        "inputs of the designs of the curve, comma-separated",
        type=parse_counts,
        metavar="N[,N...]",
        none="0.25, 0.5, 1, 2 and 4 times the study's (ranking: times half of them)",
    ),
    "design_systems": Option(
        "systems of each simulated study (metrics)", none="the study's systems"
    ),
    "ratings": Option(
        "ratings per item of each simulated study, drawn from the rater-level ratings",
        none="the item scores as they are",
    ),
    "target_power": Option(
        "the power (ranking: stable ranking probability) the needed design and the smallest "
        "detectable effect aim at, in (0, 1)"
    ),
    "solve_for": Option(
        "what the needed design searches: inputs, systems (metrics) or ratings per item"
    ),
    "studies": Option("simulated studies per design", type=parse_count),
    # the report's own settings (hanna_stats.reports.ReportSettings)
    "analyses": Option(
        "more analyses, by their Python names (e.g. spa,calibrated_accuracy), each in its own "
        "section at the end of the report, run with its defaults and the settings above that it "
        "takes"
    ),
    "ci_resample": Option("what the correlation intervals resample: inputs, systems or both"),
    "williams_level": Option(
        "level of the Williams matrices (the report's own setting: the paper's figures are at "
        "system level)"
    ),
    "williams_method": Option(
        "coefficient of the Williams matrices (the report's own setting: the paper's figures use "
        "pearson)"
    ),
    "task_permutations": Option(
        "permutations K of every task's test in the metric ranking by task set (a store of "
        "several WMT pairs); 0: no test, the clusters are the order of the average",
        type=parse_draws_or_zero,
    ),
    "task_gold": Option(
        "the human criterion every pair of the metric ranking by task set is ranked against",
        none="each pair's standard gold in mt-metrics-eval, else its only criterion",
    ),
    "power_studies": Option(
        "simulated studies per design of the section 'Is this study big enough?' (its "
        "standard errors are at most 0.5 / sqrt of it)",
        type=parse_count,
    ),
    "power_permutations": Option(
        "permutations of each simulated permutation test of that section", type=parse_count
    ),
    "power_resamples": Option(
        "resamples of each simulated paired bootstrap of that section", type=parse_count
    ),
}

#: Parameters the command line does not offer, with the reason.
PYTHON_ONLY: dict[str, str] = {
    "epsilon": "fixed tie thresholds, one per measure as a dict: the command line calibrates them",
}


# --------------------------------------------------------------------------- argparse


@dataclass(frozen=True)
class Argument:
    """One argument of a subcommand's parser.

    ``flags`` and ``settings`` go to :meth:`argparse.ArgumentParser.add_argument`; ``keyword``
    says whether the value is an argument of the command's function, under the name ``dest``.
    The help ends with ``(default: X)``, X the default as :func:`shown` writes it (a flag:
    ``off``), or ``none`` when given: what a ``None`` default means.
    """

    flags: tuple[str, ...]
    dest: str
    settings: dict[str, Any]
    keyword: bool = True
    none: str | None = None

    def default_text(self) -> str | None:
        """The default as the help states it; None for a required argument."""
        if self.settings.get("required") or (
            not self.flags[0].startswith("-") and self.settings.get("nargs") not in ("?", "*")
        ):
            return None
        if self.settings.get("action") in ("store_true", "store_false", "store_const"):
            return "off"  # the flag not given
        if self.none is not None:
            return self.none
        return shown(self.settings.get("default"))

    def help(self) -> str:
        """The help text with the default appended (nothing for a required argument)."""
        text, default = self.settings.get("help", ""), self.default_text()
        if default is None:
            return text
        return f"{text} (default: {default})" if text else f"(default: {default})"

    def add_to(self, parser: argparse.ArgumentParser | Any) -> None:
        """Add this argument to ``parser`` (or a group of it)."""
        settings = dict(self.settings)
        if self.flags[0].startswith("-"):
            settings["dest"] = self.dest
        settings["help"] = self.help().replace("%", "%%")  # argparse formats help with %
        parser.add_argument(*self.flags, **settings)


def argument(
    *flags: str, keyword: bool = True, none: str | None = None, **settings: Any
) -> Argument:
    """An :class:`Argument`; ``dest`` as argparse derives it (``--nan-policy`` ->
    ``nan_policy``) unless given; ``none``: how the help states a ``None`` default."""
    long = [f for f in flags if f.startswith("--")] or flags
    dest = settings.pop("dest", None) or long[0].lstrip("-").replace("-", "_")
    return Argument(flags, dest, settings, keyword, none)


#: What ``--data`` defaults to.
DATA_DEFAULT = "$HANNA_DATA, else the fetch-data cache"

#: ``--scheduler``: the ``executor`` of the analyses that resample (a Dask cluster).
SCHEDULER = argument(
    "--scheduler",
    metavar="ADDRESS",
    keyword=False,
    none="none: in this process",
    help="run the resampling on a Dask cluster, the same numbers bit for bit: a scheduler's "
    "address (tcp://host:8786), or local[:N] for a cluster of N worker processes on this machine "
    "(default N: the cores); needs the cluster extra (pip install 'hanna_stats[cluster]')",
)
#: ``--pool-subsets``: the ``subsets`` keyword every analysis of a Study has.
POOL_SUBSETS = argument(
    "--pool-subsets",
    dest="subsets",
    action="store_const",
    const="pooled",
    default="each",
    help="a store of several subsets (WMT: language pairs) is analysed per subset, the tables "
    "stacked under a first column subset, as the WMT metrics tasks report every pair; this "
    "flag pools the subsets' items into one analysis instead (--subset LABEL: one subset)",
)
#: Parameters the command line gives by its own options.
CLI_ARGUMENTS: dict[str, Argument] = {"executor": SCHEDULER, "subsets": POOL_SUBSETS}

OUTPUT_FORMAT = argument(
    "--format",
    choices=WORDS["format"],
    default="table",
    keyword=False,
    help="output: table (as wide as the terminal; on a terminal, a long table shows its first "
    "and last rows), csv or json (every row, full precision), or latex (a booktabs tabular of "
    "every row, numbers as in table)",
)


def data_argument(help: str) -> Argument:
    """``--data DIR``, the HANNA data folder (``$HANNA_DATA``, else the ``fetch-data`` cache)."""
    return argument("--data", type=Path, metavar="DIR", keyword=False, none=DATA_DEFAULT, help=help)


def source_arguments() -> tuple[Argument, ...]:
    """``--data`` and ``--db`` (exclusive), ``--systems``, ``--exclude-systems``, ``--subset``,
    ``--sample-inputs``, ``--sample-method``, ``--sample-seed``."""
    return (
        data_argument("HANNA data folder, built into an in-memory store"),
        argument(
            "--db",
            type=Path,
            metavar="FILE",
            keyword=False,
            none="none: --data is read",
            help="an existing store file (see `ingest`), opened read-only",
        ),
        argument(
            "--systems",
            type=parse_names,
            metavar="NAME[,NAME...]",
            keyword=False,
            none="all",
            help="analyse only these systems",
        ),
        argument(
            "--exclude-systems",
            type=parse_names,
            metavar="NAME[,NAME...]",
            keyword=False,
            none="none",
            help="leave these systems out, e.g. a reference or an outlier",
        ),
        argument(
            "--subset",
            metavar="LABEL",
            keyword=False,
            none="all",
            help="analyse only this subset of the store (WMT: a language pair, e.g. en-de)",
        ),
        argument(
            "--sample-inputs",
            type=parse_inputs_count,
            metavar="N",
            keyword=False,
            none="all inputs",
            help="analyse N inputs (WMT: segments) drawn at random, N of each subset, every "
            "measure on the same ones (mt-metrics-eval's sample_size; after --subset and "
            "--systems); N above a subset's count keeps all of it",
        ),
        argument(
            "--sample-method",
            choices=WORDS["sample_method"],
            keyword=False,
            none="uniform",
            help="with --sample-inputs: draw uniformly, or stratify over the inputs' documents "
            "(WMT: documents/LP.docs), each its share of N",
        ),
        argument(
            "--sample-seed",
            type=parse_seed,
            metavar="SEED",
            keyword=False,
            none="0",
            help="with --sample-inputs: the seed of the draw (mt-metrics-eval's sample_seed: the "
            "same seed draws the same inputs)",
        ),
    )
