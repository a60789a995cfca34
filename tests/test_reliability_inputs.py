"""Reliability of inputs (issue 17, items 5-9 and 11): one verdict and one number in every engine.

Every case runs on DuckDB, Polars and Spark through the ``engine`` fixture.
Expected numbers are exact fractions of the float inputs (``fractions.Fraction``,
``math.fsum``), never the code under test.
"""

from __future__ import annotations

import math
import random
import re
from decimal import Decimal, localcontext
from fractions import Fraction

import pyarrow as pa
import pytest

from mlsql import MlsqlError
from mlsql._registry import Measure, measures
from tests.engines import label_table

#: the Spark cases of this file run with the long tests (tests/conftest.py): one Spark
#: query per measure and case, 67 test-seconds of the README suite
LONG_ENGINES = ("spark",)

# ------------------------------------------------------------------ 17.9 F-beta, huge and tiny beta
#: tp = 1, fp = 1, fn = 2 pooled over the rows
FBETA_ROWS = [(["a", "b", "c"], ["a", "d"]), ([], [])]
BETAS = [1e200, 1.5e154, 1.3e154, 1e20, 3.0, 0.5, 1e-20, 1e-160, 1e-300]


def exact_fbeta(beta: float, tp: int, fp: int, fn: int) -> float:
    """(1 + b²) tp / ((1 + b²) tp + b² fn + fp) in exact arithmetic, rounded once."""
    b2 = Fraction(beta) ** 2
    return float((1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp))


def exact_fbeta_of_means(beta: float, p: Fraction, r: Fraction) -> float:
    b2 = Fraction(beta) ** 2
    return float((1 + b2) * p * r / (b2 * p + r))


@pytest.mark.parametrize("beta", BETAS)
def test_micro_fbeta_huge_and_tiny_beta_are_exact(engine, beta):
    got = engine.aggregate("micro_fbeta", label_table(FBETA_ROWS), beta=beta)
    assert got == pytest.approx(exact_fbeta(beta, 1, 1, 2), rel=1e-12)


@pytest.mark.parametrize("beta", [1e200, 1.5e154, 1e-200])
def test_samples_fbeta_huge_and_tiny_beta_are_exact(engine, beta):
    rows = [(["a", "b", "c"], ["a", "d"]), (["x"], ["x", "y", "z"])]
    got = engine.aggregate("samples_fbeta", label_table(rows), beta=beta)
    want = (Fraction(exact_fbeta(beta, 1, 1, 2)) + Fraction(exact_fbeta(beta, 1, 2, 0))) / 2
    assert got == pytest.approx(float(want), rel=1e-12)


@pytest.mark.parametrize("beta", [1e200, 1.5e154, 1e-200])
def test_report_fbeta_columns_huge_and_tiny_beta_are_exact(engine, beta):
    out = engine.table_function("multilabel_report", label_table(FBETA_ROWS), beta=beta)
    row = out.to_pylist()[0]
    assert row["micro_fbeta"] == pytest.approx(exact_fbeta(beta, 1, 1, 2), rel=1e-12)
    # labels a (tp 1), b, c (fn 1 each), d (fp 1): macro P = 1/4 (a 1, d 0, b and c undefined: 0)
    p, r = Fraction(1, 4), Fraction(1, 4)  # macro R: a 1, b 0, c 0, d undefined (0)
    assert row["macro_fbeta_of_means"] == pytest.approx(exact_fbeta_of_means(beta, p, r), rel=1e-12)


# ------------------------------------------------------------------ 17.5 which element types are labels
NOT_A_LABEL = r"takes labels that are text or integers \(any width, signed or unsigned\); floats, decimals, booleans, lists and structs are not labels\. Got actual "
#: element types that are no labels, with a value of that type
NOT_LABELS = {
    "float64": (pa.float64(), 1.0),
    "float32": (pa.float32(), 1.0),
    "decimal": (pa.decimal128(5, 1), Decimal("1.0")),
    "boolean": (pa.bool_(), True),
    "nested list": (pa.list_(pa.int64()), [1]),
    "struct": (pa.struct([("a", pa.int64())]), {"a": 1}),
}
UNSIGNED = [pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]


