"""The Study: everything one store holds, loaded once, for every analysis.

:func:`load_study` reads a store in a handful of queries (the measure x input x system cube of
every measure and system, the system-level values the study gives, the catalogue, the
rater-level ratings of the human criteria, the systems, and the overview tables);
:func:`open_study` does it from a store file, a HANNA folder or a file to ingest in one call. The
analyses (:mod:`hanna_stats.analyses`) take a Study and never touch SQL; results they compute
more than once (a correlation matrix for one setting, the paired bootstrap of one seed) are
memoised on it with :meth:`Study.memo`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

import duckdb
import numpy as np
import polars as pl

from hanna_stats.store.cube import Cube, build_hanna_store
from hanna_stats.store.db import open_store
from hanna_stats.store.errors import DataNotFoundError, InputError
from hanna_stats.store.fetch import METRIC_SCORES_FILE
from hanna_stats.store.hanna import ITEM_WORD as HANNA_ITEM_WORD
from hanna_stats.store.hanna import STUDY as HANNA
from hanna_stats.store.ingest import (
    FILE_INGESTERS,
    FORMAT_HANNA_DIR,
    FORMAT_TIDY,
    FORMAT_WMT,
    detect_format,
)

T = TypeVar("T")

#: Measure kinds of automatic measures (the rest is ``human``: criteria rated by people).
AUTOMATIC_KINDS: tuple[str, ...] = ("metric", "llm-judge")

# Every item-level value (view story_scores) in one pass over the view. Rows with m, g and
# s >= 0 are values; the others name one code of one axis (codes are 0-based ranks in catalogue
# and store order: position, then name). Systems and inputs without any value are left out.
_CUBE = """
WITH sel AS MATERIALIZED (
    SELECT measure_id, input_id, system_id, coalesce(value, 'NaN'::DOUBLE) AS value
    FROM story_scores
),
ms AS (
    SELECT measure_id, name, row_number() OVER (ORDER BY position NULLS LAST, name) - 1 AS m
    FROM measures WHERE measure_id IN (SELECT measure_id FROM sel)
),
gs AS (
    SELECT input_id, name, row_number() OVER (ORDER BY position NULLS LAST, name) - 1 AS g
    FROM inputs WHERE input_id IN (SELECT input_id FROM sel)
),
ss AS (
    SELECT system_id, name, is_human,
           row_number() OVER (ORDER BY position NULLS LAST, name) - 1 AS s
    FROM systems WHERE system_id IN (SELECT system_id FROM sel)
)
SELECT m::BIGINT AS m, g::BIGINT AS g, s::BIGINT AS s, value, NULL AS name, NULL AS is_human
FROM sel JOIN ms USING (measure_id) JOIN gs USING (input_id) JOIN ss USING (system_id)
UNION ALL SELECT m, -1, -1, NULL, name, NULL FROM ms
UNION ALL SELECT -1, g, -1, NULL, name, NULL FROM gs
UNION ALL SELECT -1, -1, s, NULL, name, is_human FROM ss
"""

# The system-level values the study gives (view given_system_scores), in catalogue order, then
# store order. A store written before table system_level_scores existed, opened read-only, has
# neither the table nor the view: it gives none.
_GIVEN = """
SELECT measure, kind, measure_position, system, is_human, system_position, value
FROM given_system_scores
ORDER BY measure_position NULLS LAST, measure, system_position NULLS LAST, system
"""
GIVEN_SCHEMA = {
    "measure": pl.String,
    "kind": pl.String,
    "measure_position": pl.Int32,
    "system": pl.String,
    "is_human": pl.Boolean,
    "system_position": pl.Int32,
    "value": pl.Float64,
}

_MEASURES = """
SELECT name AS measure, kind, coalesce(family, '') AS family, reference_based, symbol,
       abbreviation, criterion, variant, judge, scale, scale_min, scale_max, position
