"""SQL ``bootstrap`` and ``compare`` of the measures of one value per row: one label per row
(accuracy, the class-wise measures), numbers (the regression measures) and a 0/1 label with a
score (the score aggregates).

A row's statistic tuple here is its (actual, predicted, weight) itself: rows with equal
tuples are exchangeable, so one Poisson(m) draw per distinct tuple seen m times and
resample is the row-level Poisson bootstrap, exactly, as for the label-set measures of
:mod:`mlsql._duckdb.families.resample`. One label per row has few distinct tuples (at most
classes x classes per weight), so its cost is one scan plus (tuples x resamples), as the
label sets'; numbers rarely repeat, so theirs grows as rows x resamples.

Each measure is the library's own weighted aggregate macro (``f1_score(actual, predicted,
sample_weight, ...)``) over the drawn tuples, each weighing weight x k, grouped by group and
resample; the estimate is the same macro with k = m, the measure on the data. A measure not
asked for is a branch under a constant false filter (``list_contains(measures, ...)`` of the
macro's literal list), which DuckDB's optimizer drops before it runs.

Poisson(1), the draw of nearly every tuple of numbers, is the inverse CDF of the uniform by
:func:`poisson_one` (a CASE over its CDF), without the join on the inverse CDF the other m
take (:func:`buckets`): here the draws number rows x resamples.

The public ``bootstrap`` and ``compare`` (:func:`dispatched`) pick the macro of the kind of
the first measure and call it by ``query()`` on a text of literals
(:func:`literal_macro`): DuckDB binds a macro's body for every argument type, and the
label-set macros cannot bind on columns of numbers, nor these on label lists.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from mlsql._duckdb import classification_checks as CC
from mlsql._duckdb.families.label_based import BETA as B
from mlsql._duckdb.families.label_based import COUNTS, FixedOrderOps, label_list
from mlsql._duckdb.families.label_based import ZD as Z
from mlsql._duckdb.library import Macro, Qualify, sql_message
from mlsql._duckdb.source_sql import ALL, checked_source_sql, name_or, pick_sql
from mlsql._registry import REGISTRY, measures
from mlsql._resample import front as FRONT
from mlsql._resample import measures as M
from mlsql._resample import numbers as NUM
from mlsql._resample import paired as PAIRED
from mlsql._sqlexpr import Sql, lit
from mlsql._weights import SAMPLE_WEIGHT
from mlsql.measures import label_based as LB

#: the measures of each kind the SQL macros resample from the tuple (actual, predicted)
KINDS: dict[str, tuple[str, ...]] = {
    "label_lists": M.LB_MEASURES,
    "classes": M.CLASS_MEASURES,
    "regression": NUM.REGRESSION_MEASURES,
    "scores": NUM.SCORE_MEASURES,
}
#: the per-measure parameters of these kinds, with their SQL defaults: each goes to every
#: listed measure taking it, which checks it
PARAMS = ("average := 'macro'", "weights := NULL", "n_bins := 10")
#: the names of :data:`PARAMS` and of the label-set macros' shared ones a measure may take
FORWARDED = ("beta", "zero_division", "average", "weights", "n_bins")
#: Poisson(1)'s CDF up to k = 24 (1 - P(X <= 24) is below 1e-25)
POISSON_ONE_TOP = 24
#: the buckets of the uniform in the inverse CDF of Poisson(m) (:func:`buckets`)
BUCKETS = 4096
#: 2^53: a 53-bit integer over it is a uniform double in [0, 1)
TWO_53 = 9007199254740992


def by_list(q: Qualify) -> str:
    """SQL: the ``by`` names as DuckDB compares identifiers (every resample macro reads them so)."""
    return CC.by_lowered(q)


def source_sql(
    q: Qualify, named: list[tuple[str, str]], func: str, typed: dict[str, str] | None = None
) -> str:
    """:func:`checked_source_sql` of resample macro ``func`` (SQL text): the ``named`` columns
    (``typed``: the types of stand-ins), and the ``by`` names, checked (none named as an
    output column)."""
    outputs = FRONT.BOOTSTRAP_COLUMNS if "bootstrap" in func else FRONT.COMPARE_COLUMNS
    by_check = CC.check_by(q, func, outputs)
    return checked_source_sql(q, named, func, CC.by_names(q), typed, by_check)


#: SQL: the tail of each side of the percentile interval (a constant: quantile_cont takes no
#: column; a bad confidence fails in the settings row first)
TAIL = "(1 - coalesce(least(greatest(TRY_CAST(confidence AS DOUBLE), 0), 1), 0.95)) / 2"


def weight_sql(q: Qualify, func: str) -> str:
    """SQL: a row's checked weight from ``w0`` (1.0 without ``sample_weight``); ``func`` the
    SQL of the function's name in the message."""
    return (
        f"CASE WHEN {SAMPLE_WEIGHT} IS NULL THEN 1.0::DOUBLE "
        f"ELSE {q('_mlsql_weight')}(w0, {func}) END"
    )


def macro_name(func: str, kind: str) -> str:
    """The internal table macro of ``func`` (bootstrap, compare) for measures of ``kind``."""
    return f"_mlsql_{func}_{kind}"


