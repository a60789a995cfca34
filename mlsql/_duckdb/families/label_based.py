"""Per-label tables in DuckDB: ``label_metrics``, ``multilabel_report``, macro and weighted measures.

Everything rests on one table macro, ``_mlsql_label_spread``, which reads the
source once and spreads each row over its labels with ONE unnest: the row's
actual and predicted lists side by side, each element carrying a flag
(:data:`~mlsql.measures.label_based.FLAG_ACTUAL`, ``FLAG_BOTH``,
``FLAG_PREDICTED``; 0 for a duplicate, a NULL element or a label outside the
universe), preceded by a marker element (label NULL) whose flag encodes the
row's own tp, |A| and |P| (negated, so markers sort apart). A single
``GROUP BY group, label, flag`` then yields the per-label counts and a
histogram of row statistics, from which every column is computed on small
tables. tn is rows - tp - fp - fn per group.

The column formulas come from :mod:`mlsql.measures.label_based`.
"""

from __future__ import annotations

from collections.abc import Callable

from mlsql import _label_types as LT
from mlsql._duckdb import native as _native
from mlsql._duckdb.classification_checks import by_lowered, by_names, check_by, let, param_sql
from mlsql._duckdb.library import (
    NATIVE_LISTS,
    WIDE_INTEGER_LISTS,
    Macro,
    Qualify,
    check_param,
    sql_message,
)
from mlsql._duckdb.library import typed as typed_overloads
from mlsql._duckdb.library import weighted as weighted_macro
from mlsql._duckdb.ops import FixedOrderOps, SqlOps
from mlsql._duckdb.source_sql import (
    ALL,
    LIST_ACTUAL,
    LIST_STAND_IN,
    checked_source_sql,
    pick_sql,
)
from mlsql._formulas import RowStats
from mlsql._front.build import formula
from mlsql._registry import REGISTRY
from mlsql._sqlexpr import Sql, call
from mlsql._weights import SAMPLE_WEIGHT
from mlsql.measures import label_based as LB

FILE = "labels.sql"
DESCRIPTION = (
    "Per-label tables: label_metrics, multilabel_report, macro and weighted measures, "
    "indicator columns."
)
ORDER = 10
FAMILIES = (LB.FAMILY,)

TABLE_SIGNATURE = (
    "source",
    "actual",
    "predicted",
    "labels := NULL",
    "beta := NULL",
    "zero_division := 0",
    '"by" := NULL',
)


def _common_universe(q: Qualify) -> str:
    """The ``labels`` universe typed as the label column: the common type of both lists.

    Not each list's own type: with TINYINT actual and SMALLINT predicted lists, a
    universe label -32768 is a SMALLINT label that the TINYINT side can never hold
    (casting the universe to TINYINT failed with DuckDB's conversion error, and the
    native and portable spreads failed on different rows). The portable spread's
    unnest and the native aggregate's argument cast both lists to this type too.
    """
    return f"{q('_mlsql_typed_universe')}(labels, CASE WHEN false THEN p ELSE a END, func)"


def _source(q: Qualify, weighted: bool) -> str:
    """The spread's source, checked: a missing actual, predicted, ``by`` (or with
    ``weighted``, ``sample_weight``) column is the error of the table macro ``func``."""
    named = [("actual", "actual"), ("predicted", "predicted")]
    named += [(SAMPLE_WEIGHT, SAMPLE_WEIGHT)] if weighted else []
    return checked_source_sql(q, named, "func", '"by"', LIST_STAND_IN)


