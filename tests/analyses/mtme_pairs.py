"""A two-pair WMT22 test set in mt-metrics-eval's layout, for the pooled accuracy test
(``tests/analyses/test_pair_statistics_wmt22.py``): the real zh-en pair of ../shared/data/wmt22
(linked, not copied) with system-level files for six metrics, and a small made-up pair ``en-zz``.

Standard library and numpy only, so that mt-metrics-eval's run (outside this project, in its
own virtual environment) builds the very same files by importing this module by path.

- ``zh-en``: sources, references, documents, system outputs, human scores and the six metrics'
  segment scores are symbolic links to the real files; each metric gets a
  ``metric-scores/zh-en/METRIC.sys.score`` of its systems' segment means (this copy of WMT22 has
  no metric ``.sys.score`` files; mt-metrics-eval reads system-level metric scores from them);
- ``en-zz``: 12 segments, 6 systems ``zz-A`` .. ``zz-F``, one reference ``refA``, MQM segment
  and system scores and the same six metrics' segment and system scores, made up from a seeded
  generator and written with 3 decimals (a tie between two systems in MQM and in one metric).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

#: The six metrics of the test (mt-metrics-eval's names).
METRICS = (
    "BLEU-refA",
    "chrF-refA",
    "COMET-22-refA",
    "COMETKiwi-src",
    "BLEURT-20-refA",
    "metricx_xxl_MQM_2020-refA",
)
#: The made-up pair's systems.
ZZ_SYSTEMS = tuple(f"zz-{c}" for c in "ABCDEF")


def _link(target: Path, link: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target.resolve(), link)


def _read_scores(path: Path) -> dict[str, list[float]]:
    scores: dict[str, list[float]] = {}
    for line in path.read_text().splitlines():
        system, value = line.split("\t")
        scores.setdefault(system, []).append(float(value))
    return scores


def _write(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines))


def _zh_en(source: Path, root: Path) -> None:
    for folder, pattern in (
        ("sources", "zh-en.*"),
        ("references", "zh-en.*"),
        ("documents", "zh-en.*"),
        ("human-scores", "zh-en.*"),
        ("system-outputs/zh-en", "*"),
    ):
        for path in sorted((source / folder).glob(pattern)):
            _link(path, root / folder / path.name)
    for metric in METRICS:
        seg = source / "metric-scores" / "zh-en" / f"{metric}.seg.score"
        _link(seg, root / "metric-scores" / "zh-en" / seg.name)
        means = {s: float(np.mean(v)) for s, v in _read_scores(seg).items()}
        _write(
            root / "metric-scores" / "zh-en" / f"{metric}.sys.score",
            [f"{s}\t{v!r}" for s, v in means.items()],
        )


def _en_zz(root: Path) -> None:
    rng = np.random.default_rng(20250)
    n = 12
    _write(root / "sources" / "en-zz.txt", [f"source {i}" for i in range(n)])
    _write(root / "references" / "en-zz.refA.txt", [f"reference {i}" for i in range(n)])
    _write(root / "documents" / "en-zz.docs", [f"news doc{i // 4}" for i in range(n)])
    quality = np.array([-1.0, -2.0, -3.0, -3.0, -5.0, -6.0])  # zz-C and zz-D tie in MQM
    gold = np.round(quality[:, None] + rng.normal(0, 2, (6, n)), 3)
    gold_sys = quality.copy()
    for system in ZZ_SYSTEMS:
        lines = [f"{system} {i}" for i in range(n)]
        _write(root / "system-outputs" / "en-zz" / f"{system}.txt", lines)
    _write(
        root / "human-scores" / "en-zz.mqm.seg.score",
        [f"{system}\t{v:.3f}" for s, system in enumerate(ZZ_SYSTEMS) for v in gold[s]],
    )
    _write(
        root / "human-scores" / "en-zz.mqm.sys.score",
        [f"{system}\t{gold_sys[s]:.3f}" for s, system in enumerate(ZZ_SYSTEMS)],
    )
    for k, metric in enumerate(METRICS):
        noise = rng.normal(0, 1.0 + k / 2, 6)
        sys_scores = np.round(quality + noise, 3)
        if k == 0:
            sys_scores[1] = sys_scores[2]  # BLEU ties zz-B and zz-C
        seg = np.round(sys_scores[:, None] + rng.normal(0, 1, (6, n)), 3)
        folder = root / "metric-scores" / "en-zz"
        _write(
            folder / f"{metric}.seg.score",
            [f"{system}\t{v:.3f}" for s, system in enumerate(ZZ_SYSTEMS) for v in seg[s]],
        )
        _write(
            folder / f"{metric}.sys.score",
            [f"{system}\t{sys_scores[s]:.3f}" for s, system in enumerate(ZZ_SYSTEMS)],
        )


def build(source: Path, root: Path) -> Path:
    """Write the two-pair test set under ``root``; returns its folder ``root/wmt22``."""
    folder = Path(root) / "wmt22"
    _zh_en(Path(source), folder)
    _en_zz(folder)
    return folder
