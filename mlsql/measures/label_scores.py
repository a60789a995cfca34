"""Averaged precision, ROC AUC and Brier score over label scores: scikit-learn's multi-label forms.

``multilabel_average_precision(actual, scores, average := 'macro', zero_division := 0)``
and ``multilabel_roc_auc(actual, scores, average := 'macro', zero_division := 0)``
are scikit-learn's ``average_precision_score`` and ``roc_auc_score`` on the
group's indicator matrix: one row per known row, one column per label, each
cell (true?, score).

``multilabel_brier_score(actual, scores, average := 'macro')`` is scikit-learn's
binary ``brier_score_loss`` (the mean of (p - y)²) of each label's column of that
matrix, averaged over the labels (macro), which is the mean over every cell (micro)
and the mean over rows of each row's mean (samples): one number, since every column
holds the group's known rows and every row the group's labels. scikit-learn documents
no multi-label Brier score (``brier_score_loss`` takes one label per row; given a label
indicator matrix, 1.9 runs its multiclass form instead: per row the sum over the labels,
warning that the probabilities do not sum to 1, so L times this measure from 3 labels on,
and this measure at 2 labels, where 'auto' halves it), torchmetrics none: the peer is
``brier_score_loss`` per label column, averaged. A label a row does not score (or
scores NULL) has probability 0 there (it adds 1 where the label is true, else
nothing), as ``multiclass_brier_score`` reads an unscored class; the labels are
those of the notes below. Scores must be finite numbers in [0, 1] (the Brier
score's check). Over no label (known rows with no true or scored label) the mean
is over no cell: NULL. It never halves (a label's column is one binary problem,
in [0, 1]).

Notes
-----
- The label universe of a group is every label true in some row or scored
  (score not NULL) in some row. Rows where either input is NULL are skipped;
  over none the result is NULL.
- A label missing from a row's scores (or scored NULL) has the lowest score
  there: below every score, tied with the other unscored cells (one run at
  -infinity). So a true label without a score ranks last, and a label a row
  does not mention is a negative scored lowest.
- A NaN score ranks above every other score, +infinity included, and all NaNs
  tie: the order of doubles in DuckDB and Spark, and in Polars on both paths.
- Ties as scikit-learn: average precision takes one step per distinct score
  (the precision at a tied positive is that of the whole tie); ROC AUC counts
  a tied (positive, negative) pair one half.
- Averages (DESIGN section 1.5): micro pools every (row, label) cell into one
  binary problem; macro is the mean over labels; weighted weighs each label
  by its positives; samples is the mean over rows (each row against the whole
  universe).
- Undefined values: average precision of a label (row, pool) without
  positives; ROC AUC of one with a single class. They take ``zero_division``:
  0 (default; scikit-learn's average precision gives 0 too) or 1, 'diagnose'
  (1), NaN or 'ignore' (left out of the average; if everything is left out
  the result is NaN under NaN, NULL under 'ignore'). scikit-learn returns NaN
  for a one-class label's ROC AUC (it warns), which ``zero_division=nan``
  reproduces for micro and leaves out of the other averages. Under weighted,
  when no kept label has a positive, the result is the ``zero_division`` value.
- Sample weights (scikit-learn's ``sample_weight`` on the indicator matrix): a
  row's weight multiplies each of its cells in every count (cells, positives,
  the runs' P(>= s) and N(>= s), U's pairs); micro pools the weighted cells,
  macro and weighted read each label's weighted counts (weighted: a label
  weighs its positives' weight), samples is the mean of the rows' values
  weighted by the rows' weights. A row weighing 0 drops out before anything is
  counted (its labels too, as from the rows repeated 0 times); known rows that
  all weigh 0 give the ``zero_division`` value.
- Brier cost: per group a sum and a count (of the known rows' squared errors, over
  their scored and true labels) and the label universe: DuckDB and Spark keep the
  group's distinct label sets (a ``histogram`` / ``collect_set`` of each known
  row's sorted labels: memory grows with the distinct sets, at most the rows),
  Polars the group's distinct labels. Spark's ``ms.evaluate`` counts the labels
  per group first (the rows' labels exploded, distinct, counted, joined back):
  memory grows with groups x labels, never with rows.
- Cost (average precision, ROC AUC): every engine holds the group's (row, label) cells that are scored or
  true, sorts them (DuckDB twice) and walks the sorted runs once; cells of
  unscored negatives are counted, never built. DuckDB with mlsql's native
  extension (``mlsql.connect()``) and Polars with mlsql's native plugin (used
  by default for text and integer labels; see ``mlsql.native_status()``)
  instead keep per group one weight per distinct (label, score) (micro: per
  score), and under samples a few sums per kind of row: memory grows with the
  distinct scores, not with the rows (the same numbers). Polars still hands
  the plugin each group's input columns at once: on the streaming engine the
  aggregate gathers its two input columns in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mlsql import _params as P
from mlsql._formulas import formula
from mlsql._registry import measure

E = Any  # an engine expression
FAMILY = "label_scores"
ZD = P.ZERO_DIVISION
AVERAGE = P.SCORE_AVERAGE
#: the averages, in the order the engines build them
AVERAGES = ("micro", "macro", "weighted", "samples")


@dataclass(frozen=True)
class Segment:
    """One binary problem of the indicator matrix: a label's column, a row's line, or all cells.

    ``n_cells`` counts every cell (the unscored negatives too), ``n_explicit``
    the cells that are scored or true, ``n_positive`` the true ones and
    ``n_positive_unscored`` the true cells without a score (at -infinity).
    Over the explicit cells, sorted by score: ``precision_sum`` is Σ over the
    scored positives of P(>= s) / N(>= s), and ``u`` is Σ over the positives
    of (negatives scored lower + tied negatives / 2).
    """

    n_cells: E
    n_explicit: E
    n_positive: E
    n_positive_unscored: E
    precision_sum: E
    u: E
    #: what the segment weighs in a macro or samples mean (a row's weight under samples)
    weight: E = 1


#: what the average sums over the segments, from each segment's value, undefined? and weight
SUMS = ("n_undefined", "undefined_weight", "n_defined", "defined_weight", "total")


@dataclass(frozen=True)
class LabelScoreStats:
    """A group's known rows ``n`` and its segments for one average.

    ``over_segments(per_segment, sums, finish)`` computes ``per_segment(Segment)``
    (a dict of named values) once per segment that holds an explicit cell,
    sums each ``sums[name](values)`` (``values`` has the per-segment values as
    attributes) over those segments and returns ``finish(totals)``, totals
    by name. ``n_empty`` counts the segments without an explicit cell (a row
    with no true and no scored label under samples; the pool when nothing is
    true or scored under micro), each undefined with no positives. ``skips``
    is whether ``zero_division`` leaves undefined values out (a bool, or an
    engine expression when only the query knows). Weighted: ``empty_weight``
    is what the empty segments weigh in a mean (default: 1 each), and
    ``zero_weight`` whether the known rows all weigh 0 (the result is then the
    ``zero_division`` value).
    """

    n: E
    over_segments: Callable[..., E]
    n_empty: E
    skips: Any
    empty_weight: E | None = None
    zero_weight: Any = False


@formula
def segment_average_precision(
    ops: Any,
    precision_sum: E,
    n_positive: E,
    n_positive_unscored: E,
    n_cells: E,
) -> E:
    """(Σ scored positives' P(>= s) / N(>= s) + unscored positives x positives / cells) / positives.

    An unscored positive sits in the last tie, where every positive and every
    cell is at or above it.
    """
    return (precision_sum + n_positive_unscored * n_positive / n_cells) / n_positive


@formula
def segment_roc_auc(
    ops: Any,
    u: E,
    n_positive: E,
    n_positive_unscored: E,
    n_explicit: E,
    n_cells: E,
) -> E:
    """U / (positives x negatives), U counting the unscored negatives at -infinity.

    Each of the n_cells - n_explicit unscored negatives is below every scored
    positive and tied with every unscored one.
    """
    unscored = n_cells - n_explicit
    full_u = u + unscored * (n_positive - n_positive_unscored / 2)
    return full_u / (n_positive * (n_cells - n_positive))


def _when(ops: Any, condition: Any, then: E, otherwise: E) -> E:
    """``ops.when``, or the branch itself when ``condition`` is known in Python."""
    if isinstance(condition, bool):
        return then if condition else otherwise
    return ops.when(condition, then, otherwise)


def averaged(
    ops: Any,
    s: LabelScoreStats,
    value: Callable[[Segment], tuple[E, E]],
    average: str,
    zero_division: Any,
) -> E:
    """The ``average`` of ``value`` (a segment's (value, undefined?)) over ``s``'s segments.

    Defined values weigh 1 (a label's positives under weighted); undefined
    ones count as ``zero_division``, or are left out where it says so.
    """
    fill = ops.undefined(zero_division, True)
    weighted = average == "weighted"

    def per_segment(g: Segment) -> dict[str, E]:
        v, undefined = value(g)
        return {
            "value": v,
            "undefined": undefined,
            "weight": g.n_positive if weighted else g.weight,
        }

    sums = {
        "n_undefined": lambda x: ops.when(x.undefined, 1, 0),
        "undefined_weight": lambda x: ops.when(x.undefined, x.weight, 0),
        "n_defined": lambda x: ops.when(x.undefined, 0, 1),
        "defined_weight": lambda x: ops.when(x.undefined, 0, x.weight),
        "total": lambda x: ops.when(x.undefined, 0, x.weight * x.value),
    }

    def finish(t: dict[str, E]) -> E:
        n_undefined = t["n_undefined"] + s.n_empty
        # an empty segment has no positive: weight 0 under weighted, else 1 (or its row's)
        empty_weight = s.n_empty if s.empty_weight is None else s.empty_weight
        undefined_weight = t["undefined_weight"] + (0 if weighted else empty_weight)
        kept_weight = t["defined_weight"] + _when(ops, s.skips, 0, undefined_weight)
        kept = t["n_defined"] + _when(ops, s.skips, 0, n_undefined)
        total = t["total"] + _when(ops, s.skips, 0, fill * undefined_weight)
        result = ops.when(
            kept == 0,
            ops.when(n_undefined > 0, fill, None),
            ops.when(kept_weight == 0, fill, total / kept_weight),
        )
        return ops.when(s.n == 0, None, _when(ops, s.zero_weight, fill, result))

    return s.over_segments(per_segment, sums, finish)


def _ap_value(ops: Any) -> Callable[[Segment], tuple[E, E]]:
    def value(g: Segment) -> tuple[E, E]:
        undefined = g.n_positive == 0
        ap = segment_average_precision(
            ops, g.precision_sum, g.n_positive, g.n_positive_unscored, g.n_cells
        )
        return ap, undefined

    return value


def _auc_value(ops: Any) -> Callable[[Segment], tuple[E, E]]:
    def value(g: Segment) -> tuple[E, E]:
        undefined = (g.n_positive == 0) | (g.n_positive == g.n_cells)
        auc = segment_roc_auc(
            ops, g.u, g.n_positive, g.n_positive_unscored, g.n_explicit, g.n_cells
        )
        return auc, undefined

    return value


def _multilabel_average_precision(
    ops: Any, s: LabelScoreStats, average: str, zero_division: Any
) -> E:
    return averaged(ops, s, _ap_value(ops), average, zero_division)


def _multilabel_roc_auc(ops: Any, s: LabelScoreStats, average: str, zero_division: Any) -> E:
    return averaged(ops, s, _auc_value(ops), average, zero_division)


#: the truth first, as scikit-learn's ``(y_true, y_score)``
INPUTS = ("actual", "scores")

measure(
    "multilabel_average_precision",
    "aggregate",
    FAMILY,
    "scikit-learn's average_precision_score over label scores (the indicator matrix of the "
    "group's labels), averaged micro, macro, weighted or over samples.",
    inputs=INPUTS,
    params=(AVERAGE, ZD),
)(_multilabel_average_precision)
measure(
    "multilabel_roc_auc",
    "aggregate",
    FAMILY,
    "scikit-learn's roc_auc_score over label scores (the indicator matrix of the group's "
    "labels), ties one half, averaged micro, macro, weighted or over samples.",
    inputs=INPUTS,
    params=(AVERAGE, ZD),
)(_multilabel_roc_auc)


@dataclass(frozen=True)
class LabelBrierStats:
    """Known rows ``n`` (with weights: their weight), Σ over them of each row's squared
    errors over its scored and true labels (weighted by the row's weight), and the number of
    labels true or scored in some known row."""

    n: E
    total_loss: E
    n_labels: E


@formula
def multilabel_brier(ops: Any, total_loss: E, n: E, n_labels: E) -> E:
    """Σ (p - y)² over the cells / (rows x labels); NULL over no row or no label.

    Divided by rows, then by labels, in floating point, as ``hamming_loss``.
    """
    return ops.when(n == 0, None, ops.when(n_labels == 0, None, total_loss / n / n_labels))


def _multilabel_brier_score(ops: Any, s: LabelBrierStats, average: Any) -> E:
    # micro, macro and samples are one number (see the module's notes)
    value = multilabel_brier(ops, s.total_loss, s.n, s.n_labels)
    if isinstance(average, str):
        return value
    # an engine's expression of the checked average (never NULL): read, so that its check
    # runs, without writing the value once per option
    return ops.when(average == average, value, None)


#: the measures built over :class:`Segment` (the Brier score is a sum and a count)
SEGMENT_MEASURES = ("multilabel_average_precision", "multilabel_roc_auc")
BRIER = "multilabel_brier_score"

measure(
    BRIER,
    "aggregate",
    FAMILY,
    "scikit-learn's brier_score_loss of each label's column of the indicator matrix of the "
    "group's labels (an unscored label has probability 0), averaged: the mean over the cells.",
    inputs=INPUTS,
    params=(P.BRIER_AVERAGE,),
)(_multilabel_brier_score)
