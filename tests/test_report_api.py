"""The report as a Python object (``mlsql.report``) and what every format shows.

Expected numbers come from the conformance data (exact fractions) or the
plain-Python oracles in tests/oracle*.py, never from mlsql's own output.
"""

from __future__ import annotations

import duckdb

import mlsql

#: many labels with Zipf-like frequencies, so per-label ratios have many digits
ZIPF_ROWS = """
SELECT i % 3 AS model,
       list_distinct([ 'l' || CAST(floor(1 / (random() + 0.0005)) AS INT)
                       FOR j IN range(1 + CAST(random() * 4 AS INT))]) AS actual,
       list_distinct([ 'l' || CAST(floor(1 / (random() + 0.0005)) AS INT)
                       FOR j IN range(CAST(random() * 4 AS INT))]) AS predicted
FROM range({n}) t(i)
"""


def test_multilabel_report_is_byte_identical_across_runs() -> None:
    """Issue 17.12: macro and weighted means are summed in a fixed order, not thread order."""
    con = duckdb.connect()
    con.execute("SET threads = 4")
    con.execute("SELECT setseed(0.42)")
    con.execute(f"CREATE TABLE t AS {ZIPF_ROWS.format(n=300_000)}")
    runs = {
        repr(mlsql.multilabel_report(con, "t", "actual", "predicted").fetchall()) for _ in range(8)
    }
    assert len(runs) == 1
