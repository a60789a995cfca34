"""Bowker's test of symmetry of the k x k confusion matrix: McNemar's test over k classes.

statsmodels' ``statsmodels.stats.contingency_tables.SquareTable(table,
shift_zeros=False).symmetry(method='bowker')`` on the confusion matrix (rows
``actual``, columns ``predicted``), written once over the class axis of
:class:`~mlsql.measures.single_label.ClassStats`: M_ij the cells (rows truly of
class i predicted as j), A_i and P_i the class totals, k the classes that occur
on either side.

=================  ==========================================================
mlsql              statsmodels ``SquareTable(table, shift_zeros=False)
                   .symmetry(method='bowker')``
=================  ==========================================================
bowker_statistic   statistic: Σ_{i<j} (M_ij - M_ji)² / (M_ij + M_ji)
bowker_p_value     pvalue: P(X > statistic), X chi-square with
                   df = k (k - 1) / 2 degrees of freedom (``chi2.sf``)
=================  ==========================================================

Under symmetry (M_ij and M_ji of one mean for every pair of classes) the
statistic is chi-square with k (k - 1) / 2 degrees of freedom; over two classes
it is McNemar's statistic without correction (``binary_mcnemar_statistic``).
Each pair of classes adds its term once, at the cell of the larger count: the
statistic is Σ over the cells that occur of (M_ij - M_ji)² / (M_ij + M_ji) where
M_ij > M_ji (``ClassStats.mirror_sum``), so an empty pair adds 0 without a
division, and the engines read only the cells that occur (memory per group of
the order of the cells, never the rows). The p-value is
:func:`mlsql.measures.contingency.chi2_upper_tail`, the tail McNemar's and
Cochran's Q use.

Notes
-----
- NULL over no known rows and over known rows of total weight 0 (as the kappa
  tests, :mod:`mlsql.measures.kappa_tests`).
- One class only (k = 1, every row of one class on both sides): the statistic is
  0 (statsmodels' 0 / 1e-20) and the p-value NaN, as statsmodels'
  ``chi2.sf(0, 0)``: there is no pair of classes to test. A table without
  disagreements over k >= 2 classes has statistic 0 and p-value 1.
- The classes are those that occur on either side (a class only predicted, or
  only true, counts in k and df), as a pandas table through statsmodels'
  ``_make_df_square``; with ``sample_weight`` a class whose rows all weigh 0
  does not occur (integer weights are repeated rows).
- statsmodels' default ``SquareTable(table)`` (``shift_zeros=True``) replaces
  every 0 cell by 0.5 when the table has one, before the test: a pair (3, 0) then
  adds 2.5² / 3.5, not 3. mlsql tests the counts as they are (Bowker 1948, SAS's
  ``AGREE``, R's ``mcnemar.test`` on a k x k table): it equals the default where
  no cell is 0, and ``shift_zeros=False`` everywhere.
- statsmodels adds 1e-20 to each pair's denominator (so a pair of two empty
  cells adds 0); mlsql adds each pair at its larger cell, exactly: the same for
  counts, and for weights a relative difference of 1e-20 / (M_ij + M_ji), above
  1e-12 only for a pair of total weight below 1e-8.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mlsql.measures import contingency as C

if TYPE_CHECKING:
    from mlsql.measures.single_label import ClassStats

E = Any  # an engine expression

#: the measures this module defines, in their registry order
BOWKER = ("bowker_statistic", "bowker_p_value")


def _known(ops: Any, s: ClassStats, value: E) -> E:
    """``value``, NULL over no known rows (or known rows of total weight 0)."""
    if s.rows is not None:  # weighted: known rows that all weigh 0 are no rows either
        value = ops.when(s.n == 0, None, value)
    return ops.when((s.n if s.rows is None else s.rows) == 0, None, value)


def _pair_terms(ops: Any, s: ClassStats) -> E:
    """Σ_{i<j} (M_ij - M_ji)² / (M_ij + M_ji), each pair at the cell of the larger count."""

    def term(cell: E, mirror: E) -> E:
        gap = cell - mirror
        return ops.when(cell > mirror, gap * gap / (cell + mirror), 0.0)

    assert s.mirror_sum is not None, "the engine gives no cell pairs"
    return s.mirror_sum(term)


def _classes(s: ClassStats) -> E:
    """k: the classes that occur on either side (a class whose rows all weigh 0 does not)."""
    return s.axis.sum(s.axis.when(s.actual + s.predicted > 0, 1, 0))


def statistic(ops: Any, s: ClassStats) -> E:
    """Bowker's statistic (statsmodels' ``symmetry().statistic``)."""
    return _known(ops, s, _pair_terms(ops, s))


def p_value(ops: Any, s: ClassStats) -> E:
    """P(X > statistic), X chi-square with k (k - 1) / 2 degrees of freedom; NaN for k = 1
    (statsmodels' ``chi2.sf(0, 0)``)."""

    def tail(stat: E, k: E) -> E:
        return ops.when(k < 2, ops.nan(), C.chi2_upper_tail(ops, stat, k * (k - 1) / 2))

    value = ops.let((_pair_terms(ops, s), _classes(s)), tail, "bowker")
    return _known(ops, s, value)
