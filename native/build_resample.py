"""Compile mlsql's resample kernels (``resample.c``) into a shared library.

The package's build hook calls :func:`build`; it also runs on its own::

    python native/build_resample.py OUTDIR [CC]

The kernels are plain C (C11) with no dependency beyond the C library.
``mlsql._resample.native`` loads the library by path with ctypes; where it is
missing, the portable numpy code gives the same numbers.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "resample.c"
#: the file name inside the package's native folder (``mlsql/_native/``)
LIBRARY_STEM = "mlsql_resample"


def library_name(platform: str = sys.platform) -> str:
    """The library's file name on ``platform``."""
    return f"{LIBRARY_STEM}.dll" if platform.startswith("win") else f"{LIBRARY_STEM}.so"


def _is_msvc(cc: str) -> bool:
    return Path(shlex.split(cc)[0]).name.lower() in ("cl", "cl.exe")


def command(cc: str, out: Path, extra_flags: Sequence[str] = ()) -> list[str]:
    """The compiler command line that builds the library at ``out``.

    Examples
    --------
    >>> command("cc", Path("x.so"))[:3]
    ['cc', '-O2', '-std=c11']
    """
    compiler = shlex.split(cc)
    if _is_msvc(cc):
        return [*compiler, "/O2", "/LD", f"/I{HERE}", str(SOURCE), *extra_flags, f"/Fe:{out}"]
    flags = ["-O2", "-std=c11", "-fPIC", "-shared", "-fvisibility=hidden", f"-I{HERE}"]
    if sys.platform == "darwin":
        flags.append("-dynamiclib")
    return [*compiler, *flags, *extra_flags, str(SOURCE), "-o", str(out)]


def build(out_dir: Path, cc: str | None = None, extra_flags: Sequence[str] = ()) -> Path:
    """Compile the library into ``out_dir``; return the library's path.

    Parameters
    ----------
    out_dir : pathlib.Path
        Where the library goes (created if missing).
    cc : str, optional
        The C compiler command (default: ``$CC``, else ``cc``).
    extra_flags : sequence of str
        More compiler flags (e.g. ``-fsanitize=address`` for tests).

    Raises
    ------
    subprocess.CalledProcessError
        If the compiler fails (its output is in the exception).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / library_name()
    cc = cc or os.environ.get("CC") or "cc"
    subprocess.run(command(cc, out, extra_flags), check=True, capture_output=True, text=True)
    return out


def main(argv: Sequence[str]) -> int:
    """``build_resample.py OUTDIR [CC]``: build, print the library's path."""
    if not 1 <= len(argv) <= 2:
        print("usage: python native/build_resample.py OUTDIR [CC]", file=sys.stderr)
        return 2
    try:
        path = build(Path(argv[0]), argv[1] if len(argv) > 1 else None)
    except subprocess.CalledProcessError as error:
        print(error.stdout, error.stderr, sep="\n", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
