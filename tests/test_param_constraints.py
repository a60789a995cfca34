"""Every parameter's bad values, generated from its registry constraint, on every engine.

As scikit-learn's ``generate_invalid_param_val`` does, the invalid values come
from each parameter's declared constraint (``mlsql._params``): NULL/None where
the parameter has no meaning for it, the wrong type (a string of a valid
number, a boolean, an integral float for a whole number), values just outside
the interval, NaN and infinities where a finite number is due, and options
that differ from an allowed one by case-insensitive spelling only in spaces.
Each is run on DuckDB SQL, Polars, Spark (Python and, for the registered SQL
functions, Spark SQL) and on the CLI options, and every engine must raise the
same text: scikit-learn's shape, which this file writes out itself.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

import mlsql._params as P
from mlsql._errors import MlsqlError
from mlsql._registry import Measure, Param, measures

#: what each parameter must be, as the message says it (written here, not read from mlsql)
RULES = {
    "beta": "a finite number > 0",
    "alpha": "a finite number > 0",
    "cost_fn": "a finite number",
    "cost_fp": "a finite number",
    "correction": "a finite number >= 0",
    "zero_division": "one of 0, 1, nan, 'diagnose', 'ignore'",
    "n_labels": "a whole number > 0",
    "k": "a whole number > 0 (or NULL for all)",
    "top_k": "a whole number >= 0 (or NULL for all)",
    "threshold": "a number",
    "p": "a finite number > 0 and < 1",
    "average": "one of 'micro', 'macro', 'weighted'",
    "score_average": "one of 'micro', 'macro', 'weighted', 'samples'",
    "brier_average": "one of 'micro', 'macro', 'samples'",
    "kappa_weights": (
        "one of 'linear', 'quadratic', or a square matrix of finite numbers >= 0 with a row "
        "and a column per label of labels"
    ),
    "kappa_labels": (
        "a non-empty list of distinct labels of one kind (text, integers or booleans) "
        "(or NULL for the classes seen)"
    ),
    "class_labels": (
        "a non-empty list of distinct labels of one kind (text, integers or booleans) "
        "(or NULL for the classes seen)"
    ),
    "table_beta": "a finite number > 0",
    "n_bins": "a whole number from 1 to 100000",
    "strategy": "one of 'uniform', 'quantile'",
    "thresholds": "a whole number from 2 to 100000",
    "norm": "one of 'l1', 'l2', 'max'",
    "threshold_bins": "a whole number from 1 to 100000 (or NULL for exact thresholds)",
    "drop_intermediate": "a boolean (True or False)",
    "scale_by_half": "'auto' or a boolean (True or False)",
}


def show(value: Any) -> str:
    """How the message shows a value: strings quoted, None, True, numbers as Python writes them."""
    if value is None or isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return f"'{value}'"
    return repr(value)


def expected(p: Param, func: str, value: Any) -> str:
    return f"The '{p.name}' parameter of {func} must be {RULES[p.check_key]}. Got {show(value)} instead."


def invalid_values(p: Param) -> list[Any]:
    """Bad values of ``p``, generated from its constraint (scikit-learn's approach)."""
    c = p.constraint
    nullable = isinstance(c, P.Nullable)
    inner = c.inner if nullable else c
    out: list[Any] = [] if nullable else [None]
    if isinstance(inner, P.Boolean):  # 0 and 1, their texts and a float are no booleans
        return [*out, 0, 1, "true", "False", 1.0, math.nan]
    if isinstance(inner, P.WeightMatrix):  # not square, negative, not a matrix (numbers
        # as DuckDB and Python both print them)
        return [*out, True, 2.5, "bogus", " linear", [], [1, 2], [[0, 1]], [[0, 1], [1]],
                [[0, -1], [1, 0]]]  # fmt: skip
    if isinstance(inner, P.LabelList):  # empty, repeated, nested, not a list
        return [*out, True, 2.5, "a", [1, 1], [[1], [2]]]
    if isinstance(inner, P.AutoBoolean):  # nor are they 'auto' (no spaces stripped)
        return [*out, 0, 1, "true", "False", 1.0, math.nan, "bogus", " auto", "auto "]
    out.append(True)
    if isinstance(inner, P.Number):
        out.append("2")
        if inner.low is not None:
            out += [inner.low - 1, float(inner.low - 1)]
            if inner.strict:
                out += [int(inner.low), float(inner.low)]
        if inner.high is not None:
            out += [int(inner.high), float(inner.high), inner.high + 1]
        if inner.finite:
            out += [math.nan, math.inf, -math.inf]
    elif isinstance(inner, P.Integer):
        out += [str(inner.low + 1), inner.low - 1, float(inner.low + 1), inner.low + 0.5]
        if inner.high is not None:
            out.append(inner.high + 1)
    else:
        first = inner.strings[0]
        out += ["bogus", f" {first}", f"{first} ", 2.5]
        out += [str(n) for n in inner.numbers]
        if inner.numbers:
            out.append(max(inner.numbers) + 1)
        if inner.nan:
            out += [" nan", "nan "]
    return out


def constrained() -> list[tuple[Measure, Param]]:
    """Every (measure, parameter) whose parameter has a constraint, tables aside."""
    return [
        (m, p)
        for m in measures()
        if m.kind != "table"
        for p in m.params
        if p.constraint is not None
    ]


def test_every_declared_parameter_has_a_rule_here() -> None:
    keys = {p.check_key for m in measures() for p in m.params if p.constraint is not None}
    assert keys == set(RULES), "add the new parameter's rule to RULES"
    assert keys == set(P.PARAMS)


def test_generated_values_are_rejected_and_valid_ones_pass_in_python() -> None:
    """The generator itself: each value it makes is invalid, and a valid value passes."""
    valid = {"beta": 2, "alpha": 0.5, "cost_fn": -3, "cost_fp": 0, "correction": 0, "zero_division": "NaN",
             "n_labels": 3, "k": None, "top_k": 0, "threshold": -math.inf,
             "average": "Micro", "score_average": "Samples", "brier_average": "Micro",
             "table_beta": None, "kappa_weights": [[0, 1], [2.5, 0]],
             "kappa_labels": ["b", "a"], "class_labels": [2, 1],
             "n_bins": 1, "strategy": "Quantile", "thresholds": 2, "norm": "L2", "threshold_bins": None, "p": 0.5,
             "drop_intermediate": True, "scale_by_half": "Auto"}  # fmt: skip
    for key, p in P.PARAMS.items():
        P.check(p, valid[key], "f")
        for value in invalid_values(p):
            with pytest.raises(MlsqlError) as err:
                P.check(p, value, "f")
            assert str(err.value) == expected(p, "f", value)


# ---------------------------------------------------------------- DuckDB SQL
#: SQL literals for each input, by family and input name
DUCKDB_INPUTS = {
    "multilabel": {"actual": "['a']", "predicted": "['a', 'b']",
                   "counts": "(SELECT multilabel_counts(['a'], ['a', 'b']))"},
    "binary": {"actual": "true", "predicted": "false"},
    "rules": {"holds": "true", "fires": "true"},
    "regression": {"actual": "1.0", "predicted": "2.0"},
    "scores": {"actual": "true", "predicted": "0.5", "score": "0.5", "prob": "0.5", "label": "1"},
    "single_label": {"actual": "'a'", "predicted": "'b'"},
    "ranking": {"rank_items": "['a', 'b']", "correct_items": "['a']", "actual": "['a']",
                "scores": "MAP {'a': 0.5}", "ranked_relevance": "[1.0, 0.0]",
                "ideal_relevance": "[1.0]"},
    "label_scores": {"actual": "['a']", "scores": "MAP {'a': 0.5}"},
    "class_scores": {"actual": "'a'", "scores": "MAP {'a': 0.5}"},
}  # fmt: skip
COUNTS = {"tp": "1", "fp": "1", "fn": "1", "tn": "1"}
#: valid values of the parameters that have no default and no constraint
REQUIRED = {"label": "'a'", "positive": "'a'", "costs": "MAP {'a': MAP {'b': 2.0}}"}


def duckdb_literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, float):
        return f"'{value!r}'::DOUBLE"
    return str(value)


