"""Build Polars expressions from the registry's formulas: the one builder every family uses.

:func:`expression` runs a registry measure's formula over a statistics object
(a dataclass whose fields are ``pl.Expr``) and returns one ``pl.Expr``;
:func:`function` turns a registry measure into a public function with a real
signature and a numpydoc docstring. Both are used by :mod:`mlsql.polars` for
every measure that has a formula, and by family modules for their own
hand-written functions.

Two ways to run a formula:

- symbolic (the default): the statistics become :mod:`~mlsql.polars._symbolic`
  nodes, so every statistic and every aggregation is computed once in the
  final expression, whatever the engine (Polars' streaming engine has no
  common-subexpression elimination);
- direct: used when the statistics object holds callables (statistics that
  take a term, as ranking's ``over_hits``), or when asked with
  ``symbolic=False``: the formula runs on ``pl.Expr`` with
  :class:`~mlsql.polars.ops.PolarsOps`, and Polars' own CSE (in-memory engine)
  is all there is.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import polars as pl

from mlsql import _params as P
from mlsql._registry import REGISTRY, Measure, measures
from mlsql.polars import _symbolic as S
from mlsql.polars._dtypes import Check, IntoExpr, guarded
from mlsql.polars.ops import PolarsOps

OPS = PolarsOps()


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
    >>> checked_params("micro_fbeta", {"beta": -1})
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'beta' parameter of micro_fbeta must be a finite number > 0. Got -1 instead.
    """
    m = lookup(measure)
    names = {p.name for p in m.params}
    unknown = sorted(set(given) - names)
    if unknown:
        raise TypeError(f"{m.name}() got an unexpected keyword argument {unknown[0]!r}")
    out: dict[str, Any] = {}
    for p in m.params:
        out[p.name] = P.check(p, given.get(p.name, p.default), m.name)
    if family is not None and hasattr(family, "params"):
        out = family.params(m, out)
    return out


# ---------------------------------------------------------------- formulas
def _has_callables(stats: Any) -> bool:
    if dataclasses.is_dataclass(stats) and not isinstance(stats, type):
        return any(_has_callables(getattr(stats, f.name)) for f in dataclasses.fields(stats))
    if isinstance(stats, (tuple, list)):
        return any(_has_callables(v) for v in stats)
    if isinstance(stats, dict):
        return any(_has_callables(v) for v in stats.values())
    return callable(stats) and not isinstance(stats, pl.Expr)


def nodes(stats: Any, *, strict: bool) -> Any:
    """``stats`` with every ``pl.Expr`` turned into a formula node (a statistic).

    ``strict``: every statistic is NULL exactly where the ``known`` mask is false.
    """
    if isinstance(stats, pl.Expr):
        return S.leaf(stats, strict=strict)
    if dataclasses.is_dataclass(stats) and not isinstance(stats, type):
        changes = {
            f.name: nodes(getattr(stats, f.name), strict=strict)
            for f in dataclasses.fields(stats)
            if f.init
        }
        return dataclasses.replace(stats, **changes)
    if isinstance(stats, (tuple, list)):
        return type(stats)(nodes(v, strict=strict) for v in stats)
    if isinstance(stats, dict):
        return {k: nodes(v, strict=strict) for k, v in stats.items()}
    return stats


def evaluate(
    formula: Callable[..., Any],
    stats: Any,
    *,
    known: pl.Expr | None = None,
    symbolic: bool | None = None,
    **params: Any,
) -> pl.Expr:
    """``formula(ops, stats, **params)`` as one ``pl.Expr`` (see the module docstring).

    ``known``: a cheap mask of the rows where every statistic is non-NULL; give
    it only if each statistic is NULL exactly where it is false (then counts
    cost nothing and linear sums split per statistic).
    """
    if symbolic is None:
        symbolic = not _has_callables(stats)
    if not symbolic:
        out = formula(OPS, stats, **params)
        return out if isinstance(out, pl.Expr) else pl.lit(out)
    result = formula(OPS, nodes(stats, strict=known is not None), **params)
    if isinstance(result, dict):
        return S.Lowering(known).struct(result)
    return S.Lowering(known).expr(result)


def expression(
    measure: str | Measure,
    stats: Any,
    *,
    known: pl.Expr | None = None,
    symbolic: bool | None = None,
    family: ModuleType | None = None,
    **params: Any,
) -> pl.Expr:
    """The registry formula of ``measure`` over ``stats`` (a dataclass of ``pl.Expr``).

    Parameters are validated (:func:`checked_params`). The caller has checked
    the inputs' types (see :func:`mlsql.polars._dtypes.guarded`).

    Examples
    --------
    >>> import polars as pl
    >>> from mlsql.polars.stats import known, row_stats
    >>> a, p = pl.col("actual"), pl.col("predicted")
    >>> df = pl.DataFrame({"actual": [["x", "y"]], "predicted": [["x"]]})
    >>> df.select(expression("micro_recall", row_stats(a, p), known=known(a, p))).item()
    0.5
    """
    m = lookup(measure)
    if m.build is None:
        raise TypeError(f"{m.name} has no formula in the registry; it is written by hand")
    checked = checked_params(m, params, family)
    return evaluate(m.build, stats, known=known, symbolic=symbolic, **checked)


