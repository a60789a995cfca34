"""The report's two tables over an ibis table, in its own database: ``multilabel_report`` (one
row per group) and ``label_metrics`` (one row per group and label).

Both are the plan of ``evaluate`` (:mod:`mlsql._ibis.evaluate`) with the registry's
formulas as every engine writes them (:mod:`mlsql.measures.label_based`):

- ``multilabel_report`` is one ``evaluate`` query of the report's columns that are
  measures (micro, macro, weighted and samples averages, subset accuracy, the label
  accuracies, CLP, MLP, WLP), with the group's known rows, labels and Hamming loss over
  its labels read from the same side table of per (group, label) counts
  (:func:`mlsql._ibis.per_label.group_values`);
- ``label_metrics`` is that side table with each label's values
  (:func:`mlsql.measures.label_based.label_values`) beside the group's known rows.

Given ``labels``, every row's lists are first restricted to them (labels outside the
universe are ignored by every column, as in every engine). Only the result comes back:
a row per group, or per (group, label).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir
import pyarrow as pa

from mlsql._evaluate import front as EV
from mlsql._front.build import checked_params, formula
from mlsql._ibis import backend_name, stats
from mlsql._ibis import labels as per_label
from mlsql._ibis.evaluate import Projected, fetch, planned, project, run
from mlsql._ibis.ops import FLOAT, IbisOps, Plan, beside, null, raise_failed_rows, where
from mlsql._registry import REGISTRY
from mlsql.measures import label_based as LB

#: the per-group count column's internal name in ``label_metrics``' query
N_ROWS = "__mlsql_nr"


def _params(name: str, given: dict[str, Any]) -> dict[str, Any]:
    """The parameters of ``given`` (labels, beta, zero_division) the measure ``name`` takes."""
    takes = {p.name for p in REGISTRY[name].params}
    return {k: v for k, v in given.items() if k in takes and v is not None}


def _checked(zero_division: Any, beta: float | None) -> tuple[Any, float]:
    """``zero_division`` and ``beta`` (1 when not given) as the formulas take them, checked."""
    given = {"zero_division": zero_division, "beta": 1.0 if beta is None else beta}
    checked = checked_params(REGISTRY["macro_fbeta"], given)
    return checked["zero_division"], checked["beta"]


def restricted(table: ir.Table, actual: str, predicted: str, universe: list[Any]) -> ir.Table:
    """``table`` with each label list restricted to the labels of ``universe`` (a NULL list
    stays NULL), as every engine reads lists under a given universe."""
    backend = backend_name(table)
    out = {}
    for name in (actual, predicted):
        column = table[name]
        dtype = column.type()
        if not dtype.is_array() or dtype.value_type.is_null():
            continue
        kept = ibis.literal(universe, type=dt.Array(dtype.value_type))
        out[name] = where(column.notnull(), stats.as_set(column, backend).intersect(kept))
    return table.mutate(**out)


def _universe(
    table: ir.Table, actual: str, predicted: str, given: Any, func: str
) -> list[Any] | None:
    """The ``labels`` universe, checked against the label columns' types."""
    dtypes = [table[c].type() for c in (actual, predicted)]
    stats.check_label_lists(func, ["actual", "predicted"], dtypes)
    return per_label.checked_universe(func, given, *dtypes)


def multilabel_report(
    table: ir.Table,
    actual: str,
    predicted: str,
    *,
    labels: Sequence[Any] | None = None,
    beta: float | None = None,
    zero_division: Any = 0,
    by: Sequence[str] | None = None,
    sample_weight: str | None = None,
) -> pa.Table:
    """One row per group: the group columns and :func:`~mlsql.measures.label_based.report_columns`
    (``*_fbeta*`` with ``beta``, else ``*_f1*``), computed in the table's database.

    Examples
    --------
    >>> import ibis
    >>> preds = ibis.memtable({"actual": [["a", "b"], ["b"]], "predicted": [["a"], ["b", "c"]]})
    >>> row = multilabel_report(preds, "actual", "predicted").to_pylist()[0]
    >>> row["n_rows"], row["n_labels"], row["micro_f1"], row["macro_f1"], row["hamming_loss"]
    (2, 3, 0.6666666666666666, 0.5555555555555555, 0.3333333333333333)
    """
    func = "multilabel_report"
    universe = _universe(table, actual, predicted, labels, func)
    if universe is not None:
        table = restricted(table, actual, predicted, universe)
    given = {"labels": universe, "beta": beta, "zero_division": zero_division}
    columns = LB.report_columns(beta is not None)
    counted = [c for c in columns if c in per_label.GROUP_COUNTS]
    measures = [(c, _params(c, given)) for c in columns if c not in counted]
    req = EV.request(table.columns, actual, predicted, measures, list(by or ()), sample_weight)

    zd, b = _checked(zero_division, beta)

    def extra(p: Projected, ops: IbisOps) -> dict[str, Any]:
        found = per_label.group_values(p.rows, p.weight, ops, universe, b, zd, counted)
        return {f"__mlsql_n{i}": found[c] for i, c in enumerate(counted)}

    wide = run(planned(table, actual, predicted, req, extra), backend_name(table))
    out: dict[str, Any] = {
        b: wide[EV.group_column(k)] for k, b in enumerate(req.by)
    }  # the names the user gave
    position = {m: i for i, (m, _) in enumerate(measures)}
    for c in columns:
        if c in counted:
            out[c] = wide[f"__mlsql_n{counted.index(c)}"]
        else:
            out[c] = wide[f"__mlsql_v{position[c]}"].cast(pa.float64())
    whole = sample_weight is None  # the rows are counted, not weighed
    out["n_rows"] = _counts(out["n_rows"], whole)
    out["n_labels"] = _counts(out["n_labels"], True)
    return pa.table(out)