def poisson_one(u: str) -> str:
    """SQL: the Poisson(1) draw of the uniform ``u``, the smallest k whose CDF is >= u.

    Examples
    --------
    >>> poisson_one("u")[:52]
    'CASE WHEN u <= 0.36787944117144233 THEN 0 WHEN u <= '
    """
    pmf = [math.exp(-1) / math.factorial(k) for k in range(POISSON_ONE_TOP + 1)]
    cdf = [math.fsum(pmf[: k + 1]) / math.fsum(pmf) for k in range(POISSON_ONE_TOP)]
    arms = " ".join(f"WHEN {u} <= {c!r} THEN {k}" for k, c in enumerate(cdf))
    return f"CASE {arms} ELSE {POISSON_ONE_TOP} END"


def poisson_one_macro() -> Macro:
    """``_mlsql_poisson_one(u)``: :func:`poisson_one` of ``u`` as a macro, written once."""
    return Macro(
        "resample.sql",
        "_mlsql_poisson_one",
        ("u",),
        poisson_one("u"),
        f"The Poisson(1) draw of the uniform u: the smallest k whose CDF is >= u (k <= "
        f"{POISSON_ONE_TOP}).",
        public=False,
    )


def _values(q: Qualify, kind: str, func: str) -> tuple[str, str]:
    """SQL of a row's (actual, predicted) as the tuple holds them, from ``a0`` and ``p0``:
    as they are, or for label lists checked (mlsql's message on bad lists) and made the
    sorted distinct labels, so that rows with the same label sets are one tuple."""
    if kind != "label_lists":
        return "a0", "p0"
    a0, p0 = (label_list(q, x, func, f"'{r}'") for x, r in (("a0", "actual"), ("p0", "predicted")))
    checked = f"{q('_mlsql_checked_label_lists')}({a0}, {p0}, {func}, 'actual', 'predicted')"
    return f"list_sort(list_distinct({checked}))", f"list_sort(list_distinct({p0}))"


def _uniform(columns: str) -> str:
    return f"((hash({columns}) >> 11)::DOUBLE + 0.5) / {TWO_53}"


def _call(q: Qualify, name: str, actual: str, predicted: str, weight: str) -> str:
    """SQL: the weighted aggregate macro of measure ``name``, with the parameters it takes."""
    measures()
    params = REGISTRY[name].params
    taken = [p.name for p in params if p.name in FORWARDED]
    named = "".join(f", {p} := {p}" for p in taken)
    # the others at their defaults, by name: a positional weight could also fill the first of
    # them (brier_score_loss(a, p, kw) matched its scale_by_half overload as well)
    named += "".join(
        f", {p.name} := {lit(p.default)}"
        for p in params
        if p.name not in FORWARDED and p.name != "by" and p.default is not None
    )
    return f"CAST({q(name)}({actual}, {predicted}, {weight}{named}) AS DOUBLE)"


#: the SQL of the label-set measures over the label lists of ``weighed``, given its keys:
#: (CTEs, the branches of one row (keys, r, measure, x) per asked measure)
SetBranches = Callable[[str], tuple[str, str]]


def _measured(q: Qualify, kind: str, keys: str, func: str, sets: SetBranches | None) -> str:
    """SQL: one row (keys, r, measure, x) per asked measure of ``kind`` and key, from ``weighed``
    (label lists: also the label-set measures of ``sets``)."""
    if kind == "label_lists":
        return _label_averages(q, keys, func, sets)
    return "\n        UNION ALL\n        ".join(
        f"SELECT {keys}, r, {lit(name)} AS measure, {_call(q, name, 'a', 'p', 'kw')} AS x "
        f"FROM weighed WHERE list_contains(measures, {lit(name)}) GROUP BY {keys}, r"
        for name in KINDS[kind]
    )


