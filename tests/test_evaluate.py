"""``evaluate`` on every engine, driven by the registry: each aggregate measure's estimate equals
its independent reference (``tests/references.py``) per group, with and without ``sample_weight``.

A weighted estimate is checked against the reference on the rows repeated as many times as
their (whole) weight says, a NULL weight dropping the row. Hostile column names, refused
measures and ``by`` columns, and the did-you-mean message are checked on every engine too.
"""

from __future__ import annotations

import random
import re
from fractions import Fraction
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from mlsql._errors import MlsqlError
from mlsql._registry import REGISTRY, measures
from mlsql._resample.labels import MEASURES as LABEL_MEASURES
from tests.references import REFERENCES, close, tables

#: the inputs that hold the truth (the others hold the prediction): evaluate's ``actual``
TRUTH = ("actual", "label", "correct_items", "ideal_relevance", "holds")
#: aggregates evaluate refuses (they give no number), and those checked elsewhere
REFUSED = ("majority_class", "minority_class", "cost_map", "bpref")
#: the per-label averages of label lists that bootstrap takes: table functions, and evaluate's
LABEL_AVERAGES = set(LABEL_MEASURES)
EVALUATED = [
    m
    for m in measures()
    if (m.kind == "aggregate" and m.name not in REFUSED) or m.name in LABEL_AVERAGES
]
#: Spark runs a query per call: it meets one random table of each kind (and the table of
#: unknown rows, and the empty one); DuckDB and Polars meet three. Each table gets one
#: parameter set of each measure, taken in turn (the formulas are shared: evaluate's part is
#: the plan around them, and tests/test_every_measure.py checks every set)
SEEDS = {"duckdb": range(3), "polars": range(3), "spark": range(1)}


def run(engine: Any, table: pa.Table, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """``evaluate`` of ``engine`` on ``table``, its rows as dicts, in the order it gives them."""
    if engine.name == "duckdb":
        import mlsql

        out = mlsql.evaluate(table, *args, con=engine.con, **kwargs).to_arrow_table()
    elif engine.name == "polars":
        import polars as pl

        import mlsql.polars as mp

        lazy = mp.evaluate(pl.from_arrow(table).lazy(), *args, **kwargs)  # type: ignore[union-attr]
        assert isinstance(lazy, pl.LazyFrame)  # the kind it was given
        out = lazy.collect().to_arrow()
    else:
        import mlsql.spark as ms
        from tests.engines.spark_engine import frame

        out = ms.evaluate(frame(table), *args, **kwargs).toArrow()
    assert out.schema.field("estimate").type == pa.float64()
    return out.to_pylist()


def columns_of(name: str) -> tuple[str, str]:
    """(actual, predicted) of a measure: the truth first whatever order it takes them in."""
    inputs = tuple(c for c in REGISTRY[name].inputs if c != "source")  # a table function's
    if len(inputs) == 1:
        return inputs[0], "predicted"
    truth = [c for c in inputs if c in TRUTH]
    other = [c for c in inputs if c not in TRUTH]
    return truth[0], other[0]


def label(name: str, params: dict[str, Any]) -> str:
    """The documented ``measure`` value: the name, and its parameters sorted, as ``k=v``."""
    if not params:
        return name
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in sorted(params.items()))})"


def _cases() -> list[tuple[str, str, str]]:
    found = {
        (REFERENCES[m.name].data, *columns_of(m.name)) for m in EVALUATED if m.name in REFERENCES
    }
    return sorted(found)


def _with_groups_and_weights(table: pa.Table, seed: int) -> pa.Table:
    rng = random.Random(f"evaluate-{seed}-{table.num_rows}")
    n = table.num_rows
    groups = [rng.choice([0, 1, None]) for _ in range(n)]
    weights = [rng.choice([1, 1, 2, 3, None]) for _ in range(n)]
    table = table.append_column("g", pa.array(groups, pa.int64()))
    return table.append_column("w", pa.array(weights, pa.int64()))


def _repeated(table: pa.Table) -> pa.Table:
    """The rows repeated by their weight (a NULL weight drops the row). Weights are whole and
    at least 1: a group whose rows all weigh 0 is a group of known rows of total weight 0,
    which a repeated table cannot stand for."""
    index = [i for i, w in enumerate(table.column("w").to_pylist()) if w for _ in range(w)]
    return table.take(pa.array(index, pa.int64()))


def _group(table: pa.Table, value: Any) -> pa.Table:
    g = table.column("g")
    return table.filter(pc.is_null(g) if value is None else pc.equal(g, value))


def _calls(engine: Any, data: str, actual: str, predicted: str, table: pa.Table, i: int) -> list:
    out = []
    for m in EVALUATED:
        ref = REFERENCES.get(m.name)
        if ref is None or ref.data != data or columns_of(m.name) != (actual, predicted):
            continue
        sets = ref.params_for(table)
        out.append((m.name, dict(sets[i % len(sets)])))
    return out


def _compare(got: list[dict[str, Any]], want: list[tuple[Any, str, Any]], table: pa.Table) -> None:
    shown = [(r.get("g"), r["measure"], r["estimate"]) for r in got]
    assert [(g, m) for g, m, _ in shown] == [(g, m) for g, m, _ in want], table.to_pylist()
    wrong = [f"{w} got {g}" for g, w in zip(shown, want, strict=True) if not close(g[2], w[2])]
    assert not wrong, "\n".join(wrong) + f"\non {table.to_pylist()}"


@pytest.mark.long_cases(
    "duckdb-binary-actual-predicted",
    "duckdb-classes-actual-predicted",
    "duckdb-label_lists-actual-predicted",
    "duckdb-numbers-actual-predicted",
    "duckdb-probabilities-actual-score",
    "duckdb-ranked-correct_items-rank_items",
    "duckdb-score_maps-actual-scores",
    "polars-binary-actual-predicted",
    "polars-classes-actual-predicted",
    "polars-label_lists-actual-predicted",
    "polars-numbers-actual-predicted",
    "polars-probabilities-actual-score",
    "polars-ranked-correct_items-rank_items",
    "polars-score_maps-actual-scores",
)
@pytest.mark.parametrize(("data", "actual", "predicted"), _cases())
def test_estimates_equal_the_reference_per_group_and_weighted(engine, data, actual, predicted):
    for i, table in enumerate(tables(data, SEEDS[engine.name], no_rows=True)):
        table = _with_groups_and_weights(table, i)
        calls = _calls(engine, data, actual, predicted, table, i)
        labels = [label(name, p) for name, p in calls]
        # no groups, no weights: one row per measure, even on an empty table
        got = run(engine, table, actual, predicted, calls)
        want = [
            (None, lab, REFERENCES[name].expected(table, p))
            for lab, (name, p) in zip(labels, calls, strict=True)
        ]
        _compare(got, want, table)
        # groups (NULL first) and whole weights
        weighted = [(n, p) for n, p in calls if REGISTRY[n].weighted]
        got = run(engine, table, actual, predicted, weighted, by="g", sample_weight="w")
        keys = sorted(set(table.column("g").to_pylist()), key=lambda v: (v is not None, v))
        want = [
            (key, label(name, p), REFERENCES[name].expected(_repeated(_group(table, key)), p))
            for key in keys
            for name, p in weighted
        ]
        _compare(got, want, table)


