"""Item subsampling of a study (``sample_inputs``, every command's ``--sample-inputs``) on the
real WMT22 zh-en pair (../shared/data/wmt22), against mt-metrics-eval
(google-research/mt-metrics-eval, commit 68a481a).

The expected values were printed by mt-metrics-eval's own code, run outside this project (its
snapshot exported to /tmp/mtme and run from there in a separate virtual environment with numpy
2.4.6 and scipy 1.17.1, ``apache_beam`` stubbed), on the same files: ``zh =
data.EvalSet("wmt22", "zh-en", read_stored_metric_scores=True)``, then ``corrs =
data.GetCorrelations(zh, "seg", {"refA"}, set(), False, False, "mqm", False,
sample_size=SIZE, sample_method=METHOD, sample_seed=SEED)`` (its 14 MT systems with MQM
scores) and, per metric, ``Pearson(average_by)`` and ``Kendall(average_by)`` with
``average_by`` "none", "sys" and "item", and ``KendallWithTiesOpt("item", sample_rate=1.0)``.
At that commit ``GetCorrelations`` with a ``sample_size`` fails on its own check ``if scores
and ...`` (``Sample.Select`` returns an array, whose truth value numpy refuses): the run
replaced ``Select`` by the same values as a list (``Select(v).tolist()``), nothing else. The
stratified draw is at size 150, where no two documents tie for the last extra items
(mt-metrics-eval breaks such a tie with numpy's global random state, not its seed). The
throwaway script (``/tmp/h14/run_mtme.py``) is not part of this project.
"""

from __future__ import annotations

import io

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from test_store_subsets import LPS, PAIRS, make_pairs

from hanna_stats.analyses import calibrated_accuracy, correlate, sample_inputs
from hanna_stats.cli import main
from hanna_stats.store import ingest, load_study, open_store

#: MTME's sample (length, sum, sum of position x index, first 8), in its order, and per metric
#: ((Pearson none, sys, item), (Kendall none, sys, item), acc_eq by item).
MTME = {
    ("uniform", 100, 1): (
        (100, 94854, 5017834, [1324, 1147, 223, 242, 732, 368, 488, 112]),
        {
            "BLEU-refA": (
                (0.17056064487840567, 0.1583026265657614, 0.16170044118724192),
                (0.10148713729131092, 0.08684133209208332, 0.09932307201068664),
                0.41450549450549345,
            ),
            "chrF-refA": (
                (0.12485154716707549, 0.1108800875315868, 0.1644501135846073),
                (0.07963288063050435, 0.06930163957832129, 0.10840156425863923),
                0.418461538461538,
            ),
            "COMET-22-refA": (
                (0.6630913899833237, 0.6606706761995847, 0.4194334911130305),
                (0.41464013334063066, 0.403212382523154, 0.2857382002430944),
                0.5513186813186813,
            ),
            "COMETKiwi-src": (
                (0.5811785868311348, 0.5754632553086186, 0.346428098977228),
                (0.35809161816776863, 0.3480784160984593, 0.212866629973959),
                0.5150549450549446,
            ),
            "BLEURT-20-refA": (
                (0.5160623129286925, 0.5138212064800114, 0.405247742592184),
                (0.36293920435386284, 0.34830120513808177, 0.285540805827079),
                0.5075824175824174,
            ),
            "metricx_xxl_MQM_2020-refA": (
                (0.6094513761611468, 0.6018344034672677, 0.4247296285248802),
                (0.4269192942568863, 0.42026396431926116, 0.26395832112532036),
                0.5410989010989011,
            ),
        },
    ),
    ("stratify", 150, 11): (
        (150, 140899, 13992072, [6, 30, 50, 53, 65, 82, 68, 108]),
        {
            "BLEU-refA": (
                (0.18906869618221703, 0.17632780648320384, 0.1871941625760481),
                (0.1293229400882682, 0.11095301957608013, 0.1402638848190587),
                0.3996336996336994,
            ),
            "chrF-refA": (
                (0.16039959810381915, 0.14081841783241042, 0.23463768013762204),
                (0.12280762142079636, 0.10403050919840877, 0.1738686071999636),
                0.4106959706959707,
            ),
            "COMET-22-refA": (
                (0.519390474737942, 0.48860101448133936, 0.39802704850326287),
                (0.41507172956115546, 0.39926637502769163, 0.26919560830189543),
                0.5401465201465192,
            ),
            "COMETKiwi-src": (
                (0.40701452056184617, 0.37024010664644746, 0.31719152479287926),
                (0.32376587906596627, 0.307902520983601, 0.1968325271546865),
                0.5023443223443214,
            ),
            "BLEURT-20-refA": (
                (0.3887071101474044, 0.3635735264855625, 0.3772976769260642),
                (0.3523929864503961, 0.33435616145690733, 0.25691840854200537),
                0.4981684981684983,
            ),
            "metricx_xxl_MQM_2020-refA": (
                (0.5652260879032603, 0.5423444414737352, 0.3992131216510782),
                (0.42941800987383605, 0.42050326512287, 0.2579358788807605),
                0.5476190476190466,
            ),
        },
    ),
}
#: MTME's average_by "none", "sys", "item": our global level, item level by system, by input.
GROUPINGS = ({"level": "global"}, {"level": "item", "group_by": "system"}, {"level": "item"})


