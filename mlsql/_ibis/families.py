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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import ibis
import ibis.expr.types as ir
from ibis import _

from mlsql import _label_types as LT
from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._evaluate import front as EV
from mlsql._formulas import RowStats
from mlsql._front.build import checked_params
from mlsql._front.inputs import REQUIRED, check_required, mapping_costs
from mlsql._ibis import (
    agreement,
    backend_name,
    class_scores,
    hivemall,
    label_scores,
    labels,
    ranking,
    scores,
    stats,
)
from mlsql._ibis.inputs import binary_flag, finite_number
from mlsql._ibis.ops import FLOAT, Checks, IbisOps, Plan, SideOps, beside, null, same, where
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
    cells = Table2x2(*(ops.sum(where(known, x)) for x in row))
    return _formula(item, ops, cells)


# ---------------------------------------------------------------- regression
#: the checked y and ŷ, their group's means (y, ŷ, y - ŷ) and rae's shift, as projected
Y, P_, MEAN, SHIFT, KEY = "__mlsql_y", "__mlsql_pr", "__mlsql_m_", "__mlsql_shift", "__mlsql_j"


def regression_rows(
    item: EV.Item, cols: dict[str, ir.Column], out: dict[str, Any], checks: Checks
) -> None:
    """y and ŷ as doubles where both are known (NULL elsewhere), checked finite; the first
    regression measure's name is the one the messages give, as in Spark."""
    if Y in out:
        return
    a, p = cols["actual"], cols["predicted"]
    known = a.notnull() & p.notnull()
    y = finite_number(item.name, "actual", where(known, a), checks)
    pr = finite_number(item.name, "predicted", where(known, p), checks)
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
#: the side tables of the class axis (:meth:`mlsql._ibis.ops.Plan.aggregate_side`)
CLASSES, PAIRS, CELLS, MIRRORS = "classes", "pairs", "cells", "mirrors"
#: a class's columns: its label, position among the group's sorted classes, row total, column
#: total and diagonal (counts, or sums of weights); a side table of two classes holds them
#: prefixed ``i`` and ``j`` (:func:`_view`)
CLASS, INDEX, ROW_TOTAL, COLUMN_TOTAL, DIAGONAL = "k", "x", "r", "c", "d"
#: a cell's (actual, predicted) labels, its count (weight) and its mirror's
CELL_A, CELL_P, CELL, MIRROR = "__mlsql_ca", "__mlsql_cp", "__mlsql_m", "__mlsql_mm"
#: a cell's margins r_i and c_j (:attr:`~mlsql.measures.single_label.ClassStats.margin_cell_sum`)
MARGIN_R, MARGIN_C = "__mlsql_mr", "__mlsql_mc"
#: the measures of n and the rows where actual = predicted
AGREEMENT = ("accuracy", "error_rate")
#: the measures of one label column, its label (NULL where it or the weight is), and the side
#: table of its classes' counts (weights)
ONE_COLUMN = ("majority_error", "prevalence")
LABEL_1, LABELS, LABEL_COUNT = "__mlsql_l1", "labels", "__mlsql_n"
#: the forms of ``costs`` ibis takes (each engine names its own: Polars a DataFrame too,
#: Spark a Column of maps, DuckDB a MAP)
COSTS_MESSAGE = (
    "The 'costs' parameter of {func} must be a mapping actual -> {{predicted: cost}} or a "
    "mapping (actual, predicted) -> cost, the costs finite numbers. Got {got} instead."
)


def single_label_rows(
    item: EV.Item, cols: dict[str, ir.Column], out: dict[str, Any], checks: Checks
) -> None:
    """Both labels of one type (the engines' checks and messages), NULL where either is."""
    m = item.measure
    columns = [cols[r] for r in item.roles]
    common = stats.check_single_labels(m.name, m.inputs, [c.type() for c in columns])
    _check_classes(item, columns[0].type(), common)
    if len(item.roles) == 1:
        out.setdefault(LABEL_1, cols["actual"].cast(common))
        return
    if LABEL_A not in out:
        a, p = cols["actual"], cols["predicted"]
        known = a.notnull() & p.notnull()
        out[LABEL_A] = known.ifelse(a.cast(common), null(common))
        out[LABEL_P] = known.ifelse(p.cast(common), null(common))


def _integer_bounds(dtype: Any) -> tuple[int, int] | None:
    if not dtype.is_integer():
        return None
    return LT.integer_bounds(dtype.nbytes * 8, dtype.is_signed_integer())


