"""Reliability of inputs (issue 17, items 5-9 and 11): one verdict and one number in every engine.

Every case runs on DuckDB, Polars and Spark through the ``engine`` fixture.
Expected numbers are exact fractions of the float inputs (``fractions.Fraction``,
``math.fsum``), never the code under test.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from tests.engines import label_table

# ------------------------------------------------------------------ 17.9 F-beta, huge and tiny beta
#: tp = 1, fp = 1, fn = 2 pooled over the rows
FBETA_ROWS = [(["a", "b", "c"], ["a", "d"]), ([], [])]
BETAS = [1e200, 1.5e154, 1.3e154, 1e20, 3.0, 0.5, 1e-20, 1e-160, 1e-300]


def exact_fbeta(beta: float, tp: int, fp: int, fn: int) -> float:
    """(1 + b²) tp / ((1 + b²) tp + b² fn + fp) in exact arithmetic, rounded once."""
    b2 = Fraction(beta) ** 2
    return float((1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp))


def exact_fbeta_of_means(beta: float, p: Fraction, r: Fraction) -> float:
    b2 = Fraction(beta) ** 2
    return float((1 + b2) * p * r / (b2 * p + r))


@pytest.mark.parametrize("beta", BETAS)
def test_micro_fbeta_huge_and_tiny_beta_are_exact(engine, beta):
    got = engine.aggregate("micro_fbeta", label_table(FBETA_ROWS), beta=beta)
    assert got == pytest.approx(exact_fbeta(beta, 1, 1, 2), rel=1e-12)


@pytest.mark.parametrize("beta", [1e200, 1.5e154, 1e-200])
def test_samples_fbeta_huge_and_tiny_beta_are_exact(engine, beta):
    rows = [(["a", "b", "c"], ["a", "d"]), (["x"], ["x", "y", "z"])]
    got = engine.aggregate("samples_fbeta", label_table(rows), beta=beta)
    want = (Fraction(exact_fbeta(beta, 1, 1, 2)) + Fraction(exact_fbeta(beta, 1, 2, 0))) / 2
    assert got == pytest.approx(float(want), rel=1e-12)


@pytest.mark.parametrize("beta", [1e200, 1.5e154, 1e-200])
def test_report_fbeta_columns_huge_and_tiny_beta_are_exact(engine, beta):
    out = engine.table_function("multilabel_report", label_table(FBETA_ROWS), beta=beta)
    row = out.to_pylist()[0]
    assert row["micro_fbeta"] == pytest.approx(exact_fbeta(beta, 1, 1, 2), rel=1e-12)
    # labels a (tp 1), b, c (fn 1 each), d (fp 1): macro P = 1/4 (a 1, d 0, b and c undefined: 0)
    p, r = Fraction(1, 4), Fraction(1, 4)  # macro R: a 1, b 0, c 0, d undefined (0)
    assert row["macro_fbeta_of_means"] == pytest.approx(exact_fbeta_of_means(beta, p, r), rel=1e-12)
