"""The ranked-list measures of the PostgreSQL library: Hivemall's @k family, ranx's retrieval
measures, bpref and Hivemall's graded nDCG, as aggregates.

Each aggregate is the mean (weighted) of a per-row value, as in every engine
(:func:`mlsql.measures.ranking.row_value`). The step function computes a row's value in
plpgsql: the lists cleaned (``_mlsql_items``: NULLs and repeats dropped, the first
occurrence kept), then one loop over the ranked items in which every sum the registry's
formula asks for (``over_hits``, ``hits_within``; a graded list's ``over_ranked``) is a
running variable, then the formula over those variables. The state is the mean's sums: a
few numbers, whatever the rows.

Positional forms, as Hivemall writes them: ``precision_at(rank_items, correct_items[, k[,
sample_weight]])``; ``rbp(correct_items, rank_items[, p[, sample_weight]])``. ``auc`` over
two label lists is Hivemall's ranking AUC (``ranking_auc``), as in DuckDB. Lists of two
kinds (text and integers) are DuckDB's error, as is a graded list that is not numbers.

The label-score measures (``coverage_error``, ``ndcg_score``, ...) and ``top_k`` take a map
of scores, which PostgreSQL has not: they are left out (:data:`LEFT_OUT`).
"""

from __future__ import annotations

from itertools import product
from typing import Any

from mlsql._label_types import MISMATCH_MESSAGE
from mlsql._postgres.forms import (
    add_row,
    create_aggregates,
    final_name,
    finals,
    param_checks,
    plpgsql,
    signature,
    step_function,
)
from mlsql._postgres.ops import PgSql, RowOps, StateOps, pg_lit
from mlsql._registry import Measure
from mlsql._weights import WeightedOps
from mlsql.measures import ranking as R

FAMILY = R.FAMILY
#: the inputs of the measures held here: ranked lists (Hivemall's order, ranx's), relevance
#: grades, and bpref's three lists
RANKED = (("rank_items", "correct_items"), ("correct_items", "rank_items"))
GRADED = ("ranked_relevance", "ideal_relevance")
JUDGED = ("correct_items", "rank_items", "nonrelevant_items")
#: the item list types each aggregate is created for, and the grades' type
LIST_TYPES = ("text[]", "bigint[]")
GRADES = "float8[]"
#: more names of an aggregate over label lists (DuckDB's auc over lists)
EXTRA_NAMES = {"ranking_auc": ("auc",)}
#: why the family's other measures are left out
LEFT_OUT = {
    name: "its scores are a map (or a list of label-score structs) per row, which PostgreSQL "
    "has not (mlsql.evaluate over an ibis table of the database runs it there)"
    for name in (
        "coverage_error",
        "label_ranking_loss",
        "label_ranking_average_precision",
        "one_error",
        "ndcg_score",
        "top_k",
        "above_threshold",
        "top_k_above",
    )
}


def included(m: Measure) -> bool:
    """Whether the library holds ``m``: a ranked-list, graded or bpref aggregate."""
    return m.family == FAMILY and m.kind == "aggregate" and m.inputs in (*RANKED, GRADED, JUDGED)


class RankingOps(RowOps):
    """:class:`RowOps` with the logarithm and power of the DCG and RBP formulas."""

    def log2(self, x: Any) -> PgSql:
        return PgSql(f"(ln({pg_lit(x)}) / ln(2::float8))")

    def pow(self, base: Any, exponent: Any) -> PgSql:
        return PgSql(f"power(({pg_lit(base)})::float8, ({pg_lit(exponent)})::float8)")


