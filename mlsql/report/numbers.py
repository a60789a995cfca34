"""How numbers and cells read in every format."""

from __future__ import annotations

import math
from typing import Any

MISSING = "–"


#: how a NULL group or model value reads, in headings and table cells alike
NULL_KEY = "NULL"


def key_text(value: Any) -> str:
    """A group (or model) value as text: NULL spelt :data:`NULL_KEY`, not as a missing number.

    Examples
    --------
    >>> key_text(None), key_text("A"), key_text(3)
    ('NULL', 'A', '3')
    """
    return NULL_KEY if value is None else fmt(value, None)


def fmt(value: Any, digits: int | None = 4) -> str:
    """A cell as text: floats to ``digits`` places (``None``: every digit Python keeps).

    Examples
    --------
    >>> fmt(0.6956521739130435), fmt(0.6956521739130435, None), fmt(7), fmt(None)
    ('0.6957', '0.6956521739130435', '7', '–')
    """
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if digits is None or math.isinf(value):
            return repr(value)
        return f"{value:.{digits}f}"
    return str(value)


def sig(value: Any, digits: int = 4) -> str:
    """A number below 1 to ``digits`` significant digits, others as :func:`fmt` writes them.

    Intervals of small measures (a Hamming loss of 0.0009) need the digits
    that tell their ends apart, which fixed decimals drop.

    Examples
    --------
    >>> sig(0.000912345), sig(0.5), sig(12.5), sig(0.0), sig(None)
    ('0.0009123', '0.5000', '12.5000', '0.0000', '–')
    """
    if not isinstance(value, float) or not math.isfinite(value) or value == 0 or abs(value) >= 1:
        return fmt(value, digits)
    places = digits - 1 - math.floor(math.log10(abs(value)))
    return f"{value:.{min(max(places, digits), 17)}f}"


def finite_or_none(value: Any) -> Any:
    """``value`` with NaN and infinities as ``None`` (JSON has no NaN)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


def ratio(value: Any) -> float | None:
    """A number in [0, 1] for drawing, or ``None`` when it is missing or NaN."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if math.isnan(number):
        return None
    return min(max(number, 0.0), 1.0)
