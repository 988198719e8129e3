"""The analysis commands: each option reaches its function as the keyword of its name, and a
new analysis is a command without a line of the command line written for it."""

from __future__ import annotations

import dataclasses
import io
import sys
import types

import polars as pl
import pytest

from hanna_stats import analyses
from hanna_stats.analyses._common import analysis
from hanna_stats.cli import build_parser, main, run
from hanna_stats.study import Study
from hanna_stats.vocabulary import Correction, Kind, LevelWord


def _subparser(name):
    parser = build_parser()
    action = next(a for a in parser._actions if hasattr(a, "choices") and name in (a.choices or {}))
    sub = action.choices[name]
    sub.format_help()  # builds its options
    return sub


def test_choices_come_from_the_vocabulary():
    from hanna_stats.vocabulary import WORDS

    args = {a.dest: a for a in _subparser("correlate")._actions}
    assert tuple(args["level"].choices) == WORDS["level_word"]
    assert tuple(args["method"].choices) == WORDS["coefficient"]
    assert tuple(args["variant"].choices) == WORDS["variant"]
    assert tuple(args["nan_policy"].choices) == WORDS["nan_policy"]
    assert tuple(args["against"].choices) == WORDS["against"]


def test_report_options_are_its_settings():
    from hanna_stats.reports import ReportSettings

    args = build_parser().parse_args(["report"])
    assert run.keywords_of(args) == {
        f.name: getattr(ReportSettings(), f.name) for f in dataclasses.fields(ReportSettings)
    }


class _Recorder:
    """Records its calls; its signature is the analysis' it replaces (``__wrapped__``)."""

    def __init__(self, original):
        self.calls = []
        self.__wrapped__ = original

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
            "correlate",
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
            "correlate",
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
            "borda",
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
            "topk",
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
            "williams",
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
            "judge_williams",
            dict(level="global", method="pearson", n=50, correction="holm", include_human=True),
        ),
        (
            ["bootstrap-pairs", "--resamples", "10", "--alpha", "0.1", "--seed", "3"],
            "bootstrap_pairs",
            dict(resamples=10, alpha=0.1, seed=3, include_human=False, kinds=("metric",)),
        ),
        (
            ["bootstrap-pair-labels", "--seed", "4"],
            "bootstrap_pair_labels",
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
            "correlation_ci",
            dict(
                level="system",
                method="pearson",
                resample="both",
                resamples=20,
                confidence=0.9,
                ci_method="bca",
                seed=5,
                against="criteria",
                include_human=False,
                variant="b",
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
            "permutation_test",
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
                variant="b",
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
            "agreement",
            dict(
                measures=["EM", "CX"],
                kinds=("human", "llm-judge"),
                confidence=0.9,
                include_human=False,
            ),
        ),
        (
            ["system-means", "--confidence", "0.99"],
            "system_means",
            dict(measures=None, kinds=("human",), confidence=0.99, include_human=True),
        ),
        (
            ["calibrate", "--level", "system", "--statistic", "tau_eq", "--group-by", "system"],
            "calibrated_accuracy",
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
            "metric_clusters",
            dict(
                criterion="EM",
                level="system",
                method="acc_eq",
                permutations=1000,
                seed=0,
                alpha=0.1,
                system_scores="mean",
                include_human=False,
                variant="b",
                kinds=("metric",),
            ),
        ),
    ],
    ids=lambda v: v[0] if isinstance(v, list) else None,
)
def test_options_reach_the_function(argv, target, expected, monkeypatch, capsys):
    original = getattr(analyses, target)
    recorder = _Recorder(original)
    monkeypatch.setattr(sys.modules[original.__module__], target, recorder)
    monkeypatch.setattr(run, "study_of", lambda args: "the study")
    monkeypatch.setattr(run, "note_left_out", lambda study, keywords: None)
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


# --------------------------------------------------------------------------- a new analysis


@analysis
def spread(
    study: Study,
    *,
    level: LevelWord = "system",
    kinds: tuple[Kind, ...] = ("metric",),
    correction: Correction | None = None,
    seed: int | None = 0,
    include_human: bool = False,
) -> pl.DataFrame:
    """Spread of the measures' values, defined by a test: one function and its registry line.

    Parameters
    ----------
    study : Study
    """
    return pl.DataFrame(
        {
            "level": [level],
            "kinds": [",".join(kinds)],
            "correction": [correction],
            "seed": [seed],
            "systems": [len(study.systems)],
        }
    )


@pytest.fixture
def new_analysis(monkeypatch):
    """``spread`` registered as analyses' modules register theirs: a module of the package and
    its name in the registry (and so in ``__all__``)."""
    module = types.ModuleType("hanna_stats.analyses.spread_of_a_test")
    module.spread = spread
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(analyses._HOME, "spread", "spread_of_a_test")
    monkeypatch.setattr(analyses, "__all__", sorted(analyses._HOME))


def test_a_new_analysis_is_a_command_with_help_and_defaults(new_analysis, capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    listing = " ".join(capsys.readouterr().out.split())
    assert "spread Spread of the measures' values, defined by a test" in listing
    with pytest.raises(SystemExit):
        main(["spread", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--level {item,system,global,story,summary,segment}" in text
    assert (
        "item may be called story, summary or segment, and is output as item (default: system)"
        in text
    )
    assert "metric (the automatic metrics) or llm-judge" in text and "(default: metric)" in text
    assert "the p-values as the tests give them)" in text and "--include-human" in text
    assert "seed of the random draws" in text and "--pool-subsets" in text


def test_a_new_analysis_runs_with_the_options_given(new_analysis, hanna_study, monkeypatch, capsys):
    monkeypatch.setattr(run, "study_of", lambda args: hanna_study)
    argv = ["spread", "--kinds", "metric,llm-judge", "--seed", "3", "--format", "csv"]
    assert main(argv) == 0
    rows = pl.read_csv(io.StringIO(capsys.readouterr().out)).to_dicts()
    assert rows == [
        {
            "level": "system",
            "kinds": "metric,llm-judge",
            "correction": None,
            "seed": 3,
            "systems": 11,
        }
    ]
    with pytest.raises(SystemExit):
        main(["spread", "--kinds", "metric,oracle"])
    assert "invalid choice: 'oracle'" in capsys.readouterr().err
