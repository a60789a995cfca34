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
DuckDB :data:`MIN_DUCKDB` and later, after a probe on a scratch in-memory
database found every function the macros call (:data:`FUNCTIONS`) and each
gave the expected rows (once per process).

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


#: the extension's per-row counts (a scalar function), per-label table and label-score
#: segments (aggregates)
COUNTS, LABEL_TABLE = "mlsql_native_counts", "mlsql_native_label_table"
LABEL_SCORES = "mlsql_native_label_scores"
#: the extension's per-(label, score) cells (an aggregate: the curve and threshold tables)
LABEL_CELLS = "mlsql_native_label_cells"
#: every extension function mlsql's native macros call (the probe checks each is there)
FUNCTIONS = {
    COUNTS: "scalar",
    LABEL_TABLE: "aggregate",
    LABEL_SCORES: "aggregate",
    LABEL_CELLS: "aggregate",
}

#: probe queries and their expected rows, one per function of :data:`FUNCTIONS`. Counts:
#: duplicates, a NULL element, a label longer than DuckDB's 12 inlined bytes, a NULL list,
#: integers of two widths. Label table: one row, its labels and its row kind.
_PROBES = {
    COUNTS: """
SELECT mlsql_native_counts(a, p) FROM (VALUES
    (['x', 'x', NULL, 'yyyyyyyyyyyyyyyyyyyy'], ['x', 'yyyyyyyyyyyyyyyyyyyy', 'z']),
    (['x'], NULL)) t(a, p)
UNION ALL
SELECT mlsql_native_counts([1, 2, 2]::TINYINT[], [2, 4]::BIGINT[])
""",
    LABEL_TABLE: """
SELECT e.label, e.tp, e.n_actual, e.n_predicted, e.n
FROM (SELECT unnest(mlsql_native_label_table(a, p)) AS e
      FROM (VALUES (['x', 'x', NULL], ['x', 'z'])) t(a, p))
""",
    LABEL_SCORES: """
SELECT m, s.nu, list_sort(s.segs) FROM (
    SELECT m, mlsql_native_label_scores(a, k, v::DOUBLE[], 1.0, m::INTEGER) AS s
    FROM (VALUES (['x', 'y'], ['x', 'z', 'x'], [0.5, 0.3, 0.9]),
                 (['y'], ['z'], [NULL]),
                 (['z'], ['x', 'z'], [0.5, 0.5])) t(a, k, v), range(3) r(m)
    GROUP BY m)
""",
    LABEL_CELLS: """
SELECT c.label, c.score, c.pos, c.neg, c.rows FROM (
    SELECT unnest(mlsql_native_label_cells(a, k, v::DOUBLE[], 1.0, 3)) AS c
    FROM (VALUES (['x', 'y'], ['x', 'z', 'x'], [0.5, 0.3, 0.9]),
                 (['y'], ['z'], [NULL]),
                 (['z'], ['x', 'z'], [0.5, 0.5])) t(a, k, v))
""",
}


def _segment(
    ne: float, np: float, npu: float, ps: float, u: float, w: float = 1.0, rows: int = 1
) -> dict[str, Any]:
    """A segment of the label-score aggregate's output, as DuckDB's Python client gives it."""
    names = ("n_explicit", "n_positive", "n_positive_unscored", "precision_sum", "u", "w")
    return {**dict(zip(names, map(float, (ne, np, npu, ps, u, w)), strict=True)), "rows": rows}


_PROBES_EXPECTED = {
    COUNTS: sorted(
        [
            ({"tp": 2, "n_actual": 2, "n_predicted": 3},),
            (None,),
            ({"tp": 1, "n_actual": 2, "n_predicted": 2},),
        ],
        key=repr,
    ),
    LABEL_TABLE: sorted([("x", 1, 1, 1, None), ("z", 0, 0, 1, None), (None, 1, 1, 2, 1)], key=repr),
    # a label's first score counts; a NULL score or none: -inf; ties; micro, labels, rows
    LABEL_SCORES: [
        (0, 3, [_segment(6, 4, 2, 4 / 3, 3)]),
        (1, 3, [_segment(2, 1, 0, 0.5, 0.5), _segment(2, 1, 0, 1, 1), _segment(2, 2, 2, 0, 0)]),
        (2, 3, [_segment(1, 1, 1, 0, 0), _segment(2, 1, 0, 0.5, 0.5), _segment(3, 2, 1, 1, 1)]),
    ],
    # a label's first score counts; a true label without a score: score NULL; its rows
    LABEL_CELLS: [
        ("x", 0.5, 1.0, 1.0, 2),
        ("y", None, 2.0, 0.0, 2),
        ("z", 0.3, 0.0, 1.0, 2),
        ("z", 0.5, 1.0, 0.0, 2),
    ],
}


def missing_functions(con: Any) -> list[str]:
    """The functions of :data:`FUNCTIONS` that ``con`` lacks or has as another kind.

    An extension built from older sources loads and passes a probe of its
    older functions, then fails on the first macro calling a newer one: this
    finds that first.
    """
    rows = con.execute(
        "SELECT DISTINCT function_name, function_type FROM duckdb_functions() "
        "WHERE list_contains(?, function_name)",
        [list(FUNCTIONS)],
    ).fetchall()
    found = set(rows)
    return [name for name, kind in FUNCTIONS.items() if (name, kind) not in found]


@functools.cache
def _probe_duckdb(path: Path) -> str | None:
    """None if the extension at ``path`` loads, has every function mlsql's macros call, and
    each computes its probe correctly; else why not."""
    import duckdb

    try:
        con = duckdb.connect(":memory:", config=dict(open_config()))
        try:
            con.execute(load_sql(path))
            missing = missing_functions(con)
            if missing:
                return (
                    f"the extension at {path} lacks {', '.join(missing)} "
                    "(built from older sources? rebuild it with native/build_duckdb.py)"
                )
            got = {
                name: sorted(con.execute(sql).fetchall(), key=repr) for name, sql in _PROBES.items()
            }
        finally:
            con.close()
    except Exception as error:  # any failure to load or run means: stay portable
        return f"the extension did not load: {type(error).__name__}: {error}"
    for name, expected in _PROBES_EXPECTED.items():
        if got[name] != expected:
            return f"the extension's probe of {name} gave {got[name]}, expected {expected}"
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
