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

import ast
from collections.abc import Callable, Collection, Mapping, Sequence
from types import ModuleType
from typing import Any, Union

from pyspark.sql import Column

from mlsql._front import build as front
from mlsql._front import examples
from mlsql._front.example_outputs import OUTPUTS
from mlsql._front.examples import FrameExample
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


def frame_example(name: str, example: FrameExample) -> list[str]:
    """Doctest statements showing ``name`` over the frame of ``example``, its schema read from
    the values (:func:`spark_type`).

    Examples
    --------
    >>> from mlsql._front.examples import FRAMES
    >>> frame_example("det_curve", FRAMES["det_curve"])[-2:]
    ["df = spark.createDataFrame([(0, 0.1), (0, 0.4), (1, 0.35), (1, 0.8)], 'y int, s double')", "[tuple(r) for r in ms.det_curve(df, 'y', 's').collect()]"]
    """
    columns = example.columns
    rows = [tuple(_value(x) for x in row) for row in zip(*columns.values(), strict=True)]
    schema = ", ".join(f"{n} {spark_type([_value(x) for x in v])}" for n, v in columns.items())
    args = [*map(repr, example.args), *(f"{k}={v!r}" for k, v in example.params.items())]
    call = f"ms.{name}({', '.join(['df', *args])})"
    if example.select:
        call += f".select({', '.join(map(repr, example.select))})"
    shown = {
        "rows": f"[tuple(r) for r in {call}.collect()]",
        "first": f"tuple({call}.first())",
        "item": f"{call}.first()[0]",
    }[example.show]
    return [
        "from pyspark.sql import SparkSession",
        "import mlsql.spark as ms",
        "spark = SparkSession.builder.getOrCreate()",
        f"df = spark.createDataFrame({rows!r}, {schema!r})",
        shown,
    ]


def spark_type(values: Sequence[Any]) -> str:
    """The Spark type of a column of Python ``values`` (an example's), as DDL.

    Examples
    --------
    >>> spark_type([None, 2]), spark_type([["a"], []]), spark_type([{"a": 0.5}])
    ('int', 'array<string>', 'map<string, double>')
    """
    x = next(v for v in values if v is not None and v != [])
    if isinstance(x, dict):
        return f"map<{spark_type(list(x))}, {spark_type(list(x.values()))}>"
    if isinstance(x, list):
        return f"array<{spark_type([e for v in values if v for e in v])}>"
    return {bool: "boolean", int: "int", float: "double", str: "string"}[type(x)]


#: a family's example: its rows, their DDL schema, the parameters and the printed output
Example = tuple[list[Any], str, dict[str, Any], str]


def _value(x: Any) -> Any:
    """A value of an example's table as Spark's is written: label scores as a map."""
    if isinstance(x, list) and x and all(isinstance(e, dict) and "score" in e for e in x):
        return {e["label"]: e["score"] for e in x}
    return x


def shown(name: str, approximate: Collection[str] = ()) -> str:
    """What ``name``'s example prints in Spark: the output of its engine-neutral example
    (:data:`~mlsql._front.example_outputs.OUTPUTS`), a struct as a ``Row``, and the value
    of a name in ``approximate`` to 11 decimals and ``...`` (Spark's sums and logarithms
    may differ in the last digits).

    Examples
    --------
    >>> shown("binary_counts")
    'Row(tp=2, fp=1, fn=1, tn=1)'
    >>> shown("logloss", approximate=["logloss"])
    '0.56553820200...'
    """
    output = OUTPUTS[name]
    if output.startswith("{"):
        fields = ast.literal_eval(output)
        return "Row(" + ", ".join(f"{k}={v!r}" for k, v in fields.items()) + ")"
    return output[:13] + "..." if name in approximate else output


def shared_example(
    measure: Measure, types: Mapping[str, str], approximate: Collection[str] = ()
) -> Example | None:
    """``measure``'s engine-neutral example (:func:`mlsql._front.examples.example`) as a
    Spark family's hook gives it: the table's rows, its schema (``types``: each column's
    Spark type), the parameters and what it prints (:func:`shown`); None where the measure
    has no such example."""
    found = examples.example(measure)
    if found is None or measure.name not in OUTPUTS:
        return None
    columns, params = found
    rows = [tuple(_value(x) for x in row) for row in zip(*columns.values(), strict=True)]
    schema = ", ".join(f"{name} {types[name]}" for name in columns)
    return rows, schema, params, shown(measure.name, approximate)
