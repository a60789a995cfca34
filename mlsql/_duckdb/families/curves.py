"""Precision-recall, ROC and DET curves in DuckDB: table macros over a source.

``precision_recall_curve(source, actual, score, zero_division := 0, "by" :=
NULL)`` and ``roc_curve(...)`` (each also with ``sample_weight``, the name of a
weight column, after ``score``: an overload) read the source (a table or view name, a file
or a query, as the other table macros do) once. Each known row becomes its
cells, ``_mlsql_curve_cells``: one (y, s) for a numeric score (the macro's
DOUBLE overload, so any number binds to it), or a (label, y, s) per scored
and per true label for a score map or a list of {label, score} structs (the
other overloads); the label sits in a struct whose fields become the output's
columns, so a binary curve has no label column. A hash aggregate counts the
cells per (group, label, distinct score); the rows that neither score nor
hold a label are added as its negatives at -inf; window sums over those
counts, sorted by score from the highest within each group and label, give
the cumulative tp and fp of every threshold (DuckDB's sort spills to disk
when it must). The columns come from the registry's formulas
(:func:`mlsql.measures.curves.values`), after a row of threshold +inf per
group and label. Weighted, the counts are sums of the rows' weights and a row
weighing 0 is dropped (scikit-learn's ``_binary_clf_curve`` drops it too).

The known rows are read twice (their number per group, their cells), by a CTE
``NOT MATERIALIZED``: a materialised one held every row's cells (1.9 GB at
10M rows).

Native (:func:`native_overrides`, on connections where mlsql's DuckDB
extension is loaded): one aggregate per group, ``mlsql_native_label_cells``
(native/label_scores.h), gives the group's cells already counted per (label,
distinct score) with each label's number of rows, where the portable macros
spread every row into its cells with list functions first (the cost: 20 CPU s
against 3.4 at 10M rows); the steps from there are the same SQL.

A text score column binds to the score-map overload and fails with DuckDB's
binder error (a map function over text), not with mlsql's message.
"""

from __future__ import annotations

from mlsql._duckdb import native as _native
from mlsql._duckdb.families.label_scores import NATIVE_SCORE_LISTS
from mlsql._duckdb.families.ranking import ENTRY_TYPES
from mlsql._duckdb.families.single_label import KEEP, _columns, _row_weight
from mlsql._duckdb.library import Macro, Qualify, check_param
from mlsql._duckdb.ops import SqlOps
from mlsql._front.build import formula
from mlsql._sqlexpr import Sql
from mlsql.measures import curves as CV

FILE = "curves.sql"
DESCRIPTION = (
    "Precision-recall, ROC and DET curves as tables: one row per distinct threshold, "
    "scikit-learn's points."
)
ORDER = 45
FAMILIES: tuple[str, ...] = ()  # rendered here
#: the label struct's one field for a binary label (an internal name, not shown)
BINARY = "__mlsql_binary"


def _cells(q: Qualify) -> list[Macro]:
    """``_mlsql_curve_cells(actual, score, func)``: a known row's (k, y, s) cells, k the label
    struct. A numeric score (the DOUBLE overload) is one cell of a binary label; a score map
    or a list of {label, score} structs gives a cell per scored label and per true label."""
    flag, number = q("_mlsql_binary_flag"), q("_mlsql_number")
    binary = (
        f"[struct_pack(k := struct_pack({BINARY} := true), "
        f"y := CAST({flag}(actual, 'actual', func) AS BIGINT), "
        f"s := {number}(score, 'score', func) + 0.0)]"
    )

    def per_label(m: str) -> str:
        # + 0.0 makes -0.0 and 0.0 one threshold; a true label without a score is at -inf
        return f"""list_concat(
        list_transform(list_filter(map_entries({m}), lambda e: e.key IS NOT NULL AND e.value IS NOT NULL),
            lambda e: struct_pack(k := struct_pack(label := e.key),
                                  y := CAST(list_contains(actual, e.key) AS BIGINT),
                                  s := {number}(e.value, 'score', func) + 0.0)),
        list_transform(list_filter(list_distinct(actual), lambda x: map_extract_value({m}, x) IS NULL),
            lambda x: struct_pack(k := struct_pack(label := x), y := CAST(1 AS BIGINT),
                                  s := CAST('-inf' AS DOUBLE))))"""

    doc = "The curve cells (label struct k, y, s) of a known row."
    # the list made a MAP once per row (a lambda binds it)
    as_map = f"list_transform([{q('_mlsql_scores_map')}(score)], lambda m: {per_label('m')})[1]"
    entries = [
        Macro(
            FILE,
            "_mlsql_curve_cells",
            ("actual", f"score {t}", "func"),
            as_map,
            doc,
            public=False,
        )
        for t in ENTRY_TYPES
    ]
    return [
        Macro(
            FILE,
            "_mlsql_curve_cells",
            ("actual", "score DOUBLE", "func"),
            binary,
            doc,
            public=False,
        ),
        *entries,
        Macro(
            FILE,
            "_mlsql_curve_cells",
            ("actual", "score", "func"),
            per_label("score"),
            doc,
            public=False,
        ),
    ]


