"""``mlsql install FILE``: the macros stored in a database file, for every later session.

``.read mlsql.sql`` makes TEMP macros that end with the session; a plain-SQL user who opens
the file again later (``duckdb my.db -c "SELECT micro_f1(...)"``) needs them stored.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from mlsql.cli import app

runner = CliRunner()

#: actual, predicted, model: A has tp 1, fp 1, fn 1 (micro F1 1/2); B is right (F1 1)
ROWS = "VALUES (['a', 'b'], ['a', 'c'], 'A'), (['b'], ['b'], 'B')"


def invoke(*args: Any) -> Any:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.mark.long
def test_installed_macros_answer_in_a_later_session(tmp_path: Path) -> None:
    db = tmp_path / "my.db"
    result = invoke("install", db)
    assert result.exit_code == 0, result.output
    assert f"in {db}" in result.output
    with duckdb.connect(str(db)) as con:  # a new session: nothing registered on it
        rows = con.execute(
            "SELECT model, micro_f1(actual, predicted), macro_f1(actual, predicted) "
            f"FROM ({ROWS}) t(actual, predicted, model) GROUP BY model ORDER BY model"
        ).fetchall()
        storage = con.execute(
            "SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = 'my'"
        ).fetchone()
    # A: per label a: F1 1, b: 0 (fn), c: 0 (fp) -> macro 1/3; B: one label, right
    assert rows == [
        ("A", pytest.approx(float(Fraction(1, 2)), rel=1e-12), pytest.approx(1 / 3, rel=1e-12)),
        ("B", 1.0, 1.0),
    ]
    # the oldest storage that holds typed macros: a DuckDB 1.4 or later shell opens it
    assert storage is not None and storage[0] == "v1.4.0+"


@pytest.mark.long
def test_installing_twice_is_a_no_op_and_a_users_function_is_kept(tmp_path: Path) -> None:
    db = tmp_path / "my.db"
    assert invoke("install", db).exit_code == 0
    assert invoke("install", db).exit_code == 0  # its own macros, read back from storage
    theirs = tmp_path / "theirs.db"
    with duckdb.connect(str(theirs)) as con:
        con.execute("CREATE MACRO micro_f1(a, b) AS 42")
    result = invoke("install", theirs)
    assert result.exit_code == 2
    assert "micro_f1" in result.stderr and "--replace" in result.stderr
    with duckdb.connect(str(theirs)) as con:
        assert con.execute("SELECT micro_f1(1, 2)").fetchone() == (42,)


def test_a_file_that_is_no_database_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("not a database\n")
    result = invoke("install", bad)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"mlsql: error: cannot open {bad} as a DuckDB database")
    assert bad.read_text() == "not a database\n"
