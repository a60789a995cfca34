"""``bootstrap`` and ``compare`` as DuckDB SQL table macros: exact Poisson bootstrap, alone
and paired. The label-set measures are resampled here; one label per row, numbers and scores
by :mod:`mlsql._duckdb.resample_values`, whose public macros pick the kind.

``FROM bootstrap('preds', 'actual', 'predicted', measures := ['micro_f1'], "by" := ['model'])``
gives what the Python call ``mlsql.bootstrap`` gives (one row per group and
measure: estimate, percentile interval, std error), in SQL alone, for the
measures of label lists that are functions of each row's (tp, |A|, |P|):
:data:`mlsql._resample.measures.LABEL_SET_MEASURES`.

The method, in the macro's CTEs:

1. ``tuples``: one GROUP BY of each row's statistic tuple (tp, |A|, |P|, and
   its checked ``sample_weight``) per group, with m its number of rows. The
   only pass over the source.
2. Rows with equal tuples are exchangeable and the sum of m Poisson(1) weights
   is Poisson(m): one Poisson(m) draw k per (tuple, resample). Its uniform u
   comes from DuckDB's ``hash`` of (seed, resample, group, tuple): counter
   based, so the same seed gives the same draws on any thread and run.
3. ``cdf``: for each distinct m, Poisson(m)'s CDF over k in
   [max(0, m - 12 sqrt(m) - 12), m + 12 sqrt(m) + 12] from the pmf
   exp(k ln m - m - lgamma(k + 1)), normalised by its total; the mass left
   out is below 1e-25, so the draw is exact up to double rounding. The draw is
   the smallest k whose CDF is >= u (an ASOF JOIN).
4. Per resample: every measure from the tuples weighed by k x weight, by the
   registry's own formulas (the weighted measures' :mod:`mlsql._weights`),
   summed in a fixed order so a result does not depend on threads. The
   estimate is the same with k = m: the measure on the data.
5. low, high: the percentile interval of the defined resampled values (NULL and
   NaN left out), as :func:`mlsql._resample.run.interval`; std_error their
   sample standard deviation.

Its cost is one scan of the rows plus (distinct tuples x resamples).

``compare`` (:func:`_compare`) is the paired form, as the Python call
``mlsql.compare``: every other model's rows are joined with the baseline's on
``id`` (within the group), and the tuple is the *pair* (the baseline row's
(tp, |A|, |P|, weight), the model row's). Ids with the same pair are
exchangeable, so one Poisson(m) draw per (seed, resample, group, model, pair)
is exact; both sides of the pair weigh that same k, so both models of an id are
resampled together. Each side is then summed and measured as in ``bootstrap``,
and the interval and p-value are those of the resampled differences. Its cost
is one scan, a hash join on ``id`` and (distinct pairs x resamples).

``test := 'student'`` (:func:`mlsql._duckdb.resample_values.student`): each distinct pair's
two sides are measured once more as one row alone (a group r = -pid beside the resamples),
their difference d tested as :mod:`mlsql._resample.paired` does, the t distribution's tail
by ``_mlsql_t_two_sided`` (:func:`_t_two_sided`: continued fractions evaluated backwards
with ``list_reduce`` over 200 terms; within 3e-13 of scipy for df 1 to 1e6).
``test := 'fisher'`` (:func:`mlsql._duckdb.resample_values.fisher`): the same d, and per
permutation one Binomial(m, 1/2) count K per pair from the hash of (seed, permutation,
group, model, pair), as the bootstrap's Poisson(m) draws; p is the share of permutations
whose |Σ (2K - m) d| reaches |Σ m d|. The draws are the macro's own, not numpy's of the
Python stream (which hashes cannot give): a seed gives the same p-value on every run of the
macro, not the Python call's p-value.
"""

from __future__ import annotations

from typing import Any

from mlsql import _params as P
from mlsql import _weights as W
from mlsql._duckdb import resample_values as V
from mlsql._duckdb.families.label_based import label_list
from mlsql._duckdb.library import Macro, Qualify, check_param, sql_message
from mlsql._duckdb.ops import ORDERED, SqlOps
from mlsql._duckdb.source_sql import ALL, LIST_ACTUAL, LIST_STAND_IN, name_or, pick_sql
from mlsql._formulas import FORMULAS, Counts, RowStats, fbeta, flatten, formula_params
from mlsql._formulas import pooled as F_pooled
from mlsql._registry import REGISTRY, measures
from mlsql._resample import front as FRONT
from mlsql._resample import paired as PAIRED
from mlsql._resample import run as RUN
from mlsql._resample.measures import (
    CLASS_MEASURES,
    ENTRY_MESSAGE,
    LABEL_SET_MEASURES,
    LB_MEASURES,
    MIXED_MESSAGE,
    ZERO_ONE,
)
from mlsql._resample.numbers import CLASS_SCORE_MEASURES, REGRESSION_MEASURES, SCORE_MEASURES
from mlsql._sqlexpr import Sql, call, lit
from mlsql._weights import SAMPLE_WEIGHT

FILE = "resample.sql"
DESCRIPTION = (
    "Bootstrap intervals and paired comparisons in SQL: exact Poisson resampling of the "
    "label-set, one-label, regression and score measures."
)
ORDER = 50
FAMILIES: tuple[str, ...] = ()  # rendered here

FUNC = "bootstrap"
#: the measures the macro resamples, in the order of each resample's list of values
MEASURES = LABEL_SET_MEASURES
#: the per-measure parameters (each applies to every listed measure taking it), with defaults
PARAMS = ("beta := 1.0", "zero_division := 0", "n_labels := NULL", "options := ''")
SIGNATURE = (
    "source",
    "actual",
    "predicted",
    "measures := NULL",
    '"by" := NULL',
    "n_resamples := 1000",
    "confidence := 0.95",
    "seed := 0",
    f"{SAMPLE_WEIGHT} := NULL",
    *PARAMS,
    *V.PARAMS,
)
#: the measures of each kind of input the macros resample (the label sets' own pipeline here,
#: the others' in :mod:`mlsql._duckdb.resample_values`)
KINDS = {"label_sets": MEASURES, **V.KINDS}
#: Poisson(m) is tabled over m +- (12 sqrt(m) + 12): the mass outside is below 1e-25
SPREAD = 12
#: 2^53: a 53-bit integer over it is a uniform double in [0, 1)
TWO_53 = 9007199254740992
#: the suffix of a weighted formula's name (:class:`mlsql._weights.WeightedOps`)
BY_WEIGHT = "_by_weight"


