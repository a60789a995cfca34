"""The SQL dialects mlsql writes, as sqlglot generators: what each writes its own way.

A formula over :class:`mlsql._sqlexpr.Sql` operands builds a sqlglot tree
(``exp.Paren(exp.Div(...))``, ``exp.Case``, ...) that says nothing of a
dialect; :data:`DUCKDB`, :data:`SPARK` and :data:`POSTGRES` write it. Each is
sqlglot's generator of that database with mlsql's differences listed in one
place:

- how a Python value is written (:class:`Value`): floats, NaN and infinities,
  strings, booleans and NULL;
- division: PostgreSQL fails a query on ``x / 0`` where DuckDB and Spark give
  infinity or NaN, so its quotient is ``x / NULLIF(y, 0)``;
- what every dialect writes as mlsql always has: text given as SQL
  (:class:`Raw`) as it is, ``- x`` and ``pow(a, b)`` (sqlglot's own
  ``-x`` and ``POWER(a, b)`` mean the same), function names as given.

Examples
--------
>>> from sqlglot import exp
>>> tree = exp.Paren(this=exp.Div(this=Raw(this="tp"), expression=Value(this=0.5)))
>>> DUCKDB.write(tree), SPARK.write(tree), POSTGRES.write(tree)
('(tp / 0.5)', '(tp / 0.5D)', '(tp / NULLIF(0.5::float8, 0))')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from sqlglot import exp
from sqlglot.dialects.duckdb import DuckDB
from sqlglot.dialects.postgres import Postgres
from sqlglot.dialects.spark import Spark
from sqlglot.errors import ErrorLevel
from sqlglot.generator import Generator

from mlsql._sqltext import WRITE_DUCKDB, WRITE_POSTGRES, WRITE_SPARK, backslashed, quoted


class Raw(exp.Expression):
    """SQL text (``this``), written as it is in every dialect."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True}


class Value(exp.Expression):
    """A Python value (``this``: None, a bool, int, float or str), written by the dialect."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True}


class NotNull(exp.Expression):
    """``this IS NOT NULL``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True}


class IsNan(exp.Expression):
    """Whether ``this`` is NaN (NULL stays NULL)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True}


class Raise(exp.Expression):
    """An error whose message is ``this`` (a template, one ``{}``) with ``expression``'s value
    (written ``NULL`` where it is NULL) in the hole: the query fails where it is evaluated."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "expression": True}


