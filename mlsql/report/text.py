"""The report as rich tables, for a terminal (or plain text when redirected)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.console import Group as RichGroup
from rich.table import Table
from rich.text import Text

from mlsql.report.averages import AVERAGES, MEASURES
from mlsql.report.numbers import fmt, key_text, sig

if TYPE_CHECKING:
    from mlsql.report.model import Group, Report

MEASURE_NAMES = {"precision": "precision", "recall": "recall", "jaccard": "Jaccard"}

#: terminal escape sequences (CSI, OSC and two-character ones, 7- or 8-bit) in a value
ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erasing
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC: titles, links
    r"|\x1b[ -/]*[0-~]?"  # any other escape
)
#: control characters left once the sequences are gone (C0, DEL, C1)
CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def shown(value: Any) -> str:
    r"""``value`` as text a terminal shows as itself: no escape sequences, no control characters.

    Tabs and line breaks become spaces (a cell stays one line); other control
    characters are dropped.

    Examples
    --------
    >>> shown("\x1b[31mred\x1b[0m\tlabel\x07")
    'red label'
    """
    text = ESCAPES.sub("", str(value))
    return CONTROLS.sub(lambda m: " " if m.group() in "\t\n\r" else "", text)


def cell(value: Any, digits: int | None = 4) -> Text:
    """A table cell or header shown as itself: never read as rich markup or emoji codes.

    Examples
    --------
    >>> cell("[red]y[/red]").plain, cell(0.5, 2).plain
    ('[red]y[/red]', '0.50')
    """
    return Text(shown(fmt(value, digits)))


def key_cell(value: Any) -> Text:
    """A group's or model's value as a cell: NULL spelt ``NULL`` (:func:`key_text`), never markup.

    Examples
    --------
    >>> key_cell(None).plain, key_cell("[/]").plain
    ('NULL', '[/]')
    """
    return Text(shown(key_text(value)))


#: grouped reports show every group in one comparison table, and details for this many at most
MAX_DETAIL_GROUPS = 5


def headline(report: Report, group: Group, digits: int = 4) -> Text:
    """``7 rows · 3 labels · micro F1 0.6957`` (micro F to ``digits`` places)."""
    s = group.summary
    text = Text()
    text.append(rows_text(s), style="bold")
    if s.get("n_labels") is not None:
        text.append(f" · {count(s.get('n_labels'), 'label')}", style="bold")
    text.append(f" · micro {report.f_name} ")
    text.append(fmt(s.get(report.column("micro", "f")), digits), style="bold green")
    return text


def rows_text(summary: dict[str, Any]) -> str:
    """``7 rows``; a weighted summary's with its total weight: ``5 rows, total weight 7.5``.

    Examples
    --------
    >>> rows_text({"n_rows": 7}), rows_text({"n_rows": 5, "total_weight": 7.5})
    ('7 rows', '5 rows, total weight 7.5')
    """
    text = count(summary.get("n_rows"), "row")
    if summary.get("total_weight") is not None:
        text += f", total weight {fmt(summary['total_weight'], None)}"
    return text


def count(n: Any, noun: str) -> str:
    """``1 row``, ``7 rows``.

    Examples
    --------
    >>> count(1, "row"), count(0, "label")
    ('1 row', '0 labels')
    """
    return f"{fmt(n)} {noun}{'' if n == 1 else 's'}"


def averages_table(report: Report, group: Group, digits: int) -> Table:
    """Rows precision, recall, F, Jaccard; columns micro, macro, weighted, samples."""
    s = group.summary
    present = [a for a in AVERAGES if any(report.column(a, m) in s for m in MEASURES)]
    table = Table(box=box.SIMPLE_HEAD, title=None, pad_edge=False)
    table.add_column("", style="bold")
    for average in present:
        table.add_column(average, justify="right")
    for measure in MEASURES:
        name = report.f_name if measure == "f" else MEASURE_NAMES[measure]
        table.add_row(name, *(cell(s.get(report.column(a, measure)), digits) for a in present))
    return table


def totals_table(report: Report, group: Group, digits: int) -> Table:
    """Hamming loss, subset accuracy and the other one-number measures of a group."""
    s = group.summary
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    for key, name in report.total_columns().items():
        if key in s:
            table.add_row(name, cell(s[key], digits))
    return table


def label_table(
    report: Report, rows: list[dict[str, Any]], digits: int, *, title: str | None, full: bool
) -> Table:
    """Labels with support, precision, recall, F (and the counts when ``full``)."""
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left", pad_edge=False)
    columns = ["label", "support"]
    if full:
        columns += ["tp", "fp", "fn", "tn"]
    columns += ["precision", "recall", report.f_key, "jaccard"]
    if full and any("accuracy" in r for r in rows):
        columns.append("accuracy")
    for c in columns:
        name = report.f_name if c == report.f_key else MEASURE_NAMES.get(c, c)
        table.add_column(name, justify="left" if c == "label" else "right")
    for r in rows:
        table.add_row(*(cell(r.get(c), digits) for c in columns))
    return table


def best_worst(report: Report, group: Group, digits: int) -> list[Any]:
    """The best and worst labels by F among labels with enough support, and how they were chosen."""
    best, worst = group.best_and_worst(min_support=report.min_support)
    if not best:
        return []
    note = Text(group.ranking_note(report.min_support), style="dim")
    if not worst:
        return [label_table(report, best, digits, title="labels, best to worst", full=False), note]
    return [
        label_table(report, best, digits, title="best labels", full=False),
        label_table(report, worst, digits, title="worst labels", full=False),
        note,
    ]


def comparison_columns(report: Report) -> list[tuple[str, str]]:
    """(summary column, display name) of the table comparing groups."""
    f = report.f_name
    columns = [
        ("n_rows", "rows"),
        ("total_weight", "total weight"),
        ("n_labels", "classes" if report.single_label else "labels"),
        (report.column("micro", "f"), "accuracy" if report.single_label else f"micro {f}"),
        (report.column("macro", "f"), f"macro {f}"),
        (report.column("weighted", "f"), f"weighted {f}"),
        (report.column("samples", "f"), f"samples {f}"),
        ("cohen_kappa_score", "kappa"),
        ("micro_average_precision", "micro AP"),
        ("macro_average_precision", "macro AP"),
        ("macro_roc_auc", "macro ROC AUC"),
        ("hamming_loss", "Hamming loss"),
        ("subset_accuracy", "subset acc."),
    ]
    return [(k, n) for k, n in columns if any(k in s for s in report.summary)]


def comparison_table(report: Report, digits: int) -> Table:
    """One row per group: its key and the headline measures."""
    table = Table(
        box=box.SIMPLE_HEAD,
        title="groups",
        title_justify="left",
        pad_edge=False,
        collapse_padding=True,
    )
    columns = comparison_columns(report)
    for c in report.group_columns:
        table.add_column(cell(c))
    rows = [[fmt(group.summary.get(k), digits) for k, _ in columns] for group in report.groups()]
    for i, (_, name) in enumerate(columns):
        # a heading folds between its words, never inside one ("weigh…" at 80 columns),
        # and a number is never cut
        widest = max([*map(len, name.split()), *(len(row[i]) for row in rows)])
        table.add_column(name, justify="right", min_width=widest)
    for group, cells in zip(report.groups(), rows, strict=True):
        table.add_row(*(key_cell(group.key[c]) for c in report.group_columns), *map(Text, cells))
    return table


def print_whole(console: Console, table: Table) -> None:
    """Print ``table`` with every column whole: wider than a narrow terminal (whose lines then
    wrap) rather than cutting a heading or a number."""
    from rich.measure import Measurement

    need = Measurement.get(console, console.options, table).minimum
    console.print(table, width=max(console.width, need), crop=False)


def comparison_intervals(report: Report, digits: int) -> Table | None:
    """The intervals of the groups table's measures: one row per group and measure."""
    names = dict(comparison_columns(report))
    rows = [
        (group, name, row)
        for group in report.groups()
        for column, name in names.items()
        if (row := report.interval(group.key, column)) is not None
    ]
    if not rows:
        return None
    table = Table(
        box=box.SIMPLE_HEAD,
        title=f"groups: {interval_title(report)}",
        title_justify="left",
        pad_edge=False,
    )
    for c in report.group_columns:
        table.add_column(cell(c))
    table.add_column("measure")
    for c in INTERVAL_COLUMNS[1:]:
        table.add_column(c.replace("_", " "), justify="right")
    for group, name, row in rows:
        table.add_row(
            *(key_cell(group.key[c]) for c in report.group_columns),
            cell(name),
            *(Text(shown(sig(row[c], digits))) for c in INTERVAL_COLUMNS[1:]),
        )
    return table