class Loop:
    """The running sums a formula asks for, each a plpgsql variable ``s1``, ``s2``, ...:
    statements for the body of the loop over the hits (or items) and for after it."""

    def __init__(self, sums: list[str] | None = None) -> None:
        self.sums = [] if sums is None else sums  # shared by the loops of one row
        self.inside: list[str] = []
        self.after: list[str] = []

    def add(self, term: Any, where: str = "") -> PgSql:
        """A new sum adding ``term`` (NULL adds nothing) in the loop, where ``where`` holds."""
        s = f"s{len(self.sums) + 1}"
        self.sums.append(s)
        step = f"{s} := {s} + coalesce({pg_lit(term)}, 0);"
        self.inside.append(f"IF {where} THEN {step} END IF;" if where else step)
        return PgSql(s)

    def over(self, count: Any, term: Any) -> PgSql:
        """A new sum of ``term`` (over ``g``, 1-based) for g = 1 .. count, after the loop."""
        s = f"s{len(self.sums) + 1}"
        self.sums.append(s)
        self.after += [
            f"FOR g IN 1..coalesce(floor({pg_lit(count)}), 0)::int LOOP",
            f"  {s} := {s} + coalesce({pg_lit(term)}, 0);",
            "END LOOP;",
        ]
        return PgSql(s)


#: the variables of a row: positions, counts, the current item's place and grade
G, Q, NTH = PgSql("g::float8"), PgSql("q"), PgSql("nth")


def _ranked(loop: Loop) -> R.RankedStats:
    return R.RankedStats(
        unknown=PgSql("false"),
        n_ranked=PgSql("n"),
        n_true=PgSql("nt"),
        hits=PgSql("h"),
        first_hit=PgSql("fh"),
        over_hits=lambda term: loop.add(term(Q, NTH)),
        over_positions=lambda count, term: loop.over(count, term(G)),
        hits_within=lambda count: loop.add(1.0, f"q <= {pg_lit(count)}"),
    )


def _graded(loops: tuple[Loop, Loop]) -> R.GradedStats:
    ranked, ideal = loops
    grade = PgSql("x")
    return R.GradedStats(
        unknown=PgSql("false"),
        over_ranked=lambda term: ranked.add(term(grade, Q)),
        over_ideal=lambda term: ideal.add(term(grade, Q)),
    )


def _judged(loop: Loop) -> R.JudgedStats:
    nt, nf = PgSql("nt"), PgSql("nf")
    return R.JudgedStats(
        unknown=PgSql("false"),
        n_true=nt,
        n_false=nf,
        over_hits=lambda term: loop.add(term(Q, NTH, nt, nf)),
    )


def _declared(sums: list[str]) -> list[str]:
    return [f"{s} float8;" for s in sums]


def _zeroed(sums: list[str]) -> list[str]:
    return [f"  {s} := 0;" for s in sums]


def _indent(lines: list[str], depth: int) -> list[str]:
    return [" " * depth + line for line in lines]


