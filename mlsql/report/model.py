"""What a report holds, whichever engine computed it and whichever format shows it."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mlsql.report.numbers import key_text

#: one-number measures of a group, in display order, with their display names
SINGLE_LABEL = {
    "accuracy": "accuracy",
    "balanced_accuracy_score": "balanced accuracy",
    "cohen_kappa_score": "Cohen's kappa",
    "matthews_corrcoef": "Matthews correlation (MCC)",
}
TOTALS = {
    **SINGLE_LABEL,
    "hamming_loss": "Hamming loss",
    "subset_accuracy": "subset accuracy",
    "zero_one_loss": "zero-one loss",
    "label_accuracy_micro": "label accuracy (micro)",
    "label_accuracy_macro": "label accuracy (macro)",
    "macro_f_of_means": "macro {f} of mean P and R",
}
LABEL_PROBLEMS = {
    "clp": "CLP (never predicted negative)",
    "mlp": "MLP (never predicted)",
    "wlp": "WLP (never predicted right)",
}


#: summary columns that only mean something for label sets; a single-label report drops them
MULTI_LABEL_ONLY = (
    "samples_",
    "hamming_loss",
    "subset_accuracy",
    "zero_one_loss",
    "label_accuracy_",
    "clp",
    "mlp",
    "wlp",
)
#: labels ranked best or worst need at least this support (rarer labels are noise)
MIN_SUPPORT = 5


@dataclass(frozen=True)
class Confusion:
    """A confusion matrix in long form: only the (actual, predicted) pairs that occur.

    With thousands of classes the dense matrix has millions of zero cells;
    ``cells`` holds ``(actual, predicted, count)`` for non-zero counts only,
    and ``classes`` every class (the ``labels`` given first, then the rest sorted).
    """

    classes: tuple[Any, ...]
    cells: tuple[tuple[Any, Any, float], ...]

    def count(self, actual: Any, predicted: Any) -> float:
        """Rows whose actual class is ``actual`` and predicted class ``predicted``."""
        return self._lookup().get((actual, predicted), 0)

    def _lookup(self) -> dict[tuple[Any, Any], float]:
        return {(a, p): n for a, p, n in self.cells}

    def dense(self, classes: list[Any] | None = None) -> list[list[float]]:
        """The matrix over ``classes`` (default: all; mind the size), rows actual."""
        lookup = self._lookup()
        chosen = list(self.classes) if classes is None else classes
        return [[lookup.get((a, p), 0) for p in chosen] for a in chosen]

    def most_frequent(self, n: int) -> list[Any]:
        """The ``n`` classes with the most actual rows, in class order."""
        rows: dict[Any, float] = {}
        for a, _, k in self.cells:
            rows[a] = rows.get(a, 0) + k
        top = set(sorted(rows, key=lambda c: (-rows[c], str(c)))[:n])
        return [c for c in self.classes if c in top][:n]


@dataclass(frozen=True)
class Group:
    """One group's numbers: its key, summary row, label rows and confusion matrix."""

    key: dict[str, Any]
    summary: dict[str, Any]
    labels: list[dict[str, Any]] | None
    confusion: Confusion | None
    f_key: str = "f1"
    #: a score report: the group's calibration bins and precision-recall curve points
    calibration: list[dict[str, Any]] | None = None
    curves: list[dict[str, Any]] | None = None

    @property
    def title(self) -> str:
        """``col = value, ...``, or ``all rows`` when ungrouped."""
        if not self.key:
            return "all rows"
        return ", ".join(f"{k} = {key_text(v)}" for k, v in self.key.items())

    def ranked_labels(self) -> list[dict[str, Any]]:
        """Labels from best to worst F (ties: larger support first, then the label)."""
        rows = list(self.labels or [])
        return sorted(
            rows,
            key=lambda r: (-_score(r.get(self.f_key)), -(r.get("support") or 0), str(r["label"])),
        )

    def _pool(self, n: int, min_support: int) -> tuple[list[dict[str, Any]], int]:
        """The ranked labels eligible for best and worst, and the support they need.

        Labels with support >= ``min_support``; when too few have it to fill
        both lists (small data), every label that occurs at all (support >= 1).
        """
        ranked = self.ranked_labels()
        kept = [r for r in ranked if (r.get("support") or 0) >= min_support]
        if len(kept) > 2 * n or min_support <= 1:
            return kept, min_support
        return [r for r in ranked if (r.get("support") or 0) >= 1], 1

    def best_and_worst(
        self, n: int = 3, min_support: int = MIN_SUPPORT
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The ``n`` best and ``n`` worst labels by F among labels with enough support.

        All eligible labels come back as 'best' when there are few (see :meth:`ranking_note`).
        """
        ranked, _ = self._pool(n, min_support)
        if len(ranked) <= 2 * n:
            return ranked, []
        return ranked[:n], ranked[-n:]

    def ranking_note(self, min_support: int = MIN_SUPPORT, n: int = 3) -> str:
        """How best and worst are chosen, for the reader."""
        ranked, used = self._pool(n, min_support)
        total = len(self.labels or [])
        note = f"ranked by F: {len(ranked)} of {total} labels, those with support >= {used}"
        if used != min_support:
            note += f" (few reach {min_support})"
        return note


def _score(value: Any) -> float:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return -math.inf
    return float(value)


@dataclass
class Report:
    """Everything ``mlsql eval`` shows."""

    source: str
    engine: str
    params: dict[str, Any]
    group_columns: tuple[str, ...]
    summary: list[dict[str, Any]]
    labels: list[dict[str, Any]] | None = None
    confusion: dict[tuple[Any, ...], Confusion] = field(default_factory=dict)
    single_label: bool = False
    notes: list[str] = field(default_factory=list)
    #: rows left out because a label list (or single label) was NULL, and all rows read
    skipped_rows: int | None = None
    total_rows: int | None = None
    min_support: int = MIN_SUPPORT
    #: bootstrap intervals (``--ci``): per group and summary column, estimate, low, high,
    #: std_error (:mod:`mlsql.report.intervals`); None when none were asked for
    intervals: list[dict[str, Any]] | None = None
    #: how the intervals were resampled (resamples, confidence, seed, method)
    resampling: dict[str, Any] | None = None
    #: the predicted column held label scores: ``summary`` holds averaged average precision
    #: and ROC AUC, ``labels`` the per-label thresholds (label_thresholds)
    scores: bool = False
    #: a score report's calibration bins (calibration_table over the pooled scored cells)
    calibration: list[dict[str, Any]] | None = None
    #: a score report's precision-recall curve points (HTML only), per label or micro
    curves: list[dict[str, Any]] | None = None
    #: ``"label"`` (a curve per label) or ``"micro"`` (one curve of the pooled scored cells)
    curve_scope: str | None = None
    #: the weakest slices (``slices=``, ``--slices``): rows of ``mlsql.slices``, the worst
    #: first (:mod:`mlsql.report.slicing`, shown by :mod:`mlsql.report.slice_tables`);
    #: None when none were asked for
    slices: list[dict[str, Any]] | None = None
    #: how the slices were found: candidates, measure, overall value, resamples, confidence
    slicing: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.single_label:  # one label per row: multi-label rows say nothing new
            for row in self.summary:
                for key in [k for k in row if k.startswith(MULTI_LABEL_ONLY)]:
                    del row[key]

    @property
    def f_name(self) -> str:
        """How the F columns are named: F1, or F-beta with its beta."""
        beta = self.params.get("beta", 1.0)
        return "F1" if beta == 1 else f"F{beta:g}"

    @property
    def f_key(self) -> str:
        """The F column: ``f1``, or ``fbeta`` when beta is not 1 (as multilabel_report names it)."""
        return "f1" if self.params.get("beta", 1.0) == 1 else "fbeta"

    def column(self, average: str | None, measure: str) -> str:
        """The summary (or, without ``average``, label) column of ``measure``.

        Examples
        --------
        >>> r = Report("x", "duckdb", {"beta": 2.0}, (), [])
        >>> r.column("micro", "f"), r.column(None, "f"), r.column("macro", "f_of_means")
        ('micro_fbeta', 'fbeta', 'macro_fbeta_of_means')
        """
        name = measure.replace("f", self.f_key, 1) if measure.startswith("f") else measure
        return f"{average}_{name}" if average else name

    def total_columns(self) -> dict[str, str]:
        """Summary column -> display name of the one-number measures (losses, rates)."""
        out = {}
        for key, name in {**TOTALS, **LABEL_PROBLEMS}.items():
            column = self.column("macro", "f_of_means") if key == "macro_f_of_means" else key
            out[column] = name.format(f=self.f_name)
        return out

    def interval(self, key: dict[str, Any], column: str) -> dict[str, Any] | None:
        """The interval row of summary ``column`` in the group ``key``, if there is one.

        Examples
        --------
        >>> r = Report("x", "duckdb", {}, (), [], intervals=[{"measure": "micro_f1", "low": 0.5}])
        >>> r.interval({}, "micro_f1")["low"], r.interval({}, "macro_f1")
        (0.5, None)
        """
        for row in self.intervals or ():
            if row["measure"] == column and all(row[c] == v for c, v in key.items()):
                return row
        return None

    def group_intervals(self, key: dict[str, Any]) -> list[dict[str, Any]]:
        """The interval rows of the group ``key``, in summary column order."""
        return [row for row in self.intervals or () if all(row[c] == v for c, v in key.items())]

    def groups(self) -> Iterator[Group]:
        """Each group in summary order, with its label rows and confusion matrix."""
        for row in self.summary:
            key = {c: row[c] for c in self.group_columns}
            values = tuple(key.values())
            yield Group(
                key,
                row,
                self._of_group(self.labels, values),
                self.confusion.get(values),
                self.f_key,
                calibration=self._of_group(self.calibration, values),
                curves=self._of_group(self.curves, values),
            )

    def _of_group(
        self, rows: list[dict[str, Any]] | None, values: tuple[Any, ...]
    ) -> list[dict[str, Any]] | None:
        if rows is None:
            return None
        return [r for r in rows if tuple(r[c] for c in self.group_columns) == values]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN is kept as a float; the JSON writer turns it into null).

        Confusion matrices are long: the non-zero ``cells`` of each group.
        """
        from mlsql._version import __version__

        out: dict[str, Any] = {
            "mlsql_version": __version__,
            "source": self.source,
            "engine": self.engine,
            "params": {**self.params, "min_support": self.min_support},
            "group_columns": list(self.group_columns),
            "single_label": self.single_label,
            "rows_read": self.total_rows,
            "rows_skipped_null": self.skipped_rows,
            "summary": self.summary,
            # a score report's label rows are label_thresholds' rows
            ("label_thresholds" if self.scores else "labels"): self.labels,
        }
        if self.scores:
            out["scores"] = True
            out["calibration"] = self.calibration
            if self.curves is not None:
                out["precision_recall_curves"] = {"scope": self.curve_scope, "points": self.curves}
        if self.confusion:
            out["confusion_matrices"] = [
                {
                    "group": dict(zip(self.group_columns, key, strict=True)),
                    "classes": list(c.classes),
                    "cells": [{"actual": a, "predicted": p, "count": n} for a, p, n in c.cells],
                }
                for key, c in self.confusion.items()
            ]
        if self.intervals is not None:
            out["params"]["ci"] = self.resampling
            out["intervals"] = self.intervals
        if self.slices is not None:
            out["params"]["slices"] = self.slicing
            out["slices"] = self.slices
        if self.notes:
            out["notes"] = self.notes
        return out

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text: every number at full precision, NaN as ``null``."""
        from mlsql.report.formats import to_json

        return to_json(self)

    def to_csv(self, *, per_label: bool = False) -> str:
        """The summary (one row per group), or with ``per_label`` the label table, as CSV."""
        from mlsql.report.formats import to_csv

        return to_csv(self, per_label=per_label)

    def to_markdown(self, *, digits: int = 4, per_label: bool = False) -> str:
        """The report as Markdown (label text escaped)."""
        from mlsql.report.formats import to_markdown

        return to_markdown(self, digits=digits, per_label=per_label)

    def to_html(self, *, digits: int = 4) -> str:
        """The report as one self-contained HTML page (no scripts or requests)."""
        from mlsql.report.html import to_html

        return to_html(self, digits=digits)

    def _repr_html_(self) -> str:
        """What a notebook shows: the HTML report."""
        return self.to_html()

    def classification_report(self, *, digits: int = 2) -> str:
        """scikit-learn's ``classification_report`` text, per group.

        Labels in label order, then the micro (or, with one label per row,
        ``accuracy``), macro, weighted and (label sets) samples averages.
        """
        from mlsql.report.sklearn_text import classification_report

        return classification_report(self, digits=digits)

    def __str__(self) -> str:
        from mlsql.report.text import to_text

        return to_text(self)
