"""The positional forms of a PostgreSQL aggregate and the statements that add a row to its state.

Shared by the families of the PostgreSQL library (:mod:`mlsql._postgres.library`,
:mod:`mlsql._postgres.binary`): each parameter's SQL types, the overloads an aggregate
gets (DuckDB's positional order), and the plpgsql that adds a row to the state's slots.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from mlsql._params import Nullable
from mlsql._postgres.ops import Slot, fill, pg_lit
from mlsql._registry import Measure

#: each parameter's SQL types (one overload each: PostgreSQL reads 'ignore' as text and 1 as
#: a number only where both exist); ``_mlsql_check_<name>`` checks (and codes) it
PARAM_TYPES = {
    "zero_division": ("text", "float8"),
    "beta": ("float8",),
    "alpha": ("float8",),
    "correction": ("float8",),
    "cost_fn": ("float8",),
    "cost_fp": ("float8",),
    "n_labels": ("bigint",),
    "sample_weight": ("float8",),
    "k": ("float8",),
    "p": ("float8",),
}


def typed(
    names: list[str], types: Callable[[str], tuple[str, ...]] = PARAM_TYPES.__getitem__
) -> list[list[tuple[str, str]]]:
    """Every typing of the parameters ``names`` (each one's SQL types by ``types``): lists of
    (name, type), one per overload."""
    out: list[list[tuple[str, str]]] = [[]]
    for n in names:
        out = [[*o, (n, t)] for o in out for t in types(n)]
    return out


def add_row(slots: list[Slot]) -> list[str]:
    """plpgsql that adds the row to each slot: a compensated sum (Neumaier) or a count."""
    out = []
    for s in slots:
        i, c = s.index, s.index + 1
        if s.kind == "count":
            out.append(f"  IF ({s.expr}) IS NOT NULL THEN st[{i}] := st[{i}] + 1; END IF;")
            continue
        out += [
            f"  x := {s.expr};",
            "  IF x IS NOT NULL THEN",
            f"    t := st[{i}] + x;",
            f"    IF abs(st[{i}]) >= abs(x) THEN st[{c}] := st[{c}] + ((st[{i}] - t) + x);",
            f"    ELSE st[{c}] := st[{c}] + ((x - t) + st[{i}]); END IF;",
            f"    st[{i}] := t;",
            "  END IF;",
        ]
    return out


@dataclass(frozen=True)
class Form:
    """One positional overload of an aggregate: weighted or not, its arguments' (name, type)."""

    weighted: bool
    args: tuple[tuple[str, str], ...]


def forms(
    m: Measure,
    types: Callable[[str], tuple[str, ...]] = PARAM_TYPES.__getitem__,
    required: Collection[str] | None = None,
) -> list[Form]:
    """The positional forms, as DuckDB's: (actual, predicted, required parameters), then
    sample_weight and each prefix of the optional ones, one overload per typing (``types``:
    each parameter's SQL types). A parameter is required where it has no default and NULL
    does not stand for one (kappa's ``weights`` and ``labels`` are optional), or where it is
    in ``required`` if given; a table's ``by`` is left out.

    Examples
    --------
    >>> from mlsql._registry import REGISTRY, measures
    >>> _ = measures()
    >>> [[n for n, _ in f.args] for f in forms(REGISTRY["micro_f1"])][:3]
    [[], ['sample_weight'], ['sample_weight', 'zero_division']]
    """
    params = [p for p in m.params if p.name != "by"]  # a table's groups: no aggregate's
    needed = [
        p.name
        for p in params
        if (p.name in required if required is not None else p.default is None)
        and not isinstance(p.constraint, Nullable)
    ]
    optional = [p.name for p in params if p.name not in needed]
    lists = [(False, needed)]
    lists += [(True, [*needed, "sample_weight", *optional[:k]]) for k in range(len(optional) + 1)]
    return [Form(w, tuple(t)) for w, names in lists for t in typed(names, types)]


def param_checks(m: Measure, given: Collection[str]) -> tuple[list[str], list[str]]:
    """plpgsql that checks each parameter of ``m`` into ``v_<name>`` (the argument where
    ``given`` names it, else its default): the declarations and the statements."""
    func = pg_lit(m.name)
    declare, statements = [], []
    for p in m.params:
        value = p.name if p.name in given else str(pg_lit(p.default))
        declare.append(f"v_{p.name} float8;")
        statements.append(f"  v_{p.name} := _mlsql_check_{p.name}({value}, {func});")
    return declare, statements


def histogram_add(keys: str, weights: str, key: str, weight: str, indent: str) -> str:
    """plpgsql that adds ``weight`` to ``key``'s entry of a histogram held as two arrays
    (``keys`` and their ``weights``; a new key goes last), in an int variable ``k``; each
    line indented by ``indent``."""
    lines = [
        f"k := array_position({keys}, {key});",
        "IF k IS NULL THEN",
        f"  {keys} := {keys} || {key};",
        f"  {weights} := {weights} || {weight};",
        "ELSE",
        f"  {weights}[k] := {weights}[k] + {weight};",
        "END IF;",
    ]
    return "\n".join(indent + line for line in lines)


def create_type(name: str, fields: str, create: str) -> str:
    """``CREATE TYPE name AS (fields)``; where functions are replaced (``create`` is
    ``CREATE OR REPLACE``), made only where it is missing, as a type has no OR REPLACE."""
    made = f"CREATE TYPE {name} AS ({fields});"
    if create == "CREATE":
        return made
    return f"DO $d$ BEGIN\n  IF to_regtype('{name}') IS NULL THEN\n    {made}\n  END IF;\nEND $d$;"


def final_name(name: str, weighted: bool) -> str:
    """The final function of ``name``'s aggregate, weighted or not."""
    return f"_mlsql_{name}{'_weighted' if weighted else ''}_final"


def finals(
    name: str, lowered: Mapping[bool, str], create: str, result: str = "float8"
) -> list[str]:
    """The final functions of ``name``'s aggregates (:func:`final_name`): ``lowered`` maps
    weighted or not to the final expression over the state ``st float8[]``."""
    return [
        f"{create} FUNCTION {final_name(name, w)}(st float8[]) RETURNS {result}\n"
        f"LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$\n  SELECT {final}\n$f$;"
        for w, final in lowered.items()
    ]


def plpgsql(declare: list[str], statements: list[str]) -> str:
    """A plpgsql body: the variables ``declare`` (each ``name type;``), then ``statements``."""
    return "\n".join(["DECLARE", *(f"  {d}" for d in declare), "BEGIN", *statements, "END"])


def signature(args: list[str]) -> str:
    """The argument types of declared arguments (``name type``), as an aggregate lists them."""
    return ", ".join(a.split(" ", 1)[1] for a in args)


def step_function(create: str, step: str, args: list[str], body: str, comment: str = "") -> str:
    """A step function ``step(st float8[], args...)`` returning the state, of the plpgsql
    ``body`` (:func:`plpgsql`); ``comment`` (a line, no ``--``) goes above it."""
    head = f"-- {comment}\n" if comment else ""
    return (
        f"{head}{create} FUNCTION {step}(st float8[], {', '.join(args)}) RETURNS float8[]\n"
        f"LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\n{body}\n$f$;"
    )


def create_aggregates(
    create: str,
    names: tuple[str, ...],
    signature: str,
    step: str,
    init: str,
    final: str | None = None,
    state: str = "float8[]",
) -> list[str]:
    """``CREATE AGGREGATE`` of each of ``names`` (a measure and its aliases) over the
    argument types ``signature``: the step function, the state's type and initial value,
    and the final function (none: the state is the result, as where the step always fails)."""
    last = f", FINALFUNC = {final}" if final else ""
    return [
        f"{create} AGGREGATE {name}({signature}) (\n"
        f"  SFUNC = {step}, STYPE = {state}{last},\n"
        f"  INITCOND = '{init}', PARALLEL = SAFE\n);"
        for name in names
    ]


def stored_counts_function(m: Measure, inputs: list[str], expr: Any, create: str) -> list[str]:
    """A ``*_from_counts`` function: ``expr`` (a formula over stored counts, its parameters
    as :func:`~mlsql._postgres.ops.param` placeholders) as a per-row plpgsql function of
    ``inputs`` (declared arguments), the parameters named and defaulted (one without a
    default is required); zero_division a number, or text in an overload of its own that
    comes first and has no default, so no call matches both."""
    value = fill(str(pg_lit(expr)), {p.name: f"v_{p.name}" for p in m.params})
    func = pg_lit(m.name)
    body = "".join(f"  v_{p.name} float8;\n" for p in m.params)
    body = ("DECLARE\n" + body if body else "") + "BEGIN\n"
    body += "".join(f"  v_{p.name} := _mlsql_check_{p.name}({p.name}, {func});\n" for p in m.params)
    body += f"  RETURN {value};\nEND"

    def declared(p: Any) -> str:
        default = "" if p.default is None else f" DEFAULT {pg_lit(p.default)}"
        return f"{p.name} {PARAM_TYPES[p.name][-1]}{default}"

    overloads = [[declared(p) for p in m.params]]
    if any(p.name == "zero_division" for p in m.params):
        rest = [declared(p) for p in m.params if p.name != "zero_division"]
        overloads.append(["zero_division text", *rest])
    return [
        f"-- {m.name}: {m.summary}\n"
        f"{create} FUNCTION {m.name}({', '.join([*inputs, *params])}) RETURNS float8\n"
        f"LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\n{body}\n$f$;"
        for params in overloads
    ]
