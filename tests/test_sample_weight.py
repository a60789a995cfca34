"""Sample weights on the list families (multi-label, Hivemall, label tables, ranking, label
scores), every engine.

1. With integer weights every weighted measure equals its reference over the rows
   repeated ``w`` times (``tests/weights.py``), batched per data kind and table;
2. with float weights, scikit-learn's ``sample_weight`` results where it has the measure;
3. bad weights: one message in every engine; a NULL weight skips the row; all-zero
   weights give the ``zero_division`` value;
4. a weighted measure of these families that (1) does not check fails the suite.
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

import pyarrow as pa
import pytest

from mlsql import _classification_params as CP
from mlsql import _params as P
from mlsql._registry import REGISTRY, Measure
from tests.engines import label_table
from tests.oracle_ranking import score_column
from tests.references import REFERENCES, close, tables
from tests.weights import (
    WEIGHT,
    integer_weights,
    repeated,
    weight_arg,
    weighted_measures,
    weighted_params,
    with_weights,
)

#: the families whose weights this file checks (the other families have files of their own)
FAMILIES = (
    "multilabel",
    "hivemall",
    "label_based",
    "ranking",
    "label_scores",
    "class_scores",
    "agreement",
)
#: the data kinds of those families' references, for the expression kinds
DATA = ("label_lists", "ranked", "score_maps", "class_scores", "ratings", "outcomes")
SEEDS = range(5)
TABLE_SEEDS = range(2)


def _expression_measures(data: str) -> list[Measure]:
    return [
        m
        for m in weighted_measures(FAMILIES)
        if m.kind != "table" and m.name in REFERENCES and REFERENCES[m.name].data == data
    ]


def _table_measures() -> list[Measure]:
    return [m for m in weighted_measures(FAMILIES) if m.kind == "table" and m.name in REFERENCES]


def _cases(engine: Any, ms: list[Measure], table: pa.Table, i: int) -> list[tuple[Measure, dict]]:
    out = []
    for m in ms:
        if not m.available_in(engine.name):
            continue
        # one parameter set per table, in turn: the unweighted tests check every set, and a
        # weighted DuckDB macro takes long to bind (its formula names each row's value often)
        sets = REFERENCES[m.name].params_for(table)
        out.append((m, sets[i % len(sets)]))
    return out


def _check(rows: list[tuple[Measure, dict, Any, Any]], table: pa.Table) -> None:
    wrong = [f"{m.name}({p}): got {g!r}, expected {w!r}" for m, p, g, w in rows if not close(g, w)]
    assert not wrong, "\n".join(wrong) + f"\non {table.to_pylist()}"


# ---------------------------------------------------------------- 1. repeated rows
@pytest.mark.long_cases("duckdb-label_lists")
@pytest.mark.parametrize("data", DATA)
def test_integer_weights_repeat_rows(engine, data):
    ms = _expression_measures(data)
    for i, table in enumerate(tables(data, SEEDS, no_rows=True)):
        weights = integer_weights(table.num_rows, f"{data}-{i}")
        cases = _cases(engine, ms, table, i)
        calls = [(m.name, m.inputs, weighted_params(engine, m, p)) for m, p in cases]
        got = engine.many(with_weights(table, weights), calls)
        oracle_table = repeated(table, weights)
        want = [REFERENCES[m.name].expected(oracle_table, p) for m, p in cases]
        _check([(m, p, g, w) for (m, p), g, w in zip(cases, got, want, strict=True)], table)


def test_scores_as_lists_of_structs_weigh_as_maps(engine):
    """Score maps given as ``list<struct<label, score>>`` are weighted as the maps they hold.

    Spark read a list's field names from its type, which the weight's wrapping hid: the
    weighted ranking measures failed on that form.
    """
    ms = _expression_measures("score_maps")
    for i, table in enumerate(tables("score_maps", range(2), no_rows=True)):
        weights = integer_weights(table.num_rows, f"score-lists-{i}")
        key = table.schema.field("scores").type.key_type
        listed = table.set_column(
            table.schema.get_field_index("scores"),
            "scores",
            score_column(table.column("scores").to_pylist(), "list", key=key),
        )
        cases = _cases(engine, ms, table, i)
        calls = [(m.name, m.inputs, weighted_params(engine, m, p)) for m, p in cases]
        got = engine.many(with_weights(listed, weights), calls)
        oracle_table = repeated(table, weights)
        want = [REFERENCES[m.name].expected(oracle_table, p) for m, p in cases]
        _check([(m, p, g, w) for (m, p), g, w in zip(cases, got, want, strict=True)], table)


@pytest.mark.parametrize("measure", [pytest.param(m, id=m.name) for m in _table_measures()])
def test_integer_weights_repeat_rows_in_label_tables(engine, measure):
    ref = REFERENCES[measure.name]
    for i, table in enumerate(tables(ref.data, TABLE_SEEDS)):
        choices = ref.params_for(table)
        params = choices[i % len(choices)]
        integers = pa.types.is_integer(table.schema.field("actual").type.value_type)
        if params.get("labels") is not None and integers:
            params = {**params, "labels": [1, 2, 99]}
        weights = integer_weights(table.num_rows, f"table-{i}")
        out = engine.table_function(
            measure.name, with_weights(table, weights), sample_weight=WEIGHT, **params
        )
        rows = out.to_pylist()
        want = ref.expected(repeated(table, weights), params)
        if measure.name == "label_metrics":
            got = rows
        elif measure.name == "multilabel_report":
            got = {k: rows[0][k] for k in want} if rows else None
        else:
            got = rows[0][measure.name] if rows else None
        _check([(measure, params, got, want)], table)


# ---------------------------------------------------------------- 2. scikit-learn
def _sklearn_rows(seed: int) -> tuple[pa.Table, list[float]]:
    rng = random.Random(f"sklearn-{seed}")
    labels = ["a", "b", "c", "d", "e"]

    def some() -> list[str]:
        return rng.sample(labels, rng.randint(0, 3))

    rows = [(some(), some()) for _ in range(rng.randint(5, 25))]
    weights = [rng.choice([0.0, 0.25, 1.5, 2.0, rng.random() * 3]) for _ in rows]
    weights[0] = 1.75
    return label_table(rows), weights


def _binarized(table: pa.Table) -> tuple[Any, Any, list[str]]:
    from sklearn.preprocessing import MultiLabelBinarizer

    classes = ["a", "b", "c", "d", "e"]
    mlb = MultiLabelBinarizer(classes=classes)
    y_true = mlb.fit_transform(table.column("actual").to_pylist())
    y_pred = mlb.transform(table.column("predicted").to_pylist())
    return y_true, y_pred, classes


SKLEARN_AGGREGATES = {
    # mlsql measure: (scikit-learn function name, its keyword arguments)
    "micro_f1": ("f1_score", {"average": "micro"}),
    "micro_precision": ("precision_score", {"average": "micro"}),
    "micro_recall": ("recall_score", {"average": "micro"}),
    "micro_jaccard": ("jaccard_score", {"average": "micro"}),
    "samples_f1": ("f1_score", {"average": "samples"}),
    "samples_precision": ("precision_score", {"average": "samples"}),
    "samples_recall": ("recall_score", {"average": "samples"}),
    "samples_jaccard": ("jaccard_score", {"average": "samples"}),
    "subset_accuracy": ("accuracy_score", {}),
    "hamming_loss": ("hamming_loss", {}),
}
SKLEARN_TABLES = {
    "macro_f1": ("f1_score", {"average": "macro"}),
    "macro_precision": ("precision_score", {"average": "macro"}),
    "macro_recall": ("recall_score", {"average": "macro"}),
    "macro_jaccard": ("jaccard_score", {"average": "macro"}),
    "weighted_f1": ("f1_score", {"average": "weighted"}),
    "weighted_precision": ("precision_score", {"average": "weighted"}),
    "weighted_recall": ("recall_score", {"average": "weighted"}),
    "weighted_jaccard": ("jaccard_score", {"average": "weighted"}),
}


def _sklearn(name: str, table: pa.Table, weights: list[float], table_of: dict) -> float:
    import sklearn.metrics as skm

    function, kwargs = table_of[name]
    y_true, y_pred, _ = _binarized(table)
    if function not in ("accuracy_score", "hamming_loss"):
        kwargs = {**kwargs, "zero_division": 0}
    return float(getattr(skm, function)(y_true, y_pred, sample_weight=weights, **kwargs))


@pytest.mark.parametrize("seed", range(3))
def test_float_weights_match_scikit_learn(engine, seed):
    table, weights = _sklearn_rows(seed)
    calls = [
        (name, ("actual", "predicted"), {"sample_weight": weight_arg(engine)})
        for name in SKLEARN_AGGREGATES
    ]
    calls = [(n, c, {**p, "n_labels": 5} if n == "hamming_loss" else p) for n, c, p in calls]
    got = engine.many(with_weights(table, weights), calls)
    want = [_sklearn(name, table, weights, SKLEARN_AGGREGATES) for name in SKLEARN_AGGREGATES]
    rows = [(REGISTRY[n], {}, g, w) for n, g, w in zip(SKLEARN_AGGREGATES, got, want, strict=True)]
    _check([(m, p, g, w) for m, p, g, w in rows if not math.isclose(g, w, rel_tol=1e-9)], table)


@pytest.mark.parametrize("seed", range(2))
def test_float_weights_match_scikit_learn_in_the_report(engine, seed):
    table, weights = _sklearn_rows(seed)
    out = engine.table_function(
        "multilabel_report",
        with_weights(table, weights),
        sample_weight=WEIGHT,
        labels=["a", "b", "c", "d", "e"],
    )
    (row,) = out.to_pylist()
    wrong = []
    for name in SKLEARN_TABLES:
        want = _sklearn(name, table, weights, SKLEARN_TABLES)
        if not math.isclose(row[name], want, rel_tol=1e-9, abs_tol=1e-12):
            wrong.append(f"{name}: got {row[name]!r}, scikit-learn {want!r}")
    assert not wrong, "\n".join(wrong)


# ---------------------------------------------------------------- 3. bad, NULL and zero weights
#: a bad weight and how every engine's message names it (the words of mlsql._params)
BAD_WEIGHTS = [(-1.0, "a negative number"), (float("nan"), "NaN"), (float("inf"), "inf")]


@pytest.mark.parametrize(("bad", "got"), BAD_WEIGHTS, ids=["negative", "nan", "inf"])
def test_a_bad_weight_fails_with_one_message(engine, bad, got):
    table = with_weights(label_table([(["a"], ["a"]), (["b"], ["c"])]), [1.0, bad])
    message = P.sample_weight_message("micro_f1", got)
    with pytest.raises(Exception) as caught:
        engine.many(table, [("micro_f1", ("actual", "predicted"), weighted(engine))])
    assert message in str(caught.value)


def test_a_bad_weight_fails_in_label_tables(engine):
    table = with_weights(label_table([(["a"], ["a"]), (["b"], ["c"])]), [1.0, -2.0])
    message = P.sample_weight_message("multilabel_report", "a negative number")
    with pytest.raises(Exception) as caught:
        engine.table_function("multilabel_report", table, sample_weight=WEIGHT)
    assert message in str(caught.value)


def weighted(engine: Any, **params: Any) -> dict[str, Any]:
    return {**params, "sample_weight": weight_arg(engine)}


def _same_rows(got: list[dict], want: list[dict]) -> bool:
    return len(got) == len(want) and all(
        g.keys() == w.keys() and all(close(g[k], w[k]) for k in w)
        for g, w in zip(got, want, strict=True)
    )


@pytest.mark.parametrize("measure", [pytest.param(m, id=m.name) for m in _table_measures()])
def test_a_row_weighing_0_drops_out_of_label_tables(engine, measure):
    """A row weighing 0 is as a row left out, its labels too (Polars listed a label only
    such a row holds, with counts 0, in label_metrics and in every macro average)."""
    rows = [(["a"], ["a"]), (["q"], ["r"]), (["a", "b"], ["b"])]
    kept = [rows[0], rows[2]]
    if not measure.available_in(engine.name):
        pytest.skip(f"{measure.name} is not in {engine.name}")
    got = engine.table_function(
        measure.name, with_weights(label_table(rows), [1.0, 0.0, 2.0]), sample_weight=WEIGHT
    ).to_pylist()
    want = engine.table_function(
        measure.name, with_weights(label_table(kept), [1.0, 2.0]), sample_weight=WEIGHT
    ).to_pylist()
    assert got and _same_rows(got, want)


def test_a_null_weight_skips_the_row(engine):
    rows = [(["a", "b"], ["a"]), (["c"], ["d"]), (["e"], ["e"])]
    table = with_weights(label_table(rows), [2.0, None, 1.0])
    names = ("micro_f1", "samples_f1", "subset_accuracy")
    got = engine.many(table, [(n, ("actual", "predicted"), weighted(engine)) for n in names])
    # without the NULL-weighted row: tp 2 + 1, fn 2, fp 0 -> F1 6/8; row F1s 2/3 (x2) and 1
    assert close(got, [6 / 8, (2 * 2 / 3 + 1) / 3, 1 / 3])


@pytest.mark.parametrize("zero_division", [0, 1])
def test_all_zero_weights_give_the_zero_division_value(engine, zero_division):
    table = with_weights(label_table([(["a"], ["b"]), (["c"], ["c"])]), [0.0, 0.0])
    names = ("micro_f1", "micro_precision", "samples_f1", "samples_jaccard")
    params = weighted(engine, zero_division=zero_division)
    got = engine.many(table, [(n, ("actual", "predicted"), params) for n in names])
    assert close(got, [float(zero_division)] * len(names))


@pytest.mark.parametrize("zero_division", [0, 1])
def test_a_report_of_rows_that_all_weigh_0_gives_the_zero_division_value(engine, zero_division):
    """The report's micro and samples columns, as the aggregates of the same rows (Spark
    gave NULL: it took a row entry of weight 0 for the empty group's)."""
    table = with_weights(label_table([(["a"], ["b"]), (["c"], ["c"])]), [0.0, 0.0])
    out = engine.table_function(
        "multilabel_report", table, sample_weight=WEIGHT, zero_division=zero_division
    ).to_pylist()
    names = ("micro_precision", "micro_recall", "micro_f1", "samples_f1", "samples_jaccard")
    assert [out[0][n] for n in names] == [float(zero_division)] * len(names)