def duckdb_call(m: Measure, p: Param, value: Any) -> str:
    given = DUCKDB_INPUTS[m.family] | COUNTS
    args = [given[name] for name in m.inputs]
    for q in m.params:
        if q is p:
            arg = duckdb_literal(value)
        elif q.default is not None or q.name not in REQUIRED:
            continue
        else:  # a parameter without a default: a valid value
            arg = REQUIRED[q.name]
        # by name unless the macro has no default for it (a weighted overload makes a
        # positional parameter after the inputs ambiguous: it could be the weight)
        args.append(arg if q.default is None and q.name in REQUIRED else f"{q.name} := {arg}")
    return f"SELECT {m.name}({', '.join(args)})"


# ---------------------------------------------------------------- the engines
def _python_module(name: str) -> Any:
    import importlib

    return importlib.import_module({"polars": "mlsql.polars", "spark": "mlsql.spark"}[name])


def representatives(engine: str) -> list[tuple[Measure, Param]]:
    """One measure per parameter, family and kind (DuckDB binds each query in ~0.1 s)."""
    seen, out = set(), []
    for m, p in constrained():
        if m.available_in(engine) and (p.check_key, m.family, m.kind) not in seen:
            seen.add((p.check_key, m.family, m.kind))
            out.append((m, p))
    return out


