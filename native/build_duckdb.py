"""Compile mlsql's DuckDB extension (``duckdb_ext.c``) into a loadable ``.duckdb_extension``.

The package's build hook calls :func:`build`; it also runs on its own::

    python native/build_duckdb.py OUTDIR [CC]

DuckDB's C API headers (``duckdb.h``, ``duckdb_extension.h``) are DuckDB's
code and are not kept in this repository: they are taken from DuckDB's
source distribution of version :data:`HEADERS_VERSION` on the package index
(``pip download``), once, into a cache folder; ``MLSQL_DUCKDB_INCLUDE`` may
name a folder that already holds them. The extension targets C API
:data:`C_API_VERSION`, so one binary loads on every DuckDB from 1.2 on that
accepts that API.

A loadable file is the shared library followed by DuckDB's 512-byte metadata
footer (layout as DuckDB's extension-ci-tools write it): eight 32-byte text
fields in reverse order (three unused, ABI type, extension version, C API
version, platform, the magic ``4``), then a 256-byte signature, empty here
since the extension is unsigned. A WebAssembly custom-section header of 22
bytes precedes it.
"""

from __future__ import annotations

import os
import platform as _platform
import shlex
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "duckdb_ext.c"
#: the DuckDB release whose C API headers the build takes
HEADERS_VERSION = "2.0.0"
#: the C API version the extension targets (the DUCKDB_EXTENSION_API_VERSION_* in duckdb_ext.c)
C_API_VERSION = "v1.2.0"
#: the extension's name: DuckDB derives the entry point ``mlsql_init_c_api`` from the file name
NAME = "mlsql"
FILE_NAME = f"{NAME}.duckdb_extension"
HEADERS = ("duckdb.h", "duckdb_extension.h")
INCLUDE_ENV = "MLSQL_DUCKDB_INCLUDE"
PLATFORM_ENV = "MLSQL_DUCKDB_PLATFORM"


def duckdb_platform(system: str | None = None, machine: str | None = None) -> str:
    """DuckDB's name of this platform (``linux_amd64``, ``osx_arm64``, ``windows_amd64`` ...).

    ``MLSQL_DUCKDB_PLATFORM`` overrides it (e.g. ``linux_amd64_gcc4`` for the
    DuckDB 1.2 wheels).

    Examples
    --------
    >>> duckdb_platform("Linux", "x86_64")
    'linux_amd64'
    >>> duckdb_platform("Darwin", "arm64")
    'osx_arm64'
    """
    if system is None and os.environ.get(PLATFORM_ENV):
        return os.environ[PLATFORM_ENV]
    system = (system or _platform.system()).lower()
    machine = (machine or _platform.machine()).lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(
        machine, machine
    )
    os_name = {"darwin": "osx"}.get(system, system)
    return f"{os_name}_{arch}"


def footer(platform: str, extension_version: str = "v0.1.0", abi: str = "C_STRUCT") -> bytes:
    """DuckDB's metadata footer (with its 22-byte section header) for an unsigned extension.

    Examples
    --------
    >>> f = footer("linux_amd64")
    >>> len(f), f[-256:] == bytes(256), f[-288:-256].rstrip(b"\\0")
    (534, True, b'4')
    """

    def field(text: str) -> bytes:
        raw = text.encode("ascii")
        if len(raw) > 32:
            raise ValueError(f"metadata field longer than 32 bytes: {text!r}")
        return raw + bytes(32 - len(raw))

    # a WebAssembly custom section named duckdb_signature, 531 bytes long (LEB128 sizes)
    head = bytes([0, 0x93, 0x04, 16]) + b"duckdb_signature" + bytes([0x80, 0x04])
    fields = ["", "", "", abi, extension_version, C_API_VERSION, platform, "4"]
    return head + b"".join(field(x) for x in fields) + bytes(256)


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "mlsql-build" / f"duckdb-{HEADERS_VERSION}"


