"""``--engine spark`` reads the input itself, with ``spark.read`` on the session the user configures.

The session: an active one is reused (:func:`active`); otherwise one is built on the master
given by ``--spark-master``, else by ``SPARK_MASTER`` in the environment, else
by Spark's own configuration (``spark-submit --master``, ``spark-defaults.conf``),
and ``local[*]`` only when none of these names one. The label columns are built
from the :class:`~mlsql.cli.sources.Side` rules judged once for every engine.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from mlsql import _label_types as LT
from mlsql.cli.errors import UserError
from mlsql.cli.sources import (
    ACTUAL,
    PREDICTED,
    RAW,
    Prepared,
    Side,
    csv_dialect,
    engine_names,
    json_array,
)

#: the master used when nothing names one
DEFAULT_MASTER = "local[*]"
#: the DuckDB types a CSV column is read as (everything else stays text)
CSV_TYPES = {
    "tinyint": "tinyint",
    "smallint": "smallint",
    "integer": "int",
    "bigint": "bigint",
    "hugeint": "decimal(38,0)",
    "utinyint": "smallint",
    "usmallint": "int",
    "uinteger": "bigint",
    "ubigint": "decimal(20,0)",
    "float": "float",
    "double": "double",
}


def configured_master(option: str | None, environ: dict[str, str] | None = None) -> str | None:
    """The master the user named: ``--spark-master``, then ``SPARK_MASTER``; None if neither.

    Examples
    --------
    >>> configured_master(None, {"SPARK_MASTER": "spark://head:7077"})
    'spark://head:7077'
    >>> configured_master("local[2]", {"SPARK_MASTER": "yarn"})
    'local[2]'
    """
    env = os.environ if environ is None else environ
    return option or env.get("SPARK_MASTER") or None


def check_width(prepared: Prepared) -> None:
    """Raise :class:`UserError` for integer labels wider than Spark's ``bigint``.

    DuckDB and Polars hold UBIGINT, HUGEINT and UHUGEINT labels as 128-bit
    integers. Spark has no integer wider than 64 bits: it reads them as
    ``decimal(20,0)`` or ``decimal(38,0)``, and decimals are no labels in any
    engine (:mod:`mlsql._label_types`). Rather than evaluate different labels
    (text, or wrapped-around integers), ``--engine spark`` says so before it
    starts, and names the engines that read them.
    """
    if not prepared.wide:
        return
    columns = " and ".join(repr(side.column) for side in prepared.sides)
    raise UserError(
        f"--engine spark cannot read the labels of {columns}: they are integers wider than "
        "64 bits (UBIGINT, HUGEINT or UHUGEINT), and Spark has no integer type that holds "
        "them; use --engine duckdb or --engine polars, or store the labels as text or BIGINT"
    )


def active() -> Any:
    """The session running in this process (its settings left as they are), or None.

    Spark's active session is per thread, and :func:`start` runs in a thread of its own
    (``mlsql.cli.interrupt.wait_for``): a second run in the same process finds the first
    one's context through the process's default session, where starting another would fail
    ("Cannot run multiple SparkContexts at once").
    """
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is None and SparkContext._active_spark_context is not None:
        session = SparkSession.builder.getOrCreate()
    return session


def start(master: str | None = None) -> Any:
    """A new session on the configured master (``local[*]`` by default).

    It logs only errors and draws no console progress of its own (mlsql's
    spinner shows on a terminal; pipes stay clean). Its JVM's stderr is
    relayed without the JVM's incubator warning (:func:`_quiet_gateway`).
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.sql import SparkSession

    log_config = (Path(__file__).with_name("log4j2.properties")).as_uri()
    conf = (
        SparkConf()
        .setAppName("mlsql eval")
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log_config}")
        .set("spark.sql.session.timeZone", "UTC")
    )
    named = configured_master(master)
    if named is not None:
        conf.setMaster(named)
    gateway = _quiet_gateway(conf)
    try:
        context = SparkContext(conf=conf, gateway=gateway)
    except Exception as exc:  # Spark's own configuration names no master either
        if named is not None or "master URL must be set" not in str(exc):
            raise
        context = SparkContext(conf=conf.setMaster(DEFAULT_MASTER), gateway=gateway)
    context.setLogLevel("ERROR")
    return SparkSession(context)


#: the line the JVM prints at start because Spark's launcher always adds
#: ``--add-modules=jdk.incubator.vector``: no JVM option or log configuration silences it
INCUBATOR_WARNING = b"WARNING: Using incubator modules:"


def _quiet_gateway(conf: Any) -> Any:
    """Spark's JVM (py4j gateway), its stderr relayed to ours without :data:`INCUBATOR_WARNING`.

    Spark's launcher puts ``--add-modules=jdk.incubator.vector`` on every
    driver's command line and the JVM then prints that warning on stderr
    before anything else runs (``jdk.internal.module.ModuleBootstrap``, with
    no option to turn it off). PySpark's ``launch_gateway`` takes Popen
    arguments for capturing the JVM's output: its stderr goes into a pipe,
    and a daemon thread copies every other line (Spark's own errors, such as
    its verdict on a bad master URL when the launch fails) to this process's
    stderr as it arrives. None when a gateway already runs.
    """
    import threading

    from pyspark import SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return None
    read_end, write_end = os.pipe()
    relay = threading.Thread(target=_relay, args=(read_end,), name="mlsql-jvm-stderr", daemon=True)
    relay.start()
    try:
        gateway = launch_gateway(conf, popen_kwargs={"stderr": write_end})
    except BaseException:
        os.close(write_end)
        relay.join(timeout=5)  # the JVM's last words before the error that follows them
        raise
    os.close(write_end)  # the JVM holds its own copy: the pipe ends when the JVM does
    return gateway


