"""BLANC-help and BLANC-tune (Vasilyev et al., 2020): how much a summary helps a masked LM.

Vasilyev, O., Dharnidharka, V. and Bohannon, J. (2020). Fill in the BLANC: Human-free quality
estimation of document summaries. Proceedings of the First Workshop on Evaluation and Comparison
of NLP Systems (Eval4NLP), 11-20.

The document is split into sentences; each sentence is tokenised (WordPiece) and masked
several times, every ``GAP``-th eligible token at a time (offsets 0..GAP-1), a token being
eligible when long enough (at least 4 characters; 2 for the first piece of a split word; pieces
``##x`` never). For every masked token the model predicts the argmax token twice:

* BLANC-help: with the summary prepended to the sentence (``[CLS] summary sentence [SEP]``)
  versus a filler of the same length (``.`` repeated), with the same model;
* BLANC-tune: with the sentence alone, by the model versus by a copy fine-tuned on the summary
  (masked-LM training on 64-token chunks of the summary at stride 32, the same even masking,
  10% of masked tokens replaced by a random id in 1000..29999 (bert-base-uncased's ordinary
  tokens; V//2..V-1 for a vocabulary of V < 30000 ids) and 10% left as they were, 10
  epochs, AdamW with learning rate 5e-5, weight decay 0.01 except biases and LayerNorm weights,
  a linearly decaying learning rate, batch size 1, seed 0).

With S_ab the number of masked tokens predicted correctly (1) or not (0) without (a) and with
(b) the summary's help, BLANC = (S_01 - S_10) / (S_00 + S_01 + S_10 + S_11), 0 when nothing was
masked. Defaults are those of the authors' package ``blanc`` 0.3.4 (``bert-base-uncased``,
gap 2, the ``relative`` measure; the package notes that the paper's own runs used gap 6), and
its input limits: 512 tokens, a long input first cut from the sentence's end (to no fewer than
100 tokens) and then from the summary, whole sentences from its end.

Differences from the package: sentences are split with spaCy's rule-based ``sentencizer``
(``spacy.blank("en")``; the package uses nltk's punkt, whose data cannot be installed from
PyPI), and the optimizer is ``torch.optim.AdamW`` (the package imports transformers' AdamW,
removed from transformers 5). Given the same sentence split and optimizer, results agree with the
package exactly (see tests).

HANNA's variants (paper, Appendix B: BLANC needs a source document and a summary): Golden = the
human reference story as the document, the candidate story as the summary (read here as
BLANC-help, the package's default); PS = "Prompt as the Summary" (document: the story); SS =
"Story as the Summary" (document: the prompt). The fractions with small denominators in HANNA's
-SS columns (1/17, -1/7, ...) confirm that there the short prompt is the masked document.
"""

from __future__ import annotations

import copy
import dataclasses
import random
import unicodedata

import numpy as np
from hanna_stats.scoring._spacy import blank_english
from hanna_stats.scoring.models._runtime import batch_progress, length_batches, load_checkpoint
from hanna_stats.scoring.registry import ScoringConfig, Texts, register

CHECKPOINT = "bert-base-uncased"
GAP = 2
MIN_LENGTH_NORMAL, MIN_LENGTH_LEAD, MIN_LENGTH_FOLLOWUP = 4, 2, 100
MAX_TOKENS = 512
SENTENCE_KEEP = 100  # a sentence is cut to no fewer tokens before the summary is cut
FILLER = "."
CHUNK_SIZE, CHUNK_STRIDE = 64, 32
P_REPLACE, P_ORIGINAL = 0.1, 0.1
REPLACE_IDS = (1000, 29999)  # random replacement ids, bert-base-uncased's ordinary tokens
EPOCHS, LEARNING_RATE, WEIGHT_DECAY, EPS = 10, 5e-5, 0.01, 1e-8
SEED = 0

#: one masked input: token strings, {position in the sentence: original token}
Masking = tuple[list[str], dict[int, str]]


