"""Read one language pair of a WMT test set in MTME's folder layout into a batch.

MTME (google-research/mt-metrics-eval) keeps each test set in a folder, e.g. ``wmt23/``. For a
language pair ``LP`` (e.g. ``en-de``) this module reads:

- ``sources/LP.txt``: the source segments, one a line;
- ``references/LP.REF.txt``: each reference translation (``REF`` e.g. ``refA``), line for line;
- ``system-outputs/LP/SYS.txt``: each system's output, line for line; a reference scored as a
  system is copied here under its reference's name;
- ``human-scores/LP.NAME.seg.score`` (``NAME`` e.g. ``mqm``, ``da-sqm``, ``wmt-raw``) and
  ``metric-scores/LP/METRIC-REF.seg.score`` (``REF``: the reference(s) used, ``src`` for none):
  lines ``SYSTEM SCORE`` (separated by blanks), for each system one score per segment in
  segment order; ``None`` is a missing score;
- ``human-scores/LP.NAME.sys.score`` and ``metric-scores/LP/METRIC-REF.sys.score``: the
  system-level scores, the same lines with one score per system;
- ``documents/LP.docs`` (optional): per segment, a line ``DOMAIN DOCUMENT`` (e.g. ``news
  xinhua-zh-01.103859``).

Lines are read as MTME reads them: UTF-8 (a leading byte-order mark dropped), universal
newlines, trailing whitespace removed, and MTME's ``[No translation supplied]`` is a missing text.

MTME's current layout (WMT24++, WMT25) differs in what follows, and is read as MTME reads it:

- sources, references and outputs may be JSON lines instead (``sources/LP.jsonl``,
  ``references/LP.REF.jsonl``, ``system-outputs/LP/SYS.jsonl``): one object per segment, its
  text in the field ``source``, ``target`` or ``hypothesis`` (``null``: a missing text; a source
  must be a string). Where both forms of a source are there the ``.txt`` is read (MTME's
  ``_ReadSourceFile``); both forms of a reference or an output are refused;
- language pairs may carry locale codes (``en-ko_KR``, ``en-sr_Cyrl_RS``): the pair is the name
  of its source file, used as it is in every name (``en-ko_KR:3``);
- golds are named as their files name them, e.g. ESA's versions ``esa-human1`` and
  ``esa-human2`` (``human-scores/en-ko_KR.esa-human1.seg.score``): each its own measure;
- outlier systems are not marked in the folder (MTME lists them in its ``meta_info.py`` and
  leaves them out of its tasks unless ``include_outliers``): every system is ingested;
- ``metadata/LP/SYS.jsonl`` (per-translation metadata) and the MQM error spans of
  ``human-scores/LP.NAME.seg.rating`` are not read (a rating set's scores are read where its
  ``.seg.score`` file is there).

In the store (one store = one study = the language pairs of one test set, ingested one pair at a
time; ``lp`` must be given when the test set has several; a store holding another study, or
pairs of another test set, is refused whatever ``extend`` and ``replace`` say):

- a language pair is a **subset** of the study (column ``inputs.subset``): the analyses run on
  each pair, stacked (the default, ``subsets="each"``), as the WMT metrics tasks report them, on
  one pair (``Study.subset(subset=LP)``, ``--subset LP``), or on the pairs pooled when asked
  (``subsets="pooled"``, ``--pool-subsets``). While the store holds one pair the study is named
  after it (``wmt23 en-de``); a second pair of the same test set (the same folder name)
  renames it after the test set (``wmt23``).
  System and measure names are shared by the pairs: the same metric file name in two pairs is
  one measure, the same system name one system (with no values in a pair it did not take part
  in); the given system- and domain-level values are kept per pair;
- an **input** is a segment, named ``LP:i`` with ``i`` the 0-based line of ``sources/LP.txt``
  (its position among the pair's segments, placed after those of pairs already stored); its
  text is the source segment;
- an input's **domain** and **document** are those of its line of ``documents/LP.docs``
  (columns ``inputs.domain``, ``inputs.document``; NULL without the file);
- a **system** is a file of ``system-outputs/LP/`` other than the standard reference's: the
  standard reference (``ref``) is the items' reference, never a system, and its scores in the
  score files are left out (the ingest's summary counts them), as MTME's ``GetCorrelations``
  removes its main references from the systems. A system is human-written (``is_human``) when a
  reference of the same name exists (``references/LP.SYS.txt``: MTME's rule for human systems,
  e.g. ``refB`` in a study of ``refA``), so it is left out of correlations unless
  ``include_human``; systems are ordered by name (they have no position), those of every pair
  together, so that a pair's systems are in the same order in a store of several pairs as alone;
- an **item** is (segment, system), named ``LP:i:SYS``; its text is the output line, its
  reference the line of the standard reference;
- a human score file is a measure of kind ``human`` named ``NAME``; a metric file a measure of
  kind ``metric`` named ``METRIC-REF`` (e.g. ``BLEU-refA``; reference-based unless ``REF`` is
  ``src``). ``REF`` names the references the metric used, as MTME parses it: ``src`` none,
  ``all`` every reference of the pair, else names joined by ``.`` (``refA.refB``). A metric is
  kept only when it used no reference other than the standard one (MTME: ``metric_refs`` a
  subset of ``main_refs``); the others (``BLEU-refB`` in a study of ``refA``, ``X-refA.refB``)
  are not read, and the summary says how many and how to study them (another store, another
  ``ref``). A measure with a ``.seg.score`` file, a ``.sys.score`` file or both is one measure.
  All are continuous without bounds (MQM scores are negative); ``source_name`` is the path in
  the test set of its ``.seg.score`` file, else of its ``.sys.score`` file. Human scores come
  first, each kind ordered by name;
- a value is one line of a ``.seg.score`` file (an item's score); ``None`` is stored as missing;
- a **system-level value** is one line of a ``.sys.score`` file, stored as given (table
  ``given_system_scores_by_id``; ``None`` missing): WMT's system-level scores are in general not the
  mean of the segment scores (corpus BLEU, z-normalised DA, MQM over the rated segments), so the
  store keeps them beside the items, and ``correlate --system-scores given`` correlates them
  (the default, ``mean``, takes a system's value as the mean of its items).

The standard reference is not in the folder (MTME's meta-info names it: ``refA`` for most pairs,
``refB`` e.g. for wmt23 he-en): ``ref`` chooses it, and may be left out when the pair has one
reference.

- a **domain-level value** is one line ``DOMAIN SYSTEM SCORE`` of a ``.domain.score`` file
  (``human-scores/LP.NAME.domain.score``, ``metric-scores/LP/METRIC-REF.domain.score``), stored
  as given (table ``given_domain_scores_by_id``, view ``given_domain_scores``); its domain must be
  one of ``documents/LP.docs`` when that file is there.

Document-level score files (``.doc.score``), ``metadata/`` and ``*.rating`` files are not
read.

The ingest's checksum is the SHA-256 of a manifest: the language pair and standard reference,
then ``SHA256  PATH`` for every file read, sorted by path; the same files ingested again with the
same choices are skipped.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from hanna_stats.store import batch as b
from hanna_stats.store.catalogue import CONTINUOUS, HUMAN, METRIC
from hanna_stats.store.errors import DataNotFoundError, InputError
from hanna_stats.store.source import (
    GZIP_SUFFIX,
    Source,
    control_character,
    decode_text,
    read_source,
    shorten,
)

#: The folders of an MTME test set that the ingest needs.
FOLDERS = ("sources", "references", "system-outputs", "human-scores", "metric-scores")
SEG_SCORE = ".seg.score"
TXT = ".txt"
JSONL = ".jsonl"
#: The field of each JSON line that holds the text, by folder (MTME's ``_ReadFieldFromJsonl``).
JSONL_FIELDS = {"sources": "source", "references": "target", "system-outputs": "hypothesis"}
SYS_SCORE = ".sys.score"
DOMAIN_SCORE = ".domain.score"
NO_TRANSLATION = "[No translation supplied]"
#: The study's word for its items (the report's "segment level").
ITEM_WORD = "segment"


def is_test_set(path: str | Path) -> bool:
    """True if ``path`` is a folder holding ``human-scores/`` and ``metric-scores/``."""
    path = Path(path)
    return all((path / name).is_dir() for name in ("human-scores", "metric-scores"))


def test_sets_in(path: str | Path) -> list[str]:
    """The sub-folders of ``path`` that are test sets (MTME's download root,
    ``mt-metrics-eval-v2/``, holds ``wmt22/``, ``wmt23/``, ...), sorted."""
    path = Path(path)
    if not path.is_dir():
        return []
    return sorted(p.name for p in path.iterdir() if p.is_dir() and is_test_set(p))


def not_a_test_set(path: str | Path) -> InputError | None:
    """Why the folder ``path``, which looks like WMT data, is not a test set (None if it does
    not look like WMT data, or is a test set): a download root holding test sets, or a folder
    with some of a test set's folders only."""
    path = Path(path)
    if is_test_set(path):
        return None
    found = test_sets_in(path)
    if found:
        return InputError(
            f"a folder of {len(found)} WMT test set(s) ({', '.join(found)}), not one test set: "
            f"point ingest at one of them, e.g. {path / found[0]}",
            file=path,
        )
    present = [name for name in FOLDERS if (path / name).is_dir()]
    if present:
        missing = [name for name in FOLDERS if name not in present]
        return InputError(
            f"not a WMT test set: no folder {', '.join(f'{m}/' for m in missing)} (an MTME test "
            f"set, e.g. wmt23/, holds {', '.join(f'{f}/' for f in FOLDERS)})",
            file=path,
        )
    return None