def typed_table(element: pa.DataType, value: object) -> pa.Table:
    return pa.table(
        {
            "actual": pa.array([[value]], pa.list_(element)),
            "predicted": pa.array([[value]], pa.list_(element)),
        }
    )


@pytest.mark.parametrize("measure", ["micro_f1", "samples_jaccard", "multilabel_counts"])
@pytest.mark.parametrize("name", list(NOT_LABELS))
def test_aggregates_refuse_elements_that_are_no_labels(engine, measure, name):
    element, value = NOT_LABELS[name]
    with pytest.raises(Exception, match=measure + " " + NOT_A_LABEL) as info:
        engine.aggregate(measure, typed_table(element, value))
    assert_mlsql_error(engine, info.value)


@pytest.mark.parametrize("name", list(NOT_LABELS))
def test_per_row_functions_refuse_elements_that_are_no_labels(engine, name):
    element, value = NOT_LABELS[name]
    with pytest.raises(Exception, match="set_jaccard " + NOT_A_LABEL) as info:
        engine.per_row("set_jaccard", typed_table(element, value))
    assert_mlsql_error(engine, info.value)


@pytest.mark.parametrize("func", ["multilabel_report", "label_metrics"])
@pytest.mark.parametrize("name", list(NOT_LABELS))
def test_label_tables_refuse_elements_that_are_no_labels(engine, func, name):
    element, value = NOT_LABELS[name]
    with pytest.raises(Exception, match=func + " " + NOT_A_LABEL) as info:
        engine.table_function(func, typed_table(element, value))
    assert_mlsql_error(engine, info.value)


#: one value per row where a list of labels belongs: text, an integer
NOT_LISTS = {"text": (pa.string(), "a"), "integer": (pa.int64(), 1)}


@pytest.mark.parametrize("measure", ["micro_f1", "samples_jaccard", "multilabel_counts"])
@pytest.mark.parametrize("name", list(NOT_LISTS))
def test_aggregates_refuse_one_value_where_a_list_belongs(engine, measure, name):
    """One message for one mistake in every engine (DuckDB said the values were no labels)."""
    element, value = NOT_LISTS[name]
    table = pa.table(
        {"actual": pa.array([value], element), "predicted": pa.array([[value]], pa.list_(element))}
    )
    expected = rf"{measure} takes a list of labels per row for actual\. Got actual \w+"
    with pytest.raises(Exception, match=expected) as info:
        engine.aggregate(measure, table)
    assert_mlsql_error(engine, info.value)


@pytest.mark.parametrize("name", ["float64", "nested list"])
def test_columns_given_by_name_refuse_elements_that_are_no_labels(engine, name):
    """DuckDB and Polars always take names; Spark checks a name's type when the query runs."""
    element, value = NOT_LABELS[name]
    table = typed_table(element, value)
    with pytest.raises(Exception, match="micro_f1 " + NOT_A_LABEL):
        if engine.name == "spark":
            from tests.engines.spark_engine import frame

            frame(table).agg(engine.function("micro_f1")("actual", "predicted")).first()
        else:
            engine.aggregate("micro_f1", table)


def unsigned_or_skip(engine, element: pa.DataType) -> None:
    if engine.name == "spark" and pa.types.is_unsigned_integer(element):
        pytest.skip("Spark has no unsigned integer types")


