"""Precision-recall, ROC and DET curves as tables: one row per distinct threshold.

``precision_recall_curve(source, actual, score)``, ``roc_curve(source,
actual, score)`` and ``det_curve(source, actual, score)`` take a table (or
frame), the names of its label column and of its score column, and optional
``by`` grouping columns. A numeric score
column against a binary label (boolean or 0/1) gives one curve per group; a
score map (a map label -> score, or a list of {label, score} structs, as the
label-ranking measures read them) against a list of true labels gives one
curve per group and label, with a ``label`` column.

Notes
-----
- Each table has the ``by`` columns, then threshold and its two values, one
  row per distinct score t from the highest, predicting positive every row
  scored >= t: precision = tp / (tp + fp) and recall = tp / P, or fpr =
  fp / N and tpr = tp / P (P, N: the group's positive and negative rows),
  scikit-learn's points with ``drop_intermediate=False``.
- ``roc_curve(..., drop_intermediate := true)`` drops the thresholds where the
  second differences of fp and tp are both 0 (the step from the previous
  threshold equals the step to the next), keeping +inf, the first and the last
  threshold of each group and label: scikit-learn's ``drop_intermediate=True``
  points. mlsql's default is ``false`` (every point, as its tables have always
  been), where scikit-learn's is ``True``. The steps compared are those of the
  cumulative sums; with fractional weights the engines add them in their own
  order, so a point on the segment may differ in the last bit and stay where
  scikit-learn drops it (or the reverse); with whole weights they are exact.
- ``precision_recall_curve`` and ``det_curve`` take ``drop_intermediate``
  too (default ``false``, as scikit-learn's): of each run of thresholds with
  one tp (one recall, one fnr) only the first and the last stay, the rule of
  scikit-learn's two curves (:func:`dropped_point_kept`). DET's trimming to
  the thresholds from the last without a false positive applies after the
  drop, as in scikit-learn.
- ``det_curve`` (detection error tradeoff) has the ROC table's points with
  fpr = fp / N and fnr = (P - tp) / P, from the last threshold (+inf
  included) with no false positive to the first where every positive is
  found, as scikit-learn's ``det_curve`` trims them; scikit-learn returns
  them by increasing threshold, mlsql from the highest as its other curves.
  scikit-learn refuses data of one class; mlsql trims the same way and the
  undefined rate is ``zero_division``.
- ``confusion_matrix_at_thresholds`` gives the counts of each threshold: tn,
  fp, fn, tp (DOUBLE, sums of weights when weighted), by decreasing threshold
  as scikit-learn's, which returns them as five arrays; it has no +inf row and
  no ``zero_division`` (nothing is divided).
- Each group's first row has threshold +inf, a DOUBLE ``inf``, where nothing
  is predicted positive: scikit-learn's first ROC point (0, 0 at threshold
  inf) and its last precision-recall point (precision 1, recall 0), which
  scikit-learn returns without a threshold. The precision-recall table is
  scikit-learn's arrays reversed, that point first.
- Per label: the labels of a group are those true in some known row or
  scored in some known row (a NULL score is no score; in a list of structs a
  label's first entry counts), sorted. A row that does not score a label
  counts for it at score -inf, below every score (the rule of
  ``multilabel_average_precision``): its curve then ends with a row of
  threshold -inf where every row is predicted positive. scikit-learn's
  ``precision_recall_curve`` and ``roc_curve`` on the label's column of the
  indicator matrix, the unscored cells given any score below the others,
  give the same points.
- Rows where the label or the score is NULL are skipped; a group with no
  known row has no rows.
- Labels are boolean or 0/1 (another value is an error); scores must be finite (NaN and infinite values are errors, as in every
  score measure); ``-0.0`` and ``0.0`` are one threshold.
- With no positive rows recall (and tpr) is undefined, with no negative rows
  fpr is: their value is ``zero_division`` (default 0; 'diagnose': 1; NaN;
  'ignore': NULL). scikit-learn warns and returns recall 1 on every threshold
  (``zero_division=1`` gives its points) and NaN for fpr or tpr on every
  point (``zero_division=nan`` gives its points). The +inf row of the
  precision-recall curve is always (1, 0), as scikit-learn's end point.
- ``sample_weight`` (a weight column) makes every count a sum of weights: tp,
  fp, P and N are weighted, as scikit-learn's ``sample_weight``. A row
  weighing 0 is dropped before anything is counted, as scikit-learn drops it:
  a threshold whose rows all weigh 0 has no row, and a label only such rows
  hold or score has no curve. A NULL weight makes the row unknown (skipped);
  a negative, NaN or infinite weight is an error.
- Cost: one scan that counts rows and positives per (group, label, distinct
  score) in a hash aggregate (per label: the score maps unnested), then cumulative sums over those counts sorted by score
  (window functions in DuckDB and Spark, ``cum_sum`` in Polars): memory of
  the order of the distinct scores, not of the rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mlsql import _formulas as F
from mlsql import _params as P
from mlsql._formulas import formula
from mlsql._registry import Param, measure

E = Any  # an engine expression
FAMILY = "curves"
ZD = P.ZERO_DIVISION
BY = Param("by", None)
DI = P.DROP_INTERMEDIATE
#: the curves that take ``drop_intermediate``
DROPS = ("precision_recall_curve", "roc_curve", "det_curve")


def curve_params(params: Mapping[str, Any]) -> tuple[P.ZeroDivision, bool]:
    """A curve table's checked parameters as its plan reads them: ``zero_division`` (0 for
    ``confusion_matrix_at_thresholds``, which has none) and ``drop_intermediate`` (False
    where the curve takes none).

    Examples
    --------
    >>> curve_params({"zero_division": P.check(ZD, 1, "roc_curve"), "drop_intermediate": True})
    (ZeroDivision(kind='value', value=1.0), True)
    >>> curve_params({})
    (ZeroDivision(kind='value', value=0.0), False)
    """
    zd = params["zero_division"] if "zero_division" in params else P.check(ZD, 0, "curve")
    return zd, bool(params.get("drop_intermediate", False))


INPUTS = ("source", "actual", "score")
#: each table's columns after the group columns
COLUMNS = {
    "precision_recall_curve": ("threshold", "precision", "recall"),
    "roc_curve": ("threshold", "fpr", "tpr"),
    "det_curve": ("threshold", "fpr", "fnr"),
    "confusion_matrix_at_thresholds": ("threshold", "tn", "fp", "fn", "tp"),
}
#: the tables of counts, without a ratio (no ``zero_division``) nor the +inf point
COUNTS = ("confusion_matrix_at_thresholds",)
#: the curves whose table leaves out some points (the engines give each point its neighbours)
FILTERED = ("precision_recall_curve", "roc_curve", "det_curve")


def output_columns(name: str) -> tuple[str, ...]:
    """The names a ``by`` column may not have: ``label`` and curve ``name``'s columns."""
    return ("label", *COLUMNS[name])


