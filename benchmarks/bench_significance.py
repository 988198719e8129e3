"""Benchmark of the significance engine (paired bootstrap, Williams) against plain loops.

Run from the repository root: ``python benchmarks/bench_significance.py [HANNA_DIR]`` (default
``$HANNA_DATA`` or ``../shared/data/hanna``). Ours is timed warm (one call compiles or loads the
Numba cache, then the best of several repeats); each baseline runs on the same data in the same
process. A baseline that would take minutes is timed on a fraction of the work and extrapolated
linearly, as the printout says.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.stats
from correlations import best_time  # benchmarks/correlations.py: this folder is on sys.path

from hanna_stats.kernels import level_correlation
from hanna_stats.kernels.system_pairs import paired_bootstrap
from hanna_stats.kernels.williams import williams_test
from hanna_stats.store import build_hanna_store, load_study

REPO = Path(__file__).resolve().parents[1]
LEVELS = {"story": "item", "system": "system"}
METHODS = ("pearson", "spearman", "kendall")


def report(name: str, ours: float, baseline: float, how: str) -> None:
    print(
        f"{name}: ours {ours * 1e3:9.2f} ms | baseline {baseline * 1e3:11.1f} ms ({how}) | "
        f"speed-up x{baseline / ours:,.0f}"
    )


def authors_bootstrap(X: np.ndarray, indices: np.ndarray, measures: range) -> None:
    """The paper's loop: per measure, pair and resample, numpy means of the resampled scores."""
    systems = X.shape[2]
    for m in measures:
        for s1 in range(systems):
            for s2 in range(s1 + 1, systems):
                w1 = w2 = 0
                for idx in indices:
                    a, b = X[m, idx, s1].mean(), X[m, idx, s2].mean()
                    w1 += a > b
                    w2 += b > a


def numpy_bootstrap(X: np.ndarray, indices: np.ndarray) -> None:
    """A vectorised numpy baseline: per measure, all resample means at once, then pairs."""
    s1, s2 = np.triu_indices(X.shape[2], k=1)
    for m in range(X.shape[0]):
        means = X[m][indices].mean(axis=1)  # (B, S)
        (means[:, s1] > means[:, s2]).sum(axis=0)
        (means[:, s2] > means[:, s1]).sum(axis=0)


def loop_williams(r: np.ndarray, R: np.ndarray, n: int) -> None:
    """A Python loop over metric pairs with scipy.stats.t, for one criterion."""
    with np.errstate(divide="ignore", invalid="ignore"):  # identical metrics: r23 = 1
        _loop_williams(r, R, n)


def _loop_williams(r: np.ndarray, R: np.ndarray, n: int) -> None:
    for a in range(r.size):
        for b in range(r.size):
            if a == b:
                continue
            r12, r13 = abs(r[a]), abs(r[b])
            r23 = np.sign(r[a]) * np.sign(r[b]) * R[a, b]
            k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
            t = (r12 - r13) * np.sqrt(
                (n - 1)
                * (1 + r23)
                / (2 * k * (n - 1) / (n - 3) + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3)
            )
            scipy.stats.t.sf(t, n - 3)


def main() -> None:
    default = os.environ.get("HANNA_DATA", REPO.parent / "shared" / "data" / "hanna")
    con = build_hanna_store(Path(sys.argv[1] if len(sys.argv) > 1 else default))
    cube = load_study(con).cube(kinds=("human", "metric"))
    X = cube.values
    measures, inputs, systems = X.shape
    human = np.asarray(cube.kinds) == "human"
    pairs = systems * (systems - 1) // 2
    print(f"HANNA cube: {measures} measures x {inputs} inputs x {systems} systems")

    # Paired bootstrap: 45 pairs x 1000 resamples x 78 measures.
    indices = np.random.default_rng(0).integers(0, inputs, size=(1000, inputs))
    ours = best_time(5, paired_bootstrap, X, indices)
    part = 2
    start = time.perf_counter()
    authors_bootstrap(X, indices, range(part))
    loop = (time.perf_counter() - start) * measures / part
    report(
        f"paired bootstrap ({pairs} pairs x 1000 resamples x {measures} measures)",
        ours,
        loop,
        f"authors' Python loop, timed on {part} measures, extrapolated",
    )
    report(
        "paired bootstrap",
        ours,
        best_time(1, numpy_bootstrap, X, indices),
        "vectorised numpy per measure, full run",
    )

    # Williams: 6 criteria x 2 levels x 3 coefficients, all ordered metric pairs.
    corr = {
        (level, method): level_correlation(X, level=kernel, method=method).statistic
        for level, kernel in LEVELS.items()
        for method in METHODS
    }
    n = {"story": inputs, "system": systems}

    def ours_williams():
        for (level, _), R in corr.items():
            williams_test(R[np.ix_(human, ~human)], R[np.ix_(~human, ~human)], n[level])

    def ours_with_correlations():
        for level, kernel in LEVELS.items():
            for method in METHODS:
                R = level_correlation(X, level=kernel, method=method).statistic
                williams_test(R[np.ix_(human, ~human)], R[np.ix_(~human, ~human)], n[level])

    tests = len(corr) * human.sum() * (~human).sum() * ((~human).sum() - 1)
    R = corr["system", "pearson"]
    start = time.perf_counter()
    loop_williams(R[human][0, ~human], R[np.ix_(~human, ~human)], systems)
    loop = (time.perf_counter() - start) * len(corr) * human.sum()
    matrices = len(corr) * human.sum()
    how = f"Python loop + scipy.stats.t, timed on 1 of {matrices} matrices, extrapolated"
    report(f"Williams, {tests} tests, correlations given", best_time(20, ours_williams), loop, how)
    report(
        "Williams, correlations included (6 level_correlation calls)",
        best_time(3, ours_with_correlations),
        loop,
        "the same loop, correlations not included",
    )


if __name__ == "__main__":
    main()
