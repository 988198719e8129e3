"""The ``power`` analysis (hanna_stats.analyses.design) and its command, on HANNA.

Expected values: the kernels (``metric_pair_power``, ``system_pair_power``,
``stable_ranking_probability``) called directly on arrays built here from the study's own
tables (the pilot's ratings pivoted by hand from ``Study.ratings``), the correlations of
``level_correlation`` for the default pair, and the frame of the Python call for the command.
The studies per design are small: the values compared are equal on the same seeds, whatever
their Monte Carlo error.
"""

from __future__ import annotations

import io

import numpy as np
import polars as pl
import pytest

from hanna_stats.analyses import power
from hanna_stats.cli import main
from hanna_stats.kernels import (
    level_correlation,
    metric_pair_effect,
    metric_pair_power,
    stable_ranking_probability,
    system_pair_power,
)
from hanna_stats.progress import StudyNote

CRITERION = "Coherence"


def _pilot_ratings(study, criterion):
    """(G, S, 3) ratings of the criterion for the non-human systems, by a loop over the rows."""
    cube = study.cube(measures=[criterion])
    ratings = np.full((len(cube.inputs), len(cube.systems), 3), np.nan)
    rows = study.ratings.filter(pl.col("measure") == criterion)
    for row in rows.iter_rows(named=True):
        if row["system"] in cube.systems:
            g, s = cube.inputs.index(row["input"]), cube.systems.index(row["system"])
            ratings[g, s, row["rater_column"]] = row["score"]
    return ratings, cube


def _curve(frame):
    return frame.filter(pl.col("answer") == "curve")


def test_metrics_rows_equal_the_kernel(hanna_study):
    kw = dict(studies=40, seed=3, method="pearson", test="perm-both", permutations=50)
    frame = power(hanna_study, criterion=CRITERION, inputs=(20, 60), target_power=None, **kw)
    a, b = frame["a"][0], frame["b"][0]
    H, cube = _pilot_ratings(hanna_study, CRITERION)
    metrics = hanna_study.cube(measures=[a, b])
    assert metrics.systems == cube.systems
    res = metric_pair_power(H, metrics.values[0], metrics.values[1], inputs=[20, 60], **kw)
    curve = _curve(frame)
    assert curve["estimate"].to_list() == res.power.tolist()
    assert curve["standard_error"].to_list() == res.standard_error.tolist()
    assert curve["inputs"].to_list() == [20, 60] and curve["systems"].to_list() == [10, 10]
    assert set(curve["effect_source"]) == {"observed"} and set(curve["level"]) == {"item"}
    scores = np.nanmean(H, axis=2)
    observed = metric_pair_effect(scores, *metrics.values, test="perm-both", method="pearson")
    assert set(curve["effect"]) == {observed.effect}
    assert set(curve["effect_statistic"]) == {observed.statistic}
    assert set(curve["effect_scale"]) == {"pooled Pearson r"}
    # an injected effect: the real pair, one metric lowered with noise
    given = power(hanna_study, criterion=CRITERION, inputs=(30,), effect=0.1, target_power=None,
                  ratings=2, **kw)  # fmt: skip
    res = metric_pair_power(H, *metrics.values, inputs=30, delta=0.1, ratings=2, **kw)
    assert given["estimate"].to_list() == [res.power] and given["effect"].to_list() == [0.1]
    assert given["effect_source"].to_list() == ["given"]
    assert given["ratings_source"].to_list() == ["rater-level ratings"]
    effect = metric_pair_effect(scores, *metrics.values, 0.1, test="perm-both", method="pearson",
                                seed=3)  # fmt: skip
    assert given["effect_statistic"].to_list() == [effect.statistic]


def test_williams_rows_equal_the_kernel(hanna_study):
    pair = ("BERTScore Recall", "chrF")  # pooled Pearson 0.312 and 0.257 on Coherence
    kw = dict(studies=30, seed=5, test="williams", level="system", method="spearman")
    frame = power(hanna_study, criterion=CRITERION, pair=pair, inputs=(40,), effect=0.1,
                  target_power=None, **kw)  # fmt: skip
    H, _ = _pilot_ratings(hanna_study, CRITERION)
    metrics = hanna_study.cube(measures=list(pair))
    res = metric_pair_power(H, *metrics.values, inputs=40, delta=0.1, **kw)
    assert frame["estimate"].to_list() == [res.power] and frame["test"][0] == "williams"
    options = {k: kw[k] for k in ("test", "level", "method", "seed")}
    effect = metric_pair_effect(np.nanmean(H, axis=2), *metrics.values, 0.1, **options)
    assert effect.lowered == "b" and frame["effect_statistic"].to_list() == [effect.statistic]


