"""The per-label averages of label lists lowered to ibis: macro and weighted averages and the
label-problem rates, from per (group, label) counts.

Per row (:func:`rows`): the distinct, non-NULL labels of each side
(:func:`mlsql._ibis.stats.as_set`), and whether both lists are known. Then a side table
of the plan (:meth:`mlsql._ibis.ops.Plan.side`) holds one row per label of each
group's universe: its tp, fp and fn (sums of the weights when weighted), from
three ``UNNEST`` passes over the known rows (|A ∩ P|, A and P) summed per
(group, label) in the database, so memory grows with the groups' labels, never
with the rows. The universe is the ``labels`` given (a label of it that no
row holds gets zero counts; labels outside it are ignored), else the labels of
the known rows (of some weight). The registry's formulas
(:mod:`mlsql.measures.label_based`) run in three stages, as in every engine:
each label's values over the side table, their averages per group
(:class:`~mlsql._ibis.ops.SideOps`), then the F of the macro means.
"""

from __future__ import annotations

from typing import Any

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir
from ibis import _

from mlsql import _label_types as LT
from mlsql._evaluate import front as EV
from mlsql._front.build import checked_params
from mlsql._ibis import backend_name, stats
from mlsql._ibis.ops import FLOAT, Checks, IbisOps, SideOps, null, same
from mlsql.measures import label_based as LB

#: the projected label sets of each side, and whether the row is known (both lists are): a
#: flag rather than sets made NULL (see :func:`mlsql._ibis.ops.where`)
SET_A, SET_P, KNOWN = "__mlsql_set_a", "__mlsql_set_p", "__mlsql_set_k"
#: a side row's label and its counts
LABEL, TP, FP, FN = "__mlsql_lb", "__mlsql_ltp", "__mlsql_lfp", "__mlsql_lfn"


def rows(item: EV.Item, cols: dict[str, ir.Column], out: dict[str, Any], checks: Checks) -> None:
    """Each side's distinct, non-NULL labels where both lists are known, after the inputs'
    types (and a ``labels`` universe) are checked."""
    columns = [cols[r] for r in item.roles]
    stats.check_label_lists(item.name, item.roles, [c.type() for c in columns])
    given = checked_params(item.measure, item.params).get("labels")
    checked_universe(item.name, given, columns[0].type(), columns[1].type())
    if SET_A not in out:
        a, p = cols["actual"], cols["predicted"]
        backend = backend_name(a)
        out[KNOWN] = a.notnull() & p.notnull()
        out[SET_A] = stats.as_set(a, backend)
        p_set = stats.as_set(p, backend)
        if p.type() != a.type():  # one label type on both sides (checked of one kind)
            p_set = p_set.cast(a.type())
        out[SET_P] = p_set


def checked_universe(name: str, given: Any, *dtypes: Any) -> list[Any] | None:
    """The ``labels`` universe checked (one kind, the columns' kind, within an integer type's
    range): the engines' messages; None when not given."""
    universe = LT.check_universe(given, name)
    typed = [d for d in dtypes if d.is_array() and not d.value_type.is_null()]
    if universe is None or not typed:
        return universe
    value = typed[0].value_type
    kind = stats.kind(value)
    LT.check_universe_kind(universe, kind, str(typed[0]), name)
    if value.is_integer():
        bounds = LT.integer_bounds(value.nbytes * 8, value.is_signed_integer())
        LT.check_universe_range(universe, bounds, str(typed[0]), name)
    return universe


