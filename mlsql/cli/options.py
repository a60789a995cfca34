"""The options more than one ``mlsql`` command takes, each written once.

Each is an ``Annotated`` type: a command's parameter of that type, named as
here, is the option with its flags and help text (its default stays in the
command's signature).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer


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

#: the file of predictions (``path``)
DataPath = Annotated[str, typer.Argument(help=PATH_HELP, show_default=False, metavar="PATH")]
#: ``--actual`` (``actual``)
Actual = Annotated[
    str, typer.Option("--actual", "-a", help="Column of true labels.", show_default=False)
]
#: ``--by`` (``by``)
By = Annotated[
    Optional[list[str]],  # noqa: UP045 (typer reads the annotation at run time)
    typer.Option("--by", help="Group by this column (repeat for several).", show_default=False),
]
#: ``--sep`` (``sep``)
Sep = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        help="Split text label columns on this delimiter ('cat, dog'); each label loses the "
        "spaces, tabs and line breaks around it, and an empty one is no label."
    ),
]
#: ``--single-label`` (``single_label``)
SingleLabel = Annotated[
    bool,
    typer.Option(
        "--single-label",
        help="Each text value is one label, even one that looks like a list ('a,b'); "
        "without it such a value stops the run (pass --sep to split it).",
    ),
]
#: ``--engine`` (``engine``)
EngineOption = Annotated[Engine, typer.Option(help="Where the measures are computed.")]
#: what every ``--format`` says (CSV is guarded against formula injection)
FORMAT_HELP = (
    "Output format. In CSV, text starting with =, +, -, @, a tab or a carriage return gets a "
    "leading ' so a spreadsheet shows it rather than running it (numbers stay numbers)."
)
#: ``--format`` of a plain result (``format_``)
SqlFormatOption = Annotated[SqlFormat, typer.Option("--format", "-f", help=FORMAT_HELP)]
#: ``--output`` (``output``)
Output = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option("--output", "-o", help="Write to this file instead of stdout."),
]
#: ``--digits`` (``digits``)
Digits = Annotated[
    int, typer.Option(min=0, max=17, help="Decimals in tables (JSON and CSV keep all).")
]
#: ``--progress/--no-progress`` (``show_progress``)
Progress = Annotated[
    bool,
    typer.Option("--progress/--no-progress", help="Progress on a terminal (never in pipes)."),
]
#: ``--spark-master`` (``spark_master``)
SparkMaster = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option(
        "--spark-master",
        help="Spark master URL for --engine spark (default: SPARK_MASTER, Spark's own "
        "configuration, else local[*]; a running session is reused).",
        show_default=False,
    ),
]
#: ``--resamples`` (``resamples``)
Resamples = Annotated[int, typer.Option("--resamples", min=2, help="Bootstrap resamples.")]
#: ``--confidence`` (``confidence``)
Confidence = Annotated[
    float,
    typer.Option("--confidence", help="Confidence of the intervals, strictly between 0 and 1."),
]
#: ``--seed`` (``seed``)
Seed = Annotated[
    int,
    typer.Option(
        "--seed", min=0, help="Seed of the resamples: the same seed gives the same intervals."
    ),
]
