"""Single-label (multiclass) measures: one label per row, actual against predicted.

Labels are any comparable values (text, integers, booleans); both sides must
be of one kind. A row where either side is NULL is unknown and skipped; over
no known rows every aggregate is NULL.

From one label column: ``class_distribution`` (table: class, count, share),
``majority_class``, ``minority_class`` (ties go to the smallest class),
``majority_error`` (1 - the largest share) and ``prevalence(label, positive)``.

From (actual, predicted): ``accuracy`` and ``error_rate``; ``precision_score``,
``recall_score``, ``fbeta_score`` and ``f1_score`` with ``average`` micro,
macro or weighted over the classes seen on either side, or over given
``labels`` (scikit-learn's definitions: a label no row holds is a class
without rows, a row of another class still counts against the labels it
meets); ``balanced_accuracy_score``; ``cohen_kappa_score`` (plain,
linear or quadratic weights over the sorted classes, or a disagreement-weight
matrix over given ``labels``); ``matthews_corrcoef``;
``class_error_rate(actual, predicted, label)``; ``cost_error(actual,
predicted, costs)``; and the tables ``confusion_matrix`` (long: actual,
predicted, count, every cell), ``confusion_matrix_wide`` and ``class_metrics``
(one row per class).

How the class-wise measures run: the statistics are the confusion counts of
every class (rows truly of it, predicted as it, right) along a *class axis*
that each engine supplies: DuckDB builds them inside ONE aggregate from
``histogram()`` maps (a hash aggregate, one pass, memory per group of the
order of the number of classes) and reduces over them with list functions;
Polars from sorted values with ``search_sorted``. The formulas below are the
same for both: an average over classes is :func:`mlsql._formulas.average`
with the engine's class-axis ``ops``.

Notes
-----
- Undefined per-class ratios follow ``zero_division`` and averages treat them
  as :func:`mlsql._formulas.average` does (NaN and 'ignore' leave them out).
  When the classes left in a weighted average all have support 0, the average
  follows ``zero_division`` (as the multi-label weighted average does);
  scikit-learn then takes their unweighted mean.
- ``cohen_kappa_score`` is undefined only when every row is of one class on
  both sides (perfect agreement): its value then follows ``zero_division``
  (1 under 'diagnose'). scikit-learn returns NaN there.
- ``cohen_kappa_std_error``, ``cohen_kappa_z_value``, ``cohen_kappa_p_value``,
  ``cohen_kappa_p_value_one_sided``, ``cohen_kappa_low`` and ``cohen_kappa_high`` are
  statsmodels' ``cohens_kappa(table)`` std_kappa, z_value, pvalue_two_sided,
  pvalue_one_sided, kappa_low and kappa_upp (the 95% interval, kappa ± 1.96 std_kappa), the table's
  rows ``actual`` and columns ``predicted`` (:mod:`mlsql.measures.kappa_tests`); ``weights``
  and ``labels`` as ``cohen_kappa_score`` takes them, statsmodels' ``wt='linear'``,
  ``wt='quadratic'`` or (a matrix over the labels) ``weights=W``.
  They are NaN where statsmodels divides 0 by 0 (one class on both sides; for z
  and p also one class on a side, or no class on both sides), and the standard
  error is 0 where the variance is 0 exactly, where statsmodels gives a tiny
  number or NaN. bootstrap, compare and slices do not resample them.
- ``bowker_statistic`` and ``bowker_p_value`` are Bowker's test of symmetry of the
  confusion matrix, statsmodels' ``SquareTable(table, shift_zeros=False).symmetry()``
  statistic and pvalue over the classes on either side (McNemar's over k classes,
  :mod:`mlsql.measures.symmetry`): NULL over no rows, p NaN with one class only.
  bootstrap, compare and slices do not resample them.
- ``cohen_kappa_score(actual, predicted, weights, labels)``: ``labels`` (scikit-learn's)
  name the classes and their order; rows whose actual or predicted class is not among
  them are left out, as scikit-learn's ``confusion_matrix(labels=...)`` leaves them, and
  'linear' and 'quadratic' weigh the labels' positions. ``weights`` may then be a k x k
  matrix of disagreement weights for the k labels (finite, >= 0; row: actual, column:
  predicted): statsmodels' ``cohens_kappa(table, weights=W)``, kappa =
  1 - Σ w_ij M_ij / Σ w_ij A_i P_j / n. A matrix without labels, or of another size, is
  an error (:func:`mlsql._params.kappa_matrix`). The kappa tests above take the same
  ``weights`` and ``labels`` (statsmodels' ``cohens_kappa(table, weights=W)``'s variances),
  and bootstrap, compare and slices resample kappa over the classes seen.
- ``matthews_corrcoef`` is undefined when either side holds one class only:
  ``zero_division`` (default 0 as scikit-learn; 'diagnose': 1 if every row is
  right, else 0).
- ``balanced_accuracy_score`` is the mean recall over the classes that occur
  in ``actual`` (scikit-learn; classes only predicted are left out).
- ``cost_error``: (1/n) Σ M(i, j) cost(i, j); a pair (i, j) without a cost
  costs 1 off the diagonal and 0 on it.
- ``sample_weight`` (every aggregate but ``cost_map``): each row adds its weight, not 1, to
  the confusion matrix, so accuracy, the averaged precision, recall and F,
  balanced accuracy, kappa and MCC are scikit-learn's with
  ``sample_weight``. Known rows that all weigh 0 give the measures that
  take ``zero_division`` their undefined value under it ('diagnose': 1) and
  the others NULL, as over no rows (README, "Sample weights").
  The tables (``class_distribution``, ``confusion_matrix``,
  ``confusion_matrix_wide``, ``class_metrics``) take the weight column's name:
  their counts are sums of weights. ``majority_class`` and
  ``minority_class`` take the class of the largest and the smallest total
  weight (a class whose rows all weigh 0 does not occur; ties: the smallest).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from mlsql import _formulas as F
from mlsql import _params as P
from mlsql._formulas import Counts, formula
from mlsql._registry import Param, declare, measure
from mlsql.measures import contingency as C
from mlsql.measures import kappa_tests as K
from mlsql.measures import symmetry as B
from mlsql.measures.contingency import Table2x2
from mlsql.measures.kappa_tests import KAPPA_TESTS, kappa_weight
from mlsql.measures.label_based import weighted_average
from mlsql.measures.symmetry import BOWKER

E = Any  # an engine expression
FAMILY = "single_label"
#: measures whose statistics are every class's counts (engines gather them per class)
CLASS_MEASURES = (
    "precision_score",
    "recall_score",
    "fbeta_score",
    "f1_score",
    "balanced_accuracy_score",
    "cohen_kappa_score",
    "matthews_corrcoef",
    *KAPPA_TESTS,
    *BOWKER,
)
#: class measures that also sum over the (actual, predicted) pairs (engines gather the pairs)
PAIR_MEASURES = ("cohen_kappa_score", *KAPPA_TESTS, *BOWKER)
ZD = P.ZERO_DIVISION
BETA = P.BETA
AVERAGE = P.AVERAGE
LABELS = P.CLASS_LABELS
BY = Param("by", None)


# ------------------------------------------------------------------ statistics
@dataclass(frozen=True)
class LabelStats:
    """One label column: ``n`` known rows, the ``largest`` class count, rows ``matching(x)``."""

    n: E
    largest: E
    matching: Callable[[E], E]


@dataclass(frozen=True)
class Agreement:
    """Known rows ``n`` and rows where actual = predicted."""

    n: E
    correct: E


@dataclass(frozen=True)
class ClassView:
    """One class on the class axis: its position, its row total and its column total."""

    index: E
    actual: E
    predicted: E


#: a term of two class views
PairTerm = Callable[[ClassView, ClassView], E]
#: ``margin_cell_sum(term, row, col)`` of :class:`ClassStats`
MarginCellSum = Callable[[Callable[[ClassView, ClassView, E, E], E], PairTerm, PairTerm], E]


def margins_of_cells(
    cell_sum: Callable[[PairTerm], E], over: Callable[[Callable[[ClassView], E]], E]
) -> MarginCellSum:
    """:attr:`ClassStats.margin_cell_sum` from an engine's ``cell_sum`` (Σ over the confusion
    cells of a term of the cell's two classes) and ``over`` (Σ over the classes of a term of
    one): each cell's ``term(a, p, r, c)`` with r = Σ_l row(a, l) and c = Σ_l col(l, p).

    Examples
    --------
    >>> views = [ClassView(i, None, None) for i in range(2)]
    >>> margins = margins_of_cells(
    ...     lambda term: sum(term(a, p) for a in views for p in views),
    ...     lambda each: sum(each(v) for v in views),
    ... )
    >>> margins(lambda a, p, r, c: r * c, lambda a, l: 1, lambda l, p: 2)
    32
    """

    def margin_cell_sum(
        term: Callable[[ClassView, ClassView, E, E], E], row: PairTerm, col: PairTerm
    ) -> E:
        def cell(a: ClassView, p: ClassView) -> E:
            return term(a, p, over(lambda v: row(a, v)), over(lambda v: col(v, p)))

        return cell_sum(cell)

    return margin_cell_sum


@dataclass(frozen=True)
class ClassStats:
    """The confusion counts of every class, along a class axis an engine supplies.

    ``actual``, ``predicted`` and ``correct`` are per-class expressions (rows
    truly of the class, predicted as it, and both), ``axis`` is an ops object
    whose ``sum``/``mean``/``count`` reduce over classes; ``n`` is the number
    of known rows (with ``sample_weight``, their total weight, and ``rows`` the
    number of known rows: see :func:`when_known`). Classes are those seen on
    either side, sorted.

    ``index`` is each class's position (0, 1, ...). ``pair_sum(term)`` is
    Σ over class pairs (i, j) of ``term(view_i, view_j)``; ``row_pair_sum(term)``
    is Σ over known rows of ``term(index of actual, index of predicted)``
    (weighted kappa needs both). ``cell_sum(term)`` is Σ over known rows of
    ``term(view of the actual class, view of the predicted class)``, that is
    Σ over the confusion matrix's cells M_ij term(view_i, view_j): the term may
    read only the two views (kappa's variance needs it). ``mirror_sum(term)`` is Σ over
    the cells (i, j) of ``term(M_ij, M_ji)``, a cell's count (weight) and its mirror's,
    for a term that is 0 where M_ij = 0: engines sum over the cells that occur (Bowker's
    test of symmetry needs it). ``margin_cell_sum(term, row, col)`` is Σ over the cells
    M_ij term(view_i, view_j, r_i, c_j), r_i = Σ_l row(view_i, view_l) and
    c_j = Σ_l col(view_l, view_j) (weighted kappa's variance needs them).
    """

    n: E
    index: E
    actual: E
    predicted: E
    correct: E
    axis: Any
    pair_sum: Callable[[Callable[[ClassView, ClassView], E]], E]
    row_pair_sum: Callable[[Callable[[E, E], E]], E]
    rows: E = None
    cell_sum: Callable[[Callable[[ClassView, ClassView], E]], E] | None = None
    mirror_sum: Callable[[Callable[[E, E], E]], E] | None = None
    margin_cell_sum: MarginCellSum | None = None
    #: ``weight_at(i, j)``: the given weights matrix's entry of the classes at positions i, j
    #: (``cohen_kappa_score`` with ``labels`` and a matrix; the class axis is then the labels)
    weight_at: Callable[[E, E], E] | None = None
    #: ``bind_kappa_terms(weights, body)``: an engine's node for the sums of kappa's variances
    #: (:func:`mlsql.measures.kappa_tests.terms`) under ``weights``, bound once and passed to
    #: ``body`` as a dict by :func:`~mlsql.measures.kappa_tests.term_names`, and as a second
    #: argument the three :data:`~mlsql.measures.kappa_tests.VARIANCES` where the node
    #: computes those too (DuckDB: one macro per kind of weights, which the six kappa tests
    #: call instead of each writing them)
    bind_kappa_terms: Callable[[str, Callable[..., E]], E] | None = None
    #: an engine's expression of :func:`mlsql.measures.kappa_tests.one_side` (DuckDB: a
    #: macro over the class lists, which the kappa tests call instead of each writing it)
    one_side: E = None

    @property
    def counts(self) -> Counts:
        """Per class: tp = correct, fp = predicted - correct, fn = actual - correct."""
        return Counts(self.correct, self.predicted - self.correct, self.actual - self.correct)

    @property
    def tn(self) -> E:
        """Per class: rows neither truly of it nor predicted as it."""
        return self.n - self.actual - self.predicted + self.correct

    @property
    def pooled(self) -> Counts:
        """tp, fp, fn summed over classes (the micro average's statistics)."""
        return F.pooled(self.axis, self.counts)


@dataclass(frozen=True)
class OneVsRest:
    """Known rows ``n`` and the 2x2 table of one class against the rest, ``table(label)``.

    With ``sample_weight``, ``n`` is the known rows' total weight and ``rows`` their number.
    """

    n: E
    table: Callable[[E], Table2x2]
    rows: E = None


@dataclass(frozen=True)
class CostStats:
    """Known rows ``n`` and ``total_cost(costs)``: Σ over rows of cost(actual, predicted)."""

    n: E
    total_cost: Callable[[Any], E]


#: the row statistics each measure's formula reads, for the measures that read one kind of
#: row statistics (the class-wise ones read :class:`ClassStats` through the class axis): an
#: engine supplies one function per kind (``label_stats``, ``agreement``, ``one_vs_rest``,
#: ``cost_stats``) and reads here which measure needs which
STATISTICS: dict[str, type] = {
    "majority_error": LabelStats,
    "prevalence": LabelStats,
    "accuracy": Agreement,
    "error_rate": Agreement,
    "class_error_rate": OneVsRest,
    "cost_error": CostStats,
}
#: the function an engine's family module defines for each kind of row statistics
KIND_FUNCTIONS: dict[type, str] = {
    LabelStats: "label_stats",
    Agreement: "agreement",
    OneVsRest: "one_vs_rest",
    CostStats: "cost_stats",
}


def statistics_of(namespace: Mapping[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """Each measure of :data:`STATISTICS` with the function of its kind in ``namespace`` (a
    family module's ``globals()``, :data:`KIND_FUNCTIONS`): the row statistics it reads.

    Examples
    --------
    >>> kinds = {"label_stats": len, "agreement": max, "one_vs_rest": min, "cost_stats": sum}
    >>> stats = statistics_of(kinds)
    >>> stats["accuracy"] is max, stats["prevalence"] is len
    (True, True)
    """
    return {name: namespace[KIND_FUNCTIONS[kind]] for name, kind in STATISTICS.items()}


# ------------------------------------------------------------------ helpers


def when_known(ops: Any, n: E, value: E, rows: E = None) -> E:
    """``value``, or NULL over no known rows.

    ``n`` is the number of known rows, or with ``sample_weight`` their total
    weight, and then ``rows`` is their number: known rows that all weigh 0 give
    ``value`` over all-zero counts, which is the measure's undefined value under
    ``zero_division`` (README, "Sample weights").
    """
    return ops.when((n if rows is None else rows) == 0, None, value)


# ------------------------------------------------------------------ formulas
@formula
def matthews_corrcoef(
    ops: Any, n: E, correct: E, sum_rc: E, sum_rr: E, sum_cc: E, zero_division: Any
) -> E:
    """(n Σ M_ii - Σ r_k c_k) / sqrt((n² - Σ c_k²)(n² - Σ r_k²)) (multiclass MCC).

    Undefined when either side holds one class only.
    """
    den = ((n * n - sum_cc) ** 0.5) * ((n * n - sum_rr) ** 0.5)
    return F.ratio(ops, n * correct - sum_rc, den, zero_division, correct == n)


def class_values(ops: Any, s: ClassStats, beta: Any, zero_division: Any) -> dict[str, E]:
    """Per class: tp, fp, fn, tn, support, precision, recall, fbeta, class error rate."""
    c = s.counts
    return {
        "tp": c.tp,
        "fp": c.fp,
        "fn": c.fn,
        "tn": s.tn,
        "support": s.actual,
        "precision": F.precision(ops, c, zero_division),
        "recall": F.recall(ops, c, zero_division),
        "fbeta": F.fbeta(ops, c, beta, zero_division),
        "class_error_rate": C.false_negative_rate(ops, c, zero_division),
    }


def class_row_values(
    ops: Any, n: E, actual: E, predicted: E, correct: E, beta: Any, zero_division: Any
) -> dict[str, E]:
    """:func:`class_values` of one class from its counts, as a table's row holds them: the
    known rows ``n``, those truly of the class (``actual``), predicted as it
    (``predicted``) and both (``correct``)."""
    s = ClassStats(
        n=n,
        index=None,
        actual=actual,
        predicted=predicted,
        correct=correct,
        axis=ops,
        pair_sum=None,  # type: ignore[arg-type]
        row_pair_sum=None,  # type: ignore[arg-type]
    )
    return class_values(ops, s, beta, zero_division)


def averaged(ops: Any, s: ClassStats, ratio: Callable[..., E], average: Any, zd: Any) -> E:
    """A per-class ratio averaged over classes: micro (pooled), macro or weighted by support."""
    options = {
        "micro": lambda: ratio(ops, s.pooled, zd),
        "macro": lambda: F.average(s.axis, ratio(s.axis, s.counts, zd), zd),
        "weighted": lambda: weighted_average(
            s.axis, ratio(s.axis, s.counts, zd), s.actual, zd, s.pooled.nothing_to_score
        ),
    }
    return when_known(ops, s.n, F.choose(ops, average, options), s.rows)


# ------------------------------------------------------------------ one label column
@dataclass(frozen=True)
class ClassCount:
    """One class of a label column as ``class_distribution``'s row holds it: its ``count``
    (with ``sample_weight``, its total weight) and the known rows ``n`` of its group."""

    count: E
    n: E


def _class_share(ops: Any, s: ClassCount, **table: Any) -> dict:
    """A class's row of ``class_distribution``: its share of the known rows, NULL where they
    weigh 0 (``by`` is the table's)."""
    return {"share": F.share(ops, s.count, s.n)}


measure(
    "class_distribution",
    "table",
    FAMILY,
    "One row per class of a label column (and group): class, count, share of known rows.",
    inputs=("label",),
    params=(BY,),
)(_class_share)
declare(
    "majority_class",
    "aggregate",
    FAMILY,
    "The most frequent class (with sample_weight: of the largest total weight; ties: the"
    " smallest); NULLs skipped.",
    inputs=("label",),
)
declare(
    "minority_class",
    "aggregate",
    FAMILY,
    "The least frequent class that occurs (with sample_weight: of the smallest total weight"
    " above 0; ties: the smallest); NULLs skipped.",
    inputs=("label",),
)


@measure(
    "majority_error",
    "aggregate",
    FAMILY,
    "1 - the largest class share: the error of always predicting the majority class.",
    inputs=("label",),
)
def _majority_error(ops: Any, s: LabelStats) -> E:
    return F.share(ops, s.n - s.largest, s.n)


@measure(
    "prevalence",
    "aggregate",
    FAMILY,
    "Share of known rows whose label is the given positive class.",
    inputs=("label",),
    params=(Param("positive", None),),
)
def _prevalence(ops: Any, s: LabelStats, positive: Any) -> E:
    return F.share(ops, s.matching(positive), s.n)


# ------------------------------------------------------------------ actual vs predicted
@measure(
    "accuracy",
    "aggregate",
    FAMILY,
    "Share of known rows where actual = predicted.",
    aliases=("accuracy_score",),
)
def _accuracy(ops: Any, s: Agreement) -> E:
    return F.share(ops, s.correct, s.n)


@measure(
    "error_rate",
    "aggregate",
    FAMILY,
    "Share of known rows where actual <> predicted.",
)
def _error_rate(ops: Any, s: Agreement) -> E:
    return F.share(ops, s.n - s.correct, s.n)


@measure(
    "precision_score",
    "aggregate",
    FAMILY,
    "Precision over classes, averaged micro, macro (default) or weighted by support.",
    params=(AVERAGE, ZD, LABELS),
)
def _precision_score(ops: Any, s: ClassStats, average: Any, zero_division: Any, labels: Any) -> E:
    return averaged(ops, s, F.precision, average, zero_division)


@measure(
    "recall_score",
    "aggregate",
    FAMILY,
    "Recall over classes, averaged micro, macro (default) or weighted by support.",
    params=(AVERAGE, ZD, LABELS),
)
def _recall_score(ops: Any, s: ClassStats, average: Any, zero_division: Any, labels: Any) -> E:
    return averaged(ops, s, F.recall, average, zero_division)


@measure(
    "fbeta_score",
    "aggregate",
    FAMILY,
    "F-beta over classes (from counts), averaged micro, macro (default) or weighted.",
    params=(BETA, AVERAGE, ZD, LABELS),
)
def _fbeta_score(
    ops: Any, s: ClassStats, beta: Any, average: Any, zero_division: Any, labels: Any
) -> E:
    def ratio(o: Any, c: Counts, zd: Any) -> E:
        return F.fbeta(o, c, beta, zd)

    return averaged(ops, s, ratio, average, zero_division)


@measure(
    "f1_score",
    "aggregate",
    FAMILY,
    "F1 over classes (from counts), averaged micro, macro (default) or weighted.",
    params=(AVERAGE, ZD, LABELS),
)
def _f1_score(ops: Any, s: ClassStats, average: Any, zero_division: Any, labels: Any) -> E:
    def ratio(o: Any, c: Counts, zd: Any) -> E:
        return F.fbeta(o, c, 1, zd)

    return averaged(ops, s, ratio, average, zero_division)


@measure(
    "balanced_accuracy_score",
    "aggregate",
    FAMILY,
    "Mean recall over the classes that occur in actual.",
    aliases=("balanced_accuracy",),
)
def _balanced_accuracy(ops: Any, s: ClassStats) -> E:
    recall = s.axis.when(s.actual > 0, s.correct / s.actual, None)
    return when_known(ops, s.n, s.axis.mean(recall), s.rows)


@measure(
    "cohen_kappa_score",
    "aggregate",
    FAMILY,
    "Cohen's kappa; weights NULL (plain), 'linear', 'quadratic' or a matrix over labels.",
    params=(P.KAPPA_WEIGHTS, P.KAPPA_LABELS, ZD),
    aliases=("kappa",),
)
def _cohen_kappa(ops: Any, s: ClassStats, weights: Any, labels: Any, zero_division: Any) -> E:
    """1 - Σ w_ij M_ij / Σ w_ij A_i P_j / n over disagreement weights w (statsmodels'
    ``cohens_kappa(table, weights=w)``, scikit-learn's for 'linear' and 'quadratic').

    A custom matrix comes with ``labels``, the classes it is written over, as
    statsmodels' 2-D ``weights`` comes with its table's rows and columns and
    scikit-learn's ``labels`` orders its confusion matrix: a plain nested list
    (``[[0, 1, 4], [1, 0, 1], [4, 1, 0]]``) writes the same in DuckDB, Polars and
    Spark, where a map of (actual, predicted) pairs would need each engine's map
    type, and it has one value per cell, so no pair can be missing or repeated.
    The engines then count over ``labels`` (the class axis is the labels, in their
    order; :attr:`ClassStats.weight_at` reads the matrix) and leave out the rows whose
    actual or predicted class is not a label, as scikit-learn's confusion matrix does.
    """
    # Plain kappa is the weighted one with weight 1 off the diagonal: its disagreements are
    # summed over the rows and class pairs that disagree, never as n - Σ M_ii and
    # n² - Σ r_i c_i, which cancel when one class holds nearly all the weight
    # (weights 1e15 and 1e-15 lost the small class's rows entirely).
    n = s.n

    def weight(w: str, i: E, j: E) -> E:
        if w == "matrix":
            assert s.weight_at is not None, "a weights matrix needs labels"
            return s.weight_at(i, j)
        return kappa_weight(ops, w, i, j)

    def weighted(w: str) -> E:
        def row_term(i: E, j: E) -> E:
            return weight(w, i, j)

        def pair_term(a: ClassView, b: ClassView) -> E:
            return weight(w, a.index, b.index) * a.actual * b.predicted

        disagreement, chance = s.row_pair_sum(row_term), s.pair_sum(pair_term)
        return C.cohen_kappa(ops, n, disagreement, chance, zero_division)

    options: dict[str, Callable[[], E]] = {
        w: partial(weighted, w) for w in ("none", "linear", "quadratic")
    }
    if s.weight_at is not None:
        options["matrix"] = partial(weighted, "matrix")
    return when_known(ops, n, F.choose(ops, weights, options), s.rows)


KAPPA_SUMMARIES = {
    "cohen_kappa_std_error": (
        "Cohen's kappa's asymptotic standard error over k classes: statsmodels' cohens_kappa "
        "std_kappa; weights NULL (plain), 'linear', 'quadratic' or a matrix over labels, as "
        "cohen_kappa_score's.",
        K.std_error,
    ),
    "cohen_kappa_z_value": (
        "kappa / its standard error under kappa = 0, over k classes: statsmodels' "
        "cohens_kappa z_value.",
        K.z_value,
    ),
    "cohen_kappa_p_value": (
        "Two-sided p-value of kappa = 0 over k classes: statsmodels' cohens_kappa "
        "pvalue_two_sided.",
        K.p_value,
    ),
    "cohen_kappa_p_value_one_sided": (
        "One-sided p-value of kappa = 0 against kappa > 0, P(Z > z), over k classes: "
        "statsmodels' cohens_kappa pvalue_one_sided.",
        K.p_value_one_sided,
    ),
    "cohen_kappa_low": (
        "Lower end of kappa's 95% interval, kappa - 1.96 std_kappa: statsmodels' kappa_low.",
        lambda ops, s, weights, labels: K.interval(ops, s, -1, weights, labels),
    ),
    "cohen_kappa_high": (
        "Upper end of kappa's 95% interval, kappa + 1.96 std_kappa: statsmodels' kappa_upp.",
        lambda ops, s, weights, labels: K.interval(ops, s, 1, weights, labels),
    ),
}
for _name, (_summary, _build) in KAPPA_SUMMARIES.items():
    measure(_name, "aggregate", FAMILY, _summary, params=(P.KAPPA_WEIGHTS, P.KAPPA_LABELS))(_build)

BOWKER_SUMMARIES = {
    "bowker_statistic": (
        "Bowker's test of symmetry of the k x k confusion matrix, Σ_{i<j} (M_ij - M_ji)² / "
        "(M_ij + M_ji): statsmodels' SquareTable(table, shift_zeros=False).symmetry() statistic.",
        B.statistic,
    ),
    "bowker_p_value": (
        "P-value of Bowker's test of symmetry, chi-square with k (k - 1) / 2 degrees of "
        "freedom: statsmodels' SquareTable(table, shift_zeros=False).symmetry() pvalue.",
        B.p_value,
    ),
}
for _test, (_text, _formula) in BOWKER_SUMMARIES.items():
    measure(_test, "aggregate", FAMILY, _text)(_formula)


@measure(
    "matthews_corrcoef",
    "aggregate",
    FAMILY,
    "Matthews correlation coefficient (multiclass).",
    params=(ZD,),
    aliases=("mcc",),
)
def _mcc(ops: Any, s: ClassStats, zero_division: Any) -> E:
    value = matthews_corrcoef(
        ops,
        s.n,
        s.axis.sum(s.correct),
        s.axis.sum(s.actual * s.predicted),
        s.axis.sum(s.actual * s.actual),
        s.axis.sum(s.predicted * s.predicted),
        zero_division,
    )
    return when_known(ops, s.n, value, s.rows)


@measure(
    "class_error_rate",
    "aggregate",
    FAMILY,
    "Share of the rows truly of the given class that were predicted otherwise.",
    params=(Param("label", None), ZD),
)
def _class_error_rate(ops: Any, s: OneVsRest, label: Any, zero_division: Any) -> E:
    t = s.table(label)
    return when_known(ops, s.n, C.false_negative_rate(ops, t.counts, zero_division), s.rows)


@measure(
    "cost_error",
    "aggregate",
    FAMILY,
    "(1/n) Σ cost(actual, predicted); costs map actual -> predicted -> cost "
    "(missing pairs: 1 off the diagonal, 0 on it).",
    params=(Param("costs", None),),
)
def _cost_error(ops: Any, s: CostStats, costs: Any) -> E:
    return F.share(ops, s.total_cost(costs), s.n)


declare(
    "cost_map",
    "aggregate",
    FAMILY,
    "A cost table's rows (actual, predicted, cost) as the nested map cost_error takes.",
    inputs=("actual", "predicted", "cost"),
    unweighted="it reads a table of costs, not predictions: there is nothing to weigh",
    unavailable={
        "polars": "cost_error takes the cost table itself (a DataFrame actual, predicted, cost) "
        "or a dict; no map column is needed",
    },
)
declare(
    "confusion_matrix",
    "table",
    FAMILY,
    "The confusion matrix as a long table: actual, predicted, count (every cell, zeros too).",
    params=(BY,),
)
declare(
    "confusion_matrix_wide",
    "table",
    FAMILY,
    "The confusion matrix as a wide table: one row per actual class, a column per predicted class.",
    params=(BY,),
    unavailable={
        "duckdb": "a DuckDB macro cannot PIVOT on values read from the data: run PIVOT "
        "confusion_matrix(...) ON predicted USING sum(count), or call "
        "mlsql.confusion_matrix_wide(con, ...)",
    },
)


@dataclass(frozen=True)
class ClassRow:
    """One class's counts as a table's row holds them: the known rows ``n``, those truly of
    the class (``actual``), predicted as it (``predicted``) and both (``correct``)."""

    n: E
    actual: E
    predicted: E
    correct: E


def _class_row(ops: Any, s: ClassRow, beta: Any, zero_division: Any, **table: Any) -> dict:
    """A class's row of ``class_metrics``: :func:`class_row_values` (``by`` is the table's)."""
    return class_row_values(ops, s.n, s.actual, s.predicted, s.correct, beta, zero_division)


measure(
    "class_metrics",
    "table",
    FAMILY,
    "One row per class: tp, fp, fn, tn, support, precision, recall, fbeta, class error rate.",
    params=(BETA, ZD, BY),
)(_class_row)
