"""Several language pairs of one WMT test set in one store (issue 22): each pair is a subset of the
study (``inputs.subset``), and every analysis runs per pair by default (``subsets="each"``;
``Study.subset(subset=LP)``, ``--subset LP`` for one) with the results of a store holding that
pair alone; ``subsets="pooled"`` (``--pool-subsets``) pools them.

The test set is WMT-shaped (mt-metrics-eval's folder layout, as ``test_store_wmt.make_test_set``)
with three pairs that differ as WMT23's do: their numbers of segments, their systems (a system of
one pair only, one missing from a pair, a name sorting between two others), their metrics (one of
one pair only; BLEU against each pair's standard reference) and their standard reference (refB
for he-en, as WMT23's, making refA a human-written system there).
"""

from __future__ import annotations

import csv
import io

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_store_wmt import _write

from hanna_stats.analyses import (
    analysis_calls,
    calibrated_accuracy,
    correlate,
    given_left_out,
    metric_clusters,
)
from hanna_stats.cli import main
from hanna_stats.store import InputError, ingest, load_study, open_store

#: pair -> (segments, standard reference, MT systems, metrics with a .seg.score file)
PAIRS = {
    "en-de": (4, "refA", ("sysA", "sysB", "sysC"), ("BLEU-refA", "CometKiwi-src")),
    "zh-en": (
        5,
        "refA",
        ("sysA", "sysAB", "sysC", "sysD"),
        ("AAA-refA", "BLEU-refA", "CometKiwi-src"),
    ),
    "he-en": (6, "refB", ("sysA", "sysB", "sysE"), ("BLEU-refB", "CometKiwi-src")),
}
LPS = tuple(PAIRS)
REFS = ("refA", "refB")
TABLES = (
    "systems",
    "inputs",
    "items",
    "measures",
    "scores",
    "given_system_scores_by_id",
    "ingests",
)
CLUSTERS = {"criterion": "mqm", "method": "pearson", "permutations": 200, "seed": 7}


def make_pairs(root, seed=0):
    """The three pairs of :data:`PAIRS` in MTME's layout under ``root`` (e.g. ``wmt23/``): both
    references scored as systems, segment-level MQM (a None), the metrics' segment- and
    system-level scores, system-level MQM and wmt-z (no segment file), documents and
    domain-level MQM."""
    rng = np.random.default_rng(seed)
    for lp, (n, _, systems, metrics) in PAIRS.items():
        scored = (*systems, *REFS)
        _write(root / "sources" / f"{lp}.txt", [f"{lp} source {i}" for i in range(n)])
        for ref in REFS:
            lines = [f"{lp} {ref} {i}" for i in range(n)]
            _write(root / "references" / f"{lp}.{ref}.txt", lines)
            _write(root / "system-outputs" / lp / f"{ref}.txt", lines)
        for system in systems:
            lines = [f"{lp} {system} output {i}" for i in range(n)]
            _write(root / "system-outputs" / lp / f"{system}.txt", lines)
        _write(root / "documents" / f"{lp}.docs", [f"news doc{i // 2}" for i in range(n)])

        def seg(scale, none_at=None, n=n, scored=scored):
            return [
                f"{s}\t{'None' if (s, i) == none_at else f'{scale * rng.random():.6f}'}"
                for s in scored
                for i in range(n)
            ]

        def sys(scored=scored):
            return [f"{s}\t{rng.normal():.6f}" for s in scored]

        human = root / "human-scores"
        _write(human / f"{lp}.mqm.seg.score", seg(-25, none_at=(systems[1], 2)))
        _write(human / f"{lp}.mqm.sys.score", sys())
        _write(human / f"{lp}.wmt-z.sys.score", sys())
        _write(human / f"{lp}.mqm.domain.score", [f"news\t{s}\t{rng.normal():.4f}" for s in scored])
        for metric in metrics:
            _write(root / "metric-scores" / lp / f"{metric}.seg.score", seg(100))
            _write(root / "metric-scores" / lp / f"{metric}.sys.score", sys())
    return root


@pytest.fixture
def test_set(tmp_path):
    return make_pairs(tmp_path / "wmt23")


