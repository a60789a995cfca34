"""Spark class-wise aggregates at scale in a small driver: collected rows against counts per class.

Runs one measure in a fresh local Spark (``local[2]``, 1 GB driver by default)
over generated single-label rows (``spark.range``: no data passes through
Python) and prints the wall time, the JVM's CPU time and whether it failed::

    python -m benchmarks.spark_bounded --rows 30000000 --mode labels
    python -m benchmarks.spark_bounded --rows 30000000 --mode collect

Modes: ``accuracy`` (a count: the scan's cost), ``collect`` (``ms.f1_score``
macro, which collects the group's rows), ``labels`` (the same measure over the
known classes, :func:`mlsql.spark.families.single_label.over_labels`).
"""

from __future__ import annotations

import argparse
import json
import os
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def _cpu(pid: int) -> float | None:
    """The process's user + system CPU seconds (None once it has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=30_000_000)
    parser.add_argument("--classes", type=int, default=50)
    parser.add_argument("--mode", choices=("accuracy", "collect", "labels"), required=True)
    parser.add_argument("--driver-memory", default="1g")
    args = parser.parse_args()

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", args.driver_memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("OFF")
    import mlsql.spark as ms
    from mlsql.spark.families.single_label import over_labels

    k = args.classes
    ids = spark.range(args.rows)
    actual = (F.abs(F.xxhash64("id")) % k).cast("int")
    wrong = (F.abs(F.xxhash64(F.col("id") + 7)) % 10) < 3  # about 30% mispredicted
    predicted = F.when(wrong, (actual + 1) % k).otherwise(actual)
    df = ids.select(
        F.concat(F.lit("c"), actual.cast("string")).alias("actual"),
        F.concat(F.lit("c"), predicted.cast("string")).alias("predicted"),
    )
    labels = [f"c{i}" for i in range(k)]
    measure = {
        "accuracy": lambda: ms.accuracy("actual", "predicted"),
        "collect": lambda: ms.f1_score("actual", "predicted", average="macro"),
        "labels": lambda: over_labels("f1_score", "actual", "predicted", labels, average="macro"),
    }[args.mode]
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()  # type: ignore[union-attr]
    cpu0, t0 = _cpu(pid), time.perf_counter()
    try:
        value, error = df.agg(measure()).first()[0], None  # type: ignore[index]
    except Exception as e:  # the session may die with the JVM's heap
        value, error = None, str(e).splitlines()[0][:200]
    wall = time.perf_counter() - t0
    cpu = _cpu(pid)
    cpu = None if cpu is None or cpu0 is None else cpu - cpu0
    print(
        json.dumps(
            {
                "mode": args.mode,
                "rows": args.rows,
                "driver": args.driver_memory,
                "wall_s": round(wall, 1),
                "jvm_cpu_s": None if cpu is None else round(cpu, 1),
                "value": value,
                "error": error,
            }
        )
    )


if __name__ == "__main__":
    main()
