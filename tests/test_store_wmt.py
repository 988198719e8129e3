"""WMT test sets in MTME's folder layout (google-research/mt-metrics-eval), written into tmp_path.

The expected values come from the files themselves, parsed here in plain Python, and from
scipy.stats.kendalltau on vectors built from them.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from hanna_stats.analyses import correlate
from hanna_stats.analyses._common import LEVELS
from hanna_stats.cli import main
from hanna_stats.store import InputError, ingest_wmt, load_study, open_store

LPS = ("en-de", "de-en")
N_SEGMENTS = 4
MT_SYSTEMS = ("sysA", "sysB", "sysC")
SYSTEMS = (*MT_SYSTEMS, "refA")
NO_TRANSLATION = "[No translation supplied]"  # MTME's marker of a missing output
TABLES = ["systems", "inputs", "items", "measures", "scores", "ingests", "study"]


def _write(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def _score_lines(rng, systems, *, scale, none_at=None):
    """'SYS<TAB>SCORE' lines: one block per system, one score per segment; None at none_at."""
    lines = []
    for system in systems:
        for i in range(N_SEGMENTS):
            if (system, i) == none_at:
                lines.append(f"{system}\tNone")
            else:
                lines.append(f"{system}\t{scale * rng.random():.4f}")
    return lines


def make_test_set(root, seed=0):
    """Two language pairs, 4 segments, 3 systems + refA (human), seg-level MQM with a None, two
    metrics (BLEU-refA without refA's lines, CometKiwi-src with them), plus files not read
    (documents, system-level scores)."""
    rng = np.random.default_rng(seed)
    for lp in LPS:
        src = [f"{lp} source {i} ü" for i in range(N_SEGMENTS)]
        ref = [f"{lp} reference {i}" for i in range(N_SEGMENTS)]
        _write(root / "sources" / f"{lp}.txt", src)
        _write(root / "references" / f"{lp}.refA.txt", ref)
        _write(root / "documents" / f"{lp}.docs", [f"news doc{i // 2}" for i in range(N_SEGMENTS)])
        for system in MT_SYSTEMS:
            outputs = [f"{lp} {system} output {i}" for i in range(N_SEGMENTS)]
            if system == "sysC":
                outputs[1] = NO_TRANSLATION
            _write(root / "system-outputs" / lp / f"{system}.txt", outputs)
        _write(root / "system-outputs" / lp / "refA.txt", ref)
        human = root / "human-scores"
        _write(
            human / f"{lp}.mqm.seg.score",
            _score_lines(rng, SYSTEMS, scale=-25, none_at=("sysB", 2)),
        )
        _write(human / f"{lp}.mqm.sys.score", [f"{s}\t-3.5" for s in SYSTEMS])
        metrics = root / "metric-scores" / lp
        _write(metrics / "BLEU-refA.seg.score", _score_lines(rng, MT_SYSTEMS, scale=100))
        _write(metrics / "CometKiwi-src.seg.score", _score_lines(rng, SYSTEMS, scale=1))
        _write(metrics / "BLEU-refA.sys.score", [f"{s}\t30.0" for s in MT_SYSTEMS])
    return root


def read_scores(path) -> dict[tuple[int, str], float | None]:
    """(segment, system) -> score of an MTME .seg.score file, by plain Python."""
    out, count = {}, {}
    for line in path.read_text(encoding="utf-8").splitlines():
        system, text = line.split("\t")
        i = count.get(system, 0)
        count[system] = i + 1
        out[(i, system)] = None if text == "None" else float(text)
    return out


def expected_values(root, lp):
    """measure -> {(segment, system): value}, from the files."""
    return {
        "mqm": read_scores(root / "human-scores" / f"{lp}.mqm.seg.score"),
        "BLEU-refA": read_scores(root / "metric-scores" / lp / "BLEU-refA.seg.score"),
        "CometKiwi-src": read_scores(root / "metric-scores" / lp / "CometKiwi-src.seg.score"),
    }


def counts(con) -> dict[str, int]:
    return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES}


@pytest.fixture
def test_set(tmp_path):
    return make_test_set(tmp_path / "wmt23")


def test_ingest_values_and_mapping(test_set):
    con = open_store()
    summary = ingest_wmt(con, test_set, lp="en-de")
    assert (summary.format, summary.source, summary.skipped) == ("wmt", "wmt23 en-de", False)
    assert summary.n_values == 4 * 4 + 3 * 4 + 4 * 4
    assert summary.added == {"systems": 4, "inputs": 4, "items": 16, "measures": 3, "values": 44}
    assert con.execute("SELECT name FROM study").fetchall() == [("wmt23 en-de",)]

    humans = con.execute("SELECT name FROM systems WHERE is_human ORDER BY name").fetchall()
    assert humans == [("refA",)]
    src = (test_set / "sources" / "en-de.txt").read_text(encoding="utf-8").splitlines()
    inputs = con.execute("SELECT name, position, text FROM inputs ORDER BY position").fetchall()
    assert inputs == [(f"en-de:{i}", i, src[i]) for i in range(N_SEGMENTS)]
    ref = (test_set / "references" / "en-de.refA.txt").read_text(encoding="utf-8").splitlines()
    items = con.execute(
        """SELECT it.name, inp.name, sy.name, it.text, it.reference FROM items it
           JOIN inputs inp USING (input_id) JOIN systems sy USING (system_id) ORDER BY it.name"""
    ).fetchall()
    expected_items = []
    for system in SYSTEMS:
        out = (test_set / "system-outputs" / "en-de" / f"{system}.txt").read_text().splitlines()
        out = [None if line == NO_TRANSLATION else line for line in out]
        expected_items += [
            (f"en-de:{i}:{system}", f"en-de:{i}", system, out[i], ref[i]) for i in range(N_SEGMENTS)
        ]
    assert items == sorted(expected_items)
    assert sum(text is None for _, _, _, text, _ in items) == 1  # sysC's missing output

    catalogue = con.execute(
        "SELECT measure, kind, reference_based, scale, scale_min, scale_max, source_name "
        "FROM measure_catalogue ORDER BY position"
    ).fetchall()
    assert catalogue == [
        ("mqm", "human", None, "continuous", None, None, "human-scores/en-de.mqm.seg.score"),
        (
            "BLEU-refA",
            "metric",
            True,
            "continuous",
            None,
            None,
            "metric-scores/en-de/BLEU-refA.seg.score",
        ),
        (
            "CometKiwi-src",
            "metric",
            False,
            "continuous",
            None,
            None,
            "metric-scores/en-de/CometKiwi-src.seg.score",
        ),
    ]

    stored = con.execute(
        "SELECT measure, item, value FROM story_scores ORDER BY measure, item"
    ).fetchall()
    expected = [
        (measure, f"en-de:{i}:{system}", value)
        for measure, values in expected_values(test_set, "en-de").items()
        for (i, system), value in values.items()
    ]
    assert stored == sorted(expected, key=lambda r: (r[0], r[1]))
    assert sum(v is None for _, _, v in stored) == 1  # MQM's None is stored as missing


def _system_means(values, systems):
    means = []
    for system in systems:
        vals = [v for (_, s), v in values.items() if s == system and v is not None]
        means.append(sum(vals) / len(vals))
    return means


def test_correlate_matches_scipy(test_set):
    con = open_store()
    ingest_wmt(con, test_set, lp="de-en")
    study = load_study(con)
    values = expected_values(test_set, "de-en")
    human = values["mqm"]
    item_level, system_level, global_level = LEVELS
    for metric in ("BLEU-refA", "CometKiwi-src"):
        m = values[metric]
        # system level: means over segments (MQM's None left out), refA excluded
        expected_system = stats.kendalltau(
            _system_means(m, MT_SYSTEMS), _system_means(human, MT_SYSTEMS)
        ).statistic
        # global: every (segment, MT system) pair with both values
        keys = [(i, s) for i in range(N_SEGMENTS) for s in MT_SYSTEMS if human[(i, s)] is not None]
        expected_global = stats.kendalltau([m[k] for k in keys], [human[k] for k in keys]).statistic
        # item level: per segment across the MT systems, averaged over the segments
        per_segment = []
        for i in range(N_SEGMENTS):
            ss = [s for s in MT_SYSTEMS if human[(i, s)] is not None]
            per_segment.append(
                stats.kendalltau([m[(i, s)] for s in ss], [human[(i, s)] for s in ss]).statistic
            )
        expected_item = float(np.mean(per_segment))
        for level, expected in (
            (system_level, expected_system),
            (global_level, expected_global),
            (item_level, expected_item),
        ):
            df = correlate(study, level=level, method="kendall")
            row = df.filter((df["measure"] == metric) & (df["against"] == "mqm"))
            assert row.height == 1
            assert math.isclose(row["statistic"][0], expected, abs_tol=1e-12), (level, metric)


def test_rerun_is_idempotent(test_set):
    con = open_store()
    ingest_wmt(con, test_set, lp="en-de")
    before = counts(con)
    again = ingest_wmt(con, test_set, lp="en-de")
    assert again.skipped and counts(con) == before
    # another pair is another study: refused unless extended, then added beside the first
    with pytest.raises(InputError, match="another study"):
        ingest_wmt(con, test_set, lp="de-en")
    assert counts(con) == before
    ingest_wmt(con, test_set, lp="de-en", extend=True)
    assert counts(con)["inputs"] == 2 * N_SEGMENTS
    # a changed file is a new ingest: refused without --replace, nothing written
    path = test_set / "metric-scores" / "en-de" / "BLEU-refA.seg.score"
    path.write_text(path.read_text().replace("sysA\t", "sysA\t1", 1))
    before = counts(con)
    with pytest.raises(InputError, match="would replace 1 value"):
        ingest_wmt(con, test_set, lp="en-de")
    assert counts(con) == before


def _break(root, relative, old, new):
    path = root / relative
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            ("human-scores/en-de.mqm.seg.score", "sysC\t", "sysC\tabc\nsysC\t"),
            r"^en-de\.mqm\.seg\.score, row 9, column 'score': expected a finite number or None, "
            r"got 'abc'$",
        ),
        (
            ("human-scores/en-de.mqm.seg.score", "sysC\t", "sysC\tinf\nsysC\t"),
            r"^en-de\.mqm\.seg\.score, row 9, column 'score': expected a finite number",
        ),
        (
            ("metric-scores/en-de/BLEU-refA.seg.score", "sysB\t", "sysB\t1.0\nsysB\t"),
            r"^BLEU-refA\.seg\.score, row 9: system 'sysB' has more than 4 scores "
            r"\(one per line of en-de\.txt\)$",
        ),
        (
            ("metric-scores/en-de/BLEU-refA.seg.score", "sysC\t", "sysX\t"),
            r"^BLEU-refA\.seg\.score, row 9, column 'system': system 'sysX' has no output file "
            r"system-outputs/en-de/sysX\.txt$",
        ),
        (
            ("metric-scores/en-de/CometKiwi-src.seg.score", "\nsysA\t", "\nsysA\t1\t"),
            r"^CometKiwi-src\.seg\.score, row 2: expected 'SYSTEM SCORE', got 3 fields$",
        ),
        (
            ("system-outputs/en-de/sysB.txt", "output 3\n", "output 3\nextra\n"),
            r"^sysB\.txt: has 5 lines, expected 4 \(one per line of en-de\.txt\)$",
        ),
    ],
)
def test_bad_file_names_file_and_line(test_set, edit, message):
    _break(test_set, *edit)
    con = open_store()
    empty = counts(con)
    with pytest.raises(InputError, match=message):
        ingest_wmt(con, test_set, lp="en-de")
    assert counts(con) == empty


def test_too_few_scores_names_the_system(test_set):
    path = test_set / "human-scores" / "en-de.mqm.seg.score"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:4] + lines[5:]) + "\n")  # drop sysB's first score
    with pytest.raises(InputError, match=r"row 7: system 'sysB' has 3 scores, expected 4"):
        ingest_wmt(open_store(), test_set, lp="en-de")


def test_language_pair_and_reference_choice(test_set):
    con = open_store()
    with pytest.raises(InputError, match=r"^wmt23: 2 language pairs \(de-en, en-de\): choose one"):
        ingest_wmt(con, test_set)
    with pytest.raises(InputError, match=r"^wmt23: no language pair 'fr-de'; found: de-en, en-de"):
        ingest_wmt(con, test_set, lp="fr-de")
    _write(test_set / "references" / "en-de.refB.txt", [f"b {i}" for i in range(N_SEGMENTS)])
    with pytest.raises(InputError, match=r"2 references \(refA, refB\): choose one with --ref"):
        ingest_wmt(con, test_set, lp="en-de")
    assert counts(con)["ingests"] == 0
    ingest_wmt(con, test_set, lp="en-de", ref="refB")
    refs = con.execute("SELECT DISTINCT reference FROM items ORDER BY 1").fetchall()
    assert refs == [(f"b {i}",) for i in range(N_SEGMENTS)]


def _remove(folder):
    for path in sorted(folder.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    folder.rmdir()


def test_missing_folder(test_set):
    _remove(test_set / "system-outputs" / "en-de")
    with pytest.raises(
        InputError, match=r"^wmt23: no system output files system-outputs/en-de/SYS\.txt$"
    ):
        ingest_wmt(open_store(), test_set, lp="en-de")
    _remove(test_set / "metric-scores")
    with pytest.raises(InputError, match=r"^wmt23: no folder metric-scores/"):
        ingest_wmt(open_store(), test_set, lp="en-de")


def test_cli(test_set, tmp_path, capsys):
    db = tmp_path / "wmt.duckdb"
    assert main(["ingest", "--db", str(db), str(test_set), "--lp", "en-de"]) == 0
    assert "wmt23 en-de: wmt, 44 values" in capsys.readouterr().out
    assert main(["correlate", "--db", str(db), "--level", "system", "--format", "csv"]) == 0
    assert "BLEU-refA,mqm,system" in capsys.readouterr().out

    _break(test_set, "human-scores/de-en.mqm.seg.score", "sysA\t", "sysA\tx")
    db2 = tmp_path / "bad.duckdb"
    assert main(["ingest", "--db", str(db2), str(test_set), "--lp", "de-en"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: de-en.mqm.seg.score, row 1, column 'score'")
    con = open_store(db2, read_only=True)
    assert counts(con)["ingests"] == 0
    con.close()
