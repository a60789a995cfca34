"""Averaged precision and ROC AUC over label scores in Spark: one fold over the group's cells.

The formulas are those of :mod:`mlsql.measures.label_scores`. The aggregate
collects each known row's labels (scored, or true without a score at
-infinity) with ``collect_list``, numbers the rows, and sorts the cells by
(segment, score from the highest, negatives first among ties) with
``array_sort``: the segment is the label (macro, weighted), the row (samples)
or one for all (micro). One pass (``aggregate``) over the sorted cells keeps
the current segment's counts and its current run of equal scores; when a run
ends it adds its positives x P(>= s) / N(>= s) and its wrongly ordered pairs,
and when a segment ends the segment's value is added to the average's sums.
No Python UDF; the group's cells are held in memory, as ``auc`` holds its
rows.

``multilabel_brier_score`` (:func:`brier_build`) folds each row's scored labels once (a
sum and a count over the group, streaming) and collects the distinct label sets
(``collect_set``) for the label universe: Spark has no aggregate that unions arrays.

With ``sample_weight`` the rows of positive weight are kept and each cell
carries its row's weight: the fold's counts become sums of weights (micro,
macro, weighted); under samples a row's cells weigh alike, so its value is
the unweighted one and its row's weight weighs it in the mean.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from mlsql._front.build import function, lookup
from mlsql._registry import Measure, measures
from mlsql.measures import label_scores as LS
from mlsql.spark._build import OPS, shared_example
from mlsql.spark._build import example as example_lines
from mlsql.spark._engine import SPARK
from mlsql.spark.families.class_scores import squared_errors
from mlsql.spark.families.ranking import (
    EXAMPLE_TYPES,
    _distinct,
    _fields_of,
    let,
    let_fields,
    score_entries,
    scores_as_map,
)
from mlsql.spark.families.scores import in_range
from mlsql.spark.ops import column, exact_sum

FAMILIES: tuple[str, ...] = ()  # built here: the average picks the segments
NEG_INF = float("-inf")


def _row_cells(func: str, actual: Column, scores: Column) -> Column:
    """A known row's cells {label, s, y}: its scored labels and its unscored true labels."""
    entries = score_entries(scores, _fields_of(func, scores))

    def cells(f: dict[str, Column]) -> Column:
        scored = F.transform(
            f["entries"],
            lambda e: F.struct(
                e["label"].alias("label"),
                (e["score"] + F.lit(0.0)).alias("s"),
                F.array_contains(f["truth"], e["label"]).alias("y"),
            ),
        )
        labels = F.transform(f["entries"], lambda e: e["label"])
        unscored = F.transform(
            F.filter(f["truth"], lambda t: ~F.array_contains(labels, t)),
            lambda t: F.struct(t.alias("label"), F.lit(NEG_INF).alias("s"), F.lit(True).alias("y")),
        )
        return F.concat(scored, unscored)

    known = actual.isNotNull() & scores.isNotNull()
    return F.when(known, let_fields({"entries": entries, "truth": _distinct(actual)}, cells))


def descending(score: Column) -> list[Column]:
    """The sort key of a cell's score, from the highest: ``nn`` (0 for NaN, which Spark and
    DuckDB order above +infinity, all NaNs equal; else 1), then ``ns`` (-score; 0 for NaN).

    Negating the score alone put NaN last (Spark orders NaN above every double), below
    every score, where DuckDB and Polars put it above.
    """
    nan = F.isnan(score)
    return [
        F.when(nan, F.lit(0)).otherwise(F.lit(1)).alias("nn"),
        F.when(nan, F.lit(0.0)).otherwise(-score).alias("ns"),
    ]


