"""Error rates of the package's significance tests and coverage of its intervals (issue 31).

Run from the repository root::

    python docs/error_rates.py [--studies N] [--seed S] [--out docs/error-rates.md]

Each simulated study draws data shaped like HANNA, SummEval or WMT under the null hypothesis of
every test (two metrics of equal population agreement with the criterion; two systems of equal
quality), runs the package's public kernels on it, and counts the rejections at alpha = 0.05 (a
p-value ``<= 0.05``) with their Clopper-Pearson 95% interval
(``scipy.stats.binomtest(k, n).proportion_ci()``); the intervals' coverage is counted against
the correlation's population value under the generating model. The page
``docs/error-rates.md`` is written from the counts (:func:`render`): no number in it is typed by
hand. The generating models are in :data:`MODEL` (printed on the page).

Each study's draws come from its own child of ``numpy.random.SeedSequence([seed, shape])``
(``spawn(studies)``), so a study's data do not depend on how many studies run.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hanna_stats.kernels import (
    bootstrap_ci,
    calibrated_permutation_test,
    fisher_interval,
    level_correlation,
    paired_bootstrap,
    pairwise_pvalues,
    permutation_test_pairs,
    pooled_pairwise_accuracy,
    significance_clusters,
    williams_test,
)

ALPHA = 0.05
#: Permutations per test: with p = hits / K (no identity added) and hits uniform on 0..K under
#: an exact null, ``P(p <= 0.05) = (floor(0.05 K) + 1) / (K + 1)``, exactly 0.05 for K = 199.
PERMUTATIONS = 199
#: Bootstrap resamples per interval (and per paired bootstrap).
RESAMPLES = 500
#: Default number of simulated studies per data shape (the full run of the page).
STUDIES = 400
UNITS = {"both": "PERM-BOTH", "systems": "PERM-SYS", "inputs": "PERM-INPUT"}


@dataclass(frozen=True)
class Shape:
    """A data shape: its size, its criterion (``likert``: ``raters`` ratings on 1-5 averaged;
    ``mqm``: MQM-like penalties) and its metrics (``continuous`` or ``integer``)."""

    name: str
    inputs: int
    systems: int
    criterion: str = "likert"
    raters: int = 3
    rater_sd: float = 0.8
    metrics: str = "continuous"


SHAPES = (
    Shape("HANNA", 96, 10, rater_sd=0.8),
    Shape("SummEval", 100, 16, rater_sd=0.5),
    Shape("WMT", 500, 16, criterion="mqm", raters=1),
    Shape("WMT, integer metrics", 500, 16, criterion="mqm", raters=1, metrics="integer"),
)

#: Standard deviations of the generating model.
SD = {"system": 0.4, "input": 0.5, "cell": 0.6, "metric": 0.8, "bias": 0.3}

MODEL = f"""\
Latent quality of system s on input g: `q[g, s] = u[s] + v[g] + e[g, s]`, with system effects
`u ~ N(0, {SD["system"]}^2)`, input effects `v ~ N(0, {SD["input"]}^2)` and cell effects
`e ~ N(0, {SD["cell"]}^2)`, all independent. For the tests, systems 0 and 1 have equal quality
(`u[0] := u[1]`), the others their own `u`.

- **Criterion, 1-5 scale** (HANNA: 96 inputs x 10 systems, rater sd 0.8; SummEval: 100 x 16,
  expert sd 0.5): 3 ratings per item, `clip(round(3 + q + eta), 1, 5)` with `eta ~ N(0, sd^2)`
  fresh per rating, averaged.
- **Criterion, MQM-like** (WMT: 500 segments x 16 systems, one rating): minor errors
  `~ Poisson(0.5 exp(-q))`, major errors `~ Poisson(0.1 exp(-q))`, score
  `-min(minor + 5 major, 25)`: 0 for about half the segments, negative penalties, many ties.
