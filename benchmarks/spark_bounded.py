"""Spark class-wise aggregates at scale in a small driver: collected rows against counts per class.

Runs one measure in a fresh local Spark (``local[2]``, 1 GB driver by default)
over generated single-label rows (``spark.range``: no data passes through
Python) and prints the wall time, the JVM's CPU time and whether it failed::

    python -m benchmarks.spark_bounded --rows 30000000 --mode labels
    python -m benchmarks.spark_bounded --rows 30000000 --mode collect
    python -m benchmarks.spark_bounded --rows 30000000 --mode cells

Modes: ``accuracy`` (a count: the scan's cost), ``collect`` (``ms.f1_score``
macro with ``spark.mlsql.jvm=false``, which collects the group's rows, as without
mlsql's jar), ``cells`` (the same measure with the jar: its Java aggregate counts the
confusion cells), ``labels`` (the same measure over the
known classes, ``ms.f1_score(..., labels=classes)``: a count per class), ``r2``
(``ms.evaluate`` of ``r2`` over ``--groups`` groups of generated numbers near 1e12),
``binned`` (``ms.evaluate`` of ``binned_auc`` and ``expected_calibration_error`` over
``--groups`` groups of generated scores: cells per bin) and ``binned-column`` (the same
measures' own Columns, which collect each group's rows), ``bootstrap`` (``ms.bootstrap``
of ``--measures``, mse, r2 and rae by default, over the ``r2`` mode's numbers,
``--resamples`` Poisson resamples drawn in the executors) and ``bootstrap-driver`` (the
same, the distinct tuples collected and resampled on the driver with numpy, as a table
within the driver's budget is), ``auc`` (``ms.evaluate`` of ``auc`` and
``average_precision_score`` over the ``binned`` mode's scores, nearly all distinct:
sorted runs of equal scores) and ``auc-column`` (the same measures' own Columns, which
collect each group's pairs), ``student`` and ``fisher`` (``ms.compare`` of ``--measures``
with ``test='student'`` or ``'fisher'`` over ``--rows`` rows: two models' predictions of
``--rows`` / 2 generated numbers, ``--resamples`` resamples and permutations, the bootstrap,
the test's sums and draws in the executors) and ``student-driver`` (the same, the distinct
pairs collected, resampled and tested on the driver with numpy, as a table within the
driver's budget is), ``report`` (``mlsql.report`` of the single-label rows: its tables,
and accuracy, balanced accuracy, kappa and MCC per group).
It also prints the driver's peak heap (the JVM's heap pools, reset before the
measure) and the JVM's peak resident memory (``VmHWM``)::

    python -m benchmarks.spark_bounded --rows 5000000 --mode r2 --groups 4

CPU is the JVM's plus this Python process's (the driver-side bootstrap resamples in it).
"""

from __future__ import annotations

import argparse
import json
import time

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

try:  # run as a script: benchmarks/ is the script's directory
    from spark_cpu import process_cpu, session_cpu
