"""The label-based family in the PostgreSQL library: macro and weighted averages over labels.

Written from the registry's builders (:func:`mlsql.measures.label_based.label_values`,
:func:`~mlsql.measures.label_based.label_aggregates`,
:func:`~mlsql.measures.label_based.group_columns`) through :mod:`mlsql._postgres.ops`;
nothing of a formula is written here. Each aggregate (``macro_f1(actual, predicted)``,
``weighted_recall``, ``clp``, ...) keeps a :data:`STATE_TYPE`: the labels seen (or the
given ``labels``, in their order) and each one's tp, fp and fn, and the known rows; its
memory grows with the group's labels, never with rows. The final function unnests it
into the label rows, computes each label's values, then their average.

DuckDB's positional order: ``(actual, predicted[, sample_weight[, labels[, beta],
zero_division]])`` (beta in the F-beta averages only). Not here: the tables
``label_metrics`` and ``multilabel_report``.
"""

from __future__ import annotations

from typing import Any

from mlsql._label_types import MISMATCH_MESSAGE, UNIVERSE_EMPTY_MESSAGE, UNIVERSE_MESSAGE
from mlsql._postgres.forms import PARAM_TYPES, create_aggregates, create_type, forms, histogram_add
from mlsql._postgres.ops import Axis, Lets, PgSql, RowOps, fill, param, pg_lit
from mlsql._registry import Measure
from mlsql.measures import label_based as LB

#: the label list types every aggregate is created for
LIST_TYPES = ("text[]", "bigint[]")
#: the composite type of every label-based aggregate's state
STATE_TYPE = "mlsql_label_state"
STATE_FIELDS = (
    ("nums", "float8[]"),  # the checked parameters (zero_division coded, beta)
    ("numeric", "boolean"),  # the labels are integers: ordered as numbers
    ("fixed", "boolean"),  # the labels are the given universe, in its order
    ("labels", "text[]"),  # each label, as text, in the order first seen (or the universe)
    ("tp", "float8[]"),
    ("fp", "float8[]"),
    ("fn", "float8[]"),
    ("n_rows", "float8"),  # the known rows (their total weight with sample_weight)
    ("rows", "float8"),  # the known rows, counted
    # the report's histogram of rows (label_counts keeps it, the averages do not): each
    # distinct row code (tp, |A| and |P|: :func:`mlsql.measures.label_based.decode_row`) and
    # the rows' count (total weight)
    ("codes", "bigint[]"),
    ("cw", "float8[]"),
)
#: the state over no rows
INIT = "({},f,f,{},{},{},{},0,0,{},{})"
#: the registry's measures of the family held here (its tables are not)
AGGREGATES = tuple(LB.STANDALONE)


def included(m: Measure) -> bool:
    """Whether the library holds ``m``: one of the label-based averages."""
    return m.family == LB.FAMILY and m.name in AGGREGATES


#: plpgsql that adds the row's lists (as text[]: a, p) with weight x to the state: each
#: distinct non-NULL label of a to tp (in p) or fn, each of p not in a to fp; with a given
#: universe, other labels are left out
ADD = """CREATE_ FUNCTION _mlsql_label_add(st STATE_, a text[], p text[], x float8,
  keep boolean DEFAULT false)
RETURNS STATE_
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
DECLARE
  k int;
  i int;
  code bigint := 0;
BEGIN
  FOR i IN coalesce(array_lower(a, 1), 1) .. coalesce(array_upper(a, 1), 0) LOOP
    IF a[i] IS NOT NULL AND array_position(a, a[i]) = i THEN
POSITION_a
      IF k IS NOT NULL THEN
        IF a[i] = ANY(p) THEN
          st.tp[k] := st.tp[k] + x;
          code := code + BOTH_;
        ELSE
          st.fn[k] := st.fn[k] + x;
          code := code + ACTUAL_;
        END IF;
      END IF;
    END IF;
  END LOOP;
  FOR i IN coalesce(array_lower(p, 1), 1) .. coalesce(array_upper(p, 1), 0) LOOP
    IF p[i] IS NOT NULL AND array_position(p, p[i]) = i AND (p[i] = ANY(a)) IS NOT TRUE THEN
POSITION_p
      IF k IS NOT NULL THEN st.fp[k] := st.fp[k] + x; END IF;
    END IF;
    IF p[i] IS NOT NULL AND array_position(p, p[i]) = i
        AND (NOT st.fixed OR p[i] = ANY(st.labels)) THEN
      code := code + PREDICTED_;
    END IF;
  END LOOP;
  st.n_rows := st.n_rows + x;
  st.rows := st.rows + 1;
  IF keep THEN
HISTOGRAM_
  END IF;
  RETURN st;
END
$f$;"""


