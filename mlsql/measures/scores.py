"""Scores against binary labels: log loss, ROC AUC, average precision, Brier score and calibration.

``logloss(actual, predicted)``: the mean of -(y ln p + (1 - y) ln(1 - p)), p
clipped to [1e-15, 1 - 1e-15] (Hivemall's clip); ``actual`` is boolean or 0/1,
``predicted`` the probability of the positive class.

``auc(actual, predicted)``: the area under the ROC curve of scores
``predicted`` for labels ``actual`` (boolean or 0/1), computed as the
Mann-Whitney statistic: the share of (positive, negative) pairs whose positive
scores higher, a tie counting one half, which is scikit-learn's
``roc_auc_score`` with ties. It needs no sorted input (Hivemall's ``auc``
does). DuckDB sorts the group's (score, label) pairs inside the aggregate, so
it holds the group's rows in memory (about 1.5 s per million rows on one
core); Polars ranks them (``rank('average')``); Spark collects and sorts them
inside the aggregate, holding the group's rows in memory as DuckDB does.

``average_precision_score(actual, score)``: scikit-learn's step-wise average
precision, Σ over the distinct scores t, from the highest, of (R(t) - R(t')) P(t)
where P(t) and R(t) are the precision and recall of predicting positive every
row scored >= t and t' the next higher score. Tied scores form one step, as in
scikit-learn. Equivalently: the mean, over the positive rows i, of the
precision at their score, P(>= s_i) / N(>= s_i), where P(>= s) counts the
positives and N(>= s) all the rows scored at least s.

``area_under_pr(actual, score)``: Spark MLlib's ``areaUnderPR``
(``BinaryClassificationMetrics``, and ``BinaryClassificationEvaluator`` with
``metricName='areaUnderPR'``, exact: ``numBins=0``): the trapezoid area under
the points (R(t), P(t)) of the distinct scores t from the highest, with (0,
P(t₁)) put first, t₁ the highest score. With P_k the positives among the rows
scored at least t_k: Σ_k (P_k - P_{k-1}) (P(t_k) + P(t_{k-1})) / 2 over the
positives, P(t₀) = P(t₁).

``binned_auc(actual, score, thresholds := 100)`` and
``binned_average_precision_score(actual, score, thresholds := 100)``: torchmetrics'
``binary_auroc(preds, target, thresholds=N)`` and ``binary_average_precision(...,
thresholds=N)``, the binned (constant-memory) curves. The thresholds are t_i = i / (N - 1),
i = 0 .. N - 1, in double precision (torchmetrics' ``linspace(0, 1, N)``); a row is
predicted positive at t_i when its score >= t_i. With tp_i and fp_i the positives and
negatives scored >= t_i (P, N their totals): ``binned_auc`` is the trapezoid area of the
points (fp_i / N, tp_i / P) from t_{N-1} = 1 down to t_0 = 0; ``binned_average_precision_score``
is Σ_i (R_i - R_{i+1}) P_i with R_i = tp_i / P, P_i = tp_i / (tp_i + fp_i) (0 where nothing is
predicted) and R_N = 0, torchmetrics' -Σ (r[i+1] - r[i]) p[i]. Each row counts in one bin,
the number of grid points i >= 1 at most its score (:func:`grid_bin`), so both are the
exact measures (``auc``, ``average_precision_score``) of the rows' bins, except that
torchmetrics' binned ROC starts at its point of threshold 1, not at (0, 0): the pairs of a
positive and a negative both scored 1 count 0, not one half (:func:`grid_top_ties`).

``brier_score_loss(actual, prob, scale_by_half := 'auto')``: the mean of (prob - actual)²
('auto' and True, scikit-learn's binary value); ``scale_by_half=False`` doubles it, the
squared errors of both classes, as scikit-learn's.

``expected_calibration_error(actual, prob, n_bins := 10, norm := 'l1')``: with
g_b = |mean(prob)_b - mean(actual)_b| the gap of bin b and n_b its rows, Σ_b
n_b / n g_b = Σ_b |Σ_b (prob - actual)| / n (``norm`` 'l1'), sqrt(Σ_b n_b / n
g_b²) ('l2') or the largest g_b of a non-empty bin ('max'), torchmetrics'
``binary_calibration_error(norm=)``. The bins are ``n_bins`` equal-width bins on
[0, 1], the last closed: the bin of p is min(floor(p · n_bins), n_bins - 1),
computed in double precision (so with 10 bins 0.3 is in [0.3, 0.4) and 1 in
[0.9, 1]). ``n_bins`` is a whole number from 1 to 100000
(``mlsql._params.MAX_BINS``).

Notes
-----
- mlsql takes (actual, predicted). Hivemall's ``logloss(predicted, actual)``
  and ``auc(score, label)`` take the other order: that order is offered as
  ``hivemall_logloss`` and ``hivemall_auc``.
- AUC is undefined when the labels hold one class only: ``zero_division``
  (default 0; 'diagnose': 1; scikit-learn raises an error).
- Average precision is undefined when the labels hold no positive:
  ``zero_division`` (default 0, scikit-learn's value, which also warns;
  'diagnose': 1).
- Scores and probabilities must be finite numbers: NaN and infinite values
  are errors in every score measure (as scikit-learn). ``logloss`` clips its
  probabilities to [1e-15, 1 - 1e-15] (Hivemall's clip), so any finite number
  is accepted; ``brier_score_loss`` and ``expected_calibration_error`` take
  probabilities in [0, 1], and a value outside is an error (as scikit-learn's
  ``brier_score_loss``).
- Average precision is scikit-learn's step-wise sum over the distinct
  scores, not an interpolated area: tied scores form one step.
  ``area_under_pr`` is Spark's trapezoid area over the same points, which
  is larger wherever precision rises between two points (linear
  interpolation of precision is optimistic; Davis and Goadrich 2006).
- ``area_under_pr`` follows the NULL, one-class and weight rules of
  average precision: no positive is ``zero_division`` (Spark gives 0, the
  default), rows that weigh 0 are as absent (a weight counts as repeated
  rows). Spark keeps such rows: where every row of the highest scores weighs
  0 it puts a point of precision 1 first, and its area differs from mlsql's.
- ``expected_calibration_error`` puts p in bin min(floor(p · n_bins),
  n_bins - 1), computed in double precision: equal-width bins on [0, 1], the
  last closed (with 10 bins 0.3 is in [0.3, 0.4) and 1 in [0.9, 1]); each
  bin weighs n_b / n and empty bins add nothing. Under 'l2' and 'max' the
  gaps are torchmetrics' (its l2 is the root of the weighted mean of the
  squared gaps, not their root mean); torchmetrics puts p in the bin of the
  edges ``linspace(0, 1, n_bins + 1)`` (``bucketize``), which can differ from
  floor(p · n_bins) for a p on an edge, and its default is 15 bins (mlsql's
  10, scikit-learn's ``calibration_curve``'s 5). torchmetrics takes no
  weights.
- ``binned_auc`` and ``binned_average_precision_score`` take scores in [0, 1] (NaN,
  infinite or outside [0, 1] is an error; torchmetrics applies a sigmoid to a tensor with a
  value outside [0, 1], mlsql does not guess). ``thresholds`` is a whole number from 2 to
  100000 (torchmetrics: an int > 1). torchmetrics' grid is float32 (``linspace``'s default
  dtype), as its scores usually are; mlsql compares doubles, so a score within float32
  rounding of a grid point can fall on the other side. With one class only, torchmetrics gives 0 (its safe division,
  AUC and AP alike): ``zero_division`` (default 0). torchmetrics takes no weights; with
  ``sample_weight`` the counts tp_i, fp_i, P and N are sums of weights. As the grid grows
  finer, ``binned_auc`` approaches ``auc``: they are equal whenever every score lies on the
  grid, unless a positive and a negative are both scored 1. Spark MLlib's
  ``BinaryClassificationMetrics(numBins)`` is another binning (it down-samples the sorted
  distinct scores into runs of equal size), not this grid.
- Rows where either side is NULL are skipped; over none the result is NULL.
- ``sample_weight``: logloss, brier_score_loss and the calibration bins are
  weighted means (scikit-learn's ``sample_weight``; n_b and n are sums of
  weights, and a bin whose rows all weigh 0 is empty); ``auc`` is the weighted
  Mann-Whitney statistic, Σ over (positive i, negative j) of w_i w_j (1 if
  i scores higher, 1/2 on a tie) over (Σ positive w)(Σ negative w), which is
  scikit-learn's ``roc_auc_score(sample_weight=)``; average precision weighs
  each step's positives and precision, as scikit-learn's. Known rows that all
  weigh 0: NULL for the means (as over no rows), ``zero_division`` for AUC
  (no pair of positive and negative weight) and average precision (no
  positive weight).
- Cost: ``brier_score_loss`` streams (a sum and a count). ``average_precision_score``
  and ``area_under_pr`` sort the group's (score, label) pairs inside the aggregate as ``auc``
  does.
  ``binned_auc`` and ``binned_average_precision_score``: DuckDB counts the rows per (bin,
  label) with ``histogram`` (memory per group of the order of the thresholds, not the rows;
  1M rows, 100 thresholds, one thread: 0.2-0.3 CPU s, ``auc`` 0.6); with ``sample_weight``
  per (bin, label, weight), so the map grows with the distinct weights too: bounded for
  whole or few weights (0.3 s), as slow as weighted ``auc`` for a million distinct float
  weights (about 15 s). Polars ranks each row's bin as ``auc`` ranks the scores (the
  group's rows in memory, as every Polars aggregate here; 0.4-0.6 CPU s); Spark collects the
  group's (bin, label) pairs as ``auc`` collects its scores.
  ``expected_calibration_error`` sums prob - actual per bin, each row's bin
  computed once: Polars by a window sum over the bin, Spark over the group's
  (bin, prob - actual) pairs sorted by bin (one pass), DuckDB over those pairs
  held in a list, one pass per bin (about 0.7 s per million rows with 10 bins).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mlsql import _formulas as F
from mlsql import _params as P
from mlsql._formulas import formula
from mlsql._registry import measure

E = Any  # an engine expression
FAMILY = "scores"
ZD = P.ZERO_DIVISION
#: Hivemall's clip of probabilities in logloss
CLIP = 1e-15
N_BINS = P.N_BINS
THRESHOLDS = P.THRESHOLDS
#: each input name's role: the 0/1 label, or the score (a probability for some measures)
ROLES = {
    "actual": "label",
    "label": "label",
    "predicted": "score",
    "score": "score",
    "prob": "score",
}
#: measures whose score input must be a probability in [0, 1]
PROBABILITIES = frozenset(
    {
        "brier_score_loss",
        "expected_calibration_error",
        "binned_auc",
        "binned_average_precision_score",
    }
)
#: the measures over the fixed threshold grid (their statistics are :class:`GridStats`)
GRID = ("binned_auc", "binned_average_precision_score")


def label_and_score(m: Any) -> tuple[str, str]:
    """The names of measure ``m``'s label input and score input, whatever their order."""
    by_role = {ROLES[name]: name for name in m.inputs}
    return by_role["label"], by_role["score"]


