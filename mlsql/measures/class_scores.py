"""Class probabilities: scikit-learn's multiclass ``brier_score_loss`` and torchmetrics'
top-label ``MulticlassCalibrationError``.

``multiclass_brier_score(actual, scores, scale_by_half := 'auto')``: ``actual`` is
one label per row, ``scores`` the row's probability per class (a label -> probability
map, or a list of {label, score} structs, as the label-score measures take them). Per
row, the sum over the classes of (p_c - [c = actual])²; over the group, the mean of the
rows' sums (weighted by ``sample_weight``), times 1/2 when halved.

``multiclass_calibration_error(actual, scores, n_bins := 15, norm := 'l1')``:
torchmetrics' ``MulticlassCalibrationError(num_classes, n_bins=15, norm='l1')``, the
top-label calibration error. Per row, the confidence is its highest probability, the
prediction the class scored it, and the row is correct when that class is ``actual``; then
``expected_calibration_error`` of (confidence, correct) with its bins and norms
(:func:`mlsql.measures.scores.calibration_bin`, l1 / l2 / max), ``n_bins`` defaulting to
torchmetrics' 15.

Notes
-----
- A class a row does not score (or scores NULL) has probability 0 there: it adds
  nothing unless it is the row's true class, which adds (0 - 1)² = 1. This is
  scikit-learn's matrix with that class's column 0 in the row; scikit-learn's
  ``labels=`` names the columns (and must cover y_true), mlsql's classes are those
  the rows score or hold as truth, and a class that no row mentions adds nothing
  either way.
- ``scale_by_half``: True halves, False does not; 'auto' is scikit-learn's rule,
  halved for fewer than 3 classes (binary, range [0, 1]) and not halved from 3 on
  (range [0, 2]). mlsql counts the classes of a group as the most that one known
  row mentions (its scored labels and its true label): scikit-learn's number of
  columns when every row scores every class, as its matrix does, and a running
  maximum, so the aggregate keeps a sum, a count and a maximum per group.
- Probabilities must be finite numbers in [0, 1] (as scikit-learn's check); their
  sum per row is not checked (scikit-learn warns when it is not 1).
- Both inputs hold the same kind of label (both text, both integers).
- Top label: among classes tied at a row's highest probability the prediction is the
  smallest label (text by its bytes, integers by value), as torch's ``max(dim=1)`` takes
  the first index and torchmetrics numbers the classes in that order. An unscored class
  has probability 0 but is never the prediction: the top label is taken among the classes
  the row scores, and a row that scores none has confidence 0 and is not correct.
- Probabilities are checked as for ``multiclass_brier_score`` (torchmetrics instead takes
  values outside [0, 1] as logits and applies softmax).
- Bin edges: mlsql's bin of a confidence p is min(floor(p · n_bins), n_bins - 1) in double
  precision (``expected_calibration_error``'s); torchmetrics' ``_binning_bucketize`` is
  ``bucketize(p, linspace(0, 1, n_bins + 1), right=True) - 1`` clamped to [0, n_bins - 1]:
  [k/n, (k+1)/n) bins with the last closed, the same rule in exact arithmetic. They can
  differ for a p within rounding of an edge k / n_bins: torchmetrics rounds the
  confidences to float32 (``.float()``) and compares them with float32 edges, mlsql rounds
  p · n_bins as a double. Where n_bins is a power of 2 the edges are exact and agree.
- ``sample_weight`` counts as repeated rows (torchmetrics takes no weights): n and each
  bin's size and gap are sums of weights.
- Cost: the bins are ``expected_calibration_error``'s in each engine (DuckDB and Spark
  hold the group's (bin, gap) pairs, so memory grows with the group's rows; Polars sums per
  bin with a window, which its streaming engine runs in memory), after one pass over each
  row's scored classes. The bounded form is ``calibration_table`` over each row's
  (correct, confidence): a count, a sum of confidences and a sum of correct rows per
  (group, bin), from which the error is Σ_b |Σ_b confidence - Σ_b correct| / n (l1);
  Spark's ``ms.evaluate`` sums per (group, bin) so, for every norm.
- A row whose label or scores are NULL is skipped; over none the result is NULL.
  A label repeated in a {label, score} list keeps its first entry; a NULL label
  is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from mlsql import _formulas as F
from mlsql import _params as P
from mlsql._formulas import formula
from mlsql._registry import measure
from mlsql.measures import scores as SC

E = Any  # an engine expression
FAMILY = "class_scores"
#: the truth first, as scikit-learn's ``(y_true, y_proba)``
INPUTS = ("actual", "scores")


@dataclass(frozen=True)
class ClassBrierStats:
    """Known rows ``n`` (with weights: their weight), Σ over them of the row's squared
    errors over its classes, and the most classes one known row mentions."""

    n: E
    total_loss: E
    n_classes: E


@formula
def class_squared_error(ops: Any, p: E, is_true: E) -> E:
    """(p - [class is true])² of one scored class of a row."""
    y = ops.when(is_true, 1.0, 0.0)
    return (p - y) * (p - y)


@formula
def multiclass_brier_scale(ops: Any, scale_by_half: Any, n_classes: E) -> E:
    """1/2 when halved: True, or 'auto' with fewer than 3 classes (scikit-learn's rule)."""
    auto = ops.when(n_classes < 3, 0.5, 1.0)
    return F.choose(
        ops, scale_by_half, {"false": lambda: 1.0, "true": lambda: 0.5, "auto": lambda: auto}
    )


def _multiclass_brier(ops: Any, s: ClassBrierStats, scale_by_half: Any) -> E:
    return F.share(ops, s.total_loss, s.n) * multiclass_brier_scale(ops, scale_by_half, s.n_classes)


measure(
    "multiclass_brier_score",
    "aggregate",
    FAMILY,
    "scikit-learn's multiclass brier_score_loss: the mean over rows of Σ over the classes of "
    "(p - [class is actual])², from per-row class probabilities (scores); unscored classes 0.",
    inputs=INPUTS,
    params=(P.SCALE_BY_HALF,),
)(_multiclass_brier)


#: torchmetrics' ``MulticlassCalibrationError`` default: 15 bins (``expected_calibration_error``
#: keeps 10); the constraint, and so every engine's message, is the same
TOP_LABEL_BINS = replace(SC.N_BINS, default=15)

measure(
    "multiclass_calibration_error",
    "aggregate",
    FAMILY,
    "torchmetrics' MulticlassCalibrationError: expected_calibration_error of each row's top"
    " probability against whether its class (ties: the smallest label) is actual; 15 bins.",
    inputs=INPUTS,
    params=(TOP_LABEL_BINS, P.CALIBRATION_NORM),
)(SC.calibration_error)