def test_default_pair_is_the_closest_pair_at_the_top(hanna_study):
    frame = power(hanna_study, inputs=(24,), studies=20, target_power=None)
    criterion = hanna_study.criteria[0]
    assert frame["criterion"].to_list() == [criterion] and frame["test"][0] == "perm-both"
    assert frame["method"].to_list() == ["pearson"] and frame["level"].to_list() == ["item"]
    names = [m for m, k in zip(hanna_study.measures, hanna_study.kinds, strict=True)
             if k == "metric"]  # fmt: skip
    cube = hanna_study.cube(measures=[*names, criterion])
    r = level_correlation(cube.values[:-1], cube.values[-1][None], method="pearson").statistic
    order = np.argsort(-r[:, 0])
    assert (frame["a"][0], frame["b"][0]) == (names[order[0]], names[order[1]])
    systems = power(hanna_study, question="systems", inputs=(24,), studies=20, target_power=None)
    means = np.nanmean(_pilot_ratings(hanna_study, criterion)[0], axis=2).mean(axis=0)
    top = np.argsort(-means)[:2]
    pilot_systems = hanna_study.cube(measures=[criterion]).systems
    assert (systems["a"][0], systems["b"][0]) == tuple(pilot_systems[i] for i in top)


def test_systems_rows_equal_the_kernel(hanna_study):
    H, cube = _pilot_ratings(hanna_study, CRITERION)
    pair = (cube.systems[2], cube.systems[5])
    kw = dict(studies=50, seed=1, test="permutation", permutations=200, alternative="two-sided")
    frame = power(hanna_study, question="systems", criterion=CRITERION, pair=pair,
                  inputs=(30, 90), ratings=1, target_power=None, **kw)  # fmt: skip
    res = [system_pair_power(H, pair=(2, 5), inputs=n, ratings=1, **kw) for n in (30, 90)]
    assert frame["estimate"].to_list() == [r.power for r in res]
    d = np.nanmean(H[:, 2], axis=1) - np.nanmean(H[:, 5], axis=1)
    assert frame["effect"].to_list() == pytest.approx([d.mean()] * 2, abs=1e-12)
    assert frame["a"].to_list() == [pair[0]] * 2 and frame["systems"].to_list() == [2, 2]


def test_ranking_rows_equal_the_kernel(hanna_study):
    H, _ = _pilot_ratings(hanna_study, CRITERION)
    kw = dict(studies=30, seed=2, permutations=100)
    frame = power(hanna_study, question="ranking", criterion=CRITERION, inputs=(12, 48),
                  target_power=None, **kw)  # fmt: skip
    for n in (12, 48):
        res = stable_ranking_probability(H, inputs=n, **kw)
        rows = frame.filter(pl.col("inputs") == n)
        got = dict(zip(rows["quantity"], rows["estimate"], strict=True))
        assert got == {"srp": res.statistic, "mean_agreement": res.mean_agreement,
                       "top_agreement": res.top_agreement}  # fmt: skip
    assert frame["a"].null_count() == frame.height and set(frame["systems"]) == {10}


@pytest.mark.parametrize(
    ("question", "solve_for", "options"),
    [
        ("systems", "inputs", {"effect": 0.3, "test": "t"}),
        ("metrics", "systems", {"permutations": 100, "effect": 0.05, "inputs": (30,)}),
        ("systems", "ratings", {"inputs": (40,), "test": "t", "effect": 0.25}),
    ],
)
def test_needed_design_is_the_smallest_reaching_the_target(
    hanna_study, question, solve_for, options
):
    options = {"studies": 60, "seed": 4, "criterion": CRITERION, **options}
    frame = power(hanna_study, question=question, solve_for=solve_for, target_power=0.7,
                  **options)  # fmt: skip
    needed = frame.filter(pl.col("answer") == "needed").row(0, named=True)
    assert needed[solve_for] is not None and needed["estimate"] >= 0.7
    assert needed["standard_error"] == pytest.approx(
        np.sqrt(needed["estimate"] * (1 - needed["estimate"]) / 60)
    )
    fewer = {k: v for k, v in options.items() if k not in ("inputs",)}
    inputs = (needed["inputs"],) if solve_for != "inputs" else (needed["inputs"] - 1,)
    if solve_for == "systems":
        fewer["design_systems"] = needed["systems"] - 1
    if solve_for == "ratings":
        fewer["ratings"] = needed["ratings"] - 1
    if fewer.get("ratings") == 0:
        return  # one rating per item reaches the target: nothing smaller
    below = power(hanna_study, question=question, inputs=inputs, target_power=None, **fewer)
    assert below["estimate"][0] < 0.7
    detectable = frame.filter(pl.col("answer") == "detectable").row(0, named=True)
    assert detectable["effect_source"] == "searched" and detectable["estimate"] >= 0.7


