"""Benchmarks of the LLM-judge analyses (Chhun et al., TACL 2024) and of nominal agreement.

Run from the repository root: ``python benchmarks/judges.py [--data DIR] [--quick]`` (default
data folder ``$HANNA_DATA`` or ``../shared/data/hanna``). Every part times our code AND an
independent baseline on the same work in the same run, checks that their values agree (the
largest absolute difference is printed; the script fails if it exceeds the stated tolerance) and
prints both times and the ratio ours / baseline.

Part 1, HANNA's LLM-judge file (``hanna_metric_scores_llm.csv``: 5 judges x 7 ratings x 4 prompt
variants = 140 LLM-judge measures, 72 metrics, 3 human raters x 6 criteria), Kendall tau-b at the
story, system and global levels:

- ``judge_criteria`` (every judge measure against its criterion, with the human rater row),
  ``rater_panel`` (each rater against the panel, ``reference="panel"`` and ``"others"``);
- Williams tests of every ordered pair of competing measures for every criterion
  (``williams_all``, ``kinds=("metric", "llm-judge")``, Benjamini-Hochberg over the "pair"
  family, as Chhun et al.).

Ours starts from a loaded Study (``hanna_stats.open_study``) and is timed warm (one call loads the
Numba cache, then the best of several repeats), each repeat on a fresh copy of the Study with an
empty memo, so no repeat is a cache hit. The baseline reads the CSV with pandas and does what the
authors' notebook does (dig-team/hanna-benchmark-asg, ``data_visualization.ipynb``): the JSON
cells as numpy arrays, ``np.mean`` over the prompts for the system level, the 960 stories pooled
for the global level, one prompt's 10 systems per group at story level (then ``np.nanmean`` over
the prompts), one ``scipy.stats.kendalltau`` call per cell and group, the textbook Williams
formula with ``scipy.stats.t`` per ordered pair and ``scipy.stats.false_discovery_control`` per
family. It calls no hanna_stats code. Its JSON parsing is done once, outside the timings (ours
likewise excludes building the store). At story level the Williams baseline would take minutes:
it runs on a random sample of the pair families, is extrapolated by the number of correlation
cells, and the values are compared on that sample, as the printout says.

Part 2, nominal agreement on 1,000,002 categorical labels (333,334 items x 3 raters, 5
categories, about 5 % missing, seeded): our ``fleiss_kappa``, ``gwet_ac`` (AC1),
``cohen_kappa`` and ``krippendorff_alpha(level_of_measurement="nominal")`` against
``statsmodels.stats.inter_rater`` (Fleiss' kappa on the complete items only, as it requires;
Cohen's kappa from its contingency table), scikit-learn's ``cohen_kappa_score``, the
``krippendorff`` package and the ``irrCAC`` package (Gwet's AC1 and Fleiss' kappa with missing
ratings), each oracle timed once on the same data in the same process. An oracle that is not
installed is skipped with a note.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import scipy.stats

import hanna_stats
from hanna_stats.analyses.correlations import judge_criteria, rater_panel
from hanna_stats.analyses.significance import williams_all
from hanna_stats.kernels import cohen_kappa, fleiss_kappa, gwet_ac, krippendorff_alpha

REPO = Path(__file__).resolve().parents[1]
LEVELS = ("story", "system", "global")
#: The notebook's CRITERIA and CRITERIA_LABELS.
CRITERIA = {
    "RE": "Relevance",
    "CH": "Coherence",
    "EM": "Empathy",
    "SU": "Surprise",
    "EG": "Engagement",
    "CX": "Complexity",
}
JUDGE_COLUMN = re.compile(r"^(?P<judge>.+) (?P<abbr>RE|CH|EM|SU|EG|CX|AVG) (?P<prompt>\d+)$")
#: Largest absolute difference between ours and a baseline accepted as agreement.
TOLERANCE = 1e-12
SUMMARY: list[tuple[str, float, float, str, str]] = []


# ----------------------------------------------------------------------------- helpers


def best_time(repeats: int, f, *args, **kwargs) -> float:
    """Best of ``repeats`` warm calls (the first call compiles or loads the Numba cache)."""
    f(*args, **kwargs)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return min(times)


def timed(f, *args, **kwargs):
    """``(seconds, f(*args, **kwargs))`` of one call."""
    start = time.perf_counter()
    value = f(*args, **kwargs)
    return time.perf_counter() - start, value


def fresh(study):
    """A copy of ``study`` with an empty memo: every analysis is computed anew, not looked up."""
    return dataclasses.replace(study, _memo={})


def max_difference(pairs) -> tuple[float, int]:
    """Largest |ours - baseline| over ``(ours, baseline)`` pairs, and the number of pairs where
    exactly one of the two is NaN (both NaN counts as agreement)."""
    worst, mismatched = 0.0, 0
    for ours, theirs in pairs:
        a, b = float(ours), float(theirs)
        if math.isnan(a) or math.isnan(b):
            mismatched += math.isnan(a) != math.isnan(b)
            continue
        worst = max(worst, abs(a - b))
    return worst, mismatched


def record(work: str, ours: float, baseline: float, agreement: str, note: str = "") -> None:
    """Print one comparison and keep it for the summary table."""
    print(
        f"  {work:<44} ours {ours * 1e3:10.2f} ms | baseline {baseline * 1e3:11.1f} ms | "
        f"ours/baseline {ours / baseline:8.4f} (x{baseline / ours:,.1f}) | {agreement}"
        + (f" | {note}" if note else ""),
        flush=True,
    )
    SUMMARY.append((work, ours, baseline, agreement, note))


def check(work: str, worst: float, mismatched: int, tolerance: float = TOLERANCE) -> str:
    """The agreement text of ``work``; AssertionError if the values do not agree."""
    assert mismatched == 0, f"{work}: {mismatched} values NaN on one side only"
    assert worst <= tolerance, f"{work}: max |ours - baseline| = {worst:.3e} > {tolerance:.0e}"
    return f"max |diff| {worst:.1e}"


# ----------------------------------------------------------------------------- the baseline


def read_llm_file(path: Path) -> dict[str, np.ndarray]:
    """Every column of the LLM-judge file as a (96 prompts, 10 systems) array, Human row dropped.

    As the notebook (``METRICS_DF_NO_HUMAN``): ``np.array([json.loads(cell) for cell in
    column]).T``.
    """
    frame = pd.read_csv(path, index_col="Model").drop(index="Human")
    return {c: np.array([json.loads(v) for v in frame[c]], dtype=np.float64).T for c in frame}


def level_groups(x: np.ndarray, level: str) -> list[np.ndarray]:
    """The groups one correlation is computed in at ``level``, from a (prompts, systems) array."""
    if level == "system":
        return [np.mean(x, axis=0)]  # the notebook's get_system_level_correlation
    if level == "global":
        return [x.flatten()]  # the notebook's "overall": all stories pooled
    return list(x)  # story level: per prompt, across the systems


class Correlations:
    """Kendall tau-b of two columns at one level: one scipy call per group, mean over groups.

    Each cell is computed once and kept (the notebook recomputes each one from the JSON; that
    is not counted against it here). ``cells`` counts the cells computed.
    """

    def __init__(self, data: dict[str, np.ndarray], level: str):
        self.data, self.level = data, level
        self.groups: dict[str, list[np.ndarray]] = {}
        self.cache: dict[tuple[str, str], float] = {}

    def of(self, column: str) -> list[np.ndarray]:
        if column not in self.groups:
            self.groups[column] = level_groups(self.data[column], self.level)
        return self.groups[column]

    def __call__(self, u: str, v: str) -> float:
        key = (u, v) if u <= v else (v, u)
        if key not in self.cache:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a constant group: NaN, skipped below
                values = [
                    scipy.stats.kendalltau(x, y).statistic
                    for x, y in zip(self.of(u), self.of(v), strict=True)
                ]
            valid = [t for t in values if not math.isnan(t)]
            self.cache[key] = float(np.mean(valid)) if valid else math.nan
        return self.cache[key]

    @property
    def cells(self) -> int:
        return len(self.cache)


def judge_columns(data: dict[str, np.ndarray]) -> list[tuple[str, str, str, str]]:
    """``(column, judge, abbreviation, prompt)`` of every LLM-judge column, in file order."""
    return [
        (c, m["judge"], m["abbr"], m["prompt"])
        for c in data
        if (m := JUDGE_COLUMN.match(c)) and not c.startswith("Human")
    ]


def nan_mean_abs(values) -> float:
    values = np.abs(np.asarray(values, dtype=np.float64))
    return float(np.nanmean(values)) if np.isfinite(values).any() else math.nan


def baseline_rater_panel(data, level: str, reference: str) -> dict[tuple[str, str], float]:
    """Each rater k against the panel: the 3-rater mean (the criterion column) or, leave-one-out,
    the file's ``Human Avg k`` columns; ``"mean"`` averages the raters."""
    corr = Correlations(data, level)
    out = {}
    for abbr, criterion in CRITERIA.items():
        values = []
        for k in (1, 2, 3):
            panel = criterion if reference == "panel" else f"Human Avg {k} {abbr}"
            values.append(corr(f"Human {k} {abbr}", panel))
            out[str(k), criterion] = values[-1]
        valid = [v for v in values if not math.isnan(v)]
        out["mean", criterion] = float(np.mean(valid)) if valid else math.nan
    return out


