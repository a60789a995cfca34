"""The scores family lowered to ibis: binary labels against scores or probabilities.

Per row (:func:`rows`): the label as 1/0 and the score as a double, both NULL
where either is, checked as every engine checks them (a label other than 0/1,
then a NaN or infinite score, then, for the probability measures, a score
outside [0, 1]).

Then window sums over each group's rows (:func:`passes`), which the database
sorts (memory per group of its sort, never in Python), beside each row:

- over the rows ordered by score (a ``RANGE`` frame: the run of equal scores
  counted with the row), the negatives scored at most the row's score, and over
  the run itself its negatives: ``auc``'s U = Σ over the positives of (lower
  negatives + the run's negatives / 2);
- over the rows ordered by descending score, the positives and all the rows
  scored at least as high: the precision P(>= s) / N(>= s) at each row's score
  (``average_precision_score``: Σ over the positives of it), and the precision
  at the run above, (P - the run's positives) / (N - the run's rows)
  (``area_under_pr``: Σ over the positives of :func:`~mlsql.measures.scores.pr_trapezoid`);
- the binned measures read the same sums over each row's bin on the grid
  (:func:`~mlsql.measures.scores.grid_bin`) in place of its score, and the
  calibration error each bin's Σ (prob - actual) and size over the rows of the
  bin (one row of each bin counts its term).

Weights multiply each row's positives, negatives and rows, as the other
engines' weighted sums do; log loss and the Brier score are weighted means.
The registry formulas (:mod:`mlsql.measures.scores`) finish each measure.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import ibis
import ibis.expr.types as ir

from mlsql import _classification_params as CP
from mlsql._evaluate import front as EV
from mlsql._front.build import checked_params
from mlsql._ibis.inputs import binary_flag, finite_number
from mlsql._ibis.ops import FLOAT, Checks, IbisOps, null, where
from mlsql.measures import scores as SC

#: the checked label (1/0) and score of each known row (NULL elsewhere)
LABEL, SCORE = "__mlsql_sy", "__mlsql_ss"
#: the measures over the ranks of the scores, and over the grid's bins
RANKED = ("auc", "hivemall_auc", "average_precision_score", "area_under_pr")
#: the window sums of a ranking key (the score, or a grid's bins): their column suffixes
_SUMS = ("neg_le", "neg_eq", "pos_eq", "all_eq", "pos_ge", "all_ge")


def rows(item: EV.Item, cols: dict[str, ir.Column], out: dict[str, Any], checks: Checks) -> None:
    """The label (1/0) and score (a double) where both are known, checked; the first score
    measure's name is the one the messages give, as in Spark."""
    label_name, score_name = SC.label_and_score(item.measure)
    roles = dict(zip(item.measure.inputs, item.roles, strict=True))
    a, s = cols[roles[label_name]], cols[roles[score_name]]
    if LABEL not in out:
        known = a.notnull() & s.notnull()
        y = binary_flag(item.name, label_name, where(known, a), checks)
        x = finite_number(item.name, score_name, where(known, s), checks)
        out.update({LABEL: y, SCORE: x})
    if item.name in SC.PROBABILITIES and not _range_checked(checks, score_name):
        x = out[SCORE]
        code = ibis.cases((x < 0, 1), (x > 1, 2), else_=null("int8"))
        checks.add_code(code, partial(_out_of_range, item.name, score_name))


def _range_checked(checks: Checks, score_name: str) -> bool:
    """Whether the scores named ``score_name`` are checked in [0, 1] already (by the first
    probability measure of that input, whose name the message gives)."""
    return any(
        isinstance(c.message, partial)
        and c.message.func is _out_of_range
        and c.message.args[1] == score_name
        for c in checks.items
    )


def _out_of_range(func: str, name: str, code: Any) -> str:
    return CP.probability_value_message(func, name, CP.OUT_OF_RANGE[int(code) - 1])


def _thresholds(item: EV.Item) -> int:
    return int(checked_params(item.measure, item.params)["thresholds"])


def _n_bins(item: EV.Item) -> int:
    return int(checked_params(item.measure, item.params)["n_bins"])


def _rank_keys(items: list[EV.Item]) -> dict[str, Any]:
    """Each ranking key the items need: "s" (the score) or "t{N}" (the bins of N thresholds)."""
    keys: dict[str, Any] = {}
    for item in items:
        if item.name in RANKED:
            keys["s"] = None
        elif item.name in SC.GRID:
            keys[f"t{_thresholds(item)}"] = _thresholds(item)
    return keys


