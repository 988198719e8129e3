"""Cold start of the kernels the analyses use: import time and first-call (compile) time.

Each measurement is a new Python process; ``--cold`` (the default) gives it a fresh, empty
``NUMBA_CACHE_DIR``, so every compiled kernel it calls is compiled (a user's first run after an
install); ``--warm`` reuses one cache directory, filled by a first run. The floor is
``import numba, numpy`` alone.

    python benchmarks/bench_compile.py [--warm]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

PROBE = """
import time
t0 = time.perf_counter()
import numpy as np
from hanna_stats.kernels import (
    adjust_pvalues, bootstrap_ci, borda_count, intraclass_corr, krippendorff_alpha,
    level_correlation, paired_bootstrap, williams_test,
)
t1 = time.perf_counter()
rng = np.random.default_rng(0)
A = rng.normal(size=(3, 8, 5))
for level in ("item", "system"):
    for method in ("pearson", "spearman", "kendall"):
        level_correlation(A, level=level, method=method)
bootstrap_ci(A[:1], A[1:], resamples=20)
paired_bootstrap(A, resamples=20)
williams_test([0.5, 0.3], [[1, 0.4], [0.4, 1]], 10)
borda_count(A[0])
adjust_pvalues([0.1, 0.2])
intraclass_corr(A[0])
krippendorff_alpha(A[0])
t2 = time.perf_counter()
print(f"{t1 - t0:.2f} {t2 - t1:.2f}")
"""


def run(code, cache_dir):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    ).stdout
    return time.perf_counter() - start, out.split()


def main():
    warm = "--warm" in sys.argv
    with tempfile.TemporaryDirectory() as cache:
        floor, _ = run("import numba, numpy", cache)
        if warm:
            run(PROBE, cache)
        wall, (imported, calls) = run(PROBE, cache)
    kind = "warm" if warm else "cold"
    print(f"floor (python + import numba, numpy): {floor:.2f} s")
    print(f"{kind}: import kernels {imported} s, first calls {calls} s, process {wall:.2f} s")


if __name__ == "__main__":
    main()
