"""``multilabel_report`` in the PostgreSQL library: one row of every label-set measure.

As ``label_metrics`` (:mod:`mlsql._postgres.label_tables`), two forms: over a table
(``SELECT * FROM multilabel_report('preds', 'actual', 'predicted')``) and over a group's
``label_counts`` (``LATERAL multilabel_report(s.counts)``). ``label_counts`` keeps, beside
each label's counts, a histogram of the rows' (tp, |A|, |P|) (bounded by the distinct
triples, a few hundred where rows hold a few labels), which the samples averages and
subset accuracy read. A universe of ``labels`` changes those rows, so it is given to
``label_counts`` (``label_counts(actual, predicted, 1, ARRAY['a', 'b'])``), not here.

The values are the registry's three stages (:func:`~mlsql.measures.label_based.label_values`
and :func:`~mlsql.measures.label_based.label_aggregates` over the labels,
:func:`~mlsql.measures.label_based.row_values` and
:func:`~mlsql.measures.label_based.row_aggregates` over the histogram, then
:func:`~mlsql.measures.label_based.group_columns`). The columns are DuckDB's
(:data:`~mlsql.measures.label_based.REPORT_COLUMNS`), the F-beta ones always among them
(NULL without ``beta``, where DuckDB gives the F-beta columns in place of the F1 ones).
"""

from __future__ import annotations

from typing import Any

from mlsql._formulas import RowStats
from mlsql._postgres.forms import create_type
from mlsql._postgres.label_based import STATE_TYPE
from mlsql._postgres.label_tables import table_form
from mlsql._postgres.ops import Axis, Lets, PgSql, RowOps, fill, param, pg_lit
from mlsql.measures import label_based as LB

#: the report's row type
ROW_TYPE = "mlsql_multilabel_report_row"
#: the F-beta columns, NULL without beta
FBETA = tuple(c for c in LB.REPORT_COLUMNS if "fbeta" in c)
BY_MESSAGE = (
    "multilabel_report takes no 'by' in PostgreSQL (a result's columns are fixed there): "
    "group with the aggregate label_counts and read each group's counts, as in SELECT s.g, "
    "r.* FROM (SELECT g, label_counts(actual, predicted) AS counts FROM t GROUP BY g) s, "
    "LATERAL multilabel_report(s.counts) r."
)


def helpers(create: str) -> list[str]:
    """The report's row type, and ``_mlsql_label_universe(st, labels)``: counts of no rows
    given the universe the step would have given them at a first row (so that a table
    without rows reports its universe's labels, as every engine does)."""
    fields = ", ".join(f'"{c}" float8' for c in LB.REPORT_COLUMNS)
    return [
        f"-- {ROW_TYPE}: a row of multilabel_report.\n" + create_type(ROW_TYPE, fields, create),
        f"""{create} FUNCTION _mlsql_label_universe(st {STATE_TYPE}, labels anyarray)
RETURNS {STATE_TYPE}
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
BEGIN
  IF labels IS NULL OR st.fixed OR st.rows > 0 THEN RETURN st; END IF;
  st.labels := _mlsql_check_universe(labels::text[], 'multilabel_report');
  st.fixed := true;
  st.tp := array_fill(0::float8, ARRAY[cardinality(st.labels)]);
  st.fp := st.tp;
  st.fn := st.tp;
  RETURN st;
END
$f$;""",
    ]


def _query() -> str:
    """The report's row over the state ``st``: the three stages as CTEs."""
    beta, zd = param("beta"), param("zero_division")
    counts = LB.LabelCounts(PgSql("k.tp"), PgSql("k.fp"), PgSql("k.fn"), PgSql("k.n_rows"))
    label_values = LB.label_values(RowOps(), counts, beta, zd)
    stats = RowStats(PgSql("r.tp"), PgSql("r.na"), PgSql("r.np"))
    row_values = LB.row_values(RowOps(), stats, beta, zd)
    lets = Lets()

    def cols(alias: str) -> Any:
        return lambda name: PgSql(f"{alias}.{name}")

    per_label = LB.label_aggregates(Axis(lets, "_val v"), cols("v"), zd)
    per_row = LB.row_aggregates(Axis(lets, "_row q"), cols("q"), PgSql("q.n"), zd)
    stage2 = {**per_label, **per_row}
    per_group = LB.group_columns(RowOps(), cols("a"), beta, zd)

    def listed(values: dict[str, Any]) -> str:
        return ", ".join(f"{pg_lit(e)}::float8 AS {n}" for n, e in values.items())

    out = []
    for c in LB.REPORT_COLUMNS:
        value = f"a.{c}" if c in stage2 else f"{pg_lit(per_group[c])}::float8"
        if c == "n_rows":  # 0 over no rows (the histogram's sum is NULL there)
            value = "st.n_rows"
        if c in FBETA:
            value = f"CASE WHEN v_beta IS NULL THEN NULL ELSE {value} END"
        out.append(value)
    shift = LB.CODE_BASE
    text = f"""WITH _lab AS MATERIALIZED (
    SELECT u.tp, u.fp, u.fn, st.n_rows AS n_rows
    FROM unnest(st.labels, st.tp, st.fp, st.fn) AS u(label, tp, fp, fn)
  ), _val AS MATERIALIZED (
    SELECT {listed(label_values)}, k.n_rows FROM _lab k
  ), _row AS MATERIALIZED (
    SELECT {listed(row_values)}, r.n FROM (
      SELECT ((u.code % {shift * shift}) / {shift})::float8 AS tp, (u.code % {shift})::float8 AS na,
        (u.code / {shift * shift})::float8 AS np, u.w AS n
      FROM unnest(st.codes, st.cw) AS u(code, w)) AS r
  ), _agg AS MATERIALIZED (
    SELECT {listed(stage2)}
  )
  SELECT {", ".join(out)} FROM _agg a"""
    return fill(text, {"beta": "v_beta", "zero_division": "v_zd"})


def over_counts(create: str) -> str:
    """``multilabel_report(counts, beta, zero_division)``: the row of a group's counts."""
    return f"""-- multilabel_report(counts[, beta, zero_division]): over a group's label_counts.
{create} FUNCTION multilabel_report(st {STATE_TYPE}, beta float8 DEFAULT NULL,
  zero_division anycompatible DEFAULT 0)
RETURNS SETOF {ROW_TYPE}
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $f$
DECLARE
  v_beta float8;
  v_zd float8;
BEGIN
  v_zd := _mlsql_check_zero_division(zero_division, 'multilabel_report');
  IF beta IS NOT NULL THEN v_beta := _mlsql_check_beta(beta, 'multilabel_report'); END IF;
  RETURN QUERY
  {_query()};
END
$f$;"""


def over_table(create: str) -> str:
    """The table form: the counts of the whole table (with the universe, where given: also
    over no rows), then the report over them."""
    counts = (
        "format('label_counts(%I, %I, %s, $1)', actual, predicted,"
        " coalesce(quote_ident(sample_weight), '1'))"
    )
    lateral = (
        "multilabel_report(_mlsql_label_universe(s.counts, $1), beta => $2, zero_division => $3)"
    )
    return table_form("multilabel_report", ROW_TYPE, BY_MESSAGE, counts, lateral, create)


def tables(create: str) -> list[str]:
    """multilabel_report's two forms."""
    return [over_counts(create), over_table(create)]
