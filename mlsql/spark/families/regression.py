"""Regression measures in Spark: the registry formulas over aggregate statistics.

Statistics (:class:`mlsql.measures.regression.RegressionStats`) over the rows
where neither side is NULL: exact sums of squared, absolute and relative errors
(:func:`mlsql.spark.ops.exact_sum`) and the co-moments of y, ŷ and y - ŷ that the
centred measures (r2, rse, rrse, pearson_corr, explained_variance) read. Where
mlsql's jar is used, these come from its Java aggregate
(:func:`mlsql.spark.jvm.co_moment`: exact sums of exact products, combined once at
the end), in memory that does not grow with a group's rows. Without it (Spark
Connect, ``spark.mlsql.jvm=false``), Spark collects the group's (y, ŷ) pairs
(``collect_list``) and sums them centred on their rounded means: one streaming pass
of DOUBLEs does not know the mean it should centre on, and Spark's ``var_pop``
drifts past 1e-12 relative far from zero. ``rae`` needs Σ|y - mean(y)|, which no
single streaming pass gives: Spark collects the group's y and sums over it once the
group's mean is known (``ms.evaluate`` runs both in grouped passes).

Inputs are numbers (cast to DOUBLE, so integer sums never overflow under ANSI
mode); a non-numeric Column of a DataFrame is an :class:`~mlsql.MlsqlError`.

Examples
--------
>>> from pyspark.sql import SparkSession
>>> import mlsql.spark as ms
>>> spark = SparkSession.builder.getOrCreate()
>>> df = spark.createDataFrame(
...     [(3.0, 2.5), (-0.5, 0.0), (2.0, 2.0), (7.0, 8.0)], "actual double, predicted double"
... )
>>> df.agg(ms.mse("actual", "predicted")).first()[0]
0.375
>>> round(df.agg(ms.r2("actual", "predicted")).first()[0], 6)
0.948608"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from mlsql._registry import Measure
from mlsql.measures import regression as RG
from mlsql.spark._build import OPS, Example, shared_example
from mlsql.spark.families import _classification as K
from mlsql.spark.families.single_label import let
from mlsql.spark.jvm import co_moment
from mlsql.spark.ops import exact_sum

FAMILIES = (RG.FAMILY,)


def example(measure: Measure) -> Example | None:
    """The docstring example of ``measure``: scikit-learn's four rows."""
    return shared_example(measure, {"actual": "double", "predicted": "double"})


def input_check(measure: Measure) -> Any:
    """Every input a number."""
    return K.numeric_inputs


def _comoment(
    total: Callable[[Any], Column], d: Callable[[Column, str], Column], a: str, b: str, n: Column
) -> Column:
    """The co-moment of ``a`` and ``b`` over a group's list (``total`` sums a term of each
    element ``v``, ``d(v, k)`` is v's ``k`` centred on the rounded mean), NULL over no (weight
    of) rows: its division by ``n`` is then not evaluated, as :func:`bind` reads it eagerly."""
    return F.when(
        n != 0,
        RG.centred_comoment(
            OPS,
            total(lambda v: d(v, a) * d(v, b)),
            total(lambda v: d(v, a)),
            total(lambda v: d(v, b)),
            n,
        ),
    )


def _moments(
    y: Column,
    p: Column,
    w: Column | None,
    listed: Callable[[str, str], Column],
    var_error: Column,
) -> dict[str, Column]:
    """The co-moments :class:`~mlsql.measures.regression.RegressionStats` holds, by field:
    from mlsql's Java aggregate where it is used (one aggregate each, so a formula's plan
    holds only those it reads: :func:`bind`), else ``listed(a, b)`` over the collected rows
    and ``var_error``."""
    asked = {
        "var_actual": co_moment(y, None, w),
        "var_predicted": co_moment(p, None, w),
        "covariance": co_moment(y, p, w),
        "var_error": co_moment(y - p, None, w),
    }
    moments = {k: m for k, m in asked.items() if m is not None}
    if len(moments) == len(asked):
        return moments
    return {
        "var_actual": listed("y", "y"),
        "var_predicted": listed("p", "p"),
        "covariance": listed("y", "p"),
        "var_error": var_error,
    }


