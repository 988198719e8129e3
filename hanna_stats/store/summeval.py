"""Parse and validate SummEval's human annotations (JSON lines) into a batch.

SummEval (Fabbri, Kryściński, McCann, Xiong, Socher and Radev 2021, *SummEval: Re-evaluating
Summarization Evaluation*, TACL 9) rated the summaries of 16 systems for 100 CNN/DailyMail test
articles. Its repository (Yale-LILY/SummEval) releases them as ``model_annotations.aligned.jsonl``;
its script ``data_processing/pair_data.py`` writes ``model_annotations.aligned.paired.jsonl``,
the same lines with the source article added under ``text``. One JSON object per line:

- ``id``: the CNN/DM document id (``dm-test-8764fb95...``); ``model_id``: the system (``M11``);
- ``decoded``: the summary;
- ``expert_annotations`` (3 experts) and ``turker_annotations`` (5 crowd workers): lists of
  ratings, each an object with ``coherence``, ``consistency``, ``fluency`` and ``relevance``,
  whole numbers from 1 to 5;
- ``references``: 11 reference summaries, the first the original CNN/DM highlights, the others
  written by crowd workers; ``filepath``: the CNN/DM story file;
- scored files only: ``metric_scores_<k>`` (SummEval has ``_1``, ``_6`` and ``_11``), objects
  of metric name -> a number, a one-number list (``supert``) or an object of numbers (``rouge``:
  ``rouge_1_f_score``, ...); the key ``id`` there is the document's index, which SummEval's
  scoring script writes and its correlation script skips: it is skipped here too.

Mapping into the store:

- input: ``id``, its text ``text`` when given (the same on every line of a document);
- system: ``model_id`` (none is human-written), positioned in natural order (M0, M1, ..., M23);
- item: ``"<id>/<model_id>"``, its text ``decoded``, its references all of ``references`` in
  order (table ``item_references``, named ``references[0]``, ``references[1]``, ...), the first
  (the original CNN/DM highlights) also ``items.reference``; empty strings are skipped, as the
  scoring files skip empty reference columns;
- measures ``Coherence``, ``Consistency``, ``Fluency``, ``Relevance``: kind human, Likert 1..5,
  rated by the experts as raters ``SummEval expert 1..3`` of kind ``slot`` (positions: SummEval
  does not identify its annotators); an item's value is their mean, SummEval's standard
  meta-evaluation target;
- measures ``Coherence (turker)`` ... ``Relevance (turker)``: the crowd workers' ratings, kind
  human, raters ``SummEval turker 1..5`` (slots);
- metric scores: measure ``"<name> (metric_scores_<k>)"`` of kind metric, ``<name>`` the metric's
  key, or for an object of numbers the key inside it (``rouge_1_f_score (metric_scores_11)``);
  ``source_name`` keeps the path (``metric_scores_11.rouge.rouge_1_f_score``); null or NaN is
  missing.

A line's row number is its line in the file (1-based; blank lines are skipped but counted); the
column named in an error is the field, e.g. ``expert_annotations[1].coherence``. Any number of
expert ratings from 1 and of crowd ratings from 0 (``turker_annotations`` may be absent) is
accepted; other fields are ignored. A line is refused, naming it, when a key is given twice in
one object, an integer lies beyond a float's range, arrays nest deeper than Python's recursion
limit or a string holds a lone UTF-16 surrogate escape (see
:func:`~hanna_stats.store.source.load_json`), or ``id`` or ``model_id`` holds a control
character. The file may be gzip-compressed (``model_annotations.aligned.jsonl.gz``).
"""

from __future__ import annotations

import json
import math
import re

from hanna_stats.store import batch as b
from hanna_stats.store.catalogue import HUMAN, LIKERT, LIKERT_MAX, LIKERT_MIN, METRIC
from hanna_stats.store.scales import check_likert
from hanna_stats.store.source import JSONError, Source, check_name, decode_text, load_json, shorten

#: The study name a SummEval file gives a store.
STUDY = "SummEval"
#: The study's word for its items (the report's "summary level").
ITEM_WORD = "summary"
#: SummEval's criteria: (measure name, key in a rating object, abbreviation).
CRITERIA: tuple[tuple[str, str, str], ...] = (
    ("Coherence", "coherence", "COH"),
    ("Consistency", "consistency", "CON"),
    ("Fluency", "fluency", "FLU"),
    ("Relevance", "relevance", "REL"),
)
EXPERTS, TURKERS = "expert_annotations", "turker_annotations"
#: Rating lists -> (suffix of their measures' names, prefix of their raters' names).
PANELS = {EXPERTS: ("", "SummEval expert"), TURKERS: (" (turker)", "SummEval turker")}
REQUIRED = ("id", "model_id", "decoded", EXPERTS)
_METRIC_SCORES = re.compile(r"metric_scores_\d+")
#: A key of ``metric_scores_<k>`` that is no metric: SummEval's scoring script writes the
#: document's index there, and its correlation script skips it.
SKIPPED_METRIC_KEY = "id"


