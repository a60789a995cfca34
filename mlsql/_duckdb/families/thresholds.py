"""Calibration bins and per-label thresholds in DuckDB: table macros over a source.

``calibration_table('t', 'actual', 'prob', n_bins := 10, "by" := [...])`` (and an
overload taking ``sample_weight := 'w'``, a weight column) is one GROUP BY of
(group, bin) over the known rows; the bin is the registry's
``calibration_bin`` formula, the macro ``expected_calibration_error`` uses.
``strategy := 'quantile'`` reads each group's edges from its sorted
probabilities (one list per group) and bins each row among them, a second
scan of the source.

``label_thresholds('t', 'actual', 'scores', beta := 1, zero_division := 0,
n_bins := NULL, "by" := [...])`` spreads each known row over its scored labels
and its true labels without a score (one ``unnest``; the latter at key NULL,
which counts in the label's support and is never a threshold), counts
positives and negatives per (group, label, score) (or per bin with
``n_bins``), and takes cumulative sums from the highest score down (a window
per label): each distinct score's tp and fp, and the label's support. The best
row per label (highest F-beta, then highest threshold) is picked by
``row_number()``; a label true but never scored keeps its NULL-key row;
``micro_fbeta`` sums the chosen counts over the group (a window). One scan of
the source; DuckDB's sort and hash aggregate spill to disk when they must.
Native (:func:`native_overrides`): the counts per (group, label, score) come
from the extension's cell aggregate, one per group, instead of the rows'
spread cells; the rest is the same SQL.

Names the caller gives (source, columns, ``by``) are parameter values that
select columns by comparison (``COLUMNS(lambda c: ...)``), never SQL text.
"""

from __future__ import annotations

from typing import Any

from mlsql import _params as P
from mlsql._duckdb.families.curves import known_row
from mlsql._duckdb.families.ranking import ENTRY_TYPES
from mlsql._duckdb.families.single_label import KEEP, _columns, _row_weight
from mlsql._duckdb.library import Macro, Qualify, check_param
from mlsql._duckdb.ops import SqlOps
from mlsql._formulas import Counts
from mlsql._front.build import formula
from mlsql._sqlexpr import Sql, call
from mlsql.measures import scores as SC
from mlsql.measures import thresholds as TH

FILE = "thresholds.sql"
DESCRIPTION = (
    "From scores to decisions: calibration_table (the bins of expected_calibration_error) "
    "and label_thresholds (per label, the score threshold maximising F-beta)."
)
ORDER = 45
FAMILIES: tuple[str, ...] = ()  # rendered here

#: a group key equal to another (NULL groups too)
SAME_GROUP = "{x}.g IS NOT DISTINCT FROM {y}.g"


class WindowOps(SqlOps):
    """DuckDB ops whose sums run over the window ``w`` (a group's rows)."""

    def __init__(self, ops: SqlOps) -> None:
        super().__init__(ops.qualify)

    def sum(self, x: Any) -> Sql:
        return Sql(f"sum({x}) OVER w")


