"""Binary classification in Polars: the 2x2 measures over boolean / 0-1 columns or stored counts.

Every ``binary_<name>(actual, predicted)`` sums the four cells (NULL over no
known rows) and runs the 2x2 formula of :mod:`mlsql.measures.contingency`;
``binary_<name>_from_counts(tp, fp, fn, tn)`` runs it per row of stored
counts; ``binary_counts`` returns the struct {tp, fp, fn, tn}.

Examples
--------
>>> import polars as pl
>>> import mlsql.polars as mp
>>> df = pl.DataFrame({"actual": [1, 1, 0, 0], "predicted": [1, 0, 1, 0]})
>>> df.select(mp.binary_precision("actual", "predicted")).item()
0.5
>>> df.select(mp.spec("actual", "predicted")).item()
0.5
"""

from __future__ import annotations

import sys
from typing import Any

import polars as pl

from mlsql._front.build import lookup
from mlsql._registry import Measure, measures
from mlsql.measures import binary as B
from mlsql.measures.contingency import Table2x2
from mlsql.polars.families import _classification as K
from mlsql.polars.families._classification import params  # noqa: F401  (plug-in hook)

FAMILIES = (B.FAMILY,)


def row_cells(actual: pl.Expr, predicted: pl.Expr) -> Table2x2:
    """Per row: 1 in the row's cell, 0 in the others (NULL where a side is NULL)."""
    a, p = actual.cast(pl.Int64), predicted.cast(pl.Int64)
    return Table2x2(a * p, (1 - a) * p, a * (1 - p), (1 - a) * (1 - p))


def pool(ops: Any, t: Table2x2) -> Table2x2:
    """The cells summed over rows (NULL over no known rows)."""
    return Table2x2(*(ops.sum(x) for x in (t.tp, t.fp, t.fn, t.tn)))


def cells(actual: pl.Expr, predicted: pl.Expr) -> Table2x2:
    """tp, fp, fn, tn summed over the rows where neither side is NULL (NULL over none)."""
    return pool(K.OPS, row_cells(actual, predicted))


def stored(tp: pl.Expr, fp: pl.Expr, fn: pl.Expr, tn: pl.Expr) -> Table2x2:
    """Stored counts, one table per row."""
    return Table2x2(tp, fp, fn, tn)


def function_of(m: Measure, module: Any) -> Any:
    """The Polars function of a binary or rule measure (aggregate or from counts)."""
    if m.kind == "from_counts":
        return K.direct(m, stored, K.numeric_inputs, module)
    return K.pooled(m, row_cells, pool, K.binary_inputs, module)


__all__: list[str] = []
for _m in measures(family=B.FAMILY):
    if _m.build is not None and _m.available_in("polars"):
        globals()[_m.name] = function_of(lookup(_m), sys.modules[__name__])
        __all__.append(_m.name)
