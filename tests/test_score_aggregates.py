"""average_precision_score, brier_score_loss and expected_calibration_error on every engine.

A worked example whose values are exact fractions worked by hand (Brier, calibration error
and average precision), the calibration bins' rule, ties of -0.0 and 0.0, labels without a
positive (``zero_division``) and the errors: probabilities outside [0, 1] and bad ``n_bins``.
The random cases against scikit-learn are in ``tests/references.py``.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import pyarrow as pa
import pytest

from tests.test_reliability_inputs import assert_mlsql_error

NAN = float("nan")

#: eight rows, dyadic probabilities (exact in floating point), 4 positives
ACTUAL = [1, 1, 0, 1, 0, 0, 1, 0]
PROB = [1.0, 0.75, 0.75, 0.5, 0.375, 0.25, 0.125, 0.0]
#: worked by hand (see each test for the steps)
WORKED = {
    # Σ (p - y)² = 0 + 1/16 + 9/16 + 1/4 + 9/64 + 1/16 + 49/64 + 0 = 118/64, over 8 rows
    ("brier_score_loss", ()): Fraction(59, 256),
    # scale_by_half: 'auto' and True keep the binary score; False counts both classes' errors,
    # (p - y)² and ((1 - p) - (1 - y))², so twice the mean (scikit-learn's rule)
    ("brier_score_loss", (("scale_by_half", True),)): Fraction(59, 256),
    ("brier_score_loss", (("scale_by_half", "AUTO"),)): Fraction(59, 256),
    ("brier_score_loss", (("scale_by_half", False),)): Fraction(59, 128),
    # 4 bins of width 1/4: {1, .75, .75 | 1, 1, 0}: 3/8 · |5/6 - 2/3| = 1/16; {.5 | 1}: 1/16;
    # {.375, .25 | 0, 0}: 2/8 · 5/16 = 5/64; {.125, 0 | 1, 0}: 2/8 · 7/16 = 7/64; total 5/16
    ("expected_calibration_error", (("n_bins", 4),)): Fraction(5, 16),
    # the same bins' gaps g_b = |mean p - mean y|: 1/6 (3 rows), 1/2 (1), 5/16 (2), 7/16 (2);
    # max (torchmetrics' norm='max'): the largest gap
    ("expected_calibration_error", (("n_bins", 4), ("norm", "max"))): Fraction(1, 2),
    # l2: sqrt(Σ n_b / n g_b²) = sqrt(3/8 · 1/36 + 1/8 · 1/4 + 2/8 · 25/256 + 2/8 · 49/256)
    ("expected_calibration_error", (("n_bins", 4), ("norm", "l2"))): math.sqrt(Fraction(175, 1536)),
    ("expected_calibration_error", (("n_bins", 4), ("norm", "L1"))): Fraction(5, 16),
    # one bin: |Σp - Σy| / n = |15/4 - 4| / 8
    ("expected_calibration_error", (("n_bins", 1),)): Fraction(1, 32),
    # ten bins: 1 -> bin 9 (the last bin is closed), .75 -> 7, .5 -> 5, .375 -> 3, .25 -> 2,
    # .125 -> 1, 0 -> 0; |Σ (p - y)| per bin: 0, 1/2, 1/2, 3/8, 1/4, 7/8, 0; over 8 rows
    ("expected_calibration_error", ()): Fraction(5, 16),
    # runs from the highest score: 1 (+): 1/1; .75 (+, -): 2/3; .5 (+): 3/4; .375 (-);
    # .25 (-); .125 (+): 4/7; 0 (-): the mean over the 4 positives of P(>= s) / N(>= s)
    ("average_precision_score", ()): (1 + Fraction(2, 3) + Fraction(3, 4) + Fraction(4, 7)) / 4,
}


def table(actual: list, score: list, name: str = "prob") -> pa.Table:
    return pa.table({"actual": pa.array(actual, pa.int64()), name: pa.array(score, pa.float64())})


def inputs(measure: str) -> tuple[str, str]:
    return ("actual", "score") if measure == "average_precision_score" else ("actual", "prob")


def value(engine, measure: str, actual: list, score: list, **params):
    cols = inputs(measure)
    return engine.aggregate(measure, table(actual, score, cols[1]), columns=cols, **params)


@pytest.mark.parametrize(("key", "want"), list(WORKED.items()), ids=lambda k: str(k))
def test_worked_example_is_exact(engine, key, want):
    measure, params = key
    got = value(engine, measure, ACTUAL, PROB, **dict(params))
    assert math.isclose(got, want, rel_tol=1e-12), (got, float(want))


def test_null_rows_are_skipped_and_no_rows_give_null(engine):
    for measure in ("brier_score_loss", "expected_calibration_error", "average_precision_score"):
        got = value(engine, measure, [*ACTUAL, None, 1], [*PROB, 0.5, None])
        assert math.isclose(got, WORKED[(measure, ())], rel_tol=1e-12), measure
        assert value(engine, measure, [None, 1], [0.5, None]) is None, measure


def test_calibration_bins_follow_the_documented_rule(engine):
    """The bin of p is floor(p · n_bins) in doubles: with 10 bins 0.3 is in [0.3, 0.4)."""
    got = value(engine, "expected_calibration_error", [1, 0], [0.3, 0.39])
    want = abs(Fraction(0.3) + Fraction(0.39) - 1) / 2  # one bin; in [0.2, 0.3) it would be .545
    assert math.isclose(got, want, rel_tol=1e-12)


#: 40 rows: the bin edges of 10 and 1000 bins, 0, 1, and probabilities between them
CALIBRATION_PROB = [
    0.0,
    1.0,
    0.3,
    0.999,
    0.001,
    0.5,
    0.7,
    0.0015,
    *(i / 29 + 0.003 for i in range(29)),
    0.25,
    0.6,
    0.9,
]
CALIBRATION_ACTUAL = [(i * 7 + i // 3) % 2 for i in range(len(CALIBRATION_PROB))]
#: an integer weight per row (0 drops it)
CALIBRATION_WEIGHTS = [float(i % 4) for i in range(len(CALIBRATION_PROB))]


@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_bins", [1, 10, 1000])
def test_calibration_error_with_many_bins_is_the_plain_python_value(engine, n_bins, weighted, norm):
    """Any number of bins, in every engine: 1000 bins overflowed Polars' recursion limit and
    Spark's planner (a sum per bin); the bins are the documented rule's, as DuckDB's."""
    from tests.references import calibration_error

    t = table(CALIBRATION_ACTUAL, CALIBRATION_PROB)
    params: dict = {"n_bins": n_bins, "norm": norm}
    y, p = CALIBRATION_ACTUAL, CALIBRATION_PROB
    if weighted:  # integer weights: the rows repeated
        t = t.append_column("w", pa.array(CALIBRATION_WEIGHTS))
        params["sample_weight"] = "w"
        repeat = [int(w) for w in CALIBRATION_WEIGHTS]
        y = [v for v, r in zip(y, repeat, strict=True) for _ in range(r)]
        p = [v for v, r in zip(p, repeat, strict=True) for _ in range(r)]
    got = engine.aggregate("expected_calibration_error", t, columns=("actual", "prob"), **params)
    assert math.isclose(got, calibration_error(y, p, n_bins, norm), rel_tol=1e-12)


