"""Log loss and ROC AUC in Spark: aggregates over (label, score) columns that need no sorted input.

``logloss`` (and ``hivemall_logloss``) sums the registry's per-row term over
the clipped probabilities of the rows where neither side is NULL: a streaming,
mergeable ``sum`` and ``count``.

``auc`` (and ``hivemall_auc``) is the Mann-Whitney statistic U over the known
rows, ties counting one half (scikit-learn's ``roc_auc_score``). U needs every
positive compared with every negative, which no streaming Spark aggregate
gives, so the group's (score, label) pairs are collected (``collect_list``)
and sorted (``sort_array``) inside the aggregate; one pass (``aggregate``)
over the sorted pairs then counts, per run of equal scores, the positives
times (negatives scored lower + half the negatives tied with them). The
group's rows are held in memory, about 16 bytes a row plus Spark's array
overhead: a group of many millions of rows wants executors with memory to
match (or a per-partition pre-aggregation of your own). Nothing is sorted
outside the aggregate and the input needs no order.

``brier_score_loss`` streams as ``logloss`` does. ``average_precision_score``
collects and sorts the group's pairs as ``auc`` does (scores from the highest),
and one pass over them adds, per run of equal scores, its positives x P(>= s)
/ N(>= s); ``area_under_pr`` likewise, each run adding its trapezoid (Spark's own
``areaUnderPR``, without leaving the aggregate). ``expected_calibration_error`` collects the group's (bin, prob - actual, weight)
pairs as DuckDB does, sorts them by bin and sums each bin's in one pass.
``binned_auc`` and ``binned_average_precision_score`` collect each row's (bin, label) on the
threshold grid and run ``auc``'s and ``average_precision_score``'s passes over them.
``ms.evaluate`` runs these and the calibration errors over cells per bin instead (a
``groupBy`` by bin first, :mod:`mlsql.spark.evaluate_bins`): memory groups x bins, not rows.

Labels are boolean or 0/1 (any other value raises when read, with mlsql's
message), scores numbers (read as DOUBLE); a Column of a DataFrame of another
type is an :class:`~mlsql.MlsqlError`.

Examples
--------
>>> from pyspark.sql import SparkSession
>>> import mlsql.spark as ms
>>> spark = SparkSession.builder.getOrCreate()
>>> df = spark.createDataFrame(
...     [(1, 0.8), (1, 0.7), (0, 0.5), (1, 0.5), (1, 0.3), (0, 0.2)], "actual int, predicted double"
... )
>>> df.agg(ms.auc("actual", "predicted")).first()[0]
0.8125
>>> round(df.agg(ms.logloss("actual", "predicted")).first()[0], 6)
0.565538
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from mlsql import _classification_params as CP
from mlsql._registry import Measure
from mlsql.measures import scores as SC
from mlsql.spark._build import OPS, Example, shared_example
from mlsql.spark.families import _classification as K
from mlsql.spark.ops import exact_sum

FAMILIES = (SC.FAMILY,)
#: each input name's role
ROLES = SC.ROLES
#: the examples whose last digits Spark's logarithms and sums may change: printed to 11 decimals
APPROXIMATE = ("logloss", "hivemall_logloss", "brier_score_loss", "expected_calibration_error")


# ---------------------------------------------------------------- plug-in hooks
def input_check(measure: Measure) -> Any:
    """Labels boolean or 0/1, scores numbers (where the Column's type is known)."""

    def check(func: str, names: Sequence[str], cols: Sequence[Column]) -> None:
        for name, col in zip(names, cols, strict=True):
            role_check = K.binary_inputs if ROLES[name] == "label" else K.numeric_inputs
            role_check(func, [name], [col])

    return check


def _label_score(
    measure: Measure, inputs: Sequence[Column], checked: bool = True
) -> tuple[Column, Column, Column]:
    """The label as 0/1 (long), the score as DOUBLE, and whether the row is known; a
    probability is checked row by row unless ``checked`` is False (see :func:`in_range`)."""
    by_role = {ROLES[n]: x for n, x in zip(measure.inputs, inputs, strict=True)}
    y = K.binary_flag(measure.name, by_role["label"])
    score = next(n for n in measure.inputs if ROLES[n] == "score")
    s = K.finite(measure.name, score, F.when(by_role["label"].isNotNull(), by_role["score"]))
    if checked and measure.name in SC.PROBABILITIES:
        s = probability(measure.name, score, s)
    return y, s, y.isNotNull() & s.isNotNull()


def probability(func: str, name: str, x: Column) -> Column:
    """``x`` (a DOUBLE); a value outside [0, 1] raises when read (NULL stays NULL)."""
    below, above = (
        F.raise_error(F.lit(CP.probability_value_message(func, name, got)))
        for got in CP.OUT_OF_RANGE
    )
    return F.when(x < 0, below).when(x > 1, above).otherwise(x)


def in_range(func: str, name: str, x: Column, value: Column, high: Column | None = None) -> Column:
    """``value`` (an aggregate) once the group's probabilities ``x`` are in [0, 1]: its lowest
    below 0 raises first, then its highest above 1, as DuckDB and Polars check the group (a row
    by row check names whichever bad row Spark reads first). A row holding several
    probabilities gives its lowest as ``x`` and its highest as ``high``."""
    return range_check(func, name, F.min(x), F.max(x if high is None else high), value)


def range_check(func: str, name: str, low: Column, high: Column, value: Column) -> Column:
    """``value`` once ``low`` (the lowest probability) is >= 0 and ``high`` (the highest) <= 1,
    the lowest checked first (:func:`in_range` over a group's rows; a table checks its bins'
    lowest and highest)."""
    below, above = (
        F.raise_error(F.lit(CP.probability_value_message(func, name, got)))
        for got in CP.OUT_OF_RANGE
    )
    return F.when(low < 0, below).when(high > 1, above).otherwise(value)


def stats(measure: Measure, *inputs: Column, weight: Column | None = None) -> Any:
    """The statistics of a score measure over the known rows (each row weighted if given)."""
    # their probabilities are checked over the group (in_range), as DuckDB and Polars check them
    group_checked = measure.name in ("expected_calibration_error", "brier_score_loss")
    y, s, known = _label_score(measure, inputs, checked=not group_checked)
    if weight is not None:
        known = known & weight.isNotNull()
    w = None if weight is None else F.when(known, weight)

    def weighed(x: Column) -> Column:  # a row's term times its weight (as is without weights)
        return x if w is None else x * w

    n = F.count(F.when(known, 1)) if w is None else F.sum(w)
    if measure.name == "brier_score_loss":
        term = SC.squared_error_term(OPS, y.cast("double"), s)
        score_name = next(n for n in measure.inputs if ROLES[n] == "score")
        n = in_range(measure.name, score_name, s, n)
        return SC.LossStats(n=n, total_loss=exact_sum(F.when(known, weighed(term))))
    if measure.name == "average_precision_score":
        fields = [(s + 0.0).alias("s"), y.alias("y"), *([] if w is None else [w.alias("w")])]
        pairs = F.collect_list(F.when(known, F.struct(*fields)))
        precision_sum = run_precision_sum(F.sort_array(pairs, asc=False), w is not None)
        return SC.PrecisionStats(
            n=F.count(F.when(known, 1)),
            n_positive=F.sum(F.when(known, weighed(y))),
            precision_sum=precision_sum,
        )
    if measure.name == "area_under_pr":
        fields = [(s + 0.0).alias("s"), y.alias("y"), *([] if w is None else [w.alias("w")])]
        pairs = F.collect_list(F.when(known, F.struct(*fields)))
        return SC.PrecisionStats(
            n=F.count(F.when(known, 1)),
            n_positive=F.sum(F.when(known, weighed(y))),
            precision_sum=trapezoid_sum(F.sort_array(pairs, asc=False), w is not None),
        )
    if measure.name in SC.GRID:
        return grid_stats(measure, y, s, known, w)
    if measure.name == "expected_calibration_error":
        # the checks (raise_error, which Spark does not share between terms) run once, in n,
        # over the group; the bins' sums read the inputs as they are, which the failed check
        # stops when bad
        score_name = next(n for n in measure.inputs if ROLES[n] == "score")
        n = in_range(measure.name, score_name, s, n)
        label, score = (inputs[measure.inputs.index(n)] for n in SC.label_and_score(measure))
        raw_known = label.isNotNull() & score.isNotNull()
        p = score.cast("double")
        d = F.when(raw_known, weighed(p - label.cast("double")))
        size = F.when(raw_known, weighed(F.lit(1.0)))
        return SC.CalibrationStats(n=n, over_bins=over_bins_of(p, d, size))
    if measure.name.endswith("logloss"):
        p = F.least(F.greatest(s, F.lit(SC.CLIP)), F.lit(1 - SC.CLIP))
        term = SC.log_loss_term(OPS, y.cast("double"), F.log(p), F.log(1 - p))
        return SC.LossStats(n=n, total_loss=F.sum(F.when(known, weighed(term))))
    n_pos = F.sum(F.when(known, weighed(y)))
    n_neg = F.sum(F.when(known, weighed(1 - y)))
    fields = [s.alias("s"), y.alias("y"), *([] if w is None else [w.alias("w")])]
    pairs = F.sort_array(F.collect_list(F.when(known, F.struct(*fields))))
    u = mann_whitney_u(pairs, w is not None)
    rows = None if w is None else F.count(F.when(known, 1))
    return SC.RankStats(n_positive=n_pos, n_negative=n_neg, u=u, rows=rows)


def grid_stats(
    measure: Measure, y: Column, s: Column, known: Column, w: Column | None
) -> SC.GridStats:
    """The statistics over the threshold grid: the group's (bin, label[, weight]) triples
    collected and sorted by bin (each row's score replaced by its bin,
    :func:`mlsql.measures.scores.grid_bin`), then the passes of ``auc`` and
    ``average_precision_score`` over them."""
    one = F.lit(1) if w is None else w

    def total(x: Column, top: bool = False) -> Column:
        if top:  # 0, not NULL, where no row is scored 1
            return F.coalesce(F.sum(F.when(known & (s >= 1), x * one)), F.lit(0))
        return F.sum(F.when(known, x * one))

    def at(thresholds: Any) -> Any:
        b = SC.grid_bin(OPS, s, F.lit(thresholds)).cast("double")
        fields = [b.alias("s"), y.alias("y"), *([] if w is None else [w.alias("w")])]
        pairs = F.collect_list(F.when(known, F.struct(*fields)))
        if measure.name == "binned_average_precision_score":
            precision_sum = run_precision_sum(F.sort_array(pairs, asc=False), w is not None)
            return SC.PrecisionStats(
                n=F.count(F.when(known, 1)), n_positive=total(y), precision_sum=precision_sum
            )
        u = mann_whitney_u(F.sort_array(pairs), w is not None)
        u = SC.grid_top_ties(OPS, u, total(y, True), total(1 - y, True))
        rows = None if w is None else F.count(F.when(known, 1))
        return SC.RankStats(n_positive=total(y), n_negative=total(1 - y), u=u, rows=rows)

    return SC.GridStats(at=at)


def over_bins_of(p: Column, d: Column, size: Column) -> Callable[[Any, SC.BinTerm, bool], Column]:
    """``CalibrationStats.over_bins`` of the rows' probabilities ``p``, their terms ``d`` (NULL
    on the rows left out) and sizes ``size``: the group's (bin, d, size) triples collected,
    sorted by bin and summed per bin in one pass (:func:`bin_terms`)."""

    def over_bins(n_bins: Any, term: SC.BinTerm, largest: bool) -> Column:
        b = SC.calibration_bin(OPS, p, F.lit(n_bins)).cast("bigint")
        fields = F.struct(b.alias("b"), d.alias("d"), size.alias("c"))
        pairs = F.collect_list(F.when(d.isNotNull(), fields))
        return bin_terms(F.sort_array(pairs), term, largest)

    return over_bins


def bin_terms(pairs: Column, term: SC.BinTerm, largest: bool) -> Column:
    """Σ (``largest``: the maximum) over the bins of ``term(|Σ d|, Σ c)`` of the bin's (b, d, c)
    pairs, sorted by bin: one pass keeping the bin in hand, its running sums and the total (or
    maximum) of the bins before it; NULL terms (empty bins) are left out.

    One expression whatever the number of bins (a sum per bin overflowed Spark's planner at
    1000 bins); the pairs sorted make the sums independent of the rows' partitions.
    """
    start = F.struct(
        F.lit(None).cast("bigint").alias("b"),
        F.lit(0.0).alias("run"),
        F.lit(0.0).alias("size"),
        F.lit(None).cast("double").alias("total"),
    )

    def closed(acc: Column) -> Column:  # the total with the bin in hand counted
        value = term(F.abs(acc["run"]), acc["size"])
        if largest:
            return F.greatest(acc["total"], value)
        return F.coalesce(acc["total"] + value, acc["total"], value)

    def step(acc: Column, x: Column) -> Column:
        same = F.coalesce(acc["b"] == x["b"], F.lit(False))
        return F.when(
            same,
            F.struct(
                acc["b"],
                (acc["run"] + x["d"]).alias("run"),
                (acc["size"] + x["c"]).alias("size"),
                acc["total"],
            ),
        ).otherwise(
            F.struct(x["b"], x["d"].alias("run"), x["c"].alias("size"), closed(acc).alias("total"))
        )

    return F.aggregate(pairs, start, step, closed)


def run_precision_sum(pairs: Column, weighted: bool = False) -> Column:
    """Σ over runs of equal scores of (run positives) x P(>= s) / N(>= s), pairs sorted from the
    highest score: one pass keeping the rows and positives seen so far and the run's positives.

    ``weighted``: each pair has a weight ``w``, and rows and positives are sums of weights.
    """
    zero = F.lit(0.0) if weighted else F.lit(0).cast("long")
    start = F.struct(
        F.lit(None).cast("double").alias("last"),
        zero.alias("n"),
        zero.alias("pos"),
        zero.alias("run"),
        F.lit(0.0).alias("total"),
    )

    def closed(acc: Column) -> Column:  # the total with the current run counted
        return acc["total"] + F.when(acc["run"] > 0, acc["run"] * acc["pos"] / acc["n"]).otherwise(
            0.0
        )

    def step(acc: Column, x: Column) -> Column:
        new_run = ~x["s"].eqNullSafe(acc["last"])
        one, positive = (x["w"], x["y"] * x["w"]) if weighted else (F.lit(1), x["y"])
        return F.struct(
            x["s"].alias("last"),
            (acc["n"] + one).alias("n"),
            (acc["pos"] + positive).alias("pos"),
            (F.when(new_run, zero).otherwise(acc["run"]) + positive).alias("run"),
            F.when(new_run, closed(acc)).otherwise(acc["total"]).alias("total"),
        )

    return F.aggregate(pairs, start, step, closed)


def trapezoid_sum(pairs: Column, weighted: bool = False) -> Column:
    """Spark's trapezoid sum over (s, y[, w]) pairs sorted from the highest score: one pass
    keeping the rows and positives seen so far, the run's positives and the precision of the
    point before the run; a closed run adds :func:`mlsql.measures.scores.pr_trapezoid` (the
    first run with its own precision as the point before). A run reached before any weight is
    no point (rows that weigh 0 are absent)."""
    start = F.struct(
        F.lit(None).cast("double").alias("last"),
        F.lit(0.0).alias("n"),
        F.lit(0.0).alias("pos"),
        F.lit(0.0).alias("run"),
        F.lit(None).cast("double").alias("prev"),
        F.lit(0.0).alias("total"),
    )

    def precision(acc: Column) -> Column:
        return acc["pos"] / acc["n"]

    def closed(acc: Column) -> Column:  # the total with the current run counted
        p = precision(acc)
        term = SC.pr_trapezoid(OPS, acc["run"], p, F.coalesce(acc["prev"], p))
        return acc["total"] + F.when(acc["n"] > 0, term).otherwise(0.0)

    def step(acc: Column, x: Column) -> Column:
        new_run = ~x["s"].eqNullSafe(acc["last"])
        one = x["w"] if weighted else F.lit(1.0)
        positive = x["y"] * one
        return F.struct(
            x["s"].alias("last"),
            (acc["n"] + one).alias("n"),
            (acc["pos"] + positive).alias("pos"),
            (F.when(new_run, 0.0).otherwise(acc["run"]) + positive).alias("run"),
            F.when(new_run & (acc["n"] > 0), precision(acc)).otherwise(acc["prev"]).alias("prev"),
            F.when(new_run, closed(acc)).otherwise(acc["total"]).alias("total"),
        )

    return F.aggregate(pairs, start, step, closed)


def mann_whitney_u(pairs: Column, weighted: bool = False) -> Column:
    """U of (s, y) pairs sorted by score: Σ over positives of (negatives below + ties / 2).

    One pass keeps the negatives below the current run of equal scores and the
    run's positives and negatives; when the run ends, its positives add
    ``2 * below + run negatives`` to 2U (integers throughout: exact).
    ``weighted``: each pair has a weight ``w``, and positives and negatives
    are sums of weights (the weighted Mann-Whitney statistic).
    """
    zero = F.lit(0.0) if weighted else F.lit(0).cast("long")
    start = F.struct(
        F.lit(None).cast("double").alias("last"),
        zero.alias("below"),
        zero.alias("neg"),
        zero.alias("pos"),
        zero.alias("u2"),
    )

    def closed(acc: Column) -> Column:  # 2U with the current run counted
        return acc["u2"] + acc["pos"] * (2 * acc["below"] + acc["neg"])

    def step(acc: Column, x: Column) -> Column:
        new_run = ~x["s"].eqNullSafe(acc["last"])
        w = x["w"] if weighted else F.lit(1)
        return F.struct(
            x["s"].alias("last"),
            F.when(new_run, acc["below"] + acc["neg"]).otherwise(acc["below"]).alias("below"),
            (F.when(new_run, zero).otherwise(acc["neg"]) + (1 - x["y"]) * w).alias("neg"),
            (F.when(new_run, zero).otherwise(acc["pos"]) + x["y"] * w).alias("pos"),
            F.when(new_run, closed(acc)).otherwise(acc["u2"]).alias("u2"),
        )

    return F.aggregate(pairs, start, step, lambda acc: closed(acc) / 2)


def example(measure: Measure) -> Example | None:
    """Hivemall's AUC example (scores .8 .7 .5 .5 .3 .2), in the measure's input order."""
    types = {"label": "int", "score": "double"}
    return shared_example(measure, {n: types[ROLES[n]] for n in measure.inputs}, APPROXIMATE)
