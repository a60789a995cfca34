"""Run the mlsql benchmarks and print one table.

Usage::

    python benchmarks/run.py --rows 1000000
    python benchmarks/run.py --rows 10000000 --engines duckdb,polars,spark --json out.json
    python benchmarks/run.py --rows 1000000 --only 'mlsql micro_f1'

Data is generated with ``generate.py`` when missing (by default under
``benchmarks/data/rows_N/``). Every case (see ``cases.py``) runs on every
file it declares, each in its own subprocess, so that the peak RSS of one
case is measured alone: the worker reports its own ``VmHWM`` plus that of
any process it started (Spark's JVM) from ``/proc``. The time is the best of
``--repeat`` runs inside the subprocess; the ratio is to the case's
baseline on the same file (by default the engine's bare scan). The worker
gets the repository root first on ``PYTHONPATH``, so the mlsql of this
checkout is measured.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cases import CASES, FILES, MLSQL_MODULES, Case, Env, find

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ENGINES = ("duckdb", "polars", "sklearn", "spark", "mllib")
DEFAULT_ENGINES = "duckdb,polars,sklearn"
MLSQL_MISSING = "mlsql not importable yet"


# --------------------------------------------------------------------------
# Worker side: runs one case on one file, in its own process.
# --------------------------------------------------------------------------


class MlsqlMissingError(Exception):
    """The mlsql module a case needs cannot be imported (yet)."""


def import_mlsql(engine: str) -> Any:
    """Import the engine's mlsql module.

    Parameters
    ----------
    engine : str
        Engine name, a key of ``MLSQL_MODULES``.

    Returns
    -------
    module
        ``mlsql``, ``mlsql.polars`` or ``mlsql.spark``.

    Raises
    ------
    MlsqlMissingError
        When the module cannot be imported, or ``mlsql`` is only an empty
        namespace package (a directory without ``__init__.py``).
    """
    try:
        top = importlib.import_module("mlsql")
        if getattr(top, "__file__", None) is None:
            raise MlsqlMissingError("mlsql has no __init__.py")
        return importlib.import_module(MLSQL_MODULES[engine])
    except ImportError as exc:
        raise MlsqlMissingError(f"{type(exc).__name__}: {exc}") from exc


def start_spark(driver_memory: str) -> tuple[Any, Any]:
    """Start a local[2] SparkSession.

    Parameters
    ----------
    driver_memory : str
        Value of ``spark.driver.memory``, e.g. ``"4g"``.

    Returns
    -------
    tuple
        The session and ``pyspark.sql.functions``.
    """
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("mlsql-benchmarks")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark, F


def setup(case: Case, path: str, driver_memory: str) -> tuple[Env, float, float | None]:
    """Import the engine and open what the case body needs.

    Parameters
    ----------
    case : Case
        The case.
    path : str
        Parquet file, or ``""`` for a case that reads none.
    driver_memory : str
        Spark driver memory.

    Returns
    -------
    env : Env
        Environment for the body.
    seconds : float
        Time taken by the engine start (imports excluded).
    cpu_seconds : float or None
        This process's CPU time of the DuckDB engine start (None for the others).

    Raises
    ------
    MlsqlMissingError
        When the case needs mlsql and it is not importable.
    """
    env = Env(f=path)
    if case.mlsql:
        env.mlsql = import_mlsql(case.engine)
    start, cpu = time.perf_counter(), None
    if case.engine == "duckdb":
        import duckdb

        if case.cache == "stored":  # mlsql.connect() once elsewhere: the library is stored
            warm = "import mlsql; mlsql.connect()"
            subprocess.run([sys.executable, "-c", warm], check=True, env=os.environ.copy())
        elif case.cache == "empty":
            os.environ["MLSQL_CACHE_DIR"] = tempfile.mkdtemp(prefix="mlsql-cache-")
            atexit.register(shutil.rmtree, os.environ["MLSQL_CACHE_DIR"], True)
        start, cpu = time.perf_counter(), time.process_time()
        if case.portable:
            env.con = env.mlsql.register(duckdb.connect())
        else:
            env.con = env.mlsql.connect() if case.mlsql else duckdb.connect()
        cpu = time.process_time() - cpu
    elif case.engine == "polars":
        import polars

        env.pl = polars
        if case.portable:  # mlsql.polars reads the switch when it builds each expression
            os.environ["MLSQL_NATIVE"] = "0"
    elif case.engine == "sklearn":
        # Warm the imports the body uses, so they are not timed.
        import pyarrow.parquet  # noqa: F401
        import sklearn.metrics
        import sklearn.preprocessing  # noqa: F401
    elif case.engine in ("spark", "mllib"):
        import pyspark.sql  # noqa: F401

        if case.portable:  # Spark SQL's statistics instead of mlsql's JVM function
            os.environ["MLSQL_NATIVE"] = "0"
        start = time.perf_counter()
        env.spark, env.F = start_spark(driver_memory)
    else:
        raise ValueError(f"unknown engine {case.engine!r}")
    return env, time.perf_counter() - start, cpu


def run_body(case: Case, env: Env) -> Any:
    """Run a case body once and return what it computed.

    Parameters
    ----------
    case : Case
        The case.
    env : Env
        Its environment.

    Returns
    -------
    Any
        Rows (DuckDB), a DataFrame (Polars), Rows (Spark) or a number.
    """
    if isinstance(case.body, str):
        if "'" in env.f:
            raise ValueError("the data path must not contain a quote")
        return env.con.sql(case.body.format(f=env.f)).fetchall()
    if case.body is None:
        return None
    return case.body(env)


def summarize(value: Any, width: int = 60) -> str:
    """Describe a case's result in a few characters.

    Parameters
    ----------
    value : Any
        What the body returned.
    width : int
        Maximum length.

    Returns
    -------
    str
        One row's values, or the number of rows.
    """
    if value is None:
        return ""
    if hasattr(value, "rows") and callable(value.rows):  # Polars DataFrame
        value = value.rows()
    if isinstance(value, list):
        if len(value) != 1:
            return f"{len(value):,} rows"
        value = tuple(value[0])
    if not isinstance(value, tuple):
        value = (value,)

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.6g}"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k}: {fmt(x)}" for k, x in v.items()) + "}"
        return str(v)

    text = ", ".join(fmt(v) for v in value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _status_kb(pid: int | str, field: str) -> int:
    """Read a ``kB`` field (``VmHWM``, ``VmRSS``) of ``/proc/PID/status``."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def cpu_seconds(pids: list[int]) -> float:
    """Return the CPU time used so far by this process and ``pids``.

    Parameters
    ----------
    pids : list of int
        Other processes to count (all their threads), e.g. Spark's JVM.

    Returns
    -------
    float
        User plus system seconds.
    """
    total = time.process_time()
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, ValueError, IndexError):
            pass
    return total