@pytest.mark.parametrize("element", [pa.int8(), pa.int16(), *UNSIGNED], ids=str)
def test_integers_of_any_width_are_labels(engine, element):
    unsigned_or_skip(engine, element)
    big = 2**64 - 1 if element == pa.uint64() else 100
    table = pa.table(
        {
            "actual": pa.array([[1, 2, big]], pa.list_(element)),
            "predicted": pa.array([[2, big]], pa.list_(pa.int64() if big == 100 else element)),
        }
    )
    assert engine.aggregate("micro_f1", table) == pytest.approx(0.8, rel=1e-12)
    report = engine.table_function("multilabel_report", table).to_pylist()[0]
    assert report["micro_f1"] == pytest.approx(0.8, rel=1e-12)
    assert report["n_labels"] == 3


# ------------------------------------------------------------------ 17.6 the labels= universe's kind
TEXT_ROWS = [(["a"], ["a", "b"])]
INT_ROWS = [([1], [1, 2])]


@pytest.mark.parametrize("func", ["multilabel_report", "label_metrics", "macro_f1"])
@pytest.mark.parametrize(
    ("rows", "labels", "shown"),
    [(TEXT_ROWS, [1, 2], "text"), (INT_ROWS, ["1", "2"], "integer")],
    ids=["ints-vs-text", "text-vs-ints"],
)
def test_universe_of_the_other_kind_is_an_error(engine, func, rows, labels, shown):
    # macro_f1 and its kin are multilabel_report's columns: its checks may name it
    message = (
        rf"The 'labels' parameter of ({func}|multilabel_report) must hold labels of the columns' type \(.*\): "
        rf"{shown}\. Got \[{labels[0]!r}, {labels[1]!r}\] instead\."
    )
    with pytest.raises(Exception, match=message) as info:
        engine.table_function(func, label_table(rows), labels=labels)
    assert_mlsql_error(engine, info.value)


#: (actual element type, predicted element type, a label their common type holds, one it
#: does not, the common type's range): lists of two widths are matched as their common type,
#: which the engines choose (DuckDB and Polars the wider, Spark a 64-bit one)
RANGES = [
    (pa.int8(), pa.int8(), 127, 1000, ("-128", "127")),
    (pa.int8(), pa.int16(), 1000, -(10**25), (r"-\d+", r"\d+")),
    (pa.int16(), pa.int16(), 2, 10**25, ("-32768", "32767")),
]


@pytest.mark.parametrize("func", ["label_metrics", "multilabel_report", "macro_f1"])
@pytest.mark.parametrize(("left", "right", "fits", "outside", "bounds"), RANGES, ids=str)
def test_universe_integer_the_label_type_cannot_hold_is_an_error(
    engine, func, left, right, fits, outside, bounds
):
    """An integer out of the labels' range was the engine's own cast error (DuckDB's
    ConversionException, Polars' TypeError); now one message names the value and the type."""
    table = pa.table(
        {
            "actual": pa.array([[1, 2]], pa.list_(left)),
            "predicted": pa.array([[2]], pa.list_(right)),
        }
    )
    engine.table_function(func, table, labels=[1, fits])  # a label the type holds is fine
    message = (
        rf"The 'labels' parameter of ({func}|multilabel_report) holds {outside}, which the "
        rf"columns' label type \(.*\) cannot hold: it holds integers from {bounds[0]} to "
        rf"{bounds[1]}\."
    )
    with pytest.raises(Exception, match=message) as info:
        engine.table_function(func, table, labels=[1, outside])
    assert_mlsql_error(engine, info.value)


@pytest.mark.parametrize(
    ("rows", "labels"), [(TEXT_ROWS, ["b", "z"]), (INT_ROWS, [2, 9])], ids=["text", "ints"]
)
def test_universe_of_the_same_kind_is_used(engine, rows, labels):
    out = engine.table_function("label_metrics", label_table(rows), labels=labels).to_pylist()
    assert [(r["label"], r["tp"], r["fp"], r["fn"]) for r in out] == [
        (labels[0], 0, 1, 0),
        (labels[1], 0, 0, 0),
    ]


