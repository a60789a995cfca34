"""Value checks of Polars inputs: once per query, on a few aggregated values.

Some inputs are refused for their values, not their types: NaN or infinite
numbers, a binary flag other than 0/1, a probability outside [0, 1], a
negative weight. Polars has no error expression, so raising
:class:`~mlsql.MlsqlError` takes a Python call. As an elementwise
``map_batches`` on the input, that call runs at every reference of the input
(Polars does not merge Python functions as common subexpressions) and, on the
streaming engine, once per batch on a blocking thread: the regression measures
read their inputs about a dozen times, so ``mse`` cost 57x and ``r2`` 150x a
plain expression at 10M rows, and a select of 20 of them ran out of Polars'
512 blocking threads.

Inside a measure (:func:`collecting`, entered where the measure's expression
is built), a check records instead the first offending value of the input, an
aggregate Polars computes with the measure, and :func:`gate` lets the
measure's value through one Python call on those few values, which raises on
the first input that has one. A table can do the same over the rows it counts
(:func:`refused_columns`, :func:`refuse`): each check's offending value (or
NULL) a column of the rows, its first per counted group an aggregate, and one
Python call per batch of the small counted table; the per-label curves and
thresholds do, as the per-batch call on every row took memory growing with
the rows on the streaming engine. Elsewhere outside a measure (the other table
functions) the check stays an elementwise ``map_batches``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import polars as pl

from mlsql._errors import MlsqlError


@dataclass(frozen=True)
class Pending:
    """One input's check in a measure: its first offending value, and the message of it;
    ``offending``: the input where it is refused, else NULL (elementwise)."""

    first: pl.Expr
    message: Callable[[Any], str]
    offending: pl.Expr | None = None


_PENDING: ContextVar[list[Pending] | None] = ContextVar("mlsql_polars_checks", default=None)


def checked(
    values: pl.Expr, bad: Callable[[pl.Expr], pl.Expr], message: Callable[[Any], str]
) -> pl.Expr:
    """``values``, refused where ``bad(values)`` is true with ``message(value)``.

    Parameters
    ----------
    values : polars.Expr
        The input, as the measure reads it.
    bad : callable
        ``bad(x)``: a boolean expression, true where a value of ``x`` is refused
        (false or NULL elsewhere).
    message : callable
        The error message for the first refused value.

    Returns
    -------
    polars.Expr
        ``values`` itself inside :func:`collecting` (the check then joins the
        measure's :func:`gate`), else ``values`` through an elementwise check.

    Examples
    --------
    >>> import polars as pl
    >>> x = checked(pl.col("x"), lambda v: v < 0, lambda v: f"x must be >= 0, got {v}")
    >>> pl.DataFrame({"x": [1, 2]}).select(x)["x"].to_list()
    [1, 2]
    >>> pl.DataFrame({"x": [1, -2]}).select(x)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: x must be >= 0, got -2...
    """
    pending = _PENDING.get()
    if pending is not None:
        refused = bad(values)
        pending.append(
            Pending(values.filter(refused).first(), message, pl.when(refused).then(values))
        )
        return values

    def check(batch: pl.Series) -> pl.Series:
        found = batch.filter(pl.select(bad(pl.lit(batch))).to_series().fill_null(False))
        if len(found):
            raise MlsqlError(message(found[0]))
        return batch

    return values.map_batches(check, is_elementwise=True, return_dtype=pl.self_dtype())


def refused_first(result: pl.Expr, first: pl.Expr, message: Callable[[Any], str]) -> pl.Expr:
    """``result``, refused with ``message(value)`` when ``first`` (an aggregate: the first
    offending value, NULL where none) is not NULL.

    For a measure that finds its offending values itself, in one pass with its other
    statistics (a :func:`checked` input would be read again for its check): inside
    :func:`collecting` the check joins the measure's :func:`gate` in order, else it gates
    ``result`` at once.

    Examples
    --------
    >>> import polars as pl
    >>> x = pl.col("x")
    >>> out = refused_first(x.sum(), x.filter(x < 0).first(), lambda v: f"x < 0: got {v}")
    >>> pl.DataFrame({"x": [1, 2]}).select(out).item()
    3
    >>> pl.DataFrame({"x": [1, -2]}).select(out)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: x < 0: got -2...
    """
    pending = _PENDING.get()
    if pending is not None:
        pending.append(Pending(first, message))
        return result
    return gate(result, [Pending(first, message)])


def refused_columns(pending: list[Pending], prefix: str) -> dict[str, Pending]:
    """Each check of ``pending`` (from :func:`collecting`) as a column name of ``prefix``
    (for :func:`refuse`), in the order the checks were made."""
    return {f"{prefix}{i}": p for i, p in enumerate(pending)}


def refuse(counted: pl.LazyFrame, refused: dict[str, Pending], guarded: str) -> pl.LazyFrame:
    """``counted`` without the ``refused`` columns, after one check of them: each holds a
    check's first offending value per counted row (``first(ignore_nulls=True)`` of the
    rows' :attr:`Pending.offending`), and the first check (in order) holding one raises.
    Column ``guarded`` (one the result needs, so the check is never pruned) passes through
    the check.

    Examples
    --------
    >>> import polars as pl
    >>> with collecting() as pending:
    ...     x = checked(pl.col("x"), lambda v: ~v.is_finite(), lambda v: f"x: got {v}")
    >>> refused = refused_columns(pending, "bad")
    >>> rows = pl.LazyFrame({"g": [1, 1, 2], "x": [1.0, 2.0, 3.0]})
    >>> def counted(rows):
    ...     cols = {c: p.offending for c, p in refused.items()}
    ...     firsts = [pl.col(c).first(ignore_nulls=True) for c in refused]
    ...     return rows.with_columns(**cols).group_by("g").agg(x.sum(), *firsts)
    >>> refuse(counted(rows), refused, "x").sort("g").collect().rows()
    [(1, 3.0), (2, 3.0)]
    >>> bad = rows.with_columns(x=pl.Series([1.0, float("inf"), 3.0]))
    >>> refuse(counted(bad), refused, "x").collect()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: x: got inf...
    """
    if not refused:
        return counted
    names = list(refused)

    def check(rows: pl.Series) -> pl.Series:
        for name in names:
            found = rows.struct.field(name).drop_nulls()
            if len(found):
                raise MlsqlError(refused[name].message(found[0]))
        return pl.Series(rows.name, [True] * len(rows), pl.Boolean)

    ok = pl.struct(names).map_batches(check, return_dtype=pl.Boolean, is_elementwise=True)
    return counted.with_columns(pl.when(ok).then(pl.col(guarded)).alias(guarded)).drop(names)


@contextmanager
def collecting() -> Iterator[list[Pending]]:
    """Within: :func:`checked` records its check in the list yielded, for :func:`gate`."""
    pending: list[Pending] = []
    token = _PENDING.set(pending)
    try:
        yield pending
    finally:
        _PENDING.reset(token)


def gate(result: pl.Expr, pending: list[Pending]) -> pl.Expr:
    """``result``, after one check of the first offending value of each input.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"x": [1.0, float("inf")]})
    >>> with collecting() as pending:
    ...     x = checked(pl.col("x"), lambda v: ~v.is_finite(), lambda v: f"x: got {v}")
    >>> df.select(gate(x.sum(), pending))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: x: got inf...
    """
    if not pending:
        return result
    messages = [p.message for p in pending]
    firsts = pl.struct([p.first.alias(f"v{i}") for i, p in enumerate(pending)])

    def check(rows: pl.Series) -> pl.Series:
        for i, message in enumerate(messages):
            found = rows.struct.field(f"v{i}").drop_nulls()
            if len(found):
                raise MlsqlError(message(found[0]))
        return pl.Series(rows.name, [True] * len(rows), pl.Boolean)

    ok = firsts.map_batches(check, return_dtype=pl.Boolean, is_elementwise=True)
    return pl.when(ok).then(result)
