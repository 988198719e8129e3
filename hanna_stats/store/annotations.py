"""Parse and validate the raw HANNA annotation file (one row per story and worker).

``hanna_stories_annotations.csv`` (commit 282f2753 of dig-team/hanna-benchmark-asg; no checksum
is pinned) has the columns Story ID, Prompt, Human, Story, Model, the six criteria, Worker ID,
Assignment ID, Work time in seconds and Name. It uses the naming of
:mod:`hanna_stats.store.hanna`, so its items are those of the metric-score files.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from hanna_stats.store import batch as b
from hanna_stats.store.catalogue import (
    CRITERIA,
    HUMAN_SYSTEM,
    MODEL_COLUMN,
    classify,
)
from hanna_stats.store.scales import check_likert
from hanna_stats.store.source import (
    Source,
    csv_records,
    integer_cell,
    require_columns,
    shorten,
)

_CRITERION_NAMES = [name for name, _ in CRITERIA]


STORY_ID, PROMPT, REFERENCE, STORY = "Story ID", "Prompt", "Human", "Story"
WORKER, ASSIGNMENT, WORK_TIME = "Worker ID", "Assignment ID", "Work time in seconds"
# The documented 'Name' column is not needed and not stored.
ANNOTATION_COLUMNS = [
    STORY_ID,
    PROMPT,
    REFERENCE,
    STORY,
    MODEL_COLUMN,
    *_CRITERION_NAMES,
    WORKER,
    ASSIGNMENT,
    WORK_TIME,
]


@dataclass(frozen=True)
class _Story:
    row: int
    model: str
    prompt: str
    story: str
    reference: str


def _number(source: Source, text: str, row: int, column: str) -> float | None:
    """Parse a numeric cell; empty = None."""
    text = text.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        shown = shorten(repr(text))
        raise source.error(f"expected a number, got {shown}", row=row, column=column) from None
    if not math.isfinite(value):
        shown = shorten(repr(text))
        raise source.error(f"expected a finite number, got {shown}", row=row, column=column)
    return value


def _first_conflict(
    source: Source,
    stories: dict[int, _Story],
    key: Callable[[int, _Story], Hashable],
    value: Callable[[int, _Story], object],
    message: Callable[[int, int, Hashable], str],
) -> None:
    """Raise at the first story whose key maps to a second value.

    ``message(story_id, earlier_story_id, key)`` words the error.
    """
    seen: dict[object, tuple[int, object]] = {}
    for sid, story in stories.items():
        k, v = key(sid, story), value(sid, story)
        other = seen.setdefault(k, (sid, v))
        if other[1] != v:
            raise source.error(message(sid, other[0], k), row=story.row, column=STORY_ID)


def parse_annotations(source: Source) -> b.Batch:
    """Validate the raw HANNA annotation file and build its batch.

    One row per (story, worker). Items are named by Story ID, systems by Model, inputs by the
    prompt index Story ID mod n_prompts (n_prompts = number of distinct Prompt texts), which must
    map to exactly one Prompt text and back; Story ID // n_prompts must identify the Model (it is
    the system's row in the metric files). Texts go to ``inputs.text`` (Prompt), ``items.text``
    (Story) and ``items.reference`` (Human). Ratings are Likert 1..5, whole numbers (an empty
    cell = no rating).

    Parameters
    ----------
    source : Source
        ``hanna_stories_annotations.csv`` or a file of the same columns.

    Returns
    -------
    Batch
        Systems, inputs, items with texts, the six criteria, workers as raters and their
        ratings with work time and assignment id.

    Raises
    ------
    InputError
        On any malformed or inconsistent content.
    """
    header, rows = csv_records(source)
    require_columns(source, header, ANNOTATION_COLUMNS)
    at = {name: header.index(name) for name in ANNOTATION_COLUMNS}
    stories: dict[int, _Story] = {}
    rated: dict[tuple[int, str], int] = {}
    ratings: list[tuple] = []
    for i, row in enumerate(rows, start=1):
        sid = integer_cell(source, row[at[STORY_ID]], row=i, column=STORY_ID, minimum=0)
        for column in (MODEL_COLUMN, WORKER):
            if not row[at[column]].strip():
                raise source.error("empty value", row=i, column=column)
        worker = row[at[WORKER]].strip()
        story = _Story(
            i, row[at[MODEL_COLUMN]].strip(), row[at[PROMPT]], row[at[STORY]], row[at[REFERENCE]]
        )
        first = stories.setdefault(sid, story)
        for column, field in ((MODEL_COLUMN, "model"), (PROMPT, "prompt"), (STORY, "story")):
            if getattr(first, field) != getattr(story, field):
                raise source.error(
                    f"Story ID {sid} has another {column} than in row {first.row}",
                    row=i,
                    column=column,
                )
        if (sid, worker) in rated:
            raise source.error(
                f"duplicate rating of Story ID {sid} by worker {worker!r} "
                f"(also row {rated[sid, worker]})",
                row=i,
                column=WORKER,
            )
        rated[sid, worker] = i
        work_time = _number(source, row[at[WORK_TIME]], i, WORK_TIME)
        assignment = row[at[ASSIGNMENT]].strip() or None
        for criterion in _CRITERION_NAMES:
            score = _number(source, row[at[criterion]], i, criterion)
            if score is None:
                continue
            check_likert(source, score, f"{score:g}", row=i, column=criterion)
            ratings.append((str(sid), worker, criterion, score, work_time, assignment, None, i))

    n = len({s.prompt for s in stories.values()})
    _first_conflict(
        source,
        stories,
        key=lambda sid, s: sid % n,
        value=lambda sid, s: s.prompt,
        message=lambda sid, other, k: (
            f"Story ID {sid} and Story ID {other} have the same prompt index {k} "
            f"(Story ID mod {n}, the number of distinct prompts) but different Prompt texts"
        ),
    )
    _first_conflict(
        source,
        stories,
        key=lambda sid, s: (sid % n, s.model),
        value=lambda sid, s: sid,
        message=lambda sid, other, k: (
            f"duplicate item: Story IDs {other} and {sid} are both Model {k[1]!r} "
            f"on prompt index {k[0]}"
        ),
    )
    _first_conflict(
        source,
        stories,
        key=lambda sid, s: sid // n,
        value=lambda sid, s: s.model,
        message=lambda sid, other, k: (
            f"Story IDs {other} and {sid} are in the same block of {n} (Story ID // {n} = {k}) "
            f"but have different Models"
        ),
    )
    blocks = {s.model: sid // n for sid, s in stories.items()}
    prompts = {sid % n: s.prompt for sid, s in stories.items()}
    systems = b.frame(
        b.SYSTEMS, [[m, m == HUMAN_SYSTEM, block] for m, block in sorted(blocks.items())]
    )
    inputs = b.frame(b.INPUTS, [[str(p), p, text] for p, text in sorted(prompts.items())])
    items = b.frame(
        b.ITEMS,
        [
            [str(sid), str(sid % n), s.model, s.story, s.reference, s.row]
            for sid, s in stories.items()
        ],
    )
    measures = b.frame(
        b.MEASURES,
        [[classify(c, k).measure[f] for f in b.MEASURES] for k, c in enumerate(_CRITERION_NAMES)],
    )
    workers = list(dict.fromkeys(worker for _, worker in rated))
    raters = b.frame(b.RATERS, {"name": workers, "kind": ["person"] * len(workers)})
    return b.Batch(
        systems, inputs, items, measures, raters, b.frame(b.SCORES), b.frame(b.RATINGS, ratings)
    )