def _spread(q: Qualify, weighted: bool = False) -> Macro:
    """``_mlsql_label_spread`` (portable); ``weighted``: ``_mlsql_label_spread_by_weight``,
    whose ``n`` sums the ``sample_weight`` column's weights (checked; NULL: the row is unknown)
    instead of counting rows. The native extension counts rows only, so a weighted table
    is always computed here."""
    in_universe = f"(labels IS NULL OR list_contains({_common_universe(q)}, x))"
    skip = f"x IS NULL OR list_position({{side}}, x) <> i OR NOT {in_universe}"
    a0, p0 = label_list(q, "a0", "func", "'actual'"), label_list(q, "p0", "func", "'predicted'")
    checked = f"{q('_mlsql_checked_label_lists')}({a0}, {p0}, func, 'actual', 'predicted')"
    by_names = 'list_transform("by", lambda b: lower(b))'
    pred = LB.FLAG_PREDICTED
    w, w0, n, unknown = "", "", "count(*)", "{x} IS NULL"
    if weighted:
        # each row's weight read through _mlsql_weight: the number-type and value checks
        # (and their messages) of every weighted measure
        w = f",\n                       {q('_mlsql_weight')}(w0, func) AS w"
        w0 = f",\n                           {pick_sql(q, SAMPLE_WEIGHT)} AS w0"
        n, unknown = "sum(w)", "{x} IS NULL OR w0 IS NULL"
    body = f"""SELECT g,
           CASE WHEN GROUPING(la) = 0 THEN la WHEN GROUPING(lp) = 0 THEN lp END AS label,
           CASE WHEN GROUPING(la) = 0 THEN fa WHEN GROUPING(lp) = 0 THEN fp * {pred}
                ELSE -1 - code END AS f,
           {n} AS n
    FROM (
        SELECT g, unnest(a) AS la, unnest(fa) AS fa, unnest(p) AS lp, unnest(fp) AS fp,{" w," if weighted else ""}
               unnest([CASE WHEN a IS NULL OR p IS NULL THEN NULL
                            ELSE coalesce(list_sum(fa), 0) + coalesce(list_sum(fp), 0) * {pred} END]) AS code
        FROM (
            SELECT g, a, p,{" w," if weighted else ""}
                   list_transform(a, lambda x, i: CASE WHEN {skip.format(side="a")} THEN 0
                       WHEN list_contains(p, x) THEN {LB.FLAG_BOTH} ELSE {LB.FLAG_ACTUAL} END) AS fa,
                   list_transform(p, lambda x, i: CASE WHEN {skip.format(side="p")} THEN 0 ELSE 1 END) AS fp
            FROM (
                SELECT g, CASE WHEN {unknown.format(x="p0")} THEN NULL ELSE {checked} END AS a,
                       CASE WHEN {unknown.format(x="a0")} THEN NULL ELSE {p0} END AS p{w}
                FROM (
                    SELECT struct_pack(*COLUMNS(lambda c: c = '{ALL}' OR list_contains({by_names}, lower(c)))) AS g,
                           {pick_sql(q, "actual", LIST_ACTUAL)} AS a0,
                           {pick_sql(q, "predicted")} AS p0{w0}
                    FROM {_source(q, weighted)}))))
    GROUP BY GROUPING SETS ((g, la, fa), (g, lp, fp), (g, code))"""
    params = ("source", "actual", "predicted", "labels", '"by"', "func")
    return Macro(
        FILE,
        "_mlsql_label_spread" + ("_by_weight" if weighted else ""),
        (*params, SAMPLE_WEIGHT) if weighted else params,
        body,
        "One pass over the source: "
        + ("sum the weights" if weighted else "count")
        + " per (group, label, flag); label NULL rows hold row codes.",
        public=False,
        table=True,
    )


#: the native extension's per-label aggregate (native/duckdb_ext.c)
NATIVE_TABLE = _native.LABEL_TABLE


def _native_spread(q: Qualify) -> Macro:
    """``_mlsql_label_spread`` computed by the native extension's per-label aggregate.

    The same relation (g, label, f, n) as the portable macro, whose rows the
    queries above it sum: per label, its tp (flag ``FLAG_BOTH``), its
    actual-only count (``FLAG_ACTUAL``) and its predicted count
    (``FLAG_PREDICTED``); per kind of row, its code (label NULL, f < 0); the
    unknown rows (f NULL). The aggregate reads each group's rows once and
    returns a small table per group, so only that is spread. Both lists are
    first cast to their common type (as the portable macro's unnest does), and
    with ``labels`` intersected with it.
    """
    a0, p0 = label_list(q, "a0", "func", "'actual'"), label_list(q, "p0", "func", "'predicted'")
    checked = f"{q('_mlsql_checked_label_lists')}({a0}, {p0}, func, 'actual', 'predicted')"
    by_names = 'list_transform("by", lambda b: lower(b))'
    kept = (
        "CASE WHEN labels IS NULL THEN {side} ELSE list_filter({side}, "
        f"lambda x: list_contains({_common_universe(q)}, x)) END"
    )
    base, both, actual, pred = LB.CODE_BASE, LB.FLAG_BOTH, LB.FLAG_ACTUAL, LB.FLAG_PREDICTED
    code = f"e.n_actual + e.tp * {base} + e.n_predicted * {pred}"
    body = f"""SELECT g, label, unnest(f) AS f, unnest(n) AS n FROM (
        SELECT g, e.label AS label,
               CASE WHEN e.label IS NOT NULL THEN [{both}, {actual}, {pred}]
                    WHEN e.tp IS NULL THEN [NULL] ELSE [-1 - ({code})] END AS f,
               CASE WHEN e.label IS NOT NULL THEN [e.tp, e.n_actual - e.tp, e.n_predicted]
                    ELSE [e.n] END AS n
        FROM (
            SELECT g, unnest({q("_mlsql_native_label_table")}(CASE WHEN false THEN p ELSE a END,
                                             CASE WHEN false THEN a ELSE p END, func)) AS e
            FROM (
                SELECT g, {kept.format(side="a")} AS a, {kept.format(side="p")} AS p
                FROM (
                    SELECT g, CASE WHEN p0 IS NULL THEN NULL ELSE {checked} END AS a,
                           CASE WHEN a0 IS NULL THEN NULL ELSE {p0} END AS p
                    FROM (
                        SELECT struct_pack(*COLUMNS(lambda c: c = '{ALL}' OR list_contains({by_names}, lower(c)))) AS g,
                               {pick_sql(q, "actual", LIST_ACTUAL)} AS a0,
                               {pick_sql(q, "predicted")} AS p0
                        FROM {_source(q, False)})))
            GROUP BY g))"""
    return Macro(
        FILE,
        "_mlsql_label_spread",
        ("source", "actual", "predicted", "labels", '"by"', "func"),
        body,
        "One pass over the source (native): count per (group, label, flag); label NULL rows "
        "hold row codes.",
        public=False,
        table=True,
    )


