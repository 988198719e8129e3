"""Read the automatic scores that WMT25's general MT task released into a batch.

The task (wmt-conference/wmt25-general-mt, ``data/automatic_scores/``) released one JSON-lines
file per system, ``automatic_scores/SYSTEM.jsonl``, one line per (language pair, document)::

    {"language_pair": "en-is_IS", "domain": "literary", "document_id": "rink_rats_chapter1",
     "metric_scores": {"CometKiwi-XL": [0.73, 0.75, ...], "GEMBA-ESA-CMDA": [60, 60, ...]}}

``metric_scores`` holds, per metric, one score per paragraph of the document (``null``: not
scored). Language pairs carry a locale code (``cs-de_DE``, ``en-sr_Cyrl_RS``), kept as given.
The folder ingested is the one holding ``automatic_scores/`` (the task's ``data/``, or a copy
such as ``../shared/data/wmt25``); ``systems_metadata.json`` beside it is not read (the store
has no place for a system's description or supported pairs).

In the store (the study is named after the folder, e.g. ``wmt25``; its item word ``paragraph``):

- a language pair is a **subset** (``inputs.subset``, e.g. ``en-sr_Cyrl_RS``): the analyses run
  per pair by default, as the task reports them;
- an **input** is a paragraph, ``LP:DOCUMENT:i`` with ``i`` its 0-based index in the document's
  lists; its ``domain`` and ``document`` are the line's ``domain`` and ``document_id``; inputs
  are ordered by pair, document and index; no text (the folder holds scores only);
- a **system** is a file, named by its stem (``Gemini-2.5-Pro``); none is human-written;
- an **item** is (paragraph, system), ``LP:DOCUMENT:i:SYSTEM``;
- every metric is a **measure** of kind ``metric``, continuous: all are higher-is-better as
  released (MetricX-24-Hybrid-XL is released negated, from -25 to 0). ``reference_based`` is
  False for CometKiwi-XL and the GEMBA-ESA judges (reference-less), True for chrF++, unknown
  for MetricX-24-Hybrid-XL and XCOMET-XL (run with or without references, by pair);
- a value is one number of a list; ``null`` is stored as missing.

The summary's notes count what is left out: the metrics a pair has no scores of (chrF++ is
released for en-bho_IN and en-mas_KE only), the paragraphs a metric did not score (``null``),
and the (system, document) lines without a metric that other lines of the pair have.

Every line is checked before anything is written (the error names the file, the line and the
field): a JSON object with ``language_pair``, ``domain``, ``document_id`` (non-empty strings
without control characters) and ``metric_scores`` (an object of lists of finite numbers or
null, all as long as the document's paragraphs, at most
:data:`~hanna_stats.store.batch.MAX_MAGNITUDE` in magnitude); a document given twice in one file;
a document whose number of paragraphs or domain differs between files (the other file named).
The checksum is that of a manifest, ``SHA256  automatic_scores/FILE`` per file sorted by name:
the same folder ingested again is skipped, and a changed folder upserts (values equal to the
stored ones are no replacements).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from hanna_stats.store import batch as b
from hanna_stats.store.catalogue import CONTINUOUS, METRIC
from hanna_stats.store.errors import DataNotFoundError, InputError
from hanna_stats.store.source import (
    JSONError,
    Source,
    check_name,
    decode_text,
    load_json,
    read_source,
    shorten,
)

#: The folder of the released scores, one ``SYSTEM.jsonl`` per system.
SCORES_FOLDER = "automatic_scores"
SCORES_SUFFIX = ".jsonl"
#: The study's word for its items.
ITEM_WORD = "paragraph"
#: The fields of every line.
FIELDS = ("language_pair", "domain", "document_id", "metric_scores")
#: Whether a metric of the release used references (the task's preliminary ranking): absent is
#: unknown (MetricX-24-Hybrid-XL and XCOMET-XL run with references where the pair has them).
REFERENCE_BASED = {
    "CometKiwi-XL": False,
    "GEMBA-ESA-CMDA": False,
    "GEMBA-ESA-GPT4.1": False,
    "chrF++": True,
}


def is_release(path: str | Path) -> bool:
    """True if ``path`` is a folder holding ``automatic_scores/`` with ``*.jsonl`` files."""
    folder = Path(path) / SCORES_FOLDER
    return folder.is_dir() and any(folder.glob(f"*{SCORES_SUFFIX}"))


@dataclass(frozen=True)
class ReleaseSource(Source):
    """The system files of a release, read as one input: ``path`` is the folder, ``data`` the
    manifest (see the module), ``files`` the system files by system name, sorted."""

    files: dict[str, Source]


def read_release(path: str | Path) -> ReleaseSource:
    """Read the system files of the WMT25 release in ``path`` (the folder holding
    ``automatic_scores/``).

    Raises
    ------
    DataNotFoundError
        If ``path`` is not a folder.
    InputError
        If it holds no ``automatic_scores/SYSTEM.jsonl``, or a file name holds a control
        character.
    """
    root = Path(path)
    if not root.is_dir():
        raise DataNotFoundError(f"{root}: no such folder (WMT25's release, with {SCORES_FOLDER}/)")
    if not is_release(root):
        raise InputError(
            f"no {SCORES_FOLDER}/SYSTEM{SCORES_SUFFIX} files: expected WMT25's released scores "
            f"(a folder holding {SCORES_FOLDER}/, one JSON-lines file per system)",
            file=root,
        )
    paths = sorted((root / SCORES_FOLDER).glob(f"*{SCORES_SUFFIX}"))
    files = {p.name[: -len(SCORES_SUFFIX)]: read_source(p) for p in paths}
    manifest = "".join(f"{s.sha256}  {SCORES_FOLDER}/{s.name}\n" for s in files.values())
    data = manifest.encode()
    return ReleaseSource(root, data, hashlib.sha256(data).hexdigest(), files)


def _number(source: Source, value: object, row: int, column: str) -> float | None:
    """A paragraph's score: a finite number of bounded magnitude, or None for ``null``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise source.error(
            f"expected a number or null, got {shorten(repr(value))}", row=row, column=column
        )
    value = float(value)
    if not math.isfinite(value) or abs(value) > b.MAX_MAGNITUDE:
        raise source.error(
            f"expected a finite number of magnitude at most {b.MAX_MAGNITUDE:g}, got {value!r}",
            row=row,
            column=column,
        )
    return value


