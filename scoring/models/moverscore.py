"""MoverScore (Zhao et al., 2019): earth mover's distance between contextual token embeddings.

Zhao, Peyrard, Liu, Gao, Meyer and Eger. "MoverScore: Text Generation Evaluating with
Contextualized Embeddings and Earth Mover Distance." EMNLP-IJCNLP 2019. We follow the
authors' packaged version (``moverscore_v2`` in PyPI ``moverscore`` 1.0.3, the one their README
recommends): ``distilbert-base-uncased``, last layer, unigrams, idf weights computed separately over
the references and over the candidates, subword continuations (``##...``) and punctuation dropped.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from itertools import pairwise

import numpy as np
from hanna_stats.scoring.models._embed import encode, idf_weights, tokenize, unit
from hanna_stats.scoring.models._runtime import load_checkpoint
from hanna_stats.scoring.registry import ScoringConfig, Texts, group_references, register

MODEL = "distilbert-base-uncased"
_PUNCTUATION = frozenset(string.punctuation)


def word_mover(
    reference: np.ndarray, candidate: np.ndarray, w_reference: np.ndarray, w_candidate: np.ndarray
) -> float:
    r"""One minus the earth mover's distance between two weighted clouds of unit vectors.

    .. math::
        \mathrm{MoverScore} = 1 - \min_{F \ge 0,\ F\mathbf 1 = a,\ F^\top \mathbf 1 = b}
        \sum_{ij} F_{ij} \, \lVert \hat x_i - \hat y_j \rVert_2

    with :math:`a = w^{ref} / \sum w^{ref}`, :math:`b = w^{cand} / \sum w^{cand}` and
    :math:`\hat x = x / \lVert x \rVert` (Zhao et al., 2019, Eq. 1-2, unigram case), solved
    exactly by POT's network simplex (``ot.emd2``). NaN when either side has no weight.
    """
    import ot

    a, b = w_reference.sum(), w_candidate.sum()
    if a <= 0 or b <= 0:
        return float("nan")
    x, y = unit(reference), unit(candidate)
    cost = np.sqrt(np.maximum(ot.dist(x, y, metric="sqeuclidean"), 0.0))
    return 1.0 - float(ot.emd2(w_reference / a, w_candidate / b, cost))


def moverscore(
    candidates: Sequence[str],
    references: Sequence[str | Sequence[str]],
    config: ScoringConfig,
    *,
    model: str = MODEL,
    stop_words: Sequence[str] = (),
) -> np.ndarray:
    """MoverScore of each candidate against its reference (see :func:`word_mover`).

    Token weights: the idf (:func:`hanna_stats.scoring.models._embed.idf_weights`) of the reference
    tokens
    over ``references`` and of the candidate tokens over ``candidates`` (special tokens get 0 as
    they occur everywhere); tokens in ``stop_words``, WordPiece continuations (``##...``) and
    single punctuation characters get 0. Embeddings are the last layer of ``model``.

    A candidate with several references gets the mean of its MoverScores against each, the
    reference idf counting each candidate's references together as one document, as SummEval's
    ``MoverScoreMetric.evaluate_batch`` does with lists of references (it joins them into one
    text for the idf; we join their tokens, which differs only where a joined text would be
    truncated).

    Parameters
    ----------
    candidates : sequence of str
        The texts to score.
    references : sequence of str or of sequences of str
        Each candidate's reference, or its non-empty sequence of references.
    config : ScoringConfig
        Device, batch size, checkpoint overrides (``config.models[model]``), progress.
    model : str
        Encoder checkpoint (default ``distilbert-base-uncased``).
    stop_words : sequence of str
        Tokens to drop (the package's default is none).

    Returns
    -------
    numpy.ndarray
        float64 scores; 1 for identical texts.
    """
    flat, offsets, item = group_references(references)
    if offsets.size - 1 != len(candidates):
        raise ValueError("moverscore: one reference or a non-empty sequence per candidate")
    tokenizer, encoder = load_checkpoint(model, config, "encoder")
    both = encode([*flat, *candidates], model, config, [-1], "MoverScore")
    refs, cands = both[: len(flat)], both[len(flat) :]
    ref_ids = tokenize(flat, tokenizer, encoder)
    idf_ref = idf_weights([[i for ids in ref_ids[a:b] for i in ids] for a, b in pairwise(offsets)])
    idf_cand = idf_weights(tokenize(candidates, tokenizer, encoder))
    dropped = set(stop_words) | _PUNCTUATION

    def weights(tokens: tuple[str, ...], w: np.ndarray) -> np.ndarray:
        keep = [t not in dropped and not t.startswith("##") for t in tokens]
        return np.where(keep, w, 0.0)

    pairs = np.array(
        [
            word_mover(
                r.hidden[0],
                cands[i].hidden[0],
                weights(r.tokens, idf_ref(r.ids)),
                weights(cands[i].tokens, idf_cand(cands[i].ids)),
            )
            for r, i in zip(refs, item.tolist(), strict=True)
        ]
    )
    return np.add.reduceat(pairs, offsets[:-1]) / np.diff(offsets)


@register(
    "moverscore",
    ["MoverScore"],
    family="embedding",
    reference=True,
    requires=("torch", "transformers", "ot"),
    multi_reference="SummEval: mean over references",
)
def score_moverscore(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """MoverScore of each candidate against the human reference (see :func:`moverscore`;
    several references: the mean over them)."""
    return {"MoverScore": moverscore(texts.candidates, texts.reference_sets, config)}
