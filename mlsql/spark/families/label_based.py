"""Per-label tables for Spark: ``label_metrics``, ``multilabel_report``, macro and weighted measures.

These take a DataFrame, not Columns: ``label_metrics(df, "actual", "predicted")``
returns a DataFrame with one row per (group, label), the columns of the DuckDB
table macros and the Polars functions of the same names. Each group's label
counts come of one pass of mlsql's Java aggregate (:func:`mlsql.spark.jvm.
label_counts`), or where it is not used (no jar, a weight, a collation: see
:mod:`mlsql.spark.jvm`), each known row's sets are spread over their labels in one
``explode`` (each element tagged true positive, false negative or false positive)
and counted in one ``groupBy``: the same rows either way (:func:`_counting`);
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

from mlsql import _label_types as LT
from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._formulas import RowStats
from mlsql._front import tables as TB
from mlsql._front.build import formula
from mlsql._front.table_functions import TableCall, table_function
from mlsql.measures import label_based as LB
from mlsql.spark import jvm
from mlsql.spark._engine import SPARK
from mlsql.spark._types import bounds, check_label_array_types, checked_universe, kind, to_column
from mlsql.spark._weights import weight as checked_weight
from mlsql.spark.exact import limb_sum_sql
from mlsql.spark.sql import SparkSqlOps, number, string
from mlsql.spark.stats import label_set_sql
from mlsql.spark.text import (
    FixedOrderSqlOps,
    GroupAggregates,
    SparkSql,
    query,
    ref,
    select_sql,
    text,
)

FAMILIES = (LB.FAMILY,)
TEXT = SparkSqlOps()
ALL = "__mlsql_all"
#: a spread element's kind: true positive, false negative (actual only), false positive
KINDS = ("tp", "fn", "fp")


# ------------------------------------------------------------------ inputs
def _quoted(name: str) -> Column:
    """The column ``name`` whatever characters it holds (no dots or backticks parsed)."""
    return to_column(name, "label tables", "a column")


def _prepared(
    func: str,
    source: DataFrame,
    actual: str,
    predicted: str,
    labels: Sequence[Any] | None,
    by: str | Sequence[str] | None,
    sample_weight: str | None = None,
) -> tuple[DataFrame, Callable[..., str], list[str], list[Any] | None, T.DataType]:
    """(the frame to read; the query of its rows over the frame's reference: group columns,
    ``__a`` and ``__p`` as clean sets (with ``sets=False``, the lists as they are, or with
    a ``labels`` universe, their labels in it; with ``cast``, cast to that type),
    ``__known``, with ``sample_weight`` (a column name) ``__w``, the checked weights;
    groups; universe; the label type). A row whose weight is NULL is unknown.

    The frame is ``source`` itself, or with a weight, its columns read and the checked
    weight (a Column of :mod:`mlsql.spark._weights`), under internal names."""
    if not isinstance(source, DataFrame):
        raise MlsqlError(
            f"mlsql.spark.{func} takes a Spark DataFrame. Got {type(source).__name__}."
        )
    schema = {f.name: f.dataType for f in source.schema.fields}
    groups, universe = TB.checked_arguments(func, schema, actual, predicted, by, labels)
    types = [schema[actual], schema[predicted]]
    for role, dtype in zip(("actual", "predicted"), types, strict=True):
        if not isinstance(dtype, T.ArrayType):
            raise MlsqlError(
                LT.NOT_A_LIST_MESSAGE.format(func=func, name=role, type=dtype.simpleString())
            )
    check_label_array_types(func, ("actual", "predicted"), types)
    side = types[0] if kind(types[0].elementType) != LT.NULL else types[1]  # type: ignore[attr-defined]
    LT.check_universe_kind(universe, kind(side.elementType), side.simpleString(), func)  # type: ignore[attr-defined]
    label_type = _common_type(types[0].elementType, types[1].elementType)  # type: ignore[attr-defined]
    shown = T.ArrayType(label_type).simpleString()
    LT.check_universe_range(universe, bounds(label_type), shown, func)
    # group columns get plain internal names; _ordered gives them their own back
    names = {"__a": actual, "__p": predicted, **{f"__g{i}": g for i, g in enumerate(groups)}}
    frame, weight = source, []
    if sample_weight is not None:
        TB.check_columns(func, list(schema), [("sample_weight", sample_weight)])
        w = checked_weight(func, _quoted(sample_weight), schema[sample_weight])
        frame = source.select(*(_quoted(n).alias(k) for k, n in names.items()), w.alias("__w"))
        names = {k: k for k in names}
        weight = ["__w"]

    def clean(side: str, sets: bool, cast: str | None) -> str:
        out = f"CAST({ref(side)} AS {shown})"
        out = label_set_sql(out) if sets else out
        if universe is not None:
            out = f"array_intersect({out}, CAST(array({', '.join(map(_literal, universe))}) AS {shown}))"
        return out if cast is None else f"CAST({out} AS {cast})"

    a, p = (f"CAST({ref(names[k])} AS {shown})" for k in ("__a", "__p"))
    known = " AND ".join(f"({x} IS NOT NULL)" for x in (a, p, *map(ref, weight)))
    cols = [f"{ref(names[g])} AS {ref(g)}" for g in names if g.startswith("__g")] or [
        f"0 AS {ref(ALL)}"
    ]

    def rows(frame: str, sets: bool = True, cast: str | None = None) -> str:
        listed = [
            *cols,
            f"{clean(names['__a'], sets, cast)} AS `__a`",
            f"{clean(names['__p'], sets, cast)} AS `__p`",
            f"{known} AS `__known`",
            *map(str, map(ref, weight)),
        ]
        return f"SELECT {', '.join(listed)} FROM {frame}"

    groups = [f"__g{i}" for i in range(len(groups))] or [ALL]
    return frame, rows, groups, universe, label_type


def _literal(label: Any) -> str:
    """A label of a ``labels`` universe (text or an integer) as a Spark SQL literal."""
    return str(string(label) if isinstance(label, str) else number(int(label)))


def _common_type(left: T.DataType, right: T.DataType) -> T.DataType:
    """The label type both sides become (integers widen; an all-NULL side takes the other)."""
    if isinstance(left, T.NullType):
        return right
    if isinstance(right, T.NullType) or left == right:
        return left
    if isinstance(left, T.IntegralType) and isinstance(right, T.IntegralType):
        return T.LongType()
    return left


def _element(label: str, kind: str, stats: Sequence[str | None], label_type: str) -> str:
    """One spread element (Spark SQL): a label with its kind, or a row marker with the row's
    statistics."""
    fields = [f"'label', CAST({label} AS {label_type})", f"'kind', '{kind}'"]
    for x, n in zip(stats, ("row_tp", "row_n_actual", "row_n_predicted"), strict=True):
        fields.append(f"'{n}', CAST({'NULL' if x is None else x} AS BIGINT)")
    return f"named_struct({', '.join(fields)})"


def _counted(rows: str, groups: list[str], label_type: T.DataType, weighted: bool) -> str:
    """Every (group, label) and (group, row statistics) with its counts, in one pass:
    a Spark SQL query over ``rows`` (the frame of :func:`_prepared`; with ``weighted``, it
    has the weights ``__w``).

    Each known row is spread into its labels, each tagged tp (in both sets),
    fn (actual only) or fp (predicted only), plus one marker carrying the
    row's tp, |A| and |P|; an unknown row into one marker of its own (so its
    group exists). One ``GROUP BY`` then counts, per group, each label's tp,
    fp and fn (rows with a label) and how many rows have each combination of
    row statistics (rows without one: the histogram of the samples averages).
    :func:`mlsql.spark.jvm.label_counts` gives the same rows from mlsql's Java aggregate
    (:func:`_counting`, :func:`_cells`).
    """
    a, p, kind_of = "`__a`", "`__p`", label_type.simpleString()
    nothing = (None, None, None)
    row_stats = (f"size(array_intersect({a}, {p}))", f"size({a})", f"size({p})")
    tagged = [
        f"transform({part}, x -> {_element('x', kind, nothing, kind_of)})"
        for part, kind in (
            (f"array_intersect({a}, {p})", "tp"),
            (f"array_except({a}, {p})", "fn"),
            (f"array_except({p}, {a})", "fp"),
        )
    ]
    known = f"concat({', '.join(tagged)}, array({_element('NULL', 'row', row_stats, kind_of)}))"
    unknown = f"array({_element('NULL', 'unknown', nothing, kind_of)})"
    elements = f"explode(CASE WHEN `__known` THEN {known} ELSE {unknown} END) AS `e`"
    # with weights (a column ``__w``) every count is a sum of the rows' weights
    kept = ", ".join(str(ref(c)) for c in (*groups, *(["__w"] if weighted else [])))
    spread = f"SELECT {kept}, `e`.* FROM (SELECT {kept}, {elements} FROM ({rows}))"
    listed_keys = ", ".join(str(ref(k)) for k in _keys(groups))

    def count(k: str) -> str:
        if not weighted:
            return f"count(CASE WHEN (`kind` = '{k}') THEN 1 END) AS {ref(k)}"
        # summed exactly (so in any order: the same counts however the rows are partitioned)
        summed = limb_sum_sql(f"CASE WHEN (`kind` = '{k}') THEN `__w` END")
        return f"coalesce({summed}, 0.0D) AS {ref(k)}"

    counts = ", ".join(count(k) for k in (*KINDS, "row"))
    return f"SELECT {listed_keys}, {counts} FROM ({spread}) GROUP BY {listed_keys}"


def _keys(groups: list[str]) -> list[str]:
    """The keys of the counted rows: the groups, the label and the row statistics."""
    return [*groups, "label", "row_tp", "row_n_actual", "row_n_predicted"]


def _counting(
    frame: DataFrame,
    rows: Callable[..., str],
    groups: list[str],
    label_type: T.DataType,
    weighted: bool,
) -> tuple[DataFrame, Callable[[str], str]]:
    """(the frame to query; the counted rows of :func:`_counted` as a query over its
    reference).

    Where mlsql's jar is used (:mod:`mlsql.spark.jvm`), the rows are counted by its Java
    aggregate, one pass that keeps per group only the distinct labels and row statistics,
    and the frame is that count; else Spark SQL spreads and counts them in the query
    itself. Weighted counts are exact sums of the weights in both (the same DOUBLEs)."""
    if jvm.counts_labels(frame, label_type):
        given = T.ArrayType(label_type).simpleString()
        lists = query(frame, lambda f: rows(f, sets=False, cast=given))
        counted = jvm.label_counts(
            lists, groups, weighted, text=isinstance(label_type, T.StringType)
        )
        if counted is not None:
            return counted, lambda f: _cells(f, groups)
    return frame, lambda f: _counted(rows(f), groups, label_type, weighted)


def _cells(counted: str, groups: list[str]) -> str:
    """The rows of :func:`mlsql.spark.jvm.label_counts`'s result (the query ``counted``)
    as those of :func:`_counted`: its keys, then the counts."""
    keys, counts = _keys(groups), (*KINDS, "row")
    listed = [*(str(ref(k)) for k in keys), *(str(ref(c)) for c in counts)]
    grouped = ", ".join(str(ref(g)) for g in groups)
    inlined = f"SELECT {grouped}, inline(`__cells`.`cells`) FROM {counted}"
    return f"SELECT {', '.join(listed)} FROM ({inlined})"


def _spread(
    counted: str,
    groups: list[str],
    universe: list[Any] | None,
    label_type: T.DataType,
    weighted: bool,
) -> str:
    """Every (group, label) and (group, row statistics) with its counts (the rows of
    :func:`_counted`, as the query ``counted``) and the group's known rows, ``n_rows``.

    A group of no rows is one row of zero counts when there are no groups. With a
    ``labels`` universe, its labels that never occur in a group join in with zero counts.

    Written as Spark SQL text (:mod:`mlsql.spark.text`), run with the stages
    after it as one query (:func:`~mlsql.spark.text.query`).
    """
    kind_of = label_type.simpleString()
    keys = _keys(groups)
    listed_keys = ", ".join(str(ref(k)) for k in keys)
    count_type = "DOUBLE" if weighted else "BIGINT"
    if weighted and universe is None:  # labels of zero-weight rows only are not seen
        counted = (
            f"SELECT * FROM ({counted}) WHERE (`label` IS NULL) OR (((`tp` + `fn`) + `fp`) > 0)"
        )
    zeros = [f"CAST(0 AS {count_type}) AS {ref(k)}" for k in (*KINDS, "row")]
    if groups == [ALL]:  # one group, even over no rows
        empty = [
            f"0 AS {ref(ALL)}",
            *(
                f"CAST(NULL AS {kind_of if k == 'label' else 'BIGINT'}) AS {ref(k)}"
                for k in keys[1:]
            ),
            *zeros,
        ]
        counted = f"{counted} UNION ALL SELECT {', '.join(empty)}"
    if universe is not None:
        listed = f"CAST(array({', '.join(map(_literal, universe))}) AS {T.ArrayType(label_type).simpleString()})"
        grouped = ", ".join(str(ref(g)) for g in groups)
        extra = [
            grouped,
            f"explode({listed}) AS `label`",
            *(f"CAST(NULL AS BIGINT) AS {ref(k)}" for k in keys[len(groups) + 1 :]),
            *zeros,
        ]
        distinct = f"SELECT DISTINCT {grouped} FROM `__counted`"
        sums = ", ".join(f"sum({ref(k)}) AS {ref(k)}" for k in (*KINDS, "row"))
        both = f"SELECT * FROM `__counted` UNION ALL SELECT {', '.join(extra)} FROM ({distinct})"
        counted = (
            f"WITH `__counted` AS ({counted}) "
            f"SELECT {listed_keys}, {sums} FROM ({both}) GROUP BY {listed_keys}"
        )
    window = f"PARTITION BY {', '.join(str(ref(g)) for g in groups)}"
    if weighted:  # DOUBLE sums added in the order of their values: the same on any partitioning
        window += " ORDER BY `row` ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"
    return f"SELECT *, sum(`row`) OVER ({window}) AS `n_rows` FROM ({counted})"


def _label_values(beta: float, zd: P.ZeroDivision) -> dict[str, Any]:
    """The columns of label_metrics as text over the label rows of :func:`_spread`
    (elsewhere meaningless)."""
    counts = LB.LabelCounts(ref("tp"), ref("fp"), ref("fn"), ref("n_rows"))
    return formula("label_metrics")(TEXT, counts, beta=beta, zero_division=zd)


def _ordered(source: str, by: str | Sequence[str] | None, func: str, columns: Sequence[str]) -> str:
    """``source``'s rows ordered by group (``__g0``, ...; NULL last) and, for the per-label
    tables, label: its group columns under the caller's names, then ``columns``."""
    groups = P.check_by(by, func)
    keys = [*(f"__g{i}" for i in range(len(groups))), *(["label"] if "label" in columns else [])]
    if keys:  # ordered inside, then named: a caller's group may share a column's name
        order = ", ".join(f"{ref(k)} ASC NULLS LAST" for k in keys)
        source = f"SELECT * FROM ({source}) ORDER BY {order}"
    shown = [f"{ref(f'__g{i}')} AS {ref(name)}" for i, name in enumerate(groups)]
    listed = ", ".join([*shown, *(str(ref(c)) for c in columns)])
    return f"SELECT {listed} FROM ({source})"


