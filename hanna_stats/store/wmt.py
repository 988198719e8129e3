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
- MQM ratings with error spans, ``human-scores/LP.NAME.seg.rating`` (MTME's rating set
  ``NAME``, e.g. ``mqm.merged``, ``mqm.rater1``), are turned into segment-level MQM scores with
  MTME's standard weights, as its converter ``score_mqm.py`` does
  (:mod:`hanna_stats.store.wmt_ratings`): a human measure named ``NAME``, one value per line
  (``None``: not rated), where the pair has no ``LP.NAME.seg.score``; where it has one, that
  file is read (the released scores) and the rating file is not, and the summary says so. Each
  rating set gives one rating per segment, so no rater-level values are stored (the summary
  counts the raters);
- ``metadata/LP/SYS.jsonl`` (per-translation metadata, free-form JSON objects that MTME's
  ``EvalSet.metadata`` returns and none of its statistics reads) is not read: the summary counts
  its files.

Outlier systems are not named in the folder: MTME lists them in its ``meta_info.py`` per test set
and pair (:data:`OUTLIER_SYSTEMS`, keyed by the folder's name, e.g. wmt23 en-de's
``synthetic_ref``) and leaves them out of its tasks and correlations unless
``include_outliers``. The ingest leaves them out likewise, per pair (a system that is an outlier
in one pair is kept in the others), with their scores; the summary names them and counts their
score lines. ``include_outliers=True`` (``ingest --include-outliers``) keeps them as systems.

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
- a **system** is a file of ``system-outputs/LP/`` other than the standard reference's and
  the pair's outlier systems (see above): the
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

Document-level score files (``.doc.score``) and ``metadata/`` are not read.

The ingest's checksum is the SHA-256 of a manifest: the language pair and standard reference,
then ``SHA256  PATH`` for every file read, sorted by path (and the outlier systems left out, when
there are any); the same files ingested again with the same choices are skipped.
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
from hanna_stats.store.wmt_ratings import rating_lines

