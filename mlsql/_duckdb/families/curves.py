"""Precision-recall and ROC curves in DuckDB: table macros over a source.

``precision_recall_curve(source, actual, score, zero_division := 0, "by" :=
NULL)`` and ``roc_curve(...)`` read the source (a table or view name, a file
or a query, as the other table macros do) once: a hash aggregate counts the
known rows and positives per (group, distinct score), and window sums over
those counts, sorted by score from the highest within each group, give the
cumulative tp and fp of every threshold (DuckDB's sort spills to disk when it
must). The columns come from the registry's formulas
(:func:`mlsql.measures.curves.values`), and a row of threshold +inf is added
per group.
"""

from __future__ import annotations

from mlsql._duckdb.families.single_label import KEEP, _columns
from mlsql._duckdb.library import Macro, Qualify, sql_message
from mlsql._duckdb.ops import SqlOps
from mlsql._front.tables import by_output_message
from mlsql._sqlexpr import Sql, lit
from mlsql.measures import curves as CV

FILE = "curves.sql"
DESCRIPTION = (
    "Precision-recall and ROC curves as tables: one row per distinct threshold, "
    "scikit-learn's points."
)
ORDER = 45
FAMILIES: tuple[str, ...] = ()  # rendered here


def _curve(q: Qualify, ops: SqlOps, name: str) -> str:
    """The body of table macro ``name``: one row per (group, threshold), +inf first."""
    flag = f"{q('_mlsql_binary_flag')}(__mlsql_actual, 'actual', '{name}')"
    # + 0.0 makes -0.0 and 0.0 one threshold
    score = f"{q('_mlsql_number')}(__mlsql_score, 'score', '{name}') + 0.0"
    s = CV.CurveStats(tp=Sql("tp"), fp=Sql("fp"), n_positive=Sql("pos"), n_negative=Sql("neg"))
    columns = CV.values(ops, name, s, Sql("zd"))
    select = ",\n               ".join(f"{expr} AS {col}" for col, expr in columns.items())
    outputs = ", ".join(str(lit(c)) for c in CV.COLUMNS[name])
    clash = f'list_filter(coalesce("by", []), lambda b: lower(b) IN ({outputs}))[1]'
    clash_error = sql_message(by_output_message(name, "{}"), clash)
    return f"""WITH known AS (
        SELECT g, CAST({flag} AS BIGINT) AS y, {score} AS s
        FROM ({_columns("actual", "score")})
        WHERE __mlsql_actual IS NOT NULL AND __mlsql_score IS NOT NULL),
    steps AS (SELECT g, s, sum(y) AS hits, count(*) AS n FROM known GROUP BY g, s),
    cumulative AS (
        SELECT g, s AS threshold,
               sum(hits) OVER w AS tp, sum(n - hits) OVER w AS fp,
               sum(hits) OVER (PARTITION BY g) AS pos,
               sum(n - hits) OVER (PARTITION BY g) AS neg
        FROM steps
        WINDOW w AS (PARTITION BY g ORDER BY s DESC ROWS UNBOUNDED PRECEDING)),
    points AS (
        SELECT g, threshold, tp, fp, pos, neg FROM cumulative
        UNION ALL
        SELECT DISTINCT g, CAST('inf' AS DOUBLE), 0, 0, pos, neg FROM cumulative),
    params AS (
        SELECT CASE WHEN {clash} IS NOT NULL THEN error({clash_error})
               ELSE {q("_mlsql_check_zero_division")}(zero_division, '{name}') END AS zd)
    SELECT COLUMNS({KEEP}) FROM (
        SELECT unnest(g), threshold,
               {select},
               g AS __mlsql_g
        FROM points CROSS JOIN params)
    ORDER BY __mlsql_g, threshold DESC"""


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """The two curve tables."""
    return [
        Macro(
            FILE,
            name,
            ("source", "actual", "score", "zero_division := 0", '"by" := NULL'),
            _curve(qualify, ops, name),
            f"One row per (group, distinct score), +inf first: "
            f"{', '.join(CV.COLUMNS[name])} (scikit-learn's points).",
            table=True,
        )
        for name in CV.COLUMNS
    ]
