"""Scores against binary labels in Polars: aggregates that need no sorted input.

``logloss`` and ``brier_score_loss`` sum the registry's per-row term (each
statistic computed once, streaming). ``auc`` ranks the known rows' scores
(``rank('average')``, ties averaged) and takes the Mann-Whitney statistic of
the positives' ranks. ``average_precision_score`` ranks them from the highest
with ties given the largest rank (``rank('max', descending=True)``), which is
N(>= s) among all rows and P(>= s) among the positives: the mean over the
positives of their ratio is the step-wise AP. ``area_under_pr`` sorts them from the highest
and reads the running sums at the last row of each run of equal scores (Spark's trapezoid
sum). ``expected_calibration_error``
sums prob - actual per bin (a window sum over each row's bin, whatever ``n_bins``).
``binned_auc`` and ``binned_average_precision_score`` rank each row's bin on the threshold grid
as ``auc`` and ``average_precision_score`` rank the scores.

Examples
--------
>>> import polars as pl
>>> import mlsql.polars as mp
>>> df = pl.DataFrame({"actual": [1, 1, 0, 1, 1, 0], "predicted": [0.8, 0.7, 0.5, 0.5, 0.3, 0.2]})
>>> df.select(mp.auc("actual", "predicted")).item()
0.8125
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from mlsql import _classification_params as CP
from mlsql._front.build import function, lookup
from mlsql._registry import Measure, measures
from mlsql.measures import scores as SC
from mlsql.polars._build import evaluate
from mlsql.polars._checks import checked
from mlsql.polars._dtypes import Pairs
from mlsql.polars._engine import POLARS
from mlsql.polars.families import _classification as K
from mlsql.polars.families._classification import params  # noqa: F401  (plug-in hook)

FAMILIES = (SC.FAMILY,)
NAMES = SC.ROLES


def probability(func: str, name: str, score: pl.Expr) -> pl.Expr:
    """``score`` (Float64), refused below 0 (first) or above 1."""
    out = checked(
        score,
        lambda v: v < 0,
        lambda _: CP.probability_value_message(func, name, CP.OUT_OF_RANGE[0]),
    )
    return checked(
        out, lambda v: v > 1, lambda _: CP.probability_value_message(func, name, CP.OUT_OF_RANGE[1])
    )


def check(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """The label boolean or 0/1, the score a finite number (as Float64), a probability in [0, 1]."""
    out = []
    mask = K.known(*(e for e, _ in pairs))
    for name, (expr, dtype) in zip(names, pairs, strict=True):
        if NAMES[name] == "label":
            out.append(K.binary_flag(func, name, expr, dtype))
            continue
        # a score is checked on rows whose label is known
        score = K.number(func, name, pl.when(mask).then(expr), dtype, finite=True)
        if func in SC.PROBABILITIES:
            score = probability(func, name, score)
        out.append(score)
    return out


def _label_score(m: Measure, inputs: tuple[pl.Expr, ...]) -> tuple[pl.Expr, pl.Expr]:
    by_role = {NAMES[n]: x for n, x in zip(m.inputs, inputs, strict=True)}
    return by_role["label"], by_role["score"]


def _known_pair(m: Measure, inputs: tuple[pl.Expr, ...]) -> tuple[pl.Expr, pl.Expr]:
    """The known rows' label and score (rows with a NULL side dropped)."""
    y, s = _label_score(m, inputs)
    mask = K.known(y, s)
    return y.filter(mask), s.filter(mask)


class _Loss:
    """Per-row statistics of logloss: 1 per known row and its loss (NULL where unknown)."""

    def __init__(self, m: Measure) -> None:
        self.m = m

    def rows(self, *inputs: pl.Expr) -> SC.LossStats:
        y, s = _label_score(self.m, inputs)
        if self.m.name == "brier_score_loss":
            term = SC.squared_error_term(K.OPS, y.cast(pl.Float64), s)
        else:
            p = s.clip(SC.CLIP, 1 - SC.CLIP)
            term = SC.log_loss_term(K.OPS, y.cast(pl.Float64), p.log(), (1 - p).log())
        return SC.LossStats(n=y.cast(pl.Int64) * 0 + s * 0 + 1, total_loss=term)

    @staticmethod
    def pool(ops: Any, s: SC.LossStats) -> SC.LossStats:
        return SC.LossStats(ops.sum(s.n), ops.sum(s.total_loss))