def sentences(text: str) -> list[str]:
    """Sentences of ``text`` after NFKD normalisation (spaCy's rule-based sentencizer)."""
    doc = blank_english()(unicodedata.normalize("NFKD", text))
    return [s.text.strip() for s in doc.sents if s.text.strip()]


def _eligible(token: str, next_token: str) -> bool:
    """Whether a WordPiece token is long enough to be masked (BLANC's three minimum lengths)."""
    if token.startswith("##"):
        return len(token) - 2 >= MIN_LENGTH_FOLLOWUP
    if next_token.startswith("##"):
        return len(token) >= MIN_LENGTH_LEAD
    return len(token) >= MIN_LENGTH_NORMAL


def mask_evenly(tokens: list[str], mask_token: str) -> list[Masking]:
    """BLANC's even maskings: for offset k in 0..gap-1, mask the eligible tokens at positions
    i with i mod gap = k (gap = min(GAP, len(tokens))); maskings that mask nothing are dropped.
    """
    gap = min(GAP, len(tokens))
    out = []
    for offset in range(gap):
        masked, answers = list(tokens), {}
        for i, token in enumerate(tokens):
            next_token = tokens[i + 1] if i + 1 < len(tokens) else ""
            if i % gap == offset and _eligible(token, next_token):
                masked[i] = mask_token
                answers[i] = token
        if answers:
            out.append((masked, answers))
    return out


def _fit(sentence: list[str], summary: list[list[str]]) -> tuple[list[str], list[str]]:
    """Cut a sentence and a summary (list of tokenised sentences) to fit 512 tokens with
    [CLS] and [SEP], as the package does: the sentence from its end down to at most 100 tokens,
    then the summary by whole sentences from its end (its first sentence from the front when
    even that one is too long)."""
    flat = [t for s in summary for t in s]
    excess = 2 + len(flat) + len(sentence) - MAX_TOKENS
    if excess <= 0:
        return sentence, flat
    cut = max(0, min(excess, len(sentence) - SENTENCE_KEEP))
    sentence = sentence[: len(sentence) - cut]
    if excess <= cut:
        return sentence, flat
    room = MAX_TOKENS - 2 - len(sentence)
    kept: list[str] = []
    for s in summary:
        if len(kept) + len(s) > room:
            break
        kept += s
    if not kept:
        kept = summary[0][max(0, len(summary[0]) - room) :]
    return sentence, kept


def _inputs(tokenizer, document: str, summary: str | None, help_mode: bool):
    """Masked inputs for one (document, summary) pair.

    Returns a list of ``(ids, {position: answer id})`` pairs. In help mode they alternate
    summary-helped / filler inputs; otherwise they are the bare sentences (``summary`` is then
    used only for the length cut, as in the package, and is None)."""
    cls, sep = tokenizer.cls_token, tokenizer.sep_token
    summary_sents = [tokenizer.tokenize(s) for s in sentences(summary)] if summary else []
    summary_sents = summary_sents or [[]]
    out = []
    for sentence in sentences(document):
        sent, help_tokens = _fit(tokenizer.tokenize(sentence), summary_sents)
        prefixes = [help_tokens, [FILLER] * len(help_tokens)] if help_mode else [[]]
        for masked, answers in mask_evenly(sent, tokenizer.mask_token):
            for prefix in prefixes:
                offset = 1 + len(prefix)
                ids = tokenizer.convert_tokens_to_ids([cls, *prefix, *masked, sep])
                truth = tokenizer.convert_tokens_to_ids(list(answers.values()))
                out.append((ids, dict(zip([i + offset for i in answers], truth, strict=True))))
    return out


