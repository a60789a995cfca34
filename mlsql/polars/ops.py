"""The primitives the formulas need, for Polars.

:class:`PolarsOps` implements the ``Ops`` protocol of :mod:`mlsql._formulas`
with a *static* ``zero_division`` (a validated
:class:`~mlsql._params.ZeroDivision`, known when the expression is built), so
``skips_undefined`` is a real bool and averages under 0, 1 or 'diagnose' skip
the NaN bookkeeping entirely.

The same object works on two kinds of values:

- formula nodes (:class:`mlsql.polars._lowering.Node`), which
  :mod:`mlsql.polars._build` lowers so that every statistic is computed once
  (the streaming engine does not eliminate common subexpressions);
- plain ``pl.Expr``, for hand-written code (a family's own functions) that
  wants the formulas' primitives directly.

``sum`` follows SQL: NULL over no non-NULL values (Polars' own ``sum`` gives 0).
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from mlsql._params import ZeroDivision
from mlsql.polars import _lowering as S

#: ln Γ(3/2) = ln(√π / 2), the first term of a half-whole gamma series
LOG_GAMMA_3_2 = math.lgamma(1.5)


def _symbolic(*values: Any) -> bool:
    return any(isinstance(v, S.Node) for v in values)


def _expr(value: Any) -> pl.Expr:
    return value if isinstance(value, pl.Expr) else pl.lit(value)


def concat_lists(first: Any, *rest: pl.Expr) -> pl.Expr:
    """``pl.concat_list(first, *rest)``, a NULL list of ``rest`` read as an empty one.

    Polars 2.2 panics in ``lst_concat`` (a bitmap length assertion, or "validity mask
    length must match") when a list after the first is a NULL broadcast scalar, which the
    streaming engine's list functions (``list.unique``, ``list.eval``, ...) give for a batch
    whose lists are all NULL. Filled with [], no later list is NULL: a row whose later list
    is NULL then gets the earlier lists where ``concat_list`` gives NULL, so the callers
    use it where such a row is unknown (its value NULL) or left out. ``fill_null`` returns
    a batch without NULLs as it is; Polars 2.1 gives the same lists.

    Examples
    --------
    >>> df = pl.DataFrame({"a": [[1], [2], None]}).with_columns(
    ...     b=pl.lit(None, pl.List(pl.Int64))
    ... )
    >>> df.select(concat_lists(pl.col("a"), pl.col("b"))).to_series().to_list()
    [[1], [2], None]
    """
    return pl.concat_list(first, *(x.fill_null(pl.lit([])) for x in rest))


def _let(values: tuple[Any, ...], body: Any) -> pl.Expr:
    scope = pl.struct([_expr(v).alias(f"v{i}") for i, v in enumerate(values)])
    inner = body(*(pl.field(f"v{i}") for i in range(len(values)))).alias("__mlsql_in")
    return scope.struct.with_fields(inner).struct.field("__mlsql_in")


class PolarsOps:
    """Formula primitives for Polars.

    Examples
    --------
    >>> import polars as pl
    >>> from mlsql._params import check_zero_division
    >>> ops = PolarsOps()
    >>> pl.DataFrame({"x": [None, None]}).select(ops.sum(pl.col("x"))).item() is None
    True
    >>> ops.skips_undefined(check_zero_division("ignore", "samples_f1"))
    True
    """

    def when(self, condition: Any, then: Any, otherwise: Any) -> Any:
        """``then`` where ``condition`` holds, else ``otherwise`` (also where it is NULL)."""
        if _symbolic(condition, then, otherwise):
            return S.when(condition, then, otherwise)
        return pl.when(condition).then(_expr(then)).otherwise(_expr(otherwise))

    def undefined(self, zero_division: ZeroDivision, nothing_to_score: Any) -> Any:
        """The value of an undefined ratio under ``zero_division``."""
        if not isinstance(zero_division, ZeroDivision):
            raise TypeError("PolarsOps needs a validated ZeroDivision (mlsql._params)")
        return zero_division.undefined(self.when, nothing_to_score)

    def skips_undefined(self, zero_division: ZeroDivision) -> bool:
        """Whether averages leave undefined values out (NaN and 'ignore')."""
        return zero_division.skips_undefined

    def label_set(self, labels: pl.Expr) -> pl.Expr:
        """The list primitives of the set helpers (:class:`~mlsql.measures.multilabel.ListOps`)."""
        return labels.list.drop_nulls().list.unique().list.sort()

    def both(self, a: pl.Expr, b: pl.Expr) -> pl.Expr:
        return a.list.set_intersection(b)

    def only(self, a: pl.Expr, b: pl.Expr) -> pl.Expr:
        return a.list.set_difference(b)

    def either(self, a: pl.Expr, b: pl.Expr) -> pl.Expr:
        return a.list.set_union(b)

    def sum(self, x: Any) -> Any:
        """SQL ``sum``: NULL over no non-NULL values."""
        if _symbolic(x):
            return S.total(x)
        x = _expr(x)
        return pl.when(x.count() == 0).then(None).otherwise(x.sum())

    def mean(self, x: Any) -> Any:
        """SQL ``avg``: NULL over no non-NULL values."""
        return S.mean(x) if _symbolic(x) else _expr(x).mean()

    def count(self, x: Any) -> Any:
        """Non-NULL values of ``x``."""
        return S.count(x) if _symbolic(x) else _expr(x).count().cast(pl.Int64)

    def error_if(self, condition: Any, value: Any, template: str, got: Any) -> Any:
        """``value``; raises :class:`MlsqlError` (``template``, {} = ``got``) where ``condition``.

        Polars has no error expression: the condition is checked batch by batch
        as it streams (``map_batches``, elementwise) and the query fails at the first true.
        """
        message = template.format(got)
        if _symbolic(condition, value):
            return S.error_if(condition, value, message)
        return pl.when(S.raise_where(_expr(condition), message)).then(None).otherwise(_expr(value))

    def is_nan(self, x: Any) -> Any:
        """True where ``x`` is NaN (NULL stays NULL)."""
        return S.unary("is_nan", x) if _symbolic(x) else _expr(x).cast(pl.Float64).is_nan()

    def nan(self) -> Any:
        """NaN."""
        return float("nan")

    # beyond the core protocol: formulas of other families use these ---------------
    def log2(self, x: Any) -> Any:
        """Base-2 logarithm."""
        return S.unary("log2", x) if _symbolic(x) else _expr(x).cast(pl.Float64).log(2)

    def sqrt(self, x: Any) -> Any:
        """Square root."""
        return S.unary("sqrt", x) if _symbolic(x) else _expr(x).cast(pl.Float64).sqrt()

    def let(self, values: tuple[Any, ...], body: Any, name: str = "") -> Any:
        """``body(*values)``, computing each value once however often ``body`` names it."""
        return S.let(values, body) if _symbolic(*values) else _let(values, body)

    def exp(self, x: Any) -> Any:
        """e to the power ``x``."""
        return S.unary("exp", x) if _symbolic(x) else _expr(x).cast(pl.Float64).exp()

    def floor(self, x: Any) -> Any:
        """The largest whole number <= ``x`` (as a float)."""
        return S.unary("floor", x) if _symbolic(x) else _expr(x).cast(pl.Float64).floor()

    def let_series(self, values: tuple[Any, ...], body: Any, name: str = "") -> Any:
        """``body(*values)`` as it is: a body summing a series (:meth:`gamma_series`) inside
        :meth:`let`'s struct scope panics Polars 2.1 in ``group_by().agg``
        (``aggregated == self.is_scalar()``); Polars' common subexpressions compute each value
        once anyway."""
        return body(*values)

    def gamma_series(self, count: Any, a0: Any, y: Any) -> Any:
        """Σ_{i < count} y^(a0 + i) e^-y / Γ(a0 + i + 1) (``count`` whole, ``y`` > 0, ``a0`` 0
        or 1/2): each term's logarithm, (a0 + i) ln y - y - ln Γ(a0 + 1) - Σ_{j <= i} ln(a0 + j),
        from a running sum over a list per row (Polars has no lgamma)."""
        a0, y = _expr(a0).cast(pl.Float64), _expr(y).cast(pl.Float64)
        j = pl.int_ranges(1, _expr(count).cast(pl.Int64) + 1).cast(pl.List(pl.Float64)) + a0
        log_j = j.list.eval(pl.element().log())
        before = log_j.list.eval(pl.element().cum_sum()) - log_j  # Σ_{1 <= j' <= i} ln(a0 + j')
        log_gamma = pl.when(a0 > 0).then(LOG_GAMMA_3_2).otherwise(0.0)
        log_y = pl.when(y > 0).then(y).otherwise(1.0).log()
        logs = (j - 1.0) * log_y - y - log_gamma - before
        return logs.list.eval(pl.element().exp()).list.sum()

    def pow(self, base: Any, exponent: Any) -> Any:
        """``base ** exponent``."""
        if _symbolic(base, exponent):
            return S.binary("pow", base, exponent)
        return _expr(base).cast(pl.Float64).pow(_expr(exponent))


class GroupOps(PolarsOps):
    """:class:`PolarsOps` over one group's statistics read inside ``list.eval`` (each a
    scalar: an element of one list per group, as
    :func:`mlsql.polars.families.agreement.over_group` reads them), where a series of values
    needs no list per row: :meth:`gamma_series` sums the terms of an ``int_range``."""

    def gamma_series(self, count: Any, a0: Any, y: Any) -> Any:
        """:meth:`PolarsOps.gamma_series` as one series of ``count`` terms (a NULL
        ``count`` sums none)."""
        a0, y = _expr(a0).cast(pl.Float64), _expr(y).cast(pl.Float64)
        end = _expr(count).cast(pl.Int64).fill_null(0) + 1
        j = pl.int_range(1, end).cast(pl.Float64) + a0
        log_j = j.log()
        before = log_j.cum_sum() - log_j  # Σ_{1 <= j' <= i} ln(a0 + j')
        log_gamma = pl.when(a0 > 0).then(LOG_GAMMA_3_2).otherwise(0.0)
        log_y = pl.when(y > 0).then(y).otherwise(1.0).log()
        logs = (j - 1.0) * log_y - y - log_gamma - before
        return logs.exp().sum()


class FixedOrderPolarsOps(PolarsOps):
    """:class:`PolarsOps` whose sums and means add the values sorted, so a result is the same on every run.

    Polars sums floating-point values of a group in the order its rows reach
    the group-by, which varies from run to run with the threads (and the
    streaming engine's morsels); the last digit of a mean over labels then
    changes. Here a group's values are sorted and added one after the other
    (a running sum's last value: the optimizer drops a sort before ``sum``,
    as a sum does not depend on order in exact arithmetic), so the result is
    a function of the values alone. For small frames only (one row per
    label, or per distinct row shape, of a group), where the sort is cheap.

    Examples
    --------
    >>> import polars as pl
    >>> ops = FixedOrderPolarsOps()
    >>> df = pl.DataFrame({"x": [0.5, None, 0.25]})
    >>> df.select(ops.sum(pl.col("x")), ops.mean(pl.col("x")).alias("m")).row(0)
    (0.75, 0.375)
    """

    def _sorted_sum(self, x: Any) -> pl.Expr:
        if _symbolic(x):
            raise TypeError("FixedOrderPolarsOps works on plain expressions")
        # NULLs sort first, so the running sum's last value counts every value
        return _expr(x).sort(nulls_last=False).cum_sum().last()

    def sum(self, x: Any) -> Any:
        """SQL ``sum`` of the values in sorted order: NULL over no non-NULL values."""
        return pl.when(_expr(x).count() == 0).then(None).otherwise(self._sorted_sum(x))

    def mean(self, x: Any) -> Any:
        """SQL ``avg`` of the values in sorted order: NULL over no non-NULL values."""
        n = _expr(x).count()
        return pl.when(n == 0).then(None).otherwise(self._sorted_sum(x).cast(pl.Float64) / n)
