"""End-to-end benchmark of ``python -m hanna_stats report`` against an authors'-style pipeline.

Run from the repository root: ``python benchmarks/report.py [HANNA_DIR]`` (default
``$HANNA_DATA`` or ``../shared/data/hanna``). ``--against CHECKOUT`` times instead the warm
report of this checkout and of another one (``git worktree add /tmp/base HEAD~1``), alternating
in the same run (``--rounds N`` warm runs each, default 3), and prints the ratio.

Ours: the wall time of a new process, from its start until the HTML file is written, twice:
with an empty Numba cache (every kernel compiled: the first run after installing) and with the
cache the first run left (every later run). Target: under 30 s on 2 cores.

Baseline: the same statistics the way the paper's notebooks compute them, in this process on the
same data: the CSV parsed with ``json.loads`` per cell, one ``scipy.stats`` call per prompt for
every correlation (metric-criterion, criterion-criterion and metric-metric at story and system
level, 3 coefficients), a Python loop for the bootstrap CIs, the paired bootstrap of systems and
the Williams tests, ``pingouin.intraclass_corr`` per criterion, t-intervals with scipy, top-k
and Borda from scipy correlations and ranks. Charts are not counted in the baseline. Parts that
would take minutes or hours are timed on a stated fraction and extrapolated linearly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.stats
from bench_resampling import loop_bootstrap  # benchmarks/ is on sys.path
from bench_significance import authors_bootstrap, loop_williams
from cold_start import import_root
from correlations import SCIPY, load_hanna, scipy_loop

REPO = Path(__file__).resolve().parents[1]
N_CRITERIA = 6


def run_report(data: Path, cache: Path, checkout: Path = REPO) -> float:
    """Seconds from process start to the report written, with Numba's cache in ``cache``, by
    the package of ``checkout`` (its :func:`cold_start.import_root`, made in ``cache``, first
    on ``PYTHONPATH``)."""
    root = import_root(checkout, cache)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "CI": "1", "PYTHONPATH": str(root)}
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "hanna_stats", "report", "--data", str(data)]
        start = time.perf_counter()
        subprocess.run([*cmd, "--out", f"{out}/r.html"], check=True, env=env, cwd=root)
        return time.perf_counter() - start


def against(data: Path, other: Path, rounds: int = 3) -> None:
    """Warm report time of this checkout against another one (e.g. a ``git worktree`` of the
    previous commit), alternating runs in the same process, each with its own warmed cache."""
    times: dict[Path, list[float]] = {REPO: [], other: []}
    with tempfile.TemporaryDirectory() as ours, tempfile.TemporaryDirectory() as theirs:
        caches = {REPO: Path(ours), other: Path(theirs)}
        for checkout in times:  # fill each cache (the cold run is not counted)
            run_report(data, caches[checkout], checkout)
        for _ in range(rounds):
            for checkout in times:
                times[checkout].append(run_report(data, caches[checkout], checkout))
    mine, base = (float(np.median(times[c])) for c in (REPO, other))
    print(f"warm report, median of {rounds}: this checkout {mine:.1f} s, {other} {base:.1f} s")
    print(f"ratio this / other: {mine / base:.2f}")


def pairs_of(rows: range, cols: range, *, upper: bool = False) -> list[tuple[int, int]]:
    return [(i, j) for i in rows for j in cols if not upper or j >= i]


def sampled(pairs: list, k: int) -> tuple[list, float]:
    """``k`` of ``pairs`` (seeded) and the extrapolation factor."""
    if k >= len(pairs):
        return pairs, 1.0
    rng = np.random.default_rng(0)
    return [pairs[i] for i in rng.choice(len(pairs), k, replace=False)], len(pairs) / k


def system_bootstrap_loop(A, C, method, inputs, pairs) -> float:
    """Seconds of the loop baseline for system-level CIs: resample inputs, means, one call."""
    f = SCIPY[method]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, j in pairs:
            samples = [f(A[i, rows].mean(0), C[j, rows].mean(0)).statistic for rows in inputs]
            np.percentile(samples, [2.5, 97.5])
    return time.perf_counter() - start


def baseline(csv: Path, llm_csv: Path) -> list[tuple[str, float, str]]:
    """The authors'-style pipeline, part by part: (part, seconds, how it was timed)."""
    parts = []
    start = time.perf_counter()
    X = load_hanna(csv)  # (78, 96, 10): 6 criteria then 72 metrics, Human dropped
    parts.append(("parse the CSV (json.loads per cell)", time.perf_counter() - start, "full"))
    C, A = X[:N_CRITERIA], X[N_CRITERIA:]
    crit, metr = range(N_CRITERIA), range(N_CRITERIA, X.shape[0])
    n_inputs, n_systems = X.shape[1], X.shape[2]

    # Correlations: metric-criterion, criterion-criterion, metric-metric; 2 levels x 3 methods.
    for label, pairs in (
        ("metric-criterion correlations", pairs_of(metr, crit)),
        ("criterion-criterion correlations", pairs_of(crit, crit, upper=True)),
        ("metric-metric correlations", pairs_of(metr, metr, upper=True)),
    ):
        seconds, notes = 0.0, set()
        for level in ("story", "system"):
            subset, factor = sampled(pairs, 60 if level == "story" else len(pairs))
            for method in SCIPY:
                seconds += scipy_loop(X, level, method, subset) * factor
            if factor > 1:
                notes.add(f"story level timed on {len(subset)} of {len(pairs)} pairs")
        parts.append((f"{label} (2 levels x 3 coefficients)", seconds, "; ".join(notes) or "full"))

    # Bootstrap CIs of the 432 metric-criterion correlations, 1000 input resamples.
    rng = np.random.default_rng(0)
    inputs = rng.integers(0, n_inputs, size=(1000, n_inputs))
    few, factor = sampled(pairs_of(range(A.shape[0]), crit), 4)
    seconds = 0.0
    for method in SCIPY:
        seconds += loop_bootstrap(A, C, method, inputs[:10], few) * factor * 100
        seconds += system_bootstrap_loop(A, C, method, inputs[:100], few) * factor * 10
    parts.append(
        (
            "bootstrap CIs (432 x 2 levels x 3 coefficients x B = 1000)",
            seconds,
            "4 of 432 cells; story 10, system 100 of 1000 resamples",
        )
    )

    # Paired bootstrap of systems (45 pairs x 1000 resamples x 78 measures).
    start = time.perf_counter()
    authors_bootstrap(X, inputs, range(2))
    parts.append(
        (
            "paired bootstrap of systems",
            (time.perf_counter() - start) * X.shape[0] / 2,
            "2 of 78 measures",
        )
    )

    # Williams: 6 criteria, system level, Pearson (the report's default), all ordered pairs.
    R = np.corrcoef(X.mean(axis=1))
    start = time.perf_counter()
    for c in crit:
        loop_williams(R[c, N_CRITERIA:], R[N_CRITERIA:, N_CRITERIA:], n_systems)
    parts.append(("Williams tests (6 criteria)", time.perf_counter() - start, "full"))

    # Top-k: k = 4..10, system level, Pearson.
    start = time.perf_counter()
    means = X.mean(axis=1)
    for c in crit:
        order = np.argsort(-means[c])
        for k in range(4, n_systems + 1):
            keep = order[:k]
            for m in metr:
                scipy.stats.pearsonr(means[m, keep], means[c, keep])
    parts.append(("top-k correlations", time.perf_counter() - start, "full"))

    # Borda: ranks of 72 values in 18 columns per level (a table of the same shape as the
    # |r| table; ranking cost does not depend on the values).
    start = time.perf_counter()
    for _ in range(2):
        table = np.abs(rng.normal(size=(A.shape[0], 18)))
        scipy.stats.rankdata(table, axis=0).sum(axis=1)
    parts.append(("Borda counts", time.perf_counter() - start, "full"))

    # Agreement (pingouin ICC per criterion) and system means with t-intervals.
    import pandas as pd
    import pingouin as pg

    start = time.perf_counter()
    llm = pd.read_csv(llm_csv)
    for abbr in ("RE", "CH", "EM", "SU", "EG", "CX"):
        cols = [f"Human {k} {abbr}" for k in (1, 2, 3)]
        wide = np.stack(
            [np.concatenate([json.loads(cell) for cell in llm[c]]) for c in cols], axis=1
        ).astype(float)
        long = pd.DataFrame(
            {
                "target": np.repeat(np.arange(len(wide)), 3),
                "rater": np.tile(np.arange(3), len(wide)),
                "y": wide.ravel(),
            }
        )
        pg.intraclass_corr(long, targets="target", raters="rater", ratings="y")
        for s in range(len(llm)):
            row = wide[s * n_inputs : (s + 1) * n_inputs].ravel()
            scipy.stats.t.interval(0.95, len(row) - 1, row.mean(), scipy.stats.sem(row))
    parts.append(("ICC (pingouin) and t-intervals", time.perf_counter() - start, "full"))
    return parts


