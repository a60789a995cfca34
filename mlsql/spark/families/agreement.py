"""Agreement among several raters in Spark: Fleiss' kappa and Cochran's Q.

Each known row's ratings (NULL elements left out) give its raters and Σ_j n_ij² (a count
per rating of the ratings equal to it), summed as streaming aggregates. The category
totals need the group's ratings: each rating and its row's weight are collected, sorted
by category, and one fold sums the squares of the runs' totals, so memory grows with the
group's ratings (as the single-label class measures collect their pairs). The formula is
the registry's (:mod:`mlsql.measures.agreement`); rows of different numbers of raters
(or fewer than 2) fail the query with :data:`~mlsql.measures.agreement.RATERS_MESSAGE`.
Cochran's Q sums each known row's outcomes as streaming aggregates and each column's from
the group's collected (column, outcome) cells, as the categories' totals. ``ms.evaluate``
sums the totals with a ``groupBy`` by (category or column) instead
(:mod:`mlsql.spark.evaluate_agreement`): memory groups x categories, not rows.

Examples
--------
>>> from pyspark.sql import SparkSession
>>> import mlsql.spark as ms
>>> spark = SparkSession.builder.getOrCreate()
>>> df = spark.createDataFrame(
...     [(["a", "a", "b"],), (["b", "b", "b"],), (["a", "b", "a"],)], "ratings array<string>"
... )
>>> round(df.agg(ms.fleiss_kappa("ratings")).first()[0], 12)
0.1
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql._errors import MlsqlError
from mlsql._registry import Measure
from mlsql.measures import agreement as AG
from mlsql.spark._build import Example, shared_example
from mlsql.spark._types import check_label_lists, data_type
from mlsql.spark.families import _classification as K

FAMILIES = (AG.FAMILY,)


def _row_squares(rated: Column) -> Column:
    """Σ_j n_ij² of a row: Σ over its ratings of how many of its ratings equal each."""
    counts = F.transform(rated, lambda x: F.size(F.filter(rated, lambda y: y == x)))
    return F.aggregate(counts, F.lit(0).cast("long"), lambda acc, c: acc + c)


def _total_squares(cells: Column) -> Column:
    """Σ_j T_j² over (c, w) structs sorted by category c: the squared totals of the runs."""
    start = F.struct(
        F.lit(None).cast("string").alias("c"), F.lit(0.0).alias("run"), F.lit(0.0).alias("squares")
    )

    def step(acc: Column, x: Column) -> Column:
        c = x["c"].cast("string")  # integers or text: equal as text where equal
        same = acc["c"].isNotNull() & (acc["c"] == c)
        return F.struct(
            c.alias("c"),
            F.when(same, acc["run"] + x["w"]).otherwise(x["w"]).alias("run"),
            F.when(same, acc["squares"])
            .otherwise(acc["squares"] + acc["run"] * acc["run"])
            .alias("squares"),
        )

    return F.aggregate(cells, start, step, lambda acc: acc["squares"] + acc["run"] * acc["run"])


def outcome_stats(
    measure: Measure, *inputs: Column, weight: Column | None = None
) -> AG.OutcomeStats:
    """The group's known rows (their weight), values per row, T, Σ_i R_i² and Σ_j C_j²: each
    value checked as read (booleans or 0/1); the columns' sums from the group's collected
    (column, weighted outcome) cells, sorted by column."""
    (correct,) = inputs
    known = correct.isNotNull() & F.forall(correct, lambda x: x.isNotNull())
    if weight is not None:
        known = known & weight.isNotNull()
    flags = F.transform(correct, lambda x: K.binary_flag(measure.name, x).cast("double"))
    w = F.lit(1.0) if weight is None else weight.cast("double")
    size = F.when(known, F.size(correct))
    low, high = F.min(size), F.max(size)
    bad = F.raise_error(F.lit(AG.MODELS_MESSAGE.format(func=measure.name)))
    successes = F.aggregate(flags, F.lit(0.0), lambda acc, x: acc + x)
    cells = F.transform(flags, lambda x, j: F.struct(j.alias("c"), (x * w).alias("w")))
    collected = F.flatten(F.collect_list(F.when(known, cells)))
    n = F.count(F.when(known, 1)) if weight is None else F.sum(F.when(known, w))
    return AG.OutcomeStats(
        n=n.cast("double"),
        k=F.when((low != high) | (low < 2), bad).otherwise(low).cast("double"),
        total=F.sum(F.when(known, successes * w)),
        row_squares=F.sum(F.when(known, successes * successes * w)),
        column_squares=_total_squares(F.array_sort(collected)),
        rows=F.count(F.when(known, 1)),
    )


def input_check(measure: Measure) -> Any:
    """Ratings: arrays of labels; outcomes: arrays of booleans or integers."""
    return check_label_lists if measure.inputs == ("ratings",) else _check_flags


def _check_flags(func: str, names: Sequence[str], cols: Sequence[Column]) -> None:
    """Where the Column's type is known: an array of booleans or integers."""
    dtype = data_type(cols[0])
    fine = (T.BooleanType, T.IntegralType, T.NullType)
    if dtype is None or isinstance(dtype, T.NullType):
        return
    if not isinstance(dtype, T.ArrayType) or not isinstance(dtype.elementType, fine):
        raise MlsqlError(
            AG.FLAGS_MESSAGE.format(func=func, name=names[0], type=dtype.simpleString())
        )


def stats(measure: Measure, *inputs: Column, weight: Column | None = None) -> Any:
    """:func:`rating_stats` or :func:`outcome_stats`, by the measure's input."""
    if measure.inputs == ("ratings",):
        return rating_stats(measure, *inputs, weight=weight)
    return outcome_stats(measure, *inputs, weight=weight)


def rating_stats(measure: Measure, *inputs: Column, weight: Column | None = None) -> AG.RatingStats:
    """The group's known rows (their weight), raters per row, Σ_i w_i Σ_j n_ij² and
    Σ_j T_j² (T_j: the weight of the ratings of category j)."""
    (ratings,) = inputs
    known = ratings.isNotNull()
    if weight is not None:
        known = known & weight.isNotNull()
    rated = F.filter(ratings, lambda x: x.isNotNull())
    w = F.lit(1.0) if weight is None else weight.cast("double")
    size = F.when(known, F.size(rated))
    low, high = F.min(size), F.max(size)
    bad = F.raise_error(F.lit(AG.RATERS_MESSAGE.format(func=measure.name)))
    raters = F.when((low != high) | (low < 2), bad).otherwise(low).cast("double")
    cells = F.transform(rated, lambda x: F.struct(x.alias("c"), w.alias("w")))
    collected = F.flatten(F.collect_list(F.when(known, cells)))
    n = F.count(F.when(known, 1)) if weight is None else F.sum(F.when(known, w))
    return AG.RatingStats(
        n=n.cast("double"),
        raters=raters,
        squares=F.sum(F.when(known, _row_squares(rated) * w)),
        total_squares=_total_squares(F.array_sort(collected)),
        rows=F.count(F.when(known, 1)),
    )


def example(measure: Measure) -> Example | None:
    """Three subjects rated by three raters, or three models right or wrong on five rows."""
    return shared_example(measure, {"ratings": "array<string>", "correct": "array<int>"})
