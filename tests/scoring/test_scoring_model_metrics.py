"""Model-based (Delta) scorers on tiny checkpoints built in the test (no download).

Expected values come from the reference implementations on the same local checkpoint
(torchmetrics' InfoLM, the authors' ``blanc`` package), from direct computations written here
independently of the scorers' batching (BARTScore, SummaQA), or from hand-worked cases.
"""

from __future__ import annotations

import importlib.util
import sys
import types

import numpy as np
import pytest
from hanna_stats.scoring.models import bartscore, blanc, infolm, s3, summaqa
from hanna_stats.scoring.models._runtime import MissingCheckpointError
from hanna_stats.scoring.registry import REGISTRY, ScoringConfig, Texts
from hypothesis import given, settings
from hypothesis import strategies as st
from tiny_models import CORPUS

pytest.importorskip("torch")
pytest.importorskip("transformers")

PROMPTS = (CORPUS[10], "Write about a dragon.", "A story about the sea.")
REFERENCES = (CORPUS[11] + " " + CORPUS[12], CORPUS[1], CORPUS[4] + " " + CORPUS[5])
CANDIDATES = (CORPUS[11], "The dragon dreamed of the sea and slept.", CORPUS[4] + " " + CORPUS[5])


def _config(**models: str) -> ScoringConfig:
    return ScoringConfig(models=models, batch_size=2, progress=False)


# --- BARTScore --------------------------------------------------------------------------------


def _direct_log_likelihood(tokenizer, model, source: str, target: str) -> float:
    """log p(y|x) averaged over y's tokens, one decoder step at a time: position t sees the
    decoder start token and y_1..y_{t-1}, no padding, no batching, no shift helper."""
    import torch

    x = tokenizer(source, return_tensors="pt")["input_ids"]
    y = tokenizer(target)["input_ids"]
    total = 0.0
    with torch.no_grad():
        for t, token in enumerate(y):
            prefix = torch.tensor([[model.config.decoder_start_token_id, *y[:t]]])
            logits = model(input_ids=x, decoder_input_ids=prefix).logits[0, -1].double()
            total += float(torch.log_softmax(logits, -1)[token])
    return total / len(y)


def test_bartscore_is_the_mean_token_log_likelihood(tiny_bart):
    config = _config(**{bartscore.CHECKPOINT: str(tiny_bart)})
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    got = bartscore.mean_log_likelihood(PROMPTS, CANDIDATES, config)
    tokenizer = AutoTokenizer.from_pretrained(tiny_bart)
    model = AutoModelForSeq2SeqLM.from_pretrained(tiny_bart).eval()
    expected = [
        _direct_log_likelihood(tokenizer, model, x, y)
        for x, y in zip(PROMPTS, CANDIDATES, strict=True)
    ]
    np.testing.assert_allclose(got, expected, rtol=1e-5)
    assert np.all(got < 0)


def test_bartscore_directions_follow_the_paper(tiny_bart):
    # Appendix B: (x, y) scores log p(y | x); SH = (Story, Human), PS = (Prompt, Story).
    config = _config(**{bartscore.CHECKPOINT: str(tiny_bart)})
    texts = Texts.of(PROMPTS, REFERENCES, CANDIDATES)
    ref = REGISTRY["bartscore"].compute(texts, config)
    free = REGISTRY["bartscore-free"].compute(texts, config)
    mll = bartscore.mean_log_likelihood
    np.testing.assert_allclose(ref["BARTScore-SH"], mll(CANDIDATES, REFERENCES, config))
    np.testing.assert_allclose(ref["BARTScore-HS"], mll(REFERENCES, CANDIDATES, config))
    np.testing.assert_allclose(free["BARTScore-PS"], mll(PROMPTS, CANDIDATES, config))
    np.testing.assert_allclose(free["BARTScore-SP"], mll(CANDIDATES, PROMPTS, config))
    # identical story and reference (item 2): SH == HS, as in HANNA's Human row
    assert ref["BARTScore-SH"][2] == pytest.approx(ref["BARTScore-HS"][2], abs=1e-6)