def _ingest(con, root, lp, **options):
    return ingest(con, root, lp=lp, ref=PAIRS[lp][1], format="wmt", **options)


def _counts(con):
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES}


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """The study of one store holding the three pairs, ingested one by one, and the studies of
    three stores holding one pair each."""
    test_set = make_pairs(tmp_path_factory.mktemp("subsets") / "wmt23")
    con = open_store()
    for lp in LPS:
        _ingest(con, test_set, lp)
    together = load_study(con)
    con.close()
    alone = {}
    for lp in LPS:
        con = open_store()
        _ingest(con, test_set, lp)
        alone[lp] = load_study(con)
        con.close()
    return together, alone


def _sorted(frame, keys):
    return pl.DataFrame(frame).sort(keys)


def test_three_pairs_in_one_store(test_set):
    con = open_store()
    summaries = [_ingest(con, test_set, lp)[0] for lp in LPS]
    assert [s.source for s in summaries] == [f"wmt23 {lp}" for lp in LPS]
    assert [s.added["inputs"] for s in summaries] == [4, 5, 6]
    assert not any("new subset" in n for n in summaries[0].notes)
    assert any("now named 'wmt23'" in n for s in summaries[1:] for n in s.notes)
    assert con.execute("SELECT name FROM study").fetchall() == [("wmt23",)]
    rows = con.execute(
        "SELECT subset, count(*), min(name) FROM inputs GROUP BY subset ORDER BY min(input_id)"
    ).fetchall()
    assert rows == [("en-de", 4, "en-de:0"), ("zh-en", 5, "zh-en:0"), ("he-en", 6, "he-en:0")]
    # one measure per name, one system per name; refA is a (human-written) system of he-en only
    measures = {r[0] for r in con.execute("SELECT name FROM measures").fetchall()}
    assert measures == {"mqm", "wmt-z", "AAA-refA", "BLEU-refA", "BLEU-refB", "CometKiwi-src"}
    systems = con.execute(
        "SELECT system, list(DISTINCT subset ORDER BY subset) FROM item_scores "
        "GROUP BY system ORDER BY system"
    ).fetchall()
    assert systems == [
        ("refA", ["he-en"]),
        ("refB", ["en-de", "zh-en"]),
        ("sysA", ["en-de", "he-en", "zh-en"]),
        ("sysAB", ["zh-en"]),
        ("sysB", ["en-de", "he-en"]),
        ("sysC", ["en-de", "zh-en"]),
        ("sysD", ["zh-en"]),
        ("sysE", ["he-en"]),
    ]
    # the given values are kept per pair: sysA has one mqm value in each
    given = con.execute(
        "SELECT subset, value FROM given_system_scores WHERE system = 'sysA' AND measure = 'mqm' "
        "ORDER BY subset"
    ).fetchall()
    expected = {
        lp: float(
            next(
                line.split("\t")[1]
                for line in (test_set / "human-scores" / f"{lp}.mqm.sys.score")
                .read_text()
                .splitlines()
                if line.startswith("sysA\t")
            )
        )
        for lp in LPS
    }
    assert given == sorted(expected.items())
    domains = con.execute("SELECT DISTINCT subset FROM given_domain_scores ORDER BY ALL").fetchall()
    assert domains == [("en-de",), ("he-en",), ("zh-en",)]
    assert con.execute("SELECT DISTINCT subset FROM system_scores ORDER BY ALL").fetchall() == [
        ("en-de",),
        ("he-en",),
        ("zh-en",),
    ]