def _check_classes(item: EV.Item, dtype: Any, common: Any) -> None:
    """A parameter that names a class (:data:`REQUIRED`) is given, and is a label of the
    first input's type, and ``labels`` of the type both inputs become (``common``): the
    engines' messages (its kind, its integer type's range)."""
    params = checked_params(item.measure, item.params)
    kind = stats.scalar_kind(dtype)
    bounds = _integer_bounds(dtype)
    check_required(item.name, params)
    for name in REQUIRED:
        if name not in params:
            continue
        if name == "costs" and mapping_costs(params[name]) is None:
            raise MlsqlError(COSTS_MESSAGE.format(func=item.name, got=repr(params[name])))
        limits = None if name == "costs" else bounds  # costs: kinds only, as Polars'
        for label in LT.label_values(name, params[name]):
            LT.check_label_value(label, kind, str(dtype), name, item.name, limits)
    if params.get("labels") is not None:  # cohen_kappa_score's classes: of the columns' kind
        both = common if common is not None and common.is_integer() else dtype
        LT.check_universe_labels(
            params["labels"], kind, str(both), _integer_bounds(both), item.name
        )


def _col(prefix: str, name: str) -> str:
    return f"__mlsql_{prefix}{name}"


def class_table(
    rows: ir.Table,
    keys: list[str],
    weighted: bool,
    labels: list[Any] | None = None,
    kept: bool = False,
) -> ir.Table:
    """One row per (group, class) of the known rows: its position among the group's sorted
    classes (with ``labels``, its label's position among them), rows truly of the class,
    predicted as it, and both (sums of the weights when weighted). The classes are those on
    either side, ordered as every engine orders them (text by its bytes,
    :func:`mlsql._ibis.stats.byte_order`); a hash aggregate, so memory per group grows with its classes, never with
    its rows. A label no known row has gets no row: its counts are 0, so every sum the
    formulas take over classes, pairs or cells is the same without it, and its neighbours
    keep their labels' positions.

    ``kept`` (the averages' ``labels``): the classes are exactly the labels, each group
    holding a row of every label (a label no row holds counts 0: a mean over the classes
    counts it) and none of another class, whose rows still count in the totals of the
    label on their other side."""
    known = rows.filter(rows[LABEL_A].notnull())
    one = known[EV.WEIGHT] if weighted else ibis.literal(1.0, type=FLOAT)
    zero = ibis.literal(0.0, type=FLOAT)
    right = (known[LABEL_A] == known[LABEL_P]).ifelse(one, zero)
    groups = {k: known[k] for k in keys}
    c = partial(_col, "")
    sides = known.select(
        **groups,
        **{c(CLASS): known[LABEL_A], c(ROW_TOTAL): one, c(COLUMN_TOTAL): zero, c(DIAGONAL): right},
    ).union(
        known.select(
            **groups,
            **{
                c(CLASS): known[LABEL_P],
                c(ROW_TOTAL): zero,
                c(COLUMN_TOTAL): one,
                c(DIAGONAL): zero,
            },
        ),
        distinct=False,
    )
    if kept and labels is not None:  # a row of 0s per group and label, the others' left out
        counted = {"__mlsql_rows": known.count()}
        grouped = known.group_by(keys).aggregate(**counted) if keys else known.aggregate(**counted)
        kind = known[LABEL_A].type()
        sides = sides.filter(sides[c(CLASS)].isin(labels)).union(
            *(
                grouped.select(
                    *keys,
                    **{c(CLASS): ibis.literal(x, type=kind)},
                    **{n: zero for n in (c(ROW_TOTAL), c(COLUMN_TOTAL), c(DIAGONAL))},
                )
                for x in labels
            ),
            distinct=False,
        )
    totals = sides.group_by([*keys, c(CLASS)]).aggregate(
        **{n: sides[n].sum() for n in (c(ROW_TOTAL), c(COLUMN_TOTAL), c(DIAGONAL))}
    )
    if labels is None:
        cls = stats.byte_order(totals[c(CLASS)], backend_name(rows))  # every engine's order
        position = ibis.rank().over(group_by=[totals[k] for k in keys], order_by=cls)
    else:  # a class's position among the given labels
        cls = totals[c(CLASS)]
        position = ibis.cases(*((cls == x, k) for k, x in enumerate(labels)), else_=null("int64"))
    return totals.mutate(**{c(INDEX): position})


