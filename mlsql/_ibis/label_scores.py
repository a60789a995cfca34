"""Averaged precision, ROC AUC and the Brier score over label scores, lowered to ibis.

The inputs: a list of true labels and a map label -> score per row (an ibis map: DuckDB's
``MAP``, DataFusion's map; on PostgreSQL a ``jsonb`` object, whose values must be JSON
numbers). The registry's formulas (:mod:`mlsql.measures.label_scores`) finish each measure
over statistics the database computes:

- the cells (:func:`cells`): each known row (of positive weight, where weighted) unnested
  into its explicit cells, one per label that the row scores or holds true: its scored
  labels (a score NULL reads as none), then its true labels it does not score; each cell
  with its score (NULL: unscored, at -infinity, as a score of -infinity is) and whether
  the label is true. The unscored negatives are counted, never built;
- the segments (:func:`segments`): the cells of each segment (the group's label under
  macro and weighted, its row under samples, the whole group under micro) ranked by score
  with window sums, the database's sort per segment: N(>= s) and P(>= s) at each cell's
  score, the negatives scored lower and tied; then per segment the sums of
  :class:`~mlsql.measures.label_scores.Segment`, beside the group's number of labels;
- the average over the segments is a side table's aggregate per group
  (:meth:`~mlsql._ibis.ops.Plan.aggregate_side`).

Weights: a cell weighs its row's weight (micro, macro, weighted); under samples a row's
cells weigh alike, so the row's value is the unweighted one and the row's weight weighs it
in the mean, as in every engine. The Brier score is a sum of (p - y)² over the cells (an
unscored cell has p = 0) and a count; its scores are checked finite and in [0, 1].

The label-score rankings (``coverage_error``, ``label_ranking_loss``,
``label_ranking_average_precision``, ``one_error``, ``ndcg_score``;
:func:`scored_ranking_passes`) read the same cells of each row: windows per row give each
cell its place, the row's labels scored at least as high, the true ones among them and its
tie's size, the registry's per-row formulas (:class:`~mlsql.measures.ranking.ScoreStats`)
sum over them per row, and the values are joined back to the rows, whose mean the ranked
lists' aggregate takes.

The cells and segments are tables the database holds: memory grows with the known rows'
explicit cells (docs/guides/ibis.md), as the ranked lists' pass does; the bounded form is
``evaluate`` on DuckDB, Polars or Spark with the native kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from types import SimpleNamespace
from typing import Any

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir
from ibis import _
from ibis.common.deferred import Deferred, Just

from mlsql import _classification_params as CP
from mlsql import _label_types as LT
from mlsql._errors import MlsqlError
from mlsql._evaluate import front as EV
from mlsql._front.build import checked_params
from mlsql._ibis import backend_name, stats
from mlsql._ibis.ops import FLOAT, Check, Checks, IbisOps, Plan, beside, integers, null, where
from mlsql.measures import label_scores as LS
from mlsql.measures import ranking as R
from mlsql.measures.ranking import LabelRank

#: the projected inputs (the true labels as a set, the scores' map) and whether both are known
ACTUAL, SCORES, KNOWN = "__mlsql_lsa", "__mlsql_lss", "__mlsql_lsk"
#: a cell's row, label, score (NULL: unscored), truth (1/0) and weight; the group's labels
ROW, LABEL, SCORE, TRUE, WEIGHT = (
    "__mlsql_lsr",
    "__mlsql_lsl",
    "__mlsql_lsv",
    "__mlsql_lsy",
    "__mlsql_lsw",
)
N_LABELS = "__mlsql_lsn"
#: 1 where a cell's jsonb score is no JSON number (nor null)
NOT_A_NUMBER = "__mlsql_lsb"


#: a jsonb score that is no number: the scores' message, with what was wrong
JSON_MESSAGE = R.SCORES_MESSAGE.format(
    func="{func}", name="scores", type="jsonb holding a score that is no JSON number"
)


#: a list of (label, score) structs, which the DuckDB and Polars engines take
STRUCTS_MESSAGE = (
    "{func} on an ibis table takes scores as a map label -> score (a jsonb object on "
    "PostgreSQL), not yet a list of (label, score) structs: evaluate it on DuckDB or Polars, "
    "or make the list a map. Got scores {type}."
)


def score_labels(func: str, scores: ir.Column) -> dt.DataType:
    """The type of the labels of a column of scores, which must be a map label -> number (on
    PostgreSQL a jsonb object, whose labels are text); else the scores' message."""
    s_type = scores.type()
    if s_type.is_json() and backend_name(scores) == "postgres":  # jsonb: label -> score
        return dt.string
    if s_type.is_map() and (s_type.value_type.is_numeric() or s_type.value_type.is_null()):
        return s_type.key_type
    if s_type.is_array() and s_type.value_type.is_struct():
        raise MlsqlError(STRUCTS_MESSAGE.format(func=func, type=s_type))
    raise MlsqlError(R.SCORES_MESSAGE.format(func=func, name="scores", type=s_type))


