"""Parameter validation shared by every engine: one message shape everywhere.

Messages follow scikit-learn's shape: "The 'beta' parameter of fbeta must be
a finite number > 0. Got -1 instead." The SQL generator embeds the same texts
in the macros' ``error()`` calls, so DuckDB users read the same words.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from mlsql._errors import MlsqlError

ZERO_DIVISION_CHOICES = ("0", "1", "nan", "'diagnose'", "'ignore'")
HIVEMALL_AVERAGES = ("micro", "binary")


def beta_message(func: str, got: str) -> str:
    """Return the error text for an invalid ``beta``."""
    return f"The 'beta' parameter of {func} must be a finite number > 0. Got {got} instead."


def zero_division_message(func: str, got: str) -> str:
    """Return the error text for an invalid ``zero_division``."""
    allowed = ", ".join(ZERO_DIVISION_CHOICES)
    return f"The 'zero_division' parameter of {func} must be one of {allowed}. Got {got} instead."


def check_beta(beta: Any, func: str) -> float:
    """Validate ``beta`` and return it as a float.

    Examples
    --------
    >>> check_beta(2, "micro_fbeta")
    2.0
    """
    if isinstance(beta, bool) or not isinstance(beta, (int, float)):
        raise MlsqlError(beta_message(func, repr(beta)))
    value = float(beta)
    if not math.isfinite(value) or value <= 0:
        raise MlsqlError(beta_message(func, repr(beta)))
    return value


@dataclass(frozen=True)
class ZeroDivision:
    """A validated ``zero_division`` convention.

    ``kind`` is one of ``"value"`` (0 or 1), ``"nan"``, ``"diagnose"`` or
    ``"ignore"``; ``value`` holds 0.0 or 1.0 for ``"value"``.
    """

    kind: str
    value: float = 0.0

    @property
    def skips_undefined(self) -> bool:
        """Whether averages leave undefined ratios out (NaN and 'ignore')."""
        return self.kind in ("nan", "ignore")


def check_zero_division(zero_division: Any, func: str) -> ZeroDivision:
    """Validate ``zero_division`` (0, 1, NaN, 'diagnose', 'ignore').

    Examples
    --------
    >>> check_zero_division("diagnose", "samples_f1").kind
    'diagnose'
    >>> check_zero_division(float("nan"), "samples_f1").kind
    'nan'
    """
    if isinstance(zero_division, str):
        text = zero_division.strip().lower()
        if text in ("diagnose", "ignore"):
            return ZeroDivision(text)
        if text == "nan":
            return ZeroDivision("nan")
    elif not isinstance(zero_division, bool) and isinstance(zero_division, (int, float)):
        if isinstance(zero_division, float) and math.isnan(zero_division):
            return ZeroDivision("nan")
        if zero_division in (0, 1):
            return ZeroDivision("value", float(zero_division))
    raise MlsqlError(zero_division_message(func, repr(zero_division)))


def check_n_labels(n_labels: Any, func: str) -> int:
    """Validate the size of the label universe (a whole number > 0)."""
    if isinstance(n_labels, bool) or not isinstance(n_labels, int) or n_labels <= 0:
        raise MlsqlError(
            f"The 'n_labels' parameter of {func} must be a whole number > 0. "
            f"Got {n_labels!r} instead."
        )
    return n_labels


N_LABELS_TOO_SMALL_MESSAGE = (
    "The 'n_labels' parameter of {func} must be at least the number of distinct labels in "
    "each row's actual and predicted lists together (the size of the label universe). "
    "Got {{}}, fewer than a row holds."
)


# ---------------------------------------------------------------- Hivemall options

OPTIONS_MESSAGE = (
    "fmeasure options must look like Hivemall's '-beta 2. -average micro' "
    "(options: -beta B, -average micro|binary). Got {got} instead."
)
AVERAGE_MACRO_MESSAGE = (
    '"-average macro" is not supported by fmeasure (as in Hivemall); '
    "use macro_fbeta or multilabel_report for the macro average."
)
AVERAGE_MESSAGE = "The -average option of fmeasure must be one of micro, binary. Got {got} instead."
BINARY_ON_ARRAYS_MESSAGE = (
    '"-average binary" is not supported when actual and predicted are arrays '
    "(as in Hivemall); use -average micro."
)
INT_LABEL_MESSAGE = "fmeasure takes int labels 1, 0 or -1 (as Hivemall). Got {got} instead."
HIVEMALL_TYPE_MESSAGE = (
    "fmeasure needs actual and predicted of one kind: both label arrays (text or integers), "
    "both int (1, 0, -1) or both boolean. Got actual {actual} and predicted {predicted}."
)
OPTIONS_PATTERN = r"\s*((--?beta\s+\S+|--?average\s+\S+)\s*)*"


@dataclass(frozen=True)
class HivemallOptions:
    """Parsed ``fmeasure`` options."""

    beta: float = 1.0
    average: str = "micro"


def parse_hivemall_options(options: str | None) -> HivemallOptions:
    """Parse Hivemall's ``fmeasure`` option string.

    Examples
    --------
    >>> parse_hivemall_options("-beta 2. -average binary")
    HivemallOptions(beta=2.0, average='binary')
    """
    if options is None:
        return HivemallOptions()
    if not isinstance(options, str) or not re.fullmatch(OPTIONS_PATTERN, options):
        raise MlsqlError(OPTIONS_MESSAGE.format(got=repr(options)))
    beta_match = re.search(r"--?beta\s+(\S+)", options)
    beta = 1.0
    if beta_match:
        try:
            beta = float(beta_match.group(1))
        except ValueError:
            raise MlsqlError(beta_message("fmeasure", repr(beta_match.group(1)))) from None
        check_beta(beta, "fmeasure")
    average_match = re.search(r"--?average\s+(\S+)", options)
    average = average_match.group(1) if average_match else "micro"
    if average == "macro":
        raise MlsqlError(AVERAGE_MACRO_MESSAGE)
    if average not in HIVEMALL_AVERAGES:
        raise MlsqlError(AVERAGE_MESSAGE.format(got=repr(average)))
    return HivemallOptions(beta, average)


def check_by(by: Any, func: str) -> list[str]:
    """Validate ``by`` (a column name or names) and return it as a list (empty for None).

    Examples
    --------
    >>> check_by("model", "label_metrics")
    ['model']
    >>> check_by(None, "label_metrics")
    []
    """
    if by is None:
        return []
    names = [by] if isinstance(by, str) else list(by)
    if not all(isinstance(n, str) and n for n in names):
        raise MlsqlError(
            f"The 'by' parameter of {func} must be column names (strings). Got {by!r} instead."
        )
    return names


def check_sql_name(value: Any, param: str, func: str, *, empty: bool = False) -> str:
    """Validate a name that becomes part of SQL text (a prefix, a schema).

    Letters, digits and underscores only (a schema must not start with a
    digit), so the name can never be read as anything but a name.

    Examples
    --------
    >>> check_sql_name("ml_", "prefix", "register", empty=True)
    'ml_'
    >>> check_sql_name("x; DROP TABLE t", "prefix", "register", empty=True)
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'prefix' parameter of register must be letters, digits or underscores. Got 'x; DROP TABLE t' instead.
    """
    pattern = r"[A-Za-z0-9_]*" if empty else r"[A-Za-z_][A-Za-z0-9_]*"
    if isinstance(value, str) and re.fullmatch(pattern, value):
        return value
    rule = "letters, digits or underscores" + ("" if empty else ", not starting with a digit")
    raise MlsqlError(f"The '{param}' parameter of {func} must be {rule}. Got {value!r} instead.")


def clash_message(where: str, names: list[str], beside: str) -> str:
    """The error text when mlsql's functions would replace functions of the user's.

    Examples
    --------
    >>> clash_message("on this connection", ["micro_f1"], "prefix='ml_'")
    "mlsql would replace functions already defined on this connection: micro_f1. Pass replace=True to replace them, or prefix='ml_' to install beside them."
    """
    return (
        f"mlsql would replace functions already defined {where}: {', '.join(names)}. "
        f"Pass replace=True to replace them, or {beside} to install beside them."
    )
