"""InfoLM (Colombo et al., 2022) with the Fisher-Rao distance.

Colombo, P., Clavel, C. and Piantanida, P. (2022). InfoLM: A new metric to evaluate summarization
& data2text generation. AAAI 36(10), 10554-10562.

A text x = (x_1, ..., x_L) is summarised by a distribution over the masked LM's vocabulary: mask
each token x_j in turn (one at a time, the rest of the text visible), take the calibrated
prediction p_j = softmax(logits_j / T) at the masked position, and average with idf weights over
the non-special tokens,

    p_x = sum_j idf(x_j) p_j / sum_j idf(x_j),    idf(w) = log((N + 1) / (df(w) + 1)),

where df(w) counts the texts of the corpus that contain token id w and N is their number (the
candidates and the references each form their own corpus, as in the authors' code and
torchmetrics; ids absent from the corpus get log(N + 1)). The Fisher-Rao distance between the
candidate's and the reference's distributions is

    FR(p, q) = 2 arccos( sum_v sqrt(p_v q_v) ),

0 for identical distributions, at most pi; lower is better. Defaults as in the paper and the
authors' code: ``bert-base-uncased``, T = 0.25, idf weights on.

HANNA's three columns follow the authors' ``compute_infolm``, which returns the measure, its
"reversed" version ``r_`` (arguments swapped) and the "similarity" ``sim_`` (their mean):
InfoLM-FisherRao = FR(reference, candidate), InfoLM-R-FisherRao = FR(candidate, reference),
InfoLM-Sim-FisherRao = their mean. Fisher-Rao is symmetric, so the three are the same number;
the three identical columns of the published HANNA file are this definition, not an error.

Edge case: when every token of a text has idf 0 (a corpus of one text), the weights fall back to
uniform instead of producing 0/0.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from hanna_stats.scoring.models._runtime import batch_progress, load_checkpoint
from hanna_stats.scoring.registry import ScoringConfig, Texts, register

CHECKPOINT = "bert-base-uncased"
TEMPERATURE = 0.25


def idf_weights(token_ids: list[list[int]]) -> tuple[dict[int, float], float]:
    """Inverse document frequencies over a corpus of tokenised texts.

    Parameters
    ----------
    token_ids : list of list of int
        One list of token ids per text (special tokens included, as in the authors' code; they
        occur in every text and so get idf 0).

    Returns
    -------
    idf : dict
        ``{id: log((N + 1) / (df + 1))}`` for the ids that occur.
    default : float
        ``log(N + 1)``, the idf of an id that occurs in no text.
    """
    n = len(token_ids)
    df = Counter(i for ids in token_ids for i in set(ids))
    return {i: float(np.log((n + 1) / (c + 1))) for i, c in df.items()}, float(np.log(n + 1))


def text_distributions(
    texts: tuple[str, ...], config: ScoringConfig, *, temperature: float = TEMPERATURE
) -> np.ndarray:
    """InfoLM's idf-weighted masked-LM distribution of each text (see the module docstring).

    Parameters
    ----------
    texts : tuple of str
        The corpus; it also defines the idf weights.
    config : ScoringConfig
        ``models`` may map ``"bert-base-uncased"`` to another masked LM; ``batch_size`` masked
        copies of a text go through the model at once.
    temperature : float
        T in softmax(logits / T).

    Returns
    -------
    numpy.ndarray
        float64, shape (len(texts), vocabulary size); each row sums to 1.
    """
    import torch

    tokenizer, model = load_checkpoint(CHECKPOINT, config, "masked-lm")
    max_length = min(tokenizer.model_max_length, model.config.max_position_embeddings)
    encoded = tokenizer(list(texts), max_length=max_length, truncation=True)["input_ids"]
    idf, unseen = idf_weights(encoded)
    special = set(tokenizer.all_special_ids)
    out = np.empty((len(texts), model.config.vocab_size))
    with torch.inference_mode():
        for k in batch_progress(list(range(len(texts))), "InfoLM", config):
            ids = torch.tensor(encoded[k], device=model.device)
            positions = [j for j, token in enumerate(encoded[k]) if token not in special]
            weights = np.array([idf.get(encoded[k][j], unseen) for j in positions])
            if weights.sum() == 0:  # a corpus of one text: every idf is 0
                weights = np.ones(len(positions))
            total = torch.zeros(model.config.vocab_size, dtype=torch.float64, device=model.device)
            for start in range(0, len(positions), config.batch_size):
                chunk = positions[start : start + config.batch_size]
                masked = ids.repeat(len(chunk), 1)
                rows = torch.arange(len(chunk), device=model.device)
                masked[rows, chunk] = tokenizer.mask_token_id
                logits = _masked_logits(model, masked, rows, chunk).float()
                probs = torch.softmax(logits / temperature, dim=-1).double()
                w = torch.as_tensor(weights[start : start + len(chunk)], device=model.device)
                total += (w[:, None] * probs).sum(0)
            out[k] = total.cpu().numpy()
    # normalised in float64: float32 softmaxes sum to 1 only to ~1e-7, which alone moves
    # FR(p, p) = 2 arccos(sum p) from 0 to ~5e-4 (the size of HANNA's Human-row values).
    # Dividing by the row sum also divides by sum_j idf(x_j).
    return out / out.sum(1, keepdims=True)


def _masked_logits(model, input_ids, rows, cols):
    """The masked-LM logits at positions ``(rows, cols)`` only.

    The language-model head (a vocabulary-sized projection) runs on those hidden states alone
    instead of on every position of every masked copy (the full ``logits`` tensor is
    batch x length x vocabulary, most of InfoLM's time). Models whose head is not one child
    module beside the encoder (e.g. DistilBERT's three) get the full logits, then the rows.
    """
    heads = [m for m in model.children() if m is not model.base_model]
    if len(heads) != 1:
        return model(input_ids=input_ids).logits[rows, cols]
    hidden = model.base_model(input_ids=input_ids).last_hidden_state
    return heads[0](hidden[rows, cols])


def fisher_rao(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Fisher-Rao distance between rows of two arrays of discrete distributions.

    ``FR(p, q) = 2 arccos(sum_v sqrt(p_v q_v))``, the Bhattacharyya coefficient clipped to [0, 1]
    against rounding (Colombo et al., 2022, Sec. 3).
    """
    return 2 * np.arccos(np.clip(np.sqrt(p * q).sum(-1), 0.0, 1.0))


@register(
    "infolm",
    ("InfoLM-FisherRao", "InfoLM-R-FisherRao", "InfoLM-Sim-FisherRao"),
    family="model",
    reference=True,
    requires=("torch", "transformers"),
)
def infolm(texts: Texts, config: ScoringConfig) -> dict[str, np.ndarray]:
    """InfoLM-FisherRao, its reversed (R) and symmetrised (Sim) forms between each candidate
    and its reference (Colombo et al., 2022; see the module docstring)."""
    references = text_distributions(texts.references, config)
    candidates = text_distributions(texts.candidates, config)
    forward = fisher_rao(references, candidates)
    reverse = fisher_rao(candidates, references)
    return {
        "InfoLM-FisherRao": forward,
        "InfoLM-R-FisherRao": reverse,
        "InfoLM-Sim-FisherRao": (forward + reverse) / 2,
    }
