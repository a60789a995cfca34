"""Class probabilities lowered to ibis: the multiclass Brier score and the top-label
calibration error.

The inputs: one true label per row and a map class -> probability (an ibis map; on
PostgreSQL a ``jsonb`` object, as the label scores take it: :mod:`.label_scores`). The
registry's formulas (:mod:`mlsql.measures.class_scores`) finish each measure over
statistics the database computes:

- per known row (:func:`per_row`): its scored classes unnested by position (a score NULL
  reads as none), plus one place past them so that a row scoring no class keeps a row;
  then a ``GROUP BY`` of the row's number: Σ (p - [class is actual])² over its scored
  classes, whether it scores its true class, how many classes it scores, its highest
  probability and the smallest class scored so (the top label), and the smallest check
  code of its probabilities (NaN, +inf, -inf, below 0, above 1);
- the Brier score: per group Σ w x (the row's sum + 1 where its true class is unscored),
  and the most classes one row mentions (its scored classes and its true class);
- the calibration error: per group and bin of the rows' confidences (a side table), the
  gap |Σ w (confidence - correct)| and the size Σ w, as ``expected_calibration_error``.

The per-row step holds a row of sums per known row (docs/guides/ibis.md), as the ranked
lists' pass does; the bins' side table grows with groups x bins.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import ibis
import ibis.expr.types as ir
from ibis import _

from mlsql import _label_types as LT
from mlsql._evaluate import front as EV
from mlsql._front.build import checked_params
from mlsql._ibis import backend_name, stats
from mlsql._ibis.label_scores import (
    AT,
    ENTRY_KEYS,
    ENTRY_VALUES,
    JSON_MESSAGE,
    N_KEYS,
    WEIGHT,
    GroupOps,
    check_code,
    check_message,
    map_entries,
    score_labels,
    score_of,
)
from mlsql._ibis.ops import FLOAT, Check, Checks, IbisOps, null, where
from mlsql.measures import class_scores as CS
from mlsql.measures import scores as SC

#: the projected inputs (the true label, the scores' map) and whether both are known
ACTUAL, SCORES, KNOWN = "__mlsql_csa", "__mlsql_css", "__mlsql_csk"
#: a row's number and weight (the label scores' column of weights); per row: Σ of its scored classes' squared errors, 1 where its
#: true class is unscored, the classes it mentions, its confidence, 1/0 whether its top
#: label is its true class, its check code and 1 where a jsonb score is no number
ROW = "__mlsql_csr"
LOSS, MISSED, WIDTH, CONFIDENCE, CORRECT = (f"__mlsql_cs{c}" for c in "lmvcy")
#: a row's lowest and highest probability (NULL where it scores none): bootstrap's tuple
LOW, HIGH = "__mlsql_cslo", "__mlsql_cshi"
CODE, NOT_A_NUMBER = "__mlsql_cscode", "__mlsql_csb"


def _smallest(labels: ir.Column) -> ir.Scalar:
    """The smallest of ``labels`` (NULLs left out) in every engine's order: the bytes of text
    (:func:`mlsql._ibis.stats.byte_order`; on PostgreSQL the label of the smallest bytes)."""
    backend = backend_name(labels)
    if backend in stats.COLLATED and labels.type().is_string():
        return labels.argmin(stats.byte_order(labels, backend))
    return labels.min()


def rows(item: EV.Item, cols: dict[str, ir.Column], out: dict[str, Any], checks: Checks) -> None:
    """The true label and the scores' map, after their types are checked as every engine
    checks them (one label; a map of labels of the same kind to numbers)."""
    m = item.measure
    given = dict(zip(m.inputs, (cols[r] for r in item.roles), strict=True))
    actual, scores = given["actual"], given["scores"]
    a_type, s_type = actual.type(), scores.type()
    kinds = [stats.kind(a_type), stats.kind(score_labels(m.name, scores))]
    LT.check_labels(m.name, m.inputs, kinds, [str(a_type), str(s_type)])
    if ACTUAL in out:
        return
    out[KNOWN] = actual.notnull() & scores.notnull()
    out[ACTUAL] = actual
    out[SCORES] = scores


def per_row(rows: ir.Table, keys: list[str], weighted: bool) -> ir.Table:
    """The known rows' statistics (the module's docstring), with the group columns ``keys``
    and the row's weight (1 where not ``weighted``; a row of NULL weight is left out)."""
    present = rows[KNOWN]
    if weighted:
        present = present & rows[EV.WEIGHT].notnull()
    known = rows.filter(present)
    given = {ROW: ibis.row_number(), ACTUAL: known[ACTUAL]}
    # one place past the classes: a row of no class keeps a row
    spread = map_entries(
        known, keys, weighted, given, known[SCORES], lambda _t: ibis.literal(1, type="int32")
    )
    i, n = spread[AT], spread[N_KEYS]
    within = i < n
    number, not_a_number = score_of(spread[ENTRY_VALUES], i)
    p = within.ifelse(number, null())
    label = within.ifelse(spread[ENTRY_KEYS][i], null(spread[ENTRY_KEYS].type().value_type))
    cells = spread.select(
        *keys,
        ROW,
        WEIGHT,
        ACTUAL,
        __mlsql_csl=label,
        __mlsql_csp=p,
        __mlsql_cst=(p.notnull() & (label == spread[ACTUAL])).ifelse(1.0, 0.0),
        __mlsql_csb=within.ifelse(not_a_number, null("int8")),
        __mlsql_cscode=check_code(p),
    )
    p, label, hit = cells["__mlsql_csp"], cells["__mlsql_csl"], cells["__mlsql_cst"]
    cells = cells.mutate(__mlsql_cstop=p.max().over(ibis.window(group_by=[ROW])))
    top = cells["__mlsql_cstop"]
    sums = {
        LOSS: ((p - hit) ** 2).sum(),
        MISSED: 1.0 - hit.max(),
        WIDTH: p.count().cast(FLOAT) + 1.0 - hit.max(),
        CONFIDENCE: top.max().fill_null(0.0),
        "__mlsql_cspred": _smallest((p.notnull() & (p == top)).ifelse(label, null(label.type()))),
        LOW: p.min(),
        HIGH: p.max(),
        CODE: cells["__mlsql_cscode"].min(),
        NOT_A_NUMBER: cells["__mlsql_csb"].max(),
    }
    out = cells.group_by([*keys, ROW, WEIGHT, ACTUAL]).aggregate(**sums)
    correct = (out["__mlsql_cspred"] == out[ACTUAL]).fill_null(False).ifelse(1.0, 0.0)
    return out.mutate(**{CORRECT: correct, LOSS: out[LOSS].fill_null(0.0)})