def _prefixed(classes: ir.Table, keys: list[str], prefix: str) -> ir.Table:
    """The class table's columns renamed ``__mlsql_<prefix><column>``."""
    names = (CLASS, INDEX, ROW_TOTAL, COLUMN_TOTAL)
    return classes.select(*keys, **{_col(prefix, n): classes[_col("", n)] for n in names})


def _view(prefix: str) -> SL.ClassView:
    """The class view of a side table's class ``prefix`` (deferred: read where it is summed)."""
    return SL.ClassView(
        _[_col(prefix, INDEX)], _[_col(prefix, ROW_TOTAL)], _[_col(prefix, COLUMN_TOTAL)]
    )


def _class_sides(
    plan: Plan,
    rows: ir.Table,
    weighted: bool,
    suffix: str,
    labels: list[Any] | None,
    kept: bool = False,
) -> None:
    """The side tables of the class axis, once per query (and per ``labels``, named with
    ``suffix``): the classes; the class pairs of each group (k² rows per group of k
    classes); the cells that occur, each beside its two classes; the cells beside their
    mirror's count (0 where the mirror does not occur)."""
    if CLASSES + suffix in plan.sides:
        return
    keys = plan.keys
    classes = class_table(rows, keys, weighted, labels, kept)
    plan.side(CLASSES + suffix, classes)
    i, j = _prefixed(classes, keys, "i"), _prefixed(classes, keys, "j")
    plan.side(PAIRS + suffix, beside(i, j, keys))
    known = rows.filter(rows[LABEL_A].notnull())
    one = known[EV.WEIGHT] if weighted else ibis.literal(1.0, type=FLOAT)
    cells = (
        known.select(*keys, **{CELL_A: known[LABEL_A], CELL_P: known[LABEL_P], CELL: one})
        .group_by([*keys, CELL_A, CELL_P])
        .aggregate(**{CELL: _[CELL].sum()})
    )
    located = beside(cells, i, keys, ((CELL_A, _col("i", CLASS)),))
    plan.side(CELLS + suffix, beside(located, j, keys, ((CELL_P, _col("j", CLASS)),)))
    mirror = cells.select(
        *keys, **{"__mlsql_ma": cells[CELL_P], "__mlsql_mp": cells[CELL_A], MIRROR: cells[CELL]}
    )
    renamed = {f"__mlsql_j{k}": g for k, g in enumerate(keys)}
    r = mirror.rename(renamed)
    on = [same(cells[g], r[n]) for n, g in renamed.items()]
    on += [cells[CELL_A] == r["__mlsql_ma"], cells[CELL_P] == r["__mlsql_mp"]]
    mirrored = cells.left_join(r, on).select(
        *keys, **{CELL: cells[CELL], MIRROR: r[MIRROR].fill_null(0.0)}
    )
    plan.side(MIRRORS + suffix, mirrored)


