"""mlsql's JVM expression and aggregates in a Spark session: label sets counted and sums made
exact in Java.

Spark SQL builds a label set per side (``array_except``) and intersects them for
every row, which costs about six times a scan of the lists (benchmarks/README.md,
"Spark ``micro_f1``: per-row set statistics"). mlsql's jar (``native/spark/*.java``,
compiled with the JDK when the package is installed) holds:

- ``SetCounts``, a Catalyst expression counting |A ∩ P|, |A| and |P| of a row in one
  Java call, packed in one long (:func:`set_counts`). Where a label-set Column is built
  (:func:`mlsql.spark.stats.row_stats`: the per-row counts, the micro and samples
  averages, subset accuracy, Hamming loss, their bootstrap and Hivemall's functions),
  the Column holds it. Spark compiles it into its generated code, and it reads the
  lists in place (a user-defined function would get each list converted into Java
  objects, a ``String`` decoded per label): text as its bytes where they lie, hashed
  eight bytes at a step; text that Spark's Parquet reader left dictionary-encoded as
  numbers of the dictionaries' entries (numbered once per row group), compared as
  integers.
- ``LabelCounts``, an aggregate counting a group's per-label tp, fn and fp and its
  histogram of row statistics in one pass (:func:`label_counts`), where Spark SQL
  spreads every row over its labels (``explode``) and groups the spread rows. The
  per-label tables (:mod:`mlsql.spark.families.label_based`) count with it. A Catalyst
  aggregate as Spark's ``collect_set`` is, it reads each row's lists in place as the
  expression does (both through ``LabelSets``), where a user-defined aggregate gets them
  converted into Java objects. Its memory
  is a group's distinct labels, in the heap (Spark cannot spill it), and its result one
  value holding a cell per label: for millions of distinct labels in a group, Spark
  SQL's form (which spills) is the one that fits (``spark.mlsql.jvm=false``;
  docs/guides/spark.md). Its buffer writes itself compactly when Spark serializes it.
- ``LabelCodes``, an expression that hands the aggregate a row's text labels as codes
  (:func:`label_counts`): Spark copies each row's lists into a row before an aggregate
  that it does not compile (as ``LabelCounts``), so the expression, compiled before that
  copy, reads them as ``SetCounts`` does (Parquet's dictionary ids by number) and gives
  each distinct label's number in its task, with whether it is a tp, fn or fp; the
  aggregate counts the numbers and turns them back into text in the same task.
- ``ExactSum``, an aggregate summing a group's DOUBLEs exactly (:func:`exact_sum`):
  Shewchuk's partials, rounded once at the end as Python's ``math.fsum`` rounds them, so
  the same DOUBLE on any partitioning, at any magnitude. :func:`mlsql.spark.ops.exact_sum`
  sums with it; without it, that function's Spark SQL form (decimal sums) is within 5e-19
  a value of it below 1e6, and a DOUBLE sum above.
- ``CoMoments``, an aggregate of a group's population co-moment of two columns, or
  variance of one (weighted; :func:`co_moment`): exact sums of exact products (on
  ExactSum's partials), combined once in ``BigDecimal`` at the end, so the centred
  regression measures (r2, rse, pearson_corr, explained_variance) need neither the
  group's mean first nor its rows; without it, their Columns collect the group's rows
  (:mod:`mlsql.spark.families.regression`).
- ``ClassCells``, an aggregate counting a group's confusion matrix, the (actual,
  predicted) cells that occur (:func:`class_cells`), with weights their exact sums: the
  class-wise single-label measures (f1, kappa, MCC, Bowker's test, ...) read their
  per-class counts from it where no ``labels`` are given; without it, their Columns
  collect the group's rows (:mod:`mlsql.spark.families.single_label`).

The session gets the jar once per Spark application (Spark's ``ADD JAR``: the driver's
class loader and the executors) and the Columns hold the expression and aggregate
objects themselves, so no name is registered in the session's catalog. The counts are
the same either way (``tests/test_spark_jvm.py``). None is used, and Spark SQL
computes instead, where:

- the jar was not built (no JDK at install time), or ``MLSQL_NATIVE=0``;
- the session is a Spark Connect one (no JVM on the client), or (for the function and
  the exact sum, built as Columns) there is no active or default session when the Column
  is built;
- the session's ``spark.mlsql.jvm`` is ``false``
  (``spark.conf.set("spark.mlsql.jvm", "false")``);
- the jar fails to load: mlsql warns once, with Spark's reason.

Spark SQL also computes what Java would count otherwise: lists of strings under a
collation (which Spark compares by the collation, Java by the bytes, as Spark compares
text without one); for the expression, a row with 2^21 or more distinct labels on a side
(they do not fit the packing). Weighted tables sum the weights in the
aggregate as :mod:`mlsql.spark.exact` sums them in Spark SQL: the same DOUBLEs.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql._formulas import RowStats
from mlsql._native_switch import SPARK_JAR, switched_off
from mlsql.spark._types import LABEL_ARRAY
from mlsql.spark.exact_bounds import EXACT_SUM_BOUND

#: the Java expression (``native/spark/SetCounts.java``)
CLASS = "mlsql.spark.SetCounts"
#: the Java aggregate of a group's per-label counts (``native/spark/LabelCounts.java``)
AGGREGATE = "mlsql.spark.LabelCounts"
#: the Java expression of a row's labels as codes for the aggregate
#: (``native/spark/LabelCodes.java``)
CODES = "mlsql.spark.LabelCodes"
#: the session setting that switches the function off (``"false"``)
CONF = "spark.mlsql.jvm"
#: the name Spark's plans show for the expression (its ``prettyName``)
NAME = "mlsql_set_counts"
#: the name Spark's plans show for the aggregate
AGGREGATE_NAME = "mlsql_label_counts"
#: the Java aggregate of a group's exact sum (``native/spark/ExactSum.java``)
EXACT_SUM = "mlsql.spark.ExactSum"
#: the name Spark's plans show for it
EXACT_SUM_NAME = "mlsql_exact_sum"
#: the Java aggregate of a group's co-moment (``native/spark/CoMoments.java``)
CO_MOMENTS = "mlsql.spark.CoMoments"
#: the name Spark's plans show for it
CO_MOMENT_NAME = "mlsql_co_moment"
#: the Java aggregate of a group's confusion cells (``native/spark/ClassCells.java``)
CLASS_CELLS = "mlsql.spark.ClassCells"
#: the name Spark's plans show for it
CLASS_CELLS_NAME = "mlsql_class_cells"
#: the types of class the aggregate reads as text (compared by their bytes) and as integers
#: the kinds of class the aggregate counts: Spark's ``typeof`` of each, the field of the
#: aggregate's input it goes to (text compared by its bytes), and the types it covers
CLASS_KINDS: dict[str, tuple[str, int, tuple[type[T.DataType], ...]]] = {
    "text": (r"^(string|varchar\(\d+\)|char\(\d+\))$", 0, (T.StringType,)),
    "integer": (r"^(tinyint|smallint|int|bigint|void)$", 1, (T.IntegralType, T.NullType)),
    "boolean": (r"^(boolean|void)$", 1, (T.BooleanType, T.NullType)),
    "number": (r"^(float|double)$", 2, (T.FloatType, T.DoubleType)),
}
#: each side's three fields in the aggregate's input: its class as text, integer or number
CLASS_FIELDS = (("_text", T.BinaryType()), ("_integer", T.LongType()), ("_number", T.DoubleType()))
#: the bits of each packed count
BITS = 21
_MASK = (1 << BITS) - 1
_OFF = ("false", "0", "no", "off")
#: the function object per Spark application (its id and start time; None: it failed to load)
_LOADED: dict[tuple[str, int], _Loaded | None] = {}


def _classic_session() -> Any:
    """The thread's active (else the default) classic session, or None (neither, or Spark
    Connect)."""
    try:
        spark = SparkSession.active()
    except Exception:  # PySparkRuntimeError: no active or default session
        return None
    return spark if getattr(spark, "_jsparkSession", None) is not None else None


@dataclass(frozen=True)
class _Loaded:
    """mlsql's JVM classes in one Spark application."""

    #: the constructor of :data:`CLASS` (a Catalyst expression over two expressions)
    set_counts: Any
    #: the constructor of :data:`AGGREGATE` (a Catalyst aggregate over two lists and a
    #: weight, or None: :meth:`label_counts`)
    label_counts_of: Any
    #: the constructor of :data:`CODES` (a Catalyst expression over two lists of text)
    label_codes: Any
    #: the ``java.lang.reflect.Method`` ``LabelCodes.counted`` (static): a frame's groups
    #: counted by :data:`AGGREGATE` over its text lists' codes (:func:`label_counts`)
    counted_by_code: Any
    #: the ``UserDefinedFunction`` of :data:`EXACT_SUM`
    exact_sum: Any
    #: the ``UserDefinedFunction`` of :data:`CO_MOMENTS` over (a, w): a variance
    variance: Any
    #: the ``UserDefinedFunction`` of :data:`CO_MOMENTS` over (a, b, w): a covariance
    covariance: Any
    #: the ``UserDefinedFunction`` of :data:`CLASS_CELLS` counting rows
    class_cells: Any
    #: the ``UserDefinedFunction`` of :data:`CLASS_CELLS` summing weights
    weighted_class_cells: Any

    def label_counts(
        self,
        spark: Any,
        actual: Column,
        predicted: Column,
        weight: Column | None = None,
        bits: int = BITS,
    ) -> Column:
        """The Column of :data:`AGGREGATE` over the lists ``actual`` and ``predicted`` (of
        one type) in ``spark``; with a ``weight`` (DOUBLE), its counts are exact sums of the
        weights, as :func:`mlsql.spark.exact.limb_sum_sql` sums them; ``bits``: the width
        of its packed row statistics (fewer only to test the rest)."""
        jvm = spark._jvm
        bound = jvm.java.lang.Double(float(EXACT_SUM_BOUND))
        arguments = (actual, predicted, weight, jvm.java.lang.Integer(bits), bound)
        return _catalyst(spark, self.label_counts_of, *arguments, aggregate=True)

    def coded_counts(self, spark: Any, rows: DataFrame, groups: Sequence[str]) -> DataFrame:
        """``rows`` grouped by ``groups`` with :data:`AGGREGATE`'s column ``__cells`` over
        the text lists ``__a`` and ``__p`` handed to it as codes (:data:`CODES`), built by
        ``LabelCodes.counted`` in one call."""
        jvm, gateway = spark._jvm, spark.sparkContext._gateway
        names = gateway.new_array(jvm.java.lang.String, len(groups))
        for k, group in enumerate(groups):
            names[k] = group
        arguments = gateway.new_array(jvm.java.lang.Object, 4)
        arguments[0], arguments[1] = rows._jdf, names
        arguments[2] = jvm.java.lang.Integer(BITS)
        arguments[3] = jvm.java.lang.Double(float(EXACT_SUM_BOUND))
        return DataFrame(self.counted_by_code.invoke(None, arguments), spark)


