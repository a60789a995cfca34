"""``calibration_table`` in the PostgreSQL library: a set-returning function over a table, as
DuckDB's table macro takes one: ``SELECT * FROM calibration_table('preds', 'actual',
'prob', n_bins => 5)``.

One row per non-empty bin: ``bin``, ``low``, ``high``, ``count``, ``mean_score``,
``observed_rate`` (:mod:`mlsql.measures.thresholds`). ``strategy => 'uniform'`` (the
default) counts the rows per bin of ``expected_calibration_error`` in a hash aggregate;
``'quantile'`` cuts the bins at the table's percentiles, numpy's to the bit
(:func:`~mlsql.measures.thresholds.quantile_edge`), from its probabilities sorted into one
array (as any exact percentile holds them), and finds each row's bin among the inner edges.
"""

from __future__ import annotations

from mlsql import _classification_params as CP
from mlsql._front.build import formula
from mlsql._postgres.curves import known_rows
from mlsql._postgres.forms import create_type
from mlsql._postgres.messages import param_message, raise_statement
from mlsql._postgres.ops import PgSql, RowOps, pg_lit
from mlsql.measures import scores as SC
from mlsql.measures import thresholds as TH

NAME = "calibration_table"
ROW_TYPE = f"mlsql_{NAME}_row"
BY_MESSAGE = (
    "calibration_table takes no 'by' in PostgreSQL (a result's columns are fixed there): call "
    "it over a view (or table) of one group's rows, once per group."
)


class _Ops(RowOps):
    """:class:`RowOps` with ``floor`` (the bins and the percentiles' indices)."""

    def floor(self, x: object) -> PgSql:
        return PgSql(f"floor({pg_lit(x)})")


def query() -> str:
    """The table's query, a ``format`` template as the curves' (:func:`known_rows`); $1 the
    checked n_bins, $2 the strategy ('uniform' or 'quantile')."""
    ops = _Ops()
    nb = PgSql("nb")
    b = SC.calibration_bin(ops, PgSql("s"), nb)
    row = TH.CalibrationBin(PgSql("b"), PgSql("n"), PgSql("ps"), PgSql("pos"))
    values = formula("calibration_table")(ops, row, n_bins=nb)
    low, high = values.pop("low"), values.pop("high")
    lower, upper, t = TH.quantile_index(
        ops, PgSql("cardinality(v)"), TH.quantile_level(ops, PgSql("k"), nb)
    )
    edge = TH.quantile_edge(
        ops, PgSql(f"v[({pg_lit(lower)})::int + 1]"), PgSql(f"v[({pg_lit(upper)})::int + 1]"), t
    )
    select = ", ".join(f"({pg_lit(v)})::float8" for v in values.values())
    sums = "sum(w) AS n, sum(s * w) AS ps, sum(y * w) AS pos"
    func = pg_lit(NAME)
    return f"""WITH {known_rows(str(func), "prob", "_mlsql_probability")},
    params AS (SELECT $1::float8 AS nb, $2::text AS st),
    uniform AS (
      SELECT {pg_lit(b)} AS b, {sums} FROM known CROSS JOIN params
      WHERE st = 'uniform' GROUP BY 1),
    sorted AS (
      SELECT array_agg(s ORDER BY s) AS v FROM known CROSS JOIN params WHERE st = 'quantile'),
    edges AS (
      SELECT ARRAY(SELECT {pg_lit(edge)} FROM generate_series(0, nb::int) AS k ORDER BY k) AS e
      FROM sorted CROSS JOIN params WHERE cardinality(v) > 0),
    quantile AS (
      SELECT (SELECT count(*) FROM unnest(e.e[2:nb::int]) AS x WHERE x < known.s) AS b, {sums}
      FROM known CROSS JOIN edges AS e CROSS JOIN params GROUP BY 1),
    bins AS (
      SELECT b, ({pg_lit(low)})::float8 AS low, ({pg_lit(high)})::float8 AS high, n, ps, pos
      FROM uniform CROSS JOIN params
      UNION ALL
      SELECT q.b, e.e[q.b + 1], e.e[q.b + 2], n, ps, pos FROM quantile AS q CROSS JOIN edges AS e)
    SELECT b::bigint, low, high, {select} FROM bins CROSS JOIN params ORDER BY b"""


def helpers(create: str) -> list[str]:
    """The row type, ``_mlsql_probability`` (a finite probability in [0, 1]) and the check of
    ``strategy`` (text, lower-cased)."""
    columns = ", ".join(
        "bin bigint" if c == "bin" else f"{c} float8" for c in TH.CALIBRATION_COLUMNS
    )
    below, above = (
        f"replace(replace({pg_lit(CP.probability_value_message('{f}', '{n}', got))},"
        " '{f}', func), '{n}', name)"
        for got in CP.OUT_OF_RANGE
    )
    values = {"func": "func", "shown": "shown"}
    options = ", ".join(str(pg_lit(o)) for o in TH.STRATEGY.constraint.strings)
    return [
        f"-- {ROW_TYPE}: a row of {NAME}.\n" + create_type(ROW_TYPE, columns, create),
        f"""-- _mlsql_probability(x, name, func): a finite number in [0, 1], else DuckDB's error.
{create} FUNCTION _mlsql_probability(x anyelement, name text, func text) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
  SELECT CASE WHEN c.x < 0 THEN _mlsql_raise({below}, NULL::float8)
    WHEN c.x > 1 THEN _mlsql_raise({above}, NULL::float8) ELSE c.x END
  FROM (SELECT _mlsql_finite(x, name, func) AS x) AS c
$f$;""",
        f"""-- _mlsql_check_strategy(x, func): strategy, one of {options}.
{create} FUNCTION _mlsql_check_strategy(x text, func text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
DECLARE
  shown text := coalesce(chr(39) || x || chr(39), 'None');
BEGIN
  IF lower(x) IN ({options}) THEN
    RETURN lower(x);
  END IF;
  {raise_statement(param_message(TH.STRATEGY), values)}
END
$f$;""",
    ]


def tables(create: str) -> list[str]:
    """The table over a table (its parameters by name, as DuckDB's)."""
    func = pg_lit(NAME)
    return [
        f"""-- {NAME}(source, actual, prob, ...): over a table, as DuckDB's table macro.
{create} FUNCTION {NAME}(source text, actual text, prob text, sample_weight text DEFAULT NULL,
  n_bins anyelement DEFAULT {int(SC.N_BINS.default)}, strategy text DEFAULT {pg_lit(TH.STRATEGY.default)},
  by text[] DEFAULT NULL)
RETURNS SETOF {ROW_TYPE}
LANGUAGE plpgsql STABLE AS $f$
DECLARE
  weight text := CASE WHEN sample_weight IS NULL THEN '1'
    ELSE format('_mlsql_weight(%I, %L)', sample_weight, {func}) END;
  nb float8 := _mlsql_check_n_bins(n_bins, {func});
  st text := _mlsql_check_strategy(strategy, {func});
BEGIN
  IF by IS NOT NULL THEN RAISE EXCEPTION USING MESSAGE = {pg_lit(BY_MESSAGE)}; END IF;
  RETURN QUERY EXECUTE format($q$
    {query()}
  $q$, actual, prob, source::regclass, weight) USING nb, st;
END
$f$;"""
    ]
