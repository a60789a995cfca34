"""Single-label tables from Python for DuckDB, where a SQL macro cannot do it.

``confusion_matrix_wide`` needs one column per class, read from the data; a
DuckDB macro cannot PIVOT on such values, so this runs the PIVOT statement
over the ``confusion_matrix`` table macro. In plain SQL the same is::

    PIVOT confusion_matrix('preds', 'actual', 'predicted') ON predicted USING sum(count)
    ORDER BY actual
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from mlsql import _params as P
from mlsql._duckdb.threads import in_this_thread
from mlsql._sqlexpr import lit, quote_ident


def confusion_matrix_wide(
    con: duckdb.DuckDBPyConnection,
    source: str,
    actual: str,
    predicted: str,
    *,
    by: str | Sequence[str] | None = None,
    sample_weight: str | None = None,
) -> duckdb.DuckDBPyRelation:
    """The confusion matrix, wide: one row per actual class, one column per predicted class.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        A connection with mlsql registered (``mlsql.connect()`` or ``mlsql.register``).
    source : str
        A table, view or file name, or a query (as the table macros take).
    actual, predicted : str
        Column names.
    by : str or sequence of str, optional
        Grouping columns (kept first).
    sample_weight : str, optional
        A column of weights per row (finite numbers >= 0; a NULL weight makes
        the row unknown): the cells are sums of weights. Default: every row 1.

    Returns
    -------
    duckdb.DuckDBPyRelation
        Columns: the groups, ``actual``, then one per class in sorted order
        (NULL where a class does not occur in that group).

    Examples
    --------
    >>> import mlsql
    >>> con = mlsql.connect()
    >>> _ = con.execute("CREATE TABLE t AS SELECT * FROM (VALUES ('x', 'x'), ('x', 'y'), ('y', 'y')) v(a, p)")
    >>> confusion_matrix_wide(con, "t", "a", "p").fetchall()
    [('x', 1, 1), ('y', 0, 1)]
    """
    groups = P.check_by(by, "confusion_matrix_wide")
    con = in_this_thread(con)
    by_sql = "NULL" if not groups else "[" + ", ".join(str(lit(g)) for g in groups) + "]"
    weight = "" if sample_weight is None else f", sample_weight := {lit(sample_weight)}"
    long = (
        f"confusion_matrix({lit(source)}, {lit(actual)}, {lit(predicted)}{weight}, "
        f'"by" := {by_sql})'
    )
    keys = ", ".join([*(quote_ident(g) for g in groups), "actual"])
    return con.sql(
        f"PIVOT (SELECT * FROM {long}) ON predicted USING sum(count) GROUP BY {keys} ORDER BY {keys}"
    )