@dataclass(frozen=True)
class CurveStats:
    """At one threshold: cumulative ``tp`` and ``fp``; the group's positives and negatives."""

    tp: E
    fp: E
    n_positive: E
    n_negative: E


@formula
def curve_precision(ops: Any, true_pos: E, false_pos: E) -> E:
    """tp / (tp + fp) at a threshold; 1 at +inf, where nothing is predicted (scikit-learn)."""
    predicted = true_pos + false_pos
    return ops.when(predicted == 0, 1.0, true_pos / predicted)


@formula
def curve_recall(ops: Any, true_pos: E, false_pos: E, n_positive: E, zero_division: Any) -> E:
    """tp / P at a threshold; 0 at +inf (scikit-learn's end point), undefined without positives."""
    recall = F.ratio(ops, true_pos, n_positive, zero_division, True)
    return ops.when(true_pos + false_pos == 0, 0.0, recall)


@formula
def curve_rate(ops: Any, count: E, total: E, zero_division: Any) -> E:
    """count / total: the true positive rate (tp / P) or false positive rate (fp / N)."""
    return F.ratio(ops, count, total, zero_division, True)


@dataclass(frozen=True)
class CurvePoint:
    """A point of a curve's table: its threshold and cumulative fp and tp."""

    threshold: E
    fp: E
    tp: E