@dataclass(frozen=True)
class LossStats:
    """Known rows ``n`` and Σ over them of a per-row loss (clipped log loss, squared error)."""

    n: E
    total_loss: E


@dataclass(frozen=True)
class RankStats:
    """Positive and negative rows and U = Σ over positives of (negatives scored lower + ties / 2)."""

    n_positive: E
    n_negative: E
    u: E
    rows: E = None  # with sample_weight: the number of known rows (the n_* are then weights)


@dataclass(frozen=True)
class PrecisionStats:
    """Known rows ``n``, positives among them and Σ over the positives of P(>= s_i) / N(>= s_i)
    (``area_under_pr``: Σ over the runs of equal scores of :func:`pr_trapezoid`)."""

    n: E
    n_positive: E
    precision_sum: E


@dataclass(frozen=True)
class GridStats:
    """``at(thresholds)``: the statistics of the rows binned on the grid i / (thresholds - 1)
    (each row's score replaced by :func:`grid_bin`): :class:`RankStats` for ``binned_auc``
    (its U already less :func:`grid_top_ties`), :class:`PrecisionStats` for
    ``binned_average_precision_score``. Engines count per bin (memory of the order of the
    thresholds) where they can."""

    at: Callable[[Any], Any]


#: a calibration bin's term from its gap |Σ_b (prob - actual)| and size Σ_b 1: an engine expression
BinTerm = Callable[[E, E], E]