# ------------------------------------------------------------------ public functions
def _label_metrics(source: DataFrame, call: TableCall) -> DataFrame:
    func, (actual, predicted), params = call.func, call.columns.values(), call.params
    by, sample_weight = call.by, call.sample_weight
    b, zd = TB.beta_and_zero_division(func, params["beta"], params["zero_division"])
    frame, rows, groups, universe, label_type = _prepared(
        func, source, actual, predicted, params["labels"], by, sample_weight
    )
    weighted = sample_weight is not None
    frame, counted = _counting(frame, rows, groups, label_type, weighted)
    values = _label_values(b, zd)
    columns = LB.label_metrics_columns(params["beta"] is not None)

    def build(frame: str) -> str:
        spread = _spread(counted(frame), groups, universe, label_type, weighted)
        named = {c: values[c] for c in columns if c != "label"}
        out = select_sql(spread, [*groups, "label"], named, tail="WHERE `label` IS NOT NULL")
        return _ordered(out, by, func, columns)

    return query(frame, build)


label_metrics = table_function(SPARK, "label_metrics", _label_metrics)


def _multilabel_report(source: DataFrame, call: TableCall) -> DataFrame:
    """:func:`multilabel_report`: :func:`reports` of its one report."""
    p = call.params
    return reports(
        [(call.func, p["beta"], p["zero_division"])],
        source,
        *call.columns.values(),
        labels=p["labels"],
        by=call.by,
        sample_weight=call.sample_weight,
        prefix=lambda _: "",
    )