#: The folders of an MTME test set that the ingest needs.
FOLDERS = ("sources", "references", "system-outputs", "human-scores", "metric-scores")
SEG_SCORE = ".seg.score"
TXT = ".txt"
JSONL = ".jsonl"
#: The field of each JSON line that holds the text, by folder (MTME's ``_ReadFieldFromJsonl``).
JSONL_FIELDS = {"sources": "source", "references": "target", "system-outputs": "hypothesis"}
SYS_SCORE = ".sys.score"
SEG_RATING = ".seg.rating"
DOMAIN_SCORE = ".domain.score"
NO_TRANSLATION = "[No translation supplied]"
#: The study's word for its items (the report's "segment level").
ITEM_WORD = "segment"
#: MTME's outlier systems (``meta_info.DATA[test_set][lp].outlier_systems``, snapshot 68a481ae
#: of 2026-04-23), by test-set folder and language pair; no other pair of its test sets has any.
OUTLIER_SYSTEMS = {
    "wmt23": {"en-de": ("synthetic_ref",), "zh-en": ("synthetic_ref",)},
    "wmt22": {"en-de": ("M2M100_1.2B-B4",)},
    "wmt20": {
        "cs-en": ("CUNI-DocTransformer.1457", "zlabs-nlp.1149"),
        "de-en": ("WMTBiomedBaseline.387", "yolo.1052", "zlabs-nlp.1153"),
        "en-cs": ("Online-G.1555", "zlabs-nlp.1151"),
        "en-de": ("Online-G.1556", "WMTBiomedBaseline.388", "zlabs-nlp.179"),
        "en-iu": ("OPPO.722", "UEDIN.1281", "UQAM_TanLe.521"),
        "en-ja": ("Online-G.1557", "SJTU-NICT.370"),
        "en-pl": ("Online-A.1576", "Online-Z.1634", "zlabs-nlp.180"),
        "en-ta": ("Online-G.1561", "SJTU-NICT.386", "TALP_UPC.1049"),
        "iu-en": ("Facebook_AI.729", "NiuTrans.1206"),
        "ja-en": ("Online-G.1564", "Online-Z.1640", "zlabs-nlp.66"),
        "pl-en": ("zlabs-nlp.1162",),
        "ru-en": ("zlabs-nlp.1164",),
        "ta-en": ("Online-G.1568", "TALP_UPC.192"),
        "zh-en": ("WMTBiomedBaseline.183",),
    },
}


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
    another reference than ``ref``; ``human_rating`` the MQM rating files read (by rating set),
    ``unread_ratings`` the rating sets whose ``.seg.score`` file is read instead, ``outliers``
    MTME's outlier systems of the pair (left out), ``metadata`` the systems with a
    ``metadata/LP/SYS.jsonl`` file (not read).
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
    human_rating: dict[str, Source] = field(default_factory=dict)
    unread_ratings: tuple[str, ...] = ()
    outliers: tuple[str, ...] = ()
    metadata: tuple[str, ...] = ()

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
    path: str | Path,
    *,
    lp: str | None = None,
    ref: str | None = None,
    include_outliers: bool = False,
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
    include_outliers : bool
        Keep MTME's outlier systems of the pair (:data:`OUTLIER_SYSTEMS`) as systems, as MTME's
        ``include_outliers=True``; by default they are left out, as MTME's tasks and
        correlations leave them out.

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
    seg_scores = _named(root / "human-scores", f"{lp}.", SEG_SCORE)
    rating_files = _named(root / "human-scores", f"{lp}.", SEG_RATING)
    outliers = (
        []
        if include_outliers
        else sorted(set(OUTLIER_SYSTEMS.get(root.name, {}).get(lp, ())) & set(outputs) - {ref})
    )
    files = {
        "sources": {lp: source_files[lp]},
        "references": refs,
        "outputs": outputs,
        "human": seg_scores,
        "human_rating": {n: p for n, p in rating_files.items() if n not in seg_scores},
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
    if outliers:
        manifest += f"outlier systems left out: {' '.join(outliers)}\n"
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
        human_rating=read["human_rating"],
        unread_ratings=tuple(n for n in rating_files if n in seg_scores),
        outliers=tuple(outliers),
        metadata=tuple(_named(root / "metadata" / lp, "", JSONL)),
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


def _check_system(ts: TestSetSource, source: Source, system: str, row: int) -> None:
    """Refuse a line of a score or rating file whose system has no output file."""
    if system not in ts.outputs:
        raise source.error(
            f"system {shorten(repr(system))} has no output file "
            f"system-outputs/{ts.lp}/"
            + (f"{system}.txt" if system.isprintable() and len(system) <= 40 else "SYSTEM.txt"),
            row=row,
            column="system",
        )


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
        _check_system(ts, source, system, row)
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


def _scores(ts: TestSetSource, source: Source, n: int, lines=None) -> dict[str, list[float | None]]:
    """A segment-level score file: per system, its ``n`` scores in segment order (``lines``: the
    file's ``(row, system, score, _)``, default :func:`_score_lines`)."""
    scores: dict[str, list[float | None]] = {}
    last: dict[str, int] = {}
    for row, system, value, _ in _score_lines(ts, source) if lines is None else lines:
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


def _rating_scores(
    ts: TestSetSource, name: str, source: Source, n: int
) -> tuple[dict[str, list[float | None]], dict[str, set[str]]]:
    """A rating file of the rating set ``name``: per system, the MQM scores of its ``n``
    segments (:func:`~hanna_stats.store.wmt_ratings.rating_lines`), and the raters of its rated
    segments (a line without a rater: ``name``, as MTME reads it)."""
    raters: dict[str, set[str]] = {}

    def lines():
        for row, system, value, rater in rating_lines(source, _lines(source)):
            _check_system(ts, source, system, row)
            if value is not None:
                raters.setdefault(system, set()).add(rater or name)
            yield row, system, value, None

    return _scores(ts, source, n, lines()), raters


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


def _more_notes(
    ts: TestSetSource, outliers: int, ratings: dict[str, tuple[dict[str, list], set[str]]]
) -> tuple[str, ...]:
    """The summary's notes on the outlier systems left out (``outliers``: their score lines),
    the rating sets converted (``ratings``: each one's values and raters) or not read, and the
    metadata files not read."""
    pair = f"{ts.path.name} {ts.lp}"
    notes = []
    if ts.outliers:
        notes.append(
            f"left out the outlier system(s) {', '.join(ts.outliers)} and their {outliers:,} "
            f"score(s): mt-metrics-eval's meta-info marks them outliers of {pair}, and its tasks "
            "and correlations leave them out unless include_outliers"
        )
    for name, (by_system, raters) in ratings.items():
        rated = sum(v is not None for column in by_system.values() for v in column)
        notes.append(
            f"measure {name}: the MQM scores of human-scores/{ts.lp}.{name}{SEG_RATING} "
            f"({rated:,} rated segments, {len(raters):,} rater(s)), with mt-metrics-eval's "
            "standard weights as its score_mqm converter gives them (minus the sum of Major 5, "
            "Minor 1, Neutral 0, Major/Non-translation! 25, Minor/Fluency/Punctuation 0.1)"
        )
    if ts.unread_ratings:
        notes.append(
            f"not read: the MQM error spans of {', '.join(ts.unread_ratings)} "
            f"(human-scores/{ts.lp}.NAME{SEG_RATING}): their released {SEG_SCORE} file is read"
        )
    if ts.metadata:
        notes.append(
            f"not read: metadata/{ts.lp}/ (per-translation metadata of {len(ts.metadata)} "
            "system(s): free-form JSON that no statistic of mt-metrics-eval reads and the store "
            "has no column for)"
        )
    return tuple(notes)


def _leave_out(system: str | None, values: dict, given: list) -> int:
    """Remove ``system``'s segment- and system-level scores; the number of lines removed."""
    removed = sum(len(by.pop(system, ())) for by in values.values())
    for _, by in given:
        for key in [k for k in by if k[0] == system]:
            del by[key]
            removed += 1
    return removed


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
        with a line of fewer than two fields; in a rating file, a line that is not
        ``SYSTEM<TAB>RATING[<TAB>RATER]``, a rating neither ``None`` nor MTME's JSON, an unknown
        severity (:func:`~hanna_stats.store.wmt_ratings.rating_lines`), a system without an
        output file or with more or fewer ratings than segments.
    """
    lp, root = ts.lp, ts.path
    sources = _source_texts(ts.sources)
    n = len(sources)
    refs = {name: _texts(s, n, ts.sources, "references") for name, s in ts.references.items()}
    outputs = {name: _texts(s, n, ts.sources, "system-outputs") for name, s in ts.outputs.items()}
    # A measure's source: its segment-level file, else its system-level one, else its
    # domain-level one.
    human = ts.human_domain | ts.human_system | ts.human_rating | ts.human
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
    raters = {}
    for name, s in ts.human_rating.items():
        values[name], raters[name] = _rating_scores(ts, name, s, n)
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
    # The standard reference is no system: its output file and scores are left out; so are
    # MTME's outlier systems of the pair.
    left_out = _leave_out(ts.ref, values, given)
    outliers = sum(_leave_out(system, values, given) for system in ts.outliers)
    for by in raters.values():
        for system in (ts.ref, *ts.outliers):
            by.pop(system, None)

    systems = [s for s in outputs if s != ts.ref and s not in ts.outliers]
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
        notes=_notes(ts, left_out)
        + _more_notes(
            ts, outliers, {m: (values[m], set().union(*r.values())) for m, r in raters.items()}
        ),
    )
