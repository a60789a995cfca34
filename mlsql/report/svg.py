"""Charts as inline SVG text: no scripts, no fonts or images to fetch.

Every label and number that reaches the page passes through :func:`esc`;
tooltips are SVG ``<title>`` elements, which browsers show without scripts.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

from mlsql.report.model import Confusion
from mlsql.report.numbers import fmt, ratio

COLORS = {"precision": "#4c78a8", "recall": "#f58518", "f1": "#54a24b"}
GRID = "#e3e6ea"
AXIS = "#6b7280"
INK = "#1f2933"
CHAR_PX = 7.6  # a generous width of one character at 12px
MAX_BAR_LABELS = 40
MAX_CLASSES = 30
MAX_POINTS = 2000


def esc(value: Any) -> str:
    """Text safe inside SVG or HTML, attributes included."""
    return escape(str(value), quote=True)


def _short(label: Any, limit: int) -> str:
    text = str(label)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _svg(width: float, height: float, body: list[str], title: str) -> str:
    return (
        f'<svg role="img" aria-label="{esc(title)}" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" height="{height:.0f}" class="chart">'
        f"<title>{esc(title)}</title>" + "".join(body) + "</svg>"
    )


def legend(names: dict[str, str]) -> str:
    """A row of colour keys, as HTML."""
    items = "".join(
        f'<span class="key"><i style="background:{COLORS[k]}"></i>{esc(v)}</span>'
        for k, v in names.items()
    )
    return f'<div class="legend">{items}</div>'


def label_bars(
    rows: list[dict[str, Any]], f_name: str, f_key: str = "f1", *, width: float = 760
) -> str:
    """Precision, recall and F of each label as three bars, most frequent label first."""
    shown = rows[:MAX_BAR_LABELS]
    longest = min(max((len(str(r["label"])) for r in shown), default=5), 26)
    label_w = max(longest, 5) * CHAR_PX + 8
    support_w = 64.0
    left = label_w + support_w
    right = 44.0
    top = 26.0
    bar_h, gap, row_gap = 6.0, 1.0, 10.0
    row_h = 3 * bar_h + 2 * gap + row_gap
    plot_w = width - left - right
    height = top + row_h * len(shown) + 6
    body: list[str] = []
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        x = left + tick * plot_w
        body.append(
            f'<line x1="{x:.1f}" y1="{top - 6:.1f}" x2="{x:.1f}" y2="{height - 4:.1f}" '
            f'stroke="{GRID}" stroke-width="1"/>'
        )
        body.append(
            f'<text x="{x:.1f}" y="{top - 10:.1f}" text-anchor="middle" class="tick">{tick:g}</text>'
        )
    body.append(
        f'<text x="{label_w + support_w - 8:.1f}" y="{top - 10:.1f}" text-anchor="end" '
        f'class="tick">support</text>'
    )
    for i, row in enumerate(shown):
        y0 = top + i * row_h
        mid = y0 + (3 * bar_h + 2 * gap) / 2
        label = str(row["label"])
        body.append(
            f'<text x="0" y="{mid + 4:.1f}" class="label">'
            f"<title>{esc(label)}</title>{esc(_short(label, 26))}</text>"
        )
        body.append(
            f'<text x="{left - 8:.1f}" y="{mid + 4:.1f}" text-anchor="end" class="num">'
            f"{esc(fmt(row.get('support')))}</text>"
        )
        for j, measure in enumerate(("precision", "recall", "f1")):
            column = f_key if measure == "f1" else measure
            value = ratio(row.get(column))
            y = y0 + j * (bar_h + gap)
            name = f_name if measure == "f1" else measure
            tip = f"{label}: {name} {fmt(row.get(column), 4)}"
            if value is None:
                body.append(
                    f'<text x="{left + 4:.1f}" y="{y + bar_h:.1f}" class="na">'
                    f"<title>{esc(tip)}</title>undefined</text>"
                )
                continue
            body.append(
                f'<rect x="{left:.1f}" y="{y:.1f}" width="{max(value * plot_w, 1.5):.1f}" '
                f'height="{bar_h:.1f}" rx="1.5" fill="{COLORS[measure]}">'
                f"<title>{esc(tip)}</title></rect>"
            )
        f_value = row.get(f_key)
        if ratio(f_value) is not None:
            x = left + ratio(f_value) * plot_w + 4  # type: ignore[operator]
            body.append(
                f'<text x="{x:.1f}" y="{y0 + 3 * bar_h + 2 * gap:.1f}" class="val">'
                f"{esc(fmt(f_value, 2))}</text>"
            )
    return _svg(width, height, body, f"precision, recall and {f_name} per label, by support")


def _nice_step(span: float, count: int = 5) -> float:
    raw = span / count
    step = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * step:
            return step * m
    return step * 10


def _tick(value: float) -> str:
    """``0``, ``2.5``, ``10,000``."""
    return f"{value:,.0f}" if value == int(value) else f"{value:g}"


def _support_scale(
    supports: list[float], left: float, width: float
) -> tuple[Any, list[float], bool]:
    """x position of a support, tick values, and whether the scale is logarithmic.

    Log scale (of 1 + support, so 0 has a place) when supports span more than
    a factor of 20; otherwise linear over a nice range around them.
    """
    hi = max(supports, default=1.0) or 1.0
    positive = [x for x in supports if x > 0]
    lo_pos = min(positive, default=hi)
    if hi / lo_pos > 20:
        span = math.log10(1 + hi)
        ticks = [0.0] + [10.0**k for k in range(math.floor(math.log10(hi)) + 1)]
        return (lambda x: left + math.log10(1 + x) / span * width), ticks, True
    lo = min(supports, default=0.0)
    if lo < hi / 2:
        lo = 0.0
    step = max(_nice_step(max(hi - lo, 1.0)), 1.0)  # supports are whole numbers
    start = math.floor(lo / step) * step if lo else 0.0
    if lo and start == lo:  # keep points off the axis
        start = max(start - step, 0.0)
    stop = math.ceil(hi / step) * step
    if stop == hi:
        stop += step
    ticks = [start + i * step for i in range(round((stop - start) / step) + 1)]
    return (lambda x: left + (x - start) / (stop - start) * width), ticks, False


def frequency_scatter(
    rows: list[dict[str, Any]], f_name: str, f_key: str = "f1", *, width: float = 760
) -> str:
    """Each label's support (x; log scale when it spans decades) against its F (y)."""
    rows = sorted(rows, key=lambda r: -(r.get("support") or 0))[:MAX_POINTS]
    points = [(r, float(r.get("support") or 0), ratio(r.get(f_key))) for r in rows]
    drawn = [(r, s, f) for r, s, f in points if f is not None]
    height = 340.0
    left, right, top, bottom = 56.0, 24.0, 16.0, 46.0
    plot_w, plot_h = width - left - right, height - top - bottom
    sx, ticks, log = _support_scale([x for _, x, _ in drawn], left, plot_w)

    def sy(f: float) -> float:
        return top + (1 - f) * plot_h

    body: list[str] = []
    for f in (0, 0.25, 0.5, 0.75, 1.0):
        y = sy(f)
        body.append(
            f'<line x1="{left:.1f}" y1="{y:.1f}" x2="{left + plot_w:.1f}" y2="{y:.1f}" '
            f'stroke="{GRID}"/>'
        )
        body.append(
            f'<text x="{left - 8:.1f}" y="{y + 4:.1f}" text-anchor="end" class="tick">{f:g}</text>'
        )
    for t in ticks:
        x = sx(t)
        body.append(
            f'<line x1="{x:.1f}" y1="{top + plot_h:.1f}" x2="{x:.1f}" y2="{top + plot_h + 5:.1f}" '
            f'stroke="{AXIS}"/>'
        )
        body.append(
            f'<text x="{x:.1f}" y="{top + plot_h + 18:.1f}" text-anchor="middle" class="tick">'
            f"{_tick(t)}</text>"
        )
    body.append(
        f'<line x1="{left:.1f}" y1="{top + plot_h:.1f}" x2="{left + plot_w:.1f}" '
        f'y2="{top + plot_h:.1f}" stroke="{AXIS}"/>'
    )
    scale = " (log scale)" if log else ""
    body.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 6:.1f}" text-anchor="middle" '
        f'class="axis">label frequency: support, rows where the label is true{scale}</text>'
    )
    body.append(
        f'<text transform="translate(14 {top + plot_h / 2:.1f}) rotate(-90)" '
        f'text-anchor="middle" class="axis">{esc(f_name)}</text>'
    )
    named = len(drawn) <= 20
    radius, opacity = (5.5, 0.75) if len(drawn) <= 200 else (3.5, 0.45)
    for r, s, f in sorted(drawn, key=lambda p: p[1]):
        x, y = sx(s), sy(f)
        tip = f"{r['label']}: support {fmt(r.get('support'))}, {f_name} {fmt(r.get(f_key), 4)}"
        body.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius}" fill="{COLORS["f1"]}" '
            f'fill-opacity="{opacity}" '
            f'stroke="#2f6b2a" stroke-width="{1 if radius > 4 else 0.6}">'
            f"<title>{esc(tip)}</title></circle>"
        )
        if named:
            text_w = len(_short(r["label"], 20)) * CHAR_PX
            anchor, dx = ("end", -9) if x + 9 + text_w > width else ("start", 9)
            body.append(
                f'<text x="{x + dx:.1f}" y="{y + 4:.1f}" text-anchor="{anchor}" class="label">'
                f"{esc(_short(r['label'], 20))}</text>"
            )
    return _svg(width, height, body, f"label frequency against {f_name}")


