"""A column a table function is told to read but the source lacks: one error, every engine.

DuckDB's table macros selected columns with ``COLUMNS(lambda ...)``: a ``by`` column that
matched nothing was silently left out (one group instead of one per value), and a missing
actual, predicted, score or weight column was DuckDB's binder error. Now every engine says
which column is missing and which columns the source has, in the same words; a hostile
name is only a name.
"""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa
import pytest

from tests.test_reliability_inputs import assert_mlsql_error
from tests.test_single_label_tables import run_table

#: Spark's cases are long as a whole (tests/conftest.py reads this): CI's long tests run
#: them; the README's suite, at 10 min 20 s with them, stays under ten minutes
LONG_ENGINES = ("spark",)

#: table function -> its input columns of ``TABLE``, as (role, column) in parameter order
CASES: dict[str, tuple[tuple[str, str], ...]] = {
    "label_metrics": (("actual", "tags"), ("predicted", "guess")),
    "multilabel_report": (("actual", "tags"), ("predicted", "guess")),
    "confusion_matrix": (("actual", "cls_a"), ("predicted", "cls_p")),
    "class_metrics": (("actual", "cls_a"), ("predicted", "cls_p")),
    "class_distribution": (("label", "cls_a"),),
    "roc_curve": (("actual", "y"), ("score", "s")),
    "precision_recall_curve": (("actual", "y"), ("score", "s")),
    "calibration_table": (("actual", "y"), ("prob", "s")),
    "label_thresholds": (("actual", "tags"), ("scores", "scores")),
}

TABLE = pa.table(
    {
        "tags": pa.array([["a", "b"], ["b"], [], ["a"]], pa.list_(pa.string())),
        "guess": pa.array([["a"], ["b", "c"], ["c"], []], pa.list_(pa.string())),
        "cls_a": ["x", "y", "x", "y"],
        "cls_p": ["x", "x", "y", "y"],
        "y": [1, 0, 1, 0],
        "s": [0.9, 0.4, 0.35, 0.1],
        "scores": pa.array(
            [[("a", 0.9), ("b", 0.2)], [("b", 0.7)], [("c", 0.1)], [("a", 0.5)]],
            pa.map_(pa.string(), pa.float64()),
        ),
        "w": [1.0, 2.0, 0.5, 1.5],
        "day": [1, 1, 2, 2],
    }
)
#: the message for this table, written out once (the other cases fill in the same words)
COLUMNS = "tags, guess, cls_a, cls_p, y, s, scores, w, day"
HOSTILE = "x'); DROP TABLE t; --\""


def expected(func: str, role: str, name: str) -> str:
    return f"{func}: the {role} column '{name}' is not in the source. Its columns: {COLUMNS}."


def _raises(engine: Any, func: str, message: str, *columns: str, **params: Any) -> None:
    with pytest.raises(Exception, match=re.escape(message)) as info:
        run_table(engine, func, TABLE, *columns, **params)
    assert_mlsql_error(engine, info.value)


def test_the_message_in_full(engine):
    message = (
        "roc_curve: the by column 'nope' is not in the source. Its columns: tags, guess, "
        "cls_a, cls_p, y, s, scores, w, day."
    )
    _raises(engine, "roc_curve", message, "y", "s", by=["nope"])


@pytest.mark.parametrize("func", CASES)
def test_a_by_column_that_is_not_there_is_refused(engine, func):
    columns = [c for _, c in CASES[func]]
    assert run_table(engine, func, TABLE, *columns, by=["day"])  # the columns work
    _raises(engine, func, expected(func, "by", "nope"), *columns, by=["day", "nope"])


@pytest.mark.parametrize("func", CASES)
def test_an_input_column_that_is_not_there_is_refused(engine, func):
    for i, (role, _) in enumerate(CASES[func]):
        columns = [c for _, c in CASES[func]]
        columns[i] = "nope"
        _raises(engine, func, expected(func, role, "nope"), *columns)


@pytest.mark.parametrize("func", CASES)
def test_a_weight_column_that_is_not_there_is_refused(engine, func):
    columns = [c for _, c in CASES[func]]
    assert run_table(engine, func, TABLE, *columns, sample_weight="w")
    _raises(engine, func, expected(func, "sample_weight", "nope"), *columns, sample_weight="nope")


@pytest.mark.parametrize("func", ["label_metrics", "confusion_matrix", "roc_curve"])
def test_a_hostile_column_name_is_only_a_name(engine, func):
    columns = [c for _, c in CASES[func]]
    _raises(engine, func, expected(func, "by", HOSTILE), *columns, by=[HOSTILE])
    role = CASES[func][0][0]
    _raises(engine, func, expected(func, role, HOSTILE), HOSTILE, *columns[1:])
    assert run_table(engine, func, TABLE, *columns)  # the table is still there


def test_a_hostile_name_that_is_a_column_is_read(engine):
    """A column whose name holds quotes and a semicolon groups like any other."""
    table = TABLE.append_column(HOSTILE, pa.array(["p", "q", "p", "q"]))
    rows = run_table(engine, "class_distribution", table, "cls_a", by=[HOSTILE])
    assert sorted(rows) == [("p", "x", 2, 1.0), ("q", "y", 2, 1.0)]


def test_the_standalone_measures_refuse_a_missing_by_column(engine):
    """macro_f1 and its kin read multilabel_report's column, and name themselves."""
    message = expected("macro_f1", "by", "nope")
    _raises(engine, "macro_f1", message, "tags", "guess", by=["nope"])