def _label_averages(q: Qualify, keys: str, func: str, sets: SetBranches | None) -> str:
    """SQL: the macro and weighted averages of the label lists of ``weighed`` per key and r,
    one row (keys, r, measure, x) per asked measure, by the formulas of multilabel_report.

    Per key and resample, each label's weighted tp, |A| and |P| (the lists' labels, each
    row's intersection), the labels of the resample those with a count above 0 (as the
    Python call), n_rows the weight of the known rows; then
    :func:`mlsql.measures.label_based.label_values` per label and
    :func:`~mlsql.measures.label_based.label_aggregates` and
    :func:`~mlsql.measures.label_based.group_columns` per key and resample, the averages
    over labels summed in a fixed order. The counts are plain sums: exact where the weights
    are whole (no sample_weight), else rounded in the order DuckDB's threads add them (an
    ordered sum kept every cell: 11.5 GB at 100k rows x 1,000 resamples).
    """
    ops = FixedOrderOps(q)
    per_label = LB.label_values(ops, COUNTS, B, Z)
    by_label = LB.label_aggregates(ops, Sql, Sql("any_value(zd)"))
    by_group = LB.group_columns(ops, Sql, B, Z)
    zd = f"{q('_mlsql_check_zero_division')}(zero_division, {func})"
    beta = f"coalesce({q('_mlsql_check_table_beta')}(beta, {func}), 1.0)"
    columns = ",\n                   ".join(f"{e} AS {n}" for n, e in per_label.items())
    aggregates = ",\n                   ".join(f"{e} AS {n}" for n, e in by_label.items())
    measures = "\n            UNION ALL\n            ".join(
        f"SELECT {keys}, r, {lit(name)} AS measure, "
        f"CAST({by_group.get(name, name)} AS DOUBLE) AS x "
        f"FROM aggregated WHERE list_contains(measures, {lit(name)})"
        for name in KINDS["label_lists"]
    )
    on = " AND ".join(f"c.{c} IS NOT DISTINCT FROM n.{c}" for c in [*keys.split(", "), "r"])
    set_ctes, set_branches = sets(keys) if sets is not None else ("", "")
    if sets is not None:
        set_ctes = f",\n        {set_ctes}"
        measures += f"\n            UNION ALL\n            {set_branches}"
    return f"""WITH cells AS (
            SELECT {keys}, r, kw, unnest(a) AS label, 1 AS f FROM weighed WHERE a IS NOT NULL AND p IS NOT NULL
            UNION ALL
            SELECT {keys}, r, kw, unnest(p) AS label, 2 AS f FROM weighed WHERE a IS NOT NULL AND p IS NOT NULL
            UNION ALL
            SELECT {keys}, r, kw, unnest(list_intersect(a, p)) AS label, 3 AS f
            FROM weighed WHERE a IS NOT NULL AND p IS NOT NULL),
        n AS (
            SELECT {keys}, r, sum(kw) AS n_rows FROM weighed
            WHERE a IS NOT NULL AND p IS NOT NULL GROUP BY {keys}, r),
        k AS (
            SELECT c.*, n.n_rows, {zd} AS zd, {beta} AS b FROM (
                SELECT {keys}, r, label, tp, n_predicted - tp AS fp, n_actual - tp AS fn FROM (
                    SELECT {keys}, r, label,
                           coalesce(sum(kw) FILTER (WHERE f = 3), 0) AS tp,
                           coalesce(sum(kw) FILTER (WHERE f = 1), 0) AS n_actual,
                           coalesce(sum(kw) FILTER (WHERE f = 2), 0) AS n_predicted
                    FROM cells GROUP BY {keys}, r, label)
                WHERE tp + fp + fn > 0) c
            JOIN n ON {on}),
        label_values AS (
            SELECT {keys}, r, n_rows, zd, b,
                   {columns}
            FROM k),
        aggregated AS (
            SELECT {keys}, r, any_value(b) AS b, any_value(zd) AS zd,
                   {aggregates}
            FROM label_values GROUP BY {keys}, r){set_ctes}
            {measures}"""


def _drawn(q: Qualify, tuples: str, keep: str) -> str:
    """SQL of the draws of ``tuples`` (columns m and u over resamples r), k > 0 only: Poisson(1)
    by :func:`poisson_one`, Poisson(m > 1) by an equi-join on ``cdf`` (:func:`buckets`);
    ``keep`` the columns carried along, k the draw."""
    d = ", ".join("d." + c.strip() for c in keep.split(","))
    return f"""SELECT {keep}, r, {q("_mlsql_poisson_one")}(u) AS k FROM {tuples} WHERE m = 1 AND u > {math.exp(-1)!r}
        UNION ALL
        SELECT {d}, d.r, c.k FROM (FROM {tuples} WHERE m > 1) d JOIN cdf c
        ON d.m = c.m AND floor(d.u * {BUCKETS})::BIGINT = c.b AND d.u > c.lo AND d.u <= c.hi
        WHERE c.k > 0"""


def buckets(
    q: Qualify,
    name: str = "_mlsql_poisson_buckets",
    cdf: str = "_mlsql_poisson_cdf",
    law: str = "Poisson(m)",
) -> Macro:
    """``_mlsql_poisson_buckets(ms)``: Poisson(m)'s inverse CDF as rows (m, b, k, lo, hi) for an
    equi-join: k is the draw of a uniform u with lo < u <= hi, and each k's interval is listed
    under every bucket b = floor(u x BUCKETS) it meets. ``name``, ``cdf`` and ``law``: the same
    of another law's CDF macro (m, k, cdf) (``_mlsql_half_binomial_buckets``: Binomial(m, 1/2),
    Fisher's draws).

    An ASOF join on the CDF would do, but DuckDB turns an ASOF join whose left side it
    estimates small into a nested loop over the CDF (``asof_loop_join_threshold``): 7 s for
    49 tuples x 1000 resamples against 2,900 rows of CDF. The join on (m, b) meets one or two
    rows per draw.
    """
    return Macro(
        "resample.sql",
        name,
        ("ms",),
        f"""SELECT m, unnest(range(floor(greatest(lo, 0) * {BUCKETS})::BIGINT,
                           floor(cdf * {BUCKETS})::BIGINT + 1)) AS b, k, lo, cdf AS hi
        FROM (SELECT m, k, cdf, coalesce(lag(cdf) OVER (PARTITION BY m ORDER BY k), -1.0) AS lo
              FROM {q(cdf)}(ms))""",
        f"{law}'s inverse CDF for each m of ms as (m, b, k, lo, hi): k is the draw of u "
        f"with lo < u <= hi, listed under each bucket b = floor(u x {BUCKETS}) it meets.",
        public=False,
        table=True,
    )


