"""The single-label family of the PostgreSQL library on a live server.

The lecture slides' numbers (ten rows, twenty animals), every single-label aggregate of
the registry against its reference (tests/references.py: the plain-Python oracle,
statsmodels for the kappa tests and Bowker's) on the random tables of text and integer
classes, weights as repeated rows, ``labels`` against scikit-learn, and the errors as
DuckDB words them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from mlsql._postgres import single_label
from mlsql._postgres.library import included
from mlsql._registry import Measure, measures
from tests.conftest import conformance
from tests.references import REFERENCES, close
from tests.test_postgres_library import (
    check_references,
    check_same_error,
    check_weights_repeat_rows,
    library_database,
)

psycopg = pytest.importorskip("psycopg")

#: the single-label aggregates the library holds, by the registry
MEASURES = [m for m in measures(family="single_label") if included(m)]


@pytest.fixture(scope="module")
def pg(pg_server: Any) -> Iterator[Any]:
    yield from library_database(pg_server, "mlsql_single_label")


def _element(table: pa.Table) -> str:
    return "bigint" if pa.types.is_integer(table.schema.field("actual").type) else "text"


def load(con: Any, table: pa.Table, weights: list[Any] | None = None) -> None:
    """``table`` as the temporary table t (actual, predicted, label, w)."""
    kind = _element(table)
    con.execute("DROP TABLE IF EXISTS t")
    con.execute(f"CREATE TEMP TABLE t (actual {kind}, predicted {kind}, label {kind}, w float8)")
    weights = weights or [1.0] * table.num_rows
    columns = [table[c].to_pylist() for c in ("actual", "predicted", "label")]
    with con.cursor() as cur:
        cur.executemany(
            "INSERT INTO t VALUES (%s, %s, %s, %s)", list(zip(*columns, weights, strict=True))
        )


def _value(name: str, value: Any, kind: str) -> tuple[str, Any]:
    """A placeholder typed as the library's overloads take the parameter, and its value."""
    if name == "zero_division":
        return ("%s::text" if isinstance(value, str) else "%s::float8"), value
    if name in ("average", "weights"):
        return "%s::text", value
    if name in ("label", "positive"):
        return f"%s::{kind}", value
    if name == "labels":
        return f"%s::{kind}[]", value
    return "%s::float8", value


def call(m: Measure, params: dict[str, Any], kind: str, weight: str | None = None) -> Any:
    """``m`` called positionally: its label parameter, then sample_weight (1 where only
    parameters follow), then the others up to the last one given."""
    inputs = ["label"] if m.name in single_label.ONE_COLUMN else ["actual", "predicted"]
    args, values = list(inputs), []
    required = [p for p in m.params if p.name in single_label.LABEL_PARAMS]
    optional = [p for p in m.params if p not in required]
    for p in required:
        text, v = _value(p.name, params[p.name], kind)
        args.append(text)
        values.append(v)
    last = max((i for i, p in enumerate(optional) if p.name in params), default=-1)
    if weight is not None or last >= 0:
        args.append(weight or "1")
    for p in optional[: last + 1]:
        text, v = _value(p.name, params.get(p.name, p.default), kind)
        args.append(text)
        values.append(v)
    return f"{m.name}({', '.join(args)})", values


def weighted(m: Measure, params: dict[str, Any], table: pa.Table, weight: str | None) -> Any:
    """:func:`call` over ``table``'s type of class, as the shared checks call it."""
    return call(m, params, _element(table), weight=weight)


def test_the_library_holds_the_single_label_aggregates() -> None:
    """Every single-label aggregate of the registry but the costs' (a map PostgreSQL has
    not); every one of them has a reference."""
    names = {m.name for m in MEASURES}
    aggregates = {m.name for m in measures(family="single_label") if m.kind == "aggregate"}
    assert names == aggregates - set(single_label.LEFT_OUT)
    assert {"cohen_kappa_p_value", "bowker_statistic", "majority_class"} <= names
    assert all(m.name in REFERENCES for m in MEASURES)