def _relay(read_end: int) -> None:
    """Copy the lines of ``read_end`` to stderr, all but :data:`INCUBATOR_WARNING`."""
    import sys

    with os.fdopen(read_end, "rb") as pipe:
        for line in iter(pipe.readline, b""):
            if line.startswith(INCUBATOR_WARNING):
                continue
            sys.stderr.write(line.decode(errors="replace"))
            sys.stderr.flush()


def read(spark: Any, con: duckdb.DuckDBPyConnection, prepared: Prepared) -> Any:
    """A DataFrame of the source's rows (a DuckDB table comes through DuckDB and Arrow)."""
    from pyspark.sql import functions as F

    opened = prepared.opened
    source = opened.source
    if source.database is not None:
        return _from_arrow(spark, con.sql(f"SELECT * FROM {RAW}").to_arrow_table())
    names = engine_names(source, hadoop=True)
    reader = spark.read
    if source.format == "Parquet":
        return reader.option("mergeSchema", "true").parquet(*names)
    if source.format in ("CSV", "TSV"):
        dialect = csv_dialect(con, source)
        frame = reader.csv(
            names,
            sep=dialect.delimiter,
            quote=dialect.quote or "\u0000",
            escape=dialect.quote or "\\",
            header=dialect.header,
            inferSchema=False,
            # a quoted value may hold a line break, as DuckDB and Polars read it (without,
            # Spark split the record: other rows and labels). Each file is then read by one
            # task, not split; Parquet is the format of the data Spark is for
            multiLine=True,
        )
        if len(names) == 1:  # DuckDB's names (column0.. without a header, deduplicated ones)
            frame = frame.toDF(*opened.columns)
        types = {c: t.id for c, t in zip(opened.columns, opened.types, strict=True)}
        return frame.select(
            *(
                F.col(_quoted(c)).cast(CSV_TYPES[t]).alias(c) if t in CSV_TYPES else _quoted(c)
                for c, t in types.items()
            )
        )
    return reader.json(names, multiLine=source.format == "JSON" and json_array(source))


def _from_arrow(spark: Any, table: Any) -> Any:
    """A DataFrame of an Arrow table, zero rows included (Spark cannot infer from none).

    Empty record batches are left out first: PySpark 4.3's ``createDataFrame``
    drops every row after an empty batch of the table it is given.
    """
    if table.num_rows:
        batches = [b for b in table.to_batches() if b.num_rows]
        return spark.createDataFrame(pa.Table.from_batches(batches, schema=table.schema))
    from pyspark.sql.pandas.types import from_arrow_schema

    return spark.createDataFrame([], schema=from_arrow_schema(table.schema))


def _labels(side: Side, prepared: Prepared) -> Any:
    """``side`` as a list of labels, as DuckDB's :func:`mlsql.cli.sources._sql` builds it."""
    from pyspark.sql import functions as F

    c = F.col(_quoted(side.column))
    of = "string" if side.kind == "text" else "bigint"  # wider integers: check_width
    if side.shape == "list":
        return c.cast(f"array<{of}>")
    if side.shape == "scores":  # read as they are by the score measures
        return c
    if side.shape == "number":
        return c.cast("double")
    if side.shape == "split":
        assert prepared.sep is not None
        text = F.coalesce(c, F.lit("")) if prepared.empty_cells else c
        parts = F.split(text.cast("string"), _regex_literal(prepared.sep))
        stripped = F.lit(LT.SPLIT_STRIPPED)
        trimmed = F.transform(parts, lambda x: F.trim(x, stripped))
        kept = F.filter(trimmed, lambda x: x != F.lit(""))
        return kept
    value = F.lower(c.cast("string")) if side.boolean else c.cast(of)
    return F.when(c.isNotNull(), F.array(value))


def _quoted(column: str) -> str:
    """A column name as Spark's ``col`` takes it literally (dots and backticks included)."""
    return "`" + column.replace("`", "``") + "`"


def _regex_literal(text: str) -> str:
    r"""A Java regex matching ``text`` literally.

    Examples
    --------
    >>> _regex_literal("|"), _regex_literal("a\\Eb")
    ('\\Q|\\E', '\\Qa\\E\\\\E\\Qb\\E')
    """
    return "\\Q" + text.replace("\\E", "\\E\\\\E\\Q") + "\\E"


def prepare(spark: Any, con: duckdb.DuckDBPyConnection, prepared: Prepared) -> Any:
    """Group columns, then ``actual`` and ``predicted`` label lists."""
    from pyspark.sql import functions as F

    a, p = prepared.sides
    return read(spark, con, prepared).select(
        *(F.col(_quoted(c)).alias(c) for c in prepared.kept),
        _labels(a, prepared).alias(ACTUAL),
        _labels(p, prepared).alias(PREDICTED),
    )


def count_unknown(frame: Any) -> tuple[int, int]:
    """(rows with a NULL side, all rows)."""
    from pyspark.sql import functions as F

    unknown = F.col(ACTUAL).isNull() | F.col(PREDICTED).isNull()
    row = frame.agg(F.sum(unknown.cast("bigint")), F.count(F.lit(1))).collect()[0]
    return int(row[0] or 0), int(row[1])