def _position(x: str) -> str:
    """plpgsql that sets k to the position of label ``x`` (a new label added last, with
    zero counts, unless the universe is given)."""
    return f"""      k := array_position(st.labels, {x});
      IF k IS NULL AND NOT st.fixed THEN
        st.labels := st.labels || {x};
        st.tp := st.tp || 0::float8; st.fp := st.fp || 0::float8; st.fn := st.fn || 0::float8;
        k := cardinality(st.labels);
      END IF;"""


def helpers(create: str) -> list[str]:
    """The state's type and the function that adds a row's lists."""
    fields = ", ".join(f"{n} {t}" for n, t in STATE_FIELDS)
    return [
        f"-- {STATE_TYPE}: the state of every label-based aggregate.\n"
        + create_type(STATE_TYPE, fields, create),
        ADD.replace("CREATE_", create)
        .replace("STATE_", STATE_TYPE)
        .replace("BOTH_", str(LB.FLAG_BOTH))
        .replace("ACTUAL_", str(LB.FLAG_ACTUAL))
        .replace("PREDICTED_", str(LB.FLAG_PREDICTED))
        .replace("POSITION_a", _position("a[i]"))
        .replace("POSITION_p", _position("p[i]"))
        .replace("HISTOGRAM_", histogram_add("st.codes", "st.cw", "code", "x", "    ")),
        *_universe_checks(create),
    ]


#: the final function's tables: each label's counts (``_lab``), then its values (``_val``)
LABELS = """WITH _lab AS MATERIALIZED (
    SELECT u.label, u.pos, u.tp, u.fp, u.fn, (st).n_rows AS n_rows
    FROM unnest((st).labels, (st).tp, (st).fp, (st).fn) WITH ORDINALITY AS u(label, tp, fp, fn, pos)
  ), _val AS MATERIALIZED (
    SELECT {values} FROM _lab k
  )"""


def final(m: Measure) -> str:
    """The final function's query: the label values, then the measure over them."""
    beta = param("beta") if any(p.name == "beta" for p in m.params) else 1
    zd = param("zero_division")
    counts = LB.LabelCounts(PgSql("k.tp"), PgSql("k.fp"), PgSql("k.fn"), PgSql("k.n_rows"))
    values = LB.label_values(RowOps(), counts, beta, zd)
    columns = ", ".join([*(f"{pg_lit(e)}::float8 AS {n}" for n, e in values.items()), "k.n_rows"])
    ops = Axis(Lets(), "_val v")

    def col(name: str) -> PgSql:
        return PgSql(f"v.{name}")

    found = LB.label_aggregates(ops, col, zd, only=LB.standalone_needs(m.name))
    expr = LB.standalone_value(RowOps(), m.name, found.__getitem__, beta)
    in_state = {p.name: f"(st).nums[{i + 1}]" for i, p in enumerate(_numbers(m))}
    return fill(f"{LABELS.format(values=columns)}\n  SELECT {pg_lit(expr)}", in_state)


def _numbers(m: Measure) -> list[Any]:
    """The parameters kept in the state's numbers (``labels`` is its universe)."""
    return [p for p in m.params if p.name in ("beta", "zero_division")]


