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

With ``sample_weight`` the rows of positive weight are kept and each cell
weighs its row's weight: the positions become running sums of the weights
(micro, macro, weighted); under samples a row's cells all weigh the same, so
its value is the unweighted one and the row's weight weighs it in the mean.

Native (:mod:`mlsql.polars._native`, when the plugin is enabled and both the
true labels and the scores' labels are text or integers): the segments'
statistics come from one call per group of the plugin's aggregate
(``native/label_scores.h``, the DuckDB extension's too), which keeps per group
a table of (label, score) -> positive and negative weight (micro: score ->
weights) and, under samples, each row's statistics summed per kind of row;
memory grows with the group's distinct (label, score) cells, not with its
cells. The formulas on top are the registry's, as on the portable path, and
the numbers the same. Other label types (floats, dates...) stay portable.

``multilabel_brier_score`` is a sum and a count (:func:`brier_stats`): each known row's
scored labels exploded into cells beside the row's true labels (no ``list.eval`` run row by
row), and the group's labels exploded and counted distinct (the streaming engine runs that
aggregation in memory).

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
from mlsql.measures import class_scores as CS
from mlsql.measures import label_scores as LS
from mlsql.polars import _native
from mlsql.polars._engine import POLARS
from mlsql.polars.families import _classification as K
from mlsql.polars.families import class_scores as CSP
from mlsql.polars.families.ranking import _distinct, _scores_check, label_scores
from mlsql.polars.ops import concat_lists

FAMILIES = (LS.FAMILY,)  # its functions written here (``__all__``): the average picks the segments
NEG_INF = float("-inf")


def _known(actual: pl.Expr, entries: pl.Expr) -> pl.Expr:
    """The rows where neither input is NULL."""
    return actual.is_not_null() & entries.is_not_null()


def _weight_totals(actual: pl.Expr, entries: pl.Expr, weight: pl.Expr) -> dict[str, pl.Expr]:
    """The known rows' weight ``wsum`` and their number of rows of positive weight ``npos``."""
    known = _known(actual, entries)
    return {
        "wsum": weight.filter(known).sum().cast(pl.Float64),
        "npos": (known & (weight > 0)).sum().cast(pl.Int64),
    }


def _starts(first: pl.Expr, value: pl.Expr) -> pl.Expr:
    """``value`` at the first cell of each stretch (``first`` marks them), carried forward.

    ``value`` must not decrease along the cells (a position, a running count).
    """
    return pl.when(first).then(value).otherwise(0).cum_max()


def _on_every_cell(x: pl.Expr) -> pl.Expr:
    """The sum of ``x`` (NULL counts 0) on every cell, in the order of the cells.

    Not ``x.sum()``: a sum inside ``struct.with_fields`` comes out Null-typed in a
    ``group_by`` over no groups (Polars 2.1), a SchemaError; a running sum read off the
    last cell and filled back keeps the cells' length.
    """
    running = x.fill_null(0).cum_sum()
    return pl.when(running.shift(-1).is_null()).then(running).otherwise(None).backward_fill()


def _bind(scope: pl.Expr, **fields: pl.Expr) -> pl.Expr:
    """``scope`` (a struct per cell) with ``fields`` added, each reading the others by name."""
    return scope.struct.with_fields(**fields)


F = pl.field


