"""Borda count (Tab. 6) and top-k correlations (Fig. 8)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from hanna_stats.analyses.correlations import correlate
from hanna_stats.analyses.rankings import borda, topk
from hanna_stats.kernels import borda_count, tie_ranks
from hanna_stats.progress import StudyNote
from hanna_stats.vocabulary import WORDS

TIE_RULES = WORDS["ties"]


@pytest.fixture(scope="module")
def store(metric_study):
    return metric_study


tied_tables = arrays(
    np.float64,
    st.tuples(st.integers(1, 12), st.integers(1, 5)),
    elements=st.integers(0, 4).map(float),  # few distinct values: many ties
)


@settings(deadline=None, max_examples=200)
@given(tied_tables, st.sampled_from(TIE_RULES))
def test_borda_equals_sum_of_scipy_ranks(table, rule):
    # scipy.stats.rankdata gives 1-based ranks with the same tie rules.
    expected = sum(ss.rankdata(table[:, j], method=rule) - 1 for j in range(table.shape[1]))
    got = borda_count(table, ties=rule)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_tie_ranks_hand_worked():
    x = np.array([0.3, 0.1, 0.3, 0.2])  # sorted: 0.1 (pos 0), 0.2 (pos 1), 0.3, 0.3 (pos 2, 3)
    np.testing.assert_array_equal(tie_ranks(x, ties="average"), [2.5, 0, 2.5, 1])
    np.testing.assert_array_equal(tie_ranks(x, ties="min"), [2, 0, 2, 1])
    np.testing.assert_array_equal(tie_ranks(x, ties="max"), [3, 0, 3, 1])


# Tab. 6, story level (labels: S3_p = S3-Pyramid, S3_r = S3-Responsiveness, ROUGE-1 = Recall).
TAB6_STORY = [
    ("chrF", 1237),
    ("S3-Pyramid", 1198),
    ("ROUGE-1 Recall", 1186),
    ("S3-Responsiveness", 1177),
    ("BERTScore Recall", 1158),
]
# Tab. 6, system level: BaryScore_5 is BaryScore-SD-0.01 (docs/conventions.md).
TAB6_SYSTEM = [
    ("BARTScore-SH", 1120),
    ("BaryScore-SD-0.01", 1110),
    ("BERTScore F1", 1095),
    ("MoverScore", 1070),
    ("DepthScore", 1069),
]


@pytest.mark.parametrize("ties", TIE_RULES)
def test_tab6_story_level_under_every_tie_rule(store, ties):
    df = borda(store, level="story", ties=ties)
    assert df.height == 72
    assert df.head(5).select("measure", "borda").rows() == [(m, float(b)) for m, b in TAB6_STORY]


def test_tab6_system_level_order_but_not_counts(store):
    """The paper's system-level counts come from an arbitrary tie order (docs/conventions.md): with
    average ranks the same five metrics come out in the same order, with other counts."""
    by_rule = {t: borda(store, level="system", ties=t) for t in TIE_RULES}
    top = by_rule["average"].head(5)
    assert top["measure"].to_list() == [m for m, _ in TAB6_SYSTEM]
    assert top["borda"].to_list() != [float(b) for _, b in TAB6_SYSTEM]
    # Exact ties exist at system level, so the rules differ, and min <= average <= max.
    lo, mid, hi = (
        by_rule[t].sort("measure")["borda"].to_numpy() for t in ("min", "average", "max")
    )
    assert np.all(lo <= mid) and np.all(mid <= hi) and np.any(lo < hi)
    assert np.all(hi <= 18 * 71)


def test_topk_matches_scipy_on_selected_systems(store):
    df = topk(store, ks=[4, 7, 10], level="system", method="pearson")
    assert set(df["k"].unique()) == {4, 7, 10}
    cube = store.cube(kinds=("human", "metric"))
    complexity = cube.measures.index("Complexity")
    bleu = cube.measures.index("BLEU")
    means = cube.values.mean(axis=1)  # (measures, systems)
    best4 = np.argsort(-means[complexity])[:4]
    expected = ss.pearsonr(means[bleu, best4], means[complexity, best4]).statistic
    row = df.filter((df["criterion"] == "Complexity") & (df["k"] == 4) & (df["measure"] == "BLEU"))
    assert row["statistic"].item() == pytest.approx(expected, abs=1e-12)
    assert row["systems"].item().split("; ") == [cube.systems[s] for s in best4]
    # k = 10 keeps every system: the plain system-level correlation.
    full = df.filter(
        (df["k"] == 10) & (df["criterion"] == "Complexity") & (df["measure"] == "BLEU")
    )
    expected10 = ss.pearsonr(means[bleu], means[complexity]).statistic
    assert full["statistic"].item() == pytest.approx(expected10, abs=1e-12)


def test_topk_rejects_bad_k(store):
    with pytest.raises(ValueError, match="each k must lie between"):
        topk(store, ks=[2])


def test_mean_rank_and_mean_abs_aggregations(store):
    df = borda(store, level="story")
    np.testing.assert_allclose(df["mean_rank"].to_numpy(), df["borda"].to_numpy() / 18)
    # mean |r| over the 18 columns, from correlate's own values
    frames = [correlate(store, level="story", method=m) for m in ("pearson", "spearman", "kendall")]
    chrf = np.concatenate([f.filter(f["measure"] == "chrF")["statistic"] for f in frames])
    assert df.filter(df["measure"] == "chrF")["mean_abs"].item() == pytest.approx(
        np.abs(chrf).mean(), abs=1e-15
    )
    assert df["mean_abs_rank"].min() == 1


def test_system_level_borda_equals_scipy_with_exact_ties(store):
    """Oracle: scipy's three coefficients on the system means, |r| rounded to 12 decimals (exact
    ties, e.g. Spearman's rho on 10 systems is a multiple of 1/165), average ranks, summed."""
    cube = store.cube(kinds=("human", "metric"))
    human = np.array([k == "human" for k in cube.kinds])
    # Each system's 96 scores as one contiguous list (np.mean of a system's list, as the paper):
    # the summation order keeps the two exact ties between Complexity means.
    means = np.array([[np.nanmean(list(v)) for v in m.T] for m in cube.values])
    columns = []
    for c in np.flatnonzero(human):
        for coefficient in (ss.pearsonr, ss.spearmanr, ss.kendalltau):
            r = [abs(coefficient(means[m], means[c])[0]) for m in np.flatnonzero(~human)]
            columns.append(ss.rankdata(np.round(r, 12)) - 1)
    expected = dict(zip(np.asarray(cube.measures)[~human], np.sum(columns, axis=0), strict=True))
    got = borda(store, level="system", ties="average")
    assert dict(got.select("measure", "borda").iter_rows()) == expected
    assert got.head(5)["borda"].to_list() == [1126.5, 1103.5, 1100.5, 1068.0, 1067.5]


