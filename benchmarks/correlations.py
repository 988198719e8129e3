"""Benchmark of the correlation engine against the scipy per-group loop (the HANNA paper's way).

Run from the repository root: ``python benchmarks/correlations.py [HANNA_CSV]`` (default:
``hanna_metric_scores.csv`` in ``$HANNA_DATA`` or ``../shared/data/hanna``). Our timings are
warm (one call compiles, then the best of several repeats); each baseline runs on the same data
in the same process. Where a scipy loop over all pairs would take minutes, it is timed on a
subset of pairs and extrapolated linearly, as the printout says.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.stats

from hanna_stats.kernels import kendall_counts, level_correlation

REPO = Path(__file__).resolve().parents[1]
SCIPY = {
    "pearson": scipy.stats.pearsonr,
    "spearman": scipy.stats.spearmanr,
    "kendall": scipy.stats.kendalltau,
}
SUMMARY: list[tuple[str, float, float, str]] = []


def load_hanna(path: Path) -> np.ndarray:
    """The (78 measures, 96 prompts, 10 systems) cube of HANNA, the Human row dropped."""
    csv.field_size_limit(sys.maxsize)
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))[1:]
    values = [[json.loads(cell) for cell in row[1:]] for row in rows if row[0] != "Human"]
    return np.ascontiguousarray(np.array(values, dtype=float).transpose(1, 2, 0))


def best_time(repeats: int, f, *args, **kwargs) -> float:
    f(*args, **kwargs)  # compile (or load the cache) and warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        f(*args, **kwargs)
        times.append(time.perf_counter() - start)
    return min(times)


def scipy_loop(X: np.ndarray, level: str, method: str, pairs: list[tuple[int, int]]) -> float:
    """Seconds for the paper's loop over ``pairs``: one scipy call per group, skip NaN, mean."""
    if level == "system":
        X = X.mean(axis=1)[:, None, :]
    f = SCIPY[method]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant-input warnings
        for i, j in pairs:
            values = [f(X[i, g], X[j, g]).statistic for g in range(X.shape[1])]
            np.nanmean(values)
    return time.perf_counter() - start


def compare(label: str, ours: float, X: np.ndarray, level: str, method: str, sample: int) -> None:
    """Print and record our time against the scipy loop over all pairs i <= j of ``X``."""
    all_pairs = [(i, j) for i in range(len(X)) for j in range(i, len(X))]
    rng = np.random.default_rng(0)
    pairs = all_pairs
    if sample < len(all_pairs):
        pairs = [all_pairs[k] for k in rng.choice(len(all_pairs), sample, replace=False)]
    baseline = scipy_loop(X, level, method, pairs) * len(all_pairs) / len(pairs)
    note = (
        ""
        if len(pairs) == len(all_pairs)
        else f"scipy timed on {len(pairs)} pairs, x{len(all_pairs) / len(pairs):.0f}"
    )
    print(
        f"  {label:<34} ours {ours * 1e3:9.2f} ms   scipy loop {baseline:8.2f} s   "
        f"speed-up {baseline / ours:8.0f}x  {note}"
    )
    SUMMARY.append((label, ours, baseline, note))


def bench_hanna(path: Path) -> None:
    X = load_hanna(path)
    print(f"HANNA {X.shape[0]} measures x {X.shape[1]} prompts x {X.shape[2]} systems, all pairs")
    for level, sample in (("item", 60), ("system", 10**6)):
        for method in SCIPY:
            ours = best_time(20, level_correlation, X, level=level, method=method)
            name = "story" if level == "item" else "system"
            compare(f"HANNA {name}-level {method}", ours, X, level, method, sample)
    all_six = best_time(
        10,
        lambda: [
            level_correlation(X, level=level, method=method)
            for level in ("item", "system")
            for method in SCIPY
        ],
    )
    kendall = next(row for row in SUMMARY if row[0] == "HANNA story-level kendall")
    print(f"  story-level Kendall speed-up {kendall[2] / kendall[1]:.0f}x (target >= 200x)")
    print(f"  all six 78 x 78 matrices together: {all_six * 1e3:.1f} ms (target < 50 ms)")
    SUMMARY.append(("HANNA all six matrices", all_six, float("nan"), ""))


def bench_synthetic() -> None:
    measures, groups, systems = 50, 2000, 20
    rng = np.random.default_rng(1)
    X = np.round(rng.normal(size=(measures, groups, systems)), 2)  # 2 decimals: some ties
    print(f"Synthetic {measures} measures x {groups} inputs x {systems} systems, item level")
    for method in SCIPY:
        ours = best_time(3, level_correlation, X, level="item", method=method)
        compare(f"synthetic item-level {method}", ours, X, "item", method, 4)


# Peak memory is read as VmHWM (the high-water mark of this process's own address space), reset
# with clear_refs just before the call; ru_maxrss is not used because after fork + exec it also
# holds the parent's resident size at the fork.
MEMORY_PROBE = """
import sys, time
import numpy as np
import scipy.stats
from hanna_stats.kernels import kendall_counts
def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field))
n, which = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(2)
x = rng.normal(size=n)
y = rng.normal(size=n)
y += x
kendall_counts(x[:100], y[:100])  # load (or compile) the kernel before measuring
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # reset VmHWM to the current resident size
before = status("VmRSS:")
start = time.perf_counter()
kendall_counts(x, y) if which == "ours" else scipy.stats.kendalltau(x, y)
seconds = time.perf_counter() - start
print(seconds, (status("VmHWM:") - before) / (x.nbytes + y.nbytes))
"""


def bench_long_kendall(n: int = 10_000_000) -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=n)
    y = rng.normal(size=n)
    y += x
    print(f"Kendall tau-b on two vectors of {n:,} values (O(n log n) kernel)")
    kendall_counts(x[:100], y[:100])
    ours = best_time(2, kendall_counts, x, y)
    start = time.perf_counter()
    scipy.stats.kendalltau(x, y)
    baseline = time.perf_counter() - start
    memory = {}
    for which in ("ours", "scipy"):
        out = subprocess.run(
            [sys.executable, "-c", MEMORY_PROBE, str(n), which],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        memory[which] = float(out.stdout.split()[1])
    print(
        f"  ours {ours:.2f} s   scipy.stats.kendalltau {baseline:.2f} s   "
        f"speed-up {baseline / ours:.1f}x"
    )
    print(
        f"  peak extra memory during the call (subprocess, VmHWM minus VmRSS before) "
        f"per input size (2 x {n:,} float64): ours {memory['ours']:.2f}x (target < 3x), "
        f"scipy {memory['scipy']:.2f}x"
    )
    SUMMARY.append((f"Kendall n={n:,}", ours, baseline, f"memory {memory['ours']:.2f}x input"))


def main() -> None:
    default = Path(os.environ.get("HANNA_DATA", REPO.parent / "shared" / "data" / "hanna"))
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else default / "hanna_metric_scores.csv"
    bench_hanna(path)
    bench_synthetic()
    bench_long_kendall()
    print("\nSummary")
    print(f"  {'work':<34} {'ours':>12} {'baseline':>12} {'speed-up':>10}  note")
    for label, ours, baseline, note in SUMMARY:
        if np.isnan(baseline):
            base = speed = "-"
        else:
            ratio = baseline / ours
            base, speed = f"{baseline:.2f} s", f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.1f}x"
        print(f"  {label:<34} {ours * 1e3:9.2f} ms {base:>12} {speed:>10}  {note}")


if __name__ == "__main__":
    main()
