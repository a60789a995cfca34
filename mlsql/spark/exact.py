"""Exact sums of DOUBLE values in any order, as fixed-point parts summed as BIGINT.

A DOUBLE ``sum`` adds in the order of the partitions, so its last digits change with
them (6e-12 relative at 10M rows). Without mlsql's jar, :func:`mlsql.spark.ops.exact_sum`
sums each value as a ``DECIMAL(38, 18)``: exact, but a Java ``BigDecimal`` a row. The
centred sums of ``ms.evaluate``'s regression plan were five such sums, and made
``evaluate(mse, mae, r2)`` 5x slower than DOUBLE sums would (17.0 s against 3.3 s on 10M
rows, `local[2]` on an idle 2-core machine, 4 Dec 2026; the benchmark is in
benchmarks/README.md). mlsql's Java exact sum (:func:`mlsql.spark.jvm.exact_sum`) cost
more there than these parts: 30.5 s against 24.5 s for that ``evaluate`` over 100M rows
(6 Dec 2026, `local[2]`, 2 GB driver, 2-core AMD EPYC, nothing else running), so the
plan keeps them.

Here a value ``v`` below :data:`BOUND` is cut into its whole part and :data:`LIMBS` parts
of :data:`LIMB_BITS` bits of its fraction, each a BIGINT with the sign of ``v``::

    v = trunc(v) + l1 / 2**21 + l2 / 2**42 + l3 / 2**63     (l3 rounded: 2**-64 at most)

Each part is summed as BIGINT, which is exact, so the sums are the same in any order; the
carries are then moved up (:func:`_combined`) and the total becomes one DOUBLE. A fraction
part is below 2**21, so 2**42 rows of a group are summed before a BIGINT could overflow
(Spark's ANSI mode raises there). A group holding a NaN, an infinity or a value of
:data:`BOUND` or more is summed as DOUBLE.

The plan names the value about ten times (each part, the bound's test), where the decimal
sum names it three: it suits values that are arithmetic over a row's columns (the centred
terms, a weight). A value that is itself costly per row or large as a plan (per-row set
operations, the bootstrap's draws) keeps :func:`~mlsql.spark.ops.exact_sum`: with it, a
bootstrap of the score measures over 80 rows ran out of the test's 20 minutes.

The formula is written once (:func:`_sum`) and rendered twice: as PySpark Columns
(:func:`limb_sum`) and as Spark SQL text (:func:`limb_sum_sql`) for the plans built as
text. A plan of many such sums names its terms as columns first (:class:`Terms`): written
out inside the aggregate, thirteen sums of centred terms made a hash aggregate whose
generated Java passed the JVM's 64 KB a method, and Spark ran it interpreted, 28 s for 50
rows.
"""

from __future__ import annotations

from typing import Any, Protocol

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from mlsql.spark.exact_bounds import EXACT_SUM_BOUND

#: values of this size or more are summed as DOUBLE (the decimal sum's bound)
BOUND = EXACT_SUM_BOUND
#: the bits of each fraction part
LIMB_BITS = 21
#: the fraction parts: 63 bits, so each value is kept to 2**-64 (5.4e-20)
LIMBS = 3


class _Dialect(Protocol):
    """What :func:`_sum` needs of a rendering: Columns (:class:`_Columns`) or SQL text
    (:class:`_Text`)."""

    def number(self, x: float) -> Any: ...
    def add(self, a: Any, b: Any) -> Any: ...
    def minus(self, a: Any, b: Any) -> Any: ...
    def times(self, a: Any, b: Any) -> Any: ...
    def at_least(self, a: Any, b: Any) -> Any: ...
    def either(self, a: Any, b: Any) -> Any: ...
    def when(self, condition: Any, then: Any, otherwise: Any) -> Any: ...
    def cast(self, x: Any, type_: str) -> Any: ...
    def low_bits(self, x: Any) -> Any: ...
    def carry(self, x: Any) -> Any: ...
    def call(self, function: str, *args: Any) -> Any: ...


