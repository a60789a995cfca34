"""``ms.evaluate``: every measure's Column in one ``groupBy().agg``, then unpivoted.

Nothing is collected: the result is a DataFrame of groups x measures rows.

The single-label measures (:func:`cell_measures`: accuracy, the class-wise
averages, kappa, MCC, ...) run as their own Columns over the rows where that is
bounded: none needs the group's classes (accuracy, error_rate... are counts), or
mlsql's Java aggregate counts their confusion cells (its jar used, classes of a kind
it counts: :func:`mlsql.spark.jvm.class_cells`; memory: the distinct cells).
Otherwise (Spark Connect, the jar switched off, decimal or date classes) they run in
two levels: the rows first become their distinct cells
``groupBy(by..., actual, predicted)`` with their total (checked) weight, and
the same measures run over the cells weighed by it. The measures are weighted
sums over rows, so the cells give the same value (to rounding, within 1e-12):
a class measure then holds groups x classes² cells however many rows there are.
The binary AUC, AP and Spark's area under the PR curve run over runs of equal
scores sorted in Spark's shuffle (:mod:`mlsql.spark.evaluate_ranks`): a
window over each group's runs, whose buffer spills, where the Column holds the
group's pairs in one array.
The 2x2 measures (binary and rules) aggregate their four cells once, and the formulas run in
projections of that aggregate sized for the JVM's compiler (:mod:`mlsql.spark.evaluate_cells2x2`).
The regression measures run as grouped passes (:mod:`mlsql.spark.evaluate_regression`):
the means per group, then the centred sums over the rows joined to them, where each
measure's own Column would hold the group's values. The binned AUC/AP and the calibration
errors run over cells per bin (:mod:`mlsql.spark.evaluate_bins`), and the agreement
measures over cells per category or column (:mod:`mlsql.spark.evaluate_agreement`), whatever
else is asked for: memory groups x bins (categories). The label-set Brier score counts the
group's labels in a grouped pass first (:mod:`mlsql.spark.evaluate_brier`): memory groups x
labels. Other measures run in one level, in the memory their own
Columns take.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql._evaluate import front as EV
from mlsql._registry import measures
from mlsql.measures import scores as SC
from mlsql.spark import evaluate_agreement as EA
from mlsql.spark import evaluate_bins as EB
from mlsql.spark import evaluate_brier as EBR
from mlsql.spark import evaluate_cells2x2 as E22
from mlsql.spark import evaluate_ranks as ERK
from mlsql.spark import evaluate_regression as ER
from mlsql.spark import jvm
from mlsql.spark._engine import SPARK
from mlsql.spark._types import bound, check_label_array_types
from mlsql.spark._weights import weight
from mlsql.spark.families import _classification as K
from mlsql.spark.families._memory import UNBOUNDED_WITHOUT_JAR
from mlsql.spark.families.ranking import score_fields

_ROLES = EV.ROLES
_WEIGHT, _ORDER = EV.WEIGHT, EV.ORDER
_CELL = "__mlsql_u"


def cell_measures() -> frozenset[str]:
    """The measures evaluated over distinct cells: the single-label class measures (every
    single-label aggregate that gives a number).

    Examples
    --------
    >>> sorted(cell_measures())[:3]
    ['accuracy', 'balanced_accuracy_score', 'bowker_p_value']
    """
    single = (m.name for m in measures(kind="aggregate", family="single_label"))
    return frozenset(n for n in single if n not in EV.NOT_NUMBERS)


#: the engine's public measure functions by name, handed over by :mod:`mlsql.spark` once it
#: has built them (this module is imported by it, and does not import it back)
MEASURES: dict[str, Callable[..., Any]] = {}


_group = EV.group_column


@EV.documented(
    SPARK,
    method="No row is collected to the driver.",
    notes="""
    The single-label class measures count their confusion cells in mlsql's Java
    aggregate where its jar is used and the classes are text, integers, booleans
    or floating-point numbers; otherwise they run in two levels: distinct
    ``(by..., actual, predicted)`` cells with their total weight, then the
    measures over the cells weighed by it. Their memory is groups x cells, never
    rows, either way. The binary AUC, AP and area under the PR curve run over each group's
    runs of equal scores sorted in Spark's shuffle (a window, whose buffer
    spills to disk: memory bounded whatever the rows). The
    regression measures run as grouped passes: the means per group, then the
    centred sums over the rows joined to them (memory: groups, never rows). The
    binned AUC and AP and the calibration errors run over cells per bin: the rows
    grouped by (by..., label, bin) or (by..., bin) first (memory: groups x bins,
    never rows); the agreement measures over the ratings (outcomes) exploded and
    grouped by (by..., category) or (by..., column) first; the label-set Brier
    score over its labels exploded and counted per group first (memory: groups x
    labels, never rows).
    """,
)
def evaluate(
    df: DataFrame,
    actual: str,
    predicted: str,
    measures: Sequence[Any],
    by: str | Sequence[str] | None = None,
    sample_weight: str | None = None,
) -> DataFrame:
    names = df.columns
    req = EV.request(names, actual, predicted, measures, by, sample_weight)
    picked = [bound(df, actual).alias(_ROLES["actual"])]
    if predicted in names:
        picked.append(bound(df, predicted).alias(_ROLES["predicted"]))
    picked += [bound(df, b).alias(_group(k)) for k, b in enumerate(req.by)]
    if sample_weight is not None:
        column = bound(df, sample_weight)
        w = weight(EV.FUNC, column, df.schema[sample_weight].dataType)
        picked.append(w.alias(_WEIGHT))
    rows = df.select(*picked)
    _check_types(req.items, {"actual": actual, "predicted": predicted}, df.schema)
    groups = [_group(k) for k in range(len(req.by))]
    reports = EV.label_reports(req.items)
    in_reports = {i for r in reports for i, _ in r.items}
    # the reports of one label universe share a query: Spark plans it once, not once a report
    by_labels: dict[str, list[EV.LabelReport]] = {}
    for r in reports:
        by_labels.setdefault(repr(r.labels), []).append(r)
    parts = []
    for shared in by_labels.values():
        wide = _label_reports(rows, groups, shared, sample_weight is not None)
        chosen = [
            (i, item, f"__v{k}_{item.name}") for k, r in enumerate(shared) for i, item in r.items
        ]
        parts.append(_long(wide, groups, chosen))
    rest = [(i, item) for i, item in enumerate(req.items) if i not in in_reports]
    # the regression measures run as grouped passes whatever else is asked for
    passes = [(i, item) for i, item in rest if ER.applies([item])]
    # the binned, calibration and agreement measures run over cells per bin, category or
    # column: one query per kind of cells (a grid, bins, an input)
    celled: dict[Any, list[tuple[int, EV.Item]]] = {}
    for i, item in rest:
        for module in (EB, EA, ERK):
            if not ER.applies([item]) and (cells := module.key(item)) is not None:
                celled.setdefault((module.__name__, cells), []).append((i, item))
    in_cells = {i for chosen in celled.values() for i, _ in chosen}
    # the label-set Brier score counts its labels in a grouped pass, not in collected sets
    briers = [(i, item) for i, item in rest if EBR.applies(item)]
    others = [
        (i, item)
        for i, item in rest
        if not ER.applies([item]) and i not in in_cells and not EBR.applies(item)
    ]
    parts += [_others(rows, groups, c, sample_weight is not None) for c in (passes, others) if c]
    if briers:
        wide = EBR.values(rows, groups, briers, sample_weight is not None)
        parts.append(_long(wide, groups, [(i, item, f"__mlsql_v{i}") for i, item in briers]))
    for (module_name, _), per_cell in celled.items():
        if module_name == ERK.__name__:
            wide = ERK.values(rows, groups, per_cell, sample_weight is not None)
        else:
            module = EB if module_name == EB.__name__ else EA
            wide = module.values(rows, groups, per_cell, sample_weight is not None, MEASURES)
        parts.append(_long(wide, groups, [(i, item, f"__mlsql_v{i}") for i, item in per_cell]))
    long = reduce(DataFrame.unionByName, parts)
    order = [*(F.col(g).asc_nulls_first() for g in groups), F.col(_ORDER)]
    return long.orderBy(*order).select(
        *(F.col(g).alias(b) for g, b in zip(groups, req.by, strict=True)),
        F.col("measure"),
        F.col("estimate"),
    )


def _check_types(items: Sequence[EV.Item], columns: dict[str, str], schema: Any) -> None:
    """The measures that take numbers or 0/1 labels refuse columns of other types with
    mlsql's message, as their functions do: the paths below read the columns cast to DOUBLE,
    which took text such as '0' and '1' for numbers. The measures of two label lists refuse
    lists of two label kinds so too (Spark's analyzer failed on its set functions)."""
    for item in items:
        m = item.measure
        if "scores" in m.inputs:  # a score per label: not a map, its map functions fail
            role = item.roles[m.inputs.index("scores")]
            score_fields(item.name, "scores", schema[columns[role]].dataType)
            continue
        if m.family in (*EV.LABEL_LISTS, "hivemall"):  # Hivemall's fmeasure: where both are lists
            types = [schema[columns[role]].dataType for role in item.roles]
            if all(isinstance(t, T.ArrayType) for t in types):
                check_label_array_types(item.name, list(item.roles), types)
            continue
        if m.family not in ("regression", "scores", "binary"):
            continue
        for name, role in zip(m.inputs, item.roles, strict=True):
            dtype = schema[columns[role]].dataType
            labels = m.family == "binary" or (m.family == "scores" and SC.ROLES[name] == "label")
            (K.binary_type if labels else K.number_type)(item.name, name, dtype)


def _long(wide: DataFrame, groups: list[str], chosen: list[tuple[int, EV.Item, str]]) -> DataFrame:
    """The rows of the measures ``chosen`` (position, item, the column of ``wide`` that holds
    its value), unpivoted in one select: groups, order, measure, estimate."""
    cells: list[Column] = [
        F.struct(
            F.lit(i).alias(_ORDER),
            F.lit(item.label).alias("measure"),
            F.col(f"`{column}`").cast("double").alias("estimate"),
        )
        for i, item, column in chosen
    ]
    long = wide.select(*groups, F.explode(F.array(*cells)).alias(_CELL))
    return long.select(
        *groups,
        F.col(f"{_CELL}.{_ORDER}").alias(_ORDER),
        F.col(f"{_CELL}.measure").alias("measure"),
        F.col(f"{_CELL}.estimate").alias("estimate"),
    )


def _label_reports(
    rows: DataFrame, groups: list[str], shared: list[EV.LabelReport], weighted: bool
) -> DataFrame:
    """The per-label measures of the reports ``shared`` (one label universe) per group, in one
    query: per (group, label) counts, then the registry's formulas averaged over the labels
    (the plan of ``multilabel_report``), report ``k``'s columns prefixed ``__v{k}_``. Each
    report's messages name the first of its measures, as the aggregates' messages name
    theirs."""
    from mlsql.spark.families.label_based import reports

    return reports(
        [(r.items[0][1].name, r.beta, r.zero_division) for r in shared],
        rows,
        _ROLES["actual"],
        _ROLES["predicted"],
        labels=shared[0].labels,
        by=groups or None,
        sample_weight=_WEIGHT if weighted else None,
    )


def _others(
    rows: DataFrame, groups: list[str], chosen: list[tuple[int, EV.Item]], weighted_rows: bool
) -> DataFrame:
    """The rows of the measures that are aggregates: one ``groupBy().agg``, unpivoted."""
    sample_weight = _WEIGHT if weighted_rows else None
    single_label = all(item.name in cell_measures() for _, item in chosen)
    two_level = single_label and not _one_level(rows, [item for _, item in chosen])
    if two_level:
        keys = [*groups, *sorted({r for _, item in chosen for r in item.roles})]
        keys = [_ROLES.get(k, k) for k in keys]
        total = F.sum(F.col(_WEIGHT)) if sample_weight is not None else F.count(F.lit(1))
        rows = rows.groupBy(*keys).agg(total.cast("double").alias(_WEIGHT))
    weighted = two_level or weighted_rows
    items = [item for _, item in chosen]
    if E22.applies(items):  # the cells once, the formulas in projections the JVM compiles
        parts = [
            _long(wide, groups, [(i, item, f"__mlsql_v{i}") for i, item in part])
            for wide, part in E22.values(rows, groups, chosen, weighted_rows)
        ]
        return reduce(DataFrame.unionByName, parts)
    if ER.applies(items):
        wide = ER.values(rows, groups, chosen, weighted_rows)
    else:
        # the single-label Columns typed (the rows' own): only the form their classes take
        # is planned (a name plans the Java cells and the collected rows, one folded away);
        # Hivemall's fmeasure reads the type to take label arrays or binary labels
        def column(item: EV.Item) -> Callable[[str], Column]:
            typed = single_label or item.measure.family == "hivemall"
            return (lambda c: bound(rows, c)) if typed else F.col

        values = [
            MEASURES[item.name](
                *(column(item)(c) for c in EV.inputs(item, _ROLES)),
                **({"sample_weight": column(item)(_WEIGHT)} if weighted else {}),
                **item.params,
            ).alias(f"__mlsql_v{i}")
            for i, item in chosen
        ]
        wide = rows.groupBy(*groups).agg(*values) if groups else rows.agg(*values)
    return _long(wide, groups, [(i, item, f"__mlsql_v{i}") for i, item in chosen])


def _one_level(rows: DataFrame, items: Sequence[EV.Item]) -> bool:
    """Whether the single-label measures ``items`` are bounded as their own Columns over the
    rows: none needs the group's classes (accuracy, error_rate... are counts), or mlsql's
    Java aggregate counts their confusion cells (memory: the distinct cells, as the two
    levels' second; :func:`mlsql.spark.jvm.class_cells`)."""
    if not any(item.name in UNBOUNDED_WITHOUT_JAR for item in items):
        return True
    roles = sorted({_ROLES.get(r, r) for item in items for r in item.roles})
    return jvm.counts_cells(rows, [rows.schema[r].dataType for r in roles])


#: the public functions of this module (frame in, frame out)
FUNCTIONS = {"evaluate": evaluate}
