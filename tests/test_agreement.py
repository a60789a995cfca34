"""The 2x2 agreement tests against statsmodels' test-suite numbers, statsmodels and exact fractions.

Every engine, from rows and from stored counts. The table [[23, 15], [19, 31]] (rows: actual,
columns: predicted) is ``tables[0]`` of statsmodels' ``test_contingency_tables.py``, whose
expected p-values come from R (``contingency_table_r_results.csv``: homog_cont_p with
correction, bowker_pvalue without). Random tables run in tests/test_every_measure.py.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from typing import Any

import pyarrow as pa
import pytest

from mlsql.measures import contingency as C
from tests import oracle_agreement as A
from tests.test_single_label_tables import close, needs

#: statsmodels' tables[0]: tp = 23, fn = 15 (actual positive), fp = 19, tn = 31
TP, FN, FP, TN = 23, 15, 19, 31
#: name, parameters, expected (exact fractions, or R's numbers as statsmodels' tests hold them)
CASES = [
    ("binary_mcnemar_statistic", {"correction": 0.0}, Fraction(4**2, 34)),  # R: 0.470588235294118
    ("binary_mcnemar_statistic", {}, Fraction(3**2, 34)),
    ("binary_mcnemar_p_value", {}, 0.606905427217951),  # R: homog_cont_p
    ("binary_mcnemar_p_value", {"correction": 0.0}, 0.492716677227088),  # R: bowker_pvalue
    ("binary_kappa_std_error", {}, math.sqrt(A.exact_var_kappa(TP, FP, FN, TN))),
]


#: statsmodels' pvalue_one_sided (norm.sf(z_value)) on tables[0] (z above 0) and on a table
#: of more disagreement than chance (z below 0), from rows and from stored counts
ONE_SIDED_TABLES = [(TP, FP, FN, TN), (2, 8, 7, 3)]


def rows(tp: int, fp: int, fn: int, tn: int) -> pa.Table:
    cells = [(1, 1)] * tp + [(0, 1)] * fp + [(1, 0)] * fn + [(0, 0)] * tn
    return pa.table({"actual": [a for a, _ in cells], "predicted": [p for _, p in cells]})


def counts(tp: int, fp: int, fn: int, tn: int) -> pa.Table:
    return pa.table({"tp": [tp], "fp": [fp], "fn": [fn], "tn": [tn]})


# long_cases: the Spark cases of the agreement tests (5-8 s each in the merged suite at
# load ~5)
@pytest.mark.long_cases(
    "spark-binary_mcnemar_statistic-{'correction': 0.0}-8/17",
    "spark-binary_mcnemar_statistic-{}-9/34",
    "spark-binary_mcnemar_p_value-{}-0.606905427217951",
    "spark-binary_mcnemar_p_value-{'correction': 0.0}-0.492716677227088",
    "spark-binary_kappa_std_error-{}-0.10370390627371605",
)
@pytest.mark.parametrize(("name", "params", "want"), CASES, ids=str)
def test_statsmodels_test_suite_table(engine, name, params, want):
    needs(engine, name)
    assert close(engine.aggregate(name, rows(TP, FP, FN, TN), **params), want)
    got = engine.aggregate(
        f"{name}_from_counts", counts(TP, FP, FN, TN), columns=("tp", "fp", "fn", "tn"), **params
    )
    assert close(got, want)


@pytest.mark.long_cases("spark-(23, 19, 15, 31)", "spark-(2, 8, 7, 3)")
@pytest.mark.parametrize("cells", ONE_SIDED_TABLES, ids=str)
def test_one_sided_kappa_p_value_is_statsmodels(engine, cells):
    from scipy.stats import norm
    from statsmodels.stats.inter_rater import cohens_kappa

    name = "binary_kappa_p_value_one_sided"
    needs(engine, name)
    tp, fp, fn, tn = cells
    result = cohens_kappa([[tp, fn], [fp, tn]])  # rows: actual, columns: predicted
    want = float(result["pvalue_one_sided"])
    assert close(want, float(norm.sf(result["z_value"])))
    assert (want < 0.5) == (tp * tn > fp * fn)  # z > 0 where agreement beats chance
    assert close(engine.aggregate(name, rows(*cells)), want)
    got = engine.aggregate(f"{name}_from_counts", counts(*cells), columns=("tp", "fp", "fn", "tn"))
    assert close(got, want)
    two_sided = engine.aggregate("binary_kappa_p_value", rows(*cells))
    assert close(min(want, 1 - want) * 2, two_sided)


@pytest.mark.parametrize(("name", "params", "want"), CASES, ids=str)
def test_statsmodels_gives_the_test_suite_numbers(name, params, want):
    what = {"mcnemar_statistic": "statistic", "mcnemar_p_value": "pvalue"}
    short = name.removeprefix("binary_")
    if short in what:
        got = A.mcnemar(TP, FP, FN, TN, what[short], **params)
    else:
        got = A.cohens_kappa(TP, FP, FN, TN, "std_kappa")
    assert close(got, want)


def _small_tables(seed: int, n: int) -> list[tuple[int, int, int, int]]:
    rng = random.Random(seed)
    return [tuple(rng.choice([0, 0, 1, 2, 3, 7]) for _ in range(4)) for _ in range(n)]  # type: ignore[misc]


def test_kappa_variance_is_zero_exactly_where_the_reference_says_so():
    """The reference's 0 for std_kappa (perfect agreement, perfect disagreement of balanced
    classes, one class on a side) is exact, and the variance is positive everywhere else."""
    checked = 0
    for t in _small_tables(7, 600):
        tp, fp, fn, tn = t
        if sum(t) == 0 or (fp + fn == 0 and (tp == 0 or tn == 0)):
            continue  # no table, or kappa undefined
        one_side = 0 in (tp + fn, fp + tn, tp + fp, fn + tn)
        if fp + fn == 0 or (tp == tn == 0 and fp == fn) or one_side:
            assert A.exact_var_kappa(*t) == 0, t
            checked += 1
        else:
            assert A.exact_var_kappa(*t) > 0, t
    assert checked > 20


def test_statsmodels_std_kappa_is_the_exact_formula():
    """statsmodels' std_kappa equals the Fleiss-Cohen-Everitt variance in exact fractions."""
    for t in _small_tables(11, 200):
        tp, fp, fn, tn = t
        if (
            fp + fn == 0
            or (tp == tn == 0 and fp == fn)
            or 0 in (tp + fn, fp + tn, tp + fp, fn + tn)
        ):
            continue
        assert A.close_to_exact_std(A.cohens_kappa(*t, "std_kappa"), *t), t