def native_overrides(qualify: Qualify) -> list[Macro]:
    """The macros of this file that the native extension computes (same names, same results)."""
    return [
        *_native_table_overloads(qualify),
        _native_spread(qualify),
        _native_label_state(qualify),
    ]


#: the list types the native per-label aggregate takes
NATIVE_TABLE_LISTS = (*NATIVE_LISTS, *WIDE_INTEGER_LISTS)
#: one row of the native aggregate's table, typed: what the fallback overload returns
NATIVE_TABLE_ROW = (
    "struct_pack(label := NULL::VARCHAR, tp := NULL::BIGINT, n_actual := NULL::BIGINT, "
    "n_predicted := NULL::BIGINT, n := NULL::BIGINT)"
)


def _native_table_overloads(q: Qualify) -> list[Macro]:
    """``_mlsql_native_label_table(a, p, func)``: the native aggregate on the label list
    types, and on any other type (floats, booleans, nested lists, ...) mlsql's label-type
    error, raised when a group is computed, as the portable macro raises it; without this
    fallback DuckDB would refuse the query with a Binder error naming the C function."""
    name = "_mlsql_native_label_table"
    doc = "The native per-label aggregate; lists of no labels meet mlsql's error."
    out = [
        Macro(FILE, name, (f"a {t}", f"p {t}", "func"), f"{NATIVE_TABLE}(a, p)", doc, public=False)
        for t in NATIVE_TABLE_LISTS
    ]
    error = call(
        q("_mlsql_label_type_error"),
        Sql("any_value(a)"),
        Sql("any_value(p)"),
        Sql("func"),
        "actual",
        "predicted",
    )
    fallback = f"CASE WHEN {error} IS NULL THEN [{NATIVE_TABLE_ROW}] END"
    return [*out, Macro(FILE, name, ("a", "p", "func"), fallback, doc, public=False)]


#: the types of one value per row that reach ``_mlsql_label_list``'s typed overloads (other
#: values of these kinds cast to them; lists and structs do not)
SCALAR_TYPES = ("VARCHAR", "BIGINT", "HUGEINT", "UBIGINT", "DOUBLE", "BOOLEAN")


def label_list(q: Qualify, x: str, func: str, name: str) -> str:
    """SQL of input ``x`` (SQL; ``func``, ``name``: SQL text of the macro's and the input's
    names) of a label-list table macro, after ``_mlsql_label_list``'s check."""
    return f"{q('_mlsql_label_list')}({x}, typeof({x}), {func}, {name})"


def list_checks(
    file: str,
    name: str,
    template: str,
    element: str,
    doc: str,
    listed: Callable[[str], str] = lambda message: "x",
) -> list[Macro]:
    """``name(x, type_name, func, name)``: a list input as ``listed(message)`` gives it (as it
    is, by default); one value per row (typed overloads) the error ``template`` (its ``func``,
    ``name`` and ``type`` filled from the arguments), typed as a list of ``element`` so that
    the query binds and the check, not DuckDB's binder, says what is wrong."""
    message = sql_message(
        template.format(func="{}", name="{}", type="{}"), "func", "name", "name", "type_name"
    )
    body = f"""CAST(CASE WHEN type_name = '"NULL"' THEN NULL ELSE error({message}) END AS {element}[])"""
    params = ("type_name", "func", "name")
    return [
        *(Macro(file, name, (f"x {t}", *params), body, doc, public=False) for t in SCALAR_TYPES),
        Macro(file, name, ("x", *params), listed(message), doc, public=False),
    ]


def _label_lists() -> list[Macro]:
    """``_mlsql_label_list(x, type_name, func, name)``: a list input as it is; one value per row
    the error :data:`mlsql._label_types.NOT_A_LIST_MESSAGE` (:func:`list_checks`)."""
    doc = "A label-list input; one value per row is an error (its type: type_name)."
    return list_checks(FILE, "_mlsql_label_list", LT.NOT_A_LIST_MESSAGE, "VARCHAR", doc)


def _check_labels() -> Macro:
    empty = sql_message("The 'labels' parameter of {} must hold at least one label.", "func")
    return Macro(
        FILE,
        "_mlsql_check_labels",
        ("labels", "func"),
        f"CASE WHEN labels IS NOT NULL AND len(list_filter(labels, lambda x: x IS NOT NULL)) = 0\n"
        f"         THEN error({empty}) ELSE labels END",
        "Validate a label universe: NULL (labels seen) or a list with a label.",
        public=False,
    )