def _show(value: object) -> str:
    """A JSON value as it appears in the file (shortened)."""
    return shorten(json.dumps(value, ensure_ascii=False))


def _records(source: Source) -> list[tuple[int, object]]:
    """(line number, parsed JSON) of every non-blank line."""
    text = decode_text(source, rows="lines")
    records = []
    # split("\n"), not splitlines(): JSON strings may hold U+2028 and other line separators.
    for row, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append((row, load_json(line)))
        except JSONError as exc:
            raise source.error(str(exc), row=row, column=exc.key) from None
    if not records:
        raise source.error("no data lines (the file is blank)")
    return records


def _text(source: Source, record: dict, key: str, row: int, context: str | None) -> str:
    value = record[key]
    if not isinstance(value, str):
        raise source.error(
            f"expected a string, got {_show(value)}", row=row, column=key, context=context
        )
    return value


def _ratings(source: Source, record: dict, key: str, row: int, context: str) -> list[list[float]]:
    """The rating objects of ``record[key]``: per rating, the four criteria's scores."""
    ratings = record[key]
    if not isinstance(ratings, list) or (key == EXPERTS and not ratings):
        what = "a non-empty list" if key == EXPERTS else "a list"
        raise source.error(
            f"expected {what} of rating objects, got {_show(ratings)}",
            row=row,
            column=key,
            context=context,
        )
    scores = []
    for k, rating in enumerate(ratings):
        if not isinstance(rating, dict):
            raise source.error(
                f"expected an object of the four criteria, got {_show(rating)}",
                row=row,
                column=f"{key}[{k}]",
                context=context,
            )
        row_scores = []
        for _, field, _ in CRITERIA:
            column = f"{key}[{k}].{field}"
            if field not in rating:
                raise source.error("missing field", row=row, column=column, context=context)
            value = rating[field]
            where = {"row": row, "column": column, "context": context}
            row_scores.append(check_likert(source, value, _show(value), **where))
        scores.append(row_scores)
    return scores


def _metric_scores(
    source: Source, record: dict, key: str, row: int, context: str
) -> dict[str, tuple[str, float | None]]:
    """Measure name -> (path in the file, value or None) of one ``metric_scores_<k>`` object."""
    scores = record[key]
    if not isinstance(scores, dict):
        raise source.error(
            f"expected an object of metric scores, got {_show(scores)}",
            row=row,
            column=key,
            context=context,
        )
    out: dict[str, tuple[str, float | None]] = {}
    for name, value in scores.items():
        if name == SKIPPED_METRIC_KEY:
            continue
        leaves = value.items() if isinstance(value, dict) else [(name, value)]
        for leaf, v in leaves:
            path = f"{key}.{name}" + (f".{leaf}" if isinstance(value, dict) else "")
            if isinstance(v, list) and len(v) == 1:
                v = v[0]
            if v is not None and (type(v) not in (int, float) or math.isinf(v)):
                raise source.error(
                    f"expected a finite number, a one-number list or null, got {_show(v)}",
                    row=row,
                    column=path,
                    context=context,
                )
            measure = f"{leaf} ({key})"
            if measure in out:
                raise source.error(
                    f"metric {leaf!r} given twice (also {out[measure][0]})",
                    row=row,
                    column=path,
                    context=context,
                )
            out[measure] = (path, None if v is None or math.isnan(v) else float(v))
    return out


