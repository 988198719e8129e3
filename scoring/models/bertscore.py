"""BERTScore (Zhang et al., 2020): greedy cosine matching of contextual token embeddings.

Zhang, Kishore, Wu, Weinberger and Artzi. "BERTScore: Evaluating Text Generation with BERT."
ICLR 2020. Defaults follow the paper's recommended English setting as shipped by its package
``bert-score`` 0.3.x: ``roberta-large``, layer 17, no idf, no baseline rescaling.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hanna_stats.scoring.models._embed import encode, idf_weights, tokenize, unit
from hanna_stats.scoring.models._runtime import load_checkpoint
from hanna_stats.scoring.registry import ScoringConfig, Texts, group_references, register

MODEL = "roberta-large"
LAYER = 17
#: (P, R, F) baseline of roberta-large layer 17: the mean BERTScore of random Common Crawl
#: sentence pairs (bert-score's ``rescale_baseline/en/roberta-large.tsv``, Zhang et al., Sec. 5).
ROBERTA_LARGE_L17_BASELINE = (0.83150584, 0.8314941, 0.83122575)
MEASURES = ("BERTScore Precision", "BERTScore Recall", "BERTScore F1")


def greedy_match(
    candidate: np.ndarray, reference: np.ndarray, w_candidate: np.ndarray, w_reference: np.ndarray
) -> tuple[float, float]:
    r"""Precision and recall of greedy cosine matching (Zhang et al., 2020, Eq. 1-3).

    .. math::
        P = \frac{\sum_{i} w_i \max_j \cos(\hat x_i, x_j)}{\sum_i w_i}, \qquad
        R = \frac{\sum_{j} v_j \max_i \cos(x_j, \hat x_i)}{\sum_j v_j}

    Parameters
    ----------
    candidate, reference : numpy.ndarray
        Token embeddings, shape ``(tokens, dim)``.
    w_candidate, w_reference : numpy.ndarray
        Token weights (idf, or 1; 0 for tokens that only match and are never matched, like
        ``[CLS]``). A side whose weights sum to 0 scores 0.

    Returns
    -------
    (float, float)
        Precision and recall.
    """
    sim = unit(candidate) @ unit(reference).T
    wc, wr = w_candidate.sum(), w_reference.sum()
    p = float(w_candidate @ sim.max(axis=1) / wc) if wc > 0 else 0.0
    r = float(w_reference @ sim.max(axis=0) / wr) if wr > 0 else 0.0
    return p, r


def bertscore(
    candidates: Sequence[str],
    references: Sequence[str | Sequence[str]],
    config: ScoringConfig,
    *,
    model: str = MODEL,
    layer: int = LAYER,
    idf: bool = False,
    baseline: tuple[float, float, float] | None = None,
) -> dict[str, np.ndarray]:
    r"""BERTScore precision, recall and F1 of each candidate against its reference.

    Each text is encoded by ``model``; the hidden states of ``layer`` are matched greedily by
    cosine (:func:`greedy_match`), every token a candidate for the maximum (special tokens
    included), and averaged with weights: 1, or the idf over ``references`` when ``idf``
    (:func:`hanna_stats.scoring.models._embed.idf_weights`); ``[CLS]``/``[SEP]`` (``<s>``/``</s>``)
    weigh 0.
    :math:`F = 2PR / (P + R)` (0 when :math:`P + R = 0`). With ``baseline`` :math:`b`, each score
    :math:`s` is rescaled to :math:`(s - b) / (1 - b)` (Zhang et al., 2020, Sec. 5).

    A candidate with several references is scored against each; precision, recall and F1 are
    then each the maximum over them (not necessarily from the same reference), and the idf
    counts every reference as a document, as ``bert_score.score`` with a list of references per
    candidate does.

    Agrees with ``bert_score.score`` to 1e-6 except where every cosine of a token is negative:
    bert-score pads a batch with zero vectors that enter the maximum, so it reports
    :math:`\max(0, \max_j \cos)` for texts shorter than the longest in their batch (a padding
    artefact that depends on the batch; we take the true maximum of the paper's Eq. 1-3).

    Parameters
    ----------
    candidates : sequence of str
        The texts to score.
    references : sequence of str or of sequences of str
        Each candidate's reference, or its non-empty sequence of references.
    config : ScoringConfig
        Device, batch size, checkpoint overrides (``config.models[model]``), progress.
    model : str
        Encoder checkpoint (default ``roberta-large``).
    layer : int
        Index into ``hidden_states`` (0 = embeddings); bert-score's ``num_layers``.
    idf : bool
        Weight tokens by idf over the references.
    baseline : (float, float, float) or None
        Baseline (P, R, F) of ``model`` at ``layer``; e.g. :data:`ROBERTA_LARGE_L17_BASELINE`.

    Returns
    -------
    dict
        ``{"BERTScore Precision", "BERTScore Recall", "BERTScore F1"}`` -> float64 arrays.
    """
    refs, offsets, item = group_references(references)
    if offsets.size - 1 != len(candidates):
        raise ValueError("bertscore: one reference or a non-empty sequence per candidate")
    tokenizer, encoder = load_checkpoint(model, config, "encoder")
    special = {tokenizer.cls_token_id, tokenizer.sep_token_id} - {None}
    both = encode([*candidates, *refs], model, config, [layer], "BERTScore")
    cand, ref = both[: len(candidates)], both[len(candidates) :]
    weigh = idf_weights(tokenize(refs, tokenizer, encoder)) if idf else None

    def weights(ids: np.ndarray) -> np.ndarray:
        w = weigh(ids) if weigh is not None else np.ones(len(ids))
        return np.where(np.isin(ids, list(special)), 0.0, w)

    pr = np.array(
        [
            greedy_match(cand[i].hidden[0], r.hidden[0], weights(cand[i].ids), weights(r.ids))
            for i, r in zip(item.tolist(), ref, strict=True)
        ]
    ).reshape(-1, 2)
    p, r = pr[:, 0], pr[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    scores = np.stack([p, r, f])
    scores = np.maximum.reduceat(scores, offsets[:-1], axis=1)  # each measure's best reference
    if baseline is not None:
        b = np.asarray(baseline, dtype=np.float64)[:, None]
        scores = (scores - b) / (1 - b)
    return dict(zip(MEASURES, scores, strict=True))


@register(
    "bertscore",
    MEASURES,
    family="embedding",
    reference=True,
    requires=("torch", "transformers"),
    multi_reference="bert_score: max over references of P, R and F1 each",
)
def score_bertscore(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """BERTScore of each candidate against the human reference story (see :func:`bertscore`),
    with the paper's defaults: ``roberta-large`` layer 17, no idf, no rescaling.

    With several references per item, as ``bert_score.score`` with a list of references per
    candidate: the candidate is scored against each, and precision, recall and F1 are each the
    maximum over the references (see :func:`bertscore`)."""
    return bertscore(texts.candidates, texts.reference_sets, config)
