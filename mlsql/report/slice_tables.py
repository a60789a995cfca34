"""The weakest slices of a report as shown: verdicts, the note that says what they are,
and the rows of their table (the HTML page, the terminal text and Markdown use them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mlsql.report.model import Report

#: the weakest slices a report shows (its chart and tables; JSON holds them all)
MAX_SHOWN = 20
#: how a slice compares with the rest of the data (the measure is better higher)
VERDICTS = ("significantly worse", "significantly better", "not significant")


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
    >>> from mlsql.report.model import Report
    >>> from mlsql.report.slicing import SETTINGS
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
    >>> from mlsql.report.model import Report
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
