"""The score measures of the PostgreSQL library that a bounded state holds: the losses
(``logloss``, ``hivemall_logloss``, ``brier_score_loss``), the binned curves' areas
(``binned_auc``, ``binned_average_precision_score``) and ``expected_calibration_error``.

- A loss's state is a ``float8[]`` of compensated sums (the rows, the loss), as the binary
  family's (:mod:`mlsql._postgres.binary`).
- The binned measures and the calibration error keep a histogram of bins
  (:data:`STATE_TYPE`): each bin seen, with two sums (positives and negatives of the grid
  bins; Σ (prob - actual) and the rows of the calibration bins), so memory grows with the
  bins (``thresholds``, ``n_bins``), never with the rows. The final function reads the bins
  sorted, with running sums (window functions), and applies the registry's formula.

The exact ``auc`` and average precision rank every distinct score: a bounded aggregate of
them cannot exist, and they are left out (:data:`LEFT_OUT`), naming the binned forms.

Labels are boolean or 0/1 (``_mlsql_binary_flag``), scores finite numbers
(``_mlsql_finite``), probabilities in [0, 1] where the measure says so: DuckDB's messages.
A row with a NULL label or score (or weight) is skipped; the checks read known rows only, as
DuckDB's.
"""

from __future__ import annotations

from typing import Any

from mlsql import _classification_params as CP
from mlsql import _params as P
from mlsql._postgres import binary
from mlsql._postgres.forms import (
    add_row,
    create_aggregates,
    create_type,
    final_name,
    finals,
    forms,
    param_checks,
    plpgsql,
    signature,
    step_function,
)
from mlsql._postgres.messages import boolean_check, integer_check, param_message, raise_statement
from mlsql._postgres.ops import PgSql, RowOps, StateOps, fill, param, pg_lit
from mlsql._registry import Measure
from mlsql._weights import WeightedOps
from mlsql.measures import scores as SC

FAMILY = SC.FAMILY
LOSSES = ("logloss", "hivemall_logloss", "brier_score_loss")
BINNED = (*SC.GRID, "expected_calibration_error")
#: the state of the binned measures: the checked parameters, the known rows, and per bin
#: seen its key and two sums (a, b)
STATE_TYPE = "mlsql_score_state"
STATE_FIELDS = (
    ("opts", "float8[]"),
    ("rows", "float8"),
    ("keys", "float8[]"),
    ("a", "float8[]"),
    ("b", "float8[]"),
)
INIT = "({},0,{},{},{})"
#: the text parameters, coded as numbers in a state: each code's option (the first: 0)
CODES = {
    "norm": ("l1", "l2", "max"),
    "scale_by_half": ("auto", "true", "false"),
}
#: the options a text parameter takes as text (scale_by_half's others are booleans)
TEXT_OPTIONS = {"norm": CODES["norm"], "scale_by_half": ("auto",)}
LEFT_OUT = {
    name: "it ranks every distinct score, so its state would grow with the rows; "
    "binned_auc and binned_average_precision_score are the bounded forms (mlsql.evaluate "
    "over an ibis table of the database runs the exact one there)"
    for name in ("auc", "hivemall_auc", "average_precision_score", "area_under_pr")
}


def included(m: Measure) -> bool:
    """Whether the library holds ``m``: a loss, a binned area or the calibration error."""
    return m.family == FAMILY and m.name in (*LOSSES, *BINNED)


def param_types(name: str) -> tuple[str, ...]:
    """Each parameter's SQL types (``scale_by_half``: 'auto' or a boolean)."""
    return {
        "zero_division": ("text", "float8"),
        # numeric: a value written with decimals reaches the check that refuses it
        "thresholds": ("float8", "numeric"),
        "n_bins": ("float8", "numeric"),
        "norm": ("text",),
        "scale_by_half": ("text", "boolean"),
        "sample_weight": ("float8",),
    }[name]


def decoded(name: str, code: str) -> str:
    """A coded text parameter read back as its option's text (for the registry's formula)."""
    cases = " ".join(f"WHEN {i} THEN {pg_lit(v)}" for i, v in enumerate(CODES[name]))
    return f"(CASE {code} {cases} END)"


