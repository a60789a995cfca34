"""The PostgreSQL SQL library: the label-set, binary, rule, single-label, regression,
label-average, Hivemall, ranked-list, bounded score and agreement families as functions and
aggregates.

Written from the registry (:mod:`mlsql.measures.multilabel`; the binary family in
:mod:`mlsql._postgres.binary`, the single-label one in :mod:`mlsql._postgres.single_label`) and the formulas
(:mod:`mlsql._formulas`) through :mod:`mlsql._postgres.ops`; nothing of a
formula is written here. Per-row measures become SQL functions; aggregates
become ``CREATE AGGREGATE`` with a ``float8[]`` state (the parameters, then a
sum and a count per statistic) and a final function that applies the formula.

PostgreSQL passes an aggregate's arguments by position only, so its forms
follow DuckDB's positional order: ``(actual, predicted, <required>)``, then
``sample_weight``, then the optional parameters in the registry's order
(``micro_fbeta(actual, predicted, 1, 2)`` is unweighted F2); the ranking aggregates take
Hivemall's (``precision_at(rank_items, correct_items, k, sample_weight)``). Per-row functions
take named parameters with defaults, as DuckDB's macros.

``mlsql sql-path --dialect postgres`` (or ``python -m mlsql._postgres.library``) writes the
files into mlsql's cache and names them (:func:`written`): they are made, not kept.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsql import _params as P
from mlsql._cache import cache_dir
from mlsql._formulas import RowStats
from mlsql._label_types import MISMATCH_MESSAGE
from mlsql._postgres import (
    agreement,
    binary,
    calibration,
    class_tables,
    counts,
    curves,
    hivemall,
    indicators,
    label_based,
    label_report,
    label_tables,
    ranking,
    regression,
    scores,
    single_label,
)
from mlsql._postgres.forms import (
    PARAM_TYPES,
    add_row,
    create_aggregates,
    final_name,
    finals,
    forms,
    plpgsql,
    signature,
    step_function,
)
from mlsql._postgres.messages import number_check, param_message, raise_statement
from mlsql._postgres.ops import PgSql, RowOps, Slot, StateOps, fill, param, pg_lit
from mlsql._registry import Measure, measures
from mlsql._weights import WeightedOps

#: the label list types every function is created for
LIST_TYPES = ("text[]", "bigint[]")
#: list types that are both labels but of two kinds: each function has an overload for them
#: that fails with the shared message naming both types (DuckDB's guard), not PostgreSQL's
#: "function does not exist"
MISMATCHES = (("text[]", "bigint[]"), ("bigint[]", "text[]"))
#: the families and kinds this library holds so far (the binary family: :mod:`.binary`)
FAMILIES = (
    "multilabel",
    *binary.FAMILIES,
    single_label.SL.FAMILY,
    regression.RG.FAMILY,
    label_based.LB.FAMILY,
    "hivemall",
    ranking.FAMILY,
    scores.FAMILY,
    agreement.FAMILY,
)
KINDS = ("set", "row", "aggregate", "from_counts")
#: the label-set family's kinds here (its stored counts' functions are not)
LABEL_SET_KINDS = ("set", "row", "aggregate")

#: the set helpers: the labels of a set operation on A and P (NULL elements dropped first)
SET_QUERIES = {
    "set_intersection": "{a} INTERSECT {p}",
    "set_difference": "{a} EXCEPT {p}",
    "set_union": "{a} UNION {p}",
    "set_symmetric_difference": "({a} EXCEPT {p}) UNION ({p} EXCEPT {a})",
}


def included(m: Measure) -> bool:
    """Whether the library holds ``m``: a set helper, or a formula of its families and kinds."""
    if m.family in binary.FAMILIES:
        return binary.included(m)
    if m.family == single_label.SL.FAMILY:
        return single_label.included(m)
    if m.family == regression.RG.FAMILY:
        return regression.included(m)
    if m.family == label_based.LB.FAMILY:
        return label_based.included(m) or m.name in indicators.NAMES
    if m.family == "hivemall":
        return m.name == "fmeasure"
    if m.family == ranking.FAMILY:
        return ranking.included(m)
    if m.family == scores.FAMILY:
        return scores.included(m)
    if m.family == agreement.FAMILY:
        return agreement.included(m)
    if counts.included(m):
        return True
    if m.family not in FAMILIES or m.kind not in LABEL_SET_KINDS:
        return False
    return m.name in SET_QUERIES if m.kind == "set" else m.build is not None


#: the tables the library holds as set-returning functions (written apart from the loop over
#: the registry's measures: :mod:`.class_tables`, :mod:`.label_tables`, :mod:`.label_report`,
#: :mod:`.curves`)
TABLES = (
    *class_tables.COLUMNS,
    "label_metrics",
    "multilabel_report",
    *curves.ROW_TYPES,
    calibration.NAME,
)
#: why the library leaves out a family's measures (or a measure), where it does
GAPS = {
    "label_scores": "its scores are a map label -> score per row, which PostgreSQL has not "
    "(mlsql.evaluate over an ibis table of the database reads a jsonb object as one and runs "
    "it there)",
    "class_scores": "its scores are a map class -> probability per row, which PostgreSQL has "
    "not (mlsql.evaluate over an ibis table of the database reads a jsonb object as one and "
    "runs it there)",
    "label_thresholds": "its scores are a map label -> score per row, which PostgreSQL has not "
    "(mlsql.evaluate over an ibis table of the database reads a jsonb object as one)",
    "confusion_matrix_wide": "a PostgreSQL function's result columns are fixed: one column per "
    "class cannot be; crosstab the rows of confusion_matrix",
}


def offers(m: Measure) -> bool:
    """Whether the library holds ``m``, as a function or aggregate of its name (and its
    aliases), or as a table."""
    return included(m) or m.name in TABLES


def missing() -> dict[str, str]:
    """Each registry measure the library leaves out, and why.

    Examples
    --------
    >>> missing()["rae"].split(":")[0]
    'Σ|y - mean(y)| needs the mean before the sum'
    """
    reasons = {
        **single_label.LEFT_OUT,
        **regression.LEFT_OUT,
        **ranking.LEFT_OUT,
        **scores.LEFT_OUT,
    }
    out = {}
    for m in measures():
        if offers(m):
            continue
        why = reasons.get(m.name) or GAPS.get(m.name)
        out[m.name] = why or GAPS[m.family]
    return out


def set_function(m: Measure, types: tuple[str, str], create: str) -> str:
    """A set helper: the distinct labels, sorted (text by code point, as Python and DuckDB
    sort), no NULLs; NULL where a list is NULL."""
    head = f"{create} FUNCTION {m.name}(actual {types[0]}, predicted {types[1]}) RETURNS {types[0]}"
    if types[0] != types[1]:
        return (
            f"{head}\nLANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\n{_mismatch(m, types)}\n$f$;"
        )
    labels = "(SELECT x FROM unnest({}) x WHERE x IS NOT NULL)"
    query = SET_QUERIES[m.name].format(a=labels.format("actual"), p=labels.format("predicted"))
    order = ' COLLATE "C"' if types[0] == "text[]" else ""
    return (
        f"-- {m.name}: {m.summary}\n{head}\nLANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$\n"
        "  SELECT CASE WHEN actual IS NULL OR predicted IS NULL THEN NULL ELSE\n"
        f"    ARRAY(SELECT s.x FROM ({query}) s(x) ORDER BY s.x{order}) END\n$f$;"
    )


#: the parameters that are a number within bounds (:class:`mlsql._params.Number`), each
#: checked by ``_mlsql_check_<name>`` written from its constraint (:func:`_number_check`)
NUMBER_PARAMS = ("beta", "alpha", "correction", "cost_fn", "cost_fp", "p")


#: the row's statistics as the step and row functions name them
STATS = RowStats(PgSql("tp"), PgSql("n_actual"), PgSql("n_predicted"))


def helpers(create: str) -> list[str]:
    """The internal functions every measure shares: statistics, checks, errors."""
    fn = f"{create} FUNCTION"
    values = {"func": "func", "shown": "shown"}
    weight_got = dict(zip(("nan", "inf", "ninf", "neg"), P.SAMPLE_WEIGHT_GOT, strict=True))
    weight_msg = P.sample_weight_message("{func}", "{shown}")
    return [
        f"""-- _mlsql_raise(message, type): fails the query with message (in an expression).
{fn} _mlsql_raise(message text, type_of anyelement) RETURNS anyelement
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
BEGIN
  RAISE EXCEPTION USING MESSAGE = message;