def _mqm(frame):
    rows = frame.filter(pl.col("against") == "mqm")
    return dict(zip(rows["measure"], rows["statistic"], strict=True))


def _fingerprint(positions):
    v = [int(i) for i in positions]
    return len(v), sum(v), sum(k * i for k, i in enumerate(v)), v[:8]


@pytest.mark.parametrize(("method", "size", "seed"), list(MTME))
def test_sampled_study_matches_mtme(wmt22_study, method, size, seed):
    fingerprint, expected = MTME[(method, size, seed)]
    sampled = sample_inputs(wmt22_study, size, method=method, seed=seed)
    position = {name: k for k, name in enumerate(wmt22_study.inputs)}
    assert _fingerprint(position[name] for name in sampled.inputs) == fingerprint
    for row, coefficient in enumerate(("pearson", "kendall")):
        for column, options in enumerate(GROUPINGS):
            ours = _mqm(correlate(sampled, method=coefficient, **options))
            for name, values in expected.items():
                assert ours[name] == pytest.approx(values[row][column], abs=1e-9), (
                    name,
                    coefficient,
                    options,
                )
    ours = _mqm(calibrated_accuracy(sampled, level="item"))
    for name, values in expected.items():
        assert ours[name] == pytest.approx(values[2], abs=1e-9), name


def test_documents_are_loaded_and_sampled_with_their_inputs(wmt22_dir, wmt22_study):
    lines = (wmt22_dir / "documents" / "zh-en.docs").read_text().splitlines()
    assert wmt22_study.documents == tuple(line.split()[1] for line in lines)
    sampled = sample_inputs(wmt22_study, 150, method="stratify", seed=11)
    of_input = dict(zip(wmt22_study.inputs, wmt22_study.documents, strict=True))
    assert sampled.documents == tuple(of_input[name] for name in sampled.inputs)
    # the given system-level values are of every segment, not of the sample
    assert sampled.given_system_scores.is_empty()
    assert sampled.given_system_scores.columns == wmt22_study.given_system_scores.columns
    assert sampled.values.shape[1] == 150


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    """The study of one store of three made-up pairs (documents of two segments each), and of
    each pair alone."""
    root = make_pairs(tmp_path_factory.mktemp("sample") / "wmt23")

    def study(lps):
        con = open_store()
        try:
            for lp in lps:
                ingest(con, root, lp=lp, ref=PAIRS[lp][1], format="wmt")
            return load_study(con)
        finally:
            con.close()

    return study(LPS), {lp: study([lp]) for lp in LPS}


def _cells(study):
    """Every value by (measure, input, system): the stores' catalogue orders differ."""
    m, g, s = np.nonzero(~np.isnan(study.values))
    return {
        (study.measures[i], study.inputs[j], study.systems[k]): study.values[i, j, k]
        for i, j, k in zip(m, g, s, strict=True)
    }


@pytest.mark.parametrize("method", ["uniform", "stratify"])
def test_each_subset_is_sampled_as_if_alone(pairs, method):
    # mt-metrics-eval samples each language pair's EvalSet with the same seed.
    together, alone = pairs
    sampled = sample_inputs(together, 3, method=method, seed=5)
    assert sampled.subsets == LPS
    for lp in LPS:
        own = sample_inputs(alone[lp], 3, method=method, seed=5)
        part = sampled.subset(subset=lp)
        assert part.inputs == own.inputs and len(own.inputs) == 3
        assert _cells(part) == _cells(own)
    stacked = correlate(sampled, method="pearson")
    for lp in LPS:
        own = correlate(sample_inputs(alone[lp], 3, method=method, seed=5), method="pearson")
        mine = stacked.filter(pl.col("subset") == lp).drop("subset")
        assert_frame_equal(mine.sort("measure", "against"), own.sort("measure", "against"))
    if method == "stratify":  # each document its share of 3, rounded down or up
        for lp in LPS:
            documents = alone[lp].documents
            drawn = sampled.subset(subset=lp).documents
            for document in set(documents):
                share = 3 * documents.count(document) / len(documents)
                assert np.floor(share) <= drawn.count(document) <= np.ceil(share)


