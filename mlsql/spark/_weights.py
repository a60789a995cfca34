"""``sample_weight`` in Spark: the weight's check and the rows it leaves known.

The front (:func:`mlsql._front.build.function`) hands a weighted measure's
weight to :func:`weighted_check` as one more input: it must be of a number type
(a Column of a DataFrame is checked when the function is called, a name or an
expression when the query runs, with the same message); every non-NULL weight must be a finite number >= 0 (Spark's
``raise_error`` with :data:`mlsql._params.SAMPLE_WEIGHT_MESSAGE` as it reads
it), and a row whose weight is NULL is unknown: the other inputs are NULL there.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql import _classification_params as CP
from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql.spark._build import Check
from mlsql.spark._types import data_type


def weight(func: str, w: Column, dtype: T.DataType | None = None) -> Column:
    """The weight as DOUBLE; a NaN, infinite or negative one raises when read (NULL stays NULL).

    ``dtype``: the weight's type where the caller knows it (a DataFrame's schema), else
    the Column's own where Spark has resolved it; no number type is an error now. A weight of
    a type unknown here is checked in the query, with the same message.
    """
    dtype = data_type(w) if dtype is None else dtype
    if dtype is not None and not isinstance(dtype, (T.NumericType, T.NullType)):
        raise MlsqlError(CP.number_type_message(func, "sample_weight", dtype.simpleString()))
    d = (w if dtype is not None else _number_typed(func, w)).cast("double")
    nan, inf, minus_inf, negative = (F.lit(x) for x in P.SAMPLE_WEIGHT_GOT)
    got = (
        F.when(F.isnan(d), nan)
        .when(d == float("inf"), inf)
        .when(d == float("-inf"), minus_inf)
        .otherwise(negative)
    )
    before, after = P.sample_weight_message(func, "{}").split("{}")
    bad = F.isnan(d) | d.isin(float("inf"), float("-inf")) | (d < 0)
    return F.when(bad, F.raise_error(F.concat(F.lit(before), got, F.lit(after)))).otherwise(d)


#: Spark's ``typeof`` of a number type (or of an all-NULL input)
_NUMBER = r"tinyint|smallint|int|bigint|float|double|decimal\(\d+,\d+\)|void"


def _number_typed(func: str, w: Column) -> Column:
    """``w``, or Spark's ``raise_error`` with the number-type message if its type is no number.

    For a weight whose type Spark resolves only when it plans the query (a name, ``F.col``, an
    expression): ``typeof`` folds to a constant then, so the check costs nothing per row, and
    a text or boolean weight is refused rather than cast.
    """
    before, after = CP.number_type_message(func, "sample_weight", "{}").split("{}")
    t = F.typeof(w)
    bad = F.raise_error(F.concat(F.lit(before), t, F.lit(after)))
    return F.when(t.rlike(f"^({_NUMBER})$"), w).otherwise(bad)


def weighted_check(check: Check | None) -> Check:
    """``check`` of the inputs, then the weight (last); inputs NULL where the weight is NULL."""

    def checked(func: str, names: Sequence[str], cols: Sequence[Column]) -> list[Column]:
        w = cols[-1]
        inputs = list(cols[:-1])
        if check is not None:
            inputs = list(check(func, names[:-1], inputs) or inputs)
        present = w.isNotNull()
        return [*(F.when(present, c) for c in inputs), weight(func, w)]

    return checked