def baseline_judge_criteria(data, level: str) -> dict[tuple[str, str | None, str], float]:
    """Every judge measure of a criterion against that criterion, the human rater row (mean of
    the raters against the panel) and each column's mean |tau|."""
    corr = Correlations(data, level)
    panel = baseline_rater_panel(data, level, "panel")
    out = {("Human rater", None, c): panel["mean", c] for c in CRITERIA.values()}
    out["Human rater", None, "mean |r|"] = nan_mean_abs(list(out.values()))
    columns: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for column, judge, abbr, prompt in judge_columns(data):
        if abbr in CRITERIA:
            columns.setdefault((judge, prompt), []).append((CRITERIA[abbr], column))
    for (judge, prompt), rated in columns.items():
        values = [corr(column, criterion) for criterion, column in rated]
        for (criterion, _), value in zip(rated, values, strict=True):
            out[judge, prompt, criterion] = value
        out[judge, prompt, "mean |r|"] = nan_mean_abs(values)
    return out


def williams_t(r12: float, r13: float, r23: float, n: int) -> float:
    """Williams' T2 (Steiger 1980, eq. 7), the textbook formula; NaN where it is undefined."""
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    denominator = 2 * k * (n - 1) / (n - 3) + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3
    if not denominator > 0 or not abs(r23) < 1:
        return math.nan
    return (r12 - r13) * math.sqrt((n - 1) * (1 + r23) / denominator)


