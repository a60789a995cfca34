"""``mlsql sql --read-only``: statements that would write a file are refused before any runs.

A database opened read-only still lets DuckDB write other files: ``COPY ... TO``,
``EXPORT DATABASE``, ``ATTACH`` (a new database file), ``INSTALL``, a setting that
names a file to write (``SET profiling_output``), a persistent secret. Each
statement's type is read with DuckDB's own parser
(:meth:`duckdb.DuckDBPyConnection.extract_statements`); one that may write a
file is refused with one line saying which and what runs.
"""

from __future__ import annotations

import re

import duckdb

from mlsql.cli.errors import UserError

T = duckdb.StatementType

#: statement types that write files (or load code that could), and what they do
WRITERS = {
    T.COPY: "COPY writes a file or a table",
    T.EXPORT: "EXPORT DATABASE writes files",
    T.COPY_DATABASE: "COPY FROM DATABASE writes a database",
    T.LOAD: "INSTALL and LOAD fetch and run extensions",
    T.EXTENSION: "extension statements may write files",
}
#: what --read-only runs, for the message
ALLOWED = (
    "queries (SELECT, SHOW, DESCRIBE, SUMMARIZE, PRAGMA), SET VARIABLE, USE, "
    "ATTACH ... (READ_ONLY) and changes to in-memory tables"
)
#: the statement that ``EXPLAIN ANALYZE`` runs, or ``PREPARE name AS`` prepares
INNER = re.compile(
    r"^\s*(?:EXPLAIN\s+(?:\([^)]*\)|ANALY[SZ]E)?|PREPARE\s+\S+?\s+AS)\s+(.*)$",
    flags=re.IGNORECASE | re.DOTALL,
)
#: SET statements that change no setting
HARMLESS_SET = re.compile(r"^\s*(?:SET\s+VARIABLE\b|USE\b|RESET\s+VARIABLE\b)", re.IGNORECASE)
READ_ONLY_ATTACH = re.compile(r"\bREAD_ONLY\b(?!\s*(?:=|\s)\s*FALSE)", re.IGNORECASE)
PERSISTENT = re.compile(r"^\s*CREATE\s+(?:OR\s+REPLACE\s+)?PERSISTENT\b", re.IGNORECASE)


def why_writes(con: duckdb.DuckDBPyConnection, query: str) -> str | None:
    """Why one of the statements of ``query`` may write a file (None if none does)."""
    for statement in con.extract_statements(query):
        text = statement.query.strip().rstrip(";")
        kind = statement.type
        if kind in WRITERS:
            return WRITERS[kind]
        if kind in (T.EXPLAIN, T.PREPARE):
            inner = INNER.match(text)
            if inner is not None and inner.group(1).strip():
                reason = why_writes(con, inner.group(1))
                if reason is not None:
                    return reason
        elif kind == T.ATTACH and READ_ONLY_ATTACH.search(text) is None:
            return "ATTACH without (READ_ONLY) may create or change a database file"
        elif kind == T.SET and HARMLESS_SET.match(text) is None:
            return "a setting may name a file DuckDB writes (profiling_output, log files...)"
        elif kind == T.CREATE and PERSISTENT.match(text):
            return "a persistent secret is written to a file"
    return None


def refuse_writes(con: duckdb.DuckDBPyConnection, query: str) -> None:
    """Refuse ``query`` if one of its statements may write a file (``--read-only``).

    Raises
    ------
    UserError
        A statement may write a file: the message says which kind, and what runs.
    """
    reason = why_writes(con, query)
    if reason is not None:
        raise UserError(f"--read-only writes no file, but {reason}; it runs {ALLOWED}")
