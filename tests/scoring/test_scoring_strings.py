"""String metrics: exact reproduction of HANNA's Human row, agreement with the reference code."""

from __future__ import annotations

import json
import re
from collections import Counter

import numpy as np
import polars as pl
import pytest
from hanna_stats.scoring.registry import ScoringConfig, Texts
from hanna_stats.scoring.strings._tokens import DISTINCT, MATCHES, NOVEL, REPEATED, ngram_stats
from hanna_stats.scoring.strings.cider import cider
from hanna_stats.scoring.strings.datastats import MEASURES as DATASTATS
from hanna_stats.scoring.strings.datastats import data_stats, fragment_sums
from hanna_stats.scoring.strings.rouge import rouge
from hanna_stats.scoring.strings.sacre import bleu, chrf, tokenize_13a
from hypothesis import given, settings
from hypothesis import strategies as st

COMPAT = ScoringConfig(hanna_compat=True, progress=False)
CLEAN = ScoringConfig(progress=False)
WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "Cat", "The", "big", "red"]


@pytest.fixture(scope="module")
def human(hanna_dir):
    """Texts of the 96 Human stories and the published Human row (file's prompt order)."""
    stories = pl.read_csv(hanna_dir / "hanna_llm_stories.csv").head(96)
    published = pl.read_csv(hanna_dir / "hanna_metric_scores.csv").row(0, named=True)
    assert published["Model"] == "Human"
    values = {
        h.rsplit(" ", 1)[0]: np.array(json.loads(v), float)
        for h, v in published.items()
        if h != "Model"
    }
    humans = stories["Human"].to_list()
    return Texts.of(stories["Prompt"].to_list(), humans, humans), values


def test_data_stats_reproduce_human_row_bit_exactly(human):
    # The published values are the oracle; hanna_compat adds HANNA's trailing newline token.
    texts, published = human
    ours = data_stats(texts, COMPAT)
    for m in DATASTATS:
        np.testing.assert_array_equal(ours[m], published[m], err_msg=m)
    # Without the newline token every story is one token shorter: the clean mode differs.
    assert np.array_equal(data_stats(texts, CLEAN)["Text length"], published["Text length"] - 1)


def test_rouge_w_reproduces_human_row_at_file_precision(human):
    # The file holds ROUGE-1.5.5's 5-decimal output; identical texts give R = T^-0.2 there.
    texts, published = human
    ours = rouge(texts, COMPAT)
    for part in ("Recall", "Precision", "F-Score"):
        np.testing.assert_array_equal(ours[f"ROUGE-W-1.2 {part}"], published[f"ROUGE-W-1.2 {part}"])
    for name in ("ROUGE-1", "ROUGE-4", "ROUGE-L", "ROUGE-S*", "ROUGE-SU*"):
        np.testing.assert_array_equal(ours[f"{name} F-Score"], published[f"{name} F-Score"])
    # The clean mode weights the reference length once: identical texts get recall 1.
    np.testing.assert_allclose(rouge(texts, CLEAN)["ROUGE-W-1.2 Recall"], 1.0, rtol=1e-12)


def test_bleu_chrf_cider_identity_values_of_human_row(human):
    texts, published = human
    few = Texts.of(texts.prompts[:8], texts.references[:8], texts.candidates[:8])
    # sacrebleu 2.6 gives 100.00000000000004 (exp(log 100)) where the file holds 100.0: the
    # same value up to the last bit of the float.
    np.testing.assert_allclose(bleu(few, COMPAT)["BLEU"], published["BLEU"][:8], rtol=1e-15)
    np.testing.assert_allclose(chrf(few, COMPAT)["chrF"], published["chrF"][:8], rtol=1e-15)
    np.testing.assert_allclose(cider(texts, COMPAT)["CIDEr"], published["CIDEr"], rtol=1e-12)


