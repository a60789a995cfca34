"""Averaged precision and ROC AUC over label scores in DuckDB: aggregate macros over lists.

The aggregate collects the group's known rows as one list (``list(...) FILTER``)
and does the rest with list functions, so it runs under GROUP BY:

1. cells: per row, its scored labels (score, true?) and its true labels
   without a score (-infinity, true), each with the row's index;
2. segments: the cells sorted by (segment, score, class) descending, the
   segment being the label (macro, weighted), the row (samples) or nothing
   (micro); the segments' ends are where the segment changes from one cell
   to the next, and each segment is a slice of the sorted list;
3. per segment, the statistics of :class:`mlsql.measures.label_scores.Segment`:
   the positives' positions with negatives first among ties give N(>= s) at
   the end of each run (``_mlsql_run_precision_sum``, shared with
   ``average_precision_score``); the positives' positions summed in two
   orders (negatives first, positives first) give U with ties one half.

The unscored negative cells are counted (rows x labels - explicit cells),
never built. ``average`` is a macro parameter: the four averages are four
branches of one CASE, and DuckDB evaluates only the branch taken.

The overload with ``sample_weight`` (each row checked by ``_mlsql_weight``)
keeps the rows of positive weight, gives each cell its row's weight, sorts
each segment's cells once and folds them (``_mlsql_weighted_precision_sum``
and ``_mlsql_weighted_u``, shared with the binary score aggregates); under
samples a row's value needs no weight (every cell of the row weighs the
same), so the rows' statistics are the unweighted ones, each with its row's
weight. A call without a weight runs the unweighted macro, unchanged.

``multilabel_brier_score`` (:func:`_brier_macros`) holds no cell: per group an ``fsum`` of
the known rows' squared errors, a count, and a ``histogram`` of their sorted label sets,
whose keys give the label universe (memory grows with the distinct sets, not the cells).

Native (:func:`native_overrides`, on connections where mlsql's DuckDB
extension is loaded): the same macros, whose segments come from one call of
the extension's aggregate ``mlsql_native_label_scores`` (native/label_scores.h)
instead of lists: it keeps per group a table of (label, score) -> positive and
negative weight (micro: score -> weights) and emits each segment's statistics;
under samples it computes each row's statistics as the row arrives and keeps
their weighted means per (positives, unscored positives) of a row (a row's
value is linear in its other statistics once those two and the number of
labels are fixed, so one such segment, weighing its rows, stands for all of
them in the mean). The formulas on top are the registry's, as in the portable
macros. Memory: per group, 43-85 bytes per distinct (label, score) cell (see
native/label_scores.h), where the portable macros hold every cell, and labels
x cells under macro and weighted.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from mlsql._duckdb import classification_checks as CC
from mlsql._duckdb import native as _native
from mlsql._duckdb.classification_checks import let
from mlsql._duckdb.families import class_scores as CSD
from mlsql._duckdb.families.ranking import ENTRY_TYPES, with_entry_lists
from mlsql._duckdb.library import NATIVE_LISTS, WIDE_INTEGER_LISTS, Macro, Qualify
from mlsql._duckdb.ops import SqlOps
from mlsql._registry import Measure, measures
from mlsql._sqlexpr import Sql, call, lit
from mlsql.measures import class_scores as CS
from mlsql.measures import label_scores as LS

FILE = "label_scores.sql"
DESCRIPTION = (
    "Averaged precision, ROC AUC and Brier score over label scores (scikit-learn's multi-label "
    "average_precision_score and roc_auc_score, and brier_score_loss per label column): "
    "micro, macro, weighted, samples."
)
ORDER = 45
FAMILIES: tuple[str, ...] = ()  # rendered here: the average picks the segments

SEGMENT_FIELDS = ("n_explicit", "n_positive", "n_positive_unscored", "precision_sum", "u")


ENDS = (
    "list_filter(list_transform(list_zip(xs.a, xs.a[2:]), lambda z, i:"
    " CASE WHEN z[2] IS NULL OR z[2].g <> z[1].g THEN i END), lambda i: i IS NOT NULL)"
)
NEG_INF = "CAST('-inf' AS DOUBLE)"
#: per average: the segment key of a cell ``c``, and a segment's cell count (n rows, nu labels)
SEGMENTS = {
    "micro": ("0", "p.n * g.nu"),
    "macro": ("c.l", "p.n"),
    "weighted": ("c.l", "p.n"),
    "samples": ("c.r", "g.nu"),
}


def _cells_macro(name: str, extra: str) -> Macro:
    """The cells macro ``name``; ``extra``: more fields a cell copies from its row ``x``."""
    weighted = " and weight" if extra else ""
    return Macro(
        FILE,
        name,
        ("known_rows",),
        f"""flatten(list_transform(known_rows, lambda x, i: list_concat(
        list_transform(list_filter(map_entries(x.m), lambda e: e.key IS NOT NULL AND e.value IS NOT NULL),
            lambda e: {{'r': i, 'l': e.key, 's': CAST(e.value AS DOUBLE) + 0.0, 'y': list_contains(x.a, e.key){extra}}}),
        list_transform(list_filter(list_distinct(x.a), lambda t: map_extract_value(x.m, t) IS NULL),
            lambda t: {{'r': i, 'l': t, 's': {NEG_INF}, 'y': true{extra}}}))))""",
        f"The explicit cells of known rows {{a: actual, m: score map{', w: weight' if extra else ''}}}: "
        f"each scored label (row, label, score, true?{weighted}) and each true label without "
        "a score (at -infinity).",
        public=False,
    )


def _weighted_helpers(q: Qualify) -> list[Macro]:
    """The weighted overload's helpers: segments of weighted cells and their statistics."""
    fold = "list_transform(sl, lambda c: {'s': c.s, 'y': CAST(c.y AS DOUBLE), 'w': c.w})"
    return [
        Macro(
            FILE,
            "_mlsql_weighted_segment_slices",
            ("keyed",),
            # the cells rebuilt as structs, as in _mlsql_segment_slices: DuckDB binds the
            # macro's body at its creation, when a bare parameter has no known fields
            f"""list_transform([{{'a': list_sort(list_transform(keyed,
            lambda c: {{'g': c.g, 's': c.s, 'y': c.y, 'w': c.w}}), 'DESC')}}], lambda xs: list_transform(
        list_zip({ENDS}, list_prepend(0, {ENDS}), true),
            lambda e: list_slice(xs.a, e[2] + 1, e[1])))[1]""",
            "Weighted cells {g, s, y, w} sorted by (g, s) descending and cut into segments by g.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_weighted_segment_stats",
            ("sl",),
            f"""{{
            'n_explicit': list_sum(list_transform(sl, lambda c: c.w)),
            'n_positive': coalesce(list_sum(list_transform(sl, lambda c: CASE WHEN c.y THEN c.w ELSE 0 END)), 0),
            'n_positive_unscored': coalesce(list_sum(list_transform(sl,
                lambda c: CASE WHEN c.y AND c.s = {NEG_INF} THEN c.w ELSE 0 END)), 0),
            'precision_sum': {q("_mlsql_weighted_precision_sum")}(list_filter({fold}, lambda c: c.s > {NEG_INF})),
            'u': {q("_mlsql_weighted_u")}(list_reverse({fold}))}}""",
            "A segment's statistics from its weighted cells {s, y, w} sorted by score "
            "descending: the weights of its cells, positives and unscored positives, "
            "Σ over runs of the positive weight x WP(>= s) / W(>= s), and the weighted U.",
            public=False,
        ),
    ]


