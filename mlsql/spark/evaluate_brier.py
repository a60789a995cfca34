"""``ms.evaluate`` of ``multilabel_brier_score`` in bounded memory: the labels counted first.

The Brier score over label sets is a sum and a count over the rows, divided by the
number of labels of the group: the union of its rows' true and scored labels. As
one Spark Column that union needs the group's distinct label sets
(``collect_set``, as many as the rows where few sets repeat): Spark has no
aggregate that unions arrays. ``evaluate`` knows the whole query, so it counts
the labels as a grouped pass instead:

1. each row's labels (where they count: a known row, of positive weight when
   weighted) exploded, the distinct ``(group, label)`` pairs counted per group;
2. the counts joined back to the rows (null-safe on the group keys, as
   :mod:`mlsql.spark.evaluate_regression` joins its means);
3. the measure's own Column over the joined rows, reading the group's count
   where it would have collected the sets.

Memory grows with groups x labels, never with rows; the sums, the checks and so the
values and errors are the Column's own.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from mlsql._evaluate import front as EV
from mlsql._front.build import function, lookup
from mlsql.measures import label_scores as LS
from mlsql.spark._engine import SPARK
from mlsql.spark.evaluate_regression import join_per_group
from mlsql.spark.families import label_scores as S

#: the measures this module evaluates
BRIER = (LS.BRIER,)
_LABEL, _COUNT = "__mlsql_label", "__mlsql_nl"


def applies(item: EV.Item) -> bool:
    """Whether ``item`` is evaluated here (the label-set Brier score).

    Examples
    --------
    >>> from mlsql._evaluate import front as EV
    >>> [applies(i) for i in EV.request(["a", "s"], "a", "s",
    ...     ["multilabel_brier_score", "micro_f1"], None, None).items]
    [True, False]
    """
    return item.name in BRIER


def values(
    rows: DataFrame, groups: list[str], chosen: Sequence[tuple[int, EV.Item]], weighted: bool
) -> DataFrame:
    """One row per group: the group columns and the value of each ``(i, item)`` of
    ``chosen`` as ``__mlsql_v{i}``.

    ``rows`` hold the roles' columns (:data:`mlsql._evaluate.front.ROLES`), the groups and,
    when ``weighted``, the checked weight (:data:`mlsql._evaluate.front.WEIGHT`).
    """
    m = lookup(chosen[0][1].measure)
    a, s = F.col(EV.ROLES["actual"]), F.col(EV.ROLES["predicted"])
    w = {"sample_weight": F.col(EV.WEIGHT)} if weighted else {}
    first = chosen[0][1]
    labels = function(SPARK, m, S.brier_labels(m), S.scores_as_map, S)(a, s, **w, **first.params)
    pairs = rows.select(*groups, F.explode(labels).alias(_LABEL)).distinct()
    counted = pairs.groupBy(*groups).agg(F.count(F.lit(1)).alias(_COUNT))
    joined = join_per_group(rows, groups, counted, how="left")
    n_labels = F.coalesce(F.max(F.col(_COUNT)), F.lit(0))
    measure = function(SPARK, m, S.brier_build(m, n_labels), S.scores_as_map, S)
    out = [measure(a, s, **w, **item.params).alias(f"__mlsql_v{i}") for i, item in chosen]
    return joined.groupBy(*groups).agg(*out) if groups else joined.agg(*out)
