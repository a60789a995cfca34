"""Load mlsql's macros into a DuckDB connection without clobbering the user's own.

Which functions are mlsql's
    Every macro mlsql creates carries the comment ``mlsql macro <token>
    <library> <definition>: <summary>``, where ``<token>`` is a hash of the
    function's own name (:func:`token`), ``<library>`` a hash of the whole
    library text and ``<definition>`` a hash of the function's definitions as
    DuckDB stores them (:func:`definition_hashes`, read back once the macros
    exist). A user's function never has that comment by accident: a comment
    that merely starts with "mlsql macro", one copied from another function,
    or mlsql's own comment copied onto a function of the same name but
    another body, does not carry the token of its name and the hash of its
    definitions. Any other function of one of the names mlsql would create is
    a clash, refused unless ``replace=True``.

Speed
    Creating ~360 macros (~750 overloads), many with typed parameters, makes
    DuckDB bind those bodies (2 to 3 s of CPU: ``benchmarks/``). A library
    stored as catalog objects of an in-memory database (``temporary=False``,
    which :func:`connect` uses there) is instead built once per mlsql
    version (the path, size and modification time of its sources), DuckDB
    version and arguments into a small database file in the user's cache
    directory (``$MLSQL_CACHE_DIR``, else ``$XDG_CACHE_HOME/mlsql`` or
    ``~/.cache/mlsql``), beside a list of its function names, and copied from
    there with one ``COPY FROM DATABASE`` (no re-binding). Finding and
    copying it builds none of the library in Python and imports none of the
    modules that write it: the names are checked against the connection's
    functions from the list. Stored libraries unused for two days are
    deleted when another is built. Without a writable cache directory the
    macros are created directly, as for ``temporary=True``.

Threads
    Registration in one process is serialized by a lock, so registering on
    several cursors of one database at once cannot meet a catalog
    write-write conflict; a library already registered and up to date is
    left as it is. :func:`connect` remembers its thread, so that mlsql's
    functions called with its connection in other threads work on cursors of
    it (:mod:`mlsql._duckdb.threads`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from mlsql import _params as P
from mlsql._cache import cache_dir
from mlsql._duckdb import native as _native
from mlsql._duckdb.threads import opened
from mlsql._errors import MlsqlError
from mlsql._sqltext import WRITE_DUCKDB, quote_ident

if TYPE_CHECKING:
    from mlsql._duckdb.library import Macro

MARKER = "mlsql macro"
#: how mlsql's macros are marked (:func:`comment`, :func:`_definition_hash`): change it with them
_MARKS = "definition-tokens-1"
_LOCK = threading.RLock()
_STORAGE_MESSAGE = (
    "This database file's storage version is older than 1.4, which cannot store mlsql's "
    "typed macros. Register them as TEMP macros (temporary=True, the default), or open the "
    "file with config={'storage_compatibility_version': 'latest'}."
)


def token(name: str) -> str:
    """The ownership token of the mlsql function called ``name`` (case-insensitive).

    Examples
    --------
    >>> len(token("micro_f1")), token("micro_f1") == token("MICRO_F1")
    (16, True)
    """
    return hashlib.sha256(f"mlsql:{name.lower()}".encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=2)
def library_hash(native: bool = False) -> str:
    """A hash of the library's SQL text (portable or native): it changes with any macro."""
    from mlsql._duckdb.library import macros, render

    text = "".join(render(macros(native=native)).values())
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def comment(name: str, doc: str, definition: str, native: bool = False) -> str:
    """The comment mlsql puts on its function ``name`` whose definitions hash to ``definition``."""
    return f"{MARKER} {token(name)} {library_hash(native)} {definition}: {doc}"


def _definition_hash(name: str, overloads: list[tuple[Any, Any, Any, Any]]) -> str:
    """A hash of a function's kind, parameters and bodies (every overload) as DuckDB stores them.

    A body counts as the sorted list of its tokens: DuckDB prints some lists
    (``EXCLUDE (...)``) in an order that changes when a macro is stored and read back.
    """
    text = "\n".join(
        sorted(
            repr((kind, params, types, sorted(re.findall(r"\w+|\S", body or ""))))
            for kind, params, types, body in overloads
        )
    )
    return hashlib.sha256(f"{name.lower()}\n{text}".encode()).hexdigest()[:16]


