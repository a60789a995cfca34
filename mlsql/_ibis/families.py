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
from dataclasses import dataclass, field
from typing import Any

import ibis
import ibis.expr.types as ir

from mlsql import _classification_params as CP
from mlsql._errors import MlsqlError
from mlsql._evaluate import front as EV
from mlsql._formulas import RowStats
from mlsql._front.build import checked_params
from mlsql._ibis import backend_name, stats
from mlsql._ibis.ops import FLOAT, Checks, ClassAxisOps, IbisOps, null
from mlsql._weights import weighted
from mlsql.measures import regression as RG
from mlsql.measures import single_label as SL
from mlsql.measures.contingency import Table2x2

#: the projected statistics' names
TP, N_ACTUAL, N_PREDICTED = "__mlsql_tp", "__mlsql_na", "__mlsql_np"
FLAG_ACTUAL, FLAG_PREDICTED = "__mlsql_fa", "__mlsql_fp"


@dataclass(frozen=True)
class Lowering:
    """A family's per-row statistics (:attr:`rows`), the grouped passes its sums need first
    (:attr:`passes`: the projected rows with each row's group values joined beside it, or
    None), its measures' aggregates (:attr:`value`), and the measures of the family not
    lowered yet, each with the reason (:attr:`not_yet`)."""

    rows: Callable[[EV.Item, dict[str, ir.Column], dict[str, Any], Checks], None]
    value: Callable[[EV.Item, ir.Table, ir.FloatingColumn | None, IbisOps], Any]
    passes: Callable[[list[EV.Item], ir.Table, list[str], bool], ir.Table] | None = None
    not_yet: dict[str, str] = field(default_factory=dict)


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
        actual, predicted = columns
        s = stats.row_stats(actual, predicted, backend=backend_name(actual))
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


# ---------------------------------------------------------------- regression
#: the checked y and ŷ, their group's means (y, ŷ, y - ŷ) and rae's shift, as projected
Y, P_, MEAN, SHIFT, KEY = "__mlsql_y", "__mlsql_pr", "__mlsql_m_", "__mlsql_shift", "__mlsql_j"


def finite_number(func: str, name: str, column: ir.Column, checks: Checks) -> ir.FloatingValue:
    """A numeric input as a double; a NaN or infinite value fails the query with every
    engine's message (NaN named first, then inf, -inf), another type at once."""
    dtype = column.type()
    if not (dtype.is_numeric() or dtype.is_null()):
        raise MlsqlError(CP.number_type_message(func, name, str(dtype)))
    x = column.cast(FLOAT)
    code = ibis.cases((x.isnan(), 1), (x.isinf() & (x > 0), 2), (x.isinf(), 3), else_=null("int8"))
    checks.add_code(code, lambda c: CP.finite_value_message(func, name, CP.NOT_FINITE[int(c) - 1]))
    return x


def regression_rows(
    item: EV.Item, cols: dict[str, ir.Column], out: dict[str, Any], checks: Checks
) -> None:
    """y and ŷ as doubles where both are known (NULL elsewhere), checked finite; the first
    regression measure's name is the one the messages give, as in Spark."""
    if Y in out:
        return
    a, p = cols["actual"], cols["predicted"]
    known = a.notnull() & p.notnull()
    y = finite_number(item.name, "actual", known.ifelse(a, null(a.type())), checks)
    pr = finite_number(item.name, "predicted", known.ifelse(p, null(p.type())), checks)
    out.update({Y: y, P_: pr})


def _joined(rows: ir.Table, groups: list[str], per_group: dict[str, Any]) -> ir.Table:
    """``rows`` with the group's values of ``per_group`` (aggregates over the group's rows)
    beside each row: a grouped pass joined back, NULL-safe on the group keys."""
    if not groups:
        return rows.cross_join(rows.aggregate(**per_group))
    found = rows.group_by(groups).aggregate(**per_group)
    found = found.rename({f"{KEY}{k}": g for k, g in enumerate(groups)})
    on = [rows[g].identical_to(found[f"{KEY}{k}"]) for k, g in enumerate(groups)]
    return rows.join(found, on).drop(*(f"{KEY}{k}" for k in range(len(groups))))


