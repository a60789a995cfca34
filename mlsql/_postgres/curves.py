"""The score curves of the PostgreSQL library: ``precision_recall_curve``, ``roc_curve``,
``det_curve`` and ``confusion_matrix_at_thresholds`` as set-returning functions over a
table, as DuckDB's table macros take one: ``SELECT * FROM roc_curve('preds', 'actual',
'score')``.

A curve's rows are the distinct scores, so no state smaller than they are holds it: the
function runs one query over the table (read as a ``regclass``, its columns quoted as
identifiers) that counts the positives and rows of each distinct score in a hash
aggregate and takes cumulative sums over them sorted (window functions): memory of the
order of the distinct scores, PostgreSQL's sort spilling to disk beyond ``work_mem``.
The points, their values and which stay (``drop_intermediate``, DET's trimming) are the
registry's (:mod:`mlsql.measures.curves`), as the DuckDB macros compute them.

A score column against a boolean or 0/1 label: the per-label curves of score maps need a
map type, which PostgreSQL has not. ``by`` is an error saying how to group (a result's
columns are fixed in PostgreSQL).
"""

from __future__ import annotations

from mlsql._front.build import formula
from mlsql._postgres.forms import create_type
from mlsql._postgres.messages import boolean_check
from mlsql._postgres.ops import PgSql, RowOps, pg_lit
from mlsql.measures import curves as CV

FAMILY = CV.FAMILY
#: each curve's row type (a composite type: RETURNS TABLE's columns would be parameters)
ROW_TYPES = {name: f"mlsql_{name}_row" for name in CV.COLUMNS}
BY_MESSAGE = (
    "{func} takes no 'by' in PostgreSQL (a result's columns are fixed there): call it over a "
    "view (or table) of one group's rows, once per group."
)
#: a curve's points and their neighbours within the curve (before the +inf point (+inf, -1,
#: -1), after the last (-inf, -1, -1)), and the curve's last tp
NEAR = """
      SELECT *,
        lag(threshold, 1, 'Infinity'::float8) OVER o AS prev_t,
        lag(tp, 1, -1) OVER o AS prev_tp, lag(fp, 1, -1) OVER o AS prev_fp,
        lead(threshold, 1, '-Infinity'::float8) OVER o AS next_t,
        lead(tp, 1, -1) OVER o AS next_tp, lead(fp, 1, -1) OVER o AS next_fp,
        max(tp) OVER () AS top
      FROM {source}
      WINDOW o AS (ORDER BY threshold DESC)"""
NEIGHBOURS = (
    CV.CurvePoint(PgSql("prev_t"), PgSql("prev_fp"), PgSql("prev_tp")),
    CV.CurvePoint(PgSql("threshold"), PgSql("fp"), PgSql("tp")),
    CV.CurvePoint(PgSql("next_t"), PgSql("next_fp"), PgSql("next_tp")),
)


def included(name: str) -> bool:
    """Whether the library holds table ``name``: every curve."""
    return name in CV.COLUMNS


def _points(name: str) -> str:
    """The ``points`` CTE: every threshold's cumulative counts and the +inf point; a
    filtered curve's with their neighbours (DET's taken again after the drop, as
    scikit-learn trims the curve it has thinned)."""
    every = """SELECT threshold, tp, fp, pos, neg FROM cumulative
      UNION ALL SELECT DISTINCT 'Infinity'::float8, 0, 0, pos, neg FROM cumulative"""
    if name not in CV.FILTERED:
        return f"points AS (\n      {every})"
    if name != "det_curve":
        return f"every_point AS (\n      {every}),\n    points AS ({NEAR.format(source='every_point')})"
    thinned = pg_lit(CV.dropped_point_kept(name, *NEIGHBOURS))
    return (
        f"every_point AS (\n      {every}),\n"
        f"    near_point AS ({NEAR.format(source='every_point')}),\n"
        f"    thinned AS (SELECT threshold, tp, fp, pos, neg FROM near_point CROSS JOIN params"
        f" WHERE NOT di OR {thinned}),\n"
        f"    points AS ({NEAR.format(source='thinned')})"
    )


def _kept(name: str) -> str:
    if name == "det_curve":
        return str(pg_lit(CV.det_point_kept(*NEIGHBOURS, PgSql("top"))))
    if name in CV.DROPS:
        return f"NOT di OR {pg_lit(CV.dropped_point_kept(name, *NEIGHBOURS))}"
    return str(pg_lit(CV.counts_point_kept(NEIGHBOURS[1])))


