"""Error messages in the PostgreSQL library's plpgsql: DuckDB's texts with their holes
filled by SQL values, and the checks of whole-number parameters.
"""

from __future__ import annotations

from mlsql import _params as P
from mlsql._params import Param
from mlsql._postgres.ops import pg_lit

#: the SQL of a checked value as the messages show it (Python's repr of a float8)
SHOWN = (
    "CASE WHEN x IS NULL THEN 'None' WHEN x = 'NaN'::float8 THEN 'nan'"
    " WHEN x = 'Infinity'::float8 THEN 'inf' WHEN x = '-Infinity'::float8 THEN '-inf'"
    " ELSE x::text END"
)


def concat(template: str, values: dict[str, str]) -> str:
    """SQL concatenating ``template``'s text with SQL ``values`` at its ``{name}`` marks.

    Examples
    --------
    >>> concat("{func} takes {x}.", {"func": "f", "x": "x::text"})
    "f || ' takes ' || x::text || '.'"
    """
    parts, rest = [], template
    while rest:
        marks = [(rest.find("{" + k + "}"), k) for k in values if "{" + k + "}" in rest]
        if not marks:
            parts.append(str(pg_lit(rest)))
            break
        at, key = min(marks)
        if at:
            parts.append(str(pg_lit(rest[:at])))
        parts.append(values[key])
        rest = rest[at + len(key) + 2 :]
    return " || ".join(parts)


def raise_statement(template: str, values: dict[str, str]) -> str:
    """plpgsql that fails with ``template`` (:func:`concat`)."""
    return f"RAISE EXCEPTION USING MESSAGE = {concat(template, values)};"


def param_message(p: Param) -> str:
    """DuckDB's message for a bad value of ``p``, its holes ``{func}`` and ``{shown}``."""
    return P.message(p, "{func}", "{shown}")


def check_function(p: Param, ok: list[str], create: str) -> str:
    """``_mlsql_check_<name>(x float8, func)``: ``x`` where every condition of ``ok`` holds,
    else DuckDB's error for ``p`` showing the value as Python shows it."""
    values = {"func": "func", "shown": "shown"}
    return f"""-- _mlsql_check_{p.name}(x, func): {p.name}, {p.constraint.rule()}.
{create} FUNCTION _mlsql_check_{p.name}(x float8, func text) RETURNS float8
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
DECLARE
  shown text := {SHOWN};
BEGIN
  IF {" AND ".join(ok)} THEN
    RETURN x;
  END IF;
  {raise_statement(param_message(p), values)}
END
$f$;"""


def number_check(p: Param, create: str) -> str:
    """:func:`check_function` of a number within its constraint's bounds
    (:class:`mlsql._params.Number`; NaN, infinite and NULL values are errors)."""
    c = p.constraint
    ok = ["x IS NOT NULL"]
    if c.finite:
        ok.append("x <> 'NaN'::float8 AND abs(x) < 'Infinity'::float8")
    if c.low is not None:
        ok.append(f"x {'>' if c.strict else '>='} {pg_lit(float(c.low))}")
    if c.high is not None:
        ok.append(f"x < {pg_lit(float(c.high))}")
    return check_function(p, ok, create)


def integer_check(p: Param, create: str) -> str:
    """:func:`check_function` of a whole number within its constraint's bounds
    (:class:`mlsql._params.Integer`); anything else, NULL too, is an error. A ``numeric``
    overload refuses a value written with decimals (``10.0``, ``2.5``), as DuckDB refuses a
    DECIMAL: an integer argument goes to the ``float8`` check (PostgreSQL's preferred
    number type), a decimal literal to this one."""
    c = p.constraint
    ok = ["x = floor(x)", f"x >= {pg_lit(float(c.low))}"]
    ok.append(f"x <= {pg_lit(float(c.high))}" if c.high is not None else "x < 'Infinity'::float8")
    values = {"func": "func", "shown": "x::text"}
    decimal = f"""-- _mlsql_check_{p.name}(x numeric, func): {p.name} written with decimals is refused.
{create} FUNCTION _mlsql_check_{p.name}(x numeric, func text) RETURNS float8
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
BEGIN
  IF x IS NOT NULL AND scale(x) > 0 THEN
    {raise_statement(param_message(p), values)}
  END IF;
  RETURN _mlsql_check_{p.name}(x::float8, func);
END
$f$;"""
    return check_function(p, ok, create) + "\n\n" + decimal


def boolean_check(p: Param, create: str, result: str = "boolean", value: str = "x") -> str:
    """``_mlsql_check_<name>(x boolean, func)``: ``value`` (SQL of ``x``, of type ``result``)
    where ``x`` is not NULL; NULL is DuckDB's error for ``p`` (Python's None)."""
    values = {"func": "func", "shown": "shown"}
    return f"""-- _mlsql_check_{p.name}(x, func): {p.name}, a boolean (not NULL).
{create} FUNCTION _mlsql_check_{p.name}(x boolean, func text) RETURNS {result}
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
DECLARE
  shown text := 'None';
BEGIN
  IF x IS NOT NULL THEN
    RETURN {value};
  END IF;
  {raise_statement(param_message(p), values)}
END
$f$;"""
