"""The regression family of the PostgreSQL library on a live server.

Every regression aggregate of the registry against its reference (tests/references.py:
the plain-Python oracle in exact fractions) on the random tables of numbers, weights as
repeated rows, precision far from zero against exact fractions, Hivemall's argument order,
and the errors as DuckDB words them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pyarrow as pa
import pytest

from mlsql._postgres import regression
from mlsql._postgres.library import included
from mlsql._registry import Measure, measures
from tests.references import REFERENCES
from tests.test_postgres_library import (
    aggregate_call,
    check_references,
    check_same_error,
    check_weights_repeat_rows,
    library_database,
    select,
)

psycopg = pytest.importorskip("psycopg")

#: the regression aggregates the library holds, by the registry
MEASURES = [m for m in measures(family="regression") if included(m)]


@pytest.fixture(scope="module")
def pg(pg_server: Any) -> Iterator[Any]:
    yield from library_database(pg_server, "mlsql_regression")


def load(con: Any, table: pa.Table, weights: list[Any] | None = None) -> None:
    """``table`` as the temporary table t (actual, predicted, w)."""
    con.execute("DROP TABLE IF EXISTS t")
    con.execute("CREATE TEMP TABLE t (actual float8, predicted float8, w float8)")
    weights = weights or [1.0] * table.num_rows
    columns = [table[c].to_pylist() for c in ("actual", "predicted")]
    with con.cursor() as cur:
        cur.executemany(
            "INSERT INTO t VALUES (%s, %s, %s)", list(zip(*columns, weights, strict=True))
        )


def call(m: Measure, params: dict[str, Any], table: Any = None, weight: str | None = None) -> Any:
    """``m`` called as :func:`tests.test_postgres_library.aggregate_call` calls it, its
    inputs in the measure's order (``hivemall_r2(predicted, actual)``)."""
    text, values = aggregate_call(m, params, table, weight)
    if m.inputs == ("predicted", "actual"):
        text = text.replace("(actual, predicted", "(predicted, actual", 1)
    return text, values


def test_the_library_holds_the_regression_aggregates() -> None:
    """Every regression aggregate of the registry but rae (no one-pass bounded form)."""
    names = {m.name for m in MEASURES}
    aggregates = {m.name for m in measures(family="regression") if m.kind == "aggregate"}
    assert names == aggregates - {"rae"} == aggregates - set(regression.LEFT_OUT)
    assert all(m.name in REFERENCES for m in MEASURES)


def test_measures_match_their_reference(pg: Any) -> None:
    """Every aggregate with every parameter set of its reference on the random tables of
    numbers with NULL rows, all rows unknown, and no rows."""
    check_references(pg, MEASURES, "numbers", 8, load, call)


def test_weights_count_as_repeated_rows(pg: Any) -> None:
    """A whole sample_weight (some 0, some NULL: the row left out) gives the reference's
    value over the rows repeated that many times."""
    check_weights_repeat_rows(pg, MEASURES, "numbers", load, "pg-regression-weights", call)


def _exact(y: list[float], p: list[float], w: list[float]) -> dict[str, Fraction]:
    """mse, r2, explained variance and Pearson's r² as exact fractions of the float inputs."""
    ws, ys, ps = ([Fraction(v) for v in xs] for xs in (w, y, p))
    n = sum(ws)

    def mean(xs: list[Fraction]) -> Fraction:
        return sum((a * b for a, b in zip(ws, xs, strict=True)), Fraction(0)) / n

    def comoment(xs: list[Fraction], zs: list[Fraction]) -> Fraction:
        mx, mz = mean(xs), mean(zs)
        return mean([(a - mx) * (b - mz) for a, b in zip(xs, zs, strict=True)])

    e = [a - b for a, b in zip(ys, ps, strict=True)]
    var_y = comoment(ys, ys)
    return {
        "mse": mean([x * x for x in e]),
        "r2": 1 - mean([x * x for x in e]) / var_y,
        "explained_variance": 1 - comoment(e, e) / var_y,
        "pearson_corr_squared": comoment(ys, ps) ** 2 / (var_y * comoment(ps, ps)),
    }