def _catalyst(spark: Any, constructor: Any, *arguments: Any, aggregate: bool = False) -> Column:
    """The Column of the Catalyst expression (or, with ``aggregate``, aggregate function)
    ``constructor`` makes in ``spark`` of ``arguments``, each Column given as its expression."""
    jvm = spark._jvm
    utils = jvm.org.apache.spark.sql.classic.ExpressionUtils
    given = spark.sparkContext._gateway.new_array(jvm.java.lang.Object, len(arguments))
    for k, argument in enumerate(arguments):
        given[k] = utils.expression(argument._jc) if isinstance(argument, Column) else argument
    made = constructor.newInstance(given)
    return Column(utils.column(made.toAggregateExpression() if aggregate else made))


def _loaded(spark: Any) -> _Loaded | None:
    """mlsql's JVM classes in ``spark``'s application (adding the jar there once), or None
    where they fail to load (warned once)."""
    context = spark.sparkContext
    key = (context.applicationId, context.startTime)  # a restarted context may keep its id
    if key in _LOADED:
        return _LOADED[key]
    jvm, jss = spark._jvm, spark._jsparkSession
    loaded: _Loaded | None
    try:
        jss.sessionState().resourceLoader().addJar(str(SPARK_JAR))
        loader = jss.sharedState().jarClassLoader()
        # addJar's URL of a path with a space is encoded twice: the driver's loader gets the
        # file's own URL too (a loader skips a URL it holds)
        loader.addURL(jvm.java.io.File(str(SPARK_JAR)).toURI().toURL())
        gateway = spark.sparkContext._gateway
        expression = jvm.java.lang.Class.forName(
            "org.apache.spark.sql.catalyst.expressions.Expression"
        )
        signature = gateway.new_array(jvm.java.lang.Class, 2)
        signature[0] = signature[1] = expression
        function = jvm.java.lang.Class.forName(CLASS, True, loader).getConstructor(signature)
        signature = gateway.new_array(jvm.java.lang.Class, 5)
        signature[0] = signature[1] = signature[2] = expression
        signature[3] = jvm.java.lang.Integer.TYPE
        signature[4] = jvm.java.lang.Double.TYPE
        aggregate_class = jvm.java.lang.Class.forName(AGGREGATE, True, loader)
        counts = aggregate_class.getConstructor(signature)
        signature = gateway.new_array(jvm.java.lang.Class, 2)
        signature[0] = signature[1] = expression
        codes_class = jvm.java.lang.Class.forName(CODES, True, loader)
        codes = codes_class.getConstructor(signature)
        signature = gateway.new_array(jvm.java.lang.Class, 4)
        signature[0] = jvm.java.lang.Class.forName("org.apache.spark.sql.Dataset")
        signature[1] = gateway.new_array(jvm.java.lang.String, 0).getClass()
        signature[2] = jvm.java.lang.Integer.TYPE
        signature[3] = jvm.java.lang.Double.TYPE
        counted_by_code = codes_class.getMethod("counted", signature)

        def aggregate(name: str, encoder: Any, *flags: bool) -> Any:  # functions.udaf of `name`
            types = gateway.new_array(jvm.java.lang.Class, len(flags))
            arguments = gateway.new_array(jvm.java.lang.Object, len(flags))
            for i, flag in enumerate(flags):  # boolean constructor arguments
                types[i] = jvm.java.lang.Boolean.TYPE
                arguments[i] = jvm.java.lang.Boolean(flag)
            made = jvm.java.lang.Class.forName(name, True, loader).getDeclaredConstructor(types)
            return jvm.org.apache.spark.sql.functions.udaf(made.newInstance(arguments), encoder)

        encoders = jvm.org.apache.spark.sql.Encoders
        total = aggregate(EXACT_SUM, encoders.DOUBLE()).withName(EXACT_SUM_NAME)
        parse = jvm.org.apache.spark.sql.types.DataType.fromJson

        def moment(names: str) -> Any:  # the aggregate over DOUBLE columns `names`
            row = T.StructType([T.StructField(n, T.DoubleType()) for n in names])
            made = aggregate(CO_MOMENTS, encoders.row(parse(row.json())))
            return made.withName(CO_MOMENT_NAME)

        sides = [(f"{side}{form}", kind) for side in "ap" for form, kind in CLASS_FIELDS]
        cell_row = T.StructType([T.StructField(n, t) for n, t in [*sides, ("w", T.DoubleType())]])

        def cells(weighted: bool) -> Any:  # the aggregate counting rows, or summing weights
            made = aggregate(CLASS_CELLS, encoders.row(parse(cell_row.json())), weighted)
            return made.withName(CLASS_CELLS_NAME)

        loaded = _Loaded(
            function,
            counts,
            codes,
            counted_by_code,
            total,
            moment("aw"),
            moment("abw"),
            cells(False),
            cells(True),
        )
    except Exception as error:  # py4j's errors: the jar or the JVM API is not what we built for
        warnings.warn(
            f"mlsql: Spark could not load mlsql's JVM functions from {SPARK_JAR} "
            f"({type(error).__name__}: {str(error).strip().splitlines()[0]}); label sets "
            "are counted with Spark SQL's array functions (the same numbers, slower)",
            RuntimeWarning,
            stacklevel=4,
        )
        loaded = None
    _LOADED[key] = loaded
    return loaded