def metric_references(name: str, references: list[str]) -> set[str] | None:
    """The references a metric named ``METRIC-REF`` used, as MTME's ``ParseMetricName`` reads
    ``REF``: ``src`` none, ``all`` all of ``references``, else the names joined by ``.``; None
    for a name without ``-``.

    Examples
    --------
    >>> sorted(metric_references("BLEU-refA.refB", ["refA", "refB"]))
    ['refA', 'refB']
    >>> metric_references("COMETKiwi-src", ["refA"])
    set()
    """
    if "-" not in name:
        return None
    refs = name.rsplit("-", 1)[1]
    if refs == "all":
        return set(references)
    return set() if refs == "src" else set(refs.split("."))


@dataclass(frozen=True)
class TestSetSource(Source):
    """The files of one language pair of a test set, read as one input.

    ``path`` is the test-set folder, ``data`` the manifest (see the module) and ``sha256`` its
    hash. The other attributes hold the files read, by role (references, system outputs and score
    files keyed by their name; ``human``/``metrics`` the segment-level score files,
    ``human_system``/``metric_system`` the system-level ones), ``documents`` the documents
    file (None if absent); ``other_metrics`` names the metrics left out because they used
    another reference than ``ref``.
    """

    lp: str
    ref: str | None
    sources: Source
    references: dict[str, Source]
    outputs: dict[str, Source]
    human: dict[str, Source]
    metrics: dict[str, Source]
    human_system: dict[str, Source]
    metric_system: dict[str, Source]
    documents: Source | None
    other_metrics: tuple[str, ...]
    human_domain: dict[str, Source] = field(default_factory=dict)
    metric_domain: dict[str, Source] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The folder and the language pair, e.g. ``wmt23 en-de``."""
        return f"{self.path.name} {self.lp}"


def _choose(root: Path, what: str, given: str | None, found: list[str], option: str) -> str | None:
    """``given`` if it is in ``found``; else the only one found (None if none); else an error."""
    listed = ", ".join(found) or "none"
    if given is not None and given not in found:
        raise InputError(f"no {what} {shorten(repr(given))}; found: {listed}", file=root)
    if given is None and len(found) > 1:
        raise InputError(f"{len(found)} {what}s ({listed}): choose one with {option}", file=root)
    return given if given is not None else (found[0] if found else None)


def _named(folder: Path, prefix: str, suffix: str) -> dict[str, Path]:
    """Files ``prefix + NAME + suffix`` (or gzip-compressed, ``+ .gz``) in ``folder`` by NAME,
    sorted (none if no folder); a NAME holding a control character, or given both plain and
    compressed, is refused."""
    if not folder.is_dir():
        return {}
    named: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        file = path.name
        end = next(
            (e for e in (suffix, suffix + GZIP_SUFFIX) if file.endswith(e)),
            None,
        )
        if end is None or not file.startswith(prefix) or len(file) <= len(prefix) + len(end):
            continue
        if not path.is_file():
            continue
        name = file[len(prefix) : len(file) - len(end)]
        detail = control_character(file, "file name")
        if detail is not None:
            raise InputError(detail, file=folder)
        if name in named:
            raise InputError(
                f"both {shorten(repr(named[name].name))} and {shorten(repr(file))}: keep one "
                "(a .gz file is read as its uncompressed content)",
                file=folder,
            )
        named[name] = path
    return named


def _text_files(folder: Path, prefix: str, *, prefer_txt: bool = False) -> dict[str, Path]:
    """Text files ``prefix + NAME + .txt`` or ``.jsonl`` (each maybe ``.gz``) in ``folder`` by
    NAME, sorted. A NAME given in both forms takes the ``.txt`` file with ``prefer_txt`` (MTME's
    ``_ReadSourceFile``), else is refused (MTME refuses a duplicate reference)."""
    txt, jsonl = _named(folder, prefix, TXT), _named(folder, prefix, JSONL)
    both = sorted(set(txt) & set(jsonl))
    if both and not prefer_txt:
        raise InputError(
            f"both {shorten(repr(txt[both[0]].name))} and {shorten(repr(jsonl[both[0]].name))}: "
            "keep one",
            file=folder,
        )
    return dict(sorted((jsonl | txt).items()))


def read_test_set(
    path: str | Path, *, lp: str | None = None, ref: str | None = None
) -> TestSetSource:
    """Read the files of one language pair of the MTME test set in ``path``.

    Parameters
    ----------
    path : str or Path
        The test-set folder (e.g. ``wmt23/``).
    lp : str, optional
        The language pair; required when ``sources/`` holds several.
    ref : str, optional
        The standard reference (``references/LP.REF.txt``); required when there are several.

    Returns
    -------
    TestSetSource

    Raises
    ------
    DataNotFoundError
        If ``path`` is not a folder.
    InputError
        Naming the folder or file: a download root of several test sets (naming them), a
        missing folder, an unknown or ambiguous ``lp`` or ``ref`` (listing those found), no
        system output, an empty file.
    """
    root = Path(path)
    if not root.is_dir():
        raise DataNotFoundError(f"{root}: no such folder (an MTME test set, e.g. wmt23/)")
    if test_sets_in(root) and not is_test_set(root):
        raise not_a_test_set(root)
    for folder in FOLDERS:
        if not (root / folder).is_dir():
            raise InputError(
                f"no folder {folder}/: an MTME test set holds {', '.join(FOLDERS)}", file=root
            )
    source_files = _text_files(root / "sources", "", prefer_txt=True)
    lp = _choose(root, "language pair", lp, list(source_files), "--lp")
    if lp is None:
        raise InputError(
            "no source file sources/LP.txt or sources/LP.jsonl (e.g. sources/en-de.txt)", file=root
        )
    refs = _text_files(root / "references", f"{lp}.")
    ref = _choose(root, "reference", ref, list(refs), "--ref")
    output_dir = root / "system-outputs" / lp
    outputs = _text_files(output_dir, "")
    if not outputs:
        raise InputError(f"no system output files system-outputs/{lp}/SYS.txt", file=root)
    # MTME's GetCorrelations keeps a metric whose references are among the main ones.
    main = {ref} if ref is not None else set()
    metrics = {
        level: _named(root / "metric-scores" / lp, "", level)
        for level in (SEG_SCORE, SYS_SCORE, DOMAIN_SCORE)
    }
    other = sorted(
        {
            name
            for named in metrics.values()
            for name in named
            if not (metric_references(name, list(refs)) or set()) <= main
        }
    )
    documents = _named(root / "documents", "", ".docs").get(lp)
    files = {
        "sources": {lp: source_files[lp]},
        "references": refs,
        "outputs": outputs,
        "human": _named(root / "human-scores", f"{lp}.", SEG_SCORE),
        "metrics": {n: p for n, p in metrics[SEG_SCORE].items() if n not in other},
        "human_system": _named(root / "human-scores", f"{lp}.", SYS_SCORE),
        "metric_system": {n: p for n, p in metrics[SYS_SCORE].items() if n not in other},
        "human_domain": _named(root / "human-scores", f"{lp}.", DOMAIN_SCORE),
        "metric_domain": {n: p for n, p in metrics[DOMAIN_SCORE].items() if n not in other},
        "documents": {lp: documents} if documents is not None else {},
    }
    read = {role: {n: read_source(p) for n, p in named.items()} for role, named in files.items()}
    manifest = f"language pair {lp}, standard reference {ref}\n" + "".join(
        f"{s.sha256}  {s.path.relative_to(root).as_posix()}\n"
        for s in sorted(
            (s for named in read.values() for s in named.values()),
            key=lambda s: s.path.relative_to(root).as_posix(),
        )
    )
    data = manifest.encode()
    return TestSetSource(
        root,
        data,
        hashlib.sha256(data).hexdigest(),
        lp,
        ref,
        read["sources"][lp],
        read["references"],
        read["outputs"],
        read["human"],
        read["metrics"],
        read["human_system"],
        read["metric_system"],
        read["documents"].get(lp),
        tuple(other),
        human_domain=read["human_domain"],
        metric_domain=read["metric_domain"],
    )


def _lines(source: Source) -> list[str]:
    """The file's lines as MTME reads them (see the module; a leading byte-order mark is dropped);
    a bad UTF-8 byte names its line."""
    text = decode_text(source, rows="lines")
    return [line.rstrip() for line in io.StringIO(text, newline=None)]


def _jsonl_texts(source: Source, folder: str) -> list[str | None]:
    """The texts of a JSON-lines file: per line, the field of ``folder`` (``JSONL_FIELDS``) of
    its object, a string or ``null`` (None), as MTME's ``_ReadFieldFromJsonl`` reads it."""
    field_name = JSONL_FIELDS[folder]
    texts: list[str | None] = []
    for row, line in enumerate(_lines(source), start=1):
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            raise source.error("expected a JSON object on every line", row=row)
        if field_name not in record:
            raise source.error(f"no field {field_name!r}", row=row)
        text = record[field_name]
        if text is not None and not isinstance(text, str):
            raise source.error(
                f"field {field_name!r} is {type(text).__name__}, expected a string or null",
                row=row,
                column=field_name,
            )
        texts.append(text)
    return texts


