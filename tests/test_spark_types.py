"""Label types in mlsql.spark: a mismatch is an error naming both types, never a silent cast.

Columns of a DataFrame (``df.actual``) carry their type: mlsql raises its own
MlsqlError when the function is called. Names are resolved by Spark's
analyzer, which (ANSI mode) rejects text against integers in every mlsql
function with an AnalysisException naming both array types.
"""

from __future__ import annotations

import pytest

from tests.engines.spark_engine import session

pytest.importorskip("pyspark")

from pyspark.errors import AnalysisException

import mlsql.spark as ms
from mlsql._registry import measures

LABEL_FUNCTIONS = sorted(
    m.name
    for m in measures()
    if m.family in ("multilabel", "hivemall")
    and m.inputs == ("actual", "predicted")
    and m.available_in("spark")
)
BOTH_TYPES = r"(?s)(array<string>.*array<bigint>|array<bigint>.*array<string>)"


def call(name: str, actual, predicted):
    params = {"n_labels": 3} if name in ("hamming_loss", "true_negatives") else {}
    return ms.FUNCTIONS[name](actual, predicted, **params)


@pytest.fixture(scope="module")
def mixed():
    return session().createDataFrame(
        [(["a"], [1], 1, True, "x")],
        "actual array<string>, predicted array<bigint>, i int, b boolean, s string",
    )


@pytest.mark.parametrize("name", LABEL_FUNCTIONS)
def test_dataframe_columns_raise_mlsql_error_naming_both_types(mixed, name):
    with pytest.raises(ms.MlsqlError, match=BOTH_TYPES):
        call(name, mixed.actual, mixed["predicted"])


@pytest.mark.parametrize("name", LABEL_FUNCTIONS)
def test_names_are_rejected_by_spark_naming_both_types(mixed, name):
    column = call(name, "actual", "predicted")
    with pytest.raises(AnalysisException, match=r"(?i)" + BOTH_TYPES):
        mixed.select(column).collect()  # aggregates in select aggregate the frame


def test_the_check_happens_before_any_query(mixed):
    # the error comes from building the Column: nothing is analysed or run
    with pytest.raises(ms.MlsqlError) as info:
        ms.micro_f1(mixed.actual, mixed.predicted)
    assert str(info.value) == (
        "micro_f1 needs actual and predicted of the same label type (both text, both "
        "integers, ...). Got actual array<string> and predicted array<bigint>."
    )


def test_a_label_column_must_be_an_array(mixed):
    with pytest.raises(ms.MlsqlError, match="takes a list of labels per row for predicted"):
        ms.samples_f1(mixed.actual, mixed.s)


def test_counts_must_be_a_counts_struct(mixed):
    with pytest.raises(ms.MlsqlError, match=r"takes the struct multilabel_counts returns"):
        ms.micro_f1_from_counts(mixed.actual)
    with pytest.raises(ms.MlsqlError, match=r"takes the struct multilabel_counts returns"):
        ms.merge_counts(mixed.i)


def test_fmeasure_needs_one_kind_on_both_sides(mixed):
    with pytest.raises(ms.MlsqlError, match=r"Got actual array<string> and predicted int"):
        ms.fmeasure(mixed.actual, mixed.i)
    with pytest.raises(ms.MlsqlError, match=r"Got actual int and predicted boolean"):
        ms.fmeasure(mixed.i, mixed.b)
    with pytest.raises(ms.MlsqlError, match=BOTH_TYPES):
        ms.fmeasure(mixed.actual, mixed.predicted)


def test_fmeasure_reads_names_as_label_arrays(mixed):
    # binary labels need df.x Columns: by name, Spark rejects an int column as a label array
    with pytest.raises(AnalysisException, match=r"(?i)array"):
        mixed.agg(ms.fmeasure("i", "i")).collect()
    assert mixed.agg(ms.fmeasure(mixed.i, mixed.i)).first()[0] == 1.0


def test_text_labels_are_never_cast_to_numbers():
    # under ANSI mode Spark would cast '1' to 1 in a CASE; mlsql's set functions never do
    df = session().createDataFrame([(["1"], [1])], "actual array<string>, predicted array<int>")
    with pytest.raises(AnalysisException):
        df.select(ms.true_positives("actual", "predicted")).collect()


SINGLE_LABEL = sorted(
    m.name
    for m in measures()
    if m.family == "single_label"
    and m.kind == "aggregate"
    and m.inputs == ("actual", "predicted")
    and m.available_in("spark")
)
REQUIRED = {"class_error_rate": {"label": "1"}, "cost_error": {"costs": {"1": {"2": 2.0}}}}


@pytest.mark.parametrize("name", SINGLE_LABEL)
def test_single_label_names_of_two_kinds_are_rejected_by_spark(name):
    # '1' against 1 would compare after a silent cast under ANSI mode; the analyzer refuses it
    df = session().createDataFrame([("1", 1)], "actual string, predicted int")
    column = ms.FUNCTIONS[name]("actual", "predicted", **REQUIRED.get(name, {}))
    with pytest.raises(AnalysisException, match=r"(?i)array<string>.*array<int>"):
        df.agg(column).collect()
    with pytest.raises(ms.MlsqlError, match=r"Got actual string and predicted int"):
        ms.FUNCTIONS[name](df.actual, df.predicted, **REQUIRED.get(name, {}))


def _cost_error_size(labels: list[int]) -> int:
    """Characters of cost_error's expression whose costs name ``labels`` (each its own cell,
    at its default cost: every label checked against the column's kind, no cost term)."""
    df = session().createDataFrame([(1, 2)], "actual int, predicted int")
    costs = {x: {x: 0.0} for x in labels}
    return len(str(ms.cost_error(df.actual, df.predicted, costs=costs)))


def test_each_cost_label_adds_its_kind_check_once():
    """A label's check reads the column's type, not the type of the other labels' checks: each
    label adds the same expression. Read through the checks, each read of the type copied
    them, a tree exponential in the labels that Spark's analyzer walked path by path (25 s of
    analysis for three labels on 40 rows)."""
    one, two, three = (_cost_error_size(list(range(1, k + 1))) for k in (1, 2, 3))
    assert three - two == two - one
