"""Names, checks and the memoised correlation matrices shared by the analysis modules."""

from __future__ import annotations

import numpy as np
import polars as pl

from hanna_stats.kernels import LevelCorrelationResult, level_correlation, pairwise_accuracy
from hanna_stats.store import AUTOMATIC_KINDS, Cube, Study

#: The levels, by their canonical names: ``item`` (within each input, across the systems, then
#: averaged over the inputs), ``system`` (system means) and ``global`` (all items pooled).
LEVELS: tuple[str, ...] = ("item", "system", "global")
#: The levels of the analyses that resample or rank by level (no global level).
ITEM_SYSTEM_LEVELS: tuple[str, ...] = LEVELS[:2]
#: Other words for the item level, accepted wherever a level is given: HANNA's stories,
#: SummEval's summaries, WMT's segments. Outputs always say ``item``.
ITEM_SYNONYMS: tuple[str, ...] = ("story", "summary", "segment")
#: Every word a level may be given by (the command line's choices).
LEVEL_WORDS: tuple[str, ...] = (*LEVELS, *ITEM_SYNONYMS)
ITEM_SYSTEM_WORDS: tuple[str, ...] = (*ITEM_SYSTEM_LEVELS, *ITEM_SYNONYMS)
METHODS: tuple[str, ...] = ("pearson", "spearman", "kendall")
VARIANTS: tuple[str, ...] = ("a", "b", "c")
NAN_POLICIES: tuple[str, ...] = ("omit", "propagate", "raise")
#: The correlation coefficients plus pairwise accuracy with ties (Deutsch et al. 2023).
COEFFICIENTS: tuple[str, ...] = (*METHODS, "acc_eq")
#: Kinds of automatic measures; analyses default to the paper's metrics only.
DEFAULT_KINDS: tuple[str, ...] = ("metric",)
#: A system's value at the system level: the mean of its items, or the value the study gives
#: (``Study.system_values``, e.g. WMT's ``.sys.score`` files).
SYSTEM_SCORES: tuple[str, ...] = ("mean", "given")


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    """Raise ValueError naming ``name`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


def check_level(level: object, levels: tuple[str, ...] = LEVELS) -> str:
    """The canonical name of ``level``: ``"item"`` for any of :data:`ITEM_SYNONYMS`.

    Raises
    ------
    ValueError
        Listing the accepted words, unless ``level`` names one of ``levels``.

    Examples
    --------
    >>> check_level("segment")
    'item'
    >>> check_level("global", ITEM_SYSTEM_LEVELS)
    Traceback (most recent call last):
    ...
    ValueError: level must be one of item, system, story, summary, segment; got 'global'
    """
    name = "item" if isinstance(level, str) and level in ITEM_SYNONYMS else level
    if isinstance(name, str) and name in levels:
        return name
    words = (*levels, *ITEM_SYNONYMS) if "item" in levels else levels
    raise ValueError(f"level must be one of {', '.join(words)}; got {level!r}")


def check_kinds(kinds: tuple[str, ...]) -> tuple[str, ...]:
    """``kinds`` as a tuple; ValueError unless it is a non-empty set of automatic kinds."""
    if isinstance(kinds, str) or not kinds:
        raise ValueError(f"kinds must be a non-empty tuple of {AUTOMATIC_KINDS}; got {kinds!r}")
    for kind in kinds:
        check_choice("kinds", kind, AUTOMATIC_KINDS)
    return tuple(kinds)


def criteria_cube(
    study: Study, kinds: tuple[str, ...], include_human: bool, system_scores: str = "mean"
) -> Cube:
    """The cube of the human criteria and the automatic measures of ``kinds``
    (:func:`measures_cube`).

    Raises ValueError for bad ``kinds`` or a study without human criteria.
    """
    kinds = check_kinds(kinds)
    if not study.criteria:
        raise ValueError(
            "the store holds no human criteria to correlate against: ingest human judgements "
            "(in a tidy file, give their rows kind 'human' in a `kind` column, or rater-level "
            "rows with a `rater` column; or mark them when ingesting the file into a new store: "
            "`ingest --human MEASURE[,...]`), or use --against metrics"
        )
    return measures_cube(study, ("human", *kinds), include_human, system_scores)


def check_system_scores(system_scores: object, level: str) -> None:
    """Raise ValueError unless ``system_scores`` is one of :data:`SYSTEM_SCORES`, and
    ``"given"`` comes with ``level="system"`` (the canonical level)."""
    check_choice("system_scores", system_scores, SYSTEM_SCORES)
    if system_scores == "given" and level != "system":
        raise ValueError(
            f"system_scores='given' is for level='system' (the study's system-level values); "
            f"got level={level!r}"
        )


def measures_cube(
    study: Study, kinds: tuple[str, ...], include_human: bool, system_scores: str = "mean"
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


def given_left_out(study: Study, kinds: tuple[str, ...], include_human: bool) -> list[str]:
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
    study: Study,
    *,
    level: str,
    method: str,
    variant: str = "b",
    nan_policy: str = "omit",
    include_human: bool = False,
    kinds: tuple[str, ...] = DEFAULT_KINDS,
    criteria: bool = True,
    group_by: str = "input",
    weighting: str = "uniform",
    system_scores: str = "mean",
) -> tuple[Cube, LevelCorrelationResult]:
    """Every pair of measures of one cube correlated at one level, computed once per setting.

    The cube holds the human criteria (when ``criteria``) and the automatic measures of
    ``kinds``; the matrix is memoised on the Study under every setting it depends on, so the
    correlations, Williams tests, Borda counts, bootstrap point estimates and the report share
    it. ``method="acc_eq"`` gives pairwise accuracy with ties. ``group_by`` and ``weighting``
    as :func:`~hanna_stats.kernels.level_correlation` (item level: inputs or systems as groups;
    plain or observation-count weighted mean). ``system_scores="given"`` (system level only)
    correlates the study's given system-level values instead of the means over items
    (:func:`measures_cube`).

    Returns
    -------
    (Cube, LevelCorrelationResult)
        The cube and the (M, M) matrices of ``statistic``, ``n_groups``, ``n_skipped``.
    """
    kinds = check_kinds(kinds)
    level = check_level(level)
    check_system_scores(system_scores, level)
    cube = (
        criteria_cube(study, kinds, include_human, system_scores)
        if criteria
        else measures_cube(study, kinds, include_human, system_scores)
    )
    variant = variant if method == "kendall" else "b"  # the others have no variant
    key = ("correlation", level, method, variant, nan_policy, include_human, kinds, criteria)
    if (group_by, weighting) != ("input", "uniform"):  # the default keeps the shared key
        key = (*key, group_by, weighting)
    if system_scores != "mean":
        key = (*key, system_scores)

    def compute() -> LevelCorrelationResult:
        options = {
            "level": level,
            "nan_policy": nan_policy,
            "group_by": group_by,
            "weighting": weighting,
        }
        if method == "acc_eq":
            return pairwise_accuracy(cube.values, **options)
        return level_correlation(cube.values, method=method, variant=variant, **options)

    return cube, study.memo(key, compute)


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
    kinds: tuple[str, ...],
    include_human: bool,
    system_scores: str = "mean",
) -> tuple[str, list[str], Cube]:
    """The criterion's name (by name or abbreviation), the names of the measures of ``kinds``
    other than it, and their cube with the criterion last; ValueError for bad ``kinds``.

    ``system_scores="given"``: the given system-level values (:func:`measures_cube`; measures
    without any are left out), ValueError when the criterion has none.
    """
    kinds = check_kinds(kinds)
    check_choice("system_scores", system_scores, SYSTEM_SCORES)
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
