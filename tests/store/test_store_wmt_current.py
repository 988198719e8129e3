"""WMT test sets in mt-metrics-eval's current layout (WMT24++, WMT25), written into tmp_path.

The layout the builder writes (one pair, ``en-ko_KR``, locale-coded as in MTME's ``wmt25``)::

    wmt25/sources/en-ko_KR.jsonl                      {"source": ...} per segment
    wmt25/references/en-ko_KR.refA.jsonl, .refB.jsonl {"target": ...} per segment
    wmt25/system-outputs/en-ko_KR/SYS.jsonl           {"hypothesis": ...} (null: no output);
                                                      refA, refB copied here as systems
    wmt25/documents/en-ko_KR.docs                     DOMAIN DOCUMENT
    wmt25/metadata/en-ko_KR/SYS.jsonl                 per-translation metadata (not read)
    wmt25/human-scores/en-ko_KR.esa-human1.seg.score  SYS<TAB>SCORE (and .sys.score)
    wmt25/human-scores/en-ko_KR.esa-human2.seg.score  ESA's second version; None: not rated
    wmt25/human-scores/en-ko_KR.mqm.seg.rating        SYS<TAB>JSON error spans<TAB>RATER
    wmt25/metric-scores/en-ko_KR/NAME-REF.seg.score   BLEU-refA (no refA lines), CometKiwi-src

The expected texts and scores (``MTME_*``) are what mt-metrics-eval
(google-research/mt-metrics-eval, snapshot 68a481ae of 2026-04-23, run from an exported
checkout in its own venv, never installed into the project) read from these same files:
``data.EvalSet("wmt25", "en-ko_KR", read_stored_metric_scores=True, path=TMP,
info=meta_info.MetaInfo("refA", {"seg": "esa-human1", "sys": "esa-human1"}, {"sysC"}, set()))``
and its ``src``, ``all_refs``, ``sys_outputs``, ``Scores(level, name)``, ``human_sys_names``;
``GetCorrelations(evs, "seg", {"refA"}, set(), include_human=True, include_outliers=False,
gold_name="esa-human1", primary_metrics=False)`` gave ``MTME_NO_OUTLIER_SYSTEMS``. MTME read
exactly the texts and scores of the constants below (a JSON ``null`` hypothesis as None, ``None``
scores as None, the ``.rating`` file as the rating set ``mqm``), so the tests compare the store
with them. The rating set's MQM scores (one major error, -5, on segments 1 and 2 of every
system) are checked against mt-metrics-eval's converter in ``test_store_wmt_ratings.py``.
"""

from __future__ import annotations

import json

import pytest

from hanna_stats.cli import main
from hanna_stats.store import InputError, ingest, open_store

LP = "en-ko_KR"
SOURCES = ["Hello, world.", "The cat sat.", "Good night."]
DOCS = ["general doc1", "general doc1", "speech doc2"]
REFS = {
    "refA": ["안녕하세요, 세계.", "고양이가 앉았다.", "잘 자요."],
    "refB": ["안녕, 세상.", "고양이가 앉아 있었다.", "안녕히 주무세요."],
}
OUTPUTS = {
    "sysA": ["안녕 세계.", "고양이 앉았다.", "잘 자."],
    "sysB": ["헬로 월드.", None, "굿나잇."],
    "sysC": ["세계.", "고양이.", "밤."],
    **REFS,
}
# segment scores per system (None: not rated); refA is the standard reference
ESA1 = {
    "sysA": [80.0, 72.5, 90.0],
    "sysB": [40.0, 0.0, 55.5],
    "sysC": [10.0, 20.0, 5.0],
    "refA": [95.0, 99.0, 98.0],
    "refB": [90.0, 85.0, 97.0],
}
ESA2 = {
    "sysA": [78.0, None, 88.0],
    "sysB": [42.0, 3.0, None],
    "sysC": [12.0, 18.0, 7.0],
    "refA": [None, None, None],
    "refB": [91.0, 80.0, 96.0],
}
ESA1_SYS = {"sysA": 80.8, "sysB": 31.8, "sysC": 11.7, "refA": 97.3, "refB": 90.7}
BLEU = {"sysA": [30.1, 22.4, 50.0], "sysB": [5.2, 0.0, 12.9], "sysC": [1.0, 2.0, 3.5],
        "refB": [40.0, 35.5, 60.25]}  # fmt: skip
