"""BLEU and chrF through sacrebleu, sentence by sentence, with SummEval's settings."""

from __future__ import annotations

import numpy as np

from scoring.registry import ScoringConfig, Texts, register


@register("bleu", ("BLEU",), family="string", reference=True, requires=("sacrebleu",))
def bleu(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """Sentence-level BLEU of each candidate against its reference, 0-100.

    ``BLEU = BP * exp(sum_{n=1}^{4} log p_n / 4)`` with clipped n-gram precisions ``p_n``,
    brevity penalty ``BP = min(1, exp(1 - r / c))``, sacrebleu's ``13a`` tokenisation,
    ``exp`` smoothing and effective order: exactly
    ``sacrebleu.sentence_bleu(candidate, [reference])``, the call of SummEval's
    ``BleuMetric.evaluate_example`` that HANNA used. The public data only hold the Human row
    (identical texts, 100), which any setting reproduces; ``hanna_compat`` changes nothing.

    References
    ----------
    Papineni et al. (2002), BLEU, ACL. Post (2018), A Call for Clarity in Reporting BLEU
    Scores, WMT. Chhun et al. (2022), COLING, Tab. 1.
    """
    from sacrebleu.metrics import BLEU

    return {"BLEU": _sentence_scores(BLEU(effective_order=True), texts)}


@register("chrf", ("chrF",), family="string", reference=True, requires=("sacrebleu",))
def chrf(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """Sentence-level chrF of each candidate against its reference, 0-100.

    Character n-gram F-score ``chrF = (1 + b^2) P R / (b^2 P + R)`` with ``b = 2``, P and R the
    averages over n = 1..6 of the character n-gram precisions and recalls (whitespace removed),
    no word n-grams: ``sacrebleu.sentence_chrf(candidate, [reference])`` with SummEval's
    ``char_order=6, word_order=0, beta=2`` (sacrebleu's defaults). Only the Human row (100)
    can be checked against the public data; ``hanna_compat`` changes nothing.

    References
    ----------
    Popović (2015), chrF: character n-gram F-score for automatic MT evaluation, WMT.
    Chhun et al. (2022), COLING, Tab. 1.
    """
    from sacrebleu.metrics import CHRF

    return {"chrF": _sentence_scores(CHRF(char_order=6, word_order=0, beta=2), texts)}


def _sentence_scores(metric, texts: Texts) -> np.ndarray:
    """``metric.sentence_score(candidate, [reference]).score`` for every item."""
    pairs = zip(texts.candidates, texts.references, strict=True)
    return np.array([metric.sentence_score(c, [r]).score for c, r in pairs], dtype=np.float64)
