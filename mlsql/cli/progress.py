"""Progress on a terminal, silence elsewhere.

DuckDB draws its own progress bar (with a percentage) on stdout, so it is
switched on only when stdout is a terminal; other engines get a rich spinner
on stderr when stderr is a terminal. The bootstrap resamples, drawn in numpy
after the queries, show as a rich bar on a terminal's stderr (with DuckDB) or
in the spinner's text. Pipes, files and CI logs see nothing.
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
        with _resamples(enabled):
            yield
        return
    if enabled and is_terminal(sys.stderr):
        from rich.console import Console

        from mlsql._resample import run

        with Console(stderr=True).status(message) as status:

            def told(done: int, total: int) -> None:
                status.update(f"{message}: resample {done:,} of {total:,}")

            with run.reporting(told):
                yield
        return
    yield


@contextmanager
def _resamples(enabled: bool) -> Iterator[None]:
    """A bar of the bootstrap resamples on a terminal's stderr (drawn in numpy once DuckDB's
    query, and its own bar, are done), shown from the first batch on."""
    if not (enabled and is_terminal(sys.stderr)):
        yield
        return
    from rich.console import Console
    from rich.progress import Progress

    from mlsql._resample import run

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("mlsql: resampling", total=None)

        def told(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        with run.reporting(told):
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