def rows(item: EV.Item, cols: dict[str, ir.Column], out: dict[str, Any], checks: Checks) -> None:
    """The true labels and the scores' map, after their types are checked as every engine
    checks them (a list of labels; a map of labels of the same kind to numbers)."""
    m = item.measure
    given = dict(zip(m.inputs, (cols[r] for r in item.roles), strict=True))
    actual, scores = given["actual"], given["scores"]
    a_type, s_type = actual.type(), scores.type()
    key_type = score_labels(m.name, scores)
    if not (a_type.is_array() or a_type.is_null()):
        raise MlsqlError(LT.NOT_A_LIST_MESSAGE.format(func=m.name, name="actual", type=a_type))
    a_kind = stats.kind(a_type.value_type) if a_type.is_array() else LT.NULL
    LT.check_labels(m.name, m.inputs, [a_kind, stats.kind(key_type)], [str(a_type), str(s_type)])
    if ACTUAL in out:
        return
    out[KNOWN] = actual.notnull() & scores.notnull()
    out[ACTUAL] = stats.as_set(actual, backend_name(actual))
    out[SCORES] = scores


@ibis.udf.scalar.builtin(name="jsonb_typeof")
def _jsonb_typeof(x: dt.JSON) -> str:  # type: ignore[empty-body]
    """PostgreSQL's name of a jsonb value's type (number, string, null, ...)."""


def score_of(values: ir.ArrayValue, at: ir.IntegerValue) -> tuple[ir.FloatingValue, Any]:
    """The score at ``at`` of a map's values (a jsonb value read as a number: ibis 12's
    unwrap writes a path operator PostgreSQL refuses there), and 1 where a jsonb value is
    neither a number nor null (NULL elsewhere)."""
    x = values[at]
    if not x.type().is_json():
        return x.cast(FLOAT), null("int8")
    kind = _jsonb_typeof(x)
    number = (kind == "number").ifelse(x.cast(dt.string).cast(FLOAT), null())
    return number, ((kind != "number") & (kind != "null")).ifelse(1, null("int8"))


#: the columns of a map's keys and values, their number and a place (:func:`map_entries`)
ENTRY_KEYS, ENTRY_VALUES, N_KEYS, AT = "__mlsql_eks", "__mlsql_evs", "__mlsql_ekn", "__mlsql_eat"