def _line(source: Source, row: int, text: str) -> tuple[str, str, str, dict[str, list]]:
    """One line checked: (pair, domain, document, metric -> scores)."""
    try:
        record = load_json(text)
    except JSONError as exc:
        raise source.error(str(exc), row=row, column=exc.key) from None
    if not isinstance(record, dict):
        raise source.error(f"expected a JSON object, got {shorten(text)}", row=row)
    for key in FIELDS:
        if key not in record:
            raise source.error("missing field", row=row, column=key)
    names = []
    for key in FIELDS[:3]:
        value = record[key]
        if not isinstance(value, str) or not value.strip():
            raise source.error(
                f"expected a non-empty string, got {shorten(repr(value))}", row=row, column=key
            )
        names.append(check_name(source, value, row=row, column=key))
    scores = record["metric_scores"]
    if not isinstance(scores, dict):
        raise source.error(
            "expected an object of metric -> list of scores", row=row, column="metric_scores"
        )
    checked: dict[str, list] = {}
    length = None
    for metric, values in scores.items():
        column = f"metric_scores.{metric}"
        check_name(source, metric, row=row, column="metric_scores")
        if metric in b.WIDE_RESERVED:
            raise source.error(
                f"metric name {metric!r} is reserved (a key column of scores_wide)",
                row=row,
                column=column,
            )
        if not isinstance(values, list):
            raise source.error("expected a list of paragraph scores", row=row, column=column)
        if length is not None and len(values) != length:
            raise source.error(
                f"{len(values)} scores, but {length} for {next(iter(checked))}: one per paragraph",
                row=row,
                column=column,
            )
        length = len(values)
        checked[metric] = [_number(source, v, row, f"{column}[{i}]") for i, v in enumerate(values)]
    return names[0], names[1], names[2], checked


@dataclass
class _Document:
    """A document as the first file giving it says: its domain and paragraph count."""

    domain: str
    paragraphs: int
    file: str
    row: int


def _notes(
    pairs: dict[str, set[str]],
    metrics: list[str],
    missing: Counter,
    absent: Counter,
) -> tuple[str, ...]:
    """The summary's notes: metrics without scores in a pair, nulls, lines without a metric."""
    notes = []
    for metric in metrics:
        without = sorted(lp for lp, held in pairs.items() if metric not in held)
        if without:
            with_ = len(pairs) - len(without)
            shown = ", ".join(without[:4]) + (", ..." if len(without) > 4 else "")
            notes.append(
                f"{metric}: no scores in {len(without)} of {len(pairs)} language "
                f"pairs ({shown}); scored in {with_}"
            )
    for what, counts in (
        ("paragraph scores null (missing)", missing),
        ("(system, document) lines without the metric", absent),
    ):
        if counts:
            by = "; ".join(f"{m} {lp} {n:,}" for (m, lp), n in sorted(counts.items()))
            notes.append(f"{sum(counts.values()):,} {what}: {by}")
    return tuple(notes)


