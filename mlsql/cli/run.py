"""What ``mlsql eval`` and ``mlsql sql`` do, apart from parsing their options."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb

from mlsql.cli import interrupt
from mlsql.cli.errors import UserError, fail, warn
from mlsql.cli.progress import is_terminal, progress, step

#: terminal width used when a table is written to a file
FILE_WIDTH = 120
#: why ``mlsql eval`` refuses two columns of numbers (``mlsql compare`` takes them)
NUMBERS_IN_EVAL = (
    "--actual {a!r} and --predicted {p!r} hold numbers: mlsql eval reports label lists, one "
    "label per row and label scores; compare models on numbers with mlsql compare --measures "
    "(regression: mse, mae, r2...; a 0/1 label and a score: logloss, auc...)"
)


def _console(file: Any) -> Any:
    from rich.console import Console

    if file is None:
        return Console(highlight=False)
    return Console(file=file, width=FILE_WIDTH, color_system=None, highlight=False, soft_wrap=False)


def _write(
    output: Path | None, text: str | None, draw: Callable[[Any], None] | None = None
) -> None:
    """Write ``text`` (or what ``draw`` prints on a rich console) to ``output`` or stdout."""
    if output is None:
        if draw is not None:
            draw(_console(None))
        else:
            sys.stdout.write(text or "")
            sys.stdout.flush()
        return
    from mlsql.cli.output import write

    if draw is not None:
        write(output, lambda handle: draw(_console(handle)))
    else:
        write(output, lambda handle: handle.write(text or ""))
    if is_terminal(sys.stderr):
        sys.stderr.write(f"mlsql: wrote {output}\n")


def run_eval(
    *,
    path: str,
    actual: str,
    predicted: str,
    by: tuple[str, ...],
    beta: str,
    zero_division: str,
    labels: str | None,
    sep: str | None,
    engine: str,
    sample_weight: str | None = None,
    single_label: bool = False,
    format_: str,
    output: Path | None,
    per_label: bool,
    digits: int,
    show_progress: bool,
    spark_master: str | None = None,
    resampling: Any = None,
    slices: tuple[str, ...] = (),
) -> None:
    """Read ``path``, evaluate on ``engine`` and write the report in ``format_``.

    With ``resampling`` (``--ci``), the report adds bootstrap intervals; with
    ``slices`` (``--slices``' columns), its weakest slices.

    DuckDB describes the input (names and types, no rows) and the label rules
    are judged once; then the chosen engine reads the files itself.
    """
    from mlsql.cli.evaluate import (
        TABLES,
        Options,
        beta_value,
        evaluate,
        label_universe,
        zero_division_value,
    )
    from mlsql.cli.output import refuse_source
    from mlsql.cli.sources import (
        open_source,
        prepare,
        refuse_no_rows,
        resolve,
        warn_unknown_rows,
    )

    tables = TABLES
    if format_ == "csv":  # CSV holds one table: compute only that one
        tables = ("label_metrics",) if per_label else ("multilabel_report",)
    options = Options(
        engine=engine,
        beta=beta_value(beta),
        zero_division=zero_division_value(zero_division),
        per_label=per_label,
        tables=tables,
        sample_weight=sample_weight,
        resampling=resampling,
        curves=format_ == "html",
        slices=slices,
    )
    if resampling is not None and format_ == "csv" and per_label:
        raise UserError(
            "--ci adds intervals to the summary, which --per-label --format csv leaves out; "
            "drop --per-label or use --format json"
        )
    if format_ == "html" and output is None and is_terminal(sys.stdout):
        fail("--format html writes a web page: add --output report.html (or redirect stdout)")
    import mlsql

    # the stored library (with the native extension where it loads): a tenth of a second
    con = mlsql.connect()
    try:
        with progress(
            con, f"mlsql: evaluating {path} on {engine}", engine=engine, enabled=show_progress
        ):
            interrupt.on_cancel(con.interrupt)
            source = resolve(path)
            refuse_source(output, source)
            opened = open_source(con, source)
            prepared = prepare(
                con,
                opened,
                actual,
                predicted,
                by=by,
                sep=sep,
                sample_weight=sample_weight,
                single_label=single_label,
                slices=options.slices,
            )
            if prepared.numbers:
                raise UserError(NUMBERS_IN_EVAL.format(a=actual, p=predicted))
            if labels is not None:
                options = replace(options, labels=label_universe(labels, prepared.label_kind))
            prepared, (unknown, total) = _on_engine(con, prepared, engine, spark_master)
            refuse_no_rows(prepared, total)
            warn_unknown_rows(prepared, unknown, total)
            report = evaluate(con, prepared, options, source=path, sep=sep)
        interrupt.engines_done()
        what = "drawing the charts and writing" if format_ == "html" else "writing"
        with step(f"mlsql: {what} the report", enabled=show_progress):
            _write_report(report, format_, output, per_label=per_label, digits=digits)
    finally:
        con.close()  # detach a database file now, not whenever the connection is collected


def _on_engine(
    con: duckdb.DuckDBPyConnection, prepared: Any, engine: str, spark_master: str | None
) -> tuple[Any, tuple[int, int]]:
    """``prepared`` with the frame ``engine`` reads itself, and its (unknown, all) row counts."""
    if engine == "duckdb":
        from mlsql.cli.sources import count_unknown

        return prepared, count_unknown(con)
    if engine == "polars":
        from mlsql.cli import polars_input

        frame = polars_input.prepare(con, prepared)
        return replace(prepared, frame=frame), polars_input.count_unknown(frame)
    try:
        import pyspark.sql  # noqa: F401
    except ImportError:
        raise UserError(
            "--engine spark needs the Python package 'pyspark'; "
            "install it with pip install 'mlsql[spark]'"
        ) from None
    from mlsql.cli import spark_input

    spark_input.check_width(prepared)
    spark = spark_input.active()
    if spark is not None and spark_master and spark.sparkContext.master != spark_master:
        warn(
            f"a Spark session is running on {spark.sparkContext.master}; it is used, "
            f"not --spark-master {spark_master}"
        )
    if spark is None:
        interrupt.exit_hard()  # Spark's clean-up at exit takes seconds
        # started in a thread: Ctrl-C while the JVM starts ends the run at once, and PySpark
        # installs no SIGINT handler of its own (it does so only in the main thread)
        spark = interrupt.wait_for(lambda: spark_input.start(spark_master), hard=True)
    interrupt.on_cancel(spark.sparkContext.cancelAllJobs)
    frame = spark_input.prepare(spark, con, prepared)
    return replace(prepared, frame=frame), spark_input.count_unknown(frame)


def _write_report(
    report: Any, format_: str, output: Path | None, *, per_label: bool, digits: int
) -> None:
    from mlsql.report import formats, text

    if per_label and report.labels is None:
        raise UserError(
            "--per-label needs mlsql.label_metrics, which this installation of mlsql does not have"
        )
    if format_ == "table":
        _write(output, None, lambda c: text.render(report, c, digits=digits, per_label=per_label))
    elif format_ == "json":
        _write(output, formats.to_json(report))
    elif format_ == "csv":
        _write(output, formats.to_csv(report, per_label=per_label))
    elif format_ == "markdown":
        _write(output, formats.to_markdown(report, digits=digits, per_label=per_label))
    else:
        from mlsql.report.html import to_html

        _write(output, to_html(report, digits=digits))


#: a new database file is written in the oldest storage that holds typed macros, which every
#: DuckDB from 1.4 on (the DuckDB shell on the package index included) opens
INSTALL_STORAGE = "v1.4.0"


def run_install(db: Path, *, replace: bool = False) -> str:
    """Store every mlsql macro in the database file ``db`` (made if missing); say what was done."""
    from mlsql._duckdb.library import macros
    from mlsql._duckdb.register import register
    from mlsql._errors import MlsqlError

    config = {} if db.exists() else {"storage_compatibility_version": INSTALL_STORAGE}
    try:
        con = duckdb.connect(str(db), config=config)
    except duckdb.Error as exc:
        raise UserError(f"cannot open {db} as a DuckDB database: {exc}") from None
    try:
        register(con, temporary=False, replace=replace)
    except MlsqlError as exc:
        raise UserError(str(exc).replace("replace=True", "--replace")) from None
    finally:
        con.close()
    n = len({m.name for m in macros()})
    return f"stored {n} mlsql functions in {db}; every session that opens it can call them"


def run_sql(
    query: str,
    *,
    db: Path | None,
    read_only: bool,
    format_: str,
    output: Path | None,
    show_progress: bool,
    max_rows: int = 0,
) -> None:
    """Run ``query`` with every macro loaded and write its result.

    With ``read_only``, ``db`` is opened read-only and a statement that may write
    a file is refused (:mod:`mlsql.cli.readonly`). A table shows at most
    ``max_rows`` rows (0: all); other formats get every row.
    """
    import mlsql
    from mlsql.cli.output import refuse_input
    from mlsql.cli.readonly import refuse_writes
    from mlsql.report import tabular

    if db is not None and not db.is_file():
        raise UserError(f"no such database file: {db} (mlsql sql opens existing databases only)")
    if db is not None:
        refuse_input(output, [str(db)], "the database")
    try:
        con = duckdb.connect(str(db), read_only=read_only) if db is not None else duckdb.connect()
    except duckdb.Error as exc:
        raise UserError(f"cannot open {db} as a DuckDB database: {exc}") from None
    try:
        if read_only:  # DuckDB's parser alone: a refused query is refused before the macros load
            refuse_writes(con, query)
        # In memory the macros are the catalog's, copied from the library stored in the
        # cache directory as mlsql.connect() copies it (0.7 s for the whole command). On a
        # database file they are TEMP macros, so nothing is written into it, and so they
        # are with read_only, which writes no file, not even the cache's: creating them one
        # by one takes 1.7-2.3 s warm and 4-6 s in a fresh process.
        mlsql.register(con, temporary=read_only or db is not None)
        with progress(con, "mlsql: running SQL", enabled=show_progress):
            interrupt.on_cancel(con.interrupt)
            result = con.execute(query)
            columns = [d[0] for d in result.description] if result.description else []
            limit = max_rows if format_ == "table" and max_rows > 0 else None
            if not columns:
                rows = []
            elif limit is None:
                rows = result.fetchall()
            else:
                rows = result.fetchmany(limit + 1)
        interrupt.engines_done()
    finally:
        con.close()  # release the database file now, not whenever the connection is collected
    if format_ == "table":
        more = limit is not None and len(rows) > limit
        rows = rows[:limit] if more else rows
        _write(output, None, lambda c: tabular.print_table(c, columns, rows, more=more))
    else:
        _write(output, tabular.render(format_, columns, rows))
