"""MQM error spans, outlier systems and per-system metadata of an MTME test set.

The test set the builder writes (``wmt23``, pair ``zh-en``; mt-metrics-eval's meta-info marks
``synthetic_ref`` an outlier of wmt23 zh-en)::

    wmt23/sources/zh-en.txt, references/zh-en.refA.txt, documents/zh-en.docs
    wmt23/system-outputs/zh-en/{sysA,sysB,synthetic_ref,refA}.txt
    wmt23/human-scores/zh-en.mqm.merged.seg.rating  SYS<TAB>RATING[<TAB>RATER]: error spans
    wmt23/human-scores/zh-en.mqm.seg.rating         a rating set with its own .seg.score
    wmt23/human-scores/zh-en.mqm.seg.score          SYS<TAB>SCORE (the released scores)
    wmt23/metric-scores/zh-en/BLEU-refA.seg.score
    wmt23/metadata/zh-en/{sysA,sysB}.jsonl          per-translation metadata

``MTME_MQM`` is what mt-metrics-eval (google-research/mt-metrics-eval, snapshot 68a481ae of
2026-04-23, exported with ``git archive`` and run from /tmp in its own venv, never installed into
the project) gave on these same files (written by :func:`make_rated_test_set`): ``data.EvalSet(
"wmt23", "zh-en", path=TMP, read_stored_ratings=True, info=meta_info.MetaInfo("refA", {"seg":
"mqm"}, {"synthetic_ref"}, set()))`` read the rating set ``mqm.merged`` (``Ratings``,
``RaterIdsPerSeg``); each rating's errors were written as rows ``system doc doc_id rater severity
category`` (a rating with no error as one ``No-error`` row, as Google's MQM files have it) and
scored by ``python -m mt_metrics_eval.converters.score_mqm --noforce_contiguous`` with its
default (standard) weights; its ``global_score`` per segment is listed (None: a ``None`` rating,
no rows). The same EvalSet gave ``human_rating_names == {"mqm", "mqm.merged"}``, and
``outlier_sys_names == {"synthetic_ref"}``.
"""

from __future__ import annotations

import json

import pytest

from hanna_stats.cli import main
from hanna_stats.store import InputError, ingest, open_store
from hanna_stats.store.wmt_ratings import mqm_score, mqm_weight

LP = "zh-en"
SOURCES = ["一", "二", "三", "四"]
DOCS = ["news d1", "news d1", "news d2", "news d2"]
REF = ["one", "two", "three", "four"]
OUTPUTS = {
    "sysA": ["one.", "too", "three", "for"],
    "sysB": ["1", "2", "3", "4"],
    "synthetic_ref": ["one", "two", "three", "four"],
    "refA": REF,
}


def _e(severity, category, start=0, end=1):
    return {"start": start, "end": end, "category": category, "severity": severity, "score": 9.0}


# (rating or None, rater or None: the line has no rater field) per system and segment
RATINGS = {
    "sysA": [
        ({"errors": []}, "rater1"),
        ({"errors": [_e("major", "accuracy/mistranslation"), _e("minor", "fluency/punctuation")]},
         "rater1"),
        ({"errors": [_e("Major", "Non-translation!")]}, "rater2"),
        (None, None),
    ],
    "sysB": [
        ({"errors": [_e("minor", "fluency/punctuation")] * 3}, "rater2"),
        ({"errors": [_e("minor", "style/unnatural or awkward"), _e("neutral", "other")]}, None),
        ({"errors": [_e("Minor", "Fluency/Spelling"), _e("major", None)]}, "rater3"),
        ({"errors": [_e("no-error", "no-error")], "extra": 1}, "rater1"),
    ],
    "synthetic_ref": [({"errors": [_e("major", "accuracy/omission")]}, "rater1")] * 4,
    "refA": [({"errors": []}, "rater1")] * 4,
}  # fmt: skip
# MTME's converter on the same ratings (see the module docstring), per system and segment
MTME_MQM = {
    "sysA": [-0.0, -5.1, -25.0, None],
    "sysB": [-0.30000000000000004, -1.0, -6.0, -0.0],
    "synthetic_ref": [-5.0, -5.0, -5.0, -5.0],
    "refA": [-0.0, -0.0, -0.0, -0.0],
}
MQM = {"sysA": [-1.0, -2.0, -3.0, -4.0], "sysB": [0.0, -1.5, None, -2.0],
       "synthetic_ref": [-9.0] * 4, "refA": [0.0] * 4}  # fmt: skip