def _sorted_cells(
    average: str, actual: pl.Expr, entries: pl.Expr, weight: pl.Expr | None = None
) -> pl.Expr:
    """The group's explicit cells, one per (known row, label), as one struct series sorted
    by segment ``g``, score from the highest (``nn`` 0 for NaN, the highest; then ``ns`` =
    -score, 0 for NaN) and negatives first among ties, with the group's known rows ``n`` and labels ``nl`` on every cell (weighted: the
    cell's row weight ``w``, and ``wsum`` and ``npos`` of :func:`_weight_totals`; the rows
    of weight 0 have no cell).

    A row's cells (:func:`~mlsql.polars.families.ranking.label_scores`, a list
    evaluation per row that Polars does not share between two uses) are computed
    once and exploded once: every field is derived from them by name, the row of a
    cell from the running count of rows' first cells. Weighted, the weights are
    spread over the cells by the rows' numbers of cells (a second evaluation).
    """
    known = _known(actual, entries)
    present = known if weight is None else known & (weight > 0)
    per_row = label_scores(entries, _distinct(actual), with_label=True, with_start=True)
    per_row = per_row.filter(present)
    # the cells, and what the group gives every cell (scalars, broadcast by pl.struct)
    outer: dict[str, pl.Expr] = {"c": per_row.explode(), "_n": known.sum().cast(pl.Int64)}
    if weight is not None:
        outer["_w"] = weight.filter(present).repeat_by(per_row.list.len()).explode()
        outer.update({f"_{k}": v for k, v in _weight_totals(actual, entries, weight).items()})
    cell = F("c")
    label, score = cell.struct.field("label"), cell.struct.field("score")
    row = cell.struct.field("start").cum_sum()  # a row starts at its first cell
    key = {"micro": label.is_null(), "samples": row}.get(average, label)
    fields = {
        "g": key,
        # scores from the highest, a NaN above +infinity (DuckDB's and Spark's order of
        # doubles; all NaNs one score): NaNs first (nn = 0), then -score
        "nn": score.is_nan().not_().cast(pl.Int8),
        "ns": pl.when(score.is_nan()).then(0.0).otherwise(-score),
        "y": cell.struct.field("is_true"),
        "n": F("_n"),
        "nl": _on_every_cell(label.is_first_distinct().cast(pl.Int64)),
        **{k[1:]: F(k) for k in outer if k not in ("c", "_n")},
    }
    scope = pl.struct([value.alias(name) for name, value in outer.items()])
    return _bind(scope, **fields).struct.drop(list(outer)).sort()


def _runs(scope: pl.Expr, weighted: bool = False) -> pl.Expr:
    """Per cell: where its segment and its run of equal scores start and end, its
    position ``i`` and the running count of positives ``cy`` (``weighted``: running sums
    of the cells' weights ``w``)."""
    g, nn, ns, y = F("g"), F("nn"), F("ns"), F("y").cast(pl.Int64)
    if weighted:
        y = y * F("w")
        i = F("w").cum_sum()
    else:
        i = pl.int_range(1, F("g").len() + 1, dtype=pl.Int64)
    scope = _bind(
        scope,
        i=i,
        seg_first=(g != g.shift(1)).fill_null(True),
        seg_last=(g != g.shift(-1)).fill_null(True),
        cy=y.cum_sum(),
    )
    scope = _bind(
        scope,
        run_first=F("seg_first")
        | (ns != ns.shift(1)).fill_null(True)
        | (nn != nn.shift(1)).fill_null(True),
        run_last=F("seg_last")
        | (ns != ns.shift(-1)).fill_null(True)
        | (nn != nn.shift(-1)).fill_null(True),
    )
    i, cy = F("i"), F("cy")
    # what the running sums were before the cell (exact, never below an earlier value)
    i_before, cy_before = (
        (i.shift(1, fill_value=0), cy.shift(1, fill_value=0)) if weighted else (i - 1, cy - y)
    )
    scope = _bind(
        scope,
        at_or_above=i - _starts(F("seg_first"), i_before),  # N(>= s) at a run's last cell
        positives_at_or_above=cy - _starts(F("seg_first"), cy_before),  # P(>= s) there
        run_positives=cy - _starts(F("run_first"), cy_before),
        run_length=i - _starts(F("run_first"), i_before),
    )
    p = F("run_positives")
    scored = (F("ns") < -NEG_INF) | (F("nn") == 0)  # a NaN is a score, above every other
    unscored = (F("y") & ~scored).cast(pl.Int64)
    return _bind(
        scope,
        precision=pl.when(F("run_last") & scored)
        .then(p * F("positives_at_or_above") / F("at_or_above"))
        .otherwise(0.0),
        # 2 x positives x (negatives at or above - tied negatives / 2), per run
        wrong=pl.when(F("run_last"))
        .then(p * (2 * (F("at_or_above") - F("positives_at_or_above")) - (F("run_length") - p)))
        .otherwise(0),
        unscored=unscored * F("w") if weighted else unscored,
    )


