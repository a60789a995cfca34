"""Catalog reliability (issue 17 items 1, 2, 4, 10, 16; issue 18 item 2).

register() never clobbers a user's function, names built into SQL are only
names, table names that start like a keyword are tables, Hivemall queries
run, macros of mlsql.connect() serve every cursor, concurrent registration
is safe, and the plain-SQL library loads into a new database file with the
DuckDB command-line shell.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import pytest

import mlsql
from mlsql.cli.sqlpath import sql_dir
from tests.conftest import ROOT, conformance

SQL_DIR = ROOT / "sql"
ENTRY_DIR = sql_dir()  # the entry files, written from sql/ into the cache


# ------------------------------------------------------------- 17.1 never clobber
@pytest.mark.long
def test_register_in_a_schema_refuses_to_replace_a_users_macro():
    con = duckdb.connect()
    con.execute("CREATE SCHEMA mlsql; CREATE MACRO mlsql.micro_f1(a, b) AS 'mine'")
    with pytest.raises(mlsql.MlsqlError, match=r"schema 'mlsql': micro_f1\..*replace=True"):
        mlsql.register(con, schema="mlsql")
    assert con.execute("SELECT mlsql.micro_f1(1, 2)").fetchone()[0] == "mine"
    mlsql.register(con, schema="mlsql", replace=True)
    assert con.execute("SELECT mlsql.micro_f1(['a'], ['a'])").fetchone()[0] == 1.0


def test_a_users_macro_commented_like_mlsqls_is_still_the_users():
    con = duckdb.connect()
    con.execute("CREATE MACRO micro_f1(a, b) AS 'mine'")
    con.execute("COMMENT ON MACRO micro_f1 IS 'mlsql macro: my own, not the library''s'")
    with pytest.raises(mlsql.MlsqlError, match=r"micro_f1\..*replace=True"):
        mlsql.register(con)
    assert con.execute("SELECT micro_f1(1, 2)").fetchone()[0] == "mine"


@pytest.mark.long
def test_a_comment_copied_from_another_mlsql_macro_does_not_make_it_mlsqls():
    con = mlsql.register(duckdb.connect())
    theirs = con.execute(
        "SELECT comment FROM duckdb_functions() WHERE function_name = 'micro_recall'"
    ).fetchone()[0]
    other = duckdb.connect()
    other.execute("CREATE MACRO micro_f1(a, b) AS 'mine'")
    other.execute(f"COMMENT ON MACRO micro_f1 IS '{theirs.replace(chr(39), chr(39) * 2)}'")
    with pytest.raises(mlsql.MlsqlError, match=r"micro_f1\."):
        mlsql.register(other)


def test_a_user_table_macro_of_a_library_name_is_refused_too():
    con = duckdb.connect()
    con.execute("CREATE MACRO label_metrics(x) AS TABLE SELECT x AS mine")
    with pytest.raises(mlsql.MlsqlError, match=r"label_metrics\."):
        mlsql.register(con)
    assert con.execute("FROM label_metrics(7)").fetchall() == [(7,)]


# ------------------------------------------------------------- 17.2 names are names
HOSTILE_PREFIX = "x(a) AS 1; DROP TABLE keep; CREATE MACRO y"


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"prefix": HOSTILE_PREFIX}, "prefix"),
        ({"schema": 'm"; DROP TABLE keep; --'}, "schema"),
        ({"schema": "1abc"}, "schema"),
        ({"prefix": "ml-"}, "prefix"),
    ],
)
def test_hostile_prefix_or_schema_is_refused_and_the_users_table_survives(kwargs, param):
    con = duckdb.connect()
    con.execute("CREATE TABLE keep AS SELECT 1 AS x")
    with pytest.raises(mlsql.MlsqlError, match=rf"'{param}' parameter of register must be letters"):
        mlsql.register(con, **kwargs)
    assert con.execute("SELECT x FROM keep").fetchall() == [(1,)]
    assert not con.execute(
        "SELECT count(*) FROM duckdb_functions() WHERE function_name LIKE '%micro_f1'"
    ).fetchone()[0]


# ------------------------------------------------------------- 17.16 cursors, threads, speed
def test_macros_of_connect_serve_every_cursor():
    con = mlsql.connect()
    cursor = con.cursor()
    assert cursor.execute("SELECT micro_f1(['a', 'b'], ['a'])").fetchone()[0] == pytest.approx(
        2 / 3
    )
    con.execute("CREATE TABLE preds AS SELECT ['a'] AS actual, ['a', 'b'] AS predicted")
    got = cursor.execute("SELECT label, tp, fp FROM label_metrics('preds', 'actual', 'predicted')")
    assert got.fetchall() == [("a", 1, 0), ("b", 0, 1)]


@pytest.mark.long
def test_connect_to_a_file_writes_nothing_into_it(tmp_path):
    path = tmp_path / "user.duckdb"
    mlsql.connect(str(path)).close()
    names = duckdb.connect(str(path)).execute("SELECT function_name FROM duckdb_functions()")
    assert "micro_f1" not in {r[0] for r in names.fetchall()}


@pytest.mark.long
def test_concurrent_persistent_registration_on_four_cursors():
    con = duckdb.connect()
    cursors = [con.cursor() for _ in range(4)]
    errors: list[BaseException] = []
    start = threading.Barrier(len(cursors))

    def work(cur: duckdb.DuckDBPyConnection) -> None:
        try:
            start.wait()
            mlsql.register(cur, temporary=False)
            assert cur.execute("SELECT micro_f1(['a'], ['a'])").fetchone()[0] == 1.0
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(c,)) for c in cursors]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.long
def test_connect_copies_the_stored_library_once_it_is_stored(tmp_path, monkeypatch):
    """connect() reuses one stored library file per DuckDB version and library (its speed is
    measured in benchmarks/, not asserted here). A cache of its own: the other test workers
    store libraries of their own options in the shared one meanwhile."""
    from mlsql._duckdb.register import _stored_library, cache_dir

    monkeypatch.setenv("MLSQL_CACHE_DIR", str(tmp_path))
    mlsql.connect()  # builds the stored library once per DuckDB version
    stored = _stored_library("", None, mlsql.native_status()["duckdb"]["enabled"])
    assert stored is not None and stored.parent == cache_dir()
    before = sorted(cache_dir().glob("duckdb-library-*.duckdb"))
    con = mlsql.connect()
    assert con.execute("SELECT micro_f1(['a', 'b'], ['a'])").fetchone()[0] == pytest.approx(2 / 3)
    assert sorted(cache_dir().glob("duckdb-library-*.duckdb")) == before


@pytest.mark.long
def test_connect_to_a_shared_in_memory_database_leaves_a_users_macro_alone(tmp_path, monkeypatch):
    """With the library stored, its names are still checked before it is copied."""
    monkeypatch.setenv("MLSQL_CACHE_DIR", str(tmp_path))
    mlsql.connect()  # stores the library
    assert list(tmp_path.glob("duckdb-library-*.duckdb"))
    user = duckdb.connect(":memory:mlsql_shared_test")
    user.execute("CREATE MACRO micro_f1(a, b) AS 'mine'")
    with pytest.raises(mlsql.MlsqlError, match=r"micro_f1\. Pass replace=True"):
        mlsql.connect(":memory:mlsql_shared_test")
    assert user.execute("SELECT micro_f1(1, 2)").fetchone()[0] == "mine"
    assert (
        user.execute(
            "SELECT count(*) FROM duckdb_functions() WHERE function_name = 'samples_f1'"
        ).fetchone()[0]
        == 0
    )
    replaced = mlsql.connect(":memory:mlsql_shared_test", replace=True)
    assert replaced.execute("SELECT micro_f1(['a'], ['a', 'b'])").fetchone()[0] == pytest.approx(
        2 / 3
    )


def test_registrations_own_queries_call_builtins_qualified():
    from mlsql._duckdb import register as R
    from mlsql._duckdb.builtins import qualify_builtins

    for query in (R._FUNCTIONS, R._IN_SCHEMA, R._CURRENT, R._PATH):
        assert qualify_builtins(query) == query


def test_no_library_name_is_a_duckdb_builtin():
    """The fast path copies into the catalog without replacing: no builtin may share a name."""
    from mlsql._duckdb.register import _existing, _library

    _, names = _library("", None)
    assert _existing(duckdb.connect(), names, None) == {}


# ------------------------------------------------------------- 17.4 table or query
KEYWORD_NAMES = [
    "table1",
    "selected",
    "from_2024",
    "values",
    "withheld",
    "showroom",
    "describe_runs",
    "pivot_preds",
    'a"b',
]
#: x was true and predicted, y predicted only: (label, tp, fp, fn)
EXPECTED = [("x", 1, 0, 0), ("y", 0, 1, 0)]


@pytest.fixture
def named_tables():
    con = mlsql.connect()
    for name in KEYWORD_NAMES:
        quoted = '"' + name.replace('"', '""') + '"'
        con.execute(
            f"CREATE TABLE {quoted} AS SELECT ['x'] AS a, ['x', 'y'] AS p, 'x' AS s, 'y' AS t"
        )
    return con


@pytest.mark.parametrize("name", KEYWORD_NAMES)
def test_a_table_named_like_a_keyword_is_read_as_a_table_from_python(named_tables, name):
    got = mlsql.label_metrics(named_tables, name, "a", "p").select("label, tp, fp, fn")
    assert got.fetchall() == EXPECTED


@pytest.mark.parametrize("name", KEYWORD_NAMES)
def test_a_table_named_like_a_keyword_is_read_as_a_table_from_sql(named_tables, name):
    got = named_tables.execute("SELECT label, tp, fp, fn FROM label_metrics(?, 'a', 'p')", [name])
    assert got.fetchall() == EXPECTED
    cells = named_tables.execute(
        "SELECT actual, predicted, count FROM confusion_matrix(?, 's', 't') WHERE count > 0",
        [name],
    )
    assert cells.fetchall() == [("x", "y", 1)]


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * FROM table1",
        "FROM table1",
        "  from\ntable1",
        "(FROM table1)",
        "WITH q AS (FROM table1) FROM q",
    ],
)
def test_queries_are_still_queries_on_both_paths(named_tables, query):
    got = mlsql.label_metrics(named_tables, query, "a", "p").select("label, tp, fp, fn")
    assert got.fetchall() == EXPECTED
    sql = named_tables.execute("SELECT label, tp, fp, fn FROM label_metrics(?, 'a', 'p')", [query])
    assert sql.fetchall() == EXPECTED


def test_an_existing_table_wins_over_query_text_in_python():
    con = mlsql.connect()
    con.execute("CREATE TABLE \"select x\" AS SELECT ['x'] AS a, ['x', 'y'] AS p")
    got = mlsql.label_metrics(con, "select x", "a", "p").select("label, tp, fp, fn")
    assert got.fetchall() == EXPECTED


# ------------------------------------------------------------- 18.2 the plain-SQL path
def _duckdb_shell() -> str | None:
    """The DuckDB command-line shell (PyPI package duckdb-cli, in the dev extras)."""
    beside = Path(sys.executable).parent / "duckdb"
    return os.environ.get("MLSQL_DUCKDB_CLI") or (
        str(beside) if beside.exists() else shutil.which("duckdb")
    )


def _shell(*commands: str, db: Path) -> subprocess.CompletedProcess[str]:
    shell = _duckdb_shell()
    if shell is None:
        pytest.skip("the DuckDB shell is not installed (pip install duckdb-cli)")
    args = [shell, str(db), *(x for c in commands for x in ("-c", c))]
    return subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)


def test_readme_plain_sql_command_works_on_a_new_database_file(tmp_path):
    db = tmp_path / "my.db"
    done = _shell(f".read {ENTRY_DIR}/mlsql.sql", ".read examples/blog_tags.sql", db=db)
    assert done.returncode == 0, done.stderr
    published = conformance("hivemall_blog_tags.json")["published"]
    assert repr(published["fmeasure(actual, predicted)"]) in done.stdout
    assert repr(published["fmeasure(actual, predicted, '-beta 2.')"]) in done.stdout
    stored = duckdb.connect(str(db), read_only=True).execute(
        "SELECT count(*) FROM duckdb_functions() WHERE function_name = 'micro_f1'"
    )
    assert stored.fetchone()[0] == 0, "the library was written into the database file"


def test_the_library_file_refuses_to_replace_a_users_macro_and_loads_nothing(tmp_path):
    db = tmp_path / "mine.db"
    assert _shell("CREATE MACRO micro_f1(a, b) AS 42", db=db).returncode == 0
    done = _shell(f".read {ENTRY_DIR}/mlsql.sql", "SELECT 1", db=db)
    assert done.returncode != 0
    assert "micro_f1" in done.stderr and "mlsql_replace.sql" in done.stderr, done.stderr
    con = duckdb.connect(str(db))
    assert con.execute("SELECT micro_f1(1, 2)").fetchone()[0] == 42
    con.close()


def test_library_file_loads_all_or_nothing():
    text = (ENTRY_DIR / "mlsql.sql").read_text()
    con = duckdb.connect()
    con.execute("CREATE MACRO set_union(a, b) AS 'mine'")
    with pytest.raises(duckdb.Error, match=r"set_union\. Nothing was loaded"):
        con.execute(text)
    broken = text.replace("\nCOMMIT;", "\nSELECT error('late failure');\nCOMMIT;")
    fresh = duckdb.connect()
    with pytest.raises(duckdb.Error, match="late failure"):
        fresh.execute(broken)
    fresh.execute("ROLLBACK")
    for c in (con, fresh):
        found = c.execute(
            "SELECT count(*) FROM duckdb_functions() WHERE function_name IN ('micro_f1', 'zero_one_loss')"
        )
        assert found.fetchone()[0] == 0
    assert con.execute("SELECT set_union(1, 2)").fetchone()[0] == "mine"


@pytest.mark.long
def test_the_replace_file_reloads_the_library_in_a_session():
    con = duckdb.connect()
    con.execute((ENTRY_DIR / "mlsql.sql").read_text())
    with pytest.raises(duckdb.Error, match="exist already"):
        con.execute((ENTRY_DIR / "mlsql.sql").read_text())
    con.execute((ENTRY_DIR / "mlsql_replace.sql").read_text())
    assert con.execute("SELECT micro_f1(['a', 'b'], ['a'])").fetchone()[0] == pytest.approx(2 / 3)
    mlsql.register(con)  # the file's macros are marked as mlsql's: no clash


# ------------------------------------------------------------- 17.10 Hivemall drop-in
RANKING = conformance("hivemall_ranking.json")


def _ranking_table(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE TABLE ranked (rank_items BIGINT[], correct_items BIGINT[])")
    con.executemany(
        "INSERT INTO ranked VALUES (?, ?)",
        [(r["rank_items"], r["correct_items"]) for r in RANKING["rows"]],
    )


@pytest.mark.parametrize(
    ("query", "want"),
    [
        ("SELECT auc(rank_items, correct_items) FROM ranked", RANKING["expected_at_4"]["auc"]),
        ("SELECT auc(rank_items, correct_items, 4) FROM ranked", RANKING["expected_at_4"]["auc"]),
        ("SELECT auc(rank_items, correct_items, 2) FROM ranked", RANKING["expected_at_2"]["auc"]),
        (
            "SELECT auc(list_transform(rank_items, lambda x: x::VARCHAR),"
            " list_transform(correct_items, lambda x: x::VARCHAR), 2) FROM ranked",
            RANKING["expected_at_2"]["auc"],
        ),
    ],
)
def test_hivemalls_ranking_auc_query_runs_unchanged_in_duckdb(query, want):
    con = mlsql.connect()
    _ranking_table(con)
    assert con.execute(query).fetchone()[0] == pytest.approx(want, rel=1e-12)


def test_binary_auc_is_unchanged_by_the_ranking_overloads():
    con = mlsql.connect()
    got = con.execute(
        "SELECT auc(y, s), roc_auc_score(y, s) FROM (VALUES (1, 0.9), (0, 0.2), (1, 0.2), (0, 0.1)) t(y, s)"
    ).fetchone()
    # positives 0.9, 0.2 against negatives 0.2, 0.1: pairs won 1 + 1 + 0.5 + 1 of 4
    assert got == (pytest.approx(3.5 / 4), pytest.approx(3.5 / 4))


def test_a_list_given_to_roc_auc_score_names_ranking_auc_in_duckdb():
    con = mlsql.connect()
    with pytest.raises(
        duckdb.Error, match=r"Got actual VARCHAR\[\]\. Hivemall's auc .* is ranking_auc"
    ):
        con.execute("SELECT roc_auc_score(['a', 'b'], 0.5)").fetchone()


def test_a_list_given_to_auc_names_ranking_auc_in_polars():
    pl = pytest.importorskip("polars")
    import mlsql.polars as mp

    frame = pl.DataFrame({"rank_items": [["a", "b"]], "correct_items": [["a"]]})
    with pytest.raises(
        mlsql.MlsqlError, match=r"List\(String\)\. Hivemall's auc .* is ranking_auc"
    ):
        frame.select(mp.auc("rank_items", "correct_items"))


def test_fmeasure_names_an_unreadable_beta_in_duckdb_as_polars_does():
    pl = pytest.importorskip("polars")
    import mlsql.polars as mp

    want = "The 'beta' parameter of fmeasure must be a finite number > 0. Got 'abc' instead."
    con = mlsql.connect()
    with pytest.raises(duckdb.Error, match=re.escape(want)):
        con.execute("SELECT fmeasure(['a'], ['a'], '-beta abc')").fetchone()
    frame = pl.DataFrame({"a": [["a"]], "p": [["a"]]})
    with pytest.raises(mlsql.MlsqlError, match=re.escape(want)):
        frame.select(mp.fmeasure("a", "p", "-beta abc"))


# ------------------------------------------------------------- Spark: 17.1 and 17.10
@pytest.fixture(scope="module")
def spark():
    pytest.importorskip("pyspark")
    from tests.engines.spark_engine import session

    return session().newSession()  # its own temporary functions


@pytest.mark.first(rank=10)
@pytest.mark.long
def test_spark_register_refuses_to_replace_a_users_temporary_function(spark):
    import mlsql.spark as ms

    spark.sql("CREATE OR REPLACE TEMPORARY FUNCTION set_jaccard(a INT) RETURNS INT RETURN a * 10")
    with pytest.raises(
        mlsql.MlsqlError, match=r"in this Spark session: set_jaccard\..*replace=True"
    ):
        ms.register(spark)
    assert spark.sql("SELECT set_jaccard(4)").first()[0] == 40
    names = ms.register(spark, prefix="ml_")
    assert "ml_set_jaccard" in names
    ms.register(spark, prefix="ml_")  # its own functions: registering again is fine
    ms.register(spark, replace=True)
    assert spark.sql("SELECT set_jaccard(array('a', 'b'), array('a'))").first()[0] == 0.5


def test_spark_auc_on_lists_names_ranking_auc(spark):
    import mlsql.spark as ms

    frame = spark.createDataFrame([(["a", "b"], ["a"])], "r array<string>, c array<string>")
    with pytest.raises(mlsql.MlsqlError, match=r"array<string>\. Hivemall's auc .* is ranking_auc"):
        frame.select(ms.auc(frame.r, frame.c)).collect()  # typed Columns: checked at once


@pytest.mark.long
def test_connect_works_without_a_usable_cache(tmp_path, monkeypatch):
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("")
    monkeypatch.setenv("MLSQL_CACHE_DIR", str(blocked))
    assert mlsql.connect().cursor().execute("SELECT micro_f1(['a'], ['a'])").fetchone()[0] == 1.0
    monkeypatch.setenv("MLSQL_CACHE_DIR", str(tmp_path / "cache"))
    mlsql.connect()
    (stored,) = (tmp_path / "cache").glob("*.duckdb")
    stored.write_bytes(b"not a database")
    assert mlsql.connect().execute("SELECT micro_f1(['a'], ['b'])").fetchone()[0] == 0.0
    assert not stored.exists() or stored.read_bytes() != b"not a database"


def test_a_database_file_too_old_for_typed_macros_gets_a_clear_error_not_broken_macros(tmp_path):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path), config={"storage_compatibility_version": "v1.0.0"})
    with pytest.raises(mlsql.MlsqlError, match=r"storage version is older than 1\.4"):
        mlsql.register(con, temporary=False)
    con.close()
    stored = duckdb.connect(str(path)).execute(
        "SELECT count(*) FROM duckdb_functions() WHERE function_name = 'micro_f1'"
    )
    assert stored.fetchone()[0] == 0


@pytest.mark.long
def test_storing_after_temporary_registration_stores_them_for_cursors():
    con = mlsql.register(duckdb.connect())  # TEMP: this connection only
    mlsql.register(con, temporary=False)
    assert con.cursor().execute("SELECT micro_f1(['a'], ['a'])").fetchone()[0] == 1.0
