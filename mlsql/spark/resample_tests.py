"""``compare``'s Student's t and Fisher's randomization tests of numbers in Spark's executors.

``ms.compare(..., test='student' | 'fisher')`` of regression values past the
driver's budget (:data:`mlsql.spark.resample_exec.DRIVER_TUPLES`) computes its
p-values here, over the paired statistics table (one row per distinct pair of
tuples, its ids m), as :mod:`mlsql._resample.paired` computes them on the
driver; only groups x measures rows (and for Fisher's test, groups x
permutations x measures sums in the shuffle) come out of it:

- an id's difference d is the registry formula of the per-row measure (mse, mae,
  mape) over the model row alone minus over the baseline row alone
  (:func:`row_value`); ids where it is NULL or not finite are left out, and so
  are ids weighing 0 on either side. A weight other than 0 and 1 is the
  driver's error (the smallest such weight is named);
- ``student``: n, the mean of d, then the squared distances from it, summed per
  group in one order (the tuples sorted), and the driver's
  :func:`mlsql._resample.paired.student_from_moments`: scipy's ``ttest_rel``
  within rounding;
- ``fisher``: each pair of tuples, m ids, flips 2 K - m of their signs net in
  each permutation, K ~ Binomial(m, 1/2) drawn from the uniform of the hash of
  (seed, permutation, tuple, 'fisher') by the inverse CDF
  (:func:`mlsql.spark.resample_draw.half_binomial_cdf`); p = the share of
  permutations whose |Σ (2 K - m) d| reaches |Σ m d| less 1e-12 Σ m |d|. These
  are Spark's own draws, as the DuckDB macro's are its own: a seed gives the
  same p-value however the data is partitioned, and the p-value equals the
  other engines' within Monte Carlo error.

Fisher's test costs a row per (pair, permutation), as the bootstrap in the
executors does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from mlsql._errors import MlsqlError
from mlsql._registry import REGISTRY
from mlsql._resample import front, paired
from mlsql.measures import regression as RG
from mlsql.spark import evaluate_regression as ER
from mlsql.spark import resample_draw as D
from mlsql.spark.ops import SparkOps
from mlsql.spark.resample_exec import _finite, _ordered

#: the column of each pair's ids counted (m, 0 where a side weighs 0)
_M = "__mlsql_ids"
#: the slack of Fisher's comparison, relative to Σ m |d| (the driver's)
SLACK = 1e-12


def row_value(name: str, actual: Column, predicted: Column) -> Column:
    """The per-row mean ``name`` (mse, mae, mape) of one row alone: its registry formula over
    the row's :class:`~mlsql.measures.regression.RegressionStats`, as
    :func:`mlsql._resample.numbers.row_stats` builds them; NULL where a side is NULL.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(3.0, 1.0), (None, 2.0)], "y double, p double")
    >>> [r[0] for r in df.select(row_value("mse", df.y, df.p)).collect()]
    [4.0, None]
    """
    known = actual.isNotNull() & predicted.isNotNull()
    err = F.when(known, F.abs(actual - predicted)).otherwise(F.lit(0.0))
    zero = F.lit(0.0)
    stats = RG.RegressionStats(
        n=known.cast("double"),
        sse=err * err,
        sae=err,
        sape=err / F.greatest(F.abs(actual), F.lit(RG.EPSILON)),
        var_actual=zero,
        var_predicted=zero,
        covariance=zero,
        var_error=zero,
        sad_actual=zero,
    )
    build = REGISTRY[name].build
    assert build is not None
    return F.when(known, build(SparkOps(), stats))


def p_values(
    req: front.Request,
    pairs: DataFrame,
    groups: Sequence[str],
    base: Sequence[str],
    model: Sequence[str],
) -> dict[tuple[tuple[Any, ...], str], float | None]:
    """Per (group values and model, measure label): the p-value of ``req.test``.

    ``pairs`` as :func:`mlsql.spark.resample_exec.compare` takes them: (groups..., the model
    column ``__mlsql_model``, the baseline row's (actual, predicted, weight) ``base``, the
    model row's ``model``, ``count``), one row per distinct pair.
    """
    keyed = [*groups, "__mlsql_model"]
    w_b, w_m = (F.coalesce(F.col(side[-1]), F.lit(0.0)) for side in (base, model))
    _check_weights(req.test, pairs, (w_b, w_m))
    ids = F.col("count") * (w_b > 0).cast("long") * (w_m > 0).cast("long")
    d_names = [f"__mlsql_test_d{i}" for i in range(len(req.chosen))]
    diffs = [
        _finite(
            row_value(c.name, F.col(model[0]), F.col(model[1]))
            - row_value(c.name, F.col(base[0]), F.col(base[1]))
        ).alias(d)
        for c, d in zip(req.chosen, d_names, strict=True)
    ]
    order = [*base, *model]
    rows = pairs.select(*keyed, *order, ids.alias(_M), *diffs).where(F.col(_M) > 0)
    if req.test == "student":
        found = _student(rows, keyed, order, d_names)
    else:
        found = _fisher(req, rows, keyed, order, d_names)
    return {
        (key, c.label): value
        for key, values in found.items()
        for c, value in zip(req.chosen, values, strict=True)
    }


def _check_weights(test: str, pairs: DataFrame, weights: Sequence[Column]) -> None:
    """The driver's error where a weight is other than 0 and 1 (NULL skips the row)."""
    odd = [F.min(F.when((w != 0) & (w != 1), w)) for w in weights]
    found = [v for v in (pairs.agg(*odd).first() or []) if v is not None]
    if found:
        raise MlsqlError(paired.WEIGHT_MESSAGE.format(test=test, got=float(min(found))))


def _student(
    rows: DataFrame, keyed: list[str], order: list[str], d_names: list[str]
) -> dict[tuple[Any, ...], list[float | None]]:
    """Each group's Student's t p-values: n and the mean, then the squared distances from the
    mean, each summed over the tuples sorted (:func:`~mlsql.spark.resample_exec._ordered`: the
    same bits on any partitioning)."""
    m = F.col(_M)
    firsts = []
    for i, d in enumerate(d_names):
        firsts += [
            F.sum(F.when(F.col(d).isNotNull(), m)).alias(f"__mlsql_test_n{i}"),
            F.sum(m * F.col(d)).alias(f"__mlsql_test_s{i}"),
        ]
    means = _ordered(rows, keyed, order).groupBy(*keyed).agg(*firsts)
    joined = ER.join_per_group(rows, keyed, means)
    seconds = []
    for i, d in enumerate(d_names):
        mean = F.col(f"__mlsql_test_s{i}") / F.col(f"__mlsql_test_n{i}")
        seconds += [
            F.first(f"__mlsql_test_n{i}").alias(f"__mlsql_test_n{i}"),
            F.first(mean).alias(f"__mlsql_test_mean{i}"),
            F.sum(m * (F.col(d) - mean) ** 2).alias(f"__mlsql_test_q{i}"),
        ]
    out: dict[tuple[Any, ...], list[float | None]] = {}
    for row in _ordered(joined, keyed, order).groupBy(*keyed).agg(*seconds).collect():
        k = len(keyed)
        values = []
        for i in range(len(d_names)):
            n, mean, squares = row[k + 3 * i : k + 3 * i + 3]
            known = n is not None and n >= 2
            values.append(paired.student_from_moments(n, mean, squares) if known else None)
        out[tuple(row[:k])] = values
    return out


def _fisher(
    req: front.Request, rows: DataFrame, keyed: list[str], order: list[str], d_names: list[str]
) -> dict[tuple[Any, ...], list[float | None]]:
    """Each group's Fisher randomization p-values from Spark's own flips (module docstring)."""
    m = F.col(_M)
    rows = rows.persist()
    try:
        observed = []
        for i, d in enumerate(d_names):
            observed += [
                F.count(F.col(d)).alias(f"__mlsql_test_n{i}"),
                F.abs(F.sum(m * F.col(d))).alias(f"__mlsql_test_o{i}"),
                (F.lit(SLACK) * F.sum(m * F.abs(F.col(d)))).alias(f"__mlsql_test_e{i}"),
            ]
        totals = _ordered(rows, keyed, order).groupBy(*keyed).agg(*observed)
        permutation = F.explode(
            F.sequence(F.lit(0).cast("long"), F.lit(req.n_resamples - 1).cast("long"))
        )
        drawn = rows.select("*", permutation.alias(D.RESAMPLE))
        keys = [F.col(c) for c in (*keyed, *order)] + [F.lit("fisher")]
        u = D.uniform(req.seed, F.col(D.RESAMPLE), keys)
        flips = D.inverse(
            drawn.withColumn("__mlsql_u", u), _M, "__mlsql_u", rows, D.half_binomial_cdf
        )
        flip = F.lit(2) * F.col(D.DRAW) - m
        sums = [F.sum(flip * F.col(d)).alias(f"__mlsql_test_f{i}") for i, d in enumerate(d_names)]
        by_permutation = [*keyed, D.RESAMPLE]
        per = _ordered(flips, by_permutation, order).groupBy(*by_permutation).agg(*sums)
        beside = ER.join_per_group(per, keyed, totals)
        hits = [
            F.count(
                F.when(
                    F.abs(F.col(f"__mlsql_test_f{i}"))
                    >= F.col(f"__mlsql_test_o{i}") - F.col(f"__mlsql_test_e{i}"),
                    1,
                )
            ).alias(f"__mlsql_test_h{i}")
            for i in range(len(d_names))
        ]
        kept = [
            F.first(f"__mlsql_test_n{i}").alias(f"__mlsql_test_n{i}") for i in range(len(d_names))
        ]
        found = beside.groupBy(*keyed).agg(*kept, *hits).collect()
    finally:
        rows.unpersist()
    out: dict[tuple[Any, ...], list[float | None]] = {}
    k, n = len(keyed), len(d_names)
    for row in found:
        values: list[float | None] = []
        for i in range(n):
            kept_ids, hit = row[k + i], row[k + n + i]
            values.append(hit / req.n_resamples if kept_ids else None)
        out[tuple(row[:k])] = values
    return out
