"""Which engine evaluates a source: ``mlsql.evaluate`` in front of DuckDB and ibis.

``mlsql.evaluate`` reads DuckDB's sources (a table name, a query, a path, a
relation, an Arrow table, a Polars or pandas DataFrame) on DuckDB, and an ibis table
expression in its own database through :mod:`mlsql._ibis`. Neither engine imports the
other; this front module picks one. The docstring is DuckDB's function's, which
describes both.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mlsql._duckdb.evaluate import evaluate as on_duckdb
from mlsql._ibis import is_table

if TYPE_CHECKING:
    import duckdb


@functools.wraps(on_duckdb)
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
    if is_table(data):  # computed in the table's own database
        from mlsql._ibis.evaluate import evaluate as on_ibis

        return on_ibis(data, actual, predicted, measures, by, sample_weight)  # type: ignore[no-any-return]
    return on_duckdb(data, actual, predicted, measures, by, sample_weight, con=con)
