"""The binary and rule families in the PostgreSQL library: the 2x2 measures over boolean or
0/1 columns.

Written from the registry (:mod:`mlsql.measures.binary`) and the 2x2 formulas
(:mod:`mlsql.measures.contingency`) through :mod:`mlsql._postgres.ops`; nothing of a
formula is written here. Each aggregate ``binary_<name>(actual, predicted)`` (and each
alias: ``prel``, ``sens``, ...) is a ``CREATE AGGREGATE`` whose ``float8[]`` state holds
the checked parameters, then a compensated sum and a count of known rows for each cell
(tp, fp, fn, tn; with ``sample_weight`` the sums are of the rows' weights); the final
function applies the formula to the four sums. ``binary_<name>_from_counts(tp, fp, fn,
tn)`` is the same formula as a per-row function over stored counts.

``actual`` and ``predicted`` are ``boolean`` or numbers (``float8``: integer and numeric
columns cast to it by themselves), each pair of the two types an overload; a number that
is not 0 or 1 fails with DuckDB's message, and a row where either side is NULL is skipped.
"""

from __future__ import annotations

from typing import Any

from mlsql import _classification_params as CP
from mlsql._postgres.forms import (
    add_row,
    create_aggregates,
    create_type,
    final_name,
    finals,
    forms,
    plpgsql,
    signature,
    step_function,
    stored_counts_function,
)
from mlsql._postgres.ops import PgSql, RowOps, Slot, StateOps, fill, param, pg_lit
from mlsql._registry import Measure
from mlsql._weights import WeightedOps
from mlsql.measures import binary as B
from mlsql.measures import rules as R
from mlsql.measures.contingency import Table2x2

#: the SQL types of one binary input, each pair of them an overload of every aggregate
INPUT_TYPES = ("boolean", "float8")
#: one more overload of every aggregate, for any other pair of types (text, dates, arrays):
#: its step fails with DuckDB's message naming the side and its type. PostgreSQL picks it
#: only where no pair of :data:`INPUT_TYPES` takes the call (an integer or numeric column
#: casts to float8, the preferred numeric type, before it matches a polymorphic argument)
OTHER_TYPES = ("anyelement", "anycompatible")
#: the kinds of the binary family the library holds (formulas over the 2x2 table)
KINDS = ("aggregate", "from_counts")
#: the families of formulas over the 2x2 table: the binary measures and the rules' (a rule's
#: ``holds`` read as actual, ``fires`` as predicted, as in every engine)
FAMILIES = (B.FAMILY, R.FAMILY)
#: the composite type of ``binary_counts`` (DuckDB's struct): the four cells as float8
COUNTS_TYPE = "mlsql_binary_counts"
#: each cell's (actual, predicted) flags
CELLS = {"tp": ("true", "true"), "fp": ("false", "true"), "fn": ("true", "false")}
CELLS["tn"] = ("false", "false")


def included(m: Measure) -> bool:
    """Whether ``m`` is a binary or rule measure the library holds: a formula over the 2x2
    table, or ``binary_counts``."""
    if m.family not in FAMILIES:
        return False
    return m.kind == "counts" or (m.kind in KINDS and m.build is not None)


def helpers(create: str) -> list[str]:
    """``_mlsql_binary_flag(x, name, func)``: a binary input as boolean (a number must be 0
    or 1, else DuckDB's error naming ``func`` and the value; NULL stays NULL; any other type
    fails with DuckDB's error naming ``func``, the side and PostgreSQL's name of the type)."""
    # the type's message with its three holes filled by replace, the type's name last (so
    # nothing in it is read as a hole)
    template = pg_lit(CP.binary_type_message("{func}", "{name}", "{got}"))
    typed = f"replace(replace(replace({template}, '{{func}}', func), '{{name}}', name), '{{got}}', pg_typeof(x)::text)"
    before, after = CP.binary_value_message("{func}", "{got}").split("{got}")
    before_func, before_rest = before.split("{func}")
    message = (
        f"{pg_lit(before_func)} || func || {pg_lit(before_rest)} || x::text || {pg_lit(after)}"
    )
    fields = ", ".join(f"{name} float8" for name in B.COUNTS_FIELDS)
    counts_type = create_type(COUNTS_TYPE, fields, create)
    return [
        f"-- {COUNTS_TYPE}: binary_counts' result, DuckDB's struct {{tp, fp, fn, tn}}.\n"
        + counts_type,
        f"""-- _mlsql_binary_flag(x, name, func): a 0/1 input as boolean (other numbers: an error).
{create} FUNCTION _mlsql_binary_flag(x float8, name text, func text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
  SELECT CASE WHEN x IS NULL THEN NULL WHEN x = 1 THEN true WHEN x = 0 THEN false
    ELSE _mlsql_raise({message}, NULL::boolean) END
$f$;""",
        f"""-- _mlsql_binary_flag(x, name, func): a boolean input as it is.
{create} FUNCTION _mlsql_binary_flag(x boolean, name text, func text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$ SELECT x $f$;""",
        f"""-- _mlsql_binary_flag(x, name, func): an input of another type: an error naming it.
{create} FUNCTION _mlsql_binary_flag(x anyelement, name text, func text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
  SELECT _mlsql_raise({typed}, NULL::boolean)
$f$;""",
    ]


