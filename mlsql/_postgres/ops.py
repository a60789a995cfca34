"""The formula primitives written as PostgreSQL SQL, for rows and for aggregate states.

A PostgreSQL aggregate keeps a small fixed state and turns it into the result
in a final function. :class:`StateOps` lowers a registered aggregate formula
that way: each ``sum``, ``count`` and ``mean`` it calls over a per-row
expression becomes slots of a ``float8[]`` state that the transition function
adds the row to, and the formula itself becomes the final function's
expression over those slots. Per-row formulas use :class:`RowOps` as they are.

Parameters are written as :func:`param` placeholders and replaced by the
transition function's checked argument (per row) or by the state slot that
keeps it (in the final function), so one formula text serves both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from mlsql import _sqldialects as D
from mlsql._sqlexpr import Sql, operand
from mlsql._sqlops import SqlPrimitives


def pg_lit(value: Any) -> PgSql:
    """``value`` as a PostgreSQL literal (floats as ``float8``).

    Examples
    --------
    >>> str(pg_lit(float("nan"))), str(pg_lit(0.5)), str(pg_lit("it's")), str(pg_lit(None))
    ("'NaN'::float8", '0.5::float8', "'it''s'", 'NULL')
    """
    if isinstance(value, PgSql):
        return value
    return PgSql(operand(value, D.POSTGRES))


class PgSql(Sql):
    """A PostgreSQL expression: :class:`~mlsql._sqlexpr.Sql` written by
    :data:`mlsql._sqldialects.POSTGRES` (its literals, and ``x / NULLIF(y, 0)``)."""

    __slots__ = ()
    dialect = D.POSTGRES


#: how a parameter placeholder is written in a formula's text (replaced before use)
PLACEHOLDER = "\x01{}\x01"


def param(name: str) -> PgSql:
    """The placeholder of parameter ``name`` in a formula's text."""
    return PgSql(PLACEHOLDER.format(name))


def fill(text: str, values: dict[str, str]) -> str:
    """``text`` with each parameter placeholder replaced by its SQL in ``values``."""
    for name, value in values.items():
        text = text.replace(PLACEHOLDER.format(name), value)
    if "\x01" in text:
        raise ValueError(f"a parameter without a value in {text!r}")
    return text


#: the smallest x whose exp(x) PostgreSQL gives without an underflow error (below it, the
#: result is subnormal or 0: DuckDB's is less than 1e-307, and 0 is written here)
EXP_LOW = -708.0


class Lets:
    """One counter of :meth:`RowOps.let`'s aliases for every ops of a formula (no alias twice)."""

    def __init__(self) -> None:
        self.n = 0


class RowOps(SqlPrimitives):
    """Formula primitives over one row (no aggregation): :class:`~mlsql._sqlops.SqlPrimitives`
    written by PostgreSQL's dialect, and PostgreSQL's own.

    ``zero_division`` arrives coded as a ``float8`` by ``_mlsql_check_zero_division``:
    0 or 1 (its value), NaN, 2 ('diagnose') or 3 ('ignore').
    """

    text = PgSql

    def __init__(self, lets: Lets | None = None) -> None:
        self.lets = (
            lets if lets is not None else Lets()
        )  # shared by the ops of one formula where given

    def _variable(self, name: str) -> str:
        """A :meth:`let`'s alias, one per let of the formula (its subqueries nest).

        Examples
        --------
        >>> str(RowOps().let((PgSql("a + 1"),), lambda v: v * v, "sq"))
        '(SELECT (_mlsql_sq_1.v0 * _mlsql_sq_1.v0) FROM (SELECT a + 1 AS v0 OFFSET 0) AS _mlsql_sq_1)'
        """
        self.lets.n += 1
        return f"_mlsql_{name}_{self.lets.n}"

    def exp(self, x: Any) -> Sql:
        """exp(x), 0 below :data:`EXP_LOW` (where PostgreSQL raises an underflow error)."""
        return self.let(
            (x,),
            lambda v: PgSql(f"CASE WHEN {v} < {EXP_LOW!r} THEN 0.0::float8 ELSE exp({v}) END"),
            "exp",
        )

    def undefined(self, zero_division: Any, nothing_to_score: Any) -> PgSql:
        zd = pg_lit(zero_division)
        return PgSql(
            f"CASE WHEN {zd} = 2 THEN CASE WHEN {pg_lit(nothing_to_score)} THEN 1.0::float8 "
            f"ELSE 0.0::float8 END WHEN {zd} = 3 THEN NULL::float8 ELSE {zd} END"
        )

    def skips_undefined(self, zero_division: Any) -> bool | None:
        return None  # an argument: known only when the query runs

    def sum(self, x: Any) -> PgSql:
        raise TypeError("a per-row function does not aggregate")

    mean = count = sum


