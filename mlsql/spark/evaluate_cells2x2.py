"""``ms.evaluate`` of the 2x2 measures (binary and rules): the four cells once, then the formulas.

Each measure's own Column sums the four cells (tp, fp, fn, tn) and runs its
formula in the aggregate's output, which a user's session compiles to one Java
method. With kappa's terms written out, each kappa test compiled to about 10,000
lines (Spark 4.3) and two of them passed the JVM's 64 KB, so Spark ran the whole
plan interpreted; kappa's terms are now bound once (3,400-6,200 lines a test).
Here the cells are aggregated once per group, as columns, and the formulas run in
projections of that aggregate, packed in order so that each projection's
formulas stay within :data:`BUDGET` characters of their expression text
(:func:`_size`): a guard for the compiler's limit, not needed by today's
formulas (all 21 binary formulas compile in one projection). The projections are
unioned, and Spark shares the aggregate between them. The cells and formulas are
the Columns' own (:func:`mlsql.spark.families.binary.cells`, the registry's
formulas): the values are the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from mlsql._evaluate import front as EV
from mlsql._front.build import checked_params
from mlsql.measures.contingency import Table2x2
from mlsql.spark._build import OPS
from mlsql.spark.families import _classification as K
from mlsql.spark.families import binary, rules

#: the families whose aggregates are a formula of the four cells of (actual, predicted)
FAMILIES = (*binary.FAMILIES, *rules.FAMILIES)
_CELL = "__mlsql_c_"
#: at most this many characters of formula text in one projection. Measured on Spark 4.3
#: with the fallback off and kappa's terms written out: kappa_z_value with kappa_std_error
#: (13,400 characters, 19,000 lines of Java) failed to compile; kappa_p_value with
#: kappa_z_value (12,900) compiled. Text with fewer repeated names compiles to less code a
#: character: with the terms bound (kappa tests 2,400-5,200 characters, the others 80-2,500)
#: all 21 binary formulas, about 21,000 characters, compile in one projection.
BUDGET = 10_000
#: a measure's position, its item and its formula
_Formula = tuple[int, EV.Item, Column]


def applies(items: Sequence[EV.Item]) -> bool:
    """Whether every measure asked for is a 2x2 aggregate of the same two inputs.

    Examples
    --------
    >>> from mlsql._evaluate import front as EV
    >>> names = ["a", "p"]
    >>> applies(EV.request(names, "a", "p", ["binary_f1", "binary_kappa"], None, None).items)
    True
    >>> applies(EV.request(names, "a", "p", ["binary_f1", "accuracy"], None, None).items)
    False
    """
    return (
        bool(items)
        and all(i.measure.family in FAMILIES and i.measure.kind == "aggregate" for i in items)
        and len({i.roles for i in items}) == 1
    )


def values(
    rows: DataFrame, groups: list[str], chosen: Sequence[tuple[int, EV.Item]], weighted: bool
) -> list[tuple[DataFrame, list[tuple[int, EV.Item]]]]:
    """Frames of one row per group, each with the part of ``chosen`` (position, item) whose
    values it holds: the group columns and each value as ``__mlsql_v{i}``.

    ``rows`` hold the roles' columns (:data:`mlsql._evaluate.front.ROLES`), the groups and,
    when ``weighted``, the checked weight (:data:`mlsql._evaluate.front.WEIGHT`). Messages
    about a value name the first measure, as the label reports' do.
    """
    first = chosen[0][1]
    actual, predicted = (F.col(c) for c in EV.inputs(first, EV.ROLES))
    K.binary_inputs(first.name, first.measure.inputs, [actual, predicted])
    weight = F.col(EV.WEIGHT) if weighted else None
    cells = binary.cells(first.name, actual, predicted, weight)
    names = [f.name for f in dataclasses.fields(Table2x2)]
    sums = [getattr(cells, n).alias(_CELL + n) for n in names]
    found = rows.groupBy(*groups).agg(*sums) if groups else rows.agg(*sums)
    stats = Table2x2(*(F.col(_CELL + n) for n in names))
    formulas = [
        (i, item, item.measure.build(OPS, stats, **checked_params(item.measure, item.params)))  # type: ignore[misc]
        for i, item in chosen
    ]
    return [
        (
            found.select(*groups, *(f.alias(f"__mlsql_v{i}") for i, _, f in part)),
            [(i, item) for i, item, _ in part],
        )
        for part in _packed(formulas)
    ]


def _size(formula: Column) -> int:
    """The length of the formula's expression text: the generated code grows with it
    (about 1.3 lines of Java a character for the 2x2 formulas)."""
    return len(formula._jc.toString())  # type: ignore[attr-defined,operator]


def _packed(formulas: list[_Formula]) -> list[list[_Formula]]:
    """``formulas`` in order, in runs of at most :data:`BUDGET` characters (a larger formula
    alone)."""
    parts: list[list[_Formula]] = []
    used = BUDGET
    for formula in formulas:
        size = _size(formula[2])
        if used + size > BUDGET:
            parts.append([])
            used = 0
        parts[-1].append(formula)
        used += size
    return parts
