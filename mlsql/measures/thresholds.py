"""From scores to decisions: calibration bins and per-label thresholds, as tables.

``calibration_table(source, actual, prob, n_bins := 10, strategy := 'uniform',
by := ...)``: one row
per non-empty bin of each group: ``bin`` (0-based), ``low`` and ``high`` (its
edges, bin / n_bins and (bin + 1) / n_bins), ``count``, ``mean_score`` (the
mean probability in the bin) and ``observed_rate`` (the share of positives in
the bin). The bins are those of ``expected_calibration_error``, by the same
formula (:func:`mlsql.measures.scores.calibration_bin`): equal-width bins on
[0, 1], the last closed, p in bin min(floor(p · n_bins), n_bins - 1) in
double precision. So Σ over the rows of count / n · |mean_score -
observed_rate| is ``expected_calibration_error``, and the (observed_rate,
mean_score) pairs are scikit-learn's ``calibration_curve(strategy='uniform')``
(which drops empty bins too; it puts a probability equal to an inner edge,
such as 0.3 with 10 bins, in the bin below, where these bins, left-closed, put
it in the bin above). ``actual`` is boolean or 0/1, ``prob`` a
probability in [0, 1] (NaN, infinite or outside [0, 1] is an error, as for
``expected_calibration_error``); rows with either side NULL are skipped. With
``sample_weight`` (a weight column) ``count`` is the bin's total weight and
``mean_score`` and ``observed_rate`` are weighted means; a row weighing 0 is
dropped (a bin holding only such rows has no row), a NULL weight makes the row
unknown, and a negative, NaN or infinite weight is an error.

``strategy := 'quantile'`` cuts each group's bins at its own percentiles,
scikit-learn's ``calibration_curve(strategy='quantile')`` step by step: the
edges e_0 <= ... <= e_n_bins are numpy's ``percentile`` (its default, linear
method) of the group's probabilities at the levels ``linspace(0, 1, n_bins +
1)``, and a probability p falls in bin number #{k in 1 .. n_bins - 1 : e_k <
p} (``searchsorted`` of the inner edges, side 'left'): a probability equal to
an inner edge is in the bin below it, the first bin is closed, and ``low``
and ``high`` are the bin's edges e_bin and e_(bin + 1). The edges are
computed as numpy computes them, to the bit (:func:`quantile_level`,
:func:`quantile_index`, :func:`quantile_edge`), from the group's sorted
probabilities: the engines' own percentiles (DuckDB's ``quantile_cont``,
Polars' linear ``quantile``, Spark's ``percentile``) interpolate in another
order, which moves an edge by a unit in the last place often enough (44 of
3000 random small samples with ties, in DuckDB) to put a probability equal to
it in the other bin. Ties can make edges equal (scikit-learn keeps them): a
bin between two equal edges is empty and, as every empty bin, has no row, so
the bin numbers of a group may skip, and a probability equal to a repeated
edge is in the lowest bin it ends. With ``sample_weight`` the edges are the
percentiles of the probabilities of the rows that count (weight > 0), each
row once, whatever its weight, and ``count``, ``mean_score`` and
``observed_rate`` are weighted as above: scikit-learn's ``calibration_curve``
takes no weights (1.9), and numpy's weighted percentiles exist only for
another method (``inverted_cdf``), so equal-count bins of the rows are the
rule that stays scikit-learn's on unit weights. The quantile bins hold a
group's probabilities (one sort per group, as any exact percentile does);
each row's bin is found among the n_bins - 1 inner edges.

``label_thresholds(source, actual, scores, beta := 1, zero_division := 0,
n_bins := NULL, by := ...)``: over label lists (``actual``) and label scores
(``scores``: a map label -> score or a list of {label, score}, as the ranking
measures read them), one row per label of each group: the ``threshold`` that
maximises the label's F-beta on the data when the label is predicted for the
rows whose score is >= threshold, with ``tp``, ``fp``, ``fn``, ``support``
(tp + fn), ``precision``, ``recall`` and ``fbeta`` at it, and ``micro_fbeta``,
the F-beta of the counts pooled over the group's labels when every label uses
its own threshold (the same value on each row of a group).

Notes
-----
- The labels of a group are those true or scored in its known rows (a row is
  known when neither ``actual`` nor ``scores`` is NULL). A label missing from
  a row's scores, or scored NULL, is not predicted at any threshold (its
  score is the lowest); a label's first entry in a list of {label, score}
  counts.
- Candidates are the label's distinct scores and +infinity (predict the label
  nowhere). The best candidate has the highest F-beta; among equal F-beta the
  highest threshold wins. F-beta is compared as computed, in double
  precision, by the formula every engine shares; with beta 1, 2 or 0.5 (any
  beta whose weights are binary fractions) equal fractions give equal
  numbers, so ties are exact.
- Where no threshold gets a true positive (a label never true, or whose true
  rows are never scored) F-beta is 0 at every finite threshold, so the
  threshold is +infinity: tp = fp = 0, fn = support. A label never true then
  has tp + fp + fn = 0: its precision, recall and F-beta are undefined and
  take the ``zero_division`` value (0 or 1; NaN; 'diagnose': 1; 'ignore':
  NULL), and it adds nothing to ``micro_fbeta``. A label with support whose
  true rows are never scored has precision undefined (zero_division), recall
  and F-beta 0.
- Exact by default: the candidates come from one sort of each label's scores
  and cumulative sums (one GROUP BY of (group, label, score), then a window).
  ``n_bins`` (a whole number from 1 to 100000) bins the scores instead, with the bins of
  ``calibration_table``: the candidates are the bin edges k / n_bins and a
  label is predicted where its score's bin is >= k, so the statistics are
  counts per (group, label, bin), mergeable and of constant size per label.
  Scores must then be probabilities in [0, 1]. Error bound: let t* be the
  exact best threshold, F* its F-beta, and c the label's rows scored in
  [floor(t* · n_bins) / n_bins, t*) (inside one bin). Predicting at that bin
  edge adds at most c false positives to the counts at t*, so the binned best
  F-beta satisfies F* - F_binned <= F* · c / (D + c) <= c / (b² · support + c),
  where D = (1 + b²) tp + b² fn + fp = tp + fp + b² · support is F-beta's
  denominator at t*; it is exact when no score falls strictly inside a bin
  below t* (for instance scores that are multiples of 1 / n_bins).
- Scores must be finite numbers (NaN and infinite scores are errors, as in
  every score measure).
- ``sample_weight`` (a weight column) makes tp, fp, fn and support sums of the
  rows' weights (DOUBLE), so the chosen threshold maximises the weighted
  F-beta; a row weighing 0 is dropped before anything is counted (a label only
  such rows hold or score has no row), a NULL weight makes the row unknown,
  and a negative, NaN or infinite weight is an error. With float weights,
  equal F-beta values may differ in the last bit (sums in another order), so
  a tie between two thresholds is exact only for whole-number weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsql import _formulas as F
from mlsql import _params as P
from mlsql._formulas import Counts, formula
from mlsql._registry import Param, measure
from mlsql.measures import scores as SC

FAMILY = "thresholds"
E = Any  # an engine expression

BY = Param("by", None)
#: the output columns after the group columns
CALIBRATION_COLUMNS = ("bin", "low", "high", "count", "mean_score", "observed_rate")
THRESHOLD_COLUMNS = (
    "label",
    "threshold",
    "tp",
    "fp",
    "fn",
    "support",
    "precision",
    "recall",
    "fbeta",
    "micro_fbeta",
)
THRESHOLD_BINS = P.THRESHOLD_BINS
STRATEGY = P.CALIBRATION_STRATEGY


# ------------------------------------------------------------------ calibration
def calibration_values(ops: Any, p_bin: E, n_bins: E, n: E, score_sum: E, positives: E) -> dict:
    """A bin's columns from its (0-based) bin, its rows, Σ prob and Σ actual."""
    return {
        "low": p_bin / n_bins,
        "high": (p_bin + 1) / n_bins,
        "count": n,
        "mean_score": score_sum / n,
        "observed_rate": positives / n,
    }


