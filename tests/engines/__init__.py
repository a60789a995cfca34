"""Engine adapters for the shared test cases: one interface, every engine.

Each adapter turns Python rows into that engine's table and calls mlsql's
function of the given name there. Tests take the ``engine`` fixture and never
name an engine, so every case runs on DuckDB, Polars and Spark alike.
"""

from __future__ import annotations

from typing import Any, Protocol

import pyarrow as pa

Row = tuple[Any, Any]
#: (measure, input columns, parameters): one call of a batched query
Call = tuple[str, tuple[str, ...], dict[str, Any]]


class Engine(Protocol):
    """What a test may ask of an engine."""

    name: str

    def aggregate(
        self,
        measure: str,
        table: pa.Table,
        *,
        columns: tuple[str, ...] = ("actual", "predicted"),
        **params: Any,
    ) -> Any:
        """``measure(*columns, **params)`` over all rows of ``table``."""

    def grouped(self, measure: str, table: pa.Table, **params: Any) -> dict[Any, Any]:
        """The same per value of ``table``'s ``g`` column (only groups that have rows)."""

    def per_row(self, measure: str, table: pa.Table, **params: Any) -> list[Any]:
        """A per-row function on every row, in order."""

    def from_stored_counts(self, measure: str, table: pa.Table, **params: Any) -> Any:
        """Store ``multilabel_counts`` per ``g`` group, merge, then apply ``measure``."""

    def counts(self, table: pa.Table) -> dict[str, int]:
        """``multilabel_counts`` over all rows, as a dict."""

    def many(self, table: pa.Table, calls: list[Call], *, per_row: bool = False) -> list[Any]:
        """Every call in one query: a value per call (a list of row values with ``per_row``)."""

    def many_by(self, table: pa.Table, calls: list[Call], by: str) -> dict[Any, list[Any]]:
        """Every call per value of ``table``'s column ``by``, in one grouped query."""

    def from_stored_counts_by(
        self, table: pa.Table, calls: list[Call], by: str
    ) -> dict[Any, list[Any]]:
        """Per ``by``: ``multilabel_counts`` stored per ``(by, g)``, merged per ``by``, then
        every call (a from-counts measure) on the merged counts, in one query."""


def label_table(
    rows: list[Row], label_type: pa.DataType | None = None, groups: list[Any] | None = None
) -> pa.Table:
    """Rows of (actual, predicted) label lists as an Arrow table (column ``g`` if grouped)."""
    if label_type is None:
        sample = next((x for a, p in rows for x in (a or []) + (p or []) if x is not None), "")
        label_type = (
            pa.int64() if isinstance(sample, int) and not isinstance(sample, bool) else pa.string()
        )
    columns = {
        "actual": pa.array([a for a, _ in rows], pa.list_(label_type)),
        "predicted": pa.array([p for _, p in rows], pa.list_(label_type)),
    }
    if groups is not None:
        columns["g"] = pa.array(groups)
    return pa.table(columns)