def competitors(data) -> tuple[dict[str, list[str]], dict[str, str], dict[str, str]]:
    """Per criterion the measures competing on it: the 72 metrics and the judges' averages (all
    criteria), the judge measures of that criterion; each measure's family identity (a judge's
    measures of the criteria: judge and prompt) and its name in our catalogue."""
    judged = {c: (j, a, p) for c, j, a, p in judge_columns(data)}
    metrics = [
        c for c in list(data)[6:] if c not in judged and not c.startswith("Human")
    ]  # the notebook's METRICS: the columns after the 6 criteria
    identity, ours = {}, {}
    for column in metrics:
        identity[column] = ours[column] = column.rsplit(" ", 1)[0]  # drop the family symbol
    for column, (judge, abbr, prompt) in judged.items():
        name = f"{judge} {CRITERIA.get(abbr, 'Average')} (prompt {prompt})"
        ours[column] = name
        identity[column] = f"{judge} (prompt {prompt})" if abbr in CRITERIA else name
    general = metrics + [c for c, (_, a, _) in judged.items() if a == "AVG"]
    per_criterion = {
        criterion: general + [c for c, (_, a, _) in judged.items() if a == abbr]
        for abbr, criterion in CRITERIA.items()
    }
    return per_criterion, identity, ours


def williams_cells(per_criterion, identity, families=None) -> set[tuple[str, str]]:
    """The correlation cells the Williams baseline needs (for the pair ``families`` only)."""
    cells = set()
    for criterion, measures in per_criterion.items():
        for a in measures:
            for b in measures:
                if a == b or (families and frozenset((identity[a], identity[b])) not in families):
                    continue
                cells |= {tuple(sorted(p)) for p in ((criterion, a), (criterion, b), (a, b))}
    return cells


