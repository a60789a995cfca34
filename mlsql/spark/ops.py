"""The primitives the formulas need, as PySpark Columns.

:class:`SparkOps` implements the ``Ops`` protocol of :mod:`mlsql._formulas`
with a *static* ``zero_division`` (a validated
:class:`~mlsql._params.ZeroDivision`, known when the Column is built), so
``skips_undefined`` is a real bool and averages under 0, 1 or 'diagnose' skip
the NaN bookkeeping entirely.

Division and ANSI mode: Spark 4 runs with ``spark.sql.ansi.enabled`` on, where
``x / 0`` raises ``DIVIDE_BY_ZERO``. Every ratio of the formulas is written
``when(den == 0, undefined, num / den)``; Spark evaluates a ``CASE`` branch
only for the rows that take it (and constant folding leaves a branch alone
when folding it would raise), so ``num / 0`` is never evaluated.
``tests/test_spark_ansi.py`` checks that on every measure.
"""

from __future__ import annotations

import math
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from mlsql._params import ZeroDivision
from mlsql.spark import jvm
from mlsql.spark.exact_bounds import EXACT_SUM_BOUND, EXACT_SUM_TYPE

#: ln Γ(3/2) = ln(√π / 2), the first term of a half-whole gamma series
LOG_GAMMA_3_2 = math.lgamma(1.5)


def exact_sum(x: Column) -> Column:
    """SQL ``sum`` of DOUBLE values, exact and the same in any order (a DOUBLE ``sum`` drifted
    6e-12 relative at 10M rows, its last digit depending on the partitions). NULL over no
    non-NULL values; NaN where a value is NaN or +inf and -inf are both summed.

    Where mlsql's jar is used (:mod:`mlsql.spark.jvm`), its Java aggregate sums: the exact
    sum rounded once, as Python's ``math.fsum`` rounds it, at any magnitude: ``mse``, ``mae``
    and ``mape`` in one ``agg`` over 10M cached rows took 1.8-3.0 s (6 Dec 2026,
    ``local[2]``, 2-core AMD EPYC, load 1.1-1.8; benchmarks/README.md, "Spark's exact sums
    in Java").

    Otherwise (Spark Connect, the jar not built or switched off) Spark SQL sums each value
    as a ``DECIMAL(38, 18)``, which adds exactly and so in any order, each value rounded to
    18 decimals (5e-19 absolute at most); a group holding a NaN, an infinity or a value of 1e6 or more (where
    1e14 rows could overflow the decimal) is summed as DOUBLE. That form names ``x`` three
    times (the group's largest size, where Spark orders NaN above every number; the decimal
    sum, a ``try_sum`` of a ``try_cast``, NULL rather than an ANSI error where a group
    summed as DOUBLE does not fit it; the DOUBLE sum), and a ``BigDecimal`` a row is its
    cost: the same three took 8.7-9.1 s (same run).

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(0.1,), (0.2,), (0.3,)], "x double")
    >>> df.agg(exact_sum(F.col("x"))).first()[0]  # 0.1 + 0.2 + 0.3 in DOUBLE: 0.6000000000000001
    0.6
    >>> df = spark.createDataFrame([(0.1,), (float("nan"),), (1e30,)], "x double")
    >>> df.agg(exact_sum(F.col("x"))).first()[0]
    nan
    """
    summed = jvm.exact_sum(x)
    return summed if summed is not None else decimal_sum(x)


def decimal_sum(x: Column) -> Column:
    """:func:`exact_sum` in Spark SQL: each value below 1e6 summed as a ``DECIMAL(38, 18)``,
    a group with a NaN, an infinity or a larger value as DOUBLE.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(0.1,), (0.2,), (0.3,)], "x double")
    >>> df.agg(decimal_sum(F.col("x"))).first()[0]
    0.6
    """
    values = x.cast("double")
    exact = F.try_sum(values.try_cast(EXACT_SUM_TYPE)).cast("double")
    return F.when(F.max(F.abs(values)) >= EXACT_SUM_BOUND, F.sum(values)).otherwise(exact)


def column(value: Any) -> Column:
    """``value`` as a Column (a Python value becomes a literal; None a NULL)."""
    return value if isinstance(value, Column) else F.lit(value)


