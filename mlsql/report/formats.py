"""The report as JSON, CSV and Markdown text."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from mlsql.report.averages import AVERAGES, MEASURES
from mlsql.report.numbers import finite_or_none, fmt, key_text, sig
from mlsql.report.text import (
    INTERVAL_COLUMNS,
    by_support,
    comparison_columns,
    count,
    interval_title,
    rows_text,
    shown,
)

if TYPE_CHECKING:
    from mlsql.report.model import Group, Report


def to_json(report: Report) -> str:
    """Every number at full precision; NaN (and infinities) as ``null``.

    Examples
    --------
    >>> from mlsql.report.model import Report
    >>> print(to_json(Report("x", "duckdb", {}, (), [{"micro_f1": float("nan")}]))[:1])
    {
    """
    return json.dumps(finite_or_none(report.to_dict()), indent=2, default=str) + "\n"


#: first characters that make a spreadsheet read a cell as a formula (OWASP, CSV injection)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: Any) -> Any:
    """A CSV cell no spreadsheet runs: text that starts like a formula gets a leading ``'``.

    Only text is guarded: numbers (a negative one too) stay numbers.

    Examples
    --------
    >>> csv_safe("=HYPERLINK(1)"), csv_safe("-1"), csv_safe(-1), csv_safe("cat")
    ("'=HYPERLINK(1)", "'-1", -1, 'cat')
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(rows: Iterable[Sequence[Any]]) -> str:
    r"""``rows`` as CSV text, one ``\n``-ended line each.

    A field holding a carriage return is quoted like one holding a line break
    (Python's writer quotes only the characters of its line terminator, so a
    bare ``\r`` would end the record for a reader).

    Examples
    --------
    >>> csv_text([["a\rb", "c"], [1, None]])
    '"a\rb",c\n1,\n'
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    lines = []
    for row in rows:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(row)
        lines.append(buffer.getvalue()[:-2] + "\n")
    return "".join(lines)


def _csv(rows: list[dict[str, Any]]) -> str:
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    header = [csv_safe(c) for c in columns]
    return csv_text([header, *([_csv_cell(row.get(c)) for c in columns] for row in rows)])


def _csv_cell(value: Any) -> Any:
    if isinstance(value, float):
        return fmt(value, None)
    return "" if value is None else csv_safe(value)


def to_csv(report: Report, *, per_label: bool = False) -> str:
    """The summary (one row per group), or with ``per_label`` the label table.

    Examples
    --------
    >>> from mlsql.report.model import Report
    >>> print(to_csv(Report("x", "duckdb", {}, (), [{"n_rows": 7, "micro_f1": 0.6956521739130435}])))
    n_rows,micro_f1
    7,0.6956521739130435
    <BLANKLINE>
    """
    if per_label:
        return _csv(report.labels or [])
    if not report.intervals:
        return _csv(report.summary)
    rows = []
    for group in report.groups():  # each measure's interval beside it: micro_f1_low, ...
        row = dict(group.summary)
        for iv in report.group_intervals(group.key):
            row.update({f"{iv['measure']}_{c}": iv[c] for c in INTERVAL_COLUMNS[2:]})
        rows.append(row)
    return _csv(rows)


#: characters Markdown (or the HTML it becomes) would read as syntax, and their escapes
MD_ESCAPES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "\\": "\\\\",
    "|": "\\|",
    "`": "\\`",
    "*": "\\*",
    "_": "\\_",
    "[": "\\[",
    "]": "\\]",
    "\n": " ",
    "\r": " ",
}


def md_escape(text: Any) -> str:
    """``text`` shown as itself in Markdown: no HTML, links, emphasis, code or table cells,
    and no terminal escape sequences or control characters (:func:`~mlsql.report.text.shown`).

    Examples
    --------
    >>> md_escape("<img src=x onerror=alert(1)>|`x`")
    '&lt;img src=x onerror=alert(1)&gt;\\\\|\\\\`x\\\\`'
    """
    return "".join(MD_ESCAPES.get(ch, ch) for ch in shown(text))


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(md_escape(c) for c in cells) + " |"


def _md_table(header: list[str], rows: list[list[str]], right_from: int = 1) -> list[str]:
    align = ["---" if i < right_from else "---:" for i in range(len(header))]
    align_row = "| " + " | ".join(align) + " |"
    return [_md_row(header), align_row, *(_md_row(r) for r in rows), ""]


def to_markdown(report: Report, *, digits: int = 4, per_label: bool = False) -> str:
    """Markdown: per group, the averages, the one-number measures and the labels.

    Every label, name and value is escaped (:func:`md_escape`): Markdown shown
    on a web page is HTML.

    Examples
    --------
    >>> from mlsql.report.model import Report
    >>> page = to_markdown(Report("x", "duckdb", {}, (), [{"n_rows": 7, "micro_f1": 0.5}]))
    >>> page.splitlines()[2]
    '7 rows, – labels, micro F1 **0.5000**'
    """
    f_name = report.f_name
    lines = [f"## mlsql eval: {md_escape(report.source)}", ""]
    groups = list(report.groups())
    if len(groups) > 1:
        columns = comparison_columns(report)
        header = [*report.group_columns, *(n for _, n in columns)]
        rows = [
            [
                *(key_text(g.key[c]) for c in report.group_columns),
                *(fmt(g.summary.get(k), digits) for k, _ in columns),
            ]
            for g in groups
        ]
        lines += ["### groups", "", *_md_table(header, rows, len(report.group_columns))]
    for group in groups:
        s = group.summary
        if report.group_columns:
            lines += [f"### {md_escape(group.title)}", ""]
        if report.scores:
            lines += _md_scores(report, group, digits, per_label=per_label)
            continue
        lines += [
            f"{rows_text(s)}, {count(s.get('n_labels'), 'label')}, "
            f"micro {md_escape(f_name)} **{fmt(s.get(report.column('micro', 'f')), digits)}**",
            "",
        ]
        present = [a for a in AVERAGES if any(report.column(a, m) in s for m in MEASURES)]
        names = {"precision": "precision", "recall": "recall", "f": f_name, "jaccard": "Jaccard"}
        rows = [
            [names[m], *(fmt(s.get(report.column(a, m)), digits) for a in present)]
            for m in MEASURES
        ]
        lines += _md_table(["", *present], rows)
        totals = [[n, fmt(s[k], digits)] for k, n in report.total_columns().items() if k in s]
        if totals:
            lines += _md_table(["measure", "value"], totals)
        intervals = report.group_intervals(group.key)
        if intervals:
            cells = [[sig(r[c], digits) for c in INTERVAL_COLUMNS] for r in intervals]
            lines += [f"**{md_escape(interval_title(report))}**", ""]
            lines += _md_table([c.replace("_", " ") for c in INTERVAL_COLUMNS], cells)
        if group.labels:
            lines += _md_labels(report, group, digits, per_label=per_label)
    if report.slices is not None:
        from mlsql.report import slice_tables

        header, rows, tail = slice_tables.table(report, digits)
        lines += ["### weakest slices", "", md_escape(slice_tables.note(report)), ""]
        if rows:
            lines += _md_table(header, rows)  # its cells are escaped
        lines += [md_escape(tail), ""]
    for note in report.notes:
        lines += [f"> note: {md_escape(note)}", ""]
    return "\n".join(lines)


def _md_scores(report: Report, group: Group, digits: int, *, per_label: bool) -> list[str]:
    """A score report's group: headline, averages, per-label thresholds, calibration bins."""
    from mlsql.report import score_tables as ST

    def table(header: list[str], rows: list[list[Any]]) -> list[str]:
        return _md_table(header, [[fmt(v, digits) for v in row] for row in rows])

    limit = None if per_label else ST.SHOWN_LABELS
    line = ", ".join(
        f"{md_escape(name)} **{md_escape(fmt(v, digits))}**"
        for name, v in ST.headline(report, group)
    )
    lines = [line, "", *table(*ST.averages(report, group))]
    lines += [f"**{md_escape(ST.thresholds_title(report, group, limit=limit))}**", ""]
    lines += table(*ST.thresholds(report, group, limit=limit))
    if group.calibration is not None:
        lines += ["**calibration (pooled labels)**", "", *table(*ST.calibration(group))]
    return lines


def _md_labels(report: Report, group: Group, digits: int, *, per_label: bool) -> list[str]:
    """The label table (``per_label``), or the best and the worst labels as two titled tables."""
    columns = ["label", "support", "precision", "recall", report.f_key, "jaccard"]
    if per_label:
        columns[2:2] = ["tp", "fp", "fn", "tn"]
    header = [report.f_name if c == report.f_key else c for c in columns]

    def table(title: str, rows: list[dict[str, Any]]) -> list[str]:
        cells = [[fmt(r.get(c), digits) for c in columns] for r in rows]
        return [f"**{title}**", "", *_md_table(header, cells)]

    if per_label:
        return table("labels, by support", by_support(group.labels or []))
    best, worst = group.best_and_worst(min_support=report.min_support)
    note = [f"_{md_escape(group.ranking_note(report.min_support))}_", ""]
    if not worst:
        return table("labels, best to worst", best) + note
    return table("best labels", best) + table("worst labels", worst) + note
