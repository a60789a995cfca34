"""Ctrl-C: stop the running query promptly, print one line, exit 130.

While a query runs, the main thread is inside an engine (DuckDB's C++, a
Polars query, a Py4J call to Spark) and Python's own SIGINT handler would
wait for it to return. So the signal is also written to a socket
(:func:`signal.set_wakeup_fd`), and a watcher thread that waits on it calls
the cancels registered with :func:`on_cancel` at once: DuckDB's
``con.interrupt()``, Spark's ``cancelAllJobs()``. Polars queries run in the
background and are cancelled where they are waited for
(:func:`mlsql.cli.polars_input.collect`). The cancelled query fails in the
main thread, and the run ends with one line and exit 130. A second Ctrl-C
ends the process at once.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

#: the exit code of a run stopped by SIGINT (128 + signal number, as shells report it)
INTERRUPTED_EXIT = 130
MESSAGE = "mlsql: interrupted\n"


class _Watch:
    """The cancels to call on SIGINT, and whether it came."""

    def __init__(self) -> None:
        self.cancels: list[Callable[[], Any]] = []
        self.fired = threading.Event()
        self.handled = False
        #: the main thread runs Python code (no engine call to cancel): raise there
        self.in_python = 0

    def cancel_all(self) -> None:
        self.fired.set()
        for cancel in list(self.cancels):
            with suppress(Exception):  # the engine may be gone already: stopping is all we want
                cancel()


_current: _Watch | None = None


def on_cancel(cancel: Callable[[], Any]) -> None:
    """Call ``cancel`` (from another thread) when SIGINT arrives during :func:`interruptible`.

    If it came already (while the engine was being set up), stop now.
    """
    if _current is not None:
        _current.cancels.append(cancel)
    check()


def interrupted() -> bool:
    """Whether SIGINT arrived during the current :func:`interruptible` block."""
    return _current is not None and _current.fired.is_set()


def check() -> None:
    """Raise :class:`KeyboardInterrupt` if SIGINT arrived (between two queries)."""
    if interrupted():
        raise KeyboardInterrupt


@contextmanager
def setting_up() -> Iterator[None]:
    """Within the block the main thread runs Python (e.g. a JVM starting): SIGINT raises there."""
    if _current is None:
        yield
        return
    watch = _current
    watch.in_python += 1
    try:
        yield
    finally:
        watch.in_python -= 1
    check()


@contextmanager
def interruptible() -> Iterator[None]:
    """Within the block, SIGINT cancels the engines' work and ends the run with exit 130.

    Outside the main thread (where signals cannot be handled) it does nothing.
    """
    global _current
    if threading.current_thread() is not threading.main_thread() or _current is not None:
        yield
        return
    watch = _Watch()
    reader, writer = socket.socketpair()
    writer.setblocking(False)

    def handler(signum: int, frame: Any) -> None:
        # no exception here: the engine's cancelled query raises in its own time
        if watch.handled:  # the second Ctrl-C: stop at once
            sys.stderr.write(MESSAGE)
            sys.stderr.flush()
            os._exit(INTERRUPTED_EXIT)
        watch.handled = True
        watch.fired.set()  # the watcher thread cancels (it got the signal too)
        if watch.in_python or not watch.cancels:
            raise KeyboardInterrupt  # nothing to cancel yet: stop where the main thread is

    def watcher() -> None:
        while True:
            try:
                data = reader.recv(64)
            except OSError:
                return
            if not data:
                return
            if signal.SIGINT in data:
                watch.cancel_all()

    previous_handler = signal.signal(signal.SIGINT, handler)
    previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    thread = threading.Thread(target=watcher, name="mlsql-sigint", daemon=True)
    thread.start()
    _current = watch
    try:
        yield
    except BaseException as exc:
        if not (watch.fired.is_set() or isinstance(exc, KeyboardInterrupt)):
            raise
        _stop(watch)
    finally:
        _current = None
        signal.set_wakeup_fd(previous_fd)
        signal.signal(signal.SIGINT, previous_handler)
        writer.close()
        thread.join(timeout=1)
        reader.close()
    if watch.fired.is_set():  # the signal came between two queries: stop now
        _stop(watch)


def _stop(watch: _Watch) -> None:
    """One line on stderr, exit 130 (no traceback)."""
    sys.stderr.write(MESSAGE)
    sys.stderr.flush()
    raise SystemExit(INTERRUPTED_EXIT)