def _parts(d: _Dialect, v: Any) -> list[Any]:
    """The whole part of ``v`` and its :data:`LIMBS` fraction parts, as BIGINTs with its sign.

    ``v * 2**(21 k)`` is exact (the product only moves the exponent) and its cast to BIGINT
    truncates, so each part is the difference of two truncations, ``trunc(v 2**21k) -
    trunc(v 2**21(k-1)) 2**21``; the last is the rounded rest (``rint``; ``x - trunc(x)`` is
    exact). Casts and BIGINT arithmetic: a DOUBLE ``%`` (``fmod``) cost 5x more."""
    step = d.number(2**LIMB_BITS)
    scaled = [d.times(v, d.number(float(2 ** (LIMB_BITS * k)))) for k in range(LIMBS)]
    truncated = [d.cast(x, "bigint") for x in scaled]
    out = [truncated[0]]
    for k in range(1, LIMBS):
        out.append(d.minus(truncated[k], d.times(truncated[k - 1], step)))
    rest = d.times(d.minus(scaled[-1], truncated[-1]), d.number(float(2**LIMB_BITS)))
    out.append(d.cast(d.call("rint", rest), "bigint"))
    return out


def _combined(d: _Dialect, sums: list[Any]) -> Any:
    """The DOUBLE the parts' BIGINT ``sums`` add up to: each part's carry moved into the next
    larger (an arithmetic shift, so floor division, and the low bits left are 0 or more),
    the fraction then one 63-bit BIGINT with the total's sign. Below 1 in size the total
    is rounded once (the fraction's DOUBLE); above, twice at most."""
    carried = sums[-1]
    low: list[Any] = []  # the fraction's parts, the smallest first
    for s in reversed(sums[:-1]):
        low.append(d.low_bits(carried))
        carried = d.add(s, d.carry(carried))
    fraction = low[-1]
    for part in reversed(low[:-1]):
        fraction = d.add(d.times(fraction, d.number(2**LIMB_BITS)), part)
    # a negative total: the fraction takes its sign (one less 2**63, as two 2**62), so the
    # whole and the fraction do not cancel when they become DOUBLEs
    positive = d.at_least(carried, d.number(0))
    half = d.number(-(2 ** (LIMB_BITS * LIMBS - 1)))
    whole = d.when(positive, carried, d.add(carried, d.number(1)))
    fraction = d.when(positive, fraction, d.add(d.add(fraction, half), half))
    scale = d.number(2.0 ** -(LIMB_BITS * LIMBS))
    return d.add(d.cast(whole, "double"), d.times(d.cast(fraction, "double"), scale))


def _split(d: _Dialect, value: Any) -> tuple[Any, list[Any]]:
    """Per row: whether ``value`` (DOUBLE) is summed as DOUBLE (NaN, infinite or large), and
    its parts (:func:`_parts`; 0 when it is summed as DOUBLE, NULL when it is NULL)."""
    plain = d.either(d.call("isnan", value), d.at_least(d.call("abs", value), d.number(BOUND)))
    kept = d.when(plain, d.number(0.0), value)  # NULL when value is (the test is then NULL)
    return plain, _parts(d, kept)


def _total(d: _Dialect, any_plain: Any, plain_sum: Any, part_sums: list[Any]) -> Any:
    """The group's sum from its aggregates: whether any value is summed as DOUBLE, the
    DOUBLE sum, and the parts' sums."""
    return d.when(any_plain, plain_sum, _combined(d, part_sums))


def _sum(d: _Dialect, value: Any) -> Any:
    """The exact sum of ``value`` (DOUBLE) over the group: NULL over no non-NULL values."""
    plain, parts = _split(d, value)
    return _total(d, d.call("max", plain), d.call("sum", value), [d.call("sum", p) for p in parts])


class _Columns:
    """:func:`_sum` as PySpark Columns."""

    def number(self, x: float) -> Column:
        return F.lit(x)

    def add(self, a: Column, b: Column) -> Column:
        return a + b

    def minus(self, a: Column, b: Column) -> Column:
        return a - b

    def times(self, a: Column, b: Column) -> Column:
        return a * b

    def at_least(self, a: Column, b: Column) -> Column:
        return a >= b

    def either(self, a: Column, b: Column) -> Column:
        return a | b

    def when(self, condition: Column, then: Column, otherwise: Column) -> Column:
        return F.when(condition, then).otherwise(otherwise)

    def cast(self, x: Column, type_: str) -> Column:
        return x.cast(type_)

    def low_bits(self, x: Column) -> Column:
        return x.bitwiseAND(F.lit(2**LIMB_BITS - 1))

    def carry(self, x: Column) -> Column:
        return F.shiftright(x, LIMB_BITS)

    def call(self, function: str, *args: Column) -> Column:
        return getattr(F, function)(*args)  # type: ignore[no-any-return]


