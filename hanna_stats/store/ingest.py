"""Ingest score files into the store: validated in full, then written in one transaction.

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
   ``extend=True`` (a WMT language pair into a store of another study or pair: always), and one
   that would change stored values unless ``replace=True`` (see
   :func:`~hanna_stats.store.batch.write_batch`); the summary says what was added and replaced;
5. checks every value against its measure's scale (:mod:`hanna_stats.store.scales`): a human
   value off its scale is refused; any other follows ``scale_policy`` (``error``, ``missing``,
   ``clip`` or ``keep``; default: ``keep`` for HANNA's LLM file, whose authors used the values
   as published, ``error`` for the others); the counts are stored and summarised.

Every ingest function takes ``extend``, ``replace`` (default False) and ``scale_policy``
(default None: the format's own), keyword-only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import replace as replace_fields
from pathlib import Path

import duckdb
import polars as pl

from hanna_stats.store.annotations import parse_annotations
from hanna_stats.store.batch import Batch, write_batch
from hanna_stats.store.fetch import ANNOTATIONS_FILE, LLM_FILE, METRIC_SCORES_FILE
from hanna_stats.store.hanna import ITEM_WORD as HANNA_ITEM_WORD
from hanna_stats.store.hanna import STUDY as HANNA
from hanna_stats.store.hanna import parse_metric_scores
from hanna_stats.store.scales import COUNTS
from hanna_stats.store.source import Source, content_path, read_source
from hanna_stats.store.summeval import ITEM_WORD as SUMMEVAL_ITEM_WORD
from hanna_stats.store.summeval import STUDY as SUMMEVAL
from hanna_stats.store.summeval import parse_summeval
from hanna_stats.store.tidy import parse_tidy
from hanna_stats.store.wmt import ITEM_WORD as WMT_ITEM_WORD
from hanna_stats.store.wmt import is_test_set, parse_test_set, read_test_set

FORMAT_METRIC_SCORES = "hanna-metric-scores"
FORMAT_LLM = "hanna-llm"
FORMAT_ANNOTATIONS = "hanna-annotations"
FORMAT_TIDY = "tidy"
FORMAT_SUMMEVAL = "summeval"
FORMAT_WMT = "wmt"
#: A HANNA data folder (:func:`~hanna_stats.store.cube.ingest_hanna_dir`), not a file format.
FORMAT_HANNA_DIR = "hanna-dir"
#: HANNA's files by name, and their formats.
HANNA_FILE_FORMATS = {
    METRIC_SCORES_FILE: FORMAT_METRIC_SCORES,
    LLM_FILE: FORMAT_LLM,
    ANNOTATIONS_FILE: FORMAT_ANNOTATIONS,
}
#: Files of this suffix (any case) are SummEval's annotations (``model_annotations.aligned.jsonl``).
SUMMEVAL_SUFFIX = ".jsonl"


def detect_format(path: str | Path) -> str:
    """The format of ``path`` when none is named (CLI ``ingest`` without ``--format``).

    A folder holding ``human-scores/`` and ``metric-scores/`` is a WMT test set (``"wmt"``),
    another folder a HANNA data folder (``"hanna-dir"``); a file is the HANNA format of its name
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
        return FORMAT_WMT if is_test_set(path) else FORMAT_HANNA_DIR
    path = content_path(path)
    if path.name in HANNA_FILE_FORMATS:
        return HANNA_FILE_FORMATS[path.name]
    return FORMAT_SUMMEVAL if path.suffix.lower() == SUMMEVAL_SUFFIX else FORMAT_TIDY


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
        if self.skipped:
            return f"{self.source}: already ingested ({self.format}), nothing written" + (
                f"; not applied: {', '.join(self.not_applied)} (ingest the file into a new "
                "store to apply them)"
                if self.not_applied
                else ""
            )
        added = ", ".join(f"{n:,} {what}" for what, n in self.added.items())
        texts = "".join(f", {n:,} {what}" for what, n in self.replaced_texts.items() if n)
        return (
            f"{self.source}: {self.format}, {self.n_values:,} values; new to the store: "
            f"{added}; replaced: {self.replaced:,} values{texts}{self._scale_note()}"
            + "".join(f"\n  note: {note}" for note in self.notes)
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


def _ingest(
    con: duckdb.DuckDBPyConnection,
    path: str | Path | Source,
    fmt: str,
    parse: Callable[[Source], Batch],
    *,
    study: str,
    item_word: str = "item",
    extend: bool,
    replace: bool,
    scale_policy: str | None,
) -> IngestSummary:
    if not isinstance(item_word, str) or not item_word.strip():
        raise ValueError(f"item_word must be a non-empty word; got {item_word!r}")
    source = path if isinstance(path, Source) else read_source(path)
    done = con.execute(
        "SELECT count(*) FROM ingests WHERE sha256 = ? AND format = ?", [source.sha256, fmt]
    ).fetchall()[0][0]
    if done:
        return IngestSummary(source.name, fmt, source.sha256, 0, True)
    batch = parse(source)
    report = write_batch(
        con,
        batch,
        source,
        fmt,
        study=study or source.content_path.stem,
        item_word=item_word.strip(),
        extend=extend,
        replace=replace,
        scale_policy=scale_policy,
    )
    return IngestSummary(
        source.name,
        fmt,
        source.sha256,
        batch.n_values,
        False,
        report.added,
        report.replaced,
        report.scales,
        replaced_texts=report.replaced_texts,
        notes=batch.notes,
    )


def ingest_hanna_metric_scores(
    con: duckdb.DuckDBPyConnection,
    path: str | Path,
    *,
    extend: bool = False,
    replace: bool = False,
    scale_policy: str | None = None,
) -> IngestSummary:
    """Ingest ``hanna_metric_scores.csv``.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        Writable store (see :func:`~hanna_stats.store.db.open_store`).
    path : str or Path
        The file: a ``Model`` column, the six criteria and the metric columns, each cell a JSON
        list with one number per prompt.

    Returns
    -------
    IngestSummary
        For HANNA: 11 systems x 96 prompts x 78 measures = 82,368 values.

    Raises
    ------
    InputError
        If the file is malformed (nothing is written).
    DataNotFoundError
        If the file does not exist.
    """
    return _ingest(
        con,
        path,
        FORMAT_METRIC_SCORES,
        parse_metric_scores,
        study=HANNA,
        item_word=HANNA_ITEM_WORD,
        extend=extend,
        replace=replace,
        scale_policy=scale_policy,
    )


def ingest_hanna_llm(
    con: duckdb.DuckDBPyConnection,
    path: str | Path,
    *,
    extend: bool = False,
    replace: bool = False,
    scale_policy: str | None = None,
) -> IngestSummary:
    """Ingest ``hanna_metric_scores_llm.csv`` (TACL 2024 follow-up of HANNA).

    Besides the columns of ``hanna_metric_scores.csv`` (upserted into the same items and
    measures), it stores the LLM-judge measures (kind ``llm-judge``, e.g.
    ``Beluga-13B Relevance (prompt 1)``) and the rater-level ratings of the three judge slots
    ``Human 1..3 XX`` as raters ``HANNA judge slot 1..3`` (kind ``slot``: positions, not worker
    identities). Their mean must equal the criterion column. ``Human Avg k XX`` columns are
    leave-one-out means, checked as JSON but not stored.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        Writable store.
    path : str or Path
        The file.

    Returns
    -------
    IngestSummary
        For HANNA: 1056 stories x (78 + 140) measures + 19,008 slot ratings.

    Raises
    ------
    InputError
        If the file is malformed (nothing is written).
    DataNotFoundError
        If the file does not exist.
    """
    return _ingest(
        con,
        path,
        FORMAT_LLM,
        lambda s: parse_metric_scores(s, llm=True),
        study=HANNA,
        item_word=HANNA_ITEM_WORD,
        extend=extend,
        replace=replace,
        scale_policy=scale_policy,
    )


def ingest_hanna_annotations(
    con: duckdb.DuckDBPyConnection,
    path: str | Path,
    *,
    extend: bool = False,
    replace: bool = False,
    scale_policy: str | None = None,
) -> IngestSummary:
    """Ingest the raw rater-level file ``hanna_stories_annotations.csv``.

    See :func:`hanna_stats.store.annotations.parse_annotations` for the mapping: items by Story ID,
    systems by Model, inputs by prompt index (Story ID mod number of prompts), raters by
    Worker ID, ratings with work time and assignment id; texts into ``inputs.text``,
    ``items.text`` and ``items.reference``. Where judge-slot ratings of the same items exist,
    ``story_scores`` uses the worker ratings only.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        Writable store.
    path : str or Path
        The file.

    Returns
    -------
    IngestSummary
        n_values = number of ratings.

    Raises
    ------
    InputError
        If the file is malformed or contradicts stored items (nothing is written).
    DataNotFoundError
        If the file does not exist.
    """
    return _ingest(
        con,
        path,
        FORMAT_ANNOTATIONS,
        parse_annotations,
        study=HANNA,
        item_word=HANNA_ITEM_WORD,
        extend=extend,
        replace=replace,
        scale_policy=scale_policy,
    )


def ingest_tidy(
    con: duckdb.DuckDBPyConnection,
    path: str | Path,
    *,
    human_system: str | None = None,
    human_measures: Sequence[str] = (),
    scales: Mapping[str, tuple[float, float]] | None = None,
    study: str | None = None,
    item_word: str = "item",
    extend: bool = False,
    replace: bool = False,
    scale_policy: str | None = None,
) -> IngestSummary:
    """Ingest a tidy score file (CSV or Parquet) of any study.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        Writable store.
    path : str or Path
        Columns ``item``, ``input``, ``system``, ``measure``, ``value`` and optional ``rater``
        (see :mod:`hanna_stats.store.tidy`).
    human_system : str, optional
        System whose outputs are human-written (``systems.is_human``).
    human_measures : sequence of str
        Measures of kind ``human`` (the criteria), as if a ``kind`` column said so; each must
        be in the file and have no other kind there (CLI ``--human``).
    scales : mapping of str to (float, float), optional
        Declared Likert scales, measure -> (LO, HI) (CLI ``--scale NAME=LO..HI``); a human
        measure without one gets a scale inferred from its values, which the summary notes (see
        :mod:`hanna_stats.store.tidy`).
    study : str, optional
        The study's name, recorded by a store's first ingest (default: the file's stem, without
        ``.gz``).
    item_word : str
        The study's word for its items (e.g. ``"summary"``, ``"segment"``), recorded with the
        name; the report calls the item level by it ("summary level").

    Returns
    -------
    IngestSummary
        n_values = rows written. A file already ingested is skipped whatever ``human_system``,
        ``human_measures`` and ``scales`` (``not_applied`` names those given).

    Raises
    ------
    InputError
        If the file is malformed or contradicts stored items (nothing is written).
    DataNotFoundError
        If the file does not exist.
    """
    summary = _ingest(
        con,
        path,
        FORMAT_TIDY,
        lambda s: parse_tidy(
            s, human_system=human_system, human_measures=human_measures, scales=scales
        ),
        study=study,
        item_word=item_word,
        extend=extend,
        replace=replace,
        scale_policy=scale_policy,
    )
    if summary.skipped:
        given = {
            "human_system (--human-system)": human_system,
            "human_measures (--human)": human_measures,
            "scales (--scale)": scales,
        }
        summary = replace_fields(summary, not_applied=tuple(k for k, v in given.items() if v))
    return summary


def ingest_summeval(
    con: duckdb.DuckDBPyConnection,
    path: str | Path,
    *,
    extend: bool = False,
    replace: bool = False,
    scale_policy: str | None = None,
) -> IngestSummary:
    """Ingest SummEval's annotations, ``model_annotations.aligned[.paired][.scored].jsonl``.

    See :mod:`hanna_stats.store.summeval` for the format (Fabbri et al. 2021, TACL; repository
    Yale-LILY/SummEval) and the mapping: inputs are documents (``id``), systems ``model_id``,
    items ``<id>/<model_id>``; the experts' ratings make the criteria ``Coherence``,
    ``Consistency``, ``Fluency`` and ``Relevance`` (raters ``SummEval expert 1..3``), the crowd
    workers' ``Coherence (turker)`` ...; metric scores of a scored file are metrics. The study
    is named ``SummEval``, its items called summaries.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        Writable store.
    path : str or Path
        The file (JSON lines).

    Returns
    -------
    IngestSummary
        n_values = ratings plus metric scores (SummEval: 1,600 summaries x 8 ratings x 4
        criteria = 51,200 ratings).

    Raises
    ------
    InputError
        Naming the line and field (nothing is written).
    DataNotFoundError
        If the file does not exist.
    """
    return _ingest(
        con,
        path,
        FORMAT_SUMMEVAL,
        parse_summeval,
        study=SUMMEVAL,
        item_word=SUMMEVAL_ITEM_WORD,
        extend=extend,
        replace=replace,
        scale_policy=scale_policy,
    )


def ingest_wmt(
    con: duckdb.DuckDBPyConnection,
    path: str | Path,
    *,
    lp: str | None = None,
    ref: str | None = None,
    extend: bool = False,
    replace: bool = False,
    scale_policy: str | None = None,
) -> IngestSummary:
    """Ingest one language pair of a WMT test set in MTME's folder layout.

    See :mod:`hanna_stats.store.wmt` for the files read and the mapping: inputs are segments
    (``en-de:17``), items (segment, system), measures the human scores (kind ``human``, e.g.
    ``mqm``) and metric scores (kind ``metric``, e.g. ``BLEU-refA``): segment-level values, and
    the system-level ones as given (table ``system_level_scores``). The study is named after the
    folder and the pair, e.g. ``wmt23 en-de``. As in MTME's ``GetCorrelations``, the standard
    reference ``ref`` is no system (its scores are left out) and metrics of other references are
    not read; the summary's ``notes`` count both. A store holds one pair: system and measure names
    are not tied to a pair, so a store holding another study or pair is refused whatever
    ``extend`` and ``replace`` say.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        Writable store.
    path : str or Path
        The test-set folder (``sources/``, ``references/``, ``system-outputs/``,
        ``human-scores/``, ``metric-scores/``).
    lp : str, optional
        The language pair, e.g. ``en-de``; required when the test set has several.
    ref : str, optional
        The standard reference (``items.reference``), e.g. ``refA``; required when the pair has
        several.

    Returns
    -------
    IngestSummary
        n_values = segment- and system-level score lines (``None`` included, stored as
        missing). The same files ingested again with the same ``lp`` and ``ref`` are skipped.

    Raises
    ------
    InputError
        Naming the folder, file, line and field, or when the store holds another study or pair
        (nothing is written).
    DataNotFoundError
        If the folder does not exist.
    """
    source = read_test_set(path, lp=lp, ref=ref)
    ((held, n_inputs),) = con.execute(
        "SELECT (SELECT min(name) FROM study), (SELECT count(*) FROM inputs)"
    ).fetchall()
    if (held is not None or n_inputs) and held != source.name:
        raise source.error(
            f"this store holds {held or 'another study'}; a store holds one language pair: "
            f"ingest {source.lp} into its own store"
        )
    return _ingest(
        con,
        source,
        FORMAT_WMT,
        parse_test_set,
        study=source.name,
        item_word=WMT_ITEM_WORD,
        extend=extend,
        replace=replace,
        scale_policy=scale_policy,
    )


#: The ingest function of each file format (a folder: ``ingest_wmt``, ``ingest_hanna_dir``).
FILE_INGESTERS: dict[str, Callable[..., IngestSummary]] = {
    FORMAT_METRIC_SCORES: ingest_hanna_metric_scores,
    FORMAT_LLM: ingest_hanna_llm,
    FORMAT_ANNOTATIONS: ingest_hanna_annotations,
    FORMAT_TIDY: ingest_tidy,
    FORMAT_SUMMEVAL: ingest_summeval,
}
