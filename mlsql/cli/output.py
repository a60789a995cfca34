"""``--output``: never over an input, and never half a file.

A report replaces its file only once it is whole: it is written to a temporary
file beside the target and renamed over it (:func:`os.replace`) on success, so
a render error, a full disk, Ctrl-C or SIGTERM leaves the old file as it was
and no temporary file behind. An output that is one of the inputs (a file of a
glob or a directory, or the ``--db`` database) is refused before any work.
"""

from __future__ import annotations

import os
import signal
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

from mlsql.cli.errors import UserError

#: exit code of a run ended by SIGTERM (128 + 15, as shells report it)
TERMINATED_EXIT = 143


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether ``a`` and ``b`` name one file (links and ``..`` included), not two names.

    Examples
    --------
    >>> same_file(".", "./"), same_file(".", "..")
    (True, False)
    """
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist (yet)
        return os.path.realpath(a) == os.path.realpath(b)


def refuse_input(output: Path | None, inputs: Iterable[str], what: str = "an input") -> None:
    """Refuse an ``--output`` that is one of ``inputs``: the report would replace it.

    Raises
    ------
    UserError
        ``output`` is the same file as one of ``inputs``.
    """
    if output is None:
        return
    for name in inputs:
        if same_file(output, name):
            raise UserError(
                f"--output {output} is {what} ({name}): writing the report there would "
                "destroy it; choose another file"
            )


def refuse_source(output: Path | None, source: Any) -> None:
    """Refuse an ``--output`` that is a file the :class:`~mlsql.cli.sources.Source` reads.

    Raises
    ------
    UserError
        ``output`` is one of the source's files (every match of a glob or a
        directory counts), or its DuckDB database.
    """
    if source.database is not None:
        refuse_input(output, [source.database[0]], "the input database")
    elif not source.pattern:  # a URL is not a local file
        refuse_input(output, source.files)


def write(output: Path, fill: Callable[[IO[str]], None]) -> None:
    """Write what ``fill`` writes on a text handle to ``output``, all of it or nothing.

    A regular file (or a new one) gets the text through a temporary file in the
    same directory, renamed over it on success (keeping the old file's
    permissions); on any failure the temporary file is removed and the old
    file stays intact. A device or pipe (``/dev/stdout``) is written directly.

    Raises
    ------
    UserError
        The file cannot be written (the message says why).
    """
    target = Path(os.path.realpath(output))  # through a link: replace the file, not the link
    try:
        mode = os.stat(target).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        if stat.S_ISDIR(mode):
            raise UserError(f"cannot write {output}: it is a directory")
        try:
            with target.open("w", encoding="utf-8") as handle:
                fill(handle)
        except OSError as exc:
            raise UserError(f"cannot write {output}: {exc.strerror or exc}") from None
        return
    temporary = target.with_name(f".{target.name}.{os.getpid()}.mlsql-tmp")
    try:
        with _terminate_raises():
            try:
                fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                with open(fd, "w", encoding="utf-8") as handle:
                    fill(handle)
                    handle.flush()
                    os.fsync(handle.fileno())
                if mode is not None:
                    os.chmod(temporary, stat.S_IMODE(mode))
                os.replace(temporary, target)
            except OSError as exc:
                raise UserError(f"cannot write {output}: {exc.strerror or exc}") from None
    except BaseException:
        _remove(temporary)
        raise


def _remove(path: Path) -> None:
    with suppress(OSError):
        os.unlink(path)


@contextmanager
def _terminate_raises() -> Iterator[None]:
    """Within the block SIGTERM raises ``SystemExit(143)``, so the temporary file is removed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise SystemExit(TERMINATED_EXIT)

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):  # no signals here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)