FROM measures ORDER BY position NULLS LAST, name
"""

# Rater-level values of every measure (human ratings, LLM-judge tries), one row per value with a
# score. For each item and measure, the ratings of identified raters (kind 'person') when it has
# any, else those of judge slots (the rule of view story_scores: no rating counted twice).
# rater_column: the rating's 0-based position among the item's ratings (slots by slot number,
# persons by rater_id).
_RATINGS = r"""
WITH r AS (
    SELECT ra.item_id, ra.measure_id, ra.rater_id, rt.name AS rater, rt.kind AS rater_kind,
           ra.score,
           bool_or(rt.kind = 'person') OVER (PARTITION BY ra.item_id, ra.measure_id) AS has_person
    FROM ratings ra
    JOIN raters rt USING (rater_id)
    WHERE ra.score IS NOT NULL
),
chosen AS (
    SELECT *, row_number() OVER (
           PARTITION BY item_id, measure_id
           ORDER BY CASE WHEN rater_kind = 'slot'
                         THEN try_cast(regexp_extract(rater, '(\d+)$', 1) AS BIGINT) END
                    NULLS LAST, rater_id
       ) - 1 AS rater_column
    FROM r WHERE rater_kind = 'person' OR NOT has_person
)
SELECT m.name AS measure, m.kind, c.item_id, inp.name AS input, sy.name AS system,
       sy.is_human, c.rater, c.rater_kind, c.score, c.rater_column
FROM chosen c
JOIN measures m USING (measure_id)
JOIN items it USING (item_id)
JOIN inputs inp USING (input_id)
JOIN systems sy USING (system_id)
ORDER BY m.position NULLS LAST, m.name, c.item_id, c.rater_column
"""

# What the ingests found outside the measures' scales, per measure (table scale_checks).
_SCALE_CHECKS = """
SELECT m.name AS measure, m.kind, m.judge, m.variant, m.criterion, m.scale, m.scale_min,
       m.scale_max, string_agg(DISTINCT c.policy, ', ' ORDER BY c.policy) AS policy,
       sum(c.n_values)::BIGINT AS n_values, sum(c.n_below)::BIGINT AS n_below,
       sum(c.n_above)::BIGINT AS n_above, sum(c.n_not_whole)::BIGINT AS n_not_whole,
       sum(c.n_unparsed)::BIGINT AS n_unparsed
FROM scale_checks c JOIN measures m USING (measure_id)
GROUP BY ALL
ORDER BY any_value(m.position) NULLS LAST, measure
"""

_COUNTS = """
SELECT what, n FROM (
    SELECT 0 AS k, 'systems' AS what, count(*) AS n FROM systems
    UNION ALL SELECT 1, 'human-written systems', count(*) FILTER (WHERE is_human) FROM systems
    UNION ALL SELECT 2, 'inputs', count(*) FROM inputs
    UNION ALL SELECT 3, 'items', count(*) FROM items
    UNION ALL SELECT 4, 'raters', count(*) FROM raters
    UNION ALL SELECT 5, 'rater-level ratings', count(*) FROM ratings
    UNION ALL SELECT 6, 'measures: ' || kind, count(*) FROM measures GROUP BY kind
    UNION ALL SELECT 7, 'item-level scores', count(*) FROM scores
)
ORDER BY k, what
"""

_FAMILIES = """
SELECT kind,
       coalesce(family, '') AS family,
       CASE WHEN reference_based IS NULL THEN ''
            WHEN reference_based THEN 'reference-based' ELSE 'reference-free' END AS reference,
       coalesce(symbol, '') AS symbol,
       count(*) AS n_measures,
       string_agg(name, ', ' ORDER BY position, name) AS measures
