"""Single-label (multiclass) measures in DuckDB.

The class-wise aggregates (``precision_score``, ``recall_score``,
``fbeta_score``, ``f1_score``, ``balanced_accuracy_score``,
``cohen_kappa_score``, ``matthews_corrcoef``) read the data once, in ONE
aggregate, ``_mlsql_class_lists(actual, predicted)``: three ``histogram()``
maps (actual, predicted, and actual where predicted right) give the sorted
classes and, aligned with them, each class's row total, column total and
diagonal. A hash aggregate per group, memory of the order of the number of
classes, usable in ``GROUP BY``. Each measure is then a macro over that struct,
``_mlsql_<name>_of(cl, ...)``, whose body is the registry formula run with
:class:`ClassAxisOps`: reductions over classes are list functions over
``range(1, len(classes) + 1)``. Weighted kappa also counts (actual, predicted)
pairs, ``_mlsql_class_pairs``, to weigh each row by its classes' positions; Bowker's
test of symmetry reads each pair's count beside its mirror's (a map lookup). With
``sample_weight`` the pairs are one (pair, weight) entry per row, and Bowker's test sums
them per pair that occurs first (a pass over the group's rows per pair).

Why aggregates over lists rather than table macros: they stay one pass, work
per group like any aggregate, and the class set is small next to the rows.
The per-class tables (``class_distribution``, ``confusion_matrix``,
``class_metrics``) are table macros over a source (table, view, file or
query) with optional ``"by"`` columns, written as plain GROUP BY queries with
the same formulas over columns.

``confusion_matrix_wide`` is not a macro: DuckDB cannot PIVOT on values read
from the data inside a macro. Run ``PIVOT confusion_matrix('t', 'actual',
'predicted') ON predicted USING sum(count) ORDER BY actual`` or
:func:`mlsql.confusion_matrix_wide`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from mlsql import _params as P
from mlsql._duckdb import classification_checks as CC
from mlsql._duckdb.classification_checks import let
from mlsql._duckdb.families.label_based import SCALAR_TYPES
from mlsql._duckdb.library import Macro, Qualify
from mlsql._duckdb.ops import SqlOps, aggregating
from mlsql._duckdb.source_sql import ABSENT, ALL, checked_source_sql, pick_sql
from mlsql._formulas import FORMULAS, formula_params
from mlsql._front.build import formula
from mlsql._front.inputs import COST_VALUE_MESSAGE, TWICE_IN_TABLE_MESSAGE
from mlsql._params import KAPPA_LABELS, KAPPA_WEIGHTS
from mlsql._registry import Measure, measures
from mlsql._sqlexpr import Sql, call, lit
from mlsql.measures import kappa_tests as K
from mlsql.measures import single_label as SL
from mlsql.measures.contingency import Table2x2

FILE = "single_label.sql"
DESCRIPTION = (
    "Single-label (multiclass) measures: accuracy, averaged precision/recall/F, kappa, MCC, "
    "class distribution, confusion matrix, per-class tables, cost-weighted error."
)
ORDER = 23
FAMILIES: tuple[str, ...] = ()  # rendered here

#: measures whose statistics are every class's counts
CLASS_MEASURES = SL.CLASS_MEASURES


# ------------------------------------------------------------------ the class axis
#: aggregating formulas given per-class lists: name -> positions of the per-class arguments
CLASSWISE = {"average": (0,), "weighted_average": (0, 1)}


def classwise_macros(q: Qualify) -> list[Macro]:
    """``_mlsql_classwise_<formula>(lists, ...)``: an aggregating formula over per-class lists."""
    out = []
    for name, per_class in CLASSWISE.items():
        params = [
            f"per_class_{p}" if i in per_class else p for i, p in enumerate(formula_params(name))
        ]
        bound = {i: f"v{i}" for i in per_class}  # each list bound once (a lambda variable)
        args = [Sql(f"{bound[i]}[k]") if i in per_class else Sql(p) for i, p in enumerate(params)]
        axis = ClassAxisOps(q, Sql(f"range(1, len({bound[per_class[0]]}) + 1)"))
        body = FORMULAS[name].raw(axis, *args)
        for i in reversed(per_class):
            body = let(params[i], bound[i], body)
        doc = (FORMULAS[name].raw.__doc__ or "").strip().splitlines()[0]
        out.append(
            Macro(
                FILE,
                f"_mlsql_classwise_{name}",
                tuple(params),
                str(body),
                f"Over classes: {doc}",
                public=False,
            )
        )
    return out


class ClassAxisOps(SqlOps):
    """Formula primitives over the class axis: values are expressions in the lambda variable.

    ``sum``, ``mean`` and ``count`` reduce ``x`` over the classes' ``positions`` (SQL of the
    list 1..n) with list functions; formulas that aggregate are inlined (their ``sum``
    becomes a list sum), the others stay calls of their macros.

    Examples
    --------
    >>> ops = ClassAxisOps(lambda n: n, Sql("range(1, 3 + 1)"))
    >>> str(ops.sum(Sql("k * 2")))
    'list_sum(list_transform(range(1, 3 + 1), lambda k: k * 2))'
    """

    def __init__(self, qualify: Qualify, positions: Sql, var: str = "k") -> None:
        super().__init__(qualify)
        self.positions = positions  # the classes' positions 1..n, as a list
        self.var = var

    def over(self, x: Any) -> Sql:
        """``x`` for every class, as a list."""
        return Sql(f"list_transform({self.positions}, lambda {self.var}: {lit(x)})")

    def call_formula(self, name: str, args: tuple[Any, ...]) -> Sql:
        if name in CLASSWISE:  # per-class values as lists, to a macro written for lists
            per_class = CLASSWISE[name]
            lists = [self.over(a) if i in per_class else a for i, a in enumerate(args)]
            return call(self.qualify(f"_mlsql_classwise_{name}"), *lists)
        if aggregating(name):
            return FORMULAS[name].raw(self, *args)
        return super().call_formula(name, args)

    def sum(self, x: Any) -> Sql:
        return call("list_sum", self.over(x))

    def mean(self, x: Any) -> Sql:
        return call("list_avg", self.over(x))

    def count(self, x: Any) -> Sql:
        return call("list_count", self.over(x))


def class_stats(
    q: Qualify,
    cl: Sql,
    pairs: Sql | None = None,
    weighted: bool = False,
    matrix: Sql | None = None,
    kappa_terms: bool = False,
) -> SL.ClassStats:
    """The per-class statistics of a ``_mlsql_class_lists`` struct ``cl`` (``weighted``: of
    ``_mlsql_weighted_class_lists``, its pairs one (key, weight) entry per row); ``matrix``:
    a DOUBLE[][] weights matrix over ``cl``'s classes (``cohen_kappa_score``'s labels);
    ``kappa_terms``: kappa's variance sums read from their macros (:func:`_kappa_terms`)."""
    positions = Sql(f"{q('_mlsql_class_positions')}({cl})")
    position = q("_mlsql_class_position")  # a class's position in cl's classes

    def at(field: str, var: str) -> Sql:
        return Sql(f"struct_extract({cl}, '{field}')[{var}]")

    def view(var: str) -> SL.ClassView:
        return SL.ClassView(Sql(f"({var} - 1)"), at("actual", var), at("predicted", var))

    def pair_sum(term: Callable[[SL.ClassView, SL.ClassView], Any]) -> Sql:
        inner = (
            f"list_sum(list_transform({positions}, lambda j: {lit(term(view('i'), view('j')))}))"
        )
        return Sql(f"list_sum(list_transform({positions}, lambda i: {inner}))")

    def row_pair_sum(term: Callable[[Any, Any], Any]) -> Sql:
        ia = Sql(f"({position}({cl}, e.key.a) - 1)")
        ip = Sql(f"({position}({cl}, e.key.p) - 1)")
        if weighted:
            return Sql(
                f"list_sum(list_transform({pairs}, lambda e: e.value * {lit(term(ia, ip))}))"
            )
        return Sql(
            f"list_sum(list_transform(map_entries({pairs}), lambda e: CAST(e.value AS BIGINT) * {lit(term(ia, ip))}))"
        )

    def cell_sum(term: Callable[[SL.ClassView, SL.ClassView], Any]) -> Sql:
        ia = Sql(f"{position}({cl}, e.key.a)")
        ip = Sql(f"{position}({cl}, e.key.p)")
        each = lit(term(view(ia), view(ip)))
        if weighted:
            return Sql(f"list_sum(list_transform({pairs}, lambda e: e.value * {each}))")
        return Sql(
            f"list_sum(list_transform(map_entries({pairs}), lambda e: CAST(e.value AS BIGINT) * {each}))"
        )

    def mirror_sum(term: Callable[[Any, Any], Any]) -> Sql:
        # each cell that occurs beside its mirror's count, (c, r), then the term of each: a
        # map (a, p) -> rows, or with weights one (key, weight) entry per row, summed per
        # cell first (one pass over the group's rows per cell)
        mirror = "struct_pack(a := e.key.p, p := e.key.a)"
        each = lit(term(Sql("x.c"), Sql("x.r")))
        if weighted:
            cells = (
                f"list_transform(list_distinct(list_transform({pairs}, lambda r: r.key)), "
                f"lambda c: struct_pack(key := c, value := list_sum(list_transform(list_filter("
                f"{pairs}, lambda r: r.key = c), lambda r: r.value))))"
            )
            found = (
                f"list_transform(m, lambda e: struct_pack(c := e.value, r := coalesce(list_sum("
                f"list_transform(list_filter(m, lambda f: f.key = {mirror}), lambda f: f.value)"
                f"), 0.0)))"
            )
            zero = "0.0"
        else:
            cells = str(pairs)
            found = (
                f"list_transform(map_entries(m), lambda e: struct_pack(c := CAST(e.value AS "
                f"BIGINT), r := CAST(coalesce(m[{mirror}], 0) AS BIGINT)))"
            )
            zero = "0"
        body = Sql(f"coalesce(list_sum(list_transform({found}, lambda x: {each})), {zero})")
        return let(cells, "m", body)

    def over(each: Callable[[SL.ClassView], Any]) -> Sql:  # Σ over the classes l
        return Sql(f"list_sum(list_transform({positions}, lambda l: {lit(each(view('l')))}))")

    return SL.ClassStats(
        n=Sql(f"struct_extract({cl}, 'n')"),
        index=Sql("(k - 1)"),
        actual=at("actual", "k"),
        predicted=at("predicted", "k"),
        correct=at("correct", "k"),
        axis=ClassAxisOps(q, positions),
        pair_sum=pair_sum,
        row_pair_sum=row_pair_sum,
        rows=Sql(f"struct_extract({cl}, 'rows')"),
        cell_sum=cell_sum,
        mirror_sum=mirror_sum,
        margin_cell_sum=SL.margins_of_cells(cell_sum, over),
        weight_at=None
        if matrix is None
        # cast: DuckDB 1.4 types an entry of a NULL list folded from a text as VARCHAR
        else lambda i, j: Sql(f"CAST({matrix}[{i} + 1][{j} + 1] AS DOUBLE)"),
        bind_kappa_terms=None if not kappa_terms else partial(_bind_kappa_terms, q, weighted),
        one_side=Sql(f"{q(ONE_SIDE)}({cl})") if kappa_terms else None,
    )