def test_bad_options_get_one_clear_line(hanna_study):
    cases = [
        ({"question": "items"}, "question must be one of"),
        ({"test": "bootstrap"}, "test must be one of 'williams'"),
        ({"question": "systems", "test": "williams"}, "test must be one of 'bootstrap'"),
        ({"pair": ("BLEU", "NoSuchMetric")}, "unknown measure 'NoSuchMetric'"),
        ({"question": "ranking", "effect": 0.1}, "effect must be None"),
        ({"question": "systems", "design_systems": 4}, "for the metrics question"),
        ({"target_power": 1.5}, "target_power must be a number in"),
        ({"inputs": (2,), "test": "williams"}, "inputs must be integers of at least 4"),
        ({"solve_for": "raters"}, "solve_for must be one of"),
    ]
    for options, message in cases:
        with pytest.raises(ValueError, match=message):
            power(hanna_study, studies=5, **options)


def test_metric_only_store_refuses_ratings(metric_study):
    with pytest.raises(ValueError, match="rater-level ratings"):
        power(metric_study, ratings=2, studies=5)
    frame = power(metric_study, inputs=(24,), studies=10, target_power=None)
    assert frame["ratings_source"].to_list() == ["item scores"]


def test_command_prints_a_table_and_csv_equals_the_frame(hanna_dir, hanna_study, capsys):
    args = ["power", "--data", str(hanna_dir), "--studies", "30", "--inputs", "24,48",
            "--criterion", "CH", "--target-power", "0.6"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "curve" in out and "needed" in out and "perm-both" in out
    assert main([*args, "--format", "csv"]) == 0
    printed = pl.read_csv(io.StringIO(capsys.readouterr().out), schema_overrides={"b": pl.String})
    frame = power(hanna_study, studies=30, inputs=(24, 48), criterion="CH", target_power=0.6)
    assert printed.columns == frame.columns and printed.height == frame.height
    for column in frame.columns:
        left, right = printed[column].to_list(), frame[column].to_list()
        if frame[column].dtype == pl.Float64:  # null where the frame is null (pytest 9's
            # approx takes no None): the numbers compared where both have one
            assert [v is None for v in left] == [v is None for v in right], column
            both = [(a, b) for a, b in zip(left, right, strict=True) if b is not None]
            assert [a for a, _ in both] == pytest.approx(
                [b for _, b in both], rel=1e-12, abs=1e-15, nan_ok=True
            ), column
        else:
            assert [None if v is None else str(v) for v in left] == [
                None if v is None else str(v) for v in right
            ], column


def test_metrics_pilot_keeps_the_systems_the_criterion_rates(wmt22_study):
    # WMT22 zh-en's MQM rates 14 of the 18 systems: the metrics' scores are taken on those 14
    # (aligned by name), with a note; the power equals the kernel's on that pilot.
    with pytest.warns(StudyNote, match="4 systems left out of the pilot"):
        frame = power(wmt22_study, criterion="mqm", inputs=(100,), studies=20, permutations=50,
                      target_power=None)  # fmt: skip
    row = frame.row(0, named=True)
    assert row["systems"] == 14
    rated = wmt22_study.cube(measures=["mqm"]).systems  # the systems MQM rates
    assert len(rated) == 14
    cube = wmt22_study.cube(measures=["mqm", row["a"], row["b"]])
    on = [cube.systems.index(s) for s in rated]
    H, A, B = (cube.values[k][:, on] for k in range(3))
    keep = np.isfinite(H).all(axis=1) & np.isfinite(A).all(axis=1) & np.isfinite(B).all(axis=1)
    expected = metric_pair_power(
        H[keep], A[keep], B[keep], inputs=100, studies=20, permutations=50, test="perm-both",
        method="pearson", alternative="greater", seed=0,
    )  # fmt: skip
    assert row["estimate"] == expected.power
