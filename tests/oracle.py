"""A plain-Python reference for the multi-label measures, with exact fractions.

Written from the definitions in DESIGN.md, independently of mlsql's code:
sets per row, NULL lists skipped, NULL elements ignored.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

Row = tuple[Any, Any]
NAN = float("nan")


def as_set(labels: list[Any] | None) -> set[Any] | None:
    """A label list as a set without NULL elements (None stays None)."""
    return None if labels is None else {x for x in labels if x is not None}


def known(rows: list[Row]) -> list[tuple[set[Any], set[Any]]]:
    """The rows where neither list is NULL, as sets."""
    out = []
    for a, p in rows:
        sa, sp = as_set(a), as_set(p)
        if sa is not None and sp is not None:
            out.append((sa, sp))
    return out


def undefined(zd: Any, nothing: bool) -> Any:
    """The value of an undefined ratio under zero_division ``zd`` (None = 'ignore')."""
    if zd == "diagnose":
        return Fraction(1) if nothing else Fraction(0)
    if zd == "ignore":
        return None
    if isinstance(zd, float) and math.isnan(zd):
        return NAN
    return Fraction(zd)


def ratio(num: int, den: int, zd: Any, nothing: bool) -> Any:
    return undefined(zd, nothing) if den == 0 else Fraction(num, den)


def counts(a: set[Any], p: set[Any]) -> tuple[int, int, int]:
    return len(a & p), len(p - a), len(a - p)


def precision(tp: int, fp: int, fn: int, zd: Any = 0) -> Any:
    return ratio(tp, tp + fp, zd, tp + fp + fn == 0)


def recall(tp: int, fp: int, fn: int, zd: Any = 0) -> Any:
    return ratio(tp, tp + fn, zd, tp + fp + fn == 0)


def fbeta(tp: int, fp: int, fn: int, beta: Any = 1, zd: Any = 0) -> Any:
    b2 = Fraction(beta) ** 2
    num = (1 + b2) * tp
    den = num + b2 * fn + fp
    return undefined(zd, tp + fp + fn == 0) if den == 0 else num / den


def jaccard(tp: int, fp: int, fn: int, zd: Any = 0) -> Any:
    return ratio(tp, tp + fp + fn, zd, tp + fp + fn == 0)


FORMULAS = {
    "precision": precision,
    "recall": recall,
    "fbeta": fbeta,
    "f1": fbeta,
    "jaccard": jaccard,
}


def mean(values: list[Any]) -> Any:
    """Mean leaving out None and NaN; NaN if only NaN were there; None if nothing."""
    if not values:
        return None
    kept = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not kept:
        return NAN if any(v is not None for v in values) else None
    return sum(kept, Fraction(0)) / len(kept)


def micro(rows: list[Row], name: str, **params: Any) -> Any:
    ks = known(rows)
    if not ks:
        return None
    tp = sum(counts(a, p)[0] for a, p in ks)
    fp = sum(counts(a, p)[1] for a, p in ks)
    fn = sum(counts(a, p)[2] for a, p in ks)
    return FORMULAS[name](tp, fp, fn, **params)


def samples(rows: list[Row], name: str, **params: Any) -> Any:
    ks = known(rows)
    return mean([FORMULAS[name](*counts(a, p), **params) for a, p in ks])


def subset_accuracy(rows: list[Row]) -> Any:
    ks = known(rows)
    return Fraction(sum(a == p for a, p in ks), len(ks)) if ks else None


def hamming_loss(rows: list[Row], n_labels: int) -> Any:
    ks = known(rows)
    if not ks:
        return None
    wrong = sum(len(a ^ p) for a, p in ks)
    return Fraction(wrong, len(ks) * n_labels)


def multilabel_counts(rows: list[Row]) -> dict[str, int]:
    ks = known(rows)
    return {
        "n_rows": len(ks),
        "tp": sum(len(a & p) for a, p in ks),
        "fp": sum(len(p - a) for a, p in ks),
        "fn": sum(len(a - p) for a, p in ks),
        "n_actual": sum(len(a) for a, _ in ks),
        "n_predicted": sum(len(p) for _, p in ks),
        "n_exact": sum(a == p for a, p in ks),
    }


def aggregate(name: str, rows: list[Row], **params: Any) -> Any:
    """The oracle's value of aggregate ``name`` (mlsql's public name)."""
    if name == "subset_accuracy":
        return subset_accuracy(rows)
    if name == "zero_one_loss":
        v = subset_accuracy(rows)
        return None if v is None else 1 - v
    if name == "hamming_loss":
        return hamming_loss(rows, params["n_labels"])
    average, _, measure = name.partition("_")
    zd = params.get("zero_division", 0)
    if measure == "fbeta":
        args = {"beta": params.get("beta", 1), "zd": zd}
    elif measure == "f1":
        args = {"beta": 1, "zd": zd}
    else:
        args = {"zd": zd}
    return {"micro": micro, "samples": samples}[average](rows, measure, **args)


def per_row(name: str, a: Any, p: Any, **params: Any) -> Any:
    """The oracle's value of per-row function ``name`` for one row."""
    sa, sp = as_set(a), as_set(p)
    if sa is None or sp is None:
        return None
    sets = {
        "set_intersection": sa & sp,
        "set_difference": sa - sp,
        "set_union": sa | sp,
        "set_symmetric_difference": sa ^ sp,
    }
    if name in sets:
        return sorted(sets[name])
    tp, fp, fn = counts(sa, sp)
    zd = params.get("zero_division", 0)
    return {
        "true_positives": lambda: tp,
        "false_positives": lambda: fp,
        "false_negatives": lambda: fn,
        "true_negatives": lambda: params["n_labels"] - len(sa | sp),
        "set_jaccard": lambda: jaccard(tp, fp, fn, zd),
        "row_precision": lambda: precision(tp, fp, fn, zd),
        "row_recall": lambda: recall(tp, fp, fn, zd),
        "row_fbeta": lambda: fbeta(tp, fp, fn, params.get("beta", 1), zd),
    }[name]()
