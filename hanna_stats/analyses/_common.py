"""What the analysis modules share: the :class:`Selection` of what to correlate and how, the
:func:`analysis` decorator and the record of the analyses called (:func:`analysis_calls`), the
cubes and the memoised correlation matrices.

The options' words, defaults and checks are :mod:`hanna_stats.vocabulary`'s. Each public
analysis checks its options once, at its entry; the helpers here take checked values (canonical
levels, ``kinds`` as :func:`~hanna_stats.vocabulary.check_kinds` returns them) and check none.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import numbers
import warnings
from collections.abc import Callable, Hashable, Iterator
from dataclasses import astuple, dataclass
from dataclasses import replace as replace_fields
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from hanna_stats.kernels import LevelCorrelationResult, level_correlation, pairwise_accuracy
from hanna_stats.progress import StudyNote, study_notes
from hanna_stats.study import Cube, Study
from hanna_stats.vocabulary import (
    DEFAULTS,
    Coefficient,
    GroupBy,
    Kind,
    Level,
    NanPolicy,
    SystemScores,
    Variant,
    Weighting,
    check,
)


class AnalysisCall(NamedTuple):
    """One call of an analysis, as :func:`analysis_calls` records it.

    Attributes
    ----------
    name : str
        The analysis' name (``"correlate"``).
    settings : dict
        Every argument after the data, defaults applied, and ``subsets`` for an analysis of a
        :class:`~hanna_stats.study.Study`: what made its table.
    """

    name: str
    settings: dict[str, Any]


#: The lists of the :func:`analysis_calls` blocks the running code is inside, innermost last.
_RECORDERS: contextvars.ContextVar[tuple[list[AnalysisCall], ...]] = contextvars.ContextVar(
    "analysis_calls", default=()
)


@contextlib.contextmanager
def analysis_calls() -> Iterator[list[AnalysisCall]]:
    """Record the analyses called inside the block: a list of :class:`AnalysisCall`, one per
    call that returned a table, in order.

    Only the outermost call counts (an analysis that calls another, or runs once per subset,
    is one call); blocks nest, and an outer block records the inner block's calls too. The
    report makes each section's settings line from these records.

    Examples
    --------
    >>> @analysis
    ... def count(frame: pl.DataFrame, *, column: str = "x") -> pl.DataFrame:
    ...     return frame.select(pl.col(column).count())
    >>> with analysis_calls() as calls:
    ...     table = count(pl.DataFrame({"x": [1, 2]}))
    >>> calls
    [AnalysisCall(name='count', settings={'column': 'x'})]
    """
    calls: list[AnalysisCall] = []
    token = _RECORDERS.set((*_RECORDERS.get(), calls))
    try:
        yield calls
    finally:
        _RECORDERS.reset(token)


def analysis(
    function: Callable[..., pl.DataFrame] | None = None, *, whole_study: bool = False
) -> Any:
    """Make ``function`` (data first, then keywords) an analysis: each outermost call is
    recorded as an :class:`AnalysisCall` (its name and every argument after the first, defaults
    applied) by the :func:`analysis_calls` blocks it runs in; it returns the function's
    :class:`polars.DataFrame` as it is.

    An analysis of a :class:`~hanna_stats.study.Study` takes one more keyword, ``subsets``
    (:data:`~hanna_stats.vocabulary.Subsets`, default ``"each"``): a study of several subsets
    (WMT: language pairs; :attr:`~hanna_stats.study.Study.subsets`) is analysed per subset, as
    the WMT metrics tasks report every pair: ``function(study.subset(subset=label), ...)`` for
    each label in order, stacked under a first column ``subset`` (a refusal names its subset,
    and each :class:`~hanna_stats.progress.StudyNote` too); ``subsets="pooled"`` analyses every
    subset's items together. A study of one subset or none is analysed as it is, and an
    analysis called inside another runs on the study it is given (the outer call decides).
    ``@analysis(whole_study=True)``: the analysis takes the subsets of the study itself (a WMT
    task set pools some pairs and splits others as its tasks say), gets no ``subsets``
    keyword and always runs on the whole study it is given.

    Examples
    --------
    >>> from hanna_stats.analyses import correlate                  # doctest: +SKIP
    >>> correlate(wmt_study, level="system")                        # doctest: +SKIP
    >>> correlate(wmt_study, level="system", subsets="pooled")      # doctest: +SKIP
    """
    if function is None:
        return functools.partial(analysis, whole_study=whole_study)
    signature = inspect.signature(function)
    first = next(iter(signature.parameters))
    splits = not whole_study and signature.parameters[first].annotation in ("Study", Study)

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> pl.DataFrame:
        subsets = check("subsets", kwargs.pop("subsets", DEFAULTS["subsets"])) if splits else None
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        study, nested = bound.arguments[first], _INSIDE.get()
        token = _INSIDE.set(True)
        try:
            if subsets == "each" and not nested and len(study.subsets) > 1:
                frame = _each_subset(function, study, args[1:], kwargs)
            else:
                frame = function(*args, **kwargs)
        finally:
            _INSIDE.reset(token)
        if not nested:
            settings = {k: v for k, v in bound.arguments.items() if k != first}
            if splits:
                settings["subsets"] = subsets
            for calls in _RECORDERS.get():
                calls.append(AnalysisCall(function.__name__, settings))
        return frame

    if splits:
        extra = inspect.Parameter(
            "subsets",
            inspect.Parameter.KEYWORD_ONLY,
            default=DEFAULTS["subsets"],
            annotation="Subsets",
        )
        run.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*signature.parameters.values(), extra]
        )
    return run


#: True while an analysis runs: one called inside it analyses the study it is given.
_INSIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("inside_analysis", default=False)


def _each_subset(
    function: Callable[..., pl.DataFrame], study: Study, args: tuple, kwargs: dict[str, Any]
) -> pl.DataFrame:
    """``function`` on each subset of ``study`` (memoised on it), stacked under a first column
    ``subset``; a ValueError or a :class:`StudyNote` names its subset."""
    frames = []
    for label in study.subsets:
        part = study.memo(("subset", label), lambda label=label: study.subset(subset=label))
        with study_notes() as notes:
            try:
                frame = function(part, *args, **kwargs)
            except ValueError as err:
                raise ValueError(f"subset {label!r}: {err}") from err
        for note in notes:
            warnings.warn(StudyNote(f"subset {label!r}: {note}"), stacklevel=3)
        frames.append(frame.select(pl.lit(label).alias("subset"), pl.all()))
    return pl.concat(frames, how="diagonal_relaxed")


@dataclass(frozen=True)
class Selection:
    """What an analysis correlates and how: the measures' kinds, the human-written system in or
    out, the level, the coefficient and its options; :meth:`key` is the memo key of every
    result computed from it (:meth:`hanna_stats.study.Study.memo`).

    It takes the options as the analysis has checked them at its entry (canonical ``level``,
    ``kinds`` a tuple) and checks nothing again; ``variant`` is kept as ``"b"`` for the
    coefficients without variants, so that equal settings give equal keys.

    Examples
    --------
    >>> s = Selection(level="item", method="pearson", variant="c")
    >>> s.variant
    'b'
    >>> s.key("correlation") == Selection(method="pearson").key("correlation")
    True
    """

    kinds: tuple[Kind, ...] = ("metric",)
    include_human: bool = False
    level: Level = "item"
    method: Coefficient = "kendall"
    variant: Variant = "b"
    nan_policy: NanPolicy = "omit"
    group_by: GroupBy = "input"
    weighting: Weighting = "uniform"
    system_scores: SystemScores = "mean"

    def __post_init__(self) -> None:
        if self.method != "kendall":
            object.__setattr__(self, "variant", "b")

    def key(self, name: str, *more: Hashable) -> tuple:
        """The memo key of the result ``name`` computed from this selection and ``more``."""
        return (name, *astuple(self), *more)

    def replace(self, **changes: Any) -> Selection:
        """A copy with ``changes``."""
        return replace_fields(self, **changes)


def seed_key(seed: object) -> Hashable | None:
    """``seed`` as a memo key: an integer seed gives the same draw every time, so its result
    can be reused; None (fresh entropy) or a Generator (advanced by each draw) cannot: None."""
    return int(seed) if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) else None


def criteria_cube(
    study: Study,
    kinds: tuple[Kind, ...],
    include_human: bool,
    system_scores: SystemScores = "mean",
) -> Cube:
    """The cube of the human criteria and the automatic measures of ``kinds``
    (:func:`measures_cube`).

    Raises ValueError for a study without human criteria.
    """
    if not study.criteria:
        raise ValueError(
            "the store holds no human criteria to correlate against: ingest human judgements "
            "(in a tidy file, give their rows kind 'human' in a `kind` column, or rater-level "
            "rows with a `rater` column; or mark them when ingesting the file into a new store: "
            "`ingest --human MEASURE[,...]`), or use --against metrics"
        )
    return measures_cube(study, ("human", *kinds), include_human, system_scores)


def check_system_scores(system_scores: object, level: Level) -> None:
    """Raise ValueError unless ``system_scores`` is a word of ``system_scores``
    (:data:`hanna_stats.vocabulary.WORDS`), and ``"given"`` comes with ``level="system"`` (the
    canonical level)."""
    check("system_scores", system_scores)
    if system_scores == "given" and level != "system":
        raise ValueError(
            f"system_scores='given' is for level='system' (the study's system-level values); "
            f"got level={level!r}"
        )


def measures_cube(
    study: Study,
    kinds: tuple[str, ...],
    include_human: bool,
    system_scores: SystemScores = "mean",
) -> Cube:
    """The cube of the measures of ``kinds``: their item-level values (``system_scores="mean"``)
    or their given system-level values as a cube (M, 1, S) (``"given"``, :meth:`Study.given_cube`:
    its system level correlates them as they are).

    With ``"given"``, a measure without a given value for the systems kept (WMT: no
    ``.sys.score`` file) is left out, as mt-metrics-eval leaves such metrics out at system level
    (:func:`given_left_out` names them). Raises ValueError when no automatic measure of ``kinds``
    has a given value (e.g. WMT22's copy without the metrics' ``.sys.score`` files).
    """
    if system_scores == "mean":
        return study.cube(kinds=kinds, include_human=include_human)
    cube = study.given_cube(kinds=kinds, include_human=include_human)
    keep = ~np.isnan(cube.values).all(axis=(1, 2))
    automatic = [k for k in kinds if k != "human"]
    if automatic and not (keep & ~human_mask(cube)).any():
        systems = "" if include_human else " for a system other than the human-written ones"
        raise ValueError(
            f"system_scores='given': no measure of kinds {', '.join(automatic)} has a given "
            f"system-level value{systems} (WMT: no .sys.score file in metric-scores/); use "
            "system_scores='mean' (the means over items)"
        )
    if keep.all():
        return cube
    return cube.measures_at(np.flatnonzero(keep))


def given_left_out(study: Study, kinds: tuple[Kind, ...], include_human: bool) -> list[str]:
    """The human criteria and the measures of ``kinds`` that ``system_scores="given"`` leaves
    out: those without a given system-level value for the systems kept, in catalogue order
    (none when the study has no given values at all)."""
    try:
        cube = study.given_cube(kinds=("human", *kinds), include_human=include_human)
    except ValueError:
        return []
    missing = np.isnan(cube.values).all(axis=(1, 2))
    return [m for m, gone in zip(cube.measures, missing, strict=True) if gone]


def correlation_matrix(
    study: Study, selection: Selection, *, criteria: bool = True, automatic: bool = True
) -> tuple[Cube, LevelCorrelationResult]:
    """Every pair of measures of one cube correlated as ``selection`` says, computed once per
    setting.

    The cube holds the human criteria (when ``criteria``) and the automatic measures of
    ``selection.kinds`` (when ``automatic``: the criteria alone need no automatic measure, nor
    their given system-level values); the matrix is memoised on the Study under
    ``selection.key(...)``, so the correlations, Williams tests, Borda counts, bootstrap point
    estimates and the report share it. ``method="acc_eq"`` gives pairwise accuracy with ties.
    ``group_by`` and ``weighting`` as :func:`~hanna_stats.kernels.level_correlation` (item
    level: inputs or systems as groups; plain or observation-count weighted mean).
    ``system_scores="given"`` (system level only) correlates the study's given system-level
    values instead of the means over items (:func:`measures_cube`).

    Returns
    -------
    (Cube, LevelCorrelationResult)
        The cube and the (M, M) matrices of ``statistic``, ``n_groups``, ``n_skipped``.
    """
    s = selection
    kinds = s.kinds if automatic else ()
    cube = (
        criteria_cube(study, kinds, s.include_human, s.system_scores)
        if criteria
        else measures_cube(study, kinds, s.include_human, s.system_scores)
    )

    def compute() -> LevelCorrelationResult:
        options = {
            "level": s.level,
            "nan_policy": s.nan_policy,
            "group_by": s.group_by,
            "weighting": s.weighting,
        }
        if s.method == "acc_eq":
            return pairwise_accuracy(cube.values, **options)
        return level_correlation(cube.values, method=s.method, variant=s.variant, **options)

    return cube, study.memo(s.key("correlation", criteria, automatic), compute)


def human_mask(cube: Cube) -> np.ndarray:
    """Boolean mask of the human criteria along the cube's measure axis."""
    return np.asarray(cube.kinds) == "human"