def descendants(pid: int) -> list[int]:
    """Return the pids of all live descendants of ``pid``, from ``/proc``.

    Parameters
    ----------
    pid : int
        Ancestor process.

    Returns
    -------
    list of int
        Children, grandchildren and so on.
    """
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def worker(key: str, path: str, repeat: int, result_path: Path, driver_memory: str) -> int:
    """Run one case on one file and write its result as JSON.

    Parameters
    ----------
    key : str
        ``engine:name`` of the case.
    path : str
        Parquet file, or ``""``.
    repeat : int
        Runs to take the best of (the case may override it).
    result_path : pathlib.Path
        Where to write the result.
    driver_memory : str
        Spark driver memory.

    Returns
    -------
    int
        Exit status: 0, also when the case failed (the failure is in the
        result).
    """
    case = find(key)
    result: dict[str, Any] = {
        "status": "ok",
        "times": [],
        "cpu_times": [],
        "result": "",
        "note": "",
    }
    env: Env | None = None
    try:
        env, setup_seconds, setup_cpu = setup(case, path, driver_memory)
        if case.setup_only:
            result["times"] = [setup_seconds]
            result["cpu_times"] = [] if setup_cpu is None else [setup_cpu]
        else:
            value = None
            helpers = descendants(os.getpid())  # Spark's JVM does the work there
            for _ in range(case.repeat or repeat):
                cpu = cpu_seconds(helpers)
                start = time.perf_counter()
                value = run_body(case, env)
                result["times"].append(time.perf_counter() - start)
                result["cpu_times"].append(cpu_seconds(helpers) - cpu)
            result["result"] = summarize(value)
    except MlsqlMissingError as exc:
        result.update(status="skipped", note=f"{MLSQL_MISSING} ({exc})")
    except Exception as exc:
        result.update(status="error", note=f"{type(exc).__name__}: {exc}")
    own = _status_kb("self", "VmHWM")
    others = sum(_status_kb(p, "VmHWM") for p in descendants(os.getpid()))
    result["peak_rss_kb"] = own + others
    result["child_rss_kb"] = others
    result_path.write_text(json.dumps(result))
    if env is not None and env.spark is not None:
        env.spark.stop()
    return 0


