"""``evaluate`` as a DuckDB SQL table macro: every listed measure in one ``GROUP BY``.

``FROM evaluate('preds', 'actual', 'predicted', measures := ['micro_f1', 'micro_fbeta'],
"by" := ['model'], beta := 2)`` gives what the Python call ``mlsql.evaluate`` gives: one
row per group and measure (the ``by`` columns, measure, estimate), ordered by group (NULL
first) and the measures' order.

A SQL macro takes no list of (name, parameters) pairs: ``measures`` is a list of names, and
each measure parameter is one named argument of ``evaluate`` (``beta``, ``zero_division``,
``average``, ``k``, ...) that applies to every listed measure taking it, as ``bootstrap``'s
do. A measure with two parameter sets is two calls (``UNION ALL``). The ``measure``
column shows the parameters applied, as the Python call shows a pair:
``micro_fbeta(beta=2)``.

The macro builds the query text from its arguments (each a constant) and runs it with
``query()``: the measures' own aggregate macros over ``_mlsql_evaluate_rows`` (the source
read and checked as ``bootstrap`` reads it), then unpivoted. The regression measures, whose
aggregate macros hold each group's values until its mean is known (``list``), run instead as
``mlsql.evaluate``'s grouped passes, built by the same code
(:mod:`mlsql._duckdb.evaluate_regression`): the query starts with the passes' common table
expressions (the means per group, joined back to the rows), and their centred sums are
aggregates of the same ``GROUP BY`` as the other measures. Text templates with holes
(:func:`_hole`), filled at run time with ``replace``, stand for what the call decides: the
rows read, the first regression measure (whose checks' messages name it), the parameters. Names it does not take are
refused with the Python call's messages (:mod:`mlsql._evaluate.front`), the did-you-mean
included (DuckDB's ``levenshtein``, as :func:`mlsql._evaluate.front.distance`).
"""

from __future__ import annotations

from collections.abc import Iterable

from mlsql._duckdb import classification_checks as CC
from mlsql._duckdb import evaluate_regression as ER
from mlsql._duckdb.library import Macro, Qualify, check_macro, sql_message
from mlsql._duckdb.ops import SqlOps
from mlsql._duckdb.source_sql import ALL, checked_source_sql, name_or, pick_sql
from mlsql._evaluate import front as EV
from mlsql._registry import REGISTRY, measures
from mlsql._resample.measures import ENTRY_MESSAGE
from mlsql._sqlexpr import Sql, call, lit
from mlsql._weights import SAMPLE_WEIGHT
from mlsql.measures import regression as RG

FILE = "evaluate.sql"
DESCRIPTION = (
    "evaluate: every listed aggregate measure per group in one GROUP BY, one row per group "
    "and measure."
)
ORDER = 60
FAMILIES: tuple[str, ...] = ()  # rendered here
ROWS = "_mlsql_evaluate_rows"
#: measures outside the ranking and Hivemall families whose parameters come by position
POSITIONAL = ("hamming_loss",)


def by_position(name: str) -> list[str]:
    """The parameters a measure's macros take by position, before ``sample_weight``:
    Hivemall's ``k`` of the ranking measures (``precision_at(a, b, 10, sample_weight := w)``),
    ``fmeasure``'s ``options`` and ``hamming_loss``'s ``n_labels``; every other parameter is
    named (tests/test_evaluate.py checks this against the macros' own parameter lists).

    Examples
    --------
    >>> by_position("precision_at"), by_position("fmeasure"), by_position("micro_fbeta")
    (['k'], ['options'], [])
    >>> by_position("hamming_loss")
    ['n_labels']
    """
    m = REGISTRY[name]
    if m.family in ("ranking", "hivemall") or name in POSITIONAL:
        return [p.name for p in m.params]
    return []


def params() -> list[str]:
    """Every parameter of the measures evaluate takes, sorted: one argument of the macro each."""
    taken = {p.name for n in EV.allowed() for p in REGISTRY[n].params}
    return sorted(taken - set(EV.OWN_PARAMS))


def signature() -> tuple[str, ...]:
    """The macro's parameters."""
    return (
        "source",
        "actual",
        "predicted",
        "measures := NULL",
        '"by" := NULL',
        f"{SAMPLE_WEIGHT} := NULL",
        *(f"{p} := NULL" for p in params()),
    )


def _names(names: list[str]) -> str:
    return "[" + ", ".join(str(lit(n)) for n in names) + "]::VARCHAR[]"


def _map(pairs: dict[str, str]) -> str:
    keys = ", ".join(str(lit(k)) for k in pairs)
    values = ", ".join(str(lit(v)) for v in pairs.values())
    return f"MAP([{keys}]::VARCHAR[], [{values}]::VARCHAR[])"


