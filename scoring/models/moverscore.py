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

import numpy as np

from scoring.models._embed import encode, idf_weights, tokenize, unit
from scoring.models._runtime import load_checkpoint
from scoring.registry import ScoringConfig, Texts, register

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
    references: Sequence[str],
    config: ScoringConfig,
    *,
    model: str = MODEL,
    stop_words: Sequence[str] = (),
) -> np.ndarray:
    """MoverScore of each candidate against its reference (see :func:`word_mover`).

    Token weights: the idf (:func:`scoring.models._embed.idf_weights`) of the reference tokens
    over ``references`` and of the candidate tokens over ``candidates`` (special tokens get 0 as
    they occur everywhere); tokens in ``stop_words``, WordPiece continuations (``##...``) and
    single punctuation characters get 0. Embeddings are the last layer of ``model``.

    Parameters
    ----------
    candidates, references : sequence of str
        Aligned texts.
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
    tokenizer, encoder = load_checkpoint(model, config, "encoder")
    both = encode([*references, *candidates], model, config, [-1], "MoverScore")
    refs, cands = both[: len(references)], both[len(references) :]
    idf_ref = idf_weights(tokenize(references, tokenizer, encoder))
    idf_cand = idf_weights(tokenize(candidates, tokenizer, encoder))
    dropped = set(stop_words) | _PUNCTUATION

    def weights(tokens: tuple[str, ...], w: np.ndarray) -> np.ndarray:
        keep = [t not in dropped and not t.startswith("##") for t in tokens]
        return np.where(keep, w, 0.0)

    return np.array(
        [
            word_mover(
                r.hidden[0],
                c.hidden[0],
                weights(r.tokens, idf_ref(r.ids)),
                weights(c.tokens, idf_cand(c.ids)),
            )
            for r, c in zip(refs, cands, strict=True)
        ]
    )


@register(
    "moverscore",
    ["MoverScore"],
    family="embedding",
    reference=True,
    requires=("torch", "transformers", "ot"),
)
def score_moverscore(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """MoverScore of each candidate against the human reference (see :func:`moverscore`)."""
    return {"MoverScore": moverscore(texts.candidates, texts.references, config)}