def row_value(m: Measure) -> tuple[list[str], list[str]]:
    """plpgsql that sets ``v`` to ``m``'s value of the row (its inputs known), and the
    variables it declares beyond the shared ones."""
    ops = RankingOps()
    params = {p.name: PgSql(f"v_{p.name}") for p in m.params if p.name != "k"}
    first, second, *rest = m.inputs
    sums: list[str] = []  # the running sums' variables
    if m.inputs == GRADED:
        loops = (Loop(sums), Loop(sums))
        value = R.row_value(ops, m.name, _graded(loops), **params)
        ranked, ideal = loops
        lines = [
            *_zeroed(sums),
            f"  n := coalesce(v_k, cardinality({first}));",
            f"  FOR i IN 1..least(n, cardinality({first}))::int LOOP",
            f"    q := i; x := {first}[i];",
            "    IF x IS NOT NULL THEN",
            *_indent(ranked.inside, 6),
            "    END IF;",
            "  END LOOP;",
            f"  best := ARRAY(SELECT u.x FROM unnest({second}) AS u(x) WHERE u.x IS NOT NULL"
            " ORDER BY u.x DESC);",
            "  FOR i IN 1..least(n, cardinality(best))::int LOOP",
            "    q := i; x := best[i];",
            *_indent(ideal.inside, 4),
            "  END LOOP;",
            f"  v := {pg_lit(value)};",
        ]
        return lines, ["best float8[];", *_declared(sums)]
    loop = Loop(sums)
    if m.inputs == JUDGED:
        value = R.row_value(ops, m.name, _judged(loop), **params)
        lines = [
            *_zeroed(sums),
            f"  tt := _mlsql_items({first});",
            f"  rr := _mlsql_items({second});",
            f"  nr := ARRAY(SELECT u.x FROM unnest(_mlsql_items({rest[0]})) WITH ORDINALITY"
            " AS u(x, i) WHERE NOT (u.x = ANY(tt)) ORDER BY u.i);",
            "  nt := cardinality(tt); nf := cardinality(nr); q := 0; nth := 0;",
            "  FOR i IN 1..cardinality(rr) LOOP",
            "    IF rr[i] = ANY(tt) THEN",
            "      q := q + 1; nth := nth + 1;",
            *_indent(loop.inside, 6),
            "    ELSIF rr[i] = ANY(nr) THEN",
            "      q := q + 1;",
            "    END IF;",
            "  END LOOP;",
            f"  v := {pg_lit(value)};",
        ]
        return lines, _declared(sums)
    value = R.row_value(ops, m.name, _ranked(loop), **params)
    rank, truth = ("rank_items", "correct_items")
    k = "v_k" if any(p.name == "k" for p in m.params) else "NULL"
    lines = [
        *_zeroed(sums),
        f"  rr := _mlsql_items({rank});",
        f"  tt := _mlsql_items({truth});",
        "  nt := cardinality(tt);",
        f"  n := least(cardinality(rr), coalesce({k}, cardinality(rr)));",
        "  h := 0; fh := 0; nth := 0;",
        "  FOR i IN 1..n::int LOOP",
        "    IF rr[i] = ANY(tt) THEN",
        "      q := i; nth := nth + 1; h := h + 1;",
        "      IF fh = 0 THEN fh := i; END IF;",
        *_indent(loop.inside, 6),
        "    END IF;",
        "  END LOOP;",
        *_indent(loop.after, 2),
        f"  v := {pg_lit(value)};",
    ]
    return lines, _declared(sums)


def _final(weighted: bool) -> tuple[str, list[Any], int]:
    """The mean of the rows' values ``v`` over the state: final expression, slots, size."""
    ops = StateOps(offset=0)
    run: Any = WeightedOps(ops, PgSql("w")) if weighted else ops
    return str(pg_lit(run.mean(PgSql("v")))), ops.slots, ops.size


def _forms(m: Measure) -> list[list[str]]:
    """The positional forms' trailing arguments: each prefix of (parameters, sample_weight)."""
    trailing = [f"{p.name} float8" for p in m.params] + ["sample_weight float8"]
    if m.params:
        return [[], trailing[:-1], trailing]
    return [[], trailing]


def _input_types(m: Measure) -> list[tuple[str, ...]]:
    """Each typing of the inputs that gets a working aggregate."""
    if m.inputs == GRADED:
        return [(GRADES, GRADES)]
    return [(t,) * len(m.inputs) for t in LIST_TYPES]


def _refusals(m: Measure) -> list[tuple[tuple[str, ...], str]]:
    """The typings of the inputs refused with DuckDB's message, and the message."""
    func = m.name
    out: list[tuple[tuple[str, ...], str]] = []
    if m.inputs == GRADED:
        graded: list[tuple[str, ...]] = [("text[]", GRADES), (GRADES, "text[]"), ("text[]",) * 2]
        for types in graded:
            name = m.inputs[types.index("text[]")]
            out.append((types, R.GRADES_MESSAGE.format(func=func, name=name, type="text[]")))
        return out
    for types in product(LIST_TYPES, repeat=len(m.inputs)):
        if len(set(types)) == 1:
            continue
        i, j = next(
            (i, j)
            for i in range(len(types))
            for j in range(i + 1, len(types))
            if types[i] != types[j]
        )
        left, right = m.inputs[i], m.inputs[j]
        message = MISMATCH_MESSAGE.format(
            func=func, left=left, right=right, left_type=types[i], right_type=types[j]
        )
        out.append((types, message))
    return out


