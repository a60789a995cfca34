"""What a user's type checker sees of mlsql: ``tests/test_typing.py`` runs mypy on this file.

Each ``assert_type`` fails the mypy run when a public function's type is lost
(say, a function typed ``Any`` again); each ``type: ignore[code]`` marks a call
that must stay an error (mypy's ``warn_unused_ignores`` reports the ignore once
the call type-checks). The functions are never called: this file is read, not run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb
import polars as pl

import mlsql
import mlsql.polars as mp

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from typing_extensions import assert_type

    import mlsql.spark as ms


def duckdb_usage() -> None:
    con = mlsql.connect()
    assert_type(con, duckdb.DuckDBPyConnection)


def polars_usage(df: pl.DataFrame, lf: pl.LazyFrame) -> None:
    assert_type(mp.micro_f1("actual", "predicted"), pl.Expr)
    assert_type(mp.micro_fbeta(pl.col("actual"), "predicted", beta=2.0), pl.Expr)
    assert_type(mp.micro_fbeta("actual", "predicted", zero_division="ignore"), pl.Expr)
    assert_type(mp.coverage_error("actual", "scores"), pl.Expr)
    assert_type(mp.precision_at("rank_items", "correct_items", k=3), pl.Expr)
    assert_type(mp.set_intersection("actual", "predicted"), pl.Expr)
    assert_type(mp.label_metrics(df, "actual", "predicted"), pl.DataFrame)
    assert_type(mp.multilabel_report(lf, "actual", "predicted", by="model"), pl.LazyFrame)
    assert_type(mp.confusion_matrix_wide(lf, "actual", "predicted"), pl.DataFrame)
    df.select(mp.samples_jaccard("actual", "predicted"))
    mp.micro_f1("actual", "predicted", beta=2.0)  # type: ignore[call-arg]
    mp.micro_fbeta("actual", "predicted", beta="2")  # type: ignore[arg-type]
    mp.micro_f1(1, "predicted")  # type: ignore[arg-type]
    mp.no_such_measure("actual", "predicted")  # type: ignore[attr-defined]


def spark_usage(df: DataFrame) -> None:
    assert_type(ms.micro_f1("actual", "predicted"), Column)
    assert_type(ms.micro_fbeta(df.actual, df.predicted, beta=2.0), Column)
    assert_type(ms.coverage_error("actual", "scores"), Column)
    assert_type(ms.label_metrics(df, "actual", "predicted"), DataFrame)
    assert_type(ms.register(df.sparkSession), list[str])
    df.groupBy("model").agg(ms.micro_f1("actual", "predicted"))
    ms.micro_f1("actual", "predicted", beta=2.0)  # type: ignore[call-arg]
    ms.micro_f1(1, "predicted")  # type: ignore[arg-type]