def _switched_on(spark: Any) -> bool:
    """Whether ``spark`` (a classic session, or None) may use mlsql's jar."""
    if switched_off() or not SPARK_JAR.is_file() or spark is None:
        return False
    return bool(spark.conf.get(CONF, "true").strip().lower() not in _OFF)


def _used(*columns: Column) -> tuple[Any, _Loaded] | None:
    """The thread's classic session and mlsql's classes loaded there, for Columns over
    ``columns``; None where they are not used: Spark Connect's Columns, no classic session,
    the jar switched off or not loaded."""
    from pyspark.sql.classic.column import Column as ClassicColumn

    if not all(isinstance(c, ClassicColumn) for c in columns):
        return None  # Spark Connect's Columns
    spark = _classic_session()
    loaded = _loaded(spark) if _switched_on(spark) else None
    return None if loaded is None else (spark, loaded)


def _called(function: str, *columns: Column) -> Column | None:
    """The call of the loaded ``function`` (:class:`_Loaded`'s ``exact_sum``,
    ``variance``, ``covariance`` or a ``class_cells``) on ``columns`` in the thread's
    session, or None where it is not used (:func:`_used`)."""
    from pyspark.sql.classic.column import _to_java_column, _to_seq

    used = _used(*columns)
    if used is None:
        return None
    spark, loaded = used
    udf = getattr(loaded, function)
    return Column(udf.apply(_to_seq(spark.sparkContext, list(columns), _to_java_column)))