def _rows(q: Qualify) -> Macro:
    """The source's rows, checked: the group struct, the inputs and the checked weight."""
    func = str(lit(EV.FUNC))
    named = [
        ("actual", "actual"),
        ("predicted", name_or("predicted", "actual")),
        (SAMPLE_WEIGHT, name_or(SAMPLE_WEIGHT, "actual")),
    ]
    by = CC.by_lowered(q)
    source = checked_source_sql(
        q, named, func, CC.by_names(q), None, CC.check_by(q, func, EV.COLUMNS)
    )
    weight = (
        f"CASE WHEN {SAMPLE_WEIGHT} IS NOT NULL THEN {q('_mlsql_weight')}(__mlsql_w0, {func}) END"
    )
    body = f"""SELECT __mlsql_g, __mlsql_a, __mlsql_p, {weight} AS __mlsql_w FROM (
    SELECT struct_pack(*COLUMNS(lambda c: c = '{ALL}' OR list_contains({by}, lower(c)))) AS __mlsql_g,
           {pick_sql(q, "actual")} AS __mlsql_a,
           {pick_sql(q, name_or("predicted", "actual"))} AS __mlsql_p,
           {pick_sql(q, SAMPLE_WEIGHT)} AS __mlsql_w0
    FROM {source})"""
    return Macro(
        FILE,
        ROWS,
        ("source", "actual", "predicted", '"by"', SAMPLE_WEIGHT),
        body,
        "evaluate's rows: the group struct, actual, predicted and the checked weight.",
        public=False,
        table=True,
    )


def _hole(name: str) -> str:
    """A place in a query text template that the macro fills at run time (``replace``).

    Examples
    --------
    >>> _hole("rows")
    '{{mlsql:rows}}'
    """
    return f"{{{{mlsql:{name}}}}}"


def _case(choices: dict[str, str]) -> str:
    """SQL of ``CASE WHEN condition THEN text ...``: the text (a literal) of the first true
    condition."""
    return "CASE " + " ".join(f"WHEN {c} THEN {lit(t)}" for c, t in choices.items()) + " END"


def _regression(
    q: Qualify, ops: SqlOps, canonical: dict[str, str], rows: str
) -> tuple[str, str, str, str]:
    """The regression measures as ``mlsql.evaluate`` runs them, grouped passes of the same
    SQL text builders (:mod:`mlsql._duckdb.evaluate_regression`); ``rows`` is SQL of the
    text of the rows read. SQL of: whether any is listed; the text of the passes' common
    table expressions; the text of the rows the ``GROUP BY`` reads (the rows joined to their
    group's means); the text of a measure ``m``'s value over them (NULL for a measure of
    another family).

    The texts are templates made here, one for each case the call decides (weighted or not,
    ``rae`` listed or not, the first regression measure's first input), their holes filled
    at run time: the first regression measure's name (its checks' messages name it), the
    parameters, and the rows read last (a user's text: nothing is replaced in it).
    """
    names = {a: n for a, n in canonical.items() if REGISTRY[n].family == RG.FAMILY}
    listed = f"list_filter(measures, lambda m: list_contains({_names(list(names))}, m))"
    weighted = f"{SAMPLE_WEIGHT} IS NOT NULL"
    shifted = "list_contains(measures, 'rae')"
    group = ["__mlsql_g"]
    columns = {"actual": "__mlsql_a", "predicted": "__mlsql_p"}
    firsts = {}  # the first regression measure's first input -> its rows' text, by weighting
    for i in sorted({EV.roles(REGISTRY[n])[0] for n in names.values()}):
        taking = [a for a, n in names.items() if EV.roles(REGISTRY[n])[0] == i]
        for w in (True, False):
            weight = "__mlsql_w" if w else None
            text = ER.rows_sql(
                _hole("name"),
                i,
                columns,
                weight,
                group,
                f"FROM {_hole('rows')}",
                q=q,
                keep=("__mlsql_a", "__mlsql_p", "__mlsql_w"),
            )
            firsts[f"({weighted}) = {w} AND list_contains({_names(taking)}, {listed}[1])"] = text
    passes = {
        (w, s): ER.passes_sql(_hole("source"), group, w, s)
        for w in (True, False)
        for s in (True, False)
    }
    ctes = _case(
        {
            f"({weighted}) = {w} AND ({shifted}) = {s}": ", ".join(c)
            for (w, s), (c, _) in passes.items()
        }
    )
    ctes = f"replace({ctes}, {lit(_hole('source'))}, {_case(firsts)})"
    ctes = (
        f"replace({ctes}, {lit(_hole('name'))}, {q('_mlsql_literal')}({_map(names)}[{listed}[1]]))"
    )
    ctes = f"replace({ctes}, {lit(_hole('rows'))}, {rows})"
    read = _case({shifted: passes[(False, True)][1], "true": passes[(False, False)][1]})
    values = {}
    for w in (True, False):
        sums = ER.sums(w, True, ops)  # rae's Σ|y - mean(y)| reads the shift rae's passes add
        texts = {}
        for a, n in names.items():
            m = REGISTRY[n]
            params = {
                p.name: call(q(check_macro(p)), Sql(_hole(p.name)), n)
                if p.constraint is not None
                else Sql(_hole(p.name))
                for p in m.params
            }
            texts[a] = ER.measure_sql(m, sums, params, ops)
        values[w] = f"{_map(texts)}[m]"
    value = f"CASE WHEN {weighted} THEN {values[True]} ELSE {values[False]} END"
    for p in sorted({x.name for n in names.values() for x in REGISTRY[n].params}):
        given = (
            f"CASE WHEN {p} IS NULL THEN {lit(str(lit(_default(p, names.values()))))} "
            f"ELSE {q('_mlsql_literal')}({p}) END"
        )
        value = f"replace({value}, {lit(_hole(p))}, {given})"
    return f"len({listed}) > 0", ctes, read, value