def _correct(model, tokenizer, inputs, config: ScoringConfig, desc: str) -> list[np.ndarray]:
    """For each input, a bool array: whether the argmax prediction at each masked position is
    the original token (positions in the order of the input's answer dict)."""
    import torch

    out: list[np.ndarray] = [np.empty(0, bool)] * len(inputs)
    batches = length_batches([len(ids) for ids, _ in inputs], config.batch_size)
    with torch.inference_mode():
        for batch in batch_progress(batches, desc, config):
            padded = tokenizer.pad(
                {"input_ids": [inputs[i][0] for i in batch]}, return_tensors="pt"
            )
            logits = model(
                input_ids=padded["input_ids"].to(model.device),
                attention_mask=padded["attention_mask"].to(model.device),
            ).logits
            predicted = logits.argmax(-1).cpu().numpy()
            for row, i in enumerate(batch):
                answers = inputs[i][1]
                out[i] = predicted[row, list(answers)] == np.array(list(answers.values()))
    return out


def _relative(without: np.ndarray, with_help: np.ndarray) -> float:
    """BLANC's ``relative`` measure (S_01 - S_10) / total, 0 when nothing was masked."""
    if without.size == 0:
        return 0.0
    return float((np.sum(~without & with_help) - np.sum(without & ~with_help)) / without.size)


def blanc_help(documents: tuple[str, ...], summaries: tuple[str, ...], config: ScoringConfig):
    """BLANC-help of each (document, summary) pair (see the module docstring).

    Returns
    -------
    numpy.ndarray
        float64 in [-1, 1]; higher means the summary helps more.
    """
    tokenizer, model = load_checkpoint(CHECKPOINT, config, "masked-lm", half=False)
    per_pair = [_inputs(tokenizer, d, s, True) for d, s in zip(documents, summaries, strict=True)]
    flat = [x for inputs in per_pair for x in inputs]
    correct = _correct(model, tokenizer, flat, config, "BLANC-help")
    scores, start = np.empty(len(documents)), 0
    for k, inputs in enumerate(per_pair):
        pair = correct[start : start + len(inputs)]
        start += len(inputs)
        helped = np.concatenate([np.empty(0, bool), *pair[0::2]])
        filler = np.concatenate([np.empty(0, bool), *pair[1::2]])
        scores[k] = _relative(filler, helped)
    return scores


def _tuning_inputs(tokenizer, summary: str, rng: random.Random) -> list[tuple[list, list]]:
    """Masked-LM training examples ``(input ids, labels)`` from 64-token chunks of the summary
    (stride 32; the first ``stride`` tokens are also used alone so that the top of the summary
    is tuned as fully as the rest), with BLANC's random replacement of masked tokens."""
    tokens = tokenizer.tokenize(summary)
    replace_ids = replacement_range(len(tokenizer))
    chunks = []
    for start in range(0, len(tokens), CHUNK_STRIDE):
        chunks.append(tokens[start : start + CHUNK_SIZE])
        if 0 < start < CHUNK_SIZE:
            chunks.append(tokens[:start])
    examples = []
    for chunk in chunks:
        for masked, answers in mask_evenly(chunk, tokenizer.mask_token):
            ids = tokenizer.convert_tokens_to_ids(
                [tokenizer.cls_token, *masked, tokenizer.sep_token]
            )
            labels = [-100] * len(ids)
            for i, token in answers.items():
                original = tokenizer.convert_tokens_to_ids(token)
                labels[i + 1] = original
                draw = rng.random()
                if draw < P_REPLACE:
                    ids[i + 1] = rng.randint(*replace_ids)
                elif draw < P_REPLACE + P_ORIGINAL:
                    ids[i + 1] = original
            examples.append((ids, labels))
    return examples


def replacement_range(vocab_size: int) -> tuple[int, int]:
    """Inclusive id range of BLANC-tune's random replacement tokens: 1000..29999 (the package's,
    for bert-base-uncased's 30,522 ids), or V//2..V-1 for a vocabulary of V < 30000 ids."""
    if vocab_size >= REPLACE_IDS[1] + 1:
        return REPLACE_IDS
    return vocab_size // 2, vocab_size - 1


