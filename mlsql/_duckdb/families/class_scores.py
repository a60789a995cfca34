"""Class probabilities in DuckDB: the multiclass Brier score (a sum, a count and a maximum
per group) and the top-label calibration error.

Each known row's squared errors over the classes it scores (a class it does not score
adds 1 if it is the true one) are summed with ``fsum``; the widest row (its scored
classes and its true one) gives the number of classes for ``scale_by_half='auto'``.
The scores are a MAP, or a list of {label, score} structs: each row's are read once as
(key, value) entries (``_mlsql_score_entries``: a list's first entry of a label kept), bound
to a lambda variable. A MAP built from the list at each mention (``_mlsql_scores_map``, about
1.1 CPU s a million rows of 4 entries each time) made the Brier score cost 6.2 CPU s at 1M
rows of 4 classes; 1.5 now.

``multiclass_calibration_error`` reads each known row's top class: its scored (class,
probability) entries, each probability checked, sorted by probability from the highest and
then by label, the first giving the confidence and whether the row is correct. Its bins are
``expected_calibration_error``'s (:func:`mlsql._duckdb.families.scores.over_bins`).
"""

from __future__ import annotations

from typing import Any

from mlsql._duckdb import classification_checks as CC
from mlsql._duckdb.families.scores import over_bins
from mlsql._duckdb.library import Macro, Qualify
from mlsql._duckdb.ops import SqlOps
from mlsql._registry import Measure, measures
from mlsql._sqlexpr import Sql, call, lit
from mlsql.measures import class_scores as CS
from mlsql.measures import scores as SC

FILE = "class_scores.sql"
DESCRIPTION = (
    "The Brier score of class probabilities (scikit-learn's multiclass brier_score_loss), "
    "with scale_by_half."
)
ORDER = 46
FAMILIES: tuple[str, ...] = ()  # rendered here (the scores overloads)


def _bound(q: Qualify, row: str) -> str:
    """``row`` (SQL over ``s``) on the row's scores as (key, value) entries, bound once:
    ``_mlsql_score_entries`` reads a MAP or a {label, score} list (its first entry of a label)."""
    return f"list_transform([{q('_mlsql_score_entries')}(scores)], lambda s: {row})[1]"


#: the row's scored entries, the labels it scores, and the score of label ``a`` (NULL if none)
ENTRIES = "list_filter(s, lambda e: e.key IS NOT NULL AND e.value IS NOT NULL)"
KEYS = "list_transform(s, lambda e: e.key)"
SCORE_OF_A = "list_filter(s, lambda e: e.key = a)[1].value"


def _actual(q: Qualify, m: Measure) -> str:
    """The row's true label, checked to be of the kind of the scores' labels."""
    return (
        f"{q('_mlsql_label_list_as')}([actual], [actual], {KEYS}, {KEYS}, "
        f"{lit(m.name)}, 'actual', 'scores')[1]"
    )


def _probability(q: Qualify, m: Measure, checked: bool = True) -> Sql:
    """The checked probability of a score entry ``e`` (finite, in [0, 1]); unchecked, the
    value as DOUBLE (bootstrap's rows: :mod:`mlsql._resample.numbers` checks them, with the
    message every engine gives)."""
    if not checked:
        return Sql("CAST(e.value AS DOUBLE)")
    number = call(q("_mlsql_number"), Sql("e.value"), "scores", m.name)
    return call(q("_mlsql_probability"), number, "scores", m.name)


def _top(q: Qualify, m: Measure, checked: bool = True) -> Sql:
    """A row's top class as {p, y}: its confidence ``p`` (its highest probability, 0 without a
    scored class) and ``y``, whether its class (ties: the smallest label) is the true one, as
    1.0 or 0.0. The row's entries are sorted once (bound by a one-element list_transform)."""
    entries = ENTRIES
    # sorted ascending by (-p, label): the highest probability first, the smallest label among
    # ties; + 0.0 makes -0.0 equal to 0.0
    keyed = f"list_transform({entries}, lambda e: struct_pack(v := -{_probability(q, m, checked)} + 0.0, k := e.key))"
    top = f"list_sort({keyed})[1]"
    a = _actual(q, m)
    pair = "struct_pack(p := coalesce(-t.v, 0.0), y := CASE WHEN t.k = a THEN 1.0 ELSE 0.0 END)"
    row = f"list_transform([{top}], lambda t: list_transform([{a}], lambda a: {pair})[1])[1]"
    return Sql(_bound(q, row))