def rank_stats_of(m: Measure) -> Any:
    """Positives, negatives and U from the average ranks of the known rows' scores."""

    def stats(*inputs: pl.Expr, weight: pl.Expr | None = None) -> SC.RankStats:
        if weight is not None:
            return weighted_rank_stats(m, inputs, weight)
        y, s = _label_score(m, inputs)
        mask = K.known(y, s)
        yk, sk = y.filter(mask), s.filter(mask)
        n_pos = yk.cast(pl.Int64).sum()
        n_neg = mask.sum().cast(pl.Int64) - n_pos
        u = sk.rank("average").filter(yk).sum() - n_pos * (n_pos + 1) / 2
        return SC.RankStats(n_pos, n_neg, u)

    return stats


def _weighted_known(
    m: Measure, inputs: tuple[pl.Expr, ...], weight: pl.Expr
) -> tuple[pl.Expr, pl.Expr, pl.Expr, pl.Expr]:
    """The known rows' scores, the positives' weights, the negatives' weights, the scores sorted."""
    y, s = _label_score(m, inputs)
    mask = K.known(y, s, weight)
    yk, sk, wk = y.filter(mask), s.filter(mask) + 0.0, weight.filter(mask)
    positive = wk * yk.cast(pl.Float64)
    return sk, positive, wk - positive, sk.sort()


def _cumulative(values: pl.Expr, scores: pl.Expr) -> pl.Expr:
    """0, then the running sums of ``values`` in ascending ``scores`` (n + 1 values)."""
    return pl.lit(0.0).append(values.sort_by(scores).cum_sum())


def weighted_rank_stats(m: Measure, inputs: tuple[pl.Expr, ...], weight: pl.Expr) -> SC.RankStats:
    """Weighted Mann-Whitney: U = Σ over positives of w x (negative weight scored lower + ties / 2).

    The negatives' weight scored below s and at most s are read from their running
    sums in ascending score order, at the positions ``search_sorted`` gives.
    """
    sk, positive, negative, ordered = _weighted_known(m, inputs, weight)
    below_or_tie = _cumulative(negative, sk)
    lower = below_or_tie.gather(ordered.search_sorted(sk, side="left"))
    upper = below_or_tie.gather(ordered.search_sorted(sk, side="right"))
    u = (positive * (lower + upper) / 2).sum()
    return SC.RankStats(positive.sum(), negative.sum(), u, rows=sk.len())


def weighted_precision_stats(
    m: Measure, inputs: tuple[pl.Expr, ...], weight: pl.Expr
) -> SC.PrecisionStats:
    """Weighted step-wise AP: Σ over positives of w x WP(>= s) / W(>= s), over Σ positive w.

    A row of weight 0 adds nothing (and a score whose rows all weigh 0 is no step).
    """
    sk, positive, negative, ordered = _weighted_known(m, inputs, weight)
    n = sk.len()
    start = ordered.search_sorted(sk, side="left")
    total_w = positive.sum() + negative.sum()
    at_least_all = total_w - _cumulative(positive + negative, sk).gather(start)
    at_least_positive = positive.sum() - _cumulative(positive, sk).gather(start)
    ratio = pl.when(at_least_all > 0).then(at_least_positive / at_least_all).otherwise(0.0)
    return SC.PrecisionStats(
        n=n.cast(pl.Int64),
        n_positive=positive.sum(),
        precision_sum=(positive * ratio).sum(),
    )


