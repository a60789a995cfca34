"""``bootstrap`` and ``compare`` resampled in Spark's executors (label sets, classes, numbers).

The statistics table (one ``groupBy`` of each row's statistics tuple and
checked weight, with its rows m) stays in Spark. Each tuple draws its
Poisson(m) weight k per resample there (:mod:`mlsql.spark.resample_draw`),
and each resample's measure is the measure on the tuples weighing k x weight:

- label sets: the registry formula over (tp, |A|, |P|), weighted
  (:func:`mlsql._weights.weighted` with :class:`~mlsql.spark.ops.SparkOps`),
  as :mod:`mlsql._resample.run` evaluates it with numpy;
- label lists (the macro and weighted averages, past the driver's budget):
  ``ms.evaluate``'s plan over the tuples' lists (:func:`_averaged`);
- one label per row: the engine's own weighted aggregate (``ms.accuracy``,
  ``ms.f1_score``... with ``sample_weight``) over the (actual, predicted)
  cells;
- regression: ``ms.evaluate``'s plan (:func:`mlsql.spark.evaluate_regression.values`),
  its sums centred on the data's means per group (:func:`_centred`: one
  aggregation per resample; ``rae`` adds the pass of each resample's mean);
- binary scores: ``ms.evaluate``'s plans, AUC and AP over sorted runs of equal
  scores (:mod:`mlsql.spark.evaluate_ranks`), the calibration error over cells
  per bin (:mod:`mlsql.spark.evaluate_bins`), log loss and the Brier score as
  their streaming Columns.

A compare of numbers stacks its two sides under a side key and runs both in
one plan. Numbers are checked first, in one aggregate over the tuples, with
the messages the driver's check gives (:func:`check_values`).

The estimate is the same with weight x m. The percentile interval
(``percentile``: exact, linear between order statistics as ``numpy.quantile``),
the standard error and compare's p-value are aggregates over the resamples.
Only the result rows (groups x measures) reach the driver.

Same seed, same result on any partitioning: the draws hash tuple contents, and
every floating sum runs in a fixed order. Before each aggregation the rows are
hash-partitioned by the aggregation's keys and sorted within partitions by
those keys and the tuple's values, so each group's sum adds its terms in
that order (Spark keeps a sort under a double ``sum``). The runs of equal
scores need no such sort: their weights add exactly
(:func:`mlsql.spark.ops.exact_sum`, in any order), and the window sums them in
score order; the calibration bins' sums are exact too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from mlsql import _classification_params as CP
from mlsql._errors import MlsqlError
from mlsql._evaluate import front as EV
from mlsql._resample import front, run
from mlsql._resample import numbers as NUM
from mlsql._weights import weighted
from mlsql.spark import evaluate_bins as EB
from mlsql.spark import evaluate_ranks as ERK
from mlsql.spark import evaluate_regression as ER
from mlsql.spark import resample_draw as D
from mlsql.spark.families import regression as R
from mlsql.spark.ops import SparkOps, column

#: the statistics kinds resampled here (the others are resampled on the driver)
KINDS = ("label_sets", "classes", "regression", "scores")
#: the kinds of numbers, run as ``ms.evaluate`` plans them
NUMBER_KINDS = ("regression", "scores")
#: label lists (the macro and weighted averages): on the driver within its budget, past it
#: in the executors over ``ms.evaluate``'s plan (:func:`_averaged`)
AVERAGES = "label_lists"
_OPS = SparkOps()
#: compare's side of a stacked row (0 the baseline, 1 the model)
_SIDE = "__mlsql_side"
#: the engine's measure functions by name, filled in by :mod:`mlsql.spark` (which imports this
#: module, so this one cannot import it)
MEASURES: dict[str, Callable[..., Column]] = {}


#: the most distinct tuples of numbers resampled on the driver (the Spark conf
#: :data:`DRIVER_TUPLES_CONF` sets another budget; 0 resamples every table in the executors)
DRIVER_TUPLES = 1_000_000
DRIVER_TUPLES_CONF = "spark.mlsql.bootstrap.driverTuples"


def driver_rows(req: front.Request, tuples: DataFrame) -> list[tuple[Any, ...]] | None:
    """The statistics table ``tuples`` of numbers or label lists (the averages), collected to
    be resampled on the driver; or None: it is resampled in the executors.

    A table of regression values or scores holds about a tuple per row, and its resamples
    about 0.63 x tuples x resamples rows: Spark's row engine sorts and sums them at about
    a microsecond each (a 1M-row table x 200 resamples: 8 minutes on two cores), where
    numpy resamples the collected tuples in seconds. So a table of at most
    :data:`DRIVER_TUPLES` tuples (about 150 MB on the driver) is resampled there, exactly as
    the DuckDB and Polars engines do (same seed, same result), and a larger one in the
    executors: the driver's memory is bounded either way. The label lists of the macro and
    weighted averages (a tuple per distinct pair of label sets: few or about one a row)
    follow the same budget. Label sets and classes (a few tuples) always resample in the
    executors. At most the budget and one more tuple are
    collected, in one scan."""
    if req.stats not in (*NUMBER_KINDS, AVERAGES):
        return None
    budget = _driver_budget(tuples)
    if budget <= 0:
        return None
    rows = [tuple(r) for r in tuples.limit(budget + 1).collect()]
    return rows if len(rows) <= budget else None


#: what the driver-side kinds resample, in the words of :func:`held_rows`' refusal
_HELD = {
    "label_lists": (
        "the macro and weighted averages of label lists resample each distinct pair of label sets",
        "resample a micro or samples measure (drawn in the executors), or sample the rows",
    ),
    "class_scores": (
        "the class-score measures resample each row's scores (about a tuple per row)",
        "sample the rows",
    ),
}


def held_rows(req: front.Request, tuples: DataFrame, func: str) -> list[tuple[Any, ...]]:
    """The statistics table ``tuples`` of a kind resampled only on the driver (the label-set
    averages, the class scores), collected; past the budget (:data:`DRIVER_TUPLES`, or the
    Spark conf) an error that says so instead of a driver that runs out of memory.

    At most the budget and one more tuple are collected, in one scan."""
    budget = _driver_budget(tuples)
    rows = [tuple(r) for r in tuples.limit(budget + 1).collect()]
    if len(rows) <= budget:
        return rows
    what, instead = _HELD[req.stats]
    raise MlsqlError(
        f"{func}: {what} on Spark's driver, and this table holds more than {budget:,} of "
        f"them (the Spark conf {DRIVER_TUPLES_CONF}, default {DRIVER_TUPLES:,}, is how many "
        f"the driver may hold). Raise it with the driver's memory, or {instead}."
    )


def _driver_budget(tuples: DataFrame) -> int:
    """The most tuples the driver collects: the session's :data:`DRIVER_TUPLES_CONF`, else
    :data:`DRIVER_TUPLES`."""
    conf = tuples.sparkSession.conf.get(DRIVER_TUPLES_CONF, None)
    return DRIVER_TUPLES if conf is None else _budget(conf)


def _budget(conf: str) -> int:
    """The Spark conf :data:`DRIVER_TUPLES_CONF` read: a whole number of tuples, 0 or more.

    Examples
    --------
    >>> _budget("250000")
    250000
    >>> _budget("many")
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The Spark conf spark.mlsql.bootstrap.driverTuples must be a whole number of tuples, 0 or more (0: every table of numbers is resampled in the executors). Got 'many' instead.
    """
    text = conf.strip()
    if not text.isdigit():
        raise MlsqlError(
            f"The Spark conf {DRIVER_TUPLES_CONF} must be a whole number of tuples, 0 or more "
            f"(0: every table of numbers is resampled in the executors). Got {conf!r} instead."
        )
    return int(text)


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
    if req.stats == AVERAGES:
        return _averaged(req, params, _ordered(rows, keys, order), keys, stats, kw, names)
    if req.stats not in NUMBER_KINDS:
        aggs = measure_columns(req, params, stats, kw)
        grouped = _ordered(rows, keys, order).groupBy(*keys)
        return grouped.agg(*(c.alias(v) for c, v in zip(aggs, names, strict=True)))
    roles = [stats[0].alias(EV.ROLES["actual"]), stats[1].alias(EV.ROLES["predicted"])]
    picked = rows.select(*keys, *roles, kw.alias(EV.WEIGHT))
    entries = [(chosen.name, given) for chosen, given in zip(req.chosen, params, strict=True)]
    items = list(enumerate(EV.items(entries, True, req.func)))
    if req.stats == "regression":  # the rows carry the data's means (:func:`_centred`)
        picked = rows.select(*keys, *roles, kw.alias(EV.WEIGHT), *ER.centre_names().values())
        parts = [ER.values(picked, keys, items, True, _arranged(ER.TERMS), centred=True)]
    else:
        parts = _score_parts(picked, keys, items)
    found = reduce(lambda a, b: _beside(a, b, keys), parts)
    return found.select(*keys, *(F.col(f"__mlsql_v{i}").alias(n) for i, n in enumerate(names)))


def _averaged(
    req: front.Request,
    params: Sequence[dict[str, Any]],
    rows: DataFrame,
    keys: list[str],
    stats: Sequence[Column],
    kw: Column,
    names: Sequence[str],
) -> DataFrame:
    """The label-list measures of ``req`` (the macro and weighted averages, and any label-set
    measure asked beside them) per ``keys``, over the tuples' label lists ``stats`` weighing
    ``kw``: ``ms.evaluate``'s plan (per key and label counts, then the registry's per-label
    formulas averaged), so memory grows with keys x labels, never the tuples. ``rows`` come
    partitioned by ``keys`` and sorted, so the label-set measures' DOUBLE sums add in one
    order; the per-label counts are exact sums."""
    from mlsql.spark.evaluate import evaluate

    entries = [(chosen.name, given) for chosen, given in zip(req.chosen, params, strict=True)]
    sides = [stats[0].alias(EV.ROLES["actual"]), stats[1].alias(EV.ROLES["predicted"])]
    picked = rows.select(*keys, *sides, kw.alias(EV.WEIGHT))
    long = evaluate(
        picked, EV.ROLES["actual"], EV.ROLES["predicted"], entries, by=keys, sample_weight=EV.WEIGHT
    )
    labels = [item.label for item in EV.items(entries, True, req.func)]
    values = [
        F.first(F.when(F.col("measure") == F.lit(label), F.col("estimate")), ignorenulls=True)
        for label in labels
    ]
    return long.groupBy(*keys).agg(*(v.alias(n) for v, n in zip(values, names, strict=True)))


def _score_parts(
    rows: DataFrame, keys: list[str], items: Sequence[tuple[int, EV.Item]]
) -> list[DataFrame]:
    """The score measures of ``items`` per ``keys`` as ``ms.evaluate`` plans them, one frame
    (keys and ``__mlsql_v{i}``) per plan: AUC and AP over sorted runs
    (:mod:`mlsql.spark.evaluate_ranks`), the calibration error over cells per bin
    (:mod:`mlsql.spark.evaluate_bins`), log loss and the Brier score as their streaming
    Columns over rows sorted by keys and values. Every sum is exact or runs in one order."""
    by_plan: dict[Any, list[tuple[int, EV.Item]]] = {}
    for i, item in items:
        runs, bins = ERK.key(item), EB.key(item)
        plan = ("runs", runs) if runs else ("bins", bins) if bins else ("rows", None)
        by_plan.setdefault(plan, []).append((i, item))
    parts = []
    for (kind, _), chosen in by_plan.items():
        if kind == "runs":
            parts.append(ERK.values(rows, keys, chosen, True))
        elif kind == "bins":
            parts.append(EB.values(rows, keys, chosen, True, MEASURES))
        else:
            w = F.col(EV.WEIGHT)
            aggs = [
                MEASURES[item.name](*EV.inputs(item, EV.ROLES), sample_weight=w, **item.params)
                .cast("double")
                .alias(f"__mlsql_v{i}")
                for i, item in chosen
            ]
            order = [*EV.ROLES.values(), EV.WEIGHT]
            parts.append(_ordered(rows, keys, order).groupBy(*keys).agg(*aggs))
    return parts


def _centred(
    tuples: DataFrame, groups: Sequence[str], sides: Sequence[tuple[Sequence[str], str]]
) -> DataFrame:
    """``tuples`` with, for each side (its y, ŷ and weight columns, and a suffix), the group's
    weighted means of y, ŷ and y - ŷ over the data (each tuple weighing weight x count) in the
    columns :func:`mlsql.spark.evaluate_regression.centre_names` names, suffixed.

    Every resample's sums are centred on the data's means (the corrected formula cancels
    their distance from the resample's own), so a resample is one aggregation of its rows,
    not a pass of means joined back. The means are summed in one order (the tuples sorted),
    so they are the same however the data is partitioned."""
    aggs, order = [], []
    for (y, p, w), suffix in sides:
        known = F.col(y).isNotNull() & F.col(p).isNotNull() & F.col(w).isNotNull()
        kw = F.when(known, F.col(w) * F.col("count"))
        means = R.mean_columns(F.when(known, F.col(y)), F.when(known, F.col(p)), kw)
        aggs += [means[k].alias(name + suffix) for k, name in ER.centre_names().items()]
        order += [y, p, w]
    arranged = _ordered(tuples, list(groups), [*order, "count"])
    found = arranged.groupBy(*groups).agg(*aggs) if groups else arranged.agg(*aggs)
    return ER.join_per_group(tuples, list(groups), found)


def _beside(a: DataFrame, b: DataFrame, keys: list[str]) -> DataFrame:
    """``a`` with ``b``'s value columns beside each row, joined null-safe on ``keys`` (each
    holds one row per key)."""
    if not keys:
        return a.crossJoin(b)
    renamed = [F.col(k).alias(f"__mlsql_j{n}") for n, k in enumerate(keys)]
    b = b.select(*renamed, *(c for c in b.columns if c not in keys))
    on = [a[k].eqNullSafe(b[f"__mlsql_j{n}"]) for n, k in enumerate(keys)]
    return a.join(b, on, "inner").drop(*(f"__mlsql_j{n}" for n in range(len(keys))))


def check_values(req: front.Request, tuples: DataFrame, sides: Sequence[Sequence[str]]) -> None:
    """Raise the measures' error when a known row of ``tuples`` holds a value they refuse: the
    driver's check (:func:`mlsql._resample.numbers.check`) as one aggregate.

    ``sides``: the (actual, predicted) columns of each side of the tuples (two for
    ``compare``); a side is known where both its values are. Regression refuses a NaN or
    infinite number on either side; the scores a label other than 0/1 (the lowest such
    label is named), then a NaN or infinite score, then (brier_score_loss,
    expected_calibration_error) a score outside [0, 1]. A bad value is looked for as NaN
    first, then inf, then -inf, actual before predicted.
    """
    scores = req.stats == "scores"
    aggs = []
    for y, p in sides:
        known = F.col(y).isNotNull() & F.col(p).isNotNull()
        label = F.col(y)
        aggs.append(F.min(F.when(known & ~label.isin(0.0, 1.0), label)))
        for name in (y, p):
            x = F.col(name)
            for bad in (F.isnan(x), x == F.lit(float("inf")), x == F.lit(float("-inf"))):
                aggs.append(F.max((known & bad).cast("int")))
        aggs += [F.max((known & (F.col(p) < 0)).cast("int"))]
        aggs += [F.max((known & (F.col(p) > 1)).cast("int"))]
    found = list(tuples.agg(*aggs).first() or [])
    probability = any(c.name in NUM.PROBABILITY_MEASURES for c in req.chosen)
    for side in range(len(sides)):
        label, *flags = found[9 * side : 9 * side + 9]
        finite, ranges = flags[:6], flags[6:]
        if scores and label is not None:
            got = "NaN" if label != label else repr(int(label) if label.is_integer() else label)
            raise MlsqlError(CP.binary_value_message(req.func, got))
        for k, flag in enumerate(finite):
            name = ("actual", "predicted")[k // 3]
            if flag and not (scores and name == "actual"):
                raise MlsqlError(CP.finite_value_message(req.func, name, CP.NOT_FINITE[k % 3]))
        for got, flag in zip(CP.OUT_OF_RANGE, ranges, strict=True):
            if scores and probability and flag:
                raise MlsqlError(CP.probability_value_message(req.func, "predicted", got))


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
    if req.stats in NUMBER_KINDS:
        check_values(req, tuples, [stats[:-1]])
    cols = [F.col(s) for s in stats[:-1]]
    weight = F.coalesce(F.col(stats[-1]), F.lit(0.0))
    n = len(req.chosen)
    values = [f"__mlsql_v{i}" for i in range(n)]

    if req.stats == "regression":
        tuples = _centred(tuples, groups, [(stats, "")])
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
        centres = list(ER.centre_names().values()) if req.stats == "regression" else []
        stacked = rows.select(
            *keys,
            times,
            F.lit(0).alias(_SIDE),
            *(F.col(c).alias(n) for c, n in zip(base, model, strict=True)),
            *(F.col(c + "_b").alias(c) for c in centres),
        ).unionByName(rows.select(*keys, times, F.lit(1).alias(_SIDE), *model, *centres))
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
    if req.stats == "regression":
        pairs = _centred(pairs, keyed, [(base, "_b"), (model, "")])
    draws = D.drawn(pairs, [*keyed, *order], "count", req.seed, req.n_resamples)
    by_resample = [*keyed, D.RESAMPLE]
    if req.stats in NUMBER_KINDS:
        check_values(req, pairs, [base[:-1], model[:-1]])
        # no measure of numbers is zero-one: McNemar's counts are not read
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