class _Pooled(SqlOps):
    """Formula primitives that bind each aggregate and each row value once.

    The inlined formulas of the 14 measures took DuckDB seconds to bind: a samples
    average mentions its row value in five aggregates, and a formula its arguments
    many times. Here a weighted formula that aggregates (``average``,
    ``subset_accuracy``) gets its row arguments as columns of the tuple table
    (:attr:`row_values`, computed once per tuple), and every ``sum``, ``mean`` and
    ``count`` is recorded once by its text (:attr:`pooled`; the measures share them)
    and stands in the formula as the column that holds it. Sums and means run over
    their values in order, so a resample's value does not depend on threads.
    """

    def __init__(self, qualify: Qualify) -> None:
        super().__init__(qualify)
        self.pooled: dict[str, str] = {}
        self.row_values: dict[str, str] = {}

    def call_formula(self, name: str, args: tuple[Any, ...]) -> Sql:
        """A weighted aggregating formula (``<name>_by_weight``) over row-value columns."""
        formula = name.removesuffix(BY_WEIGHT)
        if formula == name:
            return super().call_formula(name, args)
        *given, weight = flatten(args)
        names = formula_params(formula)  # a parameter (zero_division) stays as it is
        columns = [
            self._row_value(a) if isinstance(a, Sql) and n not in P.PARAMS else a
            for a, n in zip(given, names, strict=True)
        ]
        return FORMULAS[formula].raw(W.WeightedOps(self, weight), *_regroup(formula, columns))

    def _row_value(self, x: Sql) -> Sql:
        return Sql(self.row_values.setdefault(str(x), f"__mlsql_v{len(self.row_values)}"))

    def _column(self, aggregate: str) -> Sql:
        return Sql(self.pooled.setdefault(aggregate, f"__mlsql_a{len(self.pooled)}"))

    def sum(self, x: Any) -> Sql:
        return self._column(f"{self.qualify(ORDERED['sum'])}({x})")

    def mean(self, x: Any) -> Sql:
        return self._column(f"{self.qualify(ORDERED['avg'])}({x})")

    def count(self, x: Any) -> Sql:
        return self._column(f"count({x})")


def _regroup(formula: str, flat: list[Any]) -> list[Any]:
    """A formula's flat arguments with tp, fp, fn packed back into its Counts."""
    params = formula_params(formula)
    if "tp" not in params:
        return flat
    i = params.index("tp")
    return [*flat[:i], Counts(*flat[i : i + 3]), *flat[i + 3 :]]


def _requested(name: str) -> str:
    return f"list_contains(measures, {lit(name)})"


#: the per-measure parameters, each checked once (in the CTE ``settings``), as columns
PARAM_COLUMNS = {
    "zero_division": "__mlsql_zd",
    "beta": "__mlsql_beta",
    "n_labels": "__mlsql_n_labels",
    "options": "__mlsql_hivemall_beta",
}


def _hivemall_f(ops: Any, s: RowStats) -> Any:
    """fmeasure over label arrays: micro F-beta of ``options``' -beta, 0 where undefined."""
    return fbeta(ops, F_pooled(ops, s), Sql(PARAM_COLUMNS["options"]), lit("0"))


def _hivemall_beta(q: Qualify) -> str:
    """SQL: the -beta of ``options`` where fmeasure is asked for (``-average binary`` is
    refused, as on label arrays everywhere)."""
    binary = sql_message(P.BINARY_ON_ARRAYS_MESSAGE)
    average = call(q("_mlsql_hivemall_average"), Sql("options"))
    beta = call(q("_mlsql_hivemall_beta"), Sql("options"))
    return (
        f"CASE WHEN {_requested('fmeasure')} THEN CASE WHEN {average} = 'binary' "
        f"THEN error({binary}) ELSE {beta} END END"
    )


def _values(q: Qualify, weight: str) -> tuple[str, str, str]:
    """SQL of every measure of :data:`MEASURES` over rows of columns tp, na, np weighed by
    ``weight``: (the row values, as columns of a tuple; the aggregates over them, as
    columns; the list of the measures over those). A measure not asked for is NULL."""
    measures()
    ops = _Pooled(q)
    stats = RowStats(Sql("tp"), Sql("na"), Sql("np"))
    out = []
    for name in MEASURES:
        if name == "fmeasure":
            value = W.weighted(_hivemall_f, Sql(weight), ops, stats)
        else:
            m = REGISTRY[name]
            params = {p.name: Sql(PARAM_COLUMNS[p.name]) for p in m.params}
            value = W.weighted(m.build, Sql(weight), ops, stats, **params)
        out.append(f"CASE WHEN {_requested(name)} THEN {value} END")
    rows = ",\n               ".join(f"{v} AS {c}" for v, c in ops.row_values.items())
    aggregates = ",\n               ".join(f"{a} AS {c}" for a, c in ops.pooled.items())
    return rows, aggregates, "[" + ",\n         ".join(out) + "]"


def _set_branches(q: Qualify, keys: str) -> tuple[str, str]:
    """SQL of the label-set measures in a call on label lists, over ``weighed`` (sorted
    distinct lists a and p, weight kw, per ``keys`` and resample r): (the CTEs, one branch
    (keys, r, measure, x) per asked measure). Each row's (tp, |A|, |P|) comes from its
    lists, then the measures are those of the label-set macro (:func:`_values`)."""
    row_values, aggregates, values = _values(q, "kw")
    params = ", ".join("st." + c for c in PARAM_COLUMNS.values())
    asked = f"len(list_filter(measures, lambda m: list_contains({_all_measures()}, m))) > 0"
    known = "CASE WHEN a IS NOT NULL AND p IS NOT NULL THEN"  # a NULL list: an unknown row
    ctes = f"""set_rows AS (  -- each weighed row's (tp, |A|, |P|) and row values
            SELECT *, {row_values} FROM (
                SELECT {keys}, r, kw, {known} len(list_intersect(a, p)) END AS tp,
                       {known} len(a) END AS na, {known} len(p) END AS np, {params}
                FROM weighed CROSS JOIN settings st WHERE {asked})),
        set_sums AS (SELECT {keys}, r, {aggregates} FROM set_rows GROUP BY {keys}, r),
        set_values AS (SELECT {keys}, r, {values} AS v FROM set_sums CROSS JOIN settings)"""
    branches = "\n            UNION ALL\n            ".join(
        f"SELECT {keys}, r, {lit(name)} AS measure, CAST(v[{j}] AS DOUBLE) AS x "
        f"FROM set_values WHERE {_requested(name)}"
        for j, name in enumerate(MEASURES, 1)
    )
    return ctes, branches


#: the run's settings of bootstrap and compare: (parameter, message, condition on x, value)
RUN_SETTINGS = (
    (
        "n_resamples",
        RUN.N_RESAMPLES_MESSAGE,
        f"{{integer}} AND TRY_CAST(x AS BIGINT) BETWEEN 2 AND {RUN.MAX_RESAMPLES}",
        "TRY_CAST(x AS BIGINT)",
    ),
    (
        "confidence",
        RUN.CONFIDENCE_MESSAGE,
        "{number} AND TRY_CAST(x AS DOUBLE) > 0 AND TRY_CAST(x AS DOUBLE) < 1",
        "TRY_CAST(x AS DOUBLE)",
    ),
    (
        "seed",
        RUN.SEED_MESSAGE,
        "{integer} AND TRY_CAST(x AS HUGEINT) >= 0",
        "TRY_CAST(x AS UBIGINT)",
    ),
)


def _setting_macros(q: Qualify) -> list[Macro]:
    """``_mlsql_check_<setting>(x, func)``: a run setting of ``func`` (``bootstrap`` or
    ``compare``) checked, else its error naming ``func``."""
    integer = f"regexp_full_match(typeof(x), '{P.INTEGER_TYPES}') AND x IS NOT NULL"
    number = f"regexp_full_match(typeof(x), '{P.NUMBER_TYPES}') AND x IS NOT NULL"
    out = []
    for name, template, ok, value in RUN_SETTINGS:
        message = sql_message(
            template.format(func="{}", got="{}"), "func", f"{q('_mlsql_shown')}(x)"
        )
        condition = ok.format(integer=integer, number=number)
        body = f"CASE WHEN {condition} THEN {value} ELSE error({message}) END"
        doc = f"The {name} of func (bootstrap or compare), checked."
        out.append(Macro(FILE, f"_mlsql_check_{name}", ("x", "func"), body, doc, public=False))
    return out