def test_topk_criteria_rating_different_systems(tmp_path):
    """A criterion rating a subset of the systems (WMT's MQM and DA) ranks only those: its rows
    stop at its own count, a note says which ks it lacks, and its top k hold only systems it
    rates."""
    import polars as pl

    from hanna_stats.store import ingest, load_study, open_store

    rng = np.random.default_rng(5)
    rows = []
    for g in range(6):
        for s in range(6):
            base = {"item": f"i{g}-{s}", "input": f"in{g}", "system": f"s{s}"}
            rows.append({**base, "measure": "m", "value": float(rng.normal()), "kind": "metric"})
            rows.append({**base, "measure": "A", "value": float(rng.normal()), "kind": "human"})
            if s < 4:  # B rates s0..s3 only
                rows.append({**base, "measure": "B", "value": float(s + g), "kind": "human"})
    path = tmp_path / "study.csv"
    pl.DataFrame(rows).write_csv(path)
    con = open_store()
    ingest(con, path, format="tidy")
    study = load_study(con)
    with pytest.warns(
        StudyNote, match=r"^topk: criterion B rates 4 systems: no rows for k = 5, 6$"
    ):
        frame = topk(study, ks=range(3, 7), level="system", method="pearson")
    ks = {c: sorted(frame.filter(pl.col("criterion") == c)["k"].unique()) for c in ("A", "B")}
    assert ks == {"A": [3, 4, 5, 6], "B": [3, 4]}
    b4 = frame.filter((pl.col("criterion") == "B") & (pl.col("k") == 4))["systems"][0]
    assert b4 == "s3; s2; s1; s0"  # B's means grow with the system index
    # The correlation on B's top 3 equals scipy's on those systems' means.
    values = {s: [] for s in ("s1", "s2", "s3")}
    for row in rows:
        if row["system"] in values and row["measure"] in ("m", "B"):
            values[row["system"]].append((row["measure"], row["value"]))
    means = {
        s: {m: np.mean([v for mm, v in vals if mm == m]) for m in ("m", "B")}
        for s, vals in values.items()
    }
    want = ss.pearsonr([means[s]["m"] for s in means], [means[s]["B"] for s in means]).statistic
    got = frame.filter((pl.col("criterion") == "B") & (pl.col("k") == 3))["statistic"][0]
    assert got == pytest.approx(want, abs=1e-12)