def quantile_level(ops: Any, k: E, n_bins: E) -> E:
    """The k-th percentile level of ``calibration_curve(strategy='quantile')`` (k = 0 ..
    n_bins) as numpy computes it: ``linspace(0, 1, n_bins + 1)`` is k · (1 / n_bins) with
    the last exactly 1, and ``percentile`` multiplies by 100 and divides by 100, each
    step rounded, so the virtual index below is numpy's to the bit."""
    return ops.when(k == n_bins, 1.0, k * (1.0 / n_bins) * 100.0 / 100.0)


class _Numbers:
    """Python numbers as ops: the levels of a Python ``n_bins``, computed before the query (an
    engine's optimiser may fold x · 100 / 100 into x, as Polars does, losing numpy's
    rounding)."""

    @staticmethod
    def when(condition: Any, then: Any, otherwise: Any) -> Any:
        return then if condition else otherwise


def quantile_levels(n_bins: int) -> list[float]:
    """:func:`quantile_level` for k = 0 .. n_bins, as Python floats.

    Examples
    --------
    >>> quantile_levels(6)[1], quantile_levels(6)[-1]
    (0.16666666666666663, 1.0)
    """
    return [quantile_level(_Numbers, k, n_bins) for k in range(n_bins + 1)]


def quantile_index(ops: Any, n: E, q: E) -> tuple[E, E, E]:
    """numpy's linear percentile of n sorted values at level q reads two of them: (the
    0-based position of the lower, of the upper, the weight t of the upper). The virtual
    index is (n - 1) · q; at or beyond the last value both are the last."""
    idx = (n - 1) * q
    lower = ops.floor(idx)
    last = idx >= n - 1
    return ops.when(last, n - 1, lower), ops.when(last, n - 1, lower + 1), idx - lower