def _setting(name: str, q: Qualify, func: str) -> str:
    """SQL: the macro parameter ``name`` of ``func`` checked (:func:`_setting_macros`)."""
    return str(call(q(f"_mlsql_check_{name}"), Sql(name), func))


def _entry(q: Qualify, func: str) -> str:
    """SQL of the message on ``measures`` that are no non-empty list of names."""
    return _message(ENTRY_MESSAGE, func=str(lit(func)), got=f"{q('_mlsql_repr')}(measures)")


def _measures_check(q: Qualify, func: str, kind: str) -> str:
    """SQL of the checked ``measures`` of a macro of ``kind``: a non-empty list of names the
    SQL macros resample (the first other is named), all of ``kind`` (else the Python call's
    message on mixed kinds); label lists take any mix of their measures
    (:func:`_measures_macro`, given the names of ``kind``)."""
    names = MEASURES if kind == "label_sets" else V.taken(kind)
    own = Sql("[" + ", ".join(str(lit(n)) for n in names) + "]")
    return str(call(q("_mlsql_resample_measures"), Sql("measures"), func, own))


def _measures_macro(q: Qualify) -> Macro:
    """``_mlsql_resample_measures(measures, func, own)``: ``measures`` checked for ``func``
    (``bootstrap`` or ``compare``) on a kind whose measures are the list ``own``, each
    message naming ``func`` (:func:`_measures_check` calls it)."""
    entry = _message(ENTRY_MESSAGE, func="func", got=f"{q('_mlsql_repr')}(measures)")
    every = "[" + ", ".join(str(lit(n)) for ms in KINDS.values() for n in ms) + "]"
    python_only = "[" + ", ".join(str(lit(n)) for n in CLASS_SCORE_MEASURES) + "]"
    only = f"list_filter(measures, lambda m: list_contains({python_only}, m))"
    elsewhere = _message(V.PYTHON_ONLY_MESSAGE, func="func", name=f"{only}[1]")
    others = f"list_filter(measures, lambda m: m IS NULL OR NOT list_contains({every}, m))"
    unsupported = _message(
        V.unsupported_message("{func}", "{name}"),
        func="func",
        name=f"coalesce({others}[1], 'None')",
    )
    alien = "list_filter(measures, lambda m: NOT list_contains(own, m))"
    mixed = MIXED_MESSAGE.format(
        func="{func}",
        sets=", ".join((*LABEL_SET_MEASURES, *LB_MEASURES)),
        classes=", ".join(CLASS_MEASURES),
        numbers=", ".join(REGRESSION_MEASURES),
        scores=", ".join(SCORE_MEASURES),
        class_scores=", ".join(CLASS_SCORE_MEASURES),
        first="{first}",
        other="{other}",
    )
    mixed = _message(mixed, func="func", first="measures[1]", other=f"{alien}[1]")
    body = (
        f"CASE WHEN measures IS NULL OR NOT starts_with(typeof(measures), 'VARCHAR[')"
        f" OR len(measures) = 0 THEN error({entry})\n"
        f"         WHEN len({only}) > 0 THEN error({elsewhere})\n"
        f"         WHEN len({others}) > 0 THEN error({unsupported})\n"
        f"         WHEN len({alien}) > 0 THEN error({mixed}) ELSE measures END"
    )
    doc = (
        "measures checked for func (bootstrap or compare) on a kind of input whose measures "
        "are own: a non-empty list of names resampled in SQL, all of that kind."
    )
    return Macro(
        FILE, "_mlsql_resample_measures", ("measures", "func", "own"), body, doc, public=False
    )


def _settings(q: Qualify, func: str = FUNC, kind: str = "label_sets") -> str:
    """SQL of the one row of checked settings of ``func`` (``bootstrap`` or ``compare``) on
    measures of ``kind``; the label sets' shared measure parameters are checked here, the
    other kinds' by each measure's own macro."""
    n, c, s = (_setting(name, q, func) for name, *_ in RUN_SETTINGS)
    head = f"SELECT {n} AS n, {c} AS c, {s} AS s, {_measures_check(q, func, kind)} AS ms"
    if kind not in ("label_sets", "label_lists"):
        return head
    params = {
        p.name: check_param(p, q, func)
        for p in (P.PARAMS[k] for k in ("zero_division", "beta", "n_labels"))
    }
    params["n_labels"] = Sql(
        f"CASE WHEN {_requested('hamming_loss')} THEN {params['n_labels']} END"
    )
    if kind == "label_lists":  # checked where a label-set measure is asked (the averages
        # check their own parameters)
        asked = f"len(list_filter(measures, lambda m: list_contains({_all_measures()}, m))) > 0"
        params = {k: Sql(f"CASE WHEN {asked} THEN {v} END") for k, v in params.items()}
    checked = "".join(f", {params[k]} AS {PARAM_COLUMNS[k]}" for k in params)
    return f"{head}{checked}, {_hivemall_beta(q)} AS {PARAM_COLUMNS['options']}"


