"""Progress on a terminal, silence elsewhere.

DuckDB draws its own progress bar (with a percentage) on stdout, so it is
switched on only when stdout is a terminal; other engines get a rich spinner
on stderr when stderr is a terminal. Pipes, files and CI logs see nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

#: milliseconds a DuckDB query runs before its bar appears
DUCKDB_BAR_AFTER_MS = 500


def is_terminal(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


@contextmanager
def progress(
    con: duckdb.DuckDBPyConnection, message: str, *, engine: str = "duckdb", enabled: bool = True
) -> Iterator[None]:
    """Show progress while the block runs, if (and only if) someone is watching."""
    duckdb_bar = enabled and engine == "duckdb" and is_terminal(sys.stdout)
    con.execute(f"SET enable_progress_bar = {str(duckdb_bar).lower()}")
    if duckdb_bar:
        con.execute(f"SET progress_bar_time = {DUCKDB_BAR_AFTER_MS}")
        yield
        return
    if enabled and is_terminal(sys.stderr):
        from rich.console import Console

        with Console(stderr=True).status(message):
            yield
        return
    yield


@contextmanager
def step(message: str, *, enabled: bool = True) -> Iterator[None]:
    """Say on a terminal's stderr what a long step outside any query is doing (drawing the
    charts, writing the page), with a spinner while it runs; pipes and files see nothing."""
    if not (enabled and is_terminal(sys.stderr)):
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(message):
        yield
