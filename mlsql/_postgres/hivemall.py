"""Hivemall's ``fmeasure`` in the PostgreSQL library.

``fmeasure(actual, predicted[, options[, sample_weight]])`` with Hivemall's option string
('-beta 2. -average micro|binary', default micro with beta 1) and its argument order:

- over label arrays (``text[]``, ``bigint[]``): the micro F-beta of the rows' sets;
- over ``bigint`` labels 1, 0 or -1 (0 and -1 are both negative) or ``boolean``: under
  micro every row carries one label, so F is the share of equal rows; under binary only
  the label 1 counts.

0 where undefined, as DuckDB's. The state is the label-set aggregates' ``float8[]``
(:mod:`mlsql._postgres.ops`'s :class:`~mlsql._postgres.ops.StateOps`): beta and the
average, then compensated sums of tp, |A| and |P|; the formula is
:func:`mlsql._formulas.fbeta` of :func:`mlsql._formulas.pooled`, as DuckDB's macro.
"""

from __future__ import annotations

from typing import Any

from mlsql import _formulas as F
from mlsql import _params as P
from mlsql._postgres.forms import (
    add_row,
    create_aggregates,
    final_name,
    finals,
    plpgsql,
    signature,
    step_function,
)
from mlsql._postgres.ops import PgSql, StateOps, pg_lit
from mlsql._weights import WeightedOps

#: the input types: label arrays, then binary labels (each an overload of fmeasure)
ARRAYS = ("text[]", "bigint[]")
BINARY = ("bigint", "boolean")
#: the state's first two elements: beta and the average (0 micro, 1 binary)
BETA, AVERAGE = PgSql("st[1]"), PgSql("st[2]")


def _message(template: str, value: str) -> str:
    """SQL of ``template``'s text with its one {} filled by SQL ``value``."""
    before, after = template.split("{}")
    return f"{pg_lit(before)} || {value} || {pg_lit(after)}"


def helpers(create: str) -> list[str]:
    """The option string's checks (DuckDB's messages) and the binary label's."""
    beta_text = f"substring(coalesce(options, '') from '{P.BETA_PATTERN}')"
    average_text = f"substring(coalesce(options, '') from '{P.AVERAGE_PATTERN}')"
    bad_options = _message(P.OPTIONS_MESSAGE.format(got="'{}'"), "options")
    bad_beta = _message(P.beta_message("fmeasure", "'{}'"), "beta")
    bad_average = _message(P.AVERAGE_MESSAGE.format(got="'{}'"), "average")
    bad_int = _message(P.INT_LABEL_MESSAGE.format(got="{}"), "x::text")
    pattern = pg_lit("^" + P.OPTIONS_PATTERN + "$")
    return [
        f"""-- _mlsql_hivemall_options(options): ARRAY[beta, average (0 micro, 1 binary)] of a
-- Hivemall option string; an error where it is not one.
{create} FUNCTION _mlsql_hivemall_options(options text) RETURNS float8[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
DECLARE
  beta text := {beta_text};
  average text := coalesce({average_text}, 'micro');
  b float8 := 1;
BEGIN
  IF coalesce(options, '') !~ {pattern} THEN
    RAISE EXCEPTION USING MESSAGE = {bad_options};
  END IF;
  IF beta IS NOT NULL THEN
    IF beta !~* {pg_lit("^(?:" + P.BETA_NUMBER + ")$")} THEN
      RAISE EXCEPTION USING MESSAGE = {bad_beta};
    END IF;
    BEGIN
      b := beta::float8;
    EXCEPTION WHEN invalid_text_representation THEN
      RAISE EXCEPTION USING MESSAGE = {bad_beta};
    END;
    b := _mlsql_check_beta(b, 'fmeasure');
  END IF;
  IF average = 'macro' THEN
    RAISE EXCEPTION USING MESSAGE = {pg_lit(P.AVERAGE_MACRO_MESSAGE)};
  ELSIF average NOT IN ('micro', 'binary') THEN
    RAISE EXCEPTION USING MESSAGE = {bad_average};
  END IF;
  RETURN ARRAY[b, CASE WHEN average = 'binary' THEN 1 ELSE 0 END];
END
$f$;""",
        f"""-- _mlsql_hivemall_label(x): Hivemall's binary label: 1 stays 1, 0 and -1 are 0.
{create} FUNCTION _mlsql_hivemall_label(x bigint) RETURNS bigint
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
BEGIN
  IF x IS NULL OR x = 1 THEN RETURN x; END IF;
  IF x IN (0, -1) THEN RETURN 0; END IF;
  RAISE EXCEPTION USING MESSAGE = {bad_int};
END
$f$;""",
    ]


