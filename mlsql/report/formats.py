"""The report as JSON, CSV and Markdown text."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from mlsql.report.model import AVERAGES, MEASURES, Report
from mlsql.report.numbers import finite_or_none, fmt
from mlsql.report.text import by_support, count


def to_json(report: Report) -> str:
    """Every number at full precision; NaN (and infinities) as ``null``.

    Examples
    --------
    >>> from mlsql.report.model import Report
    >>> print(to_json(Report("x", "duckdb", {}, (), [{"micro_f1": float("nan")}]))[:1])
    {
    """
    return json.dumps(finite_or_none(report.to_dict()), indent=2, default=str) + "\n"


def _csv(rows: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    columns: list[str] = []
    for row in rows:
        columns += [c for c in row if c not in columns]
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_cell(v) for k, v in row.items()})
    return out.getvalue()


def _csv_cell(value: Any) -> Any:
    if isinstance(value, float):
        return fmt(value, None)
    return "" if value is None else value


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
    return _csv(report.summary)


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def _md_table(header: list[str], rows: list[list[str]], right_from: int = 1) -> list[str]:
    align = ["---" if i < right_from else "---:" for i in range(len(header))]
    return [_md_row(header), _md_row(align), *(_md_row(r) for r in rows), ""]


def to_markdown(report: Report, *, digits: int = 4, per_label: bool = False) -> str:
    """Markdown: per group, the averages, the one-number measures and the labels.

    Examples
    --------
    >>> from mlsql.report.model import Report
    >>> page = to_markdown(Report("x", "duckdb", {}, (), [{"n_rows": 7, "micro_f1": 0.5}]))
    >>> page.splitlines()[2]
    '7 rows, – labels, micro F1 **0.5**'
    """
    f_name = report.f_name
    lines = [f"## mlsql eval: `{report.source}`", ""]
    for group in report.groups():
        s = group.summary
        if report.group_columns:
            lines += [f"### {group.title}", ""]
        lines += [
            f"{count(s.get('n_rows'), 'row')}, {count(s.get('n_labels'), 'label')}, "
            f"micro {f_name} **{fmt(s.get(report.column('micro', 'f')), None)}**",
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
        if group.labels:
            columns = ["label", "support", "precision", "recall", report.f_key, "jaccard"]
            if per_label:
                columns[2:2] = ["tp", "fp", "fn", "tn"]
                rows_ = by_support(group.labels)
                title = "labels, by support"
            else:
                best, worst = group.best_and_worst()
                rows_ = best + worst
                title = "best and worst labels" if worst else "labels, best to worst"
            header = [f_name if c == report.f_key else c for c in columns]
            lines.append(f"**{title}**")
            lines.append("")
            lines += _md_table(header, [[fmt(r.get(c), digits) for c in columns] for r in rows_])
    for note in report.notes:
        lines += [f"> note: {note}", ""]
    return "\n".join(lines)
