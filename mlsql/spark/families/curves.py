"""Precision-recall and ROC curves in Spark: tables over a DataFrame.

The known rows are counted per (group, distinct score) (``groupBy``, a hash
aggregate that shrinks the data to its distinct scores), then window sums
partitioned by group and ordered by score from the highest give the
cumulative tp and fp of every threshold; the columns are the registry's
formulas (:func:`mlsql.measures.curves.values`), after a row of threshold
+inf per group. No collecting; labels are checked (boolean or 0/1) and scores
(finite numbers) as they are read.

Examples
--------
>>> from pyspark.sql import SparkSession
>>> import mlsql.spark as ms
>>> spark = SparkSession.builder.getOrCreate()
>>> df = spark.createDataFrame([(1, 0.9), (0, 0.4), (1, 0.4)], "y int, s double")
>>> [tuple(r) for r in ms.roc_curve(df, "y", "s").collect()]
[(inf, 0.0, 0.0), (0.9, 0.0, 0.5), (0.4, 1.0, 1.0)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from mlsql._errors import MlsqlError
from mlsql._front.docs import table
from mlsql._front.tables import curve_groups
from mlsql._params import check_zero_division
from mlsql.measures import curves as CV
from mlsql.spark._build import OPS
from mlsql.spark._engine import SPARK
from mlsql.spark._types import to_column
from mlsql.spark.families import _classification as K

FAMILIES = (CV.FAMILY,)  # tables only: no formula measure to generate
ALL = "__mlsql_all"


def _curve(
    func: str, source: DataFrame, actual: str, score: str, zero_division: Any, by: Any
) -> DataFrame:
    if not isinstance(source, DataFrame):
        raise MlsqlError(
            f"mlsql.spark.{func} takes a Spark DataFrame. Got {type(source).__name__}."
        )
    zd = check_zero_division(zero_division, func)
    schema = {f.name: f.dataType for f in source.schema.fields}
    shown = curve_groups(func, list(schema), actual, score, by)
    K.binary_type(func, "actual", schema[actual])
    K.number_type(func, "score", schema[score])
    a, s = to_column(actual, func, "actual"), to_column(score, func, "score")
    keys = [to_column(g, func, "by").alias(f"__g{i}") for i, g in enumerate(shown)]
    groups = [f"__g{i}" for i in range(len(shown))] or [ALL]
    y = K.binary_flag(func, a)
    # a score is checked on rows whose label is known; + 0.0 makes -0.0 and 0.0 one threshold
    x = K.finite(func, "score", F.when(a.isNotNull(), s)) + F.lit(0.0)
    rows = source.select(*(keys or [F.lit(0).alias(ALL)]), y.alias("y"), x.alias("s"))
    rows = rows.where(F.col("y").isNotNull() & F.col("s").isNotNull())
    steps = rows.groupBy(*groups, F.col("s").alias("threshold")).agg(
        F.sum("y").alias("hits"), F.count(F.lit(1)).alias("n")
    )
    upto = (
        Window.partitionBy(*groups)
        .orderBy(F.col("threshold").desc())
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    whole = Window.partitionBy(*groups)
    misses = F.col("n") - F.col("hits")
    cumulative = steps.select(
        *groups,
        "threshold",
        F.sum("hits").over(upto).alias("tp"),
        F.sum(misses).over(upto).alias("fp"),
        F.sum("hits").over(whole).alias("pos"),
        F.sum(misses).over(whole).alias("neg"),
    )
    start = cumulative.groupBy(*groups).agg(
        F.lit(float("inf")).alias("threshold"),
        F.lit(0).cast("long").alias("tp"),
        F.lit(0).cast("long").alias("fp"),
        F.first("pos").alias("pos"),
        F.first("neg").alias("neg"),
    )
    points = cumulative.unionByName(start)
    stats = CV.CurveStats(F.col("tp"), F.col("fp"), F.col("pos"), F.col("neg"))
    values = CV.values(OPS, func, stats, zd)
    out = points.select(
        *groups, "threshold", *(e.cast("double").alias(c) for c, e in values.items())
    )
    out = out.orderBy(*(F.col(g).asc_nulls_last() for g in groups), F.col("threshold").desc())
    named = [F.col(f"__g{i}").alias(name) for i, name in enumerate(shown)]
    return out.select(*named, "threshold", *values)


@table(
    SPARK,
    returns="""
    pyspark.sql.DataFrame
        The ``by`` columns, then threshold, precision, recall; ordered by
        group and descending threshold.
    """,
    example="""
    >>> from pyspark.sql import SparkSession
    >>> import mlsql.spark as ms
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(1, 0.9), (0, 0.4), (1, 0.4)], "y int, s double")
    >>> [tuple(r) for r in ms.precision_recall_curve(df, "y", "s").collect()]
    [(inf, 1.0, 0.0), (0.9, 1.0, 0.5), (0.4, 0.6666666666666666, 1.0)]
    """,
)
def precision_recall_curve(
    source: DataFrame,
    actual: str,
    score: str,
    *,
    zero_division: Any = 0,
    by: str | Sequence[str] | None = None,
) -> DataFrame:
    return _curve("precision_recall_curve", source, actual, score, zero_division, by)


@table(
    SPARK,
    returns="""
    pyspark.sql.DataFrame
        The ``by`` columns, then threshold, fpr, tpr; ordered by group and
        descending threshold.
    """,
    example="""
    >>> from pyspark.sql import SparkSession
    >>> import mlsql.spark as ms
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(1, 0.9), (0, 0.4), (1, 0.4)], "y int, s double")
    >>> [tuple(r) for r in ms.roc_curve(df, "y", "s").collect()]
    [(inf, 0.0, 0.0), (0.9, 0.0, 0.5), (0.4, 1.0, 1.0)]
    """,
)
def roc_curve(
    source: DataFrame,
    actual: str,
    score: str,
    *,
    zero_division: Any = 0,
    by: str | Sequence[str] | None = None,
) -> DataFrame:
    return _curve("roc_curve", source, actual, score, zero_division, by)


__all__ = ["precision_recall_curve", "roc_curve"]
