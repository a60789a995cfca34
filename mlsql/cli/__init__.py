"""The ``mlsql`` command: evaluate a file of predictions, or run SQL with every macro loaded.

Examples
--------
From a shell::

    mlsql eval examples/data/blog_tags.parquet --actual actual --predicted predicted
    mlsql eval preds.csv --actual tags --predicted guess --sep ',' --format json
    mlsql sql "SELECT micro_f1(['cat', 'bird'], ['cat', 'dog'])"
    duckdb my.db -c ".read $(mlsql sql-path)/mlsql.sql"   # TEMP macros, this session only
    mlsql install my.db                                     # stored in my.db, every session
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from mlsql.cli.errors import UserError, reported
from mlsql.cli.options import (
    FORMAT_HELP,
    Actual,
    By,
    Confidence,
    DataPath,
    Digits,
    Engine,
    EngineOption,
    Format,
    Output,
    Progress,
    Resamples,
    Seed,
    Sep,
    SingleLabel,
    SparkMaster,
    SqlFormat,
    SqlFormatOption,
)

app = typer.Typer(
    name="mlsql",
    help="Evaluate predictions where they live: multi-label and single-label measures "
    "from Parquet, CSV, NDJSON or DuckDB tables, and SQL with every mlsql macro loaded.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def resampling_of(ci: bool, resamples: int, confidence: float, seed: int) -> Any:
    """The :class:`~mlsql.report.intervals.Resampling` of ``--ci`` (None without it)."""
    from mlsql.report.intervals import Resampling

    if not 0 < confidence < 1:
        with reported():
            raise UserError(f"--confidence must be strictly between 0 and 1; got {confidence:g}")
    return Resampling(resamples, confidence, seed) if ci else None


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
    path: DataPath,
    actual: Actual,
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
    by: By = None,
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
    sep: Sep = None,
    single_label: SingleLabel = False,
    engine: EngineOption = Engine.duckdb,
    format_: Annotated[Format, typer.Option("--format", "-f", help=FORMAT_HELP)] = Format.table,
    output: Output = None,
    per_label: Annotated[
        bool, typer.Option("--per-label", help="Show the whole per-label table.")
    ] = False,
    digits: Digits = 4,
    show_progress: Progress = True,
    spark_master: SparkMaster = None,
    ci: Annotated[
        bool,
        typer.Option(
            "--ci",
            help="Add bootstrap intervals (low, high, std error) to the measures a bootstrap "
            "can resample; the report says which it cannot.",
        ),
    ] = False,
    resamples: Resamples = 1000,
    confidence: Confidence = 0.95,
    seed: Seed = 0,
    slices: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            "--slices",
            help="Add the weakest slices: micro F on each value of these columns "
            "(comma-separated or repeated; numeric ones in quartile bins), worst first, with "
            "intervals and adjusted p-values; the HTML draws them as a forest plot.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Score predictions: micro, macro, weighted and samples averages, Hamming loss, subset accuracy, and the best and worst labels (per group with --by).

    Label columns may be lists (VARCHAR[], INTEGER[]), one label per row (single-label data: the HTML report adds a confusion matrix), or delimited text split with --sep (in CSV an empty cell is an empty list). Rows where either side is NULL are left out as unknown.

    A --predicted column of label scores (a map label -> score, or a list of {label, score}) gives a score report instead: micro, macro, weighted and samples average precision and ROC AUC, the per-label thresholds that maximise F-beta, and the calibration table when the scores are probabilities (labels pooled); the HTML draws the precision-recall curves and a reliability diagram.
    """
    from mlsql.cli.run import run_eval
    from mlsql.cli.slices import candidate_names

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
            single_label=single_label,
            sample_weight=sample_weight,
            engine=engine.value,
            format_=format_.value,
            output=output,
            per_label=per_label,
            digits=digits,
            show_progress=show_progress,
            spark_master=spark_master,
            resampling=resampling_of(ci, resamples, confidence, seed),
            slices=candidate_names(slices, "--slices") if slices else (),
        )


