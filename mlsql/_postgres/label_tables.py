"""``label_metrics`` in the PostgreSQL library: one row per label, a set-returning function.

Two forms, as the single-label tables (:mod:`mlsql._postgres.class_tables`):

- over a table, as DuckDB's table macro: ``SELECT * FROM label_metrics('preds', 'actual',
  'predicted')``, the table's name read as a ``regclass`` and the columns quoted as
  identifiers; no ``by`` (a result's columns are fixed in PostgreSQL);
- over a group's counts: the aggregate ``label_counts(actual, predicted[, sample_weight[,
  labels]])`` keeps the label averages' state
  (:data:`~mlsql._postgres.label_based.STATE_TYPE`: each label's tp, fp and fn, bounded by
  the group's labels), and ``label_metrics(counts[, labels, beta, zero_division])`` reads
  it: ``SELECT s.model, m.* FROM (SELECT model, label_counts(actual, predicted) AS counts
  FROM preds GROUP BY model) s, LATERAL label_metrics(s.counts) m``.

A label's counts do not depend on the other labels, so ``labels`` is applied to the
counts: the universe's labels in its order, those never seen with zero counts. Labels
come back as ``text``; the columns are DuckDB's, ``fbeta`` always among them (NULL
without ``beta``, where DuckDB leaves it out). The values are the registry's
(:func:`mlsql.measures.label_based.label_values`).
"""

from __future__ import annotations

from mlsql._front.build import formula
from mlsql._postgres.forms import create_aggregates, create_type
from mlsql._postgres.label_based import (
    INIT,
    KIND_CHECK,
    LIST_TYPES,
    STATE_TYPE,
    mismatched,
    step,
)
from mlsql._postgres.ops import PgSql, RowOps, fill, param, pg_lit
from mlsql.measures import label_based as LB

#: label_metrics' row type: a composite type (RETURNS TABLE's columns would be variables of
#: the function, beside its parameters)
ROW_TYPE = "mlsql_label_metrics_row"
#: the message of ``by`` in the table form
BY_MESSAGE = (
    "label_metrics takes no 'by' in PostgreSQL (a result's columns are fixed there): group "
    "with the aggregate label_counts and read each group's counts, as in SELECT s.g, m.* FROM "
    "(SELECT g, label_counts(actual, predicted) AS counts FROM t GROUP BY g) s, LATERAL "
    "label_metrics(s.counts) m."
)


def helpers(create: str) -> list[str]:
    """The row type and ``label_counts``: per list type, over (actual, predicted), weighted,
    and with a universe."""
    fields = ", ".join(f'"{c}" {"text" if c == "label" else "float8"}' for c in LB.LABEL_COLUMNS)
    out = [f"-- {ROW_TYPE}: a row of label_metrics.\n" + create_type(ROW_TYPE, fields, create)]
    for list_type in LIST_TYPES:
        forms: list[tuple[list[tuple[str, str]], bool]] = [
            ([], False),
            ([("sample_weight", "float8")], True),
            ([("sample_weight", "float8"), ("labels", "anyarray")], True),
        ]
        for args, weighted in forms:
            out.append(step("label_counts", list_type, args, weighted, [], create, keep=True))
            signature = ", ".join([list_type, list_type, *(t for _, t in args)])
            out += create_aggregates(
                create,
                ("label_counts",),
                signature,
                "_mlsql_label_counts_step",
                INIT,
                None,
                STATE_TYPE,
            )
    two_kinds = [[(n, "anyarray" if n == "labels" else t) for n, t in args] for args, _ in forms]
    return out + mismatched("label_counts", two_kinds, create)


def _values() -> str:
    """The row's columns after ``label``: the registry's values of ``_lab k``'s counts."""
    counts = LB.LabelCounts(PgSql("k.tp"), PgSql("k.fp"), PgSql("k.fn"), PgSql("k.n_rows"))
    values = formula("label_metrics")(
        RowOps(), counts, beta=param("beta"), zero_division=param("zero_division")
    )
    listed = []
    for name in LB.LABEL_COLUMNS[1:]:
        value = f"{pg_lit(values[name])}::float8"
        if name == "fbeta":  # a column only where beta is given
            value = f"CASE WHEN v_beta IS NULL THEN NULL ELSE {value} END"
        listed.append(value)
    return fill(", ".join(listed), {"beta": "v_beta", "zero_division": "v_zd"})


