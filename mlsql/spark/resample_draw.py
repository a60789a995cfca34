"""Poisson bootstrap weights drawn in Spark's executors from a counter-based stream.

Rows with equal statistics are exchangeable, and the sum of m independent
Poisson(1) weights is Poisson(m); so each distinct statistics tuple, seen m
times in its group, draws one Poisson(m) weight per resample r. This is the
row-level Poisson bootstrap exactly in distribution, and it needs no row id:
a tuple is named by its content, so the draws do not depend on how the data
is partitioned (``monotonically_increasing_id`` would).

The construction is the DuckDB macros' (:mod:`mlsql._duckdb.families.resample`):

1. The uniform u of (tuple, r) is ``((h >>> 11) + 0.5) / 2^53`` where h is
   Spark's ``xxhash64`` of (seed as text, r, then for each key column its
   NULL flag and its value). Spark's hash skips a NULL, hence the flag:
   (NULL, x) and (x, NULL) hash apart. DuckDB's ``hash`` is another function,
   so the two engines draw different numbers from the same seed; their
   intervals agree within Monte Carlo error.
2. The draw is the smallest k with CDF_m(k) >= u (inverse CDF), exact up to
   double rounding for every m: Poisson(m)'s CDF is tabled on the driver
   over k in m +- (12 sqrt(m) + 12) (the mass left out is below 1e-25),
   normalised by its total, for each distinct m only (at most sqrt(2 n)
   values over n rows). A guide of :data:`CELLS` cells of u gives the range
   of k each cell can reach, so the executor scans a few CDF values per
   draw (``filter`` over a ``slice``) instead of the whole table.

Tuples drawing k = 0 are dropped: they weigh nothing in that resample.

Fisher's randomization test (:mod:`mlsql.spark.resample_tests`) draws from the same
construction with another law: Binomial(m, 1/2), the number of a tuple's m ids
whose sign flips (:func:`half_binomial_cdf`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

#: Poisson(m) is tabled over m +- (12 sqrt(m) + 12), as in the DuckDB macros
SPREAD = 12
#: 2^53: a 53-bit integer over it is a uniform double in [0, 1)
TWO_53 = float(2**53)
#: cells of the guide table: the draws of a cell of u scan only its range of k
CELLS = 256
#: the column names this module adds
RESAMPLE, DRAW = "__mlsql_r", "__mlsql_k"


def uniform(seed: int, resample: Column, keys: Sequence[Column]) -> Column:
    """The uniform in (0, 1) of a tuple (``keys``) in ``resample`` under ``seed``.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(1, None), (None, 1)], "a int, b int")
    >>> u = [r[0] for r in df.select(uniform(0, F.lit(0), [df.a, df.b])).collect()]
    >>> u[0] != u[1] and all(0 < x < 1 for x in u)
    True
    """
    parts: list[Column] = [F.lit(str(seed)), resample]
    for key in keys:
        parts += [key.isNull(), key]
    bits = F.shiftrightunsigned(F.xxhash64(*parts), 11)
    return (bits.cast("double") + F.lit(0.5)) / F.lit(TWO_53)


def cdf(m: int) -> tuple[int, np.ndarray]:
    """(lowest k, CDF over k from it) of Poisson(m), normalised to end at 1.

    Examples
    --------
    >>> lo, c = cdf(1)
    >>> lo, round(float(c[0]), 6), float(c[-1])
    (0, 0.367879, 1.0)
    """
    lo = max(0, math.floor(m - SPREAD * math.sqrt(m) - SPREAD))
    hi = math.ceil(m + SPREAD * math.sqrt(m) + SPREAD)
    k = np.arange(lo, hi + 1, dtype=float)
    log_pmf = k * math.log(m) - m - np.array([math.lgamma(x + 1) for x in k])
    running = np.cumsum(np.exp(log_pmf))
    return lo, running / running[-1]


def half_binomial_cdf(m: int) -> tuple[int, np.ndarray]:
    """(lowest k, CDF over k from it) of Binomial(m, 1/2), over k in m/2 +- (12 sqrt(m)/2 + 12)
    within [0, m] (the whole support up to m = 192; the mass left out is below 1e-25, as
    the DuckDB macro's ``_mlsql_half_binomial_cdf``), normalised to end at 1.

    Examples
    --------
    >>> lo, c = half_binomial_cdf(2)  # from lgamma: within a few ulps of 1/4, 3/4 and 1
    >>> lo, [round(float(x), 12) for x in c]
    (0, [0.25, 0.75, 1.0])
    """
    spread = SPREAD * math.sqrt(m) / 2 + SPREAD
    lo = max(0, math.floor(m / 2 - spread))
    hi = min(m, math.ceil(m / 2 + spread))
    k = np.arange(lo, hi + 1, dtype=float)
    log_pmf = (
        math.lgamma(m + 1)
        - m * math.log(2)
        - np.array([math.lgamma(x + 1) + math.lgamma(m - x + 1) for x in k])
    )
    running = np.cumsum(np.exp(log_pmf))
    return lo, running / running[-1]


#: a law of draws: m's (lowest k, CDF over k from it)
Law = Callable[[int], tuple[int, np.ndarray]]


def guide(values: np.ndarray) -> list[int]:
    """For each cell c of u (and the end): the first position whose CDF is >= c / CELLS.

    Examples
    --------
    >>> guide(np.array([0.5, 1.0]))[:3], guide(np.array([0.5, 1.0]))[-1]
    ([0, 0, 0], 1)
    """
    edges = np.arange(CELLS + 1) / CELLS
    first = np.searchsorted(values, edges, side="left")
    return [int(x) for x in np.minimum(first, len(values) - 1)]


def one(u: Column, law: Law = cdf) -> Column:
    """The draw of m = 1 (Poisson(1) unless ``law`` says otherwise) of the uniform ``u``: the
    smallest k with CDF_1(k) >= u, read from the same table as every other m (:func:`cdf`)
    by a chain of comparisons.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(0.3,), (0.5,), (0.99,)], "u double")
    >>> [r[0] for r in df.select(one(df.u)).collect()]  # CDF(0) = 0.37, CDF(1) = 0.74
    [0, 1, 4]
    """
    lo, values = law(1)
    draw = F.lit(lo + len(values) - 1).cast("long")
    for k in range(len(values) - 2, -1, -1):
        draw = F.when(u <= F.lit(float(values[k])), F.lit(lo + k).cast("long")).otherwise(draw)
    return draw


def table(df: DataFrame, counts: Sequence[int], law: Law = cdf) -> DataFrame:
    """The tables of ``law`` (Poisson) of the distinct ``counts`` m: (m, lo, guide, cdf), one
    row each."""
    rows = []
    for m in sorted({int(c) for c in counts}):
        lo, values = law(m)
        rows.append((m, lo, guide(values), [float(v) for v in values]))
    schema = T.StructType(
        [
            T.StructField("__mlsql_m", T.LongType(), False),
            T.StructField("__mlsql_lo", T.LongType(), False),
            T.StructField("__mlsql_guide", T.ArrayType(T.IntegerType(), False), False),
            T.StructField("__mlsql_cdf", T.ArrayType(T.DoubleType(), False), False),
        ]
    )
    return df.sparkSession.createDataFrame(rows, schema)


def drawn(tuples: DataFrame, keys: Sequence[str], m: str, seed: int, n_resamples: int) -> DataFrame:
    """``tuples`` once per resample r (column :data:`RESAMPLE`) with its Poisson(m) draw k > 0
    (:data:`DRAW`); ``keys`` name the tuple (group values and statistics), ``m`` its rows."""
    resample = F.explode(F.sequence(F.lit(0).cast("long"), F.lit(n_resamples - 1).cast("long")))
    rows = tuples.select("*", resample.alias(RESAMPLE))
    u = uniform(seed, F.col(RESAMPLE), [F.col(k) for k in keys])
    out = inverse(rows.withColumn("__mlsql_u", u), m, "__mlsql_u", tuples)
    return out.where(F.col(DRAW) > 0).drop("__mlsql_u")


def inverse(
    df: DataFrame, m: str, u: str, counted: DataFrame | None = None, law: Law = cdf
) -> DataFrame:
    """``df`` with :data:`DRAW`: the Poisson(``m``) draw of the uniform ``u`` (inverse CDF;
    ``law`` gives another distribution of m, as :func:`cdf` gives Poisson's).

    ``counted``: a smaller frame holding the same values of ``m`` (read for the tables).

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(1, 0.3), (1, 0.5), (4, 0.99)], "m long, u double")
    >>> [r[-1] for r in inverse(df, "m", "u").collect()]  # CDF(0) = 0.37, CDF(1) = 0.74
    [0, 1, 9]
    """
    source = df if counted is None else counted
    counts = [r[0] for r in source.select(m).distinct().collect()]
    poisson = F.broadcast(table(df, counts, law))
    joined = df.join(poisson, F.col(m) == F.col("__mlsql_m"))
    cell = (F.col(u) * F.lit(CELLS)).cast("int")
    start = F.element_at("__mlsql_guide", cell + 1)
    stop = F.element_at("__mlsql_guide", cell + 2)
    window = F.slice("__mlsql_cdf", start + 1, stop - start + 1)
    below = F.size(F.filter(window, lambda c: c < F.col(u)))
    draw = F.col("__mlsql_lo") + start + below
    if 1 in counts:  # most tuples of numbers: a chain of comparisons, not a scan of an array
        draw = F.when(F.col(m) == 1, one(F.col(u), law)).otherwise(draw)
    out = joined.withColumn(DRAW, draw)
    return out.drop("__mlsql_m", "__mlsql_lo", "__mlsql_guide", "__mlsql_cdf")
