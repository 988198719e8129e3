"""BLEU and chrF exactly as sacrebleu's sentence scores with SummEval's settings.

SummEval (and so HANNA) called ``sacrebleu.sentence_bleu(candidate, [reference])`` and
``sacrebleu.sentence_chrf(candidate, [reference])`` (a list of several references where an
item has them). This module computes the same sufficient
statistics (clipped n-gram matches from :func:`hanna_stats.scoring.strings._tokens.ngram_stats`,
over each
distinct text tokenised once) and combines them with sacrebleu's own sequence of floating-point
operations, so the scores equal sacrebleu's to the last bit (sacrebleu is the tests' oracle).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from itertools import pairwise

import numpy as np
from hanna_stats.scoring.registry import ScoringConfig, Texts, register
from hanna_stats.scoring.strings._tokens import (
    MATCHES,
    Vocabulary,
    distinct,
    group_ngram_stats,
    pack,
    pair_ngram_stats,
)

BLEU_ORDER = 4
CHRF_ORDER = 6
CHRF_BETA = 2
# mteval-v13a's punctuation: every character of [{-~[-` -&(-+:-@/] stands alone ...
_SPLIT_PUNCT = str.maketrans({c: f" {c} " for c in '{|}~[\\]^_` !"#$%&()*+:;<=>?@/'})
_SPLIT_13A = (
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),  # ... period and comma unless after a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),  # ... unless before a digit
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),  # ... dash after a digit
)


def tokenize_13a(text: str) -> list[str]:
    """The tokens of ``text`` by sacrebleu's default ``13a`` tokenizer (mteval-v13a.pl).

    As ``BLEU._preprocess_segment``: trailing whitespace removed; ``<skipped>`` and ``-\\n``
    removed, newlines to spaces, the entities ``&quot; &amp; &lt; &gt;`` decoded; then the
    ASCII punctuation ``{|}~[\\]^_`!"#$%&()*+:;<=>?@/`` is split off, period and comma unless
    between digits, and a dash after a digit; tokens are the whitespace-separated pieces.
    """
    line = text.rstrip().replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        line = line.replace("&quot;", '"').replace("&amp;", "&")
        line = line.replace("&lt;", "<").replace("&gt;", ">")
    line = f" {line} ".translate(_SPLIT_PUNCT)
    for pattern, replacement in _SPLIT_13A:
        line = pattern.sub(replacement, line)
    return line.split()


def _word_ids(texts: Sequence[str]) -> list[np.ndarray]:
    vocab = Vocabulary()
    return [vocab.encode(tokenize_13a(t)) for t in texts]


def _char_ids(texts: Sequence[str]) -> list[np.ndarray]:
    """Unicode code points of each text with all whitespace removed (sacrebleu's chrF input)."""
    return [
        np.frombuffer("".join(t.split()).encode("utf-32-le", "surrogatepass"), np.uint32)
        for t in texts
    ]


def _stats(
    texts: Texts, ids_of: Callable[[Sequence[str]], list[np.ndarray]], order: int, grouped: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Candidate lengths (per item), reference lengths (per reference), the reference offsets
    of :meth:`~hanna_stats.scoring.registry.Texts.reference_groups` and the clipped matches (orders
    in
    columns): per item against the maximum counts over its references when ``grouped``, else
    per (item, reference) pair, pairs in reference order. All ints."""
    n = len(texts)
    refs, groups, item = texts.reference_groups()
    unique, index = distinct([*texts.candidates, *refs])
    flat, starts = pack(ids_of(unique))
    lengths = np.diff(starts)
    cand, ref = index[:n], index[n:]
    if grouped:
        stats = group_ngram_stats(flat, starts, cand, ref, groups, order)
    else:
        stats = pair_ngram_stats(flat, starts, cand[item], ref, order)
    return lengths[cand], lengths[ref], groups, stats[:, :, MATCHES]


def _sentence_bleu(hyp_len: int, ref_len: int, correct: list[int]) -> float:
    """sacrebleu's ``BLEU.compute_bleu`` with ``smooth_method="exp"``, effective order."""
    if not any(correct):
        return 0.0
    bp = math.exp(1 - ref_len / hyp_len) if hyp_len < ref_len else 1.0
    precisions = []
    smooth = 1.0
    for n in range(1, BLEU_ORDER + 1):
        total = hyp_len - n + 1
        if total <= 0:
            break
        if correct[n - 1] == 0:
            smooth *= 2
            precisions.append(100.0 / (smooth * total))
        else:
            precisions.append(100.0 * correct[n - 1] / total)
    return bp * math.exp(sum([math.log(p) for p in precisions]) / len(precisions))


def _sentence_chrf(hyp_len: int, ref_len: int, matches: list[int]) -> float:
    """sacrebleu's ``CHRF._compute_f_score`` (no eps smoothing: effective order)."""
    factor = CHRF_BETA**2
    avg_prec, avg_rec, effective = 0.0, 0.0, 0
    for n in range(1, CHRF_ORDER + 1):
        n_hyp, n_ref = hyp_len - n + 1, ref_len - n + 1
        if n_hyp > 0 and n_ref > 0:
            avg_prec += matches[n - 1] / n_hyp
            avg_rec += matches[n - 1] / n_ref
            effective += 1
    if effective:
        avg_prec /= effective
        avg_rec /= effective
    if avg_prec + avg_rec:
        score = (1 + factor) * avg_prec * avg_rec
        score /= (factor * avg_prec) + avg_rec
        return 100 * score
    return 0.0


@register(
    "bleu",
    ("BLEU",),
    family="string",
    reference=True,
    multi_reference="sacrebleu: counts clipped by the max over references, closest length",
)
def bleu(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """Sentence-level BLEU of each candidate against its reference, 0-100.

    ``BLEU = BP * exp(sum_{n=1}^{N} log p_n / N)`` with ``p_n = 100 m_n / t_n`` the clipped
    n-gram precision (``m_n`` clipped matches, ``t_n = c - n + 1`` candidate n-grams), brevity
    penalty ``BP = min(1, exp(1 - r / c))`` (c, r: candidate and reference token counts),
    sacrebleu's ``13a`` tokens (:func:`tokenize_13a`), ``exp`` smoothing (the k-th order
    without a match gets ``p_n = 100 / (2^k t_n)``) and effective order (N: the highest order
    with ``t_n > 0``, at most 4); 0 when no n-gram matches. This is exactly
    ``sacrebleu.sentence_bleu(candidate, [reference]).score``, the call of SummEval's
    ``BleuMetric.evaluate_example`` that HANNA used. The public data only hold the Human row
    (identical texts, 100), which any setting reproduces; ``hanna_compat`` changes nothing.

    With several references (``texts.extra_references``), as
    ``sacrebleu.sentence_bleu(candidate, references)``: each n-gram's candidate count is
    clipped by its largest count in any one reference, and r is the reference length closest
    to c (the shorter one on a tie).

    References
    ----------
    Papineni et al. (2002), BLEU, ACL. Post (2018), A Call for Clarity in Reporting BLEU
    Scores, WMT. Chen and Cherry (2014), A Systematic Comparison of Smoothing Techniques for
    Sentence-Level BLEU, WMT (method 3). Chhun et al. (2022), COLING, Tab. 1.
    """
    hyp, ref, groups, correct = _stats(texts, _word_ids, BLEU_ORDER, grouped=True)
    closest = [
        min(ref[a:b].tolist(), key=lambda r, c=c: (abs(c - r), r))
        for c, (a, b) in zip(hyp.tolist(), pairwise(groups.tolist()), strict=True)
    ]
    rows = zip(hyp.tolist(), closest, correct.tolist(), strict=True)
    return {"BLEU": np.array([_sentence_bleu(*row) for row in rows], dtype=np.float64)}


@register(
    "chrf",
    ("chrF",),
    family="string",
    reference=True,
    multi_reference="sacrebleu: the best reference's score",
)
def chrf(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """Sentence-level chrF of each candidate against its reference, 0-100.

    Character n-gram F-score ``chrF = 100 (1 + b^2) P R / (b^2 P + R)`` with ``b = 2``, P and R
    the averages of the character n-gram precisions ``m_n / (c - n + 1)`` and recalls
    ``m_n / (r - n + 1)`` over the orders n = 1..6 that both texts reach (c, r: characters of
    candidate and reference with all whitespace removed; ``m_n`` clipped matches); 0 when
    ``P + R = 0``. No word n-grams. This is exactly
    ``sacrebleu.sentence_chrf(candidate, [reference]).score`` with SummEval's
    ``char_order=6, word_order=0, beta=2`` (sacrebleu's defaults). Only the Human row (100)
    can be checked against the public data; ``hanna_compat`` changes nothing.

    With several references, as ``sacrebleu.sentence_chrf(candidate, references)``: the
    statistics of the reference with the highest chrF (the first on a tie), so the maximum of
    the chrF against each reference.

    References
    ----------
    Popović (2015), chrF: character n-gram F-score for automatic MT evaluation, WMT.
    Post (2018), A Call for Clarity in Reporting BLEU Scores, WMT. Chhun et al. (2022),
    COLING, Tab. 1.
    """
    hyp, ref, groups, matches = _stats(texts, _char_ids, CHRF_ORDER, grouped=False)
    hyp = np.repeat(hyp, np.diff(groups))
    rows = zip(hyp.tolist(), ref.tolist(), matches.tolist(), strict=True)
    pairs = [_sentence_chrf(*row) for row in rows]
    scores = [max(pairs[a:b]) for a, b in pairwise(groups.tolist())]
    return {"chrF": np.array(scores, dtype=np.float64)}