END
$f$;""",
        f"""-- _mlsql_check_zero_division(x, func): zero_division coded as float8: 0, 1, NaN,
-- 2 ('diagnose'), 3 ('ignore'); any other value is an error. Numbers: 0, 1 or NaN.
{fn} _mlsql_check_zero_division(x float8, func text) RETURNS float8
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
DECLARE
  shown text := coalesce(x::text, 'None');
BEGIN
  IF x = 'NaN'::float8 OR x IN (0, 1) THEN
    RETURN x;
  END IF;
  {raise_statement(param_message(P.ZERO_DIVISION), values)}
END
$f$;""",
        f"""-- _mlsql_check_zero_division(x, func): the same for text: 'nan', 'diagnose', 'ignore'.
{fn} _mlsql_check_zero_division(x text, func text) RETURNS float8
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
DECLARE
  shown text := coalesce(chr(39) || x || chr(39), 'None');
BEGIN
  CASE lower(x)
    WHEN 'nan' THEN RETURN 'NaN'::float8;
    WHEN 'diagnose' THEN RETURN 2;
    WHEN 'ignore' THEN RETURN 3;
    ELSE {raise_statement(param_message(P.ZERO_DIVISION), values)}
  END CASE;
END
$f$;""",
        *(number_check(P.PARAMS[name], create) for name in NUMBER_PARAMS),
        f"""-- _mlsql_check_n_labels(x, func): n_labels, a whole number > 0.
{fn} _mlsql_check_n_labels(x bigint, func text) RETURNS float8
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
DECLARE
  shown text := coalesce(x::text, 'None');
