"""ANSI mode: Spark 4 raises on x / 0, so no mlsql Column may ever divide by zero.

Every ratio is undefined somewhere in these rows (empty sets, nothing
predicted, nothing true); every generated function runs over them, per row
and aggregated, with whole-stage code generation and common subexpression
elimination on (Spark's defaults), under every zero_division. Then the same
with ANSI mode off, where ``size(NULL)`` is -1 and must not leak into counts.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Any

import pytest

from tests import oracle
from tests.engines.spark_engine import session

pytest.importorskip("pyspark")

import mlsql.spark as ms
from mlsql._registry import REGISTRY

ROWS = [([], []), (["a"], []), ([], ["a"]), ([None], [None]), (None, []), (["a"], None)]
ZERO_DIVISIONS = [0, 1, float("nan"), "diagnose", "ignore"]
ROW_MEASURES = ["set_jaccard", "row_precision", "row_recall", "row_fbeta"]
AGGREGATES = [
    f"{average}_{name}"
    for average in ("micro", "samples")
    for name in ("precision", "recall", "f1", "fbeta", "jaccard")
]


def same(got: Any, want: Any) -> bool:
    if want is None or got is None:
        return want is None and got is None
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    return math.isclose(float(got), float(want), rel_tol=1e-12, abs_tol=1e-12)


@contextmanager
def conf(**settings: str):
    spark = session()
    keys = {k.replace("_", "."): v for k, v in settings.items()}
    old = {k: spark.conf.get(k, None) for k in keys}
    for k, v in keys.items():
        spark.conf.set(k, v)
    try:
        yield spark
    finally:
        for k, v in old.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)


def test_the_session_runs_in_ansi_mode():
    spark = session()
    assert spark.conf.get("spark.sql.ansi.enabled") == "true"
    with pytest.raises(Exception, match="DIVIDE_BY_ZERO"):
        spark.sql("SELECT a / b FROM VALUES (1, 0) AS t(a, b)").collect()


@pytest.mark.long
@pytest.mark.parametrize("ansi", ["true", "false"])
def test_undefined_ratios_never_divide_by_zero(ansi):
    # Spark's defaults, which the test session turns off (its queries are tiny): generated code
    # within whole-stage code, no interpreted fallback
    with conf(
        spark_sql_ansi_enabled=ansi,
        spark_sql_codegen_wholeStage="true",
        spark_sql_codegen_factoryMode="CODEGEN_ONLY",
    ) as spark:
        df = spark.createDataFrame(ROWS, "actual array<string>, predicted array<string>")
        df = df.repartition(2)
        cases = [
            (n, i, zd) for n in ROW_MEASURES + AGGREGATES for i, zd in enumerate(ZERO_DIVISIONS)
        ]

        def col(n: str, i: int, zd: Any) -> Any:
            return ms.FUNCTIONS[n]("actual", "predicted", zero_division=zd).alias(f"{n}_{i}")

        per_row = df.select(
            "actual", "predicted", *(col(n, i, zd) for n, i, zd in cases if n in ROW_MEASURES)
        ).collect()
        agg = df.agg(*(col(n, i, zd) for n, i, zd in cases if n in AGGREGATES)).first()
        for n, i, zd in cases:
            if n in ROW_MEASURES:
                for r in per_row:
                    want = oracle.per_row(n, r["actual"], r["predicted"], zero_division=zd)
                    got = r[f"{n}_{i}"]
                    assert same(got, want), f"ansi={ansi} {n} zd={zd} {r}: {got} != {want}"
            else:
                want = oracle.aggregate(n, ROWS, zero_division=zd)
                got = agg[f"{n}_{i}"]
                assert same(got, want), f"ansi={ansi} {n} zd={zd}: {got} != {want}"


@pytest.mark.parametrize("ansi", ["true", "false"])
def test_counts_of_unknown_rows_stay_null(ansi):
    with conf(spark_sql_ansi_enabled=ansi) as spark:
        df = spark.createDataFrame(ROWS, "actual array<string>, predicted array<string>")
        got = df.agg(
            ms.multilabel_counts("actual", "predicted"),
            ms.hamming_loss("actual", "predicted", n_labels=2),
            ms.subset_accuracy("actual", "predicted"),
        ).first()
        assert got[0].asDict() == oracle.multilabel_counts(ROWS)
        assert same(got[1], oracle.hamming_loss(ROWS, 2))
        assert same(got[2], oracle.subset_accuracy(ROWS))
        tps = [r[0] for r in df.select(ms.true_positives("actual", "predicted")).collect()]
        assert tps == [0, 0, 0, 0, None, None]


def test_from_counts_of_nothing_under_ansi():
    spark = session()
    df = spark.createDataFrame(
        [((0, 0, 0, 0, 0, 0, 0),), ((3, 0, 0, 0, 0, 0, 3),)],
        "c struct<n_rows: bigint, tp: bigint, fp: bigint, fn: bigint, "
        "n_actual: bigint, n_predicted: bigint, n_exact: bigint>",
    )
    names = [
        m.name for m in REGISTRY.values() if m.kind == "from_counts" and m.family == "multilabel"
    ]
    cols = []
    for i, zd in enumerate(ZERO_DIVISIONS):
        for n in names:
            params = {p.name: zd for p in REGISTRY[n].params if p.name == "zero_division"}
            if any(p.name == "n_labels" for p in REGISTRY[n].params):
                params["n_labels"] = 3
            cols.append(ms.FUNCTIONS[n]("c", **params).alias(f"{n}_{i}"))
    rows = df.select(*cols).collect()
    for i, zd in enumerate(ZERO_DIVISIONS):
        assert rows[0][f"subset_accuracy_from_counts_{i}"] is None  # a share of no rows
        assert rows[1][f"subset_accuracy_from_counts_{i}"] == 1.0
        assert rows[1][f"hamming_loss_from_counts_{i}"] == 0.0
        want = oracle.undefined(zd, True)
        assert same(rows[0][f"micro_f1_from_counts_{i}"], None if want is None else float(want))