def class_stats(
    rows: ir.Table,
    w: ir.FloatingColumn | None,
    ops: IbisOps,
    pairs: dict[tuple[Any, Any], float] | None = None,
    over: Sequence[Any] | None = None,
) -> SL.ClassStats:
    """:class:`~mlsql.measures.single_label.ClassStats` over the side tables of the class
    axis: per-class values are deferred columns of the table of (group, class) rows, and each
    sum over classes, class pairs or cells is an aggregate of its side table, joined to the
    rows' aggregates by group (:meth:`mlsql._ibis.ops.Plan.aggregate_side`).

    ``pairs``: the weight of each (actual, predicted) pair of given labels
    (:func:`mlsql._params.kappa_matrix`): the rows whose classes are not labels are
    unknown, a class's position is its label's, and ``weight_at`` reads the weights.
    ``over`` (the averages' ``labels``): the classes are those labels, every known row
    kept (:func:`class_table`'s ``kept``)."""
    plan = ops.plan
    suffix, labels, lookup = "", None, None
    a = rows[LABEL_A]  # the known rows' actual label (on the rows the plan aggregates)
    sides = rows
    if pairs is not None:
        labels = list(dict.fromkeys(x for x, _ in pairs))
        # the side tables depend on the labels only: one set per labels, whatever the weights
        key = ("labels", tuple(labels))
        suffix = plan.side_names.setdefault(key, f"@{len(plan.side_names)}")
        p = rows[LABEL_P]
        within = a.isin(labels) & p.isin(labels)
        a = where(within, a)
        sides = rows.mutate(**{LABEL_A: a, LABEL_P: where(within, p)})
        k = len(labels)
        flat = [pairs[x, y] for x in labels for y in labels]

        def lookup(i: Any, j: Any) -> Any:
            return ibis.cases(*(((i * k + j) == c, v) for c, v in enumerate(flat)), else_=null())

    if over is not None:  # the side tables of these labels, kept apart from kappa's
        labels = list(over)
        suffix = plan.side_names.setdefault(("kept", tuple(labels)), f"@{len(plan.side_names)}")
    _class_sides(plan, sides, w is not None, suffix, labels, kept=over is not None)
    # a double: PostgreSQL and DataFusion divide integers as integers (1 / n is 0)
    n = ops.count(a).cast(FLOAT) if w is None else ops.sum(a.notnull().ifelse(w, null()))
    i, j = _view("i"), _view("j")

    def pair_sum(term: Any) -> Any:
        return plan.aggregate_side(PAIRS + suffix, term(i, j), "sum")

    def row_pair_sum(term: Any) -> Any:
        return plan.aggregate_side(CELLS + suffix, _[CELL] * term(i.index, j.index), "sum")

    def cell_sum(term: Any) -> Any:
        return plan.aggregate_side(CELLS + suffix, _[CELL] * term(i, j), "sum")

    def mirror_sum(term: Any) -> Any:
        return plan.aggregate_side(MIRRORS + suffix, term(_[CELL], _[MIRROR]), "sum")

    def margin_cell_sum(term: Any, row: Any, col: Any) -> Any:
        # r_i = Σ_l row(view_i, view_l) and c_j = Σ_l col(view_l, view_j), over the pairs;
        # the cells beside them are one side table per (row, col), however many terms read it
        keys, both = plan.keys, plan.sides[PAIRS + suffix]
        r, c = row(i, j).resolve(both), col(i, j).resolve(both)
        key = ("margins", suffix, r.op(), c.op())
        if key not in plan.side_names:
            by_i = both.group_by([*keys, _col("i", INDEX)]).aggregate(
                **{MARGIN_R: r.sum().cast(FLOAT)}
            )
            by_j = both.group_by([*keys, _col("j", INDEX)]).aggregate(
                **{MARGIN_C: c.sum().cast(FLOAT)}
            )
            by_i = by_i.rename({"__mlsql_ri": _col("i", INDEX)})
            by_j = by_j.rename({"__mlsql_rj": _col("j", INDEX)})
            side = beside(
                plan.sides[CELLS + suffix], by_i, keys, ((_col("i", INDEX), "__mlsql_ri"),)
            )
            side = beside(side, by_j, keys, ((_col("j", INDEX), "__mlsql_rj"),))
            plan.side_names[key] = name = f"margins{len(plan.sides)}"
            plan.side(name, side.drop("__mlsql_ri", "__mlsql_rj"))
        name = plan.side_names[key]
        each = _[CELL] * term(i, j, _[MARGIN_R], _[MARGIN_C])
        return plan.aggregate_side(name, each, "sum")

    c = partial(_col, "")
    return SL.ClassStats(
        n=n,
        index=_[c(INDEX)],
        actual=_[c(ROW_TOTAL)],
        predicted=_[c(COLUMN_TOTAL)],
        correct=_[c(DIAGONAL)],
        axis=SideOps(ops.checks, plan, CLASSES + suffix),
        pair_sum=pair_sum,
        row_pair_sum=row_pair_sum,
        rows=None if w is None else ops.count(a),
        cell_sum=cell_sum,
        mirror_sum=mirror_sum,
        margin_cell_sum=margin_cell_sum,
        weight_at=lookup,
    )


