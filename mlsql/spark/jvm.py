"""mlsql's JVM function in a Spark session: a row's label-set statistics in one call.

Spark SQL builds a label set per side (``array_except``) and intersects them for
every row, which costs about six times a scan of the lists (benchmarks/README.md,
"Spark ``micro_f1``: per-row set statistics"). mlsql's jar (``native/spark/
SetCounts.java``, compiled with the JDK when the package is installed) counts
|A ∩ P|, |A| and |P| of a row in one Java call, packed in one long.

Where a label-set Column is built (:func:`mlsql.spark.stats.row_stats`: the
per-row counts, the micro and samples averages, subset accuracy, Hamming loss,
their bootstrap and Hivemall's functions), the active classic session gets the
jar once per Spark application (Spark's ``ADD JAR``: the driver's class loader
and the executors) and the Column calls the function object itself, so no name
is registered in the session's catalog. The numbers are the same either way
(``tests/test_spark_jvm.py``). It is not used, and Spark SQL computes the
statistics, where:

- the jar was not built (no JDK at install time), or ``MLSQL_NATIVE=0``;
- the session is a Spark Connect one (no JVM on the client), or there is no
  active or default session when the Column is built;
- the session's ``spark.mlsql.jvm`` is ``false``
  (``spark.conf.set("spark.mlsql.jvm", "false")``);
- the jar fails to load: mlsql warns once, with Spark's reason.

Spark SQL also computes a row with 2^21 or more distinct labels on a side (they do not fit
the packing), a row with a text label holding U+FFFD (what Java makes of invalid UTF-8,
whose bytes Spark compares), and lists of strings under a collation (which Spark compares
by the collation, Java by characters).
"""

from __future__ import annotations

import warnings
from typing import Any

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from mlsql._formulas import RowStats
from mlsql._native_switch import SPARK_JAR, switched_off
from mlsql.spark._types import LABEL_ARRAY

#: the Java class (``native/spark/SetCounts.java``)
CLASS = "mlsql.spark.SetCounts"
#: the session setting that switches the function off (``"false"``)
CONF = "spark.mlsql.jvm"
#: the name Spark's plans show for the function
NAME = "mlsql_set_counts"
#: the bits of each packed count
BITS = 21
_MASK = (1 << BITS) - 1
_OFF = ("false", "0", "no", "off")
#: the function object per Spark application (its id and start time; None: it failed to load)
_LOADED: dict[tuple[str, int], Any] = {}


def _classic_session() -> Any:
    """The thread's active (else the default) classic session, or None (neither, or Spark
    Connect)."""
    try:
        spark = SparkSession.active()
    except Exception:  # PySparkRuntimeError: no active or default session
        return None
    return spark if getattr(spark, "_jsparkSession", None) is not None else None


def _function(spark: Any) -> Any:
    """The JVM ``UserDefinedFunction`` of :data:`CLASS` in ``spark``'s application (adding
    the jar there once), or None where it fails to load (warned once)."""
    context = spark.sparkContext
    key = (context.applicationId, context.startTime)  # a restarted context may keep its id
    if key in _LOADED:
        return _LOADED[key]
    jvm, jss = spark._jvm, spark._jsparkSession
    try:
        jss.sessionState().resourceLoader().addJar(str(SPARK_JAR))
        loader = jss.sharedState().jarClassLoader()
        # addJar's URL of a path with a space is encoded twice: the driver's loader gets the
        # file's own URL too (a loader skips a URL it holds)
        loader.addURL(jvm.java.io.File(str(SPARK_JAR)).toURI().toURL())
        cls = jvm.java.lang.Class.forName(CLASS, True, loader)
        gateway = spark.sparkContext._gateway
        no_types = gateway.new_array(jvm.java.lang.Class, 0)
        instance = cls.getDeclaredConstructor(no_types).newInstance(
            gateway.new_array(jvm.java.lang.Object, 0)
        )
        # functions.udf(UDF2, DataType), named by reflection: py4j may pick the untyped
        # udf(Object, DataType), which Spark refuses
        signature = gateway.new_array(jvm.java.lang.Class, 2)
        signature[0] = jvm.java.lang.Class.forName("org.apache.spark.sql.api.java.UDF2")
        signature[1] = jvm.java.lang.Class.forName("org.apache.spark.sql.types.DataType")
        udf = jvm.java.lang.Class.forName("org.apache.spark.sql.functions").getMethod(
            "udf", signature
        )
        arguments = gateway.new_array(jvm.java.lang.Object, 2)
        arguments[0] = instance
        arguments[1] = jvm.org.apache.spark.sql.types.DataTypes.LongType
        function = udf.invoke(None, arguments).withName(NAME)
    except Exception as error:  # py4j's errors: the jar or the JVM API is not what we built for
        warnings.warn(
            f"mlsql: Spark could not load mlsql's JVM function from {SPARK_JAR} "
            f"({type(error).__name__}: {str(error).strip().splitlines()[0]}); the label-set "
            "statistics use Spark SQL's array functions (the same numbers, slower)",
            RuntimeWarning,
            stacklevel=4,
        )
        function = None
    _LOADED[key] = function
    return function


def set_counts(actual: Column, predicted: Column) -> Column | None:
    """The packed counts of each row (``tp + n_actual·2^21 + n_predicted·2^42``; NULL where a
    list is NULL, a count does not fit, a string holds U+FFFD or the labels have a
    collation), or None where the function is not used.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(["x", "x", "y"], ["x", "z"])], "a array<string>, p array<string>")
    >>> packed = set_counts(df.a, df.p)
    >>> packed is None or df.select(packed).first()[0] == 1 + (2 << 21) + (2 << 42)
    True
    """
    from pyspark.sql.classic.column import Column as ClassicColumn
    from pyspark.sql.classic.column import _to_java_column, _to_seq

    if switched_off() or not SPARK_JAR.is_file():
        return None
    if not (isinstance(actual, ClassicColumn) and isinstance(predicted, ClassicColumn)):
        return None  # Spark Connect's Columns
    spark = _classic_session()
    if spark is None or spark.conf.get(CONF, "true").strip().lower() in _OFF:
        return None
    function = _function(spark)
    if function is None:
        return None
    call = Column(function.apply(_to_seq(spark.sparkContext, [actual, predicted], _to_java_column)))
    # labels without a collation (under one, Spark compares strings by it, Java by their
    # characters); Spark folds typeof to a constant when it plans the query: no cost per row
    label_lists = f"^({LABEL_ARRAY})$"
    plain = F.typeof(actual).rlike(label_lists) & F.typeof(predicted).rlike(label_lists)
    return F.when(plain, call)


def unpacked(packed: Column, portable: RowStats) -> RowStats:
    """The three counts of ``packed`` as ``int`` Columns; where it is NULL (a NULL list, or a
    row left to Spark SQL: :func:`set_counts`) ``portable``'s, NULL where a list is NULL.

    ``coalesce`` always evaluates its first argument, so Spark computes ``packed`` once per
    row for all three (common subexpressions); a ``CASE WHEN packed >= 0`` would share only
    the comparison and call the function again in each branch.
    """

    def field(shift: int, other: Column) -> Column:
        value = F.shiftright(packed, shift).bitwiseAND(_MASK) if shift else packed.bitwiseAND(_MASK)
        return F.coalesce(value.cast("int"), other)

    return RowStats(
        tp=field(0, portable.tp),
        n_actual=field(BITS, portable.n_actual),
        n_predicted=field(2 * BITS, portable.n_predicted),
    )