def test_every_evaluated_measure_is_checked():
    """Each aggregate evaluate takes has a reference here (cost_error's costs: its own test)."""
    missing = [m.name for m in EVALUATED if m.name not in REFERENCES and m.name != "cost_error"]
    assert not missing


def test_cost_error_with_a_cost_map(engine):
    table = pa.table({"actual": ["x", "y", "y", None], "predicted": ["y", "y", "x", "x"]})
    costs = {"x": {"y": 4.0}, "y": {"x": 0.5}}
    (row,) = run(engine, table, "actual", "predicted", [("cost_error", {"costs": costs})])
    # (4 + 0 + 0.5) / 3 known rows
    assert close(row["estimate"], 4.5 / 3)


def test_hostile_names(engine):
    """Columns named ``a"b``, ``*`` and ``measure`` (a weight may be named so) are only names."""
    table = pa.table(
        {
            'a"b': [["x"], ["x", "y"], ["y"], []],
            "*": [["x"], ["y"], ["y"], ["x"]],
            "measure": [1.0, 2.0, 0.0, 1.0],
            "g.h `x`": ["u", "v", "u", "v"],
        }
    )
    got = run(engine, table, 'a"b', "*", ["micro_f1"], by="g.h `x`", sample_weight="measure")
    # u: tp 1 (the other row weighs 0) -> 1; v: tp 2, fn 2 (weight 2), fp 1 -> 4 / 7
    assert [(r["g.h `x`"], r["measure"]) for r in got] == [("u", "micro_f1"), ("v", "micro_f1")]
    assert close(got[0]["estimate"], 1.0) and close(got[1]["estimate"], Fraction(4, 7))


@pytest.mark.parametrize("kind", ["int", "bool"])
def test_fmeasure_of_binary_labels_is_hivemall_s(engine, kind):
    """Hivemall's fmeasure of int (1, 0, -1) and boolean labels, every option of the
    conformance data: Spark's evaluate took every fmeasure for label arrays (a raw
    array_except error, or '-average binary' refused as if the inputs were arrays)."""
    from tests.test_hivemall import DATA, binary_table

    chosen = [
        (
            "fmeasure",
            {"options": e.removeprefix("fmeasure(actual, predicted, '").removesuffix("')")},
        )
        for e in DATA["expected"]
    ]
    got = run(engine, binary_table(kind), "actual", "predicted", chosen)
    for row, want in zip(got, DATA["expected"].values(), strict=True):
        assert close(row["estimate"], want), row


@pytest.mark.parametrize(
    ("measure", "param"),
    [("prevalence", "positive"), ("class_error_rate", "label"), ("cost_error", "costs")],
)
def test_a_missing_class_parameter_is_named_alike(engine, measure, param):
    # DuckDB's macro call did not bind: a raw "does not support the supplied arguments"
    table = pa.table({"actual": ["a", "b", "a"], "predicted": ["a", "a", "b"]})
    with pytest.raises(MlsqlError, match=f"^{measure} needs the '{param}' parameter \\("):
        run(engine, table, "actual", "predicted", [measure])


@pytest.mark.parametrize(
    "measure", ["coverage_error", "multilabel_roc_auc", "multiclass_brier_score", "ndcg_score"]
)
@pytest.mark.parametrize(
    "scores", [pa.array([["a"], ["b"]]), pa.array(["a", "b"]), pa.array([0.5, 0.2])]
)
def test_scores_that_are_no_map_are_refused_alike(engine, measure, scores):
    # DuckDB's and Spark's map functions did not bind: raw binder and analyzer errors
    truth = ["a", "b"] if measure == "multiclass_brier_score" else [["a"], ["b"]]
    table = pa.table({"actual": truth, "predicted": scores})
    said = f"{measure} takes scores as a map or a list of (label, score) structs per row"
    with pytest.raises(MlsqlError, match=re.escape(said)):
        run(engine, table, "actual", "predicted", [measure])


def test_label_lists_checked_beside_a_single_label_measure(engine):
    # DuckDB wrote the list measure beside accuracy's class lists: a raw GROUP BY error
    table = pa.table({"actual": ["a", "b", "a"], "predicted": ["a", "a", "a"]})
    with pytest.raises(Exception, match="macro_f1 takes a list of labels per row for actual"):
        run(engine, table, "actual", "predicted", ["accuracy", "macro_f1"])


@pytest.mark.parametrize("measure", ["micro_f1", "samples_jaccard", "macro_f1", "fmeasure"])
def test_label_lists_of_two_kinds_are_refused_alike(engine, measure):
    # Spark's analyzer failed on its set functions (array_intersect of bigint and string)
    table = pa.table(
        {
            "actual": pa.array([[1, 2], [3]], pa.list_(pa.int64())),
            "predicted": pa.array([["1"], ["3"]], pa.list_(pa.string())),
        }
    )
    with pytest.raises(Exception, match=r"Got actual .+ and predicted .+") as raised:
        run(engine, table, "actual", "predicted", [(measure, {})])
    said = str(raised.value)
    assert f"{measure} needs actual and predicted of " in said, said
    assert "the same label type" in said or "one kind" in said, said


@pytest.mark.parametrize(
    ("measure", "actual", "predicted", "message"),
    [
        ("auc", ["0", "1"], [0.1, 0.4], "auc takes boolean or 0/1 values for actual."),
        ("brier_score_loss", ["0", "1"], [0.1, 0.4], "takes boolean or 0/1 values for actual."),
        ("mse", ["1", "2"], [1.0, 2.0], "mse takes numbers for actual."),
        ("r2", [1.0, 2.0], ["1", "2"], "r2 takes numbers for predicted."),
        ("binary_precision", ["1", "0"], [1, 0], "takes boolean or 0/1 values for actual."),
    ],
)
def test_text_columns_are_no_numbers(engine, measure, actual, predicted, message):
    """As the measures' functions say: Spark's evaluate cast text columns to DOUBLE ('0' and
    '1' were labels, and the auc of text labels 0.5)."""
    table = pa.table({"actual": actual, "predicted": predicted})
    with pytest.raises(Exception, match=re.escape(message)):
        run(engine, table, "actual", "predicted", [measure])


@pytest.mark.parametrize("by", ["measure", "estimate"])
def test_by_named_as_an_output_is_refused(engine, by):
    table = pa.table({"actual": ["x"], "predicted": ["x"], by: [1]})
    message = f"evaluate: the by column '{by}' has the name of an output column."
    with pytest.raises(MlsqlError, match=re.escape(message)):
        run(engine, table, "actual", "predicted", ["accuracy"], by=by)


