"""WMT25's released automatic scores (``../shared/data/wmt25``, never committed): ingested in one
command, counted, re-run skipped; bad lines refused naming file, line and field."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from hanna_stats.store import InputError, ingest, load_study, open_store
from hanna_stats.store.formats import detect_format

WMT25_DIR = Path(__file__).resolve().parents[3] / "shared" / "data" / "wmt25"


@pytest.fixture(scope="module")
def wmt25_store():
    if not (WMT25_DIR / "automatic_scores").is_dir():
        pytest.fail(f"WMT25 data not found in {WMT25_DIR}")
    con = open_store()
    start = time.perf_counter()
    summaries = ingest(con, WMT25_DIR)
    yield con, summaries, time.perf_counter() - start
    con.close()


def test_the_release_is_one_command(wmt25_store):
    con, (summary,), _ = wmt25_store
    assert detect_format(WMT25_DIR) == "wmt25"
    assert summary.format == "wmt25" and not summary.skipped
    # Counted by a plain json loop over the 59 files: 108,211 lines, 546,449 metric lists.
    assert summary.added == {
        "systems": 59,
        "inputs": 10_596,
        "items": 365_908,
        "measures": 6,
        "values": 1_850_124,
    }
    notes = "\n".join(summary.notes)
    assert "chrF++: no scores in 29 of 31 language pairs" in notes
    assert "20 paragraph scores null (missing): GEMBA-ESA-CMDA en-ar_EG 2;" in notes
    study = load_study(con)
    assert study.name == "wmt25" and len(study.subsets) == 31
    assert {"cs-de_DE", "en-sr_Cyrl_RS", "en-sr_Latn_RS"} <= set(study.subsets)
    pair = study.subset(subset="en-ar_EG")
    assert len(pair.systems) == 37 and pair.measures[-1] == "XCOMET-XL"
    assert ingest(con, WMT25_DIR)[0].skipped  # the same folder again: nothing written
    ((n,),) = con.execute("SELECT count(*) FROM scores").fetchall()
    assert n == 1_850_124


def _release(tmp_path: Path, files: dict[str, list]) -> Path:
    folder = tmp_path / "wmt25" / "automatic_scores"
    folder.mkdir(parents=True)
    for system, lines in files.items():
        text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines)
        (folder / f"{system}.jsonl").write_text(text + "\n")
    return folder.parent


def _line(doc="d1", scores=None, lp="en-de_DE", domain="news"):
    return {
        "language_pair": lp,
        "domain": domain,
        "document_id": doc,
        "metric_scores": scores if scores is not None else {"M": [1.0, None], "Q": [2, 3]},
    }


def test_a_small_release(tmp_path):
    root = _release(
        tmp_path,
        {"A": [_line(), _line(lp="cs-uk_UA")], "B": [_line(scores={"M": [0.5, 0.25]})]},
    )
    con = open_store()
    (summary,) = ingest(con, root)
    assert summary.added["inputs"] == 4 and summary.added["items"] == 6
    assert summary.n_values == 10
    assert "1 (system, document) lines without the metric: Q en-de_DE 1" in summary.notes[-1]
    study = load_study(con)
    assert study.subsets == ("cs-uk_UA", "en-de_DE")
    cube = study.subset(subset="en-de_DE").cube(kinds=("metric",))
    assert cube.inputs == ["en-de_DE:d1:0", "en-de_DE:d1:1"]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["{not json"], "A.jsonl, row 1: invalid JSON"),
        ([{"language_pair": "x"}], "A.jsonl, row 1, column 'domain': missing field"),
        ([_line(scores={"M": [1.0, "bad"]})], "column 'metric_scores.M[1]': expected a number"),
        ([_line(scores={"M": [1.0], "Q": [1.0, 2.0]})], "column 'metric_scores.Q': 2 scores"),
        ([_line(), _line()], "row 2, column 'document_id': document 'd1' of en-de_DE also on"),
        ([_line(scores={"M": [1e300]})], "expected a finite number of magnitude"),
    ],
)
def test_bad_lines_name_file_row_and_field(tmp_path, lines, message):
    root = _release(tmp_path, {"A": lines})
    with pytest.raises(InputError) as error:
        ingest(open_store(), root)
    assert message in str(error.value)


def test_paragraph_counts_must_agree_between_files(tmp_path):
    root = _release(tmp_path, {"A": [_line()], "B": [_line(scores={"M": [1.0]})]})
    with pytest.raises(InputError) as error:
        ingest(open_store(), root)
    assert "B.jsonl, row 1" in str(error.value)
    assert "1 paragraphs for document 'd1' of en-de_DE, but 2 in A.jsonl line 1" in str(error.value)
