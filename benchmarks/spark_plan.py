"""Time the planning-bound Spark cases on 25 rows: wall and CPU seconds, py4j calls.

On tiny data a Spark table or report costs what building and planning its
query costs: the Python-side Columns (each a round trip to the JVM) and
Catalyst's analysis and optimisation. This prints, per case, the best of
``--repeat`` runs of the wall time, the CPU time (this process and the JVM's,
steadier than wall time on a shared machine) and the number of py4j calls.

Run from the repository root (it uses the test suite's local Spark session)::

    python benchmarks/spark_plan.py [--repeat 5] [--only report,label_metrics]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from spark_cpu import session_cpu  # benchmarks/, the script's directory

sys.path.insert(0, os.getcwd())


def count_py4j_calls() -> list[int]:
    """A counter (one-element list) of the commands py4j sends to the JVM from now on."""
    import py4j.clientserver as cs

    calls = [0]
    send = cs.ClientServerConnection.send_command

    def counted(self: Any, command: str) -> Any:
        calls[0] += 1
        return send(self, command)

    cs.ClientServerConnection.send_command = counted  # type: ignore[method-assign]
    return calls


def cases(spark: Any) -> dict[str, Callable[[], Any]]:
    """The cases, each a function that builds and collects one query (or a report)."""
    import mlsql
    import mlsql.spark as ms

    rnd = random.Random(1)
    labels = [f"l{i}" for i in range(6)]
    rows = [
        (
            rnd.choice(["m1", "m2"]),
            rnd.sample(labels, rnd.randint(0, 3)),
            rnd.sample(labels, rnd.randint(0, 3)),
        )
        for _ in range(25)
    ]
    df = spark.createDataFrame(rows, "model string, actual array<string>, predicted array<string>")
    scored = [
        (rnd.randint(0, 1), rnd.randint(0, 9) / 10, rnd.choice(["m1", "m2"])) for _ in range(25)
    ]
    cdf = spark.createDataFrame(scored, "y int, s double, model string")
    return {
        "report": lambda: mlsql.report(df, "actual", "predicted"),
        "report_by": lambda: mlsql.report(df, "actual", "predicted", by="model"),
        "macro_recall": lambda: ms.macro_recall(df, "actual", "predicted").collect(),
        "macro_f1_by": lambda: ms.macro_f1(df, "actual", "predicted", by="model").collect(),
        "label_metrics": lambda: ms.label_metrics(df, "actual", "predicted").collect(),
        "multilabel_report": lambda: ms.multilabel_report(df, "actual", "predicted").collect(),
        "micro_f1": lambda: df.agg(ms.micro_f1("actual", "predicted")).collect(),
        "roc_curve": lambda: ms.roc_curve(cdf, "y", "s").collect(),
        "pr_curve_by": lambda: ms.precision_recall_curve(cdf, "y", "s", by="model").collect(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated case names")
    args = parser.parse_args()
    from tests.engines.spark_engine import session

    spark = session()
    cpu = session_cpu(spark)

    calls = count_py4j_calls()
    todo = cases(spark)
    names = args.only.split(",") if args.only else list(todo)
    print(f"{'case':20s} {'wall s':>7s} {'cpu s':>7s} {'py4j':>7s}")
    for name in names:
        todo[name]()  # warm up
        wall = cpu_s = float("inf")
        for _ in range(args.repeat):
            calls[0] = 0
            c0, t0 = cpu(), time.perf_counter()
            todo[name]()
            wall, cpu_s = min(wall, time.perf_counter() - t0), min(cpu_s, cpu() - c0)
        print(f"{name:20s} {wall:7.2f} {cpu_s:7.2f} {calls[0]:7d}", flush=True)


if __name__ == "__main__":
    main()