def passes(items: list[EV.Item], table: ir.Table, groups: list[str], weighted: bool) -> ir.Table:
    """``table`` with the window sums of the module docstring beside each row."""
    y, s = table[LABEL], table[SCORE]
    w = table[EV.WEIGHT] if weighted else ibis.literal(1.0, type=FLOAT)
    known = y.notnull() & s.notnull()
    if weighted:
        known = known & w.notnull()
    pos = known.ifelse(w * y, null())
    neg = known.ifelse(w * (1 - y), null())
    every = known.ifelse(w, null())
    ops = IbisOps(Checks(), None)  # type: ignore[arg-type]  # row formulas: no aggregate
    # a NaN or infinite score has no bin: the checks refuse it with mlsql's message, where
    # the database's cast of its bin failed first (DuckDB's ConversionException)
    binned = known & ~s.isnan() & ~s.isinf()
    added: dict[str, Any] = {}
    for name, thresholds in _rank_keys(items).items():
        r = s if thresholds is None else binned.ifelse(SC.grid_bin(ops, s, thresholds), null())
        up = ibis.window(group_by=groups, order_by=[r], range=(None, 0))
        down = ibis.window(group_by=groups, order_by=[r.desc()], range=(None, 0))
        tie = ibis.window(group_by=[*groups, r])
        sums = (
            neg.sum().over(up),
            neg.sum().over(tie),
            pos.sum().over(tie),
            every.sum().over(tie),
            pos.sum().over(down),
            every.sum().over(down),
        )
        added.update({f"__mlsql_{name}_{k}": v for k, v in zip(_SUMS, sums, strict=True)})
        if thresholds is not None:
            added[f"__mlsql_{name}_top"] = known & (r == thresholds - 1)
    for n_bins in sorted({_n_bins(i) for i in items if i.name == "expected_calibration_error"}):
        b = binned.ifelse(SC.calibration_bin(ops, s, n_bins), null())
        in_bin = ibis.window(group_by=[*groups, b])
        added[f"__mlsql_b{n_bins}_gap"] = (every * (s - y)).sum().over(in_bin).abs()
        added[f"__mlsql_b{n_bins}_size"] = every.sum().over(in_bin)
        first = ibis.row_number().over(ibis.window(group_by=[*groups, b], order_by=[s]))
        added[f"__mlsql_b{n_bins}_first"] = known & (first == 0)
    return table.mutate(**added) if added else table


def value(item: EV.Item, table: ir.Table, w: ir.FloatingColumn | None, ops: IbisOps) -> Any:
    """The registry formula over the statistics summed from the rows and their window sums."""
    y, s = table[LABEL], table[SCORE]
    known = y.notnull() & s.notnull()
    weight = ibis.literal(1.0, type=FLOAT) if w is None else w
    if w is not None:
        known = known & w.notnull()
    params = checked_params(item.measure, item.params)
    build = item.measure.build
    assert build is not None
    rows_known = ops.sum(known.ifelse(1.0, null()))
    n_rows = ops.count(known.ifelse(1, null("int64"))) if w is not None else None

    def total(x: Any) -> Any:
        return ops.sum(known.ifelse(weight * x, null()))

    if item.name in ("logloss", "hivemall_logloss", "brier_score_loss"):
        if item.name == "brier_score_loss":
            term = SC.squared_error_term(ops, y, s)
        else:
            p = s.clip(SC.CLIP, 1 - SC.CLIP)
            term = SC.log_loss_term(ops, y, p.ln(), (1 - p).ln())
        return build(ops, SC.LossStats(n=total(1.0), total_loss=total(term)), **params)
    if item.name == "expected_calibration_error":
        n_bins = _n_bins(item)
        gap, size = table[f"__mlsql_b{n_bins}_gap"], table[f"__mlsql_b{n_bins}_size"]
        first = table[f"__mlsql_b{n_bins}_first"]

        def over_bins(_n: Any, term: Any, largest: bool) -> Any:
            x = first.ifelse(term(gap, size), null())
            return ops.plan.aggregate(x.max().cast(FLOAT)) if largest else ops.sum(x)

        stats = SC.CalibrationStats(n=total(1.0), over_bins=over_bins)
        return build(ops, stats, **params)
    key = "s" if item.name in RANKED else f"t{_thresholds(item)}"
    c = {k: table[f"__mlsql_{key}_{k}"] for k in _SUMS}
    pos = known.ifelse(weight * y, null())
    n_positive = ops.sum(pos)
    precision = (c["all_ge"] > 0).ifelse(c["pos_ge"] / c["all_ge"], null())
    if item.name in ("auc", "hivemall_auc", "binned_auc"):
        u = ops.sum(pos * (2 * c["neg_le"] - c["neg_eq"])) / 2
        if item.name == "binned_auc":
            top = table[f"__mlsql_{key}_top"]
            top_positive = ops.sum(top.ifelse(pos, 0.0))
            top_negative = ops.sum(top.ifelse(weight * (1 - y), 0.0))
            u = SC.grid_top_ties(ops, u, top_positive, top_negative)
        rank = SC.RankStats(
            n_positive=n_positive,
            n_negative=total(1 - y),
            u=u,
            rows=n_rows,
        )
        if item.name == "binned_auc":
            return build(ops, SC.GridStats(at=lambda _t: rank), **params)
        return build(ops, rank, **params)
    if item.name == "area_under_pr":
        above = c["all_ge"] - c["all_eq"]
        previous = (above > 0).ifelse((c["pos_ge"] - c["pos_eq"]) / above, precision)
        term = SC.pr_trapezoid(ops, pos, precision, previous)
    else:
        term = (pos > 0).ifelse(pos * precision, null())
    ap = SC.PrecisionStats(n=rows_known, n_positive=n_positive, precision_sum=ops.sum(term))
    if item.name == "binned_average_precision_score":
        return build(ops, SC.GridStats(at=lambda _t: ap), **params)
    return build(ops, ap, **params)
