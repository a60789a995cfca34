"""Compute a :class:`~mlsql.report.model.Report` on the engine the user chose.

Every engine gets the same prepared data (``Prepared.frame``: group columns, then
``actual`` and ``predicted`` label lists, read by the engine itself) and is asked
for mlsql's two table functions, ``multilabel_report`` and ``label_metrics``.
The CLI computes no measure itself.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import duckdb

from mlsql.cli.errors import UserError
from mlsql.cli.sources import ACTUAL, PREDICTED, PREPARED, Prepared
from mlsql.report.model import Report

ENGINE_MODULES = {"duckdb": "mlsql", "polars": "mlsql.polars", "spark": "mlsql.spark"}
#: the table functions a report is built from: one row per group, one row per (group, label)
TABLES = ("multilabel_report", "label_metrics")


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

    def params(self, prepared: Prepared, sep: str | None) -> dict[str, Any]:
        """The parameters as a report shows them."""
        zd = self.zero_division
        return {
            "actual": prepared.actual,
            "predicted": prepared.predicted,
            "by": list(prepared.by),
            "beta": self.beta,
            "zero_division": "nan" if isinstance(zd, float) and math.isnan(zd) else zd,
            "labels": list(self.labels) if self.labels is not None else None,
            "sep": sep,
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


def _functions(module: ModuleType, engine: str, wanted: tuple[str, ...]) -> list[Any]:
    """The wanted table functions of ``module`` (None for those not wanted), in TABLES order."""
    out = []
    for name in TABLES:
        fn = getattr(module, name, None) if name in wanted else None
        if name in wanted and fn is None:
            raise UserError(
                f"--engine {engine} needs {module.__name__}.{name}, which this installation "
                "of mlsql does not have"
            )
        out.append(fn)
    return out


def _kwargs(prepared: Prepared, options: Options) -> dict[str, Any]:
    return {
        "labels": list(options.labels) if options.labels is not None else None,
        # beta=None keeps the F columns F1 (named *_f1); any other beta names them *_fbeta
        "beta": None if options.beta == 1 else options.beta,
        "zero_division": options.zero_division,
        "by": list(prepared.by) or None,
    }


# ---------------------------------------------------------------- engines


def _duckdb(con: duckdb.DuckDBPyConnection, prepared: Prepared, options: Options) -> tuple:
    import mlsql

    kwargs = _kwargs(prepared, options)
    return tuple(
        _relation_rows(fn(con, PREPARED, ACTUAL, PREDICTED, **kwargs)) if fn else None
        for fn in _functions(mlsql, "duckdb", options.tables)
    )


def _relation_rows(rel: duckdb.DuckDBPyRelation) -> list[dict[str, Any]]:
    columns = rel.columns
    return [dict(zip(columns, row, strict=True)) for row in rel.fetchall()]


def _polars(con: duckdb.DuckDBPyConnection, prepared: Prepared, options: Options) -> tuple:
    functions = _functions(_module("polars"), "polars", options.tables)
    frame = prepared.frame  # a LazyFrame over the files (mlsql.cli.polars_input)
    kwargs = _kwargs(prepared, options)
    return tuple(
        _polars_rows(fn(frame, ACTUAL, PREDICTED, **kwargs)) if fn else None for fn in functions
    )


def _polars_rows(frame: Any) -> list[dict[str, Any]]:
    """Rows of a Polars DataFrame (or LazyFrame)."""
    from mlsql.cli.polars_input import collect

    return collect(frame).to_dicts()


def _spark(con: duckdb.DuckDBPyConnection, prepared: Prepared, options: Options) -> tuple:
    functions = _functions(_module("spark"), "spark", options.tables)
    frame = prepared.frame  # a DataFrame read by Spark (mlsql.cli.spark_input)
    kwargs = _kwargs(prepared, options)
    return tuple(
        [r.asDict() for r in fn(frame, ACTUAL, PREDICTED, **kwargs).collect()] if fn else None
        for fn in functions
    )


ENGINES = {"duckdb": _duckdb, "polars": _polars, "spark": _spark}


def _sorted_rows(rows: list[dict[str, Any]], keys: tuple[str, ...]) -> list[dict[str, Any]]:
    def key(row: dict[str, Any]) -> tuple:
        return tuple((row[k] is None, str(type(row[k])), row[k]) for k in keys)

    try:
        return sorted(rows, key=key)
    except TypeError:
        return sorted(rows, key=lambda r: tuple(str(r[k]) for k in keys))


def evaluate(
    con: duckdb.DuckDBPyConnection,
    prepared: Prepared,
    options: Options,
    *,
    source: str,
    sep: str | None = None,
) -> Report:
    """Run ``multilabel_report`` and ``label_metrics`` on the chosen engine."""
    summary, labels = ENGINES[options.engine](con, prepared, options)
    by = prepared.by
    summary = _sorted_rows(summary or [], by)
    labels = _sorted_rows(labels, (*by, "label")) if labels is not None else None
    report = Report(
        source=source,
        engine=options.engine,
        params=options.params(prepared, sep),
        group_columns=by,
        summary=summary,
        labels=labels,
        single_label=prepared.single_label,
    )
    if prepared.single_label:
        _add_single_label(con, prepared, options, report)
    return report


def _add_single_label(
    con: duckdb.DuckDBPyConnection, prepared: Prepared, options: Options, report: Report
) -> None:
    """Accuracy, kappa, MCC into each summary row; the confusion matrices."""
    from mlsql.cli import single

    found = single.evaluate(con, prepared, options.engine, options.labels)
    if found is None:
        report.notes.append(
            f"accuracy, Cohen's kappa, MCC and the confusion matrix need the single-label "
            f"functions of mlsql.{options.engine}, which this installation does not have"
        )
        return
    measures, report.confusion = found
    for row in report.summary:
        row.update(measures.get(tuple(row[c] for c in prepared.by), {}))


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
    """Parse ``--zero-division``: 0, 1, nan, diagnose or ignore.

    Examples
    --------
    >>> zero_division_value("1"), zero_division_value("Diagnose")
    (1, 'diagnose')
    """
    value = text.strip().lower()
    if value in ("0", "0.0"):
        return 0
    if value in ("1", "1.0"):
        return 1
    if value == "nan":
        return float("nan")
    if value in ("diagnose", "ignore"):
        return value
    raise UserError(f"--zero-division must be one of 0, 1, nan, diagnose, ignore; got {text!r}")


def beta_value(text: str) -> float:
    """Parse ``--beta``: a finite number > 0.

    Examples
    --------
    >>> beta_value("2")
    2.0
    """
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise UserError(f"--beta must be a finite number > 0; got {text!r}")
    return value
