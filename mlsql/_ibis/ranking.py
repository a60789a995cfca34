"""The ranked-list measures lowered to ibis: Hivemall's @k family and ranx's retrieval measures,
and Hivemall's graded nDCG over relevance grades (:func:`graded_passes`).

Per row (:func:`rows`): the ranked list ``R`` and the true set ``T`` (its distinct, non-NULL
items), and whether both lists are known (else the row is unknown), after the inputs'
types are checked as every engine checks them.

Then one pass (:func:`passes`) over the items of the known rows, which the database unnests
and sorts (in the database, never in Python; its per-row sums are a row of sums per
input row, so the database's memory grows with the rows: docs/guides/ibis.md):

- each distinct, non-NULL item of ``R`` once, at the place of its first occurrence
  (``array_position``), numbered 1, 2, ... among them by that place: the ranked list of the
  registry's :class:`~mlsql.measures.ranking.RankedStats`, NULLs and repeats dropped;
- whether it is in ``T`` (a hit), and the hits up to it (its number among the hits);
- per row (a group by the row's number), the sums each measure's formula asks for:
  ``over_hits``, ``over_positions`` and ``hits_within`` at the measure's ``k``.

The formula runs twice: over the items, where its sums are recorded (the terms of a sum read
only an item's position and number), and over the rows, where each recorded sum is read back
(0 for a row whose list holds no item). Each row's value is then a column of the rows; the
measure is its mean (weighted), as in every engine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir

from mlsql._errors import MlsqlError
from mlsql._evaluate import front as EV
from mlsql._front.build import checked_params
from mlsql._ibis import backend_name, label_scores, stats
from mlsql._ibis.ops import FLOAT, Checks, IbisOps, Plan, integers, null, where
from mlsql._weights import weighted
from mlsql.measures import ranking as R

#: the projected ranked list and true set of each row, and whether the row is known (both
#: lists are): a flag rather than lists made NULL (see :func:`mlsql._ibis.ops.where`)
RANK, TRUTH, KNOWN = "__mlsql_rr", "__mlsql_rt", "__mlsql_rk"
#: the pass's columns: a row's number; an item, its place in the list, its position among the
#: distinct items, whether it is a hit, the hits up to it, and the row's count of items
ROW, ITEM, PLACE, POS, HIT, NTH, LENGTH = (
    "__mlsql_rid",
    "__mlsql_ri",
    "__mlsql_rp",
    "__mlsql_rq",
    "__mlsql_rh",
    "__mlsql_rn",
    "__mlsql_rl",
)
#: the row number of the per-row sums
FOUND = "__mlsql_rf"
#: the measures of other inputs than (rank_items, correct_items), not lowered yet
NOT_YET = {"bpref": "it reads a third list, the judged non-relevant items"}


def rows(item: EV.Item, cols: dict[str, ir.Column], out: dict[str, Any], checks: Checks) -> None:
    """``R``, ``T`` and whether both are known, of each row, after their types are checked
    (lists of labels, both of one kind: the engines' messages)."""
    m = item.measure
    given = dict(zip(m.inputs, (cols[r] for r in item.roles), strict=True))
    if m.inputs == GRADED:
        graded_rows(m.name, given, out)
        return
    if m.inputs == R.SCORED:  # a list of true labels and a map label -> score
        label_scores.rows(item, cols, out, checks)
        return
    ranked, truth = given["rank_items"], given["correct_items"]
    stats.check_label_lists(m.name, m.inputs, [given[n].type() for n in m.inputs])
    if RANK in out:
        return
    r_type, t_type = ranked.type(), truth.type()
    if r_type.is_array() and t_type.is_array() and r_type != t_type:  # one item type
        common = dt.Array(dt.highest_precedence([r_type.value_type, t_type.value_type]))
        ranked, truth = ranked.cast(common), truth.cast(common)
    out[KNOWN] = ranked.notnull() & truth.notnull()
    out[RANK] = ranked
    out[TRUTH] = stats.as_set(truth, backend_name(truth))


def column(item: EV.Item) -> str:
    """The name of the rows' column that holds ``item``'s value per row."""
    return "__mlsql_rv" + hashlib.sha1(item.label.encode()).hexdigest()[:12]


class _Recorder:
    """The sums a formula asks for, as aggregates over a row's items (recorded in order), or
    read back in that order from the per-row table (:meth:`replay`)."""

    def __init__(self) -> None:
        self.sums: list[ir.Value] = []
        self.read: list[ir.Value] | None = None

    def __call__(self, x: ir.Value) -> ir.Value:
        if self.read is None:
            self.sums.append(x.cast(FLOAT).sum())
            return x  # a stand-in: the formula's value over the items is never used
        return self.read.pop(0)

    def replay(self, table: ir.Table, names: list[str]) -> None:
        self.read = [table[n].fill_null(0.0) for n in names]


def _stats(
    n_ranked: ir.Value,
    n_true: ir.Value,
    hits: ir.Value,
    first_hit: ir.Value,
    over: Callable[[ir.Value], ir.Value],
    item_pos: ir.Value,
    item_nth: ir.Value,
    hit_at_k: ir.BooleanValue,
) -> R.RankedStats:
    """The registry's statistics of a row; each sum is ``over(x)`` of its per-item term."""
    zero = ibis.literal(0.0, type=FLOAT)
    return R.RankedStats(
        unknown=ibis.literal(False),
        n_ranked=n_ranked,
        n_true=n_true,
        hits=hits,
        first_hit=first_hit,
        over_hits=lambda term: over(hit_at_k.ifelse(term(item_pos, item_nth), zero)),
        over_positions=lambda count, term: over((item_pos <= count).ifelse(term(item_pos), zero)),
        hits_within=lambda count: over((hit_at_k & (item_pos <= count)).ifelse(1.0, zero)),
    )


def _at_most(n: ir.Value, k: int | None) -> ir.Value:
    """``min(n, k)``: a row's items looked at (all of them where ``k`` is None)."""
    return n if k is None else ibis.least(n, float(k))


def _given(item: EV.Item) -> tuple[int | None, dict[str, Any]]:
    """The measure's ``k`` (None: the whole list) and its other parameters."""
    params = checked_params(item.measure, item.params)
    return params.get("k"), {n: v for n, v in params.items() if n != "k"}


def passes(items: list[EV.Item], rows: ir.Table, groups: list[str], weighted: bool) -> ir.Table:
    """The rows with each ranking measure's value per row beside them (NULL where unknown):
    the ranked lists' pass, the relevance grades' (:func:`graded_passes`), then the label
    scores' (:func:`~mlsql._ibis.label_scores.scored_ranking_passes`)."""
    listed = [item for item in items if item.measure.inputs not in (GRADED, R.SCORED)]
    graded = [item for item in items if item.measure.inputs == GRADED]
    scored = [item for item in items if item.measure.inputs == R.SCORED]
    out = _listed_passes(listed, rows) if listed else rows
    out = graded_passes(graded, out) if graded else out
    return label_scores.scored_ranking_passes(scored, out, column) if scored else out


def _listed_passes(items: list[EV.Item], rows: ir.Table) -> ir.Table:
    """The ranked lists' pass (the module's docstring)."""
    ops = IbisOps(Checks(), Plan(keys=[]))
    numbered = rows.mutate(**{ROW: ibis.row_number()})
    known = numbered.filter(numbered[KNOWN])
    backend = backend_name(known[RANK])
    items_of = known.select(ROW, RANK, TRUTH, **{ITEM: stats.as_set(known[RANK], backend).unnest()})
    items_of = items_of.mutate(**{PLACE: items_of[RANK].index(items_of[ITEM])})
    per_row = ibis.window(group_by=items_of[ROW])
    in_order = ibis.window(group_by=items_of[ROW], order_by=items_of[PLACE])
    items_of = items_of.mutate(
        **{
            POS: (ibis.row_number().over(in_order) + 1).cast(FLOAT),
            HIT: items_of[TRUTH].contains(items_of[ITEM]),
            LENGTH: items_of[ITEM].count().over(per_row).cast(FLOAT),
        }
    )
    cumulative = ibis.window(group_by=items_of[ROW], order_by=items_of[POS], rows=(None, 0))
    items_of = items_of.mutate(
        **{NTH: items_of[HIT].ifelse(1.0, 0.0).sum().over(cumulative).cast(FLOAT)}
    )
    e = items_of
    pos, hit, n_true = e[POS], e[HIT], e[TRUTH].length().cast(FLOAT)
    recorders: list[tuple[EV.Item, int | None, dict[str, Any], _Recorder, list[str]]] = []
    sums: dict[str, ir.Value] = {}
    for i, item in enumerate(items):
        k, given = _given(item)
        within = ibis.literal(True) if k is None else pos <= k
        at_k = hit & within
        n_ranked = _at_most(e[LENGTH], k)
        counted = at_k.ifelse(1.0, 0.0)
        recorder = _Recorder()
        names = [f"__mlsql_rk{i}_hits", f"__mlsql_rk{i}_first"]
        sums[names[0]] = counted.sum().cast(FLOAT)
        sums[names[1]] = at_k.ifelse(pos, null()).min().cast(FLOAT)
        # a sum's term reads an item's position and number; a count, n_true and n_ranked
        s = _stats(n_ranked, n_true, counted, pos, recorder, pos, e[NTH], at_k)
        R.row_value(ops, item.name, s, **given)
        for j, x in enumerate(recorder.sums):
            names.append(name := f"__mlsql_rk{i}_{j}")
            sums[name] = x
        recorders.append((item, k, given, recorder, names))
    sums[LENGTH] = e[ITEM].count().cast(FLOAT)  # the row's distinct items (none: no row here)
    found = e.group_by(**{FOUND: e[ROW]}).aggregate(**sums)
    joined = numbered.left_join(found, numbered[ROW] == found[FOUND])
    truth, length = joined[TRUTH], joined[LENGTH].fill_null(0.0)
    values: dict[str, ir.Value] = {}
    for item, k, given, recorder, names in recorders:
        recorder.replay(joined, names[2:])

        def read(*_: Any, rec: _Recorder = recorder) -> ir.Value:
            return rec(ibis.literal(0.0))  # the next sum recorded, whatever the term

        s = R.RankedStats(
            unknown=~joined[KNOWN],
            n_ranked=_at_most(length, k),
            n_true=truth.length().cast(FLOAT),
            hits=joined[names[0]].fill_null(0.0),
            first_hit=joined[names[1]].fill_null(0.0),
            over_hits=read,
            over_positions=read,
            hits_within=read,
        )
        values[column(item)] = R.row_value(ops, item.name, s, **given).cast(FLOAT)
    return joined.select(*rows.columns, **values)


def value(item: EV.Item, rows: ir.Table, w: ir.FloatingColumn | None, ops: IbisOps) -> Any:
    """The mean of the measure's per-row values (weighted: by each known row's weight)."""
    x = rows[column(item)]
    if w is None:
        return ops.mean(x)
    return weighted(lambda o, v: o.mean(v), w, ops, x)


# ---------------------------------------------------------------- relevance grades
#: graded_ndcg's inputs: the grades in ranked order, then the ideal ranking's grades
GRADED = ("ranked_relevance", "ideal_relevance")
#: the projected grade lists and whether both are known; the pass's grade, its 1-based
#: position, and the ranked list's length (a NULL grade holds its place)
RANKED, IDEAL, GRADED_KNOWN = "__mlsql_gr", "__mlsql_gi", "__mlsql_gk"
GRADE, AT, SIZE = "__mlsql_gg", "__mlsql_gp", "__mlsql_gn"


def graded_rows(func: str, given: dict[str, ir.Column], out: dict[str, Any]) -> None:
    """Both grade lists as lists of doubles, after their types are checked (lists of
    numbers, as every engine's), and whether both are known."""
    for name in GRADED:
        dtype = given[name].type()
        element = dtype.value_type if dtype.is_array() else None
        if element is None or not (element.is_numeric() or element.is_null()):
            raise MlsqlError(R.GRADES_MESSAGE.format(func=func, name=name, type=dtype))
    if RANKED in out:
        return
    ranked, ideal = (given[n] for n in GRADED)
    out[GRADED_KNOWN] = ranked.notnull() & ideal.notnull()
    out[RANKED] = ranked.cast(dt.Array(dt.float64))
    out[IDEAL] = ideal.cast(dt.Array(dt.float64))


def graded_passes(items: list[EV.Item], rows: ir.Table) -> ir.Table:
    """The rows with each graded measure's value per row beside them.

    The known rows' grades, unnested: the ranked list's at their places (a NULL grade holds
    its place and adds nothing), the ideal list's non-NULL grades numbered best first (the
    database sorts them per row). Each formula's sums over the first ``k`` of each (all of
    the ranked list's length where ``k`` is None, for both lists, as every engine) are taken
    per row, joined back, and the formula read over them (:class:`_Recorder`)."""
    ops = IbisOps(Checks(), Plan(keys=[]))
    numbered = rows.mutate(**{ROW: ibis.row_number()})
    known = numbered.filter(numbered[GRADED_KNOWN])
    backend = backend_name(known[RANKED])
    size = known[RANKED].length().cast(FLOAT)
    ranked = known.select(
        ROW, RANKED, **{SIZE: size, AT: integers(known[RANKED].length(), backend)}
    )
    ranked = ranked.select(
        ROW, SIZE, **{GRADE: ranked[RANKED][ranked[AT]], AT: (ranked[AT] + 1).cast(FLOAT)}
    )
    ideal = known.select(ROW, **{SIZE: size, GRADE: known[IDEAL].unnest()})
    ideal = ideal.filter(ideal[GRADE].notnull())
    best_first = ibis.window(group_by=ideal[ROW], order_by=ibis.desc(ideal[GRADE]))
    ideal = ideal.mutate(**{AT: (ibis.row_number().over(best_first) + 1).cast(FLOAT)})
    sums: dict[str, dict[str, ir.Value]] = {"ranked": {}, "ideal": {}}
    plans = []
    for i, item in enumerate(items):
        k, given = _given(item)
        on = {"ranked": _Recorder(), "ideal": _Recorder()}

        def over(side: str, table: ir.Table, k: int | None, on: dict = on) -> Callable:
            top = table[SIZE] if k is None else ibis.literal(float(k))
            return lambda term: on[side](where(table[AT] <= top, term(table[GRADE], table[AT])))

        s = R.GradedStats(
            unknown=ibis.literal(False),
            over_ranked=over("ranked", ranked, k),
            over_ideal=over("ideal", ideal, k),
        )
        R.row_value(ops, item.name, s, **given)
        names = {}
        for side, recorder in on.items():
            names[side] = [f"__mlsql_rd{side[0]}{i}_{j}" for j in range(len(recorder.sums))]
            sums[side] |= dict(zip(names[side], recorder.sums, strict=True))
        plans.append((item, given, on, names))
    joined = numbered
    for side, table in (("ranked", ranked), ("ideal", ideal)):
        if not sums[side]:
            continue
        per_row = table.group_by(**{FOUND: table[ROW]}).aggregate(**sums[side])
        joined = joined.left_join(per_row, joined[ROW] == per_row[FOUND]).drop(FOUND)
    values: dict[str, ir.Value] = {}
    for item, given, on, names in plans:
        for side, recorder in on.items():
            recorder.replay(joined, names[side])

        def read(side: str, on: dict = on) -> Callable:
            return lambda _term: on[side](ibis.literal(0.0))

        s = R.GradedStats(
            unknown=~joined[GRADED_KNOWN], over_ranked=read("ranked"), over_ideal=read("ideal")
        )
        values[column(item)] = R.row_value(ops, item.name, s, **given).cast(FLOAT)
    return joined.select(*rows.columns, **values)
