"""The single-label tables in the PostgreSQL library: set-returning functions.

``confusion_matrix``, ``class_metrics`` and ``class_distribution`` come in two forms:

- over a table, as DuckDB's table macros take it: ``SELECT * FROM
  confusion_matrix('preds', 'actual', 'predicted')``. The table's name is read as a
  ``regclass`` (a name PostgreSQL resolves, or an error) and the column names are quoted as identifiers:
  a hostile name is a name. They take no ``by``: a result's columns are fixed in
  PostgreSQL, so the groups' values cannot come first as in DuckDB;
- over the cells of a group, an aggregate's result: ``class_cells(actual, predicted)``
  (``label_cells(label)`` for ``class_distribution``) keeps the single-label aggregates' state
  (:data:`~mlsql._postgres.single_label.STATE_TYPE`, bounded by classes²), and each
  table reads it, one group at a time: ``SELECT s.model, m.* FROM (SELECT model,
  class_cells(actual, predicted) AS cells FROM preds GROUP BY model) s, LATERAL
  confusion_matrix(s.cells) m``. The table forms are this over the whole table.

Classes come back as ``text`` (an integer class in its decimal form), counts as
``float8`` (sums of weights with ``sample_weight``), classes sorted as every engine sorts
them. The per-class values of ``class_metrics`` are the registry's
(:func:`mlsql.measures.single_label.class_values`).
"""

from __future__ import annotations

from mlsql._front.build import formula
from mlsql._label_types import MISMATCH_MESSAGE
from mlsql._postgres.forms import create_aggregates, create_type
from mlsql._postgres.ops import PgSql, fill, param, pg_lit
from mlsql._postgres.single_label import (
    INIT,
    LABEL_TYPES,
    STATE_TYPE,
    TABLES,
    FinalOps,
    Lets,
    class_stats,
)
from mlsql.measures import single_label as SL

#: each table's result columns (after the groups') and what its rows are
COLUMNS = {
    "confusion_matrix": ("actual text", "predicted text", "count float8"),
    "class_metrics": (
        "class text",
        *(f"{c} float8" for c in ("tp", "fp", "fn", "tn", "support")),
        *(f"{c} float8" for c in ("precision", "recall", "fbeta", "class_error_rate")),
    ),
    "class_distribution": ("class text", "count float8", "share float8"),
}
#: each table's row type: a composite type, not RETURNS TABLE, whose columns would be
#: parameters of the function, and actual and predicted are its inputs' names too
ROW_TYPES = {name: f"mlsql_{name}_row" for name in COLUMNS}
#: the tables' inputs: the columns a table form names
INPUTS = {
    "confusion_matrix": ("actual", "predicted"),
    "class_metrics": ("actual", "predicted"),
    "class_distribution": ("label",),
}
#: the message of ``by`` in a table form
BY_MESSAGE = (
    "{func} takes no 'by' in PostgreSQL (a result's columns are fixed there): group with the "
    "aggregate {aggregate} and read each group's cells, as in SELECT s.g, m.* FROM (SELECT g, "
    "{aggregate}({inputs}) AS cells FROM t GROUP BY g) s, LATERAL {func}(s.cells) m."
)


def helpers(create: str) -> list[str]:
    """``class_cells(actual, predicted)`` and ``label_cells(label)``: the aggregates of a
    group's cells (the state is their result; one column's rows are the cells (label,
    label)), weighted or not, and the error of two types. Two names, not two overloads: an
    integer column casts to both bigint and float8, so ``(int, int)`` would match the one
    column's weighted form too."""
    out = []
    for name, columns in COLUMNS.items():
        # quoted: precision is a keyword of PostgreSQL
        fields = ", ".join('"{}" {}'.format(*c.split(" ")) for c in columns)
        out.append(
            f"-- {ROW_TYPES[name]}: a row of {name}.\n"
            + create_type(ROW_TYPES[name], fields, create)
        )
    for label in LABEL_TYPES:
        numeric = "true" if label == "bigint" else "false"
        for inputs in (("actual", "predicted"), ("label",)):
            a, p = (inputs[0], inputs[0]) if len(inputs) == 1 else inputs
            for weighted in (False, True):
                args = [f"{x} {label}" for x in inputs] + (
                    ["sample_weight float8"] if weighted else []
                )
                func = "class_cells" if len(inputs) == 2 else "label_cells"
                weight = f"_mlsql_weight(sample_weight, '{func}')" if weighted else "1"
                step = "_mlsql_class_cells_step"
                out.append(
                    f"{create} FUNCTION {step}(st {STATE_TYPE}, {', '.join(args)})"
                    f" RETURNS {STATE_TYPE}\nLANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\n"
                    "DECLARE\n  w float8;\nBEGIN\n"
                    f"  st.numeric := {numeric};\n  w := {weight};\n"
                    f"  IF w IS NULL OR {a} IS NULL OR {p} IS NULL THEN RETURN st; END IF;\n"
                    f"  RETURN _mlsql_class_add(st, {a}::text, {p}::text, w);\nEND\n$f$;"
                )
                signature = ", ".join(x.split(" ", 1)[1] for x in args)
                aggregate = "class_cells" if len(inputs) == 2 else "label_cells"
                out += create_aggregates(
                    create, (aggregate,), signature, step, INIT, None, STATE_TYPE
                )
    for left, right in (("text", "bigint"), ("bigint", "text")):
        text = MISMATCH_MESSAGE.format(
            func="class_cells", left="actual", right="predicted", left_type=left, right_type=right
        )
        step = "_mlsql_class_cells_mismatch"
        out.append(
            f"{create} FUNCTION {step}(st {STATE_TYPE}, actual {left}, predicted {right})"
            f" RETURNS {STATE_TYPE}\nLANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\n"
            f"BEGIN\n  RAISE EXCEPTION USING MESSAGE = {pg_lit(text)};\nEND\n$f$;"
        )
        out += create_aggregates(
            create, ("class_cells",), f"{left}, {right}", step, INIT, None, STATE_TYPE
        )
    return out


