"""Benchmark: story-level permutation tests of all HANNA metric pairs for one criterion.

Run from the repository root: ``python benchmarks/permutation_story.py`` (HANNA read from
``$HANNA_DATA`` or ``../shared/data/hanna``). The work: the 72 metrics' story-level Kendall
tau-b with one criterion (Coherence), all 2,556 unordered pairs (both directions' p-values),
1,000 PERM-BOTH permutations, the Human system dropped (96 inputs x 10 systems).

- ours: :func:`hanna_stats.kernels.permutation_test_pairs` (the polynomial fast path), warm;
- old path: the kernel's per-input compiled loop (``_item_null``, the code this path had
  before the fast one), on the same swaps for a sample of pairs, extrapolated linearly to all
  pairs (it takes minutes in full); the sample's values are checked equal to ours;
- loop: the nlpstats / mt-metrics-eval style (z-score, swap, one scipy call per input) on 2
  pairs x 20 permutations, extrapolated.

Also times the PERM-SYS and PERM-INPUT units and early stopping at 0.05 (permutations drawn).
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.stats

from hanna_stats.kernels._options import KENDALL, TAU_B
from hanna_stats.kernels.permutation import (
    _item_null,
    permutation_swaps,
    permutation_test_pairs,
    standardize,
)

REPO = Path(__file__).resolve().parents[1]
HANNA_DIR = Path(os.environ.get("HANNA_DATA", REPO.parent / "shared" / "data" / "hanna"))
PERMUTATIONS = 1000


def hanna_cube(criterion: str = "Coherence") -> tuple[np.ndarray, np.ndarray]:
    """(72 metrics, 96, 10) and the criterion (96, 10), the Human system dropped."""
    from hanna_stats.store import build_hanna_store, load_study

    study = load_study(build_hanna_store(HANNA_DIR))
    name = study.criterion(criterion)
    cube = study.cube(kinds=("metric",), include_human=False)
    crit = study.cube(measures=[name], include_human=False).values[0]
    return np.ascontiguousarray(cube.values), np.ascontiguousarray(crit)


def loop_seconds(X, C, swaps, pairs) -> float:
    """Seconds of the scipy loop (z-score, swap, kendalltau per input) on ``pairs``."""
    Z = [scipy.stats.zscore(x.ravel()).reshape(x.shape) for x in X]
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b in pairs:
            for W in swaps:
                za = np.where(W == 1, Z[b], Z[a])
                zb = np.where(W == 1, Z[a], Z[b])
                tau_a = [scipy.stats.kendalltau(x, c).statistic for x, c in zip(za, C, strict=True)]
                tau_b = [scipy.stats.kendalltau(x, c).statistic for x, c in zip(zb, C, strict=True)]
                np.nanmean(tau_a) - np.nanmean(tau_b)
    return time.perf_counter() - start


def main() -> None:
    import numba

    print(f"numba threads: {numba.get_num_threads()}, CPUs: {os.cpu_count()}")
    X, C = hanna_cube()
    M, G, S = X.shape
    K = M * (M - 1) // 2
    print(f"story-level Kendall tau-b, {M} metrics ({K} pairs) x {G} inputs x {S} systems, "
          f"{PERMUTATIONS} permutations, Coherence")  # fmt: skip
    permutation_test_pairs(X[:3], C, level="item", permutations=5)  # compile / load the cache
    start = time.perf_counter()
    ours = permutation_test_pairs(X, C, level="item", permutations=PERMUTATIONS, seed=0)
    t_ours = time.perf_counter() - start

    swaps = permutation_swaps(G, S, permutations=PERMUTATIONS, seed=0)
    pairs = np.stack(np.triu_indices(M, 1), axis=1)
    sample = pairs[np.random.default_rng(1).choice(K, 24, replace=False)]
    _item_null(standardize(X), C, swaps[:2], sample[:2], KENDALL, TAU_B)  # compile / load the cache
    start = time.perf_counter()
    slow = _item_null(standardize(X), C, swaps, sample, KENDALL, TAU_B)
    t_slow = (time.perf_counter() - start) * K / len(sample)
    from hanna_stats.kernels.permutation import permutation_null

    same = np.array_equal(permutation_null(X, C, sample, swaps, level="item"), slow)
    t_loop = loop_seconds(X, C, swaps[:20], pairs[:2]) * (K / 2) * (PERMUTATIONS / 20)

    print(f"  ours      {t_ours:8.2f} s   (target <= 15 s)")
    print(f"  old path  {t_slow:8.1f} s   (timed on {len(sample)} pairs, x{K / len(sample):.1f}); "
          f"ratio {t_slow / t_ours:.0f}x; values equal to ours on the sample: {same}")  # fmt: skip
    print(f"  scipy loop {t_loop / 3600:7.1f} h   (timed on 2 pairs x 20 permutations, "
          f"x{K // 2 * PERMUTATIONS // 20}); ratio {t_loop / t_ours:.0f}x")  # fmt: skip

    for unit in ("systems", "inputs"):
        start = time.perf_counter()
        permutation_test_pairs(X, C, level="item", permutations=PERMUTATIONS, unit=unit)
        print(f"  unit={unit:<8} {time.perf_counter() - start:6.2f} s")
    start = time.perf_counter()
    stop = permutation_test_pairs(X, C, level="item", permutations=PERMUTATIONS, stop_alpha=0.05)
    t_stop = time.perf_counter() - start
    iu = np.triu_indices(M, 1)
    drawn = stop.n_drawn[iu]
    agree = np.mean((stop.pvalue[iu] <= 0.05) == (ours.pvalue[iu] <= 0.05))
    print(f"  stop_alpha=0.05 {t_stop:6.2f} s; permutations drawn per pair: median "
          f"{np.median(drawn):.0f}, mean {drawn.mean():.0f}, all {PERMUTATIONS}: "
          f"{(drawn == PERMUTATIONS).sum()} of {K} pairs; decisions at 0.05 equal to the full "
          f"run's: {agree:.4f}")  # fmt: skip
    sys.stdout.flush()


if __name__ == "__main__":
    main()
