"""The 1e-12 relative contract (DESIGN.md 1.10) where floating point is hard.

Every expected value is an exact fraction (``fractions.Fraction``) or a
``math.fsum`` of the inputs, never a number from the code under test.
"""

from __future__ import annotations

from fractions import Fraction

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