@app.command(
    "compare",
    epilog="Exit codes: 0 done; 2 bad input (the message says what); "
    "3 with --fail-if-worse, a model is significantly worse than the baseline.",
)
def compare_command(
    path: DataPath,
    actual: Actual,
    predicted: Annotated[
        str,
        typer.Option(
            "--predicted",
            "-p",
            help="Column of predicted labels, or of numbers (with a column of numbers or 0/1 "
            "labels as --actual: regression measures, or logloss, auc... of a score).",
            show_default=False,
        ),
    ],
    baseline: Annotated[
        str,
        typer.Option(
            "--baseline", help="The model every other one is compared with.", show_default=False
        ),
    ],
    model: Annotated[str, typer.Option("--model", help="Column naming each row's model.")] = (
        "model"
    ),
    id_: Annotated[
        str,
        typer.Option("--id", help="Column pairing rows across models (unique per model)."),
    ] = "id",
    measures: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            "--measures",
            "-m",
            help="Measures to compare, comma-separated or repeated (default: micro_f1, "
            "samples_f1, subset_accuracy for label lists; accuracy, balanced_accuracy_score, "
            "matthews_corrcoef for one label per row; numbers need them named, e.g. "
            "mse,mae,r2 or logloss,auc).",
            show_default=False,
        ),
    ] = None,
    by: By = None,
    n_labels: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(
            "--n-labels", min=1, help="Size of the label universe (hamming_loss needs it)."
        ),
    ] = None,
    resamples: Resamples = 1000,
    confidence: Confidence = 0.95,
    seed: Seed = 0,
    drop_unpaired: Annotated[
        bool,
        typer.Option(
            "--drop-unpaired",
            help="Leave out rows whose id has no row of the other model (else an error).",
        ),
    ] = False,
    test: Annotated[
        str,
        typer.Option(
            "--test",
            help="How p_value is computed: bootstrap (the paired bootstrap), or ranx's student "
            "(paired t test) or fisher (randomization test, --resamples permutations) over the "
            "per-id values of a per-row measure (samples averages, subset_accuracy, "
            "accuracy, mse, mae, mape, ...).",
        ),
    ] = "bootstrap",
    fail_if_worse: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--fail-if-worse",
            help="Exit with code 3 when a model is significantly worse than the baseline on "
            "this measure: the interval of the difference lies below 0 (above 0 for a loss "
            "or an error, where lower is better).",
            show_default=False,
        ),
    ] = None,
    sep: Sep = None,
    single_label: SingleLabel = False,
    engine: EngineOption = Engine.duckdb,
    format_: SqlFormatOption = SqlFormat.table,
    output: Output = None,
    digits: Digits = 4,
    show_progress: Progress = True,
    spark_master: SparkMaster = None,
) -> None:
    """Compare models with a baseline on paired rows: per model and measure, the difference, its bootstrap interval and p-values.

    The data holds one row per (model, id); each id's rows are resampled together
    (a paired Poisson bootstrap). p_value is the two-sided paired bootstrap p-value;
    mcnemar_p_value is McNemar's exact test, for per-row right/wrong measures
    (subset_accuracy, zero_one_loss, accuracy, error_rate).
    """
    from mlsql.cli.compare import Request, measure_names, run_compare

    resampling_of(True, resamples, confidence, seed)  # checks --confidence
    with reported():
        request = Request(
            model=model,
            id=id_,
            baseline=baseline,
            measures=measure_names(measures or ()),
            by=tuple(by or ()),
            n_labels=n_labels,
            n_resamples=resamples,
            confidence=confidence,
            seed=seed,
            drop_unpaired=drop_unpaired,
            test=test,
            fail_if_worse=fail_if_worse,
        )
        code = run_compare(
            path=path,
            actual=actual,
            predicted=predicted,
            request=request,
            sep=sep,
            single_label=single_label,
            engine=engine.value,
            format_=format_.value,
            output=output,
            digits=digits,
            show_progress=show_progress,
            spark_master=spark_master,
        )
    if code:
        raise typer.Exit(code)