@pytest.mark.parametrize(
    ("by", "shown"), [(3, "3"), ({"g": 1}, "{'g': 1}"), (["g", 2], "['g', 2]")]
)
def test_a_by_that_is_not_names_is_refused(engine, by, shown):
    """Not a TypeError of list(3) in Python, nor a by ignored in SQL: BY_MESSAGE everywhere."""
    table = pa.table({"actual": ["x"], "predicted": ["x"], "g": ["u"]})
    message = f"The 'by' parameter of evaluate must be column names (strings). Got {shown} instead."
    with pytest.raises(MlsqlError, match=re.escape(message)):
        run(engine, table, "actual", "predicted", ["accuracy"], by=by)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("micro_f2", "evaluate: there is no measure 'micro_f2'. Did you mean 'micro_f1'? It takes"),
        ("zzzzzzzzzzzz", "evaluate: there is no measure 'zzzzzzzzzzzz'. It takes the aggregate"),
        (
            "label_metrics",
            "evaluate takes aggregate measures, one number per group: label_metrics is not one "
            "(a table function: call it on its own)",
        ),
        ("majority_class", "majority_class is not one (it gives a class, not a number)"),
        ("bpref", "bpref is not one (it takes a third column, the judged non-relevant items"),
    ],
)
def test_measures_it_does_not_take_are_refused_alike(engine, given, message):
    table = pa.table({"actual": ["x"], "predicted": ["x"]})
    with pytest.raises(MlsqlError, match=re.escape(message)):
        run(engine, table, "actual", "predicted", ["accuracy", given])


def test_parameters_are_checked_as_the_measures_check_them(engine):
    table = pa.table({"actual": [["x"]], "predicted": [["x"]]})
    message = "The 'beta' parameter of micro_fbeta must be a finite number > 0. Got -1 instead."
    with pytest.raises(MlsqlError, match=re.escape(message)):
        run(engine, table, "actual", "predicted", [("micro_fbeta", {"beta": -1})])
    with pytest.raises(MlsqlError, match="evaluate takes sample_weight itself"):
        run(engine, table, "actual", "predicted", [("micro_f1", {"sample_weight": "w"})])


#: the regression measures evaluate takes over (actual, predicted)
SMALL_REGRESSION = ("mse", "rmse", "mae", "mape", "rse", "rrse", "rae", "r2", "explained_variance")


@pytest.mark.parametrize("scale", [2.0**-35, 2.0**-62])
def test_regression_of_small_values_keeps_the_contract(engine, scale):
    # values near 3e-11 (and 2e-19, below mape's floor of |y|) and weights near 1e-9: Spark's
    # exact sums kept each term to 2**-64, so its mse there was 0 and its r2 off by 1e-3
    rng = random.Random(11)
    y = [rng.randint(-1000, 1000) / 8 * scale for _ in range(120)]
    p = [v + rng.randint(-40, 40) / 8 * scale for v in y]
    whole = [rng.randint(1, 4) for _ in y]
    table = pa.table(
        {"actual": y, "predicted": p, "w": [c * 2.0**-30 for c in whole], "g": [0] * len(y)}
    )
    calls = [(name, {}) for name in SMALL_REGRESSION]
    plain = run(engine, table, "actual", "predicted", calls)
    weighted = run(engine, table, "actual", "predicted", calls, sample_weight="w")
    repeated = pa.table(
        {
            "actual": [v for v, c in zip(y, whole, strict=True) for _ in range(c)],
            "predicted": [v for v, c in zip(p, whole, strict=True) for _ in range(c)],
        }
    )
    for got, reference in ((plain, table), (weighted, repeated)):
        want = [(None, name, REFERENCES[name].expected(reference, {})) for name, _ in calls]
        _compare(got, want, reference)


def test_a_bad_weight_is_refused_in_evaluates_words(engine):
    table = pa.table({"actual": ["x", "y"], "predicted": ["x", "x"], "w": [1.0, -2.0]})
    message = "The 'sample_weight' parameter of evaluate must be a finite number >= 0"
    with pytest.raises(Exception, match=re.escape(message)):
        run(engine, table, "actual", "predicted", ["accuracy"], sample_weight="w")


def _jar_used() -> bool:
    from pyspark.sql import functions as F

    from mlsql.spark.jvm import co_moment

    return co_moment(F.lit(1.0)) is not None


@pytest.mark.parametrize(
    ("setting", "classes"),
    [("true", "string"), ("false", "string"), ("true", "decimal(4,1)")],
    ids=["jar", "no-jar", "decimal-classes"],
)
def test_spark_class_measures_hold_cells_not_rows(setting, classes):
    """The class measures count each group's confusion cells: in mlsql's Java aggregate where
    its jar is used and counts the classes (text, not decimals), else as distinct
    (actual, predicted) cells grouped first (two levels); never a group's rows. Accuracy
    alone is a count over the rows (no cells grouped). The same values every way."""
    pytest.importorskip("pyspark")
    import mlsql.spark as ms
    from tests.engines.spark_engine import frame, session

    spark = session()
    spark.conf.set("spark.mlsql.jvm", setting)
    try:
        java = setting == "true" and classes == "string" and _jar_used()
        table = pa.table({"g": [1, 1, 2], "actual": ["1", "2", "1"], "predicted": ["1"] * 3})
        df = frame(table)
        df = df.select("g", *(df[c].cast(classes).alias(c) for c in ("actual", "predicted")))
        asked = [("f1_score", {"average": "macro"}), "majority_error"]
        out = ms.evaluate(df, "actual", "predicted", asked, by="g")
        plan = out._jdf.queryExecution().optimizedPlan().toString()
        accuracy = ms.evaluate(df, "actual", "predicted", ["accuracy"], by="g")
        counted = accuracy._jdf.queryExecution().optimizedPlan().toString()
        got = [tuple(r) for r in out.collect()]
    finally:
        spark.conf.unset("spark.mlsql.jvm")
    aggregates = re.findall(r"Aggregate \[([^\]]*)\]", plan)
    grouped = any("__mlsql_a" in keys and "__mlsql_p" in keys for keys in aggregates)
    assert grouped != java, plan
    assert ("mlsql_class_cells" in plan) == java, plan
    assert ("collect_list" in plan) != java, plan  # two levels: the grouped cells collected
    assert not any("__mlsql_a" in keys for keys in re.findall(r"Aggregate \[([^\]]*)\]", counted))
    assert got == [
        (1, "f1_score(average='macro')", pytest.approx(1 / 3, rel=1e-12)),
        (1, "majority_error", 0.5),
        (2, "f1_score(average='macro')", 1.0),
        (2, "majority_error", 0.0),
    ]


def _far_from_zero() -> pa.Table:
    """Two groups of values near 1e12 (exact in binary: eighths), each with its own spread."""
    rows = []
    for g, spread in ((1, 1), (2, 3)):
        for i in range(40):
            y = 10**12 + Fraction(i * spread, 8)
            rows.append({"g": g, "y": float(y), "p": float(y + Fraction((-1) ** i * (i % 5), 4))})
    return pa.Table.from_pylist(rows)


def _exact_regression(rows: list[dict[str, Any]]) -> dict[str, Fraction]:
    """r2, rse and rae from the exact values (a plain-Python oracle, in fractions)."""
    y = [Fraction(r["y"]) for r in rows]
    p = [Fraction(r["p"]) for r in rows]
    mean = sum(y) / len(y)
    sse = sum((a - b) ** 2 for a, b in zip(y, p, strict=True))
    sst = sum((a - mean) ** 2 for a in y)
    sae = sum(abs(a - b) for a, b in zip(y, p, strict=True))
    sad = sum(abs(a - mean) for a in y)
    return {"r2": 1 - sse / sst, "rse": sse / sst, "rae": sae / sad}