SLIDES = conformance("slides_single_label.json")
#: the slides' names -> the library's call over the example's rows
SLIDE_CALLS = {
    "error_rate": "error_rate(actual, predicted)",
    "accuracy": "accuracy(actual, predicted)",
    "kappa": "kappa(actual, predicted)",
    "majority_class": "majority_class(actual)",
    "minority_class": "minority_class(actual)",
    "majority_error": "majority_error(actual)",
}


@pytest.mark.parametrize("example", ["ten_rows", "animals"])
def test_the_lecture_s_single_label_numbers(pg: Any, example: str) -> None:
    """The slides' error rate, accuracy, kappa, majority and minority class and majority
    error; the class distribution's shares as prevalence of each class."""
    case = SLIDES[example]
    rows = list(zip(case["actual"], case["predicted"], strict=True))
    keys = [k for k in case["expected"] if k in SLIDE_CALLS]
    assert len(keys) == 6
    shares = case["expected"].get("class_distribution", {})
    calls = [SLIDE_CALLS[k] for k in keys]
    calls += [f"prevalence(actual, '{c}')" for c in shares]
    values = ", ".join("(%s, %s)" for _ in rows)
    flat = [x for r in rows for x in r]
    query = f"SELECT {', '.join(calls)} FROM (VALUES {values}) v(actual, predicted)"
    got = pg.execute(query, flat).fetchone()
    want = [case["expected"][k] for k in keys] + list(shares.values())
    wrong = [(c, g, w) for c, g, w in zip(calls, got, want, strict=True) if not close(g, w)]
    assert not wrong, wrong


def test_measures_match_their_reference(pg: Any) -> None:
    """Every aggregate with every parameter set of its reference on the random tables of
    text and integer classes with NULL rows, all rows unknown, and no rows."""
    check_references(pg, MEASURES, "classes", 6, load, weighted)


def test_weights_count_as_repeated_rows(pg: Any) -> None:
    """A whole sample_weight (some NULL: the row left out) gives the reference's value over
    the rows repeated that many times. A weight of 0 is not a row left out here: the class
    of such a row is still seen (DuckDB's, tested below)."""

    check_weights_repeat_rows(
        pg, MEASURES, "classes", load, "pg-single-weights", weighted, (1, 1, 2, 3, None), 5
    )


@pytest.mark.long  # 18 s on two cores: the README's run stays under ten minutes
def test_weights_of_zero_are_duckdb_s(pg: Any, duck: Any) -> None:
    """Rows of weight 0 (a class seen only there, all rows weighing 0): DuckDB's values."""
    rows = [("x", "x", 1.0), ("x", "y", 0.0), ("z", "z", 0.0), ("y", "x", 2.0), ("y", "y", 1.0)]
    for chosen in (rows, [(a, p, 0.0) for a, p, _ in rows]):
        table = pa.table(
            {
                "actual": [r[0] for r in chosen],
                "predicted": [r[1] for r in chosen],
                "label": [r[0] for r in chosen],
            }
        )
        load(pg, table, [r[2] for r in chosen])
        duck.execute(
            "CREATE OR REPLACE TABLE t (actual VARCHAR, predicted VARCHAR, label VARCHAR, w DOUBLE)"
        )
        duck.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", [(a, p, a, w) for a, p, w in chosen])
        for m in MEASURES:
            for params in REFERENCES[m.name].params_for(table):
                text, values = call(m, params, "text", weight="w")
                got = pg.execute(f"SELECT {text} FROM t", values).fetchone()[0]
                inputs = "label" if m.name in single_label.ONE_COLUMN else "actual, predicted"
                named = ", ".join(f"{k} := ?" for k in params)
                duck_call = f"{m.name}({inputs}, sample_weight := w{', ' + named if named else ''})"
                want = duck.execute(f"SELECT {duck_call} FROM t", list(params.values())).fetchone()[
                    0
                ]
                assert close(got, want), (m.name, params, chosen, got, want)


