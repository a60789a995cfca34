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

The agreement tests follow statsmodels: ``mcnemar_statistic`` and
``mcnemar_p_value`` are ``statsmodels.stats.contingency_tables.mcnemar(table,
exact=False, correction=...)``'s statistic and pvalue (the discordant cells are
fp and fn); ``kappa_std_error``, ``kappa_z_value``, ``kappa_p_value`` and
``kappa_p_value_one_sided`` are
``statsmodels.stats.inter_rater.cohens_kappa(table)``'s std_kappa, z_value,
pvalue_two_sided and pvalue_one_sided (the table's rows are ``actual``, its columns
``predicted``).

Notes
-----
Ratios whose denominator is 0 follow ``zero_division``. Under 'diagnose'
(1 where nothing was there to get wrong, else 0): precision, recall, F and the
positive class's error rate use tp + fp + fn = 0; specificity, negative
predictive value and the negative class's error rate use tn + fn + fp = 0 (the
same test with the classes swapped); kappa is undefined only when every row is
of one class on both sides, where it is 1. Shares of n (sup, tacc, cov, error
rate, nov) are NULL when n = 0, like any aggregate over no rows.

The tests are NULL when n = 0 too, and NaN where statsmodels' formula divides
0 by 0 (McNemar's without discordant rows; kappa's when every row is of one
class on both sides). statsmodels differs in one case: with correction and no
discordant rows it gives a statistic of inf and a p-value of 0 ((0 - 1)² / 0),
where mlsql gives NaN, as without correction.
"""

from __future__ import annotations

from collections.abc import Callable
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


# ---------------------------------------------------------------- agreement tests
#: erfc(x) = exp(-x²) t P(2t - 1) with t = 2 / (2 + x), for x >= 0: P's coefficients (constant
#: first) are the monomial form of a degree-27 Chebyshev fit of erfc(x) exp(x²) / t on t in
#: (0, 1], made with mpmath at 60 digits; in DOUBLE arithmetic the result is within 1e-14
#: relative of erfc for x in [0, 26] (beyond, exp(-x²) underflows to 0)
ERFC_POLYNOMIAL = (
    0.5107913526210115,
    0.3435803422069053,
    0.13973604627802694,
    0.0182211157534395,
    -0.010755330944719348,
    -0.003239592533879013,
    0.0015453060291222003,
    0.00041864803150011776,
    -0.0003315367483461889,
    -1.718572067691969e-05,
    7.223535548997429e-05,
    -1.7074435930768933e-05,
    -1.084807828833205e-05,
    8.060426963858187e-06,
    -5.627559192378118e-07,
    -1.8218361427008817e-06,
    1.0007982351303053e-06,
    -1.157247380519068e-09,
    -2.853844774555098e-07,
    1.6246994987174998e-07,
    -1.848669368762183e-09,
    -5.546587044211434e-08,
    2.9131155308487508e-08,
    5.140345918956905e-09,
    -9.775556667111567e-09,
    1.6323398807169344e-09,
    1.2098746244203231e-09,
    -3.98636294277478e-10,
)


def _square(x: E) -> E:
    return x * x


def _abs(ops: Any, x: E) -> E:
    return ops.when(x < 0, -x, x)


@formula
def erfc(ops: Any, x: E) -> E:
    """The complementary error function of ``x`` >= 0 (:data:`ERFC_POLYNOMIAL`, Horner's rule).

    No engine has erfc; 2 P(Z > z) = erfc(z / sqrt 2) for a standard normal Z, and
    P(X > x) = erfc(sqrt(x / 2)) for a chi-square X with one degree of freedom.
    """
    t = 2 / (2 + x)
    return ops.let((x, t, 2 * t - 1), lambda x, t, u: _erfc(ops, x, t, u), "erfc")


def _erfc(ops: Any, x: E, t: E, u: E) -> E:
    p: Any = ERFC_POLYNOMIAL[-1]
    for a in reversed(ERFC_POLYNOMIAL[:-1]):
        p = p * u + a
    return ops.exp(-_square(x)) * t * p


@formula
def chi2_upper_tail(ops: Any, x: E, df: E) -> E:
    """P(X > x) for X chi-square with ``df`` (a whole number >= 1) degrees of freedom:
    scipy's ``chi2.sf(x, df)``, the regularized upper incomplete gamma Q(df / 2, x / 2).

    For a whole or half-whole a = df / 2 it is a finite sum (Abramowitz and Stegun 6.5.13,
    26.4.4): with y = x / 2 and m = floor(df / 2), e^-y Σ_{i<m} y^i / i! for even df and
    erfc(√y) + e^-y Σ_{i<m} y^(i + 1/2) / Γ(i + 3/2) for odd df (:func:`erfc`); each engine
    sums the terms (``gamma_series``). 1 for x <= 0; NaN and NULL stay so. The sum's rounding
    can pass 1 by a few ulps where P is near 1 (x far below df): it is capped at 1.
    """

    def tail(x: E, df: E) -> E:
        half = ops.floor(df / 2)
        return ops.let_series(
            (x / 2, half, df / 2 - half),
            lambda y, m, a0: (
                ops.when(a0 > 0, erfc(ops, ops.sqrt(y)), 0.0) + ops.gamma_series(m, a0, y)
            ),
            "chi2_terms",
        )

    def at_most_one(p: E) -> E:  # the series' rounding reaches 1 + 5e-13 where P is near 1
        return ops.when(ops.is_nan(p), p, ops.when(p > 1, 1.0, p))

    return ops.let_series(
        (x, df),
        lambda x, df: ops.when(x <= 0, 1.0, ops.let((tail(x, df),), at_most_one, "chi2_at_most_1")),
        "chi2",
    )


@formula
def mcnemar_statistic(ops: Any, c: Counts, tn: E, correction: E) -> E:
    """(|fp - fn| - correction)² / (fp + fn): McNemar's chi-square of the discordant cells.

    statsmodels' ``mcnemar(exact=False, correction=...)``: correction=True is 1, False 0.
    NaN without discordant rows, NULL over no rows.
    """
    discordant = c.fp + c.fn
    excess = _abs(ops, c.fp - c.fn) - correction
    statistic = ops.when(discordant == 0, ops.nan(), _square(excess) / discordant)
    return ops.when(c.tp + c.fp + c.fn + tn == 0, None, statistic)


@formula
def mcnemar_p_value(ops: Any, c: Counts, tn: E, correction: E) -> E:
    """P(X > statistic) for X chi-square with one degree of freedom: erfc(sqrt(statistic / 2))."""
    return erfc(ops, ops.sqrt(mcnemar_statistic(ops, c, tn, correction) / 2))


def _kappa_terms(ops: Any, c: Counts, tn: E, body: Callable[[dict[str, E]], E]) -> E:
    """``body(t)``, ``t`` the shares of the table and kappa as statsmodels' ``cohens_kappa``
    names them, each bound once.

    The table's rows are ``actual``, its columns ``predicted``: p11 = tp / n, p10 = fn / n
    (actual positive, predicted negative), p01 = fp / n, p00 = tn / n. They are bound in
    layers, each naming the one before (an inner scope names only its own values): written
    out, kappa names n eighteen times, and Spark compiled each test to 10,000 lines of Java.
    """
    names = ("n", "p11", "p10", "p01", "p00", "row1", "row0", "col1", "col0", "agree_exp")

    def with_kappa(*vs: E) -> E:
        return body(dict(zip((*names, "kappa"), vs, strict=True)))

    def with_agreement(*vs: E) -> E:
        t = dict(zip(names, vs, strict=True))
        kappa = (t["p11"] + t["p00"] - t["agree_exp"]) / (1 - t["agree_exp"])
        return ops.let((*vs, kappa), with_kappa, "kappa_k")

    def with_margins(*vs: E) -> E:
        t = dict(zip(names, vs, strict=False))
        agree_exp = t["row1"] * t["col1"] + t["row0"] * t["col0"]
        return ops.let((*vs, agree_exp), with_agreement, "kappa_agree")

    def with_shares(n: E, p11: E, p10: E, p01: E, p00: E) -> E:
        margins = (p11 + p10, p01 + p00, p11 + p01, p10 + p00)
        return ops.let((n, p11, p10, p01, p00, *margins), with_margins, "kappa_margins")

    n = c.tp + c.fp + c.fn + tn
    return ops.let((n, c.tp / n, c.fn / n, c.fp / n, tn / n), with_shares, "kappa_shares")


def _var_kappa(t: dict[str, E]) -> E:
    """var_kappa (Fleiss, Cohen and Everitt 1969) from :func:`_kappa_terms` (each bound once)."""
    kappa = t["kappa"]
    k1 = 1 - kappa
    term_a = t["p11"] * _square(1 - (t["row1"] + t["col1"]) * k1)
    term_a += t["p00"] * _square(1 - (t["row0"] + t["col0"]) * k1)
    term_b = t["p10"] * _square(t["col1"] + t["row0"]) + t["p01"] * _square(t["col0"] + t["row1"])
    term_c = _square(kappa - t["agree_exp"] * k1)
    return (term_a + _square(k1) * term_b - term_c) / _square(1 - t["agree_exp"]) / t["n"]


def _var_kappa0(t: dict[str, E]) -> E:
    """var_kappa0: kappa's variance under kappa = 0."""
    agree_exp = t["agree_exp"]
    term_c = t["col1"] * t["row1"] * (t["col1"] + t["row1"])
    term_c += t["col0"] * t["row0"] * (t["col0"] + t["row0"])
    return (agree_exp + _square(agree_exp) - term_c) / (_square(1 - agree_exp) * t["n"])


def _one_side(c: Counts, tn: E) -> E:
    """Whether ``actual`` or ``predicted`` holds one class only."""
    return (c.tp + c.fn == 0) | (c.fp + tn == 0) | (c.tp + c.fp == 0) | (c.fn + tn == 0)


def _kappa_test(ops: Any, c: Counts, tn: E, value: E, *, one_side: bool = False) -> E:
    """``value`` where it is defined: NULL over no rows; NaN where statsmodels divides 0 by 0,
    which is where every row is of one class on both sides (agree_exp = 1) or, with
    ``one_side``, on either side (then kappa = 0 and var_kappa0 = 0)."""
    n = c.tp + c.fp + c.fn + tn
    both = (c.fp + c.fn == 0) & ((c.tp == 0) | (tn == 0))
    one_class = _one_side(c, tn) if one_side else both
    return ops.when(n == 0, None, ops.when(one_class, ops.nan(), value))


def _with_cells(ops: Any, c: Counts, tn: E, body: Any) -> E:
    """``body(ops, c, tn)`` with the four cells bound once: kappa's variance names each
    cell dozens of times, which grew Spark's plan to 30-60 s a query."""
    return ops.let((c.tp, c.fp, c.fn, tn), lambda *v: body(ops, Counts(*v[:3]), v[3]), "cells")


@formula
def kappa_std_error(ops: Any, c: Counts, tn: E) -> E:
    """sqrt(var_kappa): kappa's asymptotic standard error (statsmodels' std_kappa).

    0 under perfect agreement (fp = fn = 0), under perfect disagreement of balanced classes
    (tp = tn = 0, fp = fn) and where either side holds one class only: the variance is 0
    exactly there (rounding would leave a tiny number, or a negative one).
    """
    return _with_cells(ops, c, tn, _kappa_std_error)


def _kappa_std_error(ops: Any, c: Counts, tn: E) -> E:
    var_kappa = _kappa_terms(ops, c, tn, _var_kappa)
    std = ops.sqrt(ops.when(var_kappa < 0, 0.0, var_kappa))
    disagree = (c.tp == 0) & (tn == 0) & (c.fp == c.fn)
    exact_zero = (c.fp + c.fn == 0) | disagree | _one_side(c, tn)
    return _kappa_test(ops, c, tn, ops.when(exact_zero, 0.0, std))


@formula
def kappa_z_value(ops: Any, c: Counts, tn: E) -> E:
    """kappa / std_kappa0: the z statistic of kappa = 0 (statsmodels' z_value).

    NaN where either side holds one class only: kappa is 0 there and so is std_kappa0.
    """
    return _with_cells(ops, c, tn, _kappa_z_value)


def _kappa_z_value(ops: Any, c: Counts, tn: E) -> E:
    z = _kappa_terms(ops, c, tn, lambda t: t["kappa"] / ops.sqrt(_var_kappa0(t)))
    return _kappa_test(ops, c, tn, z, one_side=True)


@formula
def kappa_p_value(ops: Any, c: Counts, tn: E) -> E:
    """2 P(Z > |z|) = erfc(|z| / sqrt 2): the two-sided p-value of kappa = 0 (statsmodels'
    pvalue_two_sided)."""
    return ops.let(
        (kappa_z_value(ops, c, tn),), lambda z: erfc(ops, _abs(ops, z) / 2**0.5), "kappa_z"
    )


def normal_upper_tail(ops: Any, z: E) -> E:
    """P(Z > z) for a standard normal Z (scipy's ``norm.sf``): erfc(|z| / sqrt 2) / 2 (half
    the two-sided tail, :func:`erfc`), its complement 1 - erfc(|z| / sqrt 2) / 2 below 0;
    NaN and NULL stay so."""

    def tail(z: E) -> E:
        # z bound again with the half tail: an inner scope names only its own values
        half = erfc(ops, _abs(ops, z) / 2**0.5) / 2
        return ops.let((z, half), lambda z, h: ops.when(z < 0, 1 - h, h), "normal_tail")

    return ops.let((z,), tail, "normal_z")


@formula
def kappa_p_value_one_sided(ops: Any, c: Counts, tn: E) -> E:
    """P(Z > z): the one-sided p-value of kappa = 0 against kappa > 0 (pvalue_one_sided).

    statsmodels' ``norm.sf(z_value)``; NaN where z is (see :func:`kappa_z_value`).
    """
    return normal_upper_tail(ops, kappa_z_value(ops, c, tn))
