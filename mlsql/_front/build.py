"""A registry measure's public function, for any engine: signature, parameter checks, docstring.

:func:`function` wraps an engine's ``build(*inputs, **params)`` in a function
with the measure's name and a real signature
``(input, ..., *, param=default, ...)``: it binds the arguments, validates the
parameters (:func:`checked_params`) and lets the engine turn the inputs into
expressions and check their types (:meth:`Engine.apply
<mlsql._front.engine.Engine.apply>`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import replace
from types import ModuleType
from typing import Any

from mlsql import _label_types as LT
from mlsql import _params as P
from mlsql._front.docs import docstring
from mlsql._front.engine import Engine
from mlsql._registry import REGISTRY, Measure, measures
from mlsql._weights import SAMPLE_WEIGHT


# ---------------------------------------------------------------- parameters
def lookup(measure: str | Measure) -> Measure:
    """The registry entry of ``measure``."""
    if isinstance(measure, Measure):
        return measure
    measures()  # fills the registry
    return REGISTRY[measure]


def hand_written(engine: str, families: Sequence[str]) -> list[str]:
    """The registry measures of ``families`` that ``engine`` runs with no shared build, and
    its tables (whose rows' formula may be the registry's, over statistics the family
    computes): the functions a family module writes by hand, the start of its ``__all__``.

    Examples
    --------
    >>> hand_written("spark", ["curves", "thresholds"])
    ['precision_recall_curve', 'roc_curve', 'det_curve', 'confusion_matrix_at_thresholds', 'calibration_table', 'label_thresholds']
    """
    return [
        m.name
        for m in measures()
        if m.family in families
        and (m.build is None or m.kind == "table")
        and m.available_in(engine)
    ]


def publish(
    namespace: dict[str, Any], engine: str, family: str, make: Callable[[Measure], Any]
) -> list[str]:
    """``make(m)`` put in ``namespace`` (a family module's ``globals()``) under each name of
    the measures of ``family`` that ``engine`` runs with a shared build (but tables); their names, the
    rest of the module's ``__all__`` after :func:`hand_written`."""
    names = []
    for m in measures(family=family):
        if m.build is not None and m.kind != "table" and m.available_in(engine):
            namespace[m.name] = make(m)
            names.append(m.name)
    return names


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
    if any(p.check_key == P.KAPPA_LABELS.check_key for p in m.params):
        P.kappa_matrix(out["weights"], out["labels"], m.name)  # a matrix of the labels' size
    if family is not None and hasattr(family, "params"):
        out = family.params(m, out)
    return out


def formula(measure: str | Measure) -> Callable[..., Any]:
    """The registry formula of ``measure`` (a TypeError if it is written by hand)."""
    m = lookup(measure)
    if m.build is None:
        raise TypeError(f"{m.name} has no formula in the registry; it is written by hand")
    return m.build


# ---------------------------------------------------------------- public functions
def takes_weights(m: Measure, build: Callable[..., Any] | None = None) -> bool:
    """Whether the public function of ``m`` takes ``sample_weight``: the measure is weighted
    (:attr:`Measure.weighted <mlsql._registry.Measure.weighted>`) and its engine's
    ``build`` names the keyword (a family that has not weighted it yet offers none)."""
    if not m.weighted:
        return False
    if build is None:
        return True
    return SAMPLE_WEIGHT in inspect.signature(build).parameters


def signature(engine: Engine, m: Measure, weighted: bool | None = None) -> inspect.Signature:
    """``(input, ..., *, param=default, ..., sample_weight=None) -> engine.expr`` (the
    weight where ``weighted``, default: where the measure is)."""
    params = [
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=engine.into)
        for name in m.inputs
    ]
    params += [
        inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default)
        for p in m.params
    ]
    if m.weighted if weighted is None else weighted:
        params.append(
            inspect.Parameter(
                SAMPLE_WEIGHT,
                inspect.Parameter.KEYWORD_ONLY,
                default=None,
                annotation=engine.into | None,
            )
        )
    return inspect.Signature(params, return_annotation=engine.expr)


def weighted_measure(m: Measure) -> Measure:
    """``m`` with ``sample_weight`` as one more input, so an engine turns it into an expression."""
    return replace(m, inputs=(*m.inputs, SAMPLE_WEIGHT))


def function(
    engine: Engine,
    m: Measure,
    build: Callable[..., Any],
    check: Any,
    family: ModuleType | None = None,
    example: Sequence[str] = (),
) -> Callable[..., Any]:
    """The public function of registry measure ``m`` in ``engine``.

    ``build(*inputs, **params)`` gets the checked input expressions and the
    validated parameters and returns the expression; ``check`` is the
    engine's type check of the inputs (see :meth:`Engine.apply
    <mlsql._front.engine.Engine.apply>`). ``example``: the docstring's
    ``Examples`` lines.

    A weighted measure (:attr:`Measure.weighted <mlsql._registry.Measure.weighted>`)
    takes ``sample_weight``: when given, the engine checks and converts it as
    one more input (:meth:`Engine.weighted_check
    <mlsql._front.engine.Engine.weighted_check>`) and ``build`` receives it as
    the keyword ``sample_weight``; without it ``build`` is called as before.
    """
    weighs = takes_weights(m, build)
    sig = signature(engine, m, weighs)

    def public(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        params = checked_params(m, {p.name: bound.arguments[p.name] for p in m.params}, family)
        inputs = [bound.arguments[name] for name in m.inputs]
        weight = bound.arguments.get(SAMPLE_WEIGHT) if weighs else None
        values = {k: v for k, v in params.items() if k in LT.LABEL_VALUE_PARAMS}
        if params.get("labels") is not None and {P.KAPPA_LABELS, P.CLASS_LABELS} & {*m.params}:
            values["labels"] = params["labels"]  # a class list of the columns' kind
        checked = engine.label_value_check(check, values) if values else check
        if weight is None:
            return engine.apply(m, inputs, lambda *xs: build(*xs, **params), checked)

        def weighted(*xs: Any) -> Any:
            return build(*xs[:-1], sample_weight=xs[-1], **params)

        return engine.apply(
            weighted_measure(m), [*inputs, weight], weighted, engine.weighted_check(checked)
        )

    public.__name__ = public.__qualname__ = m.name
    public.__module__ = engine.module
    public.__signature__ = sig  # type: ignore[attr-defined]
    public.__doc__ = docstring(engine, m, example, weighs)
    return public