def _blend(share: float) -> str:
    """White to deep blue."""
    lo, hi = (247, 251, 255), (8, 69, 148)
    rgb = [round(a + (b - a) * share) for a, b in zip(lo, hi, strict=True)]
    return "#" + "".join(f"{c:02x}" for c in rgb)


def confusion_heatmap(confusion: Confusion, *, max_width: float = 760) -> str:
    """Counts of (actual, predicted) pairs; colour is the share of the actual class's rows."""
    classes = confusion.most_frequent(MAX_CLASSES)  # the most frequent actual classes
    matrix = confusion.dense(classes)
    n = len(classes)
    longest = min(max((len(str(c)) for c in classes), default=4), 18)
    label_w = longest * CHAR_PX + 18
    head_h = longest * CHAR_PX * 0.72 + 30
    cell = max(min(52.0, (max_width - label_w - 40) / max(n, 1)), 16.0)
    width = label_w + cell * n + 30
    height = head_h + cell * n + 14
    body: list[str] = [
        f'<text x="{label_w + cell * n / 2:.1f}" y="12" text-anchor="middle" class="axis">'
        "predicted</text>",
        f'<text transform="translate(12 {head_h + cell * n / 2:.1f}) rotate(-90)" '
        'text-anchor="middle" class="axis">actual</text>',
    ]
    for j, c in enumerate(classes):
        x = label_w + (j + 0.5) * cell
        body.append(
            f'<text transform="translate({x + 4:.1f} {head_h - 6:.1f}) rotate(-45)" '
            f'class="label"><title>{esc(c)}</title>{esc(_short(c, 18))}</text>'
        )
    for i, c in enumerate(classes):
        total = sum(matrix[i])
        y = head_h + i * cell
        body.append(
            f'<text x="{label_w - 8:.1f}" y="{y + cell / 2 + 4:.1f}" text-anchor="end" '
            f'class="label"><title>{esc(c)}</title>{esc(_short(c, 18))}</text>'
        )
        for j, count in enumerate(matrix[i]):
            share = count / total if total else 0.0
            x = label_w + j * cell
            stroke = ' stroke="#1f2933" stroke-width="1.5"' if i == j else ' stroke="#ffffff"'
            tip = f"actual {c}, predicted {classes[j]}: {count} of {total} rows"
            body.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{cell:.1f}" height="{cell:.1f}" '
                f'fill="{_blend(share)}"{stroke}><title>{esc(tip)}</title></rect>'
            )
            if cell >= 22:
                ink = "#ffffff" if share > 0.55 else INK
                body.append(
                    f'<text x="{x + cell / 2:.1f}" y="{y + cell / 2 + 4:.1f}" '
                    f'text-anchor="middle" class="num" fill="{ink}">{count}</text>'
                )
    return _svg(width, height, body, "confusion matrix: actual rows, predicted columns")
