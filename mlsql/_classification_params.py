"""Input messages of the single-label, binary, score and regression families.

Their parameters (average, weights, alpha, costs) are declared with their
constraints in :mod:`mlsql._params`; the texts here are about inputs, and the
SQL library embeds them in its ``error()`` calls, so every engine says the same words.
"""

from __future__ import annotations

#: what binary inputs may hold
BINARY_VALUES = "boolean or 0/1"


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
    'brier_score_loss takes probabilities in [0, 1] for prob. Got a value above 1.'
    """
    return f"{func} takes probabilities in [0, 1] for {name}. Got a value {got}."


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
