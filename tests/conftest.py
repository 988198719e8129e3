"""Shared fixtures. Tests and CI read the HANNA files from ../shared/data/hanna (not committed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# Session fixtures tiny_bert and tiny_bart: small models built on the fly (tests/tiny_models.py).
pytest_plugins = ("tiny_models",)

REPO = Path(__file__).resolve().parents[1]
HANNA_DIR = Path(os.environ.get("HANNA_DATA", REPO.parent / "shared" / "data" / "hanna"))


@pytest.fixture(scope="session")
def hanna_dir() -> Path:
    if not (HANNA_DIR / "hanna_metric_scores.csv").exists():
        pytest.fail(f"HANNA data not found in {HANNA_DIR}; set HANNA_DATA=DIR")
    return HANNA_DIR