@dataclass(frozen=True)
class CalibrationStats:
    """Known rows ``n`` and ``over_bins(n_bins, term, largest)``: over the non-empty bins b, the
    sum (or with ``largest`` the maximum) of ``term(gap, size)`` where gap = |Σ_b (prob - actual)|
    and size = Σ_b 1 (with ``sample_weight`` both weigh each row); NULL without such a bin."""

    n: E
    over_bins: Callable[[Any, BinTerm, bool], E]


@formula
def log_loss_term(ops: Any, y: E, ln_p: E, ln_not_p: E) -> E:
    """-(y ln p + (1 - y) ln(1 - p)) of one row, given ln p and ln(1 - p) of the clipped p."""
    return -(y * ln_p + (1 - y) * ln_not_p)


@formula
def mann_whitney_auc(ops: Any, u: E, n_positive: E, n_negative: E, zero_division: Any) -> E:
    """U / (positives x negatives); undefined with one class ('diagnose': 1)."""
    return F.ratio(ops, u, n_positive * n_negative, zero_division, True)


@formula
def squared_error_term(ops: Any, y: E, p: E) -> E:
    """(p - y)² of one row: its Brier score."""
    return (p - y) * (p - y)


@formula
def step_average_precision(ops: Any, precision_sum: E, n_positive: E, zero_division: Any) -> E:
    """Σ over positives of the precision at their score / positives; undefined without positives."""
    return F.ratio(ops, precision_sum, n_positive, zero_division, True)


