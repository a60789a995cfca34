"""Checks the single-label, binary, rule, regression and score macros share, and their renderer.

The macros here validate parameters (same texts as
:mod:`mlsql._classification_params`) and inputs: binary inputs must be
boolean or 0/1, numeric inputs numbers, both label sides of one kind. Type
tests use ``typeof()``, which DuckDB folds to a constant when it binds the
query, so they cost nothing per row.

:func:`render` turns a registry measure of these families into its macro (and
one macro per alias), with each parameter wrapped in its check.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mlsql import _classification_params as CP
from mlsql import _label_types as LT
from mlsql import _params as P
from mlsql._duckdb.library import (
    NUMERIC_TYPES,
    Macro,
    Qualify,
    check_param,
    integer_range_case,
    sql_message,
)
from mlsql._duckdb.ops import SqlOps
from mlsql._duckdb.source_sql import (
    CHECKED,
    MISSING,
    PICKS,
    RENAMED,
    SOURCE_TEXT,
    checked_body_sql,
    missing_column_sql,
    picks_sql,
    renamed_body_sql,
    source_text_sql,
)
from mlsql._front.inputs import COST_VALUE_MESSAGE, LABEL_MESSAGE, REQUIRED_MESSAGE
from mlsql._front.inputs import REQUIRED as REQUIRED_WORDS
from mlsql._registry import Measure, Param
from mlsql._sqlexpr import Sql, lit

FILE = "classification_checks.sql"
DESCRIPTION = (
    "Checks shared by the single-label, binary, rule, regression and score macros: "
    "parameters, binary and numeric inputs, label kinds."
)
ORDER = (
    5  # before labels.sql, whose tables call _mlsql_check_by (DuckDB 1.4 binds a name at CREATE)
)
FAMILIES: tuple[str, ...] = ()

#: parameters that have no default (a macro parameter without ``:=``)
REQUIRED = frozenset({"positive", "label", "costs"})


def _kind(t: str) -> str:
    """SQL: the label kind of a type name (integer, text, float, decimal, boolean, null, itself)."""
    return f"""CASE WHEN regexp_full_match({t}, '(U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?)') THEN 'integer'
         WHEN {t} = 'VARCHAR' THEN 'text' WHEN {t} IN ('FLOAT', 'DOUBLE') THEN 'float'
         WHEN {t} LIKE 'DECIMAL%' THEN 'decimal' WHEN {t} = 'BOOLEAN' THEN 'boolean'
         WHEN {t} = '"NULL"' THEN 'null' ELSE {t} END"""


def _nested(t: str) -> str:
    """SQL: whether the type named ``t`` is a list, array, struct, map or union (no one label)."""
    return f"regexp_full_match({t}, '(STRUCT|MAP|UNION)\\(.*|.*\\[\\d*\\]')"


#: the types of two label columns that compare as they are (integers or numbers of any width)
SCALAR_PAIR_TYPES = ("VARCHAR", "HUGEINT", "UHUGEINT", "DOUBLE", "BOOLEAN", '"NULL"')


def _label_as(mismatch: str) -> list[Macro]:
    """``_mlsql_label_as(value, x, y, func)``: ``value`` (a label of y, predicted) where x
    (actual) and y compare as they are, else ``value`` as x's type after the check that
    their kinds agree (its error is ``mismatch``, of x and y).

    The scalar analogue of ``_mlsql_label_list_as``: DuckDB binds a macro's whole body
    before it runs, so a text column beside an integer one failed to bind (the classes'
    ``list_concat`` and map look-ups) before mlsql's check could raise. The overload is
    picked by x's and y's types (:data:`SCALAR_PAIR_TYPES`; they only pick, nothing is
    cast); any other pair takes the last one, whose value is of x's type.
    """
    doc = "value (a label of y), of a type that compares with x's ({})."
    typed = [
        Macro(
            FILE,
            "_mlsql_label_as",
            ("value", f"x {t}", f"y {t}", "func VARCHAR" if i == 0 else "func"),
            "value",
            doc.format(f"both {t}: as it is"),
            public=False,
        )
        for i, t in enumerate(SCALAR_PAIR_TYPES)
    ]
    other = (
        f"NOT ({_nested('typeof(x)')} OR {_nested('typeof(y)')}"
        f""" OR '"NULL"' IN (typeof(x), typeof(y)) OR {_kind("typeof(x)")} = {_kind("typeof(y)")})"""
    )
    fallback = Macro(
        FILE,
        "_mlsql_label_as",
        ("value", "x", "y", "func"),
        f"cast_to_type(CASE WHEN {other} THEN error({mismatch}) ELSE value END, x)",
        doc.format("other types: as x's type"),
        public=False,
    )
    return [*typed, fallback]


def _checks() -> list[Macro]:
    funcs = ", ".join(str(lit(f)) for f in CP.RANKING_AUC_FUNCS)
    binary_type = sql_message(
        CP.binary_type_message("{}", "{}", "{}"), "func", "name", "name", "typeof(x)"
    ) + (
        f" || CASE WHEN func IN ({funcs}) AND typeof(x) LIKE '%]'"
        f" THEN {lit(CP.RANKING_AUC_HINT)} ELSE '' END"
    )
    binary_value = sql_message(CP.binary_value_message("{}", "{}"), "func", "CAST(x AS VARCHAR)")
    not_finite = sql_message(
        CP.finite_value_message("{}", "{}", "{}"),
        "func",
        "name",
        f"CASE WHEN isnan(CAST(x AS DOUBLE)) THEN '{CP.NOT_FINITE[0]}' "
        f"WHEN CAST(x AS DOUBLE) > 0 THEN '{CP.NOT_FINITE[1]}' ELSE '{CP.NOT_FINITE[2]}' END",
    )
    number_type = sql_message(
        CP.number_type_message("{}", "{}", "{}"), "func", "name", "name", "typeof(x)"
    )
    mismatch = sql_message(
        "{} needs actual and predicted of the same label type (both text, both integers, ...). "
        "Got actual {} and predicted {}.",
        "func",
        "typeof(x)",
        "typeof(y)",
    )
    label_value = sql_message(
        LT.LABEL_VALUE_MESSAGE.format(param="{}", func="{}", type="{}", kind="{}", value="{}"),
        "param",
        "func",
        "typeof(x)",
        _kind("typeof(x)"),
        "CASE WHEN typeof(value) = 'VARCHAR' THEN chr(39) || value || chr(39) "
        "ELSE CAST(value AS VARCHAR) END",
    )

    def one_label(x: str, name: str) -> str:
        """The message of input ``x`` (SQL ``name``: its name) holding more than one label."""
        template = LABEL_MESSAGE.format(func="{}", name="{}", type="{}")
        return sql_message(template, "func", name, name, f"typeof({x})")

    outer, inner = "map_keys(costs)[1]", "map_keys(map_values(costs)[1])[1]"
    # a class parameter given as NULL: no class (Python's None is refused so too)
    what = " ".join(f"WHEN {lit(k)} THEN {lit(v)}" for k, v in REQUIRED_WORDS.items())
    needs = sql_message(
        REQUIRED_MESSAGE.format(func="{}", name="{}", what="{}"),
        "func",
        "param",
        f"CASE param {what} END",
    )
    not_a_cost = sql_message(COST_VALUE_MESSAGE.format(func="{}"), "func")

    def cost_key(key: str) -> str:
        return sql_message(
            LT.COST_KEY_MESSAGE.format(param="{}", func="{}", type="{}", kind="{}", value="{}"),
            "'costs'",
            "func",
            "typeof(x)",
            _kind("typeof(x)"),
            f"CASE WHEN typeof({key}) = 'VARCHAR' THEN chr(39) || {key} || chr(39) "
            f"ELSE CAST({key} AS VARCHAR) END",
        )

    def other_kind(key: str) -> str:
        kinds = (_kind("typeof(x)"), _kind(f"typeof({key})"))
        return f"('null' NOT IN ({kinds[0]}, {kinds[1]}) AND {kinds[0]} <> {kinds[1]})"

    bounds = integer_range_case("typeof(x)")
    label_range = sql_message(
        LT.LABEL_RANGE_MESSAGE.format(
            param="{}", func="{}", value="{}", type="{}", low="{}", high="{}"
        ),
        "param",
        "func",
        "CAST(value AS VARCHAR)",
        "typeof(x)",
        f"CAST(({bounds})[1] AS VARCHAR)",
        f"CAST(({bounds})[2] AS VARCHAR)",
    )
    return [
        Macro(
            FILE,
            "_mlsql_label_value",
            ("x", "name", "value", "param", "func"),
            f"""CASE WHEN {_nested("typeof(x)")} THEN error({one_label("x", "name")})
         WHEN value IS NULL THEN error({needs})
         WHEN '"NULL"' IN (typeof(x), typeof(value)) THEN value
         WHEN {_kind("typeof(x)")} <> {_kind("typeof(value)")} THEN error({label_value})
         WHEN {_kind("typeof(x)")} = 'integer'
              AND NOT (TRY_CAST(value AS HUGEINT) BETWEEN ({bounds})[1] AND ({bounds})[2])
         THEN error({label_range})
         ELSE value END""",
            "value (parameter param, one label), after checking that x (input name) holds one "
            "label per row, that value is of x's label kind and, for integers, within the range "
            "of x's type.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_cost_keys",
            ("x", "name", "costs", "func"),
            f"""CASE WHEN {_nested("typeof(x)")} THEN error({one_label("x", "name")})
         WHEN typeof(costs) = '"NULL"' THEN costs
         WHEN {other_kind(outer)} THEN error({cost_key(outer)})
         WHEN {other_kind(inner)} THEN error({cost_key(inner)})
         WHEN len(list_filter(map_values(costs), lambda m: m IS NULL
              OR len(list_filter(map_values(m),
                  lambda c: c IS NULL OR NOT isfinite(CAST(c AS DOUBLE)))) > 0)) > 0
         THEN error({not_a_cost})
         ELSE costs END""",
            "costs (a map actual -> predicted -> cost), after checking that x (input name) holds "
            "one label per row, that the costs' labels are of x's label kind and that each cost "
            "is a finite number.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_binary_flag",
            ("x", "name", "func"),
            f"""CASE WHEN NOT regexp_full_match(typeof(x), '(BOOLEAN|{NUMERIC_TYPES}|"NULL")')
         THEN error({binary_type})
         WHEN x IS NULL THEN NULL WHEN CAST(x AS DOUBLE) = 1 THEN true
         WHEN CAST(x AS DOUBLE) = 0 THEN false ELSE error({binary_value}) END""",
            "A boolean or 0/1 input as BOOLEAN (anything else is an error).",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_binary_type_first",
            ("x", "name", "func", "value"),
            f"""CASE WHEN NOT regexp_full_match(typeof(x), '(BOOLEAN|{NUMERIC_TYPES}|"NULL")')
         THEN error({binary_type}) ELSE value END""",
            "value, after checking that x (input name, an earlier argument than value's) is "
            "boolean or numeric: of two inputs of the wrong type, the first is named.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_number_type_first",
            ("x", "name", "func", "value"),
            f"""CASE WHEN NOT regexp_full_match(typeof(x), '({NUMERIC_TYPES}|"NULL")')
         THEN error({number_type}) ELSE value END""",
            "value, after checking that x (input name, an earlier argument than value's) is "
            "numeric: of two inputs of the wrong type, the first is named.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_number",
            ("x", "name", "func"),
            f"""CASE WHEN NOT regexp_full_match(typeof(x), '({NUMERIC_TYPES}|"NULL")')
         THEN error({number_type})
         WHEN x IS NULL OR isfinite(CAST(x AS DOUBLE)) THEN CAST(x AS DOUBLE)
         ELSE error({not_finite}) END""",
            "A numeric input as DOUBLE (other types, NaN and infinite values are an error).",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_same_kind",
            ("x", "y", "func"),
            f"""CASE WHEN {_nested("typeof(x)")} THEN error({one_label("x", "'actual'")})
         WHEN {_nested("typeof(y)")} THEN error({one_label("y", "'predicted'")})
         WHEN typeof(x) = typeof(y) OR '"NULL"' IN (typeof(x), typeof(y))
              OR {_kind("typeof(x)")} = {_kind("typeof(y)")} THEN x
         ELSE error({mismatch}) END""",
            "x (actual), after checking that x and y (predicted) hold one label per row, "
            "of one kind (integer widths may differ).",
            public=False,
        ),
        *_label_as(mismatch),
        Macro(
            FILE,
            "_mlsql_one_label",
            ("x", "name", "func"),
            f"""CASE WHEN {_nested("typeof(x)")} THEN error({one_label("x", "name")}) ELSE x END""",
            "x (input name), after checking that it holds one label per row (no list, struct "
            "or map).",
            public=False,
        ),
    ]


class _Hole:
    """A ``{}`` in a message template, whatever conversion (``!r``) the field asks for."""

    def __repr__(self) -> str:
        return "{}"

    __str__ = __repr__


def by_names(q: Qualify) -> str:
    """SQL of a table macro's ``"by"`` parameter (a column name or a list of them) as a list
    of names (NULL if not given, or not names: :func:`check_by` says so). Every reference to
    ``"by"`` in a table macro's body reads it through this; constant, so ``COLUMNS`` takes it."""
    return f'{q("_mlsql_by_names")}("by")'


