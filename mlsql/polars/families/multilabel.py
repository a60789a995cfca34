"""Multi-label sets: statistics for the registry's formulas.

Every function of the family is generated from its registry formula: the
per-row counts, ratios, micro and samples averages, subset accuracy, Hamming
loss and ``multilabel_counts`` (a struct, every field in one scope) over
:func:`mlsql.polars.stats.row_stats`; the ``*_from_counts`` functions and
``merge_counts`` over the fields of a stored counts struct; the set helpers
over the two lists, with :class:`~mlsql.polars.ops.PolarsOps`' list primitives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from mlsql._errors import MlsqlError
from mlsql._registry import Measure
from mlsql.measures.multilabel import COUNTS_FIELDS, CountsFields, LabelLists, counts_message
from mlsql.polars import stats as st
from mlsql.polars._dtypes import Check, Pairs, label_lists

FAMILIES = ("multilabel",)
__all__: list[str] = []  # every function is generated from the registry


# ---------------------------------------------------------------- plug-in hooks
def stats(measure: Measure, *inputs: pl.Expr) -> Any:
    """Row statistics of (actual, predicted), the two lists of a set helper, or the fields
    of stored counts."""
    if measure.inputs == ("counts",):
        (counts,) = inputs
        fields = (counts.struct.field(f) for f in COUNTS_FIELDS)
        if measure.kind == "from_counts":  # as Float64: Int64 sums of them wrapped past 2^63
            return CountsFields(*(f.cast(pl.Float64) for f in fields))
        return CountsFields(*fields)  # merge_counts: summed as stored
    if measure.kind == "set":
        return LabelLists(*inputs)
    return st.row_stats(*inputs)


def known(measure: Measure, *inputs: pl.Expr) -> pl.Expr | None:
    """Rows where neither list is NULL (stored counts: no mask, nothing is aggregated)."""
    return None if measure.inputs == ("counts",) else st.known(*inputs)


def counts_struct(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """Check that the input is a struct with every field of ``multilabel_counts``."""
    ((expr, dtype),) = pairs
    fields = {f.name: f.dtype for f in dtype.fields} if isinstance(dtype, pl.Struct) else {}
    # every field a number: cast to Float64 for the formulas, text such as '2.5' would be read
    if not all(f in fields and fields[f].is_numeric() for f in COUNTS_FIELDS):
        raise MlsqlError(counts_message(func, names[0], str(dtype)))
    return [expr]


def input_check(measure: Measure) -> Check:
    """Label lists of one kind, or a counts struct."""
    return counts_struct if measure.inputs == ("counts",) else label_lists
