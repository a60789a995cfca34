"""mlsql in Spark SQL: the per-row and from-counts functions as SQL functions of a session.

Spark 4 SQL functions (``CREATE TEMPORARY FUNCTION name(params) RETURN
expr``) are scalar: Spark SQL has no aggregate written in SQL, so the micro
and samples averages, ``multilabel_counts`` and ``fmeasure`` stay in the
Python API (``df.agg(ms.micro_f1(...))``), and plain SQL scores stored
counts with the ``*_from_counts`` functions. The functions are SQL
expressions that Spark inlines into the query: they run in the JVM like
built-in functions, no Python involved (a Python UDF would ship every row to
a Python worker).

Each body is generated from the same registry formula as the Python API,
written over SQL text by :class:`SparkSqlOps`. What SQL adds:

- ``zero_division`` is a runtime value (STRING): each body holds the formula
  once per convention, chosen by ``CASE``; with a literal argument Spark folds
  the ``CASE`` away. An unknown value raises with mlsql's message.
- ``beta`` (DOUBLE) and ``n_labels`` (DOUBLE, a whole number) are checked at
  run time with mlsql's messages (``raise_error``).
- Labels: SQL function parameters have one type, so the label arrays are
  ``ARRAY<STRING>`` by default (``label_type``): Spark casts integer arrays to
  text on the way in, which keeps the sets (and every count and ratio) the
  same; the set helpers then return text. Because the cast happens before the
  function sees the values, SQL cannot reject an integer array against a text
  one: the Python API does (DESIGN.md section 1.3). ``label_type="BIGINT"``
  registers integer-label functions instead.
- Stored counts are a ``STRUCT`` of the seven ``multilabel_counts`` fields.
  Spark casts a struct argument to it field by field *in order*: the structs
  ``multilabel_counts`` returns (stored anywhere) fit; a hand-made
  ``named_struct`` must list n_rows, tp, fp, fn, n_actual, n_predicted,
  n_exact in that order (a struct with other fields is an error).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from mlsql import _params as P
from mlsql import _sqldialects as D
from mlsql import _sqltext as T
from mlsql._errors import MlsqlError
from mlsql._registry import Measure, Param, measures
from mlsql._sqlexpr import Sql
from mlsql._sqlops import SqlPrimitives

#: every zero_division convention, by the text a SQL caller's value becomes
ZERO_DIVISIONS = {
    "0": P.ZeroDivision("value", 0.0),
    "1": P.ZeroDivision("value", 1.0),
    "nan": P.ZeroDivision("nan"),
    "diagnose": P.ZeroDivision("diagnose"),
    "ignore": P.ZeroDivision("ignore"),
}
LABEL_TYPE = re.compile(r"[A-Za-z][A-Za-z0-9_(), ]*")


class SparkSql(Sql):
    """Spark SQL text whose Python operands are Spark literals (:data:`mlsql._sqldialects.SPARK`).

    Examples
    --------
    >>> str(SparkSql("`tp`") * 0.5 + 1)
    '((`tp` * 0.5D) + 1)'
    """

    __slots__ = ()
    dialect = D.SPARK


def string(text: str) -> Sql:
    """A Spark SQL string literal (backslash escapes, Spark's default).

    Examples
    --------
    >>> str(string("it's"))
    "'it\\\\'s'"
    """
    return Sql(T.backslashed(text))


def number(value: Any) -> Sql:
    """A Python number as a Spark SQL literal (floats as DOUBLE, not DECIMAL)."""
    if isinstance(value, Sql):
        return value
    if isinstance(value, str):  # already SQL text
        return Sql(value)
    return Sql(T.WRITE_SPARK(value))


def message(template: str, got: Sql) -> Sql:
    """``template`` (one ``{}``) as a SQL string expression with ``got`` spliced in."""
    before, after = template.split("{}")
    return Sql(
        f"concat({string(before)}, coalesce(CAST({got} AS STRING), 'NULL'), {string(after)})"
    )


class SparkSqlOps(SqlPrimitives):
    """Formula primitives written as Spark SQL (:class:`~mlsql._sqlops.SqlPrimitives`, and
    Spark's own), with a static ``zero_division``.

    Examples
    --------
    >>> ops = SparkSqlOps()
    >>> str(ops.when(Sql("x = 0"), 1.0, None))
    'CASE WHEN x = 0 THEN 1.0D ELSE NULL END'
    """

    #: the class of the expressions it returns: Spark SQL, whose Python floats are DOUBLE
    text: type[Sql] = SparkSql

    def undefined(self, zero_division: P.ZeroDivision, nothing_to_score: Any) -> Sql:
        return zero_division.undefined(
            self.when,
            nothing_to_score,
            constant=lambda v: self.text(str(number(v))),
            nan=self.nan,
            null=self.text("CAST(NULL AS DOUBLE)"),
        )

    def skips_undefined(self, zero_division: P.ZeroDivision) -> bool:
        return zero_division.skips_undefined

    def label_set(self, labels: Any) -> Sql:
        """The set helpers' list primitives (:class:`~mlsql.measures.multilabel.ListOps`),
        as :class:`~mlsql.spark.ops.SparkOps` writes them."""
        return self.text(f"array_sort(array_except({labels}, array(NULL)))")

    def both(self, a: Any, b: Any) -> Sql:
        return self.text(f"array_intersect({a}, {b})")

    def only(self, a: Any, b: Any) -> Sql:
        return self.text(f"array_except({a}, {b})")

    def either(self, a: Any, b: Any) -> Sql:
        return self.text(f"array_union({a}, {b})")

    def mean(self, x: Any) -> Sql:
        return self.text(f"avg({number(x)})")

    def log2(self, x: Any) -> Sql:
        return self.text(f"log2({number(x)})")

    def pow(self, base: Any, exponent: Any) -> Sql:
        return self.text(f"pow({number(base)}, {number(exponent)})")


OPS = SparkSqlOps()


@dataclass(frozen=True)
class Function:
    """One SQL function: its name, parameters (``name TYPE [DEFAULT x]``) and body."""

    name: str
    params: tuple[str, ...]
    body: str

    def create(self, qualify: Callable[[str], str]) -> str:
        """The ``CREATE OR REPLACE TEMPORARY FUNCTION`` statement."""
        return (
            f"CREATE OR REPLACE TEMPORARY FUNCTION {qualify(self.name)}({', '.join(self.params)})\n"
            f"RETURN {self.body}"
        )


# ---------------------------------------------------------------- checked parameters
def _by_zero_division(m: Measure, body: Callable[[P.ZeroDivision], Sql]) -> Sql:
    """``body`` under the caller's ``zero_division``, checked and chosen at run time."""
    zd = next(p for p in m.params if p.name == "zero_division")
    cases = " ".join(f"WHEN '{k}' THEN {body(z)}" for k, z in ZERO_DIVISIONS.items())
    return Sql(f"CASE {P.spark_check(zd, m.name, lambda t: str(string(t)))} {cases} END")


def _param_sql(p: Param) -> str:
    """The SQL parameter of ``p``: ``name TYPE [DEFAULT x]`` (its type from its constraint)."""
    sql_type = p.constraint.spark_type
    if p.default is None:
        return f"{p.name} {sql_type}"
    default = string(str(p.default)) if sql_type == "STRING" else number(float(p.default))
    return f"{p.name} {sql_type} DEFAULT {default}"


def formula_function(m: Measure, stats: Any, inputs: Sequence[str]) -> Function:
    """The SQL function of a formula measure: ``inputs`` are its typed parameters.

    Each parameter is checked against its registry constraint
    (:func:`mlsql._params.spark_check`). SQL function parameters are typed, so
    Spark casts an argument to the parameter's type before the check sees it:
    ``beta => '2'`` reads as 2.0 there, ``n_labels => 2.0`` as 2 and
    ``zero_division => 1`` as '1'.
    """
    unchecked = [p.name for p in m.params if p.constraint is None]
    if unchecked:
        raise ValueError(f"{m.name}: no constraint (so no SQL type) for parameters {unchecked}")
    fixed = {
        p.name: Sql(P.spark_check(p, m.name, lambda t: str(string(t))))
        for p in m.params
        if p.name != "zero_division"
    }

    def body(zd: P.ZeroDivision | None) -> Sql:
        extra = {} if zd is None else {"zero_division": zd}
        return number(m.build(OPS, stats, **fixed, **extra))  # type: ignore[misc]

    has_zd = any(p.name == "zero_division" for p in m.params)
    text = _by_zero_division(m, body) if has_zd else body(None)
    return Function(m.name, (*inputs, *map(_param_sql, m.params)), str(text))


# ---------------------------------------------------------------- registration
def functions(label_type: str = "STRING") -> list[Function]:
    """Every SQL function mlsql registers, from the families' ``sql_functions`` hooks."""
    if not isinstance(label_type, str) or not LABEL_TYPE.fullmatch(label_type):
        raise MlsqlError(
            f"label_type must be a Spark SQL type name such as 'STRING' or 'BIGINT'. "
            f"Got {label_type!r} instead."
        )
    from mlsql.spark import families

    out: list[Function] = []
    for mod in families.modules():
        hook: Callable[[str], list[Function]] | None = getattr(mod, "sql_functions", None)
        if hook is not None:
            out += hook(label_type)
    return out


#: per Spark session, the functions register() created there (any other of such a name is a clash)
_CREATED: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()


def _user_functions(spark: Any) -> set[str]:
    """Names (lower case, unqualified) of the session's temporary and persistent functions."""
    rows = spark.sql("SHOW USER FUNCTIONS").collect()
    return {row[0].rsplit(".", 1)[-1].strip("`").lower() for row in rows}


def register(
    spark: Any, *, prefix: str = "", label_type: str = "STRING", replace: bool = False
) -> list[str]:
    """Create mlsql's per-row and from-counts functions as temporary SQL functions.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
        The session; the functions live as long as it does (``TEMPORARY``).
    prefix : str, default ''
        Put before every function name (e.g. ``'mlsql_'``), to keep clear of
        other functions of the session; letters, digits and underscores, not
        starting with a digit.
    label_type : str, default 'STRING'
        The element type of the label array parameters. Integer arrays are
        cast to text by Spark under the default (same sets, same numbers);
        ``'BIGINT'`` keeps integer labels as integers.
    replace : bool, default False
        Replace (or shadow) the session's functions of the same names that
        mlsql did not create. Without it such a clash is an error naming them.

    Returns
    -------
    list of str
        The names of the functions created.

    Raises
    ------
    MlsqlError
        On a clash without ``replace=True``, or an invalid ``prefix`` or ``label_type``.

    Notes
    -----
    mlsql remembers, per session object, which functions it created there;
    registering again replaces only those.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> import mlsql.spark as ms
    >>> spark = SparkSession.builder.getOrCreate()
    >>> names = ms.register(spark)
    >>> spark.sql("SELECT row_fbeta(array('a', 'b'), array('a'), beta => 2.0)").first()[0]
    0.5555555555555556
    >>> spark.sql(
    ...     "SELECT micro_f1_from_counts(named_struct('n_rows', 2L, 'tp', 2L, 'fp', 1L, "
    ...     "'fn', 1L, 'n_actual', 3L, 'n_predicted', 3L, 'n_exact', 0L))"
    ... ).first()[0]
    0.6666666666666666
    """
    P.check_sql_name(prefix, "prefix", "register", empty=True)
    made = functions(label_type)
    wanted = {(prefix + fn.name).lower() for fn in made}
    ours = _CREATED.setdefault(spark, set())
    clashes = sorted((_user_functions(spark) & wanted) - ours)
    if clashes and not replace:
        raise MlsqlError(P.clash_message("in this Spark session", clashes, "prefix='ml_'"))
    names = []
    for fn in made:
        spark.sql(fn.create(lambda name: f"`{prefix}{name}`"))
        names.append(prefix + fn.name)
        ours.add(names[-1].lower())
    return names


def available(mods: Sequence[ModuleType] | None = None) -> list[str]:
    """Names of the registry measures registered in SQL (for documentation)."""
    names = {fn.name for fn in functions()}
    return [m.name for m in measures() if m.name in names]