def _check(q: Qualify) -> str:
    """SQL (a lambda over a measure name ``m``) of NULL, or of the error on a name evaluate
    does not take: no measure of mlsql's (with the nearest name), or no aggregate."""
    allowed = EV.allowed()
    known = {a: m.name for m in measures() for a in (m.name, *m.aliases)}
    taken = _names([a for a, n in known.items() if n in allowed])
    nearest = (
        f"list_sort(list_transform({_names(sorted(allowed))}, "
        "lambda n: struct_pack(d := levenshtein(m, n), n := n)))[1]"
    )
    # the templates quote the names themselves ({name!r}): the holes get the bare names
    hint = (
        f"CASE WHEN {nearest}.d <= {EV.CLOSE} "
        f"THEN {sql_message(EV.HINT.format(close='{}'), f'{nearest}.n')} ELSE '' END"
    )
    listed = ", ".join(allowed)
    unknown = sql_message(
        EV.UNKNOWN_MESSAGE.format(func=EV.FUNC, name="{}", hint="{}", allowed=listed),
        "m",
        hint,
    )
    reasons = {
        a: EV.NOT_NUMBERS.get(n) or EV.KIND_REASONS[REGISTRY[n].kind]
        for a, n in known.items()
        if n not in allowed
    }
    refused = sql_message(
        EV.REFUSED_MESSAGE.format(func=EV.FUNC, name="{}", why="{}", allowed=listed),
        "m",
        f"{_map(reasons)}[m]",
    )
    return (
        f"lambda m: CASE WHEN m IS NULL OR NOT list_contains({_names(list(known))}, m) "
        f"THEN error({unknown}) WHEN NOT list_contains({taken}, m) THEN error({refused}) END"
    )