def regression_passes(
    items: list[EV.Item], rows: ir.Table, groups: list[str], weighted: bool
) -> ir.Table:
    """The means of y, ŷ and y - ŷ per group (weighted), and with ``rae`` the mean of
    y - mean(y), each joined back to the rows: the statistics are then sums over rows
    (memory per group, never per row), as Spark's and DuckDB's ``evaluate`` run them."""
    y, p = rows[Y], rows[P_]
    if weighted:
        w = rows[EV.WEIGHT]
        n = (y.notnull().ifelse(w, null())).sum()
        means = {k: (w * x).sum() / n for k, x in (("y", y), ("p", p), ("e", y - p))}
    else:
        means = {"y": y.mean(), "p": p.mean(), "e": (y - p).mean()}
    rows = _joined(rows, groups, {MEAN + k: m for k, m in means.items()})
    if any(item.name == "rae" for item in items):
        d = rows[Y] - rows[MEAN + "y"]
        if weighted:
            w = rows[EV.WEIGHT]
            shift = (w * d).sum() / (rows[Y].notnull().ifelse(w, null())).sum()
        else:
            shift = d.mean()
        rows = _joined(rows, groups, {SHIFT: shift})
    return rows


def regression_value(
    item: EV.Item, rows: ir.Table, w: ir.FloatingColumn | None, ops: IbisOps
) -> Any:
    """The registry's formula over the centred sums of the rows joined to their means."""
    y, p = rows[Y], rows[P_]
    err = y - p
    if w is not None:
        w = y.notnull().ifelse(w, null())  # a weight counts where the row is known

    def total(term: Any) -> Any:
        return ops.sum(term if w is None else w * term)

    def d(k: str) -> Any:
        return (err if k == "e" else {"y": y, "p": p}[k]) - rows[MEAN + k]

    n = ops.count(y) if w is None else ops.sum(w)

    def comoment(a: str, b: str) -> Any:
        return RG.centred_comoment(ops, total(d(a) * d(b)), total(d(a)), total(d(b)), n)

    shifted = SHIFT in rows.columns
    stats = RG.RegressionStats(
        n=n,
        sse=total(err * err),
        sae=total(err.abs()),
        sape=total(err.abs() / ibis.greatest(y.abs(), ibis.literal(RG.EPSILON, type=FLOAT))),
        var_actual=comoment("y", "y"),
        var_predicted=comoment("p", "p"),
        covariance=comoment("y", "p"),
        var_error=comoment("e", "e"),
        sad_actual=total((d("y") - rows[SHIFT]).abs()) if shifted else null(),
        rows=None if w is None else ops.count(w),
    )
    return _formula(item, ops, stats)


# ---------------------------------------------------------------- single label
#: the checked labels (NULL where the row is unknown), both of one type
LABEL_A, LABEL_P = "__mlsql_la", "__mlsql_lp"
#: the columns of the table of (group, class) rows: the class, its row total, column total
#: and diagonal (counts, or sums of weights)
CLASS, ROW_TOTAL, COLUMN_TOTAL, DIAGONAL = "__mlsql_cls", "__mlsql_r", "__mlsql_c", "__mlsql_d"
#: the measures the single-label family lowers: those of n, the rows where actual = predicted,
#: and each class's row total, column total and diagonal
AGREEMENT = ("accuracy", "error_rate")
_PAIRS = "it sums over pairs of classes or over the confusion matrix's cells"
_ONE_COLUMN = "it reads one label column"
_PARAM_LABEL = "it compares the rows with labels given as parameters"
SINGLE_LABEL_NOT_YET = {
    **dict.fromkeys(SL.PAIR_MEASURES, _PAIRS),
    "majority_error": _ONE_COLUMN,
    "prevalence": _ONE_COLUMN,
    "class_error_rate": _PARAM_LABEL,
    "cost_error": _PARAM_LABEL,
}


