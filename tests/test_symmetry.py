"""Bowker's test of symmetry over k classes against R, statsmodels and exact hand values.

statsmodels' ``statsmodels/stats/tests/test_contingency_tables.py`` (``test_symmetry``)
checks ``SquareTable(table, shift_zeros=False).symmetry()`` on three tables against R's
``mcnemar.test`` (``results/contingency_table_r_results.csv``: bowker_stat, bowker_df,
bowker_pvalue); the same tables and R's numbers run here on every engine. Random tables run
in tests/test_every_measure.py and tests/test_evaluate.py (reference: statsmodels,
tests/oracle_agreement.py).
"""

from __future__ import annotations

import math
import random

import pyarrow as pa
import pytest

from tests import oracle_agreement as A
from tests.test_single_label_tables import close, needs

#: the Spark cases run with the long tests (one Spark query per measure and case)
LONG_ENGINES = ("spark",)
NAMES = ("bowker_statistic", "bowker_p_value")

#: statsmodels' test tables (rows: actual, columns: predicted) and R's mcnemar.test on them:
#: (statistic, p-value), as statsmodels' results file holds them (15 significant digits)
R_TABLES = [
    ([[23, 15], [19, 31]], (0.470588235294118, 0.492716677227088)),
    (
        [[144, 33, 84, 126], [2, 4, 14, 29], [0, 2, 6, 25], [0, 0, 1, 5]],
        (297.610989010989, 2.65851858368065e-61),
    ),
    ([[20, 10, 5], [3, 30, 15], [0, 5, 40]], (13.7692307692308, 0.00323670650323545)),
]

#: a 3x3 table by hand: the pairs (0, 1): 3 vs 1, (0, 2): 1 vs 4, (1, 2): 2 vs 0
HAND = [[5, 3, 1], [1, 4, 2], [4, 0, 6]]
#: (3 - 1)² / 4 + (1 - 4)² / 5 + (2 - 0)² / 2 = 1 + 9/5 + 2
HAND_STATISTIC = 24 / 5


