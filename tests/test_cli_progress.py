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


def _macro_bootstrap(con: duckdb.DuckDBPyConnection) -> None:
    import pyarrow as pa

    import mlsql

    rows = pa.table(
        {"g": [1, 2] * 20, "actual": [["a", "b"], ["b"]] * 20, "predicted": [["a"]] * 40}
    )
    mlsql.bootstrap(rows, "actual", "predicted", ["macro_f1"], by="g", n_resamples=40, con=con)


def test_the_resamples_show_after_duckdbs_own_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    # before: the numpy resample after DuckDB's query said nothing (22 minutes at 1M rows)
    from mlsql._duckdb.register import connect
    from mlsql._resample import run

    told: list[tuple[int, int]] = []
    with run.reporting(lambda done, total: told.append((done, total))):
        _macro_bootstrap(connect())
    assert told and told[-1] == (80, 80)  # two groups of 40 resamples
    assert [d for d, _ in told] == sorted(d for d, _ in told)
    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdout", Terminal())
    con = connect()
    with progress(con, "comparing"):
        _macro_bootstrap(con)
    assert "mlsql: resampling" in err.getvalue()
    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stderr", quiet)
    with progress(con, "comparing"):
        _macro_bootstrap(con)
    assert quiet.getvalue() == ""


def test_other_engines_count_the_resamples_in_the_spinner(monkeypatch: pytest.MonkeyPatch) -> None:
    from mlsql._duckdb.register import connect

    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    con = connect()
    with progress(con, "comparing on polars", engine="polars"):
        _macro_bootstrap(con)
    assert "comparing on polars: resample 80 of 80" in err.getvalue()
