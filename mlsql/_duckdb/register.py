"""Load mlsql's macros into a DuckDB connection without clobbering the user's own."""

from __future__ import annotations

from pathlib import Path

import duckdb

from mlsql import _native
from mlsql._duckdb.library import macros, render
from mlsql._errors import MlsqlError
from mlsql._sqlexpr import quote_ident

MARKER = "mlsql macro"


def _clashes(con: duckdb.DuckDBPyConnection, names: set[str]) -> list[str]:
    """Names among ``names`` taken by a function that mlsql did not create.

    A name that already has an mlsql macro (an earlier ``register``, possibly
    with ``replace=True`` over the user's function) is not a clash.
    """
    rows = con.execute(
        "SELECT function_name, bool_or(coalesce(comment, '') LIKE ?) FROM duckdb_functions() "
        "WHERE function_name IN (SELECT unnest(?)) GROUP BY function_name",
        [f"{MARKER}%", sorted(names)],
    ).fetchall()
    return sorted(name for name, ours in rows if not ours)


def register(
    con: duckdb.DuckDBPyConnection,
    *,
    temporary: bool = True,
    replace: bool = False,
    prefix: str = "",
    schema: str | None = None,
    native: bool = False,
) -> duckdb.DuckDBPyConnection:
    """Register every mlsql macro on ``con``.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        The user's connection; nothing else in it is changed.
    temporary : bool, default True
        Create TEMP macros, so nothing is written into the database file.
        ``False`` stores them in the database (``schema`` implies ``False``).
    replace : bool, default False
        Replace functions of the same names that mlsql did not create. Without
        it such a clash is an error naming the functions.
    prefix : str, default ""
        Prepend this to every macro name (``prefix="ml_"`` gives ``ml_micro_f1``).
    schema : str, optional
        Create the macros in this schema (created if missing), called as
        ``schema.micro_f1(...)``.
    native : bool, default False
        Load mlsql's native DuckDB extension into ``con`` and compute the
        per-row label counts with it (same numbers, faster). ``con``'s database
        must have been opened with ``allow_unsigned_extensions`` and the macros
        must be TEMP; :func:`connect` does this whenever the extension is
        available (see :func:`mlsql.native_status`).

    Returns
    -------
    duckdb.DuckDBPyConnection
        ``con`` itself.

    Examples
    --------
    >>> import duckdb, mlsql
    >>> con = mlsql.register(duckdb.connect())
    >>> con.execute("SELECT micro_f1(['a', 'b'], ['a'])").fetchall()[0][0]
    0.6666666666666666
    """
    if schema is not None:
        temporary = False
        qualify = lambda name: f"{quote_ident(schema)}.{prefix}{name}"  # noqa: E731
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {quote_ident(schema)}")
    else:
        qualify = lambda name: f"{prefix}{name}"  # noqa: E731
    if native:
        _load_native(con, temporary)
    all_macros = macros(qualify, native=native)
    names = {f"{prefix}{m.name}" for m in macros()}
    if schema is None and not replace:
        clashes = _clashes(con, names)
        if clashes:
            raise MlsqlError(
                f"mlsql would replace functions already defined on this connection: {', '.join(clashes)}. "
                "Pass replace=True to replace them, or prefix='ml_' or schema='mlsql' to install beside them."
            )
    texts = render(all_macros, temporary=temporary)
    for text in texts.values():
        try:
            con.execute(text)
        except duckdb.BinderException as exc:
            if "storage version" not in str(exc).lower():
                raise
            raise MlsqlError(
                "This database file's storage version is older than 1.4, which cannot store mlsql's "
                "typed macros. Register them as TEMP macros (temporary=True, the default), or open the "
                "file with config={'storage_compatibility_version': 'latest'}."
            ) from exc
    for m in {(m.name, m.table): m for m in all_macros}.values():  # mark them ours
        kind = "MACRO TABLE" if m.table else "MACRO"
        con.execute(
            f"COMMENT ON {kind} {m.name} IS '{MARKER}: {m.doc.replace(chr(39), chr(39) * 2)}'"
        )
    return con


def _load_native(con: duckdb.DuckDBPyConnection, temporary: bool) -> None:
    """Load the native extension into ``con``, or say why it cannot serve it."""
    status = _native.duckdb_native_status()
    if not status["available"]:
        raise MlsqlError(f"mlsql's native DuckDB extension is not available: {status['reason']}.")
    if not temporary:
        raise MlsqlError(
            "native=True needs TEMP macros (temporary=True, no schema): stored macros would call "
            "the native extension in sessions that have not loaded it."
        )
    try:
        con.execute(_native.load_sql(Path(status["path"])))
    except duckdb.Error as exc:
        raise MlsqlError(
            "mlsql's native DuckDB extension did not load on this connection (open the database "
            f"with config={_native.open_config()}): {exc}"
        ) from exc


def connect(database: str = ":memory:", **kwargs: object) -> duckdb.DuckDBPyConnection:
    """Open a DuckDB connection with every mlsql macro registered.

    Where mlsql's native extension is available (:func:`mlsql.native_status`;
    not under ``MLSQL_NATIVE=0``), the database is opened with
    ``allow_unsigned_extensions`` and the macros count labels with it; the
    numbers are those of the portable macros.

    Parameters
    ----------
    database : str, default ":memory:"
        As for :func:`duckdb.connect`.
    **kwargs
        Passed to :func:`register` (``prefix``, ``schema``, ``replace``, ...).

    Examples
    --------
    >>> import mlsql
    >>> con = mlsql.connect()
    >>> con.execute("SELECT fmeasure(['cat', 'dog'], ['cat'])").fetchall()[0][0]
    0.6666666666666666
    """
    native = (
        _native.duckdb_native_status()["enabled"]
        and kwargs.get("temporary", True)
        and kwargs.get("schema") is None
    )
    if native:
        try:
            con = duckdb.connect(database, config=_native.open_config())
        except duckdb.Error:  # e.g. the file is open in this process under another config
            native = False
    if not native:
        con = duckdb.connect(database)
    return register(con, native=bool(native), **kwargs)  # type: ignore[arg-type]