def _text_lines(source: Source, folder: str) -> list[str | None]:
    """The texts of a ``.txt`` file (``[No translation supplied]``: None) or a ``.jsonl`` one."""
    if source.name.removesuffix(GZIP_SUFFIX).endswith(JSONL):
        return _jsonl_texts(source, folder)
    return [None if line == NO_TRANSLATION else line for line in _lines(source)]


def _source_texts(source: Source) -> list[str]:
    """The source segments (a ``.txt`` file's lines are taken as they are)."""
    if not source.name.removesuffix(GZIP_SUFFIX).endswith(JSONL):
        return _lines(source)
    texts = _jsonl_texts(source, "sources")
    if None in texts:
        raise source.error("a source segment is null", row=texts.index(None) + 1)
    return texts


def _texts(source: Source, n: int, sources: Source, folder: str) -> list[str | None]:
    """A text file of ``folder`` with one line per source segment (see :func:`_text_lines`)."""
    lines = _text_lines(source, folder)
    if len(lines) != n:
        raise source.error(f"has {len(lines)} lines, expected {n} (one per line of {sources.name})")
    return lines


def _score_lines(ts: TestSetSource, source: Source, *, domain: bool = False):
    """The lines ``SYSTEM SCORE`` of a score file as ``(row, system, score or None, None)``, or
    with ``domain`` the lines ``DOMAIN SYSTEM SCORE`` as ``(row, system, score, domain)``."""
    layout = "DOMAIN SYSTEM SCORE" if domain else "SYSTEM SCORE"
    for row, line in enumerate(_lines(source), start=1):
        fields = line.split()
        if len(fields) != 2 + domain:
            raise source.error(f"expected {layout!r}, got {len(fields)} fields", row=row)
        key = fields.pop(0) if domain else None
        system, text = fields
        if system not in ts.outputs:
            raise source.error(
                f"system {shorten(repr(system))} has no output file "
                f"system-outputs/{ts.lp}/"
                + (f"{system}.txt" if system.isprintable() and len(system) <= 40 else "SYSTEM.txt"),
                row=row,
                column="system",
            )
        try:
            value = None if text == "None" else float(text)
        except ValueError:
            value = math.nan
        if value is not None and not math.isfinite(value):
            raise source.error(
                f"expected a finite number or None, got {shorten(repr(text))}",
                row=row,
                column="score",
            )
        if value is not None and abs(value) > b.MAX_MAGNITUDE:
            raise source.error(
                f"score {shorten(text, 20)} exceeds {b.MAX_MAGNITUDE:g} in magnitude: statistics "
                "on it would overflow; rescale the measure",
                row=row,
                column="score",
            )
        yield row, system, value, key