def _counts_ctes(q: Qualify, func: str, weighted: bool = False, named: str | None = None) -> str:
    """CTEs ``params`` (zd, b), ``spread``, ``groups`` (g, n_rows), ``seen`` and ``k``
    (g, label, tp, fp, fn, n_rows, zd, b): one row per label of each group's universe.
    ``weighted``: the counts are sums of the ``sample_weight`` column's weights (DOUBLE).
    ``named``: the SQL of the name the errors give (default: ``func``'s)."""
    name = named or f"'{func}'"
    labels = f"{q('_mlsql_check_labels')}(labels, {name})"
    flag = {"both": LB.FLAG_BOTH, "actual": LB.FLAG_ACTUAL, "predicted": LB.FLAG_PREDICTED}
    count = f"CAST(coalesce(sum(n) FILTER (WHERE {{}}), 0) AS {_COUNT_TYPE[weighted]})"
    spread = q("_mlsql_label_spread_by_weight" if weighted else "_mlsql_label_spread")
    weight = f", {SAMPLE_WEIGHT}" if weighted else ""
    outputs = LB.REPORT_COLUMNS if func == "multilabel_report" else LB.LABEL_COLUMNS
    by = by_names(q)
    example = "[(SELECT label FROM seen LIMIT 0)]"  # a list of the label column's type
    typed = f"{q('_mlsql_typed_universe')}({labels}, {example}, {name})"
    return f"""WITH params AS (
        SELECT {q("_mlsql_check_zero_division")}(zero_division, {name}) AS zd,
               coalesce({q("_mlsql_check_table_beta")}(beta, {name}), 1.0) AS b
        WHERE {check_by(q, name, outputs)}),
    spread AS (
        FROM {spread}(source, actual, predicted, {labels}, {by}, {name}{weight})),
    groups AS (
        SELECT g, {count.format("f < 0")} AS n_rows
        FROM spread WHERE label IS NULL GROUP BY g
        UNION ALL  -- no rows and no by: still one (empty) group, as an aggregate gives
        SELECT NULL AS g, 0 AS n_rows
        WHERE coalesce(len({by}), 0) = 0 AND NOT EXISTS (FROM spread)),
    seen AS (
        SELECT g, label, tp, n_predicted - tp AS fp, n_actual - tp AS fn FROM (
            SELECT g, label,
                   {count.format(f"f = {flag['both']}")} AS tp,
                   {count.format(f"f = {flag['actual']} OR f = {flag['both']}")} AS n_actual,
                   {count.format(f"f = {flag['predicted']}")} AS n_predicted
            FROM spread WHERE label IS NOT NULL GROUP BY g, label)),
    universe AS (
        SELECT g, label FROM seen WHERE labels IS NULL AND tp + fp + fn > 0
        UNION ALL
        SELECT g, unnest(list_distinct({typed})) AS label
        FROM groups WHERE labels IS NOT NULL),
    k AS (
        SELECT u.g, u.label, coalesce(s.tp, 0) AS tp, coalesce(s.fp, 0) AS fp,
               coalesce(s.fn, 0) AS fn, gr.n_rows, params.zd, params.b
        FROM universe u JOIN groups gr ON u.g IS NOT DISTINCT FROM gr.g CROSS JOIN params
        LEFT JOIN seen s ON s.g = u.g AND s.label = u.label)"""


def _select(columns: dict[str, Sql]) -> str:
    return ",\n               ".join(f"{expr} AS {name}" for name, expr in columns.items())


def _keep(names_without_beta: tuple[str, ...], names_with_beta: tuple[str, ...]) -> str:
    """A COLUMNS lambda keeping the group columns and the columns for this beta."""
    drop_without = sorted(set(names_with_beta) - set(names_without_beta))
    drop_with = sorted(set(names_without_beta) - set(names_with_beta))
    as_list = lambda names: "[" + ", ".join(f"'{n}'" for n in names) + "]"  # noqa: E731
    return (
        f"lambda c: c <> '{ALL}' AND c <> '__mlsql_g' AND NOT list_contains(CASE WHEN beta IS NULL "
        f"THEN {as_list(drop_without)} ELSE {as_list(drop_with)} END, c)"
    )


#: zero_division and beta, checked once (CTE ``params``) and carried as columns
ZD, BETA = Sql("zd"), Sql("b")
COUNTS = LB.LabelCounts(Sql("tp"), Sql("fp"), Sql("fn"), Sql("n_rows"))


#: the type of a table's counts: unweighted, weighted
_COUNT_TYPE = {False: "BIGINT", True: "DOUBLE"}


