"""What the binary, rule and regression families share in Spark: input checks and parameters.

Inputs are checked where Spark lets mlsql see their types (Columns of a
DataFrame, see :mod:`mlsql.spark._types`): binary inputs must be boolean or
numeric, numbers numeric. A numeric binary input must hold 0 or 1: Spark
checks each value as it reads it (``raise_error`` with mlsql's message).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql import _classification_params as CP
from mlsql._errors import MlsqlError
from mlsql.spark._types import data_type


def binary_inputs(func: str, names: Sequence[str], cols: Sequence[Column]) -> None:
    """Columns of a DataFrame must be boolean or numeric (values are checked when read)."""
    for name, col in zip(names, cols, strict=True):
        binary_type(func, name, data_type(col))


def binary_type(func: str, name: str, dtype: T.DataType | None) -> None:
    """A binary input's type (None: unknown) must be boolean or numeric."""
    if dtype is not None and not isinstance(dtype, (T.BooleanType, T.NumericType, T.NullType)):
        is_list = isinstance(dtype, T.ArrayType)
        raise MlsqlError(CP.binary_type_message(func, name, dtype.simpleString(), is_list=is_list))


def numeric_inputs(func: str, names: Sequence[str], cols: Sequence[Column]) -> None:
    """Columns of a DataFrame must be numbers."""
    for name, col in zip(names, cols, strict=True):
        number_type(func, name, data_type(col))


def number_type(func: str, name: str, dtype: T.DataType | None) -> None:
    """A numeric input's type (None: unknown) must be numeric."""
    if dtype is not None and not isinstance(dtype, (T.NumericType, T.NullType)):
        raise MlsqlError(CP.number_type_message(func, name, dtype.simpleString()))


def finite(func: str, name: str, x: Column) -> Column:
    """``x`` as DOUBLE; a NaN or infinite value raises when read (NULL stays NULL)."""
    d = x.cast("double")
    text = CP.finite_value_message(func, name, "{}")
    before, after = text.split("{}")
    got = (
        F.when(F.isnan(d), F.lit(CP.NOT_FINITE[0]))
        .when(d > 0, F.lit(CP.NOT_FINITE[1]))
        .otherwise(F.lit(CP.NOT_FINITE[2]))
    )
    bad = F.raise_error(F.concat(F.lit(before), got, F.lit(after)))
    infinite = d.isin(float("inf"), float("-inf"))
    return F.when(F.isnan(d) | infinite, bad).otherwise(d)


def binary_flag(func: str, x: Column) -> Column:
    """1 for true / 1, 0 for false / 0, NULL for NULL; any other value raises when read."""
    text = CP.binary_value_message(func, "{}")
    before, after = text.split("{}")
    bad = F.raise_error(F.concat(F.lit(before), x.cast("string"), F.lit(after)))
    return (
        F.when(x.isNull(), F.lit(None))
        .when(x.cast("double") == 1, 1)
        .when(x.cast("double") == 0, 0)
        .otherwise(bad)
        .cast("long")
    )


def sql_from_counts(family: str) -> list[Any]:
    """The ``*_from_counts`` measures of a 2x2 family as Spark SQL functions of tp, fp, fn, tn.

    They are scalar (one row of stored counts in, a number out), so Spark SQL
    can hold them; the aggregates over boolean columns stay in the Python API.
    """
    from mlsql._registry import measures
    from mlsql._sqlexpr import Sql
    from mlsql.measures.contingency import Table2x2
    from mlsql.spark.sql import formula_function

    # DOUBLE, as the Column functions read them: BIGINT parameters truncated weighted counts
    # (precision 2/3 for 2.5 / 4.25) and overflowed in the formulas' sums and products
    cells = Table2x2(*(Sql(c) for c in ("tp", "fp", "fn", "tn")))
    inputs = ("tp DOUBLE", "fp DOUBLE", "fn DOUBLE", "tn DOUBLE")
    return [
        formula_function(m, cells, inputs)
        for m in measures(family=family)
        if m.kind == "from_counts" and m.build is not None and m.available_in("spark")
    ]