def test_fragments_hand_worked():
    # story  a b c x a b   against prompt  a b c a b: the first run "a b c" (3), then x (no
    # match), then "a b" (2): coverage sum 5, density sum 9 + 4 = 13.
    story = np.array([0, 1, 2, 9, 0, 1])
    prompt = np.array([0, 1, 2, 0, 1])
    assert fragment_sums(story, prompt) == (5, 13)
    texts = Texts.of(["The cat sat"], [""], ["the cat the cat"])
    out = data_stats(texts, CLEAN)
    # tokens: the cat the cat (4); fragments "the cat" twice (lowercased): coverage 4/4,
    # density (4 + 4)/4; compression 3/4; distinct unigrams {the, cat}, both repeated, and
    # both in the prompt up to case: "the" != "The", so Novelty-1 = 1/2.
    assert out["Coverage"][0] == 1.0 and out["Density"][0] == 2.0
    assert out["Compression"][0] == 0.75 and out["Text length"][0] == 4
    assert out["Novelty-1"][0] == 0.5 and out["Repetition-1"][0] == 1.0
    assert out["Repetition-2"][0] == 0.5  # "the cat" twice, "cat the" once
    empty = data_stats(Texts.of(["p"], [""], [""]), CLEAN)
    assert empty["Coverage"][0] == 0 and np.isnan(empty["Novelty-1"][0])


sentences = st.lists(st.sampled_from(WORDS), min_size=0, max_size=25).map(" ".join)
# pycocoevalcap fails (max() of no document frequencies) when no reference has a word.
references = st.lists(st.sampled_from(WORDS), min_size=1, max_size=25).map(" ".join)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(references, sentences), min_size=2, max_size=6))
def test_cider_agrees_with_pycocoevalcap(pairs):
    from pycocoevalcap.cider.cider_scorer import CiderScorer

    refs = [r for r, _ in pairs]
    cands = [c for _, c in pairs]
    scorer = CiderScorer(n=4, sigma=6.0)
    for c, r in zip(cands, refs, strict=True):
        scorer += (" ".join(re.findall(r"\w+", c)), [" ".join(re.findall(r"\w+", r))])
    _, expected = scorer.compute_score()
    ours = cider(Texts.of([""] * len(refs), refs, cands), CLEAN)["CIDEr"]
    np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=1e-300)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.tuples(sentences, sentences), min_size=1, max_size=5))
def test_bleu_chrf_are_summeval_calls(pairs):
    import sacrebleu

    refs = [r for r, _ in pairs]
    cands = [c for _, c in pairs]
    texts = Texts.of([""] * len(refs), refs, cands)
    # SummEval's BleuMetric/ChrfppMetric.evaluate_example, called the usual way.
    expected_bleu = [
        sacrebleu.sentence_bleu(c, [r]).score for c, r in zip(cands, refs, strict=True)
    ]
    expected_chrf = [
        sacrebleu.sentence_chrf(c, [r], char_order=6, word_order=0, beta=2).score
        for c, r in zip(cands, refs, strict=True)
    ]
    np.testing.assert_array_equal(bleu(texts, CLEAN)["BLEU"], expected_bleu)
    np.testing.assert_array_equal(chrf(texts, CLEAN)["chrF"], expected_chrf)


def _sacrebleu_scores(refs: list[str], cands: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """SummEval's BleuMetric/ChrfppMetric.evaluate_example calls, item by item."""
    import sacrebleu

    pairs = list(zip(cands, refs, strict=True))
    return (
        np.array([sacrebleu.sentence_bleu(c, [r]).score for c, r in pairs]),
        np.array(
            [
                sacrebleu.sentence_chrf(c, [r], char_order=6, word_order=0, beta=2).score
                for c, r in pairs
            ]
        ),
    )


# Characters that exercise the 13a tokenizer (punctuation classes, digits around . , -, the
# entities and <skipped> it rewrites, newlines) and chrF's whitespace removal (Unicode spaces,
# \x1c-\x1f, \u2028) and code points (accents, CJK, astral planes).
PIECES = [
    *"ab c.,-09\n\t&;<>'\"()[]{}|~@/",
    "&amp;", "&quot;", "&lt;", "<skipped>", "-\n", " . ", "1,000.5", "x-ray",
    "é", "日本", "\u00a0", "\x1c", "\u2028", "\U0001d518", "the", "cat", "sat",
]  # fmt: skip
texts_13a = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(texts_13a | st.text(max_size=30), texts_13a), min_size=1, max_size=8))
def test_bleu_chrf_equal_sacrebleu_on_awkward_texts(pairs):
    refs = [r for r, _ in pairs]
    cands = [c for _, c in pairs]
    expected_bleu, expected_chrf = _sacrebleu_scores(refs, cands)
    texts = Texts.of([""] * len(refs), refs, cands)
    # Our statistics are combined with sacrebleu's own float operations: equal to the bit.
    np.testing.assert_array_equal(bleu(texts, CLEAN)["BLEU"], expected_bleu)
    np.testing.assert_array_equal(chrf(texts, CLEAN)["chrF"], expected_chrf)


