"""The correlation analysis layer: coefficients, measure sets and policies on the HANNA store."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hanna_stats.analyses.correlations import correlate


@pytest.fixture(scope="module")
def store(hanna_study):
    return hanna_study  # metric scores + LLM judges + judge-slot ratings


def test_acc_eq_system_level_by_hand(store):
    """Pairwise accuracy with ties: share of system pairs ordered alike or tied by both."""
    df = correlate(store, level="system", method="acc_eq")
    cube = store.cube(kinds=("human", "metric"))
    means = cube.values.mean(axis=1)
    for metric, criterion in [("BLEU", "Relevance"), ("CIDEr", "Surprise")]:
        x, y = means[cube.measures.index(metric)], means[cube.measures.index(criterion)]
        agree = [
            np.sign(x[i] - x[j]) == np.sign(y[i] - y[j])
            for i, j in itertools.combinations(range(len(x)), 2)
        ]
        row = df.filter((df["measure"] == metric) & (df["against"] == criterion))
        assert row["statistic"].item() == pytest.approx(np.mean(agree), abs=1e-15)


def test_measure_sets_and_human_system(store):
    metrics = correlate(store, level="system", method="pearson")
    judges = correlate(store, level="system", method="pearson", kinds=("llm-judge",))
    assert metrics["measure"].n_unique() == 72 and judges["measure"].n_unique() == 140
    with_human = correlate(store, level="system", method="pearson", include_human=True)
    bleu = (metrics["measure"] == "BLEU") & (metrics["against"] == "Relevance")
    assert with_human.filter(bleu)["statistic"].item() != metrics.filter(bleu)["statistic"].item()
    inter = correlate(store, level="story", method="spearman", against="inter-criteria")
    assert inter.height == 36 and set(inter["measure"]) == set(inter["against"])


def test_nan_policies_on_constant_prompts(store):
    omit = correlate(store, level="story", method="kendall")
    cider = omit.filter((omit["measure"] == "CIDEr") & (omit["against"] == "Relevance"))
    assert cider["n_groups"].item() == 66 and cider["n_skipped"].item() == 30
    prop = correlate(store, level="story", method="kendall", nan_policy="propagate")
    assert np.isnan(prop.filter(prop["measure"] == "CIDEr")["statistic"].to_numpy()).all()
    with pytest.raises(ValueError, match=r"'ROUGE-3 Recall' with 'Relevance' is undefined on"):
        correlate(store, level="story", method="kendall", nan_policy="raise")


def test_bad_choices_name_the_argument(store):
    with pytest.raises(ValueError, match="level must be one of"):
        correlate(store, level="prompt")
    with pytest.raises(ValueError, match="kinds must be one of"):
        correlate(store, kinds=("human",))
