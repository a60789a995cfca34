"""mlsql: evaluate predictions where they live, in DuckDB SQL, Polars and Spark.

The DuckDB functions below load DuckDB when first used, so ``import
mlsql.polars`` or ``import mlsql.spark`` does not import DuckDB.

Examples
--------
>>> import mlsql
>>> con = mlsql.connect()
>>> con.execute("SELECT micro_f1(['cat', 'bird'], ['cat', 'dog'])").fetchall()[0][0]
0.5
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mlsql._errors import MlsqlError

if TYPE_CHECKING:
    from mlsql import report
    from mlsql._duckdb.register import connect, register
    from mlsql._native import native_status
    from mlsql.tables import label_metrics, multilabel_report

__version__ = "0.1.0"
__all__ = [
    "MlsqlError",
    "__version__",
    "connect",
    "label_metrics",
    "multilabel_report",
    "native_status",
    "register",
    "report",
]

#: the functions that need DuckDB, imported on first use: name -> module
_DUCKDB = {
    "connect": "mlsql._duckdb.register",
    "register": "mlsql._duckdb.register",
    "label_metrics": "mlsql.tables",
    "multilabel_report": "mlsql.tables",
    "native_status": "mlsql._native",
}


def __getattr__(name: str) -> Any:
    if name == "report":  # callable: mlsql.report(data, actual, predicted, ...) -> Report
        import importlib

        return importlib.import_module("mlsql.report")
    if name in _DUCKDB:
        import importlib

        value = getattr(importlib.import_module(_DUCKDB[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mlsql' has no attribute {name!r}")
