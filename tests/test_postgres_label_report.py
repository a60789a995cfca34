"""``multilabel_report`` of the PostgreSQL library on a live server, over a table and over a
group's ``label_counts``.

The conformance files' every report figure (Hivemall's blog tags, mldr's example, the R
walkthrough) under each zero_division they give, the random label-list tables against the
plain-Python report (tests/oracle_labels.py) with every zero_division, beta and a universe,
weights as repeated rows, groups, the errors and hostile names.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from tests import oracle_labels
from tests.references import close, rows_of, tables
from tests.test_label_conformance import FILES, cases
from tests.test_label_conformance import rows_of as conformance_rows
from tests.test_postgres_label_tables import ZERO_DIVISIONS, check_error, hostile_table
from tests.test_postgres_library import library_database, load

psycopg = pytest.importorskip("psycopg")


@pytest.fixture(scope="module")
def pg(pg_server: Any) -> Iterator[Any]:
    yield from library_database(pg_server, "mlsql_label_report")


def report(con: Any, params: dict[str, Any], weight: str | None = None) -> dict[str, Any]:
    """multilabel_report over t, its parameters by name; its one row as a dict."""
    args, values = ["'t'", "'actual'", "'predicted'"], []
    if weight:
        args.append(f"sample_weight => '{weight}'")
    for name, value in params.items():
        kind = ""
        if name == "labels":  # a list arrives untyped (psycopg leaves its type to the server)
            kind = "::bigint[]" if isinstance(value[0], int) else "::text[]"
        args.append(f"{name} => %s{kind}")
        values.append(value)
    cur = con.execute(f"SELECT * FROM multilabel_report({', '.join(args)})", values)
    rows = cur.fetchall()
    assert len(rows) == 1
    return dict(zip([d.name for d in cur.description], rows[0], strict=True))


def _wrong(got: dict[str, Any], want: dict[str, Any], beta: Any) -> list[str]:
    """The columns where the library's row differs from the oracle's (which has the F-beta
    columns in place of the F1 ones with beta; the library has both, F-beta NULL without)."""
    out = [f"{c}: {got[c]} != {w}" for c, w in want.items() if not close(got[c], w)]
    if beta is None:
        out += [f"{c} is {got[c]}" for c in got if "fbeta" in c and got[c] is not None]
    return out


@pytest.mark.parametrize("file", FILES)
def test_conformance_numbers(pg: Any, file: str) -> None:
    """Every figure of the file's report under each zero_division it gives."""
    rows = conformance_rows(file)
    load(pg, pa.table({"actual": [a for a, _ in rows], "predicted": [p for _, p in rows]}))
    found = [c for c in cases() if c[0] == file]
    assert len(found) > 10
    wrong = []
    for _, key, column, params, want in found:
        got = report(pg, params)
        if not close(got[column], want):
            wrong.append(f"{key}: {got[column]} != {want}")
    assert not wrong, wrong


def _params(table: pa.Table) -> list[dict[str, Any]]:
    integers = pa.types.is_integer(table.schema.field("actual").type.value_type)
    universe = [1, 2, 99] if integers else ["a", "b", "zz"]
    out: list[dict[str, Any]] = [{"zero_division": zd} for zd in ZERO_DIVISIONS]
    return [*out, {"beta": 2.0}, {"labels": universe, "beta": 0.5, "zero_division": "ignore"}]


def _expected(rows: list[Any], params: dict[str, Any]) -> dict[str, Any]:
    return oracle_labels.report(
        rows, params.get("labels"), params.get("beta"), params.get("zero_division", 0)
    )


def test_the_report_matches_the_oracle(pg: Any) -> None:
    """Every random table (NULL rows and elements, duplicates, empty lists, all unknown,
    none): every column."""
    for table in tables("label_lists", range(6), no_rows=True):
        load(pg, table)
        rows = rows_of(table, "actual", "predicted")
        for params in _params(table):
            wrong = _wrong(report(pg, params), _expected(rows, params), params.get("beta"))
            assert not wrong, f"{params} on {table.to_pylist()}: {wrong}"


def test_weights_count_as_repeated_rows(pg: Any) -> None:
    """Whole weights (0 and NULL among them: the row left out) give the oracle's report over
    the rows repeated."""
    for seed, table in enumerate(tables("label_lists", range(4))[:4]):
        rng = random.Random(f"pg-report-weights-{seed}")
        weights = [rng.choice([0, 1, 1, 2, 3, None]) for _ in range(table.num_rows)]
        load(pg, table, [None if w is None else float(w) for w in weights])
        rows = rows_of(table, "actual", "predicted")
        repeated = [r for r, w in zip(rows, weights, strict=True) for _ in range(w or 0)]
        for params in _params(table)[:2]:
            want = _expected(repeated, params)
            wrong = _wrong(report(pg, params, weight="w"), want, None)
            assert not wrong, f"{params} on {table.to_pylist()} weights {weights}: {wrong}"


def test_groups_through_label_counts(pg: Any) -> None:
    """One report per model from label_counts and LATERAL, with a universe given to the
    counts: m1 has labels 1 (tp) and 2 (fn), m2 label 3 outside the universe {1, 2}."""
    pg.execute("DROP TABLE IF EXISTS preds")
    pg.execute("CREATE TEMP TABLE preds (model text, actual int[], predicted int[])")
    pg.execute("INSERT INTO preds VALUES ('m1', '{1,2}', '{1}'), ('m2', '{3}', '{3,4}')")
    got = pg.execute(
        "SELECT s.model, r.n_rows, r.n_labels, r.micro_recall, r.subset_accuracy FROM"
        " (SELECT model, label_counts(actual, predicted, 1, ARRAY[1, 2]) AS counts FROM preds"
        " GROUP BY model) s, LATERAL multilabel_report(s.counts) r ORDER BY s.model"
    ).fetchall()
    # m2's row holds no label of the universe: both sets empty, an exact match, and its
    # micro recall 0 / 0 is zero_division's 0
    assert got == [("m1", 1.0, 2.0, 0.5, 0.0), ("m2", 1.0, 2.0, 0.0, 1.0)]


BAD_CALLS = [
    (
        "multilabel_report('t', 'actual', 'predicted', by => ARRAY['g'])",
        "takes no 'by' in PostgreSQL",
    ),
    (
        "multilabel_report('t', 'actual', 'predicted', labels => ARRAY[1, 2])",
        "The 'labels' parameter of label_counts must hold labels of the columns' type",
    ),
    ("multilabel_report('t', 'actual', 'predicted', beta => 0)", "The 'beta' parameter of"),
    (
        "multilabel_report('t', 'actual', 'predicted', zero_division => 2)",
        "The 'zero_division' parameter of multilabel_report must be",
    ),
]


@pytest.mark.parametrize(("call", "message"), BAD_CALLS)
def test_errors(pg: Any, call: str, message: str) -> None:
    check_error(pg, call, message)


def test_hostile_names_are_names(pg: Any) -> None:
    """A table and columns whose names hold quotes, a semicolon and SQL: read as names."""
    columns = [("a'); DROP TABLE t; --", "text[]"), ('p"x', "text[]"), ("w'", "float8")]
    table, names = hostile_table(pg, columns, "('{a,b}', '{a}', 2), ('{c}', '{c}', 1)")
    got = pg.execute(
        "SELECT n_rows, micro_recall FROM multilabel_report(%s, %s, %s, %s)", [table, *names]
    ).fetchone()
    assert got == (3.0, pytest.approx(3 / 5))  # tp 2 + 1, fn 2: recall 3/5
    assert pg.execute("SELECT count(*) FROM t").fetchone() == (0,)
