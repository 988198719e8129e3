"""The LLM-judge study of Chhun, Suchanek & Clavel (TACL 2024) from the public files.

Expected values are the figures printed by the authors' notebook (dig-team/hanna-benchmark-asg,
``data_visualization.ipynb`` at commit 282f275, cells 35 and 37-39), transcribed here: heatmaps
of ``|round(100 tau-b)|`` (half-to-even, as pandas rounds) of each judge's rating of a criterion
against that criterion (Human system left out), at system level (n = 10 systems) and overall
(all 960 stories pooled), and the Williams tests of Beluga-13B (Eval-Prompt 1) against the other
judges and 8 metrics with Benjamini-Hochberg adjusted p-values.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from hanna_stats.analyses import judge_criteria, rater_panel, williams_all
from hanna_stats.analyses.correlations import HUMAN_RATER, MEAN_ABS
from hanna_stats.kernels import adjust_pvalues

CRITERIA = ("Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity")
JUDGES = {"B-13B": "Beluga-13B", "L-13B": "Llama-13B", "M-7B": "Mistral-7B", "Chat": "ChatGPT"}

# Fig. "mixed2": columns judge x Eval-Prompt 1..4; rows RE CH EM SU EG CX and Avg.
MIXED2 = {
    "global": """
        21 24 19 21 16 16  6 11 22 17 17 23 15 14 11 11
        26 27 25 23 18 21 16 13 22 22 15 17 22 22 14 21
        27 27 25 19 15 15  9 11 20 22 17 13 20 17  1 12
        17 19 16 17 12 15  7  7 13 12 11 12  5  8  7  9
        26 26 22 17 11 14  5  7 21 21 15 15 19 19  6 15
        32 32 25 25 26 28 17 18 23 25 23 22 27 21 12 25
        25 26 22 20 16 18 10 11 20 20 16 17 18 17  8 16""",
    "system": """
        49 78 64 82 64 69 64 73 36 42  7 47  7  4 36 33
        78 78 69 73 87 78 56 73 60 64 33 56 73 69 69 64
        73 69 60 64 54 47 38 60 60 64 51 64 56 51  2 33
        73 73 64 64 56 56 49 60 51 51 56 60  7 18 45 51
        73 82 60 69 73 73 16 73 64 56 54 64 64 58 11 60
        72 85 72 85 54 54 48 49 63 54 63 58 72 54 67 76
        70 78 65 73 65 63 45 65 56 55 44 58 46 42 38 53""",
}
# Fig. "mixed1": the "Human" column (each rater against the 3-rater mean, |round(100 tau)|,
# averaged over the raters and rounded) and 8 metrics; rows RE..CX.
HUMAN = {"global": (49, 37, 49, 44, 50, 57), "system": (70, 62, 77, 72, 76, 80)}
METRICS = ("BARTScore-SH", "BERTScore F1", "BLEU", "ROUGE-1 Recall", "chrF", "BaryScore-W",
           "SUPERT-PS", "BLANC-Tune-PS")  # fmt: skip
MIXED1_METRICS = {
    "global": """
         3 13  7 11 10 12 26  7
         3 14 11 16 17 15  3  0
        11 17 13 17 17 17  2  2
         4 12 11 16 17 13  3  0
         8 19 14 19 20 19  5  2
         8 24 19 28 29 24  6  1""",
    "system": """
        51 51 56 51 60 56 11 24
        56 56 33 38 47 51 20 16
        56 73 42 47 47 69  2  2
        56 56 42 47 56 51 20 16
        56 56 33 38 47 51 20 16
        67 49 54 58 67 45 18  4""",
}
# Williams, Beluga-13B (prompt 1) better than the competitor: 100 x BH-adjusted p, rounded;
# None where Beluga's |tau| is not higher (the notebook then stores p = 0 and masks the cell).
COMPETITORS = ("Llama-13B", "Mistral-7B", "ChatGPT", *METRICS)
WILLIAMS = {
    "global": """
        14 .  9 0  5 0  1  1  3 . 0
         4 17 14 0  1 0  1  1  1 0 0
         0  4  6 0  1 0  1  1  1 0 0
        14 17  1 0 15 8 41  . 16 0 0
         0 12  7 0  6 0  8  9  7 0 0
         7  2  9 0  4 0 14 22  3 0 0""",
    "system": """
         . 34 30  .  .  .  .  .  . 23 31
         . 34 40 26 24 16 19 20 25 13 11
        24 34 38 26  . 16 19 20 41 13 11
        24 34 20 26 24 16 19 23 25 13 11
         . 34 40 26 24 16 19 20 25 13 11
        24 34  . 41 24 24 29 41 25 13 11""",
}


def _grid(text: str) -> list[list]:
    return [
        [None if v == "." else int(v) for v in line.split()] for line in text.strip().splitlines()
    ]


def _percent(x) -> np.ndarray:
    return np.abs(np.round(100 * np.asarray(x, dtype=np.float64)))  # half-to-even, as pandas


@pytest.fixture(scope="module", params=["global", "system"])
def level(request):
    return request.param


@pytest.fixture(scope="module")
def matched(hanna_study, level):
    return judge_criteria(hanna_study, level=level, method="kendall")


def test_judges_against_their_criteria(matched, level):
    grid = _grid(MIXED2[level])
    for col, (short, judge) in enumerate((s, j) for s, j in JUDGES.items() for _ in range(4)):
        prompt = str(col % 4 + 1)
        column = matched.filter((pl.col("rater") == judge) & (pl.col("prompt") == prompt))
        values = dict(column.select("criterion", "statistic").iter_rows())
        cells = _percent([values[c] for c in CRITERIA])
        assert cells.tolist() == [row[col] for row in grid[:6]], (short, prompt)
        # The "Avg" row: the mean of the six rounded cells, rounded.
        assert np.round(cells.mean()) == grid[6][col]
        assert values[MEAN_ABS] == pytest.approx(np.mean(np.abs([values[c] for c in CRITERIA])))


def test_human_rater_row(hanna_study, matched, level):
    per_rater = rater_panel(hanna_study, level=level, method="kendall", reference="panel")
    raters = per_rater.filter(pl.col("rater") != "mean")
    cells = np.round(
        np.mean(
            [
                _percent(raters.filter(pl.col("rater") == r).sort("criterion")["statistic"])
                for r in ("1", "2", "3")
            ],
            axis=0,
        )
    )
    order = sorted(CRITERIA)
    assert dict(zip(order, cells, strict=True)) == dict(zip(CRITERIA, HUMAN[level], strict=True))
    human = matched.filter(pl.col("rater") == HUMAN_RATER)
    means = per_rater.filter(pl.col("rater") == "mean")
    assert dict(human.select("criterion", "statistic").iter_rows())["Relevance"] == pytest.approx(
        means.filter(pl.col("criterion") == "Relevance")["statistic"][0]
    )


def test_rater_against_the_others(hanna_study):
    # Leave-one-out: rater 1 against the mean of raters 2 and 3 (values from scipy.stats.kendalltau
    # on the file's "Human k XX" and "Human Avg k XX" columns).
    from scipy.stats import kendalltau

    study = hanna_study
    loo = rater_panel(study, level="global", reference="others")
    ratings = study.ratings.filter(~pl.col("is_human") & (pl.col("measure") == "Complexity"))
    wide = ratings.pivot(on="rater_column", index="item_id", values="score").sort("item_id")
    x = wide["0"].to_numpy()
    others = (wide["1"].to_numpy() + wide["2"].to_numpy()) / 2
    expected = kendalltau(x, others).statistic
    got = loo.filter((pl.col("rater") == "1") & (pl.col("criterion") == "Complexity"))
    assert got["statistic"][0] == pytest.approx(expected, abs=1e-12)
    assert expected == pytest.approx(0.2131, abs=5e-5)  # the notebook data's value


def test_metrics_beside_the_judges(hanna_study, level):
    from hanna_stats.analyses import correlate

    frame = correlate(hanna_study, level=level, method="kendall")
    grid = _grid(MIXED1_METRICS[level])
    for col, metric in enumerate(METRICS):
        values = dict(
            frame.filter(pl.col("measure") == metric).select("against", "statistic").iter_rows()
        )
        assert _percent([values[c] for c in CRITERIA]).tolist() == [row[col] for row in grid]


@pytest.fixture(scope="module")
def beluga(hanna_study):
    frame = williams_all(
        hanna_study,
        levels=("global", "system"),
        methods=("kendall",),
        kinds=("metric", "llm-judge"),
        correction="bh",
        family="pair",
    )
    prompt1 = [f"{j} {c} (prompt 1)" for j in ("Beluga-13B",) for c in CRITERIA]
    return frame.filter(pl.col("measure_a").is_in(prompt1))


def _competitor(criterion: str, name: str) -> str:
    return f"{name} {criterion} (prompt 1)" if name in JUDGES.values() else name


def test_williams_of_beluga_reproduces_the_figures(beluga, level):
    # The notebook keeps a test only where Beluga's |tau| is higher and puts p = 0 in the other
    # cells, which stay in the Benjamini-Hochberg family of each competitor's six criteria. The
    # raw p-values are ours; the adjustment is ours too, applied to the notebook's family.
    grid = _grid(WILLIAMS[level])
    rows = beluga.filter(pl.col("level") == level)
    for col, name in enumerate(COMPETITORS):
        raw = []
        for criterion in CRITERIA:
            row = rows.filter(
                (pl.col("criterion") == criterion)
                & (pl.col("measure_b") == _competitor(criterion, name))
                & pl.col("measure_a").str.starts_with("Beluga-13B " + criterion)
            )
            assert row.height == 1
            better = abs(row["r_a"][0]) > abs(row["r_b"][0])
            raw.append(row["pvalue"][0] if better else 0.0)
        adjusted = adjust_pvalues(raw, method="bh")
        shown = [
            None if p == 0 else int(np.round(100 * q)) for p, q in zip(raw, adjusted, strict=True)
        ]
        assert shown == [row[col] for row in grid], name


def test_williams_family_pair_adjusts_across_criteria(beluga):
    # Our "pair" family keeps every test's real p-value (no placeholder zeros): where Beluga is
    # better in all six criteria the two coincide, e.g. overall against Llama-13B.
    rows = beluga.filter(
        (pl.col("level") == "global")
        & pl.col("measure_b").str.starts_with("Llama-13B")
        & pl.col("measure_b").str.ends_with("(prompt 1)")
        & ~pl.col("measure_b").str.contains("Average")
        & ~pl.col("measure_a").str.contains("Average")
    ).sort("criterion")
    assert rows.height == 6
    np.testing.assert_allclose(
        rows["pvalue_adjusted"].to_numpy(), adjust_pvalues(rows["pvalue"].to_numpy(), method="bh")
    )
    overall = dict(rows.select("criterion", "pvalue_adjusted").iter_rows())
    assert round(100 * overall["Relevance"]) == 14 and round(100 * overall["Coherence"]) == 4


def test_judges_command(hanna_dir, capsys):
    from hanna_stats.cli import main

    assert main(["judges", "--data", str(hanna_dir), "--level", "global", "--format", "csv"]) == 0
    frame = pl.read_csv(capsys.readouterr().out.encode())
    beluga = frame.filter((pl.col("rater") == "Beluga-13B") & (pl.col("prompt") == 1))
    assert round(100 * beluga.filter(pl.col("criterion") == "Complexity")["statistic"][0]) == 32


def test_judge_values_outside_the_scale(hanna_study, hanna_dir):
    # Counted independently from the file: its cells are JSON lists of 96 values per system.
    import json

    from hanna_stats.analyses import judge_scale

    raw = pl.read_csv(hanna_dir / "hanna_metric_scores_llm.csv")
    counts = judge_scale(hanna_study)
    abbreviations = ("RE", "CH", "EM", "SU", "EG", "CX")
    for judge, prompt, below in counts.select("judge", "prompt", "below").iter_rows():
        values = [
            v
            for a in abbreviations
            for cell in raw[f"{judge} {a} {prompt}"]
            for v in json.loads(cell)
        ]
        assert below == sum(v < 1 for v in values), (judge, prompt)
    beluga = dict(
        counts.filter(pl.col("judge") == "Beluga-13B").select("prompt", "below").iter_rows()
    )
    assert beluga == {"1": 0, "2": 55, "3": 64, "4": 54}  # the notebook data's counts
    assert counts["above"].sum() == 0 and counts["missing"].sum() == 0
