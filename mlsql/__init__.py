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
    from mlsql._dispatch import bootstrap, compare, evaluate
    from mlsql._duckdb.confusion_wide import confusion_matrix_wide
    from mlsql._duckdb.connection import connect
    from mlsql._duckdb.indicators import (
        from_indicators,
        lists_from_matrix,
        matrix_from_lists,
        to_indicators,
    )
    from mlsql._duckdb.label_tables import label_metrics, multilabel_report
    from mlsql._duckdb.register import register
    from mlsql._duckdb.slices import slices
    from mlsql.report.api import report

__all__ = [
    "MlsqlError",
    "__version__",
    "bootstrap",
    "compare",
    "confusion_matrix_wide",
    "connect",
    "evaluate",
    "from_indicators",
    "label_metrics",
    "lists_from_matrix",
    "matrix_from_lists",
    "multilabel_report",
    "native_status",
    "register",
    "report",
    "slices",
    "to_indicators",
]

#: the functions that need DuckDB, imported on first use: name -> module
_DUCKDB = {
    "connect": "mlsql._duckdb.connection",
    "register": "mlsql._duckdb.register",
    "label_metrics": "mlsql._duckdb.label_tables",
    "bootstrap": "mlsql._dispatch",  # DuckDB, or an ibis table's statistics in its database
    "compare": "mlsql._dispatch",  # DuckDB, or an ibis table's paired statistics in its database
    "slices": "mlsql._duckdb.slices",
    "evaluate": "mlsql._dispatch",  # DuckDB, or an ibis table in its own database
    "multilabel_report": "mlsql._duckdb.label_tables",
    "confusion_matrix_wide": "mlsql._duckdb.confusion_wide",
    "from_indicators": "mlsql._duckdb.indicators",
    "to_indicators": "mlsql._duckdb.indicators",
    "lists_from_matrix": "mlsql._duckdb.indicators",
    "matrix_from_lists": "mlsql._duckdb.indicators",
}


def native_status() -> dict[str, dict[str, Any]]:
    """Per engine (``duckdb``, ``polars``, ``spark``), whether mlsql's native code is built, loads
    and is used.

    Returns
    -------
    dict
        ``{"duckdb": {...}, "polars": {...}, "spark": {...}}``; each holds at least
        ``available`` (the compiled code loads and works on this engine
        version), ``enabled`` (what mlsql uses now: native if True),
        ``reason`` (why not, or None) and ``package`` (the directory of the
        mlsql imported). When that is a source tree without the compiled
        file (Python run from a checkout imports it before the installed
        copy), ``reason`` says so and where the installed copy is.

    Examples
    --------
    >>> import mlsql
    >>> status = mlsql.native_status()
    >>> sorted(status), isinstance(status["duckdb"]["enabled"], bool)
    (['duckdb', 'polars', 'spark'], True)
    """
    from mlsql._duckdb.native import duckdb_native_status
    from mlsql._native_switch import spark_native_status

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
    status = {"duckdb": duckdb_native_status(), "polars": polars, "spark": spark_native_status()}
    for found in status.values():
        _say_which_copy(found)
    return status


def _say_which_copy(status: dict[str, Any]) -> None:
    """Add the imported package's directory to one engine's ``status``, and to its ``reason``
    why a source tree has no compiled file (it is built only into an installed copy)."""
    import importlib.metadata
    from pathlib import Path

    here = Path(__file__).resolve().parent
    status["package"] = str(here)
    compiled = status.get("path")
    if status["reason"] is None or (compiled is not None and Path(compiled).is_file()):
        return
    if not (here.parent / "pyproject.toml").is_file():
        return  # an installed copy: the engine's reason says it all
    try:
        dist = importlib.metadata.distribution("mlsql")
        installed = Path(str(dist.locate_file("mlsql/__init__.py"))).resolve().parent
    except importlib.metadata.PackageNotFoundError:
        installed = None
    where = (
        f"the installed copy is at {installed}: run Python from another directory"
        if installed is not None and installed != here and installed.is_dir()
        else "build it here (python native/build_duckdb.py, python native/build_polars.py, "
        "python native/build_spark.py) "
        "or run Python from another directory"
    )
    status["reason"] = (
        f"{status['reason']}; the mlsql imported is the source tree at {here} (Python run "
        f"from a checkout imports it first), where nothing is compiled; {where}"
    )


def __getattr__(name: str) -> Any:
    if name == "report":  # the function mlsql.report(data, actual, predicted, ...) -> Report
        import importlib

        report = importlib.import_module("mlsql.report.api").report
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
