"""Where mlsql's SQL macro library lives: in the wheel, or in a source checkout."""

from __future__ import annotations

from pathlib import Path

from mlsql.cli.errors import UserError

#: the one file that holds the whole library
ALL_IN_ONE = "mlsql.sql"


#: the SQL dialects with a library
DIALECTS = ("duckdb", "postgres")


def sql_dir(dialect: str = "duckdb") -> Path:
    """The directory holding ``mlsql.sql`` (and, for DuckDB, the per-family ``.sql`` files).

    Both are written into mlsql's cache on first use: DuckDB's from the family files the
    wheel ships (a checkout's ``sql/``, :func:`mlsql._duckdb.generate.written`), PostgreSQL's
    from the registry (:func:`mlsql._postgres.library.written`).

    Examples
    --------
    >>> (sql_dir() / "mlsql.sql").is_file()
    True
    >>> (sql_dir("postgres") / "mlsql.sql").is_file()
    True
    """
    if dialect not in DIALECTS:
        allowed = ", ".join(DIALECTS)
        raise UserError(f"--dialect must be one of {allowed}. Got {dialect!r} instead.")
    if dialect == "postgres":
        from mlsql._postgres.library import written

        return written()
    from mlsql._duckdb.generate import written as duckdb_written

    return duckdb_written()
