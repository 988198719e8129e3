"""The analyses' face: the Selection and its memo keys, the record of the analyses called,
``dir()`` of the analyses, clusters with their p-values, fixed tie thresholds."""

from __future__ import annotations

import inspect

import numpy as np
import polars as pl
import pytest

import hanna_stats.analyses as an
from hanna_stats.analyses import AnalysisCall, Selection, analysis_calls
from hanna_stats.kernels import TIE_RTOL
from hanna_stats.vocabulary import DEFAULTS


def test_dir_lists_every_analysis_without_importing_it():
    listed = dir(an)
    for name in an.__all__:
        assert name in listed
    assert {"correlate", "williams", "metric_clusters", "nominal_agreement"} <= set(listed)


def test_selection_is_canonical_and_the_analysis_checks_its_options(hanna_study):
    s = Selection(method="spearman", variant="c", kinds=("metric",))
    assert (s.level, s.variant, s.kinds) == ("item", "b", ("metric",))
    assert s.key("x") == Selection(method="spearman").key("x")
    assert s.key("x") != s.replace(level="system").key("x")
    for bad, words in [
        ({"level": "doc"}, "level must be one of"),
        ({"method": "tau"}, "method must be one of"),
        ({"kinds": "metric"}, "kinds must be a non-empty tuple"),
        ({"include_human": "yes"}, "include_human must be True or False"),
        ({"system_scores": "given"}, "system_scores='given' is for level='system'"),
        ({"level": "system", "group_by": "system"}, "group_by and weighting apply to the item"),
    ]:
        with pytest.raises(ValueError, match=words):
            an.correlate(hanna_study, **bad)


def test_selection_defaults_are_the_vocabulary_defaults():
    for name, parameter in inspect.signature(Selection).parameters.items():
        if name in DEFAULTS:
            assert parameter.default == DEFAULTS[name], name


def test_analysis_calls_record_their_settings(hanna_study):
    with analysis_calls() as calls:
        res = an.correlate(hanna_study, level="story", group_by="system", weighting="count")
        with analysis_calls() as inner:  # blocks nest: the outer one records these too
            an.borda(hanna_study)  # calls correlate inside: one call, borda's
    assert type(res) is pl.DataFrame
    assert [call.name for call in calls] == ["correlate", "borda"]
    assert inner == calls[1:] and isinstance(calls[0], AnalysisCall)
    settings = calls[0].settings
    assert settings["level"] == "story"  # as given; the rows say item
    assert (settings["group_by"], settings["weighting"]) == ("system", "count")
    assert settings["method"] == DEFAULTS["method"]
    assert settings["subsets"] == DEFAULTS["subsets"]
    assert set(res["level"]) == {"item"}
    plain = an.correlate(hanna_study, level="item", group_by="system", weighting="count")
    assert res.equals(plain)
    assert len(calls) == 2  # a call after the block is not recorded


def test_bootstrap_with_a_seed_is_shared_and_without_one_is_fresh(hanna_study):
    options = {"resamples": 20, "kinds": ("metric",)}
    seeded = [an.bootstrap_pair_labels(hanna_study, seed=3, **options) for _ in range(2)]
    assert seeded[0].equals(seeded[1])
    fresh = [an.bootstrap_pair_labels(hanna_study, seed=None, **options) for _ in range(2)]
    # 20 resamples of 55 system pairs x 78 measures: two fresh draws differ somewhere (the
    # chance that every win count agrees is nil); a seed=None draw used to be cached forever.
    assert not fresh[0]["wins_1"].equals(fresh[1]["wins_1"])


def test_clusters_give_p_values_and_seed(hanna_study):
    res = an.metric_clusters(hanna_study, criterion="RE", level="system", permutations=200, seed=5)
    assert res["seed"].unique().to_list() == [5]
    assert res["permutations"].unique().to_list() == [200]
    p = res["pvalue_next"].to_list()
    ranks = res["rank"].to_list()
    assert p[-1] is None and all(0 <= v <= 1 for v in p[:-1])
    for i in range(len(p) - 1):  # beaten at alpha by the row above: a new cluster starts
        if p[i] <= 0.05 and ranks[i + 1] is not None:
            assert ranks[i + 1] > ranks[i]
    # each p-value is the permutation test's one-sided p of the row against the next one
    pairs = an.permutation_test(
        hanna_study,
        criterion="RE",
        level="system",
        permutations=200,
        seed=5,
        alternative="greater",
    )
    lookup = {(a, b): v for a, b, v in pairs.select("measure_a", "measure_b", "pvalue").iter_rows()}
    names = res["measure"].to_list()
    for i in range(len(names) - 1):
        assert p[i] == lookup[(names[i], names[i + 1])]


def test_calibrate_with_fixed_epsilons(hanna_study):
    calibrated = an.calibrated_accuracy(hanna_study, criterion="CH")
    fixed = dict(zip(calibrated["measure"], calibrated["epsilon"], strict=True))
    again = an.calibrated_accuracy(hanna_study, criterion="CH", epsilon=fixed)
    np.testing.assert_array_equal(again["statistic"], calibrated["statistic"])
    np.testing.assert_array_equal(again["epsilon"], calibrated["epsilon"])
    # epsilon 0: ties only where the scores are equal, as the plain pairwise accuracy with ties
    zero = an.calibrated_accuracy(hanna_study, criterion="CH", epsilon=0.0)
    plain = an.correlate(hanna_study, method="acc_eq").filter(pl.col("against") == "Coherence")
    both = zero.join(plain, on="measure", suffix="_plain", validate="1:1")
    assert both.height == zero.height
    # ... except where the metric has distinct scores within its rounding tolerance
    # (TIE_RTOL x max |m|, e.g. CIDEr's 4.9e-17 and 0), which the calibration ties
    cube = hanna_study.cube(measures=both["measure"].to_list())
    tolerance = TIE_RTOL * np.nanmax(np.abs(cube.values), axis=(1, 2))
    gaps = np.diff(np.sort(cube.values, axis=2), axis=2)
    exact = ~((gaps > 0) & (gaps <= tolerance[:, None, None])).any(axis=(1, 2))
    assert 0 < (~exact).sum() < 5
    np.testing.assert_allclose(
        both["statistic"].to_numpy()[exact], both["statistic_plain"].to_numpy()[exact], atol=1e-12
    )
    with pytest.raises(ValueError, match="missing 'BLEU'"):
        an.calibrated_accuracy(hanna_study, criterion="CH", epsilon={"chrF": 0.1})
