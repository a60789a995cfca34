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


def sql_dir() -> Path:
    """The directory holding ``mlsql.sql`` and the per-family ``.sql`` files.

    Examples
    --------
    >>> (sql_dir() / "mlsql.sql").is_file()
    True
    """
    for candidate in candidates():
        if (candidate / ALL_IN_ONE).is_file():
            return candidate
    looked = ", ".join(str(c) for c in candidates())
    raise UserError(f"cannot find mlsql's SQL library ({ALL_IN_ONE}); looked in {looked}")