def test_kappa_over_given_labels_is_scikit_learn_s(pg: Any) -> None:
    """labels name the classes and their order (rows of another class left out) for plain,
    linear and quadratic kappa and the kappa tests: scikit-learn's kappa, and the tests
    equal to the same query over the rows of those classes with the labels' order."""
    metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random("pg-kappa-labels")
    for kind, pool, labels in (
        ("text", "abcd", ["c", "a", "b"]),
        ("bigint", [4, 1, 2, 3], [3, 1, 2]),
    ):
        rows = [(rng.choice(pool), rng.choice(pool)) for _ in range(40)]
        table = pa.table(
            {
                "actual": [a for a, _ in rows],
                "predicted": [p for _, p in rows],
                "label": [a for a, _ in rows],
            }
        )
        load(pg, table)
        for weights in (None, "linear", "quadratic"):
            got = pg.execute(
                f"SELECT cohen_kappa_score(actual, predicted, 1, %s::text, %s::{kind}[]) FROM t",
                [weights, labels],
            ).fetchone()[0]
            a, p = zip(*rows, strict=True)
            want = metrics.cohen_kappa_score(a, p, labels=labels, weights=weights)
            assert close(got, want), (kind, weights, got, want)


def test_averages_over_given_labels_are_scikit_learn_s(pg: Any) -> None:
    """precision, recall, F-beta and F1 over labels (a class outside them, a label no row
    holds), every average, counted and weighted: scikit-learn's labels=."""
    metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random("pg-average-labels")
    for kind, pool, labels in (
        ("text", "abcdx", ["c", "a", "z", "b"]),
        ("bigint", [4, 1, 2, 3, 8], [3, 1, 9, 2]),
    ):
        rows = [(rng.choice(pool), rng.choice(pool)) for _ in range(50)]
        weights = [rng.choice([0.5, 1.0, 2.25]) for _ in rows]
        a, p = (list(x) for x in zip(*rows, strict=True))
        load(pg, pa.table({"actual": a, "predicted": p, "label": a}), weights)
        for name in ("precision_score", "recall_score", "fbeta_score", "f1_score"):
            beta = "2, " if name == "fbeta_score" else ""
            extra = {"beta": 2.0} if name == "fbeta_score" else {}
            for average in ("micro", "macro", "weighted"):
                for weight in ("1", "w"):
                    got = pg.execute(
                        f"SELECT {name}(actual, predicted, {weight}, {beta}%s::text, 0, "
                        f"%s::{kind}[]) FROM t",
                        [average, labels],
                    ).fetchone()[0]
                    want = getattr(metrics, name)(
                        a, p, labels=labels, average=average, zero_division=0.0,
                        sample_weight=weights if weight == "w" else None, **extra,
                    )  # fmt: skip
                    assert close(got, want), (kind, name, average, weight, got, want)


BAD_CALLS = [
    ("f1_score(actual, predicted, 1, 'often')", "f1_score(actual, predicted, average := 'often')"),
    (
        "precision_score(actual, predicted, 1, 'macro', 'often')",
        "precision_score(actual, predicted, zero_division := 'often')",
    ),
    ("fbeta_score(actual, predicted, 1, -2)", "fbeta_score(actual, predicted, beta := -2)"),
    ("accuracy(actual, predicted, -1)", "accuracy(actual, predicted, sample_weight := -1)"),
    ("kappa(actual, predicted, 1, 'cubic')", "kappa(actual, predicted, weights := 'cubic')"),
    ("accuracy(actual, length(predicted))", "accuracy(actual, length(predicted))"),
    ("kappa(length(actual), predicted)", "kappa(length(actual), predicted)"),
    (
        "kappa(actual, predicted, 1, NULL, ARRAY['a', 'a'])",
        "kappa(actual, predicted, labels := ['a', 'a'])",
    ),
    (
        "kappa(actual, predicted, 1, NULL, ARRAY[]::text[])",
        "kappa(actual, predicted, labels := []::VARCHAR[])",
    ),
    ("f1_score(actual, predicted, 1, NULL)", "f1_score(actual, predicted, average := NULL)"),
]
#: DuckDB's names of the types, as PostgreSQL names them
TYPE_NAMES = {"VARCHAR": "text", "BIGINT": "bigint"}


