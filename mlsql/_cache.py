"""Where mlsql keeps what it writes once and reuses: the stored DuckDB library, the
PostgreSQL library files."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$MLSQL_CACHE_DIR``, else ``$XDG_CACHE_HOME/mlsql``, else ``~/.cache/mlsql``.

    Examples
    --------
    >>> import os
    >>> os.environ["MLSQL_CACHE_DIR"] = "/srv/cache"
    >>> str(cache_dir())
    '/srv/cache'
    >>> del os.environ["MLSQL_CACHE_DIR"]
    """
    given = os.environ.get("MLSQL_CACHE_DIR")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mlsql"
