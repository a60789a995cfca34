"""The label-set family's stored counts in the PostgreSQL library.

``multilabel_counts(actual, predicted[, sample_weight])`` is an aggregate whose result is a
record of the type :data:`COUNTS_TYPE` (DuckDB's struct: n_rows, tp, fp, fn, n_actual,
n_predicted, n_exact); ``merge_counts(counts)`` adds the fields of stored records (partitions,
days); each ``<measure>_from_counts(counts, ...)`` is the micro measure of the rows the
counts were made of, a per-row function with named parameters. The fields are
:func:`mlsql.measures.multilabel.counts_fields` over the rows' statistics, lowered to a
``float8[]`` state as the label-set aggregates' (:class:`~mlsql._postgres.ops.StateOps`);
the formulas are the registry's over :class:`~mlsql.measures.multilabel.CountsFields`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlsql import _formulas as F
from mlsql._postgres.forms import (
    add_row,
    create_aggregates,
    create_type,
    final_name,
    finals,
    signature,
    step_function,
    stored_counts_function,
)
from mlsql._postgres.ops import PgSql, RowOps, StateOps, param, pg_lit
from mlsql._registry import Measure
from mlsql._weights import WeightedOps
from mlsql.measures import multilabel as ML

#: the composite type of a stored count (DuckDB's struct)
COUNTS_TYPE = "mlsql_multilabel_counts"
#: the label list types
LIST_TYPES = ("text[]", "bigint[]")


def included(m: Measure) -> bool:
    """Whether ``m`` is a stored-counts measure of the label-set family held here."""
    return m.family == ML.FAMILY and m.kind in ("counts", "from_counts")


def helpers(create: str) -> list[str]:
    """The counts' type."""
    fields = ", ".join(f"{name} float8" for name in ML.COUNTS_FIELDS)
    return [
        f"-- {COUNTS_TYPE}: multilabel_counts' result, DuckDB's struct.\n"
        + create_type(COUNTS_TYPE, fields, create)
    ]


def _lowered(weighted: bool) -> tuple[str, list[Any], int]:
    """The counts' record over the state: its final expression, slots and the state's size."""
    ops = StateOps(offset=0)
    run: Any = WeightedOps(ops, PgSql("w")) if weighted else ops
    stats = F.RowStats(PgSql("tp"), PgSql("n_actual"), PgSql("n_predicted"))
    fields = ML.counts_fields(run, stats)
    listed = ", ".join(f"{pg_lit(fields[name])}::float8" for name in ML.COUNTS_FIELDS)
    return f"ROW({listed})::{COUNTS_TYPE}", ops.slots, ops.size


def counts(create: str, body: Callable[[bool, list[str]], str]) -> list[str]:
    """``multilabel_counts``: its finals, and per list type and form its step and aggregate
    (``body(weighted, statements)``: the label-set step's plpgsql, whose row statistics
    precede ``statements``)."""
    lowered = {w: _lowered(w) for w in (False, True)}
    out = finals(
        "multilabel_counts", {w: low[0] for w, low in lowered.items()}, create, COUNTS_TYPE
    )
    for list_type in LIST_TYPES:
        for weighted in (False, True):
            _, slots, size = lowered[weighted]
            args = [f"actual {list_type}", f"predicted {list_type}"]
            args += ["sample_weight float8"] if weighted else []
            step = "_mlsql_multilabel_counts_step"
            out.append(
                step_function(create, step, args, body(weighted, [*add_row(slots), "  RETURN st;"]))
            )
            final = final_name("multilabel_counts", weighted)
            init = "{" + ",".join(["0"] * size) + "}"
            names = ("multilabel_counts",)
            out += create_aggregates(create, names, signature(args), step, init, final)
    fields = ML.COUNTS_FIELDS
    added = ", ".join(f"st[{i + 1}] + coalesce((c).{n}, 0)" for i, n in enumerate(fields))
    seen = ", ".join(
        f"st[{len(fields) + i + 1}] + ((c).{n} IS NOT NULL)::int" for i, n in enumerate(fields)
    )
    merged = ", ".join(
        f"CASE WHEN st[{len(fields) + i + 1}] = 0 THEN NULL ELSE st[{i + 1}] END"
        for i in range(len(fields))
    )
    out += [
        f"""-- merge_counts(counts): stored multilabel_counts added field by field (NULL over none).
{create} FUNCTION _mlsql_merge_counts_step(st float8[], c {COUNTS_TYPE}) RETURNS float8[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
  SELECT CASE WHEN c IS NULL THEN st ELSE ARRAY[{added}, {seen}] END
$f$;
{create} FUNCTION _mlsql_merge_counts_final(st float8[]) RETURNS {COUNTS_TYPE}
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
  SELECT ROW({merged})::{COUNTS_TYPE}
$f$;""",
        *create_aggregates(
            create,
            ("merge_counts",),
            COUNTS_TYPE,
            "_mlsql_merge_counts_step",
            "{" + ",".join(["0"] * 2 * len(fields)) + "}",
            "_mlsql_merge_counts_final",
        ),
    ]
    return out


def from_counts(m: Measure, create: str) -> list[str]:
    """``<measure>_from_counts(counts, ...)``: the formula over a stored record
    (:func:`~mlsql._postgres.forms.stored_counts_function`)."""
    assert m.build is not None
    k = ML.CountsFields(*(PgSql(f"(counts).{n}") for n in ML.COUNTS_FIELDS))
    expr = m.build(RowOps(), k, *(param(p.name) for p in m.params))
    return stored_counts_function(m, [f"counts {COUNTS_TYPE}"], expr, create)