def test_every_duckdb_macro_checks_its_constrained_parameters() -> None:
    """Every macro wraps each constrained parameter in the check generated from it."""
    from mlsql._duckdb.library import macros

    bodies: dict[str, str] = {}
    for macro in macros():
        # a body its overloads share is the macro's body too (library._shared_bodies)
        shared = re.fullmatch(r"_mlsql_(\w+?)_typed(?:_weighted)?(?:_\d+)?", macro.name)
        name = shared.group(1) if shared else macro.name
        bodies[name] = bodies.get(name, "") + macro.body
    missing = [
        f"{m.name}.{p.name}"
        for m, p in constrained()
        if m.available_in("duckdb") and f"_mlsql_check_{p.check_key}({p.name}" not in bodies[m.name]
    ]
    assert not missing


@pytest.mark.first(rank=7)
@pytest.mark.long_cases("duckdb", "spark")
def test_every_engine_rejects_each_bad_value_with_one_message(engine: Any) -> None:
    """Each constrained parameter, each generated bad value: the same text in every engine.

    Polars and Spark check every measure; DuckDB one measure per parameter,
    family and kind (the macros share one check each, tested just above).
    """
    pairs = representatives("duckdb") if engine.name == "duckdb" else [
        (m, p) for m, p in constrained() if m.available_in(engine.name)
    ]  # fmt: skip
    cases = [(m, p, v) for m, p in pairs for v in invalid_values(p)]
    assert len(cases) > 150
    if engine.name == "duckdb":
        import mlsql

        con = mlsql.connect()
        run = lambda m, p, v: con.sql(duckdb_call(m, p, v)).fetchall()  # noqa: E731
        error: Any = Exception  # DuckDB's InvalidInputException carries the message
    else:
        module = _python_module(engine.name)
        names = [f"x{i}" for i in range(4)]
        run = lambda m, p, v: getattr(module, m.name)(*names[: len(m.inputs)], **{p.name: v})  # noqa: E731
        error = MlsqlError
    wrong = []
    for m, p, value in cases:
        want = expected(p, m.name, value)
        try:
            run(m, p, value)
            wrong.append(f"{m.name}({p.name}={value!r}): no error")
        except error as exc:
            got = str(exc).removeprefix("Invalid Input Error: ")
            if got != want:
                wrong.append(f"{m.name}({p.name}={value!r}): {type(exc).__name__}: {got}")
    assert not wrong, f"{len(wrong)} of {len(cases)}:\n" + "\n".join(wrong[:20])


