"""Study design from a pilot: :func:`power`, the power of a study of a given size, the design a
target power needs, the smallest effect a design detects and the stable ranking probability,
simulated by resampling the study taken as the pilot.

Thin layer over the kernels of :mod:`hanna_stats.kernels.power`
(:func:`~hanna_stats.kernels.metric_pair_power`) and :mod:`hanna_stats.kernels.stable_ranking`
(:func:`~hanna_stats.kernels.system_pair_power`,
:func:`~hanna_stats.kernels.stable_ranking_probability`): it takes the criterion's ratings
(rater-level when the study holds them), the metrics' or systems' scores, chooses the pair, and
returns one tidy frame. Every simulation of one call uses the same ``seed``, so every design is
simulated on the same studies' generators (common random numbers: a curve is smooth, and a
search compares designs on the same draws).

The answers (column ``answer`` of :func:`power`):

- ``"curve"``: the estimate at each design of the grid of ``inputs`` (default 0.25, 0.5, 1, 2
  and 4 times the pilot's inputs; for the ranking 0.25, 0.5 and 1 times half of them, the most
  two disjoint studies can draw), ``design_systems`` and ``ratings`` fixed (None: the pilot's
  systems; its item scores);
- ``"needed"`` (with ``target_power``): the smallest ``solve_for`` (inputs; systems for the
  metrics question; ratings per item) whose power (the ranking: SRP) reaches the target: the
  pilot's value doubled (at most :data:`DOUBLINGS` times) until the target is reached, then
  bisected on the integers, every design on the same seeds (on them, one fewer is below the
  target); the searched column null, with a :class:`~hanna_stats.progress.StudyNote`, when the
  target is not reached;
- ``"detectable"`` (metrics and systems, with ``target_power``): the minimum detectable effect
  at the pilot's design, bisected (:data:`EFFECT_STEPS` steps) on the injected effect: for
  the metrics over its whole range, just above ``-rho_b`` to just under ``rho_a`` (the pooled
  Pearson ``|r|`` of b and a; the power rises with the effect over all of it, and where the
  pooled scale and the test's own disagree, a pooled difference of 0 may already be detected:
  column ``effect_statistic`` gives the effect found on the test's statistic); for the
  systems between 0 and the standard deviation of the item differences, doubled until
  reached; ``effect_source`` ``"searched"``.

The ranking's study pairs are on disjoint inputs (at most half the pilot's each), every system
pair compared by the two-sided sign-flip permutation test at ``alpha``: ``srp`` (both studies
give every system pair the same outcome), ``mean_agreement`` (the share of system pairs with
the same outcome) and ``top_agreement`` (the same top system).
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from hanna_stats.analyses._common import analysis, criterion_cube
from hanna_stats.kernels import (
    level_correlation,
    metric_pair_effect,
    metric_pair_power,
    stable_ranking_probability,
    system_pair_power,
)
from hanna_stats.kernels.power import root_entropy
from hanna_stats.progress import StudyNote, progress
from hanna_stats.study import Study
from hanna_stats.vocabulary import (
    WORDS,
    Alternative,
    DesignQuestion,
    ItemSystemWord,
    Kind,
    Method,
    PowerTest,
    SolveFor,
    Variant,
    check,
    check_bool,
    check_kinds,
    check_level,
    did_you_mean,
)

#: The default grid of inputs, as multiples of the pilot's inputs (the ranking question: of
#: half of them, the most a pair of disjoint studies can draw).
INPUT_MULTIPLES = (0.25, 0.5, 1.0, 2.0, 4.0)
RANKING_MULTIPLES = (0.25, 0.5, 1.0)
#: Each question's test when ``test`` is None (metrics: PERM-BOTH, exact at any size, with the
#: default ``method="pearson"`` its batched kernel; item-level Williams with n = inputs is
#: conservative, docs/error-rates.md).
DEFAULT_TESTS = {"metrics": "perm-both", "systems": "bootstrap", "ranking": "permutation"}
#: The needed design's search doubles the largest design up to this many times.
DOUBLINGS = 4
#: Bisection steps of the minimum detectable effect (its bracket / 2**steps).
EFFECT_STEPS = 8
#: Largest number of ratings per item a search tries.
MAX_RATINGS = 64

SCHEMA = {
    "question": pl.String,
    "criterion": pl.String,
    "a": pl.String,
    "b": pl.String,
    "test": pl.String,
    "level": pl.String,
    "method": pl.String,
    "answer": pl.String,
    "inputs": pl.Int64,
    "systems": pl.Int64,
    "ratings": pl.Int64,
    "ratings_source": pl.String,
    "effect": pl.Float64,
    "effect_source": pl.String,
    "effect_scale": pl.String,
    "effect_statistic": pl.Float64,
    "quantity": pl.String,
    "estimate": pl.Float64,
    "standard_error": pl.Float64,
    "studies": pl.Int64,
    "target": pl.Float64,
}


class _Estimate(NamedTuple):
    """What one simulated design gives: ``{quantity: (estimate, standard error)}``."""

    values: dict[str, tuple[float, float]]


class _Problem(NamedTuple):
    """One question on one pilot: the rows' fixed columns, the pilot's design, the quantity a
    target applies to, ``simulate(design) -> _Estimate`` of a design ``{inputs, systems,
    ratings, effect}`` and ``statistic(effect)``, the effect (None: the pilot's) on the test's
    own statistic (None: no effect)."""

    columns: dict[str, Any]
    design: dict[str, Any]
    quantity: str
    simulate: Callable[[dict[str, Any]], _Estimate]
    effect_range: tuple[float, float] | None
    minimum: dict[str, int]
    maximum: dict[str, int]
    statistic: Callable[[float | None], float | None]


def criterion_ratings(
    study: Study, criterion: str, include_human: bool
) -> tuple[np.ndarray, list[str], bool]:
    """The criterion's ratings (G, S, R) with NaN for missing ones, from the study's rater-level
    ratings (:attr:`~hanna_stats.study.Study.ratings`, raters by ``rater_column``), or its item
    scores (G, S) when it has none; the systems (axis 1) and whether the ratings are
    rater-level. Inputs and systems are those of the criterion's cube."""
    cube = study.cube(measures=[criterion], include_human=include_human)
    rows = study.ratings.filter(pl.col("measure") == criterion) if study.ratings.height else None
    if rows is None or rows.height == 0:
        return cube.values[0], list(cube.systems), False
    index_of_input = {name: i for i, name in enumerate(cube.inputs)}
    index_of_system = {name: i for i, name in enumerate(cube.systems)}
    rows = rows.filter(
        pl.col("input").is_in(list(index_of_input)) & pl.col("system").is_in(list(index_of_system))
    )
    g = np.array([index_of_input[x] for x in rows["input"].to_list()], dtype=np.intp)
    s = np.array([index_of_system[x] for x in rows["system"].to_list()], dtype=np.intp)
    r = rows["rater_column"].to_numpy().astype(np.intp)
    ratings = np.full((len(cube.inputs), len(cube.systems), int(r.max()) + 1), np.nan)
    ratings[g, s, r] = rows["score"].to_numpy()
    return ratings, list(cube.systems), True


def _complete_inputs(arrays: list[np.ndarray], ratings: np.ndarray, what: str) -> np.ndarray:
    """The inputs where every array has every system's value and every item a rating; a
    :class:`StudyNote` counts those left out, ValueError when fewer than 4 are left."""
    keep = np.ones(ratings.shape[0], dtype=bool)
    for X in arrays:
        keep &= np.isfinite(X).all(axis=1)
    rated = np.isfinite(ratings).any(axis=2) if ratings.ndim == 3 else np.isfinite(ratings)
    keep &= rated.all(axis=1)
    if keep.sum() < 4:
        raise ValueError(f"{what}: fewer than 4 inputs have every value the simulation needs")
    if not keep.all():
        warnings.warn(
            StudyNote(
                f"power: {int((~keep).sum())} inputs left out of the pilot ({what}): a value or "
                "every rating of an item missing"
            ),
            stacklevel=4,
        )
    return keep


def _grid(values: tuple[int, ...] | None, pilot: int, multiples: tuple, low: int) -> list[int]:
    """The inputs of the curve: ``values``, or the multiples of the pilot's (at least ``low``)."""
    if values is None:
        return sorted({max(low, math.floor(pilot * m)) for m in multiples})
    if isinstance(values, int | numbers.Integral):
        values = (values,)
    if not values or not all(isinstance(v, numbers.Integral) and v >= low for v in values):
        raise ValueError(f"inputs must be integers of at least {low}; got {values!r}")
    return sorted({int(v) for v in values})


def _check_count(name: str, value: object, low: int = 1) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be None or an integer of at least {low}; got {value!r}")
    return int(value)


def _named_pair(pair: object, names: list[str], what: str) -> tuple[int, int] | None:
    """The positions in ``names`` of the two names of ``pair`` (None: none given)."""
    if pair is None:
        return None
    if isinstance(pair, str) or len(pair) != 2 or pair[0] == pair[1]:  # type: ignore[arg-type]
        raise ValueError(f"pair must be two different {what}; got {pair!r}")
    for name in pair:  # type: ignore[union-attr]
        if name not in names:
            raise ValueError(
                f"pair names an unknown {what[:-1]} {name!r}{did_you_mean(name, names)}"
            )
    return names.index(pair[0]), names.index(pair[1])  # type: ignore[index]


def _kernel(options: dict, *names: str) -> dict[str, Any]:
    """The keywords of a kernel call: ``names`` of ``options``, its studies, level, seed and
    executor, and the progress bars."""
    shared = ("studies", "alpha", "seed", "executor")
    return {name: options[name] for name in (*names, *shared)} | {"progress": progress}


def _power_estimate(res: Any) -> _Estimate:
    return _Estimate({"power": (float(res.power), float(res.standard_error))})


def _metrics_problem(study: Study, criterion: str, pair: object, options: dict) -> _Problem:
    """The metrics question: the two metrics best correlated with the criterion (signed, at
    ``level`` by ``method``), or ``pair``."""
    criterion, names, cube = criterion_cube(
        study, criterion, options["kinds"], options["include_human"]
    )
    if len(names) < 2:
        raise ValueError(f"the metrics question needs two measures of kinds {options['kinds']}")
    correlation = dict(level=options["level"], method=options["method"], variant=options["variant"])
    chosen = _named_pair(pair, names, "measures")
    if chosen is None:
        r = level_correlation(cube.values[:-1], cube.values[-1][None], **correlation).statistic
        order = np.argsort(-np.nan_to_num(r[:, 0], nan=-np.inf), kind="stable")
        chosen = (int(order[0]), int(order[1]))
    ratings, systems, rated = criterion_ratings(study, criterion, options["include_human"])
    # The criterion's systems (those it rates: WMT22's MQM, 14 of 18), the metrics' aligned.
    on = [list(cube.systems).index(name) for name in systems]
    if len(on) < len(cube.systems):
        warnings.warn(
            StudyNote(
                f"power: {len(cube.systems) - len(on)} systems left out of the pilot "
                f"({criterion} rates none of their items)"
            ),
            stacklevel=3,
        )
    A, B, C = (cube.values[k][:, on] for k in (*chosen, -1))
    keep = _complete_inputs([A, B, C], ratings, criterion)
    H, A, B = ratings[keep], A[keep], B[keep]
    scores = np.nanmean(H, axis=2) if rated else H
    test = options["test"]
    williams = test == "williams"
    item = options["level"] == "item"
    kernel = _kernel(options, "test", "alternative", "permutations") | correlation
    effects: dict[float | None, Any] = {}

    def statistic(effect: float | None) -> float:
        if effect not in effects:
            effects[effect] = metric_pair_effect(
                scores, A, B, effect, test=test, seed=options["seed"], **correlation
            )
        return effects[effect].statistic

    observed = metric_pair_effect(scores, A, B, test=test, **correlation)
    effects[None] = observed
    rho_a = abs(float(np.corrcoef(A.ravel(), scores.ravel())[0, 1]))
    rho_b = rho_a - observed.effect

    def simulate(design: dict[str, Any]) -> _Estimate:
        return _power_estimate(
            metric_pair_power(
                H if rated else scores,
                A,
                B,
                inputs=design["inputs"],
                systems=design["systems"],
                ratings=design["ratings"],
                delta=design["effect"],
                **kernel,
            )
        )

    a, b = names[chosen[0]], names[chosen[1]]
    columns = {"criterion": criterion, "a": a, "b": b, "level": options["level"]}
    columns |= {"method": None if test == "calibrated" else options["method"]}
    columns |= {"effect_scale": "pooled Pearson r"}
    return _Problem(
        columns,
        {"inputs": H.shape[0], "systems": H.shape[1], "observed": observed.effect, "rated": rated},
        "power",
        simulate,
        (-rho_b * (1 - 1e-9), rho_a * (1 - 1e-9)),
        {"inputs": 4 if williams and item else 1, "systems": 4 if williams and not item else 3},
        {"systems": 4 * H.shape[1]},
        statistic,
    )


def _systems_problem(study: Study, criterion: str, pair: object, options: dict) -> _Problem:
    """The systems question: the criterion's two best systems by mean, or ``pair``."""
    criterion = study.criterion(criterion)
    ratings, systems, rated = criterion_ratings(study, criterion, options["include_human"])
    scores = np.nanmean(ratings, axis=2) if rated else ratings
    chosen = _named_pair(pair, systems, "systems")
    if chosen is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            means = np.nanmean(scores, axis=0)
        order = np.argsort(-np.nan_to_num(means, nan=-np.inf), kind="stable")
        chosen = (int(order[0]), int(order[1]))
    keep = _complete_inputs([scores[:, list(chosen)]], ratings[:, list(chosen)], criterion)
    H = ratings[keep][:, list(chosen)]
    d = scores[keep][:, chosen[0]] - scores[keep][:, chosen[1]]
    kernel = _kernel(options, "test", "alternative", "resamples", "permutations")

    def simulate(design: dict[str, Any]) -> _Estimate:
        return _power_estimate(
            system_pair_power(
                H,
                pair=(0, 1),
                inputs=design["inputs"],
                ratings=design["ratings"],
                delta=design["effect"],
                **kernel,
            )
        )

    spread = float(np.std(d, ddof=1)) if d.size > 1 else 1.0
    columns = {"criterion": criterion, "a": systems[chosen[0]], "b": systems[chosen[1]]}
    columns |= {"level": None, "method": None, "effect_scale": "mean rating difference"}
    observed = float(d.mean())
    return _Problem(
        columns,
        {"inputs": H.shape[0], "systems": 2, "observed": observed, "rated": rated},
        "power",
        simulate,
        (0.0, max(spread, 1e-12)),
        {"inputs": 2},
        {},
        lambda effect: observed if effect is None else effect,
    )


def _ranking_problem(study: Study, criterion: str, pair: object, options: dict) -> _Problem:
    """The ranking question: the stable ranking probability of all the criterion's systems."""
    if pair is not None:
        raise ValueError(
            "pair is for the metrics and systems questions: ranking takes every system"
        )
    criterion = study.criterion(criterion)
    ratings, systems, rated = criterion_ratings(study, criterion, options["include_human"])
    scored = np.isfinite(ratings).any(axis=2) if rated else np.isfinite(ratings)
    keep = scored.any(axis=1)
    H = ratings[keep]
    kernel = _kernel(options, "permutations")

    def simulate(design: dict[str, Any]) -> _Estimate:
        res = stable_ranking_probability(
            H, inputs=design["inputs"], ratings=design["ratings"], **kernel
        )
        return _Estimate(
            {
                "srp": (res.statistic, res.standard_error),
                "mean_agreement": (res.mean_agreement, res.mean_standard_error),
                "top_agreement": (res.top_agreement, res.top_standard_error),
            }
        )

    columns = {"criterion": criterion, "a": None, "b": None, "level": None, "method": None}
    return _Problem(
        columns,
        {"inputs": H.shape[0], "systems": len(systems), "observed": None, "rated": rated},
        "srp",
        simulate,
        None,
        {"inputs": 1},
        {"inputs": H.shape[0] // 2},
        lambda effect: None,
    )


def _rows(problem: _Problem, design: dict, answer: str, source: str, target: float | None):
    """The frame rows of one simulated design (one per quantity)."""
    estimate = problem.simulate(design)
    base = {
        **problem.columns,
        "answer": answer,
        "inputs": design["inputs"],
        "systems": design["systems"] or problem.design["systems"],
        "ratings": design["ratings"],
        "ratings_source": "item scores" if design["ratings"] is None else "rater-level ratings",
        "effect": problem.design["observed"] if design["effect"] is None else design["effect"],
        "effect_source": source,
        "effect_statistic": problem.statistic(design["effect"]),
        "target": target,
    }
    return [
        {**base, "quantity": q, "estimate": e, "standard_error": se}
        for q, (e, se) in estimate.values.items()
    ], estimate


def _search(
    problem: _Problem, design: dict, name: str, start: int, target: float, source: str
) -> list[dict]:
    """The smallest ``name`` (inputs, systems or ratings) at which the target quantity reaches
    ``target``: from ``start``, doubled (at most :data:`DOUBLINGS` times, within the maximum)
    until it does, then bisected on the integers between the last value below and the first
    at or above, on the same seeds; the rows of the design found (None with a note when none
    is)."""
    low = problem.minimum.get(name, 1)
    high_limit = problem.maximum.get(name, MAX_RATINGS if name == "ratings" else 2**40)
    cache: dict[int, tuple[list[dict], _Estimate]] = {}

    def at(value: int) -> tuple[list[dict], _Estimate]:
        if value not in cache:
            cache[value] = _rows(problem, {**design, name: value}, "needed", source, target)
        return cache[value]

    def reaches(value: int) -> bool:
        return at(value)[1].values[problem.quantity][0] >= target

    below, above = low - 1, max(low, min(start, high_limit))
    for _ in range(DOUBLINGS + 1):
        if reaches(above):
            break
        below = above
        if above >= high_limit:
            above = None
            break
        above = min(high_limit, 2 * above)
    else:
        above = None
    if above is None:
        warnings.warn(
            StudyNote(
                f"power: the {problem.quantity} does not reach {target:g} up to {below} {name} "
                f"(the last design tried is shown with {name} null)"
            ),
            stacklevel=4,
        )
        return [{**row, name: None} for row in at(below)[0]]
    while above - below > 1:
        middle = (above + below) // 2
        if reaches(middle):
            above = middle
        else:
            below = middle
    return at(above)[0]


def _detectable(problem: _Problem, design: dict, target: float, grow: bool) -> list[dict]:
    """The smallest injected effect at which the power reaches ``target`` at ``design``:
    bisection (:data:`EFFECT_STEPS` steps) on the effect's range (the systems question's range
    doubled until reached, at most :data:`DOUBLINGS` times), on the same seeds; the rows of the
    design at the effect found (null with a note when none is)."""
    low, high = problem.effect_range  # type: ignore[misc]

    def power_at(effect: float) -> tuple[list[dict], float]:
        rows, estimate = _rows(
            problem, {**design, "effect": effect}, "detectable", "searched", target
        )
        return rows, estimate.values["power"][0]

    best, reached = power_at(high)
    for _ in range(DOUBLINGS if grow else 0):
        if reached >= target:
            break
        low, high = high, 2 * high
        best, reached = power_at(high)
    if reached < target:
        warnings.warn(
            StudyNote(f"power: no effect up to {high:.4g} reaches power {target:g}"), stacklevel=4
        )
        return [{**row, "effect": None, "effect_statistic": None} for row in best]
    for _ in range(EFFECT_STEPS):
        middle = (low + high) / 2
        rows, value = power_at(middle)
        if value >= target:
            high, best = middle, rows
        else:
            low = middle
    return best


PROBLEMS = {"metrics": _metrics_problem, "systems": _systems_problem, "ranking": _ranking_problem}


@analysis
def power(
    study: Study,
    *,
    question: DesignQuestion = "metrics",
    criterion: str | None = None,
    pair: tuple[str, ...] | None = None,
    test: PowerTest | None = None,
    level: ItemSystemWord = "item",
    method: Method = "pearson",
    variant: Variant = "b",
    effect: float | None = None,
    inputs: tuple[int, ...] | None = None,
    design_systems: int | None = None,
    ratings: int | None = None,
    target_power: float | None = 0.8,
    solve_for: SolveFor = "inputs",
    studies: int = 500,
    permutations: int = 1000,
    resamples: int = 1000,
    alpha: float = 0.05,
    alternative: Alternative = "greater",
    seed: int | None = 0,
    kinds: tuple[Kind, ...] = ("metric",),
    include_human: bool = False,
    executor: Any = None,
) -> pl.DataFrame:
    """Is this study big enough? Power, needed design and detectable effect from the study as a
    pilot.

    With no options: can the study tell its best metric from the runner-up (the two metrics
    best correlated with its first criterion at item level by Pearson, tested by PERM-BOTH),
    with the difference it observes, and how many inputs would that take for power 0.8? Each
    design is simulated ``studies`` times by resampling the pilot as the kernels say (inputs
    with replacement, systems without, ``ratings`` per item from the rater-level ratings, else
    the item scores as they are), running the package's own test on each; the answers
    (``curve``, ``needed``, ``detectable``) are as the module says, each with its Monte Carlo
    standard error ``sqrt(p (1 - p) / studies)``.

    - ``"metrics"``: metric ``a`` correlates better with the criterion than ``b``
      (:func:`~hanna_stats.kernels.metric_pair_power`; ``test`` ``"perm-both"`` (default),
      ``"williams"`` (fast; conservative at item level with n = inputs, docs/error-rates.md)
      or ``"calibrated"``); by default the two measures of ``kinds`` with the largest signed
      correlation at ``level`` by ``method``. **Effect** (``effect_scale`` ``"pooled Pearson
      r"``: ``rho_a - rho_b`` of the pilot's pooled ``|r(a, H)|``, ``|r(b, H)|``): None: the
      real pair as it is; ``delta``: the real pair with ONE metric lowered by noise fresh per
      study and item until ``rho_a' - rho_b' = delta`` (b when ``delta >= rho_a - rho_b``,
      else a; the kernel's formulas). ``effect_statistic``: the effect on the test's own
      statistic on the whole pilot (:func:`~hanna_stats.kernels.metric_pair_effect`; for a
      ``delta``, the mean over 64 noise draws from ``seed``).
    - ``"systems"``: system ``a``'s mean rating differs from ``b``'s
      (:func:`~hanna_stats.kernels.system_pair_power`; ``"bootstrap"`` (default, Koehn's),
      ``"permutation"`` (sign flips) or ``"t"`` (paired t-test)); by default the two best
      systems by mean. **Effect** (``"mean rating difference"``, also the statistic): None:
      the observed a - b; ``delta``: b's ratings shifted so that it is ``delta`` (spread kept).
    - ``"ranking"``: the stable ranking probability of all the systems (Riley et al. 2024;
      :func:`~hanna_stats.kernels.stable_ranking_probability`; quantities ``srp``,
      ``mean_agreement``, ``top_agreement``); no effect is injected.

    Parameters
    ----------
    study : Study
        The pilot.
    question : {"metrics", "systems", "ranking"}
    criterion : str, optional
        The human criterion, by name or abbreviation; None: the study's first.
    pair : tuple of two str, optional
        The two metrics (metrics) or systems (systems) compared, a first; None: the closest
        pair at the top.
    test : str, optional
        The question's test (above); None: its default.
    level : {"item", "system"}
    method : {"pearson", "spearman", "kendall"}
        Pearson by default: PERM-BOTH's batched kernel (Kendall: about 4 min on HANNA).
    variant : {"a", "b", "c"}
    effect : float, optional
        The effect injected (above); None: the pilot's observed difference.
    inputs : tuple of int, optional
        The grid of inputs of the curve.
    design_systems : int, optional
        Systems of every simulated study (metrics question; drawn without replacement up to
        the pilot's, with replacement above); None: the pilot's.
    ratings : int, optional
        Ratings per item of every design, drawn from the rater-level ratings; None: the item
        scores as they are.
    target_power : float, optional
        The power (ranking: SRP) the needed design and the detectable effect aim at, in (0, 1);
        None: neither is searched.
    solve_for : {"inputs", "systems", "ratings"}
    studies : int
        Simulated studies (ranking: study pairs) per design.
    permutations, resamples : int
        Of each simulated test (permutation tests; the paired bootstrap).
    alpha : float
        Level of each simulated test.
    alternative : {"greater", "two-sided", "less"}
        ``"greater"``: a is better than b (the ranking's tests are two-sided).
    seed : int or None
        The root of every simulation's seeds (:func:`~hanna_stats.kernels.power.root_entropy`;
        None: fresh entropy, drawn once for every design).
    kinds : tuple of str
        Kinds of the metrics of the metrics question.
    include_human : bool
        Keep the human-written systems.
    executor : distributed.Client, concurrent.futures.Executor or ClusterExecutor, optional
        Run blocks of simulated studies on it, the same result bit for bit.

    Returns
    -------
    polars.DataFrame
        One row per answer, design and quantity, the columns of :data:`SCHEMA` (``a``, ``b``,
        the effect's columns null for the ranking; ``level``, ``method`` null where the test
        has none; ``ratings`` null: the item scores; ``target`` null on the curve).

    Examples
    --------
    >>> power(study)                                               # doctest: +SKIP
    >>> power(study, question="systems", effect=0.2, inputs=(50, 100, 200))  # doctest: +SKIP
    """
    question = check("question", question)
    options = _options(question, test, level, method, variant, kinds, include_human)
    options |= {
        "studies": _count("studies", studies),
        "permutations": _count("permutations", permutations),
        "resamples": _count("resamples", resamples),
        "alpha": _fraction("alpha", alpha),
        "alternative": check("alternative", alternative),
        "seed": root_entropy(seed),
        "executor": executor,
    }
    systems, ratings, target = _design(question, effect, design_systems, ratings, target_power)
    if question != "metrics" and solve_for == "systems":
        raise ValueError("design_systems and solve_for='systems' are for the metrics question")
    check("solve_for", solve_for)
    if criterion is None:
        if not study.criteria:
            raise ValueError("the study has no human criterion to simulate")
        criterion = study.criteria[0]
    problem = PROBLEMS[question](study, criterion, pair, options)
    problem.columns.update(question=question, test=options["test"], studies=options["studies"])
    if ratings is not None or solve_for == "ratings":
        if not problem.design["rated"]:
            raise ValueError(
                "ratings needs the study's rater-level ratings of the criterion; it has none"
            )
    base = {"systems": systems, "ratings": ratings, "effect": effect}
    rows = _answers(problem, question, inputs, base, target, solve_for)
    return pl.DataFrame([{k: row.get(k) for k in SCHEMA} for row in rows], schema=SCHEMA)


def _answers(
    problem: _Problem, question: str, inputs: Any, base: dict, target: float | None, solve: str
) -> list[dict]:
    """The rows of the curve, the needed design and the detectable effect."""
    pilot_inputs = problem.design["inputs"]
    ranking = question == "ranking"
    grid = _grid(
        inputs,
        pilot_inputs // 2 if ranking else pilot_inputs,
        RANKING_MULTIPLES if ranking else INPUT_MULTIPLES,
        problem.minimum["inputs"],
    )
    if question == "metrics" and base["systems"] is None:
        base = {**base, "systems": problem.design["systems"]}
    source = "given" if base["effect"] is not None else "observed"
    rows = []
    for value in grid:
        rows += _rows(problem, {**base, "inputs": value}, "curve", source, None)[0]
    if target is not None:
        pilot = {**base, "inputs": pilot_inputs // 2 if ranking else pilot_inputs}
        rows += _search(problem, pilot, solve, pilot[solve] or 1, target, source)
        if not ranking:
            rows += _detectable(problem, pilot, target, grow=question == "systems")
    return rows


def _design(question, effect, design_systems, ratings, target_power) -> tuple:
    """The checked ``design_systems``, ``ratings`` and ``target_power``."""
    target = None if target_power is None else _fraction("target_power", target_power)
    systems = _check_count("design_systems", design_systems, 3)
    if effect is not None and (question == "ranking" or not _finite(effect)):
        raise ValueError(
            f"effect must be None or a finite number (metrics, systems questions); got {effect!r}"
        )
    if question != "metrics" and systems is not None:
        raise ValueError("design_systems and solve_for='systems' are for the metrics question")
    return systems, _check_count("ratings", ratings), target


def _options(question, test, level, method, variant, kinds, include_human) -> dict:
    tests = {
        "metrics": WORDS["metric_pair_test"],
        "systems": WORDS["system_pair_test"],
        "ranking": ("permutation",),
    }[question]
    test = DEFAULT_TESTS[question] if test is None else check("test", test, tests)
    return {
        "test": test,
        "level": check_level(level, WORDS["item_system"]),
        "method": check("method", method),
        "variant": check("variant", variant),
        "kinds": check_kinds(kinds),
        "include_human": check_bool("include_human", include_human),
    }


def _count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")
    return int(value)


def _finite(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _fraction(name: str, value: object) -> float:
    if not _finite(value) or not 0 < value < 1:  # type: ignore[operator]
        raise ValueError(f"{name} must be a number in (0, 1); got {value!r}")
    return float(value)  # type: ignore[arg-type]
