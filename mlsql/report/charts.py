"""The report's charts: Vega-Lite specs (altair) rendered offline to inline SVG (vl-convert).

No script and no request reaches the page: vl-convert renders each chart to
SVG text in this process. Both packages come with ``pip install 'mlsql[report]'``;
without them the page says so and shows its tables only.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mlsql.report.model import Confusion

COLORS = {"precision": "#4c78a8", "recall": "#f58518", "f": "#54a24b"}
#: the heatmap's colour ramp: an empty row share to a full one
HEAT = ("#f7fbff", "#084594")
MAX_BAR_LABELS = 40
MAX_CLASSES = 30
MAX_POINTS = 2000
#: points named on the scatter: the most frequent labels and the worst-scored frequent ones
NAMED_POINTS = 3
INSTALL = "pip install 'mlsql[report]'"


def missing() -> str | None:
    """``None`` when charts can be drawn, else what to install."""
    try:
        import altair  # noqa: F401
        import vl_convert  # noqa: F401
    except ImportError:
        return f"Charts need altair and vl-convert-python: {INSTALL}"
    return None


def _svg(chart: Any) -> str:
    """``chart`` as inline SVG (namespace attributes dropped: HTML needs none)."""
    import vl_convert

    svg = vl_convert.vegalite_to_svg(chart.to_dict())
    svg = re.sub(r'\s+xmlns(?::xlink)?="[^"]*"', "", svg, count=2)
    if 'class="marks"' in svg[:400]:
        return svg.replace('class="marks"', 'class="chart marks"', 1)
    return svg.replace("<svg ", '<svg class="chart" ', 1)


def _number(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    number = float(value)
    return None if number != number else number  # NaN: undefined, not drawn


def label_bars(rows: list[dict[str, Any]], f_name: str, f_key: str) -> str:
    """Precision, recall and F of the most frequent labels, one group of bars each."""
    import altair as alt

    shown = rows[:MAX_BAR_LABELS]
    names = {"precision": "precision", "recall": "recall", f_key: f_name}
    values = [
        {
            "label": str(r["label"]),
            "measure": name,
            "value": _number(r.get(key)),
            "support": r.get("support"),
        }
        for r in shown
        for key, name in names.items()
    ]
    order = list(dict.fromkeys(str(r["label"]) for r in shown))
    colours = alt.Scale(domain=list(names.values()), range=list(COLORS.values()))
    chart = (
        alt.Chart(alt.Data(values=values))
        .mark_bar()
        .encode(
            y=alt.Y("label:N", sort=order, title=None),
            yOffset=alt.YOffset("measure:N", sort=list(names.values())),
            x=alt.X(
                "value:Q", scale=alt.Scale(domain=[0, 1]), title=f"precision, recall, {f_name}"
            ),
            color=alt.Color(
                "measure:N", scale=colours, legend=alt.Legend(orient="top", title=None)
            ),
            tooltip=["label:N", "measure:N", "value:Q", "support:Q"],
        )
        .properties(width=560, height=alt.Step(7))
    )
    return _svg(chart)


def frequency_scatter(
    rows: list[dict[str, Any]], f_name: str, f_key: str, *, min_support: int = 1
) -> str:
    """F against support (log axis fitted to the data), a few telling labels named."""
    import altair as alt

    points = [
        {"label": str(r["label"]), "support": r["support"], "f": _number(r.get(f_key))}
        for r in rows[:MAX_POINTS]
        if (r.get("support") or 0) > 0 and _number(r.get(f_key)) is not None
    ]
    frequent = sorted(points, key=lambda p: -p["support"])[:NAMED_POINTS]
    eligible = [p for p in points if p["support"] >= min_support] or points
    worst = sorted(eligible, key=lambda p: (p["f"], -p["support"]))[:NAMED_POINTS]
    named = _apart(list({p["label"]: p for p in frequent + worst}.values()), points)
    supports = [p["support"] for p in points] or [1]
    x = alt.X(
        "support:Q",
        scale=alt.Scale(type="log", nice=False, padding=12),
        axis=alt.Axis(values=_log_ticks(min(supports), max(supports)), format=",d"),
        title="support (log)",
    )
    y = alt.Y("f:Q", scale=alt.Scale(zero=False, nice=False, padding=12), title=f_name)
    dots = (
        alt.Chart(alt.Data(values=points))
        .mark_circle(size=42, color=COLORS["f"], opacity=0.7)
        .encode(x=x, y=y, tooltip=["label:N", "support:Q", "f:Q"])
    )
    names = (
        alt.Chart(alt.Data(values=named))
        .mark_text(align="left", dx=6, dy=-4, fontSize=11, color="#1f2933")
        .encode(x=x, y=y, text="label:N")
    )
    return _svg((dots + names).properties(width=SCATTER_WIDTH, height=SCATTER_HEIGHT))


#: the scatter's plot area in pixels, and its scales' padding
SCATTER_WIDTH, SCATTER_HEIGHT, SCATTER_PADDING = 560, 280, 12
#: a point's name: pixels per character and per line (11-pixel text)
CHAR_WIDTH, LINE_HEIGHT = 6.5, 13


def _log_ticks(low: float, high: float, most: int = 6) -> list[int]:
    """Whole-number ticks of a log axis of supports from ``low`` to ``high``, at most ``most``.

    1, 2 and 5 times a power of ten; only the powers of ten when those are too
    many; the whole numbers themselves when the range is too narrow for two.

    Examples
    --------
    >>> _log_ticks(1, 5000), _log_ticks(3, 5), _log_ticks(2, 60), _log_ticks(1, 40)
    ([1, 10, 100, 1000], [3, 4, 5], [2, 5, 10, 20, 50], [1, 2, 5, 10, 20])
    """
    ticks = [m * 10**k for k in range(16) for m in (1, 2, 5) if low <= m * 10**k <= high]
    if len(ticks) > most:
        ticks = [t for t in ticks if str(t)[0] == "1"]
    if len(ticks) < 2:
        first, last = math.ceil(low), math.floor(high)
        step = max(1, math.ceil((last - first + 1) / most))
        ticks = list(range(first, last + 1, step))
    return ticks


def _apart(named: list[dict[str, Any]], points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The named points whose names do not overlap an earlier kept one's, on the scatter's
    scales (log support, linear F, both padded as drawn); the earlier, the more telling."""
    if not named:
        return named
    low, high = min(p["support"] for p in points), max(p["support"] for p in points)
    f_low, f_high = min(p["f"] for p in points), max(p["f"] for p in points)
    inner_w, inner_h = SCATTER_WIDTH - 2 * SCATTER_PADDING, SCATTER_HEIGHT - 2 * SCATTER_PADDING

    def box(p: dict[str, Any]) -> tuple[float, float, float, float]:
        span = math.log(high) - math.log(low)
        x = SCATTER_PADDING + (
            inner_w * (math.log(p["support"]) - math.log(low)) / span if span else inner_w / 2
        )
        y = SCATTER_PADDING + (
            inner_h * (f_high - p["f"]) / (f_high - f_low) if f_high > f_low else inner_h / 2
        )
        left, bottom = x + 6, y - 4  # the text's dx and dy
        return left, bottom - LINE_HEIGHT, left + CHAR_WIDTH * len(p["label"]), bottom

    kept: list[tuple[dict[str, Any], tuple[float, float, float, float]]] = []
    for p in named:
        b = box(p)
        if all(b[2] <= k[0] or k[2] <= b[0] or b[3] <= k[1] or k[3] <= b[1] for _, k in kept):
            kept.append((p, b))
    return [p for p, _ in kept]