def test_bartscore_does_not_depend_on_batching(tiny_bart):
    scores = [
        bartscore.mean_log_likelihood(
            REFERENCES,
            CANDIDATES,
            ScoringConfig(
                models={bartscore.CHECKPOINT: str(tiny_bart)}, batch_size=size, progress=False
            ),
        )
        for size in (1, 3)
    ]
    np.testing.assert_allclose(scores[0], scores[1], rtol=1e-5)


def test_missing_checkpoint_names_it_and_the_ways_to_provide_it(tmp_path):
    config = _config(**{bartscore.CHECKPOINT: str(tmp_path / "nowhere")})
    with pytest.raises(MissingCheckpointError) as info:
        bartscore.mean_log_likelihood(("a",), ("b",), config)
    message = str(info.value)
    assert bartscore.CHECKPOINT in message and "HF_HOME" in message and "--model" in message


# --- InfoLM -----------------------------------------------------------------------------------


def test_infolm_matches_torchmetrics(tiny_bert):
    tm_infolm = pytest.importorskip("torchmetrics.functional.text.infolm").infolm
    # torchmetrics 1.9 sorts each side by length and "unsorts" with the sorting permutation
    # itself (not its inverse), and trims batches without trimming the idf vectors: give it one
    # batch of texts already in increasing length on both sides, where neither bug bites.
    references = (CORPUS[2], CORPUS[3] + " " + CORPUS[4], " ".join(CORPUS[5:8]))
    candidates = (CORPUS[2], CORPUS[3], " ".join(CORPUS[5:7]) + " " + CORPUS[8])
    for side in (references, candidates):
        assert np.all(np.diff([len(infolm_tokens(tiny_bert, s)) for s in side]) > 0)
    config = _config(**{infolm.CHECKPOINT: str(tiny_bert["mlm"])})
    got = REGISTRY["infolm"].compute(Texts.of(references, references, candidates), config)
    _, expected = tm_infolm(
        list(candidates),
        list(references),
        model_name_or_path=str(tiny_bert["mlm"]),
        temperature=0.25,
        information_measure="fisher_rao_distance",
        idf=True,
        max_length=128,
        batch_size=len(candidates),
        verbose=False,
        return_sentence_level_score=True,
    )
    # torchmetrics works in float32: agreement to float32 rounding of the distributions
    np.testing.assert_allclose(got["InfoLM-FisherRao"], expected.numpy(), atol=2e-4)
    # Fisher-Rao is symmetric: the reversed and the averaged variants are the same number
    np.testing.assert_allclose(got["InfoLM-R-FisherRao"], got["InfoLM-FisherRao"])
    np.testing.assert_allclose(got["InfoLM-Sim-FisherRao"], got["InfoLM-FisherRao"])


def infolm_tokens(tiny_bert, text: str) -> list[int]:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_bert["mlm"])(text)["input_ids"]


def test_infolm_of_identical_texts_is_zero(tiny_bert):
    # same corpus on both sides, so the same idf weights and the same distributions
    config = _config(**{infolm.CHECKPOINT: str(tiny_bert["mlm"])})
    got = REGISTRY["infolm"].compute(Texts.of(PROMPTS, REFERENCES, REFERENCES), config)
    np.testing.assert_allclose(got["InfoLM-FisherRao"], 0, atol=1e-6)


def test_idf_weights_hand_worked():
    # 3 texts: id 7 in all three -> log(4/4) = 0; id 8 in one -> log(4/2); unseen -> log(4)
    idf, unseen = infolm.idf_weights([[7, 8, 8], [7], [7, 9]])
    assert idf[7] == 0 and idf[8] == pytest.approx(np.log(2)) and unseen == pytest.approx(np.log(4))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.01, 1), min_size=2, max_size=6), st.integers(0, 10_000))
