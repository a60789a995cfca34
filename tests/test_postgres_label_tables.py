"""``label_metrics`` of the PostgreSQL library on a live server, over a table and over a
group's ``label_counts``.

The random label-list tables against the plain-Python per-label table
(tests/oracle_labels.py) with every zero_division, beta and a universe of labels, weights as
repeated rows, the conformance files' per-label counts, groups, the errors, and a table and
columns named with quotes and SQL.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from tests import oracle_labels
from tests.conftest import conformance
from tests.references import close, rows_of, tables
from tests.test_label_conformance import FILES
from tests.test_label_conformance import rows_of as conformance_rows
from tests.test_postgres_library import library_database, load

psycopg = pytest.importorskip("psycopg")

ZERO_DIVISIONS = (0, 1, float("nan"), "diagnose", "ignore")
COLUMNS = ("tp", "fp", "fn", "tn", "support", "precision", "recall", "f1", "fbeta", "jaccard")


@pytest.fixture(scope="module")
def pg(pg_server: Any) -> Iterator[Any]:
    yield from library_database(pg_server, "mlsql_label_tables")


def run(con: Any, params: dict[str, Any], weight: str | None = None) -> list[dict[str, Any]]:
    """label_metrics over t, its parameters by name; the rows as dicts."""
    args, values = ["'t'", "'actual'", "'predicted'"], []
    if weight:
        args.append(f"sample_weight => '{weight}'")
    for name, value in params.items():
        # a list arrives untyped (psycopg leaves text or varchar to the server): typed here
        kind = (
            ("::bigint[]" if isinstance(value[0], int) else "::text[]") if name == "labels" else ""
        )
        args.append(f"{name} => %s{kind}")
        values.append(value)
    cur = con.execute(f"SELECT * FROM label_metrics({', '.join(args)})", values)
    names = [d.name for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _same(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> list[str]:
    """What differs between the library's rows and the oracle's (labels as text)."""
    if [r["label"] for r in got] != [str(r["label"]) for r in want]:
        return [f"labels {[r['label'] for r in got]} != {[r['label'] for r in want]}"]
    return [
        f"{w['label']} {c}: {g[c]} != {w.get(c)}"
        for g, w in zip(got, want, strict=True)
        for c in (*COLUMNS, "accuracy")
        if not close(g[c], w.get(c))
    ]


def _cases(table: pa.Table) -> list[dict[str, Any]]:
    integers = pa.types.is_integer(table.schema.field("actual").type.value_type)
    universe = [1, 2, 99] if integers else ["a", "b", "zz"]
    out: list[dict[str, Any]] = [{"zero_division": zd} for zd in ZERO_DIVISIONS]
    return [*out, {"beta": 2.0}, {"labels": universe, "beta": 0.5, "zero_division": "ignore"}]


def test_label_metrics_match_the_oracle(pg: Any) -> None:
    """Every random table (NULL rows and elements, duplicates, empty lists, all unknown,
    none): every label's counts and values, in the label order every engine gives."""
    for table in tables("label_lists", range(6), no_rows=True):
        load(pg, table)
        rows = rows_of(table, "actual", "predicted")
        for params in _cases(table):
            want = oracle_labels.label_metrics(
                rows, params.get("labels"), params.get("beta"), params.get("zero_division", 0)
            )
            wrong = _same(run(pg, params), want)
            assert not wrong, f"{params} on {table.to_pylist()}: {wrong}"


def test_weights_count_as_repeated_rows(pg: Any) -> None:
    """Whole weights (0 and NULL among them: the row left out) give the oracle's table over
    the rows repeated."""
    for seed, table in enumerate(tables("label_lists", range(4))[:4]):
        rng = random.Random(f"pg-label-metrics-weights-{seed}")
        weights = [rng.choice([0, 1, 1, 2, 3, None]) for _ in range(table.num_rows)]
        load(pg, table, [None if w is None else float(w) for w in weights])
        rows = rows_of(table, "actual", "predicted")
        repeated = [r for r, w in zip(rows, weights, strict=True) for _ in range(w or 0)]
        for params in _cases(table)[:2]:
            want = oracle_labels.label_metrics(repeated, None, None, params["zero_division"])
            wrong = _same(run(pg, params, weight="w"), want)
            assert not wrong, f"{params} on {table.to_pylist()} weights {weights}: {wrong}"