class Let(exp.Expression):
    """``expression`` (the body) with each of ``expressions`` computed once, the body naming
    value i as the field ``v<i>`` of ``this`` (a name): a formula naming a value thirty
    times, as a polynomial does, would otherwise repeat its text thirty times."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "expressions": True, "expression": True}


def _values(g: Generator, e: Let, each: str) -> str:
    """The values of ``e``, each written by ``each`` (``{i}``: its place, ``{v}``: its SQL)."""
    return ", ".join(each.format(i=i, v=g.sql(v)) for i, v in enumerate(e.expressions))


def _message(g: Generator, e: Raise, string: Callable[[str], str], text_type: str) -> list[str]:
    """The message of ``e`` as three SQL strings to concatenate: the template's text before
    the hole, the value as text (``'NULL'`` where NULL), the text after it."""
    before, after = e.this.split("{}")
    got = f"coalesce(CAST({g.sql(e, 'expression')} AS {text_type}), 'NULL')"
    return [string(before), got, string(after)]


def _mlsql(
    base: type[Generator], value: Callable[[Any], str], extra: dict[type, Any]
) -> type[Generator]:
    """``base`` writing what mlsql writes its own way, its values by ``value`` (and
    ``extra``, the dialect's other differences)."""
    transforms = {
        **base.TRANSFORMS,
        Raw: lambda g, e: e.this,
        Value: lambda g, e: value(e.this),
        NotNull: lambda g, e: f"{g.sql(e, 'this')} IS NOT NULL",
        IsNan: lambda g, e: f"isnan({g.sql(e, 'this')})",
        exp.Neg: lambda g, e: f"- {g.sql(e, 'this')}",
        exp.Pow: lambda g, e: f"pow({g.sql(e, 'this')}, {g.sql(e, 'expression')})",
        **extra,
    }
    return type(f"Mlsql{base.__qualname__.split('.')[0]}", (base,), {"TRANSFORMS": transforms})


class Dialect:
    """A dialect mlsql writes: sqlglot's generator of the database (``base``) writing what
    mlsql writes its own way, its Python values by ``value`` and its other ``differences``
    (node type -> how the dialect writes it)."""

    def __init__(
        self,
        name: str,
        base: type[Generator],
        value: Callable[[Any], str],
        differences: dict[type, Any],
    ) -> None:
        self.name = name
        generator = _mlsql(base, value, differences)
        self._generator = generator(normalize_functions=False, unsupported_level=ErrorLevel.IGNORE)

    def write(self, node: exp.Expression) -> str:
        """``node`` as this dialect's SQL text: the generator's ``sql`` alone (its
        ``generate`` would first preprocess the tree, rewriting queries mlsql's expressions are
        not, at a cost per call; and a tree's nodes are shared by the trees built on it)."""
        return self._generator.sql(node)

    def __repr__(self) -> str:
        return f"Dialect({self.name!r})"


#: a value of Spark's :class:`Let`: a DOUBLE field of a named struct
SPARK_FIELD = "'v{i}', CAST({v} AS DOUBLE)"

DUCKDB = Dialect(
    "duckdb",
    DuckDB.Generator,
    WRITE_DUCKDB,
    {
        Raise: lambda g, e: f"error({' || '.join(_message(g, e, quoted, 'VARCHAR'))})",
        # a lambda's variable is bound once (a macro's parameters are substituted as text)
        Let: lambda g, e: (
            f"list_transform([struct_pack({_values(g, e, 'v{i} := {v}')})],"
            f" lambda {e.this}: {g.sql(e, 'expression')})[1]"
        ),
    },
)
SPARK = Dialect(
    "spark",
    Spark.Generator,
    WRITE_SPARK,
    # Spark's strings take backslash escapes
    {
        Raise: lambda g, e: (
            f"raise_error(concat({', '.join(_message(g, e, backslashed, 'STRING'))}))"
        ),
        # a lambda over a one-element array, as the Column form (SparkOps.let)
        Let: lambda g, e: (
            f"transform(array(named_struct({_values(g, e, SPARK_FIELD)})),"
            f" {e.this} -> {g.sql(e, 'expression')})[0]"
        ),
    },
)
POSTGRES = Dialect(
    "postgres",
    Postgres.Generator,
    WRITE_POSTGRES,
    {
        # PostgreSQL fails a query on x / 0 (DuckDB and Spark give inf or NaN): a formula
        # guards every ratio it returns, but a value bound once is computed before the
        # CASE that discards it, so a zero divisor gives NULL instead
        exp.Div: lambda g, e: f"{g.sql(e, 'this')} / NULLIF({g.sql(e, 'expression')}, 0)",
        # no isnan: NaN equals NaN there
        IsNan: lambda g, e: f"({g.sql(e, 'this')} = 'NaN'::float8)",
        # an error is raised by mlsql's function, typed as the value it stands for
        Raise: lambda g, e: (
            f"_mlsql_raise({' || '.join(_message(g, e, quoted, 'text'))}, NULL::float8)"
        ),
        # a scalar subquery whose one row holds the values; OFFSET 0 keeps the planner
        # from pulling it up, which would put each value's text back at every mention
        # (planning binary_kappa_p_value took 0.5 s)
        Let: lambda g, e: (
            f"(SELECT {g.sql(e, 'expression')} FROM (SELECT {_values(g, e, '{v} AS v{i}')}"
            f" OFFSET 0) AS {e.this})"
        ),
    },
)