def _helpers(q: Qualify) -> list[Macro]:
    return [
        _cells_macro("_mlsql_label_score_cells", ""),
        _cells_macro("_mlsql_weighted_label_score_cells", ", 'w': x.w"),
        Macro(
            FILE,
            "_mlsql_segment_slices",
            ("keyed",),
            f"""list_transform([{{
            'a': list_sort(list_transform(keyed, lambda c: {{'g': c.g, 's': c.s, 'k': NOT c.y}}), 'DESC'),
            'b': list_sort(list_transform(keyed, lambda c: {{'g': c.g, 's': c.s, 'k': c.y}}), 'DESC')}}],
        lambda xs: list_transform(list_zip({ENDS}, list_prepend(0, {ENDS}), true),
            lambda e: {{'a': list_slice(xs.a, e[2] + 1, e[1]), 'b': list_slice(xs.b, e[2] + 1, e[1])}}))[1]""",
            "Cells {g, s, y} cut into segments by g, each sorted by score descending twice: "
            "negatives first among ties (a) and positives first (b). A segment ends where g "
            "changes from one cell to the next.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_segment_stats",
            ("a", "b"),
            f"""list_transform([list_filter(list_transform(a, lambda x, i: {{'s': x.s, 'i': i, 'y': NOT x.k}}), lambda x: x.y)],
        lambda pos: {{
            'n_explicit': len(a),
            'n_positive': len(pos),
            'n_positive_unscored': len(list_filter(pos, lambda x: x.s = {NEG_INF})),
            'precision_sum': coalesce({q("_mlsql_run_precision_sum")}(list_filter(pos, lambda x: x.s > {NEG_INF})), 0),
            'u': len(pos) * (len(a) + 1) - len(pos) * (len(pos) + 1) / 2
                - (coalesce(list_sum(list_transform(pos, lambda x: x.i)), 0)
                   + coalesce(list_sum(list_transform(b, lambda x, i: CASE WHEN x.k THEN i ELSE 0 END)), 0)) / 2}})[1]""",
            "A segment's statistics from its cells sorted with negatives first (a) and "
            "positives first (b) among ties: explicit cells, positives (unscored ones), "
            "Σ P(>= s) / N(>= s) over the scored positives, and U.",
            public=False,
        ),
    ]