def by_lowered(q: Qualify) -> str:
    """SQL: :func:`by_names` as DuckDB compares identifiers, lowercase (``[]`` if not given)."""
    return f'{q("_mlsql_by_lowered")}("by")'


def check_by(q: Qualify, func: str, outputs: Sequence[str]) -> str:
    """SQL of true, or of the error of a bad ``"by"`` of table macro ``func`` (SQL text) whose
    output columns are ``outputs``: not column names, or one named as an output column."""
    names = "[" + ", ".join(str(lit(c.lower())) for c in outputs) + "]::VARCHAR[]"
    return f'{q("_mlsql_check_by")}("by", {func}, {names})'


def _by_names(q: Qualify) -> list[Macro]:
    """``_mlsql_by_names(names)`` and ``_mlsql_check_by(names, func, outputs)``: one column
    name or a list of them (typed overloads), checked as the Python functions check them
    (:data:`mlsql._params.BY_MESSAGE`, :data:`mlsql._params.BY_REPEATED_MESSAGE`,
    :data:`mlsql._params.BY_OUTPUT_MESSAGE`)."""
    repr_ = q("_mlsql_repr")
    bad = sql_message(P.BY_MESSAGE.format(func="{}", by=_Hole()), "func", f"{repr_}(names)")

    def checked(names: str) -> str:
        clash = f"list_filter({names}, lambda b: list_contains(outputs, lower(b)))[1]"
        output = sql_message(
            P.BY_OUTPUT_MESSAGE.format(func="{}", name=_Hole()), "func", f"{repr_}({clash})"
        )
        lowered = f"list_transform({names}, lambda y: lower(y))"
        again = f"list_filter({names}, lambda b, i: list_position({lowered}, lower(b)) < i)[1]"
        repeated = sql_message(
            P.BY_REPEATED_MESSAGE.format(func="{}", name=_Hole()), "func", f"{repr_}({again})"
        )
        return f"""CASE WHEN len(list_filter({names}, lambda b: b IS NULL OR b = '')) > 0 THEN error({bad})
         WHEN {again} IS NOT NULL THEN error({repeated})
         WHEN {clash} IS NOT NULL THEN error({output})
         ELSE true END"""

    doc = "A table macro's by parameter (a column name or a list of them; NULL: none) as a list."
    check_doc = (
        "true, after checking a table macro's by parameter: column names (text), none of them "
        "one of outputs (lowercase)."
    )
    # one untyped macro, the kind read through JSON: DuckDB 1.4 binds a table macro's body when
    # it is created, its by (NULL) matching typed overloads of VARCHAR and VARCHAR[] alike
    as_json = "to_json(names)"
    listed = f"""CASE WHEN names IS NULL THEN NULL::VARCHAR[]
         WHEN json_type({as_json}) = 'ARRAY' THEN from_json({as_json}, '["VARCHAR"]')
         WHEN json_type({as_json}) = 'VARCHAR' THEN [json_extract_string({as_json}, '$')]
         END"""
    names = f"{q('_mlsql_by_names')}(names)"
    return [
        Macro(FILE, "_mlsql_by_names", ("names",), listed, doc, public=False),
        Macro(
            FILE,
            "_mlsql_by_lowered",
            ("names",),
            f"list_transform(coalesce({names}, []), lambda b: lower(b))",
            "_mlsql_by_names(names), lowercase as DuckDB compares identifiers ([] if none).",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_check_by",
            ("names", "func", "outputs"),
            f"""CASE WHEN names IS NULL THEN true
         WHEN {names} IS NULL THEN error({bad})
         ELSE ({checked(names)}) END""",
            check_doc,
            public=False,
        ),
    ]


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """The shared check macros."""
    source = Macro(
        FILE,
        SOURCE_TEXT,
        ("source",),
        source_text_sql(),
        "The query text that reads a table macro's source: a query as it is, a name or a "
        "file path through query_table.",
        public=False,
    )
    picks = Macro(
        FILE,
        PICKS,
        ("c", "name", "stand_in"),
        picks_sql(),
        "Whether column c of a table macro's source is the one its parameter names (any case), "
        "or the stand-in column.",
        public=False,
    )
    missing = Macro(
        FILE,
        MISSING,
        ("source", "wanted", "roles", "func"),
        missing_column_sql(qualify),
        "NULL, or the error naming the first of the wanted column names (of roles) that a "
        "table macro's source lacks.",
        public=False,
    )
    renamed = Macro(
        FILE,
        RENAMED,
        ("source",),
        renamed_body_sql(qualify),
        "A table macro's source with its columns named __mlsql_... renamed __mlsql_user___mlsql_...",
        public=False,
        table=True,
    )
    checked = Macro(
        FILE,
        CHECKED,
        ("source", "wanted", "roles", "by_names", "func", "by_ok"),
        checked_body_sql(qualify),
        "A table macro's source renamed, with NULL, or the error naming the first of the "
        "wanted (of roles) or by_names columns it lacks, checked once when by_ok.",
        public=False,
        table=True,
    )
    return [*_checks(), *_by_names(qualify), source, picks, missing, renamed, checked]


