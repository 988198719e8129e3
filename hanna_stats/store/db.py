"""Open a DuckDB score store whose schema and views come from the ``sql/`` files."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import duckdb

from hanna_stats.store.errors import DataNotFoundError

_PACKAGE_DIR = Path(__file__).resolve().parents[1]
# An installed wheel carries sql/ inside the package (pyproject force-include); a source checkout
# has it next to the package.
_SQL_DIRS = (_PACKAGE_DIR / "sql", _PACKAGE_DIR.parent / "sql")
SCHEMA_FILES = ("schema.sql", "views.sql")
#: The schema this package writes (table ``store_schema``). A store without that table is schema 0.
SCHEMA_VERSION = 2
#: The migration steps: ``MIGRATIONS[k]`` takes a store from schema ``k`` to ``k + 1``.
MIGRATIONS = ("migrate_0.sql", "migrate_1.sql")
#: The package version recorded with the schema (``store_schema.written_by``).
PACKAGE_VERSION = metadata.version("hanna_stats")
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
        Open an existing file without write access.

    Returns
    -------
    duckdb.DuckDBPyConnection
        Connection whose tables and views are those of ``sql/schema.sql`` and ``sql/views.sql``
        at :data:`SCHEMA_VERSION` (table ``store_schema``). A new store is created at it; a
        writable open of an older store migrates it in one transaction (see :func:`migrate`).
        The ``scores_wide`` view exists once data has been ingested.

    Raises
    ------
    DataNotFoundError
        If ``read_only`` and the file does not exist.
    ValueError
        If ``read_only`` is asked for an in-memory store, or the file exists and is not a
        DuckDB database (DuckDB would open a CSV, Parquet or JSON file as an empty in-memory
        database, and silently lose what is written to it); if the store's schema is newer than
        :data:`SCHEMA_VERSION`, or older and ``read_only`` (a read-only open writes nothing: the
        message says how to migrate the file).
    """
    if path is None:
        if read_only:
            raise ValueError("an in-memory store cannot be opened read-only")
        con = duckdb.connect()
    else:
        path = Path(path)
        _check_database_file(path)
        if read_only and not path.is_file():
            raise DataNotFoundError(
                f"no score store at {path}: build it first (e.g. open_store(path) and an "
                "ingest, or build_hanna_store(data_dir, path))"
            )
        con = duckdb.connect(str(path), read_only=read_only)
    try:
        version, written_by = schema_version(con)
        if version is None and not read_only:
            _in_transaction(con, _create)
        elif version is not None and version > SCHEMA_VERSION:
            raise ValueError(
                f"{path}: store schema {version} (written by hanna_stats {written_by}) is newer "
                f"than schema {SCHEMA_VERSION}, the one hanna_stats {PACKAGE_VERSION} reads: "
                "upgrade hanna_stats to open it"
            )
        elif version is not None and version < SCHEMA_VERSION:
            if read_only:
                written = (
                    f"written by hanna_stats {written_by}"
                    if written_by
                    else "written before stores recorded their schema"
                )
                raise ValueError(
                    f"{path}: store schema {version} ({written}), older than schema "
                    f"{SCHEMA_VERSION}: migrate the file once by "
                    f"opening it for writing, e.g. `python -m hanna_stats sql --write --db {path} "
                    '"SELECT schema_version FROM store_schema"` (or any ingest into it)'
                )
            migrate(con, version)
    except BaseException:
        con.close()
        raise
    return con


def schema_version(con: duckdb.DuckDBPyConnection) -> tuple[int | None, str | None]:
    """The schema of an open store and the hanna_stats version that wrote it (table
    ``store_schema``): ``(0, None)`` for a store without that table, ``(None, None)`` for a
    database without tables (a new store)."""
    tables = {
        name
        for (name,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'"
        ).fetchall()
    }
    if "store_schema" not in tables:
        return (0, None) if tables else (None, None)
    rows = con.execute("SELECT schema_version, written_by FROM store_schema").fetchall()
    if len(rows) != 1:
        raise ValueError(f"table store_schema holds {len(rows)} rows, expected 1")
    return rows[0]


def migrate(con: duckdb.DuckDBPyConnection, version: int) -> None:
    """Migrate a store from schema ``version`` to :data:`SCHEMA_VERSION` in one transaction: a
    failure leaves it as it was.

    ``schema.sql`` creates the tables the store lacks; the steps of :data:`MIGRATIONS` from
    ``version`` on run in order; ``schema.sql`` runs again to create anew each table a step
    renamed to ``_hs_old_<name>``, which is refilled by column name (a column it lacked takes its
    default) and dropped; then the views (``scores_wide`` too) and the version are written.
    """

    def steps(con: duckdb.DuckDBPyConnection) -> None:
        con.execute(read_sql("schema.sql"))
        for step in MIGRATIONS[version:]:
            con.execute(read_sql(step))
        con.execute(read_sql("schema.sql"))
        old = con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
            "AND starts_with(table_name, '_hs_old_')"
        ).fetchall()
        for (table,) in old:  # our own table names, never user input
            new = table.removeprefix("_hs_old_")
            con.execute(f"INSERT INTO {new} BY NAME SELECT * FROM {table}")
            con.execute(f"DROP TABLE {table}")
        _create(con)
        refresh_scores_wide(con)

    _in_transaction(con, steps)


def _create(con: duckdb.DuckDBPyConnection) -> None:
    """Create the schema and views (idempotent) and record :data:`SCHEMA_VERSION`."""
    for name in SCHEMA_FILES:
        con.execute(read_sql(name))
    con.execute("DELETE FROM store_schema")
    con.execute("INSERT INTO store_schema VALUES (?, ?)", [SCHEMA_VERSION, PACKAGE_VERSION])


def refresh_scores_wide(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)create the ``scores_wide`` view from ``sql/scores_wide.sql`` and the catalogue."""
    names = [
        r[0] for r in con.execute("SELECT name FROM measures ORDER BY position, name").fetchall()
    ]
    if not names:
        con.execute("DROP VIEW IF EXISTS scores_wide")
        return
    template = read_sql("scores_wide.sql")
    con.execute(template.replace("{measure_list}", ", ".join(map(_quote_literal, names))))


def _quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _in_transaction(con: duckdb.DuckDBPyConnection, write) -> None:
    """Run ``write(con)`` in one transaction, rolled back if it fails."""
    con.execute("BEGIN TRANSACTION")
    try:
        write(con)
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