def _forms(m: Measure, list_type: str) -> list[Any]:
    """DuckDB's positional forms: ``labels`` typed as the lists."""

    def types(name: str) -> tuple[str, ...]:
        return (list_type,) if name == "labels" else PARAM_TYPES[name]

    return forms(m, types, required=())


def step(
    name: str,
    list_type: str,
    args: list[tuple[str, str]],
    weighted: bool,
    nums: list[str],
    create: str,
    keep: bool = False,
) -> str:
    """The step function ``_mlsql_<name>_step`` of one positional form: the checked
    parameters ``nums`` (and the universe, where ``labels`` is among ``args``; typed
    ``anyarray``, its kind is checked against the lists') kept at the first row, the weight
    checked, then the row's lists added (and its row code to the histogram, with ``keep``)."""
    func = str(pg_lit(name))
    names = [n for n, _ in args]
    body = [
        "  IF st.rows = 0 AND NOT st.fixed THEN",
        f"    st.nums := ARRAY[{', '.join(nums)}]::float8[];",
        f"    st.numeric := {'true' if list_type == 'bigint[]' else 'false'};",
    ]
    if "labels" in names:
        any_kind = dict(args)["labels"] == "anyarray"  # checked here: text or integers
        body += [
            "    IF labels IS NOT NULL THEN",
            *([KIND_CHECK.replace("FUNC_", func)] if any_kind else []),
            f"      st.labels := _mlsql_check_universe(labels{'::text[]' if any_kind else ''}, {func});",
            "      st.fixed := true;",
            "      st.tp := array_fill(0::float8, ARRAY[cardinality(st.labels)]);",
            "      st.fp := st.tp; st.fn := st.tp;",
            "    END IF;",
        ]
    body.append("  END IF;")
    weight = "1"
    if weighted:
        body.append(f"  w := _mlsql_weight(sample_weight, {func});")
        # a row of weight 0 adds nothing, not even its labels to the universe (DuckDB's)
        body.append("  IF w IS NULL OR w = 0 THEN RETURN st; END IF;")
        weight = "w"
    body.append("  IF actual IS NULL OR predicted IS NULL THEN RETURN st; END IF;")
    keeps = ", true" if keep else ""
    body.append(
        f"  RETURN _mlsql_label_add(st, actual::text[], predicted::text[], {weight}{keeps});"
    )
    listed = [f"actual {list_type}", f"predicted {list_type}", *(f"{n} {t}" for n, t in args)]
    declared = "  w float8;\n  v_kind text;\n"
    return (
        f"{create} FUNCTION _mlsql_{name}_step(st {STATE_TYPE}, {', '.join(listed)})"
        f" RETURNS {STATE_TYPE}\nLANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\n"
        f"DECLARE\n{declared}BEGIN\n" + "\n".join(body) + "\nEND\n$f$;"
    )


def aggregate(m: Measure, create: str) -> list[str]:
    """The final function, and per list type and positional form a step and the aggregate."""
    final_name = f"_mlsql_{m.name}_final"
    out = [
        f"{create} FUNCTION {final_name}(st {STATE_TYPE}) RETURNS float8\n"
        f"LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$\n{final(m)}\n$f$;"
    ]
    func = str(pg_lit(m.name))
    for list_type in LIST_TYPES:
        for form in _forms(m, list_type):
            names = [n for n, _ in form.args]
            given = {
                p.name: p.name if p.name in names else str(pg_lit(p.default)) for p in m.params
            }
            nums = [f"_mlsql_check_{p.name}({given[p.name]}, {func})" for p in _numbers(m)]
            text = step(m.name, list_type, list(form.args), form.weighted, nums, create)
            out.append(
                f"-- {m.name}({', '.join(['actual', 'predicted', *names])}): {m.summary}\n{text}"
            )
            signature = ", ".join([list_type, list_type, *(t for _, t in form.args)])
            out += create_aggregates(
                create, (m.name,), signature, f"_mlsql_{m.name}_step", INIT, final_name, STATE_TYPE
            )
    return out + mismatched(m.name, [list(f.args) for f in _forms(m, "text[]")], create)


