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

The cells and segments are tables the database holds: memory grows with the known rows'
explicit cells (docs/guides/ibis.md), as the ranked lists' pass does; the bounded form is
``evaluate`` on DuckDB, Polars or Spark with the native kernels.
"""

from __future__ import annotations

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
from mlsql._ibis.ops import FLOAT, Check, Checks, IbisOps, beside, integers, null, where
from mlsql.measures import label_scores as LS
from mlsql.measures import ranking as R

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
#: the Brier score's check codes: a score NaN, +inf, -inf, below 0, above 1
_BRIER_CODES = len(CP.NOT_FINITE) + len(CP.OUT_OF_RANGE)


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


def rows(item: EV.Item, cols: dict[str, ir.Column], out: dict[str, Any], checks: Checks) -> None:
    """The true labels and the scores' map, after their types are checked as every engine
    checks them (a list of labels; a map of labels of the same kind to numbers)."""
    m = item.measure
    given = dict(zip(m.inputs, (cols[r] for r in item.roles), strict=True))
    actual, scores = given["actual"], given["scores"]
    a_type, s_type = actual.type(), scores.type()
    if s_type.is_json() and backend_name(scores) == "postgres":  # jsonb: label -> score
        key_type: dt.DataType = dt.string
    elif s_type.is_map() and (s_type.value_type.is_numeric() or s_type.value_type.is_null()):
        key_type = s_type.key_type
    elif s_type.is_array() and s_type.value_type.is_struct():
        raise MlsqlError(STRUCTS_MESSAGE.format(func=m.name, type=s_type))
    else:
        raise MlsqlError(R.SCORES_MESSAGE.format(func=m.name, name="scores", type=s_type))
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


def _score_of(values: ir.ArrayValue, at: ir.IntegerValue) -> tuple[ir.FloatingValue, Any]:
    """The score at ``at`` of a map's values (a jsonb value read as a number: ibis 12's
    unwrap writes a path operator PostgreSQL refuses there), and 1 where a jsonb value is
    neither a number nor null (NULL elsewhere)."""
    x = values[at]
    if not x.type().is_json():
        return x.cast(FLOAT), null("int8")
    kind = _jsonb_typeof(x)
    number = (kind == "number").ifelse(x.cast(dt.string).cast(FLOAT), null())
    return number, ((kind != "number") & (kind != "null")).ifelse(1, null("int8"))


def cells(rows: ir.Table, keys: list[str], weighted: bool) -> ir.Table:
    """The known rows' explicit cells (the module's docstring): the group columns ``keys``,
    the row's number, the label, its score (NULL: unscored), 1/0 whether it is true and the
    row's weight (1 where not ``weighted``; the rows weighing 0 have no cell)."""
    present = rows[KNOWN]
    if weighted:
        present = present & (rows[EV.WEIGHT] > 0)
    known = rows.filter(present)
    backend = backend_name(known[ACTUAL])
    scores = known[SCORES]
    if scores.type().is_json():
        scores = scores.cast(dt.Map(dt.string, dt.json))
    weight = known[EV.WEIGHT].cast(FLOAT) if weighted else ibis.literal(1.0, type=FLOAT)
    numbered = known.select(
        *keys,
        **{
            ROW: ibis.row_number(),
            WEIGHT: weight,
            ACTUAL: known[ACTUAL],
            "__mlsql_lsks": scores.keys(),
            "__mlsql_lsvs": scores.values(),
        },
    )
    k, v, a = numbered["__mlsql_lsks"], numbered["__mlsql_lsvs"], numbered[ACTUAL]
    spread = numbered.select(
        *keys,
        ROW,
        WEIGHT,
        ACTUAL,
        "__mlsql_lsks",
        "__mlsql_lsvs",
        # int32: DataFusion's lengths are unsigned, and ibis drops a cast to int64 (its type
        # of a length); an unsigned minus a signed index is a decimal there
        __mlsql_lsnk=k.length().cast("int32"),
        __mlsql_lsi=integers((k.length() + a.length()).cast("int64"), backend).cast("int64"),
    )
    i, nk = spread["__mlsql_lsi"], spread["__mlsql_lsnk"]
    keyed = i < nk
    k, v, a = spread["__mlsql_lsks"], spread["__mlsql_lsvs"], spread[ACTUAL]
    label = keyed.ifelse(k[i], a[i - nk])
    number, not_a_number = _score_of(v, i)
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


class _GroupOps(IbisOps):
    """:class:`~mlsql._ibis.ops.IbisOps` whose values for undefined ratios are deferred too:
    the averages combine them with the groups' deferred sums (an ibis literal times a
    deferred value is no expression)."""

    def undefined(self, zero_division: Any, nothing_to_score: Any) -> Any:
        x = super().undefined(zero_division, nothing_to_score)
        return Deferred(Just(x)) if isinstance(x, ir.Value) else x


def _min_code(ops: IbisOps, side: str, code: Any) -> Any:
    """The smallest non-NULL ``code`` (small whole numbers) over a group's rows of ``side``
    (NULL over none): the largest of their complements, complemented back."""
    top = ops.plan.aggregate_side(side, (_BRIER_CODES + 1 - code).cast(FLOAT), "max")
    return _BRIER_CODES + 1 - top


def _brier_message(func: str, code: Any) -> str:
    c = int(code) - 1
    if c < len(CP.NOT_FINITE):
        return CP.finite_value_message(func, "scores", CP.NOT_FINITE[c])
    return CP.probability_value_message(func, "scores", CP.OUT_OF_RANGE[c - len(CP.NOT_FINITE)])


def _brier(item: EV.Item, ops: IbisOps, side: str, n: Any) -> Any:
    """The Brier score's sum and count, after the check of its scores (every engine's
    order: NaN, then an infinite score, then one below 0, then one above 1)."""
    s = _[SCORE]
    code = ibis.cases(
        (s.isnan(), 1),
        (s.isinf() & (s > 0), 2),
        (s.isinf(), 3),
        (s < 0, 4),
        (s > 1, 5),
        else_=null("int8"),
    )
    first = _min_code(ops, side, code)
    ops.checks.items.append(Check(first, partial(_brier_message, item.name)))
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
    return item.measure.build(_GroupOps(ops.checks, ops.plan), s, **params)