BEGIN
  IF x >= 1 THEN
    RETURN x;
  END IF;
  {raise_statement(param_message(P.N_LABELS), values)}
END
$f$;""",
        f"""-- _mlsql_check_k(x, func): k, a whole number > 0, or NULL (all of the list).
{fn} _mlsql_check_k(x float8, func text) RETURNS float8
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
DECLARE
  shown text := CASE WHEN x = 'NaN'::float8 THEN 'nan' WHEN x = 'Infinity'::float8 THEN 'inf'
    WHEN x = '-Infinity'::float8 THEN '-inf' ELSE x::text END;
BEGIN
  IF x IS NULL OR (x >= 1 AND x < 'Infinity'::float8 AND x = floor(x)) THEN
    RETURN x;
  END IF;
  {raise_statement(param_message(P.K), values)}
END
$f$;""",
        f"""-- _mlsql_weight(w, func): a row's sample_weight (NULL stays NULL; NaN, infinite or
-- negative: an error).
{fn} _mlsql_weight(w float8, func text) RETURNS float8
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
DECLARE
  shown text;
BEGIN
  IF w IS NULL OR (w >= 0 AND w < 'Infinity'::float8) THEN
    RETURN w;
  END IF;
  shown := CASE WHEN w = 'NaN'::float8 THEN {pg_lit(weight_got["nan"])}
    WHEN w = 'Infinity'::float8 THEN {pg_lit(weight_got["inf"])}
    WHEN w = '-Infinity'::float8 THEN {pg_lit(weight_got["ninf"])}
    ELSE {pg_lit(weight_got["neg"])} END;
  {raise_statement(weight_msg, values)}
