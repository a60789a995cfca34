"""mlsql for Spark: every measure as a function returning a PySpark ``Column``.

Each function takes column names or Columns and works in ``select``, ``agg``
and ``groupBy().agg`` (aggregates), and in ``select``/``withColumn`` (per-row
functions). Everything runs in the JVM as Spark's own expressions: no Python
UDF, nothing per row in Python.

Semantics are those of the SQL library (DESIGN.md section 1) under Spark 4's
defaults (ANSI mode on): labels are sets (repeats count once, NULL elements
are ignored), a NULL list makes the row unknown (aggregates skip it, per-row
functions give NULL), and both sides must hold the same kind of label. A type
mismatch raises :class:`MlsqlError` naming both types when mlsql can see the
types (Columns of a DataFrame such as ``df.actual``, and the frame-level
functions); for names, Spark's analyzer rejects it with an
``AnalysisException`` naming both types (see :mod:`mlsql.spark._types`).

For Spark SQL, :func:`register` adds the per-row and from-counts functions as
SQL functions of the session (Spark SQL has no user-defined aggregates
written in SQL).

Functions are generated from the measure registry (:mod:`mlsql._registry`);
family modules in :mod:`mlsql.spark.families` supply their statistics and
hand-written functions.

Examples
--------
>>> from pyspark.sql import SparkSession
>>> import mlsql.spark as ms
>>> spark = SparkSession.builder.getOrCreate()
>>> df = spark.createDataFrame(
...     [("m1", ["cat", "bird"], ["cat"]), ("m1", ["dog"], ["dog", "fish"]), ("m2", ["dog"], [])],
...     "model string, actual array<string>, predicted array<string>",
... )
>>> df.agg(ms.micro_f1("actual", "predicted")).first()[0]
0.5714285714285714
>>> sorted(df.groupBy("model").agg(ms.samples_jaccard("actual", "predicted")).collect())
[Row(model='m1', samples_jaccard=0.5), Row(model='m2', samples_jaccard=0.0)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlsql._errors import MlsqlError
from mlsql._front.families import functions
from mlsql.spark import evaluate, resample, resample_exec, slices
from mlsql.spark._engine import SPARK
from mlsql.spark.families._memory import documented
from mlsql.spark.sql import register

FUNCTIONS: dict[str, Callable[..., Any]] = functions(SPARK)
FUNCTIONS.update(resample.FUNCTIONS)
FUNCTIONS.update(evaluate.FUNCTIONS)
FUNCTIONS.update(slices.FUNCTIONS)
evaluate.MEASURES.update(FUNCTIONS)  # evaluate calls the measures by name
resample_exec.MEASURES.update(FUNCTIONS)  # so does the bootstrap in the executors
documented(FUNCTIONS)
globals().update(FUNCTIONS)

__all__ = ["FUNCTIONS", "MlsqlError", "register", *sorted(FUNCTIONS)]
