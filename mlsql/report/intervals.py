"""Bootstrap intervals of a report's measures (``mlsql eval --ci``), on the report's engine.

Each summary column of a report that a bootstrap can resample is mapped to the
measure (and parameters) that computes it; the engine's own ``bootstrap``
(:mod:`mlsql._resample`) resamples them all in one call. Which measures can be
resampled is the bootstrap's rule (:func:`mlsql._resample.measures.resolve`),
not a list kept here: a column whose measure it refuses, or whose resampled
estimate is not the number the report shows, gets no interval and the report
says why.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mlsql._errors import MlsqlError
from mlsql._resample.measures import resolve

if TYPE_CHECKING:
    from mlsql.report.model import Report

#: (measure name, parameters) of a summary column, or None when no measure computes it alone
Entry = tuple[str, dict[str, Any]]
#: how close a resampled estimate must be to the report's value to be the same number
SAME = 1e-9
#: summary columns that count rows and labels (not measures: no interval is expected)
COUNTS = ("n_rows", "total_weight", "n_labels", "clp", "mlp", "wlp")
PER_ROW_WEIGHTS = (
    "--ci resamples measures pooled over rows; macro, weighted and per-label "
    "averages need per-row weights (the bootstrap function resamples macro and "
    "weighted averages per distinct pair of label sets, at a cost that grows with the rows)"
)
NOT_OVER_CLASSES = (
    "bootstrap resamples accuracy, precision, recall, F, balanced accuracy, kappa and MCC "
    "over one label per row, not this measure"
)
OVER_UNIVERSE = "averaged over the label universe given (labels), which bootstrap does not take"
LABEL_SCORES = (
    "bootstrap resamples the score aggregates of one score per row (logloss, auc, "
    "average_precision_score, brier_score_loss, expected_calibration_error), not the averages "
    "over label scores (multilabel_average_precision, multilabel_roc_auc); the thresholds and "
    "calibration tables have no intervals either"
)
#: single-label report columns of averaged class measures, and their measure names
CLASS_AVERAGED = {
    "precision": "precision_score",
    "recall": "recall_score",
    "f1": "f1_score",
    "fbeta": "fbeta_score",
}


@dataclass(frozen=True)
class Resampling:
    """How ``--ci`` resamples: resamples, confidence of the interval, seed."""

    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments of every engine's ``bootstrap``."""
        return {
            "n_resamples": self.n_resamples,
            "confidence": self.confidence,
            "seed": self.seed,
        }

    def shown(self) -> dict[str, Any]:
        """As a report's parameters show them."""
        return {**self.kwargs(), "method": "Poisson bootstrap, percentile interval"}


def _label_set_entry(column: str, params: dict[str, Any]) -> Entry | None:
    """The label-list measure of a summary column (``micro_f1``, ``hamming_loss``...)."""
    zd = {"zero_division": params["zero_division"]}
    average, _, measure = column.partition("_")
    if column in ("subset_accuracy", "zero_one_loss"):
        return column, {}
    if average in ("micro", "samples") and measure in ("precision", "recall", "f1", "jaccard"):
        return column, zd
    if average in ("micro", "samples") and measure == "fbeta":
        return column, {"beta": params["beta"], **zd}
    return None


def _class_entry(column: str, params: dict[str, Any]) -> Entry | None:
    """The one-label-per-row measure of a summary column (over classes)."""
    if column in ("accuracy", "balanced_accuracy_score", "cohen_kappa_score", "matthews_corrcoef"):
        return column, {}
    average, _, measure = column.partition("_")
    name = CLASS_AVERAGED.get(measure)
    if name is None or average not in ("micro", "macro", "weighted"):
        return None
    if average != "micro" and params.get("labels") is not None:
        return None  # the classes averaged over are the label universe, not those seen
    extra = {"beta": params["beta"]} if measure == "fbeta" else {}
    return name, {"average": average, "zero_division": params["zero_division"], **extra}


def _score_entry(column: str, params: dict[str, Any]) -> Entry | None:
    """The label-score aggregate of a score report's summary column (``macro_roc_auc``...)."""
    from mlsql.report.score_engines import summary_columns

    for name, func, average in summary_columns():
        if name == column:
            return func, {"average": average, "zero_division": params["zero_division"]}
    return None


