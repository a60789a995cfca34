"""Multi-label set measures: per-row helpers, micro and samples averages, counts.

Each declaration names a public function and, where one formula serves every
engine, carries it. ``s`` is a :class:`~mlsql._formulas.RowStats` of one row
(per-row kinds) or of every row (aggregates, which pool with ``ops.sum``);
``k`` is a stored :class:`CountsFields`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from mlsql import _formulas as F
from mlsql import _params as P
from mlsql._registry import Param, measure
from mlsql.measures import label_based as LB

FAMILY = "multilabel"
BETA = P.BETA
ZD = P.ZERO_DIVISION


# ------------------------------------------------------------------ set helpers
@dataclass(frozen=True)
class LabelLists:
    """A row's two label lists as engine expressions: the set helpers' statistics."""

    actual: Any
    predicted: Any


class ListOps(Protocol):
    """The list primitives an engine adds to its ops for the set helpers.

    Each takes and gives one list per row; the engine makes a set helper NULL where
    either input list is NULL (the ``set`` kind), so the primitives need not.
    """

    def label_set(self, labels: Any) -> Any:
        """The distinct labels of ``labels``, sorted, without NULL."""
        ...

    def both(self, a: Any, b: Any) -> Any:
        """The labels of ``a`` that ``b`` holds."""
        ...

    def only(self, a: Any, b: Any) -> Any:
        """The labels of ``a`` that ``b`` lacks."""
        ...

    def either(self, a: Any, b: Any) -> Any:
        """The labels of ``a`` and those of ``b``."""
        ...


@measure("set_intersection", "set", FAMILY, "Labels in both lists: A ∩ P.")
def _intersection(ops: ListOps, s: LabelLists) -> Any:
    return ops.label_set(ops.both(s.actual, s.predicted))


@measure("set_difference", "set", FAMILY, "Labels in the first list only: A \\ P.")
def _difference(ops: ListOps, s: LabelLists) -> Any:
    return ops.label_set(ops.only(s.actual, s.predicted))


@measure("set_union", "set", FAMILY, "Labels in either list: A ∪ P.")
def _union(ops: ListOps, s: LabelLists) -> Any:
    return ops.label_set(ops.either(s.actual, s.predicted))


@measure("set_symmetric_difference", "set", FAMILY, "Labels in exactly one list: A △ P.")
def _symmetric_difference(ops: ListOps, s: LabelLists) -> Any:
    a, p = s.actual, s.predicted
    return ops.label_set(ops.either(ops.only(a, p), ops.only(p, a)))


@measure("true_positives", "row", FAMILY, "|A ∩ P|: true labels that were predicted.")
def _tp(ops: Any, s: F.RowStats) -> Any:
    return s.tp


@measure("false_positives", "row", FAMILY, "|P \\ A|: predicted labels that are not true.")
def _fp(ops: Any, s: F.RowStats) -> Any:
    return s.counts.fp


@measure("false_negatives", "row", FAMILY, "|A \\ P|: true labels that were not predicted.")
def _fn(ops: Any, s: F.RowStats) -> Any:
    return s.counts.fn


@measure(
    "true_negatives",
    "row",
    FAMILY,
    "n_labels - |A ∪ P|: labels of the universe neither true nor predicted (scikit-learn's "
    "multilabel_confusion_matrix(samplewise=True) tn; times a row's weight, its weighted tn).",
    params=(P.N_LABELS,),
)
def _tn(ops: Any, s: F.RowStats, n_labels: Any) -> Any:
    # a row's |A ∪ P| above n_labels would give a negative count: n_labels is too small
    union = s.n_actual + s.n_predicted - s.tp
    message = P.N_LABELS_TOO_SMALL_MESSAGE.format(func="true_negatives")
    tp = ops.error_if(union > n_labels, s.tp, message, n_labels)
    return LB.true_negatives(ops, F.RowStats(tp, s.n_actual, s.n_predicted).counts, n_labels)


@measure("set_jaccard", "row", FAMILY, "|A ∩ P| / |A ∪ P| of one row.", params=(ZD,))
def _set_jaccard(ops: Any, s: F.RowStats, zero_division: Any) -> Any:
    return F.jaccard(ops, s.counts, zero_division)


@measure("row_precision", "row", FAMILY, "|A ∩ P| / |P| of one row.", params=(ZD,))
def _row_precision(ops: Any, s: F.RowStats, zero_division: Any) -> Any:
    return F.precision(ops, s.counts, zero_division)


@measure("row_recall", "row", FAMILY, "|A ∩ P| / |A| of one row.", params=(ZD,))
def _row_recall(ops: Any, s: F.RowStats, zero_division: Any) -> Any:
    return F.recall(ops, s.counts, zero_division)


@measure("row_fbeta", "row", FAMILY, "F-beta of one row, from its counts.", params=(BETA, ZD))
def _row_fbeta(ops: Any, s: F.RowStats, beta: Any, zero_division: Any) -> Any:
    return F.fbeta(ops, s.counts, beta, zero_division)


# ------------------------------------------------------------------ micro averages
@measure(
    "micro_precision", "aggregate", FAMILY, "Precision of counts pooled over rows.", params=(ZD,)
)
def _micro_precision(ops: Any, s: F.RowStats, zero_division: Any) -> Any:
    return F.precision(ops, F.pooled(ops, s), zero_division)


@measure("micro_recall", "aggregate", FAMILY, "Recall of counts pooled over rows.", params=(ZD,))
def _micro_recall(ops: Any, s: F.RowStats, zero_division: Any) -> Any:
    return F.recall(ops, F.pooled(ops, s), zero_division)


@measure(
    "micro_fbeta", "aggregate", FAMILY, "F-beta of counts pooled over rows.", params=(BETA, ZD)
)
def _micro_fbeta(ops: Any, s: F.RowStats, beta: Any, zero_division: Any) -> Any:
    return F.fbeta(ops, F.pooled(ops, s), beta, zero_division)


@measure("micro_f1", "aggregate", FAMILY, "F1 of counts pooled over rows.", params=(ZD,))
def _micro_f1(ops: Any, s: F.RowStats, zero_division: Any) -> Any:
    return F.fbeta(ops, F.pooled(ops, s), 1, zero_division)


@measure("micro_jaccard", "aggregate", FAMILY, "Jaccard of counts pooled over rows.", params=(ZD,))
def _micro_jaccard(ops: Any, s: F.RowStats, zero_division: Any) -> Any:
    return F.jaccard(ops, F.pooled(ops, s), zero_division)


# ------------------------------------------------------------------ samples averages
@measure("samples_precision", "aggregate", FAMILY, "Mean over rows of row precision.", params=(ZD,))
def _samples_precision(ops: Any, s: F.RowStats, zero_division: Any) -> Any:
    return F.average(ops, F.precision(ops, s.counts, zero_division), zero_division)


@measure("samples_recall", "aggregate", FAMILY, "Mean over rows of row recall.", params=(ZD,))
def _samples_recall(ops: Any, s: F.RowStats, zero_division: Any) -> Any:
    return F.average(ops, F.recall(ops, s.counts, zero_division), zero_division)


@measure("samples_fbeta", "aggregate", FAMILY, "Mean over rows of row F-beta.", params=(BETA, ZD))
def _samples_fbeta(ops: Any, s: F.RowStats, beta: Any, zero_division: Any) -> Any:
    return F.average(ops, F.fbeta(ops, s.counts, beta, zero_division), zero_division)


@measure("samples_f1", "aggregate", FAMILY, "Mean over rows of row F1.", params=(ZD,))
def _samples_f1(ops: Any, s: F.RowStats, zero_division: Any) -> Any:
    return F.average(ops, F.fbeta(ops, s.counts, 1, zero_division), zero_division)


@measure("samples_jaccard", "aggregate", FAMILY, "Mean over rows of row Jaccard.", params=(ZD,))
def _samples_jaccard(ops: Any, s: F.RowStats, zero_division: Any) -> Any:
    return F.average(ops, F.jaccard(ops, s.counts, zero_division), zero_division)


# ------------------------------------------------------------------ exact match and Hamming
@measure("subset_accuracy", "aggregate", FAMILY, "Share of rows predicted exactly.")
def _subset_accuracy(ops: Any, s: F.RowStats) -> Any:
    return F.subset_accuracy(ops, s.exact_match)


@measure("zero_one_loss", "aggregate", FAMILY, "Share of rows not predicted exactly.")
def _zero_one_loss(ops: Any, s: F.RowStats) -> Any:
    return F.zero_one_loss(ops, s.exact_match)


@measure(
    "hamming_loss",
    "aggregate",
    FAMILY,
    "(fp + fn) / (rows x n_labels): share of wrong label decisions.",
    params=(P.N_LABELS,),
)
def _hamming_loss(ops: Any, s: F.RowStats, n_labels: Any) -> Any:
    # a row's |A ∪ P| above n_labels would give a loss above 1: n_labels is too small
    union = s.n_actual + s.n_predicted - s.tp
    message = P.N_LABELS_TOO_SMALL_MESSAGE.format(func="hamming_loss")
    tp = ops.error_if(union > n_labels, s.tp, message, n_labels)
    c = F.pooled(ops, F.RowStats(tp, s.n_actual, s.n_predicted))
    return F.hamming_loss(ops, c.fp, c.fn, ops.count(tp), n_labels)


# ------------------------------------------------------------------ stored counts
#: fields of the multilabel_counts struct, in order
COUNTS_FIELDS = ("n_rows", "tp", "fp", "fn", "n_actual", "n_predicted", "n_exact")


def counts_message(func: str, name: str, type_name: str) -> str:
    """The error of an input ``name`` of ``func`` that is no ``multilabel_counts`` struct."""
    fields = ", ".join(COUNTS_FIELDS)
    return (
        f"{func} takes the struct multilabel_counts returns ({fields}) for {name}. "
        f"Got {name} {type_name}."
    )


@dataclass(frozen=True)
class CountsFields:
    """The fields of a stored ``multilabel_counts`` struct, as engine expressions."""

    n_rows: Any
    tp: Any
    fp: Any
    fn: Any
    n_actual: Any
    n_predicted: Any
    n_exact: Any

    @property
    def counts(self) -> F.Counts:
        """The pooled tp, fp, fn."""
        return F.Counts(self.tp, self.fp, self.fn)


def counts_fields(ops: Any, s: F.RowStats) -> dict[str, Any]:
    """The ``multilabel_counts`` struct's fields, aggregated over rows."""
    c = F.pooled(ops, s)
    return {
        "n_rows": ops.count(s.tp),
        "tp": c.tp,
        "fp": c.fp,
        "fn": c.fn,
        "n_actual": ops.sum(s.n_actual),
        "n_predicted": ops.sum(s.n_predicted),
        "n_exact": ops.sum(ops.when(s.exact_match, 1, 0)),
    }