def test_fisher_rao_is_a_bounded_symmetric_distance(weights, seed):
    p = np.asarray(weights) / np.sum(weights)
    q = np.random.default_rng(seed).dirichlet(np.ones(len(p)))
    assert infolm.fisher_rao(p, q) == pytest.approx(infolm.fisher_rao(q, p))
    assert 0 <= infolm.fisher_rao(p, q) <= np.pi
    assert infolm.fisher_rao(p, p) == pytest.approx(0, abs=1e-6)


# --- BLANC ------------------------------------------------------------------------------------


def test_mask_evenly_hand_worked():
    # gap 2: offset 0 masks positions 0, 2, 4 when eligible ("the" is too short, "##der" is a
    # continuation piece); offset 1 masks 1 and 3 ("un" leads a split word: 2 characters suffice)
    tokens = ["the", "dragon", "slept", "un", "##der"]
    got = blanc.mask_evenly(tokens, "[MASK]")
    assert got == [
        (["the", "dragon", "[MASK]", "un", "##der"], {2: "slept"}),
        (["the", "[MASK]", "slept", "[MASK]", "##der"], {1: "dragon", 3: "un"}),
    ]


def test_relative_measure_hand_worked():
    # S_01 = 2 (wrong -> right), S_10 = 1 (right -> wrong), 5 masked tokens: (2 - 1) / 5
    without = np.array([False, False, True, True, False])
    with_help = np.array([True, True, False, True, False])
    assert blanc._relative(without, with_help) == pytest.approx(0.2)
    assert blanc._relative(np.empty(0, bool), np.empty(0, bool)) == 0


def _blanc_package(monkeypatch, vocab_size: int):
    """The authors' ``blanc`` 0.3.4 made importable under transformers 5, with our sentence
    split: its __init__ imports models removed from transformers (TransfoXL), so only its
    ``blanc.blanc`` module is loaded; its AdamW import is pointed at torch's (transformers 5
    removed its own); its random replacement ids are set to our range for the tiny vocabulary.
    """
    spec = importlib.util.find_spec("blanc")
    if spec is None:
        pytest.skip("blanc (pip install --no-deps blanc==0.3.4) is not installed")
    import torch

    shell = types.ModuleType("blanc")
    shell.__path__ = list(spec.submodule_search_locations)
    monkeypatch.setitem(sys.modules, "blanc", shell)
    monkeypatch.setattr(sys.modules["transformers"], "AdamW", torch.optim.AdamW, raising=False)
    monkeypatch.delitem(sys.modules, "blanc.blanc", raising=False)
    import blanc.blanc as package

    monkeypatch.setattr(package, "sent_tokenize", blanc.sentences)
    monkeypatch.setattr(package, "TOKEN_REPLACE_RANGE", blanc.replacement_range(vocab_size))
    return package


def test_blanc_help_matches_the_package(tiny_bert, monkeypatch):
    from transformers import AutoTokenizer

    path = str(tiny_bert["mlm"])
    package = _blanc_package(monkeypatch, len(AutoTokenizer.from_pretrained(path)))
    documents = (" ".join(CORPUS[:4]), " ".join(CORPUS[4:9]), CORPUS[13] + " " + CORPUS[14])
    summaries = (CORPUS[1], CORPUS[5], CORPUS[14])
    got = blanc.blanc_help(documents, summaries, _config(**{blanc.CHECKPOINT: path}))
    expected = package.BlancHelp(model_name=path, show_progress_bar=False).eval_pairs(
        list(documents), list(summaries)
    )
    np.testing.assert_array_equal(got, expected)
    assert np.any(got != 0)  # the trained tiny model is helped by (some) summaries


def test_blanc_tune_matches_the_seeded_package(tiny_bert, monkeypatch):
    from transformers import AutoTokenizer

    path = str(tiny_bert["mlm"])
    package = _blanc_package(monkeypatch, len(AutoTokenizer.from_pretrained(path)))
    # the package seeds only when random_seed > 0 (its default 0 leaves BLANC-tune unseeded)
    monkeypatch.setattr(blanc, "SEED", 3)
    documents = (" ".join(CORPUS[:4]), CORPUS[13] + " " + CORPUS[14])
    summaries = (CORPUS[1], CORPUS[14])
    got = blanc.blanc_tune(documents, summaries, _config(**{blanc.CHECKPOINT: path}))
    expected = package.BlancTune(
        model_name=path, show_progress_bar=False, random_seed=3
    ).eval_pairs(list(documents), list(summaries))
    np.testing.assert_array_equal(got, expected)
    assert np.any(got != 0)


