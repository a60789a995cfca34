"""The Spark adapter: mlsql.spark Columns on one local SparkSession for the whole run.

The session is created lazily, once per test process (``local[2]``, two
shuffle partitions, no UI, the JVM's quick compiler only, a 2 GB driver), with Spark 4's
defaults otherwise (ANSI mode on).
Arrow tables become Spark DataFrames through an explicit schema derived from
the Arrow types, so a list of int32 stays ``array<int>`` and a NULL-only
column keeps its declared type; each is one partition, so the many tiny
queries of the suite run without a shuffle (``tests/test_spark_frames.py``
covers aggregates merged across partitions). Functions get Columns of the DataFrame
(``df["actual"]``), as a user holding the DataFrame would pass them, so mlsql
can check the label types itself.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import pyarrow as pa

_SESSION: Any = None
#: JVM options of the test session: tiny queries gain nothing from the optimising JIT (C2)
JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def session() -> Any:
    """The one SparkSession of the test run."""
    global _SESSION
    if _SESSION is None:
        os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)  # type: ignore[attr-defined]
        from pyspark.sql import SparkSession

        _SESSION = (
            SparkSession.builder.master("local[2]")
            .appName("mlsql-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .config("spark.default.parallelism", "2")
            # 2 GB: the long tests, run one after another on a worker, filled 1 GB of heap
            .config("spark.driver.memory", "2g")
            # the tests run thousands of tiny queries: the JVM's quick compiler (C1) and one GC
            # thread spend about a quarter less CPU on them than the defaults on two cores
            .config("spark.driver.extraJavaOptions", JVM_OPTIONS)
            .config("spark.sql.adaptive.enabled", "false")
            # pyspark 4 sends each function's Python call site to the JVM (four more py4j calls
            # a function): off, ranking_edges' Spark cases took 96 s against 136 s (one worker)
            .config("spark.python.sql.dataFrameDebugging.enabled", "false")
            .config("spark.sql.codegen.wholeStage", "false")
            .config("spark.sql.codegen.factoryMode", "NO_CODEGEN")
            .getOrCreate()
        )
        _SESSION.sparkContext.setLogLevel("OFF")
        # pyspark logs every analysis error it raises; the tests expect many
        for name in ("DataFrameQueryContextLogger", "SQLQueryContextLogger"):
            logging.getLogger(name).disabled = True
    return _SESSION


def spark_type(t: pa.DataType) -> Any:
    """The Spark type of an Arrow type."""
    from pyspark.sql import types as T

    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return T.ArrayType(spark_type(t.value_type), True)
    if pa.types.is_struct(t):
        return T.StructType([T.StructField(f.name, spark_type(f.type), True) for f in t])
    if pa.types.is_map(t):
        return T.MapType(spark_type(t.key_type), spark_type(t.item_type), True)
    simple = {
        pa.int8(): T.ByteType(),
        pa.int16(): T.ShortType(),
        pa.int32(): T.IntegerType(),
        pa.int64(): T.LongType(),
        pa.float32(): T.FloatType(),
        pa.float64(): T.DoubleType(),
        pa.bool_(): T.BooleanType(),
        pa.string(): T.StringType(),
        pa.large_string(): T.StringType(),
        pa.null(): T.NullType(),
    }
    if t in simple:
        return simple[t]
    if pa.types.is_decimal(t):
        return T.DecimalType(t.precision, t.scale)
    raise TypeError(f"no Spark type for Arrow {t}")


def frame(table: pa.Table, spark: Any = None) -> Any:
    """``table`` as a Spark DataFrame with the matching explicit schema, in one partition,
    of the session ``spark`` (the test run's by default).

    Arrow data becomes a local relation (no Python worker, no job to read
    it); one partition lets aggregates run without a shuffle stage.
    """
    from pyspark.sql import types as T

    schema = T.StructType([T.StructField(f.name, spark_type(f.type), True) for f in table.schema])
    return (spark or session()).createDataFrame(table, schema).coalesce(1)


def _plain(value: Any) -> Any:
    """A collected value as plain Python (a Row struct becomes a dict)."""
    from pyspark.sql import Row

    if isinstance(value, Row):
        return value.asDict(recursive=True)
    return value


class SparkEngine:
    """Runs each case as one ``select``, ``agg`` or ``groupBy().agg`` on a local session."""

    name = "spark"

    def __init__(self) -> None:
        import mlsql.spark

        self.ms = mlsql.spark
        session()

    def function(self, measure: str) -> Any:
        """The public function ``mlsql.spark.<measure>`` (fails loudly if missing).

        A measure the registry declares unavailable in Spark skips the case
        with the registry's reason (``tests/test_registry_engines.py`` checks
        that every such reason is given).
        """
        from mlsql._registry import REGISTRY

        m = REGISTRY.get(measure)
        if m is not None and not m.available_in("spark"):
            import pytest

            pytest.skip(f"{measure} is not in spark: {m.unavailable['spark']}")
        return getattr(self.ms, measure)

    def aggregate(
        self,
        measure: str,
        table: pa.Table,
        *,
        columns: tuple[str, ...] = ("actual", "predicted"),
        **params: Any,
    ) -> Any:
        from mlsql._registry import REGISTRY

        df = frame(table)
        col = self.function(measure)(*(df[c] for c in columns), **params).alias("value")
        m = REGISTRY.get(measure)
        if m is not None and m.kind not in ("aggregate", "counts"):  # per row: the first row's
            return _plain(df.select(col).first()[0])
        return _plain(df.agg(col).first()[0])

    def many(
        self,
        table: pa.Table,
        calls: list[tuple[str, tuple[str, ...], dict[str, Any]]],
        *,
        per_row: bool = False,
    ) -> list[Any]:
        """Every call in one ``agg`` (or ``select`` with ``per_row``): one Spark job."""
        df = frame(table)
        cols = self._columns(df, calls)
        if per_row:
            rows = df.select(*cols).collect()
            return [[_plain(r[i]) for r in rows] for i in range(len(calls))]
        return [_plain(v) for v in df.agg(*cols).first()]

    def _columns(
        self, df: Any, calls: list[tuple[str, tuple[str, ...], dict[str, Any]]]
    ) -> list[Any]:
        return [
            self.function(name)(*(df[c] for c in columns), **params).alias(f"c{i}")
            for i, (name, columns, params) in enumerate(calls)
        ]

    def many_by(
        self, table: pa.Table, calls: list[tuple[str, tuple[str, ...], dict[str, Any]]], by: str
    ) -> dict[Any, list[Any]]:
        """Every call per value of column ``by``, in one ``groupBy().agg``: one Spark job."""
        df = frame(table)
        rows = df.groupBy(by).agg(*self._columns(df, calls)).collect()
        return {r[0]: [_plain(v) for v in r[1:]] for r in rows}

    def from_stored_counts_by(
        self, table: pa.Table, calls: list[tuple[str, tuple[str, ...], dict[str, Any]]], by: str
    ) -> dict[Any, list[Any]]:
        """Counts stored per ``(by, g)``, merged per ``by``, every call on the merged counts."""
        df = frame(table)
        counts = self.ms.multilabel_counts(df["actual"], df["predicted"]).alias("c")
        daily = df.groupBy(by, "g").agg(counts)
        merged = daily.groupBy(by).agg(self.ms.merge_counts(daily["c"]).alias("c"))
        rows = merged.select(by, *self._columns(merged, calls)).collect()
        return {r[0]: [_plain(v) for v in r[1:]] for r in rows}

    def daily_counts(self, table: pa.Table) -> pa.Table:
        """``multilabel_counts`` per partition ``g``, as stored counts in a column ``counts``."""
        df = frame(table)
        counts = self.ms.multilabel_counts(df["actual"], df["predicted"]).alias("counts")
        return df.groupBy("g").agg(counts).toArrow()

    def grouped(self, measure: str, table: pa.Table, **params: Any) -> dict[Any, Any]:
        df = frame(table)
        col = self.function(measure)(df["actual"], df["predicted"], **params)
        return {r[0]: _plain(r[1]) for r in df.groupBy("g").agg(col.alias("value")).collect()}

    def per_row(self, measure: str, table: pa.Table, **params: Any) -> list[Any]:
        df = frame(table)  # one partition: a select keeps the rows' order
        col = self.function(measure)(df["actual"], df["predicted"], **params)
        return [_plain(r[0]) for r in df.select(col).collect()]

    def from_stored_counts(self, measure: str, table: pa.Table, **params: Any) -> Any:
        df = frame(table)
        daily = df.groupBy("g").agg(
            self.ms.multilabel_counts(df["actual"], df["predicted"]).alias("c")
        )
        merged = daily.agg(self.ms.merge_counts(daily["c"]).alias("c"))
        return merged.select(self.function(measure)(merged["c"], **params)).first()[0]

    def counts(self, table: pa.Table) -> dict[str, int]:
        df = frame(table)
        col = self.ms.multilabel_counts(df["actual"], df["predicted"])
        return _plain(df.agg(col).first()[0])

    # ---------------------------------------------------------- label tables
    def table_function(
        self,
        name: str,
        table: pa.Table,
        *,
        columns: tuple[str, str] = ("actual", "predicted"),
        **params: Any,
    ) -> pa.Table:
        """``ms.<name>(DataFrame, actual, predicted, **params)`` as an Arrow table."""
        out = self.function(name)(frame(table), *columns, **params)
        return out.toArrow()

    def table_rows(self, name: str, table: pa.Table, *columns: str, **params: Any) -> list[tuple]:
        """``ms.<name>(DataFrame, *columns, **params)`` as a list of tuples (single-label tables)."""
        out = self.function(name)(frame(table), *columns, **params)
        return [tuple(_plain(v) for v in r) for r in out.collect()]

    def wide_table(
        self, name: str, table: pa.Table, *columns: str, **params: Any
    ) -> tuple[list[str], list[tuple]]:
        """A table whose columns depend on the data: (column names, rows)."""
        out = self.function(name)(frame(table), *columns, **params)
        return out.columns, [tuple(r) for r in out.collect()]

    def cost_error_from_table(self, table: pa.Table, costs: pa.Table) -> Any:
        """``cost_error(actual, predicted, costs=<DataFrame actual, predicted, cost>)``."""
        df = frame(table)
        col = self.function("cost_error")(df["actual"], df["predicted"], costs=frame(costs))
        return df.agg(col).first()[0]

    def lists_from_indicators(
        self, table: pa.Table, sides: dict[str, list[str]], labels: list[Any]
    ) -> pa.Table:
        """Each ``sides`` entry (output name -> its 0/1 columns, in ``labels`` order) as a label list."""
        fn = self.function("labels_from_indicators")
        df = frame(table)
        return df.select(*(fn(list(cols), labels).alias(o) for o, cols in sides.items())).toArrow()

    def indicators_from_lists(self, table: pa.Table, column: str, labels: list[Any]) -> list[Any]:
        """``indicators_from_labels(column, labels)`` per row: 0/1 lists in ``labels`` order."""
        fn = self.function("indicators_from_labels")
        return [r[0] for r in frame(table).select(fn(column, labels)).collect()]


class codegen:
    """Spark's compiled execution while it is open (the test session interprets: its queries
    are tiny), for the long tests of millions of rows."""

    KEYS = ("spark.sql.codegen.wholeStage", "spark.sql.codegen.factoryMode")

    def __init__(self, spark: Any) -> None:
        self.spark = spark

    def __enter__(self) -> None:
        self.saved = {key: self.spark.conf.get(key) for key in self.KEYS}
        self.spark.conf.set("spark.sql.codegen.wholeStage", "true")
        self.spark.conf.set("spark.sql.codegen.factoryMode", "FALLBACK")

    def __exit__(self, *exc: object) -> None:
        for key, value in self.saved.items():
            self.spark.conf.set(key, value)
