"""The single-label family in the PostgreSQL library: one class per row, text or integers.

Written from the registry (:mod:`mlsql.measures.single_label`) and its formulas through
:mod:`mlsql._postgres.ops`; nothing of a formula is written here. Every aggregate keeps
the same state, a :data:`STATE_TYPE`: the checked parameters, the classes seen (as text,
in the order first seen), the (actual, predicted) cells seen as pairs of the classes'
positions, and each cell's count (with ``sample_weight``, its total weight). The state
grows with the cells that occur, at most classes², never with rows. The final function
unnests the state into the classes (sorted: integers as numbers, text by its bytes, as
every engine orders them; or ``labels``' order) and the cells, and applies the formula
over them: each sum over classes, class pairs or cells of
:class:`~mlsql.measures.single_label.ClassStats` is a subquery of those two.

The measures over one label column (``majority_class``, ``minority_class``,
``majority_error``, ``prevalence``) keep each row as the cell (label, label).

Not here: ``cost_error`` and ``cost_map`` (costs are a map, which PostgreSQL has not),
a matrix of kappa weights (only 'linear', 'quadratic' or NULL), and the tables.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlsql import _params as P
from mlsql._label_types import LABEL_VALUE_MESSAGE, MISMATCH_MESSAGE
from mlsql._postgres.forms import PARAM_TYPES, Form, create_aggregates, create_type, histogram_add
from mlsql._postgres.forms import forms as shared_forms
from mlsql._postgres.ops import Axis, FinalOps, Lets, PgSql, fill, param, pg_lit
from mlsql._registry import Measure
from mlsql.measures import single_label as SL
from mlsql.measures.contingency import Table2x2

#: the label column types of every aggregate (an integer column casts to bigint by itself)
LABEL_TYPES = ("text", "bigint")
#: the composite type of every single-label aggregate's state
STATE_TYPE = "mlsql_class_state"
STATE_FIELDS = (
    ("nums", "float8[]"),  # the numeric parameters, checked (zero_division coded)
    ("opts", "text[]"),  # the text parameters and label values, checked
    ("numeric", "boolean"),  # the classes are integers: ordered as numbers
    ("fixed", "boolean"),  # the classes are the given labels, in their order
    ("classes", "text[]"),  # each class, as text, in the order first seen (or the labels)
    ("cells", "bigint[]"),  # each (actual, predicted) pair seen: i * 2^32 + j, 1-based positions
    ("w", "float8[]"),  # each cell's count or total weight
    ("n_rows", "float8"),  # the known rows
)
#: the state over no rows
INIT = "({},{},f,f,{},{},{},0)"
#: parameters kept as text in the state (the others as numbers)
TEXT_PARAMS = ("average", "weights", "label", "positive")
#: parameters that hold one label, and the one that holds a list of them (typed as the column)
LABEL_PARAMS = ("label", "positive")
LIST_PARAM = "labels"
#: the measures over one label column
ONE_COLUMN = ("majority_class", "minority_class", "majority_error", "prevalence")
#: the measures whose result is a class, not a number (no registry formula: written here)
CLASS_RESULTS = {
    "majority_class": "ORDER BY ra DESC, idx",
    "minority_class": "ORDER BY ra, idx",
}
#: what the library leaves out, and why
LEFT_OUT = {
    "cost_error": "its costs are a map, which PostgreSQL has not",
    "cost_map": "its result is a map, which PostgreSQL has not",
}


def included(m: Measure) -> bool:
    """Whether the library holds ``m``: a single-label aggregate (not a table, not costs)."""
    if m.family != SL.FAMILY or m.kind != "aggregate" or m.name in LEFT_OUT:
        return False
    return m.build is not None or m.name in CLASS_RESULTS


def _check_text(p: Any, name: str, create: str) -> str:
    """``_mlsql_check_<name>(x text, func)``: one of the options (any case), lower-cased;
    NULL stands for the constraint's value where NULL is allowed."""
    c = p.constraint
    options = ", ".join(str(pg_lit(s)) for s in c.strings)
    null = f"RETURN {pg_lit(c.value)};" if isinstance(c, P.Nullable) else ""
    shown = "coalesce(chr(39) || x || chr(39), 'None')"
    before, after = P.message(p, "\x02", "\x03").split("\x02")
    middle, end = after.split("\x03")
    text = f"{pg_lit(before)} || func || {pg_lit(middle)} || {shown} || {pg_lit(end)}"
    return f"""-- _mlsql_check_{name}(x, func): {p.name}, {c.rule()}.
{create} FUNCTION _mlsql_check_{name}(x text, func text) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
BEGIN
  IF x IS NULL THEN
    {null or "NULL;"}
  ELSIF lower(x) IN ({options}) THEN
    RETURN lower(x);
  END IF;
  RAISE EXCEPTION USING MESSAGE = {text};
END
$f$;"""


