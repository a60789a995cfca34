"""The formula primitives every SQL dialect has, written once as sqlglot trees.

A SQL engine's ops (DuckDB's :class:`~mlsql._duckdb.ops.SqlOps`, Spark SQL's
:class:`~mlsql.spark.sql.SparkSqlOps`, PostgreSQL's :class:`~mlsql._postgres.ops.RowOps`)
take these and write only what differs: a primitive that is another node there
(``mean`` is DuckDB's compensated ``favg``; PostgreSQL's aggregates are state slots), or
its idioms (``let``, ``undefined``). What a node looks like in each dialect (``isnan`` or
``x = 'NaN'``, ``error()``, ``raise_error()`` or ``_mlsql_raise()``) is the dialect's, in
:mod:`mlsql._sqldialects`.

Examples
--------
>>> from mlsql._postgres.ops import PgSql
>>> class Pg(SqlPrimitives):
...     text = PgSql
>>> str(Pg().is_nan(PgSql("x"))), str(SqlPrimitives().is_nan(Sql("x")))
("(x = 'NaN'::float8)", 'isnan(x)')
"""

from __future__ import annotations

import math
from typing import Any

from sqlglot import exp

from mlsql import _sqldialects as D
from mlsql._sqlexpr import Sql, operand


class SqlPrimitives:
    """``when``, ``sum``, ``count``, ``sqrt``, ``exp``, ``floor``, ``not_null``, ``is_nan``,
    ``nan``, ``let`` and ``error_if``, returning :attr:`text` (the class, and so the dialect, of the
    expressions: DuckDB's here)."""

    text: type[Sql] = Sql

    def _node(self, x: Any) -> exp.Expression:
        return operand(x, self.text.dialect)

    def _call(self, name: str, *args: Any) -> Sql:
        return self.text(exp.Anonymous(this=name, expressions=[self._node(a) for a in args]))

    def when(self, condition: Any, then: Any, otherwise: Any) -> Sql:
        """``CASE WHEN condition THEN then ELSE otherwise END``."""
        node = exp.Case(ifs=[exp.If(this=self._node(condition), true=self._node(then))])
        node.set("default", self._node(otherwise))
        return self.text(node)

    def sum(self, x: Any) -> Sql:
        return self._call("sum", x)

    def count(self, x: Any) -> Sql:
        return self._call("count", x)

    def sqrt(self, x: Any) -> Sql:
        return self._call("sqrt", x)

    def exp(self, x: Any) -> Sql:
        return self._call("exp", x)

    def floor(self, x: Any) -> Sql:
        return self._call("floor", x)

    def not_null(self, x: Any) -> Sql:
        """``x IS NOT NULL`` (the weighted primitives of :mod:`mlsql._weights` use it)."""
        return self.text(exp.Paren(this=D.NotNull(this=self._node(x))))

    def is_nan(self, x: Any) -> Sql:
        return self.text(D.IsNan(this=self._node(x)))

    def nan(self) -> Sql:
        return self.text(D.Value(this=math.nan))

    def let(self, values: tuple[Any, ...], body: Any, name: str = "") -> Sql:
        """``body(*values)`` with each value computed once (the dialect's
        :class:`~mlsql._sqldialects.Let`), the values named ``<variable>.v<i>``."""
        var = self._variable(name)
        inner = body(*(self.text(f"{var}.v{i}") for i in range(len(values))))
        node = D.Let(this=var, expressions=[self._node(v) for v in values])
        node.set("expression", self._node(inner))
        return self.text(node)

    def _variable(self, name: str) -> str:
        """The name a :meth:`let` binds its values to."""
        return f"_mlsql_{name or 'let'}"

    def error_if(self, condition: Any, value: Any, template: str, got: Any) -> Sql:
        """``value``, or the dialect's error with ``template`` ({} = ``got``) where
        ``condition``."""
        return self.when(
            condition, self.text(D.Raise(this=template, expression=self._node(got))), value
        )