def map_entries(
    known: ir.Table,
    keys: list[str],
    weighted: bool,
    given: dict[str, Any],
    scores: ir.Value,
    more: Callable[[ir.Table], ir.IntegerValue],
) -> ir.Table:
    """One row per place of each row of ``known``: the group columns ``keys``, the ``given``
    columns, the row's weight :data:`WEIGHT` (1 where not ``weighted``), the scores' keys
    and values (:data:`ENTRY_KEYS`, :data:`ENTRY_VALUES`; a jsonb object's values as JSON),
    their number :data:`N_KEYS` and the place :data:`AT`: 0, 1, ... below the keys' number
    plus ``more`` (of the row, read off the columns above)."""
    if scores.type().is_json():
        scores = scores.cast(dt.Map(dt.string, dt.json))
    weight = known[EV.WEIGHT].cast(FLOAT) if weighted else ibis.literal(1.0, type=FLOAT)
    numbered = known.select(
        *keys,
        **given,
        **{WEIGHT: weight, ENTRY_KEYS: scores.keys(), ENTRY_VALUES: scores.values()},
    )
    # int32: DataFusion's lengths are unsigned, and ibis drops a cast to int64 (its type of
    # a length); an unsigned minus a signed index is a decimal there
    n = numbered[ENTRY_KEYS].length().cast("int32")
    places = integers(n + more(numbered), backend_name(scores)).cast("int64")
    return numbered.select(*numbered.columns, **{N_KEYS: n, AT: places})


def cells(rows: ir.Table, keys: list[str], weighted: bool, row_column: str = "") -> ir.Table:
    """The known rows' explicit cells (the module's docstring): the group columns ``keys``,
    the row's number, the label, its score (NULL: unscored), 1/0 whether it is true and the
    row's weight (1 where not ``weighted``; the rows weighing 0 have no cell). The rows'
    numbers are their column ``row_column`` where given, else numbered here."""
    present = rows[KNOWN]
    if weighted:
        present = present & (rows[EV.WEIGHT] > 0)
    known = rows.filter(present)
    row = known[row_column] if row_column else ibis.row_number()
    given = {ROW: row, ACTUAL: known[ACTUAL]}
    spread = map_entries(
        known, keys, weighted, given, known[SCORES], lambda t: t[ACTUAL].length().cast("int32")
    )
    i, nk = spread[AT], spread[N_KEYS]
    keyed = i < nk
    k, v, a = spread[ENTRY_KEYS], spread[ENTRY_VALUES], spread[ACTUAL]
    label = keyed.ifelse(k[i], a[i - nk])
    number, not_a_number = score_of(v, i)
    score = keyed.ifelse(number, null())
    out = spread.select(
        *keys,
        ROW,
        WEIGHT,
        **{
            LABEL: label,
            SCORE: score,
            TRUE: a.contains(label).ifelse(1.0, 0.0),
            NOT_A_NUMBER: keyed.ifelse(not_a_number, null("int8")),
            # a true label the row scores is its scored cell
            "__mlsql_lsd": keyed | ~k.contains(label),
        },
    )
    # a label scored NULL and not true is no cell
    out = out.filter(out["__mlsql_lsd"] & (out[SCORE].notnull() | (out[TRUE] == 1.0)))
    return out.select(*keys, ROW, WEIGHT, LABEL, SCORE, TRUE, NOT_A_NUMBER)


def _cells_side(ops: IbisOps, rows: ir.Table, weighted: bool) -> ir.Table:
    """The cells (:func:`cells`), made once per plan."""
    key = ("label_scores", "cells", weighted)
    if key not in ops.plan.side_names:
        ops.plan.side_names[key] = "label_score_cells" + ("_weighted" if weighted else "")
        ops.plan.side(ops.plan.side_names[key], cells(rows, ops.plan.keys, weighted))
    return ops.plan.sides[ops.plan.side_names[key]]


def _group_labels(table: ir.Table, keys: list[str]) -> ir.Table:
    """Each group's number of distinct labels among its cells, beside its group columns."""
    counted = {N_LABELS: table[LABEL].nunique().cast(FLOAT)}
    if not keys:
        return table.aggregate(**counted)
    return table.group_by(keys).aggregate(**counted)


