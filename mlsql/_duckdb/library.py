"""The DuckDB macro library, generated from the registry.

:func:`macros` returns every macro of the library, grouped by the ``sql/``
file it belongs to; :func:`render` writes them as SQL. The committed files in
``sql/`` are ``render(qualify=identity)``; ``tests/test_sql_library.py`` fails
when they are stale (regenerate with ``python -m mlsql._duckdb.generate``).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

from mlsql import _classification_params as CP
from mlsql import _label_types as LT
from mlsql import _params as P
from mlsql import _weights as W
from mlsql._duckdb import native as _native
from mlsql._duckdb.builtins import BUILTIN_MACROS, qualify_builtins
from mlsql._duckdb.ops import IN_ORDER, ORDERED, FixedOrderOps, SqlOps, aggregating, stored
from mlsql._formulas import FORMULAS, Counts, RowStats, formula_params
from mlsql._registry import REGISTRY, Measure, Param, measures
from mlsql._sqlexpr import Sql, call, expand_calls, lit
from mlsql._weights import SAMPLE_WEIGHT, WeightedOps
from mlsql.measures.multilabel import COUNTS_FIELDS, CountsFields, LabelLists, hivemall_f

Qualify = Callable[[str], str]


def unqualified(name: str) -> str:
    """The :data:`Qualify` that leaves names as they are (a query's, not a stored library's).

    Examples
    --------
    >>> unqualified("_mlsql_zero_division")
    '_mlsql_zero_division'
    """
    return name


#: the sql/ files, in loading order, with what each holds
FILES = {
    "internal.sql": "Helpers the public macros share: zero division, parameter checks, label counts.",
    "formulas.sql": "Every formula, once: ratios with zero division, F-beta, averages, shares.",
    "sets.sql": "Set helpers and per-row counts and ratios over two label lists.",
    "micro.sql": "Aggregates: micro and samples averages, subset accuracy, Hamming loss.",
    "counts.sql": "Mergeable counts: store multilabel_counts, combine, score later.",
    "hivemall.sql": "Hivemall's fmeasure: option string, arrays, int and boolean binary input.",
}


@dataclass(frozen=True)
class Macro:
    """One DuckDB macro: its file, name, parameters (with defaults) and body."""

    file: str
    name: str
    params: tuple[str, ...]
    body: str
    doc: str
    public: bool = True
    table: bool = False


def sql_message(template: str, *exprs: str) -> str:
    """A SQL string expression for ``error()``: ``template`` with ``{}`` filled by SQL ``exprs``."""
    parts = template.replace("'", "''").split("{}")
    out = "'" + parts[0] + "'"
    for expr, part in zip(exprs, parts[1:], strict=True):
        out += f" || {expr} || '{part}'"
    return out


def _param_sql(p: Param) -> str:
    return p.name if p.default is None else f"{p.name} := {lit(p.default)}"


def _signature(m: Measure) -> tuple[str, ...]:
    return (*m.inputs, *(_param_sql(p) for p in m.params))


def _checked_params(m: Measure, q: Qualify) -> dict[str, Sql]:
    """The macro's parameters as SQL, each wrapped in its runtime check."""
    return {p.name: check_param(p, q, m.name) for p in m.params}


def row_stats(q: Qualify, actual: str = "actual", predicted: str = "predicted") -> RowStats:
    """Per-row statistics as calls of the library's internal macros.

    All three take (actual, predicted) in that order, so that where the native
    extension computes them (:func:`macros` with ``native=True``) the three are
    one call DuckDB evaluates once per row.
    """
    a, p = Sql(actual), Sql(predicted)
    return RowStats(
        tp=call(q("_mlsql_tp"), a, p),
        n_actual=call(q("_mlsql_n_actual"), a, p),
        n_predicted=call(q("_mlsql_n_predicted"), a, p),
    )


def _formulas(ops: SqlOps) -> list[Macro]:
    """One macro per formula: ``_mlsql_fbeta(tp, fp, fn, beta, zero_division)`` and so on;
    a formula that aggregates also weighted, ``_mlsql_average_by_weight(per_item,
    zero_division, sample_weight)`` (:class:`mlsql._weights.WeightedOps`), and summed in a
    fixed order, ``_mlsql_average_in_order(per_item, zero_division)``
    (:class:`mlsql._duckdb.ops.FixedOrderOps`), after the sum and the mean in order that
    these call."""
    out = [
        Macro(
            "formulas.sql",
            macro,
            ("x",),
            f"{aggregate}(x ORDER BY x)",
            f"{aggregate}(x) over the values in order (the same on every run).",
            public=False,
        )
        for aggregate, macro in ORDERED.items()
    ]
    for name, fn in FORMULAS.items():
        params = formula_params(name)
        args = [Sql(p) for p in params]
        if "tp" in params:
            i = params.index("tp")
            args[i : i + 3] = [Counts(*args[i : i + 3])]
        doc = (fn.raw.__doc__ or "").strip().splitlines()[0]
        out.append(
            Macro(
                "formulas.sql",
                f"_mlsql_{name}",
                tuple(params),
                str(fn.raw(ops, *args)),
                doc,
                public=False,
            )
        )
        if aggregating(name):
            out += [
                Macro(
                    "formulas.sql",
                    f"_mlsql_{name}_by_weight",
                    (*params, SAMPLE_WEIGHT),
                    str(fn.raw(WeightedOps(ops, Sql(SAMPLE_WEIGHT)), *args)),
                    f"{doc.rstrip('.')}, each row weighted by sample_weight.",
                    public=False,
                ),
                Macro(
                    "formulas.sql",
                    f"_mlsql_{name}{IN_ORDER}",
                    tuple(params),
                    str(fn.raw(FixedOrderOps(ops.qualify), *args)),
                    f"{doc.rstrip('.')}, summed in a fixed order (the same on every run).",
                    public=False,
                ),
            ]
    return out


