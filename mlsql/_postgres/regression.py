"""The regression family in the PostgreSQL library: the measures of (actual, predicted) numbers.

Written from the registry (:mod:`mlsql.measures.regression`) and its formulas through
:mod:`mlsql._postgres.ops`; nothing of a formula is written here. Each aggregate's
``float8[]`` state holds the checked parameters, then the shifts (the first known row's
y, ŷ and y - ŷ), then a compensated sum or a count per statistic, so its memory does not
grow with rows.

The variances and the covariance are the corrected two-pass formula of
:func:`~mlsql.measures.regression.centred_comoment` over values centred on the shift
instead of the mean (the shifted-data algorithm): the shift cancels an offset exactly
(y = 1e12 + noise keeps its digits), and the result loses about log10((shift - mean)² /
variance) digits where the first row lies far out, where the other engines, which centre
on the mean in a second pass, lose none. ``rae`` is left out: Σ|y - mean(y)| needs the
mean before the sum, and no one-pass bounded form of it exists (:data:`LEFT_OUT`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlsql import _classification_params as CP
from mlsql._postgres.forms import (
    add_row,
    create_aggregates,
    final_name,
    finals,
    forms,
    plpgsql,
    signature,
    step_function,
)
from mlsql._postgres.ops import PgSql, Slot, StateOps, fill, param, pg_lit
from mlsql._registry import Measure
from mlsql._weights import WeightedOps
from mlsql.measures import regression as RG

#: the SQL types of the inputs: numbers (integer and numeric columns cast to float8 by
#: themselves), and any other pair, whose step fails with DuckDB's message naming the type
INPUT_TYPES = (("float8", "float8"), ("anyelement", "anycompatible"))
#: what the library leaves out, and why
LEFT_OUT = {
    "rae": "Σ|y - mean(y)| needs the mean before the sum: no one-pass bounded form exists "
    "(mlsql.evaluate over an ibis table of the database runs it as two grouped passes)",
}
#: the shifts' places in the state after the parameters: y, ŷ and y - ŷ of the first known row
SHIFTS = ("y", "p", "e")


def included(m: Measure) -> bool:
    """Whether the library holds ``m``: a regression aggregate but :data:`LEFT_OUT`'s."""
    return (
        m.family == RG.FAMILY
        and m.kind == "aggregate"
        and m.build is not None
        and m.name not in LEFT_OUT
    )


def helpers(create: str) -> list[str]:
    """``_mlsql_finite(x, name, func)``: a number input, NaN and infinite values an error
    (DuckDB's message); an input of another type, an error naming PostgreSQL's type."""
    cases = " ".join(
        f"WHEN x = {pg_lit(float(v))} THEN {pg_lit(CP.finite_value_message('{f}', '{n}', got))}"
        for v, got in zip(("nan", "inf", "-inf"), CP.NOT_FINITE, strict=True)
    )
    template = f"CASE {cases} END"
    finite = f"replace(replace({template}, '{{f}}', func), '{{n}}', name)"
    typed = pg_lit(CP.number_type_message("{f}", "{n}", "{t}"))
    typed_message = (
        f"replace(replace(replace({typed}, '{{f}}', func), '{{n}}', name), '{{t}}',"
        " pg_typeof(x)::text)"
    )
    return [
        f"""-- _mlsql_finite(x, name, func): a finite number (NaN, inf, -inf: an error).
{create} FUNCTION _mlsql_finite(x float8, name text, func text) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
  SELECT CASE WHEN x = 'NaN'::float8 OR abs(x) = 'Infinity'::float8
    THEN _mlsql_raise({finite}, NULL::float8) ELSE x END
$f$;""",
        f"""-- _mlsql_finite(x, name, func): an input of another type: an error naming it.
{create} FUNCTION _mlsql_finite(x anyelement, name text, func text) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
  SELECT _mlsql_raise({typed_message}, NULL::float8)
$f$;""",
    ]


class OnRead:
    """:class:`~mlsql.measures.regression.RegressionStats` whose fields are made where the
    formula reads them: a statistic no formula reads takes no slot of the state, and its
    row no work in the step (mse reads two of the ten)."""

    def __init__(self, fields: dict[str, Callable[[], Any]]) -> None:
        self._fields = fields
        self._made: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in self._fields:
            raise AttributeError(name)
        if name not in self._made:
            self._made[name] = self._fields[name]()
        return self._made[name]


