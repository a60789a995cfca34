"""The agreement measures of the PostgreSQL library: Fleiss' kappa and Cochran's Q.

Their sufficient statistics (:mod:`mlsql.measures.agreement`) are a few sums and one sum
per category (Fleiss: the ratings T_j of each category) or per model (Cochran: the
successes C_j of each column), held in :data:`STATE_TYPE`: memory grows with the
categories or models, never with the rows. The step counts a row's ratings per category
(or sums its outcomes), checks that every row has as many as the first known one, and
adds the row's terms weighted by its ``sample_weight``; the final function applies the
registry's formula (the p-value's chi-square tail as the single-label tests take it).
"""

from __future__ import annotations

from typing import Any

from mlsql import _classification_params as CP
from mlsql._label_types import NOT_A_LABEL_MESSAGE, NOT_A_LIST_MESSAGE
from mlsql._postgres.forms import create_aggregates, create_type, final_name, histogram_add
from mlsql._postgres.ops import FinalOps, Lets, PgSql, pg_lit
from mlsql._registry import Measure
from mlsql.measures import agreement as A

FAMILY = A.FAMILY
STATE_TYPE = "mlsql_agreement_state"
#: the values per row (m raters, k models; NULL before the first known row), the known rows'
#: weight and number, Σ of the squares (Σ_j n_ij², or R_i²), Cochran's T, and per category
#: (or model, keyed by its place) a weighted sum
STATE_FIELDS = (
    ("width", "float8"),
    ("n", "float8"),
    ("rows", "float8"),
    ("squares", "float8"),
    ("total", "float8"),
    ("keys", "text[]"),
    ("sums", "float8[]"),
)
INIT = "(,0,0,0,0,{},{})"
#: the list types Cochran's Q reads as outcomes, each its own overload (so that no implicit
#: cast makes a call ambiguous with the refusal of any other list, ``anyarray``)
OUTCOME_TYPES = ("boolean[]", "bigint[]", "integer[]", "smallint[]")
#: the list types Fleiss' kappa reads as ratings, likewise (labels are text or integers: a list
#: of floats, numerics or booleans is refused, as in every engine)
LABEL_LIST_TYPES = ("text[]", "varchar[]", "bpchar[]", "bigint[]", "integer[]", "smallint[]")


def included(m: Measure) -> bool:
    """Whether the library holds ``m``: every agreement measure."""
    return m.family == FAMILY


def _stats(m: Measure, weighted: bool) -> Any:
    state = {name: PgSql(f"(st).{name}") for name, _ in STATE_FIELDS}
    sum_of_squares = PgSql("(SELECT coalesce(sum(x * x), 0) FROM unnest((st).sums) AS x)")
    rows = state["rows"] if weighted else None
    if m.name == "fleiss_kappa":
        return A.RatingStats(state["n"], state["width"], state["squares"], sum_of_squares, rows)
    return A.OutcomeStats(
        state["n"], state["width"], state["total"], state["squares"], sum_of_squares, rows
    )


def _final(m: Measure, weighted: bool, create: str) -> str:
    assert m.build is not None
    value = pg_lit(m.build(FinalOps(Lets()), _stats(m, weighted)))
    return (
        f"{create} FUNCTION {final_name(m.name, weighted)}(st {STATE_TYPE}) RETURNS float8\n"
        f"LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$\n  SELECT {value}\n$f$;"
    )


def _width_check(m: Measure, count: str) -> str:
    template = A.RATERS_MESSAGE if m.name == "fleiss_kappa" else A.MODELS_MESSAGE
    message = pg_lit(template.format(func=m.name))
    return (
        f"  IF {count} < 2 OR {count} <> coalesce(st.width, {count}) THEN\n"
        f"    RAISE EXCEPTION USING MESSAGE = {message};\n  END IF;"
    )


def _ratings(m: Measure) -> list[str]:
    """plpgsql adding a row of ratings: each category's count in the row, the row's squares
    and the categories' running totals."""
    return [
        "  m := 0; cats := '{}'; counts := '{}';",
        "  FOR i IN 1..coalesce(cardinality(ratings), 0) LOOP",
        "    CONTINUE WHEN ratings[i] IS NULL;",
        "    m := m + 1; key := ratings[i]::text;",
        histogram_add("cats", "counts", "key", "1", "    "),
        "  END LOOP;",
        _width_check(m, "m"),
        "  st.width := m; st.n := st.n + w; st.rows := st.rows + 1;",
        "  FOR j IN 1..cardinality(cats) LOOP",
        "    st.squares := st.squares + w * counts[j] * counts[j];",
        "    x := w * counts[j];",
        histogram_add("st.keys", "st.sums", "cats[j]", "x", "    "),
        "  END LOOP;",
    ]


