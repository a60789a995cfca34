"""``bootstrap`` and ``compare`` for Spark: resampled in the executors where the family allows.

Each row's statistics (tp, |A|, |P| of its label sets, or its (actual,
predicted) cell, and its checked weight) are grouped and counted by Spark:
the statistics table, one tuple per distinct statistics with its rows m.

- Label sets (micro and samples measures, subset accuracy, Hamming loss,
  fmeasure), one label per row (accuracy, error rate, the class-wise
  measures), regression and binary scores: the table stays in Spark, each
  tuple draws its Poisson(m) weight per resample in the executors from a
  counter-based hash of its content, and the resamples, intervals and p-values
  are aggregated there (:mod:`mlsql.spark.resample_exec`,
  :mod:`mlsql.spark.resample_draw`). Only the result rows reach the driver.
  The same seed gives the same result however the data is partitioned; the
  draws are Spark's own, so the intervals equal the other engines' within
  Monte Carlo error. Numbers rarely repeat, so their table holds about a
  tuple per row and their resamples about 0.63 x rows x resamples rows (the
  tuples drawing 0 are dropped), sorted in the executors: the cost grows as
  rows x resamples, and Spark's row engine pays about a microsecond a row
  where numpy pays nanoseconds. So a table of numbers of at most 1,000,000
  tuples (:data:`mlsql.spark.resample_exec.DRIVER_TUPLES`; the Spark conf
  ``spark.mlsql.bootstrap.driverTuples`` sets another budget, 0 none) is
  collected and resampled on the driver as below (the other engines' result
  exactly), and a larger one in the executors: the driver holds at most the
  budget's tuples (about 150 MB), whatever the rows. ``compare``'s Student's t
  and Fisher's randomization tests of numbers past the budget run there too
  (:mod:`mlsql.spark.resample_tests`); of labels, they read the distinct pairs
  of statistics tuples (a few) on the driver.
- The macro and weighted multi-label averages (tuples are whole label sets):
  within the budget on the driver, as the numbers; past it ``bootstrap`` draws
  them in the executors too, each resample's averages from ``ms.evaluate``'s
  plan (per group, resample and label counts, summed exactly). ``compare``
  of them past the budget is an error that says so.
- Driver-side: the class-score measures (about one tuple per row), and the
  numbers and averages within the budget: the distinct tuples are collected
  and resampled by :mod:`mlsql._resample.run` with numpy, exactly as the
  DuckDB and Polars engines do (same seed, same result). The driver holds
  every distinct tuple (for class scores about every row, some 100 bytes
  each) plus a batch of resample weights (about 64 MB); a table of class
  scores (or a ``compare`` of averages) past the budget's tuples is an error
  that says so once one more than the budget is read
  (:func:`mlsql.spark.resample_exec.held_rows`), not a driver out of memory.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql._resample import front, function, paired, run
from mlsql._resample.measures import STATS
from mlsql.spark import resample_exec as X
from mlsql.spark import resample_tests as XT
from mlsql.spark import stats as st
from mlsql.spark._engine import SPARK
from mlsql.spark._types import bound, kind
from mlsql.spark._weights import weight

_NAMES = ["actual", "predicted"]
_MODEL, _ID = "__mlsql_model", "__mlsql_id"


def _checked(req: front.Request, df: DataFrame, actual: str, predicted: str) -> list[Column]:
    """The statistic Columns of ``req``'s measures, named ``__mlsql_s0``, ``__mlsql_s1``..."""
    dtypes = [df.schema[actual].dataType, df.schema[predicted].dataType]
    lists = [isinstance(d, T.ArrayType) for d in dtypes]
    kinds = [kind(d.elementType if isinstance(d, T.ArrayType) else d) for d in dtypes]
    a, p = bound(df, actual), bound(df, predicted)
    if req.stats == "class_scores":
        return [c.alias(f"__mlsql_s{i}") for i, c in enumerate(_class_score_row(req, a, p))]
    if front.is_numbers(req):
        front.check_numbers(req, _NAMES, lists, kinds, [d.simpleString() for d in dtypes])
        known = a.isNotNull() & p.isNotNull()
        # both sides NULL where one is; -0.0 as 0.0
        cols = [F.when(known, c.cast("double") + 0.0) for c in (a, p)]
        return [c.alias(f"__mlsql_s{i}") for i, c in enumerate(cols)]
    front.check_labels(req, _NAMES, lists, kinds, [d.simpleString() for d in dtypes])
    if req.stats == "label_sets":
        s = st.row_stats(a, p)
        cols = [s.tp, s.n_actual, s.n_predicted]
    elif req.stats == "label_lists":  # each row's label sets, as sorted lists
        cols = [
            F.array_sort(F.array_distinct(F.filter(c, lambda x: x.isNotNull()))) for c in (a, p)
        ]
    else:
        cols = [a, p]
    return [c.alias(f"__mlsql_s{i}") for i, c in enumerate(cols)]


