"""Binary classification: the 2x2 measures over two boolean (or 0/1) columns, or stored counts.

Each measure exists twice with one formula (:mod:`mlsql.measures.contingency`):
``binary_<name>(actual, predicted)`` aggregates over rows (true / 1 is the
positive class; a row with a NULL side is skipped), and
``binary_<name>_from_counts(tp, fp, fn, tn)`` scores stored counts (one number
per row of counts). ``binary_counts(actual, predicted)`` returns the struct
{tp, fp, fn, tn} to store; sum its fields to combine partitions.

The lecture's names are aliases of the aggregates, all taking (actual,
predicted): prel (precision), nrel (negative predictive value), sup (tp / n),
sens (recall), spec (specificity), tacc (accuracy), cov ((tp + fp) / n). A
rule's measures are the same with actual = the class holds (R) and predicted
= the rule fires (L); see :mod:`mlsql.measures.rules`.

Notes
-----
- F_alpha = (alpha + 1) P R / (alpha P + R) is F-beta with alpha = beta²:
  ``binary_f_alpha(actual, predicted, alpha)`` = ``binary_fbeta(..., beta=sqrt(alpha))``.
- ``binary_support`` is the lecture's sup, tp / n (a rule's support), not
  scikit-learn's support (a count of true rows).
- Inputs must be boolean or numbers that are 0 or 1; anything else is an error.
- Undefined ratios follow ``zero_division`` (see :mod:`mlsql.measures.contingency`);
  over zero rows every aggregate is NULL.
- The agreement tests are statsmodels' on the table with rows ``actual`` and
  columns ``predicted``: ``binary_mcnemar_statistic`` and ``binary_mcnemar_p_value``
  are ``mcnemar(table, exact=False, correction=...)`` (``correction`` 1 or 0 for
  True or False; McNemar's exact test is ``compare``'s mcnemar_p_value), and
  ``binary_kappa_std_error``, ``binary_kappa_z_value``, ``binary_kappa_p_value`` and
  ``binary_kappa_p_value_one_sided`` are ``cohens_kappa(table)``'s std_kappa, z_value,
  pvalue_two_sided and pvalue_one_sided (P(Z > z), against kappa > 0). They are
  NaN where statsmodels divides 0 by 0 (no discordant rows; one class on a side
  for z and p), except that statsmodels gives inf and 0 for McNemar's corrected
  test without discordant rows.
- ``sample_weight`` on every aggregate and ``binary_counts``: each cell is the
  sum of its rows' weights (stored counts of weighted rows still merge by
  addition); the cells are then DOUBLE sums.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlsql import _formulas as F
from mlsql import _params as P
from mlsql._registry import Param, measure
from mlsql.measures import contingency as C
from mlsql.measures.contingency import Table2x2

FAMILY = "binary"
ZD = P.ZERO_DIVISION
BETA = P.BETA
ALPHA = P.ALPHA
COSTS = (P.COST_FN, P.COST_FP)
CORRECTION = P.CORRECTION
COUNT_INPUTS = ("tp", "fp", "fn", "tn")
#: fields of the binary_counts struct, in order
COUNTS_FIELDS = COUNT_INPUTS


def _precision(ops: Any, t: Table2x2, zero_division: Any) -> Any:
    return F.precision(ops, t.counts, zero_division)


def _recall(ops: Any, t: Table2x2, zero_division: Any) -> Any:
    return F.recall(ops, t.counts, zero_division)


def _specificity(ops: Any, t: Table2x2, zero_division: Any) -> Any:
    return C.specificity(ops, t.counts, t.tn, zero_division)


def _npv(ops: Any, t: Table2x2, zero_division: Any) -> Any:
    return C.negative_predictive_value(ops, t.counts, t.tn, zero_division)


def _support(ops: Any, t: Table2x2) -> Any:
    return C.joint_share(ops, t.counts, t.tn)


def _accuracy(ops: Any, t: Table2x2) -> Any:
    return C.table_accuracy(ops, t.counts, t.tn)


def _coverage(ops: Any, t: Table2x2) -> Any:
    return C.table_coverage(ops, t.counts, t.tn)


def _error_rate(ops: Any, t: Table2x2) -> Any:
    return C.table_error_rate(ops, t.counts, t.tn)


def _fbeta(ops: Any, t: Table2x2, beta: Any, zero_division: Any) -> Any:
    return F.fbeta(ops, t.counts, beta, zero_division)


def _f1(ops: Any, t: Table2x2, zero_division: Any) -> Any:
    return F.fbeta(ops, t.counts, 1, zero_division)


def _f_alpha(ops: Any, t: Table2x2, alpha: Any, zero_division: Any) -> Any:
    return F.fbeta(ops, t.counts, alpha**0.5, zero_division)


def _kappa(ops: Any, t: Table2x2, zero_division: Any) -> Any:
    return C.table_kappa(ops, t.counts, t.tn, zero_division)


def _mcnemar_statistic(ops: Any, t: Table2x2, correction: Any) -> Any:
    return C.mcnemar_statistic(ops, t.counts, t.tn, correction)


def _mcnemar_p_value(ops: Any, t: Table2x2, correction: Any) -> Any:
    return C.mcnemar_p_value(ops, t.counts, t.tn, correction)


def _kappa_std_error(ops: Any, t: Table2x2) -> Any:
    return C.kappa_std_error(ops, t.counts, t.tn)


def _kappa_z_value(ops: Any, t: Table2x2) -> Any:
    return C.kappa_z_value(ops, t.counts, t.tn)


def _kappa_p_value(ops: Any, t: Table2x2) -> Any:
    return C.kappa_p_value(ops, t.counts, t.tn)


def _kappa_p_value_one_sided(ops: Any, t: Table2x2) -> Any:
    return C.kappa_p_value_one_sided(ops, t.counts, t.tn)


def _fnr(ops: Any, t: Table2x2, zero_division: Any) -> Any:
    return C.false_negative_rate(ops, t.counts, zero_division)


def _fpr(ops: Any, t: Table2x2, zero_division: Any) -> Any:
    return C.false_positive_rate(ops, t.counts, t.tn, zero_division)


def _cost_error(ops: Any, t: Table2x2, cost_fn: Any, cost_fp: Any) -> Any:
    return C.table_cost_error(ops, t.counts, t.tn, cost_fn, cost_fp)


#: name -> (summary, build, params, aliases)
MEASURES: dict[str, tuple[str, Callable[..., Any], tuple[Param, ...], tuple[str, ...]]] = {
    "binary_precision": ("tp / (tp + fp): the lecture's prel.", _precision, (ZD,), ("prel",)),
    "binary_recall": ("tp / (tp + fn): the lecture's sens.", _recall, (ZD,), ("sens",)),
    "binary_specificity": ("tn / (tn + fp): the lecture's spec.", _specificity, (ZD,), ("spec",)),
    "binary_negative_predictive_value": (
        "tn / (tn + fn): the lecture's nrel.",
        _npv,
        (ZD,),
        ("nrel",),
    ),
    "binary_support": (
        "tp / n: the lecture's sup (a rule's support), not scikit-learn's count.",
        _support,
        (),
        ("sup",),
    ),
    "binary_accuracy": ("(tp + tn) / n: the lecture's tacc.", _accuracy, (), ("tacc",)),
    "binary_coverage": (
        "(tp + fp) / n: share predicted positive, the lecture's cov.",
        _coverage,
        (),
        ("cov",),
    ),
    "binary_error_rate": ("(fp + fn) / n: 1 - accuracy.", _error_rate, (), ()),
    "binary_fbeta": ("F-beta of the positive class, from counts.", _fbeta, (BETA, ZD), ()),
    "binary_f1": ("F1 of the positive class, from counts.", _f1, (ZD,), ()),
    "binary_f_alpha": (
        "The lecture's F_alpha = (alpha + 1) P R / (alpha P + R): F-beta with alpha = beta².",
        _f_alpha,
        (ALPHA, ZD),
        (),
    ),
    "binary_kappa": ("Cohen's kappa of the 2x2 table.", _kappa, (ZD,), ()),
    "binary_kappa_std_error": (
        "Cohen's kappa's asymptotic standard error: statsmodels' cohens_kappa std_kappa.",
        _kappa_std_error,
        (),
        (),
    ),
    "binary_kappa_z_value": (
        "kappa / its standard error under kappa = 0: statsmodels' cohens_kappa z_value.",
        _kappa_z_value,
        (),
        (),
    ),
    "binary_kappa_p_value": (
        "Two-sided p-value of kappa = 0: statsmodels' cohens_kappa pvalue_two_sided.",
        _kappa_p_value,
        (),
        (),
    ),
    "binary_kappa_p_value_one_sided": (
        "One-sided p-value of kappa = 0 against kappa > 0, P(Z > z): statsmodels' cohens_kappa "
        "pvalue_one_sided.",
        _kappa_p_value_one_sided,
        (),
        (),
    ),
    "binary_mcnemar_statistic": (
        "McNemar's chi-square (|fp - fn| - correction)² / (fp + fn): statsmodels' "
        "mcnemar(exact=False).statistic.",
        _mcnemar_statistic,
        (CORRECTION,),
        (),
    ),
    "binary_mcnemar_p_value": (
        "McNemar's chi-square test's p-value (one degree of freedom): statsmodels' "
        "mcnemar(exact=False).pvalue.",
        _mcnemar_p_value,
        (CORRECTION,),
        (),
    ),
    "binary_false_negative_rate": (
        "fn / (tp + fn): the positive class's error rate (1 - recall).",
        _fnr,
        (ZD,),
        (),
    ),
    "binary_false_positive_rate": (
        "fp / (fp + tn): the negative class's error rate (1 - specificity).",
        _fpr,
        (ZD,),
        (),
    ),
    "binary_cost_error": (
        "(cost_fn fn + cost_fp fp) / n: the error weighted by the cost of each mistake.",
        _cost_error,
        COSTS,
        (),
    ),
}

for _name, (_summary, _build, _params, _aliases) in MEASURES.items():
    measure(
        _name,
        "aggregate",
        FAMILY,
        _summary,
        params=_params,
        aliases=_aliases,
    )(_build)
    measure(
        f"{_name}_from_counts",
        "from_counts",
        FAMILY,
        f"{_name} of stored counts tp, fp, fn, tn.",
        inputs=COUNT_INPUTS,
        params=_params,
    )(_build)


@measure(
    "binary_counts",
    "counts",
    FAMILY,
    "Struct of tp, fp, fn, tn over rows (true / 1 positive): store it, sum it later.",
)
def counts_fields(ops: Any, t: Table2x2) -> dict[str, Any]:
    """The ``binary_counts`` struct's fields: the four cells summed over rows."""
    return {name: getattr(t, name) for name in COUNTS_FIELDS}
