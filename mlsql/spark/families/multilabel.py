"""Multi-label sets: statistics for the registry's formulas, and their Spark SQL functions.

Every function of the family is generated from its registry formula: the
per-row counts, ratios, micro and samples averages, subset accuracy, Hamming
loss and ``multilabel_counts`` (a struct) over
:func:`mlsql.spark.stats.row_stats`; the ``*_from_counts`` functions and
``merge_counts`` over the fields of a stored counts struct; the set helpers
over the two arrays, with :class:`~mlsql.spark.ops.SparkOps`' list primitives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import Column
from pyspark.sql import types as T

from mlsql._errors import MlsqlError
from mlsql._formulas import RowStats
from mlsql._registry import Measure
from mlsql.measures.multilabel import COUNTS_FIELDS, CountsFields, LabelLists, counts_message
from mlsql.spark import stats as st
from mlsql.spark._build import Check, Example, shared_example
from mlsql.spark._types import check_label_lists, data_type

FAMILIES = ("multilabel",)
__all__: list[str] = []  # every function is generated from the registry


# ---------------------------------------------------------------- plug-in hooks
def stats(measure: Measure, *inputs: Column) -> Any:
    """Row statistics of (actual, predicted), the two arrays of a set helper, or the fields
    of stored counts."""
    if measure.inputs == ("counts",):
        (counts,) = inputs
        fields = (counts.getField(f) for f in COUNTS_FIELDS)
        if measure.kind == "from_counts":  # as DOUBLE: BIGINT sums of them overflowed
            return CountsFields(*(f.cast("double") for f in fields))
        return CountsFields(*fields)  # merge_counts: summed as stored
    if measure.kind == "set":
        return LabelLists(*inputs)
    return st.row_stats(*inputs)


def counts_struct(func: str, names: Sequence[str], cols: Sequence[Column]) -> None:
    """Check (where the type is known) that the input is a multilabel_counts struct."""
    dtype = data_type(cols[0])
    if dtype is None:
        return
    fields = {f.name: f.dataType for f in dtype.fields} if isinstance(dtype, T.StructType) else {}
    # every field a number: cast to double for the formulas, text such as '2.5' would be read
    numbers = all(isinstance(fields.get(f), T.NumericType) for f in COUNTS_FIELDS)
    if not numbers:
        raise MlsqlError(counts_message(func, names[0], dtype.simpleString()))


def input_check(measure: Measure) -> Check:
    """Label arrays of one kind, or a counts struct."""
    return counts_struct if measure.inputs == ("counts",) else check_label_lists


def example(measure: Measure) -> Example | None:
    """The docstring example of ``measure``: two rows of Hivemall-style tags (n_labels=4
    where it needs one)."""
    return shared_example(measure, dict.fromkeys(("actual", "predicted"), "array<string>"))


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


#: the stored counts as the SQL functions read them: DOUBLE, as the Column functions do
#: (BIGINT fields truncated weighted counts and overflowed in the formulas' sums)
COUNTS_SQL_TYPE = "STRUCT<" + ", ".join(f"{f}: DOUBLE" for f in COUNTS_FIELDS) + ">"


def sql_functions(label_type: str) -> list[Any]:
    """The SQL functions of this family for :func:`mlsql.spark.register`."""
    from mlsql._registry import measures
    from mlsql._sqlexpr import Sql
    from mlsql.spark.sql import Function, formula_function

    labels = (f"actual ARRAY<{label_type}>", f"predicted ARRAY<{label_type}>")
    out: list[Function] = []
    for m in measures(family="multilabel"):
        if m.build is None or not m.available_in("spark"):
            continue
        if m.kind == "set":
            out.append(formula_function(m, LabelLists(Sql("actual"), Sql("predicted")), labels))
        elif m.kind == "row":
            s = _sql_row_stats()
            if m.name in ("false_positives", "false_negatives"):
                s = RowStats(s.tp, s.n_actual, s.n_predicted)
            out.append(formula_function(m, s, labels))
        elif m.kind == "from_counts":
            k = CountsFields(*(Sql(f"counts.{f}") for f in COUNTS_FIELDS))
            out.append(formula_function(m, k, (f"counts {COUNTS_SQL_TYPE}",)))
    return out