def _chi2_sf_3(x: float) -> float:
    """P(X > x) for X chi-square with 3 degrees of freedom, in closed form (Abramowitz and
    Stegun 26.4.4): erfc(sqrt(x / 2)) + sqrt(2 x / pi) e^(-x / 2)."""
    return math.erfc(math.sqrt(x / 2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2)


def rows_of(matrix: list[list[int]], classes: list | None = None) -> pa.Table:
    labels = classes or list(range(len(matrix)))
    cells = [
        (labels[i], labels[j]) for i, row in enumerate(matrix) for j, n in enumerate(row)
        for _ in range(n)
    ]  # fmt: skip
    return pa.table({"actual": [a for a, _ in cells], "predicted": [p for _, p in cells]})


def _pairs(table: pa.Table) -> list[tuple]:
    return list(zip(table["actual"].to_pylist(), table["predicted"].to_pylist(), strict=True))


@pytest.mark.parametrize("case", range(len(R_TABLES)), ids=["2x2", "4x4", "3x3"])
@pytest.mark.parametrize("name", NAMES)
def test_r_mcnemar_test_tables(engine, name, case):
    """R's mcnemar.test numbers (statsmodels' test_symmetry), to R's 15 digits; the 4x4
    table's p-value is 2.7e-61, deep in the chi-square tail."""
    needs(engine, name)
    matrix, want = R_TABLES[case]
    got = engine.aggregate(name, rows_of(matrix))
    assert math.isclose(got, want[NAMES.index(name)], rel_tol=1e-12), (got, want)
    assert close(got, A.bowker(_pairs(rows_of(matrix)), name))


def test_statsmodels_gives_rs_numbers_without_shifting_zeros():
    """The reference is statsmodels' SquareTable(table, shift_zeros=False): its default
    shifts every 0 cell to 0.5 when the table has one (the 4x4 and 3x3 tables here)."""
    import numpy as np
    from statsmodels.stats.contingency_tables import SquareTable

    for matrix, (stat, p) in R_TABLES:
        got = SquareTable(np.array(matrix), shift_zeros=False).symmetry()
        assert math.isclose(got.statistic, stat, rel_tol=1e-12)
        assert math.isclose(got.pvalue, p, rel_tol=1e-12)
    shifted = SquareTable(np.array(HAND)).symmetry()  # (2 - 0.5)² / 2.5 for the pair (1, 2)
    assert math.isclose(shifted.statistic, 1 + 9 / 5 + 1.5**2 / 2.5)


@pytest.mark.parametrize("name", NAMES)
def test_hand_table(engine, name):
    """The 3x3 table's statistic 24/5 and its chi-square (3 df) tail in closed form."""
    needs(engine, name)
    got = engine.aggregate(name, rows_of(HAND))
    want = HAND_STATISTIC if name == "bowker_statistic" else _chi2_sf_3(HAND_STATISTIC)
    assert math.isclose(got, want, rel_tol=1e-12), (got, want)


@pytest.mark.parametrize("name", NAMES)
def test_integer_weights_are_repeated_rows(engine, name):
    """Each distinct (actual, predicted) row once, weighted by its count, is the table; a row
    of weight 0 adds nothing (its class, never seen otherwise, leaves k and df alone)."""
    needs(engine, name)
    cells = [(i, j, n) for i, row in enumerate(HAND) for j, n in enumerate(row) if n]
    cells.append((3, 0, 0))  # class 3 only in a row of weight 0
    table = pa.table(
        {
            "actual": [a for a, _, _ in cells],
            "predicted": [p for _, p, _ in cells],
            "w": [float(n) for _, _, n in cells],
        }
    )
    got = engine.aggregate(name, table, sample_weight="w")
    want = HAND_STATISTIC if name == "bowker_statistic" else _chi2_sf_3(HAND_STATISTIC)
    assert math.isclose(got, want, rel_tol=1e-12), (got, want)
    rng = random.Random(7)
    rows = [(rng.choice("abcd"), rng.choice("abd"), rng.randint(0, 3)) for _ in range(40)]
    weighted = pa.table(
        {
            "actual": [a for a, _, _ in rows],
            "predicted": [p for _, p, _ in rows],
            "w": [float(w) for _, _, w in rows],
        }
    )
    repeated = [(a, p) for a, p, w in rows for _ in range(w)]
    got = engine.aggregate(name, weighted, sample_weight="w")
    assert close(got, A.bowker(repeated, name)), (got, A.bowker(repeated, name))


@pytest.mark.parametrize("name", NAMES)
def test_nulls_are_unknown_rows(engine, name):
    """A NULL on either side skips the row; no known rows (or known rows weighing 0 in all)
    give NULL."""
    needs(engine, name)
    base = rows_of(HAND)
    extra = pa.table(
        {"actual": pa.array([None, 2, None], pa.int64()), "predicted": pa.array([0, None, None])}
    )
    got = engine.aggregate(name, pa.concat_tables([base, extra.cast(base.schema)]))
    want = HAND_STATISTIC if name == "bowker_statistic" else _chi2_sf_3(HAND_STATISTIC)
    assert math.isclose(got, want, rel_tol=1e-12)
    nothing = pa.table({"actual": pa.array([None], pa.int64()), "predicted": [1]})
    assert engine.aggregate(name, nothing) is None
    weightless = pa.table({"actual": [0, 1], "predicted": [1, 0], "w": [0.0, 0.0]})
    assert engine.aggregate(name, weightless, sample_weight="w") is None


@pytest.mark.parametrize("name", NAMES)
def test_one_class_only(engine, name):
    """k = 1: statistic 0, p-value NaN (statsmodels: df 0, chi2.sf(0, 0))."""
    needs(engine, name)
    got = engine.aggregate(name, rows_of([[4]]))
    want = A.bowker(_pairs(rows_of([[4]])), name)
    if name == "bowker_statistic":
        assert got == 0.0 and want == 0.0
    else:
        assert math.isnan(got) and math.isnan(want)


@pytest.mark.parametrize("name", NAMES)
def test_a_class_only_on_one_side_counts(engine, name):
    """Class 'c' only predicted: a 3x3 table whose third row is empty, k = 3, df = 3; no
    disagreement at all over two classes: statistic 0, p-value 1."""
    needs(engine, name)
    table = pa.table({"actual": ["a", "a", "b", "b", "a"], "predicted": ["a", "c", "c", "b", "b"]})
    # pairs (a, b): 1 vs 0, (a, c): 1 vs 0, (b, c): 1 vs 0: statistic 3 over df 3
    want = 3.0 if name == "bowker_statistic" else _chi2_sf_3(3.0)
    got = engine.aggregate(name, table)
    assert math.isclose(got, want, rel_tol=1e-12), (got, want)
    assert close(got, A.bowker(_pairs(table), name))
    agree = pa.table({"actual": ["a", "b", "b"], "predicted": ["a", "b", "b"]})
    assert engine.aggregate(name, agree) == (0.0 if name == "bowker_statistic" else 1.0)


HOSTILE = ["it's", 'say "x"', "a\\b", "semi;colon", "ünï", ""]


@pytest.mark.parametrize("name", NAMES)
def test_hostile_label_text(engine, name):
    """Labels with quotes, backslashes, semicolons, non-ASCII and the empty string are
    classes like any other (the 3x3 hand table over three of them)."""
    needs(engine, name)
    table = rows_of(HAND, [HOSTILE[0], HOSTILE[1], HOSTILE[5]])
    want = HAND_STATISTIC if name == "bowker_statistic" else _chi2_sf_3(HAND_STATISTIC)
    got = engine.aggregate(name, table)
    assert math.isclose(got, want, rel_tol=1e-12), (got, want)
    rng = random.Random(3)
    rows = [(rng.choice(HOSTILE), rng.choice(HOSTILE)) for _ in range(50)]
    table = pa.table({"actual": [a for a, _ in rows], "predicted": [p for _, p in rows]})
    assert close(engine.aggregate(name, table), A.bowker(rows, name))


def test_two_classes_are_mcnemar_without_correction(engine):
    """Over two classes Bowker's statistic and p-value are McNemar's (correction False)."""
    for name in NAMES:
        needs(engine, name)
    rng = random.Random(5)
    for _ in range(3):
        m = [[rng.randint(0, 9) for _ in range(2)] for _ in range(2)]
        m[0][1] += 1  # a discordant row: McNemar's is NaN without one
        t = rows_of(m, [False, True])
        for name in ("statistic", "p_value"):
            got = engine.aggregate(f"bowker_{name}", t)
            mcnemar = engine.aggregate(f"binary_mcnemar_{name}", t, correction=0)
            assert close(got, mcnemar), (m, name)


@pytest.mark.long
@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
def test_spark_over_labels_counts_the_cells(weighted):
    """Spark's bounded path (given labels, one of which never occurs) reads the k x k cells
    it counts: statsmodels on the (weighted) table of the classes that occur (the label that
    never occurs adds no class, so no degrees of freedom)."""
    import numpy as np
    from statsmodels.stats.contingency_tables import SquareTable

    pytest.importorskip("pyspark")
    from mlsql.spark.families.single_label import over_labels
    from tests.engines.spark_engine import session

    rng = random.Random(13)
    rows = [(rng.choice("abc"), rng.choice("abcc"), rng.randint(1, 4) / 2) for _ in range(60)]
    labels = ["a", "b", "c", "d"]
    w = {"sample_weight": "w"} if weighted else {}
    df = session().createDataFrame(rows, "a string, p string, w double")
    got = df.agg(*(over_labels(name, "a", "p", labels, **w) for name in NAMES)).first()
    table = np.zeros((3, 3))
    for a, p, weight in rows:
        table[labels.index(a), labels.index(p)] += weight if weighted else 1
    result = SquareTable(table, shift_zeros=False).symmetry()
    assert close(got[0], float(result.statistic))
    assert close(got[1], float(result.pvalue))
