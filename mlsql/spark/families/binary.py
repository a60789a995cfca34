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

from mlsql._front.build import function, lookup
from mlsql._registry import Measure
from mlsql.measures import binary as B
from mlsql.measures.contingency import Table2x2
from mlsql.spark._build import IntoColumn
from mlsql.spark._engine import SPARK
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
        return Table2x2(*(x.cast("long") for x in inputs))
    actual, predicted = inputs
    return cells(measure.name, actual, predicted, weight)


def input_check(measure: Measure) -> Any:
    """Stored counts are numbers; label columns boolean or 0/1."""
    return K.numeric_inputs if measure.kind == "from_counts" else K.binary_inputs


def _counts(actual: Column, predicted: Column, sample_weight: Column | None = None) -> Column:
    t = cells("binary_counts", actual, predicted, sample_weight)
    return F.struct(*(getattr(t, f).alias(f) for f in B.COUNTS_FIELDS))


_binary_counts = function(SPARK, lookup("binary_counts"), _counts, K.binary_inputs)


def binary_counts(
    actual: IntoColumn, predicted: IntoColumn, *, sample_weight: IntoColumn | None = None
) -> Column:
    """Struct of tp, fp, fn, tn over rows (true / 1 positive): store it, sum it later.

    Parameters
    ----------
    actual, predicted : str or pyspark.sql.Column
        Boolean or 0/1 columns.
    sample_weight : str or pyspark.sql.Column, optional
        A weight per row (a finite number >= 0; a NULL weight makes the row
        unknown): the cells are sums of weights. None (the default): counts.

    Returns
    -------
    pyspark.sql.Column
        An aggregate struct {tp, fp, fn, tn} (each NULL over no known rows).

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> import mlsql.spark as ms
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(1, 1), (1, 0), (0, 0)], "actual int, predicted int")
    >>> df.agg(ms.binary_counts("actual", "predicted")).first()[0].asDict()
    {'tp': 1, 'fp': 0, 'fn': 1, 'tn': 1}
    """
    return _binary_counts(actual, predicted, sample_weight=sample_weight)


__all__ = ["binary_counts"]


def sql_functions(label_type: str) -> list[Any]:
    """The stored-counts measures as Spark SQL functions (see :func:`mlsql.spark.register`)."""
    return K.sql_from_counts(B.FAMILY)
