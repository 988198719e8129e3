"""Open a DuckDB score store whose schema and views come from the ``sql/`` files."""

from __future__ import annotations

from pathlib import Path

import duckdb

from hanna_stats.store.errors import DataNotFoundError

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
# An installed wheel carries sql/ inside the package (pyproject force-include); a source checkout
# has it next to the package.
_SQL_DIRS = (_PACKAGE_DIR / "sql", _PACKAGE_DIR.parent / "sql")
SCHEMA_FILES = ("schema.sql", "views.sql")
# A DuckDB database file has these bytes at this offset (its main header, after a checksum).
_DUCKDB_MAGIC, _DUCKDB_MAGIC_AT = b"DUCK", 8


def sql_path(name: str) -> Path:
    """Locate one of the project's SQL files.

    Parameters
    ----------
    name : str
        File name inside ``sql/``, e.g. ``"schema.sql"``.

    Returns
    -------
    Path
        The file, from ``hanna_stats/sql`` in an installed wheel or the repository's ``sql/``.

    Raises
    ------
    FileNotFoundError
        If neither place has it.
    """
    for folder in _SQL_DIRS:
        path = folder / name
        if path.is_file():
            return path
    raise FileNotFoundError(f"{name} not found in {' or '.join(map(str, _SQL_DIRS))}")


def read_sql(name: str) -> str:
    """Return the text of ``sql/<name>`` (see :func:`sql_path`)."""
    return sql_path(name).read_text(encoding="utf-8")


def open_store(
    path: str | Path | None = None, *, read_only: bool = False
) -> duckdb.DuckDBPyConnection:
    """Open (or create) a score store.

    Parameters
    ----------
    path : str or Path, optional
        DuckDB database file; None opens an in-memory store.
    read_only : bool
        Open an existing file without write access. The schema is then not (re)created.

    Returns
    -------
    duckdb.DuckDBPyConnection
        Connection whose tables and views are those of ``sql/schema.sql`` and ``sql/views.sql``
        (both idempotent, run on every writable open). The ``scores_wide`` view exists once data
        has been ingested.

    Raises
    ------
    DataNotFoundError
        If ``read_only`` and the file does not exist.
    ValueError
        If ``read_only`` is asked for an in-memory store, or the file exists and is not a
        DuckDB database (DuckDB would open a CSV, Parquet or JSON file as an empty in-memory
        database, and silently lose what is written to it).
    """
    if path is None:
        if read_only:
            raise ValueError("an in-memory store cannot be opened read-only")
        con = duckdb.connect()
    else:
        path = Path(path)
        _check_database_file(path)
        if read_only:
            if not path.is_file():
                raise DataNotFoundError(
                    f"no score store at {path}: build it first (e.g. open_store(path) and an "
                    "ingest, or build_hanna_store(data_dir, path))"
                )
            return duckdb.connect(str(path), read_only=True)
        con = duckdb.connect(str(path))
    _key_by_subset(con)
    for name in SCHEMA_FILES:
        con.execute(read_sql(name))
    return con


#: Tables of given values keyed by subset (column ``subset``, part of their primary key).
SUBSET_KEYED = ("system_level_scores", "domain_level_scores")


def _key_by_subset(con: duckdb.DuckDBPyConnection) -> None:
    """Rebuild, in one transaction, the tables of :data:`SUBSET_KEYED` of a store written before
    their column ``subset`` existed: a primary key cannot be altered, so each is renamed, created
    anew by ``schema.sql`` and refilled (its values with subset ``''``)."""
    old = [
        table
        for (table,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND "
            "table_name IN ? AND table_name NOT IN (SELECT table_name FROM duckdb_columns() "
            "WHERE schema_name = 'main' AND column_name = 'subset')",
            [list(SUBSET_KEYED)],
        ).fetchall()
    ]
    if not old:
        return
    con.execute("BEGIN TRANSACTION")
    try:
        for table in old:  # our own table names, never user input
            con.execute(f"ALTER TABLE {table} RENAME TO _hs_unkeyed_{table}")
        con.execute(read_sql("schema.sql"))
        for table in old:
            con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _hs_unkeyed_{table}")
            con.execute(f"DROP TABLE _hs_unkeyed_{table}")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def has_ingests(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the store records any ingest (a new store that every ingest refused has none)."""
    return bool(con.execute("SELECT count(*) FROM ingests").fetchall()[0][0])


def _check_database_file(path: Path) -> None:
    """Refuse an existing file that does not start as a DuckDB database file."""
    if not path.is_file():
        return
    with path.open("rb") as f:
        head = f.read(_DUCKDB_MAGIC_AT + len(_DUCKDB_MAGIC))
    if head[_DUCKDB_MAGIC_AT:] != _DUCKDB_MAGIC:
        what = "an empty file" if not head else "not a DuckDB database"
        raise ValueError(
            f"{path}: not a hanna_stats store ({what}; a store is a DuckDB database file): "
            "name a store file, or a new file to create one with `ingest`"
        )


def run_query(con: duckdb.DuckDBPyConnection, query: str, *, allow_files: bool = False):
    """Run ad-hoc SQL and return the rows of its last statement as a polars DataFrame.

    Unless ``allow_files``, the connection is first sandboxed: DuckDB's external access is
    turned off and its configuration locked, so the query reads and writes nothing but the store
    (no ``COPY ... TO``, ``read_csv``, ``ATTACH``, extension installs, nor a ``SET`` that undoes
    this). A statement that returns no rows (``CREATE``, ``INSERT`` on a store opened for
    writing) gives an empty frame.

    Raises
    ------
    duckdb.Error
        As DuckDB reports it; for a file the sandbox refuses, a ``PermissionException`` that
        says how to allow files.
    """
    import polars as pl

    if not allow_files:
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    try:
        relation = con.sql(query)
        return pl.DataFrame() if relation is None else relation.pl()
    except duckdb.PermissionException as err:
        if allow_files:
            raise
        raise duckdb.PermissionException(
            f"{str(err).strip()} (ad-hoc queries read and write no files outside the store; "
            "allow_files=True, or --allow-files on the command line, lets them)"
        ) from None