def _checked_inputs(numbers: bool, func: str) -> list[str]:
    """plpgsql that sets ``y`` and ``p`` to the checked inputs: numbers read as they are and
    checked only where one is not finite (a function call a row costs about a microsecond),
    and only where both are known (the semantics guide: a row with a NULL side is skipped
    unchecked); another type fails in ``_mlsql_finite``."""
    if not numbers:
        # a row with a NULL side is skipped unchecked (its type is checked all the same)
        return [
            "  y := _mlsql_finite(CASE WHEN predicted IS NULL THEN NULL ELSE actual END,"
            f" 'actual', {func});",
            "  p := _mlsql_finite(CASE WHEN actual IS NULL THEN NULL ELSE predicted END,"
            f" 'predicted', {func});",
        ]
    finite = "{0} = 'NaN'::float8 OR abs({0}) = 'Infinity'::float8"
    return [
        "  y := actual;",
        "  p := predicted;",
        f"  IF y IS NOT NULL AND p IS NOT NULL AND ({finite.format('y')} OR {finite.format('p')}) THEN",
        f"    y := _mlsql_finite(y, 'actual', {func});",
        f"    p := _mlsql_finite(p, 'predicted', {func});",
        "  END IF;",
    ]


def lower(m: Measure, weighted: bool) -> tuple[str, list[Slot], int]:
    """``m``'s formula over the state: the final expression, the slots a row adds to and the
    state's length. The row's checked values are ``y`` and ``p`` in the step."""
    offset = len(m.params)
    shift = {k: PgSql(f"st[{offset + i + 1}]") for i, k in enumerate(SHIFTS)}
    ops = StateOps(offset=offset + len(SHIFTS))
    run: Any = WeightedOps(ops, PgSql("w")) if weighted else ops
    y, p = PgSql("y"), PgSql("p")
    e = y - p
    value = {"y": y, "p": p, "e": e}
    n = run.count(y)

    def d(k: str) -> Any:
        return value[k] - shift[k]

    def comoment(a: str, b: str) -> Any:
        return RG.centred_comoment(ops, run.sum(d(a) * d(b)), run.sum(d(a)), run.sum(d(b)), n)

    fields: dict[str, Callable[[], Any]] = {
        "n": lambda: n,
        "sse": lambda: run.sum(e * e),
        "sae": lambda: run.sum(PgSql(f"abs({e})")),
        "sape": lambda: run.sum(PgSql(f"(abs({e}) / greatest(abs(y), {pg_lit(RG.EPSILON)}))")),
        "var_actual": lambda: comoment("y", "y"),
        "var_predicted": lambda: comoment("p", "p"),
        "covariance": lambda: comoment("y", "p"),
        "var_error": lambda: comoment("e", "e"),
        "sad_actual": lambda: PgSql("NULL::float8"),
        "rows": lambda: ops.count(y) if weighted else None,
    }
    stats = OnRead(fields)
    assert m.build is not None
    expr = m.build(ops, stats, **{p.name: param(p.name) for p in m.params})
    in_state = {p.name: f"st[{i + 1}]" for i, p in enumerate(m.params)}
    return fill(str(pg_lit(expr)), in_state), ops.slots, ops.size


def aggregate(m: Measure, create: str) -> list[str]:
    """A regression aggregate (and its aliases): two final functions (weighted or not), and
    per pair of input types and positional form a step function and the aggregates."""
    lowered = {w: lower(m, w) for w in (False, True)}
    out = finals(m.name, {w: low[0] for w, low in lowered.items()}, create)
    func = pg_lit(m.name)
    first, second = m.inputs  # actual, predicted (Hivemall's order for hivemall_r2)
    offset = len(m.params)
    for types in INPUT_TYPES:
        for form in forms(m):
            _, slots, size = lowered[form.weighted]
            names = [n for n, _ in form.args]
            args = [f"{first} {types[0]}", f"{second} {types[1]}"]
            args += [f"{n} {t}" for n, t in form.args]
            given = {
                p.name: p.name if p.name in names else str(pg_lit(p.default)) for p in m.params
            }
            body = _checked_inputs(types[0] == "float8", str(func))
            for i, p in enumerate(m.params):
                body.append(f"  st[{i + 1}] := _mlsql_check_{p.name}({given[p.name]}, {func});")
            known = "y IS NOT NULL AND p IS NOT NULL"
            if form.weighted:
                body.append(f"  w := _mlsql_weight(sample_weight, {func});")
                known += " AND w IS NOT NULL"
            body += [
                f"  IF NOT ({known}) THEN",
                "    y := NULL; p := NULL;",  # the row is unknown: no slot adds it
                f"  ELSIF st[{offset + 1}] IS NULL THEN",
                *(f"    st[{offset + i + 1}] := {v};" for i, v in enumerate(("y", "p", "y - p"))),
                "  END IF;",
                *add_row(slots),
                "  RETURN st;",
            ]
            step = f"_mlsql_{m.name}_step"
            final = final_name(m.name, form.weighted)
            init = ["NULL"] * (offset + len(SHIFTS)) + ["0"] * (size - offset - len(SHIFTS))
            comment = f"{m.name}({', '.join([first, second, *names])}): {m.summary}"
            declare = ["y float8;", "p float8;", "w float8;", "x float8;", "t float8;"]
            out.append(step_function(create, step, args, plpgsql(declare, body), comment))
            initial = "{" + ",".join(init) + "}"
            out += create_aggregates(
                create, (m.name, *m.aliases), signature(args), step, initial, final
            )
    return out