def minus_infinity() -> ir.FloatingValue:
    """-infinity as a double: minus +infinity (ibis 12 writes the literal -inf as '+Inf' for
    DataFusion).

    Examples
    --------
    >>> import ibis
    >>> ibis.memtable({"x": [1.0]}).select(m=minus_infinity()).to_pyarrow()["m"].to_pylist()
    [-inf]
    """
    return -ibis.literal(float("inf"), type=FLOAT)


def segments(table: ir.Table, keys: list[str], average: str, weighted: bool) -> ir.Table:
    """Per group and segment of ``average`` (the module's docstring), the sums of
    :class:`~mlsql.measures.label_scores.Segment` (``n_cells`` aside) and what the segment
    weighs in a samples mean, with the group's number of labels :data:`N_LABELS`.

    The cells ranked by score, an unscored cell at -infinity (the lowest, tied with a score
    of -infinity); a NaN ranks above every score (the databases' order of doubles)."""
    segment = [*keys, *{"micro": [], "samples": [ROW]}.get(average, [LABEL])]
    row_weight = weighted and average == "samples"  # a row's cells weigh alike
    table = table.mutate(__mlsql_lsrank=table[SCORE].fill_null(minus_infinity()))
    y, s, rank = table[TRUE], table[SCORE], table["__mlsql_lsrank"]
    # a column, even where it is 1 (a window sums a column)
    cw = table[WEIGHT] if weighted and not row_weight else y * 0.0 + 1.0
    scored = s.notnull() & (rank != minus_infinity())
    pos, neg = cw * y, cw * (1.0 - y)
    up = ibis.window(group_by=segment, order_by=[rank], range=(None, 0))
    down = ibis.window(group_by=segment, order_by=[rank.desc()], range=(None, 0))
    tie = ibis.window(group_by=[*segment, rank])
    ranked = table.select(
        *segment,
        **{
            "__mlsql_lscw": cw,
            "__mlsql_lspos": pos,
            "__mlsql_lsun": scored.ifelse(0.0, pos),
            # Σ over the positives of the negatives scored lower, and half the tied ones
            "__mlsql_lsu": pos * (neg.sum().over(up) - neg.sum().over(tie) / 2),
            # Σ over the scored positives of P(>= s) / N(>= s)
            "__mlsql_lsp": scored.ifelse(pos * pos.sum().over(down) / cw.sum().over(down), 0.0),
            "__mlsql_lsrw": table[WEIGHT] if row_weight else ibis.literal(1.0, type=FLOAT),
        },
    )
    sums = {
        "n_explicit": ranked["__mlsql_lscw"].sum(),
        "n_positive": ranked["__mlsql_lspos"].sum(),
        "n_positive_unscored": ranked["__mlsql_lsun"].sum(),
        "precision_sum": ranked["__mlsql_lsp"].sum(),
        "u": ranked["__mlsql_lsu"].sum(),
        "weight": ranked["__mlsql_lsrw"].max(),
    }
    typed = {k: v.cast(FLOAT) for k, v in sums.items()}
    per_segment = (
        ranked.group_by(segment).aggregate(**typed) if segment else ranked.aggregate(**typed)
    )
    return beside(per_segment, _group_labels(table, keys), keys)


class GroupOps(IbisOps):
    """:class:`~mlsql._ibis.ops.IbisOps` whose values for undefined ratios are deferred too:
    the averages combine them with the groups' deferred sums (an ibis literal times a
    deferred value is no expression)."""

    def undefined(self, zero_division: Any, nothing_to_score: Any) -> Any:
        x = super().undefined(zero_division, nothing_to_score)
        return Deferred(Just(x)) if isinstance(x, ir.Value) else x


def check_code(s: Any) -> Any:
    """The check code of a probability ``s``: 1 NaN, 2 +inf, 3 -inf, 4 below 0, 5 above 1,
    NULL where it is in [0, 1] or NULL (every engine's order of the checks)."""
    return ibis.cases(
        (s.isnan(), 1),
        (s.isinf() & (s > 0), 2),
        (s.isinf(), 3),
        (s < 0, 4),
        (s > 1, 5),
        else_=null("int8"),
    )