def mismatched(name: str, forms: list[list[tuple[str, str]]], create: str) -> list[str]:
    """``name`` over lists of two kinds (text[] and bigint[]), in each form (``forms``: the
    arguments after the lists, ``labels`` typed as the first list): the step fails with
    DuckDB's message naming both types (not PostgreSQL's "function does not exist")."""
    out = []
    for left, right in (("text[]", "bigint[]"), ("bigint[]", "text[]")):
        text = MISMATCH_MESSAGE.format(
            func=name, left="actual", right="predicted", left_type=left, right_type=right
        )
        step = f"_mlsql_{name}_mismatch"
        for args in forms:
            types = [left if (n, t) == ("labels", "text[]") else t for n, t in args]
            listed = ", ".join([left, right, *types])
            out.append(
                f"{create} FUNCTION {step}(st {STATE_TYPE}, {listed}) RETURNS {STATE_TYPE}\n"
                "LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\n"
                f"BEGIN\n  RAISE EXCEPTION USING MESSAGE = {pg_lit(text)};\nEND\n$f$;"
            )
            out += create_aggregates(create, (name,), listed, step, INIT, None, STATE_TYPE)
    return out


def _kind_check() -> str:
    """plpgsql that fails where ``labels`` (anyarray) are not of the lists' kind (text or
    integers), as DuckDB words it; FUNC_ stands for the function's name."""
    got = "'[' || array_to_string(labels, ', ', 'NULL') || ']'"
    kind = "CASE WHEN st.numeric THEN 'integers' ELSE 'text' END"
    column = "CASE WHEN st.numeric THEN 'bigint[]' ELSE 'text[]' END"
    parts = UNIVERSE_MESSAGE.replace("{func}", "\x01").replace("{type}", "\x02")
    parts = parts.replace("{kind}", "\x03").replace("{labels}", "\x04")
    message = str(pg_lit(parts))
    for mark, value in (("\x01", "FUNC_"), ("\x02", column), ("\x03", kind), ("\x04", got)):
        message = f"replace({message}, {pg_lit(mark)}, {value})"
    return f"""      v_kind := CASE WHEN pg_typeof(labels) IN ('text[]'::regtype,
          'character varying[]'::regtype) THEN 'text' WHEN pg_typeof(labels) IN
          ('smallint[]'::regtype, 'integer[]'::regtype, 'bigint[]'::regtype) THEN 'integer' END;
      IF v_kind IS DISTINCT FROM (CASE WHEN st.numeric THEN 'integer' ELSE 'text' END) THEN
        RAISE EXCEPTION USING MESSAGE = {message};
      END IF;"""


#: :func:`_kind_check`'s plpgsql
KIND_CHECK = _kind_check()


def _universe_checks(create: str) -> list[str]:
    """``_mlsql_check_universe(x, func)``: ``labels`` as text, each label once in its first
    place, NULLs dropped (as DuckDB reads them); none left is DuckDB's error. NULL stays NULL:
    the labels seen."""
    before, after = UNIVERSE_EMPTY_MESSAGE.split("{func}")
    return [
        f"""-- _mlsql_check_universe(x, func): labels, distinct, without NULL, at least one.
{create} FUNCTION _mlsql_check_universe(x {list_type}, func text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
DECLARE
  out text[];
BEGIN
  IF x IS NULL THEN RETURN NULL; END IF;
  out := ARRAY(SELECT u.v::text FROM unnest(x) WITH ORDINALITY AS u(v, i)
    WHERE u.v IS NOT NULL AND array_position(x, u.v) = u.i ORDER BY u.i);
  IF cardinality(out) = 0 THEN
    RAISE EXCEPTION USING MESSAGE = {pg_lit(before)} || func || {pg_lit(after)};
  END IF;
  RETURN out;
END
$f$;"""
        for list_type in LIST_TYPES
    ]
