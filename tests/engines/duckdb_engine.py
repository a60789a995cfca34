"""The DuckDB adapter: mlsql's macros on a connection from ``mlsql.connect()``."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

import mlsql
from mlsql._sqlexpr import lit, quote_ident


def _args(params: dict[str, Any]) -> str:
    """``, name := value`` per parameter; ``sample_weight`` given as a string names a column,
    as in every engine (an ``Sql`` expression is written as it is)."""
    return "".join(
        f", {k} := {quote_ident(v) if k == 'sample_weight' and isinstance(v, str) else lit(v)}"
        for k, v in params.items()
    )


def _items(calls: list[tuple[str, tuple[str, ...], dict[str, Any]]]) -> str:
    """The select list of ``calls``: ``name(columns, params) AS c<i>`` each."""
    return ", ".join(
        f"{name}({', '.join(quote_ident(c) for c in cols)}{_args(params)}) AS c{i}"
        for i, (name, cols, params) in enumerate(calls)
    )


class DuckDBEngine:
    """Runs each case as SQL over an Arrow table registered as ``t``."""

    name = "duckdb"

    def __init__(self) -> None:
        self.con = mlsql.connect()

    def _query(
        self, table: pa.Table, sql: str, params: list[Any] | None = None
    ) -> list[tuple[Any, ...]]:
        self.con.register("t", table)
        try:
            return self.con.execute(sql, params or []).fetchall()
        finally:
            self.con.unregister("t")

    def aggregate(
        self,
        measure: str,
        table: pa.Table,
        *,
        columns: tuple[str, ...] = ("actual", "predicted"),
        **params: Any,
    ) -> Any:
        cols = ", ".join(quote_ident(c) for c in columns)
        return self._query(table, f"SELECT {measure}({cols}{_args(params)}) FROM t")[0][0]

    def many(
        self,
        table: pa.Table,
        calls: list[tuple[str, tuple[str, ...], dict[str, Any]]],
        *,
        per_row: bool = False,
    ) -> list[Any]:
        """Every call in one SELECT: a value per call (a list of row values with ``per_row``)."""
        rows = self._query(table, f"SELECT {_items(calls)} FROM t")
        if per_row:
            return [[r[i] for r in rows] for i in range(len(calls))]
        return list(rows[0])

    def many_by(
        self, table: pa.Table, calls: list[tuple[str, tuple[str, ...], dict[str, Any]]], by: str
    ) -> dict[Any, list[Any]]:
        """Every call per value of column ``by``, in one ``GROUP BY`` query."""
        key = quote_ident(by)
        rows = self._query(table, f"SELECT {key}, {_items(calls)} FROM t GROUP BY {key}")
        return {r[0]: list(r[1:]) for r in rows}

    def from_stored_counts_by(
        self, table: pa.Table, calls: list[tuple[str, tuple[str, ...], dict[str, Any]]], by: str
    ) -> dict[Any, list[Any]]:
        """Counts stored per ``(by, g)``, merged per ``by``, every call on the merged counts."""
        key = quote_ident(by)
        sql = (
            f"WITH daily AS (SELECT {key}, g, multilabel_counts(actual, predicted) AS c"
            f" FROM t GROUP BY {key}, g),"
            f" merged AS (SELECT {key}, merge_counts(c) AS c FROM daily GROUP BY {key})"
            f" SELECT {key}, {_items(calls)} FROM merged"
        )
        return {r[0]: list(r[1:]) for r in self._query(table, sql)}

    def daily_counts(self, table: pa.Table) -> pa.Table:
        """``multilabel_counts`` per partition ``g``, as stored counts in a column ``counts``."""
        self.con.register("t", table)
        try:
            sql = "SELECT g, multilabel_counts(actual, predicted) AS counts FROM t GROUP BY g"
            return self.con.sql(sql).to_arrow_table()
        finally:
            self.con.unregister("t")

    def grouped(self, measure: str, table: pa.Table, **params: Any) -> dict[Any, Any]:
        rows = self._query(
            table, f"SELECT g, {measure}(actual, predicted{_args(params)}) FROM t GROUP BY g"
        )
        return dict(rows)

    def per_row(self, measure: str, table: pa.Table, **params: Any) -> list[Any]:
        sql = f"SELECT {measure}(actual, predicted{_args(params)}) FROM t"
        return [r[0] for r in self._query(table, sql)]

    def from_stored_counts(self, measure: str, table: pa.Table, **params: Any) -> Any:
        sql = (
            f"WITH daily AS (SELECT g, multilabel_counts(actual, predicted) AS c FROM t GROUP BY g) "
            f"SELECT {measure}(merge_counts(c){_args(params)}) FROM daily"
        )
        return self._query(table, sql)[0][0]

    def counts(self, table: pa.Table) -> dict[str, int]:
        return self._query(table, "SELECT multilabel_counts(actual, predicted) FROM t")[0][0]

    # ---------------------------------------------------------- label tables (issue 3)
    def table_function(
        self,
        name: str,
        table: pa.Table,
        *,
        columns: tuple[str, str] = ("actual", "predicted"),
        **params: Any,
    ) -> pa.Table:
        """``SELECT * FROM name('t', actual, predicted, **params)``: label_metrics, multilabel_report,
        macro_f1, ... (params: labels, beta, zero_division, by), as an Arrow table."""
        named = "".join(f", {k} := ?" for k in params)
        sql = f"SELECT * FROM {name}('t', ?, ?{named})"
        self.con.register("t", table)
        try:
            return self.con.sql(sql, params=[*columns, *params.values()]).to_arrow_table()
        finally:
            self.con.unregister("t")

    def lists_from_indicators(
        self, table: pa.Table, sides: dict[str, list[str]], labels: list[Any]
    ) -> pa.Table:
        """Each ``sides`` entry (output name -> its 0/1 columns, in ``labels`` order) as a label list."""
        cols = ", ".join(
            f"labels_from_indicators([{', '.join(quote_ident(c) for c in cs)}], ?) AS {quote_ident(out)}"
            for out, cs in sides.items()
        )
        self.con.register("t", table)
        try:
            sql = f"SELECT {cols} FROM t"
            return self.con.sql(sql, params=[labels] * len(sides)).to_arrow_table()
        finally:
            self.con.unregister("t")

    def indicators_from_lists(self, table: pa.Table, column: str, labels: list[Any]) -> list[Any]:
        """``indicators_from_labels(column, labels)`` per row: 0/1 lists in ``labels`` order."""
        sql = f"SELECT indicators_from_labels({quote_ident(column)}, ?) FROM t"
        return [r[0] for r in self._query(table, sql, [labels])]
