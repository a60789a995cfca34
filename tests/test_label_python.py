"""The Python entry points mlsql.label_metrics / mlsql.multilabel_report (DuckDB connections).

Every kind of source gives the same table; names reach SQL only as values
(a column called ``x"; DROP TABLE t; --`` works and drops nothing); schema
problems are MlsqlErrors that say what was wrong.
"""

from __future__ import annotations

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import mlsql
from mlsql import MlsqlError
from mlsql._sqlexpr import quote_ident
from tests.conftest import conformance

EVIL = 'x"; DROP TABLE t; --'


@pytest.fixture(scope="module")
def con() -> duckdb.DuckDBPyConnection:
    return mlsql.connect()


@pytest.fixture()
def blog() -> pa.Table:
    rows = conformance("hivemall_blog_tags.json")["rows"]
    return pa.table(
        {
            "model": ["m1", "m2"] * 3 + ["m1"],
            "actual": [r["actual"] for r in rows],
            "predicted": [r["predicted"] for r in rows],
        }
    )


@pytest.mark.long
def test_every_source_kind_gives_the_same_report(con, blog, tmp_path):
    path = tmp_path / "blog.parquet"
    pq.write_table(blog, path)
    con.execute("CREATE OR REPLACE TABLE blog AS SELECT * FROM read_parquet(?)", [str(path)])
    sources = {
        "table": "blog",
        "query": "SELECT * FROM blog WHERE true",
        "parquet": str(path),
        "path": path,
        "arrow": blog,
        "polars": pl.from_arrow(blog),
        "relation": con.table("blog"),
    }
    want = conformance("hivemall_blog_tags.json")["expected"]
    results = {}
    for kind, source in sources.items():
        rel = mlsql.multilabel_report(con, source, "actual", "predicted", by="model")
        assert isinstance(rel, duckdb.DuckDBPyRelation)
        results[kind] = rel.to_arrow_table()
    first = results["table"]
    for kind, table in results.items():  # equal up to float summation order (threads)
        assert table.column_names == first.column_names, kind
        for got, ref in zip(table.to_pylist(), first.to_pylist(), strict=True):
            for name, value in ref.items():
                if isinstance(value, float):
                    assert got[name] == pytest.approx(value, rel=1e-12), (kind, name)
                else:
                    assert got[name] == value, (kind, name)
    overall = mlsql.multilabel_report(con, blog, "actual", "predicted").to_arrow_table()
    assert overall.column("micro_f1").to_pylist() == [pytest.approx(want["micro.f1"], rel=1e-12)]
    assert first.column("model").to_pylist() == ["m1", "m2"]


def test_relation_converts_to_polars(con, blog):
    rel = mlsql.label_metrics(con, blog, "actual", "predicted", beta=2)
    frame = rel.pl()
    assert isinstance(frame, pl.DataFrame)
    assert frame.columns[:2] == ["label", "tp"] and "fbeta" in frame.columns
    assert rel.to_arrow_table().num_rows == 3


def test_in_memory_sources_leave_no_view_behind(con, blog):
    before = con.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchall()
    mlsql.label_metrics(con, blog, "actual", "predicted").fetchall()
    after = con.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchall()
    assert before == after


def test_a_plain_connection_gets_the_macros():
    con = duckdb.connect()
    preds = pa.table({"a": [["x"]], "p": [["x", "y"]]})
    got = mlsql.multilabel_report(con, preds, "a", "p").fetchall()
    assert got[0][0] == 1