def _fold(
    keyed: Column,
    n_cells: Callable[[], Column],
    per: Callable[[LS.Segment], dict[str, Any]],
    sums: dict[str, Callable[[Any], Any]],
    cell_weights: bool = False,
    segment_weights: bool = False,
) -> Column:
    """The sums of ``sums[k](per(segment))`` over the segments of cells {g, nn, ns, y, w}
    sorted (:func:`descending`).

    ``cell_weights``: each cell counts its weight ``w`` (else 1); ``segment_weights``: a
    segment weighs the ``w`` of its cells in a mean (else 1).
    """
    zero = F.lit(0).cast("double" if cell_weights else "long")
    start = F.struct(
        F.lit(None).cast("string").alias("g"),
        F.lit(None).cast("int").alias("nn"),
        F.lit(None).cast("double").alias("ns"),
        F.lit(None).cast("double").alias("w"),  # the current segment's cells' weight
        zero.alias("n"),  # the segment's cells so far
        zero.alias("pos"),  # its positives so far
        zero.alias("unscored"),  # its unscored positives
        zero.alias("run_pos"),
        zero.alias("run_neg"),
        F.lit(0.0).alias("precision"),
        zero.alias("wrong2"),  # 2 x Σ over runs of positives x (negatives at or above - tied / 2)
        *(F.lit(0.0).alias(k) for k in sums),
    )

    def run_closed(acc: Column) -> tuple[Column, Column]:
        """(precision, wrong2) with the current run counted."""
        p = acc["run_pos"]
        scored = acc["ns"] < F.lit(-NEG_INF)
        precision = acc["precision"] + F.when(
            (p > 0) & scored, p * acc["pos"] / acc["n"]
        ).otherwise(0.0)
        wrong2 = acc["wrong2"] + p * (2 * (acc["n"] - acc["pos"]) - acc["run_neg"])
        return precision, wrong2

    def segment_closed(acc: Column) -> dict[str, Column]:
        """The sums with the current segment counted (nothing before the first cell)."""
        precision, wrong2 = run_closed(acc)
        n, pos = acc["n"], acc["pos"]
        segment = LS.Segment(
            n_cells=n_cells(),
            n_explicit=n,
            n_positive=pos,
            n_positive_unscored=acc["unscored"],
            precision_sum=precision,
            u=(n - pos) * pos - wrong2 / 2,
            weight=acc["w"] if segment_weights else 1,
        )
        values = SimpleNamespace(**per(segment))
        return {
            k: acc[k] + F.when(n > 0, column(term(values))).otherwise(0.0)
            for k, term in sums.items()
        }

    def step(acc: Column, x: Column) -> Column:
        new_segment = ~x["g"].eqNullSafe(acc["g"])
        new_run = new_segment | ~x["ns"].eqNullSafe(acc["ns"]) | ~x["nn"].eqNullSafe(acc["nn"])
        y = x["y"].cast("long")
        one = x["w"] if cell_weights else F.lit(1)
        precision, wrong2 = run_closed(acc)
        closed = segment_closed(acc)

        def reset(value: Column, otherwise: Column) -> Column:
            return F.when(new_segment, value).otherwise(otherwise)

        unscored = (x["y"] & (x["ns"] == F.lit(-NEG_INF))).cast("long")
        return F.struct(
            x["g"].alias("g"),
            x["nn"].alias("nn"),
            x["ns"].alias("ns"),
            (x["w"] if cell_weights or segment_weights else acc["w"]).alias("w"),
            (reset(zero, acc["n"]) + one).alias("n"),
            (reset(zero, acc["pos"]) + y * one).alias("pos"),
            (reset(zero, acc["unscored"]) + unscored * one).alias("unscored"),
            (F.when(new_run, zero).otherwise(acc["run_pos"]) + y * one).alias("run_pos"),
            (F.when(new_run, zero).otherwise(acc["run_neg"]) + (1 - y) * one).alias("run_neg"),
            reset(F.lit(0.0), F.when(new_run, precision).otherwise(acc["precision"])).alias(
                "precision"
            ),
            reset(zero, F.when(new_run, wrong2).otherwise(acc["wrong2"])).alias("wrong2"),
            *(reset(closed[k], acc[k]).alias(k) for k in sums),
        )

    def finish(acc: Column) -> Column:
        closed = segment_closed(acc)
        return F.struct(*(closed[k].alias(k) for k in sums))

    return F.aggregate(F.array_sort(keyed), start, step, finish)


