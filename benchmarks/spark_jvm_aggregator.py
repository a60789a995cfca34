"""What a JVM aggregator would add to Spark's bootstrap of numbers: a measured prototype.

Issue 30 asks what a small Java aggregate, built with the JDK, would buy where
Spark SQL has no bounded exact form. The bootstrap of numbers is the costliest
such place: ``ms.bootstrap`` past its driver budget draws each (tuple,
resample) as a row in the executors and aggregates ~0.63 x tuples x resamples
rows. ``jvm/PoissonSums.java`` draws the same kind of Poisson(m) weights (a
uniform from Spark's xxhash64 of (seed, r, y, p), inverse CDF) in a loop inside
one ``Aggregator`` and keeps 2 x resamples sums per group: memory grows with
groups x resamples, never with rows.

This script compiles it with ``javac`` against PySpark's own jars (skips with
the reason where there is no JDK), starts one ``local[2]`` session with the
jar on the driver's class path, and times in that session, best of
``--repeat``: the point estimate (``ms.evaluate`` of ``mse``), mlsql's
bootstrap in the executors and on the driver, and the prototype; it prints
each interval, which must agree within Monte Carlo error (the prototype's
draws are another stream than mlsql's, as DuckDB's are)::

    python benchmarks/spark_jvm_aggregator.py --rows 200000 --resamples 200

The prototype is not mlsql's: its sums are in the merge order of Spark's
partitions, so its last digits would change with the partitioning, where
mlsql's are summed in a fixed order.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from spark_cpu import session_cpu  # noqa: E402


def build_jar(out: Path) -> Path | None:
    """The prototypes' jar (every ``jvm/*.java``), compiled against PySpark's jars (None
    without a JDK)."""
    javac, jar = shutil.which("javac"), shutil.which("jar")
    if javac is None or jar is None:
        return None
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    classes = out / "classes"
    classes.mkdir()
    sources = [str(p) for p in sorted((HERE / "jvm").glob("*.java"))]
    subprocess.run([javac, "-nowarn", "-cp", f"{jars}/*", "-d", str(classes), *sources], check=True)
    target = out / "mlsqlbench.jar"
    subprocess.run([jar, "cf", str(target), "-C", str(classes), "mlsqlbench"], check=True)
    return target


def session(jar: Path, driver_memory: str) -> Any:
    """A quiet ``local[2]`` SparkSession with ``jar`` on the driver's class path."""
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.driver.memory", driver_memory)
        .config("spark.driver.extraClassPath", str(jar))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("OFF")
    return spark


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--groups", type=int, default=4)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--driver-memory", default="2g")
    parser.add_argument("--only", default="", help="comma-separated case names")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp())
    jar = build_jar(tmp)
    if jar is None:
        print("skipped: no JDK (javac and jar) on the PATH")
        return
    from pyspark.sql import functions as F

    spark = session(jar, args.driver_memory)
    import mlsql.spark as ms
    from mlsql.spark.resample_exec import DRIVER_TUPLES_CONF

    seed, resamples = 0, args.resamples
    spark._jvm.mlsqlbench.PoissonSums.register(spark._jsparkSession, resamples, seed)  # type: ignore[union-attr]
    ids = spark.range(args.rows)
    numbers = ids.select(
        (F.col("id") % args.groups).alias("g"),
        (F.lit(1e12) + (F.abs(F.xxhash64("id")) % 1000) / 8).alias("y"),
        (F.lit(1e12) + (F.abs(F.xxhash64(F.col("id") + 7)) % 1000) / 8).alias("p"),
    )

    def estimate() -> list[tuple[object, ...]]:
        return [tuple(r) for r in ms.evaluate(numbers, "y", "p", ["mse"], by="g").collect()]

    def mlsql_bootstrap(budget: str) -> list[tuple[object, ...]]:
        spark.conf.set(DRIVER_TUPLES_CONF, budget)
        out = ms.bootstrap(numbers, "y", "p", ["mse"], by="g", n_resamples=resamples)
        return [tuple(r)[:5] for r in out.collect()]

    def prototype() -> list[tuple[object, ...]]:
        tuples = numbers.groupBy("g", "y", "p").count()
        sums = tuples.groupBy("g").agg(F.expr("poisson_sums(y, p, `count`)").alias("b"))
        out: list[tuple[object, ...]] = []
        for g, b in sorted((r["g"], np.array(r["b"]["s"])) for r in sums.collect()):
            low, high = np.percentile(b[0::2] / b[1::2], [2.5, 97.5])  # mse of each resample
            out.append((g, "mse", estimate_rows[g], float(low), float(high)))
        return out

    estimate_rows = {r[0]: r[2] for r in estimate()}
    cases = {
        "estimate (ms.evaluate mse)": estimate,
        "mlsql bootstrap, executors": lambda: mlsql_bootstrap("0"),
        "mlsql bootstrap, driver": lambda: mlsql_bootstrap(str(10**9)),
        "JVM aggregator prototype": prototype,
    }
    only = [c for c in args.only.split(",") if c]
    clock = session_cpu(spark)
    print(
        f"rows {args.rows}, groups {args.groups}, resamples {resamples}, "
        f"best of {args.repeat}, load {os.getloadavg()[0]:.1f}"
    )
    print(f"{'case':32} {'wall s':>8} {'CPU s':>8}  first group's result")
    for name, run in cases.items():
        if only and not any(o in name for o in only):
            continue
        best: tuple[float, float] | None = None
        result: list[tuple[object, ...]] = []
        for _ in range(args.repeat):
            cpu0, t0 = clock(), time.perf_counter()
            result = run()
            took = (time.perf_counter() - t0, clock() - cpu0)
            best = took if best is None or took[0] < best[0] else best
        assert best is not None
        print(f"{name:32} {best[0]:8.2f} {best[1]:8.2f}  {result[0]}")
    print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
