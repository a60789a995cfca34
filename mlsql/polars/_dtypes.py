"""The type guard: both sides must hold the same kind of label, checked at plan time.

Polars casts ``List(Int64)`` against ``List(String)`` to strings by itself
inside ``list.set_intersection``, so ``[1]`` and ``["1"]`` would match.
mlsql refuses instead (DESIGN.md section 1.3) with an :class:`MlsqlError`
naming both types.

The check runs inside ``pl.pipe_with_dtype``: Polars calls it once, while it
resolves the plan's schema, with the input dtypes, before reading any data. It
adds nothing per row or per batch, keeps the streaming engine, and raises at
``collect()`` (or ``collect_schema()``) of a LazyFrame, at ``select`` of a
DataFrame. Within one kind, inputs are normalised: ``Categorical``/``Enum``
labels become ``String``, ``Array`` becomes ``List``, an all-NULL (``Null``)
side takes the other side's type; integer widths may differ.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Union

import polars as pl

from mlsql import _label_types as LT
from mlsql._errors import MlsqlError
from mlsql.polars._checks import collecting, gate

IntoExpr = Union[str, pl.Expr]  # noqa: UP007  (a runtime alias, Python 3.10 compatible)
Pairs = list[tuple[pl.Expr, pl.DataType]]
#: a check: (function name, input names, (expr, dtype) pairs) -> the expressions to use
Check = Callable[[str, Sequence[str], Pairs], list[pl.Expr]]

MISMATCH_MESSAGE = LT.MISMATCH_MESSAGE.replace("_type}", "_dtype}")
NOT_A_LIST_MESSAGE = LT.NOT_A_LIST_MESSAGE.replace("{type}", "{dtype}")


def to_expr(value: Any, func: str, name: str) -> pl.Expr:
    """A column name or a ``pl.Expr`` as an expression.

    Examples
    --------
    >>> to_expr("actual", "micro_f1", "actual").meta.output_name()
    'actual'
    """
    if isinstance(value, str):
        return pl.col(value)
    if isinstance(value, pl.Expr):
        return value
    raise MlsqlError(
        f"{func} takes a column name or a polars expression for {name}. Got {value!r} instead."
    )


def kind(dtype: pl.DataType) -> str:
    """The kind of a label type: integer, text, float, boolean, decimal, null or the type.

    Examples
    --------
    >>> kind(pl.Int32), kind(pl.Categorical()), kind(pl.Float32)
    ('integer', 'text', 'float')
    """
    if dtype.is_integer():
        return "integer"
    if dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum)):
        return "text"
    if dtype.is_float():
        return "float"
    if dtype == pl.Boolean:
        return "boolean"
    if dtype.is_decimal():
        return "decimal"
    if dtype == pl.Null:
        return "null"
    return str(dtype)


def bounds(dtype: pl.DataType) -> tuple[int, int] | None:
    """The range of an integer type (None for any other type).

    Examples
    --------
    >>> bounds(pl.Int8), bounds(pl.UInt16), bounds(pl.String)
    ((-128, 127), (0, 65535), None)
    """
    if not dtype.is_integer():
        return None
    bits = int("".join(c for c in str(dtype) if c.isdigit()))
    return LT.integer_bounds(bits, dtype.is_signed_integer())


def inner(dtype: pl.DataType) -> pl.DataType | None:
    """The element type of a ``List`` or ``Array`` (``Null`` for an all-NULL column), else None."""
    if isinstance(dtype, (pl.List, pl.Array)):
        return dtype.inner  # type: ignore[return-value]
    if dtype == pl.Null:
        return pl.Null()
    return None


def label_lists(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """Check that every input is a list of labels of one kind; return them as comparable lists.

    Which element types are labels is :mod:`mlsql._label_types`' rule; it is
    checked here, on the dtype, before any list operation is built (Polars
    panics on set operations over nested lists or structs).

    Examples
    --------
    >>> pairs = [(pl.col("a"), pl.List(pl.Int64)), (pl.col("p"), pl.List(pl.String))]
    >>> label_lists("micro_f1", ["actual", "predicted"], pairs)
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: micro_f1 needs actual and predicted of the same label type (both text, both integers, ...). Got actual List(Int64) and predicted List(String).
    """
    for (_, dtype), name in zip(pairs, names, strict=True):
        if inner(dtype) is None:
            raise MlsqlError(NOT_A_LIST_MESSAGE.format(func=func, name=name, dtype=dtype))
    kinds = [kind(inner(d)) for _, d in pairs]  # type: ignore[arg-type]
    LT.check_labels(func, names, kinds, [str(d) for _, d in pairs])
    return same_kind(func, names, pairs)


def same_kind(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """Check that all inputs hold labels of one kind (lists: their elements); normalise them.

    Lists stay lists (``Array`` becomes ``List``) and scalars stay scalars; text
    becomes ``String``; an all-NULL input takes the others' label type.

    Examples
    --------
    >>> pairs = [(pl.col("a"), pl.Int8), (pl.col("p"), pl.Int64)]
    >>> len(same_kind("accuracy", ["actual", "predicted"], pairs))
    2
    """
    dtypes = [d for _, d in pairs]
    labels = [_label_type(d) for d in dtypes]
    check_same_kind(func, names, dtypes, labels)
    target = _common(labels)
    lists = any(isinstance(d, (pl.List, pl.Array)) for d in dtypes)
    out = []
    for (expr, dtype), label in zip(pairs, labels, strict=True):
        if isinstance(dtype, pl.Array):
            expr = expr.arr.to_list()
        if target is not None and label != target:
            as_list = isinstance(dtype, (pl.List, pl.Array)) or (dtype == pl.Null and lists)
            expr = expr.cast(pl.List(target) if as_list else target)
        out.append(expr)
    return out


def _label_type(dtype: pl.DataType) -> pl.DataType:
    element = inner(dtype)
    return dtype if element is None else element


#: kinds whose types mix freely (integer widths may differ, Categorical is text)
_KINDS = ("integer", "text", "float", "decimal")


def compatible(left: pl.DataType, right: pl.DataType) -> bool:
    """Whether two label types are of one kind (an all-NULL side fits anything)."""
    a, b = kind(left), kind(right)
    return "null" in (a, b) or (a == b and a in _KINDS) or left == right


def check_same_kind(
    func: str, names: Sequence[str], dtypes: Sequence[pl.DataType], labels: Sequence[pl.DataType]
) -> None:
    """Raise :class:`MlsqlError` naming both types unless all ``labels`` are of one kind.

    ``dtypes`` are the inputs' own types (for the message), ``labels`` their label types.
    """
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            if not compatible(labels[i], labels[j]):
                raise MlsqlError(
                    MISMATCH_MESSAGE.format(
                        func=func,
                        left=names[i],
                        right=names[j],
                        left_dtype=dtypes[i],
                        right_dtype=dtypes[j],
                    )
                )


def _common(labels: list[pl.DataType]) -> pl.DataType | None:
    """The element type every side is cast to, or None to leave them as they are."""
    kinds = {kind(t) for t in labels} - {"null"}
    if not kinds or kinds == {"text"}:
        return pl.String()  # text, or nothing but NULLs and empty lists
    if any(kind(t) == "null" for t in labels):
        return next(t for t in labels if kind(t) != "null")
    return None


def common_type(dtypes: Sequence[pl.DataType]) -> pl.DataType:
    """The type every one of ``dtypes`` (of one kind) casts to without loss: the type Polars
    gives their values stacked (integers of different widths hold the same classes, and
    the tables stack actual and predicted into one class column).

    Examples
    --------
    >>> common_type([pl.Int16, pl.Int64]), common_type([pl.UInt8, pl.Int8])
    (Int64, Int16)
    """
    frames = [pl.DataFrame({"x": pl.Series([], dtype=d)}) for d in dtypes]
    return pl.concat(frames, how="vertical_relaxed").schema["x"]


def guarded(
    func: str,
    names: Sequence[str],
    inputs: Sequence[Any],
    build: Callable[..., pl.Expr],
    check: Check = label_lists,
) -> pl.Expr:
    """``build(*inputs)`` once Polars knows the inputs' types and ``check`` accepts them.

    ``check`` runs at plan time (``pl.pipe_with_dtype``), so a LazyFrame is not
    read to find a type mismatch, and nothing is added per row. Checks of the
    inputs' values (:func:`mlsql.polars._checks.checked`) made by ``check`` or
    ``build`` run once, on the result (:func:`mlsql.polars._checks.gate`).
    The result is named ``func``.
    """
    exprs = [to_expr(x, func, name) for x, name in zip(inputs, names, strict=True)]

    def resolved(pairs: Pairs) -> pl.Expr:
        with collecting() as pending:
            out = build(*check(func, names, pairs))
        return gate(out, pending).alias(func)

    return pl.pipe_with_dtype(exprs, resolved)
