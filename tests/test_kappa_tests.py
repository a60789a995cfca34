"""Cohen's kappa over k classes: standard error, z test and interval against statsmodels' own
test values, exact fractions and statsmodels itself.

statsmodels' ``statsmodels/stats/tests/test_inter_rater.py`` checks ``cohens_kappa`` on
``table10`` against a SAS printout (``UnweightedCohens``: kappa 0.4842, ASE 0.1380, 95%
limits 0.2137 and 0.7547, ASE under H0 0.1484, Z 3.2626, two-sided p 0.0011) and on the
``anxiety`` ratings against R's irr ``kappa2`` (``test_cohens_kappa_irr``, raters 2 and 3,
unweighted: z -0.0604067, p 0.9518317). Random tables run in tests/test_every_measure.py
(reference: statsmodels, tests/oracle_agreement.py).
"""

from __future__ import annotations

import math
import random

import pyarrow as pa
import pytest

from tests import oracle_agreement as A
from tests.test_single_label_tables import close, needs

#: every case is long: a Spark case runs a Spark query per measure and case, the others bind
#: DuckDB's kappa-test macros for a third of a second or more (with test_sql_resample_values,
#: 11% of the README's suite, which took 593 s of its 600 on two quiet cores with them,
#: 2026-12-01; test_kappa_matrix, test_agreement, test_sql_bootstrap and test_sql_compare keep
#: those macros in it)
pytestmark = pytest.mark.long

#: statsmodels' table10 (rows: actual, columns: predicted; classes 0, 1, 2)
TABLE10 = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]
#: SAS's numbers for table10 as statsmodels' UnweightedCohens holds them (4 decimals)
SAS = {
    "cohen_kappa_std_error": 0.1380,
    "cohen_kappa_low": 0.2137,
    "cohen_kappa_high": 0.7547,
    "cohen_kappa_z_value": 3.2626,
    "cohen_kappa_p_value": 0.0011,
}
#: statsmodels' anxiety ratings, raters 2 and 3 (test_cohens_kappa_irr's columns 1 and 2)
ANXIETY_2 = [3, 6, 4, 6, 2, 4, 2, 4, 3, 3, 2, 3, 3, 3, 2, 2, 1, 3, 3, 4]
ANXIETY_3 = [2, 1, 4, 4, 3, 2, 1, 6, 1, 1, 1, 2, 3, 3, 1, 1, 3, 3, 2, 2]
#: R irr's kappa2(anxiety[, 2:3]): z and p-value (statsmodels checks 5 and 6 decimals)
IRR = {"cohen_kappa_z_value": (-0.0604067, 1e-5), "cohen_kappa_p_value": (0.9518317, 1e-6)}


def rows_of(matrix: list[list[int]]) -> pa.Table:
    cells = [(i, j) for i, row in enumerate(matrix) for j, n in enumerate(row) for _ in range(n)]
    return pa.table({"actual": [a for a, _ in cells], "predicted": [p for _, p in cells]})


def _exact(matrix: list[list[int]], name: str) -> float:
    """The measure from the exact-fraction variances (statsmodels' formulas)."""
    var, var0 = A.exact_kappa_variance(matrix)
    k, n = len(matrix), sum(map(sum, matrix))
    r = [sum(row) for row in matrix]
    c = [sum(matrix[i][j] for i in range(k)) for j in range(k)]
    pe = sum(r[i] * c[i] for i in range(k)) / n**2
    kappa = (sum(matrix[i][i] for i in range(k)) / n - pe) / (1 - pe)
    z = kappa / math.sqrt(var0)
    return {
        "cohen_kappa_std_error": math.sqrt(var),
        "cohen_kappa_low": kappa - _z975() * math.sqrt(var),
        "cohen_kappa_high": kappa + _z975() * math.sqrt(var),
        "cohen_kappa_z_value": z,
        "cohen_kappa_p_value": math.erfc(abs(z) / math.sqrt(2)),
        "cohen_kappa_p_value_one_sided": math.erfc(z / math.sqrt(2)) / 2,
    }[name]


def _z975() -> float:
    """statsmodels' interval is at alpha 0.05: the normal's 97.5% quantile (scipy)."""
    from scipy.stats import norm

    return float(norm.ppf(0.975))


@pytest.mark.parametrize("name", sorted(SAS))
def test_statsmodels_sas_table(engine, name):
    needs(engine, name)
    got = engine.aggregate(name, rows_of(TABLE10))
    assert abs(got - SAS[name]) <= 5e-5
    assert close(got, _exact(TABLE10, name))


@pytest.mark.parametrize("name", sorted(SAS))
def test_statsmodels_gives_the_sas_numbers(name):
    got = A.kappa_test(_pairs(TABLE10), name)
    assert abs(got - SAS[name]) <= 5e-5
    assert close(got, _exact(TABLE10, name))


