"""The DuckDB connection an mlsql function works on in the calling thread.

A DuckDB connection is for one thread at a time. Used by several threads at
once, ``con.execute(q).fetchall()`` can hand one thread the result of
another's query (DuckDB 2.x) or crash the process (1.4), and ``con.sql(q)``
raises "connection is busy" (2.x) or "Attempting to execute an unsuccessful
or closed pending query result" (1.4); DuckDB's way is a ``con.cursor()`` per
thread, a second connection to the same database.

:func:`mlsql.connect` remembers the thread that opened its connection
(:func:`opened`). An mlsql function given that connection in any other
thread works on that thread's own cursor of it (:func:`in_this_thread`), made
on the thread's first call, with the macros registered on it when they are
TEMP (a cursor sees the database's catalog, not its parent's TEMP objects),
and kept while both the thread and the connection live, so the relations it
returns stay readable there. In the opening thread nothing changes: the
functions work on the connection itself, which sees its TEMP tables,
registered data frames and open transaction.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import duckdb


@dataclass(frozen=True)
class _Opened:
    """Who opened a :func:`mlsql.connect` connection, and how a cursor of it gets the macros."""

    thread: weakref.ref[threading.Thread]
    #: registers the macros on a cursor (register() with its arguments); None when cursors see
    #: the macros (catalog ones)
    prepare: Callable[[Any], object] | None


#: the connections of mlsql.connect(), while they live
_OPENED: weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, _Opened] = weakref.WeakKeyDictionary()
_OPENED_LOCK = threading.Lock()
#: per thread: ``cursors``, connection -> this thread's cursor of it
_LOCAL = threading.local()


def opened(con: duckdb.DuckDBPyConnection, prepare: Callable[[Any], object] | None) -> None:
    """Remember that the calling thread opened ``con``; ``prepare`` registers the macros on a
    cursor of it (None: a cursor sees them already)."""
    with _OPENED_LOCK:
        _OPENED[con] = _Opened(weakref.ref(threading.current_thread()), prepare)


def in_this_thread(con: Any) -> Any:
    """The connection to work on for ``con`` in the calling thread.

    ``con`` itself, unless it comes from :func:`mlsql.connect` and another
    thread opened it: then this thread's own cursor of it, with mlsql's macros.

    Examples
    --------
    >>> import threading, mlsql
    >>> con = mlsql.connect()
    >>> in_this_thread(con) is con
    True
    >>> seen = []
    >>> worker = threading.Thread(target=lambda: seen.append(in_this_thread(con)))
    >>> worker.start(); worker.join()
    >>> seen[0] is con, seen[0].execute("SELECT micro_f1(['a'], ['a'])").fetchall()
    (False, [(1.0,)])
    """
    try:
        with _OPENED_LOCK:
            found = _OPENED.get(con)
    except TypeError:  # not weakly referenceable: no DuckDB connection, left to the caller
        return con
    if found is None or found.thread() is threading.current_thread():
        return con
    cursors: weakref.WeakKeyDictionary[Any, Any] | None = getattr(_LOCAL, "cursors", None)
    if cursors is None:
        cursors = _LOCAL.cursors = weakref.WeakKeyDictionary()
    cursor = cursors.get(con)
    if cursor is None:
        cursor = con.cursor()
        if found.prepare is not None:
            found.prepare(cursor)
        cursors[con] = cursor
    return cursor


def new_cursor(con: Any) -> Any:
    """A new cursor of ``con``, with mlsql's macros where ``con`` is a :func:`mlsql.connect`
    connection whose macros are TEMP (the caller closes it).

    Examples
    --------
    >>> import mlsql
    >>> cursor = new_cursor(mlsql.connect())
    >>> cursor.execute("SELECT micro_f1(['a'], ['a'])").fetchall()
    [(1.0,)]
    >>> cursor.close()
    """
    with _OPENED_LOCK:
        found = _OPENED.get(con)
    cursor = con.cursor()
    if found is not None and found.prepare is not None:
        found.prepare(cursor)
    return cursor