# ---------------------------------------------------------------- public functions
INPUT_DOCS = {
    "actual": "The true labels of each row: a list column (name or expression).",
    "predicted": "The predicted labels of each row: a list column (name or expression).",
    "counts": "Stored ``multilabel_counts`` structs (or ``merge_counts`` of them).",
}


def input_doc(m: Measure, name: str) -> str:
    """What input ``name`` of ``m`` holds: label lists, or one value per row."""
    if name in ("actual", "predicted") and not m.takes_label_lists:
        return f"The {'true' if name == 'actual' else 'predicted'} value of each row: a column (name or expression)."
    return INPUT_DOCS.get(name, "Column name or expression.")


RETURNS = {
    "set": "polars.Expr\n    A list per row (distinct, sorted, no NULLs); NULL where either list is NULL.",
    "row": "polars.Expr\n    A number per row; NULL where either list is NULL.",
    "aggregate": (
        "polars.Expr\n    An aggregate: one number per ``select``, ``group_by().agg`` group or\n"
        "    ``over()`` window; NULL over no known rows."
    ),
    "counts": "polars.Expr\n    An aggregate struct of counts that can be stored and merged.",
    "from_counts": "polars.Expr\n    A number per row of stored counts.",
    "table": "polars.Expr\n    See the summary.",
}
#: example table for the multi-label functions' docstrings
EXAMPLE_ROWS = {"actual": [["cat", "bird"], ["dog"]], "predicted": [["cat"], ["dog", "fish"]]}


def signature(m: Measure) -> inspect.Signature:
    """``(input, ..., *, param=default, ...) -> pl.Expr``."""
    params = [
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=IntoExpr)
        for name in m.inputs
    ]
    params += [
        inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default)
        for p in m.params
    ]
    return inspect.Signature(params, return_annotation=pl.Expr)


def docstring(m: Measure, example: list[str] | None = None) -> str:
    """A numpydoc docstring from the registry entry (the example is added later)."""
    lines = [m.summary, "", "Parameters", "----------"]
    for name in m.inputs:
        lines += [
            f"{name} : str or polars.Expr",
            f"    {input_doc(m, name)}",
        ]
    for p in m.params:
        lines += (
            P.param_doc(p)
            if p.constraint is not None
            else f"{p.name} : default {p.default!r}\n    See the summary."
        ).splitlines()
    lines += ["", "Returns", "-------", *RETURNS[m.kind].splitlines()]
    if example:
        lines += ["", "Examples", "--------", *example]
    return "\n".join(lines) + "\n"


def function(
    m: Measure,
    build: Callable[..., pl.Expr],
    check: Check,
    family: ModuleType | None = None,
) -> Callable[..., pl.Expr]:
    """The public function of registry measure ``m``.

    ``build(*inputs, **params)`` gets the checked input expressions and the
    validated parameters and returns the expression; ``check`` is the plan-time
    type check (:mod:`mlsql.polars._dtypes`).
    """
    sig = signature(m)

    def public(*args: Any, **kwargs: Any) -> pl.Expr:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        params = checked_params(m, {p.name: bound.arguments[p.name] for p in m.params}, family)
        inputs = [bound.arguments[name] for name in m.inputs]
        return guarded(m.name, m.inputs, inputs, lambda *xs: build(*xs, **params), check)

    public.__name__ = public.__qualname__ = m.name
    public.__module__ = "mlsql.polars"
    public.__signature__ = sig  # type: ignore[attr-defined]
    public.__doc__ = docstring(m)
    return public


def generated(m: Measure, family: ModuleType, check: Check) -> Callable[..., pl.Expr]:
    """The public function of a formula measure, statistics from ``family.stats``."""
    known = getattr(family, "known", None)

    def build(*inputs: pl.Expr, **params: Any) -> pl.Expr:
        stats = family.stats(m, *inputs)
        mask = known(m, *inputs) if known is not None else None
        return evaluate(m.build, stats, known=mask, **params)  # type: ignore[arg-type]

    return function(m, build, check, family)


# ---------------------------------------------------------------- examples
def example(
    name: str,
    kind: str,
    columns: dict[str, list[Any]],
    inputs: Sequence[str],
    params: dict[str, Any] | None = None,
) -> list[str]:
    """Doctest statements showing ``name`` on a small DataFrame (its output: :func:`run`)."""
    args = ", ".join([*map(repr, inputs), *(f"{k}={v!r}" for k, v in (params or {}).items())])
    out = ["import polars as pl", "import mlsql.polars as mp", f"df = pl.DataFrame({columns!r})"]
    if tuple(inputs) == ("counts",):
        out.append("df = df.select(mp.multilabel_counts('actual', 'predicted').alias('counts'))")
    if kind in ("set", "row"):
        out.append(f"df.select(mp.{name}({args})).to_series().to_list()")
    else:
        out.append(f"df.select(mp.{name}({args})).item()")
    return out


def run(statements: list[str], mp: Any) -> str:
    """The output of the last of ``statements`` (as doctest shows it), computed now with ``mp``.

    Used by ``python -m mlsql._stubs`` to write the examples' outputs once.
    """
    env: dict[str, Any] = {"pl": pl, "mp": mp}
    for statement in statements[:-1]:
        if not statement.startswith("import "):
            exec(statement, env)
    return repr(eval(statements[-1], env))
