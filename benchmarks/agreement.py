"""The agreement measures at scale: Polars (in-memory and streaming) against DuckDB, CPU s.

Generates ``--rows`` rows in memory: ``ratings``, a list of ``--raters`` text labels of
``--categories`` categories per row, ``correct``, a list of ``--models`` 0/1 outcomes per
row, a weight ``w`` and a group ``g`` of ``--groups``; times ``fleiss_kappa(ratings)``,
``cochrans_q_statistic(correct)`` and ``cochrans_q_p_value(correct)`` in Polars
(``mlsql.polars``: a ``select`` and a ``group_by("g").agg``, each on both engines) and in
DuckDB (``mlsql.connect()``, the same over a table copied in first). Prints one JSON line
per call: CPU seconds (user + system, every thread of the process), wall seconds and the
1-minute load average when it finished::

    python -m benchmarks.agreement --rows 1000000

The engines share the process, one call after the other; only the call is timed.
``--weighted`` passes ``sample_weight``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from benchmarks.class_scores import _timed

MEASURES = {
    "fleiss_kappa": "ratings",
    "cochrans_q_statistic": "correct",
    "cochrans_q_p_value": "correct",
}


def table(rows: int, raters: int, categories: int, models: int, groups: int, seed: int = 0) -> Any:
    """The rows as a pyarrow table: ``ratings`` (list of text), ``correct`` (list of 0/1),
    ``w`` (a weight in [0, 1)) and ``g`` (a group)."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    names = np.array([f"c{i}" for i in range(categories)])
    labels = pa.array(names[rng.integers(0, categories, rows * raters)])
    flags = pa.array((rng.random(rows * models) < 0.6).astype(np.int64))
    return pa.table(
        {
            "ratings": pa.ListArray.from_arrays(
                pa.array(np.arange(0, rows * raters + 1, raters), pa.int32()), labels
            ),
            "correct": pa.ListArray.from_arrays(
                pa.array(np.arange(0, rows * models + 1, models), pa.int32()), flags
            ),
            "w": pa.array(rng.random(rows)),
            "g": pa.array(rng.integers(0, groups, rows)),
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--raters", type=int, default=5)
    parser.add_argument("--categories", type=int, default=4)
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--groups", type=int, default=10)
    parser.add_argument("--weighted", action="store_true")
    parser.add_argument("--engines", default="polars,duckdb")
    parser.add_argument("--measures", default=",".join(MEASURES))
    args = parser.parse_args()
    data = table(args.rows, args.raters, args.categories, args.models, args.groups)
    engines, measures = args.engines.split(","), args.measures.split(",")
    tag = {"rows": args.rows, "weighted": args.weighted}
    if "polars" in engines:
        import polars as pl

        import mlsql.polars as mp

        frame = pl.from_arrow(data)
        assert isinstance(frame, pl.DataFrame)
        kw = {"sample_weight": "w"} if args.weighted else {}
        for measure in measures:
            expr = getattr(mp, measure)(MEASURES[measure], **kw).alias("v")
            queries = {
                "select": frame.lazy().select(expr),
                "group_by": frame.lazy().group_by("g").agg(expr),
            }
            for shape, query in queries.items():
                for engine in ("in-memory", "streaming"):
                    out = _timed(
                        f"polars {engine} {shape}",
                        measure,
                        lambda q=query, e=engine: q.collect(engine=e)["v"].sum(),
                    )
                    print(json.dumps({**tag, **out}), flush=True)
    if "duckdb" in engines:
        import mlsql

        con = mlsql.connect()
        con.register("rows_in", data)
        con.execute("CREATE TABLE t AS FROM rows_in")
        weight = ", sample_weight := w" if args.weighted else ""
        for measure in measures:
            call = f"{measure}({MEASURES[measure]}{weight})"
            sqls = {
                "select": f"SELECT {call} FROM t",
                "group_by": f"SELECT sum(v) FROM (SELECT {call} AS v FROM t GROUP BY g)",
            }
            for shape, sql in sqls.items():
                out = _timed(
                    f"duckdb {shape}", measure, lambda s=sql: con.execute(s).fetchall()[0][0]
                )
                print(json.dumps({**tag, **out}), flush=True)


if __name__ == "__main__":
    main()
