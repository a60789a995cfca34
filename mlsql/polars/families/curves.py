"""Precision-recall and ROC curves in Polars: tables over a frame.

The known rows become cells: (y, s) per row for a numeric score, or (label,
y, s) per scored label (the score map's entries, a label's first entry kept),
per true label without a score (at -inf) and one cell of no label per row (it
counts the group's known rows) for a score map: one scan and one explode of
each row's lists of labels and scores. They are counted per (group, label,
distinct score) (``group_by``), the only state that grows; over a score map
the scores' checks (finite) are made on those counts, each cell carrying its
offending value or NULL (:func:`mlsql.polars._checks.refuse`), not by a Python
call on every batch of cells. For a numeric score
the counts are sorted by score from the highest and ``cum_sum`` over the group
gives the cumulative tp and fp of every threshold, after a row of threshold
+inf per group. For a score map one more ``group_by`` per (group, label) takes
its counts by descending score as lists with their cumulative sums, starts
them at +inf and ends them with the rows that neither score nor hold the
label, its negatives at -inf; the lists are exploded back into points. The
columns are the registry's formulas (:func:`mlsql.measures.curves.values`).
With ``sample_weight`` every cell carries its row's weight (a row weighing 0
is dropped) and the counts are sums of weights. Lazy in, lazy out.

Examples
--------
>>> import polars as pl
>>> import mlsql.polars as mp
>>> df = pl.DataFrame({"y": [1, 0, 1], "s": [0.9, 0.4, 0.4]})
>>> mp.roc_curve(df, "y", "s").rows()
[(inf, 0.0, 0.0), (0.9, 0.0, 0.5), (0.4, 1.0, 1.0)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from mlsql._front.build import formula
from mlsql._front.table_functions import TableCall, table_function
from mlsql._front.tables import curve_groups
from mlsql.measures import curves as CV
from mlsql.polars._checks import Pending, collecting, refuse, refused_columns
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


def label_cells(
    func: str,
    lf: pl.LazyFrame,
    schema: Any,
    actual: str,
    score: str,
    groups: list[str],
    w: pl.Expr,
    *,
    names: tuple[str, str] = ("actual", "score"),
    key: Callable[[pl.Expr], pl.Expr] | None = None,
    unscored_at: float | None = float("-inf"),
    row_cell: bool = True,
) -> tuple[pl.LazyFrame, dict[str, Pending]]:
    """The cells (label, y, s, w) of the known rows, from one scan and one explode per row:
    its scored labels (a label's first entry), its true labels that are not scored (s at
    ``unscored_at``, NULL if None) and, with ``row_cell``, one cell of no label (label and s
    NULL) that counts the row in its group. ``s`` is the finite score (checked, as the
    ``names[1]`` input), through ``key`` if given (e.g. its bin); its checks are deferred:
    the columns of the dict returned, for :func:`count`. Text labels are Categorical in the
    cells, String again in the counts of :func:`count`. The thresholds'
    (:mod:`mlsql.polars.families.thresholds`) cells too."""
    a, entries = RK._scores_check(
        func,
        names,
        [(pl.col(actual), schema[actual]), (pl.col(score), schema[score])],
    )
    label, value = pl.element().struct.field("label"), pl.element().struct.field("score")
    # a label's first entry if it holds a score, per row (a list operation: no hash over
    # all the cells). ``is_first_distinct`` in ``list.eval`` runs row by row (about as
    # costly as the scan), so it runs only on the rows whose labels repeat, the others
    # keeping their entries by an elementwise filter
    e = pl.col(_inner("e"))
    held = label.is_not_null() & value.is_not_null()
    labels = e.list.eval(label)
    repeats = labels.list.n_unique() < labels.list.len()
    first = (
        pl.when(repeats).then(e).list.eval(pl.element().filter(label.is_first_distinct() & held))
    )
    rows = (
        lf.select(
            *(pl.col(g) for g in groups),
            a.alias(_inner("a")),
            entries.alias(_inner("e")),
            w.alias(W),
        )
        .with_columns(pl.coalesce(first, e.list.eval(pl.element().filter(held))).alias(_inner("e")))
        .filter(
            weighed_and_known(
                pl.col(W), pl.col(_inner("a")).is_not_null(), pl.col(_inner("e")).is_not_null()
            )
        )
    )
    entries_type: Any = rows.collect_schema()[_inner("e")]  # list[struct(label, score)]
    label_type = entries_type.inner.to_schema()["label"]
    scored = rows.select(
        *groups,
        _inner("a"),
        W,
        pl.col(_inner("e")).list.eval(label).alias(LABEL),
        pl.col(_inner("e")).list.eval(value).alias(S),
    )
    # a row's true labels without a scored first entry (a set difference: distinct labels)
    unscored = _inner("u")
    none, nan = pl.lit(None, pl.Float64), pl.lit(float("nan"), pl.Float64)
    label_col = pl.col(LABEL)
    # the score's checks deferred to the counts (a per-batch Python check of every cell took
    # memory growing with the rows): each a column of its offending value, see _count
    with collecting() as pending:
        s = K.number(
            func,
            names[1],
            pl.when(label_col.is_not_null()).then(pl.col(S)),
            pl.Float64(),
            finite=True,
        )
        s = s + 0.0  # -0.0 and 0.0 are one threshold
        if key is not None:
            s = key(s)
    refused = refused_columns(pending, _inner("refused"))
    if unscored_at is not None:
        s = s.fill_null(unscored_at)  # an unscored true label's
    # lists of primitives (concat_list of struct lists is several times slower): the
    # unscored true labels at score NULL, then (``row_cell``) the row's own cell (no label, NaN)
    own = [pl.lit(None, label_type)] if row_cell else []
    own_s = [nan] if row_cell else []
    cells = scored.with_columns(
        pl.col(_inner("a")).list.set_difference(LABEL).cast(pl.List(label_type)).alias(unscored)
    )
    a, labels = pl.col(_inner("a")), pl.concat_list(LABEL, unscored, *own)
    if label_type == pl.String:
        # text labels as categories: the cells carry each row's true labels (for y), copied
        # onto every cell by the explode; as integers that takes less memory
        cat = pl.List(pl.Categorical())
        a, labels = a.cast(cat), labels.cast(cat)
    return (
        cells.select(
            *groups,
            a,
            W,
            labels.alias(LABEL),
            pl.concat_list(S, none.repeat_by(pl.col(unscored).list.len()), *own_s).alias(S),
        )
        .explode(LABEL, S)
        # a NULL true label is no cell
        .filter(
            label_col.is_not_null() | pl.col(S).is_nan() if row_cell else label_col.is_not_null()
        )
        .select(
            *groups,
            LABEL,
            pl.col(_inner("a")).list.contains(label_col).cast(pl.Int64).alias(Y),
            pl.when(label_col.is_not_null()).then(s).alias(S),
            W,
            *(p.offending.alias(c) for c, p in refused.items() if p.offending is not None),
        )
    ), refused


def count(
    cells: pl.LazyFrame, refused: dict[str, Pending], keys: list[str], *aggs: pl.Expr
) -> pl.LazyFrame:
    """``aggs`` of the cells per ``keys``, after the cells' deferred checks (``refused``,
    from :func:`label_cells`): one Python call per batch of the counts, never per cell."""
    firsts = [pl.col(c).first(ignore_nulls=True) for c in refused]
    counted = refuse(cells.group_by(*keys).agg(*aggs, *firsts), refused, keys[-1])
    if cells.collect_schema().get(LABEL) == pl.Categorical:  # text labels, see label_cells
        counted = counted.with_columns(pl.col(LABEL).cast(pl.String))
    return counted


def _counted(
    cells: pl.LazyFrame, keys: list[str], refused: dict[str, Pending] | None = None
) -> pl.LazyFrame:
    """The cells per (keys, distinct score): the weight of the positives, of all, their number."""
    return count(
        cells,
        refused or {},
        [*keys, S],
        (pl.col(Y) * pl.col(W)).sum().alias(HITS),
        pl.col(W).sum().alias(N),
        pl.len().cast(pl.Int64).alias(M),
    )


def _label_points(counted: pl.LazyFrame, groups: list[str], zero: pl.Expr) -> pl.LazyFrame:
    """The points (keys, s, tp, fp, pos, neg) of every label, from its counted cells alone.

    One ``group_by`` per (group, label) takes the cells by descending score as lists with
    their cumulative sums; the cell of no label gives the group's known rows, those that
    neither score nor hold a label are its negatives at -inf (a point added at the end of the
    lists where no true label is unscored), and the point of +inf starts the lists.
    """
    keys = [*groups, LABEL]
    hits, n, label = pl.col(HITS), pl.col(N), pl.col(LABEL)

    def rows_of(e: pl.Expr) -> pl.Expr:
        total = e.filter(label.is_null()).sum()
        return total.over(groups) if groups else total

    by_score = counted.group_by(*keys).agg(
        pl.col(S).sort(descending=True),
        hits.sort_by(S, descending=True).cum_sum().alias(TP),
        (n - hits).sort_by(S, descending=True).cum_sum().alias(FP),
        hits.sum().alias(POS),
        (n - hits).sum().alias(NEG),
        n.sum().alias(_inner("rows")),
        pl.col(M).sum().alias(_inner("count")),
    )
    negatives = rows_of(pl.col(_inner("rows"))) - pl.col(_inner("rows"))
    neg_count = rows_of(pl.col(_inner("count"))) - pl.col(_inner("count"))
    extra = (
        by_score.with_columns(
            negatives.alias(_inner("unscored")), neg_count.alias(_inner("unscored_count"))
        )
        .filter(label.is_not_null())
        .with_columns(
            # the -inf point the negatives need where no unscored true label made one
            ((pl.col(_inner("unscored_count")) > 0) & (pl.col(S).list.last() > float("-inf")))
            .cast(pl.UInt32)
            .alias(_inner("add"))
        )
    )
    add = pl.col(_inner("add"))
    lists = extra.select(
        *keys,
        pl.concat_list(
            pl.lit(float("inf"), pl.Float64), S, pl.lit(float("-inf"), pl.Float64).repeat_by(add)
        ).alias(S),
        pl.concat_list(zero, TP, pl.col(POS).repeat_by(add)).alias(TP),
        pl.concat_list(zero, FP, pl.col(NEG).repeat_by(add)).alias(FP),
        POS,
        (pl.col(NEG) + pl.col(_inner("unscored"))).alias(NEG),
        _inner("unscored"),
    )
    at_minus_inf = (
        pl.when(pl.col(S) == float("-inf")).then(pl.col(_inner("unscored"))).otherwise(zero)
    )
    return lists.explode(S, TP, FP).select(
        *keys, S, TP, (pl.col(FP) + at_minus_inf).alias(FP), POS, NEG
    )


def _kept(func: str, keys: list[str], dropping: bool) -> pl.Expr:
    """Whether a point of the table sorted by keys and descending threshold stays in curve
    ``func`` (``dropping``: :func:`mlsql.measures.curves.dropped_point_kept` under
    ``drop_intermediate``; else :func:`mlsql.measures.curves.det_point_kept`): its neighbours
    within its group and label, (+inf, -1, -1) before the first and (-inf, -1, -1) after
    the last."""

    def over(e: pl.Expr) -> pl.Expr:
        return e.over(keys) if keys else e

    def near(name: str, by: int, fill: float) -> pl.Expr:
        return over(pl.col(name).shift(by, fill_value=fill))

    neighbours = (
        CV.CurvePoint(near(S, 1, float("inf")), near(FP, 1, -1), near(TP, 1, -1)),
        CV.CurvePoint(pl.col(S), pl.col(FP), pl.col(TP)),
        CV.CurvePoint(near(S, -1, float("-inf")), near(FP, -1, -1), near(TP, -1, -1)),
    )
    if dropping:
        return CV.dropped_point_kept(func, *neighbours)
    return CV.det_point_kept(*neighbours, over(pl.col(TP).max()))


def _curve(source: Frame, call: TableCall) -> Frame:
    func, by, sample_weight = call.func, call.by, call.sample_weight
    actual, score = call.columns.values()
    zd, drop_intermediate = CV.curve_params(call.params)
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

    if per_label:
        cells, refused = label_cells(func, lf, schema, actual, score, groups, w)
        points = _label_points(_counted(cells, keys, refused), groups, zero)
    else:
        steps = _counted(_binary_cells(func, lf, schema, actual, score, groups, w), keys)

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
    values = formula(func)(K.OPS, stats, zero_division=zd)
    shown = [*groups, pl.col(LABEL).alias("label")] if per_label else groups
    ordered = points.sort([*keys, S], descending=[*(False for _ in keys), True], nulls_last=True)
    if drop_intermediate:
        ordered = ordered.filter(_kept(func, keys, True))
    if func == "det_curve":  # trimmed after the drop, as scikit-learn does
        ordered = ordered.filter(_kept(func, keys, False))
    elif func in CV.COUNTS:
        ordered = ordered.filter(CV.counts_point_kept(CV.CurvePoint(pl.col(S), None, None)))
    out = ordered.select(
        *shown,
        pl.col(S).alias("threshold"),
        *(e.cast(pl.Float64).alias(c) for c, e in values.items()),
    )
    return K.finish(out, source)


precision_recall_curve = table_function(POLARS, "precision_recall_curve", _curve)


roc_curve = table_function(POLARS, "roc_curve", _curve)


det_curve = table_function(POLARS, "det_curve", _curve)


confusion_matrix_at_thresholds = table_function(POLARS, "confusion_matrix_at_thresholds", _curve)


__all__ = ["confusion_matrix_at_thresholds", "det_curve", "precision_recall_curve", "roc_curve"]
