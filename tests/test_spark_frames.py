"""mlsql.spark in real DataFrames: groupBy().agg across partitions, select, names and Columns.

The shared cases (tests/engines/spark_engine.py) run on one-partition frames;
these run the same functions the ways users write them, on frames spread over
several partitions so partial aggregates are merged.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest

from tests import oracle
from tests.engines.spark_engine import session

pytest.importorskip("pyspark")

from pyspark.sql import functions as F

import mlsql.spark as ms

SCHEMA = "g string, actual array<string>, predicted array<string>"
ROWS = [
    ("x", ["a", "b", "b", None], ["a", "c"]),
    ("x", [], []),
    ("x", None, ["a"]),
    ("y", ["a"], None),
    ("y", ["c", None], [None, "c", "d"]),
    ("y", ["a", "b"], ["b", "a"]),
    ("z", [], ["a"]),
    ("z", ["d"], []),
]
AGGREGATES = [
    f"{average}_{name}"
    for average in ("micro", "samples")
    for name in ("precision", "recall", "f1", "fbeta", "jaccard")
] + ["subset_accuracy", "zero_one_loss"]


def same(got: Any, want: Any) -> bool:
    if want is None or got is None:
        return want is None and got is None
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if isinstance(want, (list, set)):
        return sorted(got) == sorted(want)
    return math.isclose(float(got), float(want), rel_tol=1e-12, abs_tol=1e-12)


@pytest.fixture(scope="module")
def df():
    return session().createDataFrame(ROWS, SCHEMA).repartition(3)


def pairs(group: str | None = None) -> list[tuple[Any, Any]]:
    return [(a, p) for g, a, p in ROWS if group is None or g == group]


@pytest.mark.long
@pytest.mark.parametrize("zd", [0, 1, float("nan"), "diagnose", "ignore"])
def test_group_by_agg_merges_partitions(df, zd):
    params = {"zero_division": zd}
    cols = [
        ms.FUNCTIONS[name](
            "actual", "predicted", **({} if name.endswith(("accuracy", "loss")) else params)
        )
        for name in AGGREGATES
    ]
    got = {r["g"]: r for r in df.groupBy("g").agg(*cols).collect()}
    assert set(got) == {"x", "y", "z"}
    for g, row in got.items():
        for name in AGGREGATES:
            p = {} if name.endswith(("accuracy", "loss")) else params
            want = oracle.aggregate(name, pairs(g), **p)
            assert same(row[name], want), f"{name}{p} group {g}: {row[name]} != {want}"


def test_whole_frame_agg_and_column_names(df):
    row = df.agg(
        ms.micro_f1("actual", "predicted"), ms.hamming_loss("actual", "predicted", n_labels=4)
    ).first()
    assert row.asDict().keys() == {"micro_f1", "hamming_loss"}
    assert same(row["micro_f1"], oracle.aggregate("micro_f1", pairs()))
    assert same(row["hamming_loss"], oracle.hamming_loss(pairs(), 4))


def test_per_row_functions_in_select_and_with_column(df):
    out = df.withColumn("tp", ms.true_positives("actual", "predicted")).select(
        "actual",
        "predicted",
        "tp",
        ms.set_union(F.col("actual"), F.col("predicted")),
        ms.row_fbeta("actual", "predicted", beta=2.0, zero_division="diagnose"),
    )
    for r in out.collect():
        a, p = r["actual"], r["predicted"]
        assert same(r["tp"], oracle.per_row("true_positives", a, p))
        assert r["set_union"] == oracle.per_row("set_union", a, p)
        want = oracle.per_row("row_fbeta", a, p, beta=2.0, zero_division="diagnose")
        assert same(r["row_fbeta"], want)


def test_names_columns_and_expressions_give_the_same(df):
    by_name = df.agg(ms.samples_jaccard("actual", "predicted")).first()[0]
    by_column = df.agg(ms.samples_jaccard(df.actual, df["predicted"])).first()[0]
    by_expression = df.agg(
        ms.samples_jaccard(F.coalesce("actual", F.array()), F.col("predicted"))
    ).first()[0]
    assert by_name == by_column
    assert same(by_name, oracle.aggregate("samples_jaccard", pairs()))
    coalesced = [(a if a is not None else [], p) for a, p in pairs()]
    assert same(by_expression, oracle.aggregate("samples_jaccard", coalesced))


def test_null_elements_and_repeats_are_not_labels(df):
    # ["c", None] against [None, "c", "d"]: one true label c, predicted c and d
    row = (
        df.where(F.col("g") == "y")
        .where(F.size("predicted") == 3)
        .select(
            ms.true_positives("actual", "predicted"),
            ms.false_positives("actual", "predicted"),
            ms.false_negatives("actual", "predicted"),
            ms.set_intersection("actual", "predicted"),
            ms.set_symmetric_difference("actual", "predicted"),
        )
        .first()
    )
    assert tuple(row) == (1, 1, 0, ["c"], ["d"])
    counts = df.agg(ms.multilabel_counts("actual", "predicted")).first()[0].asDict()
    assert counts == oracle.multilabel_counts(pairs())
    assert list(counts) == ["n_rows", "tp", "fp", "fn", "n_actual", "n_predicted", "n_exact"]


def test_stored_counts_merge_in_sql_style_pipelines(df, tmp_path):
    daily = df.groupBy("g").agg(ms.multilabel_counts("actual", "predicted").alias("counts"))
    daily.write.parquet(str(tmp_path / "counts"))
    stored = session().read.parquet(str(tmp_path / "counts"))
    got = stored.agg(
        ms.micro_fbeta_from_counts(ms.merge_counts("counts"), beta=0.5),
        ms.subset_accuracy_from_counts(ms.merge_counts("counts")),
    ).first()
    assert same(got[0], oracle.aggregate("micro_fbeta", pairs(), beta=0.5))
    assert same(got[1], oracle.aggregate("subset_accuracy", pairs()))
    per_day = {
        r["g"]: r[1] for r in stored.select("g", ms.micro_f1_from_counts("counts")).collect()
    }
    assert same(per_day["z"], oracle.aggregate("micro_f1", pairs("z")))


@pytest.mark.long
def test_zero_rows_give_null(df):
    empty = df.where(F.lit(False))
    row = empty.agg(*(ms.FUNCTIONS[n]("actual", "predicted") for n in AGGREGATES)).first()
    assert all(v is None for v in row), row
    assert empty.agg(ms.fmeasure("actual", "predicted")).first()[0] is None
    counts = empty.agg(ms.multilabel_counts("actual", "predicted")).first()[0]
    assert counts["n_rows"] == 0


def test_integer_labels_of_different_widths():
    df = session().createDataFrame(
        [([1, 2, 2], [2, 3]), ([5], [5])], "actual array<int>, predicted array<bigint>"
    )
    row = df.agg(
        ms.micro_precision("actual", "predicted"), ms.micro_recall(df.actual, df.predicted)
    ).first()
    assert row[0] == float(Fraction(2, 3)) and row[1] == float(Fraction(2, 3))
    assert [r[0] for r in df.select(ms.set_union("actual", "predicted")).collect()] == [
        [1, 2, 3],
        [5],
    ]


def test_fmeasure_in_group_by_with_options(df):
    got = {
        r[0]: r[1]
        for r in df.groupBy("g").agg(ms.fmeasure("actual", "predicted", "-beta 2.")).collect()
    }
    for g in ("x", "y", "z"):
        want = oracle.aggregate("micro_fbeta", pairs(g), beta=2.0)
        assert same(got[g], want)


def test_parameters_are_checked_when_the_column_is_built():
    with pytest.raises(ms.MlsqlError, match="'beta' parameter of samples_fbeta"):
        ms.samples_fbeta("actual", "predicted", beta=-1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bta'"):
        ms.micro_fbeta("actual", "predicted", bta=2)
    with pytest.raises(ms.MlsqlError, match="column name or a pyspark Column for predicted"):
        ms.micro_f1("actual", 3)


def test_public_functions_have_signatures_and_docstrings():
    import inspect

    sig = inspect.signature(ms.micro_fbeta)
    assert list(sig.parameters) == ["actual", "predicted", "beta", "zero_division", "sample_weight"]
    assert sig.parameters["sample_weight"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig.parameters["beta"].default == 1.0
    for name, fn in ms.FUNCTIONS.items():
        doc = inspect.getdoc(fn) or ""
        assert "Parameters\n----------" in doc and "Returns\n-------" in doc, name


def test_a_name_is_the_whole_column_name():
    # "L1.1" is a column named so (the R walkthrough's indicator layout), not a struct field
    df = session().createDataFrame(
        [(["a"], ["a", "b"])], "`L1.1` array<string>, `p `` q` array<string>"
    )
    assert df.agg(ms.micro_precision("L1.1", "p ` q")).first()[0] == 0.5