class ScoreOps(RowOps):
    """:class:`RowOps` with ``floor`` (the bins of a score)."""

    def floor(self, x: Any) -> PgSql:
        return PgSql(f"floor({pg_lit(x)})")


def _in_state(m: Measure, state: str) -> dict[str, str]:
    """Each parameter's SQL in the final function: its (decoded) slot of the state."""
    out = {}
    for i, p in enumerate(m.params):
        slot = f"{state}[{i + 1}]"
        out[p.name] = decoded(p.name, slot) if p.name in CODES else slot
    return out


# ------------------------------------------------------------------ the losses
def _loss(m: Measure, weighted: bool) -> tuple[str, list[Any], int]:
    """A loss's final expression over the state ``st``, its slots and the state's size."""
    ops = StateOps(offset=len(m.params))
    run: Any = WeightedOps(ops, PgSql("w")) if weighted else ops
    if m.name == "brier_score_loss":
        term = SC.squared_error_term(ops, PgSql("y"), PgSql("s"))
    else:
        term = SC.log_loss_term(ops, PgSql("y"), PgSql("ln(pc)"), PgSql("ln(1 - pc)"))
    stats = SC.LossStats(n=run.sum(PgSql("one")), total_loss=run.sum(term))
    assert m.build is not None
    expr = m.build(ops, stats, **{p.name: param(p.name) for p in m.params})
    return fill(str(pg_lit(expr)), _in_state(m, "st")), ops.slots, ops.size


# ------------------------------------------------------------------ the binned measures
#: the final function's table of the bins, sorted by key: each bin's sums, the negatives
#: below it, and the positives and rows at or above it
BINS = """WITH _bin AS (
    SELECT u.k, u.a, u.b FROM unnest((st).keys, (st).a, (st).b) AS u(k, a, b)
  ), _run AS (
    SELECT _bin.*,
      coalesce(sum(b) OVER (ORDER BY k ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
        AS neg_lt,
      sum(a) OVER (ORDER BY k DESC ROWS UNBOUNDED PRECEDING) AS pos_ge,
      sum(a + b) OVER (ORDER BY k DESC ROWS UNBOUNDED PRECEDING) AS all_ge
    FROM _bin
  )"""


def _over_bins(term: Any) -> PgSql:
    return PgSql(f"(SELECT sum({pg_lit(term)})::float8 FROM _run)")


def _grid_stats(m: Measure, weighted: bool) -> SC.GridStats:
    """The grid's rank and precision statistics over the bins (``a`` positives, ``b``
    negatives, the keys the grid bins)."""
    top = PgSql(f"(k = {param('thresholds')} - 1)")
    a, b = PgSql("a"), PgSql("b")
    n_positive, n_negative = _over_bins(a), _over_bins(b)
    rows = PgSql("(st).rows")
    u = _over_bins(a * (PgSql("neg_lt") + b / 2))
    top_positive = _over_bins(PgSql(f"CASE WHEN {top} THEN a ELSE 0 END"))
    top_negative = _over_bins(PgSql(f"CASE WHEN {top} THEN b ELSE 0 END"))
    ops = RowOps()
    rank = SC.RankStats(
        n_positive=n_positive,
        n_negative=n_negative,
        u=SC.grid_top_ties(ops, u, top_positive, top_negative),
        rows=rows if weighted else None,
    )
    precision = PgSql("CASE WHEN all_ge > 0 THEN pos_ge / all_ge END")
    ap = SC.PrecisionStats(
        n=rows,
        n_positive=n_positive,
        precision_sum=_over_bins(PgSql(f"CASE WHEN a > 0 THEN a * {precision} END")),
    )
    return SC.GridStats(at=lambda _t: rank if m.name == "binned_auc" else ap)


