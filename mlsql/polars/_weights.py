"""``sample_weight`` in Polars: the weight's check and the rows it leaves known.

The front (:func:`mlsql._front.build.function`) hands a weighted measure's
weight to :func:`weighted_check` as one more input: it must be numeric (plan
time), every non-NULL weight a finite number >= 0 (checked once per query,
:mod:`mlsql.polars._checks`, :data:`mlsql._params.SAMPLE_WEIGHT_MESSAGE`), and a row
whose weight is NULL is unknown: the other inputs are NULL there.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from mlsql import _classification_params as CP
from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql.polars._checks import checked
from mlsql.polars._dtypes import Check, Pairs


def weight(func: str, expr: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """The weight as Float64, checked (numeric type; finite and >= 0 where not NULL)."""
    if not (dtype.is_numeric() or dtype == pl.Null):
        raise MlsqlError(CP.number_type_message(func, "sample_weight", str(dtype)))
    as_float = expr.cast(pl.Float64)
    return checked(
        as_float,
        lambda v: ~(v.is_finite() & (v >= 0)),
        lambda got: P.sample_weight_message(func, P.sample_weight_got(got)),
    )


def weighed_and_known(w: pl.Expr, *known: pl.Expr) -> pl.Expr:
    """True on a row weighing more than 0 where every ``known`` holds (a table's known rows).

    One conditional that tests the weight first: Polars does not push the ``known`` tests
    below the weight's check, so every row's weight is checked, a known row's or not.
    """
    return pl.when(w > 0).then(pl.all_horizontal(known)).otherwise(False)


def weighted_check(check: Check) -> Check:
    """``check`` of the inputs, then the weight (last); inputs NULL where the weight is NULL."""

    def checked(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
        w, dtype = pairs[-1]
        present = w.is_not_null()
        inputs: Pairs = [(pl.when(present).then(e).otherwise(None), d) for e, d in pairs[:-1]]
        return [*check(func, names[:-1], inputs), weight(func, w, dtype)]

    return checked
