"""The SQL table function ``slices(...)`` of :func:`mlsql.connect` connections.

``FROM slices('preds', 'actual', 'predicted', candidates := ['lang', 'length'],
measure := 'micro_f1', depth := 2)`` gives the table of :func:`mlsql.slices`,
with its parameters by the same names (``candidates`` one name or a list,
``measure`` a name; a measure's own parameters ``beta``, ``zero_division``,
``n_labels``, ``options``, ``average`` and ``pos_label`` as named arguments).

Slices are resampled with numpy by :mod:`mlsql._slices.stats`, so that the
same seed gives the same table in every engine: no SQL can draw those
numbers. The table macro ``slices`` therefore hands its arguments, as one
JSON object, to a Python function of the connection (a DuckDB Python UDF,
called once per query, on its arguments only, never on rows), which runs
:func:`mlsql.slices` on a cursor of the connection (a query cannot read
through its own connection) and returns the rows; the macro unnests them. An
mlsql error comes back as its message, raised by the macro's ``error()``.

The source is read as :func:`mlsql.slices` reads a string: a table or view
named exactly so, a query, or a file path. Being read through a cursor, it
must be visible to other connections of the database: TEMP tables and
DataFrames registered on the connection are not; a view or table is.

An in-memory database gets the macro as a catalog object, seen by every
cursor; a database file gets a TEMP one on the connection alone, never
written into the file (a stored macro would call a Python function other
sessions lack).
"""

from __future__ import annotations

import itertools
import json
import threading
import weakref
from typing import Any

import duckdb

from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._slices import front
from mlsql._sqltext import WRITE_DUCKDB, quote_ident

#: the measures' own parameters the macro forwards (those given, not NULL, as the measure's
#: ``(name, {parameter: value})``)
MEASURE_PARAMS = ("beta", "zero_division", "n_labels", "options", "average", "pos_label")
#: the macro's parameters after source, actual and predicted, with their SQL defaults (those of
#: :func:`mlsql.slices`)
PARAMS = (
    ("candidates", "NULL"),
    ("measure", "NULL"),
    ("depth", "1"),
    ("n_bins", "4"),
    ("min_rows", str(front.MIN_ROWS)),
    ("min_weight", "NULL"),
    ("sample_weight", "NULL"),
    ("n_resamples", "1000"),
    ("confidence", "0.95"),
    ("seed", "0"),
    ("adjust", "'bh'"),
    *((name, "NULL") for name in MEASURE_PARAMS),
)
_SQL_TYPES = {"slice": "VARCHAR", "rows": "BIGINT", "significant": "BOOLEAN"}
#: the Python function's return type: an error message, or the rows
RETURN_TYPE = (
    "STRUCT(error VARCHAR, result STRUCT("
    + ", ".join(f"{quote_ident(c)} {_SQL_TYPES.get(c, 'DOUBLE')}" for c in front.COLUMNS)
    + ")[])"
)
#: each connection's Python function has its own name: connections of one database file
#: share its functions
_NUMBERS = itertools.count()
_NUMBERS_LOCK = threading.Lock()