def test_blanc_variants_use_the_papers_documents_and_summaries(tiny_bert):
    # Appendix B: PS = prompt as the summary of the story; SS = story as the summary of the
    # prompt; Golden = candidate as the summary of the reference.
    config = _config(**{blanc.CHECKPOINT: str(tiny_bert["mlm"])})
    texts = Texts.of(PROMPTS[:2], REFERENCES[:2], CANDIDATES[:2])
    free = REGISTRY["blanc-free"].compute(texts, config)
    np.testing.assert_array_equal(
        free["BLANC-Help-SS"], blanc.blanc_help(texts.prompts, texts.candidates, config)
    )
    np.testing.assert_array_equal(
        free["BLANC-Tune-PS"], blanc.blanc_tune(texts.candidates, texts.prompts, config)
    )
    golden = REGISTRY["blanc"].compute(texts, config)["BLANC-Golden"]
    np.testing.assert_array_equal(
        golden, blanc.blanc_help(texts.references, texts.candidates, config)
    )
    assert all(np.all((-1 <= v) & (v <= 1)) for v in free.values())


# --- SummaQA ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def entity_pipeline(tmp_path_factory):
    """A saved spaCy pipeline with rule-based entities (no trained NER can be downloaded)."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns(
        [
            {"label": "PERSON", "pattern": "Alice"},
            {"label": "PERSON", "pattern": "Bob"},
            {"label": "GPE", "pattern": "Paris"},
        ]
    )
    path = tmp_path_factory.mktemp("spacy") / "entities"
    nlp.to_disk(path)
    return str(path)


def test_cloze_questions_hand_worked(entity_pipeline):
    config = _config(en_core_web_sm=entity_pipeline)
    got = summaqa.cloze_questions("Alice met Bob in Paris. The dragon slept.", config)
    assert got == [
        ("MASKED met Bob in Paris.", "Alice"),
        ("Alice met MASKED in Paris.", "Bob"),
        ("Alice met Bob in MASKED.", "Paris"),
    ]


def test_squad_f1_hand_worked():
    # normalised: "the cat sat" -> "cat sat"; vs "cat": precision 1/2, recall 1 -> F1 2/3
    assert summaqa.squad_f1("The cat sat!", "cat") == pytest.approx(2 / 3)
    assert summaqa.squad_f1("a dog", "the cat") == 0


def test_summaqa_matches_a_direct_computation(tiny_bert, entity_pipeline):
    import torch
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    path = str(tiny_bert["qa"])
    config = _config(**{summaqa.CHECKPOINT: path, "en_core_web_sm": entity_pipeline})
    sources = ("Alice met Bob in Paris. The dragon slept.", "Nothing to ask.", "Bob sailed.")
    contexts = ("Bob and Alice went to Paris by ship.", "x", "Bob sailed north to Paris.")
    got = summaqa.summaqa_scores(sources, contexts, config)

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForQuestionAnswering.from_pretrained(path).eval()
    expected_prob, expected_f1 = [], []
    for source, context in zip(sources, contexts, strict=True):
        probs, f1s = [], []
        for question, answer in summaqa.cloze_questions(source, config):
            enc = tokenizer(
                question,
                context,
                max_length=384,
                padding="max_length",
                truncation=True,
                return_tensors="pt",
            )
            with torch.no_grad():
                out = model(**enc)
            in_context = enc["token_type_ids"][0].numpy() == 1
            start = torch.softmax(out.start_logits[0].double(), -1).numpy() * in_context
            end = torch.softmax(out.end_logits[0].double(), -1).numpy() * in_context
            span = enc["input_ids"][0][start.argmax() : end.argmax() + 1].tolist()
            probs.append(start.max() * end.max())
            f1s.append(summaqa.squad_f1(" ".join(tokenizer.convert_ids_to_tokens(span)), answer))
        expected_prob.append(np.mean(probs) if probs else 0.0)
        expected_f1.append(np.mean(f1s) if f1s else 0.0)
    np.testing.assert_allclose(got["prob"], expected_prob, rtol=1e-4)
    np.testing.assert_allclose(got["f1"], expected_f1)
    assert got["prob"][1] == 0  # no entity, no question


def test_summaqa_without_a_spacy_pipeline_says_how_to_provide_one(tmp_path):
    config = _config(en_core_web_sm=str(tmp_path / "missing"))
    with pytest.raises(MissingCheckpointError, match="en_core_web_sm=PATH"):
        summaqa.cloze_questions("Alice met Bob.", config)


# --- S3 ---------------------------------------------------------------------------------------


@pytest.fixture
def one_hot_vectors(tmp_path):
    """Orthogonal word vectors: ROUGE-WE then only matches identical n-grams (and permutations)."""
    words = ["the", "cat", "cats", "sat", "on", "a", "mat"]
    path = tmp_path / "vectors.txt"
    path.write_text(
        "".join(
            f"{w} {' '.join('1' if i == j else '0' for j in range(7))}\n"
            for i, w in enumerate(words)
        )
    )
    return str(path)


def test_s3_features_hand_worked(one_hot_vectors):
    # stems: cand [the cat sat on the mat], ref [the cat sat on a mat]
    # ROUGE-1 R = 5/6; ROUGE-2 R = 3/5 (the cat, cat sat, sat on of 5 reference bigrams)
    # JS-1: content unigrams {cat, sat, mat} on both sides -> 0
    # JS-2: content bigrams share 3 of 4 (1/4 each); KL(p||m) = 1/4 log 2 on each side -> log2/4
    # ROUGE-WE (unstemmed): cats != cat, so 4/6 unigrams and 1/5 bigrams (only sat on)
    config = _config(**{"deps.words": one_hot_vectors})
    got = s3.features(("The cats sat on the mat",), ("The cat sat on a mat.",), config)[0]
    expected = dict(zip(s3.FEATURES, got, strict=True))
    assert expected == pytest.approx(
        {
            "JS_eval_1": 0.0,
            "JS_eval_2": np.log(2) / 4,
            "ROUGE_1_R": 5 / 6,
            "ROUGE_1_R_WE": 4 / 6,
            "ROUGE_2_R": 3 / 5,
            "ROUGE_2_R_WE": 1 / 5,
        }
    )


def test_s3_applies_user_supplied_models(tmp_path, one_hot_vectors):
    import pickle

    from sklearn.linear_model import LinearRegression

    rng = np.random.default_rng(0)
    folder = tmp_path / "models"
    folder.mkdir()
    fitted = {}
    for name in ("pyr", "resp"):
        fitted[name] = LinearRegression().fit(rng.random((20, 6)), rng.random(20))
        (folder / f"{name}_model.pkl").write_bytes(pickle.dumps(fitted[name]))
    config = _config(**{"deps.words": one_hot_vectors, "s3-models": str(folder)})
    texts = Texts.of(("p", "p"), ("The cat sat on a mat.", "A cat."), ("The cats sat.", "A cat."))
    got = REGISTRY["s3"].compute(texts, config)
    x = s3.features(texts.candidates, texts.references, config)
    np.testing.assert_allclose(got["S3-Pyramid"], fitted["pyr"].predict(x))
    np.testing.assert_allclose(got["S3-Responsiveness"], fitted["resp"].predict(x))


def test_s3_without_models_says_where_to_get_them(tmp_path):
    config = _config(**{"s3-models": str(tmp_path / "none")})
    with pytest.raises(MissingCheckpointError, match="s3-models=DIR"):
        REGISTRY["s3"].compute(Texts.of(("p",), ("r",), ("c",)), config)
