"""The plain-Python oracle of the averaged multi-label AP and ROC AUC against scikit-learn.

It pins down the semantics every engine must share (issue 15): the label
universe of a group, an unscored label scoring lowest, ties as scikit-learn,
and undefined labels (no positives; one class for AUC) under ``zero_division``.
"""

from __future__ import annotations

import math
import random
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from tests import oracle_ranking as O

LABELS = ["a", "b", "c", "d", "e"]


def random_rows(rng: random.Random, n: int) -> list[tuple[Any, Any]]:
    """(scores, actual) rows: few distinct scores (ties), unscored labels, a label never true."""
    rows: list[tuple[Any, Any]] = []
    for _ in range(n):
        scores = {x: rng.choice([0.1, 0.2, 0.5, 0.9]) for x in LABELS if rng.random() < 0.8}
        if scores and rng.random() < 0.2:
            scores[rng.choice(sorted(scores))] = None  # a NULL score: not scored
        actual = [x for x in LABELS[:-1] if rng.random() < 0.4]  # "e" is never true
        rows.append((scores, actual))
    rows.append((None, ["a"]))  # skipped
    rows.append(({"a": 0.3}, None))  # skipped
    return rows


def matrices(rows: list[tuple[Any, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """The indicator matrix and the score matrix, an unscored cell below every score."""
    _, cells = O.indicator_cells(rows)
    y = np.array([[int(t) for t, _ in row] for row in cells])
    s = np.array([[v for _, v in row] for row in cells])
    finite = s[np.isfinite(s)]
    s[~np.isfinite(s)] = (finite.min() if finite.size else 0.0) - 1.0
    return y, s


def sklearn(fn: Any, rows: list[tuple[Any, Any]], average: str) -> float:
    y, s = matrices(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(fn(y, s, average=average))


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("average", O.SCORE_AVERAGES)
def test_average_precision_is_scikit_learns(seed: int, average: str) -> None:
    """With labels never true, AP's undefined labels count 0 (zero_division's default) as in scikit-learn."""
    rows = random_rows(random.Random(seed), 12)
    got = O.multilabel_average_precision(rows, average)
    assert float(got) == pytest.approx(sklearn(average_precision_score, rows, average))


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("average", O.SCORE_AVERAGES)
def test_roc_auc_is_scikit_learns_where_defined(seed: int, average: str) -> None:
    """scikit-learn gives NaN for a one-class label (macro: NaN); mlsql's NaN leaves it out."""
    rows = random_rows(random.Random(seed), 12)
    expected = sklearn(roc_auc_score, rows, average)
    got = O.multilabel_roc_auc(rows, average, zero_division=math.nan)
    if math.isnan(expected):
        assert average in ("macro", "samples")  # undefined label/row: scikit-learn propagates NaN
        _, cells = O.indicator_cells(rows)
        defined = [row for row in cells if O.binary_roc_auc(row) is not None]
        if average == "samples" and defined:
            assert got == sum(O.binary_roc_auc(r) for r in defined) / len(defined)
        return
    assert float(got) == pytest.approx(expected)


def test_roc_auc_macro_leaves_out_one_class_labels_under_ignore() -> None:
    """Label e is never true: 'ignore' leaves it out; 0 counts it as 0 (scikit-learn: NaN)."""
    rows = [
        ({"a": 0.9, "b": 0.1, "e": 0.5}, ["a"]),
        ({"a": 0.2, "b": 0.8}, ["b"]),
        ({"a": 0.2, "b": 0.2}, ["a", "b"]),
    ]
    # a: positives 0.9, 0.2 vs negative 0.2 -> (1 + 1/2) / 2; b: 0.8, 0.2 vs 0.1 -> 1
    assert O.multilabel_roc_auc(rows, "macro", "ignore") == (Fraction(3, 4) + 1) / 2
    assert O.multilabel_roc_auc(rows, "macro", 0) == (Fraction(3, 4) + 1 + 0) / 3
    y, s = matrices(rows)
    assert roc_auc_score(y[:, :2], s[:, :2], average="macro") == pytest.approx(7 / 8)


def test_unscored_label_scores_lowest() -> None:
    """A true label a row does not score ranks below every score, tied with other unscored cells."""
    rows = [({"a": 0.5}, ["a"]), ({"b": 0.5}, ["a"]), ({"a": 0.1}, [])]
    # label a: scores 0.5 (true), -inf (true), 0.1 (false): AP = (1/1 + 2/3) / 2
    assert O.binary_average_precision([(True, 0.5), (True, -math.inf), (False, 0.1)]) == Fraction(
        5, 6
    )
    universe, cells = O.indicator_cells(rows)
    assert universe == ["a", "b"]
    assert cells[1] == [(True, -math.inf), (False, 0.5)]


def test_no_rows_and_all_left_out_are_null() -> None:
    assert O.multilabel_average_precision([(None, ["a"])], "macro") is None
    assert O.multilabel_roc_auc([({"a": 0.5}, ["a"])], "macro", "ignore") is None
    assert O.multilabel_roc_auc([({"a": 0.5}, ["a"])], "micro", 1) == 1


def test_roc_auc_weighted_counts_an_all_positive_label_as_zero_division() -> None:
    """Label a is true in every row: its AUC is undefined but it has weight 3 (scikit-learn: NaN)."""
    rows = [
        ({"a": 0.5, "b": 0.2, "c": 0.1}, ["a", "b"]),
        ({"a": 0.5, "b": 0.5, "c": 0.3}, ["a", "c"]),
        ({"a": 0.1, "b": 0.9, "c": 0.2}, ["a", "b"]),
    ]
    # b: positives 0.2, 0.9 vs 0.5 -> 1/2 (weight 2); c: 0.3 vs 0.1, 0.2 -> 1 (weight 1)
    assert O.multilabel_roc_auc(rows, "weighted", 0) == (0 * 3 + Fraction(1, 2) * 2 + 1) / 6
    assert O.multilabel_roc_auc(rows, "weighted", "ignore") == (Fraction(1, 2) * 2 + 1) / 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns of the undefined label
        assert math.isnan(roc_auc_score(*matrices(rows), average="weighted"))