def test_spark_evaluates_regression_from_grouped_sums_not_rows():
    """The regression measures' bounded plan: no Spark aggregate holds a group's values, and
    the centred sums stay exact far from zero (values near 1e12, against exact fractions)."""
    pytest.importorskip("pyspark")
    import mlsql.spark as ms
    from tests.engines.spark_engine import frame

    table = _far_from_zero()
    out = ms.evaluate(frame(table), "y", "p", ["r2", "rse", "rae"], by="g")
    plan = out._jdf.queryExecution().optimizedPlan().toString()
    assert "collect_list" not in plan and "collect_set" not in plan, plan
    for r in out.collect():
        group = [row for row in table.to_pylist() if row["g"] == r["g"]]
        want = float(_exact_regression(group)[r["measure"]])
        assert abs(r["estimate"] - want) <= 1e-12 * abs(want), (r, want)


@pytest.mark.parametrize("weighted", [False, True])
def test_duckdb_evaluates_regression_from_grouped_sums_not_rows(weighted):
    """DuckDB's ``evaluate`` of the regression measures runs grouped passes, as Spark's: no
    aggregate of its plan holds a group's values (a ``list``), and the centred sums stay exact
    far from zero (values near 1e12, against exact fractions; every weight 1)."""
    import mlsql
    from mlsql._duckdb.evaluate import evaluate_sql
    from mlsql._evaluate import front as EV

    table = _far_from_zero().append_column("c", pa.array([1.0] * 80))
    weight = "c" if weighted else None
    asked = ["r2", "rse", "rae", "micro_f1"][:3]
    con = mlsql.connect()
    con.register("t", table)
    req = EV.request(table.column_names, "y", "p", asked, "g", weight)
    plan = "\n".join(
        r[-1] for r in con.execute("EXPLAIN " + evaluate_sql(req, "FROM t", "y", "p")).fetchall()
    )
    held = re.findall(r"\b(list|array_agg|histogram)\(", plan)
    assert not held, plan
    out = mlsql.evaluate(table, "y", "p", asked, by="g", sample_weight=weight, con=con)
    for g, measure, estimate in out.fetchall():
        group = [row for row in table.to_pylist() if row["g"] == g]
        want = float(_exact_regression(group)[measure])
        assert abs(estimate - want) <= 1e-12 * abs(want), (g, measure, estimate, want)


def _duckdb_query(table: pa.Table, asked: list[Any], weight: str | None) -> tuple[Any, str]:
    """An mlsql connection holding ``table`` as ``t``, and DuckDB evaluate's query of the
    measures ``asked`` of its columns ``a`` and ``p`` by ``g``."""
    import mlsql
    from mlsql._duckdb.evaluate import evaluate_sql
    from mlsql._evaluate import front as EV

    con = mlsql.connect()
    con.register("t", table)
    req = EV.request(table.column_names, "a", "p", asked, "g", weight)
    return con, evaluate_sql(req, "FROM t", "a", "p", con)


def _assert_equals_per_group(
    con: Any,
    rows: list[dict[str, Any]],
    asked: list[Any],
    weight: str | None,
    reference: dict[str, Any],
    encode: Any = list,
) -> None:
    """DuckDB evaluate's estimate of each measure ``asked`` of ``rows`` by ``g`` is
    ``reference[label](actual, predicted, weights)`` over the group's rows (each column's
    values through ``encode``)."""
    import mlsql

    table = pa.Table.from_pylist(rows)
    got = mlsql.evaluate(table, "a", "p", asked, by="g", sample_weight=weight, con=con).fetchall()
    assert len(got) == 2 * len(asked)
    for g, measure, estimate in got:
        group = [r for r in rows if r["g"] == g]
        w = [r["w"] for r in group] if weight else None
        y, p = (encode([r[c] for r in group]) for c in "ap")
        want = reference[measure](y, p, w)
        assert estimate == pytest.approx(want, rel=1e-12, abs=1e-15), (g, measure)


@pytest.mark.parametrize("weighted", [False, True])
def test_duckdb_evaluates_class_measures_from_one_class_list_per_group(weighted):
    """DuckDB's ``evaluate`` builds each group's class lists once and runs every class-wise
    measure's formula over them (no measure's own macro, which would build its own lists);
    with ``sample_weight`` the lists are built from the rows' cells (actual, predicted) with
    their summed weight, not from the rows. The values are scikit-learn's per group."""

    sk = pytest.importorskip("sklearn.metrics")
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    np = pytest.importorskip("numpy")
    rng = random.Random(7)
    rows = [
        {
            "g": rng.choice("xy"),
            "a": rng.choice("abc"),
            "p": rng.choice("abcd"),
            "w": rng.choice([0.5, 1.0, 2.0, 3.0]),
        }
        for _ in range(400)
    ]
    table = pa.Table.from_pylist(rows)
    weight = "w" if weighted else None
    asked: list[Any] = [
        ("f1_score", {"average": "macro"}),
        ("precision_score", {"average": "weighted", "labels": ["a", "b", "z"]}),
        "matthews_corrcoef",
        ("fbeta_score", {"beta": 2, "average": "micro"}),
        ("cohen_kappa_score", {"weights": "quadratic"}),
        "cohen_kappa_std_error",
    ]
    con, sql = _duckdb_query(table, asked, weight)
    called = r"(?<!')\b(f1_score|precision_score|matthews_corrcoef|fbeta_score|cohen_kappa_\w+)\("
    assert not re.search(called, sql), sql
    lists = "_mlsql_weighted_class_lists(" if weighted else "_mlsql_class_lists("
    assert sql.count(lists) == 1, sql
    assert sql.count(lists.replace("lists", "pairs")) == 1, sql
    if weighted:
        assert "_mlsql_weighted_class_lists(__mlsql_ca, " in sql, sql
        assert "_mlsql_weighted_class_pairs(__mlsql_ca, " in sql, sql

    def kappa_std_error(y: list[str], p: list[str], w: list[float] | None) -> float:
        classes = sorted(set(y) | set(p))
        table = np.zeros((len(classes), len(classes)))
        for k, (a, b) in enumerate(zip(y, p, strict=True)):
            table[classes.index(a), classes.index(b)] += 1.0 if w is None else w[k]
        return float(inter_rater.cohens_kappa(table).std_kappa)

    reference = {
        "f1_score(average='macro')": lambda y, p, w: sk.f1_score(
            y, p, average="macro", sample_weight=w, zero_division=0
        ),
        "precision_score(average='weighted', labels=['a', 'b', 'z'])": lambda y, p, w: (
            sk.precision_score(
                y, p, average="weighted", labels=["a", "b", "z"], sample_weight=w, zero_division=0
            )
        ),
        "matthews_corrcoef": lambda y, p, w: sk.matthews_corrcoef(y, p, sample_weight=w),
        "fbeta_score(average='micro', beta=2)": lambda y, p, w: sk.fbeta_score(
            y, p, beta=2, average="micro", sample_weight=w
        ),
        "cohen_kappa_score(weights='quadratic')": lambda y, p, w: sk.cohen_kappa_score(
            y, p, weights="quadratic", sample_weight=w
        ),
        "cohen_kappa_std_error": kappa_std_error,
    }
    _assert_equals_per_group(con, rows, asked, weight, reference)