def _pairs(matrix: list[list[int]]) -> list[tuple[int, int]]:
    t = rows_of(matrix)
    return list(zip(t["actual"].to_pylist(), t["predicted"].to_pylist(), strict=True))


@pytest.mark.parametrize("name", sorted(IRR))
def test_r_irr_anxiety_ratings(engine, name):
    needs(engine, name)
    table = pa.table({"actual": ANXIETY_2, "predicted": ANXIETY_3})
    want, tolerance = IRR[name]
    got = engine.aggregate(name, table)
    assert abs(got - want) <= tolerance
    assert close(got, A.kappa_test(list(zip(ANXIETY_2, ANXIETY_3, strict=True)), name))


#: tables whose variance is 0 exactly (perfect agreement; a disagreement of constant
#: P_i + A_j; one class on a side), and tables where var_kappa0 is 0 (no class on both sides)
ZERO_VARIANCE = [
    [[3, 0], [0, 2]],
    [[0, 2], [2, 0]],
    [[0, 3, 3], [3, 0, 0], [3, 0, 0]],
    [[2, 1, 0], [0, 0, 0], [0, 0, 0]],
]
DISJOINT = [[[0, 0, 1], [0, 0, 2], [0, 0, 0]], [[0, 2, 3], [0, 0, 0], [0, 0, 0]]]


def test_these_variances_are_zero_exactly():
    for m in ZERO_VARIANCE:
        assert A.exact_kappa_variance(m)[0] == 0, m
    for m in DISJOINT:
        assert A.exact_kappa_variance(m)[1] == 0, m


@pytest.mark.parametrize("name", sorted(SAS))
def test_edge_tables(engine, name):
    """Zero variances give a standard error of 0 exactly (no rounding residue), NaN z and
    p-values where var_kappa0 is 0, NaN with one class on both sides, NULL over no rows."""
    needs(engine, name)
    for m in [*ZERO_VARIANCE, *DISJOINT, [[4]]]:
        got = engine.aggregate(name, rows_of(m))
        assert close(got, A.kappa_test(_pairs(m), name)), (m, got)
        if name == "cohen_kappa_std_error" and m in ZERO_VARIANCE:
            assert got == 0.0, m
    nothing = pa.table({"actual": pa.array([None], pa.int64()), "predicted": [1]})
    assert engine.aggregate(name, nothing) is None


def test_binary_tables_agree_with_the_2x2_measures(engine):
    """Over two classes the k-class standard error and z are the binary_kappa_* ones."""
    for name in ("std_error", "z_value", "p_value", "p_value_one_sided"):
        needs(engine, f"cohen_kappa_{name}")
    rng = random.Random(5)
    for _ in range(3):
        m = [[rng.randint(1, 9) for _ in range(2)] for _ in range(2)]
        t = rows_of(m)
        for name in ("std_error", "z_value", "p_value", "p_value_one_sided"):
            got = engine.aggregate(f"cohen_kappa_{name}", t)
            assert close(got, engine.aggregate(f"binary_kappa_{name}", t)), (m, name)


ONE_SIDED = "cohen_kappa_p_value_one_sided"


@pytest.mark.parametrize(
    "matrix",
    [TABLE10, "anxiety", *ZERO_VARIANCE, *DISJOINT, [[4]]],
    ids=["table10", "anxiety", *(f"zero-variance-{i}" for i in range(4)), "disjoint-0",
         "disjoint-1", "one-class"],
)  # fmt: skip
def test_one_sided_p_value_is_statsmodels(engine, matrix):
    """statsmodels' pvalue_one_sided, norm.sf(z_value) = P(Z > z), on the tables of the
    two-sided tests: table10 (z 3.26, p about half the two-sided 0.0011), the anxiety ratings
    (z below 0: p above 1/2), and the edge tables (NaN where z is)."""
    from scipy.stats import norm

    needs(engine, ONE_SIDED)
    if matrix == "anxiety":
        table = pa.table({"actual": ANXIETY_2, "predicted": ANXIETY_3})
        pairs = list(zip(ANXIETY_2, ANXIETY_3, strict=True))
    else:
        table, pairs = rows_of(matrix), _pairs(matrix)
    got = engine.aggregate(ONE_SIDED, table)
    want = A.kappa_test(pairs, ONE_SIDED)
    assert close(got, want), (got, want)
    z = A.kappa_test(pairs, "cohen_kappa_z_value")
    assert close(got, float(norm.sf(z)))
    if matrix == TABLE10:
        assert close(got, _exact(TABLE10, ONE_SIDED))
        assert abs(got - SAS["cohen_kappa_p_value"] / 2) <= 5e-5
    if matrix == "anxiety":
        assert got > 0.5


