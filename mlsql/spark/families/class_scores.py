"""Class probabilities in Spark: the multiclass Brier score (per row a fold over its scored
classes, then a sum, a count and a maximum: streaming, mergeable aggregates) and the
top-label calibration error.

A row's scored classes (a map's entries, or a list's {label, score} structs keeping each
label's first entry; NULL labels and scores dropped) each add (p - [class is actual])²,
and a true class the row does not score adds 1. The formula is the registry's
(:mod:`mlsql.measures.class_scores`).

``multiclass_calibration_error`` takes each row's highest probability (each checked) and the
smallest label scored it, then bins them as ``expected_calibration_error`` does: the group's
(bin, gap) triples collected and sorted (:func:`mlsql.spark.families.scores.over_bins_of`).

Examples
--------
>>> from pyspark.sql import SparkSession
>>> import mlsql.spark as ms
>>> spark = SparkSession.builder.getOrCreate()
>>> df = spark.createDataFrame(
...     [("cat", {"cat": 0.75, "dog": 0.25}), ("dog", {"cat": 0.5})],
...     "actual string, scores map<string, double>",
... )
>>> df.agg(ms.multiclass_brier_score("actual", "scores")).first()[0]
0.34375
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql._errors import MlsqlError
from mlsql._label_types import MISMATCH_MESSAGE, NOT_A_LABEL_MESSAGE
from mlsql._registry import Measure
from mlsql.measures import class_scores as CS
from mlsql.measures import scores as SC
from mlsql.spark._build import OPS, Example, shared_example
from mlsql.spark._types import compatible, data_type
from mlsql.spark.families import _classification as K
from mlsql.spark.families.ranking import _fields_of, _label_type, score_entries, score_fields
from mlsql.spark.families.scores import in_range, over_bins_of
from mlsql.spark.ops import exact_sum

FAMILIES = (CS.FAMILY,)
LABEL_TYPES = (T.StringType, T.IntegralType, T.NullType)


def _check(func: str, names: Sequence[str], cols: Sequence[Column]) -> list[Column] | None:
    """One label per row, of the kind of the scores' labels (where the Columns' types are
    known); the scores a map or a list of {label, score} structs."""
    (a_name, s_name), (a_col, s_col) = names, cols
    s_type = data_type(s_col)
    if s_type is not None and not isinstance(s_type, T.NullType):
        score_fields(func, s_name, s_type)
    a_type = data_type(a_col)
    if a_type is not None and not isinstance(a_type, LABEL_TYPES):
        raise MlsqlError(
            NOT_A_LABEL_MESSAGE.format(func=func, name=a_name, type=a_type.simpleString())
        )
    if (
        a_type is not None
        and s_type is not None
        and not isinstance(s_type, T.NullType)
        and not compatible(a_type, _label_type(s_type))
    ):
        raise MlsqlError(
            MISMATCH_MESSAGE.format(
                func=func,
                left=a_name,
                right=s_name,
                left_type=a_type.simpleString(),
                right_type=s_type.simpleString(),
            )
        )
    fields = _fields_of(func, s_col)
    if fields is None:
        return None
    return [a_col, F.map_from_entries(score_entries(s_col, fields))]


def input_check(measure: Measure) -> Any:
    """The check of (actual, scores)."""
    return _check


def squared_errors(
    func: str, entries: Column, is_true: Callable[[Column], Column], checked: bool = True
) -> Column:
    """{loss, low, high} of a row's scored entries: Σ of (p - [``is_true(label)``])², and the
    lowest and highest probability. Each probability is checked (finite) as it is read, once
    (unless ``checked`` is false: the caller checks the lowest and highest); one fold then sums
    the terms and keeps the lowest and highest."""
    cells = F.transform(
        entries,
        lambda e: F.struct(
            _read(func, e["score"], checked).alias("p"), is_true(e["label"]).alias("t")
        ),
    )
    start = F.struct(
        F.lit(0.0).alias("loss"),
        F.lit(None).cast("double").alias("low"),
        F.lit(None).cast("double").alias("high"),
    )

    def step(acc: Column, x: Column) -> Column:
        return F.struct(
            (acc["loss"] + CS.class_squared_error(OPS, x["p"], x["t"])).alias("loss"),
            F.least(acc["low"], x["p"]).alias("low"),
            F.greatest(acc["high"], x["p"]).alias("high"),
        )

    return F.aggregate(cells, start, step)


def _read(func: str, score: Column, checked: bool) -> Column:
    """A probability as DOUBLE, checked finite as it is read when ``checked``."""
    return K.finite(func, "scores", score) if checked else score.cast("double")


def _row(func: str, actual: Column, scores: Column, checked: bool = True) -> Column:
    """A row's Σ of squared errors over its classes (``loss``), its number of classes
    (``width``) and its lowest and highest probability (``low``, ``high``; their range is
    checked over the group, see :func:`stats`; each finite, unless ``checked`` is false)."""
    entries = score_entries(scores, _fields_of(func, scores))
    folded = squared_errors(func, entries, lambda label: label == actual, checked)
    scored_true = F.exists(entries, lambda e: e["label"] == actual)
    unscored = F.when(scored_true, F.lit(0)).otherwise(F.lit(1))
    return F.struct(
        (folded["loss"] + unscored).alias("loss"),
        (F.size(entries) + unscored).alias("width"),
        folded["low"].alias("low"),
        folded["high"].alias("high"),
    )


def _top(
    func: str, actual: Column, scores: Column, checked: bool = True
) -> tuple[Column, Column, Column]:
    """A row's confidence (its highest probability; 0 when it scores no class), whether the
    smallest label scored it is the true one (1.0 or 0.0), and its lowest probability (each
    finite, checked as read; their range is checked over the group, see
    :func:`calibration_stats`)."""
    entries = score_entries(scores, _fields_of(func, scores))
    read = F.transform(entries, lambda e: _read(func, e["score"], checked))
    highest = F.array_max(F.transform(entries, lambda e: e["score"]))
    tied = F.filter(entries, lambda e: e["score"] == highest)
    top = F.array_min(F.transform(tied, lambda e: e["label"]))
    correct = F.when(top == actual, F.lit(1.0)).otherwise(F.lit(0.0))
    return F.coalesce(F.array_max(read), F.lit(0.0)), correct, F.array_min(read)


def calibration_stats(
    measure: Measure, actual: Column, scores: Column, weight: Column | None
) -> SC.CalibrationStats:
    """The group's known rows (their weight) and the bins of their top labels."""
    known = actual.isNotNull() & scores.isNotNull()
    if weight is not None:
        known = known & weight.isNotNull()
    confidence, correct, lowest = _top(measure.name, actual, scores)
    w = F.lit(1.0) if weight is None else weight.cast("double")
    n = F.count(F.when(known, 1)) if weight is None else F.sum(F.when(known, weight))
    low, high = F.when(known, lowest), F.when(known, confidence)
    return SC.CalibrationStats(
        # the probabilities' range over the group, lowest first, as DuckDB and Polars check it
        n=in_range(measure.name, "scores", low, n, high=high),
        over_bins=over_bins_of(
            confidence, F.when(known, (confidence - correct) * w), F.when(known, w)
        ),
    )