END
$f$;""",
    ]


#: plpgsql that sets tp = |A ∩ P|, n_actual = |A|, n_predicted = |P| (distinct, NULL
#: elements ignored: an element counts at its first position), all NULL where a list is NULL
ROW_STATS = """  IF actual IS NOT NULL AND predicted IS NOT NULL THEN
    tp := 0; n_actual := 0; n_predicted := 0;
    FOR i IN coalesce(array_lower(actual, 1), 1) .. coalesce(array_upper(actual, 1), 0) LOOP
      IF actual[i] IS NOT NULL AND array_position(actual, actual[i]) = i THEN
        n_actual := n_actual + 1;
        IF actual[i] = ANY(predicted) THEN
          tp := tp + 1;
        END IF;
      END IF;
    END LOOP;
    FOR i IN coalesce(array_lower(predicted, 1), 1) .. coalesce(array_upper(predicted, 1), 0) LOOP
      IF predicted[i] IS NOT NULL AND array_position(predicted, predicted[i]) = i THEN
        n_predicted := n_predicted + 1;
      END IF;
    END LOOP;
  END IF;"""


def _body(m: Measure, args: dict[str, str], weighted: bool, result: list[str]) -> str:
    """A plpgsql body: check the parameters (and weight), count the row, then ``result``
    (statements that end with a RETURN).

    ``args`` gives each parameter's SQL (an argument or a default). Where a list is NULL
    the statistics stay NULL, and the formula's row expressions with them (an aggregate
    skips the row, a per-row function returns NULL)."""
    declare = ["tp float8;", "n_actual float8;", "n_predicted float8;", "x float8;", "t float8;"]
    checks = []
    if weighted:
        declare.append("w float8;")
        checks.append(f"  w := _mlsql_weight(sample_weight, {pg_lit(m.name)});")
    for p in m.params:
        declare.append(f"v_{p.name} float8;")
        checks.append(f"  v_{p.name} := _mlsql_check_{p.name}({args[p.name]}, {pg_lit(m.name)});")
    return plpgsql(declare, [*checks, ROW_STATS, *result])


def _in_row(m: Measure) -> dict[str, str]:
    return {p.name: f"v_{p.name}" for p in m.params}


def _mismatch(m: Measure, types: tuple[str, str]) -> str:
    """The plpgsql body that fails with the message of two label types."""
    left, right = types
    text = MISMATCH_MESSAGE.format(
        func=m.name, left="actual", right="predicted", left_type=left, right_type=right
    )
    return f"BEGIN\n  RAISE EXCEPTION USING MESSAGE = {pg_lit(text)};\nEND"


def row_function(m: Measure, types: tuple[str, str], create: str) -> list[str]:
    """A per-row measure as SQL functions with named, defaulted parameters.

    zero_division has two overloads: a number (0, 1, NaN; default 0), and text ('nan',
    'diagnose', 'ignore'), which comes first and has no default, so no call matches both.
    ``types`` are the list types of actual and predicted (two kinds: the function fails).
    """
    assert m.build is not None
    expr = m.build(RowOps(), STATS, *(param(p.name) for p in m.params))
    counts = not m.params  # tp, fp, fn: whole numbers
    result = "bigint" if counts else "float8"
    value = fill(str(pg_lit(expr)), _in_row(m)) + ("::bigint" if counts else "")
    body = _body(m, {p.name: p.name for p in m.params}, False, [f"  RETURN {value};"])
    if types[0] != types[1]:
        body = _mismatch(m, types)
    overloads = [
        [f"{p.name} {PARAM_TYPES[p.name][-1]} DEFAULT {pg_lit(p.default)}" for p in m.params]
    ]
    if any(p.name == "zero_division" for p in m.params):
        rest = [p for p in m.params if p.name != "zero_division"]
        overloads.append(
            ["zero_division text"]
            + [f"{p.name} {PARAM_TYPES[p.name][-1]} DEFAULT {pg_lit(p.default)}" for p in rest]
        )
    return [
        f"-- {m.name}: {m.summary}\n"
        f"{create} FUNCTION {m.name}({', '.join([f'actual {types[0]}', f'predicted {types[1]}', *params])})"
        f" RETURNS {result}\n"
        f"LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\n{body}\n$f$;"
        for params in overloads
    ]


@dataclass(frozen=True)
class Lowered:
    """An aggregate formula as a state: its final expression and each slot's update."""

    final: str
    slots: list[Slot]
    size: int


def lower(m: Measure, weighted: bool) -> Lowered:
    """Run ``m``'s formula with :class:`StateOps` (weighted by the row's ``w`` if asked)."""
    assert m.build is not None
    ops = StateOps(offset=len(m.params))
    run_ops: Any = WeightedOps(ops, PgSql("w")) if weighted else ops
    expr = m.build(run_ops, STATS, *(param(p.name) for p in m.params))
    in_state = {p.name: f"st[{i + 1}]" for i, p in enumerate(m.params)}
    slots = [Slot(s.kind, fill(s.expr, _in_row(m)), s.index) for s in ops.slots]
    return Lowered(fill(str(pg_lit(expr)), in_state), slots, ops.size)