def known_row(inputs: str, weighted: bool) -> str:
    """The filter of the known rows: ``inputs`` (SQL: the inputs are not NULL), and weighted, a
    weight > 0. The weight is tested first in one CASE, which the optimizer does not split, so
    every row's weight is checked, as in Polars and Spark, a known row's or not."""
    return f"CASE WHEN w > 0 THEN {inputs} ELSE false END" if weighted else inputs


def _curve(q: Qualify, ops: SqlOps, name: str, weighted: bool, native: bool = False) -> str:
    """The body of table macro ``name``: one row per (group, label, threshold), +inf first.

    ``weighted``: each row counts its ``sample_weight`` (checked), and a row weighing 0 is
    dropped, as scikit-learn drops it (no threshold of its own); else each row counts 1.
    """
    s = CV.CurveStats(tp=Sql("tp"), fp=Sql("fp"), n_positive=Sql("pos"), n_negative=Sql("neg"))
    columns = formula(name)(ops, s, zero_division=Sql("zd"))
    if name in CV.COUNTS:  # DOUBLE, as Polars and Spark give them (sums of weights or not)
        columns = {col: Sql(f"CAST({expr} AS DOUBLE)") for col, expr in columns.items()}
    select = ",\n               ".join(f"{expr} AS {col}" for col, expr in columns.items())
    w_name, weight = _row_weight(q, name, weighted)
    outputs = CV.output_columns(name)
    rows = f"(SELECT *, {weight} AS w FROM ({_columns(name, 'actual', 'score', *w_name, q=q, outputs=outputs)}))"
    # n: the cells' total weight; m: their number (how the unscored rows are found)

    def unscored(per_label: str) -> str:
        """The rows that neither score a label nor hold it, as its negatives at -inf;
        ``per_label``: each (g, k)'s cell weight n and rows m."""
        return f"""    -- the rows that neither score a label nor hold it: negatives at -inf
    unscored AS (
        SELECT per_label.g, k, CAST('-inf' AS DOUBLE) AS s, 0 AS hits,
               known_rows.n - per_label.n AS n
        FROM ({per_label}) per_label
        JOIN known_rows ON per_label.g IS NOT DISTINCT FROM known_rows.g
        WHERE known_rows.m > per_label.m),
"""

    if native:
        # one aggregate per group: the native cells (score NULL: a true label without a
        # score, at -inf as in the portable cells), the known rows' weight and number
        cells = f"{q('_mlsql_native_curve_cells')}(__mlsql_actual, __mlsql_score, w, '{name}')"
        number = q("_mlsql_number")
        head = f"""WITH known AS (
        SELECT g, __mlsql_actual, __mlsql_score, w
        FROM {rows}
        WHERE {known_row("__mlsql_actual IS NOT NULL AND __mlsql_score IS NOT NULL", weighted)}),
    grouped AS (SELECT g, {cells} AS cells, sum(w) AS n, count(*) AS m FROM known GROUP BY g),
    known_rows AS (SELECT g, n, m FROM grouped),
    native_cells AS (
        SELECT g, c.k AS k, coalesce({number}(c.s, 'score', '{name}') + 0.0, CAST('-inf' AS DOUBLE)) AS s,
               c.hits AS hits, c.n AS n, c.m AS m
        FROM (SELECT g, unnest(cells) AS c FROM grouped)),
    steps AS (SELECT g, k, s, sum(hits) AS hits, sum(n) AS n FROM native_cells GROUP BY g, k, s),
{unscored("SELECT g, k, sum(n) AS n, any_value(m) AS m FROM native_cells GROUP BY g, k")}"""
    else:
        cells = f"{q('_mlsql_curve_cells')}(__mlsql_actual, __mlsql_score, '{name}')"
        # the known rows are read twice (their number per group, their cells): NOT MATERIALIZED,
        # or DuckDB would hold every row's cells (1.9 GB at 10M rows)
        head = f"""WITH known AS NOT MATERIALIZED (
        SELECT g, {cells} AS cells, w
        FROM {rows}
        WHERE {known_row("__mlsql_actual IS NOT NULL AND __mlsql_score IS NOT NULL", weighted)}),
    known_rows AS (SELECT g, sum(w) AS n, count(*) AS m FROM known GROUP BY g),
    steps AS (
        SELECT g, c.k AS k, c.s AS s, sum(c.y * w) AS hits, sum(w) AS n, count(*) AS m
        FROM (SELECT g, w, unnest(cells) AS c FROM known) GROUP BY g, c.k, c.s),
{unscored("SELECT g, k, sum(n) AS n, sum(m) AS m FROM steps GROUP BY g, k")}"""
    checks = (
        "NULL AS zd"
        if name in CV.COUNTS
        else f"{q('_mlsql_check_zero_division')}(zero_division, '{name}') AS zd"
    )
    where = ""
    neighbours = (
        CV.CurvePoint(Sql("prev_t"), Sql("prev_fp"), Sql("prev_tp")),
        CV.CurvePoint(Sql("threshold"), Sql("fp"), Sql("tp")),
        CV.CurvePoint(Sql("next_t"), Sql("next_fp"), Sql("next_tp")),
    )
    if name in CV.DROPS:
        checks += f", {check_param(CV.DI, q, name)} AS di"
    if name == "det_curve":
        where = f"\n        WHERE {CV.det_point_kept(*neighbours, Sql('top'))}"
    elif name in CV.DROPS:
        where = f"\n        WHERE NOT di OR {CV.dropped_point_kept(name, *neighbours)}"
    elif name in CV.COUNTS:
        where = f"\n        WHERE {CV.counts_point_kept(neighbours[1])}"
    return (
        head
        + f"""    thresholds AS (
        SELECT g, k, s, sum(hits) AS hits, sum(n) AS n
        FROM (SELECT g, k, s, hits, n FROM steps
              UNION ALL SELECT g, k, s, hits, n FROM unscored) GROUP BY g, k, s),
    cumulative AS (
        SELECT g, k, s AS threshold,
               sum(hits) OVER w AS tp, sum(n - hits) OVER w AS fp,
               sum(hits) OVER (PARTITION BY g, k) AS pos,
               sum(n - hits) OVER (PARTITION BY g, k) AS neg
        FROM thresholds
        WINDOW w AS (PARTITION BY g, k ORDER BY s DESC ROWS UNBOUNDED PRECEDING)),
    params AS (SELECT {checks}),
{_points(name, neighbours)}
    SELECT COLUMNS({KEEP}) FROM (
        SELECT unnest(g), unnest(k), threshold,
               {select},
               g AS __mlsql_g, k AS __mlsql_k
        FROM points CROSS JOIN params{where})
    ORDER BY __mlsql_g, __mlsql_k, threshold DESC"""
    )