def baseline_williams(data, level: str, n: int, families=None):
    """Williams tests of every ordered pair of competitors of every criterion, BH per family.

    Returns ``({(criterion, our name a, our name b): (r_a, r_b, r_ab, t, p, p_adjusted)}, cells,
    rows with a zero correlation)``. ``families``: a set of unordered identity pairs to test
    (default all). A measure negatively correlated with the criterion has its sign flipped (and
    its correlation with the other measure with it), with sign(0) = +1.
    """
    corr = Correlations(data, level)
    per_criterion, identity, ours = competitors(data)
    rows, zero = {}, 0
    by_family: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for criterion, measures in per_criterion.items():
        r = {m: corr(criterion, m) for m in measures}
        for a in measures:
            for b in measures:
                pair = (identity[a], identity[b])
                if a == b or (families and frozenset(pair) not in families):
                    continue
                r_ab = corr(a, b)
                zero += r[a] == 0 or r[b] == 0
                sign = (1.0 if r[a] >= 0 else -1.0) * (1.0 if r[b] >= 0 else -1.0)
                t = williams_t(abs(r[a]), abs(r[b]), sign * r_ab, n)
                p = scipy.stats.t.sf(t, n - 3) if not math.isnan(t) else math.nan
                key = (criterion, ours[a], ours[b])
                rows[key] = [r[a], r[b], r_ab, t, float(p), math.nan]
                by_family.setdefault(pair, []).append(key)
    for keys in by_family.values():
        tested = [k for k in keys if not math.isnan(rows[k][4])]
        if tested:
            adjusted = scipy.stats.false_discovery_control([rows[k][4] for k in tested])
            for k, q in zip(tested, adjusted, strict=True):
                rows[k][5] = float(q)
    return rows, corr.cells, zero


# ----------------------------------------------------------------------------- part 1


def bench_analyses(study, data, repeats: int) -> None:
    """judge_criteria and rater_panel at each level against the baseline."""
    for level in LEVELS:
        ours = best_time(
            repeats, lambda level=level: judge_criteria(fresh(study), level=level, method="kendall")
        )
        base, want = timed(baseline_judge_criteria, data, level)
        got = judge_criteria(fresh(study), level=level, method="kendall")
        keys = list(got.select("rater", "prompt", "criterion").iter_rows())
        assert set(keys) == set(want), f"judge_criteria {level}: rows differ from the baseline"
        agreement = check(
            f"judge_criteria {level}",
            *max_difference(zip(got["statistic"], (want[k] for k in keys), strict=True)),
        )
        judges = sum(1 for k in want if k[0] != "Human rater" and k[2] != "mean |r|")
        record(f"judge_criteria, {level}", ours, base, f"{agreement} ({judges} judge cells)")
        for reference in ("panel", "others"):
            options = {"level": level, "method": "kendall", "reference": reference}
            ours = best_time(repeats, lambda o=options: rater_panel(fresh(study), **o))
            base, want = timed(baseline_rater_panel, data, level, reference)
            got = rater_panel(fresh(study), **options)
            keys = list(got.select("rater", "criterion").iter_rows())
            assert set(keys) == set(want), f"rater_panel {level} {reference}: rows differ"
            agreement = check(
                f"rater_panel {level} {reference}",
                *max_difference(zip(got["statistic"], (want[k] for k in keys), strict=True)),
            )
            record(f"rater_panel, {level}, reference={reference}", ours, base, agreement)


