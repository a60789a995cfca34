"""Ctrl-C on a long ``mlsql eval`` or ``mlsql sql``: prompt stop, one line, exit 130.

The command runs in a subprocess on an input large enough to take many
seconds; SIGINT is sent once the query runs. Exit 130 proves the signal
came mid-run (a finished run exits 0).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from tests.conftest import ROOT, _engines

#: rows of the generated input: many seconds of work on every engine
ROWS = 12_000_000
#: seconds the process may take from SIGINT to exit
PROMPT = 15.0
#: a line the JVM itself prints when Spark starts (not mlsql's)
JVM_NOTICE = "WARNING: Using incubator modules"

pytestmark = pytest.mark.skipif(os.name != "posix", reason="sends SIGINT to a subprocess")


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big") / "big.parquet"
    duckdb.execute(
        "COPY (SELECT 'm' || (i % 4) AS model, "
        "['t' || (i * 7 % 997), 't' || (i * 13 % 991), 't' || (i % 11)] AS actual, "
        "['t' || (i * 7 % 997), 't' || (i * 17 % 983)] AS predicted "
        f"FROM range({ROWS}) r(i)) TO '{path}'"
    )
    return path


@pytest.fixture(scope="module")
def bigger(big: Path) -> Path:
    """A directory of eight links to ``big`` (96M rows): DuckDB's native counts read ``big``
    alone in about 2.5 s, before the signal of the eval test arrives."""
    folder = big.parent / "eight"
    folder.mkdir(exist_ok=True)
    for i in range(8):
        link = folder / f"part{i}.parquet"
        if not link.exists():
            os.link(big, link)
    return folder


def _has_java_child(pid: int) -> bool:
    """Whether a JVM (Spark's driver, starting) runs below ``pid``."""
    out = subprocess.run(["ps", "-e", "-o", "ppid=,comm="], capture_output=True, text=True)
    rows = [line.split(None, 1) for line in out.stdout.splitlines() if line.strip()]
    return any(r[0] == str(pid) and "java" in r[-1] for r in rows)


def interrupt(
    argv: list[str],
    *,
    started: float,
    env: dict[str, str] | None = None,
    ready: Callable[[int], bool] | None = None,
) -> tuple[int, str, float]:
    """Run ``python -m mlsql.cli ARGV``; SIGINT ``started`` s into the work; (rc, stderr, s).

    With ``ready``, the work starts when ``ready(pid)`` is true.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlsql.cli", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    deadline = time.monotonic() + 300
    while ready is not None and not ready(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(started)
    assert proc.poll() is None, "the run ended before the signal: make the input larger"
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        rc = proc.wait(timeout=120)
        took = time.monotonic() - sent
        # a JVM still starting holds stderr open until it sees its parent gone
        _, stderr = proc.communicate(timeout=120)
    finally:
        proc.kill()
    return rc, stderr, took


def assert_stopped(rc: int, stderr: str, took: float) -> None:
    lines = [line for line in stderr.splitlines() if line and not line.startswith(JVM_NOTICE)]
    assert rc == 130, stderr
    assert lines == ["mlsql: interrupted"], stderr
    assert took < PROMPT, f"exited {took:.1f} s after SIGINT"


# started beside test_ctrl_c_stops_spark_promptly: both use the module's 12M-row file,
# which is then written once
@pytest.mark.first(rank=12)
@pytest.mark.long
@pytest.mark.parametrize("engine", [e for e in _engines() if e != "spark"])
def test_ctrl_c_stops_eval_promptly(bigger: Path, engine: str) -> None:
    argv = ["eval", str(bigger), "-a", "actual", "-p", "predicted", "--by", "model"]
    rc, stderr, took = interrupt([*argv, "--engine", engine, "-f", "json"], started=4.0)
    assert_stopped(rc, stderr, took)


@pytest.mark.first(rank=11)
@pytest.mark.long
@pytest.mark.parametrize("phase", ["while Spark starts", "while Spark runs jobs"])
def test_ctrl_c_stops_spark_promptly(big: Path, tmp_path: Path, phase: str) -> None:
    if "spark" not in _engines():
        pytest.skip("Spark is not among MLSQL_TEST_ENGINES")
    # Spark's local directories appear once its context runs: the jobs start soon after
    local = tmp_path / "spark-local"
    local.mkdir()
    argv = ["eval", str(big), "-a", "actual", "-p", "predicted", "--engine", "spark"]
    starting = phase == "while Spark starts"
    rc, stderr, took = interrupt(
        [*argv, "-f", "json"],
        started=1.0 if starting else 8.0,
        env={"SPARK_LOCAL_DIRS": str(local)},
        ready=_has_java_child if starting else lambda pid: any(local.iterdir()),
    )
    assert_stopped(rc, stderr, took)


@pytest.mark.long
def test_ctrl_c_stops_sql_promptly() -> None:
    query = "SELECT count(*) FROM range(1000000000000) a WHERE a.range % 7 = 3"
    rc, stderr, took = interrupt(["sql", query], started=3.0)
    assert_stopped(rc, stderr, took)
