"""Ranking in DuckDB SQL: @k measures over ranked lists, label-ranking measures over score maps.

Every per-row quantity is a macro; the aggregates average it with the shared
``ops.mean``. Scores are a ``MAP(label, score)`` (an Arrow map column arrives
as one) or a list of ``{label, score}`` structs: typed overloads take the list
(text or integer labels, a label's first entry kept) and the untyped macro the
map.

A value used inside a lambda is bound first with ``list_transform([value],
lambda v: ...)[1]``: DuckDB evaluates a lambda body once per list element, so
an expression there (rather than a bound variable) would be computed again for
every element.

Macros, not Python UDFs: on 100,000 rows with lists of 20 labels,
``coverage_error`` as this macro took 0.2 s and as a Python UDF doing the same
per-row work 14 s (``precision_at``: 0.11 s), so the SQL form is kept even
where it reads denser than the Python would.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from mlsql._duckdb.library import Macro, Qualify, by_weight, sql_message
from mlsql._duckdb.ops import SqlOps
from mlsql._formulas import FORMULAS, flatten
from mlsql._registry import Measure, measures
from mlsql._sqlexpr import Sql, call, lit
from mlsql._weights import SAMPLE_WEIGHT
from mlsql.measures import ranking as R

FILE = "ranking.sql"
DESCRIPTION = (
    "Ranking: Hivemall's @k measures and ranx's retrieval measures over ranked lists, "
    "scikit-learn's label-ranking measures over score maps, and scores to label lists."
)
ORDER = 40
FAMILIES: tuple[str, ...] = ()  # rendered here: optional k and per-row macros


class RankingSqlOps(SqlOps):
    """The core SQL primitives plus the logarithm and power the DCG formulas need.

    A formula macro that names an argument more than once gets it bound first
    when that argument does work over lists (lambdas, mlsql's own macros):
    DuckDB expands a macro's parameters wherever they are named.
    """

    def call_formula(self, name: str, args: tuple[Any, ...]) -> Sql:
        flat = [lit(a) for a in flatten(args)]
        macro = self.qualify(f"_mlsql_{name}")
        inline = str(
            FORMULAS[name].raw(_Inline(self.qualify), *(Sql(f"__p{i}__") for i in range(len(flat))))
        )
        bind = [
            i
            for i, a in enumerate(flat)
            if inline.count(f"__p{i}__") > 1 and ("lambda" in str(a) or "_mlsql_" in str(a))
        ]
        if not bind:
            return call(macro, *flat)
        fields = ", ".join(f"'x{i}': {flat[i]}" for i in bind)
        inner = call(macro, *(Sql(f"f.x{i}") if i in bind else a for i, a in enumerate(flat)))
        return Sql(f"list_transform([{{{fields}}}], lambda f: {inner})[1]")

    def log2(self, x: Any) -> Sql:
        return call("log2", x)

    def pow(self, base: Any, exponent: Any) -> Sql:
        return call("pow", base, exponent)

    def ranked_labels(self, entries: Any, threshold: Any) -> Sql:
        """The score lists' primitives (:class:`~mlsql.measures.ranking.ScoreListOps`) over
        a map's (key, value) entries."""
        kept = (
            entries
            if threshold is None
            else call(self.qualify("_mlsql_scored_above"), entries, threshold)
        )
        return call(self.qualify("_mlsql_ranked_labels"), kept)

    def head(self, labels: Any, k: Any) -> Sql:
        return labels if k is None else call(self.qualify("_mlsql_first_n"), labels, k)


class _Inline(RankingSqlOps):
    """The same primitives with every formula written out (to see how often it names each argument)."""

    call_formula = None  # type: ignore[assignment]


def let(value: Any, name: str, body: Any) -> Sql:
    """``body`` with ``name`` bound to ``value``, computed once."""
    return Sql(f"list_transform([{value}], lambda {name}: {body})[1]")


def total(items: str, params: str, term: Any) -> Sql:
    """The sum of ``term`` over a list (0 for an empty list)."""
    return Sql(f"coalesce(list_sum(list_transform({items}, lambda {params}: {term})), 0)")


# ------------------------------------------------------------------ ranked lists
def _ranked_stats(q: Qualify, a: str, b: str, k: str = "k") -> R.RankedStats:
    """Statistics over ``ranked``, ``hits`` and ``n_true``, bound per row (see ``_measure_macros``).

    ``k`` is the cut: the macro's parameter, or ``NULL`` for a measure without one.
    """
    return R.RankedStats(
        unknown=Sql(f"({a} IS NULL OR {b} IS NULL)"),
        n_ranked=Sql(f"least(len(ranked), coalesce({k}, len(ranked)))"),
        n_true=Sql("n_true"),
        hits=Sql("len(hits)"),
        first_hit=Sql("coalesce(hits[1], 0)"),
        over_hits=lambda term: total("hits", "pos, nth", term(Sql("pos"), Sql("nth"))),
        over_positions=lambda count, term: total(f"range(1, {count} + 1)", "p", term(Sql("p"))),
        hits_within=lambda count: Sql(f"len(list_filter(hits, lambda pos: pos <= {count}))"),
    )


def _judged_stats(q: Qualify, inputs: tuple[str, ...]) -> R.JudgedStats:
    """bpref's statistics over ``truth``, ``nonrel`` and ``hits`` (bound per row, see
    :func:`_judged_row`)."""
    n_true, n_false = Sql("len(truth)"), Sql("len(nonrel)")
    return R.JudgedStats(
        unknown=Sql("(" + " OR ".join(f"{x} IS NULL" for x in inputs) + ")"),
        n_true=n_true,
        n_false=n_false,
        over_hits=lambda term: total(
            "hits", "pos, nth", term(Sql("pos"), Sql("nth"), n_true, n_false)
        ),
    )


def _rows(q: Qualify) -> R.RowPlans:
    """Each input shape's statistics, bound per row by lambdas (:func:`let`): a ranked list's
    ``ranked``, ``hits`` and ``n_true``; bpref's judged non-relevant items that are not
    relevant (``nonrel``) and the ranked list without its unjudged items; a row's score
    lists (``sr``)."""
    ranked = q("_mlsql_ranked")
    positions = q("_mlsql_hit_positions")

    def ranked_row(rank: Sql, truth: Sql, k: Sql | None, body: Any) -> Sql:
        cut = "NULL" if k is None else str(k)
        stats = body(_ranked_stats(q, str(rank), str(truth), cut))
        inner = let(f"len({ranked}({truth}))", "n_true", stats)
        return let(
            f"{ranked}({rank})",
            "ranked",
            let(f"{positions}(ranked, {truth}, {cut})", "hits", inner),
        )

    def judged_row(truth: Sql, rank: Sql, nonrelevant: Sql, body: Any) -> Sql:
        judged = "list_contains(truth, x) OR list_contains(nonrel, x)"
        hits = f"{positions}(list_filter({ranked}({rank}), lambda x: {judged}), truth, NULL)"
        stats = body(_judged_stats(q, (str(truth), str(rank), str(nonrelevant))))
        relevant = f"list_filter({ranked}({nonrelevant}), lambda x: NOT list_contains(truth, x))"
        return let(f"{ranked}({truth})", "truth", let(relevant, "nonrel", let(hits, "hits", stats)))

    def scored_row(func: str, actual: Sql, scores: Sql, k: Sql | None, body: Any) -> Sql:
        return let(
            f"{q('_mlsql_score_lists')}({scores}, {actual})", "sr", body(_score_stats(q, "sr"))
        )

    def graded_row(grades: Sql, ideal: Sql, k: Sql | None, body: Any) -> Sql:
        return body(_graded_stats(q, str(grades), str(ideal)))

    return R.RowPlans(ranked=ranked_row, judged=judged_row, scored=scored_row, graded=graded_row)


def _ranked(q: Qualify) -> list[Macro]:
    return [
        Macro(
            FILE,
            "_mlsql_ranked",
            ("items",),
            "list_transform([items], lambda l:\n"
            "        list_filter(l, lambda x, i: x IS NOT NULL AND list_position(l, x) = i))[1]",
            "A list without NULLs and repeats (the first occurrence keeps its place).",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_hit_positions",
            ("ranked", "correct_items", "k"),
            """list_transform([ranked], lambda r: list_transform([correct_items], lambda truth:
        list_filter(
            list_transform(list_slice(r, 1, coalesce(k, len(r))),
                           lambda item, pos: CASE WHEN list_contains(truth, item) THEN pos END),
            lambda pos: pos IS NOT NULL))[1])[1]""",
            "Positions (1-based) of the true items among the first k of a ranked list "
            "(all of it when k is NULL).",
            public=False,
        ),
    ]


def _graded_stats(q: Qualify, a: str, b: str) -> R.GradedStats:
    top = f"coalesce(k, len({a}))"
    ranked = f"list_slice({a}, 1, {top})"
    ideal = f"{q('_mlsql_ideal_grades')}({b}, {top})"
    return R.GradedStats(
        unknown=Sql(f"({a} IS NULL OR {b} IS NULL)"),
        over_ranked=lambda term: total(ranked, "grade, pos", term(Sql("grade"), Sql("pos"))),
        over_ideal=lambda term: total(ideal, "grade, pos", term(Sql("grade"), Sql("pos"))),
    )


def _graded() -> list[Macro]:
    bad = sql_message(
        R.GRADES_MESSAGE.format(func="{}", name="{}", type="{}"),
        "func",
        "name",
        "name",
        "typeof(x)",
    )
    doc = "A list of relevance grades, checked to be numbers ({})."
    return [
        Macro(
            FILE,
            "_mlsql_ideal_grades",
            ("ideal_relevance", "n"),
            "list_slice(list_reverse_sort(list_filter(ideal_relevance, lambda x: x IS NOT NULL)), 1, n)",
            "The n best grades of an ideal ranking, best first (NULL grades dropped).",
            public=False,
        ),
        # picked by type, as _mlsql_label_list_as: ``grades`` only picks (numbers take the
        # first overload, uncast), any other type takes the error as a list of numbers
        Macro(FILE, "_mlsql_grades", ("x", "grades DOUBLE[]", "func", "name"), "x",
              doc.format("a list of numbers: as it is"), public=False),
        Macro(FILE, "_mlsql_grades", ("x", "grades", "func", "name"),
              f"CAST(error({bad}) AS DOUBLE[])", doc.format("any other type: the error"),
              public=False),
    ]  # fmt: skip


# ------------------------------------------------------------------ label scores
RANK_FIELDS = ("at_or_above", "above", "true_at_or_above")


def _score_stats(q: Qualify, row: str) -> R.ScoreStats:
    """Statistics over a row's score lists (``_mlsql_score_lists``) bound to ``row``."""

    def rank_of(t: str) -> R.LabelRank:
        return R.LabelRank(
            at_or_above=Sql(f"len(list_filter({row}.labels, lambda u: u >= {t}))"),
            above=Sql(f"len(list_filter({row}.labels, lambda u: u > {t}))"),
            true_at_or_above=Sql(f"len(list_filter({row}.truth, lambda u: u >= {t}))"),
        )

    placeholders = R.LabelRank(*(Sql(f"r.{f}") for f in RANK_FIELDS))

    def per_true_label(term: Any) -> tuple[str, str, Sql]:
        """(list, lambda parameter, body) of ``term`` over the true labels.

        A rank field the term names more than once is counted once, in a first pass.
        """
        body = term(placeholders)
        text = str(body)
        if all(text.count(f"r.{f}") <= 1 for f in RANK_FIELDS):
            return f"{row}.truth", "t", term(rank_of("t"))
        used = [f for f in RANK_FIELDS if f"r.{f}" in text]
        fields = ", ".join(f"'{f}': {getattr(rank_of('t'), f)}" for f in used)
        return f"list_transform({row}.truth, lambda t: {{{fields}}})", "r", body

    def over_true(term: Any) -> Sql:
        return total(*per_true_label(term))

    def max_over_true(term: Any) -> Sql:
        items, var, body = per_true_label(term)
        return Sql(f"list_max(list_transform({items}, lambda {var}: {body}))")

    return R.ScoreStats(
        unknown=Sql(f"({row} IS NULL)"),
        n_labels=Sql(f"len({row}.labels)"),
        n_true=Sql(f"len({row}.truth)"),
        n_top=call(q("_mlsql_n_top"), Sql(f"{row}.scored"), Sql(f"{row}.scored")),
        # from the true labels' scores before an unscored one is -inf (a score of -inf ties
        # with it there, and an unscored label is no top label)
        n_top_true=Sql(f"{row}.top_true"),
        over_true=over_true,
        max_over_true=max_over_true,
        over_places=lambda start, stop, term: total(
            f"range({start} + 1, {stop} + 1)", "p", term(Sql("p"))
        ),
        over_positions=lambda count, term: total(f"range(1, {count} + 1)", "p", term(Sql("p"))),
        cut=lambda n: Sql(f"CASE WHEN k IS NULL THEN {n} ELSE least({n}, k) END"),
    )


#: the typed overloads for scores given as a list of {label, score} structs (DuckDB picks
#: one by the argument's type; a MAP, or any other type, takes the untyped macro)
ENTRY_TYPES = ("STRUCT(label VARCHAR, score DOUBLE)[]", "STRUCT(label BIGINT, score DOUBLE)[]")


def with_entry_lists(q: Qualify, m: Macro) -> list[Macro]:
    """``m`` (over a score MAP) plus overloads taking a list of {label, score} structs."""
    convert = f"{q('_mlsql_scores_map')}(scores)"
    body = re.sub(r"(?<=\()scores(?=[,)])|(?<=, )scores(?=[,)])", convert, m.body)
    typed = [
        replace(m, params=tuple(f"scores {t}" if p == "scores" else p for p in m.params), body=body)
        for t in ENTRY_TYPES
    ]
    return [*typed, m]


def _scores(q: Qualify) -> list[Macro]:
    return [
        Macro(
            FILE,
            "_mlsql_scores_map",
            ("entries",),
            """list_transform([list_transform(entries, lambda e: e.label)], lambda labels:
        map_from_entries(list_filter(entries,
            lambda e, i: e.label IS NOT NULL AND list_position(labels, e.label) = i)))[1]""",
            "A list of {label, score} structs as a MAP (a label's first entry kept, NULL labels dropped).",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_scored",
            ("scores",),
            "list_filter(map_entries(scores), lambda e: e.value IS NOT NULL)",
            "The (key, value) entries of a score map whose score is not NULL.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_score_lists",
            ("scores", "actual"),
            """CASE WHEN scores IS NULL OR actual IS NULL THEN NULL ELSE
    list_transform([scores], lambda m:
        list_transform([list_transform(list_distinct(actual), lambda a: CAST(map_extract_value(m, a) AS DOUBLE))],
            lambda truth: list_transform([list_filter(CAST(map_values(m) AS DOUBLE[]), lambda v: v IS NOT NULL)],
                lambda scored: struct_pack(
                    scored := scored,
                    top_true := list_transform([list_max(scored)],
                        lambda top: len(list_filter(truth, lambda v: v = top)))[1],
                    truth := list_transform(truth, lambda v: coalesce(v, CAST('-inf' AS DOUBLE))),
                    labels := list_concat(scored, list_transform(list_filter(truth, lambda v: v IS NULL),
                                                              lambda v: CAST('-inf' AS DOUBLE)))))[1])[1])[1] END""",
            "A row's scores: of its scored labels, of its true labels (-infinity where not "
            "scored; top_true: how many are scored top) and of all its labels; NULL where an "
            "input is.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_n_top",
            ("scored", "among"),
            "list_transform([list_max(scored)], lambda top: len(list_filter(among, lambda v: v = top)))[1]",
            "How many of the scores ``among`` equal the highest scored one.",
            public=False,
        ),
    ]


def _sets(q: Qualify, ops: RankingSqlOps) -> list[Macro]:
    """``top_k``, ``above_threshold`` and ``top_k_above`` from their registry formulas, each
    parameter checked, over a score MAP and a list of {label, score} structs."""
    helpers = [
        Macro(
            FILE,
            "_mlsql_ranked_labels",
            ("entries",),
            "list_transform(\n"
            "        list_sort(list_transform(entries, lambda e: {'nan': NOT isnan(CAST(e.value AS DOUBLE)),\n"
            "            'neg_score': - CAST(e.value AS DOUBLE), 'label': e.key})),\n"
            "        lambda e: e.label)",
            "Labels of (key, value) entries, best score (NaN first) first, ties by label.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_first_n",
            ("items", "n"),
            "list_transform([items], lambda labels:\n"
            "        CASE WHEN n IS NULL THEN labels ELSE list_slice(labels, 1, n) END)[1]",
            "The first n of a list (all of it when n is NULL).",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_scored_above",
            ("entries", "threshold"),
            "list_transform([threshold], lambda t: list_filter(entries, lambda e: e.value >= t))[1]",
            "The (key, value) entries scored >= threshold.",
            public=False,
        ),
    ]
    entries = R.ScoredLabels(Sql(f"{q('_mlsql_scored')}(scores)"))
    out = []
    for m in measures(family=R.FAMILY, kind="set"):
        params = {
            p.name: call(q(f"_mlsql_check_{p.check_key}"), Sql(p.name), m.name) for p in m.params
        }
        signature = (
            "scores",
            *(p.name if m.name in REQUIRED else f"{p.name} := NULL" for p in m.params),
        )
        body = m.build(ops, entries, **params)  # type: ignore[misc]
        out += with_entry_lists(q, Macro(FILE, m.name, signature, str(body), SET_DOCS[m.name]))
    return [*helpers, *out]


#: the set functions whose parameters have no default in SQL (a threshold must be given)
REQUIRED = ("above_threshold",)
#: the set functions' macro docs
SET_DOCS = {
    "top_k": "The k best-scored labels of a score map, best first (ties by label); "
    "every scored label without k. NULL scores are not scored.",
    "above_threshold": "Labels of a score map scored >= threshold, best first (ties by label).",
    "top_k_above": "At most k labels of a score map, each scored >= threshold, best first "
    "(ties by label).",
}


# ------------------------------------------------------------------ the measures
#: the mean over rows of a per-row value, weighted or not (:func:`_means`)
MEAN = "_mlsql_row_mean"


def _means(q: Qualify, ops: RankingSqlOps) -> list[Macro]:
    """``_mlsql_row_mean(value, sample_weight, func)``: the plain mean when ``sample_weight`` is
    the NULL literal (the measures' default: no weight given), else the weighted mean.

    One public macro per measure, ``mrr(rank_items, correct_items, k := NULL, sample_weight :=
    NULL)``, takes every call form: ``mrr(a, b)``, Hivemall's positional ``mrr(a, b, 3)``,
    ``mrr(a, b, sample_weight := w)`` and ``mrr(a, b, 3, sample_weight := w)``. DuckDB picks
    this helper's overload by the weight's type: a parameter typed ``"NULL"`` takes only the
    NULL literal (at a lower cost than an untyped one); a weight column is any other type.
    Overloads of the public macro could not do it: ``(a, b, k := NULL)`` beside ``(a, b,
    sample_weight, k := NULL)`` matched ``mrr(a, b, 3)`` twice at one cost (ambiguous), and
    ``(a, b, k, sample_weight)`` left ``sample_weight := w`` without ``k`` unmatched.
    """
    value = Sql("row_value")
    weighted = by_weight(lambda o, r: o.mean(r), Sql("func"))(ops, value)
    doc = "The mean of a per-row value over rows{} (func names the measure in messages)."
    return [
        Macro(FILE, MEAN, ("row_value", f'{SAMPLE_WEIGHT} "NULL"', "func"), str(ops.mean(value)),
              doc.format(" (no weight given)"), public=False),
        Macro(FILE, MEAN, ("row_value", SAMPLE_WEIGHT, "func"), str(weighted),
              doc.format(", each row weighted by sample_weight"), public=False),
    ]  # fmt: skip


def _checked_inputs(q: Qualify, m: Measure) -> list[Sql]:
    """The measure's inputs as its row macro takes them, each checked (DuckDB binds the
    row before it runs: inputs of the wrong type become values of a type that binds, which
    raise mlsql's message).

    Ranked items are labels, text or integers of one kind; label scores are a MAP whose
    keys are labels of the true labels' kind; relevance grades are lists of numbers.
    """
    a, b = m.inputs[:2]
    as_lists = q("_mlsql_label_list_as")
    if m.inputs in (R.RANKED, R.RETRIEVED):
        target = Sql("NULL::VARCHAR[]")
        return [call(as_lists, Sql(x), Sql(a), Sql(b), target, m.name, a, b) for x in (a, b)]
    if m.inputs == R.JUDGED:
        # each list through every pair's check, the first pair outermost: where two kinds
        # differ all three lists become text and the first mismatched pair's message is raised
        target = Sql("NULL::VARCHAR[]")
        pairs = [(a, b), (a, m.inputs[2]), (b, m.inputs[2])]
        out = []
        for x in m.inputs:
            value: Sql = Sql(x)
            for left, right in reversed(pairs):
                value = call(as_lists, value, Sql(left), Sql(right), target, m.name, left, right)
            out.append(value)
        return out
    if m.inputs == R.SCORED:  # (actual, scores)
        keys = Sql(f"map_keys({b})")
        return [call(as_lists, Sql(a), Sql(a), keys, keys, m.name, a, b), Sql(b)]
    return [call(q("_mlsql_grades"), Sql(x), Sql(x), m.name, x) for x in (a, b)]


def _measure_macros(q: Qualify, ops: RankingSqlOps) -> list[Macro]:
    rows = _rows(q)
    out: list[Macro] = []
    for m in measures(family=R.FAMILY, kind="aggregate"):
        has_k = any(p.name == "k" for p in m.params)
        others = [p for p in m.params if p.name != "k"]  # passed to the formula as they are
        given = {p.name: Sql(p.name) for p in others}
        cut = {"k": Sql("k")} if has_k else {}
        inputs = (Sql(x) for x in m.inputs)
        body = R.row_of(m.name, m.inputs, rows, ops, *inputs, **cut, **given)
        row_params = (*m.inputs, *(("k",) if has_k else ()), *given)
        row_name = f"_mlsql_{m.name}_row"
        out.append(
            Macro(FILE, row_name, row_params, str(body), f"Per row: {m.summary}", public=False)
        )
        args = _checked_inputs(q, m)
        if has_k:
            args.append(call(q("_mlsql_check_k"), Sql("k"), m.name))
        args += [call(q(f"_mlsql_check_{p.check_key}"), Sql(p.name), m.name) for p in others]
        public = (
            *m.inputs,
            *(("k := NULL",) if has_k else ()),
            *(f"{p.name} := {p.default!r}" for p in others),
            f"{SAMPLE_WEIGHT} := NULL",
        )
        doc = f"{m.summary} {R.NOTES[m.name]}"
        row = call(q(row_name), *args)
        made = Macro(FILE, m.name, public, str(call(q(MEAN), row, Sql(SAMPLE_WEIGHT), m.name)), doc)
        overloads = with_entry_lists(q, made) if m.inputs == R.SCORED else [made]
        out += overloads
        for (
            alias
        ) in m.aliases:  # the same overloads (a macro calling an overloaded one is ambiguous)
            out += [replace(o, name=alias, doc=f"Alias of {m.name}.") for o in overloads]
    return out


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """Every ranking macro, helpers first."""
    rops = RankingSqlOps(qualify)
    return [
        *_ranked(qualify),
        *_graded(),
        *_scores(qualify),
        *_sets(qualify, rops),
        *_means(qualify, rops),
        *_measure_macros(qualify, rops),
    ]