def _group_cells(
    func: str, actual: Column, scores: Column, weight: Column | None
) -> tuple[Column, dict[str, Column]]:
    """The group's cells {label, s, y, r} (r: the row's number; weighted: also the row's
    weight ``w``, rows of weight 0 left out) and aggregates beside them: the known rows
    ``n``; weighted, their weight ``wsum``, their rows of positive weight ``npos`` and the
    weight ``wcells`` of the rows with a cell."""
    known = actual.isNotNull() & scores.isNotNull()
    n = F.count(F.when(known, 1))
    if weight is None:
        rows = F.collect_list(_row_cells(func, actual, scores))
        flat = F.flatten(
            F.transform(
                rows,
                lambda cells, i: F.transform(
                    cells, lambda c: F.struct(c["label"], c["s"], c["y"], i.alias("r"))
                ),
            )
        )
        return flat, {"n": n}
    kept = known & (weight > 0)
    row = F.struct(_row_cells(func, actual, scores).alias("cells"), weight.alias("w"))
    rows = F.collect_list(F.when(kept, row))
    flat = F.flatten(
        F.transform(
            rows,
            lambda x, i: F.transform(
                x["cells"],
                lambda c: F.struct(c["label"], c["s"], c["y"], i.alias("r"), x["w"].alias("w")),
            ),
        )
    )
    with_cells = F.aggregate(
        rows, F.lit(0.0), lambda acc, x: acc + F.when(F.size(x["cells"]) > 0, x["w"]).otherwise(0.0)
    )
    return flat, {
        "n": n,
        "wsum": F.coalesce(F.sum(F.when(known, weight)), F.lit(0.0)),
        "npos": F.count(F.when(kept, 1)),
        "wcells": with_cells,
    }


def build_of(m: Measure) -> Callable[..., Column]:
    """The Column of ``m`` over (actual, scores[, sample_weight]) for one average and
    zero_division."""

    def build(
        actual: Column,
        scores: Column,
        *,
        average: str,
        zero_division: Any,
        sample_weight: Column | None = None,
    ) -> Column:
        weighted = sample_weight is not None
        flat, fields = _group_cells(m.name, actual, scores, sample_weight)
        row_weight = weighted and average == "samples"

        def formula(g: dict[str, Column]) -> Column:
            cells, n = g["cells"], g["n"]
            n_labels = F.size(F.array_distinct(F.transform(cells, lambda c: c["label"])))
            key = {
                "micro": lambda c: F.lit(""),
                "samples": lambda c: c["r"].cast("string"),
            }.get(average, lambda c: c["label"].cast("string"))
            weight = (lambda c: [c["w"]]) if weighted else (lambda c: [])
            keyed = F.transform(
                cells,
                lambda c: F.struct(key(c).alias("g"), *descending(c["s"]), c["y"], *weight(c)),
            )
            cell_weight = g["wsum"] if weighted else n
            n_cells = {
                "micro": lambda: cell_weight * n_labels,
                "samples": lambda: n_labels,
            }.get(average, lambda: cell_weight)

            def over_segments(per: Any, sums: dict[str, Any], finish: Any) -> Column:
                folded = _fold(keyed, n_cells, per, sums, weighted and not row_weight, row_weight)
                return let(folded, lambda t: finish({k: t[k] for k in sums}))

            n_rows_with_cells = F.size(F.array_distinct(F.transform(cells, lambda c: c["r"])))
            n_empty = {
                "micro": F.when(F.size(cells) == 0, 1).otherwise(0),
                "samples": (g["npos"] if weighted else n) - n_rows_with_cells,
            }.get(average, F.lit(0))
            skips = bool(OPS.skips_undefined(zero_division))
            stats = LS.LabelScoreStats(
                n=n,
                over_segments=over_segments,
                n_empty=n_empty,
                skips=skips,
                empty_weight=g["wsum"] - g["wcells"] if row_weight else None,
                zero_weight=g["wsum"] == 0 if weighted else False,
            )
            return m.build(OPS, stats, average=average, zero_division=zero_division)  # type: ignore[misc]

        return let_fields({"cells": flat, **fields}, formula)

    return build