def _row(q: Qualify, m: Measure, ops: SqlOps, checked: bool = True) -> tuple[Sql, Sql]:
    """A row's Σ of squared errors over its classes, and its number of classes (SQL over the
    macro's ``actual`` and ``scores``; NULL-free only on known rows)."""
    a = _actual(q, m)
    p = _probability(q, m, checked)
    term = CS.class_squared_error(ops, p, Sql("e.key = a"))
    entries = ENTRIES
    unscored = f"CASE WHEN {SCORE_OF_A} IS NULL THEN 1 ELSE 0 END"
    loss = (
        f"list_transform([{a}], lambda a: coalesce(list_sum(list_transform({entries}, "
        f"lambda e: {term})), 0) + {unscored})[1]"
    )
    width = f"list_transform([{a}], lambda a: len({entries}) + {unscored})[1]"
    return Sql(_bound(q, loss)), Sql(_bound(q, width))


def _calibration(q: Qualify, m: Measure, ops: SqlOps, weighted: bool) -> SC.CalibrationStats:
    """The top labels' (bin, confidence - correct[, weight]) triples over the known rows."""
    known = "actual IS NOT NULL AND scores IS NOT NULL"
    if weighted:
        w = CC.weight(m.name, q)
        known = f"{known} AND {w} IS NOT NULL"
        n = Sql(f"sum(CASE WHEN {known} THEN {w} END)")
    else:
        n = Sql(f"count(CASE WHEN {known} THEN 1 END)")
    row = _top(q, m)
    if weighted:
        row = Sql(f"struct_insert({row}, w := {w})")

    def bins(n_bins: object, term: SC.BinTerm, largest: bool) -> Sql:
        b = SC.calibration_bin(ops, Sql("r.p"), n_bins)
        if weighted:
            triple = f"struct_pack(b := {b}, d := (r.p - r.y) * r.w, w := r.w)"
            size = "list_sum(list_transform(f, lambda x: x.w))"
        else:
            triple, size = f"struct_pack(b := {b}, d := r.p - r.y)", "len(f)"
        rows = f"list({row}) FILTER (WHERE {known})"
        pairs = f"list_transform({rows}, lambda r: {triple})"
        return over_bins(pairs, n_bins, term, largest, size)

    return SC.CalibrationStats(n=n, over_bins=bins)


def _stats(q: Qualify, m: Measure, ops: SqlOps, weighted: bool) -> object:
    if m.name == "multiclass_calibration_error":
        return _calibration(q, m, ops, weighted)
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


class _Called:
    """A stand-in for a measure in the checks' messages: the calling function, the macro's
    ``func`` parameter."""

    name = Sql("func")


def _row_macro(q: Qualify, ops: SqlOps) -> Macro:
    """A known row's numbers for ``bootstrap`` and ``compare`` (the Python calls resample
    them: :data:`mlsql._resample.numbers.CLASS_SCORE_STATS`); NULL where either input is.
    The probabilities are read unchecked: the Python calls check each row's lowest and
    highest, and say what Polars and Spark say (a DuckDB error naming ``scores`` had been
    raised first)."""
    m: Any = _Called()
    loss, width = _row(q, m, ops, checked=False)
    top = _top(q, m, checked=False)
    values = "list_transform(ENTRIES, lambda e: e.value)".replace("ENTRIES", ENTRIES)
    body = (
        f"CASE WHEN actual IS NOT NULL AND scores IS NOT NULL THEN struct_pack("
        f"loss := {loss}, width := {width}, confidence := {top}.p, correct := {top}.y,"
        f" low := {_bound(q, f'list_min({values})')}, high := {_bound(q, f'list_max({values})')})"
        " END"
    )
    return Macro(
        FILE,
        "_mlsql_class_score_row",
        ("actual", "scores", "func"),
        body,
        "A row's Σ of squared errors over its classes, its classes, top probability, whether"
        " its top class is actual, lowest and highest probability (bootstrap's tuple).",
        public=False,
    )


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """multiclass_brier_score and multiclass_calibration_error over a score MAP or {label,
    score} lists, with and without weights; each row's numbers for bootstrap."""
    out: list[Macro] = [_row_macro(qualify, ops)]
    for m in measures(family=CS.FAMILY):
        if m.build is None or not m.available_in("duckdb"):
            continue
        out += CC.render(
            m, qualify, ops, FILE, _stats(qualify, m, ops, False),
            weighted=_stats(qualify, m, ops, True),
        )  # fmt: skip
    return out
