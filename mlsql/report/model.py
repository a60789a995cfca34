"""What a report holds, whichever engine computed it and whichever format shows it."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

#: the averages shown side by side, and the measures shown for each ("f" is F1 or F-beta)
AVERAGES = ("micro", "macro", "weighted", "samples")
MEASURES = ("precision", "recall", "f", "jaccard")
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


@dataclass(frozen=True)
class Confusion:
    """A confusion matrix: ``matrix[i][j]`` rows whose actual class is ``classes[i]``
    and predicted class is ``classes[j]``."""

    classes: tuple[Any, ...]
    matrix: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Group:
    """One group's numbers: its key, summary row, label rows and confusion matrix."""

    key: dict[str, Any]
    summary: dict[str, Any]
    labels: list[dict[str, Any]] | None
    confusion: Confusion | None
    f_key: str = "f1"

    @property
    def title(self) -> str:
        """``col = value, ...``, or ``all rows`` when ungrouped."""
        if not self.key:
            return "all rows"
        return ", ".join(f"{k} = {'NULL' if v is None else v}" for k, v in self.key.items())

    def ranked_labels(self) -> list[dict[str, Any]]:
        """Labels from best to worst F (ties: larger support first, then the label)."""
        rows = list(self.labels or [])
        return sorted(
            rows,
            key=lambda r: (-_score(r.get(self.f_key)), -(r.get("support") or 0), str(r["label"])),
        )

    def best_and_worst(self, n: int = 3) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The ``n`` best and ``n`` worst labels (all labels as 'best' when there are few)."""
        ranked = self.ranked_labels()
        if len(ranked) <= 2 * n:
            return ranked, []
        return ranked[:n], ranked[-n:]


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

    def groups(self) -> Iterator[Group]:
        """Each group in summary order, with its label rows and confusion matrix."""
        for row in self.summary:
            key = {c: row[c] for c in self.group_columns}
            values = tuple(key.values())
            labels = None
            if self.labels is not None:
                labels = [
                    r for r in self.labels if tuple(r[c] for c in self.group_columns) == values
                ]
            yield Group(key, row, labels, self.confusion.get(values), self.f_key)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN is kept as a float; the JSON writer turns it into null)."""
        out: dict[str, Any] = {
            "source": self.source,
            "engine": self.engine,
            "params": self.params,
            "group_columns": list(self.group_columns),
            "single_label": self.single_label,
            "summary": self.summary,
            "labels": self.labels,
        }
        if self.confusion:
            out["confusion_matrices"] = [
                {
                    "group": dict(zip(self.group_columns, key, strict=True)),
                    "classes": list(c.classes),
                    "matrix": [list(r) for r in c.matrix],
                }
                for key, c in self.confusion.items()
            ]
        if self.notes:
            out["notes"] = self.notes
        return out
