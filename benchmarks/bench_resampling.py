"""Benchmark of the resampling kernels against loop-style baselines on the same work.

Run from the repository root: ``python benchmarks/bench_resampling.py`` (HANNA read from
``$HANNA_DATA`` or ``../shared/data/hanna``). Our timings are warm (a first call compiles or
loads the Numba cache). Baselines are the loop style of nlpstats / mt-metrics-eval (one scipy
call per group, per resample or permutation); they would take hours on the full work, so they
are timed on a fraction and extrapolated linearly, as the printout says.

1. HANNA: bootstrap CIs (percentile) of all 72 metrics x 6 criteria story-level correlations,
   for each of Pearson, Spearman and Kendall, 1000 input resamples.
2. WMT scale (synthetic, 2,000 inputs x 20 systems x 50 metrics + 1 criterion): the PERM-BOTH
   test of all 1,225 metric pairs against the criterion, system level, Kendall, 1000
   permutations; time and peak memory (ru_maxrss of a fresh subprocess).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.stats

from hanna_stats.kernels import bootstrap_ci, bootstrap_indices, permutation_swaps

REPO = Path(__file__).resolve().parents[1]
HANNA_DIR = Path(os.environ.get("HANNA_DATA", REPO.parent / "shared" / "data" / "hanna"))
SCIPY = {
    "pearson": scipy.stats.pearsonr,
    "spearman": scipy.stats.spearmanr,
    "kendall": scipy.stats.kendalltau,
}


def hanna_cube() -> tuple[np.ndarray, np.ndarray]:
    """(72 metrics, 96, 10) and (6 criteria, 96, 10), the Human system dropped."""
    from hanna_stats.store import build_hanna_store, load_study

    cube = load_study(build_hanna_store(HANNA_DIR)).cube(kinds=("human", "metric"))
    human = np.asarray(cube.kinds) == "human"
    return np.ascontiguousarray(cube.values[~human]), np.ascontiguousarray(cube.values[human])


def loop_bootstrap(A, C, method, inputs, pairs) -> float:
    """Seconds of the loop baseline for ``pairs`` and the resamples ``inputs`` (rows)."""
    f = SCIPY[method]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, j in pairs:
            samples = []
            for rows in inputs:
                values = [f(A[i, g], C[j, g]).statistic for g in rows]
                samples.append(np.nanmean(values))
            np.percentile(samples, [2.5, 97.5])
    return time.perf_counter() - start


def bench_hanna() -> None:
    A, C = hanna_cube()
    cells = A.shape[0] * C.shape[0]
    print(f"HANNA bootstrap CIs: {A.shape[0]} metrics x {C.shape[0]} criteria, story level, "
          f"1000 input resamples, percentile")  # fmt: skip
    total_ours = total_base = 0.0
    idx = bootstrap_indices(A.shape[1], A.shape[2], resample="inputs", resamples=1000, seed=0)
    rng = np.random.default_rng(1)
    all_pairs = [(i, j) for i in range(A.shape[0]) for j in range(C.shape[0])]
    pairs = [all_pairs[k] for k in rng.choice(len(all_pairs), 4, replace=False)]
    for method in SCIPY:
        bootstrap_ci(A, C, method=method, resamples=20)  # compile / load the cache
        start = time.perf_counter()
        bootstrap_ci(A, C, method=method, resamples=1000, seed=0)
        ours = time.perf_counter() - start
        sample = loop_bootstrap(A, C, method, idx.inputs[:10], pairs)
        base = sample * (len(all_pairs) / len(pairs)) * (1000 / 10)
        total_ours += ours
        total_base += base
        print(f"  {method:<9} ours {ours:7.3f} s   loop {base:9.0f} s   ratio {base / ours:8.0f}x")
    factor = len(all_pairs) // 4 * 100
    print(f"  all {cells} x 3 coefficients: ours {total_ours:.2f} s (target < 5 s), loop "
          f"{total_base / 3600:.1f} h (timed on 4 pairs x 10 resamples, x{factor}), "
          f"ratio {total_base / total_ours:.0f}x")  # fmt: skip


PERM_PROBE = """
import resource, sys, time
import numpy as np
from hanna_stats.kernels import permutation_test_pairs
rng = np.random.default_rng(2)
base = rng.normal(size=(2000, 20))
X = base + rng.normal(size=(50, 2000, 20)) * rng.uniform(0.5, 3, size=(50, 1, 1))
C = base + rng.normal(size=(2000, 20))
permutation_test_pairs(X[:3, :50], C[:50], permutations=5)  # load the cache
start = time.perf_counter()
res = permutation_test_pairs(X, C, permutations=1000, seed=0)
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(seconds, peak, np.nanmean(res.pvalue))
"""


def loop_permutation(X, C, swaps, pairs) -> float:
    """Seconds of the mt-metrics-eval-style loop (z-score, swap, means, scipy) on ``pairs``."""
    start = time.perf_counter()
    c = C.mean(axis=0)
    Z = [scipy.stats.zscore(x.ravel()).reshape(x.shape) for x in X]
    for a, b in pairs:
        for W in swaps:
            za = np.where(W == 1, Z[b], Z[a]).mean(axis=0)
            zb = np.where(W == 1, Z[a], Z[b]).mean(axis=0)
            scipy.stats.kendalltau(za, c).statistic - scipy.stats.kendalltau(zb, c).statistic
    return time.perf_counter() - start


def bench_wmt() -> None:
    print("WMT scale PERM-BOTH: 50 metrics x 2000 inputs x 20 systems, 1225 pairs, system "
          "level, Kendall, 1000 permutations")  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-c", PERM_PROBE], capture_output=True, text=True, check=True
    ).stdout.split()
    ours, peak = float(out[0]), float(out[1])
    rng = np.random.default_rng(2)
    base = rng.normal(size=(2000, 20))
    X = base + rng.normal(size=(50, 2000, 20))
    C = base + rng.normal(size=(2000, 20))
    swaps = permutation_swaps(2000, 20, permutations=20, seed=0)
    sample = loop_permutation(X, C, swaps, [(0, 1), (2, 3)])
    loop = sample * (1225 / 2) * (1000 / 20)
    print(f"  ours {ours:.2f} s, peak RSS {peak:.0f} MiB (swaps {1000 * 2000 * 20 / 2**20:.0f} "
          f"MiB); loop {loop / 3600:.1f} h (timed on 2 pairs x 20 permutations, x30625); "
          f"ratio {loop / ours:.0f}x")  # fmt: skip


def main() -> None:
    import numba

    print(f"numba threads: {numba.get_num_threads()}, CPUs: {os.cpu_count()}")
    bench_hanna()
    bench_wmt()


if __name__ == "__main__":
    main()