def _outcomes(m: Measure, list_type: str) -> list[str]:
    """plpgsql adding a row of outcomes (a row holding a NULL is skipped): each value
    checked 0/1, the row's successes R_i, and each model's running sum."""
    value = "correct[j]::int" if list_type == "boolean[]" else "correct[j]"
    before, after = CP.binary_value_message(m.name, "\x00").split("\x00")
    check = ""
    if list_type != "boolean[]":
        check = (
            f"    IF correct[j] NOT IN (0, 1) THEN RAISE EXCEPTION USING MESSAGE = "
            f"{pg_lit(before)} || correct[j]::text || {pg_lit(after)}; END IF;\n"
        )
    return [
        "  IF array_position(correct, NULL) IS NOT NULL THEN RETURN st; END IF;",
        "  m := coalesce(cardinality(correct), 0);",
        "  r := 0;",
        "  FOR j IN 1..m LOOP",
        check + f"    r := r + {value};",
        "  END LOOP;",
        _width_check(m, "m"),
        "  IF st.width IS NULL THEN st.sums := array_fill(0::float8, ARRAY[m]); END IF;",
        "  st.width := m; st.n := st.n + w; st.rows := st.rows + 1;",
        "  st.total := st.total + w * r; st.squares := st.squares + w * r * r;",
        f"  FOR j IN 1..m LOOP st.sums[j] := st.sums[j] + w * {value}; END LOOP;",
    ]


def _step(m: Measure, create: str, list_type: str, weighted: bool, body: list[str]) -> str:
    name = m.inputs[0]
    args = [f"{name} {list_type}", *(["sample_weight float8"] if weighted else [])]
    lines = [f"  IF {name} IS NULL THEN RETURN st; END IF;"]
    if weighted:
        lines.append(f"  w := _mlsql_weight(sample_weight, {pg_lit(m.name)});")
        lines.append("  IF w IS NULL THEN RETURN st; END IF;")
    else:
        lines.append("  w := 1;")
    declare = (
        "  w float8; x float8; m int; r float8; k int; key text; cats text[]; counts float8[];"
    )
    return (
        f"-- {m.name}({', '.join(a.split(' ')[0] for a in args)}): {m.summary}\n"
        f"{create} FUNCTION _mlsql_{m.name}_step(st {STATE_TYPE}, {', '.join(args)})"
        f" RETURNS {STATE_TYPE}\nLANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\nDECLARE\n"
        f"{declare}\nBEGIN\n" + "\n".join([*lines, *body, "  RETURN st;"]) + "\nEND\n$f$;"
    )


def _refusal(m: Measure, create: str, input_type: str, weighted: bool, template: str) -> str:
    """A step over an input of another type: it fails with ``template`` naming the type."""
    name = m.inputs[0]
    args = [f"{name} {input_type}", *(["sample_weight float8"] if weighted else [])]
    before, after = template.format(func=m.name, name=name, type="\x00").split("\x00")
    return (
        f"{create} FUNCTION _mlsql_{m.name}_type_error(st {STATE_TYPE}, {', '.join(args)})"
        f" RETURNS {STATE_TYPE}\nLANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\nBEGIN\n"
        f"  RAISE EXCEPTION USING MESSAGE = {pg_lit(before)} || pg_typeof({name})::text"
        f" || {pg_lit(after)};\nEND\n$f$;"
    )


def aggregate(m: Measure, create: str) -> list[str]:
    """``m``'s final functions, and per input type and form its step and aggregate; an input
    of another type fails with DuckDB's message naming PostgreSQL's type."""
    out = [_final(m, w, create) for w in (False, True)]
    names = (m.name, *m.aliases)
    if m.name == "fleiss_kappa":
        typed = {t: _ratings(m) for t in LABEL_LIST_TYPES}
        refused = {"anynonarray": NOT_A_LIST_MESSAGE, "anyarray": NOT_A_LABEL_MESSAGE}
    else:
        typed = {t: _outcomes(m, t) for t in OUTCOME_TYPES}
        refused = {t: A.FLAGS_MESSAGE for t in ("anynonarray", "anyarray")}
    for weighted in (False, True):
        weight = ["float8"] if weighted else []
        final = final_name(m.name, weighted)
        for list_type, body in typed.items():
            out.append(_step(m, create, list_type, weighted, body))
            signature = ", ".join([list_type, *weight])
            step = f"_mlsql_{m.name}_step"
            out += create_aggregates(create, names, signature, step, INIT, final, STATE_TYPE)
        for input_type, template in refused.items():
            out.append(_refusal(m, create, input_type, weighted, template))
            signature = ", ".join([input_type, *weight])
            step = f"_mlsql_{m.name}_type_error"
            out += create_aggregates(create, names, signature, step, INIT, final, STATE_TYPE)
    return out


def helpers(create: str) -> list[str]:
    """The agreement measures' state type."""
    fields = ", ".join(f"{n} {t}" for n, t in STATE_FIELDS)
    return [
        f"-- {STATE_TYPE}: the state of the agreement aggregates.\n"
        + create_type(STATE_TYPE, fields, create)
    ]