def _calibration_stats() -> SC.CalibrationStats:
    """The calibration bins (``a`` Σ w (prob - actual), ``b`` Σ w) as the registry reads them."""

    def over_bins(_n: Any, term: Any, largest: bool) -> PgSql:
        fn = "max" if largest else "sum"
        value = pg_lit(term(PgSql("abs(a)"), PgSql("b")))
        return PgSql(f"(SELECT {fn}({value})::float8 FROM _run)")

    return SC.CalibrationStats(n=_over_bins(PgSql("b")), over_bins=over_bins)


def _binned_final(m: Measure, weighted: bool) -> str:
    """The final function's query: NULL over no known rows, else the registry's formula."""
    stats: Any
    if m.name == "expected_calibration_error":
        stats = _calibration_stats()
    else:
        stats = _grid_stats(m, weighted)
    assert m.build is not None
    expr = m.build(RowOps(), stats, **{p.name: param(p.name) for p in m.params})
    value = fill(str(pg_lit(expr)), _in_state(m, "(st).opts"))
    return f"  {BINS}\n  SELECT CASE WHEN (st).rows = 0 THEN NULL ELSE {value} END"


def _bin_of_row(m: Measure) -> tuple[str, str, str]:
    """plpgsql expressions of a known row's bin and its two sums (``y``, ``s``, ``w``, the
    checked parameters ``v_<name>``)."""
    ops = ScoreOps()
    if m.name == "expected_calibration_error":
        key = SC.calibration_bin(ops, PgSql("s"), PgSql("v_n_bins"))
        return str(pg_lit(key)), "w * (s - y)", "w"
    key = SC.grid_bin(ops, PgSql("s"), PgSql("v_thresholds"))
    return str(pg_lit(key)), "w * y", "w * (1 - y)"


# ------------------------------------------------------------------ steps and aggregates
def _row(m: Measure, weighted: bool, given: list[str]) -> list[str]:
    """The step's first statements: the parameters checked (into ``v_<name>``), the row
    skipped where unknown, its weight, label (``y``, 1 or 0) and score (``s``) checked."""
    func = pg_lit(m.name)
    label, score = SC.label_and_score(m)
    out = param_checks(m, given)[1]
    out.append(f"  IF {label} IS NULL OR {score} IS NULL THEN RETURN st; END IF;")
    if weighted:
        out.append(f"  w := _mlsql_weight(sample_weight, {func});")
        out.append("  IF w IS NULL THEN RETURN st; END IF;")
    else:
        out.append("  w := 1;")
    out.append(
        f"  y := CASE WHEN _mlsql_binary_flag({label}, {pg_lit(label)}, {func}) THEN 1 ELSE 0 END;"
    )
    out.append(f"  s := _mlsql_finite({score}, {pg_lit(score)}, {func});")
    if m.name in SC.PROBABILITIES:
        for test, got in zip(("s < 0", "s > 1"), CP.OUT_OF_RANGE, strict=True):
            message = pg_lit(CP.probability_value_message(m.name, score, got))
            out.append(f"  IF {test} THEN RAISE EXCEPTION USING MESSAGE = {message}; END IF;")
    return out


#: the types of (label, score) each aggregate is created for; the last pair takes a label or
#: score of another type, which the checks refuse with DuckDB's messages
INPUT_TYPES = (*((t, "float8") for t in binary.INPUT_TYPES), ("anyelement", "anycompatible"))


