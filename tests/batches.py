"""Property examples in batches: several random cases stacked in one table, one query for all.

Spark runs every query as a job of its own (tens of milliseconds at best, a second
under load), so a property test that ran one query per measure per example spent
its time starting jobs. Here one hypothesis example draws a *batch* of cases; the
cases are stacked in one table whose column ``example`` numbers them, and every
measure of the test runs over it in one grouped query (``engine.many_by``). Each
case is still checked on its own against the reference. A case without rows has
no group: the tests check that it is absent, and ``tests/test_every_measure.py``
checks every measure on a table without rows.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import strategies as st

#: the column that numbers the cases of a batch
CASE = "example"
#: cases per hypothesis example
MAX_CASES = 6


def batches(case: st.SearchStrategy[Any], max_cases: int = MAX_CASES) -> st.SearchStrategy[Any]:
    """A list of 1 to ``max_cases`` cases drawn from ``case``."""
    return st.lists(case, min_size=1, max_size=max_cases)


def stack(tables: list[pa.Table]) -> pa.Table:
    """The tables one under another, each row numbered with its table's index in ``CASE``.

    ``CASE`` is the first column, so grouping by ``[CASE, ...]`` lists the columns in
    the table's order too (DuckDB's label tables sort groups in table order).
    """
    numbered = (
        t.add_column(0, CASE, pa.array([i] * t.num_rows, pa.int64())) for i, t in enumerate(tables)
    )
    # one chunk: Spark's createDataFrame loses the rows of an Arrow table whose first chunk is empty
    return pa.concat_tables(numbered).combine_chunks()


def with_rows(tables: list[pa.Table]) -> set[int]:
    """The cases a grouped query has a group for: those with rows."""
    return {i for i, t in enumerate(tables) if t.num_rows}