def _given_scores(
    ts: TestSetSource, source: Source, domains: set[str] | None = None
) -> dict[tuple[str, str | None], float | None]:
    """A system-level score file: each system's one score, keyed ``(system, None)``; with
    ``domains`` (a set, empty when the test set has no documents file) a domain-level file: each
    (system, domain)'s one score, the domain one of ``domains`` when there are any."""
    scores: dict[tuple[str, str | None], float | None] = {}
    for row, system, value, domain in _score_lines(ts, source, domain=domains is not None):
        if domains and domain not in domains:
            raise source.error(
                f"domain {shorten(repr(domain))} is not one of documents/{ts.lp}.docs: "
                f"{', '.join(sorted(domains))}",
                row=row,
                column="domain",
            )
        if (system, domain) in scores:
            where = f" in domain {domain!r}" if domain is not None else ""
            raise source.error(f"system {system!r} has more than one score{where}", row=row)
        scores[system, domain] = value
    return scores


def _scores(ts: TestSetSource, source: Source, n: int) -> dict[str, list[float | None]]:
    """A segment-level score file: per system, its ``n`` scores in segment order."""
    scores: dict[str, list[float | None]] = {}
    last: dict[str, int] = {}
    for row, system, value, _ in _score_lines(ts, source):
        values = scores.setdefault(system, [])
        values.append(value)
        last[system] = row
        if len(values) > n:
            raise source.error(
                f"system {system!r} has more than {n} scores (one per line of {ts.sources.name})",
                row=row,
            )
    for system, values in scores.items():
        if len(values) < n:
            raise source.error(
                f"system {system!r} has {len(values)} scores, expected {n} (one per line of "
                f"{ts.sources.name})",
                row=last[system],
            )
    return scores


