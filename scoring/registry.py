"""The metric registry: every scorer, the measures it writes and their catalogue attributes.

A *scorer* computes one or more measures in one pass (``rouge`` writes ROUGE-1 Recall, ...,
ROUGE-SU* F-Score). Scorers register themselves with :func:`register` when their module is
imported; :mod:`scoring` imports every scorer module, so :data:`REGISTRY` is complete after
``import scoring``. Heavy libraries (torch, transformers, sacrebleu) are imported inside the
compute functions, never at registration, so listing the registry is cheap and works without them.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

FAMILIES = ("string", "embedding", "model")
# The paper's symbols, as in the HANNA column headers (see hanna_stats.store.catalogue).
_REFERENCE_SYMBOL = {True: "Ξ", False: "¤"}
_FAMILY_SYMBOL = {"string": "§", "embedding": "ε", "model": "Δ"}


@dataclass(frozen=True)
class Texts:
    """Aligned texts to score: one entry per item.

    Attributes
    ----------
    prompts : tuple of str
        The input (the story prompt); reference-free metrics compare the candidate with it.
    references : tuple of str
        The human reference story; reference-based metrics compare the candidate with it.
    candidates : tuple of str
        The story being scored.
    """

    prompts: tuple[str, ...]
    references: tuple[str, ...]
    candidates: tuple[str, ...]

    def __post_init__(self) -> None:
        n = len(self.candidates)
        if len(self.prompts) != n or len(self.references) != n:
            raise ValueError(
                f"Texts: prompts, references and candidates must have the same length "
                f"(got {len(self.prompts)}, {len(self.references)}, {n})"
            )

    @classmethod
    def of(
        cls, prompts: Sequence[str], references: Sequence[str], candidates: Sequence[str]
    ) -> Texts:
        """Build from any sequences of strings."""
        return cls(tuple(prompts), tuple(references), tuple(candidates))

    def __len__(self) -> int:
        return len(self.candidates)


@dataclass(frozen=True)
class ScoringConfig:
    """Options shared by all scorers.

    Attributes
    ----------
    hanna_compat : bool
        Reproduce the published HANNA values, quirks included (see each scorer's docstring);
        False gives the clean definition.
    device : str or None
        torch device for model-based scorers (``"cpu"``, ``"cuda"``); None picks CUDA when present.
    batch_size : int
        Batch size for model-based scorers.
    models : Mapping[str, str]
        Checkpoint overrides, ``{default model name: name or local path}``.
    progress : bool
        Show progress bars (only on a terminal; see ``hanna_stats._progress``).
    """

    hanna_compat: bool = False
    device: str | None = None
    batch_size: int = 32
    models: Mapping[str, str] = field(default_factory=dict)
    progress: bool = True


#: ``compute(texts, config) -> {measure name: float64 array of len(texts)}``
ComputeFn = Callable[[Texts, ScoringConfig], dict[str, np.ndarray]]


@dataclass(frozen=True)
class Scorer:
    """One registered scorer.

    Attributes
    ----------
    name : str
        Registry key (e.g. ``"rouge"``).
    measures : tuple of str
        Measure names it writes, spelled as in the HANNA files (without the symbol).
    family : str
        ``"string"``, ``"embedding"`` or ``"model"`` (the paper's $, epsilon, Delta).
    reference : bool
        True if the candidate is compared with the reference story, False if with the prompt.
    requires : tuple of str
        Importable modules the scorer needs; ``available`` is False when one is missing.
    compute : callable
        See :data:`ComputeFn`.
    """

    name: str
    measures: tuple[str, ...]
    family: str
    reference: bool
    requires: tuple[str, ...]
    compute: ComputeFn

    @property
    def symbol(self) -> str:
        """The paper's two-character symbol, e.g. ``"Ξ§"``."""
        return _REFERENCE_SYMBOL[self.reference] + _FAMILY_SYMBOL[self.family]

    @property
    def available(self) -> bool:
        """Whether every module in ``requires`` can be imported."""
        return all(importlib.util.find_spec(module) is not None for module in self.requires)


REGISTRY: dict[str, Scorer] = {}


def register(
    name: str,
    measures: Sequence[str],
    *,
    family: str,
    reference: bool,
    requires: Sequence[str] = (),
) -> Callable[[ComputeFn], ComputeFn]:
    """Decorator registering ``compute`` as scorer ``name`` (see :class:`Scorer`)."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")

    def decorate(compute: ComputeFn) -> ComputeFn:
        if name in REGISTRY:
            raise ValueError(f"scorer {name!r} is registered twice")
        taken = {m for s in REGISTRY.values() for m in s.measures} & set(measures)
        if taken:
            raise ValueError(f"measures {sorted(taken)} already belong to another scorer")
        REGISTRY[name] = Scorer(name, tuple(measures), family, reference, tuple(requires), compute)
        return compute

    return decorate


def scorer_of(measure: str) -> Scorer:
    """The scorer that writes ``measure``; ValueError naming the known ones otherwise."""
    for scorer in REGISTRY.values():
        if measure in scorer.measures:
            return scorer
    raise ValueError(f"unknown metric {measure!r}; see `python -m hanna_stats score --list`")


def list_metrics() -> pl.DataFrame:
    """The registry as a table, one row per measure.

    Returns
    -------
    polars.DataFrame
        Columns ``metric, scorer, family, reference, symbol, available``; ``reference`` is
        ``"based"`` or ``"free"``.
    """
    rows = [
        {
            "metric": measure,
            "scorer": s.name,
            "family": s.family,
            "reference": "based" if s.reference else "free",
            "symbol": s.symbol,
            "available": s.available,
        }
        for s in REGISTRY.values()
        for measure in s.measures
    ]
    schema = {
        "metric": pl.String,
        "scorer": pl.String,
        "family": pl.String,
        "reference": pl.String,
        "symbol": pl.String,
        "available": pl.Boolean,
    }
    return pl.DataFrame(rows, schema=schema)