def _label_metrics(q: Qualify, ops: SqlOps, weighted: bool = False) -> Macro:
    columns = formula("label_metrics")(ops, COUNTS, beta=BETA, zero_division=ZD)
    keep = _keep(LB.label_metrics_columns(False), LB.label_metrics_columns(True))
    body = f"""{_counts_ctes(q, "label_metrics", weighted)}
    SELECT COLUMNS({keep}) FROM (
        SELECT unnest(g), label,
               {_select(columns)},
               g AS __mlsql_g
        FROM k)
    ORDER BY __mlsql_g, label"""
    return Macro(
        FILE,
        "label_metrics",
        _signature(weighted),
        body,
        "One row per (group, label): tp, fp, fn, tn, support, precision, recall, f1 "
        "(fbeta with beta), jaccard, accuracy = (tp + tn) / rows. source: a table, view or "
        "file name, or a query; labels: the universe (labels in it that never occur get a row, "
        "labels outside it are ignored, as scikit-learn's labels=); by: grouping columns. "
        "Example: SELECT * FROM label_metrics('preds', 'actual', 'predicted', by := ['model']).",
        table=True,
    )


def _signature(weighted: bool, signature: tuple[str, ...] = TABLE_SIGNATURE) -> tuple[str, ...]:
    """A table macro's parameters; weighted: ``sample_weight`` (a column name) after the
    column names, so ``multilabel_report('t', 'actual', 'predicted', sample_weight := 'w')``
    finds the weighted overload and a call without it the unweighted one."""
    return (*signature[:3], SAMPLE_WEIGHT, *signature[3:]) if weighted else signature


def _report(q: Qualify, ops: SqlOps, weighted: bool = False) -> Macro:
    ops = FixedOrderOps(ops.qualify)
    base, pred = LB.CODE_BASE, LB.FLAG_PREDICTED
    zd_agg = Sql("any_value(zd)")
    per_label = LB.label_values(ops, COUNTS, BETA, ZD)
    by_label = LB.label_aggregates(ops, Sql, zd_agg)
    rows = RowStats(Sql("tp"), Sql("n_actual"), Sql("n_predicted"))
    per_row = LB.row_values(ops, rows, BETA, ZD)
    by_row = LB.row_aggregates(ops, Sql, Sql("n"), zd_agg)
    by_group = LB.group_columns(ops, Sql, BETA, ZD)
    outer = []
    for name in LB.REPORT_COLUMNS:
        if name in ("n_rows", "n_labels"):
            src = "groups" if name == "n_rows" else "by_label"
            kind = _COUNT_TYPE[weighted and name == "n_rows"]
            outer.append(f"CAST(coalesce({src}.{name}, 0) AS {kind}) AS {name}")
        elif name in by_group:
            outer.append(f"{by_group[name]} AS {name}")
        else:
            outer.append(name)
    select_outer = ",\n               ".join(outer)
    keep = _keep(LB.report_columns(False), LB.report_columns(True))
    body = f"""{_counts_ctes(q, "multilabel_report", weighted, named="func")},
    label_values AS (
        SELECT g, n_rows, zd,
               {_select(per_label)}
        FROM k),
    by_label AS (
        SELECT g,
               {_select(by_label)}
        FROM label_values GROUP BY g),
    row_values AS (
        SELECT g, n, zd,
               {_select(per_row)}
        FROM (
            SELECT g, n, code // {pred} AS n_predicted, (code % {pred}) // {base} AS tp,
                   code % {base} AS n_actual
            FROM (SELECT g, n, -1 - f AS code FROM spread WHERE label IS NULL AND f < 0))
        CROSS JOIN params),
    by_row AS (
        SELECT g,
               {_select(by_row)}
        FROM row_values GROUP BY g)
    SELECT COLUMNS({keep}) FROM (
        SELECT unnest(groups.g),
               {select_outer},
               groups.g AS __mlsql_g
        FROM groups CROSS JOIN params
        LEFT JOIN by_row ON by_row.g = groups.g
        LEFT JOIN by_label ON by_label.g IS NOT DISTINCT FROM groups.g)
    ORDER BY __mlsql_g"""
    return Macro(
        FILE,
        "_mlsql_report",
        (*_signature(weighted), "func := 'multilabel_report'"),
        body,
        "multilabel_report's table, its errors naming func.",
        public=False,
        table=True,
    )


def _report_entry(q: Qualify, weighted: bool = False) -> Macro:
    """``multilabel_report``: ``_mlsql_report`` (:func:`_report`) under its own name."""
    weight = f", {SAMPLE_WEIGHT} := {SAMPLE_WEIGHT}" if weighted else ""
    return Macro(
        FILE,
        "multilabel_report",
        _signature(weighted),
        f"""FROM {q("_mlsql_report")}(source, actual, predicted, labels := labels, beta := beta,
        zero_division := zero_division, "by" := "by"{weight})""",
        "One row per group: n_rows, n_labels, micro, macro (mean over the label universe), "
        "macro_f1_of_means, weighted (by support) and samples averages, hamming_loss, "
        "subset_accuracy, zero_one_loss, label_accuracy_micro/macro, clp, mlp, wlp; with beta "
        "the F columns are *_fbeta. Given labels, each row's sets are first intersected with "
        "them (labels outside are ignored, as scikit-learn's labels=). "
        "Example: SELECT * FROM multilabel_report('preds', 'actual', 'predicted', labels := ['a', 'b']).",
        table=True,
    )


