"""Precision-recall and ROC curves in Spark: tables over a DataFrame.

The known rows become cells: (y, s) per row for a numeric score, or (label,
y, s) per scored label (the score map's entries exploded, as the ranking
measures read them) and per true label without a score (at -inf). They are
counted per (group, label, distinct score) (``groupBy``, a hash aggregate
that shrinks the data to its distinct scores), the rows that neither score
nor hold a label added as its negatives at -inf, then window sums
partitioned by group and label, ordered by score from the highest, give the
cumulative tp and fp of every threshold; the columns are the registry's
formulas (:func:`mlsql.measures.curves.values`), after a row of threshold
+inf per group and label. With ``sample_weight`` every cell carries its row's
weight (a row weighing 0 is dropped) and the counts are sums of weights. No collecting; labels are checked (boolean or 0/1)
and scores (finite numbers) as they are read.

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

import operator
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql._errors import MlsqlError
from mlsql._front.build import formula
from mlsql._front.table_functions import TableCall, table_function
from mlsql._front.tables import curve_groups
from mlsql.measures import curves as CV
from mlsql.spark._engine import SPARK
from mlsql.spark._types import bound, to_column
from mlsql.spark._weights import weight
from mlsql.spark.families import _classification as K
from mlsql.spark.families import ranking as RK
from mlsql.spark.sql import SparkSqlOps
from mlsql.spark.text import SparkSql, column, ref, select, text

FAMILIES = (CV.FAMILY,)  # tables only: no formula measure to generate
ALL = "__mlsql_all"
TEXT = SparkSqlOps()


def _binary_cells(func: str, schema: dict[str, Any], a: Column, s: Column) -> tuple[Column, ...]:
    """The (y, s) of a row: a boolean or 0/1 label and its finite score."""
    K.binary_type(func, "actual", schema["actual"])
    K.number_type(func, "score", schema["score"])
    # a score is checked on rows whose label is known; + 0.0 makes -0.0 and 0.0 one threshold
    return K.binary_flag(func, a), K.finite(func, "score", F.when(a.isNotNull(), s)) + F.lit(0.0)


def _label_cells(func: str, rows: DataFrame, groups: list[str]) -> DataFrame:
    """The cells (label, y, s, w) of the rows' scored labels and of their true labels that are
    not scored (at -inf); ``rows`` holds the groups, ``a`` (true labels), ``e`` (entries) and
    ``w`` (the row's weight)."""
    scored = rows.select(*groups, "a", "w", F.explode("e").alias("c")).select(
        *groups,
        F.col("c.label").alias("label"),
        # array_contains is NULL, not false, when the array holds a NULL element
        F.coalesce(F.array_contains("a", F.col("c.label")), F.lit(False)).cast("long").alias("y"),
        (K.finite(func, "score", F.col("c.score")) + F.lit(0.0)).alias("s"),
        "w",
    )

    def unscored(x: Column) -> Column:
        return x.isNotNull() & ~F.exists("e", lambda entry: entry["label"] == x)

    truth = rows.select(
        *groups, "w", F.explode(F.filter(F.array_distinct("a"), unscored)).alias("label")
    ).select(
        *groups,
        "label",
        F.lit(1).cast("long").alias("y"),
        F.lit(float("-inf")).alias("s"),
        "w",
    )
    return scored.unionByName(truth)


def _curve(source: DataFrame, call: TableCall) -> DataFrame:
    func, by, sample_weight = call.func, call.by, call.sample_weight
    actual, score = call.columns.values()
    if not isinstance(source, DataFrame):
        raise MlsqlError(
            f"mlsql.spark.{func} takes a Spark DataFrame. Got {type(source).__name__}."
        )
    zd, drop_intermediate = CV.curve_params(call.params)
    schema = {f.name: f.dataType for f in source.schema.fields}
    shown = curve_groups(func, list(schema), actual, score, by, sample_weight)
    a, s = to_column(actual, func, "actual"), to_column(score, func, "score")
    # each row's weight (checked; a row weighing 0 or NULL is dropped), or 1
    if sample_weight is None:
        w, zero = F.lit(1).cast("long"), F.lit(0).cast("long")
    else:
        w, zero = weight(func, bound(source, sample_weight)), F.lit(0.0)
    named_keys = [to_column(g, func, "by").alias(f"__g{i}") for i, g in enumerate(shown)]
    groups = [f"__g{i}" for i in range(len(shown))] or [ALL]
    selected = named_keys or [F.lit(0).alias(ALL)]
    per_label = isinstance(schema[score], (T.MapType, T.ArrayType))
    if per_label:
        fields = RK.score_fields(func, "score", schema[score])
        if not isinstance(schema[actual], (T.ArrayType, T.NullType)):
            raise MlsqlError(
                RK.NOT_A_LIST_MESSAGE.format(
                    func=func, name="actual", type=schema[actual].simpleString()
                )
            )
        rows = source.select(
            *selected, a.alias("a"), RK.score_entries(s, fields).alias("e"), w.alias("w")
        )
        # the weight first: every row's weight is checked, a known row's or not
        rows = rows.where((F.col("w") > 0) & a.isNotNull() & s.isNotNull())
        keys = [*groups, "label"]
        steps = _steps(_label_cells(func, rows, groups), keys)
        # the rows that neither score a label nor hold it: negatives at -inf
        known_rows = rows.groupBy(*groups).agg(
            F.sum("w").alias("rows"), F.count(F.lit(1)).alias("count")
        )
        known_rows = known_rows.select(
            *(F.col(g).alias(f"__rows{g}") for g in groups), "rows", "count"
        )
        per_key = steps.groupBy(*keys).agg(
            F.sum("n").alias("covered"), F.sum("m").alias("covered_count")
        )
        on = [F.col(g).eqNullSafe(F.col(f"__rows{g}")) for g in groups]
        unscored = (
            per_key.join(known_rows, reduce(operator.and_, on))
            .where(F.col("count") > F.col("covered_count"))
            .select(
                *keys,
                F.lit(float("-inf")).alias("threshold"),
                zero.alias("hits"),
                (F.col("rows") - F.col("covered")).alias("n"),
                (F.col("count") - F.col("covered_count")).alias("m"),
            )
        )
        steps = (
            steps.unionByName(unscored)
            .groupBy(*keys, "threshold")
            .agg(F.sum("hits").alias("hits"), F.sum("n").alias("n"))
        )
    else:
        y, x = _binary_cells(func, {"actual": schema[actual], "score": schema[score]}, a, s)
        rows = source.select(*selected, y.alias("y"), x.alias("s"), w.alias("w"))
        keys = groups
        known = (F.col("w") > 0) & F.col("y").isNotNull() & F.col("s").isNotNull()
        steps = _steps(rows.where(known), keys)
    # the cumulative counts and the formulas as Spark SQL text (mlsql.spark.text): few JVM calls
    zero_text = "CAST(0 AS BIGINT)" if sample_weight is None else "0.0D"
    whole = "PARTITION BY " + ", ".join(str(ref(k)) for k in keys)
    upto = f"{whole} ORDER BY `threshold` DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
    misses = "(`n` - `hits`)"
    cumulative = steps.selectExpr(
        *(str(ref(k)) for k in keys),
        "`threshold`",
        f"sum(`hits`) OVER ({upto}) AS `tp`",
        f"sum({misses}) OVER ({upto}) AS `fp`",
        f"sum(`hits`) OVER ({whole}) AS `pos`",
        f"sum({misses}) OVER ({whole}) AS `neg`",
    )
    start = cumulative.groupBy(*keys).agg(
        column(float("inf"), "threshold"),
        column(SparkSql(zero_text), "tp"),
        column(SparkSql(zero_text), "fp"),
        column(SparkSql("first(`pos`)"), "pos"),
        column(SparkSql("first(`neg`)"), "neg"),
    )
    points = cumulative.unionByName(start)
    kept = "__mlsql_kept"  # a window function may not stand in a WHERE clause: a column first
    if drop_intermediate:
        points = points.withColumn(kept, _kept(func, keys, True)).where(F.col(kept)).drop(kept)
    if func == "det_curve":  # trimmed after the drop, as scikit-learn does
        points = points.withColumn(kept, _kept(func, keys, False)).where(F.col(kept)).drop(kept)
    elif func in CV.COUNTS:
        points = points.where(CV.counts_point_kept(CV.CurvePoint(F.col("threshold"), None, None)))
    stats = CV.CurveStats(ref("tp"), ref("fp"), ref("pos"), ref("neg"))
    values = formula(func)(TEXT, stats, zero_division=zd)
    doubles = {c: SparkSql(f"CAST({text(e)} AS DOUBLE)") for c, e in values.items()}
    out = select(points, *keys, "threshold", **doubles)
    out = out.orderBy(*(F.col(k).asc_nulls_last() for k in keys), F.col("threshold").desc())
    named = [F.col(f"__g{i}").alias(name) for i, name in enumerate(shown)]
    return out.select(*named, *(["label"] if per_label else []), "threshold", *values)


def _kept(func: str, keys: list[str], dropping: bool) -> Column:
    """Whether a point stays in curve ``func`` (``dropping``:
    :func:`mlsql.measures.curves.dropped_point_kept` under ``drop_intermediate``; else
    :func:`mlsql.measures.curves.det_point_kept`): its neighbours within its group and label
    by descending threshold, (+inf, -1, -1) before the first and (-inf, -1, -1) after the
    last."""
    order = Window.partitionBy(*keys).orderBy(F.col("threshold").desc())

    def near(name: str, by: int, fill: float) -> Column:
        shifted = F.lag(name, by) if by > 0 else F.lead(name, -by)
        return F.coalesce(shifted.over(order), F.lit(fill))

    neighbours = (
        CV.CurvePoint(near("threshold", 1, float("inf")), near("fp", 1, -1), near("tp", 1, -1)),
        CV.CurvePoint(F.col("threshold"), F.col("fp"), F.col("tp")),
        CV.CurvePoint(near("threshold", -1, float("-inf")), near("fp", -1, -1), near("tp", -1, -1)),
    )
    if dropping:
        return CV.dropped_point_kept(func, *neighbours)
    return CV.det_point_kept(*neighbours, F.max("tp").over(Window.partitionBy(*keys)))


def _steps(cells: DataFrame, keys: list[str]) -> DataFrame:
    """Known cells (y, s, w) summed per key and distinct score: threshold, hits (the positive
    cells' weight), n (all cells' weight), m (the number of cells)."""
    return cells.groupBy(*keys, F.col("s").alias("threshold")).agg(
        F.sum(F.col("y") * F.col("w")).alias("hits"),
        F.sum("w").alias("n"),
        F.count(F.lit(1)).alias("m"),
    )


precision_recall_curve = table_function(SPARK, "precision_recall_curve", _curve)


roc_curve = table_function(SPARK, "roc_curve", _curve)


det_curve = table_function(SPARK, "det_curve", _curve)


confusion_matrix_at_thresholds = table_function(SPARK, "confusion_matrix_at_thresholds", _curve)


__all__ = ["confusion_matrix_at_thresholds", "det_curve", "precision_recall_curve", "roc_curve"]