# --------------------------------------------------------------------------
# Parent side: data, subprocesses, table.
# --------------------------------------------------------------------------


@dataclass
class Row:
    """One line of the results table.

    Attributes
    ----------
    engine, file, case : str
        What ran (``file`` is ``-`` for a case that reads none).
    status : str
        ``ok``, ``error``, ``skipped`` or ``timeout``.
    seconds : float or None
        Best time.
    times : list of float
        All timed runs.
    cpu_seconds : float or None
        Least CPU time (all threads, and child processes such as Spark's
        JVM) of one run: the work done, much less sensitive than
        ``seconds`` to other processes competing for the CPU.
    ratio : float or None
        ``seconds`` over the baseline's, on the same file.
    baseline : str
        The baseline's name (``engine name`` when another engine's).
    peak_rss_mb : float or None
        Peak RSS of the case's process and its children.
    result : str
        The computed value, shortened.
    note : str
        Why a case failed or was skipped.
    other_cpu_share : float or None
        Share of the machine's CPU that other processes used while the case
        ran (its subprocess's own CPU time excluded): above
        ``NOISY_SHARE`` its time is marked ``*`` as noisy.
    """

    engine: str
    file: str
    case: str
    status: str
    seconds: float | None
    times: list[float]
    cpu_seconds: float | None
    ratio: float | None
    baseline: str
    peak_rss_mb: float | None
    result: str
    note: str
    other_cpu_share: float | None


def data_paths(data: Path, rows: int, seed: int) -> dict[str, Path]:
    """Return the data files, generating them when missing.

    Parameters
    ----------
    data : pathlib.Path
        Directory of the files: each a Parquet file, or a folder of Parquet parts (the
        Spark cases read both; 1B rows in benchmarks/README.md: ten links to one file).
    rows : int
        Rows the files must have.
    seed : int
        Seed for ``generate.py``.

    Returns
    -------
    dict of str to pathlib.Path
        Paths keyed by short file name.
    """
    import pyarrow.dataset as ds

    paths = {name: data / f"{name}.parquet" for name in FILES}
    # data written before the strings file held the slice candidates is written again
    stale = paths["strings"].exists() and "c1" not in ds.dataset(paths["strings"]).schema.names
    if stale or not all(p.exists() for p in paths.values()):
        print(f"generating {rows:,} rows in {data} ...", file=sys.stderr, flush=True)
        cmd = [sys.executable, str(HERE / "generate.py"), "--rows", str(rows)]
        subprocess.run([*cmd, "--out", str(data), "--seed", str(seed)], check=True)
    for p in paths.values():
        n = ds.dataset(p).count_rows()  # a file, or a folder of parts (Spark reads both)
        if n != rows:
            raise SystemExit(f"{p} has {n:,} rows, not {rows:,}: choose another --data")
    return paths