@app.command(
    "slices",
    epilog="Exit codes: 0 done; 2 bad input (the message says what); "
    "3 with --fail-if-slice-below, a slice's estimate is worse than the value.",
)
def slices_command(
    path: DataPath,
    actual: Actual,
    predicted: Annotated[
        str,
        typer.Option("--predicted", "-p", help="Column of predicted labels.", show_default=False),
    ],
    candidates: Annotated[
        list[str],
        typer.Option(
            "--candidates",
            "-c",
            help="Columns that define slices, comma-separated or repeated (numeric ones are "
            "binned into quantiles).",
            show_default=False,
        ),
    ],
    measure: Annotated[
        str,
        typer.Option(
            "--measure",
            "-m",
            help="The measure, any that bootstrap resamples: of label lists (micro_f1, "
            "samples_f1, macro_f1, weighted_f1, subset_accuracy, hamming_loss with "
            "--n-labels...), of one label per row (accuracy, f1_score, "
            "balanced_accuracy_score, matthews_corrcoef...), of numbers (mse, mae, r2...) or "
            "of a 0/1 label and a score (auc, average_precision_score, logloss...).",
        ),
    ] = "micro_f1",
    depth: Annotated[
        int,
        typer.Option("--depth", min=1, max=2, help="2: pairs of candidates' values too."),
    ] = 1,
    n_bins: Annotated[
        int, typer.Option("--n-bins", min=2, help="Quantile bins of a numeric candidate.")
    ] = 4,
    min_rows: Annotated[
        int, typer.Option("--min-rows", min=1, help="Leave out slices with fewer rows.")
    ] = 30,
    min_weight: Annotated[
        Optional[float],  # noqa: UP045
        typer.Option(
            "--min-weight",
            help="Leave out slices whose summed --sample-weight (1 a row without it) is below "
            "this.",
            show_default=False,
        ),
    ] = None,
    n_labels: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(
            "--n-labels", min=1, help="Size of the label universe (hamming_loss needs it)."
        ),
    ] = None,
    sample_weight: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--sample-weight", help="Column of row weights.", show_default=False),
    ] = None,
    adjust: Annotated[
        str,
        typer.Option("--adjust", help="p-value adjustment: bh (Benjamini-Hochberg) or holm."),
    ] = "bh",
    top: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option("--top", min=1, help="Show only the worst N slices.", show_default=False),
    ] = None,
    fail_if_slice_below: Annotated[
        Optional[float],  # noqa: UP045
        typer.Option(
            "--fail-if-slice-below",
            help="Exit with code 3 when a slice's estimate is below this value (above it for "
            "a loss or an error, where lower is better).",
            show_default=False,
        ),
    ] = None,
    resamples: Resamples = 1000,
    confidence: Confidence = 0.95,
    seed: Seed = 0,
    sep: Sep = None,
    single_label: SingleLabel = False,
    engine: EngineOption = Engine.duckdb,
    spark_master: SparkMaster = None,
    format_: SqlFormatOption = SqlFormat.table,
    output: Output = None,
    digits: Digits = 4,
    show_progress: Progress = True,
) -> None:
    """Find the weakest slices: the measure on each candidate column's values (and pairs), worst first.

    Each slice gets a bootstrap interval, its difference from the rest of the
    data with an interval, and a p-value adjusted for the number of slices
    (Benjamini-Hochberg, or Holm); 'significant' marks an adjusted p-value at
    most 1 - confidence.
    """
    from mlsql.cli.slices import Request, candidate_names, run_slices

    resampling_of(True, resamples, confidence, seed)  # checks --confidence
    with reported():
        request = Request(
            candidates=candidate_names(candidates),
            measure=measure,
            depth=depth,
            n_bins=n_bins,
            min_rows=min_rows,
            min_weight=min_weight,
            n_labels=n_labels,
            n_resamples=resamples,
            confidence=confidence,
            seed=seed,
            adjust=adjust,
            top=top,
            fail_if_slice_below=fail_if_slice_below,
        )
        code = run_slices(
            path=path,
            actual=actual,
            predicted=predicted,
            request=request,
            sep=sep,
            engine=engine.value,
            format_=format_.value,
            output=output,
            digits=digits,
            show_progress=show_progress,
            sample_weight=sample_weight,
            single_label=single_label,
            spark_master=spark_master,
        )
    if code:
        raise typer.Exit(code)


@app.command("sql")
def sql_command(
    query: Annotated[str, typer.Argument(help="SQL to run; every mlsql macro is loaded.")],
    db: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--db", help="An existing DuckDB database file (default: in memory)."),
    ] = None,
    read_only: Annotated[
        bool,
        typer.Option(
            "--read-only",
            help="Write nothing: open --db read-only and refuse statements that write files "
            "(COPY, EXPORT DATABASE, ATTACH without READ_ONLY, INSTALL, settings naming files).",
        ),
    ] = False,
    format_: SqlFormatOption = SqlFormat.table,
    output: Output = None,
    max_rows: Annotated[
        int, typer.Option("--max-rows", min=0, help="Rows a table shows at most (0: all).")
    ] = 1000,
    show_progress: Progress = True,
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


@app.command("install")
def install_command(
    db: Annotated[Path, typer.Argument(help="The DuckDB database file to store the macros in.")],
    replace: Annotated[
        bool,
        typer.Option("--replace", help="Replace functions of mlsql's names that exist already."),
    ] = False,
) -> None:
    """Store every mlsql macro in a DuckDB database file, for every later session.

    ``.read mlsql.sql`` creates TEMP macros that last one session; after
    ``mlsql install my.db`` any session that opens my.db, a DuckDB shell of the
    same storage version included, calls them. Nothing of the same name is
    replaced without --replace.
    """
    from mlsql.cli.run import run_install

    with reported():
        typer.echo(run_install(db, replace=replace))


@app.command("sql-path")
def sql_path_command(
    file: Annotated[
        bool, typer.Option("--file", help="Print the path of mlsql.sql, the whole library.")
    ] = False,
    dialect: Annotated[
        str,
        typer.Option("--dialect", help="The database the library is for: duckdb or postgres."),
    ] = "duckdb",
) -> None:
    """Print the directory of mlsql's SQL library, for plain SQL users.

    Load it with: duckdb my.db -c ".read $(mlsql sql-path)/mlsql.sql", or into
    PostgreSQL with: psql -v ON_ERROR_STOP=1 -f "$(mlsql sql-path --dialect postgres --file)"
    """
    from mlsql.cli.sqlpath import ALL_IN_ONE, sql_dir

    with reported():
        where = sql_dir(dialect)
        typer.echo(str(where / ALL_IN_ONE) if file else str(where))


def main() -> None:
    """Entry point for ``python -m mlsql.cli``."""
    app(prog_name="mlsql")


__all__ = ["UserError", "app", "main"]