@pytest.mark.parametrize("weighted", [False, True])
def test_duckdb_writes_the_label_set_formulas_with_checked_parameters(weighted):
    """DuckDB's ``evaluate`` writes the label-set aggregates' formulas into its query, their
    parameters checked constants (no measure's macro, whose checks bind at every use of a
    parameter); the values are scikit-learn's per group, the column types are checked as
    the macros check them, in the same words."""
    import mlsql

    sk = pytest.importorskip("sklearn.metrics")
    binarizer = pytest.importorskip("sklearn.preprocessing").MultiLabelBinarizer(
        classes=list("abcd")
    )
    rng = random.Random(11)
    rows = [
        {
            "g": rng.choice("xy"),
            "a": rng.sample("abcd", rng.randint(1, 3)),
            "p": rng.sample("abcd", rng.randint(1, 3)),
            "w": rng.choice([0.5, 1.0, 2.0, 3.0]),
        }
        for _ in range(300)
    ]
    table = pa.Table.from_pylist(rows)
    weight = "w" if weighted else None
    asked: list[Any] = [
        ("micro_fbeta", {"beta": 2}),
        "micro_jaccard",
        ("samples_fbeta", {"beta": 0.5}),
        "samples_precision",
        "subset_accuracy",
        ("hamming_loss", {"n_labels": 4}),
    ]
    con, sql = _duckdb_query(table, asked, weight)
    called = r"(?<!')\b(micro_\w+|samples_\w+|subset_accuracy|hamming_loss|_mlsql_check_\w+)\("
    assert not re.search(called, sql), sql

    def scores(metric: Any, **kw: Any) -> Any:
        return lambda y, p, w: metric(y, p, sample_weight=w, zero_division=0, **kw)

    reference = {
        "micro_fbeta(beta=2)": scores(sk.fbeta_score, beta=2, average="micro"),
        "micro_jaccard": scores(sk.jaccard_score, average="micro"),
        "samples_fbeta(beta=0.5)": scores(sk.fbeta_score, beta=0.5, average="samples"),
        "samples_precision": scores(sk.precision_score, average="samples"),
        "subset_accuracy": lambda y, p, w: sk.accuracy_score(y, p, sample_weight=w),
        "hamming_loss(n_labels=4)": lambda y, p, w: sk.hamming_loss(y, p, sample_weight=w),
    }
    _assert_equals_per_group(con, rows, asked, weight, reference, binarizer.fit_transform)
    # a text list against an integer list: the macro's error
    con.execute("CREATE TABLE mixed AS SELECT ['a'] AS a, [1] AS p, 1.0 AS w")
    with pytest.raises(Exception) as macro:
        con.sql("SELECT samples_fbeta(a, p, beta := 0.5) FROM mixed").fetchall()
    with pytest.raises(Exception) as evaluated:
        mlsql.evaluate("mixed", "a", "p", asked[2:], sample_weight=weight, con=con)
    assert "samples_fbeta needs actual and predicted of the same label type" in str(macro.value)
    assert str(evaluated.value) == str(macro.value)


@pytest.mark.long
def test_duckdb_regression_passes_read_one_rounding_of_each_mean():
    """At a million rows per group DuckDB's parallel ``avg`` rounds differently from one run
    to the next: a pass that computed a group's mean again (rae's shift, from rows joined to
    their means) summed |d - c| against another rounding, off by 1e-6 relative. Each mean is
    computed once. Values near 1e12 (eighths) against exact integer sums."""
    import mlsql

    con = mlsql.connect()
    n = 4_000_000
    con.execute(
        "CREATE TABLE t AS SELECT (i % 2) AS g, (hash(i) % 1000)::BIGINT AS ky, "
        f"(hash(i + 7) % 1000)::BIGINT AS kp FROM range({n}) r(i)"
    )
    con.execute("CREATE VIEW v AS SELECT g, 1e12 + ky / 8.0 AS y, 1e12 + kp / 8.0 AS p FROM t")
    got = mlsql.evaluate("v", "y", "p", ["rae", "r2"], by="g", con=con).fetchall()
    for g in (0, 1):
        ky, kp = zip(*con.execute("SELECT ky, kp FROM t WHERE g = ?", [g]).fetchall(), strict=True)
        m, total = len(ky), sum(ky)
        sae = sum(abs(a - b) for a, b in zip(ky, kp, strict=True))
        sad = Fraction(sum(abs(m * a - total) for a in ky), m)
        sse = sum((a - b) ** 2 for a, b in zip(ky, kp, strict=True))
        sst = Fraction(sum((m * a - total) ** 2 for a in ky), m * m)
        want = {"rae": float(sae / sad), "r2": float(1 - sse / sst)}
        for group, measure, estimate in got:
            if group == g:
                assert abs(estimate - want[measure]) <= 1e-12 * abs(want[measure]), (g, measure)


@pytest.mark.long
def test_spark_regression_passes_sum_exactly_at_a_million_rows_per_group():
    """The passes' centred sums are exact sums (``exact_sum``): a DOUBLE ``sum`` of them put
    r2 and explained variance 4e-11 off at 1.25M rows per group near 1e12. Values near 1e12
    (eighths, from hashes of the row number), against exact integer sums."""
    pytest.importorskip("pyspark")
    from pyspark.sql import functions as F

    import mlsql.spark as ms
    from tests.engines.spark_engine import codegen, session

    ids = session().range(2_500_000)
    keys = ids.select(
        (F.col("id") % 2).alias("g"),
        (F.abs(F.hash("id")) % 1000).cast("long").alias("ky"),
        (F.abs(F.hash(F.col("id") + 7)) % 1000).cast("long").alias("kp"),
    )
    df = keys.select(
        "g",
        (F.lit(1e12) + F.col("ky") / 8.0).alias("y"),
        (F.lit(1e12) + F.col("kp") / 8.0).alias("p"),
    )
    with codegen(session()):  # compiled: 2.5M rows (179 s interpreted, 2 cores, CI's load)
        out = ms.evaluate(df, "y", "p", ["r2", "explained_variance", "rae"], by="g").collect()
    got = {(r["g"], r["measure"]): r["estimate"] for r in out}
    # the oracle: integer sums in Spark (exact in BIGINT), then fractions in Python
    e = F.col("ky") - F.col("kp")
    sums = keys.groupBy("g").agg(
        F.count("*").alias("m"),
        F.sum("ky").alias("s"),
        F.sum(F.col("ky") * F.col("ky")).alias("q"),
        F.sum(e * e).alias("sse"),
        F.sum(F.abs(e)).alias("sae"),
        F.sum(e).alias("se"),
    )
    with_sums = keys.join(sums, "g")
    sad = with_sums.groupBy("g").agg(
        F.sum(F.abs(F.col("m") * F.col("ky") - F.col("s"))).alias("sad")
    )
    with codegen(session()):
        oracle = sums.join(sad, "g").collect()
    for r in oracle:
        m = r["m"]
        sst = Fraction(m * r["q"] - r["s"] ** 2, m)
        var_err = Fraction(m * r["sse"] - r["se"] ** 2, m * m)
        want = {
            "r2": float(1 - r["sse"] / sst),
            "explained_variance": float(1 - var_err / (sst / m)),
            "rae": float(r["sae"] / Fraction(r["sad"], m)),
        }
        for measure, value in want.items():
            got_value = got[(r["g"], measure)]
            assert abs(got_value - value) <= 1e-12 * abs(value), (r["g"], measure, got_value, value)