def _standalone(q: Qualify) -> list[Macro]:
    out = []
    lowered = by_lowered(q)
    for name, summary in LB.STANDALONE.items():
        with_beta = "fbeta" in name
        beta = "coalesce(beta, 1.0)" if with_beta else "NULL"
        signature = tuple(p for p in TABLE_SIGNATURE if with_beta or not p.startswith("beta"))
        for weighted in (False, True):
            weight = f", {SAMPLE_WEIGHT} := {SAMPLE_WEIGHT}" if weighted else ""
            body = f"""SELECT COLUMNS(lambda c: c = '{name}' OR list_contains({lowered}, lower(c)))
    FROM {q("_mlsql_report")}(source, actual, predicted, labels := labels, beta := {beta},
                           zero_division := zero_division, "by" := "by"{weight}, func := '{name}')"""
            out.append(
                Macro(FILE, name, _signature(weighted, signature), body, summary, table=True)
            )
    return out


# ------------------------------------------------------------------ aggregates
# The columns of STANDALONE are also aggregates (``SELECT model, macro_f1(actual, predicted)
# FROM preds GROUP BY model``): DuckDB keeps scalar and table macros apart, so one name
# serves both. Each aggregate reads its group's per-label counts from one aggregate state,
# ``_mlsql_label_state`` (portable: a histogram of the group's distinct known rows, counted
# per label in a subquery; native: the per-label aggregate of the tables), and applies the
# report's formulas to them in a subquery over the labels.


def _label_state(q: Qualify, weighted: bool = False) -> Macro:
    """``_mlsql_label_state(actual, predicted, func)`` (portable): {n: known rows, seen:
    [{label, tp, fp, fn}]} of a group, from a histogram of its known rows' distinct
    (actual, predicted) pairs (memory grows with the distinct pairs, at most the rows);
    ``weighted``: ``_mlsql_label_state_by_weight``, with ``sample_weight`` after the lists,
    over distinct (actual, predicted, weight) triples, whose counts sum the rows' checked
    weights."""
    known = "actual IS NOT NULL AND predicted IS NOT NULL"
    w, kind = "1", _COUNT_TYPE[weighted]
    if weighted:
        known += f" AND {SAMPLE_WEIGHT} IS NOT NULL"
        # a CAST around the call (a no-op: the weight is a DOUBLE): DuckDB 1.4 loses the name
        # of a struct field whose value is a macro call on an outer column inside a subquery
        # ("Need named argument for struct pack")
        w = f"CAST({q('_mlsql_weight')}({SAMPLE_WEIGHT}, func) AS DOUBLE)"
    rows = f"histogram({{'a': actual, 'p': predicted, 'w': {w}}}) FILTER (WHERE {known})"
    count = f"CAST(coalesce(sum(w) FILTER (WHERE {{}}), 0) AS {kind})"
    # r: each distinct row with its weight (its rows' number, times their weight)
    body = f"""(WITH r AS (SELECT h.key.a AS a, h.key.p AS p, h.key.w * h.value AS w
                     FROM (SELECT unnest(map_entries({rows})) AS h)),
         e AS (SELECT w, x, list_contains(a, x) AS ia, list_contains(p, x) AS ip
               FROM (SELECT w, a, p, unnest(list_distinct(list_filter(list_concat(a, p),
                                                                      lambda y: y IS NOT NULL))) AS x
                     FROM r)),
         s AS (SELECT x AS label, {count.format("ia AND ip")} AS tp,
                      {count.format("ip AND NOT ia")} AS fp, {count.format("ia AND NOT ip")} AS fn
               FROM e GROUP BY x)
    SELECT {{'n': (SELECT CAST(coalesce(sum(w), 0) AS {kind}) FROM r),
             'seen': coalesce((SELECT list({{'label': label, 'tp': tp, 'fp': fp, 'fn': fn}}) FROM s), [])}})"""
    if weighted:
        # every row's weight checked, the rows skipped included (as in the weighted tables)
        checks = f"bool_and({q('_mlsql_weight')}({SAMPLE_WEIGHT}, func) >= 0) = false"
        body = f"CASE WHEN {checks} THEN NULL ELSE {body} END"
    name = "_mlsql_label_state" + ("_by_weight" if weighted else "")
    params = ("actual", "predicted", *((SAMPLE_WEIGHT,) if weighted else ()), "func")
    doc = (
        "A group's known rows and per-label counts {n, seen: [{label, tp, fp, fn}]} "
        + ("(sums of weights), " if weighted else "")
        + "from a histogram of its distinct rows."
    )
    return Macro(FILE, name, params, body, doc, public=False)


