"""Parameters of the single-label, binary, score and regression families: checks and messages.

Python engines call the ``check_*`` functions; the SQL library embeds the same
message texts in its ``error()`` calls, so every engine says the same words
(scikit-learn's shape: "The 'average' parameter of f1_score must be one of
'micro', 'macro', 'weighted'. Got 'samples' instead.").
"""

from __future__ import annotations

import math
from typing import Any

from mlsql._errors import MlsqlError

#: averages over classes of the multiclass precision_score, recall_score, f1_score, fbeta_score
AVERAGES = ("micro", "macro", "weighted")
#: weights of cohen_kappa_score ('none' is what NULL / None become)
WEIGHTS = ("none", "linear", "quadratic")
#: what binary inputs may hold
BINARY_VALUES = "boolean or 0/1"


def choice_message(func: str, name: str, allowed: tuple[str, ...], got: str) -> str:
    """The error text for a parameter outside ``allowed``."""
    listed = ", ".join(f"'{a}'" for a in allowed)
    return f"The '{name}' parameter of {func} must be one of {listed}. Got {got} instead."


def positive_message(func: str, name: str, got: str) -> str:
    """The error text for a parameter that must be a finite number > 0."""
    return f"The '{name}' parameter of {func} must be a finite number > 0. Got {got} instead."


def number_message(func: str, name: str, got: str) -> str:
    """The error text for a parameter that must be a finite number."""
    return f"The '{name}' parameter of {func} must be a finite number. Got {got} instead."


#: how each engine names a value that is not finite in :func:`finite_value_message`
NOT_FINITE = ("NaN", "inf", "-inf")


def finite_value_message(func: str, name: str, got: str) -> str:
    """The error text for a NaN or infinite number among a measure's inputs (one of NOT_FINITE).

    Every score and regression measure refuses them, as scikit-learn does: a NaN
    score has no rank and no loss, an infinite one no difference.
    """
    return (
        f"{func} takes finite numbers for {name}: NaN and infinite values are errors "
        f"(as in scikit-learn). Got {got}."
    )


#: how each engine names a probability outside [0, 1] in :func:`probability_value_message`
OUT_OF_RANGE = ("below 0", "above 1")


def probability_value_message(func: str, name: str, got: str) -> str:
    """The error text for a probability outside [0, 1] (``got`` is one of OUT_OF_RANGE).

    Examples
    --------
    >>> probability_value_message("brier_score_loss", "prob", "above 1")
    'brier_score_loss takes probabilities in [0, 1] for prob (as scikit-learn). Got a value above 1.'
    """
    return f"{func} takes probabilities in [0, 1] for {name} (as scikit-learn). Got a value {got}."


def n_bins_message(func: str, got: str) -> str:
    """The error text for an invalid ``n_bins``."""
    return f"The 'n_bins' parameter of {func} must be a whole number > 0. Got {got} instead."


def binary_value_message(func: str, got: str) -> str:
    """The error text for a binary input holding something else than true/false or 0/1."""
    return f"{func} takes {BINARY_VALUES} values. Got {got} instead."


#: Hivemall calls its ranking AUC over arrays ``auc`` too; a list given to these says where it is
RANKING_AUC_FUNCS = ("auc", "roc_auc_score")
RANKING_AUC_HINT = (
    " Hivemall's auc over ranked arrays, auc(rank_items, correct_items[, k]), is ranking_auc."
)


def binary_type_message(func: str, name: str, got: str, *, is_list: bool = False) -> str:
    """The error text for a binary input of a type that cannot hold true/false or 0/1.

    Examples
    --------
    >>> binary_type_message("auc", "actual", "List(String)", is_list=True)
    "auc takes boolean or 0/1 values for actual. Got actual List(String). Hivemall's auc over ranked arrays, auc(rank_items, correct_items[, k]), is ranking_auc."
    """
    hint = RANKING_AUC_HINT if is_list and func in RANKING_AUC_FUNCS else ""
    return f"{func} takes {BINARY_VALUES} values for {name}. Got {name} {got}.{hint}"


def number_type_message(func: str, name: str, got: str) -> str:
    """The error text for a numeric input of another type."""
    return f"{func} takes numbers for {name}. Got {name} {got}."


def check_average(average: Any, func: str) -> str:
    """Validate ``average`` (micro, macro or weighted).

    Examples
    --------
    >>> check_average("macro", "f1_score")
    'macro'
    """
    if isinstance(average, str) and average.lower() in AVERAGES:
        return average.lower()
    raise MlsqlError(choice_message(func, "average", AVERAGES, repr(average)))


def check_weights(weights: Any, func: str) -> str:
    """Validate kappa's ``weights`` (None, 'linear', 'quadratic'); None becomes 'none'.

    Examples
    --------
    >>> check_weights(None, "cohen_kappa_score"), check_weights("linear", "kappa")
    ('none', 'linear')
    """
    if weights is None:
        return "none"
    if isinstance(weights, str) and weights.lower() in WEIGHTS:
        return weights.lower()
    raise MlsqlError(choice_message(func, "weights", ("linear", "quadratic"), repr(weights)))


def check_positive(value: Any, name: str, func: str) -> float:
    """Validate a finite number > 0 (F_alpha's ``alpha``).

    Examples
    --------
    >>> check_positive(2, "alpha", "binary_f_alpha")
    2.0
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MlsqlError(positive_message(func, name, repr(value)))
    if not math.isfinite(value) or value <= 0:
        raise MlsqlError(positive_message(func, name, repr(value)))
    return float(value)


def check_number(value: Any, name: str, func: str) -> float:
    """Validate a finite number (a cost).

    Examples
    --------
    >>> check_number(5, "cost_fn", "binary_cost_error")
    5.0
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise MlsqlError(number_message(func, name, repr(value)))
    return float(value)


def check_n_bins(value: Any, func: str) -> int:
    """Validate ``n_bins``: a whole number > 0 (an integral float is accepted).

    Examples
    --------
    >>> check_n_bins(10, "expected_calibration_error")
    10
    >>> check_n_bins(0, "expected_calibration_error")
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'n_bins' parameter of expected_calibration_error must be a whole number > 0. Got 0 instead.
    """
    ok = not isinstance(value, bool) and isinstance(value, (int, float))
    if ok and isinstance(value, float):
        ok = math.isfinite(value) and value == int(value)
    if not ok or value < 1:
        raise MlsqlError(n_bins_message(func, repr(value)))
    return int(value)