def single_label_value(
    item: EV.Item, rows: ir.Table, w: ir.FloatingColumn | None, ops: IbisOps
) -> Any:
    """The formula over n and the rows where actual = predicted (accuracy, error rate), or
    over the class axis (:func:`class_stats`)."""
    one = ibis.literal(1.0, type=FLOAT) if w is None else w
    zero = ibis.literal(0.0, type=FLOAT)
    if item.name in ONE_COLUMN:
        x = rows[LABEL_1]
        plan = ops.plan
        if LABELS not in plan.sides:
            seen = rows.filter(x.notnull())
            weight = seen[EV.WEIGHT] if w is not None else ibis.literal(1.0, type=FLOAT)
            counts = (
                seen.select(*plan.keys, **{LABEL_1: seen[LABEL_1], LABEL_COUNT: weight})
                .group_by([*plan.keys, LABEL_1])
                .aggregate(**{LABEL_COUNT: _[LABEL_COUNT].sum()})
            )
            plan.side(LABELS, counts)
        n = ops.count(x).cast(FLOAT) if w is None else ops.sum(x.notnull().ifelse(w, null()))
        largest = plan.aggregate_side(LABELS, _[LABEL_COUNT], "max")

        def matching(v: Any) -> Any:
            return ops.sum((x == v).ifelse(one, zero))

        return _formula(item, ops, SL.LabelStats(n, largest, matching))
    a, p = rows[LABEL_A], rows[LABEL_P]
    if item.name == "class_error_rate":
        n = ops.count(a).cast(FLOAT) if w is None else ops.sum(a.notnull().ifelse(w, null()))

        def table(label: Any) -> Table2x2:
            def cell(in_a: bool, in_p: bool) -> Any:
                hit = ((a == label) == in_a) & ((p == label) == in_p)  # NULL where unknown
                return ops.sum(hit.ifelse(one, zero))

            return Table2x2(
                cell(True, True), cell(False, True), cell(True, False), cell(False, False)
            )

        count = None if w is None else ops.count(a)
        return _formula(item, ops, SL.OneVsRest(n, table, count))
    if item.name == "cost_error":
        known = a.notnull()
        n = ops.count(a).cast(FLOAT) if w is None else ops.sum(known.ifelse(w, null()))

        def rows_where(hit: Any) -> Any:
            return ops.sum(hit.ifelse(one, zero))

        def total_cost(costs: Any) -> Any:
            # 1 per error, corrected where a cost is given (as every engine)
            out = rows_where(a != p)
            for x, y, c in mapping_costs(costs) or []:
                default = 0.0 if x == y else 1.0
                if c != default:
                    out = out + (c - default) * rows_where((a == x) & (p == y))
            return ops.when(ops.count(a) == 0, None, out)

        return _formula(item, ops, SL.CostStats(n, total_cost))
    if item.name in AGREEMENT:
        one = ibis.literal(1.0, type=FLOAT) if w is None else w
        n = ops.count(a).cast(FLOAT) if w is None else ops.sum(a.notnull().ifelse(w, null()))
        right = ops.sum((a == p).ifelse(one, ibis.literal(0.0, type=FLOAT)))
        return _formula(item, ops, SL.Agreement(n, right))
    m = item.measure
    if any(x.check_key == P.KAPPA_LABELS.check_key for x in m.params):
        params = checked_params(m, item.params)  # a matrix without labels: the weights' error
        pairs = P.kappa_matrix(params["weights"], params["labels"], m.name)
        if pairs is not None:  # over the labels: the weights read from the pairs' matrix
            assert m.build is not None
            return m.build(ops, class_stats(rows, w, ops, pairs), **{**params, "weights": "matrix"})
    if any(x.check_key == P.CLASS_LABELS.check_key for x in m.params):
        labels = checked_params(m, item.params)["labels"]
        if labels is not None:  # the averages over their labels
            return _formula(item, ops, class_stats(rows, w, ops, over=labels))
    return _formula(item, ops, class_stats(rows, w, ops))


#: the families lowered to ibis, by registry family
LOWERED: dict[str, Lowering] = {
    "multilabel": Lowering(label_set_rows, label_set_value),
    "binary": Lowering(binary_rows, binary_value),
    "rules": Lowering(binary_rows, binary_value),
    "hivemall": Lowering(hivemall.rows, hivemall.value),
    "agreement": Lowering(agreement.rows, agreement.value, agreement.passes),
    "regression": Lowering(regression_rows, regression_value, regression_passes),
    "scores": Lowering(scores.rows, scores.value, scores.passes),
    "label_based": Lowering(labels.rows, labels.value),
    "label_scores": Lowering(label_scores.rows, label_scores.value),
    "class_scores": Lowering(class_scores.rows, class_scores.value),
    "single_label": Lowering(single_label_rows, single_label_value),
    "ranking": Lowering(ranking.rows, ranking.value, ranking.passes, not_yet=ranking.NOT_YET),
}


def lowered(m: Any) -> bool:
    """Whether ``evaluate`` over an ibis table takes the registry measure ``m``."""
    return m.family in LOWERED and m.name not in LOWERED[m.family].not_yet
