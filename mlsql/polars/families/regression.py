"""Regression measures in Polars: the registry formulas over aggregate statistics.

Statistics (:class:`mlsql.measures.regression.RegressionStats`) over the rows
where neither side is NULL: sums of squared, absolute and relative errors and
Polars' own ``var``/``cov`` (population, ``ddof=0``); ``rae`` also takes
Σ|y - mean(y)|.

Examples
--------
>>> import polars as pl
>>> import mlsql.polars as mp
>>> df = pl.DataFrame({"actual": [3.0, -0.5, 2.0, 7.0], "predicted": [2.5, 0.0, 2.0, 8.0]})
>>> df.select(mp.mse("actual", "predicted")).item()
0.375
>>> round(df.select(mp.r2("actual", "predicted")).item(), 6)
0.948608
"""

from __future__ import annotations

import sys
from typing import Any

import polars as pl

from mlsql._front.build import lookup
from mlsql._registry import Measure, measures
from mlsql.measures import regression as RG
from mlsql.polars.families import _classification as K
from mlsql.polars.families._classification import params  # noqa: F401  (plug-in hook)

FAMILIES = (RG.FAMILY,)


def stats_of(m: Measure) -> Any:
    """Statistics over the measure's inputs, whatever their order (weighted if given a weight)."""

    def stats(*inputs: pl.Expr, weight: pl.Expr | None = None) -> RG.RegressionStats:
        if weight is not None:
            return weighted_stats(m, inputs, weight)
        by_name = dict(zip(m.inputs, inputs, strict=True))
        mask = K.known(*inputs)
        y, p = by_name["actual"].filter(mask), by_name["predicted"].filter(mask)
        err = y - p
        n = mask.sum().cast(pl.Int64)
        dy, dp = y - y.mean(), p - p.mean()  # centred on the rounded means

        def comoment(a: pl.Expr, b: pl.Expr) -> pl.Expr:
            return RG.centred_comoment(K.OPS, (a * b).sum(), a.sum(), b.sum(), n)

        return RG.RegressionStats(
            n=n,
            sse=(err * err).sum(),
            sae=err.abs().sum(),
            sape=(err.abs() / pl.max_horizontal(y.abs(), pl.lit(RG.EPSILON))).sum(),
            var_actual=comoment(dy, dy),
            var_predicted=comoment(dp, dp),
            covariance=comoment(dy, dp),
            var_error=err.var(ddof=0),
            sad_actual=(dy - dy.mean()).abs().sum(),
        )

    return stats


def weighted_stats(m: Measure, inputs: tuple[pl.Expr, ...], weight: pl.Expr) -> RG.RegressionStats:
    """The statistics with each row weighted (scikit-learn's ``sample_weight``): sums of
    w x term, n = Σw, moments about the weighted means (centred on the rounded means)."""
    by_name = dict(zip(m.inputs, inputs, strict=True))
    mask = K.known(*inputs, weight)
    y, p, w = by_name["actual"].filter(mask), by_name["predicted"].filter(mask), weight.filter(mask)
    err = y - p
    n = w.sum()

    def mean(x: pl.Expr) -> pl.Expr:
        return (w * x).sum() / n

    dy, dp, de = y - mean(y), p - mean(p), err - mean(err)

    def comoment(a: pl.Expr, b: pl.Expr) -> pl.Expr:
        return RG.centred_comoment(K.OPS, (w * a * b).sum(), (w * a).sum(), (w * b).sum(), n)

    return RG.RegressionStats(
        n=n,
        sse=(w * err * err).sum(),
        sae=(w * err.abs()).sum(),
        sape=(w * err.abs() / pl.max_horizontal(y.abs(), pl.lit(RG.EPSILON))).sum(),
        var_actual=comoment(dy, dy),
        var_predicted=comoment(dp, dp),
        covariance=comoment(dy, dp),
        var_error=comoment(de, de),
        sad_actual=(w * (dy - mean(dy)).abs()).sum(),
        rows=w.len(),
    )


__all__: list[str] = []
for _m in measures(family=RG.FAMILY):
    if _m.build is not None and _m.available_in("polars"):
        globals()[_m.name] = K.direct(
            lookup(_m), stats_of(_m), K.finite_inputs, sys.modules[__name__]
        )
        __all__.append(_m.name)
