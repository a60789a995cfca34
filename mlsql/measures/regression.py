"""Regression measures: formulas over a few streaming statistics of (actual, predicted).

Every measure is an aggregate over rows where neither side is NULL (NULL over
none). Statistics (:class:`RegressionStats`), each one pass and mergeable:
n, Σ(y - ŷ)², Σ|y - ŷ|, Σ|y - ŷ| / max(|y|, eps), and the population
variances of y, ŷ and y - ŷ and the covariance of y and ŷ.

Precision on data far from zero (y = 1e9 + noise): Σy² - (Σy)²/n cancels
catastrophically, and the engines' streaming variances (Welford-style) lose
up to 1e-5 relative at an offset of 1e12. The variances and the covariance of
y and ŷ are therefore computed in two passes over the group, from values
centred on their (rounded) mean, with the correction term of
:func:`centred_comoment` that cancels the mean's rounding: within about 1e-14
of the exact value of the float inputs (tested at offsets 1e9 and 1e12). The
differences y - ŷ are exact for close values, so Σ(y - ŷ)² and the variance of
y - ŷ stream. As single aggregates, the two passes keep each group's values in
memory, as ``rae`` (Σ|y - mean(y)|) and ``auc`` do: DuckDB and Spark in a list
per group, Polars in its group. Spark's ``ms.evaluate`` is the bounded form: it
runs the passes as grouped aggregations (the means per group first, then the
centred sums over the rows joined to them), a few numbers per group however
many rows it has. DuckDB's ``evaluate`` runs the aggregates themselves.

====================  ==========================================  =============
mlsql                 definition                                  aliases
====================  ==========================================  =============
mse                   Σ(y - ŷ)² / n                               mean_squared_error
rmse                  sqrt(mse)
mae                   Σ|y - ŷ| / n (the lecture's mad)            mean_absolute_error
mape                  Σ |y - ŷ| / max(|y|, eps) / n (eps: float   mean_absolute_percentage_error
                      machine epsilon, as scikit-learn)
rse                   Σ(y - ŷ)² / Σ(y - ȳ)²
rrse                  sqrt(rse)
rae                   Σ|y - ŷ| / Σ|y - ȳ|
pearson_corr          cov(y, ŷ) / (sd(y) sd(ŷ)) (the lecture's corr)
r2                    1 - Σ(y - ŷ)² / Σ(y - ȳ)²                    r2_score
explained_variance    1 - var(y - ŷ) / var(y)                     explained_variance_score
hivemall_r2           r2 with Hivemall's argument order (predicted, actual)
====================  ==========================================  =============

Notes
-----
- mlsql takes (actual, predicted). Hivemall's ``r2(predicted, actual)`` takes
  the other order: that order is offered only as ``hivemall_r2``.
- The lecture's ``mad`` and ``corr`` are not aliases in DuckDB, where both
  names are built-in functions (median absolute deviation; DuckDB's ``corr``
  is Pearson's, NaN on a constant column).
- Undefined ratios follow ``zero_division``: r2 and explained variance when y
  is constant, rse/rrse/rae when y is constant, pearson_corr when either side
  is constant. Under 'diagnose' r2 and explained variance are scikit-learn's
  ``force_finite`` values (1 if the predictions are perfect, else 0), rse,
  rrse and rae the complement (0 if perfect, else 1), and pearson_corr 1 if
  perfect, else 0. scikit-learn's default is 'diagnose' for r2; mlsql's
  default, as everywhere, is 0.
- ``sample_weight`` (every measure here) weighs each row as scikit-learn's
  ``sample_weight`` does: n is Σw, the sums are Σ w x term and the means,
  variances and covariance are weighted (about the weighted means), so mse,
  rmse, mae, mape, r2 and explained variance equal scikit-learn's. Where
  scikit-learn has no weighted form, mlsql takes the same one: rse and rrse
  are Σw(y - ŷ)² / Σw(y - ȳ_w)², rae is Σw|y - ŷ| / Σw|y - ȳ_w| and
  pearson_corr the weighted correlation. Integer weights equal repeating
  each row w times. Known rows that all weigh 0 give the means (mse, rmse,
  mae, mape) NULL, as over no rows, and the ratios their undefined value
  under ``zero_division`` ('diagnose': as a perfect prediction).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from mlsql import _formulas as F
from mlsql import _params as P
from mlsql._formulas import formula
from mlsql._registry import Param, measure

E = Any  # an engine expression
FAMILY = "regression"
ZD = P.ZERO_DIVISION
#: mape's floor for |y| (scikit-learn: numpy's float64 epsilon)
EPSILON = sys.float_info.epsilon


@dataclass(frozen=True)
class RegressionStats:
    """Aggregates over the known rows of (actual y, predicted ŷ)."""

    n: E
    sse: E  # Σ (y - ŷ)²
    sae: E  # Σ |y - ŷ|
    sape: E  # Σ |y - ŷ| / max(|y|, eps)
    var_actual: E  # population variance of y
    var_predicted: E  # population variance of ŷ
    covariance: E  # population covariance of y and ŷ
    var_error: E  # population variance of y - ŷ
    #: Σ |y - mean(y)|, taken as Σ |d - mean(d)| over d = y - m, m the rounded mean (both
    #: means weighted with sample_weight): the mean of the small, exact differences d
    #: cancels m's rounding (a plain Σ |y - m| was off by 3e-8 relative at an offset of
    #: 1e12, by 1e-4 at 1e15)
    sad_actual: E
    rows: E = None  # with sample_weight: the number of known rows (n is then their weight)


@formula
def relative_error(ops: Any, error: E, baseline: E, zero_division: Any) -> E:
    """error / baseline (rse, rae); undefined when y is constant ('diagnose': 0 if error = 0, else 1)."""
    return F.ratio(ops, error, baseline, zero_division, error > 0)


@formula
def explained(ops: Any, error: E, baseline: E, zero_division: Any) -> E:
    """1 - error / baseline (r2, explained variance); undefined when baseline = 0.

    Under 'diagnose' an undefined value is 1 if error = 0, else 0 (scikit-learn's force_finite).
    """
    return ops.when(baseline == 0, ops.undefined(zero_division, error == 0), 1 - error / baseline)


@formula
def pearson(ops: Any, covariance: E, var_a: E, var_b: E, sse: E, zero_division: Any) -> E:
    """cov / (sd_a sd_b); undefined when either side is constant ('diagnose': 1 if equal)."""
    return F.ratio(ops, covariance, (var_a**0.5) * (var_b**0.5), zero_division, sse == 0)


@formula
def centred_comoment(ops: Any, sum_products: E, sum_a: E, sum_b: E, n: E) -> E:
    """Population co-moment Σ(a - ā)(b - b̄) / n of values centred on approximate means.

    Given da = a - m_a and db = b - m_b for any constants m_a, m_b (the rounded
    means): (Σ da db - Σda Σdb / n) / n, the corrected two-pass formula (Chan,
    Golub and LeVeque), which cancels the error of the means; NULL over no rows.
    """
    return F.share(ops, sum_products - sum_a * sum_b / n, n)


def _known(ops: Any, s: RegressionStats, value: E, zero_division: Any, perfect: bool) -> E:
    """``value``, or NULL over no known rows.

    Known rows that all weigh 0 (``sample_weight``) hold no spread of y and no
    error: the ratio is undefined and follows ``zero_division``, 'diagnose' taking
    the prediction as perfect (``perfect``: the flag of a perfect prediction).
    """
    if s.rows is None:
        return ops.when(s.n == 0, None, value)
    undefined = ops.undefined(zero_division, perfect)
    return ops.when(s.rows == 0, None, ops.when(s.n == 0, undefined, value))


def _mse(ops: Any, s: RegressionStats) -> E:
    return F.share(ops, s.sse, s.n)


def _rmse(ops: Any, s: RegressionStats) -> E:
    return F.share(ops, s.sse, s.n) ** 0.5


def _mae(ops: Any, s: RegressionStats) -> E:
    return F.share(ops, s.sae, s.n)


def _mape(ops: Any, s: RegressionStats) -> E:
    return F.share(ops, s.sape, s.n)


def _rse(ops: Any, s: RegressionStats, zero_division: Any) -> E:
    value = relative_error(ops, s.sse, s.n * s.var_actual, zero_division)
    return _known(ops, s, value, zero_division, False)


def _rrse(ops: Any, s: RegressionStats, zero_division: Any) -> E:
    return _rse(ops, s, zero_division) ** 0.5


def _rae(ops: Any, s: RegressionStats, zero_division: Any) -> E:
    value = relative_error(ops, s.sae, s.sad_actual, zero_division)
    return _known(ops, s, value, zero_division, False)


def _r2(ops: Any, s: RegressionStats, zero_division: Any) -> E:
    value = explained(ops, s.sse, s.n * s.var_actual, zero_division)
    return _known(ops, s, value, zero_division, True)


def _explained_variance(ops: Any, s: RegressionStats, zero_division: Any) -> E:
    value = explained(ops, s.var_error, s.var_actual, zero_division)
    return _known(ops, s, value, zero_division, True)


def _pearson_corr(ops: Any, s: RegressionStats, zero_division: Any) -> E:
    value = pearson(ops, s.covariance, s.var_actual, s.var_predicted, s.sse, zero_division)
    return _known(ops, s, value, zero_division, True)


#: name -> (summary, build, params, aliases, inputs)
MEASURES: dict[str, tuple[str, Any, tuple[Param, ...], tuple[str, ...], tuple[str, ...]]] = {
    "mse": ("Mean squared error.", _mse, (), ("mean_squared_error",), ("actual", "predicted")),
    "rmse": ("Root mean squared error.", _rmse, (), (), ("actual", "predicted")),
    "mae": (
        "Mean absolute error (the lecture's mad).",
        _mae,
        (),
        ("mean_absolute_error",),
        ("actual", "predicted"),
    ),
    "mape": (
        "Mean absolute percentage error, |y - ŷ| / max(|y|, eps) (a share, not x 100).",
        _mape,
        (),
        ("mean_absolute_percentage_error",),
        ("actual", "predicted"),
    ),
    "rse": (
        "Relative squared error: Σ(y - ŷ)² / Σ(y - ȳ)².",
        _rse,
        (ZD,),
        (),
        ("actual", "predicted"),
    ),
    "rrse": (
        "Root relative squared error: sqrt(rse).",
        _rrse,
        (ZD,),
        (),
        ("actual", "predicted"),
    ),
    "rae": (
        "Relative absolute error: Σ|y - ŷ| / Σ|y - ȳ| (not streaming: needs the mean first).",
        _rae,
        (ZD,),
        (),
        ("actual", "predicted"),
    ),
    "pearson_corr": (
        "Pearson correlation of actual and predicted (the lecture's corr).",
        _pearson_corr,
        (ZD,),
        (),
        ("actual", "predicted"),
    ),
    "r2": (
        "Coefficient of determination: 1 - Σ(y - ŷ)² / Σ(y - ȳ)².",
        _r2,
        (ZD,),
        ("r2_score",),
        ("actual", "predicted"),
    ),
    "explained_variance": (
        "Explained variance: 1 - var(y - ŷ) / var(y).",
        _explained_variance,
        (ZD,),
        ("explained_variance_score",),
        ("actual", "predicted"),
    ),
    "hivemall_r2": (
        "r2 in Hivemall's argument order: hivemall_r2(predicted, actual).",
        _r2,
        (ZD,),
        (),
        ("predicted", "actual"),
    ),
}

for _name, (_summary, _build, _params, _aliases, _inputs) in MEASURES.items():
    measure(
        _name,
        "aggregate",
        FAMILY,
        _summary,
        inputs=_inputs,
        params=_params,
        aliases=_aliases,
    )(_build)