def _tail_interval(tail: str) -> str:
    return f"quantile_cont(x, [{tail}, 1 - {tail}]) FILTER (WHERE isfinite(x))"


def bootstrap(
    q: Qualify,
    kind: str,
    settings: str,
    signature: tuple[str, ...],
    sets: SetBranches | None = None,
) -> Macro:
    """The table macro ``_mlsql_bootstrap_<kind>``: ``bootstrap`` of measures of ``kind``.

    ``settings`` is the SQL of its one row of checked settings (n, c, s, ms), shared with the
    label-set macro; ``sets`` the label-set measures of a call on label lists.
    """
    func = str(lit("bootstrap"))
    by = by_list(q)
    named = [
        ("actual", "actual"),
        ("predicted", "predicted"),
        (SAMPLE_WEIGHT, name_or(SAMPLE_WEIGHT, "actual")),
    ]
    source = source_sql(q, named, func)
    weight = weight_sql(q, func)
    tail = TAIL
    a, p = _values(q, kind, func)
    body = f"""WITH settings AS ({settings}),
    rows AS (
        SELECT struct_pack(*COLUMNS(lambda c: c = '{ALL}' OR list_contains({by}, lower(c)))) AS g,
               {pick_sql(q, "actual")} AS a0,
               {pick_sql(q, "predicted")} AS p0,
               {pick_sql(q, SAMPLE_WEIGHT)} AS w0
        FROM {source}),
    tuples AS MATERIALIZED (  -- the one pass over the source: each distinct (actual, predicted, weight)
        SELECT g, a, p, w, count(*) AS m
        FROM (SELECT g, {a} AS a, {p} AS p, {weight} AS w FROM rows) CROSS JOIN settings
        WHERE settings.ms IS NOT NULL
        GROUP BY ALL),
    cdf AS (FROM {q("_mlsql_poisson_buckets")}((SELECT list(DISTINCT m) FROM tuples WHERE m > 1))),
    draws AS NOT MATERIALIZED (
        SELECT t.*, r, {_uniform("settings.s, r, t.g, t.a, t.p, t.w")} AS u
        FROM tuples t CROSS JOIN settings CROSS JOIN range(settings.n) AS resample(r)),
    drawn AS NOT MATERIALIZED ({_drawn(q, "draws", "g, a, p, w")}),
    weighed AS NOT MATERIALIZED (  -- r NULL: the data, each tuple weighing its rows m
        SELECT g, r, a, p, w * k AS kw FROM drawn
        UNION ALL
        SELECT g, NULL::BIGINT AS r, a, p, w * m AS kw FROM tuples),
    measured AS (
        {_measured(q, kind, "g", func, sets)}),
    wanted AS (
        SELECT i, settings.ms[i] AS measure
        FROM settings CROSS JOIN range(1, len(settings.ms) + 1) AS position(i)
        WHERE settings.c IS NOT NULL),
    intervals AS (
        SELECT g, measure, {_tail_interval(tail)} AS q,
               stddev_samp(x ORDER BY x) FILTER (WHERE isfinite(x)) AS se,
               count(x) FILTER (WHERE isfinite(x)) AS kept
        FROM measured CROSS JOIN settings WHERE r IS NOT NULL GROUP BY g, measure)
    SELECT COLUMNS(lambda c: c <> '{ALL}' AND NOT starts_with(c, '__mlsql_')) FROM (
        SELECT unnest(e.g), w.measure AS measure, e.x AS estimate,
               CASE WHEN iv.kept >= 2 THEN iv.q[1] END AS low,
               CASE WHEN iv.kept >= 2 THEN iv.q[2] END AS high,
               CASE WHEN iv.kept >= 2 THEN iv.se END AS std_error,
               0 AS __mlsql_n, w.i AS __mlsql_i
        FROM (FROM measured WHERE r IS NULL) e JOIN wanted w ON w.measure = e.measure
        LEFT JOIN intervals iv ON iv.g = e.g AND iv.measure = e.measure)
    ORDER BY COLUMNS(lambda c: c = '__mlsql_n' OR list_contains({by}, lower(c))) NULLS FIRST,
             __mlsql_i"""
    return Macro(
        "resample.sql",
        macro_name("bootstrap", kind),
        signature,
        body,
        f"bootstrap of the measures of {kind} ({', '.join(KINDS[kind])}): one Poisson(m) draw "
        "per distinct (actual, predicted, weight) seen m times; bootstrap calls it.",
        public=False,
        table=True,
    )


#: SQL of each distinct pair's (g, mo, measure, d, m, bw, xw, pid) from ``paired``'s rows r = -pid
_PAIR_DIFFS = """SELECT t.g, t.mo, x.measure, x.xx - x.bx AS d, t.m, t.bw, t.xw, t.pid
            FROM paired x JOIN pairs t ON t.pid = -x.r WHERE x.r < 0"""
#: the tests whose per-pair values (r = -pid) the macros measure
ROW_TESTS = "('student', 'fisher')"


