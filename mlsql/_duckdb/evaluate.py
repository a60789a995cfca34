"""``mlsql.evaluate`` on DuckDB: every measure's macro in one ``GROUP BY``, then unpivoted.

The source is read as ``bootstrap`` reads it (:func:`mlsql._duckdb.resample._source`:
a table or view name, a query, a path, a relation or a DataFrame); the checks and
messages are :mod:`mlsql._evaluate.front`'s. Memory is DuckDB's for the measures'
aggregates: each holds per group what its macro holds (counts for the set and class
measures; the rows' values for the sort-based AUC, AP and the medians). The regression
measures, whose macros hold each group's values until its mean is known, run instead as
grouped passes (:mod:`mlsql._duckdb.evaluate_regression`): a few numbers per group. The
class-wise single-label measures (f1_score, precision_score, matthews_corrcoef, ...) read each
group's class lists, built once for all of them (from the rows' cells with
``sample_weight``: memory groups x cells), through their formula macros
(:mod:`mlsql._duckdb.evaluate_classes`). The label-set aggregates (micro_*, samples_*,
subset_accuracy, ...) are their formulas written into the query, their parameters checked
once as constants (:mod:`mlsql._duckdb.evaluate_sets`). The per-label
averages of label lists (macro_*, weighted_*, ...) are their aggregate macros, two levels
in one: per (group, label) counts, then the registry's per-label formulas averaged; on
``mlsql.connect()`` the counts come from the native per-label aggregate (groups x labels),
on the portable macros from each group's distinct (actual, predicted) pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

from mlsql._duckdb import evaluate_classes as EC
from mlsql._duckdb import evaluate_regression as ER
from mlsql._duckdb import evaluate_sets as ES
from mlsql._duckdb.families.evaluate import by_position
from mlsql._errors import MlsqlError
from mlsql._evaluate import front as EV
from mlsql._front.docs import shared_entries
from mlsql._front.inputs import check_required
from mlsql._sqlexpr import lit, quote_ident
from mlsql.measures import ranking as RK

#: DuckDB's type ids of numbers (and of NULL), the scores a score map may hold
NUMBER_IDS = frozenset(
    {"tinyint", "smallint", "integer", "bigint", "hugeint", "utinyint", "usmallint"}
    | {"uinteger", "ubigint", "uhugeint", "float", "double", "decimal", "null"}
)


def check_scores(func: str, dtype: Any) -> None:
    """Raise the scores' :class:`MlsqlError` unless ``dtype`` is a map of numbers or a list of
    structs whose second field is a number, as every engine's score maps are.

    Examples
    --------
    >>> import duckdb
    >>> check_scores("coverage_error", duckdb.sqltype("MAP(VARCHAR, DOUBLE)"))
    >>> check_scores("coverage_error", duckdb.sqltype("VARCHAR[]"))
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: coverage_error takes scores as a map or a list of (label, score) structs per row, the score a number. Got scores VARCHAR[].
    """
    value = None
    if dtype.id == "map":
        value = dtype.children[1][1]
    elif dtype.id == "list" and dtype.children[0][1].id == "struct":
        fields = dtype.children[0][1].children
        at_score = RK.score_fields([name for name, _ in fields])[1]
        value = fields[at_score][1] if len(fields) >= 2 else None
    if value is None or value.id not in NUMBER_IDS:
        raise MlsqlError(RK.SCORES_MESSAGE.format(func=func, name="scores", type=dtype))


def call_sql(
    item: EV.Item, names: dict[str, str], weight: str | None, by_position: Sequence[str] = ()
) -> str:
    """SQL of one measure's aggregate over the columns ``names`` (role -> SQL); the
    parameters ``by_position`` are given by position (their default where not given)."""
    args = EV.inputs(item, names)
    defaults = {p.name: p.default for p in item.measure.params}
    args += [str(EC.literal(item.params.get(k, defaults.get(k)))) for k in by_position]
    if weight is not None:
        args.append(f"sample_weight := {weight}")
    args += [f"{k} := {EC.literal(v)}" for k, v in item.params.items() if k not in by_position]
    return f"{item.name}({', '.join(args)})"


def evaluate_sql(
    req: EV.Request,
    clause: str,
    actual: str,
    predicted: str,
    con: duckdb.DuckDBPyConnection | None = None,
) -> str:
    """The one query: a GROUP BY of every measure, unpivoted, ordered (the class-wise
    measures' parameters checked on ``con`` first where it is given:
    :func:`mlsql._duckdb.evaluate_classes.checked_values`)."""
    groups = [quote_ident(b) for b in req.by]
    names = {"actual": quote_ident(actual), "predicted": quote_ident(predicted)}
    weight = None
    if req.sample_weight is not None:  # checked once, in messages of evaluate
        weight = f"_mlsql_weight({quote_ident(req.sample_weight)}, {lit(EV.FUNC)})"
    regression = [(i, item) for i, item in enumerate(req.items) if ER.applies(item)]
    classwise = [(i, item) for i, item in enumerate(req.items) if EC.applies(item)]
    inline = [(i, item) for i, item in enumerate(req.items) if ES.applies(item)]
    items = [x for _, x in classwise + inline]
    checked = [None] * len(items) if con is None else EC.checked_values(con, items)
    checked_classes, checked_sets = checked[: len(classwise)], checked[len(classwise) :]
    ctes: list[str] = []
    if regression or (classwise and weight is not None):
        # the passes (the cells) read the source again: its parameters bind once
        ctes.append(f"__mlsql_src AS NOT MATERIALIZED (SELECT * {clause})")
        clause = "FROM __mlsql_src"
    values = [
        f"{call_sql(item, names, weight, by_position(item.name))} AS __mlsql_v{i}"
        for i, item in enumerate(req.items)
        if not ER.applies(item) and not EC.applies(item) and not ES.applies(item)
    ]
    raw = None if req.sample_weight is None else quote_ident(req.sample_weight)
    values += [
        f"{ES.value_sql(item, constants, names['actual'], names['predicted'], raw)} AS __mlsql_v{i}"
        for (i, item), given in zip(inline, checked_sets, strict=True)
        for constants in [EC.checked_sql(item) if given is None else given]
    ]
    first = classwise[0][1].measure.name if classwise else ""
    paired = any(EC.pairs(item) for _, item in classwise)
    if classwise and weight is None:  # the class lists: one more aggregate of the GROUP BY
        values += EC.lists_sql(first, names["actual"], names["predicted"], paired=paired)
    group_by = f" GROUP BY {', '.join(groups)}" if groups else ""
    wide = f"SELECT {', '.join([*groups, *values] or ['count(*) AS __mlsql_n'])} {clause}{group_by}"
    if classwise and weight is not None:  # the class lists over the cells, joined
        a, p = names["actual"], names["predicted"]
        cells = EC.cells_sql(clause, groups, a, p, weight, first, paired)
        wide = _joined(wide, cells, groups, [EC.LISTS, *([EC.PAIRS] if paired else [])])
    if classwise:  # each measure's formula over its group's lists
        formulas = ", ".join(
            f"{EC.value_sql(item, params, weight is not None)} AS __mlsql_v{i}"
            for (i, item), params in zip(classwise, checked_classes, strict=True)
        )
        wide = f"SELECT *, {formulas} FROM ({wide})"
    if regression:  # grouped passes (memory per group, not per row), joined to the rest
        more, passes = ER.values_sql(regression, clause, actual, predicted, groups, weight)
        ctes += more
        keyed = [f"{g} AS __mlsql_k{k}" for k, g in enumerate(groups)]
        passes = f"SELECT {', '.join([*keyed, '*'])} FROM ({passes})"
        wide = _joined(wide, passes, groups, [f"__mlsql_v{i}" for i, _ in regression])
    unpacked = (
        "unnest(list_value("
        + ", ".join(
            f"struct_pack(__mlsql_i := {i}, measure := {lit(item.label)}, "
            f"estimate := CAST(__mlsql_v{i} AS DOUBLE))"
            for i, item in enumerate(req.items)
        )
        + "), recursive := true)"
    )
    order = ", ".join([*(f"{g} NULLS FIRST" for g in groups), "__mlsql_i"])
    keep = ", ".join([*groups, "measure", "estimate"])
    source = f"WITH {', '.join(ctes)} " if ctes else ""
    return (
        f"{source}SELECT {keep} FROM (SELECT {', '.join([*groups, unpacked])} FROM ({wide})) "
        f"ORDER BY {order}"
    )


def _joined(wide: str, more: str, groups: Sequence[str], picked: Sequence[str]) -> str:
    """The rows of ``wide`` (one per group) with the columns ``picked`` of ``more`` (one row
    per group, its keys ``__mlsql_k0``, ``__mlsql_k1``, ...), joined null-safe on the keys."""
    columns = ", ".join(["w.*", *(f"x.{c}" for c in picked)])
    if not groups:
        return f"SELECT {columns} FROM ({wide}) AS w CROSS JOIN ({more}) AS x"
    on = " AND ".join(f"w.{g} IS NOT DISTINCT FROM x.__mlsql_k{k}" for k, g in enumerate(groups))
    return f"SELECT {columns} FROM ({wide}) AS w JOIN ({more}) AS x ON {on}"


@shared_entries("parameters", EV.PARAMETERS)
def evaluate(
    data: Any,
    actual: str,
    predicted: str,
    measures: Sequence[Any],
    by: str | Sequence[str] | None = None,
    sample_weight: str | None = None,
    *,
    con: duckdb.DuckDBPyConnection | None = None,
) -> duckdb.DuckDBPyRelation:
    """Measures per group, one row per group and measure, from one pass over the data.

    Parameters
    ----------
    data : str, os.PathLike, DuckDBPyRelation, DataFrame or ibis table
        A table or view name, a query, a Parquet, CSV or JSON path (read on
        ``con``), a relation, or an Arrow table, Polars or pandas DataFrame. An
        ibis table expression is evaluated in its own database (PostgreSQL,
        DataFusion, BigQuery, ...; ``pip install 'mlsql[ibis]'``), for the
        families lowered to ibis so far (label sets, binary, regression, single labels:
        docs/guides/ibis.md says which of them), and gives an ibis
        table of the same columns.
    <parameters>
    con : duckdb.DuckDBPyConnection, optional
        The connection that reads ``data`` (a fresh ``mlsql.connect()`` if None).

    Returns
    -------
    duckdb.DuckDBPyRelation
        The ``by`` columns, measure (the name as given, with its parameters) and
        estimate (DOUBLE): one row per group and measure, ordered by group (NULL
        first), then the measures as given.

    Notes
    -----
    One ``GROUP BY`` computes every measure (each is mlsql's aggregate macro of
    that name, with its parameters), and the row per group is unpivoted. The
    regression measures run as grouped passes instead (the means per group,
    then centred sums over the rows joined to them): their memory grows with
    the groups, where their macros hold each group's values. The class-wise
    single-label measures read each group's class lists, built once for all of
    them (with ``sample_weight``, from the rows' distinct (actual, predicted)
    cells and their summed weights: memory groups x cells, where the weighted
    macros hold the group's rows). The label-set aggregates (micro_*,
    samples_*, subset_accuracy, zero_one_loss, hamming_loss) are their macros'
    formulas written into the query with their parameters checked once: the
    same values, planned several times faster. The estimate equals the aggregate's value: ``evaluate(t, 'a', 'p', ['micro_f1'],
    by='g')`` is ``SELECT g, micro_f1(a, p) FROM t GROUP BY g``. The SQL table
    macro ``evaluate`` gives the same rows in SQL alone.

    Examples
    --------
    >>> import mlsql, pyarrow as pa
    >>> preds = pa.table({"model": ["A", "A", "B", "B"],
    ...                   "actual": [["a", "b"], ["b"], ["a"], ["a"]],
    ...                   "predicted": [["a"], ["b"], ["b"], ["a"]]})
    >>> out = mlsql.evaluate(preds, "actual", "predicted",
    ...                      ["micro_f1", ("micro_fbeta", {"beta": 2})], by="model")
    >>> for row in out.fetchall():
    ...     print(row)
    ('A', 'micro_f1', 0.8)
    ('A', 'micro_fbeta(beta=2)', 0.7142857142857143)
    ('B', 'micro_f1', 0.5)
    ('B', 'micro_fbeta(beta=2)', 0.5)
    """
    from mlsql._duckdb.resample import _source

    given = con
    with _source(data, con, EV.FUNC) as (con, clause, params, columns, types):
        req = EV.request(columns, actual, predicted, measures, by, sample_weight)
        for item in req.items:  # the macro's arguments would not bind: say which is missing
            defaults = {p.name: p.default for p in item.measure.params}
            check_required(item.name, {**defaults, **item.params})
        scored = next((item for item in req.items if "scores" in item.measure.inputs), None)
        if scored is not None:  # not a map: its map functions would not bind
            check_scores(scored.name, duckdb.sqltype(types[columns.index(predicted)]))
        sets = [
            item.measure.name
            for item in req.items
            if ES.applies(item) or item.measure.family in EV.LABEL_LISTS
        ]
        if sets:  # the types the label-list macros take, as they would check them
            ES.check_lists(con, clause, params, actual, predicted, sets[0])
        sql = evaluate_sql(req, clause, actual, predicted, con)
        table = con.sql(sql, params=params).to_arrow_table()
    if given is None:  # DuckDB 1.x closes a connection with its last reference
        return duckdb.from_arrow(table)
    return given.from_arrow(table)