def test_spark_regression_passes_broadcast_no_hash_relation():
    """The grouped passes join the rows to their group's means without a broadcast hash
    relation: Spark sizes its first page by the heap (16-64 MB however few the groups) and
    keeps it on the driver's heap while the plan lives, which ended a long test session's JVM.
    The passes run so beside other measures too, and the docstrings name them as the bounded
    form."""
    pytest.importorskip("pyspark")
    import mlsql.spark as ms
    from tests.engines.spark_engine import frame

    table = _far_from_zero().append_column("c", pa.array([1] * 80, pa.int64()))
    for asked in (["r2", "rae"], ["r2", "rae", "accuracy"]):
        out = ms.evaluate(frame(table), "y", "p", asked, by="g", sample_weight="c")
        plan = out._jdf.queryExecution().executedPlan().toString()
        assert "HashedRelationBroadcastMode" not in plan, plan
        assert "collect_list" not in plan and "collect_set" not in plan, plan
        got = {(r["g"], r["measure"]): r["estimate"] for r in out.collect()}
        for g in (1, 2):
            group = [row for row in table.to_pylist() if row["g"] == g]
            want = float(_exact_regression(group)["r2"])
            assert abs(got[(g, "r2")] - want) <= 1e-12 * abs(want)
    for name in ("r2", "rse", "rrse", "explained_variance", "pearson_corr", "rae"):
        assert "grouped passes" in " ".join(getattr(ms, name).__doc__.split()), name


# ------------------------------------------------------------------ the SQL table macro
def _sql(con: Any, table: pa.Table, args: str, values: list[Any]) -> list[tuple[Any, ...]]:
    con.register("t", table)
    try:
        return con.execute(f"FROM evaluate('t', {args})", values).fetchall()
    finally:
        con.unregister("t")


@pytest.mark.long
@pytest.mark.rotating  # (the Python call is checked against the references each run)
@pytest.mark.parametrize(("data", "actual", "predicted"), _cases())
def test_the_sql_macro_gives_the_python_calls_rows(data, actual, predicted):
    """Every measure of a kind with its default parameters, grouped and weighted, in SQL alone."""
    import mlsql

    con = mlsql.connect()
    first = tables(data, range(1))[0]
    names = sorted(
        n
        for n, _ in _calls(_DUCKDB, data, actual, predicted, first, 0)
        if not {p.name for p in REGISTRY[n].params} & set(REQUIRED)
    )
    for i, table in enumerate(tables(data, range(1), no_rows=True)):
        table = _with_groups_and_weights(table, i)
        for kwargs in ({}, {"by": "g", "sample_weight": "w"}):
            weighted = [n for n in names if REGISTRY[n].weighted or not kwargs]
            want = mlsql.evaluate(table, actual, predicted, weighted, con=con, **kwargs).fetchall()
            extra = "".join(f', "{k}" := ?' for k in kwargs)
            values = [actual, predicted, weighted, *kwargs.values()]
            got = _sql(con, table, f"?, ?, measures := ?{extra}", values)
            assert [r[:-1] for r in got] == [r[:-1] for r in want]
            assert all(close(g[-1], w[-1]) for g, w in zip(got, want, strict=True)), (got, want)


@pytest.mark.parametrize("weighted", [False, True])
def test_the_sql_macro_evaluates_regression_from_grouped_sums_not_rows(weighted):
    """The SQL macro ``evaluate`` runs the regression measures as the Python call's grouped
    passes: no aggregate of its plan holds a group's values (``list``), and the centred sums
    stay exact far from zero (values near 1e12, against exact fractions; every weight 1),
    beside a measure of another family in the same ``GROUP BY``."""
    import mlsql

    table = _far_from_zero().append_column("c", pa.array([1.0] * 80))
    weight = ", sample_weight := 'c'" if weighted else ""
    con = mlsql.connect()
    con.register("t", table)
    query = (
        "FROM evaluate('t', 'y', 'p', measures := ['r2', 'rse', 'rae', 'r2_score', 'accuracy'], "
        f"\"by\" := ['g']{weight})"
    )
    plan = "\n".join(r[-1] for r in con.execute("EXPLAIN " + query).fetchall())
    held = re.findall(r"\b(list|array_agg|histogram)\(", plan, flags=re.IGNORECASE)
    assert not held, plan
    got = con.execute(query).fetchall()
    assert [(g, m) for g, m, _ in got] == [
        (g, m) for g in (1, 2) for m in ("r2", "rse", "rae", "r2_score", "accuracy")
    ]
    for g, measure, estimate in got:
        group = [row for row in table.to_pylist() if row["g"] == g]
        if measure == "accuracy":  # the rows where y == p exactly
            assert close(estimate, Fraction(sum(r["y"] == r["p"] for r in group), len(group)))
            continue
        want = float(_exact_regression(group)[measure.replace("r2_score", "r2")])
        assert abs(estimate - want) <= 1e-12 * abs(want), (g, measure, estimate, want)


def test_the_sql_macros_regression_passes_take_parameters_and_check_as_the_measures():
    """zero_division reaches the passes' formulas (a group of constant y: r2 and rse are
    undefined), hivemall_r2 reads its inputs in its own order, and a wrong input or parameter
    is refused in the measure's words, as the Python call refuses it."""
    import mlsql

    con = mlsql.connect()
    table = pa.table(
        {
            "g": [1, 1, 1, 2, 2, 2],
            "y": [1.0, 2.0, 4.0, 3.0, 3.0, 3.0],
            "p": [1.0, 3.0, 4.0, 3.0, 2.0, 3.0],
        }
    )
    names = ["r2", "rse", "hivemall_r2", "mse"]
    got = _sql(con, table, "'y', 'p', measures := ?, \"by\" := ['g'], zero_division := 1", [names])
    shown = [f"{n}(zero_division=1)" if n != "mse" else n for n in names]
    assert [(g, m) for g, m, _ in got] == [(g, m) for g in (1, 2) for m in shown]
    # group 1: sse 1, y's mean 7/3, sst 16/9 + 1/9 + 25/9 = 42/9; group 2: y constant
    want = {
        (1, "r2"): 1 - Fraction(1) / Fraction(42, 9),
        (1, "rse"): Fraction(1) / Fraction(42, 9),
        (1, "mse"): Fraction(1, 3),
        (2, "mse"): Fraction(1, 3),
    }
    for g, m, estimate in got:
        if (g, m.split("(")[0]) in want:
            assert close(estimate, want[(g, m.split("(")[0])]), (g, m, estimate)
    python = mlsql.evaluate(
        table,
        "y",
        "p",
        [(n, {"zero_division": 1}) if n != "mse" else n for n in names],
        by="g",
        con=con,
    ).fetchall()
    assert [r[:2] for r in got] == [r[:2] for r in python]
    assert all(close(a[2], b[2]) for a, b in zip(got, python, strict=True)), (got, python)
    bad = [
        (pa.table({"y": ["a"], "p": [1.0]}), "'y', 'p', measures := ['r2']", ["r2"]),
        (
            pa.table({"y": [1.0], "p": ["a"]}),
            "'y', 'p', measures := ['hivemall_r2']",
            ["hivemall_r2"],
        ),
        (
            pa.table({"y": [1.0], "p": [1.0]}),
            "'y', 'p', measures := ['rae'], zero_division := 7",
            [("rae", {"zero_division": 7})],
        ),
    ]
    for frame, args, asked in bad:
        with pytest.raises(Exception) as python_error:
            mlsql.evaluate(frame, "y", "p", asked, con=con).fetchall()
        with pytest.raises(Exception) as sql_error:
            _sql(con, frame, args, [])
        assert str(python_error.value).split("\n")[0] in str(sql_error.value)


