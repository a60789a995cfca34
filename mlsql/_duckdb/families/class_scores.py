"""The multiclass Brier score in DuckDB: a sum, a count and a maximum per group.

Each known row's squared errors over the classes it scores (a class it does not score
adds 1 if it is the true one) are summed with ``fsum``; the widest row (its scored
classes and its true one) gives the number of classes for ``scale_by_half='auto'``.
The scores are a MAP, or a list of {label, score} structs (typed overloads convert it
with ``_mlsql_scores_map``, as the label-score measures do).
"""

from __future__ import annotations

from mlsql._duckdb import classification_checks as CC
from mlsql._duckdb.families.ranking import with_entry_lists
from mlsql._duckdb.library import Macro, Qualify
from mlsql._duckdb.ops import SqlOps
from mlsql._registry import Measure, measures
from mlsql._sqlexpr import Sql, call, lit
from mlsql.measures import class_scores as CS

FILE = "class_scores.sql"
DESCRIPTION = (
    "The Brier score of class probabilities (scikit-learn's multiclass brier_score_loss), "
    "with scale_by_half."
)
ORDER = 46
FAMILIES: tuple[str, ...] = ()  # rendered here (the scores overloads)


def _row(q: Qualify, m: Measure, ops: SqlOps) -> tuple[Sql, Sql]:
    """A row's Σ of squared errors over its classes, and its number of classes (SQL over the
    macro's ``actual`` and ``scores``; NULL-free only on known rows)."""
    keys = "map_keys(scores)"
    a = (
        f"{q('_mlsql_label_list_as')}([actual], [actual], {keys}, {keys}, "
        f"{lit(m.name)}, 'actual', 'scores')[1]"
    )
    number = call(q("_mlsql_number"), Sql("e.value"), "scores", m.name)
    p = call(q("_mlsql_probability"), number, "scores", m.name)
    term = CS.class_squared_error(ops, p, Sql("e.key = a"))
    entries = (
        "list_filter(map_entries(scores), lambda e: e.key IS NOT NULL AND e.value IS NOT NULL)"
    )
    unscored = "CASE WHEN map_extract_value(scores, a) IS NULL THEN 1 ELSE 0 END"
    loss = (
        f"list_transform([{a}], lambda a: coalesce(list_sum(list_transform({entries}, "
        f"lambda e: {term})), 0) + {unscored})[1]"
    )
    width = f"list_transform([{a}], lambda a: len({entries}) + {unscored})[1]"
    return Sql(loss), Sql(width)


def _stats(q: Qualify, m: Measure, ops: SqlOps, weighted: bool) -> CS.ClassBrierStats:
    loss, width = _row(q, m, ops)
    known = "actual IS NOT NULL AND scores IS NOT NULL"
    if not weighted:
        return CS.ClassBrierStats(
            n=Sql(f"count(CASE WHEN {known} THEN 1 END)"),
            total_loss=Sql(f"fsum(CASE WHEN {known} THEN {loss} END)"),
            n_classes=Sql(f"max(CASE WHEN {known} THEN {width} END)"),
        )
    w = CC.weight(m.name, q)
    known = f"{known} AND {w} IS NOT NULL"
    return CS.ClassBrierStats(
        n=Sql(f"sum(CASE WHEN {known} THEN {w} END)"),
        total_loss=Sql(f"fsum(CASE WHEN {known} THEN {loss} * {w} END)"),
        n_classes=Sql(f"max(CASE WHEN {known} THEN {width} END)"),
    )


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """multiclass_brier_score over a score MAP or {label, score} lists, with and without
    weights."""
    out: list[Macro] = []
    for m in measures(family=CS.FAMILY):
        if m.build is None or not m.available_in("duckdb"):
            continue
        rendered = CC.render(
            m, qualify, ops, FILE, _stats(qualify, m, ops, False),
            weighted=_stats(qualify, m, ops, True),
        )  # fmt: skip
        for macro in rendered:
            out += with_entry_lists(qualify, macro) if macro.name == m.name else [macro]
    return out