# ------------------------------------------------------------------ rendering
def let(value: Any, name: str, body: Any) -> Sql:
    """``body`` with ``name`` bound to ``value``: computed, and bound by DuckDB, once.

    Macro parameters are substituted as text, so a formula naming a statistic
    ten times would bind its expression ten times; a lambda variable does not.
    """
    return Sql(f"list_transform([{value}], lambda {name}: {body})[1]")


def param_sql(p: Param) -> str:
    """A macro parameter: ``name`` when required, else ``name := default``."""
    return p.name if p.name in REQUIRED else f"{p.name} := {lit(p.default)}"


def signature(m: Measure, weighted: bool = False) -> tuple[str, ...]:
    """The macro's parameters: inputs, then parameters with defaults.

    ``weighted``: the overload of a weighted measure, with ``sample_weight``
    after the inputs (a parameter without default: passed by name or position).
    """
    weight = ("sample_weight",) if weighted else ()
    return (*m.inputs, *weight, *(param_sql(p) for p in m.params))


def weight(func: str, q: Qualify) -> Sql:
    """The checked weight of a row of macro ``func`` (its ``sample_weight`` parameter)."""
    return Sql(f"{q('_mlsql_weight')}(sample_weight, {lit(func)})")


def checked(m: Measure, q: Qualify) -> dict[str, Sql]:
    """Each parameter of ``m`` as SQL, wrapped in its check."""
    return {p.name: check_param(p, q, m.name) for p in m.params}


