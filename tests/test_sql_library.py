"""The SQL library itself: generated files are fresh, load in bare DuckDB, register safely."""

from __future__ import annotations

import re

import duckdb
import pytest

import mlsql
from mlsql._duckdb.generate import ENTRY_FILES, library_texts
from mlsql._duckdb.library import macros
from mlsql._sqlexpr import lit
from mlsql.cli.sqlpath import sql_dir
from tests.conftest import ROOT, conformance

SQL_DIR = ROOT / "sql"
ENTRY_DIR = sql_dir()  # the entry files, written from sql/ into the cache


#: the hash of a macro's definitions as the DuckDB that wrote the file prints them (mlsql's mark
#: of its own macros): DuckDB 1.x prints some bodies otherwise, and a body that changes changes
#: the file's text anyway
_DEFINITION_HASH = re.compile(
    r"(COMMENT ON MACRO (?:TABLE )?\S+ IS 'mlsql macro \S+ \S+ )[0-9a-f]{16}:"
)


def _unmarked(text: str) -> str:
    return _DEFINITION_HASH.sub(r"\1<definitions>:", text)


@pytest.mark.long
def test_committed_sql_is_what_the_code_generates():
    texts = library_texts()
    stale = [
        name
        for name, text in texts.items()
        if name not in ENTRY_FILES and _unmarked((SQL_DIR / name).read_text()) != _unmarked(text)
    ]
    assert not stale, f"sql/ is stale ({stale}): run python -m mlsql._duckdb.generate"
    # the entry files are not committed: sql-path writes them from the code into the cache
    for name in ENTRY_FILES:
        assert _unmarked((ENTRY_DIR / name).read_text()) == _unmarked(texts[name]), name


def test_bare_duckdb_loads_the_entry_file_and_scores_blog_tags():
    data = conformance("hivemall_blog_tags.json")
    con = duckdb.connect()
    con.execute((ENTRY_DIR / "mlsql.sql").read_text())
    con.execute("CREATE TABLE preds (actual VARCHAR[], predicted VARCHAR[])")
    con.executemany(
        "INSERT INTO preds VALUES (?, ?)", [(r["actual"], r["predicted"]) for r in data["rows"]]
    )
    f1, f2 = con.execute(
        "SELECT micro_f1(actual, predicted), fmeasure(actual, predicted, '-beta 2.') FROM preds"
    ).fetchone()
    assert f1 == pytest.approx(data["published"]["fmeasure(actual, predicted)"], rel=1e-12)
    assert f2 == pytest.approx(
        data["published"]["fmeasure(actual, predicted, '-beta 2.')"], rel=1e-12
    )


def test_a_refused_entry_file_leaves_the_connection_usable():
    con = duckdb.connect()
    con.execute("CREATE MACRO micro_f1(a, b) AS 42")
    with pytest.raises(duckdb.Error, match=r"exist already: micro_f1\. Nothing was loaded"):
        con.execute((ENTRY_DIR / "mlsql.sql").read_text())
    # no transaction is left open (let alone aborted): the next statements run
    assert con.execute("SELECT micro_f1(1, 2)").fetchone()[0] == 42
    found = con.execute(
        "SELECT count(*) FROM duckdb_functions() WHERE function_name = 'samples_f1'"
    )
    assert found.fetchone()[0] == 0


def test_every_public_macro_is_in_the_entry_file():
    entry = (ENTRY_DIR / "mlsql.sql").read_text()
    for m in macros():
        assert f"MACRO {m.name}(" in entry or f"MACRO {m.name}" in entry, m.name


def test_register_is_temporary_by_default(tmp_path):
    path = tmp_path / "user.duckdb"
    con = mlsql.register(duckdb.connect(str(path)))
    assert con.execute("SELECT micro_f1(['a'], ['a'])").fetchone()[0] == 1.0
    con.close()
    fresh = duckdb.connect(str(path))
    names = {r[0] for r in fresh.execute("SELECT function_name FROM duckdb_functions()").fetchall()}
    assert "micro_f1" not in names, "register() wrote macros into the user's database file"