def _class_score_row(req: front.Request, actual: Column, scores: Column) -> list[Column]:
    """A row's numbers for the class-score measures
    (:data:`mlsql._resample.numbers.CLASS_SCORE_STATS`; NULL where either input is): the
    measures' own per-row Columns. Each probability is read unchecked: the lowest and highest
    are checked (finite, within [0, 1]) by :mod:`mlsql._resample.numbers`, whose verdict
    every engine gives."""
    from mlsql.spark.families import class_scores as CSF

    checked = CSF._check(req.func, _NAMES, [actual, scores])
    a, s = checked if checked is not None else (actual, scores)
    row = CSF._row(req.func, a, s, checked=False)
    confidence, correct, _ = CSF._top(req.func, a, s, checked=False)
    known = actual.isNotNull() & scores.isNotNull()
    values = [row["loss"], row["width"], confidence, correct, row["low"], row["high"]]
    return [F.when(known, v.cast("double")) for v in values]


def _name(sample_weight: str | Column | None) -> str | None:
    """The weight's column to find in the data (a Column is resolved by Spark)."""
    return None if isinstance(sample_weight, Column) else sample_weight


def _weight(req: front.Request, df: DataFrame, sample_weight: str | Column | None) -> Column:
    """A row's weight, checked as the weighted measures check it (1 when unweighted)."""
    if sample_weight is None:
        w = F.lit(1.0).cast("double")
    else:
        col = bound(df, sample_weight) if isinstance(sample_weight, str) else sample_weight
        w = weight(req.func, col, df.select(col).schema[0].dataType)
    return w.alias(f"__mlsql_s{len(STATS[req.stats])}")


def _bootstrap(df: DataFrame, req: front.Request, a: Mapping[str, Any]) -> DataFrame:
    """``ms.bootstrap`` of the checked call ``req`` (``a``: its arguments)."""
    actual, predicted, sample_weight, measures = (
        a[k] for k in ("actual", "predicted", "sample_weight", "measures")
    )
    stats = [*_checked(req, df, actual, predicted), _weight(req, df, sample_weight)]
    groups = [f"__mlsql_by{i}" for i in range(len(req.by))]
    names = [f"__mlsql_s{i}" for i in range(len(stats))]
    by_cols = [bound(df, b).alias(g) for b, g in zip(req.by, groups, strict=True)]
    tuples = df.groupBy(*by_cols, *stats).count()
    if req.stats in (*X.KINDS, X.AVERAGES):  # None: resampled in the executors
        rows = X.driver_rows(req, tuples)
    else:
        rows = X.held_rows(req, tuples, "bootstrap")
    if rows is None:
        out = X.bootstrap(req, measures, tuples, groups, names)
    else:
        args = (req.chosen, req.n_resamples, req.confidence, req.seed)
        out = run.bootstrap(rows, len(req.by), *args)
    return _frame(df, [*req.by, *front.BOOTSTRAP_COLUMNS], out, len(req.by))