- **Metrics**: two metrics of equal population agreement with the criterion, exchangeable given
  `q`: continuous `A = q + eps_A`, `B = q + eps_B` with `eps ~ N(0, {SD["metric"]}^2)`
  independent per metric and cell; integer (column "WMT, integer metrics", an error count like
  GEMBA-MQM's) `-min(Poisson(0.6 exp(-(q + eps))), 25)`, the same `eps`.

Swapping A and B in any set of cells leaves the joint distribution unchanged, so every
comparison of A with B is under its null at every level; systems 0 and 1 are exchangeable, so
every comparison of them is too.

**Coverage designs.** The metrics get a system effect of their own, `w[s] ~ N(0, {SD["bias"]}^2)`
(`A = q + w + eps_A`), so that system-level correlations are not near 1. *Fixed systems*
(intervals resampling inputs): the systems' `u` and `w` are drawn once (seed 12345) and kept
for every study, the inputs drawn afresh; the population value is the statistic on 40,000 fresh
inputs of those systems (item level: the mean over inputs of the within-input Kendall tau-b;
system level: the Pearson correlation of the systems' means). *Random systems and inputs*
(intervals resampling systems or both; Fisher intervals): every study draws its systems and
inputs; the population value of the system-level Pearson is the correlation, over 10,000
systems, of their means over the study's number of inputs (the mean over 5 draws of inputs);
that of the global-level Pearson is the correlation over 4,000,000 cells (2,000 inputs x 2,000
systems); that of the item-level Kendall the mean over 2,000 inputs of the within-input tau-b
across 2,000 systems (the limit of many systems). These population values are computed by the
script (`population_values`) and printed below the coverage table.
"""


class Row(NamedTuple):
    """One line of the tables: what is counted, and the rate it should have."""

    key: str
    label: str
    nominal: float
    group: str  # "test" or "coverage"


def _rows() -> tuple[Row, ...]:
    rows = []
    for level, n in (("item", "inputs"), ("system", "systems"), ("global", "items")):
        for method in ("pearson", "spearman", "kendall") if level != "global" else ("pearson",):
            rows.append(
                Row(
                    f"williams-{level}-{method}",
                    f"Williams, {level} level, {method.title()} (n = {n}), A > B",
                    ALPHA,
                    "test",
                )
            )
    for unit, name in UNITS.items():
        rows.append(
            Row(f"perm-{unit}-system", f"{name}, system level, Kendall, A > B", ALPHA, "test")
        )
    rows.append(Row("perm-both-item", "PERM-BOTH, item level, Kendall, A > B", ALPHA, "test"))
    rows += [
        Row("bootstrap-one", "paired bootstrap, system 0 wins (label 1)", ALPHA, "test"),
        Row("bootstrap-any", "paired bootstrap, any label != 0", 2 * ALPHA, "test"),
        Row("spa-pair", "SPA system-pair test (pairwise_pvalues), 0 > 1", ALPHA, "test"),
        Row("calibrated-item", "calibrated permutation, acc_eq, item level, A > B", ALPHA, "test"),
        Row(
            "calibrated-item-scores",
            "calibrated permutation, acc_eq, item level, swap='scores', A > B",
            ALPHA,
            "test",
        ),
        Row(
            "calibrated-system",
            "calibrated permutation, acc_eq, system level, A > B",
            ALPHA,
            "test",
        ),
        Row("pooled", "pooled pairwise accuracy permutation, A > B", ALPHA, "test"),
        Row("clusters-perm", "clusters split A, B: PERM-BOTH item Kendall", 2 * ALPHA, "test"),
        Row("clusters-acc_eq", "clusters split A, B: calibrated acc_eq item", 2 * ALPHA, "test"),
        Row("clusters-pooled", "clusters split A, B: pooled accuracy", 2 * ALPHA, "test"),
    ]
    for level, method, resample, design in (
        ("item", "kendall", "inputs", "fixed systems"),
        ("system", "pearson", "inputs", "fixed systems"),
        ("item", "kendall", "systems", "random"),
        ("item", "kendall", "both", "random"),
        ("system", "pearson", "systems", "random"),
        ("system", "pearson", "both", "random"),
    ):
        for ci in ("percentile", "bca"):
            rows.append(
                Row(
                    f"boot-{level}-{resample}-{ci}",
                    f"bootstrap_ci {ci}, {level} {method.title()}, resample {resample} ({design})",
                    0.95,
                    "coverage",
                )
            )
    rows += [
        Row(
            "fisher-system",
            "fisher_interval, system Pearson, n = systems (random)",
            0.95,
            "coverage",
        ),
        Row(
            "fisher-global", "fisher_interval, global Pearson, n = items (random)", 0.95, "coverage"
        ),
    ]
    return tuple(rows)


ROWS = _rows()
KEYS = tuple(row.key for row in ROWS)


# --- data ----------------------------------------------------------------------------------


def latent(rng, inputs, systems, u=None, equal_pair=True):
    """``q[g, s] = u[s] + v[g] + e[g, s]`` (module :data:`MODEL`)."""
    if u is None:
        u = rng.normal(0.0, SD["system"], systems)
        if equal_pair:
            u[0] = u[1]
    v = rng.normal(0.0, SD["input"], (inputs, 1))
    return u[None, :] + v + rng.normal(0.0, SD["cell"], (inputs, systems))


def criterion(rng, shape, q):
    """The criterion's item scores of ``q`` (:data:`MODEL`)."""
    if shape.criterion == "mqm":
        rate = np.exp(-q)
        penalty = rng.poisson(0.5 * rate) + 5 * rng.poisson(0.1 * rate)
        return -np.minimum(penalty, 25).astype(np.float64)
    eta = rng.normal(0.0, shape.rater_sd, (shape.raters, *q.shape))
    return np.clip(np.round(3.0 + q + eta), 1.0, 5.0).mean(axis=0)


def metrics(rng, shape, q, bias=None):
    """The two metrics ``A``, ``B``, shape (2, G, S), exchangeable given ``q``; ``bias`` (S,):
    a system effect of the metrics' own (the coverage designs), added to ``q``."""
    if bias is not None:
        q = q + bias
    noisy = q[None] + rng.normal(0.0, SD["metric"], (2, *q.shape))
    if shape.metrics == "integer":
        return -np.minimum(rng.poisson(0.6 * np.exp(-noisy)), 25).astype(np.float64)
    return noisy


def study(rng, shape, u=None, equal_pair=True, bias=None):
    """One simulated study: criterion (G, S) and metrics (2, G, S). ``bias="draw"``: the
    metrics' own system effects drawn here (the random coverage design)."""
    q = latent(rng, shape.inputs, shape.systems, u, equal_pair)
    if isinstance(bias, str):
        bias = rng.normal(0.0, SD["bias"], shape.systems)
    return criterion(rng, shape, q), metrics(rng, shape, q, bias)


def fixed_systems(shape):
    """The system effects ``u`` and metric biases of the fixed-systems coverage design (seed
    12345)."""
    rng = np.random.default_rng(12345)
    return rng.normal(0.0, SD["system"], shape.systems), rng.normal(0.0, SD["bias"], shape.systems)


def population_values(shape, inputs=40_000, systems=10_000, chunk=5_000):
    """Population values of the covered correlations (A with the criterion) under
    :data:`MODEL`, with the metrics' own system effects: ``item`` (Kendall) and ``system``
    (Pearson) of the fixed systems, from ``inputs`` fresh inputs; ``system-random`` (Pearson,
    across ``systems`` systems, of their means over ``shape.inputs`` inputs, averaged over 5
    draws of inputs) and ``global-random`` (Pearson over 2,000 x 2,000 cells)."""
    rng = np.random.default_rng(2024)
    u, bias = fixed_systems(shape)
    taus, weights, sums_h, sums_a = [], [], 0.0, 0.0
    for lo in range(0, inputs, chunk):
        h, x = study(rng, replace(shape, inputs=min(chunk, inputs - lo)), u, bias=bias)
        res = level_correlation(x[:1], h[None], level="item", method="kendall")
        taus.append(res.statistic[0, 0])
        weights.append(res.n_groups[0, 0])
        sums_h, sums_a = sums_h + h.sum(axis=0), sums_a + x[0].sum(axis=0)
    values = {"item": float(np.average(taus, weights=weights))}
    values["system"] = float(np.corrcoef(sums_h, sums_a)[0, 1])
    per_draw = []
    for _ in range(5):
        v = rng.normal(0.0, SD["input"], (shape.inputs, 1))
        means_h, means_a = [], []
        for _ in range(systems // 1_000):
            q = rng.normal(0.0, SD["system"], 1_000) + v
            q = q + rng.normal(0.0, SD["cell"], q.shape)
            means_h.append(criterion(rng, shape, q).mean(axis=0))
            bias = rng.normal(0.0, SD["bias"], 1_000)
            means_a.append(metrics(rng, shape, q, bias)[0].mean(axis=0))
        per_draw.append(np.corrcoef(np.concatenate(means_h), np.concatenate(means_a))[0, 1])
    values["system-random"] = float(np.mean(per_draw))
    big = replace(shape, inputs=2_000, systems=2_000)
    h, x = study(rng, big, equal_pair=False, bias="draw")
    values["global-random"] = float(np.corrcoef(h.ravel(), x[0].ravel())[0, 1])
    h, x = study(rng, big, equal_pair=False, bias="draw")
    res = level_correlation(x[:1], h[None], level="item", method="kendall")
    values["item-random"] = float(res.statistic[0, 0])
    return values


# --- one study -----------------------------------------------------------------------------


def _seed(rng):
    return int(rng.integers(0, 2**63))


def williams_outcomes(h, x, shape):
    """Williams tests of A > B at each level and method (the analyses' n conventions)."""
    out = {}
    X = np.concatenate([x, h[None]])
    sizes = {"item": shape.inputs, "system": shape.systems, "global": shape.inputs * shape.systems}
    for row in ROWS:
        if not row.key.startswith("williams-"):
            continue
        _, level, method = row.key.split("-")
        R = level_correlation(X, level=level, method=method).statistic
        p = williams_test(R[2, :2], R[:2, :2], sizes[level]).pvalue[0, 1]
        out[row.key] = np.nan if np.isnan(p) else float(p <= ALPHA)
    return out


def _split(statistic, pvalue):
    """Whether the significance clusters put measures 0 and 1 apart."""
    ranks = significance_clusters(statistic, pvalue, alpha=ALPHA)
    return np.nan if np.isnan(statistic).any() else float(ranks[0] != ranks[1])


def permutation_outcomes(rng, h, x):
    out = {}
    for level, unit in [("system", unit) for unit in UNITS] + [("item", "both")]:
        res = permutation_test_pairs(
            x, h, level=level, permutations=PERMUTATIONS, alternative="greater",
            seed=_seed(rng), unit=unit,
        )  # fmt: skip
        out[f"perm-{unit}-{level}"] = float(res.pvalue[0, 1] <= ALPHA)
    # metric_clusters' default: PERM-BOTH at item level, Kendall, one-sided
    out["clusters-perm"] = _split(res.statistic, res.pvalue)
    return out


def system_pair_outcomes(rng, h):
    """Systems 0 and 1 (equal quality) on the criterion: paired bootstrap and SPA's test."""
    labels = paired_bootstrap(h[None], resamples=RESAMPLES, seed=_seed(rng)).labels[0, 0]
    p = pairwise_pvalues(h[None], permutations=PERMUTATIONS, seed=_seed(rng))[0, 0, 1]
    return {
        "bootstrap-one": float(labels == 1),
        "bootstrap-any": float(labels != 0),
        "spa-pair": float(p <= ALPHA),
    }


def accuracy_outcomes(rng, h, x):
    """Calibrated permutation tests (item, system) and pooled accuracy, with their clusters."""
    out = {}
    for level in ("item", "system"):
        res = calibrated_permutation_test(
            h[None], x, level=level, permutations=PERMUTATIONS, seed=_seed(rng)
        ).for_human(0)
        out[f"calibrated-{level}"] = float(res.pvalue[0, 1] <= ALPHA)
        if level == "item":
            out["clusters-acc_eq"] = _split(res.statistic, res.pvalue)
    res = calibrated_permutation_test(
        h[None], x, level="item", permutations=PERMUTATIONS, seed=_seed(rng), swap="scores"
    ).for_human(0)
    out["calibrated-item-scores"] = float(res.pvalue[0, 1] <= ALPHA)
    subsets = np.zeros(h.shape[1], dtype=np.int64)
    res = pooled_pairwise_accuracy(
        h.mean(axis=0), x.mean(axis=1), subsets, permutations=PERMUTATIONS, seed=_seed(rng)
    )
    out["pooled"] = float(res.pvalue[0, 1] <= ALPHA)
    out["clusters-pooled"] = _split(res.statistic, res.pvalue)
    return out


def _covers(res, target):
    low, high = res.ci_low[0, 0], res.ci_high[0, 0]
    return np.nan if np.isnan(low) or np.isnan(high) else float(low <= target <= high)


def coverage_outcomes(rng, shape, targets):
    """Coverage of the bootstrap and Fisher intervals of A's correlation with the criterion."""
    out = {}
    u, bias = fixed_systems(shape)
    h, x = study(rng, shape, u, bias=bias)
    designs = [(h, x, "item", "kendall", "inputs", targets["item"])]
    designs.append((h, x, "system", "pearson", "inputs", targets["system"]))
    h, x = study(rng, shape, equal_pair=False, bias="draw")
    for resample in ("systems", "both"):
        designs.append((h, x, "system", "pearson", resample, targets["system-random"]))
        designs.append((h, x, "item", "kendall", resample, targets["item-random"]))
    for h_, x_, level, method, resample, target in designs:
        seed = _seed(rng)
        for ci in ("percentile", "bca"):
            res = bootstrap_ci(
                x_[:1], h_[None], level=level, method=method, resample=resample,
                resamples=RESAMPLES, ci_method=ci, seed=seed,
            )  # fmt: skip
            out[f"boot-{level}-{resample}-{ci}"] = _covers(res, target)
    for level, n, target in (
        ("system", shape.systems, targets["system-random"]),
        ("global", shape.inputs * shape.systems, targets["global-random"]),
    ):
        r = level_correlation(x[:1], h[None], level=level, method="pearson").statistic[0, 0]
        low, high = fisher_interval(r, n)
        out[f"fisher-{level}"] = float(low <= target <= high)
    return out


def one_study(rng, shape, targets):
    """Every outcome (1 reject / cover, 0 not, NaN undefined) of one simulated study."""
    h, x = study(rng, shape)
    out = williams_outcomes(h, x, shape)
    out |= permutation_outcomes(rng, h, x)
    out |= system_pair_outcomes(rng, h)
    out |= accuracy_outcomes(rng, h, x)
    out |= coverage_outcomes(rng, shape, targets)
    return out


# --- many studies --------------------------------------------------------------------------


class Counts(NamedTuple):
    """Per row: the studies where the event happened (``hits``) and those where the row was
    defined (``studies``)."""

    hits: dict
    studies: dict


def simulate(shape, studies, *, seed=0, index=0, targets=None, keys=KEYS, study_fn=None, start=0):
    """Run studies ``start`` to ``start + studies - 1`` of ``shape``, study ``i`` from child
    ``i`` of ``SeedSequence([seed, index])`` (so blocks of studies add up to the same counts).
    ``study_fn(rng, shape, targets)`` (default :func:`one_study`) returns outcomes; only
    ``keys`` are counted."""
    study_fn = one_study if study_fn is None else study_fn
    if targets is None and study_fn is one_study:
        targets = population_values(shape)
    hits, n = dict.fromkeys(keys, 0), dict.fromkeys(keys, 0)
    children = np.random.SeedSequence([seed, index]).spawn(start + studies)[start:]
    for child in children:
        out = study_fn(np.random.default_rng(child), shape, targets)
        for key in keys:
            value = out.get(key, np.nan)
            if not np.isnan(value):
                hits[key] += int(value)
                n[key] += 1
    return Counts(hits, n)


def rate_interval(hits, studies):
    """The rate and its Clopper-Pearson 95% interval."""
    from scipy.stats import binomtest

    ci = binomtest(hits, studies).proportion_ci(confidence_level=0.95, method="exact")
    return hits / studies, float(ci.low), float(ci.high)


def cell(hits, studies, nominal):
    """A table cell ``rate [low, high]``, bold when the interval excludes ``nominal``."""
    if studies == 0:
        return "n/a"
    rate, low, high = rate_interval(hits, studies)
    text = f"{rate:.3f} [{low:.3f}, {high:.3f}]"
    return f"**{text}**" if not low <= nominal <= high else text


def off(results, row):
    """The shapes whose interval for ``row`` excludes its nominal rate."""
    found = []
    for shape, counts in results.items():
        k, n = counts.hits.get(row.key), counts.studies.get(row.key)
        if n:
            rate, low, high = rate_interval(k, n)
            if not low <= row.nominal <= high:
                found.append(f"{shape} {rate:.3f} [{low:.3f}, {high:.3f}]")
    return found


def table_lines(results, group):
    """The Markdown table of ``group`` ("test" or "coverage") from ``results`` (shape name ->
    :class:`Counts`)."""
    shapes = list(results)
    lines = [
        "| " + " | ".join(["", "nominal", *shapes]) + " |",
        "|" + "---|" * (len(shapes) + 2),
    ]
    for row in ROWS:
        if row.group != group:
            continue
        cells = [cell(c.hits[row.key], c.studies[row.key], row.nominal) for c in results.values()]
        lines.append(f"| {row.label} | {row.nominal:.2f} | " + " | ".join(cells) + " |")
    return lines


#: Why a row may be off: the known property behind it (printed under "What is off" for the
#: rows whose interval excludes the nominal rate in some shape).
REASONS = {
    "williams-item": (
        "the item-level statistic is a mean over inputs of correlations across the systems, "
        "and n = inputs is the HANNA paper's convention, not its sample size: Williams' t with "
        "n - 3 degrees of freedom is not that mean's null distribution (it assumes one Pearson "
        "correlation of n jointly normal observations)"
    ),
    "williams-system": (
        "Williams' t assumes Pearson correlations of jointly normal variables; on 10-16 system "
        "means of skewed, rank-transformed or tied data it is an approximation (a heuristic for "
        "Spearman and Kendall)"
    ),
    "williams-global": (
        "the items share input and system effects, so they are not the n independent "
        "observations the test assumes"
    ),
    "perm-systems": (
        "Kendall's tau of 10-16 system means takes few distinct values and the p-value counts "
        "the permutations that tie the observed value, so the test is conservative; "
        "PERM-SYS swaps whole systems: with S systems the null has at most 2^(S-1) distinct "
        "values, so the test is coarse and conservative with 10 systems"
    ),
    "perm-inputs": (
        "Kendall's tau of 10-16 system means takes few distinct values and the p-value counts "
        "the permutations that tie the observed value, so the test is conservative; "
        "PERM-INPUT swaps whole inputs, each swap moving the two metrics' scores of an input "
        "for every system at once"
    ),
    "perm-both": (
        "Kendall's tau of 10-16 system means takes few distinct values and the p-value counts "
        "the permutations that tie the observed value, so the test is conservative; "
        "PERM-BOTH swaps the metrics' z-scores cell by cell; the z-scores are computed once "
        "on the data, not re-standardised per permutation"
    ),
    "bootstrap-any": (
        "two one-sided decisions at 0.05 (Koehn 2004; the HANNA paper's Sec. 5.3): a label "
        "either way is a two-sided test at 0.10 by construction"
    ),
    "bootstrap-one": (
        "the bootstrap share of wins estimates Phi(mean / se) with the plug-in standard error: "
        "a z-test, slightly liberal at small n and on coarse ratings"
    ),
    "spa-pair": "a sign-flip test, exact for symmetric per-input differences",
    "calibrated": (
        "mt-metrics-eval's PairwisePermutationSigDiff (the default swap='pairs') swaps the two "
        "metrics' outcomes pair by pair as if the pairs were independent, but the pairs of a "
        "group share observations (each is in S - 1 pairs), so the permutation null is too "
        "narrow and the test liberal at item level. Not the choice of epsilon: with epsilon "
        "fixed at 0 it rejects as often. swap='scores' (mt-metrics-eval's PermutationSigDiff "
        "with the tie calibration re-run in every permutation: the row below) swaps whole "
        "scores and keeps its level"
    ),
    "calibrated-system": (
        "at system level each metric has one value per system and the swaps of the pairs of "
        "systems' outcomes give a coarse null with many ties of the observed difference, "
        "counted as reaching it: conservative"
    ),
    "pooled": (
        "swaps the two metrics' z-scored system values per system, on the few (S(S-1)/2) "
        "pairs of one subset: a coarse null"
    ),
    "clusters": (
        "a cluster boundary is a one-sided test in the direction of the observed order, so two "
        "measures of equal quality fall apart at about twice the rate of its test (2 alpha = "
        "0.10 by construction; the column 'nominal' says so) and at twice its error where the "
        "test is off"
    ),
    "boot-item": (
        "the mean of per-input Kendall correlations is slightly skewed with 10 systems per "
        "input; the percentile interval does not correct it (BCa does, within its interval)"
    ),
    "boot-item-systems": (
        "resampling systems alone ignores the variability of the inputs, which every study "
        "draws afresh, and a bootstrap over 10-16 systems is too narrow: the interval "
        "under-covers, more where the inputs are noisy (WMT's MQM-like scores)"
    ),
    "boot-item-both": (
        "resampling inputs and systems independently (the two-way, 'pigeonhole' bootstrap) "
        "counts the cell-level variation twice, so its variance is too large and the interval "
        "conservative (Owen 2007, The Annals of Applied Statistics 1(2)); the item-level mean "
        "of within-input correlations is mostly cell-level noise, so it shows most there"
    ),
    "boot-system-inputs": (
        "a correlation of S system means is biased towards 0 by the inputs' noise in the means "
        "(attenuation), which resampling inputs reproduces but does not remove; with 10-16 "
        "systems the sampling distribution is also skewed"
    ),
    "boot-system-systems": (
        "resampling systems alone ignores the variability the inputs add to each system's mean, "
        "and with 10-16 systems the bootstrap of a correlation is too narrow (the percentile "
        "interval of a sample of 10 under-covers; Efron and Tibshirani 1993, ch. 14)"
    ),
    "boot-system-both": (
        "resampling both axes adds the inputs' variability; with 10-16 systems the bootstrap "
        "of a correlation still has the small-sample bias of resampling 10-16 units"
    ),
    "fisher-system": (
        "Fisher's z assumes bivariate normal pairs; system means of ratings on a 1-5 scale or "
        "of MQM penalties are close to it, but the criterion's nonlinearity is not"
    ),
    "fisher-global": (
        "the G S cells are not independent (they share input and system effects), so n = G S "
        "overstates the information and the interval is far too narrow"
    ),
}


def reason(key):
    """The entry of :data:`REASONS` with the longest prefix of ``key``."""
    found = [k for k in REASONS if key.startswith(k)]
    return REASONS[max(found, key=len)] if found else "not explained: to investigate"


def render(results, *, studies, seed, seconds, targets):
    """The page ``docs/error-rates.md`` from ``results`` (shape name -> :class:`Counts`)."""
    lines = [
        "# Error rates of the tests and coverage of the intervals",
        "",
        "Written by `python docs/error_rates.py --studies "
        f"{studies} --seed {seed}` (issue 31) in {seconds / 60:.1f} minutes; do not edit by hand.",
        f"Each cell: the rate over {studies} simulated studies of each data shape with its "
        "Clopper-Pearson 95% interval (`scipy.stats.binomtest(k, n).proportion_ci()`); **bold** "
        "where the interval excludes the nominal rate. A test rejects when its p-value is at "
        f"most {ALPHA} (mt-metrics-eval's and `significance_clusters`' rule); permutation "
        f"tests use {PERMUTATIONS} permutations (with no identity added, an exact null then "
        f"rejects with probability exactly 0.05), bootstraps {RESAMPLES} resamples. A row "
        "whose test is undefined in a study (a constant vector) counts only the studies where "
        f"it is defined. With {len(ROWS) * len(SHAPES)} cells, each interval at 95%, about "
        f"{round(0.05 * len(ROWS) * len(SHAPES))} cells of sound tests and intervals are bold by "
        "chance alone: a row is off when it is bold in several shapes or far from its nominal "
        "rate.",
        "",
        "## Generating models",
        "",
        MODEL,
        "## Tests under their null: rejection rate at 0.05",
        "",
        "A > B: the one-sided p-value of 'metric A agrees better' (the analyses' default "
        '`alternative="greater"`); 0 > 1: systems 0 and 1 of equal quality, on the criterion. '
        "The significance clusters are those of `metric_clusters` (PERM-BOTH, item level, "
        'Kendall, the default; `method="acc_eq"`: the calibrated test) and '
        "`pooled_accuracy`.",
        "",
        *table_lines(results, "test"),
        "",
        "## Coverage of the 95% intervals",
        "",
        *table_lines(results, "coverage"),
        "",
        "Population values (A with the criterion): "
        + "; ".join(
            f"{name}: " + ", ".join(f"{k} {v:.4f}" for k, v in values.items())
            for name, values in targets.items()
        )
        + ".",
        "",
        "## What is off",
        "",
        "Each row whose interval excludes its nominal rate in some shape, with the measured "
        "rates and the reason (a known property of the test or interval, not a bug of its "
        "kernel: each kernel reproduces its outside reference, docs/options.md).",
        "",
    ]
    for row in ROWS:
        found = off(results, row)
        if found:
            lines.append(f"- **{row.label}** (nominal {row.nominal:.2f}): {'; '.join(found)}.")
            lines.append(f"  Why: {reason(row.key)}.")
    return "\n".join(lines) + "\n"


def _block(args):
    """A block of studies in a worker process: one thread each (the kernels' results do not
    depend on the thread count), so that the processes share the cores without contention."""
    import numba

    numba.set_num_threads(1)
    shape, studies, seed, index, targets, start = args
    return simulate(shape, studies, seed=seed, index=index, targets=targets, start=start)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--studies", type=int, default=STUDIES)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("error-rates.md"))
    args = parser.parse_args(argv)
    began = time.perf_counter()
    from concurrent.futures import ProcessPoolExecutor

    results, targets = {}, {}
    with ProcessPoolExecutor(args.jobs) as pool:
        values = pool.map(population_values, SHAPES)
        targets = dict(zip([s.name for s in SHAPES], values, strict=True))
        for index, shape in enumerate(SHAPES):
            step = -(-args.studies // args.jobs)
            tasks = [
                (shape, min(step, args.studies - lo), args.seed, index, targets[shape.name], lo)
                for lo in range(0, args.studies, step)
            ]
            parts = list(pool.map(_block, tasks))
            results[shape.name] = Counts(
                *({k: sum(p[i][k] for p in parts) for k in KEYS} for i in range(2))
            )
            print(f"{shape.name}: {time.perf_counter() - began:.0f} s", flush=True)
    seconds = time.perf_counter() - began
    page = render(results, studies=args.studies, seed=args.seed, seconds=seconds, targets=targets)
    args.out.write_text(page, encoding="utf-8")
    print(page)


if __name__ == "__main__":
    main()
