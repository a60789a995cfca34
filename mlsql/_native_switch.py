"""mlsql's native code, for every engine: where the compiled files are, and the switch.

mlsql computes each row's |A ∩ P|, |A| and |P| either with portable code or
with one C kernel (``native/kernel.h``) behind a DuckDB extension (loaded by
:mod:`mlsql._duckdb.native`) and a Polars plugin (:mod:`mlsql.polars._native`),
compiled into the package's ``_native`` folder when it is installed.
``MLSQL_NATIVE=0`` forces the portable paths everywhere (read whenever a
connection or an expression is made).
"""

from __future__ import annotations

import os
from pathlib import Path

#: the environment variable that switches native code off (``MLSQL_NATIVE=0``)
ENV = "MLSQL_NATIVE"
#: the folder inside the package the build puts compiled files into
FOLDER = Path(__file__).resolve().parent / "_native"
_OFF = ("0", "false", "no", "off")


def switched_off() -> bool:
    """Whether ``MLSQL_NATIVE`` asks for the portable paths."""
    return os.environ.get(ENV, "").strip().lower() in _OFF
