"""Shared fixtures. Tests and CI read the HANNA files from ../shared/data/hanna and WMT22 zh-en
(in mt-metrics-eval's layout) from ../shared/data/wmt22; neither is committed."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# Session fixtures tiny_bert and tiny_bart: small models built on the fly (tests/tiny_models.py).
pytest_plugins = ("tiny_models",)

REPO = Path(__file__).resolve().parents[1]
# The tests mirror the layers (tests/kernels, tests/store, ...). A few test modules build files
# that others reuse (test_store_wmt.make_test_set, test_store_summeval.records, the paper's
# tables in test_paper_golden): every layer's folder is importable by module name.
sys.path[:0] = [
    str(folder)
    for folder in sorted(Path(__file__).parent.iterdir())
    if folder.is_dir() and folder.name != "__pycache__"
]
HANNA_DIR = Path(os.environ.get("HANNA_DATA", REPO.parent / "shared" / "data" / "hanna"))
#: One real WMT22 language pair (zh-en) in mt-metrics-eval's layout (not committed).
WMT22_DIR = REPO.parent / "shared" / "data" / "wmt22"


@pytest.fixture(scope="session")
def hanna_dir() -> Path:
    if not (HANNA_DIR / "hanna_metric_scores.csv").exists():
        pytest.fail(f"HANNA data not found in {HANNA_DIR}; set HANNA_DATA=DIR")
    return HANNA_DIR


@pytest.fixture(scope="session")
def hanna_study(hanna_dir):
    """The whole public HANNA study: metric scores, LLM judges and judge-slot ratings."""
    from hanna_stats.store import build_hanna_store, load_study

    con = build_hanna_store(hanna_dir)
    try:
        return load_study(con)
    finally:
        con.close()


@pytest.fixture(scope="session")
def metric_study(hanna_dir):
    """A study of ``hanna_metric_scores.csv`` alone (story-level averages, no rater-level data)."""
    from hanna_stats.store import ingest, load_study, open_store

    con = open_store()
    try:
        ingest(con, hanna_dir / "hanna_metric_scores.csv", format="hanna-metric-scores")
        return load_study(con)
    finally:
        con.close()


@pytest.fixture(scope="session")
def wmt22_dir() -> Path:
    if not (WMT22_DIR / "human-scores").is_dir():
        pytest.fail(f"WMT22 data not found in {WMT22_DIR}")
    return WMT22_DIR


@pytest.fixture(scope="session")
def wmt22_study(wmt22_dir):
    """The real WMT22 zh-en test set, standard reference refA (mt-metrics-eval's choice)."""
    from hanna_stats.store import ingest, load_study, open_store

    con = open_store()
    try:
        ingest(con, wmt22_dir, lp="zh-en", ref="refA", format="wmt")
        return load_study(con)
    finally:
        con.close()


@pytest.fixture(scope="session")
def java() -> str:
    """The ``java`` binary that runs METEOR's original jar (the METEOR oracle tests). The test
    command installs Debian's ``default-jre-headless``: missing under CI, the tests fail rather
    than skip; elsewhere they skip."""
    found = shutil.which("java")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("java is not installed: the test command installs default-jre-headless")
        pytest.skip("java not installed")
    return found
