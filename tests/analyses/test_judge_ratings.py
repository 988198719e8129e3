"""LLM judges as raters: per-try tidy files, measure scales and their policies, and the analyses
on any measure kind (self-consistency, judges' system means).

Expected values are hand-worked (the small files below), computed independently from the raw
HANNA file with json + numpy, or taken from pingouin and scipy.
"""

from __future__ import annotations

import json

import numpy as np
import pingouin
import polars as pl
import pytest
from scipy import stats

from hanna_stats.analyses import agreement, judge_criteria, system_means
from hanna_stats.kernels.agreement import PINGOUIN_LABELS
from hanna_stats.store import ingest, load_study, open_store
from hanna_stats.store.errors import InputError

HEADER = "item,input,system,measure,value,rater,kind,criterion,judge,prompt_variant,scale,"
HEADER += "scale_min,scale_max,answer"

# Two items rated on Fluency by two people; judge J's three tries of each, with a parsed value
# (empty: the answer held no number) and the raw answer.
TRIES = [
    ("a", "p1", "s1", "Fluency", 3, "h1", "", "", "", "", "likert", 1, 5, ""),
    ("a", "p1", "s1", "Fluency", 4, "h2", "", "", "", "", "", "", "", ""),
    ("b", "p1", "s2", "Fluency", 2, "h1", "", "", "", "", "", "", "", ""),
    ("b", "p1", "s2", "Fluency", 5, "h2", "", "", "", "", "", "", "", ""),
    ("a", "p1", "s1", "J Fluency", 4, "1", "", "Fluency", "J", "1", "likert", 1, 5, "Rating: 4"),
    ("a", "p1", "s1", "J Fluency", "", "2", "", "", "", "", "", "", "", "I cannot rate this"),
    ("a", "p1", "s1", "J Fluency", 7, "3", "", "", "", "", "", "", "", "7"),
    ("b", "p1", "s2", "J Fluency", 2, "1", "", "", "", "", "", "", "", "2"),
    ("b", "p1", "s2", "J Fluency", 2.5, "2", "", "", "", "", "", "", "", "2.5"),
    ("b", "p1", "s2", "J Fluency", 0, "3", "", "", "", "", "", "", "", "0"),
]