# The queries registration runs on the user's connection, written with DuckDB's builtins
# qualified (as qualify_builtins would: tests/test_reliability_catalog.py checks it), so that
# neither a user's function of those names nor building the list of builtins comes first.
_FUNCTIONS = (
    "SELECT system.main.lower(function_name), database_name, schema_name, function_type, "
    "coalesce(comment, ''), parameters, parameter_types, macro_definition "
    "FROM system.main.duckdb_functions() "
    "WHERE system.main.lower(function_name) IN (SELECT system.main.unnest(?))"
)
_IN_SCHEMA = " AND schema_name = ? AND database_name = system.main.current_database()"
_CURRENT = "SELECT system.main.current_database(), system.main.current_schema()"
_PATH = (
    "SELECT path FROM system.main.duckdb_databases() "
    "WHERE database_name = system.main.current_database()"
)


def _functions(
    con: duckdb.DuckDBPyConnection, names: list[str], where: str = "", args: list[Any] | None = None
) -> dict[tuple[str, str, str, str], tuple[str, str]]:
    """The functions of ``names`` (and ``where``): (name, database, schema, kind) -> (comment,
    hash of its definitions)."""
    rows = con.execute(_FUNCTIONS + where, [names, *(args or [])]).fetchall()
    grouped: dict[tuple[str, str, str, str], list[tuple[Any, ...]]] = {}
    for name, database, schema, kind, text, *definition in rows:
        grouped.setdefault((name, database, schema, kind), []).append((text, kind, *definition))
    return {
        key: (overloads[0][0], _definition_hash(key[0], [o[1:] for o in overloads]))
        for key, overloads in grouped.items()
    }


def definition_hashes(
    con: duckdb.DuckDBPyConnection, names: list[str], database: str, schema: str
) -> dict[tuple[str, bool], str]:
    """The hash of the definitions of each function of ``names`` in ``database.schema``, by
    (lower-case name, table macro)."""
    where = " AND database_name = ? AND schema_name = ?"
    found = _functions(con, names, where, [database, schema])
    return {(name, kind == "table_macro"): h for (name, _, _, kind), (_, h) in found.items()}


def _mark(
    con: duckdb.DuckDBPyConnection,
    all_macros: list[Macro],
    temporary: bool,
    schema: str | None,
    native: bool,
) -> None:
    """Comment every macro of ``all_macros`` (just created on ``con``) as mlsql's."""
    if temporary:
        database, where = "temp", "main"
    else:
        database, where = con.execute(_CURRENT).fetchone()  # type: ignore[misc]
        where = schema or where
    plain = {m.name.rsplit(".", 1)[-1].lower() for m in all_macros}
    hashes = definition_hashes(con, sorted(plain), database, where)
    marks = []
    for m in {(m.name, m.table): m for m in all_macros}.values():
        name = m.name.rsplit(".", 1)[-1]
        full = ".".join(quote_ident(part) for part in (database, where)) + f".{name}"
        text = comment(name, m.doc, hashes[(name.lower(), m.table)], native)
        marks.append(
            f"COMMENT ON {'MACRO TABLE' if m.table else 'MACRO'} {full} IS {WRITE_DUCKDB(text)};"
        )
    con.execute("\n".join(marks))


@functools.lru_cache(maxsize=32)
def _library(
    prefix: str, schema: str | None, native: bool = False
) -> tuple[list[Macro], frozenset[str]]:
    """Every macro named for ``prefix`` and ``schema``, and their plain names."""
    from mlsql._duckdb.library import macros

    if schema is None:
        qualify = lambda name: f"{prefix}{name}"  # noqa: E731
    else:
        qualify = lambda name: f"{quote_ident(schema)}.{prefix}{name}"  # noqa: E731
    names = frozenset(f"{prefix}{m.name}".lower() for m in macros())
    return macros(qualify, native=native), names


