"""Sample weights, written once for every engine: the weighted primitives.

A weight multiplies a row's contribution to every count (DESIGN.md section
2; the README's "Sample weights"). The formulas of :mod:`mlsql._formulas`
aggregate only through ``ops.sum``, ``ops.mean`` and ``ops.count``, so a
weighted measure is its unweighted formula run with :class:`WeightedOps`,
which wraps an engine's ops and weighs those three:

- ``sum(x)`` is ``sum(x * w)``;
- ``count(x)`` is the sum of the weights of the rows where ``x`` is not NULL (0 over none);
- ``mean(x)`` is ``sum(x * w) / count(x)``, NULL where that total weight is 0.

Everything else (``when``, ``undefined``, ...) is the engine's own. A NULL
weight makes ``x * w`` NULL, so the row is skipped as a row with a NULL list
is; with integer weights every measure equals the unweighted one over the
rows repeated ``w`` times (``tests/test_sample_weight.py``).

:func:`weighted` runs a formula so. The weight arrives checked: each engine
reads every row's weight through its own check (DuckDB's ``_mlsql_weight``
macro, :mod:`mlsql.polars._weights`, :mod:`mlsql.spark._weights`), so a
negative, NaN or infinite weight fails the query with the same message,
naming the bad value, in every engine and every family.
"""

from __future__ import annotations

from typing import Any

from mlsql._formulas import FORMULAS

#: the name of the parameter in every engine (SQL, Polars, Spark, the CLI's --sample-weight)
SAMPLE_WEIGHT = "sample_weight"
#: the families whose formulas are weighted here, through :class:`WeightedOps`
#: (tests/test_sample_weight.py); the single-label, binary, rule,
#: regression and score families weigh their statistics in each engine's own build instead
#: (tests/test_sample_weight_single.py)
WEIGHTED_FAMILIES = frozenset({"multilabel", "hivemall", "label_based", "ranking"})


def weighted(formula: Any, w: Any, ops: Any, *args: Any, **params: Any) -> Any:
    """``formula(ops, *args, **params)`` with every row weighted by ``w`` (a checked weight)."""
    return formula(WeightedOps(ops, w), *args, **params)


class WeightedOps:
    """An engine's formula primitives with every row weighted by ``weight``.

    ``weight`` is an engine expression (checked apart: see :func:`weighted`). Formulas that aggregate run inline over these
    primitives; an engine that names its formulas (DuckDB's
    ``call_formula``) keeps naming the others.

    Examples
    --------
    >>> from mlsql._duckdb.ops import SqlOps
    >>> from mlsql._sqlexpr import Sql
    >>> ops = WeightedOps(SqlOps(lambda name: name), Sql("w"))
    >>> str(ops.sum(Sql("tp")))
    'sum((tp * w))'
    """

    weighted = True

    def __init__(self, base: Any, weight: Any) -> None:
        self.base = base
        self.weight = weight

    def __getattr__(self, name: str) -> Any:
        return getattr(self.base, name)

    def call_formula(self, name: str, args: tuple[Any, ...]) -> Any:
        """Name the formula as the engine does; one that aggregates by its weighted form,
        ``<name>_by_weight`` with the weight as its last argument (DuckDB: the macro
        ``_mlsql_<name>_by_weight``). An engine that names no formulas runs them inline."""
        hook = getattr(self.base, "call_formula", None)
        if hook is None:
            return FORMULAS[name].raw(self, *args)
        if self.base.aggregates(name):
            return hook(f"{name}_by_weight", (*args, self.weight))
        return hook(name, args)

    def row_weight(self, x: Any) -> Any:
        """The weight where ``x`` is not NULL, else NULL.

        An engine's ``not_null`` names ``x`` once (DuckDB: macros grow with each
        mention); else ``x == x``, which holds for NaN too.
        """
        not_null = getattr(self.base, "not_null", None)
        known = x == x if not_null is None else not_null(x)
        return self.base.when(known, self.weight, None)

    def sum(self, x: Any) -> Any:
        """``sum(x * w)``: NULL over no non-NULL values."""
        return self.base.sum(x * self.weight)

    def count(self, x: Any) -> Any:
        """The total weight of the rows where ``x`` (and the weight) is not NULL; 0 over none."""
        w = self.row_weight(x)
        return self.base.when(self.base.count(w) == 0, 0.0, self.base.sum(w))

    def mean(self, x: Any) -> Any:
        """The weighted mean of ``x``; NULL where its rows' total weight is 0 or there are none."""
        total = self.base.sum(self.row_weight(x))
        return self.base.when(total == 0, None, self.sum(x) / total)

    def weightless(self, x: Any) -> Any:
        """True where ``x`` has weighted values but their weights add up to 0 (all-zero weights)."""
        return (self.base.count(self.row_weight(x)) > 0) & (self.count(x) == 0)