def check_macro(p: Param) -> str:
    """The name of the DuckDB macro that checks parameter ``p``: ``_mlsql_check_<key>``."""
    return f"_mlsql_check_{p.check_key}"


def check_param(p: Param, q: Qualify, func: str, value: Sql | None = None) -> Sql:
    """Parameter ``p`` of macro ``func`` as SQL (or the SQL ``value`` given for it), wrapped
    in its check (as is without one)."""
    given = Sql(p.name) if value is None else value
    if p.constraint is None:
        return given
    return call(q(check_macro(p)), given, func)


def _param_checks(q: Qualify) -> list[Macro]:
    """One check macro per declared parameter (:data:`mlsql._params.PARAMS`), from its constraint."""
    return [
        Macro(
            "internal.sql",
            check_macro(p),
            ("x", "func"),
            P.duckdb_check(p, q("_mlsql_shown")),
            f"Validate {p.name}: {p.constraint.rule()}.",
            public=False,
        )
        for p in P.PARAMS.values()
    ]


#: the DuckDB types a number-typed input may have (``typeof``), as a regular expression
NUMERIC_TYPES = (
    "TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT"
    "|FLOAT|DOUBLE|DECIMAL.*"
)


def _weight_check() -> Macro:
    """``_mlsql_weight(w, func)``: a row's ``sample_weight`` as DOUBLE, checked (in
    internal.sql: every weighted macro, typed overloads included, reads it)."""
    weight_type = sql_message(
        CP.number_type_message("{}", SAMPLE_WEIGHT, "{}"), "func", "typeof(w)"
    )
    nan, inf, minus_inf, negative = P.SAMPLE_WEIGHT_GOT
    bad_weight = sql_message(
        P.sample_weight_message("{}", "{}"),
        "func",
        f"CASE WHEN isnan(TRY_CAST(w AS DOUBLE)) THEN '{nan}' "
        f"WHEN TRY_CAST(w AS DOUBLE) = 'inf'::DOUBLE THEN '{inf}' "
        f"WHEN TRY_CAST(w AS DOUBLE) = '-inf'::DOUBLE THEN '{minus_inf}' ELSE '{negative}' END",
    )
    return Macro(
        "internal.sql",
        "_mlsql_weight",
        ("w", "func"),
        f"""CASE WHEN NOT regexp_full_match(typeof(w), '({NUMERIC_TYPES}|"NULL")')
         THEN error({weight_type})
         WHEN w IS NULL THEN NULL
         WHEN isfinite(TRY_CAST(w AS DOUBLE)) AND TRY_CAST(w AS DOUBLE) >= 0 THEN TRY_CAST(w AS DOUBLE)
         ELSE error({bad_weight}) END""",
        "A row's sample_weight as DOUBLE (NULL stays NULL; NaN, infinite, negative: an error).",
        public=False,
    )


def _internal(q: Qualify) -> list[Macro]:
    return [
        _weight_check(),
        Macro(
            "internal.sql",
            "_mlsql_shown",
            ("x",),
            P.DUCKDB_SHOWN,
            "A value as mlsql's messages show it: 'text', None, True, 2.5.",
            public=False,
        ),
        *_param_checks(q),
        Macro(
            "internal.sql",
            "_mlsql_undefined",
            ("zero_division", "nothing_to_score"),
            "CASE zero_division\n"
            "         WHEN '0' THEN 0.0 WHEN '1' THEN 1.0\n"
            "         WHEN 'nan' THEN 'nan'::DOUBLE\n"
            "         WHEN 'diagnose' THEN CASE WHEN nothing_to_score THEN 1.0 ELSE 0.0 END\n"
            "         ELSE NULL END",
            "The value of an undefined ratio under a checked zero_division ('ignore': NULL).",
            public=False,
        ),
        *_label_type_checks(),
    ]


#: a list type whose elements are integers of any width, signed or unsigned, or text (ENUM too)
_INTEGER_LIST = r"U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?\[\d*\]"
#: DuckDB's integer types: (bits, signed)
INTEGER_TYPES = {
    "TINYINT": (8, True),
    "SMALLINT": (16, True),
    "INTEGER": (32, True),
    "BIGINT": (64, True),
    "HUGEINT": (128, True),
    "UTINYINT": (8, False),
    "USMALLINT": (16, False),
    "UINTEGER": (32, False),
    "UBIGINT": (64, False),
    "UHUGEINT": (128, False),
}


def integer_bounds(type_name: str) -> tuple[int, int] | None:
    """The range of DuckDB integer type ``type_name`` (None for 128-bit and other types:
    a 128-bit type holds every integer a ``labels=`` list can hold, as its cast says).

    Examples
    --------
    >>> integer_bounds("UTINYINT"), integer_bounds("VARCHAR"), integer_bounds("HUGEINT")
    ((0, 255), None, None)
    """
    bits, signed = INTEGER_TYPES.get(type_name, (128, True))
    return None if bits == 128 else LT.integer_bounds(bits, signed)


def integer_range_case(element: str) -> str:
    """SQL: ``[low, high]`` (HUGEINT) of the integer type named by SQL ``element``, else NULL."""
    cases = "".join(
        f" WHEN '{name}' THEN [{b[0]}, {b[1]}]::HUGEINT[]"
        for name in INTEGER_TYPES
        if (b := integer_bounds(name)) is not None
    )
    return f"CASE {element}{cases} END"


_TEXT_LIST = r"(VARCHAR|ENUM\(.*\))\[\d*\]"


