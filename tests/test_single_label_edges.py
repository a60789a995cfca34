"""Edges of the single-label, binary, rule, regression and score families, on every engine.

Zero rows and NULL rows, undefined values under each zero_division, groups,
odd column names, and every error: the same on every engine.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

import mlsql
from mlsql._registry import measures
from tests import oracle_single as O
from tests.test_single_label_tables import close, needs

#: the Spark cases of these edges run with the long tests (tests/conftest.py): one Spark
#: query per measure and edge, 220-270 test-seconds of the README suite
LONG_ENGINES = ("spark",)

FAMILIES = ("single_label", "binary", "rules", "regression", "scores")
#: a value per input kind, and required parameters
SAMPLE = {"label": ("x", pa.string()), "number": (1.5, pa.float64()), "flag": (1, pa.int64())}
REQUIRED = {"positive": "x", "label": "x", "costs": {"x": {"y": 2.0}}}


def input_kind(measure: Any, name: str) -> str:
    if measure.family in ("binary", "rules"):
        return "number" if measure.kind == "from_counts" else "flag"
    if measure.family == "regression":
        return "number"
    if measure.family == "scores":
        return "flag" if name in ("actual", "label") else "number"
    return "label"


def aggregates() -> list[Any]:
    return [
        m
        for m in measures()
        if m.family in FAMILIES and m.kind == "aggregate" and m.name != "cost_map"
    ]


def sample_table(measure: Any, rows: list[tuple[Any, ...]]) -> pa.Table:
    return pa.table(
        {
            name: pa.array([r[i] for r in rows], SAMPLE[input_kind(measure, name)][1])
            for i, name in enumerate(measure.inputs)
        }
    )


def call(engine: Any, measure: Any, table: pa.Table, **params: Any) -> Any:
    needs(engine, measure.name)
    required = {p.name: REQUIRED[p.name] for p in measure.params if p.name in REQUIRED}
    if "costs" in required and engine.name == "duckdb":
        engine.con.register("t", table)
        try:
            sql = "SELECT cost_error(actual, predicted, MAP {'x': MAP {'y': 2.0}}) FROM t"
            return engine.con.execute(sql).fetchall()[0][0]
        finally:
            engine.con.unregister("t")
    return engine.aggregate(measure.name, table, columns=measure.inputs, **required, **params)


@pytest.mark.parametrize("measure", aggregates(), ids=lambda m: m.name)
def test_zero_rows_and_all_null_rows_give_null(engine, measure):
    empty = sample_table(measure, [])
    assert call(engine, measure, empty) is None
    nulls = sample_table(measure, [tuple(None for _ in measure.inputs)] * 3)
    assert call(engine, measure, nulls) is None
    half = [
        tuple(
            SAMPLE[input_kind(measure, n)][0] if i == 0 else None
            for i, n in enumerate(measure.inputs)
        )
    ] * 2
    if len(measure.inputs) > 1:  # one side NULL: the row is unknown
        assert call(engine, measure, sample_table(measure, half)) is None


@pytest.mark.parametrize(
    "name",
    ["accuracy", "f1_score", "cohen_kappa_score", "matthews_corrcoef", "binary_precision", "r2"],
)
def test_rows_with_a_null_side_are_skipped(engine, name):
    needs(engine, name)
    numeric = name in ("binary_precision", "r2")
    rows = (
        [(1, 1), (0, 1), (1, 0), (1, 1), (0, 0)]
        if numeric
        else [("a", "a"), ("b", "a"), ("a", "b"), ("c", "c"), ("b", "b")]
    )
    dtype = pa.float64() if name == "r2" else pa.int64() if numeric else pa.string()
    noisy = [*rows, (None, rows[0][1]), (rows[0][0], None), (None, None)]

    def table(rs: list[tuple[Any, Any]]) -> pa.Table:
        return pa.table(
            {
                "actual": pa.array([a for a, _ in rs], dtype),
                "predicted": pa.array([p for _, p in rs], dtype),
            }
        )

    assert close(engine.aggregate(name, table(noisy)), engine.aggregate(name, table(rows)))


ZERO_DIVISION = [0, 1, float("nan"), "ignore", "diagnose"]


def expected(zd: Any, diagnose: float) -> Any:
    return {0: 0.0, 1: 1.0, "ignore": None, "diagnose": diagnose}.get(zd, float("nan"))


UNDEFINED = [
    # (name, rows, dtype, value under 'diagnose')
    ("cohen_kappa_score", [("a", "a"), ("a", "a")], pa.string(), 1.0),
    ("binary_kappa", [(1, 1), (1, 1)], pa.int64(), 1.0),
    ("matthews_corrcoef", [("a", "a"), ("a", "b")], pa.string(), 0.0),
    ("matthews_corrcoef", [("a", "a"), ("a", "a")], pa.string(), 1.0),
    ("auc", [(1, 0.3), (1, 0.9)], pa.float64(), 1.0),
    ("pearson_corr", [(1.0, 2.0), (1.0, 3.0)], pa.float64(), 0.0),
    ("pearson_corr", [(2.0, 2.0), (2.0, 2.0)], pa.float64(), 1.0),
    ("r2", [(1.0, 2.0), (1.0, 3.0)], pa.float64(), 0.0),
    ("r2", [(1.0, 1.0), (1.0, 1.0)], pa.float64(), 1.0),
    ("explained_variance", [(1.0, 2.0), (1.0, 3.0)], pa.float64(), 0.0),
    ("rse", [(1.0, 2.0), (1.0, 3.0)], pa.float64(), 1.0),
    ("rse", [(1.0, 1.0), (1.0, 1.0)], pa.float64(), 0.0),
    ("rae", [(1.0, 2.0), (1.0, 3.0)], pa.float64(), 1.0),
    ("binary_precision", [(1, 0), (0, 0)], pa.int64(), 0.0),
    ("binary_specificity", [(1, 1), (1, 0)], pa.int64(), 0.0),
    ("binary_specificity", [(1, 1), (1, 1)], pa.int64(), 1.0),
]


@pytest.mark.parametrize("zd", ZERO_DIVISION, ids=str)
@pytest.mark.parametrize(("name", "rows", "dtype", "diagnose"), UNDEFINED, ids=str)
def test_undefined_values_follow_zero_division(engine, name, rows, dtype, diagnose, zd):
    needs(engine, name)
    label = pa.int64() if name == "auc" else dtype
    table = pa.table(
        {
            "actual": pa.array([a for a, _ in rows], label),
            "predicted": pa.array([p for _, p in rows], dtype),
        }
    )
    assert close(engine.aggregate(name, table, zero_division=zd), expected(zd, diagnose))


def test_undefined_values_under_diagnose_match_the_oracle():
    assert O.kappa([("a", "a")] * 2, zd="diagnose") == 1
    assert O.mcc([("a", "a"), ("a", "b")], zd="diagnose") == 0
    assert O.regression([(1, 1), (1, 1)], "r2", "diagnose") == 1
    assert O.regression([(1, 2), (1, 3)], "rse", "diagnose") == 1


ERRORS = [
    (
        "f1_score",
        {"average": "samples"},
        "'average' parameter of f1_score must be one of 'micro', 'macro', 'weighted'",
    ),
    (
        "cohen_kappa_score",
        {"weights": "cubic"},
        "'weights' parameter of cohen_kappa_score must be one of 'linear', 'quadratic'",
    ),
    (
        "precision_score",
        {"zero_division": "warn"},
        "'zero_division' parameter of precision_score must be one of",
    ),
    ("fbeta_score", {"beta": -1.0}, "'beta' parameter of fbeta_score must be a finite number > 0"),
]


@pytest.mark.parametrize(("name", "params", "message"), ERRORS, ids=str)
def test_parameter_errors(engine, name, params, message):
    needs(engine, name)
    table = pa.table({"actual": ["a", "b"], "predicted": ["a", "a"]})
    with pytest.raises(Exception, match=message.replace("(", r"\(")):
        engine.aggregate(name, table, **params)


BINARY_ERRORS = [
    (
        "binary_f_alpha",
        {"alpha": 0.0},
        "'alpha' parameter of binary_f_alpha must be a finite number > 0",
    ),
    (
        "binary_cost_error",
        {"cost_fn": float("inf")},
        "'cost_fn' parameter of binary_cost_error must be a finite number",
    ),
    (
        "binary_kappa",
        {"zero_division": 2},
        "'zero_division' parameter of binary_kappa must be one of",
    ),
    ("r2", {"zero_division": "x"}, "'zero_division' parameter of r2 must be one of"),
    ("auc", {"zero_division": -1}, "'zero_division' parameter of auc must be one of"),
]


@pytest.mark.parametrize(("name", "params", "message"), BINARY_ERRORS, ids=str)
def test_parameter_errors_of_binary_and_numeric_measures(engine, name, params, message):
    needs(engine, name)
    table = pa.table({"actual": [1, 0], "predicted": [1, 1]})
    with pytest.raises(Exception, match=message):
        engine.aggregate(name, table, **params)


@pytest.mark.parametrize("name", ["binary_precision", "prel", "sat", "auc", "logloss"])
def test_binary_inputs_must_be_boolean_or_0_1(engine, name):
    needs(engine, name)
    func = {"prel": "binary_precision", "sat": "rule_satisfaction"}.get(name, name)
    columns = ("holds", "fires") if name == "sat" else ("actual", "predicted")
    bad = pa.table({columns[0]: [1, 2], columns[1]: [1, 0]})
    with pytest.raises(Exception, match=rf"{func} takes boolean or 0/1 values. Got 2 instead"):
        engine.aggregate(name, bad, columns=columns)
    text = pa.table({columns[0]: ["1", "0"], columns[1]: [1, 0]})
    with pytest.raises(Exception, match=rf"{func} takes boolean or 0/1 values for {columns[0]}"):
        engine.aggregate(name, text, columns=columns)


@pytest.mark.parametrize("name", ["mse", "r2", "hivemall_r2"])
def test_regression_inputs_must_be_numbers(engine, name):
    needs(engine, name)
    table = pa.table({"actual": ["1.5", "2"], "predicted": [1.0, 2.0]})
    columns = ("predicted", "actual") if name == "hivemall_r2" else ("actual", "predicted")
    with pytest.raises(Exception, match=rf"{name} takes numbers for actual. Got actual"):
        engine.aggregate(name, table, columns=columns)


@pytest.mark.parametrize("name", ["accuracy", "f1_score", "kappa", "class_error_rate"])
def test_label_type_mismatch_names_both_types(engine, name):
    needs(engine, name)
    params = {"label": "a"} if name == "class_error_rate" else {}
    table = pa.table({"actual": ["a", "b"], "predicted": [1, 2]})
    with pytest.raises(
        Exception,
        match=r"(?is)(varchar|string|str).*(int|bigint)|(int|bigint).*(varchar|string|str)",
    ):
        engine.aggregate(name, table, **params)


@pytest.mark.parametrize("name", ["accuracy", "f1_score", "cohen_kappa_score"])
def test_boolean_against_integer_labels_is_an_error(engine, name):
    needs(engine, name)
    table = pa.table({"actual": [True, False], "predicted": [1, 0]})
    with pytest.raises(Exception, match=r"(?is)(bool).*(int)"):
        engine.aggregate(name, table)


def test_integer_widths_may_differ(engine):
    needs(engine, "f1_score")
    table = pa.table(
        {"actual": pa.array([1, 2, 2], pa.int8()), "predicted": pa.array([1, 2, 1], pa.int64())}
    )
    rows = [(1, 1), (2, 2), (2, 1)]
    assert close(engine.aggregate("f1_score", table), O.averaged(rows, "fbeta", "macro"))
    assert close(engine.aggregate("kappa", table), O.kappa(rows))


@pytest.mark.parametrize(
    ("name", "rows", "dtype", "oracle"),
    [
        (
            "f1_score",
            [("a", "a"), ("b", "a"), ("b", "b"), ("c", "a")],
            pa.string(),
            lambda r: O.averaged(r, "fbeta", "macro"),
        ),
        (
            "cohen_kappa_score",
            [("a", "a"), ("b", "a"), ("b", "b"), ("c", "c")],
            pa.string(),
            O.kappa,
        ),
        (
            "binary_kappa",
            [(1, 1), (0, 1), (1, 0), (0, 0), (1, 1)],
            pa.int64(),
            lambda r: O.two_by_two(*O.table(r), "kappa"),
        ),
        ("auc", [(1, 0.9), (0, 0.4), (1, 0.4), (0, 0.1), (1, 0.2)], pa.float64(), O.auc),
        (
            "r2",
            [(1.0, 1.5), (2.0, 1.0), (3.0, 3.5), (4.0, 4.5)],
            pa.float64(),
            lambda r: O.regression(r, "r2"),
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_group_by_gives_each_group_its_own_value(engine, name, rows, dtype, oracle):
    needs(engine, name)
    groups = [i % 2 for i in range(len(rows) * 2)]
    doubled = rows + rows[::-1]
    label_type = pa.int64() if name == "auc" else dtype
    table = pa.table(
        {
            "actual": pa.array([a for a, _ in doubled], label_type),
            "predicted": pa.array([p for _, p in doubled], dtype),
            "g": groups,
        }
    )
    got = engine.grouped(name, table)
    for g in (0, 1):
        mine = [r for r, k in zip(doubled, groups, strict=True) if k == g]
        assert close(got[g], oracle(mine)), g


def test_odd_column_names(engine):
    needs(engine, "kappa")
    weird, other = 'x"; DROP TABLE t; --', "p p"
    table = pa.table({weird: ["a", "b", "a"], other: ["a", "a", "a"]})
    rows = [("a", "a"), ("b", "a"), ("a", "a")]
    assert close(engine.aggregate("kappa", table, columns=(weird, other)), O.kappa(rows))
    assert close(
        engine.aggregate("f1_score", table, columns=(weird, other)),
        O.averaged(rows, "fbeta", "macro"),
    )
    flags = pa.table({weird: [1, 0, 1], other: [1, 1, 0]})
    got = engine.aggregate("binary_precision", flags, columns=(weird, other))
    assert close(got, 0.5)


def test_many_classes_and_one_class(engine):
    needs(engine, "f1_score")
    many = [(i % 37, (i * 7) % 37) for i in range(200)]
    table = pa.table({"actual": [a for a, _ in many], "predicted": [p for _, p in many]})
    assert close(
        engine.aggregate("f1_score", table, average="weighted"),
        O.averaged(many, "fbeta", "weighted"),
    )
    assert close(engine.aggregate("kappa", table, weights="quadratic"), O.kappa(many, "quadratic"))
    one = pa.table({"actual": ["a"] * 3, "predicted": ["a"] * 3})
    assert engine.aggregate("f1_score", one) == 1.0
    assert engine.aggregate("balanced_accuracy_score", one) == 1.0


def test_cost_error_takes_a_nested_mapping_or_pairs_in_polars():
    import polars as pl

    import mlsql.polars as mp

    df = pl.DataFrame({"a": ["x", "x", "y"], "p": ["y", "x", "x"]})
    nested = df.select(mp.cost_error("a", "p", costs={"x": {"y": 5.0}})).item()
    pairs = df.select(mp.cost_error("a", "p", costs={("x", "y"): 5.0})).item()
    assert nested == pairs == pytest.approx(2.0)  # (5 + 0 + 1) / 3
    with pytest.raises(mlsql.MlsqlError, match="'costs' parameter of cost_error"):
        df.select(mp.cost_error("a", "p", costs=[("x", "y", 5.0)]))


@pytest.mark.long
def test_duckdb_macros_work_with_a_prefix_and_a_schema():
    import duckdb

    con = duckdb.connect()
    mlsql.register(con, prefix="ml_")
    mlsql.register(con, schema="m")
    con.execute(
        "CREATE TABLE t AS SELECT * FROM (VALUES ('a', 'a'), ('b', 'a'), ('b', 'b')) v(y, p)"
    )
    rows = [("a", "a"), ("b", "a"), ("b", "b")]
    got = con.execute(
        "SELECT ml_kappa(y, p), m.f1_score(y, p, average := 'weighted'), ml_binary_kappa(y = 'a', p = 'a'),"
        " m.auc(y = 'a', 0.5), ml_r2(length(y)::DOUBLE, length(p)::DOUBLE) FROM t"
    ).fetchall()[0]
    assert close(got[0], O.kappa(rows)) and close(got[1], O.averaged(rows, "fbeta", "weighted"))
    assert close(got[2], O.two_by_two(1, 0, 1, 1, "kappa")) and got[3] == 0.5
    cells = con.execute("SELECT * FROM m.confusion_matrix('t', 'y', 'p')").fetchall()
    assert cells == [("a", "a", 1), ("a", "b", 0), ("b", "a", 1), ("b", "b", 1)]
    assert con.execute("SELECT count(*) FROM ml_class_metrics('t', 'y', 'p')").fetchall() == [(2,)]


def test_every_aggregate_of_these_families_has_zero_row_coverage():
    names = {m.name for m in aggregates()}
    assert {"f1_score", "binary_kappa", "rule_satisfaction", "r2", "auc", "cost_error"} <= names


@pytest.mark.parametrize(
    ("name", "columns"),
    [
        ("prevalence", ("actual",)),
        ("class_error_rate", ("actual", "predicted")),
        ("cost_error", ("actual", "predicted")),
    ],
)
def test_required_parameters(engine, name, columns):
    needs(engine, name)
    table = pa.table({"actual": ["a", "b"], "predicted": ["a", "a"]})
    param = {"prevalence": "positive", "class_error_rate": "label", "cost_error": "costs"}[name]
    with pytest.raises(Exception, match=param):
        engine.aggregate(name, table, columns=columns)


def test_these_families_formulas_are_not_shadowed_by_another_module():
    from mlsql._formulas import FORMULAS
    from mlsql.measures import contingency, regression, scores, single_label

    for module in (contingency, regression, scores, single_label):
        for name, value in vars(module).items():
            raw = getattr(value, "raw", None)
            if raw is not None and raw.__module__ == module.__name__:  # defined here
                assert FORMULAS[name] is value, name
    assert FORMULAS["specificity"].raw.__module__ == contingency.__name__


@pytest.mark.parametrize(
    "measure",
    [m for m in aggregates() if m.family == "single_label"],
    ids=lambda m: m.name,
)
def test_a_list_where_one_label_belongs_is_refused(engine, measure):
    """Lists of labels are no single labels: never compared as values (DuckDB gave accuracy 1.0
    on two equal lists), the same message in every engine."""
    first = measure.inputs[0]
    table = pa.table(
        {name: pa.array([["x", "y"]], pa.list_(pa.string())) for name in measure.inputs}
    )
    with pytest.raises(
        Exception,
        match=rf"^(.*: )?{measure.name} takes one label per row for {first}\. Got {first} ",
    ):
        call(engine, measure, table)


@pytest.mark.parametrize(
    ("name", "inputs", "param"),
    [
        ("class_error_rate", ("actual", "predicted"), "label"),
        ("prevalence", ("actual",), "positive"),
    ],
)
def test_a_boolean_class_of_a_boolean_column(engine, name, inputs, param):
    """True is a class of a boolean column (Polars refused it, naming the column's type);
    None (SQL's NULL) is no class: DuckDB's macro gave 0 (the sixth adversarial pass)."""
    needs(engine, name)
    table = pa.table(
        {"actual": [True, False, True, False], "predicted": [True, True, False, False]}
    )
    # class True: one of its two rows predicted wrong; two of four rows are True
    assert engine.aggregate(name, table, columns=inputs, **{param: True}) == 0.5
    with pytest.raises(Exception, match=f"{name} needs the '{param}' parameter \\("):
        engine.aggregate(name, table, columns=inputs, **{param: None})


@pytest.mark.parametrize(
    ("name", "inputs", "param"),
    [
        ("class_error_rate", ("actual", "predicted"), "label"),
        ("prevalence", ("actual",), "positive"),
    ],
)
def test_a_float_class_of_an_integer_column_is_refused(engine, name, inputs, param):
    """2.0 is no label: Spark compared it to the integers (0.5 for label=2.0, 0 for 2.5)."""
    needs(engine, name)
    table = pa.table({"actual": [1, 2, 2, 3], "predicted": [1, 2, 3, 3]})
    for value in (2.0, 2.5):
        with pytest.raises(Exception, match=f"The '{param}' parameter of {name} must be a label"):
            engine.aggregate(name, table, columns=inputs, **{param: value})
