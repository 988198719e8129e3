"""SummaQA (Scialom et al., 2019): can a QA model answer cloze questions about the reference
from the candidate?

Scialom, T., Lamprier, S., Piwowarski, B. and Staiano, J. (2019). Answers Unite! Unsupervised
metrics for reinforced summarization models. EMNLP-IJCNLP, 3246-3256.

Questions are generated from the reference: for every named entity e of every sentence s (spaCy
NER), the question is s with e replaced by ``MASKED`` and the answer is e. The candidate is the
context of an extractive QA model (``bert-large-uncased-whole-word-masking-finetuned-squad``,
question and context truncated together to 384 tokens). For question q the model's start and end
distributions are softmaxes over all 384 positions, zeroed outside the context; the predicted span
runs from the argmax start to the argmax end and its confidence is p_start * p_end. Over the Q
questions of a pair,

    SummaQA-prob = (1/Q) sum_q p_start(q) p_end(q),
    SummaQA-F1   = (1/Q) sum_q F1_SQuAD(predicted span, answer),

both 0 when the reference has no entity (as in the authors' code, here via SummEval's version
with batching). HANNA's single SummaQA column is read as SummaQA-prob: its values for degenerate
stories are small but never exactly 0 unless the reference has no entity (e.g. BertGeneration:
0.054 to 0.14), which fits a confidence and not an F1 (mostly 0 on unrelated text). Only that
measure is registered; :func:`summaqa_scores` returns both.

Named entities need a trained spaCy pipeline (``en_core_web_sm`` in the authors' code); it is not
on PyPI, so it is loaded by name or path (``ScoringConfig.models["en_core_web_sm"]``, ``--model
en_core_web_sm=PATH`` for a pipeline saved with ``nlp.to_disk``). Sentences come from the
pipeline's parser or sentencizer. The QA model's own tokenizer is used (the authors load
``bert-base-uncased``'s, the same vocabulary). Predicted spans are WordPiece tokens joined by
spaces, as in the authors' code.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from functools import cache

import numpy as np
from hanna_stats.scoring.models._runtime import (
    MissingCheckpointError,
    batch_progress,
    length_batches,
    load_checkpoint,
)
from hanna_stats.scoring.registry import ScoringConfig, Texts, register

CHECKPOINT = "bert-large-uncased-whole-word-masking-finetuned-squad"
SPACY_PIPELINE = "en_core_web_sm"
MAX_TOKENS = 384


@cache
def _spacy(name: str):
    import spacy

    try:
        return spacy.load(name)
    except OSError as exc:
        raise MissingCheckpointError(
            f"spaCy pipeline {name} (named entities for SummaQA's questions) could not be "
            f"loaded. Install it (`python -m spacy download {SPACY_PIPELINE}` where there is "
            f"network) or pass a pipeline saved with nlp.to_disk: `--model "
            f"{SPACY_PIPELINE}=PATH` on the CLI (ScoringConfig.models)"
        ) from exc


def cloze_questions(text: str, config: ScoringConfig) -> list[tuple[str, str]]:
    """SummaQA's cloze questions of ``text``: ``(sentence with the entity replaced by
    "MASKED", entity)`` for every named entity of every sentence, in text order."""
    doc = _spacy(config.models.get(SPACY_PIPELINE, SPACY_PIPELINE))(text)
    out = []
    for sent in doc.sents:
        for ent in sent.ents:
            start = ent.start_char - sent.start_char
            question = sent.text[:start] + "MASKED" + sent.text[start + len(ent.text) :]
            out.append((question, ent.text))
    return out


def _normalize(text: str) -> str:
    """SQuAD answer normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def squad_f1(prediction: str, truth: str) -> float:
    """Token-level F1 between normalised answers (SQuAD; Rajpurkar et al., 2016)."""
    predicted, expected = _normalize(prediction).split(), _normalize(truth).split()
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def summaqa_scores(
    sources: tuple[str, ...], candidates: tuple[str, ...], config: ScoringConfig
) -> dict[str, np.ndarray]:
    """SummaQA confidence and F1 of each candidate on the questions of its source.

    Parameters
    ----------
    sources : tuple of str
        Texts the questions are generated from (the references, for HANNA).
    candidates : tuple of str
        Contexts the QA model reads.
    config : ScoringConfig
        ``models`` may override the QA checkpoint and the spaCy pipeline (see module docstring).

    Returns
    -------
    dict
        ``{"prob": ..., "f1": ...}``, float64 arrays (see the module docstring for formulas).
    """
    import torch

    tokenizer, model = load_checkpoint(CHECKPOINT, config, "question-answering")
    questions = [cloze_questions(s, config) for s in sources]
    items = [(k, q, a) for k, qs in enumerate(questions) for q, a in qs]
    probs, f1s = np.zeros(len(items)), np.zeros(len(items))
    if not items:
        return {"prob": np.zeros(len(sources)), "f1": np.zeros(len(sources))}
    encoded = tokenizer(
        [q for _, q, _ in items],
        [candidates[k] for k, _, _ in items],
        max_length=MAX_TOKENS,
        truncation="longest_first",
        padding="max_length",
        return_token_type_ids=True,
    )
    batches = length_batches([len(q) for _, q, _ in items], config.batch_size)
    with torch.inference_mode():
        for batch in batch_progress(batches, "SummaQA", config):
            inputs = {
                key: torch.tensor([encoded[key][i] for i in batch], device=model.device)
                for key in ("input_ids", "token_type_ids", "attention_mask")
            }
            out = model(**inputs)
            context = inputs["token_type_ids"].float()
            start = torch.softmax(out.start_logits.float(), -1) * context
            end = torch.softmax(out.end_logits.float(), -1) * context
            p_start, i_start = start.max(-1)
            p_end, i_end = end.max(-1)
            for row, i in enumerate(batch):
                span = encoded["input_ids"][i][int(i_start[row]) : int(i_end[row]) + 1]
                answer = " ".join(tokenizer.convert_ids_to_tokens(span))
                probs[i] = float(p_start[row] * p_end[row])
                f1s[i] = squad_f1(answer, items[i][2])
    owner = np.array([k for k, _, _ in items], dtype=np.int64)
    counts = np.bincount(owner, minlength=len(sources))
    return {
        name: np.bincount(owner, weights=values, minlength=len(sources)) / np.maximum(counts, 1)
        for name, values in (("prob", probs), ("f1", f1s))
    }


@register(
    "summaqa",
    ("SummaQA",),
    family="model",
    reference=True,
    requires=("torch", "transformers", "spacy"),
)
def summaqa(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """SummaQA: mean QA confidence on the candidate for cloze questions about the reference
    (Scialom et al., 2019; see the module docstring)."""
    return {"SummaQA": summaqa_scores(texts.references, texts.candidates, config)["prob"]}
