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

import sys
import types
from typing import TYPE_CHECKING, Any

from mlsql._errors import MlsqlError
from mlsql._version import __version__

if TYPE_CHECKING:
    from mlsql._duckdb.confusion_wide import confusion_matrix_wide
    from mlsql._duckdb.indicators import (
        from_indicators,
        lists_from_matrix,
        matrix_from_lists,
        to_indicators,
    )
    from mlsql._duckdb.label_tables import label_metrics, multilabel_report
    from mlsql._duckdb.register import connect, register
    from mlsql._duckdb.resample import bootstrap, compare
    from mlsql.report.api import report

__all__ = [
    "MlsqlError",
    "__version__",
    "bootstrap",
    "compare",
    "confusion_matrix_wide",
    "connect",
    "from_indicators",
    "label_metrics",
    "lists_from_matrix",
    "matrix_from_lists",
    "multilabel_report",
    "native_status",
    "register",
    "report",
    "to_indicators",
]

#: the functions that need DuckDB, imported on first use: name -> module
_DUCKDB = {
    "connect": "mlsql._duckdb.register",
    "register": "mlsql._duckdb.register",
    "label_metrics": "mlsql._duckdb.label_tables",
    "bootstrap": "mlsql._duckdb.resample",
    "compare": "mlsql._duckdb.resample",
    "multilabel_report": "mlsql._duckdb.label_tables",
    "confusion_matrix_wide": "mlsql._duckdb.confusion_wide",
    "from_indicators": "mlsql._duckdb.indicators",
    "to_indicators": "mlsql._duckdb.indicators",
    "lists_from_matrix": "mlsql._duckdb.indicators",
    "matrix_from_lists": "mlsql._duckdb.indicators",
}


def native_status() -> dict[str, dict[str, Any]]:
    """Per engine (``duckdb``, ``polars``), whether mlsql's native code is built, loads and is used.

    Returns
    -------
    dict
        ``{"duckdb": {...}, "polars": {...}}``; each holds at least
        ``available`` (the compiled code loads and works on this engine
        version), ``enabled`` (what mlsql uses now: native if True) and
        ``reason`` (why not, or None).

    Examples
    --------
    >>> import mlsql
    >>> status = mlsql.native_status()
    >>> sorted(status), isinstance(status["duckdb"]["enabled"], bool)
    (['duckdb', 'polars'], True)
    """
    from mlsql._duckdb.native import duckdb_native_status

    try:
        from mlsql.polars._native import polars_native_status
    except ImportError as error:  # Polars missing: its side is simply not there
        polars: dict[str, Any] = {
            "available": False,
            "enabled": False,
            "reason": f"Polars is not importable: {error}",
        }
    else:
        polars = polars_native_status()
    return {"duckdb": duckdb_native_status(), "polars": polars}


def __getattr__(name: str) -> Any:
    if name == "report":  # the function mlsql.report(data, actual, predicted, ...) -> Report
        from mlsql.report.api import report

        globals()["report"] = report
        return report
    if name in _DUCKDB:
        import importlib

        value = getattr(importlib.import_module(_DUCKDB[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mlsql' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names, those imported on first use included (``report``, ``connect``...)."""
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    """The package ``mlsql``, whose name ``report`` is the function :func:`mlsql.report`.

    Importing the subpackage ``mlsql.report`` (where the function and the
    :class:`~mlsql.report.Report` class live) would bind the name to the
    subpackage; the subpackage stays in ``sys.modules`` for imports, and
    ``mlsql.report`` stays the function, with its signature and docstring.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "report" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
