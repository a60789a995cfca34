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

from collections.abc import Sequence
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F

from mlsql._registry import Measure
from mlsql.measures import scores as SC
from mlsql.spark._build import OPS
from mlsql.spark.families import _classification as K

FAMILIES = (SC.FAMILY,)
#: each input name's role
ROLES = {"actual": "label", "label": "label", "predicted": "score", "score": "score"}
#: Hivemall's AUC example (scores .8 .7 .5 .5 .3 .2), as (label, score) rows
EXAMPLE = [(1, 0.8), (1, 0.7), (0, 0.5), (1, 0.5), (1, 0.3), (0, 0.2)]


# ---------------------------------------------------------------- plug-in hooks
def input_check(measure: Measure) -> Any:
    """Labels boolean or 0/1, scores numbers (where the Column's type is known)."""

    def check(func: str, names: Sequence[str], cols: Sequence[Column]) -> None:
        for name, col in zip(names, cols, strict=True):
            role_check = K.binary_inputs if ROLES[name] == "label" else K.numeric_inputs
            role_check(func, [name], [col])

    return check


def _label_score(measure: Measure, inputs: Sequence[Column]) -> tuple[Column, Column, Column]:
    """The label as 0/1 (long), the score as DOUBLE, and whether the row is known."""
    by_role = {ROLES[n]: x for n, x in zip(measure.inputs, inputs, strict=True)}
    y = K.binary_flag(measure.name, by_role["label"])
    score = next(n for n in measure.inputs if ROLES[n] == "score")
    s = K.finite(measure.name, score, F.when(by_role["label"].isNotNull(), by_role["score"]))
    return y, s, y.isNotNull() & s.isNotNull()


def stats(measure: Measure, *inputs: Column) -> SC.LossStats | SC.RankStats:
    """Loss sums, or positives, negatives and U, over the known rows."""
    y, s, known = _label_score(measure, inputs)
    if measure.name.endswith("logloss"):
        p = F.least(F.greatest(s, F.lit(SC.CLIP)), F.lit(1 - SC.CLIP))
        term = SC.log_loss_term(OPS, y.cast("double"), F.log(p), F.log(1 - p))
        return SC.LossStats(n=F.count(F.when(known, 1)), total_loss=F.sum(F.when(known, term)))
    n_pos = F.sum(F.when(known, y))
    n_neg = F.sum(F.when(known, 1 - y))
    pairs = F.sort_array(F.collect_list(F.when(known, F.struct(s.alias("s"), y.alias("y")))))
    return SC.RankStats(n_positive=n_pos, n_negative=n_neg, u=mann_whitney_u(pairs))


def mann_whitney_u(pairs: Column) -> Column:
    """U of (s, y) pairs sorted by score: Σ over positives of (negatives below + ties / 2).

    One pass keeps the negatives below the current run of equal scores and the
    run's positives and negatives; when the run ends, its positives add
    ``2 * below + run negatives`` to 2U (integers throughout: exact).
    """
    zero = F.lit(0).cast("long")
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
        return F.struct(
            x["s"].alias("last"),
            F.when(new_run, acc["below"] + acc["neg"]).otherwise(acc["below"]).alias("below"),
            (F.when(new_run, zero).otherwise(acc["neg"]) + (1 - x["y"])).alias("neg"),
            (F.when(new_run, zero).otherwise(acc["pos"]) + x["y"]).alias("pos"),
            F.when(new_run, closed(acc)).otherwise(acc["u2"]).alias("u2"),
        )

    return F.aggregate(pairs, start, step, lambda acc: closed(acc) / 2)


def example(measure: Measure) -> tuple[list[Any], str, dict[str, Any], str]:
    """Hivemall's AUC example, the columns in the measure's input order."""
    label_first = ROLES[measure.inputs[0]] == "label"
    rows = [r if label_first else r[::-1] for r in EXAMPLE]
    types = {"label": "int", "score": "double"}
    schema = ", ".join(f"{n} {types[ROLES[n]]}" for n in measure.inputs)
    output = "0.8125" if measure.name.endswith("auc") else "0.56553820200..."
    return rows, schema, {}, output