def list_kind(type_name: str) -> str:
    """SQL: the label kind (:mod:`mlsql._label_types`) of a list type's name: 'integer',
    'text', 'boolean' (the single-label classes' third kind), 'null' (an all-NULL input),
    else the type itself (no label)."""
    return (
        f"CASE WHEN regexp_full_match({type_name}, '{_INTEGER_LIST}') THEN '{LT.INTEGER}'\n"
        f"         WHEN regexp_full_match({type_name}, '{_TEXT_LIST}') THEN '{LT.TEXT}'\n"
        f"         WHEN {type_name} = 'BOOLEAN[]' THEN '{LT.BOOLEAN}'\n"
        f"         WHEN {type_name} = '\"NULL\"' THEN '{LT.NULL}' ELSE {type_name} END"
    )


#: the types of two label lists that compare as they are: both text (ENUM too), both integers
#: of any width (a signed and an unsigned 128-bit one aside), or both the NULL literal
PAIR_TYPES = ("VARCHAR[]", "HUGEINT[]", "UHUGEINT[]", '"NULL"')


def _label_lists_as(ok: str, error: str) -> list[Macro]:
    """``_mlsql_label_list_as(x, actual, predicted, target, func, left_name, right_name)``:
    ``x`` (one of the lists ``actual`` and ``predicted``) when the two compare as they are,
    else ``x`` as ``target``'s type after the check of ``_mlsql_checked_label_lists``.

    DuckDB binds a macro's whole body before it runs: a check that raises mlsql's message
    at run time comes too late where the lists cannot bind together (text beside integers
    in ``list_contains``, a text column in a lambda), which failed with a Binder Error. The
    overload is picked by the two lists' types (:data:`PAIR_TYPES`; ``actual`` and
    ``predicted`` only pick, the body does not read them, so nothing is cast); any other
    pair takes the last overload, whose value is of ``target``'s type whatever the inputs:
    the check's error, or (a signed and an unsigned 128-bit integer list) ``x`` cast
    through text.
    """
    doc = "x, checked to be a list of labels of predicted's kind ({})."
    rest = ("target", "func", "left_name", "right_name")
    # ``func VARCHAR`` in the first: when DuckDB binds a call whose arguments' types it does
    # not know yet (while it creates a macro calling this one), that overload costs the
    # least, where the typed pairs would tie
    typed = [
        Macro(
            "internal.sql",
            "_mlsql_label_list_as",
            (
                "x",
                f"actual {t}",
                f"predicted {t}",
                "target",
                "func VARCHAR" if i == 0 else "func",
                *rest[2:],
            ),
            "x",
            doc.format(f"both {t}: as it is"),
            public=False,
        )
        for i, t in enumerate(PAIR_TYPES)
    ]
    fallback = Macro(
        "internal.sql",
        "_mlsql_label_list_as",
        ("x", "actual", "predicted", *rest),
        f"cast_to_type(CASE WHEN {ok}\n         THEN CAST(x AS VARCHAR) ELSE {error} END, target)",
        doc.format("other types: as target's type"),
        public=False,
    )
    return [*typed, fallback]


def _label_type_checks() -> list[Macro]:
    """The label type rule of :mod:`mlsql._label_types` as macros (``typeof`` folds when bound)."""
    kind_a, kind_p = list_kind("typeof(actual)"), list_kind("typeof(predicted)")
    labels = ", ".join(f"'{k}'" for k in (*LT.LABEL_KINDS, LT.NULL))

    def not_a_label(side: str, name: str) -> str:
        """The message of input ``side`` holding no labels: a list of others, or no list."""
        holes = {"func": "{}", "name": "{}", "type": "{}"}
        of_others = sql_message(
            LT.NOT_A_LABEL_MESSAGE.format(**holes), "func", name, f"typeof({side})"
        )
        no_list = sql_message(
            LT.NOT_A_LIST_MESSAGE.format(**holes), "func", name, name, f"typeof({side})"
        )
        return f"CASE WHEN typeof({side}) LIKE '%]' THEN {of_others} ELSE {no_list} END"

    mismatch = sql_message(
        LT.MISMATCH_MESSAGE.format(
            func="{}", left="{}", right="{}", left_type="{}", right_type="{}"
        ),
        "func",
        "left_name",
        "right_name",
        "left_name",
        "typeof(actual)",
        "right_name",
        "typeof(predicted)",
    )
    error = (
        f"CASE WHEN ({kind_a}) NOT IN ({labels}) THEN error({not_a_label('actual', 'left_name')})\n"
        f"         WHEN ({kind_p}) NOT IN ({labels}) "
        f"THEN error({not_a_label('predicted', 'right_name')})\n"
        f"         ELSE error({mismatch}) END"
    )
    ok = (
        f"({kind_a}) IN ({labels}) AND ({kind_p}) IN ({labels})\n"
        f"          AND ({kind_a} = {kind_p} OR '{LT.NULL}' IN ({kind_a}, {kind_p}))"
    )
    example_kind = list_kind("typeof(example)")
    element_type = "regexp_extract(typeof(example), '^(.*)\\[\\d*\\]$', 1)"
    # element: the labels are classes of single-label columns, so the messages name the
    # element type (TINYINT), not the list's (TINYINT[])
    shown = f"CASE WHEN element THEN {element_type} ELSE typeof(example) END"
    universe = sql_message(
        LT.UNIVERSE_MESSAGE.format(func="{}", type="{}", kind="{}", labels="{}"),
        "func",
        shown,
        example_kind,
        "'[' || array_to_string(list_transform(labels, lambda x: CASE WHEN typeof(x) = 'VARCHAR' "
        "THEN chr(39) || CAST(x AS VARCHAR) || chr(39) ELSE CAST(x AS VARCHAR) END), ', ') || ']'",
    )
    bounds = integer_range_case(element_type)
    outside = (
        f"list_filter(labels, lambda x: NOT (TRY_CAST(x AS HUGEINT) BETWEEN ({bounds})[1] "
        f"AND ({bounds})[2]))[1]"
    )
    out_of_range = sql_message(
        LT.UNIVERSE_RANGE_MESSAGE.format(func="{}", value="{}", type="{}", low="{}", high="{}"),
        "func",
        f"CAST({outside} AS VARCHAR)",
        shown,
        f"CAST(({bounds})[1] AS VARCHAR)",
        f"CAST(({bounds})[2] AS VARCHAR)",
    )
    return [
        Macro(
            "internal.sql",
            "_mlsql_label_type_error",
            ("actual", "predicted", "func", "left_name", "right_name"),
            error,
            "The error for lists that hold no labels (floats, booleans, ...) or two kinds.",
            public=False,
        ),
        *_label_lists_as(ok, error),
        Macro(
            "internal.sql",
            "_mlsql_checked_label_lists",
            ("actual", "predicted", "func", "left_name", "right_name"),
            f"CASE WHEN {ok}\n         THEN actual ELSE {error} END",
            "actual, after checking that both lists hold labels of one kind (left_name, "
            "right_name: their names in messages).",
            public=False,
        ),
        Macro(
            "internal.sql",
            "_mlsql_typed_universe",
            ("labels", "example", "func", "element := false"),
            f"cast_to_type(CASE WHEN NOT (labels IS NULL OR '{LT.NULL}' IN ({example_kind}, "
            f"{list_kind('typeof(labels)')})\n"
            f"          OR {example_kind} = {list_kind('typeof(labels)')}) THEN error({universe})\n"
            f"         WHEN {outside} IS NOT NULL THEN error({out_of_range})\n"
            f"         ELSE labels END, example)",
            "A labels= universe as a list of example's type, after checking its kind and, "
            "for integers, their range (element: name example's element type in messages).",
            public=False,
        ),
    ]