def _documents(source: Source, n: int, sources: Source) -> tuple[list[str], list[str]]:
    """The domain and document of each segment, from ``documents/LP.docs``."""
    lines = _lines(source)
    if len(lines) != n:
        raise source.error(f"has {len(lines)} lines, expected {n} (one per line of {sources.name})")
    domains, documents = [], []
    for row, line in enumerate(lines, start=1):
        fields = line.split()
        if len(fields) < 2:
            raise source.error(f"expected 'DOMAIN DOCUMENT', got {len(fields)} field(s)", row=row)
        domains.append(fields[0])
        documents.append(fields[1])
    return domains, documents


def _notes(ts: TestSetSource, left_out: int) -> tuple[str, ...]:
    """The summary's notes: the standard reference's values left out, the metrics of other
    references not read."""
    notes = []
    if ts.ref in ts.outputs or left_out:
        notes.append(
            f"the standard reference {ts.ref} is the items' reference, not a system: left out "
            f"its output file and its {left_out:,} score(s)"
        )
    if ts.other_metrics:
        shown = ", ".join(ts.other_metrics[:3]) + (", ..." if len(ts.other_metrics) > 3 else "")
        others = sorted(
            {r for m in ts.other_metrics for r in metric_references(m, list(ts.references))}
            - {ts.ref}
        )
        example = next((r for r in others if r in ts.references), "REF")
        notes.append(
            f"left out {len(ts.other_metrics)} metric(s) computed against another reference "
            f"than {ts.ref} ({shown}): to study a metric of reference {example}, ingest "
            f"{ts.path.name} with --lp {ts.lp} --ref {example} into another store"
        )
    return tuple(notes)