def with_interval(value: Any, interval: dict[str, Any] | None, digits: int) -> str:
    """``0.6957 [0.4993, 0.8571]``: a value and its interval, when it has one.

    Examples
    --------
    >>> with_interval(0.69565, {"low": 0.5, "high": 0.85714}, 2), with_interval(7, None, 2)
    ('0.70 [0.50, 0.86]', '7')
    """
    if interval is None:
        return fmt(value, digits)
    low, high = interval["low"], interval["high"]
    return f"{sig(value, digits)} [{sig(low, digits)}, {sig(high, digits)}]"


def interval_title(report: Report) -> str:
    """``95% intervals, 1000 resamples, seed 0``."""
    r = report.resampling or {}
    return (
        f"{r.get('confidence', 0) * 100:g}% bootstrap intervals, "
        f"{r.get('n_resamples')} resamples, seed {r.get('seed')}"
    )


#: the columns of a group's interval table
INTERVAL_COLUMNS = ("measure", "estimate", "low", "high", "std_error")


def interval_table(report: Report, group: Group, digits: int) -> Table | None:
    """The group's measures with their bootstrap interval and standard error."""
    rows = report.group_intervals(group.key)
    if not rows:
        return None
    table = Table(
        box=box.SIMPLE_HEAD, title=interval_title(report), title_justify="left", pad_edge=False
    )
    for c in INTERVAL_COLUMNS:
        table.add_column(c.replace("_", " "), justify="left" if c == "measure" else "right")
    for r in rows:
        table.add_row(*(Text(shown(sig(r[c], digits))) for c in INTERVAL_COLUMNS))
    return table