#: the macro of whether a row's classes are among the labels (or no labels are given)
IN_LABELS = "_mlsql_in_labels"


def _in_labels() -> Macro:
    """``_mlsql_in_labels(labels, actual, predicted)``: whether the row's two classes are
    among ``labels`` compared as text, or ``labels`` is NULL (the rows outside the labels
    are unknown rows, as in scikit-learn's confusion matrix). The labels are read unchecked
    (the check runs where the lists are aligned to them): the row expression is repeated
    many times in the class lists, and a check in it made DuckDB bind every kappa call 10x
    slower."""
    text = "TRY_CAST(labels AS VARCHAR[])"
    body = (
        f"({text} IS NULL OR (list_contains({text}, CAST(actual AS VARCHAR)) AND "
        f"list_contains({text}, CAST(predicted AS VARCHAR))))"
    )
    doc = "Whether actual and predicted are among the labels (as text), or labels is NULL."
    return Macro(FILE, IN_LABELS, ("labels", "actual", "predicted"), body, doc, public=False)


#: the macro of :func:`mlsql.measures.kappa_tests.one_side` over a class-lists struct
ONE_SIDE = "_mlsql_one_side"


def _one_side(q: Qualify) -> Macro:
    """``_mlsql_one_side(cl)``: whether a side of the class lists ``cl`` (of either kind,
    with or without sample weights) holds one class only, which the kappa tests read."""
    body = K.one_side(class_stats(q, Sql("cl")))
    doc = "Whether actual or predicted of the class lists cl holds one class only."
    return Macro(FILE, ONE_SIDE, ("cl",), str(body), doc, public=False)