def _check_labels(label: str, create: str) -> str:
    """``_mlsql_check_labels(x, func)``: kappa's ``labels``, a non-empty list of distinct
    labels without NULL, as text (NULL stays NULL: the classes seen)."""
    before, after = P.message(P.KAPPA_LABELS, "\x02", "\x03").split("\x02")
    middle, end = after.split("\x03")
    shown = "'[' || array_to_string(x, ', ', 'NULL') || ']'"  # as DuckDB shows a list
    text = f"{pg_lit(before)} || func || {pg_lit(middle)} || {shown} || {pg_lit(end)}"
    return f"""-- _mlsql_check_labels(x, func): labels, {P.KAPPA_LABELS.constraint.rule()}.
{create} FUNCTION _mlsql_check_labels(x {label}[], func text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
BEGIN
  IF x IS NULL OR (cardinality(x) > 0 AND array_position(x, NULL) IS NULL
      AND (SELECT count(DISTINCT v) FROM unnest(x) v) = cardinality(x)) THEN
    RETURN x::text[];
  END IF;
  RAISE EXCEPTION USING MESSAGE = {text};
END
$f$;"""


#: plpgsql that sets i and j, the positions of classes a and p (a new class added last)
def _positions(outside: str) -> str:
    """plpgsql: the positions ``i``, ``j`` of the row's two classes (a class not seen yet
    appended); with fixed classes, ``outside`` (its ``{x}`` the position) for one not among
    them."""
    return "\n".join(
        f"""  {x} := array_position(st.classes, {v});
  IF {x} IS NULL AND st.fixed THEN
    {outside.format(x=x)}
  ELSIF {x} IS NULL THEN
    st.classes := st.classes || {v};
    {x} := cardinality(st.classes);
  END IF;"""
        for x, v in (("i", "a"), ("j", "p"))
    )


#: the step of each kind of fixed classes (what it does with a row of another class, and
#: how): kappa's labels leave the row out; the averages' labels keep it, its class at
#: position 0, in no class's totals but in n and in its other class's row or column total
#: (a false positive or a false negative)
ADD_STEPS = {
    "_mlsql_class_add": ("a row of another class is left out", "RETURN st;"),
    "_mlsql_class_keep": ("a row of another class is kept, in no class's totals", "{x} := 0;"),
}


def helpers(create: str) -> list[str]:
    """The state's type, the checks of the text parameters and the step that adds a row."""
    fields = ", ".join(f"{n} {t}" for n, t in STATE_FIELDS)
    state_type = create_type(STATE_TYPE, fields, create)
    return [
        f"-- {STATE_TYPE}: the state of every single-label aggregate.\n{state_type}",
        _check_text(P.AVERAGE, "average", create),
        _check_text(P.KAPPA_WEIGHTS, "kappa_weights", create),
        *(_check_labels(t, create) for t in LABEL_TYPES),
        *(
            f"""-- {name}(st, a, p, x): the row (actual a, predicted p, weight x) added to its
-- cell; with fixed classes (labels), {what}.
{create} FUNCTION {name}(st {STATE_TYPE}, a text, p text, x float8)
RETURNS {STATE_TYPE}
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
DECLARE
  i int;
  j int;
  cell bigint;
  k int;
BEGIN
{_positions(outside)}
  cell := i::bigint * 4294967296 + j;
{histogram_add("st.cells", "st.w", "cell", "x", "  ")}
  st.n_rows := st.n_rows + 1;
  RETURN st;
END
$f$;"""
            for name, (what, outside) in ADD_STEPS.items()
        ),
    ]


