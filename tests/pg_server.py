"""A throwaway PostgreSQL server for the tests: Debian's binaries, a Unix socket, no TCP.

:func:`start` runs ``initdb`` into a temporary directory and starts ``postgres``
listening only on a socket in that directory (``listen_addresses=''``);
:meth:`Server.stop` stops it and removes the directory. Where no server binary
exists, :func:`find_bin` returns None and the tests skip with the reason.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: why the PostgreSQL tests skip on a machine without a server
NO_SERVER = (
    "no PostgreSQL server binary (initdb, pg_ctl): install Debian's postgresql package "
    "(apt-get install postgresql), as .ci/run does"
)
NO_CLIENT = "psycopg is missing: pip install -e '.[postgres]'"


def find_bin() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``: Debian's newest
    /usr/lib/postgresql/N/bin, else PATH's; None where there is neither."""
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name))
    for d in reversed(debian):
        if (Path(d) / "initdb").is_file() and (Path(d) / "pg_ctl").is_file():
            return Path(d)
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if initdb and pg_ctl:
        return Path(initdb).resolve().parent
    return None


@dataclass
class Server:
    """A running server: its data directory (which holds the socket) and binaries."""

    root: Path
    bin: Path
    prefix: tuple[str, ...] = ()
    user: str = "mlsql"
    dbname: str = "postgres"

    @property
    def conninfo(self) -> str:
        """The libpq connection string: the socket directory as host, no TCP."""
        return f"host={self.root} port=5432 user={self.user} dbname={self.dbname}"

    def stop(self) -> None:
        """Stop the server at once and remove its directory."""
        subprocess.run(
            [
                *self.prefix,
                str(self.bin / "pg_ctl"),
                "-D",
                str(self.root / "data"),
                "-m",
                "immediate",
                "stop",
            ],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.root, ignore_errors=True)


def _as_server_user(root: Path) -> list[str]:
    """The command prefix that runs the server's programs: PostgreSQL refuses to run as
    root, so as root (CI's container) they run as Debian's ``postgres`` user, which then
    owns ``root``."""
    if os.geteuid() != 0:
        return []
    try:
        user = pwd.getpwnam("postgres")
    except KeyError as e:
        raise RuntimeError(
            "running as root, and there is no postgres user to run the server"
        ) from e
    os.chown(root, user.pw_uid, user.pw_gid)
    return ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups"]


def start(bin_dir: Path) -> Server:
    """initdb and start a server in a new temporary directory, on its Unix socket only."""
    root = Path(tempfile.mkdtemp(prefix="mlsql-pg-"))
    os.chmod(root, 0o700)
    server = Server(root, bin_dir)
    prefix = _as_server_user(root)
    server.prefix = tuple(prefix)
    data = root / "data"
    try:
        subprocess.run(
            [
                *prefix,
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                server.user,
                "-A",
                "trust",
                "--no-sync",
                "-E",
                "UTF8",
                "--locale=C",
            ],
            capture_output=True,
            check=True,
        )
        options = (
            f"-c listen_addresses='' -c unix_socket_directories='{root}' -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c shared_buffers=16MB "
            "-c max_connections=20"
        )
        subprocess.run(
            [
                *prefix,
                str(bin_dir / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(root / "log"),
                "-w",
                "-t",
                "60",
                "start",
            ],
            capture_output=True,
            check=True,
        )
    except subprocess.CalledProcessError as e:
        log = (root / "log").read_text() if (root / "log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(
            f"PostgreSQL did not start: {e.stderr.decode(errors='replace')}{log}"
        ) from e
    return server
