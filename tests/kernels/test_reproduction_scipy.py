"""All 72 metrics x 6 criteria x {story, system} x 3 coefficients against a scipy oracle.

The oracle is computed the paper's way (docs/conventions.md, section 4): Human row dropped;
story level = scipy correlation per prompt across the 10 systems, prompts with an undefined
(NaN) correlation skipped, mean over the rest; system level = scipy correlation of the per-system
means (np.mean of each system's list, as the authors did). The data are parsed here with
csv + json, independently of the store's ingest code.

Denormals: in 33 prompts every CIDEr value is below 1e-300, where scipy.stats.pearsonr's mean
rounds to a multiple of 5e-324 and its result is off by up to 8e-8 per prompt (with one non-zero
value among zeros the exact correlation is that of an indicator, e.g. 11/39; scipy gives
0.28205128206798, our kernel 0.28205128205128). Our Pearson first scales each vector by a power of
two, which is exact and leaves every correlation unchanged; the oracle does the same before
calling scipy. ``test_raw_scipy_differs_only_on_cider_denormals`` pins the size of the raw gap.
"""

from __future__ import annotations

import csv
import json
import warnings

import numpy as np
import pytest
import scipy.stats as ss

from hanna_stats.analyses.correlations import correlate

CRITERIA = ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]
# Prompts with a defined correlation, from docs/conventions.md, section 4 (all other metrics:
# 96); ROUGE-3's and ROUGE-4's Recall, Precision and F-Score are constant together.
VALID_PROMPTS = {
    **{f"ROUGE-3 {v}": 88 for v in ("Recall", "Precision", "F-Score")},
    **{f"ROUGE-4 {v}": 43 for v in ("Recall", "Precision", "F-Score")},
    "CIDEr": 66,
    "SummaQA": 92,
    "Novelty-2": 93,
    "Novelty-3": 60,
    "BLANC-Tune-SS": 91,
    "BLANC-Help-SS": 93,
}


@pytest.fixture(scope="module")
def raw(hanna_dir):
    csv.field_size_limit(1 << 30)
    with open(hanna_dir / "hanna_metric_scores.csv", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Model"] != "Human"]
    header = [c for c in rows[0] if c != "Model"]
    names = [c if c in CRITERIA else c.rsplit(" ", 1)[0] for c in header]
    cube = np.array([[json.loads(r[c]) for r in rows] for c in header]).transpose(0, 2, 1)
    return names, cube  # (78 measures, 96 prompts, 10 systems)


def _pow2_scaled(v):
    """``v`` scaled exactly by a power of two so that its largest magnitude is in [0.5, 1)."""
    top = np.abs(v).max()
    return v if top == 0 else np.ldexp(v, -np.frexp(top)[1])


def _scipy_pair(method, x, y, *, scale=True):
    if method == "pearson":
        if scale:
            x, y = _pow2_scaled(x), _pow2_scaled(y)
        return ss.pearsonr(x, y).statistic
    if method == "spearman":
        return ss.spearmanr(x, y).statistic
    return ss.kendalltau(x, y).statistic


def _oracle(raw, level, method, *, scale=True):
    names, cube = raw
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(6, len(names)):
            for c in range(6):
                if level == "system":
                    means = [[np.mean(s) for s in cube[k].T] for k in (i, c)]
                    out[names[i], names[c]] = (_scipy_pair(method, *means, scale=scale), 1)
                    continue
                per = np.array(
                    [_scipy_pair(method, cube[i, g], cube[c, g], scale=scale) for g in range(96)]
                )
                ok = ~np.isnan(per)
                out[names[i], names[c]] = (per[ok].mean(), int(ok.sum()))
    return out


@pytest.fixture(scope="module")
def store(metric_study):
    return metric_study


@pytest.mark.parametrize("level", ["story", "system"])
@pytest.mark.parametrize("method", ["pearson", "spearman", "kendall"])
def test_all_metric_criterion_correlations_match_scipy(raw, store, level, method):
    df = correlate(store, level=level, method=method, against="criteria")
    assert df.height == 72 * 6
    expected = _oracle(raw, level, method)
    got = {(r["measure"], r["against"]): r for r in df.iter_rows(named=True)}
    assert set(got) == set(expected)
    for key, (value, n_valid) in expected.items():
        assert got[key]["statistic"] == pytest.approx(value, abs=1e-12, rel=0), key
        assert got[key]["n_groups"] == n_valid, key
        assert got[key]["n_groups"] + got[key]["n_skipped"] == (96 if level == "story" else 1)


def test_valid_prompt_counts_match_conventions(store):
    """The prompt counts the conventions doc lists (constant per-prompt vectors skipped)."""
    df = correlate(store, level="story", method="pearson", against="criteria")
    counts = dict(df.filter(df["against"] == "Relevance").select("measure", "n_groups").rows())
    for name, n in counts.items():
        assert n == VALID_PROMPTS.get(name, 96), name


def test_raw_scipy_differs_only_on_cider_denormals(raw, store):
    """Without the exact rescaling, scipy differs only for CIDEr (story-level Pearson), by less
    than 1e-8 on the averaged value: the error of scipy's mean of denormal values."""
    df = correlate(store, level="story", method="pearson", against="criteria")
    got = {(m, a): v for m, a, v in df.select("measure", "against", "statistic").rows()}
    raw_scipy = _oracle(raw, "story", "pearson", scale=False)
    gaps = {key: abs(got[key] - value) for key, (value, _) in raw_scipy.items()}
    assert max(g for (m, _), g in gaps.items() if m != "CIDEr") < 1e-12
    cider = [g for (m, _), g in gaps.items() if m == "CIDEr"]
    assert 1e-12 < max(cider) < 1e-8
