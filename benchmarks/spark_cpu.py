"""CPU clocks of the Spark benchmarks: a process's CPU seconds read from /proc, and the
sum of this Python process's and the session's JVM's (where Spark does its work)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any


def process_cpu(pid: int) -> float | None:
    """The process's user + system CPU seconds (None once it has ended)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def session_cpu(spark: Any) -> Callable[[], float]:
    """A clock of this process's CPU seconds plus those of ``spark``'s JVM."""
    jvm_pid = spark._jvm.java.lang.ProcessHandle.current().pid()

    def cpu() -> float:
        mine = os.times()
        return (process_cpu(jvm_pid) or 0.0) + mine.user + mine.system

    return cpu
