"""Parse and validate the HANNA files into a :class:`~hanna_stats.store.batch.Batch`.

Naming in the store (shared by all HANNA files, so they upsert the same rows):

- system: the ``Model`` value; ``Human`` (the human-written story) has ``is_human``; its
  position is the row index in the metric files (Story ID // n_prompts in the annotations).
- input: the prompt index as text, ``"0"`` .. ``"95"`` (position = index).
- item: the Story ID as text, ``n_prompts * row_index + prompt_index``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from hanna_stats.store import batch as b
from hanna_stats.store.catalogue import (
    CRITERIA,
    HUMAN_SYSTEM,
    JUDGE_SCALE_POLICY,
    LIKERT_MAX,
    LIKERT_MIN,
    MODEL_COLUMN,
    Column,
    classify,
    slot_rater,
)
from hanna_stats.store.source import JSONError, Source, csv_records, load_json, require_columns
from hanna_stats.vocabulary import HANNA_STUDY

#: The study name HANNA's files give a store.
STUDY = HANNA_STUDY
#: HANNA's word for its items (the report's "story level").
ITEM_WORD = "story"
_CRITERION_NAMES = [name for name, _ in CRITERIA]
# Largest gap tolerated between the mean of the judge-slot ratings and the criterion column.
_SLOT_MEAN_TOLERANCE = 1e-9


@dataclass(frozen=True)
class _Wide:
    """A parsed metric-score file: one (systems x prompts) array per column."""

    models: list[str]
    n_prompts: int
    columns: dict[str, tuple[Column, np.ndarray]]


# A JSON list whose characters can only form numbers, null, NaN and Infinity: no strings,
# booleans, objects or nested lists, so numpy may convert it without further checks.
_PLAIN_NUMBERS = re.compile(r"\[[-+.,0-9eE\sNaInfityul]*\]")


def _json_numbers(cell: str) -> tuple[np.ndarray | None, str | None]:
    """Parse a cell holding a JSON list of numbers (null = missing): (float64 array, error)."""
    text = cell.strip()
    if not text:
        return None, "empty cell, expected a JSON list of numbers"
    try:
        values = load_json(text)
    except JSONError as exc:
        return None, str(exc)
    if not isinstance(values, list):
        return None, f"expected a JSON list of numbers, got {type(values).__name__}"
    if not _PLAIN_NUMBERS.fullmatch(text):
        for k, v in enumerate(values):
            if v is not None and type(v) not in (int, float):
                return None, f"expected a JSON list of numbers, element {k} is {v!r}"
    array = np.array(values, dtype=np.float64)  # None -> nan
    if np.isinf(array).any():
        k = int(np.flatnonzero(np.isinf(array))[0])
        return None, f"expected finite numbers, element {k} is {values[k]!r}"
    return array, None


def _refuse_cells(
    source: Source,
    bad: np.ndarray,
    header: str,
    models: list[str],
    describe: Callable[[int, int], str],
) -> None:
    """Raise at the first (system row i, list position p) where ``bad`` holds.

    ``describe(i, p)`` words the problem; the list position is appended.
    """
    if bad.any():
        i, p = (int(x) for x in np.argwhere(bad)[0])
        raise source.error(
            f"{describe(i, p)} at list position {p}",
            row=i + 1,
            column=header,
            context=f"{MODEL_COLUMN}={models[i]}",
        )


def _likert_check(source: Source, values: np.ndarray, header: str, models: list[str]) -> None:
    """Refuse values outside the Likert scale (NaN = missing is allowed)."""
    _refuse_cells(
        source,
        (values < LIKERT_MIN) | (values > LIKERT_MAX),
        header,
        models,
        lambda i, p: (
            f"expected Likert values from {LIKERT_MIN:g} to {LIKERT_MAX:g}, got {values[i, p]:g}"
        ),
    )


def _parse_wide(source: Source, roles: set[str]) -> _Wide:
    """Parse a HANNA metric-score file whose columns may only have the given roles."""
    header, rows = csv_records(source)
    require_columns(source, header, [MODEL_COLUMN, *_CRITERION_NAMES])
    model_at = header.index(MODEL_COLUMN)
    kinds: dict[int, Column] = {}
    position = 0
    for j, name in enumerate(header):
        if j == model_at:
            continue
        column = classify(name, position)
        position += 1
        if column is None or column.role not in roles:
            what = "a HANNA criterion or metric column ('<name> <symbol>', e.g. 'BLEU Ξ§')"
            if column is not None:
                what += ": it belongs to hanna_metric_scores_llm.csv (format hanna-llm)"
            raise source.error(f"unexpected column, not {what}", column=name)
        kinds[j] = column

    models: list[str] = []
    first_row: dict[str, int] = {}
    for i, row in enumerate(rows, start=1):
        model = row[model_at].strip()
        if not model:
            raise source.error("empty Model name", row=i, column=MODEL_COLUMN)
        if model in first_row:
            raise source.error(
                f"duplicate Model {model!r} (also row {first_row[model]})",
                row=i,
                column=MODEL_COLUMN,
            )
        first_row[model] = i
        models.append(model)

    n_prompts: int | None = None
    parsed: dict[int, list[np.ndarray]] = {j: [] for j in kinds}
    for i, row in enumerate(rows, start=1):
        context = f"{MODEL_COLUMN}={models[i - 1]}"
        lists: dict[int, np.ndarray] = {}
        for j in kinds:
            values, error = _json_numbers(row[j])
            if error:
                raise source.error(error, row=i, column=header[j], context=context)
            lists[j] = values
        if n_prompts is None:
            n_prompts = len(next(iter(lists.values())))
        lengths = {len(v) for v in lists.values()}
        if i > 1 and len(lengths) == 1 and n_prompts not in lengths:
            raise source.error(
                f"lists not aligned across systems: every list in this row has "
                f"{lengths.pop()} numbers, row 1 has {n_prompts}",
                row=i,
                context=context,
            )
        for j, values in lists.items():
            if len(values) != n_prompts:
                raise source.error(
                    f"expected a JSON list of {n_prompts} numbers, got {len(values)}",
                    row=i,
                    column=header[j],
                    context=context,
                )
            parsed[j].append(values)
    if not n_prompts:
        raise source.error("the lists hold no numbers (0 prompts)", row=1)

    columns: dict[str, tuple[Column, np.ndarray]] = {}
    for j, column in kinds.items():
        values = np.stack(parsed[j])
        if column.role in ("criterion", "slot"):
            _likert_check(source, values, header[j], models)
        columns[header[j]] = (column, values)
    return _Wide(models, n_prompts, columns)


def _structure(wide: _Wide) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Systems, inputs and items frames; items are in (system, prompt) row-major order."""
    n_sys, n = len(wide.models), wide.n_prompts
    systems = b.frame(
        b.SYSTEMS,
        {
            "name": wide.models,
            "is_human": [m == HUMAN_SYSTEM for m in wide.models],
            "position": list(range(n_sys)),
        },
    )
    inputs = b.frame(b.INPUTS, {"name": [str(p) for p in range(n)], "position": list(range(n))})
    items = b.frame(
        b.ITEMS,
        {
            "name": pl.int_range(n_sys * n, eager=True).cast(pl.String),
            "input": inputs["name"].gather(np.tile(np.arange(n), n_sys)),
            "system": pl.Series(wide.models).gather(np.repeat(np.arange(n_sys), n)),
            "row": np.repeat(np.arange(1, n_sys + 1), n),
        },
    )
    return systems, inputs, items