def assert_mlsql_error(engine, error: BaseException, *, when_read: bool = False) -> None:
    """Polars and Spark raise MlsqlError for what the types show; DuckDB's SQL raises its own
    error with mlsql's words, and so does Spark for what the values show (``when_read``: its
    ``raise_error`` runs in the query)."""
    if engine.name == "polars" or (engine.name == "spark" and not when_read):
        assert isinstance(error, MlsqlError), type(error)


# ------------------------------------------------------------------ 17.8 n_labels below a row's labels
TOO_SMALL = (
    r"The 'n_labels' parameter of {func} must be at least the number of distinct labels in "
    r"each row's actual and predicted lists together \(the size of the label universe\)\. "
    r"Got {n}, fewer than a row holds\."
)


@pytest.mark.parametrize(
    "rows",
    [
        [(["a", "b"], ["c", "d"])],  # the case: 4 labels in a row, n_labels 1 gave 4.0
        [(["a", "b"], ["c", "d"]), ([], []), ([], []), ([], [])],  # loss 1.0 overall, still wrong
        [(["a"], ["a"]), (["a", "b"], ["a"])],  # only the second row has more than 1
    ],
)
def test_hamming_loss_n_labels_below_a_rows_labels_is_an_error(engine, rows):
    with pytest.raises(Exception, match=TOO_SMALL.format(func="hamming_loss", n=1)) as info:
        engine.aggregate("hamming_loss", label_table(rows), n_labels=1)
    assert_mlsql_error(engine, info.value, when_read=True)


def test_hamming_loss_n_labels_equal_to_a_rows_labels_is_defined(engine):
    rows = [(["a", "b"], ["c", "d"]), (["a"], ["a"])]
    got = engine.aggregate("hamming_loss", label_table(rows), n_labels=4)
    assert got == pytest.approx(4 / 8, rel=1e-12)


def test_hamming_loss_from_counts_above_one_is_an_error(engine):
    table = label_table([(["a", "b"], ["c", "d"])], groups=[1])
    func = "hamming_loss_from_counts"
    with pytest.raises(Exception, match=TOO_SMALL.format(func=func, n=1)) as info:
        engine.from_stored_counts(func, table, n_labels=1)
    assert_mlsql_error(engine, info.value, when_read=True)
    assert engine.from_stored_counts(func, table, n_labels=8) == pytest.approx(0.5, rel=1e-12)


# ------------------------------------------------------------------ 17.7 NaN and infinite numbers
def _numeric_measures(family: str) -> list[Measure]:
    return [m for m in measures(family=family) if m.build is not None]


