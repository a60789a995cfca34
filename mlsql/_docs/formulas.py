"""Which shared formulas a measure is made of, found by tracing its build.

A measure's build (``Measure.build``) composes the formulas of
:mod:`mlsql._formulas` and the family modules. Run on symbols with an ``ops``
whose ``call_formula`` hook notes each formula's name (the hook DuckDB uses to
call formulas as macros), it names them without an engine; their docstrings are
the reference's formulas.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from mlsql._formulas import FORMULAS
from mlsql._registry import Measure


class Symbol:
    """Any engine expression: arithmetic, comparisons and attributes give symbols again."""

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer

    def _new(self, *_: Any, **__: Any) -> Symbol:
        return Symbol(self._tracer)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Symbol(self._tracer)

    def __call__(self, *args: Any, **kwargs: Any) -> Symbol:
        """A statistic that takes terms (ranking's ``over_hits``): trace the terms too."""
        for arg in args:
            if callable(arg) and not isinstance(arg, Symbol):
                self._tracer.trace_term(arg)
        return Symbol(self._tracer)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _new
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __neg__ = __invert__ = _new
    __and__ = __rand__ = __or__ = __ror__ = __lt__ = __le__ = __gt__ = __ge__ = _new
    __eq__ = __ne__ = _new  # type: ignore[assignment]
    __getitem__ = _new  # a statistic read by key (totals handed to a term)
    __hash__ = object.__hash__


class Tracer:
    """The ``ops`` of a trace: every primitive answers a symbol; formulas are noted."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def call_formula(self, name: str, args: tuple[Any, ...]) -> Symbol:
        if name not in self.names:
            self.names.append(name)
        return Symbol(self)

    def trace_term(self, term: Callable[..., Any]) -> None:
        """Call ``term`` with a symbol for each parameter it requires (the others keep their
        defaults: a symbol is no None, and iterating one never ends)."""
        params = inspect.signature(term).parameters.values()
        n = sum(1 for p in params if p.default is inspect.Parameter.empty)
        term(*(Symbol(self) for _ in range(n)))

    def skips_undefined(self, zero_division: Any) -> None:
        return None

    def __getattr__(self, name: str) -> Callable[..., Symbol]:
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: Symbol(self)


def formulas_of(m: Measure) -> list[str]:
    """The names of the formulas ``m``'s build calls, innermost first (none without a build).

    Examples
    --------
    >>> from mlsql._registry import REGISTRY, measures
    >>> _ = measures()
    >>> formulas_of(REGISTRY["samples_f1"])
    ['fbeta', 'average']
    """
    if m.build is None:
        return []
    tracer = Tracer()
    params = {p.name: Symbol(tracer) for p in m.params}
    m.build(tracer, Symbol(tracer), **params)
    return tracer.names


def docstring(name: str) -> str:
    """A formula's docstring, cleaned."""
    return inspect.cleandoc(getattr(FORMULAS[name], "raw").__doc__ or "")  # noqa: B009