def over_counts(create: str) -> str:
    """``label_metrics(counts, labels, beta, zero_division)``: the rows of a group's counts."""
    return f"""-- label_metrics(counts[, labels, beta, zero_division]): over a group's label_counts.
{create} FUNCTION label_metrics(st {STATE_TYPE}, labels anyarray DEFAULT NULL::text[],
  beta float8 DEFAULT NULL, zero_division anycompatible DEFAULT 0)
RETURNS SETOF {ROW_TYPE}
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $f$
DECLARE
  v_beta float8;
  v_zd float8;
  v_kind text;
  v_universe text[];
BEGIN
  v_zd := _mlsql_check_zero_division(zero_division, 'label_metrics');
  IF beta IS NOT NULL THEN v_beta := _mlsql_check_beta(beta, 'label_metrics'); END IF;
  IF labels IS NOT NULL THEN
{KIND_CHECK.replace("FUNC_", "'label_metrics'")}
    v_universe := _mlsql_check_universe(labels::text[], 'label_metrics');
  END IF;
  RETURN QUERY
  WITH _seen AS (
    SELECT u.label, u.pos, u.tp, u.fp, u.fn
    FROM unnest(st.labels, st.tp, st.fp, st.fn) WITH ORDINALITY AS u(label, tp, fp, fn, pos)
  ), _lab AS (
    SELECT s.label, s.pos::float8 AS pos, s.tp, s.fp, s.fn, st.n_rows AS n_rows
    FROM _seen s WHERE v_universe IS NULL
    UNION ALL
    SELECT x.label, x.pos::float8, coalesce(s.tp, 0), coalesce(s.fp, 0), coalesce(s.fn, 0),
      st.n_rows
    FROM unnest(v_universe) WITH ORDINALITY AS x(label, pos) LEFT JOIN _seen s ON s.label = x.label
  )
  SELECT k.label, {_values()}
  FROM _lab k
  ORDER BY CASE WHEN v_universe IS NOT NULL OR st.fixed THEN k.pos END,
    CASE WHEN st.numeric THEN k.label::numeric END, k.label COLLATE "C";
END
$f$;"""


def table_form(name: str, row_type: str, by: str, counts: str, lateral: str, create: str) -> str:
    """A table over a table, as DuckDB's table macro: ``counts`` (a ``format`` of the
    columns, each quoted as an identifier) over the table read as a ``regclass``, then
    ``lateral`` over them (``s.counts``; the parameters $1 labels, $2 beta, $3
    zero_division); ``by`` is an error saying how to group."""
    return f"""-- {name}(source, actual, predicted, ...): over a table, as DuckDB's table macro.
{create} FUNCTION {name}(source text, actual text, predicted text,
  sample_weight text DEFAULT NULL, labels anyarray DEFAULT NULL::text[],
  beta float8 DEFAULT NULL, zero_division anycompatible DEFAULT 0, by text[] DEFAULT NULL)
RETURNS SETOF {row_type}
LANGUAGE plpgsql STABLE AS $f$
BEGIN
  IF by IS NOT NULL THEN RAISE EXCEPTION USING MESSAGE = {pg_lit(by)}; END IF;
  RETURN QUERY EXECUTE format('SELECT m.* FROM (SELECT %s AS counts FROM %s) AS s,
    LATERAL {lateral} AS m', {counts}, source::regclass) USING labels, beta, zero_division;
END
$f$;"""


def over_table(create: str) -> str:
    """label_metrics over a table: the labels applied to the counts of the whole table."""
    counts = (
        "format('label_counts(%I, %I%s)', actual, predicted,"
        " coalesce(', ' || quote_ident(sample_weight), ''))"
    )
    lateral = "label_metrics(s.counts, labels => $1, beta => $2, zero_division => $3)"
    return table_form("label_metrics", ROW_TYPE, BY_MESSAGE, counts, lateral, create)


def tables(create: str) -> list[str]:
    """label_metrics' two forms."""
    return [over_counts(create), over_table(create)]