# ---------------------------------------------------------------- 4. nothing slips through
def test_every_weighted_list_measure_is_checked_on_repeated_rows():
    checked = {m.name for data in DATA for m in _expression_measures(data)}
    checked |= {m.name for m in _table_measures()}
    missing = sorted({m.name for m in weighted_measures(FAMILIES)} - checked)
    assert not missing, (
        f"weighted measures no repeated-rows test checks: {missing}; give them a reference "
        "in tests/references.py over one of " + ", ".join(DATA)
    )


# ---------------------------------------------------------------- names and the CLI
HOSTILE = "w'); DROP TABLE t; --\""


def test_a_hostile_weight_column_name_is_only_a_name(engine):
    """The table functions take the weight column's name: quoted, never SQL."""
    table = label_table([(["a", "b"], ["a"]), (["c"], ["c", "d"]), (["a"], [])])
    weights = [2, 1, 0]
    plain = engine.table_function(
        "multilabel_report", with_weights(table, weights), sample_weight=WEIGHT
    )
    hostile = with_weights(table, weights).rename_columns(["actual", "predicted", HOSTILE])
    got = engine.table_function("multilabel_report", hostile, sample_weight=HOSTILE)
    assert got.to_pylist() == plain.to_pylist()
    # the oracle: rows repeated, tp 2 + 1, fp 1, fn 2 -> micro F1 6 / 9
    assert close(got.to_pylist()[0]["micro_f1"], 6 / 9)