class SparkOps:
    """Formula primitives for Spark.

    Examples
    --------
    >>> from mlsql._params import check_zero_division
    >>> ops = SparkOps()
    >>> ops.skips_undefined(check_zero_division("ignore", "samples_f1"))
    True
    >>> ops.skips_undefined(check_zero_division(0, "samples_f1"))
    False
    """

    def when(self, condition: Any, then: Any, otherwise: Any) -> Column:
        """``then`` where ``condition`` holds, else ``otherwise`` (also where it is NULL)."""
        return F.when(column(condition), column(then)).otherwise(column(otherwise))

    def undefined(self, zero_division: ZeroDivision, nothing_to_score: Any) -> Any:
        """The value of an undefined ratio under ``zero_division``."""
        if not isinstance(zero_division, ZeroDivision):
            raise TypeError("SparkOps needs a validated ZeroDivision (mlsql._params)")
        null = F.lit(None).cast("double")
        return zero_division.undefined(self.when, nothing_to_score, constant=F.lit, null=null)

    def skips_undefined(self, zero_division: ZeroDivision) -> bool:
        """Whether averages leave undefined values out (NaN and 'ignore')."""
        return zero_division.skips_undefined

    def label_set(self, labels: Column) -> Column:
        """The list primitives of the set helpers (:class:`~mlsql.measures.multilabel.ListOps`):
        ``array_except(x, array(NULL))`` keeps each label once, without NULL."""
        return F.array_sort(F.array_except(labels, F.array(F.lit(None))))

    def both(self, a: Column, b: Column) -> Column:
        return F.array_intersect(a, b)

    def only(self, a: Column, b: Column) -> Column:
        return F.array_except(a, b)

    def either(self, a: Column, b: Column) -> Column:
        return F.array_union(a, b)

    def sum(self, x: Any) -> Column:
        """SQL ``sum``: NULL over no non-NULL values (Spark's ``sum`` already is)."""
        return F.sum(column(x))

    def mean(self, x: Any) -> Column:
        """SQL ``avg``, exact: NULL over no non-NULL values.

        The formulas average per-row ratios and 0/1 values (the samples
        averages, subset accuracy, the ranking means): each is summed as a
        ``DECIMAL(38, 18)``, which adds exactly and so in any order, and the
        sum is divided once. ``avg`` of DOUBLE drifted by 1.6e-11 relative at 3M
        rows, with a last digit depending on the partitions. Each value is
        rounded to 18 decimals (5e-19 absolute at most). A group holding a NaN,
        an infinity or a value of 1e6 or more (where 1e14 rows could overflow
        the decimal) is averaged as DOUBLE, as before.
        """
        values = column(x).cast("double")
        n = F.count(values)
        return F.when(n == 0, None).otherwise(exact_sum(values) / n)

    def count(self, x: Any) -> Column:
        """Non-NULL values of ``x``."""
        return F.count(column(x))

    def error_if(self, condition: Any, value: Any, template: str, got: Any) -> Column:
        """``value``, or Spark's ``raise_error`` with ``template`` ({} = ``got``) where ``condition``."""
        before, after = template.split("{}")
        text = F.concat(F.lit(before), column(got).cast("string"), F.lit(after))
        return F.when(column(condition), F.raise_error(text)).otherwise(column(value))

    def is_nan(self, x: Any) -> Column:
        """True where ``x`` is NaN (false where it is NULL)."""
        return F.isnan(column(x))

    def nan(self) -> Column:
        """NaN."""
        return F.lit(float("nan"))

    # beyond the core protocol: formulas of other families use these ---------------
    def log2(self, x: Any) -> Column:
        """Base-2 logarithm."""
        return F.log2(column(x))

    def sqrt(self, x: Any) -> Column:
        """Square root."""
        return F.sqrt(column(x))

    def let(self, values: tuple[Any, ...], body: Any, name: str = "") -> Column:
        """``body(*values)``, computing each value once however often ``body`` names it (a
        lambda over a one-element array: a tree naming a large value many times grows Spark's
        plan as often)."""
        names = [f"v{i}" for i in range(len(values))]
        packed = F.struct(
            *(column(v).cast("double").alias(n) for v, n in zip(values, names, strict=True))
        )
        return F.transform(F.array(packed), lambda s: body(*(s[n] for n in names)))[0]

    def exp(self, x: Any) -> Column:
        """e to the power ``x``."""
        return F.exp(column(x))

    def let_series(self, values: tuple[Any, ...], body: Any, name: str) -> Any:
        """:meth:`let` for a body that sums a series (Polars' differs)."""
        return self.let(values, body, name)

    def gamma_series(self, count: Any, a0: Any, y: Any) -> Column:
        """Σ_{i < count} y^(a0 + i) e^-y / Γ(a0 + i + 1) (``count`` whole, ``y`` > 0, ``a0`` 0
        or 1/2): one fold over i, each term's logarithm the previous one's plus
        ln y - ln(a0 + i) (Spark has no lgamma; logarithms, so no term underflows first)."""
        n, a, yy = column(count).cast("long"), column(a0).cast("double"), column(y).cast("double")
        log_y = F.log(F.when(yy > 0, yy).otherwise(F.lit(1.0)))
        first = a * log_y - yy - F.when(a > 0, F.lit(LOG_GAMMA_3_2)).otherwise(F.lit(0.0))
        start = F.struct(first.alias("log"), F.exp(first).alias("sum"))

        def step(acc: Column, i: Column) -> Column:
            log = acc["log"] + log_y - F.log(a + i)
            return F.struct(log.alias("log"), (acc["sum"] + F.exp(log)).alias("sum"))

        more = F.aggregate(F.sequence(F.lit(1).cast("long"), n - 1), start, step)["sum"]
        return F.when(n <= 0, F.lit(0.0)).when(n == 1, F.exp(first)).otherwise(more)

    def floor(self, x: Any) -> Column:
        """The largest whole number <= ``x``."""
        return F.floor(column(x))

    def pow(self, base: Any, exponent: Any) -> Column:
        """``base ** exponent``."""
        return F.pow(column(base), column(exponent))
