"""The SQL table macro ``evaluate`` of the regression measures at scale: CPU and peak RSS.

Loads the plain-SQL library (``mlsql.sql``, as a DuckDB user loads it, no Python
involved in the query) into a fresh process that opens a database file of generated
rows read-only, runs ``FROM evaluate(...)`` of the regression measures over
``--groups`` groups and prints the query's CPU seconds (user + system, the
process's) and the process's peak RSS (``VmHWM``) as JSON::

    python -m benchmarks.sql_evaluate_regression --rows 20000000 --groups 4

The rows (values near 1e12, as the exactness tests use) are written once to
``--db`` (a temporary file by default) by a first process; only the second, which
runs the macro, is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MEASURES = ["mse", "mae", "rmse", "r2", "explained_variance", "rae", "pearson_corr"]


def _vm_hwm_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _make(db: Path, rows: int, groups: int) -> None:
    import duckdb

    with duckdb.connect(str(db)) as con:
        con.execute(
            "CREATE TABLE t AS SELECT (i % $g)::INTEGER AS g, "
            "1e12 + (hash(i) % 1000)::DOUBLE / 8 AS y, "
            "1e12 + (hash(i + 7) % 1000)::DOUBLE / 8 AS p FROM range($n) r(i)",
            {"g": groups, "n": rows},
        )


def _run(db: Path, weighted: bool) -> dict[str, object]:
    import duckdb

    from mlsql._duckdb.generate import written

    library = (written() / "mlsql.sql").read_text(encoding="utf-8")
    con = duckdb.connect(str(db), read_only=True)
    con.execute(library)
    weight = ", sample_weight := 'y'" if weighted else ""
    query = f"""FROM evaluate('t', 'y', 'p', measures := {MEASURES}, "by" := ['g']{weight})"""
    start = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.perf_counter()
    out = con.execute(query).fetchall()
    wall = time.perf_counter() - wall
    end = resource.getrusage(resource.RUSAGE_SELF)
    cpu = end.ru_utime - start.ru_utime + end.ru_stime - start.ru_stime
    return {
        "rows_out": len(out),
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "peak_rss_mb": round(_vm_hwm_mb()),
        "sample": [list(r) for r in out[:3]],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--groups", type=int, default=4)
    parser.add_argument("--db", type=Path, default=None)
    parser.add_argument("--weighted", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_run(args.db, args.weighted)))
        return
    db = args.db or Path(tempfile.mkdtemp()) / "rows.duckdb"
    if not db.exists():
        _make(db, args.rows, args.groups)
    cmd = [sys.executable, "-m", "benchmarks.sql_evaluate_regression", "--child", "--db", str(db)]
    if args.weighted:
        cmd.append("--weighted")
    done = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ))
    if done.returncode != 0:
        print(done.stderr[-3000:], file=sys.stderr)
        raise SystemExit(done.returncode)
    print(done.stdout.strip())


if __name__ == "__main__":
    main()
