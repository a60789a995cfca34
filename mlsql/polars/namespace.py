"""The ``.mlsql`` expression namespace: ``pl.col("actual").mlsql.micro_f1("predicted")``.

Registered when :mod:`mlsql.polars` is imported; it offers every public
function of :mod:`mlsql.polars`, the namespace's expression being the first
input.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import polars as pl


@pl.api.register_expr_namespace("mlsql")
class MlsqlNamespace:
    """mlsql's functions with this expression as the first input.

    Examples
    --------
    >>> import polars as pl
    >>> import mlsql.polars  # registers the namespace
    >>> df = pl.DataFrame({"actual": [["cat", "bird"]], "predicted": [["cat"]]})
    >>> df.select(pl.col("actual").mlsql.micro_recall("predicted")).item()
    0.5
    """

    def __init__(self, expr: pl.Expr) -> None:
        self._expr = expr


def _method(name: str, fn: Callable[..., pl.Expr]) -> Callable[..., pl.Expr]:
    def method(self: MlsqlNamespace, *args: Any, **kwargs: Any) -> pl.Expr:
        return fn(self._expr, *args, **kwargs)

    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    self_param = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = sig.replace(parameters=[self_param, *params[1:]])  # type: ignore[attr-defined]
    method.__name__ = method.__qualname__ = name
    summary = inspect.getdoc(fn).split("\n\n")[0] if fn.__doc__ else name
    first = params[0].name if params else "the first input"
    method.__doc__ = (
        f"{summary}\n\n``expr.mlsql.{name}(...)`` is ``mlsql.polars.{name}(expr, ...)``: this "
        f"expression is its ``{first}``; see that function for parameters and examples.\n"
    )
    return method


def install(functions: dict[str, Callable[..., pl.Expr]]) -> None:
    """Offer ``functions`` as methods of the namespace."""
    for name, fn in functions.items():
        setattr(MlsqlNamespace, name, _method(name, fn))