def _kappa_terms_name(weights: str, weighted: bool) -> str:
    return f"_mlsql_kappa_terms_{weights}{'_weighted' if weighted else ''}_of"


def _kappa_terms_params(weights: str) -> tuple[str, ...]:
    return ("cl", "pairs", *(("matrix",) if weights == "matrix" else ()))


def _bind_kappa_terms(q: Qualify, weighted: bool, weights: str, body: Callable[..., Any]) -> Sql:
    """``body`` of kappa's variance sums under ``weights``, read once from their macro."""
    args = [Sql(p) for p in _kappa_terms_params(weights)]
    value = call(q(_kappa_terms_name(weights, weighted)), *args)
    var = "_mlsql_kappa_terms"
    terms = {n: Sql(f"{var}.{n}") for n in K.term_names(weights)}
    inner = body(terms, tuple(Sql(f"{var}.{v}") for v in K.VARIANCES))
    return Sql(f"list_transform([{value}], lambda {var}: {lit(inner)})[1]")


def _kappa_terms(q: Qualify, ops: SqlOps) -> list[Macro]:
    """``_mlsql_kappa_terms_<weights>[_weighted]_of(cl, pairs [, matrix])``: the sums of
    Cohen's kappa's variances (:func:`mlsql.measures.kappa_tests.terms`) and the variances
    (:func:`mlsql.measures.kappa_tests.variances`) as one struct, for each kind of weights,
    with and without sample weights. The six kappa tests read them here rather than each
    writing the sums out four times and the variances once a test and kind of weights."""
    out = []
    var = "_mlsql_t"
    for weighted in (False, True):
        for weights in ("none", "linear", "quadratic", "matrix"):
            matrix = Sql("matrix") if weights == "matrix" else None
            s = class_stats(q, Sql("cl"), Sql("pairs"), weighted, matrix)
            t = K.terms(ops, s, weights)
            terms = "struct_pack(" + ", ".join(f"{n} := {lit(v)}" for n, v in t.items()) + ")"
            bound = {n: Sql(f"{var}.{n}") for n in t}
            fields = {**bound, **dict(zip(K.VARIANCES, K.variances(bound, weights), strict=True))}
            packed = ", ".join(f"{n} := {lit(v)}" for n, v in fields.items())
            body = f"list_transform([{terms}], lambda {var}: struct_pack({packed}))[1]"
            doc = (
                f"The sums of Cohen's kappa's variances, weights {weights}"
                f"{', with sample weights' if weighted else ''}: "
                f"{', '.join(K.term_names(weights))}, and the variances "
                f"{', '.join(K.VARIANCES)}."
            )
            params = _kappa_terms_params(weights)
            out.append(
                Macro(FILE, _kappa_terms_name(weights, weighted), params, body, doc, public=False)
            )
    return out