def precision_stats_of(m: Measure) -> Any:
    """Known rows, positives and Σ over the positives of P(>= s) / N(>= s), from max ranks."""

    def stats(*inputs: pl.Expr, weight: pl.Expr | None = None) -> SC.PrecisionStats:
        if weight is not None:
            return weighted_precision_stats(m, inputs, weight)
        yk, sk = _known_pair(m, inputs)
        sk = sk + 0.0  # -0.0 ranks as 0.0
        at_least_all = sk.rank("max", descending=True).filter(yk).cast(pl.Float64)
        at_least_positive = sk.filter(yk).rank("max", descending=True).cast(pl.Float64)
        return SC.PrecisionStats(
            n=sk.len().cast(pl.Int64),
            n_positive=yk.cast(pl.Int64).sum(),
            precision_sum=(at_least_positive / at_least_all).sum(),
        )

    return stats


def trapezoid_stats(
    m: Measure, inputs: tuple[pl.Expr, ...], weight: pl.Expr | None = None
) -> SC.PrecisionStats:
    """Spark's trapezoid sum: the known rows sorted from the highest score, the running
    positives and rows read at each run's last row (the run's point), and each run's
    :func:`mlsql.measures.scores.pr_trapezoid` from its point and the one before (its own for
    the first). A run reached before any weight is no point (rows that weigh 0 are absent)."""
    y, s = _label_score(m, inputs)
    mask = K.known(y, s) if weight is None else K.known(y, s, weight)
    sk = s.filter(mask) + 0.0  # -0.0 ties with 0.0
    wk = pl.lit(1.0) if weight is None else weight.filter(mask).cast(pl.Float64)
    positive = wk * y.filter(mask).cast(pl.Float64)
    every = positive * 0.0 + wk
    order = -sk  # descending, as a key (Polars sorts ties in no fixed order, which no sum sees)
    ordered = sk.sort_by(order)
    after = ordered.shift(-1)
    run_end = after.is_null() | (ordered != after)
    rows, pos = every.sort_by(order).cum_sum(), positive.sort_by(order).cum_sum()
    point = run_end & (rows > 0)
    rows, pos = rows.filter(point), pos.filter(point)
    precision = pos / rows
    run = pos - pos.shift(1).fill_null(0.0)
    area = SC.pr_trapezoid(K.OPS, run, precision, precision.shift(1).fill_null(precision)).sum()
    return SC.PrecisionStats(
        n=sk.len().cast(pl.Int64), n_positive=positive.sum(), precision_sum=area
    )


def grid_stats_of(m: Measure) -> Any:
    """The statistics over the threshold grid: ``auc``'s and ``average_precision_score``'s
    over each row's bin (:func:`mlsql.measures.scores.grid_bin`) in place of its score, the
    bins ranked as those rank the scores; ``binned_auc``'s U then less
    :func:`mlsql.measures.scores.grid_top_ties` of the rows scored 1. (Counting per bin by a
    window over it, as ``expected_calibration_error`` does, took 10 times as long.)"""
    rank, precision = rank_stats_of(m), precision_stats_of(m)

    def stats(*inputs: pl.Expr, weight: pl.Expr | None = None) -> SC.GridStats:
        y, s = _label_score(m, inputs)
        score = s.cast(pl.Float64)

        def at(thresholds: Any) -> Any:
            # the grid's size as a column, not a scalar: Polars divides by a scalar as it
            # multiplies by its inverse (3.0 / 10 gives 0.30000000000000004), which would put
            # a score on a grid point in the bin below
            size = score * 0.0 + float(thresholds)
            # (and -0.0 is bin 0); not strict: the streaming engine may cast a NaN score before
            # the input check names it
            b = SC.grid_bin(K.OPS, score, size).cast(pl.Int64, strict=False)
            binned = tuple(
                b if NAMES[n] == "score" else x for n, x in zip(m.inputs, inputs, strict=True)
            )
            if m.name == "binned_average_precision_score":
                return precision(*binned, weight=weight)
            st = rank(*binned, weight=weight)
            mask = K.known(y, s) if weight is None else K.known(y, s, weight)
            top = mask & (score >= 1)
            w = 1.0 if weight is None else weight.cast(pl.Float64)
            flag = y.cast(pl.Float64)
            top_pos, top_neg = ((w * x).filter(top).sum() for x in (flag, 1 - flag))
            u = SC.grid_top_ties(K.OPS, st.u, top_pos, top_neg)
            return SC.RankStats(st.n_positive, st.n_negative, u, rows=st.rows)

        return SC.GridStats(at=at)

    return stats


