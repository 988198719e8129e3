"""Benchmark of the metric-pair power simulator on HANNA against a loop of the public test.

Run from the repository root: ``python benchmarks/power.py [HANNA_DIR]`` (default
``$HANNA_DATA`` or ``../shared/data/hanna``; without the data, synthetic cubes of HANNA's shape,
96 inputs x 10 systems). The work, the issue's target: a power curve of 10 designs (inputs
20, 40, ..., 200 of the 10 systems) x 1,000 simulated studies x a 1,000-permutation PERM-BOTH
test at item level, Pearson, of the criterion's two metrics of largest pooled Pearson, their
own observed difference (``metric_pair_power``). The baseline runs the same studies (the same draws,
documented in ``hanna_stats.kernels.power``) through ``permutation_test_pairs`` one study at a
time, on ``--subset`` studies per design, extrapolated to 1,000, and checks that both reject
the same studies. Ours is timed warm (a first small call compiles or loads the Numba cache).
Pin the cores to measure "2 cores": ``taskset -c 0,1 python benchmarks/power.py``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numba
import numpy as np

from hanna_stats.kernels import metric_pair_power, permutation_test_pairs

INPUTS = np.arange(20, 201, 20)


def load(folder: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """HANNA's first criterion (96, 10) and its two best-correlated metrics (pooled Pearson)."""
    if not (folder / "hanna_metric_scores.csv").exists():
        rng = np.random.default_rng(0)
        H = rng.normal(size=(96, 10))
        A, B = (H + rng.normal(size=H.shape) for _ in range(2))
        return H, A, B, "synthetic"
    from hanna_stats.store import ingest, load_study, open_store

    con = open_store()
    ingest(con, folder / "hanna_metric_scores.csv", format="hanna-metric-scores")
    cube = load_study(con).cube(kinds=("human", "metric"))
    human = np.asarray(cube.kinds) == "human"
    H, M = cube.values[human][0], cube.values[~human]
    ok = np.isfinite(M).all(axis=(1, 2))
    r = [
        abs(np.corrcoef(m.ravel(), H.ravel())[0, 1]) if k else 0 for m, k in zip(M, ok, strict=True)
    ]
    a, b = np.argsort(r)[::-1][:2]
    names = np.asarray(cube.measures)[~human]
    criterion = np.asarray(cube.measures)[human][0]
    return H, M[a], M[b], f"HANNA {criterion}: {names[a]} vs {names[b]}"


def loop(H, A, B, inputs, studies, permutations, alpha):
    """Rejections of ``studies`` studies of one design through permutation_test_pairs."""
    G, S = H.shape
    rejected = 0
    for child in np.random.SeedSequence(0).spawn(studies):
        rng = np.random.default_rng(child)
        cells = np.ix_(rng.integers(0, G, inputs), rng.choice(S, S, replace=False))
        X = np.stack([A[cells], B[cells]])
        masks = rng.integers(0, 1 << S, (permutations, inputs), dtype=np.uint64)
        swaps = ((masks[..., None] >> np.arange(S, dtype=np.uint64)) & 1).astype(np.uint8)
        res = permutation_test_pairs(
            X, H[cells], level="item", method="pearson", swaps=swaps, alternative="greater"
        )
        rejected += res.pvalue[0, 1] <= alpha
    return rejected


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = os.environ.get("HANNA_DATA", "../shared/data/hanna")
    parser.add_argument("data", nargs="?", default=default)
    parser.add_argument("--studies", type=int, default=1000)
    parser.add_argument("--permutations", type=int, default=1000)
    parser.add_argument("--subset", type=int, default=3, help="baseline studies per design")
    args = parser.parse_args()
    H, A, B, label = load(Path(args.data))
    cores = len(os.sched_getaffinity(0))
    print(f"{label}: {H.shape[0]} inputs x {H.shape[1]} systems; {cores} cores, "
          f"{numba.get_num_threads()} Numba threads")  # fmt: skip
    options = {"test": "perm-both", "level": "item", "method": "pearson"}
    options |= {"permutations": args.permutations}
    metric_pair_power(H, A, B, inputs=20, studies=4, **options)  # compile / load the cache
    start = time.perf_counter()
    res = metric_pair_power(H, A, B, inputs=INPUTS, studies=args.studies, **options)
    ours = time.perf_counter() - start
    print(f"  ours: {len(INPUTS)} designs x {args.studies} studies x {args.permutations} "
          f"permutations in {ours:.1f} s")  # fmt: skip
    print("  power:", " ".join(f"{g}:{p:.3f}" for g, p in zip(INPUTS, res.power, strict=True)))
    start = time.perf_counter()
    baseline = [loop(H, A, B, g, args.subset, args.permutations, 0.05) for g in INPUTS]
    spent = time.perf_counter() - start
    extrapolated = spent * args.studies / args.subset
    check = metric_pair_power(H, A, B, inputs=INPUTS, studies=args.subset, **options)
    same = np.array_equal(check.rejections, baseline)
    print(f"  loop of permutation_test_pairs: {args.subset} studies per design in {spent:.1f} s, "
          f"extrapolated {extrapolated:.0f} s; same rejections: {same}")  # fmt: skip
    print(f"  ratio {extrapolated / ours:.1f}x")


if __name__ == "__main__":
    main()
