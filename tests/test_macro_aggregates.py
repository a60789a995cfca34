"""The macro and weighted averages as DuckDB aggregates, on the native and the portable path.

``SELECT model, micro_f1(actual, predicted), macro_f1(actual, predicted) FROM preds GROUP BY
model`` (the README's pattern) works for every per-label measure of
:data:`mlsql.measures.label_based.STANDALONE`: DuckDB keeps scalar and table macros apart,
so each name is an aggregate and, over a table, still the table macro. Expected values:
scikit-learn, and the label tables' oracle (``tests/references.py``) per group, with
integer sample weights checked as repeated rows (``tests/weights.py``).
"""

from __future__ import annotations

import random
import re
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from sklearn.metrics import f1_score, fbeta_score, jaccard_score, precision_score, recall_score
from sklearn.preprocessing import MultiLabelBinarizer

import mlsql
from mlsql._sqlexpr import lit
from mlsql.measures.label_based import STANDALONE
from tests.references import REFERENCES, label_lists
from tests.test_multilabel_properties import same
from tests.weights import integer_weights, repeated, with_weights

PATHS = ("native", "portable")


#: the portable path's cases are long (a tenth of a minute of the README's suite); CI's long
#: step runs them
@pytest.fixture(
    params=[p if p == "native" else pytest.param(p, marks=pytest.mark.long) for p in PATHS],
    scope="module",
)
def con(request: pytest.FixtureRequest) -> Any:
    """A connection of ``mlsql.connect()`` on the native path, or with ``MLSQL_NATIVE=0``."""
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "portable":
            patch.setenv("MLSQL_NATIVE", "0")
        c = mlsql.connect()
    native = c.sql(
        "SELECT bool_or(macro_definition LIKE '%mlsql_native_label_table%') FROM "
        "duckdb_functions() WHERE function_name = '_mlsql_label_spread'"
    ).fetchall()[0]
    if request.param == "native" and not native[0]:
        pytest.skip("the native DuckDB extension is not used here")
    assert native[0] == (request.param == "native")
    yield c
    c.close()


def _preds(seed: int = 3, models: int = 3, rows: int = 40) -> pa.Table:
    rng = random.Random(seed)
    labels = ["news", "sport", "tech", "art", "food", "travel"]
    out: dict[str, list[Any]] = {"model": [], "actual": [], "predicted": []}
    for i in range(rows):
        out["model"].append(f"m{i % models}")
        out["actual"].append(rng.sample(labels, rng.randint(0, 3)))
        out["predicted"].append(rng.sample(labels, rng.randint(0, 3)))
    return pa.table(out)


@pytest.mark.long_cases("portable")
def test_readme_group_by_with_micro_and_macro_equals_scikit_learn(con):
    preds = _preds()
    con.register("preds", preds)
    got = con.sql(
        """SELECT model,
                  micro_f1(actual, predicted) AS micro_f1,
                  macro_f1(actual, predicted) AS macro_f1,
                  weighted_f1(actual, predicted) AS weighted_f1,
                  macro_precision(actual, predicted) AS macro_precision,
                  weighted_recall(actual, predicted) AS weighted_recall,
                  macro_jaccard(actual, predicted) AS macro_jaccard,
                  macro_fbeta(actual, predicted, beta := 2) AS macro_f2
           FROM preds GROUP BY model ORDER BY model"""
    ).fetchall()
    assert [g[0] for g in got] == ["m0", "m1", "m2"]
    rows = preds.to_pylist()
    for model, *values in got:
        part = [r for r in rows if r["model"] == model]
        mlb = MultiLabelBinarizer().fit([r["actual"] + r["predicted"] for r in part])
        y_true = mlb.transform([r["actual"] for r in part])
        y_pred = mlb.transform([r["predicted"] for r in part])
        zd: dict[str, Any] = {"zero_division": 0}
        want = [
            f1_score(y_true, y_pred, average="micro", **zd),
            f1_score(y_true, y_pred, average="macro", **zd),
            f1_score(y_true, y_pred, average="weighted", **zd),
            precision_score(y_true, y_pred, average="macro", **zd),
            recall_score(y_true, y_pred, average="weighted", **zd),
            jaccard_score(y_true, y_pred, average="macro", **zd),
            fbeta_score(y_true, y_pred, beta=2, average="macro", **zd),
        ]
        for value, expected in zip(values, want, strict=True):
            assert np.isclose(value, expected, rtol=1e-12, atol=1e-12), (model, values, want)