def _class_lists(q: Qualify) -> list[Macro]:
    both = "actual IS NOT NULL AND predicted IS NOT NULL"
    align = let(
        Sql("classes"),
        "cs",
        """struct_pack(
        n := n,
        rows := n,
        classes := cs,
        actual := list_transform(cs, lambda x: CAST(coalesce(ha[x], 0) AS BIGINT)),
        predicted := list_transform(cs, lambda x: CAST(coalesce(hp[x], 0) AS BIGINT)),
        correct := list_transform(cs, lambda x: CAST(coalesce(hd[x], 0) AS BIGINT)))""",
    )
    return [
        Macro(
            FILE,
            "_mlsql_class_positions",
            ("cl",),
            "range(1, len(struct_extract(cl, 'classes')) + 1)",
            "The positions 1..n of the classes of class lists cl, as a list.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_class_position",
            ("cl", "x"),
            "list_position(struct_extract(cl, 'classes'), x)",
            "The position (from 1) of the class x among the classes of class lists cl.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_align_classes",
            ("n", "classes", "ha", "hp", "hd"),
            str(align),
            "Per class (sorted): row total, column total and diagonal from histograms.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_class_lists",
            ("actual", "predicted", "func"),
            f"""{q("_mlsql_align_classes")}(
        count(CASE WHEN {both} THEN 1 END),
        list_sort(list_distinct(list_concat(
            map_keys(histogram(CASE WHEN predicted IS NOT NULL THEN {q("_mlsql_same_kind")}(actual, predicted, func) END)),
            map_keys(histogram(CASE WHEN actual IS NOT NULL THEN predicted END))))),
        histogram(CASE WHEN predicted IS NOT NULL THEN {q("_mlsql_same_kind")}(actual, predicted, func) END),
        histogram(CASE WHEN actual IS NOT NULL THEN predicted END),
        histogram(CASE WHEN actual = predicted THEN actual END))""",
            "One pass: known rows n, the sorted classes and per class actual, predicted, correct.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_weighted_class_lists",
            ("actual", "predicted", "w", "func"),
            str(
                let(
                    f"""coalesce(list(struct_pack(
            a := {q("_mlsql_same_kind")}(actual, predicted, func), p := predicted,
            w := {q("_mlsql_weight")}(w, func)))
            FILTER (WHERE {both} AND {q("_mlsql_weight")}(w, func) IS NOT NULL), [])""",
                    "rows",
                    str(
                        let(
                            Sql(
                                "list_sort(list_distinct(list_concat("
                                "list_transform(rows, lambda r: r.a), "
                                "list_transform(rows, lambda r: r.p))))"
                            ),
                            "cs",
                            """struct_pack(
        n := coalesce(list_sum(list_transform(rows, lambda r: r.w)), 0.0),
        rows := len(rows),
        classes := cs,
        actual := list_transform(cs, lambda x: coalesce(list_sum(list_transform(
            list_filter(rows, lambda r: r.a = x), lambda r: r.w)), 0.0)),
        predicted := list_transform(cs, lambda x: coalesce(list_sum(list_transform(
            list_filter(rows, lambda r: r.p = x), lambda r: r.w)), 0.0)),
        correct := list_transform(cs, lambda x: coalesce(list_sum(list_transform(
            list_filter(rows, lambda r: r.a = x AND r.p = x), lambda r: r.w)), 0.0)))""",
                        )
                    ),
                )
            ),
            "The class lists with each row weighted by w: n and per-class totals are sums of"
            " weights (one pass over the group's rows per class).",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_weighted_class_pairs",
            ("actual", "predicted", "w", "func"),
            f"""coalesce(list(struct_pack(key := struct_pack(a := actual, p := predicted),
            value := {q("_mlsql_weight")}(w, func)))
        FILTER (WHERE {both} AND {q("_mlsql_weight")}(w, func) IS NOT NULL), [])""",
            "Each known row's (actual, predicted) pair and weight.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_classes_over",
            ("cl", "labels", "func"),
            f"""CASE WHEN labels IS NULL THEN cl ELSE list_transform(
        [{q("_mlsql_typed_universe")}(labels, cl.classes, func, element := true)], lambda u: struct_pack(
        n := cl.n,
        rows := cl.rows,
        classes := u,
        actual := list_transform(u, lambda x: coalesce(cl.actual[list_position(cl.classes, x)], 0)),
        predicted := list_transform(u, lambda x: coalesce(cl.predicted[list_position(cl.classes, x)], 0)),
        correct := list_transform(u, lambda x: coalesce(cl.correct[list_position(cl.classes, x)], 0))))[1] END""",
            "The class lists over the given labels, in their order (a label no row holds counts"
            " 0; labels of another kind than the classes: the labels= error); NULL labels: the"
            " lists as they are.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_class_pairs",
            ("actual", "predicted"),
            f"histogram(CASE WHEN {both} THEN struct_pack(a := actual, p := predicted) END)",
            "Rows per (actual, predicted) pair, as a map.",
            public=False,
        ),
        *_kappa_labels(q),
    ]