def headers(cache: Path | None = None) -> Path:
    """A folder holding DuckDB's ``duckdb.h`` and ``duckdb_extension.h``.

    ``$MLSQL_DUCKDB_INCLUDE`` if set, else the cache, filled on first use by
    downloading DuckDB's source distribution with pip and extracting the two
    files (nothing else of it is kept).

    Raises
    ------
    RuntimeError
        If the headers cannot be found or downloaded.
    """
    given = os.environ.get(INCLUDE_ENV)
    if given:
        folder = Path(given)
        if not all((folder / h).is_file() for h in HEADERS):
            raise RuntimeError(f"{INCLUDE_ENV}={given} does not hold {' and '.join(HEADERS)}")
        return folder
    folder = cache or _cache_dir()
    if all((folder / h).is_file() for h in HEADERS):
        return folder
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        cmd += ["--no-binary", "duckdb", f"duckdb=={HEADERS_VERSION}", "-d", tmp]
        done = subprocess.run(cmd, capture_output=True, text=True)
        archives = sorted(Path(tmp).glob("duckdb-*.tar.gz"))
        if done.returncode != 0 or not archives:
            raise RuntimeError(
                f"could not download DuckDB {HEADERS_VERSION}'s sources for its headers: "
                f"{done.stderr.strip()[-500:]}"
            )
        folder.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archives[0]) as tar:
            for member in tar.getmembers():
                parts = member.name.split("/")
                if parts[-1] in HEADERS and parts[-3:-1] == ["src", "include"]:
                    source = tar.extractfile(member)
                    if source is not None:
                        (folder / parts[-1]).write_bytes(source.read())
    if not all((folder / h).is_file() for h in HEADERS):
        raise RuntimeError(f"DuckDB {HEADERS_VERSION}'s source distribution lacks {HEADERS}")
    return folder


def _is_msvc(cc: str) -> bool:
    return Path(shlex.split(cc)[0]).name.lower() in ("cl", "cl.exe")


def command(cc: str, include: Path, out: Path, extra_flags: Sequence[str] = ()) -> list[str]:
    """The compiler command line that builds the bare shared library at ``out``.

    Examples
    --------
    >>> command("cc", Path("inc"), Path("x.so"))[:3]
    ['cc', '-O2', '-std=c11']
    """
    compiler = shlex.split(cc)
    if _is_msvc(cc):
        return [
            *compiler,
            "/O2",
            "/LD",
            f"/I{HERE}",
            f"/I{include}",
            str(SOURCE),
            *extra_flags,
            f"/Fe:{out}",
        ]
    flags = ["-O2", "-std=c11", "-fPIC", "-shared", "-fvisibility=hidden"]
    flags += [f"-I{HERE}", f"-I{include}"]
    if sys.platform == "darwin":
        flags += ["-dynamiclib", "-undefined", "dynamic_lookup"]
    return [*compiler, *flags, *extra_flags, str(SOURCE), "-o", str(out)]


def build(
    out_dir: Path,
    cc: str | None = None,
    extra_flags: Sequence[str] = (),
    platform: str | None = None,
) -> Path:
    """Compile the extension into ``out_dir`` as ``mlsql.duckdb_extension``; return its path.

    Parameters
    ----------
    out_dir : pathlib.Path
        Where the extension goes (created if missing).
    cc : str, optional
        The C compiler command (default: ``$CC``, else ``cc``).
    extra_flags : sequence of str
        More compiler flags (e.g. ``-fsanitize=address`` for tests).
    platform : str, optional
        DuckDB's platform name for the footer (default: :func:`duckdb_platform`).

    Raises
    ------
    RuntimeError
        If the headers cannot be had.
    subprocess.CalledProcessError
        If the compiler fails (its output is in the exception).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    include = headers()
    cc = cc or os.environ.get("CC") or "cc"
    out = out_dir / FILE_NAME
    with tempfile.TemporaryDirectory() as tmp:
        library = Path(tmp) / ("mlsql.dll" if sys.platform.startswith("win") else "mlsql.so")
        subprocess.run(
            command(cc, include, library, extra_flags), check=True, capture_output=True, text=True
        )
        data = library.read_bytes() + footer(platform or duckdb_platform())
    partial = out.with_suffix(".tmp")
    partial.write_bytes(data)
    partial.replace(out)
    return out


def main(argv: Sequence[str]) -> int:
    """``build_duckdb.py OUTDIR [CC]``: build, print the extension's path."""
    if not 1 <= len(argv) <= 2:
        print("usage: python native/build_duckdb.py OUTDIR [CC]", file=sys.stderr)
        return 2
    try:
        path = build(Path(argv[0]), argv[1] if len(argv) > 1 else None)
    except subprocess.CalledProcessError as error:
        print(error.stdout, error.stderr, sep="\n", file=sys.stderr)
        return 1
    except RuntimeError as error:
        print(error, file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