def _compare(df: DataFrame, req: front.Request, a: Mapping[str, Any]) -> DataFrame:
    """``ms.compare`` of the checked call ``req`` (``a``: its arguments)."""
    actual, predicted, sample_weight, measures = (
        a[k] for k in ("actual", "predicted", "sample_weight", "measures")
    )
    model, id, baseline, drop_unpaired = (
        a[k] for k in ("model", "id", "baseline", "drop_unpaired")
    )
    stats = [*_checked(req, df, actual, predicted), _weight(req, df, sample_weight)]
    names = [f"__mlsql_s{i}" for i in range(len(STATS[req.stats]) + 1)]
    groups = [f"__mlsql_by{i}" for i in range(len(req.by))]
    rows = df.select(
        *(bound(df, b).alias(g) for b, g in zip(req.by, groups, strict=True)),
        bound(df, model).alias(_MODEL),
        bound(df, id).alias(_ID),
        *stats,
    )
    totals = {r[0]: r[1] for r in rows.groupBy(_MODEL).count().collect()}
    repeated = sum(totals.values()) - rows.select(*groups, _MODEL, _ID).distinct().count()
    paired_rows: list[tuple[Any, ...]] = []
    if baseline in totals:
        known = rows.where(F.col(_ID).isNotNull())
        m = known.where(F.col(_MODEL) != F.lit(baseline)).alias("m")
        b = known.where(F.col(_MODEL) == F.lit(baseline)).alias("b")
        on = F.col(f"m.{_ID}") == F.col(f"b.{_ID}")
        for g in groups:
            on = on & F.col(f"m.{g}").eqNullSafe(F.col(f"b.{g}"))
        keys = [
            *(F.col(f"m.{g}") for g in groups),
            F.col(f"m.{_MODEL}"),
            *(F.col(f"b.{n}").alias(f"{n}_b") for n in names),
            *(F.col(f"m.{n}") for n in names),
        ]
        joined = m.join(b, on, "inner").groupBy(*keys).count()
        if req.stats in X.KINDS:  # None: resampled in the executors
            collected = X.driver_rows(req, joined)
        else:
            collected = X.held_rows(req, joined, "compare")
        if collected is None:
            counted = joined.groupBy(_MODEL).agg(F.sum("count")).collect()
            ids = {r[0]: r[1] for r in counted}
            front.check_pairs(model, id, baseline, totals, ids, repeated, drop_unpaired)
            base = [f"{n}_b" for n in names]
            tested = req.test != "bootstrap" and req.stats in X.NUMBER_KINDS  # a tuple per id
            found = XT.p_values(req, joined, groups, base, names) if tested else {}
            out = X.compare(req, measures, joined, groups, base, names)
            if tested:
                out = paired.replace_p_values(out, len(req.by), found)
            elif req.test != "bootstrap":  # the distinct pairs of label cells: a few
                out = front.apply_test(req, [tuple(r) for r in joined.collect()], out)
            return _frame(df, [*req.by, *front.COMPARE_COLUMNS], out, len(req.by), model)
        paired_rows = collected
    out = front.compared(req, model, id, baseline, totals, paired_rows, repeated, drop_unpaired)
    return _frame(df, [*req.by, *front.COMPARE_COLUMNS], out, len(req.by), model)


_TYPES = ("DataFrame", "str | Column", "DataFrame")


def _names(df: DataFrame) -> list[str]:
    return df.columns


BOOTSTRAP_EXAMPLE = """
    >>> from pyspark.sql import SparkSession
    >>> import mlsql.spark as ms
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(["a", "b"], ["a"]), (["b"], ["b"]), (["a"], ["b"])] * 20,
    ...                            "actual array<string>, predicted array<string>")
    >>> ms.bootstrap(df, "actual", "predicted", ["micro_f1"], n_resamples=200).first()[:2]
    ('micro_f1', 0.5714285714285714)
    """
bootstrap = function.resampling_function(
    "bootstrap", SPARK, _TYPES, _names, _name, _bootstrap, BOOTSTRAP_EXAMPLE
)
COMPARE_EXAMPLE = """
    >>> from pyspark.sql import SparkSession
    >>> import mlsql.spark as ms
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame(
    ...     [(1, "A", "x", "x"), (2, "A", "y", "x"), (3, "A", "x", "x"),
    ...      (1, "B", "x", "x"), (2, "B", "y", "y"), (3, "B", "x", "x")],
    ...     "id int, model string, actual string, predicted string")
    >>> ms.compare(df, "actual", "predicted", ["accuracy"], n_resamples=200).first()[:5]
    ('B', 'accuracy', 0.6666666666666666, 1.0, 0.33333333333333337)
    """
compare = function.resampling_function(
    "compare", SPARK, _TYPES, _names, _name, _compare, COMPARE_EXAMPLE
)


#: Spark's word on seeds, in place of the shared summary's "in every engine"
_SEEDS = (
    r"the same\s+seed gives the same result in every engine\.",
    "the same\nseed gives the same result however the data is partitioned (label sets, one\n"
    "label per row, and regression and binary scores of more than a million distinct\n"
    "tuples draw in Spark's executors, from Spark's own hash: their intervals equal the\n"
    "other engines' within Monte Carlo error).",
)
bootstrap.__doc__ = re.sub(*_SEEDS, bootstrap.__doc__ or "")

#: the public functions of this module (DataFrame in, DataFrame out)
FUNCTIONS = {"bootstrap": bootstrap, "compare": compare}


def _frame(
    df: DataFrame,
    names: list[str],
    rows: list[tuple[Any, ...]],
    n_by: int,
    model: str | None = None,
) -> DataFrame:
    """The result rows as a DataFrame: group (and model) columns keep their types."""
    fields = []
    for i, name in enumerate(names):
        if i < n_by:
            dtype = df.schema[name].dataType
        elif name == "model" and model is not None:
            dtype = df.schema[model].dataType
        elif name == "measure":
            dtype = T.StringType()
        else:
            dtype = T.DoubleType()
        fields.append(T.StructField(name, dtype, True))
    return df.sparkSession.createDataFrame(rows, T.StructType(fields))