# ---------------------------------------------------------------- Spark SQL
def _spark_sql_values(p: Param) -> list[Any]:
    """The generated bad values a Spark SQL argument of the parameter's type can carry.

    SQL function parameters are typed: Spark casts an argument to DOUBLE or
    STRING at the call, so a string, a boolean or an integral float reaches
    the check as a number there, and a number given for zero_division as its
    text: '0' and '1' are valid there (see docs/guides/semantics.md).
    """
    c = p.constraint
    if c.spark_type == "STRING":  # '0' and '1' are how the numbers 0 and 1 arrive there
        numbers = {str(n) for n in getattr(c, "numbers", ())}
        if isinstance(c, P.AutoBoolean):  # a boolean arrives as its text: 'true', 'false'
            numbers |= {"true", "False"}
        return [
            v for v in invalid_values(p) if v is None or (isinstance(v, str) and v not in numbers)
        ]
    return [
        v for v in invalid_values(p)
        if v is None or (isinstance(v, float) and not (isinstance(c, P.Integer) and v.is_integer()))
    ]  # fmt: skip


@pytest.mark.first(rank=4)
@pytest.mark.long_cases("spark")
def test_spark_sql_functions_reject_bad_values_with_the_same_message(engine: Any) -> None:
    """One registered SQL function per parameter; each bad value is one query (errors stop it)."""
    if engine.name != "spark":
        pytest.skip("Spark SQL only")
    import mlsql.spark as ms
    from mlsql.spark import sql as S
    from tests.engines.spark_engine import session

    spark = session()
    names = ms.register(spark, prefix="pc_", replace=True)
    assert names
    counts = (
        "named_struct('n_rows', 2L, 'tp', 2L, 'fp', 1L, 'fn', 1L, 'n_actual', 3L, "
        "'n_predicted', 3L, 'n_exact', 0L)"
    )
    by_type = {"ARRAY<STRING>": ["array('a')", "array('a', 'b')"], "BIGINT": ["1L"] * 4}
    params = {p.name: p for _, p in constrained()}
    seen: set[str] = set()
    wrong, n = [], 0
    for fn in S.functions():
        inputs = [x for x in fn.params if x.split()[0] not in params]
        given = [x.split()[0] for x in fn.params if x.split()[0] in params]
        for name in given:
            if name in seen:
                continue
            seen.add(name)
            kinds = [x.split(" ", 1)[1] for x in inputs]
            args = (
                counts
                if kinds[0].startswith("STRUCT")
                else ", ".join(by_type[kinds[0]][: len(kinds)])
            )
            p = params[name]
            for value in _spark_sql_values(p):
                n += 1
                literal = (
                    "NULL"
                    if value is None
                    else (
                        "'" + value + "'"
                        if isinstance(value, str)
                        else f"CAST('{value!r}' AS DOUBLE)"
                    )
                )
                if p.constraint.spark_type == "STRING":
                    literal = "CAST(NULL AS STRING)" if value is None else literal
                query = f"SELECT pc_{fn.name}({args}, {name} => {literal})"
                try:
                    spark.sql(query).collect()
                    wrong.append(f"{query}: no error")
                except Exception as exc:  # Spark raises its own error class around the text
                    if expected(p, fn.name, value) not in str(exc):
                        wrong.append(f"{query}: {str(exc)[:300]}")
    assert seen == {
        "beta",
        "zero_division",
        "n_labels",
        "alpha",
        "cost_fn",
        "cost_fp",
        "correction",
    }
    assert not wrong, f"{len(wrong)} of {n}:\n" + "\n".join(wrong)