def _expression(actual: Column, predicted: Column) -> Column | None:
    """The Column of mlsql's :data:`CLASS` expression over ``actual`` and ``predicted`` in the
    thread's session, or None where it is not used (:func:`_used`)."""
    used = _used(actual, predicted)
    if used is None:
        return None
    spark, loaded = used
    return _catalyst(spark, loaded.set_counts, actual, predicted)


def set_counts(actual: Column, predicted: Column) -> Column | None:
    """The packed counts of each row (``tp + n_actual·2^21 + n_predicted·2^42``; NULL where a
    list is NULL, a count does not fit or the labels have a collation), or None where the
    expression is not used.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(["x", "x", "y"], ["x", "z"])], "a array<string>, p array<string>")
    >>> packed = set_counts(df.a, df.p)
    >>> packed is None or df.select(packed).first()[0] == 1 + (2 << 21) + (2 << 42)
    True
    """
    call = _expression(actual, predicted)
    if call is None:
        return None
    # labels without a collation (under one, Spark compares strings by it, Java by their
    # characters); Spark folds typeof to a constant when it plans the query: no cost per row
    label_lists = f"^({LABEL_ARRAY})$"
    plain = F.typeof(actual).rlike(label_lists) & F.typeof(predicted).rlike(label_lists)
    return F.when(plain, call)