def test_study_subsets(stores):
    together, alone = stores
    assert together.name == "wmt23" and together.subsets == LPS
    assert "  subsets: en-de, zh-en, he-en" in repr(together).splitlines()
    for lp in LPS:
        one, single = together.subset(subset=lp), alone[lp]
        assert one.subsets == single.subsets == (lp,)
        assert one.name == single.name == f"wmt23 {lp}"
        for attribute in ("inputs", "systems", "measures", "kinds"):
            if attribute in ("measures", "kinds"):  # catalogue order: pairs appended
                assert sorted(getattr(one, attribute)) == sorted(getattr(single, attribute))
            else:  # systems sort by name in every store
                assert getattr(one, attribute) == getattr(single, attribute), attribute
        order = [single.measures.index(m) for m in one.measures]
        np.testing.assert_array_equal(one.values, single.values[order])
        np.testing.assert_array_equal(one.is_human, single.is_human)
        keys = ["measure", "system"]
        assert_frame_equal(
            _sorted(one.given_system_scores.drop("measure_position", "system_position"), keys),
            _sorted(single.given_system_scores.drop("measure_position", "system_position"), keys),
        )
    assert together.subset(subset="he-en").systems == ("refA", "sysA", "sysB", "sysE")
    # subset first, then systems: the systems are those of the pair
    assert together.subset(subset="zh-en", exclude_systems=["sysD"]).systems == (
        "refB",
        "sysA",
        "sysAB",
        "sysC",
    )
    with pytest.raises(ValueError, match=r"unknown systems \['sysE'\]"):
        together.subset(subset="zh-en", systems=["sysE"])
    with pytest.raises(ValueError, match=r"^subset: unknown subset 'fr-de'; the study's subsets"):
        together.subset(subset="fr-de")
    # systems first (the whole study), then per pair
    narrowed = together.subset(exclude_systems=["sysA"])
    assert narrowed.subsets == LPS
    assert narrowed.subset(subset="en-de").systems == ("refB", "sysB", "sysC")


@pytest.mark.parametrize(
    "options",
    [
        {"level": "item", "method": "pearson"},
        {"level": "item", "method": "kendall", "variant": "c", "group_by": "system"},
        {"level": "system", "method": "pearson"},
        {"level": "system", "method": "kendall", "system_scores": "given"},
        {"level": "global", "method": "spearman"},
    ],
)
def test_correlate_per_pair_equals_the_pair_alone(stores, options):
    together, alone = stores
    with analysis_calls() as calls:
        stacked = correlate(together, **options)
        correlate(alone["en-de"], **options)
    assert stacked.columns[0] == "subset" and [c.name for c in calls] == ["correlate"] * 2
    assert calls[0].settings == calls[1].settings
    assert stacked["subset"].unique(maintain_order=True).to_list() == list(LPS)
    keys = ["measure", "against"]
    for lp in LPS:
        mine = stacked.filter(pl.col("subset") == lp).drop("subset")
        assert_frame_equal(_sorted(mine, keys), _sorted(correlate(alone[lp], **options), keys))


@pytest.mark.parametrize(
    "options", [{}, {"level": "system"}, {"level": "system", "system_scores": "given"}]
)
def test_calibrated_accuracy_per_pair_equals_the_pair_alone(stores, options):
    together, alone = stores
    stacked = calibrated_accuracy(together, **options)
    keys = ["measure", "against"]
    for lp in LPS:
        mine = stacked.filter(pl.col("subset") == lp).drop("subset")
        expected = calibrated_accuracy(alone[lp], **options)
        assert expected.height and set(expected["against"]) <= {"mqm", "wmt-z"}
        assert_frame_equal(_sorted(mine, keys), _sorted(expected, keys))


@pytest.mark.parametrize("level", ["item", "system"])
def test_clusters_per_pair_equal_the_pair_alone(stores, level):
    together, alone = stores
    stacked = metric_clusters(together, level=level, **CLUSTERS)
    for lp in LPS:
        mine = stacked.filter(pl.col("subset") == lp).drop("subset")
        expected = metric_clusters(alone[lp], level=level, **CLUSTERS)
        assert expected.height == len(PAIRS[lp][3])
        assert_frame_equal(pl.DataFrame(mine), pl.DataFrame(expected))  # same seed, same draws


