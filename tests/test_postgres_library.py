"""The PostgreSQL library (``mlsql sql-path --dialect postgres``) on a live server.

One server per session (tests/conftest.py's ``pg_server``), the library loaded
once into its database: the conformance numbers, every label-set measure of the
registry against its reference (tests/references.py) on the random tables,
weights as repeated rows, the errors as DuckDB words them, and loading that
never replaces a user's function.
"""

from __future__ import annotations

import functools
import math
import random
import shutil
import subprocess
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
from typer.testing import CliRunner

import mlsql
from mlsql._postgres import binary
from mlsql._postgres.library import LABEL_SET_KINDS, included, library, missing, offers, written
from mlsql._registry import Measure, measures
from mlsql.cli import app
from tests.conftest import conformance
from tests.references import REFERENCES, close, tables
from tests.references import rows_of as columns_of
from tests.test_multilabel_conformance import FILES, cases, rows_of

psycopg = pytest.importorskip("psycopg")

LIBRARY = written() / "mlsql.sql"
REPLACE = written() / "mlsql_replace.sql"

#: the label-set measures the PostgreSQL library holds, by the registry
MEASURES = [m for m in measures() if included(m) and m.family == "multilabel"]
BY_NAME = {m.name: m for m in MEASURES}
#: its binary measures (aggregates over 0/1 columns, and their *_from_counts functions)
#: the 2x2 measures: the binary family's and the rules'
BINARY = [m for m in measures() if included(m) and m.family in binary.FAMILIES]


