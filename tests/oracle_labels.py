"""A plain-Python reference for label-based measures and the multi-label report.

Written from the definitions (DESIGN.md section 1, the issue's semantics),
with exact fractions, independently of mlsql's code: rows as sets (NULL lists
skipped, NULL elements and duplicates ignored), each row intersected with the
universe when one is given, one confusion table per label.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from tests import oracle
from tests.oracle import NAN, Row


def rows_in_universe(rows: list[Row], labels: list[Any] | None) -> list[tuple[set, set]]:
    """Known rows as sets, intersected with ``labels`` when given."""
    out = oracle.known(rows)
    if labels is None:
        return out
    u = {x for x in labels if x is not None}
    return [(a & u, p & u) for a, p in out]


def universe(rows: list[tuple[set, set]], labels: list[Any] | None) -> list[Any]:
    """The given labels (distinct, no NULLs), else every label seen, sorted."""
    if labels is not None:
        return sorted({x for x in labels if x is not None})
    return sorted(set().union(*(a | p for a, p in rows)) if rows else set())


def per_label(rows: list[Row], labels: list[Any] | None = None) -> tuple[int, dict[Any, dict]]:
    """(known rows, {label: {tp, fp, fn, tn, support}})."""
    ks = rows_in_universe(rows, labels)
    n = len(ks)
    out = {}
    for lab in universe(ks, labels):
        tp = sum(1 for a, p in ks if lab in a and lab in p)
        fp = sum(1 for a, p in ks if lab not in a and lab in p)
        fn = sum(1 for a, p in ks if lab in a and lab not in p)
        out[lab] = {"tp": tp, "fp": fp, "fn": fn, "tn": n - tp - fp - fn, "support": tp + fn}
    return n, out


def _ratios(c: dict, beta: Any, zd: Any) -> dict[str, Any]:
    tp, fp, fn = c["tp"], c["fp"], c["fn"]
    return {
        "precision": oracle.precision(tp, fp, fn, zd),
        "recall": oracle.recall(tp, fp, fn, zd),
        "f1": oracle.fbeta(tp, fp, fn, 1, zd),
        "fbeta": oracle.fbeta(tp, fp, fn, 1 if beta is None else beta, zd),
        "jaccard": oracle.jaccard(tp, fp, fn, zd),
    }


def label_metrics(
    rows: list[Row], labels: list[Any] | None = None, beta: Any = None, zd: Any = 0
) -> list[dict[str, Any]]:
    """One dict per label, sorted by label (``fbeta`` only with beta)."""
    n, counts = per_label(rows, labels)
    out = []
    for lab, c in counts.items():
        row = {"label": lab, **c}
        ratios = _ratios(c, beta, zd)
        ratios["accuracy"] = Fraction(c["tp"] + c["tn"], n) if n else None
        if n == 0:
            ratios = dict.fromkeys(ratios)
        if beta is None:
            del ratios["fbeta"]
        out.append({**row, **ratios})
    return out


def _undefined(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def weighted_mean(values: list[Any], weights: list[int], zd: Any, nothing: bool) -> Any:
    """Σ w v / Σ w over defined values; NaN/None if all undefined; zd where Σ w = 0."""
    if not values:
        return None
    kept = [(v, w) for v, w in zip(values, weights, strict=True) if not _undefined(v)]
    if not kept:
        return NAN if any(v is not None for v in values) else None
    den = sum(w for _, w in kept)
    if den == 0:
        return oracle.undefined(zd, nothing)
    return sum((v * w for v, w in kept), Fraction(0)) / den


def fbeta_of_means(p: Any, r: Any, beta: Any) -> Any:
    if p is None or r is None:
        return None
    if _undefined(p) or _undefined(r):
        return NAN
    b2 = Fraction(beta) ** 2
    den = b2 * p + r
    return Fraction(0) if den == 0 else (1 + b2) * p * r / den


def report(
    rows: list[Row], labels: list[Any] | None = None, beta: Any = None, zd: Any = 0
) -> dict[str, Any]:
    """The multilabel_report row of ``rows`` (``*_fbeta*`` columns instead of ``*_f1*`` with beta)."""
    ks = rows_in_universe(rows, labels)
    n, counts = per_label(rows, labels)
    n_labels = len(counts)
    out: dict[str, Any] = {"n_rows": n, "n_labels": n_labels}
    f = "fbeta" if beta is not None else "f1"
    b = 1 if beta is None else beta
    names = ("precision", "recall", f, "jaccard")
    if n == 0:
        for average in ("micro", "macro", "weighted", "samples"):
            out.update({f"{average}_{m}": None for m in names})
        out[f"macro_{f}_of_means"] = None
        keys = ("hamming_loss", "subset_accuracy", "zero_one_loss", "label_accuracy_micro")
        out.update(dict.fromkeys((*keys, "label_accuracy_macro", "clp", "mlp", "wlp")))
        return out
    per = {lab: _ratios(c, beta, zd) for lab, c in counts.items()}
    # micro: pooled over rows (and labels)
    tp = sum(len(a & p) for a, p in ks)
    fp = sum(len(p - a) for a, p in ks)
    fn = sum(len(a - p) for a, p in ks)
    pooled = {
        "precision": oracle.precision(tp, fp, fn, zd),
        "recall": oracle.recall(tp, fp, fn, zd),
        f: oracle.fbeta(tp, fp, fn, b, zd),
        "jaccard": oracle.jaccard(tp, fp, fn, zd),
    }
    nothing = tp + fp + fn == 0
    for m in names:
        key = "fbeta" if m == f else m
        out[f"micro_{m}"] = pooled[m]
        values = [per[lab][key] for lab in counts]
        weights = [c["support"] for c in counts.values()]
        out[f"macro_{m}"] = oracle.mean(values)
        out[f"weighted_{m}"] = weighted_mean(values, weights, zd, nothing)
        row_values = []
        for a, p in ks:
            c = oracle.counts(a, p)
            row_values.append(
                {
                    "precision": oracle.precision(*c, zd),
                    "recall": oracle.recall(*c, zd),
                    f: oracle.fbeta(*c, b, zd),
                    "jaccard": oracle.jaccard(*c, zd),
                }[m]
            )
        out[f"samples_{m}"] = oracle.mean(row_values)
    out[f"macro_{f}_of_means"] = fbeta_of_means(out["macro_precision"], out["macro_recall"], b)
    wrong = sum(c["fp"] + c["fn"] for c in counts.values())
    out["hamming_loss"] = Fraction(wrong, n * n_labels) if n_labels else None
    exact = Fraction(sum(a == p for a, p in ks), n)
    out["subset_accuracy"] = exact
    out["zero_one_loss"] = 1 - exact
    out["label_accuracy_micro"] = None if n_labels == 0 else 1 - out["hamming_loss"]
    out["label_accuracy_macro"] = oracle.mean(
        [Fraction(c["tp"] + c["tn"], n) for c in counts.values()]
    )

    def share(condition: Any) -> Any:
        if not n_labels:
            return None
        return Fraction(sum(1 for c in counts.values() if condition(c)), n_labels)

    out["clp"] = share(lambda c: c["tn"] + c["fn"] == 0)
    out["mlp"] = share(lambda c: c["tp"] + c["fp"] == 0)
    out["wlp"] = share(lambda c: c["tp"] == 0)
    return out