def _points(name: str, neighbours: tuple[CV.CurvePoint, ...]) -> str:
    """The ``points`` CTE, the last of the query: the cumulative counts of every threshold and the +inf point; for a
    curve of :data:`mlsql.measures.curves.FILTERED` each with its neighbours' (before the
    +inf point (+inf, -1, -1), after the last (-inf, -1, -1)) and the last cumulative tp,
    which the rules of :mod:`mlsql.measures.curves` read. DET's points are those
    ``drop_intermediate`` keeps (``neighbours``: the columns of :func:`_near`), their
    neighbours taken again after the drop: scikit-learn trims the curve it has thinned."""
    every = """SELECT g, k, threshold, tp, fp, pos, neg FROM cumulative
        UNION ALL
        SELECT DISTINCT g, k, CAST('inf' AS DOUBLE), 0, 0, pos, neg FROM cumulative"""
    if name not in CV.FILTERED:
        return f"""    points AS (
        {every})"""
    if name != "det_curve":
        return f"""    every_point AS (
        {every}),
    points AS ({_near("every_point")})"""
    return f"""    every_point AS (
        {every}),
    near_point AS ({_near("every_point")}),
    thinned AS (
        SELECT g, k, threshold, tp, fp, pos, neg FROM near_point CROSS JOIN params
        WHERE NOT di OR {CV.dropped_point_kept(name, *neighbours)}),
    points AS ({_near("thinned")})"""


