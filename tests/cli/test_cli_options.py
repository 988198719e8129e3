"""The command table: each subcommand's options map onto its function's keywords, with the
function's defaults and the choices the analyses define."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import io

import polars as pl
import pytest

from hanna_stats import cli
from hanna_stats.cli import main

ANALYSES = [c for c in cli._commands() if c.function is not None]


def _function(target):
    module, name = target.split(":")
    return getattr(importlib.import_module(f"hanna_stats.analyses.{module}"), name)


def _defaults(command):
    parser = cli._parser()
    required = {
        name: ["--criterion", "EM"]
        for name in ("williams", "permutation", "calibrated-permutation", "clusters")
    }
    return parser.parse_args([command.name, *required.get(command.name, [])])


@pytest.mark.parametrize("command", ANALYSES, ids=lambda c: c.name)
def test_options_are_keywords_with_the_functions_defaults(command):
    function = _function(command.function)
    parameters = inspect.signature(function).parameters
    args = _defaults(command)
    keywords = command.keywords(args)
    assert set(keywords) <= {
        name for name, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
    for name, value in keywords.items():
        default = parameters[name].default
        if default is inspect.Parameter.empty:  # required (--criterion)
            continue
        if name == "ks":
            value, default = list(value), list(default)
        assert value == default, (command.name, name)


def test_choices_come_from_the_vocabulary():
    from hanna_stats.vocabulary import WORDS

    args = {a.dest: a for a in _subparser("correlate")._actions}
    assert tuple(args["level"].choices) == WORDS["level_word"]
    assert tuple(args["method"].choices) == WORDS["coefficient"]
    assert tuple(args["variant"].choices) == WORDS["variant"]
    assert tuple(args["nan_policy"].choices) == WORDS["nan_policy"]
    assert tuple(args["against"].choices) == WORDS["against"]
    for name in cli.CHOICES:
        assert cli.choices(name) == WORDS[name]


def _subparser(name):
    parser = cli._parser()
    action = next(a for a in parser._actions if hasattr(a, "choices") and name in (a.choices or {}))
    sub = action.choices[name]
    sub.format_help()  # builds its options
    return sub


def test_report_options_are_its_settings():
    from hanna_stats.reports import ReportSettings

    command = next(c for c in cli._commands() if c.name == "report")
    args = cli._parser().parse_args(["report"])
    assert command.keywords(args) == dataclasses.asdict(ReportSettings())


class _Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, study, **kwargs):
        self.calls.append((study, kwargs))
        return pl.DataFrame({"x": [1]})


@pytest.mark.parametrize(
    ("argv", "target", "expected"),
    [
        (
            [
                "correlate",
                "--level",
                "global",
                "--method",
                "acc_eq",
                "--against",
                "metrics",
                "--variant",
                "c",
                "--nan-policy",
                "raise",
                "--include-human",
                "--kinds",
                "metric,llm-judge",
            ],
            "correlations:correlate",
            dict(
                level="global",
                method="acc_eq",
                against="metrics",
                variant="c",
                nan_policy="raise",
                include_human=True,
                kinds=("metric", "llm-judge"),
                pvalue_method=None,
                group_by="input",
                weighting="uniform",
                confidence=None,
                system_scores="mean",
            ),
        ),
        (
            ["correlate", "--level", "system", "--system-scores", "given"],
            "correlations:correlate",
            dict(
                level="system",
                method="kendall",
                against="criteria",
                variant="b",
                nan_policy="omit",
                include_human=False,
                kinds=("metric",),
                pvalue_method=None,
                group_by="input",
                weighting="uniform",
                confidence=None,
                system_scores="given",
            ),
        ),
        (
            ["borda", "--level", "system", "--ties", "min"],
            "rankings:borda",
            dict(
                level="system",
                ties="min",
                include_human=False,
                kinds=("metric",),
                system_scores="mean",
            ),
        ),
        (
            ["topk", "--ks", "4,6", "--level", "story", "--method", "kendall"],
            "rankings:topk",
            dict(
                ks=[4, 6],
                level="story",
                method="kendall",
                include_human=False,
                kinds=("metric",),
                system_scores="mean",
            ),
        ),
        (
            [
                "williams",
                "--criterion",
                "EM",
                "--level",
                "story",
                "--method",
                "spearman",
                "--n",
                "96",
                "--alternative",
                "two-sided",
                "--correction",
                "holm",
                "--family",
                "pair",
            ],
            "significance:williams",
            dict(
                criterion="EM",
                level="story",
                method="spearman",
                n=96,
                alternative="two-sided",
                correction="holm",
                family="pair",
                include_human=False,
                kinds=("metric",),
                system_scores="mean",
            ),
        ),
        (
            [
                "judge-williams",
                "--level",
                "global",
                "--method",
                "pearson",
                "--n",
                "50",
                "--correction",
                "holm",
                "--include-human",
            ],
            "judges:judge_williams",
            dict(level="global", method="pearson", n=50, correction="holm", include_human=True),
        ),
        (
            ["bootstrap-pairs", "--resamples", "10", "--alpha", "0.1", "--seed", "3"],
            "significance:bootstrap_pairs",
            dict(resamples=10, alpha=0.1, seed=3, include_human=False, kinds=("metric",)),
        ),
        (
            ["bootstrap-pairs", "--labels", "--seed", "4"],
            "significance:bootstrap_pair_labels",
            dict(resamples=1000, alpha=0.05, seed=4, include_human=False, kinds=("metric",)),
        ),
        (
            [
                "ci",
                "--level",
                "system",
                "--method",
                "pearson",
                "--resample",
                "both",
                "--resamples",
                "20",
                "--confidence",
                "0.9",
                "--ci-method",
                "bca",
                "--seed",
                "5",
            ],
            "resampling:correlation_ci",
            dict(
                level="system",
                method="pearson",
                resample="both",
                resamples=20,
                confidence=0.9,
                ci_method="bca",
                seed=5,
                include_human=False,
                kinds=("metric",),
            ),
        ),
        (
            [
                "permutation",
                "--criterion",
                "CX",
                "--level",
                "global",
                "--method",
                "pearson",
                "--permutations",
                "50",
                "--alternative",
                "less",
                "--unit",
                "systems",
                "--stop-alpha",
                "0.05",
                "--seed",
                "6",
            ],
            "resampling:permutation_test",
            dict(
                criterion="CX",
                level="global",
                method="pearson",
                permutations=50,
                alternative="less",
                unit="systems",
                stop_alpha=0.05,
                seed=6,
                include_human=False,
                kinds=("metric",),
            ),
        ),
        (
            [
                "agreement",
                "--measures",
                "EM",
                "CX",
                "--kinds",
                "human,llm-judge",
                "--confidence",
                "0.9",
                "--no-human",
            ],
            "ratings:agreement",
            dict(
                measures=["EM", "CX"],
                kinds=("human", "llm-judge"),
                confidence=0.9,
                include_human=False,
            ),
        ),
        (
            ["system-means", "--confidence", "0.99"],
            "ratings:system_means",
            dict(measures=None, kinds=("human",), confidence=0.99, include_human=True),
        ),
        (
            ["calibrate", "--level", "system", "--statistic", "tau_eq", "--group-by", "system"],
            "meta_eval:calibrated_accuracy",
            dict(
                level="system",
                statistic="tau_eq",
                group_by="system",
                criterion=None,
                system_scores="mean",
                include_human=False,
                kinds=("metric",),
            ),
        ),
        (
            [
                "clusters",
                "--criterion",
                "EM",
                "--level",
                "system",
                "--method",
                "acc_eq",
                "--alpha",
                "0.1",
            ],
            "meta_eval:metric_clusters",
            dict(
                criterion="EM",
                level="system",
                method="acc_eq",
                permutations=1000,
                seed=0,
                alpha=0.1,
                system_scores="mean",
                include_human=False,
                kinds=("metric",),
            ),
        ),
    ],
    ids=lambda v: v[0] if isinstance(v, list) else None,
)
def test_options_reach_the_function(argv, target, expected, monkeypatch, capsys):
    module, name = target.split(":")
    recorder = _Recorder()
    monkeypatch.setattr(importlib.import_module(f"hanna_stats.analyses.{module}"), name, recorder)
    monkeypatch.setattr(cli, "_study", lambda args: "the study")
    monkeypatch.setattr(cli, "_note_left_out", lambda study, keywords: None)
    assert main([*argv, "--format", "csv"]) == 0
    assert capsys.readouterr().out == "x\n1\n"
    assert recorder.calls == [("the study", {**expected, "subsets": "each"})]


def test_correlate_variant_gives_its_rows(hanna_dir, capsys):
    argv = [
        "correlate",
        "--data",
        str(hanna_dir),
        "--level",
        "system",
        "--variant",
        "c",
        "--format",
        "csv",
    ]
    assert main(argv) == 0
    df = pl.read_csv(io.StringIO(capsys.readouterr().out))
    assert df.height == 72 * 6
    assert set(df["variant"]) == {"c"} and set(df["method"]) == {"kendall"}
    assert set(df["level"]) == {"system"}