def _kappa_labels(q: Qualify) -> list[Macro]:
    """``_mlsql_as_list(x)``: one value (typed overloads) as a NULL text list, a list as it
    is. cohen_kappa_score reads its checked labels through it, so that the aggregate binds
    for labels of any type and the check, not DuckDB's binder, says what is wrong (the check
    raises before the list is used)."""
    doc = "A list as it is; one value (of any scalar type) as a NULL text list."
    return [
        *(
            Macro(
                FILE, "_mlsql_as_list", (f"x {t}",), "TRY_CAST(x AS VARCHAR[])", doc, public=False
            )
            for t in SCALAR_TYPES
        ),
        Macro(FILE, "_mlsql_as_list", ("x",), "x", doc, public=False),
    ]


def _class_measure(m: Measure, q: Qualify, ops: SqlOps) -> list[Macro]:
    """``_mlsql_<name>_of(cl [, pairs], params)`` and the public aggregate calling it."""
    pairs = m.name in SL.PAIR_MEASURES
    # a weights matrix comes with labels (cohen_kappa_score): the macro reads it as DOUBLE[][]
    over = any(p.check_key == KAPPA_LABELS.check_key for p in m.params)
    # the averages' labels (scikit-learn's): the class lists aligned to them, every row kept
    given = any(p.check_key == P.CLASS_LABELS.check_key for p in m.params)
    extra = ("pairs",) if pairs else ()
    inner_params = ("cl", *extra, *(("matrix",) if over else ()), *(p.name for p in m.params))

    def inner(suffix: str, weighted: bool) -> Macro:
        matrix = Sql("matrix") if over else None
        stats = class_stats(
            q, Sql("cl"), Sql("pairs") if pairs else None, weighted, matrix, m.name in K.KAPPA_TESTS
        )
        body = m.build(ops, stats, **{p.name: Sql(p.name) for p in m.params})
        name = f"_mlsql_{m.name}{suffix}_of"
        return Macro(FILE, name, inner_params, str(body), m.summary, public=False)

    params = CC.checked(m, q)
    if over or given:  # one value of labels= gets the check's error, not a Binder Error
        params["labels"] = call(q("_mlsql_as_list"), params["labels"])
    a, w = Sql("actual"), Sql("sample_weight")
    # predicted of a type that binds beside actual's (a text and an integer column get
    # mlsql's message at run time, not a Binder Error)
    p = call(q("_mlsql_label_as"), Sql("predicted"), a, Sql("predicted"), m.name)
    matrix: tuple[Sql, ...] = ()
    if over:  # rows outside the labels are unknown rows (scikit-learn's confusion matrix)
        inside = call(q(IN_LABELS), Sql("labels"), Sql("actual"), Sql("predicted"))
        a, p = Sql(f"CASE WHEN {inside} THEN actual END"), Sql(f"CASE WHEN {inside} THEN {p} END")
        matrix = (Sql("TRY_CAST(weights AS DOUBLE[][])"),)

    def public(weighted: bool) -> Sql:
        if weighted:
            lists = call(q("_mlsql_weighted_class_lists"), a, p, w, m.name)
            found = call(q("_mlsql_weighted_class_pairs"), a, p, w, m.name)
        else:
            lists = call(q("_mlsql_class_lists"), a, p, m.name)
            found = call(q("_mlsql_class_pairs"), a, p)
        name = f"_mlsql_{m.name}{'_weighted' if weighted and pairs else ''}_of"
        args = [Sql("cl"), *((found,) if pairs else ()), *matrix, *params.values()]
        if not (over or given):
            return let(lists, "cl", call(q(name), *args))
        # the lists bound, then aligned to the labels and bound again: a macro names its
        # argument once per use, and the aggregate's text is long
        aligned = call(q("_mlsql_classes_over"), Sql("found"), params["labels"], m.name)
        body = let(lists, "found", let(aligned, "cl", call(q(name), *args)))
        return matrix_guard(q, m, params, body) if over else body

    def macro(weighted: bool) -> Macro:
        body = str(CC.guard_zero_division(public(weighted), params))
        return Macro(FILE, m.name, CC.signature(m, weighted), body, m.summary)

    return [
        inner("", False),
        *([inner("_weighted", True)] if pairs else []),
        macro(False),
        macro(True),
        *CC.aliases(m, FILE, q),
    ]


def matrix_guard(q: Qualify, m: Measure, params: dict[str, Sql], body: Sql) -> Sql:
    """``body``, or the weights' error when a matrix comes without labels or its size is
    not theirs (the constraint's message, as Polars and Spark raise it)."""
    before, after = P.message(KAPPA_WEIGHTS, m.name, "{}").split("{}")
    shown = f"{q('_mlsql_shown')}(weights)"
    error = f"error({lit(before)} || {shown} || {lit(after)})"
    labels = params["labels"]
    wrong = (
        f"{params['weights']} = 'matrix' AND ({labels} IS NULL OR "
        f"len(TRY_CAST(weights AS DOUBLE[][])) <> len({labels}))"
    )
    return Sql(f"CASE WHEN {wrong} THEN {error} ELSE {body} END")


# ------------------------------------------------------------------ other statistics
def _known(a: str = "actual", p: str = "predicted") -> str:
    return f"{a} IS NOT NULL AND {p} IS NOT NULL"


