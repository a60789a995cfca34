"""Binary classification in Spark: the 2x2 measures over boolean / 0-1 columns or stored counts.

Every ``binary_<name>(actual, predicted)`` sums the four cells over the rows
where neither side is NULL (NULL over none) and runs the 2x2 formula of
:mod:`mlsql.measures.contingency`; ``binary_<name>_from_counts(tp, fp, fn, tn)``
runs it per row of stored counts; ``binary_counts`` returns the struct
{tp, fp, fn, tn}. A rule's measures (:mod:`mlsql.spark.families.rules`) are
the same over (holds, fires).

Examples
--------
>>> from pyspark.sql import SparkSession
>>> import mlsql.spark as ms
>>> spark = SparkSession.builder.getOrCreate()
>>> df = spark.createDataFrame([(1, 1), (1, 0), (0, 1), (0, 0)], "actual int, predicted int")
>>> df.agg(ms.binary_precision("actual", "predicted")).first()[0]
0.5"""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from mlsql._registry import Measure
from mlsql.measures import binary as B
from mlsql.measures.contingency import Table2x2
from mlsql.spark._build import Example, shared_example
from mlsql.spark.families import _classification as K

FAMILIES = (B.FAMILY,)


def cells(func: str, actual: Column, predicted: Column, weight: Column | None = None) -> Table2x2:
    """tp, fp, fn, tn summed over the rows where neither side is NULL (NULL over none); with
    a ``weight``, each row adds its weight to its cell."""
    a, p = K.binary_flag(func, actual), K.binary_flag(func, predicted)
    known = a.isNotNull() & p.isNotNull()
    row: tuple[Column, ...] = (a * p, (1 - a) * p, a * (1 - p), (1 - a) * (1 - p))
    if weight is not None:
        row = tuple(x * weight for x in row)
    return Table2x2(*(F.sum(F.when(known, x)) for x in row))


def stats(measure: Measure, *inputs: Column, weight: Column | None = None) -> Table2x2:
    """Pooled cells of (actual, predicted), or one row's stored counts."""
    if measure.kind == "from_counts":
        # stored counts may be weights summed (fractions): DOUBLE, as the other engines read them
        return Table2x2(*(x.cast("double") for x in inputs))
    actual, predicted = inputs
    return cells(measure.name, actual, predicted, weight)


def input_check(measure: Measure) -> Any:
    """Stored counts are numbers; label columns boolean or 0/1."""
    return K.numeric_inputs if measure.kind == "from_counts" else K.binary_inputs


#: the Spark types of the binary and rule examples' columns (:mod:`mlsql._front.examples`)
EXAMPLE_TYPES = {
    **dict.fromkeys(("actual", "predicted", "tp", "fp", "fn", "tn"), "int"),
    **dict.fromkeys(("holds", "fires"), "boolean"),
}


def example(measure: Measure) -> Example | None:
    """The docstring example of ``measure``: five rows of 0/1 labels, or stored counts."""
    return shared_example(measure, EXAMPLE_TYPES)


__all__: list[str] = []


def sql_functions(label_type: str) -> list[Any]:
    """The stored-counts measures as Spark SQL functions (see :func:`mlsql.spark.register`)."""
    return K.sql_from_counts(B.FAMILY)
