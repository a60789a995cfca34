"""``bootstrap`` and ``compare`` of a DataFrame engine: one signature, one docstring, one check.

Polars' and Spark's ``bootstrap`` and ``compare`` take the arguments of DuckDB's
``mlsql.bootstrap`` and ``mlsql.compare`` (less ``con``), with the same defaults.
:func:`resampling_function` writes each signature once, checks the call with
:func:`mlsql._resample.front.request` and hands the engine the frame, the checked
:class:`~mlsql._resample.front.Request` and the arguments; the engine supplies only how
it reads a frame's column names and computes the table, its docstring's words
(:func:`mlsql._resample.front.docstring`) and its example.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from mlsql._front.engine import Engine, frame_words
from mlsql._resample import front

#: the keyword-only parameters of each function: name, annotation, default
_KEYWORDS: dict[str, list[tuple[str, str, Any]]] = {
    "bootstrap": [
        ("by", "str | Sequence[str] | None", None),
        ("n_resamples", "int", 1000),
        ("confidence", "float", 0.95),
        ("seed", "int", 0),
        ("sample_weight", "{weight} | None", None),
    ],
    "compare": [
        ("model", "str", "model"),
        ("id", "str", "id"),
        ("baseline", "Any", "A"),
        ("by", "str | Sequence[str] | None", None),
        ("n_resamples", "int", 1000),
        ("confidence", "float", 0.95),
        ("seed", "int", 0),
        ("sample_weight", "{weight} | None", None),
        ("drop_unpaired", "bool", False),
        ("test", "str", "bootstrap"),
    ],
}

#: the roles of the columns each function finds in the frame (and ``sample_weight``)
_ROLES = {"bootstrap": ("actual", "predicted"), "compare": ("actual", "predicted", "model", "id")}


def signature(func: str, frame: str, types: tuple[str, str, str]) -> inspect.Signature:
    """``func``'s signature (``bootstrap`` or ``compare``): its first parameter ``frame``,
    ``types`` the annotations of the frame, of ``sample_weight`` (but None) and of the
    result.

    Examples
    --------
    >>> signature("bootstrap", "df", ("DataFrame", "str | Column", "DataFrame"))
    <Signature (df: 'DataFrame', actual: 'str', predicted: 'str', measures: 'Sequence[Any]', *, by: 'str | Sequence[str] | None' = None, n_resamples: 'int' = 1000, confidence: 'float' = 0.95, seed: 'int' = 0, sample_weight: 'str | Column | None' = None) -> 'DataFrame'>
    """
    frame_type, weight_type, result_type = types
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    keyword = inspect.Parameter.KEYWORD_ONLY
    first = [(frame, frame_type), ("actual", "str"), ("predicted", "str")]
    params = [inspect.Parameter(n, positional, annotation=a) for n, a in first]
    params.append(inspect.Parameter("measures", positional, annotation="Sequence[Any]"))
    params += [
        inspect.Parameter(n, keyword, default=d, annotation=a.format(weight=weight_type))
        for n, a, d in _KEYWORDS[func]
    ]
    return inspect.Signature(params, return_annotation=result_type)


def resampling_function(
    func: str,
    engine: Engine,
    types: tuple[str, str, str],
    names: Callable[[Any], list[str]],
    weight_name: Callable[[Any], str | None],
    compute: Callable[[Any, front.Request, Mapping[str, Any]], Any],
    example: str,
) -> Callable[..., Any]:
    """``engine``'s ``func`` (``bootstrap`` or ``compare``): :func:`signature` of ``types``,
    :func:`mlsql._resample.front.docstring` of the engine's words
    (:func:`mlsql._front.engine.frame_words`) and ``example``, the call checked
    by :func:`mlsql._resample.front.request` over the frame's column ``names``
    (``weight_name``: the weight's column, None for an expression the engine resolves),
    then ``compute(frame, request, arguments)``."""
    words = frame_words(engine)
    sig = signature(func, words["frame"], types)

    def resampling(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        frame = a[words["frame"]]
        named = front.with_weight({r: a[r] for r in _ROLES[func]}, weight_name(a["sample_weight"]))
        settings = (a["by"], a["measures"], a["n_resamples"], a["confidence"], a["seed"])
        tests = (a["test"],) if func == "compare" else ()
        req = front.request(func, names(frame), named, *settings, *tests)
        return compute(frame, req, a)

    resampling.__name__ = resampling.__qualname__ = func
    resampling.__module__ = engine.module
    resampling.__doc__ = front.docstring(func, words, example)
    resampling.__signature__ = sig  # type: ignore[attr-defined]
    return resampling