def _bootstrap(q: Qualify) -> Macro:
    by = V.by_list(q)
    # the weight column is checked only when one is given (else actual stands in for it)
    named = [
        ("actual", "actual"),
        ("predicted", "predicted"),
        (SAMPLE_WEIGHT, name_or(SAMPLE_WEIGHT, "actual")),
    ]
    source = V.source_sql(q, named, str(lit(FUNC)), LIST_STAND_IN)
    a0, p0 = (
        label_list(q, x, str(lit(FUNC)), f"'{r}'")
        for x, r in (("a0", "actual"), ("p0", "predicted"))
    )
    lists = f"{q('_mlsql_checked_label_lists')}({a0}, {p0}, {lit(FUNC)}, 'actual', 'predicted')"
    weight = V.weight_sql(q, str(lit(FUNC)))
    tail = V.TAIL
    row_values, aggregates, values = _values(q, "kw")
    body = f"""WITH settings AS ({_settings(q)}),
    rows AS (
        SELECT struct_pack(*COLUMNS(lambda c: c = '{ALL}' OR list_contains({by}, lower(c)))) AS g,
               {pick_sql(q, "actual", LIST_ACTUAL)} AS a0,
               {pick_sql(q, "predicted")} AS p0,
               {pick_sql(q, SAMPLE_WEIGHT)} AS w0
        FROM {source}),
    tuples AS (
        SELECT g, tp, na, np, w, count(*) AS m FROM (
            SELECT g, {q("_mlsql_tp")}(a, p0) AS tp, {q("_mlsql_n_actual")}(a, p0) AS na,
                   {q("_mlsql_n_predicted")}(a, p0) AS np, {weight} AS w
            FROM (SELECT g, {lists} AS a, {p0} AS p0, w0 FROM rows))
        GROUP BY ALL),
    valued AS (  -- each tuple's row values (of the samples averages and subset accuracy)
        SELECT *, {row_values} FROM (
            SELECT t.*, {", ".join("st." + c for c in PARAM_COLUMNS.values())}
            FROM tuples t CROSS JOIN settings st)),
    cdf AS (FROM {q("_mlsql_poisson_cdf")}((SELECT list(DISTINCT m) FROM tuples))),
    draws AS (
        SELECT t.*, r,
               ((hash(settings.s, r, t.g, t.tp, t.na, t.np, t.w) >> 11)::DOUBLE + 0.5) / {TWO_53} AS u
        FROM valued t CROSS JOIN settings CROSS JOIN range(settings.n) AS resample(r)),
    drawn AS (
        SELECT d.* EXCLUDE (u, m), d.w * c.k AS kw
        FROM draws d ASOF JOIN cdf c ON d.m = c.m AND d.u <= c.cdf
        WHERE c.k > 0),
    sums AS (  -- r NULL: the measure on the data, each tuple weighing its rows m
        SELECT g, r, {aggregates} FROM (
            FROM drawn
            UNION ALL BY NAME
            SELECT * EXCLUDE (m), NULL::BIGINT AS r, w * m AS kw FROM valued)
        GROUP BY g, r),
    measured AS (SELECT g, r, {values} AS v FROM sums CROSS JOIN settings),
    resamples AS (FROM measured WHERE r IS NOT NULL),
    estimates AS (FROM measured WHERE r IS NULL),
    wanted AS (
        SELECT i, settings.ms[i] AS measure, list_position({_all_measures()}, settings.ms[i]) AS j
        FROM settings CROSS JOIN range(1, len(settings.ms) + 1) AS position(i)
        WHERE settings.c IS NOT NULL),  -- confidence is checked here (the tails read it as is)
    spread AS (
        SELECT g, i, CAST(v[j] AS DOUBLE) AS x FROM resamples CROSS JOIN wanted),
    intervals AS (
        SELECT g, i,
               quantile_cont(x, [{tail}, 1 - {tail}]) FILTER (WHERE isfinite(x)) AS q,
               stddev_samp(x ORDER BY x) FILTER (WHERE isfinite(x)) AS se,
               count(x) FILTER (WHERE isfinite(x)) AS kept
        FROM spread CROSS JOIN settings GROUP BY g, i)
    SELECT COLUMNS(lambda c: c <> '{ALL}' AND NOT starts_with(c, '__mlsql_')) FROM (
        SELECT unnest(e.g), w.measure AS measure, CAST(e.v[w.j] AS DOUBLE) AS estimate,
               CASE WHEN iv.kept >= 2 THEN iv.q[1] END AS low,
               CASE WHEN iv.kept >= 2 THEN iv.q[2] END AS high,
               CASE WHEN iv.kept >= 2 THEN iv.se END AS std_error,
               0 AS __mlsql_n, w.i AS __mlsql_i
        FROM estimates e CROSS JOIN wanted w
        LEFT JOIN intervals iv ON iv.g = e.g AND iv.i = w.i)
    ORDER BY COLUMNS(lambda c: c = '__mlsql_n' OR list_contains({by}, lower(c))) NULLS FIRST,
             __mlsql_i"""
    return Macro(
        FILE,
        V.macro_name(FUNC, "label_sets"),
        SIGNATURE,
        body,
        "bootstrap of the label-set measures: one Poisson(m) draw per distinct (tp, |A|, |P|, "
        "weight) seen m times; bootstrap calls it.",
        public=False,
        table=True,
    )


#: what ``bootstrap`` says of itself
BOOTSTRAP_DESCRIPTION = (
    "Bootstrap intervals, one row per group and measure: the by columns, measure, estimate "
    "(the measure on the data), low and high (percentile interval), std_error. Measures of "
    "one kind: label lists ("
    + ", ".join(MEASURES)
    + "), one label per row ("
    + ", ".join(CLASS_MEASURES)
    + "), numbers ("
    + ", ".join(REGRESSION_MEASURES)
    + ") or a "
    "0/1 label and a score (" + ", ".join(SCORE_MEASURES) + "); beta, zero_division, "
    "n_labels, options, average, weights and n_bins apply to every listed measure taking "
    "them. Exact Poisson bootstrap (one Poisson(m) draw per distinct row statistics seen m "
    "times, counter-based on seed: the same seed, the same draws). Example: SELECT * FROM "
    "bootstrap('preds', 'actual', 'predicted', measures := ['micro_f1'], \"by\" := ['model'])."
)


def _cdf_table(name: str, pmf: str, low: str, high: str, summary: str) -> Macro:
    """``name(ms)``: (m, k, cdf) for each m of the list ``ms``: the running sum of ``pmf``
    (SQL of m and k) over k from ``low`` to ``high`` (SQL of m), normalised by its total:
    the draw for a uniform u is the smallest k with cdf >= u."""
    body = f"""SELECT m, k, running / max(running) OVER (PARTITION BY m) AS cdf FROM (
        SELECT m, k,{pmf}
                   OVER (PARTITION BY m ORDER BY k) AS running
        FROM (SELECT m, unnest(range(
                  {low}::BIGINT,
                  {high}::BIGINT + 1)) AS k
              FROM (SELECT unnest(ms)::DOUBLE AS m)))"""
    return Macro(FILE, name, ("ms",), body, summary, public=False, table=True)


def _poisson_cdf() -> Macro:
    """``_mlsql_poisson_cdf(ms)``: (m, k, cdf) of Poisson(m) for each m of the list ``ms``."""
    return _cdf_table(
        "_mlsql_poisson_cdf",
        " sum(exp(k * ln(m) - m - lgamma(k + 1)))",
        f"greatest(0, floor(m - {SPREAD} * sqrt(m) - {SPREAD}))",
        f"ceil(m + {SPREAD} * sqrt(m) + {SPREAD})",
        "Poisson(m)'s CDF for each m > 0 of ms over k in m +- (12 sqrt(m) + 12), normalised "
        "(the mass left out is below 1e-25): the draw for a uniform u is the smallest k with "
        "cdf >= u.",
    )


def _half_binomial_cdf() -> Macro:
    """``_mlsql_half_binomial_cdf(ms)``: (m, k, cdf) of Binomial(m, 1/2) for each m of ``ms``
    (Fisher's draws), as :func:`_poisson_cdf`: over k in m/2 +- (12 sqrt(m)/2 + 12) within
    [0, m] (all of it up to m = 192; beyond, the tails left out hold below 1e-25 by
    Hoeffding's bound), from the pmf exp(lgamma(m + 1) - lgamma(k + 1) - lgamma(m - k + 1)
    - m ln 2), normalised by its total. Within 1e-14 of scipy's CDF up to m = 500; lgamma's
    rounding near m ln m gives 3e-13 at m = 1e4 and 7e-11 at m = 1e6 (:func:`_poisson_cdf`'s:
    3e-13 and 4e-10)."""
    return _cdf_table(
        "_mlsql_half_binomial_cdf",
        "\n               sum(exp(lgamma(m + 1) - lgamma(k + 1) - lgamma(m - k + 1) - m * ln(2)))",
        f"greatest(0, floor(m / 2 - {SPREAD} * sqrt(m) / 2 - {SPREAD}))",
        f"least(m, ceil(m / 2 + {SPREAD} * sqrt(m) / 2 + {SPREAD}))",
        "Binomial(m, 1/2)'s CDF for each m > 0 of ms over k in m/2 +- (6 sqrt(m) + 12) within "
        "[0, m], normalised (the mass left out is below 1e-25): the draw for a uniform u is "
        "the smallest k with cdf >= u.",
    )


def _all_measures() -> str:
    return "[" + ", ".join(str(lit(n)) for n in MEASURES) + "]"