FROM measures
GROUP BY ALL
ORDER BY min(position), kind, family, reference, symbol
"""

_SOURCES = r"""
SELECT regexp_extract(source, '[^/\\]*$') AS file, format, sha256, n_values
FROM ingests ORDER BY file, format, sha256, n_values
"""


@dataclass(frozen=True, eq=False)
class Study:
    """The loaded content of one store.

    Attributes
    ----------
    values : numpy.ndarray
        Shape (M measures, G inputs, S systems), float64: every item-level value of the store
        (view ``story_scores``: a human criterion's value is the mean of its raters), NaN where
        an item has no value. All measure kinds and all systems, human-written ones included;
        :meth:`cube` selects.
    measures, kinds : tuple of str
        Measure names and kinds (``human``, ``metric``, ``llm-judge``) along axis 0, in
        catalogue order (position, then name).
    inputs, systems : tuple of str
        Axis 1 and 2, in store order (position, then name).
    is_human : numpy.ndarray
        Shape (S,), bool: systems flagged human-written (HANNA: ``Human``).
    system_values : polars.DataFrame
        The system-level values the study gives (table ``system_level_scores``, e.g. WMT's
        ``.sys.score`` files), not computed from items: ``measure, kind, measure_position,
        system, is_human, system_position, value`` (null: missing), one row per measure and
        system, in catalogue order, then store order (positions, then names); empty for most
        studies. A measure or system may have these and no item-level value, and is then in no
        other attribute. :meth:`given_cube` selects.
    catalogue : polars.DataFrame
        One row per measure of axis 0, same order: ``measure, kind, family, reference_based,
        symbol, abbreviation, criterion, variant, judge, scale, scale_min, scale_max, position``
        (an LLM judge's measure names its ``judge``, the ``criterion`` it rates and its prompt
        ``variant``).
    ratings : polars.DataFrame
        Rater-level values of every measure (a person's rating, an LLM judge's try), one row per
        value with a score: ``measure, kind, item_id, input, system, is_human, rater,
        rater_kind, score, rater_column`` (identified raters before judge slots, per item, as
        ``story_scores``), ordered by measure, item, column. Empty when the store has none.
    scale_checks : polars.DataFrame
        Per measure that an ingest checked against a scale: ``measure, kind, judge, variant,
        criterion, scale, scale_min, scale_max, policy, n_values, n_below, n_above, n_not_whole,
        n_unparsed`` (summed over ingests; see :mod:`hanna_stats.store.scales`).
    counts, families, sources : polars.DataFrame
        What the store holds (``what, n``), the measure catalogue by kind and family, and the
        ingested files (``file, format, sha256, n_values``).
    item_word : str
        The study's word for its items (table ``study``): ``"story"`` for HANNA, else as given
        at ingest (default ``"item"``). The report names the item level by it ("story level");
        the analyses' outputs always say ``item``.
    name : str
        The study's name (table ``study``; ``"HANNA"`` for HANNA's files, ``""`` when the store
        has none).
    left_out : tuple of str
        Systems of the store that :meth:`subset` left out (empty for a whole store).
    """

    values: np.ndarray
    measures: tuple[str, ...]
    kinds: tuple[str, ...]
    inputs: tuple[str, ...]
    systems: tuple[str, ...]
    is_human: np.ndarray
    system_values: pl.DataFrame
    catalogue: pl.DataFrame
    ratings: pl.DataFrame
    scale_checks: pl.DataFrame
    counts: pl.DataFrame
    families: pl.DataFrame
    sources: pl.DataFrame
    item_word: str = "item"
    name: str = ""
    left_out: tuple[str, ...] = ()
    _memo: dict = field(default_factory=dict, repr=False)

    @property
    def criteria(self) -> tuple[str, ...]:
        """The human criteria, in catalogue order."""
        return tuple(m for m, k in zip(self.measures, self.kinds, strict=True) if k == "human")

    def subset(
        self,
        *,
        systems: Iterable[str] | None = None,
        exclude_systems: Iterable[str] | None = None,
    ) -> Study:
        """The study restricted to some systems: every analysis of the result sees only them.

        Parameters
        ----------
        systems : iterable of str, optional
            The systems to keep (default: all).
        exclude_systems : iterable of str, optional
            Systems to leave out (applied after ``systems``), e.g. a human reference or an
            outlier, as SummEval's and WMT's papers do per table.

        Returns
        -------
        Study
            A new Study (with its own memo) whose ``left_out`` names the systems dropped; the
            store's counts, catalogue and sources are those of the whole store.

        Raises
        ------
        ValueError
            Naming the unknown systems and the known ones, or if no system is left.

        Examples
        --------
        >>> import numpy as np, polars as pl
        >>> empty = pl.DataFrame({"system": []}, schema={"system": pl.String})
        >>> s = Study(np.zeros((1, 1, 3)), ("m",), ("metric",), ("in",), ("A", "B", "C"),
        ...           np.zeros(3, bool), empty, empty, empty, empty, empty, empty, empty)
        >>> s.subset(exclude_systems=["B"]).systems, s.subset(exclude_systems=["B"]).left_out
        (('A', 'C'), ('B',))
        """
        chosen = {}
        for option, names in (("systems", systems), ("exclude_systems", exclude_systems)):
            names = None if names is None else list(names)
            unknown = sorted(set(names or ()) - set(self.systems))
            if unknown:
                raise ValueError(
                    f"{option}: unknown systems {unknown}; the study's systems are "
                    f"{', '.join(self.systems)}"
                )
            chosen[option] = names
        keep = np.ones(len(self.systems), dtype=bool)
        if chosen["systems"] is not None:
            keep &= np.isin(self.systems, chosen["systems"])
        if chosen["exclude_systems"]:
            keep &= ~np.isin(self.systems, chosen["exclude_systems"])
        if not keep.any():
            raise ValueError("systems and exclude_systems leave no system")
        kept = [s for s, k in zip(self.systems, keep, strict=True) if k]
        return replace(
            self,
            values=np.ascontiguousarray(self.values[:, :, keep]),
            systems=tuple(kept),
            is_human=self.is_human[keep],
            system_values=self.system_values.filter(pl.col("system").is_in(kept)),
            ratings=self.ratings.filter(pl.col("system").is_in(kept)),
            left_out=(
                *self.left_out,
                *(s for s, k in zip(self.systems, keep, strict=True) if not k),
            ),
            _memo={},
        )

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, computed once per ``key`` for the life of this Study.

        The analyses key each result by every setting it depends on (e.g. level, coefficient,
        variant, NaN policy, human system in or out, measure kinds), so one correlation matrix
        serves every analysis that needs it.
        """
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def criterion(self, name: str) -> str:
        """The human criterion called ``name`` or abbreviated so (``"EM"`` -> ``"Empathy"``).

        Raises
        ------
        ValueError
            Naming the known criteria, if none matches.
        """
        human = self.catalogue.filter(pl.col("kind") == "human")
        for measure, abbreviation in human.select("measure", "abbreviation").iter_rows():
            if name in (measure, abbreviation):
                return measure
        known = ", ".join(
            f"{m} ({a})" if a else m for m, a in human.select("measure", "abbreviation").iter_rows()
        )
        raise ValueError(
            f"criterion must be one of {known or 'none (no human criteria)'}; got {name!r}"
        )

    def cube(
        self,
        *,
        kinds: tuple[str, ...] = ("human", "metric"),
        include_human: bool = False,
        measures: tuple[str, ...] | list[str] | None = None,
    ) -> Cube:
        """A dense cube of some measures, memoised.

        Parameters
        ----------
        kinds : tuple of str
            Measure kinds to keep, in catalogue order (ignored when ``measures`` is given).
        include_human : bool
            Keep the human-written systems (the paper drops them).
        measures : sequence of str, optional
            Measures to keep, in this order.

        Returns
        -------
        Cube
            Inputs and systems with at least one value of the chosen measures, in store order.

        Raises
        ------
        ValueError
            If a measure is unknown or listed twice, or nothing matches.
        """
        if measures is not None:
            measures = tuple(measures)
            if len(set(measures)) != len(measures):
                raise ValueError(f"measures listed twice: {list(measures)}")
            unknown = [m for m in measures if m not in self.measures]
            if unknown:
                raise ValueError(f"unknown measures: {unknown}")
            key = ("cube", "measures", measures, include_human)
        else:
            key = ("cube", "kinds", tuple(kinds), include_human)
        return self.memo(key, lambda: self._select(kinds, include_human, measures))

    def given_cube(
        self, *, kinds: tuple[str, ...] = ("human", "metric"), include_human: bool = False
    ) -> Cube:
        """The given system-level values (:attr:`system_values`) as a cube, memoised.

        Parameters
        ----------
        kinds : tuple of str
            Measure kinds to keep.
        include_human : bool
            Keep the human-written systems.

        Returns
        -------
        Cube
            Shape (M, 1, S): the measures of ``kinds`` with item-level or given values, in
            catalogue order, NaN where one has no given value; one input, named ``given``; the
            systems with a given value of one of these measures, in store order. Its system
            level (the mean over its one input) is the given values as they are.

        Raises
        ------
        ValueError
            If no measure of ``kinds`` has a given value for the systems kept.
        """
        key = ("given cube", tuple(kinds), include_human)
        return self.memo(key, lambda: self._given(list(kinds), include_human))

    def _given(self, kinds, include_human) -> Cube:
        given = self.system_values.filter(
            pl.col("kind").is_in(kinds)
            & (include_human | ~pl.col("is_human"))
            & pl.col("value").is_not_null()
        )
        measures = (
            pl.concat(
                [
                    self.catalogue.select("measure", "kind", pl.col("position").cast(pl.Int64)),
                    given.select("measure", "kind", pl.col("measure_position").alias("position")),
                ],
                how="vertical_relaxed",
            )
            .filter(pl.col("kind").is_in(kinds))
            .unique("measure", keep="first")
            .sort("position", "measure", nulls_last=True)
        )
        systems = given.unique("system").sort("system_position", "system", nulls_last=True)
        if systems.is_empty():
            raise ValueError(
                f"no given system-level values of the measures of kinds {kinds} for the systems "
                "kept (WMT: the .sys.score files)"
            )
        m_code = {name: k for k, name in enumerate(measures["measure"])}
        s_code = {name: k for k, name in enumerate(systems["system"])}
        values = np.full((len(m_code), 1, len(s_code)), np.nan)
        for measure, system, value in given.select("measure", "system", "value").iter_rows():
            values[m_code[measure], 0, s_code[system]] = value
        return Cube(
            values=values,
            measures=measures["measure"].to_list(),
            kinds=measures["kind"].to_list(),
            inputs=["given"],
            systems=systems["system"].to_list(),
        )

    def _select(self, kinds, include_human, measures) -> Cube:
        if measures is None:
            m_idx = np.flatnonzero(np.isin(np.asarray(self.kinds), list(kinds)))
        else:
            position = {m: k for k, m in enumerate(self.measures)}
            m_idx = np.array([position[m] for m in measures], dtype=np.intp)
        s_keep = np.ones(len(self.systems), dtype=bool) if include_human else ~self.is_human
        present = ~np.isnan(self.values[m_idx][:, :, s_keep])
        if measures is None:  # kinds select only measures with a value here
            m_idx = m_idx[present.any(axis=(1, 2))]
            present = present[present.any(axis=(1, 2))]
        g_idx = np.flatnonzero(present.any(axis=(0, 2)))
        s_idx = np.flatnonzero(s_keep)[present.any(axis=(0, 1))]
        if not g_idx.size or not s_idx.size:
            raise ValueError("no values match: is the store empty, or are the filters too narrow?")
        values = np.ascontiguousarray(self.values[np.ix_(m_idx, g_idx, s_idx)])
        return Cube(
            values=values,
            measures=[self.measures[k] for k in m_idx],
            kinds=[self.kinds[k] for k in m_idx],
            inputs=[self.inputs[k] for k in g_idx],
            systems=[self.systems[k] for k in s_idx],
        )