def stats(q: Qualify, m: Measure, weighted: bool = False) -> Any:
    """The statistics of a measure that is not class-wise (``weighted``: each row counts its
    ``sample_weight``; n and the counts are then sums of weights, 0 over none)."""
    w = CC.weight(m.name, q)

    def tally(condition: str) -> Sql:
        if weighted:
            return Sql(f"coalesce(sum(CASE WHEN {condition} THEN {w} END), 0)")
        return Sql(f"count(CASE WHEN {condition} THEN 1 END)")

    if m.inputs == ("label",):
        param = next((p.name for p in m.params if p.name in CC.REQUIRED), "positive")

        one = f"{q('_mlsql_one_label')}(label, 'label', '{m.name}')"

        def value(x: Any) -> str:
            return f"{q('_mlsql_label_value')}(label, 'label', {lit(x)}, '{param}', '{m.name}')"

        if weighted:
            rows = f"list(struct_pack(l := {one}, w := {w})) FILTER (WHERE label IS NOT NULL)"
            largest = let(
                rows,
                "rows",
                "list_max(list_transform(list_distinct(list_transform(rows, lambda r: r.l)),"
                " lambda x: list_sum(list_transform(list_filter(rows, lambda r: r.l = x AND"
                " r.w IS NOT NULL), lambda r: r.w))))",
            )
            return SL.LabelStats(
                n=tally("label IS NOT NULL"),
                largest=largest,
                matching=lambda x: tally(f"{value(x)} = {one}"),
            )
        return SL.LabelStats(
            n=Sql(f"count({one})"),
            largest=Sql(f"list_max(map_values(histogram({one})))"),
            matching=lambda x: Sql(f"count(CASE WHEN {value(x)} = {one} THEN 1 END)"),
        )
    n = tally(_known())
    if m.name in ("accuracy", "error_rate"):
        same = f"{q('_mlsql_same_kind')}(actual, predicted, '{m.name}')"
        return SL.Agreement(n, tally(f"{same} = predicted"))
    if m.name == "class_error_rate":

        def table(label: Any) -> Table2x2:
            a = f"{q('_mlsql_same_kind')}(actual, predicted, '{m.name}')"
            v = f"{q('_mlsql_label_value')}(actual, 'actual', {lit(label)}, 'label', '{m.name}')"
            cell = lambda ca, cp: tally(  # noqa: E731
                f"{_known()} AND ({v} = {a}) = {ca} AND ({v} = predicted) = {cp}"
            )
            return Table2x2(
                cell("true", "true"),
                cell("false", "true"),
                cell("true", "false"),
                cell("false", "false"),
            )

        rows = Sql(f"count(CASE WHEN {_known()} THEN {w} END)") if weighted else None
        return SL.OneVsRest(n, table, rows)
    if m.name == "cost_error":
        factor = f" * {w}" if weighted else ""

        def total_cost(costs: Any) -> Sql:
            same = f"{q('_mlsql_same_kind')}(actual, predicted, '{m.name}')"
            # the checked map, cast to the columns' label type: costs of the other kind reach
            # the check's error when the query runs, not the binder's (no key of that type)
            checked = f"{q('_mlsql_cost_keys')}(actual, 'actual', {lit(costs)}, '{m.name}')"
            typed = f"cast_to_type({checked}, map([actual], [map([predicted], [1.0::DOUBLE])]))"
            return Sql(
                f"sum(CASE WHEN {_known()} THEN coalesce({typed}[actual][predicted], "
                f"CASE WHEN {same} = predicted THEN 0 ELSE 1 END){factor} END)"
            )

        return SL.CostStats(n, total_cost)
    raise KeyError(m.name)