# ------------------------------------------------------------------ compare
COMPARE = "compare"
COMPARE_SIGNATURE = (
    "source",
    "actual",
    "predicted",
    "model := 'model'",
    "id := 'id'",
    "baseline := 'A'",
    "measures := NULL",
    '"by" := NULL',
    "n_resamples := 1000",
    "confidence := 0.95",
    "seed := 0",
    f"{SAMPLE_WEIGHT} := NULL",
    "drop_unpaired := false",
    "test := 'bootstrap'",
    *PARAMS,
    *V.PARAMS,
)
#: the message of a drop_unpaired that is not a boolean (the Python call takes any truth value)
DROP_UNPAIRED_MESSAGE = (
    "The 'drop_unpaired' parameter of compare must be a boolean. Got {got} instead."
)


class _Slot:
    """Stands in a message template for a SQL expression, also where it is shown by ``!r``."""

    def __repr__(self) -> str:
        return "{}"

    __str__ = __repr__


def _message(template: str, **exprs: str) -> str:
    """SQL of ``template`` (``str.format`` fields, ``!r`` ones too) filled by SQL ``exprs``.

    The fields are filled in the order the template names them.
    """
    import string

    order = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    text = template.format(**{k: _Slot() for k in exprs})
    return sql_message(text, *(exprs[f.split("!")[0]] for f in order))


def _is_baseline(x: str) -> str:
    """SQL: whether the model value ``x`` equals ``baseline`` as Python's ``==`` would say
    (numbers as numbers, text as text, other types only with their own type)."""
    integer, number = P.INTEGER_TYPES, P.NUMBER_TYPES
    text = f"(typeof({x}) = 'VARCHAR' OR starts_with(typeof({x}), 'ENUM'))"
    return (
        f"CASE WHEN {x} IS NULL OR baseline IS NULL THEN false\n"
        f"                 WHEN regexp_full_match(typeof({x}), '{integer}') AND "
        f"regexp_full_match(typeof(baseline), '{integer}') "
        f"THEN TRY_CAST({x} AS HUGEINT) = TRY_CAST(baseline AS HUGEINT)\n"
        f"                 WHEN regexp_full_match(typeof({x}), '{number}') AND "
        f"regexp_full_match(typeof(baseline), '{number}') "
        f"THEN TRY_CAST({x} AS DOUBLE) = TRY_CAST(baseline AS DOUBLE)\n"
        f"                 WHEN {text} AND typeof(baseline) = 'VARCHAR' OR typeof({x}) = typeof(baseline) "
        f"THEN CAST({x} AS VARCHAR) = CAST(baseline AS VARCHAR)\n"
        f"                 ELSE false END"
    )


def _is_baseline_macro() -> Macro:
    return Macro(
        "resample.sql",
        "_mlsql_is_baseline",
        ("mo", "baseline"),
        _is_baseline("mo"),
        "Whether the model value mo equals baseline as Python's == would say (numbers as "
        "numbers, text as text, other types only with their own type).",
        public=False,
    )


def _compare_setting_macros(q: Qualify) -> list[Macro]:
    """``_mlsql_check_drop_unpaired(drop_unpaired)`` and ``_mlsql_check_test(test,
    measures)``: compare's drop_unpaired and test, checked, else the Python call's error."""
    drop = sql_message(
        DROP_UNPAIRED_MESSAGE.format(got="{}"), f"{q('_mlsql_shown')}(drop_unpaired)"
    )
    repr_ = q("_mlsql_repr")
    bad_test = sql_message(PAIRED.TEST_MESSAGE.format(got="{}"), f"{repr_}(test)")
    python_test = sql_message(PAIRED.SQL_TEST_MESSAGE.format(test="{}"), f"{repr_}(test)")
    per_row = "[" + ", ".join(str(lit(n)) for n in PAIRED.PER_ROW_MEASURES) + "]"
    other = f"list_filter(measures, lambda m: NOT list_contains({per_row}, m))"
    not_per_row = sql_message(
        PAIRED.PER_ROW_MESSAGE.replace("{test!r}", "{}")
        .replace("{allowed}", ", ".join(PAIRED.PER_ROW_MEASURES))
        .replace("{name}", "{}"),
        f"{repr_}(test)",
        f"{other}[1]",
    )
    tests = ", ".join(str(lit(t)) for t in PAIRED.TESTS if t not in PAIRED.SQL_TESTS)
    # the tests only the Python compare computes (none now; the arm stays for a new one)
    python_only = (
        f"WHEN typeof(test) = 'VARCHAR' AND test IN ({tests}) THEN error({python_test})\n         "
        if tests
        else ""
    )
    return [
        Macro(
            "resample.sql",
            "_mlsql_check_drop_unpaired",
            ("drop_unpaired",),
            "CASE WHEN typeof(drop_unpaired) = 'BOOLEAN' AND drop_unpaired IS NOT NULL "
            f"THEN drop_unpaired\n         ELSE error({drop}) END",
            "compare's drop_unpaired, checked: a boolean.",
            public=False,
        ),
        Macro(
            "resample.sql",
            "_mlsql_check_test",
            ("test", "measures"),
            f"""CASE WHEN typeof(test) = 'VARCHAR' AND test = 'bootstrap' THEN test
         WHEN typeof(test) = 'VARCHAR' AND test IN {V.ROW_TESTS}
         THEN CASE WHEN len({other}) > 0 THEN error({not_per_row}) ELSE test END
         {python_only}ELSE error({bad_test}) END""",
            "compare's test, checked: 'bootstrap', or 'student' or 'fisher' with measures "
            "of one value per row only.",
            public=False,
        ),
    ]


def _compare_settings(q: Qualify, kind: str) -> str:
    """SQL of the settings row of ``compare`` on measures of ``kind``: bootstrap's, plus
    drop_unpaired (du) and test (te: the bootstrap's, or Student's or Fisher's with per-row
    measures). (The ``by`` names are checked with the source: ``V.source_sql``.)"""
    return f"""{_settings(q, COMPARE, kind)},
               {q("_mlsql_check_drop_unpaired")}(drop_unpaired) AS du,
               {q("_mlsql_check_test")}(test, measures) AS te"""


def _pairing_macro(q: Qualify) -> Macro:
    """``_mlsql_check_pairing(found, repeated, du, unpaired, baseline, model, id,
    model_values, details)``: NULL, else the Python call's error on compare's pairing, in its
    order: no row of the baseline (``found`` not true; ``model_values`` the model values), ``repeated`` rows of an
    id within a model, ``unpaired`` rows without a partner unless ``du`` (drop_unpaired)."""
    repr_ = q("_mlsql_repr")
    no_baseline = _message(
        FRONT.BASELINE_MESSAGE,
        baseline=f"{repr_}(baseline)",
        model=f"{repr_}(model)",
        values="model_values",
    )
    repeated = _message(FRONT.DUPLICATE_MESSAGE, id=f"{repr_}(id)", n="CAST(repeated AS VARCHAR)")
    unpaired = _message(
        FRONT.UNPAIRED_MESSAGE,
        id=f"{repr_}(id)",
        n="CAST(unpaired AS VARCHAR)",
        details="details",
    )
    return Macro(
        "resample.sql",
        "_mlsql_check_pairing",
        (
            "found",
            "repeated",
            "du",
            "unpaired",
            "baseline",
            "model",
            "id",
            "model_values",
            "details",
        ),
        f"""CASE WHEN NOT coalesce(found, false) THEN error({no_baseline})
         WHEN repeated > 0 THEN error({repeated})
         WHEN NOT du AND unpaired > 0 THEN error({unpaired}) END""",
        "NULL, else compare's error on its pairing: no baseline row (found not true), "
        "repeated ids within a model, or unpaired rows without drop_unpaired (du).",
        public=False,
    )


