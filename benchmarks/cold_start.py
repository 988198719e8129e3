"""Start-up cost of the command line: wall times of new processes, against the import floor.

Run from the repository root: ``python benchmarks/cold_start.py [--data DIR] [--repeat N]``
(``--data`` defaults to ``$HANNA_DATA`` or ``../shared/data/hanna``).

Every command runs in a new process (``subprocess``, ``sys.executable``, ``CI=1``: no progress
bars), timed from the start of the process to its exit, best of ``--repeat`` in the same run:

- the floor: ``python -c "import numpy, numba, polars, duckdb"``, the libraries every command
  needs; no command can start faster (the baseline of this benchmark);
- ``python -c "import hanna_stats.kernels"`` (target at most 0.8 s);
- ``python -m hanna_stats correlate --db FILE --level system --format csv`` on a store built once
  by ``python -m hanna_stats ingest --db FILE DATA_DIR`` (target at most 1.5 s, Numba cache
  filled);
- ``python -m hanna_stats report --db FILE --out TMP.html``: once with an empty Numba cache
  (``NUMBA_CACHE_DIR`` a fresh temporary folder: every kernel compiled, the first run after an
  install; target at most 25 s) and then with the cache that run filled (target at most 4 s).

The warm commands use the cache the cold report filled, after one untimed run each (so every
kernel they call is in it). A command that fails is reported with its exit status and the end
of its stderr, and the script exits with status 1.

``--against DIR`` (a checkout of an earlier commit, e.g. ``git worktree add /tmp/base REV``)
also times the warm commands and ``--help`` of that checkout in the same run, alternating
between the two in every round (each tree's code is imported from its own folder: the
process runs in its :func:`import_root`, also on ``PYTHONPATH``), and prints each command's
time as a multiple of the floor for both, and their ratio: whether this checkout starts any
slower than the other.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FAILED: list[str] = []
#: The top-level folders the installed package maps into ``hanna_stats`` (pyproject.toml's
#: package-dir).
MAPPED = ("reports", "scoring", "sql")


def import_root(tree: Path, folder: Path) -> Path:
    """A folder under ``folder`` from which ``tree``'s package imports as installed: a
    ``hanna_stats`` of links to each entry of ``tree/hanna_stats`` and to ``tree``'s
    :data:`MAPPED` folders. On ``PYTHONPATH`` (and as the working folder), it is found before
    the editable install of this checkout, whose finder would otherwise take
    ``hanna_stats.reports`` from here."""
    root = folder / f"import-{tree.name}"
    package = root / "hanna_stats"
    if package.is_dir():  # made by an earlier call
        return root
    package.mkdir(parents=True)
    for entry in (tree / "hanna_stats").iterdir():
        (package / entry.name).symlink_to(entry)
    for name in MAPPED:
        if (tree / name).is_dir():
            (package / name).symlink_to(tree / name)
    return root


def run(
    label: str, args: list[str], env: dict, *, check_output=None, cwd: Path = REPO
) -> float | None:
    """Seconds from start to exit of one new process; None (and recorded) if it fails."""
    start = time.perf_counter()
    done = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    problem = None
    if done.returncode != 0:
        problem = f"exit status {done.returncode}"
    elif check_output is not None:
        problem = check_output(done.stdout)
    if problem:
        tail = "\n      ".join((done.stderr or done.stdout).strip().splitlines()[-8:])
        print(f"  {label}: FAILED ({problem}) after {seconds:.2f} s\n      {tail}", flush=True)
        FAILED.append(f"{label}: {problem}")
        return None
    return seconds


def best(label: str, args: list[str], env: dict, repeat: int, *, warm_up: bool = False,
         check_output=None) -> float | None:
    """Best of ``repeat`` runs (after one untimed run if ``warm_up``); None if any fails."""
    if warm_up and run(f"{label} (warm-up)", args, env, check_output=check_output) is None:
        return None
    times = []
    for _ in range(repeat):
        seconds = run(label, args, env, check_output=check_output)
        if seconds is None:
            return None
        times.append(seconds)
    print(f"  {label}: " + ", ".join(f"{t:.2f}" for t in times) + " s", flush=True)
    return min(times)


def csv_check(stdout: str) -> str | None:
    lines = stdout.strip().splitlines()
    if not lines or not lines[0].startswith("measure,against,"):
        return f"no CSV of correlations on stdout (first line: {lines[0][:80] if lines else ''!r})"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = os.environ.get("HANNA_DATA", REPO.parent / "shared" / "data" / "hanna")
    parser.add_argument("--data", type=Path, default=Path(default), help="HANNA data folder")
    parser.add_argument("--repeat", type=int, default=3, help="runs per command (best of)")
    parser.add_argument(
        "--against", type=Path, metavar="DIR", help="also time this checkout (see the docstring)"
    )
    args = parser.parse_args()
    if args.against is not None:
        return compare(args)
    py = sys.executable

    with tempfile.TemporaryDirectory(prefix="hanna-cold-") as tmp:
        tmp = Path(tmp)
        cache = tmp / "numba-cache"
        cache.mkdir()
        env = {**os.environ, "CI": "1", "NUMBA_CACHE_DIR": str(cache)}
        db, html = tmp / "hanna.duckdb", tmp / "report.html"
        print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; Python "
              f"{sys.version.split()[0]}; best of {args.repeat}; Numba cache {cache} (empty at "
              f"first)", flush=True)

        floor = best("floor: import numpy, numba, polars, duckdb",
                     [py, "-c", "import numpy, numba, polars, duckdb"], env, args.repeat)
        kernels = best("import hanna_stats.kernels",
                       [py, "-c", "import hanna_stats.kernels"], env, args.repeat)

        ingest = run("ingest", [py, "-m", "hanna_stats", "ingest", "--db", str(db),
                                str(args.data)], env)
        if ingest is not None:
            print(f"  ingest (once, builds the store file): {ingest:.2f} s", flush=True)
        report = [py, "-m", "hanna_stats", "report", "--db", str(db), "--out", str(html)]
        cold = run("report, empty Numba cache", report, env) if ingest is not None else None
        if cold is not None:
            size = html.stat().st_size if html.is_file() else 0
            print(f"  report, empty Numba cache: {cold:.2f} s ({size:,} bytes written)",
                  flush=True)

        correlate = [py, "-m", "hanna_stats", "correlate", "--db", str(db), "--level", "system",
                     "--format", "csv"]
        warm_corr = warm_report = None
        if ingest is not None:
            warm_corr = best("correlate --level system --format csv", correlate, env,
                             args.repeat, warm_up=True, check_output=csv_check)
            warm_report = best("report, Numba cache filled", report, env, args.repeat,
                               warm_up=True)

    rows = [
        ("python -c 'import numpy, numba, polars, duckdb'", floor, float("nan"), False, "floor"),
        ("python -c 'import hanna_stats.kernels'", kernels, 0.8, True, ""),
        ("correlate --db FILE --level system --format csv", warm_corr, 1.5, True, "warm cache"),
        ("report --db FILE --out TMP.html", warm_report, 4.0, True, "warm cache"),
        ("report, empty Numba cache (1 run)", cold, 25.0, False, ""),
    ]

    print(f"\n{'command (new process)':<50} {'time (s)':>9} {'target (s)':>11} "
          f"{'x floor':>8}  result")
    for label, seconds, target, vs_floor, note in rows:
        shown = f"{seconds:9.2f}" if seconds is not None else f"{'failed':>9}"
        if target != target:  # the floor itself
            print(f"{label:<50} {shown} {'-':>11} {'1.0':>8}  {note}")
            continue
        ratio = (f"{seconds / floor:8.1f}" if vs_floor and seconds is not None and floor
                 else f"{'-':>8}")
        verdict = ("FAILED to run" if seconds is None
                   else "met" if seconds <= target else "NOT met")
        print(f"{label:<50} {shown} {target:11.1f} {ratio}  {verdict}"
              f"{f' ({note})' if note else ''}")
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        print(f"\nwarning: load average {load:.1f} on {os.cpu_count()} cores at the end: other "
              "processes compete for the cores and every time above is inflated; the ratio to "
              "the floor (measured under the same load) is the steadier figure")
    if FAILED:
        print(f"\n{len(FAILED)} command(s) failed:", file=sys.stderr)
        for failure in FAILED:
            print(f"  {failure}", file=sys.stderr)
        return 1
    return 0


def compare(args: argparse.Namespace) -> int:
    """This checkout against ``args.against``: warm starts as multiples of the floor."""
    py = sys.executable
    trees = {"this": REPO, "base": args.against.resolve()}
    with tempfile.TemporaryDirectory(prefix="hanna-cold-") as tmp:
        tmp = Path(tmp)
        envs, commands, roots = {}, {}, {}
        for name, tree in trees.items():
            cache = tmp / f"numba-{name}"
            cache.mkdir()
            envs[name] = {**os.environ, "CI": "1", "NUMBA_CACHE_DIR": str(cache)}
            roots[name] = import_root(tree, tmp / name)
            envs[name]["PYTHONPATH"] = str(roots[name])
            db, html = tmp / f"{name}.duckdb", tmp / f"{name}.html"
            if run(f"{name}: ingest", [py, "-m", "hanna_stats", "ingest", "--db", str(db),
                                       str(args.data)], envs[name], cwd=roots[name]) is None:
                return 1
            commands[name] = {
                "python -m hanna_stats --help": [py, "-m", "hanna_stats", "--help"],
                "python -c 'import hanna_stats.kernels'": [py, "-c", "import hanna_stats.kernels"],
                "correlate --db FILE --level system --format csv": [
                    py, "-m", "hanna_stats", "correlate", "--db", str(db), "--level", "system",
                    "--format", "csv"],
                "report --db FILE --out TMP.html": [
                    py, "-m", "hanna_stats", "report", "--db", str(db), "--out", str(html)],
            }
            for label, command in commands[name].items():  # warm-up: fills the Numba cache
                if run(f"{name}: {label} (warm-up)", command, envs[name], cwd=roots[name]) is None:
                    return 1
        floor_cmd = [py, "-c", "import numpy, numba, polars, duckdb"]
        times: dict[tuple[str, str], list[float]] = {}
        print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; "
              f"{args.repeat} rounds, alternating this/base", flush=True)
        for _ in range(args.repeat):
            for name in trees:
                for label, command in {"floor": floor_cmd, **commands[name]}.items():
                    seconds = run(f"{name}: {label}", command, envs[name], cwd=roots[name])
                    if seconds is None:
                        return 1
                    times.setdefault((name, label), []).append(seconds)
    print(f"\n{'command (new process), best of ' + str(args.repeat):<52} {'this':>7} {'base':>7}"
          f" {'this/floor':>10} {'base/floor':>10} {'ratio':>6}")
    floor = {name: min(times[(name, "floor")]) for name in trees}
    for label in ["floor", *commands["this"]]:
        this, base = min(times[("this", label)]), min(times[("base", label)])
        ratio = (this / floor["this"]) / (base / floor["base"])
        print(f"{label:<52} {this:7.2f} {base:7.2f} {this / floor['this']:10.2f} "
              f"{base / floor['base']:10.2f} {ratio:6.2f}")
    print("\nratio: this checkout's multiple of its floor over the base's (1.00: the same start; "
          "above 1: slower)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
