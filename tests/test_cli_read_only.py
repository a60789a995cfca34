"""``mlsql sql --read-only`` writes no file: not the database, not through COPY or EXPORT."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from mlsql.cli import app

runner = CliRunner()

ALLOWED = (
    "it runs queries (SELECT, SHOW, DESCRIBE, SUMMARIZE, PRAGMA), SET VARIABLE, USE, "
    "ATTACH ... (READ_ONLY) and changes to in-memory tables"
)


def invoke(*args: Any) -> Any:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "my.db"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE t AS SELECT 1 AS x")
    con.close()
    return path


@pytest.mark.parametrize(
    ("statement", "reason"),
    [
        ("COPY t TO '{out}'", "COPY writes a file or a table"),
        ("COPY (SELECT 1) TO '{out}' (FORMAT parquet)", "COPY writes a file or a table"),
        ("SELECT 1; COPY t TO '{out}'", "COPY writes a file or a table"),
        ("EXPLAIN ANALYZE COPY t TO '{out}'", "COPY writes a file or a table"),
        ("PREPARE p AS COPY t TO '{out}'; EXECUTE p", "COPY writes a file or a table"),
        ("EXPORT DATABASE '{out}'", "EXPORT DATABASE writes files"),
        (
            "ATTACH '{out}' AS other",
            "ATTACH without (READ_ONLY) may create or change a database file",
        ),
        (
            "SET profiling_output = '{out}'",
            "a setting may name a file DuckDB writes (profiling_output, log files...)",
        ),
    ],
)
def test_read_only_refuses_statements_that_write_files(
    db: Path, tmp_path: Path, statement: str, reason: str
) -> None:
    out = tmp_path / "written"
    before = db.read_bytes()
    result = invoke("sql", statement.format(out=out), "--db", db, "--read-only", "--no-progress")
    assert result.exit_code == 2, result.output
    assert result.stderr == f"mlsql: error: --read-only writes no file, but {reason}; {ALLOWED}\n"
    assert not out.exists()
    assert db.read_bytes() == before


def test_read_only_still_reads_files_and_the_database(db: Path, tmp_path: Path) -> None:
    data = tmp_path / "data.parquet"
    duckdb.execute(f"COPY (SELECT 2 AS x) TO '{data}'")
    query = f"SELECT x FROM t UNION ALL SELECT x FROM '{data}' ORDER BY x"
    result = invoke("sql", query, "--db", db, "--read-only", "-f", "csv")
    assert result.exit_code == 0, result.output
    assert result.stdout == "x\n1\n2\n"


@pytest.mark.long
def test_read_only_without_a_database_refuses_writes_too(tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    result = invoke("sql", f"COPY (SELECT 1) TO '{out}'", "--read-only")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("mlsql: error: --read-only writes no file, but COPY")
    assert not out.exists()
    assert invoke("sql", "SELECT 41 + 1 AS x", "--read-only", "-f", "csv").stdout == "x\n42\n"


#: whether micro_f1 is a TEMP macro, and its value on one row
TEMP_MICRO_F1 = (
    "SELECT (SELECT count(*) > 0 FROM duckdb_functions() "
    "WHERE database_name = 'temp' AND function_name = 'micro_f1') AS temp, "
    "micro_f1(['a', 'b'], ['a']) AS f"
)


def test_in_memory_sql_copies_the_stored_library_and_a_database_gets_temp_macros(
    db: Path,
) -> None:
    """In memory, the macros are the catalog's, from the library stored in the cache
    directory (as ``mlsql.connect()`` has them); on a database file they are TEMP macros,
    and the file is left as it was."""
    result = invoke("sql", TEMP_MICRO_F1, "-f", "csv")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"temp,f\nfalse,{2 / 3}\n"
    before = db.read_bytes()
    result = invoke("sql", TEMP_MICRO_F1, "--db", db, "-f", "csv")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"temp,f\ntrue,{2 / 3}\n"
    assert db.read_bytes() == before


@pytest.mark.parametrize("database", [False, True], ids=["in memory", "database file"])
def test_read_only_writes_no_stored_library_either(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: bool
) -> None:
    """``--read-only`` writes nothing, not even the cache directory's stored library: its
    macros are TEMP ones, and they compute."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("MLSQL_CACHE_DIR", str(cache))
    where = ["--db", db] if database else []
    result = invoke("sql", TEMP_MICRO_F1, *where, "--read-only", "-f", "csv")
    assert result.exit_code == 0, result.output
    assert result.stdout == f"temp,f\ntrue,{2 / 3}\n"
    assert not cache.exists()
