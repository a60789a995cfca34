"""``ms.evaluate`` of the regression measures in bounded memory: the means first, then sums.

A regression aggregate centres y and ŷ on the group's mean to keep its sums of
squares exact far from zero (:mod:`mlsql.measures.regression`); as one Spark
Column it must hold the group's values until the mean is known
(``collect_list``). ``evaluate`` knows the whole query, so it runs the same
statistics as grouped passes over the rows instead:

1. the (weighted) means of y, ŷ and y - ŷ per group (:func:`~mlsql.spark.families.regression.mean_columns`),
   and the powers of two that move its small values up before they are summed exactly
   (:func:`~mlsql.spark.families.regression.scale_columns`);
2. with ``rae``: the mean of y - mean(y) per group (the correction of the mean's
   rounding that Σ|y - mean(y)| takes), over the rows joined to their means;
3. every measure's statistics as sums over the rows joined to their group's
   values (:func:`~mlsql.spark.families.regression.centred_stats`), then the
   registry formulas.

Each pass is a ``groupBy`` of a few numbers per group, joined back to the rows
(null-safe on the group keys): memory grows with the groups, never with rows.
The sums add the same centred terms as the list form, in Spark's order instead
of the list's: the values agree to rounding (within 1e-15 relative).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from mlsql._evaluate import front as EV
from mlsql._front.build import checked_params
from mlsql.measures import regression as RG
from mlsql.spark._build import OPS
from mlsql.spark.exact import Terms
from mlsql.spark.families import _classification as K
from mlsql.spark.families import regression as R

_MEAN = "__mlsql_m_"
_SHIFT = "__mlsql_shift"
_SCALE = "__mlsql_scale_"
_KEY = "__mlsql_k"
_STAT = "__mlsql_s_"
#: the join strategy of the grouped passes (see :func:`_joined`)
JOIN_HINT = "shuffle_hash"
#: the rows' own columns in :func:`values` (y, ŷ and the weight): their order is a total order
#: of the terms of a sum
TERMS = ("__mlsql_y", "__mlsql_pr", "__mlsql_wk")


def applies(items: Sequence[EV.Item]) -> bool:
    """Whether every measure asked for is a regression measure (so the bounded plan runs).

    Examples
    --------
    >>> from mlsql._evaluate import front as EV
    >>> applies(EV.request(["a", "p"], "a", "p", ["mse", "r2"], None, None).items)
    True
    """
    return bool(items) and all(item.measure.family == RG.FAMILY for item in items)


#: ``(rows, keys)`` to ``rows`` arranged for an aggregation by ``keys`` (see :func:`values`)
Arrange = Callable[[DataFrame, list[str]], DataFrame]


def _joined(
    rows: DataFrame,
    groups: list[str],
    per_group: dict[str, Column],
    arrange: Arrange | None = None,
) -> DataFrame:
    """``rows`` with the group's values of ``per_group`` (name: an aggregate over the
    group's rows) beside each row: a grouped pass joined back null-safe on the group keys.

    The join is a shuffle hash join (:data:`JOIN_HINT`), whose per-group hash table lives in
    each task's accounted memory and goes with the task. Left to itself, Spark broadcasts
    the small per-group side as a hash relation whose first page is sized by the heap
    (16-64 MB on a 1-2 GB driver, however few the groups), kept on the driver's heap outside
    Spark's memory accounting for as long as the plan lives: a session of many ``evaluate``
    calls piles them up, and an out-of-memory error in a local task ends the JVM."""
    named = [c.alias(name) for name, c in per_group.items()]
    found = _aggregated(rows, groups, named, arrange)
    return join_per_group(rows, groups, found)


def _aggregated(
    rows: DataFrame, groups: list[str], aggs: list[Column], arrange: Arrange | None
) -> DataFrame:
    """One row per group of ``rows``: the groups and ``aggs``."""
    if arrange is not None:
        rows = arrange(rows, groups)
    return rows.groupBy(*groups).agg(*aggs) if groups else rows.agg(*aggs)


def join_per_group(
    rows: DataFrame, groups: list[str], found: DataFrame, how: str = "inner"
) -> DataFrame:
    """``rows`` with the columns of ``found`` (one row per group: the group columns and its
    values) beside each row, joined null-safe on the group keys as :func:`_joined` joins
    (``how``: "left" keeps the rows of a group ``found`` lacks, its values NULL)."""
    if not groups:
        return rows.crossJoin(found)
    keys = [F.col(g).alias(f"{_KEY}{k}") for k, g in enumerate(groups)]
    values = [c for c in found.columns if c not in groups]
    found = found.select(*keys, *values)
    on = [rows[g].eqNullSafe(found[f"{_KEY}{k}"]) for k, g in enumerate(groups)]
    return rows.join(found.hint(JOIN_HINT), on, how).drop(
        *(f"{_KEY}{k}" for k in range(len(groups)))
    )


def centre_names() -> dict[str, str]:
    """The columns of the values the sums are centred on, by statistic (y, ŷ, y - ŷ).

    Examples
    --------
    >>> centre_names()
    {'y': '__mlsql_m_y', 'p': '__mlsql_m_p', 'e': '__mlsql_m_e'}
    """
    return {k: _MEAN + k for k in ("y", "p", "e")}


def values(
    rows: DataFrame,
    groups: list[str],
    chosen: Sequence[tuple[int, EV.Item]],
    weighted: bool,
    arrange: Arrange | None = None,
    centred: bool = False,
) -> DataFrame:
    """One row per group: the group columns and the value of each ``(i, item)`` of
    ``chosen`` as ``__mlsql_v{i}``.

    ``rows`` hold the roles' columns (:data:`mlsql._evaluate.front.ROLES`), the groups and,
    when ``weighted``, the checked weight (:data:`mlsql._evaluate.front.WEIGHT`).
    ``arrange``: called on the rows before each aggregation with its keys (the bootstrap
    partitions and sorts them there, so each floating sum adds its terms in one order);
    the rows then hold the groups, ``__mlsql_y``, ``__mlsql_pr`` and, weighted,
    ``__mlsql_wk`` (:data:`TERMS`).
    ``centred``: the rows hold, in the columns :func:`centre_names` names, values of y, ŷ and
    y - ŷ to centre the sums on (any constants per group: the corrected two-pass formula
    cancels their distance from the means, :func:`mlsql.measures.regression.centred_comoment`),
    so the pass of means is not run; ``rae``'s pass of y's mean still is. With ``arrange``
    the sums are DOUBLE sums in its order (exact sums otherwise: in any order).
    """
    items = [item for _, item in chosen]
    first = items[0].name
    cols = [F.col(EV.ROLES["actual"]), F.col(EV.ROLES["predicted"])]
    K.numeric_inputs(first, ["actual", "predicted"], cols)
    w_in = F.col(EV.WEIGHT) if weighted else None
    known = cols[0].isNotNull() & cols[1].isNotNull()
    if w_in is not None:
        known = known & w_in.isNotNull()
    y = F.when(known, K.finite(first, "actual", cols[0]))
    p = F.when(known, K.finite(first, "predicted", cols[1]))
    w = None if w_in is None else F.when(known, w_in)
    rows = rows.select(
        *groups, y.alias("__mlsql_y"), p.alias("__mlsql_pr"),
        *([] if w is None else [w.alias("__mlsql_wk")]),
        *(centre_names().values() if centred else []),
    )  # fmt: skip
    y, p = F.col("__mlsql_y"), F.col("__mlsql_pr")
    w = None if w is None else F.col("__mlsql_wk")
    # exact sums of terms named as columns (in any order), or DOUBLE sums in arrange's order
    terms = Terms("__mlsql_t") if arrange is None else None
    scaled = terms is not None and not centred  # small values moved up for the exact sums
    if not centred:
        first_pass = {_MEAN + k: m for k, m in R.mean_columns(y, p, w).items()}
        if scaled:
            first_pass |= {_SCALE + k: s for k, s in R.scale_columns(y, p, w).items()}
        rows = _joined(rows, groups, first_pass, arrange)
    joined_means = {k: F.col(name) for k, name in centre_names().items()}
    shift = None
    if any(item.name == "rae" for item in items):
        rows = _joined(rows, groups, {_SHIFT: R.shift_column(y, w, joined_means["y"])}, arrange)
        shift = F.col(_SHIFT)
    scales = None
    if scaled:
        scales = {k: F.col(_SCALE + k) for k in ("v", "r", *(["w"] if weighted else []))}
    stats = R.centred_stats(y, p, w, joined_means, shift, F.sum if terms is None else terms, scales)
    # the statistics are aggregated once, as columns, and the formulas read them: written
    # into each formula, the sums made generated code past the JVM's 64 KB a method
    named = {
        f.name: getattr(stats, f.name)
        for f in dataclasses.fields(stats)
        if getattr(stats, f.name) is not None
    }
    found = _aggregated(
        rows if terms is None else terms.project(rows),
        groups,
        [c.alias(_STAT + name) for name, c in named.items()],
        arrange,
    )
    stats = dataclasses.replace(stats, **{name: F.col(_STAT + name) for name in named})
    out = [
        item.measure.build(OPS, stats, **checked_params(item.measure, item.params)).alias(  # type: ignore[misc]
            f"__mlsql_v{i}"
        )
        for i, item in chosen
    ]
    return found.select(*groups, *out)
