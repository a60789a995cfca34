"""The table functions of a DataFrame engine, their signatures read from the registry.

A table function (``roc_curve``, ``label_metrics``, ``calibration_table``, ...)
takes a frame, the names of its input columns, then keyword-only parameters:
the registry's (:class:`mlsql._registry.Measure` ``params``, with their
defaults) and ``sample_weight``. :func:`table_function` writes that signature
once for every engine; an engine supplies only the function that computes the
table, called with every argument by name, and its docstring's ``Returns``
and example (:func:`mlsql._front.docs.table_docstring`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from mlsql._front.docs import table_docstring
from mlsql._front.engine import Engine
from mlsql._registry import REGISTRY, measures

#: the annotation of each table parameter (``| None`` added where its default is None)
ANNOTATIONS = {
    "labels": "Sequence[Any]",
    "beta": "float",
    "zero_division": "Any",
    "drop_intermediate": "bool",
    "by": "str | Sequence[str]",
    "n_bins": "int",
    "strategy": "str",
    "sample_weight": "str",
}


def _annotation(name: str, default: Any) -> str:
    return ANNOTATIONS[name] + (" | None" if default is None else "")


def table_signature(name: str, source: str, result: str | None = None) -> inspect.Signature:
    """The signature of table function ``name``: ``source`` (annotated ``source``), its
    input columns, then keyword-only its registry parameters and ``sample_weight``;
    returning ``result`` (default: ``source``'s annotation).

    Examples
    --------
    >>> table_signature("roc_curve", "Frame")
    <Signature (source: 'Frame', actual: 'str', score: 'str', *, zero_division: 'Any' = 0, drop_intermediate: 'bool' = False, by: 'str | Sequence[str] | None' = None, sample_weight: 'str | None' = None) -> 'Frame'>
    """
    measures()
    m = REGISTRY[name]
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    keyword = inspect.Parameter.KEYWORD_ONLY
    params = [inspect.Parameter("source", positional, annotation=source)]
    params += [
        inspect.Parameter(i, positional, annotation="str") for i in m.inputs if i != "source"
    ]
    given = [(p.name, p.default) for p in m.params]
    params += [
        inspect.Parameter(n, keyword, default=d, annotation=_annotation(n, d))
        for n, d in (*given, ("sample_weight", None))
    ]
    return inspect.Signature(params, return_annotation=source if result is None else result)


def table_function(
    engine: Engine,
    name: str,
    compute: Callable[..., Any],
    returns: str,
    example: str,
    result: str | None = None,
) -> Callable[..., Any]:
    """Table function ``name`` of ``engine``: :func:`table_signature` over ``engine``'s frame
    type, calling ``compute`` with every argument by name (defaults filled in); its
    docstring :func:`~mlsql._front.docs.table_docstring` of ``returns`` and ``example``."""
    signature = table_signature(name, engine.frame_type, result)

    def table(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return compute(**bound.arguments)

    table.__name__ = table.__qualname__ = name
    table.__module__ = engine.module
    table.__doc__ = table_docstring(engine, name, returns, example)
    table.__signature__ = signature  # type: ignore[attr-defined]
    return table