def student(q: Qualify, key: str, diffs: str) -> str:
    """SQL of the CTEs ``student`` (g, mo, ``key``, p: Student's paired t test p-value) and
    ``weights_checked`` (NULL, else the Python call's error on a weight other than 0 or 1,
    naming the test), as :mod:`mlsql._resample.paired` computes them; ``diffs`` gives each
    distinct pair's (g, mo, ``key``, d, m, bw, xw, pid): the model row's value minus the
    baseline row's as one row alone, its ids, both weights and the pair. Pairs with an
    undefined d or a weight of 0 (or NULL) on either side are left out (``kept``, which
    :func:`fisher` reads too); the variance is two-pass about the mean."""
    odd = f"{q('_mlsql_repr')}(min(w))"
    template = PAIRED.WEIGHT_MESSAGE.replace("{test!r}", "{}").replace("{got!r}", "{}")
    message = sql_message(template, f"{q('_mlsql_repr')}(any_value(te))", odd)
    return f"""kept AS (
        SELECT g, mo, {key}, d, m * (coalesce(bw, 0) > 0)::INT * (coalesce(xw, 0) > 0)::INT AS m, pid
        FROM ({diffs}) WHERE isfinite(d)),
    centred AS (
        SELECT g, mo, {key}, d, m, sum(m * d) OVER w / sum(m) OVER w AS mean, sum(m) OVER w AS n
        FROM kept WHERE m > 0 WINDOW w AS (PARTITION BY g, mo, {key})),
    student AS (
        SELECT g, mo, {key},
               CASE WHEN any_value(n) < 2 THEN NULL
                    WHEN sum(m * (d - mean) ^ 2) = 0 THEN CASE WHEN any_value(mean) <> 0 THEN 0.0 END
                    ELSE {q("_mlsql_t_two_sided")}(
                        any_value(mean) / sqrt(sum(m * (d - mean) ^ 2) / (any_value(n) - 1) / any_value(n)),
                        any_value(n) - 1) END AS p
        FROM centred GROUP BY g, mo, {key}),
    weights_checked AS (
        SELECT CASE WHEN count(w) > 0 THEN error({message}) END AS ok
        FROM (SELECT CAST(coalesce(bw, 0) AS DOUBLE) AS w FROM pairs
              UNION ALL SELECT CAST(coalesce(xw, 0) AS DOUBLE) FROM pairs)
        CROSS JOIN settings WHERE settings.te IN {ROW_TESTS} AND w <> 0 AND w <> 1)"""


def fisher(q: Qualify, key: str, pair: list[str]) -> str:
    """SQL of the CTE ``fisher`` (g, mo, ``key``, p: Fisher's randomization test p-value of the
    pairs :func:`student` kept), as :mod:`mlsql._resample.paired` computes it but from the
    macro's own draws: per (seed, permutation r, group, model, pair values ``pair`` of
    ``pairs``), K ~ Binomial(m, 1/2) of the uniform of their hash (tagged 'fisher'), and the
    pair's m ids flip 2 K - m of their sign net. m = 1 is u > 1/2; m > 1 the inverse CDF of
    ``_mlsql_half_binomial_cdf`` by the equi-join of ``_mlsql_half_binomial_buckets``: the
    whole support up to m = 192; beyond, as the bootstrap's Poisson(m), the tails past 12
    standard deviations + 12 (below 1e-25) left out; the CDF within 1e-14 of scipy's up to
    m = 500 (lgamma's rounding: 7e-11 at m = 1e6). p = the share of the n_resamples
    permutations with |Σ (2K - m) d| >= |Σ m d| - 1e-12 Σ m |d| (ranx's share, no +1); NULL
    without a kept pair."""
    hashed = _uniform("st.s, r, t.g, t.mo, " + ", ".join("t." + c for c in pair) + ", 'fisher'")
    return f"""binomial AS (
        FROM {q("_mlsql_half_binomial_buckets")}((
            SELECT list(DISTINCT m) FROM pairs CROSS JOIN settings WHERE m > 1 AND settings.te = 'fisher'))),
    fisher_draws AS NOT MATERIALIZED (  -- one uniform per pair and permutation
        SELECT t.pid, t.m, r, {hashed} AS u
        FROM pairs t CROSS JOIN settings st CROSS JOIN checked ck CROSS JOIN range(st.n) AS permutation(r)
        WHERE ck.ok IS NULL AND st.te = 'fisher'),
    flips AS (  -- each pair's net sign flips 2 K - m, K ~ Binomial(m, 1/2)
        SELECT pid, r, CASE WHEN u > 0.5 THEN 1 ELSE -1 END AS f FROM fisher_draws WHERE m = 1
        UNION ALL
        SELECT d.pid, d.r, 2 * c.k - d.m AS f FROM (FROM fisher_draws WHERE m > 1) d JOIN binomial c
        ON d.m = c.m AND floor(d.u * {BUCKETS})::BIGINT = c.b AND d.u > c.lo AND d.u <= c.hi),
    fisher_observed AS (
        SELECT g, mo, {key}, abs(sum(m * d)) AS o, 1e-12 * sum(m * abs(d)) AS slack
        FROM kept CROSS JOIN settings WHERE m > 0 AND settings.te = 'fisher' GROUP BY g, mo, {key}),
    fisher_sums AS (
        SELECT k.g, k.mo, k.{key}, f.r, sum(f.f * k.d) AS s
        FROM kept k JOIN flips f ON f.pid = k.pid WHERE k.m > 0 GROUP BY k.g, k.mo, k.{key}, f.r),
    fisher AS (
        SELECT o.g, o.mo, o.{key},
               count(*) FILTER (WHERE abs(s.s) >= o.o - o.slack) / any_value(st.n) AS p
        FROM fisher_observed o JOIN fisher_sums s
        ON s.g IS NOT DISTINCT FROM o.g AND s.mo = o.mo AND s.{key} = o.{key}
        CROSS JOIN settings st GROUP BY o.g, o.mo, o.{key})"""


