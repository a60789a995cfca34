"""Scores against binary labels: log loss and ROC AUC, as aggregates needing no sorted input.

``logloss(actual, predicted)``: the mean of -(y ln p + (1 - y) ln(1 - p)), p
clipped to [1e-15, 1 - 1e-15] (Hivemall's clip); ``actual`` is boolean or 0/1,
``predicted`` the probability of the positive class.

``auc(actual, predicted)``: the area under the ROC curve of scores
``predicted`` for labels ``actual`` (boolean or 0/1), computed as the
Mann-Whitney statistic: the share of (positive, negative) pairs whose positive
scores higher, a tie counting one half, which is scikit-learn's
``roc_auc_score`` with ties. It needs no sorted input (Hivemall's ``auc``
does). DuckDB sorts the group's (score, label) pairs inside the aggregate, so
it holds the group's rows in memory (about 1.5 s per million rows on one
core); Polars ranks them (``rank('average')``); Spark collects and sorts them
inside the aggregate, holding the group's rows in memory as DuckDB does.

Notes
-----
- mlsql takes (actual, predicted). Hivemall's ``logloss(predicted, actual)``
  and ``auc(score, label)`` take the other order: that order is offered as
  ``hivemall_logloss`` and ``hivemall_auc``.
- AUC is undefined when the labels hold one class only: ``zero_division``
  (default 0; 'diagnose': 1; scikit-learn raises an error).
- Rows where either side is NULL are skipped; over none the result is NULL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsql import _formulas as F
from mlsql import _params as P
from mlsql._formulas import formula
from mlsql._registry import measure

E = Any  # an engine expression
FAMILY = "scores"
ZD = P.ZERO_DIVISION
#: Hivemall's clip of probabilities in logloss
CLIP = 1e-15


@dataclass(frozen=True)
class LossStats:
    """Known rows ``n`` and Σ over them of the clipped log loss."""

    n: E
    total_loss: E


@dataclass(frozen=True)
class RankStats:
    """Positive and negative rows and U = Σ over positives of (negatives scored lower + ties / 2)."""

    n_positive: E
    n_negative: E
    u: E


@formula
def log_loss_term(ops: Any, y: E, ln_p: E, ln_not_p: E) -> E:
    """-(y ln p + (1 - y) ln(1 - p)) of one row, given ln p and ln(1 - p) of the clipped p."""
    return -(y * ln_p + (1 - y) * ln_not_p)


@formula
def mann_whitney_auc(ops: Any, u: E, n_positive: E, n_negative: E, zero_division: Any) -> E:
    """U / (positives x negatives); undefined with one class ('diagnose': 1)."""
    return F.ratio(ops, u, n_positive * n_negative, zero_division, True)


def _logloss(ops: Any, s: LossStats) -> E:
    return F.share(ops, s.total_loss, s.n)


def _auc(ops: Any, s: RankStats, zero_division: Any) -> E:
    n = s.n_positive + s.n_negative
    value = mann_whitney_auc(ops, s.u, s.n_positive, s.n_negative, zero_division)
    return ops.when(n == 0, None, value)


measure(
    "logloss",
    "aggregate",
    FAMILY,
    "Mean log loss of probabilities (predicted) for binary labels (actual), clipped at 1e-15.",
    aliases=("log_loss",),
)(_logloss)
measure(
    "hivemall_logloss",
    "aggregate",
    FAMILY,
    "logloss in Hivemall's argument order: hivemall_logloss(predicted, actual).",
    inputs=("predicted", "actual"),
)(_logloss)
measure(
    "auc",
    "aggregate",
    FAMILY,
    "ROC AUC of scores (predicted) for binary labels (actual), ties counting one half.",
    params=(ZD,),
    aliases=("roc_auc_score",),
)(_auc)
measure(
    "hivemall_auc",
    "aggregate",
    FAMILY,
    "auc in Hivemall's argument order: hivemall_auc(score, label), no sorting needed.",
    inputs=("score", "label"),
    params=(ZD,),
)(_auc)
