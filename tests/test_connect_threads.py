"""mlsql's functions called from several threads sharing one ``mlsql.connect()`` connection.

A DuckDB connection is for one thread at a time: shared, ``con.sql`` raises
"connection is busy" (DuckDB 2.x) and ``execute(...).fetchall()`` can return
another thread's result (2.x) or crash (1.4). mlsql's functions given a
``connect()`` connection in another thread than the one that opened it work
on that thread's own cursor of it, so every thread gets its own, exact
results; ``connect()`` still returns a plain ``duckdb.DuckDBPyConnection``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest

import mlsql

THREADS = 4
ITERATIONS = 2


def _rows(k: int) -> pa.Table:
    """Thread ``k``'s data: k + 1 rows right on 'a', one row 'a' predicted 'b'."""
    n = k + 1
    return pa.table({"y": [["a"]] * (n + 1), "p": [["a"]] * n + [["b"]]})


def _micro_f1(k: int) -> Fraction:
    """Exact micro F1 of ``_rows(k)``: tp = k + 1, fp = fn = 1."""
    tp = k + 1
    return Fraction(2 * tp, 2 * tp + 2)


def _close(got: float, exact: Fraction) -> bool:
    return abs(Fraction(got) - exact) <= 1e-12 * exact


def _calls(con: Any, k: int) -> dict[str, bool]:
    """Each mlsql function on thread ``k``'s data: whether it gave thread k's exact numbers."""
    data, table = _rows(k), f"t{k}"
    labels = mlsql.label_metrics(con, table, "y", "p").select("label, tp, fp, fn").fetchall()
    report = mlsql.multilabel_report(con, data, "y", "p").select("n_rows, micro_f1").fetchall()
    boot = mlsql.bootstrap(table, "y", "p", ["micro_f1"], n_resamples=20, con=con).fetchall()
    text = mlsql.report(table, "y", "p", con=con)
    return {
        "label_metrics": labels == [("a", k + 1, 0, 1), ("b", 0, 1, 0)],
        "multilabel_report": report[0][0] == k + 2 and _close(report[0][1], _micro_f1(k)),
        "bootstrap": boot[0][0] == "micro_f1" and _close(boot[0][1], _micro_f1(k)),
        "report": _close(text.summary[0]["micro_f1"], _micro_f1(k)),
    }


def _in_threads(work: Callable[[int], None]) -> list[str]:
    """Run ``work(k)`` in THREADS threads started together; the exceptions they raised."""
    start = threading.Barrier(THREADS)
    failures: list[str] = []

    def run(k: int) -> None:
        start.wait()
        try:
            work(k)
        except Exception as exc:  # reported by the test
            failures.append(f"thread {k}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=run, args=(k,)) for k in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures


def _hammer(con: Any) -> list[str]:
    """Every thread calls every function ITERATIONS times on the shared ``con``: what went wrong."""
    for k in range(THREADS):
        con.register("_rows_k", _rows(k))
        con.execute(f"CREATE TABLE t{k} AS SELECT * FROM _rows_k")
        con.unregister("_rows_k")
    wrong: list[str] = []

    def work(k: int) -> None:
        for i in range(ITERATIONS):
            bad = sorted(name for name, right in _calls(con, k).items() if not right)
            if bad:
                wrong.append(f"thread {k}, iteration {i}: {bad}")

    return _in_threads(work) + wrong


@pytest.mark.long
def test_threads_sharing_an_in_memory_connection_get_their_own_results() -> None:
    with mlsql.connect() as con:
        assert _hammer(con) == []


@pytest.mark.long
def test_threads_sharing_a_database_file_connection_get_their_own_results(tmp_path: Path) -> None:
    # a database file gets TEMP macros, which a cursor does not see: each thread's has its own
    with mlsql.connect(str(tmp_path / "x.db")) as con:
        assert _hammer(con) == []


def test_connect_returns_a_duckdb_connection_that_duckdb_and_polars_take() -> None:
    import polars as pl

    con = mlsql.connect()
    assert type(con) is duckdb.DuckDBPyConnection
    query = "SELECT micro_f1(['a', 'b'], ['a']) AS f"
    assert duckdb.execute(query, connection=con).fetchall() == [(2 / 3,)]
    assert duckdb.sql(query, connection=con).fetchall() == [(2 / 3,)]
    assert pl.read_database(query, con).to_dicts() == [{"f": 2 / 3}]
    con.close()


def test_connect_returns_a_connection_ibis_takes() -> None:
    ibis = pytest.importorskip("ibis")
    con = mlsql.connect()
    backend = ibis.duckdb.from_connection(con)
    assert backend.raw_sql("SELECT micro_f1(['a', 'b'], ['a'])").fetchall() == [(2 / 3,)]
    con.close()


def test_the_opening_thread_works_on_the_connection_itself() -> None:
    # its TEMP objects and registered frames are read, its relations join its tables
    from mlsql._duckdb.threads import in_this_thread

    con = mlsql.connect()
    assert in_this_thread(con) is con
    con.register("preds", _rows(0))
    con.execute("CREATE TEMP TABLE tmp AS SELECT * FROM preds")
    for source in ("preds", "tmp"):
        rows = mlsql.label_metrics(con, source, "y", "p").select("label, tp").fetchall()
        assert rows == [("a", 1), ("b", 0)]
    labels = mlsql.label_metrics(con, "tmp", "y", "p")  # noqa: F841 (read by name below)
    assert con.sql("SELECT count(*) FROM labels JOIN tmp ON true").fetchall() == [(4,)]
    con.close()


def test_another_thread_reads_the_database_not_the_connections_temp_objects() -> None:
    # its own cursor sees the tables of the database, not the TEMP ones of the connection
    from mlsql._duckdb.threads import in_this_thread

    con = mlsql.connect()
    con.register("preds", _rows(0))
    con.execute("CREATE TABLE stored AS SELECT * FROM preds")
    seen: list[Any] = []

    def work(k: int) -> None:
        assert in_this_thread(con) is in_this_thread(con) is not con  # one cursor per thread
        seen.append(mlsql.label_metrics(con, "stored", "y", "p").select("label, tp").fetchall())
        with pytest.raises(mlsql.MlsqlError, match="cannot read the table or view 'preds'"):
            mlsql.label_metrics(con, "preds", "y", "p")

    assert _in_threads(work) == []
    assert seen == [[("a", 1), ("b", 0)]] * THREADS
    con.close()


def test_a_relation_returned_in_a_thread_stays_readable_there() -> None:
    # DuckDB 1.x closes a cursor's relations with the cursor: the thread's cursor is kept
    con = mlsql.connect()
    got: list[Any] = []

    def work(k: int) -> None:
        rel = mlsql.multilabel_report(con, _rows(k), "y", "p")
        mlsql.label_metrics(con, _rows(k), "y", "p").fetchall()
        got.append((k, rel.select("n_rows").fetchall()))

    assert _in_threads(work) == []
    assert sorted(got) == [(k, [(k + 2,)]) for k in range(THREADS)]
    con.close()
