"""``mlsql.evaluate`` of the label-set measures: their formulas written into the query.

The label-set aggregates (``micro_*``, ``samples_*``, ``subset_accuracy``,
``zero_one_loss``, ``hamming_loss``: :func:`applies`) are the registry's formulas over
each row's (tp, n_actual, n_predicted), as their macros compute them
(:func:`mlsql._duckdb.library.registry_body`). Called as macros, each use of a parameter
in the formula binds its check macro again: ``samples_fbeta(a, p, beta := 2.0,
sample_weight := w)`` took 0.68 s to plan and run on a 4-row table (2 cores, 5 Dec 2026),
the same formula over checked constants 0.07 s. ``evaluate`` checks the parameters once
(:func:`mlsql._duckdb.evaluate_classes.checked_values`, the same check macros and
messages), checks the columns' types once with the overloads the macros pick by
(:func:`check_lists`), and writes each formula with the constants. The per-row counts are
the library's ``_mlsql_tp``, ``_mlsql_n_actual`` and ``_mlsql_n_predicted``: on
``mlsql.connect()`` the native kernel's.
"""

from __future__ import annotations

from typing import Any

from mlsql._duckdb.builtins import BUILTIN_MACROS, qualify_builtins
from mlsql._duckdb.library import by_weight, registry_body, row_stats, unqualified
from mlsql._duckdb.ops import SqlOps
from mlsql._evaluate import front as EV
from mlsql._sqlexpr import Sql, expand_calls, lit, quote_ident

#: the kinds of label-set measure written inline: the aggregates (not the per-row measures
#: nor the formulas over a counts struct)
_AGGREGATE = "aggregate"


def applies(item: EV.Item) -> bool:
    """Whether ``item`` is a label-set aggregate whose formula ``evaluate`` writes inline.

    Examples
    --------
    >>> from mlsql._evaluate import front as EV
    >>> req = EV.request(["a", "p"], "a", "p", ["samples_f1", "macro_f1"], None, None)
    >>> [applies(i) for i in req.items]
    [True, False]
    """
    m = item.measure
    return m.family == "multilabel" and m.kind == _AGGREGATE and m.build is not None


def check_lists(con: Any, clause: str, params: Any, actual: str, predicted: str, func: str) -> None:
    """Raise the label-set macros' error (naming ``func``) unless they take the types of
    columns ``actual`` and ``predicted`` of the source ``clause``: one row of NULLs of the
    columns' types, no row of the source read.

    Examples
    --------
    >>> import mlsql
    >>> con = mlsql.connect()
    >>> try:
    ...     check_lists(con, "FROM (SELECT ['a'] AS a, [1] AS p)", None, "a", "p", "micro_f1")
    ... except Exception as e:
    ...     print(str(e).split("Error: ")[1])
    micro_f1 needs actual and predicted of the same label type (both text, both integers, ...). Got actual VARCHAR[] and predicted INTEGER[].
    >>> check_lists(con, "FROM (SELECT ['a'] AS a, ['b'] AS p)", None, "a", "p", "micro_f1")
    """
    a, p = quote_ident(actual), quote_ident(predicted)
    empty = f"SELECT {a} AS a, {p} AS p {clause} LIMIT 0"
    con.sql(
        f"SELECT _mlsql_label_pair_check(s.a, s.p, {lit(func)}) "
        f"FROM (SELECT 1) AS o LEFT JOIN ({empty}) AS s ON true",
        params=params,
    ).fetchall()


def value_sql(
    item: EV.Item, params: dict[str, Sql], actual: str, predicted: str, weight: str | None
) -> str:
    """``item``'s aggregate over the columns ``actual`` and ``predicted`` (SQL), its
    parameters the SQL ``params`` (checked constants), its rows weighted by the SQL column
    ``weight`` (checked as ``evaluate`` checks it) where given.

    Examples
    --------
    >>> from mlsql._evaluate import front as EV
    >>> from mlsql._sqlexpr import Sql
    >>> item = EV.request(["a", "p"], "a", "p", ["micro_recall"], None, None).items[0]
    >>> value_sql(item, {"zero_division": Sql("'0'")}, "a", "p", None)  # doctest: +ELLIPSIS
    "CASE WHEN '0' IS NULL THEN NULL ELSE _mlsql_recall(system.main.sum(_mlsql_tp(a, p)), ...
    """
    m = item.measure
    formula = m.build
    assert formula is not None  # applies() takes the measures of a registry formula
    build = None if weight is None else by_weight(formula, EV.FUNC, weight)
    stats = row_stats(unqualified, actual, predicted)
    body = registry_body(m, SqlOps(unqualified), stats, params, build)
    return qualify_builtins(expand_calls(str(body), BUILTIN_MACROS))