measure(
    "multilabel_counts",
    "counts",
    FAMILY,
    "Struct of n_rows, tp, fp, fn, n_actual, n_predicted, n_exact: store it, sum it later.",
)(counts_fields)


@measure(
    "merge_counts",
    "counts",
    FAMILY,
    "Sum stored multilabel_counts structs field by field (combine partitions).",
    inputs=("counts",),
    unweighted="it sums stored counts, which carry their rows' weights already",
)
def merged_counts(ops: Any, k: CountsFields) -> dict[str, Any]:
    """Stored ``multilabel_counts`` structs added field by field."""
    return {name: ops.sum(getattr(k, name)) for name in COUNTS_FIELDS}


CI = ("counts",)


@measure(
    "micro_precision_from_counts",
    "from_counts",
    FAMILY,
    "micro_precision of stored counts.",
    inputs=CI,
    params=(ZD,),
)
def _p_from_counts(ops: Any, k: CountsFields, zero_division: Any) -> Any:
    return F.precision(ops, k.counts, zero_division)


@measure(
    "micro_recall_from_counts",
    "from_counts",
    FAMILY,
    "micro_recall of stored counts.",
    inputs=CI,
    params=(ZD,),
)
def _r_from_counts(ops: Any, k: CountsFields, zero_division: Any) -> Any:
    return F.recall(ops, k.counts, zero_division)


