"""Spark families: one module per family of measures, found and loaded automatically.

:mod:`mlsql.spark` imports every module of this package (``multilabel`` and
``hivemall`` come with the core; other families are added beside them, one
file each) and builds its public functions from what each defines:

``FAMILIES``
    Registry family names (``Measure.family``) whose *formula* measures (those
    declared with ``@measure``, i.e. ``measure.build`` is set) this module
    serves. For each such measure available in Spark (no
    ``unavailable["spark"]``), :mod:`mlsql.spark` generates a public function
    of the measure's name, signature ``(input, ..., *, param=default, ...)``,
    with a numpydoc docstring from the registry, unless the module writes one
    by hand (see ``__all__``).

``stats(measure, *inputs) -> statistics``
    The statistics object the measure's formula takes (a
    :class:`~mlsql._formulas.RowStats`, a stored
    :class:`~mlsql.measures.multilabel.CountsFields` or the family's own
    dataclass), its fields Columns computed from ``inputs`` (Columns, one per
    ``measure.inputs``). Spark computes a repeated subexpression once, so a
    statistic may be named as often as the formula likes.

``input_check(measure) -> check`` (optional)
    A function ``(func, names, columns) -> None`` raising
    :class:`~mlsql.MlsqlError` on input types it can see (see
    :mod:`mlsql.spark._types`: only Columns taken from a DataFrame carry a
    type before Spark analyses the query). Default:
    :func:`~mlsql.spark._types.check_label_lists`.

``params(measure, params) -> params`` (optional)
    Validate the family's own parameters (``beta``, ``zero_division`` and
    ``n_labels`` are validated before, with :mod:`mlsql._params`).

``example(measure) -> (rows, schema, params, output) or None`` (optional)
    A small DataFrame (rows and a DDL schema whose columns are named as
    ``measure.inputs``), parameter values and the expected output (its
    ``repr``) for the docstring's example; ``tests/test_spark_docs.py`` runs
    every such example on Spark. :func:`mlsql.spark._build.shared_example` makes it
    from the engine-neutral example (:mod:`mlsql._front.examples`) and the Spark types
    of its columns.

``__all__``
    Hand-written public functions (registry names, or aliases). Each takes
    its inputs first and returns a Column (or, for a ``table`` measure, a
    DataFrame). Build them with :func:`mlsql._front.build.function` and
    :data:`~mlsql.spark._engine.SPARK` (registry signature, docstring,
    parameter checks) and
    :func:`mlsql.spark._build.expression` (a registry formula over your
    statistics).

``SQL`` (optional)
    Spark SQL functions for :func:`mlsql.spark.register`: a function
    ``(qualify) -> list of (name, CREATE statement)``; see
    :mod:`mlsql.spark.sql`.

Every public function is re-exported by :mod:`mlsql.spark`; a registry measure
with no Spark function and no ``unavailable["spark"]`` reason is an error
found by the registry test.

Examples
--------
A family of one measure whose statistics are two per-row Columns::

    FAMILIES = ("demo",)

    def stats(measure, actual, predicted):
        return Counts(tp=..., fp=..., fn=...)
"""

from __future__ import annotations

import sys
from types import ModuleType

from mlsql._front import families as front
from mlsql._front.families import CORE, serving  # noqa: F401  (this package's API)


def modules() -> list[ModuleType]:
    """Every family module, the core ones first."""
    return front.modules(sys.modules[__name__])
