"""Multi-label sets: statistics for the registry's formulas, set helpers and mergeable counts.

The per-row counts, ratios, micro and samples averages, subset accuracy,
Hamming loss and the ``*_from_counts`` functions are generated from their
registry formulas over :func:`mlsql.polars.stats.row_stats` (or the fields of
a stored counts struct). Written here by hand: the set helpers (lists out),
``multilabel_counts`` (a struct, all fields computed in one scope) and
``merge_counts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from mlsql._errors import MlsqlError
from mlsql._front.build import function, hand_written, lookup
from mlsql._registry import Measure
from mlsql.measures.multilabel import COUNTS_FIELDS, CountsFields, counts_fields, counts_message
from mlsql.polars import stats as st
from mlsql.polars._build import EXAMPLE_ROWS, OPS, evaluate
from mlsql.polars._dtypes import Check, Pairs, label_lists
from mlsql.polars._engine import POLARS

FAMILIES = ("multilabel",)
__all__ = hand_written("polars", FAMILIES)


# ---------------------------------------------------------------- plug-in hooks
def stats(measure: Measure, *inputs: pl.Expr) -> Any:
    """Row statistics of (actual, predicted), or the fields of stored counts."""
    if measure.kind == "from_counts":
        (counts,) = inputs
        return CountsFields(*(counts.struct.field(f) for f in COUNTS_FIELDS))
    return st.row_stats(*inputs)


def known(measure: Measure, *inputs: pl.Expr) -> pl.Expr | None:
    """Rows where neither list is NULL (stored counts: no mask, nothing is aggregated)."""
    return None if measure.kind == "from_counts" else st.known(*inputs)


def counts_struct(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """Check that the input is a struct with every field of ``multilabel_counts``."""
    ((expr, dtype),) = pairs
    fields = {f.name for f in dtype.fields} if isinstance(dtype, pl.Struct) else set()
    if not set(COUNTS_FIELDS) <= fields:
        raise MlsqlError(counts_message(func, names[0], str(dtype)))
    return [expr]


def input_check(measure: Measure) -> Check:
    """Label lists of one kind, or a counts struct."""
    return counts_struct if measure.inputs == ("counts",) else label_lists


def example(measure: Measure) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """Two rows of Hivemall-style tags (n_labels=4 where the measure needs it)."""
    params = {"n_labels": 4} if any(p.name == "n_labels" for p in measure.params) else {}
    return EXAMPLE_ROWS, params


# ---------------------------------------------------------------- set helpers
def _as_set(labels: pl.Expr) -> pl.Expr:
    return labels.list.drop_nulls().list.sort()


def _set_function(name: str, op: str) -> Any:
    def build(actual: pl.Expr, predicted: pl.Expr) -> pl.Expr:
        return _as_set(getattr(actual.list, op)(predicted))

    return function(POLARS, lookup(name), build, label_lists)


set_intersection = _set_function("set_intersection", "set_intersection")
set_difference = _set_function("set_difference", "set_difference")
set_union = _set_function("set_union", "set_union")
set_symmetric_difference = _set_function("set_symmetric_difference", "set_symmetric_difference")


# ---------------------------------------------------------------- counts
def _counts(actual: pl.Expr, predicted: pl.Expr, sample_weight: pl.Expr | None = None) -> pl.Expr:
    def fields(ops: Any, s: Any) -> dict[str, Any]:
        out = counts_fields(ops, s)
        return {name: out[name] for name in COUNTS_FIELDS}

    return evaluate(
        fields,
        st.row_stats(actual, predicted),
        known=st.known(actual, predicted),
        weight=sample_weight,
    )


def _merge(counts: pl.Expr) -> pl.Expr:
    return pl.struct(*(OPS.sum(counts.struct.field(f)).alias(f) for f in COUNTS_FIELDS))


multilabel_counts = function(POLARS, lookup("multilabel_counts"), _counts, label_lists)
merge_counts = function(POLARS, lookup("merge_counts"), _merge, counts_struct)
