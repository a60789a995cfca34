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
from mlsql.spark._build import OPS
from mlsql.spark._engine import SPARK
from mlsql.spark.families.ranking import (
    _distinct,
    _fields_of,
    _scores_check,
    let,
    let_fields,
    score_entries,
)
from mlsql.spark.ops import column

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


def _fold(
    keyed: Column,
    n_cells: Callable[[], Column],
    per: Callable[[LS.Segment], dict[str, Any]],
    sums: dict[str, Callable[[Any], Any]],
) -> Column:
    """The sums of ``sums[k](per(segment))`` over the segments of cells {g, ns, y} sorted."""
    zero = F.lit(0).cast("long")
    start = F.struct(
        F.lit(None).cast("string").alias("g"),
        F.lit(None).cast("double").alias("ns"),
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
        )
        values = SimpleNamespace(**per(segment))
        return {
            k: acc[k] + F.when(n > 0, column(term(values))).otherwise(0.0)
            for k, term in sums.items()
        }

    def step(acc: Column, x: Column) -> Column:
        new_segment = ~x["g"].eqNullSafe(acc["g"])
        new_run = new_segment | ~x["ns"].eqNullSafe(acc["ns"])
        y = x["y"].cast("long")
        precision, wrong2 = run_closed(acc)
        closed = segment_closed(acc)

        def reset(value: Column, otherwise: Column) -> Column:
            return F.when(new_segment, value).otherwise(otherwise)

        unscored = (x["y"] & (x["ns"] == F.lit(-NEG_INF))).cast("long")
        return F.struct(
            x["g"].alias("g"),
            x["ns"].alias("ns"),
            (reset(zero, acc["n"]) + 1).alias("n"),
            (reset(zero, acc["pos"]) + y).alias("pos"),
            (reset(zero, acc["unscored"]) + unscored).alias("unscored"),
            (F.when(new_run, zero).otherwise(acc["run_pos"]) + y).alias("run_pos"),
            (F.when(new_run, zero).otherwise(acc["run_neg"]) + (1 - y)).alias("run_neg"),
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


def build_of(m: Measure) -> Callable[..., Column]:
    """The Column of ``m`` over (actual, scores) for one average and zero_division."""

    def build(actual: Column, scores: Column, *, average: str, zero_division: Any) -> Column:
        rows = F.collect_list(_row_cells(m.name, actual, scores))
        n_known = F.count(F.when(actual.isNotNull() & scores.isNotNull(), 1))
        flat = F.flatten(
            F.transform(
                rows,
                lambda cells, i: F.transform(
                    cells, lambda c: F.struct(c["label"], c["s"], c["y"], i.alias("r"))
                ),
            )
        )

        def formula(g: dict[str, Column]) -> Column:
            cells, n = g["cells"], g["n"]
            n_labels = F.size(F.array_distinct(F.transform(cells, lambda c: c["label"])))
            key = {
                "micro": lambda c: F.lit(""),
                "samples": lambda c: c["r"].cast("string"),
            }.get(average, lambda c: c["label"].cast("string"))
            keyed = F.transform(
                cells, lambda c: F.struct(key(c).alias("g"), (-c["s"]).alias("ns"), c["y"])
            )
            n_cells = {"micro": lambda: n * n_labels, "samples": lambda: n_labels}.get(
                average, lambda: n
            )

            def over_segments(per: Any, sums: dict[str, Any], finish: Any) -> Column:
                folded = _fold(keyed, n_cells, per, sums)
                return let(folded, lambda t: finish({k: t[k] for k in sums}))

            n_rows_with_cells = F.size(F.array_distinct(F.transform(cells, lambda c: c["r"])))
            n_empty = {
                "micro": F.when(F.size(cells) == 0, 1).otherwise(0),
                "samples": n - n_rows_with_cells,
            }.get(average, F.lit(0))
            skips = bool(OPS.skips_undefined(zero_division))
            stats = LS.LabelScoreStats(
                n=n, over_segments=over_segments, n_empty=n_empty, skips=skips
            )
            return m.build(OPS, stats, average=average, zero_division=zero_division)  # type: ignore[misc]

        return let_fields({"cells": flat, "n": n_known}, formula)

    return build


_THIS = sys.modules[__name__]
__all__: list[str] = []
for _m in measures(family=LS.FAMILY):
    if _m.build is not None and _m.available_in("spark"):
        globals()[_m.name] = function(SPARK, lookup(_m), build_of(_m), _scores_check, _THIS)
        __all__.append(_m.name)
