"""``mlsql.evaluate`` of the class-wise single-label measures: the class lists once per group.

Each class-wise macro (``f1_score``, ``precision_score``, ``matthews_corrcoef``, Cohen's
kappa and its tests, Bowker's test, ...: :data:`CLASSWISE`) builds its group's class lists,
one aggregate (:mod:`mlsql._duckdb.families.single_label`), kappa and Bowker's test also
its (actual, predicted) pairs, and runs its formula macro ``_mlsql_<name>_of`` over them.
Called as it is, each macro's text is bound whole, its checked parameters written into the
formula at every use: one macro-averaged ``f1_score`` took 0.30 s to plan and run on a
3-row table (2 cores, 5 Dec 2026), its formula over lists already built 0.045 s.
``evaluate`` knows the whole query, so it builds the lists (and pairs) once per group and
gives each measure its formula over them, its parameters checked once beforehand
(:func:`checked_values`):

- without ``sample_weight``, ``_mlsql_class_lists`` and ``_mlsql_class_pairs``
  (histograms: memory per group of the order of its classes, and of its cells) are more
  aggregates of the one ``GROUP BY``;
- with ``sample_weight``, the rows first become their distinct cells ``(by..., actual,
  predicted)`` with their summed checked weight, and ``_mlsql_weighted_class_lists`` and
  ``_mlsql_weighted_class_pairs``, which hold the (actual, predicted, weight) entries they
  are given, hold the group's cells: memory groups x cells, where the weighted macros over
  the rows hold the group's rows. The sums of the cells add the same weights in another
  order: the values agree to rounding.

Kappa over given ``labels`` (the rows outside them unknown, other lists) runs as its macro.
The parameters are checked by the same check macros as the measure's own macro (so the
same messages), and the rows by the same label checks, which name the first class-wise
measure asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlsql._duckdb import classification_checks as CC
from mlsql._duckdb.library import check_param, unqualified
from mlsql._evaluate import front as EV
from mlsql._params import KAPPA_LABELS
from mlsql._sqlexpr import Sql, call, lit
from mlsql.measures import single_label as SL

#: the class-wise measures: their formulas read the class lists (kappa and Bowker's test also
#: the (actual, predicted) pairs)
CLASSWISE = frozenset(SL.CLASS_MEASURES)
#: the columns of each group's class lists and (actual, predicted) pairs
LISTS, PAIRS = "__mlsql_cl", "__mlsql_cpairs"
_A, _P, _W = "__mlsql_ca", "__mlsql_cp", "__mlsql_cw"


def literal(value: Any) -> Sql:
    """A parameter's value as a DuckDB literal: lists as lists, dicts as MAPs.

    Examples
    --------
    >>> str(literal([1, 2])), str(literal({"a": {"b": 2.0}})), str(literal("x"))
    ('[1, 2]', "MAP {'a': MAP {'b': 2.0}}", "'x'")
    """
    if isinstance(value, (list, tuple)):
        return Sql("[" + ", ".join(str(literal(v)) for v in value) + "]")
    if isinstance(value, dict):
        pairs = ", ".join(f"{literal(k)}: {literal(v)}" for k, v in value.items())
        return Sql("MAP {" + pairs + "}")
    return lit(value)


def applies(item: EV.Item) -> bool:
    """Whether ``item`` is a class-wise measure read from the group's class lists.

    Examples
    --------
    >>> from mlsql._evaluate import front as EV
    >>> req = EV.request(["a", "p"], "a", "p", ["f1_score", "cohen_kappa_score"], None, None)
    >>> [applies(i) for i in req.items]
    [True, True]
    """
    if item.measure.name not in CLASSWISE:
        return False
    if not _over(item):
        return True
    # kappa over given labels reads other lists (the rows outside them unknown): its macro
    return item.params.get("labels") is None and not isinstance(
        item.params.get("weights"), (list, tuple)
    )


def _over(item: EV.Item) -> bool:
    """Whether ``item`` takes kappa's labels (and a weights matrix): its formula reads one."""
    return any(p.check_key == KAPPA_LABELS.check_key for p in item.measure.params)


def pairs(item: EV.Item) -> bool:
    """Whether ``item`` also reads the (actual, predicted) pairs (kappa, Bowker's test)."""
    return item.measure.name in SL.PAIR_MEASURES


def lists_sql(
    func: str, actual: str, predicted: str, weight: str | None = None, paired: bool = False
) -> list[str]:
    """The aggregates of a group's class lists (``LISTS``) and, ``paired``, of its
    (actual, predicted) pairs (``PAIRS``), the label checks naming ``func``: over the rows
    (``weight`` None) or over the cells of :func:`cells_sql` (``weight`` their weight).

    Examples
    --------
    >>> lists_sql("f1_score", "a", "p")
    ["_mlsql_class_lists(a, _mlsql_label_as(p, a, p, 'f1_score'), 'f1_score') AS __mlsql_cl"]
    """
    a = Sql(actual)
    p = call("_mlsql_label_as", Sql(predicted), a, Sql(predicted), func)
    if weight is None:
        out = [f"{call('_mlsql_class_lists', a, p, func)} AS {LISTS}"]
        found = call("_mlsql_class_pairs", a, p)
    else:
        out = [f"{call('_mlsql_weighted_class_lists', a, p, Sql(weight), func)} AS {LISTS}"]
        found = call("_mlsql_weighted_class_pairs", a, p, Sql(weight), func)
    return [*out, f"{found} AS {PAIRS}"] if paired else out