def aggregate(m: Measure, create: str) -> list[str]:
    """``m``'s final functions, and per input typing and form its step and aggregates."""
    loss = m.name in LOSSES
    if loss:
        lowered = {w: _loss(m, w) for w in (False, True)}
        out = finals(m.name, {w: low[0] for w, low in lowered.items()}, create)
    else:
        out = [
            f"{create} FUNCTION {final_name(m.name, w)}(st {STATE_TYPE}) RETURNS float8\n"
            f"LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$\n{_binned_final(m, w)}\n$f$;"
            for w in (False, True)
        ]
    label, score = SC.label_and_score(m)
    for label_type, score_type in INPUT_TYPES:
        types = {label: label_type, score: score_type}
        for form in forms(m, param_types):
            given = [n for n, _ in form.args]
            args = [f"{x} {types[x]}" for x in m.inputs] + [f"{n} {t}" for n, t in form.args]
            declare = ["y float8;", "s float8;", "w float8;", "x float8;", "t float8;"]
            declare += param_checks(m, given)[0]
            body = _row(m, form.weighted, given)
            step = f"_mlsql_{m.name}_step"
            if loss:
                _, slots, size = lowered[form.weighted]
                declare += ["one float8 := 1;", "pc float8;"]
                stored = [f"  st[{i + 1}] := v_{p.name};" for i, p in enumerate(m.params)]
                clip = f"  pc := greatest(least(s, {pg_lit(1 - SC.CLIP)}), {pg_lit(SC.CLIP)});"
                body += [*stored, clip, *add_row(slots), "  RETURN st;"]
                text = step_function(create, step, args, plpgsql(declare, body))
                init = "{" + ",".join(["NULL"] * len(m.params) + ["0"] * (size - len(m.params)))
                state, initial = "float8[]", init + "}"
            else:
                key, a, b = _bin_of_row(m)
                declare += ["key float8;", "k int;"]
                opts = ", ".join(f"v_{p.name}" for p in m.params)
                body += [
                    f"  st.opts := ARRAY[{opts}]::float8[];",
                    f"  key := {key};",
                    "  st.rows := st.rows + 1;",
                    "  k := array_position(st.keys, key);",
                    "  IF k IS NULL THEN",
                    "    st.keys := st.keys || key; st.a := st.a || 0::float8;"
                    " st.b := st.b || 0::float8;",
                    "    k := cardinality(st.keys);",
                    "  END IF;",
                    f"  st.a[k] := st.a[k] + {a};",
                    f"  st.b[k] := st.b[k] + {b};",
                    "  RETURN st;",
                ]
                text = (
                    f"{create} FUNCTION {step}(st {STATE_TYPE}, {', '.join(args)})"
                    f" RETURNS {STATE_TYPE}\nLANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\n"
                    f"{plpgsql(declare, body)}\n$f$;"
                )
                state, initial = STATE_TYPE, INIT
            comment = f"-- {m.name}({', '.join(a.split(' ')[0] for a in args)}): {m.summary}\n"
            out.append(comment + text)
            final = final_name(m.name, form.weighted)
            names = (m.name, *m.aliases)
            out += create_aggregates(create, names, signature(args), step, initial, final, state)
    return out


def helpers(create: str) -> list[str]:
    """The binned measures' state type and the checks of the score parameters."""
    fields = ", ".join(f"{n} {t}" for n, t in STATE_FIELDS)
    values = {"func": "func", "shown": "shown"}
    out = [
        f"-- {STATE_TYPE}: the state of the binned score aggregates.\n"
        + create_type(STATE_TYPE, fields, create),
    ]
    out += [integer_check(p, create) for p in (P.N_BINS, P.THRESHOLDS)]
    for name, p in (("norm", P.CALIBRATION_NORM), ("scale_by_half", P.SCALE_BY_HALF)):
        cases = " ".join(
            f"WHEN {pg_lit(v)} THEN {CODES[name].index(v)}" for v in TEXT_OPTIONS[name]
        )
        out.append(
            f"""-- _mlsql_check_{name}(x, func): {name} as its code ({", ".join(TEXT_OPTIONS[name])}).
{create} FUNCTION _mlsql_check_{name}(x text, func text) RETURNS float8
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
DECLARE
  shown text := coalesce(chr(39) || x || chr(39), 'None');
  code float8 := CASE lower(x) {cases} END;
BEGIN
  IF code IS NOT NULL THEN
    RETURN code;
  END IF;
  {raise_statement(param_message(p), values)}
END
$f$;"""
        )
    true_code, false_code = (CODES["scale_by_half"].index(v) for v in ("true", "false"))
    code = f"CASE WHEN x THEN {true_code} ELSE {false_code} END"
    out.append(boolean_check(P.SCALE_BY_HALF, create, "float8", code))
    return out
