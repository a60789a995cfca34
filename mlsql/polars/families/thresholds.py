"""Calibration bins and per-label thresholds in Polars: tables over a frame.

``calibration_table`` is one ``group_by`` of (groups, bin) over the known rows;
the bin is the registry's ``calibration_bin``, as ``expected_calibration_error``
computes it. With ``strategy='quantile'`` a ``group_by`` of the groups first
sorts each group's probabilities, reads its edges (the registry's numpy
percentile) and gives each row its bin (``search_sorted`` among the inner
edges), the rows exploded back for the ``group_by`` of (groups, bin). ``label_thresholds`` reads the source once: each known row's
cells are its scored labels (a label's first entry) at their score (or bin) and
its true labels without a score at key NULL, one explode of the row's lists
(the cells of :func:`mlsql.polars.families.curves.label_cells`). They are
counted per (groups, label, key) (``group_by``), the only state that grows
(the scores' checks, finite and with ``n_bins`` in [0, 1], are made on those
counts, as in the curves). From the counts alone, sorted per label from the
highest key down (NULL last), ``cum_sum`` gives each score's tp and fp and the
label's sum its support (a NULL key counts there and is never a threshold),
and one ``group_by`` per label keeps its best row (highest F-beta, then
highest threshold). A label true but never scored keeps its NULL-key row (tp and fp
0: threshold +inf, per the registry's ``chosen``). With ``sample_weight`` the
counts are sums of the rows' weights (a row weighing 0 is dropped). Lazy all
the way: a LazyFrame source gives a LazyFrame.

Examples
--------
>>> import polars as pl
>>> import mlsql.polars as mp
>>> df = pl.DataFrame({"actual": [1, 0, 1], "prob": [0.9, 0.8, 0.2]})
>>> mp.calibration_table(df, "actual", "prob", n_bins=2).rows()
[(0, 0.0, 0.5, 1, 0.2, 1.0), (1, 0.5, 1.0, 2, 0.8500000000000001, 0.5)]
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import polars as pl

from mlsql._formulas import Counts
from mlsql._front.build import formula
from mlsql._front.table_functions import TableCall, table_function
from mlsql._front.tables import check_by_names, check_columns
from mlsql.measures import scores as SC
from mlsql.measures import thresholds as TH
from mlsql.polars._checks import collecting, refuse, refused_columns
from mlsql.polars._engine import POLARS
from mlsql.polars._weights import weighed_and_known, weight
from mlsql.polars.families import _classification as K
from mlsql.polars.families import curves as CV
from mlsql.polars.families.scores import probability
from mlsql.polars.ops import PolarsOps

FAMILIES = (TH.FAMILY,)
OPS = K.OPS
Frame = K.Frame
LABEL = CV.LABEL
POS, NEG = CV._inner("pos"), CV._inner("neg")


class _GroupOps(PolarsOps):
    """Polars ops whose sums run over a table's groups (a window), one value per row."""

    def __init__(self, groups: list[str]) -> None:
        self.groups = groups

    def sum(self, x: Any) -> Any:
        total = super().sum(x)
        return total.over(self.groups) if self.groups else total


def _frame(
    source: Frame,
    func: str,
    named: dict[str, str],
    by: Any,
    outputs: Sequence[str],
    sample_weight: str | None,
) -> Any:
    """(lazy frame, schema, group names, weight) with every named column and the
    ``sample_weight`` column checked; the weight is each row's, checked (a row weighing 0
    or NULL is dropped), or 1 (an Int64)."""
    if sample_weight is not None:
        named = {**named, "sample_weight": sample_weight}
    groups = K.by_columns(by, func)
    lf = source.lazy()
    schema = lf.collect_schema()
    check_columns(func, schema.names(), [*named.items(), *(("by", g) for g in groups)])
    check_by_names(func, groups, outputs)
    w = (
        pl.lit(1, pl.Int64)
        if sample_weight is None
        else weight(func, pl.col(sample_weight), schema[sample_weight])
    )
    return lf, schema, groups, w


