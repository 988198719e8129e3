"""Dataset formats, and the one :func:`ingest`: files validated in full, then written in one
transaction.

:data:`FORMATS` is the one table of the formats a store ingests, one :class:`Format` per name of
``hanna_stats.vocabulary.WORDS["data_format"]``: its parser, the study name and item word it
records, how :func:`detect_format` recognises it and the options it takes. The parsers live in
their modules (:mod:`~hanna_stats.store.hanna`, :mod:`~hanna_stats.store.annotations`,
:mod:`~hanna_stats.store.tidy`, :mod:`~hanna_stats.store.summeval`,
:mod:`~hanna_stats.store.wmt`); the writing in :mod:`~hanna_stats.store.batch`.

Every ingest

1. reads the file and its SHA-256 (a WMT test set: the files of one language pair, hashed as
   one, see :mod:`hanna_stats.store.wmt`); if the same content was already ingested in the
   same format (table ``ingests``), returns at once with ``skipped=True``;
2. validates the whole file (:class:`~hanna_stats.store.errors.InputError` names file, row and
   column) before anything is written;
3. upserts by natural keys (names), so re-ingesting never duplicates rows, records the file in
   ``ingests`` and recreates the ``scores_wide`` view, all in one transaction: on any error the
   store is exactly as before;
4. keeps one study per store: a file none of whose inputs the store holds is refused unless
   ``extend=True`` (a WMT language pair into a store of another study or test set: always; a
   further pair of the same test set is a new subset, admitted), and one that would change
   stored values unless ``replace=True`` (see
   :func:`~hanna_stats.store.batch.write_batch`); the summary says what was added and replaced;
5. checks every value against its measure's scale (:mod:`hanna_stats.store.scales`): a human
   value off its scale is refused; any other follows ``scale_policy`` (``error``, ``missing``,
   ``clip`` or ``keep``; default: ``keep`` for HANNA's LLM file, whose authors used the values
   as published, ``error`` for the others); the counts are stored and summarised.

Every format takes ``extend``, ``replace`` (default False) and ``scale_policy`` (default None:
the format's own), keyword-only; a format's own options are in its :attr:`Format.options`
(tidy files: ``human_system``, ``human_measures``, ``scales``, ``study``, ``item_word``; WMT
test sets: ``lp``, ``ref``), and any other option is refused.

Examples
--------
>>> [f.name for f in FORMATS.values() if f.options]
['tidy', 'wmt']
>>> FORMATS["summeval"].study, FORMATS["summeval"].item_word
('SummEval', 'summary')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from hanna_stats.store.annotations import parse_annotations
from hanna_stats.store.batch import Staged, write_batch
from hanna_stats.store.db import open_store
from hanna_stats.store.errors import DataNotFoundError
from hanna_stats.store.fetch import ANNOTATIONS_FILE, LLM_FILE, METRIC_SCORES_FILE
from hanna_stats.store.hanna import ITEM_WORD as HANNA_ITEM_WORD
from hanna_stats.store.hanna import STUDY as HANNA
from hanna_stats.store.hanna import parse_metric_scores
from hanna_stats.store.scales import COUNTS
from hanna_stats.store.source import (
    FileSource,
    Source,
    content_path,
    read_file_source,
    read_source,
)
from hanna_stats.store.summeval import ITEM_WORD as SUMMEVAL_ITEM_WORD
from hanna_stats.store.summeval import STUDY as SUMMEVAL
from hanna_stats.store.summeval import parse_summeval
from hanna_stats.store.tidy import parse_tidy
from hanna_stats.store.wmt import ITEM_WORD as WMT_ITEM_WORD
from hanna_stats.store.wmt import (
    TestSetSource,
    is_test_set,
    not_a_test_set,
    parse_test_set,
    read_test_set,
)
from hanna_stats.store.wmt25 import ITEM_WORD as WMT25_ITEM_WORD
from hanna_stats.store.wmt25 import is_release, parse_release, read_release
from hanna_stats.vocabulary import WORDS, refusal

#: A study name or item word that the file (or an option) gives, not the format.
FROM_FILE = "from the file"
#: The options of every format, and their defaults.
COMMON_OPTIONS: dict[str, Any] = {"extend": False, "replace": False, "scale_policy": None}
#: HANNA's files by name, and their formats, in the order a HANNA folder is ingested.
HANNA_FILE_FORMATS = {
    METRIC_SCORES_FILE: "hanna-metric-scores",
    LLM_FILE: "hanna-llm",
    ANNOTATIONS_FILE: "hanna-annotations",
}
#: Files of a HANNA folder that no ingest reads, and how to use each.
HANNA_FILES_ASIDE = {
    "hanna_llm_stories.csv": "the LLM-written stories' texts, without scores: score them into a "
    "store with `score --input hanna_llm_stories.csv --db FILE`",
    "user_study.csv": "the TACL user study's flags: the `user-study` command reads it",
}
#: Files of this suffix (any case) are SummEval's annotations (``model_annotations.aligned.jsonl``).
SUMMEVAL_SUFFIX = ".jsonl"


def detect_format(path: str | Path) -> str:
    """The format of ``path`` when none is named (:func:`ingest` without ``format``, CLI
    ``ingest`` without ``--format``).

    A folder holding ``human-scores/`` and ``metric-scores/`` is a WMT test set (``"wmt"``),
    one holding ``automatic_scores/*.jsonl`` WMT25's released scores (``"wmt25"``), another
    folder a HANNA data folder (``"hanna-dir"``); a file is the HANNA format of its name
    (``"hanna-metric-scores"``, ``"hanna-llm"``, ``"hanna-annotations"``), else SummEval's
    annotations when its suffix is ``.jsonl`` in any case (``"summeval"``), else ``"tidy"``; a
    ``.gz`` suffix is left out first (files are read uncompressed, see
    :func:`~hanna_stats.store.source.read_source`).

    Examples
    --------
    >>> detect_format("data/hanna_metric_scores_llm.csv")
    'hanna-llm'
    >>> detect_format("model_annotations.aligned.paired.JSONL")
    'summeval'
    >>> detect_format("scores.parquet")
    'tidy'
    >>> detect_format("model_annotations.aligned.jsonl.gz")
    'summeval'
    """
    path = Path(path)
    if path.is_dir():
        if is_release(path):
            return "wmt25"
        return "wmt" if is_test_set(path) else "hanna-dir"
    path = content_path(path)
    if path.name in HANNA_FILE_FORMATS:
        return HANNA_FILE_FORMATS[path.name]
    return "summeval" if path.suffix.lower() == SUMMEVAL_SUFFIX else "tidy"


def check_hanna_dir(data_dir: str | Path) -> None:
    """Refuse a folder without ``hanna_metric_scores.csv`` with one line that says what was
    expected: for WMT data that is not one test set (MTME's download root, a folder lacking
    ``human-scores/``), why (:func:`~hanna_stats.store.wmt.not_a_test_set`).

    Raises
    ------
    InputError
        For WMT data that is not a test set.
    DataNotFoundError
        For another folder without ``hanna_metric_scores.csv``.
    """
    data_dir = Path(data_dir)
    if (data_dir / METRIC_SCORES_FILE).is_file():
        return
    wmt = not_a_test_set(data_dir)
    if wmt is not None:
        raise wmt
    raise DataNotFoundError(
        f"{METRIC_SCORES_FILE} not found in {data_dir}: expected a HANNA data folder (with "
        f"{METRIC_SCORES_FILE}) or a WMT test set in mt-metrics-eval's layout (a folder with "
        "human-scores/ and metric-scores/, e.g. wmt23/)"
    )


@dataclass(frozen=True)
class IngestSummary:
    """What an ingest did.

    Attributes
    ----------
    source : str
        File name.
    format : str
        Format name as recorded in ``ingests``.
    sha256 : str
        Hex SHA-256 of the file.
    n_values : int
        Scores plus ratings written (0 when skipped).
    skipped : bool
        True when this file had already been ingested in this format.
    added : dict
        What was new to the store: numbers of ``systems, inputs, items, measures, values``.
    replaced : int
        Stored values changed (only with ``replace=True``).
    scales : polars.DataFrame or None
        Per measure with a scale: the policy and the numbers of values, below, above, not whole
        and unparsed (table ``scale_checks``); None when skipped.
    not_applied : tuple of str
        Options given to a skipped ingest, which it did not apply (e.g. ``human_measures``).
    replaced_texts : dict
        Stored item texts changed (an edited output, another standard reference; only with
        ``replace=True``): ``reference texts``, ``output texts``.
    notes : tuple of str
        What the format's parser left out or chose (WMT: the standard reference's scores, the
        metrics of other references), one sentence each.
    """

    source: str
    format: str
    sha256: str
    n_values: int
    skipped: bool
    added: dict[str, int] = field(default_factory=dict)
    replaced: int = 0
    scales: pl.DataFrame | None = None
    not_applied: tuple[str, ...] = ()
    replaced_texts: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def __str__(self) -> str:
        notes = "".join(f"\n  note: {note}" for note in self.notes)
        if self.skipped:
            return (
                f"{self.source}: already ingested ({self.format}), nothing written"
                + (
                    f"; not applied: {', '.join(self.not_applied)} (ingest the file into a new "
                    "store to apply them)"
                    if self.not_applied
                    else ""
                )
                + notes
            )
        added = ", ".join(f"{n:,} {what}" for what, n in self.added.items())
        texts = "".join(f", {n:,} {what}" for what, n in self.replaced_texts.items() if n)
        return (
            f"{self.source}: {self.format}, {self.n_values:,} values; new to the store: "
            f"{added}; replaced: {self.replaced:,} values{texts}{self._scale_note()}{notes}"
        )

    def _scale_note(self) -> str:
        """'; off scale: ...' per policy, when any value was off its scale or unparsed."""
        if self.scales is None or self.scales.is_empty():
            return ""
        totals = self.scales.group_by("policy").agg(pl.col(COUNTS[1:]).sum()).sort("policy")
        parts = [
            f"{below:,} below, {above:,} above, {not_whole:,} not whole, {unparsed:,} unparsed "
            f"(policy {policy})"
            for policy, below, above, not_whole, unparsed in totals.iter_rows()
            if below or above or not_whole or unparsed
        ]
        return "; off scale: " + "; ".join(parts) if parts else ""


def _one_test_set_per_store(
    con: duckdb.DuckDBPyConnection, source: TestSetSource
) -> dict[str, Any]:
    """Admit a WMT language pair into an empty store, a store holding that pair, or one holding
    other pairs of the same test set (its folder name; their inputs labelled with their pair):
    then the pair is a new subset, written with ``extend`` and the study renamed after the test
    set (the options returned for :func:`~hanna_stats.store.batch.write_batch`). Refuse any other
    store, whatever ``extend`` and ``replace`` say."""
    ((held, n_inputs, unlabelled, pairs),) = con.execute(
        "SELECT (SELECT min(name) FROM study), (SELECT count(*) FROM inputs), "
        "(SELECT count(*) FROM inputs WHERE subset IS NULL), "
        "(SELECT list(DISTINCT subset) FILTER (WHERE subset IS NOT NULL) FROM inputs)"
    ).fetchall()
    if (held is None and not n_inputs) or held == source.name:
        return {}
    folder, pairs = source.path.name, set(pairs or ())
    if not unlabelled and held in {folder, *(f"{folder} {lp}" for lp in pairs)}:
        if source.lp in pairs:
            return {}
        return {"extend": True, "study": folder, "rename_study": True}
    raise source.error(
        f"this store holds {held or 'another study'}; a store holds the language pairs of "
        f"one test set: ingest {source.lp} into its own store"
    )


@dataclass(frozen=True)
class Format:
    """One dataset format of :data:`FORMATS`.

    Attributes
    ----------
    name : str
        As in ``hanna_stats.vocabulary.WORDS["data_format"]``, in table ``ingests`` and in
        ``ingest --format``.
    reads : str
        What it reads (``"tidy files"``), for messages.
    detected : str
        How :func:`detect_format` recognises it.
    study, item_word : str
        The study name and the word for its items that a store's first ingest records, or
        :data:`FROM_FILE` (tidy: options ``study``, default the file's stem, and ``item_word``,
        default ``item``; WMT: the folder and the pair, e.g. ``wmt23 en-de``, the folder once
        the store holds several pairs).
    doc : str
        What it holds and how it maps onto the store.
    parse : callable or None
        ``parse(source, **parse_options) -> Batch`` (tidy files: a
        :class:`~hanna_stats.store.tidy.TidyFile`, validated as it is written, in bounded
        memory); None for a HANNA data folder, whose files are ingested in their own formats.
    read : callable
        ``read(path, **read_options) -> Source`` (default
        :func:`~hanna_stats.store.source.read_source`; tidy files:
        :func:`~hanna_stats.store.source.read_file_source`, which leaves the file on disk).
    read_options, parse_options, record_options : dict
        The format's own options by name, with their defaults: those of ``read``, of ``parse``,
        and ``study``/``item_word`` when the ingest names them.
    admit : callable or None
        ``admit(con, source)`` refuses a store the source may not go into, else returns options
        of :func:`~hanna_stats.store.batch.write_batch` that override the ingest's (WMT: the
        pairs of one test set per store; a new pair extends the study and renames it after the
        test set).
    """

    name: str
    reads: str
    detected: str
    study: str
    item_word: str
    doc: str
    parse: Callable[..., Staged] | None
    read: Callable[..., Source | FileSource] = read_source
    read_options: dict[str, Any] = field(default_factory=dict)
    parse_options: dict[str, Any] = field(default_factory=dict)
    record_options: dict[str, Any] = field(default_factory=dict)
    admit: Callable[[duckdb.DuckDBPyConnection, Any], dict[str, Any]] | None = None

    @property
    def options(self) -> tuple[str, ...]:
        """The format's own options (besides ``extend``, ``replace``, ``scale_policy``)."""
        return (*self.read_options, *self.parse_options, *self.record_options)


_FORMATS = (
    Format(
        "hanna-metric-scores",
        "HANNA's metric scores file",
        f"a file named {METRIC_SCORES_FILE}",
        HANNA,
        HANNA_ITEM_WORD,
        "A ``Model`` column, the six criteria and the metric columns, each cell a JSON list "
        "with one number per prompt. For HANNA: 11 systems x 96 prompts x 78 measures = 82,368 "
        "values.",
        parse_metric_scores,
    ),
    Format(
        "hanna-llm",
        "HANNA's LLM file",
        f"a file named {LLM_FILE}",
        HANNA,
        HANNA_ITEM_WORD,
        "The TACL 2024 follow-up of HANNA: besides the columns of the metric scores file "
        "(upserted into the same items and measures), the LLM-judge measures (kind "
        "``llm-judge``, e.g. ``Beluga-13B Relevance (prompt 1)``) and the rater-level ratings of "
        "the three judge slots ``Human 1..3 XX`` as raters ``HANNA judge slot 1..3`` (kind "
        "``slot``: positions, not worker identities), whose mean must equal the criterion "
        "column. ``Human Avg k XX`` columns are leave-one-out means, checked as JSON but not "
        "stored. For HANNA: 1056 stories x (78 + 140) measures + 19,008 slot ratings.",
        partial(parse_metric_scores, llm=True),
    ),
    Format(
        "hanna-annotations",
        "HANNA's raw annotations file",
        f"a file named {ANNOTATIONS_FILE}",
        HANNA,
        HANNA_ITEM_WORD,
        "The raw rater-level file (see :func:`~hanna_stats.store.annotations.parse_annotations`): "
        "items by Story ID, systems by Model, inputs by prompt index (Story ID mod number of "
        "prompts), raters by Worker ID, ratings with work time and assignment id; texts into "
        "``inputs.text``, ``items.text`` and ``items.reference``. Where judge-slot ratings of "
        "the same items exist, ``item_scores`` uses the worker ratings only. n_values = "
        "ratings.",
        parse_annotations,
    ),
    Format(
        "tidy",
        "tidy files",
        "any other file",
        FROM_FILE,
        FROM_FILE,
        "A tidy score file (CSV or Parquet) of any study: columns ``item``, ``input``, "
        "``system``, ``measure``, ``value`` and optional ``rater`` and ``subset`` (the sub-study "
        "an input belongs to, e.g. a language pair: analyses run per subset; see "
        ":mod:`hanna_stats.store.tidy`). Options: ``human_system``, the system whose outputs are "
        "human-written; ``human_measures``, measures of kind ``human`` (the criteria), as if a "
        "``kind`` column said so (CLI ``--human``); ``scales``, declared Likert scales, measure "
        "-> (LO, HI) (CLI ``--scale NAME=LO..HI``; a human measure without one gets a scale "
        "inferred from its values, which the summary notes); ``study``, the study's name "
        "(default: the file's stem, without ``.gz``); ``item_word``, the study's word for its "
        "items (e.g. ``summary``; default ``item``). A file already ingested is skipped whatever "
        "``human_system``, ``human_measures`` and ``scales`` (``not_applied`` names those "
        "given). n_values = rows written. Read and checked by DuckDB in bounded memory (a "
        "CSV file parsed by Python's csv module first), however many rows.",
        parse_tidy,
        read=read_file_source,
        parse_options={"human_system": None, "human_measures": (), "scales": None},
        record_options={"study": None, "item_word": "item"},
    ),
    Format(
        "summeval",
        "SummEval's annotations",
        "a file whose suffix is .jsonl, in any case",
        SUMMEVAL,
        SUMMEVAL_ITEM_WORD,
        "SummEval's annotations, ``model_annotations.aligned[.paired][.scored].jsonl`` (Fabbri "
        "et al. 2021; see :mod:`hanna_stats.store.summeval`): inputs are documents (``id``), "
        "systems ``model_id``, items ``<id>/<model_id>``; the experts' ratings make the criteria "
        "``Coherence``, ``Consistency``, ``Fluency`` and ``Relevance`` (raters ``SummEval expert "
        "1..3``), the crowd workers' ``Coherence (turker)`` ...; metric scores of a scored file "
        "are metrics. n_values = ratings plus metric scores (1,600 summaries x 8 ratings x 4 "
        "criteria = 51,200 ratings).",
        parse_summeval,
    ),
    Format(
        "wmt",
        "WMT test sets",
        "a folder holding human-scores/ and metric-scores/",
        FROM_FILE,
        WMT_ITEM_WORD,
        "One language pair of a WMT test set in MTME's folder layout (see "
        ":mod:`hanna_stats.store.wmt`): inputs are segments (``en-de:17``), items (segment, "
        "system), measures the human scores (kind ``human``, e.g. ``mqm``) and metric scores "
        "(kind ``metric``, e.g. ``BLEU-refA``): segment-level values, and the system-level ones "
        "as given (table ``given_system_scores_by_id``). The pair is the inputs' subset "
        "(``inputs.subset``): a store holds the pairs of one test set, ingested one at a time, "
        "and the analyses run per pair (the default; ``--subset LP`` for one). The study is named "
        "after the folder and the pair, e.g. ``wmt23 en-de``, and after the folder, ``wmt23``, "
        "once it holds several pairs. As in MTME's ``GetCorrelations``, the standard reference "
        "``ref`` is no system (its scores are left out) and metrics of other references are not "
        "read; the summary's ``notes`` count both. Options: ``lp``, the language pair (required "
        "when the test set has several); ``ref``, the standard reference (required when the "
        "pair has several); ``include_outliers``, keep mt-metrics-eval's outlier systems of the "
        "pair (left out by default, as its tasks do). A store holding another study, or pairs of "
        "another test set, is "
        "refused whatever ``extend`` and ``replace`` say. n_values = segment- and system-level "
        "score lines (``None`` included, stored as missing); the same files ingested again with "
        "the same ``lp`` and ``ref`` are skipped.",
        parse_test_set,
        read=read_test_set,
        read_options={"lp": None, "ref": None, "include_outliers": False},
        admit=_one_test_set_per_store,
    ),
    Format(
        "wmt25",
        "WMT25's released automatic scores",
        "a folder holding automatic_scores/*.jsonl",
        FROM_FILE,
        WMT25_ITEM_WORD,
        "The automatic scores WMT25's general MT task released (wmt-conference/wmt25-general-mt, "
        "``data/automatic_scores/SYSTEM.jsonl``; see :mod:`hanna_stats.store.wmt25`): one JSON "
        "line per (language pair, document), a list of paragraph scores per metric. Inputs are "
        "paragraphs (``en-cs_CZ:DOC:3``), their subset the language pair as released (locale "
        "codes kept: ``en-sr_Cyrl_RS``), systems the files, every metric a measure of kind "
        "``metric`` (all higher-is-better as released; ``null`` is missing). All pairs in one "
        "ingest, the folder's files hashed as one input and written in one transaction; the "
        "summary's notes count the metrics a pair lacks and the missing paragraph scores. "
        "n_values = paragraph scores (nulls included).",
        parse_release,
        read=read_release,
    ),
    Format(
        "hanna-dir",
        "HANNA data folders",
        "any other folder",
        HANNA,
        HANNA_ITEM_WORD,
        f"A HANNA data folder: {METRIC_SCORES_FILE} (required), {LLM_FILE} and "
        f"{ANNOTATIONS_FILE} (when present), ingested in this order, each in its own format; "
        "files already ingested are skipped. A folder without the first file is refused (see "
        ":func:`check_hanna_dir`).",
        None,
    ),
)
#: The dataset formats by name, in the order of ``WORDS["data_format"]``.
FORMATS: dict[str, Format] = {f.name: f for f in _FORMATS}

# Options whose being ignored by a skipped ingest is worth saying, with their CLI flags.
_NOT_APPLIED = {
    "human_system": "human_system (--human-system)",
    "human_measures": "human_measures (--human)",
    "scales": "scales (--scale)",
}


def _held(con: duckdb.DuckDBPyConnection, name: str, value: Any) -> bool:
    """Whether the store already holds what the option ``name`` of :data:`_NOT_APPLIED` says:
    the system ``human_system`` flagged human, every measure of ``human_measures`` of kind
    human, every measure of ``scales`` on that scale."""
    if name == "human_system":
        query = "SELECT count(*) FROM systems WHERE name = ? AND is_human"
        return con.execute(query, [value]).fetchall()[0][0] == 1
    if name == "human_measures":
        query = "SELECT count(*) FROM measures WHERE kind = 'human' AND list_contains(?, name)"
        return con.execute(query, [list(set(value))]).fetchall()[0][0] == len(set(value))
    query = "SELECT count(*) FROM measures WHERE name = ? AND scale_min = ? AND scale_max = ?"
    return all(
        con.execute(query, [measure, lo, hi]).fetchall()[0][0] == 1
        for measure, (lo, hi) in value.items()
    )


def ingest(
    con: duckdb.DuckDBPyConnection,
    path: str | Path,
    *,
    format: str | None = None,
    **options: Any,
) -> list[IngestSummary]:
    """Ingest a file, a WMT test set or a HANNA data folder into an open store.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        Writable store (see :func:`~hanna_stats.store.db.open_store`).
    path : str or Path
        The file or folder.
    format : str, optional
        One of :data:`FORMATS` (``hanna-metric-scores``, ``hanna-llm``, ``hanna-annotations``,
        ``tidy``, ``summeval``, ``wmt``, ``hanna-dir``); default: :func:`detect_format`.
    **options
        ``extend``, ``replace`` (default False) and ``scale_policy`` (default None: the
        format's own), see the module; and the format's own (:attr:`Format.options`):
        tidy files ``human_system``, ``human_measures``, ``scales``, ``study``, ``item_word``;
        WMT test sets ``lp``, ``ref``. ``FORMATS[name].doc`` says what each one reads.

    Returns
    -------
    list of IngestSummary
        One per file: one, or a HANNA folder's files in ingest order.

    Raises
    ------
    ValueError
        For an unknown format, or an option the format does not take (naming both).
    InputError
        If a file is malformed, contradicts stored items, belongs to another study or would
        replace values without ``extend`` / ``replace`` (nothing is written), naming the file,
        row and column; for WMT data that is not one test set.
    DataNotFoundError
        If the file or folder does not exist, or a HANNA folder lacks
        ``hanna_metric_scores.csv``.

    Examples
    --------
    >>> from hanna_stats.store import open_store
    >>> ingest(open_store(), "scores.csv", lp="en-de")
    Traceback (most recent call last):
    ...
    ValueError: lp: not an option of format 'tidy' (tidy files); it takes human_system, \
human_measures, scales, study, item_word, extend, replace, scale_policy
    """
    fmt = detect_format(path) if format is None else format
    if fmt not in FORMATS:
        raise refusal("format", fmt, WORDS["data_format"])
    spec = FORMATS[fmt]
    for option in options:
        if option not in spec.options and option not in COMMON_OPTIONS:
            takes = ", ".join((*spec.options, *COMMON_OPTIONS))
            raise ValueError(
                f"{option}: not an option of format {fmt!r} ({spec.reads}); it takes {takes}"
            )
    if spec.parse is None:  # a HANNA data folder: each of its files in its own format
        check_hanna_dir(path)
        summaries = [
            _ingest(con, Path(path) / name, FORMATS[file_format], options)
            for name, file_format in HANNA_FILE_FORMATS.items()
            if (Path(path) / name).is_file()
        ]
        aside = [
            f"{n}: {how}" for n, how in HANNA_FILES_ASIDE.items() if (Path(path) / n).is_file()
        ]
        if aside:
            note = f"not ingested (no ingest format reads them): {'; '.join(aside)}"
            summaries[-1] = replace(summaries[-1], notes=(*summaries[-1].notes, note))
        return summaries
    return [_ingest(con, path, spec, options)]


def _ingest(
    con: duckdb.DuckDBPyConnection, path: str | Path, spec: Format, options: Mapping[str, Any]
) -> IngestSummary:
    """Ingest one file (or test set) in format ``spec`` with ``options`` (checked)."""
    given = {
        **COMMON_OPTIONS,
        **spec.read_options,
        **spec.parse_options,
        **spec.record_options,
        **options,
    }
    item_word = given.get("item_word", spec.item_word)
    if not isinstance(item_word, str) or not item_word.strip():
        raise ValueError(f"item_word must be a non-empty word; got {item_word!r}")
    source = spec.read(path, **{k: given[k] for k in spec.read_options})
    admitted = spec.admit(con, source) if spec.admit is not None else {}
    done = con.execute(
        "SELECT count(*) FROM ingests WHERE sha256 = ? AND format = ?", [source.sha256, spec.name]
    ).fetchall()[0][0]
    if done:
        not_applied = tuple(
            label
            for name, label in _NOT_APPLIED.items()
            if options.get(name) and not _held(con, name, options[name])
        )
        return IngestSummary(
            source.name, spec.name, source.sha256, 0, True, not_applied=not_applied
        )
    batch = spec.parse(source, **{k: given[k] for k in spec.parse_options})
    study = given.get("study", spec.study)
    write_options = {
        "study": source.name if study == FROM_FILE else study or source.content_path.stem,
        "item_word": item_word.strip(),
        "extend": given["extend"],
        "replace": given["replace"],
        "scale_policy": given["scale_policy"],
    }
    report = write_batch(con, batch, source, spec.name, **(write_options | admitted))
    return IngestSummary(
        source.name,
        spec.name,
        source.sha256,
        batch.n_values,
        False,
        report.added,
        report.replaced,
        report.scales,
        replaced_texts=report.replaced_texts,
        notes=batch.notes
        + (
            (
                f"a new subset of the study, now named {admitted['study']!r}: analyses run per "
                "subset, stacked under a column subset (--pool-subsets pools them), or on one "
                "with --subset LABEL",
            )
            if admitted.get("rename_study")
            else ()
        ),
    )


def build_hanna_store(
    data_dir: str | Path, db_path: str | Path | None = None
) -> duckdb.DuckDBPyConnection:
    """Open (or create) a store and ingest the HANNA files found in ``data_dir`` (format
    ``hanna-dir``); calling it again on the same store is cheap.

    Parameters
    ----------
    data_dir : str or Path
        Folder with the HANNA files (see :func:`hanna_stats.store.fetch.resolve_hanna_dir`).
    db_path : str or Path, optional
        DuckDB file; None builds an in-memory store.

    Returns
    -------
    duckdb.DuckDBPyConnection
        The writable store.

    Raises
    ------
    DataNotFoundError
        If ``hanna_metric_scores.csv`` is not in ``data_dir``.
    InputError
        If a file is malformed.
    """
    if not (Path(data_dir) / METRIC_SCORES_FILE).is_file():
        raise DataNotFoundError(f"{METRIC_SCORES_FILE} not found in {data_dir}")
    con = open_store(db_path)
    try:
        ingest(con, data_dir, format="hanna-dir")
    except BaseException:
        con.close()
        raise
    return con