def _calibration(q: Qualify, ops: SqlOps, weighted: bool) -> Macro:
    """``calibration_table``; ``weighted``: the overload taking ``sample_weight`` (a column
    name), whose counts are sums of the rows' weights (a row weighing 0 dropped).

    ``strategy := 'quantile'``: each group's probabilities sorted into one list, its
    n_bins + 1 edges read from it (the registry's numpy percentile), and each row's bin the
    number of inner edges below it (the rows joined to their group's edges); a second scan
    of the source. The uniform branch and the quantile one are each filtered on the raw
    parameter, a constant, so only one runs."""
    func = "calibration_table"
    n_bins = check_param(SC.N_BINS, q, func)
    strategy = check_param(TH.STRATEGY, q, func)
    y = call(q("_mlsql_binary_flag"), Sql("__mlsql_actual"), "actual", func)
    p = call(
        q("_mlsql_probability"),
        call(
            q("_mlsql_number"),
            Sql("CASE WHEN __mlsql_actual IS NOT NULL THEN __mlsql_prob END"),
            "prob",
            func,
        ),
        "prob",
        func,
    )
    b = SC.calibration_bin(ops, Sql("p"), Sql("nb"))
    row = TH.CalibrationBin(Sql("b"), Sql("n"), Sql("s"), Sql("pos"))
    values = formula("calibration_table")(ops, row, n_bins=Sql("nb"))
    # quantile bins: their edges, and the low and high columns read from them
    lower, upper, t = TH.quantile_index(
        ops, Sql("len(v)"), TH.quantile_level(ops, Sql("k"), Sql("nb"))
    )
    edge = TH.quantile_edge(
        ops, Sql(f"v[CAST({lower} AS BIGINT) + 1]"), Sql(f"v[CAST({upper} AS BIGINT) + 1]"), t
    )
    low, high = values.pop("low"), values.pop("high")
    select = ",\n               ".join(f"{e} AS {name}" for name, e in values.items())
    w_name, w = _row_weight(q, func, weighted)
    tally = "sum(w)" if weighted else "count(*)"
    columns = _columns(func, "actual", "prob", *w_name, q=q, outputs=TH.CALIBRATION_COLUMNS)
    known = f"""SELECT g, y, p, w FROM (
            SELECT g, {y} AS y, {p} AS p, {w} AS w FROM ({columns}))
        WHERE {known_row("y IS NOT NULL AND p IS NOT NULL", weighted)}"""
    # the raw parameter, lower-cased as its check reads it: a constant DuckDB folds, so that
    # the rows of the other strategy's branch are never read (each branch reads the source
    # itself: one shared CTE of the rows, named three times, was materialised)
    raw = "lower(CAST(strategy AS VARCHAR))"
    sums = f"{tally} AS n, sum(p * w) AS s, sum(CAST(y AS BIGINT) * w) AS pos"
    body = f"""WITH params AS (SELECT {n_bins} AS nb, {strategy} AS st),
    uniform AS (
        SELECT g, {b} AS b, {sums}
        FROM ({known} AND {raw} IS DISTINCT FROM 'quantile') CROSS JOIN params
        GROUP BY g, b),
    counted AS (
        {known} AND {raw} = 'quantile'),
    -- quantile: each group's n_bins + 1 edges, numpy's percentiles of its probabilities
    edges AS (
        SELECT g, list_transform(range(nb + 1), lambda k: {edge}) AS e
        FROM (SELECT g, list_sort(list(p)) AS v FROM counted GROUP BY g) CROSS JOIN params),
    -- a row's quantile bin: the inner edges below it (scikit-learn's searchsorted)
    quantile AS (
        SELECT c.g, len(list_filter(e.e[2:nb], lambda x: x < c.p)) AS b, {sums}
        FROM counted AS c JOIN edges AS e ON {SAME_GROUP.format(x="c", y="e")}
             CROSS JOIN params
        GROUP BY c.g, b),
    bins AS (
        SELECT g, b, {low} AS low, {high} AS high, n, s, pos FROM uniform CROSS JOIN params
        UNION ALL
        SELECT q.g, b, e.e[b + 1], e.e[b + 2], n, s, pos
        FROM quantile AS q JOIN edges AS e ON {SAME_GROUP.format(x="q", y="e")})
    SELECT COLUMNS({KEEP}) FROM (
        SELECT unnest(g), CAST(b AS BIGINT) AS bin, low, high,
               {select},
               -- the checked strategy: a bad value is an error
               CASE WHEN st IS NOT NULL THEN g END AS __mlsql_g
        FROM bins CROSS JOIN params)
    ORDER BY __mlsql_g, bin"""
    return Macro(
        FILE,
        func,
        (
            "source",
            "actual",
            "prob",
            *w_name,
            f"n_bins := {SC.N_BINS.default}",
            f"strategy := '{TH.STRATEGY.default}'",
            '"by" := NULL',
        ),
        body,
        "One row per non-empty bin (and group): bin, low, high, count, mean_score, "
        "observed_rate; the bins of expected_calibration_error, or (strategy 'quantile') "
        "bins cut at the group's percentiles"
        f"{', each row weighted by sample_weight' if weighted else ''}.",
        table=True,
    )


#: a list of {label, score} structs as a MAP's entries: the first entry of each non-NULL label,
#: as a {key, value} struct, without building the MAP (``map_from_entries`` costs about 1.1
#: CPU s a million rows of 4 entries; this 0.2)
ENTRY_LIST = """list_transform([list_transform(scores, lambda e: e.label)], lambda labels:
        list_transform(list_filter(scores,
            lambda e, i: e.label IS NOT NULL AND list_position(labels, e.label) = i),
            lambda e: struct_pack(key := e.label, value := e.score)))[1]"""


def _entries(q: Qualify) -> list[Macro]:
    """``_mlsql_score_entries(scores)``: a row's (key, value) entries, from a MAP or (typed
    overloads) a list of {label, score} structs, a label's first entry kept. NULL scores are
    dropped after the unnest (a filter inside each list costs 2.5x more at 1M rows)."""
    doc = "A row's label scores as (key, value) entries (a list's first entry of a label kept)."
    lists = [
        Macro(FILE, "_mlsql_score_entries", (f"scores {t}",), ENTRY_LIST, doc, public=False)
        for t in ENTRY_TYPES
    ]
    return [
        *lists,
        Macro(FILE, "_mlsql_score_entries", ("scores",), "map_entries(scores)", doc, public=False),
    ]


