"""``mlsql.bootstrap`` over an ibis table: the statistics table in its own database.

The bootstrap is engine-neutral (:mod:`mlsql._resample.run`): each engine computes, in
one ``GROUP BY``, the distinct statistics tuples of every group with their numbers of
rows, and the resamples are drawn from them. Here ibis computes that table in the
table's database (the per-row statistics of :mod:`mlsql._ibis.stats`: a label-set row's
(tp, |A|, |P|), a single-label row's (actual, predicted), numbers as doubles; for the
macro and weighted label averages each row's two lists as it holds them, made sets by the
draws' code), only the tuples come back, and the draws are those of every engine: the
same seed gives the DuckDB engine's intervals. The weight's check runs first, in a query
of its own.

The tuples of the regression and score measures, and of the label averages, are about one
per row (their values rarely repeat), so what comes back grows with the rows there, as on
DuckDB. Not yet over ibis: the class-score measures (their per-row numbers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir
import pyarrow as pa

from mlsql._errors import MlsqlError
from mlsql._ibis import backend_name, stats
from mlsql._ibis.evaluate import checked_weight
from mlsql._ibis.ops import FLOAT, Checks, raise_failed, where
from mlsql._resample import front, run

#: the statistics tables not computed over ibis yet
NOT_YET_MESSAGE = (
    "bootstrap on an ibis table ({backend}) does not take {measure} yet: its statistics "
    "({stats}) are not computed through ibis so far (the label-set, label-average, "
    "single-label, regression and score measures are). Bootstrap it on DuckDB, Polars or "
    "Spark."
)


def _number_kind(dtype: dt.DataType) -> str:
    """The engines' kind of a scalar type, as :func:`front.check_numbers` reads it."""
    if dtype.is_floating():
        return "float"
    if dtype.is_decimal():
        return "decimal"
    if dtype.is_boolean():
        return "boolean"
    return stats.kind(dtype)


def _check_types(req: front.Request, table: ir.Table, actual: str, predicted: str) -> None:
    """The inputs' types fit the measures, in the words of every engine."""
    types = [table[actual].type(), table[predicted].type()]
    names = ["actual", "predicted"]
    shown = [str(t) for t in types]
    lists = [t.is_array() for t in types]
    if front.is_numbers(req):
        front.check_numbers(req, names, lists, [_number_kind(t) for t in types], shown)
        return
    kinds = [
        stats.kind(t.value_type)
        if t.is_array()
        else stats.scalar_kind(t)
        if not t.is_null()
        # an all-NULL column is a list or a label, as the measures want it
        else "null"
        for t in types
    ]
    front.check_labels(req, names, lists, kinds, shown)


def _statistics(req: front.Request, a: ir.Column, p: ir.Column) -> list[ir.Value]:
    """Each row's statistics, as :data:`mlsql._resample.measures.STATS` names them."""
    if req.stats == "label_sets":
        s = stats.row_stats(a, p, backend_name(a))
        return [s.tp, s.n_actual, s.n_predicted]
    if req.stats == "classes":
        return [a, p]
    if req.stats == "label_lists":  # the lists as rows hold them (the draws make them sets)
        return [a, p if p.type() == a.type() or p.type().is_null() else p.cast(a.type())]
    known = a.notnull() & p.notnull()  # both sides NULL where one is; -0.0 as 0.0
    return [where(known, x.cast(FLOAT) + 0.0) for x in (a, p)]


def bootstrap(
    table: ir.Table,
    actual: str,
    predicted: str,
    measures: Sequence[Any],
    by: str | Sequence[str] | None,
    n_resamples: int,
    confidence: float,
    seed: int,
    sample_weight: str | None,
) -> ir.Table:
    """``mlsql.bootstrap`` over the ibis table ``table``: the module's docstring. The result
    is an ibis memtable of the rows every engine gives."""
    named = front.with_weight({"actual": actual, "predicted": predicted}, sample_weight)
    req = front.request(
        "bootstrap", table.columns, named, by, measures, n_resamples, confidence, seed
    )
    if req.stats not in ("label_sets", "label_lists", "classes", "regression", "scores"):
        raise MlsqlError(
            NOT_YET_MESSAGE.format(
                backend=backend_name(table[actual]),
                measure=req.chosen[0].label,
                stats=req.stats.replace("_", " "),
            )
        )
    _check_types(req, table, actual, predicted)
    checks = Checks()
    # a cast ibis keeps (PostgreSQL reads a bare 1.0 as a NUMERIC, which comes back a Decimal)
    weight: ir.Value = ibis.literal(1, type="int64").cast(FLOAT)
    if sample_weight is not None:
        weight = checked_weight(req.func, table[sample_weight], checks)
    if checks.items:
        checked = table.select(**checks.projected)
        found = checked.aggregate(**checks.aggregates(checked)).to_pyarrow().to_pylist()
        raise_failed(checks, found[0])
    groups = {f"__mlsql_g{k}": table[b] for k, b in enumerate(req.by)}
    values = _statistics(req, table[actual], table[predicted])
    columns = {
        **groups,
        **{f"__mlsql_t{k}": v for k, v in enumerate(values)},
        "__mlsql_w": weight,
    }
    rows = table.select(**columns).group_by(list(columns)).aggregate(__mlsql_m=ibis._.count())
    fetched = rows.to_pyarrow()
    out = run.bootstrap(
        # label lists as Arrow (no Python object per label), the other kinds as rows
        fetched if req.stats == "label_lists" else [tuple(r.values()) for r in fetched.to_pylist()],
        len(req.by),
        req.chosen,
        req.n_resamples,
        req.confidence,
        req.seed,
    )
    names = [*req.by, *front.BOOTSTRAP_COLUMNS]
    arrays = {}
    for i, name in enumerate(names):
        values_i = [r[i] for r in out]
        if i < len(req.by):
            arrays[name] = pa.array(values_i, type=rows.schema()[f"__mlsql_g{i}"].to_pyarrow())
        elif name == "measure":
            arrays[name] = pa.array(values_i, type=pa.string())
        else:
            arrays[name] = pa.array(values_i, type=pa.float64())
    return ibis.memtable(pa.table(arrays))
