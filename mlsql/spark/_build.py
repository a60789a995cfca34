"""Build Spark Columns from the registry's formulas: the one builder every family uses.

:func:`expression` runs a registry measure's formula over a statistics object
(a dataclass whose fields are Columns) with :class:`~mlsql.spark.ops.SparkOps`;
:func:`function` turns a registry measure into a public function with a real
signature and a numpydoc docstring. :mod:`mlsql.spark` uses both for every
measure that has a formula; family modules use them for their own
hand-written functions.

Spark's optimizer computes an expression that a formula names several times
once per row (and an aggregate once per group), so the formulas run directly
on Columns: no lowering step is needed.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, Union

from pyspark.sql import Column

from mlsql import _params as P
from mlsql._registry import REGISTRY, Measure, measures
from mlsql.spark._types import to_column
from mlsql.spark.ops import SparkOps, column

OPS = SparkOps()
IntoColumn = Union[str, Column]  # noqa: UP007  (a runtime alias, Python 3.10 compatible)
#: a check: (function name, input names, input Columns) -> None, raising MlsqlError
#: a check raises on input types it can see; it may return the Columns to use instead
Check = Callable[[str, Sequence[str], Sequence[Column]], "Sequence[Column] | None"]


# ---------------------------------------------------------------- parameters
def lookup(measure: str | Measure) -> Measure:
    """The registry entry of ``measure``."""
    if isinstance(measure, Measure):
        return measure
    measures()  # fills the registry
    return REGISTRY[measure]


def checked_params(
    measure: str | Measure, given: dict[str, Any], family: ModuleType | None = None
) -> dict[str, Any]:
    """Every parameter of ``measure``, defaulted and validated (same messages as SQL).

    Each parameter is checked against its registry constraint
    (:func:`mlsql._params.check`); a family module's ``params(measure, params)``
    checks the parameters that have none.

    Examples
    --------
    >>> checked_params("micro_fbeta", {"beta": 2})
    {'beta': 2.0, 'zero_division': ZeroDivision(kind='value', value=0.0)}
    >>> checked_params("micro_fbeta", {"beta": 0})
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'beta' parameter of micro_fbeta must be a finite number > 0. Got 0 instead.
    """
    m = lookup(measure)
    unknown = sorted(set(given) - {p.name for p in m.params})
    if unknown:
        raise TypeError(f"{m.name}() got an unexpected keyword argument {unknown[0]!r}")
    out: dict[str, Any] = {}
    for p in m.params:
        out[p.name] = P.check(p, given.get(p.name, p.default), m.name)
    if family is not None and hasattr(family, "params"):
        out = family.params(m, out)
    return out


# ---------------------------------------------------------------- formulas
def expression(
    measure: str | Measure, stats: Any, *, family: ModuleType | None = None, **params: Any
) -> Column:
    """The registry formula of ``measure`` over ``stats`` (a dataclass of Columns).

    Parameters are validated (:func:`checked_params`); the caller has checked
    the inputs' types.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> from mlsql.spark.stats import row_stats
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(["x", "y"], ["x"])], "actual array<string>, predicted array<string>")
    >>> df.agg(expression("micro_recall", row_stats(df.actual, df.predicted))).first()[0]
    0.5
    """
    m = lookup(measure)
    if m.build is None:
        raise TypeError(f"{m.name} has no formula in the registry; it is written by hand")
    return column(m.build(OPS, stats, **checked_params(m, params, family)))


# ---------------------------------------------------------------- public functions
INPUT_DOCS = {
    "actual": "The true labels of each row: an array column (name or Column).",
    "predicted": "The predicted labels of each row: an array column (name or Column).",
    "counts": "Stored ``multilabel_counts`` structs (or ``merge_counts`` of them).",
}


def input_doc(m: Measure, name: str) -> str:
    """What input ``name`` of ``m`` holds: label lists, or one value per row."""
    if name in ("actual", "predicted") and not m.takes_label_lists:
        return f"The {'true' if name == 'actual' else 'predicted'} value of each row: a column (name or Column)."
    return INPUT_DOCS.get(name, "Column name or Column.")


RETURNS = {
    "set": "pyspark.sql.Column\n    An array per row (distinct, sorted, no NULLs); NULL where either list is NULL.",
    "row": "pyspark.sql.Column\n    A number per row; NULL where either list is NULL.",
    "aggregate": (
        "pyspark.sql.Column\n    An aggregate: one number per ``agg`` or ``groupBy().agg`` group;\n"
        "    NULL over no known rows."
    ),
    "counts": "pyspark.sql.Column\n    An aggregate struct of counts that can be stored and merged.",
    "from_counts": "pyspark.sql.Column\n    A number per row of stored counts.",
    "table": "pyspark.sql.DataFrame\n    See the summary.",
}


def signature(m: Measure) -> inspect.Signature:
    """``(input, ..., *, param=default, ...) -> Column``."""
    params = [
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=IntoColumn)
        for name in m.inputs
    ]
    params += [
        inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default)
        for p in m.params
    ]
    return inspect.Signature(params, return_annotation=Column)


def docstring(m: Measure, example: Sequence[str] = ()) -> str:
    """A numpydoc docstring from the registry entry."""
    lines = [m.summary, "", "Parameters", "----------"]
    for name in m.inputs:
        lines += [
            f"{name} : str or pyspark.sql.Column",
            f"    {input_doc(m, name)}",
        ]
    for p in m.params:
        lines += (
            P.param_doc(p)
            if p.constraint is not None
            else f"{p.name} : default {p.default!r}\n    See the summary."
        ).splitlines()
    lines += ["", "Returns", "-------", *RETURNS[m.kind].splitlines()]
    lines += [
        "",
        "Notes",
        "-----",
        "Pass ``df.actual`` (a Column of the DataFrame) rather than a name to have mlsql",
        "check the label types when the Column is built; a name is checked by Spark.",
    ]
    if example:
        lines += ["", "Examples", "--------", *example]
    return "\n".join(lines) + "\n"


def function(
    m: Measure,
    build: Callable[..., Column],
    check: Check | None,
    family: ModuleType | None = None,
    example: Sequence[str] = (),
) -> Callable[..., Column]:
    """The public function of registry measure ``m``.

    ``build(*inputs, **params)`` gets the input Columns and the validated
    parameters and returns the Column; ``check`` raises
    :class:`~mlsql.MlsqlError` on input types it can see. The Column is named
    after the measure.
    """
    sig = signature(m)

    def public(*args: Any, **kwargs: Any) -> Column:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        params = checked_params(m, {p.name: bound.arguments[p.name] for p in m.params}, family)
        cols = [to_column(bound.arguments[name], m.name, name) for name in m.inputs]
        if check is not None:
            cols = list(check(m.name, m.inputs, cols) or cols)
        return column(build(*cols, **params)).alias(m.name)

    public.__name__ = public.__qualname__ = m.name
    public.__module__ = "mlsql.spark"
    public.__signature__ = sig  # type: ignore[attr-defined]
    public.__doc__ = docstring(m, example)
    return public


def generated(
    m: Measure, family: ModuleType, check: Check | None, example: Sequence[str] = ()
) -> Callable[..., Column]:
    """The public function of a formula measure, statistics from ``family.stats``."""

    def build(*inputs: Column, **params: Any) -> Column:
        return m.build(OPS, family.stats(m, *inputs), **params)  # type: ignore[misc]

    return function(m, build, check, family, example)


# ---------------------------------------------------------------- examples
def example(
    name: str,
    kind: str,
    rows: Sequence[tuple[Any, ...]],
    schema: str,
    inputs: Sequence[str],
    params: dict[str, Any],
    output: str,
) -> list[str]:
    """Doctest lines showing ``name`` on a small DataFrame, ending with ``output``."""
    args = ", ".join([*map(repr, inputs), *(f"{k}={v!r}" for k, v in params.items())])
    lines = [
        ">>> from pyspark.sql import SparkSession",
        ">>> import mlsql.spark as ms",
        ">>> spark = SparkSession.builder.getOrCreate()",
        f">>> df = spark.createDataFrame({list(rows)!r}, {schema!r})",
    ]
    if kind == "from_counts":
        lines.append(">>> df = df.agg(ms.multilabel_counts('actual', 'predicted').alias('counts'))")
    if kind in ("set", "row"):
        lines.append(f">>> [r[0] for r in df.select(ms.{name}({args})).collect()]")
    elif kind == "from_counts":
        lines.append(f">>> df.select(ms.{name}({args})).first()[0]")
    else:
        lines.append(f">>> df.agg(ms.{name}({args})).first()[0]")
    return [*lines, output]