@formula
def pr_trapezoid(ops: Any, run_positive: E, run_precision: E, previous_precision: E) -> E:
    """A run of equal scores' trapezoid times the positives: run positives x (P(t) + P(t')) / 2.

    ``run_precision`` is P(t) at the run's score t, ``previous_precision`` the precision at the
    run before it (for the first run, its own: Spark's first point (0, P(t₁))). The run's recall
    step is ``run_positive`` over the positives, by which the sum is divided once
    (:func:`step_average_precision`). (``precision`` is a keyword to DuckDB 1.4's parser.)
    """
    return run_positive * (run_precision + previous_precision) / 2


@formula
def calibration_bin(ops: Any, p: E, n_bins: E) -> E:
    """min(floor(p · n_bins), n_bins - 1): the equal-width bin (0-based) of a probability p.

    It needs ``ops.floor``, beyond the core primitives.
    """
    b = ops.floor(p * n_bins)
    return ops.when(b > n_bins - 1, n_bins - 1, b)


@formula
def grid_bin(ops: Any, s: E, thresholds: E) -> E:
    """The 0-based bin of a score s in [0, 1] on the grid t_i = i / (thresholds - 1): the number
    of i >= 1 with t_i <= s, so s is predicted positive at t_i exactly when its bin is >= i.

    floor(s · (thresholds - 1)) corrected by one either way against the grid point itself, as
    i / (thresholds - 1) is rounded (in double precision) and so is the product. It needs
    ``ops.floor``, beyond the core primitives.
    """
    m = thresholds - 1
    k = ops.floor(s * m)
    up = (k < m) & ((k + 1) / m <= s)
    down = (k > 0) & (k / m > s)
    return ops.when(up, k + 1, ops.when(down, k - 1, k))


@formula
def grid_top_ties(ops: Any, u: E, top_positive: E, top_negative: E) -> E:
    """U of the binned scores less half the (positive, negative) pairs both in the top bin
    (scores equal to 1): torchmetrics' binned ROC starts at the point of threshold 1, not at
    (0, 0), so the segment from (0, 0) to it, (top negatives / N) (top positives / P) / 2, is
    not counted."""
    return u - top_positive * top_negative / 2


def _mean_loss(ops: Any, s: LossStats) -> E:
    return F.share(ops, s.total_loss, s.n)


def _auc(ops: Any, s: RankStats, zero_division: Any) -> E:
    n = s.n_positive + s.n_negative if s.rows is None else s.rows
    value = mann_whitney_auc(ops, s.u, s.n_positive, s.n_negative, zero_division)
    return ops.when(n == 0, None, value)


@formula
def brier_scale(ops: Any, scale_by_half: Any) -> E:
    """What a binary Brier score, the mean of (p - y)², is multiplied by under ``scale_by_half``.

    That mean is already the halved score: unhalved (False), the score also counts the
    negative class's ((1 - p) - (1 - y))², the same squared error, so it doubles. 'auto'
    halves for fewer than 3 classes (scikit-learn's rule), so a binary score stays as it is.
    """
    return F.choose(
        ops, scale_by_half, {"false": lambda: 2.0, "true": lambda: 1.0, "auto": lambda: 1.0}
    )


def _brier(ops: Any, s: LossStats, scale_by_half: Any) -> E:
    return _mean_loss(ops, s) * brier_scale(ops, scale_by_half)


def _average_precision(ops: Any, s: PrecisionStats, zero_division: Any) -> E:
    value = step_average_precision(ops, s.precision_sum, s.n_positive, zero_division)
    return ops.when(s.n == 0, None, value)


def _binned_auc(ops: Any, s: GridStats, thresholds: Any, zero_division: Any) -> E:
    return _auc(ops, s.at(thresholds), zero_division)


def _binned_average_precision(ops: Any, s: GridStats, thresholds: Any, zero_division: Any) -> E:
    return _average_precision(ops, s.at(thresholds), zero_division)