def test_a_generator_draws_the_subsets_in_turn(pairs):
    together, _ = pairs
    rng = np.random.default_rng(2)
    first = sample_inputs(together, 2, seed=rng)
    again = sample_inputs(together, 2, seed=np.random.default_rng(2))
    assert first.inputs == again.inputs
    assert len(first.inputs) == 2 * len(LPS)


def test_a_size_above_the_inputs_keeps_them_all(pairs):
    together, alone = pairs
    sampled = sample_inputs(alone["en-de"], 10, seed=1)
    assert sorted(sampled.inputs) == sorted(alone["en-de"].inputs)
    assert len(sample_inputs(together, 0).inputs) == len(together.inputs)


def test_bad_values_are_refused_in_one_line(hanna_study, wmt22_study):
    for size in (-1, 1.5, True, "10"):
        with pytest.raises(ValueError, match="size must be a non-negative integer"):
            sample_inputs(wmt22_study, size)
    with pytest.raises(ValueError, match="sample_method must be one of 'uniform', 'stratify'"):
        sample_inputs(wmt22_study, 10, method="documents")
    with pytest.raises(ValueError, match="seed must be an integer"):
        sample_inputs(wmt22_study, 10, seed=-1)
    with pytest.raises(ValueError, match="96 of the study's 96 inputs have none") as error:
        sample_inputs(hanna_study, 10, method="stratify")
    assert "\n" not in str(error.value)
    with pytest.raises(ValueError, match="distinct"):
        wmt22_study.inputs_at([1, 1])
    with pytest.raises(ValueError, match="indices of the study's 1,875 inputs"):
        wmt22_study.inputs_at([1875])


def test_ratings_follow_the_sampled_inputs(hanna_study):
    sampled = sample_inputs(hanna_study, 10, seed=3)
    assert len(sampled.inputs) == 10
    assert set(sampled.ratings["input"]) == set(sampled.inputs)
    assert (
        sampled.ratings.height
        == hanna_study.ratings.filter(pl.col("input").is_in(sampled.inputs)).height
    )


@pytest.fixture(scope="module")
def wmt22_db(wmt22_dir, tmp_path_factory):
    """A store file of WMT22 zh-en as ``wmt22_study`` loads it (standard reference refA)."""
    path = tmp_path_factory.mktemp("wmt22") / "wmt22.duckdb"
    con = open_store(path)
    try:
        ingest(con, wmt22_dir, lp="zh-en", ref="refA", format="wmt")
    finally:
        con.close()
    return path


def test_command_line_equals_the_python_call(wmt22_db, wmt22_study, capsys):
    base = ["correlate", "--db", str(wmt22_db), "--method", "pearson", "--format", "csv"]
    runs = {
        (): {},
        ("--sample-method", "stratify"): {"method": "stratify"},
    }
    for flags, options in runs.items():
        assert main([*base, "--sample-inputs", "100", "--sample-seed", "1", *flags]) == 0
        out = pl.read_csv(io.StringIO(capsys.readouterr().out))
        sampled = sample_inputs(wmt22_study, 100, seed=1, **options)
        expected = correlate(sampled, method="pearson")
        assert out["measure"].to_list() == expected["measure"].to_list()
        np.testing.assert_allclose(out["statistic"], expected["statistic"], rtol=1e-12)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--sample-seed", "3"], "--sample-seed: the draw of --sample-inputs N, which is not"),
        (["--sample-method", "stratify"], "--sample-method: the draw of --sample-inputs N"),
        (["--sample-inputs", "10", "--sample-method", "stratify"], "inputs have none"),
    ],
)
def test_command_line_refusals_are_one_line(hanna_dir, capsys, flags, message):
    assert main(["correlate", "--data", str(hanna_dir), *flags]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize("value", ["0", "-5", "ten"])
def test_command_line_sample_size_must_be_positive(capsys, value):
    with pytest.raises(SystemExit) as exit_:
        main(["correlate", "--sample-inputs", value])
    assert exit_.value.code == 2
    assert f"must be a positive integer; got {value!r}" in capsys.readouterr().err