# ---------------------------------------------------------------- the CLI
@pytest.mark.parametrize("name", ["beta", "zero_division"])
def test_cli_options_reject_bad_values_with_the_same_words(name: str) -> None:
    """``mlsql eval --beta/--zero-division``: text that reads as a number is one; same verdict."""
    from typer.testing import CliRunner

    from mlsql.cli import app

    p = P.PARAMS[name]
    option = "--" + name.replace("_", "-")
    texts = [
        (v if isinstance(v, str) else repr(v), v)
        for v in invalid_values(p)
        if v is not None and not isinstance(v, bool)
        and not (isinstance(v, str) and v.strip().isdigit())
    ]  # fmt: skip
    assert len(texts) >= 5
    for text, value in texts:
        result = CliRunner().invoke(
            app, ["eval", "missing.parquet", "-a", "a", "-p", "p", option, text]
        )
        want = (
            f"The '{option}' option of mlsql eval must be {RULES[name]}. Got {show(value)} instead."
        )
        assert result.exit_code == 2, (text, result.output)
        assert want in result.stderr, (text, result.stderr)


# ---------------------------------------------------------------- table functions
def test_label_tables_reject_bad_values_alike(engine: Any) -> None:
    """``label_metrics``'s beta (None: no F-beta columns) and zero_division, on each engine.

    DuckDB gets the values as prepared parameters of the table macro, so their
    types are Python's (a string stays VARCHAR, True BOOLEAN).
    """
    import pyarrow as pa

    table = pa.table({"actual": [["a"]], "predicted": [["a", "b"]]})
    m = next(m for m in measures() if m.name == "label_metrics")
    wrong, n = [], 0
    for p in (q for q in m.params if q.constraint is not None):
        for value in invalid_values(p):
            n += 1
            try:
                engine.table_function("label_metrics", table, **{p.name: value})
                wrong.append(f"{p.name}={value!r}: no error")
            except Exception as exc:  # DuckDB's InvalidInputException carries the message
                got = str(exc).removeprefix("Invalid Input Error: ")
                if got != expected(p, m.name, value):
                    wrong.append(f"{p.name}={value!r}: {type(exc).__name__}: {got[:300]}")
    assert n > 15
    assert not wrong, "\n".join(wrong)


def test_calibration_strategy_rejects_bad_values_alike(engine: Any) -> None:
    """``calibration_table``'s strategy: each generated bad value, one message per engine."""
    import pyarrow as pa

    from tests.test_single_label_tables import run_table

    table = pa.table({"actual": [1, 0], "prob": [0.3, 0.9]})
    p = P.CALIBRATION_STRATEGY
    wrong, values = [], invalid_values(p)
    for value in values:
        try:
            run_table(engine, "calibration_table", table, "actual", "prob", strategy=value)
            wrong.append(f"{value!r}: no error")
        except Exception as exc:  # DuckDB's InvalidInputException carries the message
            got = str(exc).removeprefix("Invalid Input Error: ")
            if got != expected(p, "calibration_table", value):
                wrong.append(f"{value!r}: {type(exc).__name__}: {got[:300]}")
    assert len(values) >= 6
    assert not wrong, "\n".join(wrong)


def test_bins_are_bounded_in_every_engine(engine: Any) -> None:
    """n_bins grows memory and time (DuckDB tried 8 GB for a billion bins): 100000 at most."""
    import pyarrow as pa

    table = pa.table({"actual": [1, 0], "prob": [0.3, 0.9]})
    message = (
        "The 'n_bins' parameter of expected_calibration_error must be a whole number from 1 to "
        "100000. Got 100001 instead."
    )
    with pytest.raises(Exception, match=re.escape(message)):
        engine.aggregate(
            "expected_calibration_error", table, columns=("actual", "prob"), n_bins=100_001
        )


def test_duckdb_takes_the_most_bins() -> None:
    import mlsql

    con = mlsql.connect()
    sql = (
        "SELECT expected_calibration_error(a, p, n_bins := 100000) "
        "FROM (VALUES (1, 0.3), (0, 0.9)) v(a, p)"
    )
    # two rows in two bins: (|0.3 - 1| + |0.9 - 0|) / 2, whatever the number of bins
    assert con.sql(sql).fetchall()[0][0] == pytest.approx(0.8, rel=1e-12)