KIWI = {s: [0.8 - 0.1 * i - 0.05 * j for j in range(3)] for i, s in enumerate(OUTPUTS)}
SYSTEMS = ("refB", "sysA", "sysB", "sysC")  # the study's systems: refA is the reference
MTME_HUMAN_SYSTEMS = ("refA", "refB")  # EvalSet.human_sys_names
# GetCorrelations(..., include_human=True, include_outliers=False): num_sys per metric, sysC
# (an outlier in the MetaInfo given) left out of refB, sysA, sysB, sysC
MTME_NO_OUTLIER_SYSTEMS = {"BLEU-refA": 3, "CometKiwi-src": 3}


def _write(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def _jsonl(path, field, texts, **extra):
    _write(path, [json.dumps({field: t, **extra}, ensure_ascii=False) for t in texts])


def _scores(path, scores):
    _write(path, [f"{s}\t{v}" for s, values in scores.items() for v in values])


def make_current_test_set(root):
    """Write the test set of the module docstring under ``root`` and return its folder."""
    ts = root / "wmt25"
    _jsonl(ts / "sources" / f"{LP}.jsonl", "source", SOURCES, domain="general")
    for ref, texts in REFS.items():
        _jsonl(ts / "references" / f"{LP}.{ref}.jsonl", "target", texts)
    for system, texts in OUTPUTS.items():
        _jsonl(ts / "system-outputs" / LP / f"{system}.jsonl", "hypothesis", texts)
        _jsonl(ts / "metadata" / LP / f"{system}.jsonl", "model", [system] * len(SOURCES))
    _write(ts / "documents" / f"{LP}.docs", DOCS)
    human = ts / "human-scores"
    _scores(human / f"{LP}.esa-human1.seg.score", ESA1)
    _scores(human / f"{LP}.esa-human2.seg.score", ESA2)
    _write(human / f"{LP}.esa-human1.sys.score", [f"{s}\t{v}" for s, v in ESA1_SYS.items()])
    error = {"start": 0, "end": 2, "category": "accuracy/mistranslation", "severity": "major"}
    _write(
        human / f"{LP}.mqm.seg.rating",
        [
            f"{s}\t{json.dumps({'errors': [error] if j else []})}\trater1"
            for s in OUTPUTS
            for j in range(len(SOURCES))
        ],
    )
    _scores(ts / "metric-scores" / LP / "BLEU-refA.seg.score", BLEU)
    _scores(ts / "metric-scores" / LP / "CometKiwi-src.seg.score", KIWI)
    return ts


@pytest.fixture
def current_set(tmp_path):
    return make_current_test_set(tmp_path / "data")


def _store_values(con):
    rows = con.execute(
        "SELECT measure, system, input_position, value FROM item_scores "
        "ORDER BY measure, system, input_position"
    ).fetchall()
    values: dict[str, dict[str, list]] = {}
    for measure, system, _, value in rows:
        values.setdefault(measure, {}).setdefault(system, []).append(value)
    return values


def test_ingest_current_layout(current_set):
    con = open_store()
    (summary,) = ingest(con, current_set, lp=LP, ref="refA")
    assert (summary.format, summary.source) == ("wmt", "wmt25 en-ko_KR")
    assert con.execute("SELECT name FROM study").fetchall() == [("wmt25 en-ko_KR",)]
    inputs = con.execute(
        "SELECT name, text, domain, document, subset FROM inputs ORDER BY position"
    ).fetchall()
    assert inputs == [(f"{LP}:{i}", SOURCES[i], *DOCS[i].split(), LP) for i in range(len(SOURCES))]
    # every system is kept, sysC too (MTME's outlier list is in its meta_info, not the folder)
    systems = con.execute("SELECT name, is_human FROM systems ORDER BY name").fetchall()
    assert systems == [(s, s in MTME_HUMAN_SYSTEMS) for s in SYSTEMS]
    items = con.execute(
        """SELECT sy.name, inp.position, it.name, it.text, it.reference FROM items it
           JOIN inputs inp USING (input_id) JOIN systems sy USING (system_id)
           ORDER BY sy.name, inp.position"""
    ).fetchall()
    assert items == [
        (s, i, f"{LP}:{i}:{s}", OUTPUTS[s][i], REFS["refA"][i])
        for s in SYSTEMS
        for i in range(len(SOURCES))
    ]
    assert sum(text is None for *_, text, _ in items) == 1  # sysB's null hypothesis
    measures = con.execute(
        "SELECT measure, kind, reference_based, source_name FROM measure_catalogue "
        "ORDER BY position"
    ).fetchall()
    assert measures == [
        ("esa-human1", "human", None, f"human-scores/{LP}.esa-human1.seg.score"),
        ("esa-human2", "human", None, f"human-scores/{LP}.esa-human2.seg.score"),
        ("mqm", "human", None, f"human-scores/{LP}.mqm.seg.rating"),
        ("BLEU-refA", "metric", True, f"metric-scores/{LP}/BLEU-refA.seg.score"),
        ("CometKiwi-src", "metric", False, f"metric-scores/{LP}/CometKiwi-src.seg.score"),
    ]
    expected = {
        name: {s: v for s, v in scores.items() if s != "refA"}
        for name, scores in {
            "esa-human1": ESA1,
            "esa-human2": ESA2,
            "mqm": {s: [-0.0, -5.0, -5.0] for s in OUTPUTS},  # a major error: weight 5
            "BLEU-refA": BLEU,
            "CometKiwi-src": KIWI,
        }.items()
    }
    assert _store_values(con) == expected
    given = con.execute(
        "SELECT measure, system, value, subset FROM given_system_scores ORDER BY system"
    ).fetchall()
    assert given == [("esa-human1", s, ESA1_SYS[s], LP) for s in SYSTEMS]
    # the standard reference's output file and its 4 x 3 segment scores and 1 system score
    assert any("left out its output file and its 13 score(s)" in n for n in summary.notes)
    assert any("per-translation metadata of 5 system(s)" in n for n in summary.notes)
    # MTME without its outliers: the systems of a metric's correlation, human ones included
    kept = {s for s in SYSTEMS if s != "sysC"}
    for metric, n in MTME_NO_OUTLIER_SYSTEMS.items():
        assert len(kept & set(expected[metric])) == n


def test_cli_ingest_locale_coded_pair(current_set, tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    assert main(["ingest", "--db", str(db), str(current_set), "--ref", "refA"]) == 0
    assert "wmt25 en-ko_KR: wmt" in capsys.readouterr().out
    assert main(["ingest", "--db", str(db), str(current_set), "--lp", LP, "--ref", "refA"]) == 0
    capsys.readouterr()
    assert main(["correlate", "--db", str(db), "--subset", LP, "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert "BLEU-refA,esa-human1" in out and "CometKiwi-src,esa-human2" in out
    assert main(["ingest", "--db", str(db), str(current_set), "--lp", "en-ko"]) == 2
    assert "no language pair 'en-ko'; found: en-ko_KR" in capsys.readouterr().err


def test_txt_source_preferred_and_both_forms_refused(current_set):
    txt = ["one", "two", "three"]
    (current_set / "sources" / f"{LP}.txt").write_text("\n".join(txt) + "\n", encoding="utf-8")
    con = open_store()
    ingest(con, current_set, lp=LP, ref="refA")
    texts = con.execute("SELECT text FROM inputs ORDER BY position").fetchall()
    assert texts == [(t,) for t in txt]  # MTME's _ReadSourceFile reads the .txt first
    (current_set / "system-outputs" / LP / "sysA.txt").write_text("a\nb\nc\n")
    with pytest.raises(InputError, match=r"both 'sysA.jsonl' and 'sysA.txt'|both 'sysA.txt'"):
        ingest(open_store(), current_set, lp=LP, ref="refA")


@pytest.mark.parametrize(
    ("relative", "line", "message"),
    [
        (f"system-outputs/{LP}/sysA.jsonl", "not json", "expected a JSON object on every line"),
        (f"system-outputs/{LP}/sysA.jsonl", '{"target": "x"}', "no field 'hypothesis'"),
        (f"references/{LP}.refB.jsonl", '{"target": 3}', "field 'target' is int, expected"),
        (f"sources/{LP}.jsonl", '{"source": null}', "a source segment is null"),
    ],
)
def test_bad_json_lines_name_file_and_row(current_set, relative, line, message):
    path = current_set / relative
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = line
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=f"{path.name}, row 2.*{message}") as error:
        ingest(open_store(), current_set, lp=LP, ref="refA")
    assert message in str(error.value)