def exact_sum(x: Column) -> Column | None:
    """The exact sum of ``x``'s DOUBLE values by mlsql's Java aggregate
    (``native/spark/ExactSum.java``): rounded once, as Python's ``math.fsum`` rounds it, the
    same on any partitioning; NULL over no non-NULL values. None where the aggregate is not
    used (as :func:`set_counts`: Spark Connect, no session, the jar off or not loaded).

    Examples
    --------
    >>> import math
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.getOrCreate()
    >>> values = [1e20, 0.1, -1e20]
    >>> df = spark.createDataFrame([(v,) for v in values], "x double")
    >>> summed = exact_sum(df.x)
    >>> summed is None or df.agg(summed).first()[0] == math.fsum(values)
    True
    >>> math.fsum(values), sum(values)
    (0.1, 0.0)
    """
    return _called("exact_sum", x.cast("double"))


def co_moment(a: Column, b: Column | None = None, weight: Column | None = None) -> Column | None:
    """A group's population co-moment Σw(a - ā)(b - b̄) / Σw of ``a`` and ``b`` (the variance
    of ``a`` where ``b`` is None), weighted by ``weight`` (None: 1), by mlsql's Java aggregate
    (``native/spark/CoMoments.java``): the exact fraction rounded once, the same on any
    partitioning, over the rows where no input is NULL; NULL over no such rows or none that
    weighs. Its memory is a few partials per sum, never the group's rows. None where the
    aggregate is not used (as :func:`set_counts`).

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.getOrCreate()
    >>> rows = [(1e12 + 1, 1e12 + 2), (1e12 + 2, 1e12 + 2), (1e12 + 3, 1e12 + 5)]
    >>> df = spark.createDataFrame(rows, "y double, p double")
    >>> moments = [co_moment(df.y), co_moment(df.p), co_moment(df.y, df.p)]
    >>> any(m is None for m in moments) or tuple(df.agg(*moments).first()) == (2 / 3, 2.0, 1.0)
    True
    """
    one = F.lit(1.0) if weight is None else weight.cast("double")
    if b is None:
        return _called("variance", a.cast("double"), one)
    return _called("covariance", a.cast("double"), b.cast("double"), one)