@measure(
    "micro_fbeta_from_counts",
    "from_counts",
    FAMILY,
    "micro_fbeta of stored counts.",
    inputs=CI,
    params=(BETA, ZD),
)
def _fb_from_counts(ops: Any, k: CountsFields, beta: Any, zero_division: Any) -> Any:
    return F.fbeta(ops, k.counts, beta, zero_division)


@measure(
    "micro_f1_from_counts",
    "from_counts",
    FAMILY,
    "micro_f1 of stored counts.",
    inputs=CI,
    params=(ZD,),
)
def _f1_from_counts(ops: Any, k: CountsFields, zero_division: Any) -> Any:
    return F.fbeta(ops, k.counts, 1, zero_division)


@measure(
    "micro_jaccard_from_counts",
    "from_counts",
    FAMILY,
    "micro_jaccard of stored counts.",
    inputs=CI,
    params=(ZD,),
)
def _j_from_counts(ops: Any, k: CountsFields, zero_division: Any) -> Any:
    return F.jaccard(ops, k.counts, zero_division)


@measure(
    "subset_accuracy_from_counts",
    "from_counts",
    FAMILY,
    "subset_accuracy of stored counts.",
    inputs=CI,
)
def _sa_from_counts(ops: Any, k: CountsFields) -> Any:
    return F.share(ops, k.n_exact, k.n_rows)


