"""Which Spark Column aggregates hold a group's rows, and why: one place for the docstring notes.

Most Spark aggregates are counts and sums: a few numbers per group, however
many rows it has. The ones named here collect a group's rows into one array
(``collect_list``), because no exact aggregate with bounded memory exists for
them as a single Column; their docstrings say so. The class measures and the
binary AUC and AP name ``ms.evaluate``, their bounded form (a two-level
``groupBy`` plan: memory grows with groups x classes, not rows; runs of equal
scores sorted in the shuffle), and so does ``rae`` (grouped passes: memory grows
with the groups), the binned AUC/AP and calibration errors (cells
per bin: memory grows with groups x bins), the agreement measures (cells per
category or column) and the label-set Brier score (labels counted per group);
the others say no bounded form exists yet. The centred regression measures, the
class-wise measures, ``majority_error`` and ``minority_class`` (and ``majority_class``
with ``sample_weight``) collect only without mlsql's jar (:data:`UNBOUNDED_WITHOUT_JAR`):
with it, mlsql's Java aggregates give the co-moments exactly, and count the confusion
cells, in bounded memory.
``tests/test_spark_bounded.py`` checks each aggregate's plan against its own list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mlsql.measures.single_label import CLASS_MEASURES

CELLS = (
    "Spark has no exact aggregate that counts per value. With mlsql's jar (the default\n"
    "on classic Spark) mlsql's Java aggregate counts the group's confusion cells\n"
    "instead (memory grows with the distinct (actual, predicted) cells, never with\n"
    "rows), for classes that are text without a collation, integers, booleans or\n"
    "floating-point numbers; other classes are collected. Columns of a DataFrame\n"
    "(``df.actual``) are planned in the one form their types take; for names Spark\n"
    "picks the form when it plans the query."
)
RANKED = (
    "The area under a curve needs the group's rows ordered by score; no streaming\n"
    "aggregate gives it exactly."
)
CENTRED = (
    "Exact sums of squares need the values centred on the group's mean, which a\n"
    "single streaming pass of DOUBLEs does not know (Spark's ``var_pop`` and\n"
    "``covar_pop`` drift far beyond 1e-12 relative when the values sit far from zero).\n"
    "With mlsql's jar (the default on classic Spark) its co-moments come from mlsql's\n"
    "Java aggregate instead (exact sums of exact products, combined once at the end),\n"
    "in memory that does not grow with the rows."
)
TWO_PASSES = "Σ|y - mean(y)| needs the group's mean before it reads the values: two passes."

#: aggregates that collect their group's rows, and why
UNBOUNDED: dict[str, str] = {
    "rae": TWO_PASSES,
    **dict.fromkeys(
        (
            "area_under_pr",
            "auc",
            "average_precision_score",
            "hivemall_auc",
            "multilabel_average_precision",
            "multilabel_roc_auc",
        ),
        RANKED,
    ),
    "multilabel_brier_score": (
        "The label universe is a union of the rows' label sets; Spark has no aggregate that\n"
        "unions arrays, so the group's distinct label sets are collected (collect_set): memory\n"
        "grows with the distinct sets, at most the rows (its sum and count are streaming)."
    ),
    **dict.fromkeys(
        ("binned_auc", "binned_average_precision_score"),
        "Counts per threshold are bounded, but one sum per threshold overflows Spark's\n"
        "planner as the calibration bins do: the group's (bin, label) pairs are collected\n"
        "and sorted instead (DuckDB and Polars count per bin).",
    ),
    **dict.fromkeys(
        ("expected_calibration_error", "multiclass_calibration_error"),
        "A sum per bin is bounded, but one per bin overflowed Spark's planner at 1000\n"
        "bins: the group's (bin, gap) pairs are collected and sorted instead.",
    ),
    **dict.fromkeys(
        ("fleiss_kappa", "cochrans_q_statistic", "cochrans_q_p_value"),
        "The category (or column) totals are bounded by the categories, but their number\n"
        "is not known to the query: the group's (category, weight) cells are collected and\n"
        "sorted instead (DuckDB counts them in a histogram).",
    ),
    # a table, not a Column: its strategy 'quantile' only (mlsql.spark.families.thresholds)
    "calibration_table": (
        "With strategy 'quantile' each group's probabilities are collected and sorted\n"
        "(sort_array(collect_list)) to read numpy's percentiles to the bit, as any exact\n"
        "percentile holds them (Spark's own percentile holds the distinct values)."
    ),
}
#: aggregates that collect their group's rows only where mlsql's jar is not used (Spark
#: Connect, ``spark.mlsql.jvm=false``, no JDK at install time)
UNBOUNDED_WITHOUT_JAR: dict[str, str] = {
    **dict.fromkeys(
        ("r2", "rse", "rrse", "explained_variance", "pearson_corr", "hivemall_r2"), CENTRED
    ),
    # the class-wise measures (the kappa tests and Bowker's test read the same cells), and
    # majority_error and minority_class (the largest or smallest class of the (label, label)
    # cells; minority_class finds its class among the group's sorted collect_set)
    **dict.fromkeys((*CLASS_MEASURES, "majority_error", "minority_class"), CELLS),
}
#: the same, only with ``sample_weight`` (unweighted it is Spark's ``mode``, a map of classes)
UNBOUNDED_WEIGHTED_WITHOUT_JAR: dict[str, str] = {"majority_class": CELLS}
#: the aggregates that count per class in bounded memory when their ``labels`` are given
LABELLED = ("precision_score", "recall_score", "fbeta_score", "f1_score")
LABELS_BOUNDED = (
    "With ``labels`` given it reads each label's totals from the same cells, or where the\n"
    "aggregate does not apply counts per label (one count per label and side): memory\n"
    "grows with the labels or cells, never with rows."
)
#: the bounded alternative of the tables named in UNBOUNDED
TABLE_FORMS = {
    "calibration_table": (
        "strategy 'uniform' (equal-width bins) counts per bin: memory grows with groups x\n"
        "bins, never with rows."
    ),
}
EVALUATE = (
    "``ms.evaluate`` computes it with bounded memory (a two-level ``groupBy``: memory\n"
    "grows with groups x classes or distinct cells, never with rows)."
)
PASSES = (
    "``ms.evaluate`` computes it with bounded memory (grouped passes: the means per\n"
    "group, then the centred sums over the rows joined to them; memory grows with the\n"
    "groups, never with rows)."
)
#: the measures ``ms.evaluate`` runs as grouped passes (:mod:`mlsql.spark.evaluate_regression`)
PASSED = ("r2", "rse", "rrse", "explained_variance", "pearson_corr", "hivemall_r2", "rae")
BINS = (
    "``ms.evaluate`` computes it with bounded memory (cells per bin: a ``groupBy`` of the\n"
    "rows by bin first, then the measure over the bins' totals; memory grows with groups x\n"
    "bins, never with rows)."
)
#: the measures ``ms.evaluate`` runs over cells per bin (:mod:`mlsql.spark.evaluate_bins`)
BINNED = (
    "binned_auc",
    "binned_average_precision_score",
    "expected_calibration_error",
    "multiclass_calibration_error",
)
CATEGORIES = (
    "``ms.evaluate`` computes it with bounded memory (cells per category or column: a\n"
    "``groupBy`` of the exploded ratings first, then the measure over the cells' totals;\n"
    "memory grows with groups x categories, never with rows)."
)
#: the measures ``ms.evaluate`` runs over cells per category or column
#: (:mod:`mlsql.spark.evaluate_agreement`)
AGREED = ("fleiss_kappa", "cochrans_q_statistic", "cochrans_q_p_value")
LABEL_COUNTS = (
    "``ms.evaluate`` computes it with bounded memory (the rows' labels exploded and\n"
    "counted per group first, then joined to the rows; memory grows with groups x\n"
    "labels, never with rows)."
)
#: the measures ``ms.evaluate`` runs over labels counted per group (:mod:`mlsql.spark.evaluate_brier`)
COUNTED_LABELS = ("multilabel_brier_score",)
#: what the others say: ``ms.evaluate`` runs their own Column, so no bounded form exists yet
NO_BOUNDED_FORM = "No bounded form exists yet: ``ms.evaluate`` runs this same Column."
SORTED_RUNS = (
    "``ms.evaluate`` computes it with bounded memory (runs of equal scores: a ``groupBy``\n"
    "by score first, then a window over each group's runs sorted by score, whose buffer\n"
    "spills to disk; no group's rows are held in one array)."
)
#: the measures ``ms.evaluate`` runs over sorted runs (:mod:`mlsql.spark.evaluate_ranks`)
RUNS = ("auc", "hivemall_auc", "average_precision_score", "area_under_pr")
NOTES_END = "check the label types when the Column is built; a name is checked by Spark.\n"


def note(name: str) -> str:
    """The docstring lines that say ``name`` holds its group's rows, or "" if it does not."""
    if name in UNBOUNDED:
        head = "It collects the group's known rows (memory per group of the order of its rows).\n"
        measure_form = (
            SORTED_RUNS
            if name in RUNS
            else PASSES
            if name in PASSED
            else BINS
            if name in BINNED
            else CATEGORIES
            if name in AGREED
            else LABEL_COUNTS
            if name in COUNTED_LABELS
            else NO_BOUNDED_FORM
        )
        form = TABLE_FORMS.get(name, measure_form)
        labelled = LABELS_BOUNDED + "\n" if name in LABELLED else ""
        return head + UNBOUNDED[name] + "\n" + labelled + form + "\n"
    if name in UNBOUNDED_WITHOUT_JAR:
        head = (
            "Without mlsql's jar (Spark Connect, ``spark.mlsql.jvm=false``) it collects the\n"
            "group's known rows.\n"
        )
        labelled = LABELS_BOUNDED + "\n" if name in LABELLED else ""
        form = EVALUATE if UNBOUNDED_WITHOUT_JAR[name] is CELLS else PASSES
        return head + UNBOUNDED_WITHOUT_JAR[name] + "\n" + labelled + form + "\n"
    if name in UNBOUNDED_WEIGHTED_WITHOUT_JAR:
        head = (
            "With ``sample_weight``, without mlsql's jar (Spark Connect,\n"
            "``spark.mlsql.jvm=false``), it collects the group's known rows.\n"
        )
        return head + UNBOUNDED_WEIGHTED_WITHOUT_JAR[name] + "\n" + EVALUATE + "\n"
    return ""


def documented(functions: Mapping[str, Callable[..., Any]]) -> None:
    """Add :func:`note` to the Notes of each function that holds its group's rows."""
    for fn in functions.values():
        extra = note(getattr(fn, "__name__", ""))
        doc = fn.__doc__ or ""
        if extra and NOTES_END in doc and extra not in doc:
            fn.__doc__ = doc.replace(NOTES_END, NOTES_END + extra, 1)
