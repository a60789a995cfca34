"""Importing an engine's module does only what it must: no example runs, no other engine loads.

Not timed (timings depend on the machine); what is checked is the work an
import does: ``import mlsql.polars`` builds no DataFrame (the docstring
examples' outputs are written, not computed) and does not import DuckDB.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

PROBE = """
import sys
import polars as pl

built = []
original = pl.DataFrame.__init__

def counting(self, *args, **kwargs):
    built.append(1)
    original(self, *args, **kwargs)

pl.DataFrame.__init__ = counting
import mlsql.polars as mp

print(len(built), "duckdb" in sys.modules, "Examples" in mp.micro_f1.__doc__)
"""


def test_import_mlsql_polars_runs_no_example_and_loads_no_duckdb():
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    frames, duckdb_loaded, documented = done.stdout.split()
    assert frames == "0", f"import mlsql.polars built {frames} DataFrames"
    assert duckdb_loaded == "False"
    assert documented == "True"  # the examples are still in the docstrings


def test_import_mlsql_polars_loads_no_numpy():
    # numpy is for bootstrap and compare (mlsql._resample), imported when one runs; sqlglot
    # writes SQL, which Polars needs none of
    probe = (
        "import sys\nimport mlsql.polars\nprint('numpy' in sys.modules, 'sqlglot' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False"]


CONNECT = """
import sys
import mlsql

con = mlsql.connect()
assert con.execute("SELECT micro_f1(['a', 'b'], ['a'])").fetchone()[0] == 2 / 3
loaded = sorted(m for m in sys.modules if m.startswith("mlsql._duckdb.families"))
registry = "mlsql.measures" in sys.modules
sql = "sqlglot" in sys.modules
print("mlsql._duckdb.library" in sys.modules, "numpy" in sys.modules, registry, len(loaded), sql)
"""


@pytest.mark.long
def test_connect_with_the_library_stored_builds_none_of_it(tmp_path):
    # the stored library is found and copied without writing its macros in Python, which
    # imports every family module. (numpy is imported either way: DuckDB's create_function,
    # which installs the SQL slices function's Python side, imports it.)
    env = {**os.environ, "MLSQL_CACHE_DIR": str(tmp_path)}
    runs = [
        subprocess.run(
            [sys.executable, "-c", CONNECT],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        for _ in range(2)
    ]
    for done in runs:
        assert done.returncode == 0, done.stderr
    assert runs[0].stdout.split()[0] == "True"  # the first run built it
    built, _numpy, registry, families, sqlglot = runs[1].stdout.split()
    # nor is the SQL writer (sqlglot, ~0.1 s of imports) loaded: the stored text is copied
    assert (built, registry, families, sqlglot) == ("False", "False", "0", "False")
