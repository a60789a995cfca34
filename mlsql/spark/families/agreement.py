"""Agreement among several raters in Spark: Fleiss' kappa.

Each known row's ratings (NULL elements left out) give its raters and Σ_j n_ij² (a count
per rating of the ratings equal to it), summed as streaming aggregates. The category
totals need the group's ratings: each rating and its row's weight are collected, sorted
by category, and one fold sums the squares of the runs' totals, so memory grows with the
group's ratings (as the single-label class measures collect their pairs). The formula is
the registry's (:mod:`mlsql.measures.agreement`); rows of different numbers of raters
(or fewer than 2) fail the query with :data:`~mlsql.measures.agreement.RATERS_MESSAGE`.

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

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from mlsql._registry import Measure
from mlsql.measures import agreement as AG

FAMILIES = (AG.FAMILY,)
EXAMPLE = [(["a", "a", "b"],), (["b", "b", "b"],), (["a", "b", "a"],)]


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


def stats(measure: Measure, *inputs: Column, weight: Column | None = None) -> AG.RatingStats:
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


def example(measure: Measure) -> tuple[list[Any], str, dict[str, Any], str]:
    """Three subjects rated by three raters."""
    return EXAMPLE, "ratings array<string>", {}, "0.1"
