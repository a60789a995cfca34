"""Single-label tables on every engine: class distribution, confusion matrix (long, wide), per class.

``run_table`` is the engine-agnostic way to call a table function: DuckDB's
table macro ``name('t', column, ...)`` or Polars' ``mp.name(frame, column,
...)``. Engines the registry says lack a function are skipped (the only skips).
"""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
import pytest

from mlsql._errors import MlsqlError
from mlsql._registry import REGISTRY, measures
from tests import oracle_single as O
from tests.conftest import conformance

measures()  # fill the registry


def needs(engine: Any, name: str) -> None:
    """Skip where the registry says ``engine`` lacks ``name`` (with its reason)."""
    m = REGISTRY.get(name) or next(m for m in REGISTRY.values() if name in m.aliases)
    if not m.available_in(engine.name):
        pytest.skip(f"{name} is not in {engine.name}: {m.unavailable[engine.name]}")


def run_table(engine: Any, name: str, table: pa.Table, *columns: str, **params: Any) -> list[tuple]:
    """Rows of table function ``name`` over ``table`` (registered as ``t``)."""
    needs(engine, name)
    if engine.name == "duckdb":
        named = "".join(f', "{k}" := ?' for k in params)
        marks = ", ".join("?" for _ in columns)
        engine.con.register("t", table)
        try:
            sql = f"SELECT * FROM {name}('t', {marks}{named})"
            return engine.con.execute(sql, [*columns, *params.values()]).fetchall()
        finally:
            engine.con.unregister("t")
    if engine.name == "polars":
        import polars as pl

        import mlsql.polars as mp

        out = getattr(mp, name)(pl.from_arrow(table).lazy(), *columns, **params)
        return (out.collect() if isinstance(out, pl.LazyFrame) else out).rows()
    if engine.name == "spark":
        return engine.table_rows(name, table, *columns, **params)
    pytest.fail(f"no table runner for engine {engine.name}")


def run_cost_error(engine: Any, table: pa.Table, costs: list[tuple[Any, Any, float]]) -> Any:
    """cost_error with costs given as a table of (actual, predicted, cost) rows.

    DuckDB: ``cost_error(actual, predicted, (SELECT cost_map(...) FROM costs))``;
    Polars and Spark: ``costs=`` the DataFrame.
    """
    needs(engine, "cost_error")
    kinds = pa.table({"actual": table["actual"], "predicted": table["predicted"]}).schema
    cost_table = pa.table(
        {
            "actual": pa.array([a for a, _, _ in costs], kinds.field("actual").type),
            "predicted": pa.array([p for _, p, _ in costs], kinds.field("predicted").type),
            "cost": pa.array([c for _, _, c in costs], pa.float64()),
        }
    )
    if engine.name == "duckdb":
        engine.con.register("t", table)
        engine.con.register("costs", cost_table)
        try:
            sql = (
                "SELECT cost_error(actual, predicted, "
                "(SELECT cost_map(actual, predicted, cost) FROM costs)) FROM t"
            )
            return engine.con.execute(sql).fetchall()[0][0]
        finally:
            engine.con.unregister("t")
            engine.con.unregister("costs")
    if engine.name == "spark":  # costs= the cost table as a DataFrame
        return engine.cost_error_from_table(table, cost_table)
    import polars as pl

    return engine.aggregate("cost_error", table, costs=pl.from_arrow(cost_table))


def close(got: Any, want: Any) -> bool:
    if want is None:
        return got is None
    if isinstance(want, float) and math.isnan(want):
        return got is not None and math.isnan(got)
    return got is not None and math.isclose(got, float(want), rel_tol=1e-12, abs_tol=1e-12)


def pairs(actual: list[Any], predicted: list[Any], **extra: list[Any]) -> pa.Table:
    return pa.table({"actual": actual, "predicted": predicted, **extra})


SLIDES = conformance("slides_single_label.json")


