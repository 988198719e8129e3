"""The report's sections, mirroring the paper (Secs. 3-5, Figs. 1-9, 14-38, Tabs. 3-6).

Each builder takes a :class:`Context` (the loaded :class:`~hanna_stats.store.Study` and the
:class:`ReportSettings`) and returns a :class:`Section`
holding charts, tables and notes. A section whose inputs the study lacks (no human criteria,
no rater-level ratings, too few systems for a test) says so in a note instead of failing, so the
report also serves studies other than HANNA loaded through the generic tidy ingest.
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields

import numpy as np
import polars as pl
from hanna_stats.reports import charts
from hanna_stats.reports.html import Chart, Note, Section, Table

from hanna_stats import analyses as an
from hanna_stats.analyses import AnalysisCall
from hanna_stats.analyses.design import DEFAULT_TESTS, INPUT_MULTIPLES
from hanna_stats.kernels import check_confidence, check_count, check_seed
from hanna_stats.study import Study
from hanna_stats.vocabulary import (
    EXCEPTIONS,
    WORDS,
    Correction,
    ItemSystemWord,
    Kind,
    Method,
    Resample,
    TaskSetName,
    Ties,
    check,
    check_kinds,
    check_level,
    did_you_mean,
    shown,
)
from hanna_stats.vocabulary import HANNA_STUDY as HANNA

#: The levels and the coefficients of the report's correlation sections.
LEVELS, METHODS = WORDS["item_system"], WORDS["method"]
#: Below this many systems, system-level correlations and their intervals carry a note.
SMALL_N = 8


@dataclass(frozen=True)
class ReportSettings:
    """Every setting of the report's analyses (shown in each section).

    Attributes
    ----------
    seed : int
        Seed of every resampling (bootstrap CIs and the paired bootstrap of systems).
    resamples : int
        Bootstrap resamples B.
    alpha : float
        Significance level of the paired bootstrap labels and of the Williams matrices.
    confidence : float
        Level of all confidence intervals.
    ci_resample : str
        What the correlation CIs resample: ``"inputs"``, ``"systems"`` or ``"both"``.
    williams_level, williams_method : str
        Level and coefficient of the Williams matrices (paper: system, Pearson); the item level
        may be given as ``"story"``, ``"summary"`` or ``"segment"`` and is kept as ``"item"``.
    correction : str or None
        Multiple-testing correction of the Williams p-values (``"holm"``, ``"bh"``, ...).
    ties : str
        Tie rule of the Borda count: ``"average"``, ``"min"`` or ``"max"``.
    kinds : tuple of str
        Kinds of automatic measures analysed (``("metric",)`` = the paper's 72 metrics).
    analyses : tuple of str
        More analyses of :mod:`hanna_stats.analyses`, by name (``("spa",)``), each in its own
        section at the end: its table, run with its defaults and the settings above whose names
        are its parameters (seed, resamples, confidence, kinds, ...), unless the vocabulary
        lists its parameter's default as another (``EXCEPTIONS``: ``agreement``'s kinds are
        rated kinds).
    task_set : str
        The WMT task set of the metric ranking across language pairs (:func:`task_ranking`;
        a store of several WMT pairs): ``"wmt23"``, ``"wmt24"``, ``"wmt24-on-wmt23"`` or
        ``"wmt25"``.
    task_permutations : int
        Permutations of each task's significance test in that ranking (0: no test, the
        clusters are the order of the average, as ``task_ranking``'s default; a name of its
        own, so that the analyses of ``analyses`` keep their own ``permutations``).
    task_gold : str or None
        The human criterion every pair of the ranking is ranked against (None: each pair's
        standard gold in mt-metrics-eval, else the pair's only criterion).
    power_studies : int
        Simulated studies per design of the section "Is this study big enough?"
        (:func:`power`'s ``studies``; ranking: pairs of studies): the Monte Carlo standard
        error of a power is at most 0.5 / sqrt(power_studies).
    power_permutations : int
        Permutations of each simulated permutation test there (:func:`power`'s
        ``permutations``; names of their own, so that the analyses of ``analyses`` keep their
        own ``studies``, ``permutations`` and ``resamples``).
    power_resamples : int
        Resamples of each simulated paired bootstrap there (:func:`power`'s ``resamples``).
    """

    seed: int = 0
    resamples: int = 1000
    alpha: float = 0.05
    confidence: float = 0.95
    ci_resample: Resample = "inputs"
    williams_level: ItemSystemWord = "system"
    williams_method: Method = "pearson"
    correction: Correction | None = None
    ties: Ties = "average"
    kinds: tuple[Kind, ...] = ("metric",)
    analyses: tuple[str, ...] = ()
    task_set: TaskSetName = "wmt24"
    task_permutations: int = 0
    task_gold: str | None = None
    power_studies: int = 200
    power_permutations: int = 200
    power_resamples: int = 200

    def __post_init__(self) -> None:
        """Check every setting before any work starts (a bad seed used to fail after the
        whole bootstrap had run); ValueError naming the setting and what it accepts."""
        if self.seed is None or isinstance(self.seed, np.random.Generator):
            raise ValueError(f"seed must be an integer in [0, 2**63); got {self.seed!r}")
        check_seed(self.seed)
        check_count("resamples", self.resamples)
        if not 0.0 < self.alpha < 0.5:
            raise ValueError(f"alpha must lie in (0, 0.5); got {self.alpha!r}")
        check_confidence(self.confidence)
        object.__setattr__(self, "williams_level", check_level(self.williams_level, LEVELS))
        for name, word in (
            ("ci_resample", "resample"),
            ("williams_method", "method"),
            ("ties", "ties"),
        ):
            check(name, getattr(self, name), WORDS[word])
        if self.correction is not None:
            check("correction", self.correction)
        check_kinds(self.kinds)
        object.__setattr__(self, "analyses", check_analyses(self.analyses))
        check("task_set", self.task_set)
        permutations = self.task_permutations
        if isinstance(permutations, bool) or not isinstance(permutations, int) or permutations < 0:
            raise ValueError(f"task_permutations must be an integer >= 0; got {permutations!r}")
        if self.task_gold is not None and not isinstance(self.task_gold, str):
            raise ValueError(
                f"task_gold must be a criterion's name or None; got {self.task_gold!r}"
            )
        for name in ("power_studies", "power_permutations", "power_resamples"):
            check_count(name, getattr(self, name))


def check_analyses(names: object) -> tuple[str, ...]:
    """``names`` as a tuple, each once, unless one is not an analysis the report can run with
    its defaults (:func:`why_not_runnable`): ValueError naming the setting ``analyses`` and the
    close matches.

    Examples
    --------
    >>> check_analyses(["spa", "spa"])
    ('spa',)
    >>> check_analyses(("sap",))
    Traceback (most recent call last):
    ...
    ValueError: analyses: unknown analysis 'sap' (did you mean 'spa'?)
    """
    if isinstance(names, str) or not isinstance(names, tuple | list):
        raise ValueError(f"analyses must be a tuple of analysis names; got {names!r}")
    for name in names:
        why = why_not_runnable(name)
        if why == "unknown":
            runnable = [n for n in an.__all__ if not why_not_runnable(n)]
            raise ValueError(f"analyses: unknown analysis {name!r}{did_you_mean(name, runnable)}")
        if why:
            raise ValueError(
                f"analyses: {name} {why}; the report runs each analysis named with its defaults"
            )
    return tuple(dict.fromkeys(names))


def why_not_runnable(name: str) -> str:
    """Why the report cannot run the public analysis ``name`` on a study with its defaults
    (``"unknown"`` when :mod:`hanna_stats.analyses` has no such name), or ``""`` when it can."""
    if name not in an.__all__:
        return "unknown"
    function = getattr(an, name)
    if not inspect.isfunction(function):
        return "is not an analysis of a study"
    parameters = list(inspect.signature(function).parameters.values())
    if not parameters or parameters[0].annotation not in ("Study", Study):
        return "is not an analysis of a study"
    needed = [p.name for p in parameters[1:] if p.default is inspect.Parameter.empty]
    return f"needs {', '.join(needed)} (no default)" if needed else ""


@dataclass(frozen=True)
class Context:
    """The study, the settings, and the shape of the study as far as the sections need it."""

    study: Study
    settings: ReportSettings
    n_systems: int  # systems compared (human-written ones excluded)
    n_rated_systems: int  # of those, the ones with ratings of the human criteria
    criteria: tuple[str, ...]
    metrics: tuple[str, ...]
    families: dict[str, str]  # metric -> family ('' when unknown)
    has_ratings: bool

    @classmethod
    def of(cls, study: Study, settings: ReportSettings) -> Context:
        """Read the shape of the study."""
        catalogue = study.catalogue.filter(
            (pl.col("kind") == "human") | pl.col("kind").is_in(list(settings.kinds))
        )
        metrics = catalogue.filter(pl.col("kind") != "human")
        human = np.asarray(study.kinds) == "human"
        compared = ~study.is_human
        rated = ~np.isnan(study.values[human][:, :, compared]).all(axis=(0, 1))
        return cls(
            study=study,
            settings=settings,
            n_systems=int(compared.sum()),
            n_rated_systems=int(rated.sum()),
            criteria=study.criteria,
            metrics=tuple(metrics["measure"]),
            families=dict(zip(metrics["measure"], metrics["family"], strict=True)),
            has_ratings=study.ratings.height > 0,
        )

    @property
    def is_hanna(self) -> bool:
        """Whether the study is HANNA (the paper's figure and table numbers apply)."""
        return _is_hanna(self.study)

    def paper(self, reference: str) -> str:
        """`` (reference)`` to a figure or table of the paper when the study is HANNA, else
        ``""``: another study's charts are not the paper's figures."""
        return f" ({reference})" if self.is_hanna else ""

    def level_name(self, level: str) -> str:
        """``level`` as the report names it: the item level by the study's word (``"story"``)."""
        return self.study.item_word if level == "item" else level

    def level_names(self, levels: tuple[str, ...]) -> tuple[str, ...]:
        """:meth:`level_name` of each of ``levels``."""
        return tuple(self.level_name(level) for level in levels)

    def item_word_plural(self) -> str:
        """The study's word for its items, in the plural (``"stories"``)."""
        word = self.study.item_word
        consonant_y = word.endswith("y") and word[-2:-1] not in "aeiou"
        return f"{word[:-1]}ies" if consonant_y else f"{word}s"

    def shown(self, frame: pl.DataFrame) -> pl.DataFrame:
        """``frame`` as the report shows it: the item level by the study's word in the ``level``
        column (the analyses' outputs say ``item``) and in ``unit`` (system means)."""
        word = self.study.item_word
        return frame.with_columns(
            pl.col(c).str.replace("item", word, literal=True)  # units: "item", "item+rating"
            for c in ("level", "unit")
            if frame.schema.get(c) == pl.String
        )

    def missing(self, *, criteria: bool = False, metrics: bool = False, systems: int = 0) -> str:
        """Why a section cannot be computed, or ``""`` when it can.

        ``systems``: the number of systems needed (rated ones when ``criteria``)."""
        reasons = []
        if criteria and not self.criteria:
            reasons.append("no human criteria (measures with rater-level ratings or of kind human)")
        if metrics and not self.metrics:
            reasons.append(f"no automatic measures of kinds {', '.join(self.settings.kinds)}")
        have = self.n_rated_systems if criteria else self.n_systems
        if have < systems:
            rated = "rated " if criteria else ""
            reasons.append(f"{have} {rated}systems (at least {systems} needed)")
        return "; ".join(reasons)


#: Parameters that choose how an analysis runs, not what it computes: no settings line names them.
HOW = frozenset({"executor"})
#: What a ``None`` means for one analysis' parameter where it differs from the vocabulary's
#: meaning of the name (:data:`~hanna_stats.vocabulary.NONE_MEANS`), by (analysis, parameter).
NONE_MEANS_OF = {
    ("task_ranking", "criterion"): "each pair's standard gold, else its only criterion",
    ("power", "pair"): "the closest pair at the top",
    ("power", "effect"): "the study's own observed difference",
    ("power", "inputs"): "0.25, 0.5, 1, 2, 4 times the study's (ranking: times half of them)",
    ("power", "design_systems"): "the study's",
    ("power", "ratings"): "the item scores as they are",
    ("power", "target_power"): "none, the curves only",
}


def shown_calls(ctx: Context, calls: Iterable[AnalysisCall]) -> dict[str, dict[str, str]]:
    """The settings of the analyses that ``calls`` record
    (:func:`~hanna_stats.analyses.analysis_calls`), as a section's settings line shows them.

    Per analysis, in the order first called, each of its options as run, as the command line
    shows them (:func:`~hanna_stats.vocabulary.shown`: ``on`` or ``off``, a ``None`` by what it
    means, a range of integers as ``4-10``), the item level by the study's word, Kendall's
    variant as ``tau-b``; an option whose value varied across the calls lists its
    values in order, joined by `` / `` (``level``: ``story / system``). ``subsets`` is left out
    for a study of one subset, and so are the parameters of :data:`HOW`.
    """
    shown: dict[str, dict[str, list[str]]] = {}
    for call in calls:
        options = shown.setdefault(call.name, {})
        for option, value in call.settings.items():
            if option in HOW or (option == "subsets" and len(ctx.study.subsets) < 2):
                continue
            values = options.setdefault(option, [])
            own = NONE_MEANS_OF.get((call.name, option)) if value is None else None
            word = own or _in_words(ctx, option, value)
            if word not in values:
                values.append(word)
    return {
        name: {option: " / ".join(values) for option, values in options.items()}
        for name, options in shown.items()
    }


def _in_words(ctx: Context, option: str, value: object) -> str:
    """One value of an analysis' ``option``, in words (:func:`shown_calls`)."""
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {_in_words(ctx, option, v)}" for k, v in value.items())
    if option in ("level", "levels") and value is not None:
        levels = (value,) if isinstance(value, str) else value
        return ",".join(ctx.level_name(check_level(level)) for level in levels)
    if option == "variant":
        return f"tau-{value}"
    return shown(value, option)


def _correlation_heatmap(frame: pl.DataFrame, **options) -> Chart:
    """Signed correlations of ``measure`` (rows) with ``against`` (columns) on a scale centred on
    0, the coefficient picked in a drop-down (``options``: name, title, choices, ...)."""
    return Chart.of(
        charts.metric_heatmap,
        frame,
        x="against",
        y="measure",
        color="statistic",
        scale="signed",
        spread="method",
        **options,
    )


def _human_written(ctx: Context) -> str:
    """The study's human-written systems, which the correlation sections leave out."""
    names = [s for s, h in zip(ctx.study.systems, ctx.study.is_human, strict=True) if h]
    return f"excluded ({', '.join(names)})" if names else "none in the study"


def _is_hanna(study: Study) -> bool:
    return study.name == HANNA


def _absent(section: Section, why: str) -> Section:
    """The section collapsed to one line saying why it is not computed."""
    section.absent = f"Not computed for this study: it has {why}."
    return section


#: The paper's symbols of metric families (Chhun et al. 2022, Tab. 2), in its order.
SYMBOLS = {
    "Ξ": "reference-based",
    "¤": "reference-free",
    "§": "string",
    "ε": "embedding",
    "Δ": "model",
}


def dataset(ctx: Context) -> Section:
    """Dataset overview: counts (and what the ingests read against what the store holds),
    measures by family, with the paper's symbols where the study's families have them, and
    data sources."""
    # What the store holds, not per subset.
    families = an.measure_families(ctx.study, subsets="pooled")
    used = set("".join(families["symbol"]))
    symbols = ", ".join(f"{s} {meaning}" for s, meaning in SYMBOLS.items() if s in used)
    section = Section(
        "dataset",
        "Dataset",
        "Counts of what the store holds, the measures grouped by family"
        + (f" (the paper's symbols: {symbols})" if symbols else "")
        + ", and the files they were read from, with their SHA-256.",
    )
    counts = an.study_counts(ctx.study, subsets="pooled")
    sources = an.data_sources(ctx.study, subsets="pooled")
    section.blocks += [
        Table("dataset_counts", counts, "What the store holds"),
        _values_note(counts, sources),
        Table("measure_families", families, "Measures by family"),
        Table("data_sources", sources, "Ingested files"),
    ]
    return section


#: The ingest formats whose subsets are WMT language pairs, on which the task sets run.
WMT_FORMATS = frozenset({"wmt", "wmt25"})
#: What each task set averages (:func:`~hanna_stats.analyses.wmt_task_set`), in words.
TASK_SETS = {
    "wmt23": "pairwise accuracy of the system scores pooled over all pairs (weighted by the "
    "number of pairs), then per pair system-level Pearson, segment-level Pearson and "
    "segment-level acc_eq (weight 1 each)",
    "wmt24": "per pair system-level soft pairwise accuracy (SPA) and segment-level acc_eq, "
    "equal weights",
}
TASK_SETS["wmt24-on-wmt23"] = TASK_SETS["wmt25"] = TASK_SETS["wmt24"]


def task_set_ranking(ctx: Context) -> Section | None:
    """The ranking of metrics by a WMT task set across the store's language pairs (the WMT
    metrics tasks' table since 2023), built once on a store of several subsets; None (no
    section) unless an ingest of a WMT format gave the subsets, which are then language pairs
    (:data:`WMT_FORMATS`)."""
    s = ctx.settings
    if not WMT_FORMATS & set(ctx.study.sources["format"]):
        return None
    tests = s.task_permutations > 0
    section = Section(
        "task-ranking",
        f"Metric ranking across language pairs ({s.task_set} task set)",
        f"The WMT metrics tasks rank metrics since 2023 by a task set (mt-metrics-eval's "
        f"tasks.py): tasks, each a language pair, a level and a statistic, weighted; "
        f"{s.task_set}: {TASK_SETS[s.task_set]}. One row per metric: average is the weighted "
        "average of its statistics, each rescaled to [0, 1] by its range (Pearson from [-1, 1]); "
        "average_rank the weighted average of its ranks in the tasks; then each task's statistic "
        "and rank. cluster groups metrics whose averages are not significantly different "
        "(1 the best): going down the order, a metric starts a new cluster when a metric of the "
        f"current one is significantly better at alpha 0.05, the test using each task's own "
        "permutation draws; pvalue_next is the p-value of a metric against the next one. "
        + (
            f"Here each task ran {s.task_permutations:,} permutations."
            if tests
            else "Here permutations is 0 (no test, as mt-metrics-eval's default k=0): each "
            "metric is its own cluster, the order of the average, and no difference between "
            "two metrics is shown to be significant; --task-permutations K tests them (slow: "
            "minutes per pair for 100 permutations of 30 metrics)."
        )
        + " Metrics not scored in every task are not ranked.",
    )
    why = ctx.missing(criteria=True, metrics=True)
    if why:
        return _absent(section, why)
    try:
        frame = an.task_ranking(
            ctx.study,
            task_set=s.task_set,
            permutations=s.task_permutations,
            seed=s.seed,
            criterion=s.task_gold,
        )
    except ValueError as err:
        hint = " (--task-gold names one)" if "gold" in str(err) and s.task_gold is None else ""
        section.absent = f"Not computed for this study: {str(err).rstrip('.')}{hint}."
        return section
    n_tasks = sum(column.endswith(" statistic") for column in frame.columns)
    section.settings |= {"tasks": n_tasks, "language pairs": ", ".join(ctx.study.subsets)}
    section.blocks += [
        Chart.of(
            charts.cluster_bars,
            frame.select("measure", "cluster", "average", "average_rank"),
            name="task_ranking",
            x="average",
            y="measure",
            title=f"Weighted average of the {n_tasks} task statistics per metric ({s.task_set})",
            subtitle=[
                "Bars alternate dark and light from one significance cluster to the next"
                if tests
                else "No test (permutations 0): each metric is its own cluster"
            ],
        ),
        Table(
            "task_ranking",
            frame,
            f"Ranking of metrics by the {s.task_set} task set: average, clusters and each task",
        ),
    ]
    unranked = sorted(set(ctx.metrics) - set(frame["measure"]))
    if unranked:
        section.blocks.append(
            Note(
                f"Not ranked ({len(unranked)}: not scored in every task, or not of kind "
                f"metric): {', '.join(unranked)}."
            )
        )
    return section


def _values_note(counts: pl.DataFrame, sources: pl.DataFrame) -> Note:
    """What the ingests read (their ``n_values``) against what the store holds, by table."""
    n = dict(zip(counts["what"], counts["n"], strict=True))
    item, ratings = n["item-level scores"], n["rater-level ratings"]
    system = n.get("system-level scores given", 0)
    domain = n.get("domain-level scores given", 0)
    held = item + ratings + system + domain
    read = int(sources["n_values"].sum())
    text = (
        f"The ingests read {read:,} values (n_values of the ingested files, missing ones "
        f"included); the store holds {held:,}: {item:,} item-level scores, {ratings:,} "
        f"rater-level ratings, {system:,} system-level and {domain:,} domain-level scores given."
    )
    if read > held:
        text += (
            f" {read - held:,} of the values read were in the store already when their file was "
            "ingested (read by an earlier file, or replaced) and are held once."
        )
    if system or domain:
        text += (
            " The system- and domain-level scores given (e.g. WMT's .sys.score and "
            ".domain.score files) are kept aside from the items: the report's analyses use the "
            "item-level scores and ratings, and take a system's value at system level as the "
            "mean of its items."
        )
    return Note(text)


def human_criteria(ctx: Context) -> Section:
    """Human criteria: system means (Tab. 4), distributions (Fig. 9), inter-criteria
    correlations (Figs. 1-2, 10-13) and inter-rater agreement (Tab. 3)."""
    s = ctx.settings
    section = Section(
        "criteria",
        "Human criteria",
        "Dots are each system's mean rating with its Student-t confidence interval; the strips "
        "show how "
        f"the {ctx.study.item_word}-level ratings spread (a line from the 5th to the 95th "
        "percentile, a box from the 25th to the 75th, a tick at the median, a dot at the mean; "
        "each criterion on its own scale); the heatmap gives the correlation between two "
        "criteria (pick level and coefficient); agreement values near 1 mean raters agree.",
    )
    why = ctx.missing(criteria=True)
    if why:
        return _absent(section, why)
    means = ctx.shown(an.system_means(ctx.study, confidence=s.confidence))
    section.blocks += [
        Table(
            "system_means", means, "System means with confidence intervals" + ctx.paper("Tab. 4")
        ),
        Chart.of(
            charts.dot_interval, means, name="means", title="System means" + ctx.paper("Tab. 4")
        ),
        Chart.of(
            charts.distributions,
            an.criterion_values(ctx.study),
            name="distributions",
            title=f"Distributions of {ctx.study.item_word}-level ratings per system"
            + ctx.paper("Fig. 9"),
        ),
    ]
    if ctx.n_systems >= 3:
        inter = ctx.shown(
            pl.concat(
                [
                    an.correlate(ctx.study, level=lv, method=m, against="inter-criteria")
                    for lv in LEVELS
                    for m in METHODS
                ]
            )
        )
        section.blocks += [
            _correlation_heatmap(
                inter,
                name="inter",
                title="Correlations between criteria" + ctx.paper("Figs. 1-2, 10-13"),
                choices={"method": METHODS, "level": ctx.level_names(LEVELS)},
                tooltip=["measure", "against", "statistic", "n_groups"],
            ),
            Table(
                "inter_criteria",
                inter.pivot(
                    on="against",
                    index=["level", "method", "measure"],
                    values="statistic",
                    sort_columns=False,
                ),
                "Correlations between criteria: one row per level, coefficient and criterion",
            ),
        ]
    else:
        section.blocks.append(Note("Inter-criteria correlations need at least 3 systems."))
    if ctx.has_ratings:
        agree = an.agreement(ctx.study, confidence=s.confidence)
        section.blocks.append(
            Table("agreement", agree, "Inter-rater agreement" + ctx.paper("Tab. 3"))
        )
        if (agree["rater_source"] == "slot").any():
            section.blocks.append(
                Note(
                    "Raters here are judge slots (HANNA: the 'Human 1..3' columns of "
                    "hanna_metric_scores_llm.csv), positions rather than identified workers: "
                    "ICC1/ICC1k and Krippendorff's alpha do not depend on that, ICC2/3 do. The "
                    "paper's Tab. 3 used worker IDs from the raw annotation file, which is not "
                    "public; its values are not reproduced by the slots."
                )
            )
    else:
        section.blocks.append(
            Note(
                "Agreement (ICC, Krippendorff's alpha) needs rater-level ratings, which this "
                "store does not hold: ingest "
                + (
                    "hanna_metric_scores_llm.csv (judge slots) or the raw annotation file, or "
                    if ctx.is_hanna
                    else ""
                )
                + "a tidy file with a rater column."
            )
        )
    return section


def metrics_vs_criteria(ctx: Context) -> Section:
    """Metric-criterion correlations at item and system level (Figs. 3-4, 14-19; Tab. 5)."""
    s = ctx.settings
    section = Section(
        "metrics-criteria",
        "Metrics vs human criteria",
        "Each cell is |correlation| between a metric (row) and a criterion (column), brighter "
        "is stronger; hover for the signed value, the number of inputs it averages (n_groups; "
        "with nan_policy omit, the inputs where it is undefined are skipped and counted in "
        "n_skipped) and the bootstrap CI. "
        f"{ctx.study.item_word.capitalize()} level: correlation across systems "
        "within each input, averaged over inputs; system level: correlation of system means.",
        {"human-written systems": _human_written(ctx)},
    )
    why = ctx.missing(criteria=True, metrics=True, systems=3)
    if why:
        return _absent(section, why)
    frames = []
    for level in LEVELS:
        for method in METHODS:
            corr = an.correlate(ctx.study, level=level, method=method, kinds=s.kinds)
            ci = an.correlation_ci(
                ctx.study,
                level=level,
                method=method,
                resample=s.ci_resample,
                resamples=s.resamples,
                confidence=s.confidence,
                seed=s.seed,
                kinds=s.kinds,
            ).select("measure", "against", "ci_low", "ci_high")
            frames.append(corr.join(ci, on=["measure", "against"], how="left"))
    corr = ctx.shown(pl.concat(frames)).with_columns(
        pl.col("statistic").abs().alias("abs_statistic")
    )
    for level in LEVELS:
        section.blocks.append(
            Chart.of(
                charts.metric_heatmap,
                corr.filter(pl.col("level") == ctx.level_name(level)),
                name=f"corr_{level}",
                x="against",
                y="measure",
                color="abs_statistic",
                title=f"{ctx.level_name(level).capitalize()}-level |correlation| with human "
                "criteria "
                + ctx.paper("Figs. 3, 14, 16, 18" if level == "item" else "Figs. 4, 15, 17, 19"),
                choices={"method": METHODS},
                spread="method",
                tooltip=[
                    "measure",
                    "against",
                    "method",
                    "statistic",
                    "n_groups",
                    "n_skipped",
                    "ci_low",
                    "ci_high",
                ],
            )
        )
    if ctx.n_systems < SMALL_N:
        section.blocks.append(
            Note(
                f"System level rests on {ctx.n_systems} systems: a correlation of so few points "
                "can change sign with one system, and the bootstrap interval (resampling "
                f"{s.ci_resample}) does not show which systems happened to be compared. Read the "
                "system-level values and intervals as indicative only."
            )
        )
    top = (
        corr.filter(pl.col("method") == "pearson")
        .sort(
            ["level", "against", "abs_statistic", "measure"], descending=[False, False, True, False]
        )
        .group_by(["level", "against"], maintain_order=True)
        .head(3)
        .select("level", "against", "measure", "statistic", "abs_statistic", "ci_low", "ci_high")
        .rename({"against": "criterion"})
    )
    section.blocks += [
        Table(
            "top_metrics",
            top,
            "Top 3 metrics per criterion and level by |Pearson r|" + ctx.paper("Tab. 5"),
        ),
        Table("correlations", corr, "All metric-criterion correlations", max_rows=0),
    ]
    return section


def metric_metric(ctx: Context) -> Section:
    """Correlations between metrics (Figs. 5-6, 20-25) with a family filter where the metrics
    belong to several families."""
    families = ctx.families
    present = sorted({f for f in families.values() if f})
    section = Section(
        "metrics-metrics",
        "Metrics vs metrics",
        "Signed correlation between two metrics (red positive, blue negative); blocks of red "
        f"are metrics that rank {ctx.item_word_plural()} alike. Pick the level"
        + (", the coefficient and a family." if len(present) > 1 else " and the coefficient."),
        {"human-written systems": _human_written(ctx)},
    )
    why = ctx.missing(metrics=True, systems=3)
    if why:
        return _absent(section, why)
    corr = ctx.shown(
        pl.concat(
            [
                an.correlate(
                    ctx.study, level=lv, method=m, against="metrics", kinds=ctx.settings.kinds
                )
                for lv in LEVELS
                for m in METHODS
            ]
        )
    ).select(
        "measure",
        "against",
        "level",
        "method",
        "statistic",
        pl.col("measure").replace_strict(families, default="").alias("family"),
        pl.col("against").replace_strict(families, default="").alias("family_against"),
    )
    choices: dict[str, tuple[str, ...]] = {"method": METHODS, "level": ctx.level_names(LEVELS)}
    if len(present) > 1:
        # "all", or one family: the pairs whose two metrics both belong to it.
        corr = corr.with_columns(
            pl.when(pl.col("family") == pl.col("family_against"))
            .then(pl.col("family"))
            .otherwise(pl.lit("mixed"))
            .alias("families")
        )
        choices["families"] = (charts.ALL, *present)
    section.blocks += [
        _correlation_heatmap(
            corr,
            name="metric_metric",
            title="Correlations between metrics" + ctx.paper("Figs. 5-6, 20-25"),
            choices=choices,
            tooltip=["measure", "against", "statistic"],
            sort_x=ctx.metrics,
            sort_y=ctx.metrics,
        ),
        Table("metric_correlations", corr, "All metric-metric correlations", max_rows=0),
    ]
    return section


def pairwise_systems(ctx: Context) -> Section:
    """Paired bootstrap comparison of systems scored by weighted F1 (Fig. 7, 26)."""
    s = ctx.settings
    section = Section(
        "pairwise",
        "Pairwise system comparison",
        "For every pair of systems a paired bootstrap over inputs labels which system is better "
        "(or neither) by a criterion and by a metric; each cell is the weighted F1 between the "
        "two label sets: 1 means the metric decides every pair as the humans do.",
        {"win": "strictly greater mean in at least 1 - alpha of the resamples"},
    )
    why = ctx.missing(criteria=True, metrics=True, systems=2)
    if why:
        return _absent(section, why)
    f1 = an.bootstrap_pairs(
        ctx.study, resamples=s.resamples, alpha=s.alpha, seed=s.seed, kinds=s.kinds
    )
    section.blocks += [
        Chart.of(
            charts.metric_heatmap,
            f1,
            name="pairwise",
            x="criterion",
            y="measure",
            color="f1",
            title="Weighted F1 of paired-bootstrap labels" + ctx.paper("Figs. 7, 26"),
            choices={},
            tooltip=["measure", "criterion", "f1"],
        ),
        Table("pairwise_f1", f1, "Weighted F1 per metric and criterion", max_rows=0),
    ]
    return section


def top_k(ctx: Context) -> Section:
    """Correlations on the k best systems (Fig. 8)."""
    section = Section(
        "topk",
        "Top-k systems",
        "|Pearson r| at system level on the k best systems by each criterion, k decreasing to "
        "the right: grey lines are metrics, the dashed line their median, the red line the "
        "metric picked in the drop-down.",
    )
    why = ctx.missing(criteria=True, metrics=True, systems=5)
    if why:
        return _absent(section, why)
    frame = an.topk(
        ctx.study,
        ks=range(4, ctx.n_rated_systems + 1),
        level="system",
        method="pearson",
        kinds=ctx.settings.kinds,
    ).with_columns(pl.col("statistic").abs().alias("abs_statistic"))
    section.blocks += [
        Chart.of(
            charts.topk_lines,
            frame.select("criterion", "k", "measure", "abs_statistic"),
            name="topk",
            title="System-level |r| on the top-k systems" + ctx.paper("Fig. 8"),
        ),
        Table(
            "topk",
            frame.select("criterion", "k", "systems", "measure", "statistic", "abs_statistic"),
            "Correlations on the top-k systems",
            max_rows=0,
        ),
    ]
    return section


def williams(ctx: Context) -> Section:
    """Williams tests between every pair of metrics, per criterion (Figs. 27-38)."""
    s = ctx.settings
    adjusted = f"{s.correction}-adjusted p" if s.correction else "p (no correction)"
    section = Section(
        "williams",
        "Williams significance tests",
        "Cell (row a, column b) is the one-sided p-value of 'metric a correlates more strongly "
        "with the criterion than metric b'. The colour runs from dark purple (p = 0) to yellow "
        f"(p = 1); a white star marks a cell significant at alpha = {s.alpha} ({adjusted} <= "
        "alpha). Pick the criterion in the drop-down.",
        {
            "n": _williams_n_words(ctx),
            "alpha": s.alpha,
            "significant": f"{'adjusted ' if s.correction else ''}p <= alpha",
        },
    )
    why = ctx.missing(criteria=True, metrics=True, systems=4)
    if why:
        return _absent(section, why)
    tests = an.williams_all(
        ctx.study,
        levels=(s.williams_level,),
        methods=(s.williams_method,),
        alternative="greater",
        correction=s.correction,
        kinds=s.kinds,
    )
    # Significance, colour and flags follow the corrected p-values when a correction is asked.
    shown = "pvalue_adjusted" if s.correction else "pvalue"
    tests = ctx.shown(tests).with_columns((pl.col(shown) <= s.alpha).alias("significant"))
    if tests.height:
        section.settings["n"] = f"{tests['n'][0]:,} {section.settings['n']}"
    tooltip = ["measure_a", "measure_b", "r_a", "r_b", "statistic", "pvalue"]
    section.blocks += [
        Chart.of(
            charts.metric_heatmap,
            tests,
            name="williams",
            x="measure_b",
            y="measure_a",
            color=shown,
            title="Williams test p-values"
            + (f" ({s.correction}-adjusted)" if s.correction else "")
            + ", H1: |r_a| > |r_b|"
            + ctx.paper("Figs. 27-38"),
            choices={"criterion": ctx.criteria},
            tooltip=[*tooltip, "pvalue_adjusted"] if s.correction else tooltip,
            spread="criterion",
            sort_x=ctx.metrics,
            sort_y=ctx.metrics,
            scale="pvalue",
            marked_at=s.alpha,
        ),
        Note(
            f"Significant at alpha = {s.alpha} ({adjusted}): "
            + "; ".join(
                f"{criterion} {n:,} of {total:,} ordered pairs"
                for criterion, n, total in tests.group_by("criterion", maintain_order=True)
                .agg(pl.col("significant").sum(), pl.len())
                .iter_rows()
            )
            + "."
        ),
        _williams_undefined(tests, shown),
        Table("williams", tests, "Williams tests", max_rows=0),
    ]
    return section


def _williams_n_words(ctx: Context) -> str:
    """What the sample size n of the report's Williams tests counts, in the study's words."""
    level = ctx.settings.williams_level
    if level == "system":
        return "systems compared"
    if ctx.is_hanna:
        return f"inputs ({ctx.level_name(level)} level, the paper's convention)"
    return f"inputs, those the {ctx.level_name(level)}-level correlations average over"


def _williams_undefined(tests: pl.DataFrame, shown: str) -> Note:
    """Which cells of the Williams matrices are white, and why (see ``williams_test``)."""
    undefined = (
        tests.group_by("criterion", maintain_order=True)
        .agg(pl.col(shown).is_nan().sum(), pl.len())
        .filter(pl.col(shown) > 0)
    )
    counts = "; ".join(
        f"{criterion} {n:,} of {total:,} ordered pairs"
        for criterion, n, total in undefined.iter_rows()
    )
    return Note(
        "White cells have no p-value. The diagonal (a metric against itself) is not tested"
        + (
            f"; the test is undefined for {counts}. Williams' test is undefined where one of its "
            "three correlations (criterion with a, criterion with b, a with b) is missing (a "
            "metric constant, or without values, where the correlation is taken), where a and b "
            "correlate perfectly (|r_ab| = 1), or where the three do not form a valid "
            "correlation matrix, which leaves the test's variance term not positive: this "
            "happens when they are computed on different sets of systems or inputs (a metric "
            "or criterion missing for some) or averaged over inputs."
            if counts
            else "; every other pair has a p-value."
        )
    )


def borda(ctx: Context) -> Section:
    """Borda aggregation of the metric rankings (Tab. 6)."""
    s = ctx.settings
    section = Section(
        "borda",
        "Aggregated rankings of metrics",
        f"Each metric's Borda count sums its rank (0 = weakest) over the {len(ctx.criteria)} "
        f"criteria x {len(METHODS)} coefficients of |correlation|; higher is better. Mean rank "
        "and mean |r| aggregate the same table differently and are shown beside it.",
        {"columns": "criteria x (pearson, spearman, kendall)"},
    )
    why = ctx.missing(criteria=True, metrics=True, systems=3)
    if why:
        return _absent(section, why)
    frames = []
    for level in LEVELS:
        try:  # a metric or criterion constant at a level leaves its ranks undefined
            frames.append(an.borda(ctx.study, level=level, ties=s.ties, kinds=s.kinds))
        except ValueError as err:
            section.blocks.append(Note(f"Not computed at {ctx.level_name(level)} level: {err}."))
    if not frames:
        return section
    frame = pl.concat(frames)
    for level in frame["level"].unique(maintain_order=True):
        section.blocks.append(
            Chart.of(
                charts.bar_scores,
                ctx.shown(frame.filter(pl.col("level") == level).head(15)),
                name=f"borda_{level}",
                x="borda",
                y="measure",
                title=f"Top 15 metrics by Borda count, {ctx.level_name(level)} level"
                + ctx.paper("Tab. 6"),
            )
        )
    section.blocks.append(
        Table("borda", ctx.shown(frame), "Borda counts" + ctx.paper("Tab. 6"), max_rows=20)
    )
    return section


#: Uninformative metrics simulated per metric and criterion for the chance baseline of the
#: tie-calibration section (its standard error is in the table).
CHANCE_DRAWS = 100


def _median_chance(frame: pl.DataFrame) -> float | None:
    """The median of the ``chance`` column (None when it has no value)."""
    median = frame["chance"].median()
    return None if median is None else float(median)


def tie_calibration(ctx: Context) -> Section:
    """Pairwise accuracy with tie calibration (Deutsch, Foster and Freitag 2023), as the WMT
    metrics tasks report it."""
    section = Section(
        "ties",
        "Pairwise accuracy with tie calibration",
        "acc_eq is the share of pairs of systems (within each input at the "
        f"{ctx.level_name('item')} level) that a metric orders as the human criterion does, ties "
        "included: a metric ties a pair when its "
        "scores differ by at most epsilon, the epsilon that maximises its accuracy (Deutsch, "
        'Foster and Freitag 2023, "Ties Matter"; the WMT metrics tasks\' statistic). Bars: mean '
        "over the criteria. Chance: the acc_eq of a metric with no information about the "
        "criterion, the metric's own scores permuted within each input (at system level, "
        "across the systems) and tie-calibrated "
        f"afresh (mean of {CHANCE_DRAWS} permutations, chance_se its Monte Carlo standard "
        "error).",
    )
    why = ctx.missing(criteria=True, metrics=True, systems=3)
    if why:
        return _absent(section, why)
    frame = pl.concat(
        [
            an.calibrated_chance(
                ctx.study,
                level=level,
                kinds=ctx.settings.kinds,
                draws=CHANCE_DRAWS,
                seed=ctx.settings.seed,
            )
            for level in LEVELS
        ]
    )
    means = frame.group_by("level", "measure", maintain_order=True).agg(
        pl.col("statistic").mean().alias("mean_acc_eq"), pl.col("chance").mean().alias("chance")
    )
    for level in LEVELS:
        top = means.filter(pl.col("level") == level).sort(
            "mean_acc_eq", "measure", descending=[True, False]
        )
        section.blocks.append(
            Chart.of(
                charts.bar_scores,
                ctx.shown(top.head(15)),
                name=f"acc_eq_{level}",
                x="mean_acc_eq",
                y="measure",
                title=f"Top 15 metrics by tie-calibrated acc_eq, {ctx.level_name(level)} level",
                start=None,
                reference=_median_chance(top.head(15)),
                subtitle=[
                    "Dashed line: chance, the median over these metrics of the mean acc_eq of an",
                    "uninformative metric (each metric's own is in its tooltip)",
                ],
            )
        )
    section.blocks.append(
        Table(
            "tie_calibration",
            ctx.shown(
                frame.select(
                    "measure", "against", "level", "statistic", "epsilon", "chance", "chance_se"
                )
            ),
            "Tie-calibrated pairwise accuracy per metric and criterion",
            max_rows=20,
        )
    )
    return section


#: Levels of the criterion-matched view of the LLM judges (system first, as Chhun et al. 2024),
#: and those of their Williams tests against the best metric.
JUDGE_LEVELS: tuple[str, ...] = ("system", "global", "item")
JUDGE_WILLIAMS_LEVELS: tuple[str, ...] = ("system", "global")


def _judge_measures(study: Study) -> pl.DataFrame:
    """The catalogue rows of the LLM-judge measures that rate a human criterion."""
    return study.catalogue.filter(
        (pl.col("kind") == "llm-judge") & pl.col("criterion").is_in(list(study.criteria))
    )


def llm_judges(ctx: Context) -> Section | None:
    """LLM judges rating the human criteria (Chhun, Suchanek & Clavel, TACL 2024): the
    criterion-matched view, Williams tests against the best metric, the judges' scale."""
    section = Section(
        "llm-judges",
        "LLM judges",
        "Each cell is Kendall's tau between an LLM judge's rating of a criterion (one row per "
        "judge and prompt variant) and the human ratings of the same criterion; the 'Human "
        "rater' row is one human rater against the mean of all raters, a reference for how far "
        "the judges are from human agreement; 'mean |r|' averages a row's |tau| over the "
        "criteria. Pick the level in the drop-down. The Williams table tests each judge against "
        "the best automatic metric of each criterion, in both directions.",
        {
            "human rater row": "each rater against the mean of all raters, averaged over raters",
            "best metric": "kind metric with the largest |tau| with the criterion at the level",
            "Williams": "one-sided (alternative greater), both directions; n = systems (system "
            "level) / items (global level)",
            "correction family": "each judge x prompt x metric pair and direction, across criteria",
            "alpha": ctx.settings.alpha,
        },
    )
    if ctx.study.catalogue.filter(pl.col("kind") == "llm-judge").is_empty():
        return None  # no judges: no section
    why = ctx.missing(criteria=True)
    if not why and _judge_measures(ctx.study).is_empty():
        why = (
            "no LLM-judge measures rating its human criteria (a judge measure's criterion "
            f"names none of {', '.join(ctx.criteria)})"
        )
    why = why or ctx.missing(criteria=True, systems=3)
    if why:
        return _absent(section, why)
    view = ctx.shown(
        pl.concat(
            [an.judge_criteria(ctx.study, level=level, method="kendall") for level in JUDGE_LEVELS]
        )
    )
    view = view.with_columns(
        pl.when(pl.col("prompt").is_null())
        .then(pl.col("rater"))
        .otherwise(pl.format("{} (prompt {})", "rater", "prompt"))
        .alias("column")
    )
    wide = view.pivot(
        on="criterion", index=["level", "rater", "prompt"], values="statistic", sort_columns=False
    )
    section.blocks += [
        Chart.of(
            charts.metric_heatmap,
            view,
            name="judges",
            scale="signed",
            x="criterion",
            y="column",
            color="statistic",
            title="Kendall tau of each LLM judge with the human criterion it rates, beside "
            "a human rater" + ctx.paper("Chhun et al. 2024, Figs. 2-3"),
            choices={"level": ctx.level_names(JUDGE_LEVELS)},
            tooltip=["column", "criterion", "statistic"],
            spread="level",
        ),
        Table(
            "judge_criteria",
            wide,
            "Kendall tau of each judge and prompt with the matching criterion, and of a human "
            "rater with the panel",
        ),
    ]
    section.blocks += _judge_williams(ctx)
    scale = an.judge_scale(ctx.study)
    section.blocks.append(
        Table("judge_scale", scale, "LLM-judge values outside the 1-5 scale, per judge and prompt")
    )
    if ctx.is_hanna:
        section.blocks.append(
            Note(
                "HANNA's hanna_metric_scores_llm.csv holds, per story, the mean of three tries in "
                "which an answer that could not be parsed counts as -1: a value below 1 reveals "
                "unparsable answers (not every one: a -1 beside two 5s gives 3). The store keeps "
                "these values (policy keep), as the authors' correlations used them."
            )
        )
    section.blocks += _self_consistency(ctx)
    return section


def _judge_williams(ctx: Context) -> list[Chart | Table | Note]:
    """Williams tests of every judge measure against the best metric of its criterion."""
    if ctx.study.catalogue.filter(pl.col("kind") == "metric").is_empty():
        return [Note("Williams tests against the best metric need measures of kind metric.")]
    alpha = ctx.settings.alpha
    frames, notes = [], []
    for level in JUDGE_WILLIAMS_LEVELS:
        try:
            frames.append(an.judge_williams(ctx.study, level=level, correction="bh"))
        except ValueError as err:
            notes.append(Note(f"Williams tests not computed at {level} level: {err}."))
    if not frames:
        return notes
    tests = pl.concat(frames).select(
        "criterion",
        "level",
        "judge",
        "prompt",
        pl.col("metric").alias("best_metric"),
        pl.col("r_judge").alias("tau_judge"),
        pl.col("r_metric").alias("tau_metric"),
        pl.col("r_ab").alias("tau_judge_metric"),
        "n",
        "statistic",
        pl.col("pvalue_judge").alias("pvalue_judge_better"),
        pl.col("pvalue_judge_adjusted").alias("pvalue_judge_better_adjusted"),
        pl.col("pvalue_metric").alias("pvalue_metric_better"),
        pl.col("pvalue_metric_adjusted").alias("pvalue_metric_better_adjusted"),
    )
    for level, total, better, worse in (
        tests.group_by("level", maintain_order=True)
        .agg(
            pl.len(),
            (pl.col("pvalue_judge_better_adjusted") <= alpha).sum(),
            (pl.col("pvalue_metric_better_adjusted") <= alpha).sum(),
        )
        .iter_rows()
    ):
        notes.append(
            Note(
                f"{level.capitalize()} level: of {total} judge ratings (judge x prompt x "
                f"criterion), {better} correlate significantly more strongly than the best "
                f"metric of their criterion and {worse} significantly less strongly "
                f"(BH-adjusted p <= {alpha})."
            )
        )
    return [
        *notes,
        Table(
            "judge_williams",
            tests,
            "Williams tests of each judge against the best metric of its criterion (H1: the "
            "judge correlates more strongly; and the reverse)",
            max_rows=tests.height,
        ),
    ]


#: Statistics of a judge's agreement with itself across tries: its tries are exchangeable
#: raters, so the one-way ICCs, and Krippendorff's alpha.
SELF_CONSISTENCY = ("ICC1", "ICC1k", "alpha_interval", "alpha_ordinal")


def _self_consistency(ctx: Context) -> list[Chart | Table | Note]:
    """Self-consistency of the LLM judges across tries (needs their per-try ratings)."""
    tries = an.agreement(ctx.study, kinds=("llm-judge",), confidence=ctx.settings.confidence)
    if tries.is_empty():
        return [
            Note(
                "Self-consistency needs per-try ratings (a tidy file with a rater column for "
                "judge measures); this study has none"
                + (
                    " (HANNA's public LLM file holds only each judge's mean over three tries)."
                    if _is_hanna(ctx.study)
                    else "."
                )
            )
        ]
    table = tries.filter(pl.col("statistic_name").is_in(SELF_CONSISTENCY)).select(
        "measure",
        "criterion",
        "statistic_name",
        "statistic",
        "ci_low",
        "ci_high",
        "n_targets",
        "n_raters",
        "n_dropped",
    )
    return [
        Note(
            "Self-consistency: each judge's tries of an item are its raters (one-way ICC of one "
            "try and of their mean, with F-based intervals; Krippendorff's alpha). Items with "
            "another number of tries are dropped from the ICC (n_dropped)."
        ),
        Table("judge_self_consistency", table, "LLM judges' agreement across their tries"),
    ]


#: Below this many inputs the section "Is this study big enough?" is not computed: the ranking
#: draws two disjoint studies of at least a quarter of half the inputs (2 each).
DESIGN_MIN_INPUTS = 8
#: The power (and agreement) the section's sentences aim at, read off the curves.
DESIGN_TARGET = 0.8
#: The section's curves stop at this many inputs (the default grid's points above it are left
#: out: on WMT22 zh-en, 4 x 1,875 segments would add most of a minute to the report).
DESIGN_MAX_INPUTS = 4000
#: The tests of :func:`power`, as the section's sentences name them.
TEST_NAMES = {
    "williams": "the Williams test",
    "perm-both": "the PERM-BOTH permutation test",
    "calibrated": "the calibrated permutation test of acc_eq",
    "bootstrap": "the paired bootstrap",
    "permutation": "the paired permutation test",
    "t": "the paired t-test",
}
#: The ranking's quantities, as the chart's legend names them.
RANKING_WORDS = {
    "top_agreement": "same top system",
    "mean_agreement": "same outcome of a system pair (mean over pairs)",
    "srp": "same outcome of every system pair (stable ranking probability)",
}


def study_design(ctx: Context) -> Section:
    """Is this study big enough? Power curves of the closest top metric pair and system pair,
    and the stable ranking probability (:func:`~hanna_stats.analyses.power`), simulated from
    the study as a pilot, with sentences read off the curves."""
    s = ctx.settings
    items = ctx.item_word_plural()
    section = Section(
        "design",
        "Is this study big enough?",
        f"Each point is simulated from this study taken as a pilot (hanna_stats power): "
        f"{s.power_studies:,} studies of that many {items}, drawn with replacement from this "
        "study's, each given the package's own test at alpha "
        f"{s.alpha:g}; the power is the share of studies whose test finds the difference. The "
        "difference is the one this study observes (not an assumed one): between its two "
        "metrics best correlated with the criterion, and between its two best systems by mean "
        "rating, the first expected better; a difference this study does not show cannot be "
        "found by a bigger one either. The ranking draws two disjoint studies of that many "
        f"{items} each (at most half of this study's) and asks how often they agree. Bands: "
        "+-1.96 Monte Carlo standard errors, sqrt(p (1 - p) / studies): the uncertainty of the "
        "simulation, not of the study. The dashed line marks "
        f"{DESIGN_TARGET:g}; the sentences read the curves at this study's size and at the "
        "smallest size tried that reaches it.",
    )
    why = ctx.missing(criteria=True, systems=2)
    if not why and len(ctx.study.inputs) < DESIGN_MIN_INPUTS:
        why = f"{len(ctx.study.inputs)} inputs (at least {DESIGN_MIN_INPUTS} needed)"
    if why:
        return _absent(section, why)
    criterion = ctx.criteria[0]
    study = ctx.study
    section.settings["criterion"] = f"{criterion} (the study's first)"
    section.settings["band"] = "+-1.96 Monte Carlo standard errors"
    common = {
        "criterion": criterion,
        "target_power": None,  # the needed design and detectable effect: searches, too slow
        "studies": s.power_studies,
        "permutations": s.power_permutations,
        "resamples": s.power_resamples,
        "alpha": s.alpha,
        "seed": s.seed,
        "kinds": s.kinds,
    }
    frames, notes = [], []
    questions = ("metrics", "systems") if len(ctx.metrics) >= 2 else ("systems",)
    if len(ctx.metrics) < 2:
        notes.append(
            Note(
                f"No metric curve: it needs two automatic measures of kinds "
                f"{', '.join(s.kinds)}; the study has {len(ctx.metrics)}."
            )
        )
    size = len(study.inputs)
    grid = {}  # the default grid (the ranking's: of half the inputs, never capped)
    if size * max(INPUT_MULTIPLES) > DESIGN_MAX_INPUTS:  # WMT: no curve to 7,500 segments
        kept = [m for m in INPUT_MULTIPLES if size * m <= DESIGN_MAX_INPUTS]
        grid = {"inputs": tuple(math.floor(size * m) for m in kept) or (size,)}
    for question in (*questions, "ranking"):
        try:
            test = {"test": DEFAULT_TESTS[question]}  # said in the settings line
            inputs = {} if question == "ranking" else grid
            frames.append(an.power(study, question=question, **(common | test | inputs)))
        except ValueError as err:
            notes.append(Note(f"No {question} curve: {str(err).rstrip('.')}."))
    frame = pl.concat(frames, how="diagonal_relaxed") if frames else None
    if frame is None:
        section.blocks += notes
        return section
    section.blocks += [Note(text) for text in design_sentences(ctx, frame, size)] + notes
    section.blocks += _design_charts(ctx, frame)
    section.blocks.append(
        Table(
            "power",
            ctx.shown(frame),
            f"Simulated power and ranking agreement by design ({criterion})",
        )
    )
    return section


def _pilot(frame: pl.DataFrame, question: str, size: int) -> tuple[dict, list[dict]]:
    """The curve of ``question`` (rows by inputs; ranking: one row per inputs with its
    quantities) and its row at the pilot's ``size`` (the ranking: half of it)."""
    rows = frame.filter((pl.col("question") == question) & (pl.col("answer") == "curve"))
    if question == "ranking":
        rows = rows.pivot(on="quantity", index="inputs", values=["estimate", "standard_error"])
        size //= 2
    rows = rows.sort("inputs").to_dicts()
    return next((r for r in rows if r["inputs"] == size), rows[-1]), rows


def design_sentences(ctx: Context, frame: pl.DataFrame, size: int) -> list[str]:
    """What the curves say, one sentence per question, every number read off ``frame``
    (:func:`~hanna_stats.analyses.power`'s curves): the power at the study's size, the
    smallest size tried reaching :data:`DESIGN_TARGET` (or that none does), and how often two
    studies agree on the ranking."""
    items = ctx.item_word_plural()
    sentences = []
    for question in ("metrics", "systems"):
        if not (frame["question"] == question).any():
            continue
        pilot, rows = _pilot(frame, question, size)
        what = {"metrics": "metric", "systems": "system"}[question]
        test = TEST_NAMES.get(pilot["test"], pilot["test"])
        text = (
            f"With {pilot['inputs']:,} {items} (this study), {test} tells {what} {pilot['a']} "
            f"from {pilot['b']} with power {pilot['estimate']:.2f} (SE "
            f"{pilot['standard_error']:.2f}); "
        )
        reached = next((r for r in rows if r["estimate"] >= DESIGN_TARGET), None)
        if reached is None:
            last = rows[-1]
            text += (
                f"no size tried reaches {DESIGN_TARGET:.2f}: {last['inputs']:,} {items} "
                f"({last['inputs'] / pilot['inputs']:g} times as many) give "
                f"{last['estimate']:.2f} (SE {last['standard_error']:.2f})."
            )
        elif reached["inputs"] > pilot["inputs"]:
            more = reached["inputs"] - pilot["inputs"]
            text += (
                f"{reached['inputs']:,} {items} ({more:,} more) would give "
                f"{reached['estimate']:.2f} (SE {reached['standard_error']:.2f}), the smallest "
                f"size tried reaching {DESIGN_TARGET:.2f}."
            )
        elif reached["inputs"] == pilot["inputs"]:
            text += f"this study is big enough for power {DESIGN_TARGET:.2f} on this pair."
        else:
            text += (
                f"{reached['inputs']:,} {items} would already give {reached['estimate']:.2f} "
                f"(SE {reached['standard_error']:.2f}), the smallest size tried reaching "
                f"{DESIGN_TARGET:.2f}."
            )
        sentences.append(text)
    if (frame["question"] == "ranking").any():
        _, rows = _pilot(frame, "ranking", size)
        last = rows[-1]
        sentences.append(
            f"Two studies of {last['inputs']:,} {items} each (half of this study's) agree on "
            f"the top system {last['estimate_top_agreement']:.0%} of the time (SE "
            f"{last['standard_error_top_agreement']:.0%}), on the outcome of a system pair "
            f"(better, worse or not significantly different) {last['estimate_mean_agreement']:.0%}"
            f" of the time on average (SE {last['standard_error_mean_agreement']:.0%}), and on "
            f"every pair at once {last['estimate_srp']:.0%} of the time (SE "
            f"{last['standard_error_srp']:.0%})."
        )
    return sentences


def _design_charts(ctx: Context, frame: pl.DataFrame) -> list[Chart]:
    """The power curves of the metric and system pairs, and the ranking's agreement curves."""
    items = ctx.item_word_plural()
    curves = frame.filter(pl.col("answer") == "curve")
    ranking = pl.col("question") == "ranking"
    pair = pl.format("{}: {} vs {} ({})", "question", "a", "b", "test")
    shown = (
        (
            curves.filter(~ranking),
            pair.alias("pair"),
            "power_curves",
            "Power to tell the closest top pair apart, by study size",
            "band: +-1.96 Monte Carlo standard errors",
            "power",
        ),
        (
            curves.filter(ranking),
            pl.col("quantity").replace_strict(RANKING_WORDS).alias("agreement"),
            "ranking_agreement",
            "How often two studies rank the systems alike, by study size",
            "two disjoint studies of each size",
            "share of study pairs",
        ),
    )
    return [
        Chart.of(
            charts.power_curves,
            rows.select(line, "inputs", "estimate", "standard_error"),
            line=line.meta.output_name(),
            name=name,
            title=title,
            subtitle=[f"{ctx.criteria[0]}; {subtitle}"],
            x_title=f"{items} per study",
            y_title=y_title,
            target=DESIGN_TARGET,
        )
        for rows, line, name, title, subtitle, y_title in shown
        if rows.height
    ]


#: The section builders, in the paper's order; a builder returns None when its section does not
#: apply to the study at all (no LLM judges: no LLM-judge section).
SECTIONS: tuple[Callable[[Context], Section | None], ...] = (
    dataset,
    human_criteria,
    metrics_vs_criteria,
    metric_metric,
    pairwise_systems,
    top_k,
    williams,
    borda,
    tie_calibration,
    study_design,
    llm_judges,
)


#: Sections built once on the whole store of several subsets, after the Dataset section and
#: before each subset's own (:func:`~hanna_stats.reports.build_report`).
WHOLE_STORE: tuple[Callable[[Context], Section | None], ...] = (task_set_ranking,)


def analysis_section(ctx: Context, name: str) -> Section:
    """The section of the analysis ``name`` that :attr:`ReportSettings.analyses` adds: its
    table, run with its defaults and the report's settings of the same names
    (:func:`report_options`), titled by its docstring's summary. A study the analysis refuses
    (a ValueError: what it lacks) gets the section collapsed to the refusal."""
    function = getattr(an, name)
    title = " ".join((inspect.getdoc(function) or name).split("\n\n")[0].split())
    title = title.replace("``", "").rstrip(".")
    section = Section(
        f"analysis-{name}",
        title,
        f"The table of the analysis {name}, run with its defaults and the report's settings of "
        "the same names; --tables DIR writes all of its rows.",
    )
    try:
        frame = function(ctx.study, **report_options(name, ctx.settings))
    except ValueError as err:
        section.absent = f"Not computed for this study: {str(err).rstrip('.')}."
        return section
    section.blocks.append(Table(f"analysis_{name}", ctx.shown(frame), title))
    return section


def report_options(name: str, settings: ReportSettings) -> dict[str, object]:
    """The settings of the report that the analysis ``name`` takes: those whose names are its
    parameters, but those the vocabulary lists with another default for it (``EXCEPTIONS``:
    ``agreement``'s ``kinds`` are kinds of rated measures, not the report's kinds)."""
    parameters = inspect.signature(getattr(an, name)).parameters
    return {
        f.name: getattr(settings, f.name)
        for f in fields(settings)
        if f.name in parameters and (f"analyses.{name}", f.name) not in EXCEPTIONS
    }


def section_builders(settings: ReportSettings) -> tuple[Callable[[Context], Section | None], ...]:
    """The builders of the report's sections: :data:`SECTIONS`, then one
    :func:`analysis_section` per analysis of ``settings.analyses``."""
    extra = (functools.partial(analysis_section, name=name) for name in settings.analyses)
    return (*SECTIONS, *extra)
