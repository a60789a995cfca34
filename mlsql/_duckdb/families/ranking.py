"""Ranking in DuckDB SQL: @k measures over ranked lists, label-ranking measures over score maps.

Every per-row quantity is a macro; the aggregates average it with the shared
``ops.mean``. Scores are a ``MAP(label, score)`` (an Arrow map column arrives
as one); a list of ``{label, score}`` structs becomes one with
``map_from_entries(list)``.

A value used inside a lambda is bound first with ``list_transform([value],
lambda v: ...)[1]``: DuckDB evaluates a lambda body once per list element, so
an expression there (rather than a bound variable) would be computed again for
every element.
"""

from __future__ import annotations

from typing import Any

from mlsql._duckdb.library import Macro, Qualify
from mlsql._duckdb.ops import SqlOps
from mlsql._registry import measures
from mlsql._sqlexpr import Sql, call
from mlsql.measures import ranking as R

FILE = "ranking.sql"
DESCRIPTION = (
    "Ranking: Hivemall's @k measures over ranked lists, scikit-learn's label-ranking "
    "measures over score maps, and scores to label lists."
)
ORDER = 40
FAMILIES: tuple[str, ...] = ()  # rendered here: optional k and per-row macros


class RankingSqlOps(SqlOps):
    """The core SQL primitives plus the logarithm and power the DCG formulas need."""

    def log2(self, x: Any) -> Sql:
        return call("log2", x)

    def pow(self, base: Any, exponent: Any) -> Sql:
        return call("pow", base, exponent)


def let(value: Any, name: str, body: Any) -> Sql:
    """``body`` with ``name`` bound to ``value``, computed once."""
    return Sql(f"list_transform([{value}], lambda {name}: {body})[1]")


def total(items: str, params: str, term: Any) -> Sql:
    """The sum of ``term`` over a list (0 for an empty list)."""
    return Sql(f"coalesce(list_sum(list_transform({items}, lambda {params}: {term})), 0)")


def _error(template: str, value: str) -> str:
    """``error(...)`` of a message whose ``{func}`` and ``{got}`` are filled in SQL."""
    got = f"' || coalesce(CAST({value} AS VARCHAR), 'NULL') || '"
    text = template.replace("'", "''").replace("{func}", "' || func || '").replace("{got}", got)
    return f"error('{text}')"


def _checks() -> list[Macro]:
    k1 = _error(R.k_message("{func}", "{got}"), "k")
    k0 = _error(R.k_message("{func}", "{got}", at_least=0), "k")
    th = _error(R.threshold_message("{func}", "{got}"), "threshold")
    return [
        Macro(
            FILE,
            "_mlsql_check_k",
            ("k", "func"),
            f"CASE WHEN k IS NULL THEN NULL\n"
            f"         WHEN k >= 1 AND k = floor(k) THEN CAST(k AS BIGINT)\n"
            f"         ELSE {k1} END",
            "Validate an @k cut: NULL (the whole list) or a whole number > 0.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_check_top_k",
            ("k", "func"),
            f"CASE WHEN k IS NULL THEN NULL\n"
            f"         WHEN k >= 0 AND k = floor(k) THEN CAST(k AS BIGINT)\n"
            f"         ELSE {k0} END",
            "Validate the k of top_k: NULL (every label) or a whole number >= 0.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_check_threshold",
            ("threshold", "func"),
            f"CASE WHEN threshold IS NULL THEN {th} ELSE threshold END",
            "Validate a score threshold: any number, not NULL.",
            public=False,
        ),
    ]


# ------------------------------------------------------------------ ranked lists
def _ranked_stats(s: str) -> R.RankedStats:
    return R.RankedStats(
        unknown=Sql(f"({s} IS NULL)"),
        n_ranked=Sql(f"{s}.n_ranked"),
        n_true=Sql(f"{s}.n_true"),
        hits=Sql(f"len({s}.hits)"),
        first_hit=Sql(f"coalesce({s}.hits[1], 0)"),
        over_hits=lambda term: total(f"{s}.hits", "pos, nth", term(Sql("pos"), Sql("nth"))),
        over_positions=lambda count, term: total(f"range(1, {count} + 1)", "p", term(Sql("p"))),
    )


def _ranked(q: Qualify) -> list[Macro]:
    ranked_row = f"""CASE WHEN rank_items IS NULL OR correct_items IS NULL THEN NULL ELSE
    list_transform([{{'ranked': {q("_mlsql_ranked")}(rank_items), 'truth': correct_items, 'k': k}}], lambda r:
        struct_pack(
            n_ranked := least(len(r.ranked), coalesce(r.k, len(r.ranked))),
            n_true := len(list_distinct(r.truth)),
            hits := list_filter(
                list_transform(list_slice(r.ranked, 1, coalesce(r.k, len(r.ranked))),
                               lambda item, pos: CASE WHEN list_contains(r.truth, item) THEN pos END),
                lambda pos: pos IS NOT NULL)))[1] END"""
    return [
        Macro(
            FILE,
            "_mlsql_ranked",
            ("items",),
            """CASE WHEN len(list_distinct(items)) = list_count(items)
         THEN list_filter(items, lambda x: x IS NOT NULL)
         ELSE list_transform([items], lambda l:
             list_filter(l, lambda x, i: x IS NOT NULL AND NOT list_contains(l[1:i - 1], x)))[1] END""",
            "A ranked list without NULLs and repeats (the first occurrence keeps its place).",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_ranked_row",
            ("rank_items", "correct_items", "k"),
            ranked_row,
            "One row's @k statistics: n_ranked = min(|R|, k), n_true = |T|, and the "
            "positions of the hits in the top k; NULL when either list is NULL.",
            public=False,
        ),
    ]


