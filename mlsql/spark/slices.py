"""``slices`` for Spark: every slice's statistic tuples from one ``groupingSets`` job.

Spark computes only the statistic tuples: each row's candidate values
(numeric candidates binned at the quantile edges of
:func:`mlsql._slices.front.bin_positions`) and statistics (tp, |A|, |P| of
its label sets, or its (actual, predicted) cell, and its checked weight),
grouped by every grouping set of candidates at once and by none (all the
data), each with its number of rows. The driver collects those tuples, at
most (slices + 1) x distinct tuples, never the rows; :mod:`mlsql._slices.front`
names the slices and :mod:`mlsql._slices.stats` resamples them with numpy, as
for DuckDB and Polars: the same seed gives the same table in every engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql._front.engine import frame_words
from mlsql._slices import front, function
from mlsql.spark import resample as R
from mlsql.spark._engine import SPARK
from mlsql.spark._types import bound


def _numeric(dtype: T.DataType) -> bool:
    """Whether a candidate is a number (binned into quantiles), not a category."""
    return isinstance(dtype, T.NumericType)


def _shares(n: int, n_bins: int) -> list[float]:
    """The shares whose ``percentile_disc`` over n values is the value at each of
    :func:`~mlsql._slices.front.bin_positions`: (position + 1/2) / n, which no rounding
    moves off the position (Spark 4's ``percentile_disc`` is SQL's: the first value whose
    share of the values at or below it reaches the share).

    Examples
    --------
    >>> _shares(10, 4)
    [0.05, 0.25, 0.45, 0.75]
    """
    return [(p + 0.5) / n for p in front.bin_positions(n, n_bins)]


def _cuts(df: DataFrame, req: front.Request, numeric: list[int]) -> dict[int, list[Any]]:
    """The bin edges of each numeric candidate (by position): its count and largest value
    (one job), then the values at :func:`~mlsql._slices.front.bin_positions` (one more)."""
    if not numeric:
        return {}
    cols = [bound(df, req.candidates[i]) for i in numeric]
    found = df.agg(*(f(c) for c in cols for f in (F.count, F.max))).first()
    assert found is not None  # a global aggregate has one row
    counts, tops = list(found)[0::2], list(found)[1::2]
    known = [k for k, n in enumerate(counts) if n]  # a column of NULLs only has no bins
    lower: dict[int, list[Any]] = {}
    if known:
        exprs = []
        for k in known:
            name = req.candidates[numeric[k]]
            quoted = "`" + name.replace("`", "``") + "`"
            dtype = df.schema[name].dataType
            for j, share in enumerate(_shares(counts[k], req.n_bins)):
                # percentile_disc has no Column function; the name is quoted, the share a number
                sql = f"percentile_disc({share!r}) WITHIN GROUP (ORDER BY {quoted})"
                exprs.append(F.expr(sql).cast(dtype).alias(f"q{k}_{j}"))
        row = df.agg(*exprs).first()
        assert row is not None
        values = list(row)
        lower = {k: values[i * req.n_bins : (i + 1) * req.n_bins] for i, k in enumerate(known)}
    return {i: front.edges(lower.get(k, []), tops[k]) for k, i in enumerate(numeric)}


def _bin(col: Column, cuts: Sequence[Any]) -> Column:
    """A row's bin among ``cuts`` (:func:`mlsql._slices.front.bin_of`), NULL for NULL."""
    if not cuts:
        return F.lit(None).cast("int")
    out = F.when(col.isNull(), F.lit(None).cast("int"))
    for i, e in enumerate(cuts[1:-1]):
        out = out.when(col < F.lit(e), F.lit(i))
    return out.otherwise(F.lit(len(cuts) - 2))


