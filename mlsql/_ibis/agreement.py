"""Agreement among several raters lowered to ibis: Fleiss' kappa and Cochran's Q.

The registry's formulas (:mod:`mlsql.measures.agreement`) over statistics the database
computes from the lists' elements, which it unnests (column-level ``unnest``, which every
live backend compiles):

- per row (:func:`passes`, a group by the row's number): Fleiss' raters (the non-NULL
  ratings) and Σ_j n_ij² (the counts of each category among them, squared); Cochran's
  successes R_i, NULL elements (a row with one is unknown) and the smallest value other
  than 0/1;
- per group and category (a side table, :meth:`~mlsql._ibis.ops.Plan.aggregate_side`):
  the ratings' weight T_j, or model j's successes C_j, squared and summed per group.

The per-row step is a group by of the row's number: the database holds a row of sums per
input row (docs/guides/ibis.md), as the ranked lists' pass does; the side table grows with
groups × categories (models). Rows of different
numbers of raters (models), or of fewer than 2, fail the query with every engine's message;
a value other than 0/1 with the binary flags' message.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import ibis
import ibis.expr.types as ir
from ibis import _

from mlsql import _classification_params as CP
from mlsql._errors import MlsqlError
from mlsql._evaluate import front as EV
from mlsql._ibis import backend_name, stats
from mlsql._ibis.ops import FLOAT, Check, Checks, IbisOps, integers, null, where
from mlsql.measures import agreement as AG

#: the projected lists: ratings, and outcomes
RATINGS, OUTCOMES = "__mlsql_ar", "__mlsql_ao"
#: per row: its number; Fleiss' raters and Σ_j n_ij²; Cochran's values, successes, NULL
#: elements and smallest value other than 0/1
ROW, RATERS, SQUARES = "__mlsql_arow", "__mlsql_am", "__mlsql_asq"
MODELS, SUCCESSES, HOLES, BAD = "__mlsql_ak", "__mlsql_as", "__mlsql_ah", "__mlsql_ab"
#: an element, its category (model) and the weight of a category's (model's) ratings
ELEMENT, COLUMN, TOTAL = "__mlsql_ae", "__mlsql_aj", "__mlsql_at"
#: the side tables of a group's categories and of its models
CATEGORIES, COLUMNS = "agreement_categories", "agreement_columns"


def positions(values: ir.ArrayValue) -> ir.IntegerColumn:
    """Each element's 0-based position in ``values``, one row per element (unnested)."""
    return integers(values.length(), backend_name(values))


def rows(item: EV.Item, cols: dict[str, ir.Column], out: dict[str, Any], checks: Checks) -> None:
    """The list of ratings (outcomes), after its type is checked as every engine checks it."""
    m = item.measure
    column = cols["actual"]
    dtype = column.type()
    if m.inputs == ("ratings",):
        stats.check_label_lists(m.name, m.inputs, [dtype])
        out.setdefault(RATINGS, column)
        return
    element = dtype.value_type if dtype.is_array() else None
    if element is None or not (element.is_boolean() or element.is_integer() or element.is_null()):
        raise MlsqlError(AG.FLAGS_MESSAGE.format(func=m.name, name=m.inputs[0], type=dtype))
    out.setdefault(OUTCOMES, column)


def _as_number(x: ir.Value) -> ir.FloatingValue:
    """A boolean or integer outcome as a double (NULL stays NULL)."""
    if x.type().is_boolean():
        return ibis.cases((x, 1.0), (~x, 0.0), else_=null())
    return x.cast(FLOAT)


def _outcomes(rows: ir.Table, keep: list[str]) -> ir.Table:
    """One row per element of the rows' outcome lists: ``keep``, its position and value."""
    listed = rows.filter(rows[OUTCOMES].notnull())
    spread = listed.select(*keep, OUTCOMES, **{COLUMN: positions(listed[OUTCOMES])})
    return spread.mutate(**{ELEMENT: _as_number(spread[OUTCOMES][spread[COLUMN]])})


def _ratings(rows: ir.Table, keep: list[str]) -> ir.Table:
    """One row per non-NULL rating of the rows' lists: ``keep`` and the rating."""
    listed = rows.filter(rows[RATINGS].notnull())
    spread = listed.select(*keep, **{ELEMENT: listed[RATINGS].unnest()})
    return spread.filter(spread[ELEMENT].notnull())


