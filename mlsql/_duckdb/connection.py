"""``mlsql.connect``: :func:`mlsql._duckdb.register.connect`'s connection with the SQL table
function ``slices`` too (:mod:`mlsql._duckdb.slices_sql`).

It lives above both: ``slices`` runs :func:`mlsql.slices`, whose modules register
macros, so :mod:`mlsql._duckdb.register` itself cannot offer it. mlsql's own
connections (a call given no ``con``) are plain ``register.connect`` ones.
"""

from __future__ import annotations

import functools

import duckdb

from mlsql._duckdb import register, slices_sql


@functools.wraps(register.connect)
def connect(database: str = ":memory:", **kwargs: object) -> duckdb.DuckDBPyConnection:
    con = register.connect(database, **kwargs)
    slices_sql.install(
        con,
        in_memory=register._in_memory(str(database)),
        prefix=str(kwargs.get("prefix", "")),
        schema=kwargs.get("schema"),  # type: ignore[arg-type]
        replace=bool(kwargs.get("replace", False)),
    )
    return con


connect.__doc__ = (register.connect.__doc__ or "").replace(
    "\n    Parameters\n",
    "\n    The connection also has the SQL table function ``slices`` (see\n"
    "    :func:`mlsql.slices`).\n\n    Parameters\n",
    1,
)