def check_message(func: str, code: Any, name: str = "scores") -> str:
    """The message of the check code ``code`` of :func:`check_code` (the input ``name``)."""
    c = int(code) - 1
    if c < len(CP.NOT_FINITE):
        return CP.finite_value_message(func, name, CP.NOT_FINITE[c])
    return CP.probability_value_message(func, name, CP.OUT_OF_RANGE[c - len(CP.NOT_FINITE)])


def _brier(item: EV.Item, ops: IbisOps, side: str, n: Any) -> Any:
    """The Brier score's sum and count, after the check of its scores (every engine's
    order: NaN, then an infinite score, then one below 0, then one above 1)."""
    first = ops.plan.aggregate_side(side, check_code(_[SCORE]).cast(FLOAT), "min")
    ops.checks.items.append(Check(first, partial(check_message, item.name)))
    s = _[SCORE]
    loss = _[WEIGHT] * (s.fill_null(0.0) - _[TRUE]) ** 2
    stats = LS.LabelBrierStats(
        n=n,
        total_loss=ops.plan.aggregate_side(side, loss, "sum").fill_null(0.0),
        n_labels=ops.plan.aggregate_side(side, _[LABEL], "distinct").fill_null(0),
    )
    params = checked_params(item.measure, item.params)
    assert item.measure.build is not None
    return item.measure.build(ops, stats, **params)


def value(item: EV.Item, rows: ir.Table, w: ir.FloatingColumn | None, ops: IbisOps) -> Any:
    """The measure's formula over the group's segments (the module's docstring)."""
    weighted = w is not None
    known = rows[KNOWN]
    n = ops.count(where(known, 1))
    wsum = npos = None
    if w is not None:
        wsum, npos = ops.sum(where(known, w)), ops.count(where(known & (w > 0), 1))
    cells_side = _cells_side(ops, rows, weighted)
    name = ops.plan.side_names[("label_scores", "cells", weighted)]
    if rows[SCORES].type().is_json():
        bad = ops.plan.aggregate_side(name, _[NOT_A_NUMBER].cast(FLOAT), "max")
        ops.checks.add(bad.notnull(), JSON_MESSAGE.format(func=item.name))
    if item.name == LS.BRIER:
        return _brier(item, ops, name, wsum if weighted else n)
    params = checked_params(item.measure, item.params)
    average = params["average"]
    key = ("label_scores", "segments", average, weighted)
    if key not in ops.plan.side_names:
        ops.plan.side_names[key] = f"label_score_segments_{average}" + "_w" * weighted
        ops.plan.side(
            ops.plan.side_names[key], segments(cells_side, ops.plan.keys, average, weighted)
        )
    side = ops.plan.side_names[key]
    row_weight = weighted and average == "samples"
    cell_weight = wsum if weighted else n
    n_cells = {"micro": cell_weight * _[N_LABELS], "samples": _[N_LABELS]}.get(average, cell_weight)
    segment = LS.Segment(
        n_cells=n_cells,
        **{f: _[f] for f in ("n_explicit", "n_positive", "n_positive_unscored")},
        precision_sum=_["precision_sum"],
        u=_["u"],
        weight=_["weight"] if row_weight else 1,
    )

    def total(x: Any) -> Any:
        return ops.plan.aggregate_side(side, x, "sum").fill_null(0.0)

    def over_segments(per: Any, sums: dict[str, Any], finish: Any) -> Any:
        values = SimpleNamespace(**per(segment))
        return finish({k: total(term(values)) for k, term in sums.items()})

    n_segments = total(1.0)
    n_empty: Any = {
        "micro": ops.when(n_segments == 0, 1.0, 0.0),
        "samples": (npos if weighted else n) - n_segments,
    }.get(average, 0)
    s = LS.LabelScoreStats(
        n=n,
        over_segments=over_segments,
        n_empty=n_empty,
        skips=bool(ops.skips_undefined(params["zero_division"])),
        empty_weight=wsum - total(_["weight"]) if row_weight else None,
        zero_weight=wsum == 0 if weighted else False,
    )
    assert item.measure.build is not None
    return item.measure.build(GroupOps(ops.checks, ops.plan), s, **params)