@measure(
    "zero_one_loss_from_counts",
    "from_counts",
    FAMILY,
    "zero_one_loss of stored counts.",
    inputs=CI,
)
def _zol_from_counts(ops: Any, k: CountsFields) -> Any:
    return 1 - F.share(ops, k.n_exact, k.n_rows)


@measure(
    "hamming_loss_from_counts",
    "from_counts",
    FAMILY,
    "hamming_loss of stored counts.",
    inputs=CI,
    params=(P.N_LABELS,),
)
def _hl_from_counts(ops: Any, k: CountsFields, n_labels: Any) -> Any:
    # stored counts keep no row's labels: what they show is a loss above 1
    # (compared in floating point: the integer product n_rows x n_labels can overflow)
    message = P.N_LABELS_TOO_SMALL_MESSAGE.format(func="hamming_loss_from_counts")
    fp = ops.error_if((k.fp + k.fn) / n_labels > k.n_rows, k.fp, message, n_labels)
    return F.hamming_loss(ops, fp, k.fn, k.n_rows, n_labels)


# ------------------------------------------------------------------ Hivemall
#: Hivemall's F where it is undefined (no true and no predicted label): 0
HIVEMALL_ZERO = P.ZeroDivision("value", 0.0)


def hivemall_f(ops: Any, s: F.RowStats | F.Counts, beta: Any, zero_division: Any) -> Any:
    """Hivemall's F: the F-beta of the pooled counts of ``s`` (label lists' rows, or binary
    labels' decisions; :func:`mlsql._formulas.pooled`), ``zero_division`` where it is
    undefined (the engine's 0)."""
    return F.fbeta(ops, F.pooled(ops, s), beta, zero_division)


def _fmeasure(ops: Any, s: F.RowStats, options: P.HivemallOptions) -> Any:
    return hivemall_f(ops, s, options.beta, HIVEMALL_ZERO)


measure(
    "fmeasure",
    "aggregate",
    "hivemall",
    "Hivemall's fmeasure: micro F-beta with an option string '-beta B -average micro|binary', "
    "over label arrays or int (1, 0, -1) / boolean binary inputs.",
    params=(Param("options", ""),),
)(_fmeasure)