def stats(measure: Measure, *inputs: Column, weight: Column | None = None) -> Any:
    """The group's known rows (their weight), Σ of their losses and their widest row; or the
    bins of their top labels (``multiclass_calibration_error``). The group's probabilities
    are checked over the group (its lowest below 0 first, then its highest above 1, as DuckDB
    and Polars check them; row by row Spark named whichever bad row it read first)."""
    actual, scores = inputs
    if measure.name == "multiclass_calibration_error":
        return calibration_stats(measure, actual, scores, weight)
    known = actual.isNotNull() & scores.isNotNull()
    if weight is not None:
        known = known & weight.isNotNull()
    row = _row(measure.name, actual, scores)
    w = F.lit(1.0) if weight is None else weight
    n = F.count(F.when(known, 1)) if weight is None else F.sum(F.when(known, weight))
    low, high = (F.when(known, row[k]) for k in ("low", "high"))
    return CS.ClassBrierStats(
        n=in_range(measure.name, "scores", low, n, high=high),
        total_loss=exact_sum(F.when(known, row["loss"] * w)),
        n_classes=F.max(F.when(known, row["width"])),
    )


def example(measure: Measure) -> Example | None:
    """Two rows, the second missing its true class's score (its top label, cat, is wrong)."""
    return shared_example(measure, {"actual": "string", "scores": "map<string, double>"})