def compare(
    q: Qualify,
    kind: str,
    settings: str,
    checks: dict[str, str],
    signature: tuple[str, ...],
    sets: SetBranches | None = None,
) -> Macro:
    """The table macro ``_mlsql_compare_<kind>``: ``compare`` of measures of ``kind``.

    ``settings`` and ``checks`` (SQL of the settings row, and of the CTEs ``models``,
    ``unpaired``, ``checked`` and their needs, by name) are the label-set macro's; ``sets``
    the label-set measures of a call on label lists.
    """
    func = str(lit("compare"))
    by = by_list(q)
    named = [
        ("actual", "actual"),
        ("predicted", "predicted"),
        ("model", "model"),
        ("id", "id"),
        (SAMPLE_WEIGHT, name_or(SAMPLE_WEIGHT, "actual")),
    ]
    source = source_sql(q, named, func)
    weight = weight_sql(q, func)
    tail = TAIL
    zero_one = "[" + ", ".join(str(lit(n)) for n in taken(kind) if n in M.ZERO_ONE) + "]"
    a, p = _values(q, kind, func)
    pair = ["ba", "bp", "bw", "xa", "xp", "xw"]
    body = f"""WITH settings AS ({settings}),
    rows AS (
        SELECT struct_pack(*COLUMNS(lambda c: c = '{ALL}' OR list_contains({by}, lower(c)))) AS g,
               {pick_sql(q, "model")} AS mo,
               {pick_sql(q, "id")} AS i0,
               {pick_sql(q, "actual")} AS a0,
               {pick_sql(q, "predicted")} AS p0,
               {pick_sql(q, SAMPLE_WEIGHT)} AS w0
        FROM {source}),
    stats AS MATERIALIZED (  -- each row's values, and whether it is the baseline's
        SELECT g, mo, i0, {checks["base"]} AS base, {a} AS a, {p} AS p, {weight} AS w
        FROM rows CROSS JOIN settings WHERE settings.ms IS NOT NULL),
    {checks["models"]},
    pairs AS MATERIALIZED (  -- per group and model: the distinct pairs (the baseline row's
                             -- values, the model row's) of an id, m ids each; pid names a pair
                             -- within this query only
        SELECT *, row_number() OVER () AS pid FROM (
            SELECT x.g, x.mo, b.a AS ba, b.p AS bp, b.w AS bw, x.a AS xa, x.p AS xp, x.w AS xw,
                   count(*) AS m
            FROM stats x JOIN stats b ON x.i0 = b.i0 AND x.g IS NOT DISTINCT FROM b.g
            WHERE b.base AND NOT x.base AND x.mo IS NOT NULL
            GROUP BY ALL)),
    {checks["unpaired"]},
    {checks["checked"]},
    cdf AS (FROM {q("_mlsql_poisson_buckets")}((SELECT list(DISTINCT m) FROM pairs WHERE m > 1))),
    draws AS NOT MATERIALIZED (  -- one draw per pair and resample, from the hash of the pair's values
        SELECT t.*, r, {_uniform("settings.s, r, t.g, t.mo, " + ", ".join("t." + c for c in pair))} AS u
        FROM pairs t CROSS JOIN settings CROSS JOIN checked ck CROSS JOIN range(settings.n) AS resample(r)
        WHERE ck.ok IS NULL),
    drawn AS NOT MATERIALIZED ({_drawn(q, "draws", "g, mo, " + ", ".join(pair))}),
    weighed AS NOT MATERIALIZED (  -- both sides of a pair weigh the same k (side 0 the baseline
                                   -- row's values, side 1 the model row's); r NULL: the data (k = m)
        SELECT g, mo, 0 AS side, r, ba AS a, bp AS p, bw * k AS kw FROM drawn
        UNION ALL
        SELECT g, mo, 1 AS side, r, xa AS a, xp AS p, xw * k AS kw FROM drawn
        UNION ALL
        SELECT g, mo, 0 AS side, NULL::BIGINT AS r, ba AS a, bp AS p, bw * m AS kw FROM pairs
        CROSS JOIN checked ck WHERE ck.ok IS NULL
        UNION ALL
        SELECT g, mo, 1 AS side, NULL::BIGINT AS r, xa AS a, xp AS p, xw * m AS kw FROM pairs
        CROSS JOIN checked ck WHERE ck.ok IS NULL
        UNION ALL  -- tests 'student' and 'fisher': each pair's sides as one row alone (r = -pid)
        SELECT g, mo, side, -pid AS r, CASE side WHEN 0 THEN ba ELSE xa END AS a,
               CASE side WHEN 0 THEN bp ELSE xp END AS p, 1.0 AS kw
        FROM pairs CROSS JOIN checked ck CROSS JOIN settings CROSS JOIN range(2) AS sides(side)
        WHERE ck.ok IS NULL AND settings.te IN {ROW_TESTS}),
    measured AS (
        {_measured(q, kind, "g, mo, side", func, sets)}),
    paired AS (  -- each resample's value (r NULL: the data's) of the baseline (bx) and the model (xx)
        SELECT x.g, x.mo, x.r, x.measure, b.x AS bx, x.x AS xx
        FROM measured x JOIN measured b
        ON b.g IS NOT DISTINCT FROM x.g AND b.mo = x.mo AND b.r IS NOT DISTINCT FROM x.r
           AND b.measure = x.measure
        WHERE x.side = 1 AND b.side = 0),
    wanted AS (
        SELECT i, settings.ms[i] AS measure, list_contains({zero_one}, settings.ms[i]) AS zero_one
        FROM settings CROSS JOIN range(1, len(settings.ms) + 1) AS position(i)
        WHERE settings.c IS NOT NULL AND settings.du IS NOT NULL AND settings.te IS NOT NULL),
    intervals AS (  -- the resampled differences, model - baseline
        SELECT g, mo, measure,
               quantile_cont(d, [{tail}, 1 - {tail}]) FILTER (WHERE isfinite(d)) AS q,
               count(d) FILTER (WHERE isfinite(d)) AS kept,
               count(d) FILTER (WHERE isfinite(d) AND d <= 0) AS below,
               count(d) FILTER (WHERE isfinite(d) AND d >= 0) AS above
        FROM (SELECT g, mo, measure, xx - bx AS d FROM paired WHERE r >= 0)
        CROSS JOIN settings GROUP BY g, mo, measure),
    {student(q, "measure", _PAIR_DIFFS)},
    {fisher(q, "measure", pair)},
    mcnemar AS (  -- McNemar's exact test of the ids right for one side only (weights count as ids)
        SELECT g, mo,
               CASE WHEN bool_and(bm = round(bm) AND bm = xm) FILTER (WHERE rb <> rx) IS NOT false
                    THEN {q("_mlsql_mcnemar_p")}(
                        coalesce(sum(bm ORDER BY bm) FILTER (WHERE rb AND NOT rx), 0),
                        coalesce(sum(bm ORDER BY bm) FILTER (WHERE rx AND NOT rb), 0)) END AS p
        FROM (SELECT g, mo, m * coalesce(bw, 0) AS bm, m * coalesce(xw, 0) AS xm,
                     {"ba = bp" if zero_one != "[]" else "NULL::BOOLEAN"} AS rb,
                     {"xa = xp" if zero_one != "[]" else "NULL::BOOLEAN"} AS rx FROM pairs)
        GROUP BY g, mo)
    SELECT COLUMNS(lambda c: c <> '{ALL}' AND NOT starts_with(c, '__mlsql_')) FROM (
        SELECT unnest(e.g), e.mo AS model, w.measure AS measure,
               e.bx AS baseline_estimate, e.xx AS estimate, e.xx - e.bx AS difference,
               CASE WHEN iv.kept >= 2 THEN iv.q[1] END AS low,
               CASE WHEN iv.kept >= 2 THEN iv.q[2] END AS high,
               CASE WHEN st0.te = 'student' THEN st.p
                    WHEN st0.te = 'fisher' THEN fi.p
                    WHEN iv.kept >= 1 THEN least(1.0, 2 * least((1 + iv.below) / (iv.kept + 1),
                                                             (1 + iv.above) / (iv.kept + 1))) END AS p_value,
               CASE WHEN w.zero_one THEN mc.p END AS mcnemar_p_value,
               0 AS __mlsql_n, e.mo AS __mlsql_model, w.i AS __mlsql_i
        FROM (FROM paired WHERE r IS NULL) e JOIN wanted w ON w.measure = e.measure
        CROSS JOIN settings st0 CROSS JOIN weights_checked wc
        LEFT JOIN intervals iv ON iv.g IS NOT DISTINCT FROM e.g AND iv.mo = e.mo AND iv.measure = e.measure
        LEFT JOIN student st ON st.g IS NOT DISTINCT FROM e.g AND st.mo = e.mo AND st.measure = e.measure
        LEFT JOIN fisher fi ON fi.g IS NOT DISTINCT FROM e.g AND fi.mo = e.mo AND fi.measure = e.measure
        LEFT JOIN mcnemar mc ON mc.g IS NOT DISTINCT FROM e.g AND mc.mo = e.mo
        WHERE wc.ok IS NULL)
    ORDER BY COLUMNS(lambda c: c = '__mlsql_n' OR list_contains({by}, lower(c))) NULLS FIRST,
             __mlsql_model, __mlsql_i"""
    return Macro(
        "resample.sql",
        macro_name("compare", kind),
        signature,
        body,
        f"compare on the measures of {kind} (those {macro_name('bootstrap', kind)} lists): one "
        "Poisson(m) draw per distinct pair of both rows' (actual, predicted, weight) seen m "
        "times; compare calls it.",
        public=False,
        table=True,
    )


