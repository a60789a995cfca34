"""Precision-recall and ROC curves in Polars: tables over a frame.

The known rows are counted per (group, distinct score) (``group_by``), sorted
by score from the highest within each group, and ``cum_sum`` (over the groups)
gives the cumulative tp and fp of every threshold; the columns are the
registry's formulas (:func:`mlsql.measures.curves.values`), after a row of
threshold +inf per group. Lazy in, lazy out.

Examples
--------
>>> import polars as pl
>>> import mlsql.polars as mp
>>> df = pl.DataFrame({"y": [1, 0, 1], "s": [0.9, 0.4, 0.4]})
>>> mp.roc_curve(df, "y", "s").rows()
[(inf, 0.0, 0.0), (0.9, 0.0, 0.5), (0.4, 1.0, 1.0)]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from mlsql._front.docs import table
from mlsql._front.tables import curve_groups
from mlsql._params import check_zero_division
from mlsql.measures import curves as CV
from mlsql.polars._engine import POLARS
from mlsql.polars.families import _classification as K
from mlsql.polars.families import scores as SCP
from mlsql.polars.families._classification import Frame

FAMILIES = (CV.FAMILY,)  # tables only: no formula measure to generate


def _curve(func: str, source: Frame, actual: str, score: str, zero_division: Any, by: Any) -> Frame:
    zd = check_zero_division(zero_division, func)
    lf = source.lazy()
    schema = lf.collect_schema()
    groups = curve_groups(func, schema.names(), actual, score, by)
    y, s = SCP.check(
        func,
        ("actual", "score"),
        [(pl.col(actual), schema[actual]), (pl.col(score), schema[score])],
    )
    rows = lf.select(
        *(pl.col(g) for g in groups),
        y.cast(pl.Int64).alias("__mlsql_y"),
        (s + 0.0).alias("__mlsql_s"),  # -0.0 and 0.0 are one threshold
    ).filter(pl.col("__mlsql_y").is_not_null() & pl.col("__mlsql_s").is_not_null())
    hits, n = pl.col("hits"), pl.col("n")

    def within(e: pl.Expr) -> pl.Expr:
        return e.over(groups) if groups else e

    steps = (
        rows.group_by(*groups, pl.col("__mlsql_s").alias("threshold"))
        .agg(hits=pl.col("__mlsql_y").sum(), n=pl.len().cast(pl.Int64))
        .sort([*groups, "threshold"], descending=[*(False for _ in groups), True], nulls_last=True)
    )
    cumulative = steps.select(
        *groups,
        "threshold",
        tp=within(hits.cum_sum()),
        fp=within((n - hits).cum_sum()),
        pos=within(hits.sum()),
        neg=within((n - hits).sum()),
    )
    totals = (
        cumulative.group_by(*groups).agg(pl.col("pos", "neg").first())
        if groups
        else cumulative.select(pl.col("pos", "neg").first()).filter(pl.col("pos").is_not_null())
    )
    start = totals.select(
        *groups,
        pl.lit(float("inf"), pl.Float64).alias("threshold"),
        pl.lit(0, pl.Int64).alias("tp"),
        pl.lit(0, pl.Int64).alias("fp"),
        "pos",
        "neg",
    )
    points = pl.concat([start, cumulative])
    stats = CV.CurveStats(pl.col("tp"), pl.col("fp"), pl.col("pos"), pl.col("neg"))
    values = CV.values(K.OPS, func, stats, zd)
    out = points.select(
        *groups, "threshold", *(e.cast(pl.Float64).alias(c) for c, e in values.items())
    ).sort([*groups, "threshold"], descending=[*(False for _ in groups), True], nulls_last=True)
    return K.finish(out, source)


@table(
    POLARS,
    returns="""
    polars.DataFrame or polars.LazyFrame
        The ``by`` columns, then threshold, precision, recall; lazy if
        ``source`` is; ordered by group and descending threshold.
    """,
    example="""
    >>> import polars as pl
    >>> import mlsql.polars as mp
    >>> df = pl.DataFrame({"y": [1, 0, 1], "s": [0.9, 0.4, 0.4]})
    >>> mp.precision_recall_curve(df, "y", "s").rows()
    [(inf, 1.0, 0.0), (0.9, 1.0, 0.5), (0.4, 0.6666666666666666, 1.0)]
    """,
)
def precision_recall_curve(
    source: Frame,
    actual: str,
    score: str,
    *,
    zero_division: Any = 0,
    by: str | Sequence[str] | None = None,
) -> Frame:
    return _curve("precision_recall_curve", source, actual, score, zero_division, by)


@table(
    POLARS,
    returns="""
    polars.DataFrame or polars.LazyFrame
        The ``by`` columns, then threshold, fpr, tpr; lazy if ``source`` is;
        ordered by group and descending threshold.
    """,
    example="""
    >>> import polars as pl
    >>> import mlsql.polars as mp
    >>> df = pl.DataFrame({"y": [1, 0, 1], "s": [0.9, 0.4, 0.4]})
    >>> mp.roc_curve(df, "y", "s").rows()
    [(inf, 0.0, 0.0), (0.9, 0.0, 0.5), (0.4, 1.0, 1.0)]
    """,
)
def roc_curve(
    source: Frame,
    actual: str,
    score: str,
    *,
    zero_division: Any = 0,
    by: str | Sequence[str] | None = None,
) -> Frame:
    return _curve("roc_curve", source, actual, score, zero_division, by)


def example(measure: Any) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """Hivemall's AUC example: six rows, scores .8 .7 .5 .5 .3 .2 (one tie)."""
    return {"actual": [1, 1, 0, 1, 1, 0], "score": [0.8, 0.7, 0.5, 0.5, 0.3, 0.2]}, {}


__all__ = ["precision_recall_curve", "roc_curve"]
