"""The score curves of the PostgreSQL library on a live server, against scikit-learn.

``roc_curve`` (every point, and ``drop_intermediate``), ``precision_recall_curve``,
``det_curve`` and ``confusion_matrix_at_thresholds`` on the random tables of the engines'
curve tests (ties, -0.0 beside 0.0, NULL labels and scores), unweighted and with whole
weights (0 and NULL among them); single-class data under each ``zero_division`` against
the DuckDB engine; hostile table and column names; and DuckDB's texts for bad input.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from mlsql._postgres.curves import ROW_TYPES
from mlsql._postgres.library import missing
from mlsql.measures import curves as CV
from tests.test_confusion_at_thresholds import sklearn_counts
from tests.test_curves import known, same, sklearn_points
from tests.test_curves_drop import sklearn_dropped, weighted_table
from tests.test_det_curve import sklearn_det
from tests.test_postgres_library import check_same_error, library_database

psycopg = pytest.importorskip("psycopg")
NAN = float("nan")


@pytest.fixture(scope="module")
def pg(pg_server: Any) -> Iterator[Any]:
    yield from library_database(pg_server, "mlsql_curves")


def load(con: Any, table: pa.Table, name: str = "t") -> None:
    """``table``'s y, s (and w) as the table ``name`` (quoted: any name)."""
    quoted = '"' + name.replace('"', '""') + '"'
    con.execute(f"DROP TABLE IF EXISTS {quoted}")
    con.execute(f"CREATE TABLE {quoted} (y bigint, s float8, w float8)")
    w = table["w"].to_pylist() if "w" in table.column_names else [1.0] * table.num_rows
    with con.cursor() as cur:
        cur.executemany(
            f"INSERT INTO {quoted} VALUES (%s, %s, %s::float8)",
            list(zip(table["y"].to_pylist(), table["s"].to_pylist(), w, strict=True)),
        )


def curve(pg: Any, name: str, weighted: bool = False, **params: Any) -> list[tuple[Any, ...]]:
    args = ["'t'", "'y'", "'s'", *(["sample_weight => 'w'"] if weighted else [])]
    args += [f"{k} => %s" for k in params]
    return pg.execute(f"SELECT * FROM {name}({', '.join(args)})", list(params.values())).fetchall()


def test_the_library_holds_the_curves() -> None:
    assert set(ROW_TYPES) == set(CV.COLUMNS)
    assert not set(CV.COLUMNS) & set(missing())


REFERENCES = {
    "roc_curve": lambda y, s, w: sklearn_points("roc_curve", y, s) if w is None else None,
    "precision_recall_curve": lambda y, s, w: (
        sklearn_points("precision_recall_curve", y, s) if w is None else None
    ),
    "det_curve": sklearn_det,
    "confusion_matrix_at_thresholds": sklearn_counts,
}


@pytest.mark.parametrize("name", list(CV.COLUMNS))
def test_curves_equal_scikit_learn_on_random_data_with_ties(pg: Any, name: str) -> None:
    """Every point of each curve (DET: scikit-learn's trimmed ones) on tables with ties,
    unweighted; DET and the counts with whole weights too."""
    checked = 0
    for seed in range(8):
        table = weighted_table(seed)
        load(pg, table)
        y, s = known(table)
        if not y or not 0 < sum(y) < len(y):  # scikit-learn refuses a single class
            continue
        zd = {} if name in CV.COUNTS else {"zero_division": NAN}
        assert same(curve(pg, name, **zd), REFERENCES[name](y, s, None)), (name, seed)
        rows = [r for r in table.to_pylist() if None not in (r["y"], r["s"], r["w"])]
        kept = [r for r in rows if r["w"] > 0]
        ky, ks, kw = ([r[c] for r in kept] for c in ("y", "s", "w"))
        want = REFERENCES[name](ky, ks, kw)
        if want is not None and 0 < sum(ky) < len(ky):
            assert same(curve(pg, name, weighted=True, **zd), want), (name, seed)
        checked += 1
    assert checked >= 4


def test_roc_curve_drops_as_scikit_learn_does(pg: Any) -> None:
    """drop_intermediate: scikit-learn's default points, unweighted and weighted."""
    for seed in range(8):
        table = weighted_table(seed)
        load(pg, table)
        y, s = known(table)
        if y and 0 < sum(y) < len(y):
            got = curve(pg, "roc_curve", drop_intermediate=True, zero_division=NAN)
            assert same(got, sklearn_dropped(y, s)), seed
        rows = [r for r in table.to_pylist() if None not in (r["y"], r["s"], r["w"])]
        kept = [r for r in rows if r["w"] > 0]
        ky = [r["y"] for r in kept]
        if ky and 0 < sum(ky) < len(ky):
            want = sklearn_dropped(ky, [r["s"] for r in kept], [r["w"] for r in kept])
            got = curve(pg, "roc_curve", True, drop_intermediate=True, zero_division=NAN)
            assert same(got, want), seed