except ModuleNotFoundError:  # python -m benchmarks.spark_bounded
    from benchmarks.spark_cpu import process_cpu, session_cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=30_000_000)
    parser.add_argument("--classes", type=int, default=50)
    parser.add_argument("--groups", type=int, default=4)
    parser.add_argument(
        "--mode",
        choices=(
            "accuracy",
            "collect",
            "cells",
            "labels",
            "r2",
            "binned",
            "binned-column",
            "bootstrap",
            "bootstrap-driver",
            "auc",
            "auc-column",
            "student",
            "student-driver",
            "fisher",
            "report",
        ),
        required=True,
    )
    parser.add_argument("--driver-memory", default="1g")
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--measures", default="mse,r2,rae", help="the bootstrap's, by commas")
    args = parser.parse_args()

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", args.driver_memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("OFF")
    import mlsql
    import mlsql.spark as ms

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
    numbers = ids.select(
        (F.col("id") % args.groups).alias("g"),
        (F.lit(1e12) + (F.abs(F.xxhash64("id")) % 1000) / 8).alias("y"),
        (F.lit(1e12) + (F.abs(F.xxhash64(F.col("id") + 7)) % 1000) / 8).alias("p"),
    )
    scored = ids.select(
        (F.col("id") % args.groups).alias("g"),
        (F.abs(F.xxhash64("id")) % 2).cast("int").alias("y"),
        ((F.abs(F.xxhash64(F.col("id") + 7)) % 1000001) / 1000000).alias("s"),
    )
    binned = ["binned_auc", "expected_calibration_error"]
    ranked = ["auc", "average_precision_score"]
    pair = F.floor(F.col("id") / 2)
    paired = ids.select(
        (pair % args.groups).alias("g"),
        pair.alias("pair"),
        F.when(F.col("id") % 2 == 0, "A").otherwise("B").alias("model"),
        (F.abs(F.xxhash64(pair)) % 1000 / 8).alias("y"),
        (F.abs(F.xxhash64(pair + 7)) % 1000 / 8 + F.col("id") % 2).alias("p"),
    )
    if args.mode == "collect":  # the rows collected, as without mlsql's jar
        spark.conf.set("spark.mlsql.jvm", "false")
    tested = ("student", "student-driver", "fisher")
    if args.mode.startswith("bootstrap") or args.mode in tested:  # where the tuples resample
        from mlsql.spark.resample_exec import DRIVER_TUPLES_CONF

        budget = "0" if args.mode in ("bootstrap", "student", "fisher") else str(10**9)
        spark.conf.set(DRIVER_TUPLES_CONF, budget)
    regression = args.measures.split(",")
    resamples = args.resamples
    evaluated = {
        "r2": lambda: ms.evaluate(numbers, "y", "p", ["r2"], by="g").collect(),
        "bootstrap": lambda: ms.bootstrap(
            numbers, "y", "p", regression, by="g", n_resamples=resamples
        ).collect(),
        "bootstrap-driver": lambda: ms.bootstrap(
            numbers, "y", "p", regression, by="g", n_resamples=resamples
        ).collect(),
        **{
            mode: lambda mode=mode: ms.compare(
                paired,
                "y",
                "p",
                regression,
                id="pair",
                by="g",
                n_resamples=resamples,
                test=mode.split("-")[0],
            ).collect()
            for mode in tested
        },
        "binned": lambda: ms.evaluate(scored, "y", "s", binned, by="g").collect(),
        "report": lambda: [
            [row[m] for m in ("accuracy", "balanced_accuracy_score", "matthews_corrcoef")]
            for row in mlsql.report(df, "actual", "predicted").summary
        ],
        "auc": lambda: ms.evaluate(scored, "y", "s", ranked, by="g").collect(),
        "auc-column": lambda: (
            scored.groupBy("g")
            .agg(*(ms.FUNCTIONS[m]("y", "s") for m in ranked))
            .orderBy("g")
            .collect()
        ),
        "binned-column": lambda: (
            scored.groupBy("g")
            .agg(*(ms.FUNCTIONS[m]("y", "s") for m in binned))
            .orderBy("g")
            .collect()
        ),
    }
    measures = {
        "accuracy": lambda: ms.accuracy("actual", "predicted"),
        "collect": lambda: ms.f1_score("actual", "predicted", average="macro"),
        "cells": lambda: ms.f1_score("actual", "predicted", average="macro"),
        "labels": lambda: ms.f1_score("actual", "predicted", average="macro", labels=labels),
    }
    pid = spark._jvm.java.lang.ProcessHandle.current().pid()  # type: ignore[union-attr]
    pools = spark._jvm.java.lang.management.ManagementFactory.getMemoryPoolMXBeans()  # type: ignore[union-attr]
    heap = [p for p in pools if str(p.getType().toString()) == "Heap memory"]
    for p in heap:
        p.resetPeakUsage()
    clock = session_cpu(spark)
    cpu0, t0 = clock(), time.perf_counter()
    try:
        if args.mode in evaluated:
            value, error = [tuple(r) for r in evaluated[args.mode]()], None
        else:
            value, error = df.agg(measures[args.mode]()).first()[0], None  # type: ignore[index]
    except Exception as e:  # the session may die with the JVM's heap
        value, error = None, str(e).splitlines()[0][:200]
    wall = time.perf_counter() - t0
    alive = process_cpu(pid) is not None
    cpu = clock() - cpu0 if alive else None
    try:
        peak = sum(p.getPeakUsage().getUsed() for p in heap) / 2**20
        with open(f"/proc/{pid}/status") as f:
            hwm = next(int(x.split()[1]) for x in f if x.startswith("VmHWM")) / 1024
    except Exception:  # the JVM has ended
        peak = hwm = None
    print(
        json.dumps(
            {
                "mode": args.mode,
                "rows": args.rows,
                "driver": args.driver_memory,
                "wall_s": round(wall, 1),
                "jvm_cpu_s": None if cpu is None else round(cpu, 1),
                "heap_peak_mb": None if peak is None else round(peak),
                "jvm_hwm_mb": None if hwm is None else round(hwm),
                "value": value,
                "error": error,
            }
        )
    )


if __name__ == "__main__":
    main()