def literal_macro() -> Macro:
    """``_mlsql_literal(x)``: SQL text that reads back as ``x``, its value and its type.

    The text of the value, quoted, cast to the value's type: ``CAST('0.95' AS
    DECIMAL(3,2))``; lists and text round-trip through DuckDB's cast from text whatever
    they hold (quotes, commas, brackets). A type whose name holds a quote (an ENUM of such
    values) is cast to VARCHAR; NULL is ``NULL``.
    """
    text = "replace(CAST(x AS VARCHAR), chr(39), chr(39) || chr(39))"
    kind = "CASE WHEN contains(typeof(x), chr(39)) THEN 'VARCHAR' ELSE typeof(x) END"
    return Macro(
        "resample.sql",
        "_mlsql_literal",
        ("x",),
        f"CASE WHEN x IS NULL THEN 'NULL' ELSE 'CAST(' || chr(39) || {text} || chr(39) || ' AS ' "
        f"|| {kind} || ')' END",
        "SQL text that reads back as x: its text quoted, cast to its type ('NULL' for NULL).",
        public=False,
    )


def dispatched(q: Qualify, func: str, signature: tuple[str, ...], description: str) -> Macro:
    """The public table macro ``func``: the macro of the first measure's kind, by ``query()``;
    a list with a macro or weighted average of label lists goes to the label lists' macro,
    which also resamples the label-set measures (one call, any mix of them).

    Measures that are not a list of names, or whose first is of no kind here, go to
    :func:`refused`, which says what is wrong.
    """
    first = "json_extract_string(to_json(measures), '$[0]')"
    # the names through JSON: this arm binds whatever measures holds (a name, numbers)
    names = "CAST(json_extract_string(to_json(measures), '$[*]') AS VARCHAR[])"
    averages = f"len(list_filter({names}, lambda m: list_contains({_names('label_lists')}, m))) > 0"
    lists = f"WHEN {averages} THEN {lit(str(q(macro_name(func, 'label_lists'))))} "
    arms = lists + " ".join(
        f"WHEN list_contains({_names(kind)}, {first}) THEN {lit(str(q(macro_name(func, kind))))}"
        for kind in KINDS
        if kind != "label_lists"
    )
    sets = f"list_contains({_names('label_sets')}, {first})"
    listed = "starts_with(typeof(measures), 'VARCHAR[')"
    target = (
        f"CASE WHEN NOT {listed} THEN {lit(str(q(macro_name(func, 'not_a_list'))))} {arms} "
        f"WHEN {sets} THEN {lit(str(q(macro_name(func, 'label_sets'))))} "
        f"ELSE {lit(str(q(macro_name(func, 'refused'))))} END"
    )
    args = []
    for p in signature:
        name = p.split(" := ")[0]
        value = f"{q('_mlsql_literal')}({name})"
        args.append(f"' || {value} || '" if " := " not in p else f"{name} := ' || {value} || '")
    text = f"'FROM ' || {target} || '({', '.join(args)})'"
    return Macro("resample.sql", func, signature, f"FROM query({text})", description, table=True)