@functools.lru_cache(maxsize=32)
def _script(prefix: str, schema: str | None, temporary: bool, native: bool = False) -> str:
    """One SQL script creating (or replacing) the library (:func:`_mark` marks it mlsql's)."""
    from mlsql._duckdb.library import render

    all_macros, _ = _library(prefix, schema, native)
    parts = [] if schema is None else [f"CREATE SCHEMA IF NOT EXISTS {quote_ident(schema)};"]
    parts += render(all_macros, temporary=temporary).values()
    return "\n".join(parts)


def _where(schema: str | None) -> tuple[str, list[Any]]:
    """The condition of :data:`_FUNCTIONS` (and its arguments) for the functions that
    :func:`_existing` considers."""
    return ("", []) if schema is None else (_IN_SCHEMA, [schema])


def _existing(
    con: duckdb.DuckDBPyConnection,
    names: frozenset[str],
    schema: str | None,
    temporary: bool = True,
    native: bool = False,
    prefix: str = "",
) -> dict[str, tuple[bool, bool]]:
    """Functions named as mlsql's would be: name -> (mlsql's, mlsql's and up to date).

    A name counts as mlsql's when one of its functions is (a user's function
    that ``replace=True`` shadowed with a TEMP macro is no clash any more):
    its mark names it and its definitions hash as the mark says, or (the mark
    made by another DuckDB version, which prints definitions otherwise, as
    ``mlsql.sql`` (``mlsql sql-path``)'s are) as this version's of the same library do.

    Without ``schema`` any function of such a name counts (it would be
    replaced or shadowed); with it, those in that schema of the current
    database. With ``temporary`` False only stored (not TEMP) macros are
    up to date.
    """
    found = _functions(con, sorted(names), *_where(schema))
    out: dict[str, tuple[bool, bool]] = {}
    for (name, database, _, kind), (text, definition) in found.items():
        mark = text.split(":", 1)[0].split(" ")
        ours = mark[:3] == [*MARKER.split(), token(name)] and len(mark) == 5
        current = ours and mark[3] == library_hash(native)
        if ours and mark[4] != definition:
            reference = _reference(prefix, schema, native)
            ours = definition in reference.get((name, kind == "table_macro"), set())
            current = current and ours
        current = current and (temporary or database != "temp")  # stored asked for: TEMP won't do
        was = out.get(name, (False, False))
        out[name] = (was[0] or ours, was[1] or current)
    return out


@functools.lru_cache(maxsize=8)
def _reference(prefix: str, schema: str | None, native: bool) -> dict[tuple[str, bool], set[str]]:
    """The hashes of this library's definitions as this DuckDB version prints them, when just
    made (in a scratch in-memory database) and when read back from storage (the stored
    library, and a scratch file in the oldest storage that holds typed macros, v1.4.0, which
    ``mlsql install`` writes): some versions print a stored constant otherwise (``true`` read back is
    ``CAST('t' AS BOOLEAN)``). Empty if neither can be made."""
    names = sorted(_library(prefix, schema, native)[1])
    out: dict[tuple[str, bool], set[str]] = {}
    config: dict[str, Any] = dict(_native.open_config()) if native else {}
    with contextlib.suppress(duckdb.Error), duckdb.connect(config=config) as fresh:
        if native:
            fresh.execute(_native.load_sql(Path(_native.duckdb_native_status()["path"])))
        fresh.execute(_script(prefix, schema, False, native))
        for key, h in definition_hashes(fresh, names, "memory", schema or "main").items():
            out.setdefault(key, set()).add(h)
    stored = [_stored_library(prefix, schema, native)]
    with tempfile.TemporaryDirectory() as scratch:
        if not native:  # a file of the oldest storage that holds typed macros prints otherwise
            old = Path(scratch) / "v1.4.db"
            with (
                contextlib.suppress(duckdb.Error),
                duckdb.connect(str(old), config={"storage_compatibility_version": "v1.4.0"}) as c,
            ):
                c.execute(_script(prefix, schema, False, native))
                stored.append(old)
        for path in stored:
            if path is None or not path.exists():
                continue
            with (
                contextlib.suppress(duckdb.Error),
                duckdb.connect(str(path), read_only=True, config=config) as ref,
            ):
                database = ref.execute(_CURRENT).fetchone()[0]  # type: ignore[index]
                for key, h in definition_hashes(ref, names, database, schema or "main").items():
                    out.setdefault(key, set()).add(h)
    return out