def _pair_checks(q: Qualify) -> dict[str, str]:
    """SQL of compare's checks on the pairing, shared by every kind: ``base`` (whether a row
    ``mo`` is the baseline's), and the CTEs ``models`` (over ``stats``: g, mo, i0, base),
    ``unpaired`` (over ``pairs``: mo, m) and ``checked`` (NULL, else the Python call's error
    of :func:`_pairing_macro`)."""
    repr_ = q("_mlsql_repr")
    parts = (
        f"[CASE WHEN own > 0 THEN own || ' of model ' || {repr_}(mo) || ' without a baseline row' END, "
        f"CASE WHEN lack > 0 THEN lack || ' of the baseline without a row of model ' || {repr_}(mo) END]"
    )
    return {
        "base": f"{q('_mlsql_is_baseline')}(mo, baseline)",
        "models": """models AS (  -- rows per model value, and rows whose (group, id) repeats within it
        SELECT mo, base, count(*) AS n, count(*) - count(DISTINCT (g, i0)) AS repeated
        FROM stats GROUP BY ALL)""",
        "unpaired": """unpaired AS (  -- per other model: its rows without a baseline row, the baseline's without one of it
        SELECT md.mo, md.n - coalesce(pd.n, 0) AS own, bt.n - coalesce(pd.n, 0) AS lack
        FROM models md
        LEFT JOIN (SELECT mo, sum(m) AS n FROM pairs GROUP BY mo) pd ON pd.mo IS NOT DISTINCT FROM md.mo
        CROSS JOIN (SELECT coalesce(sum(n), 0) AS n FROM models WHERE base) bt
        WHERE NOT md.base)""",
        "checked": f"""checked AS (  -- the Python call's checks, in its order
        SELECT {q("_mlsql_check_pairing")}(
            (SELECT bool_or(base) FROM models), (SELECT sum(repeated) FROM models),
            (SELECT du FROM settings), (SELECT sum(own + lack) FROM unpaired), baseline, model, id,
            (SELECT coalesce(string_agg({repr_}(mo), ', ' ORDER BY mo NULLS FIRST), '') FROM models),
            (SELECT array_to_string(list_filter(flatten(list({parts} ORDER BY mo NULLS FIRST)),
                                                lambda x: x IS NOT NULL), '; ') FROM unpaired)) AS ok)""",
    }


#: SQL of each distinct pair's (g, mo, i, d, m, bw, xw, pid) from ``paired``'s rows r = -pid
_PAIR_DIFFS = """SELECT t.g, t.mo, w.i, CAST(x.xv[w.j] AS DOUBLE) - CAST(x.bv[w.j] AS DOUBLE) AS d,
                   t.m, t.bw, t.xw, t.pid
            FROM paired x JOIN pairs t ON t.pid = -x.r CROSS JOIN wanted w WHERE x.r < 0"""