def calibration_terms(ops: Any) -> dict[str, tuple[BinTerm, bool]]:
    """Each norm's bin term (from the bin's gap g = |Σ_b (prob - actual)| and size c) and
    whether the bins' terms are combined by their maximum (else their sum); a bin of size 0 has
    no term.

    l1: g, summed then divided by n; l2: g² / c, summed, divided by n, rooted; max: g / c.
    The l1 term needs no size (a bin of size 0 has g = 0), so engines may skip counting it.
    """

    def sized(term: BinTerm) -> BinTerm:
        return lambda g, c: ops.when(c > 0, term(g, c), None)

    return {
        "l1": (lambda g, c: g, False),
        "l2": (sized(lambda g, c: g * g / c), False),
        "max": (sized(lambda g, c: g / c), True),
    }


def calibration_error(ops: Any, s: CalibrationStats, n_bins: Any, norm: Any) -> E:
    """The calibration error of the bins under ``norm``: ``expected_calibration_error``, and
    ``multiclass_calibration_error`` over each row's top label."""
    terms = calibration_terms(ops)

    def summed(norm: str) -> E:
        return F.share(ops, s.over_bins(n_bins, *terms[norm]), s.n)

    options = {
        "l1": lambda: summed("l1"),
        "l2": lambda: ops.sqrt(summed("l2")),
        "max": lambda: ops.when(s.n == 0, None, s.over_bins(n_bins, *terms["max"])),
    }
    return F.choose(ops, norm, options)


measure(
    "logloss",
    "aggregate",
    FAMILY,
    "Mean log loss of probabilities (predicted) for binary labels (actual), clipped at 1e-15.",
    aliases=("log_loss",),
)(_mean_loss)
measure(
    "hivemall_logloss",
    "aggregate",
    FAMILY,
    "logloss in Hivemall's argument order: hivemall_logloss(predicted, actual).",
    inputs=("predicted", "actual"),
)(_mean_loss)
measure(
    "auc",
    "aggregate",
    FAMILY,
    "ROC AUC of scores (predicted) for binary labels (actual), ties counting one half.",
    params=(ZD,),
    aliases=("roc_auc_score",),
)(_auc)
measure(
    "hivemall_auc",
    "aggregate",
    FAMILY,
    "auc in Hivemall's argument order: hivemall_auc(score, label), no sorting needed.",
    inputs=("score", "label"),
    params=(ZD,),
)(_auc)
measure(
    "average_precision_score",
    "aggregate",
    FAMILY,
    "Average precision of scores (score) for binary labels (actual): scikit-learn's step-wise AP,"
    " tied scores one step.",
    inputs=("actual", "score"),
    params=(ZD,),
)(_average_precision)
measure(
    "area_under_pr",
    "aggregate",
    FAMILY,
    "Area under the precision-recall curve of scores (score) for binary labels (actual) by the"
    " trapezoid rule, (0, first precision) put first: Spark MLlib's areaUnderPR.",
    inputs=("actual", "score"),
    params=(ZD,),
)(_average_precision)
measure(
    "binned_auc",
    "aggregate",
    FAMILY,
    "ROC AUC over a fixed grid of thresholds i / (thresholds - 1) (a row positive where its"
    " score >= the threshold): the trapezoid area of their points, torchmetrics' binary_auroc"
    "(thresholds=N).",
    inputs=("actual", "score"),
    params=(THRESHOLDS, ZD),
)(_binned_auc)
measure(
    "binned_average_precision_score",
    "aggregate",
    FAMILY,
    "Average precision over a fixed grid of thresholds i / (thresholds - 1): the step sum of"
    " their precision-recall points, torchmetrics' binary_average_precision(thresholds=N).",
    inputs=("actual", "score"),
    params=(THRESHOLDS, ZD),
)(_binned_average_precision)
measure(
    "brier_score_loss",
    "aggregate",
    FAMILY,
    "Mean squared difference between probabilities (prob, in [0, 1]) and binary labels (actual),"
    " doubled with scale_by_half=False.",
    inputs=("actual", "prob"),
    params=(P.SCALE_BY_HALF,),
)(_brier)
measure(
    "expected_calibration_error",
    "aggregate",
    FAMILY,
    "Expected calibration error: Σ over n_bins equal-width bins of n_b / n |mean prob - share"
    " of positives| (norm 'l1'), or the l2 or max norm of the bins' gaps.",
    inputs=("actual", "prob"),
    params=(N_BINS, P.CALIBRATION_NORM),
)(calibration_error)
