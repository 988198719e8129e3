"""CIDEr as pycocoevalcap's ``CiderScorer`` computes it (CIDEr-D: clipping, length penalty)."""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
from hanna_stats.scoring.registry import ScoringConfig, Texts, register
from hanna_stats.scoring.strings._tokens import Vocabulary, distinct, ngram_codes

MAX_N = 4
SIGMA = 6.0
_WORD = re.compile(r"\w+")


def _weights(
    codes: np.ndarray, log_df: np.ndarray, log_n: float
) -> tuple[np.ndarray, np.ndarray, float]:
    """Distinct n-grams, their tf-idf weights ``tf * (log N - log max(1, df))`` and the norm."""
    grams, tf = np.unique(codes, return_counts=True)
    w = tf * (log_n - log_df[grams])
    return grams, w, float(np.sqrt(np.sum(w * w)))


@register(
    "cider",
    ("CIDEr",),
    family="string",
    reference=True,
    multi_reference="pycocoevalcap: mean over references (consensus)",
)
def cider(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """CIDEr of each candidate against its references, with pycocoevalcap's semantics.

    Tokens are SummEval's ``\\w+`` runs (case kept). For each order n = 1..4, the candidate's
    and each reference's n-gram vectors have weights ``g(x) = tf(x) (log N - log max(1, df(x)))``,
    where ``df(x)`` counts the items one of whose references contains x and N is the number of
    items scored together. Then, over the m references r of the item (one by default),

    ``CIDEr = (10 / m) sum_r mean_n [sum_x min(g_c(x), g_r(x)) g_r(x) / (|g_c| |g_r|)]
    * exp(-d_r^2 / (2 s^2))``

    with ``s = 6`` and ``d_r`` the difference of the candidate's and reference r's bigram
    counts (the ``length`` of pycocoevalcap's ``counts2vec``); a term is 0 when a norm is 0.
    The mean over references is CIDEr's consensus by design (Vedantam et al., 2015, Eq. 2-4).

    The Gaussian length penalty explains HANNA's tiny CIDEr values: stories differ from their
    reference by hundreds of tokens, so ``exp(-d^2 / 72)`` falls to denormal numbers (d = 220
    gives about 1e-292) and to 0 beyond d = 228; identical texts score 10. Because document
    frequencies are counted over the items scored together, scoring HANNA system by system or
    all 1,056 stories at once gives the same values (each reference appears once per system,
    so N and every df scale alike). ``hanna_compat`` changes nothing.

    Parameters
    ----------
    texts : Texts
        References and candidates (prompts unused); the document frequencies come from these
        references, so a single item (N = 1) gets 0 unless the texts are identical (0/0 -> 0).

    Returns
    -------
    dict
        ``{"CIDEr": float64 array}``.

    References
    ----------
    Vedantam, Zitnick and Parikh (2015), CIDEr: Consensus-based Image Description Evaluation,
    CVPR. Chen et al. (2015), Microsoft COCO Captions (pycocoevalcap). Chhun et al. (2022),
    COLING, Tab. 1.
    """
    n = len(texts)
    refs, groups, item = texts.reference_groups()  # item: that of each (reference, cand) pair
    unique, index = distinct([*refs, *texts.candidates])
    vocab = Vocabulary()
    ids = vocab.encode_all([_WORD.findall(t) for t in unique])
    codes = ngram_codes(ids, MAX_N, len(vocab))
    log_n = math.log(float(n)) if n else 0.0
    ref, cand = index[: len(refs)], index[len(refs) :][item]
    scores = np.zeros((len(refs), MAX_N))
    for order in range(MAX_N):
        grams = codes[order]
        size = 1 + max((int(g.max()) for g in grams if g.size), default=0)
        present = [np.unique(g) for g in grams]
        per_item = [
            np.unique(np.concatenate([present[t] for t in ref[a:b]]))
            for a, b in itertools.pairwise(groups.tolist())
        ]
        df = np.bincount(np.concatenate([*per_item, np.empty(0, int)]))
        log_df = np.log(np.maximum(1.0, np.pad(df, (0, size - df.size)).astype(np.float64)))
        weights = [_weights(g, log_df, log_n) for g in grams]  # per distinct text
        for i in range(len(refs)):
            gr, wr, norm_r = weights[ref[i]]
            gc, wc, norm_c = weights[cand[i]]
            _, ic, ir = np.intersect1d(gc, gr, assume_unique=True, return_indices=True)
            value = float(np.sum(np.minimum(wc[ic], wr[ir]) * wr[ir]))
            if norm_c != 0 and norm_r != 0:
                value /= norm_c * norm_r
            scores[i, order] = value
    lengths = np.array([len(t) for t in ids], dtype=np.float64)
    bigrams = np.maximum(lengths - 1, 0)
    delta = bigrams[cand] - bigrams[ref]
    penalty = np.array([math.e ** (-(d**2) / (2 * SIGMA**2)) for d in delta.tolist()])
    # pycocoevalcap's order of operations: penalise each order, add the references' terms,
    # average over orders, divide by the number of references, scale
    summed = np.zeros((n, MAX_N))
    np.add.at(summed, item, scores * penalty[:, None])
    return {"CIDEr": summed.mean(axis=1) / np.diff(groups) * 10.0}
