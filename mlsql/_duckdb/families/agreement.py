"""Agreement among several raters in DuckDB: Fleiss' kappa.

``fleiss_kappa(ratings)`` reads its group in ONE aggregate, a ``histogram()`` of the
known rows' sorted ratings (NULL elements left out; with ``sample_weight``, of
{sorted ratings, weight} pairs): its keys are the distinct multisets of categories the
raters gave, so memory grows with the categories and raters (and distinct weights), never
with the rows. The statistics of :class:`~mlsql.measures.agreement.RatingStats` are list
functions over that map, bound once; the formula is the registry's
(:mod:`mlsql.measures.agreement`).
"""

from __future__ import annotations

from mlsql import _label_types as LT
from mlsql._duckdb import classification_checks as CC
from mlsql._duckdb.classification_checks import let
from mlsql._duckdb.families.label_based import label_list, list_checks
from mlsql._duckdb.library import Macro, Qualify, list_kind, sql_message
from mlsql._duckdb.ops import SqlOps
from mlsql._registry import Measure, measures
from mlsql._sqlexpr import Sql, lit
from mlsql.measures import agreement as AG

FILE = "agreement.sql"
DESCRIPTION = (
    "Agreement among several raters and models: Fleiss' kappa over one list of ratings per "
    "row, Cochran's Q over one list of 0/1 outcomes per row."
)
ORDER = 26
FAMILIES: tuple[str, ...] = ()  # rendered here


def _state(q: Qualify, m: Measure, weighted: bool) -> Sql:
    """SQL: {rows, n, raters, squares, total_squares} of the group (:class:`RatingStats`),
    failing with :data:`~mlsql.measures.agreement.RATERS_MESSAGE` where known rows hold
    different numbers of ratings, or fewer than 2."""
    # one value per row is mlsql's error, not DuckDB's binder's (a list type binds the body);
    # a list of floats or booleans holds no labels (:data:`LT.NOT_A_LABEL_MESSAGE`)
    func = str(lit(m.name))
    not_labels = sql_message(
        LT.NOT_A_LABEL_MESSAGE.format(func="{}", name="{}", type="{}"),
        func,
        "'ratings'",
        "typeof(ratings)",
    )
    kinds = ", ".join(f"'{k}'" for k in (*LT.LABEL_KINDS, LT.NULL))
    checked = label_list(q, "ratings", func, "'ratings'")
    rated = (
        f"CASE WHEN typeof(ratings) LIKE '%]' AND ({list_kind('typeof(ratings)')}) NOT IN"
        f" ({kinds}) THEN error({not_labels}) ELSE {checked} END"
    )
    sorted_ratings = f"list_sort(list_filter({rated}, lambda x: x IS NOT NULL))"
    known = "ratings IS NOT NULL"
    if weighted:
        w = CC.weight(m.name, q)
        known = f"{known} AND {w} IS NOT NULL"
        h = f"histogram(struct_pack(r := {sorted_ratings}, w := CAST({w} AS DOUBLE))) FILTER (WHERE {known})"
        key, times = "e.key.r", "e.value * e.key.w"
    else:
        h = f"histogram({sorted_ratings}) FILTER (WHERE {known})"
        key, times = "e.key", "CAST(e.value AS DOUBLE)"
    entries = "map_entries(h)"
    # a row's Σ_j n_ij²: Σ over its ratings of how many ratings equal each one
    row_squares = (
        f"list_sum(list_transform({key}, lambda x: len(list_filter({key}, lambda y: y = x))))"
    )
    categories = f"list_distinct(flatten(list_transform({entries}, lambda e: {key})))"
    category_total = f"list_sum(list_transform({entries}, lambda e: {times} * len(list_filter({key}, lambda y: y = c))))"
    sizes = f"list_transform({entries}, lambda e: len({key}))"
    message = lit(AG.RATERS_MESSAGE.format(func=m.name))
    raters = (
        f"CASE WHEN list_min({sizes}) <> list_max({sizes}) OR list_min({sizes}) < 2 "
        f"THEN error({message}) ELSE list_min({sizes}) END"
    )
    totals = f"list_transform({categories}, lambda c: {category_total})"
    body = f"""struct_pack(
        rows := coalesce(list_sum(list_transform({entries}, lambda e: CAST(e.value AS BIGINT))), 0),
        n := coalesce(list_sum(list_transform({entries}, lambda e: {times})), 0.0),
        raters := {raters},
        squares := list_sum(list_transform({entries}, lambda e: {times} * {row_squares})),
        total_squares := list_sum(list_transform({totals}, lambda t: t * t)))"""
    return let(Sql(h), "h", body)


#: DuckDB's names of the list types Cochran's Q reads (booleans, whole numbers, NULLs)
FLAG_LIST_TYPES = r'^(BOOLEAN|U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|"NULL")\[\d*\]$'