def _names(kind: str) -> str:
    return (
        "["
        + ", ".join(str(lit(n)) for n in {**KINDS, "label_sets": M.LABEL_SET_MEASURES}[kind])
        + "]"
    )


def refused(func: str, settings: str, entry: str, signature: tuple[str, ...]) -> list[Macro]:
    """``_mlsql_<func>_refused``: the settings row alone, whose check of ``measures`` raises
    (a list of names whose first is none it resamples); ``_mlsql_<func>_not_a_list``: the
    error ``entry`` (SQL) on measures that are no list of names. Neither reads a column, so
    both bind on any source."""
    return [
        Macro(
            "resample.sql",
            macro_name(func, "refused"),
            signature,
            f"FROM ({settings})",
            f"{func} on a list of measures whose first it does not resample: its error.",
            public=False,
            table=True,
        ),
        Macro(
            "resample.sql",
            macro_name(func, "not_a_list"),
            signature,
            f"SELECT error({entry}) AS refused",
            f"{func} on measures that are not a list of names: its error.",
            public=False,
            table=True,
        ),
    ]


#: the message on a measure only the Python calls resample (``{}``): the class-score
#: measures, whose tuple is a row's numbers computed from its class probabilities
PYTHON_ONLY_MESSAGE = (
    "The SQL table macro {func} does not resample {name}; the Python call mlsql.{func} "
    "(and those of Polars and Spark) does."
)


def unsupported_message(func: str, name: str = "{}") -> str:
    """The message on a measure no call resamples (the first, ``name``): the Python call's."""
    allowed = (
        *M.LABEL_SET_MEASURES,
        *(n for ms in KINDS.values() for n in ms),
        *NUM.CLASS_SCORE_MEASURES,
    )
    return M.UNSUPPORTED_MESSAGE.format(func=func, allowed=", ".join(allowed), name=name)


def taken(kind: str) -> tuple[str, ...]:
    """The measures the macro of ``kind`` takes: its own, and for label lists the label-set
    measures too."""
    if kind == "label_lists":
        return (*KINDS[kind], *M.LABEL_SET_MEASURES)
    return KINDS[kind]