def bench_williams(study, data, repeats: int, story_fraction: float) -> None:
    """williams_all with the judges (family "pair", BH) at each level against the baseline."""
    inputs, systems = next(iter(data.values())).shape
    per_criterion, identity, _ = competitors(data)
    options = {
        "methods": ("kendall",),
        "kinds": ("metric", "llm-judge"),
        "correction": "bh",
        "family": "pair",
    }
    for level in LEVELS:
        n = {"story": inputs, "system": systems, "global": inputs * systems}[level]
        families, note = None, ""
        total_cells = len(williams_cells(per_criterion, identity))
        if level == "story" and story_fraction < 1:
            everything = sorted(
                {
                    tuple(sorted((identity[a], identity[b])))
                    for ms in per_criterion.values()
                    for a in ms
                    for b in ms
                    if identity[a] != identity[b]
                }
            )
            rng = np.random.default_rng(0)
            pick = rng.choice(len(everything), round(story_fraction * len(everything)), False)
            families = {frozenset(everything[i]) for i in pick}
        ours = best_time(
            repeats, lambda level=level: williams_all(fresh(study), levels=(level,), **options)
        )
        base, (want, cells, zero) = timed(baseline_williams, data, level, n, families)
        if families:
            note = (
                f"baseline on {len(families)} of {len(everything)} pair families "
                f"({cells} of {total_cells} correlation cells), "
                f"extrapolated x{total_cells / cells:.1f}"
            )
            base *= total_cells / cells
        got = williams_all(fresh(study), levels=(level,), **options)
        columns = ("r_a", "r_b", "r_ab", "statistic", "pvalue", "pvalue_adjusted")
        values = got.select("criterion", "measure_a", "measure_b", *columns).rows()
        if families is None:
            assert len(values) == len(want), f"Williams {level}: {len(values)} rows, {len(want)}"
        compared = [(row[3:], want[row[:3]]) for row in values if row[:3] in want]
        assert len(compared) == len(want), f"Williams {level}: rows missing from ours"
        parts = []
        for k, column in enumerate(columns):
            worst, mismatched = max_difference((o[k], b[k]) for o, b in compared)
            # Williams' t grows without bound near a singular correlation matrix: compare it
            # relative to its size there.
            if column == "statistic":
                worst = max(
                    (abs(o[k] - b[k]) / max(1.0, abs(b[k])) for o, b in compared if o[k] == o[k]),
                    default=0.0,
                )
            check(f"Williams {level} {column}", worst, mismatched)
            parts.append(worst)
        agreement = f"max |diff| {max(parts):.1e} ({len(compared):,} rows x {len(columns)} values)"
        if zero:
            agreement += f"; {zero} rows with a correlation exactly 0"
        record(f"Williams + BH (pair family), {level}", ours, base, agreement, note)


# ----------------------------------------------------------------------------- part 2


def categorical(rng: np.random.Generator, items: int, raters: int, categories: int, missing):
    """Items x raters labels 1..categories (float, NaN = missing): each rater gives the item's
    latent category with probability 0.6, else a uniform one; ``missing`` of ratings removed."""
    truth = rng.integers(1, categories + 1, items)
    noise = rng.integers(1, categories + 1, (items, raters))
    x = np.where(rng.random((items, raters)) < 0.6, truth[:, None], noise).astype(np.float64)
    x[rng.random((items, raters)) < missing] = np.nan
    return x


def bench_nominal(repeats: int, items: int) -> None:
    from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, to_table
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

    rng = np.random.default_rng(20240601)
    x = categorical(rng, items, 3, 5, 0.05)
    categories = [1.0, 2.0, 3.0, 4.0, 5.0]
    complete = x[~np.isnan(x).any(axis=1)]
    pairs = x[:, :2][~np.isnan(x[:, :2]).any(axis=1)]
    print(
        f"{items:,} items x 3 raters = {x.size:,} labels, 5 categories, "
        f"{np.isnan(x).mean():.2%} missing; {len(complete):,} complete items; "
        f"{len(pairs):,} items rated by raters 1 and 2",
        flush=True,
    )

    # Fleiss' kappa, complete items only (statsmodels needs a fixed number of raters per item).
    ours = best_time(repeats, fleiss_kappa, complete)
    base, want = timed(
        lambda: sm_fleiss_kappa(aggregate_raters(complete.astype(np.int64))[0], method="fleiss")
    )
    worst = abs(fleiss_kappa(complete).statistic - want)
    agreement = check("Fleiss vs statsmodels", worst, 0)
    record("Fleiss' kappa (complete items) vs statsmodels", ours, base, agreement)

    # Cohen's kappa of raters 1 and 2: ours drops the items either rater missed; the oracles are
    # given the items rated by both (statsmodels: their contingency table, built by to_table).
    ours = best_time(repeats, cohen_kappa, x[:, 0], x[:, 1])
    got = cohen_kappa(x[:, 0], x[:, 1])
    base, want = timed(lambda: cohens_kappa(to_table(pairs.astype(np.int64))[0]))
    worst = max(abs(got.statistic - want.kappa), abs(got.standard_error - want.std_kappa))
    agreement = check("Cohen vs statsmodels", worst, 0) + " (kappa, SE)"
    record("Cohen's kappa vs statsmodels", ours, base, agreement)
    try:
        from sklearn.metrics import cohen_kappa_score
    except ImportError:
        print("  scikit-learn not installed: its Cohen's kappa skipped")
    else:
        base, want = timed(cohen_kappa_score, pairs[:, 0], pairs[:, 1])
        agreement = check("Cohen vs sklearn", abs(got.statistic - want), 0)
        record("Cohen's kappa vs scikit-learn", ours, base, agreement)

    # Krippendorff's alpha, nominal, all items (units with fewer than 2 ratings are not pairable).
    ours = best_time(repeats, krippendorff_alpha, x, level_of_measurement="nominal")
    try:
        import krippendorff
    except ImportError:
        print("  package 'krippendorff' not installed: its alpha skipped")
    else:
        base, want = timed(krippendorff.alpha, reliability_data=x.T, level_of_measurement="nominal")
        got = krippendorff_alpha(x, level_of_measurement="nominal").statistic
        agreement = check("alpha vs krippendorff", abs(got - want), 0)
        record("Krippendorff's alpha (nominal) vs krippendorff", ours, base, agreement)

    # Gwet's AC1 and Fleiss' kappa with missing ratings against irrCAC (Gwet's formulas).
    try:
        from irrCAC.raw import CAC
    except ImportError:
        print("  package 'irrCAC' not installed: AC1 and Fleiss with missing ratings skipped")
        return

    # irrCAC rounds to `digits` decimals (default 5): ask for all of them. Its categories are
    # given: irrCAC 0.4.4 collects them with DataFrame.stack(), which under pandas 3 keeps NaN,
    # so NaN would become a sixth category (AC1 depends on the number of categories).
    def irrcac(method):
        frame = pd.DataFrame(x)
        return getattr(CAC(frame, categories=categories, digits=30), method)()["est"]

    for name, ours_f, method in (
        ("Gwet's AC1", gwet_ac, "gwet"),
        ("Fleiss' kappa (missing ratings)", fleiss_kappa, "fleiss"),
    ):
        ours = best_time(repeats, ours_f, x)
        got = ours_f(x)
        base, want = timed(irrcac, method)
        worst = max(
            abs(got.statistic - want["coefficient_value"]),
            abs(got.standard_error - want["se"]),
            abs(got.observed_agreement - want["pa"]),
            abs(got.chance_agreement - want["pe"]),
        )
        # irrCAC sums the item terms with Python's sum() one by one, numpy pairwise: rounding
        # differences grow with the number of items, hence the looser tolerance here.
        agreement = check(f"{name} vs irrCAC", worst, 0, 1e-10) + " (coefficient, SE, pa, pe)"
        record(f"{name} vs irrCAC", ours, base, agreement)