def _sets(ops: SqlOps) -> list[Macro]:
    """The set helpers, from their registry formulas: NULL where either list is NULL."""
    lists = LabelLists(Sql("actual"), Sql("predicted"))
    guard = "CASE WHEN actual IS NULL OR predicted IS NULL THEN NULL ELSE {} END"
    return [
        Macro(
            "sets.sql",
            m.name,
            ("actual", "predicted"),
            guard.format(m.build(ops, lists)),  # type: ignore[misc]
            f"{m.summary} Distinct and sorted, no NULLs.",
        )
        for m in measures(family="multilabel", kind="set")
    ]


#: the native extension's per-row function (native/duckdb_ext.c)
NATIVE_COUNTS = _native.COUNTS
_DISTINCT = "len(list_filter({x}, lambda x, i: x IS NOT NULL AND list_position({x}, x) = i))"


def _row_stat_macros(native: bool = False) -> list[Macro]:
    """The per-row |A ∩ P|, |A| and |P| the aggregates are built on.

    Portable: list functions (the text in ``sql/``). ``native``: fields of one
    call of the native extension's ``mlsql_native_counts``, which gives the same
    numbers (NULL when either list is NULL); DuckDB computes that call once per
    row however many of the three a measure uses.
    """
    null_guard = "CASE WHEN actual IS NULL OR predicted IS NULL THEN NULL\n         ELSE {} END"
    portable = {
        "_mlsql_tp": null_guard.format(
            "len(list_filter(actual, lambda x, i: list_contains(predicted, x)\n"
            "                                                AND list_position(actual, x) = i))"
        ),
        "_mlsql_n_actual": null_guard.format(_DISTINCT.format(x="actual")),
        "_mlsql_n_predicted": null_guard.format(_DISTINCT.format(x="predicted")),
    }
    docs = {
        "_mlsql_tp": "|A ∩ P|: distinct true labels that were predicted (NULL elements ignored).",
        "_mlsql_n_actual": "|A|: distinct non-NULL true labels; NULL when either list is NULL.",
        "_mlsql_n_predicted": "|P|: distinct non-NULL predicted labels; NULL when either list is NULL.",
    }
    fields = {"_mlsql_tp": "tp", "_mlsql_n_actual": "n_actual", "_mlsql_n_predicted": "n_predicted"}
    if not native:
        return [
            Macro("internal.sql", name, ("actual", "predicted"), body, docs[name], public=False)
            for name, body in portable.items()
        ]
    # 128-bit integer lists (and unsigned lists, which DuckDB widens to them) stay portable:
    # the extension counts text and integers of up to 64 bits. The lists it counts get typed
    # overloads too: DuckDB prefers a typed overload reached by an implicit cast to an
    # untyped one, so without them BIGINT[] lists were cast to HUGEINT[] and stayed portable.
    out = []
    for name, body in portable.items():
        native_body = f"struct_extract({NATIVE_COUNTS}(actual, predicted), '{fields[name]}')"
        for t in WIDE_INTEGER_LISTS:
            params = (f"actual {t}", f"predicted {t}")
            out.append(Macro("internal.sql", name, params, body, docs[name], public=False))
        for t in NATIVE_LISTS:
            params = (f"actual {t}", f"predicted {t}")
            out.append(Macro("internal.sql", name, params, native_body, docs[name], public=False))
        out.append(
            Macro(
                "internal.sql", name, ("actual", "predicted"), native_body, docs[name], public=False
            )
        )
    return out