@pytest.mark.parametrize(("pg_call", "duckdb_call"), BAD_CALLS)
def test_errors_say_what_duckdb_says(pg: Any, duck: Any, pg_call: str, duckdb_call: str) -> None:
    table = "(VALUES ('a', 'a'), ('b', 'a')) v(actual, predicted)"
    check_same_error(
        pg, f"SELECT {pg_call} FROM {table}", duck, f"SELECT {duckdb_call} FROM {table}", TYPE_NAMES
    )


@pytest.mark.parametrize(
    ("call", "rows"),
    [
        ("class_error_rate(actual, predicted, 1)", "('a', 'b')"),
        ("prevalence(actual, 1)", "('a', 'b')"),
        ("class_error_rate(actual, predicted, 'a')", "(1::bigint, 2::bigint)"),
        ("class_error_rate(actual, predicted, 'a', 1, 0)", "(1::bigint, 2::bigint)"),
        ("prevalence(actual, 'a')", "(1::bigint, 2::bigint)"),
    ],
)
def test_a_label_of_the_other_kind_is_duckdb_s_error(
    pg: Any, duck: Any, call: str, rows: str
) -> None:
    """A label parameter of the other kind than its column: DuckDB's message with the value,
    not PostgreSQL's "function does not exist" or a failed cast."""
    table = f"(VALUES {rows}) v(actual, predicted)"
    duck_call = call.replace(", 1, 0)", ", zero_division := 0)")
    names = {"(VARCHAR)": "(text)", "(BIGINT)": "(bigint)"}
    check_same_error(
        pg, f"SELECT {call} FROM {table}", duck, f"SELECT {duck_call} FROM {table}", names
    )


def test_group_by_model(pg: Any) -> None:
    """One value per model, from its own rows; integer columns of any width."""
    pg.execute("DROP TABLE IF EXISTS preds")
    pg.execute("CREATE TEMP TABLE preds (model text, actual int, predicted smallint)")
    pg.execute(
        "INSERT INTO preds VALUES ('m1', 1, 1), ('m1', 2, 1), ('m1', 2, 2), ('m1', NULL, 2),"
        " ('m2', 1, 2), ('m2', 2, 1)"
    )
    got = pg.execute(
        "SELECT model, accuracy(actual, predicted), majority_class(actual) FROM preds "
        "GROUP BY model ORDER BY model"
    ).fetchall()
    assert got == [("m1", pytest.approx(2 / 3, rel=1e-15), 2), ("m2", 0.0, 1)]


def test_classes_are_ordered_as_every_engine_orders_them(pg: Any) -> None:
    """Linear and quadratic kappa weigh the classes' positions: integers by value (9 before
    10 before 100, where their text sorts 10, 100, 9), text by its code points ('B' before
    'a' before 'é', whatever the database's collation): scikit-learn's order."""
    metrics = pytest.importorskip("sklearn.metrics")
    rng = random.Random("pg-class-order")
    for kind, pool in (("bigint", [9, 10, 100, 7]), ("text", ["a", "B", "é", "z"])):
        rows = [(rng.choice(pool), rng.choice(pool)) for _ in range(60)]
        a, p = zip(*rows, strict=True)
        table = pa.table({"actual": list(a), "predicted": list(p), "label": list(a)})
        load(pg, table)
        for weights in ("linear", "quadratic"):
            got = pg.execute(
                "SELECT cohen_kappa_score(actual, predicted, 1, %s::text) FROM t", [weights]
            ).fetchone()[0]
            want = metrics.cohen_kappa_score(a, p, weights=weights)
            assert close(got, want), (kind, weights, got, want)
