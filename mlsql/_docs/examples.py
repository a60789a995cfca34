"""Each function's example: a tiny input table, its call in every engine, and its output.

The input is the engine-neutral example (:func:`mlsql._front.examples.example`, the table
the docstrings run on) or, for the functions without one, :data:`OWN_EXAMPLES`. The output is computed on DuckDB when the pages are
generated and written into them as literals; ``tests/test_docs.py`` regenerates
the pages (stale ones fail) and checks that Polars gives the same output.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from mlsql._front import examples as shared
from mlsql._registry import Measure
from mlsql._sqlexpr import lit, quote_ident

SQL_NAME = re.compile(r"[a-z_][a-z0-9_]*")
#: names that need quotes in DuckDB even when they look plain (those the examples use)
RESERVED = frozenset({"by", "order", "group", "select", "from", "table"})


def ident(name: str) -> str:
    """A column name as SQL: bare when plain, else quoted."""
    plain_name = SQL_NAME.fullmatch(name) and name not in RESERVED
    return name if plain_name else quote_ident(name)


#: the multi-label example: two documents' true and predicted tags
TAGS = shared.MULTILABEL
#: multilabel_counts of TAGS, whole and per row (the stored-counts examples' input)
COUNTS_ROW = {"n_rows": 2, "tp": 2, "fp": 1, "fn": 1, "n_actual": 3, "n_predicted": 3, "n_exact": 0}
COUNTS_PARTS = [
    {"n_rows": 1, "tp": 1, "fp": 0, "fn": 1, "n_actual": 2, "n_predicted": 1, "n_exact": 0},
    {"n_rows": 1, "tp": 1, "fp": 1, "fn": 0, "n_actual": 1, "n_predicted": 2, "n_exact": 0},
]

#: examples of the functions without an engine-neutral one, or with a special one
OWN_EXAMPLES: dict[str, tuple[dict[str, list[Any]], dict[str, Any]]] = {
    "fmeasure": (TAGS, {"options": "-beta 2."}),
    "multilabel_counts": (TAGS, {}),
    "merge_counts": ({"counts": COUNTS_PARTS}, {}),
    "labels_from_indicators": ({"cat": [1, 0], "dog": [1, 1]}, {"labels": ["cat", "dog"]}),
    "indicators_from_labels": (
        {"actual": TAGS["actual"]},
        {"labels": ["bird", "cat", "dog", "fish"]},
    ),
    "label_metrics": (TAGS, {}),
    "multilabel_report": (TAGS, {"labels": ["bird", "cat", "dog", "fish", "owl"]}),
    "cost_map": ({"actual": ["a", "b"], "predicted": ["b", "a"], "cost": [5.0, 2.0]}, {}),
}
#: label tables not named above take the tags, with beta = 2 where they have one
TABLE_FAMILIES = ("label_based",)


@dataclass(frozen=True)
class Example:
    """One function's example: input columns (named as the table ``t``) and parameters."""

    measure: Measure
    columns: dict[str, list[Any]]
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return self.measure.kind

    @property
    def name(self) -> str:
        return self.measure.name

    @property
    def input_columns(self) -> list[str]:
        """The columns the call names (indicator columns for ``labels_from_indicators``)."""
        if self.name == "labels_from_indicators":
            return list(self.columns)
        return [c for c in self.measure.inputs if c != "source" and c not in self.params]

    @property
    def positional(self) -> list[str]:
        """Parameters that are inputs (``labels`` of the indicator functions): by position."""
        return [k for k in self.params if k in self.measure.inputs]


def example(m: Measure) -> Example | None:
    """``m``'s example, or None when neither the family nor this module gives one."""
    if m.name in OWN_EXAMPLES:
        columns, params = OWN_EXAMPLES[m.name]
        return Example(m, columns, params)
    if m.family in TABLE_FAMILIES and m.kind == "table":
        beta = {"beta": 2.0} if any(p.name == "beta" for p in m.params) else {}
        return Example(m, TAGS, beta)
    if m.kind == "from_counts" and m.inputs == ("counts",):
        given = {"n_labels": 4} if any(p.name == "n_labels" for p in m.params) else {}
        return Example(m, {"counts": [COUNTS_ROW]}, given)
    found = shared.example(m)
    if found is None:
        return None
    columns, params = found
    names = {p.name for p in m.params}
    return Example(m, columns, {k: v for k, v in params.items() if k in names})