def _side(ops: IbisOps, rows: ir.Table, weighted: bool) -> str:
    """The per-row side table's name (made once per plan), and the checks of its rows."""
    key = ("class_scores", "rows", weighted)
    if key not in ops.plan.side_names:
        name = ops.plan.side_names[key] = "class_score_rows" + "_weighted" * weighted
        ops.plan.side(name, per_row(rows, ops.plan.keys, weighted))
    return ops.plan.side_names[key]


def value(item: EV.Item, rows: ir.Table, w: ir.FloatingColumn | None, ops: IbisOps) -> Any:
    """The measure's formula over the group's per-row statistics (the module's docstring)."""
    m = item.measure
    weighted = w is not None
    side = _side(ops, rows, weighted)
    if rows[SCORES].type().is_json():
        bad = ops.plan.aggregate_side(side, _[NOT_A_NUMBER].cast(FLOAT), "max")
        ops.checks.add(bad.notnull(), JSON_MESSAGE.format(func=m.name))
    least = ops.plan.aggregate_side(side, _[CODE].cast(FLOAT), "min")
    ops.checks.items.append(Check(least, partial(check_message, m.name)))
    known = rows[KNOWN]
    n = ops.count(where(known, 1)) if w is None else ops.sum(where(known, w)).fill_null(0.0)
    params = checked_params(m, item.params)
    assert m.build is not None
    group_ops = GroupOps(ops.checks, ops.plan)
    if m.name == "multiclass_brier_score":
        s: Any = CS.ClassBrierStats(
            n=n,
            total_loss=ops.plan.aggregate_side(side, _[WEIGHT] * (_[LOSS] + _[MISSED]), "sum"),
            n_classes=ops.plan.aggregate_side(side, _[WIDTH], "max"),
        )
        return m.build(group_ops, s, **params)
    n_bins = int(params["n_bins"])
    key = ("class_scores", "bins", weighted, n_bins)
    if key not in ops.plan.side_names:
        name = ops.plan.side_names[key] = f"class_score_bins_{n_bins}" + "_weighted" * weighted
        table = ops.plan.sides[side]
        b = SC.calibration_bin(IbisOps(Checks(), ops.plan), table[CONFIDENCE], n_bins)
        binned = table.select(*ops.plan.keys, WEIGHT, CONFIDENCE, CORRECT, __mlsql_csbin=b)
        mass = binned[WEIGHT]
        sums = {
            "__mlsql_csgap": (mass * (binned[CONFIDENCE] - binned[CORRECT])).sum().abs(),
            "__mlsql_cssize": mass.sum(),
        }
        by = [*ops.plan.keys, "__mlsql_csbin"]
        ops.plan.side(name, binned.group_by(by).aggregate(**sums))
    bins = ops.plan.side_names[key]

    def over_bins(_n: Any, term: Any, largest: bool) -> Any:
        x = term(_["__mlsql_csgap"], _["__mlsql_cssize"])
        return ops.plan.aggregate_side(bins, x, "max" if largest else "sum")

    return m.build(group_ops, SC.CalibrationStats(n=n, over_bins=over_bins), **params)
