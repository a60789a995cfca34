"""The agreement family of the PostgreSQL library on a live server: Fleiss' kappa and
Cochran's Q.

Every aggregate against statsmodels (tests/references.py: ``fleiss_kappa`` of
``aggregate_raters``' table, ``cochrans_q``) on the random tables of ratings (text and
integer labels, NULL rows and elements, every rating of one category) and of outcomes
(booleans and 0/1, incomplete rows, all right or all wrong), all rows unknown and no rows;
weights as repeated rows; and DuckDB's texts for rows of different widths, values that are
not 0/1 and inputs that are not lists.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from mlsql._postgres.library import included
from mlsql._registry import Measure, measures
from tests.references import REFERENCES
from tests.test_postgres_library import (
    check_references,
    check_same_error,
    check_weights_repeat_rows,
    library_database,
)

psycopg = pytest.importorskip("psycopg")

MEASURES = [m for m in measures(family="agreement") if included(m)]
#: each list element type of the random tables, as PostgreSQL holds it
ELEMENTS = {pa.string(): "text", pa.int64(): "bigint", pa.bool_(): "boolean", pa.int8(): "smallint"}


@pytest.fixture(scope="module")
def pg(pg_server: Any) -> Iterator[Any]:
    yield from library_database(pg_server, "mlsql_agreement")


def load(con: Any, table: pa.Table, weights: list[Any] | None = None) -> None:
    """The table's one list column as the temporary table t (x, w)."""
    column = table.column_names[0]
    element = ELEMENTS[table.schema.field(column).type.value_type]
    con.execute("DROP TABLE IF EXISTS t")
    con.execute(f"CREATE TEMP TABLE t (x {element}[], w float8)")
    weights = weights or [1.0] * table.num_rows
    with con.cursor() as cur:
        cur.executemany(
            f"INSERT INTO t VALUES (%s::{element}[], %s::float8)",
            list(zip(table[column].to_pylist(), weights, strict=True)),
        )


def call(m: Measure, params: dict[str, Any], table: Any = None, weight: str | None = None) -> Any:
    return f"{m.name}(x{', ' + weight if weight else ''})", []


def test_the_library_holds_the_agreement_family() -> None:
    assert {m.name for m in MEASURES} == {m.name for m in measures(family="agreement")}


@pytest.mark.parametrize("kind", ["ratings", "outcomes"])
def test_measures_match_their_reference(pg: Any, kind: str) -> None:
    """Every aggregate against statsmodels on the random tables of its kind."""
    family = [m for m in MEASURES if REFERENCES[m.name].data == kind]
    check_references(pg, family, kind, 10, load, call)


@pytest.mark.parametrize("kind", ["ratings", "outcomes"])
def test_weights_count_as_repeated_rows(pg: Any, kind: str) -> None:
    family = [m for m in MEASURES if REFERENCES[m.name].data == kind]
    check_weights_repeat_rows(pg, family, kind, load, f"pg-agreement-{kind}", call)


BAD_CALLS = [
    ("fleiss_kappa(x)", "(ARRAY['a', 'b']), (ARRAY['a'])"),
    ("cochrans_q_statistic(x)", "(ARRAY[1, 0]), (ARRAY[1, 0, 1])"),
    ("cochrans_q_p_value(x)", "(ARRAY[1, 2])"),
    ("cochrans_q_statistic(x)", "(ARRAY['a', 'b'])"),
    ("cochrans_q_statistic(x)", "(ARRAY[1.0, 0.0])"),
    ("fleiss_kappa(x)", "(1)"),
    ("fleiss_kappa(x)", "(ARRAY[1.0, 2.0]), (ARRAY[1.0, 1.0])"),
    ("fleiss_kappa(x)", "(ARRAY[true, false]), (ARRAY[true, true])"),
    ("cochrans_q_statistic(x, w)", "(ARRAY[1, 0], -1.0)"),
]


@pytest.mark.parametrize(("pg_call", "rows"), BAD_CALLS)
def test_errors_say_what_duckdb_says(pg: Any, duck: Any, pg_call: str, rows: str) -> None:
    columns = "v(x, w)" if ", w)" in pg_call else "v(x)"
    duck_rows = rows.replace("ARRAY[", "[")
    check_same_error(
        pg,
        f"SELECT {pg_call} FROM (VALUES {rows}) {columns}",
        duck,
        f"SELECT {pg_call} FROM (VALUES {duck_rows}) {columns}",
        {
            "VARCHAR[].": "text[].",
            "DECIMAL(2,1)[].": "numeric[].",
            "INTEGER.": "integer.",
            "BOOLEAN[].": "boolean[].",
        },
    )
