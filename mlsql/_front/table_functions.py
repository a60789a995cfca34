"""The table functions of a DataFrame engine, their signatures read from the registry.

A table function (``roc_curve``, ``label_metrics``, ``calibration_table``, ...)
takes a frame, the names of its input columns, then keyword-only parameters:
the registry's (:class:`mlsql._registry.Measure` ``params``, with their
defaults) and ``sample_weight``. :func:`table_function` writes that signature
once for every engine and checks the registry parameters against their
constraints, in the registry's order (but :data:`CHECKED_FIRST`); an engine supplies only the function that
computes the table from the frame and a :class:`TableCall`, and its docstring's
``Returns`` and example (:func:`mlsql._front.docs.table_docstring`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mlsql import _params as P
from mlsql._front import examples
from mlsql._front.docs import table_docstring, table_returns
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


#: the parameters a table checks before the others: the label tables check
#: ``zero_division`` before ``beta``, as their SQL macros, ibis and PostgreSQL do
#: (:func:`mlsql._front.tables.beta_and_zero_division`); the others in the registry's order
CHECKED_FIRST = {"label_metrics": ("zero_division",), "multilabel_report": ("zero_division",)}


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


@dataclass(frozen=True)
class TableCall:
    """One call of a table function, as its engine computes it.

    ``columns``: the input columns by role (``actual``, ``predicted``, ``score``,
    ...), in the signature's order; ``params``: the registry parameters but
    ``by``, each checked against its constraint (:func:`mlsql._params.check`:
    ``zero_division`` is a :class:`~mlsql._params.ZeroDivision`); ``by`` and
    ``sample_weight`` as given.

    Examples
    --------
    >>> call = TableCall("class_metrics", {"actual": "a", "predicted": "p"},
    ...                  {"beta": 2.0}, None, None)
    >>> call.keywords
    {'beta': 2.0, 'by': None, 'sample_weight': None}
    """

    func: str
    columns: dict[str, str]
    params: dict[str, Any]
    by: str | Sequence[str] | None
    sample_weight: str | None

    @property
    def keywords(self) -> dict[str, Any]:
        """The parameters, ``by`` and ``sample_weight`` by name."""
        return {**self.params, "by": self.by, "sample_weight": self.sample_weight}


def table_function(
    engine: Engine,
    name: str,
    compute: Callable[..., Any],
    result: str | None = None,
    returns: str | None = None,
) -> Callable[..., Any]:
    """Table function ``name`` of ``engine``: :func:`table_signature` over ``engine``'s frame
    type, calling ``compute(source, call)`` with the :class:`TableCall` of the arguments
    (defaults filled in, parameters checked); its docstring
    :func:`~mlsql._front.docs.table_docstring` of ``returns`` (default:
    :func:`~mlsql._front.docs.table_returns`) and :func:`table_example`."""
    signature = table_signature(name, engine.frame_type, result)

    def table(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        given = bound.arguments
        return compute(given["source"], table_call(name, given))

    table.__name__ = table.__qualname__ = name
    table.__module__ = engine.module
    returned = returns or table_returns(engine, name)
    table.__doc__ = table_docstring(engine, name, returned, table_example(engine, name))
    table.__signature__ = signature  # type: ignore[attr-defined]
    return table


def table_call(name: str, given: dict[str, Any], func: str | None = None) -> TableCall:
    """The :class:`TableCall` of table function ``name`` given every argument (``given``: by
    name, defaults filled in), its parameters checked; its messages name ``func`` (default:
    ``name``), the function called (a standalone report column reads the report's table).

    Examples
    --------
    >>> given = {"actual": "a", "predicted": "p", "labels": None, "beta": None,
    ...          "zero_division": 2, "by": None, "sample_weight": None}
    >>> table_call("multilabel_report", given, func="macro_f1")
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'zero_division' parameter of macro_f1 must be one of 0, 1, nan, 'diagnose', 'ignore'. Got 2 instead.
    """
    m = REGISTRY[name]
    first = CHECKED_FIRST.get(name, ())
    params = sorted((p for p in m.params if p.name != "by"), key=lambda p: p.name not in first)
    named = func or name
    return TableCall(
        named,
        {i: given[i] for i in m.inputs if i != "source"},
        {p.name: P.check(p, given[p.name], named) for p in params},
        given["by"],
        given["sample_weight"],
    )


def table_example(engine: Engine, name: str) -> str:
    """The doctest text of table function ``name``'s example in ``engine``: its engine-neutral
    example (:data:`mlsql._front.examples.FRAMES`) as ``engine`` writes it, then what it
    prints (:data:`mlsql._front.example_outputs.OUTPUTS`, computed by Polars).

    Examples
    --------
    >>> from mlsql.polars._engine import POLARS
    >>> for line in table_example(POLARS, "roc_curve").splitlines()[-3:]:
    ...     print(line.removeprefix(">>> "))
    df = pl.DataFrame({'y': [1, 0, 1], 's': [0.9, 0.4, 0.4]})
    mp.roc_curve(df, 'y', 's').rows()
    [(inf, 0.0, 0.0), (0.9, 0.0, 0.5), (0.4, 1.0, 1.0)]
    """
    from mlsql._front.example_outputs import OUTPUTS

    statements = engine.frame_example(name, examples.FRAMES[name])
    output = OUTPUTS.get(name, "<no output written: run python -m mlsql._stubs>")
    return "\n".join([*(f">>> {s}" for s in statements), output])
