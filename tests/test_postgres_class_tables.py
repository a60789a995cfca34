"""The single-label tables of the PostgreSQL library on a live server: ``confusion_matrix``,
``class_metrics`` and ``class_distribution`` over a table and over a group's cells.

The slides' twenty animals' confusion matrix and ten rows' class distribution, the random
tables of text and integer classes against scikit-learn's confusion matrix and per-class
precision, recall and F, and the plain-Python distribution (tests/oracle_single.py),
weights, groups through ``class_cells``, and hostile table and column names.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from tests import oracle_single as O
from tests.conftest import conformance
from tests.references import close, tables
from tests.test_postgres_library import library_database

psycopg = pytest.importorskip("psycopg")
metrics = pytest.importorskip("sklearn.metrics")

SLIDES = conformance("slides_single_label.json")


@pytest.fixture(scope="module")
def pg(pg_server: Any) -> Iterator[Any]:
    yield from library_database(pg_server, "mlsql_class_tables")


def load(
    con: Any, rows: list[tuple[Any, Any]], kind: str, weights: list[Any] | None = None
) -> None:
    """``rows`` of (actual, predicted) as the temporary table t (actual, predicted, w)."""
    con.execute("DROP TABLE IF EXISTS t")
    con.execute(f"CREATE TEMP TABLE t (actual {kind}, predicted {kind}, w float8)")
    weights = weights or [1.0] * len(rows)
    with con.cursor() as cur:
        cur.executemany(
            "INSERT INTO t VALUES (%s, %s, %s)",
            [(a, p, w) for (a, p), w in zip(rows, weights, strict=True)],
        )


def _text(x: Any) -> str:
    return str(x)


def test_the_animals_confusion_matrix_and_the_ten_rows_distribution(pg: Any) -> None:
    """The slides' matrix (rows: actual, columns: predicted, classes sorted) and shares."""
    animals = SLIDES["animals"]
    load(pg, list(zip(animals["actual"], animals["predicted"], strict=True)), "text")
    want = animals["expected"]["confusion_matrix(actual row, predicted column, classes sorted)"]
    got = pg.execute("SELECT * FROM confusion_matrix('t', 'actual', 'predicted')").fetchall()
    classes = want["classes"]
    cells = [
        (a, p, float(n))
        for a, row in zip(classes, want["matrix"], strict=True)
        for p, n in zip(classes, row, strict=True)
    ]
    assert got == cells
    ten = SLIDES["ten_rows"]
    load(pg, [(a, a) for a in ten["actual"]], "text")
    got = pg.execute("SELECT * FROM class_distribution('t', 'actual')").fetchall()
    shares = ten["expected"]["class_distribution"]
    assert [c for c, _, _ in got] == list(shares)
    assert all(close(s, shares[c]) and n == shares[c] * 10 for c, n, s in got)


