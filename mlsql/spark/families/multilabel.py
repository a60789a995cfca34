"""Multi-label sets: statistics for the registry's formulas, set helpers and mergeable counts.

The per-row counts, ratios, micro and samples averages, subset accuracy,
Hamming loss and the ``*_from_counts`` functions are generated from their
registry formulas over :func:`mlsql.spark.stats.row_stats` (or the fields of
a stored counts struct). Written here by hand: the set helpers (arrays out),
``multilabel_counts`` (a struct) and ``merge_counts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql._errors import MlsqlError
from mlsql._formulas import RowStats
from mlsql._front.build import function, hand_written, lookup
from mlsql._registry import Measure
from mlsql.measures.multilabel import COUNTS_FIELDS, CountsFields, counts_fields, counts_message
from mlsql.spark import stats as st
from mlsql.spark._build import Check, run
from mlsql.spark._build import example as example_lines
from mlsql.spark._engine import SPARK
from mlsql.spark._types import check_label_lists, data_type

FAMILIES = ("multilabel",)
__all__ = hand_written("spark", FAMILIES)


# ---------------------------------------------------------------- plug-in hooks
def stats(measure: Measure, *inputs: Column) -> Any:
    """Row statistics of (actual, predicted), or the fields of stored counts."""
    if measure.kind == "from_counts":
        (counts,) = inputs
        return CountsFields(*(counts.getField(f) for f in COUNTS_FIELDS))
    return st.row_stats(*inputs)


def counts_struct(func: str, names: Sequence[str], cols: Sequence[Column]) -> None:
    """Check (where the type is known) that the input is a multilabel_counts struct."""
    dtype = data_type(cols[0])
    if dtype is None:
        return
    fields = {f.name for f in dtype.fields} if isinstance(dtype, T.StructType) else set()
    if not set(COUNTS_FIELDS) <= fields:
        raise MlsqlError(counts_message(func, names[0], dtype.simpleString()))


def input_check(measure: Measure) -> Check:
    """Label arrays of one kind, or a counts struct."""
    return counts_struct if measure.inputs == ("counts",) else check_label_lists


#: the docstring examples' table: two rows of Hivemall-style tags
EXAMPLE_ROWS = [(["cat", "bird"], ["cat"]), (["dog"], ["dog", "fish"])]
EXAMPLE_SCHEMA = "actual array<string>, predicted array<string>"
#: each measure's output on EXAMPLE_ROWS (from the exact fractions; n_labels=4)
EXAMPLE_OUTPUTS = {
    "set_intersection": "[['cat'], ['dog']]",
    "set_difference": "[['bird'], []]",
    "set_union": "[['bird', 'cat'], ['dog', 'fish']]",
    "set_symmetric_difference": "[['bird'], ['fish']]",
    "true_positives": "[1, 1]",
    "false_positives": "[0, 1]",
    "false_negatives": "[1, 0]",
    "true_negatives": "[2, 2]",
    "set_jaccard": "[0.5, 0.5]",
    "row_precision": "[1.0, 0.5]",
    "row_recall": "[0.5, 1.0]",
    "row_fbeta": "[0.6666666666666666, 0.6666666666666666]",
    "micro_precision": "0.6666666666666666",
    "micro_recall": "0.6666666666666666",
    "micro_fbeta": "0.6666666666666666",
    "micro_f1": "0.6666666666666666",
    "micro_jaccard": "0.5",
    "samples_precision": "0.75",
    "samples_recall": "0.75",
    "samples_fbeta": "0.6666666666666666",
    "samples_f1": "0.6666666666666666",
    "samples_jaccard": "0.5",
    "subset_accuracy": "0.0",
    "zero_one_loss": "1.0",
    "hamming_loss": "0.25",
    "micro_precision_from_counts": "0.6666666666666666",
    "micro_recall_from_counts": "0.6666666666666666",
    "micro_fbeta_from_counts": "0.6666666666666666",
    "micro_f1_from_counts": "0.6666666666666666",
    "micro_jaccard_from_counts": "0.5",
    "subset_accuracy_from_counts": "0.0",
    "zero_one_loss_from_counts": "1.0",
    "hamming_loss_from_counts": "0.25",
    "multilabel_counts": ("Row(n_rows=2, tp=2, fp=1, fn=1, n_actual=3, n_predicted=3, n_exact=0)"),
}


def example(measure: Measure) -> tuple[list[Any], str, dict[str, Any], str] | None:
    """The docstring example of ``measure`` (n_labels=4 where it needs one)."""
    if measure.name not in EXAMPLE_OUTPUTS:
        return None
    params = {"n_labels": 4} if any(p.name == "n_labels" for p in measure.params) else {}
    return EXAMPLE_ROWS, EXAMPLE_SCHEMA, params, EXAMPLE_OUTPUTS[measure.name]


def _example(name: str) -> list[str]:
    m = lookup(name)
    rows, schema, params, output = example(m)  # type: ignore[misc]
    return example_lines(name, m.kind, rows, schema, m.inputs, params, output)


# ---------------------------------------------------------------- set helpers
def _set_function(name: str, build: Any) -> Any:
    def sorted_set(actual: Column, predicted: Column) -> Column:
        return F.array_sort(build(actual, predicted))

    return function(SPARK, lookup(name), sorted_set, check_label_lists, example=_example(name))


set_intersection = _set_function(
    "set_intersection", lambda a, p: F.array_intersect(st.label_set(a), p)
)
set_difference = _set_function("set_difference", lambda a, p: F.array_except(st.label_set(a), p))
set_union = _set_function("set_union", lambda a, p: st.label_set(F.array_union(a, p)))
set_symmetric_difference = _set_function(
    "set_symmetric_difference",
    lambda a, p: F.array_union(
        F.array_except(st.label_set(a), p), F.array_except(st.label_set(p), a)
    ),
)


# ---------------------------------------------------------------- counts
def _counts(actual: Column, predicted: Column, sample_weight: Column | None = None) -> Column:
    fields = run(counts_fields, sample_weight, st.row_stats(actual, predicted))
    return F.struct(*(fields[name].alias(name) for name in COUNTS_FIELDS))


def _merge(counts: Column) -> Column:
    return F.struct(*(F.sum(counts.getField(f)).alias(f) for f in COUNTS_FIELDS))


multilabel_counts = function(
    SPARK,
    lookup("multilabel_counts"),
    _counts,
    check_label_lists,
    example=_example("multilabel_counts"),
)
merge_counts = function(SPARK, lookup("merge_counts"), _merge, counts_struct)
merge_counts.__doc__ = (merge_counts.__doc__ or "") + (
    "\nExamples\n--------\n"
    ">>> from pyspark.sql import SparkSession\n"
    ">>> import mlsql.spark as ms\n"
    ">>> spark = SparkSession.builder.getOrCreate()\n"
    ">>> df = spark.createDataFrame(\n"
    "...     [('mon', ['cat'], ['cat']), ('tue', ['dog'], ['cat'])],\n"
    "...     'day string, actual array<string>, predicted array<string>',\n"
    "... )\n"
    ">>> daily = df.groupBy('day').agg(ms.multilabel_counts('actual', 'predicted').alias('c'))\n"
    ">>> daily.agg(ms.micro_f1_from_counts(ms.merge_counts('c'))).first()[0]\n"
    "0.5\n"
)


# ---------------------------------------------------------------- Spark SQL (register)
def _sql_row_stats() -> Any:
    from mlsql._sqlexpr import Sql

    known = "actual IS NOT NULL AND predicted IS NOT NULL"
    a = "array_except(actual, array(NULL))"
    return RowStats(
        tp=Sql(f"CASE WHEN {known} THEN size(array_intersect({a}, predicted)) END"),
        n_actual=Sql(f"CASE WHEN {known} THEN size({a}) END"),
        n_predicted=Sql(f"CASE WHEN {known} THEN size(array_except(predicted, array(NULL))) END"),
    )


COUNTS_SQL_TYPE = "STRUCT<" + ", ".join(f"{f}: BIGINT" for f in COUNTS_FIELDS) + ">"


def sql_functions(label_type: str) -> list[Any]:
    """The SQL functions of this family for :func:`mlsql.spark.register`."""
    from mlsql._registry import measures
    from mlsql._sqlexpr import Sql
    from mlsql.spark.sql import Function, formula_function

    labels = (f"actual ARRAY<{label_type}>", f"predicted ARRAY<{label_type}>")
    out = [Function(name, labels, body) for name, body in SQL_SET_HELPERS.items()]
    for m in measures(family="multilabel"):
        if m.build is None or not m.available_in("spark"):
            continue
        if m.kind == "row":
            s = _sql_row_stats()
            if m.name in ("false_positives", "false_negatives"):
                s = RowStats(s.tp, s.n_actual, s.n_predicted)
            out.append(formula_function(m, s, labels))
        elif m.kind == "from_counts":
            k = CountsFields(*(Sql(f"counts.{f}") for f in COUNTS_FIELDS))
            out.append(formula_function(m, k, (f"counts {COUNTS_SQL_TYPE}",)))
    return out


#: the set helpers in Spark SQL (the same expressions as the Python functions above)
SQL_SET_HELPERS = {
    "set_intersection": "array_sort(array_intersect(array_except(actual, array(NULL)), predicted))",
    "set_difference": "array_sort(array_except(array_except(actual, array(NULL)), predicted))",
    "set_union": "array_sort(array_except(array_union(actual, predicted), array(NULL)))",
    "set_symmetric_difference": (
        "array_sort(array_union(array_except(array_except(actual, array(NULL)), predicted), "
        "array_except(array_except(predicted, array(NULL)), actual)))"
    ),
}
