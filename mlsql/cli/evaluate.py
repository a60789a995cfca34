"""Compute a :class:`~mlsql.report.model.Report` on the engine the user chose.

Every engine gets the same prepared data (``Prepared.frame``: group columns, then
``actual`` and ``predicted`` label lists, read by the engine itself; DuckDB reads the view
:data:`~mlsql.cli.sources.PREPARED`), and the report is built as ``mlsql.report`` builds it (:func:`mlsql.report.build.build`).
The CLI computes no measure itself.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import duckdb

from mlsql import _params as P
from mlsql.cli.errors import UserError
from mlsql.cli.sources import ACTUAL, PREDICTED, PREPARED, Prepared
from mlsql.report.build import Settings, build
from mlsql.report.engines import TABLES, DuckDBFrames, PolarsFrames, SparkFrames
from mlsql.report.model import Report

#: how messages name the command whose options are checked here
COMMAND = "mlsql eval"

ENGINE_MODULES = {"duckdb": "mlsql", "polars": "mlsql.polars", "spark": "mlsql.spark"}


@dataclass(frozen=True)
class Options:
    """What ``mlsql eval`` was asked, validated."""

    engine: str = "duckdb"
    beta: float = 1.0
    zero_division: Any = 0
    labels: tuple[Any, ...] | None = None
    per_label: bool = False
    #: which of TABLES to compute (CSV needs only one of them)
    tables: tuple[str, ...] = TABLES
    #: the column of row weights (--sample-weight), if any
    sample_weight: str | None = None
    #: bootstrap intervals (--ci): a :class:`~mlsql.report.intervals.Resampling`, or None
    resampling: Any = None
    #: a score report computes the precision-recall curves (the HTML page draws them)
    curves: bool = False
    #: the candidate columns of the weakest slices (--slices); empty: no slices
    slices: tuple[str, ...] = ()

    def params(self, prepared: Prepared, sep: str | None) -> dict[str, Any]:
        """The parameters as a report shows them."""
        return {
            "actual": prepared.actual,
            "predicted": prepared.predicted,
            "by": list(prepared.by),
            "beta": self.beta,
            "zero_division": self.zero_division,
            "labels": list(self.labels) if self.labels is not None else None,
            "sep": sep,
            **({"sample_weight": self.sample_weight} if self.sample_weight else {}),
        }


def _module(engine: str) -> ModuleType:
    name = ENGINE_MODULES[engine]
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or name
        if missing.startswith("mlsql"):
            raise UserError(
                f"--engine {engine} needs {name}, which this installation of mlsql does not have"
            ) from None
        raise UserError(
            f"--engine {engine} needs the Python package {missing.split('.')[0]!r}; "
            f"install it (pip install 'mlsql[{engine}]' for spark, or pip install {missing})"
        ) from None


def _frame(con: duckdb.DuckDBPyConnection, engine: str, prepared: Prepared) -> tuple[Any, Any]:
    """The engine's report questions, and its frame of the prepared data (read by the engine
    itself: :mod:`mlsql.cli.polars_input`, :mod:`mlsql.cli.spark_input`)."""
    if engine == "duckdb":
        return DuckDBFrames(con), con.sql(f"SELECT * FROM {PREPARED}")
    _module(engine)
    if engine == "polars":
        return PolarsFrames(), prepared.frame
    _module_or_package("pyspark.sql")
    return SparkFrames(), prepared.frame


def _module_or_package(name: str) -> None:
    try:
        importlib.import_module(name)
    except ImportError:
        raise UserError(
            f"--engine spark needs the Python package {name.split('.')[0]!r}; "
            "install it with pip install 'mlsql[spark]'"
        ) from None


def evaluate(
    con: duckdb.DuckDBPyConnection,
    prepared: Prepared,
    options: Options,
    *,
    source: str,
    sep: str | None = None,
) -> Report:
    """The report of the prepared view on the chosen engine (as ``mlsql.report`` builds it)."""
    engine, frame = _frame(con, options.engine, prepared)
    if prepared.scores:
        if options.slices:
            raise UserError(
                "--slices: a score report has no slices in this release; "
                "give a column of predicted labels, or leave --slices out"
            )
        return _evaluate_scores(con, engine, frame, prepared, options, source=source, sep=sep)
    settings = Settings(
        by=prepared.by,
        labels=options.labels,
        beta=options.beta,
        zero_division=options.zero_division,
        sep=sep,
        tables=options.tables,
        sample_weight=options.sample_weight,
    )
    report = build(
        engine,
        frame,
        ACTUAL,
        PREDICTED,
        settings,
        single_label=prepared.single_label,
        source=source,
        params=options.params(prepared, sep),
    )
    if options.resampling is not None:
        from mlsql.report.intervals import add_intervals

        report = add_intervals(
            report, engine, frame, ACTUAL, PREDICTED, options.resampling, options.sample_weight
        )
    if not options.slices:
        return report
    from mlsql._errors import MlsqlError
    from mlsql.report.slicing import add_slices

    try:
        return add_slices(report, engine, frame, ACTUAL, PREDICTED, settings, options.slices)
    except MlsqlError as exc:
        raise UserError(str(exc)) from None


def score_table_columns() -> tuple[str, ...]:
    """The output columns of the tables a score report reads (a --by column may not be one).

    Examples
    --------
    >>> "label" in score_table_columns(), "bin" in score_table_columns()
    (True, True)
    """
    from mlsql.measures import curves, thresholds

    names = (
        *thresholds.THRESHOLD_COLUMNS,
        *thresholds.CALIBRATION_COLUMNS,
        *curves.output_columns("precision_recall_curve"),
    )
    return tuple(dict.fromkeys(names))


def _evaluate_scores(
    con: duckdb.DuckDBPyConnection,
    engine: Any,
    frame: Any,
    prepared: Prepared,
    options: Options,
    *,
    source: str,
    sep: str | None,
) -> Report:
    """The score report (the predicted column holds label scores), as ``mlsql.report`` builds it."""
    from mlsql.report.score_engines import DuckDBScores, PolarsScores, SparkScores
    from mlsql.report.scores import build_scores

    if options.labels is not None:
        raise UserError(
            "--labels: a score report's labels are those true or scored in the data; "
            "leave --labels out for a score column"
        )
    taken = score_table_columns()
    for column in prepared.by:
        if column in taken:
            raise UserError(
                f"--by {column!r}: a score report's tables have a column of that name "
                f"({', '.join(taken)}); group by a column of another name"
            )
    scores = {"duckdb": lambda: DuckDBScores(con), "polars": PolarsScores, "spark": SparkScores}
    settings = Settings(
        by=prepared.by,
        beta=options.beta,
        zero_division=options.zero_division,
        sample_weight=options.sample_weight,
    )
    params = options.params(prepared, sep)
    params.pop("labels", None)
    report = build_scores(
        scores[options.engine](),
        engine,
        frame,
        ACTUAL,
        PREDICTED,
        settings,
        source=source,
        params=params,
        curves=options.curves,
    )
    if options.resampling is None:
        return report
    from mlsql.report.intervals import add_intervals

    # what bootstrap resamples gets an interval; the report says why the rest has none
    return add_intervals(
        report, engine, frame, ACTUAL, PREDICTED, options.resampling, options.sample_weight
    )


def label_universe(values: str, kind: str) -> tuple[Any, ...]:
    """Parse ``--labels a,b,c`` for labels of ``kind`` ('text' or 'integer').

    Examples
    --------
    >>> label_universe("cat, dog", "text"), label_universe("3,1", "integer")
    (('cat', 'dog'), (3, 1))
    """
    items = [v.strip() for v in values.split(",")]
    if not values.strip() or any(v == "" for v in items):
        raise UserError(f"--labels must be a comma-separated list of labels; got {values!r}")
    if kind == "integer":
        try:
            return tuple(int(v) for v in items)
        except ValueError:
            raise UserError(
                f"--labels {values!r}: the label columns hold integers, so every label must be one"
            ) from None
    return tuple(items)


def zero_division_value(text: str) -> Any:
    """Parse ``--zero-division`` as the registry's ``zero_division`` takes it.

    Examples
    --------
    >>> zero_division_value("1"), zero_division_value("Diagnose")
    (1, 'diagnose')
    """
    return P.cli_value(P.ZERO_DIVISION, text, COMMAND)


def beta_value(text: str) -> float:
    """Parse ``--beta`` as the registry's ``beta`` takes it (a finite number > 0).

    Examples
    --------
    >>> beta_value("2")
    2.0
    """
    return float(P.cli_value(P.BETA, text, COMMAND))