def _quantile_bins(rows: Any, groups: list[str], nb: int) -> tuple[Any, pl.Expr]:
    """(the rows that count, each with its group's edges ``__mlsql_e``, and its bin): one
    ``group_by`` holding each group's rows, its probabilities sorted once and read at the
    registry's numpy percentile positions, each row's bin ``search_sorted`` among the inner
    edges (side 'left', scikit-learn's)."""
    # a NULL after the sorted values: the positions (below n) read the same values, and over
    # no rows (a group_by without keys has one group then) position -1 reads it, in bounds
    v = pl.col("__mlsql_p").sort().append(pl.lit(None, pl.Float64))
    n = pl.len().cast(pl.Int64)
    level = pl.lit(pl.Series(TH.quantile_levels(nb), dtype=pl.Float64))
    lower, upper, t = TH.quantile_index(OPS, n, level)
    edges = TH.quantile_edge(OPS, v.gather(lower.cast(pl.Int64)), v.gather(upper.cast(pl.Int64)), t)
    inner = edges.slice(1, nb - 1)
    per_group = rows.group_by(*groups).agg(
        edges.alias("__mlsql_e"),
        inner.search_sorted(pl.col("__mlsql_p"), side="left").alias("bin"),
        pl.all().exclude("bin", "__mlsql_e"),
    )
    kept = [c for c in rows.collect_schema().names() if c not in groups]
    exploded = per_group.explode("bin", *kept)
    return exploded, pl.col("bin")


def _calibration_table(source: Frame, call: TableCall) -> Frame:
    func, named, sample_weight = call.func, call.columns, call.sample_weight
    actual, prob = named["actual"], named["prob"]
    nb, quantile = call.params["n_bins"], call.params["strategy"] == "quantile"
    lf, schema, groups, w = _frame(
        source, func, named, call.by, TH.CALIBRATION_COLUMNS, sample_weight
    )
    a = pl.col(actual)
    y = K.binary_flag(func, "actual", a, schema[actual])
    # the probability's checks deferred to the bins (as the thresholds' to their counts): an
    # elementwise check on the streaming engine named whichever bad row its batch held first,
    # the bins' first offending values name the table's below 0 first, then above 1
    with collecting() as pending:
        p = K.number(
            func, "prob", pl.when(a.is_not_null()).then(pl.col(prob)), schema[prob], finite=True
        )
        p = probability(func, "prob", p)
    refused = refused_columns(pending, "__mlsql_refused")
    rows = lf.select(
        *groups,
        y.alias("__mlsql_y"),
        p.alias("__mlsql_p"),
        w.alias("__mlsql_w"),
        *(c.offending.alias(name) for name, c in refused.items() if c.offending is not None),
    )
    rows = rows.filter(
        weighed_and_known(
            pl.col("__mlsql_w"),
            pl.col("__mlsql_y").is_not_null(),
            pl.col("__mlsql_p").is_not_null(),
        )
    )
    # the bin as a float until the checks passed (a NaN's bin is no integer)
    b = SC.calibration_bin(OPS, pl.col("__mlsql_p"), nb).alias("bin")
    if quantile:
        rows, b = _quantile_bins(rows, groups, nb)
    weights = pl.col("__mlsql_w")
    counted = rows.group_by(*groups, b).agg(
        weights.sum().alias("__mlsql_n"),
        (pl.col("__mlsql_p") * weights).sum().alias("__mlsql_s"),
        (pl.col("__mlsql_y").cast(pl.Int64) * weights).sum().alias("__mlsql_pos"),
        *(pl.col(name).first(ignore_nulls=True) for name in refused),
        *([pl.col("__mlsql_e").first()] if quantile else []),
    )
    bins = refuse(counted, refused, "__mlsql_n").with_columns(pl.col("bin").cast(pl.Int64))
    n = pl.col("__mlsql_n")
    row = TH.CalibrationBin(pl.col("bin"), n, pl.col("__mlsql_s"), pl.col("__mlsql_pos"))
    values = formula("calibration_table")(OPS, row, n_bins=nb)
    if quantile:
        edges = pl.col("__mlsql_e")
        values["low"] = edges.list.get(pl.col("bin"))
        values["high"] = edges.list.get(pl.col("bin") + 1)
    out = bins.select(*groups, "bin", **values).sort(*groups, "bin", nulls_last=True)
    return K.finish(out, source)