# ---------------------------------------------------------------- label-score rankings
#: a cell's 1-based place in its row (ties in any order), the row's labels scored at least
#: as high as it (itself included), its tie's size and true labels at least as high; per row
#: its labels, true labels, labels scored highest and true ones among them
PLACE, AT_OR_ABOVE, TIE, TRUE_ABOVE = "__mlsql_lsq", "__mlsql_lsge", "__mlsql_lst", "__mlsql_lsgt"
ROW_STATS = ("__mlsql_lsnl", "__mlsql_lsnt", "__mlsql_lsntop", "__mlsql_lsntt")


class _Recorder:
    """The per-row sums and maxima a formula asks for over a row's cells, recorded in order,
    or read back in that order from the per-row table (:meth:`replay`)."""

    def __init__(self) -> None:
        self.terms: list[tuple[ir.Value, str]] = []
        self.read: list[ir.Value] | None = None

    def __call__(self, x: ir.Value, how: str) -> ir.Value:
        if self.read is None:
            self.terms.append((x.cast(FLOAT), how))
            return x  # a stand-in: the formula's value over the cells is never used
        return self.read.pop(0)

    def replay(self, table: ir.Table, names: list[str]) -> None:
        self.read = [table[n].fill_null(0.0) for n in names]


def ranked_cells(rows: ir.Table, numbered: str) -> ir.Table:
    """Each known row's cells (:func:`cells`) with their places and the windows of
    :data:`PLACE` ... :data:`ROW_STATS` over the row, a score NULL ranking lowest."""
    c = cells(rows, [], False, numbered)
    c = c.mutate(__mlsql_lsrank=c[SCORE].fill_null(minus_infinity()))
    rank, y, s = c["__mlsql_lsrank"], c[TRUE], c[SCORE]
    down = ibis.window(group_by=[c[ROW]], order_by=[rank.desc()], range=(None, 0))
    places = ibis.window(group_by=[c[ROW]], order_by=[rank.desc()])
    row = ibis.window(group_by=[c[ROW]])
    tie = ibis.window(group_by=[c[ROW], rank])
    top = s.max().over(row)
    at_top = (s.notnull() & (s == top)).ifelse(1.0, 0.0)
    return c.mutate(
        **{
            PLACE: (ibis.row_number().over(places) + 1).cast(FLOAT),
            AT_OR_ABOVE: y.count().over(down).cast(FLOAT),
            TIE: y.count().over(tie).cast(FLOAT),
            TRUE_ABOVE: y.sum().over(down),
            ROW_STATS[0]: y.count().over(row).cast(FLOAT),
            ROW_STATS[1]: y.sum().over(row),
            "__mlsql_lstop": at_top,
        }
    )


