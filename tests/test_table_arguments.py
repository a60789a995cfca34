"""The arguments of the table functions: one verdict in every engine and in SQL.

``by`` is a column name or a list of them (the SQL table macros took only a list, and
failed on one name with DuckDB's binder error); a ``by`` column named as an output column
is refused (SQL ``label_metrics`` renamed its own ``tp`` column to ``tp_1``, and SQL
``bootstrap`` gave two ``measure`` columns).
"""

from __future__ import annotations

import random
import re
from typing import Any

import duckdb
import pyarrow as pa
import pytest

import mlsql
from tests.test_bootstrap import simulate, table
from tests.test_missing_columns import CASES, TABLE, expected
from tests.test_reliability_inputs import assert_mlsql_error
from tests.test_single_label_tables import run_table
from tests.test_sql_bootstrap import boot, sql_connection

#: Spark's cases are long as a whole (tests/conftest.py reads this): CI's long tests run
#: them; the README's suite, at 10 min 20 s with them, stays under ten minutes
LONG_ENGINES = ("spark",)


@pytest.mark.parametrize("func", CASES)
def test_by_takes_one_name_as_a_list_of_one(engine, func):
    columns = [c for _, c in CASES[func]]
    rows = run_table(engine, func, TABLE, *columns, by="day")
    assert rows == run_table(engine, func, TABLE, *columns, by=["day"])
    assert {r[0] for r in rows} == {1, 2}  # the group column comes first, one group per day


#: (table function, the output column a by column is named as)
CLASHES = [
    ("label_metrics", "tp"),
    ("label_metrics", "label"),
    ("multilabel_report", "n_rows"),
    ("multilabel_report", "macro_f1"),
]


@pytest.mark.parametrize(("func", "name"), CLASHES)
def test_a_by_column_named_as_an_output_column_is_refused(engine, func, name):
    data = TABLE.append_column(name, pa.array([1, 1, 2, 2]))
    message = f"{func}: the by column '{name}' has the name of an output column."
    with pytest.raises(Exception, match=re.escape(message)) as info:
        run_table(engine, func, data, "tags", "guess", by=[name])
    assert_mlsql_error(engine, info.value)


#: (table function, its input columns, the parameter whose message comes first when both
#: beta and zero_division are wrong: the label tables check zero_division first, as
#: DuckDB's SQL macros always did)
BOTH_WRONG = [
    ("label_metrics", ("tags", "guess"), "zero_division"),
    ("multilabel_report", ("tags", "guess"), "zero_division"),
    ("class_metrics", ("cls_a", "cls_p"), "beta"),
]


@pytest.mark.parametrize(("func", "columns", "first"), BOTH_WRONG)
def test_two_wrong_parameters_get_the_same_first_message(engine, func, columns, first):
    message = f"The '{first}' parameter of {func} must be"
    with pytest.raises(Exception, match=re.escape(message)) as info:
        run_table(engine, func, TABLE, *columns, beta=-1.0, zero_division="x")
    assert_mlsql_error(engine, info.value)


@pytest.mark.parametrize(
    ("by", "wrong"),
    [
        (["day", "day"], "names the column 'day' more than once."),
        (3, "must be column names (strings). Got 3 instead."),
    ],
)
@pytest.mark.parametrize("func", CASES)
def test_a_by_that_is_not_distinct_names_is_refused(engine, func, by, wrong):
    """A column twice was two group columns of one name in DuckDB's Python call, a
    DuplicateError in Polars' and one column in SQL; a number was Python's TypeError."""
    columns = [c for _, c in CASES[func]]
    message = f"The 'by' parameter of {func} {wrong}"
    with pytest.raises(Exception, match=re.escape(message)) as info:
        run_table(engine, func, TABLE, *columns, by=by)
    assert_mlsql_error(engine, info.value)


@pytest.mark.parametrize("func", CASES)
def test_no_column_name_is_a_missing_column(engine, func):
    """A NULL name (None) names no column: SQL gave an empty table, as if every row were
    unknown."""
    for i, (role, _) in enumerate(CASES[func]):
        columns: list[Any] = [c for _, c in CASES[func]]
        columns[i] = None
        with pytest.raises(Exception, match=re.escape(expected(func, role, "None"))) as info:
            run_table(engine, func, TABLE, *columns)
        assert_mlsql_error(engine, info.value)


@pytest.mark.parametrize("func", CASES)
def test_a_name_that_is_not_text_is_a_missing_column(engine, func):
    """A number as a column name (or sample_weight) is a column the source lacks, as the
    Python calls say; SQL said DuckDB's Binder Error ("Cannot concatenate lists of types
    INTEGER[] and VARCHAR[]")."""
    for i, (role, _) in enumerate(CASES[func]):
        columns: list[Any] = [c for _, c in CASES[func]]
        columns[i] = 3
        with pytest.raises(Exception, match=re.escape(expected(func, role, "3"))) as info:
            run_table(engine, func, TABLE, *columns)
        assert_mlsql_error(engine, info.value)
    columns = [c for _, c in CASES[func]]
    with pytest.raises(Exception, match=re.escape(expected(func, "sample_weight", "3"))) as info:
        run_table(engine, func, TABLE, *columns, sample_weight=3)
    assert_mlsql_error(engine, info.value)


