"""The ten reference-free data statistics of SummEval, story against prompt.

Coverage, Density and Compression come from Newsroom's extractive fragments (Grusky et al.,
2018); Text length, Novelty-n and Repetition-n from SummEval's ``DataStatsMetric`` (Fabbri et
al., 2021), which HANNA used with the prompt as the source text and the story as the summary
(Chhun et al., 2022, Tab. 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hanna_stats.scoring._spacy import blank_english
from hanna_stats.scoring.registry import ScoringConfig, Texts, register
from hanna_stats.scoring.strings._tokens import (
    DISTINCT,
    NOVEL,
    REPEATED,
    distinct,
    pack,
    pair_ngram_stats,
)
from numba import njit

MEASURES = (
    "Coverage",
    "Density",
    "Compression",
    "Text length",
    "Novelty-1",
    "Novelty-2",
    "Novelty-3",
    "Repetition-1",
    "Repetition-2",
    "Repetition-3",
)
MAX_ORDER = 3


def spacy_tokens(texts: Sequence[str]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Token ids of each text by spaCy's rule-based English tokenizer (``spacy.blank("en")``).

    SummEval tokenised with ``en_core_web_sm`` with the tagger, parser and NER disabled, whose
    tokenizer is the same rule-based English tokenizer; the blank pipeline needs no model
    download. Whitespace other than single spaces becomes tokens of its own (e.g. ``"\\n"``).

    Returns
    -------
    (list of ndarray, list of ndarray)
        For each text, int64 ids of its tokens as written and of its lowercased tokens; equal
        ids mean equal strings, across all ``texts`` (spaCy's 64-bit string hashes of the
        ``ORTH`` and ``LOWER`` attributes, renumbered; ``LOWER`` is ``str.lower`` of the text).
    """
    from spacy.attrs import LOWER, ORTH

    tokenizer = blank_english().tokenizer
    hashes = [doc.to_array([ORTH, LOWER]) for doc in tokenizer.pipe(texts, batch_size=256)]
    flat = np.concatenate([h.reshape(-1, 2) for h in hashes] + [np.empty((0, 2), np.uint64)])
    _, ids = np.unique(flat, return_inverse=True)
    ids = ids.reshape(-1, 2).astype(np.int64)
    parts = np.split(ids, np.cumsum([len(h) for h in hashes])[:-1])
    return [p[:, 0].copy() for p in parts], [p[:, 1].copy() for p in parts]


@njit(cache=True)
def fragment_sums(story: np.ndarray, prompt: np.ndarray) -> tuple[int, int]:
    """Sum of lengths and of squared lengths of the greedy extractive fragments.

    Newsroom's matching (Grusky et al., 2018, Alg. 1): at each story position, scan the prompt
    left to right; at each equal token follow the common run, keep the first longest run and
    resume the scan after the run. Record the longest run's length L (if any) and advance the
    story by L, else by one.

    Parameters
    ----------
    story, prompt : ndarray of int64
        Token ids (lowercased tokens).

    Returns
    -------
    (int, int)
        ``sum L`` and ``sum L**2`` over the fragments.
    """
    total = 0
    squares = 0
    a = 0
    while a < story.size:
        best = 0
        b = 0
        while b < prompt.size:
            if story[a] == prompt[b]:
                a_end, b_end = a, b
                while a_end < story.size and b_end < prompt.size and prompt[b_end] == story[a_end]:
                    a_end += 1
                    b_end += 1
                if a_end - a > best:
                    best = a_end - a
                b = b_end
            else:
                b += 1
        if best > 0:
            total += best
            squares += best * best
            a += best
        else:
            a += 1
    return total, squares


def _share(count: np.ndarray, distinct: np.ndarray) -> np.ndarray:
    """count / distinct, NaN where there is no n-gram."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(distinct > 0, count / np.maximum(distinct, 1), np.nan)


@register("datastats", MEASURES, family="string", reference=False, requires=("spacy",))
def data_stats(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """Coverage, Density, Compression, Text length, Novelty-1..3, Repetition-1..3.

    With story tokens ``S`` (length ``|S|``), prompt tokens ``P`` and the extractive fragments
    ``F`` of ``S`` in ``P`` (:func:`fragment_sums`, on lowercased tokens):

    - Coverage = sum_{f in F} |f| / |S|; Density = sum_{f in F} |f|^2 / |S|;
      Compression = |P| / |S| (all three 0 when ``|S| = 0``, as in Newsroom);
    - Text length = |S|;
    - Novelty-n = |G_n(S) - G_n(P)| / |G_n(S)|, with ``G_n`` the set of distinct n-grams
      (case-sensitive unless ``config.lowercase``);
    - Repetition-n = |{g in G_n(S) occurring more than once in S}| / |G_n(S)| (idem).

    Novelty-n and Repetition-n are NaN when the story has fewer than n tokens (SummEval omits
    them then). Tokens come from :func:`spacy_tokens`.

    Parameters
    ----------
    texts : Texts
        Prompts (the source text) and candidate stories (the summaries); references unused.
    config : ScoringConfig
        ``hanna_compat``: append one newline to both prompt and story before tokenising. HANNA
        read its texts with their line ending, so every published value counts one extra
        ``"\\n"`` token in both; with it the 96 Human stories reproduce bit-exactly.
        ``lowercase``: Novelty-n and Repetition-n on lowercased tokens, as SummEval's current
        ``DataStatsMetric`` (its default ``case=False`` lowercases the n-gram tokens too since
        commit e26bef9, "fix tokenization in data stats utils", Nov. 2022); HANNA's published
        values are case-sensitive (the default).

    Returns
    -------
    dict of str to ndarray
        One float64 array of ``len(texts)`` per measure in :data:`MEASURES`.

    References
    ----------
    Grusky, Naaman and Artzi (2018), Newsroom, NAACL, Sec. 4.1. Fabbri et al. (2021), SummEval,
    TACL 9. Chhun et al. (2022), Of Human Criteria and Automatic Metrics, COLING, Tab. 1.
    """
    end = "\n" if config.hanna_compat else ""
    n = len(texts)
    unique, index = distinct([t + end for t in (*texts.candidates, *texts.prompts)])
    story, prompt = index[:n], index[n:]
    cased, lowered = spacy_tokens(unique)
    lengths = np.array([t.size for t in cased], dtype=np.float64)
    length, prompt_length = lengths[story], lengths[prompt]
    sums = np.array(
        [fragment_sums(lowered[s], lowered[p]) for s, p in zip(story, prompt, strict=True)]
    )
    sums = sums.reshape(n, 2).astype(np.float64)
    out = {}
    has = length > 0
    safe = np.maximum(length, 1)
    out["Coverage"] = np.where(has, sums[:, 0] / safe, 0.0)
    out["Density"] = np.where(has, sums[:, 1] / safe, 0.0)
    out["Compression"] = np.where(has, prompt_length / safe, 0.0)
    out["Text length"] = length
    tokens = lowered if config.lowercase else cased
    stats = pair_ngram_stats(*pack(tokens), story, prompt, MAX_ORDER).astype(np.float64)
    for order in range(1, MAX_ORDER + 1):
        distinct_grams = stats[:, order - 1, DISTINCT]
        out[f"Novelty-{order}"] = _share(stats[:, order - 1, NOVEL], distinct_grams)
        out[f"Repetition-{order}"] = _share(stats[:, order - 1, REPEATED], distinct_grams)
    return {m: out[m] for m in MEASURES}