class _Text:
    """:func:`_sum` as Spark SQL text."""

    def number(self, x: float) -> str:
        return f"{x!r}D" if isinstance(x, float) else f"{x}L"

    def add(self, a: str, b: str) -> str:
        return f"({a} + {b})"

    def minus(self, a: str, b: str) -> str:
        return f"({a} - {b})"

    def times(self, a: str, b: str) -> str:
        return f"({a} * {b})"

    def at_least(self, a: str, b: str) -> str:
        return f"({a} >= {b})"

    def either(self, a: str, b: str) -> str:
        return f"({a} OR {b})"

    def when(self, condition: str, then: str, otherwise: str) -> str:
        return f"CASE WHEN {condition} THEN {then} ELSE {otherwise} END"

    def cast(self, x: str, type_: str) -> str:
        return f"CAST({x} AS {type_.upper()})"

    def low_bits(self, x: str) -> str:
        return f"({x} & {2**LIMB_BITS - 1}L)"

    def carry(self, x: str) -> str:
        return f"shiftright({x}, {LIMB_BITS})"

    def call(self, function: str, *args: str) -> str:
        return f"{function}({', '.join(args)})"


def limb_sum(x: Column) -> Column:
    """SQL ``sum`` of DOUBLE values, exact and so the same in any order (see the module).

    Each value below 1e6 is kept to 2**-64 (5.4e-20); a group holding a NaN, an infinity
    or a value of 1e6 or more is summed as DOUBLE. NULL over no non-NULL values.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(0.1,), (0.2,), (0.3,)], "x double")
    >>> df.agg(limb_sum(F.col("x"))).first()[0]  # 0.1 + 0.2 + 0.3 in DOUBLE: 0.6000000000000001
    0.6
    """
    return _sum(_Columns(), x.cast("double"))  # type: ignore[no-any-return]


def limb_sum_sql(value: str) -> str:
    """:func:`limb_sum` as Spark SQL text, of the DOUBLE expression ``value``.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.getOrCreate()
    >>> spark.sql(f"SELECT {limb_sum_sql('x')} FROM VALUES (0.1D), (0.2D), (0.3D) AS t(x)").first()[0]
    0.6
    """
    return _sum(_Text(), f"CAST({value} AS DOUBLE)")  # type: ignore[no-any-return]


class Terms:
    """Exact sums (:func:`limb_sum`) of terms that are first projected as columns.

    Call it on a term (a DOUBLE Column over a row's columns) to get the aggregate of its
    exact sum; then :meth:`project` the rows before aggregating: it adds each term's
    column and its parts' columns (:func:`_split`), which the aggregate sums. A term given
    twice (the same expression) is summed once. The aggregate then holds plain sums of
    columns, however many exact sums a plan takes: its generated code stays small, and the
    sums are built as SQL text, one call to the JVM each.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(0.1,), (0.2,), (0.3,)], "x double")
    >>> sums = Terms("__t")
    >>> total = sums(F.col("x") * 2)
    >>> sums.project(df).agg(total).first()[0]  # 1.2000000000000002 as a DOUBLE sum
    1.2
    """

    def __init__(self, prefix: str) -> None:
        if not prefix.isidentifier():  # the columns' names are quoted in SQL text
            raise ValueError(f"a prefix of letters, digits and _, not {prefix!r}")
        self.prefix = prefix
        self.names: dict[str, str] = {}  # a term's expression (its text): its column's name
        self.terms: list[Column] = []

    def _column(self, k: int, what: str = "") -> str:
        """The name of term ``k``'s column (``what``: of its part, ``_plain`` or ``_j``)."""
        return f"{self.prefix}{k}{what}"

    def __call__(self, term: Column) -> Column:
        key = str(term)
        if key not in self.names:
            self.names[key] = self._column(len(self.names))
            self.terms.append(term.cast("double").alias(self.names[key]))
        k = list(self.names).index(key)
        parts = [f"sum(`{self._column(k, f'_{j}')}`)" for j in range(LIMBS + 1)]
        plain = f"max(`{self._column(k, '_plain')}`)"
        return F.expr(_total(_Text(), plain, f"sum(`{self._column(k)}`)", parts))

    def project(self, rows: DataFrame) -> DataFrame:
        """``rows``, the terms' columns and their parts' columns."""
        if not self.terms:
            return rows
        rows = rows.select("*", *self.terms)
        split = []
        for k in range(len(self.terms)):
            plain, parts = _split(_Text(), f"`{self._column(k)}`")
            split.append(F.expr(plain).alias(self._column(k, "_plain")))
            split += [F.expr(p).alias(self._column(k, f"_{j}")) for j, p in enumerate(parts)]
        return rows.select("*", *split)
