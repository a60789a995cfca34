"""The label-set family's stored counts in the PostgreSQL library on a live server:
``multilabel_counts``, ``merge_counts`` and the ``*_from_counts`` functions.

Against the references (tests/references.py: the plain-Python oracle) on the random
label-list tables, the counts of two partitions merged, and weights as repeated rows.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from mlsql._registry import Measure, measures
from mlsql.measures.multilabel import COUNTS_FIELDS
from tests.references import REFERENCES, close, tables
from tests.test_postgres_library import library_database, load

psycopg = pytest.importorskip("psycopg")

FROM_COUNTS = [m for m in measures(family="multilabel") if m.kind == "from_counts"]
#: the stored counts of t, as a subquery
COUNTS = "(SELECT multilabel_counts(actual, predicted) AS c FROM t) s"


@pytest.fixture(scope="module")
def pg(pg_server: Any) -> Iterator[Any]:
    yield from library_database(pg_server, "mlsql_counts")


def fields(con: Any, source: str) -> dict[str, Any]:
    row = con.execute(f"SELECT (c).* FROM {source}").fetchone()
    return dict(zip(COUNTS_FIELDS, row, strict=True))


def call(m: Measure, params: dict[str, Any]) -> tuple[str, list[Any]]:
    """``m`` over the stored counts ``c``, its parameters by name."""
    args, values = ["c"], []
    for name, value in params.items():
        kind = "bigint" if name == "n_labels" else "text" if isinstance(value, str) else "float8"
        args.append(f"{name} => %s::{kind}")
        values.append(value)
    return f"{m.name}({', '.join(args)})", values


def test_counts_and_the_measures_over_them(pg: Any) -> None:
    """Every random table (all unknown, none among them): the counts' fields, and each
    _from_counts function with every parameter set of its reference."""
    for table in tables("label_lists", range(6), no_rows=True):
        load(pg, table)
        got = fields(pg, COUNTS)
        want = REFERENCES["multilabel_counts"].expected(table, {})
        assert all(close(got[k], want[k]) for k in COUNTS_FIELDS), (got, want)
        calls = [(m, p) for m in FROM_COUNTS for p in REFERENCES[m.name].params_for(table)]
        texts = [call(m, p) for m, p in calls]
        values = [v for _, vs in texts for v in vs]
        row = pg.execute(
            f"SELECT {', '.join(t for t, _ in texts)} FROM {COUNTS}", values
        ).fetchone()
        wrong = [
            f"{m.name}({p}): {g} != {w}"
            for (m, p), g in zip(calls, row, strict=True)
            if not close(g, w := REFERENCES[m.name].expected(table, p))
        ]
        assert not wrong, f"{wrong} on {table.to_pylist()}"


def test_merged_partitions_are_the_whole(pg: Any) -> None:
    """The counts of each half of a table, merged, are the counts of the whole."""
    for table in tables("label_lists", range(4))[:4]:
        load(pg, table)
        whole = fields(pg, COUNTS)
        merged = fields(
            pg,
            "(SELECT merge_counts(c) AS c FROM (SELECT multilabel_counts(actual, predicted) AS c"
            " FROM t GROUP BY i % 2) parts) s",
        )
        assert all(close(merged[k], whole[k]) for k in COUNTS_FIELDS), (merged, whole)


def test_weights_count_as_repeated_rows(pg: Any) -> None:
    """Whole weights (0 among them) give the counts of the rows repeated (n_rows: the known
    rows' total weight)."""
    for seed, table in enumerate(tables("label_lists", range(4))[:4]):
        rng = random.Random(f"pg-counts-weights-{seed}")
        weights = [rng.choice([0, 1, 2, 3]) for _ in range(table.num_rows)]
        load(pg, table, [float(w) for w in weights])
        got = fields(pg, "(SELECT multilabel_counts(actual, predicted, w) AS c FROM t) s")
        keep = [i for i, w in enumerate(weights) for _ in range(w)]
        want = REFERENCES["multilabel_counts"].expected(table.take(pa.array(keep, pa.int64())), {})
        assert all(close(got[k], want[k]) for k in COUNTS_FIELDS), (got, want, weights)