def parse_test_set(ts: TestSetSource) -> b.Batch:
    """Validate the files of :func:`read_test_set` and build their batch (see the module).

    Raises
    ------
    InputError
        Naming the file, line and field: a reference or output whose number of lines differs
        from the source's; in a score file, a line that is not ``SYSTEM SCORE``, a system
        without an output file, a score that is neither a finite number nor ``None``, a system
        with more or fewer scores than segments (a ``.sys.score`` file: more than one score); a
        bad UTF-8 byte; a metric file not named ``METRIC-REF.seg.score`` (``.sys.score``); a
        human and a metric measure of the same name, or a measure named like a key column of
        ``scores_wide``; a documents file whose number of lines differs from the source's or
        with a line of fewer than two fields.
    """
    lp, root = ts.lp, ts.path
    sources = _source_texts(ts.sources)
    n = len(sources)
    refs = {name: _texts(s, n, ts.sources, "references") for name, s in ts.references.items()}
    outputs = {name: _texts(s, n, ts.sources, "system-outputs") for name, s in ts.outputs.items()}
    # A measure's source: its segment-level file, else its system-level one, else its
    # domain-level one.
    human = ts.human_domain | ts.human_system | ts.human
    metrics = ts.metric_domain | ts.metric_system | ts.metrics
    measures = [(name, HUMAN, None, human[name]) for name in sorted(human)]
    for name in sorted(metrics):
        if "-" not in name:
            raise metrics[name].error(
                "expected a metric file named METRIC-REF.seg.score or METRIC-REF.sys.score "
                "(e.g. BLEU-refA)"
            )
        measures.append((name, METRIC, name.rsplit("-", 1)[1] != "src", metrics[name]))
    seen: dict[str, Source] = {}
    for name, _, _, s in measures:
        if name in seen:
            other = seen[name].path.relative_to(root).as_posix()
            raise s.error(f"measure {name!r} also comes from {other}")
        if name in b.WIDE_RESERVED:
            raise s.error(f"measure name {name!r} is reserved (a key column of scores_wide)")
        seen[name] = s
    values = {name: _scores(ts, s, n) for name, s in (ts.human | ts.metrics).items()}
    domains, documents = (
        _documents(ts.documents, n, ts.sources) if ts.documents is not None else (None, None)
    )
    given = [
        (name, _given_scores(ts, s, level))
        for level, files in (
            (None, ts.human_system | ts.metric_system),
            (set(domains or ()), ts.human_domain | ts.metric_domain),
        )
        for name, s in files.items()
    ]
    # The standard reference is no system: its output file and scores are left out.
    left_out = sum(len(by.pop(ts.ref, ())) for by in values.values())
    for _, by in given:
        for key in [k for k in by if k[0] == ts.ref]:
            del by[key]
            left_out += 1

    systems = [s for s in outputs if s != ts.ref]
    inputs = [f"{lp}:{i}" for i in range(n)]
    standard = refs[ts.ref] if ts.ref is not None else [None] * n
    items = {"name": [], "input": [], "system": [], "text": [], "reference": []}
    for i, inp in enumerate(inputs):
        for system in systems:
            items["name"].append(f"{inp}:{system}")
            items["input"].append(inp)
            items["system"].append(system)
            items["text"].append(outputs[system][i])
            items["reference"].append(standard[i])
    scores = {"item": [], "measure": [], "value": []}
    for measure, by_system in values.items():
        for system, column in by_system.items():
            scores["item"].extend(f"{inp}:{system}" for inp in inputs)
            scores["measure"].extend([measure] * n)
            scores["value"].extend(column)
    return b.Batch(
        systems=b.frame(
            b.SYSTEMS,
            {
                "name": systems,
                "is_human": [s in refs for s in systems],
                # no position: the systems of every pair of a store sort by name together
                "position": [None] * len(systems),
            },
        ),
        inputs=b.frame(
            b.INPUTS,
            {
                "name": inputs,
                "position": list(range(n)),
                "text": sources,
                "domain": domains or [None] * n,
                "document": documents or [None] * n,
                "subset": [lp] * n,
            },
        ),
        items=b.frame(b.ITEMS, items),
        measures=b.frame(
            b.MEASURES,
            {
                "name": [m[0] for m in measures],
                "kind": [m[1] for m in measures],
                "reference_based": [m[2] for m in measures],
                "scale": [CONTINUOUS] * len(measures),
                "position": list(range(len(measures))),
                "source_name": [m[3].path.relative_to(root).as_posix() for m in measures],
            },
        ),
        raters=b.frame(b.RATERS),
        scores=b.frame(b.SCORES, scores),
        ratings=b.frame(b.RATINGS),
        replace_measures=False,
        relative_positions=True,
        given_scores=b.frame(
            b.GIVEN_SCORES,
            [
                (system, measure, v, domain, lp)
                for measure, by in given
                for (system, domain), v in by.items()
            ],
        ),
        notes=_notes(ts, left_out),
    )
