"""The checked inputs of the ibis lowerings: 0/1 flags and finite numbers, with every
engine's messages."""

from __future__ import annotations

import ibis
import ibis.expr.types as ir

from mlsql import _classification_params as CP
from mlsql._errors import MlsqlError
from mlsql._ibis.ops import FLOAT, Checks, null


def binary_flag(func: str, name: str, column: ir.Column, checks: Checks) -> ir.FloatingValue:
    """A boolean or 0/1 input as 1.0/0.0 (NULL stays NULL; doubles, as :mod:`.stats` says why); another value fails the query with
    every engine's message (the smallest bad value is named), another type at once."""
    dtype = column.type()
    if dtype.is_boolean() or dtype.is_null():
        positive = column.cast("boolean")
    elif dtype.is_numeric():
        bad = column.notnull() & (column != 0) & (column != 1)
        checks.add_code(
            bad.ifelse(column, null(dtype)), lambda got: CP.binary_value_message(func, str(got))
        )
        positive = column == 1
    else:
        raise MlsqlError(CP.binary_type_message(func, name, str(dtype), is_list=dtype.is_array()))
    return ibis.cases((positive, 1.0), (~positive, 0.0), else_=null())


def finite_number(func: str, name: str, column: ir.Column, checks: Checks) -> ir.FloatingValue:
    """A numeric input as a double; a NaN or infinite value fails the query with every
    engine's message (NaN named first, then inf, -inf), another type at once."""
    dtype = column.type()
    if not (dtype.is_numeric() or dtype.is_null()):
        raise MlsqlError(CP.number_type_message(func, name, str(dtype)))
    x = column.cast(FLOAT)
    code = ibis.cases((x.isnan(), 1), (x.isinf() & (x > 0), 2), (x.isinf(), 3), else_=null("int8"))
    checks.add_code(code, lambda c: CP.finite_value_message(func, name, CP.NOT_FINITE[int(c) - 1]))
    return x
