"""Every error path of the foundation, on every engine: clear words, what is allowed."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.engines import label_table

ROWS = [(["a", "b"], ["a"]), (["c"], [])]


@pytest.mark.parametrize("beta", [0, -1, float("inf"), float("nan")])
def test_beta_must_be_finite_and_positive(engine, beta):
    with pytest.raises(
        Exception, match=r"'beta' parameter of micro_fbeta must be a finite number > 0"
    ):
        engine.aggregate("micro_fbeta", label_table(ROWS), beta=beta)


@pytest.mark.parametrize("zd", [2, "warn", -1, 0.5])
def test_unknown_zero_division_lists_the_allowed_values(engine, zd):
    with pytest.raises(
        Exception,
        match=r"'zero_division' parameter of samples_f1 must be one of 0, 1, nan, 'diagnose', 'ignore'",
    ):
        engine.aggregate("samples_f1", label_table(ROWS), zero_division=zd)


def test_zero_division_is_checked_even_when_no_ratio_is_undefined(engine):
    with pytest.raises(Exception, match="zero_division"):
        engine.aggregate("micro_f1", label_table([(["a"], ["a"])]), zero_division="bogus")


@pytest.mark.parametrize("measure", ["fmeasure", "micro_f1", "samples_jaccard"])
def test_label_type_mismatch_names_both_types(engine, measure):
    table = pa.table(
        {
            "actual": pa.array([["a"]], pa.list_(pa.string())),
            "predicted": pa.array([[1]], pa.list_(pa.int64())),
        }
    )
    with pytest.raises(
        Exception,
        match=r"(?is)(varchar|string|str).*(int|bigint)|(int|bigint).*(varchar|string|str)",
    ):
        engine.aggregate(measure, table)


def test_integer_widths_may_differ(engine):
    table = pa.table(
        {
            "actual": pa.array([[1, 2]], pa.list_(pa.int32())),
            "predicted": pa.array([[2]], pa.list_(pa.int64())),
        }
    )
    assert engine.aggregate("micro_f1", table) == pytest.approx(2 / 3, rel=1e-12)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("-average macro", '"-average macro" is not supported'),
        (
            "-average binary",
            '"-average binary" is not supported when actual and predicted are arrays',
        ),
        ("-average weighted", "must be one of micro, binary"),
        ("-beta 0", "'beta' parameter of fmeasure must be a finite number > 0"),
        ("-beta -2", "'beta' parameter of fmeasure must be a finite number > 0"),
        ("-gamma 1", "fmeasure options must look like Hivemall's"),
        # the blanks are ASCII's, and beta is an ASCII decimal, in every engine (Polars and
        # Spark took Unicode spaces, other scripts' digits and 1_0; DuckDB and PostgreSQL
        # refused them; PostgreSQL alone took a vertical tab)
        ("-beta\xa02", "fmeasure options must look like Hivemall's"),
        ("-beta\u20032", "fmeasure options must look like Hivemall's"),
        ("-beta\v2", "fmeasure options must look like Hivemall's"),
        ("-beta \u0663", "'beta' parameter of fmeasure must be a finite number > 0"),
        ("-beta 1_0", "'beta' parameter of fmeasure must be a finite number > 0"),
    ],
)
def test_hivemall_option_errors(engine, options, message):
    with pytest.raises(Exception, match=message.replace("(", r"\(").replace(")", r"\)")):
        engine.aggregate("fmeasure", label_table(ROWS), options=options)


def test_hivemall_int_labels_must_be_1_0_or_minus_1(engine):
    table = pa.table({"actual": pa.array([1, 2]), "predicted": pa.array([1, 0])})
    with pytest.raises(Exception, match="fmeasure takes int labels 1, 0 or -1"):
        engine.aggregate("fmeasure", table)


def test_hamming_loss_needs_a_positive_whole_number_of_labels(engine):
    with pytest.raises(
        Exception, match="'n_labels' parameter of hamming_loss must be a whole number > 0"
    ):
        engine.aggregate("hamming_loss", label_table(ROWS), n_labels=0)
