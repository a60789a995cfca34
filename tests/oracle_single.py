"""A plain-Python reference for single-label, binary, rule, regression and score measures.

Written from the definitions (the lecture slides, scikit-learn's documentation,
Hivemall's), independently of mlsql's code, with exact fractions where the
measure is a ratio of counts or sums. A row with a NULL side is skipped; no
rows gives None. ``zero_division`` is the value of an undefined ratio (0, 1,
NaN, 'diagnose', 'ignore' as in tests.oracle).
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from typing import Any

from tests.oracle import NAN, mean, undefined

Row = tuple[Any, Any]


def known(rows: list[Row]) -> list[Row]:
    """Rows where neither side is NULL."""
    return [(a, p) for a, p in rows if a is not None and p is not None]


def ratio(num: Any, den: Any, zd: Any, nothing: bool) -> Any:
    return undefined(zd, nothing) if den == 0 else Fraction(num) / Fraction(den)


# ------------------------------------------------------------------ one label column
def distribution(labels: list[Any]) -> dict[Any, tuple[int, Fraction]]:
    """class -> (count, share) over the non-NULL labels."""
    counts = Counter(x for x in labels if x is not None)
    n = sum(counts.values())
    return {c: (k, Fraction(k, n)) for c, k in sorted(counts.items())}


def majority_class(labels: list[Any]) -> Any:
    counts = Counter(x for x in labels if x is not None)
    return min(counts, key=lambda c: (-counts[c], c)) if counts else None


def minority_class(labels: list[Any]) -> Any:
    counts = Counter(x for x in labels if x is not None)
    return min(counts, key=lambda c: (counts[c], c)) if counts else None


def majority_error(labels: list[Any]) -> Any:
    d = distribution(labels)
    return 1 - max(share for _, share in d.values()) if d else None


# ------------------------------------------------------------------ multiclass
def classes(rows: list[Row]) -> list[Any]:
    return sorted({x for r in known(rows) for x in r})


def confusion(rows: list[Row]) -> dict[tuple[Any, Any], int]:
    """Every (actual, predicted) cell over the classes seen, zeros included."""
    seen = Counter(known(rows))
    cs = classes(rows)
    return {(a, p): seen[(a, p)] for a in cs for p in cs}


def accuracy(rows: list[Row]) -> Any:
    ks = known(rows)
    return Fraction(sum(a == p for a, p in ks), len(ks)) if ks else None


def per_class(rows: list[Row]) -> dict[Any, dict[str, int]]:
    """class -> tp, fp, fn, tn, support."""
    ks = known(rows)
    out = {}
    for c in classes(rows):
        tp = sum(a == c and p == c for a, p in ks)
        fp = sum(a != c and p == c for a, p in ks)
        fn = sum(a == c and p != c for a, p in ks)
        out[c] = {"tp": tp, "fp": fp, "fn": fn, "tn": len(ks) - tp - fp - fn, "support": tp + fn}
    return out


def _class_ratio(k: dict[str, int], measure: str, zd: Any, beta: Any = 1) -> Any:
    tp, fp, fn = k["tp"], k["fp"], k["fn"]
    nothing = tp + fp + fn == 0
    if measure == "precision":
        return ratio(tp, tp + fp, zd, nothing)
    if measure == "recall":
        return ratio(tp, tp + fn, zd, nothing)
    b2 = Fraction(beta) ** 2
    p = Fraction(tp, tp + fp) if tp + fp else None
    r = Fraction(tp, tp + fn) if tp + fn else None
    if p is None or r is None or p + r == 0:  # F from counts where P or R is undefined
        den = (1 + b2) * tp + b2 * fn + fp
        return ratio((1 + b2) * tp, den, zd, nothing)
    return (1 + b2) * p * r / (b2 * p + r)


def averaged(rows: list[Row], measure: str, average: str, zd: Any = 0, beta: Any = 1) -> Any:
    """precision / recall / fbeta averaged micro, macro or weighted (scikit-learn's definitions)."""
    ks = known(rows)
    if not ks:
        return None
    k = per_class(rows)
    if average == "micro":
        pooled = {f: sum(v[f] for v in k.values()) for f in ("tp", "fp", "fn")}
        return _class_ratio(pooled, measure, zd, beta)
    values = [_class_ratio(v, measure, zd, beta) for v in k.values()]
    if average == "macro":
        return mean(values)
    pairs = [
        (v, c["support"])
        for v, c in zip(values, k.values(), strict=True)
        if v is not None and not (isinstance(v, float) and math.isnan(v))
    ]
    if not pairs:
        return NAN if any(v is not None for v in values) else None
    total = sum(w for _, w in pairs)
    return sum(Fraction(v) * w for v, w in pairs) / total if total else undefined(zd, False)


def balanced_accuracy(rows: list[Row]) -> Any:
    k = per_class(rows)
    recalls = [Fraction(v["tp"], v["support"]) for v in k.values() if v["support"]]
    return sum(recalls, Fraction(0)) / len(recalls) if recalls else None


def kappa(rows: list[Row], weights: str | None = None, zd: Any = 0) -> Any:
    """1 - Σ w O / Σ w E, E = row total x column total / n; w from the sorted class positions."""
    ks = known(rows)
    if not ks:
        return None
    cs = classes(rows)
    pos = {c: i for i, c in enumerate(cs)}

    def w(i: int, j: int) -> int:
        if weights == "linear":
            return abs(i - j)
        if weights == "quadratic":
            return (i - j) ** 2
        return int(i != j)

    n = len(ks)
    rows_tot = Counter(a for a, _ in ks)
    cols_tot = Counter(p for _, p in ks)
    observed = sum(w(pos[a], pos[p]) for a, p in ks)
    expected = sum(
        w(pos[a], pos[p]) * Fraction(rows_tot[a] * cols_tot[p], n) for a in cs for p in cs
    )
    return undefined(zd, observed == 0) if expected == 0 else 1 - observed / expected


def mcc(rows: list[Row], zd: Any = 0) -> Any:
    """Matthews correlation: cov(Y, Ŷ) / sqrt(cov(Y, Y) cov(Ŷ, Ŷ)) over one-hot indicators."""
    ks = known(rows)
    if not ks:
        return None
    n = len(ks)
    t, p = Counter(a for a, _ in ks), Counter(b for _, b in ks)
    c = sum(a == b for a, b in ks)
    cs = classes(rows)
    cov_tp = c * n - sum(t[k] * p[k] for k in cs)
    cov_pp = n * n - sum(p[k] ** 2 for k in cs)
    cov_tt = n * n - sum(t[k] ** 2 for k in cs)
    if cov_pp * cov_tt == 0:
        return undefined(zd, c == n)
    return cov_tp / math.sqrt(cov_pp * cov_tt)


def cost_error(rows: list[Row], costs: dict[tuple[Any, Any], Any]) -> Any:
    """(1/n) Σ cost(a, p): given costs, else 1 off the diagonal and 0 on it."""
    ks = known(rows)
    if not ks:
        return None
    total = sum(Fraction(costs.get((a, p), 0 if a == p else 1)) for a, p in ks)
    return total / len(ks)


# ------------------------------------------------------------------ 2x2 tables
def table(rows: list[Row]) -> tuple[int, int, int, int]:
    """tp, fp, fn, tn of known boolean rows (actual, predicted)."""
    ks = [(bool(a), bool(p)) for a, p in known(rows)]
    tp = sum(a and p for a, p in ks)
    fp = sum(p and not a for a, p in ks)
    fn = sum(a and not p for a, p in ks)
    return tp, fp, fn, len(ks) - tp - fp - fn


def two_by_two(tp: int, fp: int, fn: int, tn: int, name: str, zd: Any = 0, **params: Any) -> Any:
    """The lecture's 2x2 measures from the definitions (p(.) = share of the n rows)."""
    n = tp + fp + fn + tn
    if n == 0:
        return None
    pos_nothing, neg_nothing = tp + fp + fn == 0, tn + fn + fp == 0
    p_l, p_r, p_lr = Fraction(tp + fp, n), Fraction(tp + fn, n), Fraction(tp, n)
    if name == "prel":
        return ratio(tp, tp + fp, zd, pos_nothing)
    if name == "nrel":
        return ratio(tn, tn + fn, zd, neg_nothing)
    if name == "sens":
        return ratio(tp, tp + fn, zd, pos_nothing)
    if name == "spec":
        return ratio(tn, tn + fp, zd, neg_nothing)
    if name == "sup":
        return p_lr
    if name == "tacc":
        return Fraction(tp + tn, n)
    if name == "cov":
        return p_l
    if name == "error_rate":
        return Fraction(fp + fn, n)
    if name == "nov":
        return p_lr - p_l * p_r
    if name == "sat":  # (p(not R) - p(not R | L)) / p(not R)
        not_r = Fraction(fp + tn, n)
        if tp + fp == 0 or not_r == 0:
            return undefined(zd, pos_nothing)
        return (not_r - Fraction(fp, tp + fp)) / not_r
    if name == "fnr":
        return ratio(fn, tp + fn, zd, pos_nothing)
    if name == "fpr":
        return ratio(fp, fp + tn, zd, neg_nothing)
    if name == "fbeta":
        b2 = Fraction(params.get("beta", 1)) ** 2
        return ratio((1 + b2) * tp, (1 + b2) * tp + b2 * fn + fp, zd, pos_nothing)
    if name == "f_alpha":  # (alpha + 1) P R / (alpha P + R)
        alpha = Fraction(params["alpha"])
        if tp == 0:
            return ratio(0, (1 + alpha) * tp + alpha * fn + fp, zd, pos_nothing)
        prec, rec = Fraction(tp, tp + fp), Fraction(tp, tp + fn)
        return (alpha + 1) * prec * rec / (alpha * prec + rec)
    if name == "kappa":
        po = Fraction(tp + tn, n)
        pe = p_r * p_l + (1 - p_r) * (1 - p_l)
        return undefined(zd, True) if pe == 1 else (po - pe) / (1 - pe)
    if name == "cost_error":
        return (Fraction(params["cost_fn"]) * fn + Fraction(params["cost_fp"]) * fp) / n
    raise KeyError(name)


# ------------------------------------------------------------------ regression
def regression(rows: list[Row], name: str, zd: Any = 0) -> Any:
    """Exact (Fraction) regression measures; square roots as floats."""
    ks = [(Fraction(a), Fraction(p)) for a, p in known(rows)]
    if not ks:
        return None
    n = len(ks)
    ybar = sum(a for a, _ in ks) / n
    pbar = sum(p for _, p in ks) / n
    sse = sum((a - p) ** 2 for a, p in ks)
    sae = sum(abs(a - p) for a, p in ks)
    sst = sum((a - ybar) ** 2 for a, _ in ks)
    ssp = sum((p - pbar) ** 2 for _, p in ks)
    sad = sum(abs(a - ybar) for a, _ in ks)
    if name == "mse":
        return sse / n
    if name == "rmse":
        return math.sqrt(sse / n)
    if name == "mae":
        return sae / n
    if name == "mape":
        eps = Fraction(2.220446049250313e-16)
        return sum(abs(a - p) / max(abs(a), eps) for a, p in ks) / n
    if name in ("rse", "rrse"):
        value = undefined(zd, sse > 0) if sst == 0 else sse / sst
        return math.sqrt(value) if name == "rrse" and value is not None else value
    if name == "rae":
        return undefined(zd, sae > 0) if sad == 0 else sae / sad
    if name == "r2":
        return undefined(zd, sse == 0) if sst == 0 else 1 - sse / sst
    if name == "explained_variance":
        ebar = sum(a - p for a, p in ks) / n
        var_e = sum((a - p - ebar) ** 2 for a, p in ks)
        return undefined(zd, var_e == 0) if sst == 0 else 1 - var_e / sst
    if name == "pearson_corr":
        cov = sum((a - ybar) * (p - pbar) for a, p in ks)
        if sst == 0 or ssp == 0:
            return undefined(zd, sse == 0)
        return float(cov) / math.sqrt(sst * ssp)
    raise KeyError(name)


def logloss(rows: list[Row]) -> Any:
    """Mean of -(y ln p + (1 - y) ln(1 - p)), p clipped to [1e-15, 1 - 1e-15]."""
    ks = known(rows)
    if not ks:
        return None
    total = 0.0
    for y, p in ks:
        q = min(max(p, 1e-15), 1 - 1e-15)
        total += -math.log(q) if y else -math.log(1 - q)
    return total / len(ks)


def auc(rows: list[Row], zd: Any = 0) -> Any:
    """Share of (positive, negative) pairs with the positive scored higher, ties one half."""
    ks = known(rows)
    if not ks:
        return None
    pos = [s for y, s in ks if y]
    neg = [s for y, s in ks if not y]
    if not pos or not neg:
        return undefined(zd, True)
    wins = sum(Fraction(1) if p > q else Fraction(1, 2) if p == q else 0 for p in pos for q in neg)
    return wins / (len(pos) * len(neg))