# ----------------------------------------------------------------------------- main


def summary() -> None:
    print("\nSummary (ours warm, best of the repeats; baselines one run)")
    print(
        f"  {'work':<50} {'ours ms':>10} {'baseline ms':>12} {'ours/base':>10} {'speed-up':>9}"
        "  agreement"
    )
    for work, ours, base, agreement, note in SUMMARY:
        print(
            f"  {work:<50} {ours * 1e3:10.2f} {base * 1e3:12.1f} {ours / base:10.4f} "
            f"{base / ours:8.1f}x  {agreement}" + (" *" if note else "")
        )
    print("  * baseline extrapolated, values compared on its sample (see the note above)")


def main(argv: list[str] | None = None) -> None:
    default = Path(os.environ.get("HANNA_DATA", REPO.parent / "shared" / "data" / "hanna"))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=default, help="HANNA data folder")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="fewer repeats, a smaller story-level sample, 1e5 labels",
    )
    args = parser.parse_args(argv)
    repeats = 2 if args.quick else 5

    print("Part 1: the LLM-judge analyses on HANNA (Kendall tau-b)")
    seconds, study = timed(hanna_stats.open_study, args.data)
    load, data = timed(read_llm_file, args.data / "hanna_metric_scores_llm.csv")
    judges = len(judge_columns(data))
    kinds = pl.Series(study.kinds).value_counts(sort=True).rows()
    print(
        f"  store: {dict(kinds)} measures, {len(study.inputs)} prompts x {len(study.systems)} "
        f"systems; {judges} LLM-judge columns in the file"
    )
    print(
        f"  loading (not in the timings): open_study {seconds:.2f} s; pandas read_csv + JSON "
        f"cells {load:.2f} s",
        flush=True,
    )
    assert judges == 140, judges
    bench_analyses(study, data, repeats)
    bench_williams(study, data, max(1, repeats - 2), 0.02 if args.quick else 0.125)

    print("\nPart 2: nominal agreement")
    bench_nominal(repeats, 33_334 if args.quick else 333_334)
    summary()


if __name__ == "__main__":
    main()