def test_bleu_chrf_equal_sacrebleu_on_fixed_corpus(hanna_dir):
    # 40 LLM stories against their human reference (long texts: every smoothing branch is
    # unused there), plus the edge cases: empty texts, whitespace only, texts shorter than
    # the orders (1-3 tokens / characters), identical texts, no overlap, and a repeated
    # reference (each distinct text is tokenised once).
    stories = pl.read_csv(hanna_dir / "hanna_llm_stories.csv").head(40)
    refs = [*stories["Human"].to_list(), "", "a", "", "  \n ", "the cat", "a b c d e", "x"]
    cands = [*stories["Story"].to_list(), "", "", "a", "a", "the cat", "f g h i j", "x y"]
    refs += [refs[0]] * 3
    cands += ["", refs[0], cands[1]]
    expected_bleu, expected_chrf = _sacrebleu_scores(refs, cands)
    texts = Texts.of([""] * len(refs), refs, cands)
    np.testing.assert_array_equal(bleu(texts, COMPAT)["BLEU"], expected_bleu)
    np.testing.assert_array_equal(chrf(texts, COMPAT)["chrF"], expected_chrf)


def test_tokenize_13a_hand_worked():
    # mteval-v13a: punctuation split off, period/comma kept between digits, dash split after a
    # digit only, entities decoded, <skipped> dropped, "-\n" joins the line.
    text = 'He said: "1,000.5 x-ray 3-4", &amp; <skipped>left-\nover. '
    expected = ["He", "said", ":", '"', "1,000.5", "x-ray", "3", "-", "4", '"', ",", "&"]
    assert tokenize_13a(text) == [*expected, "leftover", "."]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 4), max_size=25),
    st.lists(st.integers(0, 4), max_size=25),
    st.integers(1, 6),
    st.sampled_from([1, 1_000_003, 2**40]),
)
def test_ngram_stats_match_counters(a, b, max_n, scale):
    # The definitions, with Counters over n-gram tuples (ids of any size: code points too).
    ours = ngram_stats(np.array(a, np.int64) * scale, np.array(b, np.int64) * scale, max_n)
    for k in range(1, max_n + 1):
        ca = Counter(tuple(a[i : i + k]) for i in range(len(a) - k + 1))
        cb = Counter(tuple(b[i : i + k]) for i in range(len(b) - k + 1))
        assert ours[k - 1, MATCHES] == sum((ca & cb).values())
        assert ours[k - 1, DISTINCT] == len(ca)
        assert ours[k - 1, NOVEL] == len(ca.keys() - cb.keys())
        assert ours[k - 1, REPEATED] == sum(c > 1 for c in ca.values())


@pytest.mark.slow
def test_meteor_agrees_with_pycocoevalcap(java):
    from hanna_stats.scoring.strings.meteor import meteor
    from pycocoevalcap.meteor.meteor import Meteor

    refs = ["the cat sat on the mat", "a dog ran home quickly", "it was raining all day"]
    cands = ["the cats sat on a mat", "the dog runs home", "sunny all day long"]
    expected = Meteor().compute_score(
        {i: [r] for i, r in enumerate(refs)}, {i: [c] for i, c in enumerate(cands)}
    )[1]
    ours = meteor(Texts.of([""] * 3, refs, cands), CLEAN)["METEOR"]
    np.testing.assert_allclose(ours, expected, rtol=1e-12)