def scored_ranking_passes(
    items: list[EV.Item], rows: ir.Table, column: Callable[[EV.Item], str]
) -> ir.Table:
    """The rows with each label-score ranking measure's value per row beside them (NULL
    where unknown), in column ``column(item)``: the registry's per-row formulas
    (:class:`~mlsql.measures.ranking.ScoreStats`) over each row's ranked cells, their sums
    taken per row and joined back (as the ranked lists' pass)."""
    ops = IbisOps(Checks(), Plan(keys=[]))
    numbered = rows.mutate(__mlsql_lsrow=ibis.row_number())
    c = ranked_cells(numbered, "__mlsql_lsrow")
    c = c.mutate(
        __mlsql_lsntop=c["__mlsql_lstop"].sum().over(ibis.window(group_by=[c[ROW]])),
        __mlsql_lsntt=(c["__mlsql_lstop"] * c[TRUE]).sum().over(ibis.window(group_by=[c[ROW]])),
    )
    at_or_above, place = c[AT_OR_ABOVE], c[PLACE]
    rank = LabelRank(
        at_or_above=at_or_above, above=at_or_above - c[TIE], true_at_or_above=c[TRUE_ABOVE]
    )
    is_true = c[TRUE] == 1.0
    tie = ibis.window(group_by=[c[ROW], c["__mlsql_lsrank"]])

    def over_places(start: Any, stop: Any, term: Any) -> Any:
        # the places of the cell's tie (every caller's): its cells' places, summed over the
        # tie (start and stop are the same on every cell of a tie)
        x = ((place > start) & (place <= stop)).ifelse(term(place), 0.0)
        return x.sum().over(tie)

    plans = []
    terms: dict[str, ir.Value] = {}
    for i, item in enumerate(items):
        params = checked_params(item.measure, item.params)
        k = params.get("k")
        given = {n: v for n, v in params.items() if n != "k"}
        rec = _Recorder()

        def cut(n: Any, k: Any = k) -> Any:
            return n if k is None else ibis.least(n, float(k))

        def over_true(term: Any, rec: _Recorder = rec) -> Any:
            return rec(is_true.ifelse(term(rank), 0.0), "sum")

        def max_over_true(term: Any, rec: _Recorder = rec) -> Any:
            return rec(is_true.ifelse(term(rank), null()), "max")

        def over_positions(count: Any, term: Any, rec: _Recorder = rec) -> Any:
            return rec((place <= count).ifelse(term(place), 0.0), "sum")

        s = R.ScoreStats(
            unknown=ibis.literal(False),
            n_labels=c[ROW_STATS[0]],
            n_true=c[ROW_STATS[1]],
            n_top=c["__mlsql_lsntop"],
            n_top_true=c["__mlsql_lsntt"],
            over_true=over_true,
            max_over_true=max_over_true,
            over_places=over_places,
            over_positions=over_positions,
            cut=cut,
        )
        R.row_value(ops, item.name, s, **given)
        names = []
        for j, (x, _how) in enumerate(rec.terms):
            names.append(name := f"__mlsql_lsk{i}_{j}")
            terms[name] = x
        plans.append((item, k, given, rec, names))
    per_cell = c.select(ROW, *ROW_STATS, **terms)
    sums: dict[str, ir.Value] = {n: per_cell[n].max() for n in ROW_STATS}
    for _item, _k, _given, rec, names in plans:
        for name, (_x, how) in zip(names, rec.terms, strict=True):
            sums[name] = per_cell[name].sum() if how == "sum" else per_cell[name].max()
    found = per_cell.group_by(**{"__mlsql_lsf": per_cell[ROW]}).aggregate(**sums)
    joined = numbered.left_join(found, numbered["__mlsql_lsrow"] == found["__mlsql_lsf"])
    values: dict[str, ir.Value] = {}
    for item, k, given, rec, names in plans:
        rec.replay(joined, names)

        def read(*_: Any, rec: _Recorder = rec) -> ir.Value:
            return rec(ibis.literal(0.0), "sum")

        def cut(n: Any, k: Any = k) -> Any:
            return n if k is None else ibis.least(n, float(k))

        n = [joined[x].fill_null(0.0) for x in ROW_STATS]
        s = R.ScoreStats(
            unknown=~joined[KNOWN],
            n_labels=n[0],
            n_true=n[1],
            n_top=n[2],
            n_top_true=n[3],
            over_true=read,
            max_over_true=read,
            over_places=read,
            over_positions=read,
            cut=cut,
        )
        values[column(item)] = R.row_value(ops, item.name, s, **given).cast(FLOAT)
    return joined.select(*rows.columns, **values)