def _compare(q: Qualify) -> Macro:
    by = V.by_list(q)
    named = [
        ("actual", "actual"),
        ("predicted", "predicted"),
        ("model", "model"),
        ("id", "id"),
        (SAMPLE_WEIGHT, name_or(SAMPLE_WEIGHT, "actual")),
    ]
    func = str(lit(COMPARE))
    source = V.source_sql(q, named, func, LIST_STAND_IN)
    a0, p0 = (label_list(q, x, func, f"'{r}'") for x, r in (("a0", "actual"), ("p0", "predicted")))
    lists = f"{q('_mlsql_checked_label_lists')}({a0}, {p0}, {func}, 'actual', 'predicted')"
    weight = V.weight_sql(q, func)
    tail = V.TAIL
    row_values, aggregates, values = _values(q, "kw")
    zero_one = "[" + ", ".join(str(lit(n)) for n in MEASURES if n in ZERO_ONE) + "]"
    pair = ["btp", "bna", "bnp", "bw", "xtp", "xna", "xnp", "xw"]
    checks = _pair_checks(q)
    body = f"""WITH settings AS ({_compare_settings(q, "label_sets")}),
    rows AS (
        SELECT struct_pack(*COLUMNS(lambda c: c = '{ALL}' OR list_contains({by}, lower(c)))) AS g,
               {pick_sql(q, "model")} AS mo,
               {pick_sql(q, "id")} AS i0,
               {pick_sql(q, "actual", LIST_ACTUAL)} AS a0,
               {pick_sql(q, "predicted")} AS p0,
               {pick_sql(q, SAMPLE_WEIGHT)} AS w0
        FROM {source}),
    stats AS MATERIALIZED (  -- each row's statistics, and whether it is the baseline's
        SELECT g, mo, i0, {checks["base"]} AS base,
               {q("_mlsql_tp")}(a, p0) AS tp, {q("_mlsql_n_actual")}(a, p0) AS na,
               {q("_mlsql_n_predicted")}(a, p0) AS np, {weight} AS w
        FROM (SELECT g, mo, i0, {lists} AS a, {p0} AS p0, w0 FROM rows)),
    {checks["models"]},
    pairs AS MATERIALIZED (  -- per group and model: the distinct pairs (the baseline row's
                             -- statistics, the model row's) of an id, m ids each; pid names
                             -- a pair within this query only (the draws hash its values)
        SELECT *, row_number() OVER () AS pid FROM (
            SELECT x.g, x.mo, b.tp AS btp, b.na AS bna, b.np AS bnp, b.w AS bw,
                   x.tp AS xtp, x.na AS xna, x.np AS xnp, x.w AS xw, count(*) AS m
            FROM stats x JOIN stats b ON x.i0 = b.i0 AND x.g IS NOT DISTINCT FROM b.g
            WHERE b.base AND NOT x.base AND x.mo IS NOT NULL
            GROUP BY ALL)),
    {checks["unpaired"]},
    {checks["checked"]},
    sides AS (  -- each pair twice: side 0 the baseline row's statistics, side 1 the model row's
        SELECT *, {row_values} FROM (
            SELECT t.*, {", ".join("st." + c for c in PARAM_COLUMNS.values())} FROM (
                SELECT *, 0 AS side, btp AS tp, bna AS na, bnp AS np, bw AS w FROM pairs
                UNION ALL
                SELECT *, 1 AS side, xtp AS tp, xna AS na, xnp AS np, xw AS w FROM pairs) t
            CROSS JOIN settings st CROSS JOIN checked ck WHERE ck.ok IS NULL)),
    cdf AS (FROM {q("_mlsql_poisson_cdf")}((SELECT list(DISTINCT m) FROM pairs))),
    draws AS (  -- one draw per pair and resample, from the hash of the pair's values
        SELECT t.pid, t.m, r,
               ((hash(settings.s, r, t.g, t.mo, {", ".join("t." + c for c in pair)}) >> 11)::DOUBLE + 0.5)
                   / {TWO_53} AS u
        FROM pairs t CROSS JOIN settings CROSS JOIN range(settings.n) AS resample(r)),
    drawn AS (  -- both sides of a pair weigh the same k
        SELECT s.* EXCLUDE (m, pid, {", ".join(pair)}), d.r, s.w * d.k AS kw
        FROM (SELECT d.pid, d.r, c.k FROM draws d ASOF JOIN cdf c ON d.m = c.m AND d.u <= c.cdf
              WHERE c.k > 0) d
        JOIN sides s ON s.pid = d.pid),
    sums AS (  -- r NULL: the measure on the data, each pair weighing its ids m
        SELECT g, mo, side, r, {aggregates} FROM (
            FROM drawn
            UNION ALL BY NAME
            SELECT * EXCLUDE (m, pid, {", ".join(pair)}), NULL::BIGINT AS r, w * m AS kw FROM sides
            UNION ALL BY NAME  -- tests 'student' and 'fisher': each pair's sides as one row
                               -- alone (r = -pid)
            SELECT s.* EXCLUDE (m, pid, {", ".join(pair)}), -s.pid AS r, 1.0 AS kw
            FROM sides s CROSS JOIN settings st0 WHERE st0.te IN {V.ROW_TESTS})
        GROUP BY g, mo, side, r),
    measured AS (SELECT g, mo, side, r, {values} AS v FROM sums CROSS JOIN settings),
    paired AS (  -- each resample's values (r NULL: the data's) of the baseline (bv) and the model (xv)
        SELECT x.g, x.mo, x.r, b.v AS bv, x.v AS xv
        FROM measured x JOIN measured b
        ON b.g IS NOT DISTINCT FROM x.g AND b.mo = x.mo AND b.r IS NOT DISTINCT FROM x.r
        WHERE x.side = 1 AND b.side = 0),
    wanted AS (
        SELECT i, settings.ms[i] AS measure, list_position({_all_measures()}, settings.ms[i]) AS j,
               list_contains({zero_one}, settings.ms[i]) AS zero_one
        FROM settings CROSS JOIN range(1, len(settings.ms) + 1) AS position(i)
        WHERE settings.c IS NOT NULL AND settings.du IS NOT NULL AND settings.te IS NOT NULL),
    spread AS (  -- the resampled differences, model - baseline
        SELECT g, mo, i, CAST(xv[j] AS DOUBLE) - CAST(bv[j] AS DOUBLE) AS d
        FROM paired CROSS JOIN wanted WHERE r >= 0),
    intervals AS (
        SELECT g, mo, i,
               quantile_cont(d, [{tail}, 1 - {tail}]) FILTER (WHERE isfinite(d)) AS q,
               count(d) FILTER (WHERE isfinite(d)) AS kept,
               count(d) FILTER (WHERE isfinite(d) AND d <= 0) AS below,
               count(d) FILTER (WHERE isfinite(d) AND d >= 0) AS above
        FROM spread CROSS JOIN settings GROUP BY g, mo, i),
    mcnemar AS (  -- McNemar's exact test of the ids right for one side only (weights count as ids)
        SELECT g, mo,
               CASE WHEN bool_and(bm = round(bm) AND bm = xm) FILTER (WHERE rb <> rx) IS NOT false
                    THEN {q("_mlsql_mcnemar_p")}(
                        coalesce(sum(bm ORDER BY bm) FILTER (WHERE rb AND NOT rx), 0),
                        coalesce(sum(bm ORDER BY bm) FILTER (WHERE rx AND NOT rb), 0)) END AS p
        FROM (SELECT g, mo, m * coalesce(bw, 0) AS bm, m * coalesce(xw, 0) AS xm,
                     btp = bna AND btp = bnp AS rb, xtp = xna AND xtp = xnp AS rx FROM pairs)
        GROUP BY g, mo),
    {V.student(q, "i", _PAIR_DIFFS)},
    {V.fisher(q, "i", pair)}
    SELECT COLUMNS(lambda c: c <> '{ALL}' AND NOT starts_with(c, '__mlsql_')) FROM (
        SELECT unnest(e.g), e.mo AS model, w.measure AS measure,
               CAST(e.bv[w.j] AS DOUBLE) AS baseline_estimate,
               CAST(e.xv[w.j] AS DOUBLE) AS estimate,
               CAST(e.xv[w.j] AS DOUBLE) - CAST(e.bv[w.j] AS DOUBLE) AS difference,
               CASE WHEN iv.kept >= 2 THEN iv.q[1] END AS low,
               CASE WHEN iv.kept >= 2 THEN iv.q[2] END AS high,
               CASE WHEN st0.te = 'student' THEN st.p
                    WHEN st0.te = 'fisher' THEN fi.p
                    WHEN iv.kept >= 1 THEN least(1.0, 2 * least((1 + iv.below) / (iv.kept + 1),
                                                             (1 + iv.above) / (iv.kept + 1))) END AS p_value,
               CASE WHEN w.zero_one THEN mc.p END AS mcnemar_p_value,
               0 AS __mlsql_n, e.mo AS __mlsql_model, w.i AS __mlsql_i
        FROM (FROM paired WHERE r IS NULL) e CROSS JOIN wanted w
        CROSS JOIN settings st0 CROSS JOIN weights_checked wc
        LEFT JOIN intervals iv ON iv.g IS NOT DISTINCT FROM e.g AND iv.mo = e.mo AND iv.i = w.i
        LEFT JOIN student st ON st.g IS NOT DISTINCT FROM e.g AND st.mo = e.mo AND st.i = w.i
        LEFT JOIN fisher fi ON fi.g IS NOT DISTINCT FROM e.g AND fi.mo = e.mo AND fi.i = w.i
        LEFT JOIN mcnemar mc ON mc.g IS NOT DISTINCT FROM e.g AND mc.mo = e.mo
        WHERE wc.ok IS NULL)
    ORDER BY COLUMNS(lambda c: c = '__mlsql_n' OR list_contains({by}, lower(c))) NULLS FIRST,
             __mlsql_model, __mlsql_i"""
    return Macro(
        FILE,
        V.macro_name(COMPARE, "label_sets"),
        COMPARE_SIGNATURE,
        body,
        "compare on the label-set measures: one Poisson(m) draw per distinct pair of both "
        "rows' (tp, |A|, |P|, weight) seen m times; compare calls it.",
        public=False,
        table=True,
    )


#: what ``compare`` says of itself
COMPARE_DESCRIPTION = (
    "Paired comparison of every model with the baseline, one row per group, other model and "
    "measure: the by columns, model, measure, baseline_estimate, estimate, difference (model "
    "- baseline), low and high (percentile interval of the difference), p_value (two-sided "
    "paired bootstrap; test := 'student': Student's paired t test of the per-id values of "
    "a per-row measure, as scipy's ttest_rel; test := 'fisher': Fisher's randomization test "
    "of the same, as ranx's, from the macro's own draws), mcnemar_p_value (McNemar's exact test; subset_accuracy, "
    "zero_one_loss, accuracy and error_rate, else NULL). Rows pair on id within each group; "
    "unpaired rows are an error unless drop_unpaired := true. Measures and their parameters "
    "as in bootstrap. Exact paired Poisson bootstrap (one Poisson(m) draw per distinct pair "
    "of both rows' statistics seen m times, for both sides at once). Example: SELECT * FROM "
    "compare('runs', 'actual', 'predicted', model := 'model', id := 'id', baseline := 'A', "
    "measures := ['micro_f1', 'subset_accuracy'])."
)


