"""The report as one self-contained HTML page: inline CSS and SVG, no scripts, no requests.

Charts are Vega-Lite (altair) rendered to SVG by vl-convert (:mod:`mlsql.report.charts`).

The page holds, per group, the averages table, the one-number measures, the
per-label precision/recall/F bars sorted by support, a label frequency
against F scatter, the confusion matrix as a heatmap for single-label data,
and the label table (folded); a score report's group shows its charts before
its tables. A label table shows the most and the least frequent labels
(:data:`~mlsql.report.score_tables.PAGE_LABELS` each) and says how many lie
between, so a page of thousands of labels stays small.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Any

from mlsql._version import __version__
from mlsql.report import charts, slice_tables
from mlsql.report import score_tables as ST
from mlsql.report.averages import AVERAGES, MEASURES
from mlsql.report.numbers import fmt, key_text, ratio, sig
from mlsql.report.text import INTERVAL_COLUMNS, by_support, interval_title, with_interval

if TYPE_CHECKING:
    from mlsql.report.model import Group, Report


def esc(value: Any) -> str:
    """Text safe inside HTML, attributes included."""
    return escape(str(value), quote=True)


CSS = """
:root { --ink:#1f2933; --muted:#6b7280; --line:#e3e6ea; --panel:#f7f8fa; --accent:#54a24b; }
* { box-sizing: border-box; }
body { margin: 0; background: #fff; color: var(--ink);
  font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Helvetica, Arial, sans-serif; }
main { max-width: 860px; margin: 0 auto; padding: 28px 24px 48px; }
header h1 { font-size: 22px; margin: 0 0 4px; }
header .source { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 13px;
  color: var(--muted); word-break: break-all; }
.params { margin: 10px 0 0; display: flex; flex-wrap: wrap; gap: 6px; }
.params span { background: var(--panel); border: 1px solid var(--line); border-radius: 999px;
  padding: 1px 10px; font-size: 12px; color: var(--muted); }
.params b { color: var(--ink); font-weight: 600; }
section.group { margin-top: 30px; }
section.group > h2 { font-size: 18px; margin: 0 0 12px; padding-bottom: 6px;
  border-bottom: 2px solid var(--line); }
h3 { font-size: 15px; margin: 26px 0 8px; }
.cards { display: grid; grid-template-columns: repeat(4, 1fr); gap: 10px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 10px 12px; }
.card .k { font-size: 12px; color: var(--muted); }
.card .v { font-size: 20px; font-weight: 650; font-variant-numeric: tabular-nums; }
.card.main { grid-column: span 2; border-color: #b7dcb3; background: #f1f8f0; }
.card.main .v { font-size: 22px; color: #2f6b2a; }
.twocol table { width: 100%; }
.twocol td:first-child { word-break: break-all; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
table.summary { width: 100%; }
th, td { padding: 6px 10px; text-align: right; border-bottom: 1px solid var(--line); }
th { font-size: 12px; color: var(--muted); font-weight: 600; text-transform: uppercase;
  letter-spacing: .03em; }
th:first-child, td:first-child { text-align: left; }
td.cell { min-width: 120px; }
.bar { height: 5px; background: var(--line); border-radius: 3px; margin-top: 3px; overflow: hidden; }
.bar i { display: block; height: 100%; background: var(--accent); }
.twocol { display: grid; grid-template-columns: 1fr 1fr; gap: 24px; align-items: start; }
table.totals td { border-bottom: 1px dotted var(--line); }
svg.chart { display: block; max-width: 100%; height: auto; }
.legend { display: flex; gap: 16px; font-size: 12px; color: var(--muted); margin: 2px 0 8px; }
.legend .key i { display: inline-block; width: 11px; height: 11px; border-radius: 2px;
  margin-right: 5px; vertical-align: -1px; }
.note { color: var(--muted); font-size: 12px; margin: 6px 0; }
.notes { margin-top: 28px; padding: 10px 14px; background: #fff8e6; border: 1px solid #f3d58a;
  border-radius: 8px; font-size: 13px; }
details { margin-top: 18px; }
summary { cursor: pointer; font-weight: 600; }
table.labels { width: 100%; font-size: 13px; margin-top: 8px; }
td.gap { text-align: center; color: var(--muted); }
footer { margin-top: 36px; color: var(--muted); font-size: 12px; }
@media print { main { padding: 0; } }
"""

CARDS: tuple[tuple[str, str, int | None], ...] = (
    ("n_rows", "rows", 0),
    ("total_weight", "total weight", None),
    ("n_labels", "labels", 0),
    ("macro_f", "macro {f}", 4),
    ("samples_f", "samples {f}", 4),
    ("hamming_loss", "Hamming loss", 4),
    ("subset_accuracy", "subset accuracy", 4),
)


#: one label per row: the cards that say more than samples averages and Hamming loss do
SINGLE_LABEL_CARDS: tuple[tuple[str, str, int | None], ...] = (
    ("n_rows", "rows", 0),
    ("total_weight", "total weight", None),
    ("n_labels", "classes", 0),
    ("macro_f", "macro {f}", 4),
    ("balanced_accuracy_score", "balanced accuracy", 4),
    ("cohen_kappa_score", "Cohen's kappa", 4),
    ("matthews_corrcoef", "MCC", 4),
)


def _cards(report: Report, group: Group, digits: int) -> str:
    s = group.summary
    f = report.f_name
    out = [
        '<div class="card main"><div class="k">micro '
        f'{esc(f)}</div><div class="v">{esc(fmt(s.get(report.column("micro", "f")), digits))}'
        "</div></div>"
    ]
    for key, name, places in SINGLE_LABEL_CARDS if report.single_label else CARDS:
        if key.endswith("_f"):
            key = report.column(key[:-2], "f")
        if key in s:
            out.append(
                f'<div class="card"><div class="k">{esc(name.format(f=f))}</div>'
                f'<div class="v">{esc(fmt(s[key], places))}</div></div>'
            )
    return f'<div class="cards">{"".join(out)}</div>'


def _summary_table(report: Report, group: Group, digits: int) -> str:
    s = group.summary
    present = [a for a in AVERAGES if any(report.column(a, m) in s for m in MEASURES)]
    names = {"precision": "precision", "recall": "recall", "f": report.f_name, "jaccard": "Jaccard"}
    head = "".join(f"<th>{esc(a)}</th>" for a in present)
    rows = []
    for m in MEASURES:
        cells = []
        for a in present:
            value = s.get(report.column(a, m))
            width = ratio(value)
            bar = (
                f'<div class="bar"><i style="width:{width * 100:.1f}%"></i></div>'
                if width is not None
                else ""
            )
            cells.append(f'<td class="cell">{esc(fmt(value, digits))}{bar}</td>')
        rows.append(f"<tr><td>{esc(names[m])}</td>{''.join(cells)}</tr>")
    return f'<table class="summary"><tr><th></th>{head}</tr>{"".join(rows)}</table>'


def _totals_table(report: Report, group: Group, digits: int) -> str:
    s = group.summary
    rows = [
        f"<tr><td>{esc(name)}</td><td>{esc(fmt(s[key], digits))}</td></tr>"
        for key, name in report.total_columns().items()
        if key in s
    ]
    return f'<table class="totals">{"".join(rows)}</table>' if rows else ""


def _interval_table(report: Report, group: Group, digits: int) -> str:
    rows = report.group_intervals(group.key)
    if not rows:
        return ""
    head = "".join(f"<th>{esc(c.replace('_', ' '))}</th>" for c in INTERVAL_COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(sig(r[c], digits))}</td>" for c in INTERVAL_COLUMNS) + "</tr>"
        for r in rows
    )
    return (
        f"<h3>{esc(interval_title(report)[:1].upper() + interval_title(report)[1:])}</h3>"
        f'<table class="summary"><tr>{head}</tr>{body}</table>'
    )


def _best_worst(report: Report, group: Group, digits: int) -> str:
    best, worst = group.best_and_worst(min_support=report.min_support)
    if not best:
        return ""
    note = f'<p class="note">{esc(group.ranking_note(report.min_support))}</p>'
    f = report.f_name

    def table(rows: list[dict[str, Any]]) -> str:
        body = "".join(
            f"<tr><td>{esc(r['label'])}</td><td>{esc(fmt(r.get('support')))}</td>"
            f"<td>{esc(fmt(r.get(report.f_key), digits))}</td></tr>"
            for r in rows
        )
        return f"<table><tr><th>label</th><th>support</th><th>{esc(f)}</th></tr>{body}</table>"

    if not worst:
        return f"<h3>Labels, best to worst</h3>{table(best)}{note}"
    return f"<h3>Best labels</h3>{table(best)}<h3>Worst labels</h3>{table(worst)}{note}"


def _label_table(report: Report, rows: list[dict[str, Any]], digits: int) -> str:
    columns = ["label", "support", "tp", "fp", "fn", "tn", "precision", "recall", report.f_key]
    columns.append("jaccard")
    if any("accuracy" in r for r in rows):
        columns.append("accuracy")
    head = "".join(f"<th>{esc(report.f_name if c == report.f_key else c)}</th>" for c in columns)
    first, last, left_out = ST.ends(rows)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(fmt(r.get(c), digits))}</td>" for c in columns) + "</tr>"
        for r in first
    )
    body += _gap(left_out, len(columns))
    body += "".join(
        "<tr>" + "".join(f"<td>{esc(fmt(r.get(c), digits))}</td>" for c in columns) + "</tr>"
        for r in last
    )
    title = f"All {len(rows)} labels" if not left_out else f"Labels ({len(rows)})"
    note = f'<p class="note">{esc(ST.left_out_note(left_out, len(rows)))}</p>' if left_out else ""
    return (
        f"<details><summary>{esc(title)}</summary>"
        f'<table class="labels"><tr>{head}</tr>{body}</table>{note}</details>'
    )


def _gap(left_out: int, width: int) -> str:
    """The table row standing for ``left_out`` rows a page leaves out (none: nothing)."""
    if not left_out:
        return ""
    return f'<tr><td colspan="{width}" class="gap">… {left_out} labels …</td></tr>'


#: groups beyond this many get their tables but no charts (the page stays a few MB)
MAX_GROUP_CHARTS = 12


def _table(
    header: list[str], rows: list[list[Any]], digits: int, css: str = "summary", gap: int = 0
) -> str:
    """A table of ``rows``; with ``gap``, a row saying that many are left out after the first
    :data:`~mlsql.report.score_tables.PAGE_LABELS` (:func:`~mlsql.report.score_tables.ends`)."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    cells = [
        "<tr>" + "".join(f"<td>{esc(fmt(v, digits))}</td>" for v in row) + "</tr>" for row in rows
    ]
    if gap:
        cells.insert(ST.PAGE_LABELS, _gap(gap, len(header)))
    return f'<table class="{css}"><tr>{head}</tr>{"".join(cells)}</table>'


def _score_charts(report: Report, group: Group) -> list[str]:
    """The precision-recall curve(s) and the reliability diagram of a score report's group."""
    parts = []
    if group.curves:
        if report.curve_scope == "label":
            title = "Precision-recall curve per label"
            note = f"one curve per label (up to {ST.MAX_CURVE_LABELS} labels)"
        else:
            title = "Micro precision-recall curve"
            note = (
                f"more than {ST.MAX_CURVE_LABELS} labels: one curve of every (row, label) cell "
                "pooled, whose area is the micro average precision; a true label a row does "
                "not score is reached only at the end (threshold -inf, where every unscored "
                "cell ties), so recall may stop short of 1 until that last step"
            )
        parts += [
            f"<h3>{esc(title)}</h3>",
            charts.pr_curves(group.curves, per_label=report.curve_scope == "label"),
            f'<p class="note">{esc(note)}</p>',
        ]
    if group.calibration:
        parts += [
            "<h3>Reliability diagram</h3>",
            charts.reliability_diagram(group.calibration),
            f'<p class="note">{esc(ST.POOLED_NOTE)}</p>',
        ]
    return parts


def _score_section(report: Report, group: Group, digits: int, *, draw: bool) -> str:
    """A score report's group: averages, per-label thresholds, calibration, and their charts."""
    cards = "".join(
        f'<div class="card"><div class="k">{esc(name)}</div>'
        f'<div class="v">{esc(fmt(value, digits))}</div></div>'
        for name, value in ST.headline(report, group)
    )
    header, rows = ST.thresholds(report, group, limit=None)
    first, last, left_out = ST.ends(rows)
    parts = [
        f"<h2>{esc(group.title)}</h2>" if report.group_columns else "",
        f'<div class="cards">{cards}</div>',
        "<h3>Average precision and ROC AUC</h3>",
        _table(*ST.averages(report, group), digits),
        *(_score_charts(report, group) if draw else []),
        "<h3>Per-label thresholds</h3>",
        f'<p class="note">{esc(ST.thresholds_title(report, group, limit=None))}</p>',
        _table(header, first + last, digits, "labels", gap=left_out),
    ]
    if left_out:
        parts.append(f'<p class="note">{esc(ST.left_out_note(left_out, len(rows)))}</p>')
    if group.calibration is not None:
        parts += ["<h3>Calibration</h3>", _table(*ST.calibration(group), digits, "labels")]
    return f'<section class="group">{"".join(parts)}</section>'


def _group_section(report: Report, group: Group, digits: int, *, draw: bool = True) -> str:
    if report.scores:
        return _score_section(report, group, digits, draw=draw)
    f = report.f_name
    parts = [
        f"<h2>{esc(group.title)}</h2>" if report.group_columns else "",
        _cards(report, group, digits),
    ]
    parts.append("<h3>Averages</h3>")
    parts.append(_summary_table(report, group, digits))
    parts.append(
        f'<div class="twocol"><div><h3>Whole-set measures</h3>{_totals_table(report, group, digits)}</div>'
        f"<div>{_best_worst(report, group, digits)}</div></div>"
    )
    parts.append(_interval_table(report, group, digits))
    if group.labels and draw:
        rows = by_support(group.labels)
        parts.append(f"<h3>Precision, recall and {esc(f)} per label, by support</h3>")
        parts.append(charts.label_bars(rows, f, report.f_key))
        if len(rows) > charts.MAX_BAR_LABELS:
            parts.append(
                f'<p class="note">The {charts.MAX_BAR_LABELS} most frequent of {len(rows)} '
                "labels.</p>"
            )
        parts.append(f"<h3>Label frequency against {esc(f)}</h3>")
        parts.append(
            charts.frequency_scatter(rows, f, report.f_key, min_support=report.min_support)
        )
        parts.append(
            '<p class="note">Named: the most frequent labels and the lowest-scored of those '
            f"with support &gt;= {report.min_support}.</p>"
        )
        if len(rows) > charts.MAX_POINTS:
            parts.append(f'<p class="note">The {charts.MAX_POINTS} most frequent labels.</p>')
        undefined = sum(1 for r in rows if ratio(r.get(report.f_key)) is None)
        if undefined:
            parts.append(
                f'<p class="note">{undefined} label(s) with undefined {esc(f)} not drawn.</p>'
            )
    if group.confusion is not None and draw:
        parts.append("<h3>Confusion matrix</h3>")
        parts.append(
            '<p class="note">Rows are the actual class, columns the predicted one; the colour is '
            "the share of the actual class's rows.</p>"
        )
        parts.append(charts.confusion_heatmap(group.confusion))
        if len(group.confusion.classes) > charts.MAX_CLASSES:
            parts.append(
                f'<p class="note">The {charts.MAX_CLASSES} most frequent of '
                f"{len(group.confusion.classes)} classes.</p>"
            )
    if group.labels:
        parts.append(_label_table(report, by_support(group.labels), digits))
    return f'<section class="group">{"".join(parts)}</section>'


def _groups_overview(report: Report, digits: int, *, draw: bool = True) -> str:
    f = report.f_name
    columns = [
        ("n_rows", "rows"),
        ("total_weight", "total weight"),
        (report.column("micro", "f"), f"micro {f}"),
        (report.column("macro", "f"), f"macro {f}"),
        (report.column("samples", "f"), f"samples {f}"),
        ("hamming_loss", "Hamming loss"),
        ("subset_accuracy", "subset acc."),
        ("micro_average_precision", "micro AP"),
        ("macro_average_precision", "macro AP"),
        ("macro_roc_auc", "macro ROC AUC"),
    ]
    columns = [(k, n) for k, n in columns if any(k in s for s in report.summary)]
    head = "".join(f"<th>{esc(c)}</th>" for c in report.group_columns)
    head += "".join(f"<th>{esc(n)}</th>" for _, n in columns)
    body = "".join(
        "<tr>"
        + "".join(f"<td>{esc(key_text(g.key[c]))}</td>" for c in report.group_columns)
        + "".join(
            f"<td>{esc(with_interval(g.summary.get(k), report.interval(g.key, k), digits))}</td>"
            for k, _ in columns
        )
        + "</tr>"
        for g in report.groups()
    )
    table = f'<h3>Groups</h3><table class="summary"><tr>{head}</tr>{body}</table>'
    if not draw or not report.intervals:
        return table
    points = [
        {**row, "group": g.title, "measure": name}
        for g in report.groups()
        for k, name in columns
        if (row := report.interval(g.key, k)) is not None
    ]
    if not points:
        return table
    return (
        f"{table}<h3>Groups with their {esc(interval_title(report))}</h3>"
        f"{charts.group_intervals(points)}"
    )


def _slices_section(report: Report, digits: int, *, draw: bool) -> str:
    """The weakest slices: a forest plot against the whole data's value, and their table."""
    if report.slices is None:
        return ""
    parts = ["<h2>Weakest slices</h2>", f'<p class="note">{esc(slice_tables.note(report))}</p>']
    if draw and report.slices:
        overall = (report.slicing or {}).get("overall")
        shown = report.slices[: slice_tables.MAX_SHOWN]
        parts.append(charts.slice_forest(shown, overall, f"micro {report.f_name}"))
    header, rows, tail = slice_tables.table(report, digits)
    if rows:
        head = "".join(f"<th>{esc(h)}</th>" for h in header)
        body = "".join("<tr>" + "".join(f"<td>{esc(v)}</td>" for v in r) + "</tr>" for r in rows)
        parts.append(f'<table class="labels"><tr>{head}</tr>{body}</table>')
    parts.append(f'<p class="note">{esc(tail)}</p>')
    return f'<section class="group slices">{"".join(parts)}</section>'


def _params(report: Report) -> str:
    p = report.params
    shown = {
        "engine": report.engine,
        "actual": p.get("actual"),
        "predicted": p.get("predicted"),
        "by": ", ".join(p.get("by") or []) or None,
        "beta": fmt(p.get("beta"), None) if p.get("beta") not in (None, 1, 1.0) else None,
        "zero_division": p.get("zero_division"),
        "labels": ", ".join(map(str, p["labels"])) if p.get("labels") else None,
        "sep": repr(p["sep"]) if p.get("sep") else None,
        "data": "label scores"
        if report.scores
        else "one label per row"
        if report.single_label
        else "label sets",
    }
    return "".join(
        f"<span>{esc(k)} <b>{esc(v)}</b></span>" for k, v in shown.items() if v is not None
    )


def to_html(report: Report, *, digits: int = 4) -> str:
    """The whole report as one HTML document (UTF-8, no external resources).

    Examples
    --------
    >>> from mlsql.report.model import Report
    >>> page = to_html(Report("x.parquet", "duckdb", {}, (), [{"n_rows": 1, "micro_f1": 0.5}]))
    >>> page.startswith("<!DOCTYPE html>"), "http://" in page
    (True, False)
    """
    no_charts = charts.missing()
    sections = [f'<p class="notes">{esc(no_charts)}</p>'] if no_charts else []
    if report.group_columns and len(report.summary) > 1:
        sections.append(_groups_overview(report, digits, draw=not no_charts))
    sections += [
        _group_section(report, g, digits, draw=i < MAX_GROUP_CHARTS and not no_charts)
        for i, g in enumerate(report.groups())
    ]
    if len(report.summary) > MAX_GROUP_CHARTS:
        sections.append(
            f'<p class="note">Charts are drawn for the first {MAX_GROUP_CHARTS} of '
            f"{len(report.summary)} groups.</p>"
        )
    if not report.summary:
        sections.append('<p class="note">No rows to evaluate.</p>')
    sections.append(_slices_section(report, digits, draw=not no_charts))
    notes = "".join(f"<p>{esc(n)}</p>" for n in report.notes)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>mlsql report: {esc(report.source)}</title>"
        f"<style>{CSS}</style></head><body><main>"
        "<header><h1>mlsql evaluation report</h1>"
        f'<div class="source">{esc(report.source)}</div>'
        f'<div class="params">{_params(report)}</div></header>'
        + "".join(sections)
        + (f'<div class="notes">{notes}</div>' if notes else "")
        + f"<footer>Made by mlsql {esc(__version__)}. "
        "Charts: Vega-Lite, rendered offline.</footer>"
        "</main></body></html>\n"
    )
