"""Each family lowered to ibis, in the plan's two steps: per-row statistics, then the formula.

A lowering has two parts:

- ``rows(item, cols, out, checks)`` adds the family's per-row statistics to the
  projection ``out`` (column name -> expression over the table), under names that
  measures of one family share, so each statistic is computed once per row however
  many measures read it; it also adds the checks of the rows' values;
- ``value(item, rows, w, ops)`` is the measure's aggregate over the projected
  ``rows``: the registry's formula run with :class:`~mlsql._ibis.ops.IbisOps`
  (weighted through :class:`~mlsql._weights.WeightedOps` where the family is
  weighted so in every engine).

:data:`LOWERED` lists the families lowered here; other measures are refused by
name (:func:`mlsql._ibis.backends.check`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import ibis
import ibis.expr.types as ir

from mlsql import _classification_params as CP
from mlsql._errors import MlsqlError
from mlsql._evaluate import front as EV
from mlsql._formulas import RowStats
from mlsql._front.build import checked_params
from mlsql._ibis import stats
from mlsql._ibis.ops import Checks, IbisOps, null
from mlsql._weights import weighted
from mlsql.measures.contingency import Table2x2

#: the projected statistics' names
TP, N_ACTUAL, N_PREDICTED = "__mlsql_tp", "__mlsql_na", "__mlsql_np"
FLAG_ACTUAL, FLAG_PREDICTED = "__mlsql_fa", "__mlsql_fp"


@dataclass(frozen=True)
class Lowering:
    """A family's per-row statistics (:attr:`rows`) and its measures' aggregates (:attr:`value`)."""

    rows: Callable[[EV.Item, dict[str, ir.Column], dict[str, Any], Checks], None]
    value: Callable[[EV.Item, ir.Table, ir.FloatingColumn | None, IbisOps], Any]


def _formula(item: EV.Item, ops: IbisOps, *args: Any, w: Any = None) -> Any:
    m = item.measure
    params = checked_params(m, item.params)
    assert m.build is not None  # every aggregate of a lowered family has its formula
    return (
        m.build(ops, *args, **params) if w is None else weighted(m.build, w, ops, *args, **params)
    )


# ---------------------------------------------------------------- label sets
def label_set_rows(
    item: EV.Item, cols: dict[str, ir.Column], out: dict[str, Any], checks: Checks
) -> None:
    """|A ∩ P|, |A| and |P| of each row, after the inputs' types are checked."""
    m = item.measure
    columns = [cols[r] for r in item.roles]
    stats.check_label_lists(m.name, m.inputs, [c.type() for c in columns])
    if TP not in out:
        s = stats.row_stats(*columns)
        out.update({TP: s.tp, N_ACTUAL: s.n_actual, N_PREDICTED: s.n_predicted})


def label_set_value(
    item: EV.Item, rows: ir.Table, w: ir.FloatingColumn | None, ops: IbisOps
) -> Any:
    """The measure's formula over the projected row statistics."""
    return _formula(item, ops, RowStats(rows[TP], rows[N_ACTUAL], rows[N_PREDICTED]), w=w)


# ---------------------------------------------------------------- binary
def binary_flag(func: str, name: str, column: ir.Column, checks: Checks) -> ir.FloatingValue:
    """A boolean or 0/1 input as 1.0/0.0 (NULL stays NULL; doubles, as :mod:`.stats` says why); another value fails the query with
    every engine's message (the smallest bad value is named), another type at once."""
    dtype = column.type()
    if dtype.is_boolean() or dtype.is_null():
        positive = column.cast("boolean")
    elif dtype.is_numeric():
        bad = column.notnull() & (column != 0) & (column != 1)
        checks.add_code(
            bad.ifelse(column, null(dtype)), lambda got: CP.binary_value_message(func, str(got))
        )
        positive = column == 1
    else:
        raise MlsqlError(CP.binary_type_message(func, name, str(dtype), is_list=dtype.is_array()))
    return ibis.cases((positive, 1.0), (~positive, 0.0), else_=null())
    raise MlsqlError(CP.binary_type_message(func, name, str(dtype), is_list=dtype.is_array()))


def binary_rows(
    item: EV.Item, cols: dict[str, ir.Column], out: dict[str, Any], checks: Checks
) -> None:
    """Each side as 1/0 (NULL where it is NULL), checked."""
    m = item.measure
    flags = [
        binary_flag(m.name, n, cols[r], checks) for n, r in zip(m.inputs, item.roles, strict=True)
    ]
    key = (
        (FLAG_ACTUAL, FLAG_PREDICTED)
        if item.roles[0] == "actual"
        else (FLAG_PREDICTED, FLAG_ACTUAL)
    )
    for name, flag in zip(key, flags, strict=True):
        out.setdefault(name, flag)


def binary_value(item: EV.Item, rows: ir.Table, w: ir.FloatingColumn | None, ops: IbisOps) -> Any:
    """The 2x2 formula over the cells summed over the known rows (sums of the weights)."""
    a, p = rows[FLAG_ACTUAL], rows[FLAG_PREDICTED]
    known = a.notnull() & p.notnull()
    row = (a * p, (1 - a) * p, a * (1 - p), (1 - a) * (1 - p))
    if w is not None:
        row = tuple(x * w for x in row)
    cells = Table2x2(*(ops.sum(known.ifelse(x, null(x.type()))) for x in row))
    return _formula(item, ops, cells)


#: the families lowered to ibis, by registry family
LOWERED: dict[str, Lowering] = {
    "multilabel": Lowering(label_set_rows, label_set_value),
    "binary": Lowering(binary_rows, binary_value),
}