def quantile_edge(ops: Any, a: E, b: E, t: E) -> E:
    """numpy's interpolation between the lower value a and the upper b (``_lerp``): a + (b -
    a) · t below t = 0.5, b - (b - a) · (1 - t) from it, so that it is monotone and exact at
    both ends."""
    d = b - a
    return ops.when(t >= 0.5, b - d * (1 - t), a + d * t)


# ------------------------------------------------------------------ thresholds
@formula
def selection_fbeta(ops: Any, c: Counts, beta: Any) -> E:
    """F-beta of a candidate threshold for choosing the best: 0 where tp = 0.

    The same weighted counts as :func:`mlsql._formulas.fbeta`, so a chosen
    threshold's F-beta is the number compared.
    """
    w, u, v = F.fbeta_weights(ops, beta)
    weighted_tp = w * c.tp
    return ops.when(c.tp == 0, 0.0, weighted_tp / (weighted_tp + u * c.fn + v * c.fp))


def chosen(ops: Any, tp: E, fp: E, support: E, key: E) -> tuple[Counts, E]:
    """The best candidate's counts and threshold: +infinity (predict nowhere) without a tp."""
    none = tp == 0
    counts = Counts(
        ops.when(none, 0, tp), ops.when(none, 0, fp), ops.when(none, support, support - tp)
    )
    return counts, ops.when(none, float("inf"), key)


def threshold_values(ops: Any, c: Counts, beta: Any, zero_division: Any) -> dict[str, E]:
    """Precision, recall and F-beta of a label at its threshold."""
    return {
        "precision": F.precision(ops, c, zero_division),
        "recall": F.recall(ops, c, zero_division),
        "fbeta": F.fbeta(ops, c, beta, zero_division),
    }


def micro_fbeta(ops: Any, c: Counts, beta: Any, zero_division: Any) -> E:
    """F-beta of the counts pooled over a group's labels, each at its own threshold."""
    return F.fbeta(ops, F.pooled(ops, c), beta, zero_division)


# ------------------------------------------------------------------ declarations
@dataclass(frozen=True)
class CalibrationBin:
    """One bin's statistics as a table's row holds them: its (0-based) number, its rows,
    Σ prob and Σ actual."""

    bin: E
    n: E
    score_sum: E
    positives: E


def _calibration_row(ops: Any, s: CalibrationBin, n_bins: Any, **table: Any) -> dict:
    """A bin's row of ``calibration_table`` (the uniform bins' edges; quantile bins take
    their edges from the group's percentiles): :func:`calibration_values`."""
    return calibration_values(ops, s.bin, n_bins, s.n, s.score_sum, s.positives)


measure(
    "calibration_table",
    "table",
    FAMILY,
    "One row per non-empty calibration bin (and group): bin, low, high, count, mean_score, "
    "observed_rate; the bins of expected_calibration_error, or (strategy 'quantile') bins "
    "cut at the group's percentiles.",
    inputs=("source", "actual", "prob"),
    params=(SC.N_BINS, STRATEGY, BY),
)(_calibration_row)


def _threshold_row(ops: Any, c: Counts, beta: Any, zero_division: Any, **table: Any) -> dict:
    """A label's ratios at its chosen threshold, in ``label_thresholds``' row (the micro F-beta
    beside them is over the group's labels: :func:`micro_fbeta`): :func:`threshold_values`."""
    return threshold_values(ops, c, beta, zero_division)


measure(
    "label_thresholds",
    "table",
    FAMILY,
    "One row per label (and group): the score threshold maximising the label's F-beta, with "
    "tp, fp, fn, support, precision, recall and F-beta at it, and the micro F-beta of every "
    "label at its own threshold.",
    inputs=("source", "actual", "scores"),
    params=(P.BETA, P.ZERO_DIVISION, THRESHOLD_BINS, BY),
)(_threshold_row)
