"""The machinery of docs/error_rates.py (the error-rate page of issue 31), at a small size.

The script's functions run here on a tiny data shape: an exact test under its null rejects at
its level within the binomial interval, a test under an alternative rejects more often (so the
counting can fail both ways), blocks of studies add up to the same counts, and the committed
page's rows are the script's rows, rendered by the same function.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest

from hanna_stats.kernels import permutation_test_pairs

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture(scope="module")
def er():
    spec = importlib.util.spec_from_file_location("error_rates", DOCS / "error_rates.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["error_rates"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


TINY_STUDIES = 300
PERMS = 99  # p <= 0.05 with no identity added: (floor(4.95) + 1) / 100 = 0.05 exactly


def _perm_both(rng, shape, targets):
    """PERM-BOTH at system level, Pearson (a continuous statistic: Kendall's tau of a few
    systems ties the observed value often, which makes the test conservative), one-sided, on
    the script's data (A, B exchangeable)."""
    h, x = targets["study"](rng, shape)
    if targets.get("worse"):
        x[1] = x[1] + rng.normal(0.0, 3.0, x[1].shape)  # B agrees less: an alternative
    seed = int(rng.integers(0, 2**63))
    res = permutation_test_pairs(
        x,
        h,
        level="system",
        method="pearson",
        permutations=PERMS,
        alternative="greater",
        seed=seed,
    )
    return {"perm-both-system": float(res.pvalue[0, 1] <= 0.05)}


def test_perm_both_is_exact_under_exchangeable_metrics(er):
    """PERM-BOTH under exchangeability: rate within its Clopper-Pearson interval of 0.05
    (300 studies: sd sqrt(0.05 * 0.95 / 300) = 0.0126; the interval is about +-2.5 sd)."""
    shape = er.Shape("tiny", 20, 8)
    counts = er.simulate(
        shape,
        TINY_STUDIES,
        seed=7,
        targets={"study": er.study},
        keys=("perm-both-system",),
        study_fn=_perm_both,
    )
    k, n = counts.hits["perm-both-system"], counts.studies["perm-both-system"]
    assert n == TINY_STUDIES
    rate, low, high = er.rate_interval(k, n)
    assert low <= 0.05 <= high, (rate, low, high)
    ci = binomtest(k, n).proportion_ci(method="exact")
    assert (low, high) == (ci.low, ci.high)
    # Under an alternative (B much noisier) the same counting rejects far more often.
    worse = er.simulate(
        shape,
        60,
        seed=7,
        targets={"study": er.study, "worse": True},
        keys=("perm-both-system",),
        study_fn=_perm_both,
    )
    assert worse.hits["perm-both-system"] / 60 > 0.5


def test_blocks_of_studies_add_up_and_every_row_is_counted(er):
    """Studies 0-1 and 2-3 in two blocks give the counts of studies 0-3 in one; one study
    defines every row of the page (a NaN outcome is counted nowhere)."""
    shape = er.Shape("tiny", 12, 5)
    targets = {"item": 0.3, "system": 0.7, "system-random": 0.7, "global-random": 0.5}
    targets["item-random"] = 0.3
    whole = er.simulate(shape, 4, seed=3, targets=targets)
    parts = [er.simulate(shape, 2, seed=3, targets=targets, start=s) for s in (0, 2)]
    for key in er.KEYS:
        assert whole.hits[key] == parts[0].hits[key] + parts[1].hits[key], key
        assert whole.studies[key] == parts[0].studies[key] + parts[1].studies[key], key
    outcomes = er.one_study(np.random.default_rng(0), shape, targets)
    assert set(outcomes) == set(er.KEYS)
    assert all(v in (0.0, 1.0) or np.isnan(v) for v in outcomes.values())


def test_the_page_is_rendered_from_the_script_rows(er):
    """The committed page holds exactly the script's rows, in order, with cells in the
    format of :func:`cell`, and a rendered page puts the counts' rates in its cells."""
    page = (DOCS / "error-rates.md").read_text(encoding="utf-8")
    labels = [line.split(" | ")[0].lstrip("| ") for line in page.splitlines()]
    labels = [label for label in labels if label in {row.label for row in er.ROWS}]
    assert labels == [row.label for row in er.ROWS]
    cell = re.compile(r"\*{0,2}\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\]\*{0,2}")
    for line in page.splitlines():
        if line.split(" | ")[0].lstrip("| ") in labels:
            cells = line.strip("| ").split(" | ")[2:]
            assert len(cells) == len(er.SHAPES) and all(cell.fullmatch(c) for c in cells), line
    counts = er.Counts(dict.fromkeys(er.KEYS, 3), dict.fromkeys(er.KEYS, 60))
    text = er.render({"X": counts}, studies=60, seed=0, seconds=60.0, targets={"X": {"item": 0.5}})
    low, high = (float(v) for v in binomtest(3, 60).proportion_ci(method="exact"))
    assert f"0.050 [{low:.3f}, {high:.3f}]" in text
    # 3 / 60: interval [0.010, 0.139] holds 0.05 and 0.10: off only where the nominal is 0.95
    off = [row.label for row in er.ROWS if er.off({"X": counts}, row)]
    assert off == [row.label for row in er.ROWS if row.nominal == 0.95]