#: per average, weighted: a segment's cell weight (p.wsum: the known rows' weight)
WEIGHTED_CELLS = {"micro": "p.wsum * g.nu", "samples": "g.nu"}


def _over_segments(n_cells: str, row_weight: bool) -> Callable[..., Sql]:
    """:attr:`LabelScoreStats.over_segments` over the bound segments ``g.segs`` (each with
    :data:`SEGMENT_FIELDS`, and its weight ``w`` where ``row_weight``) of ``n_cells`` cells."""

    def over_segments(per_segment: Any, sums: dict[str, Any], finish: Any) -> Sql:
        seg = LS.Segment(
            n_cells=Sql(n_cells),
            **{f: Sql(f"sg.{f}") for f in SEGMENT_FIELDS},
            weight=Sql("sg.w") if row_weight else 1,
        )
        values = SimpleNamespace(**per_segment(seg))
        totals = ", ".join(
            f"'{k}': coalesce(list_sum(list_transform(g.segs, lambda sg: {term(values)})), 0)"
            for k, term in sums.items()
        )
        return let(f"{{{totals}}}", "tot", finish({k: Sql(f"tot.{k}") for k in sums}))

    return over_segments


def _stats(
    q: Qualify, average: str, skips: Sql, weighted: bool = False
) -> tuple[LS.LabelScoreStats, str]:
    """The statistics of one average, and the SQL of what they read: ``g.segs`` (each
    segment's statistics) and ``g.nu`` (labels), beside the bound ``p.cells`` and ``p.n``
    (weighted: also ``p.wsum``, the known rows' weight, and ``p.npos``, their rows of
    positive weight; each segment of ``p.row_segs`` has its row's weight ``w``).

    Values are bound as struct fields of one lambda each: DuckDB binds nested lambdas at a
    cost that grows fast with their depth, so the levels are few.
    """
    key, n_cells = SEGMENTS[average]
    if weighted:
        n_cells = WEIGHTED_CELLS.get(average, "p.wsum")
    nu = "'nu': len(list_distinct(list_transform(p.cells, lambda c: c.l)))"
    if average == "samples":  # each row's segment, computed per row (see _row_segments)
        segments = f"{{'segs': p.row_segs, {nu}}}"
    elif weighted:
        keyed = f"list_transform(p.cells, lambda c: {{'g': {key}, 's': c.s, 'y': c.y, 'w': c.w}})"
        segments = (
            f"{{'segs': list_transform({q('_mlsql_weighted_segment_slices')}({keyed}), "
            f"lambda sl: {q('_mlsql_weighted_segment_stats')}(sl)), {nu}}}"
        )
    else:
        keyed = f"list_transform(p.cells, lambda c: {{'g': {key}, 's': c.s, 'y': c.y}})"
        segments = (
            f"{{'segs': list_transform({q('_mlsql_segment_slices')}({keyed}), "
            f"lambda sl: {q('_mlsql_segment_stats')}(sl.a, sl.b)), {nu}}}"
        )
    row_weight = weighted and average == "samples"

    n_empty = {
        "micro": "CASE WHEN len(p.cells) = 0 THEN 1 ELSE 0 END",
        "samples": f"{'p.npos' if weighted else 'p.n'} - len(g.segs)",
    }.get(average, "0")
    empty_weight = (
        Sql("p.wsum - coalesce(list_sum(list_transform(g.segs, lambda sg: sg.w)), 0)")
        if row_weight
        else None
    )
    stats = LS.LabelScoreStats(
        n=Sql("p.n"),
        over_segments=_over_segments(n_cells, row_weight),
        n_empty=Sql(n_empty),
        skips=skips,
        empty_weight=empty_weight,
        zero_weight=Sql("p.wsum = 0") if weighted else False,
    )
    return stats, segments