def _flag_lists() -> list[Macro]:
    """``_mlsql_flag_list(x, type_name, func, name)``: a list of booleans or whole numbers as
    it is; any other type (one value per row, a list of text or fractions) the error
    :data:`~mlsql.measures.agreement.FLAGS_MESSAGE`, as Polars and Spark give it from the
    type. One value per row is typed as a list, so the query binds and the check says what is
    wrong."""
    doc = "An outcome-list input; another type is an error (its type: type_name)."

    def listed(message: str) -> str:
        return (
            f"CASE WHEN regexp_matches(type_name, {lit(FLAG_LIST_TYPES)}) THEN x "
            f"ELSE error({message}) END"
        )

    return list_checks(FILE, "_mlsql_flag_list", AG.FLAGS_MESSAGE, "BOOLEAN", doc, listed)


def _outcome_state(q: Qualify, m: Measure, weighted: bool) -> Sql:
    """SQL: {rows, n, k, total, row_squares, column_squares} of the group
    (:class:`~mlsql.measures.agreement.OutcomeStats`) from a histogram of its known rows'
    outcomes as 0/1 lists (at most 2^k keys), failing with
    :data:`~mlsql.measures.agreement.MODELS_MESSAGE` where known rows hold different numbers
    of values, or fewer than 2."""
    name = lit(m.name)
    checked = f"{q('_mlsql_flag_list')}(correct, typeof(correct), {name}, 'correct')"
    flags = (
        f"list_transform({checked}, lambda x: CAST({q('_mlsql_binary_flag')}(x, 'correct', "
        f"{name}) AS INTEGER))"
    )
    known = f"correct IS NOT NULL AND list_count({checked}) = len({checked})"
    if weighted:
        w = CC.weight(m.name, q)
        known = f"{known} AND {w} IS NOT NULL"
        h = f"histogram(struct_pack(r := {flags}, w := CAST({w} AS DOUBLE))) FILTER (WHERE {known})"
        key, times = "e.key.r", "e.value * e.key.w"
    else:
        h = f"histogram({flags}) FILTER (WHERE {known})"
        key, times = "e.key", "CAST(e.value AS DOUBLE)"
    entries = "map_entries(h)"
    sizes = f"list_transform({entries}, lambda e: len({key}))"
    message = lit(AG.MODELS_MESSAGE.format(func=m.name))
    k = (
        f"CASE WHEN list_min({sizes}) <> list_max({sizes}) OR list_min({sizes}) < 2 "
        f"THEN error({message}) ELSE list_min({sizes}) END"
    )
    column = f"list_sum(list_transform({entries}, lambda e: {times} * {key}[j]))"
    columns = f"list_transform(range(1, coalesce(list_max({sizes}), 0) + 1), lambda j: {column})"
    body = f"""struct_pack(
        rows := coalesce(list_sum(list_transform({entries}, lambda e: CAST(e.value AS BIGINT))), 0),
        n := coalesce(list_sum(list_transform({entries}, lambda e: {times})), 0.0),
        k := {k},
        total := list_sum(list_transform({entries}, lambda e: {times} * list_sum({key}))),
        row_squares := list_sum(list_transform({entries}, lambda e: {times} * list_sum({key}) * list_sum({key}))),
        column_squares := list_sum(list_transform({columns}, lambda c: c * c)))"""
    return let(Sql(h), "h", body)


def _rating_stats() -> AG.RatingStats:
    return AG.RatingStats(
        n=Sql("st.n"),
        raters=Sql("st.raters"),
        squares=Sql("st.squares"),
        total_squares=Sql("st.total_squares"),
        rows=Sql("st.rows"),
    )


def _outcome_stats() -> AG.OutcomeStats:
    return AG.OutcomeStats(
        n=Sql("st.n"),
        k=Sql("st.k"),
        total=Sql("st.total"),
        row_squares=Sql("st.row_squares"),
        column_squares=Sql("st.column_squares"),
        rows=Sql("st.rows"),
    )


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """fleiss_kappa and Cochran's Q, with and without sample_weight."""
    out: list[Macro] = _flag_lists()
    for m in measures(family=AG.FAMILY):
        if m.build is None or not m.available_in("duckdb"):
            continue
        ratings = m.inputs == ("ratings",)
        state_of = _state if ratings else _outcome_state
        stats = _rating_stats() if ratings else _outcome_stats()

        def body(params: dict[str, Sql], m: Measure = m, weighted: bool = False) -> Sql:
            state = state_of(qualify, m, weighted)  # noqa: B023  (used before the loop moves on)
            return let(state, "st", m.build(ops, stats, **params))  # type: ignore[misc]  # noqa: B023

        def heavy(params: dict[str, Sql], m: Measure = m) -> Sql:
            return body(params, m, True)

        out += CC.render(m, qualify, ops, FILE, None, body=body, weighted=heavy)
    return out
