"""``mlsql.evaluate`` of the regression measures in bounded memory: the means first, then sums.

A regression macro centres y and ŷ on the group's mean to keep its sums of
squares exact far from zero (:mod:`mlsql.measures.regression`); as one
aggregate it must hold the group's values until the mean is known (``list``,
:mod:`mlsql._duckdb.families.regression`). ``evaluate`` knows the whole query,
so it runs the same statistics as grouped passes over the rows instead, as
Spark's does (:mod:`mlsql.spark.evaluate_regression`):

1. the rows' checked y, ŷ (and weight), each checked by the macros' own
   checks (the same messages as the measure's macro);
2. the (weighted) means of y, ŷ and y - ŷ per group, joined back to the rows
   (null-safe on the group keys);
3. with ``rae``: the mean of y - mean(y) per group (the correction of the
   mean's rounding that Σ|y - mean(y)| takes), joined back too;
4. every measure's statistics as ``fsum`` over the rows, then the registry's
   formulas.

Each pass is a ``GROUP BY`` of a few numbers per group: memory grows with the
groups, never with the rows. The sums add the same centred terms as the
macros' lists, in another order: the values agree to rounding.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mlsql._duckdb.library import check_macro
from mlsql._duckdb.ops import SqlOps
from mlsql._evaluate import front as EV
from mlsql._front.build import checked_params
from mlsql._registry import Measure
from mlsql._sqlexpr import Sql, call, lit, quote_ident
from mlsql.measures import regression as RG

_Y, _P, _W = "__mlsql_y", "__mlsql_pr", "__mlsql_wk"
_MY, _MP, _ME, _SHIFT = "__mlsql_my", "__mlsql_mp", "__mlsql_me", "__mlsql_shift"


def _same(name: str) -> str:
    return name


OPS = SqlOps(_same)


def applies(item: EV.Item) -> bool:
    """Whether ``item`` is a regression measure (run as grouped passes).

    Examples
    --------
    >>> from mlsql._evaluate import front as EV
    >>> [applies(i) for i in EV.request(["a", "p"], "a", "p", ["r2", "mae"], None, None).items]
    [True, True]
    """
    return item.measure.family == RG.FAMILY


def rows_sql(
    name: str,
    first_input: str,
    columns: dict[str, str],
    weight: str | None,
    groups: Sequence[str],
    clause: str,
    *,
    q: Callable[[str], str] = _same,
    keep: Sequence[str] = (),
) -> str:
    """The rows' group columns (and the columns ``keep``) and checked y, ŷ (NULL unless the
    row is known) and weight: the checks of the regression measure's macro (``name``, SQL
    text of its name; ``first_input``, the input it takes first), so its messages.

    Examples
    --------
    >>> rows = rows_sql("'mse'", "actual", {"actual": "a", "predicted": "b"}, None, ["g"], "FROM t")
    >>> rows.split(" AS ")[0]
    "SELECT g, _mlsql_known_number(a, b, 'actual', 'mse')"
    >>> rows.split(" AS ")[-1]
    '__mlsql_pr FROM t'
    """

    def side(role: str) -> str:
        other = columns["predicted" if role == "actual" else "actual"]
        if weight is not None:
            other = f"CASE WHEN {weight} IS NOT NULL THEN {other} END"
        value = f"{q('_mlsql_known_number')}({columns[role]}, {other}, {lit(role)}, {name})"
        if role == first_input:
            return value
        return (
            f"{q('_mlsql_number_type_first')}({columns[first_input]}, {lit(first_input)}, "
            f"{name}, {value})"
        )

    cols = [*groups, *keep, f"{side('actual')} AS {_Y}", f"{side('predicted')} AS {_P}"]
    if weight is not None:
        cols.append(f"{weight} AS {_W}")
    inner = f"SELECT {', '.join(cols)} {clause}"
    if weight is None:
        return inner
    # a weight counts where the row is known (y is NULL otherwise)
    return f"SELECT * REPLACE (CASE WHEN {_Y} IS NOT NULL THEN {_W} END AS {_W}) FROM ({inner})"


def _joined(
    rows: str, groups: Sequence[str], per_group: dict[str, str], name: str
) -> tuple[list[str], str]:
    """``rows`` (a CTE's name) with the group's values of ``per_group`` (name: an aggregate
    over the group's rows) beside each row, joined null-safe on the group keys: the CTEs
    (the per-group values, ``MATERIALIZED``: computed once, so every row and later pass
    reads the same rounding of them; the joined rows, not materialized) and the name of
    the joined rows."""
    named = ", ".join(f"{v} AS {k}" for k, v in per_group.items())
    keys = ", ".join(f"{g} AS __mlsql_k{k}" for k, g in enumerate(groups))
    group_by = " GROUP BY ALL" if groups else ""
    found = f"{name}_g AS MATERIALIZED (SELECT {', '.join([keys, named] if keys else [named])} FROM {rows}{group_by})"
    picked = ", ".join(["r.*", *(f"s.{k}" for k in per_group)])
    if groups:
        on = " AND ".join(
            f"r.{g} IS NOT DISTINCT FROM s.__mlsql_k{k}" for k, g in enumerate(groups)
        )
        join = f"JOIN {name}_g AS s ON {on}"
    else:
        join = f"CROSS JOIN {name}_g AS s"
    return [found, f"{name} AS NOT MATERIALIZED (SELECT {picked} FROM {rows} AS r {join})"], name


def sums(weighted: bool, shifted: bool, ops: SqlOps = OPS) -> RG.RegressionStats:
    """The statistics as sums over rows that carry their group's means (and shift): over
    the rows :func:`passes_sql` names, grouped."""
    y, p, w = _Y, _P, _W
    err = f"({y} - {p})"
    means = {"y": _MY, "p": _MP, "e": _ME}

    def d(k: str) -> str:
        return f"(({err if k == 'e' else {'y': y, 'p': p}[k]}) - {means[k]})"

    def total(term: str) -> Sql:
        return Sql(f"fsum({term})" if not weighted else f"fsum({w} * {term})")

    n = Sql(f"fsum({w})") if weighted else Sql(f"count({err})")

    def comoment(a: str, b: str) -> Sql:  # centred on the rounded means, as the lists are
        return Sql(
            str(RG.centred_comoment(ops, total(f"{d(a)} * {d(b)}"), total(d(a)), total(d(b)), n))
        )

    sad = total(f"abs({d('y')} - {_SHIFT})") if shifted else Sql("CAST(NULL AS DOUBLE)")
    return RG.RegressionStats(
        n=n,
        sse=total(f"{err} * {err}"),
        sae=total(f"abs({err})"),
        sape=total(f"abs({err}) / greatest(abs({y}), {lit(RG.EPSILON)})"),
        var_actual=comoment("y", "y"),
        var_predicted=comoment("p", "p"),
        covariance=comoment("y", "p"),
        var_error=comoment("e", "e"),
        sad_actual=sad,
        rows=Sql(f"count({w})") if weighted else None,
    )


def measure_sql(
    measure: Measure, stats: RG.RegressionStats, params: dict[str, Sql], ops: SqlOps = OPS
) -> str:
    """The measure's registry formula over ``stats``, its ``params`` (name: SQL, each
    wrapped in its check) given: NULL where ``zero_division`` is NULL, as its macro."""
    body = measure.build(ops, stats, **params)  # type: ignore[misc]
    if "zero_division" in params:
        return f"CASE WHEN {params['zero_division']} IS NULL THEN NULL ELSE {body} END"
    return str(body)


def _value(item: EV.Item, stats: RG.RegressionStats) -> str:
    """The item's registry formula over ``stats``, its parameters checked as its macro checks
    them (the same SQL check, on the value given)."""
    checked_params(item.measure, item.params)  # raises mlsql's message before any SQL
    params: dict[str, Sql] = {}
    for p in item.measure.params:
        value = lit(item.params.get(p.name, p.default))
        params[p.name] = value if p.constraint is None else call(check_macro(p), value, item.name)
    return measure_sql(item.measure, stats, params)


def passes_sql(
    rows: str, groups: Sequence[str], weighted: bool, shifted: bool
) -> tuple[list[str], str]:
    """The common table expressions of the passes over ``rows`` (a query of the group
    columns and :func:`rows_sql`'s checked values): the means per group (and rae's shift)
    joined back to the rows, and the name of the last, whose rows :func:`sums` sums."""
    ctes = [f"__mlsql_rows AS NOT MATERIALIZED ({rows})"]
    y, p, w = _Y, _P, _W
    if weighted:
        n = f"fsum({w})"
        mean: Callable[[str], str] = lambda x: f"(fsum({w} * {x}) / {n})"  # noqa: E731
    else:
        mean = lambda x: f"avg({x})"  # noqa: E731
    means = {_MY: mean(y), _MP: mean(p), _ME: mean(f"({y} - {p})")}
    more, joined = _joined("__mlsql_rows", groups, means, "__mlsql_means")
    ctes += more
    if shifted:
        more, joined = _joined(joined, groups, {_SHIFT: mean(f"({y} - {_MY})")}, "__mlsql_shifts")
        ctes += more
    return ctes, joined


def values_sql(
    chosen: Sequence[tuple[int, EV.Item]],
    clause: str,
    actual: str,
    predicted: str,
    groups: list[str],
    weight: str | None,
) -> tuple[list[str], str]:
    """The common table expressions of the grouped passes over the rows of ``clause``, and
    a query of one row per group: the ``groups`` columns and each ``(i, item)``'s value as
    ``__mlsql_v{i}``."""
    items = [item for _, item in chosen]
    columns = {"actual": quote_ident(actual), "predicted": quote_ident(predicted)}
    first = items[0]
    rows = rows_sql(str(lit(first.name)), first.roles[0], columns, weight, groups, clause)
    shifted = any(item.name == "rae" for item in items)
    ctes, joined = passes_sql(rows, groups, weight is not None, shifted)
    stats = sums(weight is not None, shifted)
    out = [f"{_value(item, stats)} AS __mlsql_v{i}" for i, item in chosen]
    group_by = f" GROUP BY {', '.join(groups)}" if groups else ""
    return ctes, f"SELECT {', '.join([*groups, *out])} FROM {joined}{group_by}"
