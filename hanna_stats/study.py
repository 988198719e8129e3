"""The in-memory study: :class:`Study` (everything one store holds), :class:`Cube` (a dense
measures x inputs x systems array of some of it) and :class:`Subsets` (the sub-studies a store
holds side by side, e.g. WMT's language pairs).

A data type layer between the store and the analyses: the store loads a Study
(:func:`hanna_stats.store.load_study`, :func:`hanna_stats.open_study`); the analyses
(:mod:`hanna_stats.analyses`) and the report take one and never touch SQL. This module imports
numpy and polars only, not DuckDB nor any ingester, so that importing an analysis does not load
them. Results an analysis computes more than once (a correlation matrix for one setting, the
paired bootstrap of one seed) are memoised on the Study with :meth:`Study.memo`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field, replace
from typing import TypeVar

import numpy as np
import polars as pl

from hanna_stats.vocabulary import WORDS, did_you_mean

T = TypeVar("T")

#: Measure kinds of automatic measures (the rest is ``human``: criteria rated by people).
AUTOMATIC_KINDS: tuple[str, ...] = WORDS["kinds"]


@dataclass(frozen=True)
class Cube:
    """Item-level values as a dense array.

    Attributes
    ----------
    values : numpy.ndarray
        Shape (M measures, G inputs, S systems), float64; NaN where no value is stored.
    measures : list of str
        Measure names, in the order of axis 0.
    kinds : list of str
        Kind of each measure (``human``, ``metric``, ``llm-judge``).
    inputs : list of str
        Input names (HANNA: prompt indices ``"0"`` .. ``"95"``), axis 1.
    systems : list of str
        System names, axis 2.
    """

    values: np.ndarray
    measures: list[str]
    kinds: list[str]
    inputs: list[str]
    systems: list[str]

    def measures_at(self, idx) -> Cube:
        """The cube of the measures at positions ``idx`` (in that order), inputs and systems
        unchanged."""
        return Cube(
            values=self.values[list(idx)],
            measures=[self.measures[i] for i in idx],
            kinds=[self.kinds[i] for i in idx],
            inputs=self.inputs,
            systems=self.systems,
        )


@dataclass(frozen=True, eq=False)
class Subsets:
    """The subsets of a study (column ``inputs.subset``; WMT: the language pairs): which
    subset each input belongs to, and which measures and systems have values in each.

    Attributes
    ----------
    labels : tuple of str
        The subsets, in the order of their first input.
    inputs : numpy.ndarray
        Shape (G,), int: each input's subset, an index into ``labels``; -1 for none.
    measures, systems : numpy.ndarray
        Shapes (K, M) and (K, S), bool: the measures and systems with a stored value (a
        missing one included) in each subset, as a store holding that subset alone would list
        them.
    """

    labels: tuple[str, ...]
    inputs: np.ndarray
    measures: np.ndarray
    systems: np.ndarray


@dataclass(frozen=True, eq=False)
class Study:
    """The loaded content of one store.

    Attributes
    ----------
    values : numpy.ndarray
        Shape (M measures, G inputs, S systems), float64: every item-level value of the store
        (view ``item_scores``: a human criterion's value is the mean of its raters), NaN where
        an item has no value. All measure kinds and all systems, human-written ones included;
        :meth:`cube` selects.
    measures, kinds : tuple of str
        Measure names and kinds (``human``, ``metric``, ``llm-judge``) along axis 0, in
        catalogue order (position, then name).
    inputs, systems : tuple of str
        Axis 1 and 2, in store order (position, then name).
    is_human : numpy.ndarray
        Shape (S,), bool: systems flagged human-written (HANNA: ``Human``).
    given_system_scores : polars.DataFrame
        The system-level values the study gives (table ``given_system_scores_by_id``, e.g. WMT's
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
        ``item_scores``), ordered by measure, item, column. Empty when the store has none.
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
    subset_index : Subsets or None
        The study's subsets (:attr:`subsets`), None for a study without any.
    documents : tuple of str
        Each input's document (column ``inputs.document``; WMT: ``documents/LP.docs``), ``""``
        for an input without one, along axis 1; empty when the store gives none.
        :func:`hanna_stats.analyses.sample_inputs` stratifies over them.
    """

    values: np.ndarray
    measures: tuple[str, ...]
    kinds: tuple[str, ...]
    inputs: tuple[str, ...]
    systems: tuple[str, ...]
    is_human: np.ndarray
    given_system_scores: pl.DataFrame
    catalogue: pl.DataFrame
    ratings: pl.DataFrame
    scale_checks: pl.DataFrame
    counts: pl.DataFrame
    families: pl.DataFrame
    sources: pl.DataFrame
    item_word: str = "item"
    name: str = ""
    left_out: tuple[str, ...] = ()
    subset_index: Subsets | None = None
    documents: tuple[str, ...] = ()
    _memo: dict = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        """A few lines: name, counts of systems, inputs and items, measures by kind, ratings
        and raters, the systems left out (the arrays and frames are the attributes).

        Examples
        --------
        >>> import numpy as np, polars as pl
        >>> empty = pl.DataFrame({"system": []}, schema={"system": pl.String})
        >>> s = Study(np.zeros((2, 1, 3)), ("Fluency", "BLEU"), ("human", "metric"), ("in",),
        ...           ("A", "B", "C"), np.zeros(3, bool), empty, empty, empty, empty, empty,
        ...           empty, empty, item_word="summary", name="Mine")
        >>> s.subset(exclude_systems=["B"])
        Study 'Mine': 2 systems, 1 inputs, 2 items (summaries)
          measures: 1 human criteria, 1 metric; no rater-level ratings
          left out: B
        """
        human = int(self.is_human.sum())
        items = int((~np.isnan(self.values)).any(axis=0).sum())
        lines = [
            f"Study {self.name!r}: {len(self.systems):,} systems"
            + (f" ({human:,} human-written)" if human else "")
            + f", {len(self.inputs):,} inputs, {items:,} items ({_plural(self.item_word)})"
        ]
        kinds = Counter(self.kinds)
        measures = ", ".join(
            f"{n:,} {kind}" + (" criteria" if kind == "human" else "") for kind, n in kinds.items()
        )
        raters = (
            self.ratings["rater"].n_unique()
            if "rater" in self.ratings.columns and self.ratings.height
            else 0
        )
        ratings = (
            f"{self.ratings.height:,} rater-level ratings by {raters:,} raters"
            if self.ratings.height
            else "no rater-level ratings"
        )
        lines.append(f"  measures: {measures or 'none'}; {ratings}")
        if self.subsets:
            shown = ", ".join(self.subsets[:8])
            more = f", ... ({len(self.subsets) - 8} more)" if len(self.subsets) > 8 else ""
            lines.append(f"  subsets: {shown}{more}")
        if self.left_out:
            shown = ", ".join(self.left_out[:8])
            more = f", ... ({len(self.left_out) - 8} more)" if len(self.left_out) > 8 else ""
            lines.append(f"  left out: {shown}{more}")
        return "\n".join(lines)

    @property
    def subsets(self) -> tuple[str, ...]:
        """The labels of the study's subsets (WMT: its language pairs), in the order of their
        first input; empty for a study without subsets."""
        return () if self.subset_index is None else self.subset_index.labels

    @property
    def criteria(self) -> tuple[str, ...]:
        """The human criteria, in catalogue order."""
        return tuple(m for m, k in zip(self.measures, self.kinds, strict=True) if k == "human")

    def subset(
        self,
        *,
        systems: Iterable[str] | None = None,
        exclude_systems: Iterable[str] | None = None,
        subset: str | None = None,
    ) -> Study:
        """The study restricted to some systems, or to one of its subsets: every analysis of
        the result sees only them.

        Parameters
        ----------
        systems : iterable of str, optional
            The systems to keep (default: all).
        exclude_systems : iterable of str, optional
            Systems to leave out (applied after ``systems``), e.g. a human reference or an
            outlier, as SummEval's and WMT's papers do per table.
        subset : str, optional
            One of :attr:`subsets` (WMT: a language pair; applied first): its inputs, the
            measures and systems with values there (a store holding that subset alone would
            list the same, in the same order), its given system-level values, and its ratings.
            Of a study of several subsets, the result is named ``"NAME LABEL"`` (``wmt23
            en-de``, as a store of that pair alone).

        Returns
        -------
        Study
            A new Study (with its own memo) whose ``left_out`` names the systems dropped; the
            store's counts, catalogue, scale checks and sources are those of the whole store.

        Raises
        ------
        ValueError
            Naming the unknown systems and the known ones, the unknown subset and the known
            ones, or if no system is left.

        Examples
        --------
        >>> import numpy as np, polars as pl
        >>> empty = pl.DataFrame({"system": []}, schema={"system": pl.String})
        >>> s = Study(np.zeros((1, 1, 3)), ("m",), ("metric",), ("in",), ("A", "B", "C"),
        ...           np.zeros(3, bool), empty, empty, empty, empty, empty, empty, empty)
        >>> s.subset(exclude_systems=["B"]).systems, s.subset(exclude_systems=["B"]).left_out
        (('A', 'C'), ('B',))
        """
        if subset is not None:
            study = self._one_subset(subset)
            if systems is None and exclude_systems is None:
                return study
            return study.subset(systems=systems, exclude_systems=exclude_systems)
        chosen = {}
        for option, names in (("systems", systems), ("exclude_systems", exclude_systems)):
            names = None if names is None else list(names)
            unknown = sorted(set(names or ()) - set(self.systems))
            if unknown:
                raise ValueError(
                    f"{option}: unknown systems {unknown}{did_you_mean(unknown[0], self.systems)}"
                    f"; the study's systems are {', '.join(self.systems)}"
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
        index = self.subset_index
        return replace(
            self,
            values=np.ascontiguousarray(self.values[:, :, keep]),
            systems=tuple(kept),
            is_human=self.is_human[keep],
            given_system_scores=self.given_system_scores.filter(pl.col("system").is_in(kept)),
            ratings=self.ratings.filter(pl.col("system").is_in(kept)),
            left_out=(
                *self.left_out,
                *(s for s, k in zip(self.systems, keep, strict=True) if not k),
            ),
            subset_index=None if index is None else replace(index, systems=index.systems[:, keep]),
            _memo={},
        )

    def _one_subset(self, label: str) -> Study:
        """The study of the subset ``label`` (see :meth:`subset`)."""
        if label not in self.subsets:
            known = ", ".join(self.subsets) or "none (the study has no subsets)"
            raise ValueError(f"subset: unknown subset {label!r}; the study's subsets are {known}")
        index = self.subset_index
        k = self.subsets.index(label)
        g, m, s = index.inputs == k, index.measures[k], index.systems[k]
        inputs = tuple(name for name, keep in zip(self.inputs, g, strict=True) if keep)
        measures = tuple(name for name, keep in zip(self.measures, m, strict=True) if keep)
        given = self.given_system_scores
        if "subset" in given.columns:
            given = given.filter(pl.col("subset") == label)
        ratings = self.ratings
        if ratings.height:
            ratings = ratings.filter(pl.col("input").is_in(inputs))
        return replace(
            self,
            values=np.ascontiguousarray(self.values[np.ix_(m, g, s)]),
            measures=measures,
            kinds=tuple(kind for kind, keep in zip(self.kinds, m, strict=True) if keep),
            inputs=inputs,
            systems=tuple(name for name, keep in zip(self.systems, s, strict=True) if keep),
            is_human=self.is_human[s],
            given_system_scores=given,
            catalogue=self.catalogue.filter(pl.col("measure").is_in(measures)),
            ratings=ratings,
            documents=tuple(np.asarray(self.documents, dtype=object)[g]) if self.documents else (),
            name=f"{self.name} {label}".strip() if len(self.subsets) > 1 else self.name,
            subset_index=Subsets(
                (label,),
                np.zeros(len(inputs), dtype=np.intp),
                np.ones((1, len(measures)), dtype=bool),
                np.ones((1, int(s.sum())), dtype=bool),
            ),
            _memo={},
        )

    def inputs_at(self, positions: Iterable[int]) -> Study:
        """The study of the inputs at ``positions`` (indices into :attr:`inputs`), in that
        order: what :func:`hanna_stats.analyses.sample_inputs` draws.

        Parameters
        ----------
        positions : iterable of int
            Distinct indices into :attr:`inputs`; the result's inputs are in this order (a
            subset's inputs together, as they are drawn).

        Returns
        -------
        Study
            A new Study (with its own memo) of those inputs, their values, ratings, documents
            and subsets; without given system-level values (:attr:`given_system_scores`: they
            are of every input, not of these). The store's counts, catalogue, scale checks and
            sources are those of the whole store.

        Raises
        ------
        ValueError
            If a position is out of range or repeated, or none is given.

        Examples
        --------
        >>> import numpy as np, polars as pl
        >>> empty = pl.DataFrame({"system": []}, schema={"system": pl.String})
        >>> s = Study(np.arange(3.0).reshape(1, 3, 1), ("m",), ("metric",), ("a", "b", "c"),
        ...           ("A",), np.zeros(1, bool), empty, empty, empty, empty, empty, empty, empty)
        >>> s.inputs_at([2, 0]).inputs, s.inputs_at([2, 0]).values.ravel().tolist()
        (('c', 'a'), [2.0, 0.0])
        """
        g = np.asarray(list(positions), dtype=np.intp)
        if not g.size or g.ndim != 1 or (g < 0).any() or (g >= len(self.inputs)).any():
            raise ValueError(
                f"positions must be indices of the study's {len(self.inputs):,} inputs, at "
                "least one"
            )
        if np.unique(g).size != g.size:
            raise ValueError("positions must be distinct: an input is drawn at most once")
        inputs = tuple(self.inputs[k] for k in g)
        index = self.subset_index
        return replace(
            self,
            values=np.ascontiguousarray(self.values[:, g]),
            inputs=inputs,
            given_system_scores=self.given_system_scores.clear(),
            ratings=self.ratings.filter(pl.col("input").is_in(inputs))
            if self.ratings.height
            else self.ratings,
            documents=tuple(np.asarray(self.documents, dtype=object)[g]) if self.documents else (),
            subset_index=None if index is None else replace(index, inputs=index.inputs[g]),
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
        names = [n for row in human.select("measure", "abbreviation").iter_rows() for n in row if n]
        raise ValueError(
            f"criterion must be one of {known or 'none (no human criteria)'}; got {name!r}"
            + did_you_mean(name, names)
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
                raise ValueError(
                    f"unknown measures: {unknown}{did_you_mean(unknown[0], self.measures)}"
                )
            key = ("cube", "measures", measures, include_human)
        else:
            key = ("cube", "kinds", tuple(kinds), include_human)
        return self.memo(key, lambda: self._select(kinds, include_human, measures))

    def given_cube(
        self, *, kinds: tuple[str, ...] = ("human", "metric"), include_human: bool = False
    ) -> Cube:
        """The given system-level values (:attr:`given_system_scores`) as a cube, memoised.

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
            If no measure of ``kinds`` has a given value for the systems kept, or the values
            are given for several subsets (a system has one in each language pair of WMT).
        """
        key = ("given cube", tuple(kinds), include_human)
        return self.memo(key, lambda: self._given(list(kinds), include_human))

    def _given(self, kinds, include_human) -> Cube:
        if len(self.subsets) > 1 and "subset" in self.given_system_scores.columns:
            given_for = self.given_system_scores["subset"].drop_nulls().unique(maintain_order=True)
            if given_for.len() > 1:
                raise ValueError(
                    f"the system-level values are given per subset and the study holds "
                    f"{len(self.subsets)} ({', '.join(self.subsets)}): run the analysis per "
                    "subset (subsets='each', the default; not --pool-subsets) or on one "
                    "(study.subset(subset=LABEL), --subset LABEL)"
                )
        given = self.given_system_scores.filter(
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


def _plural(word: str) -> str:
    """English plural of an item word: ``story`` -> ``stories``, ``segment`` -> ``segments``."""
    if word.endswith("y") and word[-2:-1] not in ("", *"aeiou"):
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"
