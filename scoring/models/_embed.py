"""Contextual token embeddings and idf weights shared by the embedding-based scorers.

BERTScore, MoverScore, BaryScore and DepthScore all start the same way: tokenize each text
(special tokens included, truncated to the model's length), run the encoder, keep the hidden
states of some layers per token. :func:`encode` does this once, batched by length
(:func:`hanna_stats.scoring.models._runtime.length_batches`), and returns per-text arrays in input
order.
:func:`idf_weights` is the corpus idf the four metrics' reference implementations share.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from math import log

import numpy as np
from hanna_stats.scoring.models._runtime import (
    batch_progress,
    length_batches,
    load_checkpoint,
    resolve_device,
)
from hanna_stats.scoring.registry import ScoringConfig


@dataclass(frozen=True)
class Encoded:
    """One text's tokens and their hidden states.

    Attributes
    ----------
    ids : numpy.ndarray
        int64 token ids, special tokens included, no padding.
    tokens : tuple of str
        The tokens as the tokenizer spells them (WordPiece continuations start with ``##``).
    hidden : numpy.ndarray
        float32, shape ``(len(layers), len(ids), hidden size)``: hidden state ``l`` is the output
        of layer ``l`` (0 = the embedding layer, as in transformers' ``hidden_states``).
    """

    ids: np.ndarray
    tokens: tuple[str, ...]
    hidden: np.ndarray


def unit(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` (any leading shape) divided by their Euclidean norm, in float64."""
    x = x.astype(np.float64)
    return x / (np.linalg.norm(x, axis=-1, keepdims=True) + 1e-30)


def max_length(tokenizer, model) -> int:
    """Tokens a text is truncated to: the tokenizer's limit, capped by the position table."""
    limit = getattr(model.config, "max_position_embeddings", None) or tokenizer.model_max_length
    return int(min(tokenizer.model_max_length, limit))


def tokenize(
    texts: Sequence[str], tokenizer, model, max_tokens: int | None = None
) -> list[list[int]]:
    """Token ids of each stripped text, special tokens included, truncated to :func:`max_length`
    (or to ``max_tokens`` when that is smaller)."""
    limit = max_length(tokenizer, model)
    limit = min(limit, max_tokens) if max_tokens else limit
    return [
        tokenizer(text.strip(), truncation=True, max_length=limit)["input_ids"] for text in texts
    ]


def _layer_stack(model) -> tuple[object, str] | None:
    """(parent module, attribute name) of the model's list of ``num_hidden_layers`` transformer
    layers (e.g. ``encoder.layer`` of BERT), or None when there is no such list (ALBERT)."""
    import torch

    count = getattr(model.config, "num_hidden_layers", None)
    for name, module in model.named_modules():
        if name and isinstance(module, torch.nn.ModuleList) and len(module) == count:
            parent, _, attribute = name.rpartition(".")
            return model.get_submodule(parent), attribute
    return None


@contextmanager
def first_layers(model, layers: Sequence[int]) -> Iterator[list[int]]:
    """Within the block, ``model`` runs only the layers up to the deepest one in ``layers``.

    This is bert-score's truncation of the encoder (Zhang et al., 2020, their package): hidden
    state :math:`l` depends only on the embeddings and layers :math:`1..l`, so stopping after the
    deepest requested layer leaves the values unchanged (for encoders whose last hidden state is
    the output of their last layer, without a final normalisation: BERT, RoBERTa, DistilBERT,
    MiniLM, DeBERTa) and skips the work of the layers above it. The full layer list is put back
    on leaving the block.

    Yields
    ------
    list of int
        ``layers`` as non-negative indices into the truncated model's ``hidden_states``
        (``layers`` unchanged where the layer list cannot be found).
    """
    import torch

    found = _layer_stack(model)
    if found is None:
        yield list(layers)
        return
    parent, attribute = found
    full = getattr(parent, attribute)
    wanted = [layer % (len(full) + 1) for layer in layers]
    if max(wanted) < len(full):
        # transformers 5 puts its hidden-state hooks on the layers at the model's first call;
        # make that call on the full model, so that later full runs still record every layer
        one_token = torch.zeros((1, 1), dtype=torch.long, device=next(model.parameters()).device)
        model(input_ids=one_token, output_hidden_states=True)
    setattr(parent, attribute, torch.nn.ModuleList(full[: max(wanted)]))
    try:
        yield wanted
    finally:
        setattr(parent, attribute, full)


def encode(
    texts: Sequence[str],
    checkpoint: str,
    config: ScoringConfig,
    layers: Sequence[int],
    desc: str,
    max_tokens: int | None = None,
) -> list[Encoded]:
    """Hidden states of ``layers`` for every token of every text.

    Parameters
    ----------
    texts : sequence of str
        Texts to encode (stripped of surrounding whitespace first, as bert-score does).
    checkpoint : str
        Encoder checkpoint, resolved by :func:`hanna_stats.scoring.models._runtime.load_checkpoint`.
    config : ScoringConfig
        Device, batch size, checkpoint overrides, progress.
    layers : sequence of int
        Indices into transformers' ``hidden_states`` (0 = embeddings; negative counts from the
        last layer).
    desc : str
        Progress-bar label.
    max_tokens : int or None
        Truncate each text to this many tokens (special tokens included) when below the model's
        own limit.

    Returns
    -------
    list of Encoded
        In the order of ``texts``. Padding does not change the values: each batch is padded
        and masked, and the model runs in ``eval()`` mode under ``torch.inference_mode``, only
        up to the deepest requested layer (:func:`first_layers`).
    """
    import torch

    tokenizer, model = load_checkpoint(checkpoint, config, "encoder")
    device = resolve_device(config)
    ids = tokenize(texts, tokenizer, model, max_tokens)
    out: list[Encoded | None] = [None] * len(ids)
    batches = length_batches([len(i) for i in ids], config.batch_size)
    with torch.inference_mode(), first_layers(model, layers) as wanted:
        for batch in batch_progress(batches, desc, config):
            padded = tokenizer.pad({"input_ids": [ids[i] for i in batch]}, return_tensors="pt")
            states = model(
                input_ids=padded["input_ids"].to(device),
                attention_mask=padded["attention_mask"].to(device),
                output_hidden_states=True,
            ).hidden_states
            stacked = torch.stack([states[layer] for layer in wanted]).float().cpu().numpy()
            for row, i in enumerate(batch):
                n = len(ids[i])
                tokens = tuple(tokenizer.convert_ids_to_tokens(ids[i]))
                out[i] = Encoded(np.asarray(ids[i], dtype=np.int64), tokens, stacked[:, row, :n])
    return out  # type: ignore[return-value]


@dataclass(frozen=True)
class Idf:
    r"""Inverse document frequency of token ids over a corpus (see :func:`idf_weights`).

    Attributes
    ----------
    table : dict of int to float
        :math:`\log((M + 1) / (\mathrm{df}(w) + 1))` for each id seen in the corpus.
    unseen : float
        :math:`\log(M + 1)`, the weight of an id the corpus does not contain.
    """

    table: dict[int, float]
    unseen: float

    def __call__(self, ids: np.ndarray) -> np.ndarray:
        """float64 idf of each id in ``ids``."""
        return np.array([self.table.get(int(i), self.unseen) for i in ids], dtype=np.float64)


def idf_weights(token_ids: Sequence[Sequence[int]]) -> Idf:
    r"""Inverse document frequency of each token id over a corpus.

    .. math:: \mathrm{idf}(w) = \log \frac{M + 1}{\mathrm{df}(w) + 1}

    with :math:`M` documents and :math:`\mathrm{df}(w)` the number of documents containing
    :math:`w`; an id absent from the corpus gets :math:`\log(M + 1)`. This is the plus-one
    smoothed idf of BERTScore (Zhang et al., 2020, Sec. 3), which MoverScore (Zhao et al., 2019)
    and BaryScore (Colombo et al., 2021) reuse. Special tokens occur in every document and so get
    weight 0.
    """
    df = Counter(i for ids in token_ids for i in set(ids))
    m = len(token_ids)
    return Idf({i: log((m + 1) / (c + 1)) for i, c in df.items()}, log(m + 1))