def _sql_params(params: dict[str, Any], integers: bool) -> str:
    out = []
    for name, value in params.items():
        if name == "labels":
            value = [1, 2, 99] if integers else value
            out.append(f"labels := [{', '.join(str(lit(v)) for v in value)}]")
        else:
            out.append(f"{name} := {lit(value)}")
    return "".join(f", {p}" for p in out)


def _grouped_table(seed: int) -> pa.Table:
    rng = random.Random(f"macro-aggregates-{seed}")
    n = rng.randint(8, 40)
    cols, types = label_lists(rng, n)
    groups = [rng.choice(["x", "y", "z"]) for _ in range(n)]
    return pa.table(
        {"g": groups, **{c: pa.array(v, types[c]) for c, v in cols.items()}},
    )


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("name", list(STANDALONE))
def test_every_per_label_measure_is_an_aggregate_equal_to_the_oracle_per_group(con, name, weighted):
    ref = REFERENCES[name]
    for seed in (0, 1):  # text labels, integer labels
        table = _grouped_table(seed)
        integers = pa.types.is_integer(table.schema.field("actual").type.value_type)
        weights = integer_weights(len(table), f"{name}-{seed}")
        table = with_weights(table, weights)
        weight = ", sample_weight := w" if weighted else ""
        calls = [
            f"{name}(actual, predicted{weight}{_sql_params(p, integers)})"
            for p in ref.params_for(table)
        ]
        con.register("t", table)
        got = con.sql(f"SELECT g, {', '.join(calls)} FROM t GROUP BY g ORDER BY g").fetchall()
        assert [g[0] for g in got] == sorted(set(table.column("g").to_pylist()))
        for g, *values in got:
            part = table.filter(pc.equal(table.column("g"), g))
            if weighted:
                part = repeated(part, part.column("w").to_pylist())
            for params, value in zip(ref.params_for(table), values, strict=True):
                want = ref.expected(part, params)
                assert same(value, want), (name, seed, g, params, value, want)


def test_a_group_without_known_rows_gives_null_and_no_rows_give_null(con):
    con.sql(
        "CREATE OR REPLACE TABLE nothing_known AS SELECT * FROM (VALUES ('x', NULL, ['a']), ('y', ['a'], ['a'])) "
        "v(g, actual, predicted)"
    )
    got = con.sql(
        "SELECT g, macro_f1(actual, predicted), weighted_f1(actual, predicted) "
        "FROM nothing_known GROUP BY g ORDER BY g"
    ).fetchall()
    assert got == [("x", None, None), ("y", 1.0, 1.0)]
    empty = con.sql("SELECT macro_f1(actual, predicted) FROM nothing_known WHERE false").fetchall()
    assert empty == [(None,)]


def test_the_table_macro_of_the_same_name_stays(con):
    con.register("preds", _preds())
    table = con.sql(
        "SELECT * FROM macro_f1('preds', 'actual', 'predicted', \"by\" := ['model']) ORDER BY model"
    ).fetchall()
    aggregate = con.sql(
        "SELECT model, macro_f1(actual, predicted) FROM preds GROUP BY model ORDER BY model"
    ).fetchall()
    assert [m for m, _ in table] == ["m0", "m1", "m2"]
    for (m1, v1), (m2, v2) in zip(table, aggregate, strict=True):
        assert m1 == m2 and same(v1, v2)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            "macro_f1(actual, predicted, zero_division := 'warn')",
            "The 'zero_division' parameter of macro_f1 must be",
        ),
        (
            "macro_fbeta(actual, predicted, beta := -1)",
            "The 'beta' parameter of macro_fbeta must be",
        ),
        ("macro_f1(actual, predicted, labels := [])", "The 'labels' parameter of macro_f1 must"),
        (
            "weighted_f1(actual, predicted, sample_weight := -1)",
            "The 'sample_weight' parameter of weighted_f1 must be a finite number >= 0",
        ),
        (
            "macro_f1(actual, [1, 2])",
            "macro_f1 needs actual and predicted of the same label type (both text, both "
            "integers, ...). Got actual VARCHAR[] and predicted INTEGER[].",
        ),
        (
            "macro_f1(actual, predicted, labels := [1])",
            "The 'labels' parameter of macro_f1 must hold labels of the columns' type "
            "(VARCHAR[]): text. Got [1] instead.",
        ),
    ],
)
def test_bad_arguments_raise_mlsql_messages(con, call, message):
    con.sql("CREATE OR REPLACE TABLE bad AS SELECT ['a'] AS actual, ['a', 'b'] AS predicted")
    with pytest.raises(duckdb.Error, match=re.escape(message)):
        con.sql(f"SELECT {call} FROM bad").fetchall()
