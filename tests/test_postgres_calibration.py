"""calibration_table of the PostgreSQL library on a live server: the uniform bins against
the oracle and scikit-learn's calibration_curve (and their ECE against the library's
expected_calibration_error), the quantile bins against calibration_curve(strategy=
'quantile') with numpy's edges to the bit, weights against the DuckDB engine, and DuckDB's
texts for bad input."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from tests.test_postgres_library import check_same_error, library_database
from tests.test_thresholds import (
    CAL_COLUMNS,
    _probabilities,
    _quantile_want,
    _rows,
    _same,
    _tied_probabilities,
    check_uniform_bins,
)

psycopg = pytest.importorskip("psycopg")


@pytest.fixture(scope="module")
def pg(pg_server: Any) -> Iterator[Any]:
    yield from library_database(pg_server, "mlsql_calibration")


def load(con: Any, table: pa.Table) -> None:
    con.execute("DROP TABLE IF EXISTS t")
    con.execute("CREATE TABLE t (actual bigint, prob float8, w float8)")
    w = table["w"].to_pylist() if "w" in table.column_names else [1.0] * table.num_rows
    rows = zip(table["actual"].to_pylist(), table["prob"].to_pylist(), w, strict=True)
    with con.cursor() as cur:
        cur.executemany("INSERT INTO t VALUES (%s, %s, %s::float8)", list(rows))


def table_rows(pg: Any, **params: Any) -> list[dict[str, Any]]:
    named = "".join(f", {k} => %s" for k in params)
    out = pg.execute(
        f"SELECT * FROM calibration_table('t', 'actual', 'prob'{named})", list(params.values())
    )
    return _rows(out.fetchall(), CAL_COLUMNS)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n_bins", [1, 7, 10])
def test_uniform_bins_are_sklearns_curve_and_its_ece(pg: Any, seed: int, n_bins: int) -> None:
    t = _probabilities(seed)
    load(pg, t)
    ece = pg.execute(
        "SELECT expected_calibration_error(actual, prob, 1, %s) FROM t", [n_bins]
    ).fetchone()[0]
    check_uniform_bins(table_rows(pg, n_bins=n_bins), t, n_bins, ece)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n_bins", [1, 4, 6, 10])
def test_quantile_bins_are_sklearns_curve(pg: Any, seed: int, n_bins: int) -> None:
    """Bins, counts and means are calibration_curve(strategy='quantile')'s, low and high
    numpy's edges to the bit (ties and equal edges; 6 bins: levels numpy rounds)."""
    t = _tied_probabilities(seed)
    load(pg, t)
    got = table_rows(pg, n_bins=n_bins, strategy="quantile")
    rows = [
        (y, p)
        for y, p in zip(t["actual"].to_pylist(), t["prob"].to_pylist(), strict=True)
        if y is not None
    ]
    want = _quantile_want(*zip(*rows, strict=True), n_bins)
    _same(got, want)
    for r, w in zip(got, want, strict=True):
        assert (r["bin"], r["low"], r["high"]) == (w["bin"], w["low"], w["high"])


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_weights_are_the_duckdb_engine_s(pg: Any, duck: Any, strategy: str) -> None:
    """Weights 0, fractions and NULL: the DuckDB engine's rows."""
    t = _probabilities(4)
    rng = np.random.default_rng(4)
    w = [
        None if i % 11 == 0 else float(x)
        for i, x in enumerate(rng.choice([0.0, 0.5, 1.0, 2.0], t.num_rows))
    ]
    t = t.append_column("w", pa.array(w, pa.float64()))
    load(pg, t)
    got = table_rows(pg, sample_weight="w", n_bins=5, strategy=strategy)
    duck.register("weighted", t)
    want = duck.execute(
        "SELECT * FROM calibration_table('weighted', 'actual', 'prob', sample_weight := 'w',"
        " n_bins := 5, strategy := ?)",
        [strategy],
    ).fetchall()
    _same(got, _rows(want, CAL_COLUMNS))


BAD_CALLS = [
    ("calibration_table('t', 'actual', 'prob', strategy => 'often')", "(1, 0.5)"),
    ("calibration_table('t', 'actual', 'prob', n_bins => 0)", "(1, 0.5)"),
    ("calibration_table('t', 'actual', 'prob', n_bins => 10.0)", "(1, 0.5)"),
    ("calibration_table('t', 'actual', 'prob', n_bins => 2.5)", "(1, 0.5)"),
    ("calibration_table('t', 'actual', 'prob')", "(1, 1.5)"),
    ("calibration_table('t', 'actual', 'prob')", "(2, 0.5)"),
    ("calibration_table('t', 'actual', 'prob', strategy => 'quantile')", "(1, -0.5)"),
]


@pytest.mark.parametrize(("call", "row"), BAD_CALLS)
def test_errors_say_what_duckdb_says(pg: Any, duck: Any, call: str, row: str) -> None:
    make = f"SELECT * FROM (VALUES {row}) v(actual, prob)"
    pg.execute("DROP TABLE IF EXISTS t")
    pg.execute(f"CREATE TABLE t AS {make}")
    duck.execute(f"CREATE OR REPLACE TABLE t AS {make}")
    duck_call = call.replace(" => ", " := ")
    check_same_error(pg, f"SELECT * FROM {call}", duck, f"SELECT * FROM {duck_call}")