def _counts(column: pa.ChunkedArray, whole: bool) -> pa.ChunkedArray:
    """A count (NULL: none) as integers, or a total weight as doubles."""
    filled = column.fill_null(0)
    return filled.cast(pa.int64()) if whole else filled.cast(pa.float64())


def label_metrics(
    table: ir.Table,
    actual: str,
    predicted: str,
    *,
    labels: Sequence[Any] | None = None,
    beta: float | None = None,
    zero_division: Any = 0,
    by: Sequence[str] | None = None,
    sample_weight: str | None = None,
) -> pa.Table:
    """One row per (group, label of its universe): the group columns and
    :func:`~mlsql.measures.label_based.label_metrics_columns`, computed in the table's
    database.

    Examples
    --------
    >>> import ibis
    >>> preds = ibis.memtable({"actual": [["a", "b"], ["b"]], "predicted": [["a"], ["b", "c"]]})
    >>> for row in label_metrics(preds, "actual", "predicted").to_pylist():
    ...     print(row["label"], row["tp"], row["fp"], row["fn"], row["tn"], row["f1"])
    a 1 0 0 1 1.0
    b 1 0 1 0 0.6666666666666666
    c 0 1 0 1 0.0
    """
    func = "label_metrics"
    universe = _universe(table, actual, predicted, labels, func)
    params = _params("macro_f1", {"labels": universe, "zero_division": zero_division})
    req = EV.request(
        table.columns, actual, predicted, [("macro_f1", params)], list(by or ()), sample_weight
    )
    p = project(table, actual, predicted, req)
    raise_failed_rows(p.checks, p.rows)
    keys, rows = p.keys, p.rows
    side = per_label.side_table(rows, keys, p.weight is not None, universe)
    known = rows[per_label.KNOWN]
    counted = known.ifelse(1.0, null()) if p.weight is None else known.ifelse(p.weight, null())
    n = (rows.group_by(keys) if keys else rows).aggregate(**{N_ROWS: counted.sum().cast(FLOAT)})
    joined = beside(side, n, keys)
    counts = LB.LabelCounts(
        tp=joined[per_label.TP],
        fp=joined[per_label.FP],
        fn=joined[per_label.FN],
        n_rows=joined[N_ROWS].fill_null(0.0),
    )
    ops = IbisOps(p.checks, Plan(keys=keys, backend=p.backend))
    zd, b = _checked(zero_division, beta)
    values = formula("label_metrics")(ops, counts, beta=b, zero_division=zd)
    names = LB.label_metrics_columns(beta is not None)[1:]
    query = joined.select(
        *keys,
        **{"__mlsql_label": joined[per_label.LABEL]},
        **{f"__mlsql_m{i}": values[c] for i, c in enumerate(names)},
    )
    found = fetch(query, p.backend).sort_by(
        [(k, "ascending") for k in keys] + [("__mlsql_label", "ascending")]
    )
    out: dict[str, Any] = {b: found[EV.group_column(k)] for k, b in enumerate(req.by)}
    out["label"] = found["__mlsql_label"]
    whole = p.weight is None
    for i, c in enumerate(names):
        column = found[f"__mlsql_m{i}"]
        out[c] = (
            _counts(column, whole)
            if c in ("tp", "fp", "fn", "tn", "support")
            else column.cast(pa.float64())
        )
    return pa.table(out)
