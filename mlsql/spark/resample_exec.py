"""``bootstrap`` and ``compare`` resampled in Spark's executors (label sets, classes, regression).

The statistics table (one ``groupBy`` of each row's statistics tuple and
checked weight, with its rows m) stays in Spark. Each tuple draws its
Poisson(m) weight k per resample there (:mod:`mlsql.spark.resample_draw`),
and each resample's measure is the measure on the tuples weighing k x weight:

- label sets: the registry formula over (tp, |A|, |P|), weighted
  (:func:`mlsql._weights.weighted` with :class:`~mlsql.spark.ops.SparkOps`),
  as :mod:`mlsql._resample.run` evaluates it with numpy;
- one label per row: the engine's own weighted aggregate (``ms.accuracy``,
  ``ms.f1_score``... with ``sample_weight``) over the (actual, predicted)
  cells;
- regression: the bounded passes of ``ms.evaluate``
  (:func:`mlsql.spark.evaluate_regression.values`: the means per group and
  resample, joined back, then the centred sums) with weight k x weight; a
  compare stacks its two sides under a side key and takes both in one plan.
  The values are checked first (one aggregate: a NaN or infinite number is
  the measures' error, as the driver's check gives it).

The estimate is the same with weight x m. The percentile interval
(``percentile``: exact, linear between order statistics as ``numpy.quantile``),
the standard error and compare's p-value are aggregates over the resamples.
Only the result rows (groups x measures) reach the driver.

Same seed, same result on any partitioning: the draws hash tuple contents, and
every floating sum runs in a fixed order. Before each aggregation the rows are
hash-partitioned by the aggregation's keys and sorted within partitions by
those keys and the tuple's values, so each group's sum adds its terms in
that order (Spark keeps a sort under a double ``sum``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from mlsql import _classification_params as CP
from mlsql._errors import MlsqlError
from mlsql._evaluate import front as EV
from mlsql._resample import front, run
from mlsql._weights import weighted
from mlsql.spark import evaluate_regression as ER
from mlsql.spark import resample_draw as D
from mlsql.spark.ops import SparkOps, column

#: the statistics kinds resampled here (the others are resampled on the driver)
KINDS = ("label_sets", "classes", "regression")
_OPS = SparkOps()
#: compare's side of a stacked row (0 the baseline, 1 the model)
_SIDE = "__mlsql_side"
#: the engine's measure functions by name, filled in by :mod:`mlsql.spark` (which imports this
#: module, so this one cannot import it)
MEASURES: dict[str, Callable[..., Column]] = {}


def _params(measures: Sequence[Any]) -> list[dict[str, Any]]:
    """Each entry's parameters (``resolve`` has checked the entries)."""
    return [{} if isinstance(e, str) else dict(e[1]) for e in measures]


def measure_columns(
    req: front.Request, params: Sequence[dict[str, Any]], stats: Sequence[Column], kw: Column
) -> list[Column]:
    """Each measure of ``req`` as an aggregate over tuples of ``stats`` weighing ``kw``.

    ``params``: each measure's parameters as given (the engine's class aggregates take them).

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> spark = SparkSession.builder.getOrCreate()
    >>> named = {"actual": "a", "predicted": "p"}
    >>> req = front.request("bootstrap", ["a", "p"], named, None, ["micro_f1"], 10, 0.95, 0)
    >>> df = spark.createDataFrame([(1, 2, 1, 3.0), (0, 1, 1, 1.0)], "t long, a long, p long, k double")
    >>> df.agg(*measure_columns(req, [{}], [df.t, df.a, df.p], df.k)).first()[0]  # 6 / 11
    0.5454545454545454
    """
    out = []
    if req.stats == "label_sets":
        names = {"tp": stats[0], "n_actual": stats[1], "n_predicted": stats[2]}
        for chosen in req.chosen:
            value = weighted(lambda ops, c=chosen: c.evaluate(ops, names), kw, _OPS)
            out.append(column(value).cast("double"))
        return out
    for chosen, given in zip(req.chosen, params, strict=True):
        fn = MEASURES[chosen.name]
        out.append(fn(stats[0], stats[1], sample_weight=kw, **given).cast("double"))
    return out


def _ordered(df: DataFrame, keys: Sequence[str], order: Sequence[str]) -> DataFrame:
    """``df`` partitioned by ``keys`` and sorted by ``keys`` then ``order`` within partitions."""
    parted = df.repartition(_partitions(df), *keys) if keys else df.repartition(1)
    return parted.sortWithinPartitions(*keys, *order)


