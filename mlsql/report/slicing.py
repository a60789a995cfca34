"""The weakest slices of a report (``mlsql.report(..., slices=...)``, ``mlsql eval --slices``).

The report ranks slices by its headline measure, micro F (F-beta with the
report's beta), on every value of each candidate column (numeric ones in
quantile bins), with the engine's own ``slices`` (:func:`mlsql.slices`,
``mlsql.polars.slices``, ``mlsql.spark.slices``) and the settings of
:data:`SETTINGS`: bootstrap intervals, the difference from the rest of the
data and Benjamini-Hochberg adjusted p-values. ``mlsql.slices`` itself
takes pairs of columns, other measures and other settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlsql._errors import MlsqlError
from mlsql.report.build import Settings
from mlsql.report.model import Report

#: how a report finds its slices (the defaults of ``mlsql.slices``, written out so the
#: report says what it used)
SETTINGS: dict[str, Any] = {
    "depth": 1,
    "n_bins": 4,
    "min_rows": 30,
    "n_resamples": 1000,
    "confidence": 0.95,
    "seed": 0,
    "adjust": "bh",
}

SLICES_MESSAGE = (
    "The 'slices' parameter of {func} must be a column name or a non-empty list of distinct "
    "column names other than actual, predicted and sample_weight. Got {got!r} instead."
)


def check_slices(slices: Any, func: str, reserved: Sequence[str | None]) -> tuple[str, ...] | None:
    """The candidate columns of ``slices`` (None: no slices asked for), checked.

    Examples
    --------
    >>> check_slices("country", "report", ["y", "p"]), check_slices(None, "report", [])
    (('country',), None)
    >>> check_slices(["y"], "report", ["y", "p"])
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'slices' parameter of report must be a column name or a \
non-empty list of distinct column names other than actual, predicted and sample_weight. \
Got ['y'] instead.
    """
    if slices is None:
        return None
    given = [slices] if isinstance(slices, str) else slices
    if (
        not isinstance(given, Sequence)
        or not given
        or not all(isinstance(c, str) and c for c in given)
        or len(set(given)) != len(given)
        or set(given) & set(reserved)
    ):
        raise MlsqlError(SLICES_MESSAGE.format(func=func, got=slices))
    return tuple(given)


def measure_of(beta: float) -> Any:
    """The measure slices are ranked by: the report's micro F (micro F-beta beside beta 1).

    Examples
    --------
    >>> measure_of(1.0), measure_of(2.0)
    ('micro_f1', ('micro_fbeta', {'beta': 2.0}))
    """
    return "micro_f1" if beta == 1 else ("micro_fbeta", {"beta": beta})


def overall(
    report: Report, engine: Any, frame: Any, actual: str, predicted: str, settings: Settings
) -> float | None:
    """The measure on all the data: the summary's micro F, or, in a report of groups,
    the report's summary table computed again without groups."""
    column = report.column("micro", "f")
    if report.group_columns:
        kwargs = {**settings.kwargs(), "by": None}
        summary, _ = engine.tables(frame, actual, predicted, kwargs, ("multilabel_report",))
    else:
        summary = report.summary
    value = summary[0].get(column) if summary else None
    return None if value is None else float(value)


def add_slices(
    report: Report,
    engine: Any,
    frame: Any,
    actual: str,
    predicted: str,
    settings: Settings,
    candidates: Sequence[str],
) -> Report:
    """``report`` with its weakest slices (``slices``, worst first) and how they were found.

    ``engine`` and ``frame`` are those the report was built from
    (:mod:`mlsql.report.engines`); ``frame`` holds the ``candidates`` columns
    and the label lists (one label each for one label per row, where micro F is
    the accuracy of the rows with both labels).

    Raises
    ------
    MlsqlError
        The engine has no ``slices`` (it says which engines have).
    """
    ops = getattr(engine, "ops", None)
    if ops is not None and not hasattr(ops.functions(), "slices"):
        raise MlsqlError(
            f"report: slices are not available on {engine.name} in this release; "
            "they are on duckdb, polars and spark"
        )
    weight = {} if settings.sample_weight is None else {"sample_weight": settings.sample_weight}
    rows = engine.resample(
        "slices",
        frame,
        actual,
        predicted,
        single=False,
        candidates=list(candidates),
        measure=measure_of(settings.beta),
        **SETTINGS,
        **weight,
    )
    report.slices = rows
    report.slicing = {
        "candidates": list(candidates),
        "measure": report.column("micro", "f"),
        "overall": overall(report, engine, frame, actual, predicted, settings),
        **SETTINGS,
    }
    return report