def _evaluate(q: Qualify, ops: SqlOps) -> Macro:
    allowed = EV.allowed()
    canonical = {a: m.name for m in measures() for a in (m.name, *m.aliases) if m.name in allowed}
    qualified = _map({a: str(q(n)) for a, n in canonical.items()})
    literal = q("_mlsql_literal")
    repr_ = q("_mlsql_repr")

    def taking(p: str, positional: bool) -> str:
        names = [
            a
            for a, n in canonical.items()
            if p in {x.name for x in REGISTRY[n].params} and (p in by_position(n)) == positional
        ]
        return f"list_contains({_names(names)}, m)"

    first = [a for a, n in canonical.items() if EV.roles(REGISTRY[n]) == ("predicted", "actual")]
    alone = [a for a, n in canonical.items() if len(REGISTRY[n].inputs) == 1]
    inputs = (
        f"CASE WHEN list_contains({_names(first)}, m) THEN '__mlsql_p, __mlsql_a' "
        f"WHEN list_contains({_names(alone)}, m) THEN '__mlsql_a' "
        "ELSE '__mlsql_a, __mlsql_p' END"
    )
    positional = "".join(
        f" || CASE WHEN {taking(p, True)} THEN ', ' || CASE WHEN {p} IS NULL THEN "
        f"{lit(str(lit(_default(p))))} ELSE {literal}({p}) END ELSE '' END"
        for p in params()
    )
    weight = (
        f" || CASE WHEN {SAMPLE_WEIGHT} IS NOT NULL THEN ', sample_weight := __mlsql_w' ELSE '' END"
    )
    named = "".join(
        f" || CASE WHEN {p} IS NOT NULL AND {taking(p, False)} "
        f"THEN ', {p} := ' || {literal}({p}) ELSE '' END"
        for p in params()
    )
    needs_predicted = _names([a for a in canonical if a not in alone])
    predicted = (
        f"CASE WHEN len(list_filter(measures, lambda m: list_contains({needs_predicted}, m))) > 0 "
        f"THEN {literal}(predicted) ELSE 'NULL' END"
    )
    by = CC.by_names(q)
    lowered = CC.by_lowered(q)
    rows = (
        f"'{q(ROWS)}(' || {literal}(source) || ', ' || {literal}(actual) || ', ' || "
        f"{predicted} || ', ' || {literal}(\"by\") || ', ' || {literal}({SAMPLE_WEIGHT}) || ')'"
    )
    regression, ctes, passes, value = _regression(q, ops, canonical, rows)
    call = (
        f"coalesce({value}, coalesce({qualified}[m], 'NULL') || '(' || {inputs}{positional}"
        f"{weight}{named} || ')')"
    )
    shown = ", ".join(
        f"CASE WHEN {p} IS NOT NULL AND ({taking(p, True)} OR {taking(p, False)}) "
        f"THEN '{p}=' || {repr_}({p}) END"
        for p in params()
    )
    # the parameters applied, in parentheses; none (string_agg of no text is NULL): nothing
    applied = f"list_aggr(list_filter([{shown}], lambda x: x IS NOT NULL), 'string_agg', ', ')"
    label = f"m || coalesce('(' || {applied} || ')', '')"
    item = (
        "'struct_pack(__mlsql_i := ' || i || ', measure := ' || "
        f"{literal}({label}) || ', estimate := CAST(' || {call} || ' AS DOUBLE))'"
    )
    items = f"array_to_string(list_transform(measures, lambda m, i: {item}), ', ')"
    entry = sql_message(ENTRY_MESSAGE.format(func=EV.FUNC, got="{}"), f"{repr_}(measures)")
    checked = (
        f"CASE WHEN measures IS NULL OR NOT starts_with(typeof(measures), 'VARCHAR[') "
        f"OR len(measures) = 0 THEN error({entry}) "
        f"ELSE coalesce(list_max(list_transform(measures, {_check(q)})), '') END"
    )
    group = f"CASE WHEN len(coalesce({by}, [])) > 0 THEN ' GROUP BY __mlsql_g' ELSE '' END"
    with_ = f"CASE WHEN {regression} THEN 'WITH ' || {ctes} || ' ' ELSE '' END"
    source = f"CASE WHEN {regression} THEN {passes} ELSE {rows} END"
    text = (
        f"{checked} || {with_} || 'SELECT COLUMNS(lambda c: c <> ''{ALL}'' AND NOT starts_with(c, ''__mlsql_'')) "
        "FROM (SELECT unnest(__mlsql_g), 0 AS __mlsql_n, unnest(__mlsql_v, recursive := true) FROM ("
        "SELECT first(__mlsql_g) AS __mlsql_g, [' || "
        f"{items} || '] AS __mlsql_v FROM ' || {source} || {group} || ')) "
        "ORDER BY COLUMNS(lambda c: c = ''__mlsql_n'' OR list_contains(' || "
        f"{literal}({lowered}) || ', lower(c))) NULLS FIRST, __mlsql_i'"
    )
    doc = (
        "Every listed aggregate measure per group, in one GROUP BY: the by columns, measure, "
        "estimate (DOUBLE), ordered by group (NULL first) and the measures' order. measures: "
        "a list of names; each measure parameter (beta, zero_division, average, k, ...) "
        "applies to every listed measure taking it. Memory grows with the groups (and their "
        "classes, labels or cells), not the rows: the regression measures run as grouped passes "
        "(the means per group, then centred sums), as mlsql.evaluate runs them; the others hold "
        "per group what their aggregates hold (counts for the set and class measures, the "
        "rows' values for the sort-based AUC, AP and the medians), as in mlsql.evaluate. Example: SELECT * FROM evaluate('preds', "
        "'actual', 'predicted', measures := ['micro_f1', 'micro_fbeta'], \"by\" := ['model'], "
        "beta := 2)."
    )
    return Macro(FILE, EV.FUNC, signature(), f"FROM query({text})", doc, table=True)


def _default(p: str, among: Iterable[str] | None = None) -> object:
    """The default of parameter ``p`` where the measures ``among`` (those evaluate takes if
    None) take it: one value, or None."""
    names = EV.allowed() if among is None else among
    defaults = {x.default for n in names for x in REGISTRY[n].params if x.name == p}
    return next(iter(defaults)) if len(defaults) == 1 else None


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """The table macro ``evaluate`` and the rows it reads."""
    return [_rows(qualify), _evaluate(qualify, ops)]
