"""Scaling of the pairwise kernels: time and peak memory as items, systems, measures and pairs
grow, one dimension at a time (issue 22, "Bounded-memory kernels").

Run from the repository root: ``python benchmarks/scaling.py`` (about 10 minutes on 2 cores),
``--quick`` for a smoke run on small sizes, ``--only NAME`` for one family (``kendall``,
``perm``, ``ties``, ``calibrated``, ``bootstrap``), ``--budget SIZE`` to set
``HANNA_STATS_MEMORY_BUDGET`` for every case (default: the library's, 1 GiB; the 10,000-item
check runs under 2 GiB).

Each case runs in a fresh subprocess: it builds synthetic data (scores rounded to one decimal,
so with ties), warms the kernel up on a tiny input (compiling or loading the Numba cache), then
times one call. Memory: the process's peak resident set (VmHWM of /proc/self/status, reset with
``clear_refs`` just before the call, so it covers the call on top of the data), in MiB: ``peak``
is the whole process, ``call`` what the call added to the resident set before it. Each series
prints the fitted growth exponents (least-squares slopes of log time and log ``call`` memory
against log size), then the checks of the issue are flagged PASS / FAIL.

Families (the sizes: HANNA's 96 inputs x 10 systems x 72 metrics, WMT's 2,000 x 20 x 50, 10x
WMT's 20,000 segments):

- ``kendall``: :func:`level_correlation` of all metric pairs, item level, Kendall tau-b;
  series in items, systems and measures around WMT's size, HANNA's size, and the check case
  10,000 items x 300 measures x 20 systems under a 2 GiB budget.
- ``perm``: :func:`permutation_test_pairs`, item-level PERM-BOTH, Kendall tau-b, 500 segments
  x 20 metrics (190 pairs) x 10, 20, 40, 80 systems, 200 permutations; and 10 to 40 metrics.
- ``ties``: :func:`tie_calibration` (optimal epsilon), 1 human x 4 metrics, items 200 to
  20,000 and systems 10 to 40.
- ``calibrated``: :func:`calibrated_permutation_test` (pair swaps, item level), 1 human x 2
  metrics x 20 systems, 1,000 permutations, items 1,400 (the most the former single draw of
  swaps took), 2,000 and 20,000 (3.8 billion swaps, drawn and used block by block); the check:
  20,000 items within the memory budget.
- ``bootstrap``: :func:`bootstrap_ci`, item-level Kendall of 50 metrics with a criterion, 1000
  input resamples; items, systems and measures; the check: 20,000 items within the memory
  budget.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MIB = 2**20


# ------------------------------------------------------------------ the child: one case


def _status(field):
    """A field of /proc/self/status in bytes (0 where it is not available)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _reset_peak():
    """Reset VmHWM to the current resident set (Linux 4.0+); False where it cannot."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _cube(rng, measures, groups, systems, base=None):
    """Scores (measures, groups, systems) rounded to one decimal, built measure by measure (no
    temporaries of the whole cube); near ``base`` when given."""
    import numpy as np

    X = np.empty((measures, groups, systems))
    for m in range(measures):
        x = rng.normal(size=(groups, systems))
        if base is not None:
            x += base
        np.round(x, 1, out=X[m])
    return X


def _case(family, p):
    """(warm-up, call) of one case: two closures on synthetic data, the warm-up on 2 or 3 of
    its inputs (the same measures and systems: the same compiled paths)."""
    import numpy as np

    rng = np.random.default_rng(0)
    G, S, M = p["items"], p["systems"], p["measures"]
    if family == "kendall":
        from hanna_stats.kernels import level_correlation

        X = _cube(rng, M, G, S)
        return (
            lambda: level_correlation(X[:, :2], level="item", method="kendall"),
            lambda: level_correlation(X, level="item", method="kendall"),
        )
    if family == "perm":
        from hanna_stats.kernels import permutation_test_pairs

        C = np.round(rng.normal(size=(G, S)) * 2)
        X = _cube(rng, M, G, S, base=C)
        kwargs = dict(level="item", method="kendall", permutations=p["permutations"], seed=1)
        return (
            lambda: permutation_test_pairs(X[:, :2], C[:2], **{**kwargs, "permutations": 5}),
            lambda: permutation_test_pairs(X, C, **kwargs),
        )
    if family == "ties":
        from hanna_stats.kernels.calibration import tie_calibration

        H = np.round(rng.normal(size=(1, G, S)) * 2)
        X = np.round(H + rng.normal(size=(M, G, S)), 3)
        return (
            lambda: tie_calibration(H[:, :3], X[:, :3]),
            lambda: tie_calibration(H, X),
        )
    if family == "calibrated":
        from hanna_stats.kernels import calibrated_permutation_test

        H = np.round(rng.normal(size=(1, G, S)) * 2)
        X = np.round(H + rng.normal(size=(M, G, S)), 1)
        kwargs = dict(level="item", permutations=p["permutations"], seed=1)
        return (
            lambda: calibrated_permutation_test(
                H[:, :3], X[:, :3], **{**kwargs, "permutations": 5}
            ),
            lambda: calibrated_permutation_test(H, X, **kwargs),
        )
    if family == "bootstrap":
        from hanna_stats.kernels import bootstrap_ci

        C = np.round(rng.normal(size=(1, G, S)) * 2)
        X = _cube(rng, M, G, S, base=C[0])
        kwargs = dict(level="item", method="kendall", resamples=p["resamples"], seed=1)
        return (
            lambda: bootstrap_ci(X[:, :2], C[:, :2], **{**kwargs, "resamples": 5}),
            lambda: bootstrap_ci(X, C, **kwargs),
        )
    raise ValueError(f"unknown family {family!r}")


def child(family, params):
    warm, call = _case(family, params)
    warm()
    resident = _status("VmRSS")
    exact = _reset_peak()
    start = time.perf_counter()
    call()
    seconds = time.perf_counter() - start
    peak = _status("VmHWM")
    if not peak:  # not Linux: the lifetime peak
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    result = {
        "seconds": seconds,
        "peak_mib": peak / MIB,
        "call_mib": max(peak - resident, 0) / MIB if exact else float("nan"),
    }
    print(json.dumps(result))


# ------------------------------------------------------------------ the parent: series


def run_case(family, params, budget=None, timeout=900):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    if budget is not None:
        env["HANNA_STATS_MEMORY_BUDGET"] = str(budget)
    command = [sys.executable, __file__, "--child", family, json.dumps(params)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{family} {params} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def slope(xs, ys):
    """Least-squares slope of log y against log x (NaN with fewer than 2 usable points)."""
    points = [(math.log(x), math.log(y)) for x, y in zip(xs, ys, strict=True) if x > 0 and y > 0]
    if len(points) < 2:
        return float("nan")
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else float("nan")


def series(family, name, dim, base, values, unit=None, budget=None, extra=None):
    """Run ``family`` at ``base`` with ``dim`` set to each of ``values``; print the rows and
    the exponents. ``unit(params)``: the work units the exponents are taken against (default
    ``dim`` itself). Returns the rows."""
    print(f"\n{family} / {name}: {dim} in {values}  (base {base})")
    print(
        f"  {dim:>12} {'time s':>9} {'peak MiB':>9} {'call MiB':>9}"
        + (f" {extra[0]:>16}" if extra else "")
    )
    rows = []
    for value in values:
        params = {**base, dim: value}
        r = run_case(family, params, budget)
        r["params"] = params
        rows.append(r)
        more = f" {extra[1](r):>16.4g}" if extra else ""
        print(
            f"  {value:>12,} {r['seconds']:>9.2f} {r['peak_mib']:>9.0f} {r['call_mib']:>9.0f}"
            + more,
            flush=True,
        )
    x = [unit(r["params"]) if unit else r["params"][dim] for r in rows]
    what = "work units" if unit else dim
    print(
        f"  exponent in {what}: time {slope(x, [r['seconds'] for r in rows]):.2f}, "
        f"memory (call) {slope(x, [r['call_mib'] for r in rows]):.2f}"
    )
    return rows


def pair_items(p):
    return p["items"] * p["measures"] * (p["measures"] + 1) / 2


def swap_count(p):
    """Swap indicators of the item-level calibrated test: permutations x items x system pairs."""
    return p["permutations"] * p["items"] * p["systems"] * (p["systems"] - 1) / 2


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--only", choices=("kendall", "perm", "ties", "calibrated", "bootstrap"))
    parser.add_argument("--budget", help="HANNA_STATS_MEMORY_BUDGET for every case")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return child(args.child[0], json.loads(args.child[1]))
    quick = args.quick
    budget = args.budget
    checks = []

    def wanted(name):
        return args.only in (None, name)

    import numba

    from hanna_stats.kernels._options import memory_budget, parse_bytes

    print(
        f"scaling.py: {os.cpu_count()} CPUs, Numba {numba.__version__} with "
        f"{numba.config.NUMBA_NUM_THREADS} threads; memory budget "
        f"{budget or os.environ.get('HANNA_STATS_MEMORY_BUDGET') or 'default (1 GiB)'}"
        f"{'; QUICK sizes' if quick else ''}"
    )
    if wanted("kendall"):
        wmt = (
            {"items": 200, "systems": 10, "measures": 10}
            if quick
            else {"items": 2000, "systems": 20, "measures": 50}
        )
        ns = lambda r: r["seconds"] / pair_items(r["params"]) * 1e9  # noqa: E731
        per = ("ns/pair-item", ns)
        items = [20, 200, 2000] if quick else [200, 2000, 20000]
        series("kendall", "items", "items", wmt, items, pair_items, budget, per)
        systems = [5, 10, 20] if quick else [10, 20, 40, 80]
        series("kendall", "systems", "systems", wmt, systems, budget=budget, extra=per)
        measures = [5, 10, 20] if quick else [25, 50, 100, 200]
        rows = series("kendall", "measures", "measures", wmt, measures, pair_items, budget, per)
        hanna = {"items": 96, "systems": 10, "measures": 72}
        series("kendall", "HANNA", "items", hanna, [96], pair_items, budget, per)
        reference = next(r for r in rows if r["params"] == wmt)
        big = (
            {"items": 1000, "systems": 20, "measures": 60}
            if quick
            else {"items": 10000, "systems": 20, "measures": 300}
        )
        limit = 2 * 2**30
        (result,) = series(
            "kendall", "check", "items", big, [big["items"]], pair_items, "2GiB", per
        )
        ratio = ns(result) / ns(reference)
        checks.append(
            (
                f"all-pairs Kendall {big['items']:,} x {big['measures']} x {big['systems']} under "
                f"a 2 GiB budget: peak {result['peak_mib']:.0f} MiB < 2048",
                result["peak_mib"] * MIB < limit,
            )
        )
        checks.append(
            (
                f"  its time per pair-item {ns(result):.1f} ns within 1.5x of {wmt['items']:,} x "
                f"{wmt['measures']}'s {ns(reference):.1f} ns (ratio {ratio:.2f})",
                ratio <= 1.5,
            )
        )
    if wanted("perm"):
        base = {"items": 500, "systems": 10, "measures": 20, "permutations": 200}
        if quick:
            base = {"items": 50, "systems": 5, "measures": 6, "permutations": 20}
        systems = [5, 10, 20] if quick else [10, 20, 40, 80]

        per = (
            "ms/input/pair",
            lambda r: (
                r["seconds"]
                / (
                    r["params"]["items"]
                    * r["params"]["measures"]
                    * (r["params"]["measures"] - 1)
                    / 2
                )
                * 1e3
            ),
        )
        rows = series("perm", "systems (PERM-BOTH)", "systems", base, systems, None, budget, per)
        exponent = slope([r["params"]["systems"] for r in rows], [r["seconds"] for r in rows])
        tail = slope(
            *zip(*[(r["params"]["systems"], r["seconds"]) for r in rows[-2:]], strict=True)
        )
        for r in rows:
            if r["params"]["systems"] >= (20 if quick else 40):
                checks.append(
                    (
                        f"PERM-BOTH item level, {r['params']['systems']} systems: peak "
                        f"{r['peak_mib']:.0f} MiB < 1024",
                        r["peak_mib"] < 1024,
                    )
                )
        checks.append(
            (
                f"PERM-BOTH time exponent in systems (inputs, pairs fixed) {exponent:.2f} <= 2 "
                f"(last doubling {tail:.2f}; 0.1 allowed for timing noise)",
                exponent <= 2.1,
            )
        )
        measures = [4, 6, 8] if quick else [10, 20, 40]
        per_pair = lambda p: p["measures"] * (p["measures"] - 1) / 2  # noqa: E731
        series(
            "perm",
            "pairs (PERM-BOTH, 20 systems)",
            "measures",
            {**base, "systems": 10 if quick else 20},
            measures,
            per_pair,
            budget,
            per,
        )
    if wanted("ties"):
        base = {"items": 2000, "systems": 20, "measures": 4}
        if quick:
            base = {"items": 200, "systems": 10, "measures": 2}
        n_pairs = lambda p: p["items"] * p["systems"] * (p["systems"] - 1) / 2  # noqa: E731
        per = ("ns/pair", lambda r: r["seconds"] / n_pairs(r["params"]) / 4 * 1e9)
        items = [20, 200, 2000] if quick else [200, 2000, 20000]
        rows = series("ties", "items", "items", base, items, n_pairs, budget, per)
        ten = rows[-1]["seconds"] / rows[-2]["seconds"]
        growth = rows[-1]["params"]["items"] / rows[-2]["params"]["items"]
        n1, n2 = n_pairs(rows[-2]["params"]), n_pairs(rows[-1]["params"])
        nlogn = n2 * math.log(n2) / (n1 * math.log(n1))
        checks.append(
            (
                f"tie calibration: {growth:.0f}x the items -> {ten:.1f}x the time (n log n: "
                f"{nlogn:.1f}x; quadratic: {growth**2:.0f}x)",
                ten <= 1.5 * nlogn,
            )
        )
        series(
            "ties",
            "systems",
            "systems",
            base,
            [5, 10, 20] if quick else [10, 20, 40],
            n_pairs,
            budget,
            per,
        )
    limit_mib = (parse_bytes(budget) if budget else memory_budget()) / MIB
    if wanted("calibrated"):
        base = {"items": 2000, "systems": 20, "measures": 2, "permutations": 1000}
        if quick:
            base = {"items": 200, "systems": 10, "measures": 2, "permutations": 200}
        items = [20, 200, 2000] if quick else [1400, 2000, 20000]
        per = ("ns/swap", lambda r: r["seconds"] / swap_count(r["params"]) * 1e9)
        rows = series("calibrated", "items", "items", base, items, swap_count, budget, per)
        checks.append(
            (
                f"calibrated permutation test {items[-1]:,} x {base['systems']} x "
                f"{base['measures']} metrics, {base['permutations']:,} permutations: peak "
                f"{rows[-1]['peak_mib']:.0f} MiB < {limit_mib:.0f} (the memory budget)",
                rows[-1]["peak_mib"] < limit_mib,
            )
        )
    if wanted("bootstrap"):
        base = {"items": 2000, "systems": 20, "measures": 50, "resamples": 1000}
        if quick:
            base = {"items": 200, "systems": 10, "measures": 10, "resamples": 100}
        rows = series(
            "bootstrap",
            "items",
            "items",
            base,
            [20, 200, 2000] if quick else [200, 2000, 20000],
            budget=budget,
        )
        checks.append(
            (
                f"item-level bootstrap {rows[-1]['params']['items']:,} x {base['systems']} x "
                f"{base['measures']}, {base['resamples']:,} resamples: peak "
                f"{rows[-1]['peak_mib']:.0f} MiB < {limit_mib:.0f} (the memory budget)",
                rows[-1]["peak_mib"] < limit_mib,
            )
        )
        series(
            "bootstrap",
            "systems",
            "systems",
            base,
            [5, 10, 20] if quick else [10, 20, 40],
            budget=budget,
        )
        series(
            "bootstrap",
            "measures",
            "measures",
            base,
            [5, 10, 20] if quick else [25, 50, 100],
            budget=budget,
        )
    if checks:
        print("\nchecks:")
        for text, ok in checks:
            print(f"  {'PASS' if ok else 'FAIL'}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