@pytest.mark.parametrize("example", ["ten_rows", "animals"])
def test_class_distribution_of_the_slides(engine, example):
    data = SLIDES[example]
    rows = run_table(engine, "class_distribution", pa.table({"y": data["actual"]}), "y")
    want = O.distribution(data["actual"])
    assert [r[0] for r in rows] == list(want)
    for cls, count, share in rows:
        assert count == want[cls][0] and close(share, want[cls][1])
    if "class_distribution" in data["expected"]:
        assert {r[0]: r[2] for r in rows} == pytest.approx(data["expected"]["class_distribution"])


def test_confusion_matrix_of_the_twenty_animals(engine):
    data = SLIDES["animals"]
    want = data["expected"]["confusion_matrix(actual row, predicted column, classes sorted)"]
    rows = run_table(
        engine, "confusion_matrix", pairs(data["actual"], data["predicted"]), "actual", "predicted"
    )
    classes = want["classes"]
    assert rows == [
        (a, p, want["matrix"][i][j]) for i, a in enumerate(classes) for j, p in enumerate(classes)
    ]


def wide(engine: Any, table: pa.Table, **params: Any) -> tuple[list[str], list[tuple]]:
    """confusion_matrix_wide of ``table``'s actual and predicted: (column names, rows)."""
    if engine.name == "duckdb":  # a Python helper: a macro cannot PIVOT on data
        from mlsql._duckdb.confusion_wide import confusion_matrix_wide

        engine.con.register("t", table)
        try:
            rel = confusion_matrix_wide(engine.con, "t", "actual", "predicted", **params)
            return rel.columns, rel.fetchall()
        finally:
            engine.con.unregister("t")
    needs(engine, "confusion_matrix_wide")
    if engine.name == "spark":
        return engine.wide_table("confusion_matrix_wide", table, "actual", "predicted", **params)
    import polars as pl

    import mlsql.polars as mp

    out = mp.confusion_matrix_wide(pl.from_arrow(table), "actual", "predicted", **params)
    return out.columns, out.rows()


def test_wide_confusion_matrix_of_the_twenty_animals(engine):
    data = SLIDES["animals"]
    want = data["expected"]["confusion_matrix(actual row, predicted column, classes sorted)"]
    columns, rows = wide(engine, pairs(data["actual"], data["predicted"]))
    assert columns == ["actual", *want["classes"]]
    assert rows == [(c, *want["matrix"][i]) for i, c in enumerate(want["classes"])]


def test_wide_columns_are_the_classes_in_their_order(engine):
    """The class columns come in the classes' order, not their text's (-1, 2, 10: DuckDB's
    PIVOT gave -1, 10, 2), named by their text (booleans as SQL writes them: Polars failed
    on them), over integer columns of different widths too (Polars failed to stack them)."""
    table = pa.table(
        {"actual": pa.array([10, 2, -1], pa.int16()), "predicted": pa.array([2, 2, 10], pa.int64())}
    )
    assert wide(engine, table) == (
        ["actual", "-1", "2", "10"],
        [(-1, 0, 0, 1), (2, 0, 1, 0), (10, 0, 1, 0)],
    )
    columns, rows = wide(engine, pairs([True, False], [True, True]))
    assert (columns, rows) == (["actual", "false", "true"], [(False, 0, 1), (True, 0, 1)])


@pytest.mark.parametrize(
    ("classes", "by", "name", "why"),
    [
        (["actual", "x"], None, "actual", "it is the name of the column 'actual'"),
        (["x", "G"], "g", "G", "it is the name of the column 'g'"),
        (["A", "a"], None, "a", "it is the name of the class 'A'"),
        (["", "x"], None, "", "it is empty"),
    ],
)
def test_a_class_that_cannot_name_a_column_of_the_wide_table(engine, classes, by, name, why):
    """The same error in every engine (DuckDB renamed such a column, Polars and Spark failed
    each its own way, or Spark gave two columns of one name)."""
    table = pairs(classes, ["x"] * len(classes)).append_column("g", pa.array([1] * len(classes)))
    with pytest.raises(MlsqlError) as caught:
        wide(engine, table, **({"by": by} if by else {}))
    assert f"the class {name!r} cannot name one: {why}" in str(caught.value)


