"""Errors a newcomer makes: one clear line on stderr and exit code 2, never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

#: the exit code of every usage error (as click and typer use for bad options)
USAGE_EXIT = 2


class UserError(Exception):
    """A mistake in what the user asked for; its text is the whole message."""


def one_line(text: str) -> str:
    """Squeeze an engine's (often multi-line) message into one line."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    # DuckDB appends "LINE 1: ..." context and caret lines; they help nobody here
    kept = [line for line in lines if not line.startswith(("LINE ", "^"))]
    return " ".join(kept or lines)


@contextmanager
def reported() -> Iterator[None]:
    """Turn :class:`UserError`, :class:`mlsql.MlsqlError`, engine errors and an input file
    gone or unreadable mid-run into exit 2.

    Ctrl-C ends the run with one line and exit 130 (:mod:`mlsql.cli.interrupt`).
    Anything else is a bug in mlsql and keeps its traceback.
    """
    import duckdb

    from mlsql._errors import MlsqlError
    from mlsql.cli.interrupt import interruptible

    try:
        with interruptible():
            yield
    except (UserError, MlsqlError) as exc:
        fail(str(exc))
    except duckdb.Error as exc:
        fail(one_line(str(exc)))
    except _engine_errors() as exc:
        fail(one_line(str(exc)))
    except (FileNotFoundError, PermissionError) as exc:
        # an input gone or unreadable while an engine reads it (Polars raises these bare)
        fail(f"cannot read an input file: {one_line(str(exc))}")


def _engine_errors() -> tuple[type[BaseException], ...]:
    """Error types of the optional engines, when they are imported already."""
    found: list[type[BaseException]] = []
    polars = sys.modules.get("polars")
    if polars is not None:
        found.append(polars.exceptions.PolarsError)
    errors = sys.modules.get("pyspark.errors")
    if errors is not None:
        found.append(errors.PySparkException)
    return tuple(found) or (_Never,)


class _Never(Exception):
    """Placeholder so ``except`` has a type when no optional engine is loaded."""


def fail(message: str) -> None:
    """Print ``mlsql: error: message`` on stderr and exit with code 2."""
    sys.stderr.write(f"mlsql: error: {one_line(message)}\n")
    sys.stderr.flush()
    raise SystemExit(USAGE_EXIT)


def warn(message: str) -> None:
    """Print ``mlsql: warning: message`` on stderr."""
    sys.stderr.write(f"mlsql: warning: {message}\n")
    sys.stderr.flush()