def checked_actual(q: Qualify, func: str, keys: str) -> str:
    """``actual``, checked to be a list of labels of the score labels' kind (``keys``: a row's
    score labels): when it is not, a list of their type that raises mlsql's message (DuckDB
    binds the body before it runs: a list of other labels would fail to bind with its own
    error), see ``_mlsql_label_list_as``."""
    return f"{q('_mlsql_label_list_as')}(actual, actual, {keys}, {keys}, {lit(func)}, 'actual', 'scores')"


def _per_row(q: Qualify, scores: str, actual: str) -> str:
    """A row's segments (none, or its own), from its own cells."""
    cells = f"{q('_mlsql_label_score_cells')}([{{'a': {actual}, 'm': {scores}}}])"
    keyed = f"list_transform({cells}, lambda c: {{'g': 0, 's': c.s, 'y': c.y}})"
    return (
        f"list_transform({q('_mlsql_segment_slices')}({keyed}), "
        f"lambda sl: {q('_mlsql_segment_stats')}(sl.a, sl.b))"
    )


def _row_segments(q: Qualify, scores: str, actual: str, known: str) -> str:
    """The samples average's segments: each known row's statistics, from its own cells.

    A row is a segment of its own, so its statistics need no other row: computing them
    per row keeps the lambdas on the row's few cells. Cutting the group's sorted cell
    list into one slice per row instead copied the whole list into each slice's lambda
    (memory quadratic in the group's rows: 1.9 GB at 4,000 rows of 20 labels).
    A row with no cell gives no segment (the formula counts it as empty).
    """
    return f"flatten(coalesce(list({_per_row(q, scores, actual)}) FILTER (WHERE {known}), []))"


def _weighted_row_segments(q: Qualify, scores: str, actual: str, known: str, w: str) -> str:
    """:func:`_row_segments` of the rows of positive weight, each segment with its row's ``w``."""
    rows = f"list({{'segs': {_per_row(q, scores, actual)}, 'w': {w}}}) FILTER (WHERE {known} AND {w} > 0)"
    return (
        f"flatten(list_transform(coalesce({rows}, []), "
        "lambda x: list_transform(x.segs, lambda sg: struct_insert(sg, w := x.w))))"
    )


def _of_name(m: Measure, weighted: bool) -> str:
    """The macro of a measure's formula over its bound statistics, which its overloads on
    every score entry type call."""
    return f"_mlsql_{m.name}{'_weighted' if weighted else ''}_of"


def _of(q: Qualify, m: Measure, ops: SqlOps, weighted: bool) -> Macro:
    """``_mlsql_<name>[_weighted]_of(stats)``: the measure of every average over the
    statistics its overloads bind (``zd``, ``avg``, ``cells``, ``row_segs``, ``n``, and
    weighted ``npos`` and ``wsum``), bound once to ``p``. The formula is the same whatever
    the scores' type, so it is written once; an overload writes only what it reads."""
    zd = Sql("p.zd")
    skips = Sql("p.zd IN ('nan', 'ignore')")
    branches = []
    for average in LS.AVERAGES:
        stats, segments = _stats(q, average, skips, weighted)
        value = m.build(ops, stats, average=average, zero_division=zd)  # type: ignore[misc]
        branches.append(f"WHEN {lit(average)} THEN {let(segments, 'g', value)}")
    choose = "CASE p.avg\n        " + "\n        ".join(branches) + " END"
    body = let("stats", "p", f"CASE WHEN p.zd IS NULL THEN NULL ELSE {choose} END")
    doc = f"{m.name}{' weighted' if weighted else ''} over the statistics its overloads bind."
    return Macro(FILE, _of_name(m, weighted), ("stats",), str(body), doc, public=False)