calibration_table = table_function(POLARS, "calibration_table", _calibration_table)


def _label_thresholds(source: Frame, call: TableCall) -> Frame:
    func, named, sample_weight = call.func, call.columns, call.sample_weight
    actual, scores = named["actual"], named["scores"]
    b, zd, nb = (call.params[k] for k in ("beta", "zero_division", "n_bins"))
    lf, schema, groups, w = _frame(
        source, func, named, call.by, TH.THRESHOLD_COLUMNS, sample_weight
    )
    # the counts' type: Int64 unweighted, Float64 weighted
    kind: pl.DataType = pl.Int64() if sample_weight is None else pl.Float64()

    def bin_of(s: pl.Expr) -> pl.Expr:
        return SC.calibration_bin(OPS, probability(func, "scores", s), nb).cast(pl.Float64)

    # each scored label's cell at its score (or bin), each unscored true label's at NULL
    cells, refused = CV.label_cells(
        func,
        lf,
        schema,
        actual,
        scores,
        groups,
        w,
        names=("actual", "scores"),
        key=None if nb is None else bin_of,
        unscored_at=None,
        row_cell=False,
    )
    labels = [*groups, LABEL]
    y, weights = pl.col(CV.Y), pl.col(CV.W)
    counted = CV.count(
        cells,
        refused,
        [*labels, CV.S],
        (y * weights).sum().alias(POS),
        ((1 - y) * weights).sum().alias(NEG),
    )
    label_type = counted.collect_schema()[LABEL]
    if label_type.is_integer():
        counted = counted.with_columns(pl.col(LABEL).cast(pl.Int64))
    # per label, from its counts alone (by descending score, its unscored cells last): the
    # candidates' cumulative tp and fp, its support (the positives, scored or not), and the
    # best candidate (highest F-beta, then highest score)
    key, scored = pl.col(CV.S), pl.col(CV.S).is_not_null()
    cumulative = counted.sort(
        [*labels, CV.S], descending=[*(False for _ in labels), True], nulls_last=True
    ).select(
        *labels,
        CV.S,
        # a label never scored has one row, its unscored cell: tp and fp 0, its threshold
        # per TH.chosen
        pl.when(scored).then(pl.col(POS).cum_sum().over(labels)).otherwise(0).alias("tp"),
        pl.when(scored).then(pl.col(NEG).cum_sum().over(labels)).otherwise(0).alias("fp"),
        pl.col(POS).sum().over(labels).alias("support"),
    )
    tp, fp, n = pl.col("tp"), pl.col("fp"), pl.col("support")
    rank = pl.when(scored).then(TH.selection_fbeta(OPS, Counts(tp, fp, n - tp), b))
    both = cumulative.group_by(*labels).agg(
        pl.col(CV.S, "tp", "fp", "support")
        .sort_by([rank, key], descending=[True, True], nulls_last=True)
        .first()
    )
    k = key if nb is None else key / nb
    counts, threshold = TH.chosen(OPS, tp, fp, n, k)
    chosen = both.select(
        *groups,
        pl.col(LABEL).alias("label"),
        threshold.alias("threshold"),
        counts.tp.cast(kind).alias("tp"),
        counts.fp.cast(kind).alias("fp"),
        counts.fn.cast(kind).alias("fn"),
        n.cast(kind),
    )
    c = Counts(pl.col("tp"), pl.col("fp"), pl.col("fn"))
    values = formula("label_thresholds")(OPS, c, beta=b, zero_division=zd)
    micro = TH.micro_fbeta(_GroupOps(groups), c, b, zd)
    out = chosen.with_columns(**values, micro_fbeta=micro).sort(*groups, "label", nulls_last=True)
    return K.finish(out, source)


label_thresholds = table_function(POLARS, "label_thresholds", _label_thresholds)


for _fn in (calibration_table, label_thresholds):
    _fn.__doc__ = inspect.cleandoc(_fn.__doc__ or "")  # its Examples found as written

__all__ = ["calibration_table", "label_thresholds"]