#: parameters some measures cannot do without (no default): the parameter test gives them
REQUIRED = ("label", "positive", "costs", "n_labels")


class _DuckDBName:
    name = "duckdb"


_DUCKDB = _DuckDBName()


def test_the_sql_macro_applies_each_parameter_to_the_measures_taking_it():
    import mlsql

    con = mlsql.connect()
    table = pa.table({"actual": [["a", "b"], ["b"], []], "predicted": [["a"], ["c"], []]})
    got = _sql(
        con,
        table,
        "'actual', 'predicted', measures := ['micro_f1', 'micro_fbeta', 'samples_f1'], beta := 2, zero_division := 1",
        [],
    )
    want = mlsql.evaluate(
        table,
        "actual",
        "predicted",
        [
            ("micro_f1", {"zero_division": 1}),
            ("micro_fbeta", {"beta": 2, "zero_division": 1}),
            ("samples_f1", {"zero_division": 1}),
        ],
        con=con,
    ).fetchall()
    assert got == want
    assert [r[0] for r in got] == [
        "micro_f1(zero_division=1)",
        "micro_fbeta(beta=2, zero_division=1)",
        "samples_f1(zero_division=1)",
    ]
    # samples_f1: row F1s 2/3, 0 and 1 (the empty row: tp + fp + fn = 0 -> zero_division)
    assert close(got[2][1], Fraction(5, 9))


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("micro_f2", "evaluate: there is no measure 'micro_f2'. Did you mean 'micro_f1'? It takes"),
        ("zzzzzzzzzzzz", "evaluate: there is no measure 'zzzzzzzzzzzz'. It takes the aggregate"),
        (
            "label_metrics",
            "evaluate takes aggregate measures, one number per group: label_metrics is not one "
            "(a table function: call it on its own)",
        ),
        ("majority_class", "majority_class is not one (it gives a class, not a number)"),
        ("bpref", "bpref is not one (it takes a third column, the judged non-relevant items"),
    ],
)
def test_the_sql_macro_refuses_measures_in_the_same_words(given, message):
    import mlsql

    con = mlsql.connect()
    table = pa.table({"actual": ["x"], "predicted": ["x"]})
    with pytest.raises(Exception, match=re.escape(message)) as sql_error:
        _sql(con, table, "'actual', 'predicted', measures := ?", [["accuracy", given]])
    with pytest.raises(MlsqlError) as python_error:
        mlsql.evaluate(table, "actual", "predicted", ["accuracy", given], con=con)
    assert str(python_error.value) in str(sql_error.value)


def test_the_sql_macro_refuses_a_by_named_as_an_output():
    import mlsql

    con = mlsql.connect()
    table = pa.table({"actual": ["x"], "predicted": ["x"], "measure": [1]})
    message = "evaluate: the by column 'measure' has the name of an output column."
    with pytest.raises(Exception, match=re.escape(message)):
        _sql(con, table, "'actual', 'predicted', measures := ['accuracy'], \"by\" := 'measure'", [])


def test_the_sql_macro_refuses_a_by_that_is_not_names():
    """The macro checks the by it is given: before, it passed on the names it found in it, none
    in a number, so a by := 3 was dropped and the measures came back for the whole table."""
    import mlsql

    con = mlsql.connect()
    table = pa.table({"actual": ["x"], "predicted": ["x"], "g": ["u"]})
    message = "The 'by' parameter of evaluate must be column names (strings). Got 3 instead."
    with pytest.raises(Exception, match=re.escape(message)):
        _sql(con, table, "'actual', 'predicted', measures := ['accuracy'], \"by\" := 3", [])


def test_duckdb_macros_take_the_parameters_by_position_the_catalog_says():
    """by_position (which parameters come before sample_weight) is the macros' own order."""
    import mlsql
    from mlsql._duckdb.families.evaluate import by_position

    con = mlsql.connect()
    rows = con.execute(
        "SELECT DISTINCT function_name, parameters FROM duckdb_functions() "
        "WHERE function_type = 'macro' AND list_contains(parameters, 'sample_weight')"
    ).fetchall()
    found = {n: p for n, p in rows}
    for m in EVALUATED:
        params = found[m.name]
        n = len(m.inputs)
        assert params[n : params.index("sample_weight")] == by_position(m.name), m.name


# ------------------------------------------------------------------ per-label averages
def _sklearn_label_averages(
    actual: list[list[str]], predicted: list[list[str]], w: list[float], labels: Any
) -> dict[str, float]:
    """scikit-learn's averages over the indicator matrix of the label lists (an oracle
    independent of mlsql's formulas): the universe is the labels seen, or ``labels``."""
    from sklearn import metrics
    from sklearn.preprocessing import MultiLabelBinarizer

    seen = sorted({x for row in actual + predicted for x in row} | set(labels or []))
    binarizer = MultiLabelBinarizer(classes=seen)
    y, p = binarizer.fit_transform(actual), binarizer.transform(predicted)
    picked = [seen.index(x) for x in (labels or seen)]
    y, p = y[:, picked], p[:, picked]
    kw = {"sample_weight": w, "zero_division": 0}
    out = {}
    for avg in ("macro", "weighted"):
        out[f"{avg}_precision"] = metrics.precision_score(y, p, average=avg, **kw)
        out[f"{avg}_recall"] = metrics.recall_score(y, p, average=avg, **kw)
        out[f"{avg}_f1"] = metrics.f1_score(y, p, average=avg, **kw)
        out[f"{avg}_fbeta"] = metrics.fbeta_score(y, p, beta=2, average=avg, **kw)
        out[f"{avg}_jaccard"] = metrics.jaccard_score(y, p, average=avg, **kw)
    out["label_accuracy_micro"] = 1 - metrics.hamming_loss(y, p, sample_weight=w)
    return out


