"""``ms.evaluate`` of the agreement measures in bounded memory: cells per category or column.

As one Spark Column, ``fleiss_kappa`` and Cochran's Q collect the group's
(category, weight) or (column, outcome) cells to sum them per category or column
(:mod:`mlsql.spark.families.agreement`). ``evaluate`` knows the whole query, so
it sums them with a ``groupBy`` instead: each known row's ratings (or outcomes)
are exploded, one row per rating, and grouped by (by..., category) for
``fleiss_kappa`` or (by..., column) for Cochran's Q, each cell carrying its
total T_j (C_j) and the row terms of the rows it holds first (their weight,
Σ_j n_ij² or R_i and R_i², raters); a second ``groupBy`` by the groups sums the
cells and squares the totals, and the registry formula runs on the sums.
Memory grows with groups x categories (columns), never with rows. The sums
are the Column's, added in another order: the values agree to rounding
(within 1e-12).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from mlsql._evaluate import front as EV
from mlsql.measures import agreement as AG
from mlsql.spark._build import expression
from mlsql.spark.families import _classification as K
from mlsql.spark.families.agreement import _row_squares

_ROLES = EV.ROLES
_WEIGHT = EV.WEIGHT
#: the measures ``evaluate`` runs over cells per category or column
AGREEMENT = ("fleiss_kappa", "cochrans_q_statistic", "cochrans_q_p_value")


def key(item: EV.Item) -> str | None:
    """The cells ``item`` runs over (its input: ``ratings`` or ``correct``), None for a measure
    not run so; the measures of one key share a query.

    Examples
    --------
    >>> asked = ["cochrans_q_statistic", "cochrans_q_p_value"]
    >>> [key(i) for i in EV.request(["c"], "c", None, asked, None, None).items]
    ['correct', 'correct']
    """
    return item.measure.inputs[0] if item.name in AGREEMENT else None


def values(
    rows: DataFrame,
    groups: list[str],
    chosen: Sequence[tuple[int, EV.Item]],
    weighted_rows: bool,
    functions: Mapping[str, Callable[..., Column]] | None = None,
) -> DataFrame:
    """The measures ``chosen`` (all of one :func:`key`) per group, column ``__mlsql_v{i}``
    each, over cells per category (ratings) or column (outcomes); the registry formulas run
    on the cells' sums (``functions``, the engine's, are not needed)."""
    first = chosen[0][1]
    x = F.col(_ROLES[first.roles[0]])
    ratings = first.measure.inputs == ("ratings",)
    w = F.col(_WEIGHT) if weighted_rows else F.lit(1.0)
    if ratings:
        known = x.isNotNull()
        elements = F.filter(x, lambda e: e.isNotNull())
        message = AG.RATERS_MESSAGE
        terms = {"t1": _row_squares(elements) * w}
    else:
        known = x.isNotNull() & F.forall(x, lambda e: e.isNotNull())
        elements = F.transform(x, lambda e: K.binary_flag(first.name, e).cast("double"))
        message = AG.MODELS_MESSAGE
        successes = F.aggregate(elements, F.lit(0.0), lambda acc, e: acc + e)
        terms = {"t1": successes * w, "t2": successes * successes * w}
    if weighted_rows:
        known = known & F.col(_WEIGHT).isNotNull()
    exploded = rows.select(
        *groups,
        known.alias("__mlsql_known"),
        w.cast("double").alias(_WEIGHT),
        F.when(known, F.size(elements)).alias("__mlsql_size"),
        *(F.when(known, t).alias(f"__mlsql_{k}") for k, t in terms.items()),
        F.posexplode_outer(F.when(known, elements)).alias("__mlsql_j", "__mlsql_e"),
    )
    # a row's own terms count once, in its first cell (an empty row has one cell, j NULL)
    head = F.col("__mlsql_j").isNull() | (F.col("__mlsql_j") == 0)
    own = F.col("__mlsql_known") & head
    e, one = F.col("__mlsql_e"), F.col(_WEIGHT)
    # categories equal as text where equal, as the Column compares them; a column by position
    cell = e.cast("string") if ratings else F.col("__mlsql_j")
    total = one if ratings else e * one
    n = F.sum(F.when(own, one)) if weighted_rows else F.count(F.when(own, 1))
    cells = exploded.groupBy(*groups, cell.alias("__mlsql_c")).agg(
        F.sum(F.when(e.isNotNull(), total)).alias("__mlsql_total"),
        n.alias("__mlsql_n"),
        F.count(F.when(own, 1)).alias("__mlsql_rows"),
        F.min(F.when(head, F.col("__mlsql_size"))).alias("__mlsql_lo"),
        F.max(F.when(head, F.col("__mlsql_size"))).alias("__mlsql_hi"),
        *(F.sum(F.when(own, F.col(f"__mlsql_{k}"))).alias(f"__mlsql_{k}") for k in terms),
    )
    low, high = F.min("__mlsql_lo"), F.max("__mlsql_hi")
    bad = F.raise_error(F.lit(message.format(func=first.name)))
    per_row = F.when((low != high) | (low < 2), bad).otherwise(low).cast("double")
    t = F.col("__mlsql_total")
    squares = F.coalesce(F.sum(t * t), F.lit(0.0))
    n_all, rows_all = F.sum("__mlsql_n").cast("double"), F.sum("__mlsql_rows")
    stats: AG.RatingStats | AG.OutcomeStats
    if ratings:
        stats = AG.RatingStats(
            n=n_all,
            raters=per_row,
            squares=F.sum("__mlsql_t1"),
            total_squares=squares,
            rows=rows_all,
        )
    else:
        stats = AG.OutcomeStats(
            n=n_all,
            k=per_row,
            total=F.sum("__mlsql_t1"),
            row_squares=F.sum("__mlsql_t2"),
            column_squares=squares,
            rows=rows_all,
        )
    out: list[Column] = [
        expression(item.name, stats, **item.params).alias(f"__mlsql_v{i}") for i, item in chosen
    ]
    return cells.groupBy(*groups).agg(*out) if groups else cells.agg(*out)
