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

from typing import Any

from mlsql import _label_types as LT
from mlsql._duckdb import native as _native
from mlsql._duckdb.classification_checks import by_names, check_by
from mlsql._duckdb.library import (
    NATIVE_LISTS,
    WIDE_INTEGER_LISTS,
    Macro,
    Qualify,
    sql_message,
)
from mlsql._duckdb.ops import SqlOps, aggregating
from mlsql._duckdb.source_sql import (
    ALL,
    LIST_ACTUAL,
    LIST_STAND_IN,
    checked_source_sql,
    pick_sql,
)
from mlsql._formulas import FORMULAS, RowStats
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


def _source(weighted: bool) -> str:
    """The spread's source, checked: a missing actual, predicted, ``by`` (or with
    ``weighted``, ``sample_weight``) column is the error of the table macro ``func``."""
    named = [("actual", "actual"), ("predicted", "predicted")]
    named += [(SAMPLE_WEIGHT, SAMPLE_WEIGHT)] if weighted else []
    return checked_source_sql(named, "func", '"by"', LIST_STAND_IN)


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
        w0 = f",\n                           {pick_sql(SAMPLE_WEIGHT)} AS w0"
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
                           {pick_sql("actual", LIST_ACTUAL)} AS a0,
                           {pick_sql("predicted")} AS p0{w0}
                    FROM {_source(weighted)}))))
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
                               {pick_sql("actual", LIST_ACTUAL)} AS a0,
                               {pick_sql("predicted")} AS p0
                        FROM {_source(False)})))
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
    return [*_native_table_overloads(qualify), _native_spread(qualify)]


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


def _label_lists() -> list[Macro]:
    """``_mlsql_label_list(x, type_name, func, name)``: a list input as it is; one value per row
    (typed overloads) the error :data:`mlsql._label_types.NOT_A_LIST_MESSAGE`, typed as a
    list so that the query binds and the check, not DuckDB's binder, says what is wrong."""
    message = sql_message(
        LT.NOT_A_LIST_MESSAGE.format(func="{}", name="{}", type="{}"),
        "func",
        "name",
        "name",
        "type_name",
    )
    body = (
        f"""CAST(CASE WHEN type_name = '"NULL"' THEN NULL ELSE error({message}) END AS VARCHAR[])"""
    )
    doc = "A label-list input; one value per row is an error (its type: type_name)."
    params = ("type_name", "func", "name")
    return [
        *(
            Macro(FILE, "_mlsql_label_list", (f"x {t}", *params), body, doc, public=False)
            for t in SCALAR_TYPES
        ),
        Macro(FILE, "_mlsql_label_list", ("x", *params), "x", doc, public=False),
    ]


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


def _counts_ctes(q: Qualify, func: str, weighted: bool = False) -> str:
    """CTEs ``params`` (zd, b), ``spread``, ``groups`` (g, n_rows), ``seen`` and ``k``
    (g, label, tp, fp, fn, n_rows, zd, b): one row per label of each group's universe.
    ``weighted``: the counts are sums of the ``sample_weight`` column's weights (DOUBLE)."""
    labels = f"{q('_mlsql_check_labels')}(labels, '{func}')"
    flag = {"both": LB.FLAG_BOTH, "actual": LB.FLAG_ACTUAL, "predicted": LB.FLAG_PREDICTED}
    count = f"CAST(coalesce(sum(n) FILTER (WHERE {{}}), 0) AS {_COUNT_TYPE[weighted]})"
    spread = q("_mlsql_label_spread_by_weight" if weighted else "_mlsql_label_spread")
    weight = f", {SAMPLE_WEIGHT}" if weighted else ""
    outputs = LB.REPORT_COLUMNS if func == "multilabel_report" else LB.LABEL_COLUMNS
    by = by_names(q)
    example = "[(SELECT label FROM seen LIMIT 0)]"  # a list of the label column's type
    typed = f"{q('_mlsql_typed_universe')}({labels}, {example}, '{func}')"
    return f"""WITH params AS (
        SELECT {q("_mlsql_check_zero_division")}(zero_division, '{func}') AS zd,
               coalesce({q("_mlsql_check_table_beta")}(beta, '{func}'), 1.0) AS b
        WHERE {check_by(q, f"'{func}'", outputs)}),
    spread AS (
        FROM {spread}(source, actual, predicted, {labels}, {by}, '{func}'{weight})),
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
    columns = LB.label_values(ops, COUNTS, BETA, ZD)
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


class FixedOrderOps(SqlOps):
    """Sums and means in a fixed order (by value), so a report is the same on every run.

    DuckDB sums floating-point values in parallel, in whatever order threads
    finish; the last digit of a mean over labels then changes between runs
    of the same query. Summing the values sorted makes the result a function
    of the values alone. The label and row tables summed here are small
    (one row per label, one per distinct row shape), so the sort is cheap.
    """

    def call_formula(self, name: str, args: tuple[Any, ...]) -> Sql:
        """Inline the formulas that aggregate (their macros would sum in any order)."""
        if aggregating(name):
            return getattr(FORMULAS[name], "raw")(self, *args)  # noqa: B009
        return super().call_formula(name, args)

    def sum(self, x: Any) -> Sql:
        return Sql(f"sum({x} ORDER BY {x})")

    def mean(self, x: Any) -> Sql:
        return Sql(f"avg({x} ORDER BY {x})")


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
    body = f"""{_counts_ctes(q, "multilabel_report", weighted)},
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
        "multilabel_report",
        _signature(weighted),
        body,
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
    by = by_names(q)
    lowered = f"list_transform(coalesce({by}, []), lambda b: lower(b))"
    for name, summary in LB.STANDALONE.items():
        with_beta = "fbeta" in name
        beta = "coalesce(beta, 1.0)" if with_beta else "NULL"
        signature = tuple(p for p in TABLE_SIGNATURE if with_beta or not p.startswith("beta"))
        for weighted in (False, True):
            weight = f", {SAMPLE_WEIGHT} := {SAMPLE_WEIGHT}" if weighted else ""
            body = f"""SELECT COLUMNS(lambda c: c = '{name}' OR list_contains({lowered}, lower(c)))
    FROM {q("multilabel_report")}(source, actual, predicted, labels := labels, beta := {beta},
                           zero_division := zero_division, "by" := "by"{weight})"""
            out.append(
                Macro(FILE, name, _signature(weighted, signature), body, summary, table=True)
            )
    return out


def _indicators(q: Qualify) -> list[Macro]:
    bad_length = sql_message(
        "labels_from_indicators needs one label name per indicator. Got {} indicators and {} labels.",
        "CAST(len(indicators) AS VARCHAR)",
        "CAST(len(labels) AS VARCHAR)",
    )
    bad_value = sql_message(
        "labels_from_indicators takes indicators 0 or 1 (or booleans). Got {} instead.",
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
            f"""CASE WHEN indicators IS NULL OR list_count(indicators) < len(indicators) THEN NULL
         WHEN len(indicators) <> len(labels) THEN error({bad_length})
         ELSE list_filter(labels, lambda l, i: {q("_mlsql_indicator")}(indicators[i])) END""",
            "The labels whose indicator is 1; NULL if any indicator is NULL.",
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
            "'indicators_from_labels'), lambda l: list_contains(actual, l)::INTEGER) END",
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
        *_standalone(qualify),
        *_indicators(qualify),
    ]
