"""Names and checks shared by the analysis modules."""

from __future__ import annotations

import duckdb

from hanna_stats.store import Cube, load_cube

LEVELS: tuple[str, ...] = ("story", "system", "global")
METHODS: tuple[str, ...] = ("pearson", "spearman", "kendall")
#: The correlation coefficients plus pairwise accuracy with ties (Deutsch et al. 2023).
COEFFICIENTS: tuple[str, ...] = (*METHODS, "acc_eq")
#: Analysis level -> kernel level (the paper's "story" level is the kernels' "item" level).
KERNEL_LEVEL = {"story": "item", "system": "system", "global": "global"}
#: Kinds of automatic measures; analyses default to the paper's metrics only.
AUTOMATIC_KINDS: tuple[str, ...] = ("metric", "llm-judge")
DEFAULT_KINDS: tuple[str, ...] = ("metric",)


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    """Raise ValueError naming ``name`` unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}; got {value!r}")


def check_kinds(kinds: tuple[str, ...]) -> None:
    """Raise ValueError unless ``kinds`` is a non-empty tuple of automatic measure kinds."""
    if isinstance(kinds, str) or not kinds:
        raise ValueError(f"kinds must be a non-empty tuple of {AUTOMATIC_KINDS}; got {kinds!r}")
    for kind in kinds:
        check_choice("kinds", kind, AUTOMATIC_KINDS)


def criterion_name(con: duckdb.DuckDBPyConnection, criterion: str) -> str:
    """The human criterion named ``criterion`` or abbreviated so (``"EM"`` -> ``"Empathy"``)."""
    rows = con.execute(
        "SELECT name, abbreviation FROM measures WHERE kind = 'human' ORDER BY position, name"
    ).fetchall()
    for name, abbreviation in rows:
        if criterion in (name, abbreviation):
            return name
    known = ", ".join(f"{n} ({a})" if a else n for n, a in rows)
    raise ValueError(f"criterion must be one of {known}; got {criterion!r}")


def criteria_cube(
    con: duckdb.DuckDBPyConnection, kinds: tuple[str, ...], include_human: bool
) -> Cube:
    """The cube of the human criteria and the automatic measures of ``kinds``.

    Raises ValueError for bad ``kinds`` or a store without human criteria.
    """
    check_kinds(kinds)
    cube = load_cube(con, kinds=("human", *kinds), include_human=include_human)
    if "human" not in cube.kinds:
        raise ValueError("the store holds no human criteria")
    return cube