def _native_label_state(q: Qualify) -> Macro:
    """``_mlsql_label_state`` over the native per-label aggregate: memory grows with the
    group's labels, not its rows. Its row codes give the known rows (label NULL, tp known)."""
    a = "CASE WHEN predicted IS NULL THEN NULL ELSE actual END"
    p = "CASE WHEN actual IS NULL THEN NULL ELSE predicted END"
    # the C function itself: the public aggregates' typed overloads give it label lists only
    # (a typed macro such as _mlsql_native_label_table cannot aggregate in a subquery)
    entries = f"{NATIVE_TABLE}(CASE WHEN false THEN {p} ELSE {a} END, CASE WHEN false THEN {a} ELSE {p} END)"
    state = """{'n': CAST(coalesce(list_sum(list_transform(
                  list_filter(es, lambda x: x.label IS NULL AND x.tp IS NOT NULL), lambda x: x.n)), 0) AS BIGINT),
               'seen': list_transform(list_filter(es, lambda x: x.label IS NOT NULL),
                   lambda x: {'label': x.label, 'tp': x.tp, 'fp': x.n_predicted - x.tp,
                              'fn': x.n_actual - x.tp})}"""
    return Macro(
        FILE,
        "_mlsql_label_state",
        ("actual", "predicted", "func"),
        str(let(f"coalesce({entries}, [])", "es", state)),
        "A group's known rows and per-label counts {n, seen: [{label, tp, fp, fn}]} from "
        "the native per-label aggregate.",
        public=False,
    )


def _label_rows(q: Qualify) -> Macro:
    """``_mlsql_label_rows(state, labels, zero_division, beta, func)``: a table macro of one
    row per label of a group's universe with its counts and the report's per-label values,
    from the group's per-label counts ``state`` (of ``_mlsql_label_state``), given the checked
    ``labels``, ``zero_division`` and ``beta`` of ``func``.

    The aggregates of :data:`~mlsql.measures.label_based.STANDALONE` each read it in a scalar
    subquery (``state`` the group's aggregate): DuckDB expands the macro in place, so each
    plan is the one it had with these rows written out in its own macro.
    """
    ops = FixedOrderOps(q)
    typed = f"{q('_mlsql_typed_universe')}(lb, list_transform(st.seen, lambda x: x.label), func)"
    per_label = LB.label_values(ops, COUNTS, BETA, ZD)
    used = {n: e for n, e in per_label.items() if n not in ("tp", "fp", "fn")}
    # one row per label of the universe: the labels seen (with counts), and those of
    # ``labels`` (zero counts, u), summed per label: given ``labels``, the labels of it;
    # else the labels seen in the known rows (weighted: in rows of some weight)
    entry = "{{'label': {}, 'tp': {}, 'fp': {}, 'fn': {}, 'u': {}}}"
    seen = entry.format("s.label", "s.tp", "s.fp", "s.fn", "false")
    universe = entry.format("l", 0, 0, 0, "true")
    body = f"""SELECT tp, fp, fn, n_rows, zd, b,
                   {_select(used)}
            FROM (
                SELECT sum(e.tp) AS tp, sum(e.fp) AS fp, sum(e.fn) AS fn,
                       any_value(n_rows) AS n_rows, any_value(zd) AS zd, any_value(b) AS b
                FROM (
                    SELECT unnest(list_concat(
                               list_transform(st.seen, lambda s: {seen}),
                               list_transform(list_distinct({typed}), lambda l: {universe}))) AS e,
                           st.n AS n_rows, lb, zd, b
                    FROM (SELECT state AS st, labels AS lb, zero_division AS zd, beta AS b))
                GROUP BY e.label
                HAVING CASE WHEN any_value(lb) IS NULL THEN sum(e.tp + e.fp + e.fn) > 0
                            ELSE bool_or(e.u) END)"""
    return Macro(
        FILE,
        "_mlsql_label_rows",
        ("state", "labels", "zero_division", "beta", "func"),
        body,
        "One row per label of a group's universe, its counts and per-label values, from "
        "the group's per-label counts state, given the checked labels, zero_division and beta.",
        public=False,
        table=True,
    )


def _aggregate(q: Qualify, name: str, weighted: bool) -> list[Macro]:
    """The aggregate ``name`` (a column of the report): ``_mlsql_<name>_of_lists`` (weighted:
    ``_mlsql_<name>_of_lists_by_weight``), its label formula over the rows of
    :func:`_label_rows` from the per-label counts of ``_mlsql_label_state``, and the public macro's typed overloads calling it (the label-type
    error of the micro aggregates for other lists)."""
    func = f"'{name}'"
    state = q("_mlsql_label_state_by_weight" if weighted else "_mlsql_label_state")
    weight = f", {SAMPLE_WEIGHT}" if weighted else ""
    # the declared parameters (but ``by``: GROUP BY groups an aggregate), each checked
    declared = tuple(p for p in REGISTRY[name].params if p.name != "by")
    checked = {p.name: check_param(p, q, name) for p in declared}
    labels = f"{q('_mlsql_check_labels')}(labels, {func})"
    zd, beta = checked["zero_division"], checked.get("beta", Sql("1.0"))
    needs = LB.standalone_needs(name)
    needed = LB.label_aggregates(FixedOrderOps(q), Sql, Sql("any_value(zd)"), only=needs)
    needed = {n: needed[n] for n in needs}
    final = LB.standalone_value(FixedOrderOps(q), name, Sql, BETA)
    rows = f"{q('_mlsql_label_rows')}({state}(actual, predicted{weight}, {func}), {labels}, {zd}, {beta}, {func})"
    body = f"""(SELECT {final} FROM (
        SELECT {_select(needed)},
               any_value(b) AS b, any_value(zd) AS zd
        FROM {rows}))"""
    # the parameters checked even when the group has no labels
    guard = " OR ".join(f"{checked[p]} IS NULL" for p in ("zero_division", "beta") if p in checked)
    body = f"CASE WHEN {guard} THEN NULL ELSE {body} END"
    inner = f"_mlsql_{name}_of_lists" + ("_by_weight" if weighted else "")
    args = ("actual", "predicted", *((SAMPLE_WEIGHT,) if weighted else ()))
    args += tuple(p.name for p in declared)
    doc = f"{LB.STANDALONE[name]} Over the group's rows."
    public = Macro(
        FILE,
        name,
        ("actual", "predicted", *(param_sql(p) for p in declared)),
        f"{q(inner)}({', '.join(args)})",
        f"{LB.STANDALONE[name]} An aggregate (GROUP BY); the table macro of the same name "
        "gives one row per group over a table.",
    )
    public = weighted_macro(public) if weighted else public
    return [Macro(FILE, inner, args, body, doc, public=False), *typed_overloads(public, q)]