def _expected(
    rows: list[tuple[Any, Any]], weights: list[float]
) -> tuple[list[Any], list[Any], list[Any]]:
    """scikit-learn's confusion matrix and per-class values (zero_division 0), and the
    oracle's distribution of actual, over the known rows (weights as sample_weight)."""
    known = [
        (a, p, w)
        for (a, p), w in zip(rows, weights, strict=True)
        if a is not None and p is not None
    ]
    y, yhat, w = ([r[k] for r in known] for k in range(3))
    classes = sorted(set(y) | set(yhat))
    if not known:
        return [], [], []
    matrix = metrics.confusion_matrix(y, yhat, labels=classes, sample_weight=w)
    cells = [
        (_text(a), _text(p), float(matrix[i][j]))
        for i, a in enumerate(classes)
        for j, p in enumerate(classes)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prec, rec, f1, _ = metrics.precision_recall_fscore_support(
            y, yhat, labels=classes, zero_division=0, sample_weight=w
        )
    support = [float(matrix[i].sum()) for i in range(len(classes))]
    per_class = [(_text(c), support[i], prec[i], rec[i], f1[i]) for i, c in enumerate(classes)]
    return cells, per_class, classes


@pytest.mark.parametrize("weighted", [False, True])
def test_tables_match_scikit_learn(pg: Any, weighted: bool) -> None:
    """Every random table of text and integer classes (NULL rows, all unknown, none): the
    matrix's every cell, class_metrics' support, precision, recall and F1, and the
    distribution of actual; sums of weights with sample_weight."""
    for seed, table in enumerate(tables("classes", range(6), no_rows=True)):
        rows = list(zip(table["actual"].to_pylist(), table["predicted"].to_pylist(), strict=True))
        kind = "bigint" if pa.types.is_integer(table.schema.field("actual").type) else "text"
        rng = random.Random(f"pg-class-tables-{seed}")
        weights = [rng.choice([0.5, 1.0, 2.0, 3.0]) if weighted else 1.0 for _ in rows]
        load(pg, rows, kind, weights)
        w = ", 'w'" if weighted else ""
        cells, per_class, _ = _expected(rows, weights)
        got = pg.execute(
            f"SELECT * FROM confusion_matrix('t', 'actual', 'predicted'{w})"
        ).fetchall()
        assert [(a, p) for a, p, _ in got] == [(a, p) for a, p, _ in cells]
        assert all(close(g[2], c[2]) for g, c in zip(got, cells, strict=True))
        got = pg.execute(f"SELECT * FROM class_metrics('t', 'actual', 'predicted'{w})").fetchall()
        assert [r[0] for r in got] == [c[0] for c in per_class]
        for row, (_, support, pr, rc, f) in zip(got, per_class, strict=True):
            assert close(row[5], support) and close(row[6], pr) and close(row[7], rc), row
            assert close(row[8], f), row
        got = pg.execute(f"SELECT * FROM class_distribution('t', 'actual'{w})").fetchall()
        # the distribution reads one column: a row counts where actual is known
        known = [(a, x) for (a, _), x in zip(rows, weights, strict=True) if a is not None]
        want = O.distribution([a for a, _ in known])
        total = sum(x for _, x in known)
        counts = {c: sum(x for a, x in known if a == c) for c in want}
        assert [c for c, _, _ in got] == [_text(c) for c in want]
        for c, n, share in got:
            mine = next(k for k in want if _text(k) == c)
            assert close(n, counts[mine]) and close(share, counts[mine] / total), (c, n, share)


def test_class_distribution_of_rows_that_weigh_nothing(pg: Any) -> None:
    """Known rows that all weigh 0: every class is listed with count 0 and share NULL (the
    share of no weight), as in every engine."""
    load(pg, [("a", "a"), ("b", "a"), (None, "b")], "text", [0.0, 0.0, 2.0])
    got = pg.execute("SELECT * FROM class_distribution('t', 'actual', 'w')").fetchall()
    assert got == [("a", 0.0, None), ("b", 0.0, None)]


def test_class_metrics_parameters(pg: Any) -> None:
    """beta and zero_division by name, as the per-row functions take them; the 'ignore' and
    'diagnose' of a class never predicted; a bad beta is DuckDB's error."""
    load(pg, [("a", "a"), ("a", "b"), ("c", "a")], "text")
    rows = pg.execute(
        "SELECT class, precision, fbeta FROM class_metrics('t', 'actual', 'predicted',"
        " zero_division => 'ignore', beta => 2)"
    ).fetchall()
    # c: never predicted, precision undefined ('ignore': NULL); a: tp 1, fp 1, fn 1: F2 = 1/2
    assert rows[2][:2] == ("c", None) and rows[0][0] == "a" and close(rows[0][2], 0.5)
    assert pg.execute(
        "SELECT precision FROM class_metrics('t', 'actual', 'predicted', zero_division => 1)"
        " WHERE class = 'c'"
    ).fetchone() == (1.0,)
    with pytest.raises(psycopg.Error, match="The 'beta' parameter of class_metrics must be"):
        pg.execute("SELECT * FROM class_metrics('t', 'actual', 'predicted', beta => -1)").fetchall()


def test_groups_through_class_cells(pg: Any) -> None:
    """One confusion matrix per model from class_cells and LATERAL, each the model's own;
    by in the table form is an error that says how."""
    pg.execute("DROP TABLE IF EXISTS preds")
    pg.execute("CREATE TEMP TABLE preds (model text, actual int, predicted smallint)")
    pg.execute(
        "INSERT INTO preds VALUES ('m1', 10, 10), ('m1', 9, 10), ('m2', 1, 1), ('m2', NULL, 2)"
    )
    got = pg.execute(
        "SELECT s.model, m.* FROM (SELECT model, class_cells(actual, predicted) AS cells"
        " FROM preds GROUP BY model) s, LATERAL confusion_matrix(s.cells) m ORDER BY s.model"
    ).fetchall()
    assert got == [
        ("m1", "9", "9", 0.0),
        ("m1", "9", "10", 1.0),
        ("m1", "10", "9", 0.0),
        ("m1", "10", "10", 1.0),
        ("m2", "1", "1", 1.0),
    ]
    with pytest.raises(psycopg.Error, match="takes no 'by' in PostgreSQL"):
        pg.execute(
            "SELECT * FROM confusion_matrix('preds', 'actual', 'predicted', by => ARRAY['model'])"
        ).fetchall()


def test_hostile_names_are_names(pg: Any) -> None:
    """A table and columns whose names hold quotes, a semicolon and SQL: read as names."""
    pg.execute("DROP TABLE IF EXISTS t")
    pg.execute("CREATE TEMP TABLE t (x int)")
    table = 'p"; DROP TABLE t; --'
    actual, predicted, weight = "a'); DROP TABLE t; --", 'p"x', "w eight"
    quoted = [f'"{n.replace(chr(34), chr(34) * 2)}"' for n in (table, actual, predicted, weight)]
    pg.execute(
        f"CREATE TEMP TABLE {quoted[0]} ({quoted[1]} text, {quoted[2]} text, {quoted[3]} float8)"
    )
    pg.execute(f"INSERT INTO {quoted[0]} VALUES ('a', 'a', 2), ('a', 'b', 1)")
    got = pg.execute(
        "SELECT * FROM confusion_matrix(%s, %s, %s, %s)", [quoted[0], actual, predicted, weight]
    ).fetchall()
    assert got == [("a", "a", 2.0), ("a", "b", 1.0), ("b", "a", 0.0), ("b", "b", 0.0)]
    assert pg.execute("SELECT count(*) FROM t").fetchone() == (0,)  # t is still there
    with pytest.raises(psycopg.Error, match="does not exist"):
        pg.execute("SELECT * FROM class_distribution(%s, 'x')", ["no_such_table"]).fetchall()
