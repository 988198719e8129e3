"""Golden tests: the paper's printed correlation tables and figures (Chhun et al., COLING 2022).

Expected values are copied from the paper's text; docs/conventions.md (section 17, "Matching
the paper's printed tables") explains its labels and roundings. Values the public data cannot
reproduce are asserted at the value scipy computes from the public file, with the reason
(docs/conventions.md, section 18).
"""

from __future__ import annotations

import csv
import json
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest
import scipy.stats

from hanna_stats.analyses.correlations import correlate

CRIT = {
    "RE": "Relevance",
    "CH": "Coherence",
    "EM": "Empathy",
    "SU": "Surprise",
    "EG": "Engagement",
    "CX": "Complexity",
}


@pytest.fixture(scope="module")
def abs_corr(metric_study):
    """|correlation| in %, keyed by (level, method) -> {(metric, criterion): value}."""
    con = metric_study
    out = {}
    for level in ("story", "system"):
        for method in ("pearson", "spearman", "kendall"):
            df = correlate(con, level=level, method=method, against="criteria")
            out[level, method] = {
                (m, a): 100 * abs(v)
                for m, a, v in df.select("measure", "against", "statistic").rows()
            }
    return out


# --- Tab. 5: top-3 metrics by |Pearson r| per criterion and level -------------------------------
# Labels resolved as in docs/conventions.md: BARTScore_2 = BARTScore-SP, BARTScore_1 = BARTScore-SH,
# SUPERT_1 = SUPERT-SS, SUPERT_2 = SUPERT-PS (story) / SUPERT-Golden (system), BaryScore_1 =
# BaryScore-SD-0.01, BaryScore_2 = BaryScore-W, S3 = S3-Pyramid, ROUGE-1 = ROUGE-1 Recall, and the
# printed "ROUGE-SU_R 80.3" is ROUGE-SU* F-Score.
TAB5 = {
    ("story", "RE"): [("BARTScore-SP", 42.6), ("SUPERT-SS", 41.2), ("SUPERT-PS", 40.2)],
    ("story", "CH"): [("Repetition-3", 38.1), ("BERTScore Recall", 37.1), ("S3-Pyramid", 37.1)],
    ("story", "EM"): [("S3-Pyramid", 32.8), ("chrF", 32.4), ("BERTScore Recall", 32.1)],
    ("story", "SU"): [("Novelty-1", 32.9), ("chrF", 32.7), ("ROUGE-1 Recall", 31.3)],
    ("story", "EG"): [("BERTScore Recall", 43.0), ("Novelty-1", 42.3), ("chrF", 41.1)],
    ("story", "CX"): [("chrF", 58.8), ("BERTScore Recall", 55.8), ("ROUGE-1 Recall", 55.0)],
    ("system", "RE"): [
        ("ROUGE-S* F-Score", 80.4),
        ("ROUGE-SU* F-Score", 80.3),
        ("ROUGE-S* Recall", 80.2),
    ],
    ("system", "CH"): [("BaryScore-SD-0.01", 88.2), ("BaryScore-W", 88.0), ("BERTScore F1", 87.9)],
    ("system", "EM"): [("BaryScore-SD-0.01", 90.0), ("BaryScore-W", 90.0), ("BERTScore F1", 88.7)],
    ("system", "SU"): [("BARTScore-SH", 92.7), ("BERTScore Recall", 91.1), ("DepthScore", 90.7)],
    ("system", "EG"): [("DepthScore", 93.4), ("BARTScore-SH", 92.4), ("SUPERT-Golden", 92.2)],
    ("system", "CX"): [("DepthScore", 95.6), ("BERTScore Recall", 95.5), ("Compression", 94.3)],
}