def stats(measure: Measure, *inputs: Column, weight: Column | None = None) -> RG.RegressionStats:
    """Aggregates over the known rows, whatever the order of the measure's inputs."""
    if weight is not None:
        return weighted_stats(measure, inputs, weight)
    by_name = dict(zip(measure.inputs, inputs, strict=True))
    known = by_name["actual"].isNotNull() & by_name["predicted"].isNotNull()
    y = F.when(known, K.finite(measure.name, "actual", by_name["actual"]))
    p = F.when(known, K.finite(measure.name, "predicted", by_name["predicted"]))
    err = y - p
    mean_y = F.avg(y)
    n = F.count(y)
    pairs, means = (
        # A struct of NULLs is not NULL: only known rows may enter the list.
        F.collect_list(F.when(known, F.struct(y.alias("y"), p.alias("p")))),
        {"y": mean_y, "p": F.avg(p)},
    )

    def comoment(a: str, b: str) -> Column:  # over each known row centred on the rounded means
        def total(term: Any) -> Column:
            return F.aggregate(pairs, F.lit(0.0), lambda acc, v: acc + term(v))

        def d(v: Column, k: str) -> Column:
            return v[k] - means[k]

        return _comoment(total, d, a, b, n)

    return RG.RegressionStats(
        n=F.count(y),
        sse=exact_sum(err * err),
        sae=exact_sum(F.abs(err)),
        sape=exact_sum(F.abs(err) / F.greatest(F.abs(y), F.lit(RG.EPSILON))),
        **_moments(y, p, None, comoment, F.var_pop(err)),
        sad_actual=let(
            F.try_divide(
                F.aggregate(F.collect_list(y), F.lit(0.0), lambda acc, x: acc + (x - mean_y)), n
            ),
            lambda c: F.aggregate(
                F.collect_list(y), F.lit(0.0), lambda acc, x: acc + F.abs((x - mean_y) - c)
            ),
        ),
    )


def bind(stats: RG.RegressionStats, formula: Callable[[RG.RegressionStats], Column]) -> Column:
    """``formula(stats)`` with each statistic it reads computed once in the plan.

    A formula reads a statistic several times (r2's guards, pearson_corr's three comoments),
    and Spark copies a Column's whole tree at each read. The statistics the formula reads
    (found by running it once on a recorder) go into one struct, bound by
    :func:`~mlsql.spark.families.single_label.let`, and the formula runs over its fields.
    The weighted pearson_corr's analysed plan went from 583 to 373 KB of text, r2's from 260
    to 140 KB (a weighted centred measure's own comoments still repeat their rows' list).
    """
    read: set[str] = set()

    class Reads:  # records the statistics the formula reads
        def __getattr__(self, name: str) -> Any:
            read.add(name)
            return getattr(stats, name)

    formula(Reads())  # type: ignore[arg-type]
    given = {k: getattr(stats, k) for k in sorted(read) if isinstance(getattr(stats, k), Column)}
    value = F.struct(*(c.alias(k) for k, c in given.items()))
    return let(value, lambda s: formula(dataclasses.replace(stats, **{k: s[k] for k in given})))


def weighted_stats(
    measure: Measure, inputs: Sequence[Column], weight: Column
) -> RG.RegressionStats:
    """The statistics with each row weighted (scikit-learn's ``sample_weight``): sums of
    w x term, n = Σw, moments about the weighted means (centred on the rounded means)."""
    by_name = dict(zip(measure.inputs, inputs, strict=True))
    known = by_name["actual"].isNotNull() & by_name["predicted"].isNotNull() & weight.isNotNull()
    y = F.when(known, K.finite(measure.name, "actual", by_name["actual"]))
    p = F.when(known, K.finite(measure.name, "predicted", by_name["predicted"]))
    w = F.when(known, weight)
    err = y - p
    n = F.sum(w)

    def mean(x: Column) -> Column:
        return F.try_divide(F.sum(w * x), n)  # NULL where nothing weighs (bind reads it)

    rows = F.collect_list(F.when(known, F.struct(y.alias("y"), p.alias("p"), w.alias("w"))))
    means = {"y": mean(y), "p": mean(p), "e": mean(err)}

    def d(v: Column, k: str) -> Column:
        return (v["y"] - v["p"] if k == "e" else v[k]) - means[k]

    def total(term: Any) -> Column:
        return F.aggregate(rows, F.lit(0.0), lambda acc, v: acc + v["w"] * term(v))

    def comoment(a: str, b: str) -> Column:  # over each known row centred on the rounded means
        return _comoment(total, d, a, b, n)

    return RG.RegressionStats(
        n=n,
        sse=exact_sum(w * err * err),
        sae=exact_sum(w * F.abs(err)),
        sape=exact_sum(w * F.abs(err) / F.greatest(F.abs(y), F.lit(RG.EPSILON))),
        **_moments(y, p, w, comoment, comoment("e", "e")),
        sad_actual=let(
            F.try_divide(total(lambda v: d(v, "y")), n),
            lambda c: total(lambda v: F.abs(d(v, "y") - c)),
        ),
        rows=F.count(w),
    )


def mean_columns(y: Column, p: Column, w: Column | None) -> dict[str, Column]:
    """The (weighted) means of y, ŷ and y - ŷ over the known rows (y, ŷ and w NULL on the
    others), as :func:`stats` and :func:`weighted_stats` take them: the first pass of the
    bounded plan (:func:`centred_stats`)."""
    if w is None:
        return {"y": F.avg(y), "p": F.avg(p), "e": F.avg(y - p)}
    n = F.sum(w)
    return {"y": F.sum(w * y) / n, "p": F.sum(w * p) / n, "e": F.sum(w * (y - p)) / n}


#: the most bits :func:`scale_columns` moves a group's values up by (2**1000 is finite)
MOST_SCALE_BITS = 1000


def _ratio(err: Column, y: Column, floor: Column) -> Column:
    """mape's term |y - ŷ| / max(|y|, floor) (``floor``: the registry's epsilon, scaled as y)."""
    return F.abs(err) / F.greatest(F.abs(y), floor)