#: the final function's tables: the cells (positions in the state), the classes (each one's
#: sorted position ``idx``, row total ``ra``, column total ``cp`` and diagonal ``dg``) and
#: the cells beside their two classes
TABLES = """WITH _cell AS MATERIALIZED (
    SELECT (u.k >> 32)::int AS i, (u.k & 4294967295)::int AS j, u.w
    FROM unnest((st).cells, (st).w) AS u(k, w)
  ), _cls AS MATERIALIZED (
    SELECT u.pos::int AS pos, u.val,
      (row_number() OVER (ORDER BY CASE WHEN (st).fixed THEN u.pos END,
        CASE WHEN (st).numeric THEN u.val::numeric END, u.val COLLATE "C") - 1)::float8 AS idx,
      coalesce((SELECT sum(x.w) FROM _cell x WHERE x.i = u.pos), 0)::float8 AS ra,
      coalesce((SELECT sum(x.w) FROM _cell x WHERE x.j = u.pos), 0)::float8 AS cp,
      coalesce((SELECT sum(x.w) FROM _cell x WHERE x.i = u.pos AND x.j = u.pos), 0)::float8 AS dg
    FROM unnest((st).classes) WITH ORDINALITY AS u(val, pos)
  ), _cel AS MATERIALIZED (
    SELECT x.w, a.idx AS i_idx, a.ra AS i_ra, a.cp AS i_cp, a.val AS i_val,
      b.idx AS j_idx, b.ra AS j_ra, b.cp AS j_cp, b.val AS j_val
    FROM _cell x JOIN _cls a ON a.pos = x.i JOIN _cls b ON b.pos = x.j
  )"""


def _view(alias: str, prefix: str = "") -> SL.ClassView:
    return SL.ClassView(
        PgSql(f"{alias}.{prefix}idx"), PgSql(f"{alias}.{prefix}ra"), PgSql(f"{alias}.{prefix}cp")
    )


def _sum(term: Any, source: str) -> PgSql:
    return PgSql(f"(SELECT coalesce(sum({pg_lit(term)}), 0)::float8 FROM {source})")


def class_stats(ops: FinalOps, weighted: bool) -> SL.ClassStats:
    """:class:`~mlsql.measures.single_label.ClassStats` over the final function's tables."""
    lets = ops.lets
    n = PgSql("(SELECT sum(w) FROM _cell)") if weighted else PgSql("(st).n_rows")
    i, j = _view("x", "i_"), _view("x", "j_")

    def pair_sum(term: Callable[[SL.ClassView, SL.ClassView], Any]) -> PgSql:
        return _sum(term(_view("a"), _view("b")), "_cls a CROSS JOIN _cls b")

    def row_pair_sum(term: Callable[[Any, Any], Any]) -> PgSql:
        return _sum(PgSql("x.w") * term(i.index, j.index), "_cel x")

    def cell_sum(term: Callable[[SL.ClassView, SL.ClassView], Any]) -> PgSql:
        return _sum(PgSql("x.w") * term(i, j), "_cel x")

    def mirror_sum(term: Callable[[Any, Any], Any]) -> PgSql:
        return _sum(
            term(PgSql("x.w"), PgSql("coalesce(y.w, 0)")),
            "_cell x LEFT JOIN _cell y ON y.i = x.j AND y.j = x.i",
        )

    def margin_cell_sum(term: Any, row: Any, col: Any) -> PgSql:
        r = _sum(row(i, _view("l")), "_cls l")
        c = _sum(col(_view("l"), j), "_cls l")
        return _sum(PgSql("x.w") * term(i, j, r, c), "_cel x")

    return SL.ClassStats(
        n=n,
        index=PgSql("c.idx"),
        actual=PgSql("c.ra"),
        predicted=PgSql("c.cp"),
        correct=PgSql("c.dg"),
        axis=Axis(lets, "_cls c"),
        pair_sum=pair_sum,
        row_pair_sum=row_pair_sum,
        rows=PgSql("(st).n_rows") if weighted else None,
        cell_sum=cell_sum,
        mirror_sum=mirror_sum,
        margin_cell_sum=margin_cell_sum,
    )


def _stats(m: Measure, ops: FinalOps, weighted: bool) -> Any:
    """The statistics ``m``'s formula takes, over the final function's tables."""
    n = PgSql("(SELECT sum(w) FROM _cell)") if weighted else PgSql("(st).n_rows")
    if m.name in ONE_COLUMN:
        return SL.LabelStats(
            n,
            PgSql("(SELECT max(ra) FROM _cls)"),
            lambda v: _sum(PgSql("c.ra"), f"_cls c WHERE c.val = {pg_lit(v)}"),
        )
    if m.name in ("accuracy", "error_rate"):
        return SL.Agreement(n, _sum(PgSql("x.w"), "_cel x WHERE x.i_idx = x.j_idx"))
    if m.name == "class_error_rate":

        def table(label: Any) -> Table2x2:
            def cell(in_a: bool, in_p: bool) -> PgSql:
                a = "=" if in_a else "<>"
                p = "=" if in_p else "<>"
                where = f"x.i_val {a} {pg_lit(label)} AND x.j_val {p} {pg_lit(label)}"
                return _sum(PgSql("x.w"), f"_cel x WHERE {where}")

            return Table2x2(
                cell(True, True), cell(False, True), cell(True, False), cell(False, False)
            )

        return SL.OneVsRest(n, table, PgSql("(st).n_rows") if weighted else None)
    return class_stats(ops, weighted)