@pytest.mark.parametrize("file", FILES)
def test_the_conformance_files_per_label_counts(pg: Any, file: str) -> None:
    """Each file's per-label tp, fp, fn, tn and support."""
    rows = conformance_rows(file)
    load(pg, pa.table({"actual": [a for a, _ in rows], "predicted": [p for _, p in rows]}))
    got = {r["label"]: r for r in run(pg, {})}
    want = conformance(file)["expected"]["per_label"]
    assert set(got) == {str(k) for k in want}
    for label, counts in want.items():
        row = got[str(label)]
        assert {k: row[k] for k in counts} == {k: float(v) for k, v in counts.items()}, label


def test_groups_through_label_counts(pg: Any) -> None:
    """One table per model from label_counts and LATERAL, each the model's own; integer
    labels in numeric order (9 before 10)."""
    pg.execute("DROP TABLE IF EXISTS preds")
    pg.execute("CREATE TEMP TABLE preds (model text, actual int[], predicted int[])")
    pg.execute("INSERT INTO preds VALUES ('m1', '{10,9}', '{10}'), ('m2', '{3}', '{3,4}')")
    got = pg.execute(
        "SELECT s.model, m.label, m.tp, m.fp, m.fn FROM (SELECT model,"
        " label_counts(actual, predicted) AS counts FROM preds GROUP BY model) s,"
        " LATERAL label_metrics(s.counts) m ORDER BY s.model"
    ).fetchall()
    assert got == [
        ("m1", "9", 0.0, 0.0, 1.0),
        ("m1", "10", 1.0, 0.0, 0.0),
        ("m2", "3", 1.0, 0.0, 0.0),
        ("m2", "4", 0.0, 1.0, 0.0),
    ]


BAD_CALLS = [
    ("label_metrics('t', 'actual', 'predicted', by => ARRAY['g'])", "takes no 'by' in PostgreSQL"),
    (
        "label_metrics('t', 'actual', 'predicted', labels => ARRAY[1, 2])",
        "The 'labels' parameter of label_metrics must hold labels of the columns' type",
    ),
    (
        "label_metrics('t', 'actual', 'predicted', labels => ARRAY[NULL]::text[])",
        "The 'labels' parameter of label_metrics must hold at least one label.",
    ),
    (
        "label_metrics('t', 'actual', 'predicted', beta => -1)",
        "The 'beta' parameter of label_metrics must be",
    ),
    (
        "label_metrics('t', 'actual', 'predicted', zero_division => 'often')",
        "The 'zero_division' parameter of label_metrics must be",
    ),
]


def check_error(pg: Any, call: str, message: str) -> None:
    """``call`` over a one-row table t fails with ``message`` in its text."""
    load(pg, pa.table({"actual": [["a"]], "predicted": [["b"]]}))
    with pytest.raises(psycopg.Error) as raised:
        pg.execute(f"SELECT * FROM {call}").fetchall()
    assert message in (raised.value.diag.message_primary or "")


@pytest.mark.parametrize(("call", "message"), BAD_CALLS)
def test_errors(pg: Any, call: str, message: str) -> None:
    check_error(pg, call, message)


def hostile_table(pg: Any, columns: list[tuple[str, str]], rows: str) -> tuple[str, list[str]]:
    """A table whose name and ``columns`` (name, type) hold quotes, a semicolon and SQL,
    holding ``rows``, beside a table t that SQL read as code would drop: the table's quoted
    name and the columns' names as they are."""
    pg.execute("DROP TABLE IF EXISTS t")
    pg.execute("CREATE TEMP TABLE t (x int)")
    table = '"q""; DROP TABLE t; --"'
    names = [n for n, _ in columns]
    listed = ", ".join(f'"{n.replace(chr(34), chr(34) * 2)}" {kind}' for n, kind in columns)
    pg.execute(f"CREATE TEMP TABLE {table} ({listed})")
    pg.execute(f"INSERT INTO {table} VALUES {rows}")
    return table, names


def test_hostile_names_are_names(pg: Any) -> None:
    """A table and columns whose names hold quotes, a semicolon and SQL: read as names."""
    columns = [("a'); DROP TABLE t; --", "text[]"), ('p"x', "text[]")]
    table, names = hostile_table(pg, columns, "('{a,b}', '{a}')")
    got = pg.execute(
        "SELECT label, tp, fn FROM label_metrics(%s, %s, %s)", [table, *names]
    ).fetchall()
    assert got == [("a", 1.0, 0.0), ("b", 0.0, 1.0)]
    assert pg.execute("SELECT count(*) FROM t").fetchone() == (0,)  # t is still there