def test_one_sided_p_value_over_no_rows_is_null(engine):
    needs(engine, ONE_SIDED)
    nothing = pa.table({"actual": pa.array([None], pa.int64()), "predicted": [1]})
    assert engine.aggregate(ONE_SIDED, nothing) is None


@pytest.mark.long
@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
def test_spark_over_labels_counts_the_cells(weighted):
    """Spark's bounded path (given labels, one of which never occurs) sums the k x k cells it
    counts: statsmodels on the (weighted) confusion matrix, where an empty class adds nothing."""
    import numpy as np
    from statsmodels.stats.inter_rater import cohens_kappa

    pytest.importorskip("pyspark")
    from mlsql.spark.families.single_label import over_labels
    from tests.engines.spark_engine import session

    rng = random.Random(13)
    rows = [(rng.choice("abc"), rng.choice("abcc"), rng.randint(1, 4) / 2) for _ in range(60)]
    labels = ["a", "b", "c", "d"]
    w = {"sample_weight": "w"} if weighted else {}
    df = session().createDataFrame(rows, "a string, p string, w double")
    got = df.agg(*(over_labels(name, "a", "p", labels, **w) for name in SAS)).first()
    table = np.zeros((4, 4))
    for a, p, weight in rows:
        table[labels.index(a), labels.index(p)] += weight if weighted else 1
    result = cohens_kappa(table)
    for name, value in zip(SAS, got, strict=True):
        assert close(value, float(result[A.KAPPA_RESULTS[name]])), name


# ------------------------------------------------------------------ weighted kappa (issue #34)
WEIGHTINGS = ("linear", "quadratic")
NAMES = sorted(A.KAPPA_RESULTS)
#: tables for the weighted variances: table10, a 4-class table, one with a class absent on
#: the predicted side (class 2 is never predicted) and one absent on the actual side
WEIGHTED_TABLES = {
    "table10": TABLE10,
    "four": [[5, 2, 1, 0], [1, 6, 2, 1], [0, 2, 4, 3], [1, 0, 2, 7]],
    "absent-predicted": [[3, 1, 0], [2, 4, 0], [1, 2, 0]],
    "absent-actual": [[2, 3, 1], [0, 0, 0], [1, 1, 4]],
}


@pytest.mark.parametrize("weights", WEIGHTINGS)
@pytest.mark.parametrize("table", sorted(WEIGHTED_TABLES))
@pytest.mark.parametrize("name", NAMES)
def test_weighted_is_statsmodels(engine, name, table, weights):
    """statsmodels' cohens_kappa(table, wt=weights) on the confusion matrix over the classes
    seen on either side (its scores 0..k-1 are the sorted classes' positions)."""
    needs(engine, name)
    m = WEIGHTED_TABLES[table]
    got = engine.aggregate(name, rows_of(m), weights=weights)
    want = A.kappa_test(_pairs(m), name, weights)
    assert close(got, want), (got, want)
    if table != "absent-actual":  # there (two actual classes) linear z is plain z
        assert not close(got, A.kappa_test(_pairs(m), name)), "the weights change nothing"


def _plain_weighted(matrix: list[list[int]], wt: str) -> dict[str, float]:
    """The six values for ``matrix`` from Fleiss, Cohen and Everitt's weighted variances
    written out plainly in floats (agreement weights w_ij = 1 - |i - j|^p / (k - 1)^p)."""
    k, n = len(matrix), sum(map(sum, matrix))
    power = 1 if wt == "linear" else 2
    w = [[1 - (abs(i - j) / (k - 1)) ** power for j in range(k)] for i in range(k)]
    p = [[x / n for x in row] for row in matrix]
    r = [sum(row) for row in p]
    c = [sum(p[i][j] for i in range(k)) for j in range(k)]
    po = sum(w[i][j] * p[i][j] for i in range(k) for j in range(k))
    pe = sum(w[i][j] * r[i] * c[j] for i in range(k) for j in range(k))
    kappa = (po - pe) / (1 - pe)
    wr = [sum(c[j] * w[i][j] for j in range(k)) for i in range(k)]  # w̄_i.
    wc = [sum(r[i] * w[i][j] for i in range(k)) for j in range(k)]  # w̄_.j
    var = sum(
        p[i][j] * (w[i][j] - (wr[i] + wc[j]) * (1 - kappa)) ** 2 for i in range(k) for j in range(k)
    )
    var = (var - (kappa - pe * (1 - kappa)) ** 2) / ((1 - pe) ** 2 * n)
    var0 = sum(r[i] * c[j] * (w[i][j] - (wr[i] + wc[j])) ** 2 for i in range(k) for j in range(k))
    var0 = (var0 - pe**2) / ((1 - pe) ** 2 * n)
    z = kappa / math.sqrt(var0)
    return {
        "cohen_kappa_std_error": math.sqrt(var),
        "cohen_kappa_z_value": z,
        "cohen_kappa_p_value": math.erfc(abs(z) / math.sqrt(2)),
        "cohen_kappa_p_value_one_sided": math.erfc(z / math.sqrt(2)) / 2,
        "cohen_kappa_low": kappa - _z975() * math.sqrt(var),
        "cohen_kappa_high": kappa + _z975() * math.sqrt(var),
    }


