"""Ctrl-C: stop the running query promptly, print one line, exit 130.

While a query runs, the main thread is inside an engine (DuckDB's C++, a
Polars query, a Py4J call to Spark) and Python's own SIGINT handler would
wait for it to return. So the signal is also written to a socket
(:func:`signal.set_wakeup_fd`), and a watcher thread that waits on it calls
the cancels registered with :func:`on_cancel` at once: DuckDB's
``con.interrupt()``, Spark's ``cancelAllJobs()``, and calls them again every
:data:`RECANCEL` seconds until the run ends (a query started after the signal,
such as Spark's next job, is cancelled too). Work that cannot be
cancelled (a Polars query, a Spark session starting) runs in a daemon thread
the main thread stops waiting for (:func:`wait_for`). The cancelled query
fails in the main thread, and the run ends with one line and exit 130. A
second Ctrl-C ends the process at once.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, TypeVar

T = TypeVar("T")

#: the exit code of a run stopped by SIGINT (128 + signal number, as shells report it)
INTERRUPTED_EXIT = 130
MESSAGE = "mlsql: interrupted\n"
#: seconds between two looks at work running in a thread
POLL = 0.02
#: seconds between two cancels of the engines' work once SIGINT came
RECANCEL = 0.5


class _Watch:
    """The cancels to call on SIGINT, and whether it came."""

    def __init__(self) -> None:
        self.cancels: list[Callable[[], Any]] = []
        self.fired = threading.Event()
        self.handled = False
        #: end an interrupted run with os._exit (see exit_hard)
        self.hard = False

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


def engines_done() -> None:
    """The engines' work is over: from now on SIGINT stops the main thread at once.

    What follows (rendering a report, which for many labels takes minutes) is
    Python, where :class:`KeyboardInterrupt` stops it where it is; with an engine's
    cancel still registered the handler would only mark the signal, seen once
    the rendering ends.
    """
    check()
    if _current is not None:
        _current.cancels.clear()


def wait_for(work: Callable[[], T], *, hard: bool = False) -> T:
    """``work()`` run in a daemon thread; the main thread waits, seeing SIGINT within 20 ms.

    On SIGINT the main thread stops waiting (the thread dies with the process):
    with ``hard`` (e.g. a Spark session starting, or running where PySpark
    would install a SIGINT handler of its own) the process ends at once,
    otherwise :class:`KeyboardInterrupt` ends the run.
    """
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = work()
        except BaseException as exc:  # a Rust panic too: raised again in the main thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="mlsql-work", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(POLL)
        if interrupted():
            if hard:
                _exit_now()
            raise KeyboardInterrupt
    if "error" in box:
        raise box["error"]
    return box["result"]


def exit_hard() -> None:
    """From now on an interrupted run ends without Python's clean-up (Spark's takes seconds)."""
    if _current is not None:
        _current.hard = True


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
        # no exception while an engine works: its cancelled query raises in its own time
        if watch.handled or watch.hard:  # a second Ctrl-C, or Spark's slow clean-up: end now
            _exit_now()
        watch.handled = True
        watch.fired.set()  # the watcher thread cancels (it got the signal too)
        if not watch.cancels:
            raise KeyboardInterrupt  # nothing to cancel yet: stop where the main thread is

    def watcher() -> None:
        while True:
            try:
                data = reader.recv(64)
            except TimeoutError:  # after SIGINT: cancel again what started since (a new job)
                watch.cancel_all()
                continue
            except OSError:
                return
            if not data:
                return
            if signal.SIGINT in data:
                watch.cancel_all()
                # a query the main thread starts before it sees the signal (Spark's next
                # job: cancelAllJobs cancels only running ones) is cancelled too
                reader.settimeout(RECANCEL)

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


def _exit_now() -> None:
    """One line on stderr and exit 130 at once (what runs below us dies with the process)."""
    sys.stderr.write(MESSAGE)
    sys.stderr.flush()
    os._exit(INTERRUPTED_EXIT)


def _stop(watch: _Watch) -> None:
    """One line on stderr, exit 130 (no traceback)."""
    if watch.hard:
        _exit_now()
    sys.stderr.write(MESSAGE)
    sys.stderr.flush()
    raise SystemExit(INTERRUPTED_EXIT)
