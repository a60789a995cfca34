"""The DuckDB adapter: mlsql's macros on a connection from ``mlsql.connect()``."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

import mlsql
from mlsql._sqlexpr import lit, quote_ident


def _args(params: dict[str, Any]) -> str:
    return "".join(f", {k} := {lit(v)}" for k, v in params.items())


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