def _arranged(order: Sequence[str]) -> Callable[[DataFrame, list[str]], DataFrame]:
    """:func:`_ordered` by the aggregation's keys, then ``order``."""
    return lambda df, keys: _ordered(df, keys, order)


def _measured(
    req: front.Request,
    params: Sequence[dict[str, Any]],
    rows: DataFrame,
    keys: Sequence[str],
    order: Sequence[str],
    stats: Sequence[Column],
    kw: Column,
    names: Sequence[str],
) -> DataFrame:
    """One row per ``keys`` of ``rows``: the keys and each measure of ``req`` over the
    statistics ``stats`` weighing ``kw``, named ``names``.

    Label sets and classes are one aggregation of the tuples sorted by ``order``; regression
    is :func:`mlsql.spark.evaluate_regression.values`, the bounded passes of ``ms.evaluate``
    (the means first, then the centred sums), each over rows sorted by its terms.
    """
    keys = list(keys)
    if req.stats != "regression":
        aggs = measure_columns(req, params, stats, kw)
        grouped = _ordered(rows, keys, order).groupBy(*keys)
        return grouped.agg(*(c.alias(v) for c, v in zip(aggs, names, strict=True)))
    roles = [stats[0].alias(EV.ROLES["actual"]), stats[1].alias(EV.ROLES["predicted"])]
    picked = rows.select(*keys, *roles, kw.alias(EV.WEIGHT))
    entries = [(chosen.name, given) for chosen, given in zip(req.chosen, params, strict=True)]
    items = list(enumerate(EV.items(entries, True, req.func)))
    found = ER.values(picked, keys, items, True, _arranged(ER.TERMS))
    return found.select(*keys, *(F.col(f"__mlsql_v{i}").alias(n) for i, n in enumerate(names)))