def counts_classes(
    types: Sequence[T.DataType | None], kinds: Sequence[str] = tuple(CLASS_KINDS)
) -> bool | None:
    """Whether :func:`class_cells` over ``kinds`` applies to classes of ``types`` (both
    sides), None where a type is not known when the Column is built (then Spark decides when
    it plans the query)."""
    if any(t is None for t in types):
        return None

    def of(kind: str, t: Any) -> bool:
        text = not isinstance(t, T.StringType) or t.simpleString() == "string"  # no collation
        return isinstance(t, CLASS_KINDS[kind][2]) and text

    return any(all(of(kind, t) for t in types) for kind in kinds)


def class_cells(
    actual: Column,
    predicted: Column,
    weight: Column,
    weighted: bool = False,
    kinds: Sequence[str] = tuple(CLASS_KINDS),
) -> tuple[Column, Column] | None:
    """A group's confusion cells by mlsql's Java aggregate (``native/spark/ClassCells.java``),
    and where it applies; None where the aggregate is not used (as :func:`set_counts`).

    ``weight`` is each row's weight (1 to count rows), NULL where the row is not known; with
    ``weighted`` the totals are its exact sums (DOUBLE), else counts (BIGINT). Where the
    aggregate does not apply it counts no row. The aggregate is a struct: ``n``, ``rows``
    (the known rows), ``actual``, ``predicted`` and ``correct`` aligned with the sorted
    classes seen on either side; ``cells``, the (``i``, ``j``) cells that occur, sorted, with
    their total ``c`` and their mirror's ``m``; and those sorted classes as ``text_keys``
    (BINARY) or ``integer_keys`` (BIGINT, booleans as 0 and 1) where they are text or
    integers. Its memory is the group's distinct cells, never its rows. It applies (the
    second Column, which Spark folds to a constant when it plans the query) where both sides
    are of one of ``kinds`` (:data:`CLASS_KINDS`): text without a collation (compared by its
    bytes, as Spark compares it), integers, booleans, or floating-point numbers (-0.0 as 0.0,
    every NaN one class). Decimals, dates, text under a collation and sides of two kinds are
    not counted.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> from pyspark.sql import functions as F
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([("b", "a"), ("a", "a"), ("b", "b")], "a string, p string")
    >>> counted = class_cells(df.a, df.p, F.lit(1.0))
    >>> s = counted and df.agg(counted[0].alias("s"), F.first(counted[1]).alias("ok")).first()
    >>> s is None or (s.ok, s.s.n, s.s.actual, s.s.predicted, s.s.correct) == (
    ...     True, 3, [1, 2], [2, 1], [1, 1]
    ... )
    True
    >>> s is None or [tuple(c) for c in s.s.cells] == [(0, 0, 1, 1), (1, 0, 1, 0), (1, 1, 1, 1)]
    True
    """

    def of(side: Column, kind: str) -> Column:  # Spark folds typeof to a constant
        return F.typeof(side).rlike(CLASS_KINDS[kind][0])

    applies = reduce(operator.or_, (of(actual, kind) & of(predicted, kind) for kind in kinds))
    sides: list[Column] = []
    for side in (actual, predicted):
        values = (side.cast("string").cast("binary"), side.cast("long"), side.cast("double"))
        for at, (_, dtype) in enumerate(CLASS_FIELDS):
            read = [of(side, kind) for kind in kinds if CLASS_KINDS[kind][1] == at]
            if not read:
                sides.append(F.lit(None).cast(dtype))
                continue
            sides.append(F.when(reduce(operator.or_, read), values[at]))
    call = _called(
        "weighted_class_cells" if weighted else "class_cells",
        *sides,
        F.when(applies, weight.cast("double")),
    )
    return None if call is None else (call, applies)


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


