"""Inputs as Columns, and the label type guard where Spark lets mlsql see the types.

A PySpark Column has no type until a DataFrame resolves it, and Spark resolves
a ``select`` or ``agg`` in the JVM, out of mlsql's reach. So:

- a Column taken from a DataFrame (``df.actual``, ``df["actual"]``) is already
  resolved in Spark Classic: mlsql reads its type when the function is called
  and raises :class:`~mlsql.MlsqlError` naming both types on a mismatch
  (DESIGN.md section 1.3), before Spark sees the query;
- a name (``"actual"``) or ``F.col("actual")`` is resolved only by Spark's
  analyzer. Under Spark 4's ANSI mode Spark never casts one label kind to the
  other inside mlsql's set functions: the ``select`` raises an
  ``AnalysisException`` (``DATATYPE_MISMATCH``) that names both array types,
  e.g. ``["ARRAY<INT>", "ARRAY<STRING>"]``, before any data is read;
- the frame-level functions (``label_metrics``, ``multilabel_report``) take the
  DataFrame and check its schema.

Integer widths may differ (Spark widens ``array<int>`` to ``array<bigint>``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql import _label_types as LT
from mlsql._errors import MlsqlError

MISMATCH_MESSAGE = LT.MISMATCH_MESSAGE
NOT_A_LIST_MESSAGE = LT.NOT_A_LIST_MESSAGE
NOT_A_COLUMN_MESSAGE = (
    "{func} takes a column name or a pyspark Column for {name}. Got {value!r} instead."
)


def to_column(value: Any, func: str, name: str) -> Column:
    """A column name or a Column as a Column.

    A name is the column's whole name: ``"L1.1"`` is the column named so, not
    field ``1`` of a struct ``L1`` (pass ``F.col("s.field")`` for that).

    Examples
    --------
    >>> to_column(1, "micro_f1", "actual")
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: micro_f1 takes a column name or a pyspark Column for actual. Got 1 instead.
    """
    if isinstance(value, str):
        return F.col("`" + value.replace("`", "``") + "`")
    if isinstance(value, Column):
        return value
    raise MlsqlError(NOT_A_COLUMN_MESSAGE.format(func=func, name=name, value=value))


def bound(df: DataFrame, name: str) -> Column:
    """Column ``name`` of ``df``, resolved against it, whatever characters the name holds.

    ``df[name]`` would parse the name: ``a.b`` as field ``b`` of ``a``, `` `x` `` as ``x``,
    ``*`` as every column; quoted, it is only the name.
    """
    return df["`" + name.replace("`", "``") + "`"]


def data_type(col: Column) -> T.DataType | None:
    """The type of a Column already resolved against a DataFrame (``df.x``), else None.

    Spark Connect Columns and unresolved ones (names, ``F.col``, expressions)
    give None: Spark checks their types itself when the query is analysed.
    """
    try:
        return _node_type(col._jc.node())  # type: ignore[attr-defined]
    except Exception:  # not Spark Classic, or an internal API that moved: Spark checks
        return None


def _node_type(node: Any) -> T.DataType | None:
    """The type of a Column's node: a resolved expression's, or that of a ``when`` whose
    values all have one known type (so ``F.when(w.isNotNull(), df.x)`` keeps ``df.x``'s)."""
    kind = node.getClass().getSimpleName()
    if kind == "CaseWhenOtherwise":
        branches = node.branches()
        values = [branches.apply(i)._2() for i in range(branches.length())]
        otherwise = node.otherwise()
        if otherwise.isDefined():
            values.append(otherwise.get())
        types = {_node_type(v) for v in values}
        return types.pop() if len(types) == 1 else None
    if kind != "ExpressionColumnNode":
        return None
    expr = node.expression()
    if not expr.resolved():
        return None
    return T._parse_datatype_json_string(expr.dataType().json())


def kind(dtype: T.DataType) -> str:
    """The kind of a label type: integer, text, float, decimal, boolean, null or the type.

    Examples
    --------
    >>> kind(T.IntegerType()), kind(T.StringType()), kind(T.DoubleType())
    ('integer', 'text', 'float')
    """
    if isinstance(dtype, T.IntegralType):
        return "integer"
    if isinstance(dtype, (T.StringType, T.CharType, T.VarcharType)):
        return "text"
    if isinstance(dtype, T.FractionalType) and not isinstance(dtype, T.DecimalType):
        return "float"
    if isinstance(dtype, T.DecimalType):
        return "decimal"
    if isinstance(dtype, T.BooleanType):
        return "boolean"
    if isinstance(dtype, T.NullType):
        return "null"
    return dtype.simpleString()


#: Spark's integer types: bits (all signed)
INTEGER_BITS = {T.ByteType: 8, T.ShortType: 16, T.IntegerType: 32, T.LongType: 64}


def bounds(dtype: T.DataType) -> tuple[int, int] | None:
    """The range of an integer type (None for any other type).

    Examples
    --------
    >>> bounds(T.ByteType()), bounds(T.StringType())
    ((-128, 127), None)
    """
    bits = INTEGER_BITS.get(type(dtype))
    return None if bits is None else LT.integer_bounds(bits, True)


#: Spark's ``typeof`` names of the integer label types
_TYPEOF_INTEGERS = ("tinyint", "smallint", "int", "bigint")


def checked_label_value(
    col: Column, value: Any, param: str, func: str, typed: Column | None = None
) -> Column:
    """``col``, failing the query (:data:`mlsql._label_types.LABEL_VALUE_MESSAGE`) unless
    ``value`` (parameter ``param``, one label) is of ``col``'s label kind.

    ``typed`` (default ``col``) is the Column whose type is read: when ``col`` is already a
    check of another label, pass the unchecked Column (of the same type). The type is read
    about twenty times in the check, so reading a checked Column's type copies the inner
    check into each read: a tree exponential in the number of labels, which Spark's analyzer
    walks path by path (``cost_error`` with three cost labels: 25 s of analysis on 40 rows).
    """
    # a value of no label kind (a float): of no column's kind, so refused whatever the type
    want = LT.class_kind(value) or "none"
    t = F.typeof(col if typed is None else typed)
    text = (t == F.lit("string")) | t.startswith("varchar") | t.startswith("char")
    kind_sql = (  # kind()'s names, from typeof's
        F.when(t.isin(*_TYPEOF_INTEGERS), F.lit(LT.INTEGER))
        .when(text, F.lit(LT.TEXT))
        .when(t.isin("float", "double"), F.lit("float"))
        .when(t.startswith("decimal"), F.lit("decimal"))
        .otherwise(t)
    )
    parts = LT.value_message(param).format(
        param=param, func=func, type="\0", kind="\1", value=repr(value)
    )
    head, rest = parts.split("\0")
    middle, tail = rest.split("\1")
    message = F.concat(F.lit(head), t, F.lit(middle), kind_sql, F.lit(tail))
    mismatch = (kind_sql != F.lit(want)) & (t != F.lit("void"))
    checked = F.when(mismatch, F.raise_error(message))
    if (
        want == LT.INTEGER and param != "costs"
    ):  # a value the integer type cannot hold (typeof folds: no per-row cost)
        for name, dtype in zip(_TYPEOF_INTEGERS, INTEGER_BITS, strict=True):
            low, high = bounds(dtype())  # type: ignore[misc]
            if not low <= value <= high:
                outside = LT.LABEL_RANGE_MESSAGE.format(
                    param=param, func=func, value=value, type=name, low=low, high=high
                )
                checked = checked.when(t == F.lit(name), F.raise_error(F.lit(outside)))
    return checked.otherwise(col)


def checked_universe(
    col: Column, universe: Sequence[Any], func: str, typed: Column | None = None
) -> Column:
    """``col`` (an array of labels), failing the query unless every label of ``universe``
    (parameter ``labels``) is of the array's label kind and, for integers, within its type's
    range (the messages of :func:`mlsql._label_types.check_universe_labels`; ``typeof``
    folds when Spark plans the query, so nothing is added per row).

    ``typed``: an array of single labels whose type is read instead (``array(actual,
    predicted)``: the type both columns become); the messages name its element type."""
    t = F.typeof(col if typed is None else typed)
    text = (
        (t == F.lit("array<string>")) | t.startswith("array<varchar") | t.startswith("array<char")
    )
    checked = None
    kinds: list[tuple[str, str, Any]] = [
        *(
            (name, LT.INTEGER, dtype)
            for name, dtype in zip(_TYPEOF_INTEGERS, INTEGER_BITS, strict=True)
        ),
        ("string", LT.TEXT, None),
        ("boolean", LT.BOOLEAN, None),  # the single-label classes' third kind
    ]
    for name, label_kind, dtype in kinds:
        type_name = f"array<{name}>"
        shown = type_name if typed is None else name
        try:
            LT.check_universe_labels(
                universe, label_kind, shown, None if dtype is None else bounds(dtype()), func
            )
        except MlsqlError as exc:
            condition = text if label_kind == LT.TEXT else t == F.lit(type_name)
            error = F.raise_error(F.lit(str(exc)))
            checked = (
                F.when(condition, error) if checked is None else checked.when(condition, error)
            )
    return col if checked is None else checked.otherwise(col)


def compatible(left: T.DataType, right: T.DataType) -> bool:
    """Whether two label types are of one kind (an all-NULL side fits anything)."""
    a, b = kind(left), kind(right)
    return "null" in (a, b) or a == b


def element(dtype: T.DataType | None) -> T.DataType | None:
    """The element type of an array type, else None."""
    return dtype.elementType if isinstance(dtype, T.ArrayType) else None


def check_label_lists(func: str, names: Sequence[str], cols: Sequence[Column]) -> list[Column]:
    """Raise :class:`MlsqlError` unless the (known) types are arrays of one label kind.

    Which element types are labels is :mod:`mlsql._label_types`' rule. A Column
    whose type is unknown (see the module docstring) is returned guarded: Spark
    raises mlsql's message when the query runs if its type holds no labels
    (``typeof`` is folded to a constant when Spark plans the query, so the guard
    costs nothing per row); two kinds are Spark's analyzer's error.
    """
    types = [data_type(c) for c in cols]
    check_label_array_types(func, names, types)
    return [
        c if t is not None else _guarded(func, n, c)
        for n, c, t in zip(names, cols, types, strict=True)
    ]


#: Spark's ``typeof`` of an array of labels (or of an all-NULL input); a string type
#: under a collation is not among them (``array<string collate UTF8_LCASE>``)
LABEL_ARRAY = r"array<(string|varchar\(\d+\)|char\(\d+\)|tinyint|smallint|int|bigint|void)>|void"


def _guarded(func: str, name: str, col: Column) -> Column:
    """``col``, or Spark's ``raise_error`` with mlsql's message if its type holds no labels."""
    before, after = LT.NOT_A_LABEL_MESSAGE.format(func=func, name=name, type="{}").split("{}")
    t = F.typeof(col)
    bad = F.raise_error(F.concat(F.lit(before), t, F.lit(after)))
    return F.when(t.rlike(f"^({LABEL_ARRAY})$"), col).otherwise(bad)


def check_label_array_types(
    func: str, names: Sequence[str], types: Sequence[T.DataType | None]
) -> None:
    """Raise :class:`MlsqlError` unless every known type is an array of labels, all of one kind."""
    for name, dtype in zip(names, types, strict=True):
        if dtype is not None and not isinstance(dtype, (T.ArrayType, T.NullType)):
            raise MlsqlError(
                NOT_A_LIST_MESSAGE.format(func=func, name=name, type=dtype.simpleString())
            )
    known = [(n, t) for n, t in zip(names, types, strict=True) if t is not None]
    LT.check_labels(
        func,
        [n for n, _ in known],
        [kind(element(t) or t) for _, t in known],
        [t.simpleString() for _, t in known],
    )


def check_same_kind(func: str, names: Sequence[str], types: Sequence[T.DataType | None]) -> None:
    """Raise :class:`MlsqlError` naming both types unless all known types hold one label kind."""
    known = [(n, t) for n, t in zip(names, types, strict=True) if t is not None]
    labels = [(n, t, element(t) or t) for n, t in known]
    for i, (n1, t1, l1) in enumerate(labels):
        for n2, t2, l2 in labels[i + 1 :]:
            if compatible(l1, l2):
                continue
            raise MlsqlError(
                MISMATCH_MESSAGE.format(
                    func=func,
                    left=n1,
                    right=n2,
                    left_type=t1.simpleString(),
                    right_type=t2.simpleString(),
                )
            )