def side_table(
    table: ir.Table, keys: list[str], weighted: bool, universe: list[Any] | None
) -> ir.Table:
    """One row per (group, label of its universe): the label, its tp, fp and fn."""
    known = table.filter(table[KNOWN])
    # doubles written as casts: PostgreSQL reads a bare 1.0 as a NUMERIC, whose sums come
    # back as decimals (ibis drops a cast of a literal it types as a double already)
    one = known[EV.WEIGHT] if weighted else ibis.literal(1, type="int64").cast(FLOAT)
    zero = ibis.literal(0, type="int64").cast(FLOAT)
    a, p = known[SET_A], known[SET_P]
    parts = [
        known.select(*keys, **{LABEL: a.intersect(p).unnest(), TP: one, FN: zero, FP: zero}),
        known.select(*keys, **{LABEL: a.unnest(), TP: zero, FN: one, FP: zero}),
        known.select(*keys, **{LABEL: p.unnest(), TP: zero, FN: zero, FP: one}),
    ]
    spread = parts[0].union(parts[1], distinct=False).union(parts[2], distinct=False)
    if universe is not None:
        spread = spread.filter(spread[LABEL].isin(universe))
    sums = spread.group_by([*keys, LABEL]).aggregate(
        **{TP: _[TP].sum(), "__mlsql_na": _[FN].sum(), "__mlsql_np": _[FP].sum()}
    )
    counts = sums.select(
        *keys,
        **{
            LABEL: sums[LABEL],
            TP: sums[TP],
            FP: sums["__mlsql_np"] - sums[TP],
            FN: sums["__mlsql_na"] - sums[TP],
        },
    )
    if universe is None:  # the labels of the known rows of some weight
        return counts.filter((counts[TP] + counts[FP] + counts[FN]) > 0)
    label_type = a.type().value_type
    groups = table.select(*keys).distinct() if keys else None
    labels = ibis.literal(universe, type=dt.Array(label_type)).unnest().name(LABEL)
    every = groups.select(*keys, labels) if groups is not None else _one_row(table, labels)
    renamed = {f"__mlsql_k{k}": g for k, g in enumerate(keys)}
    c = counts.rename(renamed)
    on = [same(every[g], c[n]) for n, g in renamed.items()] + [every[LABEL] == c[LABEL]]
    joined = every.left_join(c, on)
    return joined.select(
        *keys,
        **{
            LABEL: every[LABEL],
            TP: c[TP].fill_null(0.0),
            FP: c[FP].fill_null(0.0),
            FN: c[FN].fill_null(0.0),
        },
    )


def _one_row(table: ir.Table, labels: ir.Value) -> ir.Table:
    """The universe's labels, one row each (no groups)."""
    return table.aggregate(__mlsql_n=_.count()).select(labels)


def value(item: EV.Item, table: ir.Table, w: ir.FloatingColumn | None, ops: IbisOps) -> Any:
    """The measure over the group's labels: per label, then per group, then the F of means."""
    params = checked_params(item.measure, item.params)
    universe = LT.check_universe(params.get("labels"), item.name)
    beta = params.get("beta", 1.0)
    found = group_values(table, w, ops, universe, beta, params["zero_division"], [item.name])
    return found[item.name]


#: the values :func:`group_values` gives beyond the label averages: the group's known rows (or
#: their total weight), its labels, and the Hamming loss over them
GROUP_COUNTS = ("n_rows", "n_labels", "hamming_loss")


def group_values(
    table: ir.Table,
    w: ir.FloatingColumn | None,
    ops: IbisOps,
    universe: list[Any] | None,
    beta: Any,
    zero_division: Any,
    names: list[str],
) -> dict[str, Any]:
    """The group values ``names`` over the group's labels (``label_aggregates``' columns, the F
    of the macro means, and :data:`GROUP_COUNTS`), from the projected rows ``table`` (with
    :func:`rows`' columns), whose label side table is made once per universe."""
    plan = ops.plan
    key = ("labels", None if universe is None else tuple(universe))
    if key not in plan.side_names:
        plan.side_names[key] = name = f"labels{len(plan.side_names)}"
        plan.side(name, side_table(table, plan.keys, w is not None, universe))
    side = SideOps(ops.checks, plan, plan.side_names[key])
    known = table[KNOWN]
    n_rows = (
        ops.count(known.ifelse(1.0, null())).cast(FLOAT)
        if w is None
        else ops.sum(known.ifelse(w, null()))
    )
    counts = LB.LabelCounts(tp=_[TP], fp=_[FP], fn=_[FN], n_rows=n_rows)
    per_label = LB.label_values(side, counts, beta, zero_division)

    def col(name: str) -> Any:
        return n_rows if name == "n_rows" else per_label[name]

    needs = {need for n in names if n != "n_rows" for need in LB.standalone_needs(n)}
    found = {"n_rows": n_rows, **LB.label_aggregates(side, col, zero_division, only=needs)}
    return {
        n: found[n] if n in found else LB.standalone_value(ops, n, found.__getitem__, beta)
        for n in names
    }
