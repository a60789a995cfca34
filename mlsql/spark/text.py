"""Formulas over a DataFrame's own columns as Spark SQL text: one py4j call per column.

Every PySpark ``Column`` operation is a round trip to the JVM, and an
operator (``+``, ``==``, ``alias``, ``cast``) is about eleven of them, as
PySpark records its Python call site on each. A table such as
``multilabel_report`` runs the registry's formulas over dozens of columns: as
Columns that was some 13,000 round trips and most of its time. Where the
formulas' inputs are columns of a frame mlsql builds itself (not Columns a
user passed), they are written here as Spark SQL text instead
(:class:`~mlsql.spark.sql.SparkSqlOps`, the formulas' primitives),
and each finished expression becomes a Column in one call (:func:`column`) or
a whole projection in one ``selectExpr`` (:func:`select`).

The text says what the Columns said: Python numbers are literals of the same
type (an ``int`` is INT or BIGINT, a ``float`` DOUBLE, never DECIMAL), a
ratio is ``CASE WHEN den = 0 ...``, and Spark parses it into the same
expressions.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from mlsql.spark.sql import SparkSql, SparkSqlOps, number


def ref(name: str) -> SparkSql:
    """The column ``name`` (quoted: any characters are only a name).

    Examples
    --------
    >>> str(ref("a`b"))
    '`a``b`'
    """
    return SparkSql("`" + name.replace("`", "``") + "`")


def text(value: Any) -> str:
    """``value`` (an expression or a Python value) as Spark SQL text."""
    return str(number(value))


def column(value: Any, name: str | None = None) -> Column:
    """``value`` as a Column (named ``name``), in one call to the JVM."""
    named = "" if name is None else f" AS {ref(name)}"
    return F.expr(text(value) + named)


def select(frame: DataFrame, *keep: str, **named: Any) -> DataFrame:
    """``frame``'s columns ``keep``, then each expression of ``named`` under its name:
    one ``selectExpr``."""
    return frame.selectExpr(*(str(ref(k)) for k in keep), *_named(named))


def _named(named: Mapping[str, Any]) -> list[str]:
    return [f"{text(e)} AS {ref(n)}" for n, e in named.items()]


def select_sql(
    source: str, keep: Sequence[str], named: Mapping[str, Any] | None = None, tail: str = ""
) -> str:
    """The text of :func:`select` over ``source`` (a subquery or a frame's reference):
    ``SELECT keep..., expression AS name... FROM (source)`` then ``tail`` (``WHERE``,
    ``GROUP BY``, ...).

    Examples
    --------
    >>> select_sql("SELECT 1 AS `a`", ["a"], {"b": ref("a") + 1}, tail="WHERE `a` > 0")
    'SELECT `a`, (`a` + 1) AS `b` FROM (SELECT 1 AS `a`) WHERE `a` > 0'
    """
    listed = ", ".join([*(str(ref(k)) for k in keep), *_named(named or {})])
    return f"SELECT {listed} FROM ({source}){' ' + tail if tail else ''}"


def query(frame: DataFrame, build: Callable[[str], str]) -> DataFrame:
    """``build(rows)``, a Spark SQL query over ``frame`` (named there by the text ``rows``),
    as a DataFrame: Spark parses and analyses the whole query once.

    A chain of DataFrame operations is analysed at every step, and each step's
    columns cross to the JVM one call at a time; a query of many stages written
    as one text costs one call and one analysis. The frame is passed as a named
    argument of ``spark.sql`` (pyspark >= 3.4: a temporary view of a random name
    for the call in Spark Classic, dropped before it returns; a reference in
    Spark Connect), so nothing stays in the session's catalog. The rest of the
    text may hold any characters (braces in quoted names are escaped for the
    formatter).

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(1,), (2,)], "`{x}` int")
    >>> query(df, lambda rows: select_sql(rows, ["{x}"], {"twice": ref("{x}") * 2})).collect()
    [Row({x}=1, twice=2), Row({x}=2, twice=4)]
    """
    token = f"__mlsql_frame_{uuid.uuid4().hex}"
    parts = build(token).split(token)
    escaped = "{rows}".join(p.replace("{", "{{").replace("}", "}}") for p in parts)
    return frame.sparkSession.sql(escaped, rows=frame)


class GroupAggregates:
    """The aggregates of one ``groupBy``, each computed once, for formulas read afterwards.

    :class:`FixedOrderSqlOps` register here each value they sum or count and get
    back the name of a column of the aggregated frame; the formulas are then
    plain expressions over those columns, run in a ``select`` after the
    ``groupBy``. Spark analyses and optimises each aggregate once, not once for
    every formula (and every place in a formula) that names it. The query is
    :meth:`grouped`.
    """

    def __init__(self) -> None:
        self.summed: dict[str, str] = {}
        self.counted: dict[str, str] = {}

    def sum(self, x: Any) -> SparkSql:
        """The column that will hold the sum of ``x`` (sorted order, see :meth:`grouped`)."""
        return ref(self.summed.setdefault(text(x), f"__sum{len(self.summed)}"))

    def count(self, x: Any) -> SparkSql:
        """The column that will hold the count of ``x``'s non-NULL values."""
        return ref(self.counted.setdefault(text(x), f"__count{len(self.counted)}"))

    def grouped(self, source: str, keys: Sequence[str], carried: Sequence[str]) -> str:
        """The query of one row per group (``keys``) over ``source``: the keys, the maximum of
        each ``carried`` column, each sum and each count (named as :meth:`sum` and
        :meth:`count` returned).

        Each row of ``source`` becomes one row per sum and count it has a value for
        (``inline``; the first kept always, so that no group is lost), and a window per group
        and sum, sorted by value, adds the values first to last over the whole group: NULL
        over no non-NULL values, the same on every run however the rows are partitioned.
        Spark sorts those rows and spills them to disk as memory requires, so the memory
        does not grow with a group's labels (a sorted ``collect_list`` per sum, before, held
        them all in one row, and ran a 2 GB driver out of memory at a million labels).
        Values are added as DOUBLEs (an integer sum is exact below 2**53).

        Examples
        --------
        >>> from pyspark.sql import SparkSession
        >>> spark = SparkSession.builder.getOrCreate()
        >>> stage = GroupAggregates()
        >>> total, n = stage.sum(ref("x")), stage.count(ref("x"))
        >>> rows = "SELECT * FROM VALUES ('a', 0.2D), ('a', 0.1D), ('a', NULL), ('b', NULL) AS t(g, x)"
        >>> query = f"SELECT g, {total}, {n} FROM ({stage.grouped(rows, ['g'], [])}) ORDER BY g"
        >>> [tuple(r) for r in spark.sql(query).collect()]
        [('a', 0.30000000000000004, 2), ('b', None, 0)]
        """
        # a count of a summed value reads that value's rows; another count has rows of its own
        only_counted = [x for x in self.counted if x not in self.summed]
        entry = {x: i for i, x in enumerate([*self.summed, *only_counted])}
        values = [
            *(f"CAST({x} AS DOUBLE)" for x in self.summed),
            *(f"CASE WHEN ({x}) IS NOT NULL THEN 1D END" for x in only_counted),
        ] or ["CAST(NULL AS DOUBLE)"]  # one row a source row, whatever is asked
        listed = ", ".join(str(ref(k)) for k in keys)
        cells = ", ".join(
            f"named_struct('__entry', {i}, '__value', {v})" for i, v in enumerate(values)
        )
        kept = ", ".join([*(str(ref(k)) for k in [*keys, *carried]), f"inline(array({cells}))"])
        exploded = f"SELECT {kept} FROM ({source})"
        frame = "ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"
        window = f"PARTITION BY {listed}, `__entry` ORDER BY `__value` {frame}"
        windowed = (
            f"SELECT *, sum(`__value`) OVER ({window}) AS `__total` FROM ({exploded}) "
            "WHERE `__value` IS NOT NULL OR `__entry` = 0"
        )
        picked = [
            *(f"max({ref(c)}) AS {ref(c)}" for c in carried),
            *(
                f"max(CASE WHEN `__entry` = {entry[x]} THEN `__total` END) AS {ref(name)}"
                for x, name in self.summed.items()
            ),
            *(
                f"count(CASE WHEN `__entry` = {entry[x]} THEN `__value` END) AS {ref(name)}"
                for x, name in self.counted.items()
            ),
        ]
        return f"SELECT {listed}, {', '.join(picked)} FROM ({windowed}) GROUP BY {listed}"


