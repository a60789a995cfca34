"""The 2x2 contingency table's formulas, written once over tp, fp, fn and tn.

One set of formulas serves the binary aggregates (``binary_*``), their
``*_from_counts`` forms, a rule's measures (:mod:`mlsql.measures.rules`:
L = the rule fires = predicted, R = the class holds = actual) and any per-label
code that has tp, fp, fn and tn. Each takes a :class:`~mlsql._formulas.Counts`
(tp, fp, fn) and ``tn``, so DuckDB emits it as ``_mlsql_<name>(tp, fp, fn, tn, ...)``.

=========  =================================  =========================
lecture    formula                            mlsql
=========  =================================  =========================
prel       tp / (tp + fp)                     precision (``_formulas``)
nrel       tn / (tn + fn)                     negative_predictive_value
sup        tp / n                             joint_share
sens       tp / (tp + fn)                     recall (``_formulas``)
spec       tn / (tn + fp)                     specificity
tacc       (tp + tn) / n                      table_accuracy
cov        (tp + fp) / n                      table_coverage
nov        p(LR) - p(L) p(R)                  novelty
sat        1 - n fp / (|L| |not R|)           satisfaction
kappa      (po - pe) / (1 - pe)               table_kappa, cohen_kappa
=========  =================================  =========================

Notes
-----
Ratios whose denominator is 0 follow ``zero_division``. Under 'diagnose'
(1 where nothing was there to get wrong, else 0): precision, recall, F and the
positive class's error rate use tp + fp + fn = 0; specificity, negative
predictive value and the negative class's error rate use tn + fn + fp = 0 (the
same test with the classes swapped); kappa is undefined only when every row is
of one class on both sides, where it is 1. Shares of n (sup, tacc, cov, error
rate, nov) are NULL when n = 0, like any aggregate over no rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsql import _formulas as F
from mlsql._formulas import Counts, formula

E = Any  # an engine expression


@dataclass(frozen=True)
class Table2x2:
    """A 2x2 contingency table: tp, fp, fn, tn (engine expressions).

    Examples
    --------
    >>> t = Table2x2(4, 2, 1, 3)
    >>> t.n, t.counts
    (10, Counts(tp=4, fp=2, fn=1))
    """

    tp: E
    fp: E
    fn: E
    tn: E

    @property
    def counts(self) -> Counts:
        """tp, fp, fn (what precision, recall and F need)."""
        return Counts(self.tp, self.fp, self.fn)

    @property
    def n(self) -> E:
        """All rows: tp + fp + fn + tn."""
        return self.tp + self.fp + self.fn + self.tn


def swapped(c: Counts, tn: E) -> Counts:
    """The table seen from the negative class: tp' = tn, fp' = fn, fn' = fp."""
    return Counts(tn, c.fn, c.fp)


@formula
def negative_predictive_value(ops: Any, c: Counts, tn: E, zero_division: Any) -> E:
    """tn / (tn + fn) (the lecture's nrel): precision of the negative class."""
    return F.precision(ops, swapped(c, tn), zero_division)


@formula
def specificity(ops: Any, c: Counts, tn: E, zero_division: Any) -> E:
    """tn / (tn + fp) (the lecture's spec): recall of the negative class."""
    return F.recall(ops, swapped(c, tn), zero_division)


@formula
def false_negative_rate(ops: Any, c: Counts, zero_division: Any) -> E:
    """fn / (tp + fn): the positive class's error rate (1 - recall)."""
    return F.ratio(ops, c.fn, c.tp + c.fn, zero_division, c.nothing_to_score)


@formula
def false_positive_rate(ops: Any, c: Counts, tn: E, zero_division: Any) -> E:
    """fp / (fp + tn): the negative class's error rate (1 - specificity)."""
    return false_negative_rate(ops, swapped(c, tn), zero_division)


@formula
def joint_share(ops: Any, c: Counts, tn: E) -> E:
    """tp / n (the lecture's sup, a rule's support p(LR))."""
    return F.share(ops, c.tp, c.tp + c.fp + c.fn + tn)


@formula
def table_accuracy(ops: Any, c: Counts, tn: E) -> E:
    """(tp + tn) / n (the lecture's tacc)."""
    return F.share(ops, c.tp + tn, c.tp + c.fp + c.fn + tn)


@formula
def table_error_rate(ops: Any, c: Counts, tn: E) -> E:
    """(fp + fn) / n: 1 - accuracy."""
    return F.share(ops, c.fp + c.fn, c.tp + c.fp + c.fn + tn)


@formula
def table_coverage(ops: Any, c: Counts, tn: E) -> E:
    """(tp + fp) / n (the lecture's cov): share of rows predicted positive (where a rule fires)."""
    return F.share(ops, c.tp + c.fp, c.tp + c.fp + c.fn + tn)


@formula
def table_cost_error(ops: Any, c: Counts, tn: E, cost_fn: E, cost_fp: E) -> E:
    """(cost_fn fn + cost_fp fp) / n: the cost-weighted error of a 2x2 table."""
    return F.share(ops, cost_fn * c.fn + cost_fp * c.fp, c.tp + c.fp + c.fn + tn)


@formula
def novelty(ops: Any, c: Counts, tn: E) -> E:
    """p(LR) - p(L) p(R) = (n tp - (tp + fp)(tp + fn)) / n² (the lecture's nov)."""
    n = c.tp + c.fp + c.fn + tn
    return F.share(ops, n * c.tp - (c.tp + c.fp) * (c.tp + c.fn), n * n)


@formula
def satisfaction(ops: Any, c: Counts, tn: E, zero_division: Any) -> E:
    """1 - n fp / (|L| |not R|) (the lecture's sat); undefined when L or not R is empty."""
    n = c.tp + c.fp + c.fn + tn
    fires_not_r = (c.tp + c.fp) * (c.fp + tn)
    return F.ratio(ops, fires_not_r - n * c.fp, fires_not_r, zero_division, c.nothing_to_score)


@formula
def cohen_kappa(ops: Any, n: E, disagreement: E, chance_disagreement: E, zero_division: Any) -> E:
    """1 - n Σw·O / Σw·r·c: kappa from the (weighted) disagreement seen and expected by chance.

    ``disagreement`` is Σ over rows of w(actual, predicted) and
    ``chance_disagreement`` is Σ over class pairs of w(i, j) r_i c_j (r, c: the
    row and column totals). Plain kappa has w = 1 off the diagonal, which
    gives (n Σ M_ii - Σ r_i c_i) / (n² - Σ r_i c_i). Undefined when every row
    is of one class on both sides (then 1 under 'diagnose').
    """
    return F.ratio(
        ops,
        chance_disagreement - n * disagreement,
        chance_disagreement,
        zero_division,
        disagreement == 0,
    )


@formula
def table_kappa(ops: Any, c: Counts, tn: E, zero_division: Any) -> E:
    """Cohen's kappa of a 2x2 table: chance disagreement (tp+fn)(fn+tn) + (fp+tn)(tp+fp)."""
    n = c.tp + c.fp + c.fn + tn
    chance = (c.tp + c.fn) * (c.fn + tn) + (c.fp + tn) * (c.tp + c.fp)
    return cohen_kappa(ops, n, c.fp + c.fn, chance, zero_division)