def test_pooled_and_refused(stores):
    together, _ = stores
    # pooled, item-level statistics pool the pairs' segments
    pooled = correlate(together, level="item", subsets="pooled")
    assert "subset" not in pooled.columns and pooled["n_groups"].max() == 4 + 5 + 6
    # a system has a given value in each pair: no pooled given cube
    with pytest.raises(ValueError, match=r"given per subset and the study holds 3 \(en-de, "):
        correlate(together, level="system", system_scores="given", subsets="pooled")
    assert given_left_out(together, ("metric",), False) == []
    assert given_left_out(together.subset(subset="zh-en"), ("metric",), False) == []
    # an analysis that refuses a pair: the refusal names it (wmt-z has system-level values only)
    with pytest.raises(ValueError, match=r"^subset 'en-de': criterion must be one of mqm"):
        metric_clusters(together, **{**CLUSTERS, "criterion": "wmt-z"})
    with pytest.raises(ValueError, match=r"^subsets must be one of 'each', 'pooled'; got 'all'"):
        correlate(together, subsets="all")


def test_a_study_without_subsets_is_analysed_as_it_is(hanna_study):
    assert hanna_study.subsets == () and "subsets" not in repr(hanna_study)
    each, pooled = correlate(hanna_study), correlate(hanna_study, subsets="pooled")
    assert "subset" not in each.columns and each.equals(pooled)
    with pytest.raises(ValueError, match=r"unknown subset 'en-de'; the study's subsets are none"):
        hanna_study.subset(subset="en-de")


def test_reingest_does_not_duplicate(test_set):
    con = open_store()
    for lp in LPS:
        _ingest(con, test_set, lp)
    before = _counts(con)
    for lp in reversed(LPS):
        (summary,) = _ingest(con, test_set, lp)
        assert summary.skipped
    assert _counts(con) == before
    # a changed file of one pair: refused without replace, then replaces in that pair only
    path = test_set / "human-scores" / "zh-en.mqm.sys.score"
    lines = path.read_text().splitlines()
    _write(path, ["sysA\t123.0" if line.startswith("sysA\t") else line for line in lines])
    with pytest.raises(
        InputError, match=r"would replace 1 value\(s\).*system 'sysA', measure 'mqm'"
    ):
        _ingest(con, test_set, "zh-en")
    (summary,) = _ingest(con, test_set, "zh-en", replace=True)
    assert summary.replaced == 1 and _counts(con) == {**before, "ingests": before["ingests"] + 1}
    assert con.execute("SELECT name FROM study").fetchall() == [("wmt23",)]


def test_another_study_is_refused(test_set, tmp_path):
    con = open_store()
    _ingest(con, test_set, "en-de")
    _ingest(con, test_set, "zh-en")
    before = _counts(con)
    other = make_pairs(tmp_path / "wmt22", seed=1)
    message = (
        r"^wmt22: this store holds wmt23; a store holds the language pairs of one test set: "
        r"ingest he-en into its own store$"
    )
    for extend, replace in ((False, False), (True, True)):
        with pytest.raises(InputError, match=message):
            _ingest(con, other, "he-en", extend=extend, replace=replace)
    # a tidy file of another study: refused as before (it shares no input)
    tidy = tmp_path / "other.csv"
    _write(tidy, ["item,input,system,measure,value", "a,p,A,BLEU,1.0", "b,p,B,BLEU,2.0"])
    with pytest.raises(InputError, match="shares none of its 1 inputs with the study"):
        ingest(con, tidy, study="Other", format="tidy")
    assert _counts(con) == before
    # a store of one pair of another test set refuses a pair of this one
    con = open_store()
    _ingest(con, other, "en-de")
    with pytest.raises(InputError, match=r"^wmt23: this store holds wmt22 en-de; a store holds"):
        _ingest(con, test_set, "zh-en")


#: The tables and view of given system-level values before they were keyed by subset.
OLD_GIVEN = """
CREATE TABLE system_level_scores (
    measure_id INTEGER NOT NULL, system_id INTEGER NOT NULL, value DOUBLE,
    PRIMARY KEY (measure_id, system_id));
CREATE TABLE domain_level_scores (
    measure_id INTEGER NOT NULL, system_id INTEGER NOT NULL, domain VARCHAR NOT NULL,
    value DOUBLE, PRIMARY KEY (measure_id, system_id, domain));
INSERT INTO system_level_scores SELECT * EXCLUDE (subset) FROM new_system;
INSERT INTO domain_level_scores SELECT * EXCLUDE (subset) FROM new_domain;
CREATE OR REPLACE VIEW given_system_scores AS
SELECT sy.name AS system, sy.position AS system_position, sy.is_human,
       m.name AS measure, m.kind, m.position AS measure_position, g.value
FROM system_level_scores g JOIN systems sy USING (system_id) JOIN measures m USING (measure_id);
DROP TABLE new_system;
DROP TABLE new_domain;
UPDATE inputs SET subset = NULL;
"""


