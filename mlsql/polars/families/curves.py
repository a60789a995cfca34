"""Precision-recall and ROC curves in Polars: tables over a frame.

The known rows become cells: (y, s) per row for a numeric score, or (label,
y, s) per scored label (the score map's entries exploded, a label's first
entry kept) and per true label without a score (at -inf) for a score map.
They are counted per (group, label, distinct score) (``group_by``), the rows
that neither score nor hold a label added as its negatives at -inf, sorted by
score from the highest, and ``cum_sum`` over (group, label) gives the
cumulative tp and fp of every threshold; the columns are the registry's
formulas (:func:`mlsql.measures.curves.values`), after a row of threshold
+inf per group and label. With ``sample_weight`` every cell carries its row's
weight (a row weighing 0 is dropped) and the counts are sums of weights. Lazy
in, lazy out.

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
from mlsql.polars._weights import weighed_and_known, weight
from mlsql.polars.families import _classification as K
from mlsql.polars.families import ranking as RK
from mlsql.polars.families import scores as SCP
from mlsql.polars.families._classification import Frame

FAMILIES = (CV.FAMILY,)  # tables only: no formula measure to generate


def _inner(name: str) -> str:
    return f"__mlsql_{name}"


Y, S, W, LABEL = (_inner(n) for n in ("y", "s", "w", "label"))
HITS, N, M, TP, FP, POS, NEG = (_inner(n) for n in ("hits", "n", "m", "tp", "fp", "pos", "neg"))


def _binary_cells(
    func: str,
    lf: pl.LazyFrame,
    schema: Any,
    actual: str,
    score: str,
    groups: list[str],
    w: pl.Expr,
) -> pl.LazyFrame:
    """One cell (y, s, w) per known row: a boolean or 0/1 label, its finite score, its weight
    ``w`` (> 0)."""
    y, s = SCP.check(
        func,
        ("actual", "score"),
        [(pl.col(actual), schema[actual]), (pl.col(score), schema[score])],
    )
    return lf.select(
        *(pl.col(g) for g in groups),
        y.cast(pl.Int64).alias(Y),
        (s + 0.0).alias(S),  # -0.0 and 0.0 are one threshold
        w.alias(W),
    ).filter(weighed_and_known(pl.col(W), pl.col(Y).is_not_null(), pl.col(S).is_not_null()))


def _label_cells(
    func: str,
    lf: pl.LazyFrame,
    schema: Any,
    actual: str,
    score: str,
    groups: list[str],
    w: pl.Expr,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The cells (label, y, s, w) of the known rows' scored and true labels (a true label that
    is not scored at -inf), and the known rows per group: their weight and their number."""
    a, entries = RK._scores_check(
        func,
        ("actual", "score"),
        [(pl.col(actual), schema[actual]), (pl.col(score), schema[score])],
    )
    label, value = pl.element().struct.field("label"), pl.element().struct.field("score")
    rows = lf.select(
        *(pl.col(g) for g in groups),
        a.alias(_inner("a")),
        # a label's first entry, per row (a list operation: no hash over all the cells)
        entries.list.eval(pl.element().filter(label.is_first_distinct())).alias(_inner("e")),
        w.alias(W),
    ).filter(
        weighed_and_known(
            pl.col(W), pl.col(_inner("a")).is_not_null(), pl.col(_inner("e")).is_not_null()
        )
    )
    known_rows = rows.group_by(*groups).agg(
        pl.col(W).sum().alias(_inner("rows")), pl.len().cast(pl.Int64).alias(_inner("count"))
    )
    scored_labels = pl.col(_inner("e")).list.eval(
        pl.element().filter(value.is_not_null()).struct.field("label")
    )
    scored = (
        rows.explode(_inner("e"))
        .unnest(_inner("e"))
        .rename({"label": LABEL, "score": S})
        .filter(pl.col(LABEL).is_not_null() & pl.col(S).is_not_null())
        .select(
            *groups,
            LABEL,
            pl.col(_inner("a")).list.contains(pl.col(LABEL)).cast(pl.Int64).alias(Y),
            K.number(func, "score", pl.col(S), pl.Float64(), finite=True) + 0.0,
            W,
        )
    )
    # a row's true labels without a scored first entry, at -inf
    unscored_truth = (
        rows.select(
            *groups,
            W,
            pl.col(_inner("a")).list.unique().list.set_difference(scored_labels).alias(LABEL),
        )
        .explode(LABEL)
        .filter(pl.col(LABEL).is_not_null())
        .select(
            *groups,
            LABEL,
            pl.lit(1, pl.Int64).alias(Y),
            pl.lit(float("-inf"), pl.Float64).alias(S),
            W,
        )
    )
    return pl.concat([scored, unscored_truth]), known_rows


