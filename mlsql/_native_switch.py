"""mlsql's native code, for every engine: where the compiled files are, and the switch.

mlsql computes each row's |A ∩ P|, |A| and |P| either with portable code or
with one C kernel (``native/kernel.h``) behind a DuckDB extension (loaded by
:mod:`mlsql._duckdb.native`) and a Polars plugin (:mod:`mlsql.polars._native`),
and in Spark with a JVM expression and aggregates (``native/spark/*.java``, added to
a session by :mod:`mlsql.spark.jvm`), compiled into the package's ``_native``
folder when it is installed.
``MLSQL_NATIVE=0`` forces the portable paths everywhere (read whenever a
connection or an expression is made).
"""

from __future__ import annotations

import os
from pathlib import Path

#: the environment variable that switches native code off (``MLSQL_NATIVE=0``)
ENV = "MLSQL_NATIVE"
#: the folder inside the package the build puts compiled files into
FOLDER = Path(__file__).resolve().parent / "_native"
_OFF = ("0", "false", "no", "off")


def switched_off() -> bool:
    """Whether ``MLSQL_NATIVE`` asks for the portable paths."""
    return os.environ.get(ENV, "").strip().lower() in _OFF


def status(reason: str | None, path: str | None, **extra: object) -> dict[str, object]:
    """An engine's native status: ``available`` where nothing stops its code (``reason`` is
    None), ``enabled`` where ``MLSQL_NATIVE`` does not switch it off either (then
    ``reason`` says so), ``path`` and ``extra``.

    Examples
    --------
    >>> status(None, "x.so")["enabled"] == (not switched_off())
    True
    >>> status("not built", None)
    {'enabled': False, 'available': False, 'path': None, 'reason': 'not built'}
    """
    available = reason is None
    if available and switched_off():
        reason = f"{ENV}=0"
    return {
        "enabled": reason is None,
        "available": available,
        "path": path,
        **extra,
        "reason": reason,
    }


#: mlsql's JVM expression and aggregates for Spark (``native/build_spark.py``), in the native folder
SPARK_JAR = FOLDER / "mlsql_spark.jar"


def spark_native_status() -> dict[str, object]:
    """Whether Spark sessions get mlsql's JVM expression and aggregates (:mod:`mlsql.spark.jvm`), and why (not).

    What a running session adds (its ``spark.mlsql.jvm`` setting, a Spark Connect
    session, a jar that fails to load) is decided where a Column is built; this says
    what the installation allows: ``available`` (the jar was built and PySpark is
    importable), ``enabled`` (and ``MLSQL_NATIVE`` does not switch it off), ``path``
    and ``reason``.

    Examples
    --------
    >>> sorted(spark_native_status())
    ['available', 'enabled', 'path', 'reason']
    """
    import importlib.util

    reason = None
    if importlib.util.find_spec("pyspark") is None:
        reason = "PySpark is not installed (the spark extra)"
    elif not SPARK_JAR.is_file():
        reason = "the jar was not built (no JDK at install time?)"
    return status(reason, str(SPARK_JAR))
