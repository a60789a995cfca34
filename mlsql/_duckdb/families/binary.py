"""Binary classification in DuckDB: the 2x2 measures over boolean / 0-1 columns or stored counts.

``binary_counts(actual, predicted)`` sums the four cells in one aggregate;
every ``binary_<name>(actual, predicted)`` is the 2x2 formula
(``_mlsql_<formula>(tp, fp, fn, tn, ...)``, :mod:`mlsql.measures.contingency`)
over those sums, and ``binary_<name>_from_counts(tp, fp, fn, tn)`` the same
formula over stored counts.
"""

from __future__ import annotations

from mlsql._duckdb import classification_checks as CC
from mlsql._duckdb.classification_checks import let
from mlsql._duckdb.library import Macro, Qualify
from mlsql._duckdb.ops import SqlOps, stored
from mlsql._registry import Measure, measures
from mlsql._sqlexpr import Sql, call
from mlsql.measures import binary as B
from mlsql.measures.contingency import Table2x2

FILE = "binary.sql"
DESCRIPTION = "Binary classification: 2x2 measures over boolean or 0/1 columns, or stored counts."
ORDER = 21
FAMILIES: tuple[str, ...] = ()  # rendered here (with parameter checks and aliases)


def counts_macros(q: Qualify) -> list[Macro]:
    """``_mlsql_binary_cell``, ``_mlsql_binary_counts`` and the public ``binary_counts``."""
    flag = q("_mlsql_binary_flag")
    cell = (
        "CASE WHEN actual IS NULL OR predicted IS NULL THEN NULL\n"
        f"         WHEN {flag}(actual, a_name, func) = a AND {flag}(predicted, p_name, func) = p"
        " THEN 1 ELSE 0 END"
    )
    cells = {"tp": "true, true", "fp": "false, true", "fn": "true, false", "tn": "false, false"}
    pack = ",\n    ".join(
        f"{name} := sum({q('_mlsql_binary_cell')}(actual, predicted, {ap}, a_name, p_name, func))"
        for name, ap in cells.items()
    )
    weighted_pack = ",\n    ".join(
        f"{name} := sum({q('_mlsql_binary_cell')}(actual, predicted, {ap}, a_name, p_name, func)"
        f" * {q('_mlsql_weight')}(w, func))"
        for name, ap in cells.items()
    )
    return [
        Macro(
            FILE,
            "_mlsql_binary_cell",
            ("actual", "predicted", "a", "p", "a_name", "p_name", "func"),
            cell,
            "1 where (actual, predicted) is the cell (a, p), 0 elsewhere, NULL for an unknown row.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_binary_counts",
            ("actual", "predicted", "a_name", "p_name", "func"),
            f"struct_pack(\n    {pack})",
            "tp, fp, fn, tn over rows (NULL over no known rows).",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_binary_weighted_counts",
            ("actual", "predicted", "w", "a_name", "p_name", "func"),
            f"struct_pack(\n    {weighted_pack})",
            "tp, fp, fn, tn as sums of the rows' weights w (NULL weight: the row is unknown).",
            public=False,
        ),
        # two overloads, not a CASE on the weight: unweighted counts stay integers
        Macro(
            FILE,
            "binary_counts",
            ("actual", "predicted"),
            f"{q('_mlsql_binary_counts')}(actual, predicted, 'actual', 'predicted', 'binary_counts')",
            "Struct of tp, fp, fn, tn over rows (true / 1 positive): store it, sum it later.",
        ),
        Macro(
            FILE,
            "binary_counts",
            ("actual", "predicted", "sample_weight"),
            f"{q('_mlsql_binary_weighted_counts')}(actual, predicted, sample_weight, "
            "'actual', 'predicted', 'binary_counts')",
            "Struct of tp, fp, fn, tn as sums of the rows' sample_weight (DOUBLE).",
        ),
    ]


def table_stats(q: Qualify, m: Measure) -> Table2x2:
    """The 2x2 table a measure scores: stored counts, or the sums over its two inputs."""
    if m.kind == "from_counts":
        return Table2x2(*(stored(name) for name in m.inputs))
    counts = counts_call(q, m)
    return Table2x2(*(call("struct_extract", counts, f) for f in B.COUNTS_FIELDS))


def counts_call(q: Qualify, m: Measure, weighted: bool = False) -> Sql:
    """``_mlsql_binary_counts`` over the measure's two inputs (weighted: by ``sample_weight``)."""
    a, p = m.inputs
    if weighted:
        w = Sql("sample_weight")
        return call(q("_mlsql_binary_weighted_counts"), Sql(a), Sql(p), w, a, p, m.name)
    return call(q("_mlsql_binary_counts"), Sql(a), Sql(p), a, p, m.name)


def family_macros(family: str, file: str, q: Qualify, ops: SqlOps) -> list[Macro]:
    """Every measure of ``family`` (binary or rules) and its aliases.

    An aggregate binds its four sums to a lambda variable ``c`` once
    (``list_transform([counts], lambda c: formula(c.tp, ...))[1]``), so the
    formula's many mentions of tp, fp, fn, tn do not each expand the sums.
    """
    out: list[Macro] = []
    bound = Table2x2(*(Sql(f"c.{f}") for f in B.COUNTS_FIELDS))
    for m in measures(family=family):
        if m.build is None or not m.available_in("duckdb") or m.kind == "counts":
            continue  # binary_counts: the struct every aggregate binds (counts_macros)
        if m.kind == "from_counts":
            out += CC.render(m, q, ops, file, table_stats(q, m))
            continue

        def body(params: dict[str, Sql], m: Measure = m, weighted: bool = False) -> Sql:
            return let(counts_call(q, m, weighted), "c", m.build(ops, bound, **params))

        def weighted(params: dict[str, Sql], m: Measure = m) -> Sql:
            return body(params, m, True)

        out += CC.render(m, q, ops, file, None, body=body, weighted=weighted)
    return out


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """The cell counts, then every binary measure."""
    return [*counts_macros(qualify), *family_macros(B.FAMILY, FILE, qualify, ops)]