def cpu_busy_seconds() -> float:
    """Return the CPU time all processes of the machine have used, from ``/proc/stat``."""
    try:
        with open("/proc/stat") as fh:
            fields = [int(x) for x in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return math.nan
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


#: A case is marked noisy when other processes used more than this share of
#: the machine's CPU while it ran.
NOISY_SHARE = 0.10


def wait_quiet(limit: float, share: float = NOISY_SHARE) -> float:
    """Wait until other processes leave the CPU (almost) idle.

    Parameters
    ----------
    limit : float
        Give up after this many seconds.
    share : float
        Busy share of the machine's CPU, over half a second, that counts as
        quiet.

    Returns
    -------
    float
        Seconds waited.
    """
    start = time.monotonic()
    cores = os.cpu_count() or 1
    while time.monotonic() - start < limit:
        before = cpu_busy_seconds()
        time.sleep(0.5)
        if (cpu_busy_seconds() - before) / (0.5 * cores) <= share:
            break
    return time.monotonic() - start


def run_worker(
    case: Case, path: str, repeat: int, timeout: float, tmp: Path, driver_memory: str
) -> dict[str, Any]:
    """Run one case in a subprocess and collect its result.

    Parameters
    ----------
    case : Case
        The case.
    path : str
        Parquet file, or ``""``.
    repeat : int
        Runs to take the best of.
    timeout : float
        Seconds before the subprocess (and its children) are killed.
    tmp : pathlib.Path
        Scratch directory, also the worker's working directory.
    driver_memory : str
        Spark driver memory.

    Returns
    -------
    dict
        The worker's result, or an error built from its exit status and
        output.
    """
    fd, name = tempfile.mkstemp(suffix=".json", dir=tmp)
    os.close(fd)
    result_path = Path(name)
    result_path.unlink()
    log_path = result_path.with_suffix(".log")
    cmd = [sys.executable, str(HERE / "run.py"), "--worker", case.key, "--file", path]
    cmd += ["--repeat", str(repeat), "--result", str(result_path)]
    cmd += ["--spark-driver-memory", driver_memory]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, cwd=tmp, env=env, start_new_session=True
        )
    started = time.monotonic()
    busy_before = cpu_busy_seconds()
    deadline = started + timeout
    timed_out = False
    try:
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                timed_out = True
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
    except BaseException:  # interrupted: take the worker (and its JVM) down too
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        os.wait4(proc.pid, 0)
        proc.returncode = -signal.SIGKILL
        raise
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    own = usage.ru_utime + usage.ru_stime
    other = max(0.0, cpu_busy_seconds() - busy_before - own)
    other_share = other / (wall * (os.cpu_count() or 1)) if wall > 0 else 0.0
    # Anything the worker left behind in its own session (a JVM).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if result_path.exists():
        result = json.loads(result_path.read_text())
        result["other_cpu_share"] = other_share
        return result
    tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or [""]
    return {
        "status": "timeout" if timed_out else "error",
        "times": [],
        "result": "",
        "note": f"timeout after {timeout:g} s"
        if timed_out
        else f"worker exit {proc.returncode}: {tail[0]}",
        "peak_rss_kb": usage.ru_maxrss,  # kB on Linux; includes the fork's parent image
        "other_cpu_share": other_share,
    }


def select_jobs(args: argparse.Namespace, engines: list[str]) -> list[tuple[Case, str]]:
    """List the ``(case, file)`` pairs to run, in table order.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments (``only``).
    engines : list of str
        Engines to run.

    Returns
    -------
    list of tuple
        Setup-only cases first (file ``-``), then per file the cases in
        declaration order. The baselines of cases chosen by ``--only`` are
        added.
    """
    pattern = re.compile(args.only, re.IGNORECASE) if args.only else None
    all_jobs = [(c, "-") for c in CASES if not c.files]
    all_jobs += [(c, f) for f in FILES for c in CASES if f in c.files]
    all_jobs = [(c, f) for c, f in all_jobs if c.engine in engines]

    def chosen(case: Case, file: str) -> bool:
        return pattern is None or bool(pattern.search(f"{case.engine}:{file}:{case.name}"))

    keep = {(c.key, f) for c, f in all_jobs if chosen(c, f)}
    for c, f in all_jobs:
        if (c.key, f) in keep:
            keep.add((":".join(c.baseline_key), f))
    return [(c, f) for c, f in all_jobs if (c.key, f) in keep]