class _PythonOps:
    """The primitives erfc needs, on Python floats."""

    def let(self, values: tuple[Any, ...], body: Any, name: str = "") -> Any:
        return body(*values)

    def exp(self, x: float) -> float:
        return math.exp(x)


@pytest.mark.parametrize("x", [0.0, 1e-9, 0.1, 0.5, 1.0, 1.5, 2.5, 4.0, 6.0, 9.0, 15.0, 25.0])
def test_erfc_polynomial_matches_the_math_module(x):
    # exp(-x²) carries x² x 1.1e-16 relative error of its own (7e-14 at x = 25)
    assert math.isclose(C.erfc(_PythonOps(), x), math.erfc(x), rel_tol=1e-13 + x * x * 2e-16)


@pytest.mark.long_cases("spark")
def test_correction_must_be_a_finite_number_at_least_zero(engine):
    name = "binary_mcnemar_statistic"
    needs(engine, name)
    message = r"The 'correction' parameter of binary_mcnemar_statistic must be a finite number >= 0"
    with pytest.raises(Exception, match=message):
        engine.aggregate(name, rows(TP, FP, FN, TN), correction=-1.0)


#: tables where statsmodels divides 0 by 0 or rounds a variance of 0: the documented values
EDGES = [(0, 2, 2, 0), (3, 0, 0, 4), (2, 0, 5, 0), (0, 0, 0, 3), (0, 3, 0, 0), (1, 0, 0, 0)]
TESTS = {
    "binary_mcnemar_statistic": lambda t: A.mcnemar(*t, "statistic"),
    "binary_mcnemar_p_value": lambda t: A.mcnemar(*t, "pvalue"),
    "binary_kappa_std_error": lambda t: A.cohens_kappa(*t, "std_kappa"),
    "binary_kappa_z_value": lambda t: A.cohens_kappa(*t, "z_value"),
    "binary_kappa_p_value": lambda t: A.cohens_kappa(*t, "pvalue_two_sided"),
    "binary_kappa_p_value_one_sided": lambda t: A.cohens_kappa(*t, "pvalue_one_sided"),
}


@pytest.mark.long_cases(
    "spark-binary_kappa_p_value",
    "spark-binary_kappa_p_value_one_sided",
    "spark-binary_kappa_std_error",
    "spark-binary_kappa_z_value",
    "spark-binary_mcnemar_p_value",
    "spark-binary_mcnemar_statistic",
)
@pytest.mark.parametrize("name", sorted(TESTS))
def test_edge_tables(engine, name):
    needs(engine, name)
    for t in EDGES:
        assert close(engine.aggregate(name, rows(*t)), TESTS[name](t)), t
