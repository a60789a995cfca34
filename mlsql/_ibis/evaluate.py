"""``mlsql.evaluate`` over an ibis table: one ``GROUP BY`` in the table's own database.

The plan is every engine's: the checked request (:mod:`mlsql._evaluate.front`),
the rows' statistics under internal names (each family's lowering,
:mod:`mlsql._ibis.families`), the grouped passes a family needs first (the
regression family's means, joined back), one ``GROUP BY`` of the sums and counts
the formulas ask for and of the deferred checks' codes, the formulas over them
(:mod:`mlsql._ibis.ops`), then the small result unpivoted here. ibis compiles the
query to the backend's SQL; only one row per group comes back, with memory in
the database that grows with the groups (a few sums and counts each), never with
the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import ibis
import ibis.expr.types as ir
import pyarrow as pa
import pyarrow.compute as pc

from mlsql import _classification_params as CP
from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._evaluate import front as EV
from mlsql._ibis import backend_name, backends
from mlsql._ibis.families import LOWERED
from mlsql._ibis.ops import FLOAT, Checks, IbisOps, Plan, null, raise_failed, value, where


def checked_weight(func: str, column: ir.Column, checks: Checks) -> ir.FloatingColumn:
    """The weight as a double, its values checked (finite and >= 0 where not NULL).

    The check's code is the index of :data:`mlsql._params.SAMPLE_WEIGHT_GOT` plus one,
    so a group with several bad weights names NaN first, then inf, -inf, a negative one.
    """
    dtype = column.type()
    if not (dtype.is_numeric() or dtype.is_null()):
        raise MlsqlError(CP.number_type_message(func, "sample_weight", str(dtype)))
    w = column.cast(FLOAT)
    code = ibis.cases(
        (w.isnan(), 1),
        (w.isinf() & (w > 0), 2),
        (w.isinf(), 3),
        (w < 0, 4),
        else_=null("int8"),
    )
    got = P.SAMPLE_WEIGHT_GOT
    checks.add_code(code, lambda c: P.sample_weight_message(func, got[int(c) - 1]))
    return w


def _long(wide: pa.Table, by: Sequence[str], items: Sequence[EV.Item]) -> pa.Table:
    """The wide row per group as rows per (group, measure), ordered by group (NULL first)."""
    groups = [EV.group_column(k) for k in range(len(by))]
    if groups:
        order = pc.sort_indices(wide, sort_keys=[(g, "ascending", "at_start") for g in groups])
        wide = wide.take(order)
    n, k = wide.num_rows, len(items)
    repeat = pa.array([i // k for i in range(n * k)], pa.int64())
    columns = {b: wide[g].take(repeat) for b, g in zip(by, groups, strict=True)}
    columns["measure"] = pa.array([item.label for _ in range(n) for item in items], pa.string())
    values = [wide[f"__mlsql_v{i}"].cast(pa.float64()).to_pylist() for i in range(k)]
    columns["estimate"] = pa.array([values[i][r] for r in range(n) for i in range(k)], pa.float64())
    return pa.table(columns)


@dataclass(frozen=True)
class Query:
    """A checked call: its query (not run), its deferred checks and the request."""

    query: ir.Table
    checks: Checks
    request: EV.Request


@dataclass(frozen=True)
class Projected:
    """The projected rows of a checked call: each row's statistics under internal names,
    the group columns (``keys``), the checked weight's column (or None) and the checks."""

    rows: ir.Table
    keys: list[str]
    weight: ir.FloatingColumn | None
    checks: Checks
    backend: str


def project(table: ir.Table, actual: str, predicted: str, req: EV.Request) -> Projected:
    """Each row's statistics of the request's measures (every family's ``rows``), after
    its grouped passes: the input of the one ``GROUP BY``."""
    backend = backend_name(table)
    for item in req.items:
        backends.check(item.measure, backend)
    checks = Checks()
    projected: dict[str, Any] = {EV.group_column(k): table[b] for k, b in enumerate(req.by)}
    w = None
    if req.sample_weight is not None:
        w = checked_weight(EV.FUNC, table[req.sample_weight], checks)
        projected[EV.WEIGHT] = w
    known = w.notnull() if w is not None else None
    cols: dict[str, Any] = {}
    for role, name in (("actual", actual), ("predicted", predicted)):
        if any(role in item.roles for item in req.items):
            column = table[name]  # a row whose weight is NULL is unknown
            cols[role] = column if known is None else where(known, column)
    for item in req.items:  # each family's per-row statistics, once per row
        LOWERED[item.measure.family].rows(item, cols, projected, checks)
    if backend in backends.FENCED:  # each row's statistics computed once (backends.FENCED)
        projected["__mlsql_fence"] = ibis.row_number()
    rows = table.select(**projected, **checks.projected)
    keys = [EV.group_column(k) for k in range(len(req.by))]
    for family, lowering in LOWERED.items():  # grouped passes a family's sums need first
        chosen = [item for item in req.items if item.measure.family == family]
        if chosen and lowering.passes is not None:
            rows = lowering.passes(chosen, rows, keys, w is not None)
    weight = rows[EV.WEIGHT] if w is not None else None
    return Projected(rows, keys, weight, checks, backend)