@pytest.mark.parametrize("norm", ["l2", "max"])
def test_calibration_norms_weigh_rows_as_repeats(engine, norm):
    """Weights that are not whole numbers, against the oracle's weighted bins; a bin whose rows
    all weigh 0 is empty, so it is no candidate for the largest gap (its gap would be 0 / 0)."""
    from tests.references import calibration_error

    y, p = [1, 0, 1, 0, 1], [0.05, 0.15, 0.55, 0.65, 0.95]
    w = [0.5, 2.25, 0.0, 0.0, 1.75]
    t = table(y, p).append_column("w", pa.array(w))
    got = engine.aggregate(
        "expected_calibration_error", t, columns=("actual", "prob"), n_bins=3, norm=norm,
        sample_weight="w",
    )  # fmt: skip
    assert math.isclose(got, calibration_error(y, p, 3, norm, w), rel_tol=1e-12)


def test_calibration_norms_over_no_rows_are_null(engine):
    for norm in ("l1", "l2", "max"):
        got = value(engine, "expected_calibration_error", [None, 1], [0.5, None], norm=norm)
        assert got is None, norm


def test_average_precision_ties_minus_zero_with_zero(engine):
    """-0.0 and 0.0 are one score, one step (scikit-learn): 1/3, not 1/2 as two steps."""
    got = value(engine, "average_precision_score", [1, 0, 0], [0.0, -0.0, 0.5])
    assert math.isclose(got, 1 / 3, rel_tol=1e-12)
    got = value(engine, "average_precision_score", [0, 1, 0], [0.0, -0.0, 0.5])
    assert math.isclose(got, 1 / 3, rel_tol=1e-12)


