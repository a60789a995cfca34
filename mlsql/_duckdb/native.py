"""mlsql's native code in DuckDB: where the extension is, whether it loads, which path is used.

mlsql computes each row's |A ∩ P|, |A| and |P| either with portable code
(DuckDB macros over list functions, Polars expressions) or with one C kernel
(``native/kernel.h``) behind a DuckDB extension and a Polars plugin, compiled
into the package's ``_native`` folder when it is installed. Both give the same
numbers; the native path is faster.

DuckDB: DuckDB loads an unsigned extension only into a database opened with
``allow_unsigned_extensions``, so the extension serves the connections
:func:`mlsql.connect` opens (with TEMP macros); :func:`mlsql.register` on a
user's own connection keeps the portable macros unless asked for
``native=True``. The extension targets DuckDB's C API v1.2.0 and is used on
DuckDB :data:`MIN_DUCKDB` and later, after a probe query on a scratch
in-memory database gave the expected counts (once per process).

``MLSQL_NATIVE=0`` forces the portable paths everywhere (read whenever a
connection or an expression is made). :func:`mlsql.native_status` says, per
engine, whether the native path is built, loads, and is used, and why not.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any

from mlsql._native_switch import ENV, FOLDER, switched_off

#: a path to a DuckDB extension to use instead of the packaged one (tests, sanitizer builds)
DUCKDB_PATH_ENV = "MLSQL_DUCKDB_EXTENSION"
#: the oldest DuckDB the extension was checked with (C API v1.2.0; 1.1 refuses C API extensions)
MIN_DUCKDB = (1, 3, 2)
DUCKDB_FILE = "mlsql.duckdb_extension"


def duckdb_version() -> tuple[int, ...]:
    """The running DuckDB's (major, minor, patch).

    Examples
    --------
    >>> len(duckdb_version())
    3
    """
    import duckdb  # here, not at import: mlsql.polars must not load DuckDB

    return tuple(int(x) for x in re.findall(r"\d+", duckdb.__version__)[:3])


def duckdb_extension_path() -> Path | None:
    """The extension to load: ``$MLSQL_DUCKDB_EXTENSION``, else the packaged one, else None."""
    override = os.environ.get(DUCKDB_PATH_ENV)
    if override:
        return Path(override)
    packaged = FOLDER / DUCKDB_FILE
    return packaged if packaged.is_file() else None


def open_config() -> dict[str, Any]:
    """The ``duckdb.connect`` config a database needs for mlsql's extension to load."""
    return {"allow_unsigned_extensions": "true"}


def load_sql(path: Path) -> str:
    """The ``LOAD`` statement for the extension at ``path`` (a quoted string literal)."""
    return "LOAD '" + str(path).replace("'", "''") + "'"


#: probe rows and their expected (tp, n_actual, n_predicted): duplicates, NULL element,
#: a label longer than DuckDB's 12 inlined bytes, a NULL list, integers of two widths
_PROBE = """
SELECT mlsql_native_counts(a, p) FROM (VALUES
    (['x', 'x', NULL, 'yyyyyyyyyyyyyyyyyyyy'], ['x', 'yyyyyyyyyyyyyyyyyyyy', 'z']),
    (['x'], NULL)) t(a, p)
UNION ALL
SELECT mlsql_native_counts([1, 2, 2]::TINYINT[], [2, 4]::BIGINT[])
"""
_PROBE_EXPECTED = sorted(
    [
        ({"tp": 2, "n_actual": 2, "n_predicted": 3},),
        (None,),
        ({"tp": 1, "n_actual": 2, "n_predicted": 2},),
    ],
    key=repr,
)


@functools.cache
def _probe_duckdb(path: Path) -> str | None:
    """None if the extension at ``path`` loads and counts correctly, else why not."""
    import duckdb

    try:
        con = duckdb.connect(":memory:", config=dict(open_config()))
        try:
            con.execute(load_sql(path))
            got = sorted(con.execute(_PROBE).fetchall(), key=repr)
        finally:
            con.close()
    except Exception as error:  # any failure to load or run means: stay portable
        return f"the extension did not load: {type(error).__name__}: {error}"
    if got != _PROBE_EXPECTED:
        return f"the extension's probe gave {got}, expected {_PROBE_EXPECTED}"
    return None


def duckdb_native_status() -> dict[str, Any]:
    """Whether :func:`mlsql.connect` uses the native extension, and why (not).

    Returns
    -------
    dict
        ``built`` (a compiled extension is there), ``available`` (it loads on
        this DuckDB and counts correctly), ``enabled`` (connections opened now
        use it), ``path``, ``duckdb`` (the running version) and ``reason``
        (why it is not used, or None).

    Examples
    --------
    >>> sorted(duckdb_native_status())
    ['available', 'built', 'duckdb', 'enabled', 'path', 'reason']
    """
    import duckdb

    path = duckdb_extension_path()
    built = path is not None and path.is_file()
    reason: str | None
    if duckdb_version() < MIN_DUCKDB:
        wanted = ".".join(map(str, MIN_DUCKDB))
        reason = f"DuckDB {duckdb.__version__} is older than {wanted}, the oldest checked"
    elif path is None:
        reason = "the extension was not built (no C compiler or no DuckDB headers at install time?)"
    elif not built:
        reason = f"no extension at {path}"
    else:
        reason = _probe_duckdb(path)
    available = reason is None
    if available and switched_off():
        reason = f"{ENV}=0"
    return {
        "built": built,
        "available": available,
        "enabled": reason is None,
        "path": str(path) if path is not None else None,
        "duckdb": duckdb.__version__,
        "reason": reason,
    }