def guard_zero_division(body: Any, params: dict[str, Sql]) -> Sql:
    """``body`` under the checked zero_division: the check runs even if no ratio is undefined."""
    if "zero_division" not in params:
        return Sql(str(body))
    return Sql(f"CASE WHEN {params['zero_division']} IS NULL THEN NULL ELSE {body} END")


def aliases(m: Measure, file: str, q: Qualify) -> list[Macro]:
    """One macro per alias of ``m``, calling it (and its weighted overload, if ``m`` has one)."""
    params = [p.name if p.name in REQUIRED else f"{p.name} := {p.name}" for p in m.params]
    out = []
    for alias in m.aliases:
        for weighted in (False, True) if m.weighted else (False,):
            args = [*m.inputs, *(["sample_weight"] if weighted else []), *params]
            body = f"{q(m.name)}({', '.join(args)})"
            out.append(Macro(file, alias, signature(m, weighted), body, f"Alias of {m.name}."))
    return out


def render(
    m: Measure,
    q: Qualify,
    ops: SqlOps,
    file: str,
    stats: Any,
    *,
    body: Callable[..., Any] | None = None,
    weighted: Any = None,
) -> list[Macro]:
    """The macro of registry measure ``m`` over ``stats`` (and its aliases).

    A weighted measure gets a second overload taking ``sample_weight``, over
    ``weighted`` (the statistics with each row weighted, or with ``body`` the
    weighted body): an unweighted call runs exactly the macro it ran before.
    """
    params = checked(m, q)
    value = m.build(ops, stats, **params) if body is None else body(params)
    out = [Macro(file, m.name, signature(m), str(guard_zero_division(value, params)), m.summary)]
    if m.weighted:
        heavy = m.build(ops, weighted, **params) if body is None else weighted(params)
        text = str(guard_zero_division(heavy, params))
        out.append(Macro(file, m.name, signature(m, True), text, m.summary))
    return [*out, *aliases(m, file, q)]