def library_database(pg_server: Any, name: str) -> Iterator[Any]:
    """A connection to a new database ``name`` holding the library, loaded from the
    generated file (each test module of the library has a database of its own)."""
    with psycopg.connect(pg_server.conninfo, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    conninfo = pg_server.conninfo.replace("dbname=postgres", f"dbname={name}")
    with psycopg.connect(conninfo, autocommit=True) as con:
        con.execute(LIBRARY.read_text())
        yield con


@pytest.fixture(scope="module")
def pg(pg_server: Any) -> Iterator[Any]:
    yield from library_database(pg_server, "mlsql_library")


# ---------------------------------------------------------------- calls as a user writes them
def _value(name: str, value: Any) -> tuple[str, Any]:
    """A placeholder typed as the library's overloads take the parameter, and its value."""
    if name == "zero_division":
        return ("%s::text" if isinstance(value, str) else "%s::float8"), value
    return ("%s::bigint" if name == "n_labels" else "%s::float8"), value


def aggregate_call(
    m: Measure, params: dict[str, Any], table: Any = None, weight: str | None = None
) -> tuple[str, list[Any]]:
    """``m`` called positionally, as PostgreSQL takes aggregate arguments: the required
    parameters, then sample_weight (1 where only parameters follow), then the optional ones.
    (A third argument, the table, is not read: every caller of the weights' check passes it.)"""
    args, values = ["actual", "predicted"], []
    for p in m.params:
        if p.default is None:
            text, v = _value(p.name, params[p.name])
            args.append(text)
            values.append(v)
    optional = [p for p in m.params if p.default is not None]
    last = max((i for i, p in enumerate(optional) if p.name in params), default=-1)
    if weight is not None or last >= 0:
        args.append(weight or "1")
    for p in optional[: last + 1]:
        text, v = _value(p.name, params.get(p.name, p.default))
        args.append(text)
        values.append(v)
    return f"{m.name}({', '.join(args)})", values


def row_call(m: Measure, params: dict[str, Any]) -> tuple[str, list[Any]]:
    """``m`` called with named parameters, as its per-row function takes them."""
    args, values = ["actual", "predicted"], []
    for name, value in params.items():
        text, v = _value(name, value)
        args.append(f"{name} => {text}")
        values.append(v)
    return f"{m.name}({', '.join(args)})", values


def load(con: Any, table: pa.Table, weights: list[Any] | None = None) -> None:
    """``table`` as the temporary table t (actual, predicted, w, i)."""
    kind = table.schema.field("actual").type.value_type
    element = "bigint" if pa.types.is_integer(kind) else "text"
    con.execute("DROP TABLE IF EXISTS t")
    con.execute(f"CREATE TEMP TABLE t (actual {element}[], predicted {element}[], w float8, i int)")
    weights = weights or [1.0] * table.num_rows
    rows = [
        (a, p, w, i)
        for i, (a, p, w) in enumerate(
            zip(table["actual"].to_pylist(), table["predicted"].to_pylist(), weights, strict=True)
        )
    ]
    with con.cursor() as cur:
        # an empty list or one of NULLs arrives as text[]: cast to the column's type
        cur.executemany(f"INSERT INTO t VALUES (%s::{element}[], %s::{element}[], %s, %s)", rows)


def select(con: Any, calls: list[tuple[str, list[Any]]], per_row: bool = False) -> list[Any]:
    """The calls in one query: each aggregate's value, or each per-row function's list."""
    text = ", ".join(c for c, _ in calls)
    values = [v for _, vs in calls for v in vs]
    if not per_row:
        return list(con.execute(f"SELECT {text} FROM t", values).fetchone())
    rows = con.execute(f"SELECT {text} FROM t ORDER BY i", values).fetchall()
    return [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in calls]


# ---------------------------------------------------------------- the conformance numbers
def test_conformance_numbers(pg: Any) -> None:
    """Hivemall's blog tags, mldr's example and the R walkthrough (gatto_51): every micro,
    samples and subset figure, under each zero_division the files give, and Hamming loss."""
    from tests.conftest import conformance

    wrong = []
    for file in FILES:
        found = [c for c in cases() if c[0] == file]
        load(
            pg,
            pa.table(
                {
                    "actual": pa.array([a for a, _ in rows_of(file)]),
                    "predicted": pa.array([p for _, p in rows_of(file)]),
                }
            ),
        )
        expected = conformance(file)["expected"]
        calls = [aggregate_call(BY_NAME[name], params) for _, _, name, params, _ in found]
        calls.append(aggregate_call(BY_NAME["hamming_loss"], {"n_labels": expected["n_labels"]}))
        wants = [want for *_, want in found] + [expected["hamming_loss"]]
        keys = [key for _, key, *_ in found] + ["hamming_loss"]
        got = select(pg, calls)
        wrong += [
            f"{file} {k}: {g} != {w}"
            for k, g, w in zip(keys, got, wants, strict=True)
            if not (g is not None and math.isclose(g, w, rel_tol=1e-12, abs_tol=1e-12))
        ]
    assert len(cases()) > 50
    assert not wrong, "\n".join(wrong)


# ---------------------------------------------------------------- the registry's measures
def test_every_registry_measure_is_here_or_says_why(pg: Any) -> None:
    """Driven by the registry: each measure the library offers is a function (or aggregate)
    of its name and its aliases' in the loaded database; each one it leaves out has its
    reason (:func:`mlsql._postgres.library.missing`)."""
    rows = pg.execute(
        "SELECT DISTINCT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
        " WHERE n.nspname = current_schema()"
    ).fetchall()
    functions = {name for (name,) in rows}
    gaps = missing()
    offered = [m for m in measures() if offers(m)]
    absent = [n for m in offered for n in (m.name, *m.aliases) if n not in functions]
    assert not absent, f"offered but not in the database: {absent}"
    assert {m.name for m in measures()} == {m.name for m in offered} | set(gaps)
    assert all(why.strip() for why in gaps.values())
    assert not set(gaps) & {m.name for m in offered}
    assert len(offered) > 120 and "rae" in gaps and "auc" in gaps


def test_the_library_holds_the_label_set_family() -> None:
    names = {m.name for m in MEASURES}
    assert {
        "micro_f1",
        "micro_fbeta",
        "samples_jaccard",
        "subset_accuracy",
        "hamming_loss",
        "row_precision",
        "set_symmetric_difference",
        "true_positives",
    } <= names
    assert all(m.name in REFERENCES for m in MEASURES)


@pytest.mark.parametrize("kind", LABEL_SET_KINDS)
def test_measures_match_their_reference(pg: Any, kind: str) -> None:
    """Every label-set measure of ``kind`` with every parameter set of its reference, on the
    random tables (NULL lists and elements, duplicates, empty lists, text and bigint labels,
    all rows unknown, no rows)."""
    for table in tables("label_lists", range(4), no_rows=True):
        load(pg, table)
        calls = [
            (m, p) for m in MEASURES if m.kind == kind for p in REFERENCES[m.name].params_for(table)
        ]
        make = aggregate_call if kind == "aggregate" else row_call
        got = select(pg, [make(m, p) for m, p in calls], per_row=kind != "aggregate")
        wrong = [
            f"{m.name}({p}): got {g!r}, expected {w!r}"
            for (m, p), g in zip(calls, got, strict=True)
            if not close(g, w := REFERENCES[m.name].expected(table, p))
        ]
        assert not wrong, "\n".join(wrong) + f"\non {table.to_pylist()}"


def check_references(
    pg: Any, family: list[Measure], kind: str, seeds: int, loader: Any, call: Any
) -> None:
    """Each aggregate of ``family`` with every parameter set of its reference over the random
    tables of ``kind`` (and the tables of unknown rows and of no rows), each loaded by
    ``loader`` and the aggregates called by ``call(m, params, table, None)``."""
    for table in tables(kind, range(seeds), no_rows=True):
        loader(pg, table)
        calls = [(m, p) for m in family for p in REFERENCES[m.name].params_for(table)]
        got = select(pg, [call(m, p, table, None) for m, p in calls])
        wrong = [
            f"{m.name}({p}): got {g!r}, expected {w!r}"
            for (m, p), g in zip(calls, got, strict=True)
            if not close(g, w := REFERENCES[m.name].expected(table, p))
        ]
        assert not wrong, "\n".join(wrong) + f"\non {table.to_pylist()}"


def check_weights_repeat_rows(
    pg: Any,
    family: Any,
    kind: str,
    loader: Any,
    stream: str,
    call: Any = aggregate_call,
    choices: tuple[Any, ...] = (0, 1, 1, 2, 3, None),
    seeds: int = 4,
) -> None:
    """Each aggregate of ``family`` weighted by random whole weights (``choices``: some 0 or
    NULL) over tables of ``kind`` (loaded by ``loader``, called by ``call(m, params, table,
    weight)``) equals the reference over the rows repeated."""
    aggregates = [m for m in family if m.kind == "aggregate"]
    for seed, table in enumerate(tables(kind, range(seeds))[:seeds]):
        rng = random.Random(f"{stream}-{seed}")
        weights = [rng.choice(choices) for _ in range(table.num_rows)]
        if not sum(w or 0 for w in weights):
            weights[0] = 2
        loader(pg, table, [None if w is None else float(w) for w in weights])
        keep = [i for i, w in enumerate(weights) for _ in range(w or 0)]
        repeated = table.take(pa.array(keep, pa.int64()))
        calls = [(m, p) for m in aggregates for p in REFERENCES[m.name].params_for(table)]
        got = select(pg, [call(m, p, table, "w") for m, p in calls])
        wrong = [
            f"{m.name}({p}): got {g!r}, expected {w!r}"
            for (m, p), g in zip(calls, got, strict=True)
            if not close(g, w := REFERENCES[m.name].expected(repeated, p))
        ]
        assert not wrong, "\n".join(wrong) + f"\non {table.to_pylist()} weights {weights}"


def test_weights_count_as_repeated_rows(pg: Any) -> None:
    """An integer sample_weight gives the reference's value over the rows repeated that many
    times (a NULL weight: the row is unknown, left out)."""
    check_weights_repeat_rows(pg, MEASURES, "label_lists", load, "pg-weights")


def test_group_by_model(pg: Any) -> None:
    """The issue's query: one value per model, from each model's rows."""
    pg.execute("DROP TABLE IF EXISTS preds")
    pg.execute("CREATE TEMP TABLE preds (model text, actual text[], predicted text[])")
    pg.execute(
        "INSERT INTO preds VALUES ('m1', '{a,b}', '{a}'), ('m1', '{c}', '{c,d}'), "
        "('m2', '{a}', '{b}'), ('m2', NULL, '{a}')"
    )
    got = pg.execute(
        "SELECT model, micro_f1(actual, predicted) FROM preds GROUP BY model ORDER BY model"
    ).fetchall()
    # m1: tp 2, fp 1, fn 1 -> 4/6; m2: tp 0, fp 1, fn 1 (the NULL row skipped) -> 0
    assert got == [("m1", pytest.approx(4 / 6, rel=1e-15)), ("m2", 0.0)]


# ---------------------------------------------------------------- the errors, as DuckDB's
def check_same_error(
    pg: Any, pg_sql: str, duck: Any, duck_sql: str, names: dict[str, str] | None = None
) -> None:
    """``pg_sql`` fails in PostgreSQL with the message ``duck_sql`` fails with in DuckDB
    (DuckDB's type names in it read as ``names`` gives PostgreSQL's)."""
    with pytest.raises(psycopg.Error) as raised:
        pg.execute(pg_sql).fetchall()
    with pytest.raises(duckdb.Error) as expected:
        duck.execute(duck_sql).fetchall()
    message, words = raised.value.diag.message_primary, str(expected.value)
    for duckdb_name, name in (names or {}).items():
        words = words.replace(f" {duckdb_name}", f" {name}")
    assert message and message in words, (message, words)


BAD_CALLS = [
    (
        "micro_f1(actual, predicted, 1, 'often')",
        "micro_f1(actual, predicted, zero_division := 'often')",
    ),
    ("samples_fbeta(actual, predicted, 1, -2)", "samples_fbeta(actual, predicted, beta := -2)"),
    ("micro_recall(actual, predicted, -1)", "micro_recall(actual, predicted, sample_weight := -1)"),
    ("hamming_loss(actual, predicted, 1)", "hamming_loss(actual, predicted, 1)"),
    ("hamming_loss(actual, predicted, 0)", "hamming_loss(actual, predicted, 0)"),
    (
        "row_precision(actual, predicted, zero_division => 'often')",
        "row_precision(actual, predicted, zero_division := 'often')",
    ),
]


@pytest.fixture(scope="module")
def duck(duck: Any) -> Any:
    """conftest's DuckDB with mlsql, holding the same table t."""
    duck.execute(
        "CREATE TABLE t AS SELECT * FROM (VALUES (['a', 'b'], ['a', 'c']), (['a'], []::VARCHAR[])) v(actual, predicted)"
    )
    return duck


@pytest.mark.parametrize(("pg_call", "duckdb_call"), BAD_CALLS)
def test_errors_say_what_duckdb_says(pg: Any, duck: Any, pg_call: str, duckdb_call: str) -> None:
    rows = [(["a", "b"], ["a", "c"]), (["a"], [])]
    load(pg, pa.table({"actual": [a for a, _ in rows], "predicted": [p for _, p in rows]}))
    check_same_error(pg, f"SELECT {pg_call} FROM t", duck, f"SELECT {duckdb_call} FROM t")


# ---------------------------------------------------------------- loading
def test_the_library_files_hold_what_the_code_writes() -> None:
    assert LIBRARY.read_text() == library()
    assert REPLACE.read_text() == library(replace=True)


def test_sql_path_names_the_postgres_library() -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["sql-path", "--dialect", "postgres", "--file"])
    assert result.exit_code == 0, result.output
    assert Path(result.stdout.strip()).read_text() == LIBRARY.read_text()
    bad = runner.invoke(app, ["sql-path", "--dialect", "oracle"])
    assert bad.exit_code != 0
    assert "duckdb, postgres" in bad.output + (bad.stderr or "")


