"""``mp.evaluate``: every measure's expression in one ``group_by().agg``, then unpivoted.

The inputs are taken by position (``pl.nth``), so any column name works (``*``,
``^a$``, quotes); the weight is checked once, in messages of ``evaluate``, and
handed to every measure. Memory is that of the measures' expressions under
``group_by``: counts for the set and class measures; a group's values where a
measure sorts them (AUC, AP, the medians).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import polars as pl

from mlsql._evaluate import front as EV
from mlsql.polars._engine import POLARS
from mlsql.polars._weights import weight

Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)
_ROLES = EV.ROLES
_WEIGHT, _ORDER = EV.WEIGHT, EV.ORDER

#: the engine's public measure functions by name, handed over by :mod:`mlsql.polars` once it
#: has built them (this module is imported by it, and does not import it back)
MEASURES: dict[str, Callable[..., Any]] = {}


_group = EV.group_column


@EV.documented(POLARS)
def evaluate(
    frame: Frame,
    actual: str,
    predicted: str,
    measures: Sequence[Any],
    by: str | Sequence[str] | None = None,
    sample_weight: str | None = None,
) -> Frame:
    lazy = frame.lazy()
    schema = lazy.collect_schema()
    names = schema.names()
    req = EV.request(names, actual, predicted, measures, by, sample_weight)
    picked = [pl.nth(names.index(actual)).alias(_ROLES["actual"])]
    if predicted in names:
        picked.append(pl.nth(names.index(predicted)).alias(_ROLES["predicted"]))
    picked += [pl.nth(names.index(b)).alias(_group(k)) for k, b in enumerate(req.by)]
    w: pl.Expr | None = None
    if sample_weight is not None:
        column = pl.nth(names.index(sample_weight))
        picked.append(weight(EV.FUNC, column, schema[sample_weight]).alias(_WEIGHT))
        w = pl.col(_WEIGHT)
    rows = lazy.select(picked)
    groups: list[str] = [_group(k) for k in range(len(req.by))]
    reports = EV.label_reports(req.items)
    in_reports = {i for r in reports for i, _ in r.items}
    values = [
        MEASURES[item.name](
            *EV.inputs(item, _ROLES),
            **({"sample_weight": w} if w is not None else {}),
            **item.params,
        ).alias(f"__mlsql_v{i}")
        for i, item in enumerate(req.items)
        if i not in in_reports
    ]
    parts = []
    if values:
        wide = rows.group_by(groups).agg(values) if groups else rows.select(values)
        columns = [(i, f"__mlsql_v{i}") for i in range(len(req.items)) if i not in in_reports]
        parts.append(_long(wide, groups, req.items, columns))
    for r in reports:
        table = _label_report(rows, groups, r, w is not None, isinstance(frame, pl.DataFrame))
        parts.append(_long(table, groups, req.items, [(i, item.name) for i, item in r.items]))
    out = (
        pl.concat(parts)
        .sort([*groups, _ORDER], nulls_last=False)
        .select(
            *(pl.col(g).alias(b) for g, b in zip(groups, req.by, strict=True)),
            "measure",
            "estimate",
        )
    )
    return out.collect() if isinstance(frame, pl.DataFrame) else out


def _long(
    wide: pl.LazyFrame, groups: list[str], items: Sequence[EV.Item], columns: list[tuple[int, str]]
) -> pl.LazyFrame:
    """The rows of the measures ``columns`` (item ``i``'s value in column ``c`` of ``wide``):
    groups, order, measure, estimate, by one unpivot, so the plan holds ``wide`` once (a
    select per measure, concatenated, repeated ``wide``'s plan per measure: 18 class measures
    took 27 s to plan on 15 rows)."""
    var = "__mlsql_column"
    named = {f"__mlsql_e{i}": (i, c) for i, c in columns}
    order = {name: i for name, (i, _) in named.items()}
    labels = {name: items[i].label for name, (i, _) in named.items()}
    return (
        wide.select(*groups, *(pl.col(c).cast(pl.Float64).alias(n) for n, (_, c) in named.items()))
        .unpivot(on=list(named), index=groups, variable_name=var, value_name="estimate")
        .select(
            *groups,
            pl.col(var).replace_strict(order, return_dtype=pl.Int64).alias(_ORDER),
            pl.col(var).replace_strict(labels, return_dtype=pl.String).alias("measure"),
            "estimate",
        )
    )


def _label_report(
    rows: pl.LazyFrame, groups: list[str], r: EV.LabelReport, weighted: bool, in_memory: bool
) -> pl.LazyFrame:
    """The per-label measures of ``r`` per group: per (group, label) counts, then the
    registry's formulas averaged over the labels (the plan of ``multilabel_report``). Its
    messages name the first of the measures, as the aggregates' messages name theirs."""
    from mlsql._front.table_functions import TableCall
    from mlsql.polars.families.label_based import report

    call = TableCall(
        r.items[0][1].name,
        {"actual": _ROLES["actual"], "predicted": _ROLES["predicted"]},
        {"labels": r.labels, "beta": r.beta, "zero_division": r.zero_division},
        groups or None,
        _WEIGHT if weighted else None,
    )
    out = report(rows, call, in_memory)
    assert isinstance(out, pl.LazyFrame)  # the kind of ``rows``
    return out


#: the public functions of this module (frame in, frame out)
FUNCTIONS = {"evaluate": evaluate}
