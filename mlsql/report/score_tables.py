"""The tables of a score report, as headers and raw cells: every format shows these.

A score report (the predicted column held label scores) shows per group the
averaged average precision and ROC AUC, the per-label thresholds and the
calibration bins; the terminal, Markdown and HTML formats each draw the same
tables from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mlsql.report.numbers import fmt
from mlsql.report.score_engines import SCORE_AVERAGES

if TYPE_CHECKING:
    from mlsql.report.model import Group, Report

Table = tuple[list[str], list[list[Any]]]

#: equal-width calibration bins on [0, 1] (those of expected_calibration_error)
CALIBRATION_BINS = 10
#: at most this many labels (in every group) get a precision-recall curve each; beyond, micro
MAX_CURVE_LABELS = 10

POOLED_NOTE = (
    "calibration pools the scored (row, label) cells of every label; a label a row "
    "does not score has no probability there and is left out"
)

#: label rows a summary shows (most frequent first); --per-label shows all
SHOWN_LABELS = 10
MEASURE_NAMES = {"average_precision": "average precision", "roc_auc": "ROC AUC"}


def headline(report: Report, group: Group) -> list[tuple[str, Any]]:
    """(name, value) of a group's headline numbers."""
    s = group.summary
    return [
        ("rows", s.get("n_rows")),
        ("labels", s.get("n_labels")),
        ("micro average precision", s.get("micro_average_precision")),
        ("macro ROC AUC", s.get("macro_roc_auc")),
    ]


def averages(report: Report, group: Group) -> Table:
    """Rows average precision and ROC AUC; columns micro, macro, weighted, samples."""
    s = group.summary
    rows = [
        [name, *(s.get(f"{a}_{key}") for a in SCORE_AVERAGES)]
        for key, name in MEASURE_NAMES.items()
    ]
    return ["", *SCORE_AVERAGES], rows


THRESHOLD_COLUMNS = ("label", "support", "threshold", "precision", "recall", "fbeta")


def by_support(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Label rows, most frequent first (then by label)."""
    return sorted(rows, key=lambda r: (-(r.get("support") or 0), str(r["label"])))


def thresholds(report: Report, group: Group, *, limit: int | None = SHOWN_LABELS) -> Table:
    """Per label the threshold maximising F and the precision, recall and F at it."""
    rows = by_support(group.labels or [])
    if limit is not None:
        rows = rows[:limit]
    header = [report.f_name if c == "fbeta" else c for c in THRESHOLD_COLUMNS]
    return header, [[r.get(c) for c in THRESHOLD_COLUMNS] for r in rows]


#: label rows the HTML page shows at each end (most and least frequent); the rest are counted
PAGE_LABELS = 25


def ends(rows: list[Any], n: int = PAGE_LABELS) -> tuple[list[Any], list[Any], int]:
    """The first ``n`` and the last ``n`` of ``rows``, and how many lie between.

    Examples
    --------
    >>> ends(list(range(7)), 2)
    ([0, 1], [5, 6], 3)
    >>> ends([1, 2, 3], 2)
    ([1, 2, 3], [], 0)
    """
    if len(rows) <= 2 * n:
        return rows, [], 0
    return rows[:n], rows[-n:], len(rows) - 2 * n


def left_out_note(left_out: int, total: int) -> str:
    """Where the labels a page leaves out are (``left_out`` of ``total``)."""
    return (
        f"{left_out} of {total} labels left out between the most and the least frequent; "
        "the whole table: mlsql eval ... --per-label --format csv, or Report.labels in Python"
    )


def thresholds_title(report: Report, group: Group, *, limit: int | None = SHOWN_LABELS) -> str:
    """What the thresholds table shows, and the micro F every label's threshold gives."""
    rows = group.labels or []
    micro = rows[0].get("micro_fbeta") if rows else None
    shown = (
        f"the {limit} most frequent of {len(rows)} labels"
        if limit is not None and len(rows) > limit
        else f"{len(rows)} labels"
    )
    return (
        f"per-label thresholds maximising {report.f_name} ({shown}); micro {report.f_name} "
        f"with every label at its own threshold: {fmt(micro)}"
    )


CALIBRATION_COLUMNS = ("bin", "low", "high", "count", "mean_score", "observed_rate")


def calibration(group: Group) -> Table:
    """The non-empty calibration bins: edges, count, mean score and observed rate."""
    rows = [[r.get(c) for c in CALIBRATION_COLUMNS] for r in group.calibration or []]
    return [c.replace("_", " ") for c in CALIBRATION_COLUMNS], rows