def test_loading_never_replaces_a_user_function(pg_server: Any) -> None:
    """psql -f of mlsql.sql over a user's row_precision, or a user's
    binary_accuracy_from_counts, fails and changes nothing (one transaction);
    mlsql_replace.sql replaces it."""
    psql = shutil.which("psql") or str(pg_server.bin / "psql")
    if not Path(psql).exists():
        pytest.skip("no psql client")
    with psycopg.connect(pg_server.conninfo, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS mlsql_user")
        admin.execute("CREATE DATABASE mlsql_user")
    conninfo = pg_server.conninfo.replace("dbname=postgres", "dbname=mlsql_user")

    def run(path: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", conninfo, "-f", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )

    with psycopg.connect(conninfo, autocommit=True) as con:
        con.execute(
            "CREATE FUNCTION row_precision(actual text[], predicted text[], "
            "zero_division float8 DEFAULT 0) RETURNS float8 LANGUAGE sql AS 'SELECT 42.0::float8'"
        )
        done = run(LIBRARY)
        assert done.returncode != 0
        assert "already exists" in done.stderr
        mine = "SELECT row_precision(ARRAY['a'], ARRAY['a', 'b'])"
        assert con.execute(mine).fetchone() == (42.0,)
        assert con.execute("SELECT to_regproc('micro_f1') IS NULL").fetchone() == (True,)
        # a binary name too: the user's binary_accuracy_from_counts, then the user's alone
        con.execute("DROP FUNCTION row_precision(text[], text[], float8)")
        con.execute(
            "CREATE FUNCTION binary_accuracy_from_counts(tp float8, fp float8, fn float8, "
            "tn float8) RETURNS float8 LANGUAGE sql AS 'SELECT 42.0::float8'"
        )
        done = run(LIBRARY)
        assert done.returncode != 0
        assert "already exists" in done.stderr
        counts = "SELECT binary_accuracy_from_counts(1, 2, 3, 4)"
        assert con.execute(counts).fetchone() == (42.0,)
        assert con.execute("SELECT to_regproc('row_precision') IS NULL").fetchone() == (True,)
        done = run(REPLACE)
        assert done.returncode == 0, done.stderr
        assert con.execute(counts).fetchone() == (0.5,)  # (tp + tn) / n = 5 / 10
        assert con.execute(mine).fetchone() == (0.5,)
        assert run(REPLACE).returncode == 0  # over the whole library, aggregates included
        assert run(LIBRARY).returncode != 0  # which the plain file never replaces


def test_means_are_compensated_sums(pg: Any) -> None:
    """100,000 rows of precision 1/9: a plain float8 running sum drifts 2e-12 relative from
    1/9 (Python's own running sum shows it); the library's compensated sum stays within 1e-12,
    as DuckDB's favg does."""
    n, ninth = 100_000, Fraction(1, 9)
    plain = 0.0
    for _ in range(n):
        plain += 1 / 9
    assert abs(Fraction(plain / n) - ninth) / ninth > Fraction(1, 10**12)  # the drift is real
    pg.execute("DROP TABLE IF EXISTS t")
    pg.execute(
        "CREATE TEMP TABLE t AS SELECT ARRAY['a'] AS actual, "
        "ARRAY['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] AS predicted "
        f"FROM generate_series(1, {n})"
    )
    (got,) = pg.execute("SELECT samples_precision(actual, predicted) FROM t").fetchone()
    assert abs(Fraction(got) - ninth) / ninth <= Fraction(1, 10**12), got


@pytest.mark.parametrize(
    ("pg_call", "duckdb_call"),
    [
        ("micro_f1(actual, predicted)", "micro_f1(actual, predicted)"),
        ("samples_fbeta(actual, predicted, 1, 2)", "samples_fbeta(actual, predicted, beta := 2)"),
        ("row_precision(actual, predicted)", "row_precision(actual, predicted)"),
    ],
)
def test_two_kinds_of_labels_are_an_error_naming_both(
    pg: Any, duck: Any, pg_call: str, duckdb_call: str
) -> None:
    """text[] against bigint[]: DuckDB's message (its type names are PostgreSQL's here), never
    PostgreSQL's "function does not exist"; an aggregate fails over no rows too (a per-row
    function is never called there)."""
    for rows in (1, 0) if "row_" not in pg_call else (1,):
        pg.execute("DROP TABLE IF EXISTS t")
        pg.execute(
            "CREATE TEMP TABLE t AS SELECT ARRAY['a'] AS actual, ARRAY[1::bigint] AS predicted "
            f"FROM generate_series(1, {rows})"
        )
        with pytest.raises(psycopg.Error) as raised:
            pg.execute(f"SELECT {pg_call} FROM t").fetchall()
        with pytest.raises(duckdb.Error) as expected:
            duck.execute(
                f"SELECT {duckdb_call} FROM (SELECT ['a'] AS actual, [1::BIGINT] AS predicted)"
            ).fetchall()
        duckdb_text = (
            str(expected.value).replace("VARCHAR[]", "text[]").replace("BIGINT[]", "bigint[]")
        )
        message = raised.value.diag.message_primary
        assert message and message in duckdb_text, (message, duckdb_text)


# ---------------------------------------------------------------- the binary family
#: the columns of the random binary tables each 2x2 family reads (a rule's holds and fires)
SIDES = {"binary": ("actual", "predicted"), "rules": ("holds", "fires")}


def load_binary(
    con: Any,
    table: pa.Table,
    weights: list[Any] | None = None,
    columns: tuple[str, str] = SIDES["binary"],
) -> None:
    """A binary table's ``columns`` as the temporary table t (actual, predicted, w, i):
    boolean columns, or 0/1 ones as smallint (which the float8 overloads take by
    PostgreSQL's own cast)."""
    kind = "boolean" if pa.types.is_boolean(table.schema.field("actual").type) else "smallint"
    con.execute("DROP TABLE IF EXISTS t")
    con.execute(f"CREATE TEMP TABLE t (actual {kind}, predicted {kind}, w float8, i int)")
    weights = weights or [1.0] * table.num_rows
    rows = [
        (a, p, w, i)
        for i, ((a, p), w) in enumerate(zip(columns_of(table, *columns), weights, strict=True))
    ]
    with con.cursor() as cur:
        # typed: psycopg prepares a repeated statement with the parameter types it first saw
        cur.executemany(f"INSERT INTO t VALUES (%s::{kind}, %s::{kind}, %s, %s)", rows)


def counts_call(m: Measure, params: dict[str, Any]) -> tuple[str, list[Any]]:
    """``m`` (a ``*_from_counts`` function) over the columns tp, fp, fn, tn, parameters named."""
    args, values = list(binary.B.COUNT_INPUTS), []
    for name, value in params.items():
        text, v = _value(name, value)
        args.append(f"{name} => {text}")
        values.append(v)
    return f"{m.name}({', '.join(args)})", values


def test_the_library_holds_the_binary_family() -> None:
    """Every binary and rule 2x2 formula of the registry, as an aggregate and from counts,
    and binary_counts."""
    names = {m.name for m in BINARY}
    formulas = [m for f in ("binary", "rules") for m in measures(family=f) if m.build is not None]
    assert names == {m.name for m in formulas} | {"binary_counts"}
    assert {"binary_f1", "binary_kappa_p_value", "binary_mcnemar_statistic"} <= names
    assert {"binary_accuracy_from_counts", "rule_novelty", "rule_satisfaction_from_counts"} <= names
    assert all(m.name in REFERENCES for m in BINARY)


SLIDES = conformance("slides_single_label.json")
#: the lecture's names of the 2x2 tables and the rule example -> (function, parameters)
LECTURE = {
    "prel": ("prel", ""),
    "nrel": ("nrel", ""),
    "sup": ("sup", ""),
    "sens": ("sens", ""),
    "spec": ("spec", ""),
    "tacc": ("tacc", ""),
    "cov": ("cov", ""),
    "f1": ("binary_f1", ""),
    "f_alpha(alpha=2)": ("binary_f_alpha", ", 1, 2"),
    "kappa": ("binary_kappa", ""),
    "error_rate": ("binary_error_rate", ""),
    "err_cost(cost_fn=5, cost_fp=1)": ("binary_cost_error", ", 1, 5, 1"),
    "class_error_rate(+)": ("binary_false_negative_rate", ""),
    "class_error_rate(-)": ("binary_false_positive_rate", ""),
    "nov": ("nov", ""),
    "sat": ("sat", ""),
}


def test_the_lecture_s_tables_and_rule(pg: Any) -> None:
    """The slides' 2x2 tables (rows with their cells) and the rule example (holds: the class
    is +, fires: the rule fires): every number of the conformance data."""
    cases = [
        ([(1, 1)] * t["tp"] + [(0, 1)] * t["fp"] + [(1, 0)] * t["fn"] + [(0, 0)] * t["tn"], t)
        for t in SLIDES["two_by_two"]
    ]
    rule = SLIDES["rule_contingency"]
    cases.append((list(zip(rule["positive"], rule["fires"], strict=True)), rule))
    for rows, t in cases:
        values = ", ".join(f"({int(a)}, {int(p)})" for a, p in rows)
        keys = list(t["expected"])
        calls = ", ".join(f"{LECTURE[k][0]}(holds, fires{LECTURE[k][1]})" for k in keys)
        got = pg.execute(f"SELECT {calls} FROM (VALUES {values}) v(holds, fires)").fetchone()
        wrong = [(k, g, t["expected"][k]) for k, g in zip(keys, got, strict=True)]
        assert not [w for w in wrong if not close(w[1], w[2])], wrong


@pytest.mark.parametrize("kind", binary.KINDS)
def test_binary_measures_match_their_reference(pg: Any, kind: str) -> None:
    """Every binary measure of ``kind`` with every parameter set of its reference (the 2x2
    oracle, statsmodels for the agreement tests) on the random tables: boolean and 0/1
    columns with NULL rows, all rows unknown, no rows; stored counts with zeros."""
    for family, sides in SIDES.items():
        chosen = [m for m in BINARY if m.kind == kind and m.family == family]
        for table in tables(REFERENCES[chosen[0].name].data, range(4), no_rows=True):
            calls = [(m, p) for m in chosen for p in REFERENCES[m.name].params_for(table)]
            if kind == "aggregate":
                load_binary(pg, table, columns=sides)
                got = select(pg, [aggregate_call(m, p) for m, p in calls])
            else:
                pg.execute("DROP TABLE IF EXISTS t")
                pg.execute(
                    "CREATE TEMP TABLE t (tp bigint, fp bigint, fn bigint, tn bigint, i int)"
                )
                with pg.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO t VALUES (%s, %s, %s, %s, %s)",
                        [(*r, i) for i, r in enumerate(columns_of(table, *binary.B.COUNT_INPUTS))],
                    )
                got = select(pg, [counts_call(m, p) for m, p in calls], per_row=True)
            wrong = [
                f"{m.name}({p}): got {g!r}, expected {w!r}"
                for (m, p), g in zip(calls, got, strict=True)
                if not close(g, w := REFERENCES[m.name].expected(table, p))
            ]
            assert not wrong, "\n".join(wrong) + f"\non {table.to_pylist()}"


def test_binary_aliases_are_their_measures(pg: Any) -> None:
    """The lecture's names (prel, sens, spec, nrel, sup, tacc, cov; nov and sat of the rules)
    give their measure's value."""
    (table,) = tables("binary", range(1))[:1]
    load_binary(pg, table)
    pairs = [(alias, m.name) for m in BINARY for alias in m.aliases]
    assert len(pairs) == 9
    got = select(pg, [(f"{n}(actual, predicted)", []) for pair in pairs for n in pair])
    assert got[0::2] == got[1::2]
    code = {"prel": "prel", "sens": "sens", "spec": "spec", "nrel": "nrel", "sup": "sup"}
    for (alias, _), value in zip(pairs, got[0::2], strict=True):
        if alias in code:  # the reference by the alias's own name in the 2x2 oracle
            want = REFERENCES[dict((a, n) for a, n in pairs)[alias]].expected(table, {})
            assert close(value, want), (alias, value, want)


def test_binary_weights_count_as_repeated_rows(pg: Any) -> None:
    """An integer sample_weight gives the reference's value over the rows repeated that many
    times; a NULL weight leaves the row out, as DuckDB's sum of cell * weight does."""
    for family, sides in SIDES.items():
        chosen = [m for m in BINARY if m.family == family]
        load = functools.partial(load_binary, columns=sides)
        check_weights_repeat_rows(pg, chosen, "binary", load, f"pg-{family}-weights")


def test_binary_weights_of_total_zero(pg: Any) -> None:
    """Known rows whose weights add up to 0: the shares are NULL (n = 0), as in DuckDB; no
    known weight at all: NULL."""
    for weights, want in (([0.0, 0.0], None), ([None, None], None)):
        load_binary(pg, pa.table({"actual": [True, False], "predicted": [True, True]}), weights)
        assert select(pg, [("binary_accuracy(actual, predicted, w)", [])]) == [want]


#: (PostgreSQL's call, DuckDB's call, the rows): a 2 among 0/1 values, bad parameters, a
#: negative weight
BINARY_BAD_CALLS = [
    ("binary_f1(actual, predicted)", "binary_f1(actual, predicted)", "(1, 1), (2, 0)"),
    ("prel(actual, predicted)", "prel(actual, predicted)", "(1, 1), (0, 0.5)"),
    ("rule_novelty(actual, predicted)", "rule_novelty(actual, predicted)", "(1, 1), (2, 0)"),
    (
        "rule_satisfaction(actual, predicted, 1, 'often')",
        "rule_satisfaction(actual, predicted, zero_division := 'often')",
        "(1, 1)",
    ),
    (
        "binary_f_alpha(actual, predicted, 1, -1)",
        "binary_f_alpha(actual, predicted, alpha := -1)",
        "(1, 1), (0, 0)",
    ),
    (
        "binary_mcnemar_p_value(actual, predicted, 1, -0.5)",
        "binary_mcnemar_p_value(actual, predicted, correction := -0.5)",
        "(1, 0), (0, 0)",  # a discordant row: DuckDB reads correction only where one exists
    ),
    (
        "binary_recall(actual, predicted, -2)",
        "binary_recall(actual, predicted, sample_weight := -2)",
        "(1, 1), (0, 0)",
    ),
    (
        "binary_cost_error_from_counts(1, 2, 3, 4, cost_fp => 'NaN'::float8)",
        "binary_cost_error_from_counts(1, 2, 3, 4, cost_fp := 'nan'::DOUBLE)",
        "(1, 1)",
    ),
]


@pytest.mark.parametrize(("pg_call", "duckdb_call", "rows"), BINARY_BAD_CALLS)
def test_binary_errors_say_what_duckdb_says(
    pg: Any, duck: Any, pg_call: str, duckdb_call: str, rows: str
) -> None:
    """Each bad input fails with DuckDB's message (the row's value or the parameter named)."""
    table = f"(VALUES {rows}) v(actual, predicted)"
    check_same_error(
        pg, f"SELECT {pg_call} FROM {table}", duck, f"SELECT {duckdb_call} FROM {table}"
    )


def test_binary_sides_of_two_kinds(pg: Any) -> None:
    """A boolean side beside an integer or numeric one (as DuckDB takes them): the same
    cells. tp = 1, fp = 1, fn = 1, tn = 1, one NULL row skipped: accuracy 1/2, F1 1/2."""
    rows = "(true, 1), (true, 0), (false, 1), (false, 0), (NULL, 1)"
    for cast in ("::int", "::numeric", "::float8"):
        pg.execute("DROP TABLE IF EXISTS t")
        pg.execute(
            f"CREATE TEMP TABLE t AS SELECT a AS actual, p{cast} AS predicted "
            f"FROM (VALUES {rows}) v(a, p)"
        )
        got = pg.execute(
            "SELECT binary_accuracy(actual, predicted), binary_f1(predicted, actual), "
            "binary_accuracy(actual::int, predicted) FROM t"
        ).fetchone()
        assert got == (0.5, 0.5, 0.5), cast


def test_bound_values_stay_bound_in_the_plan(pg: Any) -> None:
    """Each binary final expression plans at about its own size: the planner keeps a value
    the formula binds once (a fenced subquery) instead of writing its text back at every
    mention (binary_kappa_p_value's plan was 4.4 MB of text, from 12 kB of SQL)."""
    pg.execute("DROP TABLE IF EXISTS s")
    pg.execute("CREATE TEMP TABLE s AS SELECT array_fill(1::float8, ARRAY[16]) AS st")
    for m in (m for m in BINARY if m.kind == "aggregate"):
        for weighted in (False, True):
            final, _, _ = binary.lower(m, weighted)
            rows = pg.execute(f"EXPLAIN (VERBOSE) SELECT {final} FROM s").fetchall()
            plan = "\n".join(r[0] for r in rows)
            assert len(plan) < 4 * len(final) + 2000, (m.name, weighted, len(plan), len(final))


def test_binary_counts_are_the_cells(pg: Any) -> None:
    """binary_counts is the record (tp, fp, fn, tn) of its reference (NULL fields over no
    known rows); weighted, DuckDB's sums of the weights on the same rows (NULL weights
    skipped; 0 where the known rows weigh 0); a measure of the stored counts is the measure
    of the rows."""
    m = next(m for m in BINARY if m.name == "binary_counts")
    duck = duckdb.connect()
    mlsql.register(duck)
    fields = ("tp", "fp", "fn", "tn")
    for seed, table in enumerate(tables("binary", range(4), no_rows=True)):
        rng = random.Random(f"pg-binary-counts-{seed}")
        weights = [rng.choice([0.0, 1.0, 2.5, None]) for _ in range(table.num_rows)]
        load_binary(pg, table, weights)
        got = pg.execute(
            "SELECT (c).tp, (c).fp, (c).fn, (c).tn, (cw).tp, (cw).fp, (cw).fn, (cw).tn, "
            "binary_f1_from_counts((c).tp, (c).fp, (c).fn, (c).tn), f1 FROM ("
            "SELECT binary_counts(actual, predicted) AS c, binary_counts(actual, predicted, w) "
            "AS cw, binary_f1(actual, predicted) AS f1 FROM t) s"
        ).fetchone()
        want = REFERENCES[m.name].expected(table, {})
        assert close(dict(zip(fields, got[:4], strict=True)), want), (got, want)
        duck.register(
            "weighted",
            table.select(["actual", "predicted"]).append_column(
                "w", pa.array(weights, pa.float64())
            ),
        )
        ((duck_counts,),) = duck.execute(
            "SELECT binary_counts(actual, predicted, sample_weight := w) FROM weighted"
        ).fetchall()
        assert close(dict(zip(fields, got[4:8], strict=True)), duck_counts), (got, duck_counts)
        assert close(got[8], got[9])


#: (the rows, the side DuckDB names, PostgreSQL's name of its type, DuckDB's)
BINARY_BAD_TYPES = [
    ("('1', '0'), ('0', '1')", "actual", "text", "VARCHAR"),
    ("(1, '0'::text)", "predicted", "text", "VARCHAR"),
    ("(true, DATE '2026-01-01')", "predicted", "date", "DATE"),
    ("(ARRAY[1], 1)", "actual", "integer[]", "INTEGER[]"),
    ("(1, 'x'::text)", "fires", "text", "VARCHAR"),  # a rule's sides are holds and fires
]


@pytest.mark.parametrize(("rows", "side", "pg_type", "duckdb_type"), BINARY_BAD_TYPES)
def test_binary_sides_of_another_type_say_what_duckdb_says(
    pg: Any, duck: Any, rows: str, side: str, pg_type: str, duckdb_type: str
) -> None:
    """A side that is neither boolean nor a number fails with DuckDB's message, naming the
    side and its type (PostgreSQL's name of it), not with PostgreSQL's "function does not
    exist"; an integer side beside it is not the one named."""
    table = f"(VALUES {rows}) v(actual, predicted)"
    func = "rule_novelty" if side == "fires" else "binary_f1"
    head = f"{func} takes boolean or 0/1 values for {side}. Got {side} "
    with pytest.raises(psycopg.Error) as raised:
        pg.execute(f"SELECT {func}(actual, predicted) FROM {table}").fetchall()
    with pytest.raises(duckdb.Error) as expected:
        duck.execute(f"SELECT {func}(actual, predicted) FROM {table}").fetchall()
    assert head + duckdb_type + "." in str(expected.value)
    assert raised.value.diag.message_primary == head + pg_type + "."
