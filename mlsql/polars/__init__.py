"""mlsql for Polars: every measure as a function returning ``pl.Expr``.

Each function takes column names or expressions and works in ``select``,
``with_columns``, ``group_by().agg`` and ``over()``, on DataFrames and
LazyFrames, and on the streaming engine. Importing this module also registers
the ``.mlsql`` expression namespace with the same functions.

Semantics are those of the SQL library (DESIGN.md section 1): labels are sets
(repeats count once, NULL elements are ignored), a NULL list makes the row
unknown (aggregates skip it, per-row functions give NULL), and both sides must
hold the same kind of label: a type mismatch raises :class:`MlsqlError`
naming both types when the plan is resolved, before any data is read.

Functions are generated from the measure registry (:mod:`mlsql._registry`);
family modules in :mod:`mlsql.polars.families` supply their statistics and
hand-written functions.

Examples
--------
>>> import polars as pl
>>> import mlsql.polars as mp
>>> df = pl.DataFrame(
...     {"actual": [["cat", "bird"], ["dog"]], "predicted": [["cat"], ["dog", "fish"]]}
... )
>>> df.select(mp.micro_f1("actual", "predicted")).item()
0.6666666666666666
>>> df.select(pl.col("actual").mlsql.samples_jaccard("predicted")).item()
0.5
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from mlsql._errors import MlsqlError
from mlsql._front import examples
from mlsql._front import families as front
from mlsql._registry import REGISTRY, measures
from mlsql.polars import _build, evaluate, families, namespace, resample, slicing
from mlsql.polars._engine import POLARS


def _example_statements(functions: dict[str, Callable[..., pl.Expr]]) -> dict[str, list[str]]:
    """Per generated function, the statements of its docstring example (not run here)."""
    mods = families.modules()
    out: dict[str, list[str]] = {}
    for name, fn in functions.items():
        m = REGISTRY.get(name)
        if m is None or "Examples\n--------" in (fn.__doc__ or ""):
            continue  # an alias (documented under its name) or written by hand
        found = examples.example(m)
        if found is not None and front.serving(m.family, mods) is not None:
            columns, params = found
            out[name] = _build.example(name, m.kind, columns, m.inputs, params)
    return out


def _add_examples(
    functions: dict[str, Callable[..., pl.Expr]], examples: dict[str, list[str]]
) -> None:
    """Append each generated docstring's example, its output as written in
    :mod:`mlsql._front.example_outputs`.

    The outputs are computed once by ``python -m mlsql._stubs`` and committed, so
    importing runs no example and the doctests compare with a written value.
    """
    from mlsql._front.example_outputs import OUTPUTS

    for name, statements in examples.items():
        fn = functions[name]
        output = OUTPUTS.get(name, "<no output written: run python -m mlsql._stubs>")
        lines = [*(f">>> {s}" for s in statements), output]
        fn.__doc__ = (fn.__doc__ or "").rstrip("\n") + "\n\nExamples\n--------\n"
        fn.__doc__ += "\n".join(lines) + "\n"


def _expression_functions(functions: dict[str, Callable[..., pl.Expr]]) -> dict[str, Any]:
    """The functions that return an expression (label tables take and return frames)."""
    kinds = {alias: m.kind for m in measures() for alias in (m.name, *m.aliases)}
    return {
        name: fn
        for name, fn in functions.items()
        if kinds.get(name) != "table" and name not in FRAME_FUNCTIONS
    }


#: frame in, frame out: no expression namespace
FRAME_FUNCTIONS: dict[str, Callable[..., Any]] = {
    **resample.FUNCTIONS,
    **evaluate.FUNCTIONS,
    **slicing.FUNCTIONS,
}
FUNCTIONS: dict[str, Callable[..., pl.Expr]] = front.functions(POLARS)
FUNCTIONS.update(FRAME_FUNCTIONS)
evaluate.MEASURES.update(FUNCTIONS)  # evaluate calls the measures by name
globals().update(FUNCTIONS)
#: the statements of each generated docstring example (their outputs: ``example_outputs``)
_EXAMPLES = _example_statements(FUNCTIONS)
_add_examples(FUNCTIONS, _EXAMPLES)
namespace.install(_expression_functions(FUNCTIONS))

__all__ = ["MlsqlError", *sorted(FUNCTIONS)]