def _in_state(m: Measure) -> dict[str, str]:
    """Each parameter's place in the state (``labels`` are its classes: not read here)."""
    out, nums, opts = {}, 0, 0
    for p in m.params:
        if p.name == LIST_PARAM:
            out[p.name] = "NULL"
        elif p.name in TEXT_PARAMS:
            opts += 1
            out[p.name] = f"(st).opts[{opts}]"
        else:
            nums += 1
            out[p.name] = f"(st).nums[{nums}]"
    return out


def final(m: Measure, weighted: bool) -> str:
    """The final function's query: the formula (or the class) over the state's tables."""
    if m.name in CLASS_RESULTS:
        return f"{TABLES}\n  SELECT val FROM _cls WHERE ra > 0 {CLASS_RESULTS[m.name]} LIMIT 1"
    assert m.build is not None
    ops = FinalOps(Lets())
    stats = _stats(m, ops, weighted)
    expr = m.build(ops, stats, **{p.name: param(p.name) for p in m.params})
    return f"{TABLES}\n  SELECT {fill(str(pg_lit(expr)), _in_state(m))}"


def forms(m: Measure, label: str) -> list[Form]:
    """DuckDB's positional forms (:func:`mlsql._postgres.forms.forms`), the label parameters
    typed as the column (``label``), the options as text."""

    def types(name: str) -> tuple[str, ...]:
        if name in LABEL_PARAMS:
            return (label,)
        if name == LIST_PARAM:
            return (f"{label}[]",)
        return ("text",) if name in ("average", "weights") else PARAM_TYPES[name]

    return shared_forms(m, types)


def _check(p: Any, value: str, func: str) -> str:
    """The SQL of parameter ``p``'s checked value."""
    if p.name in LABEL_PARAMS:
        return f"{value}::text"
    if p.name == "average":
        return f"_mlsql_check_average({value}, {func})"
    if p.name == "weights":
        return f"_mlsql_check_kappa_weights({value}, {func})"
    return f"_mlsql_check_{p.name}({value}, {func})"


def _first_row(m: Measure, label: str, names: list[str]) -> list[str]:
    """plpgsql that keeps the checked parameters in the state at its first row (the classes,
    where ``labels`` are given)."""
    func = str(pg_lit(m.name))
    given = {p.name: p.name if p.name in names else str(pg_lit(p.default)) for p in m.params}
    nums = [
        _check(p, given[p.name], func) for p in m.params if p.name not in (*TEXT_PARAMS, LIST_PARAM)
    ]
    opts = [_check(p, given[p.name], func) for p in m.params if p.name in TEXT_PARAMS]
    out = [
        "  IF st.n_rows = 0 AND NOT st.fixed THEN",
        f"    st.nums := ARRAY[{', '.join(nums)}]::float8[];",
        f"    st.opts := ARRAY[{', '.join(opts)}]::text[];",
        f"    st.numeric := {'true' if label == 'bigint' else 'false'};",
    ]
    if LIST_PARAM in names:
        out += [
            f"    IF {LIST_PARAM} IS NOT NULL THEN",
            f"      st.classes := _mlsql_check_labels({LIST_PARAM}, {func});",
            "      st.fixed := true;",
            "    END IF;",
        ]
    return [*out, "  END IF;"]