def _natural(name: str) -> list[tuple[int, str | int]]:
    """Sort key: digit runs as numbers (``M2`` before ``M10``)."""
    return [(0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", name) if p]


def _measure(name: str, kind: str, abbreviation: str | None, source_name: str) -> dict:
    """A catalogue row (keys of :data:`~hanna_stats.store.batch.MEASURES`, position aside)."""
    likert = kind == HUMAN
    return {
        "name": name,
        "kind": kind,
        "abbreviation": abbreviation,
        "criterion": name if likert else None,
        "scale": LIKERT if likert else None,
        "scale_min": LIKERT_MIN if likert else None,
        "scale_max": LIKERT_MAX if likert else None,
        "source_name": source_name,
    }


def parse_summeval(source: Source) -> b.Batch:
    """Validate a SummEval annotation file and build its batch (mapping: see the module).

    Parameters
    ----------
    source : Source
        ``model_annotations.aligned.jsonl``, its paired form (with ``text``) or a scored file
        (with ``metric_scores_<k>``).

    Returns
    -------
    Batch
        Systems, inputs, items with texts, the eight human measures (experts and crowd workers)
        and any metric scores; positions count from 0 within the file.

    Raises
    ------
    InputError
        Naming the line and field: bad UTF-8 or JSON, a line that is not an object, a missing
        ``id``, ``model_id``, ``decoded`` or ``expert_annotations``, a field of the wrong type,
        no expert rating, a rating that is not a whole number from 1 to 5, a metric score that
        is not a finite number, a document whose ``text`` differs between lines, or a second
        line for the same document and system.
    """
    inputs: dict[str, tuple[int, str | None]] = {}  # id -> (first line, text)
    items: list[list] = []
    item_rows: dict[str, int] = {}
    ratings: list[tuple] = []
    n_raters = dict.fromkeys(PANELS, 0)
    metrics: dict[str, str] = {}  # measure -> path, in order of first appearance
    scores: list[tuple] = []
    item_references: dict[str, list[tuple[str | None, str]]] = {}
    for row, record in _records(source):
        if not isinstance(record, dict):
            raise source.error(f"expected a JSON object, got {_show(record)}", row=row)
        for key in REQUIRED:
            if key not in record:
                raise source.error("missing field", row=row, column=key)
        doc = _text(source, record, "id", row, None)
        model = _text(source, record, "model_id", row, None)
        context = f"id={doc}, model_id={model}"
        for key, value in (("id", doc), ("model_id", model)):
            if not value.strip():
                raise source.error("empty value", row=row, column=key, context=context)
            check_name(source, value, row=row, column=key)
        decoded = _text(source, record, "decoded", row, context)
        article = _text(source, record, "text", row, context) if "text" in record else None
        first_row, first_text = inputs.setdefault(doc, (row, article))
        if article is not None and first_text is not None and article != first_text:
            raise source.error(
                f"the document has another text than on row {first_row}",
                row=row,
                column="text",
                context=context,
            )
        if first_text is None and article is not None:
            inputs[doc] = (first_row, article)
        references = record.get("references")
        references = [] if references is None else references
        if not isinstance(references, list) or not all(isinstance(r, str) for r in references):
            raise source.error(
                f"expected a list of strings, got {_show(references)}",
                row=row,
                column="references",
                context=context,
            )
        item = f"{doc}/{model}"
        if item in item_rows:
            raise source.error(
                f"duplicate summary of this document by this system (also row {item_rows[item]})",
                row=row,
                context=context,
            )
        item_rows[item] = row
        refs = [(f"references[{k}]", r) for k, r in enumerate(references) if r != ""]
        item_references[item] = refs
        items.append([item, doc, model, decoded, refs[0][1] if refs else None, row])
        for key, (suffix, rater) in PANELS.items():
            if key not in record:
                continue
            panel = _ratings(source, record, key, row, context)
            n_raters[key] = max(n_raters[key], len(panel))
            for k, values in enumerate(panel, start=1):
                for (criterion, _, _), score in zip(CRITERIA, values, strict=True):
                    rating = (item, f"{rater} {k}", criterion + suffix, score, None, None, None)
                    ratings.append((*rating, row))
        for key in record:
            if _METRIC_SCORES.fullmatch(key):
                for measure, (path, value) in _metric_scores(
                    source, record, key, row, context
                ).items():
                    metrics.setdefault(measure, path)
                    scores.append((item, measure, value, row))

    systems = sorted({model for _, _, model, *_ in items}, key=_natural)
    human = [
        _measure(criterion + suffix, HUMAN, None if suffix else abbreviation, f"{key}.{field}")
        for key, (suffix, _) in PANELS.items()
        if n_raters[key]
        for criterion, field, abbreviation in CRITERIA
    ]
    catalogue = human + [_measure(m, METRIC, None, path) for m, path in metrics.items()]
    raters = [
        f"{rater} {k}" for key, (_, rater) in PANELS.items() for k in range(1, n_raters[key] + 1)
    ]
    return b.Batch(
        systems=b.frame(
            b.SYSTEMS,
            {
                "name": systems,
                "is_human": [False] * len(systems),
                "position": list(range(len(systems))),
            },
        ),
        inputs=b.frame(
            b.INPUTS, [[doc, k, text] for k, (doc, (_, text)) in enumerate(inputs.items())]
        ),
        items=b.frame(b.ITEMS, items),
        measures=b.frame(
            b.MEASURES,
            [[{**m, "position": k}.get(c) for c in b.MEASURES] for k, m in enumerate(catalogue)],
        ),
        raters=b.frame(b.RATERS, {"name": raters, "kind": ["slot"] * len(raters)}),
        scores=b.frame(b.SCORES, scores),
        ratings=b.frame(b.RATINGS, ratings),
        replace_measures=False,
        relative_positions=True,
        references=b.reference_frame(item_references),
    )
