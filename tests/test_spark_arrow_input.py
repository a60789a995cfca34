"""A DuckDB table read by the Spark CLI engine reaches Spark with every row."""

from __future__ import annotations

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from mlsql.cli.spark_input import _from_arrow
from tests.engines.spark_engine import session


@pytest.mark.parametrize(
    "sizes",
    [(3, 0, 1, 2), (0, 2, 0, 3), (0,), (2, 0)],
    ids=["empty-middle-batch", "empty-first-batches", "only-empty", "empty-last"],
)
def test_every_row_of_a_chunked_arrow_table_reaches_spark(sizes):
    # nothing stops an Arrow producer from emitting empty batches anywhere in a table
    values = iter(range(sum(sizes)))
    batches = [
        pa.record_batch({"a": pa.array([next(values) for _ in range(n)], pa.int64())})
        for n in sizes
    ]
    table = pa.Table.from_batches(batches)
    got = sorted(r.a for r in _from_arrow(session(), table).collect())
    assert got == list(range(sum(sizes)))