def entries(report: Report) -> tuple[dict[str, Entry], dict[str, str]]:
    """(summary column -> measure to resample, column -> why it gets no interval).

    Hamming loss is left to :func:`add_intervals`: its ``n_labels`` is each group's.
    """
    columns = list(dict.fromkeys(c for row in report.summary for c in row))
    measure_columns = [c for c in columns if c not in (*report.group_columns, *COUNTS)]
    entry: Callable[[str, dict[str, Any]], Entry | None] = (
        _score_entry if report.scores else _class_entry if report.single_label else _label_set_entry
    )
    chosen, refused = {}, {}
    for column in measure_columns:
        if column == "hamming_loss" and not report.single_label:
            continue
        found = entry(column, report.params)
        if found is None:
            refused[column] = _why_not(column, report)
            continue
        try:
            resolve([found], "bootstrap")
        except (MlsqlError, TypeError, ValueError) as exc:
            refused[column] = LABEL_SCORES if report.scores else str(exc)
            continue
        chosen[column] = found
    return chosen, refused


def _why_not(column: str, report: Report) -> str:
    """Why no measure of the bootstrap computes the summary ``column`` of ``report``."""
    if report.scores:
        return LABEL_SCORES
    if not report.single_label:
        return PER_ROW_WEIGHTS
    if column.startswith(("macro_", "weighted_")) and not column.endswith(
        ("_jaccard", "_of_means")
    ):
        return OVER_UNIVERSE
    return NOT_OVER_CLASSES


def _key(row: dict[str, Any], by: Sequence[str]) -> tuple[Any, ...]:
    return tuple(row[c] for c in by)


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=SAME, abs_tol=SAME)


#: the values of a bootstrap row that scale with its measure
SCALED = ("estimate", "low", "high", "std_error")


def _scaled(value: Any, factor: float) -> Any:
    """``value`` times ``factor`` (NULL stays NULL)."""
    return None if value is None else value * factor


def add_intervals(
    report: Report,
    engine: Any,
    frame: Any,
    actual: str,
    predicted: str,
    resampling: Resampling,
    sample_weight: str | None = None,
) -> Report:
    """``report`` with ``intervals`` (one row per group and measure) and notes on those left out.

    ``engine`` and ``frame`` are those the report was built from (:mod:`mlsql.report.engines`);
    ``sample_weight`` the frame's column of row weights the report was weighted by, if any.
    """
    weight = {} if sample_weight is None else {"sample_weight": sample_weight}
    by = report.group_columns
    chosen, refused = entries(report)
    # each call: the measures, and per group kept the factor its values are scaled by (None:
    # every group, unscaled)
    calls: list[tuple[dict[str, Entry], dict[tuple[Any, ...], float] | None]] = []
    if chosen:
        calls.append((chosen, None))
    if "hamming_loss" in {c for row in report.summary for c in row} and not report.single_label:
        # each group's Hamming loss is over its own labels, L: resampled once over the most
        # labels of any group, M (no row holds more), and scaled by M / L, as the loss's
        # (fp + fn) / (rows x labels) is; a group without labels has no loss to resample
        universes = {_key(row, by): row.get("n_labels") or 0 for row in report.summary}
        most = max(universes.values(), default=0)
        if most:
            scale = {key: most / n for key, n in universes.items() if n}
            calls.append(({"hamming_loss": ("hamming_loss", {"n_labels": most})}, scale))
    summary = {_key(row, by): row for row in report.summary}
    intervals: list[dict[str, Any]] = []
    differs: set[str] = set()
    for wanted, scales in calls:
        labels = [c.label for c in resolve(list(wanted.values()), "bootstrap")]
        column_of = dict(zip(labels, wanted, strict=True))
        rows = engine.resample(
            "bootstrap",
            frame,
            actual,
            predicted,
            single=report.single_label,
            measures=list(wanted.values()),
            by=list(by) or None,
            **resampling.kwargs(),
            **weight,
        )
        for row in rows:
            key = _key(row, by)
            if scales is not None:
                if key not in scales:
                    continue
                row = {**row, **{k: _scaled(row[k], scales[key]) for k in SCALED}}
            column = column_of[row["measure"]]
            shown = summary.get(key, {}).get(column)
            if not _same(row["estimate"], shown):
                differs.add(column)
                continue
            intervals.append(
                {
                    **dict(zip(by, key, strict=True)),
                    "measure": column,
                    "estimate": row["estimate"],
                    "low": row["low"],
                    "high": row["high"],
                    "std_error": row["std_error"],
                }
            )
    report.intervals = [i for i in intervals if i["measure"] not in differs]
    report.resampling = resampling.shown()
    report.notes += _notes(refused, differs)
    return report


def _notes(refused: dict[str, str], differs: set[str]) -> list[str]:
    """Why some measures are shown without an interval (one note per reason)."""
    reasons: dict[str, list[str]] = {}
    for column, reason in refused.items():
        reasons.setdefault(reason, []).append(column)
    notes = [f"no interval for {', '.join(cols)}: {why}" for why, cols in reasons.items()]
    if differs:
        notes.append(
            f"no interval for {', '.join(sorted(differs))}: the resampled measure does not "
            "reproduce the number shown"
        )
    return notes
