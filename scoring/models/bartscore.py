"""BARTScore (Yuan et al., 2021): mean token log-likelihood of one text given another.

Yuan, W., Neubig, G. and Liu, P. (2021). BARTScore: Evaluating generated text as text generation.
NeurIPS 34. For a source x and a target y = (y_1, ..., y_m) tokenised by the seq2seq model,

    BARTScore(x -> y) = (1/m) sum_{t=1}^{m} log p(y_t | y_<t, x; theta),

with uniform token weights, the checkpoint ``facebook/bart-large-cnn`` (the paper's default) and
both texts truncated to 1024 tokens, as in the authors' ``BARTScorer``. The m target tokens are
all the tokenizer's ids of y, ``<s>`` and ``</s>`` included (the authors' code counts them too).

HANNA's four directions (paper, Appendix B: "Given a couple of texts (x, y), BARTScore computes a
score based on the log probability of y given x"): SH = (Story, Human) = log p(human reference |
story), HS = log p(story | human reference) (reference-based); PS = log p(story | prompt),
SP = log p(prompt | story) (reference-free). The published Human row has SH == HS, as it must.
"""

from __future__ import annotations

import numpy as np
from hanna_stats.scoring.models._runtime import batch_progress, length_batches, load_checkpoint
from hanna_stats.scoring.registry import ScoringConfig, Texts, register

CHECKPOINT = "facebook/bart-large-cnn"
MAX_TOKENS = 1024


def mean_log_likelihood(
    sources: tuple[str, ...], targets: tuple[str, ...], config: ScoringConfig
) -> np.ndarray:
    """BARTScore of each pair: mean log-likelihood of the target tokens given the source.

    Parameters
    ----------
    sources, targets : tuple of str
        Aligned texts; item i scores ``targets[i]`` given ``sources[i]``.
    config : ScoringConfig
        ``models`` may map ``"facebook/bart-large-cnn"`` to another seq2seq checkpoint (any
        ``AutoModelForSeq2SeqLM``); ``batch_size`` pairs go through the model at once (padding
        is masked, so results do not depend on it beyond float rounding).

    Returns
    -------
    numpy.ndarray
        float64, ``(1/m) sum_t log p(y_t | y_<t, x)`` per pair (at most 0).
    """
    import torch

    tokenizer, model = load_checkpoint(CHECKPOINT, config, "seq2seq")
    max_length = min(tokenizer.model_max_length, MAX_TOKENS)
    encode = {"max_length": max_length, "truncation": True}
    source_ids = tokenizer(list(sources), **encode)["input_ids"]
    target_ids = tokenizer(list(targets), **encode)["input_ids"]
    lengths = [len(s) + len(t) for s, t in zip(source_ids, target_ids, strict=True)]
    scores = np.empty(len(sources))
    batches = length_batches(lengths, config.batch_size)
    with torch.inference_mode():
        for batch in batch_progress(batches, "BARTScore", config):
            src = tokenizer.pad({"input_ids": [source_ids[i] for i in batch]}, return_tensors="pt")
            tgt = tokenizer.pad({"input_ids": [target_ids[i] for i in batch]}, return_tensors="pt")
            labels = tgt["input_ids"].masked_fill(tgt["attention_mask"] == 0, -100)
            logits = model(
                input_ids=src["input_ids"].to(model.device),
                attention_mask=src["attention_mask"].to(model.device),
                decoder_input_ids=model.prepare_decoder_input_ids_from_labels(
                    labels=labels.to(model.device)
                ),
            ).logits
            # log-softmax in float32 even when the model runs in half precision on CUDA
            token_nll = torch.nn.functional.cross_entropy(
                logits.float().transpose(1, 2), labels.to(model.device), reduction="none"
            )
            mask = tgt["attention_mask"].to(model.device)
            scores[batch] = (-(token_nll.sum(1) / mask.sum(1))).double().cpu().numpy()
    return scores


@register(
    "bartscore",
    ("BARTScore-SH", "BARTScore-HS"),
    family="model",
    reference=True,
    requires=("torch", "transformers"),
)
def bartscore_reference(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """BARTScore-SH = log p(reference | story) and BARTScore-HS = log p(story | reference),
    each a mean token log-likelihood (see :func:`mean_log_likelihood`; Yuan et al., 2021)."""
    return {
        "BARTScore-SH": mean_log_likelihood(texts.candidates, texts.references, config),
        "BARTScore-HS": mean_log_likelihood(texts.references, texts.candidates, config),
    }


@register(
    "bartscore-free",
    ("BARTScore-PS", "BARTScore-SP"),
    family="model",
    reference=False,
    requires=("torch", "transformers"),
)
def bartscore_free(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """BARTScore-PS = log p(story | prompt) and BARTScore-SP = log p(prompt | story),
    each a mean token log-likelihood (see :func:`mean_log_likelihood`; Yuan et al., 2021)."""
    return {
        "BARTScore-PS": mean_log_likelihood(texts.prompts, texts.candidates, config),
        "BARTScore-SP": mean_log_likelihood(texts.candidates, texts.prompts, config),
    }