@pytest.mark.parametrize(
    ("zero_division", "want"), [(0, 0.0), (1, 1.0), (NAN, NAN), ("diagnose", 1.0), ("ignore", None)]
)
def test_average_precision_without_positives_is_zero_division(engine, zero_division, want):
    got = value(engine, "average_precision_score", [0, 0], [0.2, 0.9], zero_division=zero_division)
    if want is None or math.isnan(want):
        assert got is None if want is None else math.isnan(got)
    else:
        assert got == want


def probability_message(func: str, got: str) -> str:
    return re.escape(f"{func} takes probabilities in [0, 1] for prob. Got a value {got}.")


@pytest.mark.parametrize(("bad", "got"), [(-0.25, "below 0"), (1.5, "above 1")])
@pytest.mark.parametrize("measure", ["brier_score_loss", "expected_calibration_error"])
def test_probabilities_outside_0_1_are_an_error(engine, measure, bad, got):
    with pytest.raises(Exception, match=probability_message(measure, got)) as info:
        value(engine, measure, [1, 0, 1], [0.5, bad, 0.25])
    assert_mlsql_error(engine, info.value, when_read=True)


@pytest.mark.parametrize("order", [(1.5, -0.5), (-0.5, 1.5)], ids=["above-first", "below-first"])
@pytest.mark.parametrize("measure", ["brier_score_loss", "expected_calibration_error"])
def test_probabilities_on_both_sides_name_below_0_whatever_the_order(engine, measure, order):
    """One verdict for the group whichever bad row is read first: the lowest value below 0
    first (Spark checked brier_score_loss row by row and named the first row it read)."""
    with pytest.raises(Exception, match=probability_message(measure, "below 0")) as info:
        value(engine, measure, [1, 0], list(order))
    assert_mlsql_error(engine, info.value, when_read=True)


def test_a_probability_of_a_row_with_a_null_label_is_not_checked(engine):
    got = value(engine, "brier_score_loss", [1, None], [0.5, 7.0])
    assert got == 0.25


@pytest.mark.parametrize(("n_bins", "shown"), [(0, "0"), (-3, "-3"), (2.5, "2.5")])
def test_n_bins_must_be_a_whole_number_above_0(engine, n_bins, shown):
    message = re.escape(
        "The 'n_bins' parameter of expected_calibration_error must be a whole number from 1 to "
        "100000. "
        f"Got {shown} instead."
    )
    with pytest.raises(Exception, match=message) as info:
        value(engine, "expected_calibration_error", [1, 0], [0.5, 0.5], n_bins=n_bins)
    assert_mlsql_error(engine, info.value)


@pytest.mark.parametrize(("bad", "shown"), [(1, "1"), ("true", "'true'"), ("half", "'half'")])
def test_scale_by_half_is_auto_or_a_boolean(engine, bad, shown):
    """scikit-learn's rule: 'auto' or a boolean; 1 and the text 'true' are neither."""
    message = re.escape(
        "The 'scale_by_half' parameter of brier_score_loss must be 'auto' or a boolean "
        f"(True or False). Got {shown} instead."
    )
    with pytest.raises(Exception, match=message) as info:
        value(engine, "brier_score_loss", [1, 0], [0.5, 0.5], scale_by_half=bad)
    assert_mlsql_error(engine, info.value)


def test_unhalved_weighted_brier_is_scikit_learns(engine):
    """scale_by_half=False with weights, against scikit-learn's two-column score."""
    sklearn = pytest.importorskip("sklearn.metrics")
    y, p, w = [1, 0, 1, 1, 0], [0.9, 0.2, 0.35, 0.6, 0.55], [1.5, 0.25, 2.0, 0.0, 3.0]
    t = table(y, p).append_column("w", pa.array(w))
    got = engine.aggregate(
        "brier_score_loss", t, columns=("actual", "prob"), scale_by_half=False, sample_weight="w"
    )
    want = sklearn.brier_score_loss(y, p, sample_weight=w, scale_by_half=False)
    assert math.isclose(got, want, rel_tol=1e-12)


def test_logloss_still_clips_probabilities_outside_0_1(engine):
    """The probability rule of brier and calibration leaves logloss's documented clip alone."""
    got = engine.aggregate("logloss", table([1, 0], [1.5, -0.5], "predicted"))
    assert math.isclose(got, -math.log(1 - 1e-15), rel_tol=1e-6)


#: the Spark runs of these cases are long tests (tests/conftest.py reads it): the README's
#: suite keeps to its ten minutes, and `.ci/run` runs them right after it
LONG_ENGINES = ("spark",)