@pytest.mark.parametrize("func", [f for f in CASES if len(CASES[f]) == 2])
def test_both_input_columns_missing_name_the_first(engine, func):
    """SQL's label tables said "cast_to_type cannot be used to cast to NULL"."""
    role = CASES[func][0][0]
    with pytest.raises(Exception, match=re.escape(expected(func, role, "nope"))) as info:
        run_table(engine, func, TABLE, "nope", "nope2")
    assert_mlsql_error(engine, info.value)


@pytest.fixture(scope="module", params=["plain", "native"])
def con(request: Any) -> Any:
    return sql_connection(request.param)


@pytest.mark.long_cases("plain")
def test_sql_bootstrap_refuses_a_by_column_named_as_an_output_column(con: Any) -> None:
    actual, predicted = simulate(random.Random(3), 6)
    data = table(actual, predicted, measure=[i % 2 for i in range(6)])
    message = "bootstrap: the by column 'measure' has the name of an output column."
    with pytest.raises(mlsql.MlsqlError, match=re.escape(message)):
        mlsql.bootstrap(data, "actual", "predicted", ["micro_f1"], by=["measure"])
    with pytest.raises(duckdb.Error, match=re.escape(message)):
        boot(con, data, ["micro_f1"], by=["measure"], n_resamples=5)


def test_sql_bootstrap_takes_one_by_name(con: Any) -> None:
    actual, predicted = simulate(random.Random(4), 8)
    data = table(actual, predicted, g=[i % 2 for i in range(8)])
    one = boot(con, data, ["micro_f1"], by="g", n_resamples=5)
    assert one == boot(con, data, ["micro_f1"], by=["g"], n_resamples=5)
    assert sorted(r[0] for r in one) == [0, 1]


@pytest.mark.parametrize("func", ["bootstrap", "compare"])
def test_sql_resampling_with_both_label_columns_missing_names_the_first(con: Any, func) -> None:
    """SQL bootstrap and compare said "Macro _mlsql_tp() has multiple overloads"."""
    actual, predicted = simulate(random.Random(5), 4)
    data = table(actual, predicted, model=["a", "b"] * 2, id=[1, 1, 2, 2])
    python = getattr(mlsql, func)
    extra: dict[str, Any] = (
        {"model": "model", "id": "id", "baseline": "a"} if func == "compare" else {}
    )
    with pytest.raises(mlsql.MlsqlError) as info:
        python(data, "nope", "nope2", measures=["micro_f1"], **extra)
    message = f"{func}: the actual column 'nope' is not in the source. Its columns: "
    assert str(info.value).startswith(message)
    con.register("t_missing", data)
    try:
        params = "".join(f", {k} := {v!r}" for k, v in extra.items())
        with pytest.raises(duckdb.Error) as sql_info:
            con.sql(
                f"FROM {func}('t_missing', 'nope', 'nope2', measures := ['micro_f1']{params})"
            ).fetchall()
    finally:
        con.unregister("t_missing")
    assert str(info.value) in str(sql_info.value)


@pytest.mark.parametrize("func", ["label_metrics", "multilabel_report", "macro_f1"])
@pytest.mark.parametrize("role", ["actual", "predicted"])
def test_label_tables_refuse_one_value_where_a_list_belongs(engine, func, role):
    """One message for one mistake: SQL failed binding ("Invalid LIST argument"), DuckDB's
    Python tables said "needs actual to be a list of labels"."""
    columns = {"actual": "tags", "predicted": "guess", role: "cls_a"}
    message = f"{func} takes a list of labels per row for {role}. Got {role} "
    with pytest.raises(Exception, match=re.escape(message)) as info:
        run_table(engine, func, TABLE, columns["actual"], columns["predicted"])
    assert_mlsql_error(engine, info.value)


def test_duckdb_python_label_tables_refuse_one_value_where_a_list_belongs():
    message = "label_metrics takes a list of labels per row for actual. Got actual VARCHAR."
    con = mlsql.connect()
    con.register("t", TABLE)
    with pytest.raises(mlsql.MlsqlError, match=re.escape(message)):
        mlsql.label_metrics(con, "t", "cls_a", "guess")


@pytest.mark.parametrize("name", ["__mlsql_absent", "__MLSQL_ALL", "__mlsql_g"])
@pytest.mark.parametrize("func", ["label_metrics", "confusion_matrix", "roc_curve"])
def test_a_column_named_like_mlsqls_own_is_only_a_column(engine, func, name):
    """SQL label_metrics over a label column named __mlsql_absent gave 0 rows."""
    first = CASES[func][0][1]
    columns = [c for _, c in CASES[func]]
    data = TABLE.append_column(name, TABLE.column(first))
    want = run_table(engine, func, TABLE, *columns)
    assert want
    assert run_table(engine, func, data, name, *columns[1:]) == want
