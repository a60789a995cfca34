"""Build Polars expressions from the registry's formulas: the one builder every family uses.

:func:`expression` runs a registry measure's formula over a statistics object
(a dataclass whose fields are ``pl.Expr``) and returns one ``pl.Expr``;
:func:`evaluate` runs any formula so. The public functions around them (real
signature, parameter checks, numpydoc docstring) come from the engine-neutral
front, :func:`mlsql._front.build.function`, with
:data:`mlsql.polars._engine.POLARS`. This module also writes the generated
functions' docstring examples (:func:`example`, :func:`run`).

Two ways to run a formula:

- symbolic (the default): the statistics become :mod:`~mlsql.polars._lowering`
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
from collections.abc import Callable, Sequence
from functools import partial
from types import ModuleType
from typing import Any

import polars as pl

from mlsql import _weights as W
from mlsql._front import build as front
from mlsql._front.examples import FrameExample
from mlsql._registry import Measure
from mlsql.polars import _lowering as S
from mlsql.polars.ops import PolarsOps

OPS = PolarsOps()


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
    weight: pl.Expr | None = None,
    **params: Any,
) -> pl.Expr:
    """``formula(ops, stats, **params)`` as one ``pl.Expr`` (see the module docstring).

    ``known``: a cheap mask of the rows where every statistic is non-NULL; give
    it only if each statistic is NULL exactly where it is false (then counts
    cost nothing and linear sums split per statistic). ``weight``: each row's
    sample weight (checked by :func:`mlsql.polars._weights.weighted_check`): the formula runs with
    :class:`~mlsql._weights.WeightedOps` and ``known`` is not used (a NULL
    weight makes a row unknown too).
    """
    if symbolic is None:
        symbolic = not _has_callables(stats)
    if weight is not None:  # sums of weights are floats in every engine
        known = None
        cast = weight.cast(pl.Float64)
        w: Any = S.leaf(cast) if symbolic else cast
        formula = partial(W.weighted, formula, w)
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

    Parameters are validated (:func:`~mlsql._front.build.checked_params`). The caller has checked
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
    checked = front.checked_params(measure, params, family)
    return evaluate(front.formula(measure), stats, known=known, symbolic=symbolic, **checked)


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


def frame_example(name: str, example: FrameExample) -> list[str]:
    """Doctest statements showing ``name`` over the frame of ``example`` (its output:
    :func:`run`).

    Examples
    --------
    >>> from mlsql._front.examples import FRAMES
    >>> frame_example("class_metrics", FRAMES["class_metrics"])[-1]
    "mp.class_metrics(df, 'a', 'p').select('class', 'precision', 'recall').rows()"
    """
    args = [*map(repr, example.args), *(f"{k}={v!r}" for k, v in example.params.items())]
    call = f"mp.{name}({', '.join(['df', *args])})"
    if example.select:
        call += f".select({', '.join(map(repr, example.select))})"
    shown = {"rows": ".rows()", "first": ".row(0)", "item": ".item()"}[example.show]
    return [
        "import polars as pl",
        "import mlsql.polars as mp",
        f"df = pl.DataFrame({example.columns!r})",
        call + shown,
    ]


def run(statements: list[str], mp: Any) -> str:
    """The output of the last of ``statements`` (as doctest shows it), computed now with ``mp``.

    Used by ``python -m mlsql._stubs`` to write the examples' outputs once.
    """
    env: dict[str, Any] = {"pl": pl, "mp": mp}
    for statement in statements[:-1]:
        if not statement.startswith("import "):
            exec(statement, env)
    return repr(eval(statements[-1], env))
