"""Benchmarks of the paper's analyses (issue: agreement, significance, resampling, rankings).

Each part times our kernels AND a straightforward baseline (scipy / numpy / pingouin loops, the
way the authors' notebooks did it) on the same work in the same run, and prints both times and
the ratio. Run from the repository root:

    python benchmarks/analyses.py

Parts can be run alone: ``python benchmarks/bench_agreement.py`` (ICC, Krippendorff's alpha),
``bench_significance.py`` (paired bootstrap, Williams), ``bench_resampling.py`` (bootstrap CIs,
PERM-BOTH at WMT scale).
"""

from __future__ import annotations

import bench_agreement
import bench_resampling
import bench_significance


def main() -> None:
    for part in (bench_significance, bench_resampling, bench_agreement):
        print(f"\n=== {part.__name__} ===", flush=True)
        part.main()


if __name__ == "__main__":
    main()