def _body(
    q: Qualify,
    m: Measure,
    params: dict[str, Sql],
    scores: str,
    weighted: bool = False,
) -> str:
    known = "actual IS NOT NULL AND scores IS NOT NULL"
    actual = checked_actual(q, m.name, f"map_keys({scores})")
    if weighted:
        w = str(CC.weight(m.name, q))
        known = f"{known} AND {w} IS NOT NULL"
        rows = (
            f"coalesce(list({{'a': {actual}, 'm': {scores}, 'w': {w}}}) "
            f"FILTER (WHERE {known} AND {w} > 0), [])"
        )
        bound = (
            f"{{'zd': {params['zero_division']}, 'avg': {params['average']}, "
            f"'cells': {q('_mlsql_weighted_label_score_cells')}({rows}), "
            f"'row_segs': {_weighted_row_segments(q, scores, actual, known, w)}, "
            f"'n': count(*) FILTER (WHERE {known}), "
            f"'npos': count(*) FILTER (WHERE {known} AND {w} > 0), "
            f"'wsum': coalesce(sum({w}) FILTER (WHERE {known}), 0)}}"
        )
    else:
        rows = f"coalesce(list({{'a': {actual}, 'm': {scores}}}) FILTER (WHERE {known}), [])"
        bound = (
            f"{{'zd': {params['zero_division']}, 'avg': {params['average']}, "
            f"'cells': {q('_mlsql_label_score_cells')}({rows}), "
            f"'row_segs': {_row_segments(q, scores, actual, known)}, "
            f"'n': count(*) FILTER (WHERE {known})}}"
        )
    return str(call(q(_of_name(m, weighted)), Sql(bound)))


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """multilabel_average_precision and multilabel_roc_auc over a score MAP or {label, score} lists."""
    out = [*_helpers(qualify), *_weighted_helpers(qualify)]
    for m in measures(family=LS.FAMILY):
        if m.build is None or not m.available_in("duckdb"):
            continue
        if m.name not in LS.SEGMENT_MEASURES:
            out += _brier_macros(qualify, m, ops)
            continue
        params = CC.checked(m, qualify)
        converted = f"{qualify('_mlsql_scores_map')}(scores)"
        out += [_of(qualify, m, ops, weighted) for weighted in (False, True)]
        for weighted in (False, True):
            signature = CC.signature(m, weighted)
            typed = tuple(
                Macro(
                    FILE,
                    m.name,
                    tuple(f"scores {t}" if p == "scores" else p for p in signature),
                    _body(qualify, m, params, converted, weighted),
                    m.summary,
                )
                for t in ENTRY_TYPES
            )
            body = _body(qualify, m, params, "scores", weighted)
            out += [*typed, Macro(FILE, m.name, signature, body, m.summary)]
        out += CC.aliases(m, FILE, qualify)
    return out


# ------------------------------------------------------------------ Brier


def _brier_row(q: Qualify, m: Measure, ops: SqlOps) -> tuple[Sql, Sql]:
    """A row's Σ of squared errors over its scored and true labels, and its labels (sorted,
    distinct): SQL over the macro's ``actual`` and ``scores`` (a MAP), meaningful on known
    rows."""
    entries = (
        "list_filter(map_entries(scores), lambda e: e.key IS NOT NULL AND e.value IS NOT NULL)"
    )
    truth = f"list_distinct({checked_actual(q, m.name, 'map_keys(scores)')})"
    term = CS.class_squared_error(ops, CSD._probability(q, m), Sql("list_contains(a, e.key)"))
    unscored = "len(list_filter(a, lambda t: map_extract_value(scores, t) IS NULL))"
    loss = f"coalesce(list_sum(list_transform({entries}, lambda e: {term})), 0) + {unscored}"
    labels = f"list_sort(list_distinct(list_concat(a, list_transform({entries}, lambda e: e.key))))"
    return (
        Sql(f"list_transform([{truth}], lambda a: {loss})[1]"),
        Sql(f"list_transform([{truth}], lambda a: {labels})[1]"),
    )