@pytest.mark.parametrize("zero_division", [0, 1, NAN, "diagnose", "ignore"])
@pytest.mark.parametrize("label", [0, 1])
def test_single_class_data_follows_zero_division(
    pg: Any, duck: Any, label: int, zero_division: Any
) -> None:
    """One class only: the undefined rate is zero_division, as the DuckDB engine gives it;
    every curve, dropped or not."""
    table = pa.table({"y": [label] * 4, "s": [0.2, 0.5, 0.5, 0.9]})
    load(pg, table)
    duck.register("single", table)
    duck.execute("CREATE OR REPLACE TABLE t AS SELECT * FROM single")
    for name in CV.DROPS:
        for di in (False, True):
            got = curve(pg, name, zero_division=zero_division, drop_intermediate=di)
            want = duck.execute(
                f"SELECT * FROM {name}('t', 'y', 's', zero_division := ?, drop_intermediate := ?)",
                [zero_division, di],
            ).fetchall()
            assert same(got, [tuple(r) for r in want]), (name, di)


def test_rows_weighing_nothing_and_unknown_rows(pg: Any) -> None:
    """No known row: no rows; a threshold whose rows all weigh 0 has no row."""
    load(pg, pa.table({"y": pa.array([None, 1], pa.int64()), "s": [0.5, None]}))
    assert all(curve(pg, name) == [] for name in CV.COLUMNS)
    load(pg, pa.table({"y": [1, 0, 1], "s": [0.9, 0.5, 0.1], "w": [1.0, 0.0, 2.0]}))
    got = curve(pg, "confusion_matrix_at_thresholds", weighted=True)
    assert got == [(0.9, 0.0, 0.0, 2.0, 1.0), (0.1, 0.0, 0.0, 0.0, 3.0)]


def test_hostile_names_are_names(pg: Any) -> None:
    """A table and columns named with quotes and SQL: read as names; nothing else runs."""
    pg.execute("DROP TABLE IF EXISTS keep")
    pg.execute("CREATE TABLE keep (x int)")
    table, label, score = 'q"; DROP TABLE keep; --', "y'); DROP TABLE keep; --", "s s"

    def quoted(name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    pg.execute(f"DROP TABLE IF EXISTS {quoted(table)}")
    pg.execute(f"CREATE TABLE {quoted(table)} ({quoted(label)} int, {quoted(score)} float8)")
    pg.execute(f"INSERT INTO {quoted(table)} VALUES (1, 0.9), (0, 0.4)")
    got = pg.execute("SELECT * FROM roc_curve(%s, %s, %s)", [quoted(table), label, score])
    assert [r[0] for r in got.fetchall()] == [math.inf, 0.9, 0.4]
    assert pg.execute("SELECT to_regclass('keep') IS NOT NULL").fetchone() == (True,)


BAD_CALLS = [
    ("roc_curve('t', 'y', 's')", "(2, 0.5)"),
    ("precision_recall_curve('t', 'y', 's')", "(1, 'NaN'::float8)"),
    ("det_curve('t', 'y', 's', zero_division => 'often')", "(1, 0.5)"),
    ("roc_curve('t', 'y', 's', drop_intermediate => NULL)", "(1, 0.5)"),
    ("confusion_matrix_at_thresholds('t', 'y', 's', sample_weight => 'w')", "(1, 0.5)"),
]


@pytest.mark.parametrize(("call", "row"), BAD_CALLS)
def test_errors_say_what_duckdb_says(pg: Any, duck: Any, call: str, row: str) -> None:
    weight = "-1.0" if "sample_weight" in call else "1.0"
    make = f"SELECT * FROM (VALUES {row[:-1]}, {weight})) v(y, s, w)"
    pg.execute("DROP TABLE IF EXISTS t")
    pg.execute(f"CREATE TABLE t AS {make}")
    duck.execute(f"CREATE OR REPLACE TABLE t AS {make.replace('::float8', '::DOUBLE')}")
    duck_call = call.replace(" => ", " := ")
    check_same_error(pg, f"SELECT * FROM {call}", duck, f"SELECT * FROM {duck_call}")


def test_every_row_s_weight_is_checked(pg: Any, duck: Any) -> None:
    """As DuckDB's tables: a negative weight fails the query on a row whose label is NULL."""
    make = "SELECT * FROM (VALUES (1, 0.5, 1.0), (NULL, 0.5, -1.0)) v(y, s, w)"
    pg.execute("DROP TABLE IF EXISTS t")
    pg.execute(f"CREATE TABLE t AS {make}")
    duck.execute(f"CREATE OR REPLACE TABLE t AS {make}")
    call = "roc_curve('t', 'y', 's', sample_weight => 'w')"
    check_same_error(
        pg, f"SELECT * FROM {call}", duck, f"SELECT * FROM {call.replace(' => ', ' := ')}"
    )
