"""Compute registered metrics over texts, as arrays, a tidy table or measures in the store."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
from hanna_stats.scoring.io import ScoringInput, read_store_texts, to_texts
from hanna_stats.scoring.registry import REGISTRY, ScoringConfig, Texts, scorer_of

from hanna_stats.progress import progress
from hanna_stats.store.scores import scored_pairs, write_scores

TIDY_COLUMNS = ("item", "input", "system", "metric", "value")


def resolve_metrics(spec: str | Sequence[str]) -> list[str]:
    """Measure names from ``"all"``, ``"all-string"`` or a comma-separated list.

    A list may name measures (``"ROUGE-1 Recall"``) or scorers (``"rouge"``: all its measures).

    Raises
    ------
    ValueError
        Naming an unknown metric.
    """
    names = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else list(spec)
    chosen: list[str] = []
    for name in filter(None, names):
        if name in ("all", "all-string"):
            chosen += [
                m
                for s in REGISTRY.values()
                if name == "all" or s.family == "string"
                for m in s.measures
            ]
        elif name in REGISTRY:
            chosen += REGISTRY[name].measures
        else:
            scorer_of(name)  # ValueError naming the unknown metric
            chosen.append(name)
    if not chosen:
        raise ValueError("no metric chosen")
    return list(dict.fromkeys(chosen))


def score(texts: Texts, metrics: Sequence[str], config: ScoringConfig) -> dict[str, np.ndarray]:
    """Compute ``metrics`` for every item of ``texts``.

    Each scorer runs once for all the measures it writes.

    Parameters
    ----------
    texts : Texts
        Prompts, references and candidates.
    metrics : sequence of str
        Measure names (see :func:`resolve_metrics` and ``python -m hanna_stats score --list``).
    config : ScoringConfig
        Options passed to every scorer.

    Returns
    -------
    dict of str to ndarray
        ``{measure: float64 array of len(texts)}`` in the order of ``metrics``.

    Raises
    ------
    ValueError
        If a metric is unknown, its scorer's modules are not installed, or it takes one
        reference per item (:attr:`~hanna_stats.scoring.registry.Scorer.single_reference`) and an
        item of
        ``texts`` has several.
    """
    scorers = {scorer_of(m).name: scorer_of(m) for m in metrics}
    several = next((i for i, more in enumerate(texts.extra_references) if more), None)
    for s in scorers.values():
        if s.single_reference and several is not None:
            raise ValueError(
                f"scorer {s.name!r} takes one reference per item (item {several} has "
                f"{1 + len(texts.extra_references[several])}); score it with one reference"
            )
    return _compute(texts, metrics, config)


def _compute(texts: Texts, metrics: Sequence[str], config: ScoringConfig) -> dict[str, np.ndarray]:
    """:func:`score` without the reference check (:func:`score_input` has made it already)."""
    scorers = {scorer_of(m).name: scorer_of(m) for m in metrics}
    for s in scorers.values():
        if not s.available:
            raise ValueError(f"scorer {s.name!r} needs the modules {', '.join(s.requires)}")
    values: dict[str, np.ndarray] = {}
    chosen = list(scorers.values())
    for s in progress(chosen, desc="scorers") if config.progress else chosen:
        values.update(s.compute(texts, config))
    return {m: np.asarray(values[m], dtype=np.float64) for m in metrics}


def score_input(
    data: ScoringInput,
    metrics: Sequence[str],
    config: ScoringConfig,
    *,
    skip: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Score the items of ``data`` and return a tidy table (:data:`TIDY_COLUMNS`).

    Parameters
    ----------
    data : ScoringInput
        Texts read by :func:`hanna_stats.scoring.io.read_texts`.
    metrics : sequence of str
        Measure names.
    config : ScoringConfig
        Scorer options.
    skip : polars.DataFrame, optional
        ``item, measure`` pairs not to compute; a scorer then runs only on the items that
        still lack one of its measures (CIDEr's document frequencies come from those items).

    Returns
    -------
    polars.DataFrame
        One row per (item, metric) computed, items in file order.

    Raises
    ------
    InputError
        If a reference-based metric is asked for and a row has no reference, or one that
        takes a single reference and a row has several.
    """
    df = data.frame
    done = set() if skip is None else set(skip.select("item", "measure").iter_rows())
    by_scorer: dict[str, list[str]] = {}
    for m in metrics:
        by_scorer.setdefault(scorer_of(m).name, []).append(m)
    parts = []
    for name, measures in by_scorer.items():
        todo = [any((i, m) not in done for m in measures) for i in df["item"]]
        rows = df.filter(pl.Series(todo, dtype=pl.Boolean))
        if rows.height == 0:
            continue
        scorer = REGISTRY[name]
        texts = to_texts(
            ScoringInput(data.source, rows, data.stored),
            need_reference=scorer.reference,
            single_reference=name if scorer.single_reference else None,
            need_prompt=not scorer.reference,
        )
        values = _compute(texts, measures, config)
        for m in measures:
            part = rows.select("item", "input", "system").with_columns(
                pl.lit(m).alias("metric"), pl.Series("value", values[m])
            )
            parts.append(part.filter([(i, m) not in done for i in part["item"]]))
    if not parts:
        schema = dict.fromkeys(TIDY_COLUMNS[:4], pl.String) | {"value": pl.Float64}
        return pl.DataFrame(schema=schema)
    return pl.concat(parts)