class FixedOrderSqlOps(SparkSqlOps):
    """:class:`~mlsql.spark.sql.SparkSqlOps` whose aggregates see only the rows where ``mask`` holds and whose
    sums and means add a group's values sorted, so a result is the same on every run.

    Spark's ``sum`` adds partial sums per partition and merges them in the
    order their tasks finish and their blocks arrive, which varies from run to
    run on a cluster (and with the partitioning of the same rows); the last
    digit of a mean over labels then changes. Here a group's values are
    sorted and added one after the other (:meth:`GroupAggregates.grouped`), so
    the result is a function of the values alone.

    The aggregates go to ``stage`` (:class:`GroupAggregates`): an expression
    these ops build is read after the ``groupBy`` that computes them.
    """

    def __init__(self, stage: GroupAggregates, mask: str) -> None:
        self.stage = stage
        self.mask = ref(mask)

    def _masked(self, x: Any) -> SparkSql:
        return SparkSql(f"CASE WHEN {self.mask} THEN {text(x)} END")

    def sum(self, x: Any) -> SparkSql:
        """SQL ``sum`` of the values in sorted order: NULL over no non-NULL values."""
        return self.stage.sum(self._masked(x))

    def count(self, x: Any) -> SparkSql:
        """Non-NULL values of ``x``."""
        return self.stage.count(self._masked(x))

    def mean(self, x: Any) -> SparkSql:
        """SQL ``avg`` of the values in sorted order: NULL over no non-NULL values."""
        n = self.count(x)
        return SparkSql(f"CASE WHEN ({n} > 0) THEN (CAST({self.sum(x)} AS DOUBLE) / {n}) END")