#: a 3-class table small enough to check by hand
SMALL = [[3, 1, 0], [1, 2, 1], [0, 1, 2]]


@pytest.mark.parametrize("weights", WEIGHTINGS)
@pytest.mark.parametrize("name", NAMES)
def test_weighted_small_table_from_the_formula(engine, name, weights):
    needs(engine, name)
    want = _plain_weighted(SMALL, weights)[name]
    assert close(engine.aggregate(name, rows_of(SMALL), weights=weights), want)
    # the formula, statsmodels and the exact fractions agree on it too
    assert close(A.kappa_test(_pairs(SMALL), name, weights), want)


@pytest.mark.parametrize("weights", WEIGHTINGS)
@pytest.mark.parametrize("name", NAMES)
def test_weighted_sample_weight_is_repeated_rows_and_nulls_are_skipped(engine, name, weights):
    """A row of weight w counts as w rows; a row with NULL on either side is skipped."""
    needs(engine, name)
    m = WEIGHTED_TABLES["four"]
    cells = [(i, j, x) for i, row in enumerate(m) for j, x in enumerate(row) if x]
    weighted = pa.table(
        {
            "actual": [i for i, _, _ in cells] + [None, 1],
            "predicted": [j for _, j, _ in cells] + [2, None],
            "w": [float(x) for _, _, x in cells] + [5.0, 5.0],
        }
    )
    want = A.kappa_test(_pairs(m), name, weights)
    got = engine.aggregate(name, weighted, weights=weights, sample_weight="w")
    assert close(got, want), (got, want)
    with_nulls = pa.concat_tables(
        [
            rows_of(m),
            pa.table(
                {
                    "actual": pa.array([None, 3], pa.int64()),
                    "predicted": pa.array([0, None], pa.int64()),
                }
            ),
        ]
    )
    assert close(engine.aggregate(name, with_nulls, weights=weights), want)


@pytest.mark.parametrize("weights", WEIGHTINGS)
@pytest.mark.parametrize("name", NAMES)
def test_weighted_edge_tables(engine, name, weights):
    """Perfect agreement and one class on a side: a standard error of 0 exactly; NaN z and
    p-values where var_kappa0 is 0; NaN over one class on both sides; NULL over no rows."""
    needs(engine, name)
    for m in [[[3, 0, 0], [0, 2, 0], [0, 0, 4]], [[2, 1, 3], [0, 0, 0], [0, 0, 0]], [[4]]]:
        got = engine.aggregate(name, rows_of(m), weights=weights)
        assert close(got, A.kappa_test(_pairs(m), name, weights)), (m, got)
        if name == "cohen_kappa_std_error" and len(m) > 1:
            assert got == 0.0, m
    nothing = pa.table({"actual": pa.array([None], pa.int64()), "predicted": [1]})
    assert engine.aggregate(name, nothing, weights=weights) is None


def test_weighted_kappa_is_scikit_learns():
    """statsmodels' weighted kappa over the classes seen is scikit-learn's cohen_kappa_score
    with the same weights (its scores are positions; the scale cancels)."""
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import cohens_kappa

    for m in WEIGHTED_TABLES.values():
        y, p = zip(*_pairs(m), strict=True)
        for wt in WEIGHTINGS:
            assert close(float(cohens_kappa(m, wt=wt).kappa), cohen_kappa_score(y, p, weights=wt))


@pytest.mark.parametrize("weights", WEIGHTINGS)
def test_weighted_counts_do_not_overflow(engine, weights):
    """20,000 rows over 10 classes: n² Σ A_i P_j d_ij² is beyond 64 bits (integer sums wrap
    in Polars), so the variances divide by chance before they multiply."""
    import numpy as np
    from statsmodels.stats.inter_rater import cohens_kappa

    needs(engine, "cohen_kappa_std_error")
    rng = np.random.default_rng(7)
    actual = rng.integers(0, 10, 20_000)
    predicted = np.where(rng.random(20_000) < 0.6, actual, rng.integers(0, 10, 20_000))
    m = np.zeros((10, 10))
    np.add.at(m, (actual, predicted), 1)
    result = cohens_kappa(m, wt=weights)
    table = pa.table({"actual": actual, "predicted": predicted})
    for name, attr in (("cohen_kappa_std_error", "std_kappa"), ("cohen_kappa_z_value", "z_value")):
        assert close(engine.aggregate(name, table, weights=weights), float(result[attr])), name
