"""Shared runtime of the embedding- and model-based scorers: device, checkpoints, batching.

Every model scorer goes through these few functions, so that device choice, checkpoint lookup,
half precision, batching by length and progress behave the same everywhere:

* :func:`resolve_device` -- ``config.device``, else CUDA when present, else CPU.
* :func:`load_checkpoint` -- tokenizer and model from a hub name or a local path, overridable
  per name with ``ScoringConfig.models`` (``--model NAME=PATH`` on the CLI), loaded once per
  process; :class:`MissingCheckpointError` says which checkpoint is missing and how to provide it.
* :func:`length_batches` -- index batches of similar lengths (less padding); callers put the
  results back in input order.
* :func:`batch_progress` -- the batches wrapped in a progress bar (terminal only).
* :func:`seeded_generator` -- an explicit CPU ``torch.Generator`` for metrics that sample.

torch and transformers are imported inside the functions, never at
``import hanna_stats.scoring``, so listing the registry stays fast and works without them.
Results on CPU are deterministic: the models run in ``eval()`` mode (no dropout) under
``torch.inference_mode``, in float32, and any sampling takes its randomness from
:func:`seeded_generator`. On CUDA, models are loaded in bfloat16 (or float16 where bfloat16 is
unsupported) when the caller allows half precision; this path exists but is not exercised by the
test suite (no GPU in CI).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np
from hanna_stats.scoring.registry import ScoringConfig

from hanna_stats.progress import progress

if TYPE_CHECKING:
    import torch

#: ``head`` argument of :func:`load_checkpoint` -> transformers auto class.
HEADS = {
    "encoder": "AutoModel",
    "masked-lm": "AutoModelForMaskedLM",
    "seq2seq": "AutoModelForSeq2SeqLM",
    "causal-lm": "AutoModelForCausalLM",
    "question-answering": "AutoModelForQuestionAnswering",
}


class MissingCheckpointError(ValueError):
    """A checkpoint could not be loaded; the message names it and the ways to provide it."""


def resolve_device(config: ScoringConfig) -> torch.device:
    """The torch device a scorer runs on.

    Parameters
    ----------
    config : ScoringConfig
        ``config.device`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...) wins when set.

    Returns
    -------
    torch.device
        ``config.device`` if set, else ``cuda`` when ``torch.cuda.is_available()``, else ``cpu``.
    """
    import torch

    if config.device:
        return torch.device(config.device)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _half_dtype(device: torch.device) -> torch.dtype:
    """bfloat16 on CUDA devices that support it, float16 on older ones, float32 off CUDA."""
    import torch

    if device.type != "cuda":
        return torch.float32
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


def load_checkpoint(
    name: str, config: ScoringConfig, head: str = "encoder", *, half: bool = True
) -> tuple[Any, Any]:
    """Tokenizer and model of checkpoint ``name``, on the scorer's device, in ``eval()`` mode.

    Parameters
    ----------
    name : str
        The checkpoint the metric's paper uses (e.g. ``"roberta-large"``); the path actually
        loaded is ``config.models.get(name, name)``, a hub name or a local directory.
    config : ScoringConfig
        Supplies ``models`` (overrides) and ``device`` (see :func:`resolve_device`).
    head : str
        One of :data:`HEADS`: ``"encoder"`` (``AutoModel``), ``"masked-lm"``, ``"seq2seq"``,
        ``"causal-lm"``, ``"question-answering"``.
    half : bool
        Allow half precision on CUDA (bfloat16, or float16 where unsupported). Ignored on CPU,
        which always runs float32.

    Returns
    -------
    tokenizer, model
        Cached per (path, head, device, dtype) for the life of the process.

    Raises
    ------
    MissingCheckpointError
        When transformers cannot find or read the checkpoint. Nothing is downloaded when
        ``HF_HUB_OFFLINE`` is set (the files must already be in the Hugging Face cache).
    """
    if head not in HEADS:
        raise ValueError(f"head must be one of {sorted(HEADS)}, got {head!r}")
    device = resolve_device(config)
    dtype = _half_dtype(device) if half else None
    return _load(name, config.models.get(name, name), head, str(device), dtype)


@cache
def _load(name: str, path: str, head: str, device: str, dtype: Any) -> tuple[Any, Any]:
    import transformers

    transformers.utils.logging.disable_progress_bar()  # library code stays quiet
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() not in ("", "0", "false", "no")
    kwargs: dict[str, Any] = {"local_files_only": offline}
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(path, **kwargs)
        model_class = getattr(transformers, HEADS[head])
        model = model_class.from_pretrained(path, **kwargs, **({"dtype": dtype} if dtype else {}))
    except OSError as exc:
        shown = name if path == name else f"{name} (given as {path})"
        raise MissingCheckpointError(
            f"checkpoint {shown} could not be loaded ({exc.__class__.__name__}: "
            f"{str(exc).splitlines()[0] if str(exc) else 'not found'}). Provide it in one of "
            f"three ways: put it in the Hugging Face cache (HF_HOME, e.g. by running "
            f"`hf download {name}` where there is network), pass a local "
            f"directory saved with save_pretrained, or on the CLI `--model {name}=PATH` "
            f"(ScoringConfig.models)"
        ) from exc
    return tokenizer, model.to(device).eval()


def length_batches(lengths: Sequence[int] | np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Index batches of items with similar lengths.

    Items are sorted by length (stable, longest first, so an out-of-memory error shows on the
    first batch) and cut into consecutive runs of ``batch_size``; padding to the longest item
    of a batch then wastes little.

    Parameters
    ----------
    lengths : sequence of int
        Length (e.g. in tokens or characters) of each item.
    batch_size : int
        Maximum items per batch, at least 1.

    Returns
    -------
    list of numpy.ndarray
        int64 index arrays into ``lengths``; together a permutation of ``range(len(lengths))``.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def batch_progress(
    batches: list[np.ndarray], desc: str, config: ScoringConfig
) -> Iterator[np.ndarray]:
    """``batches`` behind a progress bar when ``config.progress`` (and stderr is a terminal)."""
    return progress(batches, desc, total=len(batches)) if config.progress else iter(batches)


def seeded_generator(seed: int) -> torch.Generator:
    """A CPU ``torch.Generator`` seeded with ``seed``: the one source of randomness for metrics
    that sample (e.g. BLANC's masking), so that results repeat exactly."""
    import torch

    return torch.Generator().manual_seed(seed)