def _curve(
    func: str,
    source: Frame,
    actual: str,
    score: str,
    zero_division: Any,
    by: Any,
    sample_weight: str | None,
) -> Frame:
    zd = check_zero_division(zero_division, func)
    lf = source.lazy()
    schema = lf.collect_schema()
    groups = curve_groups(func, schema.names(), actual, score, by, sample_weight)
    per_label = isinstance(schema[score], (pl.Map, pl.List, pl.Array))
    keys = [*groups, LABEL] if per_label else groups
    hits, n = pl.col(HITS), pl.col(N)
    # each row's weight (checked; a row weighing 0 or NULL is dropped), or 1
    if sample_weight is None:
        w, zero = pl.lit(1, pl.Int64), pl.lit(0, pl.Int64)
    else:
        w = weight(func, pl.col(sample_weight), schema[sample_weight])
        zero = pl.lit(0.0, pl.Float64)

    def counted(cells: pl.LazyFrame) -> pl.LazyFrame:
        return (
            cells.group_by(*keys, S)
            .agg(hits=(pl.col(Y) * pl.col(W)).sum(), n=pl.col(W).sum(), m=pl.len().cast(pl.Int64))
            .rename({"hits": HITS, "n": N, "m": M})
        )

    if per_label:
        cells, known_rows = _label_cells(func, lf, schema, actual, score, groups, w)
        steps = counted(cells)
        # the rows that neither score a label nor hold it: negatives at -inf
        per_key = steps.group_by(*keys).agg(n.sum(), pl.col(M).sum())
        joined = (
            per_key.join(known_rows, on=groups, nulls_equal=True)
            if groups
            else per_key.join(known_rows, how="cross")
        )
        unscored = joined.select(
            *keys,
            pl.lit(float("-inf"), pl.Float64).alias(S),
            zero.alias(HITS),
            (pl.col(_inner("rows")) - n).alias(N),
            (pl.col(_inner("count")) - pl.col(M)).alias(M),
        ).filter(pl.col(M) > 0)
        steps = pl.concat([steps, unscored]).group_by(*keys, S).agg(pl.col(HITS, N).sum())
    else:
        steps = counted(_binary_cells(func, lf, schema, actual, score, groups, w))

    def within(e: pl.Expr) -> pl.Expr:
        return e.over(keys) if keys else e

    ordered = steps.sort([*keys, S], descending=[*(False for _ in keys), True], nulls_last=True)
    cumulative = ordered.select(
        *keys,
        S,
        within(hits.cum_sum()).alias(TP),
        within((n - hits).cum_sum()).alias(FP),
        within(hits.sum()).alias(POS),
        within((n - hits).sum()).alias(NEG),
    )
    totals = (
        cumulative.group_by(*keys).agg(pl.col(POS, NEG).first())
        if keys
        else cumulative.select(pl.col(POS, NEG).first()).filter(pl.col(POS).is_not_null())
    )
    start = totals.select(
        *keys,
        pl.lit(float("inf"), pl.Float64).alias(S),
        zero.alias(TP),
        zero.alias(FP),
        POS,
        NEG,
    )
    points = pl.concat([start, cumulative])
    stats = CV.CurveStats(pl.col(TP), pl.col(FP), pl.col(POS), pl.col(NEG))
    values = CV.values(K.OPS, func, stats, zd)
    shown = [*groups, pl.col(LABEL).alias("label")] if per_label else groups
    out = points.sort(
        [*keys, S], descending=[*(False for _ in keys), True], nulls_last=True
    ).select(
        *shown,
        pl.col(S).alias("threshold"),
        *(e.cast(pl.Float64).alias(c) for c, e in values.items()),
    )
    return K.finish(out, source)


@table(
    POLARS,
    returns="""
    polars.DataFrame or polars.LazyFrame
        The ``by`` columns, (``label`` over score maps,) then threshold,
        precision, recall; lazy if ``source`` is; ordered by group, label
        and descending threshold.
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
    sample_weight: str | None = None,
) -> Frame:
    return _curve("precision_recall_curve", source, actual, score, zero_division, by, sample_weight)


@table(
    POLARS,
    returns="""
    polars.DataFrame or polars.LazyFrame
        The ``by`` columns, (``label`` over score maps,) then threshold, fpr,
        tpr; lazy if ``source`` is; ordered by group, label and descending
        threshold.
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
    sample_weight: str | None = None,
) -> Frame:
    return _curve("roc_curve", source, actual, score, zero_division, by, sample_weight)


def example(measure: Any) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """Hivemall's AUC example: six rows, scores .8 .7 .5 .5 .3 .2 (one tie)."""
    return {"actual": [1, 1, 0, 1, 1, 0], "score": [0.8, 0.7, 0.5, 0.5, 0.3, 0.2]}, {}


__all__ = ["precision_recall_curve", "roc_curve"]