def _per_segment(x: pl.Expr) -> pl.Expr:
    """Σ of ``x`` (>= 0) over each segment's cells, on its last cell."""
    running = x.cum_sum()
    return running - _starts(F("seg_first"), running - x)


def _n_cells(average: str, cell_weight: pl.Expr, n_labels: pl.Expr) -> pl.Expr:
    """What a segment's cells weigh, the unscored negatives too: every (row, label) cell
    pooled (micro), a label's rows (macro, weighted) or a row's labels (samples)."""
    return {"micro": cell_weight * n_labels, "samples": n_labels}.get(average, cell_weight)


def _stats(
    average: str,
    weighted: bool,
    skips: bool,
    over_segments: Any,
    segments: pl.Expr,
    rows: pl.Expr,
    segment_weight: pl.Expr,
) -> LS.LabelScoreStats:
    """The statistics of :class:`LS.LabelScoreStats`, read in the scope of the sums (``n``,
    ``npos``, ``wsum`` and the totals there): the group has ``segments`` segments; under
    samples ``rows`` known rows of positive weight have one, weighing ``segment_weight``."""
    n_empty = {
        "micro": (segments == 0).cast(pl.Int64),
        "samples": F("npos" if weighted else "n") - rows,
    }.get(average, pl.lit(0))
    return LS.LabelScoreStats(
        n=F("n"),
        over_segments=over_segments,
        n_empty=n_empty,
        skips=skips,
        empty_weight=F("wsum") - segment_weight if weighted and average == "samples" else None,
        zero_weight=F("wsum") == 0 if weighted else False,
    )


def stats_of(average: str, skips: bool) -> Any:
    """The statistics under ``average`` over the inputs (actual, scores[, weight])."""

    def stats(
        actual: pl.Expr, entries: pl.Expr, weight: pl.Expr | None = None
    ) -> LS.LabelScoreStats:
        weighted = weight is not None
        # under samples a row's cells weigh alike: its value is the unweighted one
        row_weight = weighted and average == "samples"
        cells = _sorted_cells(average, actual, entries, weight)
        scope = _runs(cells, weighted and not row_weight)
        scope = _bind(
            scope,
            s_unscored=_per_segment(F("unscored")),
            s_precision=_per_segment(F("precision")),
            s_wrong=_per_segment(F("wrong")),
        )
        n, n_labels = F("n"), F("nl")
        cell_weight = F("wsum") if weighted else n
        n_explicit, n_positive = F("at_or_above"), F("positives_at_or_above")
        segment = LS.Segment(
            n_cells=_n_cells(average, cell_weight, n_labels),
            n_explicit=n_explicit,
            n_positive=n_positive,
            n_positive_unscored=F("s_unscored"),
            precision_sum=F("s_precision"),
            u=(n_explicit - n_positive) * n_positive - F("s_wrong") / 2,
            weight=F("w") if row_weight else 1,
        )
        outer: dict[str, Any] = {"n": _known(actual, entries).sum().cast(pl.Int64)}
        if weight is not None:
            outer.update(_weight_totals(actual, entries, weight))

        def total(name: str) -> pl.Expr:  # in the scope of the sums (below)
            return F("t").struct.field(f"_t_{name}").fill_null(0.0)

        def over_segments(per: Any, sums: dict[str, Any], finish: Any) -> pl.Expr:
            values = SimpleNamespace(**per(segment))
            last = F("seg_last")

            def per_segment_sum(x: pl.Expr) -> pl.Expr:
                return _on_every_cell(pl.when(last).then(x).otherwise(0.0).cast(pl.Float64))

            totals = {f"_t_{k}": per_segment_sum(term(values)) for k, term in sums.items()}
            totals["_t__segments"] = per_segment_sum(last.cast(pl.Float64))
            if row_weight:
                totals["_t__segment_weight"] = per_segment_sum(F("w"))
            # the totals are the same on every cell; read them off one. Not with a bare
            # first(): Polars 2.1 pushes that slice into with_fields, whose sums then see
            # the first cell only (sort() stops it). Each total is a field of its own: a
            # struct of sums inside with_fields comes out wrong too.
            summed = _bind(scope, **totals).sort().first()
            result = finish({k: total(k) for k in sums})
            result = result if isinstance(result, pl.Expr) else pl.lit(result)
            return pl.struct(t=summed, **outer).struct.with_fields(_out=result).struct.field("_out")

        segments = total("_segments")  # a row's cells are one segment under samples
        return _stats(
            average, weighted, skips, over_segments, segments, segments, total("_segment_weight")
        )

    return stats