#: plpgsql that sets the row's tp, |A| and |P| from binary labels a and p (checked, as
#: bigint), under the state's average: micro, one label a side (tp where equal); binary,
#: the label 1 only
BINARY_STATS = """  IF a IS NULL OR p IS NULL THEN
    tp := NULL; n_actual := NULL; n_predicted := NULL;
  ELSIF st[2] = 1 THEN
    tp := CASE WHEN a = 1 AND p = 1 THEN 1 ELSE 0 END;
    n_actual := CASE WHEN a = 1 THEN 1 ELSE 0 END;
    n_predicted := CASE WHEN p = 1 THEN 1 ELSE 0 END;
  ELSE
    tp := CASE WHEN a = p THEN 1 ELSE 0 END; n_actual := 1; n_predicted := 1;
  END IF;"""


def _lowered(weighted: bool) -> tuple[str, list[Any], int]:
    """The F-beta of the pooled counts over the state: its final expression, slots, size."""
    ops = StateOps(offset=2)
    run: Any = WeightedOps(ops, PgSql("w")) if weighted else ops
    stats = F.RowStats(PgSql("tp"), PgSql("n_actual"), PgSql("n_predicted"))
    value = F.fbeta(ops, F.pooled(run, stats), BETA, 0.0)
    return str(pg_lit(value)), ops.slots, ops.size


def aggregates(create: str, row_stats: str) -> list[str]:
    """fmeasure's final functions and, per input type and form, its step and aggregate
    (``row_stats``: the label-set rows' plpgsql that sets tp, n_actual, n_predicted)."""
    lowered = {w: _lowered(w) for w in (False, True)}
    out = finals("fmeasure", {w: low[0] for w, low in lowered.items()}, create)
    binary_message = pg_lit(P.BINARY_ON_ARRAYS_MESSAGE)
    for kind in (*ARRAYS, *BINARY):
        arrays = kind in ARRAYS
        for args in ((), ("options text",), ("options text", "sample_weight float8")):
            weighted = len(args) == 2
            _, slots, size = lowered[weighted]
            options = "options" if args else "''"
            body = [f"  st[1:2] := _mlsql_hivemall_options({options});"]
            if arrays:
                body.append(
                    f"  IF st[2] = 1 THEN RAISE EXCEPTION USING MESSAGE = {binary_message}; END IF;"
                )
            if weighted:
                body.append("  w := _mlsql_weight(sample_weight, 'fmeasure');")
            if arrays:
                body.append(row_stats)
            else:
                cast = "::int" if kind == "boolean" else ""
                body += [
                    f"  a := _mlsql_hivemall_label(actual{cast});",
                    f"  p := _mlsql_hivemall_label(predicted{cast});",
                    BINARY_STATS,
                ]
            body += [*add_row(slots), "  RETURN st;"]
            listed = [f"actual {kind}", f"predicted {kind}", *args]
            step = "_mlsql_fmeasure_step"
            declare = "tp float8; n_actual float8; n_predicted float8; x float8; t float8;"
            declare += " w float8; a bigint; p bigint;"
            out.append(step_function(create, step, listed, plpgsql([declare], body)))
            init = "{" + ",".join(["NULL", "NULL"] + ["0"] * (size - 2)) + "}"
            final = final_name("fmeasure", weighted)
            out += create_aggregates(create, ("fmeasure",), signature(listed), step, init, final)
    return out
