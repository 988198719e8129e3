"""Ingest of a large tidy Parquet file, and refusal of a bad one, against plain DuckDB.

Run from the repository root: ``python benchmarks/ingest.py [--rows N] [--measures N]
[--repeat N] [--defects duplicate,infinite,null-key]`` (default 10,000,000 rows of 50 measures;
``--rows 100000`` is a smoke check of a few seconds; ``--defects ""`` skips the refusals).
Everything is written to a temporary folder and deleted at the end (50,000,000 rows: about 1.5 GB
of files, 6 GB of memory while they are written).

The file (numpy, seeded; written by polars with its default Parquet settings): a tidy score file
as :mod:`hanna_stats.store.tidy` reads it, columns ``item, input, system, measure, value``, one
row per value, sorted by item then measure; 10,000,000 rows = 200,000 items (2,000 inputs x 100
systems) x 50 measures with names like real ones (``wp-00042``, ``llama-2-13b-chat``,
``BERTScore F1``, item ``wp-00042/llama-2-13b-chat``). Fewer rows keep the first ``--rows`` rows;
``--measures`` sets the measures per item (beyond 50: ``BLEU (2)``, ...), so that the rows can
grow at a fixed number of items.

Each measurement is one new process (``CI=1``), timed from its start to its exit; its peak
resident memory is the ``ru_maxrss`` of that one child (``os.wait4``, in a tiny launcher process
so that the child's count does not start from this script's memory), so peaks never mix. Best
time of ``--repeat`` runs, largest peak:

- ours: ``python -m hanna_stats ingest --db FILE PATH`` into a new store file;
- baseline, the same work: ``CREATE TABLE t AS SELECT * FROM read_parquet(PATH)`` into a new
  DuckDB file, by the ``duckdb`` package in a bare ``python -c`` (no validation, no catalogue);
- floors: the same two processes doing nothing but their imports (``hanna_stats.cli`` and
  ``hanna_stats.store.formats``, which loads DuckDB and every parser / ``duckdb``), to show the
  fixed cost inside both figures;
- refusal: the same file with ONE defect (each of ``--defects``, one file each, same number of
  rows): ``duplicate`` (a row of the last 1% repeats the (item, measure) of the row before it),
  ``infinite`` (the last value is ``inf``), ``null-key`` (the last row has no item). Ingested
  into a copy of a store that already holds the first 1% of the items (ingested untimed): the
  command must exit non-zero with one ``error:`` line on stderr (printed), and the store must be
  unchanged: a digest of every table's rows before and after (the SHA-256 of the file is printed
  too, but any writable ``open_store`` rewrites the file's bytes, as it re-runs the schema).
  Target: refusing costs no more time than ingesting the good file (refuse/ingest <= 1).

Peak memory is printed as a multiple of the Parquet file's size and of the table's in-memory
(Arrow, ``polars.DataFrame.estimated_size``) size. The ingested store and the baseline table are
checked to hold the same values (count and sum). The machine is shared (2 cores): absolute times
are noisy, the ratios measured in the same run are the figures to quote.

Targets (issue 22, streaming ingest): peak memory at most 1.5x the baseline's and flat in the row
count, time at most 1.5x. Measured (2 cores, one run each, load average 1 to 2, 4 for 100M):

=======================  ==================  ===================  ==========  ==========
rows x measures          ours                baseline             time        memory
=======================  ==================  ===================  ==========  ==========
10M x 50 (200k items)    3.44 s, 364 MiB     4.09 s, 741 MiB      0.84x       0.49x
50M x 50 (1M items)      13.39 s, 719 MiB    9.35 s, 777 MiB      1.43x       0.93x
50M x 250 (200k items)   7.73 s, 584 MiB     10.32 s, 683 MiB     0.75x       0.85x
100M x 500 (200k items)  28.39 s, 600 MiB    45.40 s, 1,205 MiB   0.63x       0.50x
=======================  ==================  ===================  ==========  ==========

(Another 50M x 50 run: 1.33x time, 0.91x memory.) Our memory is bounded: DuckDB's limit is
lowered while the store is written (:func:`hanna_stats.store.batch.write_memory`: 384 MiB plus
160 bytes per item, for the items' indexes), so past about 30M rows more rows add no memory (584
vs 600 MiB at 200k items); more items do. Refusals (50M x 50, defect in the last 1%): 0.25x-0.28x
the ingest's time, 0.45x its memory. Before (issue 22): 4.65 GB at 10M rows, 3.9x-8.1x the
baseline's time.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parents[1]
N_SYSTEMS, N_MEASURES = 100, 50
DEFECTS = ("duplicate", "infinite", "null-key")
MIB = 2**20
FAMILIES = ("gpt-2", "gpt-3.5-turbo", "gpt-4", "llama-2-chat", "mistral-instruct", "falcon",
            "bart-large", "t5", "pegasus", "opt", "bloom", "flan-t5", "qwen", "gemma", "mpt",
            "vicuna", "zephyr", "phi", "olmo", "command-r")  # fmt: skip
SIZES = ("small", "base", "large", "xl", "7b")
METRICS = ("BLEU", "chrF", "chrF++", "TER", "METEOR", "ROUGE-1 F", "ROUGE-2 F", "ROUGE-L F",
           "ROUGE-WE-3", "CIDEr", "BERTScore P", "BERTScore R", "BERTScore F1", "MoverScore",
           "BARTScore", "BLEURT-20", "COMET-22", "CometKiwi", "BLANC", "SUPERT", "InfoLM",
           "DepthScore", "S3-pyramid", "S3-responsiveness", "SummaQA", "Perplexity (GPT-2)",
           "Coverage", "Density", "Compression", "Novel bigrams", "Repeated trigrams",
           "Distinct-1", "Distinct-2", "Self-BLEU", "MAUVE", "UniEval coherence",
           "UniEval fluency", "G-Eval coherence", "G-Eval relevance", "GPTScore",
           "Prometheus-2 score", "Beluga-13B Relevance", "Beluga-13B Coherence",
           "Llama-3 judge (prompt 1)", "Llama-3 judge (prompt 2)", "Relevance (avg)",
           "Coherence (avg)", "Empathy (avg)", "Surprise (avg)", "Engagement (avg)")  # fmt: skip


@dataclass
class Run:
    """One new process: wall seconds, peak RSS in bytes, exit status, stderr."""

    seconds: float
    peak: int
    status: int
    stdout: str
    stderr: str


# Launched by a tiny Python (no site, only os, sys, time): a child's peak RSS counts from the
# memory of the process that forked it, so the child must not be forked by this one.
LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        os.execv(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - start
with open(sys.argv[1], "w") as f:
    f.write(f"{seconds!r} {usage.ru_maxrss} {os.waitstatus_to_exitcode(status)}")
"""