def _near(source: str) -> str:
    """SQL: the points of CTE ``source`` with their neighbours' threshold, tp and fp within
    their group and label by descending threshold, and the group's last tp (``top``)."""
    return f"""
        SELECT *,
               lag(threshold, 1, CAST('inf' AS DOUBLE)) OVER o AS prev_t,
               lag(tp, 1, -1) OVER o AS prev_tp, lag(fp, 1, -1) OVER o AS prev_fp,
               lead(threshold, 1, CAST('-inf' AS DOUBLE)) OVER o AS next_t,
               lead(tp, 1, -1) OVER o AS next_tp, lead(fp, 1, -1) OVER o AS next_fp,
               max(tp) OVER (PARTITION BY g, k) AS top
        FROM {source}
        WINDOW o AS (PARTITION BY g, k ORDER BY threshold DESC)"""


def _span(name: str) -> str:
    """Which thresholds curve ``name`` shows, as its macro's description says it."""
    if name == "det_curve":
        return "from the last with no false positive to the first with every positive found"
    if name in CV.COUNTS:
        return "from the highest"
    return "+inf first"


def _tables(q: Qualify, ops: SqlOps, native: bool) -> list[Macro]:
    """The curve tables, each twice: unweighted, and an overload taking
    ``sample_weight`` (a column name)."""
    return [
        Macro(
            FILE,
            name,
            (
                "source",
                "actual",
                "score",
                *(("sample_weight",) if weighted else ()),
                *(() if name in CV.COUNTS else ("zero_division := 0",)),
                *((f"{CV.DI.name} := {str(CV.DI.default).lower()}",) if name in CV.DROPS else ()),
                '"by" := NULL',
            ),
            _curve(q, ops, name, weighted, native),
            f"One row per (group, label of a score map, distinct score), {_span(name)}: "
            f"{', '.join(CV.COLUMNS[name])} (scikit-learn's {'counts' if name in CV.COUNTS else 'points'}"
            f"{', each row weighted by sample_weight' if weighted else ''}).",
            table=True,
        )
        for name in CV.COLUMNS
        for weighted in (False, True)  # overloads of one name stand together
    ]


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """The cells of a row and the curve tables (portable)."""
    return _cells(qualify) + _tables(qualify, ops, False)


# ------------------------------------------------------------------ native

#: the extension's cell aggregate (native/duckdb_ext.c) and its mode (MLSQL_LS_CELLS)
NATIVE_CELLS, CELLS_MODE = _native.LABEL_CELLS, 3