def single_label_rows(
    item: EV.Item, cols: dict[str, ir.Column], out: dict[str, Any], checks: Checks
) -> None:
    """Both labels of one type (the engines' checks and messages), NULL where either is."""
    m = item.measure
    columns = [cols[r] for r in item.roles]
    common = stats.check_single_labels(m.name, m.inputs, [c.type() for c in columns])
    if LABEL_A not in out:
        a, p = cols["actual"], cols["predicted"]
        known = a.notnull() & p.notnull()
        out[LABEL_A] = known.ifelse(a.cast(common), null(common))
        out[LABEL_P] = known.ifelse(p.cast(common), null(common))


def class_table(rows: ir.Table, keys: list[str], weighted: bool) -> ir.Table:
    """One row per (group, class) of the known rows: rows truly of the class, predicted as
    it, and both (sums of the weights when weighted). The classes are those on either side;
    a hash aggregate, so memory per group grows with its classes, never with its rows."""
    known = rows.filter(rows[LABEL_A].notnull())
    one = known[EV.WEIGHT] if weighted else ibis.literal(1.0, type=FLOAT)
    zero = ibis.literal(0.0, type=FLOAT)
    right = (known[LABEL_A] == known[LABEL_P]).ifelse(one, zero)
    groups = {k: known[k] for k in keys}
    sides = known.select(
        **groups, **{CLASS: known[LABEL_A], ROW_TOTAL: one, COLUMN_TOTAL: zero, DIAGONAL: right}
    ).union(
        known.select(
            **groups, **{CLASS: known[LABEL_P], ROW_TOTAL: zero, COLUMN_TOTAL: one, DIAGONAL: zero}
        ),
        distinct=False,
    )
    return sides.group_by([*keys, CLASS]).aggregate(
        **{c: sides[c].sum() for c in (ROW_TOTAL, COLUMN_TOTAL, DIAGONAL)}
    )


def _refused_sum(name: str) -> Callable[..., Any]:
    def refused(*args: Any) -> Any:
        raise AssertionError(f"{name} is not lowered to ibis (SINGLE_LABEL_NOT_YET)")

    return refused


def single_label_value(
    item: EV.Item, rows: ir.Table, w: ir.FloatingColumn | None, ops: IbisOps
) -> Any:
    """The formula over n and the rows where actual = predicted (accuracy, error rate), or
    over the class axis: the table of (group, class) rows, its sums over the group's classes
    joined to the rows' aggregates by group (:class:`~mlsql._ibis.ops.ClassAxisOps`)."""
    a, p = rows[LABEL_A], rows[LABEL_P]
    known = a.notnull()
    n = ops.count(a) if w is None else ops.sum(known.ifelse(w, null()))
    count = None if w is None else ops.count(a)
    if item.name in AGREEMENT:
        one = ibis.literal(1.0, type=FLOAT) if w is None else w
        right = ops.sum((a == p).ifelse(one, ibis.literal(0.0, type=FLOAT)))
        return _formula(item, ops, SL.Agreement(n, right))
    plan = ops.plan
    if plan.classes is None:
        plan.classes = class_table(rows, plan.keys, w is not None)
    t = plan.classes
    s = SL.ClassStats(
        n=n,
        index=None,
        actual=t[ROW_TOTAL],
        predicted=t[COLUMN_TOTAL],
        correct=t[DIAGONAL],
        axis=ClassAxisOps(ops.checks, plan),
        pair_sum=_refused_sum("pair_sum"),
        row_pair_sum=_refused_sum("row_pair_sum"),
        rows=count,
    )
    return _formula(item, ops, s)


#: the families lowered to ibis, by registry family
LOWERED: dict[str, Lowering] = {
    "multilabel": Lowering(label_set_rows, label_set_value),
    "binary": Lowering(binary_rows, binary_value),
    "regression": Lowering(regression_rows, regression_value, regression_passes),
    "single_label": Lowering(single_label_rows, single_label_value, not_yet=SINGLE_LABEL_NOT_YET),
}


def lowered(m: Any) -> bool:
    """Whether ``evaluate`` over an ibis table takes the registry measure ``m``."""
    return m.family in LOWERED and m.name not in LOWERED[m.family].not_yet