def _graded_stats(s: str) -> R.GradedStats:
    return R.GradedStats(
        unknown=Sql(f"({s} IS NULL)"),
        over_ranked=lambda term: total(f"{s}.ranked", "grade, pos", term(Sql("grade"), Sql("pos"))),
        over_ideal=lambda term: total(f"{s}.ideal", "grade, pos", term(Sql("grade"), Sql("pos"))),
    )


def _graded() -> Macro:
    return Macro(
        FILE,
        "_mlsql_graded_row",
        ("ranked_relevance", "ideal_relevance", "k"),
        """CASE WHEN ranked_relevance IS NULL OR ideal_relevance IS NULL THEN NULL ELSE
    struct_pack(
        ranked := list_slice(ranked_relevance, 1, coalesce(k, len(ranked_relevance))),
        ideal := list_slice(list_reverse_sort(list_filter(ideal_relevance, lambda x: x IS NOT NULL)),
                            1, coalesce(k, len(ranked_relevance)))) END""",
        "One row's relevance grades cut at k (default: the ranked list's length), the ideal "
        "ones sorted descending; NULL when either list is NULL.",
        public=False,
    )


# ------------------------------------------------------------------ label scores
RANK_FIELDS = ("at_or_above", "above", "true_at_or_above")


def _score_stats(q: Qualify, row: str) -> R.ScoreStats:
    labels = f"{row}.labels"

    def rank_of(t: str) -> R.LabelRank:
        return R.LabelRank(
            at_or_above=Sql(f"len(list_filter({labels}, lambda u: u.score >= {t}.score))"),
            above=Sql(f"len(list_filter({labels}, lambda u: u.score > {t}.score))"),
            true_at_or_above=Sql(
                f"len(list_filter({labels}, lambda u: u.is_true AND u.score >= {t}.score))"
            ),
        )

    true_labels = f"list_filter({labels}, lambda t: t.is_true)"
    placeholders = R.LabelRank(*(Sql(f"r.{f}") for f in RANK_FIELDS))

    def per_true_label(term: Any) -> tuple[str, Sql]:
        """Each true label's rank fields that ``term`` uses (only those are counted), and the term."""
        body = term(placeholders)
        used = [f for f in RANK_FIELDS if f"r.{f}" in str(body)] or ["at_or_above"]
        fields = ", ".join(f"'{f}': {getattr(rank_of('t'), f)}" for f in used)
        return f"list_transform({true_labels}, lambda t: {{{fields}}})", body

    def over_true(term: Any) -> Sql:
        ranks, body = per_true_label(term)
        return total(ranks, "r", body)

    def max_over_true(term: Any) -> Sql:
        ranks, body = per_true_label(term)
        return Sql(f"list_max(list_transform({ranks}, lambda r: {body}))")

    return R.ScoreStats(
        unknown=Sql(f"({labels} IS NULL)"),
        n_labels=Sql(f"len({labels})"),
        n_true=Sql(f"len({true_labels})"),
        n_top=call(q("_mlsql_n_top"), Sql(labels), False),
        n_top_true=call(q("_mlsql_n_top"), Sql(labels), True),
        over_true=over_true,
        max_over_true=max_over_true,
        over_places=lambda start, stop, term: total(
            f"range({start} + 1, {stop} + 1)", "p", term(Sql("p"))
        ),
        over_positions=lambda count, term: total(f"range(1, {count} + 1)", "p", term(Sql("p"))),
        cut=lambda n: Sql(f"CASE WHEN {row}.k IS NULL THEN {n} ELSE least({n}, {row}.k) END"),
    )