def native_stats_of(average: str, skips: bool) -> Any:
    """:func:`stats_of` through the native plugin's aggregate (:func:`_native.label_scores`).

    Per group the plugin gives the known rows ``n`` (weighted: ``npos`` of positive
    weight, their weight ``wsum``), the number of labels ``nu`` and the segments'
    statistics ``segs``: one struct, whose fields the formula reads (the plugin runs
    once however often they are read); the sums over the segments read its exploded
    list.
    """

    def stats(
        actual: pl.Expr, entries: pl.Expr, weight: pl.Expr | None = None
    ) -> LS.LabelScoreStats:
        weighted = weight is not None
        samples = average == "samples"
        scope = _native.label_scores(actual, entries, average, weight)
        # an empty list explodes to one NULL on older Polars: no segment
        segs = F("segs").explode().drop_nulls()

        def seg(name: str) -> pl.Expr:
            return segs.struct.field(name)

        segment = LS.Segment(
            n_cells=_n_cells(average, F("wsum") if weighted else F("n"), F("nu")),
            **{f: seg(f) for f in SEGMENT_FIELDS},
            weight=seg("w") if samples else 1,
        )

        def over_segments(per: Any, sums: dict[str, Any], finish: Any) -> pl.Expr:
            values = SimpleNamespace(**per(segment))
            totals = {f"_t_{k}": term(values).sum().cast(pl.Float64) for k, term in sums.items()}
            totals["_t__segments"] = segs.len().cast(pl.Int64)
            totals["_t__rows"] = seg("rows").sum().cast(pl.Int64)
            totals["_t__segment_weight"] = seg("w").sum().cast(pl.Float64)
            result = finish({k: F(f"_t_{k}") for k in sums})
            result = result if isinstance(result, pl.Expr) else pl.lit(result)
            summed = scope.struct.with_fields(**totals)
            return summed.struct.with_fields(_out=result).struct.field("_out")

        return _stats(
            average,
            weighted,
            skips,
            over_segments,
            F("_t__segments"),
            F("_t__rows"),
            F("_t__segment_weight"),
        )

    return stats


#: the segment statistics the native aggregate gives (:class:`mlsql.measures.label_scores.Segment`)
SEGMENT_FIELDS = ("n_explicit", "n_positive", "n_positive_unscored", "precision_sum", "u")


