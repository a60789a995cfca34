"""The class-score measures at scale: Polars (in-memory and streaming) against DuckDB, CPU s.

Generates ``--rows`` rows of ``--classes`` classes in memory (a true label and a list of
{label, score} structs per row, the scores a Dirichlet draw; with ``--repeats`` each row
scores its first class twice, so every row takes the per-row first-entry path) and times
``multiclass_brier_score`` and ``multiclass_calibration_error`` (with ``--multilabel``:
``multilabel_brier_score``, each row's true labels a random 0 to 2 of its classes) over the
whole table in Polars (``mlsql.polars``, a ``select`` on each engine) and in DuckDB (``mlsql.connect()``,
from a table copied in first). Prints one JSON line per call: CPU seconds (user + system,
every thread of the process), wall seconds and the 1-minute load average when it finished::

    python -m benchmarks.class_scores --rows 1000000 --classes 4
    python -m benchmarks.class_scores --rows 1000000 --classes 4 --multilabel

The engines share the process, one call after the other; only the call is timed.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

MEASURES = ("multiclass_brier_score", "multiclass_calibration_error")
#: the measures of ``--multilabel`` (a list of true labels per row)
MULTILABEL_MEASURES = ("multilabel_brier_score",)


def table(rows: int, classes: int, repeats: bool, multilabel: bool = False, seed: int = 0) -> Any:
    """The rows as a pyarrow table: ``actual`` (text, or with ``multilabel`` a list of 0 to 2
    of the classes) and ``scores`` (list of {label, score})."""
    import numpy as np
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    names = np.array([f"c{i}" for i in range(classes)])
    width = classes + (1 if repeats else 0)
    p = rng.dirichlet(np.ones(classes), rows)
    labels = np.tile(names, rows).reshape(rows, classes)
    if repeats:  # the first class again, after the others: its first entry counts
        labels = np.hstack([labels, labels[:, :1]])
        p = np.hstack([p, p[:, :1]])
    structs = pa.StructArray.from_arrays(
        [pa.array(labels.ravel()), pa.array(p.ravel())], names=["label", "score"]
    )
    offsets = pa.array(np.arange(0, rows * width + 1, width), pa.int32())
    actual = pa.array(names[rng.integers(0, classes, rows)])
    if multilabel:
        sizes = rng.integers(0, 3, rows)
        picks = np.argsort(rng.random((rows, classes)), axis=1)
        chosen = picks[np.arange(classes)[None, :] < sizes[:, None]]
        bounds = pa.array(np.concatenate([[0], np.cumsum(sizes)]), pa.int32())
        actual = pa.ListArray.from_arrays(bounds, pa.array(names[chosen]))
    return pa.table({"actual": actual, "scores": pa.ListArray.from_arrays(offsets, structs)})


def _timed(engine: str, measure: str, run: Any) -> dict[str, Any]:
    cpu, wall = time.process_time(), time.perf_counter()
    value = run()
    return {
        "engine": engine,
        "measure": measure,
        "cpu_s": round(time.process_time() - cpu, 2),
        "wall_s": round(time.perf_counter() - wall, 2),
        "load1": round(os.getloadavg()[0], 1),
        "value": value,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--classes", type=int, default=4)
    parser.add_argument("--repeats", action="store_true")
    parser.add_argument("--multilabel", action="store_true")
    parser.add_argument("--engines", default="polars,duckdb")
    args = parser.parse_args()
    data = table(args.rows, args.classes, args.repeats, args.multilabel)
    measures = MULTILABEL_MEASURES if args.multilabel else MEASURES
    engines = args.engines.split(",")
    if "polars" in engines:
        import polars as pl

        import mlsql.polars as mp

        frame = pl.from_arrow(data)
        assert isinstance(frame, pl.DataFrame)
        for measure in measures:
            query = frame.lazy().select(getattr(mp, measure)("actual", "scores"))
            for engine in ("in-memory", "streaming"):
                out = _timed(
                    f"polars {engine}",
                    measure,
                    lambda q=query, e=engine: q.collect(engine=e).item(),
                )
                print(json.dumps({"rows": args.rows, **out}), flush=True)
    if "duckdb" in engines:
        import mlsql

        con = mlsql.connect()
        con.register("rows_in", data)
        con.execute("CREATE TABLE t AS FROM rows_in")
        for measure in measures:
            sql = f"SELECT {measure}(actual, scores) FROM t"
            out = _timed("duckdb", measure, lambda s=sql: con.execute(s).fetchall()[0][0])
            print(json.dumps({"rows": args.rows, **out}), flush=True)


if __name__ == "__main__":
    main()
