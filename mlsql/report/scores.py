"""Build the report of label scores: how good the scores are, before any threshold.

When the predicted column holds label scores (a map label -> score or a list
of {label, score} structs), :func:`build_scores` asks the engine
(:mod:`mlsql.report.score_engines`) for averaged average precision and ROC
AUC per group, the per-label thresholds, the calibration table (when every
score is a probability in [0, 1]) and, for the HTML page, precision-recall
curves; the numbers are the engine functions', put in a fixed order.
"""

from __future__ import annotations

from typing import Any

from mlsql.report.build import Settings, integral, sorted_rows
from mlsql.report.model import Report
from mlsql.report.score_tables import CALIBRATION_BINS, MAX_CURVE_LABELS, POOLED_NOTE


def _labels_per_group(rows: list[dict[str, Any]], by: tuple[str, ...]) -> int:
    counts: dict[tuple[Any, ...], int] = {}
    for r in rows:
        key = tuple(r[c] for c in by)
        counts[key] = counts.get(key, 0) + 1
    return max(counts.values(), default=0)


def _with_labels(row: dict[str, Any], n_labels: int) -> dict[str, Any]:
    """``row`` with ``n_labels`` after its ``n_rows``."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        out[key] = value
        if key == "n_rows":
            out["n_labels"] = n_labels
    return out


def micro_ap_curve(
    curve: list[dict[str, Any]],
    scored: list[dict[str, Any]],
    thresholds: list[dict[str, Any]],
    summary: list[dict[str, Any]],
    by: tuple[str, ...],
    weighted: bool,
) -> list[dict[str, Any]]:
    """The micro precision-recall curve whose step area is the micro average precision.

    ``curve`` is that of the scored (row, label) cells pooled; but micro
    average precision counts every positive, scored or not, and puts the
    unscored cells in one last tie below every score. So each point's recall
    is scaled by scored positives / all positives (its precision stays: the
    unscored cells are below it), and a last point at threshold -inf reaches
    recall 1 at precision positives / cells, the share of positives among
    every (row, label) cell of the group. All positives are the labels'
    supports summed; cells are the rows (their total weight) times the labels.
    """
    out: list[dict[str, Any]] = []
    own: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in curve:
        own.setdefault(tuple(row[c] for c in by), []).append(row)
    found = {tuple(r[c] for c in by): r["positives"] or 0 for r in scored}
    positives: dict[tuple[Any, ...], float] = {}
    for r in thresholds:
        key = tuple(r[c] for c in by)
        positives[key] = positives.get(key, 0) + (r.get("support") or 0)
    for group in summary:
        key = tuple(group[c] for c in by)
        points = own.get(key, [])
        total = positives.get(key, 0)
        if not points or not total:
            out += points
            continue
        share = found.get(key, 0) / total
        out += [{**p, "recall": p["recall"] * share} for p in points]
        if share < 1:
            rows = group.get("total_weight") if weighted else group.get("n_rows")
            cells = (rows or 0) * (group.get("n_labels") or 0)
            last = {c: group[c] for c in by}
            precision = total / cells if cells else None
            out.append({**last, "threshold": float("-inf"), "precision": precision, "recall": 1.0})
    return out


def build_scores(
    engine: Any,
    frames: Any,
    frame: Any,
    actual: str,
    scores: str,
    settings: Settings,
    *,
    source: str,
    params: dict[str, Any] | None = None,
    curves: bool = False,
) -> Report:
    """The score report of ``frame`` (group columns, a label-list and a score column).

    ``engine`` answers the score questions (:mod:`mlsql.report.score_engines`),
    ``frames`` the row counts (:mod:`mlsql.report.engines`); ``curves`` asks for
    the precision-recall curves the HTML page draws. With ``settings.sample_weight`` every
    number is weighted by that column (the summary adds ``total_weight``).
    """
    by = settings.by
    weight = settings.sample_weight
    weighted = weight is not None
    try:
        skipped, total = frames.row_counts(frame, actual, scores)
        summary = engine.summary(frame, actual, scores, by, settings.zero_division, weight)
        summary = sorted_rows(summary, by)
        thresholds = engine.thresholds(
            frame, actual, scores, by, settings.beta, settings.zero_division, weight
        )
        thresholds = sorted_rows(
            [{**r, "label": integral(r["label"])} for r in thresholds], (*by, "label")
        )
        n_labels = {tuple(r[c] for c in by): 0 for r in summary}
        for r in thresholds:
            key = tuple(r[c] for c in by)
            n_labels[key] = n_labels.get(key, 0) + 1
        summary = [_with_labels(r, n_labels.get(tuple(r[c] for c in by), 0)) for r in summary]
        notes: list[str] = []
        cells = engine.cells(frame, actual, scores, by, weight)
        low, high = engine.score_range(cells)
        calibration = None
        if low is not None and low >= 0 and high <= 1:
            calibration = sorted_rows(
                engine.calibration(cells, by, CALIBRATION_BINS, weighted), (*by, "bin")
            )
            notes.append(POOLED_NOTE)
        elif low is not None:
            notes.append(
                f"scores range from {low:g} to {high:g}, not probabilities in [0, 1]: "
                "no calibration table"
            )
        curve_rows, curve_scope = None, None
        if curves:
            many = _labels_per_group(thresholds, by)
            if many <= MAX_CURVE_LABELS:
                curve_scope = "label"
                found = engine.label_curves(frame, actual, scores, by, weight)
                curve_rows = [{**r, "label": integral(r["label"])} for r in found]
            else:
                curve_scope = "micro"
                curve_rows = micro_ap_curve(
                    engine.micro_curve(cells, by, weighted),
                    engine.scored_positives(cells, by, weighted),
                    thresholds,
                    summary,
                    by,
                    weighted,
                )
    finally:
        engine.close()
    if skipped:
        shown = params or {}
        names = (shown.get("actual", actual), shown.get("predicted", scores))
        notes.append(
            f"{skipped} of {total} rows have a NULL {names[0]!r} or {names[1]!r} and are left "
            "out as unknown (an empty score map or list scores nothing)"
        )
    return Report(
        source=source,
        engine=engine.name,
        params=params if params is not None else settings.params(actual, scores),
        group_columns=by,
        summary=summary,
        labels=thresholds,
        notes=notes,
        skipped_rows=skipped,
        total_rows=total,
        min_support=settings.min_support,
        scores=True,
        calibration=calibration,
        curves=curve_rows,
        curve_scope=curve_scope,
    )