def load_study(con: duckdb.DuckDBPyConnection) -> Study:
    """Load everything the analyses need from a store, once.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        An open store (read-only is fine).

    Returns
    -------
    Study

    Raises
    ------
    ValueError
        If the store holds no item-level value.
    """
    rows = con.execute(_CUBE).fetchnumpy()
    m, g, s = (np.asarray(rows[c], dtype=np.intp) for c in ("m", "g", "s"))
    data = (m >= 0) & (g >= 0) & (s >= 0)
    if not data.any():
        raise ValueError("the store holds no values: ingest data first (see `ingest`)")
    names = np.ma.getdata(rows["name"])

    def axis(codes: np.ndarray) -> np.ndarray:
        """The naming rows of one axis, in code order."""
        rows_of = np.flatnonzero((codes >= 0) & ~data)
        return rows_of[np.argsort(codes[rows_of])]

    measures = tuple(str(x) for x in names[axis(m)])
    catalogue = con.sql(_MEASURES).pl().filter(pl.col("measure").is_in(measures))
    values = np.full((m.max() + 1, g.max() + 1, s.max() + 1), np.nan)
    values[m[data], g[data], s[data]] = np.ma.getdata(rows["value"])[data].astype(np.float64)
    systems = axis(s)
    has_given = con.execute(
        "SELECT count(*) FROM duckdb_views() WHERE view_name = 'given_system_scores'"
    ).fetchall()[0][0]
    given = con.sql(_GIVEN).pl() if has_given else pl.DataFrame(schema=GIVEN_SCHEMA)
    return Study(
        values=values,
        measures=measures,
        kinds=tuple(catalogue["kind"]),
        inputs=tuple(str(x) for x in names[axis(g)]),
        systems=tuple(str(x) for x in names[systems]),
        is_human=np.array([bool(h) for h in np.ma.getdata(rows["is_human"])[systems]]),
        system_values=given,
        catalogue=catalogue,
        ratings=con.sql(_RATINGS).pl(),
        scale_checks=con.sql(_SCALE_CHECKS).pl(),
        counts=con.sql(_COUNTS).pl(),
        families=con.sql(_FAMILIES).pl(),
        sources=con.sql(_SOURCES).pl(),
        **_study_row(con),
    )