def test_store_written_before_subsets(test_set, tmp_path):
    """A store of one pair of schema 0 whose given values are not keyed by subset: read-only, it
    is refused; a writable open migrates it, keying them by subset (subset '', values kept); it
    refuses a second pair."""
    db = tmp_path / "old.duckdb"
    con = open_store(db)
    _ingest(con, test_set, "en-de")
    query = "SELECT measure, system, value FROM given_system_scores ORDER BY ALL"
    given = con.execute(query).fetchall()
    con.execute("ALTER TABLE given_system_scores_by_id RENAME TO new_system")
    con.execute("ALTER TABLE given_domain_scores_by_id RENAME TO new_domain")
    con.execute(OLD_GIVEN)
    con.execute("DROP TABLE store_schema")
    con.close()
    with pytest.raises(ValueError, match=r"store schema 0 .* opening it for writing"):
        open_store(db, read_only=True)
    con = open_store(db)  # a writable open rebuilds the tables keyed by subset
    assert con.execute(query).fetchall() == given
    assert con.execute("SELECT DISTINCT subset FROM given_system_scores_by_id").fetchall() == [
        ("",)
    ]
    with pytest.raises(InputError, match=r"holds wmt23 en-de; a store holds the language pairs"):
        _ingest(con, test_set, "zh-en")
    con.close()


def _csv(capsys):
    return list(csv.DictReader(io.StringIO(capsys.readouterr().out)))


@pytest.mark.parametrize(
    ("command", "options"),
    [
        ("correlate", ["--level", "system"]),
        ("calibrate", []),
        ("clusters", ["--criterion", "mqm", "--method", "pearson", "--permutations", "200"]),
    ],
)
def test_cli_each_subset(test_set, tmp_path, capsys, command, options):
    db = tmp_path / "wmt.duckdb"
    for lp in LPS:
        assert (
            main(["ingest", "--db", str(db), str(test_set), "--lp", lp, "--ref", PAIRS[lp][1]]) == 0
        )
    capsys.readouterr()
    run = [command, "--db", str(db), *options, "--format", "csv"]
    assert main(run) == 0
    out = capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO(out.out)))
    assert out.err == "" and next(iter(rows[0])) == "subset"
    assert list(dict.fromkeys(r["subset"] for r in rows)) == list(LPS)
    assert main([*run, "--subset", "he-en"]) == 0
    one = _csv(capsys)
    assert one == [
        {k: v for k, v in r.items() if k != "subset"} for r in rows if r["subset"] == "he-en"
    ]
    # --pool-subsets: the pairs pooled, no subset column
    assert main([*run, "--pool-subsets"]) == 0
    pooled = _csv(capsys)
    assert "subset" not in pooled[0] and len(pooled) < len(rows)
    assert main([*run, "--subset", "fr-de"]) == 2
    assert "error: subset: unknown subset 'fr-de'" in capsys.readouterr().err


def test_cli_each_subset_given_notes(test_set, tmp_path, capsys):
    (test_set / "metric-scores" / "zh-en" / "AAA-refA.sys.score").unlink()
    db = tmp_path / "wmt.duckdb"
    for lp in LPS:
        assert (
            main(["ingest", "--db", str(db), str(test_set), "--lp", lp, "--ref", PAIRS[lp][1]]) == 0
        )
    capsys.readouterr()
    given = ["correlate", "--db", str(db), "--level", "system", "--system-scores", "given"]
    assert main([*given, "--format", "csv"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "note: --system-scores given: left out 1 measure(s) without given system-level values in "
        "subset 'zh-en' (WMT: no .sys.score file): 'AAA-refA'"
    ]
    assert main([*given, "--pool-subsets", "--format", "csv"]) == 2
    assert "given per subset and the study holds 3" in capsys.readouterr().err