def _hand_written(q: Qualify) -> list[Macro]:
    def one(func: str) -> str:
        """The input ``label``, checked to hold one label per row, for macro ``func``."""
        return f"{q('_mlsql_one_label')}(label, 'label', {lit(func)})"

    def extreme(sign: str, func: str) -> str:
        return (
            f"struct_extract(list_sort(list_transform(map_entries(histogram({one(func)})),\n"
            f"        lambda e: struct_pack(c := {sign}CAST(e.value AS BIGINT), k := e.key)))[1], 'k')"
        )

    def weighted_extreme(sign: str, func: str) -> str:
        """The class of the largest (sign '-') or smallest total weight; weight-0 classes out."""
        w = f"{q('_mlsql_weight')}(sample_weight, {lit(func)})"
        rows = f"list(struct_pack(l := {one(func)}, w := {w})) FILTER (WHERE label IS NOT NULL AND {w} IS NOT NULL)"
        totals = (
            "list_transform(list_distinct(list_transform(rows, lambda r: r.l)), lambda x:"
            " struct_pack(c := list_sum(list_transform(list_filter(rows, lambda r: r.l = x),"
            " lambda r: r.w)), k := x))"
        )
        ranked = (
            f"list_sort(list_transform(list_filter({totals}, lambda e: e.c > 0),"
            f" lambda e: struct_pack(c := {sign}e.c, k := e.k)))[1]"
        )
        return str(let(rows, "rows", f"struct_extract({ranked}, 'k')"))

    # a pair twice, or a cost that is no finite number: the errors of every engine's costs
    pairs = "list_transform(entries, lambda e: struct_pack(a := e.a, p := e.p))"
    twice = lit(TWICE_IN_TABLE_MESSAGE)
    finite = lit(COST_VALUE_MESSAGE.format(func="cost_map"))
    cost_map = f"""CASE WHEN len(list_distinct({pairs})) < len(entries) THEN error({twice})
         WHEN len(list_filter(entries, lambda e: e.cost IS NULL
              OR NOT isfinite(CAST(e.cost AS DOUBLE)))) > 0 THEN error({finite})
         ELSE map_from_entries(list_transform(list_distinct(list_transform(entries, lambda e: e.a)),
        lambda x: struct_pack(k := x, v := map_from_entries(list_transform(
            list_filter(entries, lambda e: e.a = x), lambda e: struct_pack(k := e.p, v := e.cost))))))
         END"""
    return [
        Macro(
            FILE,
            "majority_class",
            ("label",),
            extreme("-", "majority_class"),
            "The most frequent class (ties: the smallest); NULLs skipped.",
        ),
        Macro(
            FILE,
            "majority_class",
            ("label", "sample_weight"),
            weighted_extreme("-", "majority_class"),
            "The class of the largest total sample_weight (ties: the smallest); NULLs skipped.",
        ),
        Macro(
            FILE,
            "minority_class",
            ("label",),
            extreme("", "minority_class"),
            "The least frequent class that occurs (ties: the smallest); NULLs skipped.",
        ),
        Macro(
            FILE,
            "minority_class",
            ("label", "sample_weight"),
            weighted_extreme("", "minority_class"),
            "The class of the smallest total sample_weight above 0 (ties: the smallest); NULLs"
            " skipped.",
        ),
        Macro(
            FILE,
            "_mlsql_cost_map_of",
            ("entries",),
            cost_map,
            "A list of (a, p, cost) as the map a -> p -> cost.",
            public=False,
        ),
        Macro(
            FILE,
            "cost_map",
            ("actual", "predicted", "cost"),
            f"{q('_mlsql_cost_map_of')}(list(struct_pack(a := actual, p := predicted, cost := cost))\n"
            "        FILTER (WHERE actual IS NOT NULL AND predicted IS NOT NULL))",
            "A cost table's rows (actual, predicted, cost) as the nested map cost_error takes.",
        ),
    ]


# ------------------------------------------------------------------ table macros
def _columns(
    func: str,
    *names: str,
    q: Qualify,
    typed: dict[str, str] | None = None,
    outputs: Sequence[str] = (),
) -> str:
    """Select the group struct and the named input columns (case-insensitive) of ``source``;
    a named or ``by`` column the source lacks is table macro ``func``'s error, and so is a
    ``by`` that is no column names or names one of its ``outputs``. ``typed``: the SQL type a
    missing column of that name binds as (where overloads need one)."""
    typed = typed or {}
    by = CC.by_lowered(q)
    picks = ",\n               ".join(
        f"{pick_sql(q, n, f'{ABSENT}_{n}' if n in typed else ABSENT)} AS __mlsql_{n}" for n in names
    )
    by_check = CC.check_by(q, f"'{func}'", outputs)
    named = [(n, n) for n in names]
    source = checked_source_sql(q, named, f"'{func}'", CC.by_names(q), typed, by_check)
    return f"""SELECT struct_pack(*COLUMNS(lambda c: c = '{ALL}' OR list_contains({by}, lower(c)))) AS g,
               {picks}
        FROM {source}"""


def _row_weight(q: Qualify, func: str, weighted: bool) -> tuple[tuple[str, ...], str]:
    """(the ``sample_weight`` input to pick with :func:`_columns`, if ``weighted``; each row's
    weight in SQL: ``sample_weight`` checked by ``_mlsql_weight`` for ``func``, else 1)."""
    if not weighted:
        return (), "1"
    return ("sample_weight",), f"{q('_mlsql_weight')}(__mlsql_sample_weight, '{func}')"


KEEP = "lambda c: NOT starts_with(c, '__mlsql_')"


def _tables(q: Qualify, ops: SqlOps) -> list[Macro]:
    """The table macros, each twice: unweighted, and an overload taking ``sample_weight``
    (a column name) whose counts are sums of the rows' weights (DOUBLE)."""
    pairs = zip(_table_macros(q, ops, False), _table_macros(q, ops, True), strict=True)
    return [m for pair in pairs for m in pair]  # overloads of one name stand together