@pytest.mark.parametrize("engine_name", ["duckdb", "polars"])
def test_the_cli_weighs_rows(tmp_path, engine_name):
    import json

    import pyarrow.parquet as pq
    from typer.testing import CliRunner

    from mlsql.cli import app

    rows = [(["a", "b"], ["a"]), (["c"], ["c", "d"]), (["a"], []), (["b"], ["b"])]
    path = tmp_path / "preds.parquet"
    pq.write_table(with_weights(label_table(rows), [2.0, 1.0, 0.5, None]), path)
    args = ["eval", str(path), "-a", "actual", "-p", "predicted", "--sample-weight", WEIGHT]
    args += ["--engine", engine_name, "-f", "json", "--no-progress"]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (summary,) = json.loads(result.output)["summary"]
    # the NULL-weighted row is skipped: tp 2 + 1, fp 1, fn 2 + 0.5 -> 6 / 9.5 over 3 rows
    # weighing 3.5
    assert summary["n_rows"] == 3
    assert close([summary["total_weight"], summary["micro_f1"]], [3.5, 6 / 9.5])


def test_a_weight_of_no_number_type_is_refused_when_polars_knows_the_type():
    pl = pytest.importorskip("polars")
    import mlsql.polars as mp
    from mlsql._errors import MlsqlError

    df = pl.DataFrame({"actual": [["a"]], "predicted": [["a"]], "w": ["heavy"]})
    message = CP.number_type_message("micro_f1", "sample_weight", "String")
    with pytest.raises(MlsqlError, match=message):
        df.select(mp.micro_f1("actual", "predicted", sample_weight="w"))