def run(args: list[str], workdir: Path) -> Run:
    """Run ``args`` in a new process; its own wall time and peak RSS (``os.wait4``)."""
    out, err, facts = workdir / "stdout.txt", workdir / "stderr.txt", workdir / "wait4.txt"
    facts.unlink(missing_ok=True)
    env = {**os.environ, "CI": "1"}
    with out.open("wb") as fo, err.open("wb") as fe:
        subprocess.run([sys.executable, "-S", "-c", LAUNCHER, str(facts), *args], stdout=fo,
                       stderr=fe, cwd=REPO, env=env, check=True)  # fmt: skip
    seconds, peak_kib, status = facts.read_text().split()
    return Run(float(seconds), int(peak_kib) * 1024, int(status), out.read_text(),
               err.read_text())  # fmt: skip


def best(runs: list[Run]) -> Run:
    """Best time, largest peak, of runs that all succeeded or all failed alike."""
    fastest = min(runs, key=lambda r: r.seconds)
    return Run(fastest.seconds, max(r.peak for r in runs), fastest.status, fastest.stdout,
               fastest.stderr)  # fmt: skip


def names(n_measures: int = N_MEASURES) -> tuple[list[str], list[str]]:
    """100 system and ``n_measures`` measure names (beyond 50: ``BLEU (2)``, ...)."""
    systems = [f"{family}-{size}" for family in FAMILIES for size in SIZES][:N_SYSTEMS]
    measures = [METRICS[k % len(METRICS)] + (f" ({k // len(METRICS) + 1})" if k >= len(METRICS)
                else "") for k in range(n_measures)]  # fmt: skip
    return systems, measures


def codes(n_rows: int, seed: int, n_measures: int = N_MEASURES) -> tuple[np.ndarray, ...]:
    """Item code, measure code and value of every row (sorted by item, then measure)."""
    row = np.arange(n_rows, dtype=np.int64)
    values = np.random.default_rng(seed).random(n_rows)
    return row // n_measures, row % n_measures, values