def aggregate(m: Measure, create: str) -> list[str]:
    """The final functions (weighted or not; per label type for a class result), and per
    label type and positional form a step function and the aggregate (with its aliases)."""
    out = []
    results = [(t, t) for t in LABEL_TYPES] if m.name in CLASS_RESULTS else [("", "float8")]
    for w in (False, True):
        query = final(m, w)
        for label, result in results:
            body = query.replace("SELECT val ", f"SELECT val::{label} ") if label else query
            out.append(
                f"{create} FUNCTION {_final_name(m, w, label)}(st {STATE_TYPE})"
                f" RETURNS {result}\nLANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$\n{body}\n$f$;"
            )
    func = pg_lit(m.name)
    inputs = ("label",) if m.name in ONE_COLUMN else ("actual", "predicted")
    a, p = (inputs[0], inputs[0]) if len(inputs) == 1 else inputs
    kept = any(x.check_key == P.CLASS_LABELS.check_key for x in m.params)
    add = "_mlsql_class_keep" if kept else "_mlsql_class_add"
    for label in LABEL_TYPES:
        for form in forms(m, label):
            names = [n for n, _ in form.args]
            args = [f"{x} {label}" for x in inputs] + [f"{n} {t}" for n, t in form.args]
            lines, weight = _first_row(m, label, names), "1"
            if form.weighted:
                lines.append(f"  w := _mlsql_weight(sample_weight, {func});")
                lines.append("  IF w IS NULL THEN RETURN st; END IF;")
                weight = "w"
            lines.append(f"  IF {a} IS NULL OR {p} IS NULL THEN RETURN st; END IF;")
            lines.append(f"  RETURN {add}(st, {a}::text, {p}::text, {weight});")
            step = f"_mlsql_{m.name}_step"
            signature = ", ".join(x.split(" ", 1)[1] for x in args)
            out.append(
                f"-- {m.name}({', '.join([*inputs, *names])}): {m.summary}\n"
                f"{create} FUNCTION {step}(st {STATE_TYPE}, {', '.join(args)}) RETURNS {STATE_TYPE}\n"
                "LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\nDECLARE\n  w float8;\nBEGIN\n"
                + "\n".join(lines)
                + "\nEND\n$f$;"
            )
            fin = _final_name(m, form.weighted, label if m.name in CLASS_RESULTS else "")
            called = (m.name, *m.aliases)
            out += create_aggregates(create, called, signature, step, INIT, fin, STATE_TYPE)
    return out


def _final_name(m: Measure, weighted: bool, label: str) -> str:
    return f"_mlsql_{m.name}{'_weighted' if weighted else ''}{'_' + label if label else ''}_final"


def mismatched(m: Measure, create: str) -> list[str]:
    """The aggregate over a text and an integer column, and over a label parameter of the
    other kind than its column (:func:`_label_of_other_kind`): each fails with DuckDB's
    message."""
    out = _label_of_other_kind(m, create)
    if m.name in ONE_COLUMN:
        return out
    for left, right in (("text", "bigint"), ("bigint", "text")):
        text = MISMATCH_MESSAGE.format(
            func=m.name, left="actual", right="predicted", left_type=left, right_type=right
        )
        step = f"_mlsql_{m.name}_mismatch"
        out.append(
            f"{create} FUNCTION {step}(st {STATE_TYPE}, actual {left}, predicted {right})"
            f" RETURNS {STATE_TYPE}\nLANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\n"
            f"BEGIN\n  RAISE EXCEPTION USING MESSAGE = {pg_lit(text)};\nEND\n$f$;"
        )
        names = (m.name, *m.aliases)
        out += create_aggregates(create, names, f"{left}, {right}", step, INIT, None, STATE_TYPE)
    return out


#: how DuckDB's message names the kind of a label of each column type
KINDS = {"text": "text", "bigint": "integer"}


def _label_of_other_kind(m: Measure, create: str) -> list[str]:
    """``class_error_rate``'s ``label`` and ``prevalence``'s ``positive`` given as the other
    kind than the column (an integer for a text column, text for an integer one): the step
    fails with DuckDB's message showing the value, rather than PostgreSQL's "function does
    not exist" or a failed cast."""
    named = [p.name for p in m.params if p.name in LABEL_PARAMS]
    if not named:
        return []
    name, out = named[0], []
    inputs = ("label",) if m.name in ONE_COLUMN else ("actual", "predicted")
    for column, other in (("text", "bigint"), ("bigint", "text")):
        before, after = LABEL_VALUE_MESSAGE.format(
            param=name, func=m.name, type=column, kind=KINDS[column], value="\x00"
        ).split("\x00")
        shown = f"quote_literal({name})" if other == "text" else f"{name}::text"
        for form in forms(m, column):
            if name not in (n for n, _ in form.args):
                continue
            args = [f"{x} {column}" for x in inputs]
            args += [f"{n} {other if n == name else t}" for n, t in form.args]
            step = f"_mlsql_{m.name}_label_mismatch"
            out.append(
                f"{create} FUNCTION {step}(st {STATE_TYPE}, {', '.join(args)})"
                f" RETURNS {STATE_TYPE}\nLANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\n"
                f"BEGIN\n  RAISE EXCEPTION USING MESSAGE = {pg_lit(before)} || "
                f"coalesce({shown}, 'None') || {pg_lit(after)};\nEND\n$f$;"
            )
            signature = ", ".join(a.split(" ", 1)[1] for a in args)
            names = (m.name, *m.aliases)
            out += create_aggregates(create, names, signature, step, INIT, None, STATE_TYPE)
    return out