def _study_row(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The study's name and word for its items (``"item"`` when the store has none). A store
    written before ``study.item_word`` existed has none (NULL, or no such column when opened
    read-only): HANNA's items are then stories."""
    study = con.sql("SELECT * FROM study ORDER BY ALL LIMIT 1").pl()
    if study.is_empty():
        return {"name": "", "item_word": "item"}
    row = study.row(0, named=True)
    word = row.get("item_word") or (HANNA_ITEM_WORD if row["name"] == HANNA else "item")
    return {"name": row["name"] or "", "item_word": word}


def open_study(source: str | Path, *, human_system: str | None = None) -> Study:
    """Open a study in one call: a store file, a HANNA data folder or a file to ingest.

    Parameters
    ----------
    source : str or Path
        A DuckDB store file (``.duckdb``/``.db``, any case; opened read-only; it must exist), a
        folder holding ``hanna_metric_scores.csv`` (built into an in-memory store), or a file
        ingested into an in-memory store in the format
        :func:`~hanna_stats.store.ingest.detect_format` gives it: a HANNA file by its name,
        SummEval's annotations (``.jsonl``; see :mod:`hanna_stats.store.summeval`), else a tidy
        CSV or Parquet file (columns ``item,input,system,measure,value[,rater]``). A WMT test
        set is refused: ingest one language pair into a store, then open the store.
    human_system : str, optional
        Tidy files: the system holding human-written references.

    Returns
    -------
    Study

    Raises
    ------
    DataNotFoundError
        If ``source`` does not exist or a folder lacks the HANNA files.
    InputError
        If a file is malformed, or ``source`` is a WMT test set.

    Examples
    --------
    >>> from hanna_stats import open_study                              # doctest: +SKIP
    >>> from hanna_stats.analyses.correlations import correlate         # doctest: +SKIP
    >>> study = open_study("path/to/hanna")                      # doctest: +SKIP
    >>> correlate(study, level="system", method="kendall")              # doctest: +SKIP
    """
    path = Path(source)
    fmt = detect_format(path)
    if fmt == FORMAT_WMT:
        raise InputError(
            "is a WMT test set: ingest one language pair into a store first "
            "(`ingest --db FILE PATH --lp LP`), then open the store",
            file=path,
        )
    if fmt == FORMAT_HANNA_DIR:
        if not (path / METRIC_SCORES_FILE).is_file():
            raise DataNotFoundError(f"{path}: no {METRIC_SCORES_FILE} in this folder")
        con = build_hanna_store(path)
    elif not path.is_file():
        raise DataNotFoundError(f"{path}: no such file or folder")
    elif path.suffix.lower() in (".duckdb", ".db"):
        con = open_store(path, read_only=True)
    else:
        con = open_store()
        options = {"human_system": human_system} if fmt == FORMAT_TIDY else {}
        try:
            FILE_INGESTERS[fmt](con, path, **options)
        except BaseException:
            con.close()
            raise
    try:
        return load_study(con)
    finally:
        con.close()