def confusion_heatmap(confusion: Confusion) -> str:
    """Counts of (actual, predicted) pairs over the most frequent classes; colour is the share
    of the actual class's rows."""
    import altair as alt

    classes = confusion.most_frequent(MAX_CLASSES)
    matrix = confusion.dense(classes)
    cells = []
    for a, row in zip(classes, matrix, strict=True):
        total = sum(row)
        for p, n in zip(classes, row, strict=True):
            cells.append(
                {
                    "actual": str(a),
                    "predicted": str(p),
                    "count": n,
                    "share": n / total if total else 0.0,
                    "rows": total,
                }
            )
    order = [str(c) for c in classes]
    side = max(min(28, 560 // max(len(classes), 1)), 12)
    base = alt.Chart(alt.Data(values=cells)).encode(
        x=alt.X("predicted:N", sort=order, axis=alt.Axis(orient="top", labelAngle=-45)),
        y=alt.Y("actual:N", sort=order),
    )
    heat = base.mark_rect().encode(
        color=alt.Color("share:Q", scale=alt.Scale(domain=[0, 1], range=list(HEAT)), title="share"),
        # each cell's aria-label (what a screen reader says) names its numbers
        tooltip=[
            "actual:N",
            "predicted:N",
            "count:Q",
            alt.Tooltip("rows:Q", title="rows of the class"),
        ],
    )
    chart = heat
    if len(classes) <= 15:
        counts = base.mark_text(fontSize=11).encode(
            text="count:Q",
            color=alt.condition("datum.share > 0.5", alt.value("white"), alt.value("#1f2933")),
        )
        chart = heat + counts
    side_px = side * len(classes)
    return _svg(chart.properties(width=side_px, height=side_px))


def group_intervals(points: list[dict[str, Any]]) -> str:
    """Each group's measures as a dot at the estimate with an error bar from low to high.

    ``points``: one dict per group and measure with ``group``, ``measure``,
    ``estimate``, ``low`` and ``high`` (measures without an interval are left out).
    """
    import altair as alt

    values = [
        {
            **p,
            "estimate": _number(p["estimate"]),
            "low": _number(p["low"]),
            "high": _number(p["high"]),
        }
        for p in points
        if _number(p.get("low")) is not None and _number(p.get("high")) is not None
    ]
    groups = list(dict.fromkeys(p["group"] for p in values))
    measures = list(dict.fromkeys(p["measure"] for p in values))
    y = alt.Y("group:N", sort=groups, title=None)
    offset = alt.YOffset("measure:N", sort=measures)
    colour = alt.Color("measure:N", sort=measures, legend=alt.Legend(orient="top", title=None))
    base = alt.Chart(alt.Data(values=values)).encode(y=y, yOffset=offset, color=colour)
    bars = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("low:Q", title=None, scale=alt.Scale(zero=False)), x2="high:Q"
    )
    dots = base.mark_point(filled=True, size=40).encode(
        x="estimate:Q", tooltip=["group:N", "measure:N", "estimate:Q", "low:Q", "high:Q"]
    )
    # one 16-pixel band per measure within each group's row
    return _svg((bars + dots).properties(width=560, height=alt.Step(16)))


#: a score report draws at most this many points per precision-recall curve
MAX_CURVE_POINTS = 500


def _thinned(rows: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """At most ``n`` of ``rows``, evenly spaced, the first and the last kept."""
    if len(rows) <= n:
        return rows
    step = (len(rows) - 1) / (n - 1)
    return [rows[round(i * step)] for i in range(n)]


def pr_curves(rows: list[dict[str, Any]], *, per_label: bool) -> str:
    """Precision against recall, one line per label (``per_label``) or one micro line."""
    import altair as alt

    curves: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        curves.setdefault(str(r["label"]) if per_label else "micro", []).append(r)
    points = [
        {
            "curve": name,
            "order": i,
            "recall": _number(r["recall"]),
            "precision": _number(r["precision"]),
        }
        for name, found in curves.items()
        for i, r in enumerate(_thinned(found, MAX_CURVE_POINTS))
    ]
    unit = alt.Scale(domain=[0, 1])
    chart = (
        alt.Chart(alt.Data(values=points))
        .mark_line(interpolate="step-before", point=len(points) <= 60)
        .encode(
            x=alt.X("recall:Q", scale=unit),
            y=alt.Y("precision:Q", scale=unit),
            order="order:Q",
            color=alt.Color("curve:N", legend=alt.Legend(orient="right", title=None)),
            tooltip=["curve:N", "recall:Q", "precision:Q"],
        )
        .properties(width=480, height=300)
    )
    return _svg(chart)


def reliability_diagram(rows: list[dict[str, Any]]) -> str:
    """Observed rate against mean score per calibration bin, the diagonal for reference."""
    import altair as alt

    unit = alt.Scale(domain=[0, 1])
    points = [
        {
            "mean_score": _number(r["mean_score"]),
            "observed_rate": _number(r["observed_rate"]),
            "count": r["count"],
        }
        for r in rows
    ]
    diagonal = (
        alt.Chart(alt.Data(values=[{"x": 0.0, "y": 0.0}, {"x": 1.0, "y": 1.0}]))
        .mark_line(color="#9ca3af", strokeDash=[4, 4])
        .encode(
            x=alt.X("x:Q", scale=unit, title="mean score"),
            y=alt.Y("y:Q", scale=unit, title="observed rate"),
        )
    )
    line = (
        alt.Chart(alt.Data(values=points))
        .mark_line(point=True, color=COLORS["precision"])
        .encode(
            x=alt.X("mean_score:Q", scale=unit),
            y=alt.Y("observed_rate:Q", scale=unit),
            tooltip=["mean_score:Q", "observed_rate:Q", "count:Q"],
        )
    )
    return _svg((diagonal + line).properties(width=360, height=300))


#: the forest plot of slices: significantly worse than the rest of the data, significantly
#: better, no significant difference (:data:`mlsql.report.slice_tables.VERDICTS`); and the line of
#: the whole data's value
WORSE, BETTER, NOT_SIGNIFICANT, OVERALL = "#e45756", "#72b7b2", "#8c96a3", "#b279a2"


def slice_forest(rows: list[dict[str, Any]], overall: float | None, measure: str) -> str:
    """A forest plot of slices: each slice's estimate and interval, in the order of ``rows``
    (the worst first, at the top), those significantly worse than the rest of the data in
    :data:`WORSE` and better in :data:`BETTER`, as diamonds
    (:func:`mlsql.report.slice_tables.verdict`), and a dashed
    vertical line at ``overall``, the measure (better higher) on all the data.

    Slices without an estimate or an interval are not drawn.
    """
    import altair as alt

    from mlsql.report.slice_tables import VERDICTS, verdict

    values = [
        {
            "slice": str(r["slice"]),
            "rows": r["rows"],
            "estimate": _number(r.get("estimate")),
            "low": _number(r.get("low")),
            "high": _number(r.get("high")),
            "p_adjusted": _number(r.get("p_adjusted")),
            "verdict": verdict(r),
        }
        for r in rows
    ]
    values = [v for v in values if None not in (v["estimate"], v["low"], v["high"])]
    order = [v["slice"] for v in values]
    colours = alt.Scale(domain=list(VERDICTS), range=[WORSE, BETTER, NOT_SIGNIFICANT])
    base = alt.Chart(alt.Data(values=values)).encode(
        y=alt.Y("slice:N", sort=order, title=None, axis=alt.Axis(labelLimit=300)),
        color=alt.Color("verdict:N", scale=colours, legend=alt.Legend(orient="top", title=None)),
    )
    x = alt.X("low:Q", title=f"{measure} (dashed line: all the data)", scale=alt.Scale(zero=False))
    bars = base.mark_rule(strokeWidth=2.5).encode(x=x, x2="high:Q")
    dots = base.mark_point(filled=True, size=70, opacity=1).encode(
        x="estimate:Q",
        shape=alt.Shape(
            "verdict:N",
            scale=alt.Scale(domain=list(VERDICTS), range=["diamond", "diamond", "circle"]),
        ),
        tooltip=["slice:N", "rows:Q", "estimate:Q", "low:Q", "high:Q", "p_adjusted:Q"],
    )
    chart = bars + dots
    if overall is not None:
        line = (
            alt.Chart(alt.Data(values=[{"overall": overall}]))
            .mark_rule(color=OVERALL, strokeDash=[6, 4], strokeWidth=2)
            .encode(x="overall:Q")
        )
        chart = line + chart
    return _svg(chart.properties(width=520, height=alt.Step(22)))