def call(text: str, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """Run :func:`mlsql.slices` with the macro's arguments (``text``: a JSON object) on a
    cursor of ``con``: ``{"error": message}`` or ``{"result": rows as dicts}``.

    Examples
    --------
    >>> import mlsql
    >>> con = mlsql.connect()
    >>> text = '{"source": "nope", "actual": "a", "predicted": "p", "candidates": "x", "measure": "f1"}'
    >>> call(text, con)["error"].split(":")[0]
    "slices cannot read the table or view 'nope'"
    >>> call(text, con)["error"].endswith("which mlsql.slices(relation, ...) reads)")
    True
    """
    from mlsql._duckdb.slices import slices
    from mlsql._duckdb.threads import new_cursor

    given = json.loads(text)
    params = {k: given.pop(k, None) for k in MEASURE_PARAMS}
    params = {k: v for k, v in params.items() if v is not None}
    measure = given.pop("measure")
    if params and isinstance(measure, str):
        measure = (measure, params)
    source, actual, predicted = given.pop("source"), given.pop("actual"), given.pop("predicted")
    candidates = given.pop("candidates")
    try:
        cursor = new_cursor(con)
        try:
            rows = slices(source, actual, predicted, candidates, measure, con=cursor, **given)
            result = [dict(zip(front.COLUMNS, r, strict=True)) for r in rows.fetchall()]
        finally:
            cursor.close()
    except (MlsqlError, duckdb.Error) as exc:
        message = str(exc)
        if message.startswith("slices cannot read"):
            message += UNSEEN
        return {"error": message, "result": None}
    return {"error": None, "result": result}


#: what a source the SQL ``slices`` cannot read may be (its cursor sees the database, not the
#: connection's own TEMP tables and registered frames)
UNSEEN = (
    " (the SQL slices reads tables and views of the database, files and queries, through a"
    " cursor of its own: not TEMP tables or frames registered on the connection, which"
    " mlsql.slices(relation, ...) reads)"
)


def macro_sql(name: str, function: str, temporary: bool) -> str:
    """``CREATE MACRO name(...) AS TABLE ...``: ``slices`` calling the Python ``function``.

    Examples
    --------
    >>> print(macro_sql("slices", "_mlsql_slices_0", True).splitlines()[0][:60])
    CREATE TEMP MACRO slices(source, actual, predicted, candidat
    """
    params = ", ".join(f"{p} := {default}" for p, default in PARAMS)
    fields = ", ".join(
        f"{WRITE_DUCKDB(p)}, {p}"
        for p in ("source", "actual", "predicted", *(p for p, _ in PARAMS))
    )
    temp = "TEMP " if temporary else ""
    return (
        f"CREATE {temp}MACRO {name}(source, actual, predicted, {params}) AS TABLE\n"
        "SELECT unnest(CASE WHEN r.error IS NULL THEN r.result ELSE error(r.error) END,"
        " recursive := true)\n"
        f"FROM (SELECT {function}(CAST(json_object({fields}) AS VARCHAR)) AS r)"
    )


def install(
    con: duckdb.DuckDBPyConnection,
    *,
    in_memory: bool,
    prefix: str = "",
    schema: str | None = None,
    replace: bool = False,
) -> None:
    """Give ``con`` the table function ``slices`` (``prefix`` before the name; in ``schema``
    for an in-memory database). A function of that name already there is a clash unless
    ``replace``, as for :func:`mlsql.register`."""
    temporary = not in_memory
    name = quote_ident(prefix + "slices")
    if schema is not None and not temporary:
        name = f"{quote_ident(schema)}.{name}"
    clash = P.clash_message("on this connection", [prefix + "slices"], "prefix='ml_'")
    # a TEMP macro would hide a function of the database file's: look for one there (a scan of
    # every function, 60 ms; an in-memory database is new, and CREATE says if the name is taken)
    if temporary and not replace:
        found = con.execute(
            "SELECT count(*) FROM duckdb_functions() WHERE function_name = ?", [prefix + "slices"]
        ).fetchall()[0][0]
        if found:
            raise MlsqlError(clash)
    with _NUMBERS_LOCK:
        function = f"_mlsql_slices_{next(_NUMBERS)}"
    ref = weakref.ref(con)

    def run(text: str) -> dict[str, Any]:
        target = ref()
        if target is None:
            return {"error": "slices: its connection is closed.", "result": None}
        return call(text, target)

    con.create_function(function, run, ["VARCHAR"], RETURN_TYPE, side_effects=True)
    sql = macro_sql(name, function, temporary)
    if replace:
        sql = sql.replace("CREATE ", "CREATE OR REPLACE ", 1)
    try:
        con.execute(sql)
    except duckdb.CatalogException as exc:
        raise MlsqlError(clash) from exc