def _aggregates(q: Qualify, ops: SqlOps) -> list[Macro]:
    """The state macros, then every column of STANDALONE as an aggregate (two overloads)."""
    out = [_label_state(q), _label_state(q, weighted=True), _label_rows(q)]
    for name in LB.STANDALONE:
        plain, weighted = _aggregate(q, name, False), _aggregate(q, name, True)
        out += [plain[0], weighted[0], *plain[1:], *weighted[1:]]
    return out


def _indicators(q: Qualify) -> list[Macro]:
    bad_length = sql_message(
        LB.INDICATOR_COUNT_MESSAGE,
        "CAST(len(indicators) AS VARCHAR)",
        "CAST(len(labels) AS VARCHAR)",
    )
    bad_value = sql_message(
        LB.INDICATOR_VALUE_MESSAGE,
        "CAST(v AS VARCHAR)",
    )
    return [
        Macro(
            FILE,
            "_mlsql_indicator",
            ("v",),
            f"CASE WHEN CAST(v AS DOUBLE) = 1 THEN true WHEN CAST(v AS DOUBLE) = 0 THEN false\n"
            f"         ELSE error({bad_value}) END",
            "An indicator value as a boolean (0/1 or false/true; anything else is an error).",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_labels_from_indicators",
            ("indicators", "labels"),
            # every indicator checked first, the row NULL after: the verdict of the
            # DataFrame engines, which check each column's values
            f"""CASE WHEN indicators IS NULL THEN NULL
         WHEN len(indicators) <> len(labels) THEN error({bad_length})
         WHEN list_count(indicators) < len(indicators) THEN
             CASE WHEN len(list_filter(indicators, lambda v: CASE WHEN v IS NULL
                  THEN false ELSE {q("_mlsql_indicator")}(v) IS NULL END)) = 0 THEN NULL
             ELSE list_filter(labels, lambda l: false) END
         ELSE list_filter(labels, lambda l, i: {q("_mlsql_indicator")}(indicators[i])
                                              AND l IS NOT NULL) END""",
            "The labels whose indicator is 1 (a NULL name is no label); NULL if any indicator"
            " is NULL.",
            public=False,
        ),
        Macro(
            FILE,
            "labels_from_indicators",
            ("indicators", "labels"),
            f"{q('_mlsql_labels_from_indicators')}(indicators, labels)",
            "The labels whose indicator is 1: labels_from_indicators([L1, L2, L3], ['L1', 'L2', 'L3']). "
            "NULL if any indicator is NULL.",
        ),
        Macro(
            FILE,
            "indicators_from_labels",
            ("actual", "labels"),
            "CASE WHEN actual IS NULL THEN NULL WHEN len(labels) = 0 THEN []::INTEGER[]\n"
            f"         ELSE list_transform({q('_mlsql_typed_universe')}(labels, actual, "
            "'indicators_from_labels'), lambda l: CASE WHEN l IS NULL THEN NULL\n"
            "         ELSE list_contains(actual, l)::INTEGER END) END",
            "0/1 per label of the universe ``labels``: 1 where the list holds it (labels of "
            "the list's kind, within its integer type's range).",
        ),
    ]


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """Every macro of labels.sql, in loading order."""
    return [
        _check_labels(),
        *_label_lists(),
        _spread(qualify),
        _spread(qualify, weighted=True),
        _label_metrics(qualify, ops),
        _label_metrics(qualify, ops, weighted=True),
        _report(qualify, ops),
        _report(qualify, ops, weighted=True),
        _report_entry(qualify),
        _report_entry(qualify, weighted=True),
        *_standalone(qualify),
        *_aggregates(qualify, ops),
        *_indicators(qualify),
    ]