def counts_labels(frame: DataFrame, label_type: T.DataType) -> bool:
    """Whether :func:`label_counts` counts lists of ``label_type`` over ``frame``'s session:
    text without a collation or integers, a classic session, the jar used there."""
    text = isinstance(label_type, T.StringType) and label_type.simpleString() == "string"
    if not (text or isinstance(label_type, T.IntegralType)):
        return False  # a collation (Spark compares by it), or any other type
    return _switched_on(_frame_session(frame))


def _frame_session(frame: DataFrame) -> Any:
    """``frame``'s classic session, or None (a Spark Connect DataFrame)."""
    spark = getattr(frame, "sparkSession", None)
    if getattr(frame, "_jdf", None) is None or getattr(spark, "_jsparkSession", None) is None:
        return None
    return spark


def counts_cells(frame: DataFrame, types: Sequence[T.DataType]) -> bool:
    """Whether :func:`class_cells` counts classes of ``types`` (both sides) over ``frame``'s
    session: classes of a kind it counts (:func:`counts_classes`), a classic session, the jar
    used and loaded there."""
    spark = _frame_session(frame) if counts_classes(types) else None
    return spark is not None and _switched_on(spark) and _loaded(spark) is not None


def label_counts(
    rows: DataFrame, groups: Sequence[str], weighted: bool = False, text: bool = False
) -> DataFrame | None:
    """Each group's per-label counts and row-statistics histogram from mlsql's Java aggregate
    (``native/spark/LabelCounts.java``), where :func:`counts_labels` says it is used; None
    where the jar fails to load.

    ``rows`` holds the group columns ``groups`` and the lists ``__a`` and ``__p``, both of one
    type (labels :func:`counts_labels` counts); with ``weighted``, the weights ``__w``
    (DOUBLE; a row with a NULL one is unknown), which the counts sum (exactly, as
    :func:`mlsql.spark.exact.limb_sum_sql`: DOUBLE counts). The result has the group columns
    and ``__cells``, a struct whose ``cells`` are (label, row_tp, row_n_actual,
    row_n_predicted, tp, fn, fp, row): a label's counts (row statistics NULL, ``row`` 0), the
    rows with each (tp, |A|, |P|) (label NULL, label counts 0), and in a group with an
    unknown row (a NULL list), one row of NULL keys and zero counts. The aggregate's memory
    is the distinct labels and row statistics of a group, not its rows.

    With ``text`` (the labels are text) and no weights, the aggregate is handed each row's
    labels as codes (``LabelCodes``), made in Spark's generated code before Spark would
    copy the lists into the aggregate's rows; a row without codes (one Spark evaluates
    outside a task, as it evaluates a projection of a local relation) hands over its lists,
    with the same counts.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> from pyspark.sql import types as T
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.sql("SELECT 0 AS g, array('x', 'y', 'x') AS __a, array('x') AS __p")
    >>> used = counts_labels(df, T.StringType())
    >>> counted = label_counts(df, ["g"], text=True) if used else None
    >>> counted is None or sorted(
    ...     (r.label, r.tp, r.fn, r.fp)
    ...     for r in counted.selectExpr("inline(__cells.cells)").collect()
    ...     if r.label is not None
    ... ) == [("x", 1, 0, 0), ("y", 0, 1, 0)]
    True
    """
    spark = rows.sparkSession
    loaded = _loaded(spark)
    if loaded is None:
        return None
    if text and not weighted:
        return loaded.coded_counts(spark, rows, groups)
    weight = F.col("__w") if weighted else None
    counted = loaded.label_counts(spark, F.col("__a"), F.col("__p"), weight)
    return rows.groupBy(*groups).agg(counted.alias("__cells"))