def _brier_row(func: str, actual: Column, scores: Column) -> Column:
    """A known row's Σ of squared errors over its scored and true labels (``loss``), its
    labels sorted (``labels``) and its lowest and highest probability (``low``, ``high``;
    checked over the group, as ``multiclass_brier_score`` checks them)."""
    entries = score_entries(scores, _fields_of(func, scores))

    def row(f: dict[str, Column]) -> Column:
        truth = f["truth"]
        folded = squared_errors(func, entries, lambda label: F.array_contains(truth, label))
        labels = F.transform(entries, lambda e: e["label"])
        unscored = F.size(F.filter(truth, lambda t: ~F.array_contains(labels, t)))
        return F.struct(
            (folded["loss"] + unscored).alias("loss"),
            F.array_sort(F.array_distinct(F.concat(truth, labels))).alias("labels"),
            folded["low"].alias("low"),
            folded["high"].alias("high"),
        )

    return let_fields({"truth": _distinct(actual)}, row)


def _brier_rows(
    m: Measure, actual: Column, scores: Column, sample_weight: Column | None
) -> tuple[Column, Column, Column]:
    """A row's Brier terms (:func:`_brier_row`), whether it is known (both inputs, and its
    weight when weighted) and whether its labels count in the universe (known, and of
    positive weight when weighted)."""
    known = actual.isNotNull() & scores.isNotNull()
    if sample_weight is not None:
        known = known & sample_weight.isNotNull()
    counted = known if sample_weight is None else known & (sample_weight > 0)
    return _brier_row(m.name, actual, scores), known, counted


def brier_build(m: Measure, n_labels: Column | None = None) -> Callable[..., Column]:
    """The Column of ``multilabel_brier_score``: a sum and a count over the known rows, and
    the number of labels from the group's distinct label sets (``collect_set``), or
    ``n_labels`` (an aggregate) where the caller counted them (``ms.evaluate``:
    :mod:`mlsql.spark.evaluate_brier`)."""

    def build(
        actual: Column, scores: Column, *, average: str, sample_weight: Column | None = None
    ) -> Column:
        row, known, counted = _brier_rows(m, actual, scores, sample_weight)
        w = F.lit(1.0) if sample_weight is None else sample_weight
        n = F.count(F.when(known, 1)) if sample_weight is None else F.sum(F.when(known, w))
        if n_labels is None:
            sets = F.collect_set(F.when(counted, row["labels"]))
            labels = F.size(F.array_distinct(F.flatten(sets)))
        else:
            labels = n_labels
        low, high = (F.when(known, row[k]) for k in ("low", "high"))
        stats = LS.LabelBrierStats(
            n=in_range(m.name, "scores", low, n, high=high),
            total_loss=exact_sum(F.when(known, row["loss"] * w)),
            n_labels=labels,
        )
        return column(m.build(OPS, stats, average=average))  # type: ignore[misc]

    return build


def brier_labels(m: Measure) -> Callable[..., Column]:
    """A row's labels (true and scored, distinct) where they count in the group's label
    universe, else NULL: a row expression, which ``ms.evaluate`` explodes and counts per
    group instead of collecting the label sets."""

    def build(
        actual: Column, scores: Column, *, average: str, sample_weight: Column | None = None
    ) -> Column:
        row, _, counted = _brier_rows(m, actual, scores, sample_weight)
        return F.when(counted, row["labels"])

    return build


def _example(m: Measure) -> list[str]:
    found = shared_example(m, EXAMPLE_TYPES)
    assert found is not None, m.name  # every label-score function has one
    rows, schema, params, output = found
    return example_lines(m.name, m.kind, rows, schema, m.inputs, params, output)


_THIS = sys.modules[__name__]
__all__: list[str] = []
for _m in measures(family=LS.FAMILY):
    if _m.build is not None and _m.available_in("spark"):
        of = build_of if _m.name in LS.SEGMENT_MEASURES else brier_build
        globals()[_m.name] = function(
            SPARK, lookup(_m), of(_m), scores_as_map, _THIS, example=_example(_m)
        )
        __all__.append(_m.name)