def _table(header: list[str], rows: list[list[Any]], digits: int, title: str | None) -> Table:
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left", pad_edge=False)
    for i, name in enumerate(header):
        table.add_column(cell(name), justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*(cell(v, digits) for v in row))
    return table


def score_parts(report: Report, group: Group, digits: int, *, per_label: bool) -> list[Any]:
    """A score report's group: headline, averages, per-label thresholds, calibration bins."""
    from mlsql.report import score_tables as ST

    line = Text()
    for i, (name, value) in enumerate(ST.headline(report, group)):
        line.append(" · " if i else "")
        line.append(f"{shown(name)} ")
        line.append(shown(fmt(value, digits)), style="bold green" if i == 2 else "bold")
    limit = None if per_label else ST.SHOWN_LABELS
    parts: list[Any] = [line, _table(*ST.averages(report, group), digits, None)]
    parts += [
        Text(""),
        Text(shown(ST.thresholds_title(report, group, limit=limit)), style="dim"),
        _table(*ST.thresholds(report, group, limit=limit), digits, None),
    ]
    if group.calibration is not None:
        parts += [Text(""), _table(*ST.calibration(group), digits, "calibration (pooled labels)")]
    return parts


def by_support(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Label rows, most frequent first (then by label)."""
    return sorted(rows, key=lambda r: (-(r.get("support") or 0), str(r["label"])))


def render(report: Report, console: Console, *, digits: int = 4, per_label: bool = False) -> None:
    """Print ``report`` on ``console``."""
    title = Text()
    title.append("mlsql eval ", style="bold")
    title.append(shown(report.source))
    title.append(f" · engine {report.engine}", style="dim")
    console.print(title)
    groups = list(report.groups())
    if len(groups) > 1:
        print_whole(console, comparison_table(report, digits))
        intervals = comparison_intervals(report, digits)
        if intervals is not None:
            console.print(intervals)
    if len(groups) > MAX_DETAIL_GROUPS and not per_label:
        console.print(
            Text(
                f"details of the {len(groups)} groups: --format html, json or markdown "
                "(--per-label shows every group's labels)",
                style="dim",
            )
        )
        groups = []
    for group in groups:
        parts: list[Any] = []
        if report.group_columns:
            parts.append(Text(f"\n{shown(group.title)}", style="bold underline"))
        if report.scores:
            parts += score_parts(report, group, digits, per_label=per_label)
            console.print(RichGroup(*parts))
            continue
        parts.append(headline(report, group, digits))
        if report.single_label:
            parts.append(
                Text(
                    f"one label per row: micro {report.f_name} equals accuracy; "
                    "the per-label rows are per class",
                    style="dim",
                )
            )
        if group.confusion is not None:
            parts.append(
                Text(
                    f"{len(group.confusion.classes)} classes, {len(group.confusion.cells)} "
                    "non-zero confusion cells (--format html draws them, json lists them)",
                    style="dim",
                )
            )
        if per_label:
            parts.append(
                label_table(report, by_support(group.labels or []), digits, title=None, full=True)
            )
        else:
            parts += [averages_table(report, group, digits), totals_table(report, group, digits)]
            intervals = interval_table(report, group, digits)
            if intervals is not None:
                parts += [Text(""), intervals]
            for table in best_worst(report, group, digits):
                parts += [Text(""), table]
        console.print(RichGroup(*parts))
    if report.slices is not None:
        console.print(slices_parts(report, digits))
    for note in report.notes:
        console.print(Text(f"note: {shown(note)}", style="yellow"))


def slices_parts(report: Report, digits: int) -> RichGroup:
    """The weakest slices: what they are, their table (the worst first) and the whole data."""
    from mlsql.report import slice_tables

    header, rows, tail = slice_tables.table(report, digits)
    parts: list[Any] = [
        Text("\nweakest slices", style="bold underline"),
        Text(shown(slice_tables.note(report)), style="dim"),
    ]
    if rows:
        table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
        for i, name in enumerate(header):
            table.add_column(name, justify="left" if i == 0 else "right")
        for row in rows:
            table.add_row(*(Text(shown(v)) for v in row))
        parts.append(table)
    parts.append(Text(shown(tail)))
    return RichGroup(*parts)


def to_text(report: Report, *, digits: int = 4, per_label: bool = False) -> str:
    """The terminal report as plain text (what ``print(report)`` shows)."""
    import io

    out = io.StringIO()
    render(
        report, Console(file=out, width=120, color_system=None), digits=digits, per_label=per_label
    )
    return out.getvalue()
