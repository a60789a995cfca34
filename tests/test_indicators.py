"""Indicator columns: the mldr and R walkthrough seeds in their own 0/1 layout get every measure.

The seeds hold L1..Ln (truth) and L1.1..Ln.1 (prediction) as 0/1 columns;
``mlsql.from_indicators`` turns them into label lists and the
report reproduces every expected figure; ``to_indicators`` gives the
matrices back.
"""

from __future__ import annotations

import math

import duckdb
import pyarrow as pa
import pytest

import mlsql
from mlsql import MlsqlError
from mlsql._duckdb.indicators import (
    from_indicators,
    lists_from_matrix,
    matrix_from_lists,
    to_indicators,
)
from mlsql._sqlexpr import quote_ident
from tests.conftest import conformance
from tests.test_label_conformance import cases

FILES = ["mldr_example.json", "gatto_51.json"]


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    return mlsql.connect()


def seed_table(file: str) -> tuple[pa.Table, list[str]]:
    data = conformance(file)
    labels = data["labels"]
    columns: dict[str, pa.Array] = {"id": pa.array(range(len(data["true_indicators"])))}
    for matrix, suffix in ((data["true_indicators"], ""), (data["predicted_indicators"], ".1")):
        for j, label in enumerate(labels):
            columns[label + suffix] = pa.array([row[j] for row in matrix], pa.int32())
    return pa.table(columns), labels


def as_lists(con: duckdb.DuckDBPyConnection, file: str) -> duckdb.DuckDBPyRelation:
    table, labels = seed_table(file)
    sides = {"actual": labels, "predicted": [f"{lab}.1" for lab in labels]}
    return from_indicators(con, table, sides)


@pytest.mark.long_cases("mldr_example.json")
@pytest.mark.parametrize("file", FILES)
def test_every_expected_figure_from_the_indicator_layout(con, file):
    rel = as_lists(con, file)
    assert rel.columns == ["id", "actual", "predicted"]
    reports = {}
    checked = 0
    for f, key, column, params, want in cases():
        if f != file:
            continue
        frozen = repr(sorted(params.items()))
        if frozen not in reports:
            report = mlsql.multilabel_report(con, rel, "actual", "predicted", **params)
            reports[frozen] = dict(zip(report.columns, report.fetchall()[0], strict=True))
        got = reports[frozen][column]
        assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-12), (key, got, want)
        checked += 1
    assert checked > 30
    expected = conformance(file)["expected"]
    per_label = mlsql.label_metrics(con, rel, "actual", "predicted").to_arrow_table().to_pylist()
    for r in per_label:
        counts = {k: r[k] for k in ("tp", "fp", "fn", "tn", "support")}
        assert counts == expected["per_label"][r["label"]]


@pytest.mark.parametrize("file", FILES)
def test_round_trip_to_indicators(con, file):
    data = conformance(file)
    labels = data["labels"]
    rel = as_lists(con, file)
    back = to_indicators(con, rel, "actual", labels, keep=False)
    assert back.columns == labels
    assert [list(r) for r in back.fetchall()] == data["true_indicators"]
    named = to_indicators(con, rel, "predicted", labels, names=[f"{x}.1" for x in labels])
    assert named.columns[:2] == ["id", "actual"]
    assert [list(r[2:]) for r in named.fetchall()] == data["predicted_indicators"]


@pytest.mark.parametrize("file", FILES)
def test_plain_python_round_trip(file):
    data = conformance(file)
    lists = lists_from_matrix(data["true_indicators"], data["labels"])
    assert lists == [sorted(r["actual"]) for r in data["rows"]]
    assert matrix_from_lists(lists, data["labels"]) == data["true_indicators"]


def test_sql_macros_directly(con):
    got = con.execute(
        "SELECT labels_from_indicators([1, 0, 1], ['a', 'b', 'c']), "
        "labels_from_indicators([true, false], [1, 2]), "
        "labels_from_indicators([1, NULL], ['a', 'b']), "
        "indicators_from_labels(['c', 'a', 'a', 'zz'], ['a', 'b', 'c']), "
        "indicators_from_labels(NULL::VARCHAR[], ['a'])"
    ).fetchall()
    assert got == [(["a", "c"], [1], None, [1, 0, 1], None)]
    with pytest.raises(duckdb.Error, match="indicators 0 or 1"):
        con.execute("SELECT labels_from_indicators([2, 0], ['a', 'b'])").fetchall()
    with pytest.raises(duckdb.Error, match="one label name per indicator"):
        con.execute("SELECT labels_from_indicators([1, 0], ['a'])").fetchall()


def test_hostile_indicator_column_names(con):
    evil = 'x"; DROP TABLE keep_me; --'
    con.execute("CREATE OR REPLACE TABLE keep_me AS SELECT 1 AS x")
    table = pa.table({evil: [1, 0], "b": [1, 1], evil + ".1": [0, 0], "b.1": [1, 0]})
    rel = from_indicators(
        con, table, {"actual": [evil, "b"], "predicted": [evil + ".1", "b.1"]}, labels=["a", "b"]
    )
    assert rel.fetchall() == [(["a", "b"], ["b"]), (["b"], [])]
    back = to_indicators(con, rel, "actual", ["a", "b"], names=[evil, "it's"], keep=False)
    assert back.columns == [evil, "it's"]
    assert back.fetchall() == [(1, 1), (0, 1)]
    assert con.execute(f"SELECT * FROM {quote_ident('keep_me')}").fetchall() == [(1,)]


def test_bad_indicator_input(con):
    table = pa.table({"L1": [1], "L2": [0]})
    with pytest.raises(MlsqlError, match="needs one indicator column per label"):
        from_indicators(con, table, {"actual": ["L1", "L2"]}, labels=["a"])
    with pytest.raises(MlsqlError, match="has no column 'L3'"):
        from_indicators(con, table, {"actual": ["L1", "L3"]})
    with pytest.raises(MlsqlError, match="indicators 0 or 1"):
        lists_from_matrix([[1, 2]], ["a", "b"])
    with pytest.raises(MlsqlError, match="at least one label"):
        to_indicators(con, pa.table({"a": [["x"]]}), "a", [])