def main() -> None:
    args = sys.argv[1:]
    other, rounds = None, 3
    if "--against" in args:
        at = args.index("--against")
        other = Path(args[at + 1]).resolve()
        del args[at : at + 2]
    if "--rounds" in args:
        at = args.index("--rounds")
        rounds = int(args[at + 1])
        del args[at : at + 2]
    default = os.environ.get("HANNA_DATA", REPO.parent / "shared" / "data" / "hanna")
    data = Path(args[0] if args else default).resolve()
    if other is not None:
        against(data, other, rounds)
        return
    with tempfile.TemporaryDirectory() as cache:
        cold = run_report(data, Path(cache))
        warm = run_report(data, Path(cache))
    print(f"ours, new process to report written: {cold:6.1f} s with an empty Numba cache "
          f"(target < 30 s), {warm:6.1f} s with the cache")  # fmt: skip
    start = time.perf_counter()
    parts = baseline(data / "hanna_metric_scores.csv", data / "hanna_metric_scores_llm.csv")
    measured = time.perf_counter() - start
    total = sum(seconds for _, seconds, _ in parts)
    paper = total - sum(s for part, s, _ in parts if part.startswith("bootstrap CIs"))
    print(f"baseline (authors'-style scipy loops, same statistics, no charts), "
          f"{measured:.0f} s measured:")  # fmt: skip
    for part, seconds, how in parts:
        print(f"  {part:<62} {seconds:10.1f} s  ({how})")
    print(f"  {'total':<62} {total:10.1f} s = {total / 60:.1f} min")
    print(
        f"ratio baseline / ours: x{total / cold:,.0f} (empty Numba cache), "
        f"x{total / warm:,.0f} (with the cache)"
    )
    print(
        f"without the bootstrap CIs (which the paper does not compute): baseline {paper:.0f} s, "
        f"ratio x{paper / cold:,.0f} (empty cache), x{paper / warm:,.0f} (with the cache)"
    )


if __name__ == "__main__":
    main()