def _class_metrics_query() -> str:
    """class_metrics' rows over the state ``st``: each class's values by the registry,
    the parameters checked once (in ``_p``, also over no rows)."""
    ops = FinalOps(Lets())
    s = class_stats(ops, weighted=True)  # n: the cells' total (counts or weights)
    values = SL.class_values(ops, s, param("beta"), param("zero_division"))
    names = [c.split(" ")[0] for c in COLUMNS["class_metrics"][1:]]
    listed = ", ".join(f"{pg_lit(values[k])}::float8" for k in names)
    checks = (
        "(SELECT _mlsql_check_beta(beta, 'class_metrics') AS beta,"
        " _mlsql_check_zero_division(zero_division, 'class_metrics') AS zd) AS _p"
    )
    text = f"{TABLES}\n  SELECT c.val, {listed}\n  FROM {checks} CROSS JOIN _cls c ORDER BY c.idx"
    return fill(text, {"beta": "_p.beta", "zero_division": "_p.zd"})


def _class_distribution_query() -> str:
    """class_distribution's rows over the state ``st``: each class's count and its share by
    the registry (NULL where the known rows weigh 0)."""
    counted = SL.ClassCount(PgSql("c.ra"), PgSql("t.n"))
    share = formula("class_distribution")(FinalOps(Lets()), counted)["share"]
    return f"""{TABLES}
  SELECT c.val, c.ra, {pg_lit(share)}
  FROM (SELECT sum(ra) AS n FROM _cls) AS t CROSS JOIN _cls c ORDER BY c.idx"""


#: each table's rows over the state ``st`` (the final function's tables)
QUERIES = {
    "confusion_matrix": f"""{TABLES}
  SELECT a.val, b.val, coalesce(x.w, 0)::float8 FROM _cls a CROSS JOIN _cls b
  LEFT JOIN _cell x ON x.i = a.pos AND x.j = b.pos ORDER BY a.idx, b.idx""",
    "class_distribution": _class_distribution_query(),
}


def _params(name: str) -> list[str]:
    """A table's parameters after its inputs and ``sample_weight`` (class_metrics: beta,
    zero_division). zero_division is ``anycompatible``, one overload for a number and a text
    ('ignore' arrives as text, 1 as an integer, each checked by its own
    ``_mlsql_check_zero_division``): two overloads would make a call with a fourth
    positional argument ambiguous."""
    if name != "class_metrics":
        return []
    return ["beta float8 DEFAULT 1", "zero_division anycompatible DEFAULT 0"]


def tables(create: str) -> list[str]:
    """Each table over a group's cells and over a table."""
    out = []
    for name in COLUMNS:
        result = f"RETURNS SETOF {ROW_TYPES[name]}"
        after = _params(name)
        params = "".join(f", {x}" for x in after)
        query = _class_metrics_query() if name == "class_metrics" else QUERIES[name]
        out.append(
            f"-- {name}(cells{params}): over a group's cells (class_cells).\n"
            f"{create} FUNCTION {name}(st {STATE_TYPE}{params})\n{result}\n"
            f"LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$\n{query}\n$f$;"
        )
        out.append(_over_table(name, after, result, create))
    return out


def _over_table(name: str, after: list[str], result: str, create: str) -> str:
    """The table form: ``name(source, <inputs>, sample_weight, <params>, by)`` as DuckDB's,
    each name quoted (``format``'s %I), the table resolved as a ``regclass`` (``source`` is
    text: a literal would match the cells' form too); the parameters passed on by name."""
    inputs = INPUTS[name]
    listed = ", ".join(
        [
            "source text",
            *(f"{x} text" for x in inputs),
            "sample_weight text DEFAULT NULL",
            *after,
            "by text[] DEFAULT NULL",
        ]
    )
    marks = ", ".join(["%I"] * len(inputs))
    weight = "coalesce(', ' || quote_ident(sample_weight), '')"
    aggregate = "class_cells" if len(inputs) == 2 else "label_cells"
    cells = f"format('{aggregate}({marks}%s)', {', '.join(inputs)}, {weight})"
    params = [x.split(" ")[0] for x in after]
    passed = "".join(f", {x} => ${i + 1}" for i, x in enumerate(params))
    using = f" USING {', '.join(params)}" if params else ""
    by = BY_MESSAGE.format(func=name, inputs=", ".join(inputs), aggregate=aggregate)
    return (
        f"-- {name}(source, {', '.join(inputs)}, ...): over a table, as DuckDB's table macro.\n"
        f"{create} FUNCTION {name}({listed})\n{result}\n"
        "LANGUAGE plpgsql STABLE AS $f$\nBEGIN\n"
        f"  IF by IS NOT NULL THEN RAISE EXCEPTION USING MESSAGE = {pg_lit(by)}; END IF;\n"
        "  RETURN QUERY EXECUTE format('SELECT m.* FROM (SELECT %s AS cells FROM %s) AS s,"
        f" LATERAL {name}(s.cells{passed}) AS m', {cells}, source::regclass){using};\nEND\n$f$;"
    )
