"""Indicator columns (one 0/1 column per label) to label lists and back.

Some data sets hold labels as indicator matrices: mldr and the R walkthrough
seed have columns ``L1..L4`` for the truth and ``L1.1..L4.1`` for the
prediction. mlsql's measures take label lists; these helpers convert, so
such data gets every measure:

* :func:`from_indicators` / :func:`to_indicators` over a DuckDB connection
  (any source :func:`mlsql.label_metrics` reads), built on the SQL macros
  ``labels_from_indicators(indicators, labels)`` and
  ``indicators_from_labels(list, labels)``;
* :func:`lists_from_matrix` / :func:`matrix_from_lists` for plain Python rows.

Polars has the same two expressions in :mod:`mlsql.polars`
(``labels_from_indicators``, ``indicators_from_labels``).

In SQL::

    SELECT labels_from_indicators([L1, L2, L3, L4], ['L1', 'L2', 'L3', 'L4']) AS actual,
           labels_from_indicators(["L1.1", "L2.1", "L3.1", "L4.1"], ['L1', 'L2', 'L3', 'L4'])
               AS predicted
    FROM seed;

An indicator is 0 or 1 (or a boolean); any other value is an error, and a
NULL indicator makes the row's list NULL (an unknown row).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import duckdb

from mlsql._duckdb.label_tables import ensure_macros, finish, source_text
from mlsql._duckdb.threads import in_this_thread
from mlsql._errors import MlsqlError
from mlsql._sqlexpr import quote_ident


def from_indicators(
    con: duckdb.DuckDBPyConnection,
    source: Any,
    columns: Mapping[str, Sequence[str]],
    *,
    labels: Sequence[Any] | None = None,
    keep: bool = True,
) -> duckdb.DuckDBPyRelation:
    """Replace groups of 0/1 columns by label-list columns.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        A connection (mlsql's macros are registered if missing).
    source : str, os.PathLike, DuckDBPyRelation or DataFrame
        As for :func:`mlsql.label_metrics`.
    columns : mapping of str to sequence of str
        Each output list column and its indicator columns, in the order of
        ``labels``: ``{"actual": ["L1", "L2"], "predicted": ["L1.1", "L2.1"]}``.
    labels : sequence, optional
        The label of each position. Default: the first group's column names.
    keep : bool, default True
        Keep the source's other columns (the indicator columns always go).

    Returns
    -------
    duckdb.DuckDBPyRelation

    Examples
    --------
    >>> import mlsql, pyarrow as pa
    >>> from mlsql import from_indicators
    >>> con = mlsql.connect()
    >>> seed = pa.table({"id": [1, 2], "L1": [1, 0], "L2": [1, 1], "L1.1": [1, 0], "L2.1": [0, 1]})
    >>> rel = from_indicators(con, seed, {"actual": ["L1", "L2"], "predicted": ["L1.1", "L2.1"]})
    >>> rel.fetchall()
    [(1, ['L1', 'L2'], ['L1']), (2, ['L2'], ['L2'])]
    >>> mlsql.multilabel_report(con, rel, "actual", "predicted").select("subset_accuracy").fetchall()
    [(0.5,)]
    """
    func = "from_indicators"
    if not columns:
        raise MlsqlError(f"{func} needs at least one output column and its indicator columns.")
    groups = {out: list(cols) for out, cols in columns.items()}
    first = next(iter(groups.values()))
    names = list(first) if labels is None else list(labels)
    for out, cols in groups.items():
        if not cols or len(cols) != len(names):
            raise MlsqlError(
                f"{func}: {out!r} needs one indicator column per label ({len(names)}). "
                f"Got {len(cols)}."
            )
    con = in_this_thread(con)
    ensure_macros(con, "labels_from_indicators")
    with source_text(con, source, func) as src:
        present = {c.lower() for c in src.probe(con, func).columns}
        for cols in groups.values():
            missing = [c for c in cols if c.lower() not in present]
            if missing:
                raise MlsqlError(f"{func}: the source has no column {missing[0]!r}.")
        used = [c for cols in groups.values() for c in cols] + list(groups)
        listed = ", ".join(
            f"labels_from_indicators([{', '.join(quote_ident(c) for c in cols)}], ?) "
            f"AS {quote_ident(out)}"
            for out, cols in groups.items()
        )
        clause, params = src.from_clause()
        kept = _kept(con, src, func, used) if keep else ""
        sql = f"SELECT {kept}{listed} {clause}"
        relation = con.sql(sql, params=[*([names] * len(groups)), *params])
        return finish(con, relation, src)


def to_indicators(
    con: duckdb.DuckDBPyConnection,
    source: Any,
    column: str,
    labels: Sequence[Any],
    *,
    names: Sequence[str] | None = None,
    keep: bool = True,
) -> duckdb.DuckDBPyRelation:
    """Replace a label-list column by one 0/1 (INTEGER) column per label of ``labels``.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        A connection (mlsql's macros are registered if missing).
    source : str, os.PathLike, DuckDBPyRelation or DataFrame
        As for :func:`mlsql.label_metrics`.
    column : str
        The label-list column.
    labels : sequence
        The labels, one output column each (labels outside it are dropped).
    names : sequence of str, optional
        The output column names. Default: the labels as text.
    keep : bool, default True
        Keep the source's other columns.

    Examples
    --------
    >>> import mlsql, pyarrow as pa
    >>> from mlsql import to_indicators
    >>> con = mlsql.connect()
    >>> preds = pa.table({"actual": [["L2", "L1"], [], None]})
    >>> to_indicators(con, preds, "actual", ["L1", "L2", "L3"]).fetchall()
    [(1, 1, 0), (0, 0, 0), (None, None, None)]
    """
    func = "to_indicators"
    universe = list(labels)
    if not universe:
        raise MlsqlError(f"The 'labels' parameter of {func} must hold at least one label.")
    outs = [str(x) for x in universe] if names is None else list(names)
    if len(outs) != len(universe):
        raise MlsqlError(f"{func} needs one name per label. Got {len(outs)} names.")
    con = in_this_thread(con)
    ensure_macros(con, "indicators_from_labels")
    with source_text(con, source, func) as src:
        if column.lower() not in {c.lower() for c in src.probe(con, func).columns}:
            raise MlsqlError(f"{func}: the source has no column {column!r}.")
        flags = f"indicators_from_labels({quote_ident(column)}, ?)"
        cols = ", ".join(f"__mlsql_flags[{i + 1}] AS {quote_ident(n)}" for i, n in enumerate(outs))
        clause, params = src.from_clause()
        kept = _kept(con, src, func, [column, *outs]) if keep else ""
        inner = f"SELECT *, {flags} AS __mlsql_flags {clause}"
        sql = f"SELECT {kept}{cols} FROM ({inner})"
        relation = con.sql(sql, params=[universe, *params])
        return finish(con, relation, src)


def _kept(con: duckdb.DuckDBPyConnection, src: Any, func: str, used: list[str]) -> str:
    """``col, col, `` for the source's columns not in ``used`` (case-insensitive)."""
    drop = {c.lower() for c in used}
    kept = [c for c in src.probe(con, func).columns if c.lower() not in drop]
    return "".join(f"{quote_ident(c)}, " for c in kept)


# ------------------------------------------------------------------ plain Python
def lists_from_matrix(matrix: Sequence[Sequence[Any]], labels: Sequence[Any]) -> list[Any]:
    """Label lists from rows of 0/1 indicators (a row with a None indicator gives None).

    Examples
    --------
    >>> lists_from_matrix([[1, 0, 1], [0, 0, 0], [1, None, 0]], ["L1", "L2", "L3"])
    [['L1', 'L3'], [], None]
    """
    out: list[Any] = []
    for row in matrix:
        if len(row) != len(labels):
            raise MlsqlError(
                f"lists_from_matrix needs one label per indicator. Got a row of {len(row)} "
                f"and {len(labels)} labels."
            )
        if any(v is None for v in row):
            out.append(None)
            continue
        for v in row:
            if v not in (0, 1):  # True and False compare equal to 1 and 0
                raise MlsqlError(f"lists_from_matrix takes indicators 0 or 1. Got {v!r} instead.")
        out.append([label for label, v in zip(labels, row, strict=True) if v == 1])
    return out


def matrix_from_lists(lists: Sequence[Any], labels: Sequence[Any]) -> list[Any]:
    """Rows of 0/1 indicators over ``labels`` from label lists (None stays None).

    Examples
    --------
    >>> matrix_from_lists([["L3", "L1"], [], None], ["L1", "L2", "L3"])
    [[1, 0, 1], [0, 0, 0], None]
    """
    return [None if row is None else [int(label in set(row)) for label in labels] for row in lists]