def _brier_stats(q: Qualify, m: Measure, ops: SqlOps, weighted: bool) -> LS.LabelBrierStats:
    """A sum, a count and a histogram of the known rows' label sets (the label universe)."""
    loss, labels = _brier_row(q, m, ops)
    known = "actual IS NOT NULL AND scores IS NOT NULL"
    if not weighted:
        n, total, counted = f"count(CASE WHEN {known} THEN 1 END)", str(loss), known
    else:
        w = CC.weight(m.name, q)
        known = f"{known} AND {w} IS NOT NULL"
        n, total = f"sum(CASE WHEN {known} THEN {w} END)", f"{loss} * {w}"
        counted = f"{known} AND {w} > 0"  # a row weighing 0 brings no label
    sets = f"histogram(CASE WHEN {counted} THEN {labels} END)"
    return LS.LabelBrierStats(
        n=Sql(n),
        total_loss=Sql(f"fsum(CASE WHEN {known} THEN {total} END)"),
        n_labels=Sql(f"coalesce(len(list_distinct(flatten(map_keys({sets})))), 0)"),
    )


def _brier_macros(q: Qualify, m: Measure, ops: SqlOps) -> list[Macro]:
    """multilabel_brier_score over a score MAP or {label, score} lists, with and without
    weights: a sum and a count per group, and the distinct label sets of its rows."""
    out: list[Macro] = []
    rendered = CC.render(
        m, q, ops, FILE, _brier_stats(q, m, ops, False), weighted=_brier_stats(q, m, ops, True)
    )
    for macro in rendered:
        out += with_entry_lists(q, macro) if macro.name == m.name else [macro]
    return out


# ------------------------------------------------------------------ native

#: the native extension's label-score aggregate (native/duckdb_ext.c)
NATIVE_SCORES = _native.LABEL_SCORES
#: its mode per average: 0 one pooled segment, 1 one per label, 2 one per kind of row
#: (its positives and unscored positives)
NATIVE_MODES = {"micro": 0, "macro": 1, "weighted": 1, "samples": 2}
#: the label list types the aggregate takes (others are compared as text)
NATIVE_SCORE_LISTS = (*NATIVE_LISTS, *WIDE_INTEGER_LISTS)


def _native_helpers(q: Qualify) -> list[Macro]:
    """``_mlsql_native_label_scores(a, k, v, w, mode)``: the aggregate on the label list types,
    and on any other (floats, booleans, dates...) on the labels cast to text (where labels
    that differ but print alike, as the floats -0.0 and 0.0, would be one)."""
    name = "_mlsql_native_label_scores"
    doc = (
        "The native label-score aggregate over (true labels, score labels, scores, weight, "
        "mode); labels of another type than text or integers compared as text."
    )
    out = [
        Macro(
            FILE,
            name,
            (f"a {t}", f"k {t}", "v", "w", "mode"),
            f"{NATIVE_SCORES}(a, k, v, w, mode)",
            doc,
            public=False,
        )
        for t in NATIVE_SCORE_LISTS
    ]
    text = f"{NATIVE_SCORES}(CAST(a AS VARCHAR[]), CAST(k AS VARCHAR[]), v, w, mode)"
    return [*out, Macro(FILE, name, ("a", "k", "v", "w", "mode"), text, doc, public=False)]


def _native_stats(average: str, skips: Sql, weighted: bool) -> tuple[LS.LabelScoreStats, str]:
    """:func:`_stats` over the native aggregate's segments ``p.agg`` (bound as ``g``)."""
    _, n_cells = SEGMENTS[average]
    if weighted:
        n_cells = WEIGHTED_CELLS.get(average, "p.wsum")
    samples = average == "samples"
    segments = "{'segs': p.agg.segs, 'nu': p.agg.nu}"

    rows_seen = "coalesce(list_sum(list_transform(g.segs, lambda sg: sg.rows)), 0)"
    n_empty = {
        "micro": "CASE WHEN len(g.segs) = 0 THEN 1 ELSE 0 END",
        "samples": f"{'p.npos' if weighted else 'p.n'} - {rows_seen}",
    }.get(average, "0")
    empty_weight = (
        Sql("p.wsum - coalesce(list_sum(list_transform(g.segs, lambda sg: sg.w)), 0)")
        if weighted and samples
        else None
    )
    stats = LS.LabelScoreStats(
        n=Sql("p.n"),
        over_segments=_over_segments(n_cells, samples),
        n_empty=Sql(n_empty),
        skips=skips,
        empty_weight=empty_weight,
        zero_weight=Sql("p.wsum = 0") if weighted else False,
    )
    return stats, segments