multilabel_report = table_function(SPARK, "multilabel_report", _multilabel_report)


def reports(
    variants: Sequence[tuple[str, float | None, Any]],
    source: DataFrame,
    actual: str,
    predicted: str,
    *,
    labels: Sequence[Any] | None = None,
    by: str | Sequence[str] | None = None,
    sample_weight: str | None = None,
    prefix: Callable[[int], str] = lambda k: f"__v{k}_",
) -> DataFrame:
    """The reports of several ``(func, beta, zero_division)`` over the same rows and labels, in
    one query: the per (group, label) counts are spread once and every variant's formulas
    read them. Variant ``k``'s columns are its report's, named ``prefix(k)`` + the column;
    each variant's messages name its ``func`` (``evaluate`` asks for one report per labels)."""
    checked = [(func, *TB.beta_and_zero_division(func, b, zd)) for func, b, zd in variants]
    frame, rows, groups, universe, label_type = _prepared(
        variants[0][0], source, actual, predicted, labels, by, sample_weight
    )
    weighted = sample_weight is not None
    frame, counted = _counting(frame, rows, groups, label_type, weighted)
    # every formula as Spark SQL text (mlsql.spark.text), every stage one subquery of one
    # query: Spark parses and analyses the report once
    # a row entry holds a known row's statistics (the empty group's row holds none): one
    # of rows that all weigh 0 counts too, its sums 0 giving the zero_division value
    is_label, is_row = SparkSql("(`label` IS NOT NULL)"), SparkSql("(`row_tp` IS NOT NULL)")
    stats = RowStats(ref("row_tp"), ref("row_n_actual"), ref("row_n_predicted"))

    def where(condition: SparkSql, value: Any) -> SparkSql:
        return SparkSql(f"CASE WHEN {condition} THEN {text(value)} END")

    def build(frame: str) -> str:
        values: dict[str, Any] = {"__is_label": is_label, "__is_row": is_row}
        values["n"] = where(is_row, ref("row"))
        for k, (_, b, zd) in enumerate(checked):
            p = prefix(k)
            label_values = _label_values(b, zd)
            row_values = LB.row_values(TEXT, stats, b, zd)
            values |= {f"{p}l_{n}": where(is_label, e) for n, e in label_values.items()}
            values[f"{p}l_n_rows"] = where(is_label, ref("n_rows"))
            values |= {f"{p}r_{n}": where(is_row, e) for n, e in row_values.items()}
        staged = select_sql(
            _spread(counted(frame), groups, universe, label_type, weighted),
            [*groups, "n_rows"],
            values,
        )
        # sums and counts are computed in the GROUP BY, the formulas over them after it
        stage = GroupAggregates()
        label_ops = FixedOrderSqlOps(stage, "__is_label")
        row_ops = FixedOrderSqlOps(stage, "__is_row")
        measures: dict[str, Any] = {}
        for k, (_, _b, zd) in enumerate(checked):
            p = prefix(k)
            by_label = LB.label_aggregates(label_ops, _named(p + "l_"), zd)
            by_row = LB.row_aggregates(row_ops, _named(p + "r_"), ref("n"), zd)
            measures |= {f"{p}{n}": e for n, e in by_label.items()}
            measures |= {f"{p}{n}": e for n, e in by_row.items() if n != "n_rows"}
        aggregated = stage.grouped(staged, groups, ["n_rows"])
        grouped = select_sql(aggregated, [*groups, "n_rows"], measures)
        columns: dict[str, Any] = {}
        shown: list[str] = []
        for k, ((_, b, zd), (_, beta, _)) in enumerate(zip(checked, variants, strict=True)):
            p = prefix(k)
            group_columns = LB.group_columns(TEXT, _named(p), b, zd)
            columns |= {f"{p}{n}": e for n, e in group_columns.items()}
            shown += [c if c == "n_rows" else p + c for c in LB.report_columns(beta is not None)]
        out = select_sql(grouped, [*groups, "n_rows", *measures], columns)
        return _ordered(out, by, variants[0][0], list(dict.fromkeys(shown)))

    return query(frame, build)