def write_csv(path, rows, header=HEADER):
    lines = [header] + [",".join(str(v) for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def tries_file(tmp_path):
    return write_csv(tmp_path / "tries.csv", TRIES)


# Hand-worked: try scores of (a, b) after each policy (None = missing), and each item's mean.
AFTER = {
    "keep": ([4, None, 7], [2, 2.5, 0]),
    "missing": ([4, None, None], [2, None, None]),
    "clip": ([4, None, 5], [2, 2, 1]),  # 7 -> 5; 2.5 -> 2 (half to even); 0 -> 1
}


@pytest.mark.parametrize("policy", sorted(AFTER))
def test_policies_on_per_try_answers(tries_file, policy):
    con = open_store()
    (summary,) = ingest(con, tries_file, scale_policy=policy, format="tidy")
    rows = con.sql(
        "SELECT item, rater, score, answer FROM rating_records WHERE measure = 'J Fluency' "
        "ORDER BY item, rater"
    ).fetchall()
    want = AFTER[policy]
    assert [r[2] for r in rows] == [*want[0], *want[1]]
    answers = [r[3] for r in rows]
    assert answers == ["Rating: 4", "I cannot rate this", "7", "2", "2.5", "0"]  # all kept
    # Counts: 7 above, 0 below, 2.5 not whole, one unparsed answer; whatever the policy.
    counts = summary.scales.filter(pl.col("measure") == "J Fluency").row(0, named=True)
    assert counts == {
        "measure": "J Fluency",
        "policy": policy,
        "n_values": 6,
        "n_below": 1,
        "n_above": 1,
        "n_not_whole": 1,
        "n_unparsed": 1,
    }
    assert "1 below, 1 above, 1 not whole, 1 unparsed (policy " + policy in str(summary)
    human = summary.scales.filter(pl.col("measure") == "Fluency").row(0, named=True)
    assert human["policy"] == "error" and human["n_values"] == 4 and human["n_below"] == 0
    # An item's value is the mean of its tries with a score.
    values = dict(
        con.sql("SELECT item, value FROM item_scores WHERE measure = 'J Fluency'").fetchall()
    )
    for item, scores in zip("ab", want, strict=True):
        present = [v for v in scores if v is not None]
        assert values[item] == pytest.approx(np.mean(present))
    # The catalogue carries the judge's description.
    row = con.sql(
        "SELECT kind, criterion, judge, variant, scale, scale_min, scale_max "
        "FROM measure_catalogue WHERE measure = 'J Fluency'"
    ).fetchall()
    assert row == [("llm-judge", "Fluency", "J", "1", "likert", 1.0, 5.0)]
    # Study: the stored checks, and the tries among the ratings.
    study = load_study(con)
    checks = study.scale_checks.filter(pl.col("measure") == "J Fluency")
    assert checks.select("policy", "n_above", "n_unparsed").row(0) == (policy, 1, 1)
    tries = study.ratings.filter(pl.col("kind") == "llm-judge")
    assert tries.height == sum(v is not None for item in want for v in item)


def test_policy_error_refuses_and_writes_nothing(tries_file):
    con = open_store()
    with pytest.raises(InputError, match=r"row 7, column 'value'.*value 7 .*--scale-policy"):
        ingest(con, tries_file, format="tidy")  # tidy files default to 'error'
    assert con.sql("SELECT count(*) FROM measures").fetchall() == [(0,)]
    assert con.sql("SELECT count(*) FROM scale_checks").fetchall() == [(0,)]


def test_human_rating_off_scale_is_refused_under_every_policy(tmp_path):
    rows = [*TRIES[:3], ("b", "p1", "s2", "Fluency", 6, "h2", *[""] * 8)]
    path = write_csv(tmp_path / "bad.csv", rows)
    for policy in ("keep", "clip", "missing"):
        with pytest.raises(InputError, match=r"row 4.*'Fluency' is rated on a Likert scale"):
            ingest(open_store(), path, scale_policy=policy, format="tidy")


def test_item_level_values_are_checked_on_bounds_only(tmp_path):
    # Means of Likert ratings (2.5) are fine at item level; a value beyond the bounds is not.
    header = "item,input,system,measure,value,kind,scale,scale_min,scale_max"
    good = [
        ("a", "p", "s", "Q", 2.5, "human", "likert", 1, 5),
        ("b", "p", "t", "Q", 5, "", "", "", ""),
    ]
    con = open_store()
    ingest(con, write_csv(tmp_path / "good.csv", good, header), format="tidy")
    assert sorted(con.sql("SELECT value FROM item_scores").fetchall()) == [(2.5,), (5.0,)]
    bad = [*good[:1], ("b", "p", "t", "Q", 5.5, "", "", "", "")]
    with pytest.raises(InputError, match=r"row 2.*value 5\.5"):
        ingest(open_store(), write_csv(tmp_path / "bad.csv", bad, header), format="tidy")


def test_stored_scale_applies_to_a_later_file(tmp_path):
    con = open_store()
    ingest(con, write_csv(tmp_path / "t.csv", TRIES[:4]), format="tidy")
    later = [("c", "p1", "s3", "Fluency", 9, "h1")]
    path = write_csv(tmp_path / "later.csv", later, "item,input,system,measure,value,rater")
    with pytest.raises(InputError, match=r"value 9 .*Likert"):
        ingest(con, path, format="tidy")


def test_unparsed_answers_are_counted_without_a_scale(tmp_path):
    header = "item,input,system,measure,value,rater,kind,answer"
    rows = [("a", "p", "s", "J", 3, "1", "llm-judge", "3"), ("a", "p", "s", "J", "", "2", "", "?")]
    (summary,) = ingest(open_store(), write_csv(tmp_path / "u.csv", rows, header), format="tidy")
    assert summary.scales.select("measure", "policy", "n_values", "n_unparsed").rows() == [
        ("J", "error", 2, 1)
    ]


def test_judges_without_scale_records_have_an_empty_scale_table(tmp_path):
    # A judge measure that declares no scale and has no unparsed answer is never checked: its
    # scale table is empty (typed), not an error.
    from hanna_stats.analyses import judge_scale

    rows = list(TRIES[:4])
    rows += [("a", "p1", "s1", "J Fluency", 4, "", "", "Fluency", "J", "1", "", "", "", "")]
    rows += [("b", "p1", "s2", "J Fluency", 2, "", "", "Fluency", "J", "1", "", "", "", "")]
    con = open_store()
    ingest(con, write_csv(tmp_path / "t.csv", rows), format="tidy")
    table = judge_scale(load_study(con))
    assert table.height == 0
    assert table.schema["n_values"] == pl.Int64 and table.schema["missing"] == pl.Int64


def test_continuous_and_integer_scales(tmp_path):
    header = "item,input,system,measure,value,rater,kind,scale,scale_min,scale_max"
    rows = [
        ("a", "p", "s", "C", 0.25, "1", "llm-judge", "continuous", 0, 1),
        ("a", "p", "s", "C", 1.5, "2", "", "", "", ""),
        ("a", "p", "s", "I", 2.5, "1", "llm-judge", "integer", "", ""),
        ("a", "p", "s", "I", -40, "2", "", "", "", ""),
    ]
    (summary,) = ingest(
        open_store(),
        write_csv(tmp_path / "s.csv", rows, header),
        scale_policy="keep",
        format="tidy",
    )
    counts = {r["measure"]: r for r in summary.scales.iter_rows(named=True)}
    assert (counts["C"]["n_above"], counts["C"]["n_not_whole"]) == (1, 0)
    assert (counts["I"]["n_below"], counts["I"]["n_above"], counts["I"]["n_not_whole"]) == (0, 0, 1)


def test_hanna_llm_file_is_kept_and_counted(hanna_dir, hanna_study):
    """The judges' values below 1, counted per measure from the raw JSON cells."""
    raw = pl.read_csv(hanna_dir / "hanna_metric_scores_llm.csv")
    checks = hanna_study.scale_checks.filter(pl.col("kind") == "llm-judge")
    assert checks.height == 140 and set(checks["policy"]) == {"keep"}
    catalogue = hanna_study.catalogue.select(
        "measure", pl.concat_str("judge", "abbreviation", "variant", separator=" ")
    )
    header = dict(catalogue.iter_rows())  # the file's column: '<judge> <XX|AVG> <prompt>'
    for measure, below, above, n in checks.select(
        "measure", "n_below", "n_above", "n_values"
    ).iter_rows():
        values = np.array([v for cell in raw[header[measure]] for v in json.loads(cell)])
        assert (below, above, n) == ((values < 1).sum(), (values > 5).sum(), values.size)
    assert set(checks["scale"]) == {"continuous"}


def test_self_consistency_is_agreement_across_tries(tmp_path):
    """A judge's tries as raters: ICC against pingouin, on a balanced random design."""
    rng = np.random.default_rng(7)
    n_items, n_tries = 30, 3
    truth = rng.integers(1, 6, n_items)
    scores = np.clip(truth[:, None] + rng.integers(-1, 2, (n_items, n_tries)), 1, 5)
    rows = [
        (f"i{i}", f"p{i}", "s", "J", int(scores[i, t]), str(t + 1), "llm-judge", "likert", 1, 5)
        for i in range(n_items)
        for t in range(n_tries)
    ]
    header = "item,input,system,measure,value,rater,kind,scale,scale_min,scale_max"
    con = open_store()
    ingest(con, write_csv(tmp_path / "j.csv", rows, header), format="tidy")
    out = agreement(load_study(con), kinds=("llm-judge",))
    assert set(out["measure"]) == {"J"} and set(out["kind"]) == {"llm-judge"}
    long = pl.DataFrame(
        {
            "item": np.repeat(np.arange(n_items), n_tries),
            "try": np.tile(np.arange(n_tries), n_items),
            "score": scores.ravel().astype(float),
        }
    ).to_pandas()
    want = pingouin.intraclass_corr(long, targets="item", raters="try", ratings="score")
    got = {
        PINGOUIN_LABELS.get(name, name): value
        for name, value in out.select("statistic_name", "statistic").iter_rows()
    }
    for label, icc in zip(want["Type"], want["ICC"], strict=True):
        assert got[label] == pytest.approx(icc, abs=1e-12), label


def test_judges_system_means_on_hanna(hanna_dir, hanna_study):
    """A judge's mean rating of each system: the file's values (policy keep), t-interval."""
    raw = pl.read_csv(hanna_dir / "hanna_metric_scores_llm.csv")
    means = system_means(hanna_study, measures=["Mistral-7B Empathy (prompt 2)"])
    assert set(means["criterion"]) == {"Empathy"} and set(means["unit"]) == {"item"}
    for system, cell in raw.select("Model", "Mistral-7B EM 2").iter_rows():
        values = np.array(json.loads(cell), dtype=float)
        row = means.filter(pl.col("system") == system).row(0, named=True)
        half = stats.t.ppf(0.975, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size)
        assert row["mean"] == pytest.approx(values.mean(), abs=1e-12)
        assert row["half_width"] == pytest.approx(half, abs=1e-12)
    assert means.filter(pl.col("measure") == "Average").is_empty()  # no human criteria chosen


def test_judge_tries_beside_humans_in_the_matched_view(tmp_path):
    """Per-try judges in a tidy file enter the criterion-matched view through their means."""
    rng = np.random.default_rng(3)
    rows = []
    for g in range(4):
        for s in range(5):
            item = f"g{g}s{s}"
            for r in range(3):
                rows.append((item, f"g{g}", f"s{s}", "Fluency", int(rng.integers(1, 6)), f"h{r}"))
                rows.append((item, f"g{g}", f"s{s}", "J Fl", int(rng.integers(1, 6)), str(r + 1)))
    header = "item,input,system,measure,value,rater"
    path = write_csv(tmp_path / "m.csv", rows, header)
    described = path.read_text().replace(header, header + ",criterion,judge", 1)
    lines = described.splitlines()
    lines = [lines[0]] + [line + (",Fluency,J" if ",J Fl," in line else ",,") for line in lines[1:]]
    path.write_text("\n".join(lines) + "\n")
    con = open_store()
    ingest(con, path, format="tidy")
    study = load_study(con)
    view = judge_criteria(study, level="global", method="pearson")
    got = view.filter((pl.col("rater") == "J") & (pl.col("criterion") == "Fluency"))["statistic"]
    frame = pl.DataFrame(
        rows, schema=["item", "input", "system", "measure", "value", "rater"], orient="row"
    )
    mean = (
        frame.group_by("item", "measure")
        .agg(pl.col("value").mean())
        .pivot("measure", index="item", values="value")
    )
    want = stats.pearsonr(mean["J Fl"], mean["Fluency"]).statistic
    assert got[0] == pytest.approx(want, abs=1e-12)


def test_second_run_under_the_same_judge_key_is_refused(tmp_path, tries_file):
    """Two judge measures of one judge, prompt variant and criterion (a second run filed under
    the same key) would be one row of `judges` and two of `judge-williams`: refused, in the same
    file or against the store, with the store unchanged; a distinct prompt variant is taken."""
    con = open_store()
    ingest(con, tries_file, scale_policy="keep", format="tidy")
    before = con.execute("SELECT count(*) FROM measures").fetchall()
    second = [
        ("a", "p1", "s1", "J Fluency run 2", 3, "1", "", "Fluency", "J", "1", "", "", "", "3"),
        ("b", "p1", "s2", "J Fluency run 2", 4, "1", "", "", "", "", "", "", "", "4"),
    ]
    path = write_csv(tmp_path / "second.csv", second)
    with pytest.raises(InputError, match=r"'J Fluency', 'J Fluency run 2'.*prompt_variant"):
        ingest(con, path, scale_policy="keep", format="tidy")
    assert con.execute("SELECT count(*) FROM measures").fetchall() == before
    both = write_csv(tmp_path / "both.csv", TRIES + second)
    with pytest.raises(InputError, match="both rate 'Fluency' by judge 'J'"):
        ingest(open_store(), both, scale_policy="keep", format="tidy")
    renamed = [
        tuple("1 run 2" if v == "1" and k == 9 else v for k, v in enumerate(r)) for r in second
    ]
    ingest(con, write_csv(tmp_path / "renamed.csv", renamed), scale_policy="keep", format="tidy")
    rows = judge_criteria(load_study(con), level="item").filter(pl.col("criterion") == "Fluency")
    assert sorted(rows["prompt"].to_list(), key=str) == ["1", "1 run 2", None]
