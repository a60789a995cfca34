"""Averaged precision and ROC AUC over label scores in Polars: aggregates over exploded cells.

The formulas are those of :mod:`mlsql.measures.label_scores`. In the
aggregation's context (``select``, ``group_by().agg``) the known rows' labels
(scored, or true without a score at -infinity; see
:func:`mlsql.polars.families.ranking.label_scores`) are exploded into one
cell per (row, label), and each segment's statistics are window expressions
over the segment key (the label, the row, or one key for micro): max ranks
from the highest give N(>= s) over the segment's cells and P(>= s) over its
positives, and average ranks give U. Each segment is then read at its first
cell. No Python runs per row; the streaming engine falls back to memory for
the windows, as it does for ``average_precision_score``.

Examples
--------
>>> import polars as pl
>>> import mlsql.polars as mp
>>> df = pl.DataFrame(
...     {
...         "actual": [["cat"], ["dog"]],
...         "scores": [
...             [{"label": "cat", "score": 0.9}, {"label": "dog", "score": 0.4}],
...             [{"label": "cat", "score": 0.2}],
...         ],
...     }
... )
>>> df.select(mp.multilabel_average_precision("actual", "scores", average="micro")).item()
0.75
"""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any

import polars as pl

from mlsql._front.build import function, lookup
from mlsql._registry import Measure, measures
from mlsql.measures import label_scores as LS
from mlsql.polars._engine import POLARS
from mlsql.polars.families import _classification as K
from mlsql.polars.families.ranking import EXAMPLE_SCORED, _distinct, _scores_check, label_scores

FAMILIES = (LS.FAMILY,)  # its functions written here (``__all__``): the average picks the segments
NEG_INF = float("-inf")


def _cells(actual: pl.Expr, entries: pl.Expr) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """The group's explicit cells, one per (known row, label): (cell struct, row index, n).

    A cell is {label, score, is_true}; the row index tells the rows apart.
    """
    known = actual.is_not_null() & entries.is_not_null()
    per_row = label_scores(entries, _distinct(actual), with_label=True)
    present = known & (per_row.list.len() > 0)
    cells = per_row.filter(present).explode()
    row = pl.int_range(pl.len()).filter(present)
    rows = row.repeat_by(per_row.filter(present).list.len()).explode()
    return cells, rows, known.sum()


def _starts(first: pl.Expr, value: pl.Expr) -> pl.Expr:
    """``value`` at the first cell of each stretch (``first`` marks them), carried forward.

    ``value`` must not decrease along the cells (a position, a running count).
    """
    return pl.when(first).then(value).otherwise(0).cum_max()


def _bind(scope: pl.Expr, **fields: pl.Expr) -> pl.Expr:
    """``scope`` (a struct per cell) with ``fields`` added, each reading the others by name."""
    return scope.struct.with_fields(**fields)


F = pl.field


def _sorted_cells(average: str, actual: pl.Expr, entries: pl.Expr) -> pl.Expr:
    """The cells as one struct series, sorted by segment ``g``, score from the highest
    (``ns`` = -score) and negatives first among ties, with the group's known rows ``n``
    and labels ``nl`` on every cell. Later fields read these by name, so the cells'
    expression is written a few times only, whatever the formula."""
    cells, rows, n = _cells(actual, entries)
    label = cells.struct.field("label")
    key = {"micro": label.is_null(), "samples": rows}.get(average, label)
    return pl.struct(
        g=key,
        ns=-cells.struct.field("score"),
        y=cells.struct.field("is_true"),
        n=n.cast(pl.Int64),
        nl=label.n_unique().cast(pl.Int64),
    ).sort()


def _runs(scope: pl.Expr) -> pl.Expr:
    """Per cell: where its segment and its run of equal scores start and end, its
    position ``i`` and the running count of positives ``cy``."""
    g, ns, y = F("g"), F("ns"), F("y").cast(pl.Int64)
    scope = _bind(
        scope,
        i=pl.int_range(1, F("g").len() + 1, dtype=pl.Int64),
        seg_first=(g != g.shift(1)).fill_null(True),
        seg_last=(g != g.shift(-1)).fill_null(True),
        cy=y.cum_sum(),
    )
    scope = _bind(
        scope,
        run_first=F("seg_first") | (ns != ns.shift(1)).fill_null(True),
        run_last=F("seg_last") | (ns != ns.shift(-1)).fill_null(True),
    )
    i, cy = F("i"), F("cy")
    scope = _bind(
        scope,
        at_or_above=i - _starts(F("seg_first"), i - 1),  # N(>= s) at a run's last cell
        positives_at_or_above=cy - _starts(F("seg_first"), cy - y),  # P(>= s) there
        run_positives=cy - _starts(F("run_first"), cy - y),
        run_length=i - _starts(F("run_first"), i - 1),
    )
    p = F("run_positives")
    return _bind(
        scope,
        precision=pl.when(F("run_last") & (F("ns") < -NEG_INF))
        .then(p * F("positives_at_or_above") / F("at_or_above"))
        .otherwise(0.0),
        # 2 x positives x (negatives at or above - tied negatives / 2), per run
        wrong=pl.when(F("run_last"))
        .then(p * (2 * (F("at_or_above") - F("positives_at_or_above")) - (F("run_length") - p)))
        .otherwise(0),
        unscored=(F("y") & (F("ns") == -NEG_INF)).cast(pl.Int64),
    )