def _named(prefix: str) -> Callable[[str], SparkSql]:
    """The reference to a column by its name after ``prefix``."""
    return lambda n: ref(prefix + n)


def _pick(report: DataFrame, groups: list[str], name: str) -> DataFrame:
    return report.select(*(_quoted(g) for g in groups), name)


_STANDALONE = TB.standalones(
    _multilabel_report,
    _pick,
    engine=SPARK,
    module="mlsql.spark",
    annotation="DataFrame",
)
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
        raise MlsqlError(LB.INDICATOR_COUNT_MESSAGE.format(len(cols), len(names)))
    before, after = LB.INDICATOR_VALUE_MESSAGE.split("{}")
    cols = [  # a value other than 0 or 1 (booleans: true, false) fails the query
        F.when(
            ~c.cast("double").isin(0.0, 1.0),
            F.raise_error(F.concat(F.lit(before), c.cast("string"), F.lit(after))),
        ).otherwise(c)
        for c in cols
    ]
    picked = [
        F.when(c.cast("double") == 1, F.lit(name)) for c, name in zip(cols, names, strict=True)
    ]
    listed = F.array_compact(F.array(*picked))  # a NULL name is no label
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
    universe = list(labels)
    col = checked_universe(
        to_column(actual, "indicators_from_labels", "actual"), universe, "indicators_from_labels"
    )
    # compared as text: a universe of the other kind must reach the check's error when the
    # query runs, not fail Spark's analysis (array_contains of an int array and a string);
    # each label as Spark writes it (a boolean as 'true'), a NULL label's indicator NULL
    text = col.cast("array<string>")
    flags = [
        F.lit(None).cast("int")
        if x is None
        else F.coalesce(F.array_contains(text, F.lit(x).cast("string")), F.lit(False)).cast("int")
        for x in universe
    ]
    return F.when(col.isNotNull(), F.array(*flags)).alias("indicators_from_labels")


__all__ = [
    "indicators_from_labels",
    "label_metrics",
    "labels_from_indicators",
    "multilabel_report",
    *_STANDALONE,
]