def cell(name: str) -> PgSql:
    """The step's variable holding the row's cell ``name`` (:data:`ROW_CELLS`)."""
    return PgSql(f"c_{name}")


#: plpgsql that sets each cell's variable once a row: 1 where the row (its checked flags
#: ``a_flag``, ``p_flag``) is that cell, else 0; NULL where either side is NULL (skipped)
ROW_CELLS = [
    "  IF a_flag IS NULL OR p_flag IS NULL THEN",
    "    c_tp := NULL; c_fp := NULL; c_fn := NULL; c_tn := NULL;",
    "  ELSE",
    *(
        f"    c_{name} := CASE WHEN a_flag = {a} AND p_flag = {p} THEN 1.0 ELSE 0.0 END;"
        for name, (a, p) in CELLS.items()
    ),
    "  END IF;",
]


def lower(m: Measure, weighted: bool) -> tuple[str, list[Slot], int]:
    """``m``'s formula over the four cells' sums: the final expression (over the state
    ``st``), the slots a row adds to and the state's length. ``binary_counts``: the cells'
    sums as a :data:`COUNTS_TYPE` (NULL over no known rows, as DuckDB's sums)."""
    ops = StateOps(offset=len(m.params))
    run: Any = WeightedOps(ops, PgSql("w")) if weighted else ops
    table = Table2x2(*(run.sum(cell(name)) for name in B.COUNTS_FIELDS))
    if m.kind == "counts":
        cells = ", ".join(str(getattr(table, name)) for name in B.COUNTS_FIELDS)
        return f"ROW({cells})::{COUNTS_TYPE}", ops.slots, ops.size
    assert m.build is not None
    expr = m.build(ops, table, **{p.name: param(p.name) for p in m.params})
    in_state = {p.name: f"st[{i + 1}]" for i, p in enumerate(m.params)}
    return fill(str(pg_lit(expr)), in_state), ops.slots, ops.size


def aggregate(m: Measure, create: str) -> list[str]:
    """A binary aggregate (and its aliases): two final functions (weighted or not), and per
    pair of input types and positional form a step function and the aggregates."""
    result = COUNTS_TYPE if m.kind == "counts" else "float8"
    lowered = {w: lower(m, w) for w in (False, True)}
    out = finals(m.name, {w: low[0] for w, low in lowered.items()}, create, result)
    func = pg_lit(m.name)
    for types in [*((a, p) for a in INPUT_TYPES for p in INPUT_TYPES), OTHER_TYPES]:
        for form in forms(m):
            _, slots, size = lowered[form.weighted]
            names = [n for n, _ in form.args]
            first, second = m.inputs  # actual, predicted (a rule's holds, fires)
            args = [f"{first} {types[0]}", f"{second} {types[1]}"]
            args += [f"{n} {t}" for n, t in form.args]
            supplied = {
                p.name: p.name if p.name in names else str(pg_lit(p.default)) for p in m.params
            }
            declare = ["a_flag boolean;", "p_flag boolean;", "x float8;", "t float8;"]
            declare += [f"c_{name} float8;" for name in CELLS]
            body = []
            if form.weighted:
                declare.append("w float8;")
                body.append(f"  w := _mlsql_weight(sample_weight, {func});")
            for i, p in enumerate(m.params):
                declare.append(f"v_{p.name} float8;")
                body.append(f"  v_{p.name} := _mlsql_check_{p.name}({supplied[p.name]}, {func});")
                body.append(f"  st[{i + 1}] := v_{p.name};")
            body += [
                f"  a_flag := _mlsql_binary_flag({first}, {pg_lit(first)}, {func});",
                f"  p_flag := _mlsql_binary_flag({second}, {pg_lit(second)}, {func});",
                *ROW_CELLS,
                *add_row(slots),
                "  RETURN st;",
            ]
            step = f"_mlsql_{m.name}_step"
            final = final_name(m.name, form.weighted)
            init = "{" + ",".join(["NULL"] * len(m.params) + ["0"] * (size - len(m.params))) + "}"
            comment = f"{m.name}({', '.join([first, second, *names])}): {m.summary}"
            out.append(step_function(create, step, args, plpgsql(declare, body), comment))
            out += create_aggregates(
                create, (m.name, *m.aliases), signature(args), step, init, final
            )
    return out


def from_counts(m: Measure, create: str) -> list[str]:
    """``binary_<name>_from_counts(tp, fp, fn, tn, ...)``: the formula over stored counts
    (:func:`~mlsql._postgres.forms.stored_counts_function`)."""
    assert m.build is not None
    table = Table2x2(*(PgSql(name) for name in B.COUNT_INPUTS))
    expr = m.build(RowOps(), table, **{p.name: param(p.name) for p in m.params})
    inputs = [f"{name} float8" for name in B.COUNT_INPUTS]
    return stored_counts_function(m, inputs, expr, create)