def over_bins_of(
    p: pl.Expr, d: pl.Expr, size: pl.Expr
) -> Callable[[Any, SC.BinTerm, bool], pl.Expr]:
    """``CalibrationStats.over_bins`` of the rows' probabilities ``p`` (NULL on the rows left
    out), their terms ``d`` and sizes ``size``: each row's bin computed once, the bin's sums
    by a window over it (``sum().over(bin)``, which Polars also runs inside
    ``group_by().agg``), each bin's term counted once, at its first row."""

    def over_bins(n_bins: Any, term: SC.BinTerm, largest: bool) -> pl.Expr:
        b = SC.calibration_bin(K.OPS, p, n_bins)
        first_of_bin = b.is_not_null() & b.is_first_distinct()
        per_bin = term(d.sum().over(b).abs(), size.sum().over(b)).filter(first_of_bin)
        return per_bin.max() if largest else per_bin.sum()

    return over_bins


def calibration_function(m: Measure) -> Any:
    """expected_calibration_error: the rows' prob - actual summed per bin, the bins' sums' sizes
    summed.

    Each row's bin is computed (:func:`mlsql.measures.scores.calibration_bin`, the DuckDB
    macro's), and its terms are summed per bin by a window over it (``sum().over(bin)``, which
    Polars also runs inside ``group_by().agg``); each bin's sum is then counted once, at its
    first row. One expression whatever ``n_bins`` (one per bin overflowed Python's recursion
    limit at 1000 bins). The inputs' checks (Python batch functions, which Polars does not share
    between terms) run once, in the row count; the bins' terms read the inputs as they are,
    which the failed check stops when one is bad.
    """

    def checked_and_raw(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
        mask = K.known(*(e for e, _ in pairs))
        raw = [pl.when(mask).then(e).cast(pl.Float64) for e, _ in pairs]
        return [*check(func, names, pairs), *raw]

    def build(
        *inputs: pl.Expr, n_bins: int, norm: str, sample_weight: pl.Expr | None = None
    ) -> pl.Expr:
        y, p = _label_score(m, inputs[:2])
        y_raw, p_raw = _label_score(m, inputs[2:])
        one = (p - y.cast(pl.Float64)) * 0 + 1
        d, size = p_raw - y_raw, (p_raw - y_raw) * 0 + 1.0
        if sample_weight is not None:
            w = sample_weight.cast(pl.Float64)
            one, d, size = one * w, d * w, size * w
        stats = SC.CalibrationStats(one.sum(), over_bins_of(p_raw, d, size))
        return evaluate(m.build, stats, n_bins=n_bins, norm=norm)  # type: ignore[arg-type]

    return K.documented(function(POLARS, m, build, checked_and_raw, sys.modules[__name__]), m)


def function_of(m: Measure) -> Any:
    """The Polars function of a score measure."""
    module = sys.modules[__name__]
    if m.name == "average_precision_score":
        return K.direct(m, precision_stats_of(m), check, module)
    if m.name == "area_under_pr":
        return K.direct(
            m, lambda *inputs, weight=None: trapezoid_stats(m, inputs, weight), check, module
        )
    if m.name in SC.GRID:
        return K.direct(m, grid_stats_of(m), check, module)
    if m.name == "expected_calibration_error":
        return calibration_function(m)
    if m.name.endswith("logloss") or m.name == "brier_score_loss":
        loss = _Loss(m)
        return K.pooled(m, loss.rows, loss.pool, check, module)
    return K.direct(m, rank_stats_of(m), check, module)


__all__: list[str] = []
for _m in measures(family=SC.FAMILY):
    if _m.build is not None and _m.available_in("polars"):
        globals()[_m.name] = function_of(lookup(_m))
        __all__.append(_m.name)
