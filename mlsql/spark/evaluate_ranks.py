"""``ms.evaluate`` of AUC and average precision in bounded memory: runs of equal scores, sorted.

As one Spark Column, ``auc``, ``average_precision_score`` and ``area_under_pr``
collect the group's (score, label) pairs into an array and sort it
(:mod:`mlsql.spark.families.scores`): a group's rows, or its distinct
(label, score) cells, held by one task. ``evaluate`` knows the whole query, so
it runs the same statistics as a sort in Spark's shuffle instead:

1. the rows become runs: one row per group and distinct score, with its
   positives, negatives and known rows (``groupBy(by..., score)``; the weights'
   sums exact, :func:`mlsql.spark.ops.exact_sum`). The rows where the label or
   the score is NULL become one run with none of either, so a group of no
   known row keeps its row (and its NULL value);
2. a window over each group's runs sorted by score gives each run the sums
   before it: the negatives scored lower (``auc``: the run's positives add
   2 x lower + the run's negatives to 2U), the rows and positives scored at
   least as high (``average_precision_score``: the run's positives x
   P(>= s) / N(>= s)), and the precision of the run before
   (``area_under_pr``: :func:`mlsql.measures.scores.pr_trapezoid`);
3. the runs' terms summed per group, then the registry formulas
   (:class:`~mlsql.measures.scores.RankStats`,
   :class:`~mlsql.measures.scores.PrecisionStats`).

Spark's window buffers a group's runs in a spillable buffer
(``spark.sql.windowExec.buffer.spill.threshold`` rows in memory, then disk), so
memory is bounded whatever the rows; a group's runs pass through one task, as
a sort's partition does. Without ``by``, all runs are one window partition.
The terms are the Column's, added in the same order (by score): the values
agree to rounding (within 1e-12).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from mlsql._evaluate import front as EV
from mlsql._front.build import checked_params
from mlsql.measures import scores as SC
from mlsql.spark._build import OPS
from mlsql.spark.families.scores import _label_score
from mlsql.spark.ops import exact_sum

#: the measures run over sorted runs (the same statistics as their Columns)
RANKED = ("auc", "hivemall_auc", "average_precision_score", "area_under_pr")
#: each run's columns: its score, positives, negatives, rows (weights, and known rows)
SCORE, POS, NEG, WEIGHT, ROWS = "__mlsql_pr", "__mlsql_rp", "__mlsql_rn", "__mlsql_rw", "__mlsql_rr"


def key(item: EV.Item) -> tuple[str, str] | None:
    """The columns of ``evaluate``'s rows holding ``item``'s label and score, for a measure run
    over sorted runs (the measures of one key share a query); None for another measure.

    Examples
    --------
    >>> [key(i) for i in EV.request(["a", "p"], "a", "p", ["auc", "mse"], None, None).items]
    [('__mlsql_a', '__mlsql_p'), None]
    """
    if item.name not in RANKED:
        return None
    label, score = SC.label_and_score(item.measure)
    return EV.ROLES[item.roles[item.measure.inputs.index(label)]], EV.ROLES[
        item.roles[item.measure.inputs.index(score)]
    ]


def runs(rows: DataFrame, groups: list[str], item: EV.Item, weighted: bool) -> DataFrame:
    """One row per group and distinct known score: the groups, :data:`SCORE`, and the run's
    positives :data:`POS`, negatives :data:`NEG`, weight :data:`WEIGHT` and known rows
    :data:`ROWS` (the unknown rows: one run of score NULL and none of either).

    The label and score are checked as ``item``'s Column checks them (0/1 labels, finite
    scores: the measure's messages).
    """
    label, score = key(item)  # type: ignore[misc]
    inputs = {label: F.col(label), score: F.col(score)}
    y, s, known = _label_score(item.measure, [inputs[EV.ROLES[r]] for r in item.roles])
    if weighted:
        known = known & F.col(EV.WEIGHT).isNotNull()
    w = F.col(EV.WEIGHT) if weighted else F.lit(1)
    y = F.when(known, y)
    total: Callable[[Column], Column] = exact_sum if weighted else F.sum
    return rows.groupBy(*groups, F.when(known, s + 0.0).alias(SCORE)).agg(
        F.coalesce(total(y * w), F.lit(0)).alias(POS),
        F.coalesce(total((1 - y) * w), F.lit(0)).alias(NEG),
        F.coalesce(total(F.when(known, w)), F.lit(0)).alias(WEIGHT),
        F.count(y).alias(ROWS),
    )


def values(
    rows: DataFrame,
    groups: list[str],
    chosen: Sequence[tuple[int, EV.Item]],
    weighted: bool,
) -> DataFrame:
    """One row per group: the group columns and each measure ``(i, item)`` of ``chosen`` (all
    of one :func:`key`) as ``__mlsql_v{i}``.

    ``rows`` hold the roles' columns (:data:`mlsql._evaluate.front.ROLES`), the groups and,
    when ``weighted``, the checked weight (:data:`mlsql._evaluate.front.WEIGHT`).
    """
    counted = runs(rows, groups, chosen[0][1], weighted)
    pos, neg, w = F.col(POS), F.col(NEG), F.col(WEIGHT)
    part = Window.partitionBy(*groups) if groups else Window
    # lower scores first (NULL, the unknown rows' run, before all: it adds nothing)
    below = F.sum(neg).over(part.orderBy(F.col(SCORE).asc_nulls_first()).rowsBetween(
        Window.unboundedPreceding, -1
    ))  # fmt: skip
    # higher scores first, the run itself counted
    down = part.orderBy(F.col(SCORE).desc_nulls_last())
    seen = down.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    with_sums = counted.select(
        "*",
        F.coalesce(below, F.lit(0)).alias("__mlsql_below"),
        F.sum(w).over(seen).alias("__mlsql_n"),
        F.sum(pos).over(seen).alias("__mlsql_pos"),
    )
    n_seen, pos_seen = F.col("__mlsql_n"), F.col("__mlsql_pos")
    precision = F.when(n_seen > 0, pos_seen / n_seen)
    previous = F.last(F.when(n_seen > 0, pos_seen / n_seen), ignorenulls=True).over(
        down.rowsBetween(Window.unboundedPreceding, -1)
    )
    terms = with_sums.select(
        *groups,
        pos,
        neg,
        F.col(ROWS),
        (pos * (2 * F.col("__mlsql_below") + neg)).alias("__mlsql_u2"),
        F.when(pos > 0, pos * precision).alias("__mlsql_ap"),
        F.when(
            n_seen > 0, SC.pr_trapezoid(OPS, pos, precision, F.coalesce(previous, precision))
        ).alias("__mlsql_tr"),
    )
    n_rows = F.sum(ROWS)
    n_pos = F.sum(POS)
    rank = SC.RankStats(
        n_positive=n_pos,
        n_negative=F.sum(NEG),
        u=F.sum("__mlsql_u2") / 2,
        rows=n_rows if weighted else None,
    )
    ap = SC.PrecisionStats(n=n_rows, n_positive=n_pos, precision_sum=F.sum("__mlsql_ap"))
    trapezoid = SC.PrecisionStats(n=n_rows, n_positive=n_pos, precision_sum=F.sum("__mlsql_tr"))
    stats = {"average_precision_score": ap, "area_under_pr": trapezoid}
    out = []
    for i, item in chosen:
        params = checked_params(item.measure, item.params)
        value = item.measure.build(OPS, stats.get(item.name, rank), **params)  # type: ignore[misc]
        out.append(value.alias(f"__mlsql_v{i}"))
    return terms.groupBy(*groups).agg(*out) if groups else terms.agg(*out)