def known_rows(func: str, score: str, check: str = "_mlsql_finite") -> str:
    """The ``known`` CTE of a table over scores, a ``format`` template (%1$I the label
    column, %2$I the score's, %3$s the table, %4$s the row's weight): y 1.0 or 0.0, the
    score ``s`` (``check``: finite, or a probability), ``w``; the rows with both sides and a
    weight > 0. As DuckDB's tables: every row's weight is checked, a label where it is known,
    a score where its label is (the filter adds the three tests, so none is skipped)."""
    return f"""checked AS (
      SELECT CASE WHEN _mlsql_binary_flag(%1$I, 'actual', {func}) THEN 1.0
          WHEN %1$I IS NOT NULL THEN 0.0 END AS y,
        {check}(CASE WHEN %1$I IS NOT NULL THEN %2$I END, {pg_lit(score)}, {func}) + 0.0 AS s,
        %4$s AS w
      FROM %3$s),
    known AS (
      SELECT y, s, w FROM checked
      WHERE (y IS NOT NULL)::int + (s IS NOT NULL)::int + coalesce((w > 0)::int, 0) = 3)"""


def query(name: str) -> str:
    """The curve's query, a ``format`` template: %1$I the label column, %2$I the score's,
    %3$s the table, %4$s the row's weight (SQL); $1 the coded zero_division, $2
    drop_intermediate."""
    s = CV.CurveStats(PgSql("tp"), PgSql("fp"), PgSql("pos"), PgSql("neg"))
    values = formula(name)(RowOps(), s, zero_division=PgSql("zd"))
    select = ", ".join(f"({pg_lit(v)})::float8" for v in values.values())
    func = pg_lit(name)
    return f"""WITH {known_rows(str(func), "score")},
    steps AS (
      SELECT s, sum(y * w) AS hits, sum(w) AS n FROM known GROUP BY s),
    cumulative AS (
      SELECT s AS threshold, sum(hits) OVER o AS tp, sum(n - hits) OVER o AS fp,
        sum(hits) OVER () AS pos, sum(n - hits) OVER () AS neg
      FROM steps WINDOW o AS (ORDER BY s DESC ROWS UNBOUNDED PRECEDING)),
    params AS (SELECT $1::float8 AS zd, $2::boolean AS di),
    {_points(name)}
    SELECT threshold, {select} FROM points CROSS JOIN params
    WHERE {_kept(name)} ORDER BY threshold DESC"""


def _function(name: str, create: str) -> str:
    zd = name not in CV.COUNTS
    drops = name in CV.DROPS
    params = ["source text", "actual text", "score text", "sample_weight text DEFAULT NULL"]
    params += ["zero_division anycompatible DEFAULT 0"] if zd else []
    params += ["drop_intermediate boolean DEFAULT false"] if drops else []
    params.append("by text[] DEFAULT NULL")
    func = pg_lit(name)
    checked_zd = f"_mlsql_check_zero_division(zero_division, {func})" if zd else "NULL"
    checked_di = f"_mlsql_check_drop_intermediate(drop_intermediate, {func})" if drops else "false"
    by = pg_lit(BY_MESSAGE.format(func=name))
    return f"""-- {name}(source, actual, score, ...): {CV.COLUMNS[name]} over a table.
{create} FUNCTION {name}({", ".join(params)})
RETURNS SETOF {ROW_TYPES[name]}
LANGUAGE plpgsql STABLE AS $f$
DECLARE
  weight text := CASE WHEN sample_weight IS NULL THEN '1'
    ELSE format('_mlsql_weight(%I, %L)', sample_weight, {func}) END;
  zd float8 := {checked_zd};
  di boolean := {checked_di};
BEGIN
  IF by IS NOT NULL THEN RAISE EXCEPTION USING MESSAGE = {by}; END IF;
  RETURN QUERY EXECUTE format($q$
    {query(name)}
  $q$, actual, score, source::regclass, weight) USING zd, di;
END
$f$;"""


def helpers(create: str) -> list[str]:
    """The curves' row types and the check of ``drop_intermediate`` (NULL is DuckDB's
    error)."""
    out = [boolean_check(CV.DI, create)]
    for name, columns in CV.COLUMNS.items():
        fields = ", ".join(f"{c} float8" for c in columns)
        out.append(
            f"-- {ROW_TYPES[name]}: a row of {name}.\n"
            + create_type(ROW_TYPES[name], fields, create)
        )
    return out


def tables(create: str) -> list[str]:
    """Each curve over a table."""
    return [_function(name, create) for name in CV.COLUMNS]