#: the list types the native extension does not count (their macros stay portable)
WIDE_INTEGER_LISTS = ("HUGEINT[]", "UHUGEINT[]")
#: the list types it counts, each given its own overload (see :func:`_row_stat_macros`)
NATIVE_LISTS = (
    "VARCHAR[]",
    *(f"{t}[]" for t in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT")),
    *(f"U{t}[]" for t in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT")),
)


#: the label list types the public macros accept; anything else meets the fallback's error
LABEL_LIST_TYPES = ("VARCHAR[]", "INTEGER[]", "BIGINT[]", "HUGEINT[]", "UHUGEINT[]")


def typed(
    m: Macro,
    q: Qualify,
    types: tuple[str, ...] = LABEL_LIST_TYPES,
    func: str | Sql | None = None,
) -> list[Macro]:
    """``m`` as overloads on the label list types, plus a fallback naming both types (and
    ``func``, by default ``m``'s name, as the function that takes them).

    DuckDB picks the overload by the argument types, so a text list against an
    integer list, or a list of no labels (floats, booleans, nested lists, ...),
    meets mlsql's own error, and integer widths may differ (INTEGER[] widens to
    BIGINT[], unsigned ones to HUGEINT[]; UHUGEINT[] pairs with unsigned lists only).
    """
    rest = m.params[2:]
    out = [replace(m, params=(f"actual {t}", f"predicted {t}", *rest)) for t in types]
    named = m.name if func is None else func
    error = call(
        q("_mlsql_label_type_error"), Sql("actual"), Sql("predicted"), named, "actual", "predicted"
    )
    return [*out, replace(m, body=str(error))]


def _label_pair_check(q: Qualify) -> list[Macro]:
    """``_mlsql_label_pair_check(actual, predicted, func)``: NULL where the label-list
    macros (:func:`typed`) take the two lists' types, else their error naming ``func``.
    ``mlsql.evaluate``, which writes the label-set formulas into its query
    (:mod:`mlsql._duckdb.evaluate_sets`), checks its columns with it first."""
    check = Macro(
        "internal.sql",
        "_mlsql_label_pair_check",
        ("actual", "predicted", "func"),
        "NULL::BOOLEAN",
        "NULL where the label-list macros take actual's and predicted's types, else their error.",
        public=False,
    )
    return typed(check, q, func=Sql("func"))


def _from_registry(
    m: Measure,
    q: Qualify,
    ops: SqlOps,
    file: str,
    stats: Any = None,
    build: Callable[..., Any] | None = None,
) -> Macro:
    """A registry measure as a macro; ``stats`` replaces the multi-label row statistics,
    ``build`` the measure's formula (:func:`by_weight`)."""
    params = _checked_params(m, q)
    if m.kind == "from_counts":
        fields = (call("struct_extract", Sql("counts"), f) for f in COUNTS_FIELDS)
        stats = CountsFields(*map(stored, fields))
    body = registry_body(m, ops, row_stats(q) if stats is None else stats, params, build)
    return Macro(file, m.name, _signature(m), str(body), m.summary)


def registry_body(
    m: Measure,
    ops: SqlOps,
    stats: Any,
    params: dict[str, Sql],
    build: Callable[..., Any] | None = None,
) -> Sql:
    """Registry measure ``m``'s formula (or ``build``) over ``stats``, its parameters the SQL
    ``params`` (check macros in the library's macros; checked constants where
    ``mlsql.evaluate`` writes the formula into its query)."""
    body = (m.build if build is None else build)(ops, stats, **params)
    if "zero_division" in params:  # check it even when no ratio turns out undefined
        body = Sql(f"CASE WHEN {params['zero_division']} IS NULL THEN NULL ELSE {body} END")
    return Sql(str(body))


def by_weight(
    formula: Callable[..., Any], func: str | Sql, weight: str = SAMPLE_WEIGHT
) -> Callable[..., Any]:
    """``formula`` with every row weighted by the SQL ``weight`` (the weighted macros'
    ``sample_weight`` parameter) as a DOUBLE (:func:`mlsql._weights.weighted`; TRY_CAST: a
    weight of no number type is left to the check's message, not a cast error), each row's
    weight checked once by ``_mlsql_weight`` in messages of ``func``.

    The formula names the weight many times; a macro's argument is expanded at each
    mention, so the check (a CASE over the type and the value) runs in one aggregate of
    its own (about 1.7x less CPU for micro_f1 than a check at every mention); a
    counts struct has its first field guarded.
    """

    def run(ops: Any, *args: Any, **params: Any) -> Any:
        checked = call(ops.qualify("_mlsql_weight"), Sql(weight), lit(func))
        out = W.weighted(formula, Sql(f"TRY_CAST({weight} AS DOUBLE)"), ops, *args, **params)

        def guarded(x: Any) -> Sql:
            return Sql(f"CASE WHEN bool_and({checked} >= 0) = false THEN NULL ELSE {x} END")

        if isinstance(out, dict):
            first = next(iter(out))
            return {**out, first: guarded(out[first])}
        return guarded(out)

    return run


def weighted(m: Macro) -> Macro:
    """The ``sample_weight`` parameter inserted after a macro's inputs (and any parameter
    without a default): ``micro_f1(actual, predicted, sample_weight := w)``."""
    n = sum(1 for p in m.params if ":=" not in p)
    return replace(m, params=(*m.params[:n], SAMPLE_WEIGHT, *m.params[n:]))


def _weighted_from_registry(
    m: Measure, q: Qualify, ops: SqlOps, file: str, stats: Any = None
) -> Macro:
    """The weighted overload of a registry measure's macro (:func:`_from_registry`)."""
    return weighted(_from_registry(m, q, ops, file, stats, by_weight(m.build, m.name)))


def _counts(q: Qualify, ops: SqlOps) -> list[Macro]:
    """``multilabel_counts`` (and its weighted overload) and ``merge_counts``: struct macros
    of their registry formulas."""
    counts, merge = REGISTRY["multilabel_counts"], REGISTRY["merge_counts"]
    stored = CountsFields(*(call("struct_extract", Sql("counts"), f) for f in COUNTS_FIELDS))

    def packed(name: str, params: tuple[str, ...], fields: dict[str, Any], doc: str) -> Macro:
        pack = ",\n    ".join(f"{field} := {expr}" for field, expr in fields.items())
        return Macro("counts.sql", name, params, f"struct_pack(\n    {pack})", doc)

    lists, doc = ("actual", "predicted"), counts.summary
    heavy = by_weight(counts.build, counts.name)(ops, row_stats(q))  # type: ignore[arg-type]
    return [
        packed(counts.name, lists, counts.build(ops, row_stats(q)), doc),  # type: ignore[misc]
        weighted(packed(counts.name, lists, heavy, doc)),
        packed(merge.name, ("counts",), merge.build(ops, stored), merge.summary),  # type: ignore[misc]
    ]


def _hivemall(q: Qualify, ops: SqlOps) -> list[Macro]:
    """Hivemall's fmeasure: overloads by input kind, Hivemall's options and errors."""
    f = "hivemall.sql"
    beta_text = f"regexp_extract(coalesce(options, ''), '{P.BETA_PATTERN}', 1)"
    average_text = f"regexp_extract(coalesce(options, ''), '{P.AVERAGE_PATTERN}', 1)"
    bad_options = sql_message(P.OPTIONS_MESSAGE.format(got="'{}'"), "options")
    bad_average = sql_message(P.AVERAGE_MESSAGE.format(got="'{}'"), average_text)
    bad_beta = sql_message(P.beta_message("fmeasure", "'{}'"), beta_text)
    bad_int = sql_message(P.INT_LABEL_MESSAGE.format(got="{}"), "CAST(x AS VARCHAR)")
    bad_types = sql_message(
        P.HIVEMALL_TYPE_MESSAGE.format(actual="{}", predicted="{}"),
        "typeof(actual)",
        "typeof(predicted)",
    )
    beta = call(q("_mlsql_hivemall_beta"), Sql("options"))
    average = call(q("_mlsql_hivemall_average"), Sql("options"))
    la, lp = (call(q("_mlsql_hivemall_int_label"), Sql(x)) for x in ("actual", "predicted"))
    avg = str(call(q("_mlsql_hivemall_average"), Sql("options")))
    binary_stats = (
        RowStats(  # Hivemall: under binary only label 1 counts; under micro 0 is a label too
            tp=call(q("_mlsql_hivemall_tp"), la, lp, Sql(avg)),
            n_actual=call(q("_mlsql_hivemall_n"), la, lp, Sql(avg)),
            n_predicted=call(q("_mlsql_hivemall_n"), lp, la, Sql(avg)),
        )
    )

    def f_beta(ops: Any, s: RowStats) -> Any:
        return hivemall_f(ops, s, beta, lit("0"))

    def arrays(f: Callable[..., Any]) -> str:
        return (
            f"CASE WHEN {average} = 'binary'\n"
            f"         THEN error({sql_message(P.BINARY_ON_ARRAYS_MESSAGE)})\n"
            f"         ELSE {f(ops, row_stats(q))} END"
        )

    weighted_f = by_weight(f_beta, "fmeasure")

    doc = (
        "Hivemall's fmeasure: micro F-beta (0 where undefined) over label arrays, or over int "
        "(1, 0, -1) or boolean binary input; options '-beta B -average micro|binary'."
    )
    # one macro per input kind takes every call form: fmeasure(a, p), fmeasure(a, p, '-beta 2'),
    # fmeasure(a, p, sample_weight := w) and fmeasure(a, p, '-beta 2', w); the helper's
    # overload is picked by the weight's type (see ranking's _mlsql_row_mean)
    params = ("options := ''", f"{SAMPLE_WEIGHT} := NULL")
    overloads = [
        Macro(
            f,
            "fmeasure",
            (f"actual {t}", f"predicted {t}", *params),
            f"{q(impl)}(actual{cast}, predicted{cast}, options, {SAMPLE_WEIGHT})",
            doc,
        )
        for t, impl, cast in [
            ("VARCHAR[]", "_mlsql_hivemall_arrays", ""),
            ("INTEGER[]", "_mlsql_hivemall_arrays", ""),
            ("BIGINT[]", "_mlsql_hivemall_arrays", ""),
            ("BIGINT", "_mlsql_hivemall_binary", ""),
            ("BOOLEAN", "_mlsql_hivemall_binary", "::BIGINT"),
        ]
    ]
    overloads.append(
        Macro(f, "fmeasure", ("actual", "predicted", *params), f"error({bad_types})", doc)
    )
    no_weight = f'{SAMPLE_WEIGHT} "NULL"'
    return [
        Macro(
            f,
            "_mlsql_hivemall_beta",
            ("options",),
            f"""CASE WHEN NOT regexp_full_match(coalesce(options, ''), '{P.OPTIONS_PATTERN}')
         THEN error({bad_options})
         WHEN {beta_text} = '' THEN 1.0::DOUBLE
         WHEN NOT regexp_full_match({beta_text}, '{P.BETA_NUMBER}', 'i')
              OR TRY_CAST({beta_text} AS DOUBLE) IS NULL THEN error({bad_beta})
         ELSE {q("_mlsql_check_beta")}(TRY_CAST({beta_text} AS DOUBLE), 'fmeasure') END""",
            "The -beta of a Hivemall option string (default 1).",
            public=False,
        ),
        Macro(
            f,
            "_mlsql_hivemall_average",
            ("options",),
            f"""CASE coalesce(nullif({average_text}, ''), 'micro')
         WHEN 'micro' THEN 'micro' WHEN 'binary' THEN 'binary'
         WHEN 'macro' THEN error({sql_message(P.AVERAGE_MACRO_MESSAGE)})
         ELSE error({bad_average}) END""",
            "The -average of a Hivemall option string (default micro).",
            public=False,
        ),
        Macro(
            f,
            "_mlsql_hivemall_int_label",
            ("x",),
            f"""CASE WHEN x IS NULL THEN NULL WHEN x = 1 THEN 1 WHEN x IN (0, -1) THEN 0
         ELSE error({bad_int}) END""",
            "Hivemall's binary label: 1 stays 1; 0 and -1 are 0.",
            public=False,
        ),
        Macro(
            f,
            "_mlsql_hivemall_tp",
            ("a", "p", "average"),
            """CASE WHEN a IS NULL OR p IS NULL THEN NULL
         WHEN average = 'binary' THEN (a = 1 AND p = 1)::BIGINT ELSE (a = p)::BIGINT END""",
            "One binary row's tp: both 1 (binary), or equal labels (micro).",
            public=False,
        ),
        Macro(
            f,
            "_mlsql_hivemall_n",
            ("x", "other", "average"),
            """CASE WHEN x IS NULL OR other IS NULL THEN NULL
         WHEN average = 'binary' THEN (x = 1)::BIGINT ELSE 1 END""",
            "One binary row's labels on one side: 1 if positive (binary); always 1 (micro).",
            public=False,
        ),
        Macro(
            f,
            "_mlsql_hivemall_arrays",
            ("actual", "predicted", "options", no_weight),
            arrays(f_beta),
            "fmeasure over label arrays (sets).",
            public=False,
        ),
        Macro(
            f,
            "_mlsql_hivemall_arrays",
            ("actual", "predicted", "options", SAMPLE_WEIGHT),
            arrays(weighted_f),
            "fmeasure over label arrays (sets), each row weighted by sample_weight.",
            public=False,
        ),
        Macro(
            f,
            "_mlsql_hivemall_binary",
            ("actual", "predicted", "options", no_weight),
            str(f_beta(ops, binary_stats)),
            "fmeasure over binary int labels.",
            public=False,
        ),
        Macro(
            f,
            "_mlsql_hivemall_binary",
            ("actual", "predicted", "options", SAMPLE_WEIGHT),
            str(weighted_f(ops, binary_stats)),
            "fmeasure over binary int labels, each row weighted by sample_weight.",
            public=False,
        ),
        *overloads,
    ]


#: the module of the checks the families share (a ``sql/`` file of its own, not a family)
CHECKS = "mlsql._duckdb.classification_checks"


def family_modules() -> list[ModuleType]:
    """The modules of :mod:`mlsql._duckdb.families` and the checks they share, in loading order."""
    from mlsql._duckdb import families

    names = [f"{families.__name__}.{info.name}" for info in pkgutil.iter_modules(families.__path__)]
    mods = [importlib.import_module(name) for name in [CHECKS, *names]]
    return sorted(mods, key=lambda mod: (mod.ORDER, mod.FILE))


def files() -> dict[str, str]:
    """Every ``sql/`` file (but the entry file) in loading order, with what it holds."""
    return {**FILES, **{mod.FILE: mod.DESCRIPTION for mod in family_modules()}}


def macros(qualify: Qualify = lambda name: name, *, native: bool = False) -> list[Macro]:
    """Every macro of the library, in loading order, named through ``qualify``.

    ``native=True`` computes the per-row counts with the native extension
    (which must be loaded where the macros are used); every other macro is the same.
    """
    ops = SqlOps(qualify)
    out = [*_internal(qualify), *_label_pair_check(qualify), *_row_stat_macros(native)]
    out += _formulas(ops)
    for m in _sets(ops):
        out += typed(m, qualify)
    for m in measures():
        if m.family != "multilabel" or m.build is None or m.kind in ("set", "counts"):
            continue
        file = {"row": "sets.sql", "from_counts": "counts.sql"}.get(m.kind, "micro.sql")
        made = _from_registry(m, qualify, ops, file)
        out += [made] if m.kind == "from_counts" else typed(made, qualify)
        if m.weighted:
            out += typed(_weighted_from_registry(m, qualify, ops, file), qualify)
    counts, weighted_counts, merge = _counts(qualify, ops)
    out += [*typed(counts, qualify), *typed(weighted_counts, qualify), merge]
    out += _hivemall(qualify, ops)
    for mod in family_modules():
        made = mod.macros(qualify, ops)
        if native and hasattr(mod, "native_overrides"):
            made = _overridden(made, mod.native_overrides(qualify))
        out += made
        for m in measures():
            if (
                m.family in mod.FAMILIES
                and m.build is not None
                and m.kind != "table"  # a table's plan: the family's own macros lower it
                and m.available_in("duckdb")
            ):
                stats = mod.stats(qualify, m) if hasattr(mod, "stats") else None
                out.append(_from_registry(m, qualify, ops, mod.FILE, stats))
    out = _hivemall_ranking_auc(out, qualify)
    out = _shared_bodies(out, qualify)
    return [
        replace(m, name=qualify(m.name), body=expand_calls(m.body, BUILTIN_MACROS)) for m in out
    ]


#: a body at least this long, written by several overloads of one macro, is written once
SHARED_BODY = 300


def _param_name(param: str) -> str:
    """A macro parameter's name, without its type or default."""
    return param.split(" := ")[0].split()[0]


def _shared_bodies(out: list[Macro], q: Qualify) -> list[Macro]:
    """``out`` with a body that several overloads of one scalar macro write alike (the
    overloads on label list or score entry types) written once, in a macro of the same
    parameters the overloads call: ``_mlsql_<name>_typed[_weighted]``, before them.

    Examples
    --------
    >>> ms = [Macro("f.sql", "f", (f"x {t}", "z := 0"), "x + z" * 300, "doc") for t in "AB"]
    >>> [(m.name, m.params, m.body[:12]) for m in _shared_bodies(ms, lambda n: n)]
    [('_mlsql_f_typed', ('x', 'z'), 'x + zx + zx '), ('f', ('x A', 'z := 0'), '_mlsql_f_typ'), ('f', ('x B', 'z := 0'), '_mlsql_f_typ')]
    """
    # a typed overload's body is bound when it is created, with its parameters' types; a
    # macro it calls through an untyped one gets no types, so a body calling a macro whose
    # overloads are typed stays where it is (DuckDB could not choose among them)
    # (searched as the bodies call them: qualified, not inside a longer name)
    overloaded = {q(m.name) for m in out if any(" " in p.split(" := ")[0] for p in m.params)}
    calls = re.compile(r"(?<![\w.\"])(" + "|".join(map(re.escape, sorted(overloaded))) + r")\(")
    result: list[Macro] = []
    i = 0
    while i < len(out):
        j = i
        while j < len(out) and out[j].name == out[i].name:
            j += 1
        run = out[i:j]
        i = j
        groups: dict[tuple[str, tuple[str, ...]], list[int]] = {}
        for k, m in enumerate(run):
            if not m.table and len(m.body) >= SHARED_BODY and not calls.search(m.body):
                names = tuple(_param_name(p) for p in m.params)
                groups.setdefault((m.body, names), []).append(k)
        shared: list[Macro] = []
        for (body, names), members in groups.items():
            if len(members) < 2:
                continue
            head = run[members[0]]
            inner = f"_mlsql_{head.name}_typed{'_weighted' if SAMPLE_WEIGHT in names else ''}"
            if any(m.name == inner for m in shared):
                inner += f"_{len(shared)}"
            doc = f"The body {head.name}'s overloads on {len(members)} types share."
            shared.append(Macro(head.file, inner, names, body, doc, public=False))
            called = str(call(q(inner), *(Sql(n) for n in names)))
            for k in members:
                run[k] = replace(run[k], body=called)
        result += [*shared, *run]
    return result


def _overridden(made: list[Macro], overrides: list[Macro]) -> list[Macro]:
    """``made`` with every macro named in ``overrides`` replaced by the overrides, which
    stand (in their order, overloads and new helpers included) where the first replaced
    macro stood."""
    names = {m.name for m in overrides}
    out: list[Macro] = []
    for m in made:
        if m.name not in names:
            out.append(m)
        elif overrides:
            out += overrides
            overrides = []
    return out + overrides


def _hivemall_ranking_auc(out: list[Macro], q: Qualify) -> list[Macro]:
    """``auc`` over label lists is Hivemall's ranking AUC: ``auc(rank_items, correct_items[, k])``.

    Hivemall names both its AUCs ``auc``; DuckDB picks the overload by type,
    so a Hivemall query over arrays runs unchanged (as ``ranking_auc``). A
    typed overload's body is bound when created, so ``auc`` moves after
    ``ranking_auc`` (into its file).
    """
    last = max(j for j, m in enumerate(out) if m.name == "ranking_auc")
    aucs = [m for m in out if m.name == "auc"]  # and its weighted overload
    aliases = [m for m in out if m.name != "auc" and m.body.startswith(f"{q('auc')}(")]
    doc = (
        f"{aucs[0].doc} Over label lists, auc(rank_items, correct_items[, k]) is Hivemall's "
        "ranking AUC (ranking_auc)."
    )
    file = out[last].file
    overloads = [
        Macro(
            file,
            "auc",
            (f"rank_items {t}", f"correct_items {t}", *k),
            f"{q('ranking_auc')}(rank_items, correct_items, k := {'k' if k else 'NULL'})",
            doc,
        )
        for t in LABEL_LIST_TYPES
        for k in ((), ("k",))
    ]
    moved = [
        *overloads,
        *(replace(auc, file=file, doc=doc) for auc in aucs),
        *(replace(m, file=file) for m in aliases),
    ]
    keep = [m for m in out[: last + 1] if m not in aucs and m not in aliases]
    return [*keep, *moved, *out[last + 1 :]]


def _shown_params(m: Macro) -> str:
    """``(a, b, ...)``: the parameter names of a macro's comment (defaults left out)."""
    return f"({', '.join(p.split()[0] for p in m.params)})"


def render(
    all_macros: list[Macro], *, temporary: bool = False, or_replace: bool = True
) -> dict[str, str]:
    """SQL text per file; overloads of one name become one statement.

    ``or_replace=False`` writes ``CREATE MACRO`` (an existing function of the
    same name is an error) instead of ``CREATE OR REPLACE MACRO``. Every call
    of a DuckDB builtin is qualified (:func:`qualify_builtins`).
    """
    own = frozenset(m.name.rsplit(".", 1)[-1].lower() for m in all_macros)
    all_macros = [
        replace(
            m,
            params=tuple(qualify_builtins(p, own) for p in m.params),
            body=qualify_builtins(m.body, own),
        )
        for m in all_macros
    ]
    texts: dict[str, list[str]] = {name: [] for name in files()}
    i = 0
    while i < len(all_macros):
        group = [all_macros[i]]
        while i + len(group) < len(all_macros) and all_macros[i + len(group)].name == group[0].name:
            group.append(all_macros[i + len(group)])
        i += len(group)
        head = group[0]
        # an internal macro's comment does not repeat the parameters its CREATE line lists
        # below it; a public macro's lists each overload's: the signatures users call
        internal = len(group) == 1 and head.name.rsplit(".", 1)[-1].startswith("_")
        lines = {f"-- {m.name}{'' if internal else _shown_params(m)}: {m.doc}": None for m in group}
        docs = "\n".join(lines)
        kind = "TABLE " if head.table else ""
        # overloads of a table macro: each query in parentheses (else the next overload's
        # parameters would read as more ORDER BY terms of the previous query)
        wrap = "({})" if head.table and len(group) > 1 else "{}"
        bodies = ",\n    ".join(
            f"({', '.join(m.params)}) AS {kind}\n    {wrap.format(m.body)}" for m in group
        )
        temp = "TEMP " if temporary else ""
        texts.setdefault(head.file, []).append(
            f"{docs}\nCREATE {'OR REPLACE ' if or_replace else ''}{temp}MACRO {head.name}{bodies.removeprefix('')};"
        )
    return {name: "\n\n".join(parts) + "\n" for name, parts in texts.items() if parts}