@functools.lru_cache(maxsize=1)
def _sources() -> str | None:
    """A hash of the path, size and modification time of each of mlsql's Python sources,
    which write the library (as Python's own bytecode cache tells a changed source); None
    if they cannot be read."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    try:
        paths = sorted(root.rglob("*.py"))
        for path in paths:
            stat = path.stat()
            name = path.relative_to(root).as_posix()
            digest.update(f"{name}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    except OSError:
        return None
    return digest.hexdigest() if paths else None


def _stored_path(prefix: str, schema: str | None, native: bool) -> Path:
    """Where the stored library of these arguments is kept.

    Its name is a hash of what writes the library (mlsql's sources, the
    running DuckDB's version, how the marks are made) and of the arguments:
    finding it builds none of the library. Where the sources cannot be
    listed, the library's text itself is hashed.
    """
    source = _sources()
    if source is None:
        source = _script(prefix, schema, False, native)
    key = f"{duckdb.__version__}\n{_MARKS}\n{prefix}\n{schema}\n{native}\n{source}"
    return cache_dir() / f"duckdb-library-{hashlib.sha256(key.encode()).hexdigest()[:24]}.duckdb"


def _stored_library(prefix: str, schema: str | None, native: bool = False) -> Path | None:
    """A database file holding the library as catalog objects (built if missing); None if
    none can be written."""
    path = _stored_path(prefix, schema, native)
    if path.exists():
        with contextlib.suppress(OSError):
            os.utime(path)  # in use: not pruned
        return path
    script = _script(prefix, schema, False, native)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    names = tmp.with_name(tmp.name + ".names")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        config: dict[str, Any] = {"storage_compatibility_version": "latest"}
        if native:  # the macros call the extension: it must be loaded where they are made
            config.update(_native.open_config())
        build = duckdb.connect(str(tmp), config=config)
        try:
            if native:
                status = _native.duckdb_native_status()
                build.execute(_native.load_sql(Path(status["path"])))
            build.execute(script)
            _mark(build, _library(prefix, schema, native)[0], False, schema, native)
        finally:
            build.close()
        names.write_text("\n".join(sorted(_library(prefix, schema)[1])) + "\n", encoding="utf-8")
        os.replace(names, _names_path(path))  # the names first: a library found has its names
        os.replace(tmp, path)  # atomic: a concurrent reader sees no half-built file
    except (OSError, duckdb.Error):
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal"), names):
            with contextlib.suppress(OSError):
                leftover.unlink(missing_ok=True)
        return None
    _prune(path)
    return path


#: a stored library unused this long is deleted when another is built
_UNUSED = 2 * 24 * 3600


def _names_path(path: Path) -> Path:
    """The file listing the function names (lower-case, one a line) of the stored library
    ``path``, so that they are checked against the user's without reading the library."""
    return path.with_suffix(".names")


def _forget(path: Path) -> None:
    """Delete the stored library ``path`` and its names (built anew when next needed)."""
    for leftover in (path, _names_path(path)):
        with contextlib.suppress(OSError):
            leftover.unlink(missing_ok=True)


def _prune(keep: Path) -> None:
    """Delete the stored libraries (other versions of mlsql or DuckDB) unused for two days."""
    now = time.time()
    for old in keep.parent.glob("duckdb-library-*.duckdb"):
        with contextlib.suppress(OSError):
            if old != keep and now - old.stat().st_mtime > _UNUSED:
                _forget(old)


def _copy_stored(con: duckdb.DuckDBPyConnection, path: Path, schema: str | None) -> bool:
    """Copy the stored library into the current (in-memory) database in one statement,
    unless a function of one of its names exists (then False: :func:`register` sorts out
    whose it is)."""
    try:
        names = _names_path(path).read_text(encoding="utf-8").split()
    except OSError as exc:
        raise duckdb.InvalidInputException(f"the stored library {path} lacks its names") from exc
    if not names:
        raise duckdb.InvalidInputException(f"the stored library {path} lists no names")
    if _functions(con, names, *_where(schema)):
        return False  # (mlsql's or not)
    alias = f"__mlsql_library_{uuid.uuid4().hex}"
    target = con.execute(_CURRENT).fetchone()[0]  # type: ignore[index]
    con.execute(f"ATTACH {WRITE_DUCKDB(str(path))} AS {quote_ident(alias)} (READ_ONLY)")
    try:
        con.execute(f"COPY FROM DATABASE {quote_ident(alias)} TO {quote_ident(target)} (SCHEMA)")
    finally:
        con.execute(f"DETACH {quote_ident(alias)}")
    return True


def _in_memory_target(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the current database is in memory.

    Only there is the stored library copied: ``COPY FROM DATABASE`` skips the
    storage-version check of ``CREATE MACRO``, and would write typed macros
    into an older database file that cannot hold them.
    """
    row = con.execute(_PATH).fetchone()
    return row is not None and not row[0]


def _run_script(
    con: duckdb.DuckDBPyConnection, script: str, mark: Callable[[], None] = lambda: None
) -> None:
    """Run ``script``, then ``mark``, in one transaction: it all happens, or nothing does."""
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(script)
        mark()
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def _storage_error(exc: duckdb.Error) -> bool:
    return "storage version" in str(exc).lower()


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
        Create TEMP macros, so nothing is written into the database file
        (they are seen by ``con`` only, not by its cursors). ``False`` stores
        them in the database, where every cursor sees them (``schema``
        implies ``False``).
    replace : bool, default False
        Replace functions of the same names that mlsql did not create. Without
        it such a clash is an error naming the functions.
    prefix : str, default ""
        Prepend this to every macro name (``prefix="ml_"`` gives ``ml_micro_f1``);
        letters, digits and underscores, not starting with a digit.
    schema : str, optional
        Create the macros in this schema (created if missing), called as
        ``schema.micro_f1(...)``; letters, digits and underscores, not starting with a
        digit, and none of DuckDB's own (``temp``, ``system``, ``pg_catalog``,
        ``information_schema``).
    native : bool, default False
        Load mlsql's native DuckDB extension into ``con`` and compute the
        per-row label counts with it (same numbers, faster). ``con``'s database
        must have been opened with ``allow_unsigned_extensions``, and stored
        macros (``temporary=False``) only in an in-memory database, which no
        other session opens without the extension; :func:`connect` does this
        whenever the extension is available (see :func:`mlsql.native_status`).

    Returns
    -------
    duckdb.DuckDBPyConnection
        ``con`` itself.

    Raises
    ------
    MlsqlError
        On a clash without ``replace=True``, an invalid ``prefix`` or
        ``schema``, or a database file too old to store typed macros.

    Notes
    -----
    How mlsql tells its own functions from the user's, where the stored
    library is cached and how threads are handled: see :mod:`mlsql._duckdb.register`.

    Examples
    --------
    >>> import duckdb, mlsql
    >>> con = mlsql.register(duckdb.connect())
    >>> con.execute("SELECT micro_f1(['a', 'b'], ['a'])").fetchall()[0][0]
    0.6666666666666666
    """
    P.check_sql_name(prefix, "prefix", "register", empty=True)
    if schema is not None:
        P.check_sql_name(schema, "schema", "register", reserved=P.DUCKDB_RESERVED_SCHEMAS)
        temporary = False
    with _LOCK:
        if native:
            _load_native(con, temporary)
        # the stored library, copied where no function of its names exists yet; else (or
        # without a usable stored library) the macros are built and created one by one
        path = None
        if not temporary and _in_memory_target(con):
            path = _stored_library(prefix, schema, native)
        if path is not None:
            try:
                if _copy_stored(con, path, schema):
                    return con
            except duckdb.Error:
                _forget(path)  # unreadable: built anew next time
        _, names = _library(prefix, schema)
        existing = _existing(con, names, schema, temporary, native, prefix)
        clashes = sorted(name for name, (ours, _) in existing.items() if not ours)
        if clashes and not replace:
            where = "on this connection" if schema is None else f"in schema {schema!r}"
            raise MlsqlError(P.clash_message(where, clashes, "prefix='ml_' or schema='mlsql'"))
        if len(existing) == len(names) and all(current for _, current in existing.values()):
            return con  # this library is there already (e.g. from another cursor)
        try:
            all_macros = _library(prefix, schema, native)[0]
            _run_script(
                con,
                _script(prefix, schema, temporary, native),
                lambda: _mark(con, all_macros, temporary, schema, native),
            )
        except duckdb.Error as exc:
            if not _storage_error(exc):
                raise
            raise MlsqlError(_STORAGE_MESSAGE) from exc
    return con


def _load_native(con: duckdb.DuckDBPyConnection, temporary: bool) -> None:
    """Load the native extension into ``con``, or say why it cannot serve it."""
    status = _native.duckdb_native_status()
    if not status["available"]:
        raise MlsqlError(f"mlsql's native DuckDB extension is not available: {status['reason']}.")
    if not temporary and not _in_memory_target(con):
        raise MlsqlError(
            "native=True stores macros only in an in-memory database: stored in a database "
            "file, they would call the native extension in sessions that have not loaded it."
        )
    try:
        con.execute(_native.load_sql(Path(status["path"])))
    except duckdb.Error as exc:
        raise MlsqlError(
            "mlsql's native DuckDB extension did not load on this connection (open the database "
            f"with config={_native.open_config()}): {exc}"
        ) from exc


def _in_memory(database: str) -> bool:
    return database == ":memory:" or database.startswith(":memory:")


def connect(database: str = ":memory:", **kwargs: object) -> duckdb.DuckDBPyConnection:
    """Open a DuckDB connection with every mlsql macro registered.

    Where mlsql's native extension is available (:func:`mlsql.native_status`;
    not under ``MLSQL_NATIVE=0``), the database is opened with
    ``allow_unsigned_extensions`` and the macros count labels with it; the
    numbers are those of the portable macros.

    An in-memory database gets the macros as catalog objects (nothing is
    written anywhere), so every ``con.cursor()`` sees them too; a database
    file gets TEMP macros (nothing is written into it) unless
    ``temporary=False`` is passed.

    mlsql's functions given this connection (``label_metrics``, ``report``,
    ``bootstrap``, ...) may be called from several threads at once: in any
    thread but this one they work on that thread's own ``con.cursor()``
    (:mod:`mlsql._duckdb.threads`). The connection's own methods are
    DuckDB's, for one thread at a time: give each thread ``con.cursor()``.

    Parameters
    ----------
    database : str, default ":memory:"
        As for :func:`duckdb.connect`.
    **kwargs
        Passed to :func:`register` (``prefix``, ``schema``, ``replace``, ``temporary``, ...).

    Examples
    --------
    >>> import mlsql
    >>> con = mlsql.connect()
    >>> con.execute("SELECT fmeasure(['cat', 'dog'], ['cat'])").fetchall()[0][0]
    0.6666666666666666
    >>> con.cursor().execute("SELECT micro_f1(['cat'], ['cat'])").fetchall()[0][0]
    1.0
    """
    kwargs.setdefault("temporary", not _in_memory(str(database)))
    native = _native.duckdb_native_status()["enabled"] and (
        kwargs["temporary"] or (_in_memory(str(database)) and kwargs.get("schema") is None)
    )
    con = None
    if native:
        try:
            config: dict[str, Any] = dict(_native.open_config())
            con = duckdb.connect(database, config=config)
        except duckdb.Error:  # e.g. the file is open in this process under another config
            native = False
    if con is None:
        con = duckdb.connect(database)
    register(con, native=bool(native), **kwargs)  # type: ignore[arg-type]
    # mlsql's functions called with con in another thread work on a cursor of it, which sees
    # the catalog's macros but not TEMP ones: those it registers itself
    options: dict[str, Any] = dict(kwargs, native=bool(native))
    opened(con, functools.partial(register, **options) if kwargs["temporary"] else None)
    return con
