"""The MT meta-evaluation analyses on HANNA: shapes, columns, and one value each against a plain
scipy/numpy computation on the same scores."""

from __future__ import annotations

import csv
import itertools

import numpy as np
import polars as pl
import pytest
import scipy.stats

from hanna_stats.analyses import (
    calibrated_accuracy,
    calibrated_comparison,
    correlate,
    metric_clusters,
    permutation_test,
    spa,
)
from hanna_stats.store import ingest, load_study, open_store

N_METRICS, N_CRITERIA = 72, 6


def _scores(study, measure):
    """(inputs, systems) scores of ``measure``, the human-written stories dropped."""
    return study.cube(measures=[measure]).values[0]


def _row(frame, measure, against):
    return frame.filter((frame["measure"] == measure) & (frame["against"] == against)).row(
        0, named=True
    )


def test_correlate_by_system_and_count_weighting(metric_study):
    by_system = correlate(metric_study, level="item", method="kendall", group_by="system")
    assert by_system.shape == (N_METRICS * N_CRITERIA, 9)
    h, m = _scores(metric_study, "Relevance"), _scores(metric_study, "BLEU")
    per_system = [scipy.stats.kendalltau(h[:, s], m[:, s])[0] for s in range(h.shape[1])]
    row = _row(by_system, "BLEU", "Relevance")
    assert row["statistic"] == pytest.approx(np.mean(per_system), abs=1e-12)
    assert row["n_groups"] == h.shape[1]
    # Every input present for every system: the count weights are equal.
    counted = correlate(metric_study, group_by="system", weighting="count")
    assert _row(counted, "BLEU", "Relevance")["statistic"] == pytest.approx(row["statistic"])
    with pytest.raises(ValueError, match="apply to the item level"):
        correlate(metric_study, level="system", group_by="system")


def test_correlate_fisher_interval(metric_study):
    res = correlate(metric_study, level="system", method="pearson", confidence=0.9)
    assert res.columns[-2:] == ["ci_low", "ci_high"] and set(res["n"]) == {10}  # 10 systems
    h = _scores(metric_study, "Relevance").mean(axis=0)
    m = _scores(metric_study, "BLEU").mean(axis=0)
    ci = scipy.stats.pearsonr(h, m).confidence_interval(confidence_level=0.9)
    row = _row(res, "BLEU", "Relevance")
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert row["n"] == 10
    with pytest.raises(ValueError, match="Fisher z intervals are for Pearson"):
        correlate(metric_study, level="system", method="kendall", confidence=0.9)


def _calibrated_reference(h, m):
    """Brute force over every candidate epsilon of one vector pair (numpy)."""
    i, j = np.triu_indices(h.size, 1)
    dh, dm = h[j] - h[i], m[j] - m[i]
    best = (-1.0, None)
    for eps in sorted({0.0, *np.abs(dm)}):
        tied = np.abs(dm) <= eps
        acc = np.mean(np.where(tied, dh == 0, np.sign(dh) == np.sign(dm)))
        if acc > best[0]:
            best = (acc, eps)
    return best


def test_calibrated_accuracy(metric_study):
    res = calibrated_accuracy(metric_study, level="system")
    assert res.shape == (N_METRICS * N_CRITERIA, 9)
    assert res.columns == [
        "measure", "against", "level", "method", "group_by", "statistic", "epsilon",
        "n_groups", "n_skipped",
    ]  # fmt: skip
    h = _scores(metric_study, "Coherence").mean(axis=0)
    m = _scores(metric_study, "BERTScore F1").mean(axis=0)
    acc, eps = _calibrated_reference(h, m)
    row = _row(res, "BERTScore F1", "Coherence")
    assert row["statistic"] == pytest.approx(acc, abs=1e-12)
    assert row["epsilon"] == eps
    item = calibrated_accuracy(metric_study, statistic="tau_eq")
    assert item["statistic"].min() >= -1 and item["statistic"].max() <= 1
    assert set(item["n_groups"].to_list()) == {96}
    # One schema whatever the level: a system-level frame (group_by null) then an item-level one.
    both = pl.concat([res, calibrated_accuracy(metric_study)])
    assert both.schema == res.schema == item.schema
    assert both["group_by"].to_list() == [None] * res.height + ["input"] * res.height