def test_tables_of_integer_classes_of_different_widths(engine):
    """actual int16 and predicted int64 hold the same classes (integer widths may differ):
    the tables count them (Polars failed to stack them into one class column)."""
    table = pa.table(
        {"actual": pa.array([1, 2, 2, None], pa.int16()), "predicted": pa.array([2, 2, 1, 1])}
    )
    cells = run_table(engine, "confusion_matrix", table, "actual", "predicted")
    assert cells == [(1, 1, 0), (1, 2, 1), (2, 1, 1), (2, 2, 1)]
    metrics = run_table(engine, "class_metrics", table, "actual", "predicted")
    assert [tuple(r[:6]) for r in metrics] == [(1, 0, 1, 1, 1, 1), (2, 1, 1, 1, 0, 2)]


def test_class_metrics_match_the_oracle_per_class(engine):
    data = SLIDES["animals"]
    rows = run_table(
        engine,
        "class_metrics",
        pairs(data["actual"], data["predicted"]),
        "actual",
        "predicted",
        beta=2.0,
    )
    want = O.per_class(list(zip(data["actual"], data["predicted"], strict=True)))
    assert [r[0] for r in rows] == list(want)
    for cls, tp, fp, fn, tn, support, precision, recall, fbeta, error in rows:
        k = want[cls]
        assert (tp, fp, fn, tn, support) == (k["tp"], k["fp"], k["fn"], k["tn"], k["support"])
        assert close(precision, O._class_ratio(k, "precision", 0))
        assert close(recall, O._class_ratio(k, "recall", 0))
        assert close(fbeta, O._class_ratio(k, "fbeta", 0, 2))
        assert close(error, 1 - O._class_ratio(k, "recall", 0))


def test_tables_group_by_columns_and_skip_unknown_rows(engine):
    table = pairs(
        ["x", "x", "y", None, "z", "z"],
        ["x", "y", "y", "x", "z", None],
        g=[1, 1, 1, 1, 2, 2],
    )
    rows = run_table(engine, "confusion_matrix", table, "actual", "predicted", by=["g"])
    assert rows == [
        (1, "x", "x", 1),
        (1, "x", "y", 1),
        (1, "y", "x", 0),
        (1, "y", "y", 1),
        (2, "z", "z", 1),
    ]
    dist = run_table(engine, "class_distribution", table, "actual", by=["g"])
    assert [(g, c, n) for g, c, n, _ in dist] == [(1, "x", 2), (1, "y", 1), (2, "z", 2)]
    assert [s for *_, s in dist] == pytest.approx([2 / 3, 1 / 3, 1.0])
    metrics = run_table(engine, "class_metrics", table, "actual", "predicted", by=["g"])
    assert [(r[0], r[1], r[2:7]) for r in metrics] == [
        (1, "x", (1, 0, 1, 1, 2)),
        (1, "y", (1, 1, 0, 1, 1)),
        (2, "z", (1, 0, 0, 0, 1)),
    ]


def test_table_functions_take_any_column_name(engine):
    weird = 'x"; DROP TABLE t; --'
    table = pa.table({weird: ["a", "b", "a"], "p p": ["a", "a", "a"]})
    rows = run_table(engine, "confusion_matrix", table, weird, "p p")
    assert rows == [("a", "a", 2), ("a", "b", 0), ("b", "a", 1), ("b", "b", 0)]
    assert run_table(engine, "class_distribution", table, weird)[0][:2] == ("a", 2)


def test_class_metrics_zero_division_and_parameter_checks(engine):
    table = pairs(["x", "x"], ["y", "y"])
    rows = run_table(engine, "class_metrics", table, "actual", "predicted", zero_division=1)
    # x: never predicted -> precision undefined (1); y: never true -> recall undefined (1)
    assert [(r[0], r[6], r[7]) for r in rows] == [("x", 1.0, 0.0), ("y", 0.0, 1.0)]
    with pytest.raises(Exception, match="'zero_division' parameter of class_metrics"):
        run_table(engine, "class_metrics", table, "actual", "predicted", zero_division=2)
    with pytest.raises(Exception, match="'beta' parameter of class_metrics"):
        run_table(engine, "class_metrics", table, "actual", "predicted", beta=0.0)


