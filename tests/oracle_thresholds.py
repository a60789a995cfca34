"""Plain-Python references of calibration_table and label_thresholds, by brute force.

Written from the definitions in ``mlsql/measures/thresholds.py``, with exact
fractions and no engine code: every candidate threshold (each distinct score
of a label, and +infinity) is tried and its counts recounted from the rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction
from typing import Any

INF = float("inf")


def calibration_bin(p: float, n_bins: int) -> int:
    """min(floor(p · n_bins), n_bins - 1) in double precision (expected_calibration_error's bin)."""
    return min(math.floor(p * n_bins), n_bins - 1)


def calibration_table(
    rows: Iterable[tuple[Any, Any]], n_bins: int, weights: Iterable[Any] | None = None
) -> list[dict[str, Any]]:
    """One dict per non-empty bin of the (actual, prob) rows with neither side None.

    ``weights`` (one per row): ``count`` is a bin's total weight, ``mean_score``
    and ``observed_rate`` weighted means; a row weighing 0 or None is left out.
    """
    weighted = weights is not None
    ws = list(weights) if weights is not None else None
    bins: dict[int, list[tuple[int, float, float]]] = {}
    for i, (y, p) in enumerate(rows):
        w = 1.0 if ws is None else ws[i]
        if y is None or p is None or w is None or w == 0:
            continue
        bins.setdefault(calibration_bin(p, n_bins), []).append((int(y), p, w))
    out = []
    for b in sorted(bins):
        members = bins[b]
        n = math.fsum(w for _, _, w in members) if weighted else len(members)
        out.append(
            {
                "bin": b,
                "low": b / n_bins,
                "high": (b + 1) / n_bins,
                "count": n,
                "mean_score": math.fsum(p * w for _, p, w in members) / n,
                "observed_rate": math.fsum(y * w for y, _, w in members) / n,
            }
        )
    return out


def expected_calibration_error(table: list[dict[str, Any]]) -> float | None:
    """Σ count / n |mean_score - observed_rate| over a calibration table's bins."""
    n = sum(r["count"] for r in table)
    if not n:
        return None
    return math.fsum(r["count"] / n * abs(r["mean_score"] - r["observed_rate"]) for r in table)


def fbeta(tp: Any, fp: Any, fn: Any, beta: float) -> Fraction | None:
    """Exact F-beta of counts; None where tp + fp + fn = 0."""
    b2 = Fraction(beta) ** 2
    den = (1 + b2) * tp + b2 * fn + fp
    return None if den == 0 else (1 + b2) * tp / den


def entries(scores: Any) -> dict[Any, float]:
    """A row's scores as label -> score: a dict as is, a list of (label, score) keeping a
    label's first entry; None labels and None scores dropped."""
    items = scores.items() if isinstance(scores, dict) else scores
    out: dict[Any, float] = {}
    seen = set()
    for label, score in items:
        if label is None or label in seen:
            continue
        seen.add(label)
        if score is not None:
            out[label] = score
    return out


def undefined(zero_division: Any) -> Any:
    """The value of a ratio with nothing to score (tp + fp + fn = 0)."""
    if zero_division == "diagnose":
        return 1.0
    if zero_division == "ignore":
        return None
    if isinstance(zero_division, float) and math.isnan(zero_division):
        return math.nan
    return float(zero_division)


def ratio(num: Any, den: Any, zero_division: Any, nothing: bool) -> Any:
    if den:
        return float(Fraction(num) / Fraction(den))
    if zero_division == "diagnose":
        return 1.0 if nothing else 0.0
    return undefined(zero_division)


def label_thresholds(
    rows: Iterable[tuple[Any, Any]],
    *,
    beta: float = 1.0,
    zero_division: Any = 0,
    n_bins: int | None = None,
    weights: Iterable[Any] | None = None,
) -> list[dict[str, Any]]:
    """One dict per label of the (actual, scores) rows with neither side None, by label.

    ``weights`` (one per row): every count is a sum of the rows' weights (exact
    fractions of the floats), a row weighing 0 or None left out; counts are then floats.
    """
    rows = list(rows)
    ws = [1] * len(rows) if weights is None else list(weights)
    known = [
        ({x for x in a if x is not None}, entries(s), Fraction(w))
        for (a, s), w in zip(rows, ws, strict=True)
        if a is not None and s is not None and w is not None and w != 0
    ]
    if n_bins is not None:  # a score stands for its bin's lower edge
        known = [
            (a, {k: calibration_bin(v, n_bins) / n_bins for k, v in s.items()}, w)
            for a, s, w in known
        ]
    labels = sorted({x for a, s, _ in known for x in (*a, *s)})
    out = []
    pooled = [Fraction(0)] * 3  # tp, fp, fn over the labels, exact
    for label in labels:
        support = sum(w for a, _, w in known if label in a)
        best = None
        for t in sorted({s[label] for _, s, _ in known if label in s} | {INF}):
            tp = sum(w for a, s, w in known if label in a and s.get(label, -INF) >= t)
            fp = sum(w for a, s, w in known if label not in a and s.get(label, -INF) >= t)
            f = Fraction(0) if tp == 0 else fbeta(tp, fp, support - tp, beta)
            if best is None or f >= best[0]:  # ascending thresholds: a tie keeps the highest
                best = (f, t, tp, fp)
        _, t, tp, fp = best  # type: ignore[misc]
        if tp == 0:
            t, fp = INF, 0
        fn = support - tp
        nothing = tp + fp + fn == 0
        f = fbeta(tp, fp, fn, beta)
        pooled = [pooled[0] + tp, pooled[1] + fp, pooled[2] + fn]
        count = int if weights is None else float
        out.append(
            {
                "label": label,
                "threshold": t,
                "tp": count(tp),
                "fp": count(fp),
                "fn": count(fn),
                "support": count(support),
                "precision": ratio(tp, tp + fp, zero_division, nothing),
                "recall": ratio(tp, tp + fn, zero_division, nothing),
                "fbeta": undefined(zero_division) if f is None else float(f),
            }
        )
    micro = fbeta(pooled[0], pooled[1], pooled[2], beta)
    for r in out:
        r["micro_fbeta"] = undefined(zero_division) if micro is None else float(micro)
    return out
