"""Where mlsql's SQL macro library lives: in the wheel, or in a source checkout."""

from __future__ import annotations

from pathlib import Path

from mlsql.cli.errors import UserError

#: the one file that holds the whole library
ALL_IN_ONE = "mlsql.sql"


def candidates() -> list[Path]:
    """Installed wheels ship ``mlsql/sql``; a source checkout has the repo's ``sql/``."""
    import mlsql

    package = Path(mlsql.__file__).resolve().parent
    return [package / "sql", package.parent / "sql"]


#: the SQL dialects with a library
DIALECTS = ("duckdb", "postgres")


def sql_dir(dialect: str = "duckdb") -> Path:
    """The directory holding ``mlsql.sql`` (and, for DuckDB, the per-family ``.sql`` files).

    DuckDB's library ships in the wheel (and a checkout's ``sql/``); PostgreSQL's is made
    from the registry into mlsql's cache on first use (:func:`mlsql._postgres.library.written`).

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
    for base in candidates():
        if (base / ALL_IN_ONE).is_file():
            return base
    looked = ", ".join(str(c) for c in candidates())
    raise UserError(f"cannot find mlsql's SQL library ({ALL_IN_ONE}); looked in {looked}")
