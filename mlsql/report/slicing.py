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

#: the weakest slices a report shows (its chart and tables; JSON holds them all)
MAX_SHOWN = 20
#: how a slice compares with the rest of the data (the measure is better higher)
VERDICTS = ("significantly worse", "significantly better", "not significant")

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
            "they are on duckdb and polars"
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


def verdict(row: dict[str, Any]) -> str:
    """How a slice compares with the rest of the data (micro F: better higher).

    Examples
    --------
    >>> verdict({"significant": True, "difference": -0.2}), verdict({"significant": False})
    ('significantly worse', 'not significant')
    """
    if not row.get("significant"):
        return VERDICTS[2]
    return VERDICTS[0] if (row.get("difference") or 0) < 0 else VERDICTS[1]


def note(report: Report) -> str:
    """What the weakest slices are, in words (every format says it).

    Examples
    --------
    >>> r = Report("x", "duckdb", {}, (), [], slices=[], slicing={
    ...     "candidates": ["lang"], "measure": "micro_f1", "overall": 0.5, **SETTINGS})
    >>> print(note(r))  # doctest: +NORMALIZE_WHITESPACE
    micro F1 on each value of lang (numeric columns in 4 quantile bins; slices of at least
    30 rows), the worst first, with 95% bootstrap intervals (1000 resamples). Significant:
    the slice's micro F1 differs from that of the rest of the data, its p-value adjusted
    for the number of slices (Benjamini-Hochberg) being at most 0.05. It does not say why,
    and slices of different columns overlap.
    """
    s = report.slicing or {}
    adjust = "Benjamini-Hochberg" if s.get("adjust") == "bh" else "Holm"
    measure = f"micro {report.f_name}"
    return (
        f"{measure} on each value of {', '.join(s.get('candidates', []))} (numeric columns in "
        f"{s.get('n_bins')} quantile bins; slices of at least {s.get('min_rows')} rows), the "
        f"worst first, with {s.get('confidence', 0):.0%} bootstrap intervals "
        f"({s.get('n_resamples')} resamples). Significant: the slice's {measure} differs from "
        "that of the rest of the data, its p-value adjusted for the number of slices "
        f"({adjust}) being at most {1 - s.get('confidence', 0):.2g}. It does not say why, and "
        "slices of different columns overlap."
    )


def table(report: Report, digits: int) -> tuple[list[str], list[list[str]], str]:
    """The weakest slices as text cells: header, the :data:`MAX_SHOWN` worst rows, and the
    line under them (the whole data's value; how many are left out).

    Examples
    --------
    >>> r = Report("x", "duckdb", {}, (), [], slicing={"overall": 0.75}, slices=[
    ...     {"slice": "lang = 'de'", "rows": 40, "estimate": 0.5, "low": 0.25, "high": 0.625,
    ...      "difference": -0.5, "p_adjusted": 0.002, "significant": True}])
    >>> header, rows, tail = table(r, 3)
    >>> rows, tail
    ([["lang = 'de'", '40', '0.500', '0.250', '0.625', '-0.500', '0.00200', 'worse']], 'All the data: micro F1 0.750.')
    """
    from mlsql.report.numbers import fmt, sig

    measure = f"micro {report.f_name}"
    header = ["slice", "rows", measure, "low", "high", "difference", "adjusted p", "verdict"]
    keys = ["rows", "estimate", "low", "high", "difference", "p_adjusted"]
    found = report.slices or []
    rows = [
        [
            str(r["slice"]),
            *(sig(r.get(k), digits) for k in keys),
            verdict(r).replace("significantly ", ""),
        ]
        for r in found[:MAX_SHOWN]
    ]
    overall = (report.slicing or {}).get("overall")
    tail = f"All the data: {measure} {fmt(overall, digits)}."
    if not found:
        tail += " No slice has enough rows."
    elif len(found) > MAX_SHOWN:
        tail += f" The {MAX_SHOWN} worst of {len(found)} slices."
    return header, rows, tail