def _scores(q: Qualify) -> list[Macro]:
    return [
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
            "_mlsql_label_scores",
            ("scores", "actual"),
            f"""CASE WHEN scores IS NULL OR actual IS NULL THEN NULL ELSE
    list_transform([{{'scored': {q("_mlsql_scored")}(scores), 'truth': list_distinct(actual)}}], lambda r:
        list_concat(
            list_transform(r.scored, lambda e: {{
                'score': CAST(e.value AS DOUBLE),
                'is_true': coalesce(list_contains(r.truth, e.key), false),
                'scored': true}}),
            list_transform(
                list_filter(r.truth, lambda a: NOT list_contains(list_transform(r.scored, lambda e: e.key), a)),
                lambda a: {{'score': CAST('-inf' AS DOUBLE), 'is_true': true, 'scored': false}})))[1] END""",
            "A row's labels (scored, and true but unscored at -infinity) with score and truth; "
            "NULL when either input is NULL.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_n_top",
            ("labels", "only_true"),
            """list_transform(
        [list_max(list_transform(list_filter(labels, lambda u: u.scored), lambda u: u.score))],
        lambda top: len(list_filter(labels,
            lambda u: u.scored AND u.score = top AND (u.is_true OR NOT only_true))))[1]""",
            "How many scored labels (true ones if only_true) share the highest score.",
            public=False,
        ),
    ]


def _sets(q: Qualify) -> list[Macro]:
    top = q("_mlsql_top_k_of")
    scored = q("_mlsql_scored")
    above = q("_mlsql_scored_above")
    check_k, check_t = q("_mlsql_check_top_k"), q("_mlsql_check_threshold")
    return [
        Macro(
            FILE,
            "_mlsql_ranked_labels",
            ("entries",),
            "list_transform(\n"
            "        list_sort(list_transform(entries, lambda e: {'neg_score': - CAST(e.value AS DOUBLE), 'label': e.key})),\n"
            "        lambda e: e.label)",
            "Labels of (key, value) entries, best score first, ties by label.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_top_k_of",
            ("entries", "n"),
            f"list_transform([{q('_mlsql_ranked_labels')}(entries)], lambda labels:\n"
            "        CASE WHEN n IS NULL THEN labels ELSE list_slice(labels, 1, n) END)[1]",
            "The labels of the n best-scored entries, best first (all of them when n is NULL).",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_scored_above",
            ("scores", "threshold"),
            f"list_transform([threshold], lambda t: list_filter({scored}(scores), lambda e: e.value >= t))[1]",
            "The entries of a score map scored >= threshold.",
            public=False,
        ),
        Macro(
            FILE,
            "top_k",
            ("scores", "k := NULL"),
            f"{top}({scored}(scores), {check_k}(k, 'top_k'))",
            "The k best-scored labels of a score map, best first (ties by label); "
            "every scored label without k. NULL scores are not scored.",
        ),
        Macro(
            FILE,
            "above_threshold",
            ("scores", "threshold"),
            f"{top}({above}(scores, {check_t}(threshold, 'above_threshold')), NULL)",
            "Labels of a score map scored >= threshold, best first (ties by label).",
        ),
        Macro(
            FILE,
            "top_k_above",
            ("scores", "k", "threshold"),
            f"{top}({above}(scores, {check_t}(threshold, 'top_k_above')), {check_k}(k, 'top_k_above'))",
            "At most k labels of a score map, each scored >= threshold, best first (ties by label).",
        ),
    ]


# ------------------------------------------------------------------ the measures
def _measure_macros(q: Qualify, ops: RankingSqlOps) -> list[Macro]:
    out: list[Macro] = []
    for m in measures(family=R.FAMILY, kind="aggregate"):
        a, b = m.inputs
        has_k = any(p.name == "k" for p in m.params)
        if m.inputs == R.RANKED:
            base, var, stats = q("_mlsql_ranked_row"), "s", _ranked_stats("s")
            body = let(call(base, Sql(a), Sql(b), Sql("k")), var, R.row_value(ops, m.name, stats))
        elif m.inputs == R.SCORED:
            row = f"{{'labels': {q('_mlsql_label_scores')}(scores, actual), 'k': {'k' if has_k else 'NULL'}}}"
            body = let(Sql(row), "sr", R.row_value(ops, m.name, _score_stats(q, "sr")))
        else:
            base = q("_mlsql_graded_row")
            body = let(
                call(base, Sql(a), Sql(b), Sql("k")),
                "s",
                R.row_value(ops, m.name, _graded_stats("s")),
            )
        row_params = (a, b, "k") if has_k else (a, b)
        row_name = f"_mlsql_{m.name}_row"
        out.append(
            Macro(FILE, row_name, row_params, str(body), f"Per row: {m.summary}", public=False)
        )
        args = [Sql(a), Sql(b)]
        if has_k:
            args.append(call(q("_mlsql_check_k"), Sql("k"), m.name))
        public = (a, b, "k := NULL") if has_k else (a, b)
        doc = f"{m.summary} {R.NOTES[m.name]}"
        out.append(Macro(FILE, m.name, public, str(ops.mean(call(q(row_name), *args))), doc))
        for alias in m.aliases:
            out.append(Macro(FILE, alias, (a, b), f"{q(m.name)}({a}, {b})", f"Alias of {m.name}."))
    return out


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """Every ranking macro, helpers first."""
    rops = RankingSqlOps(qualify)
    return [
        *_checks(),
        *_ranked(qualify),
        _graded(),
        *_scores(qualify),
        *_sets(qualify),
        *_measure_macros(qualify, rops),
    ]