def _repr() -> Macro:
    """``_mlsql_repr(x)``: a value as Python's ``repr`` shows it, as the Python call's messages do."""
    text = "CAST(x AS VARCHAR)"
    escaped = f"replace({text}, chr(92), chr(92) || chr(92))"
    return Macro(
        FILE,
        "_mlsql_repr",
        ("x",),
        f"""CASE WHEN x IS NULL THEN 'None'
         WHEN typeof(x) = 'BOOLEAN' THEN CASE WHEN CAST(x AS VARCHAR) = 'true' THEN 'True' ELSE 'False' END
         WHEN typeof(x) = 'VARCHAR' OR starts_with(typeof(x), 'ENUM') THEN
              CASE WHEN contains({text}, chr(39)) AND NOT contains({text}, '"') THEN '"' || {escaped} || '"'
                   ELSE chr(39) || replace({escaped}, chr(39), chr(92) || chr(39)) || chr(39) END
         ELSE CAST(x AS VARCHAR) END""",
        "A value as Python's repr shows it: 'text' (or \"it's\"), None, True, 2.5.",
        public=False,
    )


def _mcnemar_p() -> Macro:
    """``_mlsql_mcnemar_p(b, c)``: McNemar's exact two-sided p-value of b and c discordant ids."""
    n = "(CAST(b AS BIGINT) + CAST(c AS BIGINT))"
    k = "least(CAST(b AS BIGINT), CAST(c AS BIGINT))"
    term = f"exp(lgamma({n} + 1) - lgamma(i + 1) - lgamma({n} - i + 1) - {n} * ln(2))"
    return Macro(
        FILE,
        "_mlsql_mcnemar_p",
        ("b", "c"),
        f"""CASE WHEN {n} = 0 THEN 1.0
         ELSE least(1.0, 2 * list_sum(list_transform(range({k} + 1), lambda i: {term}))) END""",
        "McNemar's exact test: min(1, 2 P(X <= min(b, c))), X ~ Binomial(b + c, 1/2); 1 when "
        "b + c = 0. The binomial terms from lgamma, summed smallest first.",
        public=False,
    )


def _t_two_sided(q: Qualify) -> list[Macro]:
    """``_mlsql_t_two_sided(t, df)``: Student's two-sided p-value, as
    :func:`mlsql._resample.paired.t_two_sided` computes it (its helpers too): the continued
    fractions evaluated backwards by ``list_reduce`` over a fixed number of terms."""
    pairs = PAIRED.STIELTJES_PAIRS
    series = " ".join(
        f"{'+' if c > 0 else '-'} {abs(c)!r} / a ^ {2 * k + 1}"
        for k, c in enumerate(PAIRED._HALF_GAMMA)
    )
    odd = "-(a + j // 2) * (a + b + j // 2) * x / ((a + j - 1) * (a + j))"
    even = "(j // 2) * (b - j // 2) * x / ((a + j - 1) * (a + j))"
    beta_terms = f"CASE WHEN j % 2 = 0 THEN {even} ELSE {odd} END"
    g_odd = "(a + j // 2) * (b + j // 2) / ((a + j - 1) * (a + j))"
    g_even = "(j // 2) * (a + j // 2 - b) / ((a + j - 1) * (a + j))"
    g = f"CASE WHEN j % 2 = 0 THEN {g_even} ELSE {g_odd} END"
    terms = f"range({2 * pairs}, 0, -1)"
    front = f"{q('_mlsql_log_gamma_half_ratio')}(a) - 0.5 * ln(pi()) - a * {q('_mlsql_log1p')}(y)"
    x1 = "y / (1 + y)"
    return [
        Macro(
            FILE,
            "_mlsql_log1p",
            ("y",),
            "CASE WHEN 1 + y = 1 THEN y ELSE ln(1 + y) * y / ((1 + y) - 1) END",
            "ln(1 + y) to a few ulps (DuckDB has no log1p): ln(u) y / (u - 1), u = 1 + y.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_log_gamma_half_ratio",
            ("a",),
            f"CASE WHEN a < 25 THEN lgamma(a + 0.5) - lgamma(a) ELSE 0.5 * ln(a) {series} END",
            "ln(Γ(a + 1/2) / Γ(a)): lgamma's difference below 25, else its asymptotic series.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_beta_fraction",
            ("a", "b", "x"),
            f"1 / list_reduce(list_transform({terms}, lambda j: {beta_terms}), "
            "lambda r, d: 1 + d / r, 1.0::DOUBLE)",
            "The continued fraction of I_x(a, b), evaluated backwards over its first "
            f"{2 * pairs} terms.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_stieltjes_fraction",
            ("a", "b", "w"),
            f"1 / list_reduce(list_transform({terms}, lambda j: {g} * w), "
            "lambda r, d: 1 + d / r, 1.0::DOUBLE)",
            "2F1(1, b; a + 1; -w) by Gauss's continued fraction (positive terms), evaluated "
            f"backwards over its first {2 * pairs} terms.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_t_tail",
            ("y", "a"),
            f"""CASE WHEN y = 0 THEN 1.0 WHEN isinf(y) THEN 0.0
         WHEN 1 / (1 + y) < (a + 1) / (a + 2.5)
         THEN exp({front} - 0.5 * ln({x1})) * {q("_mlsql_stieltjes_fraction")}(a, 0.5, 1 / y) / a
         ELSE 1 - exp({front} + 0.5 * ln({x1})) * {q("_mlsql_beta_fraction")}(0.5, a, {x1}) / 0.5 END""",
            "I_x(a, 1/2) with x = 1 / (1 + y), from y (neither x nor 1 - x rounded).",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_t_two_sided",
            ("t", "df"),
            f"least(1.0, {q('_mlsql_t_tail')}(CAST(t AS DOUBLE) * t / df, CAST(df AS DOUBLE) / 2))",
            "Student's two-sided p-value P(|T| >= |t|) with df degrees of freedom, as scipy's "
            "ttest_rel (within 4e-13 for df 1 to 1e6).",
            public=False,
        ),
    ]


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """The table macros ``bootstrap`` and ``compare``, and the macros of each kind they call."""
    q = qualify
    sets = {"label_lists": lambda keys: _set_branches(q, keys)}
    values = [
        m
        for kind in V.KINDS
        for m in (
            V.bootstrap(q, kind, _settings(q, FUNC, kind), SIGNATURE, sets.get(kind)),
            V.compare(
                q,
                kind,
                _compare_settings(q, kind),
                _pair_checks(q),
                COMPARE_SIGNATURE,
                sets.get(kind),
            ),
        )
    ]
    return [
        *_setting_macros(q),
        _measures_macro(q),
        _poisson_cdf(),
        _half_binomial_cdf(),
        _repr(),
        _is_baseline_macro(),
        *_compare_setting_macros(q),
        _pairing_macro(q),
        V.poisson_one_macro(),
        _mcnemar_p(),
        *_t_two_sided(q),
        V.literal_macro(),
        V.buckets(q),
        V.buckets(
            q, "_mlsql_half_binomial_buckets", "_mlsql_half_binomial_cdf", "Binomial(m, 1/2)"
        ),
        _bootstrap(q),
        _compare(q),
        *values,
        *V.refused(FUNC, _settings(q, FUNC, "label_sets"), _entry(q, FUNC), SIGNATURE),
        *V.refused(
            COMPARE, _compare_settings(q, "label_sets"), _entry(q, COMPARE), COMPARE_SIGNATURE
        ),
        V.dispatched(q, FUNC, SIGNATURE, BOOTSTRAP_DESCRIPTION),
        V.dispatched(q, COMPARE, COMPARE_SIGNATURE, COMPARE_DESCRIPTION),
    ]
