"""Progress shows on a terminal and never in a pipe."""

from __future__ import annotations

import io
import sys

import duckdb
import pytest

from mlsql.cli.progress import progress, step


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def bar_enabled(con: duckdb.DuckDBPyConnection) -> bool:
    return con.execute("SELECT current_setting('enable_progress_bar')").fetchall()[0][0]


@pytest.mark.parametrize(
    ("stdout_is_terminal", "enabled", "expected"),
    [(True, True, True), (False, True, False), (True, False, False)],
)
def test_duckdb_bar_only_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, stdout_is_terminal: bool, enabled: bool, expected: bool
) -> None:
    monkeypatch.setattr(sys, "stdout", Terminal() if stdout_is_terminal else io.StringIO())
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = true")  # whatever it was, progress() decides
    with progress(con, "working", enabled=enabled):
        assert bar_enabled(con) is expected


def test_other_engines_spin_on_a_terminal_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdout", Terminal())
    con = duckdb.connect()
    with progress(con, "evaluating on polars", engine="polars"):
        assert bar_enabled(con) is False  # DuckDB only reads the data here
    assert "evaluating on polars" in err.getvalue()


def test_silent_when_stderr_is_not_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with progress(duckdb.connect(), "evaluating on polars", engine="polars"):
        pass
    assert err.getvalue() == ""


def test_a_long_step_outside_a_query_is_named_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # before: drawing a page of charts said nothing for minutes
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    with step("mlsql: drawing the charts and writing the report"):
        pass
    assert "mlsql: drawing the charts and writing the report" in err.getvalue()
    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stderr", quiet)
    with step("mlsql: writing the report"):
        pass
    assert quiet.getvalue() == ""
    monkeypatch.setattr(sys, "stderr", Terminal())
    with step("mlsql: writing the report", enabled=False):
        pass
    assert sys.stderr.getvalue() == ""
