"""Regression measures in DuckDB: the registry formulas over streaming aggregates.

Statistics (:class:`mlsql.measures.regression.RegressionStats`) are
aggregates over the rows where neither side is NULL: ``count``, ``fsum`` of
squared, absolute and relative errors (compensated: a plain ``sum`` drifted by
6e-12 relative at 10M rows) and, from the group's values (``list``), the
centred moments of y, ŷ and the error y - ŷ and rae's Σ|y - mean(y)|, each
summed with ``fsum`` too. (Not ``var_pop`` of the error: DuckDB 1.x raises
"VARPOP is out of range!" where the variance overflows, 2.x gives inf.)
"""

from __future__ import annotations

from mlsql._duckdb import classification_checks as CC
from mlsql._duckdb.library import Macro, Qualify
from mlsql._duckdb.ops import SqlOps
from mlsql._registry import Measure, measures
from mlsql._sqlexpr import Sql, lit
from mlsql.measures import regression as RG

FILE = "regression.sql"
DESCRIPTION = (
    "Regression: mse, rmse, mae, mape, rse, rrse, rae, pearson_corr, r2, explained_variance."
)
ORDER = 24
FAMILIES: tuple[str, ...] = ()  # rendered here


def _known_number(q: Qualify) -> list[Macro]:
    """``_mlsql_known_number`` and the row values of the regression measures' inputs built on
    it, each a macro so that a measure's body names its two inputs' values in a short call."""
    known, weighted = q("_mlsql_known_number"), q("_mlsql_weighted_known")
    weight = f"CASE WHEN {q('_mlsql_weight')}(w, func) IS NOT NULL THEN other END"

    def second(value: str) -> str:
        return f"{q('_mlsql_number_type_first')}(other, other_name, func, {value})"

    first_doc = " (the second input: checked after the first, other, which names the error)"
    rows = [  # name, parameters, body, doc
        (
            "_mlsql_known_number",
            ("x", "other", "name", "func"),
            f"CASE WHEN other IS NULL THEN NULL ELSE {q('_mlsql_number')}(x, name, func) END",
            "x as DOUBLE where the other side of the row is known, else NULL.",
        ),
        (
            "_mlsql_known_second",
            ("x", "other", "name", "other_name", "func"),
            second(f"{known}(x, other, name, func)"),
            f"_mlsql_known_number(x, other, name, func){first_doc}.",
        ),
        (
            "_mlsql_weighted_known",
            ("x", "other", "w", "name", "func"),
            f"{known}(x, {weight}, name, func)",
            "x as DOUBLE where the other side of the row and its weight w are known, else NULL.",
        ),
        (
            "_mlsql_weighted_known_second",
            ("x", "other", "w", "name", "other_name", "func"),
            second(f"{weighted}(x, other, w, name, func)"),
            f"_mlsql_weighted_known(x, other, w, name, func){first_doc}.",
        ),
    ]
    return [Macro(FILE, *row, public=False) for row in rows]


def side_value(q: Qualify, m: Measure, name: str, weight: str | None = None) -> str:
    """SQL: the row's value of input ``name`` of ``m`` as DOUBLE, NULL where the other input
    (or with ``weight``, the name of the weights, its weight) is unknown. The second input
    is checked after the first: of two inputs of a wrong type, the first argument is named."""
    other = "predicted" if name == "actual" else "actual"
    first = m.inputs[0] == name
    macro = {
        (True, False): "_mlsql_known_number",
        (False, False): "_mlsql_known_second",
        (True, True): "_mlsql_weighted_known",
        (False, True): "_mlsql_weighted_known_second",
    }[first, weight is not None]
    w = "" if weight is None else f"{weight}, "
    names = f"'{name}'" if first else f"'{name}', '{other}'"
    return f"{q(macro)}({name}, {other}, {w}{names}, '{m.name}')"