def check_finite(req: front.Request, tuples: DataFrame, sides: Sequence[Sequence[str]]) -> None:
    """Raise the measures' error when a known row of ``tuples`` holds a NaN or infinite
    number: the driver's check (:func:`mlsql._resample.numbers.check`) as one aggregate.

    ``sides``: the (actual, predicted) columns of each side of the tuples (two for
    ``compare``); a side is known where both its numbers are. The first bad value is
    looked for NaN first, then inf, then -inf, actual before predicted.
    """
    aggs = []
    for y, p in sides:
        known = F.col(y).isNotNull() & F.col(p).isNotNull()
        for name in (y, p):
            x = F.col(name)
            for bad in (F.isnan(x), x == F.lit(float("inf")), x == F.lit(float("-inf"))):
                aggs.append(F.max((known & bad).cast("int")))
    found = tuples.agg(*aggs).first()
    for i, flag in enumerate(found or []):
        if flag:
            name = ("actual", "predicted")[(i // 3) % 2]
            raise MlsqlError(CP.finite_value_message(req.func, name, CP.NOT_FINITE[i % 3]))


def _partitions(df: DataFrame) -> int:
    """Partitions for the small tables (tuples, resamples): the cluster's default parallelism."""
    try:
        return max(1, int(df.sparkSession.sparkContext.defaultParallelism))
    except Exception:  # Spark Connect has no SparkContext
        return int(df.sparkSession.conf.get("spark.sql.shuffle.partitions") or 200)


def _finite(x: Column) -> Column:
    return F.when(~F.isnan(x) & (F.abs(x) != F.lit(float("inf"))), x)


def _tails(confidence: float) -> Column:
    tail = (1 - confidence) / 2
    return F.array(F.lit(tail), F.lit(1 - tail))


def _key(row: Sequence[Any], n: int) -> tuple[Any, ...]:
    return tuple(run._order(v) for v in row[:n])


def bootstrap(
    req: front.Request,
    measures: Sequence[Any],
    tuples: DataFrame,
    groups: Sequence[str],
    stats: Sequence[str],
) -> list[tuple[Any, ...]]:
    """Rows (by values..., measure, estimate, low, high, std_error) of ``bootstrap``.

    ``tuples``: (groups..., stats..., weight ``stats[-1]``, ``count``).
    """
    tuples = tuples.persist()  # one scan of the data: the tuples are read three times
    try:
        return _bootstrap(req, measures, tuples, groups, stats)
    finally:
        tuples.unpersist()


def _bootstrap(
    req: front.Request,
    measures: Sequence[Any],
    tuples: DataFrame,
    groups: Sequence[str],
    stats: Sequence[str],
) -> list[tuple[Any, ...]]:
    params = _params(measures)
    keys = [*groups, *stats]
    if req.stats == "regression":
        check_finite(req, tuples, [stats[:-1]])
    cols = [F.col(s) for s in stats[:-1]]
    weight = F.coalesce(F.col(stats[-1]), F.lit(0.0))
    n = len(req.chosen)
    values = [f"__mlsql_v{i}" for i in range(n)]

    est = _measured(req, params, tuples, groups, stats, cols, weight * F.col("count"), values)
    draws = D.drawn(tuples, keys, "count", req.seed, req.n_resamples)
    kw = weight * F.col(D.DRAW)
    per = _measured(req, params, draws, [*groups, D.RESAMPLE], stats, cols, kw, values)
    aggs = []
    for i, v in enumerate(values):
        x = _finite(F.col(v))
        aggs += [
            F.percentile(x, _tails(req.confidence)).alias(f"__mlsql_q{i}"),
            F.stddev_samp(x).alias(f"__mlsql_se{i}"),
            F.count(x).alias(f"__mlsql_n{i}"),
        ]
    spread = _ordered(per, groups, [D.RESAMPLE]).groupBy(*groups).agg(*aggs)
    if groups:
        result = est.join(spread, [est[g].eqNullSafe(spread[g]) for g in groups], "left")
    else:
        result = est.crossJoin(spread)
    picked = [est[g] for g in groups] + [est[v] for v in values]
    picked += [
        spread[c] for i in range(n) for c in (f"__mlsql_q{i}", f"__mlsql_se{i}", f"__mlsql_n{i}")
    ]
    rows = sorted(
        (tuple(r) for r in result.select(*picked).collect()), key=lambda r: _key(r, len(groups))
    )
    out = []
    for row in rows:
        key, ests, rest = (
            row[: len(groups)],
            row[len(groups) : len(groups) + n],
            row[len(groups) + n :],
        )
        for i, chosen in enumerate(req.chosen):
            q, se, kept = rest[3 * i : 3 * i + 3]
            ok = kept is not None and kept >= 2
            low, high = (q[0], q[1]) if ok else (None, None)
            out.append((*key, chosen.label, ests[i], low, high, se if ok else None))
    return out


def _right(req: front.Request, stats: Sequence[Column]) -> Column:
    """Whether a tuple's row is right (exact match, correct label); NULL where unknown."""
    if req.stats == "label_sets":
        return (stats[0] == stats[1]) & (stats[0] == stats[2])
    return stats[0] == stats[1]


def compare(
    req: front.Request,
    measures: Sequence[Any],
    pairs: DataFrame,
    groups: Sequence[str],
    base: Sequence[str],
    model: Sequence[str],
) -> list[tuple[Any, ...]]:
    """Rows (by values..., model, measure, baseline_estimate, estimate, difference, low, high,
    p_value, mcnemar_p_value) of ``compare``.

    ``pairs``: (groups..., the model column ``__mlsql_model``, the baseline row's statistics
    and weight ``base``, the model row's ``model``, ``count``): one row per distinct pair.
    Both rows of a pair weigh the same draw.
    """
    pairs = pairs.persist()
    try:
        return _compare(req, measures, pairs, groups, base, model)
    finally:
        pairs.unpersist()


def _compare(
    req: front.Request,
    measures: Sequence[Any],
    pairs: DataFrame,
    groups: Sequence[str],
    base: Sequence[str],
    model: Sequence[str],
) -> list[tuple[Any, ...]]:
    params = _params(measures)
    keyed = [*groups, "__mlsql_model"]
    order = [*base, *model]
    n = len(req.chosen)
    sides = [
        ([F.col(s) for s in cols[:-1]], F.coalesce(F.col(cols[-1]), F.lit(0.0)))
        for cols in (base, model)
    ]
    b_names = [f"__mlsql_b{i}" for i in range(n)]
    x_names = [f"__mlsql_x{i}" for i in range(n)]

    def measured(times: Column) -> list[Column]:
        out = []
        for (cols, w), names in zip(sides, (b_names, x_names), strict=True):
            values = measure_columns(req, params, cols, w * times)
            out += [v.alias(name) for v, name in zip(values, names, strict=True)]
        return out

    def both(rows: DataFrame, keys: list[str], times: str) -> DataFrame:
        """Each side's measures per ``keys``, the rows weighing ``times`` x weight (regression:
        one bounded plan over the sides stacked, a side's key beside the keys, then side by
        side again)."""
        stacked = rows.select(
            *keys,
            times,
            F.lit(0).alias(_SIDE),
            *(F.col(c).alias(n) for c, n in zip(base, model, strict=True)),
        ).unionByName(rows.select(*keys, times, F.lit(1).alias(_SIDE), *model))
        cols, w = [F.col(c) for c in model[:-1]], F.coalesce(F.col(model[-1]), F.lit(0.0))
        kw = w * F.col(times)
        found = _measured(req, params, stacked, [*keys, _SIDE], [], cols, kw, x_names)
        side = F.col(_SIDE)
        pivot = [
            F.max(F.when(side == k, F.col(x))).alias(out)
            for k, names in enumerate((b_names, x_names))
            for x, out in zip(x_names, names, strict=True)
        ]
        return found.groupBy(*keys).agg(*pivot)

    # McNemar's exact test of the ids right for one side only (weights count as ids)
    right_b, right_x = (_right(req, cols) for cols, _ in sides)
    known = right_b.isNotNull() & right_x.isNotNull()
    only_b, only_x = known & right_b & ~right_x, known & right_x & ~right_b
    m_b, m_x = (w * F.col("count") for _, w in sides)
    discordant = only_b | only_x
    whole = F.when(discordant, ((m_b == F.round(m_b)) & (m_b == m_x)).cast("int"))
    mcnemar = [
        F.sum(F.when(only_b, m_b).otherwise(0.0)).alias("__mlsql_nb"),
        F.sum(F.when(only_x, m_b).otherwise(0.0)).alias("__mlsql_nx"),
        F.min(whole).alias("__mlsql_whole"),
    ]
    draws = D.drawn(pairs, [*keyed, *order], "count", req.seed, req.n_resamples)
    by_resample = [*keyed, D.RESAMPLE]
    if req.stats == "regression":
        check_finite(req, pairs, [base[:-1], model[:-1]])
        # no regression measure is zero-one: McNemar's counts are not read
        none = [F.lit(0.0).alias("__mlsql_nb"), F.lit(0.0).alias("__mlsql_nx")]
        est = both(pairs, keyed, "count").select("*", *none, F.lit(None).alias("__mlsql_whole"))
        per = both(draws, by_resample, D.DRAW)
    else:
        ordered = _ordered(pairs, keyed, order).groupBy(*keyed)
        est = ordered.agg(*measured(F.col("count")), *mcnemar)
        ordered = _ordered(draws, by_resample, order).groupBy(*by_resample)
        per = ordered.agg(*measured(F.col(D.DRAW)))
    aggs = []
    for i in range(n):
        d = _finite(F.col(x_names[i]) - F.col(b_names[i]))
        aggs += [
            F.percentile(d, _tails(req.confidence)).alias(f"__mlsql_q{i}"),
            F.count(d).alias(f"__mlsql_n{i}"),
            F.count(F.when(d <= 0, d)).alias(f"__mlsql_lo{i}"),
            F.count(F.when(d >= 0, d)).alias(f"__mlsql_hi{i}"),
        ]
    spread = per.groupBy(*keyed).agg(*aggs)
    result = est.join(spread, [est[g].eqNullSafe(spread[g]) for g in keyed], "left")
    picked = [est[g] for g in keyed] + [est[v] for v in (*b_names, *x_names)]
    picked += [est["__mlsql_nb"], est["__mlsql_nx"], est["__mlsql_whole"]]
    picked += [spread[f"__mlsql_{c}{i}"] for i in range(n) for c in ("q", "n", "lo", "hi")]
    k = len(keyed)
    rows = sorted((tuple(r) for r in result.select(*picked).collect()), key=lambda r: _key(r, k))
    out = []
    for row in rows:
        b_est, x_est = row[k : k + n], row[k + n : k + 2 * n]
        nb, nx, whole_ok = row[k + 2 * n : k + 2 * n + 3]
        rest = row[k + 2 * n + 3 :]
        p_mcnemar = None
        if whole_ok is None or whole_ok == 1:
            p_mcnemar = run.mcnemar_p_value(int(nb), int(nx))
        for i, chosen in enumerate(req.chosen):
            q, kept, below, above = rest[4 * i : 4 * i + 4]
            ok = kept is not None and kept >= 2
            p_value = None
            if kept:
                p_value = min(1.0, 2 * min((1 + below) / (kept + 1), (1 + above) / (kept + 1)))
            difference = None
            if b_est[i] is not None and x_est[i] is not None:
                difference = float(x_est[i] - b_est[i])
            out.append(
                (
                    *row[:k],
                    chosen.label,
                    b_est[i],
                    x_est[i],
                    difference,
                    q[0] if ok else None,
                    q[1] if ok else None,
                    p_value,
                    p_mcnemar if chosen.zero_one else None,
                )
            )
    return out