@pytest.mark.parametrize("func", ["micro_f1", "multilabel_report"])
def test_a_weight_of_no_number_type_is_one_error_in_every_engine(engine, func):
    """A text weight column: the number-type message of every weighted measure (not a cast
    error), for an aggregate and a table."""
    table = label_table([(["a"], ["a"]), (["b"], ["c"])])
    table = table.append_column("text", pa.array(["1", "heavy"]))
    prefix = CP.number_type_message(func, "sample_weight", "{}").split("{}")[0]
    with pytest.raises(Exception, match=re.escape(prefix)):
        if func == "multilabel_report":
            engine.table_function(func, table, sample_weight="text")
        elif engine.name == "spark":  # Spark knows the type of a DataFrame's Column, not a name's
            import mlsql.spark as ms
            from tests.engines.spark_engine import frame

            df = frame(table)
            df.agg(ms.micro_f1(df.actual, df.predicted, sample_weight=df.text)).collect()
        else:
            engine.many(table, [(func, ("actual", "predicted"), {"sample_weight": "text"})])


@pytest.mark.parametrize("engine_name", ["duckdb", "polars"])
def test_the_cli_weighs_one_label_per_row_as_scikit_learn(tmp_path, engine_name):
    """One label per row: the report's accuracy, kappa, MCC and balanced accuracy are
    scikit-learn's with sample_weight, its confusion cells the total weights."""
    import json

    import pyarrow.parquet as pq
    from sklearn import metrics as M
    from typer.testing import CliRunner

    from mlsql.cli import app

    actual = ["a", "b", "a", "c", "b", "a", "c", "b"]
    predicted = ["a", "b", "b", "c", "a", "a", "b", "b"]
    weights = [2.0, 1.0, 0.5, 3.0, 1.5, 1.0, 0.25, None]
    path = tmp_path / "single.parquet"
    table = pa.table({"actual": actual, "predicted": predicted, "w": weights})
    pq.write_table(table, path)
    args = ["eval", str(path), "-a", "actual", "-p", "predicted", "--sample-weight", "w"]
    args += ["--engine", engine_name, "-f", "json", "--no-progress"]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    (summary,) = report["summary"]
    known = [i for i, w in enumerate(weights) if w is not None]
    y, p, w = ([xs[i] for i in known] for xs in (actual, predicted, weights))
    want = {
        "accuracy": M.accuracy_score(y, p, sample_weight=w),
        "balanced_accuracy_score": M.balanced_accuracy_score(y, p, sample_weight=w),
        "cohen_kappa_score": M.cohen_kappa_score(y, p, sample_weight=w),
        "matthews_corrcoef": M.matthews_corrcoef(y, p, sample_weight=w),
    }
    assert close([summary[k] for k in want], list(want.values())), (summary, want)
    cells = json.dumps(report)
    # the (b, a) cell weighs 1.5 and the (c, b) cell 0.25 (one row each; counts would be 1)
    assert '"count": 1.5' in cells and '"count": 0.25' in cells