def test_hostile_names_are_values_not_sql(con):
    con.execute(
        f"CREATE OR REPLACE TABLE t AS SELECT ['a', 'b'] AS {quote_ident(EVIL)}, "
        f"['a'] AS predicted, 'g1' AS {quote_ident(EVIL + 'g')}"
    )
    got = mlsql.label_metrics(con, "t", EVIL, "predicted", by=[EVIL + "g"]).fetchall()
    assert [r[:3] for r in got] == [("g1", "a", 1), ("g1", "b", 0)]
    report = mlsql.multilabel_report(con, "t", EVIL, "predicted", labels=["a", "b'); --"])
    assert report.fetchall()[0][:2] == (1, 2)
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(1,)]  # t is still there
    evil_table = 'my "t"; DROP TABLE t; --'
    con.execute(f"CREATE OR REPLACE TABLE {quote_ident(evil_table)} AS FROM t")
    got = mlsql.label_metrics(con, evil_table, EVIL, "predicted").fetchall()
    assert len(got) == 2
    sql_got = con.execute(  # in SQL a name with quotes is written quoted, as for query_table
        "SELECT label, tp FROM label_metrics(?, ?, 'predicted')", [quote_ident(evil_table), EVIL]
    ).fetchall()
    assert sql_got == [("a", 1), ("b", 0)]
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(1,)]


def test_type_mismatch_names_both_types(con):
    preds = pa.table({"actual": [["a"]], "predicted": pa.array([[1]], pa.list_(pa.int64()))})
    with pytest.raises(MlsqlError, match=r"actual VARCHAR\[\] and predicted BIGINT\[\]"):
        mlsql.label_metrics(con, preds, "actual", "predicted")


def test_integer_widths_may_differ(con):
    preds = pa.table(
        {
            "actual": pa.array([[1, 2]], pa.list_(pa.int32())),
            "predicted": pa.array([[2]], pa.list_(pa.int64())),
        }
    )
    got = mlsql.label_metrics(con, preds, "actual", "predicted").fetchall()
    assert [r[:2] for r in got] == [(1, 0), (2, 1)]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"actual": "nope"}, r"the actual column 'nope' is not in the source"),
        ({"by": ["nope"]}, r"the by column 'nope' is not in the source"),
        ({"by": ["label"]}, r"the by column 'label' is not in the source"),
        ({"zero_division": 2}, r"The 'zero_division' parameter of label_metrics must be one of"),
        ({"beta": -1}, r"The 'beta' parameter of label_metrics must be a finite number > 0"),
        ({"labels": []}, r"'labels' parameter of label_metrics must hold at least one label"),
        ({"labels": "abc"}, r"'labels' parameter of label_metrics must be a list"),
        ({"labels": [1, 2]}, r"must hold labels of the columns' type \(VARCHAR\[\]\)"),
        ({"predicted": "model"}, r"takes a list of labels per row for predicted\. Got predicted"),
    ],
)
def test_bad_input_is_an_mlsql_error(con, blog, kwargs, message):
    args = {"actual": "actual", "predicted": "predicted", **kwargs}
    actual, predicted = args.pop("actual"), args.pop("predicted")
    with pytest.raises(MlsqlError, match=message):
        mlsql.label_metrics(con, blog, actual, predicted, **args)


def test_a_by_column_named_like_an_output_column_is_refused(con):
    preds = pa.table({"label": ["x"], "actual": [["a"]], "predicted": [["a"]]})
    with pytest.raises(MlsqlError, match="has the name of an output column"):
        mlsql.label_metrics(con, preds, "actual", "predicted", by="label")


def test_unknown_source_kind(con):
    with pytest.raises(MlsqlError, match="reads a table name, a query, a file path"):
        mlsql.label_metrics(con, 42, "actual", "predicted")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            "label_metrics('blog_view', 'actual', 'predicted', zero_division := 'warn')",
            "zero_division",
        ),
        ("multilabel_report('blog_view', 'actual', 'predicted', beta := 0)", "'beta' parameter"),
        ("label_metrics('blog_view', 'actual', 'predicted', labels := [])", "at least one label"),
    ],
)
def test_sql_checks_parameters_too(con, blog, call, message):
    con.register("blog_view", blog)
    with pytest.raises(duckdb.Error, match=message):
        con.execute(f"SELECT * FROM {call}").fetchall()


def test_sql_type_mismatch_is_an_error(con):
    con.execute("CREATE OR REPLACE TABLE mixed AS SELECT ['a'] AS actual, [1] AS predicted")
    with pytest.raises(duckdb.Error, match=r"(?s)INTEGER.*VARCHAR|VARCHAR.*INTEGER"):
        con.execute("SELECT * FROM label_metrics('mixed', 'actual', 'predicted')").fetchall()