def _slot_ratings(source: Source, wide: _Wide, item_names: pl.Series) -> pl.DataFrame:
    """Judge-slot ratings, checked against the criterion averages."""
    by_criterion: dict[str, dict[int, tuple[str, np.ndarray]]] = {}
    for header, (column, values) in wide.columns.items():
        if column.role == "slot":
            by_criterion.setdefault(column.measure["name"], {})[column.slot] = (header, values)
    parts = []
    for criterion, slots in by_criterion.items():
        expected = list(range(1, max(slots) + 1))
        if sorted(slots) != expected:
            missing = next(k for k in expected if k not in slots)
            abbr = wide.columns[criterion][0].measure["abbreviation"]
            raise source.error("missing judge-slot column", column=f"Human {missing} {abbr}")
        stacked = np.stack([slots[k][1] for k in expected])
        mean = stacked.sum(axis=0) / len(expected)
        average = wide.columns[criterion][1]
        _refuse_cells(
            source,
            np.abs(mean - average) > _SLOT_MEAN_TOLERANCE,
            criterion,
            wide.models,
            lambda i, p, mean=mean, average=average: (
                f"the judge-slot ratings average {mean[i, p]:g} "
                f"but the column holds {average[i, p]:g}"
            ),
        )
        for k in expected:
            values = slots[k][1].ravel()
            keep = ~np.isnan(values)
            parts.append(
                pl.DataFrame(
                    {
                        "item": item_names.filter(keep),
                        "rater": slot_rater(k),
                        "measure": criterion,
                        "score": values[keep],
                    }
                )
            )
    if not parts:
        return b.frame(b.RATINGS)
    return b.frame(b.RATINGS, pl.concat(parts).to_dict())


def parse_metric_scores(source: Source, *, llm: bool = False) -> b.Batch:
    """Validate a HANNA metric-score file and build its batch.

    Parameters
    ----------
    source : Source
        ``hanna_metric_scores.csv`` or (``llm=True``) ``hanna_metric_scores_llm.csv``.
    llm : bool
        Also accept and store the LLM file's judge-slot ratings and LLM-judge measures.

    Returns
    -------
    Batch
        Systems, inputs, items, the measure catalogue, item-level scores (criterion averages,
        metrics, LLM judges; NaN or null = missing is stored as NULL) and judge-slot ratings.
        The LLM file's scale policy is ``keep`` (:data:`~hanna_stats.store.catalogue.
        JUDGE_SCALE_POLICY`): its judge values below 1 are stored as published, and counted.

    Raises
    ------
    InputError
        On any malformed or inconsistent content.
    """
    roles = {"criterion", "metric"} | ({"llm-judge", "slot", "derived"} if llm else set())
    wide = _parse_wide(source, roles)
    systems, inputs, items = _structure(wide)
    item_names = items["name"]
    stored = [
        (column.measure, values)
        for column, values in wide.columns.values()
        if column.role in ("criterion", "metric", "llm-judge")
    ]
    measures = b.frame(b.MEASURES, [[m[c] for c in b.MEASURES] for m, _ in stored])
    n_cells = item_names.len()
    scores = b.frame(
        b.SCORES,
        {
            "item": item_names.gather(np.tile(np.arange(n_cells), len(stored))),
            "measure": measures["name"].gather(np.repeat(np.arange(len(stored)), n_cells)),
            "value": np.concatenate([v.ravel() for _, v in stored]),
        },
    ).with_columns(pl.col("value").fill_nan(None))
    ratings = _slot_ratings(source, wide, item_names)
    slots = ratings["rater"].unique(maintain_order=True).to_list()
    raters = b.frame(b.RATERS, {"name": slots, "kind": ["slot"] * len(slots)})
    return b.Batch(
        systems,
        inputs,
        items,
        measures,
        raters,
        scores,
        ratings,
        scale_policy=JUDGE_SCALE_POLICY if llm else "error",
    )
