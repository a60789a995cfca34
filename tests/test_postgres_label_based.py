"""The label-based averages of the PostgreSQL library on a live server: ``macro_f1``,
``weighted_recall``, ``clp``, ... as aggregates.

Every one of them against its reference (tests/references.py: the plain-Python report
of tests/oracle_labels.py) with every parameter set (``labels`` among them) on the random
label-list tables, weights as repeated rows, the mldr example's macro numbers, and the
errors as DuckDB words them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import duckdb
import pyarrow as pa
import pytest

import mlsql
from mlsql._postgres.library import included
from mlsql._registry import Measure, measures
from tests.references import REFERENCES
from tests.test_label_conformance import FILES, cases, close, rows_of
from tests.test_postgres_library import (
    check_references,
    check_same_error,
    check_weights_repeat_rows,
    library_database,
    load,
)

psycopg = pytest.importorskip("psycopg")

#: the label averages the library holds as aggregates (the indicator helpers: their own test)
MEASURES = [m for m in measures(family="label_based") if included(m) and m.kind != "row"]


@pytest.fixture(scope="module")
def pg(pg_server: Any) -> Iterator[Any]:
    yield from library_database(pg_server, "mlsql_label_based")


def call(m: Measure, params: dict[str, Any], table: pa.Table, weight: str | None) -> Any:
    """``m`` called positionally as DuckDB's aggregate: sample_weight (1 where only
    parameters follow), then labels, beta and zero_division up to the last one given."""
    integers = pa.types.is_integer(table.schema.field("actual").type.value_type)
    kinds = {"labels": "bigint[]" if integers else "text[]", "beta": "float8"}
    optional = [p for p in m.params if p.name != "by"]
    last = max((i for i, p in enumerate(optional) if p.name in params), default=-1)
    args, values = ["actual", "predicted"], []
    if weight is not None or last >= 0:
        args.append(weight or "1")
    for p in optional[: last + 1]:
        value = params.get(p.name, p.default)
        kind = kinds.get(p.name, "text" if isinstance(value, str) else "float8")
        args.append(f"%s::{kind}")
        values.append(value)
    return f"{m.name}({', '.join(args)})", values


def test_the_library_holds_the_label_averages() -> None:
    """Every average the registry offers on its own (DuckDB's aggregates of the same names),
    each with a reference."""
    assert {m.name for m in MEASURES} == set(mlsql.measures.label_based.STANDALONE)
    assert len(MEASURES) == 17 and all(m.name in REFERENCES for m in MEASURES)


def test_conformance_numbers(pg: Any) -> None:
    """Hivemall's blog tags, mldr's example and the R walkthrough: every macro, weighted,
    label-accuracy and label-problem (CLP, MLP, WLP) figure under each zero_division the
    files give."""
    by_name = {m.name: m for m in MEASURES}
    wrong, checked = [], 0
    for file in FILES:
        table = pa.table(
            {"actual": [a for a, _ in rows_of(file)], "predicted": [p for _, p in rows_of(file)]}
        )
        load(pg, table)
        for f, key, column, params, want in cases():
            if f != file or column not in by_name:
                continue
            text, values = call(by_name[column], params, table, None)
            got = pg.execute(f"SELECT {text} FROM t", values).fetchone()[0]
            checked += 1
            if not close(got, want):
                wrong.append(f"{file} {key}: {got} != {want}")
    assert checked > 40 and not wrong, "\n".join(wrong)


def test_measures_match_their_reference(pg: Any) -> None:
    check_references(pg, MEASURES, "label_lists", 6, load, call)


def test_weights_count_as_repeated_rows(pg: Any) -> None:
    """A whole sample_weight (some 0 or NULL: the row left out, its labels too) gives the
    reference's value over the rows repeated that many times."""
    check_weights_repeat_rows(pg, MEASURES, "label_lists", load, "pg-label-weights", call, seeds=5)


def test_zero_weights_are_duckdb_s(pg: Any) -> None:
    """A row of weight 0 whose labels occur nowhere else, and all rows of weight 0."""
    rows = [(["a", "b"], ["a"], 1.0), (["z"], ["y"], 0.0), (["b"], [], 2.0)]
    duck = duckdb.connect()
    mlsql.register(duck)
    for chosen in (rows, [(a, p, 0.0) for a, p, _ in rows]):
        table = pa.table({"actual": [r[0] for r in chosen], "predicted": [r[1] for r in chosen]})
        load(pg, table, [r[2] for r in chosen])
        duck.register("src", table.append_column("w", pa.array([r[2] for r in chosen])))
        duck.execute("CREATE OR REPLACE TABLE t AS SELECT * FROM src")
        for m in MEASURES:
            text, values = call(m, {}, table, "w")
            got = pg.execute(f"SELECT {text} FROM t", values).fetchone()[0]
            want = duck.execute(
                f"SELECT {m.name}(actual, predicted, sample_weight := w) FROM t"
            ).fetchall()[0][0]
            assert got == pytest.approx(want, nan_ok=True) if want is not None else got is None, (
                m.name
            )


BAD_CALLS = [
    (
        "macro_f1(actual, predicted, 1, ARRAY[NULL]::text[])",
        "macro_f1(actual, predicted, labels := [NULL]::VARCHAR[])",
    ),
    ("macro_fbeta(actual, predicted, 1, NULL, -1)", "macro_fbeta(actual, predicted, beta := -1)"),
    (
        "clp(actual, predicted, 1, NULL, 'often')",
        "clp(actual, predicted, zero_division := 'often')",
    ),
    ("weighted_f1(actual, predicted, -1)", "weighted_f1(actual, predicted, sample_weight := -1)"),
    ("macro_f1(actual, ARRAY[1])", "macro_f1(actual, [1])"),
    (
        "clp(ARRAY[1], predicted, 1, ARRAY[1], 'ignore')",
        "clp([1], predicted, labels := [1], zero_division := 'ignore')",
    ),
]
#: DuckDB's names of the list types, as PostgreSQL names them
TYPE_NAMES = {"VARCHAR[]": "text[]", "INTEGER[]": "bigint[]", "BIGINT[]": "bigint[]"}


@pytest.mark.parametrize(("pg_call", "duckdb_call"), BAD_CALLS)
def test_errors_say_what_duckdb_says(pg: Any, duck: Any, pg_call: str, duckdb_call: str) -> None:
    pg_rows = "(VALUES (ARRAY['a'], ARRAY['a', 'b'])) v(actual, predicted)"
    duck_rows = "(VALUES (['a'], ['a', 'b'])) v(actual, predicted)"
    check_same_error(
        pg,
        f"SELECT {pg_call} FROM {pg_rows}",
        duck,
        f"SELECT {duckdb_call} FROM {duck_rows}",
        TYPE_NAMES,
    )


def test_group_by_model(pg: Any) -> None:
    """One value per model from its own labels: m1's labels a (tp 1), b (fn 1): macro F1 1/2;
    m2's c (tp 1), d (fp 1): 1/2, and its weighted F1 weighs c by its support 1, d by 0."""
    pg.execute("DROP TABLE IF EXISTS preds")
    pg.execute("CREATE TEMP TABLE preds (model text, actual int[], predicted int[])")
    pg.execute(
        "INSERT INTO preds VALUES ('m1', '{1,2}', '{1}'), ('m2', '{3}', '{3,4}'), ('m2', NULL, '{1}')"
    )
    got = pg.execute(
        "SELECT model, macro_f1(actual, predicted), weighted_f1(actual, predicted) FROM preds"
        " GROUP BY model ORDER BY model"
    ).fetchall()
    assert got == [("m1", 0.5, pytest.approx(0.5)), ("m2", 0.5, 1.0)]
