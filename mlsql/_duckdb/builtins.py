"""DuckDB's own functions as the library calls them: qualified, and never through a macro.

A user's TEMP or stored macro comes before DuckDB's builtins in the search path,
so the library writes every call of a builtin as ``system.main.name(...)``
(:func:`qualify_builtins`), and writes DuckDB's own macros whose bodies call
functions by name as those functions (:data:`BUILTIN_MACROS`). Kept apart from
the library itself, so that reading a stored library builds none of it.
"""

from __future__ import annotations

import functools

from mlsql._sqlexpr import qualify_calls

#: where DuckDB keeps its own functions; a call qualified so finds no user's function
BUILTIN_SCHEMA = "system.main"


#: DuckDB's window functions, which its catalog lists only from version 2.0 on
WINDOW_FUNCTIONS = frozenset(
    {
        "cume_dist", "dense_rank", "fill", "first_value", "lag", "last_value", "lead",
        "nth_value", "ntile", "percent_rank", "rank", "rank_dense", "row_number",
    }
)  # fmt: skip


#: DuckDB's own macros the library would call, as the builtin functions their bodies call.
#: DuckDB binds a builtin macro's body in the caller's search path, so a user's function
#: named like one it calls (``list_aggr``, ``list_filter``, ...) would change its result, and
#: qualifying the macro's own name does not reach them. ``list_intersect`` is a macro up
#: to DuckDB 1.4 (a function from 2.0, which keeps the first list's order: the library
#: sorts or counts its result); ``array_to_string`` is written as 2.0 writes it (1.4 gives
#: NULL for an empty list). ``tests/test_sql_builtins.py`` fails when the library calls
#: one of DuckDB's macros whose body calls a function by name.
BUILTIN_MACROS = {
    "list_sum": "list_aggr({0}, 'sum')",
    "list_avg": "list_aggr({0}, 'avg')",
    "list_count": "list_aggr({0}, 'count')",
    "list_max": "list_aggr({0}, 'max')",
    "list_min": "list_aggr({0}, 'min')",
    "list_prepend": "list_concat([{0}], {1})",
    "list_intersect": (
        "list_filter(list_distinct({0}), lambda __mlsql_e: list_contains({1}, __mlsql_e))"
    ),
    # the list is written once, bound to a lambda's parameter: a list built by a long
    # expression (evaluate's query text is one) would otherwise be written, and run, twice
    "array_to_string": (
        "list_transform([CAST({0} AS VARCHAR[])], lambda __mlsql_s: CASE WHEN len(__mlsql_s) = 0 "
        "THEN '' ELSE list_aggr(__mlsql_s, 'string_agg', {1}) END)[1]"
    ),
}


@functools.lru_cache(maxsize=1)
def builtins() -> frozenset[str]:
    """The names (lower-case) of DuckDB's own functions, macros, table and window functions."""
    import duckdb

    with duckdb.connect() as con:
        rows = con.execute(
            "SELECT DISTINCT lower(function_name) FROM system.main.duckdb_functions() "
            "WHERE database_name = 'system' AND schema_name = 'main'"
        ).fetchall()
    return frozenset(name for (name,) in rows) | WINDOW_FUNCTIONS


def qualify_builtins(text: str, own: frozenset[str] = frozenset()) -> str:
    """``text`` with every call of a DuckDB builtin (not one of ``own``, lower-case names)
    written as ``system.main.name(...)``, so that no user's function of that name (a TEMP
    or stored macro comes first in DuckDB's search path) changes what it computes."""
    return qualify_calls(text, builtins() - own, BUILTIN_SCHEMA)
