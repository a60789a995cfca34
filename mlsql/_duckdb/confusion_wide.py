"""Single-label tables from Python for DuckDB, where a SQL macro cannot do it.

``confusion_matrix_wide`` needs one column per class, read from the data; a
DuckDB macro cannot PIVOT on such values, so this runs the PIVOT statement
over the ``confusion_matrix`` table macro, with the classes listed in their order (and
named, and checked, as every engine names them: :func:`mlsql._front.tables.wide_columns`).
In plain SQL the same counts are::

    PIVOT confusion_matrix('preds', 'actual', 'predicted') ON predicted USING sum(count)
    ORDER BY actual

whose columns come in the order of the classes' text (10 before 2).
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from mlsql import _params as P
from mlsql._duckdb.threads import in_this_thread
from mlsql._front.tables import wide_columns
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
    keys = [*(quote_ident(g) for g in groups), "actual"]
    classes = [
        r[0] for r in con.sql(f"SELECT DISTINCT predicted FROM {long} ORDER BY 1").fetchall()
    ]
    names = wide_columns(classes, [*groups, "actual"])
    # PIVOT orders and names the columns by the classes' text (10 before 2): the classes
    # are listed in their own order, and each column named as in every engine
    listed = ", ".join(str(lit(c)) for c in classes)
    columns = [*keys, *(f"#{len(keys) + i + 1} AS {quote_ident(n)}" for i, n in enumerate(names))]
    pivot = (
        f"PIVOT (SELECT * FROM {long}) ON predicted IN ({listed}) USING sum(count)"
        f" GROUP BY {', '.join(keys)}"
    )
    return con.sql(f"SELECT {', '.join(columns)} FROM ({pivot}) ORDER BY {', '.join(keys)}")
