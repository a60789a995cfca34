"""The Polars adapter: mlsql.polars expressions on LazyFrames, collected by the streaming engine.

Label tables (registry kind ``table``) are ``mp.<name>(source, actual, predicted, **params)``
with a LazyFrame source, returning a DataFrame or LazyFrame; ``labels_from_indicators`` and
``indicators_from_labels`` are expressions like the DuckDB macros of the same names.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pyarrow as pa

import mlsql.polars as mp


def _frame(table: pa.Table) -> pl.LazyFrame:
    return pl.from_arrow(table).lazy()  # type: ignore[union-attr]


def _collect(lf: pl.LazyFrame) -> pl.DataFrame:
    return lf.collect(engine="streaming")


class PolarsEngine:
    """Runs each case as one ``select`` or ``group_by().agg`` on a LazyFrame (streaming)."""

    name = "polars"

    def function(self, measure: str) -> Any:
        """The public function ``mlsql.polars.<measure>`` (fails loudly if missing)."""
        return getattr(mp, measure)

    def aggregate(
        self,
        measure: str,
        table: pa.Table,
        *,
        columns: tuple[str, ...] = ("actual", "predicted"),
        **params: Any,
    ) -> Any:
        expr = self.function(measure)(*columns, **params).alias("value")
        return _collect(_frame(table).select(expr)).item()

    def many(
        self,
        table: pa.Table,
        calls: list[tuple[str, tuple[str, ...], dict[str, Any]]],
        *,
        per_row: bool = False,
    ) -> list[Any]:
        """Every call in one ``select``: a value per call (a list of row values with ``per_row``)."""
        out = _collect(_frame(table).select(self._exprs(calls)))
        if per_row:
            return [out[f"c{i}"].to_list() for i in range(len(calls))]
        return [out[f"c{i}"].item() for i in range(len(calls))]

    def _exprs(self, calls: list[tuple[str, tuple[str, ...], dict[str, Any]]]) -> list[pl.Expr]:
        return [
            self.function(name)(*cols, **params).alias(f"c{i}")
            for i, (name, cols, params) in enumerate(calls)
        ]

    def many_by(
        self, table: pa.Table, calls: list[tuple[str, tuple[str, ...], dict[str, Any]]], by: str
    ) -> dict[Any, list[Any]]:
        """Every call per value of column ``by``, in one ``group_by().agg``."""
        out = _collect(_frame(table).group_by(by).agg(self._exprs(calls)))
        return {r[0]: list(r[1:]) for r in out.rows()}

    def from_stored_counts_by(
        self, table: pa.Table, calls: list[tuple[str, tuple[str, ...], dict[str, Any]]], by: str
    ) -> dict[Any, list[Any]]:
        """Counts stored per ``(by, g)``, merged per ``by``, every call on the merged counts."""
        counts = mp.multilabel_counts("actual", "predicted").alias("c")
        daily = _frame(table).group_by(by, "g").agg(counts)
        merged = daily.group_by(by).agg(mp.merge_counts("c").alias("c"))
        out = _collect(merged.select(by, *self._exprs(calls)))
        return {r[0]: list(r[1:]) for r in out.rows()}

    def daily_counts(self, table: pa.Table) -> pa.Table:
        """``multilabel_counts`` per partition ``g``, as stored counts in a column ``counts``."""
        expr = mp.multilabel_counts("actual", "predicted").alias("counts")
        return _collect(_frame(table).group_by("g").agg(expr)).to_arrow()

    def grouped(self, measure: str, table: pa.Table, **params: Any) -> dict[Any, Any]:
        expr = self.function(measure)("actual", "predicted", **params).alias("value")
        out = _collect(_frame(table).group_by("g").agg(expr))
        return dict(zip(out["g"].to_list(), out["value"].to_list(), strict=True))

    def per_row(self, measure: str, table: pa.Table, **params: Any) -> list[Any]:
        expr = self.function(measure)("actual", "predicted", **params).alias("value")
        return _collect(_frame(table).select(expr))["value"].to_list()

    def from_stored_counts(self, measure: str, table: pa.Table, **params: Any) -> Any:
        daily = (
            _frame(table).group_by("g").agg(mp.multilabel_counts("actual", "predicted").alias("c"))
        )
        merged = daily.select(mp.merge_counts("c").alias("c"))
        return _collect(merged.select(self.function(measure)("c", **params).alias("value"))).item()

    def counts(self, table: pa.Table) -> dict[str, int]:
        expr = mp.multilabel_counts("actual", "predicted").alias("value")
        return _collect(_frame(table).select(expr)).item()

    # ---------------------------------------------------------- label tables
    def table_function(
        self,
        name: str,
        table: pa.Table,
        *,
        columns: tuple[str, str] = ("actual", "predicted"),
        **params: Any,
    ) -> pa.Table:
        """``mp.<name>(LazyFrame, actual, predicted, **params)`` as an Arrow table."""
        out = self.function(name)(_frame(table), *columns, **params)
        if isinstance(out, pl.LazyFrame):
            out = _collect(out)
        return out.to_arrow()

    def lists_from_indicators(
        self, table: pa.Table, sides: dict[str, list[str]], labels: list[Any]
    ) -> pa.Table:
        """Each ``sides`` entry (output name -> its 0/1 columns, in ``labels`` order) as a label list."""
        fn = self.function("labels_from_indicators")
        exprs = [fn(list(cols), labels).alias(out) for out, cols in sides.items()]
        return _collect(_frame(table).select(exprs)).to_arrow()

    def indicators_from_lists(self, table: pa.Table, column: str, labels: list[Any]) -> list[Any]:
        """``indicators_from_labels(column, labels)`` per row: 0/1 lists in ``labels`` order."""
        expr = self.function("indicators_from_labels")(column, labels).alias("value")
        return _collect(_frame(table).select(expr))["value"].to_list()