def tuples(
    df: DataFrame, keys: Sequence[Column], stats: Sequence[Column], sets: Sequence[Sequence[int]]
) -> list[tuple[Any, ...]]:
    """(set, key values..., statistics..., rows m) of every grouping set and distinct tuple.

    ``keys``: each candidate's value (or bin); ``stats``: a row's statistics and weight;
    ``sets``: the positions of the keys of each grouping set. ``set`` is the index in
    ``sets``, -1 for all the data (no key); the keys a set does not group are None.
    One job: ``groupingSets`` of every set with the statistics, and of the statistics alone.
    """
    k = [f"__mlsql_k{i}" for i in range(len(keys))]
    s = [f"__mlsql_s{j}" for j in range(len(stats))]
    rows = df.select(
        *(c.alias(n) for c, n in zip(keys, k, strict=True)),
        *(c.alias(n) for c, n in zip(stats, s, strict=True)),
    )
    grouping = [[*(k[i] for i in positions), *s] for positions in sets] + [list(s)]
    counted = rows.groupingSets(grouping, *k, *s).agg(
        F.grouping_id().alias("__mlsql_gid"), F.count(F.lit(1)).alias("__mlsql_m")
    )
    index = {_mask(len(k), positions): i for i, positions in enumerate(sets)}
    index[(1 << len(k)) - 1] = -1
    out = []
    # the driver holds at most front.MAX_TUPLES + 1 of them: one more says there were too many
    fetched = counted.select("__mlsql_gid", *k, *s, "__mlsql_m").limit(front.MAX_TUPLES + 1)
    for row in fetched.collect():
        values = tuple(row)
        out.append((index[values[0] >> len(s)], *values[1:]))
    return out


def _mask(n: int, positions: Sequence[int]) -> int:
    """The keys' bits of ``grouping_id()`` for a grouping set: bit n-1-i is 1 where key i is
    not grouped (the statistics, grouped in every set, are its lowest bits, all 0)."""
    return sum(1 << (n - 1 - i) for i in range(n) if i not in positions)


_WORDS = function.Words(
    **frame_words(SPARK),
    prefix=SPARK.words["prefix"],
    how=(
        " (Spark computes the slices' statistic tuples, the driver resamples them as the "
        "other engines do)"
    ),
    measure_note=(
        "The driver collects the distinct statistic tuples of every slice, at most a "
        "million (about 500 MB; past that it says so): a few per slice for the label-set "
        "and class measures, about one per row for the regression and score measures "
        "(their exact resamples need each row's numbers: slice a sample of the rows, fewer "
        "candidates or depth 1 past the bound)."
    ),
    notes="""
    One ``groupingSets`` job gives every slice's statistic tuples (numeric
    candidates need two more for their quantile edges, Spark's
    ``percentile_disc``); the driver holds only those tuples, at most
    (slices + 1) x distinct tuples, not the rows. Spark's ``percentile_disc``
    computes in doubles: the edges of integers beyond 2^53 or of decimals of
    more than 15 digits may be off by a rounding.
    """,
    example="""
    >>> from pyspark.sql import SparkSession
    >>> import mlsql.spark as ms
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([("de", ["a"], ["b"]), ("en", ["a"], ["a"])] * 40,
    ...                            "lang string, actual array<string>, predicted array<string>")
    >>> ms.slices(df, "actual", "predicted", "lang", "micro_f1", n_resamples=200).first()[:3]
    ("lang = 'de'", 40, 0.0)
    """,
)


def _slices(df: DataFrame, req: front.Request, a: Mapping[str, Any]) -> DataFrame:
    """``ms.slices`` of the checked call ``req`` (``a``: its arguments)."""
    actual, predicted, sample_weight = a["actual"], a["predicted"], a["sample_weight"]
    checked = req.resampling
    stats = [
        *R._checked(checked, df, actual, predicted),
        R._weight(checked, df, sample_weight),
    ]
    dtypes = [df.schema[c].dataType for c in req.candidates]
    numeric = [i for i, d in enumerate(dtypes) if _numeric(d)]
    cuts = _cuts(df, req, numeric)
    keys = [
        _bin(bound(df, c), cuts[i]) if i in cuts else bound(df, c)
        for i, c in enumerate(req.candidates)
    ]
    rows = tuples(df, keys, stats, req.sets)
    front.check_tuples(req, len(rows))
    return _frame(df, front.finish(req, rows, cuts))


def _frame(df: DataFrame, rows: list[tuple[Any, ...]]) -> DataFrame:
    """The result rows as a DataFrame of :data:`mlsql._slices.front.COLUMNS`."""
    special = {"slice": T.StringType(), "rows": T.LongType(), "significant": T.BooleanType()}
    schema = T.StructType(
        [T.StructField(c, special.get(c, T.DoubleType()), True) for c in front.COLUMNS]
    )
    return df.sparkSession.createDataFrame(rows, schema)


slices = function.slices_function(
    "mlsql.spark",
    _WORDS,
    ("DataFrame", "str | Column", "DataFrame"),
    lambda df: df.columns,
    R._name,
    _slices,
)

#: the public functions of this module (DataFrame in, DataFrame out)
FUNCTIONS = {"slices": slices}
