"""SQL text that needs no tree: identifiers, and Python values as each dialect writes them.

:mod:`mlsql._sqldialects` writes the values of a formula's tree with these; code that only
needs one literal or one name (a slice's description) reads them here without sqlglot.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


def quote_ident(name: str) -> str:
    """Quote ``name`` as a SQL identifier (any text is safe).

    Examples
    --------
    >>> quote_ident('x"; DROP TABLE t; --')
    '"x""; DROP TABLE t; --"'
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"an identifier must be a non-empty string, got {name!r}")
    return '"' + name.replace('"', '""') + '"'


def quoted(text: str) -> str:
    """``text`` as a standard SQL string literal (quotes doubled).

    Examples
    --------
    >>> quoted("it's")
    "'it''s'"
    """
    return "'" + text.replace("'", "''") + "'"


def backslashed(text: str) -> str:
    """``text`` as a Spark SQL string literal (backslash escapes, Spark's default).

    Examples
    --------
    >>> print(backslashed("it's"))
    'it\\'s'
    """
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _value_writer(
    number: Callable[[float], str], special: Callable[[float], str], string: Callable[[str], str]
) -> Callable[[Any], str]:
    """How a dialect writes a Python value: ``number`` a finite float, ``special`` NaN and the
    infinities, ``string`` a str; None, booleans and integers as SQL writes them everywhere."""

    def write(value: Any) -> str:
        if value is None:
            return "NULL"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        if isinstance(value, float):
            return number(value) if math.isfinite(value) else special(value)
        if isinstance(value, str):
            return string(value)
        raise TypeError(f"cannot write {type(value).__name__} as a SQL literal")

    return write


def _special_name(value: float, nan: str, inf: str) -> str:
    """NaN or a signed infinity, named ``nan`` or ``inf`` (with ``-``)."""
    return nan if math.isnan(value) else inf if value > 0 else "-" + inf


#: each dialect's writer of a Python value (:mod:`mlsql._sqldialects`)
WRITE_DUCKDB = _value_writer(repr, lambda v: f"'{_special_name(v, 'nan', 'inf')}'::DOUBLE", quoted)
#: floats are DOUBLE literals (``0.5D``; a bare ``0.5`` would be a DECIMAL)
WRITE_SPARK = _value_writer(lambda v: f"{v!r}D", lambda v: f"CAST('{v!r}' AS DOUBLE)", backslashed)
WRITE_POSTGRES = _value_writer(
    lambda v: f"{v!r}::float8",
    lambda v: f"'{_special_name(v, 'NaN', 'Infinity')}'::float8",
    quoted,
)