def table(item: np.ndarray, measure: np.ndarray, values: np.ndarray,
          null_last_item: bool = False, n_measures: int = N_MEASURES) -> pl.DataFrame:  # fmt: skip
    """The tidy frame of these codes (strings gathered from the name lists)."""
    systems, measures = names(n_measures)
    n_items = int(item.max()) + 1
    n_inputs = -(-n_items // N_SYSTEMS)
    inputs = pl.Series([f"wp-{i:05d}" for i in range(n_inputs)])
    item_input = np.arange(n_items) // N_SYSTEMS
    item_system = np.arange(n_items) % N_SYSTEMS
    system_names = pl.Series(systems)
    item_names = inputs.gather(item_input) + "/" + system_names.gather(item_system)
    item_col = item_names.gather(item)
    if null_last_item:
        item_col = item_col.scatter(len(item_col) - 1, None)
    return pl.DataFrame(
        {
            "item": item_col,
            "input": inputs.gather(item_input[item]),
            "system": system_names.gather(item_system[item]),
            "measure": pl.Series(measures).gather(measure),
            "value": values,
        }
    )


def write_files(folder: Path, n_rows: int, defects: list[str], seed: int,
                n_measures: int = N_MEASURES) -> dict:  # fmt: skip
    """Write the good file, one bad file per defect and the small first ingest; their facts."""
    item, measure, values = codes(n_rows, seed, n_measures)
    good = table(item, measure, values, n_measures=n_measures)
    facts = {"arrow_bytes": good.estimated_size(), "items": int(item.max()) + 1}
    good.write_parquet(folder / "scores.parquet")
    n_small = max(1, facts["items"] // 100)
    good.head(n_small * n_measures).write_parquet(folder / "first.parquet")  # rows by item
    del good
    gc.collect()
    facts["first_items"] = n_small
    rng = np.random.default_rng(seed + 1)
    for defect in defects:
        bad_measure, bad_values, null_item = measure, values, False
        if defect == "duplicate":
            tail = max(2, n_rows // 100)
            r = n_rows - 1 - int(rng.integers(0, tail))
            r = r if measure[r] != 0 else r + 1 if r + 1 < n_rows else r - 1
            bad_measure = measure.copy()
            bad_measure[r] = measure[r - 1]
            facts["duplicate_row"] = r + 1
        elif defect == "infinite":
            bad_values = values.copy()
            bad_values[-1] = np.inf
        else:
            null_item = True
        bad = table(item, bad_measure, bad_values, null_last_item=null_item, n_measures=n_measures)
        bad.write_parquet(folder / f"bad-{defect}.parquet")
        del bad
        gc.collect()
    return facts


def store_state(db: Path) -> tuple[str, str]:
    """SHA-256 of the store file and a digest of every table's rows (sorted) in it."""
    file_hash = hashlib.sha256(db.read_bytes()).hexdigest()
    con = duckdb.connect(str(db), read_only=True)
    try:
        digest = hashlib.sha256()
        tables = con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
            "ORDER BY table_name"
        ).fetchall()
        for (name,) in tables:
            rows = con.execute(f'SELECT * FROM "{name}"').fetchall()
            digest.update(name.encode())
            digest.update(repr(sorted(map(repr, rows))).encode())
    finally:
        con.close()
    return file_hash, digest.hexdigest()


def value_check(db: Path, table_name: str, column: str) -> tuple[int, float]:
    """Number of rows and sum of ``column`` of a table in a DuckDB file."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        count, total = con.execute(f"SELECT count(*), sum({column}) FROM {table_name}").fetchone()
    finally:
        con.close()
    return count, total


def fmt_bytes(n: float) -> str:
    return f"{n / MIB:,.0f} MiB" if n >= 100 * MIB else f"{n / MIB:.1f} MiB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000, help="rows of the tidy file")
    parser.add_argument("--repeat", type=int, default=1, help="runs per measurement (best of)")
    parser.add_argument("--defects", default=",".join(DEFECTS),
                        help=f"bad files to refuse, of {', '.join(DEFECTS)}")  # fmt: skip
    parser.add_argument("--measures", type=int, default=N_MEASURES,
                        help="measures per item (rows / measures items)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    defects = [d for d in args.defects.split(",") if d]
    if unknown := set(defects) - set(DEFECTS):
        parser.error(f"unknown defect(s) {sorted(unknown)}; choose from {DEFECTS}")
    if args.rows < 2 * args.measures * N_SYSTEMS:
        parser.error(f"--rows must be at least {2 * args.measures * N_SYSTEMS}")
    py = sys.executable
    failed: list[str] = []

    with tempfile.TemporaryDirectory(prefix="hanna-ingest-") as tmp:
        tmp = Path(tmp)
        start = time.perf_counter()
        facts = write_files(tmp, args.rows, defects, args.seed, args.measures)
        parquet = tmp / "scores.parquet"
        size = parquet.stat().st_size
        arrow = facts["arrow_bytes"]
        print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; Python "
              f"{sys.version.split()[0]}, polars {pl.__version__}, duckdb {duckdb.__version__}; "
              f"best of {args.repeat}")  # fmt: skip
        print(f"file: {args.rows:,} rows ({facts['items']:,} items x {args.measures} measures), "
              f"Parquet {fmt_bytes(size)}, in memory (Arrow) {fmt_bytes(arrow)}; written in "
              f"{time.perf_counter() - start:.1f} s", flush=True)  # fmt: skip

        def measure(label: str, make_args, expect_ok: bool = True, prepare=None) -> Run | None:
            runs = []
            for k in range(args.repeat):
                cmd = make_args(k)
                if prepare is not None:
                    prepare(k)
                done = run(cmd, tmp)
                if (done.status == 0) != expect_ok:
                    tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
                    print(f"  {label}: FAILED (exit status {done.status}, expected "
                          f"{'0' if expect_ok else 'non-zero'})\n      "
                          + "\n      ".join(tail), flush=True)  # fmt: skip
                    failed.append(label)
                    return None
                runs.append(done)
            result = best(runs)
            print(f"  {label}: " + ", ".join(f"{r.seconds:.2f}" for r in runs)
                  + f" s; peak {fmt_bytes(result.peak)}", flush=True)  # fmt: skip
            return result

        imports = "import hanna_stats.cli, hanna_stats.store.formats"
        floor_ours = measure(f"floor, ours: {imports}", lambda k: [py, "-c", imports])
        floor_base = measure("floor, baseline: import duckdb",
                             lambda k: [py, "-c", "import duckdb"])

        def fresh(name: str, k: int) -> Path:
            db = tmp / f"{name}-{k}.duckdb"
            db.unlink(missing_ok=True)
            return db

        ours = measure("ours: python -m hanna_stats ingest --db NEW PATH", lambda k: [
            py, "-m", "hanna_stats", "ingest", "--db", str(fresh("ours", k)), str(parquet)])
        baseline_code = (
            "import sys, duckdb\n"
            "con = duckdb.connect(sys.argv[1])\n"
            "path = sys.argv[2].replace(\"'\", \"''\")\n"
            "con.execute(f\"CREATE TABLE t AS SELECT * FROM read_parquet('{path}')\")\n"
            "con.close()\n"
        )
        base = measure("baseline: duckdb CREATE TABLE t AS SELECT * FROM read_parquet(PATH)",
                       lambda k: [py, "-c", baseline_code, str(fresh("base", k)), str(parquet)])
        if ours is not None and base is not None:
            held = value_check(tmp / "ours-0.duckdb", "scores", "value")
            loaded = value_check(tmp / "base-0.duckdb", "t", "value")
            same = held[0] == loaded[0] == args.rows and abs(held[1] - loaded[1]) < 1e-6 * args.rows
            print(f"  same values in both: {'yes' if same else 'NO'} ({held[0]:,} rows, sum "
                  f"{held[1]:.6f} / {loaded[0]:,} rows, sum {loaded[1]:.6f})")  # fmt: skip
            if not same:
                failed.append("the store and the baseline table differ")
            for k in range(args.repeat):
                (tmp / f"ours-{k}.duckdb").unlink(missing_ok=True)
                (tmp / f"base-{k}.duckdb").unlink(missing_ok=True)

        # A store holding the first 1% of the items; each refusal goes into a copy of it.
        seed_db = tmp / "first.duckdb"
        first = run([py, "-m", "hanna_stats", "ingest", "--db", str(seed_db),
                     str(tmp / "first.parquet")], tmp)  # fmt: skip
        if first.status != 0:
            print(f"  first ingest FAILED: {first.stderr.strip()[-400:]}")
            failed.append("first ingest")
            defects = []
        else:
            print(f"  store for the refusals: the first {facts['first_items']:,} items "
                  f"({fmt_bytes(seed_db.stat().st_size)})")  # fmt: skip
            before = store_state(seed_db)
        refusals: dict[str, tuple[Run, bool, bool]] = {}
        for defect in defects:
            target = tmp / f"refuse-{defect}.duckdb"
            bad = tmp / f"bad-{defect}.parquet"
            done = measure(f"refuse ({defect}): ingest --db COPY BAD_PATH",
                           lambda k, target=target, bad=bad: [
                               py, "-m", "hanna_stats", "ingest", "--db", str(target), str(bad)],
                           expect_ok=False,
                           prepare=lambda k, target=target: shutil.copyfile(seed_db, target))
            if done is None:
                continue
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            one_line = len(lines) == 1 and lines[0].startswith("error:")
            after = store_state(target)
            file_same, content_same = before[0] == after[0], before[1] == after[1]
            print(f"    stderr ({len(lines)} line(s)): {lines[0] if lines else '(none)'}")
            bytes_note = "unchanged" if file_same else "changed, as by any writable open"
            print(f"    store after the refusal: table contents "
                  f"{'unchanged' if content_same else 'CHANGED'} (file bytes {bytes_note})")
            if not one_line:
                failed.append(f"refuse ({defect}): not one error line on stderr")
            if not content_same:
                failed.append(f"refuse ({defect}): the store changed")
            refusals[defect] = (done, one_line, content_same)
            target.unlink(missing_ok=True)

    print(f"\n{args.rows:,} rows; Parquet {fmt_bytes(size)}, Arrow {fmt_bytes(arrow)}")
    print(f"{'process':<44} {'time (s)':>9} {'peak RSS':>11} {'x file':>7} {'x Arrow':>8}")
    shown = [("floor: imports of ours", floor_ours), ("floor: import duckdb", floor_base),
             ("ours: ingest (tidy Parquet -> store)", ours),
             ("baseline: duckdb CREATE TABLE AS Parquet", base)]  # fmt: skip
    shown += [(f"refuse, {d}", r[0]) for d, r in refusals.items()]
    for label, r in shown:
        if r is None:
            print(f"{label:<44} {'failed':>9}")
            continue
        print(f"{label:<44} {r.seconds:9.2f} {fmt_bytes(r.peak):>11} {r.peak / size:7.1f} "
              f"{r.peak / arrow:8.2f}")  # fmt: skip

    print()
    if ours is not None and base is not None:
        print(f"ours / baseline: time {ours.seconds / base.seconds:.2f}x, peak memory "
              f"{ours.peak / base.peak:.2f}x")  # fmt: skip
        if floor_ours is not None and floor_base is not None:
            extra_t = (ours.seconds - floor_ours.seconds, base.seconds - floor_base.seconds)
            extra_m = (ours.peak - floor_ours.peak, base.peak - floor_base.peak)
            print(f"  above the import floors: time {extra_t[0]:.2f} s vs {extra_t[1]:.2f} s, "
                  f"peak memory {fmt_bytes(extra_m[0])} vs {fmt_bytes(extra_m[1])} "
                  f"({extra_m[0] / size:.1f}x vs {extra_m[1] / size:.1f}x the file)")  # fmt: skip
    for defect, (r, one_line, unchanged) in refusals.items():
        if ours is None:
            break
        ratio = r.seconds / ours.seconds
        print(f"refuse ({defect}) / ingest: time {ratio:.2f} (target <= 1: "
              f"{'met' if ratio <= 1 else 'NOT met'}), peak memory {r.peak / ours.peak:.2f}; "
              f"one error line: {'yes' if one_line else 'NO'}; store unchanged: "
              f"{'yes' if unchanged else 'NO'}")  # fmt: skip
    load = os.getloadavg()[0]
    if load > (os.cpu_count() or 1):
        print(f"\nwarning: load average {load:.1f} on {os.cpu_count()} cores at the end: times "
              "are inflated; the ratios (measured under the same load) are steadier")
    if failed:
        print(f"\n{len(failed)} failure(s):", file=sys.stderr)
        for failure in failed:
            print(f"  {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
