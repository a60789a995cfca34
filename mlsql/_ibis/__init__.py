"""mlsql on ibis tables: the registry's formulas lowered to ibis expressions.

An ibis table expression names a table in some database (DuckDB, PostgreSQL,
DataFusion, BigQuery, Snowflake, ...). ``mlsql.evaluate`` over one builds each
measure from its registry formula (:mod:`mlsql._formulas`) with ibis'
operators as the engine's primitives (:mod:`mlsql._ibis.ops`), over per-row
statistics written with ibis' array operations (:mod:`mlsql._ibis.stats`); ibis
compiles the one ``GROUP BY`` to the backend's SQL, so the rows stay in the
database and one row per group and measure comes back.

What mlsql knows of each backend (a fence PostgreSQL needs, DataFusion's label sets
without array filters, what a backend's error means) is in :mod:`mlsql._ibis.backends`
and :mod:`mlsql._ibis.stats`.
"""

from __future__ import annotations

from typing import Any


def is_table(data: Any) -> bool:
    """Whether ``data`` is an ibis table expression (ibis is not imported to answer).

    Examples
    --------
    >>> import ibis
    >>> is_table(ibis.memtable({"x": [1]})), is_table("preds")
    (True, False)
    """
    return type(data).__module__.startswith("ibis.") and hasattr(data, "schema")


def backend_name(expr: Any) -> str:
    """The name of the backend a table or column expression runs on (ibis' default for a
    memtable; an unbound table has none)."""
    try:
        return str(expr.get_backend().name)
    except Exception:  # an unbound table: ibis picks its default backend when it runs
        return "ibis' default backend"
