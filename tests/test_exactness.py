"""The 1e-12 relative contract (DESIGN.md 1.10) where floating point is hard.

Every expected value is an exact fraction (``fractions.Fraction``) or a
``math.fsum`` of the inputs, never a number from the code under test.
"""

from __future__ import annotations

import random
from fractions import Fraction

import pyarrow as pa
import pytest

from tests.engines import label_table

REL = 1e-12


def close(got: float, exact: Fraction) -> bool:
    """``got`` within 1e-12 of ``exact``, relative."""
    return abs(Fraction(got) - exact) <= REL * abs(exact)


# ------------------------------------------------------------------ Hamming loss, huge n_labels
#: 3 wrong label decisions (fp + fn) in 3 rows
HAMMING_ROWS = [(["x"], ["x"]), (["y"], ["z"]), ([], ["q"])]


@pytest.mark.parametrize("n_labels", [2**63 - 1, 2**62, 3 * 2**61])
def test_hamming_loss_with_a_huge_label_universe_stays_a_rate(engine, n_labels):
    # rows x n_labels overflows 64-bit integers: the loss is still 3 / (3 n_labels)
    exact = Fraction(3, 3 * n_labels)
    table = label_table(HAMMING_ROWS, groups=[1, 1, 2])
    assert close(engine.aggregate("hamming_loss", table, n_labels=n_labels), exact)
    got = engine.from_stored_counts("hamming_loss_from_counts", table, n_labels=n_labels)
    assert close(got, exact)


# ------------------------------------------------------------------ weighted classes, small weights
def _class_table(actual: list[str], predicted: list[str], weights: list[float]) -> pa.Table:
    return pa.table(
        {"actual": actual, "predicted": predicted, "w": pa.array(weights, pa.float64())}
    )


def _macro(actual: list[str], predicted: list[str], weights: list[float], by: str) -> Fraction:
    """Exact macro precision (``by`` = "predicted") or recall (``by`` = "actual")."""
    classes = sorted(set(actual) | set(predicted))
    rows = list(zip(actual, predicted, map(Fraction, weights), strict=True))
    ratios = []
    for c in classes:
        side = [(a, p, w) for a, p, w in rows if (a if by == "actual" else p) == c]
        total = sum((w for _, _, w in side), Fraction(0))
        hit = sum((w for a, p, w in side if a == p), Fraction(0))
        ratios.append(hit / total if total else Fraction(0))
    return sum(ratios, Fraction(0)) / len(classes)


CLASS_CASES = [
    (["a", "b", "a", "b"], ["a", "b", "b", "a"], [1e6, 1e-11, 3, 7]),
    (["a", "b", "c"], ["a", "b", "c"], [1e6, 1e-11, 3]),
    (["a", "b"], ["a", "b"], [1e15, 1e-15]),
    (["a", "b", "a", "b"], ["a", "b", "a", "a"], [1e15, 1e-15, 1, 1]),
]


@pytest.mark.parametrize(("actual", "predicted", "weights"), CLASS_CASES)
def test_weighted_class_measures_keep_small_weights(engine, actual, predicted, weights):
    table = _class_table(actual, predicted, weights)
    columns, w = ("actual", "predicted"), {"sample_weight": "w", "average": "macro"}
    precision, recall = engine.many(
        table, [("precision_score", columns, w), ("recall_score", columns, w)]
    )
    assert close(precision, _macro(actual, predicted, weights, "predicted"))
    assert close(recall, _macro(actual, predicted, weights, "actual"))
    totals: dict[str, Fraction] = {}
    for label, weight in zip(actual, weights, strict=True):
        totals[label] = totals.get(label, Fraction(0)) + Fraction(weight)
    fewest = min(sorted(totals), key=lambda c: totals[c])
    most = max(sorted(totals), key=lambda c: totals[c])
    got = engine.many(
        table,
        [
            ("minority_class", ("actual",), {"sample_weight": "w"}),
            ("majority_class", ("actual",), {"sample_weight": "w"}),
        ],
    )
    assert got == [fewest, most]


# ------------------------------------------------------------------ Cohen's kappa, one heavy class
def _kappa(actual: list[str], predicted: list[str], weights: list[float]) -> Fraction:
    """Exact weighted Cohen's kappa: (p_o - p_e) / (1 - p_e)."""
    rows = list(zip(actual, predicted, map(Fraction, weights), strict=True))
    n = sum((w for _, _, w in rows), Fraction(0))
    classes = sorted(set(actual) | set(predicted))
    r = {c: sum((w for a, _, w in rows if a == c), Fraction(0)) for c in classes}
    k = {c: sum((w for _, p, w in rows if p == c), Fraction(0)) for c in classes}
    agree = sum((w for a, p, w in rows if a == p), Fraction(0)) / n
    chance = sum((r[c] * k[c] for c in classes), Fraction(0)) / (n * n)
    return (agree - chance) / (1 - chance)


KAPPA_CASES = [
    (["a", "b", "a", "b"], ["a", "b", "b", "b"], [1e15, 1e-15, 1, 1]),
    (["a", "a", "b", "b"], ["a", "b", "b", "a"], [1e15, 1e-15, 1, 1]),
    (["a", "b", "a", "b", "c"], ["a", "b", "b", "b", "c"], [1e15, 1e-15, 1, 1, 2]),
]


@pytest.mark.parametrize(("actual", "predicted", "weights"), KAPPA_CASES)
def test_kappa_with_one_heavy_class(engine, actual, predicted, weights):
    # n² - Σ r_i c_i and n - Σ M_ii cancelled: 0.66165 for 2/3 (7.5e-3 relative)
    table = _class_table(actual, predicted, weights)
    got = engine.aggregate(
        "cohen_kappa_score", table, columns=("actual", "predicted"), sample_weight="w"
    )
    assert close(got, _kappa(actual, predicted, weights))


# ------------------------------------------------------------------ rae far from zero
def _rae(actual: list[float], predicted: list[float], weights: list[float]) -> Fraction:
    """Exact Σw|y - ŷ| / Σw|y - ȳ_w|."""
    w, y, p = ([Fraction(v) for v in xs] for xs in (weights, actual, predicted))
    mean = sum((a * b for a, b in zip(w, y, strict=True)), Fraction(0)) / sum(w)
    error = sum((c * abs(a - b) for c, a, b in zip(w, y, p, strict=True)), Fraction(0))
    return error / sum((c * abs(a - mean) for c, a in zip(w, y, strict=True)), Fraction(0))


def _offset_table(offset: float, n: int = 200) -> pa.Table:
    rng = random.Random(5)
    y = [offset + rng.randint(0, 1000) / 8 for _ in range(n)]
    p = [v + rng.randint(-40, 40) / 8 for v in y]
    w = [rng.randint(1, 5) / 4 for _ in y]
    return pa.table({"actual": y, "predicted": p, "w": w})


@pytest.mark.parametrize("offset", [1e12, 1e15])
def test_rae_far_from_zero(engine, offset):
    # Σ|y - mean(y)| about the rounded mean was off by 3e-8 (1e12) and 1e-4 (1e15)
    table = _offset_table(offset)
    y, p, w = (table.column(c).to_pylist() for c in ("actual", "predicted", "w"))
    plain, weighted = engine.many(
        table,
        [
            ("rae", ("actual", "predicted"), {}),
            ("rae", ("actual", "predicted"), {"sample_weight": "w"}),
        ],
    )
    assert close(plain, _rae(y, p, [1.0] * len(y)))
    assert close(weighted, _rae(y, p, w))