def versions() -> dict[str, str]:
    """Return the versions of the engines and libraries, without importing them."""
    out = {"python": platform.python_version()}
    for dist in ("duckdb", "polars", "pyarrow", "numpy", "scikit-learn", "pyspark"):
        try:
            out[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            out[dist] = "not installed"
    java = shutil.which("java")
    if java:
        proc = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
        match = re.search(r'version "([^"]+)"', proc.stderr)
        out["java"] = match.group(1) if match else proc.stderr.strip()[:40]
    return out


def native_paths() -> str:
    """Which of mlsql's native paths the workers use (asked in a subprocess, like the cases)."""
    code = (
        "import mlsql; s = mlsql.native_status(); "
        'print(\', \'.join(f\'{k} {"native" if v["enabled"] else "portable"}\' for k, v in s.items()))'
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    return proc.stdout.strip() or "unknown"


def machine() -> dict[str, Any]:
    """Describe this machine: cores, RAM and CPU model."""
    info: dict[str, Any] = {"cores": os.cpu_count(), "cpu": platform.processor()}
    try:
        with open("/proc/meminfo") as fh:
            kb = int(next(line for line in fh if line.startswith("MemTotal")).split()[1])
        info["ram_gib"] = round(kb / 2**20, 1)
        with open("/proc/cpuinfo") as fh:
            model = next((line for line in fh if line.startswith("model name")), "")
        info["cpu"] = model.split(":", 1)[-1].strip() or info["cpu"]
    except (OSError, StopIteration, ValueError):
        pass
    return info


def git_commit() -> str:
    """Return the short commit of the checkout, or ``""``."""
    proc = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.stdout.strip()


def build_rows(results: list[tuple[Case, str, dict[str, Any]]]) -> list[Row]:
    """Turn worker results into table rows, with ratios to baselines.

    Parameters
    ----------
    results : list of tuple
        ``(case, file, worker result)``.

    Returns
    -------
    list of Row
        One row per result, in the same order.
    """
    best = {(c.engine, c.name, f): min(r["times"]) for c, f, r in results if r["status"] == "ok"}
    rows = []
    for case, file, res in results:
        seconds = min(res["times"]) if res["status"] == "ok" else None
        base_engine, base_name = case.baseline_key
        base = best.get((base_engine, base_name, file))
        ratio = seconds / base if seconds is not None and base else None
        label = base_name if base_engine == case.engine else f"{base_engine} {base_name}"
        rss = res.get("peak_rss_kb")
        rows.append(
            Row(
                engine=case.engine,
                file=file,
                case=case.name,
                status=res["status"],
                seconds=seconds,
                times=res["times"],
                cpu_seconds=min(res["cpu_times"]) if res.get("cpu_times") else None,
                ratio=ratio,
                baseline="" if case.setup_only else label,
                peak_rss_mb=rss / 1024 if rss else None,
                result=res.get("result", ""),
                note=res.get("note", ""),
                other_cpu_share=res.get("other_cpu_share"),
            )
        )
    return rows


def noisy(r: Row) -> bool:
    """Tell whether other processes used much CPU while the case ran."""
    return r.other_cpu_share is not None and r.other_cpu_share > NOISY_SHARE


def cells(r: Row, width: int = 100) -> list[str]:
    """Format one row's cells, as plain text.

    Parameters
    ----------
    r : Row
        The row.
    width : int
        Longest error or note shown (the JSON output keeps it whole).

    Returns
    -------
    list of str
        engine, file, case, seconds, CPU s, ratio, ratio to, peak RSS MB and the
        result (or the status and its first line of explanation).
    """
    if r.status == "ok":
        last = r.result
    else:
        note = (r.note.splitlines() or [""])[0]
        last = f"{r.status}: {note}"
        last = last if len(last) <= width else last[: width - 1] + "…"
    rss = r.peak_rss_mb if r.status in ("ok", "error", "timeout") else None
    return [
        r.engine,
        r.file,
        r.case,
        "-" if r.seconds is None else f"{r.seconds:.3f}" + ("*" if noisy(r) else ""),
        "-" if r.cpu_seconds is None else f"{r.cpu_seconds:.3f}",
        f"{r.ratio:.2f}" if r.ratio is not None else "-",
        r.baseline,
        f"{rss:,.0f}" if rss is not None else "-",
        last,
    ]


RIGHT = {"seconds", "CPU s", "ratio", "peak RSS MB"}
HEADERS = [
    "engine",
    "file",
    "case",
    "seconds",
    "CPU s",
    "ratio",
    "ratio to",
    "peak RSS MB",
    "result",
]


def render(rows: list[Row], title: str, caption: str) -> None:
    """Print the results as one rich table.

    Parameters
    ----------
    rows : list of Row
        Rows in table order.
    title, caption : str
        Printed above and below the table.
    """
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=title, caption=caption)
    for h in HEADERS:
        table.add_column(h, justify="right" if h in RIGHT else "left")
    styles = {"ok": "", "skipped": "yellow", "error": "red", "timeout": "red"}
    previous = None
    for r in rows:
        if previous is not None and r.file != previous:
            table.add_section()
        previous = r.file
        values = [escape(v) for v in cells(r)]
        if styles.get(r.status):
            values[-1] = f"[{styles[r.status]}]{values[-1]}[/]"
        table.add_row(*values)
    Console(width=None if sys.stdout.isatty() else 200).print(table)


def markdown(rows: list[Row], title: str, caption: str) -> str:
    """Return the results as a Markdown table.

    Parameters
    ----------
    rows : list of Row
        Rows in table order.
    title, caption : str
        Written above and below the table.

    Returns
    -------
    str
        Markdown text.
    """
    right = RIGHT
    lines = [f"**{title}**", "", "| " + " | ".join(HEADERS) + " |"]
    lines.append("| " + " | ".join("---:" if h in right else "---" for h in HEADERS) + " |")
    for r in rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells(r)) + " |")
    return "\n".join([*lines, "", caption, ""])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Parse the command line.

    Parameters
    ----------
    argv : list of str, optional
        Arguments; ``sys.argv[1:]`` when omitted.

    Returns
    -------
    argparse.Namespace
        The parsed arguments.
    """
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, help="rows per data file")
    p.add_argument("--data", type=Path, help="data directory (default benchmarks/data/rows_N)")
    p.add_argument(
        "--engines",
        default=DEFAULT_ENGINES,
        help=f"comma-separated, from {','.join(ENGINES)} (default {DEFAULT_ENGINES})",
    )
    p.add_argument(
        "--only",
        help="regex (case-insensitive) on 'engine:file:case'; their baselines run too",
    )
    p.add_argument("--repeat", type=int, default=3, help="timed runs per case, best kept")
    p.add_argument("--timeout", type=float, default=1800, help="seconds per case (default 1800)")
    p.add_argument(
        "--wait-quiet",
        type=float,
        default=0,
        metavar="S",
        help="before each case, wait up to S seconds for other processes to leave the CPU idle",
    )
    p.add_argument("--seed", type=int, default=42, help="seed when generating data")
    p.add_argument(
        "--sklearn-max-rows",
        type=int,
        default=2_000_000,
        help="skip scikit-learn above this many rows (default 2000000)",
    )
    p.add_argument(
        "--mllib-max-rows",
        type=int,
        default=2_000_000,
        help="skip MLlib's MultilabelMetrics above this many rows (default 2000000)",
    )
    p.add_argument("--spark-driver-memory", default="4g", help="spark.driver.memory (default 4g)")
    p.add_argument("--json", type=Path, help="also write the results to this JSON file")
    p.add_argument("--markdown", type=Path, help="also write the table to this Markdown file")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--file", default="", help=argparse.SUPPRESS)
    p.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if not args.worker and not args.list and not args.rows:
        p.error("--rows is required")
    return args


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point.

    Parameters
    ----------
    argv : list of str, optional
        Arguments; ``sys.argv[1:]`` when omitted.

    Returns
    -------
    int
        Exit status: 0 when the run completed, whatever the cases did.
    """
    args = parse_args(argv)
    # On SIGTERM unwind like on Ctrl-C, so the running worker is killed too.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if args.worker:
        return worker(args.worker, args.file, args.repeat, args.result, args.spark_driver_memory)
    if args.list:
        for c in CASES:
            print(f"{c.engine:8} {c.name:34} files={','.join(c.files) or '-'}")
        return 0

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = sorted(set(engines) - set(ENGINES))
    if unknown:
        raise SystemExit(f"unknown engine(s) {unknown}; choose from {list(ENGINES)}")
    data = (args.data or HERE / "data" / f"rows_{args.rows}").resolve()
    paths = data_paths(data, args.rows, args.seed)
    jobs = select_jobs(args, engines)

    gates: dict[str, Callable[[], str]] = {
        "sklearn": lambda: (
            f"rows > --sklearn-max-rows ({args.sklearn_max_rows:,})"
            if args.rows > args.sklearn_max_rows
            else ""
        ),
        "spark": lambda: (
            "pyspark not importable" if importlib.util.find_spec("pyspark") is None else ""
        ),
        "mllib": lambda: (
            "pyspark not importable"
            if importlib.util.find_spec("pyspark") is None
            else f"rows > --mllib-max-rows ({args.mllib_max_rows:,})"
            if args.rows > args.mllib_max_rows
            else ""
        ),
    }
    from rich.console import Console

    progress = Console(stderr=True)
    results: list[tuple[Case, str, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory(prefix="mlsql-bench-") as tmp_name:
        tmp = Path(tmp_name)
        for i, (case, file) in enumerate(jobs, 1):
            path = str(paths[file]) if file != "-" else ""
            why_not = gates.get(case.engine, lambda: "")()
            if why_not:
                res: dict[str, Any] = {"status": "skipped", "times": [], "note": why_not}
            else:
                if args.wait_quiet:
                    wait_quiet(args.wait_quiet)
                res = run_worker(
                    case, path, args.repeat, args.timeout, tmp, args.spark_driver_memory
                )
            shown = f"{min(res['times']):.3f} s" if res["times"] else res["status"]
            progress.print(
                f"[{i}/{len(jobs)}] {case.engine} {file} {case.name}: {shown}", highlight=False
            )
            results.append((case, file, res))

    rows = build_rows(results)
    info, vers = machine(), versions()
    title = (
        f"mlsql benchmarks: {args.rows:,} rows, {info['cores']} cores, "
        f"{info.get('ram_gib', '?')} GiB RAM, duckdb {vers['duckdb']}, polars {vers['polars']}"
    )
    caption = (
        f"best of {args.repeat} runs; CPU s = least CPU time of a run (all threads and "
        "child processes); ratio = seconds / 'ratio to' case on the same file; "
        "peak RSS = the case's process and its children (VmHWM); "
        f"* = other processes used > {NOISY_SHARE:.0%} of the CPU meanwhile; "
        f"mlsql paths: {native_paths()}; "
        + ", ".join(f"{k} {v}" for k, v in vers.items() if k not in ("duckdb", "polars"))
    )
    render(rows, title, caption)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        args.markdown.write_text(markdown(rows, title, caption))
    if any(r.note.startswith(MLSQL_MISSING) for r in rows):
        print(f"{MLSQL_MISSING}: its cases were skipped", file=sys.stderr)
    if args.json:
        payload = {
            "rows": args.rows,
            "repeat": args.repeat,
            "data": str(data),
            "commit": git_commit(),
            "machine": info,
            "versions": vers,
            "results": [
                {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}
                for d in (asdict(r) for r in rows)
            ],
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
