"""Which engine evaluates a source: ``mlsql.evaluate``, ``mlsql.bootstrap`` and
``mlsql.compare`` in front of DuckDB and ibis.

They read DuckDB's sources (a table name, a query, a path, a relation, an Arrow table, a
Polars or pandas DataFrame) on DuckDB, and an ibis table expression in its own database
through :mod:`mlsql._ibis`. Neither engine imports the other; this front module picks
one. The docstrings are DuckDB's functions', which describe both.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mlsql._duckdb.evaluate import evaluate as on_duckdb
from mlsql._duckdb.resample import bootstrap as bootstrap_on_duckdb
from mlsql._duckdb.resample import compare as compare_on_duckdb
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


@functools.wraps(bootstrap_on_duckdb)
def bootstrap(
    data: Any,
    actual: str,
    predicted: str,
    measures: Sequence[Any],
    *,
    by: str | Sequence[str] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    sample_weight: str | None = None,
    con: duckdb.DuckDBPyConnection | None = None,
) -> duckdb.DuckDBPyRelation:
    if is_table(data):  # its statistics table computed in its own database
        from mlsql._ibis.resample import bootstrap as on_ibis

        return on_ibis(  # type: ignore[return-value]
            data, actual, predicted, measures, by, n_resamples, confidence, seed, sample_weight
        )
    return bootstrap_on_duckdb(
        data,
        actual,
        predicted,
        measures,
        by=by,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        sample_weight=sample_weight,
        con=con,
    )


@functools.wraps(compare_on_duckdb)
def compare(
    data: Any,
    actual: str,
    predicted: str,
    measures: Sequence[Any],
    *,
    model: str = "model",
    id: str = "id",
    baseline: Any = "A",
    by: str | Sequence[str] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    sample_weight: str | None = None,
    drop_unpaired: bool = False,
    test: str = "bootstrap",
    con: duckdb.DuckDBPyConnection | None = None,
) -> duckdb.DuckDBPyRelation:
    settings = {
        "model": model,
        "id": id,
        "baseline": baseline,
        "by": by,
        "n_resamples": n_resamples,
        "confidence": confidence,
        "seed": seed,
        "sample_weight": sample_weight,
        "drop_unpaired": drop_unpaired,
        "test": test,
    }
    if is_table(data):  # its paired statistics computed in its own database
        from mlsql._ibis.resample import compare as on_ibis

        return on_ibis(data, actual, predicted, measures, **settings)  # type: ignore[return-value]
    return compare_on_duckdb(data, actual, predicted, measures, con=con, **settings)
