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


#: the docstring examples' tables, Polars' too: five rows of 0/1 labels (one per cell, two
#: true positives) and one row of stored counts tp, fp, fn, tn (4, 2, 1, 3)
EXAMPLE_ROWS = [(1, 1), (1, 1), (1, 0), (0, 1), (0, 0)]
EXAMPLE_COUNTS = [(4, 2, 1, 3)]
COUNTS_SCHEMA = "tp int, fp int, fn int, tn int"
#: each measure's output on its table (alpha 2 for the F-alpha); Polars' examples show the
#: same (tests/test_spark_docs.py compares them)
EXAMPLE_OUTPUTS = {
    "binary_counts": "Row(tp=2, fp=1, fn=1, tn=1)",
    "binary_precision": "0.6666666666666666",
    "binary_precision_from_counts": "0.6666666666666666",
    "binary_recall": "0.6666666666666666",
    "binary_recall_from_counts": "0.8",
    "binary_specificity": "0.5",
    "binary_specificity_from_counts": "0.6",
    "binary_negative_predictive_value": "0.5",
    "binary_negative_predictive_value_from_counts": "0.75",
    "binary_support": "0.4",
    "binary_support_from_counts": "0.4",
    "binary_accuracy": "0.6",
    "binary_accuracy_from_counts": "0.7",
    "binary_coverage": "0.6",
    "binary_coverage_from_counts": "0.6",
    "binary_error_rate": "0.4",
    "binary_error_rate_from_counts": "0.3",
    "binary_fbeta": "0.6666666666666666",
    "binary_fbeta_from_counts": "0.7272727272727273",
    "binary_f1": "0.6666666666666666",
    "binary_f1_from_counts": "0.7272727272727273",
    "binary_f_alpha": "0.6666666666666666",
    "binary_f_alpha_from_counts": "0.75",
    "binary_kappa": "0.16666666666666666",
    "binary_kappa_from_counts": "0.4",
    "binary_kappa_std_error": "0.44574462599670045",
    "binary_kappa_std_error_from_counts": "0.28397182958878153",
    "binary_kappa_z_value": "0.3726779962499647",
    "binary_kappa_z_value_from_counts": "1.2909944487358058",
    "binary_kappa_p_value": "0.7093881150142264",
    "binary_kappa_p_value_from_counts": "0.1967056024589469",
    "binary_kappa_p_value_one_sided": "0.3546940575071132",
    "binary_kappa_p_value_one_sided_from_counts": "0.09835280122947344",
    "binary_mcnemar_statistic": "0.5",
    "binary_mcnemar_statistic_from_counts": "0.0",
    "binary_mcnemar_p_value": "0.4795001221869536",
    "binary_mcnemar_p_value_from_counts": "1.0",
    "binary_false_negative_rate": "0.3333333333333333",
    "binary_false_negative_rate_from_counts": "0.2",
    "binary_false_positive_rate": "0.5",
    "binary_false_positive_rate_from_counts": "0.4",
    "binary_cost_error": "0.4",
    "binary_cost_error_from_counts": "0.3",
}


def example(measure: Measure) -> tuple[list[Any], str, dict[str, Any], str] | None:
    """The docstring example of ``measure``, where it has one."""
    if measure.name not in EXAMPLE_OUTPUTS:
        return None
    params = {"alpha": 2.0} if measure.name.startswith("binary_f_alpha") else {}
    output = EXAMPLE_OUTPUTS[measure.name]
    if measure.kind == "from_counts":
        return EXAMPLE_COUNTS, COUNTS_SCHEMA, params, output
    return EXAMPLE_ROWS, "actual int, predicted int", params, output


__all__: list[str] = []


def sql_functions(label_type: str) -> list[Any]:
    """The stored-counts measures as Spark SQL functions (see :func:`mlsql.spark.register`)."""
    return K.sql_from_counts(B.FAMILY)
