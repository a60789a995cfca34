"""Calibration bins and per-label thresholds in Spark: tables over a DataFrame.

``calibration_table`` is one ``groupBy`` of (groups, bin) over the known rows;
the bin is the registry's ``calibration_bin``, as ``expected_calibration_error``
computes it. ``label_thresholds`` explodes each known row's scored labels
(counted per group, label and score, or bin) and its true labels (counted per
group and label, under a NULL score), unions the two, and runs one window per
(group, label) ordered by score from the highest, NULL first: cumulative sums
give each distinct score's tp and fp, the partition's sum the support, and
``row_number`` the best row (highest F-beta, then highest threshold). No join:
windows partition NULL groups together. Nothing is collected to the driver.

``calibration_table(strategy='quantile')`` collects each group's probabilities
into one sorted array (``sort_array(collect_list)``) to read its edges, joins
them back to the group's rows (null-safe) and bins each row among its group's
inner edges: memory per group of the order of its rows
(:data:`mlsql.spark.families._memory.UNBOUNDED`); the uniform bins stay counts
per bin.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._formulas import Counts
from mlsql._front.build import formula
from mlsql._front.table_functions import TableCall, table_function
from mlsql._front.tables import check_by_names, check_columns
from mlsql.measures import scores as SC
from mlsql.measures import thresholds as TH
from mlsql.spark._build import OPS
from mlsql.spark._engine import SPARK
from mlsql.spark._types import bound, to_column
from mlsql.spark._weights import weight
from mlsql.spark.families import _classification as K
from mlsql.spark.families.ranking import _fields_of, _scores_check, score_entries
from mlsql.spark.families.scores import range_check
from mlsql.spark.ops import SparkOps, column

FAMILIES = (TH.FAMILY,)


class _GroupOps(SparkOps):
    """Spark ops whose sums run over a window (a table's group), one value per row."""

    def __init__(self, window: Any) -> None:
        self.window = window

    def sum(self, x: Any) -> Column:
        return F.sum(column(x)).over(self.window)


def _keys(
    source: Any,
    func: str,
    named: dict[str, str],
    by: Any,
    outputs: Sequence[str],
    sample_weight: str | None,
) -> tuple[list[str], list[Column], list[str]]:
    """(the ``by`` names, their columns as ``__g<i>`` (or one constant group), those names),
    every named column and the ``sample_weight`` column checked."""
    if sample_weight is not None:
        named = {**named, "sample_weight": sample_weight}
    if not isinstance(source, DataFrame):
        raise MlsqlError(
            f"mlsql.spark.{func} takes a Spark DataFrame. Got {type(source).__name__}."
        )
    schema = {f.name: f.dataType for f in source.schema.fields}
    groups = P.check_by(by, func)
    check_columns(func, schema, [*named.items(), *(("by", g) for g in groups)])
    check_by_names(func, groups, outputs)
    keys = [to_column(g, func, "by").alias(f"__g{i}") for i, g in enumerate(groups)]
    internal = [f"__g{i}" for i in range(len(groups))]
    return groups, keys or [F.lit(0).alias("__g")], internal or ["__g"]


def _weight(func: str, source: DataFrame, sample_weight: str | None) -> Column:
    """Each row's weight, checked (a row weighing 0 or NULL is dropped), or 1 (a long)."""
    if sample_weight is None:
        return F.lit(1).cast("long")
    return weight(func, bound(source, sample_weight))


def _in_range(func: str, name: str, counted: DataFrame) -> DataFrame:
    """``counted`` without its columns ``__lo`` and ``__hi`` (each counted row's lowest and
    highest probability), once the whole table's are in [0, 1]: its lowest below 0 raises
    first, then its highest above 1, as DuckDB and Polars check the table (row by row Spark
    named whichever bad row it read first). One row of the counted rows' minimum and maximum,
    joined to each (broadcast); the rows are never collected."""
    extremes = counted.agg(F.min("__lo").alias("__low"), F.max("__hi").alias("__high"))
    ok = range_check(func, name, F.col("__low"), F.col("__high"), F.lit(True))
    checked = counted.crossJoin(F.broadcast(extremes)).where(ok)
    return checked.drop("__lo", "__hi", "__low", "__high")


def _finish(df: DataFrame, groups: list[str], internal: list[str], columns: list[Any]) -> DataFrame:
    """The internal group columns renamed back, ordered by group and the first column."""
    ordered = df.orderBy(*(F.col(k).asc_nulls_last() for k in [*internal, columns[0]]))
    # without groups the one constant group column is left out
    shown = [F.col(i).alias(g) for i, g in zip(internal, groups, strict=False)]
    return ordered.select(*shown, *columns)


def _quantile_bins(rows: DataFrame, internal: list[str], nb: int) -> tuple[DataFrame, Column]:
    """(the rows that count, each with its group's edges ``__e``, and its bin). Each group's
    probabilities are collected and sorted (``sort_array(collect_list)``: memory per group
    of the order of its rows, as Spark's exact ``percentile`` holds its distinct values),
    read at the registry's numpy percentile positions, and joined back to the group's rows
    (null-safe, a NULL group is a group); a row's bin is the number of inner edges below it
    (scikit-learn's searchsorted, side 'left')."""

    def edge(k: Column) -> Column:
        lower, upper, t = TH.quantile_index(
            OPS, F.size("__v"), column(TH.quantile_level(OPS, k, nb))
        )
        at = [F.element_at("__v", column(i).cast("int") + 1) for i in (lower, upper)]
        return column(TH.quantile_edge(OPS, at[0], at[1], t))

    edges = (
        rows.groupBy(*internal)
        .agg(F.sort_array(F.collect_list("__p")).alias("__v"))
        .select(
            *(F.col(k).alias(f"__q{k}") for k in internal),
            F.transform(F.sequence(F.lit(0), F.lit(nb)), edge).alias("__e"),
        )
    )
    same = [rows[k].eqNullSafe(edges[f"__q{k}"]) for k in internal]
    joined = rows.join(edges, same).drop(*(f"__q{k}" for k in internal))
    inner = F.slice("__e", 2, nb - 1)
    b = F.size(F.filter(inner, lambda x: x < F.col("__p"))).cast("long").alias("bin")
    return joined, b


def _calibration_table(source: DataFrame, call: TableCall) -> DataFrame:
    func, named, sample_weight = call.func, call.columns, call.sample_weight
    actual, prob = named["actual"], named["prob"]
    nb, quantile = call.params["n_bins"], call.params["strategy"] == "quantile"
    groups, keys, internal = _keys(
        source, func, named, call.by, TH.CALIBRATION_COLUMNS, sample_weight
    )
    w = _weight(func, source, sample_weight)
    a, p = bound(source, actual), bound(source, prob)
    K.binary_inputs(func, ["actual"], [a])
    K.numeric_inputs(func, ["prob"], [p])
    y = K.binary_flag(func, a)
    s = K.finite(func, "prob", F.when(a.isNotNull(), p))
    rows = source.select(*keys, y.alias("__y"), s.alias("__p"), w.alias("__w"))
    # the weight first: every row's weight is checked, a known row's or not
    rows = rows.where((F.col("__w") > 0) & F.col("__y").isNotNull() & F.col("__p").isNotNull())
    b = column(SC.calibration_bin(OPS, F.col("__p"), nb)).cast("long").alias("bin")
    if quantile:
        rows, b = _quantile_bins(rows, internal, nb)
    bins = rows.groupBy(*internal, b).agg(
        F.sum("__w").alias("__n"),
        F.sum(F.col("__p") * F.col("__w")).alias("__s"),
        F.sum(F.col("__y") * F.col("__w")).alias("__pos"),
        F.min("__p").alias("__lo"),
        F.max("__p").alias("__hi"),
        *([F.first("__e").alias("__e")] if quantile else []),
    )
    bins = _in_range(func, "prob", bins)
    row = TH.CalibrationBin(F.col("bin"), F.col("__n"), F.col("__s"), F.col("__pos"))
    values = formula("calibration_table")(OPS, row, n_bins=nb)
    if quantile:
        values["low"] = F.element_at("__e", F.col("bin").cast("int") + 1)
        values["high"] = F.element_at("__e", F.col("bin").cast("int") + 2)
    out = bins.select(*internal, "bin", *(column(e).alias(k) for k, e in values.items()))
    return _finish(out, groups, internal, ["bin", *values])


calibration_table = table_function(SPARK, "calibration_table", _calibration_table)


def _label_thresholds(source: DataFrame, call: TableCall) -> DataFrame:
    func, named, sample_weight = call.func, call.columns, call.sample_weight
    actual, scores = named["actual"], named["scores"]
    b, zd, nb = (call.params[k] for k in ("beta", "zero_division", "n_bins"))
    groups, keys, internal = _keys(
        source, func, named, call.by, TH.THRESHOLD_COLUMNS, sample_weight
    )
    a, s = bound(source, actual), bound(source, scores)
    _scores_check(func, ["actual", "scores"], [a, s])
    # the weight after the scores' checks (their message first); the counts' type: long
    # unweighted, double weighted
    w, kind = _weight(func, source, sample_weight), "long" if sample_weight is None else "double"
    entries = score_entries(s, _fields_of(func, s))
    rows = source.select(*keys, a.alias("__a"), entries.alias("__e"), w.alias("__w"))
    rows = rows.where((F.col("__w") > 0) & F.col("__a").isNotNull() & F.col("__e").isNotNull())
    label_type = rows.schema["__e"].dataType.elementType["label"].dataType  # type: ignore[attr-defined]
    integral = isinstance(label_type, T.IntegralType)
    truth = F.array_distinct(F.filter("__a", lambda x: x.isNotNull()))
    if integral:
        truth = truth.cast("array<long>")
    x = F.col("__x")
    label = x["label"].cast("long") if integral else x["label"]
    score = K.finite(func, "scores", x["score"]) + 0.0
    key = score
    if nb is not None:
        key = column(SC.calibration_bin(OPS, score, nb))
    scored = (
        rows.select(*internal, truth.alias("__a"), "__w", F.explode("__e").alias("__x"))
        .select(
            *internal,
            label.alias("label"),
            key.cast("double").alias("__k"),
            F.array_contains("__a", label).cast("long").alias("__t"),
            "__w",
            *([] if nb is None else [score.alias("__s")]),
        )
        .groupBy(*internal, "label", "__k")
        .agg(
            F.sum(F.col("__t") * F.col("__w")).cast(kind).alias("__pos"),
            F.sum((1 - F.col("__t")) * F.col("__w")).cast(kind).alias("__neg"),
            *([] if nb is None else [F.min("__s").alias("__lo"), F.max("__s").alias("__hi")]),
        )
        .withColumn("__sup", F.lit(0).cast(kind))
    )
    if nb is not None:  # binned, the scores are probabilities
        scored = _in_range(func, "scores", scored)
    true_labels = (
        rows.select(*internal, "__w", F.explode(truth).alias("label"))
        .groupBy(*internal, "label")
        .agg(F.sum("__w").cast(kind).alias("__sup"))
        .select(
            *internal,
            "label",
            F.lit(None).cast("double").alias("__k"),
            F.lit(0).cast(kind).alias("__pos"),
            F.lit(0).cast(kind).alias("__neg"),
            "__sup",
        )
    )
    per_label = Window.partitionBy(*internal, "label")
    down = per_label.orderBy(F.col("__k").desc_nulls_first())
    candidates = scored.unionByName(true_labels).select(
        *internal,
        "label",
        "__k",
        F.sum("__pos").over(down).alias("tp"),
        F.sum("__neg").over(down).alias("fp"),
        F.sum("__sup").over(per_label).alias("support"),
    )
    tp, fp, n = F.col("tp"), F.col("fp"), F.col("support")
    rank = column(TH.selection_fbeta(OPS, Counts(tp, fp, n - tp), b))
    order = per_label.orderBy(rank.desc(), F.col("__k").desc_nulls_first())
    best = candidates.withColumn("__r", F.row_number().over(order)).where(F.col("__r") == 1)
    k = F.col("__k") if nb is None else F.col("__k") / nb
    counts, threshold = TH.chosen(OPS, tp, fp, n, k)
    chosen = best.select(
        *internal,
        "label",
        column(threshold).cast("double").alias("threshold"),
        *(column(getattr(counts, f)).cast(kind).alias(f) for f in ("tp", "fp", "fn")),
        n.cast(kind).alias("support"),
    )
    c = Counts(F.col("tp"), F.col("fp"), F.col("fn"))
    values = formula("label_thresholds")(OPS, c, beta=b, zero_division=zd)
    micro = TH.micro_fbeta(_GroupOps(Window.partitionBy(*internal)), c, b, zd)
    out = chosen.select(
        *internal,
        *TH.THRESHOLD_COLUMNS[:6],
        *(column(e).alias(name) for name, e in values.items()),
        column(micro).alias("micro_fbeta"),
    )
    return _finish(out, groups, internal, list(TH.THRESHOLD_COLUMNS))


label_thresholds = table_function(SPARK, "label_thresholds", _label_thresholds)


__all__ = ["calibration_table", "label_thresholds"]
