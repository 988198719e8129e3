"""Benchmark of the agreement kernels: ICC (six forms, CIs) against pingouin.intraclass_corr.

Run from the repository root: ``python benchmarks/bench_agreement.py``. Data: 33,334 targets x
3 raters (100,002 Likert ratings 1..5 with a target effect), seeded. Our timings are warm (one
call compiles or loads the Numba cache, then the best of several repeats); pingouin runs on the
same data in the same process, from the long format it requires (its time includes its
pivot to a wide matrix and back). Also: Krippendorff's alpha against the ``krippendorff``
package when it is installed.
"""

from __future__ import annotations

import time
import timeit

import numpy as np
import pandas as pd

from hanna_stats.kernels.agreement import PINGOUIN_LABELS, intraclass_corr, krippendorff_alpha

N_TARGETS, N_RATERS, N_CRITERIA = 33_334, 3, 6


def best_time(repeats: int, f, *args, **kwargs) -> float:
    """Best of ``repeats`` warm calls (the first call compiles or loads the Numba cache)."""
    f(*args, **kwargs)
    return min(timeit.repeat(lambda: f(*args, **kwargs), number=1, repeat=repeats))


def likert(rng: np.random.Generator) -> np.ndarray:
    """Targets x raters Likert ratings: target effect + rater bias + noise, clipped to 1..5."""
    target = rng.normal(3.0, 0.8, size=(N_TARGETS, 1))
    bias = rng.normal(0.0, 0.2, size=(1, N_RATERS))
    noise = rng.normal(0.0, 0.9, size=(N_TARGETS, N_RATERS))
    return np.clip(np.rint(target + bias + noise), 1, 5)


def long_format(x: np.ndarray) -> pd.DataFrame:
    n, k = x.shape
    return pd.DataFrame(
        {"target": np.repeat(np.arange(n), k), "rater": np.tile(np.arange(k), n), "y": x.ravel()}
    )


def report(label: str, ours: float, theirs: float, who: str) -> None:
    print(f"{label}")
    print(f"  ours     {ours * 1e3:10.2f} ms")
    print(f"  {who:8s} {theirs * 1e3:10.2f} ms")
    print(f"  speed-up {theirs / ours:10.1f} x")


def main() -> None:
    import pingouin as pg

    pg.options["round"] = None
    pg.options["round.column.CI95"] = None
    rng = np.random.default_rng(20221012)
    cubes = [likert(rng) for _ in range(N_CRITERIA)]
    x = cubes[0]
    print(f"ICC, {N_TARGETS:,} targets x {N_RATERS} raters = {x.size:,} ratings")

    ours = best_time(5, intraclass_corr, x)
    data = long_format(x)
    start = time.perf_counter()
    ref = pg.intraclass_corr(data, targets="target", raters="rater", ratings="y")
    theirs = time.perf_counter() - start
    report("one criterion (all six forms, F tests, 95% CIs)", ours, theirs, "pingouin")
    got = intraclass_corr(x)
    want = ref.set_index("Type").loc[[PINGOUIN_LABELS[f] for f in got.forms], "ICC"].to_numpy()
    print(f"  max |ICC difference| vs pingouin: {np.abs(got.statistic - want).max():.1e}")

    ours = best_time(5, lambda: [intraclass_corr(c) for c in cubes])
    frames = [long_format(c) for c in cubes]
    start = time.perf_counter()
    for frame in frames:
        pg.intraclass_corr(frame, targets="target", raters="rater", ratings="y")
    theirs = time.perf_counter() - start
    report(f"{N_CRITERIA} criteria ({N_CRITERIA * x.size:,} ratings)", ours, theirs, "pingouin")

    try:
        import krippendorff
    except ImportError:
        print("Krippendorff's alpha: package 'krippendorff' not installed, comparison skipped")
        return
    data = x.T.copy()
    data[0, ::7] = np.nan  # some missing ratings
    for level in ("interval", "ordinal"):
        kwargs = {"level_of_measurement": level, "layout": "raters x items"}
        ours = best_time(5, krippendorff_alpha, data, **kwargs)
        start = time.perf_counter()
        want = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        theirs = time.perf_counter() - start
        got = krippendorff_alpha(data, **kwargs).statistic
        label = (
            f"Krippendorff's alpha ({level}, {N_RATERS} x {N_TARGETS:,}, 1/7 of rater 1 missing)"
        )
        report(label, ours, theirs, "package")
        print(f"  |alpha difference| vs package: {abs(got - want):.1e}")


if __name__ == "__main__":
    main()