def _tuned(model, tokenizer, summary: str):
    """A copy of ``model`` fine-tuned on ``summary`` (BLANC-tune's recipe, seed :data:`SEED`;
    the global torch RNG used by dropout is forked, so the caller's state is untouched)."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    examples = _tuning_inputs(tokenizer, summary, random.Random(SEED))
    tuned = copy.deepcopy(model)
    named = list(tuned.named_parameters())
    groups = [
        {"params": [p for n, p in named if not _no_decay(n)], "weight_decay": WEIGHT_DECAY},
        {"params": [p for n, p in named if _no_decay(n)], "weight_decay": 0.0},
    ]
    optimizer = torch.optim.AdamW(groups, lr=LEARNING_RATE, eps=EPS)
    schedule = get_linear_schedule_with_warmup(optimizer, 0, len(examples) * EPOCHS)
    devices = [model.device] if model.device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(SEED)
        tuned.train()
        for _ in range(EPOCHS):
            for ids, labels in examples:
                optimizer.zero_grad()
                ids_tensor = torch.tensor([ids], device=model.device)
                loss = tuned(
                    input_ids=ids_tensor,
                    attention_mask=torch.ones_like(ids_tensor),
                    token_type_ids=torch.zeros_like(ids_tensor),
                    labels=torch.tensor([labels], device=model.device),
                ).loss
                loss.backward()
                optimizer.step()
                schedule.step()
    return tuned.eval()


def _no_decay(name: str) -> bool:
    """Parameters exempt from weight decay: biases and LayerNorm weights (as in the package)."""
    return "bias" in name or "LayerNorm.weight" in name


def blanc_tune(documents: tuple[str, ...], summaries: tuple[str, ...], config: ScoringConfig):
    """BLANC-tune of each (document, summary) pair (see the module docstring).

    Returns
    -------
    numpy.ndarray
        float64 in [-1, 1]; higher means tuning on the summary helps more.
    """
    tokenizer, model = load_checkpoint(CHECKPOINT, config, "masked-lm", half=False)
    per_pair = [_inputs(tokenizer, d, None, False) for d in documents]
    flat = [x for inputs in per_pair for x in inputs]
    base = _correct(model, tokenizer, flat, config, "BLANC-tune")
    scores, start = np.empty(len(documents)), 0
    quiet = dataclasses.replace(config, progress=False)
    pairs = batch_progress(list(range(len(documents))), "BLANC-tune (tuning)", config)
    for k in pairs:
        inputs = per_pair[k]
        before = np.concatenate([np.empty(0, bool), *base[start : start + len(inputs)]])
        start += len(inputs)
        tuned = _tuned(model, tokenizer, summaries[k])
        after = np.concatenate(
            [np.empty(0, bool), *_correct(tuned, tokenizer, inputs, quiet, "BLANC-tune")]
        )
        scores[k] = _relative(before, after)
    return scores


@register(
    "blanc",
    ("BLANC-Golden",),
    family="model",
    reference=True,
    requires=("torch", "transformers", "spacy"),
)
def blanc_reference(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """BLANC-Golden: BLANC-help with the reference story as the document and the candidate
    story as the summary (Vasilyev et al., 2020; see the module docstring)."""
    return {"BLANC-Golden": blanc_help(texts.references, texts.candidates, config)}


@register(
    "blanc-free",
    ("BLANC-Tune-PS", "BLANC-Help-PS", "BLANC-Tune-SS", "BLANC-Help-SS"),
    family="model",
    reference=False,
    requires=("torch", "transformers", "spacy"),
)
def blanc_free(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """BLANC-tune and BLANC-help with the prompt as the summary of the story (PS) and the story
    as the summary of the prompt (SS) (Vasilyev et al., 2020; see the module docstring)."""
    return {
        "BLANC-Tune-PS": blanc_tune(texts.candidates, texts.prompts, config),
        "BLANC-Help-PS": blanc_help(texts.candidates, texts.prompts, config),
        "BLANC-Tune-SS": blanc_tune(texts.prompts, texts.candidates, config),
        "BLANC-Help-SS": blanc_help(texts.prompts, texts.candidates, config),
    }