@pytest.mark.parametrize("offset", [1e9, 1e12])
def test_far_from_zero(pg: Any, offset: float) -> None:
    """Values near 1e9 and 1e12 (where Σy² - (Σy)²/n loses every digit): within 1e-12 of the
    exact values, plain and weighted."""
    rng = random.Random(f"pg-offset-{offset}")
    y = [offset + rng.randint(0, 1000) / 8 for _ in range(300)]
    p = [v + rng.randint(-40, 40) / 8 for v in y]
    w = [rng.randint(1, 5) / 4 for _ in y]
    load(pg, pa.table({"actual": y, "predicted": p}), w)
    for weight, weights in ((None, [1.0] * len(y)), ("w", w)):
        names = ("mse", "r2", "explained_variance", "pearson_corr")
        calls = [call(next(m for m in MEASURES if m.name == n), {}, weight=weight) for n in names]
        got = dict(zip(names, select(pg, calls), strict=True))
        want = _exact(y, p, weights)
        got["pearson_corr_squared"] = got.pop("pearson_corr") ** 2
        for name, value in want.items():
            assert got[name] == pytest.approx(float(value), rel=1e-12), (name, weight)


BAD_CALLS = [
    (
        "mse(actual, predicted + 'NaN'::float8)",
        "mse(actual, predicted + 'nan'::DOUBLE)",
    ),
    ("r2(actual + 'Infinity'::float8, predicted)", "r2(actual + 'inf'::DOUBLE, predicted)"),
    ("mae(actual, '-Infinity'::float8)", "mae(actual, '-inf'::DOUBLE)"),
    ("mse(actual, predicted::text)", "mse(actual, predicted::VARCHAR)"),
    ("r2(actual, predicted, 1, 'often')", "r2(actual, predicted, zero_division := 'often')"),
    ("mse(actual, predicted, -1)", "mse(actual, predicted, sample_weight := -1)"),
]


@pytest.mark.parametrize(("pg_call", "duckdb_call"), BAD_CALLS)
def test_errors_say_what_duckdb_says(pg: Any, duck: Any, pg_call: str, duckdb_call: str) -> None:
    table = "(VALUES (1.0, 2.0), (2.0, 2.5)) v(actual, predicted)"
    check_same_error(
        pg,
        f"SELECT {pg_call} FROM {table}",
        duck,
        f"SELECT {duckdb_call} FROM {table}",
        {"VARCHAR": "text"},
    )


@pytest.mark.parametrize("typed", ["float8", "numeric"])
def test_a_row_with_a_null_side_is_skipped_unchecked(pg: Any, typed: str) -> None:
    """The semantics guide's rule, as DuckDB, Polars and Spark follow it: a NaN or infinite
    value beside a NULL is not checked (PostgreSQL refused the NaN)."""
    rows = f"(VALUES (NULL::{typed}, 'NaN'::{typed}), ('Infinity'::float8::{typed}, NULL), (2, 2))"
    names = ["mse", "mae", "r2", "pearson_corr"]
    got = pg.execute(
        f"SELECT {', '.join(f'{n}(a, p)' for n in names)} FROM {rows} v(a, p)"
    ).fetchone()
    # one known row (2, 2): error 0; no spread of y, so r2 and pearson_corr are undefined:
    # zero_division's default, 0
    assert got == (0.0, 0.0, 0.0, 0.0)


def test_group_by_model_and_hivemall_s_order(pg: Any) -> None:
    """One value per model, from its own rows; hivemall_r2 takes (predicted, actual);
    integer and numeric columns."""
    pg.execute("DROP TABLE IF EXISTS preds")
    pg.execute("CREATE TEMP TABLE preds (model text, actual int, predicted numeric)")
    pg.execute(
        "INSERT INTO preds VALUES ('m1', 1, 2), ('m1', 2, 2.5), ('m1', 4, 3), ('m1', NULL, 1),"
        " ('m2', 1, 1), ('m2', 3, 2)"
    )
    got = pg.execute(
        "SELECT model, mse(actual, predicted), r2(actual, predicted),"
        " hivemall_r2(predicted, actual) FROM preds GROUP BY model ORDER BY model"
    ).fetchall()
    # m1: errors -1, -0.5, 1: mse 2.25/3; mean y 7/3, Σ(y - ȳ)² = 14/3: r2 = 1 - 2.25/(14/3)
    # m2: errors 0, 1: mse 1/2; Σ(y - ȳ)² = 2: r2 = 1 - 1/2
    r2_m1 = 1 - 2.25 / (14 / 3)
    assert got == [
        (
            "m1",
            pytest.approx(0.75, rel=1e-15),
            pytest.approx(r2_m1, rel=1e-14),
            pytest.approx(r2_m1, rel=1e-14),
        ),
        ("m2", 0.5, 0.5, 0.5),
    ]
