"""``ms.evaluate`` of the binned and calibration measures in bounded memory: cells per bin.

As one Spark Column, ``binned_auc``, ``binned_average_precision_score`` and the
calibration errors collect the group's (bin, ...) pairs and sort them
(:mod:`mlsql.spark.families.scores`): a sum per bin overflows Spark's planner
when the bins are many. ``evaluate`` knows the whole query, so it counts per bin
with a ``groupBy`` instead, and memory grows with groups x bins, never with rows:

- the threshold grid (``binned_*``): a row's value depends on its score only
  through its bin on the grid (:func:`mlsql.measures.scores.grid_bin`), so the
  rows become cells ``(by..., actual, bin)`` with their total weight, and the
  same Columns run over the cells, each scored at its bin's grid point
  bin / (thresholds - 1), which lies in that bin (grid_bin computes its
  correction with the same division) and is 1 exactly for the top bin (the
  scores of 1, :func:`mlsql.measures.scores.grid_top_ties`). The scores are
  checked (finite, in [0, 1]) row by row before the cells, as the Column checks them.
- the calibration errors: the rows become cells ``(by..., bin)`` carrying
  Σ weight x (probability - correct), Σ weight and the lowest and highest
  probability; the registry formula then runs over the bins' sums
  (:class:`mlsql.measures.scores.CalibrationStats`), the range checked over the
  group (lowest first) as the Column checks it.

The sums are the Column's, added in another order: the values agree to rounding
(within 1e-12).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from mlsql._evaluate import front as EV
from mlsql._front.build import checked_params
from mlsql.measures import scores as SC
from mlsql.spark._build import OPS, expression
from mlsql.spark.families import _classification as K
from mlsql.spark.families.class_scores import _top
from mlsql.spark.families.scores import probability, range_check
from mlsql.spark.ops import exact_sum

_ROLES = EV.ROLES
_WEIGHT = EV.WEIGHT
_BIN = "__mlsql_b"
#: the calibration errors ``evaluate`` sums per bin
CALIBRATION = ("expected_calibration_error", "multiclass_calibration_error")
#: every measure ``evaluate`` runs over cells per bin
BINNED = (*SC.GRID, *CALIBRATION)


def key(item: EV.Item) -> tuple[str, int] | None:
    """The cells ``item`` runs over: ("grid", thresholds) or (its name, n_bins) for a
    calibration error, its parameter checked; None for a measure not run per bin. The measures
    of one key share a query.

    Examples
    --------
    >>> [key(i) for i in EV.request(["a", "p"], "a", "p", ["binned_auc", "auc"], None, None).items]
    [('grid', 100), None]
    """
    if item.name not in BINNED:
        return None
    params = checked_params(item.name, item.params)
    if item.name in SC.GRID:
        return ("grid", int(params["thresholds"]))
    return (item.name, int(params["n_bins"]))


def _column(item: EV.Item, role_of: str) -> str:
    """The column of ``evaluate``'s rows that holds ``item``'s input ``role_of`` (its label or
    score input's name)."""
    return _ROLES[item.roles[item.measure.inputs.index(role_of)]]


def values(
    rows: DataFrame,
    groups: list[str],
    chosen: Sequence[tuple[int, EV.Item]],
    weighted_rows: bool,
    functions: Mapping[str, Callable[..., Column]],
) -> DataFrame:
    """The measures ``chosen`` (all of one :func:`key`) per group, column ``__mlsql_v{i}``
    each, over cells per bin; ``functions`` are the engine's measure functions by name (the
    binned measures' Columns run over the cells)."""
    kind, size = key(chosen[0][1])  # type: ignore[misc]
    if kind == "grid":
        return _grid(rows, groups, chosen, weighted_rows, size, functions)
    return _calibration(rows, groups, chosen, weighted_rows, size)


def _grid(
    rows: DataFrame,
    groups: list[str],
    chosen: Sequence[tuple[int, EV.Item]],
    weighted_rows: bool,
    thresholds: int,
    functions: Mapping[str, Callable[..., Column]],
) -> DataFrame:
    """The binned AUC/AP over cells (groups, label, bin) weighed by their total weight."""
    first = chosen[0][1]
    label_name, score_name = SC.label_and_score(first.measure)
    label, score = _column(first, label_name), _column(first, score_name)
    # the Column's row checks, before the cells: finite, then in [0, 1], where the label is known
    s = K.finite(first.name, score_name, F.when(F.col(label).isNotNull(), F.col(score)))
    s = probability(first.name, score_name, s)
    b = SC.grid_bin(OPS, s, F.lit(thresholds)).cast("bigint")
    total = F.sum(F.col(_WEIGHT)) if weighted_rows else F.count(F.lit(1))
    cells = rows.groupBy(*groups, F.col(label).alias(label), b.alias(_BIN)).agg(
        total.cast("double").alias(_WEIGHT)
    )
    # the bin's grid point: grid_bin gives it back (its correction divides the same integers)
    point = F.col(_BIN) / F.lit(thresholds - 1)
    out = []
    for i, item in chosen:
        label_name, score_name = SC.label_and_score(item.measure)
        names = {_column(item, label_name): F.col(label), _column(item, score_name): point}
        inputs = [names[_ROLES[r]] for r in item.roles]
        value = functions[item.name](*inputs, sample_weight=F.col(_WEIGHT), **item.params)
        out.append(value.alias(f"__mlsql_v{i}"))
    return cells.groupBy(*groups).agg(*out) if groups else cells.agg(*out)


def _calibration_rows(
    item: EV.Item, weighted_rows: bool
) -> tuple[Column, Column, Column, Column, Column]:
    """A row's probability binned, its term weight x (probability - correct) and weight (NULL
    where unknown), and the lowest and highest probability it adds to the range check, as the
    measure's Column reads them."""
    if item.name == "multiclass_calibration_error":
        actual, scores = (F.col(_ROLES[r]) for r in item.roles)
        known = actual.isNotNull() & scores.isNotNull()
        if weighted_rows:
            known = known & F.col(_WEIGHT).isNotNull()
        confidence, correct, lowest = _top(item.name, actual, scores)
        w = F.col(_WEIGHT) if weighted_rows else F.lit(1.0)
        d = F.when(known, (confidence - correct) * w)
        return confidence, d, F.when(known, w), F.when(known, lowest), F.when(known, confidence)
    label_name, score_name = SC.label_and_score(item.measure)
    label, score = F.col(_column(item, label_name)), F.col(_column(item, score_name))
    y = K.binary_flag(item.name, label)
    s = K.finite(item.name, score_name, F.when(label.isNotNull(), score))
    known = y.isNotNull() & s.isNotNull()
    if weighted_rows:
        known = known & F.col(_WEIGHT).isNotNull()
    w = F.col(_WEIGHT) if weighted_rows else F.lit(1.0)
    d = F.when(known, (s - y.cast("double")) * w)
    return s, d, F.when(known, w), s, s


def _calibration(
    rows: DataFrame,
    groups: list[str],
    chosen: Sequence[tuple[int, EV.Item]],
    weighted_rows: bool,
    n_bins: int,
) -> DataFrame:
    """The calibration errors (all of one measure) over cells (groups, bin) carrying each bin's
    sums."""
    name = chosen[0][1].name
    p, d, c, low, high = _calibration_rows(chosen[0][1], weighted_rows)
    b = SC.calibration_bin(OPS, p, F.lit(n_bins)).cast("bigint")
    # the weights' sums exact (so in any order: the bootstrap's resamples are the same however
    # the data is partitioned)
    size = exact_sum(c) if weighted_rows else F.count(c)
    cells = rows.groupBy(*groups, b.alias(_BIN)).agg(
        exact_sum(d).alias("__mlsql_d"),
        size.alias("__mlsql_c"),
        F.min(low).alias("__mlsql_lo"),
        F.max(high).alias("__mlsql_hi"),
    )
    score_name = "scores" if name == "multiclass_calibration_error" else "prob"
    total = exact_sum if weighted_rows else F.sum
    n = range_check(
        name, score_name, F.min("__mlsql_lo"), F.max("__mlsql_hi"), total(F.col("__mlsql_c"))
    )

    def over_bins(_: Any, term: SC.BinTerm, largest: bool) -> Column:
        value = term(F.abs(F.col("__mlsql_d")), F.col("__mlsql_c"))
        return F.max(value) if largest else exact_sum(value)

    stats = SC.CalibrationStats(n=n, over_bins=over_bins)
    out = [expression(name, stats, **item.params).alias(f"__mlsql_v{i}") for i, item in chosen]
    return cells.groupBy(*groups).agg(*out) if groups else cells.agg(*out)