def _table_macros(q: Qualify, ops: SqlOps, weighted: bool) -> list[Macro]:
    same = q("_mlsql_same_kind")
    w_name = ("sample_weight",) if weighted else ()
    weight = f"{q('_mlsql_weight')}(__mlsql_sample_weight, '{{func}}')"
    w_col = f", {weight} AS w" if weighted else ""
    w_known = f" AND {weight} IS NOT NULL" if weighted else ""
    tally = "sum(w)" if weighted else "count(*)"
    one, zero = ("w", "0.0::DOUBLE") if weighted else ("1", "0")
    known = f"""known AS (
        SELECT g, {same}(__mlsql_actual, __mlsql_predicted, '{{func}}') AS a, __mlsql_predicted AS p{w_col}
        FROM ({_columns("{func}", "actual", "predicted", *w_name, q=q)})
        WHERE __mlsql_actual IS NOT NULL AND __mlsql_predicted IS NOT NULL{w_known})"""
    labels = f"({_columns('class_distribution', 'label', *w_name, q=q)})"
    if weighted:
        labels = f"(SELECT *{w_col.format(func='class_distribution')} FROM {labels})"
    counted = SL.ClassCount(Sql("count"), Sql("n"))
    share = formula("class_distribution")(ops, counted)["share"]
    distribution = f"""WITH counts AS (
        SELECT g, {q("_mlsql_one_label")}(__mlsql_label, 'label', 'class_distribution') AS class,
               {tally} AS count
        FROM {labels}
        WHERE __mlsql_label IS NOT NULL{w_known.format(func="class_distribution")} GROUP BY g, __mlsql_label)
    SELECT COLUMNS({KEEP}) FROM (
        SELECT unnest(g), class, count, {share} AS share, g AS __mlsql_g
        FROM (SELECT *, sum(count) OVER (PARTITION BY g) AS n FROM counts))
    ORDER BY __mlsql_g, class"""
    confusion = f"""WITH {known.format(func="confusion_matrix")},
    classes AS (SELECT DISTINCT g, a AS class FROM known UNION SELECT DISTINCT g, p FROM known),
    cells AS (SELECT g, a, p, {tally} AS n FROM known GROUP BY g, a, p)
    SELECT COLUMNS({KEEP}) FROM (
        SELECT unnest(ca.g), ca.class AS actual, cp.class AS predicted,
               coalesce(cells.n, 0) AS count, ca.g AS __mlsql_g, ca.class AS __mlsql_a,
               cp.class AS __mlsql_p
        FROM classes ca JOIN classes cp ON ca.g IS NOT DISTINCT FROM cp.g
        LEFT JOIN cells ON cells.g IS NOT DISTINCT FROM ca.g AND cells.a = ca.class
                           AND cells.p = cp.class)
    ORDER BY __mlsql_g, __mlsql_a, __mlsql_p"""
    row = SL.ClassRow(*(Sql(k) for k in ("n", "r", "c", "d")))
    columns = formula("class_metrics")(ops, row, beta=Sql("b"), zero_division=Sql("zd"))

    def total(x: str) -> str:
        """A class's count: BIGINT as the other tables' and engines' (DuckDB sums integers to
        HUGEINT), or a sum of weights."""
        return f"sum({x})" if weighted else f"sum({x})::BIGINT"

    select = ",\n               ".join(f"{expr} AS {name}" for name, expr in columns.items())
    metrics = f"""WITH {known.format(func="class_metrics")},
    params AS (SELECT {q("_mlsql_check_beta")}(beta, 'class_metrics') AS b,
                      {q("_mlsql_check_zero_division")}(zero_division, 'class_metrics') AS zd),
    totals AS (SELECT g, {tally} AS n FROM known GROUP BY g),
    per_class AS (
        SELECT g, class, {total("is_a")} AS r, {total("is_p")} AS c, {total("hit")} AS d FROM (
            SELECT g, a AS class, {one} AS is_a, {zero} AS is_p, CASE WHEN a = p THEN {one} ELSE {zero} END AS hit
            FROM known
            UNION ALL
            SELECT g, p, {zero}, {one}, {zero} FROM known)
        GROUP BY g, class)
    SELECT COLUMNS({KEEP}) FROM (
        SELECT unnest(per_class.g), class,
               {select},
               per_class.g AS __mlsql_g
        FROM per_class JOIN totals ON per_class.g IS NOT DISTINCT FROM totals.g CROSS JOIN params)
    ORDER BY __mlsql_g, class"""
    return [
        Macro(
            FILE,
            "class_distribution",
            ("source", "label", *w_name, '"by" := NULL'),
            distribution,
            "One row per class (and group): class, count, share of the known rows.",
            table=True,
        ),
        Macro(
            FILE,
            "confusion_matrix",
            ("source", "actual", "predicted", *w_name, '"by" := NULL'),
            confusion,
            "The confusion matrix, long: actual, predicted, count (every cell, zeros too).",
            table=True,
        ),
        Macro(
            FILE,
            "class_metrics",
            (
                "source",
                "actual",
                "predicted",
                *w_name,
                "beta := 1.0",
                "zero_division := 0",
                '"by" := NULL',
            ),
            metrics,
            "One row per class (and group): tp, fp, fn, tn, support, precision, recall, fbeta, "
            "class_error_rate.",
            table=True,
        ),
    ]


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """Class lists, every single-label measure, the hand-written ones and the tables."""
    out = [*_class_lists(qualify), *classwise_macros(qualify), *_hand_written(qualify)]
    out += [*_kappa_terms(qualify, ops), _one_side(qualify), _in_labels()]
    for m in measures(family=SL.FAMILY):
        if m.build is None or m.kind == "table" or not m.available_in("duckdb"):
            continue  # a table: _tables lowers it (class_metrics' rows are its formula)
        if m.name in CLASS_MEASURES:
            out += _class_measure(m, qualify, ops)
        else:
            weighted = stats(qualify, m, weighted=True)
            out += CC.render(m, qualify, ops, FILE, stats(qualify, m), weighted=weighted)
    return out + _tables(qualify, ops)