def _thresholds(q: Qualify, ops: SqlOps, weighted: bool, native: bool = False) -> Macro:
    """``label_thresholds``; ``weighted``: the overload taking ``sample_weight`` (a column
    name), whose tp, fp, fn and support are sums of the rows' weights (a row weighing 0
    dropped)."""
    func = "label_thresholds"
    beta, zd, nb = (check_param(p, q, func) for p in (P.BETA, P.ZERO_DIVISION, TH.THRESHOLD_BINS))
    entries = call(q("_mlsql_score_entries"), Sql("__mlsql_scores"))
    keys = Sql(f"list_transform({entries}, lambda x: x.key)")
    checked = call(
        q("_mlsql_checked_label_lists"), Sql("__mlsql_actual"), keys, func, "actual", "scores"
    )
    # the labels as the scores' label type (integer widths may differ), so that comparing
    # them binds; a mismatch of kinds has failed the check before (cast_to_type reads only
    # the type of its second argument)
    actual = call("cast_to_type", checked, keys)
    score = call(q("_mlsql_number"), Sql("x.v"), "scores", func)
    binned = SC.calibration_bin(
        ops, call(q("_mlsql_probability"), Sql("s"), "scores", func), Sql("nb")
    )
    rank = TH.selection_fbeta(ops, Counts(Sql("tp"), Sql("fp"), Sql("support - tp")), Sql("b"))
    counts, threshold = TH.chosen(ops, Sql("tp"), Sql("fp"), Sql("support"), Sql("key"))
    counted = Counts(Sql("tp"), Sql("fp"), Sql("fn"))
    values = formula("label_thresholds")(ops, counted, beta=Sql("b"), zero_division=Sql("zd"))
    micro = TH.micro_fbeta(
        WindowOps(ops), Counts(Sql("tp"), Sql("fp"), Sql("fn")), Sql("b"), Sql("zd")
    )
    select = ",\n               ".join(f"{e} AS {name}" for name, e in values.items())
    w_name, w = _row_weight(q, func, weighted)
    if weighted:
        kind = "DOUBLE"

        def tally(where: str) -> str:
            return f"coalesce(sum(w){where}, 0.0)"

    else:
        kind = "BIGINT"

        def tally(where: str) -> str:
            return f"count(*){where}"

    pos, neg = tally(" FILTER (WHERE t)"), tally(" FILTER (WHERE NOT t)")
    columns = _columns(
        func,
        "actual",
        "scores",
        *w_name,
        q=q,
        typed={"scores": "MAP(VARCHAR, DOUBLE)"},
        outputs=TH.THRESHOLD_COLUMNS,
    )
    if native:
        # one aggregate per group: the extension's cells, score NULL for a true label without
        # a score (support only), as the portable events below
        native_keys = Sql(f"{q('_mlsql_native_keys')}(__mlsql_scores)")
        native_values = f"{q('_mlsql_native_values')}(__mlsql_scores, 'scores', '{func}')"
        native_checked = call(
            q("_mlsql_checked_label_lists"),
            Sql("__mlsql_actual"),
            native_keys,
            func,
            "actual",
            "scores",
        )
        # with n_bins the scores are binned before the aggregate: its table is then labels x
        # bins, whatever the scores (the constant memory n_bins promises)
        bin_of = SC.calibration_bin(
            ops,
            call(
                q("_mlsql_probability"),
                call(q("_mlsql_number"), Sql("x"), "scores", func),
                "scores",
                func,
            ),
            Sql("nb"),
        )
        native_v = (
            f"CASE WHEN nb IS NULL THEN {native_values} "
            f"ELSE list_transform({native_values}, lambda x: {bin_of}) END"
        )
        head = f"""    known AS (
        SELECT * FROM (
            SELECT g, {call("cast_to_type", native_checked, native_keys)} AS a, {native_keys} AS k,
                   {native_v} AS v,
                   {w} AS w
            FROM ({columns}) CROSS JOIN params)
        WHERE {known_row("a IS NOT NULL AND k IS NOT NULL", weighted)}),
    grouped AS (
        SELECT g, {q("_mlsql_native_label_cells")}(a, k, v, w) AS cells FROM known GROUP BY g),
    events AS (
        SELECT g, c.label AS label, {call(q("_mlsql_number"), Sql("c.score"), "scores", func)} + 0.0 AS s,
               c.pos AS pos, c.neg AS neg
        FROM (SELECT g, unnest(cells) AS c FROM grouped)),
    cells AS (
        SELECT g, label, s AS key,
               {"sum(pos)" if weighted else "CAST(sum(pos) AS BIGINT)"} AS pos,
               {"sum(neg)" if weighted else "CAST(sum(neg) AS BIGINT)"} AS neg
        FROM events
        GROUP BY ALL),
"""
    else:
        head = f"""    known AS (
        SELECT * FROM (
            SELECT g, {actual} AS a, {entries} AS e, {w} AS w
            FROM ({columns}))
        WHERE {known_row("a IS NOT NULL AND e IS NOT NULL", weighted)}),
    -- a row's scored labels (a NULL score is none) and its true labels without a score, the
    -- latter at key NULL: they count in the label's support, never as a threshold
    events AS (
        SELECT g, x.label AS label, {score} + 0.0 AS s, x.t AS t, w
        FROM (SELECT g, w, unnest(list_concat(
                  list_transform(e, lambda x: struct_pack(label := x.key, v := x.value,
                                                          t := list_contains(a, x.key))),
                  list_transform(list_filter(list_distinct(a),
                                             lambda y: NOT list_contains(list_transform(e, lambda z: z.key), y)),
                                 lambda y: struct_pack(label := y, v := NULL, t := true)))) AS x
              FROM known)
        WHERE x.v IS NOT NULL OR x.t),
    cells AS (
        SELECT g, label, CASE WHEN s IS NULL OR nb IS NULL THEN s ELSE {binned} END AS key,
               {pos} AS pos, {neg} AS neg
        FROM events CROSS JOIN params
        GROUP BY ALL),
"""
    body = f"""WITH params AS (
        SELECT {beta} AS b, {zd} AS zd, {nb} AS nb),
{head}    -- per label: cumulative counts from the highest key down (key NULL last), its support
    candidates AS (
        SELECT g, label, key,
               sum(pos) OVER down AS tp, sum(neg) OVER down AS fp,
               CAST(sum(pos) OVER (PARTITION BY g, label) AS {kind}) AS support
        FROM cells
        WINDOW down AS (PARTITION BY g, label ORDER BY key DESC NULLS LAST)),
    -- the best scored key of a label; a label only true, never scored: its key NULL row
    best AS (
        SELECT g, label, key, CASE WHEN key IS NULL THEN 0 ELSE tp END AS tp,
               CASE WHEN key IS NULL THEN 0 ELSE fp END AS fp, support FROM (
            SELECT *, row_number() OVER (
                PARTITION BY g, label ORDER BY key IS NOT NULL DESC, {rank} DESC, key DESC) AS r
            FROM candidates CROSS JOIN params)
        WHERE r = 1),
    chosen AS (
        SELECT g, label,
               {threshold} AS threshold,
               CAST({counts.tp} AS {kind}) AS tp, CAST({counts.fp} AS {kind}) AS fp,
               CAST({counts.fn} AS {kind}) AS fn, support
        FROM (SELECT g, label, CASE WHEN nb IS NULL THEN key ELSE key / nb END AS key,
                     tp, fp, support
              FROM best CROSS JOIN params))
    SELECT COLUMNS({KEEP}) FROM (
        SELECT unnest(g), label, threshold, tp, fp, fn, support,
               {select},
               {micro} AS micro_fbeta,
               g AS __mlsql_g
        FROM chosen CROSS JOIN params
        WINDOW w AS (PARTITION BY g))
    ORDER BY __mlsql_g, label"""
    return Macro(
        FILE,
        func,
        (
            "source",
            "actual",
            "scores",
            *w_name,
            f"beta := {P.BETA.default}",
            f"zero_division := {P.ZERO_DIVISION.default}",
            "n_bins := NULL",
            '"by" := NULL',
        ),
        body,
        "One row per label (and group): the score threshold maximising F-beta, tp, fp, fn, "
        "support, precision, recall, fbeta, and micro_fbeta of every label at its threshold"
        f"{', each row weighted by sample_weight' if weighted else ''}.",
        table=True,
    )


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """The score-entry helper and the two table macros."""
    return [
        *_entries(qualify),
        _calibration(qualify, ops, False),
        _calibration(qualify, ops, True),
        _thresholds(qualify, ops, False),
        _thresholds(qualify, ops, True),
    ]


def native_overrides(qualify: Qualify) -> list[Macro]:
    """``label_thresholds`` over the extension's cell aggregate (same overloads and results as
    :func:`macros`; the helpers are the curves' :func:`~mlsql._duckdb.families.curves.native_helpers`,
    made there)."""
    ops = SqlOps(qualify)
    return [_thresholds(qualify, ops, False, True), _thresholds(qualify, ops, True, True)]