def measure_against(cube: Cube, rows: np.ndarray, cols: np.ndarray) -> dict[str, list[str]]:
    """The ``measure, against`` columns of a (len(rows), len(cols)) block of ``cube``'s measures,
    row-major: one row per (measure ``rows[r]``, measure ``cols[c]``)."""
    names = np.asarray(cube.measures, dtype=object)
    return {
        "measure": np.repeat(names[rows], len(cols)).tolist(),
        "against": np.tile(names[cols], len(rows)).tolist(),
    }


def cube_criterion(study: Study, cube: Cube, name: str) -> str:
    """The human criterion called ``name`` or abbreviated so (:meth:`Study.criterion`), or a
    human measure of ``cube`` of that name (one with given system-level values only, e.g. WMT's
    ``wmt-z``); ValueError naming the known criteria otherwise."""
    human = [m for m, k in zip(cube.measures, cube.kinds, strict=True) if k == "human"]
    if name in human:
        return name
    try:
        return study.criterion(name)
    except ValueError as err:
        extra = [m for m in human if m not in study.criteria]
        if not extra:
            raise
        raise ValueError(f"{err} (or one with system-level values: {', '.join(extra)})") from None


def criterion_cube(
    study: Study,
    criterion: str,
    kinds: tuple[Kind, ...],
    include_human: bool,
    system_scores: SystemScores = "mean",
) -> tuple[str, list[str], Cube]:
    """The criterion's name (by name or abbreviation), the names of the measures of ``kinds``
    (checked by the caller) other than it, and their cube with the criterion last.

    ``system_scores="given"``: the given system-level values (:func:`measures_cube`; measures
    without any are left out), ValueError when the criterion has none.
    """
    if system_scores == "given":
        given = measures_cube(study, ("human", *kinds), include_human, "given")
        criterion = cube_criterion(study, given, criterion)
        if criterion not in given.measures:
            raise ValueError(
                f"system_scores='given': the criterion {criterion!r} has no given system-level "
                "value (WMT: no .sys.score file); use system_scores='mean'"
            )
        catalogue = zip(given.measures, given.kinds, strict=True)
    else:
        criterion = study.criterion(criterion)
        catalogue = zip(study.measures, study.kinds, strict=True)
    names = [m for m, k in catalogue if k in kinds and m != criterion]
    if system_scores == "mean":
        return (
            criterion,
            names,
            study.cube(measures=[*names, criterion], include_human=include_human),
        )
    return (
        criterion,
        names,
        given.measures_at([given.measures.index(m) for m in (*names, criterion)]),
    )


def ordered_pairs_frame(
    names: list[str],
    schema: dict,
    *,
    constants: dict,
    per_measure: dict,
    per_pair: dict,
) -> pl.DataFrame:
    """One row per ordered pair ``(a, b)``, ``a != b``, of ``names`` (row-major), as ``schema``.

    Columns: ``measure_a, measure_b``; each of ``constants`` repeated; ``{key}_a, {key}_b`` from
    each (M,) array of ``per_measure``; each (M, M) array of ``per_pair`` at ``[a, b]``.
    """
    a, b = np.nonzero(~np.eye(len(names), dtype=bool))
    measures = np.asarray(names, dtype=object)
    columns = {"measure_a": measures[a].tolist(), "measure_b": measures[b].tolist()}
    columns |= {key: [value] * len(a) for key, value in constants.items()}
    for key, values in per_measure.items():
        columns[f"{key}_a"], columns[f"{key}_b"] = np.asarray(values)[a], np.asarray(values)[b]
    columns |= {key: np.asarray(values)[a, b] for key, values in per_pair.items()}
    return pl.DataFrame({key: columns[key] for key in schema}, schema=schema)