def _per_segment(x: pl.Expr) -> pl.Expr:
    """Σ of ``x`` (>= 0) over each segment's cells, on its last cell."""
    running = x.cum_sum()
    return running - _starts(F("seg_first"), running - x)


def stats_of(average: str, skips: bool) -> Any:
    """The statistics under ``average`` over the inputs (actual, scores)."""

    def stats(actual: pl.Expr, entries: pl.Expr) -> LS.LabelScoreStats:
        scope = _runs(_sorted_cells(average, actual, entries))
        scope = _bind(
            scope,
            s_unscored=_per_segment(F("unscored")),
            s_precision=_per_segment(F("precision")),
            s_wrong=_per_segment(F("wrong")),
        )
        n, n_labels = F("n"), F("nl")
        n_explicit, n_positive = F("at_or_above"), F("positives_at_or_above")
        segment = LS.Segment(
            n_cells={"micro": n * n_labels, "samples": n_labels}.get(average, n),
            n_explicit=n_explicit,
            n_positive=n_positive,
            n_positive_unscored=F("s_unscored"),
            precision_sum=F("s_precision"),
            u=(n_explicit - n_positive) * n_positive - F("s_wrong") / 2,
        )
        n_known = _cells(actual, entries)[2]

        def total(name: str) -> pl.Expr:  # in the scope of the sums (below)
            return F("t").struct.field(f"_t_{name}").fill_null(0.0)

        def over_segments(per: Any, sums: dict[str, Any], finish: Any) -> pl.Expr:
            values = SimpleNamespace(**per(segment))
            totals = {
                f"_t_{k}": term(values).filter(F("seg_last")).sum().cast(pl.Float64)
                for k, term in sums.items()
            }
            totals["_t__segments"] = F("seg_last").sum().cast(pl.Float64)
            # the totals are the same on every cell; read them off one. Not with a bare
            # first(): Polars 2.1 pushes that slice into with_fields, whose sums then see
            # the first cell only (sort() stops it). Each total is a field of its own: a
            # struct of sums inside with_fields comes out wrong too.
            summed = _bind(scope, **totals).sort().first()
            result = finish({k: total(k) for k in sums})
            result = result if isinstance(result, pl.Expr) else pl.lit(result)
            return (
                pl.struct(t=summed, n=n_known).struct.with_fields(_out=result).struct.field("_out")
            )

        n_empty = {
            "micro": (total("_segments") == 0).cast(pl.Int64),
            "samples": F("n") - total("_segments"),
        }.get(average, pl.lit(0))
        return LS.LabelScoreStats(
            n=F("n"), over_segments=over_segments, n_empty=n_empty, skips=skips
        )

    return stats


def function_of(m: Measure) -> Any:
    """The Polars function of ``m``: its formula over the segments its average picks."""

    def build(actual: pl.Expr, entries: pl.Expr, *, average: str, zero_division: Any) -> pl.Expr:
        skips = bool(K.OPS.skips_undefined(zero_division))
        s = stats_of(average, skips)(actual, entries)
        out = m.build(K.OPS, s, average=average, zero_division=zero_division)  # type: ignore[misc]
        return out if isinstance(out, pl.Expr) else pl.lit(out)

    return K.documented(function(POLARS, m, build, _scores_check, sys.modules[__name__]), m)


def example(measure: Measure) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """The label-ranking measures' example table, its macro average."""
    return EXAMPLE_SCORED, {}


__all__: list[str] = []
for _m in measures(family=LS.FAMILY):
    if _m.build is not None and _m.available_in("polars"):
        globals()[_m.name] = function_of(lookup(_m))
        __all__.append(_m.name)