def test_register_refuses_to_shadow_a_users_function():
    con = duckdb.connect()
    con.execute("CREATE MACRO micro_f1(a, b) AS 42")
    with pytest.raises(mlsql.MlsqlError, match=r"micro_f1.*replace=True.*prefix"):
        mlsql.register(con)
    assert con.execute("SELECT micro_f1(1, 2)").fetchone()[0] == 42


@pytest.mark.long
def test_register_with_prefix_or_schema_installs_beside_the_users_function():
    con = duckdb.connect()
    con.execute("CREATE MACRO micro_f1(a, b) AS 42")
    mlsql.register(con, prefix="ml_")
    mlsql.register(con, schema="mlsql")
    got = con.execute(
        "SELECT micro_f1(1, 2), ml_micro_f1(['a', 'b'], ['a']), mlsql.micro_f1(['a', 'b'], ['a']),"
        " ml_fmeasure(['a'], ['a'], '-beta 2'), mlsql.samples_f1(['a'], ['b'])"
    ).fetchone()
    assert got == (42, pytest.approx(2 / 3), pytest.approx(2 / 3), 1.0, 0.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"prefix": "1_"},
            "The 'prefix' parameter of register must be letters, digits or underscores, "
            "not starting with a digit. Got '1_' instead.",
        ),
        *(
            (
                {"schema": name},
                "The 'schema' parameter of register must not be one of DuckDB's own catalogs "
                "and schemas (temp, system, pg_catalog, information_schema). "
                f"Got {name!r} instead.",
            )
            for name in ("temp", "TEMP", "system", "pg_catalog", "information_schema")
        ),
    ],
)
def test_a_prefix_or_schema_duckdb_cannot_take_is_refused_up_front(kwargs, message):
    con = duckdb.connect()
    with pytest.raises(mlsql.MlsqlError) as raised:
        mlsql.register(con, **kwargs)
    assert str(raised.value) == message
    assert (
        con.execute(
            "SELECT count(*) FROM duckdb_functions() WHERE function_name LIKE '%micro_f1'"
        ).fetchone()[0]
        == 0
    )


@pytest.mark.long
def test_mlsqls_own_comment_copied_onto_a_users_macro_does_not_make_it_mlsqls():
    theirs = mlsql.register(duckdb.connect()).execute(
        "SELECT comment FROM duckdb_functions() WHERE function_name = 'micro_f1'"
    )
    con = duckdb.connect()
    con.execute("CREATE MACRO micro_f1(actual, predicted) AS 'mine'")
    con.execute(f"COMMENT ON MACRO micro_f1 IS {lit(theirs.fetchone()[0])!s}")
    with pytest.raises(
        mlsql.MlsqlError, match=r"defined on this connection: micro_f1\. Pass replace"
    ):
        mlsql.register(con)
    assert con.execute("SELECT micro_f1(1, 2)").fetchone()[0] == "mine"


def test_register_replace_opts_in_and_registering_twice_is_fine():
    con = duckdb.connect()
    con.execute("CREATE MACRO micro_f1(a, b) AS 42")
    mlsql.register(con, replace=True)
    mlsql.register(con)
    assert con.execute("SELECT micro_f1(['a', 'b'], ['a'])").fetchone()[0] == pytest.approx(2 / 3)


def test_persistent_register_writes_into_the_database(tmp_path):
    path = tmp_path / "shared.duckdb"
    config = {"storage_compatibility_version": "latest"}  # typed macros need storage >= 1.4
    mlsql.register(duckdb.connect(str(path), config=config), temporary=False).close()
    assert duckdb.connect(str(path)).execute("SELECT micro_f1(['a'], ['b'])").fetchone()[0] == 0.0
