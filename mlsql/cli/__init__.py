"""The ``mlsql`` command: evaluate a file of predictions, or run SQL with every macro loaded.

Examples
--------
From a shell::

    mlsql eval examples/data/blog_tags.parquet --actual actual --predicted predicted
    mlsql eval preds.csv --actual tags --predicted guess --sep ',' --format json
    mlsql sql "SELECT micro_f1(['cat', 'bird'], ['cat', 'dog'])"
    duckdb my.db -c ".read $(mlsql sql-path)/mlsql.sql"
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from mlsql.cli.errors import UserError, reported

app = typer.Typer(
    name="mlsql",
    help="Evaluate predictions where they live: multi-label and single-label measures "
    "from Parquet, CSV, NDJSON or DuckDB tables, and SQL with every mlsql macro loaded.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


class Engine(str, Enum):
    """Where the measures are computed."""

    duckdb = "duckdb"
    polars = "polars"
    spark = "spark"


class Format(str, Enum):
    """How ``mlsql eval`` writes its report."""

    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"
    html = "html"


class SqlFormat(str, Enum):
    """How ``mlsql sql`` writes its result."""

    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"


PATH_HELP = (
    "Parquet file, directory or glob ('runs/*.parquet'), CSV/TSV, NDJSON, or FILE.duckdb:TABLE."
)


def _version(value: bool) -> None:
    if value:
        from mlsql._version import __version__

        typer.echo(f"mlsql {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Evaluate predictions where they live: multi-label and single-label measures from Parquet, CSV, NDJSON or DuckDB tables, and SQL with every mlsql macro loaded."""


@app.command("eval")
def eval_command(
    path: Annotated[str, typer.Argument(help=PATH_HELP, show_default=False, metavar="PATH")],
    actual: Annotated[
        str, typer.Option("--actual", "-a", help="Column of true labels.", show_default=False)
    ],
    predicted: Annotated[
        str,
        typer.Option(
            "--predicted",
            "-p",
            help="Column of predicted labels, or of label scores (a map label -> score, or a "
            "list of {label, score}): then a score report.",
            show_default=False,
        ),
    ],
    by: Annotated[
        Optional[list[str]],  # noqa: UP045 (typer reads the annotation at run time)
        typer.Option("--by", help="Group by this column (repeat for several).", show_default=False),
    ] = None,
    beta: Annotated[str, typer.Option(help="F-beta's beta, a number > 0.")] = "1",
    zero_division: Annotated[
        str,
        typer.Option(
            "--zero-division", help="Value of undefined ratios: 0, 1, nan, diagnose or ignore."
        ),
    ] = "0",
    labels: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="The label universe, comma-separated (labels never seen count too)."),
    ] = None,
    sample_weight: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--sample-weight",
            help="Weight each row by this numeric column (finite, >= 0; NULL skips the row).",
            show_default=False,
        ),
    ] = None,
    sep: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(help="Split text label columns on this delimiter ('cat,dog')."),
    ] = None,
    engine: Annotated[Engine, typer.Option(help="Where the measures are computed.")] = (
        Engine.duckdb
    ),
    format_: Annotated[Format, typer.Option("--format", "-f", help="Output format.")] = (
        Format.table
    ),
    output: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--output", "-o", help="Write to this file instead of stdout."),
    ] = None,
    per_label: Annotated[
        bool, typer.Option("--per-label", help="Show the whole per-label table.")
    ] = False,
    digits: Annotated[
        int, typer.Option(min=0, max=17, help="Decimals in tables (JSON and CSV keep all).")
    ] = 4,
    show_progress: Annotated[
        bool,
        typer.Option("--progress/--no-progress", help="Progress on a terminal (never in pipes)."),
    ] = True,
    spark_master: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--spark-master",
            help="Spark master URL for --engine spark (default: SPARK_MASTER, Spark's own "
            "configuration, else local[*]; a running session is reused).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Score predictions: micro, macro, weighted and samples averages, Hamming loss, subset accuracy, and the best and worst labels (per group with --by).

    Label columns may be lists (VARCHAR[], INTEGER[]), one label per row (single-label data: the HTML report adds a confusion matrix), or delimited text split with --sep (in CSV an empty cell is an empty list). Rows where either side is NULL are left out as unknown.

    A --predicted column of label scores (a map label -> score, or a list of {label, score}) gives a score report instead: micro, macro, weighted and samples average precision and ROC AUC, the per-label thresholds that maximise F-beta, and the calibration table when the scores are probabilities (labels pooled); the HTML draws the precision-recall curves and a reliability diagram.
    """
    from mlsql.cli.run import run_eval

    with reported():
        run_eval(
            path=path,
            actual=actual,
            predicted=predicted,
            by=tuple(by or ()),
            beta=beta,
            zero_division=zero_division,
            labels=labels,
            sep=sep,
            sample_weight=sample_weight,
            engine=engine.value,
            format_=format_.value,
            output=output,
            per_label=per_label,
            digits=digits,
            show_progress=show_progress,
            spark_master=spark_master,
        )


@app.command("sql")
def sql_command(
    query: Annotated[str, typer.Argument(help="SQL to run; every mlsql macro is loaded.")],
    db: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--db", help="An existing DuckDB database file (default: in memory)."),
    ] = None,
    read_only: Annotated[bool, typer.Option("--read-only", help="Open --db read-only.")] = False,
    format_: Annotated[SqlFormat, typer.Option("--format", "-f", help="Output format.")] = (
        SqlFormat.table
    ),
    output: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--output", "-o", help="Write to this file instead of stdout."),
    ] = None,
    max_rows: Annotated[
        int, typer.Option("--max-rows", min=0, help="Rows a table shows at most (0: all).")
    ] = 1000,
    show_progress: Annotated[
        bool,
        typer.Option("--progress/--no-progress", help="Progress on a terminal (never in pipes)."),
    ] = True,
) -> None:
    """Run SQL with every mlsql macro loaded (as temporary macros: nothing is written to --db)."""
    from mlsql.cli.run import run_sql

    with reported():
        run_sql(
            query,
            db=db,
            read_only=read_only,
            format_=format_.value,
            output=output,
            show_progress=show_progress,
            max_rows=max_rows,
        )


@app.command("sql-path")
def sql_path_command(
    file: Annotated[
        bool, typer.Option("--file", help="Print the path of mlsql.sql, the whole library.")
    ] = False,
) -> None:
    """Print the directory of mlsql's SQL macro library, for plain DuckDB users.

    Load it with: duckdb my.db -c ".read $(mlsql sql-path)/mlsql.sql"
    """
    from mlsql.cli.sqlpath import ALL_IN_ONE, sql_dir

    with reported():
        where = sql_dir()
        typer.echo(str(where / ALL_IN_ONE) if file else str(where))


def main() -> None:
    """Entry point for ``python -m mlsql.cli``."""
    app(prog_name="mlsql")


__all__ = ["UserError", "app", "main"]
