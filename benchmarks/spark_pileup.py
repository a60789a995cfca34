"""Heap held by live ``ms.evaluate`` plans of the regression measures, call after call.

Runs ``ms.evaluate(df, "y", "p", ["r2", "rae"], by="g")`` on a 4-row table
``--calls`` times in one local Spark (``local[2]``, 1 GB driver by default),
keeping every DataFrame alive (as a test session or a notebook may), and prints
the driver's used heap after a full GC every fifth call, as JSON::

    python -m benchmarks.spark_pileup --calls 60

A plan that broadcasts a hash relation keeps it on the driver's heap while the
plan lives (16-64 MB each, sized by the heap); a shuffle join does not.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--driver-memory", default="1g")
    args = parser.parse_args()

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", args.driver_memory)
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("OFF")
    import mlsql.spark as ms

    jvm: Any = spark._jvm
    runtime = jvm.java.lang.Runtime.getRuntime()
    table = pa.table({"g": [1, 1, 2, None], "y": [1.0, 2.0, 3.0, 4.0], "p": [1.5, 2.0, 2.0, 4.0]})
    kept, out = [], []
    for k in range(args.calls):
        try:
            df = ms.evaluate(spark.createDataFrame(table), "y", "p", ["r2", "rae"], by="g")
            df.collect()
            kept.append(df)
        except Exception as e:  # the session may die with the JVM's heap
            out.append({"call": k, "error": str(e).splitlines()[0][:150]})
            break
        if k % 5 == 4:
            jvm.java.lang.System.gc()
            used = (runtime.totalMemory() - runtime.freeMemory()) >> 20
            out.append({"call": k + 1, "heap_mb": used})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