REGRESSION = _numeric_measures("regression")
SCORES = _numeric_measures("scores")
#: the score-family input that holds the score (the other holds the 0/1 label)
SCORE_INPUT = {"actual": False, "predicted": True, "label": False, "score": True, "prob": True}
NOT_FINITE_VALUES = {"NaN": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def not_finite_message(func: str, name: str, got: str) -> str:
    return (
        rf"{func} takes finite numbers for {name}: NaN and infinite values are errors "
        rf"\(as in scikit-learn\)\. Got {re.escape(got)}\."
    )


def numbers_table(columns: dict[str, list[object]]) -> pa.Table:
    return pa.table({k: pa.array(v, pa.float64()) for k, v in columns.items()})


@pytest.mark.parametrize("got", list(NOT_FINITE_VALUES))
@pytest.mark.parametrize("m", REGRESSION, ids=lambda m: m.name)
def test_regression_refuses_nan_and_infinite_values(engine, m, got):
    bad = m.inputs[len(m.name) % 2]  # either side, by the measure
    columns = {name: [1.0, 2.0, 4.0] for name in m.inputs}
    columns[bad] = [1.0, NOT_FINITE_VALUES[got], 3.0]
    with pytest.raises(Exception, match=not_finite_message(m.name, bad, got)) as info:
        engine.aggregate(m.name, numbers_table(columns), columns=m.inputs)
    assert_mlsql_error(engine, info.value, when_read=True)


@pytest.mark.parametrize("got", list(NOT_FINITE_VALUES))
@pytest.mark.parametrize("m", SCORES, ids=lambda m: m.name)
def test_scores_refuse_nan_and_infinite_scores(engine, m, got):
    score = next(n for n in m.inputs if SCORE_INPUT[n])
    columns = {n: [1.0, 0.0, 1.0, 0.0] for n in m.inputs}  # labels as exact 0/1 floats
    columns[score] = [NOT_FINITE_VALUES[got], 0.1, 0.9, 0.2]  # the AUC case with NaN
    with pytest.raises(Exception, match=not_finite_message(m.name, score, got)) as info:
        engine.aggregate(m.name, numbers_table(columns), columns=m.inputs)
    assert_mlsql_error(engine, info.value, when_read=True)


def test_values_of_rows_with_a_null_side_are_not_checked(engine):
    table = numbers_table({"actual": [1.0, None, 3.0], "predicted": [1.5, float("nan"), 3.0]})
    assert engine.aggregate("mae", table) == pytest.approx(0.25, rel=1e-12)
    table = numbers_table({"actual": [1.0, None, 0.0], "predicted": [0.8, float("nan"), 0.4]})
    assert engine.aggregate("auc", table) == pytest.approx(1.0, rel=1e-12)


def test_float_labels_exactly_0_and_1_are_accepted_by_logloss_and_auc(engine):
    labels, probs = [1.0, 0.0, 1.0, 0.0], [0.9, 0.1, 0.4, 0.6]
    table = numbers_table({"actual": labels, "predicted": probs})
    want = math.fsum(-math.log(p if y else 1 - p) for y, p in zip(labels, probs, strict=True)) / 4
    assert engine.aggregate("logloss", table) == pytest.approx(want, rel=1e-12)
    assert engine.aggregate("auc", table) == pytest.approx(0.75, rel=1e-12)


@pytest.mark.parametrize("measure", ["logloss", "auc"])
def test_float_labels_other_than_0_and_1_are_an_error(engine, measure):
    table = numbers_table({"actual": [1.0, 0.5], "predicted": [0.9, 0.1]})
    with pytest.raises(Exception, match=rf"{measure} takes .* values\. Got 0\.5 instead\."):
        engine.aggregate(measure, table)


# ------------------------------------------------------------------ 17.11 precision far from zero
def offset_data(offset: float, n: int = 20_000, seed: int = 17) -> tuple[list[float], list[float]]:
    """y = offset + N(0, 1), ŷ = y + N(0, 0.5): large values next to their spread."""
    rng = random.Random(seed)
    y = [offset + rng.gauss(0, 1) for _ in range(n)]
    return y, [v + rng.gauss(0, 0.5) for v in y]


def exact_moments(y: list[float], p: list[float]) -> tuple[Fraction, Fraction, Fraction, Fraction]:
    """Σ(y - ȳ)², Σ(ŷ - ŷ̄)², Σ(y - ȳ)(ŷ - ŷ̄) and Σ(y - ŷ)² of the float inputs, exactly."""
    ys, ps = [Fraction(v) for v in y], [Fraction(v) for v in p]
    my, mp = sum(ys) / len(ys), sum(ps) / len(ps)
    dy, dp = [v - my for v in ys], [v - mp for v in ps]
    return (
        sum(d * d for d in dy),
        sum(d * d for d in dp),
        sum(a * b for a, b in zip(dy, dp, strict=True)),
        sum((a - b) ** 2 for a, b in zip(ys, ps, strict=True)),
    )


def sqrt_ratio(num: Fraction, den: Fraction) -> float:
    """num / sqrt(den) to far more than double precision."""
    with localcontext() as ctx:
        ctx.prec = 60
        value = Decimal(num.numerator) / Decimal(num.denominator)
        return float(value / (Decimal(den.numerator) / Decimal(den.denominator)).sqrt())


@pytest.mark.parametrize("offset", [1e9, 1e12])
def test_r2_and_pearson_far_from_zero_are_exact_to_1e_12(engine, offset):
    y, p = offset_data(offset)
    syy, spp, syp, sse = exact_moments(y, p)
    table = numbers_table({"actual": y, "predicted": p})
    assert engine.aggregate("r2", table) == pytest.approx(float(1 - sse / syy), rel=1e-12)
    want = sqrt_ratio(syp, syy * spp)
    assert engine.aggregate("pearson_corr", table) == pytest.approx(want, rel=1e-12)
    assert engine.aggregate("rse", table) == pytest.approx(float(sse / syy), rel=1e-12)


# ------------------------------------------------------------------ one label of the wrong kind
#: (measure, its input columns, the one-label parameter)
ONE_LABEL = [
    ("class_error_rate", ("actual", "predicted"), "label"),
    ("prevalence", ("actual",), "positive"),
]


@pytest.mark.parametrize(("measure", "columns", "param"), ONE_LABEL, ids=lambda v: str(v))
@pytest.mark.parametrize(
    ("element", "good", "bad", "kind"),
    [(pa.int8(), 2, "z", "integer"), (pa.string(), "b", 3, "text")],
    ids=["text-for-ints", "int-for-text"],
)
def test_one_label_of_the_other_kind_is_an_error(
    engine, measure, columns, param, element, good, bad, kind
):
    """A ``label``/``positive`` the column cannot hold was the engine's cast error (DuckDB's
    ConversionException, Polars' ComputeError, Spark's CAST_INVALID_INPUT)."""
    one, two = (1, 2) if element == pa.int8() else ("a", "b")
    table = pa.table(
        {
            "actual": pa.array([one, two, two, one], element),
            "predicted": pa.array([one, one, two, two], element),
        }
    )
    # half the rows hold the label; class_error_rate: 1 of its 2 rows missed
    assert engine.aggregate(measure, table, columns=columns, **{param: good}) == 0.5
    message = (
        rf"The '{param}' parameter of {measure} must be a label of the column's type \(.*\): "
        rf"{kind}\. Got {re.escape(repr(bad))} instead\."
    )
    with pytest.raises(Exception, match=message) as info:
        engine.aggregate(measure, table, columns=columns, **{param: bad})
    assert_mlsql_error(engine, info.value, when_read=True)


@pytest.mark.parametrize(("measure", "columns", "param"), ONE_LABEL, ids=lambda v: str(v))
@pytest.mark.parametrize(
    ("element", "bad", "low", "high"),
    [
        (pa.int8(), 1000, -128, 127),
        (pa.int8(), -129, -128, 127),
        (pa.int16(), 40000, -32768, 32767),
    ],
    ids=["int8-1000", "int8-minus-129", "int16-40000"],
)
def test_one_label_out_of_the_columns_range_is_an_error(
    engine, measure, columns, param, element, bad, low, high
):
    """A ``label``/``positive`` the integer type cannot hold gave 0.0 (no row equals it), where
    ``labels=`` says the value is out of range: the same error here, naming value, type, range."""
    table = pa.table(
        {
            "actual": pa.array([1, 2, 2, 1], element),
            "predicted": pa.array([1, 1, 2, 2], element),
        }
    )
    # the largest value the type holds is a label no row holds (zero_division's 0 for FNR)
    assert engine.aggregate(measure, table, columns=columns, **{param: high}) == 0.0
    message = (
        rf"The '{param}' parameter of {measure} is {bad}, which the column's label type "
        rf"\(.*\) cannot hold: it holds integers from {low} to {high}\."
    )
    with pytest.raises(Exception, match=message) as info:
        engine.aggregate(measure, table, columns=columns, **{param: bad})
    assert_mlsql_error(engine, info.value, when_read=True)


# ------------------------------------------------------------------ a universe of the other kind
@pytest.mark.parametrize(
    ("element", "lists", "good", "bad", "message"),
    [
        (
            pa.int32(),
            [[1, 2], [3], None],
            ([1, 3], [[1, 0], [0, 1], None]),
            ["z"],
            r"must hold labels of the columns' type \(.*\): integer\. Got \['z'\] instead\.",
        ),
        (
            pa.string(),
            [["a"], [], None],
            (["a", "b"], [[1, 0], [0, 0], None]),
            [1],
            r"must hold labels of the columns' type \(.*\): text\. Got \[1\] instead\.",
        ),
        (
            pa.int8(),
            [[1, 2], [3], None],
            ([127, 1], [[0, 1], [0, 0], None]),
            [2, 1000],
            r"holds 1000, which the columns' label type \(.*\) cannot hold: it holds integers "
            r"from -128 to 127\.",
        ),
    ],
    ids=["text-for-ints", "int-for-text", "out-of-int8"],
)
def test_indicators_of_a_universe_of_the_other_kind_is_an_error(
    engine, element, lists, good, bad, message
):
    """indicators_from_labels with labels the lists cannot hold was the engine's raw error
    (DuckDB's binder, Polars' InvalidOperationError, Spark's analysis), or no match at all."""
    table = pa.table({"actual": pa.array(lists, pa.list_(element))})
    universe, want = good
    assert engine.indicators_from_lists(table, "actual", universe) == want
    with pytest.raises(
        Exception, match=r"The 'labels' parameter of indicators_from_labels " + message
    ) as info:
        engine.indicators_from_lists(table, "actual", bad)
    assert_mlsql_error(engine, info.value, when_read=True)


# ------------------------------------------------------------------ costs of the other kind
def _costs(engine, costs: dict) -> object:
    """``costs`` as the engine takes it: a dict, or in DuckDB a MAP literal."""
    if engine.name != "duckdb":
        return costs
    from mlsql._sqlexpr import Sql, lit

    def as_map(d: dict) -> str:
        items = ", ".join(
            f"{lit(k)}: {as_map(v) if isinstance(v, dict) else lit(float(v))}" for k, v in d.items()
        )
        return f"MAP {{{items}}}"

    return Sql(as_map(costs))


@pytest.mark.parametrize(
    ("element", "rows", "good", "bad", "kind", "shown"),
    [
        (pa.int32(), [(1, 2), (3, 3)], {1: {2: 3.0}}, {"x": {"y": 2.0}}, "integer", "'x'"),
        (pa.string(), [("a", "b"), ("c", "c")], {"a": {"b": 3.0}}, {1: {2: 2.0}}, "text", "1"),
        (pa.int32(), [(1, 2), (3, 3)], {1: {2: 3.0}}, {1: {"y": 2.0}}, "integer", "'y'"),
    ],
    ids=["text-for-ints", "ints-for-text", "inner-text-for-ints"],
)
def test_costs_of_the_other_kind_are_an_error(engine, element, rows, good, bad, kind, shown):
    """cost_error with cost labels the columns cannot hold was the engine's raw error (DuckDB's
    binder, Polars' ComputeError, Spark's CAST_INVALID_INPUT)."""
    table = pa.table(
        {
            "actual": pa.array([a for a, _ in rows], element),
            "predicted": pa.array([p for _, p in rows], element),
        }
    )
    # the costly error costs 3: (3 + 0) / 2
    assert engine.aggregate("cost_error", table, costs=_costs(engine, good)) == 1.5
    message = (
        r"The 'costs' parameter of cost_error must map labels of the column's type \(.*\): "
        rf"{kind} \(actual -> \{{predicted: cost\}}\)\. Got {shown} instead\."
    )
    with pytest.raises(Exception, match=message) as info:
        engine.aggregate("cost_error", table, costs=_costs(engine, bad))
    assert_mlsql_error(engine, info.value, when_read=True)