BLEU = {"sysA": [10.0, 20.0, 30.0, 40.0], "sysB": [1.0, 2.0, 3.0, 4.5],
        "synthetic_ref": [99.0] * 4}  # fmt: skip


def _write(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def _rating_line(system, rating, rater):
    line = f"{system}\t{'None' if rating is None else json.dumps(rating)}"
    return line if rater is None else f"{line}\t{rater}"


def make_rated_test_set(root):
    """Write the test set of the module docstring under ``root`` and return its folder."""
    ts = root / "wmt23"
    _write(ts / "sources" / f"{LP}.txt", SOURCES)
    _write(ts / "references" / f"{LP}.refA.txt", REF)
    _write(ts / "documents" / f"{LP}.docs", DOCS)
    for system, texts in OUTPUTS.items():
        _write(ts / "system-outputs" / LP / f"{system}.txt", texts)
    for system in ("sysA", "sysB"):
        _write(ts / "metadata" / LP / f"{system}.jsonl", [json.dumps({"model": system})] * 4)
    human = ts / "human-scores"
    _write(
        human / f"{LP}.mqm.merged.seg.rating",
        [_rating_line(s, r, rater) for s, rows in RATINGS.items() for r, rater in rows],
    )
    _write(human / f"{LP}.mqm.seg.rating", [_rating_line(s, None, None) for s in OUTPUTS] * 4)
    _write(human / f"{LP}.mqm.seg.score", [f"{s}\t{v}" for s, vs in MQM.items() for v in vs])
    _write(
        ts / "metric-scores" / LP / "BLEU-refA.seg.score",
        [f"{s}\t{v}" for s, vs in BLEU.items() for v in vs],
    )
    return ts


@pytest.fixture
def rated_set(tmp_path):
    return make_rated_test_set(tmp_path / "data")


def test_mqm_weights_by_hand():
    # sysA segment 1: a major mistranslation (5) and a minor punctuation error (0.1)
    assert mqm_weight("major", "accuracy/mistranslation") == 5.0
    assert mqm_weight("minor", "fluency/punctuation") == 0.1
    assert mqm_weight("MINOR", "Fluency/Punctuation/Comma") == 0.1  # most specific match
    assert mqm_weight("minor", "fluency/spelling") == 1.0
    assert mqm_weight("major", "Non-translation!") == 25.0
    assert mqm_weight("neutral", "accuracy") == mqm_weight("no-error", None) == 0.0
    assert mqm_score([("major", "accuracy/mistranslation"), ("minor", "fluency/punctuation")]) == (
        -(5.0 + 0.1)
    )
    with pytest.raises(ValueError, match="unknown severity 'critical'"):
        mqm_weight("critical", "accuracy")


def _item_values(con, measure):
    rows = con.execute(
        "SELECT system, value FROM item_scores WHERE measure = ? ORDER BY system, input_position",
        [measure],
    ).fetchall()
    values: dict[str, list] = {}
    for system, value in rows:
        values.setdefault(system, []).append(value)
    return values


def test_ratings_outliers_and_metadata(rated_set):
    con = open_store()
    (summary,) = ingest(con, rated_set, lp=LP, ref="refA")
    kept = ("sysA", "sysB")  # refA is the reference, synthetic_ref an outlier of wmt23 zh-en
    systems = con.execute("SELECT name FROM systems ORDER BY name").fetchall()
    assert systems == [(s,) for s in kept]
    measures = con.execute(
        "SELECT measure, kind, source_name FROM measure_catalogue ORDER BY position"
    ).fetchall()
    assert measures == [
        ("mqm", "human", f"human-scores/{LP}.mqm.seg.score"),
        ("mqm.merged", "human", f"human-scores/{LP}.mqm.merged.seg.rating"),
        ("BLEU-refA", "metric", f"metric-scores/{LP}/BLEU-refA.seg.score"),
    ]
    assert _item_values(con, "mqm.merged") == {s: MTME_MQM[s] for s in kept}
    assert _item_values(con, "mqm") == {s: MQM[s] for s in kept}  # the .seg.score file
    assert con.execute("SELECT count(*) FROM ratings").fetchone() == (0,)
    notes = "\n".join(summary.notes)
    assert "outlier system(s) synthetic_ref and their 12 score(s)" in notes  # 4 x 3 measures
    assert "outliers of wmt23 zh-en" in notes
    assert "measure mqm.merged: the MQM scores of human-scores/zh-en.mqm.merged.seg.rating" in notes
    assert "(7 rated segments, 4 rater(s))" in notes  # sysA 3, sysB 4; rater1-3, mqm.merged
    assert "not read: the MQM error spans of mqm (" in notes
    assert "per-translation metadata of 2 system(s)" in notes
    # the same files again are skipped
    again = ingest(con, rated_set, lp=LP, ref="refA")
    assert again[0].skipped


def test_include_outliers_keeps_them(rated_set, tmp_path):
    con = open_store()
    (summary,) = ingest(con, rated_set, lp=LP, ref="refA", include_outliers=True)
    systems = con.execute("SELECT name FROM systems ORDER BY name").fetchall()
    assert systems == [("synthetic_ref",), ("sysA",), ("sysB",)]
    assert not any("outlier" in n for n in summary.notes)
    # the command line's flag is the same option
    db = tmp_path / "s.duckdb"
    args = ["ingest", "--db", str(db), str(rated_set), "--lp", LP, "--ref", "refA"]
    assert main([*args, "--include-outliers"]) == 0
    with open_store(db, read_only=True) as cli:
        assert cli.execute("SELECT count(*) FROM systems").fetchone() == (3,)


def test_outlier_kept_in_other_pairs(rated_set):
    # wmt23 zh-en's outlier is a system like any other in a test set that does not list it
    renamed = rated_set.rename(rated_set.parent / "wmt24")
    con = open_store()
    (summary,) = ingest(con, renamed, lp=LP, ref="refA")
    systems = con.execute("SELECT name FROM systems ORDER BY name").fetchall()
    assert systems == [("synthetic_ref",), ("sysA",), ("sysB",)]
    assert not any("outlier" in n for n in summary.notes)
    assert _item_values(con, "mqm.merged")["synthetic_ref"] == MTME_MQM["synthetic_ref"]


@pytest.mark.parametrize(
    ("row", "line", "message"),
    [
        (2, 'sysA\t{"errors": [{"start": 0, "end": 1, "severity": "critical"}]}',
         "error 1: unknown severity 'critical'"),
        (2, "sysA\t{not json", "the rating is not JSON"),
        (3, 'sysA\t{"errs": []}', 'expected a rating {"errors": [...]} or None'),
        (1, 'sysA\t{"errors": [{"start": "0", "end": 1, "severity": "minor"}]}',
         "error 1: 'start' must be an integer"),
        (4, "sysA", "expected 'SYSTEM<TAB>RATING' or 'SYSTEM<TAB>RATING<TAB>RATER', got 1"),
        (2, "nosuch\tNone", "system 'nosuch' has no output file"),
    ],
)  # fmt: skip
def test_bad_ratings_name_file_and_row(rated_set, row, line, message):
    path = rated_set / "human-scores" / f"{LP}.mqm.merged.seg.rating"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[row - 1] = line
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=f"{path.name}, row {row}") as error:
        ingest(open_store(), rated_set, lp=LP, ref="refA")
    assert message in str(error.value)
    assert str(error.value).count("\n") == 0