def function_of(m: Measure) -> Any:
    """The Polars function of ``m``: its formula over the segments its average picks, from
    the native plugin where it reads the labels (see the module's notes), else portable."""

    def build(
        actual: pl.Expr,
        entries: pl.Expr,
        *,
        average: str,
        zero_division: Any,
        sample_weight: pl.Expr | None = None,
    ) -> pl.Expr:
        skips = bool(K.OPS.skips_undefined(zero_division))

        def formula(stats: Any, a: pl.Expr, e: pl.Expr) -> pl.Expr:
            s = stats(average, skips)(a, e, sample_weight)
            out = m.build(K.OPS, s, average=average, zero_division=zero_division)  # type: ignore[misc]
            return out if isinstance(out, pl.Expr) else pl.lit(out)

        if not _native.enabled():
            return formula(stats_of, actual, entries)

        def resolved(pairs: list[tuple[pl.Expr, pl.DataType]]) -> pl.Expr:
            (a, a_type), (e, e_type) = pairs
            native = _native.supports_label_scores(a_type, e_type)
            return formula(native_stats_of if native else stats_of, a, e)

        return pl.pipe_with_dtype([actual, entries], resolved)

    return K.documented(function(POLARS, m, build, _scores_check, sys.modules[__name__]), m)


def brier_stats(
    m: Measure, actual: pl.Expr, entries: pl.Expr, weight: pl.Expr | None = None
) -> LS.LabelBrierStats:
    """The group's known rows (their weight), Σ of their squared errors and its labels.

    Each known row's scored labels (a label's first entry, NULL labels and scores dropped,
    each probability checked as ``multiclass_brier_score`` checks it) are exploded into one
    cell per (row, label), each beside its row's distinct true labels and weight: Σ over the
    cells of (p - [label is true])², plus, per row, its true labels without a score (a list
    intersection). No ``list.eval`` runs row by row. The labels are the known rows' scored and
    true labels (rows of positive weight), exploded and counted distinct.
    """
    mask = K.known(actual, entries) if weight is None else K.known(actual, entries, weight)
    w = pl.lit(1.0) if weight is None else weight.cast(pl.Float64)
    truth = actual.list.drop_nulls().list.unique()
    rows = CSP._Rows(truth, entries, mask, w)
    s, t = rows.s, rows.t
    size = s.list.len()
    unscored = t.list.len() - t.list.set_intersection(s.list.eval(CSP._LABEL)).list.len()
    # an empty list explodes to one NULL cell, and so does its row repeated 0 times
    cells = pl.struct(
        c=rows(s).explode(), tw=rows(pl.struct(t=t, w=rows.w).repeat_by(size)).explode()
    )
    # each cell's term reads the cell once: a one-element list evaluated with list.eval (a
    # struct.with_fields scope is refused over exploded cells in group_by)
    c, tw = pl.element().struct.field("c"), pl.element().struct.field("tw")
    label, score = c.struct.field("label"), c.struct.field("score").cast(pl.Float64)
    cell = CS.class_squared_error(K.OPS, score, tw.struct.field("t").list.contains(label))
    if weight is not None:
        cell = cell * tw.struct.field("w")
    cell_sum = pl.concat_list(cells).list.eval(cell).list.first().sum()
    loss = cell_sum + rows(unscored.cast(pl.Float64) * rows.w).sum()
    labels = rows(concat_lists(s.list.eval(CSP._LABEL), t))
    counted = mask if weight is None else mask & (w > 0)
    n_labels = pl.when(counted).then(labels).explode().drop_nulls().n_unique()
    return LS.LabelBrierStats(
        n=pl.when(mask).then(w).sum() if weight is not None else mask.sum().cast(pl.Int64),
        total_loss=rows.checked(m, loss),
        n_labels=n_labels,
    )


def brier_function_of(m: Measure) -> Any:
    """The Polars function of ``multilabel_brier_score``: its formula over sums."""
    return K.direct(
        m,
        lambda a, e, weight=None: brier_stats(m, a, e, weight),
        _scores_check,
        sys.modules[__name__],
    )


__all__: list[str] = []
for _m in measures(family=LS.FAMILY):
    if _m.build is not None and _m.available_in("polars"):
        of = function_of if _m.name in LS.SEGMENT_MEASURES else brier_function_of
        globals()[_m.name] = of(lookup(_m))
        __all__.append(_m.name)