def aggregate(m: Measure, create: str) -> list[str]:
    """An aggregate measure: its final functions, and a step and aggregate per form."""
    lowered = {w: lower(m, w) for w in (False, True)}
    out = finals(m.name, {w: low.final for w, low in lowered.items()}, create)
    for list_type in LIST_TYPES:
        for form in forms(m):
            w, low = form.weighted, lowered[form.weighted]
            names = [n for n, _ in form.args]
            args = [f"actual {list_type}", f"predicted {list_type}"]
            args += [f"{n} {t}" for n, t in form.args]
            supplied = {p.name: p.name for p in m.params if p.name in names}
            supplied |= {p.name: str(pg_lit(p.default)) for p in m.params if p.name not in supplied}
            params = [f"v_{p.name}" for p in m.params]
            add = [f"  st[{i + 1}] := {v};" for i, v in enumerate(params)]
            add += [*add_row(low.slots), "  RETURN st;"]
            step = f"_mlsql_{m.name}_step"
            init = "{" + ",".join(["NULL"] * len(params) + ["0"] * (low.size - len(params))) + "}"
            comment = f"{m.name}({', '.join(['actual', 'predicted', *names])}): {m.summary}"
            out.append(step_function(create, step, args, _body(m, supplied, w, add), comment))
            final = final_name(m.name, w)
            out += create_aggregates(create, (m.name,), signature(args), step, init, final)
    return out


def mismatched_aggregate(m: Measure, create: str, steps: set[str]) -> list[str]:
    """The forms of an aggregate over lists of two kinds: the final function fails (also over
    no rows, as DuckDB's guard fails when the query binds); the step, shared by every
    aggregate of its signature, keeps the state."""
    out = []
    for i, types in enumerate(MISMATCHES):
        final = f"_mlsql_{m.name}_type_error_{i + 1}"
        out.append(
            f"{create} FUNCTION {final}(st float8[]) RETURNS float8\n"
            f"LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\n{_mismatch(m, types)}\n$f$;"
        )
        for form in forms(m):
            signature = ", ".join([*types, *(t for _, t in form.args)])
            if signature not in steps:
                steps.add(signature)
                out.append(
                    f"{create} FUNCTION _mlsql_type_error_step(st float8[], {signature})"
                    " RETURNS float8[]\nLANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$ SELECT st $f$;"
                )
            out += create_aggregates(
                create, (m.name,), signature, "_mlsql_type_error_step", "{}", final
            )
    return out