def _native_body(
    q: Qualify,
    m: Measure,
    ops: SqlOps,
    params: dict[str, Sql],
    keys: str,
    values: str,
    weighted: bool = False,
) -> str:
    """The body of a native macro: ``keys`` and ``values`` are a row's scored labels and
    their scores (DOUBLE), two lists of one length."""
    zd = Sql("p.zd")
    skips = Sql("p.zd IN ('nan', 'ignore')")
    branches = []
    for average in LS.AVERAGES:
        stats, segments = _native_stats(average, skips, weighted)
        value = m.build(ops, stats, average=average, zero_division=zd)  # type: ignore[misc]
        branches.append(f"WHEN {lit(average)} THEN {let(segments, 'g', value)}")
    modes = " ".join(f"WHEN {lit(a)} THEN {n}" for a, n in NATIVE_MODES.items())
    mode = f"CASE {params['average']} {modes} END"
    checked = checked_actual(q, m.name, keys)
    a = f"CASE WHEN false THEN {keys} ELSE {checked} END"
    k = f"CASE WHEN false THEN {checked} ELSE {keys} END"
    known = "actual IS NOT NULL AND scores IS NOT NULL"
    if weighted:
        w = str(CC.weight(m.name, q))
        known = f"{known} AND {w} IS NOT NULL"
        # the rows to skip weigh NULL (a macro takes no FILTER); the aggregate also skips
        # the rows of weight 0
        agg = f"{q('_mlsql_native_label_scores')}({a}, {k}, {values}, CASE WHEN {known} THEN {w} END, {mode})"
        bound = (
            f"{{'zd': {params['zero_division']}, 'avg': {params['average']}, 'agg': {agg}, "
            f"'n': count(*) FILTER (WHERE {known}), "
            f"'npos': count(*) FILTER (WHERE {known} AND {w} > 0), "
            f"'wsum': coalesce(sum({w}) FILTER (WHERE {known}), 0)}}"
        )
    else:
        agg = f"{q('_mlsql_native_label_scores')}({a}, {k}, {values}, CASE WHEN {known} THEN 1.0 END, {mode})"
        bound = (
            f"{{'zd': {params['zero_division']}, 'avg': {params['average']}, 'agg': {agg}, "
            f"'n': count(*) FILTER (WHERE {known})}}"
        )
    choose = "CASE p.avg\n        " + "\n        ".join(branches) + " END"
    return str(let(bound, "p", f"CASE WHEN p.zd IS NULL THEN NULL ELSE {choose} END"))


def native_overrides(qualify: Qualify) -> list[Macro]:
    """multilabel_average_precision and multilabel_roc_auc over the native aggregate (same
    names, same overloads, same results as :func:`macros`)."""
    ops = SqlOps(qualify)
    out = _native_helpers(qualify)
    entry_keys = "list_transform(scores, lambda e: e.label)"
    entry_values = "list_transform(scores, lambda e: CAST(e.score AS DOUBLE))"
    map_keys, map_values = "map_keys(scores)", "CAST(map_values(scores) AS DOUBLE[])"
    for m in measures(family=LS.FAMILY):
        if m.build is None or not m.available_in("duckdb") or m.name not in LS.SEGMENT_MEASURES:
            continue
        params = CC.checked(m, qualify)
        for weighted in (False, True):
            signature = CC.signature(m, weighted)
            typed = tuple(
                Macro(
                    FILE,
                    m.name,
                    tuple(f"scores {t}" if p == "scores" else p for p in signature),
                    _native_body(qualify, m, ops, params, entry_keys, entry_values, weighted),
                    m.summary,
                )
                for t in ENTRY_TYPES
            )
            body = _native_body(qualify, m, ops, params, map_keys, map_values, weighted)
            out += [*typed, Macro(FILE, m.name, signature, body, m.summary)]
    return out