#: more values of a call beside its measures': name -> value, from the projected rows
Extra = Callable[[Projected, IbisOps], dict[str, Any]]


def plan(
    table: ir.Table,
    actual: str,
    predicted: str,
    measures: Sequence[Any],
    by: str | Sequence[str] | None = None,
    sample_weight: str | None = None,
) -> Query:
    """The query of :func:`evaluate` over ``table``, checked but not run (an unbound table
    compiles to any dialect: ``ibis.to_sql(plan(...).query, dialect="bigquery")``)."""
    req = EV.request(table.columns, actual, predicted, measures, by, sample_weight)
    return planned(table, actual, predicted, req)


def planned(
    table: ir.Table, actual: str, predicted: str, req: EV.Request, extra: Extra | None = None
) -> Query:
    """The query of a checked request: one row per group, the measures' values
    ``__mlsql_v0``, ... (then ``extra``'s values under their names) and the checks' codes."""
    p = project(table, actual, predicted, req)
    ops = IbisOps(p.checks, Plan(keys=p.keys, backend=p.backend))
    values = {
        f"__mlsql_v{i}": value(LOWERED[item.measure.family].value(item, p.rows, p.weight, ops))
        for i, item in enumerate(req.items)
    }
    if extra is not None:
        values.update({k: value(v) for k, v in extra(p, ops).items()})
    rows = p.rows
    aggregates = {**ops.plan.aggregates, **p.checks.aggregates(rows)}
    groups = [rows[k] for k in p.keys]
    aggregated = (
        rows.group_by(groups).aggregate(**aggregates) if groups else rows.aggregate(**aggregates)
    )
    final = ops.plan.apply(aggregated).select(*p.keys, **values, **p.checks.finals())
    return Query(final, p.checks, req)


def fetch(query: ir.Table, backend: str) -> pa.Table:
    """The query's result as Arrow; a backend's own error that mlsql knows raises what it
    means (:func:`mlsql._ibis.backends.failure`)."""
    try:
        return query.to_pyarrow()
    except Exception as e:
        known = backends.failure(backend, e)
        if known is None:
            raise
        raise known from e


def run(q: Query, backend: str) -> pa.Table:
    """The query's result, after its checks: the first failed check raises its message (a
    backend's own error that mlsql knows raises what it means)."""
    wide = fetch(q.query, backend)
    for row in wide.select([c for c in wide.column_names if c.startswith("__mlsql_c")]).to_pylist():
        raise_failed(q.checks, row)
    return wide


def evaluate(
    table: ir.Table,
    actual: str,
    predicted: str,
    measures: Sequence[Any],
    by: str | Sequence[str] | None = None,
    sample_weight: str | None = None,
) -> ir.Table:
    """Measures per group of an ibis table, computed in its database (see ``mlsql.evaluate``).

    Examples
    --------
    >>> import ibis
    >>> preds = ibis.memtable({"model": ["A", "A", "B", "B"],
    ...                        "actual": [["a", "b"], ["b"], ["a"], ["a"]],
    ...                        "predicted": [["a"], ["b"], ["b"], ["a"]]})
    >>> out = evaluate(preds, "actual", "predicted",
    ...                ["micro_f1", ("micro_fbeta", {"beta": 2})], by="model")
    >>> for row in out.to_pyarrow().to_pylist():
    ...     print(row)
    {'model': 'A', 'measure': 'micro_f1', 'estimate': 0.8}
    {'model': 'A', 'measure': 'micro_fbeta(beta=2)', 'estimate': 0.7142857142857143}
    {'model': 'B', 'measure': 'micro_f1', 'estimate': 0.5}
    {'model': 'B', 'measure': 'micro_fbeta(beta=2)', 'estimate': 0.5}
    """
    q = plan(table, actual, predicted, measures, by, sample_weight)
    wide = run(q, backend_name(table))
    return ibis.memtable(_long(wide, q.request.by, q.request.items))
