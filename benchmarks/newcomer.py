"""Time the newcomer path: ``mlsql eval`` on one file with each engine, then the plain-SQL path.

Usage::

    python benchmarks/generate.py --rows 1000000 --out benchmarks/data/rows_1000000
    python benchmarks/newcomer.py benchmarks/data/rows_1000000/dirty_strings.parquet

Each command runs under ``/usr/bin/time -v`` (wall time; "Maximum resident
set size" is the largest single process it reaped). The JVM that Spark
starts may outlive the CLI's reaping, so the whole process tree is also
sampled from ``/proc`` every 0.2 s: the peak of the summed RSS of every
process in the tree (the CLI and, with Spark, its JVM). The load average
before each run is printed with it: figures from a busy machine are slower.

The plain-SQL path is README's: a new database file, ``.read $(mlsql sql-path)/mlsql.sql``,
then ``.read examples/blog_tags.sql`` with DuckDB's command-line shell.
Linux only (``/proc``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from mlsql.cli.sqlpath import sql_dir  # noqa: E402


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            out += [int(c) for c in (task / "children").read_text().split()]
    return out


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree_rss_kb(root: int) -> int:
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += _rss_kb(pid)
        todo += _children(pid)
    return total


def measure(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict[str, float]:
    """Wall and CPU seconds, /usr/bin/time's max RSS and the sampled peak tree RSS (MB) of ``argv``.

    CPU seconds are those /usr/bin/time sees: the processes it reaped.
    """
    load = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen(
        ["/usr/bin/time", "-v", *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = [0]

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], _tree_rss_kb(proc.pid))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{err}")
    max_rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", err))
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "time_max_rss_mb": int(max_rss.group(1)) / 1024 if max_rss else float("nan"),
        "tree_peak_rss_mb": peak[0] / 1024,
        "load_1min": load,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file", type=Path, help="Parquet file with model, actual, predicted")
    parser.add_argument("--engines", default="duckdb,polars,spark")
    parser.add_argument(
        "--duckdb",
        default=str(Path(sys.executable).with_name("duckdb")),
        help="DuckDB's command-line shell (default: the one beside this Python)",
    )
    args = parser.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for engine in args.engines.split(","):
        cli = [sys.executable, "-m", "mlsql.cli", "eval", str(args.file.resolve())]
        cli += ["--actual", "actual", "--predicted", "predicted", "--by", "model"]
        got = measure([*cli, "--engine", engine], ROOT, env)
        print(f"mlsql eval --engine {engine}: {got}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "new.db"
        entry = sql_dir() / "mlsql.sql"  # written into the cache before the timing
        sql = [args.duckdb, str(db), "-c", f".read {entry}"]
        got = measure([*sql, "-c", ".read examples/blog_tags.sql"], ROOT)
        print(f"duckdb new.db (.read mlsql.sql, examples/blog_tags.sql): {got}", flush=True)


if __name__ == "__main__":
    main()