def native_helpers(q: Qualify) -> list[Macro]:
    """The macros over the extension's cell aggregate: ``_mlsql_native_label_cells(a, k, v,
    w)`` on the label list types (other label types compared as text, the labels cast back),
    and a score map's or list's labels and scores (``_mlsql_native_keys``,
    ``_mlsql_native_values``: the list's entries as they stand, the aggregate keeps a label's
    first; a map's scores checked as numbers)."""
    cells, number = "_mlsql_native_label_cells", q("_mlsql_number")
    doc = (
        "The native cell aggregate over (true labels, score labels, scores, weight): per "
        "(label, score) the positive and negative weight and the label's rows."
    )
    agg = f"{NATIVE_CELLS}(a, k, v, CAST(w AS DOUBLE), {CELLS_MODE})"
    text = (
        f"list_transform({NATIVE_CELLS}(CAST(a AS VARCHAR[]), CAST(k AS VARCHAR[]), v, "
        f"CAST(w AS DOUBLE), {CELLS_MODE}), lambda c: struct_pack("
        "label := cast_to_type(c.label, any_value(k)[1]), score := c.score, pos := c.pos, "
        "neg := c.neg, rows := c.rows))"
    )
    keys_doc, values_doc = "A score map's or list's labels.", "A score map's or list's scores."
    return [
        *(
            Macro(FILE, cells, (f"a {t}", f"k {t}", "v", "w"), agg, doc, public=False)
            for t in NATIVE_SCORE_LISTS
        ),
        Macro(FILE, cells, ("a", "k", "v", "w"), text, doc, public=False),
        *(
            Macro(
                FILE,
                "_mlsql_native_keys",
                (f"scores {t}",),
                "list_transform(scores, lambda e: e.label)",
                keys_doc,
                public=False,
            )
            for t in ENTRY_TYPES
        ),
        Macro(FILE, "_mlsql_native_keys", ("scores",), "map_keys(scores)", keys_doc, public=False),
        *(
            Macro(
                FILE,
                "_mlsql_native_values",
                (f"scores {t}", "name", "func"),
                "list_transform(scores, lambda e: e.score)",
                values_doc,
                public=False,
            )
            for t in ENTRY_TYPES
        ),
        Macro(
            FILE,
            "_mlsql_native_values",
            ("scores", "name", "func"),
            f"list_transform(map_values(scores), lambda x: {number}(x, name, func))",
            values_doc,
            public=False,
        ),
    ]


def _native_curve_cells(q: Qualify) -> list[Macro]:
    """``_mlsql_native_curve_cells(actual, score, w, func)``: an aggregate macro, the group's
    (k, s, hits, n, m) cells from the extension: k the label struct, s the score (NULL: a
    true label without one), hits and n the positive and total weight, m the label's rows.
    A numeric score (the DOUBLE overload) is one label."""
    flag, number = q("_mlsql_binary_flag"), q("_mlsql_number")
    cells = q("_mlsql_native_label_cells")

    def out(k: str) -> str:
        return f"lambda c: struct_pack(k := {k}, s := c.score, hits := c.pos, n := c.pos + c.neg, m := c.rows)"

    binary = (
        f"list_transform({cells}(CASE WHEN {flag}(actual, 'actual', func) THEN [1] "
        f"ELSE CAST([] AS INTEGER[]) END, [1], [{number}(score, 'score', func)], w), "
        f"{out(f'struct_pack({BINARY} := true)')})"
    )

    def per_label(keys: str, values: str) -> str:
        return (
            f"list_transform({cells}(CASE WHEN false THEN {keys} ELSE actual END, "
            f"CASE WHEN false THEN actual ELSE {keys} END, {values}, w), "
            f"{out('struct_pack(label := c.label)')})"
        )

    doc = "The native curve cells of a group (label struct k, s, hits, n, m)."
    name = "_mlsql_native_curve_cells"
    # typed overloads: a macro without types binds the macros it calls when it is made
    entries = per_label(
        "list_transform(score, lambda e: e.label)", "list_transform(score, lambda e: e.score)"
    )
    a_map = per_label(
        "map_keys(score)",
        f"list_transform(map_values(score), lambda x: {number}(x, 'score', func))",
    )
    return [
        Macro(FILE, name, ("actual", "score DOUBLE", "w", "func"), binary, doc, public=False),
        *(
            Macro(FILE, name, ("actual", f"score {t}", "w", "func"), entries, doc, public=False)
            for t in ENTRY_TYPES
        ),
        Macro(FILE, name, ("actual", "score", "w", "func"), a_map, doc, public=False),
    ]


def native_overrides(qualify: Qualify) -> list[Macro]:
    """The curve tables over the extension's cell aggregate (same names, overloads and
    results as :func:`macros`): one aggregate per group, where the portable tables spread
    each row into its cells first."""
    ops = SqlOps(qualify)
    return native_helpers(qualify) + _native_curve_cells(qualify) + _tables(qualify, ops, True)
