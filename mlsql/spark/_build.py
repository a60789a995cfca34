"""Build Spark Columns from the registry's formulas: the one builder every family uses.

:func:`expression` runs a registry measure's formula over a statistics object
(a dataclass whose fields are Columns) with :class:`~mlsql.spark.ops.SparkOps`;
:func:`example` writes a docstring example. The public functions around them
(real signature, parameter checks, numpydoc docstring) come from the
engine-neutral front, :func:`mlsql._front.build.function`, with
:data:`mlsql.spark._engine.SPARK`.

Spark's optimizer computes an expression that a formula names several times
once per row (and an aggregate once per group), so the formulas run directly
on Columns: no lowering step is needed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, Union

from pyspark.sql import Column

from mlsql._front import build as front
from mlsql._registry import Measure
from mlsql._weights import weighted
from mlsql.spark.ops import SparkOps, column

OPS = SparkOps()
IntoColumn = Union[str, Column]  # noqa: UP007  (a runtime alias, Python 3.10 compatible)
#: a check: (function name, input names, input Columns) -> None, raising MlsqlError
#: a check raises on input types it can see; it may return the Columns to use instead
Check = Callable[[str, Sequence[str], Sequence[Column]], "Sequence[Column] | None"]


# ---------------------------------------------------------------- formulas
def run(formula: Callable[..., Any], weight: Column | None, *args: Any, **params: Any) -> Any:
    """``formula(OPS, *args, **params)``; with ``weight`` (checked by
    :func:`mlsql.spark._weights.weighted_check`), every row weighted by it
    (:func:`mlsql._weights.weighted`)."""
    if weight is None:
        return formula(OPS, *args, **params)
    return weighted(formula, weight.cast("double"), OPS, *args, **params)


def expression(
    measure: str | Measure, stats: Any, *, family: ModuleType | None = None, **params: Any
) -> Column:
    """The registry formula of ``measure`` over ``stats`` (a dataclass of Columns).

    Parameters are validated (:func:`~mlsql._front.build.checked_params`); the caller has checked
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
    checked = front.checked_params(measure, params, family)
    return column(front.formula(measure)(OPS, stats, **checked))


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
    if tuple(inputs) == ("counts",):
        lines.append(">>> df = df.agg(ms.multilabel_counts('actual', 'predicted').alias('counts'))")
    if kind in ("set", "row"):
        lines.append(f">>> [r[0] for r in df.select(ms.{name}({args})).collect()]")
    elif kind == "from_counts":
        lines.append(f">>> df.select(ms.{name}({args})).first()[0]")
    else:
        lines.append(f">>> df.agg(ms.{name}({args})).first()[0]")
    return [*lines, output]