#: a weighted measure of each kind of input: (name, its input columns, parameters)
NAMED_WEIGHT_CASES = [
    ("micro_f1", ("actual", "predicted"), {}),
    ("precision_at", ("predicted", "actual"), {"k": 2}),
    ("accuracy", ("ya", "yp"), {}),
    ("binary_precision", ("ya", "yp"), {}),
    ("mse", ("ry", "rp"), {}),
    ("auc", ("ya", "s"), {}),
]


@pytest.mark.parametrize("column", ["text", "flag"])
@pytest.mark.parametrize(("func", "columns", "params"), NAMED_WEIGHT_CASES)
def test_a_weight_of_no_number_type_given_by_name_is_refused(engine, func, columns, params, column):
    """A text ('2') or boolean weight column given by name is refused with the number-type
    message in every engine, never cast (Spark, which sees a name's type only when it plans
    the query, weighed a text '2' as 1.0)."""
    table = label_table([(["a"], ["a"]), (["b"], ["c"])])
    extra = {
        "ya": [1, 0],
        "yp": [1, 1],
        "ry": [1.0, 2.0],
        "rp": [1.5, 2.0],
        "s": [0.8, 0.3],
        "text": ["2", "2"],
        "flag": [True, True],
    }
    for name, values in extra.items():
        table = table.append_column(name, pa.array(values))
    prefix = CP.number_type_message(func, "sample_weight", "{}").split("{}")[0]
    with pytest.raises(Exception, match=re.escape(prefix)):
        engine.many(table, [(func, columns, {**params, "sample_weight": column})])


#: the Spark runs of these cases are long tests (tests/conftest.py reads it): the README's
#: suite keeps to its ten minutes, and `.ci/run` runs them right after it
LONG_ENGINES = ("spark",)