def _paper_round(percent: float) -> float:
    """Tab. 5 rounds the 2-decimal value again to 1 decimal, half up (42.545 -> 42.55 -> 42.6)."""
    two = Decimal(f"{percent:.2f}")
    return float(two.quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


@pytest.mark.parametrize(("level", "crit"), list(TAB5))
def test_tab5_top3_pearson(abs_corr, level, crit):
    table = abs_corr[level, "pearson"]
    ranked = sorted(
        ((v, m) for (m, a), v in table.items() if a == CRIT[crit]), key=lambda t: -t[0]
    )[:3]
    assert [m for _, m in ranked] == [m for m, _ in TAB5[level, crit]]
    assert [_paper_round(v) for v, _ in ranked] == [v for _, v in TAB5[level, crit]]


# --- Figs. 3 and 4: |Kendall tau| (%) for the 17 representative metrics --------------------------
# The figure's column labels were lost in the text extraction; each column matches exactly one
# metric (up to the three identical InfoLM columns) at both levels, in this order.
FIG_METRICS = [
    "BLEU",
    "ROUGE-1 Recall",
    "METEOR",
    "chrF",
    "ROUGE-WE-3 Recall",
    "BERTScore Recall",
    "MoverScore",
    "DepthScore",
    "BaryScore-W",
    "S3-Pyramid",
    "SummaQA",
    "InfoLM-FisherRao",
    "BARTScore-SH",
    "Coverage",
    "Repetition-1",
    "SUPERT-PS",
    "BLANC-Tune-PS",
]
FIG3 = """\
RE 14 15 13 16 15 16 19 9 14 15 9 12 22 6 7 29 8
CH 17 23 22 25 25 23 21 22 20 24 9 12 25 4 16 4 1
EM 18 23 22 23 24 22 18 16 19 23 8 11 22 7 6 3 0
SU 17 24 22 24 22 21 18 18 17 23 17 11 20 8 17 1 0
EG 23 29 28 31 27 29 25 23 25 30 15 14 28 5 18 5 4
CX 30 41 39 43 39 38 28 29 28 39 25 18 33 6 24 5 0
Avg 20 26 24 27 25 25 22 20 20 26 14 13 25 6 15 8 2"""
FIG4 = """\
RE 56 51 56 60 56 56 60 42 56 60 33 51 51 33 29 11 24
CH 33 38 42 47 33 42 56 47 51 38 20 20 56 38 24 20 16
EM 42 47 42 47 42 51 73 56 69 38 20 38 56 20 16 2 2
SU 42 47 51 56 42 51 47 56 51 47 29 20 56 38 24 20 16
EG 33 38 42 47 33 42 56 47 51 38 20 20 56 38 24 20 16
CX 54 58 63 67 54 63 40 67 45 58 40 31 67 45 31 18 4
Avg 43 46 49 54 43 51 55 52 54 46 27 30 57 35 25 15 13"""


@pytest.mark.parametrize(("level", "printed"), [("story", FIG3), ("system", FIG4)])
def test_fig3_fig4_kendall_matrices(abs_corr, level, printed):
    table = abs_corr[level, "kendall"]
    rows = {line.split()[0]: [int(v) for v in line.split()[1:]] for line in printed.splitlines()}
    ours = np.array([[table[m, CRIT[c]] for m in FIG_METRICS] for c in CRIT])
    rounded = np.rint(ours).astype(int)
    np.testing.assert_array_equal(rounded, np.array([rows[c] for c in CRIT]))
    # The "Avg" row is the mean of the rounded cells, rounded half to even.
    np.testing.assert_array_equal(np.rint(rounded.mean(axis=0)).astype(int), rows["Avg"])


# --- Tabs. 8 and 9: top-5 metrics per criterion, level and coefficient --------------------------
# Tab. 8 lost its |r| column in the text extraction: its two printed columns are tau and rho.
# Two printed Novelty-1 Kendall values cannot be reproduced from the public data: there, ours
# equals scipy.stats.kendalltau on the public file's columns (read here, without the package),
# and that value is not the printed one.
IRREPRODUCIBLE = {
    ("story", "kendall", "SU", "Novelty-1"): 23.11,
    ("system", "kendall", "CX", "Novelty-1"): 67.42,
}


def _scipy_public_kendall(hanna_dir, level, metric_column, criterion):
    """|Kendall tau-b| in % of a metric and a criterion by scipy on hanna_metric_scores.csv:
    each cell of a generating system's row is the JSON list of its 96 prompts' values; story
    level averages the per-prompt tau across the 10 systems, system level correlates the
    systems' means."""
    csv.field_size_limit(1 << 30)
    with open(hanna_dir / "hanna_metric_scores.csv", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Model"] != "Human"]
    x, y = (np.array([json.loads(r[c]) for r in rows]) for c in (metric_column, criterion))
    if level == "system":
        return 100 * abs(scipy.stats.kendalltau(x.mean(axis=1), y.mean(axis=1)).statistic)
    taus = [scipy.stats.kendalltau(x[:, g], y[:, g]).statistic for g in range(x.shape[1])]
    return 100 * abs(np.nanmean(taus))
TAB8 = {
    "kendall": {
        "RE": "SUPERT-SS 29.95; BARTScore-SP 29.61; SUPERT-PS 28.59; BARTScore-SH 22.32; "
        "MoverScore 19.12",
        "CH": "ROUGE-WE-3 Recall 25.29; BARTScore-SH 25.06; chrF 24.61; S3-Pyramid 24.39; "
        "S3-Responsiveness 24.28",
        "EM": "ROUGE-WE-3 Recall 23.58; chrF 23.33; S3-Pyramid 23.19; ROUGE-SU* Recall 23.13; "
        "ROUGE-S* Recall 23.08",
        "SU": "chrF 24.45; ROUGE-1 Recall 23.67; S3-Responsiveness 23.35; Novelty-1 23.11; "
        "ROUGE-SU* Recall 22.85",
        "EG": "chrF 30.77; S3-Pyramid 29.62; ROUGE-1 Recall 29.19; S3-Responsiveness 29.01; "
        "BERTScore Recall 28.93",
        "CX": "chrF 43.31; ROUGE-1 Recall 40.65; ROUGE-SU* Recall 39.83; Text length 39.82; "
        "Compression 39.82",
    },
    "spearman": {
        "RE": "SUPERT-SS 38.58; BARTScore-SP 37.98; SUPERT-PS 36.40; BARTScore-SH 28.53; "
        "MoverScore 23.67",
        "CH": "ROUGE-WE-3 Recall 32.22; chrF 32.03; BARTScore-SH 31.38; S3-Responsiveness 31.31; "
        "S3-Pyramid 31.14",
        "EM": "ROUGE-WE-3 Recall 29.85; chrF 29.81; S3-Pyramid 29.68; ROUGE-SU* Recall 29.38; "
        "ROUGE-S* Recall 29.32",
        "SU": "chrF 31.55; ROUGE-1 Recall 30.86; S3-Responsiveness 30.41; ROUGE-SU* Recall 30.30; "
        "ROUGE-S* Recall 30.25",
        "EG": "chrF 39.03; S3-Pyramid 37.74; ROUGE-1 Recall 37.02; S3-Responsiveness 36.85; "
        "ROUGE-S* Recall 36.60",
        "CX": "chrF 54.11; ROUGE-1 Recall 50.60; Text length 50.19; Compression 50.19; "
        "ROUGE-SU* Recall 50.10",
    },
}
TAB9 = {
    "kendall": {
        "RE": "S3-Pyramid 60.00; chrF 60.00; ROUGE-SU* Recall 60.00; ROUGE-S* Recall 60.00; "
        "ROUGE-W-1.2 F-Score 60.00",
        "CH": "BaryScore-SD-0.001 77.78; BaryScore-SD-5 68.89; BaryScore-SD-10 68.89; "
        "BaryScore-SD-1 64.44; BaryScore-SD-0.5 60.00",
        "EM": "BaryScore-SD-0.001 77.78; BERTScore F1 73.33; BaryScore-SD-0.01 73.33; "
        "MoverScore 73.33; BaryScore-W 68.89",
        "SU": "BaryScore-SD-0.001 77.78; BaryScore-SD-5 68.89; BaryScore-SD-10 68.89; "
        "BaryScore-SD-1 64.44; BaryScore-SD-0.5 60.00",
        "EG": "BaryScore-SD-0.001 77.78; BaryScore-SD-5 68.89; BaryScore-SD-10 68.89; "
        "BaryScore-SD-1 64.44; BaryScore-SD-0.5 60.00",
        "CX": "BaryScore-SD-10 76.41; BaryScore-SD-5 76.41; BaryScore-SD-1 71.91; chrF 67.42; "
        "Novelty-1 67.42",
    },
    "spearman": {
        "RE": "MoverScore 78.18; S3-Pyramid 75.76; ROUGE-S* Recall 75.76; ROUGE-SU* Recall 75.76; "
        "chrF 74.55",
        "CH": "BaryScore-SD-0.001 92.73; BaryScore-SD-5 78.18; BaryScore-SD-10 78.18; "
        "BaryScore-SD-1 75.76; BERTScore F1 74.55",
        "EM": "BaryScore-SD-0.001 92.73; BERTScore F1 84.24; BaryScore-SD-0.01 84.24; "
        "MoverScore 81.82; BaryScore-W 80.61",
        "SU": "BaryScore-SD-0.001 90.30; BaryScore-SD-5 83.03; BaryScore-SD-10 83.03; "
        "BaryScore-SD-1 79.39; BaryScore-SD-0.5 76.97",
        "EG": "BaryScore-SD-0.001 92.73; BaryScore-SD-5 78.18; BaryScore-SD-10 78.18; "
        "BaryScore-SD-1 75.76; BERTScore F1 74.55",
        "CX": "BaryScore-SD-10 91.19; BaryScore-SD-5 91.19; BaryScore-SD-1 87.54; Novelty-1 87.54; "
        "BaryScore-SD-0.5 85.11",
    },
    "pearson": {
        "RE": "ROUGE-S* F-Score 80.39; ROUGE-SU* F-Score 80.29; ROUGE-S* Recall 80.24; "
        "ROUGE-SU* Recall 80.23; BLEU 79.89",
        "CH": "BaryScore-SD-0.01 88.15; BaryScore-W 87.99; BERTScore F1 87.91; DepthScore 87.38; "
        "MoverScore 86.95",
        "EM": "BaryScore-SD-0.01 90.01; BaryScore-W 89.96; BERTScore F1 88.67; "
        "SUPERT-Golden 88.10; ROUGE-WE-3 F-Score 87.93",
        "SU": "BARTScore-SH 92.65; BERTScore Recall 91.09; DepthScore 90.71; SUPERT-Golden 89.83; "
        "Compression 89.24",
        "EG": "DepthScore 93.44; BARTScore-SH 92.44; SUPERT-Golden 92.21; MoverScore 92.07; "
        "BERTScore F1 91.74",
        "CX": "DepthScore 95.63; BERTScore Recall 95.49; Compression 94.31; BARTScore-SH 93.83; "
        "ROUGE-1 F-Score 93.35",
    },
}
TOP5_CASES = [
    (level, method, crit)
    for level, tab in (("story", TAB8), ("system", TAB9))
    for method in tab
    for crit in CRIT
]


@pytest.mark.parametrize(("level", "method", "crit"), TOP5_CASES)
def test_tab8_tab9_top5(abs_corr, hanna_dir, level, method, crit):
    printed = TAB8 if level == "story" else TAB9
    entries = [e.rsplit(" ", 1) for e in printed[method][crit].split("; ")]
    table = abs_corr[level, method]
    ours = {m: v for (m, a), v in table.items() if a == CRIT[crit]}
    top5 = sorted(ours.values(), reverse=True)[:5]
    reproducible = []
    for metric, value in entries:
        key = (level, method, crit, metric)
        if key in IRREPRODUCIBLE:
            assert float(value) == IRREPRODUCIBLE[key]
            public = _scipy_public_kendall(hanna_dir, level, f"{metric} ¤§", CRIT[crit])
            assert ours[metric] == pytest.approx(public, abs=1e-9)
            assert round(public, 2) != float(value)
            continue
        assert ours[metric] == pytest.approx(float(value), abs=0.005 + 1e-9), metric
        reproducible.append(float(value))
    # Every reproducible printed value is one of our top-5 values (order within exact ties is
    # arbitrary in the paper).
    remaining = [round(v, 2) for v in top5]
    for value in reproducible:
        assert value in remaining, (value, remaining)
        remaining.remove(value)


# --- Sec. 4.2 / Fig. 1: story-level Kendall correlations between the human criteria -------------
def test_sec42_criterion_criterion_kendall_range_and_mean(metric_study):
    """'Kendall correlations range from 16% (RE-SU) to 62% (CH-EG), averaging at 40.7%.'"""
    con = metric_study
    df = correlate(con, level="story", method="kendall", against="inter-criteria")
    pairs = df.filter(df["measure"] < df["against"])  # the 15 distinct pairs
    assert pairs.height == 15
    low = pairs.sort("statistic").row(0, named=True)
    high = pairs.sort("statistic").row(-1, named=True)
    assert {low["measure"], low["against"]} == {"Relevance", "Surprise"}
    assert round(100 * low["statistic"]) == 16
    assert {high["measure"], high["against"]} == {"Coherence", "Engagement"}
    assert round(100 * high["statistic"]) == 62
    assert round(100 * pairs["statistic"].mean(), 1) == 40.7
