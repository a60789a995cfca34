"""Polars families: one module per family of measures, found and loaded automatically.

:mod:`mlsql.polars` imports every module of this package (``multilabel`` and
``hivemall`` come with the core; single-label, ranking and label-table modules
are added beside them) and builds its public functions from what each defines:

``FAMILIES``
    Registry family names (``Measure.family``) whose *formula* measures (those
    declared with ``@measure``, i.e. ``measure.build`` is set) this module
    serves. For each such measure available in Polars, :mod:`mlsql.polars`
    generates a public function of the measure's name, signature
    ``(input, ..., *, param=default, ...)``, with a numpydoc docstring from the
    registry, unless the module writes one by hand (see ``__all__``).

``stats(measure, *inputs) -> statistics``
    The statistics object the measure's formula takes (a
    :class:`~mlsql._formulas.RowStats`, :class:`~mlsql._formulas.Counts` or
    the family's own dataclass), its fields ``pl.Expr`` computed from
    ``inputs`` (``pl.Expr``, already type-checked, one per ``measure.inputs``).
    Fields may also be callables (a statistic that takes a term, as ranking's
    ``over_hits``); the formula then runs directly on ``pl.Expr``.

``known(measure, *inputs) -> pl.Expr`` (optional)
    A cheap boolean mask of the rows the measure counts (usually: no input is
    NULL). Define it only if every statistic is NULL exactly where it is false;
    counting rows then costs nothing and ``sum`` of ``|P| - tp`` splits into
    sums of single statistics, so a statistic is never computed twice.

``input_check(measure) -> check`` (optional)
    The plan-time type check, a function ``(func, names, pairs) -> exprs``
    taking the inputs' ``(pl.Expr, dtype)`` pairs and returning the
    expressions to use (see :mod:`mlsql.polars._dtypes`: ``label_lists``,
    ``same_kind``). Default: :func:`~mlsql.polars._dtypes.same_kind`. Raise
    :class:`~mlsql.MlsqlError` naming both types on a mismatch.

``params(measure, params) -> params`` (optional)
    Validate the family's own parameters (``beta``, ``zero_division`` and
    ``n_labels`` are validated before, with :mod:`mlsql._params`).

A generated function's docstring example is the engine-neutral one
(:func:`mlsql._front.examples.example`), its output written by ``python -m
mlsql._stubs``.

``__all__``
    Hand-written public functions (registry names, or aliases). Each takes
    its inputs first (the ``.mlsql`` namespace passes its expression as the
    first one) and returns ``pl.Expr``. Build them with
    :func:`mlsql._front.build.function` and
    :data:`~mlsql.polars._engine.POLARS` (registry signature and docstring)
    and :func:`mlsql.polars._build.expression` (a registry formula over your
    statistics), or :func:`mlsql.polars._dtypes.guarded` for the type check.

Every public function is re-exported by :mod:`mlsql.polars` and offered by the
``.mlsql`` expression namespace; ``tests/test_registry_engines.py`` fails when
a registry measure has no Polars function and no ``unavailable["polars"]``
reason.

Examples
--------
A family of one measure whose statistics are two per-row columns::

    FAMILIES = ("demo",)

    def stats(measure, actual, predicted):
        return Counts(tp=..., fp=..., fn=...)

    def known(measure, actual, predicted):
        return actual.is_not_null() & predicted.is_not_null()
"""

from __future__ import annotations

import sys
from types import ModuleType

from mlsql._front import families as front
from mlsql._front.families import CORE, serving  # noqa: F401  (this package's API)


def modules() -> list[ModuleType]:
    """Every family module, the core ones first."""
    return front.modules(sys.modules[__name__])