def roc_point_kept(previous: CurvePoint, point: CurvePoint, following: CurvePoint) -> E:
    """Whether a ROC point stays under ``drop_intermediate=True`` (scikit-learn's rule).

    A point is dropped when the second differences of fp and tp there are both 0: the
    step from the previous point equals the step to the following one. The +inf point and
    the first point after it always stay (``previous.threshold`` is +inf there: the engines
    give the +inf row a previous point (+inf, -1, -1)), and so does the last point: the
    engines give it a following point (-inf, -1, -1), which no cumulative count equals a
    step to. scikit-learn compares the points of the distinct scores alone and then adds
    +inf, which this rule gives on the table that has it.

    Examples
    --------
    >>> p = lambda t, fp, tp: CurvePoint(t, fp, tp)
    >>> bool(roc_point_kept(p(0.7, 1, 1), p(0.5, 2, 2), p(0.3, 3, 3)))
    False
    >>> bool(roc_point_kept(p(0.7, 1, 1), p(0.5, 2, 2), p(0.3, 3, 4)))
    True
    """
    return (
        (previous.threshold == float("inf"))
        | (following.fp - point.fp != point.fp - previous.fp)
        | (following.tp - point.tp != point.tp - previous.tp)
    )


def tp_step_kept(previous: CurvePoint, point: CurvePoint, following: CurvePoint) -> E:
    """Whether a point stays in a DET curve under ``drop_intermediate=True`` (scikit-learn's
    rule): tp changes from the previous point or to the following one, so of a run of
    points with one tp (one fnr: a horizontal segment) only the first and last stay. The
    +inf point and the last point always stay (the engines' neighbours of
    :func:`roc_point_kept`: a tp of -1 before the first and after the last).

    Examples
    --------
    >>> p = lambda t, fp, tp: CurvePoint(t, fp, tp)
    >>> bool(tp_step_kept(p(0.7, 1, 2), p(0.5, 2, 2), p(0.3, 3, 2)))
    False
    >>> bool(tp_step_kept(p(0.7, 1, 2), p(0.5, 2, 2), p(0.3, 3, 3)))
    True
    """
    return (point.tp != previous.tp) | (following.tp != point.tp)


def dropped_point_kept(
    name: str, previous: CurvePoint, point: CurvePoint, following: CurvePoint
) -> E:
    """Whether a point of curve ``name`` stays under ``drop_intermediate=True``, as
    scikit-learn's curve of that name drops them: :func:`roc_point_kept` for ROC;
    :func:`tp_step_kept` for DET, whose points scikit-learn compares with +inf's among
    them; and for precision-recall :func:`tp_step_kept` over the distinct scores alone,
    the first of which always stays (scikit-learn adds the +inf point, (1, 0), after).

    Examples
    --------
    >>> p = lambda t, fp, tp: CurvePoint(t, fp, tp)
    >>> first = (p(float("inf"), 0, 0), p(0.9, 1, 0), p(0.8, 2, 0))
    >>> bool(dropped_point_kept("precision_recall_curve", *first))
    True
    >>> bool(dropped_point_kept("det_curve", *first))
    False
    """
    if name == "roc_curve":
        return roc_point_kept(previous, point, following)
    kept = tp_step_kept(previous, point, following)
    if name == "precision_recall_curve":
        return (previous.threshold == float("inf")) | kept
    return kept


