"""The examples the README sends users to run, run as users run them, with the published numbers.

``examples/blog_tags.py`` and ``examples/blog_tags.sql`` must print Hivemall's
published micro F1 and F2 for its blog-tag rows (the conformance data holds
them); ``examples/spark_eval.py`` must evaluate its own partitioned dataset
and agree with itself across its three routes (aggregates, stored counts,
Spark SQL).
"""

from __future__ import annotations

import os
import subprocess
import sys

import duckdb
import pytest

from mlsql.cli.sqlpath import sql_dir
from tests.conftest import ROOT, conformance

BLOG = conformance("hivemall_blog_tags.json")["expected"]


def run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_blog_tags_py_prints_hivemalls_published_f1_and_f2():
    out = run("examples/blog_tags.py")
    assert repr(BLOG["micro.f1"]) in out
    assert repr(BLOG["micro.f2"]) in out


def test_blog_tags_sql_in_a_bare_duckdb_gives_hivemalls_published_f1_and_f2():
    con = duckdb.connect()  # no Python layer: only the SQL files, as the README's duckdb command
    con.execute((sql_dir() / "mlsql.sql").read_text())
    statements = [
        s for s in (ROOT / "examples" / "blog_tags.sql").read_text().split(";") if s.strip()
    ]
    for statement in statements[:-1]:
        con.execute(statement)
    row = con.execute(statements[-1]).fetchone()
    assert row[0] == pytest.approx(BLOG["micro.f1"], rel=1e-12)
    assert row[1] == pytest.approx(BLOG["micro.f2"], rel=1e-12)


@pytest.mark.first(rank=3)
@pytest.mark.long
@pytest.mark.skipif(
    "spark" not in os.environ.get("MLSQL_TEST_ENGINES", "spark"),
    reason="MLSQL_TEST_ENGINES leaves Spark out of this run",
)
def test_spark_eval_example_runs_and_its_numbers_match_the_oracle(tmp_path):
    pytest.importorskip("pyspark")
    import importlib.util

    import pyarrow.parquet as pq

    from tests import oracle
    from tests.engines.spark_engine import session

    out = run("examples/spark_eval.py")  # as a user runs it: its own session and dataset
    for heading in ("1. per model", "2. stored counts", "3. the same from plain Spark SQL"):
        assert heading in out, out

    spec = importlib.util.spec_from_file_location("spark_eval", ROOT / "examples" / "spark_eval.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    path = tmp_path / "preds"
    example.example_dataset(session(), path)
    table = pq.read_table(path)  # the partition column comes back as a column here too
    rows: dict[str, list] = {}
    for r in table.to_pylist():
        rows.setdefault(r["model"], []).append((r["actual"], r["predicted"]))
    df = session().read.parquet(str(path))
    got = {
        r["model"]: r["micro_f1"]
        for r in example.per_group(df, "model", "actual", "predicted", 6).collect()
    }
    assert set(got) == set(rows) == {"m_good", "m_fair", "m_poor"}
    for model, pairs in rows.items():
        assert got[model] == pytest.approx(float(oracle.aggregate("micro_f1", pairs)), rel=1e-12)
