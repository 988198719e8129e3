"""The metric registry: every scorer, the measures it writes and their catalogue attributes.

A *scorer* computes one or more measures in one pass (``rouge`` writes ROUGE-1 Recall, ...,
ROUGE-SU* F-Score). Scorers register themselves with :func:`register` when their module is
imported; :mod:`hanna_stats.scoring` imports every scorer module, so :data:`REGISTRY` is complete
after ``import hanna_stats.scoring``. Heavy libraries (torch, transformers, sacrebleu) are
imported inside the compute functions, never at registration, so listing the registry is cheap
and works without them.
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
        The (first) human reference of each item; reference-based metrics compare the
        candidate with it.
    candidates : tuple of str
        The story being scored.
    extra_references : tuple of tuple of str
        The further references of each item (SummEval has 11 per summary); empty tuples when
        each item has one (the default). Only scorers registered with a ``multi_reference``
        rule read them; :func:`hanna_stats.scoring.run.score` refuses texts that have any for the
        others
        (:attr:`Scorer.single_reference`).
    """

    prompts: tuple[str, ...]
    references: tuple[str, ...]
    candidates: tuple[str, ...]
    extra_references: tuple[tuple[str, ...], ...] = ()

    def __post_init__(self) -> None:
        n = len(self.candidates)
        if not self.extra_references:
            object.__setattr__(self, "extra_references", ((),) * n)
        if len(self.prompts) != n or len(self.references) != n or len(self.extra_references) != n:
            raise ValueError(
                f"Texts: prompts, references, extra_references and candidates must have the "
                f"same length (got {len(self.prompts)}, {len(self.references)}, "
                f"{len(self.extra_references)}, {n})"
            )

    @classmethod
    def of(
        cls,
        prompts: Sequence[str],
        references: Sequence[str | Sequence[str]],
        candidates: Sequence[str],
    ) -> Texts:
        """Build from any sequences; an entry of ``references`` is one text or a non-empty
        sequence of texts (the item's references, first one first)."""
        refs = as_reference_sets(references)
        return cls(
            tuple(prompts), tuple(r[0] for r in refs), tuple(candidates), tuple(r[1:] for r in refs)
        )

    def __len__(self) -> int:
        return len(self.candidates)

    @property
    def multi_reference(self) -> bool:
        """Whether some item has more than one reference."""
        return any(self.extra_references)

    @property
    def reference_sets(self) -> tuple[tuple[str, ...], ...]:
        """Each item's references, first one first."""
        pairs = zip(self.references, self.extra_references, strict=True)
        return tuple((first, *more) for first, more in pairs)

    def reference_groups(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """All references, item after item, as :func:`group_references` returns them."""
        return group_references(self.reference_sets)


def as_reference_sets(references: Sequence[str | Sequence[str]]) -> list[tuple[str, ...]]:
    """Each entry of ``references`` (one text, or a sequence of an item's texts) as a tuple.

    Raises
    ------
    ValueError
        If an entry is an empty sequence.
    """
    sets = [(r,) if isinstance(r, str) else tuple(r) for r in references]
    if not all(sets):
        raise ValueError("every item needs at least one reference text")
    return sets


def group_references(
    references: Sequence[str | Sequence[str]],
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """All references of :func:`as_reference_sets` ``(references)``, item after item (first
    reference first), the ``len(references) + 1`` offsets (item i's references are
    ``refs[offsets[i]:offsets[i + 1]]``) and the item of each reference (int64 arrays)."""
    sets = as_reference_sets(references)
    sizes = np.array([len(s) for s in sets], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    return [r for s in sets for r in s], offsets, np.repeat(np.arange(len(sets)), sizes)


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
        Show progress bars (only on a terminal; see ``hanna_stats.progress``).
    split_sentences : bool
        Split every reference and candidate into sentences, one per line, before ROUGE reads
        it (:func:`hanna_stats.scoring.strings.rouge.split_sentences`); changes the summary-level
        ROUGE-L
        and ROUGE-W, whose units are lines.
    lowercase : bool
        Novelty-n and Repetition-n on lowercased tokens, as SummEval's current
        ``DataStatsMetric(case=False)``; default case-sensitive, as HANNA's published values.
    """

    hanna_compat: bool = False
    device: str | None = None
    batch_size: int = 32
    models: Mapping[str, str] = field(default_factory=dict)
    progress: bool = True
    split_sentences: bool = False
    lowercase: bool = False


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
    multi_reference : str or None
        How several references per item combine, in a few words naming the paper or reference
        implementation followed and its rule (e.g. ``"SummEval: mean over references"``);
        None: one reference per item only.
    """

    name: str
    measures: tuple[str, ...]
    family: str
    reference: bool
    requires: tuple[str, ...]
    compute: ComputeFn
    multi_reference: str | None = None

    @property
    def symbol(self) -> str:
        """The paper's two-character symbol, e.g. ``"Ξ§"``."""
        return _REFERENCE_SYMBOL[self.reference] + _FAMILY_SYMBOL[self.family]

    @property
    def single_reference(self) -> bool:
        """Whether the scorer reads a reference and only one per item (no ``multi_reference``):
        texts with several references per item are refused (:func:`hanna_stats.scoring.io.to_texts`,
        :func:`hanna_stats.scoring.run.score`)."""
        return self.reference and self.multi_reference is None

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
    multi_reference: str | None = None,
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
        REGISTRY[name] = Scorer(
            name, tuple(measures), family, reference, tuple(requires), compute, multi_reference
        )
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
        Columns ``metric, scorer, family, reference, symbol, available, multi_reference``;
        ``reference`` is ``"based"`` or ``"free"``; ``multi_reference`` how several references
        per item combine (null: one reference only).
    """
    rows = [
        {
            "metric": measure,
            "scorer": s.name,
            "family": s.family,
            "reference": "based" if s.reference else "free",
            "symbol": s.symbol,
            "available": s.available,
            "multi_reference": s.multi_reference,
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
        "multi_reference": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)