def library(*, replace: bool = False) -> str:
    """The whole PostgreSQL library as one script (one transaction: all or nothing)."""
    create = "CREATE OR REPLACE" if replace else "CREATE"
    parts = [
        "-- mlsql for PostgreSQL: the label-set measures (micro, samples, subset accuracy,",
        "-- Hamming loss) and their per-row functions; the binary measures (binary_*, their",
        "-- aliases and *_from_counts) and the rules' (rule_novelty, rule_satisfaction: nov, sat);",
        "-- the single-label aggregates (accuracy, f1_score, kappa, ..., majority_class) and tables",
        "-- (confusion_matrix, class_metrics, class_distribution); the regression aggregates (mse,",
        "-- mae, r2, ...); the averages over labels (macro_f1, weighted_recall, clp, ...) and",
        "-- label_metrics and multilabel_report; Hivemall's fmeasure; the stored counts",
        "-- (multilabel_counts, merge_counts, micro_f1_from_counts, ...); the ranked-list",
        "-- aggregates (precision_at, ndcg, map_score, bpref, graded_ndcg, ...); the bounded",
        "-- score aggregates (logloss, brier_score_loss, expected_calibration_error, binned_auc,",
        "-- binned_average_precision_score); Fleiss' kappa and Cochran's Q; the score curves",
        "-- (roc_curve, precision_recall_curve, det_curve, confusion_matrix_at_thresholds) and",
        "-- calibration_table; labels_from_indicators and indicators_from_labels.",
        "-- Load with:",
        "--   psql -v ON_ERROR_STOP=1 -d mydb -f mlsql.sql",
        "-- Aggregates take positional arguments only (PostgreSQL has no named arguments for",
        "-- aggregates): (actual, predicted[, required][, sample_weight[, parameters...]]);",
        "-- give sample_weight 1 for unweighted results with parameters. The ranking ones take",
        "-- Hivemall's order: (rank_items, correct_items[, k[, sample_weight]]).",
        "-- "
        + (
            "This variant replaces functions of the same names."
            if replace
            else "It never replaces a function that exists: loading fails and changes nothing."
        ),
        "-- Generated by `python -m mlsql._postgres.library`; do not edit by hand.",
        "",
        "BEGIN;",
        "",
    ]
    families = (
        counts,
        binary,
        single_label,
        class_tables,
        regression,
        label_based,
        label_tables,
        label_report,
        hivemall,
        ranking,
        scores,
        agreement,
        curves,
        calibration,
    )
    parts += [h + "\n" for h in helpers(create) + [x for f in families for x in f.helpers(create)]]
    parts += [
        t + "\n"
        for t in [
            *class_tables.tables(create),
            *label_tables.tables(create),
            *label_report.tables(create),
            *curves.tables(create),
            *calibration.tables(create),
            *indicators.functions(create),
        ]
    ]
    steps: set[str] = set()  # the signatures of the mismatch steps written so far
    ranking_steps: set[str] = set()  # the same of the ranking family's refusals
    for m in measures():
        if not included(m):
            continue
        if m.family in binary.FAMILIES:
            make = binary.from_counts if m.kind == "from_counts" else binary.aggregate
            parts += [a + "\n" for a in make(m, create)]
        elif m.family == regression.RG.FAMILY:
            parts += [a + "\n" for a in regression.aggregate(m, create)]
        elif m.kind == "counts":
            if m.name == "multilabel_counts":  # merge_counts beside it

                def body(weighted: bool, statements: list[str], m: Measure = m) -> str:
                    return _body(m, {}, weighted, statements)

                parts += [a + "\n" for a in counts.counts(create, body)]
        elif m.kind == "from_counts" and m.family == "multilabel":
            parts += [a + "\n" for a in counts.from_counts(m, create)]
        elif m.family == "hivemall":
            parts += [a + "\n" for a in hivemall.aggregates(create, ROW_STATS)]
        elif m.name in indicators.NAMES:
            continue  # written with the tables
        elif m.family == label_based.LB.FAMILY:
            parts += [a + "\n" for a in label_based.aggregate(m, create)]
        elif m.family == single_label.SL.FAMILY:
            parts += [a + "\n" for a in single_label.aggregate(m, create)]
            parts += [a + "\n" for a in single_label.mismatched(m, create)]
        elif m.family == agreement.FAMILY:
            parts += [a + "\n" for a in agreement.aggregate(m, create)]
        elif m.family == scores.FAMILY:
            parts += [a + "\n" for a in scores.aggregate(m, create)]
        elif m.family == ranking.FAMILY:
            parts += [a + "\n" for a in ranking.aggregate(m, create)]
            parts += [a + "\n" for a in ranking.refused(m, create, ranking_steps)]
        elif m.kind == "set":
            pairs = [(t, t) for t in LIST_TYPES] + list(MISMATCHES)
            parts += [set_function(m, t, create) + "\n" for t in pairs]
        elif m.kind == "row":
            pairs = [(t, t) for t in LIST_TYPES] + list(MISMATCHES)
            parts += [f + "\n" for t in pairs for f in row_function(m, t, create)]
        else:
            parts += [a + "\n" for a in aggregate(m, create)]
            parts += [a + "\n" for a in mismatched_aggregate(m, create, steps)]
    parts.append("COMMIT;")
    return "\n".join(parts) + "\n"


#: the library's files: the one that never replaces a function, and the one that does
FILES = {"mlsql.sql": False, "mlsql_replace.sql": True}


def generate(out: Path) -> None:
    """Write the library files into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for name, replace in FILES.items():
        (out / name).write_text(library(replace=replace))


def written(base: Path | None = None) -> Path:
    """The directory holding this version's library files, written there on first use.

    The files are not kept in git or in the wheel: the library is made from the registry in
    about a sixth of a second, and each version of it goes in a directory of its own under
    mlsql's cache (``$MLSQL_CACHE_DIR``, else ``$XDG_CACHE_HOME/mlsql`` or
    ``~/.cache/mlsql``), named by a hash of its text, so a file once written never changes.

    Examples
    --------
    >>> import tempfile
    >>> out = written(Path(tempfile.mkdtemp()))
    >>> sorted(p.name for p in out.iterdir())
    ['mlsql.sql', 'mlsql_replace.sql']
    >>> written(out.parents[1]) == out
    True
    """
    texts = {name: library(replace=replace) for name, replace in FILES.items()}
    digest = hashlib.sha256("\0".join(texts.values()).encode()).hexdigest()[:16]
    out = (base if base is not None else cache_dir()) / "postgres" / digest
    for name, text in texts.items():
        path = out / name
        if path.is_file():
            continue
        out.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=out, prefix=f".{name}.")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)  # whole or not at all, whoever writes it at the same time
    return out


if __name__ == "__main__":
    print(written())