def test_calibrated_comparison(metric_study):
    res = calibrated_comparison(metric_study, criterion="EM", permutations=200, seed=3)
    assert res.shape == (N_METRICS * (N_METRICS - 1), 13)
    calibrated = calibrated_accuracy(metric_study)
    row = res.row(0, named=True)
    expected = _row(calibrated, row["measure_a"], "Empathy")["statistic"]
    assert row["stat_a"] == pytest.approx(expected)
    assert row["delta"] == pytest.approx(row["stat_a"] - row["stat_b"])
    assert res["pvalue"].is_between(0, 1).all()
    # System level, one pair against a plain loop over the swaps drawn from the seed: one fair
    # coin per permutation and pair of systems (i < j, row-major), rng.integers(0, 2) of seed 4
    # drawn as uint8 (calibrated_swaps).
    permutations = 200
    res = calibrated_comparison(
        metric_study, criterion="EM", level="system", permutations=permutations, seed=4
    )
    h = _scores(metric_study, "Empathy").mean(axis=0)
    pairs = list(itertools.combinations(range(h.size), 2))
    rng = np.random.default_rng(4)
    swaps = rng.integers(0, 2, size=(permutations, len(pairs)), dtype=np.uint8)
    correct = []
    for name in ("BLEU", "ROUGE-3 Recall"):
        m = _scores(metric_study, name).mean(axis=0)
        acc, eps = _calibrated_reference(h, m)
        outcomes = []
        for i, j in pairs:
            hs = np.sign(h[j] - h[i])
            outcomes.append(hs == (0 if abs(m[j] - m[i]) <= eps else np.sign(m[j] - m[i])))
        assert np.mean(outcomes) == pytest.approx(acc, abs=1e-12)
        correct.append(outcomes)
    c_a, c_b = correct
    observed = np.mean(c_a) - np.mean(c_b)
    hits = 0
    for s in swaps:
        a = [y if k else x for x, y, k in zip(c_a, c_b, s, strict=True)]
        b = [x if k else y for x, y, k in zip(c_a, c_b, s, strict=True)]
        hits += np.mean(a) - np.mean(b) >= observed - 1e-12
    pair = res.filter((pl.col("measure_a") == "BLEU") & (pl.col("measure_b") == "ROUGE-3 Recall"))
    assert pair["delta"].item() == pytest.approx(observed, abs=1e-12)
    assert pair["pvalue"].item() == pytest.approx(hits / permutations)
    assert 0 < hits < permutations


def test_spa(metric_study):
    permutations = 300
    res = spa(metric_study, permutations=permutations, seed=5)
    assert res.shape == (N_METRICS * N_CRITERIA, 10)
    counts = res.select("n_systems", "n_systems_dropped", "n_pairs", "n_missing").unique()
    assert counts.rows() == [(10, 0, 45, 0)]  # every system rated, every score present
    # The draws: one fair coin per permutation and input, rng.integers(0, 2) of seed 5.
    h, m = _scores(metric_study, "Surprise"), _scores(metric_study, "chrF")
    flips = 1 - 2 * np.random.default_rng(5).integers(0, 2, size=(permutations, h.shape[0]))

    def pvalue(x, a, b):
        d = x[:, a] - x[:, b]
        return np.mean(flips @ d >= d.sum() - 1e-9)

    pairs = list(itertools.combinations(range(h.shape[1]), 2))
    errors = [abs(pvalue(h, a, b) - pvalue(m, a, b)) for a, b in pairs]
    assert _row(res, "chrF", "Surprise")["statistic"] == pytest.approx(1 - np.mean(errors))
    unseeded = spa(metric_study, permutations=20, seed=None)  # a null seed keeps the schema
    assert pl.concat([unseeded, res]).schema == res.schema


def test_metric_clusters_follow_the_greedy_rule(metric_study):
    res = metric_clusters(
        metric_study, criterion="EM", level="system", permutations=200, seed=1, alpha=0.05
    )
    assert res.shape == (N_METRICS, 10)  # + pvalue_next and the settings permutations, seed, alpha
    tests = permutation_test(
        metric_study,
        criterion="EM",
        level="system",
        permutations=200,
        seed=1,
        alternative="greater",
    )
    p = {(a, b): v for a, b, v in tests.select("measure_a", "measure_b", "pvalue").iter_rows()}
    names, ranks = res["measure"].to_list(), res["rank"].to_list()
    assert ranks[0] == 1 and ranks == sorted(ranks)
    start = 0
    for k in range(1, len(names)):  # plain re-statement of the rule (MTME's AssignRanks)
        new = any(p[(names[a], names[k])] <= 0.05 for a in range(start, k))
        assert ranks[k] == ranks[k - 1] + new
        start = k if new else start


def test_metric_clusters_undefined_statistic_last(tmp_path):
    # A constant metric has no Kendall tau with the criterion: null rank, listed last (not
    # first in the last cluster, where NaN would sort in a descending sort).
    path = tmp_path / "tiny.csv"
    quality = [[1, 2, 3, 4], [2, 1, 4, 3], [1, 3, 2, 4]]  # (input, system)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["item", "input", "system", "measure", "value", "kind"])
        for g, row in enumerate(quality):
            for s, q in enumerate(row):
                item = f"i{g}s{s}"
                for measure, value, kind in (
                    ("Quality", q, "human"),
                    ("good", q + 0.1 * s, "metric"),
                    ("bad", -q, "metric"),
                    ("constant", 1.0, "metric"),
                ):
                    writer.writerow([item, f"i{g}", f"s{s}", measure, value, kind])
    con = open_store()
    ingest(con, path, format="tidy")
    res = metric_clusters(
        load_study(con), criterion="Quality", level="system", permutations=50, seed=0
    )
    assert res["measure"].to_list() == ["good", "bad", "constant"]
    assert np.isnan(res["statistic"][2]) and res["rank"][2] is None
    assert res["rank"][:2].to_list() == [1, 2] or res["rank"][:2].to_list() == [1, 1]
    assert res.schema["rank"] == pl.Int64
