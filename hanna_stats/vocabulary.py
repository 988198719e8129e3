"""The package's words: every option's allowed values, their defaults, and the one check.

Every layer (store, kernels, analyses, reports, CLI) takes its option words from here, so a
word means the same thing, has the same default and is refused with the same message wherever
it is given. The words are ``typing.Literal`` types (for signatures and type checkers); their
values in order are :data:`WORDS` (the tuples the CLI offers as choices, and the integer codes
of compiled loops are positions in them); :data:`DEFAULTS` is each public word's default in
Python and on the command line alike (the command line reads each analysis' signature;
``tests/test_defaults.py`` checks the signatures against it), except where :data:`EXCEPTIONS`
lists a function's other default beside its reason.

This module imports only the standard library: the command line builds its parsers from it
without loading numpy, polars or DuckDB.

Examples
--------
>>> check("method", "kendall")
'kendall'
>>> check("method", "tau")
Traceback (most recent call last):
...
ValueError: method must be one of 'pearson', 'spearman', 'kendall'; got 'tau'
>>> check_level("segment")
'item'
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Literal, get_args

#: Levels of correlation: ``item`` (within each input, across the systems, then averaged over
#: the inputs), ``system`` (system means) and ``global`` (all items pooled).
Level = Literal["item", "system", "global"]
#: The levels of the analyses that resample or rank by level (no global level).
ItemSystem = Literal["item", "system"]
#: Other words for the item level, accepted wherever a level is given: HANNA's stories,
#: SummEval's summaries, WMT's segments. Outputs always say ``item``.
ItemSynonym = Literal["story", "summary", "segment"]
#: Every word a level may be given by.
LevelWord = Literal[Level, ItemSynonym]
ItemSystemWord = Literal[ItemSystem, ItemSynonym]
#: Correlation coefficients (scipy.stats' pearsonr, spearmanr, kendalltau).
Method = Literal["pearson", "spearman", "kendall"]
#: The coefficients plus pairwise accuracy with ties (Deutsch, Foster and Freitag 2023).
Coefficient = Literal[Method, "acc_eq"]
#: Kendall's tau variants (scipy.stats.kendalltau's ``variant``).
Variant = Literal["a", "b", "c"]
NanPolicy = Literal["omit", "propagate", "raise"]
Alternative = Literal["two-sided", "less", "greater"]
#: Multiple-testing corrections: Benjamini-Hochberg, Benjamini-Yekutieli, Holm, Bonferroni.
Correction = Literal["bh", "by", "holm", "bonferroni"]
#: Families of a correction of Williams tests: a criterion's ordered pairs, one ordered pair
#: across the criteria, or every test at this level and method.
Family = Literal["criterion", "pair", "all"]
#: Tie rules of ranks: a run of equal values occupying 0-based sorted positions
#: ``k .. k + t - 1`` gets their mean (``average``), ``k`` (``min``) or ``k + t - 1`` (``max``).
Ties = Literal["average", "min", "max"]
#: What a resample or a permutation coin acts on.
Resample = Literal["inputs", "systems", "both"]
#: Bootstrap interval methods.
CIMethod = Literal["percentile", "bca"]
#: Closed-form interval of an agreement coefficient: ``coef +- t_{n-1} SE`` or ``coef +- z SE``
#: (the same distribution gives its p-value).
IntervalMethod = Literal["t", "z"]
#: How a ratings matrix is laid out: one row per item (target, unit) and one column per rater,
#: every agreement kernel's default, or its transpose (Krippendorff's "reliability data").
Layout = Literal["items x raters", "raters x items"]
#: The categories of a measure's labels in the nominal coefficients: the whole numbers of its
#: scale (every label it could get, used or not), or the labels observed.
CategorySource = Literal["scale", "observed"]
#: p-value of a correlation (scipy.stats.kendalltau's ``method``).
PvalueMethod = Literal["auto", "exact", "asymptotic"]
LevelOfMeasurement = Literal["nominal", "ordinal", "interval"]
#: Agreement weights of the nominal coefficients (None = unweighted).
Weights = Literal["linear", "quadratic"]
#: Item-level groups: correlate across the systems within each input, or across the inputs
#: within each system.
GroupBy = Literal["input", "system"]
#: Mean over groups: each defined group alike, or weighted by its number of observations.
Weighting = Literal["uniform", "count"]
#: A system's value at the system level: the mean of its items, or the value the study gives.
SystemScores = Literal["mean", "given"]
#: Kinds of automatic measures (the human criteria are kind ``human``).
Kind = Literal["metric", "llm-judge"]
#: Kinds of measures whose rater-level values the rater analyses read.
RatedKind = Literal["human", "llm-judge", "metric"]
#: What ``correlate`` correlates.
Against = Literal["criteria", "metrics", "inter-criteria", "all"]
#: Tie-calibrated statistics.
TieStatistic = Literal["acc_eq", "tau_eq"]
#: The WMT metrics tasks' task sets (mt-metrics-eval's ``tasks.WMT23`` ... ``WMT25``).
TaskSetName = Literal["wmt23", "wmt24", "wmt24-on-wmt23", "wmt25"]

#: What a calibrated permutation swaps: outcomes per pair, or z-scored scores per cell.
SwapUnit = Literal["pairs", "scores"]
#: Order of the (input, system) cells when the global level pools them into one vector: input
#: after input (cell ``(g, s)`` at ``g S + s``) or system after system (at ``s G + g``, the
#: packing of mt-metrics-eval, which lists each system's segments one after another).
CellOrder = Literal["input-major", "system-major"]
#: How an analysis treats a study of several subsets (WMT: language pairs): each subset on its
#: own, the tables stacked under a first column ``subset`` (as the WMT metrics tasks report
#: every pair), or every subset's items pooled into one study.
Subsets = Literal["each", "pooled"]
#: How :func:`~hanna_stats.analyses.sample_inputs` draws a study's inputs (mt-metrics-eval's
#: ``sample_method``): uniformly, or stratified over their documents (WMT's ``LP.docs``).
SampleMethod = Literal["uniform", "stratify"]
#: The tests a metric pair's power simulates (:func:`~hanna_stats.kernels.metric_pair_power`):
#: Williams, PERM-BOTH and the calibrated permutation test of acc_eq.
MetricPairTest = Literal["williams", "perm-both", "calibrated"]
#: The tests a system pair's power simulates (:func:`~hanna_stats.kernels.system_pair_power`):
#: the paired bootstrap (Koehn 2004), the paired sign-flip permutation test, the paired t-test.
SystemPairTest = Literal["bootstrap", "permutation", "t"]
#: The tests of :func:`~hanna_stats.analyses.power` (each question takes its own).
PowerTest = Literal[MetricPairTest, SystemPairTest]
#: The questions of :func:`~hanna_stats.analyses.power` about a study's design: two metrics
#: against one criterion, two systems on one criterion, the ranking of all the systems.
DesignQuestion = Literal["metrics", "systems", "ranking"]
#: The design a power analysis searches for a target power: the inputs (the other two fixed),
#: the systems (the metrics question) or the ratings per item.
SolveFor = Literal["inputs", "systems", "ratings"]
#: The rater panel one rater is compared with: all raters, or the others.
Reference = Literal["panel", "others"]
#: What a value outside its measure's scale does at ingest.
ScalePolicy = Literal["error", "missing", "clip", "keep"]
#: Output formats of every command that prints a table.
OutputFormat = Literal["table", "csv", "json", "latex"]
#: Dataset formats of ``ingest`` (see :data:`hanna_stats.store.formats.FORMATS`).
DataFormat = Literal[
    "hanna-metric-scores",
    "hanna-llm",
    "hanna-annotations",
    "tidy",
    "summeval",
    "wmt",
    "wmt25",
    "hanna-dir",
]

#: The name HANNA's ingests give the study (the report numbers the paper's figures for it).
HANNA_STUDY = "HANNA"
#: The issues of the TACL 2024 user study on LLM judges' explanations, in its file's order.
USER_STUDY_ISSUES = (
    "guidelines",
    "syntax",
    "superfluous",
    "incorrectness",
    "unsubstantiated",
    "incoherence",
)

#: Each word's values, in order (integer codes in compiled loops are positions here).
WORDS: dict[str, tuple[str, ...]] = {
    "level": get_args(Level),
    "item_system": get_args(ItemSystem),
    "level_word": (*get_args(Level), *get_args(ItemSynonym)),
    "item_system_word": (*get_args(ItemSystem), *get_args(ItemSynonym)),
    "item_synonym": get_args(ItemSynonym),
    "method": get_args(Method),
    "coefficient": (*get_args(Method), "acc_eq"),
    "variant": get_args(Variant),
    "nan_policy": get_args(NanPolicy),
    "alternative": get_args(Alternative),
    "correction": get_args(Correction),
    "family": get_args(Family),
    "ties": get_args(Ties),
    "resample": get_args(Resample),
    "ci_method": get_args(CIMethod),
    "interval_method": get_args(IntervalMethod),
    "layout": get_args(Layout),
    "categories": get_args(CategorySource),
    "pvalue_method": get_args(PvalueMethod),
    "level_of_measurement": get_args(LevelOfMeasurement),
    "weights": get_args(Weights),
    "group_by": get_args(GroupBy),
    "weighting": get_args(Weighting),
    "system_scores": get_args(SystemScores),
    "kinds": get_args(Kind),
    "rated_kinds": get_args(RatedKind),
    "against": get_args(Against),
    "tie_statistic": get_args(TieStatistic),
    "swap": get_args(SwapUnit),
    "task_set": get_args(TaskSetName),
    "cell_order": get_args(CellOrder),
    "subsets": get_args(Subsets),
    "sample_method": get_args(SampleMethod),
    "metric_pair_test": get_args(MetricPairTest),
    "system_pair_test": get_args(SystemPairTest),
    "power_test": get_args(PowerTest),
    "question": get_args(DesignQuestion),
    "solve_for": get_args(SolveFor),
    "reference": get_args(Reference),
    "scale_policy": get_args(ScalePolicy),
    "format": get_args(OutputFormat),
    "data_format": get_args(DataFormat),
}

#: The default of each public word, the same in every analysis and on every command line
#: (which reads the analyses' signatures; ``tests/test_defaults.py`` checks them against it).
#:
#: - ``level="item"`` and ``method="kendall"``: the paper's first figures (story-level Kendall)
#:   and the finest level a study has;
#: - ``alternative="greater"``: a comparison of two measures asks whether the first agrees
#:   better (Williams' H1 |r_a| > |r_b|, the WMT tasks' one-sided permutation tests);
#: - ``correction=None``: p-values as the test gives them, adjusted only on request;
#: - ``kinds=("metric",)``: the paper's automatic metrics; ``rated_kinds=("human",)``: the
#:   people's ratings;
#: - ``subsets="each"``: a correlation over two language pairs' systems or segments together is
#:   not a number anyone reports (mt-metrics-eval never pools pairs): pooling is asked for.
DEFAULTS: dict[str, object] = {
    "level": "item",
    "method": "kendall",
    "variant": "b",
    "nan_policy": "omit",
    "alternative": "greater",
    "correction": None,
    "family": "criterion",
    "kinds": ("metric",),
    "rated_kinds": ("human",),
    "include_human": False,
    "ties": "average",
    "resample": "inputs",
    "ci_method": "percentile",
    "confidence_level": 0.95,
    "group_by": "input",
    "weighting": "uniform",
    "system_scores": "mean",
    "seed": 0,
    "subsets": "each",
    "format": "table",
}

#: What a ``None`` default means, by parameter name of the analyses: ``--help`` ends with it
#: and the report's settings lines show it (a ``None`` not listed reads ``none``).
NONE_MEANS: dict[str, str] = {
    "measures": "every measure of the kinds",
    "criterion": "every criterion",
    "epsilon": "calibrated per metric and criterion",
    "pvalue_method": "none, no p-values",
    "confidence": "none, no intervals",
    "n": "the number of systems at system level, of inputs at item level (the paper's "
    "convention), of items at global level",
    "correction": "none, the p-values as the tests give them",
    "interval_method": "t for AC1 and Fleiss' kappa, z for Cohen's kappa",
    "stop_alpha": "none, every permutation",
}


def shown(value: object, option: str | None = None) -> str:
    """How a value of an option reads in ``--help``, the command line's reference and the
    report's settings lines: a word as it is typed, a tuple of words comma-separated (as
    ``--kinds`` takes them), a range of integers as ``LO-HI`` (as ``--ks`` takes it), ``None`` as
    :data:`NONE_MEANS` says for ``option`` (else ``none``), a flag's ``False`` / ``True`` as
    ``off`` / ``on``.

    Examples
    --------
    >>> shown(("metric", "llm-judge")), shown(range(4, 11)), shown(None), shown(False)
    ('metric,llm-judge', '4-10', 'none', 'off')
    >>> shown(None, "criterion")
    'every criterion'
    """
    if value is None:
        return NONE_MEANS.get(option or "", "none")
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, range) and value.step == 1 and len(value):
        return f"{value.start}-{value.stop - 1}"
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value) or "none"
    return str(value)


_RATED_KINDS = (("human",), "the kinds of the rated measures (RatedKind), as rated_kinds'")
_RATERS_RATED_HUMAN = (True, "the raters rated the human-written system as they rated the others")
#: The parameters of a public analysis or kernel that carry a word of :data:`DEFAULTS` with
#: another default, each with its default and why (``tests/test_defaults.py`` fails on any other
#: difference). Keys are ``("analyses.<name>" or "kernels.<name>", parameter)``.
EXCEPTIONS: dict[tuple[str, str], tuple[object, str]] = {
    ("analyses.agreement", "kinds"): _RATED_KINDS,
    ("analyses.nominal_agreement", "kinds"): _RATED_KINDS,
    ("analyses.system_means", "kinds"): _RATED_KINDS,
    ("analyses.agreement", "include_human"): _RATERS_RATED_HUMAN,
    ("analyses.nominal_agreement", "include_human"): _RATERS_RATED_HUMAN,
    ("analyses.system_means", "include_human"): (
        True,
        "the paper's Tab. 4 gives the human-written system's mean rating beside the models'",
    ),
    ("analyses.criterion_values", "include_human"): (
        True,
        "the rating distributions (the paper's Fig. 9) show every rated system",
    ),
    ("analyses.measure_values", "include_human"): (
        True,
        "the values of every system a measure scores, as criterion_values",
    ),
    ("analyses.power", "method"): (
        "pearson",
        "the default test, item-level PERM-BOTH, runs its batched Pearson kernel (under a "
        "minute on HANNA; Kendall about 4 min); item-level Williams is conservative "
        "(docs/error-rates.md)",
    ),
    ("analyses.sample_inputs", "method"): (
        "uniform",
        "another word: how the inputs are drawn (SampleMethod), as mt-metrics-eval's sample_method",
    ),
    ("kernels.adjust_pvalues", "method"): (
        "bh",
        "another word: the correction (Correction), as scipy.stats.false_discovery_control's",
    ),
    ("kernels.correlation", "method"): (
        "pearson",
        "the kernel of one pair of samples keeps scipy.stats.pearsonr's defaults",
    ),
    ("kernels.correlation", "nan_policy"): (
        "propagate",
        "the kernel of one pair of samples keeps scipy.stats' default nan_policy",
    ),
    ("kernels.correlation", "alternative"): (
        "two-sided",
        "the kernel of one pair of samples keeps scipy.stats' default alternative",
    ),
    ("kernels.fisher_power", "alternative"): (
        "two-sided",
        "the power of the test of r = 0 keeps scipy.stats.pearsonr's default alternative",
    ),
    ("kernels.paired_t_power", "alternative"): (
        "two-sided",
        "statsmodels' TTestPower.power's default alternative, which it reproduces",
    ),
    ("kernels.correlation_power", "level"): (
        "system",
        "a test of r = 0 needs one sample of pairs: system means or pooled items (global)",
    ),
    ("kernels.intraclass_corr", "nan_policy"): (
        "raise",
        "pingouin.intraclass_corr's default: no rating is dropped unasked",
    ),
    ("kernels.permutation_test_pairs", "level"): (
        "system",
        "mt-metrics-eval's PermutationSigDiff (PERM-BOTH) compares system-level correlations",
    ),
    ("kernels.system_pair_power", "alternative"): (
        "two-sided",
        "a design's comparison of two systems asks whether either is better "
        "(scipy.stats.ttest_rel's default; Koehn's labels in both directions)",
    ),
    ("kernels.permutation_test_pairs", "alternative"): (
        "two-sided",
        "scipy.stats.permutation_test's default; the analyses pass the vocabulary's",
    ),
}


def check(name: str, value: object, choices: tuple[str, ...] | None = None) -> str:
    """Return ``value`` unless it is not one of ``choices`` (default ``WORDS[name]``).

    Raises
    ------
    ValueError
        ``"<name> must be one of 'a', 'b'; got <value>"``: the one message of a bad word.
    """
    choices = WORDS[name] if choices is None else choices
    if isinstance(value, str) and value in choices:
        return value
    raise refusal(name, value, choices)


def check_bool(name: str, value: object) -> bool:
    """Return ``value`` unless it is not True or False (a flag such as ``include_human``).

    Examples
    --------
    >>> check_bool("include_human", "yes")
    Traceback (most recent call last):
    ...
    ValueError: include_human must be True or False; got 'yes'
    """
    if isinstance(value, bool):
        return value
    raise ValueError(f"{name} must be True or False; got {value!r}")


def refusal(name: str, value: object, choices: tuple[str, ...]) -> ValueError:
    """The error of a bad word: ``"<name> must be one of 'a', 'b'; got <value>"``."""
    allowed = ", ".join(repr(c) for c in choices)
    return ValueError(f"{name} must be one of {allowed}; got {value!r}")


def code(name: str, value: object, choices: tuple[str, ...] | None = None) -> int:
    """The position of ``value`` in ``choices`` (default ``WORDS[name]``), after :func:`check`:
    the integer code compiled loops take."""
    choices = WORDS[name] if choices is None else choices
    return choices.index(check(name, value, choices))


def check_level(level: object, levels: tuple[str, ...] = WORDS["level"]) -> str:
    """The canonical name of ``level``: ``"item"`` for any of ``story``, ``summary``,
    ``segment``.

    Raises
    ------
    ValueError
        Listing the accepted words (``levels`` and, when it holds ``item``, its synonyms).

    Examples
    --------
    >>> check_level("global", WORDS["item_system"])
    Traceback (most recent call last):
    ...
    ValueError: level must be one of 'item', 'system', 'story', 'summary', 'segment'; got 'global'
    """
    synonyms = WORDS["item_synonym"]
    name = "item" if isinstance(level, str) and level in synonyms else level
    if isinstance(name, str) and name in levels:
        return name
    raise refusal("level", level, (*levels, *synonyms) if "item" in levels else levels)


def check_kinds(kinds: object, allowed: tuple[str, ...] = WORDS["kinds"]) -> tuple[str, ...]:
    """``kinds`` as a tuple; ValueError unless it is a non-empty sequence of ``allowed`` kinds
    (default: the automatic ones).

    Examples
    --------
    >>> check_kinds(["metric", "llm-judge"])
    ('metric', 'llm-judge')
    >>> check_kinds("metric")
    Traceback (most recent call last):
    ...
    ValueError: kinds must be a non-empty tuple of 'metric', 'llm-judge'; got 'metric'
    """
    if isinstance(kinds, str) or not kinds:
        allowed_text = ", ".join(repr(k) for k in allowed)
        raise ValueError(f"kinds must be a non-empty tuple of {allowed_text}; got {kinds!r}")
    return tuple(check("kinds", kind, allowed) for kind in kinds)  # type: ignore[union-attr]


def close_match(name: str, known: Iterable[str]) -> str | None:
    """The one of ``known`` that ``name`` most likely means: the same but for case, else the
    closest by :func:`difflib.get_close_matches` (case ignored, ratio at least 0.6); None.

    Examples
    --------
    >>> close_match("MQM", ["mqm", "wmt-z"]), close_match("sytem", ["item", "system"])
    ('mqm', 'system')
    >>> close_match("BLEU", ["Relevance"]) is None
    True
    """
    known = list(dict.fromkeys(known))
    folded = {k.casefold(): k for k in reversed(known)}
    if name.casefold() in folded:
        return folded[name.casefold()]
    found = difflib.get_close_matches(name.casefold(), list(folded), n=1)
    return folded[found[0]] if found else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """``" (did you mean 'X'?)"`` for ``name``'s :func:`close_match` in ``known``, else ``""``:
    the end of every message refusing a name (a measure, a criterion, a column).

    Examples
    --------
    >>> "unknown criterion 'MQM'" + did_you_mean("MQM", ["mqm", "wmt-z"])
    "unknown criterion 'MQM' (did you mean 'mqm'?)"
    """
    match = close_match(name, known) if isinstance(name, str) else None
    return f" (did you mean {match!r}?)" if match is not None else ""
