"""The library calls DuckDB's own functions, whatever functions of those names the user has.

A user's TEMP or stored macro comes before DuckDB's builtins in the search
path, so a bare ``len(x)`` in a macro body would call the user's ``len``. The
library qualifies every builtin it calls by name (``system.main.len(x)``).
Which names it calls is read here with DuckDB's own parser
(``json_serialize_sql``), not with the code that qualifies them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import duckdb
import pytest

import mlsql
from mlsql._duckdb.library import macros, render
from mlsql.cli.sqlpath import sql_dir

#: the names DuckDB's parser gives syntax, not a call written by name: operators,
#: ``[a, b]`` (list_value), ``{'k': v}`` (struct_pack), ``(a, b)`` (row), ``x.k``
#: (struct_extract), ``[x for x in l if c]`` (list_filter). DuckDB itself looks these
#: up in the search path, so a user's macro of such a name breaks any query of the
#: session that uses the syntax, not only mlsql's: no qualification in the text reaches them.
SYNTAX = {"list_value", "struct_pack", "row", "struct_extract", "list_filter", "list_apply"}

#: (query, its value): exact values worked out by hand
MEASURES = [
    ("SELECT micro_f1(['a', 'b'], ['a'])", 2 / 3),
    ("SELECT r2_score(a, p) FROM (VALUES (1.0, 1.0), (2.0, 2.0), (3.0, 4.0)) t(a, p)", 0.5),
    (
        "SELECT mean_absolute_error(a, p) FROM (VALUES (1.0, 1.0), (2.0, 2.0), (3.0, 4.0)) t(a, p)",
        1 / 3,
    ),
    ("SELECT accuracy_score(a, p) FROM (VALUES ('x', 'x'), ('y', 'x'), ('z', 'z')) t(a, p)", 2 / 3),
    ("SELECT samples_f1(a, p) FROM (VALUES (['a', 'b'], ['a']), (['c'], ['d'])) t(a, p)", 1 / 3),
]
LABELS = (
    "SELECT label, tp, fp, fn FROM label_metrics("
    "'(SELECT [''a''] AS actual, [''a'', ''b''] AS predicted)', 'actual', 'predicted') ORDER BY label"
)


def _tree(con: duckdb.DuckDBPyConnection, body: str, table: bool) -> Any:
    """A macro body as DuckDB parses it."""
    sql = body if table else f"SELECT {body}"
    tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()[0])
    assert not tree.get("error"), tree
    return tree


def _calls(node: Any) -> Iterator[dict[str, Any]]:
    """Every function call node of a parsed tree."""
    if isinstance(node, dict):
        if "function_name" in node:
            yield node
        for value in node.values():
            yield from _calls(value)
    elif isinstance(node, list):
        for value in node:
            yield from _calls(value)


def _unqualified(node: Any) -> Any:
    """``node`` with every ``system.main`` qualification and every text position dropped."""
    if isinstance(node, dict):
        out = {k: _unqualified(v) for k, v in node.items() if not k.startswith("query_location")}
        if out.get("catalog") == "system" and out.get("schema") == "main":
            out["catalog"] = out["schema"] = ""
        if out.get("path", [])[:2] == ["system", "main"]:
            out["path"] = out["path"][2:]
        return out
    if isinstance(node, list):
        return [_unqualified(v) for v in node]
    return node


@pytest.fixture(scope="module")
def builtins_called() -> list[str]:
    """Every DuckDB builtin the library calls by name (not syntax, not its own macros)."""
    con = duckdb.connect()
    system = {
        name
        for (name,) in con.execute(
            "SELECT DISTINCT lower(function_name) FROM duckdb_functions() "
            "WHERE database_name = 'system'"
        ).fetchall()
    }
    all_macros = macros()
    own = {m.name.lower() for m in all_macros}
    calls = [call for m in all_macros for call in _calls(_tree(con, m.body, m.table))]
    called = {call["function_name"].lower() for call in calls}
    # DuckDB's window functions (row_number, lag, ...), which its catalog lists from 2.0 on
    system |= {call["function_name"].lower() for call in calls if call.get("class") == "WINDOW"}
    return sorted(name for name in (called & system) - own - SYNTAX if name.isidentifier())


@pytest.mark.long
def test_the_library_calls_builtins_by_name(builtins_called):
    assert {"len", "sum", "list_transform", "lower", "query", "range", "row_number"} <= set(
        builtins_called
    )


@pytest.mark.long
def test_every_builtin_call_is_qualified_and_nothing_else_changes(builtins_called):
    con = duckdb.connect()
    bare, changed = set(), []
    for m in macros():
        (text,) = render([m]).values()  # one macro: one CREATE MACRO statement
        body = text.split(" AS TABLE \n    " if m.table else " AS \n    ", 1)[1].rstrip()[:-1]
        tree = _tree(con, body, m.table)
        bare |= {
            call["function_name"].lower()
            for call in _calls(tree)
            if call["function_name"].lower() in builtins_called and call.get("schema") != "main"
        }
        if _unqualified(tree) != _unqualified(_tree(con, m.body, m.table)):
            changed.append(m.name)
    assert not bare, f"builtins called without system.main: {sorted(bare)}"
    assert not changed, f"rendering changed more than the qualification of: {changed[:10]}"


@pytest.mark.long
def test_no_builtin_macro_is_called_whose_body_calls_functions_by_name():
    """DuckDB binds its own macros' bodies in the caller's search path: a user's ``list_aggr``
    would change ``list_sum``, whose body calls it, however ``list_sum`` is qualified. So
    the library calls none of them (but those whose bodies are syntax only, as nullif's)."""
    con = duckdb.connect()
    definitions = con.execute(
        "SELECT lower(function_name), macro_definition FROM duckdb_functions() "
        "WHERE database_name = 'system' AND function_type = 'macro'"
    ).fetchall()
    by_name: dict[str, set[str]] = {}
    for name, body in definitions:
        inner = {c["function_name"].lower() for c in _calls(_tree(con, body, False))}
        by_name.setdefault(name, set()).update(inner - SYNTAX)
    calling = {name for name, inner in by_name.items() if inner}
    assert {"list_sum", "array_to_string"} <= calling  # what the check is about
    used = {
        call["function_name"].lower()
        for native in (False, True)
        for m in macros(native=native)
        for call in _calls(_tree(con, m.body, m.table))
        if not call.get("schema") and call.get("class") != "WINDOW"
    }
    assert not used & calling, {name: by_name[name] for name in used & calling}


def _shadowing_connection(names: list[str], table: bool) -> duckdb.DuckDBPyConnection:
    """A connection with a user's TEMP macro of each name (scalar, or a table macro)."""
    con = duckdb.connect()
    for name in names:
        con.execute(f'CREATE TEMP MACRO "{name}"(x) AS {"TABLE SELECT 42 AS x" if table else 42}')
    return con


def _load(con: duckdb.DuckDBPyConnection, how: str) -> None:
    if how == "file":
        con.execute((sql_dir() / "mlsql.sql").read_text())
    else:
        mlsql.register(con, temporary=how == "temporary")


@pytest.mark.parametrize(
    ("how", "table"),
    [
        pytest.param("temporary", False, marks=pytest.mark.long),
        ("stored", False),
        ("file", False),
        pytest.param("temporary", True, marks=pytest.mark.long),
    ],
)
@pytest.mark.long_cases("stored-False")
def test_users_functions_named_like_builtins_change_no_result(builtins_called, how, table):
    con = _shadowing_connection(builtins_called, table)
    if not table:
        assert con.execute("SELECT len([1, 2, 3])").fetchone()[0] == 42
    _load(con, how)
    for query, want in MEASURES:
        assert con.execute(query).fetchone()[0] == pytest.approx(want, rel=1e-12), query
    assert con.execute(LABELS).fetchall() == [("a", 1, 0, 0), ("b", 0, 1, 0)]