# ---------------------------------------------------------------- calls
def sql_literal(value: Any) -> str:
    """A Python value as a DuckDB literal: lists as ``[...]``, dicts as ``MAP {...}``."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(sql_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{sql_literal(k)}: {sql_literal(v)}" for k, v in value.items())
        return "MAP {" + items + "}"
    return str(lit(value))


def sql_call(ex: Example, *, positional: frozenset[str] = frozenset()) -> str:
    """The DuckDB query of the example over the table ``t``."""
    m = ex.measure
    if m.kind == "table":
        args = ", ".join(["'t'", *(sql_literal(c) for c in ex.input_columns)])
        args += "".join(f", {ident(k)} := {sql_literal(v)}" for k, v in ex.params.items())
        return f"SELECT * FROM {m.name}({args});"
    cols = [ident(c) for c in ex.input_columns]
    if m.name == "labels_from_indicators":
        cols = ["[" + ", ".join(cols) + "]"]
    parts = cols + [
        sql_literal(v) if k in positional or k in ex.positional else f"{k} := {sql_literal(v)}"
        for k, v in ex.params.items()
    ]
    return f"SELECT {m.name}({', '.join(parts)}) AS {m.name} FROM t;"


def _py_args(ex: Example, module: str, frame: str | None) -> str:
    cols = [repr(c) for c in ex.input_columns]
    if ex.name == "labels_from_indicators":
        cols = ["[" + ", ".join(cols) + "]"]
    params = [repr(v) if k in ex.positional else f"{k}={v!r}" for k, v in ex.params.items()]
    args = ", ".join(([frame] if frame else []) + cols + params)
    return f"{module}.{ex.name}({args})"


def polars_call(ex: Example) -> str:
    """The Polars call of the example over the DataFrame ``df``."""
    if ex.kind == "table":
        return _py_args(ex, "mp", "df")
    return f"df.select({_py_args(ex, 'mp', None)})"


def spark_call(ex: Example) -> str:
    """The PySpark call of the example over the DataFrame ``df``."""
    if ex.kind == "table":
        return _py_args(ex, "ms", "df") + ".show()"
    verb = "agg" if ex.kind in ("aggregate", "counts") else "select"
    return f"df.{verb}({_py_args(ex, 'ms', None)}).show()"


# ---------------------------------------------------------------- outputs
@dataclass(frozen=True)
class Output:
    """A result as rows of plain Python values, with its column names."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]


def plain(value: Any) -> Any:
    """Engine values as plain Python: Decimal as float, tuples as lists, maps as dicts."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, (list, tuple)):
        if all(isinstance(v, dict) and set(v) == {"key", "value"} for v in value) and value:
            return {plain(v["key"]): plain(v["value"]) for v in value}
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    return value


def on_duckdb(ex: Example, con: Any) -> tuple[str, Output]:
    """Run the example on DuckDB: its query as shown, and its output."""
    import duckdb
    import pyarrow as pa

    con.register("t", pa.table(ex.columns))
    try:
        query = sql_call(ex)
        try:
            result = con.sql(query.rstrip(";"))
        except duckdb.Error:  # a parameter without default is positional in a macro
            query = sql_call(ex, positional=frozenset(ex.params))
            result = con.sql(query.rstrip(";"))
        rows = tuple(tuple(plain(v) for v in r) for r in result.fetchall())
        return query, Output(tuple(result.columns), rows)
    finally:
        con.unregister("t")


def on_polars(ex: Example) -> Output:
    """Run the example on Polars."""
    import polars as pl

    import mlsql.polars as mp

    df = pl.DataFrame(ex.columns)
    out = eval(polars_call(ex), {"mp": mp, "df": df})
    if isinstance(out, pl.LazyFrame):
        out = out.collect()
    return Output(tuple(out.columns), tuple(tuple(plain(v) for v in r) for r in out.rows()))


def same(a: Any, b: Any, rel: float = 1e-12) -> bool:
    """Equal values, floats to ``rel`` relative (NaN equals NaN)."""
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=rel, abs_tol=1e-15)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bool(a == b)


def same_output(a: Output, b: Output, *, names: bool = True) -> bool:
    """The same rows (in any order) and, with ``names``, the same columns."""
    if (names and a.columns != b.columns) or len(a.rows) != len(b.rows):
        return False
    key = repr
    return all(
        same(list(x), list(y))
        for x, y in zip(sorted(a.rows, key=key), sorted(b.rows, key=key), strict=True)
    )