def _scale_up(largest: Column) -> Column:
    """2**k for the least whole k ≥ 0 (at most :data:`MOST_SCALE_BITS`) that takes ``largest``
    to 1 or more; 1 for 0 or NULL."""
    k = F.least(F.greatest(-F.floor(F.log2(largest)), F.lit(0)), F.lit(MOST_SCALE_BITS))
    return F.pow(F.lit(2.0), F.coalesce(k, F.lit(0)))


def scale_columns(y: Column, p: Column, w: Column | None) -> dict[str, Column]:
    """Per group, powers of two that :func:`centred_stats` multiplies small values by before
    it sums them exactly, and divides the sums by after: "v" of y and ŷ (the largest |y| or
    |ŷ| goes to [1, 2)), "r" of mape's ratios and, weighted, "w" of the weights; 1 where they
    reach 1 already. A first pass computes them beside the means (:func:`mean_columns`).

    An exact sum (:class:`~mlsql.spark.exact.Terms`) keeps each term to 2**-64: values near
    1e-10 lost their squares, and so mse and r2. A power of two moves only the exponent, so
    the statistics are the same numbers moved, and the same in any order."""
    out = {
        "v": _scale_up(F.max(F.greatest(F.abs(y), F.abs(p)))),
        "r": _scale_up(F.max(_ratio(y - p, y, F.lit(RG.EPSILON)))),
    }
    if w is not None:
        out["w"] = _scale_up(F.max(w))
    return out


def centred_stats(
    y: Column,
    p: Column,
    w: Column | None,
    means: dict[str, Column],
    shift: Column | None,
    summed: Callable[[Column], Column] = F.sum,
    scales: dict[str, Column] | None = None,
) -> RG.RegressionStats:
    """The statistics of :func:`stats` (``w`` None) or :func:`weighted_stats` as streaming
    sums over rows that carry their group's means (``means``: Columns of the joined first
    pass, :func:`mean_columns`) and ``shift``, the mean of y - mean(y) (a second pass; None
    when no measure needs Σ|y - mean(y)|). Each sum is over the rows, not a list of them:
    memory is a few numbers per group, however many rows it has. y, ŷ and w are NULL on
    rows that are not known. ``summed``: the aggregate each sum is, of its term: exact sums
    (a :class:`~mlsql.spark.exact.Terms`, whose columns the caller projects; the same in any
    order), or DOUBLE sums (``F.sum``) for rows the caller sorts. ``scales``: the group's
    powers of two of :func:`scale_columns` (joined columns), or None for none."""
    # the values moved up (the statistics are moved back below); None: not moved
    sv = sr = sw = None
    if scales is not None:
        sv, sr = scales["v"], scales["r"]
        y, p = y * sv, p * sv
        if w is not None:
            sw = scales["w"]
            w = w * sw
        means = {k: m * sv for k, m in means.items()}
        shift = None if shift is None else shift * sv
    err = y - p

    def total(
        term: Column,
    ) -> Column:  # exact and order-free: a DOUBLE sum drifted 4e-11 at 1.25M rows
        return summed(term if w is None else w * term)

    def down(total: Column, *moved: Column | None) -> Column:  # a statistic moved back
        factors = [F.max(s) for s in moved if s is not None]  # one value per group
        return total / _product(factors) if factors else total

    def d(k: str) -> Column:
        return (err if k == "e" else {"y": y, "p": p}[k]) - means[k]

    n = F.count(y) if w is None else F.sum(w)

    def comoment(a: str, b: str) -> Column:  # centred on the rounded means, as the lists are
        return down(
            RG.centred_comoment(OPS, total(d(a) * d(b)), total(d(a)), total(d(b)), n), sv, sv
        )

    sad = F.lit(None).cast("double") if shift is None else total(F.abs(d("y") - shift))
    eps = F.lit(RG.EPSILON)
    ratio = _ratio(err, y, eps)
    if sv is not None and sr is not None:  # the unmoved values' ratio, moved up
        ratio = _ratio(err, y, eps * sv) * sr
    return RG.RegressionStats(
        n=down(n, sw),
        sse=down(total(err * err), sw, sv, sv),
        sae=down(total(F.abs(err)), sw, sv),
        sape=down(total(ratio), sw, sr),
        var_actual=comoment("y", "y"),
        var_predicted=comoment("p", "p"),
        covariance=comoment("y", "p"),
        var_error=down(F.var_pop(err), sv, sv) if w is None else comoment("e", "e"),
        sad_actual=sad if shift is None else down(sad, sw, sv),
        rows=None if w is None else F.count(w),
    )


def _product(factors: Sequence[Column]) -> Column:
    out = factors[0]
    for f in factors[1:]:
        out = out * f
    return out


def shift_column(y: Column, w: Column | None, mean_y: Column) -> Column:
    """The mean of y - mean(y) over the known rows (weighted): the correction Σ|y - mean(y)|
    needs, as :func:`stats` computes it from the list."""
    n = F.count(y) if w is None else F.sum(w)
    d = y - mean_y
    return F.sum(d if w is None else w * d) / n