def test_integer_and_boolean_labels_keep_their_type(engine):
    rows = run_table(
        engine, "confusion_matrix", pairs([2, 10, 2], [10, 10, 2]), "actual", "predicted"
    )
    assert rows == [(2, 2, 1), (2, 10, 1), (10, 2, 0), (10, 10, 1)]
    rows = run_table(engine, "class_distribution", pa.table({"b": [True, False, True]}), "b")
    assert [r[:2] for r in rows] == [(False, 1), (True, 2)]


def test_registry_lists_the_tables():
    names = {m.name for m in measures(kind="table", family="single_label")}
    assert names == {
        "class_distribution",
        "confusion_matrix",
        "confusion_matrix_wide",
        "class_metrics",
    }


@pytest.mark.parametrize(
    ("costs", "message"),
    [
        ([("x", "y", 5.0), ("x", "y", 7.0)], "give one cost per (actual, predicted) pair"),
        ([("x", "y", float("nan"))], "finite numbers"),
        ([("x", "y", float("inf"))], "finite numbers"),
        ([("x", "y", None), ("y", "x", 2.0)], "finite numbers"),
    ],
)
def test_a_cost_table_giving_a_pair_twice_or_no_number_is_an_error(engine, costs, message):
    """Every engine refuses such a cost table (Polars added a pair's two costs, DuckDB and
    Spark failed on the map's keys; DuckDB and Spark read NaN and infinity as costs, and
    skipped a NULL one for the default, where Polars refused them)."""
    table = pairs(["x", "x", "y", "y"], ["x", "y", "x", "y"])
    with pytest.raises(Exception) as raised:
        run_cost_error(engine, table, costs)
    assert message in str(raised.value)


@pytest.mark.parametrize("cost", [float("nan"), float("-inf"), None])
def test_a_map_of_costs_holding_no_number_is_an_error(engine, cost):
    """Costs given as a map (DuckDB SQL's MAP, Spark's map Column; Polars' dict) are checked
    as a cost table is: DuckDB and Spark read NaN and infinity as costs, and a NULL one as a
    missing pair (its default cost), where Polars refused them."""
    needs(engine, "cost_error")
    table = pairs(["x", "x", "y", "y"], ["x", "y", "x", "y"])
    sql_cost = {None: "NULL::DOUBLE", "nan": "'nan'::DOUBLE", "-inf": "'-inf'::DOUBLE"}
    with pytest.raises(Exception) as raised:
        if engine.name == "duckdb":
            engine.con.register("t", table)
            try:
                given = sql_cost[None if cost is None else str(cost)]
                sql = f"SELECT cost_error(actual, predicted, MAP {{'x': MAP {{'y': {given}}}}}) FROM t"
                engine.con.execute(sql).fetchall()
            finally:
                engine.con.unregister("t")
        elif engine.name == "spark":
            from pyspark.sql import functions as F

            import mlsql.spark as ms
            from tests.engines.spark_engine import frame

            value = F.lit(cost).cast("double")
            costs = F.create_map(F.lit("x"), F.create_map(F.lit("y"), value))
            frame(table).agg(ms.cost_error("actual", "predicted", costs=costs)).collect()
        else:
            engine.aggregate("cost_error", table, costs={"x": {"y": cost}})
    assert "finite numbers" in str(raised.value)


def test_the_cost_table_of_the_dict(engine):
    """The same costs as a table and as a dict give the same cost_error (x -> y costs 5:
    (0 + 5 + 1 + 0) / 4)."""
    table = pairs(["x", "x", "y", "y"], ["x", "y", "x", "y"])
    assert close(run_cost_error(engine, table, [("x", "y", 5.0)]), 1.5)
