"""A rule's measures in Spark: novelty and satisfaction over (holds, fires) or stored counts.

The other rule measures are the binary ones with actual = holds (R) and
predicted = fires (L); see :mod:`mlsql.measures.rules`.

Examples
--------
>>> from pyspark.sql import SparkSession
>>> import mlsql.spark as ms
>>> spark = SparkSession.builder.getOrCreate()
>>> df = spark.createDataFrame(
...     [(True, True), (False, True), (True, False), (False, False), (False, False)],
...     "holds boolean, fires boolean",
... )
>>> round(df.agg(ms.nov("holds", "fires")).first()[0], 12)
0.04"""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column

from mlsql._registry import Measure
from mlsql.measures import rules as R
from mlsql.measures.contingency import Table2x2
from mlsql.spark.families import _classification as K
from mlsql.spark.families import binary as B
from mlsql.spark.families.binary import cells

FAMILIES = (R.FAMILY,)


def stats(measure: Measure, *inputs: Column, weight: Column | None = None) -> Table2x2:
    """Pooled cells of (holds, fires) (weighted if given), or one row's stored counts."""
    if measure.kind == "from_counts":
        # stored counts may be weights summed (fractions): DOUBLE, as the other engines read them
        return Table2x2(*(x.cast("double") for x in inputs))
    holds, fires = inputs
    return cells(measure.name, holds, fires, weight)


def input_check(measure: Measure) -> Any:
    """Stored counts are numbers; holds and fires boolean or 0/1."""
    return K.numeric_inputs if measure.kind == "from_counts" else K.binary_inputs


#: the lecture's five rows (holds, fires) or stored counts (:mod:`mlsql._front.examples`)
example = B.example


def sql_functions(label_type: str) -> list[Any]:
    """The stored-counts measures as Spark SQL functions (see :func:`mlsql.spark.register`)."""
    return K.sql_from_counts(R.FAMILY)
