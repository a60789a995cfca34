"""Time one ``df.agg`` of the weighted single-label measures in Spark, by phase.

The weights test (``tests/test_sample_weight_single.py``) runs the 28 weighted
single-label calls on 40 rows in one ``agg``. On so few rows the time goes to
building the Columns (py4j calls), to Spark's analysis (``df.agg(...)`` analyses
before it returns) and to the run (``collect``). This prints each phase's wall
and CPU seconds (this process and the JVM's, steadier than wall time on a shared
machine) for: every call in one agg (``all``), chunks of ``--k`` calls per agg
(``chunks``), or each call alone (``each``).

Run from the repository root (it uses the test suite's local Spark session)::

    python benchmarks/spark_single_label_agg.py [--mode all|chunks|each] [--k 4]
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from typing import Any

from spark_cpu import session_cpu  # benchmarks/, the script's directory

sys.path.insert(0, os.getcwd())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("all", "chunks", "each"), default="all")
    parser.add_argument("--k", type=int, default=4, help="calls per agg in chunks mode")
    parser.add_argument("--only", default="", help="comma-separated measure names")
    args = parser.parse_args()

    import numpy as np
    from pyspark.sql import functions as F

    from tests.engines.spark_engine import SparkEngine, frame, session
    from tests.test_sample_weight_single import REGISTRY_FAMILY, N, _calls, _table

    spark = session()
    cpu = session_cpu(spark)

    rng = np.random.default_rng(100)  # the table of test_integer_weights_equal_repeated_rows
    weights: list[Any] = [float(x) for x in rng.integers(0, 4, N)]
    weights[5] = None
    df = frame(_table(0, weights))
    calls = [
        (name, columns, {**params, "sample_weight": "w"})
        for name, columns, params in _calls("spark")
        if REGISTRY_FAMILY[name] == "single_label"
        and (not args.only or name in args.only.split(","))
    ]
    engine = SparkEngine()
    df.agg(F.count("*")).collect()  # warm up

    def load() -> list[str]:
        with open("/proc/loadavg") as f:
            return f.read().split()[:3]

    def run(chunk: list[Any], label: str) -> tuple[float, float]:
        marks = [(time.perf_counter(), cpu())]
        cols = engine._columns(df, chunk)
        marks.append((time.perf_counter(), cpu()))
        query = df.agg(*cols)
        marks.append((time.perf_counter(), cpu()))
        query.collect()
        marks.append((time.perf_counter(), cpu()))
        phases = [
            f"{(t1 - t0):7.2f} {(c1 - c0):7.2f}" for (t0, c0), (t1, c1) in itertools.pairwise(marks)
        ]
        wall, used = marks[-1][0] - marks[0][0], marks[-1][1] - marks[0][1]
        print(f"{label:40s} {len(chunk):3d} {'  '.join(phases)}  {wall:7.2f} {used:7.2f}")
        return wall, used

    print(f"load {load()}; {len(calls)} calls")
    print(f"{'':40s} {'n':>3s} {'build wall/cpu s':>15s}  {'agg':>15s}  {'collect':>15s}  total")
    if args.mode == "all":
        run(calls, "all")
    else:
        k = 1 if args.mode == "each" else args.k
        totals = [0.0, 0.0]
        for i in range(0, len(calls), k):
            chunk = calls[i : i + k]
            extra = {p: v for p, v in chunk[0][2].items() if p != "sample_weight"}
            label = f"{chunk[0][0]} {extra}" if k == 1 else f"calls {i}-{i + len(chunk) - 1}"
            wall, used = run(chunk, label[:40])
            totals = [totals[0] + wall, totals[1] + used]
        print(f"{'sum':40s} {len(calls):3d} {'':50s} {totals[0]:7.2f} {totals[1]:7.2f}")
    print(f"load {load()}")


if __name__ == "__main__":
    main()