def parse_release(release: ReleaseSource) -> b.Batch:
    """Validate the files of :func:`read_release` and build their batch (see the module).

    Raises
    ------
    InputError
        Naming the file, line and field (see the module).
    """
    documents: dict[tuple[str, str], _Document] = {}
    lines: list[tuple[str, str, str, dict[str, list]]] = []  # system, pair, document, scores
    for system, source in release.files.items():
        check_name(source, system, column="file name")
        seen: dict[tuple[str, str], int] = {}
        text = decode_text(source, rows="lines")
        for row, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            lp, domain, doc, scores = _line(source, row, line)
            if (lp, doc) in seen:
                raise source.error(
                    f"document {doc!r} of {lp} also on line {seen[lp, doc]}",
                    row=row,
                    column="document_id",
                )
            seen[lp, doc] = row
            n = len(next(iter(scores.values()), []))
            known = documents.setdefault((lp, doc), _Document(domain, n, source.name, row))
            if (scores and known.paragraphs != n) or known.domain != domain:
                what = f"{n} paragraphs" if known.paragraphs != n else f"domain {domain!r}"
                was = f"{known.paragraphs}" if known.paragraphs != n else repr(known.domain)
                raise source.error(
                    f"{what} for document {doc!r} of {lp}, but {was} in {known.file} line "
                    f"{known.row}",
                    row=row,
                    column="metric_scores" if known.paragraphs != n else "domain",
                )
            lines.append((system, lp, doc, scores))
    if not lines:
        raise InputError("no data lines in any file", file=release.path)
    order = sorted(documents)
    inputs = {"name": [], "position": [], "domain": [], "document": [], "subset": []}
    for lp, doc in order:
        d = documents[lp, doc]
        for i in range(d.paragraphs):
            inputs["name"].append(f"{lp}:{doc}:{i}")
            inputs["position"].append(len(inputs["position"]))
            inputs["domain"].append(d.domain)
            inputs["document"].append(doc)
            inputs["subset"].append(lp)
    items = {"name": [], "input": [], "system": []}
    scores = {"item": [], "measure": [], "value": []}
    held: dict[str, set[str]] = defaultdict(set)
    lines_per_pair: Counter = Counter()
    metric_lines: Counter = Counter()
    missing: Counter = Counter()
    for system, lp, doc, by_metric in lines:
        lines_per_pair[lp] += 1
        names = [f"{lp}:{doc}:{i}" for i in range(documents[lp, doc].paragraphs)]
        items["name"].extend(f"{n}:{system}" for n in names)
        items["input"].extend(names)
        items["system"].extend([system] * len(names))
        for metric, values in by_metric.items():
            held[lp].add(metric)
            metric_lines[metric, lp] += 1
            missing[metric, lp] += sum(v is None for v in values)
            scores["item"].extend(f"{n}:{system}" for n in names)
            scores["measure"].extend([metric] * len(names))
            scores["value"].extend(values)
    metrics = sorted({m for ms in held.values() for m in ms})
    absent = Counter(
        {
            (m, lp): lines_per_pair[lp] - k
            for (m, lp), k in metric_lines.items()
            if k < lines_per_pair[lp]
        }
    )
    systems = list(release.files)
    return b.Batch(
        systems=b.frame(
            b.SYSTEMS,
            {
                "name": systems,
                "is_human": [False] * len(systems),
                "position": list(range(len(systems))),
            },
        ),
        inputs=b.frame(b.INPUTS, inputs),
        items=b.frame(b.ITEMS, items),
        measures=b.frame(
            b.MEASURES,
            {
                "name": metrics,
                "kind": [METRIC] * len(metrics),
                "reference_based": [REFERENCE_BASED.get(m) for m in metrics],
                "scale": [CONTINUOUS] * len(metrics),
                "position": list(range(len(metrics))),
                "source_name": [
                    f"{SCORES_FOLDER}/*{SCORES_SUFFIX}: metric_scores.{m}" for m in metrics
                ],
            },
        ),
        raters=b.frame(b.RATERS),
        scores=b.frame(b.SCORES, scores),
        ratings=b.frame(b.RATINGS),
        replace_measures=False,
        relative_positions=True,
        notes=_notes(dict(held), metrics, +missing, absent),
    )
