"""What a JVM function would add to Spark's ``micro_f1``: a measured prototype.

Issue 30 sets Spark's ``micro_f1`` within 2x of the bare scan; mlsql's per-row
statistics (:mod:`mlsql.spark.stats`: a label set per side by ``array_except``, then
``array_intersect``) cost about 6x ("Spark ``micro_f1``: per-row set statistics" in
benchmarks/README.md). ``jvm/SetCounts.java`` computes the three statistics of a row in
one Java function (``UDF2``; short lists compared pairwise, no set built), packed in one
long. This script compiles it with ``javac`` against PySpark's own jars (skips with the
reason where there is no JDK), starts one ``local[2]`` session with the jar on the
driver's class path, reads a generated file (``benchmarks/generate.py``) and times in that
session, best of ``--repeat``: the scan (the count and the two lists' sizes summed),
mlsql's ``micro_f1``, mlsql's three sums alone, and the prototype's three sums. The sums
of the last two must be equal (the script stops otherwise)::

    python benchmarks/spark_set_counts_udf.py --rows 3000000 --file strings
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from generate import generate  # noqa: E402
from spark_cpu import session_cpu  # noqa: E402
from spark_jvm_aggregator import build_jar, session  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--file", default="strings", help="strings, ints or dirty_strings")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--driver-memory", default="2g")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp())
    jar = build_jar(tmp)
    if jar is None:
        print("skipped: no JDK (javac and jar) on the PATH")
        return
    path = generate(args.rows, tmp / "data", progress=False)[args.file]
    from pyspark.sql import functions as F

    spark = session(jar, args.driver_memory)
    import mlsql.spark as ms
    from mlsql.spark.stats import row_stats

    spark._jvm.mlsqlbench.SetCounts.register(spark._jsparkSession)  # type: ignore[union-attr]
    df = spark.read.parquet(str(path))
    a, p = F.col("actual"), F.col("predicted")
    stats = row_stats(a, p)
    packed = F.expr("mlsql_set_counts(actual, predicted)")
    field = (1 << 21) - 1
    cases = {
        "scan (count, sizes)": [F.count(F.lit(1)), F.sum(F.size(a)), F.sum(F.size(p))],
        "mlsql micro_f1": [ms.micro_f1("actual", "predicted")],
        "mlsql three sums": [F.sum(stats.tp), F.sum(stats.n_actual), F.sum(stats.n_predicted)],
        "JVM function three sums": [
            F.sum(packed.bitwiseAND(field)),
            F.sum(F.shiftright(packed, 21).bitwiseAND(field)),
            F.sum(F.shiftright(packed, 42)),
        ],
    }
    clock = session_cpu(spark)
    print(f"{args.file}, rows {args.rows}, best of {args.repeat}, load {os.getloadavg()[0]:.1f}")
    print(f"{'case':26} {'wall s':>8} {'CPU s':>8}  result")
    results: dict[str, tuple[object, ...]] = {}
    for name, columns in cases.items():
        best: tuple[float, float] | None = None
        for _ in range(args.repeat):
            cpu0, t0 = clock(), time.perf_counter()
            results[name] = tuple(df.agg(*columns).first())  # type: ignore[arg-type]
            took = (time.perf_counter() - t0, clock() - cpu0)
            best = took if best is None or took[0] < best[0] else best
        assert best is not None
        print(f"{name:26} {best[0]:8.2f} {best[1]:8.2f}  {results[name]}")
    same = results["mlsql three sums"] == results["JVM function three sums"]
    print(
        f"load {os.getloadavg()[0]:.1f}; the two forms' sums are {'equal' if same else 'NOT equal'}"
    )
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