def passes(items: list[EV.Item], rows: ir.Table, groups: list[str], weighted: bool) -> ir.Table:
    """The rows with their per-row statistics beside them (:data:`RATERS`, :data:`SQUARES`;
    :data:`MODELS`, :data:`SUCCESSES`, :data:`HOLES`, :data:`BAD`)."""
    numbered = rows.mutate(**{ROW: ibis.row_number()})
    out = numbered
    added: dict[str, ir.Value] = {}
    if RATINGS in rows.columns:
        spread = _ratings(numbered, [ROW])
        counts = spread.group_by([ROW, ELEMENT]).aggregate(c=_.count().cast(FLOAT))
        per_row = (
            counts.group_by(ROW)
            .aggregate(**{RATERS: _.c.sum(), SQUARES: (_.c * _.c).sum()})
            .rename(**{"__mlsql_r1": ROW})
        )
        out = out.left_join(per_row, out[ROW] == per_row["__mlsql_r1"]).drop("__mlsql_r1")
        listed = out[RATINGS].notnull()
        added |= {
            RATERS: where(listed, out[RATERS].fill_null(0.0)),
            SQUARES: where(listed, out[SQUARES].fill_null(0.0)),
        }
    if OUTCOMES in rows.columns:
        spread = _outcomes(numbered, [ROW])
        x = spread[ELEMENT]
        per_row = (
            spread.group_by(ROW)
            .aggregate(
                **{
                    SUCCESSES: x.sum(),
                    HOLES: x.isnull().ifelse(1, 0).sum(),
                    BAD: where(x.notnull() & (x != 0) & (x != 1), x).min(),
                }
            )
            .rename(**{"__mlsql_r2": ROW})
        )
        out = out.left_join(per_row, out[ROW] == per_row["__mlsql_r2"]).drop("__mlsql_r2")
        listed = out[OUTCOMES].notnull()
        added |= {
            MODELS: where(listed, out[OUTCOMES].length().cast(FLOAT)),
            SUCCESSES: where(listed, out[SUCCESSES].fill_null(0.0)),
            HOLES: where(listed, out[HOLES].fill_null(0)),
            BAD: out[BAD],
        }
    return out.mutate(**added).drop(ROW)


def _size(ops: IbisOps, sizes: ir.Value, message: str) -> Any:
    """The number of values every row of the group holds (raters, models); where the rows
    hold different numbers, or fewer than 2, the query fails with ``message``, and the
    formula reads NULL (PostgreSQL would fail first on its division by m - 1 = 0)."""
    fewest = ops.plan.aggregate(sizes.min().cast(FLOAT))
    most = ops.plan.aggregate(sizes.max().cast(FLOAT))
    uneven = (fewest != most) | (fewest < 2)
    ops.error_if(uneven, None, message.replace("{", "{{"), None)
    return ops.when(uneven, None, fewest)


def _not_a_flag(func: str, got: Any) -> str:
    """The message of an outcome other than 0/1 (the smallest such value, ``got``)."""
    return CP.binary_value_message(func, str(int(got)))


def _total(ops: IbisOps, known: ir.BooleanValue, w: ir.FloatingColumn | None) -> Any:
    """The known rows' number (0 over none), or their total weight."""
    if w is None:
        return ops.count(where(known, 1)).cast(FLOAT)
    return ops.sum(where(known, w))


def value(item: EV.Item, rows: ir.Table, w: ir.FloatingColumn | None, ops: IbisOps) -> Any:
    """The measure's formula over its group statistics (sums of the weights when weighted)."""
    m = item.measure
    plan = ops.plan
    one = ibis.literal(1.0, type=FLOAT) if w is None else w
    weight = [EV.WEIGHT] if w is not None else []
    if m.inputs == ("ratings",):
        known = rows[RATINGS].notnull()
        raters = _size(ops, where(known, rows[RATERS]), AG.RATERS_MESSAGE.format(func=m.name))
        if CATEGORIES not in plan.sides:
            spread = _ratings(rows, [*plan.keys, *weight])
            mass = spread[EV.WEIGHT] if w is not None else ibis.literal(1.0, type=FLOAT)
            totals = (
                spread.select(*plan.keys, **{ELEMENT: spread[ELEMENT], TOTAL: mass})
                .group_by([*plan.keys, ELEMENT])
                .aggregate(**{TOTAL: _[TOTAL].sum()})
            )
            plan.side(CATEGORIES, totals)
        s: Any = AG.RatingStats(
            n=_total(ops, known, w),
            raters=raters,
            squares=ops.sum(where(known, rows[SQUARES] * one)),
            total_squares=plan.aggregate_side(CATEGORIES, _[TOTAL] * _[TOTAL], "sum"),
            rows=None if w is None else ops.count(where(known, 1)),
        )
    else:
        known = rows[OUTCOMES].notnull() & (rows[HOLES] == 0)
        models = _size(ops, where(known, rows[MODELS]), AG.MODELS_MESSAGE.format(func=m.name))
        ops.checks.items.append(Check(where(known, rows[BAD]), partial(_not_a_flag, m.name)))
        if COLUMNS not in plan.sides:
            complete = rows.filter(known)
            spread = _outcomes(complete, [*plan.keys, *weight])
            mass = spread[ELEMENT] * (spread[EV.WEIGHT] if w is not None else 1.0)
            totals = (
                spread.select(*plan.keys, **{COLUMN: spread[COLUMN], TOTAL: mass})
                .group_by([*plan.keys, COLUMN])
                .aggregate(**{TOTAL: _[TOTAL].sum()})
            )
            plan.side(COLUMNS, totals)
        r = rows[SUCCESSES]
        s = AG.OutcomeStats(
            n=_total(ops, known, w),
            k=models,
            total=ops.sum(where(known, r * one)),
            row_squares=ops.sum(where(known, r * r * one)),
            column_squares=plan.aggregate_side(COLUMNS, _[TOTAL] * _[TOTAL], "sum"),
            rows=None if w is None else ops.count(where(known, 1)),
        )
    assert m.build is not None
    return m.build(ops, s)