def cells_sql(
    clause: str,
    groups: Sequence[str],
    actual: str,
    predicted: str,
    weight: str,
    func: str,
    paired: bool = False,
) -> str:
    """Each group's class lists (and ``paired``, its pairs) from the rows' distinct cells
    (by..., actual, predicted) and their summed checked ``weight`` (NULL where every weight
    of the cell is NULL): one row per group, beside the group keys ``__mlsql_k0``, ...

    Examples
    --------
    >>> print(cells_sql("FROM t", ["g"], "a", "p", "w", "f1_score"))  # doctest: +ELLIPSIS
    SELECT __mlsql_k0, _mlsql_weighted_class_lists(__mlsql_ca, ... FROM (SELECT g AS __mlsql_k0, a AS __mlsql_ca, p AS __mlsql_cp, sum(w) AS __mlsql_cw FROM t GROUP BY ALL) GROUP BY ALL
    """
    keys = [f"{g} AS __mlsql_k{k}" for k, g in enumerate(groups)]
    cells = (
        f"SELECT {', '.join([*keys, f'{actual} AS {_A}', f'{predicted} AS {_P}'])}, "
        f"sum({weight}) AS {_W} {clause} GROUP BY ALL"
    )
    outer = [f"__mlsql_k{k}" for k in range(len(groups))]
    picked = ", ".join([*outer, *lists_sql(func, _A, _P, _W, paired)])
    return f"SELECT {picked} FROM ({cells})" + (" GROUP BY ALL" if groups else "")


def checked_sql(item: EV.Item) -> dict[str, Sql]:
    """``item``'s parameters as SQL: each given value (or default) in its check macro."""
    m = item.measure
    given = {p.name: item.params.get(p.name, p.default) for p in m.params}
    return {p.name: check_param(p, unqualified, m.name, literal(given[p.name])) for p in m.params}


def checked_values(con: Any, items: Sequence[EV.Item]) -> list[dict[str, Sql]]:
    """Each item's checked parameters as typed constants, from one query of their checks on
    ``con`` (its errors are the checks' messages). Written into the formula, a constant
    binds once where a check macro binds at every use of the parameter: for a
    macro-averaged ``f1_score``, 0.26 s of planning against 0.05 s.

    Examples
    --------
    >>> import mlsql
    >>> from mlsql._evaluate import front as EV
    >>> items = EV.request(["a", "p"], "a", "p", [("f1_score", {"average": "MICRO"})],
    ...                    None, None).items
    >>> {k: str(v) for k, v in checked_values(mlsql.connect(), items)[0].items()}
    {'average': "CAST('micro' AS VARCHAR)", 'zero_division': "CAST('0' AS VARCHAR)", 'labels': 'NULL'}
    """
    checks = [(k, name, sql) for k, i in enumerate(items) for name, sql in checked_sql(i).items()]
    out: list[dict[str, Sql]] = [{} for _ in items]
    if not checks:
        return out
    picked = ", ".join(f"{sql}, typeof({sql})" for _, _, sql in checks)
    row = con.sql(f"SELECT {picked}").fetchall()[0]
    for j, (k, name, _) in enumerate(checks):
        value, kind = row[2 * j], row[2 * j + 1]
        out[k][name] = Sql("NULL") if value is None else Sql(f"CAST({literal(value)} AS {kind})")
    return out


def value_sql(item: EV.Item, params: dict[str, Sql] | None = None, weighted: bool = False) -> str:
    """``item``'s value over the class lists ``LISTS`` (and the pairs ``PAIRS``): its
    checked parameters (``params``, from :func:`checked_values`; by default its check
    macros, the measure's own checks) and its formula macro (the one of weighted pairs,
    ``weighted``), aligned to its ``labels`` where it takes them, as its macro computes it.

    Examples
    --------
    >>> from mlsql._evaluate import front as EV
    >>> item = EV.request(["a", "p"], "a", "p", ["matthews_corrcoef"], None, None).items[0]
    >>> value_sql(item)
    "CASE WHEN _mlsql_check_zero_division(0, 'matthews_corrcoef') IS NULL THEN NULL ELSE _mlsql_matthews_corrcoef_of(__mlsql_cl, _mlsql_check_zero_division(0, 'matthews_corrcoef')) END"
    """
    m = item.measure
    params = dict(checked_sql(item) if params is None else params)
    paired = pairs(item)
    name = f"_mlsql_{m.name}{'_weighted' if weighted and paired else ''}_of"
    read = [
        *((Sql(PAIRS),) if paired else ()),
        *((Sql("NULL::DOUBLE[][]"),) if _over(item) else ()),
    ]
    if "labels" in params and not _over(item):  # the averages' labels: the lists aligned
        params["labels"] = call("_mlsql_as_list", params["labels"])
        aligned = call("_mlsql_classes_over", Sql(LISTS), params["labels"], m.name)
        body = call(name, Sql("cl"), *read, *params.values())
        return str(CC.guard_zero_division(CC.let(aligned, "cl", body), params))
    body = call(name, Sql(LISTS), *read, *params.values())
    return str(CC.guard_zero_division(body, params))