def score_into_store(
    con: duckdb.DuckDBPyConnection,
    data: ScoringInput,
    metrics: Sequence[str],
    config: ScoringConfig,
    *,
    force: bool = False,
    extend: bool = False,
) -> pl.DataFrame:
    """Score ``data`` and write the values as measures into the store, in one transaction.

    (item, measure) pairs already holding a value are skipped unless ``force`` (which replaces
    them). Texts of another study than the store's (none of their inputs in it) need
    ``extend``. Items are named
    as in the input (HANNA files as the store names HANNA items, so recomputed and published
    metrics share items). Measures get family, reference_based and symbol from the registry
    and kind ``metric``; measures already stored keep their catalogue rows.

    Returns
    -------
    polars.DataFrame
        The tidy table of the values written (empty when everything was already scored).
    """
    skip = None if force else scored_pairs(con, list(metrics))
    tidy = score_input(data, metrics, config, skip=skip)
    if tidy.height == 0:
        return tidy
    catalogue = pl.DataFrame(
        {
            "name": list(metrics),
            "family": [scorer_of(m).family for m in metrics],
            "reference_based": [scorer_of(m).reference for m in metrics],
            "symbol": [scorer_of(m).symbol for m in metrics],
        }
    )
    write_scores(
        con,
        data.source,
        data.frame,
        tidy.select("item", pl.col("metric").alias("measure"), "value"),
        catalogue,
        extend=extend,
        replace=force,
    )
    return tidy


def score_store(
    con: duckdb.DuckDBPyConnection,
    path: str | Path,
    metrics: Sequence[str],
    config: ScoringConfig,
    *,
    force: bool = False,
) -> pl.DataFrame:
    """Score the texts the store ``con`` holds and write the values into it, in one transaction.

    Every item's output text (``items.text``; none: an empty text) is scored against all its
    references (``item_references``, first one first; multi-reference metrics combine them by
    their rule, single-reference ones refuse items with several) and, for reference-free
    metrics, its input's text. Then as :func:`score_into_store`: (item, measure) pairs already
    holding a value are skipped unless ``force``, so a re-run writes nothing new; the items,
    inputs and texts are the store's own, so nothing else changes.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        A store opened for writing.
    path : str or Path
        Its file (named in errors and, as ``<name> (stored texts)``, in ``ingests``).

    Returns
    -------
    polars.DataFrame
        The tidy table of the values written.

    Raises
    ------
    InputError
        If the store holds no item, a reference-based metric meets an item without reference,
        a single-reference one an item with several, or a reference-free one an item whose input
        has no text (naming the item); nothing is written then.
    """
    return score_into_store(con, read_store_texts(con, path), metrics, config, force=force)