def det_point_kept(
    previous: CurvePoint, point: CurvePoint, following: CurvePoint, final_tp: E
) -> E:
    """Whether a point is on scikit-learn's DET curve, which starts at the last point with
    no false positive and stops at the first where every positive is found (``final_tp``:
    the last cumulative tp, the positives' weight).

    The engines' neighbours are those of :func:`roc_point_kept`: the +inf row's previous
    tp is -1, the last row's following fp -1 (not 0: the last row stays when it is the
    only one without false positives).

    Examples
    --------
    >>> p = lambda t, fp, tp: CurvePoint(t, fp, tp)
    >>> bool(det_point_kept(p(0.9, 0, 1), p(0.7, 0, 2), p(0.5, 1, 2), 2))  # last fp = 0
    True
    >>> bool(det_point_kept(p(0.7, 0, 2), p(0.5, 1, 2), p(0.3, 2, 2), 2))  # past tp = P
    False
    """
    return ((point.fp > 0) | (following.fp != 0)) & (previous.tp < final_tp)


def counts_point_kept(point: CurvePoint) -> E:
    """Whether a point is in a table of :data:`COUNTS`: a threshold of a score (scikit-learn's
    ``confusion_matrix_at_thresholds`` has no +inf)."""
    return point.threshold != float("inf")


def values(ops: Any, name: str, s: CurveStats, zero_division: Any) -> dict[str, E]:
    """The value columns of curve ``name`` after its threshold, in output order."""
    if name in COUNTS:
        return {
            "tn": s.n_negative - s.fp,
            "fp": s.fp,
            "fn": s.n_positive - s.tp,
            "tp": s.tp,
        }
    if name == "precision_recall_curve":
        return {
            "precision": curve_precision(ops, s.tp, s.fp),
            "recall": curve_recall(ops, s.tp, s.fp, s.n_positive, zero_division),
        }
    if name == "det_curve":
        return {
            "fpr": curve_rate(ops, s.fp, s.n_negative, zero_division),
            "fnr": curve_rate(ops, s.n_positive - s.tp, s.n_positive, zero_division),
        }
    return {
        "fpr": curve_rate(ops, s.fp, s.n_negative, zero_division),
        "tpr": curve_rate(ops, s.tp, s.n_positive, zero_division),
    }


def _points(name: str) -> Any:
    def build(ops: Any, s: CurveStats, zero_division: Any = None, **table: Any) -> dict[str, E]:
        """A point's values from its threshold's cumulative counts (``drop_intermediate`` and
        ``by`` are the table's: they choose the points)."""
        return values(ops, name, s, zero_division)

    return build


#: each curve table: its summary and parameters
_CURVES = {
    "precision_recall_curve": (
        "One row per (group, label of a score map, distinct score) from the highest, +inf "
        "first: threshold, precision, recall (scikit-learn's points).",
        (ZD, DI, BY),
    ),
    "roc_curve": (
        "One row per (group, label of a score map, distinct score) from the highest, +inf "
        "first: threshold, fpr, tpr (scikit-learn's points); drop_intermediate drops its "
        "collinear ones.",
        (ZD, DI, BY),
    ),
    "det_curve": (
        "Detection error tradeoff: one row per (group, label of a score map, distinct score) "
        "from the highest, from the last with no false positive to the first with every "
        "positive found: threshold, fpr, fnr (scikit-learn's points, reversed).",
        (ZD, DI, BY),
    ),
    "confusion_matrix_at_thresholds": (
        "One row per (group, label of a score map, distinct score) from the highest: "
        "threshold, tn, fp, fn, tp predicting positive every row scored >= threshold "
        "(scikit-learn's counts).",
        (BY,),
    ),
}
for _name, (_summary, _params) in _CURVES.items():
    measure(_name, "table", FAMILY, _summary, inputs=INPUTS, params=_params)(_points(_name))