@pytest.mark.long_cases("duckdb-None", "duckdb-labels1")
@pytest.mark.parametrize("labels", [None, ["a", "b", "d"]])
def test_label_averages_equal_sklearns_with_fractional_weights(engine, labels):
    """evaluate's macro_* and weighted_* (with other measures, grouped, weighted) are
    scikit-learn's averages of the indicator matrix per group."""
    table = pa.table(
        {
            "g": [1, 1, 1, 1, 2, 2, 2],
            "actual": [["a", "b"], ["b"], ["c"], [], ["a", "c"], ["b"], ["a"]],
            "predicted": [["a"], ["b", "c"], ["c"], ["a"], ["a", "c"], [], ["b", "a"]],
            "w": [0.5, 2.0, 1.25, 1.0, 3.0, 0.75, 0.5],
        }
    )
    names = [f"{avg}_{r}" for avg in ("macro", "weighted") for r in ("precision", "recall")]
    names += ["macro_f1", "weighted_f1", "macro_jaccard", "weighted_jaccard"]
    extra = {} if labels is None else {"labels": labels}
    calls: list[Any] = [(n, extra) if extra else n for n in names]
    calls += [("macro_fbeta", {"beta": 2, **extra}), ("weighted_fbeta", {"beta": 2, **extra})]
    calls += ["micro_f1", ("label_accuracy_micro", extra) if extra else "label_accuracy_micro"]
    got = run(engine, table, "actual", "predicted", calls, by="g", sample_weight="w")
    rows = table.to_pylist()
    want = []
    for g in (1, 2):
        mine = [r for r in rows if r["g"] == g]
        ref = _sklearn_label_averages(
            [r["actual"] for r in mine],
            [r["predicted"] for r in mine],
            [r["w"] for r in mine],
            labels,
        )
        for c in calls:
            name, p = (c, {}) if isinstance(c, str) else c
            if name != "micro_f1":
                want.append((g, label(name, p), ref[name]))
            else:
                tp = sum(r["w"] * len(set(r["actual"]) & set(r["predicted"])) for r in mine)
                a = sum(r["w"] * len(r["actual"]) for r in mine)
                pr = sum(r["w"] * len(r["predicted"]) for r in mine)
                want.append((g, "micro_f1", 2 * tp / (a + pr)))
    _compare(got, want, table)


def test_label_averages_of_one_call_share_their_reports():
    """The per-label measures of one parameter set are one report (one two-level plan)."""
    from mlsql._evaluate.front import items, label_reports

    chosen = items(["macro_f1", "weighted_f1", ("macro_f1", {"zero_division": 1}), "clp"], True)
    assert [[i for i, _ in r.items] for r in label_reports(chosen)] == [[0, 1, 3], [2]]


def test_polars_plans_each_aggregate_once():
    """Polars' ``evaluate`` holds each shared aggregation once in its plan, however many
    measures read it: a select per measure, concatenated, repeated the aggregation once per
    measure (18 class measures on 15 rows planned for 27 s)."""
    import polars as pl

    import mlsql.polars as mp

    frame = pl.LazyFrame({"g": [1, 1, 2], "a": [["x"], ["y"], []], "p": [["x"], [], ["y"]]})

    def aggregations(asked: list[str]) -> int:
        return (
            mp.evaluate(frame, "a", "p", asked, by="g").explain(optimized=False).count("AGGREGATE")
        )

    # the aggregates: one group_by; the label averages of one parameter set: one report
    aggregates, averages = ["micro_f1", "subset_accuracy", "samples_f1"], ["macro_f1", "clp"]
    assert aggregations(aggregates) == 1
    assert aggregations([*aggregates, *averages]) == 1 + aggregations(averages[:1])


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            pa.table({"actual": ["x", "y"], "predicted": ["x", "x"]}),
            "macro_f1 takes a list of labels per row for actual. Got actual ",
        ),
        (
            pa.table({"actual": [["x"], ["y"]], "predicted": [[1], [2]]}),
            "macro_f1 needs actual and predicted of the same label type (both text, both "
            "integers, ...). Got actual ",
        ),
    ],
)
def test_label_averages_refuse_other_columns_as_their_aggregates_do(engine, table, message):
    """The per-label averages' errors name the measure, as micro_f1's name micro_f1."""
    with pytest.raises(Exception, match=re.escape(message)):
        run(engine, table, "actual", "predicted", ["macro_f1", "weighted_f1"])


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        (["a", 2], "must hold labels of one kind (all text or all integers). Got ['a', 2]"),
        ("a", "must be a list of labels. Got 'a' instead."),
        ([None], "must hold at least one label."),
    ],
)
def test_a_bad_universe_is_refused_alike(engine, labels, message):
    """A ``labels`` universe that is no list of labels of one kind: the same error in every
    engine (DuckDB's SQL gave a conversion or binder error of its own)."""
    table = pa.table({"actual": [["a", "b"]], "predicted": [["c"]]})
    with pytest.raises(
        MlsqlError, match=re.escape("The 'labels' parameter of macro_f1 " + message)
    ):
        run(engine, table, "actual", "predicted", [("macro_f1", {"labels": labels})])


#: the Spark runs of these cases are long tests (tests/conftest.py reads it): the README's
#: suite keeps to its ten minutes, and `.ci/run` runs them right after it
LONG_ENGINES = ("spark",)


def test_duckdb_reads_a_relation_on_its_own_connection(monkeypatch):
    """A relation of an ``mlsql.connect()`` connection is evaluated where it lives (its temp
    tables are there; copying it to a new connection cost 0.35 CPU s at 1M rows), and one of
    another connection given with ``con`` is copied to ``con``: 3 of 4 rows right, 0.75.

    From DuckDB 2 on: a 1.x Python relation names no connection (no ``_con``, nothing in
    ``dir()``), so there it is copied to a new connection, with the same numbers."""
    import duckdb

    if int(duckdb.__version__.split(".")[0]) < 2:
        pytest.skip("a DuckDB 1.x relation does not name its connection (from DuckDB 2 on)")

    import mlsql
    from mlsql._duckdb import register

    con = mlsql.connect()
    con.execute(
        "CREATE TEMP TABLE t AS SELECT * FROM (VALUES (1, 1), (1, 0), (0, 0), (0, 0)) v(a, p)"
    )
    relation = con.table("t")

    def no_new_connection() -> None:
        raise AssertionError("a new connection was opened")

    monkeypatch.setattr(register, "connect", no_new_connection)
    rows = mlsql.evaluate(relation, "a", "p", ["accuracy"]).fetchall()
    assert rows == [("accuracy", 0.75)]
    monkeypatch.undo()
    other = mlsql.connect()
    rows = mlsql.evaluate(relation, "a", "p", ["accuracy"], con=other).fetchall()
    assert rows == [("accuracy", 0.75)]
    plain = duckdb.connect()  # no macros there: copied to a new mlsql connection, as before
    plain.execute("CREATE TEMP TABLE u AS SELECT 1 AS a, 0 AS p")
    assert mlsql.evaluate(plain.table("u"), "a", "p", ["accuracy"]).fetchall() == [
        ("accuracy", 0.0)
    ]
    assert plain.execute(
        "SELECT count(*) FROM duckdb_functions() WHERE function_name = 'micro_f1'"
    ).fetchall() == [(0,)]