@dataclass(frozen=True)
class Slot:
    """State slots of one aggregated row expression ``expr``: a ``'sum'`` at ``index`` with
    its compensation at ``index + 1`` (Neumaier's compensated sum), or a ``'count'`` of the
    rows where ``expr`` is not NULL at ``index``."""

    kind: str
    expr: str
    index: int

    @property
    def size(self) -> int:
        """How many state elements the slot takes."""
        return 2 if self.kind == "sum" else 1


class StateOps(RowOps):
    """Formula primitives of an aggregate: aggregates become ``float8[]`` state slots.

    ``offset`` elements come first (the parameters). ``slots`` lists what each row adds
    to the state; the formula's result reads the state ``st``. Sums are compensated, so
    a mean over millions of rows stays within a few units in the last place (as DuckDB's
    ``favg``).

    Examples
    --------
    >>> ops = StateOps(offset=1)
    >>> str(ops.mean(PgSql("x")))
    'CASE WHEN st[4] = 0 THEN NULL::float8 ELSE (st[2] + st[3]) / st[4] END'
    >>> [(s.kind, s.index) for s in ops.slots]
    [('sum', 2), ('count', 4)]
    """

    def __init__(self, offset: int) -> None:
        super().__init__()
        self.offset = offset
        self.slots: list[Slot] = []

    @property
    def size(self) -> int:
        """The state's length."""
        return self.offset + sum(s.size for s in self.slots)

    def _slot(self, kind: str, x: Any) -> int:
        """The state index of ``kind`` ('sum' or 'count') of row expression ``x``."""
        text = str(pg_lit(x))
        for slot in self.slots:
            if (slot.kind, slot.expr) == (kind, text):
                return slot.index
        self.slots.append(Slot(kind, text, self.size + 1))
        return self.slots[-1].index

    def _sum(self, x: Any) -> str:
        i = self._slot("sum", x)
        return f"(st[{i}] + st[{i + 1}])"

    def sum(self, x: Any) -> PgSql:
        """NULL over no non-NULL values, as SQL's ``sum``."""
        total, n = self._sum(x), self._slot("count", x)
        return PgSql(f"CASE WHEN st[{n}] = 0 THEN NULL::float8 ELSE {total} END")

    def count(self, x: Any) -> PgSql:
        return PgSql(f"st[{self._slot('count', x)}]")

    def mean(self, x: Any) -> PgSql:
        total, n = self._sum(x), self._slot("count", x)
        return PgSql(f"CASE WHEN st[{n}] = 0 THEN NULL::float8 ELSE {total} / st[{n}] END")


class FinalOps(RowOps):
    """:class:`RowOps` of a final function: a series and the gamma series."""

    def let_series(self, values: tuple[Any, ...], body: Any, name: str) -> Sql:
        """:meth:`let` for a body that sums a series."""
        return self.let(values, body, name)

    def gamma_series(self, count: Any, a0: Any, y: Any) -> PgSql:
        """Σ_{i < count} y^(a0 + i) e^-y / Γ(a0 + i + 1) (``count`` whole, ``a0`` 0 or 1/2,
        ``y`` > 0; 0 where ``count`` is below 1), each term from its logarithm (PostgreSQL 15
        has no ``lgamma``: ln Γ(a0 + i + 1) is ln Γ(a0 + 1) plus a running sum of ln(a0 + k),
        k = 1 .. i); a term below e^-708 is 0 (where PostgreSQL's ``exp`` fails)."""
        a, y_ = pg_lit(a0), pg_lit(y)
        log_y = f"ln(CASE WHEN {y_} > 0 THEN {y_} ELSE 1 END)"
        first = f"CASE WHEN {a} > 0 THEN {pg_lit(math.log(math.sqrt(math.pi) / 2))} ELSE 0 END"
        logs = (
            f"sum(CASE WHEN g.i = 0 THEN 0 ELSE ln({a} + g.i) END) OVER (ORDER BY g.i ROWS"
            " BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)"
        )
        exponent = f"({a} + g.i) * {log_y} - {y_} - ({first} + {logs})"
        return PgSql(
            f"(SELECT coalesce(sum(CASE WHEN s.e < {EXP_LOW!r} THEN 0 ELSE exp(s.e) END), 0)"
            f"::float8 FROM (SELECT {exponent} AS e FROM generate_series(0,"
            f" floor({pg_lit(count)})::int - 1) AS g(i)) AS s)"
        )


class Axis(FinalOps):
    """``sum``, ``mean`` and ``count`` over the rows of a final function's table ``source``
    (``_cls c``: the classes; ``_val v``: the labels), NULL over none as SQL's."""

    def __init__(self, lets: Lets, source: str) -> None:
        super().__init__(lets)
        self.source = source

    def _over(self, fn: str, x: Any) -> PgSql:
        return PgSql(f"(SELECT {fn}({pg_lit(x)})::float8 FROM {self.source})")

    def sum(self, x: Any) -> PgSql:
        return self._over("sum", x)

    def mean(self, x: Any) -> PgSql:
        return self._over("avg", x)

    def count(self, x: Any) -> PgSql:
        return self._over("count", x)
