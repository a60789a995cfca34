"""Per-label tables for Spark: ``label_metrics``, ``multilabel_report``, macro and weighted measures.

These take a DataFrame, not Columns: ``label_metrics(df, "actual", "predicted")``
returns a DataFrame with one row per (group, label), the columns of the DuckDB
table macros and the Polars functions of the same names. Each known row's sets
are spread over their labels in one ``explode`` (each element tagged true
positive, false negative or false positive) and counted in one ``groupBy``;
every column then comes from the builders of :mod:`mlsql.measures.label_based`,
the same ones the SQL library and Polars use, run on Columns by
:class:`~mlsql.spark.ops.SparkOps`.

The frame's schema is read when the function is called, so a missing column
or labels of two kinds is an :class:`~mlsql.MlsqlError` at once (before Spark
runs anything). Group columns may hold NULL (a group of its own, sorted last).

``labels_from_indicators`` and ``indicators_from_labels`` are Columns: 0/1
indicator columns to a label list and back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._formulas import RowStats
from mlsql.measures import label_based as LB
from mlsql.spark._types import check_same_kind, to_column
from mlsql.spark.ops import SparkOps
from mlsql.spark.stats import label_set

FAMILIES = (LB.FAMILY,)
OPS = SparkOps()
ALL = "__mlsql_all"
#: a spread element's kind: true positive, false negative (actual only), false positive
KINDS = ("tp", "fn", "fp")


# ------------------------------------------------------------------ inputs
def _by(by: str | Sequence[str] | None, func: str) -> list[str]:
    if by is None:
        return []
    names = [by] if isinstance(by, str) else list(by)
    if not all(isinstance(n, str) and n for n in names):
        raise MlsqlError(
            f"The 'by' parameter of {func} must be column names (strings). Got {by!r} instead."
        )
    return names


def _universe(labels: Sequence[Any] | None, func: str) -> list[Any] | None:
    if labels is None:
        return None
    if isinstance(labels, (str, bytes)):
        raise MlsqlError(
            f"The 'labels' parameter of {func} must be a list of labels. Got {labels!r} instead."
        )
    values = list(dict.fromkeys(x for x in labels if x is not None))
    if not values:
        raise MlsqlError(f"The 'labels' parameter of {func} must hold at least one label.")
    return values


def _quoted(name: str) -> Column:
    """The column ``name`` whatever characters it holds (no dots or backticks parsed)."""
    return F.col("`" + name.replace("`", "``") + "`")


def _prepared(
    func: str,
    source: DataFrame,
    actual: str,
    predicted: str,
    labels: Sequence[Any] | None,
    by: str | Sequence[str] | None,
) -> tuple[DataFrame, list[str], list[Any] | None, T.DataType]:
    """(rows: group columns, ``__a`` and ``__p`` as clean sets, ``__known``; groups; universe;
    the label type)."""
    if not isinstance(source, DataFrame):
        raise MlsqlError(
            f"mlsql.spark.{func} takes a Spark DataFrame. Got {type(source).__name__}."
        )
    schema = {f.name: f.dataType for f in source.schema.fields}
    groups = _by(by, func)
    universe = _universe(labels, func)
    for role, name in (("actual", actual), ("predicted", predicted), *(("by", b) for b in groups)):
        if not isinstance(name, str) or name not in schema:
            raise MlsqlError(
                f"{func}: the {role} column {name!r} is not in the frame. "
                f"Its columns: {', '.join(schema)}."
            )
    outputs = LB.REPORT_COLUMNS if func == "multilabel_report" else LB.LABEL_COLUMNS
    for name in groups:
        if name in outputs:
            raise MlsqlError(f"{func}: the by column {name!r} has the name of an output column.")
    types = [schema[actual], schema[predicted]]
    for role, dtype in zip(("actual", "predicted"), types, strict=True):
        if not isinstance(dtype, T.ArrayType):
            raise MlsqlError(
                f"{func} takes an array of labels per row for {role}. "
                f"Got {role} {dtype.simpleString()}."
            )
    check_same_kind(func, ("actual", "predicted"), types)
    label_type = _common_type(types[0].elementType, types[1].elementType)  # type: ignore[attr-defined]
    a = _quoted(actual).cast(T.ArrayType(label_type))
    p = _quoted(predicted).cast(T.ArrayType(label_type))

    def clean(side: Column) -> Column:
        out = label_set(side)
        if universe is not None:
            out = F.array_intersect(
                out, F.array(*(F.lit(x) for x in universe)).cast(T.ArrayType(label_type))
            )
        return out

    cols = [_quoted(g).alias(g) for g in groups]
    if not groups:
        groups = [ALL]
        cols = [F.lit(0).alias(ALL)]
    rows = source.select(
        *cols,
        clean(a).alias("__a"),
        clean(p).alias("__p"),
        (a.isNotNull() & p.isNotNull()).alias("__known"),
    )
    return rows, groups, universe, label_type


def _common_type(left: T.DataType, right: T.DataType) -> T.DataType:
    """The label type both sides become (integers widen; an all-NULL side takes the other)."""
    if isinstance(left, T.NullType):
        return right
    if isinstance(right, T.NullType) or left == right:
        return left
    if isinstance(left, T.IntegralType) and isinstance(right, T.IntegralType):
        return T.LongType()
    return left


def _join(left: DataFrame, right: DataFrame, keys: Sequence[str], how: str = "left") -> DataFrame:
    """``left`` joined with ``right`` on ``keys``, NULL keys matching NULL (group columns)."""
    renamed = right.select(
        *(F.col(c).alias(f"__r{i}") for i, c in enumerate(keys)),
        *(c for c in right.columns if c not in keys),
    )
    cond = reduce(
        lambda x, y: x & y, (left[k].eqNullSafe(renamed[f"__r{i}"]) for i, k in enumerate(keys))
    )
    joined = left.join(renamed, cond, how)
    return joined.drop(*(f"__r{i}" for i in range(len(keys))))


def _counts(
    rows: DataFrame, groups: list[str], universe: list[Any] | None, label_type: T.DataType
) -> tuple[DataFrame, DataFrame]:
    """(groups with n_rows, one row per (group, label) with tp, fp, fn, n_rows)."""
    known = rows.where("__known")
    n_rows = F.count(F.when(F.col("__known"), 1)).alias("n_rows")
    if groups == [ALL]:  # one group, even over no rows
        group_rows = rows.agg(n_rows).select(F.lit(0).alias(ALL), "n_rows")
    else:
        group_rows = rows.groupBy(*groups).agg(n_rows)
    a, p = F.col("__a"), F.col("__p")
    tagged = [
        F.transform(part, _tagger(kind))
        for part, kind in (
            (F.array_intersect(a, p), "tp"),
            (F.array_except(a, p), "fn"),
            (F.array_except(p, a), "fp"),
        )
    ]
    spread = known.select(*groups, F.explode(F.concat(*tagged)).alias("e")).select(
        *groups, F.col("e.label").alias("label"), F.col("e.kind").alias("kind")
    )
    per_label = spread.groupBy(*groups, "label").agg(
        *(F.count(F.when(F.col("kind") == kind, 1)).alias(kind) for kind in KINDS)
    )
    keys = [*groups, "label"]
    if universe is None:
        k = per_label
    else:
        listed = F.explode(F.array(*(F.lit(x) for x in universe)).cast(T.ArrayType(label_type)))
        every = group_rows.select(*groups, listed.alias("label"))
        k = _join(every, per_label, keys).fillna(0, subset=list(KINDS))
    k = _join(k, group_rows, groups)
    return group_rows, k.select(*keys, "tp", "fp", "fn", "n_rows")


def _tagger(kind: str) -> Callable[[Column], Column]:
    """A one-argument lambda for ``transform``: each label with its kind."""

    def tag(x: Column) -> Column:
        return F.struct(x.alias("label"), F.lit(kind).alias("kind"))

    return tag


def _label_values(k: DataFrame, groups: list[str], beta: float, zd: P.ZeroDivision) -> DataFrame:
    counts = LB.LabelCounts(F.col("tp"), F.col("fp"), F.col("fn"), F.col("n_rows"))
    values = LB.label_values(OPS, counts, beta, zd)
    return k.select(
        *groups, "label", "n_rows", *(_column(e).alias(name) for name, e in values.items())
    )


def _column(value: Any) -> Column:
    return value if isinstance(value, Column) else F.lit(value)


def _order(df: DataFrame, keys: Sequence[str]) -> DataFrame:
    return df.orderBy(*(F.col(k).asc_nulls_last() for k in keys))


def _params(func: str, beta: float | None, zero_division: Any) -> tuple[float, P.ZeroDivision]:
    zd = P.check_zero_division(zero_division, func)
    return (1.0 if beta is None else P.check_beta(beta, func)), zd


# ------------------------------------------------------------------ public functions
def label_metrics(
    source: DataFrame,
    actual: str,
    predicted: str,
    *,
    labels: Sequence[Any] | None = None,
    beta: float | None = None,
    zero_division: Any = 0,
    by: str | Sequence[str] | None = None,
) -> DataFrame:
    """One row per (group, label): tp, fp, fn, tn, support, precision, recall, f1, jaccard, accuracy.

    Parameters
    ----------
    source : pyspark.sql.DataFrame
        The rows, with label-array columns ``actual`` and ``predicted``.
    actual, predicted : str
        Column names.
    labels : sequence, optional
        The label universe: its labels that never occur get a row with
        tp = fp = fn = 0; labels outside it are ignored. Default: the labels
        seen in each group.
    beta : float, optional
        Adds an ``fbeta`` column.
    zero_division : {0, 1, nan, 'diagnose', 'ignore'}, default 0
        Value of an undefined ratio.
    by : str or sequence of str, optional
        Grouping columns.

    Returns
    -------
    pyspark.sql.DataFrame
        The ``by`` columns, then label, tp, fp, fn, tn, support, precision,
        recall, f1, [fbeta,] jaccard, accuracy; ordered by group and label.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> import mlsql.spark as ms
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame(
    ...     [(["cat", "bird"], ["cat"]), (["dog"], ["dog", "cat"])],
    ...     "actual array<string>, predicted array<string>",
    ... )
    >>> [tuple(r) for r in ms.label_metrics(df, "actual", "predicted").select("label", "tp", "fp", "fn", "tn").collect()]
    [('bird', 0, 0, 1, 1), ('cat', 1, 1, 0, 0), ('dog', 1, 0, 0, 1)]
    """
    func = "label_metrics"
    b, zd = _params(func, beta, zero_division)
    rows, groups, universe, label_type = _prepared(func, source, actual, predicted, labels, by)
    _, k = _counts(rows, groups, universe, label_type)
    columns = LB.label_metrics_columns(beta is not None)
    out = _label_values(k, groups, b, zd)
    shown = [g for g in groups if g != ALL]
    return _order(out, [*groups, "label"]).select(*shown, *columns)


def multilabel_report(
    source: DataFrame,
    actual: str,
    predicted: str,
    *,
    labels: Sequence[Any] | None = None,
    beta: float | None = None,
    zero_division: Any = 0,
    by: str | Sequence[str] | None = None,
) -> DataFrame:
    """One row per group: micro, macro, weighted and samples averages, losses and CLP, MLP, WLP.

    Parameters are those of :func:`label_metrics`; the columns those of the
    DuckDB ``multilabel_report`` (with ``beta``, ``*_fbeta*`` replace ``*_f1*``).

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> import mlsql.spark as ms
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame(
    ...     [(["cat", "bird"], ["cat"]), (["dog"], ["dog", "cat"])],
    ...     "actual array<string>, predicted array<string>",
    ... )
    >>> tuple(ms.multilabel_report(df, "actual", "predicted").select("n_rows", "macro_recall", "wlp").first())
    (2, 0.6666666666666666, 0.3333333333333333)
    """
    func = "multilabel_report"
    b, zd = _params(func, beta, zero_division)
    rows, groups, universe, label_type = _prepared(func, source, actual, predicted, labels, by)
    group_rows, k = _counts(rows, groups, universe, label_type)
    aggregates = LB.label_aggregates(OPS, F.col, zd)
    by_label = (
        _label_values(k, groups, b, zd)
        .groupBy(*groups)
        .agg(*(_column(e).alias(n) for n, e in aggregates.items()))
    )
    a, p = F.col("__a"), F.col("__p")
    histogram = (
        rows.where("__known")
        .groupBy(
            *groups,
            F.size(F.array_intersect(a, p)).cast("long").alias("tp"),
            F.size(a).cast("long").alias("n_actual"),
            F.size(p).cast("long").alias("n_predicted"),
        )
        .agg(F.count(F.lit(1)).alias("n"))
    )
    stats = RowStats(F.col("tp"), F.col("n_actual"), F.col("n_predicted"))
    values = LB.row_values(OPS, stats, b, zd)
    row_aggs = LB.row_aggregates(OPS, F.col, F.col("n"), zd)
    by_row = (
        histogram.select(*groups, "n", *(_column(e).alias(n) for n, e in values.items()))
        .groupBy(*groups)
        .agg(*(_column(e).alias(n) for n, e in row_aggs.items() if n != "n_rows"))
    )
    joined = _join(_join(group_rows, by_row, groups), by_label, groups).fillna(0, ["n_labels"])
    final = LB.group_columns(OPS, F.col, b, zd)
    out = joined.withColumns({n: _column(e) for n, e in final.items()})
    shown = [g for g in groups if g != ALL]
    return _order(out, groups).select(*shown, *LB.report_columns(beta is not None))


def _standalone(name: str, summary: str) -> Callable[..., DataFrame]:
    with_beta = "fbeta" in name

    def measure(
        source: DataFrame,
        actual: str,
        predicted: str,
        *,
        labels: Sequence[Any] | None = None,
        zero_division: Any = 0,
        by: str | Sequence[str] | None = None,
        **beta: Any,
    ) -> DataFrame:
        if set(beta) - ({"beta"} if with_beta else set()):
            raise TypeError(f"{name}() got unexpected keyword arguments {sorted(beta)}")
        given = beta.get("beta", 1.0) if with_beta else None
        report = multilabel_report(
            source,
            actual,
            predicted,
            labels=labels,
            beta=given,
            zero_division=zero_division,
            by=by,
        )
        return report.select(*_by(by, name), name)

    measure.__name__ = measure.__qualname__ = name
    measure.__module__ = "mlsql.spark"
    measure.__doc__ = (
        f"{summary}\n\nOne row per group over a DataFrame: ``{name}(source, actual, predicted, *, "
        f"labels=None, {'beta=1.0, ' if with_beta else ''}zero_division=0, by=None)``; "
        f"the ``{name}`` column of :func:`multilabel_report`.\n\n"
        "Parameters\n----------\nsource : pyspark.sql.DataFrame\n    The rows.\n"
        "actual, predicted : str\n    Label-array column names.\n"
        "labels, zero_division, by\n    As in :func:`label_metrics`.\n\n"
        "Returns\n-------\npyspark.sql.DataFrame\n    One row per group.\n"
    )
    return measure


_STANDALONE = {name: _standalone(name, summary) for name, summary in LB.STANDALONE.items()}
globals().update(_STANDALONE)


# ------------------------------------------------------------------ indicator columns
def labels_from_indicators(indicators: Sequence[str | Column], labels: Sequence[Any]) -> Column:
    """The labels whose indicator is 1, as an array; NULL if any indicator of the row is NULL.

    Parameters
    ----------
    indicators : sequence of str or pyspark.sql.Column
        0/1 (or boolean) columns, one per label, in the order of ``labels``.
    labels : sequence
        The label of each indicator column.

    Returns
    -------
    pyspark.sql.Column
        An array of labels per row.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> import mlsql.spark as ms
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(1, 1, 0), (0, None, 1)], "L1 int, L2 int, L3 int")
    >>> [r[0] for r in df.select(ms.labels_from_indicators(["L1", "L2", "L3"], ["L1", "L2", "L3"])).collect()]
    [['L1', 'L2'], None]
    """
    cols = [to_column(c, "labels_from_indicators", "indicators") for c in indicators]
    names = list(labels)
    if len(cols) != len(names):
        raise MlsqlError(
            "labels_from_indicators needs one label name per indicator. "
            f"Got {len(cols)} indicators and {len(names)} labels."
        )
    picked = [
        F.when(c.cast("double") == 1, F.lit(name)) for c, name in zip(cols, names, strict=True)
    ]
    listed = label_set(F.array(*picked))
    any_null = reduce(lambda x, y: x | y, (c.isNull() for c in cols))
    return F.when(~any_null, listed).alias("labels_from_indicators")


def indicators_from_labels(actual: str | Column, labels: Sequence[Any]) -> Column:
    """0/1 (int) per label of ``labels``: 1 where the row's list holds it; NULL for a NULL list.

    Parameters
    ----------
    actual : str or pyspark.sql.Column
        A label-array column.
    labels : sequence
        The label universe, in the order of the indicators.

    Returns
    -------
    pyspark.sql.Column
        An array of 0/1 per row.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> import mlsql.spark as ms
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(["L3", "L1"],), (None,)], "actual array<string>")
    >>> [r[0] for r in df.select(ms.indicators_from_labels("actual", ["L1", "L2", "L3"])).collect()]
    [[1, 0, 1], None]
    """
    col = to_column(actual, "indicators_from_labels", "actual")
    flags = [F.coalesce(F.array_contains(col, F.lit(x)), F.lit(False)).cast("int") for x in labels]
    return F.when(col.isNotNull(), F.array(*flags)).alias("indicators_from_labels")


__all__ = [
    "indicators_from_labels",
    "label_metrics",
    "labels_from_indicators",
    "multilabel_report",
    *_STANDALONE,
]
