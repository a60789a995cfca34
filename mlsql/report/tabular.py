"""Any query result (columns and rows) as a rich table, JSON, CSV or Markdown."""

from __future__ import annotations

import json
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from mlsql.report.numbers import finite_or_none, fmt
from mlsql.report.text import cell as shown_cell


def _cell(value: Any, digits: int | None = None) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_cell(v, digits) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_cell(v, digits)}" for k, v in value.items()) + "}"
    if isinstance(value, str):
        return value
    return fmt(value, digits)


def print_table(
    console: Console,
    columns: list[str],
    rows: list[tuple[Any, ...]],
    *,
    more: bool = False,
    digits: int | None = None,
) -> None:
    """Print the result as a table (``OK`` for a statement that returns nothing).

    ``more`` says the result had rows beyond those given; floats are shown to
    ``digits`` places (``None``: every digit).
    """
    if not columns:
        console.print("OK")
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for i, name in enumerate(columns):
        numeric = any(isinstance(r[i], (int, float)) and not isinstance(r[i], bool) for r in rows)
        table.add_column(shown_cell(name), justify="right" if numeric else "left")
    for row in rows:
        table.add_row(*(shown_cell(_cell(v, digits)) for v in row))
    console.print(table)
    if more:
        console.print(
            f"first {len(rows)} rows shown; --max-rows 0 shows all, --format csv writes all",
            style="dim",
        )
    else:
        console.print(f"{len(rows)} row{'s' if len(rows) != 1 else ''}", style="dim")


def _csv_value(value: Any) -> Any:
    """A CSV cell: text guarded against formulas (:func:`~mlsql.report.formats.csv_safe`),
    numbers as numbers, lists and structs as their text."""
    from mlsql.report.formats import csv_safe

    if value is None:
        return ""
    return csv_safe(value) if isinstance(value, str) else _cell(value)


def render(format_: str, columns: list[str], rows: list[tuple[Any, ...]]) -> str:
    """The result as ``json`` (a list of objects), ``csv`` or ``markdown`` text."""
    if format_ == "json":
        records = [dict(zip(columns, row, strict=True)) for row in rows]
        return json.dumps(finite_or_none(records), indent=2, default=str) + "\n"
    from mlsql.report.formats import csv_safe, csv_text, md_escape

    if format_ == "csv":
        header = [csv_safe(c) for c in columns]
        return csv_text([header, *([_csv_value(v) for v in row] for row in rows)])

    lines = ["| " + " | ".join(md_escape(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(md_escape(_cell(v)) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
