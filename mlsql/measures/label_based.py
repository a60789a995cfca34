"""Label-based multi-label measures: per-label counts, macro and weighted averages, reports.

The per-label statistics of a group are tp, fp, fn and the number of known
rows (tn = rows - tp - fp - fn, support = tp + fn). Every engine computes them
in one pass that spreads each row over its labels, then hands them to the
builders here, which are written once with the formulas of
:mod:`mlsql._formulas` and the ones below:

* :func:`label_values`: the columns of ``label_metrics`` (one row per label);
* :func:`label_aggregates`: macro and weighted averages, Hamming loss,
  label accuracies and the label-problem rates, over the label rows of a group;
* :func:`row_values` and :func:`row_aggregates`: pooled counts, samples
  averages and subset accuracy over a histogram of row statistics (each
  distinct row's tp, |A| and |P| with the number of rows that have them);
* :func:`group_columns`: micro averages and the F of macro means per group.

Notes
-----
The label universe of a group is the ``labels`` the caller gives, else every
label seen in the group's actual or predicted lists. Given ``labels``, each
row's sets are first intersected with it, so labels outside the universe are
ignored by every column (as scikit-learn's ``labels=`` selects columns of the
indicator matrix); a label of the universe that never occurs has
tp = fp = fn = 0 and tn = rows.

Per label, undefined ratios follow ``zero_division`` as everywhere: 0 or 1;
NaN, left out of macro and weighted averages; 'diagnose', 1 where the label
has tp + fp + fn = 0, else 0; 'ignore', left out of the averages (NULL).
The weighted average weighs each label by its support; when the labels it
keeps have no support at all it is undefined and follows ``zero_division``
(scikit-learn special-cases that corner by measure). In a group without known
rows every ratio is NULL.

The macro and weighted measures (and the label accuracies, CLP, MLP and
WLP) are table functions over a table, with ``by`` for groups, in every
engine. In
DuckDB SQL each name is also an aggregate (``SELECT model,
macro_f1(actual, predicted) FROM preds GROUP BY model``; DuckDB keeps table
and scalar macros apart): on ``mlsql.connect()`` its per-label counts come
from the native per-label aggregate (memory grows with the group's labels);
on the portable macros from a histogram of the group's distinct (actual,
predicted) pairs (memory grows with them, at most the rows; the table macro
is the bounded form).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, partial
from typing import Any

from mlsql import _formulas as F
from mlsql import _params as P
from mlsql._formulas import formula
from mlsql._registry import Param, declare, measure

FAMILY = "label_based"
E = Any


# ------------------------------------------------------------------ row codes
#: A row's statistics packed in one integer: |A| + tp * CODE_BASE + |P| * CODE_BASE²
#: (each count below 2**20 labels per row). Engines that spread rows over labels
#: carry it on one marker element per row, so one GROUP BY yields both the
#: per-label counts and a histogram of row statistics.
CODE_BASE = 1 << 20
#: flag of an element: first occurrence in A, not in P (a false negative)
FLAG_ACTUAL = 1
#: flag of an element: first occurrence in A, also in P (a true positive)
FLAG_BOTH = 1 + CODE_BASE
#: flag of an element: first occurrence in P (tp or fp, decided by FLAG_BOTH)
FLAG_PREDICTED = CODE_BASE * CODE_BASE


def decode_row(code: E) -> F.RowStats:
    """tp, |A| and |P| of a row code (``code`` = sum of the row's flags).

    Examples
    --------
    >>> s = decode_row(2 * FLAG_PREDICTED + FLAG_BOTH + FLAG_ACTUAL)
    >>> (s.tp, s.n_actual, s.n_predicted)
    (1, 2, 2)
    """
    n_predicted = code // FLAG_PREDICTED
    rest = code - n_predicted * FLAG_PREDICTED
    tp = rest // CODE_BASE
    return F.RowStats(tp=tp, n_actual=rest - tp * CODE_BASE, n_predicted=n_predicted)


# ------------------------------------------------------------------ formulas
@formula
def true_negatives(ops: F.Ops, c: F.Counts, n_rows: E) -> E:
    """rows - tp - fp - fn: rows where the label is neither true nor predicted."""
    return n_rows - c.tp - c.fp - c.fn


@formula
def label_accuracy(ops: F.Ops, c: F.Counts, n_rows: E) -> E:
    """(tp + tn) / rows: share of rows where the label is decided right."""
    return F.share(ops, c.tp + true_negatives(ops, c, n_rows), n_rows)


@formula
def weighted_average(
    ops: F.Ops, value: E, weights: E, zero_division: Any, nothing_to_score: E
) -> E:
    """Sum of weight x value over the sum of weights, leaving undefined values out.

    Under NaN and 'ignore' undefined values (NaN, NULL) are left out with
    their weights; if values exist but all are undefined the result is NaN
    (NaN) or NULL ('ignore'); with no values it is NULL; when the kept
    weights sum to 0 it follows ``zero_division``. With weights of 1 it is
    :func:`~mlsql._formulas.average`.
    """
    kept = ops.when(ops.is_nan(value), None, value)
    kept_weights = kept * 0 + weights  # NULL where the value is left out
    all_undefined = (ops.count(value) > 0) & (ops.count(kept) == 0)
    mean = F.ratio(
        ops, ops.sum(kept * weights), ops.sum(kept_weights), zero_division, nothing_to_score
    )
    return ops.when(all_undefined, ops.nan(), mean)


@formula
def fbeta_of_means(ops: F.Ops, p: E, r: E, beta: Any) -> E:
    """(1 + b²) P R / (b² P + R) of two averages (the R walkthrough's macro F1); 0 when both are 0.

    Weighted as :func:`mlsql._formulas.fbeta_weights`, so a huge or tiny beta does not overflow.
    """
    w, u, v = F.fbeta_weights(ops, beta)
    den = u * p + v * r
    return ops.when(den == 0, 0.0, w * p * r / den)


@formula
def share_of_labels(ops: F.Ops, condition: E) -> E:
    """Share of label rows where ``condition`` holds (CLP, MLP, WLP)."""
    return ops.mean(ops.when(condition, 1.0, 0.0))


@formula
def label_accuracy_micro(ops: F.Ops, fp: E, fn: E, n_rows: E, n_labels: E) -> E:
    """1 - Hamming loss: share of the rows x labels decisions that are right."""
    return 1 - F.hamming_loss(ops, fp, fn, n_rows, n_labels)


# ------------------------------------------------------------------ statistics
@dataclass(frozen=True)
class LabelCounts:
    """One label of one group: its tp, fp, fn and the group's known rows."""

    tp: E
    fp: E
    fn: E
    n_rows: E

    @property
    def counts(self) -> F.Counts:
        """tp, fp, fn as :class:`~mlsql._formulas.Counts`."""
        return F.Counts(self.tp, self.fp, self.fn)


def _known(ops: Any, n_rows: E, value: E) -> E:
    """``value``, or NULL where the group has no known rows (aggregates over nothing)."""
    return ops.when(n_rows == 0, None, value)


#: the ratios computed per label and per row, each averaged in the report
RATIOS = ("precision", "recall", "f1", "fbeta", "jaccard")


def _ratio(ops: Any, c: F.Counts, name: str, beta: Any, zero_division: Any) -> E:
    """The ratio ``name`` (one of :data:`RATIOS`) of counts ``c``."""
    if name == "precision":
        return F.precision(ops, c, zero_division)
    if name == "recall":
        return F.recall(ops, c, zero_division)
    if name == "jaccard":
        return F.jaccard(ops, c, zero_division)
    return F.fbeta(ops, c, 1 if name == "f1" else beta, zero_division)


def _ratios(ops: Any, c: F.Counts, beta: Any, zero_division: Any) -> dict[str, E]:
    return {name: _ratio(ops, c, name, beta, zero_division) for name in RATIOS}


# The report is built in stages, each over the columns of the one before
# (``col(name)`` names such a column in the engine), so that no expression
# nests another stage's formulas: label values, then their aggregates per
# group; row values, then their aggregates; then the group's own columns.


def label_values(
    ops: Any, k: LabelCounts, beta: Any, zero_division: Any, only: Collection[str] | None = None
) -> dict[str, E]:
    """Per label (stage 1): the columns of ``label_metrics`` after ``label``.

    Engines drop ``fbeta`` when no beta is given. ``only``: just these columns (the others
    are not computed).
    """
    c = k.counts
    columns: dict[str, Callable[[], E]] = {
        "tp": lambda: k.tp,
        "fp": lambda: k.fp,
        "fn": lambda: k.fn,
        "tn": lambda: true_negatives(ops, c, k.n_rows),
        "support": lambda: k.tp + k.fn,
        **{name: partial(_ratio, ops, c, name, beta, zero_division) for name in RATIOS},
        "accuracy": lambda: label_accuracy(ops, c, k.n_rows),
    }
    known = {*RATIOS, "accuracy"}
    return {
        name: _known(ops, k.n_rows, make()) if name in known else make()
        for name, make in columns.items()
        if only is None or name in only
    }


def label_aggregates(
    ops: Any, col: Callable[[str], E], zero_division: Any, only: Collection[str] | None = None
) -> dict[str, E]:
    """Over the label rows of a group (stage 2), from :func:`label_values` and ``n_rows``.

    Macro (mean over labels) and weighted (by support) averages, Hamming
    loss, label accuracies and the label-problem rates. ``only``: just these
    (``n_labels`` always; the others are not computed, nor the columns they read).
    """
    n_rows = ops.mean(col("n_rows"))  # the same on every label row of the group
    n_labels = ops.count(col("tp"))

    @cache
    def pooled() -> F.Counts:
        return F.pooled(ops, F.Counts(col("tp"), col("fp"), col("fn")))

    def macro(r: str) -> E:
        return F.average(ops, col(r), zero_division)

    def weighted(r: str) -> E:
        nothing = pooled().nothing_to_score
        return weighted_average(ops, col(r), col("support"), zero_division, nothing)

    out: dict[str, Callable[[], E]] = {
        **{f"macro_{r}": partial(macro, r) for r in RATIOS},
        **{f"weighted_{r}": partial(weighted, r) for r in RATIOS},
        "hamming_loss": lambda: F.hamming_loss(ops, pooled().fp, pooled().fn, n_rows, n_labels),
        "label_accuracy_micro": lambda: label_accuracy_micro(
            ops, pooled().fp, pooled().fn, n_rows, n_labels
        ),
        "label_accuracy_macro": lambda: ops.mean(col("accuracy")),
        "clp": lambda: share_of_labels(ops, (col("tn") + col("fn")) == 0),
        "mlp": lambda: share_of_labels(ops, (col("tp") + col("fp")) == 0),
        "wlp": lambda: share_of_labels(ops, col("tp") == 0),
    }
    return {
        "n_labels": n_labels,
        **{k: _known(ops, n_rows, make()) for k, make in out.items() if only is None or k in only},
    }


def row_values(ops: Any, s: F.RowStats, beta: Any, zero_division: Any) -> dict[str, E]:
    """Per distinct row (stage 1): tp, fp, fn, the row's ratios and whether it is exact."""
    c = s.counts
    return {
        "tp": c.tp,
        "fp": c.fp,
        "fn": c.fn,
        **_ratios(ops, c, beta, zero_division),
        "exact": ops.when(s.exact_match, 1, 0),
    }


def row_aggregates(ops: Any, col: Callable[[str], E], n: E, zero_division: Any) -> dict[str, E]:
    """Over a histogram of rows (stage 2): ``n`` rows have the values of :func:`row_values`.

    Pooled counts (for micro) and samples averages (each row's value
    weighted by how many rows have it: the plain mean over the rows).
    """
    pooled = F.Counts(ops.sum(n * col("tp")), ops.sum(n * col("fp")), ops.sum(n * col("fn")))
    subset = F.share(ops, ops.sum(n * col("exact")), ops.sum(n))
    return {
        "n_rows": ops.sum(n),
        "pooled_tp": pooled.tp,
        "pooled_fp": pooled.fp,
        "pooled_fn": pooled.fn,
        **{
            f"samples_{r}": weighted_average(ops, col(r), n, zero_division, pooled.nothing_to_score)
            for r in RATIOS
        },
        "subset_accuracy": subset,
        "zero_one_loss": 1 - subset,
    }


def group_columns(ops: Any, col: Callable[[str], E], beta: Any, zero_division: Any) -> dict[str, E]:
    """Per group (stage 3), from the aggregates: micro averages and the F of macro means."""
    pooled = F.Counts(col("pooled_tp"), col("pooled_fp"), col("pooled_fn"))
    p, r = col("macro_precision"), col("macro_recall")
    return {
        **{f"micro_{name}": e for name, e in _ratios(ops, pooled, beta, zero_division).items()},
        "macro_f1_of_means": fbeta_of_means(ops, p, r, 1),
        "macro_fbeta_of_means": fbeta_of_means(ops, p, r, beta),
    }


#: the columns of multilabel_report, in order; ``*_fbeta*`` replace ``*_f1*`` with beta
REPORT_COLUMNS = (
    "n_rows",
    "n_labels",
    "micro_precision",
    "micro_recall",
    "micro_f1",
    "micro_fbeta",
    "micro_jaccard",
    "macro_precision",
    "macro_recall",
    "macro_f1",
    "macro_fbeta",
    "macro_f1_of_means",
    "macro_fbeta_of_means",
    "macro_jaccard",
    "weighted_precision",
    "weighted_recall",
    "weighted_f1",
    "weighted_fbeta",
    "weighted_jaccard",
    "samples_precision",
    "samples_recall",
    "samples_f1",
    "samples_fbeta",
    "samples_jaccard",
    "hamming_loss",
    "subset_accuracy",
    "zero_one_loss",
    "label_accuracy_micro",
    "label_accuracy_macro",
    "clp",
    "mlp",
    "wlp",
)

#: the columns of label_metrics after the group columns, in order
LABEL_COLUMNS = (
    "label",
    "tp",
    "fp",
    "fn",
    "tn",
    "support",
    "precision",
    "recall",
    "f1",
    "fbeta",
    "jaccard",
    "accuracy",
)


def report_columns(with_beta: bool) -> tuple[str, ...]:
    """The report's columns: the F ones are ``*_f1*`` without beta, ``*_fbeta*`` with it."""
    drop = "_f1" if with_beta else "_fbeta"
    return tuple(c for c in REPORT_COLUMNS if drop not in c)


def label_metrics_columns(with_beta: bool) -> tuple[str, ...]:
    """The columns of label_metrics after the group columns (``fbeta`` only with beta)."""
    return tuple(c for c in LABEL_COLUMNS if with_beta or c != "fbeta")


# ------------------------------------------------------------------ declarations
LABELS = Param("labels", None)
BETA = P.TABLE_BETA
ZD = P.ZERO_DIVISION
BY = Param("by", None)
TABLE_INPUTS = ("source", "actual", "predicted")
TABLE_PARAMS = (LABELS, BETA, ZD, BY)


def _label_row(
    ops: Any, k: LabelCounts, beta: Any = None, zero_division: Any = None, **table: Any
) -> dict[str, E]:
    """A label's row of ``label_metrics`` from its counts: :func:`label_values` (``labels``
    and ``by`` are the table's: they choose the rows)."""
    return label_values(ops, k, beta, zero_division)


measure(
    "label_metrics",
    "table",
    FAMILY,
    "One row per (group, label): tp, fp, fn, tn, support, precision, recall, F1 "
    "(and F-beta with beta), Jaccard and accuracy.",
    inputs=TABLE_INPUTS,
    params=TABLE_PARAMS,
)(_label_row)
declare(
    "multilabel_report",
    "table",
    FAMILY,
    "One row per group: micro, macro, weighted and samples averages, Hamming loss, subset "
    "accuracy, label accuracies and the label-problem rates CLP, MLP, WLP.",
    inputs=TABLE_INPUTS,
    params=TABLE_PARAMS,
)

#: the report columns also offered as table functions of their own
STANDALONE = {
    "macro_precision": "Mean over labels of per-label precision.",
    "macro_recall": "Mean over labels of per-label recall.",
    "macro_f1": "Mean over labels of per-label F1 (scikit-learn's and mldr's macro F1).",
    "macro_fbeta": "Mean over labels of per-label F-beta.",
    "macro_jaccard": "Mean over labels of per-label Jaccard.",
    "macro_f1_of_means": "F1 of macro precision and macro recall (the R walkthrough's macro F1).",
    "macro_fbeta_of_means": "F-beta of macro precision and macro recall.",
    "weighted_precision": "Per-label precision averaged with support weights.",
    "weighted_recall": "Per-label recall averaged with support weights.",
    "weighted_f1": "Per-label F1 averaged with support weights.",
    "weighted_fbeta": "Per-label F-beta averaged with support weights.",
    "weighted_jaccard": "Per-label Jaccard averaged with support weights.",
    "label_accuracy_macro": "Mean over labels of (tp + tn) / rows.",
    "label_accuracy_micro": "1 - Hamming loss over the label universe.",
    "clp": "Share of labels never predicted negative (tn + fn = 0).",
    "mlp": "Share of labels never predicted (tp + fp = 0).",
    "wlp": "Share of labels never predicted right (tp = 0).",
}

#: the docstring examples' table of the measures of :data:`STANDALONE` (each engine writes
#: it its own way): over its two rows, bird is a false negative, cat and dog true positives,
#: fish a false positive
STANDALONE_EXAMPLE = {
    "actual": [["cat", "bird"], ["dog"]],
    "predicted": [["cat"], ["dog", "fish"]],
}
#: each measure's value on :data:`STANDALONE_EXAMPLE` (beta 2 where it takes one), from the
#: labels' counts: per label (bird, cat, dog, fish) precision, recall, F and Jaccard are
#: 0, 1, 1, 0 (the undefined ones 0), so their mean is 1/2, their mean weighted by the supports
#: 1, 1, 1, 0 is 2/3, and the F of the mean precision and recall is 1/2; the accuracies
#: (tp + tn) / 2 are 1/2, 1, 1, 1/2 (mean 3/4); 2 wrong decisions of 8 (Hamming loss 1/4);
#: no label is never predicted negative, one (bird) never predicted, two never right
STANDALONE_OUTPUTS = {
    **{f"macro_{r}": Fraction(1, 2) for r in ("precision", "recall", "f1", "fbeta", "jaccard")},
    "macro_f1_of_means": Fraction(1, 2),
    "macro_fbeta_of_means": Fraction(1, 2),
    **{f"weighted_{r}": Fraction(2, 3) for r in ("precision", "recall", "f1", "fbeta", "jaccard")},
    "label_accuracy_macro": Fraction(3, 4),
    "label_accuracy_micro": 1 - Fraction(2, 8),
    "clp": Fraction(0, 4),
    "mlp": Fraction(1, 4),
    "wlp": Fraction(2, 4),
}
#: the beta of the examples of the measures that take one
STANDALONE_EXAMPLE_BETA = 2.0


#: the report columns of stage 3 (:func:`group_columns`): the F of the macro means
OF_MEANS = ("macro_f1_of_means", "macro_fbeta_of_means")


def standalone_needs(name: str) -> tuple[str, ...]:
    """The columns of :func:`label_aggregates` that the measure ``name`` (of
    :data:`STANDALONE`) is computed from: itself, or the macro means its F reads.

    Examples
    --------
    >>> standalone_needs("macro_f1"), standalone_needs("macro_f1_of_means")
    (('macro_f1',), ('macro_precision', 'macro_recall'))
    """
    return ("macro_precision", "macro_recall") if name in OF_MEANS else (name,)


def standalone_value(ops: Any, name: str, col: Callable[[str], E], beta: Any) -> E:
    """The measure ``name`` (of :data:`STANDALONE`) from the group's columns ``col`` of
    :func:`label_aggregates` (those of :func:`standalone_needs`): the column itself, or the
    F of the macro means (stage 3)."""
    if name not in OF_MEANS:
        return col(name)
    b = 1 if name == "macro_f1_of_means" else beta
    return fbeta_of_means(ops, col("macro_precision"), col("macro_recall"), b)


@dataclass(frozen=True)
class LabelRows:
    """The label rows of a group as an engine reads them: ``col(name)`` is a column of
    :func:`label_values` (or ``n_rows``), a value per label row: the statistics of the
    measures of :data:`STANDALONE`."""

    col: Callable[[str], E]


def _standalone(name: str) -> Callable[..., E]:
    def build(ops: Any, s: LabelRows, zero_division: Any, beta: Any = 1, **table: Any) -> E:
        """Over the group's label rows: :func:`label_aggregates`, then
        :func:`standalone_value` (``labels`` and ``by`` are the table's: they choose the
        rows)."""
        found = label_aggregates(ops, s.col, zero_division, only=standalone_needs(name))
        return standalone_value(ops, name, found.__getitem__, beta)

    return build


for _name, _summary in STANDALONE.items():
    measure(
        _name,
        "table",
        FAMILY,
        _summary + " One row per group, over a table.",
        inputs=TABLE_INPUTS,
        params=(LABELS, P.BETA, ZD, BY) if "fbeta" in _name else (LABELS, ZD, BY),
    )(_standalone(_name))

# ------------------------------------------------------------------ indicator columns
#: every engine's errors of labels_from_indicators: as many names as indicators, each 0 or 1
INDICATOR_COUNT_MESSAGE = (
    "labels_from_indicators needs one label name per indicator. Got {} indicators and {} labels."
)
INDICATOR_VALUE_MESSAGE = (
    "labels_from_indicators takes indicators 0 or 1 (or booleans). Got {} instead."
)
declare(
    "labels_from_indicators",
    "row",
    FAMILY,
    "The label list of a row from 0/1 (or boolean) indicator values and their label names; "
    "NULL if any indicator is NULL.",
    inputs=("indicators", "labels"),
)
declare(
    "indicators_from_labels",
    "row",
    FAMILY,
    "0/1 indicators of a label list over a label universe, in the universe's order.",
    inputs=("actual", "labels"),
)
