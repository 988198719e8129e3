"""Fixtures shared by the store tests."""

from __future__ import annotations

import pytest

from hanna_stats.store import tidy


@pytest.fixture(params=["mask", "bitmap", "grouped"])
def duplicate_check(request, monkeypatch):
    """Each way the tidy ingest finds duplicate rows: a mask per item, one bitmap, grouping all
    rows."""
    if request.param != "mask":
        monkeypatch.setattr(tidy, "MASK_BITS", 0)
    if request.param == "grouped":
        monkeypatch.setattr(tidy, "DUPLICATE_BITS", 0)
    return request.param