def stats(q: Qualify, m: Measure) -> RG.RegressionStats:
    """The statistics over the measure's inputs (actual and predicted, in its order)."""

    def side(name: str) -> str:
        return side_value(q, m, name)

    y, p = side("actual"), side("predicted")
    err = f"({y} - {p})"
    n = Sql(f"count({err})")
    values, means = {1: y, 2: p}, {1: f"avg({y})", 2: f"avg({p})", 3: f"avg({err})"}

    def comoment(i: int, j: int) -> Sql:  # over each known row centred on the rounded means
        if i == j == 3:  # the error y - ŷ, from the rows' (y, ŷ) pairs
            rows, di = f"list([{y}, {p}])", f"((v[1] - v[2]) - {means[3]})"
            dj = di
        elif i == j:  # one side: a list of its values
            rows, di = f"list({values[i]})", f"(v - {means[i]})"
            dj = di
        else:
            rows = f"list([{values[i]}, {values[j]}])"
            di, dj = (f"(v[{k}] - {means[k]})" for k in (i, j))
        total = f"list_aggregate(list_transform({rows}, lambda v: {{}}), 'fsum')".format
        return RG.centred_comoment(
            SqlOps(q), Sql(total(f"{di} * {dj}")), Sql(total(di)), Sql(total(dj)), n
        )

    return RG.RegressionStats(
        n=n,
        sse=Sql(f"fsum({err} * {err})"),
        sae=Sql(f"fsum(abs({err}))"),
        sape=Sql(f"fsum(abs({err}) / greatest(abs({y}), {lit(RG.EPSILON)}))"),
        var_actual=comoment(1, 1),
        var_predicted=comoment(2, 2),
        covariance=comoment(1, 2),
        var_error=comoment(3, 3),
        sad_actual=CC.let(
            Sql(f"list_avg(list_transform(list({y}), lambda v: v - {means[1]}))"),
            "c",
            f"list_aggregate(list_transform(list({y}), lambda v: abs((v - {means[1]}) - c)), 'fsum')",
        ),
    )


def weighted_stats(q: Qualify, m: Measure) -> RG.RegressionStats:
    """The statistics with each row weighted by ``sample_weight`` (scikit-learn's): sums of
    w x term, n = Σw, moments about the weighted means, from the group's (y, ŷ, w) list."""
    w = CC.weight(m.name, q)

    def side(name: str) -> str:
        return side_value(q, m, name, "sample_weight")

    y, p = side("actual"), side("predicted")
    wk = f"CASE WHEN {y} IS NOT NULL THEN {w} END"
    err = f"({y} - {p})"
    n = Sql(f"fsum({wk})")
    rows = f"list(struct_pack(y := {y}, p := {p}, w := {wk})) FILTER (WHERE {wk} IS NOT NULL)"
    means = {k: f"(fsum({wk} * {x}) / {n})" for k, x in (("y", y), ("p", p), ("e", err))}

    def d(k: str) -> str:
        return f"({'(v.y - v.p)' if k == 'e' else f'v.{k}'} - {means[k]})"

    def total(term: str) -> Sql:
        return Sql(f"list_aggregate(list_transform({rows}, lambda v: v.w * {term}), 'fsum')")

    def comoment(a: str, b: str) -> Sql:  # over each known row centred on the rounded means
        return RG.centred_comoment(
            SqlOps(q), total(f"{d(a)} * {d(b)}"), total(d(a)), total(d(b)), n
        )

    return RG.RegressionStats(
        n=n,
        sse=Sql(f"fsum({wk} * {err} * {err})"),
        sae=Sql(f"fsum({wk} * abs({err}))"),
        sape=Sql(f"fsum({wk} * abs({err}) / greatest(abs({y}), {lit(RG.EPSILON)}))"),
        var_actual=comoment("y", "y"),
        var_predicted=comoment("p", "p"),
        covariance=comoment("y", "p"),
        var_error=comoment("e", "e"),
        sad_actual=CC.let(Sql(f"({total(d('y'))} / {n})"), "c", total(f"abs({d('y')} - c)")),
        rows=Sql(f"count({wk})"),
    )


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """Every regression measure and its aliases."""
    out = _known_number(qualify)
    for m in measures(family=RG.FAMILY):
        if m.build is not None and m.available_in("duckdb"):
            weighted = weighted_stats(qualify, m)
            out += CC.render(m, qualify, ops, FILE, stats(qualify, m), weighted=weighted)
    return out
