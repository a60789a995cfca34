"""The exception mlsql raises for bad input, in every engine."""

from __future__ import annotations


class MlsqlError(ValueError):
    """Bad input to an mlsql function: says what was wrong and what is allowed.

    Examples
    --------
    >>> from mlsql import MlsqlError
    >>> issubclass(MlsqlError, ValueError)
    True
    """