def _step_body(
    m: Measure, weighted: bool, given: list[str], slots: list[Any], shared: list[str]
) -> str:
    """The step's plpgsql: the parameters and weight checked, an unknown row skipped, the
    row's value, then the mean's sums (``shared``: the row's variables, declared first)."""
    func = pg_lit(m.name)
    lines, extra = row_value(m)
    declare, statements = param_checks(m, given)
    if weighted:
        statements.append(f"  w := _mlsql_weight(sample_weight, {func});")
    unknown = " OR ".join(f"{name} IS NULL" for name in m.inputs)
    statements.append(f"  IF {unknown} THEN RETURN st; END IF;")
    statements += [*lines, *add_row(slots), "  RETURN st;"]
    return plpgsql(shared + declare + extra, statements)


def aggregate(m: Measure, create: str) -> list[str]:
    """``m``'s final functions, and per input typing and form its step and aggregates."""
    lowered = {w: _final(w) for w in (False, True)}
    out = finals(m.name, {w: low[0] for w, low in lowered.items()}, create)
    names = (m.name, *m.aliases)
    for types in _input_types(m):
        items = types[0] if m.inputs != GRADED else "text[]"
        shared = [
            f"rr {items};",
            f"tt {items};",
            f"nr {items};",
            "n float8; nt float8; nf float8; h float8; fh float8; nth float8; q float8;",
            "v float8; w float8; x float8; t float8;",
        ]
        for trailing in _forms(m):
            weighted = bool(trailing) and trailing[-1].startswith("sample_weight")
            _, slots, size = lowered[weighted]
            given = [a.split(" ")[0] for a in trailing]
            args = [f"{name} {t}" for name, t in zip(m.inputs, types, strict=True)] + trailing
            step = f"_mlsql_{m.name}_step"
            body = _step_body(m, weighted, given, slots, shared)
            comment = f"{m.name}({', '.join(a.split(' ')[0] for a in args)}): {m.summary}"
            out.append(step_function(create, step, args, body, comment))
            init = "{" + ",".join(["0"] * size) + "}"
            final = final_name(m.name, weighted)
            every = names + (EXTRA_NAMES.get(m.name, ()) if types[0] in LIST_TYPES else ())
            out += create_aggregates(create, every, signature(args), step, init, final)
    return out


def refused(m: Measure, create: str, steps: set[str]) -> list[str]:
    """The aggregates over inputs of the wrong types (:func:`_refusals`): the final function
    fails with DuckDB's message (also over no rows); the step keeps the state."""
    out = []
    names = (m.name, *m.aliases, *EXTRA_NAMES.get(m.name, ()))
    for i, (types, message) in enumerate(_refusals(m)):
        final = f"_mlsql_{m.name}_type_error_{i + 1}"
        out.append(
            f"{create} FUNCTION {final}(st float8[]) RETURNS float8\n"
            f"LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\nBEGIN\n"
            f"  RAISE EXCEPTION USING MESSAGE = {pg_lit(message)};\nEND\n$f$;"
        )
        for trailing in _forms(m):
            listed = ", ".join([*types, *(a.split(" ")[1] for a in trailing)])
            if listed not in steps:
                steps.add(listed)
                out.append(
                    f"{create} FUNCTION _mlsql_ranking_type_error_step(st float8[], {listed})"
                    " RETURNS float8[]\nLANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$ SELECT st $f$;"
                )
            every = names if m.inputs != GRADED else (m.name, *m.aliases)
            out += create_aggregates(
                create, every, listed, "_mlsql_ranking_type_error_step", "{}", final
            )
    return out


def helpers(create: str) -> list[str]:
    """``_mlsql_items(x)``: a list's items without NULLs and repeats, in the order of their
    first occurrence (NULL stays NULL)."""
    return [
        f"""-- _mlsql_items(x): the items of x, NULLs and repeats dropped (the first one kept).
{create} FUNCTION _mlsql_items(x {t}) RETURNS {t}
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
DECLARE
  out {t} := '{{}}';
BEGIN
  IF x IS NULL THEN RETURN NULL; END IF;
  FOR i IN 1..coalesce(cardinality(x), 0) LOOP
    IF x[i] IS NOT NULL AND NOT (x[i] = ANY(out)) THEN
      out := out || x[i];
    END IF;
  END LOOP;
  RETURN out;
END
$f$;"""
        for t in LIST_TYPES
    ]
